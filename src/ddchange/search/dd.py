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
- The search moves only to configurations a probe reports as *really tested* (`Probed.config`):
  the minimized configuration is `items` or one seen to FAIL, and dd's pair is one seen to PASS
  and one seen to FAIL. What a probe may do in place of a plain test (a cache, an implication,
  a dependency-closed stand-in) is the caller's business; it must report what it tested.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ddchange.model import Outcome, Source

T = TypeVar("T", bound=Hashable)
S = TypeVar("S")  # anything a splitter cuts: items, or atoms (lists of items)


@dataclass(frozen=True)
class Hit:
    """A cache answer. `implied` is true when monotony, not an exact record, gave it."""

    outcome: Outcome
    implied: bool = False


@dataclass(frozen=True, kw_only=True)
class Step(Generic[T]):
    """One evaluation, reported to the listener: for progress displays and search plots."""

    config: frozenset[T]  # the configuration asked about
    outcome: Outcome
    source: Source
    failing: frozenset[T]  # the smallest configuration known to fail so far
    passing: frozenset[T] = frozenset()  # dd: the largest known to pass inside `failing`

    @property
    def size(self) -> int:
        return len(self.config)


@dataclass(frozen=True)
class Isolation(Generic[T]):
    """dd's answer: a passing and a failing configuration whose difference is 1-minimal."""

    passing: list[T]
    failing: list[T]


# A splitter cuts a configuration into about n parts that partition it (no overlap, no loss).
Split = Callable[[Sequence[S], int], list[list[S]]]


def split_evenly(items: Sequence[S], n: int) -> list[list[S]]:
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


@dataclass(frozen=True)
class Probed(Generic[T]):
    """What a probe found out about a candidate: the outcome of the configuration it really
    tested. `config` is the candidate itself, or another configuration the probe chose to test
    in its place (for ddchange: the candidate's dependency-closed interior); a reduction always
    goes to `config`, never to the candidate, so the search only ever holds configurations
    whose outcome was seen."""

    outcome: Outcome
    config: frozenset[T]


Probe = Callable[[list[T]], Probed[T]]
# Told the candidates that would be probed from now on, in order, before each probe: a caller may
# start them early (ddchange's -j N). It takes as many as it wants from the iterator (none
# costs nothing), and only hints: it never answers for a probe.
Ahead = Callable[[Iterator[list[T]]], None]


def nothing_ahead(_upcoming: Iterator[list[T]]) -> None:
    """The default: nothing is started early."""


# The atoms of a configuration: the pieces, in order, that may not be split further at the
# current level (single items for textbook ddmin; files, functions, hunks for ddchange).
Atoms = Callable[[list[T]], list[list[T]]]


def singletons(items: list[T]) -> list[list[T]]:
    return [[item] for item in items]


def _pieces(atoms: list[list[T]], n: int, split: Split[list[T]]) -> list[list[T]]:
    """`atoms` cut into about n parts, each the concatenation of whole atoms."""
    return [[item for atom in part for item in atom] for part in split(atoms, n)]


def minimize(
    items: Sequence[T],
    probe: Probe[T],
    *,
    atoms: Atoms[T] = singletons,
    split: Split[list[T]],
    ahead: Ahead[T] = nothing_ahead,
    expand: Atoms[T] | None = None,
) -> list[T]:
    """ddmin (TSE 2002) over the atoms of `items`, which must fail.

    Generalized in one way only: when a probe answers FAIL, the search continues from the
    configuration the probe really tested (`Probed.config`, a proper subset of the current
    one), regrouped into atoms. So the result is always `items` or a configuration a probe saw
    fail, and it is 1-minimal at the atom level against the probes: removing any one of its
    atoms was probed and did not fail. Two refinements never change that: complements are
    skipped when n == 2 (they equal the two subsets), and after a reduction to a complement
    the next round starts at the part where it happened (The Debugging Book).

    Before each probe, `ahead` is told the candidates of the round from that one on, in the
    order they would be probed, then what the rounds after a reduction to each of them would
    probe first (`_speculated`; halves of the candidate's `expand`, default its atoms: a caller
    that goes on at a finer level afterwards may give those); a caller may start them early.
    It decides nothing.
    """
    current, n, start = list(items), 2, 0
    while True:
        pieces = atoms(current)
        if len(pieces) < 2:
            return current
        parts = _pieces(pieces, n, split)
        rotated = _rotated(parts, start)
        # Subsets first, then (for n > 2) complements; each with the n and start it leads to.
        round_ = [(part, 2, 0) for _, part in rotated]
        if len(parts) > 2:
            round_ += [(_without(current, part), max(len(parts) - 1, 2), i) for i, part in rotated]
        candidates = [candidate for candidate, _, _ in round_]

        def hint(upcoming: Iterator[list[T]]) -> None:
            ahead(_speculated(list(upcoming), expand or atoms, split))

        reduced = _first_failing(candidates, current, probe, hint)
        if reduced is not None:
            index, current = reduced
            n, start = round_[index][1:]
            continue
        if len(parts) >= len(pieces):
            return current  # every single atom was removed once, and nothing failed
        n, start = min(2 * len(parts), len(pieces)), 0


def _speculated(
    candidates: list[list[T]], atoms: Atoms[T], split: Split[list[T]]
) -> Iterator[list[T]]:
    """`candidates`, then the halves of each by `atoms` (what the next round probes if that
    candidate fails): first halves of all first, since the next round probes a first half
    first, then second halves; then the halves of those, and so on. The likely course of the
    search, to start early, generated as far as the taker reads."""
    generation = candidates
    while generation:
        yield from generation
        halves = [_pieces(pieces, 2, split) for c in generation if len(pieces := atoms(c)) >= 2]
        generation = [half[0] for half in halves] + [half[1] for half in halves]


def _first_failing(
    candidates: list[list[T]], current: list[T], probe: Probe[T], ahead: Ahead[T]
) -> tuple[int, list[T]] | None:
    """The first candidate that fails, and the configuration really seen to fail for it; that
    must be a proper subset of `current`, else it teaches nothing."""
    within = frozenset(current)
    for index, candidate in enumerate(candidates):
        ahead(itertools.islice(candidates, index, None))
        found = probe(candidate)
        if found.outcome is Outcome.FAIL and found.config < within:
            return index, in_order(current, list(found.config))
    return None


def isolate(
    items: Sequence[T],
    probe: Probe[T],
    *,
    atoms: Atoms[T] = singletons,
    split: Split[list[T]],
    ahead: Ahead[T] = nothing_ahead,
) -> Isolation[T]:
    """dd (TSE 2002): a passing and a failing subset of `items` with a 1-minimal difference.

    The empty configuration must pass and `items` fail. Like `minimize`, every move goes to a
    configuration a probe really tested: FAIL moves the failing side down to it, PASS the
    passing side up, and only when it stays between the two (passing ⊆ it ⊂ failing, or
    passing ⊂ it ⊆ failing). `ahead` is told what would be probed next, as in `minimize`.
    """
    passing: list[T] = []
    failing = list(items)
    n = 2
    while True:
        delta = atoms(_without(failing, passing))
        if len(delta) <= 1:
            return Isolation(passing, failing)  # one atom between them: 1-minimal
        parts = _pieces(delta, n, split)
        moved = _isolation_step(passing, failing, parts, n, probe, ahead)
        if moved is not None:
            passing, failing, n = moved
        elif len(parts) < len(delta):
            n = min(2 * len(parts), len(delta))
        else:
            return Isolation(passing, failing)


def _isolation_step(
    passing: list[T],
    failing: list[T],
    parts: list[list[T]],
    n: int,
    probe: Probe[T],
    ahead: Ahead[T],
) -> tuple[list[T], list[T], int] | None:
    """Apply the first of dd's four rules that holds for some part (in the TSE order).

    Returns the new (passing, failing, n), or None when no rule applies at this granularity.
    """
    restart, shrink = 2, max(n - 1, 2)
    grown = [in_order(failing, passing + part) for part in parts]
    shrunk = [_without(failing, part) for part in parts]
    low, high = frozenset(passing), frozenset(failing)
    rules = (
        (grown, Outcome.FAIL, restart),  # reduce to subset
        (shrunk, Outcome.PASS, restart),  # increase to complement
        (grown, Outcome.PASS, shrink),  # increase to subset
        (shrunk, Outcome.FAIL, shrink),  # reduce to complement
    )
    asked = [(config, wanted, n_next) for configs, wanted, n_next in rules for config in configs]
    for index, (config, wanted, n_next) in enumerate(asked):
        ahead(later for later, _, _ in itertools.islice(asked, index, None))
        found = probe(config)
        if found.outcome is not wanted:
            continue
        seen = in_order(failing, list(found.config))
        if wanted is Outcome.FAIL and low <= found.config < high:
            return passing, seen, n_next
        if wanted is Outcome.PASS and low < found.config < high:
            return seen, failing, n_next
    return None


def bisect(
    count: int,
    test: Callable[[int], Outcome],
    *,
    width: int = 1,
    offer: Callable[[list[int]], None] = lambda _positions: None,
) -> tuple[int, int]:
    """Binary search over positions 0..count for where the outcome turns, like `git bisect`.

    Position 0 passes and `count` fails (the caller knows; neither is asked). Returns (last
    passing, first failing). Like `git bisect skip`, an UNRESOLVED position is set aside and the
    untested position nearest the middle is asked instead, so every position strictly between
    the two returned ones is UNRESOLVED: the change happened somewhere in there. Each position is
    asked at most once; with nothing unresolved that is about log2(count) questions.

    With `width` above 1, a multi-section search: each round asks `width` positions that cut
    the interval into `width` + 1 parts of about the same size, all of them told to `offer`
    first (so that they can run at once), then asked in order; the interval shrinks to the
    part where the outcome turns: about log(count) / log(width + 1) rounds. Where the outcome
    turns only once, the answer is the same for every width.
    """
    passing, failing = 0, count
    skipped: set[int] = set()
    while True:
        candidates = [k for k in range(passing + 1, failing) if k not in skipped]
        if not candidates:
            return passing, failing
        round_ = _sections(candidates, passing, failing, width)
        offer(round_)
        outcomes = {position: test(position) for position in round_}
        fails = [k for k in round_ if outcomes[k] is Outcome.FAIL]
        failing = min(fails, default=failing)
        passing = max(
            (k for k in round_ if outcomes[k] is Outcome.PASS and k < failing), default=passing
        )
        skipped |= {k for k in round_ if outcomes[k] is Outcome.UNRESOLVED}


def _sections(candidates: list[int], passing: int, failing: int, width: int) -> list[int]:
    """The positions of one round: for each of the `width` points that cut passing..failing
    into equal parts, the untested candidate nearest to it (the lower one on a tie), each
    once, in order."""
    chosen: list[int] = []
    for part in range(1, width + 1):
        point = passing + (failing - passing) * part / (width + 1)
        left = [k for k in candidates if k not in chosen]
        if left:
            chosen.append(min(left, key=lambda k: (abs(k - point), k)))
    return sorted(chosen)


def in_order(order: Sequence[T], members: Sequence[T]) -> list[T]:
    """`members`, sorted by their position in `order`."""
    wanted = set(members)
    return [item for item in order if item in wanted]
