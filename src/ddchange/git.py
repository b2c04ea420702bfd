"""Every git command ddchange runs: one small typed function per git operation.

Owns the conversation with git. This is the only module that imports GitPython (to locate the
repository) and the only one that starts git. Every command runs with a scrubbed environment
(`environment`, which also makes the environment of the user's build and test) and safety
options (`_SAFE`), so neither a `GIT_DIR` inherited from a hook nor the user's hooks or diff
configuration can redirect or reshape what we read and write. Paths travel NUL-separated (`-z`)
and are decoded with `os.fsdecode`, so any byte string git accepts as a file name survives the
trip through `str` (`os.fsencode` gives the same bytes back).

Commands about the whole repository run from its work tree with explicit --git-dir and
--work-tree (`_in_repo`; bare repositories work too): they only read objects, refs and
.gitattributes there, and never touch the user's index or files. Commands about a scratch work
tree run inside that work tree.

The last few functions build repositories of our own (the sample scenarios, test repositories):
there git runs without the user's or the system's configuration, with pinned settings and a
pinned identity and date (`Signature`), so that the same history always gets the same SHAs.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import git

from ddchange import errors

Repo = git.Repo  # re-exported: other modules name the type without importing GitPython

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
    # No user hook may run: `worktree add` would otherwise fire post-checkout in our scratch tree.
    *("-c", "core.hooksPath=/dev/null"),
    # A throwaway work tree must not start an fsmonitor daemon.
    *("-c", "core.fsmonitor=false"),
    # Never repack or prune the user's repository as a side effect of our commands.
    *("-c", "gc.auto=0", "-c", "maintenance.auto=false"),
)

# What `git diff` prints must not depend on the user's configuration: renames but not copies
# (diff.renames=copies), a/ and b/ prefixes (diff.noprefix, diff.mnemonicPrefix), no colour
# (color.ui=always), no external diff or textconv (diff.external, diff.<driver>.textconv), files
# in git's order (diff.orderFile; -O/dev/null overrides it), submodules listed and shown as one
# "Subproject commit" line (diff.ignoreSubmodules, diff.submodule=log), and hunks merged only
# when they touch (diff.interHunkContext). The raw and the patch form share these options, so
# both list the same files in the same order. (diff.relative needs no pin: we run from the top
# of the work tree, where it has nothing to cut off.)
_DIFF_PINS = (
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


@dataclass(frozen=True)
class RawEntry:
    """One path's change between two trees, as `git diff --raw` reports it."""

    status: str  # A, D, M, R or T (no C: we ask for renames, not copies)
    old_mode: int  # 0 where the path is absent on that side
    new_mode: int
    old_sha: str  # all zeros where the path is absent on that side
    new_sha: str
    old_path: str  # for A and D the one path is both old_path and new_path
    new_path: str


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree listing: mode and object name."""

    mode: int
    sha: str


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


def _run(
    cwd: Path,
    *args: str,
    stdin: bytes = b"",
    base: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> bytes:
    """git's stdout; GitFailed if it exits non-zero. stdin is always a pipe (never the tty).

    git runs with `environment(base)`, plus the variables in `extra`, which are ours.
    """
    proc = subprocess.run(
        ["git", *_SAFE, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env={**environment(base), **(extra or {})},
        check=False,
    )
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace")
        raise errors.GitFailed(("git", *args), proc.returncode, stderr)
    return proc.stdout


def _in_repo(repo: Repo, *args: str, stdin: bytes = b"") -> bytes:
    """Run a command about the whole repository, from its work tree (the git dir if bare).

    Not from inside the git dir: `git diff A B` reads .gitattributes (diff drivers for hunk
    headers, `-diff` for binary) from the work tree, as the user's own `git diff` does, and
    without a work tree it silently reads none. Explicit --git-dir and --work-tree, because a
    work tree set by core.worktree has no .git for git to discover.
    """
    work_tree = repo.working_tree_dir
    if work_tree is None:
        return _run(Path(repo.git_dir), *args, stdin=stdin)
    where = (f"--git-dir={repo.git_dir}", f"--work-tree={work_tree}")
    return _run(Path(work_tree), *where, *args, stdin=stdin)


def _nul_joined(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)


def _nul_split(out: bytes) -> list[str]:
    # -z output ends with a NUL, so the last field is always empty.
    return [os.fsdecode(field) for field in out.split(b"\0")[:-1]]


@contextmanager
def _without_git_env() -> Iterator[None]:
    """Hide inherited GIT_* variables from GitPython, which reads GIT_WORK_TREE, GIT_COMMON_DIR
    and GIT_OBJECT_DIRECTORY from os.environ while it locates a repository."""
    hidden = {name: os.environ.pop(name) for name in os.environ.keys() - environment().keys()}
    try:
        yield
    finally:
        os.environ.update(hidden)


def open_repo(path: Path) -> Repo:
    """The repository containing `path`, searching parent directories.

    Bare repositories are fine: we only read objects and add a separate scratch work tree.
    """
    with _without_git_env():
        try:
            return git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise errors.NotARepository(path) from None


def resolve_commit(repo: Repo, rev: str) -> str:
    """The full object name of the commit `rev` names (tags peeled); UnknownRevision if none.

    Two steps, because a suffix like ^{commit} cannot be added to every revision: ":/fix" looks
    for a commit message, and ":/fix^{commit}" would look for that text.
    """
    name = _verify(repo, rev)
    commit = None if name is None else _verify(repo, f"{name}^{{commit}}")  # peels tags
    if commit is not None:
        return commit
    # A full object name passes --verify unchecked, also when the object is not there (cut
    # off by a shallow clone): only its type tells.
    kind = None if name is None else _object_type(repo, name)
    if kind is None:
        raise errors.UnknownRevision(rev, shallow=_is_shallow(repo))
    raise errors.UnknownRevision(rev, kind=kind)


def _verify(repo: Repo, rev: str) -> str | None:
    """The one object `rev` names, or None. UnknownRevision with git's complaint where git
    rejects the revision outright ("no upstream configured", a malformed @{...})."""
    # --end-of-options keeps a rev like "--all" from being read as an option; --verify insists
    # on exactly one object, and --quiet turns "no such object" into a silent exit 1.
    try:
        out = _in_repo(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", rev)
    except errors.GitFailed as failure:
        if failure.returncode == 1:
            return None
        complaint = failure.stderr.strip().removeprefix("fatal: ").splitlines()
        raise errors.UnknownRevision(rev, complaint=complaint[0] if complaint else "") from None
    return out.decode("ascii").strip()


def _is_shallow(repo: Repo) -> bool:
    return _in_repo(repo, "rev-parse", "--is-shallow-repository").strip() == b"true"


def _object_type(repo: Repo, name: str) -> str | None:
    """The type of object `name` ("commit", "tree", ...); None if the repository lacks it."""
    try:
        return _in_repo(repo, "cat-file", "-t", name).decode("ascii").strip()
    except errors.GitFailed:
        return None


def diff_raw(repo: Repo, good: str, bad: str) -> list[RawEntry]:
    """Every path that differs between the commits `good` and `bad`, in git's order."""
    out = _in_repo(repo, "diff", "--raw", "-z", "--no-abbrev", *_DIFF_PINS, good, bad, "--")
    return _parse_raw(out)


def _parse_raw(out: bytes) -> list[RawEntry]:
    # Records are ":old_mode new_mode old_sha new_sha status" NUL path NUL, with a second path
    # for renames. The status carries a similarity score after the letter (R100).
    fields = iter(out.split(b"\0"))
    entries = []
    for meta in fields:
        if not meta:
            break
        old_mode, new_mode, old_sha, new_sha, status = meta[1:].decode("ascii").split(" ")
        old_path = os.fsdecode(next(fields))
        new_path = os.fsdecode(next(fields)) if status[0] in "RC" else old_path
        modes = int(old_mode, 8), int(new_mode, 8)
        entries.append(RawEntry(status[0], *modes, old_sha, new_sha, old_path, new_path))
    return entries


def diff_patch(repo: Repo, good: str, bad: str) -> str:
    """The patch from `good` to `bad` with git's own hunks and function-context headers.

    Decoded as UTF-8 with surrogateescape: non-UTF-8 file contents survive and can be encoded
    back to the exact bytes.
    """
    # diff.suppressBlankEmpty would print an empty context line as "" instead of " ".
    out = _in_repo(
        repo,
        *("-c", "diff.suppressBlankEmpty=false"),
        *("diff", "-p", "-U3", *_DIFF_PINS, good, bad, "--"),
    )
    return out.decode("utf-8", "surrogateescape")


def read_blobs(repo: Repo, shas: Iterable[str]) -> dict[str, bytes]:
    """The exact bytes of each blob, all read by one `git cat-file --batch` process.

    We do not use GitPython's persistent cat-file: it inherits os.environ (and with it GIT_DIR
    or GIT_OBJECT_DIRECTORY), and its processes outlive the call.
    """
    wanted = sorted(set(shas))
    if not wanted:
        return {}
    request = "".join(f"{sha}\n" for sha in wanted).encode("ascii")
    out = _in_repo(repo, "cat-file", "--batch", stdin=request)
    return dict(_parse_batch(out, wanted))


def _parse_batch(out: bytes, wanted: list[str]) -> Iterator[tuple[str, bytes]]:
    # Each answer is "<sha> <type> <size>" LF <content> LF, or "<sha> missing" LF.
    start = 0
    for sha in wanted:
        end = out.index(b"\n", start)
        header = out[start:end].decode("ascii").split(" ")
        if header[1:2] != ["blob"]:
            raise errors.GitFailed(("git", "cat-file", "--batch"), 0, f"not a blob: {sha}")
        size = int(header[2])
        yield sha, out[end + 1 : end + 1 + size]
        start = end + 1 + size + 1


def ls_tree(repo: Repo, rev: str) -> dict[str, TreeEntry]:
    """Every file, symlink and submodule in the tree of `rev`, by path."""
    out = _in_repo(repo, "ls-tree", "-r", "-z", rev)
    entries = {}
    for record in _nul_split(out):
        meta, path = record.split("\t", 1)
        mode, _type, sha = meta.split(" ")
        entries[path] = TreeEntry(int(mode, 8), sha)
    return entries


def add_worktree(repo: Repo, path: Path, sha: str, *, reason: str) -> None:
    """Check `sha` out, detached (no branch is created), into the new work tree `path`.

    The work tree is locked with `reason`, so that `git worktree prune` (also the automatic one
    in `git gc`) leaves it alone while we use it, and so that the next run can tell ours from
    the user's and see whose it was (see `worktrees`).
    """
    _in_repo(
        repo, "worktree", "add", "--detach", "--lock", "--reason", reason, os.fspath(path), sha
    )


def remove_worktree(repo: Repo, path: Path) -> None:
    """Delete the linked work tree `path`, build products and edits included, even if locked."""
    # One --force discards edits and untracked files; the second one also removes a locked tree.
    _in_repo(repo, "worktree", "remove", "--force", "--force", os.fspath(path))


@dataclass(frozen=True)
class Worktree:
    """A linked work tree as `git worktree list` reports it."""

    path: Path
    locked: str | None  # the lock's reason ("" if locked without one); None if not locked


def worktrees(repo: Repo) -> list[Worktree]:
    """The repository's linked work trees (the main one is not listed)."""
    out = _in_repo(repo, "worktree", "list", "--porcelain", "-z")
    # -z: records are separated by an empty field, fields are "key value" or a lone "key".
    found: list[Worktree] = []
    for record in out.decode("utf-8", "surrogateescape").split("\0\0"):
        fields = dict(field.partition(" ")[::2] for field in record.split("\0") if field)
        if "worktree" in fields:
            found.append(Worktree(Path(fields["worktree"]), fields.get("locked")))
    return found[1:]


def prefix(path: Path) -> str:
    """Where `path` lies inside its work tree ("sub/dir/"); "" at the top, in .git, or bare."""
    return os.fsdecode(_run(path, "rev-parse", "--show-prefix").strip())


def common_dir(repo: Repo) -> Path:
    """The git directory shared by all work trees (`.git` of the main one, or the bare repo)."""
    return Path(repo.common_dir).resolve()


def modified_files(worktree: Path) -> list[str]:
    """Tracked files in `worktree` whose content, mode or existence differ from its index."""
    # Porcelain `diff`, not `diff-files`: it refreshes stat data first, so a file a build merely
    # touched is not reported. Submodule directories are never ours to report.
    out = _run(worktree, "diff", "--name-only", "-z", "--ignore-submodules=all")
    return _nul_split(out)


def tracked_files(worktree: Path) -> set[str]:
    """Every file and symlink in the index of `worktree` (no submodules)."""
    out = _run(worktree, "ls-files", "-z", "--stage")
    records = (record.split("\t", 1) for record in _nul_split(out))
    return {path for meta, path in records if not meta.startswith("160000 ")}


def restore_files(worktree: Path, paths: Iterable[str]) -> None:
    """Rewrite `paths` in `worktree` from its index (recreating deleted ones)."""
    _run(worktree, "checkout-index", "-f", "-u", "-z", "--stdin", stdin=_nul_joined(paths))


# gitattributes(5): what can make a checkout write other bytes than the blob holds. Line-end
# conversion (text, eol, the older crlf), smudge filters (git-lfs puts a pointer in the blob and
# the real content in the work tree), $Id$ expansion, and a re-encoding.
_CONVERSION_ATTRIBUTES = ("filter", "ident", "working-tree-encoding", "eol", "crlf", "text")


def converted_paths(worktree: Path, paths: Iterable[str]) -> set[str]:
    """Those of `paths` that a checkout in `worktree` may write differently from their blob,
    by the attributes in force there now (its .gitattributes files, $GIT_DIR/info/attributes,
    core.attributesFile) and core.autocrlf / core.eol. A superset: git decides the details."""
    out = _run(
        worktree,
        *("check-attr", "-z", "--stdin", *_CONVERSION_ATTRIBUTES),
        stdin=_nul_joined(paths),
    )
    fields = _nul_split(out)  # path, attribute, value; path, attribute, value; ...
    values: dict[str, dict[str, str]] = {}
    for path, name, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=True):
        values.setdefault(path, {})[name] = value
    autocrlf = _config(worktree, "core.autocrlf").lower() == "true"
    crlf_text = autocrlf or _config(worktree, "core.eol").lower() == "crlf"
    return {path for path, found in values.items() if _may_convert(found, autocrlf, crlf_text)}


def _may_convert(values: Mapping[str, str], autocrlf: bool, crlf_text: bool) -> bool:
    if any(values[name] not in ("unspecified", "unset") for name in _CONVERSION_ATTRIBUTES[:-1]):
        return True
    if values["text"] == "unspecified":
        return autocrlf  # core.autocrlf=true treats files without attributes as text=auto
    return values["text"] != "unset" and crlf_text


def _config(cwd: Path, name: str) -> str:
    return _run(cwd, "config", "--default", "", "--get", name).decode("utf-8", "replace").strip()


def checkout_forms(worktree: Path, contents: Mapping[str, bytes]) -> dict[str, bytes]:
    """What a checkout in `worktree` writes at each path for the given blob contents: git's own
    line-end conversion, smudge filters and encodings, by `checkout-index` into a scratch
    directory.

    The contents become blobs in a throwaway object directory and index, with the repository's
    objects only as an alternate (see `tree_patch`): nothing is added to the repository. Not
    `cat-file --batch --filters`: git 2.39 announces the blob's size, not the converted one.
    """
    objects = _objects_dir(worktree)
    with tempfile.TemporaryDirectory(prefix="ddchange-convert-") as tmp:
        env = _throwaway_index_env(Path(tmp), objects)
        sources = []
        for number, content in enumerate(contents.values()):
            source = Path(tmp, f"{number}.blob")
            source.write_bytes(content)
            sources.append(os.fsencode(source) + b"\n")
        hashed = _run(
            worktree, "hash-object", "-w", "--no-filters", "--stdin-paths",
            stdin=b"".join(sources), extra=env,
        )  # fmt: skip
        entries = b"".join(
            f"100644 {name}\t".encode("ascii") + os.fsencode(path) + b"\0"
            for name, path in zip(hashed.decode("ascii").split(), contents, strict=True)
        )
        _run(worktree, "update-index", "-z", "--index-info", stdin=entries, extra=env)
        # The throwaway index holds no .gitattributes, so git takes them from the work tree.
        out = Path(tmp, "out")
        _run(worktree, "checkout-index", "-a", "-f", f"--prefix={out}/", extra=env)
        return {path: (out / path).read_bytes() for path in contents}


def tree_patch(worktree: Path, base_sha: str, paths: Iterable[str]) -> bytes:
    """A binary patch that `git apply` turns a checkout of `base_sha` into the files now at
    `paths` in `worktree` (added, deleted, renamed, binary, mode and symlink changes).

    Computed in a throwaway index and object directory: the repository's own object store only
    serves as an alternate, so blobs of new contents land in the temporary directory, and
    neither the repository's objects nor any index are modified.
    """
    objects = _objects_dir(worktree)
    with tempfile.TemporaryDirectory(prefix="ddchange-index-") as tmp:
        env = _throwaway_index_env(Path(tmp), objects)
        _read_tree(worktree, base_sha, env)
        _update_index(worktree, paths, env)
        return _diff_cached(worktree, base_sha, env)


def _objects_dir(cwd: Path) -> Path:
    # A linked work tree shares the main repository's objects; --git-path knows where they are.
    out = _run(cwd, "rev-parse", "--git-path", "objects")
    return cwd / os.fsdecode(out.rstrip(b"\n"))


def _throwaway_index_env(tmp: Path, objects: Path) -> dict[str, str]:
    (tmp / "objects").mkdir()
    return {
        "GIT_INDEX_FILE": os.fspath(tmp / "index"),
        "GIT_OBJECT_DIRECTORY": os.fspath(tmp / "objects"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": _alternate(objects),
    }


def _alternate(path: Path) -> str:
    # GIT_ALTERNATE_OBJECT_DIRECTORIES is a ':'-separated list; git reads an entry that starts
    # with '"' as a C-quoted string, which is how a path containing ':' gets through.
    text = os.fspath(path.resolve())
    if ":" not in text and not text.startswith('"'):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _read_tree(cwd: Path, sha: str, env: Mapping[str, str]) -> None:
    _run(cwd, "read-tree", sha, extra=env)


def _update_index(cwd: Path, paths: Iterable[str], env: Mapping[str, str]) -> None:
    # update-index rather than `add -A -- paths`: it takes NUL-separated names on stdin (no
    # pathspec magic, no command-line limit) and adds files that .gitignore matches. A name
    # with no file (or a directory) behind it is force-removed: plain --remove refuses a name
    # that is now a directory ("add individual files instead").
    present: list[str] = []
    absent: list[str] = []
    for path in paths:
        (present if _is_file(cwd / path) else absent).append(path)
    removal = _nul_joined(absent)
    _run(cwd, "update-index", "--force-remove", "-z", "--stdin", stdin=removal, extra=env)
    addition = _nul_joined(present)
    # --replace lets a file take the place of a directory's entries in the index.
    _run(cwd, "update-index", "--add", "--replace", "-z", "--stdin", stdin=addition, extra=env)


def _is_file(path: Path) -> bool:
    return path.is_symlink() or path.is_file()


def _diff_cached(cwd: Path, sha: str, env: Mapping[str, str]) -> bytes:
    # --binary makes binary changes appliable (and implies full object names in index lines).
    return _run(cwd, "diff", "--cached", "--binary", *_DIFF_PINS, sha, "--", extra=env)


def commits(repo: Repo, good: str, bad: str) -> list[str]:
    """The commits in good..bad, oldest first (parents before children)."""
    out = _in_repo(repo, "rev-list", "--reverse", "--topo-order", f"{good}..{bad}", "--")
    return out.decode().split()


def blame(repo: Repo, rev: str, path: str, *, reverse_from: str | None = None) -> list[str]:
    """For each line of `path` at `rev`, the commit that last changed it (line 1 first).

    With `reverse_from` (a commit older than `rev`), the lines are those of `path` at
    `reverse_from`, and each gets the last commit up to `rev` in which it still existed
    (`git blame --reverse`): the line was removed by a child of that commit.
    """
    where = [f"{reverse_from}..{rev}", "--reverse"] if reverse_from else [rev]
    out = _in_repo(repo, "blame", "--porcelain", *where, "--", path)
    # Porcelain: a line "<sha> <orig> <final> [<count>]" opens each blamed line; the line's own
    # text follows after a tab. Only the header lines start with 40 hex digits and a space.
    found: dict[int, str] = {}
    for line in out.split(b"\n"):
        fields = line.split(b" ")
        if len(fields) >= 3 and len(fields[0]) == 40 and fields[2].isdigit():
            found[int(fields[2])] = fields[0].decode()
    return [found[n] for n in sorted(found)]


def path_commits(repo: Repo, good: str, bad: str, paths: Iterable[str]) -> list[str]:
    """The commits in good..bad that touched any of `paths`, newest first."""
    out = _in_repo(repo, "log", "--format=%H", f"{good}..{bad}", "--", *paths)
    return out.decode().split()


def pickaxe(repo: Repo, good: str, bad: str, text: str, paths: Iterable[str]) -> list[str]:
    """The non-merge commits in good..bad that changed how often `text` occurs in any of
    `paths` (`git log -S`, a fixed string), newest first."""
    out = _in_repo(
        repo, "log", "--no-merges", "--format=%H", f"-S{text}", f"{good}..{bad}", "--", *paths
    )
    return out.decode().split()


def first_changer(repo: Repo, since: str, bad: str, paths: Iterable[str]) -> str | None:
    """The oldest commit on the ancestry path since..bad that touched any of `paths`: the
    child of `since` (or a later descendant) that changed them."""
    out = _in_repo(
        repo, "log", "--reverse", "--ancestry-path", "--format=%H", f"{since}..{bad}", "--", *paths
    )
    return next(iter(out.decode().split()), None)


def first_parents(repo: Repo, good: str, bad: str) -> list[str]:
    """The first-parent history from `good` (excluded) to `bad`, oldest first: the commits
    `git bisect --first-parent` tests, each a state the main line really was in."""
    out = _in_repo(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}", "--")
    return out.decode().split()


@dataclass(frozen=True)
class CommitInfo:
    """Who made a commit, when, and why: what a report says about it."""

    sha: str
    author: str  # "Name <email>"
    date: str  # the author date, ISO 8601 with its offset
    subject: str
    parents: tuple[str, ...]


def commit_infos(repo: Repo, shas: Iterable[str]) -> dict[str, CommitInfo]:
    """Author, date, subject and parents of each commit, from one `git log --no-walk`."""
    wanted = sorted(set(shas))
    if not wanted:
        return {}
    fields = "%H%x00%an <%ae>%x00%aI%x00%s%x00%P%x00"
    out = _in_repo(
        repo,
        *("log", "--no-walk=unsorted", "--stdin", f"--format={fields}", "--encoding=UTF-8"),
        stdin="".join(f"{sha}\n" for sha in wanted).encode("ascii"),
    )
    values = out.decode("utf-8", "replace").split("\0")
    found = {}
    for start in range(0, len(values) - 4, 5):
        sha, author, date, subject, parents = values[start : start + 5]
        sha = sha.strip()
        found[sha] = CommitInfo(sha, author, date, subject, tuple(parents.split()))
    return found


def changed_paths(repo: Repo, good: str, rev: str) -> list[str]:
    """Every path that exists on either side and differs between `good` and `rev`."""
    paths: dict[str, None] = {}
    for entry in diff_raw(repo, good, rev):
        paths.update(dict.fromkeys((entry.old_path, entry.new_path)))
    return list(paths)


# -- Repositories we build ourselves -------------------------------------------------------------
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
    return _run(cwd, *args, base=path, extra=_isolated(signature))


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
        conflicts = set(
            _nul_split(_build(worktree, "diff", "--name-only", "-z", "--diff-filter=U"))
        )
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
