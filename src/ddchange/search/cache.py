"""The outcome cache: exact answers, answers implied by monotony, and the persistent journal.

Owns the one rule that lets ddchange skip a build-and-test without asking it: if a configuration
is known, its recorded outcome is returned; under monotony, a configuration that is a subset of
one that passed is assumed to pass, and one that is a superset of one that failed is assumed to
fail. Monotony is an assumption about the program (no change masks the failure), so it is
switchable, every outcome it supplies is counted apart from exact hits, and it only ever skips
work: `exact` answers only what was recorded, and `witness` names the recorded configuration
behind an implied answer, so that no claim rests on an implication (see search.py).

UNRESOLVED outcomes are recorded exactly but imply nothing about other configurations.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Generic, TypeVar

from ddchange.model import Outcome
from ddchange.search.dd import Hit

K = TypeVar("K", bound=Hashable)


class OutcomeCache(Generic[K]):
    """Exact outcomes by configuration, with optional monotony.

    Under monotony only the *maximal* passing and the *minimal* failing configurations are kept
    for implication: a set dominated by another one that is already kept can never imply
    anything the kept one does not.
    """

    def __init__(self, *, monotony: bool = True) -> None:
        self.monotony = monotony
        self._exact: dict[frozenset[K], Outcome] = {}
        self._passing: list[frozenset[K]] = []  # maximal passing configurations
        self._failing: list[frozenset[K]] = []  # minimal failing configurations

    def __len__(self) -> int:
        return len(self._exact)

    def lookup(self, config: frozenset[K]) -> Hit | None:
        outcome = self._exact.get(config)
        if outcome is not None:
            return Hit(outcome)
        if not self.monotony:
            return None
        if any(config <= passed for passed in self._passing):
            return Hit(Outcome.PASS, implied=True)
        if any(failed <= config for failed in self._failing):
            return Hit(Outcome.FAIL, implied=True)
        return None

    def exact(self, config: frozenset[K]) -> Outcome | None:
        """The recorded outcome of exactly `config`, never an implied one."""
        return self._exact.get(config)

    def witness(self, config: frozenset[K], outcome: Outcome) -> frozenset[K]:
        """The recorded configuration that implies `outcome` for `config` under monotony: a
        passing superset or a failing subset (the smallest such), so that a search can move to
        what was seen rather than to what was inferred."""
        if outcome is Outcome.PASS:
            return max((p for p in self._passing if config <= p), key=len)
        return min((f for f in self._failing if f <= config), key=len)

    def reset(self, known: Mapping[frozenset[K], Outcome]) -> None:
        """Forget every outcome, then know `known` (a search that starts again, told only
        what needs no more runs)."""
        self._exact, self._passing, self._failing = {}, [], []
        for config, outcome in known.items():
            self.store(config, outcome)

    def store(self, config: frozenset[K], outcome: Outcome) -> None:
        self._exact[config] = outcome
        if outcome is Outcome.PASS:
            self._passing = [p for p in self._passing if not p <= config] + [config]
        elif outcome is Outcome.FAIL:
            self._failing = [f for f in self._failing if not config <= f] + [config]
