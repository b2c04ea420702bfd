"""The hierarchy of change groups that the search descends: file → hunk.

Owns how change units are bundled into the items dd works on at each level. Searching coarse
groups first is the biggest lever against inconsistent configurations (Zeller's GDB study: 470
tests flat, 289 grouped by location, 97 by function): a whole file's changes usually build
together, half of them often do not. The search runs dd at one level, then splits only the groups
the answer kept into the next level's finer groups.

A level is a function from the units still in play to groups of them. Every level partitions its
input (each unit in exactly one group), so a configuration of groups always stands for a well
defined set of units.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby

from ddchange.hunks import Hunk


@dataclass(frozen=True)
class Group:
    """Change units that dd adds or removes together. `label` names them for people."""

    label: str
    members: tuple[str, ...]  # hunk ids, in diff order


Level = Callable[[Sequence[Hunk]], list[Group]]


def by_file(hunks: Sequence[Hunk]) -> list[Group]:
    """One group per changed file (all its hunks, its rename and mode change together)."""
    return [
        Group(path, tuple(h.id for h in members))
        for (_, path), members in _runs(hunks, key=lambda h: (h.file, h.path))
    ]


def by_hunk(hunks: Sequence[Hunk]) -> list[Group]:
    """Every change unit on its own: the finest level of the first version."""
    return [Group(f"{h.path}:{h.new_start}", (h.id,)) for h in hunks]


LEVELS: dict[str, Level] = {"file": by_file, "hunk": by_hunk}


def levels_named(granularity: str) -> list[tuple[str, Level]]:
    """The levels to search, coarsest first, ending at `granularity` (a key of LEVELS)."""
    names = list(LEVELS)
    return [(name, LEVELS[name]) for name in names[: names.index(granularity) + 1]]


def members(groups: Iterable[Group]) -> frozenset[str]:
    """The hunk ids a configuration of groups stands for."""
    return frozenset(hunk_id for group in groups for hunk_id in group.members)


def _runs(
    hunks: Sequence[Hunk], key: Callable[[Hunk], tuple[int, str]]
) -> list[tuple[tuple[int, str], list[Hunk]]]:
    return [(k, list(g)) for k, g in groupby(hunks, key=key)]
