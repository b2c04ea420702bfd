"""Reminders for overdue invoices: which letter to send, and the fee it adds."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from ledger import settings, terms
from ledger.invoice import Invoice
from ledger.money import format_amount, to_decimal

# (days overdue, letter), firmest first: an invoice gets the first letter it is late enough for.
LETTERS = ((30, "final notice"), (14, "second reminder"), (1, "reminder"))


def letter_for(days_late: int) -> str | None:
    """The letter to send about an invoice `days_late` days overdue; None before the first."""
    for after, name in LETTERS:
        if days_late >= after:
            return name
    return None


def reminder_fee(days_late: int) -> Decimal:
    """The fee a letter adds: none for the first reminder, a fixed fee after that."""
    return to_decimal(settings.REMINDER_FEE) if days_late >= 14 else Decimal(0)


def reminder(invoice: Invoice, today: date) -> str | None:
    """The text of the letter to send about `invoice` on `today`, or None if there is none."""
    late = terms.days_overdue(invoice.due(), today)
    name = letter_for(late)
    if name is None:
        return None
    owed = format_amount(invoice.total() + reminder_fee(late))
    return f"{name.capitalize()}: invoice {invoice.number} is {late} days overdue, {owed} to pay."
