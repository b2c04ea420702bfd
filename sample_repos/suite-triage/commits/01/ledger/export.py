"""Invoices as CSV for the accounting system, which reads ISO dates and plain amounts."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from ledger.invoice import Invoice
from ledger.terms import DEFAULT_TERMS, due_date

HEADER = ("number", "customer", "issued", "terms", "due", "net", "tax", "total")


def row(invoice: Invoice) -> list[str]:
    """The CSV fields of one invoice."""
    terms = invoice.terms or DEFAULT_TERMS
    return [
        invoice.number,
        invoice.customer,
        invoice.issued.isoformat(),
        terms,
        due_date(invoice.issued, terms).isoformat(),
        f"{invoice.subtotal() - invoice.discount():.2f}",
        f"{invoice.tax():.2f}",
        f"{invoice.total():.2f}",
    ]


def to_csv(invoices: Iterable[Invoice]) -> str:
    """A header and one row per invoice, with the accounting system's line ends (\\r\\n)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADER)
    writer.writerows(row(invoice) for invoice in invoices)
    return out.getvalue()
