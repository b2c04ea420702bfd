"""Path limits: --keep (always applied, as in BAD) and --ignore (never applied), as git
pathspecs, end to end with the real command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from endtoend import Run, ddchange, found, refused, two_commits
from gitsandbox import Sandbox

# BAD adds the test itself, changes the docs, a harmless file and the culprit. The test notes
# in $DOCS_SEEN every run that sees the docs' change.
CHECK = (
    'grep -q changed docs/notes.md && echo seen >> "$DOCS_SEEN"\n'
    "grep -q BROKEN a.txt && exit 1; exit 0\n"
)
GOOD = {"a.txt": "fine\n", "docs/notes.md": "notes\n", "src/x.txt": "x\n"}
BAD = {
    "a.txt": "BROKEN\n",
    "docs/notes.md": "notes, changed\n",
    "src/x.txt": "x, two\n",
    "tests/check.sh": CHECK,
}


@pytest.fixture
def repo(tmp_path: Path) -> Sandbox:
    return two_commits(tmp_path / "repo", GOOD, BAD, "exit 0\n")


def limited(repo: Sandbox, tmp_path: Path, *options: str) -> Run:
    seen = tmp_path / "docs-seen"
    return ddchange(repo.path, "good..bad", *options, "--", "sh", "tests/check.sh",
                    env={"DOCS_SEEN": str(seen)})  # fmt: skip


def test_without_keep_the_new_test_file_is_missing_in_good_and_keep_is_suggested(
    repo: Sandbox, tmp_path: Path
) -> None:
    run = limited(repo, tmp_path)
    assert run.returncode == 1, run.stderr
    assert "GOOD should pass" in run.stderr
    assert "run again with --keep tests/check.sh" in run.stderr


def test_keep_tests_and_ignore_docs(repo: Sandbox, tmp_path: Path) -> None:
    run = limited(repo, tmp_path, "--keep", "tests/", "--ignore", "docs/")
    assert found(run) == [("a.txt", "text")]
    assert not (tmp_path / "docs-seen").exists(), "the docs' change was never applied"
    assert run.report["kept"] == ["tests/check.sh"]
    assert run.report["ignored"] == ["docs/notes.md"]
    assert "Not searched, left as in GOOD (--ignore): 1 path: docs/notes.md." in run.stdout
    searched = {path for record in run.report["log"] for path in record["config"]}
    assert searched, "the search ran"
    again = limited(repo, tmp_path, "--keep", "tests/", "--ignore", "docs/")
    assert found(again) == [("a.txt", "text")]
    assert again.report["tests_run"] == 0, "the same limits are the same run: resumed"


def test_the_patch_holds_the_kept_changes_and_reproduces_on_good(
    repo: Sandbox, tmp_path: Path
) -> None:
    patch = tmp_path / "answer.patch"
    run = limited(repo, tmp_path, "--keep", "tests/*.sh", "--ignore", ":(glob)docs/**",
                  "--patch", str(patch))  # fmt: skip
    assert found(run) == [("a.txt", "text")]
    place = tmp_path / "check"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(place)], check=True)
    subprocess.run(["git", "-C", str(place), "checkout", "-q", "good"], check=True)
    subprocess.run(["git", "-C", str(place), "apply", str(patch)], check=True)
    assert not (place / "src" / "x.txt").read_text().endswith("two\n")
    assert (place / "docs" / "notes.md").read_text() == "notes\n"
    done = subprocess.run(["sh", "tests/check.sh"], cwd=place, env={"DOCS_SEEN": "/dev/null"})
    assert done.returncode == 1, "GOOD plus the patch fails as BAD does"


def test_a_pathspec_that_matches_no_change_is_refused_before_any_test(
    repo: Sandbox, tmp_path: Path
) -> None:
    refused(limited(repo, tmp_path, "--ignore", "nothing/here/"), 2,
            "--ignore 'nothing/here/' matches no path that changed")  # fmt: skip


def test_a_path_both_kept_and_ignored_is_refused(repo: Sandbox, tmp_path: Path) -> None:
    """`:(exclude)*.txt` matches every changed path but the .txt files: tests/check.sh too."""
    run = limited(repo, tmp_path, "--keep", "tests/", "--ignore", ":(exclude)*.txt")
    refused(run, 2, "both --keep and --ignore match tests/check.sh")


def test_limits_that_leave_nothing_are_refused(repo: Sandbox, tmp_path: Path) -> None:
    run = limited(repo, tmp_path, "--keep", "tests/", "--ignore", ":(exclude)tests/")
    refused(run, 2, "--keep and --ignore leave no change to search")
