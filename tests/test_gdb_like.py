"""The GDB-like benchmark at a tiny size: its generator, its simulated compiler, and a search.

benchmarks/gdb_like.py measures 500 to 8,000 hunks; here 60 hunks over 12 modules, with the
simulated build only, so that the generator's promises (exact hunk count, one culprit), the
oracle's consistency rules and the full search are checked in CI within seconds.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import gdb_like  # noqa: E402
import gdb_oracle  # noqa: E402
import gdb_render  # noqa: E402

from ddchange.model import Outcome

HUNKS = 60
MODULES = 12


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> gdb_like.Case:
    return gdb_like.build_case(HUNKS, MODULES, 1, tmp_path_factory.mktemp("gdb") / "repo")


def units_with(case: gdb_like.Case, line: str) -> frozenset[str]:
    """The hunks whose diff has `line` (with its "+" or "-")."""
    return frozenset(u.id for u in case.diff.hunks if line in u.diff.splitlines())


def test_the_change_has_the_planned_hunks_and_one_culprit(case: gdb_like.Case) -> None:
    assert len(case.diff.hunks) == HUNKS == case.project.hunks
    assert case.project.good_output != case.project.bad_output
    assert len(units_with(case, "+" + case.project.culprit.line)) == 1
    assert case.project.kinds["rename"] > 0
    assert case.project.kinds["harmless"] > 0


def test_good_passes_bad_fails_and_the_culprit_alone_fails(case: gdb_like.Case) -> None:
    oracle = case.oracle(case.diff)
    everything = frozenset(u.id for u in case.diff.hunks)
    culprit = units_with(case, "+" + case.project.culprit.line)
    assert oracle(frozenset()) is Outcome.PASS
    assert oracle(everything) is Outcome.FAIL
    assert oracle(culprit) is Outcome.FAIL
    assert oracle(everything - culprit) is Outcome.PASS


def test_a_rename_without_its_call_sites_does_not_build(case: gdb_like.Case) -> None:
    renamed = next(
        f
        for m in case.project.modules
        for f in m.funcs
        if f.kind == "leaf" and f.new_name and f.moved_to < 0
    )
    definition = units_with(case, f"+{gdb_render.def_line(renamed, True)}")
    declaration = units_with(case, f"+{gdb_render.def_line(renamed, True)};")
    calls = frozenset(u.id for u in case.diff.hunks if f"+\tacc += {renamed.new_name}(" in u.diff)
    assert len(definition) == len(declaration) == 1
    assert calls
    oracle = case.oracle(case.diff)
    assert oracle(definition | declaration) is Outcome.UNRESOLVED
    assert "undefined reference" not in oracle.output  # the old name's callers lack a prototype
    assert oracle(definition) is Outcome.UNRESOLVED
    assert oracle(calls) is Outcome.UNRESOLVED
    assert oracle(definition | declaration | calls) is Outcome.PASS


def test_half_a_move_does_not_link(case: gdb_like.Case) -> None:
    moved = next(f for m in case.project.modules for f in m.funcs if f.moved_to >= 0)
    removal = units_with(case, f"-{gdb_render.def_line(moved, False)}")
    addition = units_with(case, f"+{gdb_render.def_line(moved, False)}")
    oracle = case.oracle(case.diff)
    assert oracle(removal) is Outcome.UNRESOLVED
    assert "undefined reference" in oracle.output
    assert oracle(addition) is Outcome.UNRESOLVED
    assert "multiple definition" in oracle.output
    assert oracle(removal | addition) is Outcome.PASS


def test_the_rules_catch_what_a_compiler_and_linker_catch() -> None:
    header = gdb_oracle.parse(b"unsigned f(unsigned a, unsigned b);\n")
    source = b'#include "f.h"\nunsigned g(unsigned a)\n{\n\tunsigned acc = a;\n%s\n}\n'

    def errors(body: bytes) -> tuple[str, ...]:
        return gdb_oracle.compile_unit(gdb_oracle.parse(source % body), [header]).errors

    assert errors(b"\tacc += f(acc, 1u);") == ()
    assert "too many arguments" in errors(b"\tacc += f(acc, 1u, 1u);")[0]
    assert "implicit declaration" in errors(b"\tacc += h(acc, 1u);")[0]
    assert "undeclared" in errors(b"\tacc += v_step;")[0]
    assert "undeclared" in errors(b"\tacc += K_STRIDE;")[0]
    definition = gdb_oracle.parse(b"unsigned f(unsigned a)\n{\n}\n")
    assert "conflicting types" in gdb_oracle.compile_unit(definition, [header]).errors[0]


def test_most_random_subsets_do_not_build(case: gdb_like.Case) -> None:
    shares = gdb_like.broken(case, seed=1)
    assert shares.subsets > 0.9
    assert 0.2 < shares.alone < 0.8  # the harmless edits and the culprit build alone


def test_the_full_search_finds_the_culprit_alone(case: gdb_like.Case) -> None:
    full = next(s for s in gdb_like.STRATEGIES if s.name == "full + dependencies")
    measured = gdb_like.measure(case, full, budget=2_000)
    assert measured.finished
    assert (measured.answer, measured.holds_culprit) == (1, True)
    # The case is built from seed 1 and the search is deterministic: any change in what the
    # search asks shows here (and should show in benchmarks/RESULTS.md, gdb_like.py).
    assert measured.tests == 6


def test_the_oracle_reads_only_file_contents(case: gdb_like.Case) -> None:
    """Any subset gives the same verdict twice (caches are transparent)."""
    rng = random.Random(7)
    ids = [u.id for u in case.diff.hunks]
    configs = [frozenset(rng.sample(ids, rng.randint(0, len(ids)))) for _ in range(20)]
    first = [case.oracle(case.diff).judge(c) for c in configs]
    warm = case.oracle(case.diff)
    assert [warm.judge(c) for c in configs] == first == [warm.judge(c) for c in configs]
