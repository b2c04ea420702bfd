"""A test that fails at random: how often the default run ends on the right answer, how often
on a wrong one, and what it costs against the same runs with the test made deterministic.

    .venv/bin/python benchmarks/flaky.py [--runs 100] [--steady RUNS] [--rate 0.25] [--jobs 2]
    # rewrites its section of benchmarks/RESULTS.md

Each run builds a bundled scenario (`two-files` by default) afresh and runs the real command
with the default options; the scenario's own test is wrapped by a script outside the
repository that fails first, at random, in `rate` of its runs (whatever the changes), and
otherwise runs the test. `--steady` runs (as many by default) with the unwrapped test give
the deterministic cost. Per end (exit code, and whether the answer is the scenario's expected
one): how many runs, and the tests they ran.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from faults import answer
from results import write_section

from ddchange import samples

HEADING = "## A test that fails at random (`benchmarks/flaky.py`)"
# Fails at random, in $RATE_PERMILLE of 1000 runs, then runs the test it wraps.
WRAPPER = (
    'n=$(od -An -N2 -tu2 /dev/urandom | tr -d " ")\n'
    '[ $((n % 1000)) -lt "$RATE_PERMILLE" ] && exit 1\n'
    'exec "$@"\n'
)


def one_run(scenario: samples.Scenario, rate: float) -> tuple[str, int]:
    """One default run on a fresh copy of `scenario`, its test failing at random at `rate`
    (0: the test itself): how it ended, and the tests it ran."""
    with tempfile.TemporaryDirectory(prefix="ddchange-flaky-") as tmp:
        repo = samples.build_repo(scenario, Path(tmp) / "repo")
        wrapper = Path(tmp) / "random-failure.sh"
        wrapper.write_text(WRAPPER)
        report = Path(tmp) / "report.json"
        test = ["sh", str(wrapper), *scenario.test] if rate else list(scenario.test)
        argv = [sys.executable, "-m", "ddchange", f"{scenario.good}..{scenario.bad}"]
        argv += ["--json", str(report), "--", *test]
        env = {**os.environ, "RATE_PERMILLE": str(round(rate * 1000))}
        done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
        data = json.loads(report.read_text()) if report.exists() else {}
        tests = int(data.get("tests_run", 0))
        if done.returncode not in (0, 5) or not data:
            return f"exit {done.returncode}", tests
        inside = data.get("first_bad") is not None
        right = samples.matches(scenario, answer(data), inside=inside)
        return f"exit {done.returncode}, {'right' if right else 'WRONG'} answer", tests


def runs(scenario: samples.Scenario, rate: float, count: int, jobs: int) -> list[tuple[str, int]]:
    with ThreadPoolExecutor(jobs) as pool:
        done = []
        for number, ended in enumerate(pool.map(lambda _: one_run(scenario, rate), range(count))):
            done.append(ended)
            print(f"rate {rate}: {number + 1}/{count} {ended}", flush=True)
        return done


def table(ends: list[tuple[str, int]]) -> str:
    lines = ["| how the run ended | runs | tests (median) | tests (max) |", "|---|---|---|---|"]
    for end, number in sorted(Counter(e for e, _ in ends).items()):
        tests = [t for e, t in ends if e == end]
        lines.append(f"| {end} | {number} | {statistics.median(tests):g} | {max(tests)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--steady", type=int, help="runs of the deterministic test (--runs)")
    parser.add_argument("--rate", type=float, default=0.25)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--scenario", default="two-files")
    args = parser.parse_args()
    scenario = samples.load(args.scenario)
    steadies = args.runs if args.steady is None else args.steady
    steady = runs(scenario, 0.0, steadies, args.jobs)
    flaky = runs(scenario, args.rate, args.runs, args.jobs)
    right = sum(e.endswith("right answer") for e, _ in flaky)
    wrong = sum(e.endswith("WRONG answer") for e, _ in flaky)
    mean = statistics.mean(t for _, t in flaky) / statistics.mean(t for _, t in steady)
    body = (
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores: `benchmarks/flaky.py --runs {args.runs} "
        f"--steady {steadies} --rate {args.rate} --jobs {args.jobs} --scenario "
        f"{args.scenario}`.\n\n"
        f"The `{args.scenario}` scenario, each run on a fresh repository with the default "
        f"options. **Deterministic test** ({steadies} runs):\n\n"
        + table(steady)
        + f"\n**The same test failing at random in {args.rate:g} of its runs** (whatever the "
        f"changes; {args.runs} runs): {right} right, {wrong} wrong; tests "
        f"{mean:.2f}× the deterministic runs' on average.\n\n" + table(flaky)
    )
    print(body)
    write_section(HEADING, body)


if __name__ == "__main__":
    main()
