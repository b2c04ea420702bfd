"""Whole-suite triage against the searches a user would run without it, on every bundled
scenario that has causes (`[[cause]]` in its scenario.toml).

    .venv/bin/python benchmarks/whole_suite.py    # rewrites its section of benchmarks/RESULTS.md

For each such scenario, each row on a fresh repository built from it (so no row takes a test
from another's journal), every real run of the test command counted:
- `--results`: one triage of the whole suite, every failing test searched, runs shared (the
  default: each test's history bisected first, then a triage inside each first bad commit);
- `--results --strategy diff`: the same triage over the whole range GOOD..BAD;
- one search per failing test: `--results --test NAME` for each target in turn, each on a
  fresh repository, as a user who triages one test at a time pays (summed);
- the plain search: no `--results`, the suite's exit code as the one bit; it cannot start
  when a test already fails at GOOD, and otherwise answers for one cause only.
The triage's causes are checked against the scenario's (`samples.causes_match`).
"""

from __future__ import annotations

import dataclasses
import json
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from results import runs, write_section

from ddchange import samples, suite
from ddchange.model import Strategy
from ddchange.report.words import plural

HEADING = "## Whole-suite triage (`benchmarks/whole_suite.py`)"


@dataclass(frozen=True)
class Row:
    scenario: str
    targets: int
    causes: int
    right: bool
    triage: int
    whole_range: int  # --strategy diff
    single: tuple[int, ...]  # one search per failing test, each on a fresh repository
    plain: str  # how the plain search ended
    # where the tests went: the triage's, then each single search's (`_parts`)
    parts: tuple[Parts, ...]


Parts = tuple[int, int, int, int]  # pre-flight, bisection, search, checks


def _parts(phases: list[str]) -> Parts:
    """A test log's runs by phase (`results.runs`), the bisection of the history apart from
    the searches."""
    counted = runs(p for p in phases if p != "bisect")
    return counted.preflight, phases.count("bisect"), counted.search, counted.checks


def _ddchange(repo: Path, *args: str) -> tuple[int, dict[str, object]]:
    """`ddchange run ARGS --json FILE` in `repo`: its exit code and JSON report ({} if none)."""
    report = repo.parent / f"{repo.name}.json"
    done = subprocess.run(
        [sys.executable, "-m", "ddchange", "run", "--json", str(report), "-q", *args],
        cwd=repo,
        capture_output=True,
        check=False,
    )
    document: dict[str, object] = json.loads(report.read_text()) if report.exists() else {}
    report.unlink(missing_ok=True)
    return done.returncode, document


def _fresh(scenario: samples.Scenario, root: Path, name: str) -> Path:
    return samples.build_repo(scenario, root / name)


def measure(scenario: samples.Scenario, root: Path) -> Row:
    base = [f"{scenario.good}..{scenario.bad}"]
    base += ["--build", scenario.build] if scenario.build is not None else []
    base += ["--timeout", f"{scenario.timeout:g}"] if scenario.timeout is not None else []
    given = [arg for spec in scenario.results for arg in ("--results", spec)]
    test = ["--", *scenario.test]
    whole = suite.run(samples.request(scenario, _fresh(scenario, root, "whole")))
    request = samples.request(scenario, _fresh(scenario, root, "range"))
    ranged = suite.run(dataclasses.replace(request, strategy=Strategy.DIFF))
    single, parts = [], [_parts([str(r.phase) for r in whole.log])]
    for n, target in enumerate(whole.targets):
        repo = _fresh(scenario, root, f"one{n}")
        _, one = _ddchange(repo, *base, *given, "--test", target.name, *test)
        single.append(int(one["tests_run"]))  # type: ignore[call-overload]
        parts.append(_parts([r["phase"] for r in one["log"]]))  # type: ignore[attr-defined]
    code, plain = _ddchange(_fresh(scenario, root, "plain"), *base, *test)
    ended = (
        f"exit {code}, {len(plain['culprits'])} changes after {plain['tests_run']} tests"  # type: ignore[arg-type]
        if plain
        else f"exit {code}: GOOD fails ({plural(len(whole.already_failing), 'test')} already "
        "failing there)"
    )
    return Row(
        scenario=scenario.name,
        targets=len(whole.targets),
        causes=len(whole.causes),
        right=samples.causes_match(scenario, whole) and samples.causes_match(scenario, ranged),
        triage=whole.tests_run,
        whole_range=ranged.tests_run,
        single=tuple(single),
        plain=ended,
        parts=tuple(parts),
    )


def body(rows: list[Row]) -> str:
    lines = [
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}: `.venv/bin/python "
        f"{shlex.join(['benchmarks/whole_suite.py', *sys.argv[1:]])}`. "
        "Each row on a fresh repository built from the scenario; `tests` count every real run "
        "of the test command (pre-flight, bisection, search, checks). `triage`: one `ddchange "
        "--results` over the whole suite, as by default (each failing test's history bisected, "
        "then a triage inside each first bad commit); `whole range`: the same with `--strategy "
        "diff`; `one search per test`: `--results --test NAME` for each failing test in turn, "
        "each on a fresh repository (its tests: the fewest, the median and the most; and their "
        "sum, what triaging one test at a time costs); `plain search`: `ddchange` without "
        "`--results`, the suite's exit code as its one bit. `right`: every failing test "
        "attributed to the scenario's cause for it, each cause with its expected changes "
        "(inside the first bad commit where the scenario names that answer), by both triages.",
        "",
        "| scenario | failing tests | causes | right | triage: tests | whole range: tests | "
        "one search per test: fewest / median / most | sum | triage / median | triage / sum | "
        "plain search |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        median = statistics.median(r.single)
        lines.append(
            f"| {r.scenario} | {r.targets} | {r.causes} | {'yes' if r.right else 'NO'} | "
            f"{r.triage} | {r.whole_range} | {min(r.single)} / {median:g} / {max(r.single)} | "
            f"{sum(r.single)} | "
            f"{r.triage / median:.2f}× | {r.triage / sum(r.single):.2f}× | {r.plain} |"
        )
    for r in rows:
        lines += [
            "",
            f"Where the tests of `{r.scenario}` went (`pre-flight`: GOOD and BAD; `bisection`: "
            "the commits of the history; `search`: inside the first bad commits, each answer's "
            "check by real outcomes included; `checks`: each answer run again at the end, and "
            "its base once more):",
            "",
            "| run | tests | pre-flight | bisection | search | checks |",
            "|---|---|---|---|---|---|",
        ]
        named = ["triage", *(f"one search: target {n}" for n in range(1, len(r.single) + 1))]
        for name, (preflight, bisection, search, checks) in zip(named, r.parts, strict=True):
            total = preflight + bisection + search + checks
            lines.append(f"| {name} | {total} | {preflight} | {bisection} | {search} | {checks} |")
    return "\n".join(lines)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(scenario, Path(tmp)) for scenario in samples.scenarios() if scenario.causes]
    text = body(rows)
    print(text)
    write_section(HEADING, text)


if __name__ == "__main__":
    main()
