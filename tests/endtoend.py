"""End-to-end helpers: repositories built from trees, and the real `ddchange` command run on
them, with the promise that the user's repository stays byte-identical checked on every run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitsandbox import Sandbox, checkout_state, init

# -- building repositories ------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """A symlink to `target`."""

    target: str


@dataclass(frozen=True)
class Exe:
    """An executable file."""

    content: str


Tree = Mapping[str, str | bytes | Link | Exe | None]  # None: delete the file

LINES = "".join(f"line {n}\n" for n in range(40))


def edit(text: str, *replacements: tuple[str, str]) -> str:
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    return text


# Two files that change in BAD in every case: what the search must learn to leave out.
NOISE_GOOD: Tree = {"other.txt": LINES, "z.txt": LINES}
NOISE_BAD: Tree = {
    "other.txt": edit(LINES, ("line 5\n", "line five\n")),
    "z.txt": edit(LINES, ("line 3\n", "line three\n"), ("line 30\n", "line thirty\n")),
}


def put(repo: Sandbox, tree: Tree) -> None:
    """Write `tree` over the work tree of `repo`; deletions first."""
    for path, value in tree.items():
        if value is None:
            repo.remove(path)
            with suppress(OSError):  # git does not keep the directory a deletion emptied
                (repo.path / path).parent.rmdir()
    for path, value in tree.items():
        if isinstance(value, Link):
            repo.symlink(path, value.target)
        elif isinstance(value, Exe):
            repo.write(path, value.content, 0o755)
        elif value is not None:
            repo.write(path, value)


def two_commits(path: Path, good: Tree, bad: Tree, test: str | bytes) -> Sandbox:
    """A repository with the tags `good` (test.sh, the noise files and `good`) and `bad` (the
    noise changes and `bad` on top)."""
    repo = init(path)
    put(repo, {"test.sh": test, **NOISE_GOOD, **good})
    repo.commit("good")
    repo.git("tag", "good")
    put(repo, {**NOISE_BAD, **bad})
    repo.commit("bad")
    repo.git("tag", "bad")
    return repo


# -- running ddchange -----------------------------------------------------------------------


@dataclass
class Run:
    """One run of the real command: its exit code, output and --json report (if written)."""

    returncode: int
    stdout: str
    stderr: str
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def culprits(self) -> list[tuple[str, str]]:
        return [(c["path"], c["kind"]) for c in self.report.get("culprits", [])]


def ddchange(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    untouched: Sequence[Path] = (),
    command: Sequence[str] = (),
    preexec: Callable[[], None] | None = None,
) -> Run:
    """Run `ddchange --json FILE ARGS` in `cwd`, or `ddchange COMMAND ARGS` for another
    command than `run`; check that the repositories at `untouched` (default: `cwd`) stay exactly
    as they were. `preexec` runs in the child before ddchange starts (to set a limit).

    Output is decoded like file names (surrogateescape): a latin-1 hunk in the report is the
    input's bytes, and must not break the test itself.
    """
    watched = untouched or [cwd]
    before = [checkout_state(path) for path in watched]
    descriptor, name = tempfile.mkstemp(prefix="ddchange-report-", suffix=".json")
    os.close(descriptor)
    report = Path(name)
    report.unlink()
    done = subprocess.run(
        [sys.executable, "-m", "ddchange", *(command or ["--json", str(report)]), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        env=None if env is None else {**os.environ, **env},
        timeout=300,
        preexec_fn=preexec,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert [checkout_state(path) for path in watched] == before
    run = Run(done.returncode, done.stdout, done.stderr)
    if report.exists():
        run.report = json.loads(report.read_text())
        report.unlink()
    return run


def found(run: Run) -> list[tuple[str, str]]:
    """The answer of a run that must have found one."""
    assert run.returncode == 0, run.stderr
    assert run.report["outcome"] == "found"
    return run.culprits


def refused(run: Run, code: int, message: str) -> None:
    """A run that must end with `message` and exit `code`; usage errors take one line."""
    assert run.returncode == code, run.stderr
    assert message in run.stderr
    if code == 2:
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def search(repo: Sandbox, *options: str, env: Mapping[str, str] | None = None) -> Run:
    return ddchange(repo.path, "good..bad", *options, "--", "sh", "test.sh", env=env)


def interrupted_after(
    command: list[str], cwd: Path, tests: int
) -> subprocess.CompletedProcess[str]:
    """`command` (a ddchange run) sent SIGINT once it has printed `tests` test lines."""
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    seen, err = 0, ""
    while seen < tests:
        line = process.stderr.readline()
        assert line, "ddchange ended early"
        seen += line.startswith("test")
        err += line
    process.send_signal(signal.SIGINT)
    out, rest = process.communicate(timeout=60)
    return subprocess.CompletedProcess(command, process.returncode, out, err + rest)
