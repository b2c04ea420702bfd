"""The project's own test suite, run N times in a row by the README's test command: is it flaky?

    .venv/bin/python benchmarks/suite.py                                 # 20 runs, RESULTS.md
    .venv/bin/python benchmarks/suite.py --runs 1 --results /tmp/r.md    # a quick check

The command is read from README.md (the line of a shell block that installs the project and runs
pytest), so it is the one a new user types: it makes a venv in the checkout, installs the
project with its test extras, and runs pytest with the project's own options (pyproject.toml:
every core, through pytest-xdist). It runs in a clone of this checkout's HEAD in a temporary
directory (`--work`), never in this checkout; before each run, `git clean` takes the clone back
to that commit, all but the venv that the command itself makes and updates, so that no run sees
what an earlier one left behind. Each run's whole output is kept there, in `run-K.log`.

A run passes when the command exits 0. For every run the section gives pytest's own counts
(its last line) and the ids of the tests that failed or errored (its `-ra` summary), and then
how many runs each of those tests failed in. The section is rewritten after every run, so a
long series that is stopped keeps what it measured.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import results

HEADING = "## The project's own test suite, run again and again (`benchmarks/suite.py`)"
README = results.CHECKOUT / "README.md"
# What would point the command at another interpreter, another source tree or another repository
# than the clone's own.
FOREIGN = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")
_COUNTS = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_SUMMARY = re.compile(r"^=* ?\d+ \w+.* in [\d.]+s")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)")


def readme_command(readme: str) -> str:
    """The line of the README's shell blocks that installs the project and runs its test suite
    (the other lines that name pytest are examples of ddchange's use)."""
    blocks = re.findall(r"^```sh\n(.*?)^```", readme, re.MULTILINE | re.DOTALL)
    lines = [line for block in blocks for line in block.splitlines()]
    found = [line for line in lines if "pip install" in line and "pytest" in line]
    if len(found) != 1:
        raise SystemExit(f"suite.py: README.md has {len(found)} test commands, not one")
    return found[0].strip()


@dataclass(frozen=True)
class Run:
    """One run of the command: its exit code, pytest's counts and the tests that failed."""

    exit_code: int | None  # None: stopped at --timeout
    seconds: float
    counts: dict[str, int] = field(default_factory=dict)  # "passed", "failed", "error", ...
    failing: tuple[str, ...] = ()  # test ids, as pytest's summary names them

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


def read_output(output: str) -> tuple[dict[str, int], tuple[str, ...]]:
    """pytest's counts from its last summary line, and the ids its `-ra` summary says failed
    or errored (in its order, each once)."""
    counts: dict[str, int] = {}
    summaries = [line for line in output.splitlines() if _SUMMARY.match(line)]
    if summaries:
        for number, word in _COUNTS.findall(summaries[-1]):
            counts[word.removesuffix("s") if word.startswith("error") else word] = int(number)
    failing = [m.group(1) for line in output.splitlines() if (m := _FAILED.match(line))]
    return counts, tuple(dict.fromkeys(failing))


# -- the clone and the runs ---------------------------------------------------------------------


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, stdout=subprocess.DEVNULL)


def clone(checkout: Path, where: Path) -> str:
    """A clone of `checkout`'s HEAD (a branch or a detached commit) at `where`; its commit."""
    _git("clone", "-q", "--no-checkout", str(checkout), str(where))
    _git("-C", str(where), "fetch", "-q", str(checkout), "HEAD")
    _git("-C", str(where), "checkout", "-q", "--detach", "FETCH_HEAD")
    return subprocess.run(
        ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def run_once(command: str, where: Path, log: Path, timeout: float) -> Run:
    """`command` by bash in the clone, once, after taking the clone back to its commit (all
    but .venv)."""
    _git("-C", str(where), "clean", "-q", "-ffdx", "--exclude=/.venv")
    _git("-C", str(where), "reset", "-q", "--hard")
    environment = {k: v for k, v in os.environ.items() if k not in FOREIGN}
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=where,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            exit_code: int | None = process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            exit_code = None
        finally:
            if process.returncode is None:  # Ctrl-C: nothing of it may outlive us
                os.killpg(process.pid, signal.SIGKILL)
    counts, failing = read_output(log.read_text(errors="replace"))
    return Run(exit_code, time.monotonic() - started, counts, failing)


# -- the section --------------------------------------------------------------------------------

COLUMNS = ("passed", "failed", "error", "skipped")


def section(command: str, commit: str, cores: int, load: float, runs: Sequence[Run]) -> str:
    """The section's body: what ran where, a row per run, and the tests that failed."""
    good = sum(run.passed for run in runs)
    lines = [
        f"`{command}` (the README's test command), run after run on a clean clone of "
        f"`{commit[:12]}`, on {cores} cores (load average {load:.2f} when the first run began; "
        "the machine is shared).",
        "",
        f"**Runs that passed: {good} of {len(runs)}.**",
        "",
        "| run | exit code | " + " | ".join(COLUMNS) + " | minutes |",
        "| ---: | ---: | " + " | ".join("---:" for _ in COLUMNS) + " | ---: |",
    ]
    for number, run in enumerate(runs, 1):
        code = "timed out" if run.exit_code is None else str(run.exit_code)
        cells = [str(run.counts.get(name, 0)) for name in COLUMNS]
        lines.append(f"| {number} | {code} | " + " | ".join(cells) + f" | {run.seconds / 60:.1f} |")
    failures = Counter(test for run in runs for test in run.failing)
    if failures:
        lines += ["", "Tests that failed or errored, and in how many of the runs:", ""]
        lines += [f"- `{test}`: {n} of {len(runs)}" for test, n in failures.most_common()]
    return "\n".join(lines) + "\n"


# -- main ---------------------------------------------------------------------------------------


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="how many runs in a row")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    parser.add_argument("--work", type=Path, help="where the clone goes (default: a new one)")
    parser.add_argument("--results", type=Path, default=results.RESULTS, help="file to write")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    command = readme_command(README.read_text())
    work = args.work or Path(tempfile.mkdtemp(prefix="ddchange-suite-"))
    where = work / "checkout"
    if where.exists():
        shutil.rmtree(where)
    commit = clone(results.CHECKOUT, where)
    cores, load = len(os.sched_getaffinity(0)), os.getloadavg()[0]
    runs: list[Run] = []
    for number in range(1, args.runs + 1):
        run = run_once(command, where, work / f"run-{number}.log", args.timeout)
        runs.append(run)
        print(f"run {number}: exit {run.exit_code}, {run.counts}, {run.seconds:.0f} s", flush=True)
        for test in run.failing:
            print(f"   failed: {test}", flush=True)
        body = section(command, commit, cores, load, runs)
        # The clone is the ddchange measured: HEAD's commit, without this checkout's edits.
        results.write_section(HEADING, body, args.results, results.stamp_of(where))
    print(f"logs: {work}")


if __name__ == "__main__":
    main()
