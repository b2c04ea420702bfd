"""click 8.1.0 regression: click.Path changed its positional parameter order.

8.1.0 reordered Path's parameters (``readable`` before ``writable``, and a new
``executable`` in the middle), so code passing them positionally silently got
different checks; 8.1.2 restored the old order (click issue #2235).

Exit 0: Path(False, True, True, True, False) means writable=True,
readable=False as before; 1: the two flags come out swapped; 125: cannot tell.
"""

import os
import sys

UNTESTABLE = 125

root = os.getcwd()
src = os.path.join(root, "src")
sys.path.insert(0, src if os.path.isdir(os.path.join(src, "click")) else root)


def main():
    try:
        import click
    except Exception as exc:
        print("cannot import click:", repr(exc))
        return UNTESTABLE

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
    try:
        code = main()
    except Exception as exc:
        print("unexpected error:", repr(exc))
        code = UNTESTABLE
    sys.exit(code)
