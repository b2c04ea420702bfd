"""Sales tax by category of goods, at the rates of the tax office's current table."""

from decimal import Decimal

from ledger.money import round_cents

RATES = {
    "standard": Decimal("0.20"),
    "reduced": Decimal("0.055"),
    "books": Decimal("0.055"),
    "food": Decimal("0.055"),
    "zero": Decimal("0"),
}


def rate(category: str) -> Decimal:
    """The tax rate of a category. An unknown category is an error, never a zero rate."""
    try:
        return RATES[category]
    except KeyError:
        raise ValueError(f"unknown tax category {category!r}") from None


def tax_for(net: Decimal, category: str) -> Decimal:
    """The tax on a net amount of goods of `category`, rounded to the cent once, on the
    amount: never add up taxes rounded per item."""
    return round_cents(net * rate(category))


def gross(net: Decimal, category: str) -> Decimal:
    """What a customer pays for `net` worth of goods of `category`."""
    return net + tax_for(net, category)
