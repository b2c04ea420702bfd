"""One attempt: a configuration written in a scratch tree, built and tested there; not recorded.

Owns what a run of a configuration needs besides the tree (`Recipe`: the diff, the commands,
the expectation, the pinned and stray files, where the test runs) and the attempt itself, so
that the trial layer runs it in its own trees and a Dask worker (cluster.py) in its clone,
the same way. Recording the verdict is trials.py's alone.
"""

from __future__ import annotations

import dataclasses
import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ddchange import errors, git
from ddchange.diff import content, hunks
from ddchange.diff.hunks import Diff, FileState
from ddchange.model import Outcome
from ddchange.trial import results, runner
from ddchange.trial.runner import SCRATCH_VARIABLE
from ddchange.trial.worktree import Scratch

States = Mapping[str, FileState | None]


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """How any configuration of `diff` is run, in whichever tree."""

    diff: Diff
    command: tuple[str, ...]
    subdirectory: str  # where the test runs, relative to the tree ("" : its top)
    build: str | None = None
    timeout: float | None = None
    expect: runner.Expectation = field(default_factory=runner.Expectation)
    clean: bool = False  # git clean -fdx before each test
    # Put over every configuration: --keep/--ignore's files, and paths a commit's tree wrote.
    pinned: Mapping[str, FileState | None] = field(default_factory=dict)
    strays: Mapping[str, FileState | None] = field(default_factory=dict)
    # Where the test writes each test case's result (--results): read after every run.
    results: tuple[results.Source, ...] = ()


def attempt(
    recipe: Recipe, tree: Scratch, config: frozenset[str], states: States | None = None
) -> runner.Verdict:
    """`config` (or `states`) written in `tree`, built and tested there. Raises what the
    runner raises, and EnvironmentFault when the configuration cannot be written."""
    try:
        written = content.materialize(recipe.diff, config) if states is None else states
        _write(recipe, tree, written)
    except hunks.Conflict as conflict:
        return runner.Verdict(
            outcome=Outcome.UNRESOLVED, reason=f"does not apply: {conflict}", build=None, test=None
        )
    where = tree.path / recipe.subdirectory
    shown = recipe.subdirectory.rstrip("/")
    reason = ""
    if not where.is_dir():
        reason = f"no directory {shown}/ here, where the test runs (where you ran ddchange)"
    elif not _within(where, tree.path):  # a link in the tree's path to it leads out
        reason = (
            f"{shown}/, where the test runs (where you ran ddchange), is a link to a directory "
            "outside the scratch tree here: not run there"
        )
    if reason:
        return runner.Verdict(outcome=Outcome.UNRESOLVED, reason=reason, build=None, test=None)
    results.clear(recipe.results, where, tree.path)  # an earlier run's files are not this one's
    verdict = runner.run_candidate(
        where,
        recipe.command,
        build=recipe.build,
        timeout=recipe.timeout,
        expect=recipe.expect,
        env={**os.environ, SCRATCH_VARIABLE: os.fspath(tree.path)},
    )
    if not recipe.results or verdict.outcome is Outcome.UNRESOLVED or verdict.test is None:
        return verdict
    read = results.read(recipe.results, where, tree.path, verdict.test.output)
    if read.cases is None:  # a missing result is never a pass
        reason = f"{results.NONE}: {read.reason}"
        return dataclasses.replace(verdict, outcome=Outcome.UNRESOLVED, reason=reason)
    return dataclasses.replace(verdict, cases=read.cases)


def _write(recipe: Recipe, tree: Scratch, states: States) -> None:
    """Put `states` in `tree`; a failure to do so (a full disk, a test that deleted the
    tree's .git) is the machine's, and stops the run (nothing is recorded)."""
    try:
        if recipe.clean:
            git.remove_untracked(tree.path)
        tree.apply({**recipe.strays, **states, **recipe.pinned})
    except (OSError, errors.GitFailed) as failure:
        said = failure.strerror if isinstance(failure, OSError) else failure.stderr
        detail = (said or str(failure)).strip().splitlines()[-1:]
        if (isinstance(failure, OSError) and failure.errno == errno.ENAMETOOLONG) or (
            "File name too long" in "".join(detail)
        ):  # no fault of the machine's that a user fixes and resumes: the path itself
            raise errors.PathTooLong(tree.path) from None
        raise errors.EnvironmentFault(
            f"the configuration could not be written ({''.join(detail)})", tree.path
        ) from None


def _within(where: Path, tree: Path) -> bool:
    """Whether `where`, its links followed, is `tree` or a directory in it."""
    real, top = os.path.realpath(where), os.path.realpath(tree)
    return os.path.commonpath([real, top]) == top
