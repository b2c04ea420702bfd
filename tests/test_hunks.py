"""Tests for the diff layer: diffs of real repositories into units, and units back into files."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from gitsandbox import ODD_NAMES, Sandbox, Zoo, hermetic, init
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ddchange import git
from ddchange.diff import content, hunks, linechanges, parse, read
from ddchange.diff.hunks import (
    Conflict,
    Diff,
    FileDiff,
    FileState,
    Hunk,
    InconsistentDiff,
    Spliced,
)


@pytest.fixture(scope="module")
def diff(zoo: Zoo) -> Diff:
    return read.read_diff(git.open_repo(zoo.repo.path), zoo.good, zoo.bad)


def _file(diff: Diff, path: str) -> FileDiff:
    (file,) = [file for file in diff.files if file.path == path]
    return file


def _units(diff: Diff, path: str, kind: str | None = None) -> list[Hunk]:
    units = [diff.by_id[unit] for unit in _file(diff, path).units]
    return [unit for unit in units if kind in (None, unit.kind)]


def _ids(*units: Hunk) -> set[str]:
    return {unit.id for unit in units}


# -- the self-check on every odd case --------------------------------------------------------


def _differences(diff: Diff, chosen: Iterable[str], repo: Sandbox, rev: str) -> list[str]:
    """The self-check's answer: the paths where `chosen` applied to GOOD is not `rev`."""
    opened = git.open_repo(repo.path)
    marks = read.tree_marks(opened, rev, content.touched_paths(diff))
    return content.differences(diff, chosen, marks, git.object_namer(opened))


def test_no_units_give_good_and_all_units_give_bad(zoo: Zoo, diff: Diff) -> None:
    everything = [hunk.id for hunk in diff.hunks]
    assert _differences(diff, [], zoo.repo, zoo.good) == []
    assert _differences(diff, everything, zoo.repo, zoo.bad) == []


def test_differences_names_the_paths_that_differ(zoo: Zoo, diff: Diff) -> None:
    (mode,) = _units(diff, "tool.sh", "mode")
    everything_but_mode = {hunk.id for hunk in diff.hunks} - {mode.id}
    assert _differences(diff, everything_but_mode, zoo.repo, zoo.bad) == ["tool.sh"]
    text = next(hunk for hunk in diff.hunks if hunk.kind == "text")
    without_one = {hunk.id for hunk in diff.hunks} - {text.id}
    assert _differences(diff, without_one, zoo.repo, zoo.bad) == [text.path], "by content too"


def test_empty_files_are_renamed_added_and_deleted(tmp_path: Path) -> None:
    # git pairs a deleted and an added empty file as an exact rename; the rest stay A and D.
    repo = init(tmp_path / "repo")
    for name in ("gone-1", "gone-2"):
        repo.write(name, "")
    good = repo.commit()
    repo.remove("gone-1")
    repo.remove("gone-2")
    repo.write("new", "")
    bad = repo.commit()
    diff = read.read_diff(git.open_repo(repo.path), good, bad)
    assert sorted(file.status for file in diff.files) == ["D", "R"]
    assert _differences(diff, [], repo, good) == []
    everything = [hunk.id for hunk in diff.hunks]
    assert _differences(diff, everything, repo, bad) == []


# -- what the units are ----------------------------------------------------------------------

KINDS = {
    **dict.fromkeys(ODD_NAMES, ["text"]),
    "plain.c": ["text", "text", "text"],
    "module.py": ["text"],
    "crlf.txt": ["text"],
    "noeol-gain.txt": ["text"],
    "noeol-lose.txt": ["text"],
    "noeol-both.txt": ["text"],
    "latin1.txt": ["text"],
    "insert.txt": ["text"],
    "empty-grows.txt": ["text"],
    "shrinks-to-empty.txt": ["text"],
    "image.bin": ["content"],
    "link": ["content"],
    "becomes-link": ["content"],
    "link-becomes-file": ["content"],
    "script.sh": ["mode"],
    "tool.sh": ["mode", "text"],
    "moved-new.txt": ["rename"],
    "edited-new.txt": ["rename", "text", "text"],
    "renamed-here": ["rename"],
    "added.txt": ["add"],
    "added-empty": ["add"],
    "added.bin": ["add"],
    "renamed-away/inner.txt": ["add"],
    "dtf": ["add"],
    "deleted.txt": ["delete"],
    "dtf/x": ["delete"],
}


def test_each_change_gets_the_units_it_needs(diff: Diff) -> None:
    assert {file.path: [unit.kind for unit in _units(diff, file.path)] for file in diff.files} == (
        KINDS
    )
    assert diff.skipped == ("sub",)


def test_file_records_carry_both_sides(diff: Diff) -> None:
    edited = _file(diff, "edited-new.txt")
    assert (edited.status, edited.old_path, edited.new_path) == (
        "R",
        "edited-old.txt",
        "edited-new.txt",
    )
    assert edited.old_content == b"".join(b"edited line %d\n" % n for n in range(20))
    assert edited.new_content == edited.old_content.replace(b"5", b"five")
    added = _file(diff, "added.txt")
    assert (added.old_path, added.old_mode, added.old_content) == (None, 0, None)
    assert (added.new_mode, added.new_content) == (0o100644, b"brand\nnew\n")
    deleted = _file(diff, "deleted.txt")
    assert (deleted.new_path, deleted.new_mode, deleted.new_content) == (None, 0, None)
    assert {file.path for file in diff.files if file.binary} == {"image.bin", "added.bin"}
    assert _file(diff, "becomes-link").old_content == _file(diff, "becomes-link").new_content


def test_text_units_are_gits_hunks(zoo: Zoo, diff: Diff) -> None:
    patch = git.diff_patch(git.open_repo(zoo.repo.path), zoo.good, zoo.bad)
    coordinates = [
        (h.old_start, h.old_lines, h.new_start, h.new_lines, h.header, h.added, h.removed)
        for h in _units(diff, "plain.c")
    ]
    assert coordinates == [
        (1, 4, 1, 4, "", 1, 1),
        (25, 7, 25, 7, "int f2(int x)", 1, 1),
        (42, 7, 42, 7, "int f5(int x)", 1, 1),
    ]
    first = _units(diff, "plain.c")[0]
    assert (
        first.diff
        == "@@ -1,4 +1,4 @@\n-int f0(int x)\n+int f0(long x)\n {\n     int y = x;\n     y += 0;\n"
    )
    assert all(unit.diff in patch for unit in diff.hunks if unit.kind == "text")
    (insertion,) = _units(diff, "insert.txt")
    assert (insertion.old_lines, insertion.new_lines, insertion.added, insertion.removed) == (
        6,
        7,
        1,
        0,
    )
    (grown,) = _units(diff, "empty-grows.txt")
    assert (grown.old_start, grown.old_lines, grown.new_start, grown.new_lines) == (0, 0, 1, 2)
    assert _units(diff, "module.py")[0].header == "def area(self):"
    (lost,) = _units(diff, "noeol-lose.txt")
    assert lost.diff.endswith("+beta\n\\ No newline at end of file\n")


def test_whole_file_units_describe_the_whole_file(diff: Diff) -> None:
    (added,) = _units(diff, "added.txt")
    assert (added.old_start, added.old_lines, added.new_start, added.new_lines) == (0, 0, 1, 2)
    assert added.diff == "new file mode 100644\n@@ -0,0 +1,2 @@\n+brand\n+new\n"
    assert (added.added, added.removed) == (2, 0)
    (deleted,) = _units(diff, "deleted.txt")
    assert (deleted.path, deleted.old_lines, deleted.new_start, deleted.new_lines) == (
        "deleted.txt",
        2,
        0,
        0,
    )
    assert _units(diff, "image.bin")[0].diff == "Binary files differ\n"
    assert _units(diff, "script.sh")[0].diff == "old mode 100644\nnew mode 100755\n"
    assert (
        _units(diff, "moved-new.txt")[0].diff
        == "rename from moved-old.txt\nrename to moved-new.txt\n"
    )
    assert _units(diff, "becomes-link")[0].diff.startswith("old mode 100644\nnew mode 120000\n")


def test_ids_are_short_unique_ordered_and_deterministic(zoo: Zoo, diff: Diff) -> None:
    ids = [hunk.id for hunk in diff.hunks]
    assert len(set(ids)) == len(ids)
    assert ids == [unit for file in diff.files for unit in file.units]
    assert all(hunk.id.startswith(f"{hunk.file}.") for hunk in diff.hunks)
    assert [file.index for file in diff.files] == list(range(len(diff.files)))
    assert diff.by_id["0.0"] == diff.hunks[0]
    assert read.read_diff(git.open_repo(zoo.repo.path), zoo.good, zoo.bad) == diff


def test_touched_paths_are_old_and_new_paths_but_no_submodule(diff: Diff) -> None:
    paths = content.touched_paths(diff)
    assert {"moved-old.txt", "moved-new.txt", "dtf", "dtf/x", *ODD_NAMES} <= set(paths)
    assert "sub" not in paths
    assert paths == sorted(paths)


# -- materializing single units --------------------------------------------------------------


def test_a_rename_alone_moves_the_old_content(diff: Diff) -> None:
    (rename,) = _units(diff, "edited-new.txt", "rename")
    states = content.materialize(diff, _ids(rename))
    assert states["edited-old.txt"] is None
    assert states["edited-new.txt"] == FileState(
        _file(diff, "edited-new.txt").old_content or b"", 0o100644
    )


def test_an_edit_of_a_renamed_file_alone_stays_at_the_old_path(diff: Diff) -> None:
    first, _second = _units(diff, "edited-new.txt", "text")
    states = content.materialize(diff, _ids(first))
    assert states["edited-new.txt"] is None
    old = states["edited-old.txt"]
    assert old is not None
    assert b"edited line five\n" in bytes(old.content)
    assert b"edited line 15\n" in bytes(old.content)


def test_a_configuration_of_a_text_file_is_slices_of_its_blobs(diff: Diff) -> None:
    """No copy of the file is made until it is written: a 50 MB file costs its two blobs."""
    first, _second = _units(diff, "edited-new.txt", "text")
    file = _file(diff, "edited-new.txt")
    state = content.materialize(diff, _ids(first))["edited-old.txt"]
    assert state is not None
    assert isinstance(state.content, Spliced)
    blobs = [blob for blob, _, _ in state.content.parts]
    assert any(blob is file.new_content for blob in blobs)
    assert all(blob is file.old_content or blob is file.new_content for blob in blobs)


def test_spliced_bytes_are_equal_by_value_whatever_their_pieces() -> None:
    blob = bytes(range(256)) * 12_000  # 3 MB: compared a megabyte at a time, across pieces
    cut = Spliced([(blob, 0, 5), (blob, 5, 1_500_001), (blob, 1_500_001, len(blob))])
    whole = Spliced([(blob, 0, len(blob))])
    assert cut == blob == whole
    assert bytes(cut) == blob
    assert len(cut) == len(blob)
    changed = blob[:2_000_000] + b"?" + blob[2_000_001:]
    assert cut != changed
    assert Spliced([(changed, 0, len(changed))]) != cut
    assert cut != blob[:-1]
    assert cut != Spliced([(blob, 0, 5)])
    assert b"".join(hunks.pieces(cut)) == b"".join(hunks.chunks(cut)) == blob


def test_mode_and_content_of_a_file_are_separate(diff: Diff) -> None:
    (mode,) = _units(diff, "tool.sh", "mode")
    (text,) = _units(diff, "tool.sh", "text")
    assert content.materialize(diff, _ids(mode))["tool.sh"] == FileState(
        b"#!/bin/sh\necho old\n", 0o100755
    )
    assert content.materialize(diff, _ids(text))["tool.sh"] == FileState(
        b"#!/bin/sh\necho new\n", 0o100644
    )


def test_a_type_change_carries_its_mode(diff: Diff) -> None:
    (to_link,) = _units(diff, "becomes-link")
    (to_file,) = _units(diff, "link-becomes-file")
    states = content.materialize(diff, _ids(to_link, to_file))
    assert states["becomes-link"] == FileState(b"crlf.txt", 0o120000)
    assert states["link-becomes-file"] == FileState(b"now a file\n", 0o100644)
    assert content.materialize(diff, [])["becomes-link"] == FileState(b"crlf.txt", 0o100644)


def test_a_file_where_a_directory_stays_is_a_conflict(diff: Diff) -> None:
    (new_file,) = _units(diff, "dtf")
    (old_inner,) = _units(diff, "dtf/x")
    with pytest.raises(Conflict) as raised:
        content.materialize(diff, _ids(new_file))
    assert raised.value.path == "dtf"
    assert content.materialize(diff, _ids(new_file, old_inner))["dtf/x"] is None
    assert content.materialize(diff, _ids(old_inner))["dtf"] is None


def test_a_new_file_under_a_path_not_renamed_away_is_a_conflict(diff: Diff) -> None:
    (inner,) = _units(diff, "renamed-away/inner.txt")
    (rename,) = _units(diff, "renamed-here")
    with pytest.raises(Conflict) as raised:
        content.materialize(diff, _ids(inner))
    assert raised.value.path == "renamed-away"
    states = content.materialize(diff, _ids(inner, rename))
    assert states["renamed-away"] is None
    assert states["renamed-away/inner.txt"] is not None


def test_two_changes_wanting_one_path_in_two_states_conflict() -> None:
    # git without -B never lists a path twice; a broken-up rewrite (-B -M) would: "a" renamed
    # to "b" while a new "a" is written. Built by hand, as ddchange does not ask for -B.
    text = FileState(b"x\n", 0o100644)
    renamed = FileDiff(
        index=0,
        status="R",
        old_path="a",
        new_path="b",
        old_mode=0o100644,
        new_mode=0o100644,
        old_content=b"x\n",
        new_content=b"x\n",
        binary=False,
        units=("0.0",),
    )
    added = FileDiff(
        index=1,
        status="A",
        old_path=None,
        new_path="a",
        old_mode=0,
        new_mode=0o100644,
        old_content=None,
        new_content=b"y\n",
        binary=False,
        units=("1.0",),
    )
    units = (
        Hunk(
            id="0.0",
            file=0,
            path="b",
            kind="rename",
            old_start=1,
            old_lines=1,
            new_start=1,
            new_lines=1,
            header="",
            diff="rename from a\nrename to b\n",
            added=0,
            removed=0,
        ),
        Hunk(
            id="1.0",
            file=1,
            path="a",
            kind="add",
            old_start=0,
            old_lines=0,
            new_start=1,
            new_lines=1,
            header="",
            diff="new file mode 100644\n",
            added=1,
            removed=0,
        ),
    )
    diff = Diff((renamed, added), units, ())
    with pytest.raises(Conflict) as raised:
        content.materialize(diff, {"1.0"})
    assert raised.value.path == "a"
    assert content.materialize(diff, set()) == {"a": text, "b": None}
    assert content.materialize(diff, {"0.0", "1.0"}) == {
        "a": FileState(b"y\n", 0o100644),
        "b": text,
    }


def test_unknown_ids_are_refused(diff: Diff) -> None:
    with pytest.raises(ValueError, match="999.0"):
        content.materialize(diff, {"999.0"})


def _text(old_start: int, old_lines: int, new_start: int, new_lines: int) -> Hunk:
    return Hunk(
        id="0.0",
        file=0,
        path="f",
        kind="text",
        old_start=old_start,
        old_lines=old_lines,
        new_start=new_start,
        new_lines=new_lines,
        header="",
        diff="",
        added=0,
        removed=0,
    )


@pytest.mark.parametrize(
    ("new", "hunk"),
    [
        (b"1\n2\nX\n3\n", _text(2, 0, 3, 1)),  # git diff -U0: "@@ -2,0 +3 @@" inserts after 2
        (b"1\n3\n", _text(2, 1, 1, 0)),  # "@@ -2 +1,0 @@" deletes line 2
        (b"X\n1\n2\n3\n", _text(0, 0, 1, 1)),  # "@@ -0,0 +1 @@" inserts before line 1
    ],
)
def test_splice_reads_an_empty_range_as_after_that_line(new: bytes, hunk: Hunk) -> None:
    # With -U3 only an empty file has an empty range; without context every insertion does.
    assert bytes(content.splice(b"1\n2\n3\n", new, [hunk])) == new


# -- when git's two outputs disagree ----------------------------------------------------------


def _inputs(zoo: Zoo) -> tuple[list[git.RawEntry], str, dict[str, bytes]]:
    repo = git.open_repo(zoo.repo.path)
    raw = git.diff_raw(repo, zoo.good, zoo.bad)
    return (
        raw,
        git.diff_patch(repo, zoo.good, zoo.bad),
        git.read_blobs(repo, parse.needed_blobs(raw)),
    )


def test_raw_and_patch_listing_different_files_is_an_internal_error(zoo: Zoo) -> None:
    raw, patch, blobs = _inputs(zoo)
    with pytest.raises(InconsistentDiff):
        parse.parse_diff(raw[:-1], patch, blobs)
    with pytest.raises(InconsistentDiff):
        parse.parse_diff(raw, patch[: patch.rindex("diff --git")], blobs)
    with pytest.raises(InconsistentDiff):
        parse.parse_diff(raw[1:], patch, blobs)


# -- purity --------------------------------------------------------------------------------


def test_hunks_imports_no_git_process_or_filesystem_module() -> None:
    script = (
        "import sys, ddchange.diff.hunks\n"
        "banned = {'git', 'subprocess', 'ddchange.git', 'pathlib', 'shutil', 'tempfile'}\n"
        "print(sorted(banned & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout == "[]\n"


# -- the key property: materialize agrees with `git apply` of the same hunks -------------------

LINES = st.sampled_from(
    [b"a\n", b"b\n", b"c\n", b"a\r\n", b"b\r\n", b"\n", b"\xe9t\xe9\n", b"d\re\n"]
)


@st.composite
def versions(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """A small text file and an edited version of it; either may lack its final newline."""
    old = draw(st.lists(LINES, max_size=24))
    new = list(old)
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.integers(0, len(new)))
        edit = draw(st.sampled_from(["insert", "delete", "replace"]))
        if edit != "insert" and at < len(new):
            del new[at]
        if edit != "delete":
            new[at:at] = draw(st.lists(LINES, min_size=1, max_size=3))
    return _maybe_unterminated(draw, b"".join(old)), _maybe_unterminated(draw, b"".join(new))


def _maybe_unterminated(draw: st.DrawFn, data: bytes) -> bytes:
    return data[:-1] if data.endswith(b"\n") and draw(st.booleans()) else data


@pytest.fixture(scope="module")
def playground(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    with pytest.MonkeyPatch.context() as monkeypatch:
        hermetic(monkeypatch)
        repo = init(tmp_path_factory.mktemp("playground") / "repo")
        repo.commit("root")
        return repo


def _two_versions(repo: Sandbox, old: bytes, new: bytes) -> Diff:
    """The diff of file f from `old` to `new`, committed one after the other in `repo`."""
    (repo.path / "f").write_bytes(old)
    good = repo.commit("old")
    (repo.path / "f").write_bytes(new)
    bad = repo.commit("new")
    return read.read_diff(git.open_repo(repo.path), good, bad)


def _git_apply(repo: Sandbox, old: bytes, units: list[Hunk], *options: str) -> bytes:
    """`old` with `units` applied by `git apply`, from the hunk texts git printed."""
    (repo.path / "f").write_bytes(old)
    if units:
        patch = "diff --git a/f b/f\n--- a/f\n+++ b/f\n" + "".join(unit.diff for unit in units)
        data = patch.encode("utf-8", "surrogateescape")
        repo.git("apply", "--whitespace=nowarn", *options, stdin=data)
    return (repo.path / "f").read_bytes()


@settings(
    max_examples=60,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(pair=versions(), mask=st.integers(0, 2**12 - 1))
@example(pair=(b"a\nb", b"a\nb\n"), mask=1)
@example(pair=(b"a\r\nb\r\n", b"a\r\nb\r"), mask=1)
@example(pair=(b"", b"a\n"), mask=1)
@example(pair=(b"a\nb\n", b""), mask=1)
@example(pair=(b"a\nb\nc\nd\ne\nf\ng\nh\ni\n", b"A\nb\nc\nd\ne\nf\ng\nh\nI"), mask=2)
def test_materialize_agrees_with_git_apply(
    playground: Sandbox, pair: tuple[bytes, bytes], mask: int
) -> None:
    old, new = pair
    diff = _two_versions(playground, old, new)
    units = [unit for n, unit in enumerate(diff.hunks) if mask >> n & 1]
    assert all(unit.kind == "text" for unit in diff.hunks)
    state = content.materialize(diff, _ids(*units)).get("f")
    assert (state.content if state else old) == _git_apply(playground, old, units)


def _renumbered(units: list[Hunk]) -> list[Hunk]:
    """`units` as a patch of their own: each new-side start shifted by what the chosen units
    before it add or remove (git applies a zero-context hunk where its numbers say)."""
    shifted, offset = [], 0
    for unit in units:
        if unit.new_lines == 0:
            start = unit.old_start + offset - 1
        elif unit.old_lines == 0:
            start = unit.old_start + offset + 1
        else:
            start = unit.old_start + offset
        header, _, body = unit.diff.partition("\n")
        old_range = header.split()[1]
        count = "" if unit.new_lines == 1 else f",{unit.new_lines}"
        text = f"@@ {old_range} +{start}{count} @@\n{body}"
        shifted.append(dataclasses.replace(unit, diff=text))
        offset += unit.new_lines - unit.old_lines
    return shifted


@st.composite
def unique_versions(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """Like `versions`, but no line occurs twice in a file (see the test below)."""
    endings = st.sampled_from([b"\n", b"\r\n", b"\rx\n", b"\xe9\n"])
    fresh = iter(range(10_000))
    old = [b"%d" % next(fresh) + draw(endings) for _ in range(draw(st.integers(0, 20)))]
    new = list(old)
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.integers(0, len(new)))
        edit = draw(st.sampled_from(["insert", "delete", "replace"]))
        if edit != "insert" and at < len(new):
            del new[at]
        if edit != "delete":
            count = draw(st.integers(1, 3))
            new[at:at] = [b"n%d" % next(fresh) + draw(endings) for _ in range(count)]
    return _maybe_unterminated(draw, b"".join(old)), _maybe_unterminated(draw, b"".join(new))


@settings(
    max_examples=60,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(pair=unique_versions(), mask=st.integers(0, 2**16 - 1))
@example(pair=(b"a\nb\nc\nd\n", b"A\nb\nC\nD\nE\n"), mask=0b10)
@example(pair=(b"a\nb", b"a\nB"), mask=1)
@example(pair=(b"a\nb\n", b"x\na\nb\ny"), mask=0b10)
@example(pair=(b"a\nb", b"a\nb\nc"), mask=0b01)
@example(pair=(b"a\nb", b"a\nb\nc"), mask=0b10)
@example(pair=(b"a\nb\nc\n", b"a\nB"), mask=0b01)
@example(pair=(b"1\n2\n3\n", b"1\nx\ny\n3\nz\n"), mask=0b0101)
def test_line_changes_agree_with_git_apply_of_zero_context_hunks(
    playground: Sandbox, pair: tuple[bytes, bytes], mask: int
) -> None:
    """Each line change is a zero-context hunk: any subset applies like `git apply
    --unidiff-zero` of the same hunks, and all of them (none of them) give BAD (GOOD).

    (With no context, git places a hunk by its preimage; the lines are unique so that the
    place is unambiguous.)"""
    old, new = pair
    diff = linechanges.split_lines(_two_versions(playground, old, new))
    units = [unit for n, unit in enumerate(diff.hunks) if mask >> n & 1]
    state = content.materialize(diff, _ids(*units)).get("f")
    reference = _git_apply(playground, old, _renumbered(units), "--unidiff-zero")
    assert (state.content if state else old) == reference
    everything = content.materialize(diff, _ids(*diff.hunks)).get("f")
    assert (everything.content if everything else old) == new
    assert all(unit.removed + unit.added > 0 for unit in diff.hunks)


@settings(
    max_examples=80,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(pair=versions(), mask=st.integers(0, 2**24 - 1))
@example(pair=(b"a\nb", b"a\nb\nc"), mask=0b10)
@example(pair=(b"a\r\nb\r\n", b"x\r\na\r\nb\r"), mask=0b01)
@example(pair=(b"\xe9t\xe9\nb\n", b"b\n\xe9t\xe9\n\n"), mask=0b101)
def test_line_changes_are_single_lines_and_apply_line_by_line(
    playground: Sandbox, pair: tuple[bytes, bytes], mask: int
) -> None:
    """Line changes partition the changed lines of their git hunk into single lines and
    (removed, added) pairs, each at its own place in GOOD and BAD; any subset of them gives
    GOOD with exactly those lines replaced, removed or inserted, whole lines all (none gives
    GOOD, all give BAD)."""
    old, new = pair
    hunked = _two_versions(playground, old, new)
    diff = linechanges.split_lines(hunked)
    for hunk in hunked.hunks:
        mine = [unit for unit in diff.hunks if unit.parent == hunk.id]
        assert all((unit.removed, unit.added) in {(1, 0), (0, 1), (1, 1)} for unit in mine)
        assert all(unit.id == f"{hunk.id}.{n}" for n, unit in enumerate(mine))
        for sign in "-+":
            assert _signed(mine, sign) == _signed([hunk], sign)
    old_lines, new_lines = _lines(old), _lines(new)
    for unit in diff.hunks:
        removed, added = linechanges.changed_lines(unit)
        assert [old_lines[n - 1] for n in removed] == _signed([unit], "-", bare=True)
        assert [new_lines[n - 1] for n in added] == _signed([unit], "+", bare=True)
    for chosen in (
        {unit.id for n, unit in enumerate(diff.hunks) if mask >> n & 1},
        set(),
        {unit.id for unit in diff.hunks},
    ):
        state = content.materialize(diff, chosen).get("f")
        expected = b"".join(_line_by_line(old_lines, new_lines, diff.hunks, chosen))
        assert (state.content if state else old) == expected
        assert set(_lines(expected)) <= {*old_lines, *new_lines}, "a line joined to another"
    assert b"".join(_line_by_line(old_lines, new_lines, diff.hunks, set())) == old
    assert b"".join(_line_by_line(old_lines, new_lines, diff.hunks, set(diff.by_id))) == new


def _lines(data: bytes) -> list[bytes]:
    """The lines of `data`, each ending after a b"\\n" as git ends them."""
    parts = data.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _signed(units: list[Hunk], sign: str, *, bare: bool = False) -> list[bytes]:
    """The `sign` lines of `units`, in order, as bytes: with their sign and a following "\\ No
    newline" marker, or `bare` (the line as in the file)."""
    found = []
    for unit in units:
        lines = unit.diff.encode("utf-8", "surrogateescape").split(b"\n")[1:]
        for n, line in enumerate(lines):
            if line.startswith(sign.encode()):
                marked = n + 1 < len(lines) and lines[n + 1].startswith(b"\\")
                found.append(line[1:] + (b"" if marked else b"\n") if bare else line)
    return found


def _line_by_line(
    old: list[bytes], new: list[bytes], units: Iterable[Hunk], chosen: set[str]
) -> list[bytes]:
    """GOOD's lines with each chosen unit's lines of BAD in place of its lines of GOOD, from
    the line numbers in its text; each unit left out keeps GOOD's lines."""
    out: list[bytes] = []
    done = 0  # GOOD's lines before this one are placed
    for unit in units:
        removed, added = linechanges.changed_lines(unit)
        at = removed[0] - 1 if removed else unit.old_start
        out += old[done:at]
        out += [new[n - 1] for n in added] if unit.id in chosen else [old[n - 1] for n in removed]
        done = at + len(removed)
    return out + old[done:]
