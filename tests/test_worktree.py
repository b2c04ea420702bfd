"""Tests for worktree.py: the scratch work tree's lifecycle and how it materializes states."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest
from gitsandbox import Sandbox, build_zoo, init

from ddchange import errors, git
from ddchange.diff import content, read
from ddchange.diff.hunks import FileState
from ddchange.trial.watch import Watch
from ddchange.trial.worktree import Scratch, scratch_worktree

OLD = 1_000_000_000_000_000_000  # a file time in ns (2001), far from "now"


@pytest.fixture
def repo(tmp_path: Path) -> Sandbox:
    repo = init(tmp_path / "repo")
    repo.write("keep.txt", "kept\n")
    repo.write("edit.txt", "before\n")
    repo.write("run.sh", "#!/bin/sh\n")
    repo.symlink("link", "keep.txt")
    repo.write("d/e/gone.txt", "gone\n")
    repo.write("outside.txt", "not in the diff\n")
    repo.write("generated.c", "/* generated */\n")
    repo.commit("good")
    return repo


def _open(repo: Sandbox) -> git.Repo:
    return git.open_repo(repo.path)


def _worktrees(repo: Sandbox) -> str:
    return repo.git("worktree", "list", "--porcelain").decode()


def _age(root: Path) -> None:
    """Give every file under `root` (not .git) the same old time, to see which get rewritten."""
    for path in root.rglob("*"):
        if ".git" not in path.relative_to(root).parts:
            os.utime(path, ns=(OLD, OLD), follow_symlinks=False)


def _times(root: Path) -> dict[str, int]:
    return {
        str(path.relative_to(root)): path.lstat().st_mtime_ns
        for path in root.rglob("*")
        if ".git" not in path.relative_to(root).parts and not path.is_dir()
    }


# -- lifecycle -------------------------------------------------------------------------------


def test_scratch_is_a_detached_checkout_of_good_outside_the_repository(repo: Sandbox) -> None:
    good = repo.rev("HEAD")
    with scratch_worktree(_open(repo), good) as scratch:
        assert scratch.path.is_relative_to(tempfile.gettempdir())
        assert not scratch.path.is_relative_to(repo.path)
        assert scratch.path.parent.name.startswith("ddchange-scratch-")
        assert Sandbox(scratch.path).rev("HEAD") == good
        assert (scratch.path / "edit.txt").read_text() == "before\n"
        assert scratch.good == good
        assert str(scratch.path) not in _worktrees(repo)  # a repository of its own
    assert not scratch.path.parent.exists()


def _crash_in_scratch(
    repo: git.Repo, good: str, work: Callable[[Scratch], object], crash: BaseException
) -> NoReturn:
    """Do `work` in a scratch work tree, then raise `crash`; the exception says where it was."""
    with scratch_worktree(repo, good) as scratch:
        work(scratch)
        crash.add_note(str(scratch.path))
        raise crash


def _build(scratch: Scratch) -> None:
    (scratch.path / "build.o").write_text("output\n")


@pytest.mark.parametrize("crash", [RuntimeError("test crashed"), KeyboardInterrupt()])
def test_scratch_is_removed_whatever_ends_the_block(repo: Sandbox, crash: BaseException) -> None:
    with pytest.raises(type(crash)) as raised:
        _crash_in_scratch(_open(repo), repo.rev("HEAD"), _build, crash)
    (where,) = raised.value.__notes__
    assert not Path(where).exists()


def test_a_failed_checkout_leaves_nothing_behind(
    repo: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = tmp_path / "tmp"  # a temporary directory of this test's own: others run at once
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    with pytest.raises(errors.GitFailed), scratch_worktree(_open(repo), "1" * 40):
        pass
    assert list(private.iterdir()) == []


def test_a_bare_repository_gets_a_scratch_worktree(repo: Sandbox, tmp_path: Path) -> None:
    subprocess.run(["git", "clone", "-q", "--bare", repo.path, tmp_path / "bare"], check=True)
    with scratch_worktree(git.open_repo(tmp_path / "bare"), repo.rev("HEAD")) as scratch:
        assert (scratch.path / "keep.txt").read_text() == "kept\n"
    assert not scratch.path.exists()


# -- the user's repository is never touched ----------------------------------------------------


def _snapshot(repo: Sandbox) -> dict[str, object]:
    git_dir = repo.path / ".git"
    index = (git_dir / "index").read_bytes()  # before any command could refresh it
    files = {
        str(path.relative_to(repo.path)): (
            os.readlink(path) if path.is_symlink() else path.read_bytes(),
            path.lstat().st_mode,
            path.lstat().st_mtime_ns,
        )
        for path in repo.path.rglob("*")
        if ".git" not in path.relative_to(repo.path).parts and not path.is_dir()
    }
    return {
        "index": index,
        "HEAD": (git_dir / "HEAD").read_bytes(),
        "reflog": (git_dir / "logs" / "HEAD").read_bytes(),
        "config": (git_dir / "config").read_bytes(),
        "refs": repo.git("for-each-ref", "--format=%(refname) %(objectname)"),
        "stash": repo.git("stash", "list"),
        "status": repo.git("status", "--porcelain", "-z", "--untracked-files=all"),
        "files": files,
    }


def test_the_users_checkout_index_refs_and_stash_stay_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "0")  # our own `git status` must not refresh
    zoo = build_zoo(tmp_path)
    user = zoo.repo
    user.git("branch", "feature", zoo.good)
    user.git("tag", "-a", "-m", "release", "v1", zoo.good)
    user.write("plain.c", "stashed edit\n")
    user.git("stash", "-q")
    user.write("crlf.txt", "staged edit\n")
    user.git("add", "crlf.txt")
    user.write("module.py", "unstaged edit\n")
    user.write("notes/untracked.txt", "untracked\n")
    before = _snapshot(user)
    diff = read.read_diff(_open(user), zoo.good, zoo.bad)

    def work(scratch: Scratch) -> None:
        scratch.apply(content.materialize(diff, [hunk.id for hunk in diff.hunks]))
        (scratch.path / "plain.c").write_text("a build rewrote this\n")
        _build(scratch)
        scratch.patch(zoo.good, content.touched_paths(diff))

    with pytest.raises(RuntimeError) as raised:
        _crash_in_scratch(_open(user), zoo.good, work, RuntimeError("the test crashed"))

    assert _snapshot(user) == before
    assert not Path(raised.value.__notes__[0]).exists()


# -- apply -----------------------------------------------------------------------------------


def _good_states(scratch: Scratch, paths: list[str]) -> dict[str, FileState | None]:
    return read.tree_states(scratch.repo, scratch.good, paths)


def test_apply_rewrites_only_what_differs(repo: Sandbox) -> None:
    with scratch_worktree(_open(repo), repo.rev("HEAD")) as scratch:
        states = _good_states(scratch, ["keep.txt", "edit.txt", "run.sh", "link", "d/e/gone.txt"])
        states["edit.txt"] = FileState(b"after\n", 0o100644)
        states["run.sh"] = FileState(b"#!/bin/sh\n", 0o100755)
        states["link"] = FileState(b"edit.txt", 0o120000)
        _age(scratch.path)

        assert scratch.apply(states) == ["edit.txt", "link", "run.sh"]

        times = _times(scratch.path)
        assert {path for path, time in times.items() if time != OLD} == {
            "edit.txt",
            "link",
            "run.sh",
        }
        assert (scratch.path / "edit.txt").read_bytes() == b"after\n"
        assert os.access(scratch.path / "run.sh", os.X_OK)
        assert os.readlink(scratch.path / "link") == "edit.txt"
        assert scratch.apply(states) == []
        assert _times(scratch.path) == times


def test_apply_removes_files_and_the_directories_they_leave_empty(repo: Sandbox) -> None:
    with scratch_worktree(_open(repo), repo.rev("HEAD")) as scratch:
        states: dict[str, FileState | None] = {
            "d/e/gone.txt": None,
            "new/dir/added.txt": FileState(b"added\n", 0o100644),
        }
        assert scratch.apply(states) == ["d/e/gone.txt", "new/dir/added.txt"]
        assert not (scratch.path / "d").exists()
        assert (scratch.path / "new" / "dir" / "added.txt").read_bytes() == b"added\n"
        states = {"d/e/gone.txt": FileState(b"gone\n", 0o100644), "new/dir/added.txt": None}
        assert scratch.apply(states) == ["d/e/gone.txt", "new/dir/added.txt"]
        assert not (scratch.path / "new").exists()
        assert scratch.patch(scratch.good, list(states)) == b""


def test_apply_keeps_build_output(repo: Sandbox) -> None:
    with scratch_worktree(_open(repo), repo.rev("HEAD")) as scratch:
        (scratch.path / "d" / "e" / "gone.o").write_text("object\n")
        (scratch.path / "app").write_text("binary\n")
        scratch.apply({"d/e/gone.txt": None, "edit.txt": FileState(b"after\n", 0o100644)})
        assert (scratch.path / "d" / "e" / "gone.o").read_text() == "object\n"
        assert (scratch.path / "app").read_text() == "binary\n"


def test_apply_restores_tracked_files_a_build_changed(repo: Sandbox) -> None:
    with scratch_worktree(_open(repo), repo.rev("HEAD")) as scratch:
        states = {"edit.txt": FileState(b"after\n", 0o100644)}
        scratch.apply(states)
        (scratch.path / "generated.c").write_text("/* regenerated differently */\n")
        (scratch.path / "outside.txt").unlink()
        (scratch.path / "edit.txt").write_text("the build touched a diff file too\n")
        (scratch.path / "build.o").write_text("output\n")
        _age(scratch.path)

        assert scratch.apply(states) == ["edit.txt", "generated.c", "outside.txt"]

        assert (scratch.path / "generated.c").read_text() == "/* generated */\n"
        assert (scratch.path / "outside.txt").read_text() == "not in the diff\n"
        assert (scratch.path / "edit.txt").read_text() == "after\n"
        assert (scratch.path / "build.o").read_text() == "output\n"
        assert _times(scratch.path)["keep.txt"] == OLD


def test_apply_undoes_what_a_test_did_with_git(repo: Sandbox) -> None:
    """A test that commits an edit outside the diff (a version bump), checks out a branch and
    stages a deletion leaves HEAD, the index and the files as GOOD's for the next test."""
    good = repo.rev("HEAD")
    with scratch_worktree(_open(repo), good) as scratch:
        states = {"edit.txt": FileState(b"after\n", 0o100644)}
        scratch.apply(states)
        tree = Sandbox(scratch.path)
        tree.write("outside.txt", "bumped\n")
        tree.git("commit", "-q", "-am", "bump")
        tree.git("checkout", "-q", "-b", "the-tests-branch")
        tree.git("rm", "-q", "--cached", "keep.txt")
        tree.write("staged.txt", "new\n")
        tree.git("add", "staged.txt")

        assert scratch.apply(states) == ["outside.txt"]

        assert tree.git("rev-parse", "--symbolic-full-name", "HEAD").strip() == b"HEAD"
        assert tree.rev("HEAD") == good
        assert tree.git("diff", "--cached", "--name-only", good) == b""
        assert (scratch.path / "outside.txt").read_text() == "not in the diff\n"
        assert (scratch.path / "edit.txt").read_text() == "after\n"
        assert git.modified_files(scratch.path) == ["edit.txt"]

        (scratch.path / ".git" / "index").unlink()  # a test that deletes the index
        assert scratch.apply(states) == []
        assert tree.git("diff", "--cached", "--name-only", good) == b""
        assert git.modified_files(scratch.path) == ["edit.txt"]


def test_apply_never_follows_a_symlinked_directory_out_of_the_tree(
    repo: Sandbox, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "e").mkdir(parents=True)
    (elsewhere / "e" / "gone.txt").write_text("not ours\n")
    with scratch_worktree(_open(repo), repo.rev("HEAD")) as scratch:
        subprocess.run(["rm", "-rf", scratch.path / "d"], check=True)
        (scratch.path / "d").symlink_to(elsewhere)  # a build replaced d/ with a symlink
        assert scratch.apply({"d/e/gone.txt": None}) == []
        assert (elsewhere / "e" / "gone.txt").read_text() == "not ours\n"
        assert scratch.apply({"d/e/gone.txt": FileState(b"ours\n", 0o100644)}) == ["d/e/gone.txt"]
        assert not (scratch.path / "d").is_symlink()
        assert (scratch.path / "d" / "e" / "gone.txt").read_text() == "ours\n"
        assert (elsewhere / "e" / "gone.txt").read_text() == "not ours\n"


def test_every_kind_of_change_round_trips_between_good_and_bad(tmp_path: Path) -> None:
    zoo = build_zoo(tmp_path)
    diff = read.read_diff(_open(zoo.repo), zoo.good, zoo.bad)
    paths = content.touched_paths(diff)
    with scratch_worktree(_open(zoo.repo), zoo.good) as scratch:
        scratch.apply(content.materialize(diff, [hunk.id for hunk in diff.hunks]))
        assert scratch.patch(zoo.bad, paths) == b""
        to_bad = scratch.patch(zoo.good, paths)
        assert scratch.apply(content.materialize(diff, [hunk.id for hunk in diff.hunks])) == []
        scratch.apply(content.materialize(diff, []))
        assert scratch.patch(zoo.good, paths) == b""
        Sandbox(scratch.path).git("apply", "--whitespace=nowarn", stdin=to_bad)
        assert scratch.patch(zoo.bad, paths) == b""


def test_apply_rewrites_in_place_but_spares_hard_links_and_read_only_files(
    repo: Sandbox, tmp_path: Path
) -> None:
    """A plain file is written over and cut to its new length, here shorter (same inode,
    cheap); a file with a second link elsewhere, or one a build made read-only, is replaced,
    and the other link keeps its bytes."""
    with scratch_worktree(_open(repo), repo.rev("HEAD")) as scratch:
        inode = (scratch.path / "edit.txt").stat().st_ino
        os.link(scratch.path / "keep.txt", tmp_path / "linked-copy")
        (scratch.path / "outside.txt").chmod(0o444)
        states = {
            "edit.txt": FileState(b"after\n", 0o100644),
            "keep.txt": FileState(b"changed\n", 0o100644),
            "outside.txt": FileState(b"changed too\n", 0o100644),
        }
        assert scratch.apply(states) == ["edit.txt", "keep.txt", "outside.txt"]
        assert (scratch.path / "edit.txt").stat().st_ino == inode
        assert (tmp_path / "linked-copy").read_bytes() == b"kept\n"
        assert [(scratch.path / path).read_bytes() for path in states] == [
            state.content for state in states.values()
        ]


def test_apply_writes_files_as_a_checkout_converts_them(tmp_path: Path) -> None:
    """Blob contents go through git's checkout conversion (eol, smudge filter); the patch
    compares cleaned files, so it is empty for GOOD's contents."""
    repo = init(tmp_path / "repo")
    repo.git("config", "filter.upper.smudge", "tr a-z A-Z")
    repo.git("config", "filter.upper.clean", "tr A-Z a-z")
    repo.write(".gitattributes", "*.txt eol=crlf\n*.up filter=upper\n")
    repo.write("a.txt", "one\ntwo\n")
    repo.write("b.up", "shout\n")
    repo.write("plain", "as is\n")
    repo.commit("good")
    objects = repo.git("count-objects", "-v")
    with scratch_worktree(_open(repo), repo.rev("HEAD")) as scratch:
        states = _good_states(scratch, ["a.txt", "b.up", "plain"])
        assert scratch.apply(states) == []  # the checkout wrote exactly these forms
        states["a.txt"] = FileState(b"one\nthree\n", 0o100644)
        states["b.up"] = FileState(b"louder\n", 0o100644)
        assert scratch.apply(states) == ["a.txt", "b.up"]
        assert (scratch.path / "a.txt").read_bytes() == b"one\r\nthree\r\n"
        assert (scratch.path / "b.up").read_bytes() == b"LOUDER\n"
        assert b"+three" in scratch.patch(scratch.good, list(states))
    assert repo.git("count-objects", "-v") == objects, "the blobs went to a throwaway store"


def test_apply_sees_what_a_build_did_to_whole_directories_and_modes(repo: Sandbox) -> None:
    """What a test did is known from the kernel's events (trial/watch.py): a tracked directory
    removed, a diff file's mode changed, new directories of build output."""
    with scratch_worktree(_open(repo), repo.rev("HEAD")) as scratch:
        states = {"edit.txt": FileState(b"after\n", 0o100644)}
        scratch.apply(states)
        shutil.rmtree(scratch.path / "d")
        (scratch.path / "edit.txt").chmod(0o755)
        (scratch.path / "out" / "deep").mkdir(parents=True)
        (scratch.path / "out" / "deep" / "app.o").write_text("object\n")

        assert scratch.apply(states) == ["d/e/gone.txt", "edit.txt"]

        assert not os.access(scratch.path / "edit.txt", os.X_OK)
        assert (scratch.path / "d" / "e" / "gone.txt").is_file()
        assert (scratch.path / "out" / "deep" / "app.o").read_text() == "object\n"
        assert scratch.apply(states) == []


def test_the_watch_names_what_changed_since_the_mark(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("x")
    (tmp_path / ".git").mkdir()
    watch = Watch(tmp_path)
    try:
        watch.mark()
        (tmp_path / "a" / "f.txt").write_text("y")
        (tmp_path / "new" / "deep").mkdir(parents=True)
        (tmp_path / "new" / "deep" / "g").write_text("z")
        (tmp_path / ".git" / "index").write_text("git's own")
        changed = watch.changed()
        assert changed is not None
        assert {"a/f.txt", "new"} <= changed
        assert not any(path.startswith(".git") for path in changed)
        watch.mark()
        assert watch.changed() == set()
        (tmp_path / "new" / "deep" / "h").write_text("w")  # watched since it appeared
        assert watch.changed() == {"new/deep/h"}
    finally:
        watch.close()


def test_the_watch_gives_way_to_git_when_no_file_can_be_opened(tmp_path: Path) -> None:
    """With every file this process may open in use, inotify cannot start ("Too many open
    files"): the watch says it knows nothing (None), so git is asked, and nothing fails."""
    script = """
import errno, os, resource, sys
from pathlib import Path
from ddchange.trial.watch import Watch
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
try:
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError as error:
    assert error.errno == errno.EMFILE, error
watch = Watch(Path(sys.argv[1]))
watch.mark()
print(watch.changed())
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "None\n", "")


def _without_inotify_instances() -> list[str]:
    """A command prefix that runs in a user namespace of its own whose inotify instances are
    all used up (its limit set to 0: inotify_init fails with EMFILE, as when IDEs took all
    128), after checking that they are; [] where user namespaces are not allowed."""
    prefix = ["unshare", "-U", "-r", "sh", "-c"]
    setup = "echo 0 > /proc/sys/user/max_inotify_instances"
    used_up = '! "$0" -c "import inotify_simple; inotify_simple.INotify()" 2>/dev/null'
    script = f'{setup} && {used_up} && exec "$0" "$@"'
    try:
        probe = subprocess.run([*prefix, setup], capture_output=True, check=False)
    except FileNotFoundError:
        return []
    return [*prefix, script, sys.executable] if probe.returncode == 0 else []


def test_a_run_without_inotify_asks_git_what_each_test_changed(tmp_path: Path) -> None:
    """No inotify instance left for this user: the run (two trees at once) falls back to
    asking git, and still puts back the tracked file each test scribbles on."""
    prefix = _without_inotify_instances()
    if not prefix:
        pytest.skip("no user namespaces here to use up inotify instances in")
    repo = init(tmp_path / "repo")
    repo.write("check.sh", "grep -q x notes.txt && exit 125\necho x >> notes.txt\n"
               "grep -q bad a.txt && exit 1\nexit 0\n")  # fmt: skip
    repo.write("notes.txt", "tracked, outside the diff\n")
    repo.write("a.txt", "ok\n")
    repo.write("b.txt", "ok\n")
    repo.commit("good")
    repo.write("a.txt", "bad\n")
    repo.write("b.txt", "more\n")
    repo.commit("bad")
    done = subprocess.run(
        [*prefix, "-m", "ddchange", "HEAD~1..HEAD", "-j", "2", "--", "sh", "check.sh"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "[1] a.txt:1" in done.stdout
    assert "b.txt" not in done.stdout
