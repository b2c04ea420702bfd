"""-j N, end to end: the same answer and the same records for every N, tests that really run
side by side, and Ctrl-C that stops all of them.

The records are compared without their durations (the only field a run's timing sets): phase,
configuration, outcome, reason and exit code, in order. That is the journal's sequence of
decisions, and every claim of the report is read from it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from endtoend import Run, ddchange, found, two_commits
from gitsandbox import checkout_state

from ddchange import model, samples, session

SampleRepo = Callable[[str], tuple[Path, samples.Scenario]]


def _decisions(result: model.Result) -> list[tuple[object, ...]]:
    """The search's records: not the bisection's, which tests N commits a round with -j N
    (its first bad commit, not its records, is the same for every N), nor the answer's run
    on GOOD after it."""
    return [
        (r.phase, sorted(r.config), r.outcome, r.reason, r.exit_code)
        for r in result.log
        if r.phase not in (model.Stage.BISECT, model.Stage.ON_GOOD)
        and model.tree_commit(r.config) is None
    ]


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("c-make", {}),  # make, incremental builds in each tree
        ("py-rename", {"isolate": True}),
        ("merge", {"strategy": "auto"}),  # bisection, then the search
        ("two-files", {"dependencies": False}),
    ],
)
def test_every_n_gives_the_same_answer_and_the_same_records(
    sample_repo: SampleRepo, name: str, options: dict[str, object]
) -> None:
    seen = {}
    for jobs in (1, 3):
        repo, scenario = sample_repo(name)  # the same commits, a journal of its own
        request = dataclasses.replace(samples.request(scenario, repo), jobs=jobs, **options)
        result = session.run(request)
        assert result.outcome == "found"
        culprits = [h.id for h in result.culprits]
        ends = (result.revisions, result.route.first_bad)
        seen[jobs] = (culprits, ends, _decisions(result), result.stats.tests_run)
        if jobs == 1:
            assert result.unused == 0
    assert seen[3] == seen[1]


def _overlap(log: Path) -> int:
    """The most tests that were running at once, from their "begin"/"end" lines."""
    now = most = 0
    for line in log.read_text().split():
        now += 1 if line == "begin" else -1
        most = max(most, now)
    return most


# A test waits (up to 10 s) until three have been running at once, which it marks: the first
# three that ddchange runs side by side then overlap however slowly the machine starts them,
# and the tests after them go on at once. (The pre-flight runs two: they wait out the 10 s.)
SLOW = (
    'echo begin >> "$STARTS"; n=0\n'
    'while [ ! -e "$STARTS.three" ] && [ $n -lt 200 ]; do\n'
    '  running=$(( $(grep -c begin "$STARTS") - $(grep -c end "$STARTS") ))\n'
    '  [ $running -ge 3 ] && touch "$STARTS.three"\n'
    "  sleep 0.05; n=$((n + 1))\n"
    "done\n"
    'grep -q BROKEN a.txt; failed=$?\necho end >> "$STARTS"\n'
    "[ $failed = 0 ] && exit 1; exit 0\n"
)


def test_tests_run_side_by_side_and_the_report_counts_the_runs_ahead(tmp_path: Path) -> None:
    files = {f"f{n}.txt": f"line {n}\n" for n in range(12)}
    bad = {**{k: v + "more\n" for k, v in files.items()}, "a.txt": "BROKEN\n"}
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n", **files}, bad, SLOW)
    log = tmp_path / "starts"
    run = ddchange(
        repo.path, "good..bad", "-j", "3", "--", "sh", "test.sh", env={"STARTS": str(log)}
    )
    assert found(run) == [("a.txt", "text")]
    assert _overlap(log) == 3, "three tests ran at once"
    report = run.report
    assert report["jobs"] == 3
    begun = log.read_text().split().count("begin")
    assert begun == report["tests_run"] + report["tests_ahead_unused"] + _stopped(log)
    assert "up to 3 tests at once" in run.stdout


def _stopped(log: Path) -> int:
    """Runs ahead that were stopped before their end (begun, never ended): no outcome."""
    words = log.read_text().split()
    return words.count("begin") - words.count("end")


def test_a_bad_count_of_jobs_is_one_line(tmp_path: Path) -> None:
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, "exit 0\n")
    run = ddchange(repo.path, "good..bad", "-j", "0", "--", "sh", "test.sh")
    assert run.returncode == 2
    assert "'0' is not a count from 1, nor auto" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


HANGS = (
    'if [ -e "$GO" ]; then echo $$ >> "$PIDS"; sleep 30 & wait; fi\n'
    "grep -q BROKEN a.txt && exit 1; exit 0\n"
)


def test_ctrl_c_stops_every_test_in_flight_and_leaves_nothing(tmp_path: Path) -> None:
    """The pre-flight runs fast; then every test hangs, three at once, until Ctrl-C: every test
    that began to hang is stopped (a run made ahead that the search no longer needs is stopped
    before, and another takes its slot), no scratch tree is left, and the repository is as it
    was."""
    files = {f"f{n}.txt": f"line {n}\n" for n in range(40)}
    bad = {**{k: v + "more\n" for k, v in files.items()}, "a.txt": "BROKEN\n"}
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n", **files}, bad, HANGS)
    before = checkout_state(repo.path)
    pids, go, temporary = tmp_path / "pids", tmp_path / "go", tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "PIDS": str(pids), "GO": str(go), "TMPDIR": str(temporary)}
    command = [sys.executable, "-m", "ddchange", "good..bad", "-j", "3", "--", "sh", "test.sh"]
    process = subprocess.Popen(
        command, cwd=repo.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    seen = 0
    while seen < 4:  # the pre-flight's two runs, and two of the search
        line = process.stderr.readline()
        assert line, "ddchange ended early"
        seen += line.startswith("test")
    go.touch()
    deadline = time.monotonic() + 60
    while _count(pids) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) >= 3, "three tests were in flight"
    assert not any(_alive(pid) for pid in started)
    assert list(temporary.iterdir()) == [], "no scratch tree is left"
    assert checkout_state(repo.path) == before
    assert out.startswith("ddchange: interrupted.")


def _count(pids: Path) -> int:
    return len(pids.read_text().split()) if pids.exists() else 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return (
        Path(f"/proc/{pid}").exists()
        and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    )


# -- a Dask cluster ---------------------------------------------------------------------------


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A LocalCluster of 2 worker processes (with nannies) on loopback, of this test alone (a
    test that kills workers leaves none behind for the next one: a nanny may not start its
    worker again), whose temporary directory is one of its own: its address, and that
    directory."""
    distributed = pytest.importorskip("distributed")
    temporary = tmp_path_factory.mktemp("workers-tmp")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("TMPDIR", str(temporary))  # the worker processes inherit it
        with distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            worker_dashboard_address=None,
        ) as local:
            local.wait_for_workers(2, timeout=120)
            yield local.scheduler_address, temporary


# With --scheduler the whole range is searched (the workers get GOOD, not the commits after
# it): a local run to compare with searches it too.
_WHOLE = ("--strategy", "diff")


def _on(address: str, repo: Path, scenario: samples.Scenario, *options: str) -> Run:
    return ddchange(
        repo, f"{scenario.good}..{scenario.bad}", *options, "--scheduler", address, "--",
        *scenario.test,
    )  # fmt: skip


def test_a_dask_cluster_gives_the_same_answer_and_records_as_local_runs(
    sample_repo: SampleRepo, cluster: tuple[str, Path]
) -> None:
    address, temporary = cluster
    seen = []
    for where in ("-j 2", "dask"):
        repo, scenario = sample_repo("two-files")
        if where == "dask":
            run = _on(address, repo, scenario)
        else:
            run = ddchange(
                repo, f"{scenario.good}..{scenario.bad}", "-j", "2", *_WHOLE, "--", *scenario.test
            )
        assert run.returncode == 0, run.stderr
        log = ddchange(repo, command=["log"]).stdout
        records = [json.loads(line[5:]) for line in log.splitlines() if line.startswith("test ")]
        for record in records:
            del record["duration"]
        seen.append((run.culprits, records, run.report["jobs"]))
    assert seen[0] == seen[1]
    assert _kept(temporary) == [], "the workers removed their clones"


def test_a_triaged_suite_on_a_dask_cluster_gives_the_records_of_one_slot(
    sample_repo: SampleRepo, cluster: tuple[str, Path]
) -> None:
    """--results on the cluster: each worker reads its run's results (the recipe carries
    where they are), and the records and causes are those of local -j 1 over the whole range
    (the workers get GOOD, not the commits between)."""
    address, temporary = cluster
    seen = []
    for where in (_WHOLE, ("--scheduler", address)):
        repo, scenario = sample_repo("suite-triage")
        spec = ("--results", *scenario.results)
        run = ddchange(
            repo, f"{scenario.good}..{scenario.bad}", *spec, *where, "--", *scenario.test,
            command=["run", "--json", str(repo.parent / "triage.json")],
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        report = json.loads((repo.parent / "triage.json").read_text())
        seen.append(
            (report["causes"], [(r["phase"], r["config"], r["cases"]) for r in report["log"]])
        )
    assert seen[0] == seen[1]
    assert len(seen[0][0]) == 3
    assert _kept(temporary) == [], "the workers removed their clones"


def test_a_reduction_on_a_dask_cluster_gives_the_result_and_records_of_local_runs(
    cluster: tuple[str, Path], tmp_path: Path
) -> None:
    """`ddchange reduce --scheduler`: each worker writes the candidate in a directory of its
    own and runs the check there (named by its absolute path); the result and the records are
    those of `-j 2` on this machine; the original file is untouched, and the workers leave
    nothing behind."""
    address, temporary = cluster
    seen = []
    for where in (("-j", "2"), ("--scheduler", address)):
        here = tmp_path / where[0].strip("-") / "work"
        here.mkdir(parents=True)
        lines = [f"item {n}: {'KEY' if n == 137 else 'plain'} value {n}\n" for n in range(300)]
        (here / "list.txt").write_text("".join(lines))
        before = (here / "list.txt").stat().st_mtime_ns
        where_ran = here.parent / "ran-in"
        check = f"#!/bin/sh\npwd >> {where_ran}\ngrep -q KEY list.txt && exit 1\nexit 0\n"
        (here / "check.sh").write_text(check)
        (here / "check.sh").chmod(0o755)
        done = subprocess.run(
            [sys.executable, "-m", "ddchange", "reduce", "list.txt", *where, "--json", "r.json",
             "-q", "--", "./check.sh"],
            cwd=here, env={**os.environ, "XDG_CACHE_HOME": str(here.parent / "cache")},
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert (here / "list.txt").read_text() == "".join(lines)  # the original, untouched
        assert (here / "list.txt").stat().st_mtime_ns == before
        report = json.loads((here / "r.json").read_text())
        records = [(r["phase"], r["config"], r["outcome"], r["exit_code"]) for r in report["log"]]
        seen.append(((here / "list.txt.reduced").read_text(), records, report["minimal"]))
        on_workers = {"/ddchange-worker-" in d for d in where_ran.read_text().splitlines()}
        assert on_workers == {where[0] == "--scheduler"}  # every test ran there, or none
    assert seen[0] == seen[1]
    assert seen[1][0] == "KEY"
    assert _kept(temporary) == [], "the workers removed the candidates' directories"


def _kept(temporary: Path) -> list[Path]:
    """What is left in the workers' temporary directory, beside their directories that hold
    nothing but their marker."""
    return [
        path
        for path in temporary.glob("ddchange-*")
        if not path.name.startswith("ddchange-worker-")
        or any(entry.name != "ddchange-owner" for entry in path.iterdir())
    ]


def test_a_worker_lost_in_a_test_is_no_outcome(
    sample_repo: SampleRepo, cluster: tuple[str, Path], tmp_path: Path
) -> None:
    """The first test kills the worker that runs it (its parent): Dask runs it again on the
    other worker, and the run ends as a local one does, with no record of the lost run."""
    address, temporary = cluster
    repo, scenario = sample_repo("wrong-line")
    flag = tmp_path / "killed"
    # mkdir is atomic: of the tests that start together, only one kills its worker
    killer = f'mkdir {flag} 2>/dev/null && {{ kill -9 $PPID; sleep 2; }}; exec "$@"'
    lost = dataclasses.replace(scenario, test=("sh", "-c", killer, "sh", *scenario.test))
    run = _on(address, repo, lost)
    assert flag.exists(), "a worker was killed"
    local, _ = sample_repo("wrong-line")
    assert found(run) == found(
        ddchange(local, f"{scenario.good}..{scenario.bad}", *_WHOLE, "--", *scenario.test)
    )
    # no record of the lost run: the same tests and outcomes as a local run's
    assert _outcomes(_records(repo)) == _outcomes(_records(local))
    # the killed worker's clone is gone by the end of the run, and the test running in it
    assert _kept(temporary) == []


def test_the_workers_started_in_place_of_lost_ones_get_the_run(
    sample_repo: SampleRepo, cluster: tuple[str, Path], tmp_path: Path
) -> None:
    """The pre-flight's first tests kill both workers the run began with; their nannies start
    new ones, which get the run's repository (the old workers, which had it, are gone) and
    finish the run as a local one ends, with no record of the lost runs."""
    address, temporary = cluster
    distributed = pytest.importorskip("distributed")
    with distributed.Client(address) as client:
        first = sorted(client.run(os.getpid).values())
    repo, scenario = sample_repo("wrong-line")
    marks = tmp_path / "marks"
    marks.mkdir()
    killer = (
        f"case $PPID in {first[0]}|{first[1]}) mkdir {marks}/$PPID 2>/dev/null"
        ' && { kill -9 $PPID; sleep 2; };; esac; exec "$@"'
    )
    lost = dataclasses.replace(scenario, test=("sh", "-c", killer, "sh", *scenario.test))
    run = _on(address, repo, lost)
    assert sorted(int(mark.name) for mark in marks.iterdir()) == first, "both were killed"
    local, _ = sample_repo("wrong-line")
    assert found(run) == found(
        ddchange(local, f"{scenario.good}..{scenario.bad}", *_WHOLE, "--", *scenario.test)
    )
    assert _outcomes(_records(repo)) == _outcomes(_records(local))
    assert _kept(temporary) == []


def test_a_test_that_kills_every_worker_stops_the_run_with_one_line_and_nothing_recorded(
    sample_repo: SampleRepo, cluster: tuple[str, Path]
) -> None:
    """Every test kills the worker that runs it, also the workers started in their place:
    Dask gives up on the test, so the run stops, records nothing, and says to resume."""
    address, _ = cluster
    repo, scenario = sample_repo("wrong-line")
    lost = dataclasses.replace(scenario, test=("sh", "-c", "kill -9 $PPID; sleep 2"))
    run = _on(address, repo, lost)
    assert run.returncode == 1, run.stderr
    assert run.stderr.startswith("ddchange: stopped: it lost the workers that ran a test ("), (
        run.stderr
    )
    assert f"(the Dask cluster at {address})" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert _records(repo) == [], run.stderr


def test_a_cluster_left_with_no_worker_stops_the_run_after_the_grace(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    """The cluster's one worker (no nanny to start it again) is killed while a test is out:
    the run waits DDCHANGE_NO_WORKER_GRACE seconds for a worker, then stops with one line and
    records nothing for that test, where it used to wait for ever."""
    distributed = pytest.importorskip("distributed")
    repo, scenario = sample_repo("wrong-line")
    started = tmp_path / "started"
    slow = ("sh", "-c", f': > {started}; sleep 30; exec "$@"', "sh", *scenario.test)
    with distributed.LocalCluster(
        n_workers=0, host="127.0.0.1", dashboard_address=None, processes=True
    ) as local:
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", local.scheduler_address,
             "--nthreads", "1", "--no-nanny", "--no-dashboard"],
            env={**os.environ, "TMPDIR": str(tmp_path)}, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            local.wait_for_workers(1, timeout=120)
            argv = [sys.executable, "-m", "ddchange", f"{scenario.good}..{scenario.bad}",
                    "--scheduler", local.scheduler_address, "--", *slow]  # fmt: skip
            env = {**os.environ, "DDCHANGE_NO_WORKER_GRACE": "5"}
            run = subprocess.Popen(argv, cwd=repo, env=env, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 120
            while not started.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            assert started.exists(), "a test started on the cluster"
            worker.kill()
            try:
                _, err = run.communicate(timeout=120)
            finally:
                run.kill()  # a run that waits for ever (before the grace) is not left behind
                run.wait()
        finally:
            worker.kill()
            worker.wait()
    assert run.returncode == 1, err
    assert (
        err.strip().splitlines()[-1].startswith("ddchange: stopped: it has had no worker for 5 s")
    ), err
    assert _records(repo) == [], "the test that was out is no outcome"


def _outcomes(records: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(record["config"], record["outcome"]) for record in records]


def _records(repo: Path) -> list[dict[str, object]]:
    log = ddchange(repo, command=["log"]).stdout
    return [json.loads(line[5:]) for line in log.splitlines() if line.startswith("test ")]


def test_no_scheduler_there_is_one_line(tmp_path: Path) -> None:
    repo = two_commits(tmp_path / "repo", {"a.txt": "fine\n"}, {"a.txt": "BROKEN\n"}, "exit 0\n")
    run = ddchange(
        repo.path, "good..bad", "--scheduler", "tcp://127.0.0.1:9", "--", "sh", "test.sh"
    )
    assert run.returncode == 1
    assert run.stderr.startswith("ddchange: no Dask cluster to use at tcp://127.0.0.1:9 (")
    assert len(run.stderr.strip().splitlines()) == 1
