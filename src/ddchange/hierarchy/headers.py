"""git's hunk header as a change's function context, only where that definition holds the change.

For each hunk git names the nearest line before it that looks like a definition (its funcname
rules, or those of a `.gitattributes` diff driver). That definition may have ended before the
change: then the change is at the file's top level, and naming the previous function would
send the reader to the wrong place. Where no grammar says which definition holds a line, the
layout does: the definition holds the change when every line from its header down to the first
changed line is blank, indented deeper than the header, or a lone opening brace (Allman style).
A line as shallow as the header that is anything else, such as a closing brace, Ruby's `end`,
or a new statement, ends the definition first.
"""

from __future__ import annotations

from collections.abc import Sequence

OPENERS = frozenset({"{"})


def holding(header: str, content: bytes, starts: Sequence[int], first: int) -> str:
    """`header` (stripped) if the definition it starts holds line `first` (1-based) of
    `content`, whose line starts are `starts` (`hunks.line_starts`); "" (the file's top level)
    if it ended before, or is not found before it. Only the lines between are read."""
    wanted = header.strip()
    last = min(first, len(starts) - 1)

    def line(number: int) -> str:
        text = content[starts[number - 1] : starts[number]]
        return text.decode("utf-8", "surrogateescape").rstrip("\r\n")

    row = next(
        (n for n in range(last - 1, 0, -1) if wanted and line(n).strip().startswith(wanted)), None
    )
    if row is None:
        return ""
    depth = _indent(line(row))
    for number in range(row + 1, last + 1):  # the first changed line included
        text = line(number)
        if text.strip() and _indent(text) <= depth and text.strip() not in OPENERS:
            return ""
    return wanted


def _indent(line: str) -> int:
    expanded = line.expandtabs(8)
    return len(expanded) - len(expanded.lstrip())
