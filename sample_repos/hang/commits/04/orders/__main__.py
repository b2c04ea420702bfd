"""python3 -m orders FILE: print the invoice for the order file FILE."""

import sys

from orders.reader import read_lines
from orders.report import render


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("\n".join(render(read_lines(argv[0]))))
    return 0


sys.exit(main(sys.argv[1:]))
