"""Reading the daily order file: one order line "sku,quantity,unit_cents" per line."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    sku: str
    quantity: int
    unit_cents: int


def parse_line(text):
    """A Line from "sku,quantity,unit_cents"."""
    sku, quantity, unit_cents = (field.strip() for field in text.split(","))
    return Line(sku, int(quantity), int(unit_cents))


def is_order_line(text):
    """Order lines have exactly three comma-separated fields; anything else is ignored."""
    return text.count(",") == 2 and not text.startswith("#")


def read_lines(path):
    """Every order line of the file at path, in file order."""
    lines = []
    with open(path, encoding="utf-8") as fh:
        for text in fh:
            text = text.strip()
            if is_order_line(text):
                lines.append(parse_line(text))
    return lines


def total_quantity(lines):
    """Number of items over all lines."""
    return sum(line.quantity for line in lines)


def skus(lines):
    """The distinct SKUs, sorted."""
    return sorted({line.sku for line in lines})
