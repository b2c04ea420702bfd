"""Line changes: each git hunk split into single lines, a replaced line paired with the line
that replaces it, the finest units the search descends to. Pure: no git, no files.

Key idea: context lines cut a hunk's body into runs of removed and added lines, and each run is
*aligned*: cut into columns, each a removed line, an added line, or one of each (a replaced
line), in an order that keeps both sides in their order. A column is one unit. Choosing some
columns of a run gives, in column order, the added line of each chosen column and the removed
line of each other one: every subset is a text made of whole lines of GOOD and BAD. A block of
lines that two commits wrote next to each other is never one unit, so the answer can name one
line and its one commit.

Which removed line goes with which added line: lines that look alike (difflib's ratio of their
words and symbols, blanks left out, at least `SIMILAR`) are paired first, as many and as alike
as the order allows; between those, the rest pair by position (the first left with the first
left), and what remains of the longer side is lines of their own. Deterministic: the same hunk
always gives the same units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from ddchange.diff.hunks import Diff, Hunk

# Two lines this alike are a line and its replacement (difflib.get_close_matches' default).
SIMILAR = 0.6
# Runs with more (removed x added) line pairs than this pair by position only: the similarity
# of every pair costs its own time (a generated file rewritten as a whole).
_COMPARED = 10_000

_WORD = re.compile(r"\w+|\S")

Column = tuple[int | None, int | None]  # a removed line's index in its run, an added line's


@dataclass(frozen=True, kw_only=True)
class _Run:
    """A maximal run of removed and added lines: the numbers of its first old and new line,
    and its lines as in the hunk ("-" or "+" first, "\\ No newline at end of file" kept after
    the line it is about)."""

    old: int
    new: int
    removed: list[str]
    added: list[str]


def split_lines(diff: Diff) -> Diff:
    """The same diff with each text hunk replaced by its line changes.

    A line change is one column of a run (see the module docstring): one removed line, one
    added line, or a removed line with the added line that replaces it. Line changes keep
    git's coordinates conventions, so `materialize` and `splice` treat them exactly like
    hunks: a pure insertion after old line k has old_start k and old_lines 0, and insertions
    at one place follow each other in the order of their ids. Their ids are "<hunk id>.<n>",
    n from 0, top to bottom.
    """
    units: list[Hunk] = []
    files = []
    for file in diff.files:
        mine = [u for hunk_id in file.units for u in _line_changes(diff.by_id[hunk_id])]
        units += mine
        files.append(replace(file, units=tuple(u.id for u in mine)))
    return Diff(tuple(files), tuple(units), diff.skipped)


def _line_changes(hunk: Hunk) -> list[Hunk]:
    if hunk.kind != "text":
        return [hunk]
    units: list[Hunk] = []
    for run in _runs(hunk):
        old, new = run.old, run.new
        for removed, added in align(run.removed, run.added):
            lines = [run.removed[removed]] if removed is not None else []
            lines += [run.added[added]] if added is not None else []
            units.append(_unit(hunk, len(units), old, new, lines))
            old += removed is not None
            new += added is not None
    return units


def _unit(hunk: Hunk, n: int, old: int, new: int, lines: list[str]) -> Hunk:
    """The unit of `lines` (at most one "-" line, then at most one "+" line), which starts
    at old line `old` and new line `new`."""
    removed = sum(line.startswith("-") for line in lines)
    added = len(lines) - removed
    old_start = old if removed else old - 1
    new_start = new if added else new - 1
    return replace(
        hunk,
        id=f"{hunk.id}.{n}",
        old_start=old_start,
        old_lines=removed,
        new_start=new_start,
        new_lines=added,
        diff=f"@@ -{_range(old_start, removed)} +{_range(new_start, added)} @@"
        + _context(hunk.diff.split("\n", 1)[0])
        + "".join(lines),
        added=added,
        removed=removed,
        parent=hunk.id,
    )


def align(removed: list[str], added: list[str]) -> list[Column]:
    """The columns of a run of `removed` and `added` lines, in order (see the module docstring).

    A line without its newline is the last of its file, so it goes in the last column, with
    the last line of the other side: no line is ever put after it, which would join the two.
    """
    if removed and added and (_unterminated(removed[-1]) or _unterminated(added[-1])):
        return [*align(removed[:-1], added[:-1]), (len(removed) - 1, len(added) - 1)]
    columns: list[Column] = []
    done = (0, 0)
    for anchor in [*_alike(removed, added), (len(removed), len(added))]:
        left = range(done[0], anchor[0])
        right = range(done[1], anchor[1])
        columns += zip(left, right, strict=False)
        columns += [(i, None) for i in left[len(right) :]]
        columns += [(None, j) for j in right[len(left) :]]
        if anchor != (len(removed), len(added)):
            columns.append(anchor)
        done = (anchor[0] + 1, anchor[1] + 1)
    return columns


def _alike(removed: list[str], added: list[str]) -> list[tuple[int, int]]:
    """Pairs (i, j) of alike lines, increasing in both, with the largest sum of similarities
    (a weighted longest common subsequence); none in runs too large to compare."""
    if not 1 < len(removed) * len(added) <= _COMPARED:
        return []  # one line each pairs by position all the same
    score = _similarities([_words(line) for line in removed], [_words(line) for line in added])
    best = [[0.0] * (len(added) + 1) for _ in range(len(removed) + 1)]
    for i in range(len(removed)):
        for j in range(len(added)):
            paired = best[i][j] + score[i][j] if score[i][j] else 0.0
            best[i + 1][j + 1] = max(best[i][j + 1], best[i + 1][j], paired)
    pairs = []
    i, j = len(removed), len(added)
    while i and j:
        if best[i][j] == best[i - 1][j]:
            i -= 1
        elif best[i][j] == best[i][j - 1]:
            j -= 1
        else:
            i, j = i - 1, j - 1
            pairs.append((i, j))
    return pairs[::-1]


def _similarities(removed: list[list[str]], added: list[list[str]]) -> list[list[float]]:
    """difflib's ratio of each removed and added line where it is at least SIMILAR, else 0;
    blank lines are alike to none (they would pair across the lines around them)."""
    score = [[0.0] * len(added) for _ in removed]
    matcher = SequenceMatcher(autojunk=False)
    for j, theirs in enumerate(added):
        matcher.set_seq2(theirs)  # difflib caches its analysis of the second sequence
        for i, mine in enumerate(removed):
            matcher.set_seq1(mine)
            # The quick ratios are upper bounds of the ratio, much cheaper to compute.
            if mine and theirs and matcher.real_quick_ratio() >= SIMILAR:
                ratio = matcher.ratio() if matcher.quick_ratio() >= SIMILAR else 0.0
                score[i][j] = ratio if ratio >= SIMILAR else 0.0
    return score


def _words(line: str) -> list[str]:
    """What a "-" or "+" line says, for comparing: its words and other characters but blanks
    (so that indentation and spacing weigh nothing), without its sign, newline or marker."""
    return _WORD.findall(line[1:].split("\n", 1)[0])


def _unterminated(line: str) -> bool:
    return "\n\\" in line  # followed by "\ No newline at end of file"


def _runs(hunk: Hunk) -> list[_Run]:
    """The maximal -/+ runs of a text hunk, top to bottom."""
    _, *body = _text_lines(hunk.diff)
    old = hunk.old_start if hunk.old_lines else hunk.old_start + 1
    new = hunk.new_start if hunk.new_lines else hunk.new_start + 1
    runs: list[_Run] = []
    previous = " "
    for line in body:
        kind = line[:1]
        if kind in ("-", "+"):
            if previous not in ("-", "+"):
                runs.append(_Run(old=old, new=new, removed=[], added=[]))
            (runs[-1].removed if kind == "-" else runs[-1].added).append(line)
            old += kind == "-"
            new += kind == "+"
        elif kind == "\\":  # "\ No newline at end of file" belongs to the line before it
            if previous in ("-", "+"):
                lines = runs[-1].removed if previous == "-" else runs[-1].added
                lines[-1] += line
            continue
        else:
            old, new = old + 1, new + 1
        previous = kind
    return runs


def _text_lines(text: str) -> list[str]:
    """`text` cut after each "\\n" only: str.splitlines would also cut at "\\r", "\\x0b"..."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"


def _context(header: str) -> str:
    """The function context after a "@@ ... @@" line, with its newline."""
    rest = header.split("@@", 2)[-1]
    return rest if rest.endswith("\n") else rest + "\n"


def changed_lines(unit: Hunk) -> tuple[list[int], list[int]]:
    """The old line numbers a text unit removes and the new line numbers it adds (context lines
    of a git hunk are in neither). Other units: ([], [])."""
    if unit.kind != "text":
        return [], []
    removed: list[int] = []
    added: list[int] = []
    for run in _runs(unit):
        removed += range(run.old, run.old + len(run.removed))
        added += range(run.new, run.new + len(run.added))
    return removed, added
