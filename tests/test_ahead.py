"""trial/ahead.py on its own: which runs an offer starts, with runs held on events (no trees,
no git: the slots run a function of the test's; no timing is asserted)."""

from __future__ import annotations

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

    def run(self, _slot: int, config: frozenset[str]) -> runner.Verdict:
        self.began[config].set()
        self.gates[config].wait()
        return runner.Verdict(Outcome.PASS, "", None, None)

    def open_all(self) -> None:
        for gate in self.gates.values():
            gate.set()


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
    ahead = Ahead(3, gates.run, gates.open_all)
    try:
        gates.gates[A].set()  # a run that ends at once: the usual length here is about 0
        assert ahead.offer([A]) == [A]
        assert ahead.take(A).outcome is Outcome.PASS
        assert ahead.offer([D]) == [D]
        gates.began[D].wait()
        time.sleep(0.05)  # far longer than the usual run (microseconds): D is about to end
        assert not gates.gates[D].is_set()
        assert ahead.offer([D, C]) == []
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


def test_spare_runs_start_only_beside_a_run_this_offer_starts(gates: Gates) -> None:
    ahead = Ahead(5, gates.run, gates.open_all)
    try:
        assert ahead.offer([], [C]) == []  # nothing waited for: a spare run could hold up the next
        assert ahead.offer([A], [C, C]) == [A, C, C]
        gates.began[A].wait()
        assert ahead.offer([A], [D]) == []  # A was going already: D could end after it
        assert ahead.offer([B], [C, C, D]) == [B, D]  # the two runs of C held count
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
