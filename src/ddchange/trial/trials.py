"""Trials: the only place where a configuration gets an outcome.

Owns materializing a configuration in the scratch tree, building and testing it (runner.py),
and recording the run in this run's journal and log before anything else sees its outcome.
Everything that ddchange states about a configuration ("fails", "passes without this change")
is read back from these records (`claim`), and whether they back a search's answer (`backs`) is
decided here too, never inferred beside them.

Runs in parallel (`-j N`, `ahead`): configurations the search will ask about next may run
ahead in other scratch trees, but a run becomes a record only when it is asked for, in the
order it is asked for; so the records, and every decision taken from them, are the same for
every N.

Flakiness, as search/confidence.py models it (a flaky test fails at random and never passes at
random): the outcome of a configuration is the one all its recorded runs agree on (its earlier
runs in resumed attempts included); where some passed and the others failed it is PASS, a
fact, and its FAILs came at random; where an UNRESOLVED run is among others that disagree, it
is UNRESOLVED. Every disagreement is kept as evidence for the report, and the FAILs at random
give the flake rate (`flake_rate`), by which a FAIL is run again before it is an outcome
(`run`, `settle`): never for a test that has not failed at random.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ddchange import errors, git
from ddchange.diff import content, read
from ddchange.diff.hunks import Diff, FileState
from ddchange.model import (
    Claim,
    Disagreement,
    Outcome,
    Phase,
    Stage,
    TestRecord,
    commit_tree,
    whole_tree,
)
from ddchange.search import confidence
from ddchange.search.hierarchical import Found
from ddchange.trial import attempt, runner
from ddchange.trial.ahead import Ahead
from ddchange.trial.journal import REPLAYED, Journal, RunInfo
from ddchange.trial.missing import missing_names
from ddchange.trial.results import Source
from ddchange.trial.worktree import Scratch

States = Mapping[str, FileState | None]
Config = frozenset[str]


@dataclass(frozen=True, kw_only=True)
class Setup:
    """How and where the configurations of `diff` are built and tested, and under which key
    their runs are recorded: fixed for the whole run."""

    diff: Diff
    scratch: Scratch
    journal: Journal
    key: str
    command: tuple[str, ...]
    where: Path  # the directory the test runs in: the user's subdirectory of the scratch tree
    build: str | None = None
    timeout: float | None = None
    retries: int = 0
    clean: bool = False  # git clean -fdx before each test: no build output of another one
    # --keep's files as in BAD and --ignore's as in GOOD, put over every configuration, so the
    # search never changes them (not even a commit's tree).
    pinned: Mapping[str, FileState | None] = field(default_factory=dict)
    # --results: where each run's per-test results are, read into its record
    results: tuple[Source, ...] = ()


@dataclass(kw_only=True)
class Trials:
    """Real runs of configurations, as `setup` says, and their records: the settings, who is
    told of each run, the records (indexed by configuration), and what the run learned as it
    went (the failure BAD showed, a commit's stray files, the slots that run ahead)."""

    setup: Setup
    on_record: Callable[[TestRecord], None] = lambda _record: None
    # A build and test begins: its configuration, its phase, how many others are going.
    on_start: Callable[[frozenset[str], Phase, int], None] = lambda _config, _phase, _others: None
    # -- the records ---------------------------------------------------------------------------
    log: list[TestRecord] = field(default_factory=list)
    # The same records by configuration, in the order they were made: what a claim reads
    _by_config: dict[Config, list[TestRecord]] = field(default_factory=dict, init=False)
    resumed: int = 0
    before: RunInfo | None = None  # this run as the journal knew it before `resume`
    tests_run: int = 0  # real runs made by this process
    command_time: float = 0.0
    # Each configuration whose runs disagree, with the evidence of all its runs so far
    # (asked again, its latest evidence replaces the earlier one: listed once).
    disagreed: dict[frozenset[str], Disagreement] = field(default_factory=dict)
    # Runs of passing configurations, and FAILs among them, seen by another trial layer of the
    # same run (the bisection, for the search inside the history): the flake rate counts them.
    flakes_before: tuple[int, int] = (0, 0)
    # -- what the run learns as it goes ---------------------------------------------------------
    expect: runner.Expectation = field(default_factory=lambda: runner.Expectation(None, None))
    # Paths outside the diff that a commit's tree wrote (bisection), with GOOD's state: every
    # later configuration puts them back, so no file of a commit is left behind.
    strays: dict[str, FileState | None] = field(default_factory=dict)
    # With -j N: the runs ahead, over N scratch trees (the first is `setup.scratch`); None:
    # one tree, every run made when asked.
    ahead: Ahead | None = None
    # With -j N: the commits' own trees (`commit`), by their configuration, that runs ahead
    # write in whichever tree they run. Rebound, never changed in place, as `strays` is: a
    # run ahead reads them in its own thread.
    trees: dict[frozenset[str], States] = field(default_factory=dict)

    @property
    def diff(self) -> Diff:
        return self.setup.diff

    @property
    def scratch(self) -> Scratch:
        return self.setup.scratch

    def offer(self, upcoming: Iterable[frozenset[str]]) -> None:
        """Configurations the caller will ask about next, in that order: with -j N, free
        trees start running them now."""
        if self.ahead is not None:
            self.ahead.offer(list(upcoming))

    def running(self) -> int:
        """How many builds and tests are going now, besides the one the caller waits for."""
        return 0 if self.ahead is None else max(self.ahead.running() - 1, 0)

    def unused(self) -> int:
        """Runs made ahead that no one asked for (not records: see the module docstring)."""
        return 0 if self.ahead is None else self.ahead.unused

    @property
    def disagreements(self) -> list[Disagreement]:
        """The evidence of a flaky test: one entry per configuration whose runs disagree."""
        return list(self.disagreed.values())

    def spread(self, ahead: Ahead) -> int:
        """From now on, run ahead in the slots of `ahead`; how many tests may run at once."""
        self.ahead = ahead
        return ahead.width

    def alone(self) -> None:
        """From now on, run every test in `setup.scratch`: the slots that ran ahead are
        stopped (and their caller closes them)."""
        self.stop_ahead()
        self.ahead = None
        self.trees = {}

    def stop_ahead(self) -> None:
        """End the runs ahead, so that `scratch` is the caller's alone again."""
        if self.ahead is not None:
            self.ahead.stop()

    def resume(self, request: str) -> None:
        """Take over the records of earlier attempts of this run (their outcomes: `settled`).
        The run as the journal knew it before (`before`) says where they came from."""
        self.before = self.setup.journal.begin(self.setup.key, request)
        records = self.setup.journal.records(self.setup.key)
        known = {hunk.id for hunk in self.diff.hunks}
        # Runs of the same command with another --strategy share the key (it chooses which
        # tests run, not what one answers) but not the changes: the whole range's units
        # (--strategy diff, history) are none of the bisection's trees, and each strategy
        # numbers its units its own way. Their records stay in the journal for them.
        self.log = [r for r in records if whole_tree(r.config) or r.config <= known]
        if len(self.log) < len(records) and self.before and self.before.request.get(REPLAYED):
            strange = {i for r in records for i in r.config if not whole_tree(r.config)} - known
            raise errors.UnknownChanges(tuple(sorted(strange)))  # an edited log's test lines
        self.resumed = len(self.log)
        for record in self.log:
            self._by_config.setdefault(record.config, []).append(record)
        # A suite's tests are read from their results, never from BAD's exit code: a fresh
        # triage adopts none, and so neither does one resumed.
        for record in self.log if not self.setup.results else ():
            if record.phase == Stage.BAD and record.outcome is Outcome.FAIL:
                # an earlier version kept no names of a FAIL: those its output's end gives
                names = record.missing or frozenset(missing_names(record.tail))
                self.adopt_failure(record.exit_code, names)
        for records in self._by_config.values():
            self._agreed(records)  # the evidence of disagreements taken over

    def adopt_failure(self, exit_code: int | None, missing: frozenset[str]) -> None:
        """BAD's exit code becomes *the* failure: another exit code is a different failure,
        and so is a run that says a name is missing that BAD's run (`missing`) did not.
        Runs ahead were judged by the old rule: they go."""
        self.stop_ahead()
        self.expect = runner.Expectation(exit_code, self.expect.pattern, missing)

    def run(self, config: frozenset[str], phase: Phase, states: States | None = None) -> Outcome:
        """The outcome of `config` from 1 + retries real runs, recorded under `phase`, with
        its earlier runs (see the module docstring); a FAIL is run again as the flake rate
        asks (`settle`)."""
        runs = [self.once(config, phase, states).outcome]
        while runs[-1] is not Outcome.UNRESOLVED and len(runs) <= self.setup.retries:
            runs.append(self.once(config, phase, states).outcome)
        return self.settle(config, phase, lambda: states)

    def settle(
        self,
        config: frozenset[str],
        phase: Phase,
        write: Callable[[], States | None] = lambda: None,
        runs: int = 1,
    ) -> Outcome:
        """The outcome of `config` once it has `runs` records at least and, where they all
        failed, as many FAILs as the flake rate asks before a FAIL is acted on
        (confidence.fails_needed: one while the test has not failed at random); run under
        `phase`, its tree written by what `write` gives (None: the configuration itself)."""
        while True:
            records = self.records(config)
            outcome = self._agreed(records)
            wanted = runs if outcome is not Outcome.FAIL else max(runs, self.fails_needed())
            if len(records) >= wanted or outcome is Outcome.UNRESOLVED and records:
                return outcome
            states = write()
            if states is None or config in self.trees:
                self.offer([config])
            self.once(config, phase, states)

    def flakes(self, besides: Collection[Config] = ()) -> tuple[int, int]:
        """The runs of the configurations seen to pass (but those `besides`), and the FAILs
        among them (with those of `flakes_before`): the evidence of FAILs at random."""
        runs, fails = self.flakes_before
        for config, records in self._by_config.items():
            if config not in besides:
                seen = confidence.at_random([r.outcome for r in records])
                runs, fails = runs + seen[0], fails + seen[1]
        return runs, fails

    def flake_rate(self) -> float:
        """The rate at which the test fails at random (confidence.flake_rate): 0 while no run
        of a configuration seen to pass failed."""
        runs, fails = self.flakes()
        return confidence.flake_rate(fails, runs)

    def fails_needed(self) -> int:
        """FAILs in a row before a FAIL is an outcome the search acts on."""
        return confidence.fails_needed(self.flake_rate())

    def settled(self) -> dict[frozenset[str], Outcome]:
        """Every configuration's outcome that needs no more runs (`settle`): a search that
        starts again is told these, and asks for the others."""
        needed = self.fails_needed()
        known = {}
        for config, records in self._by_config.items():
            outcome = self._agreed(records)
            if outcome is not Outcome.FAIL or len(records) >= needed:
                known[config] = outcome
        return known

    def once(
        self, config: frozenset[str], phase: Phase, states: States | None = None
    ) -> runner.Verdict:
        """Materialize `config` (or write `states`) in the scratch tree, build and test it, and
        record the run under `phase`: the one way an outcome comes into being. With -j N (and
        no `states`, or a commit's tree that `commit` made), the run is the one made ahead, or
        one made now in a free tree."""
        self.on_start(config, phase, self.running())
        if self.ahead is not None and (states is None or config in self.trees):
            verdict = self.ahead.take(config)
        else:
            self.stop_ahead()  # a commit's tree: written where no run ahead may be going
            verdict = self._try(self.scratch, config, states)
        self._record(config, phase, verdict)
        return verdict

    def recipe(self) -> attempt.Recipe:
        """How a configuration is run now (the expectation and strays change during a run)."""
        subdirectory = self.setup.where.relative_to(self.scratch.path).as_posix()
        return attempt.Recipe(
            diff=self.diff,
            command=self.setup.command,
            subdirectory="" if subdirectory == "." else subdirectory,
            build=self.setup.build,
            timeout=self.setup.timeout,
            expect=self.expect,
            clean=self.setup.clean,
            pinned=self.setup.pinned,
            strays=self.strays,
            results=self.setup.results,
        )

    def _try(self, tree: Scratch, config: frozenset[str], states: States | None) -> runner.Verdict:
        """`config` (or `states`) written in `tree`, built and tested there; not recorded."""
        return attempt.attempt(self.recipe(), tree, config, states)

    def run_ahead(self, tree: Scratch, config: frozenset[str]) -> runner.Verdict:
        """A run of `config` in `tree`, for `ahead.Ahead` (in its thread; not recorded)."""
        return self._try(tree, config, self.trees.get(config))

    def repeat(
        self, config: frozenset[str], runs: int, phase: Phase, states: States | None = None
    ) -> tuple[Outcome, list[TestRecord]]:
        """`config` (or `states`, under the name `config`) run under `phase` until it holds
        `runs` records in all (an earlier attempt's, the search's and retries' included), or
        until they disagree: a test that fails at random shows here. The outcome its records
        agree on (UNRESOLVED, with the evidence kept, when they disagree), and those records."""
        while len(mine := self.records(config)) < runs and len(_outcomes(mine)) < 2:
            if states is None or config in self.trees:
                self.offer(self.owed(config, runs))
            self.once(config, phase, states)
        records = self.records(config)
        return self._agreed(records), records

    def owed(self, config: frozenset[str], runs: int) -> list[frozenset[str]]:
        """`config` as many times as it lacks records to have `runs` of them."""
        return [config] * max(runs - len(self.records(config)), 0)

    def commit(self, good: str, sha: str) -> tuple[frozenset[str], States]:
        """The tree of commit `sha`, exactly as git has it, as the configuration
        {"commit:<sha>"} (so that a resumed run knows its records) and the states that write
        it: every path any configuration may have written is set to the commit's content (or
        removed), so nothing of an earlier configuration is left behind. Run it with `run` or
        `repeat`; with -j N it may be offered (`offer`) to run ahead."""
        repo = self.scratch.repo
        touched = set(content.touched_paths(self.diff))
        strays = set(git.changed_paths(repo, good, sha)) - touched
        self.strays = {**self.strays, **read.tree_states(repo, good, strays - set(self.strays))}
        states = read.tree_states(repo, sha, touched | set(self.strays))
        config = commit_tree(sha)
        if self.ahead is not None:  # a run ahead writes it in another tree
            self.trees = {**self.trees, config: states}
        return config, states

    def adopt(self, config: frozenset[str], records: list[TestRecord]) -> None:
        """Take `records` of another run of this journal over as records of `config`, unless
        it took them over before (in an earlier attempt): runs of the very tree that `config`
        writes here (the bisection's runs of the commits the search goes on between). Kept
        under the phase "bisect", which this run's own tests never have, and in the journal (a
        resumed run has them); counted in neither `tests_run` nor `resumed` (those taken over
        in an earlier attempt were read back with its records: they are no test of it)."""
        if taken := sum(record.phase == Stage.BISECT for record in self.records(config)):
            self.resumed -= taken
            return
        for record in records:
            adopted = dataclasses.replace(
                record, number=len(self.log) + 1, config=config, phase=Stage.BISECT
            )
            self.setup.journal.append(self.setup.key, adopted)
            self.log.append(adopted)
            self._by_config.setdefault(config, []).append(adopted)

    def claim(self, config: frozenset[str]) -> Claim | None:
        """What this run's records say about exactly `config`; None if it never ran."""
        records = self.records(config)
        if not records:
            return None
        fails = sum(r.outcome is Outcome.FAIL for r in records)
        return Claim(config=config, outcome=verdict(records), runs=len(records), fails=fails)

    def claims(self, configs: tuple[frozenset[str], ...]) -> list[Claim]:
        """The claims about those of `configs` that ran."""
        return [claim for config in configs if (claim := self.claim(config)) is not None]

    def backs(self, found: Found | None, *, isolate: bool) -> bool:
        """Whether the records back every claim "found" makes: the answer failed in every run
        and each check gave what 1-minimality needs (a check that passed once passes)."""
        if found is None:
            return False
        answer = self.claim(found.answer)
        checks = self.claims(found.checks)
        if answer is None or answer.outcome is not Outcome.FAIL or len(checks) != len(found.checks):
            return False
        if isolate:  # checks alternate: the passing set grown by one, the failing set shrunk
            passing = self.claim(found.passing)
            if passing is None or passing.outcome is not Outcome.PASS:
                return False
            return all(c.outcome is not Outcome.PASS for c in checks[0::2]) and all(
                c.outcome is not Outcome.FAIL for c in checks[1::2]
            )
        return all(c.outcome is not Outcome.FAIL for c in checks)

    def missing(self, config: frozenset[str]) -> frozenset[str]:
        """The names the latest run of `config` said were missing (for the failure resolution
        loop); kept in the journal, so that a resumed run learns the same."""
        records = self.records(config)
        return records[-1].missing if records else frozenset()

    def _record(self, config: frozenset[str], phase: Phase, verdict: runner.Verdict) -> None:
        executions = [e for e in (verdict.build, verdict.test) if e is not None]
        duration = sum(e.duration for e in executions)
        last = executions[-1] if executions else None
        output = "" if last is None else last.output
        record = TestRecord(
            number=len(self.log) + 1,
            phase=phase,
            config=config,
            outcome=verdict.outcome,
            reason=verdict.reason,
            exit_code=None if last is None else last.exit_code,
            duration=duration,
            tail="" if last is None else last.tail,
            missing=frozenset(missing_names(output))
            if self._reads_missing(verdict)
            else frozenset(),
            cases=verdict.cases,
        )
        self.setup.journal.append(self.setup.key, record)
        self.log.append(record)
        self._by_config.setdefault(config, []).append(record)
        self.tests_run += 1
        self.command_time += duration
        self.on_record(record)

    def _reads_missing(self, verdict: runner.Verdict) -> bool:
        """Whether a run's output is read for missing names: where it could not be tested
        (they teach the search a need), and, without --results, where it failed (BAD's are
        the names its failure may miss: `adopt_failure`). A suite's run fails whenever one
        of its tests does, and its output is no build's."""
        return verdict.outcome is Outcome.UNRESOLVED or (
            verdict.outcome is Outcome.FAIL and not self.setup.results
        )

    def records(self, config: frozenset[str]) -> list[TestRecord]:
        """Every record of exactly `config` in this run (earlier attempts' included), oldest
        first."""
        return list(self._by_config.get(config, ()))

    def _agreed(self, records: list[TestRecord]) -> Outcome:
        """The outcome of one configuration by all its `records` (`verdict`); where they
        disagree, note the evidence, in place of any noted before for that configuration."""
        if len(_outcomes(records)) > 1:
            last = records[-1]
            self.disagreed[last.config] = Disagreement(
                last.phase, last.size, tuple(r.outcome for r in records)
            )
        return verdict(records)


def verdict(records: list[TestRecord]) -> Outcome:
    """The outcome of one configuration by all its runs (confidence.outcome_of_runs)."""
    return confidence.outcome_of_runs([r.outcome for r in records])


def _outcomes(records: list[TestRecord]) -> set[Outcome]:
    return {r.outcome for r in records}
