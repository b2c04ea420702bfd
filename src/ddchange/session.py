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
import hashlib
import json
import os
import pickle
import posixpath
import re
import shlex
import signal
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from ddchange import errors, git
from ddchange.diff import content, hunks, limits, linechanges, provenance, read, realign
from ddchange.diff.limits import Limited
from ddchange.events import Events, Listener
from ddchange.hierarchy import grouping, names
from ddchange.hierarchy.grouping import Hierarchy
from ddchange.model import (
    ON_GOOD,
    Claim,
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
    commit_tree,
)
from ddchange.runs import changed_check, describe, earlier, journal_path, run_key
from ddchange.search import confidence, history
from ddchange.search.cache import OutcomeCache
from ddchange.search.hierarchical import Cut, Found, Search
from ddchange.trial import ahead, cluster, results, runner, worktree
from ddchange.trial.journal import REPLAYED, Journal
from ddchange.trial.trials import Setup, States, Trials
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

    With --strategy auto (the default) the history comes first (`_history_first`) wherever
    it can be bisected; else, and with --strategy diff or history, the whole range is
    searched (`_search`).
    """
    repo = git.open_repo(request.repo)
    worktree.remove_stale(repo)
    revisions = resolve(repo, request.good, request.bad)
    reruns = confidence.reruns(request.confidence) if request.confirm else 0
    events = Events(
        listener or (lambda _: None),
        units=0,
        preflight=PREFLIGHT_RUNS,
        ends=reruns,
        finest=request.granularity,
    )
    with Journal(journal_path(repo)) as journal:
        whole = Route(strategy=request.strategy, good=revisions.good, bad=revisions.bad)
        if request.strategy != Strategy.AUTO:
            return _search(request, repo, revisions, journal, events, whole, replayed=replayed)
        fallback = unbisectable(repo, revisions, request)
        if fallback:
            route = dataclasses.replace(whole, fallback=fallback)
            return _search(request, repo, revisions, journal, events, route, replayed=replayed)
        return _history_first(request, repo, revisions, journal, events, replayed=replayed)


@dataclass(frozen=True, kw_only=True)
class Frame:
    """What a search inside the history takes from the bisection: the paths --keep and
    --ignore took out of GOOD..BAD, with the states every tree of the run pins them to (the
    bisection's commits' trees had them too), and the bisection's records of the two trees
    it searches between, taken over as its pre-flight (`Trials.adopt`)."""

    kept: frozenset[str]
    ignored: frozenset[str]
    pinned: dict[str, hunks.FileState | None]
    base: list[TestRecord]  # runs of the tree the search goes on from (its GOOD)
    tip: list[TestRecord]  # runs of the tree it ends at (its BAD)
    # The bisection's other runs of commits seen to pass, and the FAILs among them: the
    # evidence of a test that fails at random (`Trials.flakes`)
    flakes: tuple[int, int] = (0, 0)
    # The answers the run's searches inside the history checked before this one, and the
    # risk they left in all (`Confirmation.checks`, `Confirmation.risk`)
    checked: tuple[int, float] = (0, 0.0)


def unbisectable(repo: git.Repo, revisions: Revisions, request: Request) -> str:
    """Why the history of GOOD..BAD cannot be bisected ("" when it can): GOOD and BAD have no
    commit in common, GOOD descends from BAD, the first-parent chain between them is a single
    commit, or the tests run
    on a cluster's workers, which are sent GOOD and not the commits after it. (Where GOOD is
    no ancestor of BAD but they have a merge base, the bisection starts from it, as `git
    bisect` does: search/history.py.)"""
    if request.scheduler:
        return (
            "with --scheduler the tests run on the cluster's workers, which get GOOD and the "
            "changes, not the commits between GOOD and BAD"
        )
    if not git.is_ancestor(repo, revisions.good, revisions.bad):
        fork = git.merge_base(repo, revisions.good, revisions.bad)
        if fork is None:
            return (
                "GOOD is not an ancestor of BAD, and they have no commit in common to bisect from"
            )
        if fork == revisions.bad:
            return (
                "GOOD comes after BAD in the history, so there is no history between them to bisect"
            )
    if len(git.first_parents(repo, revisions.good, revisions.bad)) < 2:
        return "BAD is the only commit after GOOD on the first-parent history"
    return ""


def _history_first(
    request: Request,
    repo: git.Repo,
    revisions: Revisions,
    journal: Journal,
    events: Events,
    *,
    replayed: bool,
) -> Result:
    """--strategy auto: the strategy of `history.history_first` (BAD's own tree, the
    bisection of the history, GOOD's tree where it ends at GOOD, then a whole search
    (`_search`) between the two commits the bisection ended at, from the bisection's runs of
    their trees, and the bisection again where a FAIL at random misled it), its runs made
    here; and, when the search was not on GOOD, the answer applied on GOOD, tested once.
    Where the pre-flight's or the commit's runs disagree, the search over the range they bound
    takes their records over and ends flaky, with the evidence."""
    started = time.monotonic()
    good, bad = revisions.good, revisions.bad
    read.check_history(repo, good, bad, (request.good, request.bad))
    kept, ignored = read.limit_paths(repo, good, bad, request.keep, request.ignore, request.repo)
    events.searching(len(git.first_parents(repo, good, bad)))
    with scratch_worktree(repo, good) as scratch:
        pinned = pinned_states(scratch.repo, revisions, kept, ignored)
        trials = trials_for(
            request, revisions, NO_CHANGES, pinned, scratch, journal, events.recorded,
            events.started,
        )  # fmt: skip
        trials.resume(json.dumps(describe(request, revisions, git.prefix(request.repo))))
        events.taken_over(trials.log)

        trees = CommitTrees(trials, good)
        tree, states, offer = trees.tree, trees.states, trees.offer

        def test(sha: str) -> Outcome:
            return trials.settle(tree(sha), Stage.BISECT, functools.partial(trees.write, sha))

        def hold(side: _Side) -> bool:
            return _sides_hold(
                trials,
                (side,),
                reruns=events.ends,
                failed=lambda phase, last, runs: _preflight_failed(
                    request,
                    revisions,
                    trials,
                    (kept, ignored),
                    (phase, last, runs),
                    named=git.changed_paths(repo, good, bad),
                ),
            )

        graph = Graph(scratch.repo)
        asked: dict[str, None] = {}  # every commit any bisection asked, in order
        checked = [(0, 0.0)]  # the answers the searches so far checked, and their risk
        width = [1]

        @contextlib.contextmanager
        def slotted() -> Iterator[None]:
            """A bisection's slots, `width` commits at once with -j N: the search inside
            has its own."""
            with contextlib.ExitStack() as parallel:
                width[0] = slots(request, repo, scratch, trials, parallel)
                yield
                trials.alone()

        def located() -> history.Located:
            found = history.locate(good, bad, graph, test, width=width[0], offer=offer)
            asked.update(dict.fromkeys(sha for sha, _ in found.asked))
            return found

        def inside(where: history.Located | None) -> _Inside:
            """The whole search (`_search`) between the two commits the bisection ended at,
            from its runs of their trees."""
            base, tip = (good, bad) if where is None else (where.base, where.tip)
            route = Route(
                strategy=Strategy.AUTO,
                good=good,
                bad=bad,
                bisected=tuple(
                    (sha, claim)
                    for sha in (() if where is None else asked)
                    if (claim := trials.claim(tree(sha))) is not None
                ),
                first_bad=None if where is None else where.first_bad,
                located_in=sum(r.phase != Stage.ON_GOOD for r in trials.log),
                searched=_searched_where(where, good, bad),
                merges=() if where is None else where.merges,
                tip=trials.claim(tree(tip)),
                fallback=_fell_back(where is None, where, good, bad),
                fork=where.fork or None if where else None,
                commits=git.commit_infos(repo, {base, tip, *(where.merges if where else ())}),
            )
            frame = Frame(
                kept=kept,
                ignored=ignored,
                pinned=pinned,
                base=trials.records(tree(base)),
                tip=trials.records(tree(tip)),
                flakes=trials.flakes(besides={tree(base), tree(tip)}),
                checked=checked[-1],
            )
            inner = dataclasses.replace(
                request, good=base, bad=tip, strategy=Strategy.DIFF, within=(good, bad)
            )
            found = _search(
                inner, repo, Revisions(base, tip), journal, events, route, replayed=replayed,
                frame=frame,
            )  # fmt: skip
            if (done := found.confirmation) is not None:
                checked.append((done.checks, done.risk))
            return _Inside(before=len(trials.log), found=found, route=route)

        steps = history.Runs(
            bisecting=slotted,
            bad_fails=lambda: hold((Stage.BAD, tree(bad), functools.partial(states, bad))),
            good_passes=lambda: hold((Stage.GOOD, frozenset(), None)),
            locate=located,
            fails=lambda sha: test(sha) is Outcome.FAIL,
            search=inside,
            saw_random=lambda one: bool(
                one.found.disagreements or one.found.outcome == Ending.FLAKY
            ),
            fails_again=lambda sha: _fails_again(
                trials,
                tree(sha),
                request.confidence,
                Stage.BISECT,
                functools.partial(states, sha),
            ),
        )
        each = history.history_first(
            steps, good, bad, confirm=bool(events.ends), bisections=confidence.MAX_SEARCHES
        )
        where, last = each[-1]
        searches = [(one.before, one.found) for _, one in each]
        found, route = last.found, last.route
        base, tip = (good, bad) if where is None else (where.base, where.tip)
        # the first bad commit's runs, those after the search inside included
        route = dataclasses.replace(route, tip=trials.claim(tree(tip)))
        if base != good and found.outcome == Ending.FOUND:
            route = _on_good(trials, found, route)
    # in the order they ran: the bisection's runs and each search's own (not those it took
    # over from the bisection), then the one on GOOD
    log = [
        *in_order(
            [r for r in trials.log if r.phase != Stage.ON_GOOD],
            [(before, search.log) for before, search in searches],
        ),
        *(r for r in trials.log if r.phase == Stage.ON_GOOD),
    ]
    earlier = [search for _, search in searches[:-1]]
    return dataclasses.replace(
        found,
        request=request,
        route=route,
        log=[dataclasses.replace(record, number=n) for n, record in enumerate(log, 1)],
        tests_run=trials.tests_run + sum(search.tests_run for _, search in searches),
        command_time=trials.command_time + sum(search.command_time for _, search in searches),
        # the bisection's evidence of a flaky test too (its two ends' is the search's), and
        # that of the searches inside a first bad commit that passed when run again (but their
        # BAD's, that commit, whose evidence the bisection's runs of it give)
        disagreements=[
            *(d for c, d in trials.disagreed.items() if c not in (tree(base), tree(tip))),
            *(
                d
                for search in earlier
                for d in search.disagreements
                if d.size != len(search.diff.hunks)
            ),
            *found.disagreements,
        ],
        resumed=trials.resumed + sum(s.resumed for _, s in searches),
        wall_time=time.monotonic() - started,
    )


NO_CHANGES = hunks.Diff((), (), ())


def in_order(
    bisecting: Sequence[TestRecord], searches: Iterable[tuple[int, Sequence[TestRecord]]]
) -> list[TestRecord]:
    """The records of a run that bisected the history, in the order they ran: the
    bisection's, and after each search inside (made once the bisection had that many
    records), its own, not those it took over from the bisection (phase "bisect")."""
    log: list[TestRecord] = []
    at = 0
    for after, records in searches:
        log += [*bisecting[at:after], *(r for r in records if r.phase != Stage.BISECT)]
        at = after
    return [*log, *bisecting[at:]]


@dataclass(frozen=True, kw_only=True)
class _Inside:
    """A search inside where a bisection ended: its result and route, after that many records
    of the bisection's trials."""

    before: int
    found: Result
    route: Route


@dataclass(frozen=True)
class CommitTrees:
    """The trees of the commits after `good` as configurations of `trials` (GOOD's own: the
    empty one), as a bisection of the history runs them (session and suite alike)."""

    trials: Trials
    good: str

    def tree(self, sha: str) -> frozenset[str]:
        return frozenset() if sha == self.good else commit_tree(sha)

    def states(self, sha: str, runs: int) -> States | None:
        """What writes the tree of `sha`, where it is to run (None: GOOD's, or enough records
        of it are known)."""
        if len(self.trials.records(self.tree(sha))) >= runs:
            return None
        return self.write(sha)

    def write(self, sha: str) -> States | None:
        """What writes the tree of `sha` (None: GOOD's, the empty configuration)."""
        config = self.tree(sha)
        if sha == self.good:
            return None
        return self.trials.trees.get(config) or self.trials.commit(self.good, sha)[1]

    def offer(self, shas: list[str]) -> None:
        """With -j N, the commits of a round start at once in the slots."""
        self.trials.offer([self.tree(sha) for sha in shas if self.states(sha, 1) is not None])


@dataclass(frozen=True)
class Graph:
    """The commit graph of `repo`, as search/history.py asks about it."""

    repo: git.Repo

    def first_parents(self, good: str, bad: str) -> list[str]:
        return git.first_parents(self.repo, good, bad)

    def parents(self, sha: str) -> tuple[str, ...]:
        return git.parents(self.repo, sha)

    def merge_base(self, one: str, other: str) -> str | None:
        return git.merge_base(self.repo, one, other)

    def is_ancestor(self, older: str, newer: str) -> bool:
        return git.is_ancestor(self.repo, older, newer)


def _fails_again(
    trials: Trials,
    config: frozenset[str],
    asked: float,
    phase: Phase,
    write: Callable[[int], States | None] = lambda _runs: None,
) -> bool:
    """Whether `config` fails in as many runs as an answer's FAIL needs at the confidence
    `asked`, at the flake rate seen so far (a FAIL every answer rests on: BAD's, the first bad
    commit's); False where it passed. `write` gives what writes its tree to run it that many
    times (None: the configuration itself)."""
    runs = confidence.runs_to_confirm(asked, trials.flake_rate())
    return trials.repeat(config, runs, phase, write(runs))[0] is Outcome.FAIL


def _searched_where(located: history.Located | None, good: str, bad: str) -> str:
    """What the search after the bisection goes over (`Route.searched`)."""
    if located is None or (located.base, located.tip) == (good, bad):
        return "range"
    return located.where.value


def _fell_back(flaky: bool, located: history.Located | None, good: str, bad: str) -> str:
    """Why the search after the bisection goes over all of GOOD..BAD ("" where it does not)."""
    if flaky:
        return "runs of GOOD, of BAD or of the first bad commit disagreed"
    if located is not None and located.where is history.Where.WHOLE:
        return forked_off(located.fork)
    if located is not None and (located.base, located.tip) == (good, bad):
        return "no commit between GOOD and BAD could be tested"
    return ""


def forked_off(fork: str) -> str:
    """Why the search goes over all of GOOD..BAD where GOOD is no ancestor of BAD."""
    return (
        f"GOOD is not an ancestor of BAD, and the commit they forked from, {fork[:12]}, did "
        "not pass, so their history cannot say where the failure came in"
    )


def _on_good(trials: Trials, found: Result, route: Route) -> Route:
    """The answer found inside the history, as a patch applied on GOOD (in the bisection's
    scratch tree, at GOOD), tested once: whether it fails there too, or needs what the commits
    before it brought. Recorded as its own configuration, under the phase "on-good"."""
    good = route.good or ""
    changed = [found.diff.files[index] for index in {h.file for h in found.culprits}]
    files = sorted({p for f in changed for p in (f.origin, f.path)} | set(found.kept))
    applied = git.patched_files(trials.scratch.path, good, found.patch, files)
    if applied is None:
        return dataclasses.replace(route, on_good_note="do not apply there")
    written, exact = applied
    config = frozenset({ON_GOOD + hashlib.sha256(found.patch).hexdigest()[:16]})
    states = {
        path: None if state is None else hunks.FileState(state[1], state[0])
        for path, state in written.items()
    }
    _, runs = trials.repeat(config, 1, Stage.ON_GOOD, states)
    notes = [] if exact else ["applied without their context lines, which differ there"]
    if runs[-1].outcome is Outcome.UNRESOLVED:
        notes.append(runs[-1].reason)
    return dataclasses.replace(route, on_good=trials.claim(config), on_good_note="; ".join(notes))


def _search(
    request: Request,
    repo: git.Repo,
    revisions: Revisions,
    journal: Journal,
    events: Events,
    route: Route,
    *,
    replayed: bool,
    frame: Frame | None = None,
) -> Result:
    """The search of the changes between `revisions`: the whole range (GOOD..BAD), or, in a
    `frame`, the range the bisection of the history ended at."""
    started = time.monotonic()
    limited = read_diff(repo, request, revisions, frame)
    diff = limited.diff
    events.searching(len(diff.hunks))
    with (
        analysis_aside(diff, wanted=request.dependencies) as analysis,
        scratch_worktree(repo, revisions.good) as scratch,
        contextlib.ExitStack() as parallel,
    ):
        pinned = (
            frame.pinned
            if frame is not None
            else pinned_states(scratch.repo, revisions, limited.kept, limited.ignored)
        )
        trials = trials_for(
            request, revisions, diff, pinned, scratch, journal, events.recorded, events.started
        )
        described = describe(request, revisions, git.prefix(request.repo))
        cache = OutcomeCache[str](monotony=request.monotony)
        trials.flakes_before = frame.flakes if frame is not None else (0, 0)
        trials.resume(json.dumps(described))
        # an earlier attempt's outcomes, but FAILs that the flake rate seen asks to run again
        cache.reset(trials.settled())
        if frame is not None:  # the bisection's runs of the two trees: the pre-flight's
            trials.adopt(frozenset(), frame.base)
            trials.adopt(frozenset(h.id for h in diff.hunks), frame.tip)
        events.taken_over(trials.log)
        attribution, hierarchy = hierarchy_for(request, scratch.repo, revisions, diff, analysis)
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
            reruns=events.ends,
            route=route,
            checked=frame.checked if frame is not None else (0, 0.0),
        )
        ended = _searched(fixed) if _preflight(fixed) else _flaky(fixed)
        trials.stop_ahead()  # the scratch tree is the patch's alone now
        scratch.apply(content.materialize(diff, ended.answer))
        paths = [*content.touched_paths(diff), *limited.kept]  # the answer needs what is kept
        patch = scratch.patch(revisions.good, sorted(set(paths)))
    return _result(fixed, ended, patch, time.monotonic() - started, described, replayed=replayed)


def hierarchy_for(
    request: Request,
    repo: git.Repo,
    revisions: Revisions,
    diff: hunks.Diff,
    analysis: Callable[[], names.Analysis] | None,
) -> tuple[dict[str, tuple[str, ...]], Hierarchy]:
    """The hierarchy a search of `diff` goes down, and with --strategy history every unit's
    commits (the commit level orders by them; else none)."""
    attribution = (
        provenance.attribute(repo, revisions.good, revisions.bad, diff)
        if request.strategy == Strategy.HISTORY
        else {}
    )
    hierarchy = Hierarchy(
        diff,
        dependencies=request.dependencies,
        commits=provenance.positions(attribution, git.commits(repo, revisions.good, revisions.bad)),
        analysis=analysis,
        whole_blocks=request.granularity == Level.BLOCK,
    )
    return attribution, hierarchy


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


def read_diff(
    repo: git.Repo, request: Request, revisions: Revisions, frame: Frame | None = None
) -> Limited:
    """The change units between the revisions to search, less what --keep and --ignore take
    out (in a `frame`, the paths they took out of the user's GOOD..BAD); there must be at
    least one."""
    diff = read.read_diff(repo, revisions.good, revisions.bad)
    if request.strategy != Strategy.DIFF:  # the commits' trees are tested too
        read.check_history(repo, revisions.good, revisions.bad, (request.good, request.bad))
    if not diff.hunks:
        raise errors.EmptyDiff(request.good, request.bad, diff.skipped)
    good, bad = revisions.good, revisions.bad
    limited = (
        read.limited(repo, good, bad, diff, request.keep, request.ignore, request.repo)
        if frame is None
        else limits.limit(diff, frame.kept, frame.ignored)
    )
    if not limited.diff.hunks:
        raise errors.NothingLeft(len(limited.kept), len(limited.ignored))
    if request.granularity in (Level.BLOCK, Level.LINE):  # a block is a run of line changes
        return dataclasses.replace(limited, diff=linechanges.split_lines(limited.diff))
    return limited


def replay(
    logged: list[tuple[Request, list[TestRecord]]], listener: Listener | None = None
) -> Result:
    """Put the records of each logged run in place of its journal (like `git bisect replay`),
    then resume the first (the runs after it are its search inside the history)."""
    for request, records in logged:
        put_records(request, records)
    return run(logged[0][0], listener, replayed=True)


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


def pinned_states(
    repo: git.Repo, revisions: Revisions, kept: Iterable[str], ignored: Iterable[str]
) -> dict[str, hunks.FileState | None]:
    """What every tree of a run holds at the paths --keep and --ignore took out of the
    search: the kept ones as in BAD, the ignored ones as in GOOD."""
    return {
        **read.tree_states(repo, revisions.good, ignored),
        **read.tree_states(repo, revisions.bad, kept),
    }


def trials_for(
    request: Request,
    revisions: Revisions,
    diff: hunks.Diff,
    pinned: Mapping[str, hunks.FileState | None],
    scratch: Scratch,
    journal: Journal,
    on_record: Callable[[TestRecord], None],
    on_start: Callable[[frozenset[str], Phase, int], None] = lambda _c, _p, _o: None,
) -> Trials:
    """The trial layer of the run `request` asks for, over the configurations of `diff`: its
    key in the journal, how and where its tests run, the files --keep and --ignore pin (to
    the states `pinned`), where each run's results are (--results); told of each record and
    of each test as it starts."""
    subdirectory = git.prefix(request.repo)
    # With --results the pattern is on each test's failure message (suite.verdict), not on
    # the command's output
    pattern = (
        re.compile(request.fail_pattern) if request.fail_pattern and not request.results else None
    )
    setup = Setup(
        diff=diff,
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
        pinned=pinned,
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
    route: Route  # how the run came to search these changes
    checked: tuple[int, float] = (0, 0.0)  # as `Frame.checked`: the checks before this search

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
    """Whether GOOD passes and BAD fails (`_sides_hold`), after the check that every change
    applied to GOOD gives BAD's tree; False if runs of one side disagree (a flaky test: no
    search)."""
    _self_check(run)
    sides = ((Stage.GOOD, frozenset[str](), None), (Stage.BAD, run.everything, None))
    held = _sides_hold(
        run.trials,
        sides,
        reruns=run.reruns,
        failed=lambda phase, last, runs: _preflight_failed(
            run.request,
            run.revisions,
            run.trials,
            (run.limited.kept, run.limited.ignored),
            (phase, last, runs),
            named=[file.new_path for file in run.diff.files if file.new_path],
            unsearched=run.diff.skipped,
        ),
    )
    if held:
        _know_the_sides(run)
    return held


def _know_the_sides(run: _Run) -> None:
    """The search's cache told what the pre-flight's runs showed: GOOD passes, BAD fails."""
    run.cache.store(frozenset(), Outcome.PASS)
    run.cache.store(run.everything, Outcome.FAIL)


# A side of the pre-flight: its phase, its configuration, and what writes its tree when it is
# to run that many times (None: the configuration itself, from the diff)
_Side = tuple[Stage, frozenset[str], Callable[[int], States | None] | None]


def _sides_hold(
    trials: Trials,
    sides: tuple[_Side, ...],
    *,
    reruns: int,
    failed: Callable[[Stage, TestRecord, int], errors.PreflightFailed],
) -> bool:
    """Whether each of `sides` does as it must (GOOD passes, BAD fails), each in
    PREFLIGHT_RUNS runs (earlier attempts' included); False where BAD passed in one of its
    runs (a flaky test that passes at random: nothing to search), or an unresolved run of a
    side is among others that disagree. A side that is wrong in every run runs again before
    we say so (`failed`), since that ends the run and a flaky test must not pass for it:
    GOOD that fails as often as the answer's failure is rerun (a FAIL may come at random; one
    PASS among them is a fact: GOOD passes, and the test is seen to fail at random),
    otherwise once; none where the shell could not find or run the command (exit 126 or
    127). BAD's exit code becomes *the* failure."""
    trials.offer(c for _, config, write in sides if write is None for c in trials.owed(config, 1))
    for phase, config, write in sides:
        wanted = Outcome.PASS if phase == Stage.GOOD else Outcome.FAIL
        runs_wanted = PREFLIGHT_RUNS
        agreed, runs = trials.repeat(config, runs_wanted, phase, write and write(runs_wanted))
        # a command the shell could not find or run is no flake
        found = runs[-1].exit_code not in (runner.EXIT_NOT_FOUND, runner.EXIT_NOT_EXECUTABLE)
        if agreed is not wanted and {r.outcome for r in runs} == {agreed} and found:
            runs_wanted += max(reruns, 1) if agreed is Outcome.FAIL else 1
            agreed, runs = trials.repeat(config, runs_wanted, phase, write and write(runs_wanted))
        seen = {r.outcome for r in runs}
        if len(seen) > 1 and (phase == Stage.BAD or Outcome.UNRESOLVED in seen):
            return False
        if agreed is not wanted:
            raise failed(phase, runs[-1], len(runs))
        if phase == Stage.BAD:
            trials.adopt_failure(runs[-1].exit_code, runs[-1].missing)
    return True


def _flaky(run: _Run) -> _Ended:
    """The end of a run whose pre-flight runs disagreed: no search, BAD is what was seen."""
    return _Ended(ending=Ending.FLAKY, answer=run.everything, route=run.route)


def _searched(run: _Run) -> _Ended:
    """Search by the requested strategy, check and confirm; how it ended (a stop included)."""
    search, request, route = run.search, run.request, run.route
    found = None
    try:
        history = request.strategy == Strategy.HISTORY
        earlier, risk = run.checked
        found, confirmation = _checked(run, history=history, before=risk, searches=earlier + 1)
        for searches in range(earlier + 2, earlier + confidence.MAX_SEARCHES + 1):
            # BAD, on whose FAIL every answer rests, runs again as an answer's FAIL does
            # (where it passes there is nothing to search: inside the history, a FAIL at
            # random misled the bisection to this commit)
            asked = run.request.confidence if run.reruns else 0.0
            if not _refuted(run, found) or not _fails_again(
                run.trials, run.everything, asked, Stage.CONFIRM
            ):
                break
            # Its PASS is a fact, and runs that disagree otherwise are no answer: a FAIL the
            # search acted on came at random. It goes again from what was seen, and FAILs not
            # yet run as often as the flake rate asks for are run again when asked.
            run.cache.reset(run.trials.settled())
            _know_the_sides(run)
            before = risk if confirmation is None else confirmation.risk
            found, confirmation = _checked(run, history=history, before=before, searches=searches)
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
    backed = run.trials.backs(found, isolate=request.isolate) and not (
        confirmation is not None
        and (
            confirmation.good_failing
            or (confirmation.bad is not None and confirmation.bad.outcome is not Outcome.FAIL)
        )
    )
    return _Ended(
        ending=Ending.FOUND if backed else Ending.FLAKY,
        answer=found.answer,
        passing=found.passing if request.isolate else frozenset(),
        found=found,
        route=route,
        confirmation=confirmation,
    )


def _checked(
    run: _Run, *, history: bool, before: float, searches: int
) -> tuple[Found, Confirmation | None]:
    """One search from BAD's changes down the levels, cut by origin, and its answer checked
    at the end (unless --no-confirm): the search number `searches` of this run, after
    answers whose checks had the risk `before` (see `_confirm`)."""
    found = _descend(run, run.everything, history=history)
    return found, _confirm(run, found, before, searches) if run.request.confirm else None


def _refuted(run: _Run, found: Found) -> bool:
    """Whether the answer (with --isolate, its failing set) did not hold when run again: it
    passed (a fact: a flaky test misled the search into it), or its runs disagree otherwise
    (it failed, then failed another way or could not be tested: one of them came at random,
    and it is no answer to confirm)."""
    claim = run.trials.claim(found.answer)
    return claim is not None and (
        claim.outcome is Outcome.PASS or claim.outcome is Outcome.UNRESOLVED and claim.fails > 0
    )


def _descend(run: _Run, start: frozenset[str], *, history: bool) -> Found:
    """The search down the levels from `start`, and its check; at block granularity the check
    cuts a block of the answer whose lines came from more than one commit, or that the
    answer's own patch shows as more than one hunk (`answer_cut`), so that no block of two commits
    and no hunk of the patch stands in the answer as one change unless each part is needed."""
    levels = grouping.levels_for(run.request.granularity, run.diff, history=history)
    if run.request.isolate:
        return run.search.isolate(start, levels)
    cut = answer_cut(run.scratch.repo, run.revisions, run.diff, run.attribution)
    return run.search.minimize(start, levels, cut)


def answer_cut(
    repo: git.Repo,
    revisions: Revisions,
    diff: hunks.Diff,
    attribution: Mapping[str, tuple[str, ...]] | None = None,
) -> Cut:
    """What cuts an answer's blocks at its check (`Search.by_origin`), for a search and for
    each target of a triage: the commits of each unit of the answer (`attribution`, where the
    run knows every unit's already) and its hunk of the answer's own patch (blame of the
    answer's lines and git's diff of its patch only: the search itself never needs them)."""

    known = dict(attribution or {})  # each unit blamed once, whichever answer asks

    def cut(answer: frozenset[str]) -> tuple[Mapping[str, tuple[str, ...]], dict[str, int]]:
        units = [h for h in diff.hunks if h.id in answer and h.id not in known]
        if units:
            good, bad = revisions.good, revisions.bad
            known.update(provenance.attribute(repo, good, bad, diff, units))
        return known, realign.pieces(repo, diff, answer)

    return cut


def _confirm(run: _Run, found: Found, before: float = 0.0, searches: int = 1) -> Confirmation:
    """Run GOOD + the answer (--isolate: the failing set) again until it has failed in as
    many runs besides the one that found it as the confidence asks at the flake rate seen
    (`confidence.reruns`), then GOOD once more (`_good_at_end`); a PASS of the answer ends the
    check (a flaky test misled the search). The claims that rest on a PASS need no rerun (see
    search/confidence.py). Where the runs at the end show the test flaky (GOOD's, say), and so
    ask for more, the answer runs again as they now ask, once.

    Each check is one more chance for a wrong answer to come through: the risk stated is the
    sum of this check's and those of the answers checked `before` in this run (a union
    bound), and check number `searches` (counted over the run's bisections too) asks for
    the risk `confidence.allowed` gives it: what --confidence asks for the first check of a
    test never seen to fail at random, less for each check after it and once the test is
    seen to. An answer that a PASS of changes holding all of it contradicts (`contradicted`:
    under monotony those fail where it does, so its FAILs came at random, or the test is not
    monotone) is checked as where the test was seen to. Once the test is seen to fail at
    random, BAD's FAIL, on which every answer rests, runs again as the answer's does."""
    trials = run.trials
    good = frozenset[str]()
    again = bad = None
    contradicted = run.request.monotony and any(
        record.outcome is Outcome.PASS and found.answer <= record.config for record in trials.log
    )

    def planned() -> tuple[float, int]:
        """The rate guarded against, and the runs of the answer that asks for."""
        seen = trials.flake_rate()
        allowed = confidence.allowed(
            run.request.confidence, searches, seen=seen > 0 or contradicted
        )
        rate = confidence.guarded_rate(seen)
        return rate, confidence.runs_to_confirm(1 - allowed, rate) if run.reruns else 1

    for _ in range(2):
        rate, wanted = planned()
        trials.offer([*trials.owed(found.answer, wanted), *trials.owed(good, PREFLIGHT_RUNS + 1)])
        outcome, runs = trials.repeat(found.answer, wanted, Stage.CONFIRM)
        if outcome is not Outcome.FAIL:
            break
        again = _good_at_end(trials, wanted)
        if trials.flake_rate() > 0 and run.reruns:
            trials.repeat(run.everything, wanted, Stage.CONFIRM)
            bad = trials.claim(run.everything)
        if planned()[1] <= wanted:
            break
    rest = trials.claim(found.passing if run.request.isolate else run.everything - found.answer)
    reruns = len(runs) - 1
    return Confirmation(
        answer=outcome,
        runs=len(runs),
        reruns=reruns,
        # this check's chance to pass a wrong answer, as planned (a check that a PASS ended
        # had that chance too), with the earlier checks'
        risk=min(before + confidence.risk(wanted - 1, rate), 1.0),
        checks=searches,
        contradicted=contradicted,
        flake_rate=rate,
        good=again,
        good_failing=0 if again is None else _failing_at_end(trials.records(good)),
        bad=bad,
        rest=None if rest is None else rest.outcome,
    )


def _good_at_end(trials: Trials, wanted: int) -> Claim | None:
    """GOOD run once more after the search (PREFLIGHT_RUNS + 1 runs in all): whether what the
    search's runs left in the scratch tree (build output, files the test wrote) makes it fail.
    Where it fails, it runs again until it passes (the FAIL came at random) or has failed
    `wanted` times in a row (it fails now: the answer's runs do not tell)."""
    good = frozenset[str]()
    if len(trials.records(good)) < PREFLIGHT_RUNS + 1:
        trials.once(good, Stage.CONFIRM)
    while 0 < _failing_at_end(trials.records(good)) < wanted:
        trials.once(good, Stage.CONFIRM)
    return trials.claim(good)


def _failing_at_end(records: list[TestRecord]) -> int:
    """How many of a configuration's last runs in a row failed."""
    streak = 0
    for record in reversed(records):
        if record.outcome is not Outcome.FAIL:
            break
        streak += 1
    return streak


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
        earlier=earlier(trials.before, described, replayed=replayed)
        if trials.resumed
        else changed_check(trials.setup.journal, described),
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
    request: Request,
    revisions: Revisions,
    trials: Trials,
    limited: tuple[Collection[str], Collection[str]],
    seen: tuple[Stage, TestRecord, int],
    *,
    named: Collection[str],
    unsearched: tuple[str, ...] = (),
) -> errors.PreflightFailed:
    """The end of a run whose side `seen` names (its phase, its last record, how many runs)
    was wrong: with what --keep and --ignore (`limited`: their paths) pinned there, the
    changes left out of the search, and the files BAD adds or changes (`named`: their
    paths) that the command names (`--keep` is what GOOD needs of those)."""
    phase, last, runs = seen
    sha, other = revisions.good, revisions.bad
    kept, ignored = limited
    pinned = kept  # on GOOD, the files --keep takes from BAD
    if phase == Stage.BAD:
        sha, other, pinned = other, sha, ignored
    states = trials.setup.pinned
    return errors.PreflightFailed(
        which=phase,
        verdict=last.outcome.value,
        reason=last.reason,
        tail=last.tail,
        repo=git.common_dir(trials.scratch.repo),
        subdirectory=git.prefix(request.repo),
        sha=sha,
        pinned=(other, tuple(p for p in sorted(pinned) if states[p] is not None)),
        absent=tuple(p for p in sorted(pinned) if states[p] is None),
        build=request.build,
        test=request.test,
        unsearched=unsearched if phase == Stage.BAD else (),
        runs=runs,
        keep=tuple(_named_by_the_command(request, named)) if phase == Stage.GOOD else (),
        reversed=git.is_ancestor(trials.scratch.repo, revisions.bad, revisions.good),
    )


def _named_by_the_command(request: Request, paths: Collection[str]) -> list[str]:
    """Those of `paths` (that BAD adds or changes) that the test or build command names, as
    `--keep` takes them: relative to the directory the command runs in, as git reads
    pathspecs."""
    words = [*request.test, *shlex.split(request.build or "")]
    subdirectory = git.prefix(request.repo)
    named = limits.named_by(paths, words, subdirectory)
    return [posixpath.relpath(path, subdirectory or ".") for path in named]
