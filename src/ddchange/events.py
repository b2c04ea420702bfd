"""What a run tells its listener (the progress display): each evaluation, each real test as it
starts, and an estimate of the tests left. It observes the trial layer and the search, and
decides nothing.

The estimate is shown as one: the search halves the changes still in play, at a rate of tests
per halving that it measures as it goes (at least 1.5, what one cause takes; more causes, or
builds that break, take more, and a run that has halved its changes a few times knows how
many), plus a check of the answer; before it the pre-flight's runs not made yet, after it the
reruns of the answer at the end, less those already run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from ddchange.model import Outcome, Progress, Running, Source, TestRecord
from ddchange.search.dd import Step
from ddchange.search.hierarchical import Search
from ddchange.trial.trials import Trials

Listener = Callable[[Progress | Running], None]

_LEAST_RATE = 1.5  # tests per halving of the changes when one change is the cause
_OUTSIDE_THE_SEARCH = ("good", "bad", "bisect", "confirm")


class Events:
    """The listener's view of one run: `preflight` runs of each side first, `ends` reruns of
    the answer at the end at most (0 without them)."""

    def __init__(
        self, listener: Listener, trials: Trials, search: Search, preflight: int, ends: int
    ) -> None:
        self.listener, self.trials, self.search = listener, trials, search
        self.preflight, self.ends = preflight, ends

    def step(self, level: str, step: Step[str]) -> None:
        """An evaluation the search made (a real run, or answered without one)."""
        last = self.trials.log[-1] if self.trials.log else None
        reason = last.reason if step.source is Source.TEST and last is not None else ""
        self._progress(level, step.config, step.outcome, step.source, reason)

    def recorded(self, record: TestRecord) -> None:
        """A real run outside the search (pre-flight, bisection, confirmation)."""
        self._progress(record.phase, record.config, record.outcome, Source.TEST, record.reason)

    def started(self, config: frozenset[str]) -> None:
        """A real test begins: the listener shows it in flight."""
        phase = self.trials.phase
        number = self.trials.tests_run + 1
        left = self.tests_left(phase)
        commit, alongside = _commit(phase, config), self.trials.running()
        self.listener(
            Running(phase, len(config), number, time.monotonic(), commit, left, alongside)
        )

    def tests_left(self, phase: str) -> int:
        """About how many real tests are still to run (see the module's docstring)."""
        units = len(self.search.best - self.search.best_passing)
        log = self.trials.log
        before = 2 * self.preflight - sum(r.phase in ("good", "bad") for r in log)
        search = 0 if phase == "confirm" else math.ceil(self._rate() * math.log2(max(units, 1))) + 1
        end = self.ends
        if phase == "confirm":
            end -= sum(r.phase == "confirm" for r in log)
        return max(before, 0) + search + max(end, 0)

    def _rate(self) -> float:
        """Tests per halving of the changes in play, as this run has spent them so far (1.5
        until it has halved them twice)."""
        start, units = len(self.search.diff.hunks), len(self.search.best - self.search.best_passing)
        halvings = math.log2(start / units) if units else 0.0
        searched = sum(r.phase not in _OUTSIDE_THE_SEARCH for r in self.trials.log)
        return max(_LEAST_RATE, searched / halvings) if halvings >= 2 else _LEAST_RATE

    def _progress(
        self, phase: str, config: frozenset[str], outcome: Outcome, source: Source, reason: str
    ) -> None:
        remaining = len(self.search.best - self.search.best_passing)
        self.listener(
            Progress(
                phase,
                outcome,
                source,
                reason,
                len(config),
                remaining,
                self.trials.tests_run,
                _commit(phase, config),
                self.tests_left(phase),
            )
        )


def _commit(phase: str, config: frozenset[str]) -> str:
    """The commit a "bisect" configuration stands for ("" in every other phase)."""
    return next(iter(config)).removeprefix("commit:") if phase == "bisect" else ""
