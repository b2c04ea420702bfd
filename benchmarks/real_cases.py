"""The cases of benchmarks/real.py and what they run on: commands, sdists, repository, venv.

Owns running a command with a clean environment (`run`, `git`: in its own process group, killed
as a whole at its timeout), `Broken` (a case that cannot run, with the reason the table shows)
and `Skipped` (a history case whose mirror is not here), loading a case from its `case.toml`,
the pinned sdists (downloaded with pip into ~/.cache/ddchange-bench and checked against their
sha256), the repository whose commits `good` and `bad` hold them (pinned identities and dates:
the same SHAs every time) or, for a history case, the clone of its project's mirror with `good`
and `bad` tagged at the pinned SHAs, and the per-case venv whose python runs the check.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CACHE = Path.home() / ".cache" / "ddchange-bench"
MIRRORS = Path("/work/.mirror")  # where history cases' projects are mirrored (--mirrors)
GIT_TIMEOUT = 300.0
PIP_TIMEOUT = 900.0
AUTHOR = ("ddchange bench", "bench@example.org")
DATES = {"good": "2000-01-01T00:00:00+0000", "bad": "2000-01-02T00:00:00+0000"}


class Broken(Exception):
    """A case that cannot be run; its message goes into the table."""


class Skipped(Broken):
    """A history case whose project has no mirror here (or one without its commits): not run,
    and the table says why in one line."""


# -- running things -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Ran:
    code: int | None  # None: killed at the timeout
    output: str


def run(
    argv: Sequence[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    stdin: bytes = b"",
) -> Ran:
    """`argv` in its own process group, killed as a whole at `timeout`; output is stdout+stderr."""
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as error:
        return Ran(127, f"cannot run {argv[0]}: {error}")
    with proc:
        try:
            out, _ = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            return Ran(None, out.decode(errors="replace"))
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    return Ran(proc.returncode, out.decode(errors="replace"))


def clean_env(path_first: Path | None = None) -> dict[str, str]:
    """The environment without inherited git or Python redirections, git pinned and cut off from
    the user's and the system's configuration, no .pyc files (a file rewritten within the same
    second at the same size would otherwise be read from a stale one), `path_first` on PATH."""
    drop = ("GIT_", "PYTHON", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME=AUTHOR[0],
        GIT_AUTHOR_EMAIL=AUTHOR[1],
        GIT_COMMITTER_NAME=AUTHOR[0],
        GIT_COMMITTER_EMAIL=AUTHOR[1],
        PYTHONDONTWRITEBYTECODE="1",
    )
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH', os.defpath)}"
    return env


def git(repo: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> str:
    """A git command that must succeed (else Broken, with what git said)."""
    done = run(["git", *args], repo, env or clean_env(), GIT_TIMEOUT, stdin)
    if done.code != 0:
        raise Broken(f"git {args[0]} failed: {done.output.strip()[-300:]}")
    return done.output


def git_bytes(repo: Path, *args: str) -> bytes:
    """A git command's stdout as bytes (diffs: file contents need not be UTF-8)."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=repo, env=clean_env(), capture_output=True, timeout=GIT_TIMEOUT
        )
    except subprocess.TimeoutExpired as error:
        raise Broken(f"git {args[0]} timed out") from error
    if done.returncode != 0:
        raise Broken(f"git {args[0]} failed: {done.stderr.decode(errors='replace')[-300:]}")
    return done.stdout


# -- cases --------------------------------------------------------------------------------------


# A culprit line: its text in each form the case accepts, any one of them: as the release has
# it, and where a commit that first wrote it worded it otherwise, as that commit did (a search
# inside the first bad commit finds it so, against that commit's parent).
Culprit = tuple[str, ...]


def _culprit(entry: object) -> Culprit:
    """A culprit line of case.toml: a string, or a list of the forms it may take."""
    forms = entry if isinstance(entry, list | tuple) else [entry]
    return tuple(str(form).strip() for form in forms)


@dataclass(frozen=True)
class Case:
    """A case: two sdists of `package` (versions `good` and `bad`, pinned by sha256), or, when
    `repository` is set, a range of that GitHub project's history (`good` and `bad` are full
    commit SHAs, which stand for the release tags `good_tag` and `bad_tag`)."""

    name: str
    directory: Path
    package: str
    good: str
    bad: str
    good_sha256: str = ""
    bad_sha256: str = ""
    repository: str = ""  # owner/name: a history case, cloned from a local mirror
    good_tag: str = ""
    bad_tag: str = ""
    check_file: str = "check.py"  # relative to the case's directory
    source: str = ""
    requires: tuple[str, ...] = ()
    build: str = ""
    culprit_files: tuple[str, ...] = ()
    culprit_lines: tuple[Culprit, ...] = ()
    results: str = ""  # `--results` for ddchange when the check writes per-test results
    tests: dict[str, tuple[Culprit, ...]] = field(default_factory=dict)  # test id: its culprits

    @property
    def check(self) -> Path:
        return (self.directory / self.check_file).resolve()

    @property
    def title(self) -> str:
        if self.repository:
            return f"{self.repository} {self.good_tag}→{self.bad_tag}"
        return f"{self.package} {self.good}→{self.bad}"


def load_case(directory: Path) -> Case:
    """The case in `directory` (Broken if its case.toml or check.py is missing or malformed).

    A case whose check writes per-test results says how ddchange reads them (`results =
    "junit:report.xml"`) and names each test's culprit lines (`[tests]`, `"case.name" =
    [lines]`); its `culprit_lines` are then all of those, unless given. A culprit line given as
    a list is held by a patch that adds or removes any one of its forms (`Culprit`).

    A history case names its project (`repository = "owner/name"`), GOOD and BAD as full commit
    SHAs with the tags they stand for (`good_tag`, `bad_tag`), and its check (`check`, a path
    relative to the case's directory: the check of a two-sdist case serves as it is)."""
    try:
        data: dict[str, Any] = tomllib.loads((directory / "case.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise Broken(f"case.toml: {error}") from error
    check_file = str(data.get("check", "check.py"))
    if not (directory / check_file).is_file():
        raise Broken(f"no {check_file}")
    history = {
        "repository": str(data.get("repository", "")),
        "good_tag": str(data.get("good_tag", "")),
        "bad_tag": str(data.get("bad_tag", "")),
    }
    if history["repository"] and not all(
        re.fullmatch(r"[0-9a-f]{40}", str(data.get(end, ""))) for end in ("good", "bad")
    ):
        raise Broken("a history case's good and bad must be full commit SHAs")
    tests = {
        str(name): tuple(_culprit(line) for line in lines)
        for name, lines in data.get("tests", {}).items()
    }
    if bool(tests) != bool(data.get("results")):
        raise Broken("case.toml has `results` without `tests`, or `tests` without `results`")
    every = [line for lines in tests.values() for line in lines]
    try:
        # The sdists' pins; a history case's commits are pinned by their SHAs.
        sha256 = (
            {}
            if history["repository"]
            else {
                "good_sha256": str(data["good_sha256"]).lower(),
                "bad_sha256": str(data["bad_sha256"]).lower(),
            }
        )
        return Case(
            name=directory.name,
            directory=directory.resolve(),
            package=str(data["package"]),
            good=str(data["good"]),
            bad=str(data["bad"]),
            **sha256,
            **history,
            check_file=check_file,
            source=str(data.get("source", "")),
            requires=tuple(str(r) for r in data.get("requires", ())),
            build=str(data.get("build", "")),
            culprit_files=tuple(str(f) for f in data.get("culprit_files", ())),
            culprit_lines=tuple(_culprit(line) for line in data.get("culprit_lines", every)),
            results=str(data.get("results", "")),
            tests=tests,
        )
    except KeyError as error:
        raise Broken(f"case.toml has no {error.args[0]!r}") from error


# -- sdists, the repository, the venv -----------------------------------------------------------


def sdist(package: str, version: str, sha256: str) -> Path:
    """The sdist of `package==version`, from the cache or downloaded into it, sha256 checked."""
    slot = CACHE / "sdists" / f"{package}-{version}"
    found = sorted(slot.glob("*")) if slot.is_dir() else []
    if len(found) != 1:
        shutil.rmtree(slot, ignore_errors=True)
        slot.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=slot.parent, prefix=".download-") as tmp:
            argv = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
            argv += ["--disable-pip-version-check", "-q", "-d", tmp, f"{package}=={version}"]
            done = run(argv, Path(tmp), clean_env(), PIP_TIMEOUT)
            files = sorted(Path(tmp).glob("*"))
            if done.code != 0 or len(files) != 1:
                raise Broken(f"pip download {package}=={version}: {done.output.strip()[-300:]}")
            slot.mkdir()
            files[0].rename(slot / files[0].name)
        found = sorted(slot.glob("*"))
    digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
    if digest != sha256:
        raise Broken(f"sha256 of {found[0].name} is {digest}, the case pins {sha256}")
    return found[0]


def unpack(archive: Path, dest: Path) -> None:
    """Extract a .tar.* or .zip sdist into `dest`, without its single top directory."""
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".unpack-") as tmp:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zipped:
                zipped.extractall(tmp)
        else:
            try:
                with tarfile.open(archive) as tar:
                    tar.extractall(tmp, filter="data")
            except tarfile.TarError as error:
                raise Broken(f"cannot unpack {archive.name}: {error}") from error
        top = list(Path(tmp).iterdir())
        root = top[0] if len(top) == 1 and top[0].is_dir() else Path(tmp)
        root.rename(dest)


def commit_tree(repo: Path, tree: Path, tag: str, message: str) -> None:
    """Make the work tree of `repo` exactly `tree` (removed files removed), commit it, tag it."""
    for entry in repo.iterdir():
        if entry.name == ".git":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    shutil.copytree(tree, repo, symlinks=True, dirs_exist_ok=True)
    env = clean_env() | {"GIT_AUTHOR_DATE": DATES[tag], "GIT_COMMITTER_DATE": DATES[tag]}
    git(repo, "add", "--all", "--force", ".", env=env)
    git(repo, "commit", "-q", "--allow-empty", "--no-verify", "-m", message, env=env)
    git(repo, "tag", tag, env=env)


def mirror(mirrors: Path, repository: str) -> Path:
    """The git directory of `repository`'s mirror: `mirrors/owner+name`, or a git directory
    inside it (Skipped when there is none)."""
    top = mirrors / repository.replace("/", "+")
    if not top.is_dir():
        raise Skipped(f"no mirror of {repository} in {mirrors} (no {top.name}/)")
    for candidate in (top, top / ".git", *sorted(top.iterdir())):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    raise Skipped(f"{top} holds no git directory")


def clone_history(case: Case, work: Path, mirrors: Path) -> Path:
    """work/repo: a clone of the case's mirror, with tags `good` and `bad` at its GOOD and BAD
    commits (Skipped when the mirror lacks them)."""
    source = mirror(mirrors, case.repository)
    for end, sha in (("GOOD", case.good), ("BAD", case.bad)):
        found = run(["git", f"--git-dir={source}", "cat-file", "-e", f"{sha}^{{commit}}"],
                    work, clean_env(), GIT_TIMEOUT)  # fmt: skip
        if found.code != 0:
            raise Skipped(f"the mirror {source} has no commit {sha[:12]} ({end})")
    repo = work / "repo"
    git(work, "clone", "-q", "--no-checkout", str(source), str(repo))
    git(repo, "tag", "good", case.good)
    git(repo, "tag", "bad", case.bad)
    git(repo, "checkout", "-q", "--detach", "bad")
    return repo


def make_repo(case: Case, work: Path, mirrors: Path = MIRRORS) -> Path:
    """work/repo: commit `good` holds GOOD's sdist, commit `bad` BAD's (same SHAs every time);
    for a history case, the clone of its mirror (`clone_history`)."""
    if case.repository:
        return clone_history(case, work, mirrors)
    trees = {}
    for tag, version, sha in (
        ("good", case.good, case.good_sha256),
        ("bad", case.bad, case.bad_sha256),
    ):
        trees[tag] = work / f"sdist-{tag}"
        unpack(sdist(case.package, version, sha), trees[tag])
    repo = work / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_tree(repo, trees["good"], "good", f"{case.package} {case.good}")
    commit_tree(repo, trees["bad"], "bad", f"{case.package} {case.bad}")
    return repo


def venv(case: Case) -> Path:
    """~/.cache/ddchange-bench/venvs/<case>, with the case's requirements (reused while they stay
    the same); its bin directory."""
    home = CACHE / "venvs" / case.name
    wanted = list(case.requires) + (["setuptools", "wheel"] if case.build else [])
    stamp = json.dumps({"python": sys.version, "requires": wanted})
    marker = home / "ddchange-bench.json"
    if marker.is_file() and marker.read_text() == stamp and (home / "bin" / "python").exists():
        return home / "bin"
    shutil.rmtree(home, ignore_errors=True)
    home.parent.mkdir(parents=True, exist_ok=True)
    made = run([sys.executable, "-m", "venv", str(home)], home.parent, clean_env(), PIP_TIMEOUT)
    if made.code != 0:
        raise Broken(f"venv: {made.output.strip()[-300:]}")
    if wanted:
        pip = [str(home / "bin" / "python"), "-m", "pip", "install", "-q"]
        done = run([*pip, "--disable-pip-version-check", *wanted], home, clean_env(), PIP_TIMEOUT)
        if done.code != 0:
            raise Broken(f"pip install {' '.join(wanted)}: {done.output.strip()[-300:]}")
    marker.write_text(stamp)
    return home / "bin"
