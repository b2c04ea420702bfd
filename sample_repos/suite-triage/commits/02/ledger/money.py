"""Amounts of money: exact decimals, rounded to the cent only where an amount is final."""

import decimal
from decimal import Decimal

from ledger import settings

CENT = Decimal("0.01")


def to_decimal(number: int | str | Decimal) -> Decimal:
    """An amount as an exact Decimal. Floats are refused: 0.1 has no exact float, nor do most
    other cents."""
    if isinstance(number, float):
        raise TypeError("amounts are never floats: pass a str, an int or a Decimal")
    return Decimal(number)


def round_cents(exact: Decimal) -> Decimal:
    """`exact` rounded to the cent, half a cent up (0.125 -> 0.13), as the tax office
    rounds."""
    if not exact.is_finite():
        raise ValueError(f"{exact} is no amount of money: it has no cents to round to")
    # Adding 0 turns -0.00 (a refund of less than half a cent) into 0.00.
    return exact.quantize(CENT, rounding=decimal.ROUND_HALF_UP) + 0


def split(total: Decimal, parts: int) -> list[Decimal]:
    """`total` shared in `parts` amounts of whole cents that add up to it exactly; the first
    ones get the cents left over."""
    if parts < 1:
        raise ValueError("split into at least one part")
    cents = int(round_cents(total) / CENT)
    share, left = divmod(cents, parts)
    return [(share + (i < left)) * CENT for i in range(parts)]


def format_amount(amount: Decimal, currency: str = settings.CURRENCY) -> str:
    """`amount` as invoices print it: "EUR 1,234.50"."""
    return f"{currency} {round_cents(amount):,.2f}"
