"""The data model every layer shares: what was asked, what each run showed, what was found.

Owns the records that flow one way through ddchange: a `Request` (validated by the CLI) goes
to the session; the trial layer turns configurations into `TestRecord`s (`trial/trials.py`), the
only source of outcomes; the session assembles a `Result` from those records; the renderers in
`report/` read only the `Result`. A `Claim` is how the result carries a statement about one
configuration: the outcome and the real runs behind it, so that nothing is printed as a fact
without a recorded run.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: the model imports nothing that does I/O
    from ddchange.diff.hunks import Diff, Hunk
    from ddchange.git import CommitInfo


class Outcome(enum.Enum):
    """The three answers a test can give about a configuration."""

    PASS = "pass"  # the failure is absent
    FAIL = "fail"  # the failure we are hunting is present
    UNRESOLVED = "unresolved"  # neither can be said: no build, no patch, timeout, other failure


class Source(enum.Enum):
    """Where an outcome came from: a real test, an exact cache hit, or monotony."""

    TEST = "test"
    CACHE = "cache"
    IMPLIED = "implied"


class Status(enum.StrEnum):
    """One test case's result in one run, as the suite's result files say (`--results`)."""

    PASS = "pass"
    FAIL = "fail"  # an assertion failed
    ERROR = "error"  # anything else went wrong: an exception, a module that did not import
    SKIP = "skip"


@dataclass(frozen=True)
class Case:
    """A test case's result in one run: its status, and for FAIL and ERROR the kind of failure
    (JUnit's `type`: "AssertionError", "ImportError"; "" when the file names none)."""

    status: Status
    kind: str = ""
    # What the writer said of a failure or error (JUnit's message, and the end of its text),
    # for --fail-pattern; not part of the signature: "the same failure" is the same kind.
    message: str = field(default="", compare=False)


def cases_json(cases: Mapping[str, Case] | None) -> dict[str, list[str]] | None:
    """Test results as the journal and the log hold them: {test id: [status, kind]}, with
    the message third where there is one."""
    if cases is None:
        return None
    return {
        name: [case.status.value, case.kind, *([case.message] if case.message else [])]
        for name, case in cases.items()
    }


def cases_from(value: object) -> dict[str, Case] | None:
    """Test results read back from `cases_json`'s form (None: none); ValueError if not that."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("test results that are not an object")
    cases: dict[str, Case] = {}
    for name, pair in value.items():
        if not (
            isinstance(pair, list) and len(pair) in (2, 3) and all(isinstance(p, str) for p in pair)
        ):
            raise ValueError(f"a test result that is not [status, kind(, message)]: {name!r}")
        cases[name] = Case(Status(pair[0]), pair[1], *pair[2:])
    return cases


@dataclass(kw_only=True)
class Stats:
    """Counts of where answers came from. Share one instance to sum over several searches."""

    tests_run: int = 0
    cache_hits: int = 0
    implied: int = 0
    outcomes: dict[Outcome, int] = field(default_factory=lambda: dict.fromkeys(Outcome, 0))


@dataclass(frozen=True, kw_only=True)
class TestRecord:
    """One real run of the build and test: what the log shows and what a resumed run reuses."""

    number: int  # 1, 2, ... over the whole life of a run, resumes included
    phase: Phase
    config: frozenset[str]  # the change units applied
    outcome: Outcome
    reason: str
    exit_code: int | None
    duration: float  # seconds inside the build and test commands
    tail: str = ""
    # Names an UNRESOLVED run's output said were missing (the failure resolution loop's input),
    # kept so that a resumed run learns the same needs and takes the same path.
    missing: frozenset[str] = frozenset()
    # With --results: each test case's result in this run, by test id; None when the run gave
    # none (it did not build or run, or its result files were missing or unreadable: `reason`).
    cases: Mapping[str, Case] | None = None

    @property
    def size(self) -> int:
        return len(self.config)


class Level(enum.StrEnum):
    """The levels of the hierarchy, coarsest first (hierarchy/grouping.py): what the search
    removes together at each step."""

    COMMIT = "commit"  # the changes a commit brought (--strategy history)
    DIRECTORY = "directory"  # only for diffs wider than grouping.WIDE files
    FILE = "file"
    FUNCTION = "function"
    HUNK = "hunk"
    BLOCK = "block"  # a run of changed lines with no unchanged line between them
    LINE = "line"
    # Not searched down to: a block of the answer whose lines came from several commits, cut by
    # commit, or that the answer's own patch shows as several hunks (diff/realign.py), cut
    # there, and the answer checked again at it
    ORIGIN = "origin"


class Stage(enum.StrEnum):
    """The phases of a run besides the search's levels, in the order a run meets them."""

    GOOD = "good"  # pre-flight: GOOD must pass
    BAD = "bad"  # pre-flight: BAD must fail
    BISECT = "bisect"  # --strategy auto: a commit's own tree, as the bisection asks
    ON_GOOD = "on-good"  # auto: the answer found inside a commit, applied on GOOD
    VERIFY = "verify"  # the check by real outcomes that the answer is 1-minimal
    CONFIRM = "confirm"  # the answer and GOOD run again at the end


class Grain(enum.StrEnum):
    """The pieces `ddchange reduce` takes out of an input, coarsest first (--granularity asks
    for the finest): the reduction goes down them in order."""

    NODE = "node"  # a node of the file's syntax tree, level by level (where a grammar knows it)
    LINE = "line"
    TOKEN = "token"  # a word, a number, one mark of punctuation, a run of white space
    CHAR = "char"  # one character (one byte where the input is no UTF-8)


class Rewrite(enum.StrEnum):
    """The passes of `ddchange reduce` that shorten pieces of an input rather than take them out
    (diff/inputs.py), as C-Vise's and shrinkray's do; each reports what it saved."""

    RENAME = "rename"  # a name and all its uses renamed to a shorter one the input lacks
    DEDENT = (
        "dedent"  # a file re-indented: a space for each level its lines are deep (or by its unit)
    )
    SPACE = "space"  # a run of white space shortened
    LITERAL = "literal"  # a number as 0, a quoted string emptied
    # a balanced pair of brackets taken out with its content, emptied, or unwrapped
    BRACKETS = "brackets"
    # the white space between two words taken out, once the result is 1-minimal in tokens: the
    # two are one token then (`<SELECT MULTIPLE` as `<SELECTMULTIPLE`, where that still fails)
    JOIN = "join"


# What a run is recorded under: the search's level, a stage of the run, or a pass of `reduce`.
Phase = Level | Stage | Grain | Rewrite


# A commit's own tree, as a configuration: the one name every layer gives it (the bisection
# runs it, the journal keeps it, the reports draw it as a whole tree, not a set of changes).
_COMMIT = "commit:"


# The longest wait the system's timers take: poll() and the like count milliseconds in a C int.
MAX_TIMEOUT = (2**31 - 1) // 1000
ON_GOOD = "on-good:"  # a configuration of the answer applied on GOOD as a patch (session.py)


def whole_tree(config: frozenset[str]) -> bool:
    """Whether `config` stands for a whole tree (a commit's, or a patch's on GOOD), not a
    set of the diff's changes."""
    return len(config) == 1 and next(iter(config)).startswith((_COMMIT, ON_GOOD))


def commit_tree(sha: str) -> frozenset[str]:
    """The configuration that stands for the whole tree of commit `sha`."""
    return frozenset({_COMMIT + sha})


def tree_commit(config: frozenset[str]) -> str | None:
    """The commit whose whole tree `config` stands for (`commit_tree`); None for a set of
    changes."""
    only = next(iter(config)) if len(config) == 1 else ""
    return only.removeprefix(_COMMIT) if only.startswith(_COMMIT) else None


def phase_of(name: str) -> Phase:
    """The phase named `name` (a journal's or a log's); ValueError if none is."""
    for kind in (Level, Stage, Grain, Rewrite):
        with contextlib.suppress(ValueError):
            return kind(name)
    raise ValueError(f"no phase is named {name!r}")


class Strategy(enum.StrEnum):
    """How the search goes about GOOD..BAD (--strategy)."""

    DIFF = "diff"  # one search over the range's changes
    HISTORY = "history"  # the commits' changes first, in history order
    # bisect the first-parent history, then search inside the first bad commit against its
    # parent (search/history.py): the default
    AUTO = "auto"


class Ending(enum.StrEnum):
    """How a search or a triage ended."""

    # The answer (each cause) was seen to fail, and without each of its changes it was run and
    # did not fail (and, unless --no-confirm, it failed again when rerun).
    FOUND = "found"
    # Runs of one configuration disagreed: the answer is what was seen, not a verdict.
    FLAKY = "flaky"
    # Stopped before the answer was checked.
    INTERRUPTED = "interrupted"


STRATEGIES: tuple[Strategy, ...] = tuple(Strategy)
# The levels a search goes down, coarsest first.
LEVELS: tuple[Level, ...] = tuple(level for level in Level if level != Level.ORIGIN)
# The levels an answer can be 1-minimal at (--granularity).
GRANULARITIES = LEVELS[2:]
# The default of --confidence: 3 reruns of the answer (search/confidence.py).
CONFIDENCE = 0.98


@dataclass(frozen=True, kw_only=True)
class Request:
    """What the user asked for, already validated by the CLI."""

    repo: Path
    good: str
    bad: str
    test: tuple[str, ...]
    build: str | None = None
    timeout: float | None = None
    fail_pattern: str | None = None
    monotony: bool = True
    granularity: Level = Level.BLOCK
    dependencies: bool = True
    strategy: Strategy = Strategy.AUTO
    isolate: bool = False  # dd (a passing and a failing set, 1-minimal difference), not ddmin
    retries: int = 0
    confirm: bool = True
    # How sure the answer must be before it is claimed (search/confidence.py): the reruns of
    # the answer at the end follow from it.
    confidence: float = CONFIDENCE
    clean: bool = False  # remove untracked and ignored files (git clean -fdx) before each test
    # Git pathspecs: changes to matching paths are always applied, as in BAD (keep), or never,
    # as in GOOD (ignore); neither is searched.
    keep: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # Environment variables the test depends on: their values are part of what identifies a run
    # (runs.run_key), so a run with other values does not take this one's records.
    env_key: tuple[str, ...] = ()
    # Builds and tests at once, each in a scratch tree of its own (-j N). The answer and the
    # journal's records are the same for every N; only the time and the runs made ahead and
    # never asked for (`Result.unused`) differ.
    jobs: int = 1
    # A Dask scheduler's address: the tests run on its workers (trial/cluster.py), which clone
    # `worker_clone` when given, else get a bundle of GOOD.
    scheduler: str | None = None
    worker_clone: str | None = None
    # Where each run's per-test results are ("junit:GLOB" or "tap"): the whole suite is triaged,
    # one search per test that passes at GOOD and fails at BAD (suite.py).
    results: tuple[str, ...] = ()
    # Globs over test ids: only the matching ones are searched (with `results`).
    tests: tuple[str, ...] = ()
    # --strategy auto: the user's GOOD and BAD (full names) when this is the search inside
    # their history (GOOD and BAD here are then the commits the bisection ended at)
    within: tuple[str, str] | None = None


@dataclass(frozen=True)
class Revisions:
    good: str  # full SHAs
    bad: str


# The search's share of an estimate is shown with a range from a seventh of it to seven times
# it: on the real regressions the tests it still ran fell inside at least 8 times in 10
# (benchmarks/estimate.py measures how often).
SPREAD = 7
WITHIN = "8 times in 10"  # how often, as the progress line says it


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """About how many real tests are still to run: `fixed` ones that will run (the pre-flight's
    runs not made yet, the checks at the end) and the search's, a guess (see events.py)."""

    fixed: int = 0
    search: int = 0

    @property
    def likely(self) -> int:
        return self.fixed + self.search

    @property
    def low(self) -> int:
        return self.fixed + -(-self.search // SPREAD)

    @property
    def high(self) -> int:
        return self.fixed + SPREAD * self.search


@dataclass(frozen=True, kw_only=True)
class Progress:
    """Sent to the listener after every evaluation, real or answered without a run."""

    phase: Phase
    outcome: Outcome
    source: Source
    reason: str  # why a real test gave its outcome ("exit 1", "build failed: ..."); "" if cached
    size: int
    remaining: int  # change units in the smallest failing configuration (minus the passing)
    tests_run: int
    commit: str = ""  # the commit tested, in the "bisect" phase
    left: Estimate = Estimate()  # the real tests still to run (shown as an estimate)


@dataclass(frozen=True, kw_only=True)
class Running:
    """Sent to the listener when a real test starts: what is in flight, and since when."""

    phase: Phase
    size: int
    number: int  # the real test this is, counting from 1 in this process
    started: float  # time.monotonic() when it started
    commit: str = ""
    left: Estimate = Estimate()  # the real tests still to run, this one included
    alongside: int = 0  # other tests going at the same time (-j N)


@dataclass(frozen=True)
class Disagreement:
    """Evidence of a flaky test: one configuration, several runs, different outcomes."""

    phase: Phase
    size: int
    outcomes: tuple[Outcome, ...]


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A statement about one configuration, read from the records of this run: the outcome
    of its real runs (PASS where some passed and the others failed: a flaky test fails at
    random, it never passes at random; UNRESOLVED where an unresolved run is among others that
    disagree) and how many of them failed."""

    config: frozenset[str]
    outcome: Outcome
    runs: int
    fails: int


@dataclass(frozen=True, kw_only=True)
class Confirmation:
    """The answer run again at the end, for real (see search/confidence.py)."""

    # What every run of GOOD + the answer (with --isolate: the failing set) agrees on; FAIL
    # confirms it, anything else (a PASS among FAILs) shows the test flaky.
    answer: Outcome
    runs: int  # runs of the answer in all: the one that found it, and the reruns
    reruns: int  # runs after the one that found it, all failing when `answer` is FAIL
    # The chance that a wrong answer fails as many reruns in a row, for a test that fails at
    # random in `flake_rate` of its runs (summed over every answer checked in the run).
    risk: float
    flake_rate: float
    # The answers checked in the run, this one included (each bisection's searches too).
    checks: int = 1
    # Whether changes holding all of the answer passed in a run (a fact): under monotony its
    # FAILs then came at random, or the test is not monotone; it was checked as for a test
    # seen to fail at random.
    contradicted: bool = False
    # GOOD's runs in all, the one after the reruns included (none when a rerun disagreed):
    # PASS in every one, nothing the search's runs left behind makes it fail.
    good: Claim | None = None
    # How many of GOOD's last runs failed in a row: as many as the answer's runs, and GOOD
    # fails now (what the search's runs left in the scratch tree), so they tell nothing.
    good_failing: int = 0
    # BAD's runs in all, where the test was seen to fail at random: run again as the answer
    # was (every answer rests on BAD's FAIL); a PASS among them and there is no answer.
    bad: Claim | None = None
    # BAD without the answer (--isolate: GOOD + the passing set), when a run of it is on record
    # (the search's; it is not run for this): PASS, the answer is the whole cause.
    rest: Outcome | None = None


@dataclass(frozen=True, kw_only=True)
class Route:
    """How the search went about it: which strategy, and for "auto" (the default) what the
    bisection of the history found and tested, or why it searched the whole range instead.

    Every commit named here as passing or failing has records behind it (`bisected`): the
    bisection's runs of the commits' own trees."""

    strategy: Strategy
    # The user's GOOD and BAD (full names); the search's own ends are `Result.revisions`,
    # which are these unless the search went inside the first bad commit (then its parent and
    # the commit, or the range between them where commits could not be tested).
    good: str | None = None
    bad: str | None = None
    # Each commit the bisection asked about, in order, with the claim its runs make (the
    # pre-flight's GOOD and BAD are not among them)
    bisected: tuple[tuple[str, Claim], ...] = ()
    first_bad: str | None = None  # the oldest first-parent commit seen to fail
    located_in: int = 0  # the runs that found it: the pre-flight, the bisection, its reruns
    # "commit": inside the first bad commit; "skipped": the range from the last good commit to
    # the first bad one, the commits between untestable; "merge": a merge against its first
    # parent; "range": all of GOOD..BAD (the bisection could not run: `fallback` says why)
    searched: str = "range"
    merges: tuple[str, ...] = ()  # merges whose merged branch was bisected into
    tip: Claim | None = None  # the searched failing commit's runs (its verdict, rerun)
    # The answer applied on the user's GOOD, tested once: its claim; None: not asked (the
    # search was on GOOD already, or found nothing), or it did not apply there (then
    # `on_good_note` says so; where it ran and could not be tested, it says why)
    on_good: Claim | None = None
    on_good_note: str = ""
    fallback: str = ""  # why auto searched the whole range ("" : it did not fall back)
    # Where GOOD is no ancestor of BAD, the commit they forked from (their merge base), asked
    # first (its claim is among `bisected`): the bisection's start where it passed, else the
    # reason for the `fallback`
    fork: str | None = None
    # Who made the commits the route names, and when (first bad commit, base, merges)
    commits: Mapping[str, CommitInfo] = field(default_factory=dict)

    @property
    def bisect_tests(self) -> int:
        """The commits the bisection asked about."""
        return len(self.bisected)

    @property
    def inside(self) -> bool:
        """Whether the search went on from a commit other than GOOD, or ended at one other
        than BAD: its answer applies on `Result.revisions.good`, not on the user's GOOD."""
        return bool(self.bisected) and self.searched != "range"


@dataclass(frozen=True, kw_only=True)
class Earlier:
    """Where the records a run took over came from: its run before this one (the same key:
    the same test, revisions and options that change what a test means), or a replayed log."""

    when: str | None  # "YYYY-MM-DD HH:MM:SS" (UTC) of its last test; None: not known
    replayed: bool = False  # from a replayed log (`ddchange replay`), not from a run
    # Its options that choose which tests run, where they differ from this run's, as that run
    # was asked ("--no-dependencies", "--strategy auto", "with dependencies")
    options: tuple[str, ...] = ()
    # The files its commands ran (`runs.named_files`) whose content changed since: then none
    # of its tests were taken over
    changed: tuple[str, ...] = ()


@dataclass(kw_only=True)
class Result:
    """The answer and how it was reached; every claim in it is a `Claim` read from records."""

    request: Request
    revisions: Revisions
    diff: Diff
    culprits: list[Hunk]
    patch: bytes
    stats: Stats
    log: list[TestRecord]  # every test of this run, earlier attempts included
    wall_time: float
    command_time: float  # seconds inside build and test commands, in this process
    tests_run: int  # real runs of build and test, in this process
    outcome: Ending = Ending.FOUND  # how the run ended
    resumed: int = 0  # tests taken from earlier attempts instead of running them
    confirmation: Confirmation | None = None
    disagreements: list[Disagreement] = field(default_factory=list)
    resolutions: tuple[int, int] = (0, 0)  # builds that taught a need; needs disproved
    scopes: dict[str, str] = field(default_factory=dict)  # culprit id → enclosing function
    passing: list[Hunk] = field(default_factory=list)  # --isolate: the largest passing set
    route: Route = field(default_factory=lambda: Route(strategy=Strategy.DIFF))
    # unit id → the commits of GOOD..BAD that brought it, oldest first (culprits and passing)
    attribution: dict[str, tuple[CommitInfo, ...]] = field(default_factory=dict)
    answer: Claim | None = None  # the failing set (None: nothing was seen to fail but BAD)
    passing_claim: Claim | None = None  # --isolate: the passing set
    # What backs "1-minimal": ddmin: the answer without each of its changes; --isolate: the
    # passing set plus each change of the difference, and the failing set without it.
    checks: list[Claim] = field(default_factory=list)
    # --keep / --ignore: the paths of the files applied as in BAD in every test (and in the
    # patch), and of those left as in GOOD; never searched
    kept: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    # -j N: builds and tests made ahead in parallel that the search never asked for; not in
    # `tests_run` and not records (no outcome of theirs backs anything)
    unused: int = 0
    width: int = 1  # tests that could run at once (-j N, or a Dask cluster's threads)
    # culprit id → its block (a run of the answer's changed lines with no unchanged line
    # between them): at block granularity the report shows a block as one change
    blocks: dict[str, int] = field(default_factory=dict)
    # ddmin: how many of `checks`, at their end, removed more than one change at once (the
    # changes that need one, its block, hunk, function or file), where removing one alone did
    # not pass
    wider: int = 0
    earlier: Earlier | None = None  # where the tests taken over came from (None: none were)


@dataclass(frozen=True, kw_only=True)
class Target:
    """A test that passes at GOOD and fails at BAD, as it fails there (`--results`)."""

    name: str
    at_bad: Case
    # Every test that passes at GOOD, with its result at BAD (None: absent there); shared by
    # all targets of a run: a failure counts only where none of them breaks anew.
    ends: Mapping[str, Case | None] = field(default_factory=dict)
    # --fail-pattern: a failure counts only where its message matches this (a regex)
    pattern: str | None = None


@dataclass(frozen=True, kw_only=True)
class Cause:
    """One cause of a suite's failures: a configuration seen to make each of `tests` fail,
    where each one's search ended; its claims are read from the run's records."""

    answer: frozenset[str]  # with --isolate, the failing set
    # --isolate: the passing set, a subset of `answer` seen to pass; the cause is the difference
    passing: frozenset[str] = frozenset()
    tests: tuple[str, ...]
    runs: int  # records of the answer: the one that found it and its reruns (0: not checked)
    checks: int  # the configurations whose records back 1-minimality for its tests
    # Of those, the ones where one of its tests gave no verdict (no build, no result, another
    # failure): "did not fail" there, but did not pass either.
    unresolved: int = 0
    # The records of the answer, of GOOD or of a check do not back the claim for one of its
    # tests: the cause is what was seen, not a verdict.
    flaky: bool
    # Some of those records disagree for one of its tests (a test that fails at random), and
    # back the claim all the same (a PASS is a fact).
    disagreed: bool = False
    # The rate of failures at random its reruns guard against (search/confidence.py): a cause
    # that in truth passes for one of its tests fails them all at most rate ** (runs - 1) of
    # the time
    flake_rate: float = 0.0


@dataclass(frozen=True, kw_only=True)
class CauseChanges:
    """One cause's changes and where they stand: the commit its patch applies on (GOOD's, or
    the parent of the first bad commit its tests' bisection ended at), with the changes of that
    search's diff that make it."""

    base: str  # the full name of the commit that `patch` applies on
    first_bad: str | None  # the first bad commit its tests were bisected to (None: not bisected)
    units: tuple[Hunk, ...]  # its changes, in diff order (--isolate: the difference)
    context: tuple[Hunk, ...] = ()  # --isolate: the passing set's changes, in `patch` too
    patch: bytes  # `git apply` puts it on `base`
    scopes: dict[str, str]  # unit id -> its enclosing function
    # each unit's block (a run of its changed lines with no unchanged line between them): at
    # block granularity a block is one change
    blocks: dict[str, int]
    attribution: dict[str, tuple[CommitInfo, ...]]  # unit id -> the commits that brought it


@dataclass(frozen=True, kw_only=True)
class SuiteResult:
    """A whole suite triaged (suite.py): its targets, the causes found, and what it cost."""

    request: Request
    revisions: Revisions
    targets: tuple[Target, ...]
    already_failing: tuple[str, ...]  # failing at GOOD and at BAD: not searched
    newly_passing: tuple[str, ...]  # failing at GOOD, passing at BAD
    causes: tuple[Cause, ...]
    changes: tuple[CauseChanges, ...]  # one per cause
    log: tuple[TestRecord, ...]
    tests_run: int  # real runs made by this process
    resumed: int  # records taken over from earlier attempts
    wall_time: float
    command_time: float
    width: int = 1  # tests that could run at once (-j N, or a Dask cluster's threads)
    unused: int = 0  # runs made ahead that no search asked for (not records)
    earlier: Earlier | None = None  # where the records taken over came from (None: none were)
    # FOUND: every target has a cause, each backed by records; FLAKY: some records disagree;
    # INTERRUPTED: stopped before every target had one.
    outcome: Ending
    # --strategy auto: the tests of the bisection of the history (GOOD's and BAD's included),
    # and the commits named (each first bad commit and its parent); `fallback` says why the
    # whole range was searched where it was
    located_in: int = 0
    commits: dict[str, CommitInfo] = field(default_factory=dict)
    fallback: str = ""
    # Where GOOD is no ancestor of BAD: the commit they forked from, where each bisection
    # started once a run showed it to pass
    fork: str = ""
    # Every cause's changes together, as one patch, where all causes apply on one commit (the
    # base of each of `changes`); None where they do not, or there is no cause.
    patch: bytes | None = None

    @property
    def disagreed(self) -> bool:
        """Whether runs of the same changes disagreed for a test of some cause (a test that
        fails at random), the causes backed all the same."""
        return any(cause.disagreed for cause in self.causes)


# -- reducing a failing input (`ddchange reduce`) ------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ReduceRequest:
    """What `ddchange reduce` was asked, already validated by the CLI."""

    files: tuple[Path, ...]  # absolute; the inputs, each reduced in place of itself
    root: Path  # the directory the files' relative paths start at: the test's working directory
    test: tuple[str, ...]
    timeout: float | None = None
    fail_pattern: str | None = None
    # None: `git bisect run`'s rules, the failure present where the test exits as the original
    # did (1-127, not 125); 0: C-Vise's, the input interesting where the test exits 0.
    interesting_exit: int | None = None
    granularity: Grain = Grain.TOKEN  # the finest pieces taken out; 1-minimal in them
    output: Path | None = None  # one file: where its result goes (default FILE.reduced)
    in_place: bool = False  # the result over FILE, the original kept as FILE.orig
    confirm: bool = True  # the result run again at the end, as often as `confidence` asks
    confidence: float = CONFIDENCE
    jobs: int = 1  # tests at once (-j N): the records and the result are the same for every N
    # A Dask scheduler's address: the tests run on its workers (trial/cluster.py), the same
    # records and result as on this machine
    scheduler: str | None = None


@dataclass(frozen=True, kw_only=True)
class PassReport:
    """What one pass of a reduction did: the tests it ran (its records, an earlier attempt's
    included), and the bytes it took out."""

    name: Grain | Rewrite
    tests: int
    saved: int


@dataclass(frozen=True, kw_only=True)
class Reduction:
    """A reduction's result: every file before and after, the passes, what it cost, and the
    records behind it (trial/inputs.py)."""

    request: ReduceRequest
    original: tuple[bytes, ...]  # per file, as given
    reduced: tuple[bytes, ...]  # per file: the smallest input seen to fail
    outputs: tuple[Path, ...]  # where each result was written
    passes: tuple[PassReport, ...]
    # Each removal of one piece of the finest grain was run and did not fail (False: the
    # reduction stopped before that check ended).
    minimal: bool
    runs: int  # records of the result that failed: the one that found it and its reruns
    log: tuple[TestRecord, ...]
    tests_run: int  # real runs made by this process
    resumed: int  # records taken over from an earlier attempt of the same command
    wall_time: float
    outcome: Ending
    # Runs of some input disagreed (a test that fails at random): the result rests on FAILs
    # run as the flake rate asked, and on PASSes taken as facts.
    disagreed: bool = False
