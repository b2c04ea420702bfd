"""One search, from two revisions to a 1-minimal failing set of changes.

Owns the order of events: clean up after runs that were killed, resolve the revisions, read the
diff, open the scratch worktree and the journal, replay what earlier attempts of the same run
already tested, check that GOOD passes and BAD fails (pre-flight), run ddmin level by level down
the hierarchy, confirm the answer, and keep the statistics and the test log. It reaches git, the
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ddchange import errors, git, grouping, hunks, runner, worktree
from ddchange.cache import Journal, OutcomeCache, Projected, TestRecord
from ddchange.dd import DD, Outcome, Source, Stats, Step
from ddchange.grouping import Group, Hierarchy
from ddchange.hunks import Diff, Hunk
from ddchange.worktree import Scratch, scratch_worktree

# Bumped whenever the meaning of change-unit ids changes, so that old journals are not reused.
FORMAT = 1


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
    order: str = "diff"  # or "history": search prefixes of GOOD..BAD's commits first
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
    remaining: int  # change units in the smallest configuration known to fail
    granularity: int
    tests_run: int


@dataclass(frozen=True)
class Disagreement:
    """Evidence of a flaky test: one configuration, several runs, different outcomes."""

    phase: str
    size: int
    outcomes: tuple[Outcome, ...]


@dataclass(frozen=True)
class Confirmation:
    """The answer checked again at the end, with real runs."""

    answer: Outcome  # GOOD + the answer: FAIL confirms it
    rest: Outcome  # BAD without the answer: PASS means the answer is the whole cause


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


Listener = Callable[[Progress], None]


@dataclass(frozen=True)
class Minimized:
    """What `minimize` found and what it cost."""

    answer: frozenset[str]  # unit ids, closed under the dependencies
    tests: int  # calls to the test function
    cache_hits: int
    implied: int
    learned: int  # times a failed build revealed a missing dependency (see Hierarchy.learn)


def minimize(
    diff: Diff,
    test: Callable[[frozenset[str]], Outcome],
    *,
    levels: Sequence[str] = ("file", "function", "hunk", "line"),
    dependencies: bool = True,
    monotony: bool = True,
    hierarchy: Hierarchy | None = None,
    cache: OutcomeCache[str] | None = None,
    stats: Stats | None = None,
    listener: Callable[[str, Step[str]], None] | None = None,
    on_level: Callable[[str], None] | None = None,
) -> Minimized:
    """ddmin level by level down `levels`, testing only dependency-closed configurations.

    `test` gets configurations as frozensets of the ids of `diff.hunks` (for the "line" level,
    pass `hunks.split_lines(diff)`, whose units are line changes); only configurations closed
    under the dependencies are asked (see `Hierarchy.interior`). Precondition, not tested here:
    the empty configuration passes and all of `diff.hunks` fail. The answer is closed, fails,
    and is 1-minimal at the last level: without any one of its units, its interior does not
    fail.
    """
    hierarchy = hierarchy or Hierarchy(diff, dependencies=dependencies)
    cache = cache if cache is not None else OutcomeCache[str](monotony=monotony)
    stats = stats if stats is not None else Stats()
    calls = 0

    def counted(config: frozenset[str]) -> Outcome:
        nonlocal calls
        calls += 1
        return test(config)

    kept = list(diff.hunks)
    for level in levels:
        if on_level is not None:
            on_level(level)  # before its first test, so that the test is logged under it
        groups = hierarchy.groups(level, kept)
        chosen = _search_level(level, groups, hierarchy, counted, cache, stats, listener)
        kept = [unit for unit in diff.hunks if unit.id in chosen]
    answer = frozenset(unit.id for unit in kept)
    return Minimized(answer, calls, stats.cache_hits, stats.implied, hierarchy.learned)


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


def _search_level(
    level: str,
    groups: list[Group],
    hierarchy: Hierarchy,
    test: Callable[[frozenset[str]], Outcome],
    cache: OutcomeCache[str],
    stats: Stats,
    listener: Callable[[str, Step[str]], None] | None,
) -> frozenset[str]:
    """ddmin over one level's `groups`; the units of the answer."""

    def expand(config: frozenset[Group]) -> frozenset[str]:
        # The interior of the units; at the commit level, only the prefix of history the
        # configuration holds (see Hierarchy.prefix).
        units = hierarchy.prefix(groups, config) if level == "commit" else None
        return hierarchy.interior(grouping.members(config) if units is None else units)

    def report(step: Step[Group]) -> None:
        if listener is not None:
            config, failing = expand(step.config), expand(step.failing)
            listener(level, Step(config, step.outcome, step.source, step.granularity, failing))

    dd = DD(
        lambda config: test(expand(config)),
        cache=Projected(cache, expand),
        stats=stats,
        listener=report,
    )
    return expand(frozenset(dd.ddmin(groups)))


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


def attribute(repo: git.Repo, revisions: Revisions, diff: Diff) -> dict[str, int]:
    """Each unit's commit, as its position in GOOD..BAD (0 = oldest), from git's own blame.

    Added lines belong to the newest commit that wrote one of them; removed lines to the
    commit after the last one that still had them (`git blame --reverse`); whole-file units
    to the newest commit that touched the file.
    """
    good, bad = revisions.good, revisions.bad
    order = {sha: index for index, sha in enumerate(git.commits(repo, good, bad))}
    blamed: dict[tuple[str, bool], list[str]] = {}

    def blame(path: str, removed: bool) -> list[str]:
        if (path, removed) not in blamed:
            try:
                lines = git.blame(repo, bad, path, reverse_from=good if removed else None)
            except errors.GitFailed:
                lines = []
            blamed[path, removed] = lines
        return blamed[path, removed]

    found = {}
    for unit in diff.hunks:
        file = diff.files[unit.file]
        removed, added = hunks.changed_lines(unit)
        if added:
            shas = blame(file.path, False)
            positions = [order.get(shas[n - 1], -1) for n in added if n <= len(shas)]
        elif removed:
            shas = blame(file.origin, True)
            positions = [order.get(shas[n - 1], -1) + 1 for n in removed if n <= len(shas)]
        else:
            positions = [order.get(git.last_commit(repo, good, bad, file.path) or "", 0)]
        found[unit.id] = min(max(positions, default=0), max(len(order) - 1, 0))
    return found


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
        "order": request.order,
    }


def run_key(request: Request, revisions: Revisions) -> str:
    """What identifies a run for resuming: everything that can change a test's outcome.

    The revision names are left out (their SHAs are in), and so are the order, monotony,
    retries and confirmation, which change which tests are asked, not what a test answers.
    """
    facts = {**describe(request, revisions), "format": FORMAT}
    del facts["good_rev"], facts["bad_rev"], facts["order"]
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
        history = attribute(scratch.repo, revisions, diff) if request.order == "history" else None
        self.hierarchy = Hierarchy(diff, dependencies=request.dependencies, commits=history)
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
        """Minimize, then confirm; the outcome of the whole run."""
        try:
            self.best = self._minimize()
            if self.request.confirm:
                self.confirmation = self._confirm(self.best)
        except KeyboardInterrupt:
            outcome = "interrupted"
        else:
            outcome = "flaky" if self.disagreements else "found"
        self._show(self.best)
        return outcome

    def result(self, outcome: str, patch: bytes, wall_time: float) -> Result:
        culprits = [h for h in self.diff.hunks if h.id in self.best]
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
            {h.id: self.hierarchy.scope(h.id) for h in culprits},
        )

    # -- the search ---------------------------------------------------------------------------

    def _minimize(self) -> frozenset[str]:
        """ddmin down the hierarchy (see `minimize`), with the failure resolution loop."""

        def report(level: str, step: Step[str]) -> None:
            self.phase = level
            self._report(step)

        found = minimize(
            self.diff,
            self._resolving_test,
            levels=grouping.levels_for(
                self.request.granularity, self.diff, history=self.request.order == "history"
            ),
            hierarchy=self.hierarchy,
            cache=self.cache,
            stats=self.stats,
            listener=report,
            on_level=self._enter,
        )
        return found.answer

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

    def _confirm(self, answer: frozenset[str]) -> Confirmation:
        """Run GOOD + answer and BAD − answer again, for real, and check they agree."""
        self.phase = "confirm"
        outcomes = [self._test(config) for config in (answer, self.everything - answer)]
        return Confirmation(*outcomes)

    def _test(self, config: frozenset[str]) -> Outcome:
        """The outcome of `config` from 1 + retries real runs; UNRESOLVED if they disagree.

        Earlier outcomes of the same configuration (from the search, or a resumed attempt)
        count as runs too: confirmation compares against them.
        """
        earlier = [r for r in self.log if r.config == config]
        runs = [self._run(config).outcome]
        while runs[-1] is not Outcome.UNRESOLVED and len(runs) <= self.request.retries:
            runs.append(self._run(config).outcome)
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

    def _run(self, config: frozenset[str]) -> runner.Verdict:
        """Materialize `config` in the worktree, build and test it, and record the run."""
        try:
            self.scratch.apply(hunks.materialize(self.diff, config))
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
        if self.phase in ("good", "bad", "confirm"):
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

    def _report(self, step: Step[str]) -> None:
        if step.outcome is Outcome.FAIL and len(step.config) < len(self.best):
            self.best = step.config
        reason = self._last if step.source is Source.TEST else ""
        self.listener(
            Progress(
                self.phase,
                step.outcome,
                step.source,
                reason,
                step.size,
                len(self.best),
                step.granularity,
                self.tests_run,
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
    return Request(
        repo=repo,
        good=text("good") or "",
        bad=text("bad") or "",
        test=tuple(test),
        build=text("build", optional=True),
        timeout=None if timeout is None else float(timeout),
        fail_pattern=text("fail_pattern", optional=True),
        granularity=text("granularity") or "hunk",
    )
