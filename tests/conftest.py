"""Shared fixtures: real git repositories in tmp_path, and git isolated from the user's setup.

Every test runs git with a pinned author and committer and without the user's or the system's
configuration (a global `commit.gpgsign` or hook would otherwise break or slow down commits),
and without inherited variables that could point git at another repository. Repositories come
either from a bundled scenario (`sample_repo`) or from a list of commits (`make_repo`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest
from gitsandbox import Zoo, build_zoo, hermetic
from hypothesis import settings

from ddchange import git, samples

TEST_AUTHOR = "Test Author <author@example.org>"

# No test asserts how long anything takes, and Hypothesis's per-example deadline would be one:
# on a loaded machine (the suite runs on every core) a correct example can take 300 ms.
settings.register_profile("ddchange", deadline=None)
settings.load_profile("ddchange")

# Started in the background (`cmd &`, nohup, some CI runners), a process has SIGINT ignored, and
# every ddchange a test starts inherits that: the tests of Ctrl-C would test nothing, and fail.
# Python's own handler here means the children start with the default disposition again.
signal.signal(signal.SIGINT, signal.default_int_handler)

# The test commands the tests give ddchange run `python3` many thousand times. Where that is a
# version manager's shim (pyenv's resolves the version in a shell script: 0.16 s a start, not
# 0.02 s), starting it was most of the suite's time. They run the tests' own interpreter, by a
# script of that name first on PATH (a symlink would lose the virtual environment).
_INTERPRETER = Path(tempfile.mkdtemp(prefix="ddchange-tests-python-"))
atexit.register(shutil.rmtree, _INTERPRETER, True)
for _name in ("python3", "python"):
    (_INTERPRETER / _name).write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (_INTERPRETER / _name).chmod(0o755)
os.environ["PATH"] = f"{_INTERPRETER}{os.pathsep}{os.environ.get('PATH', os.defpath)}"

# Set when pytest runs inside a git hook or a script that exported them; each would redirect
# git from the repository a test means to the caller's, or smuggle in configuration.
_INHERITED_GIT_VARIABLES = git.REDIRECTS | {"GIT_CONFIG", "GIT_CONFIG_PARAMETERS"}

Contents = Mapping[str, bytes | str | None]


@pytest.fixture(autouse=True)
def git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pin git's identity and dates and cut it off from user, system and inherited settings."""
    for name in _INHERITED_GIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    hermetic(monkeypatch)
    # Replaces any GIT_CONFIG_KEY_n the caller exported; the branch name silences git's hint.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "init.defaultBranch")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "main")


def make_repo(
    root: Path, commits: Sequence[Contents], name: str = "repo"
) -> tuple[Path, list[str]]:
    """A repository `root/name` with one commit per mapping; the repository and the SHAs.

    Each mapping writes `path -> content` over the previous tree (str is written as UTF-8) and
    deletes the paths mapped to None. Commit k is "commit k", by TEST_AUTHOR on day k, so the
    same commits always give the same SHAs.
    """
    repo = root / name
    repo.mkdir(parents=True)
    samples.init_repo(repo)
    shas = []
    for index, contents in enumerate(commits):
        for path, content in contents.items():
            target = repo / path
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        shas.append(samples.commit_all(repo, f"commit {index}", TEST_AUTHOR, index))
    return repo, shas


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Zoo:
    """One repository with every odd kind of change (gitsandbox.build_zoo), shared per module."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        hermetic(monkeypatch)
        return build_zoo(tmp_path_factory.mktemp("zoo"))


@pytest.fixture(name="make_repo")
def make_repo_fixture() -> Callable[..., tuple[Path, list[str]]]:
    """`make_repo(tmp_path, [{"a.txt": "1\\n"}, {"a.txt": "2\\n"}])` without an import."""
    return make_repo


@pytest.fixture
def sample_repo(tmp_path: Path) -> Callable[[str], tuple[Path, samples.Scenario]]:
    """Build the named bundled scenario into a fresh directory under tmp_path."""
    built: list[str] = []

    def build(name: str) -> tuple[Path, samples.Scenario]:
        scenario = samples.load(name)
        built.append(name)
        dest = tmp_path / f"{name}-{len(built)}"
        return samples.build_repo(scenario, dest), scenario

    return build
