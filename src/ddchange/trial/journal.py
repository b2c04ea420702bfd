"""The journal: every completed test of every run in one repository, kept in SQLite.

Owns persistence, so that a run that is stopped (Ctrl-C, SIGKILL, a lost machine) resumes without
repeating completed tests. Records are `model.TestRecord`s; the trial layer writes them, `ddchange
log`/`replay` read them.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ddchange.errors import JournalUnavailable
from ddchange.model import Case, Outcome, TestRecord, cases_from, cases_json, phase_of


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    """A run known to the journal: its key, what was asked (its latest attempt's description),
    and how far it got."""

    key: str
    request: dict[str, object]
    tests: int
    updated: str


# The key a run's description carries when its records were put there from a log (`ddchange
# replay`): it stays with the run until `ddchange reset`, so that every later attempt says its
# records came from a log.
REPLAYED = "replayed"
_WAIT = 30.0  # seconds a process waits for another one to release the journal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY, request TEXT NOT NULL, updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tests (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, phase TEXT NOT NULL,
    config TEXT NOT NULL, outcome TEXT NOT NULL, reason TEXT NOT NULL, exit_code INTEGER,
    duration REAL NOT NULL, tail TEXT NOT NULL, missing TEXT NOT NULL DEFAULT '[]',
    cases TEXT
);
CREATE INDEX IF NOT EXISTS tests_by_key ON tests (key, id);
"""


def _record(number: int, row: tuple[Any, ...]) -> TestRecord:
    """The record a row holds; ValueError when a value is not of its kind (a damaged
    journal): nothing else is taken for a record."""
    phase, config, outcome, reason, exit_code, duration, tail, missing, cases = row
    if not all(isinstance(text, str) for text in (phase, reason, tail)):
        raise ValueError(f"test {number}: a text that is not one")
    if not (exit_code is None or type(exit_code) is int) or type(duration) not in (int, float):
        raise ValueError(f"test {number}: an exit code or duration that is not a number")
    return TestRecord(
        number=number,
        phase=phase_of(phase),
        config=_names(number, config),
        outcome=Outcome(outcome),
        reason=reason,
        exit_code=exit_code,
        duration=float(duration),
        tail=tail,
        missing=_names(number, missing),
        cases=_cases(number, cases),
    )


def _cases(number: int, column: object) -> dict[str, Case] | None:
    """The test results a row holds (NULL: the run gave none)."""
    try:
        return cases_from(None if column is None else json.loads(str(column)))
    except ValueError as error:
        raise ValueError(f"test {number}: {error}") from None


def _request(text: object) -> dict[str, object]:
    """What a run asked for: the JSON object `begin` was given."""
    try:
        request = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        request = None
    if not isinstance(request, dict):
        raise ValueError("a run whose description is not a JSON object")
    return request


def _names(number: int, column: object) -> frozenset[str]:
    """A JSON list of names (change ids, missing names), as the set it stands for."""
    names = json.loads(column) if isinstance(column, str) else None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"test {number}: a list of names that is not one")
    return frozenset(names)


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
    - A journal that cannot be read or written (damaged, read-only, a full disk) raises
      JournalUnavailable from whichever call found out, never a database error; a record
      that could not be written is not there, so nothing false is.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        with self._guard():
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=_WAIT, isolation_level=None)
            self._set_up()

    @property
    def path(self) -> Path:
        return self._path

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except (OSError, sqlite3.Error, ValueError) as error:  # ValueError: a damaged record
            raise JournalUnavailable(self._path, str(error)) from None

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
        """Journals written before the `missing` or `cases` column get it (empty, or NULL: no
        test results, for their records)."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(tests)")}
        if "missing" not in columns:
            self._db.execute("ALTER TABLE tests ADD COLUMN missing TEXT NOT NULL DEFAULT '[]'")
        if "cases" not in columns:
            self._db.execute("ALTER TABLE tests ADD COLUMN cases TEXT")

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self._db.close()

    def begin(self, key: str, request: str) -> RunInfo | None:
        """Remember that run `key` (described by the JSON `request`, in place of an earlier
        attempt's description) exists; the run as known before, if it was."""
        with self._guard():
            before = self._db.execute(
                "SELECT request, (SELECT COUNT(*) FROM tests WHERE key = ?), updated FROM runs "
                "WHERE key = ?",
                (key, key),
            ).fetchone()
            if before is not None and _request(before[0]).get(REPLAYED) is True:
                request = json.dumps({**json.loads(request), REPLAYED: True})  # it stays so
            self._db.execute(
                "INSERT INTO runs VALUES (?, ?, datetime('now')) ON CONFLICT (key) "
                "DO UPDATE SET request = excluded.request, updated = excluded.updated",
                (key, request),
            )
            if before is None:
                return None
            tests, updated = before[1:]
            return RunInfo(key=key, request=_request(before[0]), tests=tests, updated=updated)

    def append(self, key: str, record: TestRecord) -> None:
        row = (
            key,
            record.phase,
            json.dumps(sorted(record.config)),
            record.outcome.value,
            record.reason,
            record.exit_code,
            record.duration,
            record.tail,
            json.dumps(sorted(record.missing)),
            None if record.cases is None else json.dumps(cases_json(record.cases)),
        )
        with self._guard():
            self._db.execute(
                "INSERT INTO tests (key, phase, config, outcome, reason, exit_code, duration, "
                "tail, missing, cases) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            self._db.execute("UPDATE runs SET updated = datetime('now') WHERE key = ?", (key,))

    def records(self, key: str) -> list[TestRecord]:
        """The records of run `key`, oldest first, numbered from 1."""
        with self._guard():
            rows = self._db.execute(
                "SELECT phase, config, outcome, reason, exit_code, duration, tail, missing, cases "
                "FROM tests WHERE key = ? ORDER BY id",
                (key,),
            ).fetchall()
            return [_record(n, row) for n, row in enumerate(rows, 1)]

    def forget(self, key: str) -> None:
        """Drop run `key`'s records (replay puts the replayed ones in their place)."""
        with self._guard():
            self._db.execute("DELETE FROM tests WHERE key = ?", (key,))

    def runs(self) -> list[RunInfo]:
        """Every run, most recently updated first."""
        with self._guard():
            rows = self._db.execute(
                "SELECT runs.key, request, COUNT(tests.id), updated FROM runs "
                "LEFT JOIN tests ON tests.key = runs.key GROUP BY runs.key ORDER BY updated DESC"
            ).fetchall()
            return [
                RunInfo(key=key, request=_request(request), tests=tests, updated=updated)
                for key, request, tests, updated in rows
            ]
