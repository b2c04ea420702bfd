"""Hostile history: commits whose trees git's own checkout refuses, crafted with git's plumbing.

A plain `git fetch` does not check tree entries, so a contributor's branch can hold an entry
named `..`, `.git` (or `.GIT`, `.git.`, `git~1`, `.g\u200cit`: what NTFS or HFS+ read as
`.git`), a symlink with a path beneath it, or odd modes. `git mktree` rejects some of these
names; `git hash-object -t tree --literally` writes them all. Each history here is run through
the real `ddchange` command, with the scratch tree's temporary directory beside a victim
directory that a `..` entry reaches.

The property, for every history: nothing outside the scratch tree changes (the victim
directory, and the user's repository with its .git, byte for byte), no command planted in a
crafted `.git/config` runs, and ddchange either gives the right answer or refuses in one line
with exit 2, naming the commit. git itself is the judge of which trees must be refused: a tree
that `git read-tree` refuses with the NTFS and HFS+ protections on.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from endtoend import Run, found, refused
from gitsandbox import Sandbox, init
from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from ddchange import errors, git
from ddchange.cli.messages import explain
from ddchange.diff import safety
from ddchange.diff.hunks import FileState
from ddchange.trial.worktree import scratch_worktree

TEST = b"grep -q BROKEN a.txt && exit 1; exit 0\n"
TREE, BLOB, EXE, LINK, GITLINK = "40000", "100644", "100755", "120000", "160000"

Entry = tuple[str, bytes, str]  # mode, name, object name


def blob(repo: Sandbox, data: bytes) -> str:
    return repo.git("hash-object", "-w", "--stdin", stdin=data).decode().strip()


def tree(repo: Sandbox, entries: Sequence[Entry]) -> str:
    """A tree object with exactly `entries`, whatever their names: git does not check them."""

    def order(entry: Entry) -> bytes:  # git's order: a tree sorts as if its name ended in "/"
        return entry[1] + (b"/" if entry[0] == TREE else b"")

    data = b"".join(
        mode.encode() + b" " + name + b"\0" + bytes.fromhex(sha)
        for mode, name, sha in sorted(entries, key=order)
    )
    written = repo.git("hash-object", "-w", "-t", "tree", "--literally", "--stdin", stdin=data)
    return written.decode().strip()


def commit(repo: Sandbox, root: str, parent: str | None, message: str) -> str:
    parents = ["-p", parent] if parent else []
    return repo.git("commit-tree", root, *parents, "-m", message).decode().strip()


@dataclass(frozen=True)
class World:
    """A user's repository, a victim directory beside it, and the temporary directory that
    ddchange's scratch trees go to: `tmp/ddchange-scratch-…/../../victim` is the victim."""

    repo: Sandbox
    victim: Path
    tmp: Path
    marker: Path  # what a planted core.fsmonitor command would create


def world(root: Path) -> World:
    victim = root / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "secret.txt").write_text("secret\n")
    (victim / "sub" / "notes.txt").write_text("notes\n")
    (root / "tmp").mkdir()
    return World(init(root / "repo"), victim, root / "tmp", root / "PLANTED")


def history(
    w: World, good_extra: Sequence[Entry], bad_extra: Sequence[Entry], test: bytes = TEST
) -> tuple[str, str]:
    """GOOD: test.sh and a.txt; BAD: a.txt broken (the culprit for TEST). Each with its extra
    entries at the root; tagged good and bad."""
    repo = w.repo
    script = BLOB, b"test.sh", blob(repo, test)
    a_good, a_bad = (BLOB, b"a.txt", blob(repo, b"a\n")), (BLOB, b"a.txt", blob(repo, b"BROKEN\n"))
    good = commit(repo, tree(repo, [script, a_good, *good_extra]), None, "good")
    bad = commit(repo, tree(repo, [script, a_bad, *bad_extra]), good, "bad")
    repo.git("update-ref", "refs/tags/good", good)
    repo.git("update-ref", "refs/tags/bad", bad)
    repo.git("update-ref", "refs/heads/main", good)  # the clone of the scratch tree starts here
    return good, bad


def snapshot(root: Path, *, leave_out: str = "") -> dict[str, tuple[int, int, bytes]]:
    """Every file, directory and symlink under `root` (the .git of a repository too): mode,
    modification time (of files but objects), and bytes or link target. `leave_out`: a
    directory that is not compared (the journal ddchange keeps in the user's .git, which a
    run that searches writes)."""
    found = {}
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = [d for d in subdirectories if os.path.join(directory, d) != leave_out]
        for name in [*subdirectories, *names]:
            full = os.path.join(directory, name)
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                data = os.readlink(os.fsencode(full))
            elif stat.S_ISREG(info.st_mode):
                data = Path(full).read_bytes()
            else:  # a directory: its time changes with its entries (the journal's, in .git)
                found[os.path.relpath(full, root)] = (info.st_mode, 0, b"")
                continue
            # git freshens an object it is asked to write and finds, also in the user's
            # objects that the scratch repository borrows: only the object's time changes.
            name = os.path.relpath(full, root)
            fresh = name.startswith(".git/objects/")
            found[name] = (info.st_mode, 0 if fresh else info.st_mtime_ns, data)
    return found


def git_refuses(repo: Sandbox, rev: str) -> bool:
    """Whether git's checkout refuses the tree of `rev` (read-tree runs git's verify_path)."""
    with tempfile.TemporaryDirectory() as place:
        done = subprocess.run(
            [
                "git",
                "-c",
                "core.protectNTFS=true",
                "-c",
                "core.protectHFS=true",
                "read-tree",
                f"--index-output={place}/index",
                rev,
            ],  # fmt: skip
            cwd=repo.path,
            capture_output=True,
        )
    return done.returncode != 0


def run_guarded(w: World, *options: str) -> Run:
    """`ddchange good..bad -- sh test.sh` with the property's checks around it. (Not
    `endtoend.ddchange`: its `git status` in the user's repository fails on some crafted
    trees, which is git's business, not ddchange's.)"""
    journal = os.fspath(w.repo.path / ".git" / "ddchange")
    before = snapshot(w.repo.path, leave_out=journal), snapshot(w.victim)
    report = w.tmp.parent / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ddchange",
            "--json",
            os.fspath(report),
            *options,
            "good..bad",
            "--",
            "sh",
            "test.sh",
        ],  # fmt: skip
        cwd=w.repo.path,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        env={**os.environ, "TMPDIR": os.fspath(w.tmp)},
        timeout=300,
    )
    assert "Traceback" not in done.stderr, done.stderr
    after = snapshot(w.repo.path, leave_out=journal), snapshot(w.victim)
    changed = {p for b, a in zip(before, after, strict=True) for p in b | a if b.get(p) != a.get(p)}
    assert after == before, changed
    assert not w.marker.exists(), "a command planted in a crafted .git/config ran"
    assert not list(w.tmp.glob("ddchange-scratch-*")), "a scratch tree was left behind"
    run = Run(done.returncode, done.stdout, done.stderr)
    if report.exists():
        run.report = json.loads(report.read_text())
        report.unlink()
    return run


def assert_refused(run: Run, sha: str, message: str = "holds the path") -> None:
    """Refused in one line, exit 2, naming the commit `sha`."""
    refused(run, 2, message)
    assert sha[:12] in run.stderr


# -- the two findings, as they were reported ---------------------------------------------------


def dotdot_entry(w: World, leaf: Entry) -> Entry:
    """An entry `..` holding `..`/victim/`leaf`: from the scratch tree, the victim's file."""
    repo = w.repo
    inner = tree(repo, [(TREE, b"victim", tree(repo, [leaf]))])
    return TREE, b"..", tree(repo, [(TREE, b"..", inner)])


@pytest.mark.parametrize("kind", ["blob", "symlink"])
def test_a_dotdot_entry_in_bad_touches_nothing_outside(kind: str, tmp_path: Path) -> None:
    w = world(tmp_path)
    data = os.fsencode(w.victim / "planted") if kind == "symlink" else b"pwned\n"
    leaf = (LINK if kind == "symlink" else BLOB), b"secret.txt", blob(w.repo, data)
    # BAD adds it: GOOD's pre-flight would delete the victim's file, BAD's would overwrite it.
    _, bad = history(w, [], [dotdot_entry(w, leaf)])
    run = run_guarded(w)
    assert_refused(run, bad)
    assert "'../../victim/secret.txt', with a '..' component" in run.stderr


@pytest.mark.parametrize("side", ["bad", "both"])
def test_a_dotgit_config_entry_never_reaches_the_scratch_repository(
    side: str, tmp_path: Path
) -> None:
    """`.git/config` with a core.fsmonitor command: added by BAD, it would be written over the
    scratch repository's config, and the test's next `git status` would run the command. In
    GOOD too, git's own checkout of GOOD would refuse it, less clearly."""
    w = world(tmp_path)
    config = f"[core]\n\tfsmonitor = touch '{w.marker}'\n".encode()
    dotgit = TREE, b".git", tree(w.repo, [(BLOB, b"config", blob(w.repo, config))])
    good, bad = history(w, [dotgit] if side == "both" else [], [dotgit], b"git status; " + TEST)
    assert_refused(run_guarded(w), good if side == "both" else bad)


@pytest.mark.parametrize("strategy", ["diff", "auto"])
def test_a_dotdot_entry_only_between_good_and_bad(strategy: str, tmp_path: Path) -> None:
    """A commit between GOOD and BAD adds the `..` entry, BAD removes it again: the diff never
    shows it, but the search by history applies that commit's tree. It is refused before the
    first test; the search by diff never writes it and finds the answer."""
    w = world(tmp_path)
    repo = w.repo
    leaf = BLOB, b"secret.txt", blob(repo, b"pwned\n")
    good, bad = history(w, [], [])
    middle = commit(repo, tree(repo, [*ls(repo, good), dotdot_entry(w, leaf)]), good, "middle")
    bad = commit(repo, tree(repo, ls(repo, bad)), middle, "bad")
    repo.git("update-ref", "refs/tags/bad", bad)
    run = run_guarded(w, "--strategy", strategy)
    if strategy == "auto":
        assert_refused(run, middle)
    else:
        assert found(run) == [("a.txt", "text")]


def ls(repo: Sandbox, rev: str) -> list[Entry]:
    """The entries of the root tree of `rev`."""
    entries = []
    for record in filter(None, repo.git("ls-tree", "-z", rev).split(b"\0")):
        meta, name = record.split(b"\t", 1)
        mode, _type, sha = meta.decode().split(" ")
        entries.append((mode.lstrip("0"), name, sha))
    return entries


# -- generated names and modes --------------------------------------------------------------

# Ignored by HFS+ when it compares names (git's list in utf8.c).
HFS_IGNORED = "\u200c\u200d\u200e\u200f\u202a\u202e\u206a\u206f\ufeff"


@st.composite
def hostile_names(draw: st.DrawFn) -> bytes:
    """Names git refuses and names a hair away from them: `..`, `.`, empty, `.git` and
    `git~1` in any case, with HFS+-ignored code points, NTFS trailing dots and spaces, an
    alternate data stream, a backslash; and plain odd names."""
    stem = draw(st.sampled_from(["..", ".", "", ".git", ".git", "git~1", ".gitmodules", ".gi"]))
    stem = "".join(c.upper() if draw(st.booleans()) else c for c in stem)
    if stem and draw(st.booleans()):
        at = draw(st.integers(0, len(stem)))
        stem = stem[:at] + draw(st.sampled_from(HFS_IGNORED)) + stem[at:]
    suffix = draw(st.sampled_from(["", "", "", ".", " ", ". .", "::$INDEX_ALLOCATION", "x", "~2"]))
    prefix = draw(st.sampled_from(["", "", "a\\", "b/"]))
    name = prefix + stem + suffix
    odd = st.text(st.characters(blacklist_characters="\0/", codec="utf-8"), max_size=5)
    return (draw(odd) if draw(st.integers(0, 5)) == 0 else name).encode("utf-8", "surrogatepass")


@given(
    name=hostile_names(),
    mode=st.sampled_from([TREE, BLOB, EXE, LINK, "100664", GITLINK]),
    side=st.sampled_from(["good", "bad", "both"]),
)
@example(name=b"", mode=BLOB, side="good")  # git cannot even list it
@example(name=b"GIT~1", mode=TREE, side="bad")
@example(name=b".gitx", mode=TREE, side="bad")  # fine: searched
@example(name="\u200c.git".encode(), mode=TREE, side="both")  # HFS+, in GOOD's unchanged part
@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_crafted_entry_is_refused_as_git_refuses_it_or_searched_right(
    name: bytes, mode: str, side: str, tmp_path: Path
) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    w = world(root)
    repo = w.repo
    config = f"[core]\n\tfsmonitor = touch '{w.marker}'\n".encode()
    leaf = BLOB, b"secret.txt", blob(repo, b"pwned\n")
    if mode == TREE:  # `name`/config, and `name`/`name`/victim/secret.txt
        inner = tree(repo, [(TREE, b"victim", tree(repo, [leaf]))])
        sha = tree(repo, [(BLOB, b"config", blob(repo, config)), (TREE, name, inner)])
    elif mode == GITLINK:
        sha = repo.git("hash-object", "--stdin", stdin=b"x").decode().strip()  # need not exist
    else:
        sha = blob(repo, os.fsencode(w.victim) if mode == LINK else config)
    entry = mode, name, sha
    good, bad = history(w, [entry] if side != "bad" else [], [entry] if side != "good" else [])
    run = run_guarded(w)
    for sha in (good, bad):
        if git_refuses(repo, sha):  # a path git refuses, or a tree git cannot read at all
            event(f"refused, exit {run.returncode}")
            assert_refused(run, sha, message="")
            break
    else:
        event(f"searched, exit {run.returncode}")
        assert found(run) == [("a.txt", "text")]


@given(name=hostile_names(), mode=st.sampled_from([TREE, BLOB, EXE, LINK, GITLINK]))
@example(name=".g\u200cit".encode(), mode=TREE)  # HFS+
@example(name="\ufeff.GIT".encode(), mode=BLOB)
@example(name=b"GIT~1. ", mode=TREE)  # NTFS
@example(name=b".git::$INDEX_ALLOCATION", mode=TREE)
@example(name=b"a\\.git", mode=BLOB)
@example(name=b".gitmodules.", mode=LINK)
@example(name=b".gitmodules", mode=BLOB)  # a file of that name is fine
@example(name=b".gitx", mode=TREE)
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_path_rule_is_git_s(name: bytes, mode: str, tmp_path: Path) -> None:
    """`safety.refusal`, on the paths `git ls-tree -r` lists, refuses a tree exactly when
    `git read-tree` does (with the NTFS and HFS+ protections on)."""
    repo = Sandbox(tmp_path / "rule")
    if not repo.path.exists():
        init(repo.path)
    inner = tree(repo, [(BLOB, b"f", blob(repo, b"x"))])
    sha = {TREE: inner, GITLINK: inner}.get(mode) or blob(repo, b"x")
    root = commit(
        repo, tree(repo, [(mode, name, sha), (BLOB, b"plain", blob(repo, b"y"))]), None, "c"
    )
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "-z", root], cwd=repo.path, capture_output=True
    )
    assume(listed.returncode == 0)  # an empty name: git cannot list it (see UnreadableTrees)
    paths = [record.split(b"\t", 1) for record in filter(None, listed.stdout.split(b"\0"))]
    refused = [
        safety.refusal(os.fsdecode(path), int(meta.split(b" ")[0], 8)) for meta, path in paths
    ]
    verdict = git_refuses(repo, root)
    event("git refuses" if verdict else "git checks it out")
    assert any(refused) == verdict, refused


# -- a symlink, and a path beneath it ------------------------------------------------------


def test_a_symlink_and_a_directory_of_one_name_touch_nothing_outside(tmp_path: Path) -> None:
    """One tree with two entries `link`: a symlink to the victim, and a directory holding
    secret.txt. A checkout that wrote the symlink first and then link/secret.txt through it
    would overwrite the victim's file."""
    w = world(tmp_path)
    repo = w.repo
    inner = tree(repo, [(BLOB, b"secret.txt", blob(repo, b"pwned\n"))])
    target = blob(repo, os.fsencode(w.victim))
    _, bad = history(w, [], [(LINK, b"link", target), (TREE, b"link", inner)])
    run = run_guarded(w)
    assert run.returncode in (0, 1, 2), run.stderr
    if run.returncode == 2:
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_a_symlink_in_bad_where_good_has_a_directory_leaves_the_victim(tmp_path: Path) -> None:
    """GOOD has victim-named files in a directory `link`; BAD makes `link` a symlink to the
    victim. No mix of the two that the search applies writes through the symlink."""
    w = world(tmp_path)
    repo = w.repo
    notes = tree(repo, [(BLOB, b"notes.txt", blob(repo, b"x\n"))])
    inner = tree(repo, [(BLOB, b"secret.txt", blob(repo, b"pwned\n")), (TREE, b"sub", notes)])
    target = blob(repo, os.fsencode(w.victim))
    history(w, [(TREE, b"link", inner)], [(LINK, b"link", target)])
    assert found(run_guarded(w)) == [("a.txt", "text")]


# -- finding 5: a directory symlink in one revision, a real directory in the other -----------


@pytest.mark.parametrize(
    ("good_kind", "test"),
    [
        ("directory", TEST),
        ("directory", b"test -L d && exit 1; exit 0\n"),
        ("symlink", TEST),
        ("symlink", b"test -L d || exit 1; exit 0\n"),
    ],
)
def test_a_directory_that_becomes_a_symlink_or_back(
    good_kind: str, test: bytes, tmp_path: Path
) -> None:
    """`d` is a symlink to `real` on one side and a directory with the same files on the
    other; the test fails on a.txt or on `d`. The answer's patch makes GOOD fail, and the
    answer is a.txt alone where the test looks at nothing else."""
    w = world(tmp_path)
    repo = w.repo
    files = [(BLOB, f"f{n}".encode(), blob(repo, f"file {n}\n".encode())) for n in range(3)]
    real = [(TREE, b"real", tree(repo, files))]
    directory, link = (TREE, b"d", tree(repo, files)), (LINK, b"d", blob(repo, b"real"))
    good_d, bad_d = (directory, link) if good_kind == "directory" else (link, directory)
    history(w, [good_d, *real], [bad_d, *real], test)
    patch = tmp_path / "answer.patch"
    culprits = found(run_guarded(w, "--patch", os.fspath(patch)))
    if test == TEST:
        assert culprits == [("a.txt", "text")]
    else:
        assert ("d", "add" if good_kind == "directory" else "delete") in culprits
    check = Sandbox(tmp_path / "check")
    repo.git("worktree", "add", "-q", "--detach", os.fspath(check.path), "good")
    assert subprocess.run(["sh", "test.sh"], cwd=check.path).returncode == 0
    check.git("apply", os.fspath(patch))
    assert subprocess.run(["sh", "test.sh"], cwd=check.path).returncode == 1


# -- the scratch tree's own refusal -----------------------------------------------------------


def test_the_scratch_tree_refuses_a_path_out_of_it(tmp_path: Path) -> None:
    """Whatever reaches `Scratch.apply`, a `..` or `.git` path is written nowhere, and nothing
    is written, removed or replaced through a symlink in the tree."""
    w = world(tmp_path)
    history(w, [], [])
    repo = git.open_repo(w.repo.path)
    tempfile.tempdir = os.fspath(w.tmp)
    try:
        with scratch_worktree(repo, w.repo.rev("good")) as scratch:
            before = snapshot(w.victim), snapshot(scratch.path / ".git")
            for path in ("../../victim/secret.txt", ".git/config", "x/../../../victim/sub"):
                for state in (None, FileState(b"pwned\n", 0o100644)):
                    with pytest.raises(errors.UnsafeWrite) as refusal:
                        scratch.apply({path: state})
                    message = explain(refusal.value)
                    assert (refusal.value.exit, len(message.splitlines())) == (3, 1)  # ours to fix
            assert (snapshot(w.victim), snapshot(scratch.path / ".git")) == before
            # A symlink a test left in the tree: a path beneath it is written in a directory
            # that takes its place, and a removal beneath it removes nothing.
            (scratch.path / "d").symlink_to(w.victim)
            scratch.apply({"d/secret.txt": None})
            assert (scratch.path / "d").is_symlink()
            scratch.apply({"d/secret.txt": FileState(b"pwned\n", 0o100644)})
            assert not (scratch.path / "d").is_symlink()
            assert (scratch.path / "d" / "secret.txt").read_bytes() == b"pwned\n"
            (scratch.path / "d" / "secret.txt").unlink()
            (scratch.path / "d").rmdir()
            (scratch.path / "d").symlink_to(w.victim / "secret.txt")
            scratch.apply({"d": FileState(b"pwned\n", 0o100644)})  # replaces the symlink
            assert (scratch.path / "d").read_bytes() == b"pwned\n"
            assert snapshot(w.victim) == before[0]
    finally:
        tempfile.tempdir = None
