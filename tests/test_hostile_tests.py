"""Hostile tests, end to end: a test command that attacks the scratch tree it runs in, or the
settings and files around a run that real users have. Each attack is written from its
description in the second adversarial review; each run also checks that the user's checkout,
index, HEAD, refs, reflogs, stash and config stay byte-identical (`ddchange` in endtoend.py).
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from endtoend import Link, ddchange, refused, search, two_commits

CHECK = "grep -q BROKEN a.txt && exit 1; exit 0\n"


@pytest.mark.parametrize(
    "swap",
    [
        # the scratch .git, a link to the user's .git
        'rm -rf .git && ln -s "$USER_REPO/.git" .git\n',
        # the scratch tree itself, a link to the user's checkout
        'here=$(pwd -P); mv "$here" "$here.moved" && ln -s "$USER_REPO" "$here"\n',
    ],
    ids=["git-dir", "tree"],
)
def test_a_test_that_swaps_the_scratch_tree_for_a_link_stops_the_run(
    tmp_path: Path, swap: str
) -> None:
    """Replaced by a link to the user's checkout, the scratch tree (or its .git) would have
    ddchange's own restore detach the user's HEAD, reset their index and overwrite their
    edit. Before each write it checks, by lstat, that both are still what it made."""
    repo = two_commits(
        tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"},
        '[ -e "$MARK" ] || { touch "$MARK"; ' + swap.strip() + "; }\n" + CHECK,
    )  # fmt: skip
    repo.write("other.txt", "the user's edit, not committed\n")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    variables = {
        "USER_REPO": str(repo.path),
        "MARK": str(tmp_path / "mark"),
        "TMPDIR": str(temporary),
    }
    run = search(repo, "-q", env={**os.environ, **variables})
    refused(run, 2, "a test replaced")
    assert (repo.path / "other.txt").read_text() == "the user's edit, not committed\n"
    assert list(temporary.iterdir()) == [], "the scratch tree is gone, the link with it"


def test_a_test_that_writes_a_tracked_file_through_a_hard_link_gets_it_restored(
    tmp_path: Path,
) -> None:
    """A test that writes a tracked file through a hard link under another name: the watch
    sees the other name, so a file with more than one link is compared by content, and the
    next test sees GOOD's file again: the answer is the one culprit, not the file the test
    wrote."""
    test = (
        "grep -q BROKEN a.txt b.txt; found=$?\n"
        # once, after the first test: a link to b.txt, written through it
        '[ -e "$MARK" ] || { touch "$MARK"; ln b.txt link.txt; echo BROKEN >>link.txt; }\n'
        '[ "$found" = 0 ] && exit 1; exit 0\n'
    )
    repo = two_commits(
        tmp_path / "repo", {"a.txt": "fine\n", "b.txt": "fine too\n"}, {"a.txt": "BROKEN\n"}, test
    )
    run = ddchange(
        repo.path, "good..bad", "--", "sh", "test.sh",
        env={**os.environ, "MARK": str(tmp_path / "mark")},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.culprits == [("a.txt", "text")]


def test_a_subdirectory_that_is_a_link_out_of_the_tree_is_not_run_in(tmp_path: Path) -> None:
    """Run from `d/`, a directory in the user's checkout (BAD) that GOOD has as a symlink to a
    directory outside the repository: in GOOD's tree the test would run, and write, out there.
    Those runs are UNRESOLVED instead, with the reason, and nothing is written outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    test = "echo ran >>written; grep -q BROKEN ../a.txt && exit 1; exit 0\n"
    good = {"a.txt": "fine\n", "d": Link(str(outside))}
    bad = {"a.txt": "BROKEN\n", "d": None, "d/kept.txt": "a directory now\n"}
    repo = two_commits(tmp_path / "repo", good, bad, test)
    run = ddchange(repo.path / "d", "good..bad", "--", "sh", "../test.sh", untouched=[repo.path])
    assert run.returncode != 0
    assert "outside the scratch tree" in run.stderr + run.stdout
    assert list(outside.iterdir()) == []


def test_a_mount_left_in_the_scratch_tree_is_never_crossed(tmp_path: Path) -> None:
    """A test (as root) bind-mounts a directory of the user's into the scratch tree and leaves
    it there: removing the tree never enters the mount, so the directory's files and mode
    outside stay as they were; the mount point stays, with the directories above it."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "keep.txt").write_text("the user's file\n")
    source.chmod(0o755)
    probe = tmp_path / "probe"
    probe.mkdir()
    if subprocess.run(["mount", "--bind", str(source), str(probe)], capture_output=True).returncode:
        pytest.skip("no bind mounts here (not root, or no mount(8))")
    subprocess.run(["umount", str(probe)], check=True)
    test = '[ -d m ] || { mkdir m && mount --bind "$SOURCE" m; }\n' + CHECK
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, test)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    try:
        run = search(repo, env={**os.environ, "SOURCE": str(source), "TMPDIR": str(temporary)})
        assert run.culprits == [("a.txt", "text")], run.stderr
    finally:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            point = line.split(" ")[4]
            if point.startswith(str(temporary)):
                subprocess.run(["umount", point], check=False)
    assert (source / "keep.txt").read_text() == "the user's file\n"
    assert stat.S_IMODE(source.stat().st_mode) == 0o755
