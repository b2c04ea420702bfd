"""Real failing inputs for `benchmarks/reduce_peers.py`: crashes of real programs, at the version
that had the bug, each made here at run time from pinned sources, with the issue it comes from
(C compilers: `reduce_real_c.py`; Python and structured data: `reduce_real_py.py`)."""

from __future__ import annotations

from collections.abc import Callable

import reduce_real_c
import reduce_real_py
from reduce_inputs import Input, Setup

INPUTS: dict[str, Callable[[Setup], Input]] = {**reduce_real_c.INPUTS, **reduce_real_py.INPUTS}
