"""One run of ddchange, from two revisions to an answer: the order of events, and nothing else.

Owns the orchestration: clean up after runs that were killed, resolve the revisions, read the
diff (a child process analyses its names meanwhile, for the search's dependencies), open the
scratch worktree and the journal, take over what earlier attempts of the same run
already tested, check that GOOD passes and BAD fails (pre-flight), search by the strategy asked
for (`search/`; with "auto", a bisection of the first-parent history first), confirm the
answer by running it again, attribute it to commits, and assemble the `Result` from the trial
layer's records (`trial/trials.py`). The search decides what to run, the trial layer runs it and
records it, and every claim in the result is read back from those records: nothing is
recomputed beside them.

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

from ddchange import errors, git
from ddchange.diff import content, hunks, limits, linechanges, provenance, read
from ddchange.diff.limits import Limited
from ddchange.events import Events, Listener
from ddchange.hierarchy import grouping
from ddchange.hierarchy.grouping import Hierarchy
from ddchange.model import (
    Confirmation,
    Ending,
    Level,
    Outcome,
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
from ddchange.search.dd import Probed, bisect
from ddchange.search.hierarchical import Found, Search
from ddchange.trial import ahead, cluster, results, runner, worktree
from ddchange.trial.journal import Journal
from ddchange.trial.trials import Trials
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

    Ctrl-C (KeyboardInterrupt) during the search still gives a Result: the smallest
    configuration seen to fail so far, with outcome "interrupted". During pre-flight it
    propagates.
    """
    started = time.monotonic()
    repo = git.open_repo(request.repo)
    worktree.remove_stale(repo)
    revisions = resolve(repo, request.good, request.bad)
    limited = read_diff(repo, request, revisions)
    diff = limited.diff
    with (
        analysis_aside(diff, wanted=request.dependencies) as analysis,
        Journal(journal_path(repo)) as journal,
        scratch_worktree(repo, revisions.good) as scratch,
        contextlib.ExitStack() as parallel,
    ):
        session = _Session(
            request, revisions, limited, scratch, journal, listener or (lambda _: None), analysis
        )
        session.parallel(parallel, repo)
        outcome = session.search() if session.preflight() else session.flaky()
        paths = [*content.touched_paths(diff), *limited.kept]  # the answer needs what is kept
        patch = scratch.patch(revisions.good, sorted(set(paths)))
    return session.result(outcome, patch, time.monotonic() - started, replayed=replayed)


@contextlib.contextmanager
def analysis_aside(
    diff: hunks.Diff, *, wanted: bool
) -> Iterator[Callable[[], grouping.Analysis] | None]:
    """The analysis of names (`grouping.Analysis`, when `wanted`), made meanwhile by a child
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
        yield lambda: grouping.Analysis(diff)
        return
    if pid == 0:  # the child: the analysis, handed over, then out with none of our clean-ups
        try:
            os.close(reading)
            with open(writing, "wb") as out:
                pickle.dump(grouping.Analysis(diff), out, pickle.HIGHEST_PROTOCOL)
        finally:
            os._exit(0)
    os.close(writing)
    child = _Reaped(pid)

    def hand_over() -> grouping.Analysis:
        with open(reading, "rb", closefd=False) as source:
            data = source.read()
        try:
            made: grouping.Analysis = pickle.loads(data)
        except (pickle.UnpicklingError, EOFError):  # nothing or half of it came
            return grouping.Analysis(diff)
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
        journal.begin(key, json.dumps(describe(request, revisions, subdirectory)))
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
    on_start: Callable[[frozenset[str]], None] = lambda _config: None,
) -> Trials:
    """The trial layer of the run `request` asks for: its key in the journal, how and where
    its tests run, the files --keep and --ignore pin, where each run's results are
    (--results); told of each record and of each test as it starts."""
    subdirectory = git.prefix(request.repo)
    pattern = re.compile(request.fail_pattern) if request.fail_pattern else None
    return Trials(
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
        expect=runner.Expectation(exit_code=None, pattern=pattern),
        retries=request.retries,
        clean=request.clean,
        pinned={
            **read.tree_states(scratch.repo, revisions.good, limited.ignored),
            **read.tree_states(scratch.repo, revisions.bad, limited.kept),
        },
        results=tuple(results.parse_source(spec) for spec in request.results),
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
    trials.ahead = stack.enter_context(runs)
    return trials.ahead.width


class _Session:
    """The state of one run: the trial layer, the search, and what they found."""

    def __init__(
        self,
        request: Request,
        revisions: Revisions,
        limited: Limited,
        scratch: Scratch,
        journal: Journal,
        listener: Listener,
        analysis: Callable[[], grouping.Analysis] | None,
    ) -> None:
        diff = limited.diff
        self.request, self.revisions, self.diff, self.scratch = request, revisions, diff, scratch
        self.limited, self.listener = limited, listener
        self.subdirectory = git.prefix(request.repo)  # where the test runs: part of the run
        self.everything = frozenset(h.id for h in diff.hunks)
        self.trials = trials_for(
            request,
            revisions,
            limited,
            scratch,
            journal,
            on_record=self._recorded,
            on_start=lambda config: self.events.started(config),
        )
        self.cache = OutcomeCache[str](monotony=request.monotony)
        self.described = describe(request, revisions, self.subdirectory)
        for config, outcome in self.trials.resume(json.dumps(self.described)).items():
            self.cache.store(config, outcome)
        history = git.commits(scratch.repo, revisions.good, revisions.bad)
        # Every unit's commits: the commit level orders by them, and "auto" picks by them.
        self.attribution = (
            provenance.attribute(scratch.repo, revisions.good, revisions.bad, diff)
            if request.strategy != Strategy.DIFF
            else {}
        )
        hierarchy = Hierarchy(
            diff,
            dependencies=request.dependencies,
            commits=provenance.positions(self.attribution, history),
            analysis=analysis,
            whole_blocks=request.granularity == Level.BLOCK,
        )
        self.searcher = Search(
            diff=diff,
            test=self._test,
            hierarchy=hierarchy,
            cache=self.cache,
            missing=self.trials.missing,
            listener=lambda level, step: self.events.step(level, step),
            width=request.jobs,
            offer=self.trials.offer,
        )
        self.searcher.best = self.everything
        self.found: Found | None = None
        self.route = Route(strategy=request.strategy)
        self.confirmation: Confirmation | None = None
        self._searching = False  # a run the search asked for: the search reports it
        self.reruns = confidence.reruns(request.confidence) if request.confirm else 0
        self.events = Events(self.listener, self.trials, self.searcher, PREFLIGHT_RUNS, self.reruns)

    # -- phases -----------------------------------------------------------------------------

    def parallel(self, stack: contextlib.ExitStack, repo: git.Repo) -> None:
        """With -j N or --scheduler, the slots that run tests ahead, closed with `stack`."""
        self.searcher.width = slots(self.request, repo, self.scratch, self.trials, stack)

    def preflight(self) -> bool:
        """Whether GOOD passes and BAD fails, each in PREFLIGHT_RUNS runs (earlier attempts'
        included); False if runs of one side disagree (a flaky test: no search). A side that
        is wrong in every run runs again before we say so (PreflightFailed), since that ends
        the run and a flaky test must not pass for it: GOOD that fails as often as the answer's
        failure is rerun (a FAIL may come at random), otherwise once. BAD's exit code becomes
        *the* failure."""
        self._self_check()
        sides = (
            (Stage.GOOD, frozenset[str](), Outcome.PASS),
            (Stage.BAD, self.everything, Outcome.FAIL),
        )
        self.trials.offer(
            run for _, config, _ in sides for run in self.trials.owed(config, PREFLIGHT_RUNS)
        )
        for phase, config, wanted in sides:
            self.trials.phase = phase
            agreed, runs = self.trials.repeat(config, PREFLIGHT_RUNS)
            if agreed is not wanted and {r.outcome for r in runs} == {agreed}:
                more = max(self.reruns, 1) if agreed is Outcome.FAIL else 1
                agreed, runs = self.trials.repeat(config, PREFLIGHT_RUNS + more)
            if len({r.outcome for r in runs}) > 1:
                return False
            if agreed is not wanted:
                raise self._preflight_failed(phase, runs[-1], len(runs))
            self.cache.store(config, wanted)
            if phase == Stage.BAD:
                self.trials.adopt_failure(runs[-1].exit_code)
        return True

    def search(self) -> Ending:
        """Search by the requested strategy, check and confirm; how the run ended."""
        try:
            self.found = self._by_origin(self._strategy())
            if self.request.confirm:
                self.confirmation = self._confirm(self.found)
        except KeyboardInterrupt:
            self.trials.stop_ahead()
            outcome = Ending.INTERRUPTED
        else:
            backed = self.trials.backs(self.found, isolate=self.request.isolate)
            outcome = Ending.FOUND if backed else Ending.FLAKY
        self._show(self._answer())
        return outcome

    def flaky(self) -> Ending:
        """The end of a run whose pre-flight runs disagreed: no search, BAD is what was seen."""
        self._show(self._answer())
        return Ending.FLAKY

    def result(self, outcome: Ending, patch: bytes, wall_time: float, *, replayed: bool) -> Result:
        """The Result, its claims read from the trial layer's records (and taken over from a
        replayed log when `replayed`)."""
        answer, passing = self._answer(), self._passing()
        culprits = [h for h in self.diff.hunks if h.id in answer - passing]
        context = [h for h in self.diff.hunks if h.id in passing]
        found, trials, hierarchy = self.found, self.trials, self.searcher.hierarchy
        return Result(
            request=self.request,
            revisions=self.revisions,
            diff=self.diff,
            culprits=culprits,
            patch=patch,
            stats=self.searcher.stats,
            log=trials.log,
            wall_time=wall_time,
            command_time=trials.command_time,
            tests_run=trials.tests_run,
            outcome=outcome,
            resumed=trials.resumed,
            confirmation=self.confirmation,
            disagreements=trials.disagreements,
            resolutions=(hierarchy.learned, 0 if found is None else found.unlearned),
            scopes={h.id: hierarchy.scope(h.id) for h in culprits + context},
            passing=context,
            route=self.route,
            # Blame takes long on a big answer: an interrupted run's answer goes without.
            attribution=self._attribute(culprits + context)
            if outcome != Ending.INTERRUPTED
            else {},
            answer=trials.claim(answer),
            passing_claim=trials.claim(passing) if self.request.isolate else None,
            checks=[] if found is None else trials.claims(found.checks),
            kept=self.limited.kept,
            ignored=self.limited.ignored,
            unused=trials.unused(),
            width=self.searcher.width,
            blocks=hierarchy.runs(culprits),
            wider=0 if found is None else found.wider,
            earlier=earlier(trials.before, self.described, replayed=replayed)
            if trials.resumed
            else None,
        )

    # -- the search ---------------------------------------------------------------------------

    def _strategy(self) -> Found:
        if self.request.strategy == Strategy.AUTO:
            return self._auto()
        return self._descend(self.everything, history=self.request.strategy == Strategy.HISTORY)

    def _descend(self, start: frozenset[str], *, history: bool) -> Found:
        levels = grouping.levels_for(self.request.granularity, self.diff, history=history)
        search = self.searcher.isolate if self.request.isolate else self.searcher.minimize
        return search(start, levels)

    def _auto(self) -> Found:
        """Bisect the first-parent history like `git bisect`, then search inside the changes
        of the culprit commit(s) if they fail on GOOD alone; if not (two commits that only
        fail together, a merge of two passing branches), search the whole range in history
        order, with every outcome seen so far in the cache."""
        chain = git.first_parents(self.scratch.repo, self.revisions.good, self.revisions.bad)
        asked: list[str] = []  # commits tested (or answered by an earlier attempt)

        def test(position: int) -> Outcome:
            asked.append(chain[position - 1])
            return self._test_commit(chain[position - 1])

        lo, hi = bisect(len(chain), test)
        last_good = self.revisions.good if lo == 0 else chain[lo - 1]
        suspects = tuple(git.commits(self.scratch.repo, last_good, chain[hi - 1]))
        alone = self._alone(provenance.commits_of(self.attribution, suspects))
        self.route = Route(
            strategy=Strategy.AUTO,
            bisect_tests=len(asked),
            last_good=last_good,
            first_bad=chain[hi - 1],
            suspects=suspects,
            alone=alone.outcome,
            searched="commit" if alone.outcome is Outcome.FAIL else "range",
        )
        if alone.outcome is Outcome.FAIL:
            return self._descend(alone.config, history=False)
        return self._descend(self.everything, history=True)

    def _by_origin(self, found: Found) -> Found:
        """At block granularity, a block of the answer whose lines came from more than one
        commit is cut by commit and the answer checked again by removal there, so that no
        block of two commits stands in the answer as one change unless each part is needed
        (blame of the answer's lines only: the search itself never needs it)."""
        if self.request.granularity != Level.BLOCK or self.request.isolate:
            return found
        units = [h for h in self.diff.hunks if h.id in found.answer]
        origins = self.attribution or self._origins(units)
        hierarchy = self.searcher.hierarchy
        blocks: dict[int, set[tuple[str, ...]]] = {}
        for unit in units:
            blocks.setdefault(hierarchy.block(unit.id), set()).add(origins.get(unit.id, ()))
        if all(len(commits) < 2 for commits in blocks.values()):
            return found
        hierarchy.know_origins({unit.id: origins.get(unit.id, ()) for unit in units})
        return self.searcher.refine(found.answer, Level.ORIGIN)

    def _origins(self, units: list[hunks.Hunk]) -> dict[str, tuple[str, ...]]:
        repo, good, bad = self.scratch.repo, self.revisions.good, self.revisions.bad
        return provenance.attribute(repo, good, bad, self.diff, units)

    def _alone(self, units: frozenset[str]) -> Probed[str]:
        """GOOD + `units` (the culprit commits' changes), known or tested, as the search
        would probe it: `config` is what really ran (its interior, when that failed)."""
        if not units:
            return Probed(Outcome.PASS, units)
        self.searcher.enter(Level.COMMIT)
        return self.searcher.probe(units)

    def _test_commit(self, sha: str) -> Outcome:
        """Commit `sha`'s own tree, known or tested (see `Trials.commit`)."""
        config = frozenset({f"commit:{sha}"})
        known = self.cache.exact(config)
        if known is None:
            known = self.trials.commit(self.revisions.good, sha)
            self.cache.store(config, known)
        return known

    def _test(self, config: frozenset[str]) -> Outcome:
        """The search's test: a real run of exactly `config`, recorded under the search's level
        (the search reports it to the listener itself)."""
        self.trials.phase = self.searcher.level
        self._searching = True
        try:
            return self.trials.run(config)
        finally:
            self._searching = False

    def _confirm(self, found: Found) -> Confirmation:
        """Run GOOD + the answer (--isolate: the failing set) again until it has failed in
        `reruns` runs besides the one that found it, then GOOD once more; a run that disagrees
        ends the check (a flaky test). The claims that rest on a PASS need no rerun (see
        search/confidence.py), but GOOD's last run shows whether what the search's runs left in
        the scratch tree (build output, files the test wrote) makes a configuration fail that
        passed in a fresh tree; it is also one more chance for a flaky test to show."""
        self.trials.phase = Stage.CONFIRM
        wanted = 1 + self.reruns
        good = frozenset[str]()
        self.trials.offer(
            [*self.trials.owed(found.answer, wanted), *self.trials.owed(good, PREFLIGHT_RUNS + 1)]
        )
        outcome, runs = self.trials.repeat(found.answer, wanted)
        again = None
        if outcome is Outcome.FAIL:
            self.trials.repeat(good, PREFLIGHT_RUNS + 1)
            again = self.trials.claim(good)
        rest = self.trials.claim(
            found.passing if self.request.isolate else self.everything - found.answer
        )
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

    # -- what the records say -----------------------------------------------------------------

    def _answer(self) -> frozenset[str]:
        """The found answer, or when stopped early the smallest configuration seen to fail."""
        return self.found.answer if self.found is not None else self.searcher.best

    def _passing(self) -> frozenset[str]:
        if not self.request.isolate:
            return frozenset()
        return self.found.passing if self.found is not None else self.searcher.best_passing

    def _attribute(self, units: list[hunks.Hunk]) -> dict[str, tuple[git.CommitInfo, ...]]:
        """The commits that brought each of `units`, with author, date and subject."""
        known = self.attribution or self._origins(units)
        shas = {unit.id: known.get(unit.id, ()) for unit in units}
        infos = git.commit_infos(
            self.scratch.repo, (sha for found in shas.values() for sha in found)
        )
        return {unit: tuple(infos[sha] for sha in found) for unit, found in shas.items()}

    # -- helpers ------------------------------------------------------------------------------

    def _self_check(self) -> None:
        """Every change applied to GOOD must give BAD's tree, as git itself has it."""
        repo, paths = self.scratch.repo, content.touched_paths(self.diff)
        bad_tree = read.tree_marks(repo, self.revisions.bad, paths)
        namer = git.object_namer(repo)
        mismatched = content.differences(self.diff, self.everything, bad_tree, namer)
        if mismatched:
            raise errors.MaterializationMismatch(tuple(mismatched))

    def _show(self, config: frozenset[str]) -> None:
        """Leave `config` in the worktree, so that the patch is taken from it (no run ahead
        may be going there any more)."""
        self.trials.stop_ahead()
        self.scratch.apply(content.materialize(self.diff, config))

    def _recorded(self, record: TestRecord) -> None:
        """Progress for a real run outside the search (pre-flight, bisection, confirmation)."""
        if not self._searching:
            self.events.recorded(record)

    def _preflight_failed(
        self, phase: Stage, last: TestRecord, runs: int
    ) -> errors.PreflightFailed:
        sha, other = self.revisions.good, self.revisions.bad
        pinned = self.limited.kept  # on GOOD, the files --keep takes from BAD
        if phase == Stage.BAD:
            sha, other, pinned = other, sha, self.limited.ignored
        states = self.trials.pinned
        return errors.PreflightFailed(
            which=phase,
            verdict=last.outcome.value,
            reason=last.reason,
            tail=last.tail,
            repo=git.common_dir(self.scratch.repo),
            subdirectory=git.prefix(self.request.repo),
            sha=sha,
            pinned=(other, tuple(p for p in pinned if states[p] is not None)),
            absent=tuple(p for p in pinned if states[p] is None),
            build=self.request.build,
            test=self.request.test,
            unsearched=self.diff.skipped if phase == Stage.BAD else (),
            runs=runs,
            keep=tuple(self._named_by_the_command()) if phase == Stage.GOOD else (),
        )

    def _named_by_the_command(self) -> list[str]:
        """The files BAD adds or changes that the test or build command names, as `--keep`
        takes them: relative to the directory the command runs in, as git reads pathspecs."""
        words = [*self.request.test, *shlex.split(self.request.build or "")]
        named = limits.named_by(self.diff, words, self.subdirectory)
        return [posixpath.relpath(path, self.subdirectory or ".") for path in named]
