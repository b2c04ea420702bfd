"""Runs as the journal knows them: what identifies a run, where its records live, and the
commands over recorded runs (`ddchange log`, `ddchange reset`, reading a run back for replay).

Owns the run key: two invocations with the same key share their records, so a second one
resumes the first.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ddchange import errors, git
from ddchange.model import (
    CONFIDENCE,
    MAX_TIMEOUT,
    STRATEGIES,
    Earlier,
    Level,
    Request,
    Revisions,
    Stage,
    Strategy,
    TestRecord,
)
from ddchange.trial.journal import REPLAYED, Journal, RunInfo

# Bumped whenever the meaning of change-unit ids or of a test's outcome changes, so that old
# journals are not reused. 3: the key holds the subdirectory the test runs in (format 2's keys
# did not: a run from a subdirectory and one from the top shared their records).
FORMAT = 3


def journal_path(repo: git.Repo) -> Path:
    """Where the journal of every run in this repository lives (shared by its work trees)."""
    return _journal_in(git.common_dir(repo))


def _journal_in(common_dir: Path) -> Path:
    return common_dir / "ddchange" / "journal.sqlite"


@dataclass(frozen=True)
class Logged:
    """A run as `ddchange log` shows it: what was asked, and every test so far."""

    description: dict[str, object]
    records: list[TestRecord]


def latest(repo_path: Path) -> list[Logged]:
    """The latest run, as `ddchange log` shows it: with --strategy auto, the run over the
    history (its pre-flight and bisection), then each search inside it, oldest first (their
    own records: the ones they took over from the bisection are the bisection's). Empty when
    there is none."""
    recorded = history(repo_path)
    if not recorded:
        return []
    last = recorded[0]

    def inside(inner: Logged, outer: Logged) -> bool:
        ends = [outer.description.get("good"), outer.description.get("bad")]
        return inner.description.get("within") == ends and all(
            inner.description.get(k) == outer.description.get(k)
            for k in ("test", "subdirectory", "build", "results")
        )

    outer = (
        next((run for run in recorded[1:] if inside(last, run)), None)
        if last.description.get("within") is not None
        else last
    )
    if outer is None:
        return [last]
    inners = [run for run in reversed(recorded) if run is not outer and inside(run, outer)]
    return [outer, *(_own(run) for run in inners)]


def _own(logged: Logged) -> Logged:
    """A search inside the history without the records it took over from the bisection."""
    records = [record for record in logged.records if record.phase != Stage.BISECT]
    return Logged(logged.description, records)


def history(repo_path: Path) -> list[Logged]:
    """Every run the journal of this repository knows, most recent first."""
    with Journal(_journal_in(git.common_dir_at(repo_path))) as journal:
        return [Logged(info.request, journal.records(info.key)) for info in journal.runs()]


def reset(repo_path: Path) -> list[Path]:
    """Remove all of ddchange's state in the repository: scratch trees and the journal.

    Refuses (errors.RunInProgress) while a live ddchange process owns a scratch tree.
    Returns the scratch trees it removed.
    """
    import shutil

    from ddchange.trial import worktree  # the scratch tree's code: only reset needs it here

    repo = git.open_repo(repo_path)

    removed = worktree.remove_stale(repo)
    live = worktree.owners(repo)
    if live:
        raise errors.RunInProgress(tuple(sorted(live.values())))
    state = journal_path(repo).parent
    if state.is_dir() and not state.is_symlink():
        shutil.rmtree(state)
    else:  # a file in its place, or nothing
        state.unlink(missing_ok=True)
    return removed


def describe(request: Request, revisions: Revisions, subdirectory: str) -> dict[str, object]:
    """The run as the journal and `ddchange log` record it (enough to replay it), run from
    `subdirectory` of the work tree (git's prefix: "" at the top, else "sub/dir/")."""
    return {
        "good": revisions.good,
        "bad": revisions.bad,
        "good_rev": request.good,
        "bad_rev": request.bad,
        "subdirectory": subdirectory,
        "test": list(request.test),
        "build": request.build,
        "timeout": request.timeout,
        "fail_pattern": request.fail_pattern,
        "granularity": request.granularity,
        "strategy": request.strategy,
        "isolate": request.isolate,
        "dependencies": request.dependencies,
        "monotony": request.monotony,
        "retries": request.retries,
        "confirm": request.confirm,
        "confidence": request.confidence,
        # Only when set, so that the keys of runs without it stay what they were.
        **({"clean": True} if request.clean else {}),
        **({"keep": list(request.keep)} if request.keep else {}),
        **({"ignore": list(request.ignore)} if request.ignore else {}),
        **({"env_key": list(request.env_key)} if request.env_key else {}),
        **({"results": list(request.results)} if request.results else {}),
        **({"tests": list(request.tests)} if request.tests else {}),
        # --strategy auto: the search inside the history of the user's GOOD..BAD
        **({"within": list(request.within)} if request.within else {}),
        # What the commands run besides the tree: only when they name such files
        **({"files": files} if (files := named_files(request.test, request.build)) else {}),
    }


def named_files(test: Sequence[str], build: str | None = None) -> dict[str, str]:
    """The files that the `test` and `build` commands run besides the scratch tree, each with
    a digest of its content: every word of them that is an absolute path to a file (a check
    script kept outside the repository), and the first word where PATH finds it as a script
    (`#!`, one of the user's). A relative path names a file of the tree, whose content the
    revisions give. A changed check is another run: none of its tests are taken over."""
    import hashlib
    import shlex
    import shutil

    words = [*test]
    firsts = [test[0]]
    if build:
        with contextlib.suppress(ValueError):  # a build that shlex cannot split: run by sh
            build_words = shlex.split(build)
            words += build_words
            firsts += build_words[:1]
    found: dict[str, str] = {}
    for word in words:
        path = word if os.path.isabs(word) else None
        if path is None and word in firsts and "/" not in word:
            on_path = shutil.which(word)
            path = on_path if on_path is not None and _is_script(on_path) else None
        if path is not None and os.path.isfile(path):
            digest = hashlib.sha256()
            with contextlib.suppress(OSError), open(path, "rb") as file:
                for block in iter(lambda: file.read(1 << 20), b""):
                    digest.update(block)
                found[path] = digest.hexdigest()[:16]
    return found


def _is_script(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(2) == b"#!"
    except OSError:
        return False


def changed_check(journal: Journal, now: dict[str, object]) -> Earlier | None:
    """Where a run took nothing over because a file its commands run changed: the latest
    earlier run of the same command (the same key but for those files), and which of them
    differ; None if there is none."""
    mine = now.get("files")
    if not isinstance(mine, dict):
        return None
    ignored = {"files", "good_rev", "bad_rev", "tests", REPLAYED, *_SEARCH_OPTIONS}
    same = {k: v for k, v in now.items() if k not in ignored}
    for info in journal.runs():
        theirs = info.request.get("files")
        if not isinstance(theirs, dict) or theirs == mine or not info.tests:
            continue
        if {k: v for k, v in info.request.items() if k not in ignored} == same:
            changed = sorted(p for p in {*mine, *theirs} if mine.get(p) != theirs.get(p))
            return Earlier(when=info.updated, changed=tuple(changed))
    return None


# The options that choose which tests run, not what a test answers: not in the run key, so runs
# that differ only in them share their records (and say so: `earlier`).
_SEARCH_OPTIONS = (
    "strategy",
    "isolate",
    "dependencies",
    "monotony",
    "retries",
    "confirm",
    "confidence",
)


def run_key(request: Request, revisions: Revisions, subdirectory: str) -> str:
    """What identifies a run for resuming: everything that can change a test's outcome.

    That is GOOD and BAD (as SHAs), the subdirectory the test runs in, the test and build
    commands and the content of the files they run besides the tree (`named_files`), the
    timeout, the fail pattern, the granularity (it makes the change units),
    --clean, --keep and --ignore (as given: with the subdirectory, which they are relative to,
    they say which paths they match), and the values of the environment variables named with
    --env-key (unset is a value of its own; the values are only hashed, never stored). The rest
    of the environment is not in it. The revision names are left out (their SHAs are in), and
    so are the strategy, isolation, dependencies, monotony, retries, confirmation and the
    tests searched (--test), which change which tests are asked, not what a test answers: runs
    that differ only in those share their tests. --results is in: it adds each run's results.
    """
    import hashlib
    import os

    facts = {**describe(request, revisions, subdirectory), "format": FORMAT}
    for name in ("good_rev", "bad_rev", "tests", *_SEARCH_OPTIONS):
        facts.pop(name, None)
    facts["environment"] = {name: os.environ.get(name) for name in request.env_key}
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]


def earlier(before: RunInfo | None, now: dict[str, object], *, replayed: bool) -> Earlier:
    """Where a run's records taken over came from: the run of the same key `before` this one
    (when it last tested, and the options of it that differ from `now`, this run's
    `describe`), or the replayed log."""
    replayed = replayed or (before is not None and before.request.get(REPLAYED) is True)
    if replayed or before is None:  # before is None: its run's line is gone from the journal
        return Earlier(when=None, replayed=replayed)
    asked = before.request
    differ = [name for name in _SEARCH_OPTIONS if asked.get(name) != now.get(name)]
    options = tuple(_option(name, asked.get(name)) for name in differ)
    return Earlier(when=before.updated, options=options)


_ON = {"confirm": "the checks at the end"}


def _option(name: str, value: object) -> str:
    """A search option as the command line gives it ("--no-dependencies"), or says it."""
    if name == "isolate":
        return "--isolate" if value else "--minimize"
    if isinstance(value, bool):  # dependencies, monotony, confirm: on unless --no-NAME
        return f"with {_ON.get(name, name)}" if value else f"--no-{name}"
    return f"--{name} {value}"


# The most of a log file `ddchange replay` reads: a log line is a test and the ids of its
# changes, so a run of 20,000 changes logs tens of MiB; anything longer (/dev/zero, a wrong
# file) is refused before it fills the memory.
LOG_LIMIT = 256 * 2**20


def read_log(path: Path, repo: Path) -> list[tuple[Request, list[TestRecord]]]:
    """The runs (each to be run from `repo`, see `request_from`) and their records of a
    `ddchange log` FILE, read up to LOG_LIMIT bytes: the run to replay first, then the runs
    inside it (--strategy auto's search inside the history); errors.BadLogFile when it is
    none, or too long, or cannot be read."""
    from ddchange.report import testlog

    try:
        with path.open("rb") as file:
            data = file.read(4096)
            if not data.lstrip().startswith((b"#", b"run ", b"test ")) and data.strip():
                raise ValueError(1, "it does not begin with '#', 'run {' or 'test {'")
            data += file.read(max(LOG_LIMIT + 1 - len(data), 0))
        if len(data) > LOG_LIMIT:
            raise ValueError(0, f"longer than {LOG_LIMIT >> 20} MiB")
        logged = testlog.parse(data.decode(errors="replace"))
        return [(request_from(description, repo), records) for description, records in logged]
    except OSError as error:
        raise errors.BadLogFile(path, 0, error.strerror or str(error)) from None
    except ValueError as error:
        line, problem = error.args if len(error.args) == 2 else (0, str(error))
        raise errors.BadLogFile(path, int(line), str(problem)) from None


def request_from(description: dict[str, object], repo: Path) -> Request:
    """The Request that a `describe` dictionary (a log file's run line) stands for, run from
    `repo`, or from the subdirectory of its work tree where the logged run ran.

    Raises ValueError when a field has the wrong type: the file was edited by hand.
    """

    def text(name: str, optional: bool = False) -> str | None:
        value = description.get(name)
        if isinstance(value, str) or (optional and value is None):
            return value
        raise ValueError(f"{name!r} must be a string")

    test = description.get("test")
    timeout = description.get("timeout")
    if not isinstance(test, list) or not test or not all(isinstance(a, str) for a in test):
        raise ValueError("'test' must be a non-empty list of strings")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT  # NaN fails this too
    ):
        raise ValueError(f"'timeout' must be a number of seconds above 0, at most {MAX_TIMEOUT}")
    pattern = description.get("fail_pattern")
    if pattern is not None:
        try:
            re.compile(str(pattern))
        except re.error as error:
            raise ValueError(f"'fail_pattern' is not a regular expression: {error}") from None
    if description.get("strategy", "diff") not in STRATEGIES:
        raise ValueError(f"'strategy' must be one of {', '.join(STRATEGIES)}")
    retries, confidence = description.get("retries", 0), description.get("confidence", CONFIDENCE)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError("'retries' must be a count from 0")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 <= confidence < 1
    ):
        raise ValueError("'confidence' must be a number from 0 to below 1")
    logged = text("subdirectory", optional=True)
    parts = (logged or "x/").split("/")
    if parts[-1] or any(part in ("", ".", "..", ".git") for part in parts[:-1]):
        raise ValueError("'subdirectory' must be a directory inside the work tree, as 'sub/dir/'")
    if logged is not None:
        git.open_repo(repo)  # errors.NotARepository, said as for a run, when it is none
        here = git.prefix(repo)
        if logged != here:  # from the top of the work tree, then down
            repo = repo.joinpath(*[".."] * here.count("/"), logged)
    return Request(
        repo=repo,
        good=text("good") or "",
        bad=text("bad") or "",
        test=tuple(test),
        build=text("build", optional=True),
        timeout=None if timeout is None else float(timeout),
        fail_pattern=text("fail_pattern", optional=True),
        granularity=Level(text("granularity") or "hunk"),
        strategy=Strategy(text("strategy", optional=True) or "diff"),
        isolate=description.get("isolate") is True,
        dependencies=description.get("dependencies") is not False,
        monotony=description.get("monotony") is not False,
        retries=retries,
        confirm=description.get("confirm") is not False,
        confidence=float(confidence),
        clean=description.get("clean") is True,
        keep=_strings(description, "keep"),
        ignore=_strings(description, "ignore"),
        env_key=_strings(description, "env_key"),
        results=_strings(description, "results"),
        tests=_strings(description, "tests"),
        within=_within(description),
    )


def _within(description: dict[str, object]) -> tuple[str, str] | None:
    """The GOOD and BAD of the run whose search inside the history this is; None if none."""
    value = description.get("within")
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(v, str) for v in value):
        raise ValueError("'within' must be a list of two commit names")
    return value[0], value[1]


def _strings(description: dict[str, object], name: str) -> tuple[str, ...]:
    """A list of strings of the description (pathspecs, names), empty when absent."""
    value = description.get(name, [])
    if not isinstance(value, list) or not all(isinstance(spec, str) for spec in value):
        raise ValueError(f"{name!r} must be a list of strings")
    return tuple(value)


def absolute_arguments(
    command: tuple[str, ...], root: Path, inputs: tuple[Path, ...]
) -> tuple[str, ...]:
    """`ddchange reduce`'s command as it must be given in a scratch directory that holds only
    the inputs: an argument naming another file or directory under `root` (a check script,
    a file it reads) becomes its absolute path; the inputs keep their relative names."""
    given = set(inputs)
    out = []
    for argument in command:
        path = Path(os.path.abspath(root / argument)) if argument and "\0" not in argument else None
        if (
            path is not None
            and path not in given
            and path.exists()
            and not argument.startswith("-")
        ):
            out.append(str(path))
        else:
            out.append(argument)
    return tuple(out)
