"""The HTML report, on results of real searches: what it shows, that it escapes everything, that
it needs no network, and that a real browser (Debian's Chromium, headless) renders it without a
console error.

The browser is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`, stdlib
only): it reports uncaught exceptions, console and log errors, and every URL the page asks for,
and takes the screenshot. The same checker is shown a broken page, to prove it can fail.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import itertools
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import endtoend
import pytest
from gitsandbox import hermetic
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ddchange import model, samples, session
from ddchange.model import Outcome
from ddchange.report import html as report
from ddchange.report import text, words

SampleRepo = Callable[[str], tuple[Path, samples.Scenario]]

BROWSER_TIMEOUT = 60.0  # seconds for one page: start, load, screenshot, close


def search(sample_repo: SampleRepo, name: str, **changes: Any) -> model.Result:
    """A real search over the bundled scenario `name`, with `changes` to its usual request."""
    repo, scenario = sample_repo(name)
    return session.run(dataclasses.replace(samples.request(scenario, repo), **changes))


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> model.Result:
    """One real search, shared by the tests that only read it (as the `zoo` fixture is)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        hermetic(monkeypatch)
        scenario = samples.load("wrong-line")
        repo = samples.build_repo(scenario, tmp_path_factory.mktemp("found") / "repo")
        # the whole range's search, whose plot steps down from all changes
        whole = dataclasses.replace(samples.request(scenario, repo), strategy=model.Strategy.DIFF)
        return session.run(whole)


class Elements(HTMLParser):
    """Every start tag of a page with its attributes, and its text."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def with_class(self, *names: str) -> list[dict[str, str]]:
        return [a for _, a in self.tags if set(names) <= set(a.get("class", "").split())]


# -- what the page says ----------------------------------------------------------------------


def test_page_is_html5_with_the_headline_and_the_summary(found: model.Result) -> None:
    page = report.render(found)
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert '<meta charset="utf-8">' in page
    assert "<title>ddchange: v1.0..v1.1</title>" in page
    assert escape(text.render(found).splitlines()[0]) in page  # the text report's headline
    assert escape(found.revisions.good) in page
    assert escape(found.revisions.bad) in page
    assert f"<code>{escape(' '.join(found.request.test))}</code>" in page
    assert f"<tr><th>Tests run</th><td>{found.tests_run}</td></tr>" in page
    assert f"<tr><th>Cache hits</th><td>{found.stats.cache_hits}</td></tr>" in page
    assert "Confirmed: GOOD plus these changes failed again in 3 of 3 reruns" in page
    assert "GOOD passed again at the end (2 runs in all)" in page
    assert '<span class="badge found">found</span>' in page
    assert "<details>" not in page  # no passing set without --isolate


def test_culprit_diff_is_colored_by_line_and_names_its_commit(found: model.Result) -> None:
    page = report.render(found)
    assert len(found.culprits) == 4  # the wrong line and the three lines it uses
    for culprit in found.culprits:
        assert culprit.path == "statkit/spread.py"
        assert escape(words.location(culprit, found.scopes[culprit.id])) in page
        classes = {"+": "add", "-": "del", " ": "ctx", "@": "hunk"}
        for line in culprit.diff.rstrip("\n").split("\n"):
            assert f'<span class="{classes[line[0]]}">{escape(line)}\n</span>' in page
        [commit] = found.attribution[culprit.id]
        assert commit.subject.startswith("spread: compute the variance")
        assert (
            escape(f"{commit.sha[:12]} {commit.author}, {commit.date[:10]}: {commit.subject}")
            in page
        )


def test_odd_file_names_and_undecodable_bytes_are_escaped(found: model.Result) -> None:
    odd = dataclasses.replace(
        found.culprits[0],
        path="src/<b>&\"x'.py",
        diff="@@ -1 +1 @@\n-caf\udce9 <script>\n+ok \x1b[31m &amp;\u202e\n",
    )
    scopes = {odd.id: "function f\ud800"}  # a lone surrogate that stands for no byte
    page = report.render(dataclasses.replace(found, culprits=[odd], scopes=scopes))
    page.encode("utf-8")  # strict: no surrogate is left
    assert f"src/&lt;b&gt;&amp;&quot;x&#x27;.py:{odd.new_start}  in function f\\ud800</h3>" in page
    assert '<span class="del">-caf\\xe9 &lt;script&gt;\n</span>' in page
    assert '<span class="add">+ok \\x1b[31m &amp;amp;\\u202e\n</span>' in page
    assert "<b>" not in page
    assert "<script" not in page
    assert "\x1b" not in page


def test_flaky_and_interrupted_runs_say_how_far_to_trust_them(found: model.Result) -> None:
    evidence = model.Disagreement("hunk", 3, (Outcome.FAIL, Outcome.PASS))
    flaky = report.render(dataclasses.replace(found, outcome="flaky", disagreements=[evidence]))
    assert '<span class="badge flaky">flaky</span>' in flaky
    warning = flaky[flaky.index('<p class="warning">') :]
    assert warning.startswith('<p class="warning">WARNING: the test is flaky')
    assert "3 line changes (hunk): FAIL, PASS" in warning[: warning.index("</p>")]
    interrupted = report.render(dataclasses.replace(found, outcome="interrupted"))
    assert "it may not be minimal yet" in interrupted
    assert "Confirmed" not in interrupted  # nothing was confirmed
    assert '<p class="warning">' not in interrupted


def test_skipped_submodules_are_named(found: model.Result) -> None:
    diff = dataclasses.replace(found.diff, skipped=("vendor/<lib>",))
    page = report.render(dataclasses.replace(found, diff=diff))
    assert "<p>Not searched (kept as in GOOD): <code>vendor/&lt;lib&gt;</code></p>" in page


def test_plot_has_one_marker_per_test_colored_by_outcome(found: model.Result) -> None:
    elements = Elements(report.render(found))
    assert len(elements.with_class("mark")) == len(found.log) > 5
    for outcome in Outcome:
        wanted = sum(1 for r in found.log if r.outcome is outcome)
        assert len(elements.with_class("mark", outcome.value)) == wanted
    assert not elements.with_class("commit")  # no bisection without --strategy auto
    sizes = sorted(float(a["cy"]) for a in elements.with_class("mark"))
    assert sizes[0] < sizes[-1]  # the markers are at different heights: sizes differ


def fails(sizes: list[int]) -> list[model.TestRecord]:
    """A log of tests that all failed, with configurations of these sizes."""
    return [
        model.TestRecord(
            number=n,
            phase="hunk",
            config=frozenset(map(str, range(size))),
            outcome=Outcome.FAIL,
            reason="",
            exit_code=1,
            duration=0.1,
        )
        for n, size in enumerate(sizes, 1)
    ]


@dataclass(frozen=True)
class Plot:
    """The plot of a rendered page, read back from its SVG."""

    left: float  # the y axis
    top: float  # the top of the y axis
    bottom: float  # the x axis
    marks: list[dict[str, str]]  # in test order
    start: float  # where the step line starts, at the left
    steps: list[tuple[float, float]]  # (x, y) of each step of the line, one per test
    x_labels: list[int]
    y_labels: list[int]


def plot_of(page: str) -> Plot:
    elements = Elements(page)
    axes = elements.with_class("axis")
    # the y axis is the longest vertical line (x tick marks are short ones)
    vertical = max(
        (a for a in axes if a["x1"] == a["x2"]), key=lambda a: float(a["y2"]) - float(a["y1"])
    )
    [horizontal] = [a for a in axes if a["y1"] == a["y2"] and a["x1"] != a["x2"]]
    [line] = [a for _, a in elements.tags if a.get("class") == "remaining" and "d" in a]
    path = re.fullmatch(r"M([\d.]+),([\d.]+)((?:H[\d.]+V[\d.]+)*)H[\d.]+", line["d"])
    assert path, line["d"]
    steps = re.findall(r"H([\d.]+)V([\d.]+)", path[3])
    svg = page[page.index("<svg") :]
    return Plot(
        left=float(vertical["x1"]),
        top=float(vertical["y1"]),
        bottom=float(horizontal["y1"]),
        marks=elements.with_class("mark"),
        start=float(path[2]),
        steps=[(float(x), float(y)) for x, y in steps],
        x_labels=[int(v) for v in re.findall(r'text-anchor="middle">(\d+)</text>', svg)],
        y_labels=[int(v) for v in re.findall(r'text-anchor="end">(\d+)</text>', svg)],
    )


def test_large_searches_are_plotted_on_a_log_scale(found: model.Result) -> None:
    sizes = [0, 3000, 1500, 700, 90, 12, 3, 1]
    page = report.render(dataclasses.replace(found, log=fails(sizes)))
    assert "changes applied (log scale)" in "".join(Elements(page).text)
    plot = plot_of(page)
    heights = [float(a["cy"]) for a in plot.marks]
    assert len(heights) == len(sizes)
    assert heights[0] == plot.bottom  # 0 changes: on the x axis
    assert heights[1] == plot.top  # the largest, all 3000 changes: at the top
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    assert [heights[i] for i in order] == sorted(heights, reverse=True)
    # by log10(1 + size): 0, 1 and 3 changes are 1, 2 and 4, equally far apart
    at = dict(zip(sizes, heights, strict=True))
    assert abs((at[0] - at[1]) - (at[1] - at[3])) < 0.25
    assert plot.y_labels == [0, 1, 10, 100, 1000, 3000]  # powers of ten, and the top


def round_steps(labels: list[int], lo: int, hi: int) -> None:
    """`labels` are few round numbers in lo..hi, evenly spaced by 1, 2 or 5 times 10**k."""
    assert 1 <= len(labels) <= 8
    assert lo <= labels[0]
    assert labels[-1] <= hi
    steps = {later - earlier for earlier, later in itertools.pairwise(labels)}
    assert len(steps) <= 1
    for step in steps:
        assert str(step).rstrip("0") in ("1", "2", "5")
        assert labels[0] % step == 0


@settings(max_examples=60)
@given(st.lists(st.integers(0, 90), min_size=1, max_size=400))
@example([0])
@example(list(range(90, 0, -1)))
def test_axis_labels_are_round_and_few(found: model.Result, sizes: list[int]) -> None:
    # A diff of at most LOG_ABOVE changes, so that y is linear (the log scale is tested above).
    diff = dataclasses.replace(found.diff, hunks=found.diff.hunks[: report.LOG_ABOVE])
    plot = plot_of(report.render(dataclasses.replace(found, diff=diff, log=fails(sizes))))
    round_steps(plot.x_labels, 1, len(sizes))  # test numbers
    top = max(len(diff.hunks), *sizes)
    round_steps(plot.y_labels[:-1] if plot.y_labels[-1] == top else plot.y_labels, 0, top)
    assert plot.y_labels[0] == 0


def test_the_line_steps_down_to_the_answer(found: model.Result) -> None:
    plot = plot_of(report.render(found))
    assert len(plot.steps) == len(found.log) == len(plot.marks)
    assert [x for x, _ in plot.steps] == [float(mark["cx"]) for mark in plot.marks]
    heights = [plot.start, *(y for _, y in plot.steps)]
    assert heights == sorted(heights)  # fewer changes are lower: the line only steps down
    assert plot.start == plot.top  # all changes
    # it ends at the height of the answer's failing test
    answer = [
        float(mark["cy"])
        for record, mark in zip(found.log, plot.marks, strict=True)
        if record.outcome is Outcome.FAIL and record.size == len(found.culprits)
    ]
    assert answer
    assert heights[-1] == answer[0]
    # a larger configuration that fails later does not raise the line again
    plot = plot_of(report.render(dataclasses.replace(found, log=fails([5, 9, 3]))))
    cy = [float(mark["cy"]) for mark in plot.marks]
    assert [y for _, y in plot.steps] == [cy[0], cy[0], cy[2]]


def test_bisection_tests_are_diamonds_at_the_top(sample_repo: SampleRepo) -> None:
    result = search(sample_repo, "wrong-line", strategy="auto")
    page = report.render(result)
    # a whole tree: the bisection's tests, BAD's in the pre-flight before them, and the
    # answer applied on GOOD after the search
    trees = [
        n
        for n, r in enumerate(result.log)
        if next(iter(r.config), "").startswith(("commit:", "on-good:"))
    ]
    bisected = [n for n in trees if result.log[n].phase == "bisect"]
    assert bisected
    elements = Elements(page)
    diamonds = elements.with_class("mark", "commit")
    assert len(diamonds) == len(trees) > len(bisected)
    assert len(elements.with_class("mark")) == len(result.log)
    assert all(d["d"].startswith("M") for d in diamonds)
    assert escape(words.route(result)) in page
    plot = plot_of(page)
    # whole commits move no line: it stays at all changes until the first set of changes
    before = [n for n in trees if result.log[n].phase != "on-good"]
    assert all(plot.steps[n][1] == plot.start for n in before)
    # nor does the answer applied on GOOD, after the search
    assert all(plot.steps[n][1] == plot.steps[n - 1][1] for n in trees if n not in before)
    first = result.log[bisected[0]]
    sha = next(iter(first.config)).removeprefix("commit:")
    assert f"test {first.number} (bisect): commit {sha[:12]} → " in page  # its tooltip


def test_isolation_lists_the_passing_set_collapsed(sample_repo: SampleRepo) -> None:
    result = search(sample_repo, "two-files", isolate=True, strategy=model.Strategy.DIFF)
    assert result.passing
    page = report.render(result)
    details = page[page.index("<details>") : page.index("</details>")]
    assert "Applied in both the passing and the failing set" in details
    for number, hunk in enumerate(result.passing, 1):
        location = words.location(hunk, result.scopes.get(hunk.id, ""))
        assert f"<h3>[P{number}] {escape(location)}</h3>" in details
    assert escape(result.culprits[0].diff.split("\n")[1]) in page
    assert "Confirmed: GOOD plus the failing set failed again in 3 of 3 reruns" in page


def test_an_empty_log_gives_a_note_instead_of_a_plot(found: model.Result) -> None:
    page = report.render(dataclasses.replace(found, log=[]))
    assert "<svg" not in page
    assert "No tests were run" in page


def test_page_needs_no_network_and_no_script(found: model.Result) -> None:
    page = report.render(found)
    for tag, attributes in Elements(page).tags:
        assert not {"src", "href", "xlink:href", "srcset", "action"} & attributes.keys(), tag
    for needle in ("http://", "https://", "url(", "@import", "<script", "<link", "<img"):
        assert needle not in page


# -- in a real browser -----------------------------------------------------------------------


@dataclass
class Rendered:
    """What Chromium made of a page."""

    png: bytes
    errors: list[str] = field(default_factory=list)  # exceptions, console and log errors
    requests: list[str] = field(default_factory=list)  # every URL the page asked for

    @property
    def remote(self) -> list[str]:
        return [url for url in self.requests if not url.startswith(("file:", "data:", "about:"))]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium not installed: .ci/run installs Debian's chromium")
    return found


class DevTools:
    """The browser's end of `--remote-debugging-pipe`: JSON messages ending in NUL, written on
    its fd 3 and read from its fd 4 (here: the shell gives it our pipes as fds 3 and 4)."""

    def __init__(self, browser: str, profile: Path) -> None:
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            ["sh", "-c", 'exec "$@" 3<&0 4>&1 </dev/null >/dev/null', "sh", browser, *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.deadline = time.monotonic() + BROWSER_TIMEOUT
        self.events: list[dict[str, Any]] = []
        self._buffer = b""
        self._last = 0

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command, keep the events that arrive meanwhile, return its result."""
        self._last += 1
        message: dict[str, Any] = {"id": self._last, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\0")
        self.process.stdin.flush()
        while True:
            reply = self._next()
            if reply.get("id") == self._last:
                assert "error" not in reply, f"{method}: {reply['error']}"
                result: dict[str, Any] = reply["result"]
                return result
            self.events.append(reply)

    def wait_for(self, method: str) -> None:
        while not any(event.get("method") == method for event in self.events):
            self.events.append(self._next())

    def _next(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\0" not in self._buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"chromium did not answer within {BROWSER_TIMEOUT:.0f}s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError(f"chromium exited ({self.process.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def close(self) -> None:
        with contextlib.suppress(OSError, EOFError, TimeoutError, AssertionError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)  # its own session: the browser and helpers
            self.process.wait()


def render(page: Path, profile: Path, width: int = 1200, height: int = 1400) -> Rendered:
    """Load `page` in headless Chromium: its screenshot, its errors, the URLs it asked for."""
    tools = DevTools(chromium(), profile)
    try:
        target = tools.call("Target.createTarget", url="about:blank")["targetId"]
        tab = tools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            tools.call(f"{domain}.enable", tab)
        tools.call(
            "Emulation.setDeviceMetricsOverride",
            tab,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        tools.call("Page.navigate", tab, url=page.resolve().as_uri())
        tools.wait_for("Page.loadEventFired")
        shot = tools.call("Page.captureScreenshot", tab, format="png")
        return Rendered(base64.b64decode(shot["data"]), *_problems(tools.events))
    finally:
        tools.close()


def _problems(events: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    errors, requests = [], []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            errors.append(details.get("exception", {}).get("description") or details["text"])
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            errors.append(
                " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            errors.append(params["entry"]["text"])
        elif method == "Network.requestWillBeSent":
            requests.append(params["request"]["url"])
    return errors, requests


def png_colors(png: bytes) -> set[bytes]:
    """The distinct pixel values of an 8-bit RGB(A), non-interlaced PNG, as Chromium writes."""
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    chunks: dict[bytes, list[bytes]] = {}
    at = 8
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        chunks.setdefault(kind, []).append(png[at + 8 : at + 8 + length])
        at += 12 + length  # length, kind, data, CRC
    header = struct.unpack(">IIBBBBB", chunks[b"IHDR"][0])
    width, height, depth, color, _, _, interlace = header
    assert (depth, color, interlace) in ((8, 2, 0), (8, 6, 0))
    pixel = 3 if color == 2 else 4
    data, stride = zlib.decompress(b"".join(chunks[b"IDAT"])), width * pixel
    previous, colors = bytes(stride), set[bytes]()
    for row in range(height):
        start = row * (stride + 1)
        line = _unfilter(data[start], data[start + 1 : start + 1 + stride], previous, pixel)
        colors.update(line[i : i + pixel] for i in range(0, stride, pixel))
        previous = line
    return colors


def _unfilter(kind: int, raw: bytes, up: bytes, pixel: int) -> bytes:
    """One scanline without its PNG filter (the five filters of the PNG specification)."""
    if kind == 0:
        return raw
    if kind == 2:
        return bytes((a + b) & 255 for a, b in zip(raw, up, strict=True))
    out = bytearray(raw)
    for i in range(len(out)):
        left = out[i - pixel] if i >= pixel else 0
        above, corner = up[i], up[i - pixel] if i >= pixel else 0
        if kind == 1:
            guess = left
        elif kind == 3:
            guess = (left + above) // 2
        else:
            p = left + above - corner
            pa, pb, pc = abs(p - left), abs(p - above), abs(p - corner)
            guess = left if pa <= pb and pa <= pc else above if pb <= pc else corner
        out[i] = (out[i] + guess) & 255
    return bytes(out)


def rgb(hex_color: str) -> bytes:
    return bytes.fromhex(hex_color.lstrip("#"))


def test_chromium_renders_the_clis_report_without_errors(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    chromium()  # skips before the search when there is no browser
    repo, scenario = sample_repo("wrong-line")
    page = tmp_path / "report.html"
    args = [f"{scenario.good}..{scenario.bad}", "--strategy", "auto", "--report", str(page)]
    done = subprocess.run(
        [sys.executable, "-m", "ddchange", *args, "--", *scenario.test],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"report: {page}" in done.stderr
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    # tall enough for the plot below the bisection's and the answer's paragraphs
    rendered = render(page, tmp_path / "profile", height=2400)
    assert rendered.errors == []
    assert rendered.requests == [page.resolve().as_uri()]  # the page itself, nothing else
    colors = {color[:3] for color in png_colors(rendered.png)}
    assert len(colors) > 20  # text, diff backgrounds and the plot: not a blank page
    # drawn with colors of the page's style: PASS and FAIL markers, the remaining line, and
    # the backgrounds of added and removed lines
    for drawn in ("#1a7f37", "#cf222e", "#0969da", "#dafbe1", "#ffebe9"):
        assert rgb(drawn) in colors, drawn


def test_the_checker_reports_script_errors_and_network_requests(tmp_path: Path) -> None:
    chromium()
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>broken</title></head><body>"
        "<p>text</p><img src='https://example.invalid/x.png' alt='x'>"
        "<svg width='9' height='9'><circle cx='NaN' cy='1' r='1'/></svg>"
        "<script>console.error('complained'); throw new Error('boom')</script></body></html>"
    )
    rendered = render(page, tmp_path / "profile", width=400, height=300)
    assert any("boom" in error for error in rendered.errors), rendered.errors
    assert any("complained" in error for error in rendered.errors), rendered.errors
    assert any("cx: Expected length" in error for error in rendered.errors), rendered.errors
    assert rendered.remote == ["https://example.invalid/x.png"]
    assert len(png_colors(rendered.png)) > 1


def test_the_checker_sees_a_blank_page_as_one_color(tmp_path: Path) -> None:
    chromium()
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>")
    rendered = render(page, tmp_path / "profile", width=300, height=200)
    assert rendered.errors == []
    assert {color[:3] for color in png_colors(rendered.png)} == {rgb("#ffffff")}


# Old c.txt with BROKEN z.txt cannot be tested (125); new c.txt alone passes; both fail.
NEEDS_NEW_C = (
    "grep -q v1 c.txt && { grep -q BROKEN z.txt && exit 125; exit 0; }\n"
    "grep -q BROKEN z.txt && exit 1; exit 0\n"
)


def test_the_changes_without_which_the_test_passed_come_first(tmp_path: Path) -> None:
    """z.txt is the failure (without it the test passed), c.txt only lets it be tested (without
    it, 125): z.txt is shown first, though c.txt comes first in the diff; the JSON says which."""
    good, bad = {"c.txt": "v1\n", "z.txt": "fine\n"}, {"c.txt": "v2\n", "z.txt": "BROKEN\n"}
    run = endtoend.search(endtoend.two_commits(tmp_path / "repo", good, bad, NEEDS_NEW_C))
    assert sorted(endtoend.found(run)) == [("c.txt", "text"), ("z.txt", "text")]
    out = run.stdout
    assert out.index("Without this change the test passed:") < out.index("[1] z.txt")
    assert out.index("[1] z.txt") < out.index("Also needed: without this change")
    assert out.index("Also needed") < out.index("[2] c.txt")
    without = {unit["path"]: unit["without_it"] for unit in run.report["culprits"]}
    assert without == {"c.txt": "unresolved", "z.txt": "pass"}


# -- bounds: what a report shows of a huge change ------------------------------------------


@pytest.mark.parametrize(
    ("diff", "lines", "more", "cut"),
    [
        ("", [], 0, 0),
        ("a\n", ["a"], 0, 0),
        ("a\nb\n", ["a", "b"], 0, 0),
        ("a\nb\nc\n", ["a", "b"], 1, 0),
        ("a\nb\nc\nd", ["a", "b"], 2, 0),
        ("abcdefgh\nb\n", ["abcde… (3 more characters)", "b"], 0, 1),
    ],
)
def test_a_shown_diff_keeps_so_many_lines_of_so_many_characters(
    diff: str, lines: list[str], more: int, cut: int
) -> None:
    shown = words.shown_diff(diff, lines=2, width=5)
    assert (shown.lines, shown.more, shown.cut) == (lines, more, cut)
    assert bool(shown.note()) == bool(more or cut)


def test_a_huge_one_line_change_is_shown_cut_and_patched_whole(tmp_path: Path) -> None:
    """320 KB on one line: the text and the page show 200 and 500 characters of it and say what
    they left out; the patch and the JSON have all of it."""
    good, bad = {"big.js": "var a=1;" * 40_000 + "\n"}, {"big.js": "var a=2;" * 40_000 + "\n"}
    repo = endtoend.two_commits(
        tmp_path / "repo", good, bad, "grep -q 'a=2' big.js && exit 1; exit 0\n"
    )
    page, patch = tmp_path / "page.html", tmp_path / "answer.patch"
    run = endtoend.search(repo, "--report", str(page), "--patch", str(patch))
    assert endtoend.found(run) == [("big.js", "text")]
    added = "+" + "var a=2;" * 40_000
    assert f"    {added[:200]}… (319,801 more characters)\n" in run.stdout
    assert "    … 2 lines cut at 200 characters (the whole change is in --patch)\n" in run.stdout
    assert len(run.stdout) < 3_000
    html = page.read_text()
    assert f"{added[:500]}… (319,501 more characters)\n</span>" in html
    assert "… 2 lines cut at 500 characters (the whole change is in --patch)" in html
    assert len(html) < 12_000
    assert patch.read_text().count("var a=2;") == 40_000
    assert run.report["culprits"][0]["diff"].count("var a=2;") == 40_000


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("over\rwritten\x08\x07", "over\\x0dwritten\\x08\\x07"),
        ("c1 \x9b2J and \udc9b2J", "c1 \\x9b2J and \\x9b2J"),  # also as an undecodable byte
        ("abc\u202edef\u2066", "abc\\u202edef\\u2066"),
        (
            "tab\tand\nlines, caf\xe9 caf\udce9 \u00e9\u4e2d",
            "tab\tand\nlines, caf\xe9 caf\udce9 \u00e9\u4e2d",
        ),
    ],
)
def test_printable_escapes_what_a_terminal_would_act_on(raw: str, shown: str) -> None:
    assert words.printable(raw) == shown


def test_the_readme_states_the_bounds_the_reports_keep() -> None:
    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())
    assert (
        f"({text.SHOWN_LINES} and {report.SHOWN_HTML_LINES:,} lines, each cut at "
        f"{text.SHOWN_WIDTH} and {report.SHOWN_HTML_WIDTH} characters)"
    ) in readme


def test_an_answer_a_passing_superset_contradicts_says_why_it_ran_more_often() -> None:
    """The check's words say why an answer ran again as for a flaky test, and only then."""
    checked = model.Confirmation(
        answer=Outcome.FAIL, runs=5, reruns=4, risk=0.25**4, flake_rate=0.25, contradicted=True
    )
    said = " ".join(words.confirmation(checked, isolate=False))
    assert "failed again in 4 of 4 reruns (5 runs in all)" in said
    assert "Changes holding all of these changes passed in a run of the search" in said
    plain = dataclasses.replace(checked, contradicted=False)
    assert "passed in a run of the search" not in " ".join(words.confirmation(plain, isolate=False))
