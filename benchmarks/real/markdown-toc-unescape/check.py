r"""Python-Markdown 3.4 regression: TOC token names keep escape placeholders.

3.4 (here 3.4.1) dropped the unescape() around the name the toc extension records in
``md.toc_tokens``, so a backslash escape in a heading (``### hello \[foo]``)
leaves the internal placeholder "\x0291\x03" in the name instead of "[".
3.4.4: "Unescape backslash escaped TOC token names" (#1360, reported as a
regression in 3.4).

Exit 0: the name is "hello [foo]"; 1: it holds the placeholder; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402

STX, ETX = "\x02", "\x03"


def main(markdown):

    def tokens(source):
        md = markdown.Markdown(extensions=["toc"])
        html = md.convert(source)
        return html, md.toc_tokens

    # Sanity: headings, their ids and the escapes in the HTML work as usual.
    html, plain = tokens("### plain title\n")
    if [(t["level"], t["id"], t["name"]) for t in plain] != [(3, "plain-title", "plain title")]:
        print("toc tokens broken in an unrelated way:", plain)
        return UNTESTABLE
    html, escaped = tokens("### hello \\[foo]\n")
    if "hello [foo]" not in html or [(t["level"], t["id"]) for t in escaped] != [(3, "hello-foo")]:
        print("escaped heading broken in an unrelated way:", repr(html), escaped)
        return UNTESTABLE

    name = escaped[0]["name"]
    if name == "hello [foo]":
        print("ok: the token name is unescaped")
        return 0
    if STX in name and ETX in name:
        print("regression: the token name holds the escape placeholder:", repr(name))
        return 1
    print("unexpected name:", repr(name))
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "markdown")
