"""What a run tells its listener (the progress display): each evaluation, each real test as it
starts, and an estimate of the tests left. It is told of both by the trial layer and the search, and
decides nothing.

The estimate (`estimate`) is the pre-flight's runs not made yet and the reruns of the answer at
the end, which will run, plus a guess at the search's, the geometric mean of two guesses that
each fall as the search closes in:
- the whole search: as many tests again as it has run so far (J. R. Gott's rule for how long a
  thing already under way lasts: with no other knowledge, what is left is as likely shorter than
  what went before as longer), scaled by the share of the changes still in play on a log scale
  (log(in play) / log(at the start)), and never less than one cause would take over those in
  play (1.5 tests per halving, and a check of the answer);
- the level it is at: as many tests again as it has run at this level, for this level and each
  one still to come down to the finest asked, and the check of the answer after them.
Before the search (the pre-flight, the bisection) only the first stands. Gott's rule alone only
grew: at test 78 of 82 it said about 80 left. benchmarks/estimate.py replays the real
regressions' logs through `estimate` and measures how often what the search still ran fell
inside the range shown (model.SPREAD).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

from ddchange.model import (
    Estimate,
    Level,
    Outcome,
    Phase,
    Progress,
    Running,
    Source,
    Stage,
    TestRecord,
    tree_commit,
)
from ddchange.search.dd import Step

Listener = Callable[[Progress | Running], None]

_LEAST_RATE = 1.5  # tests per halving of the changes when one change is the cause
# A reduction's guess, as many again as so far times this, at the start (benchmarks/estimate.py
# --reduce: chosen on the logs of one run of benchmarks/reduce_peers.py, measured on another's)
_REDUCE_AHEAD = 3.0
# The phases whose runs the search does not make (and so does not tell of itself).
_OUTSIDE_THE_SEARCH = (Stage.GOOD, Stage.BAD, Stage.BISECT, Stage.CONFIRM, Stage.ON_GOOD)


class Events:
    """The listener's view of one run over `units` change units, searched down to `finest`:
    `preflight` runs of each side first, `ends` reruns of the answer at the end at most (0
    without them). Told of every
    record as it is made (`recorded`), of every test as it starts (`started`) and of every
    evaluation the search makes (`step`); it keeps the counts it shows, and decides nothing."""

    def __init__(
        self,
        listener: Listener,
        *,
        units: int,
        preflight: int,
        ends: int,
        finest: Level = Level.BLOCK,
    ) -> None:
        self.listener, self.units = listener, units
        self.preflight, self.ends, self.finest = preflight, ends, finest
        self.phases: list[Phase] = []  # of every record, earlier attempts' included
        self.tests_run = 0  # real runs made by this process
        self.remaining = units  # the changes in the smallest failing set (minus the passing)
        self.reason = ""  # why the latest real run gave its outcome

    def searching(self, units: int) -> None:
        """From now on the run is over `units` change units (or, while the history is
        bisected, commits): a search inside the first bad commit, once it is found."""
        self.units = self.remaining = units

    def taken_over(self, records: Sequence[TestRecord]) -> None:
        """The records of earlier attempts, taken over before the first run."""
        self.phases += [record.phase for record in records]

    def recorded(self, record: TestRecord) -> None:
        """A real run was recorded. The search tells its own (`step`); the listener is told
        here of those outside it (pre-flight, bisection, confirmation)."""
        self.phases.append(record.phase)
        self.tests_run += 1
        self.reason = record.reason
        if record.phase in _OUTSIDE_THE_SEARCH:
            self._progress(record.phase, record.config, record.outcome, Source.TEST, record.reason)

    def step(self, level: Phase, step: Step[str]) -> None:
        """An evaluation the search made (a real run, or answered without one)."""
        self.remaining = len(step.failing - step.passing)
        reason = self.reason if step.source is Source.TEST else ""
        self._progress(level, step.config, step.outcome, step.source, reason)

    def started(self, config: frozenset[str], phase: Phase, alongside: int) -> None:
        """A real test of `config` begins, with `alongside` others going: the listener shows
        it in flight."""
        self.listener(
            Running(
                phase=phase,
                size=len(config),
                number=self.tests_run + 1,
                started=time.monotonic(),
                commit=_commit(config),
                left=self.tests_left(phase),
                alongside=alongside,
            )
        )

    def tests_left(self, phase: Phase) -> Estimate:
        """About how many real tests are still to run (see `estimate`)."""
        units = self.remaining or self.units  # none yet: all
        return estimate(
            self.phases, phase, units, self.units, self.preflight, self.ends, self.finest
        )

    def _progress(
        self, phase: Phase, config: frozenset[str], outcome: Outcome, source: Source, reason: str
    ) -> None:
        self.listener(
            Progress(
                phase=phase,
                outcome=outcome,
                source=source,
                reason=reason,
                size=len(config),
                remaining=self.remaining,
                tests_run=self.tests_run,
                commit=_commit(config),
                left=self.tests_left(phase),
            )
        )


def estimate(
    phases: Sequence[Phase],
    phase: Phase,
    units: int,
    start: int,
    preflight: int,
    ends: int,
    finest: Level = Level.BLOCK,
) -> Estimate:
    """The real tests still to run, from the phases of those run so far (see the module's
    docstring): `units` change units are still in play of `start`, in `phase`, and the search
    goes down to `finest`; `preflight` runs of each side come first, `ends` reruns of the
    answer at the end at most."""
    before = 2 * preflight - sum(p in (Stage.GOOD, Stage.BAD) for p in phases)
    end = ends - (sum(p == Stage.CONFIRM for p in phases) if phase == Stage.CONFIRM else 0)
    fixed = max(before, 0) + max(end, 0)
    if phase == Stage.CONFIRM:
        return Estimate(fixed=fixed)
    searched = [p for p in phases if p not in _OUTSIDE_THE_SEARCH]
    halvings = math.log2(start / units) if units else 0.0
    one_cause = _one_cause(units) if halvings < 2 else 0
    narrowed = math.log2(units + 1) / math.log2(start + 1) if start else 1.0
    whole = max(max(one_cause, len(searched) + 1) * narrowed, _one_cause(units))
    if phase in _OUTSIDE_THE_SEARCH:  # not searching yet: no level to go by
        return Estimate(fixed=fixed, search=math.ceil(whole))
    level = (searched.count(phase) + 1) * (1 + _levels_after(phase, finest))
    return Estimate(fixed=fixed, search=math.ceil(math.sqrt(whole * level)))


def _levels_after(phase: Phase, finest: Level) -> int:
    """The levels the search still goes down after `phase` to `finest`, and the check of the
    answer by real outcomes after them (none once in that check, or cutting by commit)."""
    order = list(Level)
    if phase not in order or order.index(Level(phase)) > order.index(finest):
        return 0
    return order.index(finest) - order.index(Level(phase)) + 1


def reduce_estimate(searched: int, now: int, start: int, ends: int) -> Estimate:
    """The real tests a reduction still runs: the `ends` reruns of the result at the end, and
    a guess at the passes': Gott's rule as for the search (as many again as the `searched` so
    far), times _REDUCE_AHEAD, scaled by the square of how much of the input is left on a log
    scale (`now` bytes of `start`): early, the passes still to come and the check of each piece
    are all ahead; late, the input left is small and so is that check."""
    narrowed = math.log(now + 1) / math.log(start + 1) if start > 0 else 1.0
    guess = _REDUCE_AHEAD * (searched + 1) * narrowed**2
    return Estimate(fixed=ends, search=max(math.ceil(guess), 1))


def triage_estimate(
    running: int,
    spent: Sequence[int],
    targets_left: int,
    ranges_left: int | None,
    answers: int,
    ends: int,
) -> Estimate:
    """The real tests a triage still runs: the `running` target's search's (as `estimate` guesses
    one); `ends` reruns of each cause of the range at the end (its `answers` so far and one
    more); and the searches of the `targets_left`. With the history first, `ranges_left` first
    bad commits are still to be searched inside: each holds a cause, so one target of each costs
    a search like those that found one (the median of the finished searches that ran tests; the
    running one's guess before any), and the others, bisected to a commit with another target,
    cost the median of the finished searches (the lower one: most share a cause and cost none;
    none before any finished). Over the whole range (`ranges_left` None) each target costs that
    median, the running guess before any."""
    ran = sorted(n for n in spent if n)
    fresh = ran[len(ran) // 2] if ran else running
    each = (
        sorted(spent)[(len(spent) - 1) // 2]
        if spent
        else (0 if ranges_left is not None else running)
    )
    new = ranges_left or 0
    search = running + new * fresh + (targets_left - new) * each
    return Estimate(fixed=ends * (answers + 1), search=search)


def _one_cause(units: int) -> int:
    """The tests one cause would take to find among `units` changes: 1.5 a halving, and a
    check of the answer."""
    return math.ceil(_LEAST_RATE * math.log2(max(units, 1))) + 1


def _commit(config: frozenset[str]) -> str:
    """The commit a commit's own tree stands for (the bisection's, and BAD's before it); ""
    for every other configuration."""
    return tree_commit(config) or ""
