"""The bundled scenarios: they load, build byte-deterministically, GOOD passes and BAD fails,
and their expected answer fails while leaving out any one of its units does not.

That the expected answer is the *only* 1-minimal failing set was checked when each scenario was
written (see its scenario.toml); these tests guard what an edit to a scenario, to the builder or
to the way ddchange splits and applies changes could silently break.
"""

from __future__ import annotations

import shlex
import subprocess
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
    assert scenario.expected
    assert len(set(scenario.expected)) == len(scenario.expected)
    assert scenario.source == samples.scenario_root() / name


def test_unknown_scenario_names_the_known_ones() -> None:
    with pytest.raises(UnknownScenario) as raised:
        samples.load("no-such-scenario")
    assert raised.value.name == "no-such-scenario"
    assert raised.value.known == tuple(NAMES)


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


@pytest.mark.parametrize("name", NAMES)
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
    for expected in scenario.expected:
        assert diff.count(expected.line) == 1, expected


@pytest.mark.parametrize("name", NAMES)
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
