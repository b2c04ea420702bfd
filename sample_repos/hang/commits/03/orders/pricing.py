"""Prices in integer cents: bulk discount, shipping and VAT."""

VAT_PERCENT = 20
FREE_SHIPPING_FROM = 5000
SHIPPING = 490


def line_total(quantity, unit_cents):
    """Price of a line in cents: 10 or more items get 10 % off, rounded in the buyer's favour."""
    total = quantity * unit_cents
    discount = (total + 9) // 10 if quantity > 10 else 0
    return total - discount


def shipping(subtotal):
    """Shipping in cents: free from FREE_SHIPPING_FROM on."""
    return 0 if subtotal >= FREE_SHIPPING_FROM else SHIPPING


def vat(amount):
    """VAT included in a gross amount (amount * rate / (100 + rate)), in cents, rounded half up."""
    return (amount * VAT_PERCENT * 2 + (100 + VAT_PERCENT)) // ((100 + VAT_PERCENT) * 2)


def invoice(lines):
    """(subtotal, shipping, total, vat) for the order lines."""
    subtotal = sum(line_total(line.quantity, line.unit_cents) for line in lines)
    shipping_cents = shipping(subtotal)
    total = subtotal + shipping_cents
    return subtotal, shipping_cents, total, vat(total)
