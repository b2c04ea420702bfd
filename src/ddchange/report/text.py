"""The text summary: the answer first (each culprit with its file, function context, line
numbers, commit and diff), then how sure it is, then what it cost. It is for a terminal: what
a terminal would act on (escape sequences in a diff or a file name) is shown escaped."""

from __future__ import annotations

from ddchange.model import Ending, Outcome, Result
from ddchange.report.words import (
    base_name,
    blocks,
    commit_line,
    confirmation,
    flaky,
    headline,
    limits,
    location,
    plural,
    printable,
    reused,
    route,
    shown_diff,
    without_each,
)

# Of each culprit's diff, the text report shows this many lines of at most this many characters;
# --patch and --json have them all, whole.
SHOWN_LINES, SHOWN_WIDTH = 40, 200


def _shown_diff(diff: str) -> list[str]:
    shown = shown_diff(diff, lines=SHOWN_LINES, width=SHOWN_WIDTH)
    # A CRLF file's lines end in "\r": the line end, as `git diff` prints it, not shown.
    lines = ["    " + line.removesuffix("\r") for line in shown.lines]
    return lines + ([f"    {shown.note()}"] if shown.note() else [])


SHOWN_CONTEXT = 12  # passing changes listed by location in the text report
SHOWN_INTERRUPTED = 10  # changes of an interrupted run's best answer, by location only


def _where(result: Result) -> list[str]:
    """An interrupted run's best answer so far, short: where its first changes are (at block
    granularity each block of them, as the headline counts them)."""
    changes = blocks(result, result.culprits)
    lines = [
        f"[{n}] {location(change[0], result.scopes.get(change[0].id, ''))}"
        for n, change in enumerate(changes[:SHOWN_INTERRUPTED], 1)
    ]
    if len(changes) > SHOWN_INTERRUPTED:
        lines.append(f"… {len(changes) - SHOWN_INTERRUPTED} more (--patch and --json have all)")
    return lines


def _context(result: Result) -> list[str]:
    """The passing set of an isolation: where its changes are (the diffs are in --json)."""
    lines = [
        f"Applied in both the passing and the failing set ({plural(len(result.passing), 'change')}"
        "; --json lists them all with their diffs):"
    ]
    for hunk in result.passing[:SHOWN_CONTEXT]:
        lines.append(f"    {location(hunk, result.scopes.get(hunk.id, ''))}")
    if len(result.passing) > SHOWN_CONTEXT:
        lines.append(f"    … {len(result.passing) - SHOWN_CONTEXT} more")
    return lines


def render(result: Result) -> str:
    """The human summary: the answer first, then how sure it is, then what it cost."""
    lines = [headline(result), ""]
    if result.outcome == Ending.FLAKY or result.disagreements:
        lines += [*flaky(result), ""]
    if route(result):
        lines += [route(result), ""]
    if result.outcome == Ending.INTERRUPTED:
        lines += [*_where(result), ""]
    else:
        lines += _culprits(result)
    if result.passing:
        lines += [*_context(result), ""]
    if result.outcome == Ending.FOUND:  # a flaky run's reruns prove nothing: no "confirmed" there
        lines += confirmation(
            result.confirmation, isolate=result.request.isolate, base=base_name(result)
        )
    lines.append(_cost(result))
    lines.extend(f"not searched (kept as in GOOD): {path}" for path in result.diff.skipped)
    lines += limits(result)
    return printable("\n".join(lines) + "\n")


def _culprits(result: Result) -> list[str]:
    """Each culprit (at block granularity, each block of them) with where it is, its commits
    and its diff: first those without which the test passed (the failure is there), then those
    without which it could not be tested."""
    outcomes = without_each(result)
    changes = blocks(result, result.culprits)
    cause = [c for c in changes if outcomes.get(c[0].id) is Outcome.PASS]
    rest = [c for c in changes if outcomes.get(c[0].id) is not Outcome.PASS]
    lines: list[str] = []
    if cause and rest:
        lines += [f"Without {_each(len(cause))} the test passed:", ""]
    for number, change in enumerate(cause + rest, 1):
        if cause and rest and change is rest[0]:
            lines += [
                f"Also needed: without {_each(len(rest))} the test could not be tested (it "
                "did not build or run):",
                "",
            ]
        first = change[0]
        shas = dict.fromkeys(i for hunk in change for i in result.attribution.get(hunk.id, ()))
        lines += [
            f"[{number}] {location(first, result.scopes.get(first.id, ''))}",
            *(f"    commit {commit_line(info)}" for info in shas),
            *_shown_diff("".join(hunk.diff for hunk in change)),
            "",
        ]
    return lines


def _cost(result: Result) -> str:
    stats = result.stats
    resumed = f"{reused(result.resumed, result.earlier)}, " if result.earlier else ""
    overhead = result.wall_time - result.command_time
    learned, disproved = result.resolutions
    resolution = (
        f" Dependencies: {plural(learned, 'failed build')} taught a missing one, "
        f"{plural(disproved, 'run')} disproved assumed ones."
        if learned or disproved
        else ""
    )
    jobs = result.width
    # With -j N the builds and tests overlap: their time does not add up to a part of the wall.
    times = (
        f"{overhead:.1f}s of it ddchange's own"
        if jobs == 1
        else f"up to {jobs} tests at once, and {plural(result.unused, 'more test')} run ahead "
        "that the search did not need"
    )
    return (
        f"{plural(result.tests_run, 'test')} run, {resumed}{stats.cache_hits} answered from "
        f"the cache, {stats.implied} implied by monotony; {result.wall_time:.1f}s in all, "
        f"{times}.{resolution}"
    )


def _each(count: int) -> str:
    """'this change', or 'each of these N changes'."""
    return "this change" if count == 1 else f"each of these {plural(count, 'change')}"
