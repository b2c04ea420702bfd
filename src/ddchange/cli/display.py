"""The progress display: rich on a terminal, one plain line per test otherwise."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
from rich.console import Console
from rich.live import Live
from rich.text import Text

from ddchange import model, session
from ddchange.model import Outcome, Source


def line(progress: model.Progress) -> str:
    """`test  12  hunk:    3 changes -> FAIL       exit 1  (5 left)`."""
    how = progress.reason if progress.source is Source.TEST else f"[{progress.source.value}]"
    what = f"commit {progress.commit[:7]}" if progress.commit else f"{progress.size:>4} changes"
    return (
        f"test {progress.tests_run:>3} {progress.phase:>5}: {what} -> "
        f"{progress.outcome.value.upper():10} {how}"
        f"  ({progress.remaining} left)"
    )


_STYLE = {Outcome.PASS: "green", Outcome.FAIL: "red", Outcome.UNRESOLVED: "yellow"}


@contextlib.contextmanager
def display(*, quiet: bool, verbose: bool) -> Iterator[session.Listener]:
    """A listener that shows the search: a live status line on a terminal, plain lines elsewhere."""
    console = Console(stderr=True)

    def shown(progress: model.Progress) -> bool:
        return verbose or progress.source is Source.TEST

    def plain(progress: model.Progress) -> None:
        if shown(progress):
            click.echo(line(progress), err=True)

    if quiet:
        yield lambda progress: None
    elif not console.is_terminal:
        yield plain
    else:
        with Live(console=console, transient=True, refresh_per_second=8) as live:

            def show(progress: model.Progress) -> None:
                if shown(progress):
                    console.print(Text(line(progress), style=_STYLE[progress.outcome]))
                live.update(Text(f"searching… {line(progress)}", style="bold"))

            yield show
