"""How often the answer runs again before it is stated, and how sure that makes it.

The model is that of Flake Aware Culprit Finding (Henderson et al., ICST 2023): a flaky test
fails at random, at some rate f, but never passes at random. Under it a PASS is a fact, so the
claims that rest on passes (GOOD passes; the answer without any one of its changes passes) need
no second run, and the risk lies in the FAIL verdicts. A FAIL at random moves the search into a
configuration that in truth passes, and from there it can only end on an answer that in truth
passes too. That answer was seen to fail by the very run that chose it, so that run is no
evidence for it; what tells a wrong answer apart is a run of it made after the search, which
passes with chance 1 - f. After r such runs that all fail, a wrong answer is left with chance
f ** r at most, whatever the search did before: the risk below.

So the check at the end runs the answer again until that risk is at most 1 - confidence, for a
test that fails at random in up to `FLAKE_RATE` of its runs (1 in 4, a very flaky test). Every
other run of the answer after the first counts (`--retries`, an earlier attempt's checks), so a
resumed run owes only what it lacks. A test that is not flaky pays `reruns` tests (3 at the
default confidence of 0.98); one PASS among them shows the test flaky, and no answer is claimed.
"""

from __future__ import annotations

import math

# The highest rate of random failures the check guards against.
FLAKE_RATE = 0.25


def reruns(confidence: float, flake_rate: float = FLAKE_RATE) -> int:
    """Runs of the answer after the search that bring the risk to at most 1 - `confidence`
    (0 for a confidence of 0; at least 1 above it)."""
    if confidence <= 0:
        return 0
    needed = math.log(1 - confidence) / math.log(flake_rate)
    return max(1, math.ceil(needed - 1e-9))  # 1e-9: 0.9 at 1/10 is exactly 1, not 2


def risk(reruns: int, flake_rate: float = FLAKE_RATE) -> float:
    """The chance that a wrong answer fails `reruns` runs in a row, at `flake_rate`."""
    return float(flake_rate**reruns)
