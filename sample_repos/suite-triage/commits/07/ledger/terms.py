"""Payment terms: when an invoice is due, and how late a payment is."""

from datetime import date, timedelta

from ledger import settings

# Days to pay, by the name an invoice gives its terms ("net30": 30 days after it is issued).
PAYMENT_TERMS = {"receipt": 0, "net15": 15, "net30": 30, "net60": 60, "net90": 90}

DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def due_date(issued: date, terms: str) -> date:
    """The day an invoice issued on `issued` with `terms` must be paid."""
    days = PAYMENT_TERMS.get(terms)
    if days is None:
        known = ", ".join(sorted(PAYMENT_TERMS))
        raise ValueError(f"unknown payment terms {terms!r} (known: {known})")
    return issued + timedelta(days=days)


def end_of_month(day: date) -> date:
    """The last day of the month of `day`: when "end of month" terms fall due."""
    return day.replace(day=DAYS_IN_MONTH[day.month - 1])


def days_overdue(due: date, today: date) -> int:
    """Days since the due date, less the grace period; 0 if the invoice is not overdue."""
    return max(0, (today - due).days - settings.GRACE_DAYS)


def format_day(when: date) -> str:
    """A day as statements and reminders print it, in the format the settings give.

    The accounting export writes ISO dates whatever this says (see export.py).
    """
    return when.strftime(settings.DATE_FORMAT)


def statement_line(due: date, today: date) -> str:
    """One line of a statement: when the invoice is due, or how late it is."""
    late = days_overdue(due, today)
    if late:
        return f"overdue since {format_day(due)} ({late} days)"
    return f"due {format_day(due)}"
