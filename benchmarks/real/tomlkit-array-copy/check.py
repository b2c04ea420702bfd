"""tomlkit 0.11.2 regression: a copied array gains a None item.

0.11.2 keeps an array's items in groups (indent, value, comma, comment), and a
group that holds only a comment has a Null value, which Array.__init__ does
not leave out; copy.copy() of a parsed array with a comment line therefore
yields [None, "a", "b"] instead of ["a", "b"] (poetry's classifiers broke).
0.11.3: "Fix a regression issue that copying an array results in extra None
items" (#221).

Exit 0: the copy equals the original; 1: it has the extra None; 125: cannot tell.
"""

import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402

SOURCE = 'classifiers = [\n# comment\n    "a",\n    "b",\n]\n'


def main(tomlkit):

    doc = tomlkit.parse(SOURCE)
    array = doc["classifiers"]
    # Sanity: the document parses and renders as usual, and a plain array copies.
    if list(array) != ["a", "b"] or tomlkit.dumps(doc) != SOURCE:
        print("parsing broken in an unrelated way:", list(array), repr(tomlkit.dumps(doc)))
        return UNTESTABLE
    plain = tomlkit.parse("x = [1, 2]\n")["x"]
    if list(copy.copy(plain)) != [1, 2]:
        print("copying broken in an unrelated way:", list(copy.copy(plain)))
        return UNTESTABLE

    copied = list(copy.copy(array))
    if copied == ["a", "b"]:
        print("ok: the copy equals the original")
        return 0
    if [item for item in copied if item is not None] == ["a", "b"]:
        print("regression: the copy has None items:", copied)
        return 1
    print("unexpected copy:", copied)
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "tomlkit")
