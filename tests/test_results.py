"""Tests for trial/results.py: per-test results read from real JUnit files and TAP output.

The scratch tree is `tmp_path/tree` and the test runs in its `sub/` directory, so that every
glob is relative to a directory that is not the tree's top; `tmp_path/outside` stands for
anything beyond the tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ddchange import errors
from ddchange.trial import results
from ddchange.trial.results import Case, Read, Source, Status, clear, lookup, parse_source, read

PASS = Case(Status.PASS)
SKIP = Case(Status.SKIP)
FAIL = Case(Status.FAIL)
ERROR = Case(Status.ERROR)

# pytest's shape: a module that failed to import is one error case named after the module.
PYTEST_SHAPED = """<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests">
  <testsuite name="pytest" errors="2" failures="1" skipped="1" tests="6">
    <testcase classname="" name="tests.test_broken">
      <error message="collection failure">ModuleNotFoundError: no module named 'x'</error>
    </testcase>
    <testcase classname="tests.test_x" name="test_pass" time="0.001"/>
    <testcase classname="tests.test_x" name="test_fail">
      <failure message="assert 1 == 2" type="AssertionError">assert 1 == 2</failure>
    </testcase>
    <testcase classname="tests.test_x" name="test_error">
      <error message="failed on setup" type="RuntimeError">setup</error>
    </testcase>
    <testcase classname="tests.test_x" name="test_skip">
      <skipped type="pytest.skip" message="no">no</skipped>
    </testcase>
    <testcase classname="tests.test_x.TestC" name="test_m"/>
  </testsuite>
</testsuites>
"""


@pytest.fixture
def top(tmp_path: Path) -> Path:
    (tmp_path / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return tmp_path / "tree"


@pytest.fixture
def where(top: Path) -> Path:
    return top / "sub"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


def junit(*cases: str, root: str = "testsuites") -> str:
    """A report of `cases` (each a <testcase .../> element) in one suite."""
    suite = f"<testsuite name='s'>{''.join(cases)}</testsuite>"
    return suite if root == "testsuite" else f"<testsuites>{suite}</testsuites>"


def read_junit(where: Path, top: Path, pattern: str = "report.xml") -> Read:
    return read([parse_source(f"junit:{pattern}")], where, top, "")


def test_pytest_shaped_junit(where: Path, top: Path) -> None:
    write(where / "report.xml", PYTEST_SHAPED)
    got = read_junit(where, top)
    assert got == Read(
        {
            "tests.test_broken": Case(Status.ERROR, "ModuleNotFoundError"),  # from its text
            "tests.test_x.test_pass": PASS,
            "tests.test_x.test_fail": Case(Status.FAIL, "AssertionError"),
            "tests.test_x.test_error": Case(Status.ERROR, "RuntimeError"),
            "tests.test_x.test_skip": SKIP,
            "tests.test_x.TestC.test_m": PASS,
        }
    )


def test_lookup_finds_the_error_of_an_enclosing_module(where: Path, top: Path) -> None:
    write(where / "report.xml", PYTEST_SHAPED)
    cases = read_junit(where, top).cases
    assert cases is not None
    assert lookup(cases, "tests.test_x.test_fail") == Case(Status.FAIL, "AssertionError")
    broken = Case(Status.ERROR, "ModuleNotFoundError")
    assert lookup(cases, "tests.test_broken.test_a") == broken
    assert lookup(cases, "tests.test_broken.TestC.test_m[1]") == broken
    # An enclosing name that passed says nothing about what is under it.
    assert lookup(cases, "tests.test_x.test_pass.inner") is None
    assert lookup(cases, "tests.test_x.test_gone") is None
    assert lookup(cases, "tests.test_brokenness.test_a") is None


def test_lookup_prefers_the_nearest_enclosing_error() -> None:
    cases = {"a": Case(Status.ERROR, "outer"), "a.b": Case(Status.ERROR, "inner")}
    assert lookup(cases, "a.b.c") == Case(Status.ERROR, "inner")
    assert lookup(cases, "a.x") == Case(Status.ERROR, "outer")


def test_a_real_pytest_run(where: Path, top: Path) -> None:
    write(
        where / "tests" / "test_x.py",
        "import pytest\n"
        "def test_pass(): pass\n"
        "def test_fail(): assert False\n"
        "def test_skip(): pytest.skip('no')\n"
        "@pytest.mark.parametrize('v', [1.5])\n"
        "def test_param(v): pass\n"
        "class TestC:\n"
        "    def test_m(self): pass\n",
    )
    write(where / "tests" / "test_broken.py", "import no_such_module_here\ndef test_a(): pass\n")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist"]
    command += ["--continue-on-collection-errors", "--junitxml=out/report.xml", "tests"]
    subprocess.run(command, cwd=where, capture_output=True, check=False)
    cases = read_junit(where, top, "out/*.xml").cases
    # pytest 9.2 writes no `type`: the kinds are the exceptions its texts name
    broken = Case(Status.ERROR, "ModuleNotFoundError")
    assert cases == {
        "tests.test_broken": broken,
        "tests.test_x.test_pass": PASS,
        "tests.test_x.test_fail": Case(Status.FAIL, "AssertionError"),
        "tests.test_x.test_skip": SKIP,
        "tests.test_x.test_param[1.5]": PASS,
        "tests.test_x.TestC.test_m": PASS,
    }
    assert lookup(cases, "tests.test_broken.test_a") == broken


def test_a_testsuite_root(where: Path, top: Path) -> None:
    write(where / "report.xml", junit('<testcase classname="C" name="t"/>', root="testsuite"))
    assert read_junit(where, top) == Read({"C.t": PASS})


@pytest.mark.parametrize("root", ["testsuites", "testsuite"])
def test_nested_suites(where: Path, top: Path, root: str) -> None:
    inner = "<testsuite name='in'><testcase name='deep'><failure/></testcase></testsuite>"
    write(where / "report.xml", junit('<testcase name="top"/>', inner, root=root))
    assert read_junit(where, top) == Read({"top": PASS, "deep": FAIL})


def test_a_report_wrapped_in_another_testsuites_is_read_whole(where: Path, top: Path) -> None:
    """<testsuites> inside <testsuites> (one report wrapped in another, as a CI merger
    writes it): every suite of each counts, beside the outer one's own."""
    inner = junit('<testcase classname="C" name="t"><failure type="E"/></testcase>')
    outer = "<testsuite name='o'><testcase name='out'/></testsuite>"
    write(where / "report.xml", f'<testsuites name="all">{outer}{inner}</testsuites>')
    assert read_junit(where, top) == Read({"out": PASS, "C.t": Case(Status.FAIL, "E")})


def test_several_files_through_a_double_star_glob(where: Path, top: Path) -> None:
    write(where / "a.xml", junit('<testcase name="here"/>'))
    write(where / "r" / "b.xml", junit('<testcase name="one"><skipped/></testcase>'))
    write(where / "r" / "s" / "c.xml", junit('<testcase name="two"><error type="E"/></testcase>'))
    write(where / "r" / "s" / "notes.txt", "not a report")
    (where / "r" / "dir.xml").mkdir()  # a directory that matches is no result file
    got = read_junit(where, top, "r/**/*.xml")
    assert got == Read({"one": SKIP, "two": Case(Status.ERROR, "E")})


def test_the_worst_of_a_test_reported_twice_in_one_file_wins(where: Path, top: Path) -> None:
    write(
        where / "report.xml",
        junit(
            '<testcase name="teardown"/>',
            '<testcase name="teardown"><error type="teardown"/></testcase>',
            '<testcase name="rerun"><failure type="first"/></testcase>',
            '<testcase name="rerun"/>',
            '<testcase name="rerun"><failure type="third"/></testcase>',
            '<testcase name="skipped_once"><skipped/></testcase>',
            '<testcase name="skipped_once"/>',
        ),
    )
    assert read_junit(where, top) == Read(
        {
            "teardown": Case(Status.ERROR, "teardown"),
            "rerun": Case(Status.FAIL, "first"),
            "skipped_once": PASS,
        }
    )


@pytest.mark.parametrize(("first", "second"), [("<failure/>", "<error/>"), ("<error/>", "")])
def test_the_worst_across_files_wins(where: Path, top: Path, first: str, second: str) -> None:
    write(where / "r1.xml", junit(f'<testcase name="t">{first}</testcase>'))
    write(where / "r2.xml", junit(f'<testcase name="t">{second}</testcase>'))
    assert read_junit(where, top, "r*.xml") == Read({"t": ERROR})


def test_tap(top: Path) -> None:
    output = "\n".join(
        [
            "TAP version 13",
            "1..8",
            "ok 1 - passes",
            "not ok 2 - fails",
            "# a diagnostic line",
            "ok 3 - skipped # SKIP no network",
            "not ok 4 - expected to fail # todo not written yet",
            "ok 5 - unexpectedly passes # TODO",
            "not ok 6 - skipped and failing # skip",
            "ok 7",
            "not ok 8 - has \\# in its name",
            "    ok 1 - a subtest",
            "okay 9 - not a test line",
        ]
    )
    got = read([Source("tap")], top, top, output)
    assert got == Read(
        {
            "passes": PASS,
            "fails": FAIL,
            "skipped": SKIP,
            "expected to fail": SKIP,
            "unexpectedly passes": PASS,
            "skipped and failing": SKIP,
            "7": PASS,
            "has # in its name": FAIL,
        }
    )


def test_tap_numbers_a_line_without_a_number_by_its_place() -> None:
    got = read([Source("tap")], Path(), Path(), "ok\nnot ok\n")
    assert got == Read({"1": PASS, "2": FAIL})


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("1..2\nok 1 - a\nBail out! database down\n", "TAP: Bail out! database down"),
        ("Bail out!\n", "TAP: Bail out!"),
        ("1..0\n# nothing ran\n", "TAP: no test line (ok / not ok) in the output"),
        ("", "TAP: no test line (ok / not ok) in the output"),
    ],
)
def test_tap_that_yields_nothing(output: str, reason: str) -> None:
    assert read([Source("tap")], Path(), Path(), output) == Read(None, reason)


def test_every_source_counts(where: Path, top: Path) -> None:
    write(where / "report.xml", junit('<testcase name="x"/>'))
    sources = [parse_source("junit:report.xml"), parse_source("tap")]
    assert read(sources, where, top, "ok 1 - y\n") == Read({"x": PASS, "y": PASS})
    # One source that yields nothing: no case at all, although the other one read well.
    assert read(sources, where, top, "no tap here") == Read(
        None, "TAP: no test line (ok / not ok) in the output"
    )
    missing = [*sources, parse_source("junit:other.xml")]
    assert read(missing, where, top, "ok 1 - y\n") == Read(None, "no file matches junit:other.xml")


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<testsuites><testsuite><testcase name="&lol9;"/></testsuite></testsuites>
"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE testsuites [<!ENTITY secret SYSTEM "file:///etc/hostname">]>
<testsuites><testsuite><testcase name="&secret;"/></testsuite></testsuites>
"""

DTD_ONLY = """<?xml version="1.0"?>
<!DOCTYPE testsuites SYSTEM "http://example.org/junit.dtd">
<testsuites><testsuite><testcase name="t"/></testsuite></testsuites>
"""


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b"", "report.xml: empty"),
        (b"\n  \n", "report.xml: empty"),
        (PYTEST_SHAPED[:300].encode(), "report.xml: not well-formed XML (line 6)"),
        (b"<testsuites>\n<testsuite>\n<testcase name='a'>", "not well-formed XML (line 3)"),
        (b"\x00\x01binary", "report.xml: not well-formed XML (line 1)"),
        (BILLION_LAUGHS.encode(), "report.xml: forbidden XML (entities or a DTD)"),
        (EXTERNAL_ENTITY.encode(), "report.xml: forbidden XML (entities or a DTD)"),
        (DTD_ONLY.encode(), "report.xml: forbidden XML (entities or a DTD)"),
        (b'<?xml version="1.0" encoding="no-such"?><a/>', "report.xml: XML in an unknown encoding"),
        (b"<testsuites><testsuite name='s'/></testsuites>", "report.xml: names no test case"),
        (b"<testsuite name='s'></testsuite>", "report.xml: names no test case"),
        (b"<testsuites/>", "report.xml: names no test case"),
        (b"<html><testcase name='t'/></html>", "report.xml: names no test case"),
        (
            b"<testsuite>" * 3000 + b"<testcase name='t'/>" + b"</testsuite>" * 3000,
            "report.xml: test suites nested too deeply",
        ),
    ],
    ids=[
        "empty",
        "blank",
        "truncated",
        "unclosed",
        "binary",
        "billion-laughs",
        "external-entity",
        "dtd",
        "encoding",
        "no-testcase",
        "empty-suite-root",
        "empty-root",
        "other-root",
        "deep",
    ],
)
def test_a_file_that_yields_nothing(where: Path, top: Path, text: bytes, reason: str) -> None:
    write(where / "report.xml", text)
    got = read_junit(where, top)
    assert got.cases is None
    assert got.reason.endswith(reason)


def test_no_file_matches(where: Path, top: Path) -> None:
    write(where / "reports" / "other.xml", junit('<testcase name="t"/>'))
    assert read_junit(where, top) == Read(None, "no file matches junit:report.xml")
    assert read_junit(where, top, "reports/**/x*.xml") == Read(
        None, "no file matches junit:reports/**/x*.xml"
    )


def test_one_bad_file_among_good_ones_yields_nothing(where: Path, top: Path) -> None:
    write(where / "a.xml", junit('<testcase name="t"/>'))
    write(where / "b.xml", "<testsuites>")
    write(where / "c.xml", junit('<testcase name="u"/>'))
    assert read_junit(where, top, "*.xml") == Read(None, "b.xml: not well-formed XML (line 1)")


def test_a_symlink_out_of_the_tree_is_refused(where: Path, top: Path) -> None:
    target = write(top.parent / "outside" / "report.xml", junit('<testcase name="t"/>'))
    (where / "report.xml").symlink_to(target)
    assert read_junit(where, top) == Read(
        None, "report.xml: leads outside the scratch tree (a symlink)"
    )


def test_a_symlinked_directory_out_of_the_tree_is_refused(where: Path, top: Path) -> None:
    write(top.parent / "outside" / "report.xml", junit('<testcase name="t"/>'))
    (where / "out").symlink_to(top.parent / "outside", target_is_directory=True)
    assert read_junit(where, top, "out/report.xml") == Read(
        None, "out/report.xml: leads outside the scratch tree (a symlink)"
    )


def test_a_symlink_inside_the_tree_is_read(where: Path, top: Path) -> None:
    target = write(top / "elsewhere" / "r.xml", junit('<testcase name="t"/>'))
    (where / "report.xml").symlink_to(target)
    assert read_junit(where, top) == Read({"t": PASS})


def test_what_is_not_a_regular_file_is_refused(where: Path, top: Path) -> None:
    os.mkfifo(where / "report.xml")  # reading it would wait forever for a writer
    (where / "loop.xml").symlink_to("loop.xml")
    assert read_junit(where, top) == Read(None, "report.xml: not a regular file")
    assert read_junit(where, top, "loop*.xml") == Read(None, "loop.xml: a symlink loop")


def test_a_file_larger_than_the_limit_is_refused(
    where: Path, top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results, "LIMIT", 2**20)
    report = junit('<testcase name="t"/>').encode()
    write(where / "report.xml", report.ljust(2**20))
    assert read_junit(where, top) == Read({"t": PASS})
    write(where / "report.xml", report.ljust(2**20 + 1))
    assert read_junit(where, top) == Read(None, "report.xml: larger than 1 MiB")


@pytest.mark.parametrize(
    "text", ["junit:report.xml", "junit:reports/**/*.xml", "junit:out/TEST-*.xml", "tap"]
)
def test_a_source_reads_back_as_written(text: str) -> None:
    assert str(parse_source(text)) == text


def test_parse_source() -> None:
    assert parse_source("junit:r/*.xml") == Source("junit", "r/*.xml")
    assert parse_source("tap") == Source("tap")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("xml:report.xml", "unknown result source 'xml:report.xml'"),
        ("TAP", "unknown result source 'TAP'"),
        ("", "unknown result source ''"),
        ("junit", "junit:: names no file"),
        ("junit:", "junit:: names no file"),
        ("junit:.", "junit:.: names no file"),
        ("junit:/tmp/report.xml", "must be relative to the directory the test runs in"),
        ("junit:../report.xml", "must not contain '..'"),
        ("junit:out/../../report.xml", "must not contain '..'"),
        ("junit:out/a**.xml", "'**' can only be a whole path component"),
        ("tap:out.txt", "tap reads the test's output and takes no path"),
    ],
)
def test_a_bad_source_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^[^\n]*$") as raised:
        parse_source(text)
    assert message in str(raised.value)


def test_clear_removes_stale_matches_and_nothing_else(where: Path, top: Path) -> None:
    outside = top.parent / "outside"
    stale = write(where / "reports" / "a" / "old.xml", "stale")
    kept = [
        write(where / "reports" / "notes.txt", "not matched"),
        write(where / "old.xml", "not under reports/"),
        write(outside / "target.xml", "the link's target"),
        write(outside / "beyond.xml", "beyond a symlinked directory"),
    ]
    (where / "reports" / "link.xml").symlink_to(outside / "target.xml")
    (where / "reports" / "dir.xml").mkdir()
    (where / "reports" / "away").symlink_to(outside, target_is_directory=True)
    clear([parse_source("tap"), parse_source("junit:reports/**/*.xml")], where, top)
    assert not stale.exists()
    assert not (where / "reports" / "link.xml").is_symlink()
    assert all(path.read_text() for path in kept)
    assert (where / "reports" / "dir.xml").is_dir()
    # What a symlinked directory leads to is never deleted, even when named without '**'.
    clear([parse_source("junit:reports/away/*.xml")], where, top)
    assert (outside / "beyond.xml").exists()
    assert read_junit(where, top, "reports/**/*.xml") == Read(
        None, "no file matches junit:reports/**/*.xml"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root deletes files in a read-only directory")
def test_clear_stops_when_a_stale_file_cannot_be_deleted(where: Path, top: Path) -> None:
    write(where / "reports" / "old.xml", junit('<testcase name="t"/>'))
    (where / "reports").chmod(0o555)
    try:
        with pytest.raises(errors.EnvironmentFault, match="cannot delete old.xml"):
            clear([parse_source("junit:reports/*.xml")], where, top)
    finally:
        (where / "reports").chmod(0o755)


@pytest.mark.parametrize(
    ("entry", "kind"),
    [
        # pytest 9.2: no type; the exception's name is in the text
        ('<failure message="assert 1 == 2">def test():\n&gt;  assert 1 == 2\n'
         "E   AssertionError: assert 1 == 2</failure>", "AssertionError"),
        ('<failure message="ValueError: bad">trace</failure>', "ValueError"),
        ('<error message="pkg.mod.CustomError: no">x</error>', "pkg.mod.CustomError"),
        ('<failure message="the disk spun down">nothing named</failure>', "the disk spun down"),
    ],
)  # fmt: skip
def test_a_failure_without_a_type_is_known_by_the_exception_it_names(
    where: Path, top: Path, entry: str, kind: str
) -> None:
    """A writer that gives no `type` (pytest 9.2): the failure's signature is the exception
    it names, so "the same failure" is still told from another."""
    write(where / "report.xml", junit(f"<testcase classname='c' name='t'>{entry}</testcase>"))
    got = read_junit(where, top).cases
    assert got is not None
    assert got["c.t"].kind == kind
