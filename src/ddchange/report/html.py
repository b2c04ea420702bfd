"""The HTML page (`--report`): the text's answer for a browser, and a plot of the search.

Owns what the page says and the plot's geometry, as plain data (`_Page`, `_Plot`); the markup
is the template `templates/page.html` and the styles are `templates/page.css`. Everything from
the repository or the user (paths, diffs, commit subjects, the test command) is escaped by the
template environment, and first made valid Unicode: bytes that are not UTF-8 arrive as
surrogate escapes and are shown as \\xNN.
"""

from __future__ import annotations

import itertools
import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from ddchange.diff.hunks import Hunk
from ddchange.diff.inputs import size_named
from ddchange.model import (
    Ending,
    Outcome,
    Reduction,
    Result,
    Stage,
    SuiteResult,
    TestRecord,
    tree_commit,
)
from ddchange.report import reduced, suite
from ddchange.report.words import (
    base_name,
    commit_line,
    confirmation,
    escaped,
    flaky,
    headline,
    limits,
    location,
    minimal_by_runs,
    plural,
    reused,
    route,
    shown_diff,
)

if TYPE_CHECKING:  # types only
    from ddchange.git import CommitInfo

# Of each change's diff, the HTML report shows this many lines of at most this many characters;
# --patch has them all, whole.
SHOWN_HTML_LINES, SHOWN_HTML_WIDTH = 2000, 500

# C0 and C1 controls other than tab, line feed, form feed and carriage return, DEL, and the
# noncharacters: each is a parse error in HTML text, so the page shows them as escapes. So are
# the bidirectional overrides and isolates, which would reorder the text shown after them.
_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufdd0-\ufdef\ufffe\uffff]"
)


def _unicode(text: str) -> str:
    """`text` as valid Unicode: undecodable bytes (surrogate escapes) shown as \\xNN."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        raw = text.encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")


def _h(text: object) -> str:
    """Text from anywhere, safe inside an HTML element or a quoted attribute."""
    shown = _UNPRINTABLE.sub(lambda m: escaped(m[0]), _unicode(str(text)))
    return escape(shown, quote=True)


# The page's styles, inlined into every page (the page loads nothing).
_STYLE = resources.files(__package__).joinpath("templates", "page.css").read_text(encoding="utf-8")


def render(result: Result) -> str:
    """The report as one self-contained HTML page: summary, the changes, a plot of the search."""
    return _PAGE.render(page=_page(result), style=Markup(_STYLE))


_OUTCOMES = {
    Ending.FOUND: "found: seen to fail, 1-minimal by runs",
    Ending.FLAKY: "flaky: the test gave different outcomes for the same changes; "
    "no reliable answer",
    Ending.INTERRUPTED: "interrupted: the answer may not be minimal yet",
}


def _outcome_words(result: Result) -> str:
    """The outcome in words; "1-minimal" only where each removal was seen to pass."""
    single = [c.outcome for c in result.checks[: len(result.checks) - result.wider]]
    if result.outcome == Ending.FOUND and not (result.request.isolate or minimal_by_runs(single)):
        return "found: seen to fail; not shown to be 1-minimal (removals could not be tested)"
    return _OUTCOMES.get(result.outcome, "")


@dataclass(frozen=True)
class _Line:
    kind: str  # add, del, ctx, hunk or meta: how the line is colored
    text: str


@dataclass(frozen=True, kw_only=True)
class _Change:
    """One change: where it is, the commits that brought it, and its diff line by line."""

    label: str
    where: str
    commits: list[str]
    lines: list[_Line]
    note: str  # what was left out of the diff (see words.ShownDiff), or ""


@dataclass(frozen=True, kw_only=True)
class _Page:
    """Everything the page template prints, as text (it escapes all of it)."""

    title: str
    headline: str
    outcome: str
    outcome_words: str
    good: str
    good_sha: str
    bad: str
    bad_sha: str
    # Inside the history: the first bad commit, and the commit the answer applies on ("": the
    # whole range was searched, on GOOD)
    first_bad: str
    base: str
    test: str
    build: str
    search: str
    tests: str
    cache_hits: int
    implied: int
    times: str
    warning: str  # flaky: shown line by line (white-space: pre-wrap)
    notes: list[str]  # the route taken, and how the answer was confirmed
    skipped: tuple[str, ...]
    answer: str
    culprits: list[_Change]
    passing: list[_Change] | None  # None without --isolate
    passing_count: str
    plot: _Plot | None  # None when no test was run


def _page(result: Result) -> _Page:
    request, revisions, stats = result.request, result.revisions, result.stats
    notes = [route(result)] if route(result) else []
    notes += limits(result)
    if result.outcome == Ending.FOUND:  # a flaky run's reruns prove nothing
        checked = confirmation(result.confirmation, isolate=request.isolate, base=base_name(result))
        notes.append(" ".join(checked))
    passing = [
        _change(f"[P{n}]", [hunk], result.scopes, result.attribution)
        for n, hunk in enumerate(result.passing, 1)
    ]
    return _Page(
        title=f"ddchange: {request.good}..{request.bad}",
        headline=headline(result),
        outcome=result.outcome,
        outcome_words=_outcome_words(result),
        good=request.good,
        good_sha=result.route.good or revisions.good,
        bad=request.bad,
        bad_sha=result.route.bad or revisions.bad,
        first_bad=(result.route.first_bad or "") if result.route.inside else "",
        base=f"{base_name(result)}: {revisions.good}" if result.route.inside else "",
        test=shlex.join(request.test),
        build=request.build or "",
        search=_search(result),
        tests=_tests(result),
        cache_hits=stats.cache_hits,
        implied=stats.implied,
        times=_times(result),
        warning="\n".join(flaky(result))
        if result.outcome == Ending.FLAKY or result.disagreements
        else "",
        notes=notes,
        skipped=result.diff.skipped,
        answer=plural(len(result.culprits), "change"),
        culprits=[
            _change(f"[{n}]", [hunk], result.scopes, result.attribution)
            for n, hunk in enumerate(result.culprits, 1)
        ],
        passing=passing if request.isolate else None,
        passing_count=plural(len(result.passing), "change"),
        plot=_plot(result),
    )


@dataclass(frozen=True, kw_only=True)
class _Cause:
    number: int
    title: str
    where: str  # its changes' places, short
    inside: str  # the first bad commit it is in, and the parent its patch applies on
    backing: str
    flaky: bool
    tests: tuple[str, ...]
    changes: list[_Change]


@dataclass(frozen=True, kw_only=True)
class _SuitePage:
    """Everything the suite template prints, as text (it escapes all of it)."""

    title: str
    headline: str
    outcome: str
    good: str
    good_sha: str
    bad: str
    bad_sha: str
    test: str
    results: str
    tests: str
    causes: list[_Cause]
    already_failing: tuple[str, ...]
    newly_passing: tuple[str, ...]


def render_suite(result: SuiteResult) -> str:
    """A whole suite triaged as one self-contained page: each cause, its tests, its changes."""
    request, revisions = result.request, result.revisions
    causes = []
    for number, cause in enumerate(result.causes, 1):
        blocks = suite.changes_of(result, number - 1)
        found = result.changes[number - 1]
        causes.append(
            _Cause(
                number=number,
                title=f"{plural(len(blocks), 'change')}, {plural(len(cause.tests), 'test')}",
                where="; ".join(location(b[0], found.scopes.get(b[0].id, "")) for b in blocks),
                inside=suite.where(result, number - 1),
                backing=suite.backing(
                    cause,
                    suite.base_name(result, number - 1),
                    isolate=result.request.isolate,
                    shown=len(blocks),
                ),
                flaky=cause.flaky,
                tests=cause.tests,
                changes=[
                    _change(f"[{number}.{n}]", b, found.scopes, found.attribution)
                    for n, b in enumerate(blocks, 1)
                ],
            )
        )
    page = _SuitePage(
        title=f"ddchange: {request.good}..{request.bad}, a whole suite",
        headline=suite.headline(result),
        outcome=result.outcome,
        good=request.good,
        good_sha=revisions.good,
        bad=request.bad,
        bad_sha=revisions.bad,
        test=shlex.join(request.test),
        results=" ".join(request.results),
        tests=f"{plural(result.tests_run, 'test')} for "
        f"{plural(len(result.targets), 'failing test')}",
        causes=causes,
        already_failing=result.already_failing,
        newly_passing=result.newly_passing,
    )
    return _SUITE.render(page=page, style=Markup(_STYLE))


def _search(result: Result) -> str:
    request = result.request
    mode = "isolate (dd)" if request.isolate else "minimize (ProbDD)"
    monotony = "assumed" if request.monotony else "not assumed"
    return (
        f"{mode}, strategy {request.strategy}, down to {request.granularity}s, "
        f"{plural(len(result.diff.hunks), 'change')} in all, monotony {monotony}"
    )


def _tests(result: Result) -> str:
    retried, resolved = result.resolutions
    parts = [str(result.tests_run)]
    if result.earlier:
        parts.append(reused(result.resumed, result.earlier))
    if retried:
        parts.append(f"{plural(retried, 'failed build')} retried, {resolved} then resolved")
    return "; ".join(parts)


def _times(result: Result) -> str:
    jobs = result.width
    if jobs > 1:  # the builds and tests overlap
        return (
            f"{result.wall_time:.1f} s, up to {jobs} tests at once, "
            f"{plural(result.unused, 'more test')} run ahead and not needed"
        )
    return (
        f"{result.wall_time:.1f} s, {result.command_time:.1f} s of it in the build and test "
        "commands"
    )


_DIFF_CLASSES = {"+": "add", "-": "del", " ": "ctx"}


def _change(
    label: str,
    hunks: list[Hunk],
    scopes: Mapping[str, str],
    attribution: Mapping[str, tuple[CommitInfo, ...]],
) -> _Change:
    """One change of the page: `hunks` (one unit, or the units of one block) as one diff."""
    first = hunks[0]
    shown = shown_diff(
        "".join(h.diff for h in hunks), lines=SHOWN_HTML_LINES, width=SHOWN_HTML_WIDTH
    )
    infos = dict.fromkeys(info for h in hunks for info in attribution.get(h.id, ()))
    return _Change(
        label=label,
        where=location(first, scopes.get(first.id, "")),
        commits=[commit_line(info) for info in infos],
        lines=[_Line(_line_kind(line), line) for line in shown.lines],
        note=shown.note(),
    )


def _line_kind(line: str) -> str:
    return "hunk" if line.startswith("@@") else _DIFF_CLASSES.get(line[:1], "meta")


# -- the plot: the search as in Zeller's figures ----------------------------------------------
#
# x is the test number, y the number of changes applied. Each test is a marker at the size of
# the configuration it tested, colored by its outcome; the step line is what is left to search,
# the smallest configuration seen to fail so far. Bisection tests whole commits, not sets of
# changes: those are diamonds at the top, and leave the line where it is.

PLOT_WIDTH, PLOT_HEIGHT = 880, 420
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 24, 84, 52  # margins around the plotting area
_LEGEND_ROW = 44  # the baseline of the legend's markers, under the title
LOG_ABOVE = 100  # more changes than this: y is logarithmic, else the small sizes are invisible


@dataclass(frozen=True, kw_only=True)
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
    """What a test built as a whole tree, not a set of the searched changes: "commit <sha>"
    ({"commit:<sha>"}: the bisection's, BAD's before it), or the answer applied on GOOD;
    None for a change set."""
    if record.phase == Stage.ON_GOOD:
        return "the answer on GOOD"
    commit = tree_commit(record.config)
    return None if commit is None else f"commit {commit[:12]}"


def _remaining(result: Result) -> list[tuple[int, int]]:
    """(test number, the size of the smallest configuration seen to fail up to that test)."""
    size, steps = len(result.diff.hunks), []
    for record in result.log:
        if record.outcome is Outcome.FAIL and _tested_commit(record) is None:
            size = min(size, record.size)
        steps.append((record.number, size))
    return steps


@dataclass(frozen=True, kw_only=True)
class _Marker:
    """A circle at (x, y), or a diamond (a whole commit); on the plot one test, with its tooltip
    as `text`, and in the legend one kind of test, with its label."""

    kind: str  # an outcome, or "commit" in the legend
    x: float
    y: float
    diamond: str  # the diamond's path data; "" for a circle
    text: str


@dataclass(frozen=True, kw_only=True)
class _Plot:
    """The search plot's geometry, in pixels; the template draws it."""

    title: str
    left: int
    right: int
    top: int
    bottom: int
    log: bool
    y_ticks: list[tuple[float, int]]  # (pixel, value)
    x_ticks: list[tuple[float, int]]
    remaining: str  # the step line's path data
    radius: float
    marks: list[_Marker]
    legend: list[_Marker]
    y_label: str = "changes applied"
    line_label: str = "changes remaining (the smallest failing set so far)"
    width: int = PLOT_WIDTH
    height: int = PLOT_HEIGHT
    legend_row: int = _LEGEND_ROW


def _axes(numbers: list[int], top: int) -> tuple[_Scale, _Scale, dict[str, Any]]:
    """The scales of a plot of tests `numbers` against sizes up to `top`, and the frame's
    fields of its `_Plot`."""
    x = _Scale(lo=min(numbers) - 0.5, hi=max(numbers) + 0.5, start=_LEFT, end=PLOT_WIDTH - _RIGHT)
    y = _Scale(lo=0, hi=top, start=PLOT_HEIGHT - _BOTTOM, end=_TOP, log=top > LOG_ABOVE)
    frame = {
        "left": _LEFT,
        "right": PLOT_WIDTH - _RIGHT,
        "top": _TOP,
        "bottom": PLOT_HEIGHT - _BOTTOM,
        "log": y.log,
        "y_ticks": [(y(value), value) for value in _y_ticks(y)],
        "x_ticks": [(x(value), value) for value in _ticks(math.ceil(x.lo), math.floor(x.hi))],
        "radius": max(1.5, min(5.0, (x.end - x.start) / len(numbers) / 2.5)),
    }
    return x, y, frame


def _plot(result: Result) -> _Plot | None:
    """The search as a figure; None when no test was run."""
    log = result.log
    if not log:
        return None
    total = len(result.diff.hunks)
    top = max(1, total, *(r.size for r in log if _tested_commit(r) is None))
    x, y, frame = _axes([record.number for record in log], top)
    steps = "".join(f"H{x(number):.1f}V{y(size):.1f}" for number, size in _remaining(result))
    return _Plot(
        title=f"The search: {plural(len(log), 'test')}, {plural(total, 'change')} in all",
        **frame,
        remaining=f"M{x.start:.1f},{y(total):.1f}{steps}H{x.end:.1f}",
        marks=[_mark(record, x, y(total), y, frame["radius"]) for record in log],
        legend=_legend(any(_tested_commit(r) is not None for r in log)),
    )


def _mark(record: TestRecord, x: _Scale, top: float, y: _Scale, radius: float) -> _Marker:
    """One test: a circle at its configuration's size, a diamond at `top` for a whole commit."""
    commit = _tested_commit(record)
    what = plural(record.size, "change") if commit is None else commit
    because = f" ({record.reason})" if record.reason else ""
    tip = f"test {record.number} ({record.phase}): {what} → {record.outcome.value.upper()}{because}"
    cx = x(record.number)
    if commit is None:
        return _Marker(kind=record.outcome.value, x=cx, y=y(record.size), diamond="", text=tip)
    return _Marker(
        kind=record.outcome.value, x=cx, y=top, diamond=_diamond(cx, top, radius * 1.5), text=tip
    )


def _diamond(cx: float, cy: float, r: float) -> str:
    return f"M{cx:.1f},{cy - r:.1f}l{r:.1f},{r:.1f}l{-r:.1f},{r:.1f}l{-r:.1f},{-r:.1f}z"


def _legend(bisected: bool) -> list[_Marker]:
    """The legend's markers, side by side from the left margin (the line's key follows them)."""
    keys, at = [], float(_LEFT)
    markers = [(o.value, o.value.upper()) for o in Outcome]
    whole = ("commit", "a whole tree (a commit of the bisection, the answer on GOOD)")
    for kind, label in markers + ([whole] if bisected else []):
        diamond = _diamond(at + 5, _LEGEND_ROW - 4, 6) if kind == "commit" else ""
        keys.append(_Marker(kind=kind, x=at, y=_LEGEND_ROW, diamond=diamond, text=label))
        at += 30 + 8 * len(label)
    return keys


def _px(value: float) -> str:
    """A coordinate as the page writes it: one decimal."""
    return f"{value:.1f}"


def _shown(value: object) -> object:
    """Every value the template prints, made valid Unicode and escaped (markup passes as is)."""
    return value if isinstance(value, Markup) else Markup(_h(value))


_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.PackageLoader("ddchange.report"),
    autoescape=True,
    finalize=_shown,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENVIRONMENT.filters["px"] = _px
_PAGE = _ENVIRONMENT.get_template("page.html")
_SUITE = _ENVIRONMENT.get_template("suite.html")


# -- a reduction (`ddchange reduce`) -------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _ReducedPage:
    """Everything the reduction's template prints, as text (it escapes all of it)."""

    title: str
    headline: str
    outcome: str
    test: str
    files: list[tuple[str, str, str, str]]  # path, output, before, after (sizes)
    backing: list[str]
    passes: list[tuple[str, int, int]]  # name, tests, bytes taken out
    before: str  # the original (its start, where it is long)
    after: str  # the result
    plot: _Plot | None


SHOWN_BYTES = 4000  # of the original and of the result on the page


def render_reduction(result: Reduction) -> str:
    """A reduction as one self-contained page: sizes, what backs the result, each pass, the
    result beside the original, and the size of each input tested."""
    lines = reduced.render(result).splitlines()
    page = _ReducedPage(
        title=f"ddchange reduce: {', '.join(p.name for p in result.request.files)}",
        headline=lines[0],
        outcome=result.outcome,
        test=shlex.join(result.request.test),
        files=[
            (str(path), str(out), f"{len(before):,} bytes", f"{len(after):,} bytes")
            for path, out, before, after in zip(
                result.request.files,
                result.outputs,
                result.original,
                result.reduced,
                strict=True,
            )
        ],
        backing=[line.strip() for line in lines[1:3]],
        passes=[(p.name.value, p.tests, p.saved) for p in result.passes],
        before=_shown_input(result.original),
        after=_shown_input(result.reduced),
        plot=_reduction_plot(result),
    )
    return _REDUCED.render(page=page, style=Markup(_STYLE))


def _shown_input(contents: tuple[bytes, ...]) -> str:
    text = "\n".join(data.decode("utf-8", "replace") for data in contents)
    cut = len(text) - SHOWN_BYTES
    return text[:SHOWN_BYTES] + (f"\n… {cut:,} more characters" if cut > 0 else "")


def _reduction_plot(result: Reduction) -> _Plot | None:
    """The size of each input tested, by its outcome, and the smallest seen to fail so far."""
    sized = [(r, size_named(min(r.config))) for r in result.log if r.config]
    points = [(r, s) for r, s in sized if s is not None]
    if not points:
        return None
    start = sum(len(data) for data in result.original)
    top = max(start, *(s for _, s in points))
    x, y, frame = _axes([r.number for r, _ in points], top)
    smallest, steps = start, []
    for record, tested in points:
        if record.outcome is Outcome.FAIL:
            smallest = min(smallest, tested)
        steps.append(f"H{x(record.number):.1f}V{y(smallest):.1f}")
    return _Plot(
        title=f"The reduction: {plural(len(points), 'test')}, {start:,} bytes at the start",
        **frame,
        remaining=f"M{x.start:.1f},{y(start):.1f}{''.join(steps)}H{x.end:.1f}",
        marks=[
            _Marker(
                kind=r.outcome.value,
                x=x(r.number),
                y=y(s),
                diamond="",
                text=f"test {r.number} ({r.phase}): {s:,} bytes → {r.outcome.value.upper()}"
                + (f" ({r.reason})" if r.reason else ""),
            )
            for r, s in points
        ],
        legend=_legend(False),
        y_label="bytes of the input tested",
        line_label="the smallest input seen to fail so far",
    )


_REDUCED = _ENVIRONMENT.get_template("reduced.html")
