"""The scratch work tree: where every configuration is materialized, built and tested.

Owns its lifecycle and its files. `scratch_worktree` makes a repository of its own that
borrows the user's objects, with GOOD checked out, in a fresh temporary directory outside the
user's tree, and removes it again in `finally`, whatever ends the block (an error, Ctrl-C). The
user's work tree, index, HEAD, refs, reflogs, stash, config and hooks are never touched, not
even by a test that runs git: the scratch repository has its own. Every git command we run
there is one of `ddchange.git`'s.

`Scratch.apply` makes the tracked files match a configuration by rewriting only what differs
from what is on disk right now, so file times stay put for everything else and an incremental
build (make) redoes only what the configuration changed. Untracked files (build products)
stay, unless one stands where a configuration needs a tracked file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ddchange import git
from ddchange.diff.hunks import FileState

_SYMLINK = 0o120000
_SECOND = 1_000_000_000  # ns
_EXECUTABLE = 0o100755


@dataclass(frozen=True)
class Scratch:
    """A detached work tree of GOOD that configurations are materialized in."""

    repo: git.Repo
    path: Path
    good: str
    # Whether a checkout here converts each touched path (see `_checked_out`); asked once.
    _converts: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)
    # The modification time (ns) last given to each path we rewrote; before that, every file
    # is from the checkout, no later than `_born`.
    _stamps: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _born: int = field(default_factory=time.time_ns, repr=False, compare=False)

    def apply(self, states: Mapping[str, FileState | None]) -> list[str]:
        """Make the tracked files match `states` (None: must not exist) and every other tracked
        file match GOOD again; return the paths changed on disk, sorted.

        `states` hold blob contents; files are written as a checkout would write them (line-end
        conversion, smudge filters; see `_checked_out`).
        """
        restored = self._restore_others(states)
        # .gitattributes go first: they decide how every other file is checked out, also the
        # files outside the diff, which are checked out again when their conversion changes.
        attributes = {path: state for path, state in states.items() if _is_attributes(path)}
        changing = not all(self._has(path, state) for path, state in attributes.items())
        before = self._converted_others(states) if changing else set()
        removed = [path for path in _deepest_first(states) if self._remove(path, states[path])]
        written = [path for path, state in attributes.items() if self._write(path, state)]
        again = sorted(before | self._converted_others(states)) if changing else []
        self._check_out_again(again)
        rest = {path: state for path, state in states.items() if path not in attributes}
        for path, state in self._checked_out(rest, fresh=bool(attributes)).items():
            if self._write(path, state):
                written.append(path)
        changed = sorted({*restored, *removed, *written, *again})
        self._stamp(changed)
        return changed

    def _stamp(self, paths: list[str]) -> None:
        """Give every rewritten file a modification time in a later second than any it had:
        caches keyed by whole seconds and size (Python's .pyc files, make on some file
        systems) cannot take a same-size rewrite within one second for the old content.

        Invariant: a path's mtime only grows, by at least a second per rewrite; a path rewritten
        many times a second runs ahead of the clock (make may warn of clock skew)."""
        now = time.time_ns()
        for path in paths:
            full = self.path / path
            if not _exists_here(full, self.path):
                continue
            before = self._stamps.get(path, self._born)
            stamp = max(now, (before // _SECOND + 1) * _SECOND)
            os.utime(full, ns=(stamp, stamp), follow_symlinks=False)
            self._stamps[path] = stamp

    def patch(self, base_sha: str, paths: Collection[str]) -> bytes:
        """A patch (for `git apply`) from `base_sha` to the files now at `paths`."""
        return git.tree_patch(self.path, base_sha, paths)

    def _checked_out(
        self, states: Mapping[str, FileState | None], *, fresh: bool
    ) -> Mapping[str, FileState | None]:
        """`states` with every file's blob content replaced by what a checkout writes here.

        Only paths whose attributes ask for a conversion go through git (`* eol=crlf`, a
        `filter=lfs`), so a repository without any costs one `check-attr` per search. `fresh`:
        the diff touches .gitattributes, so a path's attributes can change from one
        configuration to the next and are asked again each time.
        """
        files = {p: s for p, s in states.items() if s is not None and s.mode != _SYMLINK}
        unknown = list(files) if fresh else [p for p in files if p not in self._converts]
        if unknown:
            converted = git.converted_paths(self.path, unknown)
            self._converts.update((path, path in converted) for path in unknown)
        blobs = {path: state.content for path, state in files.items() if self._converts[path]}
        if not blobs:
            return states
        forms = git.checkout_forms(self.path, blobs)
        return {**states, **{p: FileState(forms[p], files[p].mode) for p in forms}}

    def _converted_others(self, states: Mapping[str, FileState | None]) -> set[str]:
        """The tracked files outside `states` that a checkout here converts, by the attributes
        on disk now."""
        return git.converted_paths(self.path, git.tracked_files(self.path) - states.keys())

    def _check_out_again(self, paths: list[str]) -> None:
        # Deleted first: checkout-index leaves a file alone that git deems unchanged, and a
        # file's clean form does not change with its line-end conversion.
        for path in paths:
            full = self.path / path
            if _exists_here(full, self.path) and not _is_directory(full):
                full.unlink()
        if paths:
            git.restore_files(self.path, paths)

    def _restore_others(self, states: Mapping[str, FileState | None]) -> list[str]:
        # A build may rewrite or delete tracked files outside the diff (generated sources under
        # version control); they must be GOOD's again, or the next test sees a different tree.
        others = [path for path in git.modified_files(self.path) if path not in states]
        if others:
            git.restore_files(self.path, others)
        return others

    def _remove(self, path: str, state: FileState | None) -> bool:
        if state is not None or self._has(path, None):
            return False
        full = self.path / path
        full.unlink()
        _prune_empty_parents(full.parent, self.path)
        return True

    def _has(self, path: str, state: FileState | None) -> bool:
        """Whether `path` already is in `state` on disk. For None, "no file here": a directory
        there holds other paths (or build output)."""
        full = self.path / path
        if state is None:
            return not _exists_here(full, self.path) or _is_directory(full)
        return _exists_here(full, self.path) and _holds(full, state)

    def _write(self, path: str, state: FileState | None) -> bool:
        full = self.path / path
        if state is None:
            return False
        here = _exists_here(full, self.path)
        if here and _holds(full, state):
            return False
        if not (here and _overwrote(full, state)):
            _make_parents(full, self.path)
            if os.path.lexists(full):
                _delete(full)
            _create(full, state)
        return True


# Every scratch tree is a directory "ddchange-scratch-<pid>-<random>" in the temporary
# directory: the name says it is ours and which process owns it, even after a test deleted its
# .git; the alternates file in its .git says whose objects it borrows, which repository it
# serves.
_PREFIX = "ddchange-scratch-"
# Set in the environment of every build and test to the scratch tree's path: whatever they
# start, even a daemon that left the directory and its process group, can be found by it.
SCRATCH_VARIABLE = "DDCHANGE_SCRATCH"


@contextmanager
def scratch_worktree(repo: git.Repo, good_sha: str) -> Iterator[Scratch]:
    """A scratch repository with `good_sha` checked out in a new temporary directory, removed
    on exit (`git.clone_scratch`: its own refs, config and hooks; the user's objects borrowed).

    If the process dies without its `finally` (SIGKILL, a power cut), the next run's
    `remove_stale` sees from the directory's name that its owner is gone, and removes it.
    """
    path = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-")).resolve()
    try:
        git.clone_scratch(repo, path, good_sha)
        yield Scratch(repo, path, good_sha)
    finally:
        _dispose(path)


def owners(repo: git.Repo) -> dict[Path, int]:
    """The scratch trees of this repository and the process id that owns each (0: unknown);
    a tree whose repository cannot be told any more (its .git is gone) counts too."""
    objects = git.common_dir(repo) / "objects"
    found = {}
    for path in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        borrowed = git.borrowed_objects(path)
        if _mine(path) and borrowed in (objects.resolve(), None):
            pid = path.name.removeprefix(_PREFIX).partition("-")[0]
            found[path] = int(pid) if pid.isdigit() else 0
    return found


def remove_stale(repo: git.Repo) -> list[Path]:
    """Remove the scratch trees whose owning process is gone; return their paths.

    Whatever state a tree is in (half removed, without .git, with a build's read-only files),
    it goes. Trees of a live process (another ddchange run in this repository) are left alone.
    """
    stale = [path for path, pid in owners(repo).items() if not _alive(pid)]
    for path in stale:
        _kill_processes_in(path)
        _dispose(path)
    return stale


def _mine(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


def _kill_processes_in(path: Path) -> None:
    """SIGKILL every process that works in `path` or was started for it.

    A ddchange killed with SIGKILL cannot stop the build or test it was running; those keep
    working in its scratch tree. Where /proc exists (Linux) we find them by their working
    directory, or by SCRATCH_VARIABLE in their environment (a daemon that moved away);
    elsewhere they are left to finish on their own.
    """
    proc, path = Path("/proc"), path.resolve()
    if not proc.is_dir():
        return
    mark = f"{SCRATCH_VARIABLE}={path}".encode()
    for entry in proc.iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid() and _works_in(entry, path, mark):
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)


def _works_in(process: Path, path: Path, mark: bytes) -> bool:
    try:
        cwd = Path(os.readlink(process / "cwd"))
        environment = (process / "environ").read_bytes().split(b"\0")
    except OSError:  # gone meanwhile, or not ours to look at
        return False
    return cwd == path or path in cwd.parents or mark in environment


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, but belongs to another user
        return True
    return True


def _dispose(path: Path) -> None:
    """Delete the scratch tree, also where a build left directories without write permission.
    Ctrl-C and SIGTERM wait until it is gone: a tree half removed is no use to anyone."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        try:
            shutil.rmtree(path)
        except FileNotFoundError:
            return
        except OSError:
            _make_writable(path)
            shutil.rmtree(path, ignore_errors=True)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _make_writable(path: Path) -> None:
    for directory, subdirectories, _files in os.walk(path):
        for name in (directory, *(os.path.join(directory, d) for d in subdirectories)):
            with contextlib.suppress(OSError):
                if not os.path.islink(name):
                    os.chmod(name, stat.S_IRWXU)


def _is_attributes(path: str) -> bool:
    return path == ".gitattributes" or path.endswith("/.gitattributes")


def _deepest_first(states: Mapping[str, FileState | None]) -> list[str]:
    return sorted(states, key=lambda path: path.count("/"), reverse=True)


def _exists_here(full: Path, root: Path) -> bool:
    """Whether `full` exists in the work tree itself. A path beyond a symlinked directory is
    not in it (git says "beyond a symbolic link"), and may even lead out of the work tree."""
    # Plain strings, not pathlib: this runs for every touched path on every test.
    text, top = os.fspath(full), os.fspath(root)
    parent = os.path.dirname(text)
    while parent != top:
        if not _is_directory(parent):
            return False
        parent = os.path.dirname(parent)
    return os.path.lexists(text)


def _is_directory(path: str | Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def _make_parents(full: Path, root: Path) -> None:
    # A file or symlink in the way of a directory cannot be tracked (content.materialize refuses
    # file/directory conflicts, and removals ran first), so it is build output: it goes.
    for parent in reversed(full.relative_to(root).parents[:-1]):
        directory = root / parent
        if os.path.lexists(directory) and not _is_directory(directory):
            directory.unlink()
        directory.mkdir(exist_ok=True)


def _holds(full: Path, state: FileState) -> bool:
    """Whether `full` already is `state`: same kind (file or symlink), executable bit, bytes."""
    info = full.lstat()
    if state.mode == _SYMLINK:
        return stat.S_ISLNK(info.st_mode) and os.readlink(os.fsencode(full)) == state.content
    executable = bool(info.st_mode & stat.S_IXUSR)  # the bit git itself looks at
    return (
        stat.S_ISREG(info.st_mode)
        and executable == (state.mode == _EXECUTABLE)
        and info.st_size == len(state.content)
        and full.read_bytes() == state.content
    )


def _overwrote(full: Path, state: FileState) -> bool:
    """Rewrite `full` in place if it is a regular file of the right kind (executable or not);
    False if it is not, or cannot be opened for writing (a build made it read-only).

    Truncating keeps the inode: on ext4 that costs a seventh of unlinking and creating a file,
    which adds up when a test rewrites hundreds of files.
    """
    info = full.lstat()
    executable = bool(info.st_mode & stat.S_IXUSR)
    # A second link (a build's `cp -l`) would see the new content too: replace such a file.
    if state.mode == _SYMLINK or not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        return False
    if executable != (state.mode == _EXECUTABLE):
        return False
    try:
        descriptor = os.open(full, os.O_WRONLY | os.O_TRUNC)
    except OSError:
        return False
    with open(descriptor, "wb") as file:
        file.write(state.content)
    return True


def _create(full: Path, state: FileState) -> None:
    if state.mode == _SYMLINK:
        os.symlink(state.content, os.fsencode(full))
        return
    # The same permissions git's checkout gives: 0o777 or 0o666, less the umask.
    permissions = 0o777 if state.mode == _EXECUTABLE else 0o666
    descriptor = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL, permissions)
    with open(descriptor, "wb") as file:
        file.write(state.content)


def _delete(full: Path) -> None:
    # A directory can only stand where a tracked file must go if it holds nothing tracked
    # (content.materialize refuses file/directory conflicts), so it is build output: it goes.
    if full.is_dir() and not full.is_symlink():
        shutil.rmtree(full)
    else:
        full.unlink()


def _prune_empty_parents(directory: Path, root: Path) -> None:
    # git does not track directories: one left empty by a removal would not exist in a checkout.
    while directory != root:
        try:
            directory.rmdir()
        except OSError:  # not empty (build output, other files), or already gone
            return
        directory = directory.parent
