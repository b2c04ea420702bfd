"""Run every test in tests/test_*.py and write a JUnit XML report to report.xml.

Each test is one <testcase classname="tests.test_x.SomeTest" name="test_method">, with a
<failure> when an assertion fails, an <error> when it raises anything else, <skipped/> when it
is skipped. A test module that cannot be imported is one <testcase classname=""
name="tests.test_x"> with an <error>, as pytest writes it. Exit 0 if every test passed, else 1.
"""

import importlib
import sys
import time
import traceback
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

REPORT = "report.xml"


class Recorder(unittest.TestResult):
    """Keeps one <testcase> element per test, in the order the tests ran."""

    def __init__(self) -> None:
        super().__init__()
        self.cases: list[ET.Element] = []
        self.started = 0.0

    def startTest(self, test):
        super().startTest(test)
        self.started = time.perf_counter()

    def _case(self, test) -> ET.Element:
        classname, _, name = test.id().rpartition(".")
        case = ET.Element("testcase", classname=classname, name=name)
        case.set("time", f"{time.perf_counter() - self.started:.3f}")
        self.cases.append(case)
        return case

    def _problem(self, test, tag, err):
        exc_type, exc, _ = err
        problem = ET.SubElement(self._case(test), tag, type=exc_type.__name__, message=str(exc))
        problem.text = self._exc_info_to_string(err, test)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._case(test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._problem(test, "failure", err)

    def addError(self, test, err):
        super().addError(test, err)
        self._problem(test, "error", err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        ET.SubElement(self._case(test), "skipped", message=reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._case(test)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        ET.SubElement(self._case(test), "failure", type="UnexpectedSuccess", message="")


def unreadable(module: str, err) -> ET.Element:
    """The <testcase> of a test module that does not import."""
    case = ET.Element("testcase", classname="", name=module, time="0.000")
    problem = ET.SubElement(case, "error", type=err[0].__name__, message=str(err[1]))
    problem.text = "".join(traceback.format_exception(*err))
    return case


def main() -> int:
    # No .pyc beside the project's sources: a checkout may replace a file within the same
    # second by one of the same size, and Python would take the stale .pyc for it.
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(Path.cwd()))
    recorder = Recorder()
    cases: list[ET.Element] = []
    for path in sorted(Path("tests").glob("test_*.py")):
        module = f"tests.{path.stem}"
        try:
            tests = unittest.defaultTestLoader.loadTestsFromModule(importlib.import_module(module))
        except Exception:
            cases.append(unreadable(module, sys.exc_info()))
            continue
        tests.run(recorder)
        cases += recorder.cases
        recorder.cases = []
    suite = ET.Element("testsuite", name="ledger", tests=str(len(cases)))
    for attribute, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        suite.set(attribute, str(sum(case.find(tag) is not None for case in cases)))
    suite.extend(cases)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(REPORT, encoding="utf-8", xml_declaration=True)
    bad = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    for case in bad:
        print("FAILED", ".".join(filter(None, (case.get("classname"), case.get("name")))))
    print(f"{len(cases)} tests, {len(bad)} failed; report in {REPORT}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
