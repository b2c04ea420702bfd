"""What every check script here shares.

The project under test is imported from the tree the check runs in (its `src/` or `lib/` when the
package lives there), and an error the check did not expect means "cannot tell" (exit 125), never
"the regression is present" (exit 1): a half-applied change elsewhere must not be blamed.
"""

import importlib
import os
import subprocess
import sys
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


_CHILD = "DDCHANGE_CHECK_CHILD"
