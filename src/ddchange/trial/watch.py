"""What a build or test changed in the scratch tree, without walking the tree: inotify on Linux.

Owns one question per test: which paths under the tree (its `.git` aside) were created,
written, removed, renamed or had their mode changed since `mark()`. Every directory is
watched (a new one as soon as it appears, its whole content counted as changed), and the
kernel's events name the paths. Where the events cannot answer, `changed()` says so (None)
and the caller asks git about the whole tree, as it would without a watch: not Linux, no
inotify, the user's inotify instances used up (fs.inotify.max_user_instances, 128 by default:
IDEs take many, and -j N takes one a tree) or this process's open files, the watch limit
(fs.inotify.max_user_watches) reached, or the kernel's queue of events overflowed during a test
that wrote very many files.

A file with more than one name (a hard link a test made) can be written through another
name, and the kernel then names that one, not the tracked file it shares: where a path the
events name is a file with other names, `changed()` cannot vouch for the tree and says so
(None), after every test for as long as that file keeps them, and the caller compares the
whole tree by content. (A link made from outside the tree to a tracked file, and written
there, shows no event here at all: only a comparison of the whole tree would see it.)

Invariant: when `changed()` returns a set, every path whose content, mode or existence
changed since the last `mark()` is in it, or lies under a directory in it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

try:  # Linux only (a dependency there); elsewhere `Watch` always says "ask git"
    from inotify_simple import INotify
    from inotify_simple import flags as _flags
except ImportError:  # pragma: no cover - not Linux
    INotify = None

_SKIPPED = frozenset({".git"})


class Watch:
    """Events of the tree at `root`; `changed()` is None from the first moment they are not
    known to be complete."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._inotify: INotify | None = None
        self._directories: dict[int, str] = {}  # watch descriptor -> directory, relative
        self._changed: set[str] = set()
        self._linked: set[str] = set()  # files seen with other names (hard links) still
        self._complete = False
        self._start()

    def mark(self) -> None:
        """Forget what changed so far (our own writes, or what the caller just asked git
        about): count from now. After an overflow the watches start over."""
        self._read()
        if not self._complete and self._inotify is not None:
            self._start()
        self._changed = set()

    def _start(self) -> None:
        if INotify is None:
            return
        if self._inotify is not None:
            self._inotify.close()
        self._inotify, self._directories, self._complete = None, {}, False
        try:
            self._inotify = INotify(nonblocking=True)
        except OSError:  # EMFILE: the user's inotify instances, or this process's files, used up
            return
        self._complete = True
        self._watch_below("")

    def changed(self) -> set[str] | None:
        """The paths changed since `mark()`, relative to the root (files, or directories for
        everything under them); None when the events may have missed some."""
        self._read()
        if not self._complete:
            return None
        self._linked = {p for p in self._linked | self._changed if _names(self.root / p) > 1}
        return None if self._linked else set(self._changed)

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None

    def _read(self) -> None:
        if self._inotify is None or not self._complete:
            return
        for event in self._inotify.read(timeout=0):
            if event.mask & _flags.Q_OVERFLOW:
                self._complete = False
                return
            directory = self._directories.get(event.wd)
            if directory is None or not event.name:
                continue  # a directory's own events: its parent reports it
            path = f"{directory}/{event.name}" if directory else event.name
            self._changed.add(path)
            if event.mask & _flags.ISDIR and event.mask & (_flags.CREATE | _flags.MOVED_TO):
                self._watch_below(path)

    def _watch_below(self, top: str) -> None:
        """Watch `top` and every directory under it (a symlink is not followed)."""
        assert self._inotify is not None
        mask = (
            _flags.MODIFY | _flags.ATTRIB | _flags.CLOSE_WRITE | _flags.MOVED_FROM
            | _flags.MOVED_TO | _flags.CREATE | _flags.DELETE | _flags.DONT_FOLLOW
            | _flags.ONLYDIR
        )  # fmt: skip
        for directory, subdirectories, _ in os.walk(self.root / top):
            relative = Path(directory).relative_to(self.root).as_posix()
            relative = "" if relative == "." else relative
            subdirectories[:] = [
                d for d in subdirectories if not (relative == "" and d in _SKIPPED)
            ]
            try:
                self._directories[self._inotify.add_watch(directory, mask)] = relative
            except OSError as error:
                if error.errno in (errno.ENOENT, errno.ENOTDIR):
                    continue  # gone again already: its parent's event reports it
                self._complete = False  # ENOSPC: the watch limit; EACCES; ...
                with contextlib.suppress(OSError):
                    self._inotify.close()
                self._inotify = None
                return


def _names(path: Path) -> int:
    """How many names the regular file at `path` has (0: none there, or not a regular file)."""
    try:
        found = os.lstat(path)
    except OSError:
        return 0
    return found.st_nlink if stat.S_ISREG(found.st_mode) else 0
