"""The diff between two revisions, and the files of a revision, as the diff layer's records.

Owns the step from git's raw output (`ddchange.git`) to `hunks.Diff` and `hunks.FileState`, so
that the git layer returns plain entries and bytes and never needs the diff layer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ddchange import errors, git
from ddchange.diff import hunks, limits, parse, safety

if TYPE_CHECKING:
    from ddchange.git import Repo


def tree_states(repo: Repo, rev: str, paths: Iterable[str]) -> dict[str, hunks.FileState | None]:
    """The state of each of `paths` in the tree of `rev`: None where it has no such file."""
    tree = git.ls_tree(repo, rev)
    wanted = list(paths)
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

    Raises `errors.UnsafePath` for a path that git's checkout would refuse (`safety`), before
    anything is read further or written anywhere."""
    raw = git.diff_raw(repo, good, bad)
    for entry in raw:
        for commit, path, mode in ((good, entry.old_path, entry.old_mode),
                                   (bad, entry.new_path, entry.new_mode)):  # fmt: skip
            problem = safety.refusal(path, mode) if mode else None
            if problem:
                raise errors.UnsafePath(commit, path, problem)
    patch = git.diff_patch(repo, good, bad)
    return parse.parse_diff(raw, patch, git.read_blobs(repo, parse.needed_blobs(raw)))


def limited(
    repo: Repo, good: str, bad: str, diff: hunks.Diff, keep: Sequence[str], ignore: Sequence[str]
) -> limits.Limited:
    """`diff` less the files that the `keep` and `ignore` pathspecs match, as git matches them.
    Each pathspec must match a changed path, and no path may be both kept and ignored."""
    matched: dict[str, set[str]] = {"--keep": set(), "--ignore": set()}
    for option, specs in (("--keep", keep), ("--ignore", ignore)):
        for spec in specs:
            paths = git.changed_matching(repo, good, bad, spec)
            if not paths:
                raise errors.PathspecMatchesNothing(option, spec)
            matched[option] |= paths
    clash = limits.both(diff, matched["--keep"], matched["--ignore"])
    if clash:
        raise errors.KeptAndIgnored(tuple(clash))
    return limits.limit(diff, matched["--keep"], matched["--ignore"])
