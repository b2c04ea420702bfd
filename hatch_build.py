"""The wheel's build hook: the man page, written from the click commands (ddchange.cli.manpage).

It is installed as share/man/man1/git-ddchange.1 (what `git ddchange --help` opens, through
`git help`) and share/man/man1/ddchange.1, under the environment's prefix: `man` finds them
there once that environment's bin directory is on PATH.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PAGES = ("git-ddchange.1", "ddchange.1")


class ManPageHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        sys.path.insert(0, str(Path(self.root) / "src"))
        from ddchange.cli import cli
        from ddchange.cli.manpage import render

        self._directory = Path(tempfile.mkdtemp(prefix="ddchange-man-"))
        page = render(cli)
        for name in PAGES:
            (self._directory / name).write_text(page)
            build_data["shared_data"][str(self._directory / name)] = f"share/man/man1/{name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        shutil.rmtree(self._directory, ignore_errors=True)
