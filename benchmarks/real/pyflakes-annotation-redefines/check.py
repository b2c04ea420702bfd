"""pyflakes 2.3.0 regression: a bare annotation "redefines" an import.

2.3.0 binds the target of an annotation without a value (``bar: int``), and
that binding counts as a redefinition, so

    from foo import bar
    bar: int
    print(bar)

reports "redefinition of unused 'bar'".  2.3.1: "Fix regression in 2.3.0:
type annotations no longer redefine imports".

Exit 0: no message; 1: the redefinition message; 125: cannot tell.
"""

import ast
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402

ANNOTATED = "from foo import bar\nbar: int\nprint(bar)\n"


def main(checker):

    def found(source):
        reported = checker.Checker(ast.parse(source)).messages
        return [(type(m).__name__, m.message_args) for m in reported]

    # Sanity: unused imports and real redefinitions are still reported.
    if found("import os\n") != [("UnusedImport", ("os",))]:
        print("unused import not reported as usual:", found("import os\n"))
        return UNTESTABLE
    real = found("import os\nos = 1\n")
    if ("RedefinedWhileUnused", ("os", 1)) not in real:
        print("real redefinition not reported as usual:", real)
        return UNTESTABLE

    got = found(ANNOTATED)
    if got == []:
        print("ok: the annotation redefines nothing")
        return 0
    if got == [("RedefinedWhileUnused", ("bar", 1))]:
        print("regression: the annotation redefines the import")
        return 1
    print("unexpected messages:", got)
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "pyflakes.checker")
