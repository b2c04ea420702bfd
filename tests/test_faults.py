"""Faults, end to end: a test that writes to git, leftovers of runs that died, and more.

Every case runs the real `ddchange` command (`endtoend.ddchange`, which also checks that the
user's work tree, index, HEAD, refs, reflogs, stash, config, hooks and work tree list stay
byte-identical) and ends in the right answer or in one clear error line.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from endtoend import ddchange, found, search, two_commits
from gitsandbox import Sandbox

from ddchange import git, runs
from ddchange.trial import worktree

CHECK = "grep -q BROKEN a.txt && exit 1; exit 0\n"

# -- the test runs git ----------------------------------------------------------------------

GIT_WRITER = (
    "set -e\n"
    # the user's tags are there (version tools need them), in a repository of the test's own
    "git describe --tags --match good >/dev/null || exit 125\n"
    "git tag -f from-the-test\n"
    "git branch -f from-the-test\n"
    "git notes add -f -m 'a note'\n"
    "git config user.name 'The Test'\n"
    "echo edit >> other.txt && git stash push -q -- other.txt\n"
    "git -c user.email=t@example.org commit -q --allow-empty -m 'test commit'\n"
    "set +e\n" + CHECK
)


def test_a_test_that_writes_to_git_changes_only_its_own_repository(tmp_path: Path) -> None:
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, GIT_WRITER)
    assert found(search(repo)) == [("a.txt", "text")]  # `ddchange` checked the repository
    assert b"from-the-test" not in repo.git("tag") + repo.git("branch")
    assert repo.git("stash", "list") == b""


# -- leftovers of runs that died ------------------------------------------------------------


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _leftover(repo: Sandbox, *, git_dir: bool, read_only: bool) -> Path:
    """A scratch tree of a process that is gone: with or without its .git, and with a build
    directory nobody may write to."""
    path = Path(tempfile.mkdtemp(prefix=f"ddchange-scratch-{_dead_pid()}-"))
    if git_dir:
        git.clone_scratch(git.open_repo(repo.path), path, repo.rev("good"))
    build = path / "build" / "deep"
    build.mkdir(parents=True)
    (build / "out.o").write_text("object\n")
    if read_only:
        build.chmod(0o500)
        build.parent.chmod(0o500)
    return path


def test_leftovers_of_dead_runs_are_removed_in_any_state(tmp_path: Path) -> None:
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    leftovers = [
        _leftover(repo, git_dir=True, read_only=False),
        _leftover(repo, git_dir=False, read_only=False),  # a test deleted .git, then SIGKILL
        _leftover(repo, git_dir=True, read_only=True),
    ]
    assert found(search(repo)) == [("a.txt", "text")]
    assert not any(path.exists() for path in leftovers)
    leftovers = [_leftover(repo, git_dir=False, read_only=True)]
    run = ddchange(repo.path, command=["reset"])
    assert run.returncode == 0, run.stderr
    assert not any(path.exists() for path in leftovers)


def test_reset_refuses_while_a_live_run_owns_a_scratch_tree(tmp_path: Path) -> None:
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    other = two_commits(tmp_path / "other", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    with worktree.scratch_worktree(git.open_repo(repo.path), repo.rev("good")) as scratch:
        # another repository's reset leaves this live tree alone, and does not refuse
        runs.reset(other.path)
        assert worktree.owners(git.open_repo(repo.path)) == {scratch.path: os.getpid()}
        run = ddchange(repo.path, command=["reset"])
        assert run.returncode != 0
        assert str(os.getpid()) in run.stderr
        assert scratch.path.exists()
