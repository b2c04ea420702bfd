"""Per-test outcomes of one run, read from what the run wrote: JUnit XML files or TAP output.

Owns the result sources the user names (`junit:GLOB`, `tap`), clearing stale result files before
a run, and reading every test's status after it. Whole-suite triage asks, per test, whether it
passed in this run; this module answers only from what this run wrote.

Key ideas:
- A missing result is never a pass. Any source that yields nothing (no file matched, a file that
  is unreadable, not XML, forbidden XML, or names no test case; output with no TAP test line, or
  a TAP "Bail out!") makes the whole read yield no cases, with the reason in one line.
- A file left by an earlier run is never read as this run's: `clear` deletes the matches before
  each run. Neither `clear` nor `read` goes outside the scratch tree (`top`): a match that
  resolves outside it, through a symlink, is left alone and refused.
- What a run wrote is hostile input. XML is parsed by defusedxml (no entities, no DTD), files are
  read up to LIMIT bytes, and nothing a run wrote makes this module raise.
- The same test reported twice (two files, a rerun, a teardown error after a pass): the worst
  status wins, ERROR > FAIL > PASS > SKIP, so no report of trouble is lost.
- pytest reports a module that fails to import as one error case named after the module;
  `lookup` gives each test under that name the module's error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree
from defusedxml import DefusedXmlException
from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite

from ddchange import errors
from ddchange.model import Case, Status

# The reason a run that gave no results is UNRESOLVED starts with this.
NONE = "no test results"
# The largest result file read: a bigger one is refused rather than held in memory.
LIMIT = 64 * 2**20


# When a test is reported more than once, the higher rank wins.
_RANK = {Status.SKIP: 0, Status.PASS: 1, Status.FAIL: 2, Status.ERROR: 3}


Cases = dict[str, Case]  # test id -> its result in one run


@dataclass(frozen=True)
class Source:
    """Where a run's per-test results are: files matching a glob, or the run's output."""

    format: Literal["junit", "tap"]
    pattern: str = ""  # junit: a glob relative to the directory the test runs in; tap: ""

    def __post_init__(self) -> None:
        problem = _pattern_problem(self.format, self.pattern)
        if problem:
            raise ValueError(f"result source {self.format}:{self.pattern}: {problem}")

    def __str__(self) -> str:
        return f"junit:{self.pattern}" if self.format == "junit" else "tap"


def _pattern_problem(format: str, pattern: str) -> str:
    if format == "tap":
        return "tap reads the test's output and takes no path" if pattern else ""
    parts = PurePosixPath(pattern).parts
    if not parts:
        return "names no file (write junit:PATH, e.g. junit:report.xml)"
    if PurePosixPath(pattern).is_absolute():
        return "the path must be relative to the directory the test runs in"
    if ".." in parts:
        return "the path must not contain '..'"
    # Python 3.11's glob refuses '**' inside a component ('a**.xml').
    if any("**" in part and part != "**" for part in parts):
        return "'**' can only be a whole path component (e.g. junit:reports/**/*.xml)"
    return ""


def parse_source(text: str) -> Source:
    """A result source as the user writes it: "junit:PATH-OR-GLOB" or "tap". Raises ValueError
    with a one-line message for anything else."""
    format, _, pattern = text.partition(":")
    if format == "junit":
        return Source("junit", pattern)
    if format == "tap":
        return Source("tap", pattern)
    raise ValueError(f"unknown result source {text!r}: write junit:PATH-OR-GLOB or tap")


@dataclass(frozen=True)
class Read:
    """The cases one run reported, or why none can be used."""

    cases: Cases | None  # None: nothing usable was read
    reason: str = ""  # why not, one line


class _Refused(Exception):
    """Why a source yields nothing usable: its message is the reason."""


def clear(sources: Sequence[Source], where: Path, top: Path) -> None:
    """Before a run: delete the files and symlinks under `where` that the junit globs match,
    so that a file left by an earlier run is never read as this run's. Deletes nothing outside
    `top`: a symlink is removed as a link, and a match beyond a symlinked directory that leads
    out of `top` stays (`read` refuses it). Raises EnvironmentFault when a match cannot be
    deleted: it would be read after the run as the run's own."""
    for source in sources:
        if source.format != "junit":
            continue
        try:
            found = _matches(source, where)
        except OSError:
            continue  # `read` cannot list them either, and says so
        for path in found:
            if _inside(path.parent, top) and (path.is_symlink() or path.is_file()):
                _delete(path)


def _delete(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        problem = f"cannot delete {path.name}, a result file of an earlier run ({error.strerror})"
        raise errors.EnvironmentFault(problem, path.parent) from None


def read(sources: Sequence[Source], where: Path, top: Path, output: str) -> Read:
    """After a run: the union of every source's cases, or no cases and the reason of the first
    source that yields nothing. `output` is the run's combined stdout and stderr."""
    cases: Cases = {}
    try:
        for source in sources:
            if source.format == "tap":
                _merge(cases, _tap(output))
            else:
                _merge(cases, _junit(source, where, top))
    except _Refused as refused:
        return Read(None, str(refused))
    return Read(cases)


def lookup(cases: Mapping[str, Case], test: str) -> Case | None:
    """The result of test id `test`: its own, else that of the nearest enclosing name that
    reported an error for everything under it (a module that failed to import); None when
    neither is there."""
    if test in cases:
        return cases[test]
    for name in _enclosing(test):
        case = cases.get(name)
        if case is not None and case.status is Status.ERROR:
            return case
    return None


def _enclosing(test: str) -> Iterator[str]:
    """The names that enclose `test`, nearest first: a.b.c -> a.b, a."""
    while "." in test:
        test = test.rpartition(".")[0]
        yield test


def _merge(cases: Cases, found: Iterable[tuple[str, Case]]) -> None:
    for test, case in found:
        known = cases.get(test)
        if known is None or _RANK[case.status] > _RANK[known.status]:
            cases[test] = case


def _matches(source: Source, where: Path) -> list[Path]:
    # Directories are never result files; a symlink to one is caught when it is read.
    return sorted(p for p in where.glob(source.pattern) if p.is_symlink() or not p.is_dir())


def _real(path: Path) -> Path | None:
    """Where `path` really is, or None in a symlink loop."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop is a RuntimeError before Python 3.13
        return None


def _inside(path: Path, top: Path) -> bool:
    real = _real(path)
    return real is not None and real.is_relative_to(top.resolve())


def _junit(source: Source, where: Path, top: Path) -> list[tuple[str, Case]]:
    try:
        found = _matches(source, where)
    except OSError as error:
        raise _Refused(f"cannot list the files of {source}: {error.strerror}") from None
    if not found:
        raise _Refused(f"no file matches {source}")
    return [case for path in found for case in _junit_file(path, where, top)]


def _junit_file(path: Path, where: Path, top: Path) -> list[tuple[str, Case]]:
    shown = path.relative_to(where).as_posix()
    root = _xml(_contents(path, top, shown), shown)
    try:
        cases = [(_test_id(case), _case(case, top)) for case in _testcases(root)]
    except RecursionError:  # junitparser walks nested suites recursively
        raise _Refused(f"{shown}: test suites nested too deeply") from None
    if not cases:
        raise _Refused(f"{shown}: names no test case")
    return cases


def _contents(path: Path, top: Path, shown: str) -> bytes:
    real = _real(path)
    if real is None:
        raise _Refused(f"{shown}: a symlink loop")
    if not real.is_relative_to(top.resolve()):
        raise _Refused(f"{shown}: leads outside the scratch tree (a symlink)")
    # A FIFO or device would block or never end: only a regular file is read.
    if not real.is_file():
        raise _Refused(f"{shown}: not a regular file")
    try:
        with real.open("rb") as file:
            data = file.read(LIMIT + 1)
    except OSError as error:
        raise _Refused(f"{shown}: cannot read it ({error.strerror})") from None
    if len(data) > LIMIT:
        raise _Refused(f"{shown}: larger than {LIMIT // 2**20} MiB")
    if not data.strip():
        raise _Refused(f"{shown}: empty")
    return data


def _xml(data: bytes, shown: str) -> Element:
    try:
        root: Element = defusedxml.ElementTree.fromstring(data, forbid_dtd=True)
    except DefusedXmlException:
        raise _Refused(f"{shown}: forbidden XML (entities or a DTD)") from None
    except ParseError as error:
        raise _Refused(f"{shown}: not well-formed XML (line {error.position[0]})") from None
    except LookupError:  # expat's answer to an encoding it does not know
        raise _Refused(f"{shown}: XML in an unknown encoding") from None
    return root


def _testcases(root: Element) -> Iterator[TestCase]:
    # JUnitXml.fromelem of a <testsuite> root finds no suite in it: that root is the suite;
    # a <testsuites> may hold more <testsuites> (one report wrapped in another, as a CI
    # merger writes it), whose suites count as its own.
    if root.tag == "testsuite":
        yield from TestSuite.fromelem(root)
    elif root.tag == "testsuites":
        for suite in JUnitXml.fromelem(root):
            yield from suite
        for inner in root.iterfind("testsuites"):
            yield from _testcases(inner)


def _test_id(case: TestCase) -> str:
    classname: str = case.classname or ""
    name: str = case.name or ""
    return f"{classname}.{name}" if classname else name


def _case(case: TestCase, top: Path) -> Case:
    if case.is_error:
        return Case(Status.ERROR, _kind(case, Error), _message(case, Error, top))
    if case.is_failure:
        return Case(Status.FAIL, _kind(case, Failure), _message(case, Failure, top))
    return Case(Status.SKIP if case.is_skipped else Status.PASS)


MESSAGE_LIMIT = 500  # characters of a failure's message, and of the end of its text, kept


def _message(case: TestCase, result: type[Error] | type[Failure], top: Path) -> str:
    """What a failure or error says (for --fail-pattern): its message and the end of its
    text, each cut to MESSAGE_LIMIT characters, with the paths into the tree it ran in
    (`top`) made relative, so that the same failure reads the same in every tree (-j N, a
    cluster's workers)."""
    entry = next(entry for entry in case.result if isinstance(entry, result))
    room = MESSAGE_LIMIT + 4096  # the paths go before the cut, wherever it falls
    message, text = str(entry.message or "")[:room], str(entry.text or "")[-room:]
    for tree in dict.fromkeys((str(top), str(top.resolve()))):
        message, text = message.replace(tree + "/", ""), text.replace(tree + "/", "")
    said = message[:MESSAGE_LIMIT], text[-MESSAGE_LIMIT:]
    return "\n".join(part for part in said if part.strip())


def _kind(case: TestCase, result: type[Error] | type[Failure]) -> str:
    """The signature of a failure or error, to tell "the same failure" from another: its
    `type`; where a writer gives none (pytest 9.2's `<failure>`), the name of the exception
    that its message begins with ("AssertionError: ..."), or that its text names as raised
    (pytest's "E   ValueError: ..." or last line "test_x.py:3: AssertionError"), else its
    message's first line."""
    entry = next(entry for entry in case.result if isinstance(entry, result))
    if entry.type:
        return str(entry.type)
    message, text = str(entry.message or ""), str(entry.text or "")
    named = (
        _BEGINS.match(message)
        or _RAISED_AT.search(text)
        or _RAISED.search(text)
        or _NAMED.match(text)
    )
    if named:
        return named["name"]
    return message.strip().split("\n", 1)[0][:200]


# An exception's name: "AssertionError", "pkg.module.CustomError"
_NAME = r"(?P<name>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Failed))"
_BEGINS = re.compile(rf"\s*{_NAME}\b")
# pytest's text: "E   ValueError: ..." where it was raised, "test_x.py:3: AssertionError" last
_RAISED = re.compile(rf"^E\s+{_NAME}:", re.MULTILINE)
_RAISED_AT = re.compile(rf"^\S+:\d+: {_NAME}$", re.MULTILINE)
_NAMED = re.compile(rf"\s*{_NAME}:")  # a text that begins "ModuleNotFoundError: ..."


# "ok 3 - name # SKIP why", "not ok 4 name", "ok": TAP's test lines.
_TAP_LINE = re.compile(r"(?P<not>not )?ok(?!\S)(?:\s+(?P<number>\d+))?(?:\s*-)?\s*(?P<rest>.*)")
# A directive begins at the first '#' not escaped as "\#".
_DIRECTIVE = re.compile(r"(?<!\\)#")


def _tap(output: str) -> list[tuple[str, Case]]:
    cases: list[tuple[str, Case]] = []
    for line in output.splitlines():
        if line.startswith("Bail out!"):
            raise _Refused(f"TAP: {line.strip()[:200]}")
        match = _TAP_LINE.fullmatch(line.rstrip())
        if match:
            cases.append(_tap_case(match, len(cases) + 1))
    if not cases:
        raise _Refused("TAP: no test line (ok / not ok) in the output")
    return cases


def _tap_case(match: re.Match[str], position: int) -> tuple[str, Case]:
    description, *directive = _DIRECTIVE.split(match["rest"], maxsplit=1)
    description = re.sub(r"\\([\\#])", r"\1", description).strip()
    test = description or match["number"] or str(position)
    kind = "".join(directive).strip().upper()
    if kind.startswith("SKIP") or (match["not"] and kind.startswith("TODO")):
        return test, Case(Status.SKIP)
    return test, Case(Status.FAIL if match["not"] else Status.PASS)
