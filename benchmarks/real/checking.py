"""What every check script here shares.

The project under test is imported from the tree the check runs in (its `src/` or `lib/` when the
package lives there), and an error the check did not expect means "cannot tell" (exit 125), never
"the regression is present" (exit 1): a half-applied change elsewhere must not be blamed.
"""

import importlib
import os
import subprocess
import sys
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable

UNTESTABLE = 125


def run(main: Callable[..., int], *modules: str) -> None:
    """Exit with what `main` says about the tree in the working directory.

    The check runs in a child process, so that a crash (a C extension's SIGSEGV in a half-applied
    change) is 125 like any other error, not a death by signal. The child imports `modules` from
    the tree (its `src/` or `lib/` when the first one lives there) and calls `main` with them.
    """
    if os.environ.get(_CHILD) != "1":
        done = subprocess.run([sys.executable, *sys.argv], env={**os.environ, _CHILD: "1"})
        if done.returncode < 0 or done.returncode > 127:
            print(f"the check crashed ({done.returncode}): cannot tell")
            sys.exit(UNTESTABLE)
        sys.exit(done.returncode)
    root = os.getcwd()
    top = modules[0].split(".")[0]
    under = [os.path.join(root, d) for d in ("src", "lib")]
    sys.path.insert(0, next((d for d in under if os.path.isdir(os.path.join(d, top))), root))
    try:
        found = [importlib.import_module(name) for name in modules]
    except Exception as exc:  # ImportError, SyntaxError, NameError at import time ...
        print(f"cannot import {', '.join(modules)}:", repr(exc))
        sys.exit(UNTESTABLE)
    try:
        code = main(*found)
    except Exception as exc:
        print("unexpected error:", repr(exc))
        code = UNTESTABLE
    sys.exit(code)


class Unexpected(Exception):
    """What a suite's test raises when it sees neither the good nor the regressed behaviour."""


REPORT = "report.xml"


def suite(tests: dict[str, Callable[[], None]], top: str) -> None:
    """Run each test (its id is `case.<key>`), write report.xml, exit 0 when all pass, 1 when
    some did not (a failure: it raised AssertionError, the regression; an error: it could not
    tell), as a test runner does: the report says which, test by test, and a test that passed
    in a run where another could not tell is still a pass (exit 125 would throw that away).

    As in `run`, the tests run in a child process that imports `top` from the tree; when the
    child dies without a report (a crash), every test is written as an error.
    """
    if os.environ.get(_CHILD) != "1":
        if os.path.lexists(REPORT):
            os.remove(REPORT)
        done = subprocess.run([sys.executable, *sys.argv], env={**os.environ, _CHILD: "1"})
        if done.returncode in (0, 1, UNTESTABLE) and os.path.isfile(REPORT):
            sys.exit(done.returncode)
        print(f"the check crashed ({done.returncode}): cannot tell")
        _write({name: ("error", "Crash", str(done.returncode)) for name in tests})
        sys.exit(UNTESTABLE)
    root = os.getcwd()
    under = [os.path.join(root, d) for d in ("src", "lib")]
    sys.path.insert(0, next((d for d in under if os.path.isdir(os.path.join(d, top))), root))
    results: dict[str, tuple[str, str, str]] = {}
    for name, test in tests.items():
        try:
            test()
            results[name] = ("pass", "", "")
        except AssertionError as exc:
            results[name] = ("failure", "AssertionError", str(exc))
        except Exception as exc:  # ImportError, SyntaxError, Unexpected ...
            results[name] = ("error", type(exc).__name__, "".join(traceback.format_exception(exc)))
        print(f"{name}: {results[name][0]} {results[name][2].strip()[-300:]}".rstrip())
    _write(results)
    statuses = {status for status, _, _ in results.values()}
    sys.exit(0 if statuses <= {"pass"} else 1)


def _write(results: dict[str, tuple[str, str, str]]) -> None:
    top = ET.Element("testsuite", name="case", tests=str(len(results)))
    for name, (status, kind, message) in results.items():
        case = ET.SubElement(top, "testcase", classname="case", name=name)
        if status != "pass":
            text = "".join(c for c in message[-500:] if c.isprintable() or c == "\n")
            ET.SubElement(case, status, type=kind, message=text)
    ET.ElementTree(top).write(REPORT, encoding="utf-8", xml_declaration=True)


_CHILD = "DDCHANGE_CHECK_CHILD"
