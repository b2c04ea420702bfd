"""Running the real `ddchange` command as a user types it, on the bundled scenarios.

The plain subprocess (`ddchange`: exit code and output, nothing checked for the caller), git in
a test repository, a scenario's command-line arguments, whether reported culprits are the
scenario's expected ones, and a user's uncommitted work to leave alone.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ddchange import samples

SampleRepo = Callable[[str], tuple[Path, samples.Scenario]]


def ddchange(
    *args: str, cwd: Path, timeout: float = 180, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ddchange", *args]
    # Decoded like file names: a diff of a latin-1 file is its bytes, not an error.
    return subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        encoding="utf-8",
        errors="surrogateescape",
        timeout=timeout,
        env=env,
    )


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def scenario_args(scenario: samples.Scenario) -> list[str]:
    args = [f"{scenario.good}..{scenario.bad}"]
    if scenario.build:
        args += ["--build", scenario.build]
    if scenario.timeout:
        args += ["--timeout", str(scenario.timeout)]
    return args


def make_user_mess(repo: Path) -> None:
    """Staged, unstaged and untracked changes, a stash entry and an extra branch."""
    tracked = git(repo, "ls-files", "-z").split("\0")[:2]
    (repo / tracked[0]).write_text("# stashed edit\n")
    git(repo, "stash", "push", "-m", "user's stash")
    git(repo, "branch", "user-branch")
    (repo / tracked[0]).write_text("# staged edit\n")
    git(repo, "add", tracked[0])
    with (repo / tracked[1]).open("a") as f:
        f.write("# unstaged edit\n")
    (repo / "untracked notes.txt").write_text("mine\n")


def culprit_matches(
    scenario: samples.Scenario, culprits: list[dict[str, str]], *, inside: bool = False
) -> bool:
    """Whether a report's culprits are the scenario's expected answer: inside the first bad
    commit when the report's search went `inside` it, else over the whole range."""
    units = [(c["path"], c["diff"], c["block"]) for c in culprits]
    return samples.matches(scenario, samples.changes(units), inside=inside)


def inside(report: dict[str, object]) -> bool:
    """Whether a JSON report's search went inside the history (its base is not GOOD)."""
    return report["base"] != report["good"] or report["tip"] != report["bad"]
