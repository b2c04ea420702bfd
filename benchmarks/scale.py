"""Scale: ddchange's own time per test as the repository grows, big diffs, and startup.

    .venv/bin/python benchmarks/scale.py [--sizes 100,5000,50000] [--baseline-tests 3]
    # rewrites its section of benchmarks/RESULTS.md

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
  repository) over 15 runs each.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hostile import OWN_PEAK, Case, big_edit, build, many_hunks, measured
from results import write_section

from ddchange import model, samples, session

HEADING = "## Scale (`benchmarks/scale.py`)"
CHANGED = 10  # files BAD changes; the test fails on the first


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


def startup(args: list[str], cwd: Path, runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "ddchange", *args], cwd=cwd, capture_output=True)
        times.append(time.monotonic() - started)
    return statistics.median(times) * 1000


def table(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,5000,50000")
    parser.add_argument("--baseline-tests", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    per_test = []
    with tempfile.TemporaryDirectory(prefix="ddchange-scale-") as tmp:
        for size in sizes:
            repo = Path(tmp) / f"files-{size}"
            build(many_files(size), repo)
            own, tests, setup = own_per_test(repo)
            base = baseline_per_test(repo, args.baseline_tests)
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
        help_ms, log_ms = startup(["--help"], small), startup(["log"], small)
    body = (
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores, the temporary directory on this machine's "
        f"disk: `benchmarks/scale.py --sizes {args.sizes} --baseline-tests "
        f"{args.baseline_tests}`. See the script's docstring for what each figure is.\n\n"
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
                ["`ddchange --help`, median of 15", f"{help_ms:.0f} ms"],
                ["`ddchange log`, median of 15", f"{log_ms:.0f} ms"],
            ],
        )
    )
    print(body)
    write_section(HEADING, body)


if __name__ == "__main__":
    main()
