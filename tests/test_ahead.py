"""trial/ahead.py on its own: which runs an offer starts, with runs held on events (no trees,
no git: the slots run a function of the test's; no timing is asserted). Where how long runs
take matters, time is a clock the test moves on (`Clock`), never the machine's: on a loaded
machine a run that ends at once can take longer than a test's pause."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator

import pytest

from ddchange.model import Outcome
from ddchange.trial import runner
from ddchange.trial.ahead import Ahead

A, B, C, D = (frozenset({name}) for name in "abcd")


class Gates:
    """A run of a configuration starts, then waits until its gate opens."""

    def __init__(self) -> None:
        self.gates = {config: threading.Event() for config in (A, B, C, D)}
        self.began = {config: threading.Event() for config in (A, B, C, D)}
        self.runs = collections.Counter[frozenset[str]]()

    def run(self, _slot: int, config: frozenset[str]) -> runner.Verdict:
        self.runs[config] += 1
        self.began[config].set()
        self.gates[config].wait()
        return runner.Verdict(outcome=Outcome.PASS, reason="", build=None, test=None)

    def open_all(self) -> None:
        for gate in self.gates.values():
            gate.set()


class Clock:
    """The time an Ahead reads, moved on by the test alone."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def gates() -> Iterator[Gates]:
    held = Gates()
    yield held
    held.open_all()


def _until_idle(ahead: Ahead) -> None:
    while ahead.running():
        time.sleep(0.001)


def test_an_offer_whose_first_run_has_ended_starts_nothing(gates: Gates) -> None:
    ahead = Ahead(3, gates.run, gates.open_all)
    try:
        assert ahead.offer([A]) == [A]
        gates.gates[A].set()
        _until_idle(ahead)
        # A's taker has its outcome at once and offers again: B and C would be guesses now
        assert ahead.offer([A, B, C]) == []
        assert ahead.take(A).outcome is Outcome.PASS
        assert ahead.offer([B, C]) == [B, C]
    finally:
        ahead.close()


def test_a_first_run_going_on_for_as_long_as_the_usual_one_counts_as_ended(gates: Gates) -> None:
    clock = Clock()
    ahead = Ahead(3, gates.run, gates.open_all, clock)
    try:
        assert ahead.offer([A]) == [A]
        gates.began[A].wait()
        clock.now += 1.0
        gates.gates[A].set()  # a run of a second: the usual length here
        assert ahead.take(A).outcome is Outcome.PASS
        assert ahead.offer([D]) == [D]
        gates.began[D].wait()
        clock.now += 0.5  # half the usual run: D is not about to end
        assert ahead.offer([D, C]) == [C]
        clock.now += 0.45  # 95 % of it: D is about to end
        assert ahead.offer([D, B]) == []
        assert not gates.gates[D].is_set()
    finally:
        ahead.close()


def test_before_any_run_ended_a_first_run_going_on_holds_nothing_back(gates: Gates) -> None:
    ahead = Ahead(3, gates.run, gates.open_all)
    try:
        assert ahead.offer([D]) == [D]
        gates.began[D].wait()
        assert ahead.offer([D, B, C]) == [B, C]
    finally:
        ahead.close()


def test_a_slot_that_frees_up_while_the_taker_waits_starts_what_the_offer_listed_next(
    gates: Gates,
) -> None:
    """Two slots, three runs offered: the third starts when one of the first two ends, while the
    taker still waits for the other, and is the run it takes next (not a second one)."""
    clock = Clock()
    ahead = Ahead(2, gates.run, gates.open_all, clock)
    try:
        # One run of a second first, so that the usual run is long: A, started just now (the
        # clock stands still from here), is then not about to end when B does.
        assert ahead.offer([D]) == [D]
        gates.began[D].wait()
        clock.now += 1.0
        gates.gates[D].set()
        ahead.take(D)
        assert ahead.offer([A, B, C]) == [A, B]  # C waits for a slot
        taken = threading.Thread(target=ahead.take, args=(A,))
        taken.start()
        gates.gates[B].set()
        assert gates.began[C].wait(timeout=30), "C never started"
        assert taken.is_alive()  # the taker is still waiting for A
        gates.gates[A].set()
        taken.join()
        assert ahead.take(B).outcome is Outcome.PASS
        gates.gates[C].set()
        assert ahead.take(C).outcome is Outcome.PASS
        assert gates.runs == {A: 1, B: 1, C: 1, D: 1}
    finally:
        gates.open_all()  # the taker's run too, should an assertion stop the test before
        ahead.close()


def test_a_taker_that_leaves_the_course_it_offered_starts_nothing_more(gates: Gates) -> None:
    ahead = Ahead(2, gates.run, gates.open_all)
    try:
        assert ahead.offer([A, B, C]) == [A, B]
        gates.gates[A].set()
        gates.gates[D].set()
        assert ahead.take(D).outcome is Outcome.PASS  # not offered: C is no longer wanted
        gates.gates[B].set()
        _until_idle(ahead)
        assert gates.runs[C] == 0
    finally:
        ahead.close()


def test_a_run_that_stop_ends_is_not_counted_as_a_run_ahead(gates: Gates) -> None:
    """`stop` ends the commands going; what such a run returns then is our doing (here the
    gate it waits on opens, as a killed test exits), not a run ahead to count."""
    ahead = Ahead(3, gates.run, gates.open_all)
    try:
        gates.gates[A].set()
        assert ahead.offer([A, B]) == [A, B]
        gates.began[B].wait()
        while ahead.running() > 1:  # A has ended of its own
            time.sleep(0.001)
        ahead.stop()
        assert ahead.unused == 1
    finally:
        ahead.close()
