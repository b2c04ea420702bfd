"""packaging 22.0 regression: Marker.evaluate() crashes when "extra" is None.

22.0 started normalising extra names (PEP 685) while evaluating markers and
passes the environment's value straight to canonicalize_name(), so an
environment such as {"extra": None} (which tools used to pass) raises
TypeError instead of evaluating to False.  Fixed in 23.0 ("Allow "extra" to
be None in the marker environment", packaging issue #650).

Exit 0: evaluates to False; 1: the TypeError; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(markers):

    marker = markers.Marker('extra == "foo"')
    # Sanity: ordinary string values still evaluate as before.
    if (
        marker.evaluate({"extra": "foo"}) is not True
        or marker.evaluate({"extra": "bar"}) is not False
    ):
        print("marker evaluation broken in an unrelated way")
        return UNTESTABLE

    try:
        result = marker.evaluate({"extra": None})
    except TypeError as exc:
        msg = str(exc)
        if "NoneType" in msg or "string" in msg:
            print("regression: TypeError for extra=None:", msg)
            return 1
        print("unexpected TypeError:", msg)
        return UNTESTABLE
    if result is False:
        print("ok: extra=None evaluates to False")
        return 0
    print("unexpected result:", repr(result))
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "packaging.markers")
