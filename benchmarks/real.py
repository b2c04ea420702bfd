"""Real regressions in released PyPI packages: ddchange against textbook ddmin and `git bisect`.

    .venv/bin/python benchmarks/real.py                        # every case in benchmarks/real/
    .venv/bin/python benchmarks/real.py --cases sqlparse-in --modes default,textbook

Owns the cases' runs and their section of benchmarks/RESULTS.md. Each case is a directory
`benchmarks/real/<case>/` with a `case.toml` (the package, its GOOD and BAD versions with the
sha256 of each sdist, where the regression is documented, extra PyPI requirements, an optional
build command, and the files and lines of the true cause) and a `check.py` that exits 0 on a
good tree, 1 on the regression, 125 when it cannot tell (run with the tree as working directory).

For each case: both sdists are downloaded (`pip download --no-binary :all:`, cached and checked
against their sha256) and committed as two commits, `good` and `bad`, of a fresh repository with
pinned identities and dates; the check runs with a per-case venv's python. Then, each in its own
way: ddchange (default, `--isolate`, `--no-dependencies`; `ddchange reset` before each, so that
no journal is shared), textbook ddmin over the hunks of `git diff good bad` (Zeller and
Hildebrandt, TSE 2002: subsets, then complements, else twice as many parts; an exact cache and
nothing else: no monotony, no dependencies; every test resets a clone, applies the hunks with
`git apply`, builds and checks), and `git bisect run`. Every answer is judged without ddchange,
with git and the check alone, in a separate clone: the answer patch applied on `good` must make
the check exit 1, and at line level it must be 1-minimal: each hunk of its `git diff -U0` is
left out in turn, and the check must then stop failing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import results

HEADING = "## Real regressions (`benchmarks/real.py`)"
HERE = Path(__file__).resolve().parent
CASES = HERE / "real"
CACHE = Path.home() / ".cache" / "ddchange-bench"
DDCHANGE = Path(sys.executable).with_name("ddchange")
MODES = ("default", "isolate", "no-dependencies", "textbook", "bisect")
FLAGS = {"default": (), "isolate": ("--isolate",), "no-dependencies": ("--no-dependencies",)}
PASS, FAIL, UNRESOLVED = "pass", "fail", "unresolved"
GIT_TIMEOUT = 300.0
PIP_TIMEOUT = 900.0
SEARCH_TIMEOUT = 4 * 3600.0  # one whole ddchange or git bisect run
JUDGE_LIMIT = 300  # answers with more -U0 hunks are not checked hunk by hunk
AUTHOR = ("ddchange bench", "bench@example.org")
DATES = {"good": "2000-01-01T00:00:00+0000", "bad": "2000-01-02T00:00:00+0000"}


class Broken(Exception):
    """A case that cannot be run; its message goes into the table."""


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


@dataclass(frozen=True)
class Case:
    name: str
    directory: Path
    package: str
    good: str
    bad: str
    good_sha256: str
    bad_sha256: str
    source: str
    requires: tuple[str, ...]
    build: str
    culprit_files: tuple[str, ...]
    culprit_lines: tuple[str, ...]

    @property
    def check(self) -> Path:
        return self.directory / "check.py"

    @property
    def title(self) -> str:
        return f"{self.package} {self.good}→{self.bad}"


def load_case(directory: Path) -> Case:
    """The case in `directory` (Broken if its case.toml or check.py is missing or malformed)."""
    try:
        data: dict[str, Any] = tomllib.loads((directory / "case.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise Broken(f"case.toml: {error}") from error
    if not (directory / "check.py").is_file():
        raise Broken("no check.py")
    try:
        return Case(
            name=directory.name,
            directory=directory.resolve(),
            package=str(data["package"]),
            good=str(data["good"]),
            bad=str(data["bad"]),
            good_sha256=str(data["good_sha256"]).lower(),
            bad_sha256=str(data["bad_sha256"]).lower(),
            source=str(data.get("source", "")),
            requires=tuple(str(r) for r in data.get("requires", ())),
            build=str(data.get("build", "")),
            culprit_files=tuple(str(f) for f in data.get("culprit_files", ())),
            culprit_lines=tuple(str(line).strip() for line in data.get("culprit_lines", ())),
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


def make_repo(case: Case, work: Path) -> Path:
    """work/repo: commit `good` holds GOOD's sdist, commit `bad` BAD's (same SHAs every time)."""
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


# -- diffs as items: hunks, or whole files --------------------------------------------------------

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_WHOLE = re.compile(
    rb"^(new file mode|deleted file mode|old mode|rename from|copy from|GIT binary patch|"
    rb"Binary files) ",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Item:
    """One change of a diff: a hunk of a file (`hunk` set), or a whole file's patch."""

    order: int  # its place in the diff
    file: int  # the index of its file in the diff
    path: str
    header: bytes  # the file's header (`diff --git` up to the first @@); all of it when whole
    hunk: bytes = b""


def _path(header: bytes) -> str:
    for prefix in (b"+++ b/", b"--- a/"):
        for line in header.split(b"\n"):
            if line.startswith(prefix):
                return line[len(prefix) :].decode(errors="replace").rstrip("\t")
    first = header.split(b"\n", 1)[0].decode(errors="replace")
    return first.rsplit(" b/", 1)[-1]


def split_items(diff: bytes) -> list[Item]:
    """The items of a `git diff`: each hunk of a modified file; an added, deleted, renamed,
    copied or binary file, or one whose mode changed, as one item with all of its patch."""
    items: list[Item] = []
    chunks = [c for c in re.split(rb"(?m)^(?=diff --git )", diff) if c.startswith(b"diff --git ")]
    for index, chunk in enumerate(chunks):
        starts = [m.start() for m in re.finditer(rb"(?m)^@@ ", chunk)]
        header = chunk[: starts[0]] if starts else chunk
        if not starts or _WHOLE.search(header):
            items.append(Item(len(items), index, _path(header), chunk))
            continue
        ends = [*starts[1:], len(chunk)]
        items += [
            Item(len(items) + k, index, _path(header), header, chunk[s:e])
            for k, (s, e) in enumerate(zip(starts, ends, strict=True))
        ]
    return items


def _shifted(hunk: bytes, delta: int) -> bytes:
    """`hunk` with its new-side start recomputed for the hunks kept before it (`delta` lines
    added by them): git apply places a hunk by that number, which leaving hunks out changes."""
    match = _HUNK.match(hunk)
    if match is None:
        return hunk
    old = int(match[1])
    old_n = int(match[2]) if match[2] is not None else 1
    new_n = int(match[4]) if match[4] is not None else 1
    new = old + delta + (1 if old_n == 0 else 0) - (1 if new_n == 0 else 0)
    return b"@@ -%d,%d +%d,%d @@" % (old, old_n, new, new_n) + hunk[match.end() :]


def _counts(hunk: bytes) -> int:
    """The lines a hunk adds minus those it removes."""
    match = _HUNK.match(hunk)
    if match is None:
        return 0
    old_n = int(match[2]) if match[2] is not None else 1
    new_n = int(match[4]) if match[4] is not None else 1
    return new_n - old_n


def join_items(items: Iterable[Item]) -> bytes:
    """One patch of `items` (put in diff order): each file's header once, its hunks renumbered."""
    out, last, delta = [], -1, 0
    for item in sorted(items, key=lambda i: i.order):
        if not item.hunk:
            out.append(item.header)
            last = -1
            continue
        if item.file != last:
            out.append(item.header)
            last, delta = item.file, 0
        out.append(_shifted(item.hunk, delta))
        delta += _counts(item.hunk)
    return b"".join(out)


def changed_lines(patch: bytes) -> set[tuple[str, str]]:
    """(path, stripped text) of every added or removed line of `patch`."""
    lines = set()
    for item in split_items(patch):
        body = item.hunk or item.header
        start = 0 if body.startswith(b"@@ ") else body.find(b"\n@@ ")
        if start < 0:
            continue  # binary, or a mode change alone: no lines
        for line in body[start:].split(b"\n"):
            if line[:1] in (b"+", b"-"):
                lines.add((item.path, line[1:].decode(errors="replace").strip()))
    return lines


def holds_culprit(case: Case, patch: bytes) -> bool:
    """Whether every culprit line is added or removed by `patch` (in a culprit file, if any)."""
    lines = changed_lines(patch)
    files = set(case.culprit_files)
    return bool(case.culprit_lines) and all(
        any(text == want and (not files or path in files) for path, text in lines)
        for want in case.culprit_lines
    )


# -- a clone to test in -------------------------------------------------------------------------


@dataclass
class Sandbox:
    """A clone of the case's repository where trees are tested with git, the build, the check."""

    case: Case
    root: Path
    bin: Path
    timeout: float
    env: dict[str, str] = field(init=False)
    said: str = ""  # the last line of the last check's (or failed build's) output

    def __post_init__(self) -> None:
        self.env = clean_env(self.bin)

    @classmethod
    def clone(cls, case: Case, repo: Path, dest: Path, bin: Path, timeout: float) -> Sandbox:
        git(repo.parent, "clone", "-q", "--no-checkout", str(repo), str(dest))
        return cls(case, dest, bin, timeout)

    def reset(self, rev: str = "good") -> None:
        git(self.root, "checkout", "-q", "-f", "--detach", rev)
        git(self.root, "clean", "-q", "-f", "-d", "-x")

    def apply(self, patch: bytes, *, zero: bool = False) -> bool:
        if not patch:
            return True
        argv = ["git", "apply", "--whitespace=nowarn", *(["--unidiff-zero"] if zero else []), "-"]
        return run(argv, self.root, self.env, GIT_TIMEOUT, patch).code == 0

    def test(self) -> str:
        """Build (if the case has a build) and check the tree as it is: PASS, FAIL, UNRESOLVED."""
        if self.case.build:
            built = run(["sh", "-c", self.case.build], self.root, self.env, self.timeout)
            if built.code != 0:
                self.said = f"build: {built.output.strip().rsplit(chr(10), 1)[-1][-200:]}"
                return UNRESOLVED
        python = str(self.bin / "python")
        done = run([python, str(self.case.check)], self.root, self.env, self.timeout)
        self.said = done.output.strip().rsplit("\n", 1)[-1][-200:]
        return {0: PASS, 1: FAIL}.get(done.code if done.code is not None else -1, UNRESOLVED)

    def outcome(self, patch: bytes, *, zero: bool = False) -> str | None:
        """GOOD plus `patch`, tested; None when the patch does not apply."""
        self.reset()
        return self.test() if self.apply(patch, zero=zero) else None


def precheck(box: Sandbox) -> None:
    """GOOD must pass and BAD must fail, else the case is broken."""
    for rev, want in (("good", PASS), ("bad", FAIL)):
        box.reset(rev)
        got = box.test()
        if got != want:
            said = f": {box.said}" if box.said else ""
            raise Broken(f"{rev} gives {got.upper()}, not {want.upper()}{said}")


# -- the independent judge ----------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    text: str
    right: bool = False
    culprit: bool | None = None  # None: no answer to look in


def judge(box: Sandbox, patch: bytes) -> Verdict:
    """Does GOOD plus `patch` fail, is it 1-minimal at line level, does it hold the culprit?"""
    culprit = holds_culprit(box.case, patch)
    box.reset()
    if not box.apply(patch):
        return Verdict("apply failed", culprit=culprit)
    git(box.root, "add", "--all", "--force", ".")
    git(box.root, "commit", "-q", "--allow-empty", "--no-verify", "-m", "answer")
    if box.test() != FAIL:
        return Verdict("does not reproduce", culprit=culprit)
    answer = git(box.root, "rev-parse", "HEAD").strip()
    items = split_items(git_bytes(box.root, "diff", "-U0", "--binary", "-M", "good", answer))
    if len(items) > JUDGE_LIMIT:
        return Verdict(f"reproduces; {len(items)} hunks, not checked one by one", culprit=culprit)
    removable = sum(
        box.outcome(join_items(items[:k] + items[k + 1 :]), zero=True) == FAIL
        for k in range(len(items))
    )
    if removable:
        return Verdict(f"reproduces, {removable} of {len(items)} removable", culprit=culprit)
    if not culprit:
        return Verdict("reproduces, 1-minimal, not the culprit lines", culprit=culprit)
    return Verdict("right", right=True, culprit=culprit)


# -- rows ---------------------------------------------------------------------------------------


@dataclass
class Row:
    case: str
    package: str
    hunks: str = "—"
    mode: str = "—"
    exit: str = "—"
    outcome: str = "—"
    answer: str = "—"
    tests: str = "—"
    wall: str = "—"
    verdict: str = "—"
    culprit: str = "—"
    size: int | None = None  # numbers behind the summary
    count: int | None = None
    right: bool = False
    over_budget: bool = False

    def cells(self) -> list[str]:
        return [
            self.case,
            self.package,
            self.hunks,
            self.mode,
            self.exit,
            self.outcome,
            self.answer,
            self.tests,
            self.wall,
            self.verdict,
            self.culprit,
        ]


COLUMNS = (
    "case",
    "package",
    "hunks",
    "mode",
    "exit",
    "outcome",
    "answer",
    "tests",
    "wall s",
    "verdict (independent)",
    "holds culprit",
)


def _yes(flag: bool | None) -> str:
    return "—" if flag is None else ("yes" if flag else "no")


def _judged(row: Row, verdict: Verdict) -> Row:
    row.verdict, row.right, row.culprit = verdict.text, verdict.right, _yes(verdict.culprit)
    return row


def ddchange(case: Case, repo: Path, box: Sandbox, mode: str, args: argparse.Namespace) -> Row:
    """One ddchange search of `repo` in `mode`, from a reset journal; its row, answer judged."""
    row = Row(case.name, case.title, mode=mode)
    out = repo.parent / "out"
    out.mkdir(exist_ok=True)
    patch, report = out / f"{mode}.patch", out / f"{mode}.json"
    patch.unlink(missing_ok=True)
    report.unlink(missing_ok=True)
    env = clean_env(box.bin)
    run([str(args.ddchange), "reset"], repo, env, GIT_TIMEOUT)
    argv = [str(args.ddchange), "good..bad", "--patch", str(patch), "--json", str(report)]
    argv += [*FLAGS[mode], "--timeout", f"{args.timeout:g}"]
    argv += ["--build", case.build] if case.build else []
    argv += ["--", str(box.bin / "python"), str(case.check)]
    started = time.monotonic()
    done = run(argv, repo, env, SEARCH_TIMEOUT)
    row.wall = f"{time.monotonic() - started:.1f}"
    (out / f"{mode}.log").write_text(done.output)
    row.exit = "timeout" if done.code is None else str(done.code)
    data = _read_json(report)
    row.outcome = str(data.get("outcome", "—"))
    log = data.get("log")
    if isinstance(data.get("tests_run"), int) and isinstance(log, list):
        # The search's own runs, comparable with textbook ddmin's (which has no pre-flight
        # and no confirmation).
        row.count = sum(
            r.get("phase") not in results.OUTSIDE_SEARCH for r in log if isinstance(r, dict)
        )
        row.tests = f"{data['tests_run']} ({row.count})"
    culprits, passing = data.get("culprits"), data.get("passing")
    if isinstance(culprits, list):
        row.size = len(culprits)
        total = data.get("hunks_total")
        row.answer = f"{row.size} of {total}" if isinstance(total, int) else str(row.size)
        if mode == "isolate" and isinstance(passing, list):
            row.answer += f" (+{len(passing)} passing)"
    if not patch.is_file():
        row.verdict = "no patch" if done.code is not None else "no patch (timed out)"
        return row
    return _judged(row, judge(box, patch.read_bytes()))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# -- textbook ddmin -----------------------------------------------------------------------------


class OutOfBudget(Exception):
    pass


def ddmin(size: int, test: Callable[[list[int]], str]) -> list[int]:
    """Zeller and Hildebrandt's ddmin (TSE 2002) over items 0..size-1, which must FAIL together:
    split into n parts; a failing part is the new set (n = 2), else a failing complement is
    (n = n - 1), else n doubles, until n is the number of items. Only an exact cache."""
    cache: dict[frozenset[int], str] = {}

    def outcome(config: list[int]) -> str:
        key = frozenset(config)
        if key not in cache:
            cache[key] = test(config)
        return cache[key]

    config = list(range(size))
    if outcome(config) != FAIL:
        raise ValueError("the whole set does not fail")
    n = 2
    while len(config) >= 2:
        parts = [config[k * len(config) // n : (k + 1) * len(config) // n] for k in range(n)]
        part = next((p for p in parts if outcome(p) == FAIL), None)
        if part is not None:
            config, n = part, 2
            continue
        complements = ([i for i in config if i not in set(p)] for p in parts)
        complement = next((c for c in complements if outcome(c) == FAIL), None)
        if complement is not None:
            config, n = complement, max(n - 1, 2)
            continue
        if n >= len(config):
            break
        n = min(2 * n, len(config))
    return config


def textbook(case: Case, items: list[Item], box: Sandbox, judge_box: Sandbox, budget: int) -> Row:
    """Textbook ddmin over the hunks of `git diff good bad`; every test resets, applies, builds
    and checks. Patches that do not apply are UNRESOLVED and not counted as tests."""
    row = Row(case.name, case.title, hunks=str(len(items)), mode="textbook")
    tests = failed_applies = 0

    def test(config: list[int]) -> str:
        nonlocal tests, failed_applies
        box.reset()
        if not box.apply(join_items(items[i] for i in config)):
            failed_applies += 1
            return UNRESOLVED
        if tests >= budget:
            raise OutOfBudget
        tests += 1
        return box.test()

    started = time.monotonic()
    answer: list[int] | None = None
    try:
        answer = ddmin(len(items), test)
    except OutOfBudget:
        row.outcome, row.over_budget = "budget ran out", True
    except ValueError:
        row.outcome = "all hunks applied do not fail"
    row.wall = f"{time.monotonic() - started:.1f}"
    row.count = tests
    row.tests = f"{tests}+" if row.over_budget else str(tests)
    if failed_applies:
        row.tests += f" (+{failed_applies} not applied)"
    if answer is None:
        return row
    row.outcome, row.size = "found", len(answer)
    row.answer = f"{len(answer)} of {len(items)}"
    return _judged(row, judge(judge_box, join_items(items[i] for i in answer)))


# -- git bisect run -----------------------------------------------------------------------------


def bisect(case: Case, box: Sandbox, timeout: float) -> Row:
    """`git bisect run` with the build and check; the check runs it took and what it named."""
    row = Row(case.name, case.title, mode="git bisect run")
    counter, script = box.root.parent / "bisect.count", box.root.parent / "bisect.sh"
    counter.unlink(missing_ok=True)
    check = shlex.join([str(box.bin / "python"), str(case.check)])
    build = f"{case.build} || exit 125" if case.build else "true"
    script.write_text(
        f"echo x >> {shlex.quote(str(counter))}\n{build}\n"
        f"timeout {timeout:g} {check}; rc=$?; [ $rc = 124 ] && exit 125; exit $rc\n"
    )
    box.reset("bad")
    git(box.root, "bisect", "start", "bad", "good")
    started = time.monotonic()
    done = run(["git", "bisect", "run", "sh", str(script)], box.root, box.env, SEARCH_TIMEOUT)
    row.wall = f"{time.monotonic() - started:.1f}"
    git(box.root, "bisect", "reset")
    row.exit = "timeout" if done.code is None else str(done.code)
    row.count = len(counter.read_text().splitlines()) if counter.exists() else 0
    row.tests = str(row.count)
    named = re.findall(r"^([0-9a-f]{40}) is the first bad commit", done.output, re.MULTILINE)
    bad = git(box.root, "rev-parse", "bad").strip()
    if named:
        row.outcome = f"names {named[-1][:7]}"
        row.answer = "1 commit"
        whole = "BAD, the whole change" if named[-1] == bad else "not BAD"
        row.verdict = f"{whole} (the only commit)"
    else:
        row.outcome = "names nothing"
    return row


# -- one case -----------------------------------------------------------------------------------


def run_case(case: Case, args: argparse.Namespace) -> list[Row]:
    """Every selected mode on `case`: its rows (one "broken" row when it cannot run)."""
    work = args.work / case.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    repo = make_repo(case, work)
    bin_dir = venv(case)
    judge_box = Sandbox.clone(case, repo, work / "judge", bin_dir, args.timeout)
    precheck(judge_box)
    items = split_items(git_bytes(repo, "diff", "--binary", "-M", "--no-color", "good", "bad"))
    rows = []
    for mode in args.modes:
        if mode in FLAGS:
            row = ddchange(case, repo, judge_box, mode, args)
        elif mode == "textbook":
            box = Sandbox.clone(case, repo, work / "textbook", bin_dir, args.timeout)
            row = textbook(case, items, box, judge_box, args.budget)
        else:
            box = Sandbox.clone(case, repo, work / "bisect", bin_dir, args.timeout)
            row = bisect(case, box, args.timeout)
        row.hunks = str(len(items))
        print(" | ".join(row.cells()), flush=True)
        rows.append(row)
    return rows


# -- the section --------------------------------------------------------------------------------


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r.cells()) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def summary(rows: list[Row]) -> list[str]:
    """Three targets, each over the cases where both sides ran."""
    by_case: dict[str, dict[str, Row]] = {}
    for row in rows:
        by_case.setdefault(row.case, {})[row.mode] = row
    default = [m for m in by_case.values() if "default" in m]
    right = sum(m["default"].right for m in default)
    lines = [f"- default answer right on {right} of {len(default)}"]
    sized = [m for m in default if "no-dependencies" in m and None not in _sizes(m)]
    smaller = sum(m["default"].size <= m["no-dependencies"].size for m in sized)  # type: ignore[operator]
    lines.append(f"- default answer ≤ --no-dependencies answer on {smaller} of {len(sized)}")
    both = [m for m in default if "textbook" in m and m["default"].count is not None]
    fewer = sum(_not_more(m["default"], m["textbook"]) for m in both)
    lines.append(f"- default tests ≤ textbook on {fewer} of {len(both)}")
    return lines


def _sizes(modes: dict[str, Row]) -> tuple[int | None, int | None]:
    return modes["default"].size, modes["no-dependencies"].size


def _not_more(default: Row, textbook_row: Row) -> bool:
    """default.count ≤ textbook's (a textbook run out of budget took more than it ran)."""
    if default.count is None or textbook_row.count is None:
        return False
    if textbook_row.over_budget:
        return default.count <= textbook_row.count
    return textbook_row.outcome == "found" and default.count <= textbook_row.count


def section(rows: list[Row], ran: list[str], seconds: float) -> str:
    git_version = run(["git", "--version"], HERE, clean_env(), GIT_TIMEOUT).output.split()[-1]
    command = shlex.join(["benchmarks/real.py", *sys.argv[1:]])
    cases = ", ".join(f"`{name}`" for name in ran) or "none"
    intro = (
        f"One run on {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores, git {git_version}: `.venv/bin/python "
        f"{command}`, {seconds / 60:.1f} minutes. Cases: {cases}. "
        "Each case is two released sdists committed as `good` and `bad`; `hunks` are the hunks "
        "of `git diff -M good bad` (a whole added, deleted, renamed or binary file is one). "
        "ddchange runs with `--timeout` and each case's build, from a reset journal; `answer` "
        "is its number of changes (for `--isolate` the difference, with its passing set), "
        "`tests` its `tests_run` (pre-flight and confirmation included) and, in brackets, "
        "the search's own runs, which the summary compares with textbook ddmin's. Textbook "
        "ddmin (TSE 2002; an exact cache only) counts the checks it ran; `N+`: the budget ran out. "
        "`git bisect run` counts check runs; with two commits it can only name BAD. The verdict "
        "is independent of ddchange, from git and the check alone in a separate clone: the "
        'answer patch applied on `good` must make the check exit 1 ("reproduces"), and '
        'leaving out any one hunk of its `git diff -U0` must make it stop failing ("k of n '
        'removable" otherwise; for `--isolate` the patch is the whole failing set, so removable '
        'hunks are expected). "right": reproduces, 1-minimal, and adds or removes every '
        'documented culprit line; "holds culprit" says whether it does that last. Checks run '
        "with `PYTHONDONTWRITEBYTECODE=1`."
    )
    return intro + "\n\n" + table(rows) + "\n" + "\n".join(summary(rows)) + "\n"


def write(path: Path, body: str, part: str | None) -> None:
    """Put the section into `path` (RESULTS.md by default), keeping every other section; a
    `part` (cases run apart, such as the slow C build) has a section of its own."""
    heading = f"{HEADING}: {part}" if part else HEADING
    if path.resolve() == results.RESULTS.resolve():
        results.write_section(heading, body)
        return
    existing = path.read_text() if path.exists() else results.TITLE
    text = f"{heading}\n\n{body.rstrip()}\n\n"
    path.write_text(results.with_section(existing, heading, text).rstrip("\n") + "\n")


# -- main ---------------------------------------------------------------------------------------


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"of {','.join(MODES)}")
    parser.add_argument("--budget", type=int, default=3000, help="textbook ddmin's test budget")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir(), "ddchange-real"))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per build or check")
    parser.add_argument("--case-dir", type=Path, default=CASES, help="where the cases are")
    parser.add_argument("--results", type=Path, default=results.RESULTS, help="file to write")
    parser.add_argument("--ddchange", type=Path, default=DDCHANGE, help="the command to measure")
    parser.add_argument("--part", help="write a section of its own, named PART")
    args = parser.parse_args(argv)
    args.modes = [m for m in args.modes.split(",") if m]
    unknown = set(args.modes) - set(MODES)
    if unknown:
        parser.error(f"unknown mode(s): {', '.join(sorted(unknown))}")
    args.work = args.work.resolve()
    return args


def select(case_dir: Path, names: str | None) -> list[Path]:
    """The case directories to run, by name (an unknown name is an error)."""
    found = (
        sorted(p for p in case_dir.iterdir() if (p / "case.toml").exists())
        if case_dir.is_dir()
        else []
    )
    if names is None:
        return found
    wanted = [n for n in names.split(",") if n]
    missing = [n for n in wanted if not (case_dir / n / "case.toml").exists()]
    if missing:
        raise SystemExit(f"real.py: no such case in {case_dir}: {', '.join(missing)}")
    return [case_dir / n for n in wanted]


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    directories = select(args.case_dir, args.cases)
    if not directories:
        raise SystemExit(f"real.py: no cases in {args.case_dir}")
    started = time.monotonic()
    rows: list[Row] = []
    ran = []
    for directory in directories:
        ran.append(directory.name)
        print(f"== {directory.name}", flush=True)
        title = "—"
        try:
            case = load_case(directory)
            title = case.title
            rows += run_case(case, args)
        except Broken as error:
            print(f"   broken: {error}", flush=True)
            rows.append(Row(directory.name, title, verdict=f"broken: {error}"))
        # After every case, so that a long run that is stopped keeps what it measured (the
        # section names the cases that ran).
        body = section(rows, ran, time.monotonic() - started)
        write(args.results, body, args.part)
    print(body, end="")


if __name__ == "__main__":
    main()
