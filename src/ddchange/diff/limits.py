"""Path limits: the changes a run always applies (`--keep`) or never applies (`--ignore`).

Owns taking whole files out of the search. Which paths a pathspec matches is git's answer (the
session asks it); here a diff is split by those paths into the diff to search and the files
kept or ignored. A file counts as matched when its old or its new path is (a rename is one
file). Kept files are put as in BAD in every configuration, the pre-flight's GOOD side too, and
in the answer's patch (the trial layer holds their states); ignored files stay as in GOOD
everywhere. Neither is ever a candidate, so neither can be part of an answer. Pure: no git.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from ddchange.diff.hunks import Diff, FileDiff


@dataclass(frozen=True)
class Limited:
    diff: Diff  # what is searched
    kept: tuple[str, ...]  # every path of the kept files (old and new), sorted
    ignored: tuple[str, ...]  # every path of the ignored files, sorted


def limit(diff: Diff, keep: Collection[str], ignore: Collection[str]) -> Limited:
    """`diff` without the files that `keep` or `ignore` (sets of paths) match."""
    kept = [file for file in diff.files if _matches(file, keep)]
    ignored = [file for file in diff.files if _matches(file, ignore) and not _matches(file, keep)]
    out = {file.index for file in kept + ignored}
    searched = [file for file in diff.files if file.index not in out]
    return Limited(_only(diff, searched), _paths(kept), _paths(ignored))


def both(diff: Diff, keep: Collection[str], ignore: Collection[str]) -> list[str]:
    """The changed files (by path) that both `keep` and `ignore` match."""
    return [file.path for file in diff.files if _matches(file, keep) and _matches(file, ignore)]


def named_by(paths: Iterable[str], words: Iterable[str], where: str) -> list[str]:
    """Those of `paths` (files BAD adds or changes) that one of `words` (a test command's
    arguments, taken relative to `where`, the directory it runs in) names: a new test file
    that GOOD lacks makes GOOD fail, and `--keep` is what that needs."""
    named = {posixpath.normpath(posixpath.join(where, word)) for word in words if word}
    return [path for path in paths if path in named]


def _matches(file: FileDiff, paths: Collection[str]) -> bool:
    return file.origin in paths or file.path in paths


def _paths(files: Iterable[FileDiff]) -> tuple[str, ...]:
    return tuple(sorted({path for file in files for path in (file.origin, file.path)}))


def _only(diff: Diff, files: list[FileDiff]) -> Diff:
    """`diff` with only `files`, renumbered: a unit's `file` is its file's index in the diff
    (`diff` itself when `files` are all of its files, as without --keep and --ignore)."""
    if len(files) == len(diff.files):
        return diff
    renumbered = [dataclasses.replace(file, index=n) for n, file in enumerate(files)]
    where = {file.index: n for n, file in enumerate(files)}
    hunks = tuple(
        dataclasses.replace(hunk, file=where[hunk.file])
        for hunk in diff.hunks
        if hunk.file in where
    )
    return Diff(tuple(renumbered), hunks, diff.skipped)
