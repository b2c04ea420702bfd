"""Jinja 3.0.0 regression: the ``in`` operator on an undefined value raises.

3.0.0 added ``__contains__`` to the methods of ``Undefined`` that raise UndefinedError (meant
for StrictUndefined, #1198, PR #1204), so ``{% if 'n' in x %}`` with an undefined ``x``, false
in 2.11, fails to render. 3.0.2: "Revert an unintended change that caused Undefined to act
like StrictUndefined for the in operator" (issue #1448).

Exit 0: the test is false and the template renders; 1: UndefinedError; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402

TEMPLATE = "{% if 'n' in x %}yes{% else %}no{% endif %}"


def main(jinja2):
    env = jinja2.Environment()
    template = env.from_string(TEMPLATE)

    # Sanity: with x defined the test runs as usual.
    if (template.render(x="n"), template.render(x="")) != ("yes", "no"):
        print("rendering broken in an unrelated way")
        return UNTESTABLE

    try:
        got = template.render()
    except jinja2.UndefinedError as exc:
        print("regression: 'in' on an undefined value raises:", exc)
        return 1
    if got == "no":
        print("ok: 'n' in undefined is false")
        return 0
    print("unexpected output:", repr(got))
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "jinja2")
