"""Writing sales back out as CSV, for the accounting system."""

import csv

from csvreport import settings


def export_csv(sales, path):
    """Write sales to path in the configured encoding and delimiter."""
    with open(path, "w", encoding=settings.ENCODING, newline="") as fh:
        writer = csv.writer(fh, delimiter=settings.DELIMITER)
        writer.writerow(["date", "customer", "product", "quantity", "unit_price"])
        for sale in sales:
            writer.writerow([sale.date, sale.customer, sale.product, sale.quantity, sale.unit_price])
