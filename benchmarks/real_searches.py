"""The three searches benchmarks/real.py compares on a case, each giving a row of the table.

Owns `Row` and the table's columns; ddchange run as a command in one mode (from a reset journal,
its JSON report read for the outcome, the answer and the tests); textbook ddmin (Zeller and
Hildebrandt, TSE 2002: an exact cache and nothing else) over the hunks of `git diff good bad`,
every test in a reset clone, within a budget of tests; and `git bisect run` with the case's build
and check. The verdict on every answer is real_judge's.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import results
from real_cases import GIT_TIMEOUT, Case, clean_env, git, run
from real_judge import FAIL, UNRESOLVED, Item, Sandbox, Verdict, join_items, judge

FLAGS = {"default": (), "isolate": ("--isolate",), "no-dependencies": ("--no-dependencies",)}
SEARCH_TIMEOUT = 4 * 3600.0  # one whole ddchange or git bisect run


# -- rows ---------------------------------------------------------------------------------------


@dataclass
class Row:
    case: str
    package: str
    hunks: str = "—"
    mode: str = "—"
    exit: str = "—"
    outcome: str = "—"
    answer: str = "—"
    tests: str = "—"
    wall: str = "—"
    verdict: str = "—"
    culprit: str = "—"
    size: int | None = None  # numbers behind the summary
    count: int | None = None
    right: bool = False
    over_budget: bool = False

    def cells(self) -> list[str]:
        return [
            self.case,
            self.package,
            self.hunks,
            self.mode,
            self.exit,
            self.outcome,
            self.answer,
            self.tests,
            self.wall,
            self.verdict,
            self.culprit,
        ]


COLUMNS = (
    "case",
    "package",
    "hunks",
    "mode",
    "exit",
    "outcome",
    "answer",
    "tests",
    "wall s",
    "verdict (independent)",
    "holds culprit",
)


def _yes(flag: bool | None) -> str:
    return "—" if flag is None else ("yes" if flag else "no")


def _judged(row: Row, verdict: Verdict) -> Row:
    row.verdict, row.right, row.culprit = verdict.text, verdict.right, _yes(verdict.culprit)
    return row


def ddchange(case: Case, repo: Path, box: Sandbox, mode: str, args: argparse.Namespace) -> Row:
    """One ddchange search of `repo` in `mode`, from a reset journal; its row, answer judged."""
    row = Row(case.name, case.title, mode=mode)
    out = repo.parent / "out"
    out.mkdir(exist_ok=True)
    patch, report = out / f"{mode}.patch", out / f"{mode}.json"
    patch.unlink(missing_ok=True)
    report.unlink(missing_ok=True)
    env = clean_env(box.bin)
    run([str(args.ddchange), "reset"], repo, env, GIT_TIMEOUT)
    argv = [str(args.ddchange), "good..bad", "--patch", str(patch), "--json", str(report)]
    argv += [*FLAGS[mode], "--timeout", f"{args.timeout:g}"]
    argv += ["--build", case.build] if case.build else []
    argv += ["--", str(box.bin / "python"), str(case.check)]
    started = time.monotonic()
    done = run(argv, repo, env, SEARCH_TIMEOUT)
    row.wall = f"{time.monotonic() - started:.1f}"
    (out / f"{mode}.log").write_text(done.output)
    row.exit = "timeout" if done.code is None else str(done.code)
    data = _read_json(report)
    row.outcome = str(data.get("outcome", "—"))
    log = data.get("log")
    if isinstance(data.get("tests_run"), int) and isinstance(log, list):
        # The search's own runs, comparable with textbook ddmin's (which has no pre-flight
        # and no confirmation).
        row.count = sum(
            r.get("phase") not in results.OUTSIDE_SEARCH for r in log if isinstance(r, dict)
        )
        row.tests = f"{data['tests_run']} ({row.count})"
    culprits, passing = data.get("culprits"), data.get("passing")
    if isinstance(culprits, list):
        row.size = len(culprits)
        total = data.get("hunks_total")
        row.answer = f"{row.size} of {total}" if isinstance(total, int) else str(row.size)
        if mode == "isolate" and isinstance(passing, list):
            row.answer += f" (+{len(passing)} passing)"
    if not patch.is_file():
        row.verdict = "no patch" if done.code is not None else "no patch (timed out)"
        return row
    return _judged(row, judge(box, patch.read_bytes()))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# -- textbook ddmin -----------------------------------------------------------------------------


class OutOfBudget(Exception):
    pass


def ddmin(size: int, test: Callable[[list[int]], str]) -> list[int]:
    """Zeller and Hildebrandt's ddmin (TSE 2002) over items 0..size-1, which must FAIL together:
    split into n parts; a failing part is the new set (n = 2), else a failing complement is
    (n = n - 1), else n doubles, until n is the number of items. Only an exact cache."""
    cache: dict[frozenset[int], str] = {}

    def outcome(config: list[int]) -> str:
        key = frozenset(config)
        if key not in cache:
            cache[key] = test(config)
        return cache[key]

    config = list(range(size))
    if outcome(config) != FAIL:
        raise ValueError("the whole set does not fail")
    n = 2
    while len(config) >= 2:
        parts = [config[k * len(config) // n : (k + 1) * len(config) // n] for k in range(n)]
        part = next((p for p in parts if outcome(p) == FAIL), None)
        if part is not None:
            config, n = part, 2
            continue
        complements = ([i for i in config if i not in set(p)] for p in parts)
        complement = next((c for c in complements if outcome(c) == FAIL), None)
        if complement is not None:
            config, n = complement, max(n - 1, 2)
            continue
        if n >= len(config):
            break
        n = min(2 * n, len(config))
    return config


def textbook(case: Case, items: list[Item], box: Sandbox, judge_box: Sandbox, budget: int) -> Row:
    """Textbook ddmin over the hunks of `git diff good bad`; every test resets, applies, builds
    and checks. Patches that do not apply are UNRESOLVED and not counted as tests."""
    row = Row(case.name, case.title, hunks=str(len(items)), mode="textbook")
    tests = failed_applies = 0

    def test(config: list[int]) -> str:
        nonlocal tests, failed_applies
        box.reset()
        if not box.apply(join_items(items[i] for i in config)):
            failed_applies += 1
            return UNRESOLVED
        if tests >= budget:
            raise OutOfBudget
        tests += 1
        return box.test()

    started = time.monotonic()
    answer: list[int] | None = None
    try:
        answer = ddmin(len(items), test)
    except OutOfBudget:
        row.outcome, row.over_budget = "budget ran out", True
    except ValueError:
        row.outcome = "all hunks applied do not fail"
    row.wall = f"{time.monotonic() - started:.1f}"
    row.count = tests
    row.tests = f"{tests}+" if row.over_budget else str(tests)
    if failed_applies:
        row.tests += f" (+{failed_applies} not applied)"
    if answer is None:
        return row
    row.outcome, row.size = "found", len(answer)
    row.answer = f"{len(answer)} of {len(items)}"
    return _judged(row, judge(judge_box, join_items(items[i] for i in answer)))


# -- git bisect run -----------------------------------------------------------------------------


def bisect(case: Case, box: Sandbox, timeout: float) -> Row:
    """`git bisect run` with the build and check; the check runs it took and what it named."""
    row = Row(case.name, case.title, mode="git bisect run")
    counter, script = box.root.parent / "bisect.count", box.root.parent / "bisect.sh"
    counter.unlink(missing_ok=True)
    check = shlex.join([str(box.bin / "python"), str(case.check)])
    build = f"{case.build} || exit 125" if case.build else "true"
    script.write_text(
        f"echo x >> {shlex.quote(str(counter))}\n{build}\n"
        f"timeout {timeout:g} {check}; rc=$?; [ $rc = 124 ] && exit 125; exit $rc\n"
    )
    box.reset("bad")
    git(box.root, "bisect", "start", "bad", "good")
    started = time.monotonic()
    done = run(["git", "bisect", "run", "sh", str(script)], box.root, box.env, SEARCH_TIMEOUT)
    row.wall = f"{time.monotonic() - started:.1f}"
    git(box.root, "bisect", "reset")
    row.exit = "timeout" if done.code is None else str(done.code)
    row.count = len(counter.read_text().splitlines()) if counter.exists() else 0
    row.tests = str(row.count)
    named = re.findall(r"^([0-9a-f]{40}) is the first bad commit", done.output, re.MULTILINE)
    bad = git(box.root, "rev-parse", "bad").strip()
    if named:
        row.outcome = f"names {named[-1][:7]}"
        row.answer = "1 commit"
        whole = "BAD, the whole change" if named[-1] == bad else "not BAD"
        row.verdict = f"{whole} (the only commit)"
    else:
        row.outcome = "names nothing"
    return row
