import unittest
from datetime import date
from decimal import Decimal

from ledger.invoice import Invoice


def acme(**options):
    return Invoice("2024-0007", "Acme", date(2024, 3, 1), **options)


class InvoiceTest(unittest.TestCase):
    def test_subtotal(self):
        invoice = acme()
        invoice.add("Paper, A4", 2, "4.20")
        invoice.add("Stapler", 1, "12.00")
        self.assertEqual(invoice.subtotal(), Decimal("20.40"))

    def test_discount_rounds_half_a_cent_up(self):
        invoice = acme(discount_percent=Decimal(5))
        invoice.add("Toner", 1, "24.50")
        # 5% of 24.50 = 1.225
        self.assertEqual(invoice.discount(), Decimal("1.23"))

    def test_total_with_the_reduced_rate(self):
        invoice = acme()
        invoice.add("Coffee", 3, "1.00", "reduced")
        # 3.00 + 0.165 tax
        self.assertEqual(invoice.total(), Decimal("3.17"))

    def test_tax_after_the_discount(self):
        invoice = acme(discount_percent=Decimal(10))
        invoice.add("Chair", 10, "5.00")
        self.assertEqual(invoice.tax(), Decimal("9.00"))
        self.assertEqual(invoice.total(), Decimal("54.00"))

    def test_balance_after_two_payments(self):
        invoice = acme()
        invoice.add("Paper, A4", 10, "4.20")
        self.assertEqual(invoice.balance(Decimal("20.00"), Decimal("30.00")), Decimal("0.40"))

    def test_due_date_follows_the_terms(self):
        self.assertEqual(acme(terms="net15").due(), date(2024, 3, 16))


class SummaryTest(unittest.TestCase):
    def test_summary(self):
        invoice = acme()
        invoice.add("Paper, A4", 10, "4.20")
        self.assertEqual(invoice.summary(), "2024-0007 Acme: EUR 50.40, due 2024-03-31")

    def test_summary_of_an_invoice_due_on_receipt(self):
        invoice = acme(terms="receipt")
        invoice.add("Atlas", 1, "99.90", "books")
        self.assertEqual(invoice.summary(), "2024-0007 Acme: EUR 105.39, due 2024-03-01")
