"""The change units delta debugging searches over, and the files they belong to.

Owns the model: a `Diff` is one `FileDiff` per changed path, each with its change units
(`Hunk`): git's own text hunks, plus one whole-file unit for each change that is not about lines
(an added or deleted file, a rename, a mode change, a binary, symlink or type change).
`parse.py` builds a `Diff` from git's output; `content.py` turns any subset of unit ids back
into file states (`FileState`, whose content may be `Spliced` from slices of the blobs);
`linechanges.py` cuts hunks into line changes.

Hunk ids are f"{file}.{n}": the n-th unit of the file-th changed file, both counted from 0 in
git's diff order (a file's whole-file units first, then its text hunks from top to bottom). The
same GOOD, BAD and git options give the same ids.

Lines are split on b"\\n" only, as git's diff does (bytes.splitlines would also split on \\r).
Pure: no git, no processes, no filesystem.
"""

from __future__ import annotations

import io
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import Literal

Kind = Literal["text", "add", "delete", "rename", "mode", "content"]

_FORMAT = 0o170000  # the file-type bits of a git mode


class InconsistentDiff(Exception):
    """git's raw and patch output disagree: a bug in ddchange or in our reading of git."""


@dataclass
class Conflict(Exception):
    """No tree has the chosen states: `path` would be a file and hold files (file "d" kept
    while "d/x" is added), or two file changes want it in different states. The configuration
    cannot be materialized; the search counts it as UNRESOLVED."""

    path: str

    def __str__(self) -> str:
        return f"{self.path} would need two different states"


@dataclass(frozen=True, kw_only=True)
class Hunk:
    """One change unit: the smallest thing delta debugging can choose or leave out.

    Line numbers are git's, 1-based as in the "@@" line; whole-file units describe the whole
    file on each side (0, 0 where the side is absent). `header` is git's function context,
    `diff` the unit as git printed it (for whole-file units a short git-like description
    followed by git's hunks of that file, if any).
    """

    id: str
    file: int  # index into Diff.files
    path: str  # the new path; the old one for a deletion
    kind: Kind
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    header: str
    diff: str
    added: int  # "+" lines of git's hunks for this unit
    removed: int  # "-" lines
    parent: str = ""  # a line change's git hunk (see `split_lines`); "" for git's own units

    @property
    def hunk(self) -> str:
        """The id of the git hunk this unit is, or is part of."""
        return self.parent or self.id


@dataclass(frozen=True, kw_only=True)
class FileDiff:
    """One changed path (two for a rename) with the content of both sides."""

    index: int
    status: str  # A, D, M, R or T as in `git diff --raw`
    old_path: str | None  # None where the side is absent
    new_path: str | None
    old_mode: int  # 0 where the side is absent
    new_mode: int
    old_content: bytes | None
    new_content: bytes | None
    binary: bool
    units: tuple[str, ...]  # ids of its Hunks, in order

    @property
    def path(self) -> str:
        """The new path; the old one for a deleted file."""
        return next(path for path in (self.new_path, self.old_path) if path is not None)

    @property
    def origin(self) -> str:
        """The old path; the new one for an added file."""
        return next(path for path in (self.old_path, self.new_path) if path is not None)

    @cached_property
    def old_starts(self) -> array[int]:
        """Line starts of the old content (see `line_starts`), computed once per search."""
        return line_starts(self.old_content or b"")

    @cached_property
    def new_starts(self) -> array[int]:
        """Line starts of the new content."""
        return line_starts(self.new_content or b"")

    @property
    def before(self) -> FileState | None:
        """The file in GOOD; None for an added file."""
        return None if self.old_content is None else FileState(self.old_content, self.old_mode)

    @property
    def after(self) -> FileState | None:
        """The file in BAD; None for a deleted file."""
        return None if self.new_content is None else FileState(self.new_content, self.new_mode)


@dataclass(frozen=True)
class Diff:
    files: tuple[FileDiff, ...]
    hunks: tuple[Hunk, ...]  # by file, then by position in the file
    skipped: tuple[str, ...]  # paths of submodule changes, left as in GOOD

    @cached_property
    def by_id(self) -> Mapping[str, Hunk]:
        return {hunk.id: hunk for hunk in self.hunks}


class Spliced:
    """Bytes kept as the slices of other bytes they are made of, in order: a text file with
    some of its hunks applied is slices of GOOD's blob and of BAD's (`content.materialize`).
    Written, hashed and compared a piece at a time, so that a configuration of a 50 MB file
    costs no third copy of it. Equal to bytes, or to a Spliced, of the same value."""

    __slots__ = ("parts", "size")

    def __init__(self, parts: Iterable[tuple[bytes, int, int]]) -> None:
        self.parts = tuple((blob, start, end) for blob, start, end in parts if start < end)
        self.size = sum(end - start for _, start, end in self.parts)

    def __len__(self) -> int:
        return self.size

    def __bytes__(self) -> bytes:
        return b"".join(pieces(self))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Spliced) and self.parts == other.parts:
            return True  # the same slices of the same blobs: nothing to read
        if not isinstance(other, bytes | Spliced):
            return NotImplemented
        return len(self) == len(other) and all(
            mine == theirs for mine, theirs in zip(chunks(self), chunks(other), strict=True)
        )

    __hash__ = None  # type: ignore[assignment]  # equal to bytes, so no hash of its own

    def __repr__(self) -> str:
        return f"Spliced(<{self.size} bytes in {len(self.parts)} pieces>)"


@dataclass(frozen=True)
class FileState:
    """What a path must hold: its bytes (a symlink's target) and its git mode."""

    content: bytes | Spliced
    mode: int  # 0o100644, 0o100755 or 0o120000


_CHUNK = 1 << 20


def pieces(content: bytes | Spliced) -> tuple[bytes | memoryview, ...]:
    """`content` as consecutive buffers, none of them a copy: what is written and hashed."""
    if isinstance(content, bytes):
        return (content,)
    return tuple(memoryview(blob)[start:end] for blob, start, end in content.parts)


def chunks(content: bytes | Spliced) -> Iterator[bytes]:
    """`content` as consecutive bytes of a megabyte each (the last one shorter, none when
    empty): what is compared, a chunk at a time. Bytes compare fast; memoryviews do not."""
    gathered = bytearray()
    for piece in pieces(content):
        view = memoryview(piece)
        while view:
            room = _CHUNK - len(gathered)
            gathered += view[:room]
            view = view[room:]
            if len(gathered) == _CHUNK:
                yield bytes(gathered)
                gathered.clear()
    if gathered:
        yield bytes(gathered)


def line_starts(data: bytes) -> array[int]:
    """Where each line of `data` starts, then len(data): line k is data[starts[k]:starts[k+1]].

    Lines end after each b"\\n" only, as in git's diff (bytes.splitlines would also end them at
    b"\\r"); a last line without one is a line of its own. Read about a megabyte of lines at a
    time, so a 50 MB file never exists as a million line objects at once; four bytes an
    offset where they suffice (below 4 GiB).
    """
    starts = array("I" if len(data) < 1 << 32 else "Q", [0])
    reader = io.BytesIO(data)  # shares the buffer of `data`, no copy
    while lines := reader.readlines(1 << 20):
        starts.extend(accumulate(map(len, lines), initial=starts.pop()))
    return starts


def retyped(old_mode: int, new_mode: int) -> bool:
    return old_mode & _FORMAT != new_mode & _FORMAT
