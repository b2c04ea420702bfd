"""Werkzeug 2.3.0: three regressions fixed together in 2.3.1, one test each, and one test that
passes on both releases; each test's result goes to report.xml (JUnit XML).

- query_plus: MapAdapter.build leaves a "+" in a query argument unencoded, so it reads back as
  a space (#2657).
- cookie_quoting: dump_cookie quotes a value holding "/", ":" or "=", characters RFC 6265
  allows unquoted (#2659).
- authorization_eq: two Authorization objects parsed from the same header are not equal (2.2.3's
  was a dict; 2.3.0's new class has no __eq__) (#2665).
- plain_query: a query argument without "+" builds and reads back (passes on both).

Exit 0: all pass; 1: some test sees its regression; 125: cannot tell.
"""

import os
import sys
import warnings
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import Unexpected, suite  # noqa: E402


def query(value):
    from werkzeug import routing

    adapter = routing.Map([routing.Rule("/p/<name>", endpoint="p")]).bind("example.org")
    parts = urlsplit(adapter.build("p", {"name": "a", "q": value}))
    if parts.path != "/p/a":
        raise Unexpected(parts)
    return parse_qs(parts.query).get("q")


def query_plus():
    got = query("x+y z")
    if got == ["x y z"]:
        raise AssertionError("the '+' reads back as a space")
    if got != ["x+y z"]:
        raise Unexpected(got)


def plain_query():
    got = query("x y")
    if got != ["x y"]:
        raise AssertionError(got)


def cookie_quoting():
    from werkzeug.http import dump_cookie

    got = dump_cookie("k", "x/y:z=w").split(";")[0]
    if got == 'k="x/y:z=w"':
        raise AssertionError("a value RFC 6265 allows is quoted")
    if got != "k=x/y:z=w":
        raise Unexpected(got)


def authorization_eq():
    from werkzeug.http import parse_authorization_header

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        one, two = (parse_authorization_header("Basic dXNlcjpwYXNz") for _ in range(2))
    if one is None or one.get("username") != "user":
        raise Unexpected(one)
    if one != two:
        raise AssertionError("two parses of the same header are not equal")


TESTS = {
    "query_plus": query_plus,
    "cookie_quoting": cookie_quoting,
    "authorization_eq": authorization_eq,
    "plain_query": plain_query,
}

if __name__ == "__main__":
    suite(TESTS, "werkzeug")
