"""How good is the estimate of tests left? A replay of the real regressions' test logs.

    .venv/bin/python benchmarks/estimate.py [--work DIR]   # rewrites its section of RESULTS.md
    .venv/bin/python benchmarks/estimate.py --reduce DIR   # the reductions' section
    .venv/bin/python benchmarks/estimate.py --triage DIR   # the whole-suite triages' section

With --triage, the logs are the output of the whole-suite triages that `benchmarks/real.py
--modes triage --work DIR` left (`DIR/CASE/out/triage*.log`, `separate-N.log`): each line of a
target's search shows the guess of all the tests left, searches and reruns alike, with its
range; it is set against the runs that really came after that line.

With --reduce, the logs are those `benchmarks/reduce_peers.py --work DIR` left of ddchange's
reductions (`DIR/INPUT/ddchange/ddchange.json`), replayed through `events.reduce_estimate` in
the same way: before each test of the passes, the tests so far and the smallest input seen to
fail.

`benchmarks/real.py` leaves each case's default run as `DIR/CASE/out/default.json`, with its
test log in order. This script walks each log and, before every test of the search, asks
ddchange's own `events.estimate` what it would have shown there: the phases of the tests run so
far and the changes still in play (the smallest configuration seen to fail). It sets the
search's share of that estimate against the search's tests that really came after, this one
included, and counts how often they fell inside the range the progress line shows (from
1/`model.SPREAD` of the guess to `model.SPREAD` times it). Only the search's share is judged: the
pre-flight and checks still to come are known, not guessed.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from results import CHECKS, PREFLIGHT, RESULTS, write_section

from ddchange import events, model

HEADING = "## Estimate of tests left (`benchmarks/estimate.py`)"
REDUCE_HEADING = "## Estimate of tests left, reductions (`benchmarks/estimate.py --reduce`)"
TRIAGE_HEADING = "## Estimate of tests left, triages (`benchmarks/estimate.py --triage`)"
SHOWN = re.compile(r"about (\d+) tests? left \((\d+)-(\d+),")
OUTSIDE = (*PREFLIGHT, *CHECKS, "bisect")


@dataclass(frozen=True, kw_only=True)
class Replay:
    case: str
    tests: int  # every record of the log
    steps: int  # tests of the search: an estimate was shown before each
    inside: int  # steps where what the search still ran fell inside the range shown
    ratios: list[float]  # what the search still ran, over the guess, at each step


def replay(case: str, path: Path) -> Replay:
    report = json.loads(path.read_text())
    log = report["log"]
    assert isinstance(log, list)
    start = int(str(report["hunks_total"]))
    finest = model.Level(str(report.get("granularity") or model.Level.BLOCK))
    phases = [str(record["phase"]) for record in log]
    searched_after = [0] * (len(log) + 1)
    for n in range(len(log) - 1, -1, -1):
        searched_after[n] = searched_after[n + 1] + (phases[n] not in OUTSIDE)
    units, steps = start, []
    for n, record in enumerate(log):
        if phases[n] not in OUTSIDE:
            guess = events.estimate(phases[:n], phases[n], units, start, 0, 0, finest).search
            steps.append((guess, searched_after[n]))
        if record["outcome"] == "fail" and phases[n] not in CHECKS:
            units = min(units, len(record["config"]))
    return _judged(case, len(log), steps)


def _judged(case: str, tests: int, steps: list[tuple[int, int]]) -> Replay:
    """A log's replay from its steps: the search's guess shown before each (its range as the
    progress line shows it), and the tests that really came after it."""
    shown = [(model.Estimate(search=guess), left) for guess, left in steps]
    return _against(case, tests, [(e.search, e.low, e.high, left) for e, left in shown])


def _against(case: str, tests: int, steps: list[tuple[int, int, int, int]]) -> Replay:
    """A log's replay from its steps: each guess, its range, and what really came after."""
    return Replay(
        case=case,
        tests=tests,
        steps=len(steps),
        inside=sum(low <= left <= high for _, low, high, left in steps),
        ratios=[left / guess for guess, _, _, left in steps],
    )


def replay_reduction(case: str, path: Path) -> Replay:
    report = json.loads(path.read_text())
    log = report["log"]
    assert isinstance(log, list)
    phases = [str(record["phase"]) for record in log]
    sizes = [int(str(record["config"][0]).rpartition("-")[2]) for record in log]
    outside = ("bad", "confirm")
    searched_after = [0] * (len(log) + 1)
    for n in range(len(log) - 1, -1, -1):
        searched_after[n] = searched_after[n + 1] + (phases[n] not in outside)
    start = now = sizes[0]
    steps: list[tuple[int, int]] = []
    for n, record in enumerate(log):
        if phases[n] in outside:
            continue
        steps.append((events.reduce_estimate(len(steps), now, start, 0).search, searched_after[n]))
        if record["outcome"] == "fail":
            now = min(now, sizes[n])
    return _judged(case, len(log), steps)


def replay_triage(case: str, path: Path) -> Replay:
    """A triage's output: the guess and range shown on each line of a search, against the runs
    (the lines "test N ...") that came after it."""
    lines = [line for line in path.read_text().splitlines() if line.startswith("test ")]
    shown = [(n, SHOWN.search(line)) for n, line in enumerate(lines)]
    steps = [
        (int(m[1]), int(m[2]), int(m[3]), len(lines) - 1 - n) for n, m in shown if m is not None
    ]
    return _against(f"{case} ({path.stem})", len(lines), steps)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "—"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def table(replays: list[Replay]) -> str:
    rows = [
        "| case | tests run | of them the search's | inside the range | median ratio | "
        "ratio, 10th–90th percentile |",
        "|---|---|---|---|---|---|",
    ]
    for r in replays:
        rows.append(
            f"| {r.case} | {r.tests} | {r.steps} | {_share(r.inside, r.steps)} | "
            f"{statistics.median(r.ratios):.2f} | "
            f"{_quantile(r.ratios, 0.1):.2f}–{_quantile(r.ratios, 0.9):.2f} |"
        )
    every = [ratio for r in replays for ratio in r.ratios]
    steps, inside = sum(r.steps for r in replays), sum(r.inside for r in replays)
    per_case = statistics.mean(r.inside / r.steps for r in replays)
    rows += [
        "",
        f"- every step of every case: inside the range {_share(inside, steps)} of {steps}; "
        f"ratio 25th–75th percentile {_quantile(every, 0.25):.2f}–{_quantile(every, 0.75):.2f}, "
        f"10th–90th {_quantile(every, 0.1):.2f}–{_quantile(every, 0.9):.2f}",
        f"- each case weighted alike: inside the range {100 * per_case:.0f}% of its steps",
    ]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir(), "ddchange-real"))
    parser.add_argument("--reduce", type=Path, help="replay reduce_peers.py's logs left here")
    parser.add_argument("--results", type=Path, default=RESULTS, help="file to write")
    parser.add_argument("--triage", type=Path, help="judge real.py's triage outputs left here")
    args = parser.parse_args()
    if args.triage is not None:
        outputs = [
            *args.triage.glob("*/out/triage*.log"),
            *args.triage.glob("*/out/separate-*.log"),
        ]
        section(
            parser, TRIAGE_HEADING, sorted(outputs), replay_triage, args.results,
            f"`benchmarks/estimate.py --triage {args.triage}`, over the output of the "
            f"whole-suite triages that `benchmarks/real.py --modes triage --work {args.triage}` "
            "left there (`triage`: every failing test; `triage-diff`: with `--strategy diff`; "
            "`separate-N`: `--test` for one). At each line of a target's search, the ratio is "
            "the runs that really came after it over the guess it shows of all the tests left "
            "(the searches' and the reruns at the end alike), and the range judged is the one "
            "shown",
            "The rule was chosen on one triage of the bundled suite-triage scenario, before "
            "these runs.",
        )  # fmt: skip
        return
    if args.reduce is None:
        section(
            parser,
            HEADING,
            sorted(args.work.glob("*/out/default.json")),
            replay,
            args.results,
            f"`benchmarks/estimate.py --work {args.work}`, over the test logs of the default "
            "runs that `benchmarks/real.py` left there (run benchmarks/real.py first). At each "
            "test of the search, the ratio is the search's tests that really came after (this "
            "one included) over the search's share of the estimate shown before it",
            "The rule (events.py) and its spread were chosen on these same logs.",
        )
    else:
        section(
            parser, REDUCE_HEADING, sorted(args.reduce.glob("*/ddchange/ddchange.json")),
            replay_reduction, args.results,
            f"`benchmarks/estimate.py --reduce {args.reduce}`, over the test logs of ddchange's "
            f"reductions that `benchmarks/reduce_peers.py --work {args.reduce}` left there (run "
            "reduce_peers.py first). At each test of the passes, the ratio is the tests that "
            "really came after (this one included, the reruns of the result not counted) over "
            "the guess shown before it (`events.reduce_estimate`)",
            "The rule and its factor were chosen on the logs of an earlier run of "
            "reduce_peers.py on the same inputs (ddchange at 6b0ad79, before the node pass took "
            "commas and lines), not on these.",
        )  # fmt: skip


def section(
    parser: argparse.ArgumentParser,
    heading: str,
    found: list[Path],
    replayed: Callable[[str, Path], Replay],
    results: Path,
    what: str,
    chosen: str,
) -> None:
    """Replay each log `found` (named by the folder two up) and write `heading`'s section:
    `what` was replayed, how; `chosen`: what the rule was chosen on."""
    if not found:
        parser.error("no test logs there to replay (see this script's docstring)")
    replays = [replayed(path.parents[1].name, path) for path in found]
    body = (
        f"On {platform.machine()}, Python {platform.python_version()}: {what} "
        f"({len(replays)} logs); the progress line shows the range from 1/{model.SPREAD} of "
        f"the guess to {model.SPREAD} times it, and says the rest will fall inside it "
        f"{model.WITHIN}. {chosen}\n\n" + table(replays)
    )
    write_section(heading, body, results)
    print(body)


if __name__ == "__main__":
    main()
