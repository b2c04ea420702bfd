"""The stock report: for each site, the items, their value and what to reorder."""

from stocktake import config


def money(cents):
    """1840 -> '18.40'."""
    return f"{cents // 100}.{cents % 100:02d}"


def stock_value(items):
    """What the items on hand are worth, in cents."""
    return sum(item.count * item.unit_cents for item in items)


def by_site(items):
    """{site: items there}: the configured sites first, in order, then any others."""
    grouped = {site: [] for site in config.SITES}
    for item in items:
        grouped.setdefault(item.site, []).append(item)
    return grouped


def lines(items, rejected):
    """The report as lines of text: one block per site, the total, then unreadable lines."""
    out = []
    for site, stock in by_site(items).items():
        out.append(f"{site:<10} {len(stock):>3} items {money(stock_value(stock)):>10}")
        low = sorted(item.sku for item in stock if item.count < config.REORDER_BELOW)
        if low:
            out.append(f"{'':<10} reorder: {', '.join(low)}")
    out.append(f"{'all sites':<10} {len(items):>3} items {money(stock_value(items)):>10}")
    if rejected:
        out.append(f"not read: line {', '.join(str(number) for number in rejected)}")
    return out
