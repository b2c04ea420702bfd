"""ddchange: delta debugging over version history (which changes between GOOD and BAD fail?)."""

from __future__ import annotations

__version__ = "0.1.0"
