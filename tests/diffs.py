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
                    f"{f}.{h}.{n}",
                    f,
                    f"f{f}.txt",
                    "text",
                    line,
                    1,
                    line,
                    1,
                    "",
                    f"@@ -{line} +{line} @@\n-a\n+b\n",
                    1,
                    1,
                    parent=f"{f}.{h}",
                )
                units.append(unit)
                ids.append(unit.id)
        files.append(
            FileDiff(
                f, "M", f"f{f}.txt", f"f{f}.txt", 0o100644, 0o100644, b"", b"", False, tuple(ids)
            )
        )
    return Diff(tuple(files), tuple(units), ())
