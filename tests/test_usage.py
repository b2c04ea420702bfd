"""Input as users type it, end to end with the real command and real git: every bad input is
one line and exit 2 before the first test; git's own forms (`-C PATH` first, `A..`, pathspecs
relative to the directory run in) mean what they mean to git; the demo as the README shows it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from endtoend import ddchange, found, interrupted_after, refused, two_commits
from gitsandbox import Sandbox

from ddchange import samples

# The test notes every run in $RAN, so that "before the first test" can be checked.
TEST = 'echo ran >> "$RAN"\ngrep -q BROKEN a.txt && exit 1; exit 0\n'


@pytest.fixture
def repo(tmp_path: Path) -> Sandbox:
    return two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, TEST)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--timeout", "nan"], "Invalid value for '--timeout': not a number"),
        (["--timeout", "inf"], "inf is not in the range 0<x<=2147483"),
        (["--timeout", "2147484"], "2147484.0 is not in the range 0<x<=2147483"),
        (["-j", "200"], "'200' is not a count from 1, nor auto (at most 64)"),
        (["--keep", ""], "--keep '' is not a pathspec git accepts (empty string"),
        (["--ignore", ":(foo)x"], "not a pathspec git accepts (Invalid pathspec magic 'foo'"),
        (["--keep", "../../x"], "'../../x' is outside repository"),
        (["--json", "out.json", "--patch", "./out.json"], "--patch and --json both name"),
        (["--report", "r.html", "--patch", "r.html"], "--patch and --report both name"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_the_first_test(
    repo: Sandbox, tmp_path: Path, options: list[str], message: str
) -> None:
    ran = tmp_path / "ran"
    run = ddchange(repo.path, "good..bad", *options, "--", "sh", "test.sh",
                   env={"RAN": str(ran)}, command=["run"])  # fmt: skip
    refused(run, 2, message)
    assert not ran.exists(), "no test ran"
    assert not (repo.path / "out.json").exists()


def test_a_test_option_without_the_double_dash_gets_a_hint(repo: Sandbox) -> None:
    run = ddchange(repo.path, "good..bad", "python3", "-B", "t.py", command=["run"])
    refused(run, 2, "No such option '-B'; if it is the test command's, put `--` before")
    typo = ddchange(repo.path, "good..bad", "--jsn", "x", "--", "sh", "test.sh", command=["run"])
    refused(typo, 2, "Did you mean")
    assert "put `--` before" not in typo.stderr, "a typo of ddchange's own option is no test's"


def test_a_late_failed_write_names_its_file(repo: Sandbox, tmp_path: Path) -> None:
    """/dev/full takes the open and fails the write: only the end can tell, and says which."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    run = ddchange(repo.path, "good..bad", "-q", "--json", "/dev/full", "--", "sh", "test.sh",
                   env={"RAN": str(tmp_path / "ran")}, command=["run"])  # fmt: skip
    assert run.returncode == 2, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "ddchange: could not write --json /dev/full (No space left on device); the answer is "
        "above. Run the same command again with another --json file"
    )
    assert "a.txt" in run.stdout, "the answer is printed before"


def test_c_before_the_command_as_git_takes_it(repo: Sandbox, tmp_path: Path) -> None:
    """`ddchange -C R log` and `ddchange -C R GOOD..BAD -- CMD` from elsewhere; `-C a -C b`
    is a/b, as in git."""
    env = {"RAN": str(tmp_path / "ran")}
    run = ddchange(tmp_path, "-C", "repo", "good..bad", "--", "sh", "test.sh", env=env,
                   untouched=[repo.path])  # fmt: skip
    assert found(run) == [("a.txt", "text")]
    logged = ddchange(repo.path, command=["log"])
    assert logged.returncode == 0, logged.stderr
    assert logged.stdout.startswith("# ddchange log: good..bad")
    elsewhere = ddchange(tmp_path.parent, "-C", "repo", "log", command=["-C", tmp_path.name],
                         untouched=[repo.path])  # fmt: skip
    assert (elsewhere.returncode, elsewhere.stdout) == (0, logged.stdout)


def test_the_log_shows_the_command_as_it_is_typed(repo: Sandbox, tmp_path: Path) -> None:
    """An argument with spaces and a `;` is quoted in the log's first line, as the command
    that resumes is: the line can be run as it stands."""
    script = 'echo ran >> "$RAN"; grep -q BROKEN a.txt && exit 1; exit 0'
    run = ddchange(repo.path, "good..bad", "--", "sh", "-c", script,
                   env={"RAN": str(tmp_path / "ran")})  # fmt: skip
    assert found(run) == [("a.txt", "text")]
    logged = ddchange(repo.path, command=["log"])
    assert logged.stdout.startswith(f"# ddchange log: good..bad -- sh -c {shlex.quote(script)}\n")


def test_an_empty_side_of_the_range_is_head(repo: Sandbox, tmp_path: Path) -> None:
    """`good..` is good..HEAD, as in git (HEAD is `bad` here); `..good` is HEAD..good."""
    env = {"RAN": str(tmp_path / "ran")}
    run = ddchange(repo.path, "good..", "--", "sh", "test.sh", env=env)
    assert found(run) == [("a.txt", "text")]
    assert (run.report["bad_rev"], run.report["bad"]) == (
        "HEAD",
        repo.git("rev-parse", "bad").decode().strip(),
    )
    backwards = ddchange(repo.path, "..good", "--", "sh", "test.sh", env=env)
    refused(backwards, 1, "GOOD should pass, but the test gave FAIL")


def test_keep_is_relative_to_the_directory_run_in(tmp_path: Path) -> None:
    """From sub/, `--keep check.sh` is sub/check.sh, as `git diff -- check.sh` reads it there
    (the test runs in sub/ of the scratch tree, and BAD adds it)."""
    check = "grep -q BROKEN ../a.txt && exit 1; exit 0\n"
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n", "sub/x.txt": "x\n"},
                       {"a.txt": "BROKEN\n", "sub/check.sh": check}, "exit 0\n")  # fmt: skip
    sub = repo.path / "sub"
    without = ddchange(sub, "good..bad", "--", "sh", "check.sh", untouched=[repo.path])
    assert without.returncode == 1, without.stderr
    assert "run again with --keep check.sh." in without.stderr, "the --keep it suggests works"
    run = ddchange(sub, "good..bad", "--keep", "check.sh", "--", "sh", "check.sh",
                   untouched=[repo.path])  # fmt: skip
    assert found(run) == [("a.txt", "text")]
    assert run.report["kept"] == ["sub/check.sh"]
    top = ddchange(sub, "good..bad", "--keep", ":/check.sh", "--", "sh", "check.sh",
                   untouched=[repo.path])  # fmt: skip
    refused(top, 2, "--keep ':/check.sh' matches no path that changed")


def demo(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`ddchange demo ARGS` in `cwd` (no repository: the demo builds its own)."""
    command = [sys.executable, "-m", "ddchange", "demo", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_demo_writes_its_files_and_prints_the_command_that_resumes(tmp_path: Path) -> None:
    """`demo two-files --keep` prints the command the README shows; run there, it takes every
    test from the demo's journal (the same options, the timeout too)."""
    scenario = samples.load("two-files")
    out = tmp_path / "demo.json"
    done = demo(tmp_path, "two-files", "--keep", "--json", str(out), "--patch",
                str(tmp_path / "demo.patch"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "The answer matches the scenario's expected answer." in done.stdout
    assert json.loads(out.read_text())["outcome"] == "found"
    assert (tmp_path / "demo.patch").read_bytes().startswith(b"diff --git")
    command = ["ddchange", *samples.command(scenario)]
    assert f"the search: {' '.join(command)}" in done.stderr
    kept = Path(done.stderr.split("kept: ")[1].split(";")[0])
    try:
        again = ddchange(kept, *command[1:], command=["run"])
        assert again.returncode == 0, again.stderr
        assert "0 tests run, " in again.stdout
    finally:
        shutil.rmtree(kept.parent)


def test_the_demo_refuses_two_outputs_on_one_file(tmp_path: Path) -> None:
    done = demo(tmp_path, "--json", "x", "--report", "x")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "ddchange: --json and --report both name x: one would overwrite the other; give each its "
        "own file.\n"
    )


def test_ctrl_c_in_the_demo_is_exit_130_without_a_verdict_or_a_resume(tmp_path: Path) -> None:
    """A demo builds a new repository each time: there is nothing to resume, and an answer
    that was not reached is not a wrong one."""
    command = [sys.executable, "-m", "ddchange", "demo", "hang"]
    done = interrupted_after(command, tmp_path, 3)
    out, err = done.stdout, done.stderr
    assert done.returncode == 130, err
    assert "DIFFERS" not in out
    assert "internal error" not in err
    assert "resume" not in out + err
