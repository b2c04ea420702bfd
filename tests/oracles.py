"""Oracles of known structure for the pure search, and what a right answer must satisfy.

A culprit oracle fails iff the configuration holds one of the culprit sets (monotone); a
dependent oracle is UNRESOLVED when an item lacks the item it needs (it does not build).
`problems` draws such cases; `Counting` counts the real calls apart from the search's own
statistics.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from ddchange.model import Outcome

Oracle = Callable[[frozenset[int]], Outcome]


def culprit_oracle(culprits: Sequence[frozenset[int]]) -> Oracle:
    """FAIL iff the configuration contains one of the culprit sets: monotone, no UNRESOLVED."""

    def test(config: frozenset[int]) -> Outcome:
        return Outcome.FAIL if any(c <= config for c in culprits) else Outcome.PASS

    return test


def dependent_oracle(culprits: Sequence[frozenset[int]], needs: dict[int, int]) -> Oracle:
    """Like `culprit_oracle`, but item k without item needs[k] does not build: UNRESOLVED."""
    base = culprit_oracle(culprits)

    def test(config: frozenset[int]) -> Outcome:
        if any(k in config and v not in config for k, v in needs.items()):
            return Outcome.UNRESOLVED
        return base(config)

    return test


class Counting:
    """Wraps an oracle and counts real calls, independently of DD's own statistics."""

    def __init__(self, oracle: Oracle) -> None:
        self.oracle = oracle
        self.calls = 0
        self.asked: list[frozenset[int]] = []

    def __call__(self, config: frozenset[int]) -> Outcome:
        self.calls += 1
        self.asked.append(config)
        return self.oracle(config)


@st.composite
def problems(draw: st.DrawFn, *, with_needs: bool) -> tuple[int, list[frozenset[int]], dict]:
    """n items, 1–3 culprit sets that the full set contains, and optional build dependencies."""
    n = draw(st.integers(1, 40))
    items = st.integers(0, n - 1)
    culprits = draw(st.lists(st.frozensets(items, min_size=1, max_size=3), min_size=1, max_size=3))
    needs: dict[int, int] = {}
    if with_needs and n > 1:
        needs = draw(st.dictionaries(items, items, max_size=n // 2))
        needs = {k: v for k, v in needs.items() if k != v}
        # Culprits are consistent configurations: close them under their dependencies.
        culprits = [closed(c, needs) for c in culprits]
    return n, culprits, needs


def closed(config: frozenset[int], needs: dict[int, int]) -> frozenset[int]:
    result = set(config)
    while missing := {needs[k] for k in result if k in needs} - result:
        result |= missing
    return frozenset(result)


def assert_one_minimal_failing(result: list[int], items: list[int], oracle: Oracle) -> None:
    assert set(result) <= set(items)
    assert result == [i for i in items if i in set(result)], "input order is kept"
    assert oracle(frozenset(result)) is Outcome.FAIL
    for item in result:
        assert oracle(frozenset(result) - {item}) is not Outcome.FAIL, f"{item} is not needed"
