"""The bundled scenarios: they load, build byte-deterministically, GOOD passes and BAD fails,
and their expected answer fails while leaving out any one of its units does not.

That the expected answer is the *only* 1-minimal failing set was checked when each scenario was
written (see its scenario.toml); these tests guard what an edit to a scenario, to the builder or
to the way ddchange splits and applies changes could silently break.
"""

from __future__ import annotations

import shlex
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from ddchange import git, samples
from ddchange.diff import content, hunks, linechanges, read
from ddchange.errors import UnknownScenario
from ddchange.hierarchy.grouping import Hierarchy
from ddchange.model import Outcome
from ddchange.trial import runner, worktree

NAMES = [scenario.name for scenario in samples.scenarios()]
# Scenarios with one expected answer; the others triage a whole suite (`[[cause]]`).
SINGLE = [scenario.name for scenario in samples.scenarios() if not scenario.causes]

# Generous on purpose: this checks outcomes, not speed, and CI machines can be slow.
RUN_TIMEOUT = 120

SampleRepo = Callable[[str], tuple[Path, samples.Scenario]]
MakeRepo = Callable[..., tuple[Path, list[str]]]


def run_git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return result.stdout


def all_refs(repo: Path) -> str:
    return run_git(repo, "for-each-ref", "--format=%(objectname) %(refname)")


def test_bundled_scenarios_are_listed_by_name() -> None:
    assert sorted(NAMES) == NAMES
    assert {"wrong-line", "two-files", "c-make", "hang"} <= set(NAMES)
    assert samples.scenario_root().is_dir()


@pytest.mark.parametrize("name", NAMES)
def test_scenario_is_well_formed(name: str) -> None:
    scenario = samples.load(name)
    tags = [commit.tag for commit in scenario.commits]
    assert scenario.description
    assert "\n" not in scenario.description
    assert tags.index(scenario.good) < tags.index(scenario.bad)
    assert scenario.test
    assert scenario.expected or (scenario.causes and scenario.results)
    assert len(set(scenario.expected)) == len(scenario.expected)
    assert scenario.source == samples.scenario_root() / name


def test_unknown_scenario_names_the_known_ones() -> None:
    with pytest.raises(UnknownScenario) as raised:
        samples.load("no-such-scenario")
    assert raised.value.name == "no-such-scenario"
    assert raised.value.known == tuple(sorted((*NAMES, *samples.input_names())))
    assert "reduce-text" in raised.value.known  # the bundled inputs too


def test_a_path_is_not_a_scenario_name() -> None:
    with pytest.raises(UnknownScenario):
        samples.load(f"../{samples.scenario_root().name}/{NAMES[0]}")


@pytest.mark.parametrize("name", NAMES)
def test_building_twice_gives_the_same_commits(tmp_path: Path, name: str) -> None:
    scenario = samples.load(name)
    first = all_refs(samples.build_repo(scenario, tmp_path / "first"))
    second = all_refs(samples.build_repo(scenario, tmp_path / "second"))
    assert first == second
    assert f"refs/tags/{scenario.good}\n" in first
    assert f"refs/tags/{scenario.bad}\n" in first
    assert "refs/heads/main\n" in first


def test_build_ignores_the_callers_git_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = samples.load(NAMES[0])
    clean = all_refs(samples.build_repo(scenario, tmp_path / "clean"))
    hostile = tmp_path / "hostile.gitconfig"
    hostile.write_text("[commit]\n\tgpgsign = true\n[core]\n\tautocrlf = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(hostile))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Someone Else")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@0 +0000")
    built = samples.build_repo(scenario, tmp_path / "built")
    monkeypatch.delenv("GIT_DIR")
    assert all_refs(built) == clean


def test_build_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine\n")
    with pytest.raises(FileExistsError):
        samples.build_repo(samples.load(NAMES[0]), tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_commit_overlays_keep_earlier_files_and_apply_deletes_and_modes(
    sample_repo: SampleRepo,
) -> None:
    repo, _ = sample_repo("two-files")
    mode = {
        rev: run_git(repo, "ls-tree", rev, "tools/release.sh").split()[0]
        for rev in ("v2.0", "v2.1")
    }
    assert mode == {"v2.0": "100644", "v2.1": "100755"}
    repo, scenario = sample_repo("wrong-line")
    bad_files = run_git(repo, "ls-tree", "-r", "--name-only", scenario.bad).splitlines()
    assert "statkit/legacy.py" not in bad_files
    assert "run_tests.py" in bad_files  # written by the first commit only


def test_make_repo_commits_each_mapping_deterministically(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    commits = [{"a.txt": "one\n", "dir/b.bin": b"\0\1"}, {"a.txt": "two\n", "dir/b.bin": None}]
    repo, shas = make_repo(tmp_path, commits)
    _, again = make_repo(tmp_path, commits, name="again")
    assert shas == again
    assert len(set(shas)) == 2
    assert run_git(repo, "rev-parse", "HEAD").strip() == shas[-1]
    assert run_git(repo, "ls-tree", "-r", "--name-only", shas[0]).split() == ["a.txt", "dir/b.bin"]
    assert run_git(repo, "show", f"{shas[1]}:a.txt") == "two\n"
    assert run_git(repo, "ls-tree", "-r", "--name-only", shas[1]).split() == ["a.txt"]


@pytest.mark.parametrize("name", SINGLE)
def test_good_passes_and_bad_fails(tmp_path: Path, sample_repo: SampleRepo, name: str) -> None:
    repo, scenario = sample_repo(name)
    good = run_scenario(repo, scenario, scenario.good, tmp_path / "good")
    bad = run_scenario(repo, scenario, scenario.bad, tmp_path / "bad")
    assert good == 0
    assert 1 <= bad <= 127
    assert bad != 125


def run_scenario(repo: Path, scenario: samples.Scenario, rev: str, where: Path) -> int:
    """Check out rev into where, run the build (which must succeed) and return the test's exit."""
    run_git(repo, "worktree", "add", "--detach", str(where), rev)
    if scenario.build is not None:
        subprocess.run(
            scenario.build,
            shell=True,
            cwd=where,
            check=True,
            capture_output=True,
            timeout=RUN_TIMEOUT,
        )
    test = subprocess.run(scenario.test, cwd=where, capture_output=True, timeout=RUN_TIMEOUT)
    return test.returncode


@pytest.mark.parametrize("name", NAMES)
def test_each_expected_line_occurs_once_in_the_diff(sample_repo: SampleRepo, name: str) -> None:
    repo, scenario = sample_repo(name)
    diff = run_git(repo, "diff", "-U3", "-M", scenario.good, scenario.bad).splitlines()
    for expected in [*scenario.expected, *(e for cause in scenario.causes for e in cause.expected)]:
        assert diff.count(expected.line) == 1, expected


@pytest.mark.parametrize("name", SINGLE)
def test_expected_answer_fails_and_needs_each_of_its_units(
    sample_repo: SampleRepo, name: str
) -> None:
    path, scenario = sample_repo(name)
    repo = git.open_repo(path)
    good = git.resolve_commit(repo, scenario.good)
    # The answer is in blocks of line changes, the granularity a search ends at by default:
    # each expected line names the block it is in.
    diff = linechanges.split_lines(
        read.read_diff(repo, good, git.resolve_commit(repo, scenario.bad))
    )
    hierarchy = Hierarchy(diff, dependencies=False)
    blocks = [hierarchy.block(expected_unit(diff, expected)) for expected in scenario.expected]
    assert len(set(blocks)) == len(blocks)
    changes = [[u.id for u in diff.hunks if hierarchy.block(u.id) == b] for b in blocks]
    with worktree.scratch_worktree(repo, good) as scratch:

        def verdict(chosen: list[str], expect: runner.Expectation) -> runner.Verdict:
            scratch.apply(content.materialize(diff, chosen))
            return runner.run_candidate(
                scratch.path,
                scenario.test,
                build=scenario.build,
                timeout=RUN_TIMEOUT,
                expect=expect,
            )

        bad = verdict([unit.id for unit in diff.hunks], runner.Expectation())
        assert bad.outcome is Outcome.FAIL
        assert bad.test is not None
        same_failure = runner.Expectation(exit_code=bad.test.exit_code)
        assert verdict([u for c in changes for u in c], same_failure).outcome is Outcome.FAIL
        for change in changes:
            rest = [u for other in changes if other is not change for u in other]
            assert verdict(rest, same_failure).outcome is not Outcome.FAIL, change


def expected_unit(diff: hunks.Diff, expected: samples.Expected) -> str:
    """The id of the one unit of `expected.path` whose diff text has the line `expected.line`."""
    hits = [
        unit.id
        for unit in diff.hunks
        if unit.path == expected.path and expected.line in unit.diff.splitlines()
    ]
    assert len(hits) == 1, (expected, hits)
    return hits[0]


def test_merge_scenario_ends_in_a_merge_of_two_passing_branches(
    tmp_path: Path, sample_repo: SampleRepo
) -> None:
    repo, scenario = sample_repo("merge")
    bad, *parents = run_git(repo, "rev-list", "--parents", "-n1", scenario.bad).split()
    assert len(parents) == 2
    assert run_git(repo, "rev-parse", "main", "semicolon-export").split() == [bad, parents[1]]
    assert run_git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert run_git(repo, "status", "--porcelain") == ""
    exits = {
        rev: run_scenario(repo, scenario, rev, tmp_path / f"at-{n}")
        for n, rev in enumerate([scenario.good, *parents, scenario.bad])
    }
    assert exits == {scenario.good: 0, parents[0]: 0, parents[1]: 0, scenario.bad: 1}


# -- a whole suite to triage: suite-triage ---------------------------------------------------

SUITE = "suite-triage"
# Besides the targets, the test that fails at GOOD and still at BAD, and the one BAD fixes.
ALREADY_FAILING = "tests.test_terms.EndOfMonthTest.test_leap_february"
NEWLY_PASSING = "tests.test_money.FormatTest.test_thousands_are_grouped"


def run_suite(scenario: samples.Scenario, where: Path) -> dict[str, str]:
    """Run the scenario's test command in `where` and read the JUnit report it writes: each
    <testcase> by its id (classname.name; the name alone for a module that did not import) as
    "pass", "skipped", "failure:TYPE" or "error:TYPE". The exit is 0 exactly if all passed."""
    [spec] = scenario.results
    kind, _, name = spec.partition(":")
    assert kind == "junit"
    report = where / name
    report.unlink(missing_ok=True)
    done = subprocess.run(scenario.test, cwd=where, capture_output=True, timeout=RUN_TIMEOUT)
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        test = ".".join(filter(None, (case.get("classname"), case.get("name"))))
        problems = [f"{p.tag}:{p.get('type')}" for p in case if p.tag in ("failure", "error")]
        skipped = case.find("skipped") is not None
        outcomes[test] = problems[0] if problems else "skipped" if skipped else "pass"
    assert done.returncode == (0 if set(outcomes.values()) <= {"pass", "skipped"} else 1)
    return outcomes


def outcome(outcomes: dict[str, str], test: str) -> str:
    """The outcome of `test`, or of its module if the module did not import."""
    return outcomes.get(test) or outcomes[test.rsplit(".", 2)[0]]


def test_suite_scenario_has_the_outcomes_it_describes(
    tmp_path: Path, sample_repo: SampleRepo
) -> None:
    repo, scenario = sample_repo(SUITE)
    runs = {}
    for rev in (scenario.good, scenario.bad):
        run_git(repo, "worktree", "add", "--detach", str(tmp_path / rev), rev)
        runs[rev] = run_suite(scenario, tmp_path / rev)
    good, bad = runs[scenario.good], runs[scenario.bad]
    assert [len(cause.tests) for cause in scenario.causes] == [6, 4, 2]
    targets = {test for cause in scenario.causes for test in cause.tests}
    assert len(good) == 29
    assert {test: o for test, o in good.items() if o != "pass"} == {
        ALREADY_FAILING: "failure:AssertionError",
        NEWLY_PASSING: "failure:AssertionError",
    }
    assert targets <= set(good)
    # test_export.py no longer imports: its two tests are one entry, named after the module.
    export = scenario.causes[2].tests
    assert {test.rsplit(".", 2)[0] for test in export} == {"tests.test_export"}
    assert not set(export) & set(bad)
    assert {test: o for test, o in bad.items() if o != "pass"} == {
        ALREADY_FAILING: "failure:AssertionError",
        "tests.test_export": "error:ImportError",
        **dict.fromkeys(targets - set(export), "failure:AssertionError"),
    }
    added = set(bad) - set(good) - {"tests.test_export"}
    assert len(added) == 5
    assert {bad[test] for test in [*added, NEWLY_PASSING]} == {"pass"}


@pytest.mark.parametrize("index", [0, 1, 2])
def test_each_cause_alone_fails_exactly_its_targets(sample_repo: SampleRepo, index: int) -> None:
    """GOOD plus the lines of one cause fails that cause's targets as BAD does, and no other
    test that passes at GOOD; BAD less them fails every other target and passes these; and the
    cause needs each of its lines (each half of a cause of two passes alone)."""
    path, scenario = sample_repo(SUITE)
    repo = git.open_repo(path)
    good = git.resolve_commit(repo, scenario.good)
    diff = linechanges.split_lines(
        read.read_diff(repo, good, git.resolve_commit(repo, scenario.bad))
    )
    everything = {unit.id for unit in diff.hunks}
    cause = scenario.causes[index]
    lines = {expected_unit(diff, expected) for expected in cause.expected}
    targets = {test for each in scenario.causes for test in each.tests}
    with worktree.scratch_worktree(repo, good) as scratch:

        def run(chosen: set[str]) -> dict[str, str]:
            scratch.apply(content.materialize(diff, sorted(chosen)))
            return run_suite(scenario, scratch.path)

        at_good = run(set())
        at_bad = run(everything)

        def failing(chosen: set[str]) -> dict[str, str]:
            """GOOD's tests that fail with `chosen` applied, and how."""
            outcomes = run(chosen)
            failed = {test: outcome(outcomes, test) for test in at_good}
            return {test: o for test, o in failed.items() if o != "pass"}

        def expected(tests: set[str], *unchanged: str) -> dict[str, str]:
            """`tests` failing as at BAD, `unchanged` as at GOOD."""
            return {test: outcome(at_bad, test) for test in tests} | {
                test: at_good[test] for test in unchanged
            }

        assert failing(lines) == expected(set(cause.tests), ALREADY_FAILING, NEWLY_PASSING)
        assert failing(everything - lines) == expected(targets - set(cause.tests), ALREADY_FAILING)
        for line in lines if len(lines) > 1 else ():
            assert failing(lines - {line}) == expected(set(), ALREADY_FAILING, NEWLY_PASSING)


TOY_SCENARIO = """\
description = "a toy history with a branch and a merge"
good = "v1"
bad = "v2"
test = ["true"]

[[expected]]
path = "a.txt"
line = "+both"

[[commit]]
dir = "01"
message = "one"
author = "Toy Author <toy@example.org>"
tag = "v1"

[[commit]]
dir = "02"
branch = "side"
from = "v1"
message = "side"
author = "Toy Author <toy@example.org>"

[[commit]]
dir = "03"
branch = "main"
message = "main"
author = "Toy Author <toy@example.org>"

[[commit]]
merge = "side"
message = "merge side"
author = "Toy Author <toy@example.org>"
tag = "v2"
"""


def toy_scenario(root: Path, toml: str, overlays: dict[str, str]) -> samples.Scenario:
    """A scenario directory under root from `toml` and {"NN/path": content}; loaded."""
    source = root / "toy"
    for path, text in overlays.items():
        (source / "commits" / path).parent.mkdir(parents=True, exist_ok=True)
        (source / "commits" / path).write_text(text)
    (source / samples.SCENARIO_FILE).write_text(toml)
    return samples.read(source)


CONFLICTING = {"01/a.txt": "one\n", "02/a.txt": "side\n", "03/a.txt": "main\n"}


def test_a_merge_that_conflicts_without_an_overlay_is_an_error(tmp_path: Path) -> None:
    scenario = toy_scenario(tmp_path, TOY_SCENARIO, CONFLICTING)
    with pytest.raises(ValueError, match=r"merging 'side' into 'main' .* conflicts in a\.txt"):
        samples.build_repo(scenario, tmp_path / "built")


def test_merging_what_the_branch_already_has_is_an_error(tmp_path: Path) -> None:
    toml = TOY_SCENARIO.replace('merge = "side"', 'merge = "v1"')
    scenario = toy_scenario(tmp_path, toml, CONFLICTING)
    with pytest.raises(ValueError, match="'v1' is already in 'main': nothing to merge"):
        samples.build_repo(scenario, tmp_path / "built")


def test_a_merge_overlay_resolves_the_conflict_and_main_is_checked_out(tmp_path: Path) -> None:
    toml = TOY_SCENARIO.replace('merge = "side"', 'merge = "side"\ndir = "04"')
    later = """
[[commit]]
dir = "05"
branch = "side"
message = "after the merge, on side again"
author = "Toy Author <toy@example.org>"
"""
    overlays = {**CONFLICTING, "04/a.txt": "both\n", "05/b.txt": "later\n"}
    scenario = toy_scenario(tmp_path, toml + later, overlays)
    repo = samples.build_repo(scenario, tmp_path / "built")
    assert len(run_git(repo, "rev-list", "--parents", "-n1", "v2").split()) == 3
    assert run_git(repo, "show", "v2:a.txt") == "both\n"
    assert run_git(repo, "ls-tree", "--name-only", "side").split() == ["a.txt", "b.txt"]
    assert run_git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert run_git(repo, "status", "--porcelain") == ""
    assert all_refs(samples.build_repo(scenario, tmp_path / "again")) == all_refs(repo)


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ('from = "v1"\n', "", "new branch 'side' needs from"),
        ('branch = "main"\n', 'branch = "main"\nfrom = "v1"\n', "'main' exists"),
        ('merge = "side"', 'merge = "nowhere"', "'nowhere' is no earlier tag or other branch"),
        ('merge = "side"', 'merge = "main"', "'main' is no earlier tag or other branch"),
        ('dir = "01"\n', 'dir = "01"\nbranch = "side"\n', "first commit starts 'main'"),
    ],
)
def test_branches_and_merges_are_checked_when_loading(
    tmp_path: Path, old: str, new: str, error: str
) -> None:
    with pytest.raises(ValueError, match=error):
        toy_scenario(tmp_path, TOY_SCENARIO.replace(old, new, 1), CONFLICTING)


# TOY_SCENARIO as a suite to triage: results, two causes, no [[expected]].
TOY_SUITE = (
    TOY_SCENARIO.replace(
        '[[expected]]\npath = "a.txt"\nline = "+both"\n', 'results = ["junit:report.xml"]\n'
    )
    + """
[[cause]]
tests = ["t.A.test_a", "t.A.test_b"]

[[cause.expected]]
path = "a.txt"
line = "+both"

[[cause]]
tests = ["t.B.test_c"]

[[cause.expected]]
path = "b.txt"
line = "+later"
"""
)


def test_a_suite_scenario_has_causes_and_results_and_no_expected(tmp_path: Path) -> None:
    scenario = toy_scenario(tmp_path, TOY_SUITE, CONFLICTING)
    assert scenario.expected == ()
    assert scenario.results == ("junit:report.xml",)
    assert scenario.causes == (
        samples.Cause(("t.A.test_a", "t.A.test_b"), (samples.Expected("a.txt", "+both"),)),
        samples.Cause(("t.B.test_c",), (samples.Expected("b.txt", "+later"),)),
    )
    assert samples.command(scenario) == ["v1..v2", "--results", "junit:report.xml", "--", "true"]
    assert samples.load(SUITE).results == ("junit:report.xml",)
    assert samples.load(NAMES[0]).causes == ()
    without = TOY_SCENARIO.replace('[[expected]]\npath = "a.txt"\nline = "+both"\n', "")
    with pytest.raises(ValueError, match="missing 'expected'"):
        toy_scenario(tmp_path / "without", without, CONFLICTING)


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ('results = ["junit:report.xml"]\n', "", "needs results"),
        ('results = ["junit:report.xml"]', 'results = "junit:report.xml"', "must be a list"),
        ('"junit:report.xml"', '"report.xml"', "'report.xml' is not KIND:PATH"),
        ('tests = ["t.B.test_c"]', 'tests = ["t.A.test_b"]', "'t.A.test_b' is named twice"),
        ('tests = ["t.B.test_c"]', "tests = []", "needs tests"),
        ('tests = ["t.B.test_c"]', "", "missing 'tests'"),
        ('[[cause.expected]]\npath = "b.txt"', '[[cause.other]]\npath = "b.txt"', "'expected'"),
        ("[[cause]]\ntests", "[[cases]]\ntests", "'cause' must be a list"),
    ],
)
def test_causes_and_results_are_checked_when_loading(
    tmp_path: Path, old: str, new: str, error: str
) -> None:
    assert old in TOY_SUITE
    with pytest.raises(ValueError, match=error):
        toy_scenario(tmp_path, TOY_SUITE.replace(old, new), CONFLICTING)


def test_the_readme_states_the_demos_real_figures(tmp_path: Path) -> None:
    """The figures of `ddchange demo` in the README are the ones counted from the repositories
    the demo builds, in the unit the answer counts (blocks: 4 line changes of one block are 1
    change), and its commands are the ones the demo prints."""
    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())
    default = samples.load(samples.DEFAULT)
    built = samples.build_repo(default, tmp_path / default.name)
    assert f"({samples.figures(default, built)}, one wrong line)" in readme
    two = samples.load("two-files")
    figures = samples.figures(two, samples.build_repo(two, tmp_path / two.name))
    assert f"2 changes of {figures.changes}," in readme
    assert f"`{shlex.join(['ddchange', *samples.command(two)])}`" in readme


def test_figures_count_blocks_files_commits_and_authors(tmp_path: Path) -> None:
    """Counted from the repository: blocks as `git diff -U0` shows them plus the changes it
    shows without a hunk (a binary file, a pure rename), files, commits and their authors."""
    scenario = samples.load(samples.DEFAULT)
    repo = samples.build_repo(scenario, tmp_path / scenario.name)
    between = f"{scenario.good}..{scenario.bad}"
    hunks_u0 = run_git(repo, "diff", "-U0", scenario.good, scenario.bad).count("\n@@ ")
    summary = run_git(repo, "diff", "-M", "--numstat", scenario.good, scenario.bad).splitlines()
    no_hunk = sum(line.startswith("-\t-\t") or line.startswith("0\t0\t") for line in summary)
    expected = samples.Figures(
        changes=hunks_u0 + no_hunk,
        files=len(run_git(repo, "diff", "-M", "--name-only", between).split()),
        commits=len(run_git(repo, "rev-list", between).split()),
        authors=len(set(run_git(repo, "log", "--format=%an", between).splitlines())),
    )
    assert samples.figures(scenario, repo) == expected
