"""Faults: random kills and resume, a test that fails at random, and the fault-injection suite.

    .venv/bin/python benchmarks/faults.py [--kills 60] [--flaky 20] [--seed 1]
    # rewrites its section of benchmarks/RESULTS.md

- Kill trials: the c-make sample repository, with the user's own work in it (an unstaged edit,
  an untracked file, a stash entry), is searched by the real command, which gets SIGINT,
  SIGTERM or SIGKILL (chosen at random) after a random number of tests; then the same command
  runs again to the end. Per trial: whether the user's repository is byte-identical (every file
  of the work tree and of .git, ddchange's journal directory aside), whether the answer is the
  expected one, how many configurations were started (build and test) in the killed and the
  resumed run together beyond an uninterrupted run's (the build counts its starts in a file, so
  one that the kill cut off counts as repeated), and scratch trees or processes left behind.
- Flaky test: BAD's broken line makes the test fail, and so does chance, in 1 run of 4 whatever
  the change. Each run uses the default options (no --retries) and a fresh repository; the
  exits are counted: 5 (found, though the test fails at random) or 0 with the right answer
  are the right ends, 4 (flaky, no answer) an honest one, 0 or 5 with a wrong answer the
  worst. (benchmarks/flaky.py measures this at length, on a sample scenario.)
- Fault suite: tests/test_faults.py, run by pytest here, one row per case.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hostile import Case, build
from results import write_section

from ddchange import samples

HEADING = "## Faults (`benchmarks/faults.py`)"
HERE = Path(__file__).resolve().parent
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
KILL_SAMPLE = "c-make"
MAX_DELAY = 0.2  # seconds after a test's progress line: about one build and test of c-make
FLAKY_TEST = (
    "grep -q broken data.txt && exit 1\n"
    # chance: one byte of /dev/urandom below 64, p = 0.25
    '[ "$(od -An -N1 -tu1 /dev/urandom | tr -d " ")" -lt 64 ] && exit 1\n'
    "exit 0\n"
)


def flaky_case() -> Case:
    files = {f"f{n}.txt": f"{n}\n" for n in range(6)}
    return Case(
        "flaky",
        {"data.txt": "ok\n", **files},
        {"data.txt": "broken\n", **{k: v + "more\n" for k, v in files.items()}},
        FLAKY_TEST,
        [("data.txt", "text")],
    )


# -- the user's repository ----------------------------------------------------------------------


def snapshot(repo: Path) -> dict[str, tuple[int, bytes]]:
    """Mode and bytes (a link's target) of every file under `repo`, .git included, except the
    journal's directory, which is ddchange's to write."""
    state = {}
    for path in sorted(repo.rglob("*")):
        relative = path.relative_to(repo).as_posix()
        if relative.startswith(".git/ddchange"):
            continue
        info = path.lstat()
        if path.is_symlink():
            state[relative] = (info.st_mode, os.readlink(path).encode())
        elif path.is_file():
            state[relative] = (info.st_mode, path.read_bytes())
        else:
            state[relative] = (info.st_mode, b"")
    return state


def user_work(repo: Path) -> None:
    """A stash entry, an unstaged edit and an untracked file: what a user's checkout holds."""
    tracked = sorted(p for p in repo.iterdir() if p.is_file())
    tracked[0].write_text("# the user's stashed edit\n")
    subprocess.run(["git", "stash", "push", "-q", "-m", "mine"], cwd=repo, check=True)
    with tracked[-1].open("a") as file:
        file.write("# the user's unstaged edit\n")
    (repo / "notes (mine).txt").write_text("untracked\n")


# -- running ddchange ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Ended:
    code: int
    report: dict[str, object]


def command(args: list[str], report: Path, test: list[str]) -> list[str]:
    return [sys.executable, "-m", "ddchange", *args, "--json", str(report), "--", *test]


def finish(argv: list[str], repo: Path, env: Mapping[str, str], report: Path) -> Ended:
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
    data = json.loads(report.read_text()) if report.exists() else {}
    return Ended(done.returncode, data)


# A run of one configuration, as the kill trials count it: each start of its build (or of its
# test, when there is no build) is written to a file, so that a configuration the kill cut off
# and the resumed run started again counts as repeated too.
COUNT = 'echo x >> "$DDCHANGE_BENCH_COUNT"'


def counted(
    scenario: samples.Scenario, tmp: Path, env: dict[str, str]
) -> tuple[list[str], list[str], Path]:
    """The options and the test command of `scenario`, counting starts, and the count file."""
    count = tmp / "starts"
    env["DDCHANGE_BENCH_COUNT"] = str(count)
    args = [f"{scenario.good}..{scenario.bad}"]
    test = list(scenario.test)
    if scenario.build:
        args += ["--build", f"{COUNT}; {scenario.build}"]
    else:
        test = ["sh", "-c", f'{COUNT}; exec "$@"', "sh", *test]
    if scenario.timeout:
        args += ["--timeout", str(scenario.timeout)]
    return args, test, count


def starts(count: Path) -> int:
    return len(count.read_text().splitlines()) if count.exists() else 0


def inside(report: Mapping[str, object]) -> bool:
    """Whether a report's search went inside the history (its base is not GOOD)."""
    return report.get("base", report.get("good")) != report.get("good")


def answer(report: Mapping[str, object], field: str = "diff") -> list[tuple[str, str]]:
    """The culprits' paths with their `field`: "diff" (what samples.matches reads) or "kind"."""
    culprits = report.get("culprits")
    assert isinstance(culprits, list)
    if field == "diff":
        return samples.changes((c["path"], c["diff"], c["block"]) for c in culprits)
    return [(c["path"], c[field]) for c in culprits]


def kill_after(
    argv: list[str], repo: Path, env: Mapping[str, str], point: tuple[int, float], sig: int
) -> int:
    """Start ddchange, send `sig` `delay` seconds after `tests` tests have been reported
    (`point`), most often while the next one runs; its exit status."""
    tests, delay = point
    process = subprocess.Popen(
        argv, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    seen = 0
    while seen < tests:
        line = process.stderr.readline()
        if not line:
            break  # ended before: the trial still resumes a finished run
        seen += line.startswith("test")
    time.sleep(delay)
    process.send_signal(sig)
    process.stderr.read()
    return process.wait()


def leftovers(temporary: Path) -> tuple[int, int]:
    """Scratch trees under `temporary`, and processes whose working directory is in one."""
    trees = [str(p) for p in temporary.glob("ddchange-scratch-*")]
    processes = 0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "cwd").startswith(tuple(trees)):
                processes += 1
        except OSError:
            continue
    return len(trees), processes


@contextmanager
def private_tmp() -> Iterator[tuple[Path, dict[str, str]]]:
    """A temporary directory that is also ddchange's TMPDIR, so what is left there is ours."""
    with tempfile.TemporaryDirectory(prefix="ddchange-faults-") as tmp:
        temporary = Path(tmp) / "tmp"
        temporary.mkdir()
        yield Path(tmp), {**os.environ, "TMPDIR": str(temporary)}


# -- kill trials --------------------------------------------------------------------------------


@dataclass
class Trial:
    signal: str
    after: int  # tests reported before the signal
    exit_code: int  # of the killed run
    intact: bool  # the user's repository, after the kill and after the resumed run
    right: bool  # the resumed run's exit 0 and answer
    repeated: (
        int  # starts of the test, killed and resumed run together, beyond an uninterrupted run's
    )
    trees: int  # scratch trees left after the resumed run
    processes: int  # processes left in them


def uninterrupted(scenario: samples.Scenario) -> tuple[int, int]:
    """Tests reported, and starts of the test, in one run that nobody stops."""
    with private_tmp() as (tmp, env):
        repo = samples.build_repo(scenario, tmp / "repo")
        report = tmp / "report.json"
        args, test, count = counted(scenario, tmp, env)
        ended = finish(command(args, report, test), repo, env, report)
        if ended.code != 0 or not samples.matches(
            scenario, answer(ended.report), inside=inside(ended.report)
        ):
            raise SystemExit(f"{scenario.name}: the uninterrupted run failed")
        tests = ended.report["tests_run"]
        assert isinstance(tests, int)
        return tests, starts(count)


def kill_trial(
    scenario: samples.Scenario, sig: signal.Signals, point: tuple[int, float], base: int
) -> Trial:
    with private_tmp() as (tmp, env):
        repo = samples.build_repo(scenario, tmp / "repo")
        user_work(repo)
        before = snapshot(repo)
        report = tmp / "report.json"
        args, test, count = counted(scenario, tmp, env)
        argv = command(args, report, test)
        status = kill_after(argv, repo, env, point, sig)
        intact = snapshot(repo) == before
        ended = finish(argv, repo, env, report)
        intact = intact and snapshot(repo) == before
        trees, processes = leftovers(tmp / "tmp")
        return Trial(
            sig.name,
            point[0],
            status,
            intact,
            ended.code == 0
            and samples.matches(scenario, answer(ended.report), inside=inside(ended.report)),
            starts(count) - base,
            trees,
            processes,
        )


def kill_rows(trials: list[Trial]) -> list[list[str]]:
    rows = []
    for name in [s.name for s in SIGNALS] + ["all"]:
        mine = [t for t in trials if name in (t.signal, "all")]
        if not mine:
            continue
        # SIGINT and SIGTERM that came while the run ran (exit 0: it had ended already)
        clean = [t for t in mine if t.signal != "SIGKILL" and t.exit_code != 0]
        rows.append(
            [
                name,
                str(len(mine)),
                f"{min(t.after for t in mine)}–{max(t.after for t in mine)}",
                str(sum(t.exit_code == 0 for t in mine)),
                f"{sum(t.exit_code == 130 for t in clean)}/{len(clean)}" if clean else "—",
                f"{sum(t.intact for t in mine)}/{len(mine)}",
                f"{sum(t.right for t in mine)}/{len(mine)}",
                str(max(t.repeated for t in mine)),
                str(sum(t.repeated for t in mine)),
                str(sum(t.trees for t in mine)),
                str(sum(t.processes for t in mine)),
            ]
        )
    return rows


KILL_COLUMNS = (
    "signal",
    "trials",
    "after tests",
    "ended before the signal",
    "exit 130",
    "repository identical",
    "resumed: right answer",
    "repeated max",
    "repeated total",
    "scratch trees left",
    "processes left",
)


# -- the flaky test -----------------------------------------------------------------------------


def flaky_run(case: Case) -> str:
    """One run with default options on a fresh repository: how it ended."""
    with private_tmp() as (tmp, env):
        repo = tmp / "repo"
        build(case, repo)
        before = snapshot(repo)
        report = tmp / "report.json"
        ended = finish(command(["HEAD~1..HEAD"], report, ["sh", "test.sh"]), repo, env, report)
        if snapshot(repo) != before:
            return "repository changed"
        if ended.code == 4:
            return "exit 4, flaky"
        if ended.code in (0, 5):
            right = answer(ended.report, "kind") == case.answer
            return f"exit {ended.code}, {'right' if right else 'WRONG'} answer"
        return f"exit {ended.code}"


# -- the fault suite ----------------------------------------------------------------------------


def fault_suite(tmp: Path) -> list[list[str]]:
    """Run tests/test_faults.py; one row per case: its name, result and seconds."""
    junit = tmp / "faults.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
        + [str(HERE.parent / "tests" / "test_faults.py")],
        cwd=HERE.parent,
        capture_output=True,
    )
    rows = []
    for case in ElementTree.parse(junit).iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped") is not None
        result = "FAILED" if failed else "skipped" if skipped else "passed"
        rows.append([case.get("name", "?"), result, f"{float(case.get('time', 0)):.1f}"])
    return rows


def table(columns: tuple[str, ...] | list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    # Started in the background, this script ignores SIGINT, and so would the runs it starts
    # (an ignored signal stays ignored across exec): they must get it as at a terminal.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=60)
    parser.add_argument("--flaky", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    scenario = samples.load(KILL_SAMPLE)
    tests, base = uninterrupted(scenario)
    trials = []
    for number in range(args.kills):
        point = (rng.randint(1, tests), rng.uniform(0, MAX_DELAY))
        trials.append(kill_trial(scenario, rng.choice(SIGNALS), point, base))
        print(f"kill {number + 1}/{args.kills}: {trials[-1]}", flush=True)
    ends: Counter[str] = Counter()
    for number in range(args.flaky):
        ends[flaky_run(flaky_case())] += 1
        print(f"flaky {number + 1}/{args.flaky}: {dict(ends)}", flush=True)
    with tempfile.TemporaryDirectory(prefix="ddchange-faults-") as tmp:
        suite = fault_suite(Path(tmp))
    passed = sum(row[1] == "passed" for row in suite)
    body = (
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores: `benchmarks/faults.py --kills "
        f"{args.kills} --flaky {args.flaky} --seed {args.seed}`.\n\n"
        f"**Kill trials.** The `{KILL_SAMPLE}` sample ({tests} tests uninterrupted), with a "
        "stash entry, an unstaged edit and an untracked file of the user's, killed after a "
        f"random number of tests and a random delay of up to {MAX_DELAY} s after that test's "
        "line, then the same command again. `repository identical`: every "
        "file of the work tree and of .git (the journal's directory aside) after the kill and "
        "after the resumed run; `repeated`: configurations started (build and test) in the killed "
        "and the resumed run together beyond an uninterrupted run's (one that the kill cut off "
        "counts); "
        "`exit 130`: SIGINT and SIGTERM that came while the run ran end in an orderly stop "
        "(a run can end before the signal comes: `ended before the signal`).\n\n"
        + table(KILL_COLUMNS, kill_rows(trials))
        + f"\n**Flaky test.** {args.flaky} runs with the default options, each on a fresh "
        "repository, of a test that fails on BAD's broken line and, whatever the change, in "
        "1 run of 4 (p = 0.25).\n\n"
        + table(["how the run ended", "runs"], [[k, str(v)] for k, v in sorted(ends.items())])
        + f"\n**Fault suite** (`tests/test_faults.py`, {passed} of {len(suite)} passed): each "
        "case checks that the user's repository is byte-identical and that the run ends in the "
        "right answer or one clear line.\n\n" + table(["case", "result", "s"], suite)
    )
    print(body)
    write_section(HEADING, body)


if __name__ == "__main__":
    main()
