"""pytest 8.0.0: four regressions fixed in 8.0.1, one test each, and one test that passes on both
releases; each test's result goes to report.xml (JUnit XML). pytest is imported from the tree's
src/, and the tests that need a whole pytest run start one from there in a throwaway directory.

- warns_multiple_args: `pytest.warns` re-emits a warning it did not match by calling its class
  with the message alone, so a warning class that takes two arguments raises TypeError (#11906).
- warns_skip: `pytest.skip()` inside `pytest.warns` is swallowed and reported as "DID NOT WARN"
  (#11907).
- doctest_autouse: an autouse fixture defined in a module is not used by that module's doctests
  (#11929).
- collection_order: `FILE::test_param` collects the parametrized items in reverse order (#11937).
- plain_run: a module with one passing test passes (passes on both).

Before the tests it writes src/_pytest/_version.py where it is missing, as pytest's build does.

Exit 0: all pass; 1: some test sees its regression; 125: cannot tell.
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from checking import Unexpected, suite  # noqa: E402

SRC = os.path.join(os.getcwd(), "src")
# What setuptools-scm writes when pytest is built (the file is in pytest's .gitignore).
VERSION = os.path.join(SRC, "_pytest", "_version.py")


def write_version():
    if os.path.isdir(os.path.dirname(VERSION)) and not os.path.exists(VERSION):
        with open(VERSION, "w") as out:
            out.write("version = '0.0.0'\nversion_tuple = (0, 0, 0)\n")


def pytest_run(files, *args):
    """A pytest run of `files` (name: source) in a throwaway directory: its exit code and output."""
    with tempfile.TemporaryDirectory(prefix="pytest-check-") as where:
        for name, text in files.items():
            with open(os.path.join(where, name), "w") as out:
                out.write(textwrap.dedent(text))
        code = "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))"
        env = {**os.environ, "PYTHONPATH": SRC, "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTEST_ADDOPTS", None)
        done = subprocess.run(
            [sys.executable, "-c", code, "-p", "no:cacheprovider", *args],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return done.returncode, done.stdout + done.stderr


def warns_multiple_args():
    import pytest

    class CustomWarning(UserWarning):
        def __init__(self, a, b):
            pass

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with (
                pytest.raises(pytest.fail.Exception, match="DID NOT WARN"),
                pytest.warns(CustomWarning, match="not gonna match"),
            ):
                warnings.warn(CustomWarning(1, 2), stacklevel=1)
        except TypeError as error:
            raise AssertionError(f"re-emitting the warning raised {error!r}") from None


def warns_skip():
    import pytest

    try:
        with pytest.warns(UserWarning):  # noqa: PT030 (no warning comes: any would do)
            pytest.skip("skipped inside pytest.warns")
    except pytest.skip.Exception:
        return
    except pytest.fail.Exception as error:
        raise AssertionError(f"the skip was swallowed: {error}") from None
    raise Unexpected("neither the skip nor DID NOT WARN came out of pytest.warns")


DOCTEST = """
import pytest

AUTO = "the fixture did not run"

@pytest.fixture(autouse=True)
def auto(request):
    global AUTO
    AUTO = "the fixture ran"

def my_doctest():
    '''My doctest.

    >>> my_doctest()
    'the fixture ran'
    '''
    return AUTO
"""


def doctest_autouse():
    code, output = pytest_run({"test_mod.py": DOCTEST}, "--doctest-modules", "-q")
    if code == 1 and "the fixture did not run" in output:
        raise AssertionError("the module's autouse fixture did not run for its doctest")
    if code != 0 or "1 passed" not in output:
        raise Unexpected(output[-2000:])


PARAMETRIZED = """
import pytest

@pytest.mark.parametrize('i', [0, 1, 2])
def test_param(i): ...
"""


def collection_order():
    code, output = pytest_run(
        {"test_order.py": PARAMETRIZED}, "--collect-only", "-q", "test_order.py::test_param"
    )
    ids = [line.strip() for line in output.splitlines() if line.startswith("test_order.py::")]
    expected = [f"test_order.py::test_param[{i}]" for i in range(3)]
    if code == 0 and ids == expected[::-1]:
        raise AssertionError(f"collected in reverse order: {ids}")
    if code != 0 or ids != expected:
        raise Unexpected(output[-2000:])


def plain_run():
    code, output = pytest_run({"test_plain.py": "def test_one():\n    assert 1 + 1 == 2\n"}, "-q")
    if code != 0 or "1 passed" not in output:
        raise AssertionError(output[-2000:])


TESTS = {
    "warns_multiple_args": warns_multiple_args,
    "warns_skip": warns_skip,
    "doctest_autouse": doctest_autouse,
    "collection_order": collection_order,
    "plain_run": plain_run,
}

if __name__ == "__main__":
    write_version()
    suite(TESTS, "pytest")
