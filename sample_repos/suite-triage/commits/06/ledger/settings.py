"""Settings that differ between installations: edit them here, not in the modules that use them."""

# The currency of amounts that name none.
CURRENCY = "EUR"

# How the command line prints dates, as a strftime format.
DATE_FORMAT = "%d/%m/%Y"

# Days after the due date before an invoice counts as overdue.
GRACE_DAYS = 0

# The fee that a second or final reminder adds to the amount owed.
REMINDER_FEE = "5.00"
