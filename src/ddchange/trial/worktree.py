"""The scratch work tree: where every configuration is materialized, built and tested.

Owns its lifecycle and its files. `scratch_worktree` makes a repository of its own that
borrows the user's objects, with GOOD checked out, in a fresh temporary directory outside the
user's tree, and removes it again in `finally`, whatever ends the block (an error, Ctrl-C). The
user's work tree, index, HEAD, refs, reflogs, stash, config and hooks are never touched, not
even by a test that runs git: the scratch repository has its own. Every git command we run
there is one of `ddchange.git`'s.

A test may attack the tree it runs in: before each write (`Scratch.guard`) the tree and its
.git must still be the directories made (by lstat: no link, the same device and inode), or the
run stops; stale lock files of a git a test started are removed (`Scratch._unlock`); removal
never crosses a mount a test left inside (`dispose`), and first stops what still works there.

`Scratch.apply` makes the tracked files match a configuration by rewriting only what differs
from what is on disk right now, so file times stay put for everything else and an incremental
build (make) redoes only what the configuration changed. Untracked files (build products)
stay, unless one stands where a configuration needs a tracked file.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
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

from ddchange import errors, git
from ddchange.diff import read
from ddchange.diff.hunks import FileState, pieces
from ddchange.trial import files
from ddchange.trial.runner import SCRATCH_VARIABLE
from ddchange.trial.watch import Watch

_LOCKS = ("index.lock", "HEAD.lock")  # in the scratch repository: see `Scratch._unlock`
_MANY_PATHS = 2000  # more paths than this touched: git compares the whole tree instead
_SECOND = 1_000_000_000  # ns


@dataclass(frozen=True, kw_only=True)
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
    # What a test changed (watch.py); None: ask git about the whole tree each time.
    watch: Watch | None = field(default=None, repr=False, compare=False)
    # What `apply` last left at each path it was given; trusted for paths the watch says no
    # test touched since, so their files need not be read again.
    _current: dict[str, FileState | None] = field(default_factory=dict, repr=False, compare=False)
    _tracked: list[str] = field(default_factory=list, repr=False, compare=False)  # sorted
    # HEAD and the index as `apply` last left them (`git.repository_state`); empty before.
    _git_state: list[object] = field(default_factory=list, repr=False, compare=False)
    # The device and inode of the tree and of its .git, as made (`identity`); empty: unknown
    identity: tuple[tuple[int, int], ...] = field(default=(), repr=False, compare=False)

    def guard(self) -> None:
        """Raise ScratchReplaced when a test replaced the tree or its .git with a link or
        another directory (by lstat, against `identity`): every git command of ours there, and
        every write, would act where that points. Called before each `apply` and `patch`. A
        .git that is gone is not this: our commands there fail, and say so."""
        for place, known in zip((self.path, self.path / ".git"), self.identity, strict=False):
            try:
                now = os.lstat(place)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(now.st_mode) or (now.st_dev, now.st_ino) != known:
                raise errors.ScratchReplaced(place)

    def apply(self, states: Mapping[str, FileState | None]) -> list[str]:
        """Make the tracked files match `states` (None: must not exist) and every other tracked
        file match GOOD again, with HEAD and the index at GOOD whatever the last test did to
        them; return the paths changed on disk, sorted.

        `states` hold blob contents; files are written as a checkout would write them (line-end
        conversion, smudge filters; see `_checked_out`).
        """
        self.guard()
        self._unlock()
        self._undo_git()
        touched = None if self.watch is None else self.watch.changed()
        restored = self._restore_others(states, touched)
        # .gitattributes go first: they decide how every other file is checked out, also the
        # files outside the diff, which are checked out again when their conversion changes.
        attributes = {path: state for path, state in states.items() if files.is_attributes(path)}
        changing = not all(self._has(path, state) for path, state in attributes.items())
        before = self._converted_others(states) if changing else set()
        unknown = {p for p in states if touched is None or not self._known(p, states, touched)}
        files.refuse_unsafe({p: states[p] for p in unknown})
        removed = [
            p
            for p in files.deepest_first({p: states[p] for p in unknown})
            if self._remove(p, states[p])
        ]
        written = [path for path, state in attributes.items() if self._write(path, state)]
        again = sorted(before | self._converted_others(states)) if changing else []
        self._check_out_again(again)
        rest = {path: state for path, state in states.items() if path not in attributes}
        final = self._checked_out(rest, fresh=bool(attributes))
        for path, state in final.items():
            if path in unknown and self._write(path, state):
                written.append(path)
        changed = sorted({*restored, *removed, *written, *again})
        self._stamp(changed)
        self._current.clear()
        if not (changing or again):
            self._current.update({**states, **final})
        if self.watch is not None:
            self.watch.mark()
        self._git_state[:] = [git.repository_state(self.path)]
        return changed

    def _unlock(self) -> None:
        """Remove the lock files a git that a test started and `--timeout` killed left in the
        tree's repository: no git runs there between tests, so each is stale, and would stop
        every git command of ours there."""
        for name in _LOCKS:
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                os.unlink(self.path / ".git" / name)

    def _undo_git(self) -> None:
        """HEAD and the index back at GOOD if a test moved them since the last `apply`: a
        commit (a version bump), a branch checked out, `git add`. The files such a test
        changed are then those that differ from the index, and go back with the others."""
        if self._git_state and self._git_state != [git.repository_state(self.path)]:
            git.reset_to(self.path, self.good)

    def _known(self, path: str, states: Mapping[str, FileState | None], touched: set[str]) -> bool:
        """Whether `path` is in its state on disk without looking: `apply` left it so, and no
        test touched it (or a directory above it) since."""
        if path not in self._current or self._current[path] != states[path]:
            return False
        parts = path.split("/")
        return not any("/".join(parts[:n]) in touched for n in range(1, len(parts) + 1))

    def _tracked_in(self, touched: set[str]) -> list[str]:
        """The tracked files among `touched`, or under a directory in it."""
        if not self._tracked:
            self._tracked.extend(sorted(git.tracked_files(self.path)))
        found = []
        for path in touched:
            start = bisect.bisect_left(self._tracked, path)
            for tracked in itertools.islice(self._tracked, start, None):
                if tracked != path and not tracked.startswith(path + "/"):
                    break
                found.append(tracked)
        return found

    def _stamp(self, paths: list[str]) -> None:
        """Give every rewritten file a modification time in a later second than any it had:
        caches keyed by whole seconds and size (Python's .pyc files, make on some file
        systems) cannot take a same-size rewrite within one second for the old content.

        Invariant: a path's mtime only grows, by at least a second per rewrite; a path rewritten
        many times a second runs ahead of the clock (make may warn of clock skew)."""
        now = time.time_ns()
        for path in paths:
            full = self.path / path
            if not files.exists_here(full, self.path):
                continue
            before = self._stamps.get(path, self._born)
            stamp = max(now, (before // _SECOND + 1) * _SECOND)
            os.utime(full, ns=(stamp, stamp), follow_symlinks=False)
            self._stamps[path] = stamp

    def patch(self, base_sha: str, paths: Collection[str]) -> bytes:
        """A patch (for `git apply`) from `base_sha` to the files now at `paths`."""
        self.guard()
        present = {path for path in paths if files.is_entry(self.path / path, self.path)}
        return git.tree_patch(self.path, base_sha, sorted(present), sorted({*paths} - present))

    def _checked_out(
        self, states: Mapping[str, FileState | None], *, fresh: bool
    ) -> Mapping[str, FileState | None]:
        """`states` with every file's blob content replaced by what a checkout writes here.

        Only paths whose attributes ask for a conversion go through git (`* eol=crlf`, a
        `filter=lfs`), so a repository without any costs one `check-attr` per search. `fresh`:
        the diff touches .gitattributes, so a path's attributes can change from one
        configuration to the next and are asked again each time.
        """
        regular = {p: s for p, s in states.items() if s is not None and s.mode != files.SYMLINK}
        unknown = list(regular) if fresh else [p for p in regular if p not in self._converts]
        if unknown:
            converted = git.converted_paths(self.path, unknown)
            self._converts.update((path, path in converted) for path in unknown)
        blobs = {p: pieces(state.content) for p, state in regular.items() if self._converts[p]}
        if not blobs:
            return states
        forms = git.checkout_forms(self.path, blobs)
        return {**states, **{p: FileState(forms[p], regular[p].mode) for p in forms}}

    def _converted_others(self, states: Mapping[str, FileState | None]) -> set[str]:
        """The tracked files outside `states` that a checkout here converts, by the attributes
        on disk now."""
        return git.converted_paths(self.path, git.tracked_files(self.path) - states.keys())

    def _check_out_again(self, paths: list[str]) -> None:
        # Deleted first: checkout-index leaves a file alone that git deems unchanged, and a
        # file's clean form does not change with its line-end conversion.
        for path in paths:
            full = self.path / path
            if files.exists_here(full, self.path) and not files.is_directory(full):
                full.unlink()
        if paths:
            git.restore_files(self.path, paths)

    def _restore_others(
        self, states: Mapping[str, FileState | None], touched: set[str] | None
    ) -> list[str]:
        # A build may rewrite or delete tracked files outside the diff (generated sources under
        # version control); they must be GOOD's again, or the next test sees a different tree.
        # Which ones: git compares the whole tree, or only what the watch saw a test touch.
        among = None if touched is None else self._tracked_in(touched)
        if among is not None and len(among) > _MANY_PATHS:
            among = None
        modified = git.modified_files(self.path, among)
        others = [path for path in modified if path not in states]
        if others:
            git.restore_files(self.path, others)
        return others

    def _remove(self, path: str, state: FileState | None) -> bool:
        if state is not None or self._has(path, None):
            return False
        full = self.path / path
        full.unlink()
        files.prune_empty_parents(full.parent, self.path)
        return True

    def _has(self, path: str, state: FileState | None) -> bool:
        """Whether `path` already is in `state` on disk. For None, "no file here": a directory
        there holds other paths (or build output)."""
        full = self.path / path
        if state is None:
            return not files.exists_here(full, self.path) or files.is_directory(full)
        return files.exists_here(full, self.path) and files.holds(full, state)

    def _write(self, path: str, state: FileState | None) -> bool:
        full = self.path / path
        if state is None:
            return False
        here = files.exists_here(full, self.path)
        if here and files.holds(full, state):
            return False
        if not (here and files.overwrote(full, state)):
            files.make_parents(full, self.path)
            if os.path.lexists(full):
                files.delete(full)
            files.create(full, state)
        return True


# Every scratch tree is the directory "tree" in a directory "ddchange-scratch-<pid>-<random>"
# of the temporary directory, beside our marker file (`_MARKER`), which names the process that
# owns it and the directory itself: only a directory that carries it, and whose owner is gone,
# is ever removed by another run; a look-alike a user made, or a copy of ours a user kept to
# look into, is not ours. The marker stays when a test deletes the tree's .git (the test sees
# only the tree); the alternates file in that .git says whose objects it borrows, which
# repository it serves. A Dask worker keeps its clones and bundles in one directory of its
# own, "ddchange-worker-<pid>-<random>" (`worker_directory`), with the same marker.
_PREFIX = "ddchange-scratch-"
_WORKER_PREFIX = "ddchange-worker-"
_MARKER = "ddchange-owner"
_MARKER_SIZE = 256  # more than any marker of ours holds: a longer file is not one
_TREE = "tree"
# How often, and how far apart, `owners` looks again at a live run's tree that has no .git.
_SETTLE_LOOKS = 20
_SETTLE_LOOKS_APART = 0.05


@contextmanager
def scratch_worktree(repo: git.Repo, good_sha: str) -> Iterator[Scratch]:
    """A scratch repository with `good_sha` checked out in a new temporary directory, removed
    on exit (`git.clone_scratch`: its own refs, config and hooks; the user's objects borrowed).

    If the process dies without its `finally` (SIGKILL, a power cut), the next run's
    `remove_stale` sees from the marker beside the tree that its owner is gone, and removes it.
    """
    path = scratch_directory()
    try:
        try:
            git.clone_scratch(repo, path, good_sha)
        except errors.GitFailed:
            read.check_tree(repo, good_sha)  # a path git refuses to check out: which one
            raise
        watch = Watch(path)
        try:
            yield Scratch(repo=repo, path=path, good=good_sha, watch=watch, identity=identity(path))
        finally:
            watch.close()
    finally:
        remove_scratch(path)


def identity(tree: Path) -> tuple[tuple[int, int], ...]:
    """The device and inode of `tree` and of its .git, as `Scratch.guard` checks them."""
    return tuple((found.st_dev, found.st_ino) for found in map(os.lstat, (tree, tree / ".git")))


def owners(repo: git.Repo) -> dict[Path, int]:
    """The directories of this repository's scratch trees and the process id that owns each;
    a tree whose repository cannot be told any more (its .git is gone) counts too. A live run
    of any repository's has such a tree for a moment, while git makes it or it is removed: a
    live owner's tree without .git is looked at again for up to a second before it counts."""
    objects = (git.common_dir(repo) / "objects").resolve()

    def ours(path: Path) -> bool:
        borrowed = git.borrowed_objects(path / _TREE)
        return borrowed == objects or (borrowed is None and path.exists())

    def unknown(path: Path) -> bool:
        return git.borrowed_objects(path / _TREE) is None

    found = {path: pid for path, pid in _named(_PREFIX).items() if ours(path)}
    for _ in range(_SETTLE_LOOKS):
        unsure = [p for p, pid in found.items() if unknown(p) and _alive(pid)]
        if not unsure:
            break
        time.sleep(_SETTLE_LOOKS_APART)
        for path in unsure:
            if not ours(path):
                del found[path]
    return found


def _named(prefix: str) -> dict[Path, int]:
    """Our directories named `prefix`… in the temporary directory that carry our marker, and
    the process id it names."""
    found = {}
    for path in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
        pid = _owner(path) if _mine(path) else None
        if pid is not None:
            found[path] = pid
    return found


def _owner(path: Path) -> int | None:
    """The process that made the directory `path`, by our marker in it; None if `path`
    carries none that names it (a directory a user made, or a copy of ours), and 0 when the
    process that made it is gone, even where its pid now names another process (the marker
    holds when it started)."""
    try:
        with (path / _MARKER).open("rb") as marker:
            text = marker.read(_MARKER_SIZE).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    fields = text.split(" ")
    if len(fields) < 2 or not fields[1].isdigit():
        return None
    pid = int(fields[1])
    started = fields[5].strip() if len(fields) > 5 else ""
    try:
        if text not in (_marker(path, pid, started), _marker(path, pid)):  # (the latter: older)
            return None
    except OSError:
        return None
    now = _started(pid)
    return 0 if started.isdigit() and now is not None and str(now) != started else pid


def _marker(path: Path, pid: int, started: str | None = None) -> str:
    """What our marker in the directory `path` says: ddchange made it, for process `pid`
    (which started at `started`, clock ticks after boot), and it is this very directory (its
    name, device and inode: a copy or a move is not). Without `started`: as markers were
    written before they held it."""
    info = path.stat()
    tail = "" if started is None else f" {started}"
    return f"ddchange {pid} {info.st_dev} {info.st_ino} {path.name}{tail}\n"


def _started(pid: int) -> int | None:
    """When process `pid` started, in clock ticks after boot (/proc/PID/stat, its 22nd field);
    None where it cannot be read (no such process, not Linux)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = data.rpartition(b")")[2].split()  # after the command's name, which may hold spaces
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _claimed(prefix: str, within: Path | None) -> Path:
    """A new empty directory named `prefix`<our pid>-…, in the temporary directory or
    `within`, with our marker in it."""
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=within)).resolve()
    started = _started(os.getpid())
    marker = _marker(path, os.getpid(), "-" if started is None else str(started))
    (path / _MARKER).write_text(marker, "ascii")
    return path


def remove_stale(repo: git.Repo) -> list[Path]:
    """Remove the scratch trees whose owning process is gone; return their directories.

    Whatever state a tree is in (half removed, without .git, with a build's read-only files),
    it goes. Trees of a live process (another ddchange run in this repository) are left alone.
    """
    return _remove_dead(owners(repo))


def remove_dead_workers() -> list[Path]:
    """Remove the directories of Dask workers on this machine whose process is gone (killed
    with SIGKILL, or by the out-of-memory killer, before its exit handler), with the clones in
    them, and stop the tests still running there; return their paths. A live worker's
    directory is left alone."""
    return _remove_dead(_named(_WORKER_PREFIX))


def _remove_dead(owned: dict[Path, int]) -> list[Path]:
    stale = [path for path, pid in owned.items() if not _alive(pid)]
    for path in stale:
        _kill_processes_in(path)
        dispose(path)
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
    mark = f"{SCRATCH_VARIABLE}={path}".encode()  # the tree's path, or that of one in it
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
    return cwd == path or path in cwd.parents or any(_names(v, mark) for v in environment)


def _names(variable: bytes, mark: bytes) -> bool:
    return variable == mark or variable.startswith(mark + b"/")


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


def scratch_directory(within: Path | None = None) -> Path:
    """A new empty directory for a scratch tree, in a directory of its own marked as this
    process's, in the temporary directory or `within`; `remove_scratch` removes both."""
    tree = _claimed(_PREFIX, within) / _TREE
    tree.mkdir()
    return tree


def remove_scratch(tree: Path) -> None:
    """Remove a tree that `scratch_directory` made, with the directory that holds it, after
    stopping what still works there (a daemon of a test that no other rule caught)."""
    _kill_processes_in(tree.parent)
    dispose(tree.parent)


def worker_directory() -> Path:
    """A new directory for what a Dask worker keeps, marked as this process's, so that
    `remove_dead_workers` finds it once the process is gone."""
    return _claimed(_WORKER_PREFIX, None)


def dispose(path: Path) -> None:
    """Delete the scratch tree, also where a build left directories without write permission.
    Ctrl-C, SIGTERM and the other `errors.STOPPING_SIGNALS` wait until it is gone: a tree half
    removed is no use to anyone. A mount a test left inside it is never crossed (its source,
    outside, is not ours): the mount point stays, with the directories above it."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, errors.STOPPING_SIGNALS)
    try:
        mounts = _mounts_below(path)
        if mounts:
            _remove_around(Path(os.path.realpath(path)), mounts)
            return
        try:
            shutil.rmtree(path)
        except FileNotFoundError:
            return
        except OSError:
            _make_writable(path)
            shutil.rmtree(path, ignore_errors=True)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _mounts_below(path: Path) -> set[str]:
    """The mount points at or below `path` (real paths), from /proc/self/mountinfo; none where
    it cannot be read (not Linux)."""
    try:
        table = Path("/proc/self/mountinfo").read_bytes()
    except OSError:
        return set()
    top = os.path.realpath(path)
    found = set()
    for line in table.splitlines():
        fields = line.split(b" ")
        if len(fields) > 4:  # the fifth is the mount point, with octal escapes (\040: a space)
            point = os.fsdecode(fields[4].decode("unicode_escape").encode("latin-1"))
            if point == top or point.startswith(top + os.sep):
                found.add(point)
    return found


def _remove_around(root: Path, mounts: set[str]) -> None:
    """Delete what is under `root` but the mount points in `mounts` and directories on another
    device: never entered, never changed. Directories left holding one stay."""
    device = os.lstat(root).st_dev

    def clear(directory: str) -> bool:
        """Everything in `directory` deleted but mounts; whether it is empty now."""
        empty = True
        with contextlib.suppress(OSError):
            os.chmod(directory, stat.S_IRWXU)
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return False
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
            elif entry.path in mounts or info.st_dev != device or not clear(entry.path):
                empty = False
            else:
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)
        return empty

    if os.fspath(root) not in mounts and clear(os.fspath(root)):
        with contextlib.suppress(OSError):
            os.rmdir(root)


def _make_writable(path: Path) -> None:
    for directory, subdirectories, _files in os.walk(path):
        for name in (directory, *(os.path.join(directory, d) for d in subdirectories)):
            with contextlib.suppress(OSError):
                if not os.path.islink(name):
                    os.chmod(name, stat.S_IRWXU)
