"""Scale: ddchange's own time per test as the repository grows, big diffs, and startup.

    .venv/bin/python benchmarks/scale.py [--sizes 100,5000,50000] [--baseline-tests 3]
    .venv/bin/python benchmarks/scale.py --real-only [--real-runs 3]   # only the real diff
    # rewrites its sections of benchmarks/RESULTS.md (--real-only: the real diff's alone)

- Own time per test: a repository of N files (100 per directory), BAD changes 10 of them, one
  of which the test (`sh test.sh`, a grep) fails on. ddchange runs in this process, and its own
  time per test is the time from one test's start to the next one's, less the first test's
  build and test (from its record): the median over the run. The baseline does what a script
  around `git worktree add` would, per test: a fresh worktree of GOOD, `git apply` of the
  same patch (BAD's whole change), the test, `git worktree remove`; its own time is the wall
  time less the test's. ddchange's one-off work before its first test (reading the diff, the
  scratch tree's checkout) is shown apart.
- 20,000 hunks (hostile.py's 400 files of 50 hunks): the time from the start of the process
  to the end of its first test (reading and parsing the diff, grouping, the scratch tree, the
  test), and the process's peak memory, in a process of its own.
- A 50 MB file edited (hostile.py's case): the whole run's peak memory, against the file size:
  ddchange's own process, and apart the largest command it ran (git's diff of the two blobs),
  beside a plain `git diff HEAD~1 HEAD` of the same commits.
- Ctrl-C: 3,000 changed files and a test of 0.2 s, SIGINT after 8 tests: the seconds until
  ddchange ends (its short summary and the command that resumes printed) and its lines.
- Startup: the median wall time of `ddchange --help` and of `ddchange log` (in a small
  repository) over 15 runs each, beside what no Python CLI can go below: the interpreter
  alone (`python -c pass`), and with the CLI library (`python -c 'import click'`). The four
  commands run in turn, so that the machine's drift falls on all of them alike.
- A real diff (a section of its own): anyio 3.7.1 -> 4.0.0, the two sdists from PyPI (pinned,
  sha256 checked; real_cases.py) committed as `good` and `bad`, 521 hunks in 83 files, 52 of
  them Python. Tests of 0.2 s (`sleep 0.2`, then grep) fail on one line that BAD adds, or only
  on two lines in two files. Each runs `ddchange good..bad -q` in a process of its own, from
  a fresh journal, `--real-runs` times; the row is the run with the median bookkeeping: the
  share of the process's wall time that is not inside the tests (the sum of the durations
  its records hold). "changes" are the units searched (lines, at the default granularity).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import real_cases
from hostile import OWN_PEAK, Case, big_edit, build, many_hunks, measured
from results import write_section

from ddchange import model, samples, session

HEADING = "## Scale (`benchmarks/scale.py`)"
REAL_HEADING = "## Scale (`benchmarks/scale.py`): a real diff"
CHANGED = 10  # files BAD changes; the test fails on the first
REAL = real_cases.Case(
    "anyio-3.7.1-4.0.0", Path(__file__).resolve().parent, "anyio", "3.7.1", "4.0.0",
    "44a3c9aba0f5defa43261a8b3efb97891f2bd7d804e0e1f56419befa1adfc780",
    "f7ed51751b2c2add651e5747c891b47e26d2a21be5d32d9311dfe9692f3e5d7a",
    source="https://pypi.org/project/anyio/4.0.0/",
)  # fmt: skip
# (path, a line that BAD adds there and GOOD has nowhere)
LIMITER = ("src/anyio/_core/_synchronization.py",
           "return get_async_backend().create_capacity_limiter(total_tokens)")  # fmt: skip
JUNCTION = ("src/anyio/_core/_fileio.py", "async def is_junction(self) -> bool:")
REAL_TESTS = {"one line": [LIMITER], "two lines in two files": [LIMITER, JUNCTION]}
COLUMNS_REAL = ["test fails on", "hunks", "files", "changes", "tests", "wall s", "tests' own s",
                "bookkeeping", "answer"]  # fmt: skip


def many_files(count: int) -> Case:
    def text(number: int) -> str:
        return "".join(f"file {number} line {k}\n" for k in range(20))

    good = {f"d{n // 100}/f{n}.txt": text(n) for n in range(count)}
    step = count // CHANGED
    bad: dict[str, str | None] = {
        f"d{n // 100}/f{n}.txt": text(n).replace("line 10\n", "line ten\n")
        for n in range(0, step * CHANGED, step)
    }
    culprit = "d0/f0.txt"
    return Case(
        f"{count} files", good, bad, f"grep -q 'line ten' {culprit} && exit 1; exit 0\n",
        [(culprit, "text")],
    )  # fmt: skip


def own_per_test(repo: Path) -> tuple[float, int, float]:
    """ddchange's own ms per test (median) on `repo`, the tests it ran, and the seconds
    before the first test (reading the diff, making the scratch tree)."""
    starts: list[float] = []
    begun = time.monotonic()

    def listen(event: model.Progress | model.Running) -> None:
        if isinstance(event, model.Running):
            starts.append(event.started)

    request = model.Request(repo=repo, good="HEAD~1", bad="HEAD", test=("sh", "test.sh"))
    result = session.run(request, listen)
    durations = [record.duration for record in result.log]
    own = [b - a - d for a, b, d in zip(starts, starts[1:], durations, strict=False)]
    return statistics.median(own) * 1000, result.tests_run, starts[0] - begun


def baseline_per_test(repo: Path, tests: int) -> float:
    """A fresh worktree, `git apply`, the test and the removal, per test: own ms (median)."""
    patch = subprocess.run(
        ["git", "diff", "--binary", "HEAD~1", "HEAD"], cwd=repo, capture_output=True, check=True
    ).stdout
    own = []
    for number in range(tests):
        place = repo.parent / f"baseline-{number}"
        started = time.monotonic()
        git = ["git", "-C", str(repo)]
        subprocess.run([*git, "worktree", "add", "-q", "--detach", str(place), "HEAD~1"],
                       check=True, capture_output=True)  # fmt: skip
        subprocess.run(["git", "apply"], cwd=place, input=patch, check=True)
        tested = time.monotonic()
        subprocess.run(["sh", "test.sh"], cwd=place, capture_output=True)
        test_time = time.monotonic() - tested
        subprocess.run([*git, "worktree", "remove", "--force", str(place)], check=True)
        own.append(time.monotonic() - started - test_time)
    return statistics.median(own) * 1000


PLAIN_DIFF = """
import resource, subprocess
subprocess.run(["git", "diff", "HEAD~1", "HEAD"], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""

FIRST_TEST = f"""
import json, sys, time
started = time.monotonic()
from ddchange import model, session
class Stop(Exception):
    pass
def listen(event):
    if isinstance(event, model.Progress):
        raise Stop
request = model.Request(repo=sys.argv[1], good="HEAD~1", bad="HEAD", test=("sh", "test.sh"))
try:
    session.run(request, listen)
except Stop:
    pass
{OWN_PEAK}
print(json.dumps([time.monotonic() - started, own_peak]))
"""


def first_test(repo: Path) -> tuple[float, float]:
    """Seconds from a fresh process's start to its first test's end, and its peak MB."""
    done = subprocess.run([sys.executable, "-c", FIRST_TEST, str(repo)], capture_output=True,
                          text=True, check=True)  # fmt: skip
    seconds, megabytes = json.loads(done.stdout.splitlines()[-1])
    return seconds, megabytes


def whole_run_peaks(repo: Path) -> tuple[float, float, float]:
    """The peak MB of a whole `ddchange` run on `repo`, in a process of its own: of that
    process (ddchange's own work), and of the largest command it ran (git's, here); and beside
    them the peak of a plain `git diff HEAD~1 HEAD` there, started from a small process."""
    own, commands = measured(repo, ["HEAD~1..HEAD", "-q", "--", "sh", "test.sh"])
    plain = subprocess.run([sys.executable, "-c", PLAIN_DIFF], cwd=repo, capture_output=True,
                           text=True, check=True)  # fmt: skip
    return own, commands, float(plain.stdout)


def interrupted(repo: Path, after: int = 8) -> tuple[float, int]:
    """Seconds from SIGINT (sent after `after` tests) to the end of ddchange, and the lines it
    printed (the short summary and the command that resumes)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ddchange", "HEAD~1..HEAD", "--", "sh", "test.sh"],
        cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    seen = 0
    while seen < after and (line := process.stderr.readline()):
        seen += line.startswith("test")
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate()
    return time.monotonic() - sent, len(out.splitlines())


def slow_many_files(count: int) -> Case:
    """`count` files, every one changed; the test takes 0.2 s and fails on one of them."""
    case = many_files(count)
    bad = {path: text.replace("line 10\n", "line ten\n") for path, text in case.good.items()}
    test = f"sleep 0.2\n{case.test}"
    return Case(f"{count} files, all changed", case.good, bad, test, case.answer)


def real_test(culprits: list[tuple[str, str]]) -> str:
    """A test of 0.2 s that fails (exit 1) when every one of `culprits` is there."""
    checks = "".join(f"grep -qF {shlex.quote(line)} {path} || exit 0\n" for path, line in culprits)
    return f"sleep 0.2\n{checks}exit 1\n"


def real_run(repo: Path, test: Path) -> tuple[float, dict[str, Any]]:
    """One `ddchange good..bad` in a process of its own, from a fresh journal: its wall time
    and its JSON report."""
    ddchange = [sys.executable, "-m", "ddchange"]
    subprocess.run([*ddchange, "reset"], cwd=repo, capture_output=True, check=True)
    report = test.with_suffix(".json")
    started = time.monotonic()
    subprocess.run([*ddchange, "good..bad", "-q", "--json", str(report), "--", "sh", str(test)],
                   cwd=repo, capture_output=True, check=True)  # fmt: skip
    return time.monotonic() - started, json.loads(report.read_text())


def tests_own(report: dict[str, Any]) -> float:
    """The seconds inside the build and test commands, by the records of the run."""
    return sum(record["duration"] for record in report["log"])


def own_share(run: tuple[float, dict[str, Any]]) -> float:
    """The share of the wall time that is not inside the tests."""
    wall, report = run
    return (wall - tests_own(report)) / wall


def real_rows(work: Path, runs: int) -> list[list[str]]:
    """The real diff (see the docstring) searched with each of REAL_TESTS: a row each."""
    work.mkdir()
    repo = real_cases.make_repo(REAL, work)
    patch = real_cases.git_bytes(repo, "diff", "-M", "good", "bad").splitlines()
    names = real_cases.git_bytes(repo, "diff", "-M", "--name-only", "-z", "good", "bad")
    hunks, files = sum(line.startswith(b"@@ ") for line in patch), names.count(b"\0")
    rows = []
    for name, culprits in REAL_TESTS.items():
        test = work / f"{name.replace(' ', '-')}.sh"
        test.write_text(real_test(culprits))
        measured = sorted((real_run(repo, test) for _ in range(runs)), key=own_share)
        wall, report = measured[len(measured) // 2]
        # One path per change of the answer: at block granularity a change is a block, whose
        # line changes the report lists one by one, each with its block's number.
        blocks = {c.get("block", c["id"]): c["path"] for c in report["culprits"]}
        found = sorted(blocks.values())
        right = found == sorted(path for path, _ in culprits)
        rows.append([
            name, str(hunks), str(files), str(report["hunks_total"]), str(report["tests_run"]),
            f"{wall:.2f}", f"{tests_own(report):.2f}", f"{own_share((wall, report)):.1%}",
            "right" if right else f"WRONG: {found}",
        ])  # fmt: skip
        print(" | ".join(rows[-1]), flush=True)
    return rows


STARTUP_RUNS = 15


def startup(cwd: Path) -> list[list[str]]:
    """Rows: each command and the median of its wall times, over STARTUP_RUNS rounds."""
    commands = {
        "`python -c pass` (the interpreter alone)": ["-c", "pass"],
        "`python -c 'import click'` (and the CLI library)": ["-c", "import click"],
        "`ddchange --help`": ["-m", "ddchange", "--help"],
        "`ddchange log`": ["-m", "ddchange", "log"],
    }
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(STARTUP_RUNS):
        for label, args in commands.items():
            started = time.monotonic()
            subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True)
            times[label].append(time.monotonic() - started)
    return [
        [f"{label}, median of {STARTUP_RUNS}", f"{statistics.median(runs) * 1000:.0f} ms"]
        for label, runs in times.items()
    ]


def table(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def machine() -> str:
    """Where the figures were measured."""
    return (
        f"{platform.machine()}, Python {platform.python_version()}, {platform.system()}, "
        f"{os.cpu_count()} cores, the temporary directory on this machine's disk"
    )


def real_body(runs: int) -> str:
    """The real diff's section."""
    with tempfile.TemporaryDirectory(prefix="ddchange-scale-") as tmp:
        rows = real_rows(Path(tmp) / "real", runs)
    return (
        f"On {machine()}: `benchmarks/scale.py --real-only --real-runs {runs}` (the run with "
        f"the median bookkeeping of {runs}). {REAL.package} {REAL.good} → {REAL.bad} from PyPI; "
        "see the script's docstring for what each figure is.\n\n" + table(COLUMNS_REAL, rows)
    )


def scale_body(sizes_given: str, baseline_tests: int) -> str:
    """The main section: every figure but the real diff's."""
    sizes = [int(size) for size in sizes_given.split(",")]
    per_test = []
    with tempfile.TemporaryDirectory(prefix="ddchange-scale-") as tmp:
        for size in sizes:
            repo = Path(tmp) / f"files-{size}"
            build(many_files(size), repo)
            own, tests, setup = own_per_test(repo)
            base = baseline_per_test(repo, baseline_tests)
            per_test.append([f"{size:,}", f"{setup:.2f}", str(tests), f"{own:.0f}",
                             f"{base:.0f}", f"{base / own:.0f}×"])  # fmt: skip
            print(" | ".join(per_test[-1]), flush=True)
        hunks = Path(tmp) / "hunks"
        build(many_hunks(400, 50), hunks)
        seconds, megabytes = first_test(hunks)
        big = Path(tmp) / "big"
        build(big_edit(50), big)
        own_peak, git_peak, plain_peak = whole_run_peaks(big)
        stopped = Path(tmp) / "stopped"
        build(slow_many_files(3000), stopped)
        stop_seconds, stop_lines = interrupted(stopped)
        small = samples.build_repo(samples.load("two-files"), Path(tmp) / "small")
        started = startup(small)
    return (
        f"One run on {machine()}: `benchmarks/scale.py --sizes {sizes_given} --baseline-tests "
        f"{baseline_tests}`. See the script's docstring for what each figure is.\n\n"
        + table(
            [
                "files",
                "ddchange s before the first test",
                "tests",
                "ddchange own ms/test (median)",
                "fresh worktree + git apply, own ms/test",
                "ratio",
            ],
            per_test,
        )  # fmt: skip
        + "\n"
        + table(
            ["case", "figure"],
            [
                ["20,000 hunks: start to the end of the first test", f"{seconds:.2f} s"],
                ["20,000 hunks: peak memory until then", f"{megabytes:.0f} MB"],
                [
                    "50 MB file edited: peak memory of ddchange's process",
                    f"{own_peak:.0f} MB ({own_peak / 50:.1f}×)",
                ],
                [
                    "50 MB file edited: peak memory of the largest command it ran (git's diff)",
                    f"{git_peak:.0f} MB ({git_peak / 50:.1f}×)",
                ],
                [
                    "50 MB file edited: peak memory of a plain `git diff HEAD~1 HEAD`",
                    f"{plain_peak:.0f} MB ({plain_peak / 50:.1f}×)",
                ],
                ["3,000 files changed: Ctrl-C after 8 tests to the end", f"{stop_seconds:.2f} s"],
                ["3,000 files changed: lines printed after Ctrl-C", str(stop_lines)],
                *started,
            ],
        )
    )


def main() -> None:
    # Started in the background, this script ignores SIGINT, and so would the runs it starts
    # (an ignored signal stays ignored across exec): they must get it as at a terminal.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,5000,50000")
    parser.add_argument("--baseline-tests", type=int, default=3)
    parser.add_argument("--real-only", action="store_true", help="only the real diff's section")
    parser.add_argument("--real-runs", type=int, default=3, help="runs of each real test")
    args = parser.parse_args()
    if not args.real_only:
        body = scale_body(args.sizes, args.baseline_tests)
        print(body)
        write_section(HEADING, body)
    body = real_body(args.real_runs)
    print(body)
    write_section(REAL_HEADING, body)


if __name__ == "__main__":
    main()
