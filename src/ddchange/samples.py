"""Bundled sample scenarios: turning a scenario under `sample_repos/` into a real git repository.

Owns the scenario format and the builder that `ddchange demo` and the tests use. A scenario is a
directory `sample_repos/<name>/` with a `scenario.toml` (description, GOOD and BAD tags, test and
build commands, the commits, and the exact expected answer) and `commits/<NN>/`, one *overlay* per
commit: the files in an overlay are written byte for byte over the previous tree.

Key idea: a build is a pure function of the scenario. Every commit gets a pinned author, committer
and date, and git runs with an environment and configuration of our own (no inherited `GIT_DIR`,
no user or system config, no hooks or templates), so building a scenario twice, on any machine,
gives the same commit SHAs. That is what lets tests and the demo name commits and hunks exactly.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ddchange.errors import GitFailed, UnknownScenario
from ddchange.session import Request

SCENARIO_FILE = "scenario.toml"
# What `ddchange demo` runs without a name: it needs nothing but python3.
DEFAULT = "wrong-line"

# 2024-01-01 12:00:00 UTC. Commit k of a scenario is dated k days later, so dates increase.
_EPOCH = 1_704_110_400
_DAY = 86_400

_IDENTITY = re.compile(r"^(?P<name>[^<>]+?)\s*<(?P<email>[^<>\s]+)>$")

# Settings that a user's configuration could otherwise inject into our commits (signing prompts,
# line-ending rewrites, auto gc, hooks), on top of the empty configuration of _isolated_env.
_GIT_CONFIG = (
    "commit.gpgsign=false",
    "tag.gpgsign=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fileMode=true",
    "core.hooksPath=/dev/null",
    "gc.auto=0",
)


@dataclass(frozen=True)
class Expected:
    """One unit of the expected answer: the hunk of `path` whose diff text contains `line`.

    `line` keeps its `+`, `-` or space prefix and occurs once among all hunks of GOOD..BAD.
    """

    path: str
    line: str


@dataclass(frozen=True)
class Commit:
    """One overlay of a scenario, committed in order on top of the previous one."""

    dir: str
    message: str
    author: str
    tag: str | None = None
    delete: tuple[str, ...] = ()
    executable: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """A scenario as read from `scenario.toml`; `source` is its directory."""

    name: str
    description: str
    good: str
    bad: str
    test: tuple[str, ...]
    build: str | None
    timeout: float | None
    expected: tuple[Expected, ...]
    source: Path
    commits: tuple[Commit, ...]


def scenario_root() -> Path:
    """Where the bundled scenarios live: package data next to this module, so that an
    installed `ddchange demo` has them as much as a source checkout does."""
    return Path(__file__).resolve().parent / "sample_repos"


def request(scenario: Scenario, repo: Path) -> Request:
    """The search a user would ask for on a repository built from `scenario`."""
    return Request(
        repo=repo,
        good=scenario.good,
        bad=scenario.bad,
        test=scenario.test,
        build=scenario.build,
        timeout=scenario.timeout,
    )


def matches(scenario: Scenario, found: Sequence[tuple[str, str]]) -> bool:
    """Whether an answer, as (path, diff text) per unit, is exactly the expected answer.

    Each expected unit must be found once (its path, and its line among the unit's diff lines),
    and the answer may hold nothing else.
    """

    def is_unit(expected: Expected, path: str, diff: str) -> bool:
        return path == expected.path and expected.line in diff.splitlines()

    return len(found) == len(scenario.expected) and all(
        sum(is_unit(expected, path, diff) for path, diff in found) == 1
        for expected in scenario.expected
    )


def scenarios() -> list[Scenario]:
    """Every bundled scenario, sorted by name."""
    return [load(name) for name in _names()]


def load(name: str) -> Scenario:
    """The scenario called `name`; `UnknownScenario` lists the known names if there is none."""
    known = _names()
    if name not in known:
        raise UnknownScenario(name, known)
    source = scenario_root() / name
    with (source / SCENARIO_FILE).open("rb") as fh:
        data = tomllib.load(fh)
    return _parse(name, source, data)


def build_repo(scenario: Scenario, dest: Path) -> Path:
    """Replay `scenario` into a new repository at `dest` (absent or empty); returns `dest`.

    Branch `main` ends at the last commit; GOOD, BAD and any other tags are lightweight tags.
    """
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    init_repo(dest)
    for index, commit in enumerate(scenario.commits):
        _apply_overlay(scenario.source / "commits" / commit.dir, dest, commit)
        commit_all(dest, commit.message, commit.author, index)
        if commit.tag is not None:
            _git(dest, _isolated_env(), "tag", commit.tag)
    return dest


def init_repo(dest: Path) -> None:
    """`git init` with branch `main` at `dest`, isolated from templates and user configuration."""
    # An empty --template keeps a system or user template directory from installing hooks.
    _git(dest, _isolated_env(), "init", "--quiet", "--template=", "--initial-branch=main")


def commit_all(repo: Path, message: str, author: str, index: int) -> str:
    """Stage the whole work tree of `repo`, commit it as `author` on day `index`; the new SHA.

    Author and committer are both `author`, dated `index` days after 2024-01-01 12:00 UTC, so
    the SHA depends on nothing but the tree, the parents, `message`, `author` and `index`.
    """
    env = _identity_env(author, index)
    _git(repo, env, "add", "--all")
    _git(repo, env, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
    return _git(repo, env, "rev-parse", "HEAD").strip()


def _names() -> tuple[str, ...]:
    root = scenario_root()
    return tuple(sorted(p.name for p in root.iterdir() if (p / SCENARIO_FILE).is_file()))


def _parse(name: str, source: Path, data: Mapping[str, Any]) -> Scenario:
    where = source / SCENARIO_FILE
    commits = tuple(_parse_commit(where, c) for c in _required(where, data, "commit"))
    tags = {c.tag for c in commits if c.tag is not None}
    for key in ("good", "bad"):
        if data.get(key) not in tags:
            raise ValueError(f"{where}: {key} = {data.get(key)!r} is not the tag of any commit")
    timeout = data.get("timeout")
    return Scenario(
        name=name,
        description=str(_required(where, data, "description")),
        good=str(data["good"]),
        bad=str(data["bad"]),
        test=tuple(str(arg) for arg in _required(where, data, "test")),
        build=None if data.get("build") is None else str(data["build"]),
        timeout=None if timeout is None else float(timeout),
        expected=tuple(
            Expected(path=str(_required(where, e, "path")), line=str(_required(where, e, "line")))
            for e in _required(where, data, "expected")
        ),
        source=source,
        commits=commits,
    )


def _parse_commit(where: Path, data: Mapping[str, Any]) -> Commit:
    author = str(_required(where, data, "author"))
    _split_identity(author)  # fail when loading, not halfway through a build
    tag = data.get("tag")
    return Commit(
        dir=str(_required(where, data, "dir")),
        message=str(_required(where, data, "message")),
        author=author,
        tag=None if tag is None else str(tag),
        delete=tuple(str(p) for p in data.get("delete", ())),
        executable=tuple(str(p) for p in data.get("executable", ())),
    )


def _required(where: Path, data: Mapping[str, Any], key: str) -> Any:
    if key not in data:
        raise ValueError(f"{where}: missing {key!r}")
    return data[key]


def _apply_overlay(overlay: Path, tree: Path, commit: Commit) -> None:
    """Write every file of `overlay` over `tree`, then apply the commit's deletes and chmods."""
    if not overlay.is_dir():
        raise ValueError(f"commit directory {overlay} does not exist")
    for src in sorted(p for p in overlay.rglob("*") if p.is_file()):
        dst = tree / src.relative_to(overlay)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    for path in commit.delete:
        (tree / path).unlink()
    # Only the owner's execute bit reaches git (100755 vs 100644); a wheel or checkout of the
    # scenario sources may lose file modes, so modes are declared, never copied from the overlay.
    for path in commit.executable:
        target = tree / path
        target.chmod(target.stat().st_mode | 0o111)


def _isolated_env() -> dict[str, str]:
    """An environment in which only our settings reach git: no user, system or repo overrides.

    Nothing of the caller's environment is kept but PATH, so a `GIT_DIR`, `GIT_INDEX_FILE` or
    `GIT_WORK_TREE` set by a hook that runs us cannot redirect git. HOME points nowhere because
    git older than 2.32 ignores GIT_CONFIG_GLOBAL and would read `~/.gitconfig`.
    """
    env = {key: os.environ[key] for key in ("PATH", "SYSTEMROOT") if key in os.environ}
    env.update(
        HOME=os.devnull,
        XDG_CONFIG_HOME=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        LC_ALL="C",
        TZ="UTC",
        GIT_CONFIG_COUNT=str(len(_GIT_CONFIG)),
    )
    for i, setting in enumerate(_GIT_CONFIG):
        key, _, value = setting.partition("=")
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def _identity_env(author: str, index: int) -> dict[str, str]:
    """The isolated environment plus `author` as author and committer, dated on day `index`."""
    name, email = _split_identity(author)
    date = f"@{_EPOCH + index * _DAY} +0000"
    return {
        **_isolated_env(),
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": date,
    }


def _split_identity(author: str) -> tuple[str, str]:
    """("Ada Lovelace", "ada@example.org") from "Ada Lovelace <ada@example.org>"."""
    match = _IDENTITY.match(author)
    if match is None:
        raise ValueError(f"author {author!r} is not 'Name <email>'")
    return match["name"], match["email"]


def _git(cwd: Path, env: Mapping[str, str], *args: str) -> str:
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=dict(env), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise GitFailed(("git", *args), result.returncode, result.stderr)
    return result.stdout
