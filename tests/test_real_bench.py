"""benchmarks/real.py's parts: diffs split into items and put back together, textbook ddmin, the
reference searches' harness on a small repository with a real check, the summary read from the
rows, and the culprit-line check (in real_judge.py, real_searches.py and real.py); the case
folders of benchmarks/real/ and the import of the project under test by their checks
(checking.py). The whole runner needs sdists from PyPI and is not run here."""

from __future__ import annotations

import dataclasses
import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import real  # noqa: E402
import real_cases  # noqa: E402
import real_judge  # noqa: E402
import real_searches  # noqa: E402
import results  # noqa: E402

from ddchange.model import Outcome

BASE = [f"line {n}\n" for n in range(1, 41)]
# (first line index, lines replaced, new lines): an insertion at the top, an edit, a deletion,
# an insertion in the middle, an append at the end, each far enough from the others that they
# are separate hunks with 3 lines of context too.
CHANGES = [
    (0, 0, ["top\n"]),
    (9, 1, ["line 10 edited\n", "and one more\n"]),
    (18, 2, []),
    (28, 0, ["inserted\n"]),
    (40, 0, ["end\n"]),
]


def with_changes(chosen: set[int]) -> str:
    out, at = [], 0
    for k, (start, count, new) in enumerate(CHANGES):
        out += BASE[at:start]
        out += new if k in chosen else BASE[start : start + count]
        at = start + count
    return "".join(out + BASE[at:])


def git(repo: Path, *args: str, stdin: bytes = b"") -> bytes:
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        input=stdin,
        env=real_cases.clean_env(),
        capture_output=True,
        check=True,
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """good: f.txt, old.txt and a binary file; bad: f.txt with all CHANGES, old.txt deleted,
    new.txt added, the binary file changed."""
    git(tmp_path, "init", "-q")
    (tmp_path / "f.txt").write_text("".join(BASE))
    (tmp_path / "old.txt").write_text("old\n")
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "good")
    git(tmp_path, "tag", "good")
    (tmp_path / "f.txt").write_text(with_changes(set(range(len(CHANGES)))))
    (tmp_path / "old.txt").unlink()
    (tmp_path / "new.txt").write_text("new\n")
    (tmp_path / "blob.bin").write_bytes(bytes(reversed(range(256))))
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "bad")
    git(tmp_path, "tag", "bad")
    return tmp_path


def test_whole_files_are_one_item_each(repo: Path) -> None:
    items = real_judge.split_items(git(repo, "diff", "--binary", "good", "bad"))
    assert [(i.path, bool(i.hunk)) for i in items] == [
        ("blob.bin", False),
        *[("f.txt", True)] * len(CHANGES),
        ("new.txt", False),
        ("old.txt", False),
    ]


@pytest.mark.parametrize("context", [0, 3])
def test_every_subset_of_hunks_applies_where_it_belongs(repo: Path, context: int) -> None:
    """Leaving hunks out shifts the later ones: join_items renumbers them, and git apply then
    puts each one where it belongs, with and without context lines."""
    diff = git(repo, "diff", f"-U{context}", "good", "bad", "--", "f.txt")
    items = real_judge.split_items(diff)
    assert len(items) == len(CHANGES)
    zero = ["--unidiff-zero"] if context == 0 else []
    for size in range(len(items) + 1):
        for chosen in itertools.combinations(range(len(items)), size):
            git(repo, "checkout", "-qf", "good")
            patch = real_judge.join_items(items[k] for k in chosen)
            if patch:
                git(repo, "apply", *zero, "-", stdin=patch)
            assert (repo / "f.txt").read_text() == with_changes(set(chosen)), chosen


def test_all_items_together_make_bad(repo: Path) -> None:
    items = real_judge.split_items(git(repo, "diff", "--binary", "good", "bad"))
    git(repo, "checkout", "-qf", "good")
    git(repo, "apply", "-", stdin=real_judge.join_items(reversed(items)))
    git(repo, "add", "-A")
    assert git(repo, "diff", "--cached", "bad") == b""


def test_ddmin_finds_the_failing_pair() -> None:
    calls: list[frozenset[int]] = []

    def test(config: frozenset[int]) -> Outcome:
        calls.append(config)
        return Outcome.FAIL if {3, 11} <= config else Outcome.PASS

    assert real_searches.ddmin(range(16), test) == [3, 11]
    assert frozenset(range(16)) not in calls  # BAD is the caller's to run
    assert len(calls) <= 60  # 38 with a cache; without one, repeats are asked again


def test_ddmin_single_item_and_unresolved() -> None:
    def test(config: frozenset[int]) -> Outcome:
        if 7 in config:
            return Outcome.FAIL
        return Outcome.UNRESOLVED if len(config) > 4 else Outcome.PASS

    assert real_searches.ddmin(range(20), test) == [7]


def test_culprit_lines_are_added_or_removed_lines_of_the_culprit_files(repo: Path) -> None:
    case = small_case(repo, "line 10 edited", "line 19")
    diff = git(repo, "diff", "-U0", "good", "bad")
    assert real_judge.holds_culprit(case, diff)
    items = real_judge.split_items(diff)
    first_two = real_judge.join_items(items[:2])
    assert not real_judge.holds_culprit(case, first_two)  # no deletion of line 19
    other = real_cases.Case(**{**case.__dict__, "culprit_files": ("new.txt",)})
    assert not real_judge.holds_culprit(other, diff)
    forms = (("line 10, as a later commit has it", "line 10 edited"), ("line 19",))
    either = real_cases.Case(**{**case.__dict__, "culprit_lines": forms})
    assert real_judge.holds_culprit(either, diff)  # one form of each culprit line will do
    neither = real_cases.Case(**{**case.__dict__, "culprit_lines": (("line 100", "line 101"),)})
    assert not real_judge.holds_culprit(neither, diff)


CHECK = "import pathlib, sys\nsys.exit('line 10 edited' in pathlib.Path('f.txt').read_text())\n"


@pytest.fixture
def case(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> real_cases.Case:
    """A case on `repo` whose check fails on the edit of line 10 alone."""
    directory = tmp_path_factory.mktemp("case")
    (directory / "check.py").write_text(CHECK)
    return small_case(directory, "line 10 edited")


def small_case(directory: Path, *culprit_lines: str) -> real_cases.Case:
    """A case of f.txt's edits with its check in `directory`, and no sdists."""
    return real_cases.Case(
        name="small",
        directory=directory,
        package="p",
        good="1",
        bad="2",
        good_sha256="",
        bad_sha256="",
        culprit_files=("f.txt",),
        culprit_lines=tuple((line,) for line in culprit_lines),
    )


def sandbox(case: real_cases.Case, repo: Path, name: str) -> real_judge.Sandbox:
    dest = repo.parent / f"{repo.name}-{name}"
    return real_judge.Sandbox.clone(case, repo, dest, Path(sys.executable).parent, 60.0)


@pytest.mark.parametrize("granularity", ["line", "hunk"])
def test_no_units_put_good_and_all_units_put_bad(
    repo: Path, case: real_cases.Case, granularity: real_searches.Granularity
) -> None:
    diff = real_searches.units(repo, granularity)
    box = sandbox(case, repo, granularity)
    for config, rev in ((frozenset(), "good"), (frozenset(u.id for u in diff.hunks), "bad")):
        assert real_searches.put(box, diff, config)
        git(box.root, "add", "-A")
        assert git(box.root, "diff", "--cached", "--binary", rev) == b"", rev


def test_line_units_are_the_line_changes_of_git_hunks(repo: Path) -> None:
    """The line changes of f.txt are its hunks' edits cut into lines: each hunk's, in order."""
    lines, hunks = (real_searches.units(repo, g) for g in ("line", "hunk"))
    text = [u.id for u in hunks.hunks if u.kind == "text"]
    assert len(text) == len(CHANGES)
    parents = [u.parent for u in lines.hunks if u.kind == "text"]
    assert list(dict.fromkeys(parents)) == text
    assert all(u.id.startswith(f"{u.parent}.") for u in lines.hunks if u.kind == "text")


@pytest.mark.parametrize("ref", real_searches.REFERENCES, ids=lambda ref: ref.mode)
def test_a_reference_search_counts_good_and_bad_and_its_answer_is_judged(
    repo: Path, case: real_cases.Case, ref: real_searches.Reference
) -> None:
    diff = real_searches.units(repo, ref.granularity)
    box, judge_box = sandbox(case, repo, ref.mode), sandbox(case, repo, "judge")
    row = real_searches.reference(case, ref, diff, box, judge_box, budget=100)
    assert row.outcome == "found"
    assert row.runs is not None
    assert row.runs.preflight == 2  # GOOD and BAD, each run once
    assert row.count == row.runs.total == int(row.tests)
    assert row.runs.search > 0
    assert row.answer == f"1 of {len(diff.hunks)} {real_searches.UNIT_NAMES[ref.granularity]}"
    assert (row.verdict, row.culprit) == ("right", "yes")


def test_a_reference_search_out_of_budget_says_so(repo: Path, case: real_cases.Case) -> None:
    ref = real_searches.REFERENCES[0]
    diff = real_searches.units(repo, ref.granularity)
    row = real_searches.reference(
        case, ref, diff, sandbox(case, repo, "b"), sandbox(case, repo, "j"), budget=3
    )
    assert (row.outcome, row.tests, row.over_budget) == ("budget ran out", "3+", True)
    assert row.runs == results.Runs(2, 1, 0)


def row(mode: str, count: int, case: str = "c", found: bool = True) -> real_searches.Row:
    return real_searches.Row(
        case, "p", mode=mode, count=count, outcome="found" if found else "—", size=1, right=True
    )


def test_the_summary_compares_all_runs_and_sums_them_from_the_rows() -> None:
    rows = [
        row("default", 30, "a"),
        row("ddmin-lines", 20, "a"),
        row("default", 10, "b"),
        row("ddmin-lines", 40, "b"),
        row("default", 10, "c"),
        row("ddmin-lines", 5, "c", found=False),
    ]
    lines = real.summary(rows)
    assert "- default tests ≤ ddmin-lines tests on 1 of 3 (all runs)" in lines
    total = "- total tests where both found an answer (2 cases): ddchange default 40 vs "
    assert total + "ddmin-lines 60 = 0.67×" in lines


def test_the_triage_summary_compares_only_the_rows_that_ran() -> None:
    lines = real.summary([row("triage", 30, "a"), row("triage-diff", 90, "a")])
    assert "- triage: every failing test in a cause and every cause right on 1 of 1" in lines
    assert "- triage (default) tests ≤ triage --strategy diff tests on 1 of 1" in lines
    assert not [line for line in lines if "separate" in line]
    both = real.summary([row("triage", 30, "a"), row("separate", 20, "a")])
    assert "- triage tests ≤ separate tests on 0 of 1" in both
    assert "- total tests: triage 30 vs separate 20 = 1.50×" in both


CASES = Path(__file__).resolve().parents[1] / "benchmarks" / "real"


@pytest.mark.parametrize(
    "directory",
    sorted(p for p in CASES.iterdir() if (p / "case.toml").exists()),
    ids=lambda p: p.name,
)
def test_every_case_pins_two_sdists_and_names_its_culprit(directory: Path) -> None:
    case = real_cases.load_case(directory)
    assert case.good != case.bad
    assert all(re.fullmatch("[0-9a-f]{64}", d) for d in (case.good_sha256, case.bad_sha256))
    assert case.source
    assert case.culprit_files
    assert case.culprit_lines
    assert "from checking import" in case.check.read_text()
    if case.results:  # a suite case names the culprit lines of every test it has
        assert case.results == "junit:report.xml"
        assert all(case.tests.values())
        assert set(case.culprit_lines) == {x for lines in case.tests.values() for x in lines}


IMPORTING_CHECK = f"""
import sys
sys.path.insert(0, {str(CASES)!r})
from checking import run

def main(demo):
    return demo.CODE

run(main, "demo")
"""


@pytest.mark.parametrize(
    ("layout", "init", "code"),
    [
        ("src", "CODE = 1\n", 1),
        ("lib", "CODE = 0\n", 0),
        (".", "CODE = 1\n", 1),
        ("lib", "CODE = (\n", 125),  # a half-applied change that does not import
        ("lib", "OTHER = 1\n", 125),  # main fails: cannot tell, not "the regression"
    ],
)
def test_a_check_imports_the_package_from_src_lib_or_the_top(
    tmp_path: Path, layout: str, init: str, code: int
) -> None:
    (tmp_path / layout / "demo").mkdir(parents=True)
    (tmp_path / layout / "demo" / "__init__.py").write_text(init)
    (tmp_path / "check.py").write_text(IMPORTING_CHECK)
    done = subprocess.run(
        [sys.executable, "check.py"], cwd=tmp_path, env=real_cases.clean_env(), check=False
    )
    assert done.returncode == code


# -- whole-suite triage: per-test results and the judge of a cause -------------------------------

SUITE_CHECK = f"""
import sys
sys.path.insert(0, {str(CASES)!r})
from checking import Unexpected, suite

def has(path, text):
    return text in open(path).read()

def a():
    assert not has("a.txt", "BROKEN A"), "a broken"

def b():
    assert not has("b.txt", "BROKEN B"), "b broken"

def c():
    if has("a.txt", "STRANGE"):
        raise Unexpected("neither good nor bad")

suite({{"a": a, "b": b, "c": c}}, "nothing")
"""
LINES = "".join(f"line {n}\n" for n in range(1, 31))


def suite_case(tmp_path: Path, tests: dict[str, tuple[str, ...]]) -> real_cases.Case:
    """good: a.txt, b.txt, c.txt; bad: a.txt with "BROKEN A", b.txt with "BROKEN B", c.txt
    edited; a check whose tests case.a and case.b fail on those, case.c passes."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    for name in ("a.txt", "b.txt", "c.txt"):
        (repo / name).write_text(LINES)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "good")
    git(repo, "tag", "good")
    (repo / "a.txt").write_text(LINES.replace("line 3\n", "BROKEN A\n"))
    (repo / "c.txt").write_text(LINES.replace("line 25\n", "unrelated\n"))
    (repo / "b.txt").write_text(LINES.replace("line 9\n", "BROKEN B\n"))
    git(repo, "commit", "-qam", "bad")
    git(repo, "tag", "bad")
    (tmp_path / "case").mkdir()
    (tmp_path / "case" / "check.py").write_text(SUITE_CHECK)
    return real_cases.Case(
        name="suite",
        directory=tmp_path / "case",
        package="p",
        good="1",
        bad="2",
        good_sha256="",
        bad_sha256="",
        results="junit:report.xml",
        tests=tests,
    )


def patch_of(repo: Path, *paths: str) -> bytes:
    """The diff good..bad of `paths`."""
    return git(repo, "diff", "good", "bad", "--", *paths)


def test_a_suite_check_writes_failures_errors_and_passes_and_the_judge_reads_them(
    tmp_path: Path,
) -> None:
    case = suite_case(tmp_path, {"case.a": ("BROKEN A",), "case.b": ("BROKEN B",)})
    box = sandbox(case, tmp_path / "repo", "judge")
    ends = real_judge.suite_ends(box)
    assert ends.good == {"case.a": "pass", "case.b": "pass", "case.c": "pass"}
    assert ends.bad == {
        "case.a": "failure AssertionError",
        "case.b": "failure AssertionError",
        "case.c": "pass",
    }
    assert ends.targets == ["case.a", "case.b"]
    # A test that sees something else is an error of its type; the check exits 1, as a test
    # runner does, and the report says which test could not tell.
    box.reset()
    (box.root / "a.txt").write_text("STRANGE\n")
    assert box.test() == real_judge.FAIL
    assert box.results()["case.c"] == "error Unexpected"
    # A report that is missing or not XML names no test.
    (box.root / "report.xml").write_text("<testsuite><testcase")
    assert real_judge.junit(box.root / "report.xml") == {}
    assert real_judge.junit(box.root / "nothing.xml") == {}


def test_a_cause_is_right_when_it_fails_its_tests_alone_minimally_with_its_culprit(
    tmp_path: Path,
) -> None:
    case = suite_case(tmp_path, {"case.a": ("BROKEN A",), "case.b": ("BROKEN B",)})
    repo = tmp_path / "repo"
    box = sandbox(case, repo, "judge")
    ends = real_judge.suite_ends(box)
    a_alone = patch_of(repo, "a.txt")
    assert real_judge.judge_cause(box, ends, ["case.a"], a_alone).right
    assert real_judge.judge_cause(box, ends, ["case.b"], patch_of(repo, "b.txt")).right
    # Both causes for one test: case.b fails too, which it should not.
    both = patch_of(repo, "a.txt", "b.txt")
    verdict = real_judge.judge_cause(box, ends, ["case.a"], both)
    assert verdict.text == "not its tests alone: b failure AssertionError"
    assert real_judge.judge_cause(box, ends, ["case.a", "case.b"], both).right
    # The unrelated edit is a hunk that can go.
    verdict = real_judge.judge_cause(box, ends, ["case.a"], patch_of(repo, "a.txt", "c.txt"))
    assert verdict.text == "its tests alone, 1 of 2 removable"
    # The right changes, but not the lines the case names for the test.
    other = dataclasses.replace(case, tests={"case.a": ("line 4",)})
    verdict = real_judge.judge_cause(sandbox(other, repo, "other"), ends, ["case.a"], a_alone)
    assert (verdict.text, verdict.culprit) == (
        "its tests alone, 1-minimal, not the culprit lines",
        False,
    )
