"""The test log, like `git bisect log`: what `ddchange log` prints and `ddchange replay` reads
back (comments for people, one JSON line per test)."""

from __future__ import annotations

import json
import math
import shlex
from typing import Any

from ddchange.model import Outcome, TestRecord, cases_from, phase_of
from ddchange.report.as_json import record
from ddchange.report.words import plural, printable

# -- the log: `ddchange log` writes it, `ddchange replay` reads it back --------------------------


def render(description: dict[str, object], records: list[TestRecord]) -> str:
    """A run's history, like `git bisect log`: comments for people, one JSON line per test."""
    argv = description.get("test")
    test = shlex.join(map(str, argv)) if isinstance(argv, list) else ""  # as it is typed
    where = description.get("subdirectory")
    lines = [
        f"# ddchange log: {description.get('good_rev')}..{description.get('bad_rev')} -- {test}"
        + (f"  (run in {where})" if where else ""),
        "# replay with `ddchange replay FILE` (edit outcomes first if you like)",
        "run " + json.dumps(description),
    ]
    for r in records:
        lines.append(
            f"# {r.number}: {r.phase}, {plural(r.size, 'change')} -> "
            f"{r.outcome.value.upper()} ({r.reason})"
        )
        lines.append("test " + json.dumps(record(r)))
    # The comments carry the command and reasons as they came (a replayed log is anyone's);
    # the JSON lines escape every control character themselves.
    return printable("\n".join(lines) + "\n")


def parse(text: str) -> list[tuple[dict[str, object], list[TestRecord]]]:
    """The runs of a log (`ddchange log` prints two for --strategy auto: the bisection's, then
    the search's inside the history), each a description and its records, in the order they
    come; ValueError(line, problem) if it is none."""
    runs: list[tuple[dict[str, object], list[TestRecord]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        kind, _, payload = line.strip().partition(" ")
        if kind in ("", "#") or kind.startswith("#"):
            continue
        try:
            data = json.loads(payload)
            if kind == "run" and isinstance(data, dict):
                runs.append((data, []))
            elif kind == "test" and isinstance(data, dict) and runs:
                records = runs[-1][1]
                records.append(_parse_record(len(records) + 1, data))
            elif kind == "test" and isinstance(data, dict):
                raise ValueError("a 'test {...}' line before the 'run {...}' line")
            else:
                raise ValueError(f"expected 'run {{...}}' or 'test {{...}}', got {kind!r}")
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(number, str(error)) from None
    if not runs:
        raise ValueError(0, "no 'run {...}' line")
    return runs


def _parse_record(number: int, data: dict[str, Any]) -> TestRecord:
    config, exit_code = data["config"], data.get("exit_code")
    if not isinstance(config, list) or not all(isinstance(i, str) for i in config):
        raise ValueError("'config' must be a list of change ids")
    if not (exit_code is None or (type(exit_code) is int and -(2**31) <= exit_code < 2**31)):
        raise ValueError("'exit_code' must be a whole number (an exit status) or null")
    duration = data.get("duration", 0.0)
    if isinstance(duration, bool) or not isinstance(duration, int | float):
        raise ValueError("'duration' must be a number of seconds")
    if not 0 <= duration < math.inf:  # NaN fails this too
        raise ValueError("'duration' must be a number of seconds from 0")
    return TestRecord(
        number=number,
        phase=phase_of(str(data["phase"])),
        config=frozenset(config),
        outcome=Outcome(data["outcome"]),
        reason=str(data.get("reason", "")),
        exit_code=exit_code,
        duration=float(duration),
        cases=cases_from(data.get("cases")),
    )
