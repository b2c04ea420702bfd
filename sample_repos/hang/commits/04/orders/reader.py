"""Reading the daily order file: one order line "sku,quantity,unit_cents" per line."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    """One order line: quantity items of sku at unit_cents each."""

    sku: str
    quantity: int
    unit_cents: int


def parse_line(text):
    """A Line from "sku,quantity,unit_cents"; blanks around the fields are allowed."""
    sku, quantity, unit_cents = (field.strip() for field in text.split(","))
    return Line(sku, int(quantity), int(unit_cents))


def is_order_line(text):
    """Order lines have exactly three comma-separated fields; anything else is ignored."""
    return text.count(",") == 2 and not text.startswith("#")


def read_lines(path):
    """Every order line of the file at path, up to the END line that closes the orders."""
    lines = []
    with open(path, encoding="utf-8") as fh:
        while True:
            text = fh.readline().strip()
            if text == "END":
                break
            if is_order_line(text):
                lines.append(parse_line(text))
    return lines


def total_quantity(lines):
    """Number of items over all lines."""
    return sum(line.quantity for line in lines)


def skus(lines):
    """The distinct SKUs, in alphabetical order."""
    return sorted({line.sku for line in lines})
