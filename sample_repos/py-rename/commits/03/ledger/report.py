"""The month's report: one line per expense, the totals per currency, the total, the budget."""

from ledger import rates
from ledger.budget import status
from ledger.invoice import eur_of, euros, line


def by_currency(expenses):
    """(currency, total in cents of that currency) for each currency, sorted by currency."""
    totals = {}
    for expense in expenses:
        totals[expense.currency] = totals.get(expense.currency, 0) + expense.amount
    return sorted(totals.items())


def currency_lines(expenses):
    """One line per currency: its total, the rate, and the total in euros."""
    out = []
    for currency, amount in by_currency(expenses):
        rate = f"at {euros(rates.per_unit(currency))}"
        total = rates.to_base(amount, currency)
        out.append(f"{currency}  {rate:<27} {euros(amount):>8} {currency}  {euros(total):>8} EUR")
    return out


def render(expenses):
    """The report as a list of text lines."""
    out = [line(expense) for expense in expenses]
    out.append("-" * 54)
    out.extend(currency_lines(expenses))
    out.append("-" * 54)
    spent = sum(eur_of(expense) for expense in expenses)
    out.append(f"total   {euros(spent):>42} EUR")
    out.extend(status(spent))
    return out
