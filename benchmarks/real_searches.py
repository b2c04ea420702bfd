"""The searches benchmarks/real.py compares on a case, each giving a row of the table.

Owns `Row` and the table's columns; ddchange run as a command in one mode (from a reset journal,
its JSON report read for the outcome, the answer and the tests by phase); the reference searches
(`REFERENCES`: textbook ddmin, Zeller and Hildebrandt, TSE 2002, over the blocks the default
search ends at, the baseline that ratios are computed against, and beside it over ddchange's
line changes and over git's hunks; each one a pure function over units), run by one harness that
first runs GOOD and BAD, then the search with an exact cache, every test in a reset clone,
within a budget of tests; and `git bisect run` with the case's build and check, GOOD and BAD run
first too (on a range of real history, the commit it names is looked at: does its own change
add or remove the culprit lines?). A ddchange answer is judged on the commit its patch applies
on, the report's `"base"`, or on `good`. For a case whose check writes per-test results,
whole-suite triage: one `ddchange --results` run for every failing test at once, and, set
beside it, one `--results --test NAME` run per failing test, each from a reset journal. The
verdict on every answer is real_judge's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from real_cases import GIT_TIMEOUT, Case, clean_env, git, git_bytes, run
from real_judge import Sandbox, Suite, Verdict, holds_culprit, judge, judge_cause
from results import PARTS, Runs, runs

from ddchange import git as ddgit
from ddchange.diff import content, linechanges, read
from ddchange.diff.hunks import Conflict, Diff, Hunk
from ddchange.hierarchy.grouping import Hierarchy
from ddchange.model import Outcome
from ddchange.report.words import plural
from ddchange.search import probabilistic
from ddchange.search.dd import Probe, Probed
from ddchange.trial import files

U = TypeVar("U")
FLAGS = {
    "default": (),  # whatever strategy ddchange runs when none is given
    "diff": ("--strategy", "diff"),
    "isolate": ("--isolate",),
    "no-dependencies": ("--no-dependencies",),
}
SEARCH_TIMEOUT = 4 * 3600.0  # one whole ddchange or git bisect run
BISECT = "git bisect run"  # the mode of its rows


# -- rows ---------------------------------------------------------------------------------------


@dataclass
class Row:
    case: str
    package: str
    hunks: str = "—"
    mode: str = "—"
    exit: str = "—"
    outcome: str = "—"
    answer: str = "—"
    tests: str = "—"
    wall: str = "—"
    verdict: str = "—"
    culprit: str = "—"
    size: int | None = None  # numbers behind the summary and the prose
    count: int | None = None  # every test run
    runs: Runs | None = None  # the same, by part
    right: bool = False
    over_budget: bool = False

    def cells(self) -> list[str]:
        return [
            self.case,
            self.package,
            self.hunks,
            self.mode,
            self.exit,
            self.outcome,
            self.answer,
            self.tests,
            "—" if self.runs is None else self.runs.cell(),
            self.wall,
            self.verdict,
            self.culprit,
        ]


COLUMNS = (
    "case",
    "package",
    "hunks",
    "mode",
    "exit",
    "outcome",
    "answer",
    "tests",
    PARTS,
    "wall s",
    "verdict (independent)",
    "holds culprit",
)


def _yes(flag: bool | None) -> str:
    return "—" if flag is None else ("yes" if flag else "no")


def _judged(row: Row, verdict: Verdict) -> Row:
    row.verdict, row.right, row.culprit = verdict.text, verdict.right, _yes(verdict.culprit)
    return row


def ddchange(case: Case, repo: Path, box: Sandbox, mode: str, args: argparse.Namespace) -> Row:
    """One ddchange search of `repo` in `mode`, from a reset journal; its row, answer judged."""
    row = Row(case.name, case.title, mode=mode)
    out = repo.parent / "out"
    out.mkdir(exist_ok=True)
    patch, report = out / f"{mode}.patch", out / f"{mode}.json"
    patch.unlink(missing_ok=True)
    report.unlink(missing_ok=True)
    env = clean_env(box.bin)
    run([str(args.ddchange), "reset"], repo, env, GIT_TIMEOUT)
    argv = [str(args.ddchange), "good..bad", "--patch", str(patch), "--json", str(report)]
    argv += [*FLAGS[mode], "--timeout", f"{args.timeout:g}"]
    argv += ["--build", case.build] if case.build else []
    argv += ["--", str(box.bin / "python"), str(case.check)]
    started = time.monotonic()
    done = run(argv, repo, env, SEARCH_TIMEOUT)
    row.wall = f"{time.monotonic() - started:.1f}"
    (out / f"{mode}.log").write_text(done.output)
    row.exit = "timeout" if done.code is None else str(done.code)
    data = _read_json(report)
    row.outcome = str(data.get("outcome", "—"))
    log = data.get("log")
    if isinstance(data.get("tests_run"), int) and isinstance(log, list):
        # Every run, the pre-flight and the checks at the end included: what the user waits for.
        row.count = data["tests_run"]
        row.tests = str(row.count)
        row.runs = runs(str(r.get("phase")) for r in log if isinstance(r, dict))
    culprits, passing = data.get("culprits"), data.get("passing")
    if isinstance(culprits, list):
        row.size = len(culprits)
        total = data.get("hunks_total")
        # The report's changes are git's hunks at hunk granularity, else line changes; at
        # block granularity each culprit names its block of the answer (a run of them).
        unit = "hunks" if data.get("granularity") == "hunk" else "line changes"
        row.answer = f"{row.size} of {total} {unit}" if isinstance(total, int) else str(row.size)
        blocks = {
            (c.get("path"), c.get("block"))
            for c in culprits
            if isinstance(c, dict) and c.get("block") is not None
        }
        if blocks:
            row.size = len(blocks)
            row.answer = f"{plural(row.size, 'block')}: {row.answer}"
        if mode == "isolate" and isinstance(passing, list):
            row.answer += f" (+{len(passing)} passing)"
    if not patch.is_file():
        row.verdict = "no patch" if done.code is not None else "no patch (timed out)"
        return row
    # The patch applies on the report's "base" (the parent of the commit a search went inside),
    # on GOOD when the report names none.
    base = str(data.get("base") or "good")
    if base != "good":
        row.answer += f" on {base[:7]}"
    return _judged(row, judge(box, patch.read_bytes(), base))


# -- whole-suite triage ---------------------------------------------------------------------------


@dataclass
class Triaged:
    """What one or more `ddchange --results` runs gave: their causes (tests, units, patch) and
    their test runs, summed."""

    causes: list[tuple[list[str], int, bytes, str]]  # and the commit its patch applies on
    count: int = 0
    phases: list[str] = field(default_factory=list)
    seconds: float = 0.0
    exits: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)


def triage_run(
    case: Case,
    repo: Path,
    box: Sandbox,
    args: argparse.Namespace,
    name: str,
    *tests: str,
    options: tuple[str, ...] = (),
) -> Triaged:
    """`ddchange good..bad --results ... --json` (with `--test` for each of `tests`, and
    `options`), from a reset journal; its causes and runs."""
    out = repo.parent / "out"
    out.mkdir(exist_ok=True)
    report = out / f"{name}.json"
    report.unlink(missing_ok=True)
    env = clean_env(box.bin)
    run([str(args.ddchange), "reset"], repo, env, GIT_TIMEOUT)
    argv = [str(args.ddchange), "good..bad", "--results", case.results, "--json", str(report)]
    argv += [a for t in tests for a in ("--test", t)] + ["--timeout", f"{args.timeout:g}"]
    argv += options
    argv += ["--build", case.build] if case.build else []
    argv += ["--", str(box.bin / "python"), str(case.check)]
    started = time.monotonic()
    done = run(argv, repo, env, SEARCH_TIMEOUT)
    (out / f"{name}.log").write_text(done.output)
    data = _read_json(report)
    causes = [
        (
            list(c["tests"]),
            len(c["changes"]),
            str(c["patch"]).encode("utf-8", "surrogateescape"),
            str(c.get("base") or "good"),  # the commit its patch applies on
        )
        for c in data.get("causes", ())
        if isinstance(c, dict)
    ]
    log = data.get("log")
    return Triaged(
        causes,
        count=data["tests_run"] if isinstance(data.get("tests_run"), int) else 0,
        phases=[str(r.get("phase")) for r in log if isinstance(r, dict)]
        if isinstance(log, list)
        else [],
        seconds=time.monotonic() - started,
        exits=["timeout" if done.code is None else str(done.code)],
        outcomes=[str(data.get("outcome", "no report"))],
    )


def triage_rows(
    case: Case, repo: Path, box: Sandbox, suite: Suite, args: argparse.Namespace
) -> list[Row]:
    """Two rows: `triage`, one run for all failing tests; `separate`, one run per failing
    test, each from a reset journal, their runs summed; for a range of history a third,
    `triage-diff`, the whole range triaged (`--strategy diff`); only those `--triage-rows`
    names. Every cause judged by real_judge."""
    pairs = []
    if "triage" in args.triage_rows:
        pairs.append(("triage", triage_run(case, repo, box, args, "triage")))
    if "separate" in args.triage_rows:
        apart = Triaged([])
        for number, test in enumerate(suite.targets, 1):
            one = triage_run(case, repo, box, args, f"separate-{number}", test)
            apart.causes += one.causes
            apart.count += one.count
            apart.phases += one.phases
            apart.seconds += one.seconds
            apart.exits += one.exits
            apart.outcomes += one.outcomes
        pairs.append(("separate", apart))
    if case.repository and "triage-diff" in args.triage_rows:
        whole = triage_run(case, repo, box, args, "triage-diff", options=("--strategy", "diff"))
        pairs.append(("triage-diff", whole))
    return [_triage_row(case, box, suite, mode, got) for mode, got in pairs]


def _triage_row(case: Case, box: Sandbox, suite: Suite, mode: str, got: Triaged) -> Row:
    row = Row(case.name, case.title, mode=mode, wall=f"{got.seconds:.1f}")
    row.exit = ",".join(dict.fromkeys(got.exits))
    row.outcome = ",".join(dict.fromkeys(got.outcomes))
    row.count, row.tests, row.runs = got.count, str(got.count), runs(got.phases)
    covered = sorted(t for tests, _, _, _ in got.causes for t in tests)
    sizes = "+".join(str(size) for _, size, _, _ in got.causes)
    row.answer = (
        f"{len(got.causes)} causes ({sizes} changes) for {len(covered)} of "
        f"{len(suite.targets)} failing tests"
    )
    verdicts = [judge_cause(box, suite, tests, patch, base) for tests, _, patch, base in got.causes]
    right = sum(v.right for v in verdicts)
    row.right = right == len(verdicts) and covered == suite.targets
    wrong = [
        f"{'/'.join(t.rpartition('.')[2] for t in tests)}: {v.text}"
        for (tests, _, _, _), v in zip(got.causes, verdicts, strict=True)
        if not v.right
    ]
    row.verdict = "; ".join([f"{right} of {len(verdicts)} causes right", *wrong])
    held = sum(bool(v.culprit) for v in verdicts)
    row.culprit = f"{held} of {len(verdicts)}"
    row.size = len(got.causes)
    return row


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# -- reference searches ------------------------------------------------------------------------


class OutOfBudget(Exception):
    pass


def ddmin(units: Sequence[U], test: Callable[[frozenset[U]], Outcome]) -> list[U]:
    """Zeller and Hildebrandt's ddmin (TSE 2002) over `units`, which fail together (not asked:
    the caller ran BAD): split into n parts; a failing part is the new set (n = 2), else a
    failing complement is (n = n - 1), else n doubles, until n is the number of units."""
    config = list(units)
    n = 2
    while len(config) >= 2:
        parts = [config[k * len(config) // n : (k + 1) * len(config) // n] for k in range(n)]
        part = next((p for p in parts if test(frozenset(p)) is Outcome.FAIL), None)
        if part is not None:
            config, n = part, 2
            continue
        complements = ([u for u in config if u not in set(p)] for p in parts)
        complement = next((c for c in complements if test(frozenset(c)) is Outcome.FAIL), None)
        if complement is not None:
            config, n = complement, max(n - 1, 2)
            continue
        if n >= len(config):
            break
        n = min(2 * n, len(config))
    return config


Granularity = Literal["line", "block", "hunk"]
UNIT_NAMES: dict[str, str] = {"line": "line changes", "block": "blocks", "hunk": "hunks"}


@dataclass(frozen=True)
class Reference:
    """A reference search to set beside ddchange's: `search` gets the units of `granularity`
    in diff order and a test of a set of them (GOOD with those units applied; the harness
    caches it exactly, and has run GOOD and BAD before), and returns its answer. To add one,
    add an entry to REFERENCES: its `mode` becomes a --modes choice and a row."""

    mode: str  # the --modes name and the table's
    description: str  # for the section's prose
    search: Callable[[Sequence[str], Callable[[frozenset[str]], Outcome]], list[str]]
    granularity: Granularity


def probing(
    search: Callable[[Sequence[U], Probe[U]], list[U]],
) -> Callable[[Sequence[U], Callable[[frozenset[U]], Outcome]], list[U]]:
    """A flat search of ddchange.search (which probes) as a reference search (which tests):
    each probe is a test of exactly the configuration asked."""

    def reference(units: Sequence[U], test: Callable[[frozenset[U]], Outcome]) -> list[U]:
        return search(units, lambda config: Probed(test(frozenset(config)), frozenset(config)))

    return reference


# The reference that ratios are computed against: textbook ddmin over the unit the default
# search ends at, so that a finer unit (more tests for ddmin) does not flatter ddchange.
BASELINE = "ddmin-blocks"
REFERENCES = (
    Reference(
        BASELINE,
        "textbook ddmin over the blocks ddchange's default search ends at (a run of changed "
        "lines with no unchanged line between them, as `git diff -U0` shows it)",
        ddmin,
        "block",
    ),
    Reference(
        "ddmin-lines",
        "textbook ddmin over ddchange's line changes (`--granularity line`, finer than its "
        "default's blocks)",
        ddmin,
        "line",
    ),
    Reference("ddmin-hunks", "textbook ddmin over git's hunks (`-U3`)", ddmin, "hunk"),
    Reference(
        "probdd-hunks",
        "ProbDD (Wang et al., FSE 2021) over git's hunks, as published (p0 = 0.1, an item "
        "settled at 0.8, the CDD artifact's settings; `search.probabilistic.probdd`)",
        probing(probabilistic.probdd),
        "hunk",
    ),
    Reference(
        "cdd-hunks",
        "CDD (Zhang et al., 2024) over git's hunks, as published (p0 = 0.1; "
        "`search.probabilistic.cdd`)",
        probing(probabilistic.cdd),
        "hunk",
    ),
)


def units(repo: Path, granularity: Granularity) -> Diff:
    """The diff of `good..bad` as ddchange reads it, in units of `granularity`."""
    opened = ddgit.open_repo(repo)
    good, bad = (git(repo, "rev-parse", rev).strip() for rev in ("good", "bad"))
    return in_units(read.read_diff(opened, good, bad), granularity)


def in_units(diff: Diff, granularity: Granularity) -> Diff:
    """`diff` (git's hunks, as read) in units of `granularity`: git's hunks; its line
    changes; or its blocks, each a run of line changes with no unchanged line between them
    (ddchange's own numbering, `Hierarchy.block`) made one unit."""
    if granularity == "hunk":
        return diff
    lines = linechanges.split_lines(diff)
    if granularity == "line":
        return lines
    numbering = Hierarchy(lines, dependencies=False)
    runs: dict[int, list[Hunk]] = {}
    for unit in lines.hunks:
        runs.setdefault(numbering.block(unit.id), []).append(unit)
    blocks = [_joined(run) for run in runs.values()]
    ids = {
        unit.id: block.id for block, run in zip(blocks, runs.values(), strict=True) for unit in run
    }
    files = tuple(
        dataclasses.replace(file, units=tuple(dict.fromkeys(ids[u] for u in file.units)))
        for file in lines.files
    )
    return Diff(files, tuple(blocks), lines.skipped)


def _joined(run: list[Hunk]) -> Hunk:
    """One unit of a block's line changes: its removed lines replaced by its added lines.
    They are consecutive on each side, so the block starts where its first removed (added)
    line does; a side with none keeps the first change's place (after line k: k)."""
    if len(run) == 1:
        return run[0]
    removing = [u for u in run if u.old_lines] or run[:1]
    adding = [u for u in run if u.new_lines] or run[:1]
    lines = [line for u in run for line in u.diff.splitlines(keepends=True)[1:]]
    removed = [line for line in lines if not line.startswith("+")]
    added = [line for line in lines if line.startswith("+")]
    header = run[0].diff.split("\n", 1)[0]
    return dataclasses.replace(
        run[0],
        old_start=removing[0].old_start,
        old_lines=sum(u.old_lines for u in run),
        new_start=adding[0].new_start,
        new_lines=sum(u.new_lines for u in run),
        diff="\n".join([header, "".join(removed + added)]),
        added=sum(u.added for u in run),
        removed=sum(u.removed for u in run),
    )


def put(box: Sandbox, diff: Diff, config: frozenset[str]) -> bool:
    """GOOD with the units `config` applied, written into the box's work tree as ddchange's
    `materialize` computes it; False when no tree has those states (a file/directory clash)."""
    box.reset()
    try:
        states = content.materialize(diff, config)
    except Conflict:
        return False
    for path in files.deepest_first(states):
        full = box.root / path
        if os.path.lexists(full):
            files.delete(full)
            files.prune_empty_parents(full.parent, box.root)
    for path, state in states.items():
        if state is not None:
            files.make_parents(box.root / path, box.root)
            files.create(box.root / path, state)
    return True


def tree_patch(box: Sandbox) -> bytes:
    """The box's work tree as a patch against GOOD (the judge applies it on its own clone)."""
    git(box.root, "add", "--all", "--force", ".")
    return git_bytes(box.root, "diff", "--cached", "--binary", "-M", "good")


def reference(
    case: Case, ref: Reference, diff: Diff, box: Sandbox, judge_box: Sandbox, budget: int
) -> Row:
    """`ref` over the units of `diff`: GOOD and BAD run once each first (what a user needs to
    trust any answer), then the search; every test writes GOOD plus the units into the box,
    builds and checks, and an exact cache answers repeats. Configurations no tree can hold are
    UNRESOLVED and no test."""
    row = Row(case.name, case.title, mode=ref.mode)
    ids = [unit.id for unit in diff.hunks]
    counts = {"pre-flight": 0, "search": 0}
    cache: dict[frozenset[str], Outcome] = {}
    part, clashes = "pre-flight", 0

    def test(config: frozenset[str]) -> Outcome:
        nonlocal clashes
        if config not in cache:
            if not put(box, diff, config):
                clashes += 1
                return Outcome.UNRESOLVED
            if sum(counts.values()) >= budget:
                raise OutOfBudget
            counts[part] += 1
            cache[config] = Outcome(box.test())
        return cache[config]

    started = time.monotonic()
    answer: list[str] | None = None
    try:
        ends = test(frozenset()), test(frozenset(ids))
        if ends != (Outcome.PASS, Outcome.FAIL):
            row.outcome = f"GOOD {ends[0].value}, BAD {ends[1].value}"
        else:
            part = "search"
            answer = ref.search(ids, test)
    except OutOfBudget:
        row.outcome, row.over_budget = "budget ran out", True
    row.wall = f"{time.monotonic() - started:.1f}"
    row.count = sum(counts.values())
    row.tests = f"{row.count}+" if row.over_budget else str(row.count)
    row.runs = Runs(counts["pre-flight"], counts["search"], 0)
    if clashes:
        row.tests += f" (+{clashes} no tree)"
    if answer is None:
        return row
    row.outcome, row.size = "found", len(answer)
    row.answer = f"{len(answer)} of {len(ids)} {UNIT_NAMES[ref.granularity]}"
    put(box, diff, frozenset(answer))
    return _judged(row, judge(judge_box, tree_patch(box)))


# -- git bisect run -----------------------------------------------------------------------------


def bisect(case: Case, box: Sandbox, timeout: float) -> Row:
    """`git bisect run` with the build and check; the check runs it took and what it named."""
    row = Row(case.name, case.title, mode=BISECT)
    counter, script = box.root.parent / "bisect.count", box.root.parent / "bisect.sh"
    counter.unlink(missing_ok=True)
    check = shlex.join([str(box.bin / "python"), str(case.check)])
    build = f"{case.build} || exit 125" if case.build else "true"
    script.write_text(
        f"echo x >> {shlex.quote(str(counter))}\n{build}\n"
        f"timeout {timeout:g} {check}; rc=$?; [ $rc = 124 ] && exit 125; exit $rc\n"
    )
    started = time.monotonic()
    for rev in ("good", "bad"):  # git bisect trusts the user here; a user checks both first
        box.reset(rev)
        run(["sh", str(script)], box.root, box.env, SEARCH_TIMEOUT)
    preflight = _lines(counter)
    git(box.root, "bisect", "start", "bad", "good")
    done = run(["git", "bisect", "run", "sh", str(script)], box.root, box.env, SEARCH_TIMEOUT)
    row.wall = f"{time.monotonic() - started:.1f}"
    git(box.root, "bisect", "reset")
    row.exit = "timeout" if done.code is None else str(done.code)
    row.count = _lines(counter)
    row.tests = str(row.count)
    row.runs = Runs(preflight, row.count - preflight, 0)
    named = re.findall(r"^([0-9a-f]{40}) is the first bad commit", done.output, re.MULTILINE)
    if case.repository:
        return _bisected_history(case, box, row, named[-1:] or _candidates(done.output))
    bad = git(box.root, "rev-parse", "bad").strip()
    if named:
        row.outcome = f"names {named[-1][:7]}"
        row.answer = "1 commit"
        whole = "BAD, the whole change" if named[-1] == bad else "not BAD"
        row.verdict = f"{whole} (the only commit)"
    else:
        row.outcome = "names nothing"
    return row


def _candidates(output: str) -> list[str]:
    """The commits `git bisect run` lists when skipped commits leave more than one."""
    if "first bad commit could be any of" not in output:
        return []
    return re.findall(r"^([0-9a-f]{40})$", output, re.MULTILINE)


def _bisected_history(case: Case, box: Sandbox, row: Row, named: list[str]) -> Row:
    """What git bisect named in a range of real history, and whether the commit's own change
    (against its first parent) adds or removes the documented culprit lines."""
    commits = int(git(box.root, "rev-list", "--count", "good..bad").strip())
    if not named:
        row.outcome = "names nothing"
        return row
    if len(named) > 1:
        row.outcome = f"{len(named)} candidates"
        row.answer = f"{len(named)} of {commits} commits"
        held = [sha for sha in named if holds_culprit(case, _commit_patch(box, sha))]
        row.verdict = f"{len(held)} of the {len(named)} candidates hold the culprit lines"
        row.culprit = "yes" if held else "no"
        return row
    sha = named[0]
    subject = git(box.root, "log", "-1", "--format=%s", sha).strip()
    row.outcome = f"names {sha[:7]}"
    row.answer = f"1 of {commits} commits"
    held = holds_culprit(case, _commit_patch(box, sha))
    row.verdict = f'{sha[:7]} "{subject[:60]}": its change ' + (
        "holds the culprit lines" if held else "does not hold the culprit lines"
    )
    row.culprit = "yes" if held else "no"
    return row


def _commit_patch(box: Sandbox, sha: str) -> bytes:
    """The change a commit brought: its diff against its first parent (for a merge, what the
    merged branch brought)."""
    return git_bytes(box.root, "diff", "-M", "--binary", f"{sha}^1", sha)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0
