"""Commit bisection: where the first-parent history between GOOD and BAD turns from passing
to failing, found like `git bisect` (dd.bisect: skips included), with each commit named by
its object name. The first step of `--strategy auto`, for a search (session.py) and for each
test of a triage (suite.py); the test of a commit is injected, as every test of search/ is."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

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


def bisect_history(good: str, chain: Sequence[str], test: Callable[[str], Outcome]) -> Turn:
    """Bisect `chain`, the first-parent commits after `good` up to BAD (its last), oldest
    first; `good` passes and the last of `chain` fails (the caller knows: neither is asked)."""
    asked: list[str] = []

    def at(position: int) -> Outcome:
        asked.append(chain[position - 1])
        return test(chain[position - 1])

    lo, hi = bisect(len(chain), at)
    return Turn(
        last_good=good if lo == 0 else chain[lo - 1], first_bad=chain[hi - 1], asked=len(asked)
    )
