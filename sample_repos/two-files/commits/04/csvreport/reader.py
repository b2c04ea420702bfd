"""Reading the shop's CSV export into Sale records."""

import csv
from dataclasses import dataclass

from csvreport import settings


@dataclass(frozen=True)
class Sale:
    """One line of the export."""

    date: str
    customer: str
    product: str
    quantity: int
    unit_price: float

    @property
    def total(self):
        return self.quantity * self.unit_price


def parse_row(row):
    """One CSV row (a list of strings) as a Sale."""
    if len(row) != 5:
        raise ValueError(f"expected 5 fields, got {len(row)}: {row!r}")
    date, customer, product, quantity, unit_price = row
    return Sale(date, customer.strip(), product.strip(), int(quantity), float(unit_price))


def is_comment(row):
    """True for empty rows and rows whose first cell starts with '#'."""
    return not row or row[0].startswith("#")


def read_sales(path):
    """Every sale in the CSV file at path, skipping the header row and comments."""
    with open(path, encoding=settings.ENCODING, newline="") as fh:
        rows = list(csv.reader(fh, delimiter=settings.DELIMITER))
    return [parse_row(row) for row in rows[1:] if not is_comment(row)]


def customers(sales):
    """The distinct customer names, sorted."""
    return sorted({sale.customer for sale in sales})


def months(sales):
    """The distinct months (YYYY-MM) of the sales, oldest first."""
    return sorted({sale.date[:7] for sale in sales})
