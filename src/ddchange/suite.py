"""A whole suite, triaged: which changes broke which tests, from runs that serve every test.

Owns the order of a run with `--results`. Each run of the test command writes every test
case's result (JUnit XML, or TAP on its output; trial/results.py reads them into the run's
record), so one run answers for every test at once. The phases pass values along:

0. the history first (`_history_first`, the default where GOOD..BAD's history can be
   bisected): GOOD's and BAD's own trees give the targets; each target bisects the
   first-parent history by its own verdicts (search/history.py), a commit built and tested
   once for every target; a first bad commit's FAIL is taken as BAD's is (a FAIL at random
   leaves causes that in truth pass, which their reruns catch: search/confidence.py). The
   targets
   bisected to one commit are triaged inside it (the phases below), with its parent as GOOD
   and itself as BAD, from the bisection's runs of the two trees, knowing the tests seen to
   fail at random anywhere in the run so far; each cause's patch applies on that parent
   (`CauseChanges.base`). Elsewhere the whole range is triaged.
1. pre-flight (`_sides`): GOOD and BAD once each. The targets are the tests that pass at
   GOOD and fail at BAD (`--test` narrows them); the others are listed as already failing at
   GOOD, or newly passing.
2. one search per target (`_search`), in order. A target's outcome of a configuration is
   read from the records of that configuration alone (`verdict`): FAIL when the test failed
   as it fails at BAD (the same status and kind of failure), PASS when it passed, UNRESOLVED
   otherwise (no build, no results, skipped, absent, a different failure). Every run serves
   every target: a search never runs a configuration that another one ran (its record
   answers), and targets with one cause follow one path, so all but the first cost nothing.
   A search takes the path its own search would take alone: it draws no implication from
   another target's runs (moving to their configurations by monotony led one search on the
   click suite of benchmarks/real/ to four times the tests of the same search alone).
   At block granularity each answer is then cut by commit and by the hunks of its own patch
   (`Search.by_origin`), as a single search's is: no block whose lines came from two commits,
   and no hunk of the patch the user gets, stands as one change unless each part is needed;
   and, unlike a single search's, into the line changes of each block whose removal alone
   passed, so that a cause is 1-minimal per line change there.
3. causes (`_causes`): targets whose answers are the same configuration are one cause. Each
   answer is run again (`confidence.reruns`), and every target of the cause must fail in
   every run; GOOD runs once more at the end. A cause's tests are those its own runs show
   failing (`_by_runs`): a target whose search ended elsewhere is one of them too where the
   answer failed it in every run and none of the answer's checks did; an answer that holds
   another whose tests include all of its own goes.

Claims: "test T fails with these changes" is a record of the answer in which T failed; "and
without each of them it does not" is a record of each check in which T did not fail. Both are
read from the records by `verdict`, never implied. A flaky test is taken as a single search
takes it (search/confidence.py): where T passed in one run of a configuration and failed in
the others, it passes there; a FAIL a search acts on runs again as the flake rate seen asks;
a configuration (a commit of the bisection too) that only tests seen to fail at random left
UNRESOLVED runs again until it settles (`_at_random_only`, `_settling`); a check whose one
run the target failed as at BAD while one test passing at both ends broke anew runs once
more, as such a commit of the bisection does (`_doubt_checks`); a target that
passes in a rerun of its answer is searched again from what was seen (at most
confidence.MAX_SEARCHES searches). A cause its records do not back is flaky, reported and
flagged (exit 4); one they back in spite of runs that disagreed ends with exit 5.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import functools
import itertools
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ddchange import errors, events, git
from ddchange.diff import content, provenance, read
from ddchange.hierarchy import grouping
from ddchange.hierarchy.grouping import Hierarchy
from ddchange.model import (
    Case,
    Cause,
    CauseChanges,
    Ending,
    Level,
    Outcome,
    Phase,
    Request,
    Revisions,
    Stage,
    Status,
    Strategy,
    SuiteResult,
    Target,
    TestRecord,
)
from ddchange.report.words import plural
from ddchange.runs import changed_check, describe, earlier, journal_path
from ddchange.search import confidence, history
from ddchange.search.cache import OutcomeCache
from ddchange.search.hierarchical import Cut, Found, Search
from ddchange.session import (
    NO_CHANGES,
    CommitTrees,
    Frame,
    Graph,
    analysis_aside,
    answer_cut,
    forked_off,
    hierarchy_for,
    in_order,
    pinned_states,
    read_diff,
    resolve,
    slots,
    trials_for,
    unbisectable,
)
from ddchange.trial import results, worktree
from ddchange.trial.journal import Journal
from ddchange.trial.trials import Trials

Config = frozenset[str]
Cases = Mapping[str, Case]
# Told of every real run as it is recorded, with the target being searched (None outside) and
# how far the searches are: "target K of N, M answers so far".
Progress = Callable[[TestRecord, Target | None, str], None]


def run(request: Request, progress: Progress | None = None) -> SuiteResult:
    """Pre-flight, one search per target, the causes checked; raises an
    `errors.DDChangeError` when it cannot. With --strategy auto (the default) the history comes
    first (`_history_first`) wherever it can be bisected; else, and with --strategy diff, the
    whole range is triaged (`_triage`)."""
    started = time.monotonic()
    tell = progress or (lambda _record, _target, _far: None)
    repo = git.open_repo(request.repo)
    worktree.remove_stale(repo)
    revisions = resolve(repo, request.good, request.bad)
    with Journal(journal_path(repo)) as journal:
        if request.strategy != Strategy.AUTO:
            whole = _triage(request, repo, revisions, journal, tell)
        elif fallback := unbisectable(repo, revisions, request):
            whole = dataclasses.replace(
                _triage(request, repo, revisions, journal, tell), fallback=fallback
            )
        else:
            whole = _history_first(request, repo, revisions, journal, tell)
    return dataclasses.replace(whole, wall_time=time.monotonic() - started)


def _history_first(
    request: Request, repo: git.Repo, revisions: Revisions, journal: Journal, tell: Progress
) -> SuiteResult:
    """--strategy auto: GOOD's and BAD's own trees (the pre-flight: the targets), then for
    each target the bisection of the history by its own verdicts (search/history.py), each
    commit built and tested once for every target (its run gives every test's result), the
    first bad commits too (their FAIL is taken as BAD's is); then one triage (`_triage`)
    inside each first bad commit against its parent, of the targets bisected to it, from the
    bisection's runs of the two trees. The causes' patches apply on those parents
    (`CauseChanges.base`). Where a cause's records do not back it for some of its tests, the
    first bad commit runs again as an answer does; a test it then passes for (a fact) was
    misled there by a FAIL at random: its bisection goes again from what was seen, and the
    triages of the commits it leaves and ends at go again (at most MAX_SEARCHES bisections),
    the runs made so far answering what they ask again. So do the targets of a triage that
    left a removal from their cause UNRESOLVED only by tests since seen to fail at random
    elsewhere (`stale`): triaged again, knowing them, that removal runs until it settles."""
    good, bad = revisions.good, revisions.bad
    read.check_history(repo, good, bad, (request.good, request.bad))
    kept, ignored = read.limit_paths(repo, good, bad, request.keep, request.ignore, request.repo)
    reruns = _reruns(request)
    searching: list[Target | None] = [None]
    far = ["the pre-flight"]
    told = [0]

    def counted(record: TestRecord, target: Target | None, far: str) -> None:
        """A run of the bisection or of a triage, numbered in the order they ran."""
        told[0] += 1
        tell(dataclasses.replace(record, number=told[0]), target, far)

    with worktree.scratch_worktree(repo, good) as scratch:
        pinned = pinned_states(scratch.repo, revisions, kept, ignored)
        trials = trials_for(
            request, revisions, NO_CHANGES, pinned, scratch, journal,
            on_record=lambda record: counted(record, searching[0], far[0]),
        )  # fmt: skip
        described = describe(request, revisions, git.prefix(request.repo))
        trials.resume(json.dumps(described))
        told[0] = trials.resumed

        trees = CommitTrees(trials, good)
        tree, offer = trees.tree, trees.offer

        def ran(sha: str, phase: Phase) -> TestRecord:
            """`sha`'s tree run once (unless it ran before): its latest record."""
            config = tree(sha)
            while (states := trees.states(sha, 1)) is not None or (
                sha == good and not trials.records(config)
            ):
                if states is None or config in trials.trees:
                    trials.offer(trials.owed(config, 1))
                trials.once(config, phase, states)
            return trials.records(config)[-1]

        def seen(sha: str, target: Target) -> Outcome:
            """`target`'s outcome at `sha`, run once (unless it ran before): a PASS in any of
            its runs is a fact (a first bad commit run again after a FAIL at random). Where
            the target failed there another way than at BAD (a time-out, say), or as at BAD
            while another test broke anew, that failure may have come at random, so the
            commit runs once more rather than being skipped at once (no run more where the
            targets fail alike and break no other test); and again while only tests seen to
            fail at random broke there (`settle`)."""
            record = ran(sha, Stage.BISECT)
            config = tree(sha)
            if reruns and len(trials.records(config)) == 1 and _doubtful(record, target):
                trials.once(config, Stage.BISECT, trees.write(sha))
            settle(sha, target)
            return outcome_of(trials, config, target)

        def settle(sha: str, target: Target) -> None:
            """`sha` run again while only tests seen to fail at random (in the bisection or,
            since, in a triage) left it UNRESOLVED for `target`, as `_settling` allows."""
            while reruns and _at_random_only(
                trials.records(tree(sha)),
                target,
                flakes.tests() | random,
                _settling(request, flakes.rate()),
            ):
                trials.once(tree(sha), Stage.BISECT, trees.write(sha))

        # GOOD no ancestor of BAD: the commit they forked from, and whether it failed for some
        # target (whose bisection cannot start there: the whole range is triaged)
        fork, whole = "", False

        def bisect(chosen: Sequence[Target], width: int) -> dict[tuple[str, str], list[Target]]:
            """Each of `chosen` bisected by its own verdicts: where each ended."""
            nonlocal fork, whole
            found: dict[tuple[str, str], list[Target]] = {}
            for target in chosen:
                searching[0] = target
                far[0] = f"bisecting the history, target {number[target.name]} of {len(targets)}"
                located = history.locate(
                    good, bad, graph, functools.partial(seen, target=target), width=width,
                    offer=offer,
                )  # fmt: skip
                found.setdefault((located.base, located.tip), []).append(target)
                fork = located.fork or fork
                whole = whole or located.where is history.Where.WHOLE
            searching[0] = None
            trials.alone()
            return found

        with contextlib.ExitStack() as parallel:
            width = slots(request, repo, scratch, trials, parallel)
            offer([good, bad])
            sides = [ran(sha, phase) for sha, phase in ((good, Stage.GOOD), (bad, Stage.BAD))]
            for phase, record in zip((Stage.GOOD, Stage.BAD), sides, strict=True):
                if record.cases is None:
                    why = record.reason.removeprefix(results.NONE + ": ")
                    raise errors.NoTestResults(phase, why, record.tail)
            at_bad = sides[1].cases or {}
            targets, failing, passing = _targets(
                request, _good_again(trials, at_bad, request), at_bad
            )
            number = {target.name: n for n, target in enumerate(targets, 1)}
            flakes = _Flakes(trials=trials, targets=targets)
            random: set[str] = set()  # tests the triages saw fail at random
            graph = Graph(scratch.repo)
            ends = bisect(targets, width)
        pace = _Pace(reruns=reruns, targets=len(targets), finest=request.granularity)

        def triaged(pair: tuple[str, str], mine: Sequence[Target]) -> tuple[int, SuiteResult]:
            """One triage inside the first bad commit against its parent (`pair`), of the
            targets bisected to it, from the bisection's runs of the two trees; with how many
            of the bisection's records came before it."""
            base, tip = pair
            frame = Frame(
                kept=kept,
                ignored=ignored,
                pinned=pinned,
                base=trials.records(tree(base)),
                tip=trials.records(tree(tip)),
            )
            inner = dataclasses.replace(
                request, good=base, bad=tip, strategy=Strategy.DIFF, within=(good, bad)
            )
            part = _triage(
                inner, repo, Revisions(base, tip), journal, counted, frame=frame,
                only=frozenset(t.name for t in mine), pace=pace, flaky=flakes.tests() | random,
            )  # fmt: skip
            random.update(_seen_at_random(part.log))
            return len(trials.log), dataclasses.replace(
                part,
                changes=tuple(
                    dataclasses.replace(c, first_bad=None if (base, tip) == (good, bad) else tip)
                    for c in part.changes
                ),
            )

        def misled(
            pair: tuple[str, str], bisected: Sequence[Target], one: tuple[int, SuiteResult]
        ) -> list[Target]:
            """The targets `bisected` to `pair` whose bisection a failure at random misled or
            stopped short (`refuted`, `unsettled`), or whose triage did (`stale`), to be
            bisected again from what was seen, and triaged again."""
            _, part = one
            if not reruns or part.outcome == Ending.INTERRUPTED:
                return []
            lost = refuted(pair, bisected, part)
            lost += unsettled(pair, [t for t in bisected if t not in lost])
            return [*lost, *stale(part, [t for t in bisected if t not in lost])]

        def refuted(
            pair: tuple[str, str], bisected: Sequence[Target], part: SuiteResult
        ) -> list[Target]:
            """The targets `bisected` to `pair` whose cause its triage's records do not back,
            where the first bad commit (not BAD), run again as an answer is, passed for them (a
            fact): a FAIL at random misled their bisection there."""
            shaky = {name for cause in part.causes if cause.flaky for name in cause.tests}
            mine = [t for t in bisected if t.name in shaky]
            if not mine or pair[1] == bad:
                return []
            runs = confidence.runs_to_confirm(request.confidence, trials.flake_rate())
            config = tree(pair[1])

            def passed() -> list[Target]:
                return [t for t in mine if outcome_of(trials, config, t) is Outcome.PASS]

            # one run at a time, until each of them passed or they have as many as an answer
            while len(passed()) < len(mine) and len(trials.records(config)) < runs:
                trials.once(config, Stage.BISECT, trees.write(pair[1]))
            return passed()

        def unsettled(pair: tuple[str, str], bisected: Sequence[Target]) -> list[Target]:
            """The targets `bisected` to `pair`, a range of commits the bisection could not
            test between, for which such a commit settles (passes or fails) once it runs again
            where only tests seen to fail at random since (in the triages too) left it
            UNRESOLVED, until it settles (`_settling`): their bisection stopped short."""
            between = [sha for sha in graph.first_parents(*pair)[:-1] if trials.records(tree(sha))]
            for sha, target in itertools.product(between, bisected):
                settle(sha, target)
            return [
                t
                for t in bisected
                if any(
                    outcome_of(trials, tree(sha), t) is not Outcome.UNRESOLVED for sha in between
                )
            ]

        def stale(part: SuiteResult, bisected: Sequence[Target]) -> list[Target]:
            """The targets `bisected` whose cause is not shown 1-minimal in `part` (their
            range's triage), where a configuration inside its changes is UNRESOLVED only
            because tests seen to fail at random since (in another triage, or the
            bisection) broke there: triaged again, knowing them, it runs until it settles
            (`_settling`)."""
            known, settling = flakes.tests() | random, _settling(request, flakes.rate())
            runs = _by_config(part.log)
            own = {t.name: t for t in part.targets}  # their verdicts by the range's two ends
            names = {
                name
                for cause in part.causes
                if cause.unresolved
                for name in cause.tests
                if any(
                    config < cause.answer and _at_random_only(records, own[name], known, settling)
                    for config, records in runs.items()
                )
            }
            return [t for t in bisected if t.name in names]

        def again(lost: Sequence[Target]) -> dict[tuple[str, str], list[Target]]:
            with contextlib.ExitStack() as parallel:
                return bisect(lost, slots(request, repo, scratch, trials, parallel))

        def planned(ranges: Sequence[tuple[str, str]]) -> None:
            pace.ranges = (pace.ranges or 0) + len(ranges)

        steps = history.Triages(
            bisect=again,
            triage=triaged,
            misled=misled,
            planned=planned,
            stopped=lambda one: one[1].outcome == Ending.INTERRUPTED,
        )
        # every triage in the order it ran (after how many of the bisection's records), and the
        # last of each range
        done, last = history.triages_first(steps, ends, bisections=confidence.MAX_SEARCHES)
        parts = {where: part for where, (_, part) in last.items()}
        commits = git.commit_infos(repo, {sha for pair in parts for sha in pair})
    # in the order they ran (not the records a triage took over from an earlier triage of its
    # range)
    # each triage: after how many of the bisection's records it ran, what it gave, and how
    # many of its records the earlier triage of its range made (taken over from the journal)
    order = [
        (after, part, 0 if one.replaces is None else len(one.replaces[1].log))
        for one in done
        for after, part in [one.part]
    ]
    log = in_order(trials.log, [(after, part.log[before:]) for after, part, before in order])
    kept_parts = list(parts.values())
    outcomes = {part.outcome for part in kept_parts}
    return SuiteResult(
        request=request,
        revisions=revisions,
        targets=tuple(targets),
        already_failing=failing,
        newly_passing=passing,
        causes=tuple(c for part in kept_parts for c in part.causes),
        changes=tuple(c for part in kept_parts for c in part.changes),
        log=tuple(dataclasses.replace(record, number=n) for n, record in enumerate(log, 1)),
        tests_run=trials.tests_run + sum(part.tests_run for _, part, _ in order),
        # a triage's records taken over from an earlier attempt, not from the earlier triage
        # of its range (whose records it took over from the bisection, of the phase "bisect"
        # there, are counted in no `resumed`)
        resumed=trials.resumed
        + sum(
            part.resumed - sum(r.phase != Stage.BISECT for r in part.log[:before])
            for _, part, before in order
        ),
        wall_time=0.0,
        command_time=trials.command_time + sum(part.command_time for _, part, _ in order),
        width=width,
        unused=trials.unused() + sum(part.unused for _, part, _ in order),
        outcome=next(
            (o for o in (Ending.INTERRUPTED, Ending.FLAKY) if o in outcomes), Ending.FOUND
        ),
        # records of an earlier run of the command, not those of an earlier triage of a range;
        # none taken over where a file the command runs changed since one: that one, and why
        earlier=next(
            (part.earlier for _, part, before in order if part.earlier and part.resumed > before),
            None if trials.resumed else changed_check(journal, described),
        ),
        located_in=sum(r.phase in (Stage.GOOD, Stage.BAD, Stage.BISECT) for r in trials.log),
        commits=commits,
        fallback=""
        if (good, bad) not in parts
        else _whole_range(len(parts), fork if whole else ""),
        fork=fork,
        patch=kept_parts[0].patch if len(kept_parts) == 1 else None,  # else bases differ
    )


def _whole_range(groups: int, failed_fork: str) -> str:
    """Why some targets were triaged over the whole range: GOOD is no ancestor of BAD and
    the commit they forked from (`failed_fork`) did not pass for some, or their bisection
    could test no commit between GOOD and BAD."""
    which = "every failing test" if groups == 1 else "some failing tests"
    why = (
        forked_off(failed_fork) if failed_fork else "no commit between GOOD and BAD could be tested"
    )
    return f"for {which}, {why}"


def _triage(
    request: Request,
    repo: git.Repo,
    revisions: Revisions,
    journal: Journal,
    tell: Progress,
    *,
    frame: Frame | None = None,
    only: frozenset[str] | None = None,
    pace: _Pace | None = None,
    flaky: frozenset[str] = frozenset(),
) -> SuiteResult:
    """The triage of the changes between `revisions`: the whole range (GOOD..BAD), or, in a
    `frame`, a range the bisection of the history ended at, for the targets named `only`,
    its progress counted on the whole run's `pace`, knowing the tests seen to fail at random
    elsewhere in the run (`flaky`)."""
    started = time.monotonic()
    limited = read_diff(repo, request, revisions, frame)
    diff = limited.diff
    subdirectory = git.prefix(request.repo)
    with (
        analysis_aside(diff, wanted=request.dependencies) as analysis,
        worktree.scratch_worktree(repo, revisions.good) as scratch,
        contextlib.ExitStack() as parallel,
    ):
        searching: list[Target | None] = [None]

        def recorded(record: TestRecord) -> None:
            if (target := searching[0]) is None:
                tell(record, None, "")
                return
            pacing.ran(record, verdict(record, target))
            tell(record, target, str(pacing))

        pinned = (
            frame.pinned
            if frame is not None
            else pinned_states(scratch.repo, revisions, limited.kept, limited.ignored)
        )
        trials = trials_for(request, revisions, diff, pinned, scratch, journal, on_record=recorded)
        width = slots(request, repo, scratch, trials, parallel)
        described = describe(request, revisions, subdirectory)
        trials.resume(json.dumps(described))
        everything = frozenset(h.id for h in diff.hunks)
        if frame is not None:  # the bisection's runs of the two trees: the pre-flight's
            trials.adopt(frozenset(), frame.base)
            trials.adopt(everything, frame.tip)
        good, bad = _sides(trials, everything, request)
        targets, failing, passing = _targets(request, good, bad)
        if only is not None:
            targets = [t for t in targets if t.name in only]
        pacing = pace or _Pace(
            reruns=_reruns(request), targets=len(targets), finest=request.granularity
        )
        _, hierarchy = hierarchy_for(request, scratch.repo, revisions, diff, analysis)
        history = request.strategy == Strategy.HISTORY  # the commit level first
        levels = grouping.levels_for(request.granularity, diff, history=history)
        found: dict[str, Found] = {}
        outcome = Ending.FOUND

        def commits_of(answer: Config) -> dict[str, tuple[str, ...]]:
            """The commits that brought each unit of `answer`."""
            units = [h for h in diff.hunks if h.id in answer]
            return provenance.attribute(scratch.repo, revisions.good, revisions.bad, diff, units)

        cut = answer_cut(scratch.repo, revisions, diff)

        try:
            pacing.begin(len(everything))

            flakes = _Flakes(trials=trials, targets=targets, elsewhere=flaky)

            searched, searches = targets, 0
            while True:
                searches += 1
                for target in searched:
                    searching[0] = target
                    pacing.next(target.name, {f.answer for f in found.values()})
                    found[target.name] = _search(
                        request, trials, hierarchy, target, levels, width, everything,
                        cut, flakes,
                    )  # fmt: skip
                searching[0] = None
                # A target whose check, run once more (`_doubt_checks`), now fails is
                # searched again before its answer runs again.
                shrunk = [] if request.isolate else _doubt_checks(request, trials, searched, found)
                if shrunk and searches < confidence.MAX_SEARCHES:
                    searched = shrunk
                    continue
                causes = _causes(request, trials, targets, found, flakes.rate())
                # A target that passed in a rerun of its answer (a fact): a FAIL at random
                # misled its search, which goes again from what was seen; so does one whose
                # answer a check left unshown 1-minimal where only tests since seen to fail
                # at random broke anew (it runs again there, until it settles).
                random, settling = flakes.tests(), _settling(request, flakes.rate())
                searched = [
                    t
                    for t in targets
                    if outcome_of(trials, found[t.name].answer, t) is Outcome.PASS
                    or not request.isolate
                    and any(
                        _at_random_only(trials.records(c), t, random, settling)
                        for c in found[t.name].checks
                    )
                ]
                if not searched or searches == confidence.MAX_SEARCHES:
                    break
        except KeyboardInterrupt:
            trials.stop_ahead()
            outcome = Ending.INTERRUPTED
            causes = _unchecked(targets, found)
        pacing.finished(len(causes))
        if outcome == Ending.FOUND and any(cause.flaky for cause in causes):
            outcome = Ending.FLAKY
        trials.stop_ahead()  # the scratch tree is the patches' alone now
        paths = sorted({*content.touched_paths(diff), *limited.kept})
        origins = commits_of(frozenset(unit for cause in causes for unit in cause.answer))
        infos = git.commit_infos(scratch.repo, (sha for s in origins.values() for sha in s))
        changes = []
        scratch.apply(content.materialize(diff, frozenset().union(*(c.answer for c in causes))))
        patch = scratch.patch(revisions.good, paths) if causes else None
        for cause in causes:
            scratch.apply(content.materialize(diff, cause.answer))
            mine = [h for h in diff.hunks if h.id in cause.answer - cause.passing]
            changes.append(
                CauseChanges(
                    base=revisions.good,
                    first_bad=None,
                    units=tuple(mine),
                    context=tuple(h for h in diff.hunks if h.id in cause.passing),
                    patch=scratch.patch(revisions.good, paths),
                    scopes={
                        h.id: hierarchy.scope(h.id) for h in diff.hunks if h.id in cause.answer
                    },
                    blocks=hierarchy.runs(mine),
                    attribution={h.id: tuple(infos[sha] for sha in origins[h.id]) for h in mine},
                )
            )
    return SuiteResult(
        request=request,
        revisions=revisions,
        targets=tuple(targets),
        already_failing=failing,
        newly_passing=passing,
        causes=tuple(causes),
        changes=tuple(changes),
        log=tuple(trials.log),
        tests_run=trials.tests_run,
        resumed=trials.resumed,
        wall_time=time.monotonic() - started,
        command_time=trials.command_time,
        width=width,
        unused=trials.unused(),
        outcome=outcome,
        earlier=earlier(trials.before, described, replayed=False)
        if trials.resumed
        else changed_check(journal, described),
        patch=patch,
    )


@dataclass(kw_only=True)
class _Pace:
    """How far a triage's searches are, for the progress line: which target of them all, the
    answers so far, and about how many tests are left (`events.triage_estimate`). One for the
    whole run: with the history first, the triages inside each first bad commit count on."""

    reruns: int  # of each cause at the end
    targets: int  # in the whole run
    finest: Level  # the granularity the searches go down to
    ranges: int | None = None  # with the history first, the first bad commits to search inside
    units: int = 0  # the changes of the range being triaged
    spent: list[int] = field(default_factory=list)  # each finished target's search's tests
    phases: list[Phase] = field(default_factory=list)  # the running target's search's runs
    remaining: int = 0  # the changes of the smallest configuration seen to fail its target
    number: int = 0  # the running target's, from 1
    named: set[str] = field(default_factory=set)  # the targets searched so far
    done: int = 0  # the causes of the triages finished (with the history first), rerun
    answers: int = 0  # the distinct answers so far

    def begin(self, units: int) -> None:
        """A triage of a range of `units` changes begins."""
        self.units = units
        if self.ranges is not None:
            self.ranges -= 1

    def next(self, target: str, answers: set[Config]) -> None:
        """A search of `target` begins (a target searched again, after a FAIL at random, is
        counted once); `answers`: the distinct answers of this range's searches so far."""
        if self.number:
            self.spent.append(len(self.phases))
        self.named.add(target)
        self.number, self.phases, self.remaining = len(self.named), [], self.units
        self.answers = self.done + len(answers)

    def ran(self, record: TestRecord, outcome: Outcome) -> None:
        """A run of the running target's search, with `outcome` for that target."""
        self.phases.append(record.phase)
        if outcome is Outcome.FAIL:
            self.remaining = min(self.remaining, len(record.config))

    def finished(self, causes: int) -> None:
        """A range's triage ended with `causes`."""
        self.done += causes

    def __str__(self) -> str:
        phase = self.phases[-1] if self.phases else Stage.BAD  # before its first run
        running = events.estimate(
            self.phases, phase, self.remaining, self.units, 0, 0, self.finest
        ).search
        left = events.triage_estimate(
            running, self.spent, self.targets - self.number, self.ranges,
            self.answers - self.done, self.reruns,
        )  # fmt: skip
        return (
            f"target {self.number} of {self.targets}, {plural(self.answers, 'answer')} so far; "
            f"about {plural(left.likely, 'test')} left ({left.low}-{left.high}, a guess from "
            "the searches so far)"
        )


def _reruns(request: Request) -> int:
    """The reruns of each cause at the end."""
    return confidence.reruns(request.confidence) if request.confirm else 0


def outcome_of(trials: Trials, config: Config, target: Target) -> Outcome:
    """What the records of exactly `config` say of `target`: the outcome they agree on; PASS
    where it passed in some and failed in the others (a flaky test fails at random, it does
    not pass at random: search/confidence.py); UNRESOLVED where they disagree otherwise or
    none is on record. Another test that passed in one of these runs did not break anew in
    the others (`verdict`: its failure there came at random)."""
    return _outcome(trials.records(config), target)


def _outcome(records: Sequence[TestRecord], target: Target) -> Outcome:
    """`outcome_of`, from the records of one configuration."""
    passed = _passed(records)
    seen = [verdict(record, target, passed) for record in records]
    return confidence.outcome_of_runs(seen) if seen else Outcome.UNRESOLVED


@dataclass(kw_only=True)
class _Flakes:
    """The rate at which the targets fail at random (confidence.flake_rate), from the runs of
    configurations in which a target passed: 0 while none of them failed there; and every
    test seen to fail at random (`tests`). Kept up as the log grows: each call reads again
    only the configurations run since the last one."""

    trials: Trials
    targets: Sequence[Target]
    elsewhere: frozenset[str] = frozenset()  # tests seen to fail at random in other runs
    _read: int = 0  # records of the log read
    _counts: dict[Config, tuple[int, int]] = field(default_factory=dict)  # runs, FAILs at random
    _random: set[str] = field(default_factory=set)

    def rate(self) -> float:
        self._update()
        runs = sum(runs for runs, _ in self._counts.values())
        return confidence.flake_rate(sum(fails for _, fails in self._counts.values()), runs)

    def tests(self) -> frozenset[str]:
        """The tests that passed in one run of a configuration and failed in another, here or
        `elsewhere`."""
        self._update()
        return frozenset(self._random) | self.elsewhere

    def _update(self) -> None:
        for config in {record.config for record in self.trials.log[self._read :]}:
            records = self.trials.records(config)
            passed = _passed(records)
            seen = [
                confidence.at_random([verdict(r, t, passed) for r in records]) for t in self.targets
            ]
            self._counts[config] = (sum(s[0] for s in seen), sum(s[1] for s in seen))
            self._random |= _seen_at_random(records)
        self._read = len(self.trials.log)


def disagree(trials: Trials, config: Config, target: Target) -> bool:
    records = trials.records(config)
    passed = _passed(records)
    return len({verdict(r, target, passed) for r in records}) > 1


def _at_random_only(
    records: Sequence[TestRecord], target: Target, random: frozenset[str], runs: int
) -> bool:
    """Whether a configuration, its `records` fewer than `runs`, is UNRESOLVED for `target`
    only because tests seen to fail at random (`random`, and those that passed in another of
    its runs) broke anew in its last run: the target failed there as at BAD, or another way
    and is one of them. One more run may settle it."""
    if not 0 < len(records) < runs or _outcome(records, target) is not Outcome.UNRESOLVED:
        return False
    cases = records[-1].cases
    if cases is None or not _broken(results.lookup(cases, target.name)):
        return False
    return _broken_anew(cases, target.ends) and not _broken_anew(
        cases, target.ends, _passed(records) | random
    )


def _doubt_checks(
    request: Request, trials: Trials, targets: Sequence[Target], found: Mapping[str, Found]
) -> list[Target]:
    """Each removal of a target's answer (its check) where, in its one run, the target failed
    as at BAD while one other test, passing at both ends, broke anew runs once more, as such
    a commit of the bisection does: that failure may have come at random, and one run would
    leave the answer unshown 1-minimal for it. The targets such a check now shows failing
    (the other test passed in the new run: it failed at random there), whose answer can lose
    that change. Where it breaks alike again, this one run is all it costs a steady suite
    (on benchmarks/real's pytest range, one check of the warns cause broke warns_skip
    alone: 353 tests, not 352; none on its click and werkzeug ranges). A removal that
    the target fails another way (one that breaks the build, say), that changes how a test
    failing at BAD fails (on benchmarks/real's werkzeug range, --strategy diff, six checks of
    one cause), or that breaks several tests at once (two tests failing at random 1 run in 4
    fail together 1 run in 16; on the same range, by default, one check broke three with an
    ImportError) runs no more."""
    if not _reruns(request):
        return []
    doubted = [
        c
        for t in targets
        for c in found[t.name].checks
        if len(records := trials.records(c)) == 1 + request.retries
        and outcome_of(trials, c, t) is Outcome.UNRESOLVED
        and (cases := records[-1].cases) is not None
        and len(anew := frozenset(_anew(cases, t.ends))) == 1
        and all(_passes(t.ends[name]) for name in anew)
        and verdict(records[-1], t, anew) is Outcome.FAIL
    ]
    doubted = list(dict.fromkeys(doubted))
    trials.offer(doubted)
    for config in doubted:
        trials.once(config, Stage.VERIFY)
    return [
        t
        for t in targets
        if any(outcome_of(trials, c, t) is Outcome.FAIL for c in found[t.name].checks)
    ]


def _settling(request: Request, rate: float) -> int:
    """The runs a configuration may take where only tests seen to fail at random left it
    UNRESOLVED (`_at_random_only`): those --retries asks for, then as many as a cause's FAIL
    runs (`confidence.runs_to_confirm`: 4 at the default confidence), for what it decides
    is an answer's: where a bisection stops, whether a cause is 1-minimal. At 1 in 4, such a
    configuration is left unsettled 1 time in 256 (with 3 runs, 1 in 64: 3 of 100 flaky
    triages of benchmarks/flaky.py went wrong so)."""
    return request.retries + confidence.runs_to_confirm(request.confidence, rate)


def _seen_at_random(records: Sequence[TestRecord]) -> set[str]:
    """The tests that passed in one of `records` and failed or broke in another of the same
    configuration: seen to fail at random (a PASS is a fact)."""
    seen: set[str] = set()
    for runs in _by_config(records).values():
        passed = _passed(runs)
        seen |= {
            name
            for record in runs
            for name, case in (record.cases or {}).items()
            if name in passed and _broken(case)
        }
    return seen


def _by_config(records: Sequence[TestRecord]) -> dict[Config, list[TestRecord]]:
    """`records` grouped by their configuration, each group in order."""
    grouped: dict[Config, list[TestRecord]] = {}
    for record in records:
        grouped.setdefault(record.config, []).append(record)
    return grouped


def _passed(records: Sequence[TestRecord]) -> frozenset[str]:
    """The tests that passed in one of `records` (of one configuration): there, a failure of
    theirs in another run came at random (a PASS is a fact)."""
    return frozenset(
        name
        for record in records
        for name, case in (record.cases or {}).items()
        if case.status is Status.PASS
    )


def verdict(record: TestRecord, target: Target, random: frozenset[str] = frozenset()) -> Outcome:
    """`target`'s outcome in one run: FAIL when it failed as at BAD (same status and kind of
    failure) and no other test that passes at GOOD broke anew (as it is at neither end: a
    configuration broken another way, whose changes would not fail just their tests), but
    for the tests in `random` (those that passed in another run of the configuration: their
    failure here came at random); PASS when it passed; UNRESOLVED otherwise."""
    if record.cases is None:
        return Outcome.UNRESOLVED
    case = results.lookup(record.cases, target.name)
    if case is None or case.status is Status.SKIP:
        return Outcome.UNRESOLVED
    if case.status is Status.PASS:
        return Outcome.PASS
    if case != target.at_bad or _broken_anew(record.cases, target.ends, random):
        return Outcome.UNRESOLVED
    if target.pattern is not None and not re.search(target.pattern, case.message):
        return Outcome.UNRESOLVED  # --fail-pattern: another failure
    return Outcome.FAIL


def _broken_anew(
    cases: Cases, ends: Mapping[str, Case | None], random: frozenset[str] = frozenset()
) -> bool:
    """Whether a test that passes at GOOD (and not in `random`) has a result here that it has
    at neither end."""
    return next(_anew(cases, ends, random), None) is not None


def _anew(
    cases: Cases, ends: Mapping[str, Case | None], random: frozenset[str] = frozenset()
) -> Iterator[str]:
    """The tests that broke anew in `cases` (`_broken_anew`)."""
    for name, at_bad in ends.items():
        if name in random:
            continue
        now = results.lookup(cases, name)
        if now is None or (now.status is not Status.PASS and now != at_bad):
            yield name


def _sides(trials: Trials, everything: Config, request: Request) -> tuple[Cases, Cases]:
    """GOOD's and BAD's test results, from their runs (taken over from the journal when it has
    them; GOOD's as `_good_again` reads them); NoTestResults when one gave none."""
    sides: list[Cases] = []
    trials.offer(c for c in (frozenset[str](), everything) if not trials.records(c))
    for phase, config in ((Stage.GOOD, frozenset[str]()), (Stage.BAD, everything)):
        if not trials.records(config):
            trials.once(config, phase)
        record = trials.records(config)[-1]
        if record.cases is None:
            why = record.reason.removeprefix(results.NONE + ": ")
            raise errors.NoTestResults(phase, why, record.tail)
        sides.append(record.cases)
    return _good_again(trials, sides[1], request), sides[1]


def _good_again(trials: Trials, bad: Cases, request: Request) -> Cases:
    """GOOD's test results from all its runs: PASS for a test that passed in any of them (a
    PASS is a fact), else its latest result. A test that failed at GOOD and fails at BAD
    another way (another status or kind of failure) is no target only if GOOD's FAIL did not
    come at random (a test that times out now and then, say), so GOOD runs again while such a
    test has not passed there, as often as a FAIL acted on needs at the flake rate seen
    (not with --no-confirm). A suite whose tests fail alike at both ends (or not at
    GOOD) pays no run more."""
    good = frozenset[str]()
    asked = request.confidence
    wanted = confidence.runs_to_confirm(asked, trials.flake_rate()) if request.confirm else 1
    while _doubted(merged := _merged(trials.records(good)), bad) and (
        len(trials.records(good)) < wanted
    ):
        trials.once(good, Stage.GOOD)
    return merged


def _merged(records: Sequence[TestRecord]) -> Cases:
    """Each test's result over `records`: PASS where it passed in one (`_passed`), else the
    latest."""
    passed = _passed(records)
    latest = {name: case for record in records for name, case in (record.cases or {}).items()}
    return {name: Case(Status.PASS) if name in passed else case for name, case in latest.items()}


def _doubted(good: Cases, bad: Cases) -> bool:
    """Whether a test failed at GOOD and fails at BAD another way."""
    return any(
        _broken(case) and _broken(after := results.lookup(bad, name)) and after != case
        for name, case in good.items()
    )


def _targets(
    request: Request, good: Cases, bad: Cases
) -> tuple[list[Target], tuple[str, ...], tuple[str, ...]]:
    """The tests that pass at GOOD and fail at BAD (narrowed by --test), in name order; those
    that fail at both; those that fail at GOOD and pass at BAD."""
    broken = {Status.FAIL, Status.ERROR}
    ends = {
        name: results.lookup(bad, name)
        for name in good
        if (case := results.lookup(good, name)) is not None and case.status is Status.PASS
    }
    at = {
        name: (results.lookup(good, name), results.lookup(bad, name))
        for name in sorted(set(good) | set(bad))
    }
    pattern = request.fail_pattern
    targets = [
        Target(name=name, at_bad=after, ends=ends, pattern=pattern)
        for name, (before, after) in at.items()
        if before is not None
        and before.status is Status.PASS
        and after is not None
        and after.status in broken
        and (pattern is None or re.search(pattern, after.message) is not None)
        and (not request.tests or any(fnmatch.fnmatchcase(name, g) for g in request.tests))
    ]
    failing = tuple(n for n, (b, a) in at.items() if _broken(b) and _broken(a))
    passing = tuple(
        n for n, (b, a) in at.items() if _broken(b) and a is not None and a.status is Status.PASS
    )
    if not targets:
        raise errors.NoTargets(len(failing), len(passing), request.tests)
    return targets, failing, passing


def _doubtful(record: TestRecord, target: Target) -> bool:
    """Whether `target` failed in `record` and that is no FAIL: it failed another way than at
    BAD (another status or type), or as at BAD where another test broke anew; either failure
    may have come at random."""
    case = None if record.cases is None else results.lookup(record.cases, target.name)
    return _broken(case) and verdict(record, target) is Outcome.UNRESOLVED


def _passes(case: Case | None) -> bool:
    return case is not None and case.status is Status.PASS


def _broken(case: Case | None) -> bool:
    return case is not None and case.status in (Status.FAIL, Status.ERROR)


def _search(
    request: Request,
    trials: Trials,
    hierarchy: Hierarchy,
    target: Target,
    levels: Sequence[Level],
    width: int,
    start: Config,
    cut: Cut,
    flakes: _Flakes,
) -> Found:
    """One target's search from `start`, its check at blocks cut by commit and by the hunks of
    its own patch (`Search.by_origin`, from the commits and the hunks `cut` gives each unit of
    the answer), the path its own search would take alone (each FAIL it acts on run as often
    as the flake rate seen asks; a run that another test seen to fail at random left
    UNRESOLVED, once more): its cache begins with GOOD and `start` only, so no
    outcome is implied from another target's runs (moving to another search's configurations
    by monotony led a search astray: on the click suite one target's search ran four times as
    many tests so); but a configuration another search ran is answered by its record, not run
    again."""
    cache = OutcomeCache[str](monotony=request.monotony)
    cache.store(frozenset(), outcome_of(trials, frozenset(), target))
    cache.store(start, outcome_of(trials, start, target))

    def test(config: Config, phase: Phase) -> Outcome:
        while len(trials.records(config)) < 1 + request.retries:  # --retries: more runs
            trials.once(config, phase)
        # a FAIL acted on runs again as the flake rate seen asks (none for a steady suite)
        while outcome_of(trials, config, target) is Outcome.FAIL and len(
            trials.records(config)
        ) < confidence.fails_needed(flakes.rate()):
            trials.once(config, phase)
        # a run that only tests seen to fail at random elsewhere left UNRESOLVED runs again
        # (`_settling`): where they pass, their failure came at random here too (none for a
        # steady suite)
        while _at_random_only(
            trials.records(config), target, flakes.tests(), _settling(request, flakes.rate())
        ):
            trials.once(config, phase)
        return outcome_of(trials, config, target)

    search = Search(
        diff=trials.diff,
        test=test,
        hierarchy=hierarchy,
        cache=cache,
        missing=trials.missing,
        width=width,
        offer=trials.offer,
    )
    if request.isolate:  # a 1-minimal difference, not cut (as the single search's is not)
        return search.isolate(start, levels)
    return search.minimize(start, levels, cut, lines=True)


Key = tuple[Config, Config]  # an answer: its failing set and (--isolate) its passing set


def _causes(
    request: Request,
    trials: Trials,
    targets: list[Target],
    found: dict[str, Found],
    rate: float,
) -> list[Cause]:
    """Targets with the same answer, one cause each (in the order first found); each answer
    run again until it has 1 + reruns records (as many as the confidence asks at the flake
    `rate` seen, or 1 in 4), and GOOD once more at the end. A cause is flaky where its records
    do not back it (a test passed in a run of its answer, or failed at GOOD, or in a check);
    it `disagreed` where the records of any configuration disagree for one of its tests (a
    search misled by a FAIL at random, say), and they back it all the same. With --isolate an
    answer is a failing set and a passing set inside it, and a PASS needs no rerun."""
    reruns = confidence.runs_to_confirm(request.confidence, rate) - 1 if request.confirm else 0
    grouped: dict[Key, list[Target]] = {}
    for target in targets:
        grouped.setdefault(_key(found[target.name]), []).append(target)
    trials.offer(c for answer, _ in grouped for c in trials.owed(answer, 1 + reruns))
    for answer, _ in grouped:
        while len(trials.records(answer)) < 1 + reruns:
            trials.once(answer, Stage.CONFIRM)
    while reruns and len(trials.records(frozenset())) < 2:  # GOOD again, after the search
        trials.once(frozenset(), Stage.CONFIRM)
    causes = []
    configs = {record.config for record in trials.log}
    # Each answer's checks, that the searches ending there ran: a test taken in by its runs
    # (`_by_runs`) is judged by these too, not by its own search's, of another answer. With
    # --isolate they are one search's, in pairs (the passing set grown by one change, the
    # failing set shrunk by one).
    removals = {
        key: found[mine[0].name].checks
        if request.isolate
        else tuple(dict.fromkeys(c for t in mine for c in found[t.name].checks))
        for key, mine in grouped.items()
    }
    for key, mine in _by_runs(trials, targets, grouped, removals, request.isolate).items():
        answer, passing = key
        checks = removals[key]
        disagreed = any(disagree(trials, c, t) for t in mine for c in configs)
        backed = all(
            _shown(trials, t, key, checks, request.isolate)
            and outcome_of(trials, frozenset(), t) is Outcome.PASS
            for t in mine
        )
        causes.append(
            Cause(
                answer=answer,
                passing=passing,
                tests=tuple(t.name for t in mine),
                runs=len(trials.records(answer)),
                checks=len(checks),
                unresolved=sum(
                    any(outcome_of(trials, c, t) is Outcome.UNRESOLVED for t in mine)
                    for c in checks
                ),
                flaky=not backed,
                disagreed=disagreed,
                flake_rate=confidence.guarded_rate(rate),
            )
        )
    return causes


def _key(found: Found) -> Key:
    return found.answer, found.passing


def _shown(
    trials: Trials, target: Target, key: Key, checks: Sequence[Config], isolate: bool
) -> bool:
    """Whether the records show `key` a 1-minimal answer for `target`: its failing set failed
    in every run, and no check failed (--isolate: the passing set passed, no check of the
    grown passing set passed and none of the shrunk failing set failed)."""
    answer, passing = key
    if outcome_of(trials, answer, target) is not Outcome.FAIL:
        return False
    if not isolate:
        return all(outcome_of(trials, c, target) is not Outcome.FAIL for c in checks)
    return (
        outcome_of(trials, passing, target) is Outcome.PASS
        and all(outcome_of(trials, c, target) is not Outcome.PASS for c in checks[0::2])
        and all(outcome_of(trials, c, target) is not Outcome.FAIL for c in checks[1::2])
    )


def _by_runs(
    trials: Trials,
    targets: list[Target],
    grouped: dict[Key, list[Target]],
    checks: Mapping[Key, Sequence[Config]],
    isolate: bool,
) -> dict[Key, list[Target]]:
    """Each answer's tests as its own runs show them: besides the targets whose search ended
    there (`grouped`), every target that its records show it 1-minimal for (`_shown`). An
    answer that holds another one whose tests include all of its own goes: the smaller says
    all it says (not with --isolate, where a smaller failing set says nothing of a
    difference)."""
    tests = {
        key: [t for t in targets if t in mine or _shown(trials, t, key, checks[key], isolate)]
        for key, mine in grouped.items()
    }
    return {
        key: mine
        for key, mine in tests.items()
        if isolate
        or not any(
            other[0] < key[0] and _names(mine) <= _names(theirs) for other, theirs in tests.items()
        )
    }


def _names(targets: Sequence[Target]) -> set[str]:
    return {t.name for t in targets}


def _unchecked(targets: list[Target], found: dict[str, Found]) -> list[Cause]:
    """An interrupted run: the answers found so far, not yet run again (not claimed)."""
    grouped: dict[Key, list[str]] = {}
    for target in targets:
        if target.name in found:
            grouped.setdefault(_key(found[target.name]), []).append(target.name)
    return [
        Cause(answer=a, passing=p, tests=tuple(names), runs=0, checks=0, flaky=False)
        for (a, p), names in grouped.items()
    ]
