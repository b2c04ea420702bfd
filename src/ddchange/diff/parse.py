"""From git's output for two revisions to a `hunks.Diff`.

`parse_diff` reads git's raw entries, its patch text and the blobs of both sides. Key idea:
unidiff only tells us *where* each hunk is (its line numbers); what a hunk puts there is read
from the blob of the new side. Materialization is therefore byte-exact for CRLF, a missing
final newline and non-UTF-8 text, which no round trip through patch text would be.

Submodules (gitlinks) are no units: they are listed in `Diff.skipped` and stay as in GOOD.
Pure: no git, no processes, no filesystem.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

from ddchange.diff.hunks import Diff, FileDiff, Hunk, InconsistentDiff, Kind, retyped

if TYPE_CHECKING:  # types only: importing ddchange.git would start GitPython
    from ddchange.git import RawEntry

_SYMLINK = 0o120000
_GITLINK = 0o160000
_DEV_NULL = "/dev/null"
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")

# How the sections git prints for each raw status look to unidiff: (source is /dev/null,
# target is /dev/null) per section. A type change (file <-> symlink) is one raw entry but two
# patch sections, a deletion and a creation, because git cannot show it as one.
_SHAPES = {
    "A": [(True, False)],
    "D": [(False, True)],
    "M": [(False, False)],
    "R": [(False, False)],
    "T": [(False, True), (True, False)],
}


@dataclass(frozen=True)
class _Section:
    """What git printed under one "diff --git" line, with unidiff's reading of it."""

    parsed: PatchedFile
    hunk_texts: tuple[str, ...]


# -- parsing ---------------------------------------------------------------------------------


def needed_blobs(raw: Iterable[RawEntry]) -> set[str]:
    """The blobs `parse_diff` needs: both sides of every change that is not a submodule."""
    return {
        sha
        for entry in raw
        if not _is_submodule(entry)
        for sha, mode in ((entry.old_sha, entry.old_mode), (entry.new_sha, entry.new_mode))
        if mode
    }


def parse_diff(raw: Sequence[RawEntry], patch: str, blobs: Mapping[str, bytes]) -> Diff:
    """The Diff of `git diff --raw` entries, the `git diff -p` text of the same two commits
    (same options, so the same files in the same order) and the blobs of `needed_blobs(raw)`."""
    sections = iter(_sections(patch))
    files: list[FileDiff] = []
    hunks: list[Hunk] = []
    skipped: list[str] = []
    for entry in raw:
        mine = _take(sections, entry)
        if _is_submodule(entry):
            skipped.append(entry.new_path)
            continue
        file, units = _file_diff(len(files), entry, mine, blobs)
        files.append(file)
        hunks.extend(units)
    if next(sections, None) is not None:
        raise InconsistentDiff("git's patch lists more files than its raw diff")
    return Diff(tuple(files), tuple(hunks), tuple(skipped))


def _is_submodule(entry: RawEntry) -> bool:
    return _GITLINK in (entry.old_mode, entry.new_mode)


def _count_lines(data: bytes) -> int:
    """The lines of `data`, as git counts them: each ends after a b"\\n" (git knows no other
    line end, unlike bytes.splitlines), and a last line without one is a line of its own."""
    return data.count(b"\n") + (not data.endswith(b"\n") and bool(data))


def _sections(patch: str) -> list[_Section]:
    lines = _split_lines(patch)
    starts = [i for i, line in enumerate(lines) if line.startswith("diff --git ")]
    try:
        parsed = PatchSet(_with_neutral_names(lines), metadata_only=True)
    except UnidiffParseError as error:
        raise InconsistentDiff(f"unidiff cannot read git's patch: {error}") from error
    if [(file.diff_line_no or 0) - 1 for file in parsed] != starts:
        raise InconsistentDiff("unidiff split git's patch into files differently")
    spans = pairwise([*starts, len(lines)])
    return [
        _Section(file, _hunk_texts(lines[start:end], len(file)))
        for file, (start, end) in zip(parsed, spans, strict=True)
    ]


def _split_lines(text: str) -> list[str]:
    """`text` split after each "\\n" only, as git ends lines (str.splitlines would also end
    them at "\\r", form feeds and more). unidiff gets these very lines: given one string, it
    would copy the whole patch into a StringIO, four bytes per character."""
    return _LINE.findall(text)


def _with_neutral_names(lines: list[str]) -> list[str]:
    """The patch with every file header naming a/f and b/f, line for line.

    unidiff splits "diff --git a/a b/c b/a b/c" (the file "a b/c") at the wrong " b/" and then
    rejects the "+++" line as a target without source. We take paths from the raw entries, so
    unidiff does not need them; /dev/null stays, as it marks added and deleted files.
    """
    out = []
    in_header = False
    for line in lines:
        if line.startswith("diff --git "):
            in_header = True
            line = "diff --git a/f b/f\n"
        elif line.startswith("@@"):
            in_header = False
        elif in_header and line.startswith("--- ") and line != f"--- {_DEV_NULL}\n":
            line = "--- a/f\n"
        elif in_header and line.startswith("+++ ") and line != f"+++ {_DEV_NULL}\n":
            line = "+++ b/f\n"
        out.append(line)
    return out


def _hunk_texts(lines: list[str], count: int) -> tuple[str, ...]:
    # Within one file's section only hunk headers start with "@@": every line of a hunk body
    # starts with " ", "+", "-" or "\".
    starts = [i for i, line in enumerate(lines) if line.startswith("@@")]
    if len(starts) != count:
        raise InconsistentDiff(f"{len(starts)} hunk headers where unidiff read {count} hunks")
    return tuple("".join(lines[start:end]) for start, end in pairwise([*starts, len(lines)]))


def _take(sections: Iterable[_Section], entry: RawEntry) -> list[_Section]:
    shapes = _SHAPES.get(entry.status)
    if shapes is None:
        raise InconsistentDiff(f"unexpected status {entry.status} for {entry.new_path}")
    # shapes first: zip stops at its end without pulling one section too many.
    mine = [section for _, section in zip(shapes, sections, strict=False)]
    if not _agrees(entry, mine, shapes):
        raise InconsistentDiff(f"git's patch and raw diff disagree at {entry.new_path}")
    return mine


def _agrees(entry: RawEntry, mine: list[_Section], shapes: list[tuple[bool, bool]]) -> bool:
    files = [section.parsed for section in mine]
    seen = [(file.source_file == _DEV_NULL, file.target_file == _DEV_NULL) for file in files]
    return (
        seen == shapes
        and _same_mode(files[0].source_mode, entry.old_mode)
        and _same_mode(files[-1].target_mode, entry.new_mode)
    )


def _same_mode(text: str | None, mode: int) -> bool:
    return text is None or int(text, 8) == mode


def _file_diff(
    index: int, entry: RawEntry, mine: list[_Section], blobs: Mapping[str, bytes]
) -> tuple[FileDiff, list[Hunk]]:
    old = blobs[entry.old_sha] if entry.old_mode else None
    new = blobs[entry.new_sha] if entry.new_mode else None
    binary = any(section.parsed.is_binary_file for section in mine)
    drafts = _units(entry, mine, old, new, binary)
    units = [
        dataclasses.replace(unit, id=f"{index}.{n}", file=index) for n, unit in enumerate(drafts)
    ]
    file = FileDiff(
        index=index,
        status=entry.status,
        old_path=entry.old_path if entry.old_mode else None,
        new_path=entry.new_path if entry.new_mode else None,
        old_mode=entry.old_mode,
        new_mode=entry.new_mode,
        old_content=old,
        new_content=new,
        binary=binary,
        units=tuple(unit.id for unit in units),
    )
    return file, units


def _units(
    entry: RawEntry, mine: list[_Section], old: bytes | None, new: bytes | None, binary: bool
) -> list[Hunk]:
    """The file's units without ids: whole-file units first, then text hunks."""
    if entry.status == "A":
        return [_whole("add", entry, old, new, _creation(entry.new_mode) + _body(mine), mine)]
    if entry.status == "D":
        return [_whole("delete", entry, old, new, _deletion(entry.old_mode) + _body(mine), mine)]
    units = []
    if entry.status == "R":
        units.append(_whole("rename", entry, old, new, _rename(entry), []))
    type_changed = retyped(entry.old_mode, entry.new_mode)
    if not type_changed and entry.old_mode != entry.new_mode:
        units.append(_whole("mode", entry, old, new, _mode_change(entry), []))
    if type_changed:  # a type change may keep the blob (file "x" -> symlink to "x"): still a change
        units.append(_whole("content", entry, old, new, _mode_change(entry) + _body(mine), mine))
    elif entry.old_sha != entry.new_sha and (binary or entry.new_mode == _SYMLINK):
        units.append(_whole("content", entry, old, new, _body(mine), mine))
    elif entry.old_sha != entry.new_sha:
        units.extend(_text_units(entry.new_path, mine[0]))
    return units


def _whole(
    kind: Kind,
    entry: RawEntry,
    old: bytes | None,
    new: bytes | None,
    diff: str,
    mine: list[_Section],
) -> Hunk:
    old_lines = 0 if old is None else _count_lines(old)
    new_lines = 0 if new is None else _count_lines(new)
    return Hunk(
        id="",
        file=-1,
        path=entry.old_path if kind == "delete" else entry.new_path,
        kind=kind,
        old_start=min(old_lines, 1),
        old_lines=old_lines,
        new_start=min(new_lines, 1),
        new_lines=new_lines,
        header="",
        diff=diff,
        added=sum(hunk.added for section in mine for hunk in section.parsed),
        removed=sum(hunk.removed for section in mine for hunk in section.parsed),
    )


def _text_units(path: str, section: _Section) -> list[Hunk]:
    return [
        Hunk(
            id="",
            file=-1,
            path=path,
            kind="text",
            old_start=hunk.source_start,
            old_lines=hunk.source_length,
            new_start=hunk.target_start,
            new_lines=hunk.target_length,
            header=hunk.section_header,
            diff=text,
            added=hunk.added,
            removed=hunk.removed,
        )
        for hunk, text in zip(section.parsed, section.hunk_texts, strict=True)
    ]


def _body(mine: list[_Section]) -> str:
    return "".join(
        "Binary files differ\n" if section.parsed.is_binary_file else "".join(section.hunk_texts)
        for section in mine
    )


def _creation(mode: int) -> str:
    return f"new file mode {mode:o}\n"


def _deletion(mode: int) -> str:
    return f"deleted file mode {mode:o}\n"


def _rename(entry: RawEntry) -> str:
    return f"rename from {entry.old_path}\nrename to {entry.new_path}\n"


def _mode_change(entry: RawEntry) -> str:
    return f"old mode {entry.old_mode:o}\nnew mode {entry.new_mode:o}\n"
