"""Reading the user's repository: revisions, the diff, blobs, trees, history and blame.

Every function here only reads objects and refs; none writes to the repository or its checkout.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ddchange import errors
from ddchange.git.command import DIFF_PINS, environment, in_repo, nul_split, reading, run

if TYPE_CHECKING:
    from git import Repo


@dataclass(frozen=True, kw_only=True)
class RawEntry:
    """One path's change between two trees, as `git diff --raw` reports it."""

    status: str  # A, D, M, R or T (no C: we ask for renames, not copies)
    old_mode: int  # 0 where the path is absent on that side
    new_mode: int
    old_sha: str  # all zeros where the path is absent on that side
    new_sha: str
    old_path: str  # for A and D the one path is both old_path and new_path
    new_path: str


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree listing: mode and object name."""

    mode: int
    sha: str


@contextmanager
def _without_git_env() -> Iterator[None]:
    """Hide inherited GIT_* variables from GitPython, which reads GIT_WORK_TREE, GIT_COMMON_DIR
    and GIT_OBJECT_DIRECTORY from os.environ while it locates a repository."""
    hidden = {name: os.environ.pop(name) for name in os.environ.keys() - environment().keys()}
    try:
        yield
    finally:
        os.environ.update(hidden)


def open_repo(path: Path) -> Repo:
    """The repository containing `path`, searching parent directories.

    Bare repositories are fine: we only read objects and add a separate scratch work tree.
    """
    import git  # GitPython, on first use: commands that never open a repository start faster

    with _without_git_env():
        try:
            return git.Repo(path, search_parent_directories=True)
        except git.NoSuchPathError:
            raise errors.NotARepository(path, missing=True) from None
        except git.InvalidGitRepositoryError:
            raise errors.NotARepository(path) from None


def common_dir_at(path: Path) -> Path:
    """The git directory shared by all work trees of the repository containing `path`, asked
    of git itself, without opening the repository (GitPython): for commands that only read
    ddchange's own state there (`ddchange log`)."""
    if not path.is_dir():
        raise errors.NotARepository(path, missing=True)
    try:
        out = run(path, "rev-parse", "--git-common-dir")
    except errors.GitFailed:
        raise errors.NotARepository(path) from None
    return (path / os.fsdecode(out.rstrip(b"\n"))).resolve()  # relative to `path`, or not


def resolve_commit(repo: Repo, rev: str) -> str:
    """The full object name of the commit `rev` names (tags peeled); UnknownRevision if none.

    Two steps, because a suffix like ^{commit} cannot be added to every revision: ":/fix" looks
    for a commit message, and ":/fix^{commit}" would look for that text.
    """
    name = _verify(repo, rev)
    commit = None if name is None else _verify(repo, f"{name}^{{commit}}")  # peels tags
    if commit is not None:
        return commit
    # A full object name passes --verify unchecked, also when the object is not there (cut
    # off by a shallow clone): only its type tells.
    kind = None if name is None else _object_type(repo, name)
    if kind is None:
        raise errors.UnknownRevision(rev=rev, shallow=_is_shallow(repo))
    raise errors.UnknownRevision(rev=rev, kind=kind)


def _verify(repo: Repo, rev: str) -> str | None:
    """The one object `rev` names, or None. UnknownRevision with git's complaint where git
    rejects the revision outright ("no upstream configured", a malformed @{...})."""
    # --end-of-options keeps a rev like "--all" from being read as an option; --verify insists
    # on exactly one object, and --quiet turns "no such object" into a silent exit 1.
    try:
        out = in_repo(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", rev)
    except errors.GitFailed as failure:
        if failure.returncode == 1:
            return None
        complaint = failure.stderr.strip().removeprefix("fatal: ").splitlines()
        raise errors.UnknownRevision(rev=rev, complaint=complaint[0] if complaint else "") from None
    return out.decode("ascii").strip()


def _is_shallow(repo: Repo) -> bool:
    return in_repo(repo, "rev-parse", "--is-shallow-repository").strip() == b"true"


def _object_type(repo: Repo, name: str) -> str | None:
    """The type of object `name` ("commit", "tree", ...); None if the repository lacks it."""
    try:
        return in_repo(repo, "cat-file", "-t", name).decode("ascii").strip()
    except errors.GitFailed:
        return None


def diff_raw(repo: Repo, good: str, bad: str) -> list[RawEntry]:
    """Every path that differs between the commits `good` and `bad`, in git's order."""
    out = in_repo(repo, "diff", "--raw", "-z", "--no-abbrev", *DIFF_PINS, good, bad, "--")
    return _parse_raw(out)


def _parse_raw(out: bytes) -> list[RawEntry]:
    fields = iter(out.split(b"\0"))
    entries = []
    for meta in fields:
        if not meta:
            break
        entries.append(_raw_entry(meta, fields))
    return entries


def _raw_entry(meta: bytes, fields: Iterator[bytes]) -> RawEntry:
    # Records are ":old_mode new_mode old_sha new_sha status" NUL path NUL, with a second path
    # for renames. The status carries a similarity score after the letter (R100).
    old_mode, new_mode, old_sha, new_sha, status = meta[1:].decode("ascii").split(" ")
    old_path = os.fsdecode(next(fields))
    new_path = os.fsdecode(next(fields)) if status[0] in "RC" else old_path
    return RawEntry(
        status=status[0],
        old_mode=int(old_mode, 8),
        new_mode=int(new_mode, 8),
        old_sha=old_sha,
        new_sha=new_sha,
        old_path=old_path,
        new_path=new_path,
    )


def first_parent_changes(repo: Repo, good: str, bad: str) -> list[tuple[str, RawEntry]]:
    """What each commit of the first-parent history in good..bad changes against its first
    parent, with that commit's full object name: every tree `first_parents` lists holds
    GOOD's paths and these."""
    out = in_repo(repo, "log", "--first-parent", "-m", "--raw", "-z", "--no-abbrev",
                  "--no-renames", "--format=%H", f"{good}..{bad}", "--")  # fmt: skip
    # Each commit is its name NUL, then its records, each starting with a newline.
    changes, commit = [], ""
    fields = iter(out.split(b"\0"))
    for field in fields:
        meta = field.lstrip(b"\n")
        if meta.startswith(b":"):
            changes.append((commit, _raw_entry(meta, fields)))
        elif meta:
            commit = meta.decode("ascii")
    return changes


def diff_patch(repo: Repo, good: str, bad: str) -> str:
    """The patch from `good` to `bad` with git's own hunks and function-context headers.

    Decoded as UTF-8 with surrogateescape: non-UTF-8 file contents survive and can be encoded
    back to the exact bytes.
    """
    # diff.suppressBlankEmpty would print an empty context line as "" instead of " ".
    out = in_repo(
        repo,
        *("-c", "diff.suppressBlankEmpty=false"),
        *("diff", "-p", "-U3", *DIFF_PINS, good, bad, "--"),
    )
    return out.decode("utf-8", "surrogateescape")


# A hunk header of `git diff -U0`: where the old and the new lines start, and how many (1 where
# the count is left out).
_HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)

Span = tuple[int, int, int, int]  # a hunk's old start, old lines, new start, new lines


def line_hunks(repo: Repo, old: bytes, new: bytes) -> list[Span]:
    """The hunks of `git diff -U0` from the text `old` to the text `new`, top to bottom, as
    the user's git aligns their lines (its diff algorithm, its heuristics): what a patch of
    `new` shows; none where git finds either binary. The two blobs go to a throwaway
    object directory, never to the repository's."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ddchange-objects-") as objects:
        shas = [
            in_repo(repo, "hash-object", "-w", "--stdin", stdin=text, objects=Path(objects))
            .decode("ascii")
            .strip()
            for text in (old, new)
        ]
        out = in_repo(repo, "diff", "-U0", *DIFF_PINS, *shas, objects=Path(objects))
    return [(int(a), int(b or 1), int(c), int(d or 1)) for a, b, c, d in _HUNK_HEADER.findall(out)]


def read_blobs(repo: Repo, shas: Iterable[str]) -> dict[str, bytes]:
    """The exact bytes of each blob, all read by one `git cat-file --batch` process.

    We do not use GitPython's persistent cat-file: it inherits os.environ (and with it GIT_DIR
    or GIT_OBJECT_DIRECTORY), and its processes outlive the call.
    """
    wanted = sorted(set(shas))
    if not wanted:
        return {}
    request = "".join(f"{sha}\n" for sha in wanted).encode("ascii")
    return reading(repo, ("cat-file", "--batch"), request, lambda out: _read_batch(out, wanted))


def _read_batch(out: IO[bytes], wanted: list[str]) -> dict[str, bytes]:
    """Each answer is "<sha> <type> <size>" LF <content> LF, or "<sha> missing" LF; every
    blob is read straight into its own bytes, never the whole output at once."""
    blobs = {}
    for sha in wanted:
        header = out.readline().decode("ascii").split(" ")
        if header[1:2] != ["blob"]:
            raise errors.GitFailed(("git", "cat-file", "--batch"), 0, f"not a blob: {sha}")
        size = int(header[2])
        blobs[sha] = out.read(size)
        out.read(1)
    return blobs


def object_namer(repo: Repo) -> Callable[[Sequence[bytes | memoryview]], str]:
    """How git names a blob in this repository (`git hash-object`), given its content as
    consecutive pieces (never joined): SHA-1, or SHA-256 where the repository says so
    (extensions.objectFormat)."""
    try:
        kind = in_repo(repo, "config", "extensions.objectFormat").decode().strip()
    except errors.GitFailed:
        kind = "sha1"  # not set

    import hashlib

    def name(pieces: Sequence[bytes | memoryview]) -> str:
        digest = hashlib.new(kind or "sha1")
        digest.update(b"blob %d\0" % sum(map(len, pieces)))
        for piece in pieces:
            digest.update(piece)
        return digest.hexdigest()

    return name


def ls_tree(repo: Repo, rev: str) -> dict[str, TreeEntry]:
    """Every file, symlink and submodule in the tree of `rev`, by path."""
    out = in_repo(repo, "ls-tree", "-r", "-z", rev)
    entries = {}
    for record in nul_split(out):
        meta, path = record.split("\t", 1)
        mode, _type, sha = meta.split(" ")
        entries[path] = TreeEntry(int(mode, 8), sha)
    return entries


def commits(repo: Repo, good: str, bad: str) -> list[str]:
    """The commits in good..bad, oldest first (parents before children)."""
    out = in_repo(repo, "rev-list", "--reverse", "--topo-order", f"{good}..{bad}", "--")
    return out.decode().split()


# A full object name: 40 hex digits in a SHA-1 repository, 64 in a SHA-256 one.
_OBJECT_NAME = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


def blame(
    repo: Repo, rev: str, path: str, lines: Iterable[int], *, reverse_from: str | None = None
) -> dict[int, str]:
    """For each of `lines` (1-based) of `path` at `rev`, the commit that last changed it. Only
    those lines are blamed (`-L`), so a small change in a huge file costs little.

    With `reverse_from` (a commit older than `rev`), the lines are those of `path` at
    `reverse_from`, and each gets the last commit up to `rev` in which it still existed
    (`git blame --reverse`): the line was removed by a child of that commit.
    """
    spans = [arg for first, last in _ranges(lines) for arg in ("-L", f"{first},{last}")]
    if not spans:
        return {}
    where = [f"{reverse_from}..{rev}", "--reverse"] if reverse_from else [rev]
    out = in_repo(repo, "blame", "--porcelain", *spans, *where, "--", path)
    # Porcelain: a line "<sha> <orig> <final> [<count>]" opens each blamed line; the line's own
    # text follows after a tab. Only the header lines start with an object name and a space.
    found: dict[int, str] = {}
    for line in out.split(b"\n"):
        fields = line.split(b" ")
        if len(fields) >= 3 and _OBJECT_NAME.fullmatch(fields[0]) and fields[2].isdigit():
            found[int(fields[2])] = fields[0].decode()
    return found


def _ranges(lines: Iterable[int]) -> list[tuple[int, int]]:
    """`lines` as runs of consecutive numbers, (first, last) each."""
    runs: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        if runs and line == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], line)
        else:
            runs.append((line, line))
    return runs


def changed_matching(repo: Repo, good: str, bad: str, pathspec: str, within: Path) -> set[str]:
    """The paths changed between `good` and `bad` that git's `pathspec` matches (globs and
    magic such as `:(exclude)`; a rename counts on either side: no rename detection), as paths
    from the top. The pathspec is relative to the directory `within`, as the user's own git
    reads it there."""
    args = ("diff", "--name-only", "-z", "--no-relative", "--no-renames", good, bad, "--", pathspec)
    return set(nul_split(in_repo(repo, *args, within=within)))


def path_commits(repo: Repo, good: str, bad: str, paths: Iterable[str]) -> list[str]:
    """The commits in good..bad that touched any of `paths`, newest first."""
    out = in_repo(repo, "log", "--format=%H", f"{good}..{bad}", "--", *paths)
    return out.decode().split()


def pickaxe(repo: Repo, good: str, bad: str, text: str, paths: Iterable[str]) -> list[str]:
    """The non-merge commits in good..bad that changed how often `text` occurs in any of
    `paths` (`git log -S`, a fixed string), newest first."""
    out = in_repo(
        repo, "log", "--no-merges", "--format=%H", f"-S{text}", f"{good}..{bad}", "--", *paths
    )
    return out.decode().split()


def first_changer(repo: Repo, since: str, bad: str, paths: Iterable[str]) -> str | None:
    """The oldest commit on the ancestry path since..bad that touched any of `paths`: the
    child of `since` (or a later descendant) that changed them."""
    out = in_repo(
        repo, "log", "--reverse", "--ancestry-path", "--format=%H", f"{since}..{bad}", "--", *paths
    )
    return next(iter(out.decode().split()), None)


def first_parents(repo: Repo, good: str, bad: str) -> list[str]:
    """The first-parent history from `good` (excluded) to `bad`, oldest first: the commits
    `git bisect --first-parent` tests, each a state the main line really was in."""
    out = in_repo(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}", "--")
    return out.decode().split()


@dataclass(frozen=True, kw_only=True)
class CommitInfo:
    """Who made a commit, when, and why: what a report says about it."""

    sha: str
    author: str  # "Name <email>"
    date: str  # the author date, ISO 8601 with its offset
    subject: str
    parents: tuple[str, ...]


def commit_infos(repo: Repo, shas: Iterable[str]) -> dict[str, CommitInfo]:
    """Author, date, subject and parents of each commit, from one `git log --no-walk`."""
    wanted = sorted(set(shas))
    if not wanted:
        return {}
    fields = "%H%x00%an <%ae>%x00%aI%x00%s%x00%P%x00"
    out = in_repo(
        repo,
        *("log", "--no-walk=unsorted", "--stdin", f"--format={fields}", "--encoding=UTF-8"),
        stdin="".join(f"{sha}\n" for sha in wanted).encode("ascii"),
    )
    values = out.decode("utf-8", "replace").split("\0")
    found = {}
    for start in range(0, len(values) - 4, 5):
        sha, author, date, subject, parents = values[start : start + 5]
        sha = sha.strip()
        found[sha] = CommitInfo(
            sha=sha, author=author, date=date, subject=subject, parents=tuple(parents.split())
        )
    return found


def changed_paths(repo: Repo, good: str, rev: str) -> list[str]:
    """Every path that exists on either side and differs between `good` and `rev`."""
    paths: dict[str, None] = {}
    for entry in diff_raw(repo, good, rev):
        paths.update(dict.fromkeys((entry.old_path, entry.new_path)))
    return list(paths)


def parents(repo: Repo, sha: str) -> tuple[str, ...]:
    """The parents of commit `sha`, its first parent first."""
    out = in_repo(repo, "rev-list", "--parents", "-n", "1", sha, "--")
    return tuple(out.decode("ascii").split()[1:])


def merge_base(repo: Repo, one: str, other: str) -> str | None:
    """The best common ancestor of two commits; None when they have none."""
    try:
        out = in_repo(repo, "merge-base", one, other)
    except errors.GitFailed as failed:
        if failed.returncode == 1 and not failed.stderr.strip():  # no common ancestor
            return None
        raise
    return out.decode("ascii").strip() or None


def is_ancestor(repo: Repo, older: str, newer: str) -> bool:
    """Whether commit `older` is an ancestor of `newer` (or the same commit)."""
    try:
        in_repo(repo, "merge-base", "--is-ancestor", older, newer)
    except errors.GitFailed as failed:
        if failed.returncode == 1 and not failed.stderr.strip():
            return False
        raise
    return True
