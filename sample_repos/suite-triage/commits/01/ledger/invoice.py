"""Invoices: lines of goods, a discount, the tax on what is left, and the total to pay."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from ledger import tax, terms
from ledger.money import format_amount, round_cents, to_decimal


@dataclass(frozen=True)
class Line:
    """`quantity` items of one article at `unit_price` each, net of tax."""

    description: str
    quantity: int
    unit_price: Decimal
    category: str = "standard"

    def net(self) -> Decimal:
        return self.quantity * self.unit_price


@dataclass
class Invoice:
    """One invoice to one customer. Amounts are exact until the totals round them."""

    number: str
    customer: str
    issued: date
    terms: str = "net30"
    discount_percent: Decimal = Decimal(0)
    lines: list[Line] = field(default_factory=list)

    def add(
        self,
        description: str,
        quantity: int,
        unit_price: int | str | Decimal,
        category: str = "standard",
    ) -> Line:
        """Add a line (the price as a str or a Decimal, never a float) and return it."""
        if quantity < 1:
            raise ValueError(f"{description}: quantity {quantity} is not positive")
        line = Line(description, quantity, to_decimal(unit_price), category)
        self.lines.append(line)
        return line

    def subtotal(self) -> Decimal:
        """The sum of the lines, before the discount and tax."""
        return sum((line.net() for line in self.lines), Decimal(0))

    def discount(self) -> Decimal:
        """The discount on the subtotal, rounded to the cent."""
        return round_cents(self.subtotal() * self.discount_percent / 100)

    def tax(self) -> Decimal:
        """The tax on every line once discounted, each line rounded to the cent."""
        kept = 1 - self.discount_percent / 100
        taxes = (tax.tax_for(line.net() * kept, line.category) for line in self.lines)
        return sum(taxes, Decimal(0))

    def total(self) -> Decimal:
        """What the customer pays."""
        return self.subtotal() - self.discount() + self.tax()

    def due(self) -> date:
        return terms.due_date(self.issued, self.terms)

    def summary(self) -> str:
        """One line for a list of invoices."""
        due = terms.format_day(self.due())
        return f"{self.number} {self.customer}: {format_amount(self.total())}, due {due}"
