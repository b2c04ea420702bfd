"""The search: from a failing set of change units to a smaller one, 1-minimal by real outcomes.

Owns the hierarchical strategy (ddmin or probabilistic delta debugging, or dd with `isolate`,
level by level down the hierarchy of grouping.py: files, then functions, hunks, lines), how
dependencies steer it (and, for the probabilistic search, its prior), and the final check that
makes the answer's claims true. Pure: no git, no files, no processes. Everything it learns
about a configuration comes from the injected `test`, which must give the outcome of a real
run of *exactly* that configuration (ddchange's trial layer; a plain function in tests), and
from the cache, which holds only such outcomes.

Invariants, and where they are kept:
- The search only ever moves to configurations whose outcome was really seen (dd.py's
  `Probed`). A cache answer implied by monotony is replaced by the recorded configuration that
  implies it (`OutcomeCache.witness`), so the answer and both sides of dd's pair always have a
  real outcome: `Found.answer` was seen to FAIL, `Found.passing` to PASS.
- Dependencies are a hint, never a filter. A candidate whose units lack what they need is
  first tried as its interior (the largest dependency-closed subset, which builds); when that
  does not fail and the hint is in doubt, the plain candidate is tried too (`probe`). A hint
  in trust is still audited: when its interior cannot be tested, the plain candidate is tried
  while such tries keep resolving often enough (`_Hint.audits`): a wrong need that drops a
  change another one truly needs must not hide a FAIL one run away. A plain
  candidate that resolves (PASS or FAIL) disproves the needs it violates, which are forgotten
  (`Hierarchy.unlearn`); a build that fails for a missing name teaches one (Zeller's failure
  resolution loop, `Hierarchy.learn`). So the hint can make a search cheaper, never its answer
  larger: the answer is checked without the hint at the end.
- 1-minimality is checked by real outcomes only (`verify_minimal`, `_verify_pair`): for each
  atom of the answer at the finest level, the answer without exactly that atom has a recorded
  outcome other than FAIL; and for ddmin, so has the answer without each wider group (a unit
  with what needs it, a block, hunk, function or file) that could still fail. When one fails,
  the search goes on from there. Monotony and dependencies may skip and order work before
  that; they never certify. `Found.checks` lists the configurations whose outcomes back the
  claim, so that the caller can read them from its own records. At blocks, the caller can
  have that check go on with a block of the answer cut where its lines came from different
  commits or where the answer's own patch shows it as several hunks (`minimize(cut=)`,
  `by_origin`), and (`lines`, a triage's) a block whose removal alone passed cut into its
  line changes: the atoms are then those pieces, and whole blocks are among the wider
  removals.

Extending it:
- A level is a `model.Level`, a `Hierarchy._group_of` case that says what its units are
  grouped by, and a place in `grouping.levels_for`. Nothing here changes: each level only
  cuts the failing configuration into atoms, and the check at the end is at the finest one.
- A reducer is a search over atoms with a probe, as `dd.minimize` and
  `probabilistic.minimize` are: it must return the configuration it started from or one a
  probe saw FAIL (`Probed.config`), and never claim anything itself. Add it to `Reducer`, and
  to the choice in `_ddmin`. Its cost is pinned by property tests over oracles of known
  structure (tests/test_probabilistic.py, tests/test_search.py), its answers by the same
  check as every other's.
- The test is told the phase it is asked in (`PhasedTest`): the level, or the check
  (`Stage.VERIFY`), which the trial layer records with the run.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ddchange.diff.hunks import Diff, Hunk
from ddchange.hierarchy.grouping import Hierarchy
from ddchange.model import Level, Outcome, Phase, Source, Stage, Stats
from ddchange.search import dd, probabilistic
from ddchange.search.cache import OutcomeCache
from ddchange.search.dd import Probed, Step, split_evenly

Config = frozenset[str]
# The real outcome of exactly this configuration (a run, or a record of one).
Test = Callable[[Config], Outcome]
# The search's own test: a configuration, and the phase it is asked in (a level, or the check).
PhasedTest = Callable[[Config, Phase], Outcome]
# The names a real run of this configuration said were missing (see trial/missing.py).
Missing = Callable[[Config], frozenset[str]]
Listener = Callable[[Phase, Step[str]], None]
# Told, before a test, which configurations the search expects to test from there on, in order (see
# `Search.width`): a caller may start them early. A hint only: outcomes come from `test`.
Offer = Callable[[list[Config]], None]

# How each level is reduced: probabilistic delta debugging (probabilistic.py: ProbDD with a
# prior of about one needed atom, the hierarchy's needs bundling removals; the default) or Zeller
# and Hildebrandt's ddmin (dd.minimize). The commit level is always ddmin: its candidates stand
# for prefixes of history, which ddmin's halves bisect. ProbDD is the default because on real
# regressions, where most candidates of an interlocked change do not build, ddmin's subsets and
# complements at every granularity are mostly UNRESOLVED: on the tomlkit, attrs and Werkzeug
# cases of benchmarks/real/ it ran 2 to 3 times ProbDD's tests (benchmarks/RESULTS.md has the
# current counts). What ddmin's subset tests (keep one part only) found that ProbDD cannot,
# a culprit that fails alone past changes that crash when split (rename-hunk), the check's
# removal of all but the answer's core finds (`_wider`).
Reducer = Literal["ddmin", "probdd"]
REDUCERS: tuple[Reducer, ...] = ("ddmin", "probdd")

# A level with this many atoms or fewer is reduced by ddmin whatever the reducer: there its
# halves and quarters are few, and ProbDD's prior of about one needed atom mistakes a cause of
# two or three files for one. On the bundled samples ProbDD everywhere ran 157 tests, ddmin on
# such small levels 147 (hang: 22 and 14); on the real regressions the counts stayed within 3
# of ProbDD's everywhere (benchmarks/RESULTS.md has the current ones).
SMALL = 8

# Candidates `Search._ahead` reads per free slot at most, known ones included.
PLAN_READ = 4

# Plain candidates the hint must have kept from breaking, more than it misled, before it is
# trusted without a plain try: two builds that failed without the hint, per one that did not.
TRUST_AFTER = 2


# What cuts an answer's blocks (`Search.by_origin`): each unit's commits, and its hunk of the
# answer's own patch (diff/realign.py), for a configuration.
Cut = Callable[[Config], tuple[Mapping[str, tuple[str, ...]], Mapping[str, int]]]


@dataclass(frozen=True, kw_only=True)
class Found:
    """What the search found, and the configurations whose real outcomes back it."""

    answer: Config  # seen to FAIL
    passing: Config = frozenset()  # isolate: seen to PASS, a subset of answer
    # ddmin: answer minus each atom (none failed). dd: passing plus each atom of the
    # difference (none passed) and answer minus each (none failed).
    checks: tuple[Config, ...] = ()
    tests: int = 0  # calls to `test`
    cache_hits: int = 0
    implied: int = 0
    learned: int = 0  # builds whose missing names taught a need
    unlearned: int = 0  # plain candidates that disproved needs
    # ddmin: how many of `checks`, at their end, are wider removals (see Search._wider)
    wider: int = 0


@dataclass(kw_only=True)
class _Hint:
    """The hint's record: plain tries that broke (it was right) or resolved (it was wrong), and
    whether it ever hid a change that the answer did not need (then it is never trusted again:
    the check by real outcomes found a removable change that the interior had kept)."""

    right: int = 0
    wrong: int = 0
    misled: bool = False
    # Audits: while trusted, an interior that could not be tested is followed by a plain try,
    # which either resolved (the hint's interior was the wrong thing to run) or did not.
    rescued: int = 0
    wasted: int = 0

    def doubted(self) -> bool:
        return self.misled or self.right < TRUST_AFTER * (self.wrong + 1)

    def audits(self) -> bool:
        """Whether a trusted hint's untestable interior is worth a plain try: while such
        tries resolved at least once per TRUST_AFTER that did not."""
        return self.wasted < TRUST_AFTER * (self.rescued + 1)


@dataclass(kw_only=True)
class Search:
    """One hierarchical search over the units of `diff`; see the module docstring."""

    diff: Diff
    test: PhasedTest
    hierarchy: Hierarchy
    cache: OutcomeCache[str] = field(default_factory=OutcomeCache[str])
    missing: Missing = lambda _config: frozenset()
    listener: Listener | None = None
    stats: Stats = field(default_factory=Stats)
    # How many tests may run at once (-j N): before each probe, up to this many configurations
    # the search expects to test next are offered (`offer`); 1 offers none.
    width: int = 1
    offer: Offer = lambda _configs: None
    finest: Level = Level.LINE  # the level the answer is 1-minimal at
    reducer: Reducer = "probdd"
    level: Phase = Level.FILE
    current: Config = frozenset()  # the failing configuration the running level reduces
    best: Config = frozenset()  # the smallest configuration seen to fail (default: all units)
    best_passing: Config = frozenset()  # isolate: the largest seen to pass inside `best`
    _levels: tuple[Level, ...] = ()  # the levels the running search goes down
    _hint: _Hint = field(default_factory=_Hint)
    _unlearned: int = 0
    # The hunks of the answer's own patch that hold more than one unit (`_cut`): a hunk of two
    # atoms (line changes checked apart, the lines of two commits) is a wider removal.
    _patch_hunks: tuple[Config, ...] = ()

    def __post_init__(self) -> None:
        self._units = {unit.id: unit for unit in self.diff.hunks}
        self._order = {unit.id: n for n, unit in enumerate(self.diff.hunks)}
        self.best = self.best or frozenset(self._units)

    # -- the strategy ---------------------------------------------------------------------

    def minimize(
        self, start: Config, levels: Sequence[Level], cut: Cut | None = None, lines: bool = False
    ) -> Found:
        """ddmin down `levels` from `start` (seen to fail), then the check by real outcomes;
        where the search ends at blocks and `cut` is given, that check goes on where blocks
        are cut by commit and by the answer's own patch, and with `lines` (a triage's causes)
        into the line changes of a block whose removal passed (`by_origin`)."""
        levels = self._begin(start, levels)
        self._levels = levels
        failing = start
        for level in levels:
            failing = self._ddmin(level, failing)
        if cut is not None and levels[-1] == Level.BLOCK:
            return self.by_origin(failing, cut, lines)
        return self.verify_minimal(levels[-1], failing)

    def isolate(self, start: Config, levels: Sequence[Level]) -> Found:
        """dd down `levels`: each level works on the previous level's difference, on top of its
        passing set; then the check by real outcomes."""
        levels = self._begin(start, levels)
        passing, failing = frozenset[str](), start
        for level in levels:
            passing, failing = self._dd(level, passing, failing)
        return self._verify_pair(levels[-1], passing, failing)

    def _begin(self, start: Config, levels: Sequence[Level]) -> tuple[Level, ...]:
        """A search from `start` (seen to fail) down `levels` (their names will do too)."""
        self.best, self.finest = start, Level(levels[-1])
        return tuple(Level(level) for level in levels)

    def _ddmin(self, level: Level, failing: Config) -> Config:
        self.enter(level)
        self.current = failing

        def ahead(upcoming: Iterator[list[str]]) -> None:
            self._ahead(frozenset(c) for c in upcoming)

        small = len(self._atoms(self._ordered(failing))) <= SMALL
        if self.reducer == "ddmin" or level == Level.COMMIT or small:
            found = dd.minimize(
                self._ordered(failing),
                self._probe,
                atoms=self._atoms,
                split=split_evenly,
                ahead=ahead,
                expand=self._finer,
            )
        else:
            found = probabilistic.minimize(
                self._ordered(failing),
                self._probe,
                atoms=self._atoms,
                ahead=ahead,
                together=self._tied,
            )
        return frozenset(found)

    def _dd(self, level: Level, passing: Config, failing: Config) -> tuple[Config, Config]:
        self.enter(level)
        self.current = failing

        def probe(config: list[str]) -> Probed[str]:
            """In dd's frame: the difference on top of `passing`. A tested configuration that
            lost some of `passing` (its interior dropped them) lies outside that frame and
            moves nothing."""
            found = self._probe(self._ordered(passing | frozenset(config)))
            if not passing <= found.config:
                return Probed(Outcome.UNRESOLVED, frozenset(config))
            return Probed(found.outcome, found.config - passing)

        pair = dd.isolate(
            self._ordered(failing - passing),
            probe,
            atoms=self._atoms,
            split=split_evenly,
            ahead=lambda upcoming: self._ahead(passing | frozenset(c) for c in upcoming),
        )
        return passing | frozenset(pair.passing), passing | frozenset(pair.failing)

    # -- the check by real outcomes ---------------------------------------------------------

    def verify_minimal(self, level: Level, failing: Config) -> Found:
        """Remove each atom of `failing` in turn, for real; a removal that still fails is
        taken, and passes go on until one whole pass takes none. One pass costs a test per
        atom and takes every atom that can go on its own; on an answer of mostly unbuildable
        subsets that is far cheaper than starting ddmin again. Then the wider removals
        (`_wider`): a definition with its uses, or a whole block, hunk, function or file,
        which no single atom's removal can take out when each alone breaks the build; one
        that still fails is taken, and the atoms are checked again."""
        self.enter(Stage.VERIFY)
        while True:
            atoms = [frozenset(atom) for atom in self._atoms(self._ordered(failing))]
            if level == Level.COMMIT:
                atoms = atoms[-1:]  # prefixes of history: one commit shorter must not fail
            failing, removed = self._remove_each(failing, atoms)
            wider = self._wider(failing, atoms) if level != Level.COMMIT and not removed else []
            if not removed:
                failing, removed = self._remove_each(failing, wider)
            if not removed:
                checks = [failing - atom for atom in atoms] + [failing - group for group in wider]
                return self._found(failing, frozenset(), tuple(checks), len(wider))

    def refine(self, answer: Config, level: Level) -> Found:
        """The check by real outcomes again, for an answer of the search, at `level` (finer
        than the search went): each of its atoms there removed in turn, and the wider
        removals; removals the search ran already are taken from the cache."""
        self._focus(answer, level)
        return self.verify_minimal(level, answer)

    def _focus(self, answer: Config, level: Level) -> None:
        """A check of `answer` at `level` from here on: the best and running configuration."""
        self.best, self.current, self.finest = answer, answer, level

    def by_origin(self, answer: Config, cut: Cut, lines: bool = False) -> Found:
        """The check by real outcomes of `answer` (the search's, at the block level), then,
        where a block of what it leaves holds lines that came from more than one commit, or
        shows as more than one hunk in the answer's own patch (`cut` gives each unit's commits
        and its hunk of that patch's `git diff -U0`, which can align a block otherwise than
        GOOD..BAD did, diff/realign.py), or, with `lines`, is one whose removal alone passed,
        the check again with each block cut there (`refine` at the origin level), so that no
        block of two commits, no hunk of the patch the user gets, and (with `lines`) no line
        change of a block the failure itself needs stands in the answer unless it is needed.
        `lines` is a triage's (suite.py: its causes are 1-minimal per line change), not a
        single search's at block granularity, where on benchmarks/real's attrs history it
        cost 52 runs more (152, not 100) to take 4 of 61 line changes. Blocks first: their removals
        take more at a time than their pieces' (checked at the pieces at once, the whole-range
        triage of benchmarks/real's click history kept a cause of 56 line changes, not 19).
        A block whose removal could not be tested is not cut into its lines (their removals
        would break the build as the block's did: an implication that only spares runs; no
        claim of 1-minimality is made for such a block, see report/words.py). Each hunk of the
        patch that holds two atoms (line changes checked apart, or the lines of two commits)
        is among the wider removals: two lines that cannot go one without the other can go as
        the hunk they make (on benchmarks/real's click history, `default_string = split_opt(`
        and `)[1]`).

        The patch of a smaller answer is aligned anew and can cut new pieces; each piece not
        tried before is removed once, and while that takes one the answer is aligned again.
        Only then the whole check at the origin level, whose removals back the answer's
        claims; when it takes one, the loop goes on. On an answer whose removals mostly break
        the build, a whole check after each piece taken would cost a pass each to take
        nothing (benchmarks/real's dateutil history, `--strategy diff`)."""
        found = self.verify_minimal(Level.BLOCK, answer)
        failing, alone = found.answer, self._alone(found, lines)
        tried = {frozenset(atom) for atom in self._atoms(self._ordered(failing))}
        while True:
            if self._cut(failing, cut, alone):
                self._focus(failing, Level.ORIGIN)
                atoms = [frozenset(atom) for atom in self._atoms(self._ordered(failing))]
                new = [atom for atom in atoms if atom not in tried]
                tried.update(new)
                failing, removed = self._remove_each(failing, new)
                if removed:
                    continue
            elif found.answer == failing:
                return found  # checked whole where nothing is cut
            found = self.refine(failing, Level.ORIGIN)
            grown = self._alone(found, lines) - alone
            if found.answer == failing and not grown:
                return found
            failing, alone = found.answer, alone | grown

    def _alone(self, found: Found, lines: bool) -> frozenset[str]:
        """With `lines`, the units of each atom of `found`'s answer whose removal alone was
        seen to pass; without, none."""
        if not lines:
            return frozenset()
        removals = found.checks[: len(found.checks) - found.wider]
        return frozenset().union(*self._passed(found.answer, [found.answer - c for c in removals]))

    def _passed(self, failing: Config, atoms: list[Config]) -> list[Config]:
        """The atoms of `failing` whose removal alone was seen to pass (what the failure
        itself needs, where the others may be needed only to build)."""
        return [atom for atom in atoms if self.cache.exact(failing - atom) is Outcome.PASS]

    def _cut(self, answer: Config, cut: Cut, alone: Config) -> bool:
        """Learn where `cut` cuts the blocks of `answer`, and each line change of `alone`
        apart; whether that cuts any."""
        origins, pieces = cut(answer)
        hunks: dict[int, set[str]] = {}
        for unit in answer:
            if unit in pieces:
                hunks.setdefault(pieces[unit], set()).add(unit)
        self._patch_hunks = tuple(frozenset(h) for _, h in sorted(hunks.items()) if len(h) > 1)
        first = max(pieces.values(), default=0) + 1
        single = {unit: first + n for n, unit in enumerate(self._ordered(alone & answer))}
        self.hierarchy.know_origins({unit: origins.get(unit, ()) for unit in answer})
        self.hierarchy.know_pieces({**pieces, **single})
        units = self._hunks(answer)
        cuts = self.hierarchy.groups(Level.ORIGIN, units)
        return len(cuts) != len(self.hierarchy.groups(Level.BLOCK, units))

    def _remove_each(self, failing: Config, removals: list[Config]) -> tuple[Config, bool]:
        """`failing` without each of `removals` in turn, run for real; every one that still
        fails is taken. The configuration left, and whether any was taken."""
        removed = False
        for index, group in enumerate(removals):
            if not group <= failing:
                continue  # a removal taken before took part of it
            self._exactly_ahead(failing - later for later in removals[index:] if later <= failing)
            rest = failing - group
            if self._exact(rest) is Outcome.FAIL:
                self._misled(rest)
                failing, removed = rest, True
        return failing, removed

    def _wider(self, failing: Config, atoms: list[Config]) -> list[Config]:
        """The removals from `failing` larger than one atom that could still fail, widest
        first. First, everything but its core: the atoms whose removal alone passed (they are
        needed for the failure itself, where the others may be needed only to build), with
        what they need; a culprit written in terms of a rename, say, whose other changes
        crash when split, fails alone there, which no removal of one atom or group can show.
        Then each of its files, functions, hunks and blocks (lines with no unchanged line
        between them) and each atom, with the units that need what goes (the dependencies as
        a prior: what goes together is removed together; when the hint is in doubt the plain
        group is tried as well). A removal is left out when it is one atom or all of
        `failing`, or, under monotony, when it holds an atom whose removal alone passed:
        removing more of a passing configuration passes too (an implication that only spares
        the run; no claim rests on it, since the removal is then not a check)."""
        units = self._hunks(failing)
        passed = self._passed(failing, atoms)
        core = frozenset().union(*passed)
        removals = [failing - self.hierarchy.closure(core, failing)] if core else []
        if core and self._hint.doubted():
            removals.append(failing - core)
        groups = [
            frozenset(group.members)
            for level in (Level.FILE, Level.FUNCTION, Level.HUNK, Level.BLOCK)
            for group in self.hierarchy.groups(level, units)
        ]
        groups += [hunk for hunk in self._patch_hunks if hunk <= failing]
        groups += atoms
        for group in groups:
            closed = failing - self.hierarchy.interior(failing - group)
            removals += [closed, group] if self._hint.doubted() else [closed]
        wanted = [
            removal
            for removal in removals
            if removal != failing
            and sum(atom <= removal for atom in atoms) > 1
            and not (self.cache.monotony and any(atom <= removal for atom in passed))
        ]
        return list(dict.fromkeys(wanted))

    def _verify_pair(self, level: Level, passing: Config, failing: Config) -> Found:
        """Try each atom of the difference on both sides, for real: one that passes on top of
        the passing set moves it up, one whose removal still fails moves the failing set
        down. Passes go on until one whole pass moves nothing (as in `verify_minimal`)."""
        self.enter(Stage.VERIFY)
        while True:
            atoms = self._atoms(self._ordered(failing - passing))
            moved = False
            for index, atom in enumerate(map(frozenset, atoms)):
                if not atom <= failing - passing:
                    continue
                self._exactly_ahead(
                    config
                    for later in map(frozenset, atoms[index:])
                    for config in (passing | later, failing - later)
                )
                if self._exact(passing | atom) is Outcome.PASS:
                    self._misled(passing | atom)
                    passing, moved = passing | atom, True
                elif self._exact(failing - atom) is Outcome.FAIL:
                    self._misled(failing - atom)
                    failing, moved = failing - atom, True
            if not moved:
                checks = tuple(
                    config
                    for atom in map(frozenset, atoms)
                    for config in (passing | atom, failing - atom)
                )
                return self._found(failing, passing, checks)

    def _misled(self, config: Config) -> None:
        """The check found a move the search had missed: where the hint's interior stood in
        for `config`, the needs it violates are disproved and the hint loses its trust."""
        if self.hierarchy.unlearn(config):
            self._unlearned += 1
            self._hint.misled = True

    def _ahead(self, candidates: Iterator[Config]) -> None:
        """Offer what the next probes of `candidates` would test first: the interior where it
        differs (the plain candidate too when the hint is in doubt), unless the cache knows."""
        if self.width < 2 or self.level == Level.COMMIT:
            return
        upcoming: list[Config] = []
        # Planning is bounded in count: each candidate read costs an interior, and in ddmin's
        # plan the atoms of finer levels (dd._speculated), so when the cache knows most of them
        # reading on until `width` unknown ones turn up could keep the main thread busy while
        # slots sit idle.
        for plain in itertools.islice(candidates, PLAN_READ * self.width):
            closed = self.hierarchy.interior(plain)
            tried = [closed] if closed == plain or not self._hint.doubted() else [closed, plain]
            upcoming += [config for config in tried if self.cache.lookup(config) is None]
            if len(upcoming) >= self.width:
                break
        self.offer(upcoming)

    def _tied(self, atoms: list[list[str]]) -> list[int]:
        """The prior's bundles (probabilistic.Together): atoms joined by a need, either way,
        share the key of the first of them, so that the search removes them together while
        it knows nothing else. Read once per level; the needs only order the search."""
        atom_of = {unit: k for k, atom in enumerate(atoms) for unit in atom}
        root = list(range(len(atoms)))

        def find(k: int) -> int:
            while root[k] != k:
                root[k] = root[root[k]]
                k = root[k]
            return k

        needs = self.hierarchy.needs
        for unit, k in atom_of.items():
            for provider in needs.get(unit, ()):
                if provider in atom_of:
                    a, b = find(k), find(atom_of[provider])
                    root[max(a, b)] = min(a, b)
        return [find(k) for k in range(len(atoms))]

    def _finer(self, config: list[str]) -> list[list[str]]:
        """The atoms of `config` at the running level, or, when it is one atom, at the levels
        below, where the search goes on with it: what runs ahead splits (see dd._speculated)."""
        atoms = self._atoms(config)
        below = (
            self._levels[self._levels.index(self.level) + 1 :] if self.level in self._levels else ()
        )
        units = [self._units[unit] for unit in config]
        for level in below:
            if len(atoms) > 1:
                break
            atoms = [list(group.members) for group in self.hierarchy.groups(level, units)]
        return atoms

    def _exactly_ahead(self, configs: Iterable[Config]) -> None:
        """Offer the first of `configs` that have no record yet (the check's tests)."""
        if self.width >= 2:
            unknown = (config for config in configs if self.cache.exact(config) is None)
            self.offer(list(itertools.islice(unknown, self.width)))

    def _exact(self, config: Config) -> Outcome:
        """The real outcome of exactly `config`: a record, or a run; never an implication."""
        known = self.cache.exact(config)
        return known if known is not None else self._run(config)

    def _found(
        self, answer: Config, passing: Config, checks: tuple[Config, ...], wider: int = 0
    ) -> Found:
        return Found(
            answer=answer,
            passing=passing,
            checks=checks,
            tests=self.stats.tests_run,
            cache_hits=self.stats.cache_hits,
            implied=self.stats.implied,
            learned=self.hierarchy.learned,
            unlearned=self._unlearned,
            wider=wider,
        )

    # -- probes: what a candidate is tested as ---------------------------------------------

    def probe(self, config: Config) -> Probed[str]:
        """The outcome of one configuration as the search finds it out: its interior first,
        then, when that does not fail and the hint is in doubt, the configuration itself."""
        closed = self.hierarchy.interior(config)
        inside: Outcome | None = None
        audit = False
        if closed != config:
            found = self._resolving(closed)
            if found.outcome is Outcome.FAIL:
                return found
            if not self._hint.doubted():
                audit = found.outcome is Outcome.UNRESOLVED and self._hint.audits()
                if not audit:
                    return found
            inside = found.outcome
        found = self._ask(config)
        if inside is not None:
            self._judge_hint(config, inside, found.outcome, audit)
        return found

    def _probe(self, candidate: list[str]) -> Probed[str]:
        """A candidate of the running level, probed; at the commit level it stands for the
        prefix of history it holds whole (see Hierarchy.prefix)."""
        plain = frozenset(candidate)
        if self.level == Level.COMMIT:
            groups = self.hierarchy.groups(Level.COMMIT, self._hunks(self.current))
            plain = self.hierarchy.prefix(groups, plain)
        return self.probe(plain)

    def _judge_hint(self, plain: Config, inside: Outcome, outcome: Outcome, audit: bool) -> None:
        """The hint was right when the plain candidate did not build and its interior did (a
        PASS), wrong when the plain candidate resolved (its needs are disproved); when neither
        built, it told nothing. A test that rarely builds at all would otherwise count every
        try as the hint's success, and trust it while its interiors never fail. An audit (a
        trusted hint's interior did not build) is scored apart: see `_Hint.audits`."""
        if audit:
            self._hint.rescued += outcome is not Outcome.UNRESOLVED
            self._hint.wasted += outcome is Outcome.UNRESOLVED
        if outcome is Outcome.UNRESOLVED:
            self._hint.right += inside is not Outcome.UNRESOLVED
        elif self.hierarchy.unlearn(plain):
            self._hint.wrong += 1
            self._unlearned += 1

    def _resolving(self, config: Config) -> Probed[str]:
        """`config`, and while its build fails for want of a name that another change defines,
        its interior with the need that reveals (Zeller's failure resolution loop)."""
        found = self._ask(config)
        while found.outcome is Outcome.UNRESOLVED and self.hierarchy.learn(
            found.config, self.missing(found.config)
        ):
            found = self._ask(self.hierarchy.interior(found.config))
        return found

    def _ask(self, config: Config) -> Probed[str]:
        """From the cache when it knows (an implied answer stands for the recorded
        configuration that implies it), else from a real test."""
        hit = self.cache.lookup(config)
        if hit is None:
            outcome = self._run(config)
            return Probed(outcome, config)
        witness = self.cache.witness(config, hit.outcome) if hit.implied else config
        if hit.implied:
            self.stats.implied += 1
            self._keep(witness, hit.outcome)
        else:
            self.stats.cache_hits += 1
        self._report(config, hit.outcome, Source.IMPLIED if hit.implied else Source.CACHE)
        return Probed(hit.outcome, witness)

    def _run(self, config: Config) -> Outcome:
        outcome = self.test(config, self.level)
        self.cache.store(config, outcome)
        self.stats.tests_run += 1
        self.stats.outcomes[outcome] += 1
        self._report(config, outcome, Source.TEST)
        return outcome

    def _report(self, config: Config, outcome: Outcome, source: Source) -> None:
        if source is not Source.IMPLIED:  # only what was seen may become the best answer
            self._keep(config, outcome)
        if self.listener is not None:
            self.listener(
                self.level,
                Step(
                    config=config,
                    outcome=outcome,
                    source=source,
                    failing=self.best,
                    passing=self.best_passing,
                ),
            )

    def _keep(self, config: Config, outcome: Outcome) -> None:
        """Track the smallest configuration seen to fail, the failing one the running level
        reduces, and (dd) the largest seen to pass inside the smallest failing one."""
        if outcome is Outcome.FAIL and config < self.current:
            self.current = config
        if outcome is Outcome.FAIL and len(config) < len(self.best):
            self.best = config
            if not self.best_passing <= config:
                self.best_passing = frozenset()
        if outcome is Outcome.PASS and len(config) > len(self.best_passing) and config < self.best:
            self.best_passing = config

    # -- units, in diff order, and their atoms -------------------------------------------------

    def enter(self, level: Phase) -> None:
        self.level = level

    def _ordered(self, config: Config) -> list[str]:
        return sorted(config, key=self._order.__getitem__)

    def _hunks(self, config: Config) -> list[Hunk]:
        return [self._units[unit] for unit in self._ordered(config)]

    def _atoms(self, config: list[str]) -> list[list[str]]:
        level = self.finest if self.level == Stage.VERIFY else Level(self.level)
        units = [self._units[unit] for unit in config]
        return [list(group.members) for group in self.hierarchy.groups(level, units)]


def minimize(
    diff: Diff,
    test: Test,
    *,
    levels: Sequence[Level] = (Level.FILE, Level.FUNCTION, Level.HUNK, Level.BLOCK, Level.LINE),
    dependencies: bool = True,
    monotony: bool = True,
    isolate: bool = False,
    start: Config | None = None,
    hierarchy: Hierarchy | None = None,
    cache: OutcomeCache[str] | None = None,
    missing: Missing | None = None,
    listener: Listener | None = None,
    reducer: Reducer = "probdd",
) -> Found:
    """`reducer` (or with `isolate`, dd) level by level down `levels`, then checked by real
    outcomes; see the module docstring.

    `test` gets configurations as frozensets of the ids of `diff.hunks` (for the "line" level,
    pass `linechanges.split_lines(diff)`, whose units are line changes). Precondition, not tested
    here: the empty configuration passes and `start` (default: all of `diff.hunks`) fails; a
    cache given here should already hold both.
    """
    search = Search(
        diff=diff,
        test=lambda config, _phase: test(config),
        hierarchy=hierarchy or Hierarchy(diff, dependencies=dependencies),
        cache=cache if cache is not None else _known_ends(diff, start, monotony),
        missing=missing or (lambda _config: frozenset()),
        listener=listener,
        reducer=reducer,
    )
    everything = start if start is not None else frozenset(unit.id for unit in diff.hunks)
    return (search.isolate if isolate else search.minimize)(everything, levels)


def _known_ends(diff: Diff, start: Config | None, monotony: bool) -> OutcomeCache[str]:
    """A cache holding the precondition: ∅ passes and the start fails."""
    cache = OutcomeCache[str](monotony=monotony)
    cache.store(frozenset(), Outcome.PASS)
    cache.store(start if start is not None else frozenset(u.id for u in diff.hunks), Outcome.FAIL)
    return cache
