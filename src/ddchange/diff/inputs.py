"""An input as change units: the pieces `ddchange reduce` may take out of its files.

Owns cutting a file's bytes into pieces of one grain (lines, tokens, characters; syntax nodes
come from hierarchy/syntax) and writing an input back with some pieces taken out. A piece is
an `Edit`: a byte range of one file and what takes its place when it goes (nothing, for the
grains; a shorter text, for a transformation). An input with some edits applied is one more
configuration, as GOOD plus some hunks is one for a change set.

Pure: bytes in, bytes out. Ranges are half-open, into the file's current bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Contents = tuple[bytes, ...]  # an input: each file's bytes, in the order the files were given

# A token: a word (letters, digits, underscores, any non-ASCII byte), one mark of punctuation,
# or a run of white space.
_TOKEN = re.compile(rb"[\w\x80-\xff]+|\s+|[^\w\s\x80-\xff]")


@dataclass(frozen=True, order=True, kw_only=True)
class Edit:
    """Bytes `start` to `end` of file number `file`, replaced by `replacement` when applied."""

    file: int
    start: int
    end: int
    replacement: bytes = b""

    @property
    def saved(self) -> int:
        return self.end - self.start - len(self.replacement)


def apply(contents: Contents, edits: Iterable[Edit]) -> Contents:
    """`contents` with `edits` applied; edits of one file must not overlap (ValueError)."""
    by_file: dict[int, list[Edit]] = {}
    for edit in edits:
        by_file.setdefault(edit.file, []).append(edit)
    out = list(contents)
    for number, mine in by_file.items():
        data, parts, at = contents[number], [], 0
        for edit in sorted(mine):
            if edit.start < at:
                raise ValueError(f"edits of file {number} overlap at byte {edit.start}")
            parts += [data[at : edit.start], edit.replacement]
            at = edit.end
        parts.append(data[at:])
        out[number] = b"".join(parts)
    return tuple(out)


def size(contents: Contents) -> int:
    return sum(len(data) for data in contents)


def tokens(contents: Contents) -> int:
    """How many tokens (`_TOKEN`, white space not counted) the input holds: the size that
    the benchmarks compare."""
    return sum(1 for data in contents for m in _TOKEN.finditer(data) if not m.group().isspace())


def lines(number: int, data: bytes) -> list[Edit]:
    """Each line of file `number`, its line ending with it."""
    ends = [m.end() for m in re.finditer(rb"\n", data)]
    starts = [0, *ends]
    if not data.endswith(b"\n"):
        ends.append(len(data))
    return [Edit(file=number, start=s, end=e) for s, e in zip(starts, ends, strict=False) if e > s]


def words(number: int, data: bytes) -> list[Edit]:
    """Each token of file `number` (`_TOKEN`)."""
    return [Edit(file=number, start=m.start(), end=m.end()) for m in _TOKEN.finditer(data)]


def chars(number: int, data: bytes) -> list[Edit]:
    """Each character of file `number` (each byte where it is no UTF-8)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return [Edit(file=number, start=i, end=i + 1) for i in range(len(data))]
    edits, at = [], 0
    for char in text:
        width = len(char.encode("utf-8"))
        edits.append(Edit(file=number, start=at, end=at + width))
        at += width
    return edits


def ranges(number: int, spans: Sequence[tuple[int, int]]) -> list[Edit]:
    """The byte ranges `spans` of file `number` (syntax nodes), as edits that remove them."""
    return [Edit(file=number, start=start, end=end) for start, end in spans if end > start]
