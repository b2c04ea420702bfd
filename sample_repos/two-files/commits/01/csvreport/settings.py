"""Settings shared by the reader, the report and the exporter."""

# Field separator of the shop's CSV export.
DELIMITER = ";"

# Encoding of the files that export_csv writes.
ENCODING = "utf-8"

# Digits after the decimal point in money columns.
DECIMALS = 2

# Report title; {month} is replaced by the month of the data.
TITLE = "Sales report for {month}"

# Customers with at least this revenue are listed as top customers.
TOP_CUSTOMER_THRESHOLD = 100
