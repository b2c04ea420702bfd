"""The check at the end (search/confidence.py): how many reruns a confidence asks for, and the
risk they leave, against numbers worked out by hand at a flake rate of 1 in 4."""

from __future__ import annotations

import pytest

from ddchange.model import Outcome
from ddchange.search import confidence


@pytest.mark.parametrize(
    ("wanted", "reruns"),
    [
        (0.0, 0),  # no check at all
        (0.1, 1),  # any confidence above 0 runs the answer again at least once
        (0.75, 1),  # 0.25 ** 1 = 0.25: exactly enough
        (0.76, 2),
        (0.9375, 2),  # 0.25 ** 2 = 0.0625 = 1 - 0.9375: exactly enough, not 3
        (0.98, 3),  # 0.25 ** 3 = 0.0156 <= 0.02 < 0.0625
        (0.99, 4),  # 0.25 ** 4 = 0.0039 <= 0.01 < 0.0156
        (0.999, 5),  # 0.25 ** 5 = 0.00098 <= 0.001
    ],
)
def test_reruns_bring_the_risk_to_at_most_one_minus_the_confidence(
    wanted: float, reruns: int
) -> None:
    assert confidence.reruns(wanted) == reruns
    if reruns:
        assert confidence.risk(reruns) <= 1 - wanted + 1e-12
        assert reruns == 1 or confidence.risk(reruns - 1) > 1 - wanted


def test_the_risk_is_the_chance_of_failing_every_rerun_at_random() -> None:
    assert confidence.FLAKE_RATE == 0.25
    assert confidence.risk(0) == 1.0
    assert confidence.risk(3) == 0.015625
    assert confidence.risk(2, flake_rate=0.5) == 0.25
    assert confidence.reruns(0.9, flake_rate=0.5) == 4  # 0.5 ** 4 = 0.0625 <= 0.1 < 0.125
    # 0.1 ** 1 is exactly 1 - 0.9, though in floating point log(1 - 0.9) / log(0.1) is a hair
    # above 1: one rerun, not two.
    assert confidence.reruns(0.9, flake_rate=0.1) == 1


P, F, U = Outcome.PASS, Outcome.FAIL, Outcome.UNRESOLVED


@pytest.mark.parametrize(
    ("runs", "outcome"),
    [
        ([F, F], F),
        ([U], U),
        ([F, P], P),  # a PASS is a fact: the FAIL came at random
        ([U, P], P),  # so is it beside a time-out or another failure
        ([F, U, P], P),
        ([F, U], U),  # runs that disagree, none passing: nothing is known
    ],
)
def test_a_configuration_that_passed_once_passes(runs: list[Outcome], outcome: Outcome) -> None:
    assert confidence.outcome_of_runs(runs) is outcome
