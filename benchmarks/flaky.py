"""A test that fails at random: how often the default run ends on the right answer, how often
on a wrong one, and what it costs against the same runs with the test made deterministic.

    .venv/bin/python benchmarks/flaky.py [--runs 100] [--steady RUNS] [--rate 0.25] [--jobs 2]
    .venv/bin/python benchmarks/flaky.py --bisect [--runs 100] ...   # git bisect run instead
    .venv/bin/python benchmarks/flaky.py --triage [--runs 100] ...   # a whole-suite triage
    .venv/bin/python benchmarks/flaky.py --triage --keep DIR ...    # and keep the wrong ones
    # each rewrites its own section of benchmarks/RESULTS.md

Each run builds a bundled scenario (`two-files` by default) afresh and runs the real command
with the default options; the scenario's own test is wrapped by a script outside the
repository that fails first, at random, in `rate` of its runs (whatever the changes), and
otherwise runs the test. `--steady` runs (as many by default) with the unwrapped test give
the deterministic cost. Per end (exit code, and whether the answer is the scenario's expected
one): how many runs, and the tests they ran.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from faults import answer
from results import write_section

from ddchange import git, samples, suite
from ddchange.cli.outputs import exit_code
from ddchange.report import suite as suite_report
from ddchange.runs import journal_path

HEADING = "## A test that fails at random (`benchmarks/flaky.py`)"
TRIAGE_HEADING = (
    "## A test that fails at random in a whole-suite triage (`benchmarks/flaky.py --triage`)"
)
BISECT_HEADING = "## git bisect run on a test that fails at random (`benchmarks/flaky.py --bisect`)"
# Fails at random, in $RATE_PERMILLE of 1000 runs, then runs the test it wraps.
WRAPPER = (
    'n=$(od -An -N2 -tu2 /dev/urandom | tr -d " ")\n'
    '[ $((n % 1000)) -lt "$RATE_PERMILLE" ] && exit 1\n'
    'exec "$@"\n'
)


# Runs the suite, then fails the test named by $FLAKY_TEST in $FLAKY_RATE of the runs where it
# passed: a <failure> of its own in the JUnit report, and exit 1.
TRIAGE_WRAPPER = """\
import os, random, subprocess, sys, xml.etree.ElementTree as ET
code = subprocess.run(sys.argv[1:]).returncode
if os.path.exists("report.xml"):
    tree = ET.parse("report.xml")
    for case in tree.iter("testcase"):
        name = case.get("classname", "") + "." + case.get("name", "")
        if name == os.environ["FLAKY_TEST"] and not len(case):
            if random.random() < float(os.environ["FLAKY_RATE"]):
                failure = ET.SubElement(case, "failure", message="timed out", type="TimeoutError")
                failure.text = "TimeoutError: timed out (at random)"
                code = code or 1
    tree.write("report.xml")
sys.exit(code)
"""


Ends = list[tuple[str, int]]  # how each run ended, with the tests it ran


def one_triage(
    scenario: samples.Scenario, test: str, rate: float, keep: str | None
) -> tuple[str, int]:
    """One default triage of a fresh copy of `scenario`'s suite, `test` failing at random at
    `rate`: how it ended (its exit code; for an answer, whether the causes are right), and the
    tests it ran. With `keep`, a run with wrong causes leaves its report (text and JSON) and
    its journal in a directory of its own there, to be read run by run."""
    with tempfile.TemporaryDirectory(prefix="ddchange-flaky-") as tmp:
        repo = samples.build_repo(scenario, Path(tmp) / "repo")
        wrapper = Path(tmp) / "random-failure.py"
        wrapper.write_text(TRIAGE_WRAPPER)
        os.environ.update(FLAKY_TEST=test, FLAKY_RATE=str(rate))
        request = samples.request(scenario, repo)
        wrapped = ("python3", str(wrapper), *scenario.test)
        result = suite.run(dataclasses.replace(request, test=wrapped))
        code = exit_code(result.outcome, disagreed=result.disagreed)
        if code not in (0, 5):
            return f"exit {code}", result.tests_run
        right = samples.causes_match(scenario, result)
        if keep is not None and not right:
            kept = Path(tempfile.mkdtemp(prefix=f"exit{code}-", dir=keep))
            (kept / "report.txt").write_text(suite_report.render(result))
            (kept / "report.json").write_text(suite_report.render_json(result))
            shutil.copy(journal_path(git.open_repo(repo)), kept / "journal.sqlite")
        return f"exit {code}, {'right' if right else 'WRONG'} causes", result.tests_run


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


def one_bisect(scenario: samples.Scenario, rate: float) -> tuple[str, int]:
    """`git bisect run` on a fresh copy of `scenario`, its test failing at random at `rate`:
    the commit it names ("" when it names none), and the runs of the test it made."""
    with tempfile.TemporaryDirectory(prefix="ddchange-flaky-") as tmp:
        repo = samples.build_repo(scenario, Path(tmp) / "repo")
        wrapper, count = Path(tmp) / "random-failure.sh", Path(tmp) / "count"
        wrapper.write_text(f'echo x >> "{count}"\n' + WRAPPER)
        env = {**os.environ, "RATE_PERMILLE": str(round(rate * 1000))}

        def git(*args: str) -> str:
            done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
            return done.stdout

        git("bisect", "start", scenario.bad, scenario.good)
        said = git("bisect", "run", "sh", str(wrapper), *scenario.test)
        named = next((line.split()[0] for line in said.splitlines()
                      if line.endswith("is the first bad commit")), "")  # fmt: skip
        steps = len(count.read_text().splitlines()) if count.exists() else 0
        return named, steps


def runs(scenario: samples.Scenario, rate: float, count: int, jobs: int) -> Ends:
    with ThreadPoolExecutor(jobs) as pool:
        return shown(pool.map(lambda _: one_run(scenario, rate), range(count)), rate, count)


def triages(
    scenario: samples.Scenario, test: str, rate: float, count: int, jobs: int, keep: str | None
) -> Ends:
    with ProcessPoolExecutor(jobs) as pool:
        ends = pool.map(one_triage, *zip(*[(scenario, test, rate, keep)] * count, strict=True))
        return shown(ends, rate, count)


def shown(ends: Iterable[tuple[str, int]], rate: float, count: int) -> Ends:
    """Each run's end as it comes, printed."""
    done = []
    for number, ended in enumerate(ends):
        done.append(ended)
        print(f"rate {rate}: {number + 1}/{count} {ended}", flush=True)
    return done


@dataclass(frozen=True, kw_only=True)
class Tally:
    steady: Ends
    flaky: Ends
    right: int  # of the flaky runs
    wrong: int
    mean: float  # the flaky runs' mean tests over the steady runs'


def tally(measure: Callable[[float, int], Ends], args: argparse.Namespace, what: str) -> Tally:
    """`--steady` runs of `measure` at rate 0, then `--runs` at `--rate`: how many of those
    ended right and how many WRONG (by their `what`: "answer" or "causes"), and their tests."""
    steady = measure(0.0, args.runs if args.steady is None else args.steady)
    flaky = measure(args.rate, args.runs)
    return Tally(
        steady=steady,
        flaky=flaky,
        right=sum(e.endswith(f"right {what}") for e, _ in flaky),
        wrong=sum(e.endswith(f"WRONG {what}") for e, _ in flaky),
        mean=statistics.mean(t for _, t in flaky) / statistics.mean(t for _, t in steady),
    )


def header(options: str) -> str:
    """The section's first line: the machine and the command."""
    return (
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores: `benchmarks/flaky.py {options}`.\n\n"
    )


def table(ends: Ends) -> str:
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
    parser.add_argument("--bisect", action="store_true", help="git bisect run instead")
    parser.add_argument("--triage", action="store_true", help="a whole-suite triage instead")
    parser.add_argument("--flaky-test", default="tests.test_invoice.SummaryTest.test_summary")
    parser.add_argument("--keep", help="--triage: keep each wrong run's reports and journal here")
    args = parser.parse_args()
    if args.triage:
        triaged(samples.load("suite-triage"), args)
        return
    scenario = samples.load(args.scenario)
    if args.bisect:
        bisected(scenario, args)
        return
    t = tally(lambda rate, count: runs(scenario, rate, count, args.jobs), args, "answer")
    body = (
        header(
            f"--runs {args.runs} --steady {len(t.steady)} --rate {args.rate} --jobs {args.jobs} "
            f"--scenario {args.scenario}"
        )
        + f"The `{args.scenario}` scenario, each run on a fresh repository with the default "
        f"options. **Deterministic test** ({len(t.steady)} runs):\n\n"
        + table(t.steady)
        + f"\n**The same test failing at random in {args.rate:g} of its runs** (whatever the "
        f"changes; {args.runs} runs): {t.right} right, {t.wrong} wrong; tests "
        f"{t.mean:.2f}× the deterministic runs' on average.\n\n" + table(t.flaky)
    )
    print(body)
    write_section(HEADING, body)


def bisected(scenario: samples.Scenario, args: argparse.Namespace) -> None:
    """--bisect: `git bisect run` with the steady test, then `--runs` times with the test
    failing at random; its section."""
    right, steady = one_bisect(scenario, 0.0)
    with ThreadPoolExecutor(args.jobs) as pool:
        ends = list(pool.map(lambda _: one_bisect(scenario, args.rate), range(args.runs)))
    judged = [
        ("right commit" if named == right else "no commit" if not named else "WRONG commit", n)
        for named, n in ends
    ]
    body = (
        header(
            f"--bisect --runs {args.runs} --rate {args.rate} --jobs {args.jobs} "
            f"--scenario {args.scenario}"
        )
        + f"`git bisect run` over `{scenario.good}..{scenario.bad}` of the `{args.scenario}` "
        f"sample, each run on a fresh repository. With the steady test it names "
        f"{right[:12]} in {steady} step{'' if steady == 1 else 's'} (runs of the test). "
        f"With the same test failing at random in {args.rate:g} of its runs ({args.runs} "
        "runs), by the commit it names "
        "(git bisect names a commit, never a change inside it, and reruns nothing):\n\n"
        + table([(f"names the {end}", n) for end, n in judged])
    )
    print(body)
    write_section(BISECT_HEADING, body)


def triaged(scenario: samples.Scenario, args: argparse.Namespace) -> None:
    """--triage: `--steady` triages with the suite as it is, then `--runs` with one test of it
    failing at random; its section."""
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    t = tally(
        lambda rate, count: triages(scenario, args.flaky_test, rate, count, args.jobs, args.keep),
        args,
        "causes",
    )
    body = (
        header(
            f"--triage --runs {args.runs} --steady {len(t.steady)} --rate {args.rate} "
            f"--jobs {args.jobs} --flaky-test {args.flaky_test}"
            + (f" --keep {args.keep}" if args.keep else "")
        )
        + f"A whole-suite triage (`--results junit:report.xml`, the default options) of the "
        f"`{scenario.name}` scenario, {len(scenario.causes)} causes, each run on a fresh "
        f"repository; right: exactly the scenario's causes, each with its expected changes. "
        f"**The suite as it is** ({len(t.steady)} runs):\n\n"
        + table(t.steady)
        + f"\n**`{args.flaky_test}` failing at random in {args.rate:g} of the runs where it "
        f"passes** (a failure of its own, another message; {args.runs} runs): {t.right} "
        f"right, {t.wrong} wrong; tests {t.mean:.2f}× the steady triages' on average.\n\n"
        + table(t.flaky)
    )
    print(body)
    write_section(TRIAGE_HEADING, body)


if __name__ == "__main__":
    main()
