"""sqlparse 0.4.0 regression: the IN keyword is lexed as a comparison operator.

0.4.0 started treating ``IN`` as ``Operator.Comparison`` (so ``a IN (1, 2)``
became a Comparison group); 0.4.4 reverted that because IN is expected to be
a plain keyword (sqlparse issue 694).

Exit 0: IN is a Keyword; 1: IN is a comparison operator; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(sqlparse, T):

    sql = "select * from t where a in (1, 2)"
    stmt = sqlparse.parse(sql)[0]
    if str(stmt) != sql:
        print("statement does not round-trip:", repr(str(stmt)))
        return UNTESTABLE
    ins = [tok for tok in stmt.flatten() if tok.value.lower() == "in"]
    if len(ins) != 1:
        print("expected exactly one IN token, got", ins)
        return UNTESTABLE
    ttype = ins[0].ttype
    if ttype in T.Operator.Comparison:
        print("regression: IN lexed as", ttype)
        return 1
    if ttype is T.Keyword:
        print("ok: IN is", ttype)
        return 0
    print("unexpected token type for IN:", ttype)
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "sqlparse", "sqlparse.tokens")
