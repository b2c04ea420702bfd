"""Turning sales into the text of the monthly report."""

from collections import defaultdict

from csvreport import settings


def money(amount):
    """An amount of money as text, with settings.DECIMALS decimals."""
    return f"{amount:.{settings.DECIMALS}f}"


def revenue_by(sales, key):
    """Total revenue per value of key(sale), largest first, ties by name."""
    revenue = defaultdict(float)
    for sale in sales:
        revenue[key(sale)] += sale.total
    return sorted(revenue.items(), key=lambda item: (-item[1], item[0]))


def top_customers(sales):
    """(customer, revenue) pairs at or above settings.TOP_CUSTOMER_THRESHOLD."""
    ranked = revenue_by(sales, lambda sale: sale.customer)
    return [(name, total) for name, total in ranked if total >= settings.TOP_CUSTOMER_THRESHOLD]


def render(sales, month):
    """The report as a list of lines."""
    lines = [settings.TITLE.format(month=month), ""]
    lines.append("Revenue by product:")
    for product, total in revenue_by(sales, lambda sale: sale.product):
        lines.append(f"  {product:<20} {money(total):>10}")
    lines.append("")
    lines.append("Top customers:")
    for customer, total in top_customers(sales):
        lines.append(f"  {customer:<20} {money(total):>10}")
    grand_total = sum(sale.total for sale in sales)
    lines.append("")
    lines.append(f"Total: {money(grand_total)}")
    return lines
