"""The one table of errors: every kind of expected error says its exit code, and the CLI
exits with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ddchange import errors
from ddchange.errors import Exit


def _kinds(base: type[errors.DDChangeError]) -> list[type[errors.DDChangeError]]:
    return [k for sub in base.__subclasses__() for k in (sub, *_kinds(sub))]


def test_every_error_kind_has_an_exit_code_of_the_table() -> None:
    kinds = _kinds(errors.DDChangeError)
    assert len(kinds) > 25
    for kind in kinds:
        assert isinstance(kind.exit, Exit), kind
    # A bug is never the user's to fix, and an expected error never claims a found answer.
    assert errors.UnsafeWrite.exit is Exit.BUG
    assert all(k.exit not in (Exit.FOUND, Exit.FLAKY) for k in kinds)


def test_the_command_line_exits_with_the_errors_own_code(tmp_path: Path) -> None:
    """A usage error (a directory that does not exist) and a not-reproduced one (a repository
    whose BAD passes) end with their kinds' codes, in one line each."""
    missing = subprocess.run(
        [sys.executable, "-m", "ddchange", "-C", str(tmp_path / "nowhere"), "a..b", "--", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == errors.NotARepository.exit == 2
    assert missing.stderr.count("\n") == 1
    assert "no such directory" in missing.stderr
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    for text in ("one\n", "two\n"):
        (repo / "f.txt").write_text(text)
        subprocess.run([*git, "add", "f.txt"], check=True)
        subprocess.run([*git, "commit", "-qm", text], check=True)
    passing = subprocess.run(
        [sys.executable, "-m", "ddchange", "-C", str(repo), "HEAD~1..HEAD", "--", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert passing.returncode == errors.PreflightFailed.exit == 1
    assert "BAD should fail" in passing.stderr


def test_a_suite_that_timed_out_at_a_side_is_told_to_take_more_time() -> None:
    """No results because the run timed out is not a missing file: the advice is --timeout."""
    from ddchange.cli.messages import explain

    timed_out = explain(errors.NoTestResults("good", "timeout after 20s", ""))
    assert "--timeout" in timed_out
    assert "where --results says" not in timed_out
    missing = explain(errors.NoTestResults("bad", "no file matches junit:r.xml", ""))
    assert "where --results says" in missing
    assert "--timeout" not in missing
