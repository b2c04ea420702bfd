"""Probabilistic delta debugging: ProbDD and CDD over the atoms of a failing configuration.

Owns the search that replaces ddmin's rounds of subsets and complements with one kind of step:
remove the atoms most likely to be unneeded, as many as pays best, and learn from the outcome.
ProbDD is Wang et al.'s (FSE 2021), CDD Zhang et al.'s counter-based simplification of it
("Toward a Better Understanding of Probabilistic Delta Debugging", ICSE 2025). Like dd.py this
module is pure: the probe, the atoms and the prior are passed in.

Designing a model (read this before adding one)
-----------------------------------------------
The search keeps one number per atom of the current failing configuration, its *weight*, and a
*settled* mark. A `Model` says what the weight means and does three things with it:
- `size`: given the weights of the unsettled atoms, lightest first, how many to remove next;
- `refuted`: the new weights of atoms whose removal was seen *not* to fail (PASS, or
  UNRESOLVED: either way one of them, or a change tied to them, is needed);
- `settles`: whether a weight is so heavy that the atom is taken as needed without a try.
ProbDD's weight is the probability that the atom is needed, all atoms independent: removing a
set S keeps the failure with probability ∏(1 − p), so it removes the lightest prefix that
maximizes |S|·∏(1 − p) (the expected number of atoms gone), and a refuted S is conditioned on
"some atom of S is needed": p ← p / (1 − ∏(1 − p)). CDD's weight is a counter of refutations;
it removes the lightest prefix of the size that ProbDD would pick for atoms of probability
p0 / (1 − 1/e)^c, c the least counter, and a refutation adds one to each counter. Both need
the prior p0: the literature's 0.1 suits program reduction, where most elements go; a change
set keeps few of its units, and `ONE_NEEDED` (1/m, m the atoms at the start: about one needed
atom expected) makes the first steps remove about 63% of the atoms, then narrow down what a
refutation points at, much as bisection does (about 2.5·log2(m) tests for one needed atom,
where ddmin needs 2·log2(m); for several needed together, about half of ddmin's: its subsets
fail in vain while they are split apart).

Invariants, whatever the model:
- The search moves only to `items` or a configuration a probe reports as really tested and
  seen to FAIL (`dd.Probed.config`, a proper subset of the current one): same contract as
  `dd.minimize`. The answer keeps the input order.
- Everything is deterministic: ties in weight go by the prior's bundles (`together`), then by
  input order; no randomness, so the same probes give the same search at every -j N.
- A refutation is learnt about the chosen atoms, or about fewer when the probe really removed
  fewer (an implied PASS stands for a larger recorded configuration: `_State.learnt`). When
  it removed more (an interior drops what needs the chosen atoms), the chosen atoms are the
  ones refuted, not all that went: only then does each refutation weigh enough (its chosen
  atoms were picked to keep the failure with a fair chance) for the search to move on.
- It terminates: every step moves to a smaller configuration, settles an atom (an atom removed
  alone and refuted is settled, whatever the probe really removed) or makes refuted weights
  heavier, which shrinks the sizes picked until single atoms are tried.
- Removing everything is never probed: ∅ passes (the caller's pre-flight), so such a step is
  a free refutation of all atoms, the evidence that at least one is needed. A caller for whom
  ∅ is not known to pass (`empty_passes=False`: a reduction's round, whose atoms are only some
  of the input's pieces) has it probed while no refutation touched any atom left.
- The result is not certified 1-minimal here (a ProbDD atom may settle by weight, and a CDD or
  ProbDD atom refuted alone early may become removable after later removals): the caller's
  check by real outcomes is what certifies it (hierarchical.Search._verify_minimal).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Generic, Protocol, TypeVar

from ddchange.model import Outcome
from ddchange.search.dd import Ahead, Atoms, Probe, in_order, nothing_ahead, singletons

T = TypeVar("T", bound=Hashable)

# The prior: the probability that one of m atoms is needed, before any test.
Prior = Callable[[int], float]
# The prior's bundles: one key per atom; atoms with equal keys are tied together (one needs the
# other) and, weights being equal, are removed together. A prior only: never a filter.
Together = Callable[[list[list[T]]], list[int]]
# Candidates told to `ahead` per probe at most, the one about to be probed included: the likely
# course of the search, planned a few steps deep and no further (each costs a sort).
LOOKAHEAD = 8


def fixed(p0: float) -> Prior:
    """The literature's prior: every atom needed with probability p0, however many there are."""
    return lambda _atoms: p0


def one_needed(atoms: int) -> float:
    """About one needed atom expected: what a change set that fails for one reason looks like."""
    return 1.0 / max(atoms, 1)


ONE_NEEDED: Prior = one_needed


def apart(atoms: list[list[T]]) -> list[int]:
    """No bundles: every atom on its own."""
    return list(range(len(atoms)))


class Model(Protocol):
    """What an atom's weight means; see the module docstring. `p0` is the prior's value for
    the atoms the search started with."""

    @property
    def prior(self) -> Prior: ...

    def start(self, p0: float) -> float: ...

    def size(self, weights: Sequence[float], p0: float) -> int: ...

    def refuted(self, weights: Sequence[float]) -> list[float]: ...

    def settles(self, weight: float) -> bool: ...


def _best_size(p: float, most: int) -> int:
    """The s ≤ most maximizing s·(1 − p)^s, the larger on a tie: ⌊x⌋ or ⌈x⌉ for x = −1/ln(1 − p)."""
    if p >= 1.0 or most <= 1:
        return 1
    if p <= 0.0:
        return most
    x = -1.0 / math.log1p(-p)
    low = max(min(math.floor(x), most), 1)
    high = max(min(math.ceil(x), most), 1)
    return high if high * (1 - p) ** high >= low * (1 - p) ** low else low


@dataclass(frozen=True)
class ProbDD:
    """Wang et al.'s model: weights are probabilities of being needed (see the module docstring).
    `threshold`: an atom this likely needed is settled without a try (1.0: never)."""

    prior: Prior = ONE_NEEDED
    threshold: float = 1.0

    def start(self, p0: float) -> float:
        return p0

    def size(self, weights: Sequence[float], p0: float) -> int:
        best, gain, kept = 1, 0.0, 1.0
        for count, p in enumerate(weights, 1):
            kept *= 1.0 - p
            if count * kept < gain:
                break  # the gain rises, then falls: the first fall is past the top
            best, gain = count, count * kept
        return best

    def refuted(self, weights: Sequence[float]) -> list[float]:
        survives = math.prod(1.0 - p for p in weights)
        return [min(p / (1.0 - survives), 1.0) if survives < 1.0 else 1.0 for p in weights]

    def settles(self, weight: float) -> bool:
        return weight >= self.threshold


@dataclass(frozen=True)
class CDD:
    """Zhang et al.'s counter-based model: weights count refutations (module docstring)."""

    prior: Prior = ONE_NEEDED

    def start(self, p0: float) -> float:
        return 0.0

    def size(self, weights: Sequence[float], p0: float) -> int:
        return _best_size(p0 / (1.0 - 1.0 / math.e) ** min(weights), len(weights))

    def refuted(self, weights: Sequence[float]) -> list[float]:
        return [w + 1.0 for w in weights]

    def settles(self, weight: float) -> bool:
        return False


@dataclass(kw_only=True)
class _State(Generic[T]):
    """The search's belief about a configuration, atom by atom, in input order."""

    model: Model
    p0: float
    atoms: list[list[T]]
    weights: list[float]
    settled: list[bool]
    bundles: list[int]
    empty_passes: bool = True  # removing every atom is known to pass

    @classmethod
    def start(
        cls, model: Model, atoms: list[list[T]], bundles: list[int], empty_passes: bool
    ) -> _State[T]:
        p0 = model.prior(len(atoms))
        weight = model.start(p0)
        return cls(
            model=model,
            p0=p0,
            atoms=atoms,
            weights=[weight] * len(atoms),
            settled=[False] * len(atoms),
            bundles=bundles,
            empty_passes=empty_passes,
        )

    def copy(self) -> _State[T]:
        return replace(self, weights=list(self.weights), settled=list(self.settled))

    def choose(self) -> list[int]:
        """The atoms to remove next (indices, ascending); empty when all are settled."""
        live = [k for k in range(len(self.atoms)) if not self.settled[k]]
        if not live:
            return []
        live.sort(key=lambda k: (self.weights[k], self.bundles[k], k))
        return sorted(live[: self.model.size([self.weights[k] for k in live], self.p0)])

    def without(self, chosen: list[int]) -> list[T]:
        gone = set(chosen)
        return [item for k, atom in enumerate(self.atoms) if k not in gone for item in atom]

    def refute(self, chosen: list[int], touched: list[int]) -> None:
        """Removing `touched` was seen not to fail (having tried to remove `chosen`)."""
        weights = self.model.refuted([self.weights[k] for k in touched])
        for k, weight in zip(touched, weights, strict=True):
            self.weights[k] = weight
            self.settled[k] = self.settled[k] or self.model.settles(weight)
        if len(chosen) == 1:
            self.settled[chosen[0]] = True

    def restrict(self, kept: frozenset[T]) -> _State[T]:
        """The state of `kept`, a subset: atoms cut down to their kept items (an atom of a
        subset is the part of an atom the subset holds, as for every grouping by a key)."""
        ks = [k for k, atom in enumerate(self.atoms) if any(item in kept for item in atom)]
        return replace(
            self,
            atoms=[[item for item in self.atoms[k] if item in kept] for k in ks],
            weights=[self.weights[k] for k in ks],
            settled=[self.settled[k] for k in ks],
            bundles=[self.bundles[k] for k in ks],
        )

    def learnt(self, chosen: list[int], tested: frozenset[T]) -> list[int]:
        """The atoms a refutation is about, when removing `chosen` was probed as `tested`:
        the chosen atoms that `tested` lacks, when it holds all the rest (an implied PASS
        stands for a larger recorded configuration, which says more); else all the chosen
        (the probe removed more, as an interior does, which is how removing them is tried)."""
        gone = [k for k, atom in enumerate(self.atoms) if any(i not in tested for i in atom)]
        return gone if gone and set(gone) <= set(chosen) else chosen

    def next(self) -> list[int]:
        """The atoms the search removes next; empty when it stops. Removing all is a free
        refutation where it is known to pass, and else too once an atom left was refuted:
        it is tried only while nothing speaks for any atom left (an input's pass, say, that
        took out all but one of its pieces and never tried that one)."""
        while self.atoms:
            chosen = self.choose()
            if not chosen or len(chosen) < len(self.atoms):
                return chosen
            start = self.model.start(self.p0)
            if not self.empty_passes and all(self.weights[k] == start for k in chosen):
                return chosen
            self.refute(chosen, chosen)
        return []


# The flat baselines of the literature, over single items (`dd.DD(test).ddmin(items, reduce)`),
# with p0 = 0.1 and ProbDD's settling at 0.8 as in the CDD paper's artifact (zhangxiaosa/cdd).
def probdd(items: Sequence[T], probe: Probe[T]) -> list[T]:
    """Wang et al.'s ProbDD over single items, as published: p0 = 0.1, settled at 0.8."""
    return minimize(items, probe, model=ProbDD(fixed(0.1), threshold=0.8))


def cdd(items: Sequence[T], probe: Probe[T]) -> list[T]:
    """Zhang et al.'s CDD over single items, as published: p0 = 0.1."""
    return minimize(items, probe, model=CDD(fixed(0.1)))


def minimize(
    items: Sequence[T],
    probe: Probe[T],
    *,
    model: Model | None = None,
    atoms: Atoms[T] = singletons,
    ahead: Ahead[T] = nothing_ahead,
    together: Together[T] = apart,
    empty_passes: bool = True,
) -> list[T]:
    """Probabilistic delta debugging over the atoms of `items`, which must fail (∅ passes);
    ProbDD with the ONE_NEEDED prior unless another `model` is given.

    Returns `items` or a configuration a probe saw FAIL, in input order (see the module
    docstring for the invariants). Before each probe, `ahead` is told that candidate, then
    the candidates the search would probe next if it did not fail, or if it did, a few steps
    deep (at most LOOKAHEAD in all); it decides nothing.
    """
    current = list(items)
    pieces = atoms(current)
    state = _State.start(model or ProbDD(), pieces, together(pieces), empty_passes)
    while chosen := state.next():
        ahead(_planned(state, chosen))
        found = probe(state.without(chosen))
        within = frozenset(current)
        if found.outcome is Outcome.FAIL and found.config < within:
            current = in_order(current, list(found.config))
            state = state.restrict(found.config)
        else:
            state.refute(chosen, state.learnt(chosen, found.config))
    return current


def _planned(state: _State[T], chosen: list[int]) -> Iterator[list[T]]:
    """The candidate about to be probed, then the likely course of the search after it,
    breadth first, each step followed as if it did not fail (the likelier outcome at
    ProbDD's chosen sizes), then as if it failed; LOOKAHEAD candidates at most, each
    worked out only when the taker reads that far."""
    frontier = [(state, chosen)]
    for _ in range(LOOKAHEAD):
        if not frontier:
            return
        node, removed = frontier.pop(0)
        candidate = node.without(removed)
        yield candidate
        refuted = node.copy()
        refuted.refute(removed, removed)
        for branch in (refuted, node.restrict(frozenset(candidate))):
            following = branch.next()
            if following:
                frontier.append((branch, following))
