"""Parallel runs: `-j 1` against `-j 2` and `-j 4`, on tests that sleep 0.5 s and use little CPU.

    .venv/bin/python benchmarks/jobs.py [--jobs 1,2,4]   # rewrites its section of RESULTS.md

Each case is built fresh for every N (the same commits each time) and searched once, in this
process, with the default options (pre-flight, search, the check, the confirmation and the
flaky-test check). "same search and answer as -j 1" compares the search's records without
their durations (phase, configuration, outcome, reason and exit code, in order), the answer,
and where it stands (its base, and the first bad commit): not the bisection's records, which
test N commits a round with -j N.
"tests run" are the records (the runs the search and the checks asked for); "run ahead, not
needed" are the runs started early that no one asked for (no records). "wall" is the whole
run, and "× -j 1" its ratio to the `-j 1` run of the same case.

Then the same without the confirmation and the flaky-test check (`--no-confirm`): the search
alone. Its tests are a chain in which each outcome picks the next test, so a run ahead is a
guess (the likeliest next ones are run: a first half before a second, and so on); the check's
runs are all known once the answer is, and go side by side.

Then each case once more on a Dask LocalCluster of 2 worker processes (1 thread each) on
loopback, through `--scheduler`, against its `-j 2` run: the same answer and records?
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import tempfile
from pathlib import Path

import distributed
from hostile import Case, build
from results import write_section

from ddchange import model, samples, session

HEADING = "## Parallel runs (`benchmarks/jobs.py`)"
SLEEP = 0.5
SAMPLES = ("wrong-line", "two-files", "py-rename")


def many_files(count: int) -> Case:
    """`count` files, every one changed in BAD; the test fails on the change to one of them."""
    good = {f"d{n % 8}/f{n}.txt": f"file {n}\nline 2\n" for n in range(count)}
    bad: dict[str, str | None] = {p: t.replace("line 2", "line two") for p, t in good.items()}
    culprit = f"d{count // 3 % 8}/f{count // 3}.txt"
    test = f"sleep {SLEEP}\ngrep -q 'line two' {culprit} && exit 1; exit 0\n"
    return Case(f"{count} files, all changed", good, bad, test, [(culprit, "text")])


def _decisions(result: model.Result) -> list[object]:
    """The search's records and its answer, where it stands: not the bisection's records,
    which test N commits a round with -j N (its first bad commit is the same for every N)."""
    records = [
        (r.phase, sorted(r.config), r.outcome, r.reason, r.exit_code)
        for r in result.log
        if r.phase not in (model.Stage.BISECT, model.Stage.ON_GOOD)
        and model.tree_commit(r.config) is None
    ]
    ends = (result.revisions, result.route.first_bad)
    return [*records, sorted(h.id for h in result.culprits), ends]


def _slowed(test: tuple[str, ...]) -> tuple[str, ...]:
    return ("sh", "-c", f'sleep {SLEEP}; exec "$@"', "sh", *test)


def search(
    name: str,
    workdir: Path,
    jobs: int,
    scheduler: str | None = None,
    *,
    confirm: bool = True,
    whole: bool = False,
) -> model.Result:
    """One run of case `name` with -j `jobs` (or on the Dask cluster at `scheduler`), in a
    repository of its own under `workdir`; `confirm` False: the search alone; `whole`: over
    the whole range (--strategy diff), as with --scheduler."""
    kind = f"{'-dask' if scheduler else ''}{'' if confirm else '-alone'}{'-whole' if whole else ''}"
    repo = workdir / f"{name}-j{jobs}{kind}"
    if name in SAMPLES:
        scenario = samples.load(name)
        samples.build_repo(scenario, repo)
        request = samples.request(scenario, repo)
        request = dataclasses.replace(request, test=_slowed(request.test), timeout=None)
    else:
        build(many_files(64), repo)
        request = model.Request(repo=repo, good="HEAD~1", bad="HEAD", test=("sh", "test.sh"))
    strategy = model.Strategy.DIFF if whole else request.strategy
    return session.run(
        dataclasses.replace(
            request, jobs=jobs, scheduler=scheduler, confirm=confirm, strategy=strategy
        )
    )


def compared(
    tmp: Path, counts: list[int], *, confirm: bool
) -> tuple[list[list[str]], dict[int, list[float]], dict[str, model.Result]]:
    """Every case at every -j in `counts`: a row each, the ratios to -j 1 by N, and the -j 2
    results by case."""
    rows: list[list[str]] = []
    ratios: dict[int, list[float]] = {n: [] for n in counts}
    two: dict[str, model.Result] = {}
    for name in ("64 files", *SAMPLES):
        first: model.Result | None = None
        for jobs in counts:
            result = search(name, tmp, jobs, confirm=confirm)
            if jobs == 2:
                two[name] = result
            first = first or result
            same = _decisions(result) == _decisions(first)
            ratio = result.wall_time / first.wall_time
            ratios[jobs].append(ratio)
            rows.append([
                name, str(len(result.diff.hunks)), str(jobs), str(len(result.culprits)),
                result.outcome, "yes" if same else "NO", str(result.tests_run),
                str(result.unused), f"{result.wall_time:.1f}", f"{ratio:.2f}×",
            ])  # fmt: skip
            print(" | ".join(rows[-1]), flush=True)
    return rows, ratios, two


def summary(counts: list[int], ratios: dict[int, list[float]]) -> str:
    return "\n".join(
        f"- -j {n}: wall time {min(ratios[n]):.2f}× to {max(ratios[n]):.2f}× of -j 1"
        for n in counts[1:]
    )


def table(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", default="1,2,4")
    args = parser.parse_args()
    counts = [int(n) for n in args.jobs.split(",")]
    dask_rows = []
    with tempfile.TemporaryDirectory(prefix="ddchange-jobs-") as tmp:
        rows, ratios, two = compared(Path(tmp), counts, confirm=True)
        alone, alone_ratios, _ = compared(Path(tmp), counts, confirm=False)
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None,
        ) as cluster:  # fmt: skip
            for name in two:
                local = search(name, Path(tmp), 2, whole=True)
                result = search(name, Path(tmp), 1, cluster.scheduler_address)
                same = _decisions(result) == _decisions(local)
                dask_rows.append([
                    name, str(len(result.culprits)), result.outcome, "yes" if same else "NO",
                    str(result.tests_run), str(result.unused), f"{result.wall_time:.1f}",
                    f"{local.wall_time:.1f}",
                ])  # fmt: skip
                print(" | ".join(dask_rows[-1]), flush=True)
    columns = [
        "case",
        "hunks",
        "-j",
        "answer",
        "outcome",
        "same search and answer as -j 1",
        "tests run",
        "run ahead, not needed",
        "wall s",
        "× -j 1",
    ]
    body = (
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores: `benchmarks/jobs.py --jobs {args.jobs}`. "
        f"Every test sleeps {SLEEP} s first (the samples' own tests run after the sleep). See "
        "the script's docstring for the columns.\n\n"
        + table(columns, rows)
        + "\n"
        + summary(counts, ratios)
        + "\n\nThe search alone (`--no-confirm`):\n\n"
        + table(columns, alone)
        + "\n"
        + summary(counts, alone_ratios)
        + "\n\nA Dask LocalCluster of 2 worker processes against `-j 2`, both over the whole "
        "range (with `--scheduler` ddchange searches it: its workers get GOOD, not the commits "
        "between):\n\n"
        + table(
            [
                "case",
                "answer",
                "outcome",
                "same records as -j 2",
                "tests run",
                "run ahead, not needed",
                "wall s",
                "-j 2 wall s",
            ],
            dask_rows,
        )  # fmt: skip
    )
    print(body)
    write_section(HEADING, body)


if __name__ == "__main__":
    main()
