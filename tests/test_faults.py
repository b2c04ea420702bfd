"""Faults, end to end: a test that writes to git, leftovers of runs that died, and more.

Every case runs the real `ddchange` command (`endtoend.ddchange`, which also checks that the
user's work tree, index, HEAD, refs, reflogs, stash, config, hooks and work tree list stay
byte-identical) and ends in the right answer or in one clear error line.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from endtoend import Link, Run, ddchange, edit, found, refused, search, two_commits
from gitsandbox import Sandbox
from userruns import culprit_matches

from ddchange import git, runs, samples
from ddchange.trial import worktree

CHECK = "grep -q BROKEN a.txt && exit 1; exit 0\n"

# -- the test runs git ----------------------------------------------------------------------

GIT_WRITER = (
    "set -e\n"
    # the user's tags are there (version tools need them), in a repository of the test's own
    "git describe --tags --match good >/dev/null || exit 125\n"
    "git tag -f from-the-test\n"
    "git branch -f from-the-test\n"
    "git notes add -f -m 'a note'\n"
    "git config user.name 'The Test'\n"
    "echo edit >> other.txt && git stash push -q -- other.txt\n"
    "git -c user.email=t@example.org commit -q --allow-empty -m 'test commit'\n"
    "set +e\n" + CHECK
)


def test_a_test_that_writes_to_git_changes_only_its_own_repository(tmp_path: Path) -> None:
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, GIT_WRITER)
    assert found(search(repo)) == [("a.txt", "text")]  # `ddchange` checked the repository
    assert b"from-the-test" not in repo.git("tag") + repo.git("branch")
    assert repo.git("stash", "list") == b""


def test_a_test_that_bumps_a_version_and_commits_is_undone_before_the_next(
    tmp_path: Path,
) -> None:
    """Each test bumps VERSION (outside the diff) and commits it: the next test sees GOOD's
    VERSION and HEAD again, so the deterministic test is not reported flaky."""
    bump = (
        'read v <VERSION; [ "$v" = 1 ] || { echo "VERSION leaked: $v"; exit 1; }\n'
        "echo 2 >VERSION && git -c user.email=t@example.org commit -q -am bump || exit 125\n"
    )
    good = {"a.txt": "fine\n", "VERSION": "1\n"}
    repo = two_commits(tmp_path / "repo", good, {"a.txt": "BROKEN\n"}, bump + CHECK)
    run = search(repo)
    assert found(run) == [("a.txt", "text")]
    assert "VERSION leaked" not in run.stderr


def test_git_in_a_test_that_deleted_git_does_not_reach_the_users_repository(
    tmp_path: Path,
) -> None:
    """The temporary directory inside the user's checkout (CI's `TMPDIR=$WORKSPACE/tmp`): a
    test that deletes the scratch tree's .git and runs `git stash -u`, there or from the
    directory above, finds no repository, and our own git commands there fail too, rather
    than find the user's one further up."""
    test = (
        'rm -rf .git\ngit stash push -u -q && echo stashed >>"$LOG"\n'
        '(cd .. && git stash push -u -q && echo stashed from above >>"$LOG")\n'
    )
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, test + CHECK)
    repo.write("other.txt", "the user's edit, not committed\n")
    repo.write("notes.txt", "the user's own untracked file\n")
    temporary = repo.path / "tmp"
    temporary.mkdir()
    log = tmp_path / "log"
    log.touch()
    run = search(repo, env={"TMPDIR": str(temporary), "LOG": str(log)})  # checks the repository
    assert run.returncode == 1, run.stderr  # the run stops: the tree's repository is gone
    assert "could not be written" in run.stderr
    assert log.read_text() == "", "the test's `git stash` found a repository"
    assert repo.git("stash", "list") == b""
    assert (repo.path / "other.txt").read_text() == "the user's edit, not committed\n"
    assert list(temporary.iterdir()) == []


def _git_files(repo: Path) -> dict[str, bytes]:
    """Every file of the repository's .git but ddchange's own directory, and its bytes."""
    git_dir = repo / ".git"
    return {
        str(path.relative_to(git_dir)): path.read_bytes()
        for path in sorted(git_dir.rglob("*"))
        if path.is_file() and path.relative_to(git_dir).parts[0] != "ddchange"
    }


def test_a_partial_clones_blobs_fetched_on_demand_stay_out_of_the_users_objects(
    tmp_path: Path,
) -> None:
    """A --filter=blob:none clone with BAD checked out lacks GOOD's version of a.txt: git
    fetches it while ddchange reads the diff, into ddchange's own directory, and the user's
    .git stays byte-identical, objects included."""
    server = two_commits(tmp_path / "server", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    server.git("config", "uploadpack.allowFilter", "true")
    user = Sandbox(tmp_path / "user")
    url = f"file://{server.path}"
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", url, str(user.path)], check=True)
    user.git("checkout", "-q", "bad")
    before = _git_files(user.path)
    assert found(search(user)) == [("a.txt", "text")]
    assert _git_files(user.path) == before
    assert list((user.path / ".git" / "ddchange" / "objects" / "pack").glob("*.pack"))


# -- leftovers of runs that died ------------------------------------------------------------


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _made_by_a_dead_process(make: str, where: Path) -> Path:
    """The directory that `worktree.<make>()` made in a process that is gone now, in the
    temporary directory `where`."""
    code = f"from ddchange.trial import worktree; print(worktree.{make}())"
    env = {**os.environ, "TMPDIR": str(where)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
    return Path(done.stdout.decode().strip())


def _leftover(repo: Sandbox, where: Path, *, git_dir: bool, read_only: bool) -> Path:
    """The directory of a scratch tree of a process that is gone, in the temporary directory
    `where`: with or without its .git, and with a build directory nobody may write to."""
    path = _made_by_a_dead_process("scratch_directory", where)
    if git_dir:
        git.clone_scratch(git.open_repo(repo.path), path, repo.rev("good"))
    build = path / "build" / "deep"
    build.mkdir(parents=True)
    (build / "out.o").write_text("object\n")
    if read_only:
        build.chmod(0o500)
        build.parent.chmod(0o500)
    return path.parent


def test_leftovers_of_dead_runs_are_removed_in_any_state(tmp_path: Path) -> None:
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    private = tmp_path / "tmp"  # ddchange's temporary directory here: no other run's trees
    private.mkdir()
    env = {"TMPDIR": str(private)}
    leftovers = [
        _leftover(repo, private, git_dir=True, read_only=False),
        _leftover(repo, private, git_dir=False, read_only=False),  # .git deleted, then SIGKILL
        _leftover(repo, private, git_dir=True, read_only=True),
    ]
    assert found(search(repo, env=env)) == [("a.txt", "text")]
    assert not any(path.exists() for path in leftovers)
    leftovers = [_leftover(repo, private, git_dir=False, read_only=True)]
    run = ddchange(repo.path, command=["reset"], env=env)
    assert run.returncode == 0, run.stderr
    assert not any(path.exists() for path in leftovers)


def test_only_a_directory_that_carries_our_marker_with_a_dead_owner_is_removed(
    tmp_path: Path,
) -> None:
    """Look-alikes in the temporary directory stay, whatever pid their names hold: one a user
    made, a copy of a leftover a user kept to look into, a worker's directory with a marker
    copied from elsewhere; only the real leftover goes, by `reset` or by a run."""
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    private = tmp_path / "tmp"
    private.mkdir()
    leftover = _leftover(repo, private, git_dir=True, read_only=False)
    made = private / f"ddchange-scratch-{_dead_pid()}-mine"
    (made / "tree").mkdir(parents=True)
    (made / "tree" / "notes.txt").write_text("the user's\n")
    kept = private / f"{leftover.name}-kept"
    shutil.copytree(leftover, kept, symlinks=True)
    worker = private / f"ddchange-worker-{_dead_pid()}-mine"
    worker.mkdir()
    shutil.copy(leftover / "ddchange-owner", worker)
    env = {"TMPDIR": str(private)}
    run = ddchange(repo.path, command=["reset"], env=env)
    assert run.returncode == 0, run.stderr
    assert not leftover.exists()
    assert sorted(path.name for path in private.iterdir()) == sorted(
        path.name for path in (made, kept, worker)
    )
    assert (made / "tree" / "notes.txt").read_text() == "the user's\n"
    assert (kept / "tree" / ".git").is_dir()
    assert found(search(repo, env=env)) == [("a.txt", "text")]
    assert sorted(path.name for path in private.iterdir()) == sorted(
        path.name for path in (made, kept, worker)
    )


def test_a_dead_dask_workers_directory_goes_with_the_tests_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a worker killed before its exit handler left (a clone with a read-only build, a
    test still running in it) is removed; a live worker's directory stays."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # as TMPDIR would
    dead = _made_by_a_dead_process("worker_directory", tmp_path)
    clone = dead / "ddchange-scratch-clone"
    (clone / "build").mkdir(parents=True)
    (clone / "build" / "out.o").write_text("object\n")
    (clone / "build").chmod(0o500)
    test = subprocess.Popen(["sleep", "60"], cwd=clone)
    live = worktree.worker_directory()
    (live / "its-clone").mkdir()
    try:
        assert worktree.remove_dead_workers() == [dead.resolve()]
        assert test.wait(timeout=10) == -signal.SIGKILL
        assert not dead.exists()
        assert (live / "its-clone").is_dir()
    finally:
        test.kill()
        test.wait()


def test_reset_refuses_while_a_live_run_owns_a_scratch_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A temporary directory of this test's own: a scratch tree that another test's run is
    # making or removing at the same moment has no .git to tell its repository by, and counts
    # as every repository's (worktree.owners).
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", None)
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    other = two_commits(tmp_path / "other", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    with worktree.scratch_worktree(git.open_repo(repo.path), repo.rev("good")) as scratch:
        # another repository's reset leaves this live tree alone, and does not refuse
        runs.reset(other.path)
        assert worktree.owners(git.open_repo(repo.path)) == {scratch.path.parent: os.getpid()}
        run = ddchange(repo.path, command=["reset"])
        assert run.returncode != 0
        assert str(os.getpid()) in run.stderr
        assert scratch.path.exists()


# -- the journal ----------------------------------------------------------------------------


def _journal(repo: Sandbox) -> Path:
    return repo.path / ".git" / "ddchange" / "journal.sqlite"


def _one_line(run: Run) -> str:
    """The run's one message, after the progress lines (one per test)."""
    lines = [line for line in run.stderr.splitlines() if not line.startswith("test ")]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("ddchange: "), run.stderr
    return lines[0]


def test_a_damaged_journal_is_named_with_what_to_do(tmp_path: Path) -> None:
    """`ddchange reset` refuses while a scratch tree it cannot tell from this repository's has
    a live owner: in the shared temporary directory, another test's run being made or removed
    is one. So every run here has a temporary directory of its own."""
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    (tmp_path / "tmp").mkdir()
    env = {"TMPDIR": str(tmp_path / "tmp")}
    assert found(search(repo, env=env)) == [("a.txt", "text")]
    for leftover in _journal(repo).parent.glob("journal.sqlite-*"):  # WAL files
        leftover.unlink()
    _journal(repo).write_bytes(b"this is not a database\n" * 100)
    run = search(repo, env=env)
    assert run.returncode == 1
    line = _one_line(run)
    assert str(_journal(repo)) in line
    assert "`ddchange reset`" in line
    assert ddchange(repo.path, command=["reset"], env=env).returncode == 0, "no run is going"
    assert found(search(repo, env=env)) == [("a.txt", "text")]


@contextlib.contextmanager
def _read_only(directory: Path) -> Iterator[None]:
    """`directory` cannot be written, also by root: a read-only bind mount where we may mount,
    else its permission bits (which root ignores: then the test cannot be made)."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        for file in directory.iterdir():
            file.chmod(0o444)
        yield
        return
    bind = ["mount", "--bind", str(directory), str(directory)]
    if subprocess.run(bind, capture_output=True).returncode != 0:
        pytest.skip("root, but may not mount: cannot make a directory read-only")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(directory)], check=True)
        yield
    finally:
        subprocess.run(["umount", str(directory)], check=True)


def test_a_read_only_journal_is_named_with_what_to_do(tmp_path: Path) -> None:
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, CHECK)
    assert found(search(repo)) == [("a.txt", "text")]
    with _read_only(_journal(repo).parent):
        run = search(repo)
    assert run.returncode == 1
    line = _one_line(run)
    assert str(_journal(repo)) in line
    assert "cannot be written" in line
    assert found(search(repo)) == [("a.txt", "text")], "the journal is intact"


# -- faults of the machine are no outcome ---------------------------------------------------

FILLS_THE_DISK = (
    'if [ -e "$FILL" ]; then head -c 64000000 /dev/zero > filler || exit 1; fi\n' + CHECK
)


def _records(repo: Sandbox) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(_journal(repo))) as db:
        return list(db.execute("SELECT phase, outcome FROM tests ORDER BY id"))


def _file_size_limit() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


@contextlib.contextmanager
def _small_disk(path: Path) -> Iterator[None]:
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(path)])
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


@pytest.mark.parametrize("fault", ["file-size limit", "full disk"])
def test_a_full_disk_stops_the_run_records_nothing_and_the_same_command_resumes(
    tmp_path: Path, fault: str
) -> None:
    repo = two_commits(
        tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, FILLS_THE_DISK
    )
    flag = tmp_path / "fill"
    flag.touch()
    small = tmp_path / "small"
    env = {"FILL": str(flag), "TMPDIR": str(small)}
    limit = _file_size_limit if fault == "file-size limit" else None
    with _small_disk(small) if fault == "full disk" else _directory(small):
        run = ddchange(repo.path, "good..bad", "--", "sh", "test.sh", env=env, preexec=limit)
        assert run.returncode == 1
        line = _one_line(run)
        assert "stopped:" in line
        assert ("file-size limit" if limit else "the disk is full") in line
        assert "run the same command again" in line
        assert _records(repo) == [], "nothing is recorded for a run the machine broke"
        assert list(small.iterdir()) == [], "the scratch tree is gone"
        flag.unlink()
        assert found(ddchange(repo.path, "good..bad", "--", "sh", "test.sh", env=env)) == [
            ("a.txt", "text")
        ]


@contextlib.contextmanager
def _directory(path: Path) -> Iterator[None]:
    path.mkdir()
    yield


# -- exact materialization ------------------------------------------------------------------


def test_a_symlink_that_becomes_a_directory_and_back(tmp_path: Path) -> None:
    test = "grep -q BROKEN data/x.txt && exit 1; test -L lib && exit 1; exit 0\n"
    good = {"real/x.txt": "fine\n", "data": Link("real"), "lib/y.txt": "y\n"}
    bad_dir = {"data": None, "data/x.txt": "BROKEN\n"}
    repo = two_commits(tmp_path / "one", good, bad_dir, test)
    # The directory's file cannot come without the symlink's deletion: both, and nothing else.
    assert sorted(found(search(repo))) == [("data", "delete"), ("data/x.txt", "add")]
    bad_link = {"lib/y.txt": None, "lib": Link("real")}
    repo = two_commits(tmp_path / "two", good, bad_link, test)
    assert sorted(found(search(repo))) == [("lib", "add"), ("lib/y.txt", "delete")]


def test_clean_removes_build_output_that_a_test_cannot_take(tmp_path: Path) -> None:
    test = "[ -e out.o ] && exit 3; touch out.o\n" + CHECK  # fails on its own leftovers
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, test)
    run = search(repo)
    assert run.returncode == 4, "without --clean, GOOD's last run sees what others left"
    wanted = run.report["confirmation"]["runs"]  # GOOD fails again as often as the answer did
    assert run.report["confirmation"]["good_failing_at_end"] == wanted
    assert f"FAILED in its last {wanted} runs at the end" in run.stdout
    assert "--clean" in run.stdout
    assert found(search(repo, "--clean")) == [("a.txt", "text")]


def test_a_directory_that_only_bad_has_gives_a_clear_reason(tmp_path: Path) -> None:
    bad = {"a.txt": "BROKEN\n", "tests/new/check.sh": CHECK.replace("a.txt", "../../a.txt")}
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, bad, CHECK)
    run = ddchange(repo.path / "tests" / "new", "good..bad", "--", "sh", "check.sh",
                   untouched=[repo.path])  # fmt: skip
    assert run.returncode == 1
    assert "no directory tests/new/ here, where the test runs" in run.stderr


def test_a_same_size_rewrite_within_one_second_is_not_hidden_by_bytecode(tmp_path: Path) -> None:
    test = 'python3 -c "import mod, sys; sys.exit(1 if mod.X == 2 else 0)"\n'
    lines = "".join(f"# line {n}\n" for n in range(40))
    good = {"mod.py": "X = 1\n" + lines, "b.py": lines}
    bad = {"mod.py": "X = 2\n" + lines, "b.py": edit(lines, ("line 7\n", "line seven\n"))}
    repo = two_commits(tmp_path / "repo", good, bad, test)
    run = search(repo, env={"PYTHONDONTWRITEBYTECODE": ""})
    assert found(run) == [("mod.py", "text")]


# -- a test that fails at random -----------------------------------------------------------

# A test that fails at random once, in its second run of a configuration without the culprit
# (z.txt's BROKEN): the search's first candidate (the first half of the files, z.txt last), so
# the search is misled into an answer that in truth passes (its runs are counted in a file).
SPURIOUS_FAILURE = (
    'n=$(cat "$COUNT" 2>/dev/null || echo 0)\n'
    "grep -q BROKEN z.txt && exit 1\n"
    'echo $((n + 1)) > "$COUNT"; [ "$n" -eq 1 ] && exit 1; exit 0\n'
)


def test_a_failure_at_random_that_misleads_the_search_is_caught_and_searched_past(
    tmp_path: Path,
) -> None:
    """The search ends on a wrong answer, seen to fail once at random; run again at the end it
    passes, a fact: the search goes again from what was seen and ends on the culprit, exit 5
    (found, though the test fails at random), with the runs as evidence."""
    good = {"a.txt": "one\n", "z.txt": "fine\n"}
    repo = two_commits(tmp_path / "repo", good, {"a.txt": "two\n", "z.txt": "BROKEN\n"},
                       SPURIOUS_FAILURE)  # fmt: skip
    run = search(repo, env={"COUNT": str(tmp_path / "count")})
    assert run.returncode == 5, run.stderr
    assert run.report["outcome"] == "found"
    [evidence] = run.report["flaky"]
    assert evidence["phase"] == "confirm"
    assert evidence["outcomes"][:2] == ["fail", "pass"], "the rerun of the wrong answer passed"
    assert "NOTE: the test fails at random" in run.stdout
    assert [(path, kind) for path, kind in run.culprits] == [("z.txt", "text")]
    answer = run.report["answer"]
    # the second check asks for half the risk: 4 reruns at 1 in 4 (0.25 ** 4 < 0.01)
    assert answer["runs"] == answer["fails"] == 5, "its search runs and 4 reruns: all FAIL"
    assert run.report["confirmation"]["reruns"] == 4
    assert run.report["confirmation"]["risk"] == 0.25**3 + 0.25**4, "both checks' chances"
    assert run.report["confirmation"]["bad"]["fails"] == 5, "BAD as often as the answer"


def test_an_answer_that_fails_another_way_when_run_again_is_searched_past(tmp_path: Path) -> None:
    """As above, but the wrong answer's rerun cannot be tested (125) rather than passing: its
    runs disagree, so it is no answer, and the search goes again from what was seen, not
    ending the run as flaky (exit 4) after one search; it ends on the culprit, exit 5."""
    unresolved = SPURIOUS_FAILURE.replace(
        '[ "$n" -eq 1 ] && exit 1;', '[ "$n" -eq 1 ] && exit 1; [ "$n" -eq 2 ] && exit 125;'
    )
    assert unresolved != SPURIOUS_FAILURE
    good = {"a.txt": "one\n", "z.txt": "fine\n"}
    repo = two_commits(tmp_path / "repo", good, {"a.txt": "two\n", "z.txt": "BROKEN\n"},
                       unresolved)  # fmt: skip
    run = search(repo, env={"COUNT": str(tmp_path / "count")})
    assert run.returncode == 5, run.stdout + run.stderr
    assert [(path, kind) for path, kind in run.culprits] == [("z.txt", "text")]
    [evidence] = run.report["flaky"]
    assert evidence["outcomes"][:2] == ["fail", "unresolved"]
    assert "  1 line change (confirm): FAIL, UNRESOLVED" in run.stdout, "line changes, named so"


# Fails at random in the runs whose numbers (counted in $COUNT, from 1) $RANDOM_RUNS lists,
# then runs the test it wraps.
AT_RUNS = (
    'n=$(cat "$COUNT" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$COUNT"\n'
    'case ",$RANDOM_RUNS," in *",$n,"*) exit 1;; esac\n'
    'exec "$@"\n'
)


def test_an_answer_that_a_passing_superset_contradicts_is_checked_as_for_a_flaky_test(
    tmp_path: Path,
) -> None:
    """The runs of a default run of the two-files sample as one of 300 with a test failing at
    random went: the bisection misled to 922e193 by a FAIL at random (run 3), the search
    inside it, where nothing fails, acting on FAILs at random, and a wrong answer (a docstring)
    failing its 3 reruns too. Changes holding all of that answer had passed (a fact): under
    monotony they fail where it does, so the check asks as for a test seen to fail at random,
    one rerun more, which passes; the bisection goes again and ends on the culprit (exit 5).
    It was exit 0 and the docstring."""
    scenario = samples.load("two-files")
    repo = samples.build_repo(scenario, tmp_path / "repo")
    wrapper = tmp_path / "at-runs.sh"
    wrapper.write_text(AT_RUNS)
    env = {"COUNT": str(tmp_path / "count"), "RANDOM_RUNS": "3,8,10,13,14,15,16,17"}
    run = ddchange(repo, f"{scenario.good}..{scenario.bad}", "--", "sh", str(wrapper),
                   *scenario.test, env=env)  # fmt: skip
    assert run.returncode == 5, run.stdout + run.stderr
    [culprit] = run.report["culprits"]
    assert culprit["path"] == "csvreport/reader.py"
    assert "encoding=settings.ENCODING" in culprit["diff"]
    wrong = [d for d in run.report["flaky"] if d["phase"] == "confirm"]
    assert [d["outcomes"] for d in wrong] == [["fail"] * 4 + ["pass"]], "4 reruns, not 3"
    assert culprit_matches(scenario, run.report["culprits"], inside=True)
    # the run's second check, after the first asked for half the risk: 4 reruns each
    confirmation = run.report["confirmation"]
    assert (confirmation["checks"], confirmation["reruns"]) == (2, 4)
    assert confirmation["risk"] == 2 * 0.25**4


def test_good_failing_once_at_random_in_the_preflight_does_not_end_the_run(
    tmp_path: Path,
) -> None:
    """GOOD's first run fails at random: it runs again and passes, a fact, so GOOD passes;
    the search goes on and finds the culprit (exit 5, the disagreement as evidence), and its
    check asks for as much confidence as a run that may check twice needs."""
    once = tmp_path / "failed-once"
    test = f'if [ ! -e "{once}" ]; then : > "{once}"; exit 1; fi\n' + CHECK
    good = {"a.txt": "fine\n", "b.txt": "one\n"}
    bad = {"a.txt": "BROKEN\n", "b.txt": "two\n"}
    run = search(two_commits(tmp_path / "repo", good, bad, test))
    assert run.returncode == 5, run.stdout + run.stderr
    assert [(path, kind) for path, kind in run.culprits] == [("a.txt", "text")]
    [evidence] = run.report["flaky"]
    assert (evidence["phase"], evidence["outcomes"][:2]) == ("good", ["fail", "pass"])
    # Seen to fail at random before the first check, the test asks that check for half the
    # risk (a second may follow): at the rate seen, (1 + 4 * 0.25) / (2 + 4) = 1/3, 5 reruns
    # ((1/3) ** 5 <= 0.01 < (1/3) ** 4), where a test not seen to would take 3.
    confirmation = run.report["confirmation"]
    assert confirmation["flake_rate"] == 1 / 3
    assert (confirmation["reruns"], confirmation["risk"]) == (5, (1 / 3) ** 5)


def test_the_answer_is_run_again_as_often_as_the_confidence_needs(tmp_path: Path) -> None:
    """On a test that is not flaky the checks cost 6 runs: the pre-flight's 2, the reruns of
    the answer (3 at the default confidence of 0.98, as 0.25 ** 3 < 0.02 < 0.25 ** 2) and GOOD
    once more; nothing else the answer says passes is run again."""
    good = {"a.txt": "fine\n", "b.txt": "one\n"}
    bad = {"a.txt": "BROKEN\n", "b.txt": "two\n"}
    run = search(two_commits(tmp_path / "repo", good, bad, CHECK))
    assert found(run) == [("a.txt", "text")]
    answer = run.report["answer"]["changes"]
    confirm = [(r["config"], r["outcome"]) for r in run.report["log"] if r["phase"] == "confirm"]
    assert confirm == [(answer, "fail")] * 3 + [([], "pass")]
    assert sum(r["phase"] in ("good", "bad") for r in run.report["log"]) == 2
    assert run.report["confirmation"]["reruns"] == 3
    assert run.report["confirmation"]["risk"] == 0.25**3
    assert "failed again in 3 of 3 reruns (4 runs in all). Confidence 98.4%" in run.stdout
    assert "GOOD passed again at the end (2 runs in all)" in run.stdout
    surer = search(two_commits(tmp_path / "surer", good, bad, CHECK), "--confidence", "0.999")
    assert found(surer) == [("a.txt", "text")]
    assert surer.report["confirmation"]["reruns"] == 5
    again = two_commits(tmp_path / "again", good, bad, CHECK)
    unconfirmed = search(again, "--no-confirm")
    assert found(unconfirmed) == [("a.txt", "text")]
    assert unconfirmed.report["confirmation"] is None
    assert [r for r in unconfirmed.report["log"] if r["phase"] == "confirm"] == []
    for wrong in ("1", "-0.5", "nan"):
        refused(search(again, "--confidence", wrong), 2, "--confidence")


def test_good_that_fails_is_run_as_often_as_the_answer_would_be_before_it_ends_the_run(
    tmp_path: Path,
) -> None:
    """GOOD's failure ends the run, and a FAIL may come at random: 1 + 3 runs before it does."""
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, "exit 1\n")
    run = search(repo)
    assert run.returncode == 1
    assert "in 4 of 4 runs" in run.stderr


# -- processes ------------------------------------------------------------------------------


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.02)
    return False


def test_a_daemon_that_leaves_the_process_group_does_not_outlive_its_test(tmp_path: Path) -> None:
    test = "setsid sh -c 'echo $$ >> \"$PIDS\"; exec sleep 300' &\nsleep 0.1\n" + CHECK
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, test)
    pids = tmp_path / "pids"
    assert found(search(repo, env={"PIDS": str(pids)})) == [("a.txt", "text")]
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) >= 4
    assert all(_gone(pid) for pid in started)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc (Linux)")
def test_no_child_of_ddchange_is_left_a_zombie_while_the_tests_run(tmp_path: Path) -> None:
    """The child that analyses the diff's names meanwhile is reaped as soon as it ends: each
    test looks at ddchange's children (its parent's) and finds none dead and unreaped."""
    look = (
        "for child in $(cat /proc/$PPID/task/*/children); do\n"
        '  grep -q \') Z \' /proc/$child/stat 2>/dev/null && echo "$child" >>"$LOG"\n'
        "done\n"
    )
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, look + CHECK)
    log = tmp_path / "zombies"
    log.touch()
    run = search(repo, env={"LOG": str(log)})
    assert found(run) == [("a.txt", "text")]
    assert run.report["tests_run"] >= 4
    assert log.read_text() == ""


def test_a_test_that_deletes_git_then_kills_ddchange(tmp_path: Path) -> None:
    killer = (
        'if [ -e "$KILL" ] && grep -q BROKEN a.txt; then\n'
        '  rm -rf .git; rm "$KILL"; kill -KILL "$(cat "$DDCHANGE_PID")"; sleep 300\n'
        "fi\n" + CHECK
    )
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, killer)
    flag, pid_file, temporary = tmp_path / "kill", tmp_path / "pid", tmp_path / "tmp"
    flag.touch()
    temporary.mkdir()
    env = {**os.environ, "KILL": str(flag), "DDCHANGE_PID": str(pid_file), "TMPDIR": str(temporary)}
    process = subprocess.Popen(
        [sys.executable, "-m", "ddchange", "good..bad", "--", "sh", "test.sh"],
        cwd=repo.path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pid_file.write_text(f"{process.pid}\n")
    assert process.wait(timeout=120) == -signal.SIGKILL
    [left] = list(temporary.iterdir())
    assert (left / "tree").is_dir()
    assert not (left / "tree" / ".git").exists()
    again = ddchange(repo.path, "good..bad", "--", "sh", "test.sh", env={"TMPDIR": str(temporary)})
    assert found(again) == [("a.txt", "text")]
    assert list(temporary.iterdir()) == [], "the leftover and its sleeping test are gone"


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1])
def test_a_hangup_quit_or_usr1_stops_the_run_as_sigterm_does(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """A closed terminal (SIGHUP), Ctrl-\\ (SIGQUIT), a scheduler's notice (SIGUSR1) during a
    test: the test's process group is stopped, the scratch tree removed, and the same command
    resumes to the answer."""
    sleeper = (
        'if grep -q BROKEN a.txt && [ ! -e "$STARTED" ]; then\n'
        '  echo $$ >"$STARTED.tmp" && mv "$STARTED.tmp" "$STARTED"; exec sleep 300\n'
        "fi\n" + CHECK
    )
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, sleeper)
    started, temporary = tmp_path / "started", tmp_path / "tmp"
    temporary.mkdir()
    env = {"STARTED": str(started), "TMPDIR": str(temporary)}
    process = subprocess.Popen(
        [sys.executable, "-m", "ddchange", "good..bad", "--", "sh", "test.sh"],
        cwd=repo.path,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not started.exists() and process.poll() is None:
            time.sleep(0.02)
        process.send_signal(sig)
        _out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "interrupted" in err
    assert "Traceback" not in err
    assert _gone(int(started.read_text()))
    assert list(temporary.iterdir()) == []
    again = search(repo, env=env)
    assert found(again) == [("a.txt", "text")]
    assert list(temporary.iterdir()) == []


def test_signals_during_the_final_removal_leave_no_scratch_tree(tmp_path: Path) -> None:
    build = (
        "[ -d build ] || python3 -c \"import os; os.mkdir('build'); "
        "[open(f'build/{i}', 'w').close() for i in range(20000)]\"\n" + CHECK
    )
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, build)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "ddchange", "good..bad", "--", "sh", "test.sh"],
        cwd=repo.path,
        env={**os.environ, "TMPDIR": str(temporary)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    storm = _removal_started(temporary, process)
    while process.poll() is None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)
        time.sleep(0.002)
    _out, err = process.communicate()
    assert storm, "the signals came while the scratch tree was being removed"
    # Found, interrupted (130), or ended by one of the signals that kept coming after ddchange
    # had let go of them on its way out: in every case, the tree is gone.
    assert process.returncode in (0, 130, -signal.SIGINT, -signal.SIGTERM), err
    assert "Traceback" not in err
    assert list(temporary.iterdir()) == []


def _removal_started(temporary: Path, process: subprocess.Popen[str]) -> bool:
    """Wait until the scratch tree's build output is complete and then starts to go."""
    complete = False
    while process.poll() is None:
        trees = list(temporary.glob("ddchange-scratch-*"))
        try:
            count = len(os.listdir(trees[0] / "tree" / "build")) if trees else 0
        except OSError:
            count = 0 if complete else -1
        if complete and count < 20000:
            return True
        complete = complete or count == 20000
        time.sleep(0.001)
    return False
