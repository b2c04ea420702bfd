"""One search, from two revisions to a 1-minimal failing set of changes.

Owns the order of events: clean up after runs that were killed, resolve the revisions, read the
diff, open the scratch worktree and the journal, replay what earlier attempts of the same run
already tested, check that GOOD passes and BAD fails (pre-flight), search by the strategy asked
for (ddmin or dd level by level down the hierarchy; with "auto", a bisection of the first-parent
history first), confirm the answer, attribute it to commits, and keep the statistics and the
test log. It reaches git, the
worktree and the processes only through their modules' small functions; the algorithm itself
lives in dd.py.

Counting: `Result.tests_run` counts the real runs of the build and test made by this process,
the pre-flight, retry and confirmation runs included, because each one costs the user the same.
(`Stats.tests_run` is dd's own count of the configurations it had to ask for.) Outcomes replayed
from the journal, cache hits and implied outcomes cost no run and are counted apart.

Flakiness: a configuration whose runs disagree (with `retries`, or across resumed attempts) is
UNRESOLVED for the search, and the result is reported as flaky with the evidence, never as a
confident answer.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ddchange import errors, git, grouping, hunks, provenance, runner, worktree
from ddchange.cache import Journal, OutcomeCache, Projected, TestRecord
from ddchange.dd import DD, Outcome, Source, Stats, Step, bisect
from ddchange.grouping import Group, Hierarchy
from ddchange.hunks import Diff, FileState, Hunk
from ddchange.worktree import Scratch, scratch_worktree

# Bumped whenever the meaning of change-unit ids changes, so that old journals are not reused.
FORMAT = 1
STRATEGIES = ("diff", "history", "auto")


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
    granularity: str = "line"
    dependencies: bool = True
    # "diff": one dd over GOOD..BAD's changes; "history": prefixes of its commits first;
    # "auto": bisect the first-parent history, then dd inside the culprit commit (see _auto)
    strategy: str = "diff"
    isolate: bool = False  # dd (a passing and a failing set, 1-minimal difference), not ddmin
    retries: int = 0
    confirm: bool = True


@dataclass(frozen=True)
class Revisions:
    good: str  # full SHAs
    bad: str


@dataclass(frozen=True)
class Progress:
    """Sent to the listener after every evaluation, real or answered without a run."""

    phase: str
    outcome: Outcome
    source: Source
    reason: str  # why a real test gave its outcome ("exit 1", "build failed: ..."); "" if cached
    size: int
    remaining: int  # change units in the smallest failing configuration (minus the passing)
    granularity: int
    tests_run: int
    commit: str = ""  # the commit tested, in the "bisect" phase


@dataclass(frozen=True)
class Disagreement:
    """Evidence of a flaky test: one configuration, several runs, different outcomes."""

    phase: str
    size: int
    outcomes: tuple[Outcome, ...]


@dataclass(frozen=True)
class Confirmation:
    """The answer checked again at the end, with real runs."""

    answer: Outcome  # GOOD + the answer (with --isolate: the failing set): FAIL confirms it
    # ddmin: BAD without the answer; PASS means the answer is the whole cause.
    # --isolate: GOOD + the passing set; PASS confirms the pair.
    rest: Outcome


@dataclass(frozen=True)
class Route:
    """How the search went about it: which strategy, and for "auto" what bisection found."""

    strategy: str
    bisect_tests: int = 0  # commits of the first-parent history tested
    last_good: str | None = None  # the newest first-parent commit seen to pass (or GOOD)
    first_bad: str | None = None  # the oldest first-parent commit seen to fail (or BAD)
    suspects: tuple[str, ...] = ()  # commits in last_good..first_bad: the culprit commit(s)
    alone: Outcome | None = None  # GOOD + the suspects' changes; FAIL: searched inside them
    searched: str = "range"  # "commit": only the suspects' changes; "range": all of GOOD..BAD


@dataclass
class Result:
    """The answer and how it was reached."""

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
    outcome: str = "found"  # or "interrupted", "flaky"
    resumed: int = 0  # tests taken from earlier attempts instead of running them
    confirmation: Confirmation | None = None
    disagreements: list[Disagreement] = field(default_factory=list)
    resolutions: tuple[int, int] = (0, 0)  # builds retried with a missing dependency; resolved
    scopes: dict[str, str] = field(default_factory=dict)  # culprit id → enclosing function
    passing: list[Hunk] = field(default_factory=list)  # --isolate: the largest passing set
    route: Route = field(default_factory=lambda: Route("diff"))
    # unit id → the commits of GOOD..BAD that brought it, oldest first (culprits and passing)
    attribution: dict[str, tuple[git.CommitInfo, ...]] = field(default_factory=dict)


Listener = Callable[[Progress], None]


@dataclass(frozen=True)
class Minimized:
    """What `minimize` found and what it cost."""

    answer: frozenset[str]  # unit ids, closed under the dependencies: the failing set
    tests: int  # calls to the test function
    cache_hits: int
    implied: int
    learned: int  # times a failed build revealed a missing dependency (see Hierarchy.learn)
    passing: frozenset[str] = frozenset()  # isolate: the passing set (a subset of answer)


def minimize(
    diff: Diff,
    test: Callable[[frozenset[str]], Outcome],
    *,
    levels: Sequence[str] = ("file", "function", "hunk", "line"),
    dependencies: bool = True,
    monotony: bool = True,
    isolate: bool = False,
    start: frozenset[str] | None = None,
    hierarchy: Hierarchy | None = None,
    cache: OutcomeCache[str] | None = None,
    stats: Stats | None = None,
    listener: Callable[[str, Step[str]], None] | None = None,
    on_level: Callable[[str], None] | None = None,
) -> Minimized:
    """ddmin (or with `isolate`, dd) level by level down `levels`, testing only
    dependency-closed configurations.

    `test` gets configurations as frozensets of the ids of `diff.hunks` (for the "line" level,
    pass `hunks.split_lines(diff)`, whose units are line changes); only configurations closed
    under the dependencies are asked (see `Hierarchy.interior`). Precondition, not tested here:
    the empty configuration passes and `start` (default: all of `diff.hunks`) fails.

    ddmin: the answer is closed, fails, and is 1-minimal at the last level: without any one of
    its units, its interior does not fail. dd: `passing` ⊆ `answer`, both closed, `passing`
    passes, `answer` fails, and their difference is 1-minimal at the last level. Each level's
    dd works on the groups of the previous level's difference, on top of its passing set.
    """
    hierarchy = hierarchy or Hierarchy(diff, dependencies=dependencies)
    cache = cache if cache is not None else OutcomeCache[str](monotony=monotony)
    stats = stats if stats is not None else Stats()
    calls = 0

    def counted(config: frozenset[str]) -> Outcome:
        nonlocal calls
        calls += 1
        return test(config)

    passing = frozenset[str]()
    failing = start if start is not None else frozenset(unit.id for unit in diff.hunks)
    for level in levels:
        if on_level is not None:
            on_level(level)  # before its first test, so that the test is logged under it
        groups = hierarchy.groups(level, [u for u in diff.hunks if u.id in failing - passing])
        search = _Level(level, groups, hierarchy, passing, counted, cache, stats, listener)
        passing, failing = search.isolate() if isolate else (passing, search.ddmin())
    return Minimized(failing, calls, stats.cache_hits, stats.implied, hierarchy.learned, passing)


def run(request: Request, listener: Listener | None = None) -> Result:
    """Resolve, pre-flight and search; raise an `errors.DDChangeError` when it cannot.

    Ctrl-C (KeyboardInterrupt) during the search still gives a Result: the smallest failing
    configuration found so far, with outcome "interrupted". During pre-flight it propagates.
    """
    started = time.monotonic()
    repo = git.open_repo(request.repo)
    worktree.remove_stale(repo)
    revisions = resolve(repo, request.good, request.bad)
    diff = read_diff(repo, request, revisions)
    with Journal(journal_path(repo)) as journal, scratch_worktree(repo, revisions.good) as scratch:
        search = _Search(request, revisions, diff, scratch, journal, listener or (lambda _: None))
        search.resume()
        search.preflight()
        outcome = search.search()
        patch = scratch.patch(revisions.good, hunks.touched_paths(diff))
    return search.result(outcome, patch, time.monotonic() - started)


class _Level:
    """dd at one level: configurations of `groups`, always on top of the units of `base`."""

    def __init__(
        self,
        level: str,
        groups: list[Group],
        hierarchy: Hierarchy,
        base: frozenset[str],
        test: Callable[[frozenset[str]], Outcome],
        cache: OutcomeCache[str],
        stats: Stats,
        listener: Callable[[str, Step[str]], None] | None,
    ) -> None:
        self.level, self.groups, self.hierarchy, self.base = level, groups, hierarchy, base
        self.listener = listener
        self.dd = DD(
            lambda config: test(self.expand(config)),
            cache=Projected(cache, self.expand),
            stats=stats,
            listener=self.report,
        )

    def ddmin(self) -> frozenset[str]:
        """The units of a 1-minimal failing configuration."""
        return self.expand(frozenset(self.dd.ddmin(self.groups)))

    def isolate(self) -> tuple[frozenset[str], frozenset[str]]:
        """The units of a passing and a failing configuration with a 1-minimal difference.

        dd sees groups, but a configuration stands for its interior: a passing set that holds
        a group whose needs are missing is really smaller than dd thinks. So the pair is
        settled afterwards: each group of the difference is tried on top of the passing set,
        and moves the passing set up (PASS) or the failing set down (FAIL), until none does.
        """
        found = self.dd.isolate(self.groups)
        pair = self.expand(frozenset(found.passing)), self.expand(frozenset(found.failing))
        moved: tuple[frozenset[str], frozenset[str]] | None = pair
        while moved is not None:
            pair, moved = moved, self._move(*moved)
        return pair

    def _move(
        self, passing: frozenset[str], failing: frozenset[str]
    ) -> tuple[frozenset[str], frozenset[str]] | None:
        """The pair after the first group of the difference that moves it; None if none does."""
        kept = [g for g in self.groups if passing & set(g.members)]
        for group in [g for g in self.groups if (failing - passing) & set(g.members)]:
            config = self.expand(frozenset([*kept, group]))
            if not passing < config < failing:
                continue  # the group's needs are missing, or it brings the whole difference
            outcome = self.dd.evaluate([*kept, group])
            if outcome is Outcome.PASS:
                return config, failing
            if outcome is Outcome.FAIL:
                return passing, config
        return None

    def expand(self, config: frozenset[Group]) -> frozenset[str]:
        """The interior of base + the units; at the commit level, only the prefix of history
        the configuration holds (see Hierarchy.prefix)."""
        if self.level == "commit":
            units = self.hierarchy.prefix(self.groups, config)
        else:
            units = grouping.members(config)
        return self.hierarchy.interior(self.base | units)

    def report(self, step: Step[Group]) -> None:
        if self.listener is not None:
            config, failing = self.expand(step.config), self.expand(step.failing)
            self.listener(
                self.level, Step(config, step.outcome, step.source, step.granularity, failing)
            )


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
        raise errors.EmptyDiff(request.good, request.bad, diff.skipped)
    return hunks.split_lines(diff) if request.granularity == "line" else diff


def journal_path(repo: git.Repo) -> Path:
    """Where the journal of every run in this repository lives (shared by its work trees)."""
    return git.common_dir(repo) / "ddchange" / "journal.sqlite"


@dataclass(frozen=True)
class Logged:
    """A run as `ddchange log` shows it: what was asked, and every test so far."""

    description: dict[str, object]
    records: list[TestRecord]


def history(repo_path: Path) -> list[Logged]:
    """Every run the journal of this repository knows, most recent first."""
    repo = git.open_repo(repo_path)
    with Journal(journal_path(repo)) as journal:
        return [
            Logged(json.loads(info.request), journal.records(info.key)) for info in journal.runs()
        ]


def replay(request: Request, records: list[TestRecord], listener: Listener | None = None) -> Result:
    """Put `records` in place of the run's journal (like `git bisect replay`), then resume."""
    repo = git.open_repo(request.repo)
    revisions = resolve(repo, request.good, request.bad)
    key = run_key(request, revisions)
    with Journal(journal_path(repo)) as journal:
        journal.begin(key, json.dumps(describe(request, revisions)))
        journal.forget(key)
        for record in records:
            journal.append(key, record)
    return run(request, listener)


def reset(repo_path: Path) -> list[Path]:
    """Remove all of ddchange's state in the repository: scratch work trees and the journal.

    Refuses (errors.RunInProgress) while a live ddchange process owns a scratch work tree.
    Returns the work trees it removed.
    """
    repo = git.open_repo(repo_path)
    removed = worktree.remove_stale(repo)
    live = worktree.owners(repo)
    if live:
        raise errors.RunInProgress(tuple(sorted(live.values())))
    shutil.rmtree(journal_path(repo).parent, ignore_errors=True)
    return removed


def describe(request: Request, revisions: Revisions) -> dict[str, object]:
    """The run as the journal and `ddchange log` record it (enough to replay it)."""
    return {
        "good": revisions.good,
        "bad": revisions.bad,
        "good_rev": request.good,
        "bad_rev": request.bad,
        "test": list(request.test),
        "build": request.build,
        "timeout": request.timeout,
        "fail_pattern": request.fail_pattern,
        "granularity": request.granularity,
        "strategy": request.strategy,
        "isolate": request.isolate,
    }


def run_key(request: Request, revisions: Revisions) -> str:
    """What identifies a run for resuming: everything that can change a test's outcome.

    The revision names are left out (their SHAs are in), and so are the strategy, isolation,
    monotony, retries and confirmation, which change which tests are asked, not what a test
    answers: runs that differ only in those share their tests.
    """
    facts = {**describe(request, revisions), "format": FORMAT}
    del facts["good_rev"], facts["bad_rev"], facts["strategy"], facts["isolate"]
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]


class _Search:
    """The state of one search: the worktree, the cache, the journal, the statistics."""

    def __init__(
        self,
        request: Request,
        revisions: Revisions,
        diff: Diff,
        scratch: Scratch,
        journal: Journal,
        listener: Listener,
    ) -> None:
        self.request = request
        self.revisions = revisions
        self.diff = diff
        self.scratch = scratch
        self.journal = journal
        self.key = run_key(request, revisions)
        # Like `git bisect run`, the test runs where the user stands: the same subdirectory
        # of the scratch tree (its top if GOOD has no such directory).
        self.where = scratch.path / git.prefix(request.repo)
        self.listener = listener
        self.cache = OutcomeCache[str](monotony=request.monotony)
        self.stats = Stats()
        self.log: list[TestRecord] = []
        self.disagreements: list[Disagreement] = []
        self.everything = frozenset(h.id for h in diff.hunks)
        self.best = self.everything  # the smallest configuration known to fail
        self.phase = "good"
        self.resumed = 0
        self.tests_run = 0
        self.command_time = 0.0
        self.confirmation: Confirmation | None = None
        self.history = git.commits(scratch.repo, revisions.good, revisions.bad)
        # Every unit's commits: the commit level orders by them, and "auto" picks by them.
        self.attribution = (
            provenance.attribute(scratch.repo, revisions.good, revisions.bad, diff)
            if request.strategy != "diff"
            else {}
        )
        self.hierarchy = Hierarchy(
            diff,
            dependencies=request.dependencies,
            commits=provenance.positions(self.attribution, self.history),
        )
        self.passing = frozenset[str]()  # --isolate: the largest passing subset of best
        self.route = Route(request.strategy)
        self.resolutions = 0  # retries after a build revealed a missing dependency
        self.resolved = 0  # of which gave PASS or FAIL
        self._output = ""  # of the last build or test that ran
        pattern = re.compile(request.fail_pattern) if request.fail_pattern else None
        self.expect = runner.Expectation(exit_code=None, pattern=pattern)
        self._last = ""

    # -- phases -----------------------------------------------------------------------------

    def resume(self) -> None:
        """Take over every outcome that earlier attempts of this run recorded."""
        self.journal.begin(self.key, json.dumps(describe(self.request, self.revisions)))
        self.log = self.journal.records(self.key)
        self.resumed = len(self.log)
        for config, records in _by_config(self.log).items():
            self.cache.store(config, self._agreed(records))
        for record in self.log:
            if record.phase == "bad" and record.outcome is Outcome.FAIL:
                self._adopt_failure(record.exit_code)

    def preflight(self) -> None:
        """GOOD must pass and BAD must fail; BAD's exit code becomes *the* failure."""
        self._self_check()
        for phase, config, wanted in (
            ("good", frozenset[str](), Outcome.PASS),
            ("bad", self.everything, Outcome.FAIL),
        ):
            self.phase = phase
            known = self.cache.lookup(config)
            if known is not None and not known.implied and known.outcome is wanted:
                continue  # an earlier attempt of this run checked it already
            verdict = self._run(config)
            if verdict.outcome is not wanted:
                raise self._preflight_failed(phase, verdict)
            self.cache.store(config, wanted)
            if phase == "bad" and verdict.test is not None:
                self._adopt_failure(verdict.test.exit_code)

    def search(self) -> str:
        """Search by the requested strategy, then confirm; the outcome of the whole run."""
        try:
            self.best, self.passing = self._strategy()
            if self.request.confirm:
                self.confirmation = self._confirm(self.best, self.passing)
        except KeyboardInterrupt:
            outcome = "interrupted"
        else:
            outcome = "flaky" if self.disagreements else "found"
        self._show(self.best)
        return outcome

    def result(self, outcome: str, patch: bytes, wall_time: float) -> Result:
        passing = self._passing()
        culprits = [h for h in self.diff.hunks if h.id in self.best - passing]
        context = [h for h in self.diff.hunks if h.id in passing]
        return Result(
            self.request,
            self.revisions,
            self.diff,
            culprits,
            patch,
            self.stats,
            self.log,
            wall_time,
            self.command_time,
            self.tests_run,
            outcome,
            self.resumed,
            self.confirmation,
            self.disagreements,
            (self.resolutions, self.resolved),
            {h.id: self.hierarchy.scope(h.id) for h in culprits + context},
            context,
            self.route,
            self._attribute(culprits + context),
        )

    def _attribute(self, units: list[Hunk]) -> dict[str, tuple[git.CommitInfo, ...]]:
        """The commits that brought each of `units`, with author, date and subject."""
        repo, good, bad = self.scratch.repo, self.revisions.good, self.revisions.bad
        known = self.attribution or provenance.attribute(repo, good, bad, self.diff, units)
        shas = {unit.id: known.get(unit.id, ()) for unit in units}
        infos = git.commit_infos(repo, (sha for found in shas.values() for sha in found))
        return {unit: tuple(infos[sha] for sha in found) for unit, found in shas.items()}

    # -- the search ---------------------------------------------------------------------------

    def _strategy(self) -> tuple[frozenset[str], frozenset[str]]:
        """(failing, passing) by the requested strategy; passing is empty without --isolate."""
        if self.request.strategy == "auto":
            return self._auto()
        return self._descend(self.everything, history=self.request.strategy == "history")

    def _auto(self) -> tuple[frozenset[str], frozenset[str]]:
        """Bisect the first-parent history like `git bisect`, then search inside the changes
        of the culprit commit(s) if they fail on GOOD alone; if not (two commits that only
        fail together, a merge of two passing branches), search the whole range in history
        order."""
        chain = git.first_parents(self.scratch.repo, self.revisions.good, self.revisions.bad)
        asked: list[str] = []  # commits tested (or answered by an earlier attempt)

        def test(position: int) -> Outcome:
            asked.append(chain[position - 1])
            return self._test_commit(chain[position - 1])

        self.phase = "bisect"
        lo, hi = bisect(len(chain), test)
        last_good = self.revisions.good if lo == 0 else chain[lo - 1]
        suspects = tuple(git.commits(self.scratch.repo, last_good, chain[hi - 1]))
        units = self.hierarchy.interior(provenance.commits_of(self.attribution, suspects))
        alone = self._alone(units)
        self.route = Route(
            "auto",
            len(asked),
            last_good,
            chain[hi - 1],
            suspects,
            alone,
            "commit" if alone is Outcome.FAIL else "range",
        )
        if alone is Outcome.FAIL:
            return self._descend(units, history=False)
        return self._descend(self.everything, history=True)

    def _alone(self, units: frozenset[str]) -> Outcome:
        """GOOD + `units` (the culprit commits' changes), known or tested."""
        if not units:
            return Outcome.PASS
        self.phase = "commit"
        known = self.cache.lookup(units)
        return known.outcome if known is not None else self._resolving_test(units)

    def _test_commit(self, sha: str) -> Outcome:
        """The tree of commit `sha`, exactly as git has it, built and tested in the scratch
        tree; logged as the configuration {"commit:<sha>"} so that a resumed run knows it."""
        config = frozenset({f"commit:{sha}"})
        known = self.cache.lookup(config)
        if known is not None:
            return known.outcome
        repo = self.scratch.repo
        states = git.tree_states(repo, sha, git.changed_paths(repo, self.revisions.good, sha))
        outcome = self._test(config, states)
        self.cache.store(config, outcome)
        return outcome

    def _descend(
        self, start: frozenset[str], *, history: bool
    ) -> tuple[frozenset[str], frozenset[str]]:
        """ddmin or dd down the hierarchy from `start` (see `minimize`), with the failure
        resolution loop; (failing, passing)."""

        def report(level: str, step: Step[str]) -> None:
            self.phase = level
            self._report(step)

        found = minimize(
            self.diff,
            self._resolving_test,
            levels=grouping.levels_for(self.request.granularity, self.diff, history=history),
            isolate=self.request.isolate,
            start=start,
            hierarchy=self.hierarchy,
            cache=self.cache,
            stats=self.stats,
            listener=report,
            on_level=self._enter,
        )
        return found.answer, found.passing

    def _enter(self, level: str) -> None:
        self.phase = level

    def _resolving_test(self, config: frozenset[str]) -> Outcome:
        """`_test`, and when a build fails for want of a name another change defines, the
        same configuration again with that change (Zeller's failure resolution loop)."""
        outcome = self._test(config)
        while outcome is Outcome.UNRESOLVED and self.hierarchy.learn(config, self._output):
            self.resolutions += 1
            config = self.hierarchy.interior(config)
            outcome = self._test(config)
            self.resolved += outcome is not Outcome.UNRESOLVED
        return outcome

    def _confirm(self, answer: frozenset[str], passing: frozenset[str]) -> Confirmation:
        """Run GOOD + answer and BAD − answer (--isolate: GOOD + the passing set) again, for
        real, and check they agree."""
        self.phase = "confirm"
        rest = passing if self.request.isolate else self.everything - answer
        return Confirmation(self._test(answer), self._test(rest))

    def _test(
        self, config: frozenset[str], states: Mapping[str, FileState | None] | None = None
    ) -> Outcome:
        """The outcome of `config` from 1 + retries real runs; UNRESOLVED if they disagree.

        Earlier outcomes of the same configuration (from the search, or a resumed attempt)
        count as runs too: confirmation compares against them.
        """
        earlier = [r for r in self.log if r.config == config]
        runs = [self._run(config, states).outcome]
        while runs[-1] is not Outcome.UNRESOLVED and len(runs) <= self.request.retries:
            runs.append(self._run(config, states).outcome)
        return self._agreed(earlier + self.log[-len(runs) :])

    def _agreed(self, records: list[TestRecord]) -> Outcome:
        """The outcome all `records` (of one configuration) agree on; else note the evidence."""
        outcomes = tuple(dict.fromkeys(r.outcome for r in records))
        if len(outcomes) == 1:
            return outcomes[0]
        evidence = Disagreement(
            records[-1].phase, records[-1].size, tuple(r.outcome for r in records)
        )
        self.disagreements.append(evidence)
        return Outcome.UNRESOLVED

    def _run(
        self, config: frozenset[str], states: Mapping[str, FileState | None] | None = None
    ) -> runner.Verdict:
        """Materialize `config` (or write `states`) in the worktree, build and test it, and
        record the run."""
        try:
            self.scratch.apply(hunks.materialize(self.diff, config) if states is None else states)
        except hunks.Conflict as conflict:
            verdict = runner.Verdict(Outcome.UNRESOLVED, f"does not apply: {conflict}", None, None)
        else:
            verdict = runner.run_candidate(
                self.where if self.where.is_dir() else self.scratch.path,
                self.request.test,
                build=self.request.build,
                timeout=self.request.timeout,
                expect=self.expect,
            )
        self._record(config, verdict)
        return verdict

    def _record(self, config: frozenset[str], verdict: runner.Verdict) -> None:
        executions = [e for e in (verdict.build, verdict.test) if e is not None]
        duration = sum(e.duration for e in executions)
        last = executions[-1] if executions else None
        record = TestRecord(
            len(self.log) + 1,
            self.phase,
            config,
            verdict.outcome,
            verdict.reason,
            None if last is None else last.exit_code,
            duration,
            "" if last is None else last.tail,
        )
        self._output = last.output if last is not None else ""
        self.journal.append(self.key, record)
        self.log.append(record)
        self.tests_run += 1
        self.command_time += duration
        self._last = verdict.reason
        if self.phase in ("good", "bad", "confirm", "bisect", "commit"):
            step = Step(config, verdict.outcome, Source.TEST, 1, self.best)
            self._report(step)

    # -- helpers ------------------------------------------------------------------------------

    def _self_check(self) -> None:
        """Every change applied to GOOD must give BAD's tree, as git itself has it."""
        paths = hunks.touched_paths(self.diff)
        bad_tree = git.tree_states(self.scratch.repo, self.revisions.bad, paths)
        mismatched = hunks.differences(self.diff, self.everything, bad_tree)
        if mismatched:
            raise errors.MaterializationMismatch(tuple(mismatched))

    def _adopt_failure(self, exit_code: int | None) -> None:
        self.expect = runner.Expectation(exit_code, self.expect.pattern)

    def _show(self, config: frozenset[str]) -> None:
        """Leave `config` in the worktree, so that the patch is taken from it."""
        self.scratch.apply(hunks.materialize(self.diff, config))

    def _passing(self) -> frozenset[str]:
        """The passing set of the current pair (--isolate); empty once the failing set it
        belonged to has been replaced by a smaller one that does not hold it."""
        return self.passing if self.passing <= self.best else frozenset()

    def _report(self, step: Step[str]) -> None:
        config = step.config
        if config <= self.everything:  # not a commit of the bisection
            if step.outcome is Outcome.FAIL and len(config) < len(self.best):
                self.best = config
            grows = self.request.isolate and len(config) > len(self.passing)
            if step.outcome is Outcome.PASS and grows and config <= self.best:
                self.passing = config
        reason = self._last if step.source is Source.TEST else ""
        passing = self._passing()
        commit = next(iter(config)).removeprefix("commit:") if self.phase == "bisect" else ""
        self.listener(
            Progress(
                self.phase,
                step.outcome,
                step.source,
                reason,
                step.size,
                len(self.best - passing),
                step.granularity,
                self.tests_run,
                commit,
            )
        )

    def _preflight_failed(self, phase: str, verdict: runner.Verdict) -> errors.PreflightFailed:
        failed = verdict.test or verdict.build
        sha = self.revisions.good if phase == "good" else self.revisions.bad
        return errors.PreflightFailed(
            which=phase,
            verdict=verdict.outcome.value,
            reason=verdict.reason,
            tail=failed.tail if failed is not None else "",
            rerun=rerun_command(self.request, sha),
            unsearched=self.diff.skipped if phase == "bad" else (),
        )


def _by_config(records: list[TestRecord]) -> dict[frozenset[str], list[TestRecord]]:
    grouped: dict[frozenset[str], list[TestRecord]] = defaultdict(list)
    for record in records:
        grouped[record.config].append(record)
    return grouped


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


def request_from(description: dict[str, object], repo: Path) -> Request:
    """The Request that a `describe` dictionary (a log file's run line) stands for.

    Raises ValueError when a field has the wrong type: the file was edited by hand.
    """

    def text(name: str, optional: bool = False) -> str | None:
        value = description.get(name)
        if isinstance(value, str) or (optional and value is None):
            return value
        raise ValueError(f"{name!r} must be a string")

    test = description.get("test")
    timeout = description.get("timeout")
    if not isinstance(test, list) or not test or not all(isinstance(a, str) for a in test):
        raise ValueError("'test' must be a non-empty list of strings")
    if timeout is not None and not isinstance(timeout, int | float):
        raise ValueError("'timeout' must be a number")
    if description.get("strategy", "diff") not in STRATEGIES:
        raise ValueError(f"'strategy' must be one of {', '.join(STRATEGIES)}")
    return Request(
        repo=repo,
        good=text("good") or "",
        bad=text("bad") or "",
        test=tuple(test),
        build=text("build", optional=True),
        timeout=None if timeout is None else float(timeout),
        fail_pattern=text("fail_pattern", optional=True),
        granularity=text("granularity") or "hunk",
        strategy=text("strategy", optional=True) or "diff",
        isolate=description.get("isolate") is True,
    )
