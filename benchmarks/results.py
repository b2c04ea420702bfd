"""benchmarks/RESULTS.md is shared by several benchmarks: each one rewrites only its section.

Owns the file's layout (a title, then one `## ` section per benchmark), the stamp at the top of
every section, and the split of ddchange's test log into its parts (pre-flight, search, checks
at the end), so that every benchmark counts them alike and no prose needs to know how many runs
the checks take.

The stamp names the ddchange that was measured, not the benchmarks: the commit of the checkout
whose ddchange ran (a script's `--ddchange`, else the checkout the imported `ddchange` package
comes from, found from `ddchange.__file__`), "with uncommitted changes" when git status shows
any under that checkout's src/ or benchmarks/, and the UTC date; when the benchmark scripts
come from another checkout, their own commit follows.
"""

from __future__ import annotations

import os
import re
import shlex
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
CHECKS = ("confirm", "on-good")  # the answer rerun, GOOD again; auto: the answer on GOOD
# What a run's code is: these paths of a checkout decide it (RESULTS.md itself is what the
# runs write).
CODE = ("src", "benchmarks", ":(exclude)benchmarks/RESULTS.md")


# -- the stamp ----------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def checkout_of(path: Path) -> Path | None:
    """The top of the git checkout (or worktree) that holds `path`; None when it is in none."""
    done = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, text=True
    )
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else None


def imported_checkout() -> Path | None:
    """The checkout the `ddchange` package this process imports comes from (an editable
    install's src/); None for a package installed from a wheel."""
    import ddchange

    return checkout_of(Path(ddchange.__file__).resolve().parent)


def command_checkout(command: Path) -> Path | None:
    """The checkout whose ddchange the console script `command` runs: the one its own Python
    (the script's `#!` line) imports; None when that cannot be told."""
    try:
        with command.open("rb") as script:
            first = script.readline().decode(errors="replace")
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    where = "import ddchange, os; print(os.path.dirname(os.path.realpath(ddchange.__file__)))"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GIT_"))}
    try:
        done = subprocess.run(
            [*shlex.split(first[2:]), "-c", where], capture_output=True, text=True, env=env
        )
    except OSError:
        return None
    path = done.stdout.strip()
    return checkout_of(Path(path)) if done.returncode == 0 and path else None


def _date(now: datetime | None) -> str:
    return (now or datetime.now(UTC)).strftime("%Y-%m-%d")


def _commit(root: Path) -> str:
    """The commit checked out at `root`, "with uncommitted changes under src/ or benchmarks/"
    when git status shows any there: never a clean name for a tree that is not its commit."""
    commit = _git(root, "rev-parse", "--short", "HEAD").strip()
    dirty = _git(root, "status", "--porcelain", "--", *CODE).strip()
    changes = " with uncommitted changes under src/ or benchmarks/" if dirty else ""
    return f"`{commit}`{changes}"


def stamp(root: Path = CHECKOUT, now: datetime | None = None) -> str:
    """The line that opens a section: the commit checked out at `root` (the checkout whose
    ddchange was measured), "with uncommitted changes" when git status shows any under src/
    or benchmarks/, and the UTC date."""
    return f"Ran on commit {_commit(root)}, {_date(now)} (UTC)."


def stamp_of(checkout: Path | None, now: datetime | None = None) -> str:
    """The stamp of a run that measured the ddchange of `checkout` (None: one installed from
    no git checkout): `stamp` of that checkout, which says so, and the benchmark scripts' own
    commit when they come from another checkout."""
    if checkout is None:
        line = f"Ran on a ddchange from no git checkout (not editable), {_date(now)} (UTC)"
    else:
        line = stamp(checkout, now).removesuffix(".")
    if checkout is not None and checkout.resolve() == CHECKOUT:
        return f"{line}: the ddchange measured and the benchmark scripts."
    return (
        f"{line}: the ddchange measured; the benchmark scripts ran from commit {_commit(CHECKOUT)}."
    )


# Taken when a benchmark starts (it imports this module first), not when it writes: a long run
# names the code it began with. The ddchange measured is the one this process imports; a script
# that measures another (`--ddchange`) passes its own stamp to `write_section`.
STAMP = stamp_of(imported_checkout())


# -- the file -----------------------------------------------------------------------------------


def with_section(document: str, heading: str, section: str) -> str:
    """`document` with the section under `heading` replaced by `section` (appended if absent)."""
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(document):
        return pattern.sub(lambda _: section, document)
    return document.rstrip("\n") + "\n\n" + section


def write_section(
    heading: str, body: str, path: Path = RESULTS, stamped: str | None = None
) -> None:
    """Put `heading` and `body`, stamped (`stamped`, else STAMP: the imported ddchange's),
    into `path` (RESULTS.md), keeping every other benchmark's section."""
    existing = path.read_text() if path.exists() else TITLE
    section = f"{heading}\n\n{stamped or STAMP}\n\n{body.rstrip()}\n\n"
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
