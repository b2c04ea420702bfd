"""Properties of the probabilistic search (search/probabilistic.py), against the oracles of
tests/oracles.py: what it returns, what it moves to, that it is deterministic, and what it costs."""

from __future__ import annotations

import math
from collections.abc import Iterator

import flatdd
import pytest
from flatdd import DD
from hypothesis import example, given
from hypothesis import strategies as st
from oracles import (
    Counting,
    Oracle,
    assert_one_minimal_failing,
    closed,
    culprit_oracle,
    dependent_oracle,
    problems,
)

from ddchange.model import Outcome
from ddchange.search import dd, probabilistic
from ddchange.search.probabilistic import CDD, LOOKAHEAD, ProbDD, fixed

MODELS = {
    "probdd": ProbDD(),
    "cdd": CDD(),
    "probdd, p0 = 0.1, settled at 0.8": ProbDD(fixed(0.1), threshold=0.8),
    "cdd, p0 = 0.1": CDD(fixed(0.1)),
}
models = st.sampled_from(sorted(MODELS))


class Probes:
    """A probe that asks the oracle and records what it reported, each answer once."""

    def __init__(self, oracle: Oracle, stand_in: dict[int, int] | None = None) -> None:
        self.oracle = oracle
        self.needs = stand_in  # when given, a candidate is tested as its closure-free interior
        self.reported: list[dd.Probed[int]] = []
        self.candidates: list[frozenset[int]] = []
        self.tests = 0
        self._seen: dict[frozenset[int], Outcome] = {}

    def __call__(self, candidate: list[int]) -> dd.Probed[int]:
        config = frozenset(candidate)
        self.candidates.append(config)
        if self.needs is not None:
            config = _interior(config, self.needs)
        if config not in self._seen:
            self.tests += 1
            self._seen[config] = self.oracle(config)
        found = dd.Probed(self._seen[config], config)
        self.reported.append(found)
        return found


def _interior(config: frozenset[int], needs: dict[int, int]) -> frozenset[int]:
    """The largest subset in which every item has what it needs (as Hierarchy.interior)."""
    kept = set(config)
    while broken := {k for k in kept if k in needs and needs[k] not in kept}:
        kept -= broken
    return frozenset(kept)


@given(problems(with_needs=False), models)
@example((40, [frozenset({0, 39}), frozenset({20})], {}), "probdd")
@example((1, [frozenset({0})], {}), "cdd")
def test_on_a_monotone_oracle_the_answer_fails_and_is_one_minimal(
    problem: tuple, name: str
) -> None:
    """Without settling by weight, an atom is kept only once removing it alone was refuted,
    from a superset of the answer: on a monotone oracle that makes the answer 1-minimal."""
    n, culprits, _ = problem
    items = list(range(n))
    oracle = culprit_oracle(culprits)
    result = probabilistic.minimize(items, Probes(oracle), model=MODELS[name])
    if name.startswith(("probdd,", "cdd,")):
        assert oracle(frozenset(result)) is Outcome.FAIL  # settled by weight: no 1-minimality
        assert result == [i for i in items if i in set(result)]
    else:
        assert_one_minimal_failing(result, items, oracle)


@given(problems(with_needs=True), models, st.booleans())
@example((10, [frozenset({7, 2})], {7: 2, 3: 4}), "probdd", True)
def test_it_moves_only_to_configurations_seen_to_fail(
    problem: tuple, name: str, interior: bool
) -> None:
    """Unresolved outcomes, and a probe that may test the interior in place of the candidate:
    every candidate lies within the last configuration reported to FAIL (the search went
    there, not to the candidate that stood for it), and the answer is the input or such a
    configuration, in input order."""
    n, culprits, needs = problem
    items = list(range(n))
    probes = Probes(dependent_oracle(culprits, needs), needs if interior else None)
    result = probabilistic.minimize(items, probes, model=MODELS[name])
    current = frozenset(items)
    for candidate, found in zip(probes.candidates, probes.reported, strict=True):
        assert candidate < current
        if found.outcome is Outcome.FAIL:
            current = found.config
    assert frozenset(result) == current
    assert result == [i for i in items if i in set(result)]


@given(problems(with_needs=True), models)
def test_it_is_deterministic(problem: tuple, name: str) -> None:
    n, culprits, needs = problem
    runs = []
    for _ in range(2):
        probes = Probes(dependent_oracle(culprits, needs), needs)
        answer = probabilistic.minimize(list(range(n)), probes, model=MODELS[name])
        runs.append((answer, [f.config for f in probes.reported]))
    assert runs[0] == runs[1]


class Hints:
    """Takes every candidate `ahead` offers, and records them."""

    def __init__(self) -> None:
        self.told: list[list[frozenset[int]]] = []

    def __call__(self, upcoming: Iterator[list[int]]) -> None:
        self.told.append([frozenset(c) for c in upcoming])


@given(problems(with_needs=True), models)
@example((12, [frozenset({2}), frozenset({7, 9})], {9: 8}), "probdd")
def test_the_hint_ahead_names_each_probe_first_is_bounded_and_changes_nothing(
    problem: tuple, name: str
) -> None:
    """-j N rests on this: before each probe, `ahead` is told that very candidate first, at
    most LOOKAHEAD candidates in all, and taking them changes neither probes nor answer."""
    n, culprits, needs = problem
    oracle = dependent_oracle(culprits, needs)
    runs = []
    for ahead in (None, Hints()):
        probes = Probes(oracle)
        hinted = {} if ahead is None else {"ahead": ahead}
        answer = probabilistic.minimize(list(range(n)), probes, model=MODELS[name], **hinted)
        asked = [f.config for f in probes.reported]
        runs.append((answer, asked))
        if ahead is not None:
            assert [told[0] for told in ahead.told] == asked
            assert all(len(told) <= LOOKAHEAD for told in ahead.told)
    assert runs[0] == runs[1]


def test_the_plan_ahead_holds_the_next_probe_whatever_the_outcome() -> None:
    """After a candidate, the plan names the search's next probe both if it does not fail
    and if it does (here: ProbDD's first two steps on 16 items, each way)."""
    for culprit in (0, 15):
        hints = Hints()
        probes = Probes(culprit_oracle([frozenset({culprit})]))
        probabilistic.minimize(list(range(16)), probes, ahead=hints)
        first, second = (f.config for f in probes.reported[:2])
        assert second in hints.told[0][1:3]


def test_it_never_probes_the_empty_configuration() -> None:
    """∅ passes (the caller's pre-flight): removing every atom is refuted for free."""
    probes = Probes(culprit_oracle([frozenset({3})]))
    assert probabilistic.minimize(list(range(4)), probes) == [3]
    assert frozenset() not in {f.config for f in probes.reported}


# -- budgets (pinned, measured) ---------------------------------------------------------------


@given(st.integers(2, 3000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n - 1))))
@example((8721, 4000))  # GDB's number of changes
@example((1024, 1023))
@example((3, 2))
def test_budget_for_one_culprit_is_logarithmic(problem: tuple[int, int]) -> None:
    """One culprit among n singletons: ProbDD with the ONE_NEEDED prior removes about 63% and
    then bisects what a refutation points at. Pinned (measured): at most 2.5·log2(n) + 3,
    where ddmin needs 2·log2(n): one culprit is ddmin's best case."""
    n, culprit = problem
    probes = Probes(culprit_oracle([frozenset({culprit})]))
    assert probabilistic.minimize(list(range(n)), probes) == [culprit]
    assert probes.tests <= 2.5 * math.log2(n) + 3


def _tests(reduce: flatdd.Reduce[int] | None, n: int, culprits: list[frozenset[int]]) -> int:
    counting = Counting(culprit_oracle(culprits))
    DD(counting).ddmin(list(range(n)), reduce)
    return counting.calls


def _default(items: list[int], probe: dd.Probe[int]) -> list[int]:
    return probabilistic.minimize(items, probe)


@pytest.mark.parametrize(("n", "k"), [(16, 2), (64, 2), (64, 3), (256, 3), (1000, 2)])
def test_budget_for_k_culprits_that_fail_only_together_beats_ddmin(n: int, k: int) -> None:
    """k culprits spread out, all needed together: ddmin spends its subsets in vain at every
    granularity; the probabilistic search only removes. Pinned (measured): at most 0.65 of
    ddmin's tests, summed over 5 placements."""
    placements = [frozenset(range(s, n, n // k)[:k]) for s in range(5)]
    ours = sum(_tests(_default, n, [c]) for c in placements)
    textbook = sum(_tests(None, n, [c]) for c in placements)
    assert ours <= 0.65 * textbook


def test_the_flat_baselines_run_over_single_items() -> None:
    """ProbDD and CDD as published (p0 = 0.1): a failing subset, from DD like textbook ddmin.
    p0 = 0.1 expects a tenth of the items needed, so on one culprit among 1,000 they spend
    about n·p0 tests where the ONE_NEEDED prior spends about log2(n) (pinned, measured)."""
    culprits = [frozenset({417})]
    for reduce in (probabilistic.probdd, probabilistic.cdd):
        counting = Counting(culprit_oracle(culprits))
        assert DD(counting).ddmin(list(range(1000)), reduce) == [417]
        assert 90 <= counting.calls <= 120
    assert _tests(_default, 1000, culprits) <= 25


@given(problems(with_needs=True))
def test_needs_as_a_prior_keep_the_answer_within_what_fails(problem: tuple) -> None:
    """Bundles (`together`) only order removals: the answer still fails, and on a monotone
    oracle it is the same kind of answer as without them (1-minimal)."""
    n, culprits, needs = problem
    items = list(range(n))
    oracle = culprit_oracle([closed(c, needs) for c in culprits])

    def together(atoms: list[list[int]]) -> list[int]:
        return [needs.get(atom[0], atom[0]) for atom in atoms]

    result = probabilistic.minimize(items, Probes(oracle), together=together)
    assert_one_minimal_failing(result, items, oracle)


@given(
    st.lists(st.integers(0, 6).map(float), min_size=1, max_size=80),
    # A prior is 1/atoms or a chosen p0: 0, or not below a millionth.
    st.one_of(st.just(0.0), st.floats(1e-6, 1.0)),
)
@example([0.0], 0.5)
@example([1.0, 2.0], 0.0)
@example([0.0] * 40, 1 / 40)
@example([3.0] * 10, 0.01)
def test_cdd_removes_as_many_atoms_as_the_expected_gain_wants(
    weights: list[float], p0: float
) -> None:
    """CDD's size is the s ≤ len(weights) that maximizes s·(1 − p)^s, the larger on a tie, for
    p = p0 / (1 − 1/e)^(fewest refutations): checked against trying every s."""
    p = p0 / (1.0 - 1.0 / math.e) ** min(weights)
    sizes = range(1, len(weights) + 1)
    best = 1 if p >= 1.0 else max(sizes, key=lambda s: (s * (1 - p) ** s, s))
    assert CDD().size(weights, p0) == best
