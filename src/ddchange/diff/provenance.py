"""Which commits of GOOD..BAD brought each change unit: attribution from git's own blame.

Owns the mapping from the units of one diff to the commits that introduced them, which the
report prints for every culprit (author, date, subject), the "commit" level of the hierarchy
orders units by, and `--strategy auto` uses to pick out the changes of one culprit commit.

Rules, all through the git layer (blame and log: .mailmap, renames inside one commit and merges are
git's business):
- An added line belongs to the commit that last wrote it (`git blame BAD`). In a merge, that is
  the commit on the side branch that wrote it, or the merge itself for a resolution.
- A changed line (removed and added) belongs to the commit that wrote its new text.
- A removed line belongs to the commits that removed it: those that changed how often its text
  occurs in the file (`git log -S`, merges left out, as a merge only brings a side branch's
  removal). For a line with no text to search (blank), `git blame --reverse GOOD..BAD` names the
  last commit that still had it, and the first commit after that one on the ancestry path to
  BAD that touched the file removed it.
- A unit without lines (an added, deleted or renamed file, a mode, binary or symlink change)
  belongs to every commit in GOOD..BAD that touched its path.
Commits outside GOOD..BAD (blame's boundary) are never named.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping

from ddchange import errors, git
from ddchange.diff.hunks import Diff, FileDiff, Hunk
from ddchange.diff.linechanges import changed_lines


def attribute(
    repo: git.Repo, good: str, bad: str, diff: Diff, units: Iterable[Hunk] | None = None
) -> dict[str, tuple[str, ...]]:
    """The commits in GOOD..BAD of each of `units` (default: all of the diff's), oldest first
    (in `git.commits` order)."""
    order = {sha: index for index, sha in enumerate(git.commits(repo, good, bad))}
    blamer = _Blamer(repo, good, bad)
    found = {}
    for unit in diff.hunks if units is None else units:
        shas = blamer.commits(diff.files[unit.file], unit)
        found[unit.id] = tuple(sorted({s for s in shas if s in order}, key=order.__getitem__))
    return found


def positions(attribution: Mapping[str, tuple[str, ...]], order: Iterable[str]) -> dict[str, int]:
    """Each unit's place in history for the commit level: the index in `order` (oldest
    first) of the newest commit that brought it; 0 for a unit with no commit."""
    index = {sha: n for n, sha in enumerate(order)}
    return {unit: max((index[s] for s in shas), default=0) for unit, shas in attribution.items()}


def commits_of(
    attribution: Mapping[str, tuple[str, ...]], commits: Iterable[str]
) -> frozenset[str]:
    """The units that any of `commits` brought."""
    wanted = set(commits)
    return frozenset(unit for unit, shas in attribution.items() if wanted & set(shas))


class _Blamer:
    """git blame, asked at most once per line of a path and direction, and the removing
    commits."""

    def __init__(self, repo: git.Repo, good: str, bad: str) -> None:
        self.repo, self.good, self.bad = repo, good, bad
        self._blamed: dict[tuple[str, bool], dict[int, str]] = {}  # line -> commit
        self._removers: dict[tuple[str, tuple[str, ...]], str | None] = {}

    def commits(self, file: FileDiff, unit: Hunk) -> set[str]:
        removed, added = changed_lines(unit)
        paths = tuple(dict.fromkeys((file.origin, file.path)))
        if unit.kind != "text" or not (removed or added):
            return set(git.path_commits(self.repo, self.good, self.bad, paths))
        if added:
            blamed = self._blame(file.path, False, added)
            found = {blamed[n] for n in added if n in blamed}
            if found:
                return found
            # git blame failed (a blame.ignoreRevsFile that is not there makes it fail for
            # every path, and the setting cannot be undone from the command line): the
            # commits that changed how often the first added line occurs, which brought it
            text = _first(unit, "+")
            return set(git.pickaxe(self.repo, self.good, self.bad, text, paths)) if text else set()
        text = _first(unit, "-")
        picked = git.pickaxe(self.repo, self.good, self.bad, text, paths) if text else []
        if picked:
            return set(picked)
        blamed = self._blame(file.origin, True, removed)
        holders = {blamed[n] for n in removed if n in blamed}
        return {r for r in (self._remover(h, paths) for h in holders) if r is not None}

    def _blame(self, path: str, removed: bool, lines: list[int]) -> dict[int, str]:
        """The commits of `lines` of `path` (blamed once each); a line git cannot blame (the
        path is not in that tree under this name) has none."""
        known = self._blamed.setdefault((path, removed), {})
        missing = [n for n in lines if n not in known]
        if missing:
            with contextlib.suppress(errors.GitFailed):
                known.update(
                    git.blame(
                        self.repo,
                        self.bad,
                        path,
                        missing,
                        reverse_from=self.good if removed else None,
                    )
                )
        return known

    def _remover(self, last_holder: str, paths: tuple[str, ...]) -> str | None:
        key = (last_holder, paths)
        if key not in self._removers:
            self._removers[key] = git.first_changer(self.repo, last_holder, self.bad, paths)
        return self._removers[key]


def _first(unit: Hunk, sign: str) -> str:
    """The text of `unit`'s first changed line with `sign` ("+" or "-") that is not blank."""
    lines = unit.diff.splitlines()
    return next((line[1:] for line in lines if line[1:].strip() and line.startswith(sign)), "")
