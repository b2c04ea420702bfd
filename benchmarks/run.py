"""Run ddchange over every bundled sample repository and record what each search cost.

    .venv/bin/python benchmarks/run.py    # rewrites its section of benchmarks/RESULTS.md

Each scenario is built fresh in a temporary directory and searched once, in this process, with
the scenario's own build, test and timeout. "overhead" is ddchange's own time: the wall time
minus the time spent inside the user's build and test commands. Numbers are from one run on the
machine that ran it; test counts are deterministic, times are not.
"""

from __future__ import annotations

import platform
import tempfile
from pathlib import Path

from results import PARTS, Runs, parts_prose, runs, write_section

from ddchange import samples, session

HEADING = "## Sample repositories (`benchmarks/run.py`)"
COLUMNS = (
    "scenario",
    "hunks",
    "answer",
    "expected?",
    "tests run",
    PARTS,
    "cache hits",
    "implied",
    "unresolved",
    "wall s",
    "overhead s",
)


def measure(scenario: samples.Scenario, workdir: Path) -> tuple[list[str], Runs]:
    """One search over `scenario`; its row of the table, and its runs by part."""
    repo = samples.build_repo(scenario, workdir / scenario.name)
    result = session.run(samples.request(scenario, repo))
    unresolved = sum(r.outcome.value == "unresolved" for r in result.log)
    parts = runs(r.phase for r in result.log)
    return [
        scenario.name,
        str(len(result.diff.hunks)),
        str(len(result.culprits)),
        "yes" if samples.matches(scenario, [(h.path, h.diff) for h in result.culprits]) else "NO",
        str(result.tests_run),
        parts.cell(),
        str(result.stats.cache_hits),
        str(result.stats.implied),
        str(unresolved),
        f"{result.wall_time:.2f}",
        f"{result.wall_time - result.command_time:.2f}",
    ], parts


def table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ddchange-bench-") as tmp:
        measured = [measure(scenario, Path(tmp)) for scenario in samples.scenarios()]
    text = table([row for row, _ in measured])
    print(text, end="")
    write_section(
        HEADING,
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}. `tests run` counts every real run: the pre-flight (GOOD and "
        "BAD), the search, and the checks at the end (the flaky-test check among them); "
        f"{parts_prose(parts for _, parts in measured)}. `unresolved` counts real runs that "
        "could not say pass or fail (no build, timeout, "
        "other failure); `overhead` is wall time minus the time inside "
        "build and test commands.\n\n" + text,
    )


if __name__ == "__main__":
    main()
