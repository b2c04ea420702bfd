"""An answer's own patch, as git aligns it: a block of GOOD..BAD that shows as two hunks of the
answer's `git diff -U0` is cut there and each hunk checked by removal, so that the patch the
user gets holds no hunk that can go. On real repositories made with the real git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from endtoend import ddchange
from gitsandbox import Sandbox, init

from ddchange import git
from ddchange.diff import linechanges, read, realign

HALF = 8  # lines of the rewritten function on each side of its blank line


def rewrite(path: Path, beside: dict[str, str] | None = None) -> Sandbox:
    """GOOD: a function of 17 lines, a blank one in the middle. BAD: each line rewritten
    (the third as `BUG = 2`, which the test looks for), the blank one kept, and twenty short
    statements appended, each after a blank line. So many blank lines in BAD make git's
    heuristics leave GOOD's blank line unmatched in GOOD..BAD, where the function is one
    block of 17 line changes; a patch of the function alone matches it, and shows two hunks
    there, of which only the first holds the bug. `beside`: more files, the same in both."""
    old = [f"    o{i} = {i}" for i in range(2 * HALF)]
    new = [f"    n{i} = {i}" for i in range(2 * HALF)]
    new[2] = "    BUG = 2"
    after = ["", "", "def g():", "    return 0"]
    appended = [line for i in range(10) for line in ("", f"x{i} = {i}")]
    repo = init(path)
    for name, text in (beside or {}).items():
        repo.write(name, text)
    repo.write("mod.py", "\n".join(["def f():", *old[:HALF], "", *old[HALF:], *after]) + "\n")
    repo.commit("good")
    repo.git("tag", "good")
    body = ["def f():", *new[:HALF], "", *new[HALF:], *after, *appended]
    repo.write("mod.py", "\n".join(body) + "\n")
    repo.commit("bad")
    repo.git("tag", "bad")
    return repo


def with_b(repo: Sandbox) -> Sandbox:
    """`repo` with a file b.txt that BAD adds too (its one commit, amended)."""
    repo.write("b.txt", "b\n")
    repo.git("add", "b.txt")
    repo.git("commit", "-q", "--amend", "--no-edit")
    repo.git("tag", "-f", "bad")
    return repo


def headers(repo: Sandbox, *revisions: str) -> list[str]:
    out = repo.git("diff", "-U0", *revisions, "--", "mod.py").decode()
    return [line.split(" @@")[0] for line in out.splitlines() if line.startswith("@@")]


def test_the_premise_one_block_in_good_bad_two_hunks_in_a_patch_of_it_alone(
    tmp_path: Path,
) -> None:
    """What the other tests stand on: git's own alignment of the two diffs."""
    repo = rewrite(tmp_path / "repo")
    assert headers(repo, "good", "bad")[0] == "@@ -2,17 +2,17"
    repo.git("checkout", "-q", "good")
    lines = (repo.path / "mod.py").read_text().splitlines()
    bad = repo.git("show", "bad:mod.py").decode().splitlines()
    repo.write("mod.py", "\n".join(bad[:18] + lines[18:]) + "\n")
    assert headers(repo) == ["@@ -2,8 +2,8", "@@ -11,8 +11,8"]


def test_pieces_number_each_line_change_by_the_hunk_of_the_answers_own_patch(
    tmp_path: Path,
) -> None:
    repo = rewrite(tmp_path / "repo")
    handle = git.open_repo(repo.path)
    diff = linechanges.split_lines(read.read_diff(handle, repo.rev("good"), repo.rev("bad")))
    function = list(diff.hunks[: 2 * HALF + 1])  # the function's block, top to bottom
    assert [u.old_start for u in function] == list(range(2, 2 * HALF + 3))
    found = realign.pieces(handle, diff, {u.id for u in function})
    blank = [u.id for u in function if u.diff.endswith("\n-\n+\n")]
    assert len(blank) == 1
    assert blank[0] not in found, "git shows no change for it"
    numbers = [found.get(u.id) for u in function]
    assert numbers == [0] * HALF + [None] + [1] * HALF
    everything = realign.pieces(handle, diff, {u.id for u in diff.hunks})
    assert len(set(everything.values())) == len(headers(repo, "good", "bad"))


def test_a_hunk_of_the_answers_patch_that_can_go_is_not_in_the_answer(tmp_path: Path) -> None:
    """GOOD..BAD has the function as one block, and the search ends at it; the answer's own
    patch shows it as two hunks, and the second goes: the patch holds the bug's hunk, and
    the file b.txt that BAD adds, which the failure needs too. The check cannot tell (exit
    125) where b.txt stands without the function's `n1 = 1`, so the function's block cannot
    be removed for a test: only the patch's hunks cut it."""
    repo = with_b(rewrite(tmp_path / "repo"))
    patch = tmp_path / "answer.patch"
    check = "[ -e b.txt ] || exit 0; grep -q 'n1 = 1' mod.py || exit 125"
    test = ["sh", "-c", f"{check}; ! grep -q BUG mod.py"]
    run = ddchange(repo.path, "good..bad", "--patch", str(patch), "--", *test)
    assert run.returncode == 0, run.stderr
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "good"], check=True)
    subprocess.run(["git", "-C", str(clone), "apply", str(patch)], check=True)
    assert subprocess.run(test, cwd=clone, check=False).returncode == 1, "it reproduces"
    own = subprocess.run(["git", "-C", str(clone), "diff", "-U0"], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert [line for line in own.splitlines() if line.startswith("@@")] == [
        "@@ -2,8 +2,8 @@ def f():"
    ]
    assert (clone / "b.txt").exists(), "the patch adds b.txt"
    assert "+    BUG = 2" in own
    checks = [r for r in run.report["log"] if r["phase"] == "verify"]
    assert checks, "the hunks of the answer's patch were checked by runs"


# A suite of two tests for a triage: case.bug fails where mod.py holds the bug and b.txt is
# there, and errors otherwise (another failure: no verdict) where b.txt stands without the
# function's `n1 = 1`, as the check above cannot tell there; case.ok never fails.
SUITE = """\
import os
text = open("mod.py").read()
bug = "BUG" in text and os.path.exists("b.txt")
odd = os.path.exists("b.txt") and "n1 = 1" not in text
failure = '<failure message="the bug"/>' if bug else ""
failure = '<error type="NameError" message="n1"/>' if odd else failure
with open("report.xml", "w") as out:
    out.write('<testsuite><testcase classname="case" name="bug">' + failure + "</testcase>"
              '<testcase classname="case" name="ok"/></testsuite>')
raise SystemExit(1 if bug else 0)
"""


def test_a_triage_cause_holds_no_hunk_of_its_patch_that_can_go(tmp_path: Path) -> None:
    """The same rewrite triaged (--results): the cause of case.bug is cut as a single
    search's answer is, and its patch holds the bug's hunk, not the function's second."""
    repo = with_b(rewrite(tmp_path / "repo", {"suite.py": SUITE}))
    report = tmp_path / "triage.json"
    run = ddchange(repo.path, "good..bad", "--json", str(report), "--results",
                   "junit:report.xml", "--", "python3", "suite.py", command=["run"])  # fmt: skip
    assert run.returncode == 0, run.stderr
    (cause,) = json.loads(report.read_text())["causes"]
    assert cause["tests"] == ["case.bug"]
    assert "+    BUG = 2" in cause["patch"]
    assert "n9 = 9" not in cause["patch"], "the second half of the function went"


def test_line_hunks_of_a_binary_text_are_none(tmp_path: Path) -> None:
    repo = rewrite(tmp_path / "repo")
    handle = git.open_repo(repo.path)
    assert git.line_hunks(handle, b"a\0b\n", b"a\0c\n") == []
    assert git.line_hunks(handle, b"a\nb\nc\n", b"a\nB\nc\nd\n") == [(2, 1, 2, 1), (3, 0, 4, 1)]
    assert not (repo.path / ".git" / "objects" / "info" / "alternates").exists()
