"""Real regressions in released PyPI packages: ddchange against textbook ddmin and `git bisect`.

    .venv/bin/python benchmarks/real.py                        # every case in benchmarks/real/
    .venv/bin/python benchmarks/real.py --cases sqlparse-in --modes default,ddmin-lines
    .venv/bin/python benchmarks/real.py --ddchange ../other-checkout   # measure its ddchange

The section is stamped with the commit of the ddchange measured (`--ddchange`: a checkout, whose
own .venv/bin/ddchange runs, or a ddchange command, whose checkout its Python tells), "with
uncommitted changes under src/" when it has any.

Owns the cases' runs and their section of benchmarks/RESULTS.md. Each case is a directory
`benchmarks/real/<case>/` with a `case.toml` (the package, its GOOD and BAD versions with the
sha256 of each sdist, where the regression is documented, extra PyPI requirements, an optional
build command, and the files and lines of the true cause) and a `check.py` that exits 0 on a
good tree, 1 on the regression, 125 when it cannot tell (run with the tree as working directory).

For each case: both sdists are downloaded (`pip download --no-binary :all:`, cached and checked
against their sha256) and committed as two commits, `good` and `bad`, of a fresh repository with
pinned identities and dates; the check runs with a per-case venv's python. Then, each in its own
way: ddchange (default, `--isolate`, `--no-dependencies`; `ddchange reset` before each, so that
no journal is shared), the reference searches of real_searches.REFERENCES (textbook ddmin,
Zeller and Hildebrandt, TSE 2002, over the blocks the default search ends at, the baseline of
every ratio, and beside it over its line changes and over git's hunks: an exact cache and
nothing else, no monotony, no dependencies; GOOD and BAD run first; every
test resets a clone, writes GOOD plus the units, builds and checks), and `git bisect run` (GOOD
and BAD run first). Every count is every run of the check. Every answer is judged without
ddchange, with git and the check alone, in a separate clone: the answer patch applied on `good`
must make the check exit 1, and at line level it must be 1-minimal: each hunk of its
`git diff -U0` is left out in turn, and the check must then stop failing.

Mode `triage` is for a case whose check writes per-test results: its case.toml says how ddchange
reads them (`results = "junit:report.xml"`) and names each test's culprit lines (`[tests]`,
`"case.name" = [lines]`). It gives two rows: `triage`, one `ddchange --results` run for every
test that passes at GOOD and fails at BAD, and `separate`, one `--results --test NAME` run per
such test, each from a reset journal, their runs summed. Each cause is judged from the JUnit
XML the check writes, in a separate clone: its patch applied on `good` must give its tests their
results at BAD and every other test its result at GOOD; leaving out any one hunk of its
`git diff -U0` must make one of its tests stop failing as at BAD; and it must add or remove its
tests' culprit lines.

Part `history` (benchmarks/real/history/, a section of its own) holds cases over a project's
real git history between two release tags:

    .venv/bin/python benchmarks/real.py --case-dir benchmarks/real/history --part history
    .venv/bin/python benchmarks/real.py --case-dir benchmarks/real/history --part history \
        --cases tomlkit-array-copy-history --mirrors /work/.mirror      # one case, quick

Such a case.toml names the GitHub project (`repository = "owner/name"`), GOOD and BAD as full
commit SHAs with the tags they stand for (`good_tag`, `bad_tag`), and its check (`check`, a
path from the case's directory; the check of the two-sdist case of the same regression). The
project comes from a local mirror, `--mirrors DIR` (DIR/owner+name holds a git directory),
cloned into the work directory with `good` and `bad` tagged at the two SHAs; a case whose mirror
is missing, or lacks the commits, is reported as skipped in one line. Its rows: `git bisect
run` (its steps, and the commit it names, whose own change is looked at for the culprit
lines), ddchange as it runs with no strategy given (`default`) and with `--strategy diff`, and
textbook ddmin over blocks (within `--budget`). A ddchange answer is judged on the JSON report's
`"base"` when it names one (the commit its patch applies on), else on `good`.

This script runs the cases and writes the section; real_cases.py builds a case (its repository
and venv), real_searches.py runs the searches (a row each), real_judge.py tests trees in a clone
and judges the answers.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import results
from real_cases import (
    GIT_TIMEOUT,
    MIRRORS,
    Broken,
    Case,
    Skipped,
    clean_env,
    git_bytes,
    load_case,
    make_repo,
    run,
    venv,
)
from real_judge import Sandbox, precheck, split_items, suite_ends
from real_searches import (
    BASELINE,
    BISECT,
    COLUMNS,
    FLAGS,
    REFERENCES,
    Row,
    bisect,
    ddchange,
    reference,
    triage_rows,
    units,
)
from results import PARTS, parts_prose, span

HEADING = "## Real regressions (`benchmarks/real.py`)"
SDIST_CASES = "Each case is two released sdists committed as `good` and `bad`."
HISTORY_CASES = (
    "Each case is a range of its project's own git history between two release tags, GOOD "
    "and BAD pinned as full commit SHAs, cloned from a local mirror (`--mirrors DIR`: "
    "`DIR/owner+name` holds a git directory) and tagged `good` and `bad` there; a case whose "
    "mirror is not there is skipped, with one line that says why. `git bisect run` bisects "
    "that history as a user runs it (every parent, not only the first), and its row names the "
    "commit it found: its verdict says whether that commit's own change (against its first "
    "parent) adds or removes the documented culprit lines. ddchange runs as it does with no "
    "strategy given (`default`, which bisects the first-parent history first when that is "
    "the default) and with `--strategy diff` (the whole difference); an answer is judged on "
    "the commit its patch applies on, the JSON report's `base` (the parent of the commit a "
    "search went inside), or on `good` when the report names none; `answer` says `on SHA` "
    "when that is not `good`."
)
HERE = Path(__file__).resolve().parent
CASES = HERE / "real"
DDCHANGE = Path(sys.executable).with_name("ddchange")
BY_MODE = {ref.mode: ref for ref in REFERENCES}
MODES = ("default", "diff", "isolate", "no-dependencies", *BY_MODE, "bisect", "triage")
# What runs when --modes is not given: on two sdists, all but `diff` (with one commit between
# them, the default can only search the whole difference too); on a range of history, git
# bisect, ddchange's default and `--strategy diff`, and the baseline.
SDIST_MODES = tuple(mode for mode in MODES if mode != "diff")
HISTORY_MODES = ("bisect", "default", "diff", BASELINE)
TRIAGE = {"triage", "separate", "triage-diff"}  # the rows of mode triage (the last: history)


# -- one case -----------------------------------------------------------------------------------


def run_case(case: Case, args: argparse.Namespace) -> list[Row]:
    """Every selected mode on `case`: its rows (one "broken" row when it cannot run)."""
    work = args.work / case.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    repo = make_repo(case, work, args.mirrors)
    bin_dir = venv(case)
    judge_box = Sandbox.clone(case, repo, work / "judge", bin_dir, args.timeout)
    precheck(judge_box)
    items = split_items(git_bytes(repo, "diff", "--binary", "-M", "--no-color", "good", "bad"))
    rows = []
    for mode in args.modes or (HISTORY_MODES if case.repository else SDIST_MODES):
        if mode == "triage" and not case.results:
            print("   triage: the case's check writes no per-test results", flush=True)
            continue
        if mode == "triage":
            made = triage_rows(case, repo, judge_box, suite_ends(judge_box), args)
        elif mode in FLAGS:
            made = [ddchange(case, repo, judge_box, mode, args)]
        elif mode in BY_MODE:
            ref = BY_MODE[mode]
            box = Sandbox.clone(case, repo, work / mode, bin_dir, args.timeout)
            made = [reference(case, ref, units(repo, ref.granularity), box, judge_box, args.budget)]
        else:
            box = Sandbox.clone(case, repo, work / "bisect", bin_dir, args.timeout)
            made = [bisect(case, box, args.timeout)]
        for row in made:
            row.hunks = str(len(items))
            print(" | ".join(row.cells()), flush=True)
        rows += made
    return rows


# -- the section --------------------------------------------------------------------------------


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r.cells()) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def summary(rows: list[Row]) -> list[str]:
    """The targets, each over the cases where both sides ran, read from the rows."""
    by_case: dict[str, dict[str, Row]] = {}
    for row in rows:
        by_case.setdefault(row.case, {})[row.mode] = row
    if all(row.mode in TRIAGE for row in rows):
        return triage_summary(by_case)
    default = [m for m in by_case.values() if "default" in m]
    right = sum(m["default"].right for m in default)
    lines = [f"- default answer right on {right} of {len(default)}"]
    sized = [m for m in default if "no-dependencies" in m and None not in _sizes(m)]
    smaller = sum(m["default"].size <= m["no-dependencies"].size for m in sized)  # type: ignore[operator]
    if sized:
        lines.append(f"- default answer ≤ --no-dependencies answer on {smaller} of {len(sized)}")
    diff = [m for m in default if "diff" in m and m["default"].count is not None]
    if diff:
        right = sum(m["diff"].right for m in diff)
        fewer = sum(_not_more(m["default"], m["diff"]) for m in diff)
        lines.append(f"- --strategy diff answer right on {right} of {len(diff)}")
        lines.append(f"- default tests ≤ --strategy diff tests on {fewer} of {len(diff)}")
    bisected = [m[BISECT] for m in by_case.values() if BISECT in m and m[BISECT].culprit != "—"]
    if bisected:  # history cases: the two-commit ones name no culprit
        held = sum(row.culprit == "yes" for row in bisected)
        lines.append(
            f"- git bisect run named a commit whose change holds the culprit lines on {held} "
            f"of {len(bisected)}"
        )
    for ref in REFERENCES:
        both = [m for m in default if ref.mode in m and m["default"].count is not None]
        if not both:  # not run in this part
            continue
        fewer = sum(_not_more(m["default"], m[ref.mode]) for m in both)
        lines.append(f"- default tests ≤ {ref.mode} tests on {fewer} of {len(both)} (all runs)")
        lines += _total(ref.mode, [(m["default"], m[ref.mode]) for m in both])
    return lines


def triage_summary(by_case: dict[str, dict[str, Row]]) -> list[str]:
    """Triage's causes right, and its tests beside one search per failing test, from the rows."""
    ran = [m for m in by_case.values() if "triage" in m]
    right = sum(m["triage"].right for m in ran)
    lines = [
        f"- triage: every failing test in a cause and every cause right on {right} of {len(ran)}"
    ]
    both = [m for m in ran if "separate" in m]
    if both:
        fewer = sum(_not_more(m["triage"], m["separate"]) for m in both)
        ours = sum(m["triage"].count or 0 for m in both)
        theirs = sum(m["separate"].count or 0 for m in both)
        lines.append(f"- triage tests ≤ separate tests on {fewer} of {len(both)}")
        if theirs:
            ratio = f"{ours / theirs:.2f}×"
            lines.append(f"- total tests: triage {ours} vs separate {theirs} = {ratio}")
    whole = [m for m in ran if "triage-diff" in m]
    if whole:  # ranges of history: the default goes inside the first bad commits
        right = sum(m["triage-diff"].right for m in whole)
        fewer = sum(_not_more(m["triage"], m["triage-diff"]) for m in whole)
        ranged = sum(m["triage-diff"].count or 0 for m in whole)
        ours = sum(m["triage"].count or 0 for m in whole)
        lines += [
            f"- triage --strategy diff: every cause right on {right} of {len(whole)}",
            f"- triage (default) tests ≤ triage --strategy diff tests on {fewer} of {len(whole)}",
        ]
        if ranged:
            lines.append(
                f"- total tests on ranges of history: triage {ours} vs triage --strategy diff "
                f"{ranged} = {ours / ranged:.2f}×"
            )
    return lines


def _sizes(modes: dict[str, Row]) -> tuple[int | None, int | None]:
    return modes["default"].size, modes["no-dependencies"].size


def _not_more(default: Row, other: Row) -> bool:
    """default.count ≤ other's (a search out of budget took more than it ran)."""
    if default.count is None or other.count is None:
        return False
    if other.over_budget:
        return default.count <= other.count
    return other.outcome == "found" and default.count <= other.count


def _total(mode: str, pairs: list[tuple[Row, Row]]) -> list[str]:
    """All runs summed over the cases where both found an answer, and their ratio."""
    found = [(d, o) for d, o in pairs if d.outcome == o.outcome == "found"]
    ours = sum(d.count or 0 for d, _ in found)
    theirs = sum(o.count or 0 for _, o in found)
    if not theirs:
        return []
    baseline = " (the baseline: the default's own unit)" if mode == BASELINE else ""
    return [
        f"- total tests where both found an answer ({len(found)} cases): ddchange default "
        f"{ours} vs {mode} {theirs} = {ours / theirs:.2f}×{baseline}"
    ]


def section(rows: list[Row], ran: list[str], seconds: float, history: bool) -> str:
    git_version = run(["git", "--version"], HERE, clean_env(), GIT_TIMEOUT).output.split()[-1]
    command = shlex.join(["benchmarks/real.py", *sys.argv[1:]])
    cases = ", ".join(f"`{name}`" for name in ran) or "none"
    ours = [r.runs for r in rows if r.mode in FLAGS and r.runs is not None]
    theirs = [r.runs.preflight for r in rows if r.mode not in FLAGS and r.runs is not None]
    references = "; ".join(f"`{ref.mode}`: {ref.description}" for ref in REFERENCES)
    intro = (
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores, git {git_version}: `.venv/bin/python "
        f"{command}`, {seconds / 60:.1f} minutes. Cases: {cases}. "
        + (HISTORY_CASES if history else SDIST_CASES)
        + " `hunks` are the hunks of `git diff -M good bad` (a whole added, deleted, renamed "
        "or binary file is one). "
        "`tests` counts every run of the check on every row, and `"
        f"{PARTS}` splits it. ddchange runs with `--timeout` and each case's build, from a "
        "reset journal; `answer` is its number of changes (for `--isolate` the difference, "
        f"with its passing set), `tests` its `tests_run`; {parts_prose(ours)}. Reference "
        f"searches ({references}) see GOOD plus a set of units, written as ddchange's "
        "`materialize` computes it, with an exact cache only; before searching, each runs "
        "GOOD once and BAD once, as a user must to trust its answer, and those runs are in "
        f"its `tests` ({span(theirs)} runs in the pre-flight column of the reference and "
        f"bisect rows); `N+`: the budget ran out. The baseline of the ratios is `{BASELINE}`, "
        "textbook ddmin over the default search's own unit, the block; `ddmin-lines` (a finer "
        "unit, which costs ddmin more tests and so flatters ddchange) and the others stand "
        "beside it. `git bisect run` "
        "counts its check runs, also after one run of GOOD and one of BAD"
        + ("" if history else "; with two commits it can only name BAD")
        + ". The "
        "verdict is independent of ddchange, from git and the check alone in a separate "
        'clone: the answer patch applied on `good` must make the check exit 1 ("reproduces"), '
        "and leaving out any one hunk of its `git diff -U0` must make it stop failing "
        '("k of n removable" otherwise; for `--isolate` the patch is the whole failing set, so '
        "removable hunks are expected). The judge's unit is a hunk of the answer's own "
        "`git diff -U0` against `good`: a run of changed lines between unchanged ones, like "
        "ddchange's line changes (git may align a partial change otherwise), and finer than "
        "git's `-U3` hunks, so an answer 1-minimal in hunks can have removable `-U0` hunks. "
        '"right": reproduces, '
        '1-minimal, and adds or removes every documented culprit line; "holds culprit" says '
        "whether it does that last. Checks run with `PYTHONDONTWRITEBYTECODE=1`."
    )
    if any(r.mode in TRIAGE for r in rows):
        intro += (
            " Whole-suite triage (mode `triage`, for a case whose check writes JUnit XML with "
            "one test per documented regression): `triage` is one `ddchange --results` run "
            "for every test that passes at GOOD and fails at BAD; `separate` is one "
            "`--results --test NAME` run per such test, each from a reset journal, their "
            "runs summed; on a range of history, `triage-diff` is one run with `--strategy "
            "diff` (the whole range triaged); a case has the rows `--triage-rows` names (all "
            "by default). `answer`: the causes, their changes, the failing "
            "tests they cover. Each cause is judged from the check's JUnit XML in a separate "
            "clone: its patch applied on its `base` from the JSON report (`good`, or the parent "
            "of the first bad commit the default went inside) must give its tests their "
            "results at BAD and every other test its result at that base, from a run of the "
            'check there ("its tests alone"), leaving out any one hunk of its `git diff -U0` '
            'must make one of its tests stop failing as at BAD ("k of n removable" otherwise), '
            "and it must add or remove the culprit lines case.toml names for its tests (`holds "
            "culprit`: causes that do), each as the release has it or, where case.toml gives "
            "that form too, as the first bad commit `git bisect run` names wrote it."
        )
    return intro + "\n\n" + table(rows) + "\n" + "\n".join(summary(rows)) + "\n"


def write(path: Path, body: str, part: str | None, stamped: str) -> None:
    """Put the section into `path` (RESULTS.md by default), keeping every other section; a
    `part` (cases run apart, such as the slow C build) has a section of its own."""
    results.write_section(f"{HEADING}: {part}" if part else HEADING, body, path, stamped)


# -- main ---------------------------------------------------------------------------------------


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument(
        "--modes",
        default="",
        help=f"of {','.join(MODES)} (default: {','.join(SDIST_MODES)}; for a history case "
        f"{','.join(HISTORY_MODES)})",
    )
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=MIRRORS,
        help="where history cases' projects are mirrored: DIR/owner+name holds a git directory",
    )
    parser.add_argument("--budget", type=int, default=3000, help="tests per reference search")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir(), "ddchange-real"))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per build or check")
    parser.add_argument("--case-dir", type=Path, default=CASES, help="where the cases are")
    parser.add_argument("--results", type=Path, default=results.RESULTS, help="file to write")
    parser.add_argument(
        "--ddchange",
        type=Path,
        default=DDCHANGE,
        help="the ddchange to measure: a checkout (its .venv/bin/ddchange runs) or the command",
    )
    parser.add_argument("--part", help="write a section of its own, named PART")
    parser.add_argument(
        "--triage-rows",
        default=",".join(sorted(TRIAGE)),
        help="the rows of mode triage to run (default: all of them)",
    )
    args = parser.parse_args(argv)
    args.modes = [m for m in args.modes.split(",") if m]
    unknown = set(args.modes) - set(MODES)
    if unknown:
        parser.error(f"unknown mode(s): {', '.join(sorted(unknown))}")
    args.triage_rows = [r for r in args.triage_rows.split(",") if r]
    if set(args.triage_rows) - TRIAGE:
        parser.error(f"--triage-rows: of {','.join(sorted(TRIAGE))}")
    args.work = args.work.resolve()
    args.ddchange, args.measured = measured(parser, args.ddchange)
    return args


def measured(parser: argparse.ArgumentParser, given: Path) -> tuple[Path, Path | None]:
    """The command to run and the checkout it comes from (the section is stamped with its
    commit): `given` a checkout, its own `.venv/bin/ddchange`; else the command itself."""
    if given.is_dir():
        command = given / ".venv" / "bin" / "ddchange"
        if not command.is_file():
            parser.error(
                f"--ddchange {given}: no .venv/bin/ddchange there (in it: python3 -m venv .venv "
                "&& .venv/bin/pip install -e .)"
            )
        return command.absolute(), results.checkout_of(given)
    if not given.is_file():
        parser.error(f"--ddchange {given}: no such checkout or command")
    return given.absolute(), results.command_checkout(given)


def select(case_dir: Path, names: str | None) -> list[Path]:
    """The case directories to run, by name (an unknown name is an error)."""
    found = (
        sorted(p for p in case_dir.iterdir() if (p / "case.toml").exists())
        if case_dir.is_dir()
        else []
    )
    if names is None:
        return found
    wanted = [n for n in names.split(",") if n]
    missing = [n for n in wanted if not (case_dir / n / "case.toml").exists()]
    if missing:
        raise SystemExit(f"real.py: no such case in {case_dir}: {', '.join(missing)}")
    return [case_dir / n for n in wanted]


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    directories = select(args.case_dir, args.cases)
    if not directories:
        raise SystemExit(f"real.py: no cases in {args.case_dir}")
    stamped = results.stamp_of(args.measured)  # when the run starts: the code it began with
    started = time.monotonic()
    rows: list[Row] = []
    ran = []
    history = False  # whether a case of this run is a range of history
    for directory in directories:
        ran.append(directory.name)
        print(f"== {directory.name}", flush=True)
        title = "—"
        try:
            case = load_case(directory)
            title, history = case.title, history or bool(case.repository)
            rows += run_case(case, args)
        except Skipped as error:
            print(f"   skipped: {error}", flush=True)
            rows.append(Row(directory.name, title, verdict=f"skipped: {error}"))
        except Broken as error:
            print(f"   broken: {error}", flush=True)
            rows.append(Row(directory.name, title, verdict=f"broken: {error}"))
        # After every case, so that a long run that is stopped keeps what it measured (the
        # section names the cases that ran).
        body = section(rows, ran, time.monotonic() - started, history)
        write(args.results, body, args.part, stamped)
    print(body, end="")


if __name__ == "__main__":
    main()
