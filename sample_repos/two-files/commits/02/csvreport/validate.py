"""Sanity checks on sales before they are reported."""


def check_sales(sales):
    """Raise ValueError for a sale with a quantity below one or a negative price."""
    for sale in sales:
        if sale.quantity < 1 or sale.unit_price < 0:
            raise ValueError(f"implausible sale: {sale}")
