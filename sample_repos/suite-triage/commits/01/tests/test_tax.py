import unittest
from decimal import Decimal

from ledger.tax import gross, rate, tax_for


class TaxTest(unittest.TestCase):
    def test_standard_rate(self):
        self.assertEqual(tax_for(Decimal("10.00"), "standard"), Decimal("2.00"))

    def test_zero_rate(self):
        self.assertEqual(gross(Decimal("7.30"), "zero"), Decimal("7.30"))

    def test_unknown_category_is_an_error(self):
        with self.assertRaises(ValueError):
            rate("luxury")

    def test_reduced_rate_rounds_half_a_cent_up(self):
        # 3.00 * 5.5% = 0.165
        self.assertEqual(tax_for(Decimal("3.00"), "reduced"), Decimal("0.17"))

    def test_gross_for_books(self):
        # 7.00 + 7.00 * 5.5% = 7.00 + 0.385
        self.assertEqual(gross(Decimal("7.00"), "books"), Decimal("7.39"))
