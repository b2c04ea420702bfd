"""What the user reads and keeps: the text summary, the JSON report, the test log.

Owns the presentation of a `model.Result`, and nothing about how it was found. The text is for
people: the answer first (each culprit with its file, function context, line numbers and diff),
how sure it is (confirmed, flaky, or interrupted before it was 1-minimal), then what it cost. The
JSON is for tools and keeps every number the text shows, plus the whole test log. The HTML
page (`--report`) is the text's answer for a browser, self-contained: the diffs colored, and a
plot of the search.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass
from html import escape
from typing import Any

from ddchange.diff.hunks import Hunk
from ddchange.git import CommitInfo
from ddchange.model import Claim, Confirmation, Outcome, Result, TestRecord


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _location(hunk: Hunk, scope: str) -> str:
    where = f"{hunk.path}:{hunk.new_start}" if hunk.kind == "text" else hunk.path
    kind = "" if hunk.kind == "text" else f" ({hunk.kind})"
    return f"{where}{kind}  in {scope}" if scope else f"{where}{kind}"


def _headline(result: Result) -> str:
    """The answer in one sentence; every fact in it is read from a `Claim` (a recorded run)."""
    request, count = result.request, len(result.culprits)
    between = (
        f"between {request.good} ({result.revisions.good[:12]}) and {request.bad} "
        f"({result.revisions.bad[:12]})"
    )
    changes = f"{_plural(count, 'change')} of {len(result.diff.hunks)}"
    command = f"`{' '.join(request.test)}`"
    if result.outcome == "interrupted":
        return (
            f"ddchange: interrupted. Best answer so far: {changes} {between} ({_seen(result)}); "
            "it may not be minimal yet. Run the same command again to resume where this run "
            "stopped."
        )
    if result.outcome == "flaky":
        return (
            f"ddchange: NO RELIABLE ANSWER: the test is flaky. The smallest set seen to fail is "
            f"{changes} {between} ({_seen(result)} under {command})."
        )
    if request.isolate:
        return (
            f"ddchange: GOOD plus {_plural(len(result.passing), 'change')} passes; adding "
            f"{'this' if count == 1 else 'these'} {changes} {between} makes {command} fail. "
            f"{_minimality(result)}"
        )
    verb = "makes" if count == 1 else "make"
    return f"ddchange: {changes} {between} {verb} {command} fail. {_minimality(result)}"


def _seen(result: Result) -> str:
    """How often the answer was seen to fail, from its records."""
    claim = result.answer
    if claim is None or claim.fails == 0:
        return "nothing smaller than BAD was seen to fail"
    return f"it failed in {claim.fails} of {_plural(claim.runs, 'run')}"


def _minimality(result: Result) -> str:
    """What the recorded checks say about taking one change away (or, with --isolate, adding
    one to the passing set)."""
    if result.request.isolate:
        grown = [c.outcome for c in result.checks[0::2]]
        shrunk = [c.outcome for c in result.checks[1::2]]
        return (
            "The difference is 1-minimal, each change checked by a run: the passing set plus "
            f"it {_tally(grown, Outcome.PASS)}, and the failing set without it "
            f"{_tally(shrunk, Outcome.FAIL)}."
        )
    outcomes = [c.outcome for c in result.checks]
    if outcomes and all(o is Outcome.PASS for o in outcomes):
        return "Removing any one of them makes it pass (each checked by a run)."
    return f"It is 1-minimal: without any one of them, it {_tally(outcomes, Outcome.FAIL)}."


def _tally(outcomes: list[Outcome], never: Outcome) -> str:
    """'did not pass (2 failed, 1 could not be tested)', counted from recorded outcomes."""
    counts = {o: sum(x is o for x in outcomes) for o in Outcome if o is not never}
    parts = [
        f"{n} {'could not be tested' if o is Outcome.UNRESOLVED else o.value + 'ed'}"
        for o, n in counts.items()
        if n
    ]
    return f"did not {never.value} ({', '.join(parts) or 'no run'})"


def _commit_line(info: CommitInfo) -> str:
    return f"{info.sha[:12]} {info.author}, {info.date[:10]}: {info.subject}"


def route(result: Result) -> str:
    """How the search went about it, in one paragraph (for --strategy auto)."""
    found = result.route
    if found.strategy != "auto" or found.first_bad is None:
        return ""
    tests = _plural(found.bisect_tests, "test")
    what = (
        f"commit {found.first_bad[:12]} is the first failing commit"
        if len(found.suspects) == 1
        else f"the first failing commit is one of {len(found.suspects)} commits "
        f"{(found.last_good or '')[:12]}..{found.first_bad[:12]}"
    )
    if found.searched == "commit":
        how = "its changes fail on GOOD alone, so the search went inside them."
    else:
        how = (
            f"its changes alone gave {(found.alone or Outcome.PASS).value.upper()} on GOOD: "
            "they need changes of other commits (commits that only fail together, or a merge of "
            "branches that pass), so the search covered all of GOOD..BAD, oldest commits first."
        )
    return f"Route: bisecting the first-parent history took {tests}: {what}; {how}"


SHOWN_LINES = 40  # of each culprit's diff in the text report; --patch and --json have them all


def _shown_diff(diff: str) -> list[str]:
    lines = diff.rstrip("\n").splitlines()
    shown = ["    " + line for line in lines[:SHOWN_LINES]]
    if len(lines) > SHOWN_LINES:
        shown.append(
            f"    … {len(lines) - SHOWN_LINES} more lines (the whole change is in --patch)"
        )
    return shown


SHOWN_CONTEXT = 12  # passing changes listed by location in the text report


def _context(result: Result) -> list[str]:
    """The passing set of an isolation: where its changes are (the diffs are in --json)."""
    lines = [
        f"Applied in both the passing and the failing set ({_plural(len(result.passing), 'change')}"
        "; --json lists them all with their diffs):"
    ]
    for hunk in result.passing[:SHOWN_CONTEXT]:
        lines.append(f"    {_location(hunk, result.scopes.get(hunk.id, ''))}")
    if len(result.passing) > SHOWN_CONTEXT:
        lines.append(f"    … {len(result.passing) - SHOWN_CONTEXT} more")
    return lines


def _confirmation(confirmation: Confirmation | None, *, isolate: bool) -> list[str]:
    if confirmation is None:
        return ["Not confirmed (--no-confirm)."]
    if isolate:
        return [
            f"Checked again: GOOD plus the failing set gave {confirmation.answer.value.upper()}, "
            f"GOOD plus the passing set gave {confirmation.rest.value.upper()}"
            + (
                " (confirmed)."
                if (confirmation.answer, confirmation.rest) == (Outcome.FAIL, Outcome.PASS)
                else " (NOT as expected: FAIL and PASS)."
            )
        ]
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
    if route(result):
        lines += [route(result), ""]
    for number, hunk in enumerate(result.culprits, 1):
        scope = result.scopes.get(hunk.id, "")
        commits = [f"    commit {_commit_line(i)}" for i in result.attribution.get(hunk.id, ())]
        lines += [f"[{number}] {_location(hunk, scope)}", *commits, *_shown_diff(hunk.diff), ""]
    if result.passing:
        lines += [*_context(result), ""]
    if result.outcome != "interrupted":
        lines += _confirmation(result.confirmation, isolate=result.request.isolate)
    lines.append(_cost(result))
    lines.extend(f"not searched (kept as in GOOD): {path}" for path in result.diff.skipped)
    return "\n".join(lines) + "\n"


def _cost(result: Result) -> str:
    stats = result.stats
    resumed = f"{result.resumed} taken from earlier attempts, " if result.resumed else ""
    overhead = result.wall_time - result.command_time
    learned, disproved = result.resolutions
    resolution = (
        f" Dependencies: {_plural(learned, 'failed build')} taught a missing one, "
        f"{_plural(disproved, 'run')} disproved assumed ones."
        if learned or disproved
        else ""
    )
    return (
        f"{_plural(result.tests_run, 'test')} run, {resumed}{stats.cache_hits} answered from "
        f"the cache, {stats.implied} implied by monotony; {result.wall_time:.1f}s in all, "
        f"{overhead:.1f}s of it ddchange's own.{resolution}"
    )


def _commit(info: CommitInfo) -> dict[str, Any]:
    return {"sha": info.sha, "author": info.author, "date": info.date, "subject": info.subject}


def _unit(hunk: Hunk, result: Result) -> dict[str, Any]:
    return {
        **_culprit(hunk, result.scopes.get(hunk.id, "")),
        "commits": [_commit(info) for info in result.attribution.get(hunk.id, ())],
    }


def _route(result: Result) -> dict[str, Any]:
    found = result.route
    return {
        "strategy": found.strategy,
        "bisect_tests": found.bisect_tests,
        "last_good": found.last_good,
        "first_bad": found.first_bad,
        "suspects": list(found.suspects),
        "alone": None if found.alone is None else found.alone.value,
        "searched": found.searched,
    }


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
        "mode": "isolate" if request.isolate else "minimize",
        "route": _route(result),
        "monotony": request.monotony,
        "outcome": result.outcome,
        "tests_run": result.tests_run,
        "resumed": result.resumed,
        "cache_hits": stats.cache_hits,
        "implied": stats.implied,
        "dependencies": request.dependencies,
        "dependencies_learned": result.resolutions[0],
        "dependencies_disproved": result.resolutions[1],
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
        "answer": _claim(result.answer),
        "passing_set": _claim(result.passing_claim),
        # the recorded runs behind "1-minimal" (see model.Result.checks)
        "checks": [_claim(c) for c in result.checks],
        "culprits": [_unit(h, result) for h in result.culprits],
        "passing": [_unit(h, result) for h in result.passing],
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


# -- the HTML report: one page that works offline, forever --------------------------------------
#
# Self-contained on purpose: no network resources, no JavaScript, styles inline, the plot inline
# SVG; so it can be mailed, attached to a bug and printed. Everything from the repository or the
# user (paths, diffs, commit subjects, the test command) is escaped, and first made valid Unicode:
# bytes that are not UTF-8 arrive as surrogate escapes and are shown as \xNN.

SHOWN_HTML_LINES = 2000  # of each change's diff in the HTML report; --patch has them all

# C0 and C1 controls other than tab, line feed, form feed and carriage return, DEL, and the
# noncharacters: each is a parse error in HTML text, so the page shows them as escapes.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff]")


def _unicode(text: str) -> str:
    """`text` as valid Unicode: undecodable bytes (surrogate escapes) shown as \\xNN."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        raw = text.encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")


def _h(text: object) -> str:
    """Text from anywhere, safe inside an HTML element or a quoted attribute."""
    shown = _UNPRINTABLE.sub(lambda m: f"\\x{ord(m[0]):02x}", _unicode(str(text)))
    return escape(shown, quote=True)


_STYLE = """
:root { --pass: #1a7f37; --fail: #cf222e; --unresolved: #d97706;
  --muted: #57606a; --line: #d0d7de; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
  max-width: 1100px; margin: 2em auto; padding: 0 1.5em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid var(--line); padding-bottom: 0.2em;
  margin-top: 2em; }
h3 { font-size: 1em; margin: 0 0 0.4em; font-family: ui-monospace, monospace; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size: 13px; }
.headline { font-size: 1.1em; font-weight: 600; }
.note { color: var(--muted); white-space: pre-wrap; }
.warning { border-left: 4px solid var(--unresolved); background: #fff8e6; padding: 0.5em 1em;
  white-space: pre-wrap; }
table.summary { border-collapse: collapse; }
table.summary th { text-align: left; font-weight: 600; padding: 0.15em 1.5em 0.15em 0;
  vertical-align: top; white-space: nowrap; }
table.summary td { padding: 0.15em 0; }
.badge { font-weight: 700; padding: 0 0.4em; border-radius: 4px; color: #fff; }
.badge.found { background: var(--pass); }
.badge.flaky, .badge.interrupted { background: var(--unresolved); }
.change { border: 1px solid var(--line); border-radius: 6px; padding: 0.8em 1em;
  margin: 1em 0; break-inside: avoid; }
.change ul { margin: 0 0 0.5em; padding-left: 1.2em; color: var(--muted); font-size: 0.9em; }
pre.diff { margin: 0; padding: 0.4em 0; overflow-x: auto; background: #f6f8fa;
  border-radius: 4px; tab-size: 4; line-height: 1.35; }
pre.diff span { display: block; padding: 0 0.8em; }
pre.diff .add { background: #dafbe1; color: #116329; }
pre.diff .del { background: #ffebe9; color: #a40e26; }
pre.diff .ctx { color: var(--muted); }
pre.diff .hunk { background: #ddf4ff; color: #0550ae; }
pre.diff .meta { color: var(--muted); font-style: italic; }
details summary { cursor: pointer; font-weight: 600; margin: 1em 0; }
svg.plot { max-width: 100%; height: auto; }
svg.plot text { font: 12px system-ui, sans-serif; fill: #1f2328; }
svg.plot .title { font-size: 14px; font-weight: 600; }
svg.plot .axis { stroke: #1f2328; }
svg.plot .grid { stroke: #eaeef2; }
svg.plot .remaining { fill: none; stroke: #0969da; stroke-width: 2; }
svg.plot .pass { fill: var(--pass); }
svg.plot .fail { fill: var(--fail); }
svg.plot .unresolved { fill: var(--unresolved); }
svg.plot .neutral { fill: #8c959f; }
svg.plot .mark { stroke: #fff; stroke-width: 0.75; }
@media print {
  body { margin: 0; max-width: none; font-size: 11pt; }
  * { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
  pre.diff { overflow: visible; white-space: pre-wrap; word-break: break-all; }
}
"""


def html(result: Result) -> str:
    """The report as one self-contained HTML page: summary, the changes, a plot of the search."""
    title = f"ddchange: {result.request.good}..{result.request.bad}"
    body = [
        "<h1>ddchange report</h1>",
        f'<p class="headline">{_h(_headline(result))}</p>',
        *_html_summary(result),
        f"<h2>The answer: {_h(_plural(len(result.culprits), 'change'))}</h2>",
        *(_html_change(f"[{n}]", hunk, result) for n, hunk in enumerate(result.culprits, 1)),
        *_html_passing(result),
        "<h2>The search</h2>",
        _plot(result),
    ]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_h(title)}</title>",
            f"<style>{_STYLE}</style>",
            "</head>",
            "<body>",
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


_OUTCOMES = {
    "found": "found: seen to fail, 1-minimal by runs",
    "flaky": "flaky: the test gave different outcomes for the same changes; no reliable answer",
    "interrupted": "interrupted: the answer may not be minimal yet",
}


def _html_summary(result: Result) -> list[str]:
    """The run at a glance, then how sure the answer is (as in the text report)."""
    request, revisions, stats = result.request, result.revisions, result.stats
    badge = f'<span class="badge {_h(result.outcome)}">{_h(result.outcome)}</span>'
    rows = [
        ("Outcome", f"{badge} {_h(_OUTCOMES.get(result.outcome, ''))}"),
        ("GOOD", f"{_h(request.good)} <code>{_h(revisions.good)}</code>"),
        ("BAD", f"{_h(request.bad)} <code>{_h(revisions.bad)}</code>"),
        ("Test", f"<code>{_h(' '.join(request.test))}</code>"),
        ("Build", f"<code>{_h(request.build)}</code>" if request.build else "none"),
        ("Search", _h(_search(result))),
        ("Tests run", _h(_tests(result))),
        ("Cache hits", _h(stats.cache_hits)),
        ("Implied by monotony", _h(stats.implied)),
        ("Wall time", _h(_times(result))),
    ]
    lines = ['<table class="summary">']
    lines += [f"<tr><th>{label}</th><td>{value}</td></tr>" for label, value in rows]
    lines.append("</table>")
    if result.outcome == "flaky":
        warning = "\n".join(_flaky(result))  # shown line by line (white-space: pre-wrap)
        lines.append(f'<p class="warning">{_h(warning)}</p>')
    if route(result):
        lines.append(f"<p>{_h(route(result))}</p>")
    if result.outcome != "interrupted":
        confirmation = _confirmation(result.confirmation, isolate=request.isolate)
        lines.append(f"<p>{_h(' '.join(confirmation))}</p>")
    lines += [
        f"<p>Not searched (kept as in GOOD): <code>{_h(p)}</code></p>" for p in result.diff.skipped
    ]
    return lines


def _search(result: Result) -> str:
    request = result.request
    mode = "isolate (dd)" if request.isolate else "minimize (ddmin)"
    monotony = "assumed" if request.monotony else "not assumed"
    return (
        f"{mode}, strategy {request.strategy}, down to {request.granularity}s, "
        f"{_plural(len(result.diff.hunks), 'change')} in all, monotony {monotony}"
    )


def _tests(result: Result) -> str:
    retried, resolved = result.resolutions
    parts = [str(result.tests_run)]
    if result.resumed:
        parts.append(f"{result.resumed} more taken from earlier attempts")
    if retried:
        parts.append(f"{_plural(retried, 'failed build')} retried, {resolved} then resolved")
    return "; ".join(parts)


def _times(result: Result) -> str:
    return (
        f"{result.wall_time:.1f} s, {result.command_time:.1f} s of it in the build and test "
        "commands"
    )


def _html_passing(result: Result) -> list[str]:
    """--isolate: the passing set, collapsed (it is context, not the answer)."""
    if not result.request.isolate:
        return []
    count = _plural(len(result.passing), "change")
    changes = [_html_change(f"[P{n}]", hunk, result) for n, hunk in enumerate(result.passing, 1)]
    return [
        "<details>",
        f"<summary>Applied in both the passing and the failing set ({_h(count)})</summary>",
        *(changes or ["<p>None: GOOD itself is the passing side.</p>"]),
        "</details>",
    ]


def _html_change(label: str, hunk: Hunk, result: Result) -> str:
    """One change: where it is, the commits that brought it, and its diff."""
    where = _location(hunk, result.scopes.get(hunk.id, ""))
    commits = [
        f"<li>commit {_h(_commit_line(i))}</li>" for i in result.attribution.get(hunk.id, ())
    ]
    return "\n".join(
        [
            '<section class="change">',
            f"<h3>{_h(label)} {_h(where)}</h3>",
            *(["<ul>", *commits, "</ul>"] if commits else []),
            _html_diff(hunk.diff),
            "</section>",
        ]
    )


_DIFF_CLASSES = {"+": "add", "-": "del", " ": "ctx"}


def _html_diff(diff: str) -> str:
    """A unit's diff with each line colored by what it does (added, removed, context, @@)."""
    lines = diff.rstrip("\n").split("\n")
    shown = []
    for line in lines[:SHOWN_HTML_LINES]:
        kind = "hunk" if line.startswith("@@") else _DIFF_CLASSES.get(line[:1], "meta")
        shown.append(f'<span class="{kind}">{_h(line)}\n</span>')
    if len(lines) > SHOWN_HTML_LINES:
        more = len(lines) - SHOWN_HTML_LINES
        shown.append(f'<span class="meta">… {more} more lines (all are in --patch)\n</span>')
    return f'<pre class="diff">{"".join(shown)}</pre>'


# -- the plot: the search as in Zeller's figures ----------------------------------------------
#
# x is the test number, y the number of changes applied. Each test is a marker at the size of
# the configuration it tested, colored by its outcome; the step line is what is left to search,
# the smallest configuration seen to fail so far. Bisection tests whole commits, not sets of
# changes: those are diamonds at the top, and leave the line where it is.

PLOT_WIDTH, PLOT_HEIGHT = 880, 420
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 24, 84, 52  # margins around the plotting area
LOG_ABOVE = 100  # more changes than this: y is logarithmic, else the small sizes are invisible


@dataclass(frozen=True)
class _Scale:
    """Data to pixels along one axis: linear, or by log10(1 + value) so that 0 has a place."""

    lo: float
    hi: float
    start: float  # the pixel of lo
    end: float  # the pixel of hi
    log: bool = False

    def _warp(self, value: float) -> float:
        return math.log10(1 + value) if self.log else value

    def __call__(self, value: float) -> float:
        span = (self._warp(self.hi) - self._warp(self.lo)) or 1.0
        return self.start + (self._warp(value) - self._warp(self.lo)) / span * (
            self.end - self.start
        )


def _ticks(lo: int, hi: int, most: int = 8) -> list[int]:
    """Round ticks in lo..hi, at most `most` (≥ 4) of them: steps of 1, 2 or 5 times a power of
    ten. At least one, since the step is never wider than hi - lo (or 1)."""
    steps = (m * 10**k for k in itertools.count() for m in (1, 2, 5))
    step = next(s for s in steps if hi - lo <= s * (most - 1))
    return list(range(-(-lo // step) * step, hi + 1, step))


def _y_ticks(y: _Scale) -> list[int]:
    """Round ticks (powers of ten on a log scale), and the top if no tick is near it."""
    top = int(y.hi)
    ticks = [0, *(10**k for k in range(len(str(top))) if 10**k <= top)] if y.log else []
    ticks = ticks or _ticks(0, top)
    return ticks + [top] if abs(y(top) - y(ticks[-1])) > 14 else ticks


def _tested_commit(record: TestRecord) -> str | None:
    """The commit a bisection test built as a whole ({"commit:<sha>"}); None for a change set."""
    if record.phase != "bisect":
        return None
    return next(iter(record.config), "").removeprefix("commit:")


def _remaining(result: Result) -> list[tuple[int, int]]:
    """(test number, the size of the smallest configuration seen to fail up to that test)."""
    size, steps = len(result.diff.hunks), []
    for record in result.log:
        if record.outcome is Outcome.FAIL and _tested_commit(record) is None:
            size = min(size, record.size)
        steps.append((record.number, size))
    return steps


def _plot(result: Result) -> str:
    """The search as an inline SVG figure; a note instead when no test was run."""
    log = result.log
    if not log:
        return '<p class="note">No tests were run, so there is no search to plot.</p>'
    total = len(result.diff.hunks)
    top = max(1, total, *(r.size for r in log if _tested_commit(r) is None))
    numbers = [record.number for record in log]
    x = _Scale(min(numbers) - 0.5, max(numbers) + 0.5, _LEFT, PLOT_WIDTH - _RIGHT)
    y = _Scale(0, top, PLOT_HEIGHT - _BOTTOM, _TOP, log=top > LOG_ABOVE)
    radius = max(1.5, min(5.0, (x.end - x.start) / len(log) / 2.5))
    steps = "".join(f"H{x(number):.1f}V{y(size):.1f}" for number, size in _remaining(result))
    title = f"The search: {_plural(len(log), 'test')}, {_plural(total, 'change')} in all"
    return "\n".join(
        [
            f'<svg class="plot" role="img" aria-label="{_h(title)}" width="{PLOT_WIDTH}" '
            f'height="{PLOT_HEIGHT}" viewBox="0 0 {PLOT_WIDTH} {PLOT_HEIGHT}">',
            f'<text class="title" x="{_LEFT}" y="22">{_h(title)}</text>',
            *_axes(x, y),
            f'<path class="remaining" d="M{x.start:.1f},{y(total):.1f}{steps}H{x.end:.1f}"/>',
            *(_marker(record, x, y(total), y, radius) for record in log),
            *_legend(any(_tested_commit(r) is not None for r in log)),
            "</svg>",
        ]
    )


def _axes(x: _Scale, y: _Scale) -> list[str]:
    """Grid lines and labels for both axes, the axes themselves, and their titles."""
    bottom, left = y.start, x.start
    parts = []
    for value in _y_ticks(y):
        at = y(value)
        parts.append(f'<line class="grid" x1="{left}" x2="{x.end}" y1="{at:.1f}" y2="{at:.1f}"/>')
        parts.append(f'<text x="{left - 6}" y="{at + 4:.1f}" text-anchor="end">{value}</text>')
    for value in _ticks(math.ceil(x.lo), math.floor(x.hi)):
        at = x(value)
        parts.append(
            f'<line class="axis" x1="{at:.1f}" x2="{at:.1f}" y1="{bottom}" y2="{bottom + 5}"/>'
        )
        parts.append(f'<text x="{at:.1f}" y="{bottom + 18}" text-anchor="middle">{value}</text>')
    scale = " (log scale)" if y.log else ""
    middle = (y.start + y.end) / 2
    parts += [
        f'<line class="axis" x1="{left}" x2="{left}" y1="{y.end}" y2="{bottom}"/>',
        f'<line class="axis" x1="{left}" x2="{x.end}" y1="{bottom}" y2="{bottom}"/>',
        f'<text x="{(x.start + x.end) / 2:.1f}" y="{bottom + 40}" text-anchor="middle">'
        "test number</text>",
        f'<text transform="translate(16 {middle:.1f}) rotate(-90)" text-anchor="middle">'
        f"changes applied{scale}</text>",
    ]
    return parts


def _marker(record: TestRecord, x: _Scale, top: float, y: _Scale, radius: float) -> str:
    """One test: a circle at its configuration's size, a diamond at `top` for a whole commit."""
    commit = _tested_commit(record)
    what = _plural(record.size, "change") if commit is None else f"commit {commit[:12]}"
    because = f" ({record.reason})" if record.reason else ""
    tip = (
        f"<title>test {record.number} ({_h(record.phase)}): {_h(what)} → "
        f"{record.outcome.value.upper()}{_h(because)}</title>"
    )
    kind = f"mark {record.outcome.value}"
    cx = x(record.number)
    if commit is None:
        cy = y(record.size)
        return f'<circle class="{kind}" cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}">{tip}</circle>'
    return f'<path class="{kind} commit" d="{_diamond(cx, top, radius * 1.5)}">{tip}</path>'


def _diamond(cx: float, cy: float, r: float) -> str:
    return f"M{cx:.1f},{cy - r:.1f}l{r:.1f},{r:.1f}l{-r:.1f},{r:.1f}l{-r:.1f},{-r:.1f}z"


def _legend(bisected: bool) -> list[str]:
    """A row under the title for the markers, and one for the line."""
    parts, at, row = [], float(_LEFT), 44
    markers = [(o.value, o.value.upper()) for o in Outcome]
    for kind, label in markers + ([("commit", "a whole commit (bisection)")] if bisected else []):
        if kind == "commit":
            parts.append(f'<path class="neutral" d="{_diamond(at + 5, row - 4, 6)}"/>')
        else:
            parts.append(f'<circle class="{kind}" cx="{at + 5}" cy="{row - 4}" r="5"/>')
        parts.append(f'<text x="{at + 14}" y="{row}">{label}</text>')
        at += 30 + 8 * len(label)
    return [
        *parts,
        f'<line class="remaining" x1="{_LEFT}" x2="{_LEFT + 22}" y1="{row + 16}" y2="{row + 16}"/>',
        f'<text x="{_LEFT + 28}" y="{row + 20}">changes remaining (the smallest failing set so '
        "far)</text>",
    ]
