"""python-dateutil 2.7.0 regression: the parser raises decimal's errors instead of ValueError.

2.7.0 parses the minutes of "HH:MM" with ``Decimal`` where 2.6.1 used ``float``; for a token
that is not a number, ``Decimal`` raises ``decimal.InvalidOperation``, which is no ValueError,
so it escapes the parser's handling and its callers' ``except ValueError``. 2.7.1: "Fixed issue
where parser.parse would occasionally raise decimal.Decimal-specific error types rather than
ValueError" (issue #632, whose example is parse('1: test')).

Exit 0: parse('1: test') raises ValueError; 1: it raises a decimal error; 125: cannot tell.
"""

import decimal
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(parser):
    # Sanity: an ordinary time parses (ignoretz: 2.6.1's time zone step needs
    # collections.Callable, gone from Python 3.10 on).
    ordinary = parser.parse("2003-09-25 10:49", ignoretz=True)
    if (ordinary.year, ordinary.day, ordinary.hour, ordinary.minute) != (2003, 25, 10, 49):
        print("parsing broken in an unrelated way:", ordinary)
        return UNTESTABLE

    try:
        got = parser.parse("1: test", ignoretz=True)
    except ValueError as exc:
        print("ok: ValueError:", exc)
        return 0
    except decimal.DecimalException as exc:
        print("regression: a decimal error escapes the parser:", repr(exc))
        return 1
    print("unexpected: parsed as", got)
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "dateutil.parser")
