"""Hostile tests, end to end: a test command that attacks the scratch tree it runs in, or the
settings and files around a run that real users have. Each attack is written from its
description in the second adversarial review; each run also checks that the user's checkout,
index, HEAD, refs, reflogs, stash and config stay byte-identical (`ddchange` in endtoend.py).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from endtoend import Link, ddchange, refused, search, two_commits
from gitsandbox import Sandbox, init

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
    if (
        shutil.which("mount") is None
        or subprocess.run(
            ["mount", "--bind", str(source), str(probe)], capture_output=True
        ).returncode
    ):
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


# -- git settings real users have -------------------------------------------------------------


def _three_commits(path: Path, test: str = CHECK) -> Sandbox:
    """good, a harmless commit, then bad: a history the default bisects."""
    repo = two_commits(path, {"a.txt": "fine\n", "b.txt": "one\n"}, {"b.txt": "two\n"}, test)
    repo.git("tag", "-d", "bad")
    repo.write("a.txt", "BROKEN\n")
    repo.commit("the culprit")
    repo.git("tag", "bad")
    return repo


def test_signed_commits_shown_with_their_signatures_are_read_as_any(tmp_path: Path) -> None:
    """log.showSignature=true and commits signed (here with an SSH key): git log prints the
    signature check beside each commit; ddchange's own commands do not ask for it."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("no ssh-keygen here")
    key = tmp_path / "key"
    made = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], capture_output=True
    )
    if made.returncode:
        pytest.skip("no ssh-keygen here")
    repo = init(tmp_path / "repo")
    repo.git("config", "gpg.format", "ssh")
    repo.git("config", "user.signingkey", str(key))
    repo.git("config", "commit.gpgSign", "true")
    for name, files in (
        ("good", {"test.sh": CHECK, "a.txt": "fine\n", "b.txt": "one\n"}),
        ("", {"b.txt": "two\n"}),
        ("bad", {"a.txt": "BROKEN\n"}),
    ):
        for path, text in files.items():
            repo.write(path, text)
        repo.commit(name or "harmless")
        if name:
            repo.git("tag", name)
    repo.git("config", "log.showSignature", "true")
    assert b"No signature" in repo.git("log", "-1", "--format=%H", "bad")
    run = search(repo)
    assert run.culprits == [("a.txt", "text")], run.stderr
    assert run.report["first_bad"] == repo.rev("bad")


def test_a_log_output_encoding_of_utf_16_is_read_as_any(tmp_path: Path) -> None:
    repo = _three_commits(tmp_path / "repo")
    repo.git("config", "i18n.logOutputEncoding", "UTF-16")
    run = search(repo)
    assert run.culprits == [("a.txt", "text")], run.stderr
    assert run.report["first_bad"] == repo.rev("bad")


def test_a_blame_ignore_revs_file_that_is_missing_loses_no_commit(tmp_path: Path) -> None:
    """blame.ignoreRevsFile naming a file that is not there makes `git blame` fail: ddchange's
    own blame does not read it, and the culprit keeps the commit that brought it."""
    repo = _three_commits(tmp_path / "repo")
    repo.git("config", "blame.ignoreRevsFile", ".git-blame-ignore-revs")
    run = search(repo, "--strategy", "diff")
    assert run.culprits == [("a.txt", "text")], run.stderr
    commits = [c["sha"] for change in run.report["culprits"] for c in change["commits"]]
    assert commits == [repo.rev("bad")]


def test_a_gitattributes_fifo_does_not_hang_ddchange(tmp_path: Path) -> None:
    """.gitattributes in the user's work tree replaced by a FIFO: git blocks opening it.
    ddchange's own git commands are bounded (DDCHANGE_GIT_TIMEOUT here), and it says which
    one did not end."""
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n", ".gitattributes": "*.txt text\n"},
                       {"a.txt": "BROKEN\n"}, CHECK)  # fmt: skip
    (repo.path / ".gitattributes").unlink()
    os.mkfifo(repo.path / ".gitattributes")
    done = subprocess.run(
        [sys.executable, "-m", "ddchange", "good..bad", "--", "sh", "test.sh"],
        cwd=repo.path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "DDCHANGE_GIT_TIMEOUT": "3"},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "did not end within 3s" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_repository_owned_by_another_user_is_said_so_with_gits_advice(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root, to give the repository to another user")
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    subprocess.run(["chown", "-R", "65534:65534", str(repo.path)], check=True)
    home = tmp_path / "home"  # no safe.directory of the machine's own user
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("GIT_CONFIG_GLOBAL", None)
    for command in (["good..bad", "--", "sh", "test.sh"], ["log"]):
        done = subprocess.run(
            [sys.executable, "-m", "ddchange", *command],
            cwd=repo.path, capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert "owned by another user" in done.stderr, done.stderr
        assert "git config --global --add safe.directory" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_a_stale_index_lock_left_by_a_killed_git_is_cleared(tmp_path: Path) -> None:
    """A git that a test started and --timeout killed leaves .git/index.lock behind in the
    scratch repository: no git of ddchange's runs there between tests, so it is stale and
    removed, and the search goes on to its answer."""
    test = (
        '[ -e "$MARK" ] || { touch "$MARK"; echo edited >>b.txt; '
        ": >.git/index.lock; : >.git/HEAD.lock; }\n"
    )
    good = {"a.txt": "fine\n", "b.txt": "a file the test edits\n"}
    repo = two_commits(tmp_path / "repo", good, {"a.txt": "BROKEN\n"}, test + CHECK)
    run = search(repo, env={**os.environ, "MARK": str(tmp_path / "mark")})
    assert run.culprits == [("a.txt", "text")], run.stderr


# -- the command line ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--scheduler", "x"), "'x' is not the address of a Dask scheduler"),
        (("--scheduler", "bogus://x"), "'bogus://x' is not the address of a Dask scheduler"),
        (("--scheduler", ""), "'' is not the address of a Dask scheduler"),
        (("--worker-clone", "/x"), "--worker-clone needs --scheduler"),
        (("--results", "junit:r.xml", "--patch-dir", "a.txt/x"), "a.txt is not a directory"),
    ],
)
def test_options_that_cannot_work_are_refused_at_once(
    tmp_path: Path, options: tuple[str, ...], message: str
) -> None:
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    started = time.monotonic()
    run = ddchange(repo.path, "good..bad", *options, "--", "sh", "test.sh", command=["run"])
    refused(run, 2, message)
    assert time.monotonic() - started < 15, "refused before anything runs"  # not Dask's 20 s


def test_plain_ddchange_prints_its_help_and_a_leading_directory_suits_every_command(
    tmp_path: Path,
) -> None:
    done = subprocess.run([sys.executable, "-m", "ddchange"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("Usage: ddchange")
    assert not done.stderr.startswith("ddchange: ")
    assert "(see `" not in done.stderr
    helped = subprocess.run(
        [sys.executable, "-m", "ddchange", "-C", str(tmp_path), "help"], capture_output=True
    )
    assert helped.returncode == 0, helped.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "ddchange", "-C", str(tmp_path / "nope"), "help"],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2
    assert "cannot change to" in missing.stderr


# -- a log from anyone ----------------------------------------------------------------------


def _logged(tmp_path: Path) -> tuple[Sandbox, str]:
    """A repository and the log of a finished search in it, its journal reset."""
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    assert search(repo, "--timeout", "60").returncode == 0
    log = ddchange(repo.path, command=["log"]).stdout
    subprocess.run([sys.executable, "-m", "ddchange", "reset"], cwd=repo.path, check=True)
    return repo, log


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('"timeout": 60.0', '"timeout": NaN', "'timeout' must be a number of seconds"),
        ('"timeout": 60.0', '"timeout": Infinity', "'timeout' must be a number of seconds"),
        ('"fail_pattern": null', '"fail_pattern": "("', "'fail_pattern' is not a regular"),
        ('"exit_code": 1,', '"exit_code": 10000000000000000000000000000000000000000,',
         "'exit_code' must be a whole number"),
        ('"duration": ', '"duration": NaN, "was": ', "'duration' must be a number"),
    ],
)  # fmt: skip
def test_a_log_with_values_the_command_line_refuses_is_refused_in_one_line(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    repo, log = _logged(tmp_path)
    assert old in log
    edited = tmp_path / "edited.log"
    edited.write_text(log.replace(old, new))
    run = ddchange(repo.path, str(edited), command=["replay"])
    refused(run, 2, message)


def test_a_log_naming_changes_of_no_diff_here_is_refused_not_flaky(tmp_path: Path) -> None:
    repo, log = _logged(tmp_path)
    edited = tmp_path / "edited.log"
    edited.write_text(log.replace('"config": []', '"config": ["no.such.change"]', 1))
    assert edited.read_text() != log
    run = ddchange(repo.path, "-q", str(edited), command=["replay"])
    refused(run, 2, "name changes that this run's diff does not have (no.such.change)")


def test_replay_says_what_it_will_run_before_it_runs(tmp_path: Path) -> None:
    repo, log = _logged(tmp_path)
    path = tmp_path / "search.log"
    path.write_text(log)
    run = ddchange(repo.path, str(path), command=["replay"])
    assert run.returncode == 0, run.stderr
    first = run.stderr.splitlines()[0]
    assert first.startswith(f"ddchange: replaying {path}: ")
    assert "test `sh test.sh`" in first


def test_a_scratch_tree_whose_owner_pid_was_reused_is_removed_by_reset(tmp_path: Path) -> None:
    """The process that made a scratch tree died, and its pid now names another, unrelated
    process: the marker holds when its owner started, so `reset` removes the tree instead of
    asking, for ever, to stop that process."""
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    pid = os.getpid()  # alive, and no ddchange
    stale = temporary / f"ddchange-scratch-{pid}-reused"
    alternates = stale / "tree" / ".git" / "objects" / "info"
    alternates.mkdir(parents=True)
    (alternates / "alternates").write_text(f"{(repo.path / '.git' / 'objects').resolve()}\n")
    info = stale.stat()
    marker = f"ddchange {pid} {info.st_dev} {info.st_ino} {stale.name} 1\n"  # started at tick 1
    (stale / "ddchange-owner").write_text(marker)
    env = {**os.environ, "TMPDIR": str(temporary)}
    done = subprocess.run(
        [sys.executable, "-m", "ddchange", "reset"],
        cwd=repo.path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not stale.exists()


def test_the_bundle_for_a_cluster_holds_good_and_its_tags_only(tmp_path: Path) -> None:
    """What goes to every Dask worker: GOOD, its history and the tags on it (for `git
    describe`), never a tag of an unrelated commit (a secret file on an orphan tag)."""
    from ddchange import git

    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    repo.git("tag", "-a", "-m", "a release", "v1", "good")
    repo.git("checkout", "-q", "--orphan", "private")
    repo.git("rm", "-q", "-rf", ".")
    repo.write("secret.txt", "the worker must not see this\n")
    secret = repo.commit("secret")
    repo.git("tag", "leak", secret)
    repo.git("checkout", "-q", "-f", "bad")
    tree, bundle = tmp_path / "scratch", tmp_path / "good.bundle"
    tree.mkdir()
    git.clone_scratch(git.open_repo(repo.path), tree, repo.rev("good"))
    git.bundle(tree, bundle)
    heads = subprocess.run(
        ["git", "bundle", "list-heads", str(bundle)], capture_output=True, text=True, check=True
    ).stdout
    assert "refs/tags/v1" in heads
    assert "refs/tags/good" in heads
    assert "leak" not in heads
    assert "bad" not in heads
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True)
    missing = subprocess.run(["git", "-C", str(clone), "cat-file", "-e", secret])
    assert missing.returncode != 0, "the secret commit is in the bundle"


def test_daemons_started_with_an_empty_environment_end_with_their_test_at_j_2(
    tmp_path: Path,
) -> None:
    """`setsid env -i` leaves ddchange's process group and its variables: with -j 2 such a
    daemon is still known as its test's by where it works (the scratch tree), and is killed
    when the test ends, as with -j 1."""
    pids = tmp_path / "pids"
    test = (
        f"setsid env -i sh -c 'echo $$ >>\"{pids}\"; exec sleep 300' </dev/null >/dev/null 2>&1 &\n"
        "sleep 0.2\n" + CHECK
    )
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, test)
    run = search(repo, "-j", "2")
    assert run.culprits == [("a.txt", "text")], run.stderr
    started = [int(pid) for pid in pids.read_text().split()]
    assert started
    time.sleep(0.5)
    alive = [pid for pid in started if _alive(pid)]
    assert alive == []


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "zombie" not in status.lower()


def test_a_path_too_long_for_the_system_says_so_and_not_to_free_space(tmp_path: Path) -> None:
    """BAD holds a path longer than PATH_MAX (made with git's plumbing): it cannot be written
    in any scratch tree here, and no free space helps; one line says which limit it is."""
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    long = "d/" * 2100 + "f.txt"
    blob = repo.git("hash-object", "-w", "--stdin", stdin=b"deep\n").decode().strip()
    repo.git("read-tree", "bad")
    repo.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{long}")
    tree = repo.git("write-tree").decode().strip()
    commit = repo.git("commit-tree", tree, "-p", "bad", "-m", "deep").decode().strip()
    repo.git("tag", "deep", commit)
    repo.git("reset", "-q")  # the index as it was, its stat data refreshed
    run = ddchange(repo.path, "-q", "good..deep", "--", "sh", "test.sh")
    refused(run, 2, "too long to write in the scratch tree")
    assert "free" not in run.stderr
