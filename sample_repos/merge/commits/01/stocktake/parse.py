"""Reading the inventory: a header line, then one `sku,site,count,unit cost` line per item.

Blank lines and notes (config.NOTE_MARK) are skipped. A line that is not an item is not fatal:
its number is reported, so that a typo in one count does not hide the whole stocktake.
"""

from dataclasses import dataclass

from stocktake import config


@dataclass(frozen=True)
class Item:
    sku: str
    site: str
    count: int
    unit_cents: int


def load(path):
    """(items, rejected): the items in the file at path, and the numbers of unreadable lines."""
    with open(path, encoding="utf-8") as src:
        numbered = list(enumerate(src.read().splitlines(), start=1))
    items, rejected = [], []
    for number, line in numbered[1:]:
        if not line.strip() or line.startswith(config.NOTE_MARK):
            continue
        item = item_of(line)
        if item is None:
            rejected.append(number)
        else:
            items.append(item)
    return items, rejected


def item_of(line):
    """The Item that one line describes, or None when it does not describe one."""
    fields = [field.strip() for field in line.split(",")]
    if len(fields) != 4 or not fields[2].isdigit():
        return None
    sku, site, count, cost = fields
    return Item(sku, site, int(count), cents(cost))


def cents(price):
    """'18.4' -> 1840: a price in whole units and up to two decimals, in cents."""
    units, _, fraction = price.partition(".")
    return int(units) * 100 + int(fraction.ljust(2, "0")[:2])
