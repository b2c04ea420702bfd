"""A whole suite, triaged: which changes broke which tests, from runs that serve every test.

Owns the order of a run with `--results`. Each run of the test command writes every test
case's result (JUnit XML, or TAP on its output; trial/results.py reads them into the run's
record), so one run answers for every test at once. The phases pass values along:

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
3. causes (`_causes`): targets whose answers are the same configuration are one cause. Each
   answer is run again (`confidence.reruns`), and every target of the cause must fail in
   every run; GOOD runs once more at the end.

Claims: "test T fails with these changes" is a record of the answer in which T failed; "and
without each of them it does not" is a record of each check in which T did not fail. Both are
read from the records by `verdict`, never implied. A target whose records of one configuration
disagree is flaky: its cause is reported, flagged, and the run ends with exit 4.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import time
from collections.abc import Callable, Mapping, Sequence

from ddchange import errors, git
from ddchange.diff import content, provenance
from ddchange.hierarchy import grouping
from ddchange.hierarchy.grouping import Hierarchy
from ddchange.model import (
    Case,
    Cause,
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
    commit_tree,
)
from ddchange.report.words import plural
from ddchange.runs import describe, earlier, journal_path
from ddchange.search import confidence
from ddchange.search.cache import OutcomeCache
from ddchange.search.hierarchical import Found, Search
from ddchange.search.history import bisect_history
from ddchange.session import (
    analysis_aside,
    pinned_states,
    read_diff,
    resolve,
    slots,
    trials_for,
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
    `errors.DDChangeError` when it cannot."""
    started = time.monotonic()
    tell = progress or (lambda _record, _target, _far: None)
    repo = git.open_repo(request.repo)
    worktree.remove_stale(repo)
    revisions = resolve(repo, request.good, request.bad)
    limited = read_diff(repo, request, revisions)
    diff = limited.diff
    subdirectory = git.prefix(request.repo)
    with (
        analysis_aside(diff, wanted=request.dependencies) as analysis,
        Journal(journal_path(repo)) as journal,
        worktree.scratch_worktree(repo, revisions.good) as scratch,
        contextlib.ExitStack() as parallel,
    ):
        searching: list[Target | None] = [None]
        far = [""]

        def recorded(record: TestRecord) -> None:
            tell(record, searching[0], far[0])

        pinned = pinned_states(scratch.repo, revisions, limited.kept, limited.ignored)
        trials = trials_for(request, revisions, diff, pinned, scratch, journal, on_record=recorded)
        width = slots(request, repo, scratch, trials, parallel)
        described = describe(request, revisions, subdirectory)
        trials.resume(json.dumps(described))
        everything = frozenset(h.id for h in diff.hunks)
        good, bad = _sides(trials, everything)
        targets, failing, passing = _targets(request, good, bad)
        hierarchy = Hierarchy(
            diff,
            dependencies=request.dependencies,
            analysis=analysis,
            whole_blocks=request.granularity == Level.BLOCK,
        )
        levels = grouping.levels_for(request.granularity, diff)
        found: dict[str, Found] = {}
        outcome = Ending.FOUND
        # --strategy auto: the commits that brought each change, to run a culprit's alone
        origins = (
            provenance.attribute(scratch.repo, revisions.good, revisions.bad, diff)
            if request.strategy == Strategy.AUTO
            else None
        )
        try:
            for number, target in enumerate(targets, 1):
                searching[0] = target
                start = everything
                if origins is not None:
                    alone = _bisect(trials, target, revisions, origins)
                    if alone and outcome_of(trials, alone, target) is Outcome.FAIL:
                        start = alone
                answers = len({f.answer for f in found.values()})
                far[0] = f"target {number} of {len(targets)}, {plural(answers, 'answer')} so far"
                found[target.name] = _search(
                    request, trials, hierarchy, target, levels, width, start
                )
            searching[0] = None
            causes = _causes(request, trials, targets, found)
        except KeyboardInterrupt:
            trials.stop_ahead()
            outcome = Ending.INTERRUPTED
            causes = _unchecked(targets, found)
        if outcome == Ending.FOUND and any(cause.flaky for cause in causes):
            outcome = Ending.FLAKY
        trials.stop_ahead()  # the scratch tree is the patches' alone now
        patches = {}
        paths = sorted({*content.touched_paths(diff), *limited.kept})
        for number, cause in enumerate(causes):
            scratch.apply(content.materialize(diff, cause.answer))
            patches[number] = scratch.patch(revisions.good, paths)
        units = [h for h in diff.hunks if any(h.id in cause.answer for cause in causes)]
        origins = provenance.attribute(scratch.repo, revisions.good, revisions.bad, diff, units)
        infos = git.commit_infos(scratch.repo, (sha for s in origins.values() for sha in s))
    return SuiteResult(
        request=request,
        revisions=revisions,
        diff=diff,
        targets=tuple(targets),
        already_failing=failing,
        newly_passing=passing,
        causes=tuple(causes),
        patches=tuple(patches[n] for n in range(len(causes))),
        scopes={h.id: hierarchy.scope(h.id) for h in units},
        blocks=tuple(
            hierarchy.runs([h for h in diff.hunks if h.id in cause.answer]) for cause in causes
        ),
        attribution={u: tuple(infos[sha] for sha in s) for u, s in origins.items()},
        log=tuple(trials.log),
        tests_run=trials.tests_run,
        resumed=trials.resumed,
        wall_time=time.monotonic() - started,
        command_time=trials.command_time,
        width=width,
        outcome=outcome,
        earlier=earlier(trials.before, described, replayed=False) if trials.resumed else None,
    )


def outcome_of(trials: Trials, config: Config, target: Target) -> Outcome:
    """What the records of exactly `config` say of `target`: the outcome they agree on,
    UNRESOLVED when they disagree or none is on record."""
    seen = {verdict(record, target) for record in trials.records(config)}
    return seen.pop() if len(seen) == 1 else Outcome.UNRESOLVED


def disagree(trials: Trials, config: Config, target: Target) -> bool:
    return len({verdict(r, target) for r in trials.records(config)}) > 1


def verdict(record: TestRecord, target: Target) -> Outcome:
    """`target`'s outcome in one run: FAIL when it failed as at BAD (same status and kind of
    failure) and no other test that passes at GOOD broke anew (as it is at neither end: a
    configuration broken another way, whose changes would not fail just their tests); PASS
    when it passed; UNRESOLVED otherwise."""
    if record.cases is None:
        return Outcome.UNRESOLVED
    case = results.lookup(record.cases, target.name)
    if case is None or case.status is Status.SKIP:
        return Outcome.UNRESOLVED
    if case.status is Status.PASS:
        return Outcome.PASS
    if case != target.at_bad or _broken_anew(record.cases, target.ends):
        return Outcome.UNRESOLVED
    return Outcome.FAIL


def _broken_anew(cases: Cases, ends: Mapping[str, Case | None]) -> bool:
    """Whether a test that passes at GOOD has a result here that it has at neither end."""
    for name, at_bad in ends.items():
        now = results.lookup(cases, name)
        if now is None or (now.status is not Status.PASS and now != at_bad):
            return True
    return False


def _sides(trials: Trials, everything: Config) -> tuple[Cases, Cases]:
    """GOOD's and BAD's test results, from their runs (taken over from the journal when it has
    them); NoTestResults when one gave none."""
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
    return sides[0], sides[1]


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
    targets = [
        Target(name=name, at_bad=after, ends=ends)
        for name, (before, after) in at.items()
        if before is not None
        and before.status is Status.PASS
        and after is not None
        and after.status in broken
        and (not request.tests or any(fnmatch.fnmatchcase(name, g) for g in request.tests))
    ]
    failing = tuple(n for n, (b, a) in at.items() if _broken(b) and _broken(a))
    passing = tuple(
        n for n, (b, a) in at.items() if _broken(b) and a is not None and a.status is Status.PASS
    )
    if not targets:
        raise errors.NoTargets(len(failing), len(passing), request.tests)
    return targets, failing, passing


def _broken(case: Case | None) -> bool:
    return case is not None and case.status in (Status.FAIL, Status.ERROR)


def _bisect(
    trials: Trials,
    target: Target,
    revisions: Revisions,
    origins: Mapping[str, tuple[str, ...]],
) -> Config:
    """--strategy auto, for one target: bisect the first-parent history by the target's
    verdicts (each commit built and tested once, for every target: its record serves them
    all), then run the changes of the commits that turned it, alone on GOOD; those changes
    (its search starts there when they fail for it)."""
    repo = trials.scratch.repo
    chain = git.first_parents(repo, revisions.good, revisions.bad)

    def test(sha: str) -> Outcome:
        config = commit_tree(sha)
        if not trials.records(config):
            _, states = trials.commit(revisions.good, sha)
            trials.run(config, Stage.BISECT, states)
        return outcome_of(trials, config, target)

    turn = bisect_history(revisions.good, chain, test)
    suspects = git.commits(repo, turn.last_good, turn.first_bad)
    alone = provenance.commits_of(origins, suspects)
    if alone and not trials.records(alone):
        trials.once(alone, Level.COMMIT)
    return alone


def _search(
    request: Request,
    trials: Trials,
    hierarchy: Hierarchy,
    target: Target,
    levels: Sequence[Level],
    width: int,
    start: Config,
) -> Found:
    """One target's search from `start`, the path its own search would take alone: its cache
    begins with GOOD and `start` only, so no outcome is implied from another target's runs
    (moving to another search's configurations by monotony led a search astray: on the click
    suite one target's search ran four times as many tests so); but a configuration another
    search ran is answered by its record, not run again."""
    cache = OutcomeCache[str](monotony=request.monotony)
    cache.store(frozenset(), outcome_of(trials, frozenset(), target))
    cache.store(start, outcome_of(trials, start, target))

    def test(config: Config, phase: Phase) -> Outcome:
        if not trials.records(config):
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
    return search.minimize(start, levels)


def _causes(
    request: Request,
    trials: Trials,
    targets: list[Target],
    found: dict[str, Found],
) -> list[Cause]:
    """Targets with the same answer, one cause each (in the order first found); each answer
    run again until it has 1 + reruns records, and GOOD once more at the end."""
    reruns = confidence.reruns(request.confidence) if request.confirm else 0
    grouped: dict[Config, list[Target]] = {}
    for target in targets:
        grouped.setdefault(found[target.name].answer, []).append(target)
    trials.offer(c for answer in grouped for c in trials.owed(answer, 1 + reruns))
    for answer in grouped:
        while len(trials.records(answer)) < 1 + reruns:
            trials.once(answer, Stage.CONFIRM)
    while reruns and len(trials.records(frozenset())) < 2:  # GOOD again, after the search
        trials.once(frozenset(), Stage.CONFIRM)
    causes = []
    for answer, mine in grouped.items():
        checks = tuple(dict.fromkeys(c for t in mine for c in found[t.name].checks))
        flaky = any(disagree(trials, c, t) for t in mine for c in (answer, frozenset(), *checks))
        backed = all(
            outcome_of(trials, answer, t) is Outcome.FAIL
            and outcome_of(trials, frozenset(), t) is Outcome.PASS
            and all(outcome_of(trials, c, t) is not Outcome.FAIL for c in found[t.name].checks)
            for t in mine
        )
        causes.append(
            Cause(
                answer=answer,
                tests=tuple(t.name for t in mine),
                runs=len(trials.records(answer)),
                checks=len(checks),
                unresolved=sum(
                    any(outcome_of(trials, c, t) is Outcome.UNRESOLVED for t in mine)
                    for c in checks
                ),
                flaky=flaky or not backed,
            )
        )
    return causes


def _unchecked(targets: list[Target], found: dict[str, Found]) -> list[Cause]:
    """An interrupted run: the answers found so far, not yet run again (not claimed)."""
    grouped: dict[Config, list[str]] = {}
    for target in targets:
        if target.name in found:
            grouped.setdefault(found[target.name].answer, []).append(target.name)
    return [
        Cause(answer=a, tests=tuple(names), runs=0, checks=0, flaky=False)
        for a, names in grouped.items()
    ]
