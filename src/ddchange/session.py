"""One run of ddchange, from two revisions to an answer: the order of its phases, and nothing
else.

`run` is a pipeline. It cleans up after runs that were killed, resolves the revisions and
reads the diff (a child process analyses its names meanwhile, for the search's
dependencies), then opens the scratch tree, the journal and the slots that run tests ahead,
each a context manager of one `with`. It takes over what earlier attempts of the same run
tested, and builds the trial layer, the search and the listener's view (`events.py`) once,
in that order, each from what the one before it made; together they are a `_Run`, which no
phase changes. The phases are functions of the `_Run` that return values:
- `_preflight`: GOOD passes and BAD fails, or the run ends (PreflightFailed), or its runs
  disagree (`_flaky`);
- `_searched`: the strategy asked for (`_bisected` first for "auto"), the search down the
  hierarchy (`search/`), the cut by origin, and the checks at the end (`_confirm`). It
  returns an `_Ended`, whose ending says how: a stop (Ctrl-C, a stop signal) is a value too,
  carrying the best answer so far;
- `_result`: the `Result`, its claims read back from the trial layer's records.

The search decides what to run and is told nothing but outcomes; the trial layer runs it and
records it (`trial/trials.py`), under the phase the search names; nothing is recomputed
beside the records.

Counting: `Result.tests_run` counts the real runs of the build and test made by this process,
the pre-flight, retry and confirmation runs included, because each one costs the user the same.
Outcomes replayed from the journal, cache hits and implied outcomes cost no run and are counted
apart.

Flakiness: a configuration whose runs disagree (with `retries`, in confirmation, or across
resumed attempts) is UNRESOLVED for the search, and the result is reported as flaky with the
evidence, never as a confident answer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import pickle
import posixpath
import re
import shlex
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ddchange import errors, git
from ddchange.diff import content, hunks, limits, linechanges, provenance, read
from ddchange.diff.limits import Limited
from ddchange.events import Events, Listener
from ddchange.hierarchy import grouping, names
from ddchange.hierarchy.grouping import Hierarchy
from ddchange.model import (
    Confirmation,
    Ending,
    Level,
    Outcome,
    Phase,
    Request,
    Result,
    Revisions,
    Route,
    Stage,
    Strategy,
    TestRecord,
)
from ddchange.runs import describe, earlier, journal_path, run_key
from ddchange.search import confidence
from ddchange.search.cache import OutcomeCache
from ddchange.search.dd import Probed
from ddchange.search.hierarchical import Found, Search
from ddchange.search.history import bisect_history
from ddchange.trial import ahead, cluster, results, runner, worktree
from ddchange.trial.journal import REPLAYED, Journal
from ddchange.trial.trials import Setup, Trials
from ddchange.trial.worktree import Scratch, scratch_worktree

__all__ = ["PREFLIGHT_RUNS", "Listener", "replay", "run"]

# Runs of each side in the pre-flight. One is enough: GOOD's PASS is a fact under the model
# of flakiness the checks use (a flaky test fails at random, it never passes at random), and a
# FAIL of BAD at random leaves the search an answer that in truth passes, which the reruns of
# the answer at the end catch (search/confidence.py). A side that is wrong runs once more
# before the run ends on it, and runs of one side that disagree stop the run as flaky.
PREFLIGHT_RUNS = 1


def run(request: Request, listener: Listener | None = None, *, replayed: bool = False) -> Result:
    """Resolve, pre-flight and search; raise an `errors.DDChangeError` when it cannot. The
    records it takes over came from a replayed log when `replayed`, else from earlier runs.

    The phases pass values along: the pre-flight says whether the search may start; the
    search ends with a `Found`, or a `Stopped` that carries the best answer so far (Ctrl-C, a
    stop signal: the Result is then "interrupted"; during the pre-flight the stop propagates);
    the check at the end gives a `Confirmation`; the Result is read from the records.
    """
    started = time.monotonic()
    repo = git.open_repo(request.repo)
    worktree.remove_stale(repo)
    revisions = resolve(repo, request.good, request.bad)
    limited = read_diff(repo, request, revisions)
    diff = limited.diff
    reruns = confidence.reruns(request.confidence) if request.confirm else 0
    events = Events(
        listener or (lambda _: None), units=len(diff.hunks), preflight=PREFLIGHT_RUNS, ends=reruns
    )
    with (
        analysis_aside(diff, wanted=request.dependencies) as analysis,
        Journal(journal_path(repo)) as journal,
        scratch_worktree(repo, revisions.good) as scratch,
        contextlib.ExitStack() as parallel,
    ):
        trials = trials_for(
            request,
            revisions,
            limited,
            scratch,
            journal,
            on_record=events.recorded,
            on_start=events.started,
        )
        described = describe(request, revisions, git.prefix(request.repo))
        cache = OutcomeCache[str](monotony=request.monotony)
        for config, outcome in trials.resume(json.dumps(described)).items():
            cache.store(config, outcome)
        events.taken_over(trials.log)
        # Every unit's commits: the commit level orders by them, and "auto" picks by them.
        attribution = (
            provenance.attribute(scratch.repo, revisions.good, revisions.bad, diff)
            if request.strategy != Strategy.DIFF
            else {}
        )
        hierarchy = Hierarchy(
            diff,
            dependencies=request.dependencies,
            commits=provenance.positions(
                attribution, git.commits(scratch.repo, revisions.good, revisions.bad)
            ),
            analysis=analysis,
            whole_blocks=request.granularity == Level.BLOCK,
        )
        search = Search(
            diff=diff,
            test=trials.run,
            hierarchy=hierarchy,
            cache=cache,
            missing=trials.missing,
            listener=events.step,
            width=slots(request, repo, scratch, trials, parallel),
            offer=trials.offer,
        )
        fixed = _Run(
            request=request,
            revisions=revisions,
            limited=limited,
            scratch=scratch,
            trials=trials,
            cache=cache,
            search=search,
            attribution=attribution,
            reruns=reruns,
        )
        ended = _searched(fixed) if _preflight(fixed) else _flaky(fixed)
        trials.stop_ahead()  # the scratch tree is the patch's alone now
        scratch.apply(content.materialize(diff, ended.answer))
        paths = [*content.touched_paths(diff), *limited.kept]  # the answer needs what is kept
        patch = scratch.patch(revisions.good, sorted(set(paths)))
    return _result(fixed, ended, patch, time.monotonic() - started, described, replayed=replayed)


@contextlib.contextmanager
def analysis_aside(
    diff: hunks.Diff, *, wanted: bool
) -> Iterator[Callable[[], names.Analysis] | None]:
    """The analysis of names (`names.Analysis`, when `wanted`), made meanwhile by a child
    process: a fork has the diff already and a core of its own, so the analysis goes on while
    the pre-flight's tests run, and the search, the first to need it, waits less or not at
    all. The callable yielded hands it over, waiting for the child if need be; where the child
    cannot deliver (no fork here, it failed, it was killed), the analysis is made here
    instead, the same. No child outlives the block, and none is left a zombie in it (`_Reaped`)."""
    if not wanted:
        yield None
        return
    reading, writing = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to spare
        os.close(reading)
        os.close(writing)
        yield lambda: names.Analysis(diff)
        return
    if pid == 0:  # the child: the analysis, handed over, then out with none of our clean-ups
        try:
            os.close(reading)
            with open(writing, "wb") as out:
                pickle.dump(names.Analysis(diff), out, pickle.HIGHEST_PROTOCOL)
        finally:
            os._exit(0)
    os.close(writing)
    child = _Reaped(pid)

    def hand_over() -> names.Analysis:
        with open(reading, "rb", closefd=False) as source:
            data = source.read()
        try:
            made: names.Analysis = pickle.loads(data)
        except (pickle.UnpicklingError, EOFError):  # nothing or half of it came
            return names.Analysis(diff)
        return made

    try:
        yield hand_over
    finally:
        os.close(reading)  # a child still writing stops there
        child.stop()  # a child still at work (the pre-flight failed)


class _Reaped:
    """A child process of ours, reaped by a thread the moment it ends, so that it does not
    stay a zombie (`[ddchange] <defunct>`) while the run goes on; `stop` kills it if it is
    still at work, and waits for it. Never signalled once reaped: its pid may be reused.

    The thread waits without reaping (WNOWAIT) and reaps under the lock that `stop` holds
    while it signals. Where there is no waitid (macOS), `stop` alone reaps, at the end."""

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self._lock = threading.Lock()
        self._reaped = False
        self._waiter = threading.Thread(target=self._wait, daemon=True)
        self._waiter.start()

    def _wait(self) -> None:
        if hasattr(os, "waitid"):
            with contextlib.suppress(ChildProcessError):
                os.waitid(os.P_PID, self._pid, os.WEXITED | os.WNOWAIT)
            self._reap()

    def _reap(self) -> None:
        with self._lock:
            if not self._reaped:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(self._pid, 0)
                self._reaped = True

    def stop(self) -> None:
        with self._lock:
            if not self._reaped:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
        self._reap()
        self._waiter.join()


def resolve(repo: git.Repo, good: str, bad: str) -> Revisions:
    """Full SHAs of both revisions; GOOD and BAD must differ."""
    revisions = Revisions(git.resolve_commit(repo, good), git.resolve_commit(repo, bad))
    if revisions.good == revisions.bad:
        raise errors.SameRevisions(good, bad, revisions.good)
    return revisions


def read_diff(repo: git.Repo, request: Request, revisions: Revisions) -> Limited:
    """The change units between the revisions to search, less what --keep and --ignore take
    out; there must be at least one."""
    diff = read.read_diff(repo, revisions.good, revisions.bad)
    if request.strategy == Strategy.AUTO:  # the commits between are tested too (`_test_commit`)
        read.check_history(repo, revisions.good, revisions.bad)
    if not diff.hunks:
        raise errors.EmptyDiff(request.good, request.bad, diff.skipped)
    good, bad = revisions.good, revisions.bad
    limited = read.limited(repo, good, bad, diff, request.keep, request.ignore, request.repo)
    if not limited.diff.hunks:
        raise errors.NothingLeft(len(limited.kept), len(limited.ignored))
    if request.granularity in (Level.BLOCK, Level.LINE):  # a block is a run of line changes
        return dataclasses.replace(limited, diff=linechanges.split_lines(limited.diff))
    return limited


def replay(request: Request, records: list[TestRecord], listener: Listener | None = None) -> Result:
    """Put `records` in place of the run's journal (like `git bisect replay`), then resume."""
    put_records(request, records)
    return run(request, listener, replayed=True)


def put_records(request: Request, records: list[TestRecord]) -> None:
    """`records` in place of the journal's records of the run `request` makes."""
    repo = git.open_repo(request.repo)
    revisions = resolve(repo, request.good, request.bad)
    subdirectory = git.prefix(request.repo)
    key = run_key(request, revisions, subdirectory)
    with Journal(journal_path(repo)) as journal:
        # Marked, until reset: every later run of the same command takes these records over
        # and must say that they came from a log, not from a run (`runs.earlier`).
        journal.begin(
            key, json.dumps({**describe(request, revisions, subdirectory), REPLAYED: True})
        )
        journal.forget(key)
        for record in records:
            journal.append(key, record)


def trials_for(
    request: Request,
    revisions: Revisions,
    limited: Limited,
    scratch: Scratch,
    journal: Journal,
    on_record: Callable[[TestRecord], None],
    on_start: Callable[[frozenset[str], Phase, int], None] = lambda _c, _p, _o: None,
) -> Trials:
    """The trial layer of the run `request` asks for: its key in the journal, how and where
    its tests run, the files --keep and --ignore pin, where each run's results are
    (--results); told of each record and of each test as it starts."""
    subdirectory = git.prefix(request.repo)
    pattern = re.compile(request.fail_pattern) if request.fail_pattern else None
    setup = Setup(
        diff=limited.diff,
        scratch=scratch,
        journal=journal,
        key=run_key(request, revisions, subdirectory),
        command=request.test,
        # Like `git bisect run`, the test runs where the user stands: the same subdirectory of
        # the scratch tree (UNRESOLVED where a configuration has no such directory).
        where=scratch.path / subdirectory,
        build=request.build,
        timeout=request.timeout,
        retries=request.retries,
        clean=request.clean,
        pinned={
            **read.tree_states(scratch.repo, revisions.good, limited.ignored),
            **read.tree_states(scratch.repo, revisions.bad, limited.kept),
        },
        results=tuple(results.parse_source(spec) for spec in request.results),
    )
    return Trials(
        setup=setup,
        expect=runner.Expectation(exit_code=None, pattern=pattern),
        on_record=on_record,
        on_start=on_start,
    )


def slots(
    request: Request, repo: git.Repo, scratch: Scratch, trials: Trials, stack: contextlib.ExitStack
) -> int:
    """With -j N or --scheduler, `trials` runs ahead in that many slots, closed with `stack`;
    how many tests may run at once (1 without)."""
    if request.scheduler:
        runs = cluster.remote(
            request.scheduler,
            scratch,
            trials.recipe(),
            lambda: trials.expect,
            request.jobs,
            request.worker_clone or "",
        )
    elif request.jobs > 1:
        runs = ahead.local(repo, scratch, request.jobs, trials.run_ahead)
    else:
        return 1
    return trials.spread(stack.enter_context(runs))


@dataclass(frozen=True, kw_only=True)
class _Run:
    """What every phase of one run works with; made once, after the journal was read."""

    request: Request
    revisions: Revisions
    limited: Limited
    scratch: Scratch
    trials: Trials
    cache: OutcomeCache[str]
    search: Search
    # unit id -> the commits that brought it (for --strategy history and auto; else empty)
    attribution: dict[str, tuple[str, ...]]
    reruns: int  # of the answer, at the end

    @property
    def diff(self) -> hunks.Diff:
        return self.limited.diff

    @functools.cached_property
    def everything(self) -> frozenset[str]:
        return frozenset(h.id for h in self.diff.hunks)


@dataclass(frozen=True, kw_only=True)
class _Ended:
    """How the search phase ended, and what it leaves for the result."""

    ending: Ending
    answer: frozenset[str]  # the found answer; stopped early, the smallest seen to fail
    passing: frozenset[str] = frozenset()  # --isolate: the passing set
    found: Found | None = None  # None: no answer was found (stopped, or a flaky pre-flight)
    route: Route
    confirmation: Confirmation | None = None


# -- the phases, in the order of a run -----------------------------------------------------


def _preflight(run: _Run) -> bool:
    """Whether GOOD passes and BAD fails, each in PREFLIGHT_RUNS runs (earlier attempts'
    included); False if runs of one side disagree (a flaky test: no search). A side that
    is wrong in every run runs again before we say so (PreflightFailed), since that ends
    the run and a flaky test must not pass for it: GOOD that fails as often as the answer's
    failure is rerun (a FAIL may come at random), otherwise once. BAD's exit code becomes
    *the* failure."""
    _self_check(run)
    trials = run.trials
    sides = (
        (Stage.GOOD, frozenset[str](), Outcome.PASS),
        (Stage.BAD, run.everything, Outcome.FAIL),
    )
    trials.offer(c for _, config, _ in sides for c in trials.owed(config, PREFLIGHT_RUNS))
    for phase, config, wanted in sides:
        agreed, runs = trials.repeat(config, PREFLIGHT_RUNS, phase)
        if agreed is not wanted and {r.outcome for r in runs} == {agreed}:
            more = max(run.reruns, 1) if agreed is Outcome.FAIL else 1
            agreed, runs = trials.repeat(config, PREFLIGHT_RUNS + more, phase)
        if len({r.outcome for r in runs}) > 1:
            return False
        if agreed is not wanted:
            raise _preflight_failed(run, phase, runs[-1], len(runs))
        run.cache.store(config, wanted)
        if phase == Stage.BAD:
            trials.adopt_failure(runs[-1].exit_code)
    return True


def _flaky(run: _Run) -> _Ended:
    """The end of a run whose pre-flight runs disagreed: no search, BAD is what was seen."""
    return _Ended(
        ending=Ending.FLAKY, answer=run.everything, route=Route(strategy=run.request.strategy)
    )


def _searched(run: _Run) -> _Ended:
    """Search by the requested strategy, check and confirm; how it ended (a stop included)."""
    search, request = run.search, run.request
    route = Route(strategy=request.strategy)
    found = None
    try:
        start, history = run.everything, request.strategy == Strategy.HISTORY
        if request.strategy == Strategy.AUTO:
            route, start = _bisected(run)
            history = route.searched == "range"
        found = _by_origin(run, _descend(run, start, history=history))
        confirmation = _confirm(run, found) if request.confirm else None
    except KeyboardInterrupt:
        run.trials.stop_ahead()
        return _Ended(
            ending=Ending.INTERRUPTED,
            answer=search.best if found is None else found.answer,
            passing=(search.best_passing if found is None else found.passing)
            if request.isolate
            else frozenset(),
            found=found,
            route=route,
        )
    backed = run.trials.backs(found, isolate=request.isolate)
    return _Ended(
        ending=Ending.FOUND if backed else Ending.FLAKY,
        answer=found.answer,
        passing=found.passing if request.isolate else frozenset(),
        found=found,
        route=route,
        confirmation=confirmation,
    )


def _descend(run: _Run, start: frozenset[str], *, history: bool) -> Found:
    levels = grouping.levels_for(run.request.granularity, run.diff, history=history)
    search = run.search.isolate if run.request.isolate else run.search.minimize
    return search(start, levels)


def _bisected(run: _Run) -> tuple[Route, frozenset[str]]:
    """--strategy auto: bisect the first-parent history like `git bisect`, then GOOD plus the
    changes of the culprit commit(s); the search goes inside them if that fails, else (two
    commits that only fail together, a merge of two passing branches) over the whole range
    in history order, with every outcome seen so far in the cache. The route, and where the
    search starts."""
    repo, good = run.scratch.repo, run.revisions.good
    chain = git.first_parents(repo, good, run.revisions.bad)
    turn = bisect_history(good, chain, lambda sha: _test_commit(run, sha))
    suspects = tuple(git.commits(repo, turn.last_good, turn.first_bad))
    alone = _alone(run, provenance.commits_of(run.attribution, suspects))
    inside = alone.outcome is Outcome.FAIL
    route = Route(
        strategy=Strategy.AUTO,
        bisect_tests=turn.asked,  # commits tested, or answered by an earlier attempt
        last_good=turn.last_good,
        first_bad=turn.first_bad,
        suspects=suspects,
        alone=alone.outcome,
        searched="commit" if inside else "range",
    )
    return route, alone.config if inside else run.everything


def _test_commit(run: _Run, sha: str) -> Outcome:
    """Commit `sha`'s own tree, known or tested (see `Trials.commit`)."""
    config = frozenset({f"commit:{sha}"})
    known = run.cache.exact(config)
    if known is None:
        known = run.trials.commit(run.revisions.good, sha)
        run.cache.store(config, known)
    return known


def _alone(run: _Run, units: frozenset[str]) -> Probed[str]:
    """GOOD + `units` (the culprit commits' changes), known or tested, as the search would
    probe it: `config` is what really ran (its interior, when that failed)."""
    if not units:
        return Probed(Outcome.PASS, units)
    run.search.enter(Level.COMMIT)
    return run.search.probe(units)


def _by_origin(run: _Run, found: Found) -> Found:
    """At block granularity, a block of the answer whose lines came from more than one
    commit is cut by commit and the answer checked again by removal there, so that no
    block of two commits stands in the answer as one change unless each part is needed
    (blame of the answer's lines only: the search itself never needs it)."""
    if run.request.granularity != Level.BLOCK or run.request.isolate:
        return found
    units = [h for h in run.diff.hunks if h.id in found.answer]
    origins = run.attribution or _origins(run, units)
    hierarchy = run.search.hierarchy
    blocks: dict[int, set[tuple[str, ...]]] = {}
    for unit in units:
        blocks.setdefault(hierarchy.block(unit.id), set()).add(origins.get(unit.id, ()))
    if all(len(commits) < 2 for commits in blocks.values()):
        return found
    hierarchy.know_origins({unit.id: origins.get(unit.id, ()) for unit in units})
    return run.search.refine(found.answer, Level.ORIGIN)


def _confirm(run: _Run, found: Found) -> Confirmation:
    """Run GOOD + the answer (--isolate: the failing set) again until it has failed in
    `reruns` runs besides the one that found it, then GOOD once more; a run that disagrees
    ends the check (a flaky test). The claims that rest on a PASS need no rerun (see
    search/confidence.py), but GOOD's last run shows whether what the search's runs left in
    the scratch tree (build output, files the test wrote) makes a configuration fail that
    passed in a fresh tree; it is also one more chance for a flaky test to show."""
    trials = run.trials
    wanted = 1 + run.reruns
    good = frozenset[str]()
    trials.offer([*trials.owed(found.answer, wanted), *trials.owed(good, PREFLIGHT_RUNS + 1)])
    outcome, runs = trials.repeat(found.answer, wanted, Stage.CONFIRM)
    again = None
    if outcome is Outcome.FAIL:
        trials.repeat(good, PREFLIGHT_RUNS + 1, Stage.CONFIRM)
        again = trials.claim(good)
    rest = trials.claim(found.passing if run.request.isolate else run.everything - found.answer)
    reruns = len(runs) - 1
    return Confirmation(
        answer=outcome,
        runs=len(runs),
        reruns=reruns,
        risk=confidence.risk(reruns),
        flake_rate=confidence.FLAKE_RATE,
        good=again,
        rest=None if rest is None else rest.outcome,
    )


def _result(
    run: _Run,
    ended: _Ended,
    patch: bytes,
    wall_time: float,
    described: dict[str, object],
    *,
    replayed: bool,
) -> Result:
    """The Result, its claims read from the trial layer's records (and taken over from a
    replayed log when `replayed`)."""
    trials, hierarchy, found = run.trials, run.search.hierarchy, ended.found
    culprits = [h for h in run.diff.hunks if h.id in ended.answer - ended.passing]
    context = [h for h in run.diff.hunks if h.id in ended.passing]
    return Result(
        request=run.request,
        revisions=run.revisions,
        diff=run.diff,
        culprits=culprits,
        patch=patch,
        stats=run.search.stats,
        log=trials.log,
        wall_time=wall_time,
        command_time=trials.command_time,
        tests_run=trials.tests_run,
        outcome=ended.ending,
        resumed=trials.resumed,
        confirmation=ended.confirmation,
        disagreements=trials.disagreements,
        resolutions=(hierarchy.learned, 0 if found is None else found.unlearned),
        scopes={h.id: hierarchy.scope(h.id) for h in culprits + context},
        passing=context,
        route=ended.route,
        # Blame takes long on a big answer: an interrupted run's answer goes without.
        attribution=(
            _attribute(run, culprits + context) if ended.ending != Ending.INTERRUPTED else {}
        ),
        answer=trials.claim(ended.answer),
        passing_claim=trials.claim(ended.passing) if run.request.isolate else None,
        checks=[] if found is None else trials.claims(found.checks),
        kept=run.limited.kept,
        ignored=run.limited.ignored,
        unused=trials.unused(),
        width=run.search.width,
        blocks=hierarchy.runs(culprits),
        wider=0 if found is None else found.wider,
        earlier=earlier(trials.before, described, replayed=replayed) if trials.resumed else None,
    )


# -- helpers ---------------------------------------------------------------------------------


def _origins(run: _Run, units: list[hunks.Hunk]) -> dict[str, tuple[str, ...]]:
    repo, good, bad = run.scratch.repo, run.revisions.good, run.revisions.bad
    return provenance.attribute(repo, good, bad, run.diff, units)


def _attribute(run: _Run, units: list[hunks.Hunk]) -> dict[str, tuple[git.CommitInfo, ...]]:
    """The commits that brought each of `units`, with author, date and subject."""
    known = run.attribution or _origins(run, units)
    shas = {unit.id: known.get(unit.id, ()) for unit in units}
    infos = git.commit_infos(run.scratch.repo, (sha for found in shas.values() for sha in found))
    return {unit: tuple(infos[sha] for sha in found) for unit, found in shas.items()}


def _self_check(run: _Run) -> None:
    """Every change applied to GOOD must give BAD's tree, as git itself has it."""
    repo, paths = run.scratch.repo, content.touched_paths(run.diff)
    bad_tree = read.tree_marks(repo, run.revisions.bad, paths)
    namer = git.object_namer(repo)
    mismatched = content.differences(run.diff, run.everything, bad_tree, namer)
    if mismatched:
        raise errors.MaterializationMismatch(tuple(mismatched))


def _preflight_failed(
    run: _Run, phase: Stage, last: TestRecord, runs: int
) -> errors.PreflightFailed:
    sha, other = run.revisions.good, run.revisions.bad
    pinned = run.limited.kept  # on GOOD, the files --keep takes from BAD
    if phase == Stage.BAD:
        sha, other, pinned = other, sha, run.limited.ignored
    states = run.trials.setup.pinned
    return errors.PreflightFailed(
        which=phase,
        verdict=last.outcome.value,
        reason=last.reason,
        tail=last.tail,
        repo=git.common_dir(run.scratch.repo),
        subdirectory=git.prefix(run.request.repo),
        sha=sha,
        pinned=(other, tuple(p for p in pinned if states[p] is not None)),
        absent=tuple(p for p in pinned if states[p] is None),
        build=run.request.build,
        test=run.request.test,
        unsearched=run.diff.skipped if phase == Stage.BAD else (),
        runs=runs,
        keep=tuple(_named_by_the_command(run)) if phase == Stage.GOOD else (),
    )


def _named_by_the_command(run: _Run) -> list[str]:
    """The files BAD adds or changes that the test or build command names, as `--keep`
    takes them: relative to the directory the command runs in, as git reads pathspecs."""
    words = [*run.request.test, *shlex.split(run.request.build or "")]
    subdirectory = git.prefix(run.request.repo)
    named = limits.named_by(run.diff, words, subdirectory)
    return [posixpath.relpath(path, subdirectory or ".") for path in named]
