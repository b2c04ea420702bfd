"""The diff between two revisions, and the files of a revision, as the diff layer's records.

Owns the step from git's raw output (`ddchange.git`) to `hunks.Diff` and `hunks.FileState`, so
that the git layer returns plain entries and bytes and never needs the diff layer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ddchange import errors, git
from ddchange.diff import hunks, limits, parse

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
    """The change units between the commits `good` and `bad` (full object names)."""
    raw = git.diff_raw(repo, good, bad)
    patch = git.diff_patch(repo, good, bad)
    return parse.parse_diff(raw, patch, git.read_blobs(repo, parse.needed_blobs(raw)))


def limited(
    repo: Repo,
    good: str,
    bad: str,
    diff: hunks.Diff,
    keep: Sequence[str],
    ignore: Sequence[str],
    within: Path,
) -> limits.Limited:
    """`diff` less the files that the `keep` and `ignore` pathspecs match, as git matches them
    in the directory `within` (where the user runs ddchange). Each pathspec must be one git
    accepts and match a changed path, and no path may be both kept and ignored."""
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
    clash = limits.both(diff, matched["--keep"], matched["--ignore"])
    if clash:
        raise errors.KeptAndIgnored(tuple(clash))
    return limits.limit(diff, matched["--keep"], matched["--ignore"])
