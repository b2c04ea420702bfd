"""csvreport: monthly sales report from the shop's CSV export."""

__version__ = "2.1"
