"""Every error ddchange raises on purpose.

Each exception carries the facts (revisions, commands, outcomes) as attributes, not a finished
sentence: `cli.py` is the one place that turns them into a message that says what to do next,
and into an exit code. Anything not derived from `DDChangeError` is a bug and is reported as one.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path

# The signals that stop a run as Ctrl-C (SIGINT) does: the command line turns each into a
# KeyboardInterrupt, so the running test's process group is stopped, every `finally` (the
# scratch tree's removal) runs and the journal keeps what was run; and the final removal holds
# them off until the tree is gone. A closed terminal or a dropped ssh connection (SIGHUP), Ctrl-\
# (SIGQUIT), a job scheduler's or a CI runner's notice (SIGTERM, SIGUSR1).
STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)


class DDChangeError(Exception):
    """Base of all expected errors."""


# -- usage errors (exit code 2): the request itself cannot be served -------------------------


@dataclass
class NotARepository(DDChangeError):
    path: Path
    missing: bool = False  # no such directory at all


@dataclass
class UnwritableOutput(DDChangeError):
    """The file an option asks for (`option`: "--report", ...) cannot be written at `path`:
    `problem` is "no such directory", "is a directory" or "permission denied". Checked before
    the first test, so that a long search does not end without its report."""

    option: str
    path: Path
    problem: str


@dataclass
class SameOutput(DDChangeError):
    """Two output options (`options`, "--json" and "--patch", say) name the same file: one
    would silently overwrite the other."""

    options: tuple[str, str]
    path: Path


@dataclass
class OutputFailed(DDChangeError):
    """Writing the file of `option` failed after the search (a full disk, /dev/full): `problem`
    is the system's reason. `resumable` says that the same command again takes every test from
    the journal (a run; a demo builds a new repository each time)."""

    option: str
    path: Path
    problem: str
    resumable: bool


@dataclass
class BadPathspec(DDChangeError):
    """A --keep or --ignore pathspec (`option`, `spec`) that git refuses (empty, unknown magic,
    outside the repository): `complaint` is git's reason."""

    option: str
    spec: str
    complaint: str


@dataclass
class PathspecMatchesNothing(DDChangeError):
    """A --keep or --ignore pathspec (`option`, `spec`) that no changed path matches."""

    option: str
    spec: str


@dataclass
class NothingLeft(DDChangeError):
    """--keep and --ignore took every change out of the search."""

    kept: int  # files
    ignored: int


@dataclass
class KeptAndIgnored(DDChangeError):
    """Changed paths that both a --keep and an --ignore pathspec match."""

    paths: tuple[str, ...]


@dataclass
class ProgramNotFound(DDChangeError):
    """The test's program, a name without a slash, is on no directory of PATH."""

    name: str


@dataclass
class UnknownRevision(DDChangeError):
    """`rev` names no commit.

    `kind` is the type of object it names instead ("tree", "blob"), if it names one;
    `complaint` is git's own message where git gave one ("no upstream configured for branch
    'x'"); `shallow` says the repository is a shallow clone, whose history may be cut off
    before the commit the user means (`git fetch --unshallow` brings the rest).
    """

    rev: str
    kind: str | None = None
    complaint: str = ""
    shallow: bool = False


@dataclass
class SameRevisions(DDChangeError):
    good: str
    bad: str
    sha: str


@dataclass
class EmptyDiff(DDChangeError):
    """Nothing to search between `good` and `bad`: identical trees, or (`unsearched`) only
    changes ddchange cannot search, submodule pointers."""

    good: str
    bad: str
    unsearched: tuple[str, ...] = ()


@dataclass
class UnsafePath(DDChangeError):
    """The tree of `commit` (a full object name) holds `path`, which git's checkout refuses
    (`problem`: "a '..' component", ...): written as it is, it would reach outside the scratch
    tree or into its repository. Found when the diff is read, before anything is written;
    `commit` is None where the scratch tree itself was asked to write such a path."""

    commit: str | None
    path: str
    problem: str


@dataclass
class UnreadableTrees(DDChangeError):
    """git cannot list the trees of `good` and `bad` (full object names), or their diff:
    `stderr` is its complaint ("empty filename in tree entry": a crafted or damaged tree)."""

    good: str
    bad: str
    stderr: str


@dataclass
class UnknownScenario(DDChangeError):
    name: str
    known: tuple[str, ...]


# -- git failed underneath us: a damaged repository, a full disk, a git without an option ----


@dataclass
class GitFailed(DDChangeError):
    """A git command we rely on failed; `command` is its argv, `stderr` git's complaint."""

    command: tuple[str, ...]
    returncode: int
    stderr: str


@dataclass
class BadResults(DDChangeError):
    """A --results value that is not one: `complaint` says why."""

    spec: str
    complaint: str


@dataclass
class NeedsResults(DDChangeError):
    """An option that only a whole-suite triage takes, given without --results."""

    option: str


@dataclass
class NotWithResults(DDChangeError):
    """An option that a whole-suite triage (--results) does not take yet."""

    option: str


# -- could not reproduce (exit code 1): pre-flight showed there is nothing to search ----------


@dataclass
class PreflightFailed(DDChangeError):
    """GOOD did not pass, or BAD did not fail, so delta debugging has nothing to explain.

    `which` is "good" or "bad"; `verdict` is the outcome's name; `reason` says why in a few
    words (exit code, timeout, build failure); `tail` is the end of the command's output;
    `repo` (the repository's shared git directory, which a clone can start from), `sha`, the
    files put over it (`pinned`: from another commit, `absent`: removed; what --keep and
    --ignore decide), `subdirectory` (where the commands ran, "" at the top), `build` and
    `test` are what reproduces the check by hand. `unsearched` lists the
    changes ddchange cannot apply (submodule pointers stay as in GOOD): when BAD "passes", the
    failure may well come from them, and the real BAD checkout would still fail.
    """

    which: str
    verdict: str
    reason: str
    tail: str
    repo: Path
    sha: str
    build: str | None
    test: tuple[str, ...]
    unsearched: tuple[str, ...] = ()
    runs: int = 1  # how many runs all gave `verdict`
    keep: tuple[str, ...] = ()  # files BAD adds or changes that the command names: --keep them
    subdirectory: str = ""
    pinned: tuple[str, tuple[str, ...]] = ("", ())  # (commit, paths)
    absent: tuple[str, ...] = ()


@dataclass
class NoTestResults(DDChangeError):
    """With --results, GOOD's or BAD's run gave no test results (`reason` says why: no file,
    not XML, no test case, no build); `tail` is the end of its output."""

    which: str
    reason: str
    tail: str


@dataclass
class NoTargets(DDChangeError):
    """With --results, no test passes at GOOD and fails at BAD (among those --test names)."""

    already_failing: int
    newly_passing: int
    narrowed: tuple[str, ...]


@dataclass
class MaterializationMismatch(DDChangeError):
    """Applying every change to GOOD did not give BAD's tree: a limit of ddchange, not the user."""

    paths: tuple[str, ...]


@dataclass
class TestAborted(DDChangeError):
    """The test exited above 127, which `git bisect run` treats as "stop everything" (a shell
    reports a death by signal N as 128+N)."""

    exit_code: int
    command: str


@dataclass
class EnvironmentFault(DDChangeError):
    """The machine, not the change, made a run fail: a full disk, a file-size or open-file
    limit, a scratch tree that could not be written. No outcome is recorded for it; the same
    command resumes once the fault is gone."""

    problem: str
    path: Path


@dataclass
class DaskMissing(DDChangeError):
    """--scheduler without Dask's `distributed` installed."""


@dataclass
class SchedulerUnreachable(DDChangeError):
    """--scheduler ADDRESS: no Dask scheduler answered there, or it has no workers."""

    address: str
    reason: str


@dataclass
class ClusterLost(DDChangeError):
    """--scheduler: the Dask cluster lost a test (its workers, or the scheduler, are gone).
    Like an EnvironmentFault, no outcome is recorded for it, and the same command resumes."""

    address: str
    problem: str


@dataclass
class RunInProgress(DDChangeError):
    """`ddchange reset` while other ddchange processes still work in the repository."""

    pids: tuple[int, ...]


@dataclass
class BadLogFile(DDChangeError):
    """`ddchange replay FILE` with a file that is not a `ddchange log`."""

    path: Path
    line: int
    problem: str


@dataclass
class JournalUnavailable(DDChangeError):
    """The journal of completed tests cannot be opened or written (read-only .git, disk full)."""

    path: Path
    reason: str
