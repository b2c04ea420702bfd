"""benchmarks/RESULTS.md is shared by several benchmarks: each one rewrites only its section.

Owns the file's layout (a title, then one `## ` section per benchmark), the stamp at the top of
every section (the commit of this checkout the run started on, whether src/ or benchmarks/ had
uncommitted changes, and the UTC date), and the split of ddchange's test log into its parts
(pre-flight, search, checks at the end), so that every benchmark counts them alike and no
prose needs to know how many runs the checks take.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
CHECKOUT = Path(__file__).resolve().parents[1]
TITLE = "# Benchmark results\n"
# Phases of ddchange's test log that are not the search's: the pre-flight (GOOD, BAD) and the
# checks at the end. Names, not numbers: how many runs each takes is read from the log.
PREFLIGHT = ("good", "bad")
CHECKS = ("confirm",)
# What a run's code is: these paths decide it (RESULTS.md itself is what the runs write).
CODE = ("src", "benchmarks", ":(exclude)benchmarks/RESULTS.md")


# -- the stamp ----------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def stamp(root: Path = CHECKOUT, now: datetime | None = None) -> str:
    """The line that opens a section: the commit checked out at `root`, "with uncommitted
    changes" when git status shows any under src/ or benchmarks/, and the UTC date."""
    commit = _git(root, "rev-parse", "--short", "HEAD").strip()
    dirty = _git(root, "status", "--porcelain", "--", *CODE).strip()
    date = (now or datetime.now(UTC)).strftime("%Y-%m-%d")
    changes = " with uncommitted changes under src/ or benchmarks/" if dirty else ""
    return f"Ran on commit `{commit}`{changes}, {date} (UTC)."


# Taken when a benchmark starts (it imports this module first), not when it writes: a long run
# names the code it began with.
STAMP = stamp()


# -- the file -----------------------------------------------------------------------------------


def with_section(document: str, heading: str, section: str) -> str:
    """`document` with the section under `heading` replaced by `section` (appended if absent)."""
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(document):
        return pattern.sub(lambda _: section, document)
    return document.rstrip("\n") + "\n\n" + section


def write_section(heading: str, body: str, path: Path = RESULTS) -> None:
    """Put `heading` and `body`, stamped, into `path` (RESULTS.md), keeping every other
    benchmark's section."""
    existing = path.read_text() if path.exists() else TITLE
    section = f"{heading}\n\n{STAMP}\n\n{body.rstrip()}\n\n"
    path.write_text(with_section(existing, heading, section).rstrip("\n") + "\n")


# -- ddchange's runs, by part -------------------------------------------------------------------


@dataclass(frozen=True)
class Runs:
    """ddchange's real runs of one search, counted from its test log by phase."""

    preflight: int
    search: int
    checks: int

    @property
    def total(self) -> int:
        return self.preflight + self.search + self.checks

    def cell(self) -> str:
        """The cell "pre-flight / search / checks", for a column named `PARTS`."""
        return f"{self.preflight} / {self.search} / {self.checks}"


PARTS = "pre-flight / search / checks"


def runs(phases: Iterable[str]) -> Runs:
    """The parts of a test log, given each record's phase."""
    counted = list(phases)
    preflight = sum(phase in PREFLIGHT for phase in counted)
    checks = sum(phase in CHECKS for phase in counted)
    return Runs(preflight, len(counted) - preflight - checks, checks)


def span(values: Iterable[int]) -> str:
    """The figure n when all are n, "lo–hi" otherwise ("—" for none), for prose."""
    seen = sorted(set(values))
    if not seen:
        return "—"
    return str(seen[0]) if len(seen) == 1 else f"{seen[0]}–{seen[-1]}"


def parts_prose(all_runs: Iterable[Runs]) -> str:
    """What ddchange's pre-flight and checks at the end took in these runs, read from them."""
    counted = list(all_runs)
    return (
        f"in this run, ddchange's pre-flight took {span(r.preflight for r in counted)} runs and "
        f"its checks at the end {span(r.checks for r in counted)} (`{PARTS}`, counted from each "
        "run's test log by phase)"
    )
