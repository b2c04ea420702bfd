"""idna 3.7 regression: a bare ValueError escapes idna.encode() instead of IDNAError.

When a zero-width non-joiner follows a code point that Python's unicodedata
does not know, the CONTEXTJ rule lookup raises ValueError.  Earlier releases
turned that into an IDNAError; 3.7 dropped the handler, so callers catching
IDNAError crash.  idna 3.8's changelog: "Fix regression where IDNAError
exception was not being produced for certain inputs".

The probe character (U+1E4D0, Unicode 15.0) must be unknown to this Python's
unicodedata (true for Python 3.11, Unicode 14); otherwise the check cannot tell.

Exit 0: IDNAError raised; 1: a non-IDNA ValueError escapes; 125: cannot tell.
"""

import os
import sys
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402

PROBE = "\U0001e4d0"  # NAG MUNDARI LETTER O, new in Unicode 15.0


def main(idna):
    if unicodedata.name(PROBE, None) is not None:
        print("this Python's unicodedata knows the probe character; cannot test")
        return UNTESTABLE

    # Sanity: ordinary names still work.
    if idna.encode("example.com") != b"example.com":
        print("idna.encode is broken in an unrelated way")
        return UNTESTABLE

    try:
        result = idna.encode(PROBE + "\u200c")
    except idna.IDNAError as exc:
        print("ok: IDNAError:", exc)
        return 0
    except ValueError as exc:
        print("regression: plain", type(exc).__name__, "escaped:", exc)
        return 1
    print("unexpected success:", repr(result))
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "idna")
