"""Settings that differ between installations: edit them here, not in the modules that use them."""

# The currency of amounts that name none.
CURRENCY = "EUR"

# How the command line prints dates, as a strftime format.
DATE_FORMAT = "%Y-%m-%d"

# Days after the due date before an invoice counts as overdue.
GRACE_DAYS = 0
