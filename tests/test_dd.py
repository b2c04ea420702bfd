"""Properties of the pure delta debugging core, checked against oracles of known structure."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Iterator

import pytest
from flatdd import DD, NoCache, difference
from hypothesis import example, given, settings
from hypothesis import strategies as st
from oracles import (
    Counting,
    Oracle,
    assert_one_minimal_failing,
    culprit_oracle,
    dependent_oracle,
    problems,
)

from ddchange.model import Outcome, Source
from ddchange.search import dd
from ddchange.search.cache import OutcomeCache
from ddchange.search.dd import Step, bisect, split_evenly


@given(problems(with_needs=False))
@example((8, [frozenset({5})], {}))
@example((1, [frozenset({0})], {}))
@example((40, [frozenset({0, 39}), frozenset({20})], {}))
def test_ddmin_result_fails_is_subset_and_one_minimal(problem: tuple) -> None:
    n, culprits, _ = problem
    items = list(range(n))
    oracle = culprit_oracle(culprits)
    result = DD(oracle).ddmin(items)
    assert_one_minimal_failing(result, items, oracle)


@given(problems(with_needs=True))
@example((10, [frozenset({7, 2})], {7: 2, 3: 4}))
def test_ddmin_with_unresolved_outcomes_is_still_one_minimal(problem: tuple) -> None:
    n, culprits, needs = problem
    items = list(range(n))
    oracle = dependent_oracle(culprits, needs)
    result = DD(oracle).ddmin(items)
    assert_one_minimal_failing(result, items, oracle)


@given(problems(with_needs=True))
def test_ddmin_never_asks_the_same_configuration_twice(problem: tuple) -> None:
    n, culprits, needs = problem
    counting = Counting(dependent_oracle(culprits, needs))
    dd = DD(counting)
    dd.ddmin(list(range(n)))
    assert len(set(counting.asked)) == len(counting.asked)
    assert dd.stats.tests_run == counting.calls


@given(problems(with_needs=True))
def test_an_exact_cache_never_adds_runs(problem: tuple) -> None:
    n, culprits, needs = problem
    oracle = dependent_oracle(culprits, needs)
    plain, cached = Counting(oracle), Counting(oracle)
    DD(plain, cache=NoCache()).ddmin(list(range(n)))
    result = DD(cached, cache=OutcomeCache(monotony=False)).ddmin(list(range(n)))
    assert cached.calls <= plain.calls
    assert_one_minimal_failing(result, list(range(n)), oracle)


@given(problems(with_needs=False))
def test_monotony_never_adds_runs_and_keeps_the_answer_on_monotone_oracles(problem: tuple) -> None:
    n, culprits, _ = problem
    oracle = culprit_oracle(culprits)
    exact, monotone = Counting(oracle), Counting(oracle)
    expected = DD(exact, cache=OutcomeCache(monotony=False)).ddmin(list(range(n)))
    dd = DD(monotone, cache=OutcomeCache(monotony=True))
    assert dd.ddmin(list(range(n))) == expected
    assert monotone.calls <= exact.calls
    assert dd.stats.tests_run + dd.stats.cache_hits + dd.stats.implied >= exact.calls


@pytest.mark.parametrize(
    ("n", "culprit", "budget"),
    [(8, 5, 5), (64, 17, 8), (1024, 700, 16), (8721, 4000, 23)],
)
def test_ddmin_budget_for_one_culprit(n: int, culprit: int, budget: int) -> None:
    counting = Counting(culprit_oracle([frozenset({culprit})]))
    assert DD(counting).ddmin(list(range(n))) == [culprit]
    assert counting.calls <= budget


@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n - 1))))
@example((8721, 4000))  # GDB's number of changes
@example((1024, 1023))
@example((3, 2))
def test_ddmin_budget_for_one_culprit_is_logarithmic(problem: tuple[int, int]) -> None:
    """Wherever the one culprit is, at most two tests per halving: a part, then perhaps its
    complement. (The bound is reached: 4 tests for n = 3, culprit 2.)"""
    n, culprit = problem
    counting = Counting(culprit_oracle([frozenset({culprit})]))
    assert DD(counting).ddmin(list(range(n))) == [culprit]
    assert counting.calls <= 2 * math.ceil(math.log2(n))


def test_ddmin_budget_for_two_culprits_that_fail_only_together() -> None:
    counting = Counting(culprit_oracle([frozenset({3, 60})]))
    assert DD(counting).ddmin(list(range(64))) == [3, 60]
    assert counting.calls <= 37


def test_ddmin_skips_complements_at_granularity_two() -> None:
    counting = Counting(culprit_oracle([frozenset({0, 3})]))
    DD(counting, cache=NoCache()).ddmin([0, 1, 2, 3])
    # {0,1} and {2,3} pass; their complements are each other and must not be asked again.
    assert counting.asked[:2] == [frozenset({0, 1}), frozenset({2, 3})]
    assert counting.asked[2] not in counting.asked[:2]


def test_listener_sees_every_evaluation_with_its_source() -> None:
    """Each step is the configuration asked about, its outcome and where that came from: a
    test, an exact record, or monotony (never recorded: only an implication); the statistics
    count the same."""
    steps: list[Step] = []
    oracle = culprit_oracle([frozenset({6})])
    cache = OutcomeCache[int](monotony=True)
    dd = DD(oracle, cache=cache, listener=steps.append)
    dd.ddmin(list(range(8)))
    assert steps[0].source is Source.TEST
    dd.evaluate(sorted(steps[0].config))  # asked before: an exact record answers
    dd.evaluate(list(range(8)))  # never asked, a superset of a failure: monotony answers
    assert len(steps) == dd.stats.tests_run + dd.stats.cache_hits + dd.stats.implied
    sources = [s.source for s in steps]
    assert sources.count(Source.TEST) == dd.stats.tests_run
    assert sources.count(Source.CACHE) == dd.stats.cache_hits == 1
    assert sources.count(Source.IMPLIED) == dd.stats.implied == 1
    for step in steps:
        assert step.outcome is oracle(step.config)
        assert (cache.exact(step.config) is None) is (step.source is Source.IMPLIED)
    outcomes = [s.outcome for s in steps]
    assert dd.stats.outcomes == {outcome: outcomes.count(outcome) for outcome in Outcome}
    assert len(steps[0].failing) == 8
    assert steps[-1].failing == {6}


def test_best_tracks_the_smallest_failing_configuration_seen() -> None:
    dd = DD(culprit_oracle([frozenset({6})]))
    dd.ddmin(list(range(16)))
    assert dd.best == [6]


# -- dd (isolate) -----------------------------------------------------------------------------


def assert_isolation(passing: list[int], failing: list[int], items: list[int], oracle: Oracle):
    assert set(passing) <= set(failing) <= set(items)
    if passing:
        assert oracle(frozenset(passing)) is Outcome.PASS
    if failing != items:
        assert oracle(frozenset(failing)) is Outcome.FAIL
    # TSE 2002: the difference is 1-minimal when no single change can be moved across it.
    for item in set(failing) - set(passing):
        assert oracle(frozenset(passing) | {item}) is not Outcome.PASS
        assert oracle(frozenset(failing) - {item}) is not Outcome.FAIL


@given(problems(with_needs=True))
@example((16, [frozenset({3, 12})], {}))
def test_isolate_gives_a_one_minimal_difference(problem: tuple) -> None:
    n, culprits, needs = problem
    items = list(range(n))
    oracle = dependent_oracle(culprits, needs)
    result = DD(oracle).isolate(items)
    assert_isolation(result.passing, result.failing, items, oracle)
    assert difference(result), "a failing and a passing configuration always differ"


def test_isolate_budget_for_one_culprit() -> None:
    counting = Counting(culprit_oracle([frozenset({700})]))
    result = DD(counting).isolate(list(range(1024)))
    assert difference(result) == [700]
    assert counting.calls <= 20


def test_isolate_beats_ddmin_when_the_failure_needs_many_changes() -> None:
    """dd only explains the difference; ddmin must keep every change the failure needs."""
    culprit = frozenset(range(0, 32, 2))
    isolating, minimizing = Counting(culprit_oracle([culprit])), Counting(culprit_oracle([culprit]))
    assert len(difference(DD(isolating).isolate(list(range(32))))) == 1
    assert DD(minimizing).ddmin(list(range(32))) == sorted(culprit)
    assert isolating.calls < minimizing.calls


# -- structure --------------------------------------------------------------------------------


@given(st.lists(st.integers(), max_size=50), st.integers(1, 60))
@settings(max_examples=50)
def test_split_evenly_partitions_into_near_equal_parts(items: list[int], n: int) -> None:
    parts = split_evenly(items, n)
    assert [x for part in parts for x in part] == items
    if items:
        assert len(parts) == min(n, len(items))
        assert max(map(len, parts)) - min(map(len, parts)) <= 1


@st.composite
def histories(draw: st.DrawFn) -> tuple[int, int, frozenset[int]]:
    """(count, first failing position, unresolved positions) for a monotone history."""
    count = draw(st.integers(1, 300))
    first_bad = draw(st.integers(1, count))
    inner = st.frozensets(st.integers(1, count - 1), max_size=count // 2) if count > 1 else None
    skipped = draw(inner) if inner is not None else frozenset[int]()
    return count, first_bad, skipped


@given(histories())
@example((8, 5, frozenset()))
@example((8, 5, frozenset({4, 5, 6})))
@settings(max_examples=200)
def test_bisect_brackets_the_turn_with_only_unresolved_between(
    history: tuple[int, int, frozenset[int]],
) -> None:
    count, first_bad, skipped = history
    asked: list[int] = []

    def test(position: int) -> Outcome:
        asked.append(position)
        if position in skipped:
            return Outcome.UNRESOLVED
        return Outcome.FAIL if position >= first_bad else Outcome.PASS

    passing, failing = bisect(count, test)
    assert passing < first_bad <= failing, "the turn is between the two positions"
    assert all(p in skipped for p in range(passing + 1, failing)), "only skipped ones between"
    assert len(asked) == len(set(asked)), "no position is asked twice"
    assert 0 not in asked, "GOOD is known to pass"
    assert count not in asked, "BAD is known to fail"
    if not skipped:
        assert failing == first_bad
        assert passing == first_bad - 1
        assert len(asked) <= math.ceil(math.log2(count)), "log2: like git bisect"


def test_bisect_budget_matches_git_bisect() -> None:
    """One culprit among 1,000 commits: 10 tests, as `git bisect` (log2 1000 ≈ 9.97)."""
    calls = []

    def test(position: int) -> Outcome:
        calls.append(position)
        return Outcome.FAIL if position >= 637 else Outcome.PASS

    assert bisect(1000, test) == (636, 637)
    assert len(calls) == 10
    # Each question halves what is left, as `git bisect` does: it asks the middle of the
    # bracket still open (rounded either way).
    passing, failing = 0, 1000
    for position in calls:
        assert abs(position - (passing + failing) / 2) <= 0.5
        passing, failing = (passing, position) if position >= 637 else (position, failing)


def test_the_search_imports_no_io() -> None:
    """The search layer (every module of ddchange.search) and the data model it shares
    run nothing: a fresh interpreter that imports them has loaded no git, no subprocess, no
    database, no terminal library."""
    probe = (
        "import importlib, pkgutil, sys\n"
        "import ddchange.search, ddchange.model\n"
        "names = [m.name for m in pkgutil.iter_modules(ddchange.search.__path__)]\n"
        "assert {'dd', 'probabilistic', 'cache', 'hierarchical'} <= set(names), names\n"
        "for name in names:\n"
        "    importlib.import_module('ddchange.search.' + name)\n"
        "banned = {'git', 'subprocess', 'sqlite3', 'click', 'rich', 'shutil', 'tempfile',\n"
        "          'ddchange.git', 'ddchange.trial', 'ddchange.session'}\n"
        "print(sorted(banned & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


class Hints:
    """Records what `ahead` is told before each probe, taking every candidate it offers."""

    def __init__(self) -> None:
        self.told: list[list[frozenset[int]]] = []

    def __call__(self, upcoming: Iterator[list[int]]) -> None:
        self.told.append([frozenset(c) for c in upcoming])


@given(problems(with_needs=True), st.booleans())
@example((16, [frozenset({3, 12})], {}), False)
@example((12, [frozenset({2}), frozenset({7, 9})], {9: 8}), True)
def test_the_hint_ahead_names_each_probe_first_and_changes_nothing(
    problem: tuple, isolating: bool
) -> None:
    """-j N rests on this: before each probe, `ahead` is told that very candidate first, and
    a caller that takes every hint gets the same probes and the same answer as one that takes
    none."""
    n, culprits, needs = problem
    items = list(range(n))
    oracle = dependent_oracle(culprits, needs)
    runs = []
    for ahead in (None, Hints()):
        asked: list[frozenset[int]] = []

        def probe(config: list[int], asked: list[frozenset[int]] = asked) -> dd.Probed[int]:
            asked.append(frozenset(config))
            return dd.Probed(oracle(frozenset(config)), frozenset(config))

        search = dd.isolate if isolating else dd.minimize
        hinted = {} if ahead is None else {"ahead": ahead}
        answer = search(items, probe, split=split_evenly, **hinted)
        runs.append((asked, answer))
        if ahead is not None:
            assert [told[0] for told in ahead.told] == asked
    assert runs[0] == runs[1]


def test_bisect_history_names_the_commits_where_the_history_turns() -> None:
    """Over commit names: the last passing and first failing commit, GOOD or BAD at the ends,
    and the commits asked about (each once; an unresolved one is set aside, as git does)."""
    from ddchange.search.history import Turn, bisect_history

    chain = [f"c{n}" for n in range(1, 9)]  # c8 is BAD
    asked: list[str] = []

    def test(sha: str) -> Outcome:
        asked.append(sha)
        if sha == "c4":
            return Outcome.UNRESOLVED
        return Outcome.FAIL if int(sha[1:]) >= 5 else Outcome.PASS

    assert bisect_history("good", chain, test) == Turn(last_good="c3", first_bad="c5", asked=3)
    assert asked == ["c4", "c3", "c5"]  # the middle, set aside; then each side of it
    assert bisect_history("good", chain, lambda _sha: Outcome.FAIL).last_good == "good"
    assert bisect_history("good", chain, lambda _sha: Outcome.PASS).first_bad == "c8"


@given(st.integers(min_value=2, max_value=200), st.data())
def test_bisect_in_several_sections_finds_the_same_turn_in_no_more_rounds(
    count: int, data: st.DataObject
) -> None:
    """With N tests at once, each round asks N positions (all offered first), and the turn
    found is the one a single line of questions finds, in no more rounds than it and at most
    log(count) / log(N + 1) rounded up (for some turns a single line is as quick, and 3 at
    once can take a round more than 2: 5 positions, the turn at the third); no position is
    asked twice."""
    turn = data.draw(st.integers(min_value=1, max_value=count))
    rounds: dict[int, int] = {}
    for width in (1, 2, 3):
        asked: list[int] = []
        offered: list[list[int]] = []

        def test(position: int, asked: list[int] = asked) -> Outcome:
            asked.append(position)
            return Outcome.FAIL if position >= turn else Outcome.PASS

        found = bisect(count, test, width=width, offer=offered.append)
        assert found == (turn - 1, turn)
        assert len(asked) == len(set(asked))
        assert [p for round_ in offered for p in round_] == asked  # each round offered first
        assert all(len(round_) <= width for round_ in offered)
        rounds[width] = len(offered)
    assert max(rounds.values()) == rounds[1]
    for width, taken in rounds.items():  # never more than the worst case of N + 1 sections
        assert (width + 1) ** taken < count * (width + 1), (width, taken)
