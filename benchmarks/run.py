"""Run ddchange over every bundled sample repository and record what each search cost.

    .venv/bin/python benchmarks/run.py    # rewrites its section of benchmarks/RESULTS.md

Each scenario is built fresh in a temporary directory and searched once, in this process, with
the scenario's own build, test and timeout. "overhead" is ddchange's own time: the wall time
minus the time spent inside the user's build and test commands. Numbers are from one run on the
machine that ran it; test counts are deterministic, times are not.

Beside each, textbook ddmin (real_searches.ddmin) over the blocks the default search ends at
(the baseline that the ratios are computed against), and beside it over the finer line changes
and over git's hunks, with an exact cache, every test written and run in a scratch tree as
ddchange writes its own; it counts GOOD's and BAD's runs too (what a user runs to trust any
answer), so both sides count every test. Its answer is not checked here (benchmarks/real.py
judges answers).
"""

from __future__ import annotations

import platform
import tempfile
from pathlib import Path

from real_searches import Granularity, ddmin, in_units
from results import PARTS, Runs, parts_prose, runs, write_section

from ddchange import git, samples, session
from ddchange.diff import read
from ddchange.model import Outcome
from ddchange.trial import attempt, runner, worktree

HEADING = "## Sample repositories (`benchmarks/run.py`)"
COLUMNS = (
    "scenario",
    "hunks",
    "answer",
    "expected?",
    "tests run",
    PARTS,
    "cache hits",
    "implied",
    "unresolved",
    "wall s",
    "overhead s",
    "textbook ddmin, blocks: tests (answer)",
    "textbook ddmin, line changes: tests (answer)",
    "textbook ddmin, hunks: tests (answer)",
)
# Textbook ddmin's units, in the table's order; the first, the default search's own, is the
# baseline of the ratios.
TEXTBOOK: tuple[Granularity, ...] = ("block", "line", "hunk")


def measure(scenario: samples.Scenario, workdir: Path) -> tuple[list[str], Runs, list[int]]:
    """One search over `scenario`; its row of the table, its runs by part, and textbook
    ddmin's tests over blocks, line changes and hunks (TEXTBOOK)."""
    repo = samples.build_repo(scenario, workdir / scenario.name)
    result = session.run(samples.request(scenario, repo))
    unresolved = sum(r.outcome.value == "unresolved" for r in result.log)
    parts = runs(r.phase for r in result.log)
    textbook = [textbook_ddmin(scenario, repo, unit) for unit in TEXTBOOK]
    return (
        [
            scenario.name,
            str(len(result.diff.hunks)),
            str(len(result.culprits)),
            "yes"
            if samples.matches(scenario, samples.answer(result), inside=result.route.inside)
            else "NO",
            str(result.tests_run),
            parts.cell(),
            str(result.stats.cache_hits),
            str(result.stats.implied),
            str(unresolved),
            f"{result.wall_time:.2f}",
            f"{result.wall_time - result.command_time:.2f}",
            *(f"{tests} ({answer})" for tests, answer in textbook),
        ],
        parts,
        [tests for tests, _ in textbook],
    )


def textbook_ddmin(scenario: samples.Scenario, repo: Path, unit: Granularity) -> tuple[int, int]:
    """Textbook ddmin's tests in all (GOOD and BAD first) and its answer's size, over the
    scenario's blocks, line changes or git's hunks (`unit`), in a scratch tree of its own."""
    request = samples.request(scenario, repo)
    opened = git.open_repo(repo)
    good, bad = git.resolve_commit(opened, request.good), git.resolve_commit(opened, request.bad)
    diff = read.read_diff(opened, good, bad)
    diff = in_units(diff, unit)
    ids = [each.id for each in diff.hunks]
    recipe = attempt.Recipe(
        diff=diff,
        command=request.test,
        subdirectory="",
        build=request.build,
        timeout=request.timeout,
        expect=runner.Expectation(None, None),
    )
    cache: dict[frozenset[str], Outcome] = {}
    with worktree.scratch_worktree(opened, good) as tree:

        def test(config: frozenset[str]) -> Outcome:
            if config not in cache:
                cache[config] = attempt.attempt(recipe, tree, config).outcome
            return cache[config]

        if (test(frozenset()), test(frozenset(ids))) != (Outcome.PASS, Outcome.FAIL):
            raise SystemExit(f"{scenario.name}: GOOD does not pass or BAD does not fail")
        answer = ddmin(ids, test)
    return len(cache), len(answer)


def table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ddchange-bench-") as tmp:
        measured = [
            measure(scenario, Path(tmp)) for scenario in samples.scenarios() if not scenario.causes
        ]
    text = table([row for row, _, _ in measured])
    print(text, end="")
    write_section(
        HEADING,
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}: `.venv/bin/python benchmarks/run.py`. `tests run` counts every "
        "real run: the pre-flight (BAD, and GOOD where the search starts from it), the "
        "bisection of the history, the search, and the checks at the end (the reruns of the "
        "answer, its base's last run, and the answer on GOOD); "
        f"{parts_prose(parts for _, parts, _ in measured)}. `unresolved` counts real runs "
        "that could not say pass or fail (no build, timeout, other failure); `overhead` is wall "
        "time minus the time inside build and test commands. Textbook ddmin (TSE 2002, an exact "
        "cache) runs over the blocks that ddchange's default search ends at (a run of changed "
        "lines with no unchanged line between them, as `git diff -U0` shows it), and beside it "
        "over the finer line changes and over git's hunks, in a scratch tree as ddchange's runs "
        "are; its tests count GOOD's and BAD's runs too. The ratios are against ddmin over "
        "blocks, the default's own unit.\n\n" + text + "\n" + summary(measured),
    )


def summary(measured: list[tuple[list[str], Runs, list[int]]]) -> str:
    """The comparisons, read from the rows."""
    checks = [parts.preflight + parts.checks for _, parts, _ in measured]
    search = [parts.search for _, parts, _ in measured]
    total = [parts.total for _, parts, _ in measured]
    blocks, lines, hunks = ([tests[k] for _, _, tests in measured] for k in range(3))
    count = len(measured)

    def fewer(theirs: list[int]) -> int:
        return sum(s <= t for s, t in zip(search, theirs, strict=True))

    return (
        f"- pre-flight and checks together: {min(checks)} to {max(checks)} tests; at most 6 on "
        f"{sum(c <= 6 for c in checks)} of {count}\n"
        f"- ddchange's search alone ≤ textbook ddmin's whole run over blocks on "
        f"{fewer(blocks)} of {count} (over line changes on {fewer(lines)}, over hunks on "
        f"{fewer(hunks)})\n"
        f"- all tests: ddchange {sum(total)}, textbook ddmin over blocks {sum(blocks)} "
        f"({sum(total) / sum(blocks):.2f}×); beside it, over line changes {sum(lines)}, over "
        f"hunks {sum(hunks)}\n"
    )


if __name__ == "__main__":
    main()
