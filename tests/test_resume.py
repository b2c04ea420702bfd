"""Never lose work, never touch the user's tree: interruption, resume, log/replay/reset, flakiness.

The kill tests stop a real run with SIGINT, SIGTERM or SIGKILL after a chosen number of tests,
then run the same command again and check that the user's repository is byte-identical, that no
scratch work tree or process is left, and that the resumed run reaches the same answer with at
most one repeated test (the one that was running when the signal came).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gitsandbox import checkout_state, hermetic
from userruns import (
    SampleRepo,
    culprit_matches,
    ddchange,
    git,
    inside,
    make_user_mess,
    scenario_args,
)

from ddchange import errors, runs, samples
from ddchange.report import testlog


def search_records(report: dict[str, object]) -> list[dict[str, object]]:
    log = report["log"]
    assert isinstance(log, list)
    return [r for r in log if r["phase"] != "confirm"]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> int:
    """How many search tests an uninterrupted c-make run needs."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        hermetic(monkeypatch)
        scenario = samples.load("c-make")
        root = tmp_path_factory.mktemp("baseline")
        repo = samples.build_repo(scenario, root / "c-make")
        out = root / "report.json"
        done = ddchange(
            *scenario_args(scenario), "--json", str(out), "--", *scenario.test, cwd=repo
        )
        assert done.returncode == 0, done.stderr
        return len(search_records(json.loads(out.read_text())))


def start(repo: Path, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "ddchange", *args]
    return subprocess.Popen(
        command, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def wait_for_tests(process: subprocess.Popen[str], count: int) -> None:
    """Read the progress lines until `count` real tests have been reported."""
    assert process.stderr is not None
    seen = 0
    while seen < count:
        line = process.stderr.readline()
        assert line, "ddchange ended early"
        seen += line.startswith("test")


@pytest.mark.parametrize(
    ("sig", "after", "jobs"),
    [
        (signal.SIGINT, 12, 1),  # in the search inside the first bad commit
        (signal.SIGTERM, 11, 1),
        (signal.SIGKILL, 8, 1),
        (signal.SIGKILL, 2, 1),
        (signal.SIGKILL, 8, 3),  # three scratch trees, tests in flight in each
    ],
    ids=["SIGINT@12", "SIGTERM@11", "SIGKILL@8", "SIGKILL@2", "SIGKILL@8-j3"],
)
def test_killed_run_resumes_to_the_same_answer(
    sig: signal.Signals,
    after: int,
    jobs: int,
    sample_repo: SampleRepo,
    tmp_path: Path,
    baseline: int,
) -> None:
    repo, scenario = sample_repo("c-make")
    make_user_mess(repo)
    before = checkout_state(repo)
    report = tmp_path / "report.json"
    args = [*scenario_args(scenario), "-j", str(jobs), "--json", str(report), "--", *scenario.test]

    process = start(repo, args)
    wait_for_tests(process, after)
    process.send_signal(sig)
    out, err = process.communicate(timeout=60)
    if sig == signal.SIGKILL:
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode == 130, err
        assert "Traceback" not in err
        assert "Best answer so far" in out
        assert json.loads(report.read_text())["outcome"] == "interrupted"
        assert checkout_state(repo) == before

    done = ddchange(*args, cwd=repo)
    assert done.returncode == 0, done.stderr
    result = json.loads(report.read_text())
    assert culprit_matches(scenario, result["culprits"], inside=inside(result))
    assert result["resumed"] >= min(after, 2) - 1
    assert len(search_records(result)) <= baseline + 1, "at most one test repeated"
    assert checkout_state(repo) == before, "no scratch work tree left, user's files untouched"


def triage_args(scenario: samples.Scenario, report: Path) -> list[str]:
    given = [arg for spec in scenario.results for arg in ("--results", spec)]
    return [*scenario_args(scenario), *given, "--json", str(report), "--", *scenario.test]


def causes_of(report: Path) -> list[tuple[tuple[str, ...], str]]:
    """Each cause a triage's JSON report names: its tests and its patch."""
    causes = json.loads(report.read_text())["causes"]
    return sorted((tuple(cause["tests"]), cause["patch"]) for cause in causes)


@pytest.fixture(scope="module")
def triaged(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[tuple[str, ...], str]]:
    """The causes an uninterrupted triage of the suite-triage scenario names."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        hermetic(monkeypatch)
        scenario = samples.load("suite-triage")
        root = tmp_path_factory.mktemp("triaged")
        repo = samples.build_repo(scenario, root / "suite-triage")
        done = ddchange(*triage_args(scenario, root / "report.json"), cwd=repo)
        assert done.returncode == 0, done.stderr
        return causes_of(root / "report.json")


@pytest.mark.parametrize("after", [9, 15], ids=["inside", "confirming"])
def test_a_killed_triage_leaves_the_users_repository_and_resumes_to_the_same_causes(
    after: int,
    sample_repo: SampleRepo,
    tmp_path: Path,
    triaged: list[tuple[tuple[str, ...], str]],
) -> None:
    """A whole-suite triage (its history bisected, then a triage inside each first bad
    commit) SIGKILLed after `after` tests: the user's repository byte-identical, and the same
    command takes the runs over and names the causes an uninterrupted triage names, each with
    the same tests and patch."""
    assert len(triaged) == 3
    repo, scenario = sample_repo("suite-triage")
    make_user_mess(repo)
    before = checkout_state(repo)
    report = tmp_path / "report.json"
    process = start(repo, triage_args(scenario, report))
    wait_for_tests(process, after)
    process.kill()
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert checkout_state(repo) == before, "the user's files, index, refs and stash untouched"

    done = ddchange(*triage_args(scenario, report), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert causes_of(report) == triaged
    assert json.loads(report.read_text())["resumed"] >= after - 1
    assert checkout_state(repo) == before, "no scratch work tree left, nothing of the user's"


def processes_in(prefix: str) -> list[int]:
    """Process ids whose working directory starts with `prefix`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "cwd").startswith(prefix):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def sleeping(pids: list[int]) -> list[int]:
    """Those of `pids` that run `sleep`."""
    found = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep"):
                found.append(pid)
        except OSError:
            continue
    return found


@pytest.fixture
def sleepy_repo(make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path) -> Path:
    """BAD's test sleeps for a minute before failing: a run can be killed in the middle."""
    test = "if grep -q broken data.txt; then sleep 60; exit 1; fi; exit 0\n"
    repo, _ = make_repo(tmp_path, [{"test.sh": test, "data.txt": "ok\n"}, {"data.txt": "broken\n"}])
    return repo


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc (Linux)")
def test_sigkill_mid_test_leaves_no_process_after_reset(sleepy_repo: Path) -> None:
    before = checkout_state(sleepy_repo)
    process = start(sleepy_repo, ["HEAD~1..HEAD", "--", "sh", "test.sh"])
    wait_for_tests(process, 1)  # GOOD passed; BAD's test is now sleeping
    deadline = time.monotonic() + 30
    # The test's own `sleep`, not a git command of ddchange that happens to run there too.
    while not (
        orphans := sleeping(
            processes_in(f"{os.path.realpath('/tmp')}/ddchange-scratch-{process.pid}-")
        )
    ):
        assert time.monotonic() < deadline, "the test never started"
        time.sleep(0.05)
    process.kill()
    process.wait()
    assert all(_alive(pid) for pid in orphans), "the test outlives a SIGKILLed ddchange"

    done = ddchange("reset", cwd=sleepy_repo)
    assert done.returncode == 0, done.stderr
    assert not any(_alive(pid) for pid in orphans)
    assert checkout_state(sleepy_repo) == before
    assert not (sleepy_repo / ".git" / "ddchange").exists()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_log_reset_and_replay(sample_repo: SampleRepo, tmp_path: Path) -> None:
    repo, scenario = sample_repo("two-files")
    report = tmp_path / "report.json"
    args = [*scenario_args(scenario), "--json", str(report), "--", *scenario.test]
    assert ddchange(*args, cwd=repo).returncode == 0
    first = json.loads(report.read_text())

    log = ddchange("log", cwd=repo)
    assert log.returncode == 0
    assert log.stdout.startswith("# ddchange log: v2.0..v2.1 -- sh test.sh")
    assert log.stdout.count("\ntest {") == len(first["log"])
    saved = tmp_path / "run.log"
    saved.write_text(log.stdout)

    assert ddchange("reset", cwd=repo).returncode == 0
    assert "no runs recorded" in ddchange("log", cwd=repo).stderr

    replayed = ddchange("replay", str(saved), "--json", str(report), cwd=repo)
    assert replayed.returncode == 0, replayed.stderr
    again = json.loads(report.read_text())
    assert again["culprits"] == first["culprits"]
    assert again["resumed"] == len(first["log"])
    assert again["resumed_from"] == {"replayed": True, "when": None, "options": [], "changed": []}
    assert f"{again['resumed']} taken from the replayed log" in replayed.stdout
    assert again["tests_run"] == 0, "the log holds every run, the confirmation runs too"
    # The same command run for real afterwards takes the same records over: it says they came
    # from the log (an edited log is the user's word, not a run), until `ddchange reset`.
    later = ddchange(*args, cwd=repo)
    assert later.returncode == 0, later.stderr
    assert json.loads(report.read_text())["resumed_from"]["replayed"] is True
    assert "taken from the replayed log" in later.stdout
    assert ddchange("reset", cwd=repo).returncode == 0
    assert ddchange(*args, cwd=repo).returncode == 0
    assert json.loads(report.read_text())["resumed_from"] is None


def test_a_replay_goes_on_with_jobs_and_records_what_one_job_would(
    sample_repo: SampleRepo, tmp_path: Path
) -> None:
    """A log cut after the pre-flight, replayed with -j 2: the search goes on with two tests
    at once, and the journal ends as that of the whole run at -j 1."""
    repo, scenario = sample_repo("two-files")
    assert ddchange(*scenario_args(scenario), "--", *scenario.test, cwd=repo).returncode == 0
    whole = ddchange("log", cwd=repo).stdout
    lines = whole.splitlines(keepends=True)
    preflight = [line for line in lines if '"phase": "good"' in line or '"phase": "bad"' in line]
    assert preflight, whole
    cut = tmp_path / "cut.log"
    cut.write_text("".join(lines[: lines.index(preflight[-1]) + 1]))
    assert ddchange("reset", cwd=repo).returncode == 0

    report = tmp_path / "report.json"
    replayed = ddchange("replay", str(cut), "-j", "2", "--json", str(report), cwd=repo)
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(report.read_text())["jobs"] == 2
    assert _without_durations(ddchange("log", cwd=repo).stdout) == _without_durations(whole)


def _without_durations(log: str) -> list[dict[str, object]]:
    records = [json.loads(line[5:]) for line in log.splitlines() if line.startswith("test ")]
    for record in records:
        del record["duration"]
    return records


def test_replay_of_a_file_that_is_not_a_log(sample_repo: SampleRepo, tmp_path: Path) -> None:
    repo, _ = sample_repo("two-files")
    bogus = tmp_path / "bogus.log"
    bogus.write_text("run {not json\n")
    done = ddchange("replay", str(bogus), cwd=repo)
    assert done.returncode == 2
    assert "bogus.log:1: not a ddchange log" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "values",
    [
        '"config": "ab"',
        '"config": [1, 2]',
        '"config": [], "exit_code": "1"',
        '"config": [], "exit_code": 1.5',
    ],
)
def test_a_logged_test_of_the_wrong_kind_is_refused(values: str) -> None:
    """A hand-edited test line whose config or exit code is not of its kind is an error on
    its line, never a record made of it (a config "ab" is no set {"a", "b"})."""
    line = 'test {"phase": "good", "outcome": "pass", ' + values + "}"
    with pytest.raises(ValueError, match="must be") as refused:
        testlog.parse('run {"good": "a", "bad": "b"}\n' + line + "\n")
    assert refused.value.args[0] == 2


@pytest.fixture
def two_tests_repo(make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path) -> Path:
    """`sh check.sh` means one test at the top (a.txt must not be bad) and another in sub/
    (b.txt must not be bad, or the file $CHECKED names); both files turn bad."""
    top = 'grep -q bad "${CHECKED:-a.txt}" && exit 1; exit 0\n'
    repo, _ = make_repo(
        tmp_path,
        [
            {"check.sh": top, "sub/check.sh": top.replace("a.txt", "../b.txt"), "a.txt": "ok\n"}
            | {"b.txt": "ok\n"},
            {"a.txt": "bad\n", "b.txt": "bad\n"},
        ],
    )
    return repo


def _searched(
    cwd: Path, report: Path, *options: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    done = ddchange(
        "HEAD~1..HEAD", *options, "--json", str(report), "--", "sh", "check.sh", cwd=cwd, env=env
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(report.read_text())
    return result


def _culprits(result: dict[str, Any]) -> set[str]:
    return {culprit["path"] for culprit in result["culprits"]}


def test_the_same_command_from_a_subdirectory_is_another_run(
    two_tests_repo: Path, tmp_path: Path
) -> None:
    """The test runs where the user stands, so the same command from sub/ is another test:
    none of the top's records are taken, and each answer is its own test's."""
    report = tmp_path / "report.json"
    top = _searched(two_tests_repo, report)
    assert _culprits(top) == {"a.txt"}
    sub = _searched(two_tests_repo / "sub", report)
    assert (sub["resumed"], sub["resumed_from"], _culprits(sub)) == (0, None, {"b.txt"})
    again = _searched(two_tests_repo / "sub", report)
    assert (again["tests_run"], _culprits(again)) == (0, {"b.txt"}), "the same run resumes"
    assert again["resumed"] == len(sub["log"])

    saved = tmp_path / "sub.log"  # the log says where its run ran: replayed there from the top
    saved.write_text(log := ddchange("log", cwd=two_tests_repo).stdout)
    assert log.startswith("# ddchange log: HEAD~1..HEAD -- sh check.sh  (run in sub/)\n")
    for elsewhere in ("../", "/tmp/", "sub/../", "sub", "./"):
        moved = tmp_path / "moved.log"
        moved.write_text(log.replace('"subdirectory": "sub/"', f'"subdirectory": "{elsewhere}"'))
        done = ddchange("replay", str(moved), cwd=two_tests_repo)
        assert (done.returncode, done.stderr.count("\n")) == (2, 1), (elsewhere, done.stderr)
        assert "'subdirectory' must be a directory inside the work tree" in done.stderr
    assert ddchange("reset", cwd=two_tests_repo).returncode == 0
    replayed = ddchange("replay", str(saved), "--json", str(report), cwd=two_tests_repo)
    assert replayed.returncode == 0, replayed.stderr
    result = json.loads(report.read_text())
    assert (result["tests_run"], _culprits(result)) == (0, {"b.txt"})
    resumed = _searched(two_tests_repo / "sub", report)
    assert (resumed["tests_run"], resumed["resumed"]) == (0, len(sub["log"]))


def test_tests_taken_over_say_where_they_came_from(two_tests_repo: Path, tmp_path: Path) -> None:
    """The same command again takes the earlier run's tests and says so, with its date; with
    --no-dependencies (which tests run, not what they mean) it takes them too, and says that
    the earlier run had dependencies."""
    report = tmp_path / "report.json"
    first = _searched(two_tests_repo, report)
    assert first["resumed_from"] is None
    for options, differ in (((), []), (("--no-dependencies",), ["with dependencies"])):
        done = ddchange(
            "HEAD~1..HEAD", *options, "--json", str(report), "--", "sh", "check.sh",
            cwd=two_tests_repo,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        result = json.loads(done_report := report.read_text())
        assert result["resumed"] == len(first["log"]), done_report
        origin = result["resumed_from"]
        assert (origin["replayed"], origin["options"]) == (False, differ)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", origin["when"])
        said = (
            f"{result['resumed']} taken from an earlier run of this command on {origin['when']} UTC"
        )
        assert said in done.stdout
    assert "(it ran with dependencies; this option chooses which tests run" in done.stdout


def test_a_named_environment_variable_is_part_of_the_run(
    two_tests_repo: Path, tmp_path: Path
) -> None:
    """With --env-key CHECKED, a run with another value of $CHECKED is another run."""
    report = tmp_path / "report.json"
    runs = {
        name: _searched(
            two_tests_repo, report, "--env-key", "CHECKED", env={**os.environ, "CHECKED": name}
        )
        for name in ("a.txt", "b.txt")
    }
    assert [(r["resumed"], _culprits(r)) for r in runs.values()] == [
        (0, {"a.txt"}),
        (0, {"b.txt"}),
    ]
    unset = _searched(two_tests_repo, report, "--env-key", "CHECKED")
    assert (unset["resumed"], _culprits(unset)) == (0, {"a.txt"}), "unset is a value of its own"
    for name in ("", "A=B"):
        done = ddchange("HEAD~1..HEAD", "--env-key", name, "--", "true", cwd=two_tests_repo)
        assert (done.returncode, done.stderr.count("\n")) == (2, 1), done.stderr
        assert "is not the name of an environment variable" in done.stderr


def test_a_replayed_file_is_read_only_so_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """replay reads no more than LOG_LIMIT bytes: /dev/zero ends at once (it is no log from
    its first byte), a long file of comments at the limit; each with one line and exit 2."""
    zero = ddchange("replay", "/dev/zero", cwd=tmp_path, timeout=30)
    assert (zero.returncode, zero.stderr.count("\n")) == (2, 1), zero.stderr
    assert "/dev/zero:1: not a ddchange log" in zero.stderr
    monkeypatch.setattr(runs, "LOG_LIMIT", 2**20)
    long = tmp_path / "long.log"
    long.write_text("#" * 2**20 + "\n")
    with pytest.raises(errors.BadLogFile) as refused:
        runs.read_log(long, tmp_path)
    assert refused.value.problem == "longer than 1 MiB"
    long.write_text("#" * (2**20 - 1) + "\n")
    with pytest.raises(errors.BadLogFile) as refused:
        runs.read_log(long, tmp_path)
    assert refused.value.problem == "no 'run {...}' line", "read to its end under the limit"


def _updating(change: str) -> Callable[[Path], None]:
    return lambda journal: _executed(journal, f"UPDATE {change}")


_DAMAGES: dict[str, Callable[[Path], object]] = {
    "random bytes": lambda path: path.write_bytes(os.urandom(path.stat().st_size)),
    "cut in half": lambda path: path.write_bytes(path.read_bytes()[: path.stat().st_size // 2]),
    "empty": lambda path: path.write_bytes(b""),
    **{
        change: _updating(change)
        for change in (
            "tests SET config = '5'",
            "tests SET config = '\"ab\"'",
            "tests SET config = '[1, 2]'",
            "tests SET missing = '{}'",
            "tests SET outcome = 'bogus'",
            "tests SET duration = 'x'",
            "tests SET exit_code = 'x'",
            "tests SET exit_code = 1.5",
            "tests SET config = '[\"no such change\"]' WHERE id = 3",
            "runs SET request = 'nope'",
            "runs SET request = '[]'",
        )
    },
}


def _executed(journal: Path, statement: str) -> None:
    with contextlib.closing(sqlite3.connect(journal)) as db:
        db.execute(statement)
        db.commit()


def test_a_damaged_journal_gives_one_line_or_the_right_answer(
    two_tests_repo: Path, tmp_path: Path
) -> None:
    """Whatever is wrong in the journal, `ddchange log` and the run that resumes end with one
    line that names the journal (exit 1), or do their work: never a traceback, never a record
    made of what is not one."""
    report = tmp_path / "report.json"
    _searched(two_tests_repo, report)
    journal = two_tests_repo / ".git" / "ddchange" / "journal.sqlite"
    saved = tmp_path / "journal.sqlite"
    _executed(journal, "PRAGMA wal_checkpoint(TRUNCATE)")
    saved.write_bytes(journal.read_bytes())
    for name, damage in _DAMAGES.items():
        journal.write_bytes(saved.read_bytes())
        damage(journal)
        for args in (["log"], ["HEAD~1..HEAD", "--json", str(report), "--", "sh", "check.sh"]):
            report.unlink(missing_ok=True)
            done = ddchange(*args, cwd=two_tests_repo)
            if done.returncode == 1:
                assert done.stderr.count("\n") == 1, (name, done.stderr)
                assert f"the journal {journal} cannot be read" in done.stderr, (name, done.stderr)
            else:
                assert done.returncode == 0, (name, done.stderr)
                assert "Traceback" not in done.stderr
                if args[0] != "log":
                    assert _culprits(json.loads(report.read_text())) == {"a.txt"}, name


@pytest.fixture
def flaky_repo(make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path) -> Path:
    """The broken change fails the test only every other time it is run."""
    test = (
        "if grep -q broken data.txt; then\n"
        '  n=$(cat "$FLAKY_STATE" 2>/dev/null || echo 0); echo $((n + 1)) > "$FLAKY_STATE"\n'
        "  [ $((n % 2)) -eq 0 ] && exit 1\n"
        "fi\nexit 0\n"
    )
    files = {f"f{i}.txt": f"{i}\n" for i in range(6)}
    repo, _ = make_repo(
        tmp_path,
        [
            {"test.sh": test, "data.txt": "ok\n", **files},
            {"data.txt": "broken\n", **{k: v + "more\n" for k, v in files.items()}},
        ],
    )
    return repo


def test_a_flaky_test_is_reported_as_flaky(flaky_repo: Path, tmp_path: Path) -> None:
    """With --retries every configuration runs twice in a row, and the broken change's runs
    alternate: the run ends as flaky (exit 4), with the evidence, and no answer claimed."""
    report = tmp_path / "report.json"
    done = _flaky_run(flaky_repo, tmp_path, report)
    assert done.returncode == 4, done.stderr
    assert "NO RELIABLE ANSWER: the test is flaky" in done.stdout
    assert "Removing any one" not in done.stdout
    result = json.loads(report.read_text())
    assert result["outcome"] == "flaky"
    assert result["flaky"], "the evidence is reported"
    assert all(len(set(d["outcomes"])) > 1 for d in result["flaky"])


def test_a_resumed_flaky_run_lists_each_disagreement_once(flaky_repo: Path, tmp_path: Path) -> None:
    """The same flaky run again takes over its records: each configuration whose runs
    disagree is listed once, with all of its runs, however often its outcome is asked for."""
    report = tmp_path / "report.json"
    for _ in range(2):
        done = _flaky_run(flaky_repo, tmp_path, report)
        assert done.returncode == 4, done.stderr
    result = json.loads(report.read_text())
    assert result["resumed"] > 0, "the second run took over the first one's records"
    runs: dict[tuple[str, ...], list[str]] = {}
    for record in result["log"]:
        runs.setdefault(tuple(record["config"]), []).append(record["outcome"])
    disagreeing = [outcomes for outcomes in runs.values() if len(set(outcomes)) > 1]
    assert disagreeing
    assert sorted(d["outcomes"] for d in result["flaky"]) == sorted(disagreeing)


def test_concurrent_runs_in_one_repository_do_not_interfere(sample_repo: SampleRepo) -> None:
    repo, scenario = sample_repo("two-files")
    args = [*scenario_args(scenario), "--", *scenario.test]
    runs = [start(repo, args), start(repo, [*args[: -len(scenario.test)], *scenario.test])]
    outputs = [run.communicate(timeout=120) for run in runs]
    for run, (out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
        assert "csvreport/reader.py" in out  # the answer inside the first bad commit
    journal = repo / ".git" / "ddchange" / "journal.sqlite"
    with sqlite3.connect(journal) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert git(repo, "worktree", "list").count("\n") == 1


def _flaky_run(flaky_repo: Path, tmp_path: Path, report: Path) -> subprocess.CompletedProcess[str]:
    """The flaky repository's run with --retries 1 and a JSON report (its state in tmp_path)."""
    return subprocess.run(
        [sys.executable, "-m", "ddchange", "HEAD~1..HEAD", "--retries", "1"]
        + ["--json", str(report), "--", "sh", "test.sh"],
        cwd=flaky_repo,
        env={**os.environ, "FLAKY_STATE": str(tmp_path / "state")},
        capture_output=True,
        text=True,
    )
