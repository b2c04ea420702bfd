"""How ddchange starts git: the one environment policy and the safety options of every command.

Owns `environment` (the variables every process we start gets: our git commands, and the user's
build and test) and `run`/`in_repo`, through which every git command in the package goes, with
a scrubbed environment and safety options (`_SAFE`), so that neither a `GIT_DIR` inherited from
a hook nor the user's hooks or diff configuration can redirect or reshape what we read and
write. Paths travel NUL-separated (`-z`) and are decoded with `os.fsdecode`, so any byte string
git accepts as a file name survives the trip through `str` (`os.fsencode` gives the same bytes
back).

Commands about the whole repository run from its work tree with explicit --git-dir and
--work-tree (`in_repo`; bare repositories work too): they only read objects, refs and
.gitattributes there, and never touch the user's index or files. In a partial clone, what git
fetches for them on demand (a blob the clone never fetched) goes to an object directory of
ddchange's own in the repository's state directory, not to the user's objects (`annex`).
Commands about a scratch work tree run inside that work tree (`run`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, TypeVar

from ddchange import errors

T = TypeVar("T")

if TYPE_CHECKING:
    from git import Repo

# Variables that point git at another repository, work tree, index, object store or ref
# namespace. Git exports them to hooks, aliases, `rebase -x` and `bisect run` (GIT_PREFIX too,
# and a pre-receive hook gets GIT_OBJECT_DIRECTORY and GIT_ALTERNATE_OBJECT_DIRECTORIES for its
# quarantine), so ddchange started from one inherits them. No command we start may see them:
# ours must read the user's repository, and the user's test must see the scratch work tree it
# runs in, never the user's checkout.
REDIRECTS = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
    }
)

# The only GIT_* variables our own commands see: identity, transport settings, the user's own
# configuration (`git -c` passes it on in GIT_CONFIG_PARAMETERS) and tracing. Everything else
# goes too: GIT_DIFF_OPTS and GIT_EXTERNAL_DIFF reshape the diffs we parse, GIT_CONFIG points
# `git config` at another file, and so on; like pre-commit, we keep a list of the harmless ones
# rather than chase the harmful ones.
_KEPT_VARIABLES = frozenset(
    {
        "GIT_EXEC_PATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_ALLOW_PROTOCOL",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
    }
)
_KEPT_PREFIXES = (
    "GIT_CONFIG_KEY_",
    "GIT_CONFIG_VALUE_",
    "GIT_AUTHOR_",
    "GIT_COMMITTER_",
    "GIT_TRACE",
)

# Given to every command. Command-line -c beats every config file.
_SAFE = (
    # Non-ASCII names in patches as they are, not C-quoted octal escapes ("\303\244"): the
    # patch we hand the user stays readable. (-z output never quotes; we read paths from that.)
    *("-c", "core.quotepath=off"),
    # No user hook may run (a global core.hooksPath would fire post-checkout in our scratch tree).
    *("-c", "core.hooksPath=/dev/null"),
    # A throwaway work tree must not start an fsmonitor daemon.
    *("-c", "core.fsmonitor=false"),
    # Never repack or prune the user's repository as a side effect of our commands.
    *("-c", "gc.auto=0", "-c", "maintenance.auto=false"),
    # What `git log`, `rev-list` and `blame` print must not depend on the user's settings
    # either: no signature check lines (log.showSignature), UTF-8 and not another encoding
    # (i18n.logOutputEncoding), no colour, no --follow on a single path (log.follow), and no
    # line of a blame marked. (blame.ignoreRevsFile cannot be undone from here: a value given
    # here comes after the user's, and git fails on a missing file before it reads it;
    # diff/provenance.py has another way to a line's commit.)
    *("-c", "log.showSignature=false", "-c", "i18n.logOutputEncoding=UTF-8"),
    *("-c", "color.ui=false", "-c", "log.follow=false"),
    *("-c", "blame.markIgnoredLines=false", "-c", "blame.markUnblamableLines=false"),
)

# How long one git command of ours may take (seconds; DDCHANGE_GIT_TIMEOUT sets another): a
# FIFO where git reads a file (.gitattributes), or a filter that never ends, must not hang a
# run for ever.
GIT_TIMEOUT = 600.0


def _timeout() -> float:
    given = os.environ.get("DDCHANGE_GIT_TIMEOUT", "")
    try:
        seconds = float(given)
    except ValueError:
        return GIT_TIMEOUT
    return seconds if 0 < seconds < float("inf") else GIT_TIMEOUT


def _failed(args: Sequence[str], returncode: int, stderr: str) -> errors.DDChangeError:
    """The error for a git command of ours that failed: git's refusal of a repository owned by
    another user (safe.directory) is said as such, with git's own advice."""
    if "detected dubious ownership" in stderr:
        return errors.UnsafeRepository(stderr.strip())
    return errors.GitFailed(("git", *args), returncode, stderr)


# What `git diff` prints must not depend on the user's configuration: renames but not copies
# (diff.renames=copies), a/ and b/ prefixes (diff.noprefix, diff.mnemonicPrefix), no colour
# (color.ui=always), no external diff or textconv (diff.external, diff.<driver>.textconv), files
# in git's order (diff.orderFile; -O/dev/null overrides it), submodules listed and shown as one
# "Subproject commit" line (diff.ignoreSubmodules, diff.submodule=log), and hunks merged only
# when they touch (diff.interHunkContext). The raw and the patch form share these options, so
# both list the same files in the same order. (diff.relative needs no pin: we run from the top
# of the work tree, where it has nothing to cut off.)
DIFF_PINS = (
    "-M",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-O/dev/null",
    "--submodule=short",
    "--ignore-submodules=none",
    "--inter-hunk-context=0",
)


def environment(
    base: Mapping[str, str] | None = None, *, keep_settings: bool = False
) -> dict[str, str]:
    """`base` (default: our own environment) as every process we start gets it: the one policy
    on inherited git variables, for our git commands and for the user's build and test.

    REDIRECTS always go, so no command can be pointed at another repository, index or object
    store. For our own git commands (the default) every other GIT_* variable goes too, except
    identity, transport, configuration and tracing (_KEPT_VARIABLES, _KEPT_PREFIXES), so that
    nothing reshapes the output we parse. `keep_settings` keeps those other GIT_* variables: it
    is for the user's own commands, whose GIT_TEST_*, GIT_LFS_* or GIT_SSL_CAPATH are theirs.
    Variables other than GIT_* are always kept.
    """
    source = os.environ if base is None else base
    return {
        name: value
        for name, value in source.items()
        if name not in REDIRECTS and (keep_settings or _kept(name))
    }


def _kept(name: str) -> bool:
    return not name.startswith("GIT_") or name in _KEPT_VARIABLES or name.startswith(_KEPT_PREFIXES)


def run(
    cwd: Path,
    *args: str,
    stdin: bytes = b"",
    base: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> bytes:
    """git's stdout; GitFailed if it exits non-zero. stdin is always a pipe (never the tty).

    git runs with `environment(base)`, plus the variables in `extra`, which are ours.
    """
    bound = _timeout()
    try:
        proc = subprocess.run(
            ["git", *_SAFE, *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env={**environment(base), **(extra or {})},
            check=False,
            timeout=bound,
        )
    except subprocess.TimeoutExpired:
        raise errors.GitTimedOut(("git", *args), bound) from None
    if proc.returncode != 0:
        raise _failed(args, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc.stdout


def reading(repo: Repo, args: Sequence[str], stdin: bytes, read: Callable[[IO[bytes]], T]) -> T:
    """`read(stdout)` of a command about the whole repository (as `in_repo`), while it runs:
    for output too big to hold twice (blobs of many MB). The same environment as `run`; stdin
    is written by a thread, so git never waits on a full pipe of ours. GitFailed if git exits
    non-zero."""
    cwd, where = _located(repo)
    command = ("git", *_SAFE, *where, *args)
    process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE,
                               env={**environment(None), **_objects(repo)})  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None

    def feed(pipe: IO[bytes]) -> None:
        with contextlib.suppress(BrokenPipeError), pipe:
            pipe.write(stdin)

    writer = threading.Thread(target=feed, args=(process.stdin,), daemon=True)
    writer.start()
    bound, fired = _timeout(), threading.Event()

    def stop() -> None:
        fired.set()
        process.kill()

    watchdog = threading.Timer(bound, stop)  # a git that hangs ends, and says so
    watchdog.daemon = True
    watchdog.start()
    try:
        result = read(process.stdout)
    except BaseException:
        process.kill()  # it may be blocked writing what we no longer read
        if fired.is_set():
            raise errors.GitTimedOut(("git", *args), bound) from None
        raise
    finally:
        writer.join()
        process.stdout.close()
        stderr = process.stderr.read()
        process.stderr.close()
        returncode = process.wait()
        watchdog.cancel()
    if fired.is_set():
        raise errors.GitTimedOut(("git", *args), bound)
    if returncode != 0:
        raise _failed(args, returncode, stderr.decode("utf-8", "replace"))
    return result


def annex(repo: Repo) -> Path | None:
    """Where the objects that git fetches on demand for our commands about `repo` go, when it
    is a partial clone (a promisor remote): `ddchange/objects` in its git directory,
    beside the journal, with the repository's own objects as its alternate; those stay as they
    were. None for any other repository, whose objects are all there."""
    common = Path(repo.common_dir).resolve()
    if not _is_partial(common):
        return None
    place = common / "ddchange" / "objects"
    place.mkdir(parents=True, exist_ok=True)  # again after a `ddchange reset`
    return place


@functools.cache
def _is_partial(common: Path) -> bool:
    """Whether git may fetch missing objects on demand here: a promisor remote is set."""
    try:
        out = run(common, f"--git-dir={common}", "config", "--get-regexp",
                  r"^(extensions\.partialclone|remote\..*\.promisor)$")  # fmt: skip
    except errors.GitFailed as failure:
        if failure.returncode == 1:  # none set
            return False
        raise
    return any(not line.endswith(b" false") for line in out.splitlines())


def alternate(path: Path) -> str:
    """`path` as an entry of GIT_ALTERNATE_OBJECT_DIRECTORIES, a ':'-separated list; git reads
    an entry that starts with '"' as a C-quoted string, which is how a path with ':' gets
    through."""
    text = os.fspath(path.resolve())
    if ":" not in text and not text.startswith('"'):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _objects(repo: Repo) -> dict[str, str]:
    """The variables that send objects fetched on demand to the repository's `annex`."""
    place = annex(repo)
    if place is None:
        return {}
    own = alternate(Path(repo.common_dir) / "objects")
    return {"GIT_OBJECT_DIRECTORY": os.fspath(place), "GIT_ALTERNATE_OBJECT_DIRECTORIES": own}


def _located(repo: Repo) -> tuple[Path, tuple[str, ...]]:
    """Where to run a command about the whole repository, and the options that name it."""
    work_tree = repo.working_tree_dir
    if work_tree is None:
        return Path(repo.git_dir), ()
    return Path(work_tree), (f"--git-dir={repo.git_dir}", f"--work-tree={work_tree}")


def in_repo(
    repo: Repo,
    *args: str,
    stdin: bytes = b"",
    within: Path | None = None,
    objects: Path | None = None,
) -> bytes:
    """Run a command about the whole repository, from its work tree (the git dir if bare), or
    from the directory `within` of the work tree, where git reads pathspecs relative to it.
    `objects`: a throwaway object directory of ours, where the objects it writes go (the
    repository's own serve as its alternate, and stay as they were).

    Not from inside the git dir: `git diff A B` reads .gitattributes (diff drivers for hunk
    headers, `-diff` for binary) from the work tree, as the user's own `git diff` does, and
    without a work tree it silently reads none. Explicit --git-dir and --work-tree, because a
    work tree set by core.worktree has no .git for git to discover.
    """
    cwd, where = _located(repo)
    directory = within if within is not None and where else cwd
    own = Path(repo.common_dir) / "objects"
    extra = _objects(repo) if objects is None else throwaway_objects(objects, own)
    return run(directory, *where, *args, stdin=stdin, extra=extra)


def throwaway_objects(place: Path, own: Path) -> dict[str, str]:
    """The variables that send the objects a command writes to `place`, a directory of ours,
    with the repository's objects at `own` as its alternate: those stay as they were."""
    return {
        "GIT_OBJECT_DIRECTORY": os.fspath(place),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": alternate(own),
    }


def nul_joined(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)


def nul_split(out: bytes) -> list[str]:
    # -z output ends with a NUL, so the last field is always empty.
    return [os.fsdecode(field) for field in out.split(b"\0")[:-1]]
