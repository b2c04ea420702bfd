"""From a git diff to change units, and from any chosen set of units back to file states.

Owns the model that delta debugging searches over. `parse_diff` turns git's raw entries, its
patch text and the blobs of both sides into a `Diff`: one `FileDiff` per changed path, each with
its change units (`Hunk`): git's own text hunks, plus one whole-file unit for each change that
is not about lines (an added or deleted file, a rename, a mode change, a binary, symlink or type
change). `materialize` turns any subset of unit ids into the state every touched path must have.

Key idea: unidiff only tells us *where* each hunk is (its line numbers); what a hunk puts there
is read from the blob of the new side. Materialization is therefore byte-exact for CRLF, a
missing final newline and non-UTF-8 text, which no round trip through patch text would be.
Lines are split on b"\\n" only, as git's diff does (bytes.splitlines would also split on \\r).

Hunk ids are f"{file}.{n}": the n-th unit of the file-th changed file, both counted from 0 in
git's diff order (a file's whole-file units first, then its text hunks from top to bottom). The
same GOOD, BAD and git options give the same ids.

Submodules (gitlinks) are no units: they are listed in `Diff.skipped` and stay as in GOOD.

Pure: no git, no processes, no filesystem.
"""

from __future__ import annotations

import dataclasses
import io
import re
from array import array
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING, Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

if TYPE_CHECKING:  # types only: importing ddchange.git would start GitPython
    from ddchange.git import RawEntry

Kind = Literal["text", "add", "delete", "rename", "mode", "content"]

_FORMAT = 0o170000  # the file-type bits of a git mode
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
        """Line starts of the old content (see `_line_starts`), computed once per search."""
        return _line_starts(self.old_content or b"")

    @cached_property
    def new_starts(self) -> array[int]:
        """Line starts of the new content."""
        return _line_starts(self.new_content or b"")

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


@dataclass(frozen=True)
class FileState:
    """What a path must hold: its bytes (a symlink's target) and its git mode."""

    content: bytes
    mode: int  # 0o100644, 0o100755 or 0o120000


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


def _line_starts(data: bytes) -> array[int]:
    """Where each line of `data` starts, then len(data): line k is data[starts[k]:starts[k+1]].

    Lines end after each b"\\n" only, as in git's diff (bytes.splitlines would also end them at
    b"\\r"); a last line without one is a line of its own. Read about a megabyte of lines at a
    time, so a 50 MB file never exists as a million line objects at once.
    """
    starts = array("Q", [0])
    reader = io.BytesIO(data)  # shares the buffer of `data`, no copy
    while lines := reader.readlines(1 << 20):
        starts.extend(accumulate(map(len, lines), initial=starts.pop()))
    return starts


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
        index,
        entry.status,
        entry.old_path if entry.old_mode else None,
        entry.new_path if entry.new_mode else None,
        entry.old_mode,
        entry.new_mode,
        old,
        new,
        binary,
        tuple(unit.id for unit in units),
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
    retyped = _retyped(entry.old_mode, entry.new_mode)
    if not retyped and entry.old_mode != entry.new_mode:
        units.append(_whole("mode", entry, old, new, _mode_change(entry), []))
    if retyped:  # a type change may keep the blob (file "x" -> symlink to "x"): still a change
        units.append(_whole("content", entry, old, new, _mode_change(entry) + _body(mine), mine))
    elif entry.old_sha != entry.new_sha and (binary or entry.new_mode == _SYMLINK):
        units.append(_whole("content", entry, old, new, _body(mine), mine))
    elif entry.old_sha != entry.new_sha:
        units.extend(_text_units(entry.new_path, mine[0]))
    return units


def _retyped(old_mode: int, new_mode: int) -> bool:
    return old_mode & _FORMAT != new_mode & _FORMAT


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


# -- materializing ---------------------------------------------------------------------------


def materialize(diff: Diff, chosen: Collection[str]) -> dict[str, FileState | None]:
    """The state of every path any file change touches, with exactly the `chosen` units
    applied to GOOD: None where the path must not exist. Conflict if no tree has that state.

    Invariant (checked by tests on real repositories): no units give GOOD, all units give BAD.
    """
    picked = frozenset(chosen)
    unknown = picked - diff.by_id.keys()
    if unknown:
        raise ValueError(f"unknown hunk ids: {sorted(unknown)}")
    wanted: dict[str, FileState | None] = {}
    for file in diff.files:
        units = [diff.by_id[unit] for unit in file.units if unit in picked]
        for path, state in _file_states(file, units).items():
            wanted[path] = _merged(path, wanted, state)
    _check_directories(wanted)
    return wanted


def _merged(
    path: str, wanted: Mapping[str, FileState | None], state: FileState | None
) -> FileState | None:
    # git without -B (which we do not ask for) never names one path in two file changes; a
    # broken-up rewrite would ("a" renamed to "b", a new "a"). Then None only says "this change
    # puts nothing here", so the other may still create the path; two different states conflict.
    if path not in wanted or wanted[path] is None:
        return state
    if state is None or state == wanted[path]:
        return wanted[path]
    raise Conflict(path)


def _check_directories(wanted: Mapping[str, FileState | None]) -> None:
    # A path cannot be a file and a directory at once (file "d" kept while "d/x" is added).
    files = {path for path, state in wanted.items() if state is not None}
    for path in sorted(files):
        parent = path
        while "/" in parent:
            parent = parent.rsplit("/", 1)[0]
            if parent in files:
                raise Conflict(parent)


def _file_states(file: FileDiff, units: list[Hunk]) -> dict[str, FileState | None]:
    kinds = {unit.kind for unit in units}
    old, new = file.before, file.after
    if old is None or new is None:  # an added or deleted file: its one unit is all of it
        return {file.path: new if kinds else old}
    content = _content(file, units, kinds)
    state = FileState(content, new.mode if _takes_new_mode(file, kinds) else old.mode)
    if file.status != "R":
        return {file.path: state}
    moved = "rename" in kinds
    return {file.origin: None if moved else state, file.path: state if moved else None}


def _content(file: FileDiff, units: list[Hunk], kinds: set[Kind]) -> bytes:
    old, new = file.old_content or b"", file.new_content or b""
    if "content" in kinds:
        return new
    texts = [unit for unit in units if unit.kind == "text"]
    if not texts:
        return old  # no need to split what stays
    return _splice(old, new, file.old_starts, file.new_starts, texts)


def _takes_new_mode(file: FileDiff, kinds: set[Kind]) -> bool:
    # The mode unit changes the mode of a regular file; a type change's content unit carries
    # the new mode with it (a symlink target is no use with a file's mode).
    return "mode" in kinds or ("content" in kinds and _retyped(file.old_mode, file.new_mode))


def apply_hunks(old: bytes, new: bytes, hunks: Sequence[Hunk]) -> bytes:
    """`old` with each of `hunks` (text hunks of the diff from `old` to `new`, top to bottom)
    applied: its old lines replaced by its lines of `new`.

    Context lines are equal on both sides, so replacing them too is harmless, and a hunk's new
    lines are right whichever other hunks are applied: hunks never overlap in `old`.
    """
    return _splice(old, new, _line_starts(old), _line_starts(new), hunks)


def _splice(
    old: bytes, new: bytes, old_at: array[int], new_at: array[int], hunks: Sequence[Hunk]
) -> bytes:
    # Slices of memoryviews: the bytes are copied once, into the result.
    old_view, new_view = memoryview(old), memoryview(new)
    pieces: list[memoryview] = []
    done = 0
    for hunk in hunks:
        start = _first_index(hunk.old_start, hunk.old_lines)
        first_new = _first_index(hunk.new_start, hunk.new_lines)
        pieces.append(old_view[done : old_at[start]])
        pieces.append(new_view[new_at[first_new] : new_at[first_new + hunk.new_lines]])
        done = old_at[start + hunk.old_lines]
    pieces.append(old_view[done:])
    return b"".join(pieces)


def _first_index(start: int, length: int) -> int:
    # "@@ -5,0 +6,2 @@" inserts after line 5: an empty range names the line before it.
    return start if length == 0 else start - 1


# -- checking --------------------------------------------------------------------------------


def touched_paths(diff: Diff) -> list[str]:
    """Every path some unit can change (old and new paths), sorted; what `materialize` covers."""
    return sorted({path for file in diff.files for path in (file.origin, file.path)})


def differences(
    diff: Diff, chosen: Collection[str], expected: Mapping[str, FileState | None]
) -> list[str]:
    """The paths whose state under `chosen` differs from `expected` (absent there = None).

    The self-check before a search: with every unit chosen, the states must be BAD's.
    """
    states = materialize(diff, chosen)
    return [path for path in sorted(states) if states[path] != expected.get(path)]


# -- line changes ----------------------------------------------------------------------------


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
