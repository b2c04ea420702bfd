"""Line changes: how a run of removed and added lines is cut into single lines and replaced
lines, and what that means for an answer on a real repository.

The byte-level properties (any subset applies line by line, all give BAD, none give GOOD) are
checked with the rest of the diff layer in test_hunks.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from endtoend import ddchange, found

from ddchange.diff.linechanges import align

MakeRepo = Callable[..., tuple[Path, list[str]]]


@pytest.mark.parametrize(
    ("removed", "added", "columns"),
    [
        # a replaced line, then lines another commit added after it: four units, not one
        (
            ['-    return f"{c // 100}.{c % 100:02d}"\n'],
            ['+    return f"{c // 100}.{c % 100}"\n', "+\n", "+\n", "+ZERO = 0\n"],
            [(0, 0), (None, 1), (None, 2), (None, 3)],
        ),
        # a line inserted above a replaced line: the replacement is the line alike to it
        (
            ["-    total = a + b\n"],
            ["+    log(a)\n", "+    total = a + b + c\n"],
            [(None, 0), (0, 1)],
        ),
        # lines alike to none pair by position; the rest of the longer side is lines alone
        (["-a = 1\n", "-b = 2\n", "-c = 3\n"], ["+x\n", "+y\n"], [(0, 0), (1, 1), (2, None)]),
        # alike pairs first, by position between them
        (
            ["-first()\n", "-value = compute(x)\n", "-other\n"],
            ["+zzz\n", "+yyy\n", "+value = compute(x, y)\n"],
            [(0, 0), (None, 1), (1, 2), (2, None)],
        ),
        # blank lines are alike to none: they pair by position like any other line
        (["-import os\n", "-\n"], ["+\n", "+y = 2\n"], [(0, 0), (1, 1)]),
        # a last line without its newline goes last, with the other side's last line
        (
            ["-b\n\\ No newline at end of file\n"],
            ["+b\n", "+c\n"],
            [(None, 0), (0, 1)],
        ),
        (
            ["-b\n", "-c\n"],
            ["+b\n", "+c\n\\ No newline at end of file\n"],
            [(0, 0), (1, 1)],
        ),
        (["-b\n", "-c\n"], ["+b\n\\ No newline at end of file\n"], [(0, None), (1, 0)]),
    ],
)
def test_a_run_is_cut_into_lines_and_replaced_lines(
    removed: list[str], added: list[str], columns: list[tuple[int | None, int | None]]
) -> None:
    assert align(removed, added) == columns


def test_a_huge_run_pairs_by_position() -> None:
    """Beyond 10,000 pairs of lines no similarity is computed (each costs its own time)."""
    removed = [f"-line {n}\n" for n in range(101)]
    added = ["+new\n"] + [f"+line {n}\n" for n in range(100)]
    assert align(removed, added) == [(n, n) for n in range(101)]
    assert align(removed[:99], added[:100])[:2] == [(None, 0), (0, 1)]  # alike, when compared


MONEY = (
    'def fmt(c):\n    """Cents as euros: 105 -> 1.05."""\n    return f"{c // 100}.{c % 100:02d}"\n'
)
CHECK = "import money\nimport sys\nsys.exit(0 if money.fmt(105) == '1.05' else 1)\n"


def test_a_replaced_line_and_lines_added_after_it_are_separate_answers(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """One commit replaces a line, the next adds lines right after it: one git hunk, one run of
    lines. The test fails on the replacement only, so the answer is that one line change, and
    it names its one commit."""
    simplified = MONEY.replace(":02d}", "}")
    repo, (good, simplify, _zero) = make_repo(
        tmp_path,
        [
            {"money.py": MONEY, "check.py": CHECK},
            {"money.py": simplified},
            {"money.py": simplified + "\n\nZERO = 0\n"},
        ],
    )
    run = ddchange(repo, f"{good}..HEAD", "--", "python3", "-B", "check.py")
    assert found(run) == [("money.py", "text")]
    (culprit,) = run.report["culprits"]
    lines = culprit["diff"].splitlines()[1:]
    assert lines == [
        '-    return f"{c // 100}.{c % 100:02d}"',
        '+    return f"{c // 100}.{c % 100}"',
    ]
    assert [commit["sha"] for commit in culprit["commits"]] == [simplify]
