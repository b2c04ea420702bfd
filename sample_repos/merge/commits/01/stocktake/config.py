"""Settings shared by the stocktake modules: change them here, not where they are used."""

# Separator between the fields of a delimited file.
FIELD_SEPARATOR = ","

# Lines of the inventory that start with this are notes for people, not stock.
NOTE_MARK = "#"

# An item is due for reordering when fewer than this many are left at a site.
REORDER_BELOW = 10

# The sites, in the order the report lists them.
SITES = ("north", "harbour", "airport")
