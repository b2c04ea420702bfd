"""Werkzeug 2.3.0 regression: a "+" in a query argument is not percent-encoded.

2.3.0 builds query strings with its new _urlencode(), which passes "+" as a
safe character to urllib's urlencode(); but "+" in a query string means a
space, so MapAdapter.build("p", {"q": "x+y z"}) gives "?q=x+y+z", which reads
back as "x y z".  2.3.1: "Percent-encode plus (+) when building URLs and in
test requests" (#2657).

Exit 0: the argument reads back as it was; 1: its "+" reads back as a space;
125: cannot tell.
"""

import os
import sys
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(routing):

    adapter = routing.Map([routing.Rule("/p/<name>", endpoint="p")]).bind("example.org")

    def query(value):
        url = adapter.build("p", {"name": "a", "q": value})
        parts = urlsplit(url)
        if parts.path != "/p/a":
            raise ValueError(f"unexpected path in {url!r}")
        return parse_qs(parts.query).get("q")

    # Sanity: URLs with plain and spaced query arguments build as usual.
    if query("xy") != ["xy"] or query("x y") != ["x y"]:
        print("URL building broken in an unrelated way:", query("xy"), query("x y"))
        return UNTESTABLE

    got = query("x+y z")
    if got == ["x+y z"]:
        print("ok: the '+' is encoded")
        return 0
    if got == ["x y z"]:
        print("regression: the '+' reads back as a space")
        return 1
    print("unexpected query value:", got)
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "werkzeug.routing")
