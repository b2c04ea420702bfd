"""Real git repositories in tmp_path, for the tests of the git layer, the diff and the scratch tree.

Every git command here runs with a pinned identity, pinned dates and no user or system
configuration, so the repositories (and their object names) are the same on every machine.
`hermetic` gives ddchange's own git commands the same isolation.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

PINNED = {
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_AUTHOR_DATE": "2005-04-07T22:13:13 +0000",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    "GIT_COMMITTER_DATE": "2005-04-07T22:13:13 +0000",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def hermetic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pin identity and dates, and hide the user's and the system's git configuration."""
    for name, value in PINNED.items():
        monkeypatch.setenv(name, value)


@dataclass(frozen=True)
class Sandbox:
    """A git repository (or bare repository) at `path`, driven by the real git."""

    path: Path

    def git(self, *args: str, stdin: bytes = b"") -> bytes:
        env = {**os.environ, **PINNED}
        done = subprocess.run(
            ["git", *args], cwd=self.path, input=stdin, env=env, capture_output=True, check=True
        )
        return done.stdout

    def write(self, name: str, data: bytes | str, mode: int = 0o644) -> None:
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(path):
            path.unlink()
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        path.chmod(mode)

    def symlink(self, name: str, target: str) -> None:
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(path):
            path.unlink()
        path.symlink_to(target)

    def remove(self, name: str) -> None:
        (self.path / name).unlink()

    def commit(self, message: str = "change") -> str:
        """Commit everything in the work tree; return the commit's full object name."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.rev("HEAD")

    def rev(self, rev: str) -> str:
        return self.git("rev-parse", "--verify", rev).decode().strip()


def init(path: Path, *, bare: bool = False) -> Sandbox:
    """A new empty repository at `path` on branch main."""
    path.mkdir(parents=True, exist_ok=True)
    sandbox = Sandbox(path)
    sandbox.git("init", "-q", "-b", "main", *(["--bare"] if bare else []))
    return sandbox


@dataclass(frozen=True)
class Zoo:
    """A repository whose GOOD..BAD diff holds one of every kind of change git can show."""

    repo: Sandbox
    good: str
    bad: str


# Paths git must print exactly (with quotepath off, unquoted; the tab one is quoted anyway).
ODD_NAMES = ("dir with space/ünï cödé.txt", 'quo"te.txt', "tab\tname.txt", "a b/c")
C_GOOD = "".join(
    f"int f{n}(int x)\n{{\n    int y = x;\n    y += {n};\n    y *= 2;\n    return y;\n}}\n\n"
    for n in range(6)
)
PY_GOOD = (
    "class Shape:\n    def area(self):\n"
    + "".join(f"        a{n} = {n}\n" for n in range(12))
    + "        return a0\n"
)


def _write_good(zoo: Sandbox) -> None:
    zoo.write("plain.c", C_GOOD)
    zoo.write(".gitattributes", "*.py diff=python\n")
    zoo.write("module.py", PY_GOOD)
    zoo.write("crlf.txt", "one\r\ntwo\r\nthree\r\n")
    zoo.write("noeol-gain.txt", "alpha\nbeta")
    zoo.write("noeol-lose.txt", "alpha\nbeta\n")
    zoo.write("noeol-both.txt", "alpha\nbeta")
    zoo.write("latin1.txt", "caf\xe9\nna\xefve\n".encode("latin-1"))
    for name in ODD_NAMES:
        zoo.write(name, f"{name}\nsecond line\n")
    zoo.write("image.bin", bytes(range(256)) * 4)
    zoo.symlink("link", "plain.c")
    zoo.write("becomes-link", "crlf.txt")
    zoo.symlink("link-becomes-file", "crlf.txt")
    zoo.write("script.sh", "#!/bin/sh\necho hi\n")
    zoo.write("tool.sh", "#!/bin/sh\necho old\n")
    zoo.write("moved-old.txt", "".join(f"moved line {n}\n" for n in range(10)))
    zoo.write("edited-old.txt", "".join(f"edited line {n}\n" for n in range(20)))
    zoo.write("deleted.txt", "gone\nsoon\n")
    zoo.write("empty-grows.txt", "")
    zoo.write("shrinks-to-empty.txt", "all\nof\nthis\n")
    zoo.write("insert.txt", "".join(f"line {n}\n" for n in range(20)))
    zoo.write("dtf/x", "a directory becomes a file\n")
    zoo.write("renamed-away", "".join(f"renamed away {n}\n" for n in range(10)))


def _write_bad(zoo: Sandbox) -> None:
    zoo.write(
        "plain.c",
        C_GOOD.replace("f0(int x)", "f0(long x)")
        .replace("y += 3", "y -= 3")
        .replace("y += 5;\n    y *= 2;", "y += 5;\n    y *= 3;"),
    )
    zoo.write("module.py", PY_GOOD.replace("a9 = 9", "a9 = 99"))
    zoo.write("crlf.txt", "one\r\nTWO\r\nthree\r\n")
    zoo.write("noeol-gain.txt", "alpha\nbeta\n")
    zoo.write("noeol-lose.txt", "alpha\nbeta")
    zoo.write("noeol-both.txt", "alpha\nBETA")
    zoo.write("latin1.txt", "caf\xe9\nna\xefve\nd\xe9j\xe0 vu\n".encode("latin-1"))
    for name in ODD_NAMES:
        zoo.write(name, f"{name}\nsecond line, edited\n")
    zoo.write("image.bin", bytes(range(255, -1, -1)) * 4)
    zoo.symlink("link", "module.py")
    zoo.symlink("becomes-link", "crlf.txt")
    zoo.write("link-becomes-file", "now a file\n")
    zoo.write("script.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    zoo.write("tool.sh", "#!/bin/sh\necho new\n", mode=0o755)
    (zoo.path / "moved-old.txt").rename(zoo.path / "moved-new.txt")
    zoo.remove("edited-old.txt")
    zoo.write(
        "edited-new.txt", "".join(f"edited line {n}\n" for n in range(20)).replace("5", "five")
    )
    zoo.write("added.txt", "brand\nnew\n")
    zoo.write("added-empty", "")
    zoo.write("added.bin", b"\0\1\2\3")
    zoo.remove("deleted.txt")
    zoo.write("empty-grows.txt", "now\nsomething\n")
    zoo.write("shrinks-to-empty.txt", "")
    zoo.write(
        "insert.txt", "".join(f"line {n}\n" + ("inserted\n" if n == 9 else "") for n in range(20))
    )
    zoo.remove("dtf/x")
    (zoo.path / "dtf").rmdir()
    zoo.write("dtf", "now a file\n")
    (zoo.path / "renamed-away").rename(zoo.path / "renamed-here")
    zoo.write("renamed-away/inner.txt", "a new file where the renamed one was\n")


def build_zoo(root: Path) -> Zoo:
    """The zoo repository under `root`, with a submodule whose pointer changes."""
    library = init(root / "library")
    first = library.commit("first")
    library.commit("second")
    zoo = init(root / "zoo")
    _write_good(zoo)
    zoo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", "../library", "sub")
    Sandbox(zoo.path / "sub").git("checkout", "-q", "--detach", first)
    good = zoo.commit("good")
    _write_bad(zoo)
    Sandbox(zoo.path / "sub").git("checkout", "-q", "--detach", "main")
    bad = zoo.commit("bad")
    return Zoo(zoo, good, bad)


def checkout_state(path: Path) -> dict[str, object]:
    """Everything of a user's repository at `path` that ddchange promises not to touch, byte for
    byte: work tree files (kind, bytes, mode, mtime), index, HEAD, refs, reflogs, stash, config,
    hooks, status and work tree list. Also for a linked work tree (.git is a file) and a bare
    repository (no files)."""
    ask = Sandbox(path).git
    bare = ask("rev-parse", "--is-bare-repository").strip() == b"true"
    index = path / os.fsdecode(ask("rev-parse", "--git-path", "index").strip())
    head = path / os.fsdecode(ask("rev-parse", "--git-path", "HEAD").strip())
    common = path / os.fsdecode(ask("rev-parse", "--git-common-dir").strip())
    return {
        "reflogs": _tree_bytes(common / "logs"),
        "config": (common / "config").read_bytes(),
        "hooks": _tree_bytes(common / "hooks"),
        "files": {} if bare else _files(path),
        "index": index.read_bytes() if index.exists() else None,
        "HEAD": head.read_bytes(),
        "refs": ask("for-each-ref", "--format=%(refname) %(objectname)"),
        "stash": b"" if bare else ask("stash", "list", "--format=%H %s"),
        "status": b"" if bare else ask("status", "--porcelain=v2", "-z", "--untracked-files=all"),
        "worktrees": ask("worktree", "list", "--porcelain", "-z"),
    }


def _tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under `root` (which may not exist) and its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _files(root: Path) -> dict[str, tuple[int, bytes, int]]:
    """Every file and symlink under `root` but .git: (st_mode, bytes or target, st_mtime_ns)."""
    found = {}
    for directory, subdirectories, names in os.walk(root):
        if directory == os.fspath(root):
            subdirectories[:] = [name for name in subdirectories if name != ".git"]
            names = [name for name in names if name != ".git"]  # a linked work tree's .git file
        for name in names:
            full = os.path.join(directory, name)
            info = os.lstat(full)
            link = stat.S_ISLNK(info.st_mode)
            data = os.readlink(os.fsencode(full)) if link else Path(full).read_bytes()
            found[os.path.relpath(full, root)] = (info.st_mode, data, info.st_mtime_ns)
    return found
