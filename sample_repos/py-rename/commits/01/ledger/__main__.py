"""python3 -m ledger FILE: the month's report for a file of expenses."""

import sys

from ledger.reader import read_expenses
from ledger.report import render


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("\n".join(render(read_expenses(argv[0]))))
    return 0


sys.exit(main(sys.argv[1:]))
