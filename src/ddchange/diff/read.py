"""The diff between two revisions, and the files of a revision, as the diff layer's records.

Owns the step from git's raw output (`ddchange.git`) to `hunks.Diff` and `hunks.FileState`, so
that the git layer returns plain entries and bytes and never needs the diff layer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ddchange import errors, git
from ddchange.diff import hunks, limits, parse, safety

if TYPE_CHECKING:
    from ddchange.git import Repo


def tree_states(repo: Repo, rev: str, paths: Iterable[str]) -> dict[str, hunks.FileState | None]:
    """The state of each of `paths` in the tree of `rev`: None where it has no such file.
    Raises `errors.UnsafePath` for a path there that git's checkout would refuse (`safety`)."""
    tree = git.ls_tree(repo, rev)
    wanted = list(paths)
    for path in wanted:
        _refuse_unsafe(rev, path, tree[path].mode if path in tree else 0)
    blobs = git.read_blobs(repo, (tree[path].sha for path in wanted if path in tree))
    return {
        path: hunks.FileState(blobs[tree[path].sha], tree[path].mode) if path in tree else None
        for path in wanted
    }


def tree_marks(repo: Repo, rev: str, paths: Iterable[str]) -> dict[str, tuple[int, str] | None]:
    """The mode and object name of each of `paths` in the tree of `rev` (None where it has no
    such file): what `content.differences` compares, without reading any content."""
    tree = git.ls_tree(repo, rev)
    return {path: (tree[path].mode, tree[path].sha) if path in tree else None for path in paths}


def read_diff(repo: Repo, good: str, bad: str) -> hunks.Diff:
    """The change units between the commits `good` and `bad` (full object names).

    Raises `errors.UnsafePath` for a path on either side that git's checkout would refuse
    (`safety`), before anything is written. (The rest of GOOD's tree is checked out by git,
    which refuses such paths itself: `check_tree` says which.)"""
    with _reading_trees(good, bad):
        raw = git.diff_raw(repo, good, bad)
    for change in raw:
        _refuse_unsafe(good, change.old_path, change.old_mode)
        _refuse_unsafe(bad, change.new_path, change.new_mode)
    patch = git.diff_patch(repo, good, bad)
    return parse.parse_diff(raw, patch, git.read_blobs(repo, parse.needed_blobs(raw)))


def check_tree(repo: Repo, rev: str) -> None:
    """Raise `errors.UnsafePath` for a path in the tree of `rev` that git's checkout would
    refuse. A whole tree takes a while (100,000 files: 0.5 s), so it is asked only once git
    refused to check it out, to say why in one line."""
    for path, entry in git.ls_tree(repo, rev).items():
        _refuse_unsafe(rev, path, entry.mode)


def check_history(repo: Repo, good: str, bad: str, named: tuple[str, str]) -> None:
    """Raise `errors.EmptyDiff` where good and bad (`named` so by the user) have the same
    tree (a commit and its revert: nothing to search, whatever the commits between), and
    `errors.UnsafePath` for a path that a commit of the first-parent history in good..bad
    brings in and git's checkout would refuse: the search by history applies those commits'
    trees, and must refuse them before the first test, not in the middle."""
    with _reading_trees(good, bad):
        if not git.diff_raw(repo, good, bad):
            raise errors.EmptyDiff(*named)
        changes = git.first_parent_changes(repo, good, bad)
    for commit, change in changes:
        _refuse_unsafe(commit, change.new_path, change.new_mode)


@contextmanager
def _reading_trees(good: str, bad: str) -> Iterator[None]:
    """git failing to read the trees is `errors.UnreadableTrees`: a crafted tree can be more
    than git reads ("empty filename in tree entry")."""
    try:
        yield
    except errors.GitFailed as failure:
        raise errors.UnreadableTrees(good, bad, failure.stderr) from failure


def _refuse_unsafe(commit: str, path: str, mode: int) -> None:
    """Raise `errors.UnsafePath` if the tree of `commit` holds `path` (`mode` is not 0) and
    git's checkout would refuse it."""
    problem = safety.refusal(path, mode) if mode else None
    if problem:
        raise errors.UnsafePath(commit, path, problem)


def limited(
    repo: Repo,
    good: str,
    bad: str,
    diff: hunks.Diff,
    keep: Sequence[str],
    ignore: Sequence[str],
    within: Path,
) -> limits.Limited:
    """`diff` less the files that the `keep` and `ignore` pathspecs match (`limit_paths`);
    no file may be both kept and ignored."""
    kept, ignored = limit_paths(repo, good, bad, keep, ignore, within)
    clash = limits.both(diff, kept, ignored)
    if clash:
        raise errors.KeptAndIgnored(tuple(clash))
    return limits.limit(diff, kept, ignored)


def limit_paths(
    repo: Repo, good: str, bad: str, keep: Sequence[str], ignore: Sequence[str], within: Path
) -> tuple[frozenset[str], frozenset[str]]:
    """The paths changed in good..bad that the `keep` and the `ignore` pathspecs match, as
    git matches them in the directory `within` (where the user runs ddchange). Each pathspec
    must be one git accepts and match a changed path, and no path may be both kept and
    ignored."""
    matched: dict[str, set[str]] = {"--keep": set(), "--ignore": set()}
    for option, specs in (("--keep", keep), ("--ignore", ignore)):
        for spec in specs:
            try:
                paths = git.changed_matching(repo, good, bad, spec, within)
            except errors.GitFailed as failed:  # the diff itself was read: the spec is bad
                complaint = failed.stderr.strip().splitlines()[-1:] or [""]
                raise errors.BadPathspec(
                    option, spec, complaint[0].removeprefix("fatal: ")
                ) from None
            if not paths:
                raise errors.PathspecMatchesNothing(option, spec)
            matched[option] |= paths
    clash = matched["--keep"] & matched["--ignore"]
    if clash:
        raise errors.KeptAndIgnored(tuple(sorted(clash)))
    return frozenset(matched["--keep"]), frozenset(matched["--ignore"])
