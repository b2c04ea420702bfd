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
from collections.abc import Sequence

from ddchange.model import Outcome

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


# -- once the test has shown that it fails at random ------------------------------------------
#
# A configuration that both passed and failed shows the test flaky: its FAILs came at random
# (a PASS is a fact). From then on a FAIL the search acts on is run again until a wrong one
# would have come through at most SEARCH_RISK of the time at the flake rate the runs show
# (`fails_needed`), and an answer that passes when rerun is not the end: its PASS is a fact,
# and the search goes on from what was seen (at most MAX_SEARCHES searches in all). The
# reruns at the end guard the answer against the larger of that rate and FLAKE_RATE.

# The chance, per FAIL acted on, that the search is misled: the reruns at the end guard the
# answer; this only spares searches that end on an answer that passes.
SEARCH_RISK = 0.1
# Searches a run makes at most, each after an answer that passed when run again.
MAX_SEARCHES = 5
# The weight, in runs, of the prior belief that the rate is FLAKE_RATE.
_PRIOR_RUNS = 4


def flake_rate(random_fails: int, runs: int) -> float:
    """The rate at which the test fails at random, from `runs` runs of configurations seen to
    pass (a PASS is a fact), `random_fails` of which failed: 0 while no run failed at random,
    else the mean of the posterior from a prior of mean FLAKE_RATE worth _PRIOR_RUNS runs."""
    if random_fails == 0:
        return 0.0
    return (random_fails + FLAKE_RATE * _PRIOR_RUNS) / (runs + _PRIOR_RUNS)


def fails_needed(rate: float) -> int:
    """FAILs in a row a search acts on, for a test that fails at random at `rate` (1 for a
    test not seen to: a deterministic test pays no run more)."""
    if rate <= 0:
        return 1
    return max(1, math.ceil(math.log(SEARCH_RISK) / math.log(rate) - 1e-9))


def guarded_rate(rate: float) -> float:
    """The rate the reruns at the end guard against: FLAKE_RATE, or more where the runs
    showed more."""
    return max(FLAKE_RATE, rate)


def allowed(asked: float, check: int, *, seen: bool) -> float:
    """The risk that check number `check` of a run (1 for the first, counted over every
    search of the run, each bisection's too) may leave, for the confidence `asked`: all of
    1 - `asked` for the first where the test has not been seen to fail at random (the one
    check a deterministic test makes); half as much for each check after it, and half again
    once the test is seen to. A check after the first comes only where an answer passed when
    run again, so the test is seen flaky by then: the checks of a run sum to at most
    1 - `asked` where it was seen flaky before the first, and else the first's 1 - `asked`
    comes with at most half as much again, that only where the first refused its answer."""
    return math.ldexp(1 - asked, -(check - 1 + seen))


def outcome_of_runs(outcomes: Sequence[Outcome]) -> Outcome:
    """The outcome of one configuration by all its runs' outcomes: PASS where one passed (a
    PASS is a fact: the others' FAILs, time-outs or other failures came at random); else the
    one they agree on; UNRESOLVED where they disagree."""
    seen = set(outcomes)
    if Outcome.PASS in seen:
        return Outcome.PASS
    return seen.pop() if len(seen) == 1 else Outcome.UNRESOLVED


def at_random(outcomes: Sequence[Outcome]) -> tuple[int, int]:
    """The evidence one configuration's runs give of FAILs at random: where it passed and
    every other run failed, its runs and its FAILs; else (0, 0)."""
    if Outcome.PASS in outcomes and set(outcomes) <= {Outcome.PASS, Outcome.FAIL}:
        return len(outcomes), sum(o is Outcome.FAIL for o in outcomes)
    return 0, 0


def runs_to_confirm(asked: float, rate: float) -> int:
    """Runs of a FAIL a claim rests on (the one that found it and the reruns) for the
    confidence `asked`, at the larger of FLAKE_RATE and the flake `rate` seen."""
    return 1 + reruns(asked, guarded_rate(rate))
