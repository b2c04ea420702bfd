"""What the user reads and keeps: the text summary, the JSON report, the test log.

Owns the presentation of a `session.Result`, and nothing about how it was found. The text is for
people: the answer first (each culprit with its file, function context, line numbers and diff),
how sure it is (confirmed, flaky, or interrupted before it was 1-minimal), then what it cost. The
JSON is for tools and keeps every number the text shows, plus the whole test log.
"""

from __future__ import annotations

import json
from typing import Any

from ddchange.cache import TestRecord
from ddchange.dd import Outcome
from ddchange.hunks import Hunk
from ddchange.session import Confirmation, Result


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _location(hunk: Hunk, scope: str) -> str:
    where = f"{hunk.path}:{hunk.new_start}" if hunk.kind == "text" else hunk.path
    kind = "" if hunk.kind == "text" else f" ({hunk.kind})"
    return f"{where}{kind}  in {scope}" if scope else f"{where}{kind}"


def _headline(result: Result) -> str:
    request, count = result.request, len(result.culprits)
    between = (
        f"between {request.good} ({result.revisions.good[:12]}) and {request.bad} "
        f"({result.revisions.bad[:12]})"
    )
    changes = f"{_plural(count, 'change')} of {len(result.diff.hunks)}"
    if result.outcome == "interrupted":
        return (
            f"ddchange: interrupted. Best answer so far: {changes} {between} still fail "
            f"`{' '.join(request.test)}`; it may not be minimal yet. Run the same command "
            "again to resume where this run stopped."
        )
    verb = "makes" if count == 1 else "make"
    return (
        f"ddchange: {changes} {between} {verb} `{' '.join(request.test)}` fail; "
        "removing any one of them makes it pass."
    )


SHOWN_LINES = 40  # of each culprit's diff in the text report; --patch and --json have them all


def _shown_diff(diff: str) -> list[str]:
    lines = diff.rstrip("\n").splitlines()
    shown = ["    " + line for line in lines[:SHOWN_LINES]]
    if len(lines) > SHOWN_LINES:
        shown.append(
            f"    … {len(lines) - SHOWN_LINES} more lines (the whole change is in --patch)"
        )
    return shown


def _confirmation(confirmation: Confirmation | None) -> list[str]:
    if confirmation is None:
        return ["Not confirmed (--no-confirm)."]
    lines = []
    if confirmation.answer is Outcome.FAIL:
        lines.append("Confirmed: GOOD plus these changes fails again.")
    else:
        lines.append(
            f"NOT confirmed: GOOD plus these changes gave {confirmation.answer.value.upper()} "
            "when run again."
        )
    rest = {
        Outcome.PASS: "BAD without them passes: they are the whole cause.",
        Outcome.FAIL: "BAD without them still fails: the failure has other causes as well "
        "(search again from GOOD plus this answer).",
        Outcome.UNRESOLVED: "BAD without them could not be tested (unresolved).",
    }
    lines.append(rest[confirmation.rest])
    return lines


def _flaky(result: Result) -> list[str]:
    lines = [
        "WARNING: the test is flaky: the same changes gave different outcomes, so the answer "
        "below is not reliable. Evidence:"
    ]
    for evidence in result.disagreements:
        outcomes = ", ".join(o.value.upper() for o in evidence.outcomes)
        lines.append(f"  {_plural(evidence.size, 'change')} ({evidence.phase}): {outcomes}")
    lines.append("Make the test deterministic, or rerun with --retries N to see how often.")
    return lines


def text(result: Result) -> str:
    """The human summary: the answer first, then how sure it is, then what it cost."""
    lines = [_headline(result), ""]
    if result.outcome == "flaky":
        lines += [*_flaky(result), ""]
    for number, hunk in enumerate(result.culprits, 1):
        scope = result.scopes.get(hunk.id, "")
        lines += [f"[{number}] {_location(hunk, scope)}", *_shown_diff(hunk.diff), ""]
    if result.outcome != "interrupted":
        lines += _confirmation(result.confirmation)
    lines.append(_cost(result))
    lines.extend(f"not searched (kept as in GOOD): {path}" for path in result.diff.skipped)
    return "\n".join(lines) + "\n"


def _cost(result: Result) -> str:
    stats = result.stats
    resumed = f"{result.resumed} taken from earlier attempts, " if result.resumed else ""
    overhead = result.wall_time - result.command_time
    retried, resolved = result.resolutions
    resolution = (
        f" {_plural(retried, 'failed build')} retried with a missing dependency, {resolved} "
        "of them then resolved."
        if retried
        else ""
    )
    return (
        f"{_plural(result.tests_run, 'test')} run, {resumed}{stats.cache_hits} answered from "
        f"the cache, {stats.implied} implied by monotony; {result.wall_time:.1f}s in all, "
        f"{overhead:.1f}s of it ddchange's own.{resolution}"
    )


def _culprit(hunk: Hunk, scope: str) -> dict[str, Any]:
    return {
        "id": hunk.id,
        "path": hunk.path,
        "kind": hunk.kind,
        "function": scope,
        "header": hunk.header,
        "old_start": hunk.old_start,
        "old_lines": hunk.old_lines,
        "new_start": hunk.new_start,
        "new_lines": hunk.new_lines,
        "diff": hunk.diff,
    }


def record(record: TestRecord) -> dict[str, Any]:
    """One test as JSON: also the line format of `ddchange log`."""
    return {
        "number": record.number,
        "phase": record.phase,
        "config": sorted(record.config),
        "outcome": record.outcome.value,
        "reason": record.reason,
        "exit_code": record.exit_code,
        "duration": round(record.duration, 3),
    }


def as_json(result: Result) -> str:
    """The machine-readable report."""
    request, stats = result.request, result.stats
    confirmation = result.confirmation
    document = {
        "good": result.revisions.good,
        "bad": result.revisions.bad,
        "good_rev": request.good,
        "bad_rev": request.bad,
        "command": list(request.test),
        "build": request.build,
        "timeout": request.timeout,
        "granularity": request.granularity,
        "monotony": request.monotony,
        "outcome": result.outcome,
        "tests_run": result.tests_run,
        "resumed": result.resumed,
        "cache_hits": stats.cache_hits,
        "implied": stats.implied,
        "dependencies": request.dependencies,
        "resolution": {"retried": result.resolutions[0], "resolved": result.resolutions[1]},
        "hunks_total": len(result.diff.hunks),
        "wall_time": round(result.wall_time, 3),
        "command_time": round(result.command_time, 3),
        "confirmation": None
        if confirmation is None
        else {"answer": confirmation.answer.value, "rest": confirmation.rest.value},
        "flaky": [
            {"phase": d.phase, "size": d.size, "outcomes": [o.value for o in d.outcomes]}
            for d in result.disagreements
        ],
        "culprits": [_culprit(h, result.scopes.get(h.id, "")) for h in result.culprits],
        "skipped": list(result.diff.skipped),
        "log": [record(r) for r in result.log],
    }
    return json.dumps(document, indent=2) + "\n"


# -- the log: `ddchange log` writes it, `ddchange replay` reads it back --------------------------


def log_text(description: dict[str, object], records: list[TestRecord]) -> str:
    """A run's history, like `git bisect log`: comments for people, one JSON line per test."""
    argv = description.get("test")
    test = " ".join(map(str, argv)) if isinstance(argv, list) else ""
    lines = [
        f"# ddchange log: {description.get('good_rev')}..{description.get('bad_rev')} -- {test}",
        "# replay with `ddchange replay FILE` (edit outcomes first if you like)",
        "run " + json.dumps(description),
    ]
    for r in records:
        lines.append(
            f"# {r.number}: {r.phase}, {_plural(r.size, 'change')} -> "
            f"{r.outcome.value.upper()} ({r.reason})"
        )
        lines.append("test " + json.dumps(record(r)))
    return "\n".join(lines) + "\n"


def parse_log(text: str) -> tuple[dict[str, object], list[TestRecord]]:
    """The run description and the records of a `log_text`; ValueError(line, problem) if not."""
    description: dict[str, object] | None = None
    records: list[TestRecord] = []
    for number, line in enumerate(text.splitlines(), 1):
        kind, _, payload = line.strip().partition(" ")
        if kind in ("", "#") or kind.startswith("#"):
            continue
        try:
            data = json.loads(payload)
            if kind == "run" and isinstance(data, dict):
                description = data
            elif kind == "test" and isinstance(data, dict):
                records.append(_parse_record(len(records) + 1, data))
            else:
                raise ValueError(f"expected 'run {{...}}' or 'test {{...}}', got {kind!r}")
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(number, str(error)) from None
    if description is None:
        raise ValueError(0, "no 'run {...}' line")
    return description, records


def _parse_record(number: int, data: dict[str, Any]) -> TestRecord:
    return TestRecord(
        number,
        str(data["phase"]),
        frozenset(str(i) for i in data["config"]),
        Outcome(data["outcome"]),
        str(data.get("reason", "")),
        data.get("exit_code"),
        float(data.get("duration", 0.0)),
    )
