"""End to end: release triage. `--isolate`, `--strategy auto`, attribution and `--report`.

Each test runs the real command on a bundled scenario and checks the answer against what the
scenario's own history says: the expected lines, the commits that wrote them (read back with
`git log`), and, for an isolation, that the passing set really passes and the failing set
really fails when applied to GOOD by `git apply` in a separate clone.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from userruns import SampleRepo, culprit_matches, ddchange, git, scenario_args

from ddchange import model, samples
from ddchange.search import confidence


def search(repo: Path, scenario: samples.Scenario, tmp_path: Path, *options: str) -> dict[str, Any]:
    """Run ddchange with `options` on the scenario; the JSON report (exit code 0 asserted)."""
    report = tmp_path / "report.json"
    args = [*scenario_args(scenario), *options, "--json", str(report), "--", *scenario.test]
    done = ddchange(*args, cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    result: dict[str, Any] = json.loads(report.read_text())
    result["stdout"] = done.stdout
    return result


def introduced_by(repo: Path, good: str, bad: str, path: str, line: str) -> str:
    """The one non-merge commit in GOOD..BAD whose own diff has `line` (with its +) in `path`."""
    found = [
        sha
        for sha in git(repo, "rev-list", "--no-merges", f"{good}..{bad}").split()
        if line in git(repo, "show", "--format=", sha, "--", path).splitlines()
    ]
    assert len(found) == 1, found
    return found[0]


def assert_attributed(
    repo: Path, scenario: samples.Scenario, culprits: list[dict[str, Any]]
) -> set[str]:
    """Each culprit that holds an expected line (at block granularity a block also holds the
    lines around it) names exactly the commit whose own diff wrote that line, with that
    commit's subject and author; the commits named."""
    named = set()
    for culprit in culprits:
        lines = culprit["diff"].splitlines()
        expected = next((e for e in scenario.expected if e.line in lines), None)
        if expected is None:
            continue
        sha = introduced_by(repo, scenario.good, scenario.bad, expected.path, expected.line)
        assert [c["sha"] for c in culprit["commits"]] == [sha]
        facts = git(repo, "log", "-1", "--format=%s%x00%an <%ae>", sha).strip().split("\0")
        assert [culprit["commits"][0]["subject"], culprit["commits"][0]["author"]] == facts
        named.add(sha)
    return named


def test_auto_bisects_then_searches_inside_the_culprit_commit(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    repo, scenario = sample_repo("wrong-line")
    result = search(repo, scenario, tmp_path, "--strategy", "auto")
    assert culprit_matches(scenario, result["culprits"], inside=True)
    route = result["route"]
    culprit = scenario.expected[0]
    wanted = introduced_by(repo, scenario.good, scenario.bad, culprit.path, culprit.line)
    assert route["strategy"] == "auto"
    assert route["searched"] == "commit"
    assert result["first_bad"] == route["first_bad"] == result["tip"] == wanted
    assert result["base"] == git(repo, "rev-parse", f"{wanted}^").strip()
    commits = len(
        git(repo, "rev-list", "--first-parent", f"{scenario.good}..{scenario.bad}").split()
    )
    assert 1 <= route["bisect_tests"] <= (commits - 1).bit_length(), "log2, like git bisect"
    phases = [r["phase"] for r in result["log"]]
    assert phases.count("bisect") == sum(step["runs"] for step in route["bisection"])
    assert phases.count("commit") == 0, "no commit level: the search is inside one commit"
    # a steady test: the first bad commit's FAIL is taken as BAD's is, not run again
    assert route["tip_runs"]["runs"] == route["tip_runs"]["fails"] == 1
    assert "Bisection: BAD failed, and of the commits between GOOD and BAD" in result["stdout"]


def test_two_commits_that_only_fail_together_answer_on_the_parent_and_say_so(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    """two-files: one commit sets latin-1, the next reads input with it. Bisection names the
    second; inside it, on its parent (which has latin-1), the reader.py line is the answer;
    on GOOD that line alone passes, and the report says the answer needs the commits before
    it, and how to get the whole cause relative to GOOD."""
    repo, scenario = sample_repo("two-files")
    result = search(repo, scenario, tmp_path)
    assert culprit_matches(scenario, result["culprits"], inside=True)
    assert result["first_bad"] == git(repo, "rev-parse", scenario.bad).strip()
    assert result["route"]["on_good"] == "pass"
    assert "needs what the commits before it brought" in result["stdout"]
    assert "--strategy diff" in result["stdout"]


def test_the_whole_range_names_both_halves_each_with_its_commit(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    """--strategy diff on two-files: the answer holds a line of each commit, each attributed
    to its own commit."""
    repo, scenario = sample_repo("two-files")
    result = search(repo, scenario, tmp_path, "--strategy", "diff")
    assert culprit_matches(scenario, result["culprits"])
    assert result["base"] == result["good"]
    named = assert_attributed(repo, scenario, result["culprits"])
    authors = {git(repo, "log", "-1", "--format=%an", sha).strip() for sha in named}
    assert len(authors) == 2, "the two halves come from two authors"


def test_attribution_in_the_default_strategy(sample_repo: SampleRepo, tmp_path: Path) -> None:
    repo, scenario = sample_repo("c-make")
    result = search(repo, scenario, tmp_path)
    assert result["route"]["strategy"] == "auto"
    for culprit in result["culprits"]:
        assert culprit["commits"], culprit
        for commit in culprit["commits"]:
            assert git(repo, "merge-base", "--is-ancestor", scenario.good, commit["sha"]) == ""
            assert commit["sha"] != git(repo, "rev-parse", scenario.good).strip()
            assert commit["date"].startswith("2024-01-")
            assert f"commit {commit['sha'][:12]} {commit['author']}" in result["stdout"]


def apply_and_test(repo: Path, scenario: samples.Scenario, patch: str, where: Path) -> int:
    """GOOD + `patch` (git apply) in a fresh clone: the test's exit code."""
    subprocess.run(["git", "clone", "-q", str(repo), str(where)], check=True)
    git(where, "checkout", "-q", scenario.good)
    if patch:
        subprocess.run(["git", "apply"], input=patch, text=True, cwd=where, check=True)
    command = f"{scenario.build or 'true'} && {shlex.join(scenario.test)}"
    return subprocess.run(command, shell=True, cwd=where, capture_output=True).returncode


def test_isolate_reports_a_passing_and_a_failing_set_with_a_minimal_difference(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    repo, scenario = sample_repo("two-files")
    patch = tmp_path / "failing.patch"
    options = ("--isolate", "--strategy", "diff", "--patch", str(patch))
    result = search(repo, scenario, tmp_path, *options)
    assert result["mode"] == "isolate"
    difference = result["culprits"]
    passing = {unit["id"] for unit in result["passing"]}
    assert len(difference) == 1, "one of the two halves flips the outcome"
    wanted = {(e.path, e.line) for e in scenario.expected}
    found = {
        (u["path"], line) for u in difference + result["passing"] for line in u["diff"].splitlines()
    }
    assert wanted <= found, "both halves are in the failing set"
    failing = passing | {difference[0]["id"]}
    outcomes = {frozenset(r["config"]): r["outcome"] for r in result["log"]}
    assert outcomes[frozenset(passing)] == "pass"
    assert outcomes[frozenset(failing)] == "fail"
    confirmation = result["confirmation"]
    assert (confirmation["answer"], confirmation["rest"]) == ("fail", "pass")
    assert confirmation["reruns"] == confidence.reruns(model.CONFIDENCE)
    bad_code = apply_and_test(repo, scenario, patch.read_text(), tmp_path / "check")
    assert bad_code == 1, "GOOD + the failing set fails like BAD"
    assert f"GOOD plus {len(passing)} changes passes" in result["stdout"]


def test_an_auto_run_replays_with_its_strategy_and_its_bisection(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    """`ddchange log` + `replay` of an auto run: the same route, no test of it run again."""
    repo, scenario = sample_repo("wrong-line")
    first = search(repo, scenario, tmp_path, "--strategy", "auto")
    saved = tmp_path / "run.log"
    saved.write_text(ddchange("log", cwd=repo).stdout)
    assert ddchange("reset", cwd=repo).returncode == 0
    report = tmp_path / "again.json"
    replayed = ddchange("replay", str(saved), "--json", str(report), cwd=repo)
    assert replayed.returncode == 0, replayed.stderr
    again = json.loads(report.read_text())
    assert again["route"] == first["route"]
    assert again["culprits"] == first["culprits"]
    assert again["tests_run"] == 0, "every run, the checks at the end included, is replayed"


def test_the_whole_range_of_a_failing_merge_of_two_passing_branches_names_both_sides(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    """`git bisect` can only name the merge; --strategy diff names a line from each branch,
    each attributed to the branch commit that wrote it, not to the merge."""
    repo, scenario = sample_repo("merge")
    result = search(repo, scenario, tmp_path, "--strategy", "diff")
    assert culprit_matches(scenario, result["culprits"])
    named = assert_attributed(repo, scenario, result["culprits"])
    branches = {
        sha: git(repo, "branch", "--contains", sha, "--format=%(refname:short)").split()
        for sha in named
    }
    only_main = [sha for sha, names in branches.items() if names == ["main"]]
    assert len(named) == 2
    assert len(only_main) == 1, "one culprit commit is on main only, the other on the branch"


def test_auto_on_a_merge_whose_branch_passes_searches_it_against_its_first_parent(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    """The merge is the first bad commit and its branch passes alone: the answer is the
    merge's change on its first parent (the branch's separator line, with its commit), and
    on GOOD it passes: the report says so."""
    repo, scenario = sample_repo("merge")
    result = search(repo, scenario, tmp_path)
    merge, route = result["first_bad"], result["route"]
    assert len(git(repo, "rev-list", "--parents", "-1", merge).split()) == 3, "a merge"
    assert route["searched"] == "merge"
    assert result["base"] == git(repo, "rev-parse", f"{merge}^1").strip()
    assert culprit_matches(scenario, result["culprits"], inside=True)
    assert assert_attributed(repo, scenario, result["culprits"]), "the branch's own commit"
    assert route["on_good"] == "pass"


def test_isolate_on_the_merge(sample_repo: SampleRepo, tmp_path: Path) -> None:
    """dd on the whole merge range: a single line turns GOOD + the passing set into the failure, and
    the other culprit line is in the passing set."""
    repo, scenario = sample_repo("merge")
    result = search(repo, scenario, tmp_path, "--isolate", "--strategy", "diff")
    assert len(result["culprits"]) == 1
    lines = {
        (u["path"], line)
        for u in result["culprits"] + result["passing"]
        for line in u["diff"].splitlines()
    }
    assert {(e.path, e.line) for e in scenario.expected} <= lines
    confirmation = result["confirmation"]
    assert (confirmation["answer"], confirmation["rest"]) == ("fail", "pass")
    assert confirmation["reruns"] == confidence.reruns(model.CONFIDENCE)


def assert_claims_backed(result: dict[str, Any]) -> None:
    """Every claim of the JSON report is a configuration the log shows with that outcome."""
    seen: dict[tuple[str, ...], set[str]] = {}
    for record in result["log"]:
        seen.setdefault(tuple(record["config"]), set()).add(record["outcome"])
    claims = [result["answer"], *result["checks"]]
    assert result["answer"]["outcome"] == "fail"
    for claim in claims:
        assert seen.get(tuple(claim["changes"])) == {claim["outcome"]}, claim
    ids = {c["id"] for c in result["culprits"]} | {p["id"] for p in result["passing"]}
    assert tuple(sorted(ids)) == tuple(result["answer"]["changes"])


def test_a_masking_change_cannot_make_a_claim_by_implication(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """Not monotone: the bug fails alone, but a third change masks it, and the bug fails again
    with a fourth. GOOD plus bug + mask passes, so monotony would call the bug alone "pass";
    the answer must come from runs: the bug alone, whose removal leaves GOOD (PASS)."""
    test = (
        "grep -q bug x.txt || exit 0\n"
        "grep -q mask m.txt && ! grep -q more y.txt && exit 0\n"
        "exit 1\n"
    )
    files = {"x.txt": "ok\n", "m.txt": "-\n", "y.txt": "-\n", "z.txt": "-\n"}
    repo, _ = make_repo(
        tmp_path,
        [
            {"test.sh": test, **files},
            {"x.txt": "bug\n", "m.txt": "mask\n", "y.txt": "more\n", "z.txt": "noise\n"},
        ],
    )
    report = tmp_path / "report.json"
    for mode in ([], ["--isolate"]):
        done = ddchange(
            "HEAD~1..HEAD", *mode, "--json", str(report), "--", "sh", "test.sh", cwd=repo
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(report.read_text())
        assert_claims_backed(result)
        if not mode:  # ddmin: the bug alone; dd's difference depends on its passing set
            assert [c["path"] for c in result["culprits"]] == ["x.txt"]
        ddchange("reset", cwd=repo)


def test_claims_on_the_merge_are_backed_by_runs(sample_repo: SampleRepo, tmp_path: Path) -> None:
    repo, scenario = sample_repo("merge")
    for options in ((), ("--isolate",), ("--strategy", "auto")):
        assert_claims_backed(search(repo, scenario, tmp_path, *options))
