"""benchmarks/results.py: the stamp every section opens with, the section writer, and the split
of ddchange's test log into pre-flight, search and checks."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import results  # noqa: E402

NOW = datetime(2026, 1, 2, 23, 59, tzinfo=UTC)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository shaped like the project's: src/, benchmarks/ with RESULTS.md, docs/."""
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.name", "Ada")
    git(tmp_path, "config", "user.email", "ada@example.org")
    for path in ("src/a.py", "benchmarks/b.py", "benchmarks/RESULTS.md", "docs/c.md"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    return tmp_path


def test_a_clean_checkout_is_stamped_with_its_commit_and_the_utc_date(checkout: Path) -> None:
    commit = git(checkout, "rev-parse", "--short", "HEAD").strip()
    assert results.stamp(checkout, NOW) == f"Ran on commit `{commit}`, 2026-01-02 (UTC)."


@pytest.mark.parametrize(
    ("path", "dirty"),
    [
        ("src/a.py", True),
        ("benchmarks/b.py", True),
        ("benchmarks/new.py", True),  # untracked code runs too
        ("benchmarks/RESULTS.md", False),  # what the runs write
        ("docs/c.md", False),
    ],
)
def test_uncommitted_code_is_named_and_nothing_else(checkout: Path, path: str, dirty: bool) -> None:
    (checkout / path).write_text("y\n")
    said = "with uncommitted changes" in results.stamp(checkout, NOW)
    assert said is dirty


def test_a_section_is_stamped_and_the_others_kept(tmp_path: Path) -> None:
    path = tmp_path / "RESULTS.md"
    results.write_section("## One", "first", path)
    results.write_section("## Two", "second", path)
    results.write_section("## One", "again", path)
    text = path.read_text()
    assert text.startswith(results.TITLE)
    assert text.count(results.STAMP) == 2
    assert f"## One\n\n{results.STAMP}\n\nagain\n\n## Two\n\n{results.STAMP}\n\nsecond\n" in text
    assert "first" not in text


def test_runs_are_split_by_phase_and_described_from_what_ran() -> None:
    phases = ["good", "good", "bad", "file", "hunk", "line", "confirm", "confirm", "bad"]
    runs = results.runs(phases)
    assert runs == results.Runs(preflight=4, search=3, checks=2)
    assert (runs.total, runs.cell()) == (9, "4 / 3 / 2")
    prose = results.parts_prose([runs, results.Runs(2, 5, 2)])
    assert "pre-flight took 2–4 runs and its checks at the end 2 " in prose
