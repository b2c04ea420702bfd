"""Line changes: each git hunk split into its maximal runs of removed and added lines, the
finest units the search descends to. Pure: no git, no files.
"""

from __future__ import annotations

from dataclasses import replace

from ddchange.diff.hunks import Diff, Hunk


def split_lines(diff: Diff) -> Diff:
    """The same diff with each text hunk replaced by its line changes.

    A line change is a maximal run of removed and added lines inside a git hunk: context lines
    separate line changes, and a modified line (its "-" and "+" lines) stays one change. Line
    changes never overlap in the old file and keep git's coordinates conventions, so
    `materialize` and `apply_hunks` treat them exactly like hunks (a pure insertion after old
    line k has old_start k and old_lines 0). Their ids are "<hunk id>.<n>", n from 0.
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
    header, *body = _text_lines(hunk.diff)
    runs = _runs(
        body,
        hunk.old_start if hunk.old_lines else hunk.old_start + 1,
        hunk.new_start if hunk.new_lines else hunk.new_start + 1,
    )
    return [
        replace(
            hunk,
            id=f"{hunk.id}.{n}",
            old_start=old if removed else old - 1,
            old_lines=removed,
            new_start=new if added else new - 1,
            new_lines=added,
            diff=f"@@ -{_range(old if removed else old - 1, removed)} "
            f"+{_range(new if added else new - 1, added)} @@{_context(header)}" + "".join(text),
            added=added,
            removed=removed,
            parent=hunk.id,
        )
        for n, (old, new, removed, added, text) in enumerate(runs)
    ]


def _runs(body: list[str], old: int, new: int) -> list[tuple[int, int, int, int, list[str]]]:
    """The maximal -/+ runs of a hunk body: (first old line, first new line, removed, added,
    their lines), where the first lines are the numbers the run starts at on each side."""
    runs: list[tuple[int, int, int, int, list[str]]] = []
    current: list[str] = []
    start = (old, new)
    removed = added = 0
    previous = " "
    for line in body:
        kind, previous = line[:1], previous if line[:1] == "\\" else line[:1]
        if kind in ("-", "+"):
            if not current:
                start, removed, added = (old, new), 0, 0
            current.append(line)
            removed += kind == "-"
            added += kind == "+"
            old += kind == "-"
            new += kind == "+"
        elif kind == "\\":  # "\ No newline at end of file" belongs to the line before it
            if previous in ("-", "+"):
                current.append(line)
        else:
            if current:
                runs.append((*start, removed, added, current))
                current = []
            old, new = old + 1, new + 1
    if current:
        runs.append((*start, removed, added, current))
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
    _, *body = _text_lines(unit.diff)
    old = unit.old_start if unit.old_lines else unit.old_start + 1
    new = unit.new_start if unit.new_lines else unit.new_start + 1
    removed: list[int] = []
    added: list[int] = []
    for first_old, first_new, count_removed, count_added, _ in _runs(body, old, new):
        removed += range(first_old, first_old + count_removed)
        added += range(first_new, first_new + count_added)
    return removed, added
