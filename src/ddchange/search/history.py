"""The history first: where the first-parent history between GOOD and BAD turns from passing
to failing, found like `git bisect` (dd.bisect: skips included), and so where the search of
the changes should go on (`locate`): inside the first bad commit against its parent, the
range between the two where commits in it could not be tested, or, for a merge, inside the
first bad commit of the merged branch (or the merge against its first parent, where the
branch cannot tell).

Where GOOD is not an ancestor of BAD (a tag on a maintenance branch, BAD on the main line), the
bisection starts, as `git bisect` does, from the commit the two forked from (their merge base),
once a run shows that it passes; where it does not, the history cannot say where the failure
came in, and the search goes over all of GOOD..BAD.

The strategy `--strategy auto` follows, for a search (`history_first`: the bisection, then
the search inside where it ended, and the bisection again where a FAIL at random misled it)
and for a whole suite (`triages_first`: after each test's bisection, a triage inside each
range they ended at, and the bisection again of the tests a FAIL at random misled). Pure, as
every module of search/: the test of a commit, the search inside and the questions about the
graph (`Graph`) are injected, and nothing here runs git or a test itself.

Invariants the callers rely on:
- `good` passes and `bad` fails: neither is asked (the caller's pre-flight ran both).
- Every commit a `Located` names as passing (its `base`) or failing (its `tip`) was seen to by
  a real outcome: `good` and `bad` themselves, or a commit the test was asked about here (the
  merge base of a `good` that is no ancestor of `bad` among them). What
  bisection implies (that everything after a failing commit fails) chooses the next question
  and never stands for an answer.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ddchange.model import Outcome
from ddchange.search.dd import bisect


@dataclass(frozen=True, kw_only=True)
class Turn:
    """Where the history turned: the newest commit seen to pass (GOOD when none did) and the
    oldest seen to fail (BAD when none did), with only unresolved commits between them; and
    how many commits were asked about to find them."""

    last_good: str
    first_bad: str
    asked: int


def bisect_history(
    good: str,
    chain: Sequence[str],
    test: Callable[[str], Outcome],
    *,
    width: int = 1,
    offer: Callable[[list[str]], None] = lambda _shas: None,
) -> Turn:
    """Bisect `chain`, the first-parent commits after `good` up to BAD (its last), oldest
    first; `good` passes and the last of `chain` fails (the caller knows: neither is asked).
    With `width` tests at once, `width` commits a round (dd.bisect), each round `offer`ed
    before it is asked."""
    asked: list[str] = []

    def at(position: int) -> Outcome:
        asked.append(chain[position - 1])
        return test(chain[position - 1])

    def ahead(positions: list[int]) -> None:
        offer([chain[position - 1] for position in positions])

    lo, hi = bisect(len(chain), at, width=width, offer=ahead)
    return Turn(
        last_good=good if lo == 0 else chain[lo - 1], first_bad=chain[hi - 1], asked=len(asked)
    )


class Graph(Protocol):
    """What `locate` asks of the commit graph (the session answers from git)."""

    def first_parents(self, good: str, bad: str) -> list[str]:
        """The first-parent commits after `good` up to `bad`, oldest first."""

    def parents(self, sha: str) -> tuple[str, ...]:
        """The parents of commit `sha`, the first parent first."""

    def merge_base(self, one: str, other: str) -> str | None:
        """The best common ancestor of the two commits; None when they have none."""

    def is_ancestor(self, older: str, newer: str) -> bool:
        """Whether commit `older` is `newer` or one of its ancestors."""


class Where(enum.StrEnum):
    """Which changes the search goes on with, once the history has been bisected."""

    COMMIT = "commit"  # the first bad commit's own changes, against its parent
    SKIPPED = "skipped"  # the range from the last good to the first bad commit: untestable between
    MERGE = "merge"  # a merge's changes against its first parent (its branch could not tell)
    # all of GOOD..BAD: GOOD is no ancestor of BAD, and the commit they forked from did not pass
    WHOLE = "whole"


@dataclass(frozen=True, kw_only=True)
class Located:
    """Where the search goes on: GOOD = `base`, seen to pass; BAD = `tip`, seen to fail; and
    how the bisection got there (`asked`: every commit asked about, in order, with its
    outcome; `merges`: each merge whose branch was bisected into)."""

    base: str
    tip: str
    where: Where
    asked: tuple[tuple[str, Outcome], ...]
    merges: tuple[str, ...] = ()
    # The oldest first-parent commit between GOOD and BAD seen to fail (a merge whose branch
    # was bisected into, when `merges`)
    first_bad: str
    # Where GOOD is no ancestor of BAD: the commit they forked from, the bisection's start
    fork: str = ""


def locate(
    good: str,
    bad: str,
    graph: Graph,
    test: Callable[[str], Outcome],
    *,
    width: int = 1,
    offer: Callable[[list[str]], None] = lambda _shas: None,
) -> Located:
    """Bisect the first-parent history of good..bad, and follow a first bad commit that is a
    merge into its merged branch (bisected the same way) as long as the branch's own tip fails
    and the base it forked from passes; where either does not, the merge itself is searched,
    against its first parent. With `width` tests at once, each round of the bisection asks
    that many commits, `offer`ed first (see `bisect_history`). Where `good` is no ancestor of
    `bad`, their merge base is asked first and the bisection starts from it where it passes;
    where it does not, all of good..bad is where the search goes on (`Where.WHOLE`). The
    caller makes sure they have a merge base."""
    asked: list[tuple[str, Outcome]] = []

    def ask(sha: str) -> Outcome:
        outcome = test(sha)
        asked.append((sha, outcome))
        return outcome

    start = "" if graph.is_ancestor(good, bad) else graph.merge_base(good, bad) or ""
    if start:
        if ask(start) is not Outcome.PASS:
            return Located(
                base=good, tip=bad, where=Where.WHOLE, asked=tuple(asked), first_bad=bad, fork=start
            )
        good = start
    merges: list[str] = []
    first_bad = ""
    while True:
        chain = graph.first_parents(good, bad)
        turn = bisect_history(good, chain, ask, width=width, offer=offer)
        first_bad = first_bad or turn.first_bad
        parents = graph.parents(turn.first_bad)
        where = _where(turn, parents)
        fork = _fork(parents, graph, ask) if where is Where.MERGE else None
        if fork is not None:
            merges.append(turn.first_bad)
            good, bad = fork, parents[1]
            continue
        return Located(
            base=turn.last_good,
            tip=turn.first_bad,
            where=where,
            asked=tuple(asked),
            merges=tuple(merges),
            first_bad=first_bad,
            fork=start,
        )


def _where(turn: Turn, parents: tuple[str, ...]) -> Where:
    """What to search between the turn's two commits, by the parents of the failing one."""
    if not parents or parents[0] != turn.last_good:
        return Where.SKIPPED  # untested commits lie between the two
    return Where.COMMIT if len(parents) == 1 else Where.MERGE


def _fork(parents: tuple[str, ...], graph: Graph, ask: Callable[[str], Outcome]) -> str | None:
    """Where the merged branch of a merge of `parents` (two; an octopus is searched whole)
    forked from, when the branch is to be bisected: its tip fails on its own and the fork
    passes, each seen by a run (the tip first: where it passes, only the merge fails)."""
    fork = graph.merge_base(parents[0], parents[1]) if len(parents) == 2 else None
    if fork is None or fork == parents[1]:
        return None
    if ask(parents[1]) is not Outcome.FAIL or ask(fork) is not Outcome.PASS:
        return None
    return fork


S = TypeVar("S")


@dataclass(frozen=True, kw_only=True)
class Runs(Generic[S]):
    """What `history_first` asks of the session, which runs the tests: each a fact seen, none
    implied. `S` is what a search inside gives (its answer and whatever the caller keeps)."""

    # Around each bisection and the runs that check its ends (the slots of -j N)
    bisecting: Callable[[], AbstractContextManager[object]]
    # BAD's FAIL, acted on: run again as the flake rate seen asks; False where it passed
    bad_fails: Callable[[], bool]
    # GOOD run, where the bisection ended at it (a search's base needs a PASS seen)
    good_passes: Callable[[], bool]
    # One bisection of the history, from every outcome seen so far (`locate`)
    locate: Callable[[], Located]
    # A first bad commit's FAIL, acted on as every FAIL of the bisection is (BAD's too): run
    # again as the flake rate seen asks, which for a test never seen to fail at random is not
    # again; False where it passed
    fails: Callable[[str], bool]
    # The search inside where the bisection ended (None: over all of GOOD..BAD, as the runs of
    # GOOD or BAD disagreed)
    search: Callable[[Located | None], S]
    # Whether that search saw the test fail at random
    saw_random: Callable[[S], bool]
    # A commit run again as an answer is (a FAIL every answer rests on); False where it passed
    fails_again: Callable[[str], bool]


def history_first(
    runs: Runs[S], good: str, bad: str, *, confirm: bool, bisections: int
) -> list[tuple[Located | None, S]]:
    """--strategy auto as a whole, where the history can be bisected: each bisection and the
    search inside where it ended, in order (the last is the answer's). BAD's FAIL is acted on
    first; a bisection that ends at GOOD runs it (the search's base); the first bad commit's
    FAIL is acted on as every FAIL of the bisection is, and where it then passes (a fact), a
    FAIL at random misled the bisection, which goes again from what was seen. Where the search
    inside saw the test fail at random, the first bad commit runs again as an answer does, and
    where it passes, the bisection and the search go again. Without `confirm` (no reruns
    asked), nothing runs again; at most `bisections` bisections. A bisection whose ends'
    runs disagree ends in a search over all of GOOD..BAD (None), which takes their records
    over and ends flaky."""
    done = 0

    def bisected(first: bool) -> Located | None:
        nonlocal done
        with runs.bisecting():
            if first and not runs.bad_fails():
                return None
            while True:
                done += 1
                located = runs.locate()
                if located.base == good and not runs.good_passes():
                    return None
                if not confirm or runs.fails(located.tip):
                    return located
                if located.tip == bad or done == bisections:
                    return None

    searched: list[tuple[Located | None, S]] = []
    located = bisected(first=True)
    while True:
        found = runs.search(located)
        searched.append((located, found))
        if (
            located is None
            or located.tip == bad
            or not confirm
            or done == bisections
            or not runs.saw_random(found)
            or runs.fails_again(located.tip)
        ):
            return searched
        located = bisected(first=False)


# -- a whole suite -----------------------------------------------------------------------------

T = TypeVar("T")  # a target: one test of the suite
P = TypeVar("P")  # what one triage inside a range gives
Range = tuple[str, str]  # a first bad commit's parent and the commit (GOOD and BAD: the whole)


@dataclass(frozen=True, kw_only=True)
class Triages(Generic[T, P]):
    """What `triages_first` asks of the suite's run, which runs the tests."""

    # The targets bisected again, each by its own verdicts, from every outcome seen so far:
    # the range each ended at
    bisect: Callable[[Sequence[T]], dict[Range, list[T]]]
    # One triage inside a range, of the targets bisected to it
    triage: Callable[[Range, Sequence[T]], P]
    # Of those targets, the ones that triage's records do not back and whose first bad
    # commit, run again as an answer is, passed for them (a fact): misled there; and those
    # for which a commit their bisection could not test settles when run again: stopped short
    misled: Callable[[Range, Sequence[T], P], list[T]]
    # Told the ranges each round of triages goes over, before it starts
    planned: Callable[[Sequence[Range]], None] = lambda _ranges: None
    # Whether a triage's outcome ends the run (it was interrupted): no triage comes after it
    stopped: Callable[[P], bool] = lambda _part: False


@dataclass(frozen=True, kw_only=True)
class Triaged(Generic[T, P]):
    """One triage, in the order they ran: its range, its targets, what it gave, and the
    earlier triage of the same range it takes the place of (None: the first there)."""

    where: Range
    targets: tuple[T, ...]
    part: P
    replaces: P | None


def triages_first(
    steps: Triages[T, P], ends: dict[Range, list[T]], *, bisections: int
) -> tuple[list[Triaged[T, P]], dict[Range, P]]:
    """--strategy auto for a whole suite, after the first bisection of every target (`ends`:
    where each ended): a triage inside each range, of its targets; the targets a FAIL at
    random misled to their range, or kept from testing a commit inside it or a removal from
    their cause (`Triages.misled`), are bisected again from what was seen, and the triages of the
    ranges they leave and of those they end at go again, at most `bisections` bisections in
    all; a triage that ends the run (`Triages.stopped`: interrupted) is the last. Every triage
    in the order it ran, and the last of each range that has targets left."""
    ends = {where: list(mine) for where, mine in ends.items()}
    parts: dict[Range, P] = {}
    done: list[Triaged[T, P]] = []
    todo, count = list(ends), 1
    steps.planned(todo)
    while True:
        for where in todo:
            replaced = parts.pop(where, None)
            if ends[where]:
                parts[where] = steps.triage(where, ends[where])
                done.append(
                    Triaged(
                        where=where, targets=tuple(ends[where]), part=parts[where],
                        replaces=replaced,
                    )
                )  # fmt: skip
                if steps.stopped(parts[where]):
                    return done, parts
        again = {where: steps.misled(where, ends[where], parts[where]) for where in todo
                 if where in parts}  # fmt: skip
        lost = [target for gone in again.values() for target in gone]
        if not lost or count == bisections:
            return done, parts
        count += 1
        for where, gone in again.items():
            ends[where] = [target for target in ends[where] if target not in gone]
        found = steps.bisect(lost)
        for where, mine in found.items():
            ends[where] = [*ends.get(where, []), *mine]
        todo = [where for where in ends if where in found or again.get(where)]
        steps.planned(todo)
