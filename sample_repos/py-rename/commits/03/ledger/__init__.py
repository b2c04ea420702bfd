"""ledger: a month's expenses in several currencies, reported in euros."""

from ledger.rates import to_base

__version__ = "2.0"
