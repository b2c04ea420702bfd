"""benchmarks/RESULTS.md is shared by several benchmarks: each one rewrites only its section."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
# ddchange's runs that are not the search's: the pre-flight and the checks at the end
OUTSIDE_SEARCH = ("good", "bad", "confirm")
TITLE = "# Benchmark results\n"


def with_section(document: str, heading: str, section: str) -> str:
    """`document` with the section under `heading` replaced by `section` (appended if absent)."""
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(document):
        return pattern.sub(lambda _: section, document)
    return document.rstrip("\n") + "\n\n" + section


def write_section(heading: str, body: str) -> None:
    """Put `heading` and `body` into RESULTS.md, keeping every other benchmark's section."""
    existing = RESULTS.read_text() if RESULTS.exists() else TITLE
    section = f"{heading}\n\n{body.rstrip()}\n\n"
    RESULTS.write_text(with_section(existing, heading, section).rstrip("\n") + "\n")
