"""benchmarks/suite.py's parts: the README's test command, pytest's summary read back, the clone
and one run in it (on a small repository whose "suite" is a shell line), and the section. The
whole series runs the project's suite and is not run here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import suite  # noqa: E402

OUTPUT = """\
........F..E..s
=========================== short test summary info ============================
SKIPPED [1] tests/test_c.py:3: no chromium
FAILED tests/test_jobs.py::test_a_worker_lost_in_a_test_is_no_outcome - AssertionError: no
ERROR tests/test_faults.py::test_disk_full[tmpfs] - OSError: boom
FAILED tests/test_jobs.py::test_a_worker_lost_in_a_test_is_no_outcome - again
===== 1 failed, 725 passed, 1 skipped, 1 error in 612.50s (0:10:12) =====
"""


def test_the_readme_has_one_test_command_and_it_runs_pytest() -> None:
    command = suite.readme_command(suite.README.read_text())
    assert command.startswith("python3 -m venv .venv && ")
    assert command.endswith("-m pytest -q")


@pytest.mark.parametrize(
    "lines", [[], ["pip install . && pytest -q", "pip install -e . && python -m pytest"]]
)
def test_no_test_command_or_two_is_an_error(lines: list[str]) -> None:
    examples = ["ddchange demo", "ddchange A..B -- python -m pytest tests/test_io.py"]
    readme = "".join(f"```sh\n{line}\n```\n" for line in [*examples, *lines])
    with pytest.raises(SystemExit, match=f"README.md has {len(lines)} test commands"):
        suite.readme_command(readme)


def test_the_counts_and_failing_tests_are_read_from_pytests_summary() -> None:
    counts, failing = suite.read_output(OUTPUT)
    assert counts == {"failed": 1, "passed": 725, "skipped": 1, "error": 1}
    assert failing == (
        "tests/test_jobs.py::test_a_worker_lost_in_a_test_is_no_outcome",
        "tests/test_faults.py::test_disk_full[tmpfs]",
    )


def test_output_without_a_summary_has_no_counts() -> None:
    assert suite.read_output("pip: no such package\n") == ({}, ())


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def test_each_run_is_in_a_clone_of_head_taken_back_to_its_commit_but_its_venv(
    tmp_path: Path,
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    _git(checkout, "init", "-q")
    (checkout / "tracked.txt").write_text("as committed\n")
    _git(checkout, "add", ".")
    _git(checkout, "commit", "-qm", "one")
    (checkout / "tracked.txt").write_text("uncommitted\n")  # not what the clone gets
    clone = tmp_path / "work" / "clone"
    commit = suite.clone(checkout, clone)
    assert commit == _git(checkout, "rev-parse", "HEAD").strip()
    command = (
        "test -e left-behind && exit 7; touch left-behind; mkdir -p .venv; touch .venv/kept; "
        "cat tracked.txt; echo changed > tracked.txt; echo '== 2 passed, 1 failed in 0.1s =='; "
        "echo 'FAILED t.py::x - no'; exit 1"
    )
    runs = [suite.run_once(command, clone, tmp_path / f"run-{n}.log", 60) for n in (1, 2)]
    assert [run.exit_code for run in runs] == [1, 1], "nothing the first run left was seen"
    assert all(run.counts == {"passed": 2, "failed": 1} for run in runs)
    assert all(run.failing == ("t.py::x",) for run in runs)
    assert (tmp_path / "run-2.log").read_text().startswith("as committed\n")
    assert (clone / ".venv" / "kept").exists()


def test_a_run_past_its_timeout_is_stopped_and_failed(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    _git(checkout, "init", "-q")
    _git(checkout, "commit", "-q", "--allow-empty", "-m", "empty")
    clone = tmp_path / "clone"
    suite.clone(checkout, clone)
    run = suite.run_once("sleep 60", clone, tmp_path / "run.log", 0.5)
    assert run.exit_code is None
    assert not run.passed


def test_the_section_counts_passing_runs_and_each_failing_test() -> None:
    runs = [
        suite.Run(0, 600.0, {"passed": 729}),
        suite.Run(1, 630.0, {"passed": 728, "failed": 1}, ("tests/a.py::t",)),
        suite.Run(None, 3600.0),
    ]
    body = suite.section("pytest -q", "0123456789abcdef", 2, 1.5, runs)
    assert "**Runs that passed: 1 of 3.**" in body
    assert "clean clone of `0123456789ab`, on 2 cores" in body
    assert "| 2 | 1 | 728 | 1 | 0 | 0 | 10.5 |" in body
    assert "| 3 | timed out | 0 | 0 | 0 | 0 | 60.0 |" in body
    assert "- `tests/a.py::t`: 1 of 3" in body
    assert "**Runs that passed: 1 of 1.**" in suite.section("pytest -q", "abc", 2, 0.0, runs[:1])
