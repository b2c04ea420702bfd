"""`python -m ddchange`: the same as the `ddchange` command."""

from __future__ import annotations

from ddchange.cli import main

main()
