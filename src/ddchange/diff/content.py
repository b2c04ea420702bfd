"""From a chosen set of change units back to file states: what every touched path must hold.

Owns materialization: `materialize` turns any subset of unit ids into the state of each path
(byte-exact, slices of the blobs, see parse.py), `splice` splices text units into the old
content, and `differences` checks the whole diff against BAD's tree. Pure: no git, no files.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Mapping, Sequence

from ddchange.diff.hunks import (
    Conflict,
    Diff,
    FileDiff,
    FileState,
    Hunk,
    Kind,
    Spliced,
    line_starts,
    pieces,
    retyped,
)


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


def _content(file: FileDiff, units: list[Hunk], kinds: set[Kind]) -> bytes | Spliced:
    old, new = file.old_content or b"", file.new_content or b""
    if "content" in kinds:
        return new
    texts = [unit for unit in units if unit.kind == "text"]
    if not texts:
        return old  # no need to split what stays
    return splice(old, new, texts, old_at=file.old_starts, new_at=file.new_starts)


def _takes_new_mode(file: FileDiff, kinds: set[Kind]) -> bool:
    # The mode unit changes the mode of a regular file; a type change's content unit carries
    # the new mode with it (a symlink target is no use with a file's mode).
    return "mode" in kinds or ("content" in kinds and retyped(file.old_mode, file.new_mode))


def splice(
    old: bytes,
    new: bytes,
    hunks: Sequence[Hunk],
    *,
    old_at: array[int] | None = None,
    new_at: array[int] | None = None,
) -> Spliced:
    """`old` with each of `hunks` (text hunks of the diff from `old` to `new`, top to bottom)
    applied: its old lines replaced by its lines of `new`. `old_at` and `new_at` are where
    each line of `old` and `new` starts (`line_starts`), when known already.

    Context lines are equal on both sides, so replacing them too is harmless, and a hunk's new
    lines are right whichever other hunks are applied: hunks never overlap in `old`.
    """
    old_at = line_starts(old) if old_at is None else old_at
    new_at = line_starts(new) if new_at is None else new_at
    # Slices, not copies: the bytes are copied only where they are written.
    parts = []
    done = 0
    for hunk in hunks:
        start = _first_index(hunk.old_start, hunk.old_lines)
        first_new = _first_index(hunk.new_start, hunk.new_lines)
        parts.append((old, done, old_at[start]))
        parts.append((new, new_at[first_new], new_at[first_new + hunk.new_lines]))
        done = old_at[start + hunk.old_lines]
    parts.append((old, done, len(old)))
    return Spliced(parts)


def _first_index(start: int, length: int) -> int:
    # "@@ -5,0 +6,2 @@" inserts after line 5: an empty range names the line before it.
    return start if length == 0 else start - 1


# -- checking --------------------------------------------------------------------------------


def touched_paths(diff: Diff) -> list[str]:
    """Every path some unit can change (old and new paths), sorted; what `materialize` covers."""
    return sorted({path for file in diff.files for path in (file.origin, file.path)})


Fingerprint = tuple[int, str]  # a file's mode and git object name


def differences(
    diff: Diff,
    chosen: Collection[str],
    expected: Mapping[str, Fingerprint | None],
    object_name: Callable[[Sequence[bytes | memoryview]], str],
) -> list[str]:
    """The paths whose state under `chosen` differs from `expected` (absent there = None),
    compared by mode and git object name (`object_name` of the content's pieces): no content
    is joined, so a huge file costs no copy of itself.

    The self-check before a search: with every unit chosen, the states must be BAD's.
    """
    picked = frozenset(chosen)
    seen: dict[str, Fingerprint | None] = {}
    clashes: set[str] = set()
    for file in diff.files:
        units = [diff.by_id[unit] for unit in file.units if unit in picked]
        for path, state in _file_states(file, units).items():
            mark = None if state is None else (state.mode, object_name(pieces(state.content)))
            if seen.get(path) is not None and mark is not None and mark != seen[path]:
                clashes.add(path)  # two file changes put different files here (see _merged)
            if seen.get(path) is None:
                seen[path] = mark
    wrong = {path for path, mark in seen.items() if mark != expected.get(path)}
    return sorted(wrong | clashes)
