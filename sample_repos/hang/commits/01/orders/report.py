"""The printed invoice."""

from orders.pricing import invoice, line_total


def euros(cents):
    """Cents as a euro amount with two decimals."""
    return f"{cents // 100}.{cents % 100:02d}"


def render(lines):
    """The invoice as a list of text lines."""
    out = []
    for line in lines:
        amount = line_total(line.quantity, line.unit_cents)
        out.append(f"{line.sku:<12} {line.quantity:>4} x {euros(line.unit_cents):>8} {euros(amount):>10}")
    subtotal, ship, total, vat = invoice(lines)
    out.append("-" * 39)
    out.append(f"{'subtotal':<29} {euros(subtotal):>10}")
    out.append(f"{'shipping':<29} {euros(ship):>10}")
    out.append(f"{'total':<29} {euros(total):>10}")
    out.append(f"{'incl. VAT':<29} {euros(vat):>10}")
    return out
