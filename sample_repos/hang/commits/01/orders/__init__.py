"""orders: invoice totals for the shop's daily order file."""

__version__ = "3.0"
