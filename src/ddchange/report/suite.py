"""The report of a whole suite triaged (`--results`): each cause with its changes and the tests
it breaks, as text for a terminal and as JSON for tools. Every statement in it is read from
the `SuiteResult`, whose causes rest on records (suite.py)."""

from __future__ import annotations

import json
from typing import Any

from ddchange.diff.hunks import Hunk
from ddchange.model import Cause, Ending, Level, SuiteResult
from ddchange.report.as_json import change, commit, record, resumed_from
from ddchange.report.words import (
    PARTS,
    commit_line,
    location,
    percent,
    plural,
    printable,
    reused,
    shown_diff,
)
from ddchange.search import confidence

SHOWN_LINES, SHOWN_WIDTH = 40, 200  # of each change's diff, as the single-test report shows
SHOWN_TESTS = 8  # of each cause's tests, named in the text; --json has them all
SHOWN_CONTEXT = 12  # of an isolated cause's passing set, named by location in the text


def changes_of(result: SuiteResult, number: int) -> list[list[Hunk]]:
    """Cause `number`'s changes as the report shows them: at block granularity each block of
    its units is one change."""
    found = result.changes[number]
    blocks = found.blocks if result.request.granularity == Level.BLOCK else {}
    gathered: dict[object, list[Hunk]] = {}
    for hunk in found.units:
        gathered.setdefault(blocks.get(hunk.id, hunk.id), []).append(hunk)
    return list(gathered.values())


def base_name(result: SuiteResult, number: int) -> str:
    """What cause `number`'s patch applies on, as the report names it."""
    if result.changes[number].first_bad is None:
        return "GOOD"
    return "the parent" if _on_parent(result, number) else "the base"


def _on_parent(result: SuiteResult, number: int) -> bool:
    """Whether cause `number` stands on the parent of its tests' first bad commit, not on a
    commit further back (the bisection could not test the commits between)."""
    found = result.changes[number]
    first = result.commits.get(found.first_bad or "")
    return first is not None and found.base in first.parents


def where(result: SuiteResult, number: int) -> str:
    """Where cause `number` stands: inside which first bad commit, on which parent; "" where
    its tests were not bisected (it applies on GOOD). Where some commits between the last
    one its tests passed at and the first they failed at could not be tested, the bisection
    names no first bad commit: the cause stands inside all of them, on that last commit."""
    found = result.changes[number]
    if found.first_bad is None:
        return ""
    first = result.commits.get(found.first_bad)
    named = commit_line(first) if first is not None else found.first_bad[:12]
    if not _on_parent(result, number):
        return (
            f"inside the commits after {found.base[:12]}, where its tests passed, up to "
            f"{named}, where they failed (the bisection could not test the commits between), "
            f"on the base {found.base[:12]} (the patch applies there)"
        )
    return (
        f"inside its tests' first bad commit {named}, on its parent {found.base[:12]} "
        "(the patch applies there)"
    )


def headline(result: SuiteResult) -> str:
    good, bad = result.revisions.good[:12], result.revisions.bad[:12]
    request = result.request
    broken = plural(len(result.targets), "test")
    said = {
        Ending.FOUND: f"{plural(len(result.causes), 'cause')} found",
        Ending.FLAKY: "NO RELIABLE ANSWER for some of them: the test is flaky",
        Ending.INTERRUPTED: (
            "interrupted: the causes below are what was found so far, unchecked"
            if result.causes
            else "interrupted before any cause was found"
        ),
    }[result.outcome]
    return (
        f"ddchange: {broken} {'passes' if len(result.targets) == 1 else 'pass'} at "
        f"{request.good} ({good}) and {'fails' if len(result.targets) == 1 else 'fail'} at "
        f"{request.bad} ({bad}); "
        f"{said}."
    )


def _context(result: SuiteResult, number: int) -> list[str]:
    """--isolate: where cause `number`'s passing set is (in its patch; --json has the diffs)."""
    found = result.changes[number]
    if not found.context:
        return []
    lines = [
        f"    the passing set, in the patch too ({plural(len(found.context), 'change')}; --json "
        "has their diffs):"
    ]
    lines += [
        f"      {location(h, found.scopes.get(h.id, ''))}" for h in found.context[:SHOWN_CONTEXT]
    ]
    if len(found.context) > SHOWN_CONTEXT:
        lines.append(f"      … {len(found.context) - SHOWN_CONTEXT} more")
    return lines


def _tests(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:SHOWN_TESTS])
    more = len(names) - SHOWN_TESTS
    return shown + (f", … {more} more (--json has all)" if more > 0 else "")


def backing(cause: Cause, base: str = "GOOD", *, isolate: bool, shown: int) -> str:
    """What backs `cause`, whose patch applies on `base` (GOOD, or the first bad commit's
    parent) and is shown as `shown` changes; with `isolate`, a failing and a passing set
    (`_isolated`). Where the checks removed parts of a change (`Search.by_origin`), the words
    say so: the removal of the whole change was not among them. Where runs disagreed (exit 5),
    how sure its reruns make it (`_sure`)."""
    return _backing(cause, base, isolate=isolate, shown=shown) + _sure(cause)


def _sure(cause: Cause) -> str:
    """For a cause backed in spite of runs that disagreed, the confidence its reruns give, as
    a single search states it: the chance that a cause that in truth passes for one of its
    tests failed again in all of them at random ("" elsewhere)."""
    if not cause.disagreed or cause.flaky or cause.runs < 2:
        return ""
    reruns = cause.runs - 1
    risk = confidence.risk(reruns, cause.flake_rate)
    return (
        f"; confidence {percent(1 - risk)}: if its tests fail at random in up to 1 run of "
        f"{round(1 / cause.flake_rate)}, a cause that in truth passes for one of them would have "
        f"failed again in all {reruns} reruns {percent(risk)} of the time"
    )


def _backing(cause: Cause, base: str, *, isolate: bool, shown: int) -> str:
    if cause.runs == 0:
        return "not checked: the run was interrupted"
    if cause.flaky:
        return (
            "NOT RELIABLE: runs of the same changes disagreed for one of its tests, or did not "
            "back the claim"
        )
    if isolate:
        return _isolated(cause, base)
    seen = f"each test failed in all {cause.runs} runs of these changes on {base}, passed at {base}"
    if cause.disagreed:  # backed all the same: a PASS is a fact
        seen += _AT_RANDOM
    passed = cause.checks - cause.unresolved
    whole = cause.checks == shown  # each check removed a change whole
    checks = plural(cause.checks, "check")
    if not cause.unresolved and whole:
        return f"{seen}, and passed without each change ({checks}): 1-minimal"
    if not cause.unresolved:
        parts = f"each of its {cause.checks} parts ({checks}; {PARTS})"
        return f"{seen}, and passed without {parts}: 1-minimal"
    if not passed and shown == 1 and not whole:  # the one change's removal is its base
        return (
            f"{seen}: so the change is needed as a whole; no removal of a part of it could be "
            f"tested ({plural(cause.checks, 'check')}: no build, no result, or another "
            "failure), so it is not shown to be 1-minimal part by part"
        )
    if not passed:  # "did not fail" is true there, but nothing passed: no 1-minimality shown
        return (
            f"{seen}; no removal of {'a change' if whole else 'a part'} could be tested "
            f"({plural(cause.checks, 'check')}: "
            "no build, no result, or another failure), so it is not shown to be 1-minimal"
        )
    return (
        f"{seen}; of {plural(cause.checks, 'check')} "
        f"({'a change' if whole else 'a change or a part of one'} removed in each) {passed} "
        f"passed and {cause.unresolved} could not be tested (no build, no result, or another "
        "failure), so it is not shown to be 1-minimal"
    )


_AT_RANDOM = " (the test failed at random in some other runs: each PASS is taken as a fact)"


def _isolated(cause: Cause, base: str) -> str:
    """What backs an isolated cause (--isolate): its failing set, its passing set, and the
    checks of each change of the difference, in pairs (added to the passing set, taken from
    the failing set)."""
    with_passing = (
        f"these changes and the {plural(len(cause.passing), 'change')} of the passing set"
        if cause.passing
        else f"these changes alone: the passing set is {base} itself"
    )
    seen = (
        f"each test failed in all {cause.runs} runs of the failing set ({with_passing}) on "
        f"{base}, passed with the passing set and at {base}"
    )
    if cause.disagreed:
        seen += _AT_RANDOM
    pairs = f"{plural(cause.checks, 'check')}, one of each kind for each change"
    if not cause.unresolved:
        return (
            f"{seen}; the passing set with any one change of the difference added did not pass, "
            f"and the failing set with any one taken away did not fail ({pairs}): the "
            "difference is 1-minimal"
        )
    return (
        f"{seen}; of {pairs} (added to the passing set, taken from the failing set), "
        f"{cause.unresolved} could not be tested (no build, no result, or another failure), so "
        "the difference is not shown to be 1-minimal"
    )


def render(result: SuiteResult) -> str:
    """The human summary: which changes broke which tests, then what was not searched, then
    what it cost."""
    lines = [headline(result), ""]
    for number, cause in enumerate(result.causes, 1):
        changes = changes_of(result, number - 1)
        verb = "breaks" if len(changes) == 1 else "break"
        base = base_name(result, number - 1)
        lines += [
            f"Cause {number}: {plural(len(changes), 'change')} {verb} "
            f"{plural(len(cause.tests), 'test')}: {_tests(cause.tests)}",
            *([f"    {inside}"] if (inside := where(result, number - 1)) else []),
            f"    {backing(cause, base, isolate=result.request.isolate, shown=len(changes))}",
            *_context(result, number - 1),
            "",
        ]
        for index, block in enumerate(changes, 1):
            first = block[0]
            found = result.changes[number - 1]
            shas = dict.fromkeys(i for h in block for i in found.attribution.get(h.id, ()))
            lines.append(f"  [{number}.{index}] {location(first, found.scopes.get(first.id, ''))}")
            lines += [f"      commit {commit_line(info)}" for info in shas]
            diff = "".join(h.diff for h in block)
            shown = shown_diff(diff, lines=SHOWN_LINES, width=SHOWN_WIDTH)
            lines += ["      " + line.removesuffix("\r") for line in shown.lines]
            if shown.note():
                lines.append(f"      {shown.note()}")
        lines.append("")
    explained = {name for cause in result.causes for name in cause.tests}
    unexplained = [t.name for t in result.targets if t.name not in explained]
    if unexplained:
        lines += [f"Not searched yet: {_tests(tuple(unexplained))}", ""]
    if result.already_failing:
        lines.append(f"Already failing at GOOD (not searched): {_tests(result.already_failing)}")
    if result.newly_passing:
        lines.append(f"Newly passing at BAD: {_tests(result.newly_passing)}")
    if result.fork:
        lines.append(
            f"GOOD is not an ancestor of BAD: as `git bisect` does, the commit they forked from, "
            f"{result.fork[:12]}, was tested first, and each bisection started from it where "
            "it passed."
        )
    if result.fallback:
        lines.append(f"The whole of GOOD..BAD was triaged: {result.fallback}.")
    overhead = result.wall_time - result.command_time
    resumed = f", {reused(result.resumed, result.earlier)}" if result.earlier else ""
    # With -j N the runs overlap: their time does not add up to a part of the wall.
    times = (
        f"{overhead:.1f}s of it ddchange's own"
        if result.width == 1
        else f"up to {result.width} tests at once, and {plural(result.unused, 'more test')} "
        "run ahead that the searches did not need"
    )
    bisected = (
        f" ({result.located_in} of them GOOD, BAD and the bisection of the history)"
        if result.located_in
        else ""
    )
    lines.append(
        f"{plural(result.tests_run, 'test')} run for {plural(len(result.targets), 'failing test')}"
        f"{resumed}{bisected}: each run gave every test's result at once; "
        f"{result.wall_time:.1f}s in all, {times}."
    )
    return printable("\n".join(lines) + "\n")


def render_json(result: SuiteResult) -> str:
    """Everything the text says, per target and per cause, with whole diffs and the test log."""
    causes_of: dict[str, list[int]] = {}
    for number, cause in enumerate(result.causes, 1):
        for name in cause.tests:
            causes_of.setdefault(name, []).append(number)
    document: dict[str, Any] = {
        "good": result.revisions.good,
        "bad": result.revisions.bad,
        "good_rev": result.request.good,
        "bad_rev": result.request.bad,
        "command": list(result.request.test),
        "results": list(result.request.results),
        "mode": "isolate" if result.request.isolate else "minimize",
        "outcome": result.outcome,
        "targets": [
            {
                "name": t.name,
                "at_bad": {"status": t.at_bad.status.value, "kind": t.at_bad.kind},
                "cause": causes_of.get(t.name, [None])[0],  # the first; all in "causes"
                "causes": causes_of.get(t.name, []),
            }
            for t in result.targets
        ],
        "already_failing": list(result.already_failing),
        "newly_passing": list(result.newly_passing),
        "jobs": result.width,
        "tests_ahead_unused": result.unused,
        "causes": [
            {
                "number": number,
                "tests": list(cause.tests),
                "runs": cause.runs,
                "checks": cause.checks,
                "unresolved_checks": cause.unresolved,
                "flaky": cause.flaky,
                "disagreed": cause.disagreed,
                # the chance a cause that in truth passes failed again in all its reruns
                "risk": confidence.risk(cause.runs - 1, cause.flake_rate) if cause.runs else None,
                "base": found.base,
                "first_bad": found.first_bad,
                "changes": [
                    {
                        **change(hunk, found.scopes.get(hunk.id, "")),
                        "commits": [commit(i) for i in found.attribution.get(hunk.id, ())],
                        "block": found.blocks.get(hunk.id)
                        if result.request.granularity == Level.BLOCK
                        else None,
                    }
                    for hunk in found.units
                ],
                "passing": [change(h, found.scopes.get(h.id, "")) for h in found.context],
                "patch": found.patch.decode("utf-8", "surrogateescape"),
            }
            for number, (cause, found) in enumerate(
                zip(result.causes, result.changes, strict=True), 1
            )
        ],
        "bisection": {
            "tests": result.located_in,
            "fallback": result.fallback or None,
            "fork": result.fork or None,
        },
        "tests_run": result.tests_run,
        "resumed": result.resumed,
        "resumed_from": resumed_from(result.earlier),
        "wall_time": result.wall_time,
        "command_time": result.command_time,
        "log": [record(r) for r in result.log],
    }
    return json.dumps(document, indent=2) + "\n"
