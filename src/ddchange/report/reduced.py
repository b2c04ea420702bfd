"""The report of a reduction (`ddchange reduce`): text for a terminal and JSON for tools. Every
statement is read from the `Reduction`, whose result and checks are records (trial/inputs.py)."""

from __future__ import annotations

import json
from typing import Any

from ddchange.diff.inputs import size, tokens
from ddchange.model import Ending, Reduction
from ddchange.report.as_json import record
from ddchange.report.words import plural, printable


def _bytes(count: int) -> str:
    return f"{count:,} byte" + ("" if count == 1 else "s")


def render(result: Reduction) -> str:
    """The summary: sizes before and after, where the result is, what backs it, each pass."""
    request = result.request
    before, after = size(result.original), size(result.reduced)
    written = ", ".join(str(p) for p in result.outputs)
    said = {
        Ending.FOUND: "reduced",
        Ending.FLAKY: "NOT RELIABLE: the test fails at random, and no result failed in every rerun",
        Ending.INTERRUPTED: "interrupted: the smallest input seen to fail so far",
    }[result.outcome]
    lines = [
        f"ddchange reduce: {said}: {_bytes(before)} -> {_bytes(after)} "
        f"({tokens(result.original):,} -> {tokens(result.reduced):,} tokens), in "
        f"{plural(result.tests_run, 'test')}"
        + (f" ({result.resumed} taken from an earlier run)" if result.resumed else "")
        + f"; written to {written}.",
    ]
    fails = (
        f"exits {request.interesting_exit}, as an interesting input does"
        if request.interesting_exit is not None
        else "fails as the original does"
    )
    lines.append(f"  It {fails} in all {plural(result.runs, 'run')} of it.")
    if result.disagreed:
        lines.append(
            "  The test failed at random in some runs: each FAIL the reduction went on was run "
            "again as the flake rate seen asked, and each PASS taken as a fact."
        )
    grain = request.granularity.value
    if result.minimal:
        lines.append(
            f"  Without any one {grain} it does not (each removal run): 1-minimal in {grain}s."
        )
    else:
        lines.append(f"  Not shown to be 1-minimal in {grain}s: the check was not finished.")
    for report in result.passes:
        lines.append(
            f"  pass {report.name.value}: {plural(report.tests, 'test')}, "
            f"{_bytes(report.saved)} taken out"
        )
    return printable("\n".join(lines) + "\n")


def render_json(result: Reduction) -> str:
    """Everything the text says, with each file's sizes, and the test log."""
    document: dict[str, Any] = {
        "command": list(result.request.test),
        "granularity": result.request.granularity.value,
        "interesting_exit": result.request.interesting_exit,
        "outcome": result.outcome.value,
        "minimal": result.minimal,
        "disagreed": result.disagreed,
        "files": [
            {
                "path": str(path),
                "output": str(output),
                "bytes": [len(before), len(after)],
                "tokens": [tokens((before,)), tokens((after,))],
            }
            for path, output, before, after in zip(
                result.request.files,
                result.outputs,
                result.original,
                result.reduced,
                strict=True,
            )
        ],
        "passes": [
            {"pass": p.name.value, "tests": p.tests, "saved": p.saved} for p in result.passes
        ],
        "runs": result.runs,
        "tests_run": result.tests_run,
        "resumed": result.resumed,
        "wall_time": result.wall_time,
        "log": [record(r) for r in result.log],
    }
    return json.dumps(document, indent=2) + "\n"
