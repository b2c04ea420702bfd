"""The JSON report: every number the text shows, the claims with their changes, and the whole
test log, for tools. Each change's diff is whole, as in the patch (the text and the HTML show a
bounded part of it): a tool matches on it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ddchange.model import Claim, Earlier, Level, Outcome, Result, TestRecord, cases_json
from ddchange.report.words import without_each

if TYPE_CHECKING:  # types only: `ddchange log` renders records without loading the diff's code
    from ddchange.diff.hunks import Hunk
    from ddchange.git import CommitInfo


def commit(info: CommitInfo) -> dict[str, Any]:
    return {"sha": info.sha, "author": info.author, "date": info.date, "subject": info.subject}


def _unit(hunk: Hunk, result: Result, without: Mapping[str, Outcome]) -> dict[str, Any]:
    outcome = without.get(hunk.id)
    return {
        **change(hunk, result.scopes.get(hunk.id, "")),
        "commits": [commit(info) for info in result.attribution.get(hunk.id, ())],
        # ddmin: the recorded outcome of the answer without it (pass: the failure is there)
        "without_it": None if outcome is None else outcome.value,
        # at block granularity, the block it is in (a block's units are one change)
        "block": result.blocks.get(hunk.id) if result.request.granularity == Level.BLOCK else None,
    }


def _route(result: Result) -> dict[str, Any]:
    found = result.route
    return {
        "strategy": found.strategy,
        "searched": found.searched,
        "fallback": found.fallback or None,
        # where GOOD is no ancestor of BAD: the commit they forked from, asked first
        "fork": found.fork,
        "first_bad": found.first_bad,
        "located_in": found.located_in,
        "bisect_tests": found.bisect_tests,
        # each commit the bisection tested, in order, with what its runs say
        "bisection": [
            {
                "commit": sha,
                "outcome": claim.outcome.value,
                "runs": claim.runs,
                "fails": claim.fails,
            }
            for sha, claim in found.bisected
        ],
        "merges": list(found.merges),
        "tip_runs": _claim(found.tip),
        # the answer applied on the user's GOOD, tested once (None: not asked)
        "on_good": None if found.on_good is None else found.on_good.outcome.value,
        "on_good_note": found.on_good_note or None,
    }


def change(hunk: Hunk, scope: str) -> dict[str, Any]:
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


def _claim(claim: Claim | None) -> dict[str, Any] | None:
    if claim is None:
        return None
    return {
        "changes": sorted(claim.config),  # unit ids, as in the log's "config"
        "outcome": claim.outcome.value,
        "runs": claim.runs,
        "fails": claim.fails,
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
        # --results: each test case's result ([status, kind]); absent without them
        **({"cases": cases_json(record.cases)} if record.cases is not None else {}),
    }


def render(result: Result) -> str:
    """The machine-readable report."""
    request, stats = result.request, result.stats
    confirmation, without = result.confirmation, without_each(result)
    route = result.route
    document = {
        # the user's GOOD and BAD, resolved
        "good": route.good or result.revisions.good,
        "bad": route.bad or result.revisions.bad,
        # the full commit name that --patch applies on: GOOD's where the whole range was
        # searched, else the parent of the first bad commit (the search's GOOD)
        "base": result.revisions.good,
        # the commit the searched changes end at: BAD, or the first bad commit
        "tip": result.revisions.bad,
        "first_bad": route.first_bad,
        "good_rev": request.good,
        "bad_rev": request.bad,
        "command": list(request.test),
        "build": request.build,
        "timeout": request.timeout,
        "granularity": request.granularity,
        "mode": "isolate" if request.isolate else "minimize",
        "route": _route(result),
        "monotony": request.monotony,
        "outcome": result.outcome,
        "tests_run": result.tests_run,
        "resumed": result.resumed,
        # where the tests taken over came from: a replayed log, or the same command's earlier
        # run, "when" it last tested, and its search options that differ from this run's
        "resumed_from": resumed_from(result.earlier),
        "cache_hits": stats.cache_hits,
        "implied": stats.implied,
        "dependencies": request.dependencies,
        "dependencies_learned": result.resolutions[0],
        "dependencies_disproved": result.resolutions[1],
        "hunks_total": len(result.diff.hunks),
        "wall_time": round(result.wall_time, 3),
        "command_time": round(result.command_time, 3),
        "jobs": result.width,
        "tests_ahead_unused": result.unused,
        "confirmation": None
        if confirmation is None
        else {
            "answer": confirmation.answer.value,
            "runs": confirmation.runs,
            "reruns": confirmation.reruns,
            "risk": confirmation.risk,
            "confidence": 1 - confirmation.risk,
            "flake_rate": confirmation.flake_rate,
            "checks": confirmation.checks,
            "contradicted": confirmation.contradicted,
            "rest": None if confirmation.rest is None else confirmation.rest.value,
            "good": _claim(confirmation.good),
            "good_failing_at_end": confirmation.good_failing,
            "bad": _claim(confirmation.bad),
        },
        "kept": list(result.kept),
        "ignored": list(result.ignored),
        "flaky": [
            {"phase": d.phase, "size": d.size, "outcomes": [o.value for o in d.outcomes]}
            for d in result.disagreements
        ],
        "answer": _claim(result.answer),
        "passing_set": _claim(result.passing_claim),
        # the recorded runs behind "1-minimal" (see model.Result.checks)
        "checks": [_claim(c) for c in result.checks],
        "culprits": [_unit(h, result, without) for h in result.culprits],
        "passing": [_unit(h, result, {}) for h in result.passing],
        "skipped": list(result.diff.skipped),
        "log": [record(r) for r in result.log],
    }
    return json.dumps(document, indent=2) + "\n"


def resumed_from(earlier: Earlier | None) -> dict[str, object] | None:
    """Where the tests taken over came from: a replayed log, or the same command's earlier
    run, "when" it last tested, and its search options that differ from this run's; or, where
    nothing was taken over, the files its commands ran that "changed" since that run."""
    if earlier is None:
        return None
    return {
        "replayed": earlier.replayed,
        "when": earlier.when,
        "options": list(earlier.options),
        "changed": list(earlier.changed),
    }
