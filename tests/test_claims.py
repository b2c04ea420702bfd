"""Claims that runs back, end to end: an answer is called 1-minimal only where each removal
was seen to pass."""

from __future__ import annotations

from pathlib import Path

from endtoend import Run, ddchange, put, two_commits

# a.txt's BROKEN fails the test only with b.txt's NEED; either alone breaks the build (125)
TEST = (
    "if grep -q BROKEN a.txt; then grep -q NEED b.txt || exit 125; exit 1; fi\n"
    "grep -q NEED b.txt && exit 125; exit 0\n"
)


def test_an_answer_no_removal_of_which_could_be_tested_is_not_called_1_minimal(
    tmp_path: Path,
) -> None:
    repo = two_commits(
        tmp_path / "repo",
        {"a.txt": "fine\n", "b.txt": "plain\n"},
        {"a.txt": "BROKEN\n", "b.txt": "NEED\n"},
        TEST,
    )
    html = tmp_path / "report.html"
    run = ddchange(repo.path, "good..bad", "--report", str(html), "--", "sh", "test.sh")
    assert run.returncode == 0, run.stderr
    assert sorted(path for path, _ in run.culprits) == ["a.txt", "b.txt"]
    assert "1-minimal" in run.stdout
    assert "It is 1-minimal" not in run.stdout
    assert "No removal could be tested without breaking the build or the test" in run.stdout
    assert "not shown to be 1-minimal" in run.stdout
    page = html.read_text()
    assert "not shown to be 1-minimal" in page
    assert "1-minimal by runs" not in page


def test_an_answer_each_removal_of_which_passed_is_called_1_minimal(tmp_path: Path) -> None:
    test = "grep -q BROKEN a.txt && grep -q BROKEN b.txt && exit 1; exit 0\n"
    repo = two_commits(
        tmp_path / "repo",
        {"a.txt": "fine\n", "b.txt": "fine\n"},
        {"a.txt": "BROKEN\n", "b.txt": "BROKEN\n"},
        test,
    )
    run = ddchange(repo.path, "good..bad", "--", "sh", "test.sh")
    assert run.returncode == 0, run.stderr
    assert "It is 1-minimal: removing any one of them makes it pass" in run.stdout


def test_a_change_checked_in_parts_is_said_to_be(tmp_path: Path) -> None:
    """One block of two line changes from two commits, both needed: the check removes each
    commit's part, and the words name those parts, not the one change shown."""
    test = "grep -q B a.txt && grep -q C a.txt && exit 1; exit 0\n"
    repo = two_commits(
        tmp_path / "repo", {"a.txt": "a\nb\nc\nd\n"}, {"a.txt": "a\nB\nc\nd\n"}, test
    )
    put(repo, {"a.txt": "a\nB\nC\nd\n"})
    repo.commit("C")
    repo.git("tag", "-f", "bad")
    run = ddchange(repo.path, "good..bad", "--strategy", "diff", "--", "sh", "test.sh")
    assert run.returncode == 0, run.stderr
    assert "1 change (2 of " in run.stdout
    assert "It is 1-minimal: removing any one of its 2 parts (" in run.stdout
    assert "removing any one of them" not in run.stdout


# A suite of one test for a triage: case.bug fails where a.txt holds both B and C.
SUITE = """\
lines = open("a.txt").read().split()
failure = '<failure message="B and C"/>' if {"B", "C"} <= set(lines) else ""
with open("report.xml", "w") as out:
    out.write('<testsuite><testcase classname="case" name="bug">' + failure + "</testcase>"
              "</testsuite>")
raise SystemExit(1 if failure else 0)
"""


def _triaged_block(tmp_path: Path, suite: str) -> Run:
    """One block of two line changes (b, c to B, C) triaged with `suite` (--results)."""
    repo = two_commits(
        tmp_path / "repo",
        {"a.txt": "a\nb\nc\nd\n", "suite.py": suite},
        {"a.txt": "a\nB\nC\nd\n"},
        "",
    )
    run = ddchange(repo.path, "good..bad", "--results", "junit:report.xml", "--", "python3",
                   "suite.py", command=["run"])  # fmt: skip
    assert run.returncode == 0, run.stderr
    return run


def test_a_cause_checked_line_by_line_is_said_to_be_checked_in_parts(tmp_path: Path) -> None:
    """The same block triaged (--results): the cause's words name its parts as well."""
    run = _triaged_block(tmp_path, SUITE)
    assert "Cause 1: 1 change breaks 1 test: case.bug" in run.stdout
    assert "passed without each of its 2 parts (2 checks; a change is checked" in run.stdout
    assert "passed without each change" not in run.stdout


def test_a_one_change_cause_whose_parts_cannot_be_tested_is_needed_as_a_whole(
    tmp_path: Path,
) -> None:
    """The same block, where either line alone breaks the suite (no results: 125): the
    cause's one change passes without it (at GOOD), so it is needed as a whole; no removal of
    a part of it could be tested, so it is not shown to be 1-minimal part by part."""
    half = (
        "if len({'B', 'C'} & set(open('a.txt').read().split())) == 1:\n    raise SystemExit(125)\n"
    )
    run = _triaged_block(tmp_path, half + SUITE)
    assert "Cause 1: 1 change breaks 1 test: case.bug" in run.stdout
    assert (
        "passed at GOOD: so the change is needed as a whole; no removal of a part of it could "
        "be tested (2 checks: no build, no result, or another failure), so it is not shown to "
        "be 1-minimal part by part"
    ) in run.stdout


def test_a_check_edited_between_two_runs_of_the_same_command_is_run_again(tmp_path: Path) -> None:
    """A check script kept outside the repository, tightened between two runs of the same
    command line: the second run takes none of the first's tests over, says why, and every
    claim it prints rests on runs of the new check."""
    check = tmp_path / "check.sh"
    check.write_text("grep -q BROKEN a.txt && exit 1; exit 0\n")
    repo = two_commits(
        tmp_path / "repo",
        {"a.txt": "fine\n", "b.txt": "fine\n"},
        {"a.txt": "BROKEN\n", "b.txt": "WORSE\n"},
        "",
    )
    first = ddchange(repo.path, "good..bad", "--", "sh", str(check))
    assert first.returncode == 0, first.stderr
    assert [path for path, _ in first.culprits] == ["a.txt"]
    check.write_text("grep -q WORSE b.txt && exit 1; exit 0\n")  # the same command line
    second = ddchange(repo.path, "good..bad", "--", "sh", str(check))
    assert second.returncode == 0, second.stderr
    assert [path for path, _ in second.culprits] == ["b.txt"]
    assert second.report["resumed"] == 0
    assert second.report["tests_run"] > 0
    assert second.report["resumed_from"]["changed"] == [str(check)]
    assert "none taken from an earlier run of this command on " in second.stdout
    assert f"{check} changed since, so every test ran again" in second.stdout


def test_a_triage_with_the_history_first_says_why_an_edited_check_ran_every_test_again(
    tmp_path: Path,
) -> None:
    """The same for a whole-suite triage by default (the history bisected first), whose
    records are those of the bisection and of a triage inside each first bad commit: the
    second run says that the check changed, as --strategy diff and a plain search do."""
    check = tmp_path / "check.sh"
    check.write_text("exec python3 suite.py\n")
    repo = two_commits(tmp_path / "repo", {"a.txt": "a\nb\nc\nd\n"}, {}, "")
    put(repo, {"suite.py": SUITE})
    repo.commit("the suite")
    repo.git("tag", "-f", "good")
    put(repo, {"a.txt": "a\nB\nc\nd\n"})
    repo.commit("B")
    put(repo, {"a.txt": "a\nB\nC\nd\n"})
    repo.commit("C")
    repo.git("tag", "-f", "bad")
    args = ("good..bad", "--results", "junit:report.xml", "--", "sh", str(check))
    first = ddchange(repo.path, *args)
    assert first.returncode == 0, first.stderr
    check.write_text("exec python3 suite.py  # the same suite, another script\n")
    second = ddchange(repo.path, *args)
    assert second.returncode == 0, second.stderr
    assert second.report["resumed"] == 0
    assert second.report["resumed_from"]["changed"] == [str(check)]
    assert f"{check} changed since, so every test ran again" in second.stdout


USE = "from pkg.{} import round2\n\n\ndef price():\n    return round2(1 / 3)\n"


def test_a_run_that_says_a_module_is_missing_is_another_failure_than_bads(tmp_path: Path) -> None:
    """A rename that also changes what the renamed module does: BAD fails the assertion, and
    the new import alone (its module not there yet) exits 1 too, with an import error that
    BAD's run does not show. That run is another failure, not the failure: the answer holds
    the new module with the import, each checked by a run."""
    test = (
        "import unittest\n"
        "from pkg.use import price\n\n\n"
        "class PriceTest(unittest.TestCase):\n"
        "    def test_price(self):\n"
        "        self.assertEqual(price(), 0.33)\n"
    )
    good = {
        "pkg/__init__.py": "",
        "pkg/util.py": "def round2(x):\n    return round(x, 2)\n",
        "pkg/use.py": USE.format("util"),
        "test_price.py": test,
    }
    bad = {
        "pkg/util.py": None,
        "pkg/helpers.py": "def round2(x):\n    return round(x, 1)\n",
        "pkg/use.py": USE.format("helpers"),
    }
    repo = two_commits(tmp_path / "repo", good, bad, "")
    run = ddchange(repo.path, "good..bad", "--", "python3", "-m", "unittest", "test_price")
    assert run.returncode == 0, run.stderr
    assert sorted(path for path, _ in run.culprits) == ["pkg/helpers.py", "pkg/use.py"]
    reasons = [record["reason"] for record in run.report["log"]]
    assert "different failure: exit 1, says helpers missing, which BAD's run did not" in reasons
