"""Tests for the git package (`ddchange.git`), against the real git in tmp_path."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from gitsandbox import ODD_NAMES, Sandbox, Zoo, checkout_state, init

from ddchange import errors, git
from ddchange.diff import read
from ddchange.diff.hunks import FileState

ZERO = "0" * 40


@pytest.fixture
def small(tmp_path: Path) -> Sandbox:
    """main: two commits; v1 an annotated tag on the first."""
    repo = init(tmp_path / "small")
    repo.write("a.txt", "one\n")
    repo.write("sub/b.txt", "two\n")
    repo.write("c.txt", "three\n")
    repo.commit("first")
    repo.git("tag", "-a", "-m", "tag", "v1")
    repo.write("a.txt", "one\nmore\n")
    repo.commit("second")
    return repo


def _objects(repo: Sandbox) -> bytes:
    return repo.git("count-objects", "-v")


# -- environment -----------------------------------------------------------------------------

HOSTILE = {
    "PATH": "/usr/bin",
    "GIT_DIR": "/elsewhere/.git",
    "GIT_PREFIX": "sub/",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES": "/elsewhere/.git/objects",
    "GIT_DIFF_OPTS": "--unified=0",
    "GIT_CONFIG": "/elsewhere/config",
    "GIT_TEST_OPTS": "--verbose",
    "GIT_AUTHOR_NAME": "A U Thor",
    "GIT_CONFIG_PARAMETERS": "'core.autocrlf'='true'",
    "GIT_CONFIG_KEY_0": "core.eol",
    "GIT_TRACE": "1",
    "GIT_SSH_COMMAND": "ssh -i key",
}


def test_environment_of_our_commands_keeps_only_identity_transport_config_and_trace() -> None:
    kept = {"PATH", "GIT_AUTHOR_NAME", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_KEY_0"}
    kept |= {"GIT_TRACE", "GIT_SSH_COMMAND"}
    assert git.environment(HOSTILE) == {name: HOSTILE[name] for name in kept}


def test_environment_of_a_user_command_loses_only_the_redirects() -> None:
    env = git.environment(HOSTILE, keep_settings=True)
    assert env == {name: value for name, value in HOSTILE.items() if name not in git.REDIRECTS}
    assert {"GIT_DIR", "GIT_PREFIX", "GIT_ALTERNATE_OBJECT_DIRECTORIES"}.isdisjoint(env)


def test_environment_defaults_to_our_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_WORK_TREE", "/elsewhere")
    monkeypatch.setenv("DDCHANGE_KEEP", "kept")
    for keep_settings in (False, True):
        env = git.environment(keep_settings=keep_settings)
        assert "GIT_WORK_TREE" not in env
        assert env["DDCHANGE_KEEP"] == "kept"
    assert os.environ["GIT_WORK_TREE"] == "/elsewhere"


# -- open_repo -------------------------------------------------------------------------------


def test_open_repo_searches_parent_directories(small: Sandbox) -> None:
    repo = git.open_repo(small.path / "sub")
    assert Path(repo.git_dir) == small.path / ".git"


@pytest.mark.parametrize("where", ["plain", "missing"])
def test_open_repo_outside_a_repository_is_an_error(tmp_path: Path, where: str) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(errors.NotARepository) as raised:
        git.open_repo(tmp_path / where)
    assert raised.value.path == tmp_path / where


def test_a_bare_repository_works(small: Sandbox, tmp_path: Path) -> None:
    subprocess.run(["git", "clone", "-q", "--bare", small.path, tmp_path / "bare"], check=True)
    repo = git.open_repo(tmp_path / "bare")
    head = git.resolve_commit(repo, "main")
    assert head == small.rev("main")
    (tmp_path / "wt").mkdir()
    git.clone_scratch(repo, tmp_path / "wt", head)
    assert (tmp_path / "wt" / "a.txt").read_text() == "one\nmore\n"


def test_a_linked_worktree_opens_its_repository(small: Sandbox, tmp_path: Path) -> None:
    small.git("worktree", "add", "-q", "--detach", str(tmp_path / "linked"), "HEAD~1")
    repo = git.open_repo(tmp_path / "linked")
    assert git.resolve_commit(repo, "HEAD") == small.rev("HEAD~1")
    assert [e.new_path for e in git.diff_raw(repo, small.rev("HEAD~1"), small.rev("main"))] == [
        "a.txt"
    ]


def test_inherited_git_variables_do_not_redirect_us(
    small: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoy = init(tmp_path / "decoy")
    decoy.write("a.txt", "decoy\n")
    decoy.commit("decoy")
    good, bad, blob = small.rev("HEAD~1"), small.rev("main"), small.rev("main:a.txt")
    for name, value in {
        "GIT_DIR": decoy.path / ".git",
        "GIT_WORK_TREE": decoy.path,
        "GIT_INDEX_FILE": decoy.path / ".git" / "index",
        "GIT_OBJECT_DIRECTORY": decoy.path / ".git" / "objects",
        "GIT_COMMON_DIR": decoy.path / ".git",
        "GIT_DIFF_OPTS": "--unified=0",
    }.items():
        monkeypatch.setenv(name, str(value))
    repo = git.open_repo(small.path)
    assert Path(repo.working_tree_dir or "") == small.path
    assert git.resolve_commit(repo, "main") == bad
    assert git.read_blobs(repo, [blob]) == {blob: b"one\nmore\n"}
    assert "@@ -1 +1,2 @@\n one\n+more\n" in git.diff_patch(repo, good, bad)
    assert os.environ["GIT_DIR"] == str(decoy.path / ".git")  # restored after open_repo


# -- resolve_commit --------------------------------------------------------------------------


@pytest.mark.parametrize("rev", ["main", "HEAD", "HEAD~1", "v1", "v1^{}", "first", "full"])
def test_resolve_commit_names_the_commit(small: Sandbox, rev: str) -> None:
    first = small.rev("HEAD~1")
    spelled = {"first": first[:10], "full": first}.get(rev, rev)
    expected = small.rev(f"{spelled}^{{commit}}")
    assert git.resolve_commit(git.open_repo(small.path), spelled) == expected
    assert len(expected) == 40


@pytest.mark.parametrize(
    "rev", ["", "nope", "blob", "tree", "--all", "-h", "HEAD~1..HEAD", "HEAD\n", "main main"]
)
def test_resolve_commit_refuses_what_is_no_commit(small: Sandbox, rev: str) -> None:
    spelled = {"blob": small.rev("main:a.txt"), "tree": small.rev("main^{tree}")}.get(rev, rev)
    with pytest.raises(errors.UnknownRevision) as raised:
        git.resolve_commit(git.open_repo(small.path), spelled)
    assert raised.value.rev == spelled


def test_resolve_commit_says_why_a_revision_is_no_commit(small: Sandbox, tmp_path: Path) -> None:
    repo = git.open_repo(small.path)

    def refusal(rev: str) -> errors.UnknownRevision:
        with pytest.raises(errors.UnknownRevision) as raised:
            git.resolve_commit(repo, rev)
        return raised.value

    assert refusal("main^{tree}").kind == "tree"
    assert refusal("main:a.txt").kind == "blob"
    assert "no upstream" in refusal("main@{upstream}").complaint
    assert refusal("nope") == errors.UnknownRevision(rev="nope")
    first = small.rev("HEAD~1")
    assert git.resolve_commit(repo, ":/second") == small.rev("HEAD")  # a message search
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", f"file://{small.path}", str(shallow)], check=True
    )
    cut_off = git.open_repo(shallow)
    for rev in ("HEAD~1", first):  # a full object name passes rev-parse --verify unchecked
        with pytest.raises(errors.UnknownRevision) as raised:
            git.resolve_commit(cut_off, rev)
        assert raised.value == errors.UnknownRevision(rev=rev, shallow=True)


# -- diff_raw and diff_patch -----------------------------------------------------------------


def test_diff_raw_reports_every_kind_of_change(zoo: Zoo) -> None:
    entries = {e.new_path: e for e in git.diff_raw(git.open_repo(zoo.repo.path), zoo.good, zoo.bad)}
    blob = zoo.repo.rev
    assert entries["plain.c"] == git.RawEntry(
        status="M",
        old_mode=0o100644,
        new_mode=0o100644,
        old_sha=blob(f"{zoo.good}:plain.c"),
        new_sha=blob(f"{zoo.bad}:plain.c"),
        old_path="plain.c",
        new_path="plain.c",
    )
    assert entries["added.txt"] == git.RawEntry(
        status="A",
        old_mode=0,
        new_mode=0o100644,
        old_sha=ZERO,
        new_sha=blob(f"{zoo.bad}:added.txt"),
        old_path="added.txt",
        new_path="added.txt",
    )
    assert entries["deleted.txt"].status == "D"
    assert entries["deleted.txt"].new_mode == 0
    assert entries["deleted.txt"].new_sha == ZERO
    moved = entries["moved-new.txt"]
    assert (moved.status, moved.old_path, moved.new_path) == ("R", "moved-old.txt", "moved-new.txt")
    assert (entries["becomes-link"].status, entries["becomes-link"].new_mode) == ("T", 0o120000)
    assert (entries["script.sh"].old_mode, entries["script.sh"].new_mode) == (0o100644, 0o100755)
    assert (entries["sub"].old_mode, entries["sub"].new_mode) == (0o160000, 0o160000)
    assert set(ODD_NAMES) <= set(entries)


def test_diff_raw_and_patch_ignore_hostile_configuration(
    zoo: Zoo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = git.open_repo(zoo.repo.path)
    raw, patch = git.diff_raw(repo, zoo.good, zoo.bad), git.diff_patch(repo, zoo.good, zoo.bad)
    (tmp_path / "order").write_text("tool.sh\n*\n")
    (tmp_path / "external").write_text("#!/bin/sh\necho external diff\n")
    (tmp_path / "external").chmod(0o755)
    (tmp_path / "hostile").write_text(
        "[diff]\n noprefix = true\n mnemonicPrefix = true\n context = 9\n renames = copies\n"
        f" external = {tmp_path / 'external'}\n relative = true\n"
        f" orderFile = {tmp_path / 'order'}\n"
        " submodule = log\n interHunkContext = 30\n suppressBlankEmpty = true\n"
        " ignoreSubmodules = all\n"
        "[color]\n ui = always\n diff = always\n"
        "[core]\n quotepath = true\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "hostile"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(tmp_path / "external"))
    monkeypatch.setenv("GIT_DIFF_OPTS", "--unified=7")
    assert git.diff_raw(repo, zoo.good, zoo.bad) == raw
    assert git.diff_patch(repo, zoo.good, zoo.bad) == patch


def test_diff_patch_keeps_prefixes_function_context_and_bytes(zoo: Zoo) -> None:
    patch = git.diff_patch(git.open_repo(zoo.repo.path), zoo.good, zoo.bad)
    assert "diff --git a/plain.c b/plain.c\n" in patch
    assert "@@ -25,7 +25,7 @@ int f2(int x)\n" in patch
    assert "@@ -9,7 +9,7 @@ def area(self):\n" in patch  # the python driver, .gitattributes
    assert "\x1b[" not in patch
    latin1 = "+d\xe9j\xe0 vu\n".encode("latin-1")
    assert latin1 in patch.encode("utf-8", "surrogateescape")


# -- reading objects ---------------------------------------------------------------------------


def test_read_blobs_gives_exact_bytes(zoo: Zoo) -> None:
    repo = git.open_repo(zoo.repo.path)
    names = ["image.bin", "crlf.txt", "latin1.txt", "added-empty", "noeol-lose.txt", "link"]
    shas = {name: zoo.repo.rev(f"{zoo.bad}:{name}") for name in names}
    blobs = git.read_blobs(repo, [*shas.values(), shas["crlf.txt"]])
    assert blobs[shas["image.bin"]] == bytes(range(255, -1, -1)) * 4
    assert blobs[shas["crlf.txt"]] == b"one\r\nTWO\r\nthree\r\n"
    assert blobs[shas["latin1.txt"]] == "caf\xe9\nna\xefve\nd\xe9j\xe0 vu\n".encode("latin-1")
    assert blobs[shas["added-empty"]] == b""
    assert blobs[shas["noeol-lose.txt"]] == b"alpha\nbeta"
    assert blobs[shas["link"]] == b"module.py"
    assert git.read_blobs(repo, []) == {}


@pytest.mark.parametrize("what", ["missing", "tree"])
def test_read_blobs_refuses_what_is_no_blob(small: Sandbox, what: str) -> None:
    sha = {"missing": "1" * 40, "tree": small.rev("main^{tree}")}[what]
    with pytest.raises(errors.GitFailed):
        git.read_blobs(git.open_repo(small.path), [sha])


def test_tree_states_reads_files_symlinks_and_absence(zoo: Zoo) -> None:
    states = read.tree_states(git.open_repo(zoo.repo.path), zoo.bad, ["tool.sh", "link", "gone"])
    assert states == {
        "tool.sh": FileState(b"#!/bin/sh\necho new\n", 0o100755),
        "link": FileState(b"module.py", 0o120000),
        "gone": None,
    }


def test_ls_tree_lists_submodules_and_odd_names(zoo: Zoo) -> None:
    tree = git.ls_tree(git.open_repo(zoo.repo.path), zoo.bad)
    assert tree["sub"].mode == 0o160000
    assert tree["tab\tname.txt"] == git.TreeEntry(
        0o100644, zoo.repo.rev(f"{zoo.bad}:tab\tname.txt")
    )


# -- the scratch repository ------------------------------------------------------------------


def _scratch_at(repo: git.Repo, path: Path, rev: str) -> Path:
    path.mkdir()
    git.clone_scratch(repo, path, rev)
    return path


def test_the_scratch_repository_is_its_own_and_runs_no_hook(small: Sandbox, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    hook = small.path / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(0o755)
    small.git("config", "filter.upper.smudge", "tr a-z A-Z")
    small.git("config", "alias.oops", "!touch oops")
    before = checkout_state(small.path)
    first = small.rev("HEAD~1")
    scratch = Sandbox(_scratch_at(git.open_repo(small.path), tmp_path / "wt", first))
    assert scratch.rev("HEAD") == first
    assert subprocess.run(["git", "-C", scratch.path, "symbolic-ref", "-q", "HEAD"]).returncode
    assert (scratch.path / "a.txt").read_text() == "one\n"
    assert not marker.exists()
    # the tags are there for version tools; the user's branches, remote and other settings not
    assert scratch.git("describe", "--tags").strip() == b"v1"
    assert scratch.git("remote") == b""
    assert scratch.git("config", "filter.upper.smudge").strip() == b"tr a-z A-Z"
    assert b"oops" not in scratch.git("config", "--list", "--local")
    # whatever git commands a test runs there stay there
    scratch.git("tag", "from-the-test")
    scratch.git("branch", "made-by-test")
    scratch.git("notes", "add", "-m", "note")
    scratch.git("config", "user.name", "Test Suite")
    (scratch.path / "a.txt").write_text("stashed\n")
    scratch.git("stash", "-q")
    assert checkout_state(small.path) == before
    assert git.borrowed_objects(scratch.path) == (small.path / ".git" / "objects").resolve()


def test_a_partial_clone_without_goods_blobs_gives_no_incomplete_scratch_tree(
    small: Sandbox, tmp_path: Path
) -> None:
    """A partial clone that never fetched the blobs of the revision: the scratch repository
    cannot be made (git's own `checkout` exits 0 there, with files missing), and the user's
    objects gain nothing."""
    small.git("config", "uploadpack.allowFilter", "true")
    user = tmp_path / "user"
    subprocess.run(
        ["git", "clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{small.path}", user],
        check=True,
    )
    packs = sorted((user / ".git" / "objects" / "pack").iterdir())
    with pytest.raises(errors.GitFailed) as failure:
        _scratch_at(git.open_repo(user), tmp_path / "wt", small.rev("main"))
    assert failure.value.command[-3:] == ("-u", "--reset", small.rev("main"))
    assert sorted((user / ".git" / "objects" / "pack").iterdir()) == packs


def test_modified_files_and_restore_files(small: Sandbox, tmp_path: Path) -> None:
    _scratch_at(git.open_repo(small.path), tmp_path / "wt", small.rev("main"))
    (tmp_path / "wt" / "a.txt").write_text("rebuilt\n")
    (tmp_path / "wt" / "sub" / "b.txt").unlink()
    os.utime(tmp_path / "wt" / "c.txt", (0, 0))  # touched, content unchanged: not modified
    (tmp_path / "wt" / "untracked.o").write_text("object\n")
    assert sorted(git.modified_files(tmp_path / "wt")) == ["a.txt", "sub/b.txt"]
    git.restore_files(tmp_path / "wt", ["a.txt", "sub/b.txt"])
    assert (tmp_path / "wt" / "a.txt").read_text() == "one\nmore\n"
    assert (tmp_path / "wt" / "sub" / "b.txt").read_text() == "two\n"
    assert git.modified_files(tmp_path / "wt") == []


# -- tree_patch --------------------------------------------------------------------------------


def _worktree_at(zoo: Zoo, path: Path, rev: str) -> Path:
    return _scratch_at(git.open_repo(zoo.repo.path), path, rev)


def _changed_paths(zoo: Zoo) -> list[str]:
    raw = git.diff_raw(git.open_repo(zoo.repo.path), zoo.good, zoo.bad)
    return sorted({p for e in raw if e.new_mode != 0o160000 for p in (e.old_path, e.new_path)})


def _present(there: Path, paths: list[str]) -> tuple[list[str], list[str]]:
    """`paths` split into those with a file or symlink at them, and the others (the zoo holds
    no symlinked directory to look beyond)."""
    present = [p for p in paths if os.path.islink(there / p) or (there / p).is_file()]
    return present, sorted(set(paths) - set(present))


def test_tree_patch_applies_to_base_and_leaves_repository_alone(zoo: Zoo, tmp_path: Path) -> None:
    there = _worktree_at(zoo, tmp_path / "bad", zoo.bad)
    (there / "added.txt").write_bytes(b"content no object has yet\n")
    paths = _changed_paths(zoo)
    index = (zoo.repo.path / ".git" / "index").read_bytes()
    scratch_index = Sandbox(there).git("rev-parse", "--git-path", "index").decode().strip()
    scratch_index_bytes = (there / scratch_index).read_bytes()
    objects = _objects(zoo.repo)

    patch = git.tree_patch(there, zoo.good, *_present(there, paths))

    assert _objects(zoo.repo) == objects
    assert (zoo.repo.path / ".git" / "index").read_bytes() == index
    assert (there / scratch_index).read_bytes() == scratch_index_bytes
    assert b"GIT binary patch" in patch
    assert b"rename from moved-old.txt" in patch
    assert "diff --git a/dir with space/ünï cödé.txt".encode() in patch  # readable, unquoted
    target = Sandbox(_worktree_at(zoo, tmp_path / "good", zoo.good))
    target.git("apply", "--index", "--whitespace=nowarn", stdin=patch)
    for path in paths:
        here, want = target.path / path, there / path
        assert os.path.lexists(here) == os.path.lexists(want), path
        if os.path.islink(want):
            assert os.readlink(here) == os.readlink(want), path
        elif want.is_dir():
            assert here.is_dir(), path
        elif want.exists():
            assert here.read_bytes() == want.read_bytes(), path
            assert os.access(here, os.X_OK) == os.access(want, os.X_OK), path


def test_tree_patch_of_unchanged_files_is_empty(zoo: Zoo, tmp_path: Path) -> None:
    there = _worktree_at(zoo, tmp_path / "bad", zoo.bad)
    assert git.tree_patch(there, zoo.bad, *_present(there, _changed_paths(zoo))) == b""


def test_tree_patch_works_when_the_repository_path_holds_a_colon(tmp_path: Path) -> None:
    # The objects directory is passed in GIT_ALTERNATE_OBJECT_DIRECTORIES, a ':'-separated list.
    repo = init(tmp_path / "odd:path")
    repo.write("a.txt", "one\n")
    base = repo.commit()
    (repo.path / "a.txt").write_text("two\n")
    patch = git.tree_patch(repo.path, base, ["a.txt"], [])
    assert b"-one\n+two\n" in patch
