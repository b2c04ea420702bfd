"""The outcome cache: exact answers, plus answers implied by monotony.

Owns the one rule that lets ddchange skip a build-and-test without asking it: if a configuration
is known, its recorded outcome is returned; under monotony, a configuration that is a subset of
one that passed is assumed to pass, and one that is a superset of one that failed is assumed to
fail. Monotony is an assumption about the program (no change masks the failure), so it is
switchable and every outcome it supplies is counted apart from exact hits.

UNRESOLVED outcomes are recorded exactly but imply nothing about other configurations.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from ddchange.dd import Hit, Outcome

K = TypeVar("K", bound=Hashable)
T = TypeVar("T", bound=Hashable)


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

    def store(self, config: frozenset[K], outcome: Outcome) -> None:
        self._exact[config] = outcome
        if outcome is Outcome.PASS:
            self._passing = [p for p in self._passing if not p <= config] + [config]
        elif outcome is Outcome.FAIL:
            self._failing = [f for f in self._failing if not config <= f] + [config]


class Projected(Generic[T, K]):
    """A cache over groups (T) that stores its answers in a cache over their members (K).

    The hierarchical search runs dd over files, then over hunks: both levels ask about sets of
    hunks in the end, so they share one hunk-level cache through this view, and an answer
    learned at the file level is a hit at the hunk level.
    """

    def __init__(self, inner: OutcomeCache[K], expand: Callable[[frozenset[T]], frozenset[K]]):
        self._inner = inner
        self._expand = expand

    def lookup(self, config: frozenset[T]) -> Hit | None:
        return self._inner.lookup(self._expand(config))

    def store(self, config: frozenset[T], outcome: Outcome) -> None:
        self._inner.store(self._expand(config), outcome)
