"""One search, from two revisions to a 1-minimal failing set of changes.

Owns the order of events: resolve the revisions, read the diff, open the scratch worktree, check
that GOOD passes and BAD fails (pre-flight), run ddmin level by level down the hierarchy, and keep
the statistics and the test log. It reaches git, the worktree and the processes only through
their modules' small functions; the algorithm itself lives in dd.py.

Counting: `Stats.tests_run` counts every real run of the test (build + test), the two pre-flight
runs included, because each one costs the user the same. Cache hits and implied outcomes are
answers that cost no run.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ddchange import errors, git, grouping, hunks, runner
from ddchange.cache import OutcomeCache, Projected
from ddchange.dd import DD, Outcome, Source, Stats, Step
from ddchange.hunks import Diff, Hunk
from ddchange.worktree import Scratch, scratch_worktree


@dataclass(frozen=True)
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
    granularity: str = "hunk"


@dataclass(frozen=True)
class TestRecord:
    """One real run of the build and test, as the log and the report show it."""

    number: int
    phase: str  # "good", "bad", or the name of the hierarchy level
    size: int  # change units applied
    outcome: Outcome
    reason: str
    duration: float  # seconds inside the build and test commands


@dataclass(frozen=True)
class Progress:
    """Sent to the listener after every evaluation, real or answered from the cache."""

    phase: str
    outcome: Outcome
    source: Source
    reason: str  # why a real test gave its outcome ("exit 1", "build failed: ..."); "" if cached
    size: int
    remaining: int  # change units in the smallest configuration known to fail
    granularity: int
    tests_run: int


@dataclass(frozen=True)
class Revisions:
    good: str  # full SHAs
    bad: str


@dataclass
class Result:
    """The answer and how it was reached."""

    request: Request
    revisions: Revisions
    diff: Diff
    culprits: list[Hunk]
    patch: bytes
    stats: Stats
    log: list[TestRecord]
    wall_time: float
    outcome: str = "found"
    command_time: float = field(init=False)

    def __post_init__(self) -> None:
        self.command_time = sum(record.duration for record in self.log)


Listener = Callable[[Progress], None]


def run(request: Request, listener: Listener | None = None) -> Result:
    """Resolve, pre-flight and search; raise an `errors.DDChangeError` when it cannot."""
    started = time.monotonic()
    repo = git.open_repo(request.repo)
    revisions = resolve(repo, request.good, request.bad)
    diff = read_diff(repo, request, revisions)
    with scratch_worktree(repo, revisions.good) as scratch:
        search = _Search(request, diff, scratch, listener or (lambda _: None))
        search.preflight(revisions)
        culprits = search.minimize()
        scratch.apply(hunks.materialize(diff, {h.id for h in culprits}))
        patch = scratch.patch(revisions.good, hunks.touched_paths(diff))
    elapsed = time.monotonic() - started
    return Result(request, revisions, diff, culprits, patch, search.stats, search.log, elapsed)


def resolve(repo: git.Repo, good: str, bad: str) -> Revisions:
    """Full SHAs of both revisions; GOOD and BAD must differ."""
    revisions = Revisions(git.resolve_commit(repo, good), git.resolve_commit(repo, bad))
    if revisions.good == revisions.bad:
        raise errors.SameRevisions(good, bad, revisions.good)
    return revisions


def read_diff(repo: git.Repo, request: Request, revisions: Revisions) -> Diff:
    """The change units between the revisions; there must be at least one."""
    diff = git.read_diff(repo, revisions.good, revisions.bad)
    if not diff.hunks:
        raise errors.EmptyDiff(request.good, request.bad)
    return diff


class _Search:
    """The state of one search: the worktree, the cache, the statistics and the log."""

    def __init__(self, request: Request, diff: Diff, scratch: Scratch, listener: Listener):
        self.request = request
        self.diff = diff
        self.scratch = scratch
        self.listener = listener
        self.cache = OutcomeCache[str](monotony=request.monotony)
        self.stats = Stats()
        self.log: list[TestRecord] = []
        self.phase = "good"
        pattern = re.compile(request.fail_pattern) if request.fail_pattern else None
        self.expect = runner.Expectation(exit_code=None, pattern=pattern)
        self._last = ""

    def preflight(self, revisions: Revisions) -> None:
        """GOOD must pass and BAD must fail; BAD's exit code becomes *the* failure."""
        everything = frozenset(h.id for h in self.diff.hunks)
        # Self-check: every change applied to GOOD must give BAD's tree, as git itself has it.
        bad_tree = git.tree_states(self.scratch.repo, revisions.bad, hunks.touched_paths(self.diff))
        mismatched = hunks.differences(self.diff, everything, bad_tree)
        if mismatched:
            raise errors.MaterializationMismatch(tuple(mismatched))
        for phase, config, wanted in (
            ("good", frozenset[str](), Outcome.PASS),
            ("bad", everything, Outcome.FAIL),
        ):
            self.phase = phase
            verdict = self._run(config)
            self.stats.tests_run += 1
            self._report(Step(config, verdict.outcome, Source.TEST, 1, everything))
            if verdict.outcome is not wanted:
                sha = revisions.good if phase == "good" else revisions.bad
                raise self._preflight_failed(phase, sha, verdict)
            self.cache.store(config, wanted)
            if phase == "bad" and verdict.test is not None:
                self.expect = runner.Expectation(verdict.test.exit_code, self.expect.pattern)

    def minimize(self) -> list[Hunk]:
        """ddmin at each level of the hierarchy, descending into what the answer kept."""
        kept = list(self.diff.hunks)
        for name, level in grouping.levels_named(self.request.granularity):
            self.phase = name
            groups = level(kept)
            dd = DD(
                lambda config: self._test(grouping.members(config)),
                cache=Projected(self.cache, grouping.members),
                stats=self.stats,
                listener=self._report_groups,
            )
            chosen = grouping.members(dd.ddmin(groups))
            kept = [h for h in kept if h.id in chosen]
        return kept

    def _test(self, config: frozenset[str]) -> Outcome:
        return self._run(config).outcome

    def _run(self, config: frozenset[str]) -> runner.Verdict:
        """Materialize `config` in the worktree, build and test it, and log the run."""
        try:
            self.scratch.apply(hunks.materialize(self.diff, config))
        except hunks.Conflict as conflict:
            verdict = runner.Verdict(Outcome.UNRESOLVED, f"does not apply: {conflict}", None, None)
        else:
            verdict = runner.run_candidate(
                self.scratch.path,
                self.request.test,
                build=self.request.build,
                timeout=self.request.timeout,
                expect=self.expect,
            )
        duration = sum(e.duration for e in (verdict.build, verdict.test) if e is not None)
        number = len(self.log) + 1
        self.log.append(
            TestRecord(number, self.phase, len(config), verdict.outcome, verdict.reason, duration)
        )
        self._last = verdict.reason
        return verdict

    def _report_groups(self, step: Step[grouping.Group]) -> None:
        members = grouping.members
        self._report(
            Step(
                members(step.config),
                step.outcome,
                step.source,
                step.granularity,
                members(step.failing),
            )
        )

    def _report(self, step: Step[str]) -> None:
        reason = self._last if step.source is Source.TEST else ""
        self.listener(
            Progress(
                self.phase,
                step.outcome,
                step.source,
                reason,
                step.size,
                len(step.failing),
                step.granularity,
                self.stats.tests_run,
            )
        )

    def _preflight_failed(
        self, phase: str, sha: str, verdict: runner.Verdict
    ) -> errors.PreflightFailed:
        failed = verdict.test or verdict.build
        tail = failed.tail if failed is not None else ""
        return errors.PreflightFailed(
            which=phase,
            verdict=verdict.outcome.value,
            reason=verdict.reason,
            tail=tail,
            rerun=rerun_command(self.request, sha),
        )


def rerun_command(request: Request, sha: str) -> str:
    """A shell command that repeats one pre-flight check by hand, in a throwaway worktree."""
    place = "/tmp/ddchange-check"
    steps = [
        f"git -C {shlex.quote(str(request.repo))} worktree add --detach {place} {sha[:12]}",
        f"cd {place}",
    ]
    if request.build:
        steps.append(request.build)
    steps.append(shlex.join(request.test))
    return " && ".join(steps)
