"""Where an answer's own patch cuts its blocks: git's alignment of GOOD plus the answer.

A block of the search (diff/linechanges.py, hierarchy/grouping.py) is a run of line changes
with no unchanged line between them *in the diff of GOOD..BAD*. A patch of the answer alone
is a diff of its own, and git can align it otherwise: on a large rewrite git's heuristics
leave a frequent line (a blank one, say) unmatched in GOOD..BAD, but in the answer's smaller
patch they match it, and that block shows there as two hunks of `git diff -U0`, one of which
may not be needed. The user reads and applies that patch, so the answer is checked again at
its hunks too (`Search.by_origin`).

Owns `pieces`: each text unit of an answer numbered by the hunk of the answer's own
`git diff -U0` that holds one of its lines (a unit whose lines lie in two hunks joins them).
A unit git sees as no change at all (a removed line and an added line equal to it, which
the patch's alignment pairs as unchanged) has no number.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Collection

from ddchange import git
from ddchange.diff.content import splice
from ddchange.diff.hunks import Diff, Hunk, chunks


def pieces(repo: git.Repo, diff: Diff, answer: Collection[str]) -> dict[str, int]:
    """Each text unit of `answer` numbered by the hunk of its own `git diff -U0` (GOOD plus
    `answer` against GOOD, as `repo`'s git aligns it) that holds its lines; numbers are
    unique across files. Units of whole files (added, deleted, renamed, binary, mode) and
    units git shows no change for have none."""
    chosen = frozenset(answer)
    found: dict[str, int] = {}
    offset = 0
    for file in diff.files:
        units = [
            diff.by_id[unit]
            for unit in file.units
            if unit in chosen and diff.by_id[unit].kind == "text"
        ]
        if not units or file.old_content is None or file.new_content is None:
            continue
        old = file.old_content
        new = b"".join(chunks(splice(old, file.new_content, units,
                                     old_at=file.old_starts, new_at=file.new_starts)))  # fmt: skip
        numbered = _numbered(units, git.line_hunks(repo, old, new))
        found.update({unit: offset + k for unit, k in numbered.items()})
        offset += 1 + max(numbered.values(), default=-1)
    return found


def _numbered(units: list[Hunk], spans: list[git.Span]) -> dict[str, int]:
    """`units` (one file's, top to bottom, all applied) numbered by the span of `spans` (that
    file's hunks against GOOD) their removed or added lines fall in, from 0; spans that one
    unit falls in, and those between them, take one number."""
    olds = [_lines(start, count) for start, count, _, _ in spans]
    news = [_lines(start, count) for _, _, start, count in spans]
    ends = ([side.stop for side in olds], [side.stop for side in news])
    touched: dict[str, list[int]] = {}
    joined: set[int] = set()  # k: span k and span k + 1 take one number
    shift = 0  # lines added minus lines removed by the units above
    for unit in units:
        first = _lines(unit.old_start, unit.old_lines)
        removed = range(first.start, first.start + unit.old_lines)
        added = range(first.start + shift, first.start + shift + unit.new_lines)
        shift += unit.new_lines - unit.old_lines
        found = sorted({*_meeting(removed, olds, ends[0]), *_meeting(added, news, ends[1])})
        touched[unit.id] = found
        joined.update(range(found[0], found[-1]) if found else ())
    number = list(itertools.accumulate((k not in joined for k in range(len(spans))), initial=0))
    return {unit: number[found[0]] for unit, found in touched.items() if found}


def _lines(start: int, count: int) -> range:
    """The 0-based indices of the lines a hunk side covers; where it covers none ("-5,0": after
    line 5), the empty range at the index of the line after it."""
    first = start if count == 0 else start - 1
    return range(first, first + count)


def _meeting(lines: range, sides: list[range], ends: list[int]) -> list[int]:
    """The indices of `sides` (disjoint, top to bottom; `ends`: where each stops) that share a
    line with `lines`."""
    found = []
    k = bisect.bisect_right(ends, lines.start)
    while lines and k < len(sides) and sides[k].start < lines.stop:
        found += [k] if sides[k] else []
        k += 1
    return found
