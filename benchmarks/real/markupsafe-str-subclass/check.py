"""MarkupSafe 3.0.0 regression: escape() of an object whose __str__ returns a
str *subclass* raises SystemError ("_escape_inner returned NULL without
setting an exception") when the C speedups are in use.

The C helper only accepted exact ``str`` objects and returned NULL for
anything else (markupsafe issues #472 / #473, fixed in 3.0.2).

Exit 0: escaping works; 1: the SystemError regression; 125: cannot tell
(import problem, C extension not built, any other unexpected outcome).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(markupsafe, _speedups):
    root = os.getcwd()

    origin = getattr(_speedups, "__file__", "") or ""
    if not origin.startswith(root):
        print("speedups not loaded from the tree:", origin)
        return UNTESTABLE

    class Sub(str):
        pass

    class Thing:
        def __str__(self):
            return Sub("<b>&</b>")

    try:
        result = markupsafe.escape(Thing())
    except SystemError as exc:
        msg = str(exc)
        # Only the documented symptom counts: the C helper _escape_inner
        # returning NULL with no exception.  Other SystemErrors (e.g. a
        # half-initialised extension module) are a different breakage.
        if "_escape_inner" in msg and "without setting an exception" in msg:
            print("regression: SystemError from escape():", msg)
            return 1
        print("unexpected SystemError:", msg)
        return UNTESTABLE
    except Exception as exc:
        print("unexpected exception:", repr(exc))
        return UNTESTABLE

    if str(result) == "&lt;b&gt;&amp;&lt;/b&gt;":
        print("ok:", result)
        return 0
    print("unexpected result:", repr(result))
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "markupsafe", "markupsafe._speedups")
