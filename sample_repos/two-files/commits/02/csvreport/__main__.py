"""python3 -m csvreport SALES.csv [--export OUT.csv]: print the monthly sales report."""

import sys

from csvreport.export import export_csv
from csvreport.reader import months, read_sales
from csvreport.report import render
from csvreport.validate import check_sales


def main(argv):
    if not argv or len(argv) not in (1, 3) or (len(argv) == 3 and argv[1] != "--export"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sales = read_sales(argv[0])
    check_sales(sales)
    if len(argv) == 3:
        export_csv(sales, argv[2])
    for month in months(sales):
        in_month = [sale for sale in sales if sale.date.startswith(month)]
        print("\n".join(render(in_month, month)))
    return 0


sys.exit(main(sys.argv[1:]))
