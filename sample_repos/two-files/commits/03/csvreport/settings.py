"""Settings shared by the reader, the report and the exporter."""

# Field separator of the shop's CSV export.
DELIMITER = ";"

# Encoding of the files that export_csv writes: the new accounting system reads ISO-8859-1.
ENCODING = "latin-1"

# Digits after the decimal point in money columns.
DECIMALS = 2

# Report title; {month} is replaced by the month of the data.
TITLE = "Sales report for {month}"

# Customers whose revenue in the month reaches this amount are listed as top customers.
TOP_CUSTOMER_THRESHOLD = 100
