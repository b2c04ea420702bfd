"""Mako 1.3.3 regression: a dict comprehension with an expression key in a
function of a Python block no longer compiles.

1.3.3 taught the identifier finder to skip the variables of comprehensions
inside functions (#320), but its visit_DictComp visits ``node.elt``, which a
DictComp does not have, when the key is not a plain name: compiling

    <% def getkeys(x):
           return {k[0]: 0 for k in x} %>

raises AttributeError.  1.3.4 (re-released as 1.3.5): "Fixed regression
caused by the fix for #320 ... would fail for expression oriented keys" (#398).

Exit 0: the template renders; 1: the AttributeError; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402

TEMPLATE = """<%
    def getkeys(x):
        return {KEY: 0 for k in x}
%>${ ','.join(sorted(getkeys(['ab', 'cd']))) }"""


def main(template):

    def render(key):
        return template.Template(text=TEMPLATE.replace("KEY", key)).render()

    # Sanity: templates with a function in a Python block, and a comprehension
    # whose key is a plain name, compile and render as usual.
    plain = render("k")
    if plain != "ab,cd":
        print("rendering broken in an unrelated way:", repr(plain))
        return UNTESTABLE

    try:
        keyed = render("k[0]")
    except AttributeError as exc:
        if "DictComp" in str(exc) and "elt" in str(exc):
            print("regression:", exc)
            return 1
        print("unexpected AttributeError:", exc)
        return UNTESTABLE
    if keyed == "a,c":
        print("ok: the expression key compiles")
        return 0
    print("unexpected output:", repr(keyed))
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "mako.template")
