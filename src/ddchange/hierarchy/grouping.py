"""The hierarchy of change groups that the search descends, and the dependencies between changes.

Owns how change units are bundled into the items dd works on at each level, and which units only
make sense together. Both fight inconsistency, the reason delta debugging over changes is hard:
most subsets of a large change do not even build (on GDB, 457 of 470 tests were unresolved).

Levels, coarsest first: directory (only for wide diffs) → file → function → hunk → line. The
search runs dd at one level, then splits only the groups the answer kept into the next level's
finer groups. Every level partitions the units it is given, so a configuration of groups always
stands for a well-defined set of units. A unit's function is its innermost enclosing function
or class in the new file (the old one for a pure deletion), from tree-sitter where there is a
grammar, else git's hunk header (which follows .gitattributes diff drivers) where the layout
shows that its definition holds the change (headers.py), else the file's top level.

Dependencies: a unit that adds a use of a name needs every unit that adds a definition of it
(a call needs its function, a caller needs the new signature), and a unit that removes a
definition needs every unit that removes a use of it (a rename's old name must leave all call
sites with it; not when the same unit defines the name again, as a new value does), and the
removal and the addition of a definition that is rewritten or moved need each other. These
needs are a hint for the search (search.py), not a filter: a candidate is first tried as its
*interior* (`interior`), the largest subset in which every unit has what it needs, so that a
call without its new function, or half a rename, is not built when the analysis is right. The
analysis over-approximates (the same name in different scopes), so a candidate that is built
without some needs and resolves disproves them (`unlearn`), and when a build fails anyway,
`learn` takes the missing names it printed (undefined reference, undeclared, NameError,
ImportError ...; see trial/missing.py) and adds the needs they reveal: Zeller's failure
resolution loop.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ddchange.diff.hunks import Diff, FileDiff, Hunk
from ddchange.diff.linechanges import changed_lines
from ddchange.hierarchy import headers, syntax
from ddchange.hierarchy.names import Analysis
from ddchange.model import LEVELS, Level

# With more changed files than this, the search starts one level higher, at directories.
WIDE = 32


# eq=False: a group is equal only to itself. Groups are made once per level and dd hashes them
# constantly; hashing by identity spares rehashing every member each time (millions of times).
@dataclass(frozen=True, eq=False)
class Group:
    """Change units that dd adds or removes together. `label` names them for people."""

    label: str
    members: tuple[str, ...]  # unit ids, in diff order


def members(groups: Iterable[Group]) -> frozenset[str]:
    """The unit ids a configuration of groups stands for."""
    return frozenset(unit for group in groups for unit in group.members)


def levels_for(granularity: Level, diff: Diff, *, history: bool = False) -> list[Level]:
    """The levels to search, coarsest first, ending at `granularity`: commits first with
    `history`, directories only for diffs wider than WIDE files."""
    levels = list(LEVELS[: LEVELS.index(granularity) + 1])
    if len(diff.files) <= WIDE:
        levels.remove(Level.DIRECTORY)
    if not history:
        levels.remove(Level.COMMIT)
    return levels


class Hierarchy:
    """Scopes and dependencies of the units of one diff, each worked out once, when first needed."""

    def __init__(
        self,
        diff: Diff,
        *,
        dependencies: bool = True,
        needs: Mapping[str, Iterable[str]] | None = None,
        commits: Mapping[str, int] | None = None,
        analysis: Callable[[], Analysis] | None = None,
        whole_blocks: bool = False,
    ) -> None:
        """`needs`, when given, replaces the analysis of names (tests, known ground truth).
        Otherwise that analysis, the costly part (every changed file parsed, its names
        resolved), is made when the needs are first used: by `analysis` when given (the
        session has it made meanwhile, during the pre-flight), else here. `commits` numbers
        each unit's commit in history order, for the "commit" level."""
        self.commits = commits or {}
        # A block goes whole into an interior (at block granularity, where no level splits
        # one): a block cut by a dropped line is half a statement, which never builds.
        self.whole_blocks = whole_blocks
        self._diff = diff
        self._units = {unit.id: unit for unit in diff.hunks}
        self._scopes: dict[str, str] = {}  # worked out on first use (see `scope`)
        self._blocks: dict[str, int] = {}  # worked out on first use (see `block`)
        self._index: dict[str, int] = {}  # each unit's place in the diff, on first use
        self._members: dict[int, list[str]] = {}  # each block's units, on first use
        self._origins: dict[str, tuple[str, ...]] = {}  # told after a search (`know_origins`)
        self._pieces: Mapping[str, int] = {}  # told after a search (`know_pieces`)
        self._names: Analysis | None = None
        self._analysis: Callable[[], Analysis] | None = None  # until it is made (`_analysed`)
        if dependencies and needs is None:
            self._analysis = analysis or (lambda: Analysis(diff))
        self._needs: dict[str, set[str]] = {}
        self._needed_by: dict[str, set[str]] = {}
        for user, providers in (needs or {}).items():
            for provider in providers:
                self._need(user, provider)
        self.learned = 0  # configurations whose interior a failed build changed

    @property
    def needs(self) -> dict[str, set[str]]:
        """What each unit needs: the units that must come with it (see the module docstring)."""
        return self._analysed()

    def _analysed(self) -> dict[str, set[str]]:
        """The needs, with the analysis of names made first if it is not yet."""
        if self._analysis is not None:
            self._names = self._analysis()
            self._analysis = None  # only once it is made: an interrupted wait tries again
            for user, providers in self._names.needs().items():
                for provider in providers:
                    self._need(user, provider)
        return self._needs

    def scope(self, unit: str) -> str:
        """The function or class around a unit ("function parse", or git's header line).
        Worked out when first asked: the function level only splits the files the search kept,
        and the report names the culprits' alone, so most files are never parsed for it."""
        if unit not in self._scopes:
            hunk = self._units[unit]
            self._scopes[unit] = _scope(self._diff.files[hunk.file], hunk)
        return self._scopes[unit]

    def block(self, unit: str) -> int:
        """The number of the block a unit is in: a run of units of one git hunk with no
        unchanged line between them, as `git diff -U0` shows it (line changes cut a block into
        lines; git's own units are each a block). Numbered over the whole diff when first
        asked, so that a subset's units keep their blocks."""
        if not self._blocks:
            number, end, last = 0, 0, ""
            for each in self._diff.hunks:
                if each.hunk != last or _first(each) > end:
                    number, end = number + 1, 0
                self._blocks[each.id], last = number, each.hunk
                end = max(end, _first(each) + each.old_lines)
        return self._blocks[unit]

    def runs(self, units: Sequence[Hunk]) -> dict[str, int]:
        """Each of `units` (in diff order) numbered by its run: units of one block with none
        of that block's units missing between them. A configuration that holds only part of a
        block shows its runs as apart (unchanged lines lie between them), and so does the
        answer's own `git diff -U0`: a block of the search is one of its hunks."""
        if not self._index:
            self._index = {unit.id: n for n, unit in enumerate(self._diff.hunks)}
        runs: dict[str, int] = {}
        number, last = 0, None
        for unit in units:
            here = self._index[unit.id]
            if last is None or self.block(unit.id) != self.block(last[0]) or here != last[1] + 1:
                number += 1
            runs[unit.id], last = number, (unit.id, here)
        return runs

    def know_origins(self, origins: Mapping[str, tuple[str, ...]]) -> None:
        """The commits that brought each unit, for the "origin" level: a block cut where its
        lines come from different commits (each unit of a block whose commits are not known
        stays a group of its own there)."""
        self._origins.update(origins)

    def know_pieces(self, pieces: Mapping[str, int]) -> None:
        """Where the answer's own patch cuts its blocks, for the "origin" level: each unit's
        hunk of that patch's `git diff -U0` (diff/realign.py; a unit with none stays with the
        others of its block that have none). Replaces what was told before: an answer's
        patch changes as the answer does."""
        self._pieces = pieces

    def groups(self, level: Level, units: Sequence[Hunk]) -> list[Group]:
        """`units` partitioned into the groups of `level`, in diff order."""
        runs = self.runs(units) if level in (Level.BLOCK, Level.ORIGIN) else {}
        grouped: dict[object, list[str]] = {}
        labels: dict[object, str] = {}
        for unit in units:
            k, label = self._group_of(level, unit, runs)
            grouped.setdefault(k, []).append(unit.id)
            labels.setdefault(k, label)
        # Commits in history order; every other level keeps diff order (a stable sort by 0).
        order = sorted(grouped, key=lambda k: k if isinstance(k, int) else 0)
        return [Group(labels[k], tuple(grouped[k])) for k in order]

    def _group_of(self, level: Level, u: Hunk, runs: Mapping[str, int]) -> tuple[object, str]:
        """What `u` is grouped by at `level` (units with equal keys go together), and the
        group's label."""
        at = f"{u.path}:{u.new_start}"
        match level:
            case Level.COMMIT:
                return self.commits.get(u.id, 0), f"commit {self.commits.get(u.id, 0)}"
            case Level.DIRECTORY:
                return os.path.dirname(u.path), os.path.dirname(u.path) or "."
            case Level.FILE:
                return u.file, u.path
            case Level.FUNCTION:
                return (u.file, self.scope(u.id)), _label(u, self.scope(u.id))
            case Level.HUNK:
                return u.hunk, at
            case Level.BLOCK:
                return ("block", runs[u.id]), at
            case Level.ORIGIN:
                origin = self._origins.get(u.id, (u.id,))
                return ("origin", runs[u.id], origin, self._pieces.get(u.id)), at
            case Level.LINE:
                return u.id, at

    def prefix(self, groups: Sequence[Group], config: frozenset[str]) -> frozenset[str]:
        """The units of the longest run of `groups` (in history order) that `config` holds
        whole from the start: at the commit level a commit comes only with all commits before
        it, so the search over commits is a search over prefixes of history, like `git bisect`."""
        kept: list[str] = []
        for group in groups:
            if not config.issuperset(group.members):
                break
            kept += group.members
        return frozenset(kept)

    def interior(self, config: Iterable[str]) -> frozenset[str]:
        """The largest subset of `config` in which every unit has all it needs (with
        `whole_blocks`, and every block is whole or absent)."""
        kept, needs = set(config), self._analysed()
        dropped = [unit for unit in kept if not needs.get(unit, set()) <= kept]
        while dropped:
            unit = dropped.pop()
            if unit not in kept:
                continue
            kept.discard(unit)
            dropped.extend(user for user in self._needed_by.get(unit, ()) if user in kept)
            if self.whole_blocks:
                dropped.extend(mate for mate in self._mates(unit) if mate in kept)
        return frozenset(kept)

    def closure(self, config: Iterable[str], within: frozenset[str]) -> frozenset[str]:
        """`config` with what it needs, and what that needs, as far as `within` holds them
        (with `whole_blocks`, and the rest of each block): the smallest configuration around
        `config` that the hint says builds."""
        kept, needs = set(config) & within, self._analysed()
        todo = list(kept)
        while todo:
            unit = todo.pop()
            more = set(needs.get(unit, ()))
            if self.whole_blocks:
                more.update(self._mates(unit))
            for other in (more & within) - kept:
                kept.add(other)
                todo.append(other)
        return frozenset(kept)

    def _mates(self, unit: str) -> list[str]:
        """The units of `unit`'s block."""
        if not self._members:
            for each in self._diff.hunks:
                self._members.setdefault(self.block(each.id), []).append(each.id)
        return self._members[self.block(unit)]

    def learn(self, config: frozenset[str], missing: Iterable[str]) -> bool:
        """Add the needs that a failed build of `config` reveals by the names it said were
        `missing` (see trial/missing.py). True if that changes `config`'s interior (worth a
        retry)."""
        self._analysed()
        if self._names is None:
            return False
        for name in missing:
            for user in self._names.users(name) & config:
                for provider in self._names.providers(name) - {user}:
                    self._need(user, provider)
        changed = self.interior(config) != config
        self.learned += changed
        return changed

    def unlearn(self, config: frozenset[str]) -> bool:
        """Forget the needs that `config` violates: it was built and tested without them and
        gave PASS or FAIL, so they are not needed (a name matched in the wrong scope). True if
        any was forgotten."""
        forgotten, needs = False, self._analysed()
        for user in config:
            missing = needs.get(user, set()) - config
            for provider in missing:
                self._needed_by.get(provider, set()).discard(user)
            if missing:
                needs[user] -= missing
                forgotten = True
        return forgotten

    def _need(self, user: str, provider: str) -> None:
        self._needs.setdefault(user, set()).add(provider)
        self._needed_by.setdefault(provider, set()).add(user)


def _first(unit: Hunk) -> int:
    """The first old line a unit covers (a pure insertion after line k: k + 1)."""
    return unit.old_start if unit.old_lines else unit.old_start + 1


def _scope(file: FileDiff, unit: Hunk) -> str:
    """The innermost function or class around a text unit; "" at top level or for whole files."""
    if unit.kind != "text":
        return ""
    removed, added = changed_lines(unit)
    sides = [(c, lines, new) for c, lines, new in ((file.new_content, added, True),
             (file.old_content, removed, False)) if c is not None and lines]  # fmt: skip
    for content, lines, _ in sides:
        found = syntax.scopes(file.path, content)
        if found is None:
            break  # no grammar: git's header, where it holds the change
        scope = syntax.enclosing(found, lines[0], lines[-1])
        return "" if scope is None else f"{scope.kind} {scope.name}"
    if not sides:
        return ""
    content, lines, new = sides[0]
    starts = file.new_starts if new else file.old_starts
    return headers.holding(unit.header, content, starts, lines[0])


def _label(unit: Hunk, scope: str) -> str:
    return f"{unit.path}: {scope}" if scope else unit.path
