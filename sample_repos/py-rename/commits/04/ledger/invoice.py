"""Expense lines: each expense in its own currency and in euros."""

from ledger.rates import to_base as to_eur


def euros(cents):
    """Cents as an amount with two decimals: "-12.05"."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole}.{part:02d}"


def eur_of(expense):
    """The expense in euro cents."""
    return to_eur(expense.amount, expense.currency)


def line(expense):
    """The report line of one expense."""
    amount = f"{euros(expense.amount):>8} {expense.currency}"
    return f"{expense.date}  {expense.description:<18} {amount}  {euros(eur_of(expense)):>8} EUR"
