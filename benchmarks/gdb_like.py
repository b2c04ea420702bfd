"""How many tests ddchange needs on a GDB-like change, by grouping strategy, next to GDB's.

    .venv/bin/python benchmarks/gdb_like.py                     # 500, 2,000, 8,000 hunks + gcc
    .venv/bin/python benchmarks/gdb_like.py --sizes 2000 --no-real --seed 3

Zeller's GDB 4.16 → 4.17 study (ESEC/FSE 1999) split one 178,000-line change into 8,721 textual
changes; nearly every subset failed to build, and isolating the one failure-inducing change took
470 tests flat, 289 grouped by location and 97 grouped by function. This benchmark rebuilds that
situation: gdb_project.py writes a C project of 100+ files whose GOOD→BAD change has N hunks of
renames, signature changes, new helpers, moved functions and local refactorings (most subsets
do not compile) plus exactly one wrong constant. ddchange's search (`search.minimize`) runs over
it with each grouping strategy, against gdb_oracle.py's simulated compiler, linker and test (no
gcc: thousands of tests per run). One real run of the `ddchange` command at 2,000 hunks, with
gcc, make and `sh test.sh`, checks the simulation: every configuration the real run built is
judged by the oracle too, and the two must agree.

"tests" counts calls to the test function during the search. The command also runs a
pre-flight (GOOD and BAD) and checks at the end: the real run's row counts every part from its
test log, and nothing here assumes how many runs they take.
Test counts are deterministic for a seed; times are not. Zeller's figures are for *isolation*
(dd, the failure-inducing difference) on GDB's own change; ddchange *minimizes* (a 1-minimal
failing set): compare magnitudes, not digits.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import gdb_oracle
import gdb_project
from results import PARTS, Runs, parts_prose, runs, write_section

from ddchange import git, model
from ddchange.diff import linechanges, read
from ddchange.diff.hunks import Diff
from ddchange.hierarchy import grouping
from ddchange.model import Outcome
from ddchange.search.hierarchical import minimize
from ddchange.trial.missing import missing_names

HEADING = "## GDB-like change (`benchmarks/gdb_like.py`)"
GDB = {"flat": "470", "by file": "289", "by function": "97"}  # tests at 8,721 changes
REAL_SIZE = 2000
SAMPLES = 200  # random subsets per size for the fraction that does not build


@dataclass(frozen=True)
class Strategy:
    name: str
    levels: tuple[str, ...]
    dependencies: bool
    resolve: bool = False  # Zeller's failure resolution, as the command does it


STRATEGIES = (
    Strategy("flat", ("hunk",), dependencies=False),
    Strategy("by file", ("file", "hunk"), dependencies=False),
    Strategy("by function", ("function", "hunk"), dependencies=False),
    Strategy("full + dependencies", ("file", "function", "hunk", "block"), dependencies=True),
    # What `ddchange GOOD..BAD` does: a directory level for wide diffs, failure resolution.
    Strategy("as the command", (), dependencies=True, resolve=True),
)


@dataclass(frozen=True)
class Case:
    """One generated repository and what the oracle needs to judge its configurations."""

    project: gdb_project.Project
    repo: Path
    good: str
    bad: str
    diff: Diff
    base: dict[str, bytes]  # GOOD's files

    @property
    def culprit(self) -> tuple[str, str]:
        return self.project.culprit.path, self.project.culprit.line

    def oracle(self, diff: Diff, budget: int | None = None) -> gdb_oracle.Oracle:
        return gdb_oracle.Oracle(diff, self.base, self.culprit, budget)

    def holds_culprit(self, diff: Diff, answer: frozenset[str]) -> bool:
        wanted = "+" + self.project.culprit.line
        return any(wanted in diff.by_id[unit].diff.splitlines() for unit in answer)


def modules_for(size: int) -> int:
    """100 files at least; about 20 hunks per file above 2,000 hunks."""
    return max(100, size // 20)


def build_case(size: int, modules: int, seed: int, dest: Path) -> Case:
    """Generate the project, commit GOOD and BAD at `dest`, and read the diff as ddchange does."""
    project = gdb_project.generate(size, modules, seed)
    good, bad = gdb_project.write_repo(project, dest)
    repo = git.open_repo(dest)
    diff = read.read_diff(repo, good, bad)
    tree = git.ls_tree(repo, good)
    blobs = git.read_blobs(repo, [entry.sha for entry in tree.values()])
    base = {path: blobs[entry.sha] for path, entry in tree.items()}
    return Case(project, dest, good, bad, diff, base)


@dataclass(frozen=True)
class Measured:
    """One search: its tests (over the budget: `finished` is false), how many did not build,
    and its answer."""

    tests: int  # calls to the oracle (failure resolution's retries included)
    finished: bool
    unresolved: float  # share of the tests
    answer: int  # units in the answer
    holds_culprit: bool
    # CPU time of the search: the oracle's, and ddchange's with its scopes and analysis of names
    # (the hierarchy works them out when the search first needs them)
    seconds: float


def measure(case: Case, strategy: Strategy, budget: int) -> Measured:
    """One search over `case` with `strategy`, against the simulated build and test."""
    levels = strategy.levels or tuple(grouping.levels_for(model.Request.granularity, case.diff))
    lines = {"block", "line"} & set(levels)  # a block is a run of line changes
    diff = linechanges.split_lines(case.diff) if lines else case.diff
    oracle = case.oracle(diff, budget)
    hierarchy = grouping.Hierarchy(
        diff, dependencies=strategy.dependencies, whole_blocks=levels[-1] == "block"
    )

    def missing(config: frozenset[str]) -> frozenset[str]:
        """The failure resolution loop's input: what the last simulated build said."""
        return frozenset(missing_names(oracle.output)) if strategy.resolve else frozenset()

    started = time.process_time()
    try:
        found = minimize(diff, oracle, levels=levels, hierarchy=hierarchy, missing=missing)
    except gdb_oracle.OverBudget:
        found = None
    seconds = time.process_time() - started
    unresolved = oracle.outcomes[Outcome.UNRESOLVED] / max(oracle.calls, 1)
    if found is None:
        return Measured(oracle.calls, False, unresolved, 0, False, seconds)
    if found.tests != oracle.calls:
        raise AssertionError(f"minimize counted {found.tests} tests, the oracle {oracle.calls}")
    holds = case.holds_culprit(diff, found.answer)
    return Measured(oracle.calls, True, unresolved, len(found.answer), holds, seconds)


@dataclass(frozen=True)
class Broken:
    """How much of the change does not build: random subsets, and single hunks alone."""

    size: int
    subsets: float  # share of random subsets (each hunk in with probability 1/2)
    alone: float  # share of hunks that do not build on their own (GOOD plus that hunk)


def broken(case: Case, seed: int) -> Broken:
    rng = random.Random(seed)
    ids = [unit.id for unit in case.diff.hunks]
    oracle = case.oracle(case.diff)
    subsets = [
        oracle.judge(frozenset(u for u in ids if rng.random() < 0.5)) for _ in range(SAMPLES)
    ]
    alone = [oracle.judge(frozenset([unit])) for unit in ids]
    return Broken(
        len(ids),
        subsets.count(Outcome.UNRESOLVED) / len(subsets),
        alone.count(Outcome.UNRESOLVED) / len(alone),
    )


# -- the real command --------------------------------------------------------------------------


@dataclass(frozen=True)
class RealRun:
    tests_run: int
    parts: Runs  # the test log's records by phase
    answer: int
    culprit: bool
    wall: float
    command_time: float
    agreed: int  # configurations the real run built on which the oracle agrees
    judged: int
    predicted: int | None  # tests the simulated "as the command" search needed


def real_run(case: Case, report: Path, predicted: int | None) -> RealRun:
    """`ddchange GOOD..BAD --build make -- sh test.sh` on the case, and the oracle's verdict on
    every configuration it built."""
    command = [sys.executable, "-m", "ddchange", f"{case.good}..{case.bad}", "-q"]
    command += ["--build", "make", "--json", str(report), "--", "sh", "test.sh"]
    done = subprocess.run(command, cwd=case.repo, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"ddchange failed ({done.returncode}): {done.stderr}\nin {case.repo}")
    result = json.loads(report.read_text())
    diff = linechanges.split_lines(case.diff)
    oracle = case.oracle(diff)
    outcomes = [(frozenset(r["config"]), Outcome(r["outcome"])) for r in result["log"]]
    agreed = sum(oracle.judge(config) is outcome for config, outcome in outcomes)
    answer = frozenset(c["id"] for c in result["culprits"])
    return RealRun(
        result["tests_run"],
        runs(r["phase"] for r in result["log"]),
        len(answer),
        case.holds_culprit(diff, answer),
        result["wall_time"],
        result["command_time"],
        agreed,
        len(outcomes),
        predicted,
    )


# -- output ------------------------------------------------------------------------------------


def table(header: Sequence[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


COLUMNS = (
    "hunks",
    "files changed",
    "strategy",
    "tests",
    "unresolved",
    "answer",
    "culprit?",
    "CPU s (mean)",
    "GDB (8,721 changes)",
)


def cells(runs: list[Measured], budget: int) -> list[str]:
    """tests, unresolved, answer, culprit?, CPU s over the seeds: the median test count with
    the range when there are several; answer and culprit? of the searches that finished."""
    tests = sorted(run.tests if run.finished else budget + 1 for run in runs)
    count = _count(tests[(len(tests) - 1) // 2], budget)  # the lower median
    if len(runs) > 1:
        count += f" ({_count(tests[0], budget)}–{_count(tests[-1], budget)})"
    finished = [run for run in runs if run.finished]
    answers = sorted({run.answer for run in finished})
    holds = "yes" if all(run.holds_culprit for run in finished) else "NO"
    return [
        count,
        f"{sum(run.unresolved for run in runs) / len(runs):.0%}",
        "–".join(str(n) for n in answers) or "-",
        holds if finished else "-",
        f"{sum(run.seconds for run in runs) / len(runs):.1f}",
    ]


def _count(tests: int, budget: int) -> str:
    return f"{budget:,}+" if tests > budget else f"{tests:,}"


@dataclass(frozen=True)
class Size:
    """Every measurement at one size, over the seeds."""

    hunks: int
    files: int
    kinds: str  # the first seed's change, hunks by kind
    broken: Broken  # the first seed's
    runs: dict[str, list[Measured]]  # by strategy name


def measure_size(size: int, seeds: Sequence[int], budget: int, workdir: Path) -> Size:
    runs: dict[str, list[Measured]] = {strategy.name: [] for strategy in STRATEGIES}
    first = build_case(size, modules_for(size), seeds[0], workdir / f"{size}-{seeds[0]}")
    for seed in seeds:
        case = (
            first
            if seed == seeds[0]
            else build_case(size, modules_for(size), seed, workdir / f"{size}-{seed}")
        )
        for strategy in STRATEGIES:
            runs[strategy.name].append(measure(case, strategy, budget))
            print(size, seed, strategy.name, runs[strategy.name][-1], flush=True)
    kinds = ", ".join(f"{kind} {count}" for kind, count in first.project.kinds.items())
    broken_first = broken(first, seeds[0])
    return Size(len(first.diff.hunks), len(first.diff.files), kinds, broken_first, runs)


def rows(sizes: list[Size], budget: int) -> list[list[str]]:
    return [
        [f"{size.hunks:,}", str(size.files), name, *cells(runs, budget), GDB.get(name, "")]
        for size in sizes
        for name, runs in size.runs.items()
    ]


def body(sizes: list[Size], args: argparse.Namespace, real: RealRun | None) -> str:
    seeds = _seeds(args)
    text = (
        f"On {platform.machine()}, Python {platform.python_version()}, {platform.system()}, "
        f"{os.cpu_count()} cores: `benchmarks/gdb_like.py --sizes "
        f"{','.join(map(str, args.sizes))} --seed {args.seed} --seeds {args.seeds} --budget "
        f"{args.budget}{'' if args.real else ' --no-real'}`. A generated C project "
        f"(`gdb_project.py`: {modules_for(min(args.sizes))}"
        "+ modules, a .c file and a header each) and one GOOD→BAD change of renames, signature "
        "changes, new helpers, moved functions and local refactorings with exactly one wrong "
        "constant, searched by `search.minimize` against a simulated compiler, linker and test "
        "(`gdb_oracle.py`). `tests` are calls to the test during the search, the final check "
        "that the answer without each of its units does not fail included; the command also "
        "runs a pre-flight and checks at the end, not counted here"
        + (" (the real run below counts them)" if real is not None else "")
    )
    if len(seeds) > 1:
        text += f", the median over seeds {seeds[0]}–{seeds[-1]} with the range"
    text += (
        "; `N+`: the budget of N tests ran out. `unresolved` is the share of the tests that "
        "did not build; `answer` counts the units (hunks, or line changes) in the answers of "
        "the searches that finished, which should be the culprit alone, and `culprit?` says "
        'whether they hold it. "as the command" is `ddchange`\'s own search: a directory level '
        "above files for wide diffs, dependencies, and failure resolution (a build that names "
        "a missing function is retried without the changes that need it; retries are tests "
        "too). The GDB column is Zeller's (ESEC/FSE 1999; TSE 2002): 8,721 changes, one "
        "culprit, 470 / 289 / 97 tests to *isolate* it (dd) on GDB's own change, where ddchange "
        "*minimizes* (a 1-minimal failing set) a generated one: compare magnitudes, not digits.\n\n"
    )
    text += f"The change at {sizes[-1].hunks:,} hunks, by kind: {sizes[-1].kinds}.\n\n"
    text += table(COLUMNS, rows(sizes, args.budget)) + "\n"
    text += "Random subsets (each hunk in with probability 1/2) that do not build: " + ", ".join(
        f"{size.broken.subsets:.0%} at {size.hunks:,} hunks" for size in sizes
    )
    text += f" ({SAMPLES} subsets of seed {args.seed}'s change; GDB: nearly all). Hunks that "
    text += "do not build alone (GOOD plus that hunk): "
    text += ", ".join(f"{size.broken.alone:.0%} at {size.hunks:,}" for size in sizes) + ".\n"
    if real is not None:
        text += real_section(real, args.seed)
    return text


def real_section(real: RealRun, seed: int) -> str:
    header = ("tests run", PARTS, "answer", "culprit?", "wall s", "build+test s", "oracle agrees")
    row = [
        str(real.tests_run),
        real.parts.cell(),
        str(real.answer),
        "yes" if real.culprit else "NO",
        f"{real.wall:.0f}",
        f"{real.command_time:.0f}",
        f"{real.agreed} of {real.judged} configurations",
    ]
    predicted = (
        f'The simulated "as the command" search predicted {real.predicted} runs of the '
        f"search; the real search ran {real.parts.search}."
        if real.predicted is not None
        else f'The simulated "as the command" search did not run at {REAL_SIZE:,} hunks and '
        f"seed {seed}: no prediction."
    )
    return (
        f"\nReal run, {REAL_SIZE:,} hunks, seed {seed}, gcc and make: `ddchange GOOD..BAD "
        f"--build make -- sh test.sh` (default granularity `{model.Request.granularity}`). "
        '"oracle agrees": the '
        "simulated build and test give the outcome gcc and the test gave, on every configuration "
        f"the real run built; {parts_prose([real.parts])}. {predicted}\n\n" + table(header, [row])
    )


# -- main --------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(size) for size in text.split(",")],
        default=[500, 2000, 8000],
        help="target numbers of hunks, comma-separated (default 500,2000,8000)",
    )
    parser.add_argument("--real", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--seed", type=int, default=1, help="the first seed (default 1)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds per size (default 1)")
    parser.add_argument("--budget", type=int, default=20_000, help="tests per search at most")
    return parser.parse_args(argv)


def _seeds(args: argparse.Namespace) -> list[int]:
    return list(range(args.seed, args.seed + args.seeds))


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ddchange-gdb-") as tmp:
        sizes = [measure_size(size, _seeds(args), args.budget, Path(tmp)) for size in args.sizes]
        real = None
        if args.real:
            case = build_case(REAL_SIZE, modules_for(REAL_SIZE), args.seed, Path(tmp) / "real")
            real = real_run(case, Path(tmp) / "report.json", predicted(sizes))
    text = body(sizes, args, real)
    print(text, end="")
    write_section(HEADING, text)


def predicted(sizes: list[Size]) -> int | None:
    """The simulated "as the command" test count at the real run's size and seed."""
    for size in sizes:
        if size.hunks == REAL_SIZE:
            first = size.runs[STRATEGIES[-1].name][0]
            return first.tests if first.finished else None
    return None


if __name__ == "__main__":
    main()
