"""Mutation score: which small planted bugs in the search and the trial layer the tests notice.

    .venv/bin/python benchmarks/mutation.py [--modules search/dd.py,search/cache.py,...]

mutmut (a benchmark dependency: `pip install -e .[bench]`) changes one thing at a time in a
function (`<` for `<=`, `and` for `or`, a constant, a dropped call) and runs the tests that
reach that function, with `-x`: a mutant that makes some test fail is *killed*, one under which
every test still passes *survived* (a bug the tests would let through, or a change that is no
bug at all: the list of survivors is there to be read), one that runs far longer than the
tests did on the real code is a *timeout*.

Everything runs in a work directory (`.mutation/` at the top of the checkout, git-ignored):
copies of src/ and tests/, this project's pyproject.toml with a `[tool.mutmut]` table for the
chosen modules, and mutmut's own `mutants/` beside them. The checkout's src/ is never written.
Each module is tested by the test files that exercise it in-process (`TESTS`); a module only
reached through the `ddchange` command in a child process (trial/trials.py is, mostly) cannot
be mutated that way, and its in-process end-to-end tests take seconds to a minute per mutant,
so `--modules` chooses what fits in the time at hand. The section written to RESULTS.md names
the modules measured.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from results import CHECKOUT, RESULTS, stamp_of, write_section

HEADING = "## Mutation score (`benchmarks/mutation.py`)"
WORK = CHECKOUT / ".mutation"
# The test files that exercise each module in-process, quickest first.
TESTS = {
    "search/cache.py": ["test_cache.py", "test_dd.py", "test_search.py"],
    "search/confidence.py": ["test_confidence.py"],
    "search/dd.py": ["test_dd.py", "test_probabilistic.py", "test_search.py"],
    "search/hierarchical.py": ["test_search.py", "test_grouping.py"],
    "search/probabilistic.py": ["test_probabilistic.py", "test_search.py"],
    "trial/trials.py": ["test_jobs.py", "test_report.py"],
}
# What fits in about 20 minutes on two cores: hierarchical.py (the largest, under the slowest
# tests) and the rest take a run of their own.
DEFAULT = ("search/cache.py", "search/confidence.py", "search/dd.py", "search/probabilistic.py")
# One process per test run, no cache, stop at the first failure: a killed mutant costs little.
PYTEST = ["-n", "0", "-x", "-q", "-p", "no:cacheprovider"]
STATUSES = ("killed", "survived", "timeout", "not checked")


@dataclass(frozen=True, kw_only=True)
class Mutant:
    name: str
    module: str
    status: str
    line: int
    before: str
    after: str


def config(modules: Sequence[str]) -> str:
    """The `[tool.mutmut]` table for `modules`, in TOML."""
    tests = sorted({f"tests/{name}" for module in modules for name in TESTS[module]})

    def array(values: Sequence[str]) -> str:
        return "[" + ", ".join(f'"{value}"' for value in values) + "]"

    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["src/"]\n'
        f"only_mutate = {array([f'src/ddchange/{module}' for module in modules])}\n"
        f"pytest_add_cli_args = {array(PYTEST)}\n"
        f"pytest_add_cli_args_test_selection = {array(tests)}\n"
        'also_copy = ["sample_repos"]\n'
        # A mutant gets 5 times the tests' time on the real code (mutmut's default is 15): an
        # endless loop costs less, and a slow machine still leaves a normal run room.
        "timeout_multiplier = 5.0\n"
        "use_git_change_detection = false\n"
    )


def prepare(work: Path, modules: Sequence[str]) -> None:
    """A fresh work directory: copies of the code and tests, and the mutmut configuration."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for name in ("src", "tests", "sample_repos"):
        shutil.copytree(CHECKOUT / name, work / name, ignore=ignore)
    pyproject = (CHECKOUT / "pyproject.toml").read_text()
    (work / "pyproject.toml").write_text(pyproject + config(modules))


@contextmanager
def inside(work: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(work)
    try:
        yield
    finally:
        os.chdir(before)


def run_mutmut(work: Path, children: int) -> float:
    """`mutmut run` in `work`; its wall-clock seconds."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    started = time.monotonic()
    mutmut = [sys.executable, "-m", "mutmut", "run", "--max-children", str(children)]
    subprocess.run(mutmut, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def changed_lines(diff: str) -> tuple[str, str]:
    """The first line a mutant's function diff removes and the one it adds (stripped)."""
    lines = diff.splitlines()[2:]  # past the ---/+++ header
    removed = next((line[1:] for line in lines if line.startswith("-")), "")
    added = next((line[1:] for line in lines if line.startswith("+")), "")
    return removed.strip(), added.strip()


def line_of(source: str, function: str, text: str) -> int:
    """The line of `source` holding `text` inside the function or method `function` (its
    first line when `text` is not found there)."""
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function:
            for number in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                if lines[number - 1].strip() == text:
                    return number
            return node.lineno
    return 0


def read_mutants(work: Path, modules: Sequence[str]) -> list[Mutant]:
    """Every mutant of `modules` with its status, read from mutmut's records."""
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code

    found = []
    with inside(work):
        for module in modules:
            path = Path("src/ddchange") / module
            data = SourceFileMutationData(path=path)
            data.load()
            source = path.read_text()
            for name, code in sorted(data.exit_code_by_key.items()):
                status = status_by_exit_code[code]
                before = after = ""
                line = 0
                if status != "killed":
                    before, after = changed_lines(get_diff_for_mutant(name, path=path))
                    function = name.split("__mutmut_")[0].rsplit(".", 1)[-1]
                    function = function.split("ǁ")[-1].removeprefix("x_")
                    line = line_of(source, function, before)
                found.append(Mutant(name=name, module=module, status=status, line=line,
                                    before=before, after=after))  # fmt: skip
    return found


def section(mutants: Sequence[Mutant], modules: Sequence[str], seconds: float) -> str:
    rows = [
        "| module | tests | killed | survived | timeout | not checked | other | total | score |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for module in [*modules, None]:
        chosen = [m for m in mutants if module is None or m.module == module]
        counts = Counter(m.status for m in chosen)
        other = len(chosen) - sum(counts[s] for s in STATUSES)
        decided = counts["killed"] + counts["survived"] + counts["timeout"]
        score = f"{(counts['killed'] + counts['timeout']) / decided:.0%}" if decided else "–"
        name = f"`src/ddchange/{module}`" if module else "**all**"
        tests = ", ".join(TESTS[module]) if module else ""
        rows.append(
            f"| {name} | {tests} | {counts['killed']} | {counts['survived']} | "
            f"{counts['timeout']} | {counts['not checked']} | {other} | {len(chosen)} | {score} |"
        )
    survivors = [m for m in mutants if m.status not in ("killed", "timeout", "not checked")]
    listed = [
        f"- `{m.module}:{m.line}` ({m.status}): `{m.before}` → `{m.after or '(removed)'}`"
        for m in survivors
    ]
    left = sorted(set(TESTS) - set(modules))
    return "\n".join(
        [
            f"mutmut over {', '.join(f'`{m}`' for m in modules)} (under `src/ddchange/`), each "
            "mutant against the test files listed, `pytest -x -n 0`"
            + (f", in {seconds / 60:.0f} minutes on this machine" if seconds else "")
            + ". Score: killed and timed out over "
            "killed, survived and timed out. *Not checked*: the run was stopped before mutmut "
            'got to them; *other*: mutmut\'s "no tests", "suspicious" and the like.',
            "",
            *rows,
            "",
            *(
                [f"Not measured in this run (too slow for it, or chosen out): {', '.join(left)}."]
                if left
                else []
            ),
            "",
            f"Surviving mutants ({len(survivors)}): the line and its change.",
            "",
            *listed,
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--modules", default=",".join(DEFAULT),
                        help=f"comma-separated, of: {', '.join(TESTS)}")  # fmt: skip
    parser.add_argument("--children", type=int, default=2, help="mutants tested at once")
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--results", type=Path, default=RESULTS, help="file to write")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="write the section from the work directory's records; run nothing",
    )
    args = parser.parse_args(argv)
    modules = [m.strip() for m in args.modules.split(",") if m.strip()]
    unknown = set(modules) - set(TESTS)
    if unknown:
        parser.error(f"unknown modules: {', '.join(sorted(unknown))}")
    seconds = 0.0
    if not args.report_only:
        prepare(args.work, modules)
        seconds = run_mutmut(args.work, args.children)
    body = section(read_mutants(args.work, modules), modules, seconds)
    print(body)
    # The code mutated is this checkout's src/, whichever ddchange this process imports.
    write_section(HEADING, body, args.results, stamp_of(CHECKOUT))


if __name__ == "__main__":
    main()
