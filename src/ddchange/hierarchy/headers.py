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

OPENERS = frozenset({"{"})


def holding(header: str, content: bytes, first: int) -> str:
    """`header` (stripped) if the definition it starts holds line `first` (1-based) of
    `content`; "" (the file's top level) if it ended before, or is not found before it."""
    wanted = header.strip()
    lines = content.decode("utf-8", "surrogateescape").splitlines()
    start = next(
        (row for row in range(min(first, len(lines) + 1) - 2, -1, -1)
         if wanted and lines[row].strip().startswith(wanted)),
        None,
    )  # fmt: skip
    if start is None:
        return ""
    depth = _indent(lines[start])
    for line in lines[start + 1 : first]:  # the first changed line included
        text = line.strip()
        if text and _indent(line) <= depth and text not in OPENERS:
            return ""
    return wanted


def _indent(line: str) -> int:
    expanded = line.expandtabs(8)
    return len(expanded) - len(expanded.lstrip())
