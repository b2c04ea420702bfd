"""click 8.1.0 regression: click.Path changed its positional parameter order.

8.1.0 reordered Path's parameters (``readable`` before ``writable``, and a new
``executable`` in the middle), so code passing them positionally silently got
different checks; 8.1.2 restored the old order (click issue #2235).

Exit 0: Path(False, True, True, True, False) means writable=True,
readable=False as before; 1: the two flags come out swapped; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(click):

    # exists, file_okay, dir_okay, then writable=True, readable=False in the
    # historical order.
    p = click.Path(False, True, True, True, False)
    got = (p.writable, p.readable)
    if got == (True, False):
        print("ok: positional order unchanged")
        return 0
    if got == (False, True):
        print("regression: writable/readable swapped:", got)
        return 1
    print("unexpected attributes:", got)
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "click")
