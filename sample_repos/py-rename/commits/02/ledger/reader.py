"""Reading a month's expenses: one "date;description;amount;currency" line per expense."""

from dataclasses import dataclass

from ledger.rates import known


@dataclass(frozen=True)
class Expense:
    date: str
    description: str
    amount: int  # cents of currency; negative for a refund
    currency: str


def cents(text):
    """Cents from a decimal amount such as "12.50" or "-3.05"."""
    return round(float(text) * 100)


def parse_line(text):
    """An Expense from "date;description;amount;currency"."""
    date, description, amount, currency = text.split(";")
    if not known(currency):
        raise ValueError(f"no rate for {currency}")
    return Expense(date, description, cents(amount), currency)


def read_expenses(path):
    """Every expense in the file at path, in file order; a ValueError names the bad line."""
    expenses = []
    with open(path, encoding="utf-8") as fh:
        for number, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                expenses.append(parse_line(text.strip()))
            except ValueError as error:
                raise ValueError(f"{path}:{number}: {error}") from None
    return expenses
