"""The outcome cache: exact answers, monotony, and the projection used by the hierarchy."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ddchange.model import Outcome
from ddchange.search.cache import OutcomeCache
from ddchange.search.dd import Hit


def fs(*items: int) -> frozenset[int]:
    return frozenset(items)


def test_exact_answers_are_returned_as_exact_hits() -> None:
    cache = OutcomeCache[int](monotony=False)
    cache.store(fs(1, 2), Outcome.UNRESOLVED)
    assert cache.lookup(fs(1, 2)) == Hit(Outcome.UNRESOLVED)
    assert cache.lookup(fs(1)) is None


def test_monotony_implies_pass_for_subsets_and_fail_for_supersets() -> None:
    cache = OutcomeCache[int]()
    cache.store(fs(1, 2, 3), Outcome.PASS)
    cache.store(fs(7), Outcome.FAIL)
    assert cache.lookup(fs(1, 3)) == Hit(Outcome.PASS, implied=True)
    assert cache.lookup(fs()) == Hit(Outcome.PASS, implied=True)
    assert cache.lookup(fs(1, 7)) == Hit(Outcome.FAIL, implied=True)
    assert cache.lookup(fs(1, 4)) is None


def test_without_monotony_nothing_is_implied() -> None:
    cache = OutcomeCache[int](monotony=False)
    cache.store(fs(1, 2, 3), Outcome.PASS)
    cache.store(fs(7), Outcome.FAIL)
    assert cache.lookup(fs(1)) is None
    assert cache.lookup(fs(7, 8)) is None


def test_unresolved_outcomes_imply_nothing() -> None:
    cache = OutcomeCache[int]()
    cache.store(fs(1, 2), Outcome.UNRESOLVED)
    assert cache.lookup(fs(1)) is None
    assert cache.lookup(fs(1, 2, 3)) is None


@given(st.lists(st.frozensets(st.integers(0, 6)), max_size=30))
def test_monotone_lookups_agree_with_every_stored_outcome(configs: list[frozenset[int]]) -> None:
    """Only maximal passing / minimal failing sets are kept; nothing that was implied is lost.

    Every stored configuration is answered exactly, every superset of a stored FAIL and every
    subset of a stored PASS is answered (by implication if not recorded), and whatever else is
    answered is right, with a recorded witness behind each implied answer.
    """
    cache = OutcomeCache[int]()

    def truth(config: frozenset[int]) -> Outcome:
        # A consistent monotone history: FAIL iff the set contains 6.
        return Outcome.FAIL if 6 in config else Outcome.PASS

    for config in configs:
        cache.store(config, truth(config))
    for config in configs:
        assert cache.lookup(config) == Hit(truth(config))
        smaller, larger = config - {min(config, default=0)}, config | {5}
        # Monotony decides one side (a superset of a failure, a subset of a pass); the other
        # side is not decided by this record, but if it is answered, it is answered right.
        failed = truth(config) is Outcome.FAIL
        implied, undecided = (larger, smaller) if failed else (smaller, larger)
        hit = cache.lookup(implied)
        assert hit is not None
        assert hit.outcome is truth(config)
        for probe in (implied, undecided):
            hit = cache.lookup(probe)
            if hit is None:
                continue
            assert hit.outcome is truth(probe)
            assert hit.implied is (cache.exact(probe) is None)
            if hit.implied:
                # What stands behind an implication is a recorded configuration with that
                # outcome, on the right side of the probe.
                witness = cache.witness(probe, hit.outcome)
                assert cache.exact(witness) is hit.outcome
                assert (witness <= probe) if hit.outcome is Outcome.FAIL else (probe <= witness)


def test_exact_never_answers_by_implication() -> None:
    cache = OutcomeCache[int]()
    cache.store(fs(1, 2, 3), Outcome.PASS)
    cache.store(fs(7), Outcome.FAIL)
    assert cache.lookup(fs(1)) == Hit(Outcome.PASS, implied=True)
    assert cache.exact(fs(1)) is None
    assert cache.exact(fs(7, 8)) is None
    assert cache.exact(fs(7)) is Outcome.FAIL
    assert cache.witness(fs(7, 8), Outcome.FAIL) == fs(7)


def test_the_witness_is_the_largest_passing_superset_or_the_smallest_failing_subset() -> None:
    """Of several recorded configurations that imply an answer, the witness is the one a
    search gains most by moving to: the largest pass, the smallest failure. (Sets compared as
    sets are only partly ordered: neither of these pairs is a subset of the other.)"""
    cache = OutcomeCache[int]()
    cache.store(fs(1, 2), Outcome.PASS)
    cache.store(fs(1, 3, 4), Outcome.PASS)
    cache.store(fs(5, 6, 7), Outcome.FAIL)
    cache.store(fs(8), Outcome.FAIL)
    assert cache.witness(fs(1), Outcome.PASS) == fs(1, 3, 4)
    assert cache.witness(fs(5, 6, 7, 8), Outcome.FAIL) == fs(8)
