"""stocktake: what is on the shelves at each site, and what to reorder."""

__version__ = "3.0"
