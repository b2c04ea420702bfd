"""attrs 20.1.0 regression: an inherited attribute no longer equals itself.

20.1.0 added an ``inherited`` field to ``attr.Attribute`` and took it into
account for equality and hashing, so the Attribute that a subclass inherits
compares unequal to (and hashes differently from) the very same Attribute on
the base class.  20.2.0 made eq/hash ignore ``inherited`` (attrs #684).

Exit 0: fields(Base).x == fields(Sub).x; 1: they differ; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(attr):

    @attr.s
    class Base:
        x = attr.ib(default=1)

    @attr.s
    class Sub(Base):
        y = attr.ib(default=2)

    # Sanity: the classes themselves must work as usual.
    obj = Sub()
    if (obj.x, obj.y) != (1, 2) or [a.name for a in attr.fields(Sub)] != ["x", "y"]:
        print("attrs classes broken in an unrelated way")
        return UNTESTABLE

    base_x = attr.fields(Base).x
    sub_x = attr.fields(Sub).x
    if base_x == sub_x and hash(base_x) == hash(sub_x):
        print("ok: inherited Attribute equals the base one")
        return 0
    # Only blame the regression if the two differ in nothing but "inherited".
    differing = [
        name
        for name in type(base_x).__slots__
        if getattr(base_x, name, None) != getattr(sub_x, name, None)
    ]
    if differing == ["inherited"]:
        print("regression: Attributes differ only by 'inherited' yet compare unequal")
        return 1
    print("attributes differ in other fields:", differing)
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "attr")
