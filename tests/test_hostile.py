"""Hostile input, end to end: the real `ddchange` command on repositories built to be awkward.

Every case ends in the exact answer (each culprit's path and kind, read from --json) or in one
clear error line with the documented exit code (2 usage, 1 could not reproduce); never in a
traceback. Every run also checks that the user's work tree, index, HEAD, refs, reflogs, stash,
config, hooks and work tree list are byte-identical afterwards.

Covered: each kind of change unit (rename with and without edits, copy, add, delete, mode,
symlink retarget, file <-> symlink, binary, a directory that becomes a file), CRLF, a lost final
newline, latin-1 text, file names with spaces, quotes, tabs, newlines, a leading dash and
non-UTF-8 bytes, submodule pointers (never searched), a large file and many hunks (the 50 MB and
20,000-hunk versions are in benchmarks/hostile.py), checkout conversion by .gitattributes (eol,
an LFS-like filter, a filter that is not installed, UTF-16 in the work tree, a changed
.gitattributes), the ways to name a revision, GOOD not an ancestor of BAD, shallow, bare and
linked-work-tree repositories, a dirty work tree, and a test command that does not exist.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from endtoend import (
    LINES,
    NOISE_BAD,
    NOISE_GOOD,
    Exe,
    Link,
    Tree,
    ddchange,
    edit,
    found,
    put,
    refused,
    search,
    two_commits,
)
from gitsandbox import Sandbox, hermetic, init

# -- every kind of change unit, and awkward file contents ---------------------------------------

BROKEN_TEST = "cat -- *.txt | grep -q BROKEN && exit 1; exit 0\n"
CRLF = LINES.replace("\n", "\r\n")
LATIN = (LINES + "caf\xe9\n").encode("latin-1")
UTF16 = LINES.encode("utf-16-le")


@dataclass(frozen=True)
class Case:
    good: Tree
    bad: Tree
    test: str
    culprits: list[tuple[str, str]]


CASES = {
    "rename": Case(
        {"old.txt": LINES},
        {"old.txt": None, "new.txt": LINES},
        "test -e new.txt && exit 1; exit 0\n",
        [("new.txt", "rename")],
    ),
    "rename with edits, an edit fails": Case(
        {"old.txt": LINES},
        {"old.txt": None, "new.txt": edit(LINES, ("line 2\n", "two\n"), ("line 30", "BROKEN"))},
        BROKEN_TEST,
        [("new.txt", "text")],
    ),
    "rename with edits, the rename fails": Case(
        {"old.txt": LINES},
        {"old.txt": None, "new.txt": edit(LINES, ("line 2\n", "two\n"), ("line 30", "BROKEN"))},
        "test -e new.txt && exit 1; exit 0\n",
        [("new.txt", "rename")],
    ),
    "copy": Case(
        {"orig.txt": LINES},
        {"copy.txt": LINES},
        "test -e copy.txt && exit 1; exit 0\n",
        [("copy.txt", "add")],
    ),
    "delete": Case(
        {"gone.txt": "bye\n"},
        {"gone.txt": None},
        "test -e gone.txt || exit 1; exit 0\n",
        [("gone.txt", "delete")],
    ),
    "add in new directories": Case(
        {},
        {"d/e/new.txt": "new\n"},
        "test -e d/e/new.txt && exit 1; exit 0\n",
        [("d/e/new.txt", "add")],
    ),
    "mode": Case(
        {"tool.sh": "echo\n"},
        {"tool.sh": Exe("echo\n")},
        "test -x tool.sh && exit 1; exit 0\n",
        [("tool.sh", "mode")],
    ),
    "mode with an edit": Case(
        {"tool.sh": LINES},
        {"tool.sh": Exe(edit(LINES, ("line 3\n", "three\n")))},
        "test -x tool.sh && exit 1; exit 0\n",
        [("tool.sh", "mode")],
    ),
    "symlink retargeted": Case(
        {"link": Link("other.txt")},
        {"link": Link("z.txt")},
        'test "$(readlink link)" = z.txt && exit 1; exit 0\n',
        [("link", "content")],
    ),
    "file becomes symlink": Case(
        {"link": "plain\n"},
        {"link": Link("z.txt")},
        "test -L link && exit 1; exit 0\n",
        [("link", "content")],
    ),
    "symlink becomes file": Case(
        {"link": Link("z.txt")},
        {"link": "plain\n"},
        "test -L link || exit 1; exit 0\n",
        [("link", "content")],
    ),
    "binary": Case(
        {"b.bin": bytes(range(256))},
        {"b.bin": bytes(range(255, -1, -1))},
        "od -An -tu1 -N1 b.bin | grep -q 255 && exit 1; exit 0\n",
        [("b.bin", "content")],
    ),
    # The new file alone cannot be materialized (the directory is still there): both needed.
    "directory becomes file": Case(
        {"dtf/x": "in a directory\n"},
        {"dtf/x": None, "dtf": "a file now\n"},
        "test -f dtf && exit 1; exit 0\n",
        [("dtf", "add"), ("dtf/x", "delete")],
    ),
    "CRLF": Case(
        {"c.txt": CRLF},
        {"c.txt": edit(CRLF, ("line 9\r", "BROKEN\r"), ("line 30\r", "thirty\r"))},
        "grep -q \"^BROKEN$(printf '\\r')\\$\" c.txt && exit 1; exit 0\n",
        [("c.txt", "text")],
    ),
    "final newline lost": Case(
        {"n.txt": LINES},
        {"n.txt": edit(LINES, ("line 3\n", "three\n")).removesuffix("\n")},
        'test "$(tail -c 1 n.txt | od -An -c | tr -d " ")" = 9 && exit 1; exit 0\n',
        [("n.txt", "text")],
    ),
    "latin-1 text": Case(
        {"l.txt": LATIN},
        {"l.txt": LATIN.replace(b"line 3\n", b"three\n") + "d\xe9j\xe0 vu\n".encode("latin-1")},
        "grep -q \"$(printf 'j\\340')\" l.txt && exit 1; exit 0\n",
        [("l.txt", "text")],
    ),
    # .gitattributes: a checkout converts line ends; the test insists on what a checkout gives.
    "eol=crlf attribute": Case(
        {".gitattributes": "*.txt text eol=crlf\n", "c.txt": LINES},
        {"c.txt": edit(LINES, ("line 9\n", "BROKEN\n"), ("line 30\n", "thirty\n"))},
        'grep -q BROKEN c.txt && exit 1; grep -q "$(printf "\\r")" c.txt z.txt || exit 3\n',
        [("c.txt", "text")],
    ),
    "text=auto eol=crlf attribute": Case(
        {".gitattributes": "* text=auto eol=crlf\n", "c.txt": LINES},
        {"c.txt": edit(LINES, ("line 9\n", "BROKEN\n"), ("line 30\n", "thirty\n"))},
        'grep -q BROKEN c.txt && exit 1; test "$(grep -c "$(printf "\\r")" c.txt)" = 40 || exit 3',
        [("c.txt", "text")],
    ),
    # The blob holds UTF-8, the checkout UTF-16: hunks are cut in the blob, then re-encoded.
    "working-tree-encoding": Case(
        {".gitattributes": "w.txt text working-tree-encoding=UTF-16LE\n", "w.txt": UTF16},
        {"w.txt": edit(LINES, ("line 9\n", "BROKEN\n"), ("line 30\n", "x\n")).encode("utf-16-le")},
        "iconv -f UTF-16LE -t UTF-8 w.txt > w.out || exit 3; grep -q 'line 8' w.out || exit 4\n"
        "grep -q BROKEN w.out && exit 1; exit 0\n",
        [("w.txt", "text")],
    ),
    # git-lfs not installed: the pointer file is what a checkout writes, and what we search.
    "filter that is not installed": Case(
        {".gitattributes": "*.dat filter=lfs diff=lfs merge=lfs -text\n", "a.dat": "oid a\n"},
        {"a.dat": "oid b\n"},
        "grep -q 'oid b' a.dat && exit 1; exit 0\n",
        [("a.dat", "text")],
    ),
    # The .gitattributes change alone makes the checkout of an unchanged file different.
    "changed .gitattributes": Case(
        {"c.txt": LINES},
        {".gitattributes": "c.txt eol=crlf\n"},
        'grep -q "$(printf "\\r")" c.txt && exit 1; exit 0\n',
        [(".gitattributes", "add")],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_each_kind_of_change_is_found_exactly(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    repo = two_commits(tmp_path / "repo", case.good, case.bad, case.test)
    assert found(search(repo)) == case.culprits


def test_an_lfs_like_filter_runs_as_in_a_checkout(tmp_path: Path) -> None:
    """The blob holds a pointer, the checkout (smudge) the real content, as with git-lfs."""
    repo = init(tmp_path / "repo")
    repo.git("config", "filter.fake.clean", "sed s/^REAL/POINTER/")
    repo.git("config", "filter.fake.smudge", "sed s/^POINTER/REAL/")
    put(repo, {".gitattributes": "*.dat filter=fake\n", **NOISE_GOOD, "a.dat": "REAL good\n"})
    put(repo, {"test.sh": "grep -q '^REAL bad' a.dat && exit 1; grep -q ^REAL a.dat || exit 3\n"})
    repo.commit()
    repo.git("tag", "good")
    assert repo.git("show", "good:a.dat") == b"POINTER good\n"
    put(repo, {**NOISE_BAD, "a.dat": "REAL bad\n"})
    repo.commit()
    repo.git("tag", "bad")
    assert found(search(repo)) == [("a.dat", "text")]


ODD_NAMES = (
    "dir with space/ünï cödé.txt",
    'quo"te.txt',
    "it's.txt",
    "tab\tname.txt",
    "new\nline.txt",
    "-dash.txt",
    "back\\slash.txt",
    os.fsdecode(b"caf\xe9 latin-1.txt"),  # not UTF-8: a name git can hold and print
)


def test_odd_file_names_are_found_and_the_patch_applies(tmp_path: Path) -> None:
    """Every odd name's edit is needed for the failure, so the answer is all of them; noise
    renames one odd name to another. The --patch reproduces BAD's files on GOOD."""
    renamed = ("a b/ü\t'x'.txt", 'a b/ü\t"y".txt')
    names = " ".join(shlex.quote(name) for name in ODD_NAMES)
    test = f'for f in {names}; do grep -q seven -- "$f" || exit 0; done; exit 1\n'
    repo = two_commits(
        tmp_path / "repo",
        {**dict.fromkeys(ODD_NAMES, LINES), renamed[0]: LINES},
        {
            **{name: edit(LINES, ("line 7\n", "seven\n")) for name in ODD_NAMES},
            renamed[0]: None,
            renamed[1]: LINES,
        },
        test.encode("utf-8", "surrogateescape"),
    )
    patch = tmp_path / "answer.patch"
    run = search(repo, "--patch", str(patch))
    assert sorted(found(run)) == sorted((name, "text") for name in ODD_NAMES)
    check = tmp_path / "check"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(check)], check=True)
    Sandbox(check).git("checkout", "-q", "good")
    Sandbox(check).git("apply", str(patch))
    for name in ODD_NAMES:
        assert (check / name).read_bytes() == repo.git("show", f"bad:{name}")
    assert os.path.exists(check / renamed[0]), "the patch holds the answer only"


def test_a_latin_1_hunk_is_printed_even_where_stdout_is_strict_utf_8(tmp_path: Path) -> None:
    case = CASES["latin-1 text"]
    repo = two_commits(tmp_path / "repo", case.good, case.bad, case.test)
    run = search(repo, env={"PYTHONIOENCODING": "utf-8"})  # errors=strict, as in most locales
    assert found(run) == case.culprits
    assert "d\udce9j\udce0 vu" in run.stdout  # the file's own bytes, as git shows them


# -- submodules -------------------------------------------------------------------------------


@pytest.fixture
def submodule_repo(tmp_path: Path) -> tuple[Sandbox, str]:
    """`sub` points to the library's first commit in GOOD and to its second in BAD, whose
    object name is returned. BAD also puts BROKEN into cause.txt."""
    library = init(tmp_path / "library")
    library.write("v.txt", "1\n")
    first = library.commit("first")
    library.write("v.txt", "2\n")
    second = library.commit("second")
    repo = init(tmp_path / "repo")
    put(repo, {**NOISE_GOOD, "cause.txt": LINES})
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", "../library", "sub")
    Sandbox(repo.path / "sub").git("checkout", "-q", "--detach", first)
    return repo, second


def commit_submodule_pair(repo: Sandbox, test: str, bad: Tree, pointer: str) -> None:
    put(repo, {"test.sh": test})
    repo.commit("good")
    repo.git("tag", "good")
    put(repo, {**NOISE_BAD, **bad})
    Sandbox(repo.path / "sub").git("checkout", "-q", "--detach", pointer)
    repo.commit("bad")
    repo.git("tag", "bad")


def test_a_submodule_change_is_reported_as_not_searched(
    submodule_repo: tuple[Sandbox, str],
) -> None:
    repo, second = submodule_repo
    bad = {"cause.txt": edit(LINES, ("line 20", "BROKEN"))}
    commit_submodule_pair(repo, BROKEN_TEST, bad, second)
    run = search(repo)
    assert found(run) == [("cause.txt", "text")]
    assert run.report["skipped"] == ["sub"]
    assert "not searched (kept as in GOOD): sub" in run.stdout


def test_a_failure_caused_only_by_a_submodule_is_explained(
    submodule_repo: tuple[Sandbox, str],
) -> None:
    """The test looks at the checked-out submodule pointer: only BAD's own checkout fails.
    GOOD plus everything searchable passes, and the message must say why."""
    repo, second = submodule_repo
    test = f'test "$(git rev-parse HEAD:sub)" = {second} && exit 1; exit 0\n'
    commit_submodule_pair(repo, test, {}, second)
    run = search(repo)
    refused(run, 1, "BAD should fail")
    assert "submodule" in run.stderr
    assert "sub" in run.stderr.split("submodule", 1)[1]


def test_a_range_that_changes_only_a_submodule(submodule_repo: tuple[Sandbox, str]) -> None:
    repo, second = submodule_repo
    put(repo, {"test.sh": "exit 0\n"})
    repo.commit("good")
    repo.git("tag", "good")
    Sandbox(repo.path / "sub").git("checkout", "-q", "--detach", second)
    repo.commit("bad")
    repo.git("tag", "bad")
    run = search(repo)
    refused(run, 2, "submodule")
    assert "identical trees" not in run.stderr


# -- size ---------------------------------------------------------------------------------------


def test_a_change_in_the_middle_of_a_large_file(tmp_path: Path) -> None:
    """5 MB here; benchmarks/hostile.py measures 50 MB."""
    middle = 40_000
    lines = [f"{n:08d} {'x' * 55}\n" for n in range(2 * middle)]
    good = "".join(lines)
    lines[middle] = "BROKEN\n"
    lines[middle // 2] = "a harmless edit\n"
    repo = two_commits(
        tmp_path / "repo",
        {"big.txt": good},
        {"big.txt": "".join(lines)},
        "grep -q BROKEN big.txt && exit 1; exit 0\n",
    )
    run = search(repo)
    assert found(run) == [("big.txt", "text")]
    assert run.report["culprits"][0]["new_start"] == middle + 1  # the changed line itself


def many_hunks(files: int, hunks: int, culprit: tuple[int, int]) -> tuple[Tree, Tree, str]:
    """`files` files of `hunks` separate hunks each; the test fails on hunk `culprit`."""

    def text(number: int, changed: bool) -> str:
        blocks = []
        for block in range(hunks):
            lines = [f"file {number} block {block} line {k}\n" for k in range(10)]
            if changed:
                lines[5] = f"file {number} block {block} changed\n"
            blocks.append("".join(lines))
        return "".join(blocks)

    def name(number: int) -> str:
        return f"src/d{number % 7}/f{number}.txt"

    good = {name(n): text(n, False) for n in range(files)}
    bad = {name(n): text(n, True) for n in range(files)}
    wanted = f"file {culprit[0]} block {culprit[1]} changed"
    test = f"grep -q '{wanted}' {name(culprit[0])} && exit 1; exit 0\n"
    return good, bad, test


def test_one_culprit_among_two_thousand_hunks(tmp_path: Path) -> None:
    """40 files of 50 hunks; benchmarks/hostile.py measures 400 x 50."""
    good, bad, test = many_hunks(40, 50, culprit=(17, 33))
    run = search(two_commits(tmp_path / "repo", good, bad, test))
    assert found(run) == [("src/d3/f17.txt", "text")]
    assert run.report["hunks_total"] == 2000 + 3  # and the three hunks of the noise
    assert run.report["culprits"][0]["new_start"] == 33 * 10 + 6  # the changed line itself


# -- revisions and repositories -------------------------------------------------------------


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """v1.0 (annotated) - c1 - c2 - c3 - broken on feature/sub/x (checked out, tagged v-bad),
    and sibling, a branch off v1.0. Only `broken` breaks the test, by adding BROKEN to f4."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        hermetic(monkeypatch)
        repo = init(tmp_path_factory.mktemp("history") / "repo")
        put(repo, {f"f{n}.txt": LINES for n in range(6)})
        put(repo, {"test.sh": "grep -q BROKEN f*.txt && exit 1; exit 0\n"})
        repo.commit("base")
        repo.git("tag", "-a", "-m", "release", "v1.0")
        repo.git("checkout", "-q", "-b", "feature/sub/x")
        for n in (1, 2, 3):
            put(repo, {f"f{n}.txt": edit(LINES, ("line 9\n", f"c{n}\n"))})
            repo.commit(f"c{n}")
        put(repo, {"f4.txt": edit(LINES, ("line 20\n", "BROKEN\n"))})
        repo.commit("broken")
        repo.git("tag", "-a", "-m", "bad one", "v-bad")
        repo.git("checkout", "-q", "-b", "sibling", "v1.0")
        put(repo, {"f5.txt": edit(LINES, ("line 1\n", "sibling\n"))})
        repo.commit("sibling")
        repo.git("checkout", "-q", "feature/sub/x")
        return repo


def test_revisions_given_in_every_spelling(history: Sandbox) -> None:
    short = history.rev("v1.0^{commit}")[:7]
    for spelled in (
        "v1.0..feature/sub/x",  # annotated tag, branch name with slashes
        "HEAD~4..HEAD",
        f"{short}..HEAD",
        "v1.0..v-bad",  # two annotated tags
        "feature/sub/x~4..feature/sub/x",
        ":/c2..HEAD",  # a commit message search
        "sibling..feature/sub/x",  # GOOD is no ancestor of BAD
    ):
        run = ddchange(history.path, spelled, "--", "sh", "test.sh")
        assert found(run) == [("f4.txt", "text")], spelled


@pytest.mark.parametrize(
    ("spelled", "code", "message"),
    [
        ("v1.0..v1.0^{tree}", 2, "'v1.0^{tree}'"),  # a tree
        ("HEAD..HEAD:test.sh", 2, "'HEAD:test.sh'"),  # a blob
        ("@{upstream}..HEAD", 2, "'@{upstream}'"),  # no upstream configured
        ("HEAD~9..HEAD", 2, "unknown revision 'HEAD~9'"),
        ("feature/sub/x..sibling", 1, "GOOD should pass"),  # the two siblings swapped
    ],
)
def test_revisions_that_name_no_usable_commit(
    history: Sandbox, spelled: str, code: int, message: str
) -> None:
    refused(ddchange(history.path, spelled, "--", "sh", "test.sh"), code, message)


def test_a_shallow_clone(history: Sandbox, tmp_path: Path) -> None:
    """GOOD inside the shallow history works; beyond it, it is an unknown revision."""
    clone = tmp_path / "shallow"
    url = f"file://{history.path}"
    subprocess.run(["git", "clone", "-q", "--depth", "3", url, str(clone)], check=True)
    assert Sandbox(clone).git("rev-parse", "--is-shallow-repository") == b"true\n"
    assert found(ddchange(clone, "HEAD~2..HEAD", "--", "sh", "test.sh")) == [("f4.txt", "text")]
    refused(ddchange(clone, "HEAD~3..HEAD", "--", "sh", "test.sh"), 2, "unknown revision")
    cut_off = history.rev("v1.0^{commit}")
    run = ddchange(clone, f"{cut_off}..HEAD", "--", "sh", "test.sh")
    refused(run, 2, f"unknown revision '{cut_off}'")


def test_a_bare_repository(history: Sandbox, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(history.path), str(bare)], check=True)
    run = ddchange(
        tmp_path, "-C", str(bare), "v1.0..feature/sub/x", "--", "sh", "test.sh", untouched=[bare]
    )
    assert found(run) == [("f4.txt", "text")]


def test_a_linked_work_tree(history: Sandbox, tmp_path: Path) -> None:
    """Run from a `git worktree add` checkout of another branch: both checkouts stay as they
    are, and the answer is the same."""
    main = tmp_path / "main"
    subprocess.run(["git", "clone", "-q", str(history.path), str(main)], check=True)
    linked = tmp_path / "linked"
    Sandbox(main).git("worktree", "add", "-q", str(linked), "origin/sibling")
    run = ddchange(
        linked, "v1.0..origin/feature/sub/x", "--", "sh", "test.sh", untouched=[main, linked]
    )
    assert found(run) == [("f4.txt", "text")]


def test_a_dirty_work_tree_stays_exactly_as_it_was(history: Sandbox, tmp_path: Path) -> None:
    """Staged, unstaged and untracked changes (on the very files the diff touches), a stash
    entry and a branch: the answer comes from the commits, and nothing of it changes."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(history.path), str(clone)], check=True)
    user = Sandbox(clone)
    user.write("f3.txt", "stashed\n")
    user.git("stash", "push", "-q", "-m", "user's stash")
    user.git("branch", "user-branch")
    user.write("f4.txt", "staged edit of the culprit file\n")
    user.git("add", "f4.txt")
    user.write("f2.txt", "unstaged edit\n")
    user.remove("f1.txt")
    user.write("untracked dir/notes.txt", "mine\n")
    user.write("f9.txt", "untracked\n")
    assert found(ddchange(clone, "v1.0..HEAD", "--", "sh", "test.sh")) == [("f4.txt", "text")]


def test_a_test_command_that_does_not_exist(history: Sandbox) -> None:
    run = ddchange(history.path, "v1.0..HEAD", "--", "./no-such-test", "--flag")
    refused(run, 1, "GOOD should pass")
    assert "./no-such-test: No such file or directory" in run.stderr


def test_a_test_script_that_is_not_committed(history: Sandbox, tmp_path: Path) -> None:
    """It exists in the user's checkout, but not in the scratch work tree of GOOD."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(history.path), str(clone)], check=True)
    (clone / "mine.sh").write_text("exit 0\n")
    run = ddchange(clone, "v1.0..HEAD", "--", "sh", "mine.sh")
    refused(run, 1, "GOOD should pass")
    assert "mine.sh" in run.stderr
