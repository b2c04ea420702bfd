"""The outcome cache: exact answers, monotony, and the projection used by the hierarchy."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ddchange.cache import OutcomeCache, Projected
from ddchange.dd import Hit, Outcome


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


@given(st.lists(st.tuples(st.frozensets(st.integers(0, 6)), st.booleans()), max_size=30))
def test_monotone_lookups_agree_with_every_stored_outcome(records: list) -> None:
    """Only maximal passing / minimal failing sets are kept; nothing that was implied is lost."""
    cache = OutcomeCache[int]()
    # A consistent monotone history: FAIL iff the set contains 6.
    for config, _ in records:
        cache.store(config, Outcome.FAIL if 6 in config else Outcome.PASS)
    for config, _ in records:
        for probe in (config - {min(config, default=0)}, config | {5}):
            hit = cache.lookup(probe)
            if hit is not None:
                assert hit.outcome is (Outcome.FAIL if 6 in probe else Outcome.PASS)


def test_projected_view_shares_answers_between_levels() -> None:
    files = {"a": fs(1, 2), "b": fs(3)}
    hunks = OutcomeCache[int]()

    def expand(groups: frozenset[str]) -> frozenset[int]:
        return frozenset().union(*(files[g] for g in groups))

    by_file = Projected(hunks, expand)
    by_file.store(frozenset({"a"}), Outcome.FAIL)
    assert hunks.lookup(fs(1, 2)) == Hit(Outcome.FAIL)
    assert hunks.lookup(fs(1, 2, 3)) == Hit(Outcome.FAIL, implied=True)
    hunks.store(fs(3), Outcome.PASS)
    assert by_file.lookup(frozenset({"b"})) == Hit(Outcome.PASS)
