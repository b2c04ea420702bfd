"""The HTML page (`--report`): the text's answer for a browser, and a plot of the search."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from html import escape
from importlib import resources

from ddchange.diff.hunks import Hunk
from ddchange.model import Outcome, Result, TestRecord
from ddchange.report.words import (
    commit_line,
    confirmation,
    flaky,
    headline,
    location,
    plural,
    route,
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


# The page's styles, inlined into every page (the page loads nothing).
_STYLE = resources.files(__package__).joinpath("page.css").read_text(encoding="utf-8")


def render(result: Result) -> str:
    """The report as one self-contained HTML page: summary, the changes, a plot of the search."""
    title = f"ddchange: {result.request.good}..{result.request.bad}"
    body = [
        "<h1>ddchange report</h1>",
        f'<p class="headline">{_h(headline(result))}</p>',
        *_html_summary(result),
        f"<h2>The answer: {_h(plural(len(result.culprits), 'change'))}</h2>",
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
        warning = "\n".join(flaky(result))  # shown line by line (white-space: pre-wrap)
        lines.append(f'<p class="warning">{_h(warning)}</p>')
    if route(result):
        lines.append(f"<p>{_h(route(result))}</p>")
    if result.outcome != "interrupted":
        sentences = confirmation(result.confirmation, isolate=request.isolate)
        lines.append(f"<p>{_h(' '.join(sentences))}</p>")
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
        f"{plural(len(result.diff.hunks), 'change')} in all, monotony {monotony}"
    )


def _tests(result: Result) -> str:
    retried, resolved = result.resolutions
    parts = [str(result.tests_run)]
    if result.resumed:
        parts.append(f"{result.resumed} more taken from earlier attempts")
    if retried:
        parts.append(f"{plural(retried, 'failed build')} retried, {resolved} then resolved")
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
    count = plural(len(result.passing), "change")
    changes = [_html_change(f"[P{n}]", hunk, result) for n, hunk in enumerate(result.passing, 1)]
    return [
        "<details>",
        f"<summary>Applied in both the passing and the failing set ({_h(count)})</summary>",
        *(changes or ["<p>None: GOOD itself is the passing side.</p>"]),
        "</details>",
    ]


def _html_change(label: str, hunk: Hunk, result: Result) -> str:
    """One change: where it is, the commits that brought it, and its diff."""
    where = location(hunk, result.scopes.get(hunk.id, ""))
    commits = [f"<li>commit {_h(commit_line(i))}</li>" for i in result.attribution.get(hunk.id, ())]
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
    title = f"The search: {plural(len(log), 'test')}, {plural(total, 'change')} in all"
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
    what = plural(record.size, "change") if commit is None else f"commit {commit[:12]}"
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
