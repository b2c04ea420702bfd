"""The reorder list for purchasing: a delimited text file, one row per item to reorder."""

from stocktake import config


def shortfalls(items):
    """(sku, site, how many to order) for each item below the reorder level, sorted."""
    return sorted(
        (item.sku, item.site, config.REORDER_BELOW - item.count)
        for item in items
        if item.count < config.REORDER_BELOW
    )


def row_text(row):
    """One row of the list as a line of the file."""
    cells = [str(value) for value in row]
    return config.FIELD_SEPARATOR.join(cells) + "\n"


def write_reorder(items, path):
    """Write the reorder list to path; returns how many items it lists."""
    rows = [("sku", "site", "order"), *shortfalls(items)]
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(row_text(row) for row in rows)
    return len(rows) - 1
