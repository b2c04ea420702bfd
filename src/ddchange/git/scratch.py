"""The scratch repository's git side: making it, reading its state, and patches.

A repository of its own that borrows the user's objects (`clone_scratch`); what is written there,
and every throwaway index and object directory, stays out of the user's repository.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ddchange import errors
from ddchange.git.command import (
    DIFF_PINS,
    annex,
    in_repo,
    nul_joined,
    nul_split,
    run,
    throwaway_objects,
)

if TYPE_CHECKING:
    from git import Repo

# The user's settings that decide what a checkout writes (line ends, smudge filters, encodings,
# attributes, symlinks): the scratch repository takes them over, so that its files are those the
# user's own checkout would hold. Nothing else of the user's configuration (remotes, hooks,
# aliases, credentials) comes along.
_CHECKOUT_SETTINGS = (
    r"^(core\.(autocrlf|eol|safecrlf|symlinks|attributesfile|checkroundtripencoding)"
    r"|filter\..*)$"
)


def clone_scratch(repo: Repo, path: Path, sha: str) -> None:
    """A repository of our own at the empty directory `path`, with `sha` checked out, detached.

    It borrows the user's objects (`clone --shared`: nothing is copied, nothing is written to
    the user's repository) and has its own refs, index, stash, reflogs, configuration and no
    hooks, so a test that runs git (tags, branches, stash, notes, config) changes only it. Its
    remote is removed, so nothing can be pushed back; the tags stay, for version tools
    (`git describe`, setuptools-scm). The user's checkout settings and $GIT_DIR/info/attributes
    are copied (see `_CHECKOUT_SETTINGS`).
    """
    source = common_dir(repo)
    run(path, "clone", "--quiet", "--shared", "--no-checkout", "--template=", "--",
        os.fspath(source), os.fspath(path), extra=confined(path))  # fmt: skip
    fetched = annex(repo)
    if fetched is not None:  # a partial clone's blobs that our commands fetched: borrowed too
        with (path / ".git" / "objects" / "info" / "alternates").open("a") as alternates:
            alternates.write(f"{fetched}\n")
    _settle(path, checkout_setup(repo), sha)


@dataclass(frozen=True)
class CheckoutSetup:
    """What decides how a checkout writes files, taken from the user's repository to a clone
    elsewhere: the settings of `_CHECKOUT_SETTINGS`, and $GIT_DIR/info/attributes."""

    settings: tuple[tuple[str, str], ...]
    attributes: bytes | None


def checkout_setup(repo: Repo) -> CheckoutSetup:
    attributes = common_dir(repo) / "info" / "attributes"
    return CheckoutSetup(
        tuple(_checkout_settings(repo)), attributes.read_bytes() if attributes.is_file() else None
    )


def bundle(worktree: Path, dest: Path) -> None:
    """A git bundle at `dest` of the commit checked out in `worktree` (GOOD) and its history,
    with the tags on that history (for version tools: `git describe`): what a clone elsewhere
    needs to check it out (`clone_elsewhere`), and nothing else of the user's repository (no
    tag of a commit GOOD does not contain, which may hold what the workers should not see)."""
    tags = _in_tree(worktree, "for-each-ref", "--merged=HEAD", "--format=%(refname)", "refs/tags")
    wanted = b"HEAD\n" + b"".join(line + b"\n" for line in tags.splitlines() if line)
    _in_tree(worktree, "bundle", "create", "--quiet", os.fspath(dest), "--stdin", stdin=wanted)


def clone_elsewhere(source: str, path: Path, setup: CheckoutSetup, sha: str) -> None:
    """A repository of its own at the empty directory `path`, cloned from `source` (a bundle,
    or a URL), with `sha` checked out, detached, as `clone_scratch` makes one (its remote
    removed, the checkout settings of `setup`)."""
    run(path, "clone", "--quiet", "--no-checkout", "--template=", "--", source, os.fspath(path),
        extra=confined(path))  # fmt: skip
    _settle(path, setup, sha)


def _settle(path: Path, setup: CheckoutSetup, sha: str) -> None:
    _in_tree(path, "remote", "remove", "origin")
    for name, value in setup.settings:
        _in_tree(path, "config", "--add", name, value)
    if setup.attributes is not None:
        (path / ".git" / "info").mkdir(exist_ok=True)
        (path / ".git" / "info" / "attributes").write_bytes(setup.attributes)
    # Not `checkout --detach`: from the clone's unborn HEAD it exits 0 when it cannot write a
    # file whose object is missing (a partial clone's blob that was never fetched), and leaves
    # an incomplete tree that every test would then run in. read-tree fails on it.
    # Paths that NTFS or HFS+ would read as .git are refused on every system, as diff/safety.py
    # refuses them in the diff: GOOD's unchanged paths are checked by this checkout alone.
    for protection in _PROTECTIONS:
        _in_tree(path, "config", protection, "true")
    _in_tree(path, "update-ref", "--no-deref", "HEAD", sha)
    _in_tree(path, "read-tree", "-u", "--reset", sha)


_PROTECTIONS = ("core.protectNTFS", "core.protectHFS")


def _in_tree(
    worktree: Path, *args: str, stdin: bytes = b"", extra: Mapping[str, str] | None = None
) -> bytes:
    """A command about the scratch repository at `worktree`, run there, that names its git
    directory and work tree: git discovers nothing. When a test has deleted the tree's .git,
    the command fails, rather than reach a repository further up (the user's, when the
    temporary directory lies in their checkout, as CI's `TMPDIR=$WORKSPACE/tmp` puts it)."""
    where = (f"--git-dir={worktree / '.git'}", f"--work-tree={worktree}")
    return run(worktree, *where, *args, stdin=stdin, extra=extra)


def confined(worktree: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variable that keeps git's discovery from `worktree` or below inside it: git looks
    for a repository in no directory above it (`GIT_CEILING_DIRECTORIES` lists them all: from
    one of them, git looks there only), so a command that finds no .git in the tree fails
    instead of reaching the user's repository, also after a `cd ..`. For the commands started
    there that do not name the repository: a clone into it, and the user's build and test
    (whose own ceilings, in `base`, still count after ours). A directory whose path holds the
    separator ':' cannot be listed; ddchange's scratch trees lie below the temporary one."""
    ceilings = [os.fspath(parent) for parent in worktree.parents if parent != parent.parent]
    if base is not None and base.get("GIT_CEILING_DIRECTORIES"):
        ceilings.append(base["GIT_CEILING_DIRECTORIES"])
    return {"GIT_CEILING_DIRECTORIES": os.pathsep.join(ceilings)}


def _checkout_settings(repo: Repo) -> list[tuple[str, str]]:
    try:
        out = in_repo(repo, "config", "--local", "-z", "--get-regexp", _CHECKOUT_SETTINGS)
    except errors.GitFailed as failure:
        if failure.returncode == 1:  # none set
            return []
        raise
    # -z: each entry is "name" LF "value" NUL.
    pairs = (entry.partition("\n") for entry in nul_split(out))
    return [(name, value) for name, _, value in pairs]


def borrowed_objects(path: Path) -> Path | None:
    """The object directory the scratch repository at `path` borrows from (the user's), read
    from its alternates file; None if it has none (or no git directory any more)."""
    try:
        text = (path / ".git" / "objects" / "info" / "alternates").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    first = text.splitlines()[0] if text.strip() else ""
    return Path(first).resolve() if first else None


def prefix(path: Path) -> str:
    """Where `path` lies inside its work tree ("sub/dir/"); "" at the top, in .git, or bare."""
    return os.fsdecode(run(path, "rev-parse", "--show-prefix").strip())


def common_dir(repo: Repo) -> Path:
    """The git directory shared by all work trees (`.git` of the main one, or the bare repo)."""
    return Path(repo.common_dir).resolve()


def modified_files(worktree: Path, among: Iterable[str] | None = None) -> list[str]:
    """Tracked files in `worktree` whose content, mode or existence differ from its index;
    only `among` these paths when given (taken literally, no pattern)."""
    # Porcelain `diff`, not `diff-files`: it refreshes stat data first, so a file a build merely
    # touched is not reported. Submodule directories are never ours to report.
    limit = [] if among is None else ["--", *among]
    if among is not None and len(limit) == 1:
        return []
    out = _in_tree(worktree, "--literal-pathspecs", "diff", "--name-only", "-z",
              "--ignore-submodules=all", *limit)  # fmt: skip
    return nul_split(out)


def tracked_files(worktree: Path) -> set[str]:
    """Every file and symlink in the index of `worktree` (no submodules)."""
    out = _in_tree(worktree, "ls-files", "-z", "--stage")
    records = (record.split("\t", 1) for record in nul_split(out))
    return {path for meta, path in records if not meta.startswith("160000 ")}


def repository_state(worktree: Path) -> tuple[bytes, tuple[int, int, int, int] | None]:
    """What tells whether anything moved HEAD or wrote the index of the scratch repository at
    `worktree` since it was last asked: HEAD's bytes, and the index file's inode, size and
    times (git writes a new index beside the old one and renames it over; None: there is no
    index). OSError when the tree's .git is gone."""
    git_dir = worktree / ".git"
    head = (git_dir / "HEAD").read_bytes()
    try:
        index = (git_dir / "index").stat()
    except FileNotFoundError:
        return head, None
    return head, (index.st_ino, index.st_size, index.st_mtime_ns, index.st_ctime_ns)


def reset_to(worktree: Path, sha: str) -> None:
    """HEAD detached at `sha` and the index `sha`'s tree again in `worktree`, whatever a test
    did to them (a commit, a branch checked out, `git add`, a conflict left in the index). The
    files are not touched: the index keeps the stat data of each entry whose blob is still
    `sha`'s (`read-tree --reset`), so git then compares with GOOD only what the test changed."""
    _in_tree(worktree, "update-ref", "--no-deref", "-m", "ddchange: back to GOOD", "HEAD", sha)
    _in_tree(worktree, "read-tree", "--reset", sha)


def remove_untracked(worktree: Path) -> None:
    """Delete every untracked and ignored file in `worktree` (build output included)."""
    _in_tree(worktree, "clean", "-fdxq")


def restore_files(worktree: Path, paths: Iterable[str]) -> None:
    """Rewrite `paths` in `worktree` from its index (recreating deleted ones)."""
    _in_tree(worktree, "checkout-index", "-f", "-u", "-z", "--stdin", stdin=nul_joined(paths))


# gitattributes(5): what can make a checkout write other bytes than the blob holds. Line-end
# conversion (text, eol, the older crlf), smudge filters (git-lfs puts a pointer in the blob and
# the real content in the work tree), $Id$ expansion, and a re-encoding.
_CONVERSION_ATTRIBUTES = ("filter", "ident", "working-tree-encoding", "eol", "crlf", "text")


def converted_paths(worktree: Path, paths: Iterable[str]) -> set[str]:
    """Those of `paths` that a checkout in `worktree` may write differently from their blob,
    by the attributes in force there now (its .gitattributes files, $GIT_DIR/info/attributes,
    core.attributesFile) and core.autocrlf / core.eol. A superset: git decides the details."""
    out = _in_tree(
        worktree,
        *("check-attr", "-z", "--stdin", *_CONVERSION_ATTRIBUTES),
        stdin=nul_joined(paths),
    )
    fields = nul_split(out)  # path, attribute, value; path, attribute, value; ...
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
    out = _in_tree(cwd, "config", "--default", "", "--get", name)
    return out.decode("utf-8", "replace").strip()


def checkout_forms(
    worktree: Path, contents: Mapping[str, Sequence[bytes | memoryview]]
) -> dict[str, bytes]:
    """What a checkout in `worktree` writes at each path for the given blob contents (each as
    consecutive pieces): git's own line-end conversion, smudge filters and encodings, by
    `checkout-index` into a scratch directory.

    The contents become blobs in a throwaway object directory and index, with the repository's
    objects only as an alternate (see `tree_patch`): nothing is added to the repository. Not
    `cat-file --batch --filters`: git 2.39 announces the blob's size, not the converted one.
    """
    objects = _objects_dir(worktree)
    import tempfile  # not loaded for the commands that need no scratch tree (`log`)

    with tempfile.TemporaryDirectory(prefix="ddchange-convert-") as tmp:
        env = _throwaway_index_env(Path(tmp), objects)
        sources = []
        for number, pieces in enumerate(contents.values()):
            source = Path(tmp, f"{number}.blob")
            with source.open("wb") as file:
                file.writelines(pieces)
            sources.append(os.fsencode(source) + b"\n")
        hashed = _in_tree(
            worktree, "hash-object", "-w", "--no-filters", "--stdin-paths",
            stdin=b"".join(sources), extra=env,
        )  # fmt: skip
        entries = b"".join(
            f"100644 {name}\t".encode("ascii") + os.fsencode(path) + b"\0"
            for name, path in zip(hashed.decode("ascii").split(), contents, strict=True)
        )
        _in_tree(worktree, "update-index", "-z", "--index-info", stdin=entries, extra=env)
        # The throwaway index holds no .gitattributes, so git takes them from the work tree.
        out = Path(tmp, "out")
        _in_tree(worktree, "checkout-index", "-a", "-f", f"--prefix={out}/", extra=env)
        return {path: (out / path).read_bytes() for path in contents}


def tree_patch(
    worktree: Path, base_sha: str, present: Iterable[str], absent: Iterable[str]
) -> bytes:
    """A binary patch that `git apply` turns a checkout of `base_sha` into the files now at
    `present` in `worktree`, without the files at `absent` (added, deleted, renamed, binary,
    mode and symlink changes). The caller tells which is which: a path beyond a symlinked
    directory is absent, though the file system finds a file there.

    Computed in a throwaway index and object directory: the repository's own object store only
    serves as an alternate, so blobs of new contents land in the temporary directory, and
    neither the repository's objects nor any index are modified.
    """
    objects = _objects_dir(worktree)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ddchange-index-") as tmp:
        env = _throwaway_index_env(Path(tmp), objects)
        _read_tree(worktree, base_sha, env)
        _update_index(worktree, present, absent, env)
        return _diff_cached(worktree, base_sha, env)


def _objects_dir(cwd: Path) -> Path:
    # A linked work tree shares the main repository's objects; --git-path knows where they are.
    out = _in_tree(cwd, "rev-parse", "--git-path", "objects")
    return cwd / os.fsdecode(out.rstrip(b"\n"))


def _throwaway_index_env(tmp: Path, objects: Path) -> dict[str, str]:
    (tmp / "objects").mkdir()
    return {
        "GIT_INDEX_FILE": os.fspath(tmp / "index"),
        **throwaway_objects(tmp / "objects", objects),
    }


def _read_tree(cwd: Path, sha: str, env: Mapping[str, str]) -> None:
    _in_tree(cwd, "read-tree", sha, extra=env)


def _update_index(
    cwd: Path, present: Iterable[str], absent: Iterable[str], env: Mapping[str, str]
) -> None:
    # update-index rather than `add -A -- paths`: it takes NUL-separated names on stdin (no
    # pathspec magic, no command-line limit) and adds files that .gitignore matches. A name
    # with no file (or a directory) behind it is force-removed: plain --remove refuses a name
    # that is now a directory ("add individual files instead").
    removal = nul_joined(absent)
    _in_tree(cwd, "update-index", "--force-remove", "-z", "--stdin", stdin=removal, extra=env)
    addition = nul_joined(present)
    # --replace lets a file take the place of a directory's entries in the index.
    _in_tree(cwd, "update-index", "--add", "--replace", "-z", "--stdin", stdin=addition, extra=env)


def _diff_cached(cwd: Path, sha: str, env: Mapping[str, str]) -> bytes:
    # --binary makes binary changes appliable (and implies full object names in index lines).
    return _in_tree(cwd, "diff", "--cached", "--binary", *DIFF_PINS, sha, "--", extra=env)


def patched_files(
    worktree: Path, base_sha: str, patch: bytes, paths: Iterable[str]
) -> tuple[dict[str, tuple[int, bytes] | None], bool] | None:
    """What each of `paths` holds (its git mode and bytes; None: no such file) once `patch`
    (as `tree_patch` writes it) is applied on the tree of `base_sha`, and whether its context
    lines matched there: where they do not, it is applied without them (`git apply -C0`: the
    lines it removes must still be there). None when it does not apply even so. As in
    `tree_patch`, in a throwaway index and object directory: nothing of the repository's is
    modified."""
    objects = _objects_dir(worktree)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ddchange-index-") as tmp:
        env = _throwaway_index_env(Path(tmp), objects)
        _read_tree(worktree, base_sha, env)
        exact = True
        for context in ((), ("-C0",)):
            try:
                _in_tree(worktree, "apply", "--cached", *context, "-", stdin=patch, extra=env)
                break
            except errors.GitFailed:
                exact = False
        else:
            return None
        entries: dict[str, tuple[int, str]] = {}
        for entry in nul_split(_in_tree(worktree, "ls-files", "-s", "-z", extra=env)):
            meta, _, path = entry.partition("\t")
            mode, sha, _stage = meta.split()
            entries[path] = (int(mode, 8), sha)
        files = {
            path: (
                entries[path][0],
                _in_tree(worktree, "cat-file", "blob", entries[path][1], extra=env),
            )
            if path in entries
            else None
            for path in paths
        }
        return files, exact
