"""Delta debugging over opaque items: ddmin (minimize) and dd (isolate), and bisection.

Owns the algorithms of Zeller and Hildebrandt (TSE 2002) and `git bisect`'s binary search with
skips, and nothing else: the test function, the way a configuration is split into parts, and the
outcome cache are all passed in, so this module never knows about git, files or processes (a
test checks that it imports no I/O).

Items are any hashable values; a *configuration* is a set of them, handed to the test as a
frozenset. Results keep the order of the input, so a caller that passes items in file order gets
its answer in file order.

Invariants the callers rely on:
- `test(∅)` is PASS and `test(items)` is FAIL. Neither is asked here: the caller has checked both
  in its pre-flight, and asking again would cost two real runs.
- Every configuration passed to `test` is asked at most once per cache: `DD.evaluate` looks up the
  cache first and records every answer. With no cache given, an exact in-memory memo is used.
- The minimized configuration is always one that was *seen* to FAIL (or is the input itself).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)


class Outcome(enum.Enum):
    """The three answers a test can give about a configuration."""

    PASS = "pass"  # the failure is absent
    FAIL = "fail"  # the failure we are hunting is present
    UNRESOLVED = "unresolved"  # neither can be said: no build, no patch, timeout, other failure


class Source(enum.Enum):
    """Where an outcome came from: a real test, an exact cache hit, or monotony."""

    TEST = "test"
    CACHE = "cache"
    IMPLIED = "implied"


@dataclass(frozen=True)
class Hit:
    """A cache answer. `implied` is true when monotony, not an exact record, gave it."""

    outcome: Outcome
    implied: bool = False


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


@dataclass(frozen=True)
class Step(Generic[T]):
    """One evaluation, reported to the listener: for progress displays and search plots."""

    config: frozenset[T]  # the configuration asked about
    outcome: Outcome
    source: Source
    granularity: int  # current number of parts n
    failing: frozenset[T]  # the smallest configuration known to fail so far

    @property
    def size(self) -> int:
        return len(self.config)


@dataclass
class Stats:
    """Counts of where answers came from. Share one instance to sum over several searches."""

    tests_run: int = 0
    cache_hits: int = 0
    implied: int = 0
    outcomes: dict[Outcome, int] = field(default_factory=lambda: dict.fromkeys(Outcome, 0))


@dataclass(frozen=True)
class Isolation(Generic[T]):
    """dd's answer: a passing and a failing configuration whose difference is 1-minimal."""

    passing: list[T]
    failing: list[T]

    @property
    def difference(self) -> list[T]:
        passing = set(self.passing)
        return [item for item in self.failing if item not in passing]


# A splitter cuts a configuration into about n parts that partition it (no overlap, no loss).
Split = Callable[[Sequence[T], int], list[list[T]]]
Listener = Callable[[Step[T]], None]


def split_evenly(items: Sequence[T], n: int) -> list[list[T]]:
    """Cut `items` into `n` contiguous parts whose sizes differ by at most one."""
    n = max(min(n, len(items)), 1)
    bounds = [len(items) * i // n for i in range(n + 1)]
    return [list(items[lo:hi]) for lo, hi in zip(bounds, bounds[1:], strict=False)]


def _without(items: Sequence[T], removed: Sequence[T]) -> list[T]:
    gone = set(removed)
    return [item for item in items if item not in gone]


def _rotated(parts: list[list[T]], start: int) -> list[tuple[int, list[T]]]:
    """Parts numbered, beginning at `start`: after a reduction the next round resumes there."""
    order = list(range(len(parts)))
    start %= max(len(parts), 1)
    return [(i, parts[i]) for i in order[start:] + order[:start]]


class DD(Generic[T]):
    """Delta debugging with injected test, splitter and cache, as picire's `DD(test, split, cache)`.

    ddmin follows the TSE 2002 algorithm with two refinements that never change the result's
    guarantees: complements are skipped when n == 2 (they equal the two subsets), and after a
    reduction to a complement the next round starts at the part where it happened, which spreads
    the work over the input (The Debugging Book). dd (`isolate`) follows the TSE 2002 rules in
    their stated order.
    """

    def __init__(
        self,
        test: Callable[[frozenset[T]], Outcome],
        *,
        split: Split[T] = split_evenly,
        cache: Cache[T] | None = None,
        stats: Stats | None = None,
        listener: Listener[T] | None = None,
    ) -> None:
        self._test = test
        self._split = split
        self._cache: Cache[T] = cache if cache is not None else Memo()
        self.stats = stats if stats is not None else Stats()
        self._listener = listener
        self._granularity = 2
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
            step = Step(key, outcome, source, self._granularity, frozenset(self.best))
            self._listener(step)
        return outcome

    def ddmin(self, items: Sequence[T]) -> list[T]:
        """A 1-minimal failing subset of `items` (which must fail, while ∅ passes)."""
        current, n, start = list(items), 2, 0
        self.best = list(current)
        while len(current) >= 2:
            self._granularity = n
            parts = self._split(current, n)
            reduced = self._reduce_to_subset(parts, start)
            if reduced is not None:
                current, n, start = reduced, 2, 0
                continue
            index = self._reduce_to_complement(current, parts, start)
            if index is not None:
                current = _without(current, parts[index])
                n, start = max(len(parts) - 1, 2), index
                continue
            if len(parts) >= len(current):
                break  # every single item was removed once, and nothing failed: 1-minimal
            n, start = min(2 * len(parts), len(current)), 0
        return current

    def _reduce_to_subset(self, parts: list[list[T]], start: int) -> list[T] | None:
        for _, part in _rotated(parts, start):
            if self.evaluate(part) is Outcome.FAIL:
                return part
        return None

    def _reduce_to_complement(
        self, current: list[T], parts: list[list[T]], start: int
    ) -> int | None:
        if len(parts) == 2:
            return None  # each complement is the other subset, already tested
        for index, part in _rotated(parts, start):
            if self.evaluate(_without(current, part)) is Outcome.FAIL:
                return index
        return None

    def isolate(self, items: Sequence[T]) -> Isolation[T]:
        """Passing and failing subsets of `items` with a 1-minimal difference (TSE 2002 dd)."""
        passing: list[T] = []
        failing = list(items)
        self.best = list(failing)
        n = 2
        while True:
            delta = _without(failing, passing)
            if len(delta) <= 1:
                break  # a single change left between passing and failing: 1-minimal
            self._granularity = n
            parts = self._split(delta, n)
            moved = self._isolation_step(passing, failing, parts, n)
            if moved is not None:
                passing, failing, n = moved
            elif len(parts) < len(delta):
                n = min(2 * len(parts), len(delta))
            else:
                break
        return Isolation(passing, failing)

    def _isolation_step(
        self, passing: list[T], failing: list[T], parts: list[list[T]], n: int
    ) -> tuple[list[T], list[T], int] | None:
        """Apply the first of dd's four rules that holds for some part (in the TSE order).

        Returns the new (passing, failing, n), or None when no rule applies at this granularity.
        """
        restart, shrink = 2, max(n - 1, 2)
        grown = [_in_order(failing, passing + part) for part in parts]
        shrunk = [_without(failing, part) for part in parts]
        for config in grown:
            if self.evaluate(config) is Outcome.FAIL:
                return passing, config, restart  # reduce to subset
        for config in shrunk:
            if self.evaluate(config) is Outcome.PASS:
                return config, failing, restart  # increase to complement
        for config in grown:
            if self.evaluate(config) is Outcome.PASS:
                return config, failing, shrink  # increase to subset
        for config in shrunk:
            if self.evaluate(config) is Outcome.FAIL:
                return passing, config, shrink  # reduce to complement
        return None


def bisect(count: int, test: Callable[[int], Outcome]) -> tuple[int, int]:
    """Binary search over positions 0..count for where the outcome turns, like `git bisect`.

    Position 0 passes and `count` fails (the caller knows; neither is asked). Returns (last
    passing, first failing). Like `git bisect skip`, an UNRESOLVED position is set aside and the
    untested position nearest the middle is asked instead, so every position strictly between
    the two returned ones is UNRESOLVED: the change happened somewhere in there. Each position is
    asked at most once; with nothing unresolved that is about log2(count) questions.
    """
    passing, failing = 0, count
    skipped: set[int] = set()
    while True:
        candidates = [k for k in range(passing + 1, failing) if k not in skipped]
        if not candidates:
            return passing, failing
        middle = (passing + failing) / 2
        position = min(candidates, key=lambda k: (abs(k - middle), k))
        outcome = test(position)
        if outcome is Outcome.PASS:
            passing = position
        elif outcome is Outcome.FAIL:
            failing = position
        else:
            skipped.add(position)


def _in_order(order: Sequence[T], members: Sequence[T]) -> list[T]:
    """`members`, sorted by their position in `order`."""
    wanted = set(members)
    return [item for item in order if item in wanted]
