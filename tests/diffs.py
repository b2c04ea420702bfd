"""Diffs built in memory, of any shape, for the grouping and the search."""

from __future__ import annotations

from ddchange.diff.hunks import Diff, FileDiff, Hunk


def synthetic_diff(shape: list[list[int]]) -> Diff:
    """Files of hunks of line changes: shape[f][h] line changes in hunk h of file f."""
    files, units = [], []
    for f, hunk_sizes in enumerate(shape):
        ids = []
        for h, lines in enumerate(hunk_sizes):
            for n in range(lines):
                line = 10 * h + n + 1
                unit = Hunk(
                    id=f"{f}.{h}.{n}",
                    file=f,
                    path=f"f{f}.txt",
                    kind="text",
                    old_start=line,
                    old_lines=1,
                    new_start=line,
                    new_lines=1,
                    header="",
                    diff=f"@@ -{line} +{line} @@\n-a\n+b\n",
                    added=1,
                    removed=1,
                    parent=f"{f}.{h}",
                )
                units.append(unit)
                ids.append(unit.id)
        files.append(
            FileDiff(
                index=f,
                status="M",
                old_path=f"f{f}.txt",
                new_path=f"f{f}.txt",
                old_mode=0o100644,
                new_mode=0o100644,
                old_content=b"",
                new_content=b"",
                binary=False,
                units=tuple(ids),
            )
        )
    return Diff(tuple(files), tuple(units), ())
