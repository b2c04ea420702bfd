"""Build + test subprocess, timeout, process-group kill → Outcome.

Owns running the user's commands on one candidate tree and turning what happened into a verdict,
with the exit-code conventions of `git bisect run` (0 good, 125 skip, 1–127 bad, >127 abort).

Key ideas:
- Each command runs in its own session, so its whole process group (the command, its children,
  anything it put in the background) can be stopped together, and Ctrl-C at the terminal reaches
  only us; we then stop the group ourselves (SIGTERM, a short grace, SIGKILL) before re-raising.
- Output goes to an unlinked temporary *file*, not a pipe: a daemon the test leaves behind that
  still holds stdout cannot keep us waiting for EOF. When the command's main process exits, what
  is left of its group is killed.
- A daemon that leaves the group (`setsid`, a double fork) is caught too: on Linux we are a child
  subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), so every orphan of the test becomes our child, and
  every child that was not ours before the command started is killed after it ends. While
  commands run side by side (`-j N`, `sharing`), only the orphans that carry this command's
  scratch tree in their environment (`SCRATCH_VARIABLE`, set by the trial layer) are its own.
- The child never inherits variables that point git at the user's repository (`git.environment`
  says which): a test that runs git must see the scratch tree it runs in, never the user's
  checkout. Nor may git find that checkout by looking upwards, from a tree whose .git the test
  deleted, when the temporary directory lies inside it (`TMPDIR=$WORKSPACE/tmp`): git does not
  look above the scratch tree (`git.confined`). Its other GIT_* settings are the user's and stay.
- Outcomes follow `git bisect run` (see `classify`); a crash (SIGSEGV, SIGABRT, ...) is a
  failure like any other, and what a full disk or a file-size limit did is no outcome at all
  (`EnvironmentFault`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import math
import os
import re
import select
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ddchange import git
from ddchange.errors import STOPPING_SIGNALS, EnvironmentFault, TestAborted
from ddchange.model import Case, Outcome
from ddchange.trial.missing import missing_names

# Time between SIGTERM and SIGKILL after a timeout: enough for a test runner to flush its report,
# short because every timed-out candidate pays it.
KILL_GRACE_SECONDS = 1.0
# Bounds on the output kept per command. Up to OUTPUT_LIMIT bytes of the *end* of the output are
# kept for `Expectation.pattern` (failure summaries are usually printed last); a longer output's
# beginning is not searched, and a reason that found no match says so. The tail shown to users is
# much shorter.
OUTPUT_LIMIT = 1 << 20
TAIL_LINES = 40
TAIL_CHARS = 4096

# What a POSIX shell reports when it cannot run a program (XCU 2.8.2).
EXIT_NOT_FOUND = 127
EXIT_NOT_EXECUTABLE = 126
EXIT_SKIP = 125
# `git bisect run` treats 1–127 (but 125) as bad and anything above as "abort the bisection".
EXIT_BAD_MAX = 127
# Deaths by these signals are the program's own crash: a failure, as a nonzero exit is. Any other
# signal came from outside (a kill, the OOM killer, a hangup): the run says nothing.
CRASHES = frozenset(
    {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT, signal.SIGTRAP}
)
# What a failed command's output says when the machine, not the change, made it fail (the
# C library's words for ENOSPC, EDQUOT and EFBIG, and a shell's for a death by SIGXFSZ).
_FAULTS = {
    "No space left on device": "the disk is full",
    "Disk quota exceeded": "the disk quota is used up",
    "File too large": "a file-size limit stopped the command",
    "File size limit exceeded": "a file-size limit stopped the command",
}
# A file system with less than this free after a failed run is full (build outputs stay).
_FULL_BELOW_BYTES = 1 << 20
_PR_SET_CHILD_SUBREAPER = 36
# Set in the environment of every build and test to the scratch tree's path (the trial layer
# sets it): whatever they start, even a daemon that left the directory and its process group,
# can be found by it.
SCRATCH_VARIABLE = "DDCHANGE_SCRATCH"

# The commands running now, by pid, with the scratch tree each was given; a pid is added as it
# starts and removed once its group is gone. `_LOCK` also covers `_kill_adopted`, so that it
# never takes a command that another thread has just started for an orphan.
_LIVE: dict[int, str] = {}
_LOCK = threading.Lock()
_SHARING = [0]  # how many pools run commands side by side now (see `sharing`)


@dataclass(frozen=True, kw_only=True)
class Execution:
    """What one command did.

    `exit_code` is None when we killed the command for exceeding `timeout`, and -N when signal N
    killed it otherwise (as subprocess reports it). `output` is the end of the combined stdout and
    stderr, at most OUTPUT_LIMIT bytes of it, decoded as UTF-8 with replacement characters;
    `size` is how many bytes they were in all.
    """

    command: str
    exit_code: int | None
    timed_out: bool
    duration: float
    timeout: float | None
    output: str = field(repr=False)
    size: int

    @property
    def cut(self) -> bool:
        """Whether `output` is only the end of what the command wrote."""
        return self.size > OUTPUT_LIMIT

    @property
    def tail(self) -> str:
        """The last TAIL_LINES lines of the output, at most TAIL_CHARS characters, for humans."""
        cut = self.output[-TAIL_CHARS:]
        # A final newline ends the last line; it does not start another one.
        keep = TAIL_LINES + 1 if cut.endswith("\n") else TAIL_LINES
        return "\n".join(cut.split("\n")[-keep:])


@dataclass(frozen=True)
class Expectation:
    """What counts as "the failure" we are hunting; the default is any failing exit code.

    `exit_code` None accepts any code from 1 to 127 except 125. `pattern`, when set, must also
    be found (`re.search`) in the kept output: its last OUTPUT_LIMIT bytes. `missing`, once
    BAD's failure is adopted, holds the names BAD's own output says are missing (missing.py):
    a run whose output says another name is missing (an ImportError, NameError, undefined
    reference ... that BAD does not have) fails another way, as half a rename does.
    """

    exit_code: int | None = None
    pattern: re.Pattern[str] | None = None
    missing: frozenset[str] | None = None


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The outcome for one candidate tree, why, and the commands behind it.

    `build` is None when there is no build command; `test` is None when the build failed, so the
    test never ran.
    """

    outcome: Outcome
    reason: str
    build: Execution | None
    test: Execution | None
    # With --results: each test case's result (attempt.py reads them); None: none were read.
    cases: Mapping[str, Case] | None = None


def run(
    command: Sequence[str] | str,
    cwd: Path,
    *,
    timeout: float | None,
    env: Mapping[str, str] | None = None,
) -> Execution:
    """Run `command` in `cwd` (a string through /bin/sh, a sequence directly) and report it.

    The command gets `env` (default: our own environment) as `git.environment` leaves it.

    Never raises for the command's own failures: a program that cannot be started gets 127 or
    126, as from a shell. Interrupts (KeyboardInterrupt) kill the command's group and propagate.
    """
    argv, display = _argv(command)
    _become_subreaper()
    ours = _children()
    started = time.monotonic()
    environment = git.environment(env, keep_settings=True)
    if environment.get(SCRATCH_VARIABLE):  # git in the test finds the scratch tree's or none
        environment.update(git.confined(Path(environment[SCRATCH_VARIABLE]), environment))
    with tempfile.TemporaryFile() as out:
        held: list[int] = []
        try:
            with _held_back(held), _LOCK:
                process = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=environment,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                _LIVE[process.pid] = environment.get(SCRATCH_VARIABLE, "")
        except OSError as exc:
            _deliver(held)
            if exc.filename != argv[0]:
                raise  # not the user's program: a missing cwd is our bug
            code = EXIT_NOT_FOUND if exc.errno == errno.ENOENT else EXIT_NOT_EXECUTABLE
            message = f"{argv[0]}: {exc.strerror}\n"
            return Execution(
                command=display,
                exit_code=code,
                timed_out=False,
                duration=time.monotonic() - started,
                timeout=timeout,
                output=message,
                size=len(message),
            )
        try:
            exit_code, timed_out = _supervise(process, timeout, held)
        finally:
            with _LOCK:
                scratch = _LIVE.pop(process.pid)
                _kill_adopted(ours, scratch)
        duration = time.monotonic() - started
        size = out.seek(0, os.SEEK_END)
        output = _read_end(out, OUTPUT_LIMIT)
    return Execution(
        command=display,
        exit_code=exit_code,
        timed_out=timed_out,
        duration=duration,
        timeout=timeout,
        output=output,
        size=size,
    )


def run_candidate(
    cwd: Path,
    test: Sequence[str],
    *,
    build: str | None,
    timeout: float | None,
    expect: Expectation,
    env: Mapping[str, str] | None = None,
) -> Verdict:
    """Build (a shell command) and test the tree in `cwd`; `timeout` applies to each command,
    `env` (default: ours) is their environment.

    A build that fails or times out makes the candidate UNRESOLVED without running the test.
    Raises TestAborted when the test asks to stop everything (see `classify`), and
    EnvironmentFault when a command failed because the disk is full or a file-size limit was
    hit: that is no outcome of the candidate's.
    """
    built = None if build is None else run(build, cwd, timeout=timeout, env=env)
    if built is not None and (built.timed_out or built.exit_code != 0):
        _check_environment(built, cwd)
        return Verdict(
            outcome=Outcome.UNRESOLVED,
            reason=f"build failed: {_describe(built)}",
            build=built,
            test=None,
        )
    tested = run(test, cwd, timeout=timeout, env=env)
    if tested.exit_code != 0:
        _check_environment(tested, cwd)
    outcome, reason = classify(tested, expect)
    return Verdict(outcome=outcome, reason=reason, build=built, test=tested)


def classify(test: Execution, expect: Expectation) -> tuple[Outcome, str]:
    """The outcome of a test run and a short reason, following `git bisect run`.

    0 passes, 125 and timeouts are unresolved, 1–127 fail if they match `expect` and are
    unresolved ("a different failure") if not. A death by a crash signal (`CRASHES`, a direct
    exec reports it as -N) fails the same way, "killed by SIGSEGV"; by any other signal it is
    unresolved. Raises TestAborted for codes above 127, as `git bisect run` aborts on them.
    """
    if test.timed_out or test.exit_code is None:
        return Outcome.UNRESOLVED, _describe(test)
    code = test.exit_code
    if code > EXIT_BAD_MAX:
        raise TestAborted(code, test.command)
    if code < 0 and -code not in CRASHES:
        return Outcome.UNRESOLVED, _describe(test)
    if code == 0:
        return Outcome.PASS, "exit 0"
    if code == EXIT_SKIP:
        return Outcome.UNRESOLVED, "exit 125 (skip)"
    if expect.exit_code is not None and code != expect.exit_code:
        return Outcome.UNRESOLVED, f"different failure: {_describe(test)}"
    if expect.pattern is not None and not expect.pattern.search(test.output):
        mib = 1 << 20
        searched = (
            f" in the last {OUTPUT_LIMIT // mib} MiB of its {test.size / mib:.1f} MiB of output"
            if test.cut
            else ""
        )
        return (
            Outcome.UNRESOLVED,
            f"different failure: {_describe(test)}, no match for {expect.pattern.pattern!r}"
            + searched,
        )
    if expect.missing is not None and (new := missing_names(test.output) - expect.missing):
        return (
            Outcome.UNRESOLVED,
            f"different failure: {_describe(test)}, says {', '.join(sorted(new))} "
            "missing, which BAD's run did not",
        )
    return Outcome.FAIL, _describe(test)


def _argv(command: Sequence[str] | str) -> tuple[list[str], str]:
    """The argv to execute and the command as a user would type it."""
    if isinstance(command, str):
        return ["/bin/sh", "-c", command], command
    return list(command), shlex.join(command)


def _describe(execution: Execution) -> str:
    if execution.timed_out:
        return f"timeout after {execution.timeout:g}s"
    code = execution.exit_code
    if code is not None and code < 0:
        return f"killed by {signal_name(-code)}"
    return f"exit {code}"


def signal_name(number: int) -> str:
    """ "SIGSEGV" for 11; "signal 77" for a number with no name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _check_environment(execution: Execution, cwd: Path) -> None:
    """Raise EnvironmentFault if the failed command failed because of the machine: its output
    names a full disk, a used-up quota or a file-size limit (`_FAULTS`), it was killed by
    SIGXFSZ (`ulimit -f`), or the scratch tree's file system has less than 1 MiB left."""
    if execution.exit_code == -signal.SIGXFSZ:
        raise EnvironmentFault("a file-size limit stopped the command (SIGXFSZ)", cwd)
    for words, problem in _FAULTS.items():
        if words in execution.output:
            raise EnvironmentFault(f"{problem} ({words})", cwd)
    with contextlib.suppress(OSError):
        disk = os.statvfs(cwd)
        if disk.f_bavail * disk.f_frsize < _FULL_BELOW_BYTES:
            raise EnvironmentFault("the disk is full (less than 1 MiB free)", cwd)


@contextlib.contextmanager
def _held_back(held: list[int]) -> Iterator[None]:
    """The stopping signals (`errors.STOPPING_SIGNALS`) that come while a command starts, held
    back in `held` for `_supervise` to deliver: a Ctrl-C that lands inside `Popen` would
    leave the command running out of our hands, its group never stopped and its clean-up
    never run. Only in the main thread, where Python runs signal handlers; a handler Python
    did not set is left alone."""
    main = threading.current_thread() is threading.main_thread()
    previous = [
        (number, handler)
        for number in (STOPPING_SIGNALS if main else ())
        if (handler := signal.getsignal(number)) is not None
    ]
    for number, _ in previous:
        signal.signal(number, lambda got, _frame: held.append(got))
    try:
        yield
    finally:
        for number, handler in previous:
            signal.signal(number, handler)


def _deliver(held: Sequence[int]) -> None:
    """The signals `held` back, raised now: their handlers run as if they came now."""
    for number in held:
        signal.raise_signal(number)


def _supervise(
    process: subprocess.Popen[bytes], timeout: float | None, held: Sequence[int] = ()
) -> tuple[int | None, bool]:
    """Wait for `process`, stopping it at `timeout`, then kill its group; (exit code, timed out).
    A stopping signal `held` back while it started is delivered first, as if it came now."""
    try:
        _deliver(held)
        timed_out = not _exited_within(process, timeout)
        if timed_out:
            _stop_group(process)
    except BaseException:  # Ctrl-C, SIGTERM: let the build clean up, but only briefly
        try:
            _stop_group(process)
        finally:
            _kill_group(process.pid, signal.SIGKILL)
            process.wait()
        raise
    # Whatever the command left behind in its group (`cmd &`, a server it started) dies with it:
    # it would hold files in the worktree we are about to reuse, and compete with the next test.
    _kill_group(process.pid, signal.SIGKILL)
    code = process.wait()
    return (None if timed_out else code), timed_out


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group so the test can clean up; SIGKILL it if the leader outlives the grace."""
    _kill_group(process.pid, signal.SIGTERM)
    if not _exited_within(process, KILL_GRACE_SECONDS):
        _kill_group(process.pid, signal.SIGKILL)


def _exited_within(process: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Whether `process` exits within `timeout` seconds (None: wait as long as it takes).

    Prefers a pidfd: it wakes us the moment the process exits (Popen.wait with a timeout polls,
    up to 50 ms late per test), and it leaves the process unreaped, so its pid, which is also
    the group id we signal next, cannot be reused meanwhile.
    """
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux, or a kernel older than 5.3
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(None if timeout is None else math.ceil(timeout * 1000)))
    finally:
        os.close(pidfd)


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # the whole group has already exited
        os.killpg(pgid, sig)


@functools.cache
def _become_subreaper() -> None:
    """Make orphans of our children (a daemon that double-forks or calls setsid) our children,
    instead of init's, so that `_kill_adopted` finds them. Linux only; elsewhere a no-op."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _children() -> set[int]:
    """Our child processes (Linux /proc; elsewhere none are known)."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            found.update(int(pid) for pid in task.read_text().split())
    return found


@contextlib.contextmanager
def sharing() -> Iterator[None]:
    """Commands run side by side in this block (`-j N`), and git beside them: an orphan is
    taken as a command's only when its environment names that command's scratch tree."""
    _SHARING[0] += 1
    try:
        yield
    finally:
        _SHARING[0] -= 1


def stop_all(within: Collection[str] | None = None) -> None:
    """Stop every command running now (`within`: only those run for these scratch trees), as
    Ctrl-C stops one: SIGTERM to each group, one grace for all of them, then SIGKILL. Their
    threads see them end and return."""
    with _LOCK:
        live = [pid for pid, tree in _LIVE.items() if within is None or tree in within]
    for pid in live:
        _kill_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_SECONDS
    while time.monotonic() < deadline and any(pid in _LIVE for pid in live):
        time.sleep(0.02)
    for pid in live:
        if pid in _LIVE:
            _kill_group(pid, signal.SIGKILL)


def _kill_adopted(ours: set[int], scratch: str) -> None:
    """Kill, with their process groups, the children that were not `ours` before a command ran:
    orphans of the command that we adopted as subreaper. Their own children become ours as they
    die, so this goes on until none is left. While commands share us (`sharing`), the other
    commands and git are our children too: only orphans marked with `scratch` are taken."""
    for _round in range(1000):
        adopted = _children() - ours - set(_LIVE)
        if _SHARING[0]:
            adopted = {pid for pid in adopted if _marked(pid, scratch)}
        if not adopted:
            return
        for pid in adopted:
            with contextlib.suppress(OSError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _marked(pid: int, scratch: str) -> bool:
    """Whether process `pid` runs for the scratch tree `scratch`: its environment says so, or
    it works in that tree (a daemon started with `env -i` has no variable of ours left)."""
    if not scratch:
        return False
    with contextlib.suppress(OSError):
        cwd = os.readlink(f"/proc/{pid}/cwd")
        if cwd == scratch or cwd.startswith(scratch.rstrip("/") + "/"):
            return True
    try:
        environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"{SCRATCH_VARIABLE}={scratch}".encode() in environment


def _read_end(out: IO[bytes], limit: int) -> str:
    """The last `limit` bytes written to `out`, decoded; a character cut in half is dropped."""
    size = out.seek(0, os.SEEK_END)
    out.seek(max(0, size - limit))
    data = out.read()
    if size > limit:
        data = _skip_continuation_bytes(data)
    return data.decode("utf-8", errors="replace")


def _skip_continuation_bytes(data: bytes) -> bytes:
    """`data` without the UTF-8 continuation bytes (10xxxxxx) a cut left at its start."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]
