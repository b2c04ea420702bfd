"""Trees of benchmarks/real.py's cases tested in a clone, and the independent judge of an answer.

Owns the diff as items (each hunk of a modified file; an added, deleted, renamed, copied or
binary file, or a mode change, as one) and the patch of any subset of them, renumbered so that
`git apply` puts each hunk where it belongs; whether a patch holds the documented culprit lines;
`Sandbox`, a clone of the case's repository where GOOD plus a patch is built and checked (PASS,
FAIL, UNRESOLVED); the precheck that GOOD passes and BAD fails; and `judge`, which uses git and
the check alone, never ddchange: the answer applied on GOOD (or on the commit it was found
against, a report's `"base"`) must fail, and leaving out each hunk of its `git diff -U0` in turn
must make it stop failing. For a case whose check writes JUnit XML
(whole-suite triage), each test's result read from that file, and `judge_cause`: a cause's patch
applied on GOOD must fail exactly its tests, as at BAD, and leave every other test as at GOOD;
leaving out each hunk of its `git diff -U0` must make one of its tests stop failing.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from real_cases import GIT_TIMEOUT, Broken, Case, Culprit, clean_env, git, git_bytes, run

PASS, FAIL, UNRESOLVED = "pass", "fail", "unresolved"
JUDGE_LIMIT = 300  # answers with more -U0 hunks are not checked hunk by hunk


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


def holds_culprit(case: Case, patch: bytes, wanted: Iterable[Culprit] | None = None) -> bool:
    """Whether every culprit line (or every line of `wanted`), in one of its forms, is added or
    removed by `patch` (in a culprit file, if any)."""
    lines = changed_lines(patch)
    files = set(case.culprit_files)
    want = list(case.culprit_lines if wanted is None else wanted)
    return bool(want) and all(
        any(text in forms and (not files or path in files) for path, text in lines)
        for forms in want
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

    def results(self) -> dict[str, str]:
        """Each test's result in the case's JUnit XML file, as the last check left it."""
        return junit(self.root / self.case.results.removeprefix("junit:"))

    def outcome(self, patch: bytes, *, zero: bool = False, base: str = "good") -> str | None:
        """`base` (GOOD unless said) plus `patch`, tested; None when the patch does not apply."""
        self.reset(base)
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


def judge(box: Sandbox, patch: bytes, base: str = "good") -> Verdict:
    """Does `base` plus `patch` fail, is it 1-minimal at line level, does it hold the culprit?
    `base` is the commit the patch applies on: GOOD, or the parent of the commit a search
    went inside (a report's `"base"`)."""
    culprit = holds_culprit(box.case, patch)
    box.reset(base)
    if not box.apply(patch):
        return Verdict("apply failed", culprit=culprit)
    git(box.root, "add", "--all", "--force", ".")
    git(box.root, "commit", "-q", "--allow-empty", "--no-verify", "-m", "answer")
    if box.test() != FAIL:
        return Verdict("does not reproduce", culprit=culprit)
    answer = git(box.root, "rev-parse", "HEAD").strip()
    items = split_items(git_bytes(box.root, "diff", "-U0", "--binary", "-M", base, answer))
    if len(items) > JUDGE_LIMIT:
        return Verdict(f"reproduces; {len(items)} hunks, not checked one by one", culprit=culprit)
    removable = sum(
        box.outcome(join_items(items[:k] + items[k + 1 :]), zero=True, base=base) == FAIL
        for k in range(len(items))
    )
    if removable:
        return Verdict(f"reproduces, {removable} of {len(items)} removable", culprit=culprit)
    if not culprit:
        return Verdict("reproduces, 1-minimal, not the culprit lines", culprit=culprit)
    return Verdict("right", right=True, culprit=culprit)


# -- whole-suite triage: per-test results and the judge of a cause --------------------------------

PASSED = "pass"
MISSING = "missing"


def junit(path: Path) -> dict[str, str]:
    """Each test case of a JUnit XML file (`classname.name`): "pass", "skipped",
    "failure TYPE" or "error TYPE"; {} when there is no such file or it is not XML."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    found = {}
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        test = f"{classname}.{name}" if classname else name
        found[test] = PASSED
        for status in ("failure", "error", "skipped"):
            entry = case.find(status)
            if entry is not None:
                found[test] = f"{status} {entry.get('type', '')}".strip()
                break
    return found


@dataclass(frozen=True)
class Suite:
    """Each test's result at GOOD and at BAD, and the targets: passing at GOOD, failing at BAD."""

    good: dict[str, str]
    bad: dict[str, str]

    @property
    def targets(self) -> list[str]:
        return sorted(t for t, r in self.bad.items() if self.good.get(t) == PASSED and r != PASSED)

    def expected(self, tests: Iterable[str]) -> dict[str, str]:
        """The results GOOD plus the cause of `tests` should give: theirs as at BAD, every other
        test's as at GOOD."""
        chosen = set(tests)
        return {t: self.bad[t] if t in chosen else r for t, r in self.good.items()}


def suite_ends(box: Sandbox) -> Suite:
    """The results of GOOD and of BAD in the box (Broken when either wrote none)."""
    ends = []
    for rev in ("good", "bad"):
        box.reset(rev)
        box.test()
        ends.append(box.results())
        if not ends[-1]:
            raise Broken(f"{rev} writes no results to {box.case.results}")
    return Suite(*ends)


def _differences(got: Mapping[str, str], want: Mapping[str, str]) -> str:
    wrong = [f"{t.rpartition('.')[2]} {got.get(t, MISSING)}" for t in want if got.get(t) != want[t]]
    return ", ".join(wrong)


def judge_cause(
    box: Sandbox, suite: Suite, tests: list[str], patch: bytes, base: str = "good"
) -> Verdict:
    """The cause of `tests` judged with git and the check alone: `base` (GOOD, or the parent of
    the first bad commit the triage went inside) plus `patch` gives `tests` their results at BAD
    and every other test its result at `base` (it fails exactly its tests); leaving out any one
    hunk of the patch's `git diff -U0` makes that stop (one of `tests` stops failing as at BAD,
    or another test breaks): each hunk is needed for it; the patch holds the documented culprit
    lines of `tests`."""
    culprit = holds_culprit(box.case, patch, [x for t in tests for x in box.case.tests.get(t, ())])
    if base != "good":  # the results there, from a run of the check (the judge's own)
        box.reset(base)
        box.test()
        suite = Suite(box.results(), suite.bad)
    box.reset(base)
    if not box.apply(patch):
        return Verdict("apply failed", culprit=culprit)
    git(box.root, "add", "--all", "--force", ".")
    git(box.root, "commit", "-q", "--allow-empty", "--no-verify", "-m", "cause")
    box.test()
    wrong = _differences(box.results(), suite.expected(tests))
    if wrong:
        return Verdict(f"not its tests alone: {wrong}", culprit=culprit)
    answer = git(box.root, "rev-parse", "HEAD").strip()
    items = split_items(git_bytes(box.root, "diff", "-U0", "--binary", "-M", base, answer))
    if len(items) > JUDGE_LIMIT:
        return Verdict(f"its tests alone; {len(items)} hunks, not checked", culprit=culprit)
    removable = 0
    for k in range(len(items)):
        applied = (
            box.outcome(join_items(items[:k] + items[k + 1 :]), zero=True, base=base) is not None
        )
        got = box.results() if applied else {}
        removable += applied and not _differences(got, suite.expected(tests))
    if removable:
        return Verdict(f"its tests alone, {removable} of {len(items)} removable", culprit=culprit)
    if not culprit:
        return Verdict("its tests alone, 1-minimal, not the culprit lines", culprit=culprit)
    return Verdict("right", right=True, culprit=culprit)
