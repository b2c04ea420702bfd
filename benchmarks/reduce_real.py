"""Real failing inputs for `benchmarks/reduce_peers.py`: crashes of real programs, at the version
that had the bug, each made here at run time from pinned sources, with the issue it comes from.
"""

from __future__ import annotations

from collections.abc import Callable

from reduce_inputs import Input, Setup

INPUTS: dict[str, Callable[[Setup], Input]] = {}
