"""What the user reads and keeps: the text summary, the JSON report, the patch.

Owns the presentation of a `session.Result`, and nothing about how it was found. The text is for
people (each culprit with its file, function context, line numbers and diff; the cost of the
search); the JSON is for tools and keeps every number the text shows, plus the test log.
"""

from __future__ import annotations

import json
from typing import Any

from ddchange.hunks import Hunk
from ddchange.session import Result, TestRecord


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _location(hunk: Hunk) -> str:
    where = f"{hunk.path}:{hunk.new_start}" if hunk.kind == "text" else hunk.path
    context = f"  in {hunk.header.strip()}" if hunk.header.strip() else ""
    return f"{where} ({hunk.kind}){context}"


def text(result: Result) -> str:
    """The human summary: the answer first, then what it cost."""
    request, stats = result.request, result.stats
    lines = [
        f"ddchange: {_plural(len(result.culprits), 'change')} of {len(result.diff.hunks)} "
        f"between {request.good} ({result.revisions.good[:12]}) and {request.bad} "
        f"({result.revisions.bad[:12]}) {'makes' if len(result.culprits) == 1 else 'make'} "
        f"`{' '.join(request.test)}` fail; removing any one of them makes it pass.",
        "",
    ]
    for number, hunk in enumerate(result.culprits, 1):
        lines.append(f"[{number}] {_location(hunk)}")
        lines.extend("    " + line for line in hunk.diff.rstrip("\n").splitlines())
        lines.append("")
    overhead = result.wall_time - result.command_time
    lines.append(
        f"{_plural(stats.tests_run, 'test')} run (2 pre-flight), {stats.cache_hits} answered "
        f"from the cache, {stats.implied} implied by monotony; {result.wall_time:.1f}s in all, "
        f"{overhead:.1f}s of it ddchange's own."
    )
    for skipped in result.diff.skipped:
        lines.append(f"not searched (kept as in GOOD): {skipped}")
    return "\n".join(lines) + "\n"


def _culprit(hunk: Hunk) -> dict[str, Any]:
    return {
        "id": hunk.id,
        "path": hunk.path,
        "kind": hunk.kind,
        "header": hunk.header,
        "old_start": hunk.old_start,
        "old_lines": hunk.old_lines,
        "new_start": hunk.new_start,
        "new_lines": hunk.new_lines,
        "diff": hunk.diff,
    }


def _record(record: TestRecord) -> dict[str, Any]:
    return {
        "number": record.number,
        "phase": record.phase,
        "size": record.size,
        "outcome": record.outcome.value,
        "reason": record.reason,
        "duration": round(record.duration, 3),
    }


def as_json(result: Result) -> str:
    """The machine-readable report."""
    request, stats = result.request, result.stats
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
        "tests_run": stats.tests_run,
        "cache_hits": stats.cache_hits,
        "implied": stats.implied,
        "hunks_total": len(result.diff.hunks),
        "wall_time": round(result.wall_time, 3),
        "command_time": round(result.command_time, 3),
        "culprits": [_culprit(h) for h in result.culprits],
        "skipped": list(result.diff.skipped),
        "log": [_record(r) for r in result.log],
    }
    return json.dumps(document, indent=2) + "\n"
