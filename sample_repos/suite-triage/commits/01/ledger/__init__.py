"""ledger: invoices, sales tax and payment terms for a small business."""

__version__ = "3.0"
