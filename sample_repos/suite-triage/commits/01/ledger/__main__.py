"""python3 -m ledger ISSUED TERMS: when an invoice issued on ISSUED (YYYY-MM-DD) is due."""

import sys
from datetime import date

from ledger import settings, terms


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    issued = date.fromisoformat(argv[0])
    due = terms.due_date(issued, argv[1])
    shown = settings.DATE_FORMAT
    print(f"issued {issued.strftime(shown)}, due {due.strftime(shown)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
