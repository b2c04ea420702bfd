"""Repositories we build ourselves: the sample scenarios and the test suite's repositories.

There git runs without the user's or the system's configuration, with pinned settings and a
pinned identity and date (`Signature`), so that the same history always gets the same SHAs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ddchange import errors
from ddchange.git.command import nul_split, run

# Sample scenarios and test repositories must get the same commit SHAs on every machine. So their
# commands see nothing of the caller's environment but PATH (no HOME, no EMAIL, no locale, no
# GIT_*), no user or system configuration, and these settings, which a configuration could
# otherwise inject into the objects or the run: signing prompts, line-end rewrites, file modes,
# hooks, auto gc.
_BUILD_CONFIG = (
    ("commit.gpgsign", "false"),
    ("tag.gpgsign", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.fileMode", "true"),
    ("core.hooksPath", "/dev/null"),
    ("gc.auto", "0"),
)


@dataclass(frozen=True)
class Signature:
    """Author and committer of a commit we make: name, email and a date git accepts
    ("@1704110400 +0000")."""

    name: str
    email: str
    date: str


def _isolated(signature: Signature | None = None) -> dict[str, str]:
    """The variables of a build command: only our settings reach git, and `signature` if any.

    HOME points nowhere because git older than 2.32 ignores GIT_CONFIG_GLOBAL and would read
    `~/.gitconfig`; LC_ALL and TZ keep messages and dates independent of the caller's.
    """
    extra = {
        "HOME": os.devnull,
        "XDG_CONFIG_HOME": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LC_ALL": "C",
        "TZ": "UTC",
        "GIT_CONFIG_COUNT": str(len(_BUILD_CONFIG)),
    }
    for number, (key, value) in enumerate(_BUILD_CONFIG):
        extra[f"GIT_CONFIG_KEY_{number}"] = key
        extra[f"GIT_CONFIG_VALUE_{number}"] = value
    if signature is not None:
        for role in ("AUTHOR", "COMMITTER"):
            extra[f"GIT_{role}_NAME"] = signature.name
            extra[f"GIT_{role}_EMAIL"] = signature.email
            extra[f"GIT_{role}_DATE"] = signature.date
    return extra


def _build(cwd: Path, *args: str, signature: Signature | None = None) -> bytes:
    """Run a command of a repository we build, isolated from the caller (see `_isolated`)."""
    path = {name: os.environ[name] for name in ("PATH", "SYSTEMROOT") if name in os.environ}
    return run(cwd, *args, base=path, extra=_isolated(signature))


def init(path: Path) -> None:
    """A new repository at `path` whose first branch is `main`."""
    # An empty --template keeps a system or user template directory from installing hooks.
    _build(path, "init", "--quiet", "--template=", "--initial-branch=main")


def stage_all(worktree: Path) -> None:
    """Stage every change in `worktree`: new, modified and deleted files, and mode changes."""
    _build(worktree, "add", "--all")


def commit(worktree: Path, message: str, signature: Signature) -> str:
    """Commit the index of `worktree` (even if nothing changed) as `signature`; the new SHA."""
    _build(
        worktree,
        *("commit", "--quiet", "--allow-empty", "--no-verify", "-m", message),
        signature=signature,
    )
    return _build(worktree, "rev-parse", "HEAD").decode("ascii").strip()


def tag(worktree: Path, name: str) -> None:
    """A lightweight tag `name` at HEAD."""
    _build(worktree, "tag", name)


def switch(worktree: Path, branch: str, *, create_at: str | None = None) -> None:
    """Check out `branch`; with `create_at`, create it there first."""
    create = ("--create", branch, create_at) if create_at is not None else (branch,)
    _build(worktree, "switch", "--quiet", *create)


def merge(worktree: Path, ref: str, signature: Signature) -> set[str]:
    """Merge `ref` into the checked-out branch as a merge (`--no-ff`), left uncommitted; the
    paths in conflict. GitFailed if the merge stops for any other reason."""
    try:
        _build(worktree, "merge", "--quiet", "--no-ff", "--no-commit", ref, signature=signature)
    except errors.GitFailed:
        conflicts = set(nul_split(_build(worktree, "diff", "--name-only", "-z", "--diff-filter=U")))
        if conflicts:
            return conflicts
        raise
    return set()


def is_merging(worktree: Path) -> bool:
    """Whether a merge is in progress in `worktree` (MERGE_HEAD exists).

    `merge --no-ff` of a ref already merged says "Already up to date." and starts none.
    """
    try:
        _build(worktree, "rev-parse", "--quiet", "--verify", "MERGE_HEAD")
    except errors.GitFailed:
        return False
    return True
