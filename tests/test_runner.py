"""Tests for runner.py, with real processes (sh, python, sleep) in tmp_path."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ddchange import errors, git
from ddchange.cli import cli
from ddchange.model import Outcome
from ddchange.trial.runner import (
    OUTPUT_LIMIT,
    SCRATCH_VARIABLE,
    TAIL_CHARS,
    Execution,
    Expectation,
    Verdict,
    classify,
    run,
    run_candidate,
    sharing,
)

ANY_FAILURE = Expectation()


def _execution(exit_code: int | None, output: str = "", timed_out: bool = False) -> Execution:
    return Execution(
        command="t",
        exit_code=exit_code,
        timed_out=timed_out,
        duration=0.0,
        timeout=5.0,
        output=output,
        size=len(output.encode()),
    )


def _sh(script: str, cwd: Path, expect: Expectation = ANY_FAILURE, timeout: float = 5.0) -> Verdict:
    return run_candidate(cwd, ["sh", "-c", script], build=None, timeout=timeout, expect=expect)


def _running(pid: int) -> bool:
    """Whether `pid` is a live process; a zombie nobody has reaped yet counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _gone_soon(pid: int) -> bool:
    """Whether `pid` is gone within a few seconds (the kernel delivers SIGKILL asynchronously)."""
    deadline = time.monotonic() + 5.0
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _wait_for_file(path: Path) -> str:
    deadline = time.monotonic() + 5.0
    while not path.exists() or not path.read_text().endswith("\n"):
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.01)
    return path.read_text()


# -- classify: the git bisect run table --------------------------------------------------------


@pytest.mark.parametrize(
    ("exit_code", "expect", "outcome", "reason"),
    [
        (0, ANY_FAILURE, Outcome.PASS, "exit 0"),
        (1, ANY_FAILURE, Outcome.FAIL, "exit 1"),
        (127, ANY_FAILURE, Outcome.FAIL, "exit 127"),
        (125, ANY_FAILURE, Outcome.UNRESOLVED, "exit 125 (skip)"),
        (125, Expectation(exit_code=125), Outcome.UNRESOLVED, "exit 125 (skip)"),
        (3, Expectation(exit_code=3), Outcome.FAIL, "exit 3"),
        (3, Expectation(exit_code=1), Outcome.UNRESOLVED, "different failure: exit 3"),
        (0, Expectation(exit_code=1), Outcome.PASS, "exit 0"),
    ],
)
def test_classify_follows_git_bisect_run(
    exit_code: int, expect: Expectation, outcome: Outcome, reason: str
) -> None:
    assert classify(_execution(exit_code), expect) == (outcome, reason)


def test_classify_timeout_is_unresolved() -> None:
    assert classify(_execution(None, timed_out=True), ANY_FAILURE) == (
        Outcome.UNRESOLVED,
        "timeout after 5s",
    )


@pytest.mark.parametrize(
    ("output", "outcome", "reason"),
    [
        ("...\nAssertionError: boom\n", Outcome.FAIL, "exit 1"),
        (
            "...\nKeyError: 'x'\n",
            Outcome.UNRESOLVED,
            "different failure: exit 1, no match for 'boom'",
        ),
    ],
)
def test_classify_pattern(output: str, outcome: Outcome, reason: str) -> None:
    expect = Expectation(exit_code=1, pattern=re.compile("boom"))
    assert classify(_execution(1, output), expect) == (outcome, reason)


@pytest.mark.parametrize("exit_code", [128, 130, 139, 255])
def test_classify_aborts_above_127(exit_code: int) -> None:
    with pytest.raises(errors.TestAborted) as caught:
        classify(_execution(exit_code), ANY_FAILURE)
    assert caught.value == errors.TestAborted(exit_code, "t")


@pytest.mark.parametrize(
    ("exit_code", "expect", "outcome", "reason"),
    [
        (-signal.SIGSEGV, ANY_FAILURE, Outcome.FAIL, "killed by SIGSEGV"),
        (-signal.SIGABRT, ANY_FAILURE, Outcome.FAIL, "killed by SIGABRT"),
        (
            -signal.SIGSEGV,
            Expectation(exit_code=-signal.SIGSEGV),
            Outcome.FAIL,
            "killed by SIGSEGV",
        ),
        (
            -signal.SIGSEGV,
            Expectation(exit_code=1),
            Outcome.UNRESOLVED,
            "different failure: killed by SIGSEGV",
        ),
        (1, Expectation(exit_code=-signal.SIGBUS), Outcome.UNRESOLVED, "different failure: exit 1"),
        (-signal.SIGKILL, ANY_FAILURE, Outcome.UNRESOLVED, "killed by SIGKILL"),
        (-signal.SIGTERM, ANY_FAILURE, Outcome.UNRESOLVED, "killed by SIGTERM"),
    ],
)
def test_classify_a_crash_fails_and_other_signals_say_nothing(
    exit_code: int, expect: Expectation, outcome: Outcome, reason: str
) -> None:
    assert classify(_execution(exit_code), expect) == (outcome, reason)


@pytest.mark.parametrize(
    ("output", "outcome", "reason"),
    [
        ("AssertionError: 0.3 != 0.33", Outcome.FAIL, "exit 1"),
        ("ImportError: cannot import name 'round2'", Outcome.FAIL, "exit 1"),
        (
            "ModuleNotFoundError: No module named 'pkg.helpers'",
            Outcome.UNRESOLVED,
            "different failure: exit 1, says helpers missing, which BAD's run did not",
        ),
        (
            "NameError: name 'total' is not defined",
            Outcome.UNRESOLVED,
            "different failure: exit 1, says total missing, which BAD's run did not",
        ),
    ],
)
def test_classify_a_missing_name_bad_did_not_miss_is_another_failure(
    output: str, outcome: Outcome, reason: str
) -> None:
    """Once BAD's failure is adopted with the names its output says are missing (here
    round2), a run that exits alike but says another name is missing fails another way."""
    expect = Expectation(exit_code=1, missing=frozenset({"round2"}))
    assert classify(_execution(1, output), expect) == (outcome, reason)
    assert classify(_execution(1, output), Expectation(exit_code=1)) == (Outcome.FAIL, "exit 1")


# -- run_candidate with real commands ---------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "outcome", "reason"),
    [
        ("exit 0", Outcome.PASS, "exit 0"),
        ("exit 1", Outcome.FAIL, "exit 1"),
        ("exit 125", Outcome.UNRESOLVED, "exit 125 (skip)"),
    ],
)
def test_exit_codes(tmp_path: Path, script: str, outcome: Outcome, reason: str) -> None:
    verdict = _sh(script, tmp_path)
    assert (verdict.outcome, verdict.reason) == (outcome, reason)
    assert verdict.build is None
    assert verdict.test is not None
    assert verdict.test.command == f"sh -c '{script}'"


def test_different_exit_code_is_unresolved(tmp_path: Path) -> None:
    verdict = _sh("exit 3", tmp_path, Expectation(exit_code=1))
    assert (verdict.outcome, verdict.reason) == (Outcome.UNRESOLVED, "different failure: exit 3")


@pytest.mark.parametrize(
    ("message", "outcome"),
    [("AssertionError: total is 41", Outcome.FAIL), ("ImportError: no foo", Outcome.UNRESOLVED)],
)
def test_pattern_is_searched_in_stderr_too(tmp_path: Path, message: str, outcome: Outcome) -> None:
    expect = Expectation(exit_code=1, pattern=re.compile(r"total is \d+"))
    verdict = _sh(f"echo running; echo '{message}' >&2; exit 1", tmp_path, expect)
    assert verdict.outcome is outcome


def test_build_runs_first_in_the_same_directory(tmp_path: Path) -> None:
    verdict = run_candidate(
        tmp_path,
        ["test", "-f", "built"],
        build="touch built",
        timeout=5.0,
        expect=ANY_FAILURE,
    )
    assert (verdict.outcome, verdict.reason) == (Outcome.PASS, "exit 0")
    assert verdict.build is not None
    assert verdict.build.command == "touch built"


def test_build_failure_is_unresolved_and_skips_the_test(tmp_path: Path) -> None:
    verdict = run_candidate(
        tmp_path,
        ["touch", "tested"],
        build="echo 'cc: error' >&2; exit 2",
        timeout=5.0,
        expect=ANY_FAILURE,
    )
    assert (verdict.outcome, verdict.reason) == (Outcome.UNRESOLVED, "build failed: exit 2")
    assert verdict.test is None
    assert verdict.build is not None
    assert verdict.build.tail == "cc: error\n"
    assert not (tmp_path / "tested").exists()


def test_build_timeout_is_unresolved(tmp_path: Path) -> None:
    verdict = run_candidate(
        tmp_path, ["touch", "tested"], build="sleep 100", timeout=0.5, expect=ANY_FAILURE
    )
    assert (verdict.outcome, verdict.reason) == (
        Outcome.UNRESOLVED,
        "build failed: timeout after 0.5s",
    )
    assert verdict.build is not None
    assert verdict.build.timed_out
    assert verdict.build.exit_code is None
    assert not (tmp_path / "tested").exists()


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    verdict = _sh("sleep 100 & echo $! > pid; wait", tmp_path, timeout=0.5)
    assert (verdict.outcome, verdict.reason) == (Outcome.UNRESOLVED, "timeout after 0.5s")
    assert verdict.test is not None
    assert verdict.test.timed_out
    assert verdict.test.exit_code is None
    assert _gone_soon(int((tmp_path / "pid").read_text()))


def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path: Path) -> None:
    # Ignored signals stay ignored across fork and exec, so neither sh nor sleep reacts to TERM.
    verdict = _sh("trap '' TERM; sleep 100 & echo $! > pid; wait", tmp_path, timeout=0.5)
    assert (verdict.outcome, verdict.reason) == (Outcome.UNRESOLVED, "timeout after 0.5s")
    assert _gone_soon(int((tmp_path / "pid").read_text()))


def test_timeout_lets_the_test_clean_up_before_the_kill(tmp_path: Path) -> None:
    script = "trap 'echo cleaned up > cleaned; exit 1' TERM; sleep 100 & echo $! > pid; wait"
    verdict = _sh(script, tmp_path, timeout=0.5)
    assert (verdict.outcome, verdict.reason) == (Outcome.UNRESOLVED, "timeout after 0.5s")
    assert (tmp_path / "cleaned").read_text() == "cleaned up\n", "SIGTERM came first"
    assert _gone_soon(int((tmp_path / "pid").read_text()))


def test_daemon_holding_stdout_does_not_delay_the_result(tmp_path: Path) -> None:
    # Had we waited for the daemon (say, for EOF on its stdout), its last line would be there.
    script = "(sleep 30; echo 'daemon done') & echo $! > pid; echo 'test failed'; exit 1"
    verdict = _sh(script, tmp_path)
    assert (verdict.outcome, verdict.reason) == (Outcome.FAIL, "exit 1")
    assert verdict.test is not None
    assert verdict.test.output == "test failed\n"
    assert _gone_soon(int((tmp_path / "pid").read_text()))


def test_missing_program_fails_like_in_a_shell(tmp_path: Path) -> None:
    verdict = run_candidate(
        tmp_path, ["ddchange-no-such-program"], build=None, timeout=5.0, expect=ANY_FAILURE
    )
    assert (verdict.outcome, verdict.reason) == (Outcome.FAIL, "exit 127")
    assert verdict.test is not None
    assert "ddchange-no-such-program" in verdict.test.tail


def test_missing_program_is_a_different_failure_than_expected(tmp_path: Path) -> None:
    verdict = run_candidate(
        tmp_path,
        ["./ddchange-no-such-program"],
        build=None,
        timeout=5.0,
        expect=Expectation(exit_code=1),
    )
    assert (verdict.outcome, verdict.reason) == (Outcome.UNRESOLVED, "different failure: exit 127")


def test_program_that_is_not_executable_exits_126(tmp_path: Path) -> None:
    (tmp_path / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    execution = run(["./check.sh"], tmp_path, timeout=5.0)
    assert execution.exit_code == 126
    assert "check.sh" in execution.tail


def test_exit_130_aborts(tmp_path: Path) -> None:
    with pytest.raises(errors.TestAborted) as caught:
        _sh("exit 130", tmp_path)
    assert caught.value == errors.TestAborted(130, "sh -c 'exit 130'")


def test_a_crash_is_a_failure_named_by_its_signal(tmp_path: Path) -> None:
    crash = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
    verdict = run_candidate(tmp_path, crash, build=None, timeout=5.0, expect=ANY_FAILURE)
    assert (verdict.outcome, verdict.reason) == (Outcome.FAIL, "killed by SIGSEGV")


# -- faults of the machine are no outcome -------------------------------------------------------


def test_a_file_size_limit_stops_the_run_instead_of_giving_an_outcome(tmp_path: Path) -> None:
    # `ulimit -f` in blocks of 512 bytes (dash, bash): writing past it raises SIGXFSZ.
    script = "ulimit -f 1; exec head -c 100000 /dev/zero > big"
    with pytest.raises(errors.EnvironmentFault) as caught:
        _sh(script, tmp_path)
    assert caught.value.problem == "a file-size limit stopped the command (SIGXFSZ)"


@pytest.mark.parametrize("build", [None, "echo 'cc: No space left on device' >&2; exit 1"])
def test_a_full_disk_in_the_output_stops_the_run(tmp_path: Path, build: str | None) -> None:
    test = ["sh", "-c", "echo 'write error: No space left on device'; exit 1"]
    with pytest.raises(errors.EnvironmentFault) as caught:
        run_candidate(tmp_path, test, build=build, timeout=5.0, expect=ANY_FAILURE)
    assert caught.value.problem == "the disk is full (No space left on device)"


def test_a_passing_test_that_mentions_a_full_disk_passes(tmp_path: Path) -> None:
    verdict = _sh("echo 'testing: No space left on device is handled'; exit 0", tmp_path)
    assert verdict.outcome is Outcome.PASS


def test_build_killed_by_signal_is_unresolved_not_aborted(tmp_path: Path) -> None:
    verdict = run_candidate(
        tmp_path, ["true"], build="kill -KILL $$", timeout=5.0, expect=ANY_FAILURE
    )
    assert (verdict.outcome, verdict.reason) == (
        Outcome.UNRESOLVED,
        "build failed: killed by SIGKILL",
    )


def test_a_daemon_that_left_the_process_group_is_killed_after_the_test(tmp_path: Path) -> None:
    # setsid: a new session and group, out of reach of the group kill; the subshell exits at
    # once, so the daemon is an orphan, which we adopt as the child subreaper and kill.
    script = "(setsid sh -c 'echo $$ > pid; exec sleep 100' &) ; sleep 0.2; exit 1"
    verdict = _sh(script, tmp_path)
    assert verdict.outcome is Outcome.FAIL
    pid = int(_wait_for_file(tmp_path / "pid"))
    assert _gone_soon(pid)


def test_side_by_side_a_test_takes_only_its_own_orphans(tmp_path: Path) -> None:
    """-j N: two tests at once, in two scratch trees. The second leaves a daemon while the
    first runs; the first leaves one too and ends: its own daemon goes (it carries the first
    tree's mark), the second test and its daemon stay until the second test ends."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    daemon = "(setsid sh -c 'echo $$ > daemon; exec sleep 100' &) ;"
    verdicts: list[Verdict] = []

    def slow() -> None:
        script = "while [ ! -e go ]; do sleep 0.02; done; " + daemon + " sleep 1.5; exit 0"
        env = {**os.environ, SCRATCH_VARIABLE: str(second)}
        ran = run_candidate(
            second, ["sh", "-c", script], build=None, timeout=20, expect=ANY_FAILURE, env=env
        )
        verdicts.append(ran)

    # The first test starts before the second's daemon exists, and ends after it does.
    script = (
        f"{daemon} touch '{second}/go'; "
        f"while [ ! -e '{second}/daemon' ]; do sleep 0.02; done; sleep 0.2; exit 1"
    )
    env = {**os.environ, SCRATCH_VARIABLE: str(first)}
    with sharing():
        other = threading.Thread(target=slow)
        other.start()
        mine = run_candidate(
            first, ["sh", "-c", script], build=None, timeout=20, expect=ANY_FAILURE, env=env
        )
        assert mine.outcome is Outcome.FAIL
        assert _gone_soon(int(_wait_for_file(first / "daemon")))
        theirs = int(_wait_for_file(second / "daemon"))
        assert _running(theirs), "the other test's daemon is the other test's"
        other.join()
    assert [v.outcome for v in verdicts] == [Outcome.PASS], "the other test ran to its end"
    assert _gone_soon(theirs)


def test_processes_that_were_ours_before_the_test_are_left_alone(tmp_path: Path) -> None:
    ours = subprocess.Popen(["sleep", "100"])
    try:
        _sh("exit 0", tmp_path)
        assert ours.poll() is None
    finally:
        ours.kill()
        ours.wait()


# -- run: environment, input, output ----------------------------------------------------------


def test_git_redirects_are_not_inherited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in git.REDIRECTS:
        monkeypatch.setenv(name, "/home/user/repo/.git")
    monkeypatch.setenv("DDCHANGE_KEEP", "kept")
    monkeypatch.setenv("GIT_TEST_KEEP", "also kept")  # the user's own git settings stay
    redirects = "|".join(sorted(git.REDIRECTS))
    script = f"env | grep -Eq '^({redirects})=' && exit 1; echo $DDCHANGE_KEEP, $GIT_TEST_KEEP"
    verdict = _sh(script, tmp_path)
    assert verdict.outcome is Outcome.PASS
    assert verdict.test is not None
    assert verdict.test.output == "kept, also kept\n"


def test_explicit_env_is_used_without_git_redirects(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "GIT_DIR": "/elsewhere", "GIT_AUTHOR_NAME": "A U Thor"}
    execution = run("env", tmp_path, timeout=5.0, env=env)
    assert "GIT_AUTHOR_NAME=A U Thor\n" in execution.output
    assert "GIT_DIR" not in execution.output


def test_string_is_a_shell_command_and_sequence_is_not(tmp_path: Path) -> None:
    assert run("echo $((1 + 2)) | tr 3 x", tmp_path, timeout=5.0).output == "x\n"
    execution = run(["echo", "$((1 + 2))", "a b"], tmp_path, timeout=5.0)
    assert execution.output == "$((1 + 2)) a b\n"
    assert execution.command == "echo '$((1 + 2))' 'a b'"


def test_stdin_is_empty(tmp_path: Path) -> None:
    # Our own stdin holds a line: a command that inherited it would print that line.
    read, write = os.pipe()
    os.write(write, b"our input, not the test's\n")
    os.close(write)
    saved = os.dup(0)
    os.dup2(read, 0)
    try:
        execution = run(["cat"], tmp_path, timeout=5.0)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read)
    assert (execution.timed_out, execution.exit_code, execution.output) == (False, 0, "")


def test_tail_keeps_the_last_lines(tmp_path: Path) -> None:
    execution = run("seq 1 10000", tmp_path, timeout=5.0)
    assert execution.tail.splitlines() == [str(n) for n in range(9961, 10001)]
    assert execution.tail.endswith("10000\n")


def test_tail_of_one_long_line_is_bounded(tmp_path: Path) -> None:
    execution = run([sys.executable, "-c", "print('x' * 100_000, end='')"], tmp_path, timeout=5.0)
    assert execution.tail == "x" * TAIL_CHARS


def test_pattern_is_searched_in_the_end_of_a_long_output(tmp_path: Path) -> None:
    script = "import sys; print(('x' * 99 + '\\n') * 30_000); print('AssertionError'); sys.exit(1)"
    expect = Expectation(exit_code=1, pattern=re.compile("^AssertionError$", re.MULTILINE))
    verdict = run_candidate(
        tmp_path, [sys.executable, "-c", script], build=None, timeout=5.0, expect=expect
    )
    assert verdict.outcome is Outcome.FAIL
    assert verdict.test is not None
    assert len(verdict.test.output) == OUTPUT_LIMIT


def test_no_match_in_a_cut_output_says_that_only_its_end_was_searched(tmp_path: Path) -> None:
    script = "import sys; print('AssertionError'); print(('x' * 99 + '\\n') * 21_000); sys.exit(1)"
    expect = Expectation(exit_code=1, pattern=re.compile("AssertionError"))
    verdict = run_candidate(
        tmp_path, [sys.executable, "-c", script], build=None, timeout=5.0, expect=expect
    )
    assert verdict.outcome is Outcome.UNRESOLVED
    assert verdict.reason == (
        "different failure: exit 1, no match for 'AssertionError' in the last 1 MiB of its "
        "2.0 MiB of output"
    )
    assert verdict.test is not None
    assert verdict.test.size == 15 + 2_100_001
    assert _sh("echo nothing; exit 1", tmp_path, expect).reason == (
        "different failure: exit 1, no match for 'AssertionError'"
    ), "an output kept whole was searched whole"
    option = next(p for p in cli.commands["run"].params if p.name == "fail_pattern")
    assert f"searched in its last {OUTPUT_LIMIT >> 20} MiB" in str(option.help)


def test_odd_cut_drops_the_half_character(tmp_path: Path) -> None:
    script = "import sys; sys.stdout.write('é' * (1 << 20) + '!'); sys.stdout.flush()"
    execution = run([sys.executable, "-c", script], tmp_path, timeout=5.0)
    assert execution.output == "é" * ((OUTPUT_LIMIT - 1) // 2) + "!"


def test_missing_cwd_is_our_error_not_an_exit_code(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run(["true"], tmp_path / "gone", timeout=5.0)


def test_keyboard_interrupt_lets_the_test_clean_up_then_kills_the_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM first, so that the test's trap runs, then the group is gone. The grace before
    SIGKILL is made long here: on a loaded machine a second did not always let the shell run
    its trap (the order is what is checked, not the length of the grace)."""
    from ddchange.trial import runner

    monkeypatch.setattr(runner, "KILL_GRACE_SECONDS", 30.0)
    pid_file = tmp_path / "pid"

    def interrupt_once_started() -> None:
        _wait_for_file(pid_file)
        os.kill(os.getpid(), signal.SIGINT)

    interrupter = threading.Thread(target=interrupt_once_started)
    interrupter.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run(
                "trap 'echo cleaned up > cleaned; exit 1' TERM; sleep 100 & echo $! > pid; wait",
                tmp_path,
                timeout=None,
            )
    finally:
        interrupter.join()
    assert (tmp_path / "cleaned").read_text() == "cleaned up\n", "SIGTERM came first"
    assert _gone_soon(int(pid_file.read_text()))
