"""Every error ddchange raises on purpose, and the one table of exit codes.

Each exception carries the facts (revisions, commands, outcomes) as attributes, not a finished
sentence, and its exit code as `exit`. `cli/messages.explain` is the one place that turns the
facts into a message that says what to do next; the command line exits with `error.exit`.
`Exit` is the table that `ddchange run --help`, the man page and the README show. Anything not
derived from `DDChangeError` is a bug and is reported as one (`Exit.BUG`).
"""

from __future__ import annotations

import enum
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

# The signals that stop a run as Ctrl-C (SIGINT) does: the command line turns each into a
# KeyboardInterrupt, so the running test's process group is stopped, every `finally` (the
# scratch tree's removal) runs and the journal keeps what was run; and the final removal holds
# them off until the tree is gone. A closed terminal or a dropped ssh connection (SIGHUP), Ctrl-\
# (SIGQUIT), a job scheduler's or a CI runner's notice (SIGTERM, SIGUSR1).
STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)


class Exit(enum.IntEnum):
    """ddchange's exit codes; `meaning` is what the help, the man page and the README say."""

    FOUND = 0
    NOT_REPRODUCED = 1
    USAGE = 2
    BUG = 3
    FLAKY = 4
    FOUND_FLAKY = 5
    INTERRUPTED = 130

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]


_MEANINGS = {
    Exit.FOUND: "found: the answer (with --results, each cause) was seen to fail, and without "
    "each of its changes it did not",
    Exit.NOT_REPRODUCED: "not reproduced: GOOD does not pass or BAD does not fail, or abort",
    Exit.USAGE: "usage error: bad options, revisions or repository",
    Exit.BUG: "internal error: a bug in ddchange, please report it",
    Exit.FLAKY: "flaky: runs of the same changes disagreed, and no answer reached the confidence "
    "asked; what was seen is shown",
    Exit.FOUND_FLAKY: "found, though the test fails at random: the answer's FAILs were run again "
    "as the flake rate seen asks, its confidence is shown",
    Exit.INTERRUPTED: "interrupted: Ctrl-C, SIGTERM/HUP/QUIT/USR1; best answer so far, unchecked",
}


class DDChangeError(Exception):
    """Base of all expected errors; each kind says its exit code."""

    exit: ClassVar[Exit]


# -- the request itself cannot be served ----------------------------------------------------


@dataclass
class NotARepository(DDChangeError):
    exit: ClassVar[Exit] = Exit.USAGE
    path: Path
    missing: bool = False  # no such directory at all


@dataclass
class UnwritableOutput(DDChangeError):
    """The file an option asks for (`option`: "--report", ...) cannot be written at `path`:
    `problem` is "no such directory", "is a directory" or "permission denied". Checked before
    the first test, so that a long search does not end without its report."""

    exit: ClassVar[Exit] = Exit.USAGE

    option: str
    path: Path
    problem: str


@dataclass
class SameOutput(DDChangeError):
    """Two output options (`options`, "--json" and "--patch", say) name the same file: one
    would silently overwrite the other."""

    exit: ClassVar[Exit] = Exit.USAGE

    options: tuple[str, str]
    path: Path


@dataclass(kw_only=True)
class OutputFailed(DDChangeError):
    """Writing the file of `option` failed after the search (a full disk, /dev/full): `problem`
    is the system's reason. `resumable` says that the same command again takes every test from
    the journal (a run; a demo builds a new repository each time)."""

    exit: ClassVar[Exit] = Exit.USAGE

    option: str
    path: Path
    problem: str
    resumable: bool


@dataclass
class BadPathspec(DDChangeError):
    """A --keep or --ignore pathspec (`option`, `spec`) that git refuses (empty, unknown magic,
    outside the repository): `complaint` is git's reason."""

    exit: ClassVar[Exit] = Exit.USAGE

    option: str
    spec: str
    complaint: str


@dataclass
class PathspecMatchesNothing(DDChangeError):
    """A --keep or --ignore pathspec (`option`, `spec`) that no changed path matches."""

    exit: ClassVar[Exit] = Exit.USAGE

    option: str
    spec: str


@dataclass
class NothingLeft(DDChangeError):
    """--keep and --ignore took every change out of the search."""

    exit: ClassVar[Exit] = Exit.USAGE

    kept: int  # files
    ignored: int


@dataclass
class KeptAndIgnored(DDChangeError):
    """Changed paths that both a --keep and an --ignore pathspec match."""

    exit: ClassVar[Exit] = Exit.USAGE

    paths: tuple[str, ...]


@dataclass
class ProgramNotFound(DDChangeError):
    """The test's program, a name without a slash, is on no directory of PATH."""

    exit: ClassVar[Exit] = Exit.USAGE

    name: str


@dataclass(kw_only=True)
class UnknownRevision(DDChangeError):
    """`rev` names no commit.

    `kind` is the type of object it names instead ("tree", "blob"), if it names one;
    `complaint` is git's own message where git gave one ("no upstream configured for branch
    'x'"); `shallow` says the repository is a shallow clone, whose history may be cut off
    before the commit the user means (`git fetch --unshallow` brings the rest).
    """

    exit: ClassVar[Exit] = Exit.USAGE

    rev: str
    kind: str | None = None
    complaint: str = ""
    shallow: bool = False


@dataclass
class SameRevisions(DDChangeError):
    exit: ClassVar[Exit] = Exit.USAGE
    good: str
    bad: str
    sha: str


@dataclass
class EmptyDiff(DDChangeError):
    """Nothing to search between `good` and `bad`: identical trees, or (`unsearched`) only
    changes ddchange cannot search, submodule pointers."""

    exit: ClassVar[Exit] = Exit.USAGE

    good: str
    bad: str
    unsearched: tuple[str, ...] = ()


@dataclass
class UnsafePath(DDChangeError):
    """The tree of `commit` (a full object name) holds `path`, which git's checkout refuses
    (`problem`: "a '..' component", ...): written as it is, it would reach outside the scratch
    tree or into its repository. Found when the diff is read, before anything is written.
    """

    exit: ClassVar[Exit] = Exit.USAGE

    commit: str
    path: str
    problem: str


@dataclass
class UnsafeWrite(DDChangeError):
    """The scratch tree was asked to write `path`, which git's checkout refuses (`problem`):
    such paths are refused when the diff is read (`UnsafePath`), so this is a bug."""

    exit: ClassVar[Exit] = Exit.BUG

    path: str
    problem: str


@dataclass
class UnreadableTrees(DDChangeError):
    """git cannot list the trees of `good` and `bad` (full object names), or their diff:
    `stderr` is its complaint ("empty filename in tree entry": a crafted or damaged tree)."""

    exit: ClassVar[Exit] = Exit.USAGE

    good: str
    bad: str
    stderr: str


@dataclass
class UnknownScenario(DDChangeError):
    exit: ClassVar[Exit] = Exit.USAGE
    name: str
    known: tuple[str, ...]


# -- git failed underneath us: a damaged repository, a full disk, a git without an option ----


@dataclass
class GitFailed(DDChangeError):
    """A git command we rely on failed; `command` is its argv, `stderr` git's complaint."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    command: tuple[str, ...]
    returncode: int
    stderr: str


@dataclass
class GitTimedOut(DDChangeError):
    """A git command of ours did not end within `seconds` (a FIFO where git reads a file, a
    filter that never ends)."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    command: tuple[str, ...]
    seconds: float


@dataclass
class UnsafeRepository(DDChangeError):
    """git refuses the repository: it is owned by another user (git's safe.directory);
    `said` is git's complaint, with its advice."""

    exit: ClassVar[Exit] = Exit.USAGE

    said: str


@dataclass
class BadResults(DDChangeError):
    """A --results value that is not one: `complaint` says why."""

    exit: ClassVar[Exit] = Exit.USAGE

    spec: str
    complaint: str


@dataclass
class NeedsResults(DDChangeError):
    """An option that only a whole-suite triage takes, given without --results."""

    exit: ClassVar[Exit] = Exit.USAGE

    option: str


@dataclass
class CausesApart(DDChangeError):
    """--patch with --results, where the causes apply on `bases` different commits (each
    inside its own tests' first bad commit): no one patch holds them."""

    exit: ClassVar[Exit] = Exit.USAGE

    bases: int


@dataclass
class UnreadableInput(DDChangeError):
    """`ddchange reduce`: an input file that cannot be read (`problem`: "no such file", "is a
    directory", "permission denied"), or that lies outside the directory the test runs from."""

    exit: ClassVar[Exit] = Exit.USAGE

    path: Path
    problem: str


@dataclass
class NoGrammar(DDChangeError):
    """`ddchange reduce --granularity node` where no grammar knows any of the `files`."""

    exit: ClassVar[Exit] = Exit.USAGE

    files: tuple[str, ...]


@dataclass(kw_only=True)
class InputNotFailing(DDChangeError):
    """`ddchange reduce`'s pre-flight: the original input does not fail the test as asked
    (`verdict`, `reason`, the end of its output in `tail`), so there is nothing to keep."""

    exit: ClassVar[Exit] = Exit.USAGE

    verdict: str
    reason: str
    tail: str
    interesting_exit: int | None


# -- nothing to search, or the search cannot go on ------------------------------------------


@dataclass(kw_only=True)
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

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

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
    reversed: bool = False  # BAD is an ancestor of GOOD: the range may be the wrong way round


@dataclass
class NoTestResults(DDChangeError):
    """With --results, GOOD's or BAD's run gave no test results (`reason` says why: no file,
    not XML, no test case, no build); `tail` is the end of its output."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    which: str
    reason: str
    tail: str


@dataclass
class NoTargets(DDChangeError):
    """With --results, no test passes at GOOD and fails at BAD (among those --test names)."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    already_failing: int
    newly_passing: int
    narrowed: tuple[str, ...]


@dataclass
class MaterializationMismatch(DDChangeError):
    """Applying every change to GOOD did not give BAD's tree: a limit of ddchange, not the user."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    paths: tuple[str, ...]


@dataclass
class TestAborted(DDChangeError):
    """The test exited above 127, which `git bisect run` treats as "stop everything" (a shell
    reports a death by signal N as 128+N)."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    exit_code: int
    command: str


@dataclass
class EnvironmentFault(DDChangeError):
    """The machine, not the change, made a run fail: a full disk, a file-size or open-file
    limit, a scratch tree that could not be written. No outcome is recorded for it; the same
    command resumes once the fault is gone."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    problem: str
    path: Path


@dataclass
class ScratchReplaced(DDChangeError):
    """A test replaced `path`, the scratch tree or its .git, with a link or another directory:
    ddchange's own git commands there would act where it points (the user's checkout or .git).
    Found before anything more is written there; the run stops."""

    exit: ClassVar[Exit] = Exit.USAGE

    path: Path


@dataclass
class PathTooLong(DDChangeError):
    """A path of the range is too long for this system once it lies in the scratch tree at
    `tree` (PATH_MAX, or a name longer than NAME_MAX)."""

    exit: ClassVar[Exit] = Exit.USAGE

    tree: Path


@dataclass
class DaskMissing(DDChangeError):
    """--scheduler without Dask's `distributed` installed."""

    exit: ClassVar[Exit] = Exit.USAGE


@dataclass
class SchedulerUnreachable(DDChangeError):
    """--scheduler ADDRESS: no Dask scheduler answered there, or it has no workers."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    address: str
    reason: str


@dataclass
class ClusterLost(DDChangeError):
    """--scheduler: the Dask cluster lost a test (its workers, or the scheduler, are gone).
    Like an EnvironmentFault, no outcome is recorded for it, and the same command resumes."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    address: str
    problem: str


@dataclass
class RunInProgress(DDChangeError):
    """`ddchange reset` while other ddchange processes still work in the repository."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    pids: tuple[int, ...]


@dataclass
class BadLogFile(DDChangeError):
    """`ddchange replay FILE` with a file that is not a `ddchange log`."""

    exit: ClassVar[Exit] = Exit.USAGE

    path: Path
    line: int
    problem: str


@dataclass
class UnknownChanges(DDChangeError):
    """The records taken over (a replayed log's, most often an edited one) name `ids` that are
    no changes of this run's diff."""

    exit: ClassVar[Exit] = Exit.USAGE

    ids: tuple[str, ...]


@dataclass
class JournalUnavailable(DDChangeError):
    """The journal of completed tests cannot be opened or written (read-only .git, disk full)."""

    exit: ClassVar[Exit] = Exit.NOT_REPRODUCED

    path: Path
    reason: str
