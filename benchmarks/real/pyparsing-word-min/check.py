"""pyparsing 3.1.0 regression: Word(..., min=N) ignores the minimum length.

In 3.1.0 the regular expression that Word builds for itself drops the
minimum when no max is given, so e.g. Word(alphas, min=3) accepts "ab"
(pyparsing issue #502, "Fixed regression in Word(min)", fixed in 3.1.1).

Exit 0: minimum honoured; 1: a too-short word is accepted; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(pp):

    # Sanity: a long enough word must still match, else something else is broken.
    word = pp.Word(pp.alphas, min=3)
    try:
        ok = word.parseString("abcd", parseAll=True)
    except Exception as exc:
        print("a valid word failed to parse:", repr(exc))
        return UNTESTABLE
    if list(ok) != ["abcd"]:
        print("unexpected parse result:", list(ok))
        return UNTESTABLE

    too_short = [
        (pp.Word(pp.alphas, min=3), "ab"),
        (pp.Word(pp.alphas, pp.nums, min=3), "a1"),
    ]
    accepted = []
    for expr, text in too_short:
        try:
            res = expr.parseString(text, parseAll=True)
        except pp.ParseException:
            continue
        accepted.append((text, list(res)))
    if accepted:
        print("regression: too-short input accepted:", accepted)
        return 1
    print("ok: min length enforced")
    return 0


if __name__ == "__main__":
    run(main, "pyparsing")
