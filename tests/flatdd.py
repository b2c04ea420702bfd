"""Textbook delta debugging over single items, as picire's `DD(test, split=, cache=)`: it
drives the flat searches of `ddchange.search.dd` and `.probabilistic` by a test of exactly the
configuration asked, through a cache. The tests' reference for the algorithms' textbook
behaviour: every configuration is asked at most once per cache (`DD.evaluate` looks up the
cache first and records every answer; with no cache given, an exact memo is used)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Generic, Protocol, TypeVar

from ddchange.model import Outcome, Source, Stats
from ddchange.search.dd import (
    Hit,
    Isolation,
    Probe,
    Probed,
    Split,
    Step,
    isolate,
    minimize,
    split_evenly,
)

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)
Listener = Callable[[Step[T]], None]
# A whole search over single items with a probe, as `minimize` with its defaults: what DD runs.
Reduce = Callable[[Sequence[T], Probe[T]], list[T]]


class Cache(Protocol[T_contra]):
    """What DD needs from an outcome cache."""

    def lookup(self, config: frozenset[T_contra]) -> Hit | None: ...

    def store(self, config: frozenset[T_contra], outcome: Outcome) -> None: ...


class Memo(Generic[T]):
    """The default cache: exact answers only, for this run only."""

    def __init__(self) -> None:
        self._seen: dict[frozenset[T], Outcome] = {}

    def lookup(self, config: frozenset[T]) -> Hit | None:
        outcome = self._seen.get(config)
        return None if outcome is None else Hit(outcome)

    def store(self, config: frozenset[T], outcome: Outcome) -> None:
        self._seen[config] = outcome


class DD(Generic[T]):
    """Textbook delta debugging over single items, with injected test, splitter and cache, as
    picire's `DD(test, split, cache)`: every probe is a test of exactly the configuration
    asked (through the cache), so `ddmin` and `isolate` are Zeller and Hildebrandt's."""

    def __init__(
        self,
        test: Callable[[frozenset[T]], Outcome],
        *,
        split: Split[list[T]] = split_evenly,
        cache: Cache[T] | None = None,
        stats: Stats | None = None,
        listener: Listener[T] | None = None,
    ) -> None:
        self._test = test
        self._split = split
        self._cache: Cache[T] = cache if cache is not None else Memo()
        self.stats = stats if stats is not None else Stats()
        self._listener = listener
        # The smallest configuration known to fail; the best answer so far if the run is stopped.
        self.best: list[T] = []

    def evaluate(self, config: Sequence[T]) -> Outcome:
        """The outcome of `config`: from the cache when it knows, else from one real test."""
        key = frozenset(config)
        hit = self._cache.lookup(key)
        if hit is None:
            outcome, source = self._test(key), Source.TEST
            self._cache.store(key, outcome)
            self.stats.tests_run += 1
        else:
            outcome = hit.outcome
            source = Source.IMPLIED if hit.implied else Source.CACHE
            if hit.implied:
                self.stats.implied += 1
            else:
                self.stats.cache_hits += 1
        self.stats.outcomes[outcome] += 1
        if outcome is Outcome.FAIL and len(key) < len(self.best):
            self.best = list(config)
        if self._listener is not None:
            self._listener(
                Step(config=key, outcome=outcome, source=source, failing=frozenset(self.best))
            )
        return outcome

    def ddmin(self, items: Sequence[T], reduce: Reduce[T] | None = None) -> list[T]:
        """A 1-minimal failing subset of `items` (which must fail, while ∅ passes), by
        textbook ddmin or by `reduce` over single items (probabilistic.py's baselines)."""
        self.best = list(items)
        if reduce is not None:
            return reduce(items, self._probe)
        return minimize(items, self._probe, split=self._split)

    def isolate(self, items: Sequence[T]) -> Isolation[T]:
        """Passing and failing subsets of `items` with a 1-minimal difference (TSE 2002 dd)."""
        self.best = list(items)
        return isolate(items, self._probe, split=self._split)

    def _probe(self, config: list[T]) -> Probed[T]:
        return Probed(self.evaluate(config), frozenset(config))


def difference(isolation: Isolation[T]) -> list[T]:
    """dd's answer: what the failing configuration has that the passing one lacks."""
    passing = set(isolation.passing)
    return [item for item in isolation.failing if item not in passing]


class NoCache:
    """Remembers nothing: the baseline for 'a cache never adds runs'."""

    def lookup(self, config: frozenset[int]) -> Hit | None:
        return None

    def store(self, config: frozenset[int], outcome: Outcome) -> None:
        pass
