"""The search states only what it ran: properties over random diffs, dependency hints that are
right, wrong or missing, and oracles that are monotone, inconsistent or plain random."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator

import pytest
from diffs import synthetic_diff
from flatdd import DD
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ddchange.diff.hunks import Diff
from ddchange.hierarchy.grouping import Hierarchy, levels_for
from ddchange.model import Level, Outcome
from ddchange.search.cache import OutcomeCache
from ddchange.search.hierarchical import PLAN_READ, REDUCERS, Found, Reducer, Search, minimize

Config = frozenset[str]
Oracle = Callable[[Config], Outcome]


class Recorded:
    """An oracle that keeps every answer it gave: the only records a claim may rest on. The
    pre-flight's two runs (∅ passes, everything fails) are recorded first, as ddchange does."""

    def __init__(self, oracle: Oracle, everything: Config) -> None:
        self.oracle = oracle
        self.records: dict[Config, Outcome] = {
            frozenset(): Outcome.PASS,
            everything: Outcome.FAIL,
        }
        self.calls = 0

    def __call__(self, config: Config) -> Outcome:
        assert config not in self.records, "a configuration with a record is never run again"
        self.calls += 1
        self.records[config] = self.oracle(config)
        return self.records[config]


@st.composite
def problems(draw: st.DrawFn) -> tuple[Diff, dict[str, set[str]], dict[str, set[str]], list]:
    """A diff, its true build dependencies, what the analysis believes (with spurious and
    missed needs), and culprit sets closed under the true dependencies."""
    shape = draw(
        st.lists(st.lists(st.integers(1, 3), min_size=1, max_size=3), min_size=1, max_size=4)
    )
    diff = synthetic_diff(shape)
    ids = [u.id for u in diff.hunks]
    unit = st.sampled_from(ids)
    edges = st.lists(st.tuples(unit, unit), max_size=len(ids))
    true = {(u, p) for u, p in draw(edges) if u != p}
    spurious = {(u, p) for u, p in draw(edges) if u != p}
    missed = set(draw(st.lists(st.sampled_from(sorted(true)), max_size=2))) if true else set()
    believed = (true | spurious) - missed
    culprits = [
        _closed(c, true)
        for c in draw(st.lists(st.frozensets(unit, min_size=1, max_size=3), min_size=1, max_size=2))
    ]
    return diff, _graph(true), _graph(believed), culprits


def _graph(edges: set[tuple[str, str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for user, provider in edges:
        graph.setdefault(user, set()).add(provider)
    return graph


def _closed(config: frozenset[str], needs: set[tuple[str, str]]) -> frozenset[str]:
    closed = set(config)
    while extra := {p for u, p in needs if u in closed and p not in closed}:
        closed |= extra
    return frozenset(closed)


def builds(true: dict[str, set[str]]) -> Callable[[Config], bool]:
    return lambda config: all(true.get(unit, set()) <= config for unit in config)


def monotone_oracle(true: dict[str, set[str]], culprits: list[frozenset[str]]) -> Oracle:
    """UNRESOLVED when a true need is violated (no build); FAIL iff a culprit set is in."""
    built = builds(true)

    def test(config: Config) -> Outcome:
        if not built(config):
            return Outcome.UNRESOLVED
        return Outcome.FAIL if any(c <= config for c in culprits) else Outcome.PASS

    return test


def random_oracle(seed: int) -> Oracle:
    """Any outcome for any configuration, fixed per configuration: neither monotone nor
    consistent with any dependencies."""

    def test(config: Config) -> Outcome:
        digest = hashlib.sha256(f"{seed}:{sorted(config)}".encode()).digest()
        return (Outcome.PASS, Outcome.FAIL, Outcome.UNRESOLVED)[digest[0] % 3]

    return test


def searched(
    diff: Diff,
    believed: dict[str, set[str]],
    oracle: Oracle,
    granularity: str,
    isolate: bool,
    reducer: Reducer = "probdd",
) -> tuple[Found, Recorded, list[str]]:
    everything = frozenset(u.id for u in diff.hunks)
    recorded = Recorded(oracle, everything)
    levels = levels_for(granularity, diff)
    hierarchy = Hierarchy(diff, needs=believed)
    found = minimize(
        diff, recorded, levels=levels, hierarchy=hierarchy, isolate=isolate, reducer=reducer
    )
    return found, recorded, levels


def atoms(diff: Diff, level: str, config: Config) -> list[frozenset[str]]:
    hierarchy = Hierarchy(diff, dependencies=False)
    units = [u for u in diff.hunks if u.id in config]
    return [frozenset(g.members) for g in hierarchy.groups(level, units)]


def assert_backed_minimal(found: Found, recorded: Recorded, diff: Diff, level: str) -> None:
    """The answer was seen to fail, and without each of its atoms it was run and did not."""
    assert recorded.records.get(found.answer) is Outcome.FAIL
    expected = [found.answer - atom for atom in atoms(diff, level, found.answer)]
    single = found.checks[: len(found.checks) - found.wider]
    assert sorted(map(sorted, single)) == sorted(map(sorted, expected))
    for wider in found.checks[len(single) :]:
        assert len(found.answer - wider) > 1, "a wider removal takes more than one change"
    for config in found.checks:
        assert config in recorded.records, "a check without a recorded outcome"
        assert recorded.records[config] is not Outcome.FAIL


def assert_backed_pair(found: Found, recorded: Recorded, diff: Diff, level: str) -> None:
    """dd: both sides seen, and each atom of the difference was tried on both sides."""
    assert found.passing <= found.answer
    assert recorded.records.get(found.passing) is Outcome.PASS
    assert recorded.records.get(found.answer) is Outcome.FAIL
    for atom in atoms(diff, level, found.answer - found.passing):
        grown, shrunk = found.passing | atom, found.answer - atom
        assert grown in recorded.records
        assert shrunk in recorded.records
        assert recorded.records[grown] is not Outcome.PASS
        assert recorded.records[shrunk] is not Outcome.FAIL


@settings(max_examples=150)
@given(problems(), st.sampled_from(["file", "hunk", "line"]), st.sampled_from(REDUCERS))
@example(
    (
        synthetic_diff([[2, 1], [1]]),
        {},
        {"0.0.1": {"1.0.0"}},  # a spurious need: the culprit does not need 1.0.0
        [frozenset({"0.0.1"})],
    ),
    "line",
    "probdd",
)
def test_answer_is_seen_to_fail_and_one_minimal_by_records(
    problem: tuple, granularity: str, reducer: Reducer
) -> None:
    diff, true, believed, culprits = problem
    oracle = monotone_oracle(true, culprits)
    if oracle(frozenset(u.id for u in diff.hunks)) is not Outcome.FAIL:
        return  # BAD does not fail: pre-flight would have stopped
    found, recorded, levels = searched(diff, believed, oracle, granularity, False, reducer)
    assert_backed_minimal(found, recorded, diff, levels[-1])
    assert builds(true)(found.answer)


@settings(max_examples=150)
@given(
    problems(),
    st.sampled_from(["file", "hunk", "line"]),
    st.integers(0, 10**6),
    st.sampled_from(REDUCERS),
)
def test_random_oracles_never_yield_an_unbacked_claim(
    problem: tuple, granularity: str, seed: int, reducer: Reducer
) -> None:
    """Non-monotone, inconsistent outcomes: the answer may be anything, but every claim made
    about it rests on an outcome the oracle really gave, for minimize (by either reducer) and
    for isolate."""
    diff, _, believed, _ = problem
    oracle = random_oracle(seed)
    found, recorded, levels = searched(diff, believed, oracle, granularity, False, reducer)
    assert_backed_minimal(found, recorded, diff, levels[-1])
    found, recorded, levels = searched(diff, believed, oracle, granularity, isolate=True)
    assert_backed_pair(found, recorded, diff, levels[-1])


@settings(max_examples=150)
@given(problems(), st.sampled_from(["file", "hunk", "line"]))
def test_isolation_pair_is_seen_and_its_difference_one_minimal(
    problem: tuple, granularity: str
) -> None:
    diff, true, believed, culprits = problem
    oracle = monotone_oracle(true, culprits)
    if oracle(frozenset(u.id for u in diff.hunks)) is not Outcome.FAIL:
        return
    found, recorded, levels = searched(diff, believed, oracle, granularity, isolate=True)
    assert_backed_pair(found, recorded, diff, levels[-1])


def spurious_problem() -> tuple[Diff, dict[str, set[str]], str]:
    """64 line changes in 8 files; one culprit line that the analysis believes needs every
    line of two other files (a common name matched in the wrong scope). Nothing needs
    anything for real."""
    diff = synthetic_diff([[2] * 4 for _ in range(8)])
    ids = [u.id for u in diff.hunks]
    culprit = ids[37]
    believed = {culprit: {u for u in ids if u.startswith(("1.", "6."))}}
    return diff, believed, culprit


def test_a_wrong_hint_costs_little_and_never_enlarges_the_answer() -> None:
    """Pinned (measured): the culprit alone, in no more tests than textbook ddmin over the
    flat line changes, and the wrong needs are forgotten once a plain candidate resolves."""
    diff, believed, culprit = spurious_problem()
    oracle = monotone_oracle({}, [frozenset({culprit})])
    found, recorded, levels = searched(diff, believed, oracle, "line", isolate=False)
    assert found.answer == {culprit}
    assert_backed_minimal(found, recorded, diff, levels[-1])
    textbook = Recorded(oracle, frozenset(u.id for u in diff.hunks))
    DD(textbook).ddmin([u.id for u in diff.hunks])
    assert found.unlearned >= 1
    assert recorded.calls <= textbook.calls
    assert recorded.calls <= 9  # pinned (measured, as textbook ddmin; ddmin levels: 8)


def test_a_right_hint_keeps_candidates_buildable() -> None:
    """A rename over 12 units (a cycle) and a culprit that uses the new name: with the true
    needs known, few candidates fail to build; without them, most do."""
    diff = synthetic_diff([[1] * 6 for _ in range(6)])
    ids = [u.id for u in diff.hunks]
    rename = ids[::3]
    culprit = ids[-2]
    true = {u: set(rename) - {u} for u in rename} | {culprit: {rename[0]}}
    oracle = monotone_oracle(true, [frozenset({culprit, *rename})])
    informed, with_hint, _ = searched(diff, true, oracle, "line", isolate=False)
    blind, without, _ = searched(diff, {}, oracle, "line", isolate=False)
    assert informed.answer == blind.answer == frozenset([*rename, culprit])
    unresolved = [c for c, o in with_hint.records.items() if o is Outcome.UNRESOLVED]
    # Pinned (measured): of the informed search's 28 runs (64 with ddmin at every level), 14
    # did not build: the hint's two plain tries on probation, and 12 of the 13 checks that the
    # answer is 1-minimal (without a unit of the rename it does not build: a real outcome other
    # than FAIL, as required). The blind search ran 115 (186 with ddmin), of which 94 did not
    # build (some of them the check's wider removals: files of the rename removed whole, which
    # no hint told it cannot build).
    assert len(unresolved) <= 2 + len(informed.answer)
    assert with_hint.calls <= 28
    assert without.calls <= 115
    assert with_hint.calls * 2.5 < without.calls


def recorded_search(
    diff: Diff, oracle: Oracle, needs: dict[str, set[str]] | None = None
) -> tuple[Search, Recorded]:
    """A search over all of `diff` whose test is `oracle`, recorded; its cache begins with the
    pre-flight's two records, and the dependencies are `needs` alone."""
    everything = frozenset(u.id for u in diff.hunks)
    recorded = Recorded(oracle, everything)
    cache = OutcomeCache[str]()
    for config, outcome in recorded.records.items():
        cache.store(config, outcome)
    search = Search(
        diff=diff,
        test=lambda config, _level: recorded(config),
        hierarchy=Hierarchy(diff, needs=needs or {}),
        cache=cache,
    )
    return search, recorded


def test_a_trusted_hint_whose_interior_cannot_be_tested_is_audited_by_the_plain_candidate() -> None:
    """The hint earns trust (twice its interior built where the plain candidate did not), then
    names a need that is wrong while it misses a true one: its interior cannot be tested, and
    the plain candidate, tried anyway, fails. Without that try the search would hold an
    UNRESOLVED where a FAIL was one run away."""
    diff = synthetic_diff([[1] * 6])
    ids = [u.id for u in diff.hunks]
    a, b, c, d, e, f = ids
    true = {b: {a}, d: {c}, f: {e}}
    believed = {b: {a}, d: {c}, e: {c}}  # e's need is wrong, f's is missed
    search, recorded = recorded_search(diff, monotone_oracle(true, [frozenset({e})]), believed)
    for plain in ({b}, {d}):  # the interior (nothing) passes, the plain candidate cannot build
        assert search.probe(frozenset(plain)).outcome is Outcome.UNRESOLVED
    found = search.probe(frozenset({e, f}))
    assert recorded.records[frozenset({f})] is Outcome.UNRESOLVED, "the interior, first"
    assert (found.outcome, found.config) == (Outcome.FAIL, frozenset({e, f}))
    assert recorded.calls == 4


def verified(
    shape: list[list[int]], true: dict[str, set[str]], believed: dict[str, set[str]]
) -> tuple[Found, Recorded]:
    """The check by real runs alone, from all of a synthetic diff, culprit "9.0.0" (the last
    file's one line), under a monotone oracle that cannot build without the true needs."""
    diff = synthetic_diff(shape)
    oracle = monotone_oracle(true, [frozenset({"9.0.0"})])
    search, recorded = recorded_search(diff, oracle, believed)
    return search.verify_minimal("line", frozenset(u.id for u in diff.hunks)), recorded


def test_a_block_that_only_goes_as_a_whole_is_removed_as_one() -> None:
    """Two lines of one block that cannot build without each other, and a culprit elsewhere:
    removing either line alone cannot be tested, so the check removes the block (and before
    it, its file: the same two lines, asked once)."""
    shape = [[2]] + [[]] * 8 + [[1]]
    found, recorded = verified(shape, {"0.0.0": {"0.0.1"}, "0.0.1": {"0.0.0"}}, {})
    assert found.answer == {"9.0.0"}
    assert recorded.records[frozenset({"9.0.0"})] is Outcome.FAIL
    assert recorded.calls == 4, "each line, the culprit, the block; then the culprit again"


def test_a_definition_and_its_use_in_two_files_are_removed_together() -> None:
    """An interlocked pair across two files, which the analysis knows: only the pair, removed
    with what needs it, can go."""
    shape = [[1], [1]] + [[]] * 7 + [[1]]
    pair = {"0.0.0": {"1.0.0"}, "1.0.0": {"0.0.0"}}
    found, _ = verified(shape, pair, pair)
    assert found.answer == {"9.0.0"}
    assert found.wider == 0, "the answer is one change: no wider removal is left to check"


def test_wider_removals_cost_nothing_when_each_change_alone_was_needed() -> None:
    """Under monotony a group holding a change whose removal passed passes too: with a culprit
    of two lines in one block, the check runs each removal once and nothing wider."""
    shape = [[2]]
    diff = synthetic_diff(shape)
    everything = frozenset(u.id for u in diff.hunks)
    search, recorded = recorded_search(diff, monotone_oracle({}, [everything]))
    found = search.verify_minimal("line", everything)
    assert found.answer == everything
    assert (recorded.calls, found.wider) == (2, 0)


def test_pieces_the_answers_own_patch_cuts_anew_are_tried_before_the_whole_check() -> None:
    """Blocks x and y of one file, each of two lines, and six one-line blocks of another that
    cannot build without each other; the failure needs the first line of x and of y and all
    six. The answer's own patch cuts x, and once x's second line is gone, cuts y (git aligns a
    smaller patch anew). Each newly cut piece is removed once, and the whole check comes once,
    at the end: a removal of one of the six, which cannot be tested, runs on the answer the
    blocks' check ended at and on the final one, not again after each piece taken."""
    diff = synthetic_diff([[2, 2], [1] * 6])
    everything = frozenset(u.id for u in diff.hunks)
    six = [f"1.{h}.0" for h in range(6)]
    true = {z: {six[(k + 1) % 6]} for k, z in enumerate(six)}
    culprit = frozenset({"0.0.0", "0.1.0", *six})
    search, recorded = recorded_search(diff, monotone_oracle(true, [culprit]))

    def cut(answer: Config) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
        pieces = {"0.0.0": 1, "0.0.1": 2} if "0.0.1" in answer else {"0.1.0": 3, "0.1.1": 4}
        return dict.fromkeys(answer, ("c",)), pieces

    found = search.minimize(everything, [Level.FILE, Level.HUNK, Level.BLOCK], cut=cut)
    assert found.answer == culprit
    assert recorded.records[culprit] is Outcome.FAIL
    checks = {found.answer - {unit} for unit in found.answer}
    assert checks <= set(found.checks), "each removal from the final answer backs it"
    assert all(recorded.records[check] is not Outcome.FAIL for check in checks)
    without_one = [c for c in recorded.records if len(set(six) - c) == 1 and len(c) > 6]
    assert len(without_one) == 2 * len(six)


def test_a_block_the_failure_needs_is_cut_to_its_line_changes_and_one_that_builds_is_not() -> None:
    """Two blocks of three lines each, in one file: the failure needs the middle line of the
    first, which builds only with the whole second block (without any of its lines nothing
    can be tested). The first block's removal passes, so the check with `lines` (a triage's)
    goes on at its line changes and keeps the middle one; the second's removal cannot be
    tested, and its lines are not tried one by one: no run removes one line of it alone."""
    diff = synthetic_diff([[3, 3]])
    everything = frozenset(u.id for u in diff.hunks)
    built = {"0.1.0", "0.1.1", "0.1.2"}
    true = {unit: built - {unit} for unit in built} | {"0.0.1": built}
    culprit = frozenset({"0.0.1", *built})
    search, recorded = recorded_search(diff, monotone_oracle(true, [culprit]))
    found = search.minimize(
        everything, [Level.FILE, Level.BLOCK], cut=lambda _a: ({}, {}), lines=True
    )
    assert found.answer == culprit
    assert recorded.records[culprit - {"0.0.1"}] is Outcome.PASS
    assert culprit - {"0.0.1"} in found.checks, "the line's removal backs the answer"
    assert not any(len(built - c) == 1 and "0.0.1" in c for c in recorded.records)


def test_a_hunk_of_the_patch_of_two_line_changes_checked_apart_is_removed_whole() -> None:
    """A block n, a, b, c the failure needs (its removal passes), and d elsewhere that n
    needs to build. b can go; a and c can only go together (one without the other cannot be
    tested), and once b is gone the answer's own patch shows them as one hunk. Checked line
    by line (a triage's check), each alone cannot be tested: their hunk is removed whole."""
    diff = synthetic_diff([[4], [1]])
    n, a, b, c = (f"0.0.{k}" for k in range(4))
    d = "1.0.0"

    def oracle(config: Config) -> Outcome:
        if (a in config) != (c in config) or (n in config and d not in config):
            return Outcome.UNRESOLVED
        return Outcome.FAIL if n in config else Outcome.PASS

    def cut(answer: Config) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
        return {}, ({} if b in answer else {a: 1, c: 1, n: 2})

    search, recorded = recorded_search(diff, oracle)
    everything = frozenset(u.id for u in diff.hunks)
    found = search.minimize(everything, [Level.FILE, Level.BLOCK], cut=cut, lines=True)
    assert found.answer == {n, d}
    assert recorded.records[frozenset({n, d})] is Outcome.FAIL
    assert recorded.records[frozenset({n, a, c, d})] is Outcome.FAIL


def test_planning_ahead_reads_a_bounded_number_of_candidates() -> None:
    """-j N: when the cache knows every candidate offered, the planner still stops reading
    after PLAN_READ per slot, since each read costs an interior and, in ddmin's plan, the
    atoms of finer levels (measured: 20,000 hunks, two culprits, -j 4, ddmin's plan took 7.1 s
    of the main thread unbounded and 0.4 s bounded, the same runs offered)."""
    diff = synthetic_diff([[1] * 4 for _ in range(4)])
    everything = frozenset(u.id for u in diff.hunks)
    cache = OutcomeCache[str](monotony=False)
    cache.store(everything, Outcome.FAIL)
    offers: list[list[Config]] = []
    search = Search(
        diff=diff,
        test=lambda _config, _level: Outcome.PASS,
        hierarchy=Hierarchy(diff, dependencies=False),
        cache=cache,
        width=3,
        offer=offers.append,
    )
    search.enter("hunk")
    read = 0

    def known() -> Iterator[Config]:
        nonlocal read
        for _ in range(1000):
            read += 1
            yield everything

    search._ahead(known())
    assert read <= PLAN_READ * 3
    assert offers == [[]]


@pytest.mark.parametrize("reducer", REDUCERS)
@pytest.mark.parametrize("hinted", [True, False])
def test_a_culprit_that_fails_alone_past_an_interlocked_rename_is_the_answer(
    reducer: Reducer, hinted: bool
) -> None:
    """rename-hunk's shape: eleven line changes of a rename that crash unless all or none are
    there, and a culprit line that names none of them. Removing one change at a time stops at
    the rename with the culprit (each such removal crashes: 1-minimal too); removing all but
    the core (the changes whose removal alone passed, with what they need) reaches the culprit
    alone, and that is the answer, backed by real outcomes."""
    diff = synthetic_diff([[1] * 4 for _ in range(4)])
    ids = [u.id for u in diff.hunks]
    rename, culprit = ids[2:13], ids[7]
    rename.remove(culprit)
    rename.append(ids[13])

    def oracle(config: Config) -> Outcome:
        if 0 < len(config & set(rename)) < len(rename):
            return Outcome.UNRESOLVED
        return Outcome.FAIL if culprit in config else Outcome.PASS

    believed = {u: set(rename) - {u} for u in rename} if hinted else {}
    found, recorded, levels = searched(diff, believed, oracle, "line", False, reducer)
    assert found.answer == {culprit}
    assert_backed_minimal(found, recorded, diff, levels[-1])
