"""docutils 0.18 regression: footnote_backlinks=False is ignored by the HTML writers.

0.18 rewrote the HTML footnote labels; depart_label() now takes the footnote's
backrefs whatever the "footnote_backlinks" setting says, so with the setting
off the output still gets the list of backlinks of a footnote referenced
twice, and a stray </a> after the label of a footnote referenced once.
0.18.1 reads the backrefs only when the setting is on ("Fix handling of
footnote_backlinks==False").

Exit 0: no backlinks with the setting off; 1: backlinks or a stray </a>;
125: cannot tell.
"""

import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402

SOURCE = """\
Text [#a]_ and [#b]_ and again [#b]_.

.. [#a] one ref
.. [#b] two refs
"""

REFERENCE = re.compile(r'<a class="footnote-reference[^"]*" href="#[^"]+" id="([^"]+)"')


def main(core):

    def body(backlinks):
        settings = {"footnote_backlinks": backlinks, "report_level": 5, "_disable_config": True}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = core.publish_parts(SOURCE, writer_name="html5", settings_overrides=settings)
        return parts["body"]

    on, off = body(True), body(False)
    ids = {backlinks: REFERENCE.findall(html) for backlinks, html in ((True, on), (False, off))}
    # Sanity: three footnote references, two footnotes, and backlinks when asked for.
    for html in (on, off):
        if "one ref" not in html or "two refs" not in html:
            print("footnotes missing from the output:", html)
            return UNTESTABLE
    if len(ids[True]) != 3 or len(ids[False]) != 3:
        print("footnote references not found:", ids)
        return UNTESTABLE
    if not all(f'href="#{ref}"' in on for ref in ids[True]):
        print("no backlinks even with footnote_backlinks on:", on)
        return UNTESTABLE

    backlinks = [ref for ref in ids[False] if f'href="#{ref}"' in off]
    opened, closed = off.count("<a "), off.count("</a>")
    if not backlinks and opened == closed:
        print("ok: no backlinks with footnote_backlinks off")
        return 0
    if backlinks or closed > opened:
        print(f"regression: backlinks to {backlinks}, {opened} <a> against {closed} </a>")
        return 1
    print("unbalanced links in an unrelated way:", off)
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "docutils.core")
