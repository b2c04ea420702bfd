"""The outcome cache: exact answers, answers implied by monotony, and the persistent journal.

Owns the one rule that lets ddchange skip a build-and-test without asking it: if a configuration
is known, its recorded outcome is returned; under monotony, a configuration that is a subset of
one that passed is assumed to pass, and one that is a superset of one that failed is assumed to
fail. Monotony is an assumption about the program (no change masks the failure), so it is
switchable, every outcome it supplies is counted apart from exact hits, and it only ever skips
work: `exact` answers only what was recorded, and `witness` names the recorded configuration
behind an implied answer, so that no claim rests on an implication (see search.py).

UNRESOLVED outcomes are recorded exactly but imply nothing about other configurations.

The journal keeps every real test in SQLite under the repository's git directory, so that a run
that is stopped (Ctrl-C, SIGKILL, a lost machine) resumes without repeating completed tests.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ddchange.dd import Hit, Outcome
from ddchange.errors import JournalUnavailable

K = TypeVar("K", bound=Hashable)


class OutcomeCache(Generic[K]):
    """Exact outcomes by configuration, with optional monotony.

    Under monotony only the *maximal* passing and the *minimal* failing configurations are kept
    for implication: a set dominated by another one that is already kept can never imply
    anything the kept one does not.
    """

    def __init__(self, *, monotony: bool = True) -> None:
        self.monotony = monotony
        self._exact: dict[frozenset[K], Outcome] = {}
        self._passing: list[frozenset[K]] = []  # maximal passing configurations
        self._failing: list[frozenset[K]] = []  # minimal failing configurations

    def __len__(self) -> int:
        return len(self._exact)

    def lookup(self, config: frozenset[K]) -> Hit | None:
        outcome = self._exact.get(config)
        if outcome is not None:
            return Hit(outcome)
        if not self.monotony:
            return None
        if any(config <= passed for passed in self._passing):
            return Hit(Outcome.PASS, implied=True)
        if any(failed <= config for failed in self._failing):
            return Hit(Outcome.FAIL, implied=True)
        return None

    def exact(self, config: frozenset[K]) -> Outcome | None:
        """The recorded outcome of exactly `config`, never an implied one."""
        return self._exact.get(config)

    def witness(self, config: frozenset[K], outcome: Outcome) -> frozenset[K]:
        """The recorded configuration that implies `outcome` for `config` under monotony: a
        passing superset or a failing subset (the smallest such), so that a search can move to
        what was seen rather than to what was inferred."""
        if outcome is Outcome.PASS:
            return max((p for p in self._passing if config <= p), key=len)
        return min((f for f in self._failing if f <= config), key=len)

    def store(self, config: frozenset[K], outcome: Outcome) -> None:
        self._exact[config] = outcome
        if outcome is Outcome.PASS:
            self._passing = [p for p in self._passing if not p <= config] + [config]
        elif outcome is Outcome.FAIL:
            self._failing = [f for f in self._failing if not config <= f] + [config]


# -- the persistent journal ---------------------------------------------------------------------


@dataclass(frozen=True)
class TestRecord:
    """One real run of the build and test: what the log shows and what a resumed run reuses."""

    number: int  # 1, 2, ... over the whole life of a run, resumes included
    phase: str  # "good", "bad", a hierarchy level ("file", "hunk"), or "confirm"
    config: frozenset[str]  # the change units applied
    outcome: Outcome
    reason: str
    exit_code: int | None
    duration: float  # seconds inside the build and test commands
    tail: str = ""
    # Names an UNRESOLVED run's output said were missing (the failure resolution loop's input),
    # kept so that a resumed run learns the same needs and takes the same path.
    missing: frozenset[str] = frozenset()

    @property
    def size(self) -> int:
        return len(self.config)


@dataclass(frozen=True)
class RunInfo:
    """A run known to the journal: its key, what was asked (JSON), and how far it got."""

    key: str
    request: str
    tests: int
    updated: str


_WAIT = 30.0  # seconds a process waits for another one to release the journal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY, request TEXT NOT NULL, updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tests (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, phase TEXT NOT NULL,
    config TEXT NOT NULL, outcome TEXT NOT NULL, reason TEXT NOT NULL, exit_code INTEGER,
    duration REAL NOT NULL, tail TEXT NOT NULL, missing TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS tests_by_key ON tests (key, id);
"""


def _record(number: int, row: tuple[Any, ...]) -> TestRecord:
    phase, config, outcome, reason, exit_code, duration, tail, missing = row
    return TestRecord(
        number,
        phase,
        frozenset(json.loads(config)),
        Outcome(outcome),
        reason,
        exit_code,
        duration,
        tail,
        frozenset(json.loads(missing)),
    )


class Journal:
    """Every completed test of every run in one repository, kept in SQLite.

    Invariants:
    - A record is committed the moment its test completes (one transaction each, WAL mode), so
      a run killed with SIGKILL loses at most the test that was running. A test that was
      interrupted is never recorded: its outcome is unknown, not UNRESOLVED.
    - Records are only ever added, never changed; only `forget` (for `ddchange replay`) and
      deleting the file (`ddchange reset`) remove them.
    - Several processes may use one journal at once (SQLite locks; writers wait up to 30 s),
      each under its own run key or the same one: records are then simply interleaved.
    """

    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=_WAIT, isolation_level=None)
            self._set_up()
        except (OSError, sqlite3.Error) as error:
            raise JournalUnavailable(path, str(error)) from None

    def _set_up(self) -> None:
        # Switching to WAL needs a moment alone with the file, and SQLite reports "locked" at
        # once instead of waiting when another process is doing the same: retry for a while.
        deadline = time.monotonic() + _WAIT
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.executescript(_SCHEMA)
                self._upgrade()
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _upgrade(self) -> None:
        """Journals written before the `missing` column get it (empty for their records)."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(tests)")}
        if "missing" not in columns:
            self._db.execute("ALTER TABLE tests ADD COLUMN missing TEXT NOT NULL DEFAULT '[]'")

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self._db.close()

    def begin(self, key: str, request: str) -> None:
        """Remember that run `key` (described by the JSON `request`) exists."""
        self._db.execute(
            "INSERT INTO runs VALUES (?, ?, datetime('now')) "
            "ON CONFLICT (key) DO UPDATE SET updated = excluded.updated",
            (key, request),
        )

    def append(self, key: str, record: TestRecord) -> None:
        self._db.execute(
            "INSERT INTO tests (key, phase, config, outcome, reason, exit_code, duration, tail, "
            "missing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                record.phase,
                json.dumps(sorted(record.config)),
                record.outcome.value,
                record.reason,
                record.exit_code,
                record.duration,
                record.tail,
                json.dumps(sorted(record.missing)),
            ),
        )
        self._db.execute("UPDATE runs SET updated = datetime('now') WHERE key = ?", (key,))

    def records(self, key: str) -> list[TestRecord]:
        """The records of run `key`, oldest first, numbered from 1."""
        rows = self._db.execute(
            "SELECT phase, config, outcome, reason, exit_code, duration, tail, missing FROM tests "
            "WHERE key = ? ORDER BY id",
            (key,),
        )
        return [_record(n, row) for n, row in enumerate(rows, 1)]

    def forget(self, key: str) -> None:
        """Drop run `key`'s records (replay puts the replayed ones in their place)."""
        self._db.execute("DELETE FROM tests WHERE key = ?", (key,))

    def runs(self) -> list[RunInfo]:
        """Every run, most recently updated first."""
        rows = self._db.execute(
            "SELECT runs.key, request, COUNT(tests.id), updated FROM runs "
            "LEFT JOIN tests ON tests.key = runs.key GROUP BY runs.key ORDER BY updated DESC"
        )
        return [RunInfo(*row) for row in rows]
