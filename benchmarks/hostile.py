"""Hostile sizes: what ddchange costs on a diff of 20,000 hunks and on 50 MB files.

    .venv/bin/python benchmarks/hostile.py     # updates its section of benchmarks/RESULTS.md

Each case is built fresh in a temporary directory and searched once by the real command, in a
process of its own (`measured`): "peak MB" is that process's (VmHWM), "git peak MB" the largest
of the commands it ran (git's, in these cases). "ddchange s/test" is
ddchange's own time per real test: wall time minus the time inside the test command, divided by
the tests run, so it includes the one-off costs (reading the diff, the scratch checkout, the
final patch). tests/test_hostile.py runs smaller versions of the same cases for their answers.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from results import write_section

from ddchange import samples

HEADING = "## Hostile sizes (`benchmarks/hostile.py`)"
AUTHOR = "Bench Mark <bench@example.org>"
COLUMNS = (
    "case",
    "hunks",
    "answer",
    "tests run",
    "wall s",
    "test s",
    "ddchange s/test",
    "peak MB",
    "git peak MB",
)

# A process's own peak is VmHWM (Linux), not ru_maxrss: that one also counts what the parent
# held when it forked the process (here, the case this script built), which exec keeps.
OWN_PEAK = """
import pathlib
status = pathlib.Path("/proc/self/status").read_text().splitlines()
own_peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
"""

MEASURED = f"""
import json, resource, sys
from ddchange import cli
code = cli.main(sys.argv[1:])
{OWN_PEAK}
print(json.dumps([code, own_peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))
"""


@dataclass(frozen=True)
class Case:
    name: str
    good: Mapping[str, str]
    bad: Mapping[str, str | None]
    test: str
    answer: list[tuple[str, str]]


def many_hunks(files: int, hunks: int) -> Case:
    """`files` files of `hunks` hunks each (10 lines apart); the test fails on one hunk."""

    def text(number: int, changed: bool) -> str:
        lines = [f"file {number} block {b} line {k}\n" for b in range(hunks) for k in range(10)]
        if changed:
            for block in range(hunks):
                lines[block * 10 + 5] = f"file {number} block {block} changed\n"
        return "".join(lines)

    culprit = f"src/d{123 % 20}/f123.txt"
    return Case(
        f"{files} files x {hunks} hunks",
        {f"src/d{n % 20}/f{n}.txt": text(n, False) for n in range(files)},
        {f"src/d{n % 20}/f{n}.txt": text(n, True) for n in range(files)},
        f"grep -q 'file 123 block 37 changed' {culprit} && exit 1; exit 0\n",
        [(culprit, "text")],
    )


def big_file(megabytes: int) -> tuple[str, list[str]]:
    lines = [f"{n:08d} {'x' * 55}\n" for n in range(megabytes * (1 << 20) // 64)]
    return "".join(lines), lines


def big_edit(megabytes: int) -> Case:
    """A change in the middle of a large file, a harmless one a quarter in, a small file."""
    good, lines = big_file(megabytes)
    lines[len(lines) // 2] = "BROKEN\n"
    lines[len(lines) // 4] = "harmless\n"
    return Case(
        f"{megabytes} MB file, edited",
        {"big.txt": good, "small.txt": "a\nb\nc\n"},
        {"big.txt": "".join(lines), "small.txt": "a\nB\nc\n"},
        "grep -q BROKEN big.txt && exit 1; exit 0\n",
        [("big.txt", "text")],
    )


def big_add(megabytes: int) -> Case:
    good, _ = big_file(megabytes)
    return Case(
        f"{megabytes} MB file, added",
        {"small.txt": "a\nb\nc\n"},
        {"big.txt": good, "small.txt": "a\nB\nc\n"},
        "test -e big.txt && exit 1; exit 0\n",
        [("big.txt", "add")],
    )


CASES: list[Callable[[], Case]] = [
    lambda: many_hunks(400, 50),
    lambda: big_edit(50),
    lambda: big_add(50),
]


def build(case: Case, repo: Path) -> None:
    repo.mkdir()
    samples.init_repo(repo)
    for index, tree in enumerate([{**case.good, "test.sh": case.test}, case.bad]):
        for path, content in tree.items():
            target = repo / path
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        samples.commit_all(repo, f"commit {index}", AUTHOR, index)


def measure(case: Case, workdir: Path) -> list[str]:
    """Build `case`, search it with the real command, and return its row of the table."""
    repo = workdir / "repo"
    build(case, repo)
    report = workdir / "report.json"
    started = time.monotonic()
    own_peak, commands_peak = measured(
        repo, ["HEAD~1..HEAD", "-q", "--json", str(report), "--", "sh", "test.sh"]
    )
    wall = time.monotonic() - started
    result = json.loads(report.read_text())
    answer = [(c["path"], c["kind"]) for c in result["culprits"]]
    tests = result["tests_run"]
    own = (result["wall_time"] - result["command_time"]) / tests
    return [
        case.name,
        str(result["hunks_total"]),
        "right" if answer == case.answer else f"WRONG: {answer}",
        str(tests),
        f"{wall:.2f}",
        f"{result['command_time']:.2f}",
        f"{own:.3f}",
        f"{own_peak:.0f}",
        f"{commands_peak:.0f}",
    ]


def measured(repo: Path, args: list[str]) -> tuple[float, float]:
    """Run `ddchange ARGS` in `repo`, in a process of its own that must end with 0: the peak MB
    of that process, and of the largest command it ran."""
    done = subprocess.run([sys.executable, "-c", MEASURED, *args], cwd=repo,
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0 or not done.stdout:
        raise SystemExit(f"ddchange failed in {repo}: {done.stderr.strip()}")
    code, own, commands = json.loads(done.stdout.splitlines()[-1])
    if code:
        raise SystemExit(f"ddchange ended with {code} in {repo}; rerun it there")
    return own, commands


def table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    rows = []
    for make in CASES:
        case = make()
        with tempfile.TemporaryDirectory(prefix="ddchange-hostile-") as tmp:
            rows.append(measure(case, Path(tmp)))
        print(" | ".join(rows[-1]), flush=True)
    body = (
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores. `test s` is the time inside the test "
        "command; `ddchange s/test` is the rest of the wall time per test run (one-off costs "
        "included); `peak MB` is the peak resident set of the ddchange process (VmHWM), `git "
        "peak MB` that of the largest command it ran.\n\n" + table(rows)
    )
    write_section(HEADING, body)


if __name__ == "__main__":
    main()
