"""Reducing a failing input: the strategy of `ddchange reduce` as a whole, pure, the test injected.

An input is one more kind of change set (diff/inputs.py): its pieces are the change units, and
an input with some pieces taken out is a configuration. The reduction goes down the passes it
is given, coarsest first (syntax nodes level by level, then lines, tokens, characters), and at
each round of a pass runs probabilistic delta debugging (probabilistic.py, the same search as
for changes) over that round's pieces of the current input, keeping what fails, and goes down
them once. Where the later passes shrank the input, the syntax nodes' pass (first, where a
grammar knows the file) goes once more: a node that no descendant could stand in for while it
was large (a function of many statements) may be replaced by one now (a function of one
statement, by that statement). The `tidy` rewrites then go piece by piece (a name the
removals freed, indentation they left uneven), before the check that follows rather than after
it, so that what they shorten costs no round of it. Then the finest pass is checked piece by
piece (`_sweep`): each single piece is taken out of the result and run; one that still fails
is a further reduction, and the check goes round again until a whole round of it took nothing
out, the `tidy` rewrites again after each round that did. The `last` passes go piece by
piece after it (words joined: a rewrite that would have cost the token pass its pieces; the
literals again, as 0 a digit that the input around it refused before), and where one changed
the result the check goes round again, after the syntax nodes' pass where the change was a
value's (`Pass.renews`: `unsigned:0;unsigned:5` leaves a whole field to take out). Only a
round that took nothing out makes the result 1-minimal at that grain, and `Reduced.minimal`
says so; ProbDD alone does not certify it.

Adding a pass (read this before writing one)
--------------------------------------------
A pass is a name (a `Grain` or a `Rewrite`: what the report and the journal call its runs)
and `rounds`:
given the current input and a round number from 0, the atoms of that round, or None when the
pass has no such round. An atom is a list of edits that go together (every use of a name
renamed at once, say); each edit is a byte range and its replacement (diff/inputs.py). Edits
of one round must not overlap: any subset of the atoms is a candidate. A pass that rewrites
rather than removes (a shorter literal, a node replaced by a descendant) is a
pass like any other: its edits have a replacement. The reducer never looks inside an edit,
and measures what a pass saved by the bytes it took out.

Invariants:
- The result is the input given or a candidate the test saw FAIL, never an implied one.
- The same test outcomes give the same reduction: no randomness anywhere (a resumed run
  takes the same path, every step answered by the journal until the first new one).
- A stop (Ctrl-C) is a value: `reduce` returns the smallest input seen to fail so far, with
  `stopped` set, and `minimal` false.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ddchange.diff.inputs import Contents, Edit, apply, size, tokens
from ddchange.model import Grain, Outcome, Rewrite
from ddchange.search import probabilistic
from ddchange.search.dd import Probed

# The finest pass goes straight to the check of each piece (`_sweep`) when it has at most this
# many: the check costs a test a piece, and ProbDD first, over pieces that the coarser passes
# left mostly needed, cost a third more (835 tests against 625 on a 25 kB Python module
# reduced to 112 tokens; 86 against 71 on the Mozilla page down to characters).
CHECKED_ALONE = 256

# The outcome of running one input, in one pass.
Test = Callable[[Contents, Grain | Rewrite], Outcome]
Atoms = list[list[Edit]]


@dataclass(frozen=True, kw_only=True)
class Pass:
    name: Grain | Rewrite
    rounds: Callable[[Contents, int], Atoms | None]
    # A grain's single pieces, each an atom, for the check of 1-minimality (default: round 0's)
    each: Callable[[Contents], Atoms] | None = None
    # Whether a candidate of a round is worth a test, given the input the round started from
    # (tokens that removals would join into a new one, say); the check of each piece tests
    # every removal all the same
    fits: Callable[[Contents, Contents], bool] = lambda _base, _candidate: True
    # Whether a change it made can leave pieces needless that were needed before (a value
    # rewritten, not only spelled shorter): where it changed the result of the check of each
    # piece, the syntax nodes' pass goes again (`Reducer.last`)
    renews: bool = False


@dataclass(frozen=True, kw_only=True)
class Reduced:
    contents: Contents  # the smallest input seen to fail
    saved: dict[Grain | Rewrite, int]  # the bytes each pass took out
    minimal: bool  # the finest pass's check ended with no removal failing
    stopped: bool = False  # interrupted: `contents` is the best so far


@dataclass(kw_only=True)
class Reducer:
    """`reduce` an input that fails `test` down `passes`; the result is then checked 1-minimal
    in the pieces of `finest` (a grain's pass, one round)."""

    test: Test
    passes: tuple[Pass, ...]
    finest: Pass
    # rewrites that go piece by piece once the passes are done, before the check of the
    # finest pieces and after each round of it that took something out: what removals left
    # to shorten (a name they freed, indentation they left uneven) costs no round of the check
    tidy: tuple[Pass, ...] = ()
    # rewrites that would leave the finest pass fewer pieces to take out (two words joined are
    # one token): each goes piece by piece once the result is 1-minimal at the finest grain,
    # and where it changed the result, the check of the finest pieces goes again (after the
    # syntax nodes' pass, where the pass `renews`)
    last: tuple[Pass, ...] = ()
    # told of each new smallest input seen to fail, as it is seen
    on_best: Callable[[Contents], None] = lambda _contents: None
    # told before each test of the check of each piece (`_sweep`) of the inputs it would test
    # next, in order (the one about to be tested first): a caller may start them early (-j N);
    # it decides nothing. ProbDD's rounds tell nothing: they pick removals that fail about as
    # often as not, so a run started ahead of one of their tests is needed about half the
    # time (the Mozilla page at -j 2, in process: 141 runs for the 93 tests asked, 101 with
    # the rounds telling nothing), where the check's removals mostly pass and its runs ahead
    # are mostly asked for. After a removal of the check that failed, it is told only the
    # input about to be tested: removals that fail come in runs (the tail of a line that all
    # goes), and each run ahead of one is made on an input that is gone (the Mozilla page
    # from a file: 104 runs for the 97 tests asked, 98 so)
    ahead: Callable[[Iterator[Contents]], None] = lambda _upcoming: None
    # whether an input is worth a test while the passes go (a grammar's verdict, say): one that
    # is not counts as not failing, untested; the check of each piece tests every removal
    plausible: Callable[[Contents], bool] = lambda _contents: True
    best: Contents = ()
    _saved: dict[Grain | Rewrite, int] = field(default_factory=dict)

    def reduce(self, contents: Contents) -> Reduced:
        self.best = contents
        self._saved = {p.name: 0 for p in (*self.passes, *self.tidy, *self.last)}
        try:
            first, *rest = self.passes
            nodes = first.name is Grain.NODE and first is not self.finest  # a pass to go again
            self._go(first)
            after = self.best
            for step in rest:
                self._go(step)
            if nodes and self.best != after:
                self._pass(first)  # again, on the smaller input
            self._swept(self.tidy)
            while True:  # after a removal that failed, the check goes round again
                if not self._sweep(self.finest):
                    self._swept(self.tidy)  # what the removals left
                    continue
                changed = [step for step in self.last if not self._sweep(step)]
                if not changed:
                    break
                if nodes and any(step.renews for step in changed):
                    self._pass(first)  # a node that a value rewritten made needless
        except KeyboardInterrupt:
            return self._reduced(minimal=False, stopped=True)
        return self._reduced(minimal=True)

    def _reduced(self, *, minimal: bool, stopped: bool = False) -> Reduced:
        return Reduced(
            contents=self.best, saved=dict(self._saved), minimal=minimal, stopped=stopped
        )

    def _run(self, candidate: Contents, grain: Grain | Rewrite) -> Outcome:
        outcome = self.test(candidate, grain)
        if outcome is Outcome.FAIL and _smaller(candidate, self.best):
            self._saved[grain] += size(self.best) - size(candidate)
            self.best = candidate
            self.on_best(candidate)
        return outcome

    def _go(self, step: Pass) -> None:
        """`step`'s rounds, but for the finest pass where it has few pieces: the check of
        each piece (`_sweep`) takes those alone."""
        if step is not self.finest or len(self._pieces(step)) > CHECKED_ALONE:
            self._pass(step)

    def _pass(self, step: Pass) -> None:
        """Every round of `step`, each over the input as the rounds before left it."""
        number = 0
        while (atoms := step.rounds(self.best, number)) is not None:
            if atoms:
                self._minimize(atoms, step)
            number += 1

    def _minimize(self, atoms: Atoms, step: Pass) -> None:
        """ProbDD over `atoms` of the current input: a configuration is the atoms kept, the
        others applied (taken out, or rewritten). ProbDD never tries applying them all (for
        changes, GOOD passes): a round of rewrites, or of one atom, tries that first, since
        such a round often holds its whole gain in that one test. Only where the input is
        `plausible` itself must a candidate be (the check of each piece can take the result past
        a grammar, and the syntax nodes' pass goes again after it)."""
        base, grain = self.best, step.name
        gated = self.plausible(base)

        def worth(tried: Contents) -> bool:
            return (not gated or self.plausible(tried)) and step.fits(base, tried)

        if len(atoms) == 1 or any(e.replacement for atom in atoms for e in atom):
            whole = apply(base, (e for atom in atoms for e in atom))
            if whole != base and worth(whole) and self._run(whole, grain) is Outcome.FAIL:
                return
        everything = range(len(atoms))

        def candidate(kept: list[int]) -> Contents:
            kept_set = frozenset(kept)
            return apply(base, (e for i in everything if i not in kept_set for e in atoms[i]))

        def probe(kept: list[int]) -> Probed[int]:
            tried = candidate(kept)
            if tried == base or not worth(tried):  # no run: the search goes on
                return Probed(Outcome.UNRESOLVED, frozenset(kept))
            return Probed(self._run(tried, grain), frozenset(kept))

        probabilistic.minimize(list(everything), probe, empty_passes=False)

    def _sweep(self, step: Pass) -> bool:
        """Each piece of `step` (`Pass.each`) taken out of the result alone, and run, in order;
        after one that failed (the result shrank) the check goes on at the atom after it.
        True when no removal failed: the result is 1-minimal at that grain. The finest grain's
        check runs every removal; another pass's (`last`) only those `plausible` allows, where
        the result is plausible itself (the token grain's check can take it past a grammar)."""
        atoms, number, removed = self._pieces(step), 0, False
        gated = step is not self.finest and self.plausible(self.best)

        def worth(tried: Contents) -> bool:
            return tried != self.best and (not gated or self.plausible(tried))

        shrank = False  # the removal just before failed: the result it was made on is gone
        while number < len(atoms):
            best, following = self.best, atoms[number : number + 1 if shrank else None]
            self.ahead(c for c in (apply(best, atom) for atom in following) if worth(c))
            candidate = apply(self.best, atoms[number])
            failed = worth(candidate) and self._run(candidate, step.name) is Outcome.FAIL
            shrank = failed and self.best == candidate  # it failed, and it is smaller
            if shrank:
                removed = True
                atoms = self._pieces(step)  # the same number: the atom after it
            else:
                number += 1
        return not removed

    def _swept(self, steps: tuple[Pass, ...]) -> bool:
        """Each of `steps` piece by piece (`_sweep`), every one of them: True when none
        shrank the result."""
        untouched = True
        for step in steps:
            untouched = self._sweep(step) and untouched
        return untouched

    def _pieces(self, step: Pass) -> Atoms:
        """`step`'s single pieces of the current input (`Pass.each`, else its first round)."""
        return step.each(self.best) if step.each else step.rounds(self.best, 0) or []


def _smaller(candidate: Contents, than: Contents) -> bool:
    """Whether `candidate` is the smaller input: fewer bytes, or as many and fewer tokens (a
    token taken out from between two words leaves a space: the same bytes, one token fewer),
    or as many of both and first in byte order (a 3 rewritten as 0: a total order, so no
    rewrite undoes another). Tokens are counted only on a tie of bytes."""
    ours, theirs = size(candidate), size(than)
    if ours != theirs:
        return ours < theirs
    return (tokens(candidate), candidate) < (tokens(than), than)
