"""Expense lines: each expense in its own currency and in euros."""

from ledger.rates import convert as to_eur


def euros(cents):
    """Cents as an amount with two decimals: "-12.05"."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def eur_of(expense):
    """The expense in euro cents."""
    return to_eur(expense.amount, expense.currency)


def line(expense):
    """The report line of one expense."""
    amount = f"{euros(expense.amount):>8} {expense.currency}"
    return f"{expense.date}  {expense.description:<18} {amount}  {euros(eur_of(expense)):>8} EUR"
