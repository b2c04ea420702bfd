"""The progress display: it observes the run and decides nothing.

On a terminal, a status line shows the test in flight and how long it has run (and how many
more run beside it, with -j N), the tests run,
answered from the cache, implied by monotony and unresolved, and about how many tests are left
(an estimate, and said to be one); a line for each finished test scrolls above it. Elsewhere (a
pipe, a CI log) there is one plain line per finished test, with the same counts. Reasons can come
from a replayed log: every line is made printable first (`words.printable`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

import click
from rich.console import Console
from rich.live import Live
from rich.text import Text

from ddchange import model, session
from ddchange.model import Outcome, Running, Source
from ddchange.report.words import plural, printable


@dataclass(kw_only=True)
class Tally:
    """What the run has done so far, from the events it sent."""

    tests: int = 0
    cached: int = 0
    implied: int = 0
    unresolved: int = 0
    left: model.Estimate = model.Estimate()
    running: Running | None = None
    unit: str = "change"  # what a unit of the search is called (words.unit)

    def add(self, event: model.Progress | Running) -> None:
        self.left = event.left
        if isinstance(event, Running):
            self.running = event
            return
        self.running = None
        self.tests = event.tests_run
        self.cached += event.source is Source.CACHE
        self.implied += event.source is Source.IMPLIED
        self.unresolved += event.source is Source.TEST and event.outcome is Outcome.UNRESOLVED

    def counts(self) -> str:
        """`12 run, 3 cached, 20 implied, 1 unresolved; about 16 tests left (4-90, 8 times in
        10)`: the range is the search's guess (model.SPREAD); without one, `(estimate)`."""
        left = self.left
        if not self.tests and self.running is None and not left.likely:
            return "reading the changes and setting up the scratch tree"  # no event yet
        spread = f"{left.low}-{left.high}, {model.WITHIN}" if left.search else "estimate"
        return (
            f"{self.tests} run, {self.cached} cached, {self.implied} implied, "
            f"{self.unresolved} unresolved; about {plural(left.likely, 'test')} left ({spread})"
        )

    def status(self, now: float) -> str:
        """The live line: the test in flight, then the counts."""
        if self.running is None:
            return self.counts()
        test = self.running
        what = f"commit {test.commit[:7]}" if test.commit else plural(test.size, self.unit)
        more = f", {test.alongside} more running" if test.alongside else ""
        return (
            f"test {test.number} running {now - test.started:.0f}s ({test.phase}: {what}){more} · "
            + self.counts()
        )


def line(progress: model.Progress, unit: str = "change") -> str:
    """`test  12  hunk:    3 changes -> FAIL       exit 1`, with `unit` for "change"."""
    how = progress.reason if progress.source is Source.TEST else f"[{progress.source.value}]"
    size = f"{progress.size:>4} {unit}{'' if progress.size == 1 else 's'}"
    what = f"commit {progress.commit[:7]}" if progress.commit else size
    return (
        f"test {progress.tests_run:>3} {progress.phase:>8}: {what} -> "
        f"{progress.outcome.value.upper():10} {how}"
    )


_STYLE = {Outcome.PASS: "green", Outcome.FAIL: "red", Outcome.UNRESOLVED: "yellow"}


@contextlib.contextmanager
def display(*, quiet: bool, verbose: bool, unit: str = "change") -> Iterator[session.Listener]:
    """A listener that shows the run: a live status on a terminal, plain lines elsewhere;
    sizes are counted in `unit`s (words.unit)."""
    console = Console(stderr=True)
    tally = Tally(unit=unit)

    def shown(event: model.Progress | Running) -> model.Progress | None:
        """The finished evaluation to print a line for, if any (cached ones with -v)."""
        tally.add(event)
        if isinstance(event, Running) or not (verbose or event.source is Source.TEST):
            return None
        return event

    def plain(event: model.Progress | Running) -> None:
        if (progress := shown(event)) is not None:
            click.echo(printable(f"{line(progress, unit)}  · {tally.counts()}"), err=True)

    if quiet:
        yield lambda event: None
    elif not console.is_terminal:
        yield plain
    else:
        status = lambda: Text(printable(tally.status(time.monotonic())), style="bold")  # noqa: E731
        with Live(console=console, transient=True, refresh_per_second=4, get_renderable=status):

            def show(event: model.Progress | Running) -> None:
                if (progress := shown(event)) is not None:
                    console.print(
                        Text(printable(line(progress, unit)), style=_STYLE[progress.outcome])
                    )

            yield show
