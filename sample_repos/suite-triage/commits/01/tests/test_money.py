import unittest
from decimal import Decimal

from ledger.money import format_amount, round_cents, split, to_decimal


class ToDecimalTest(unittest.TestCase):
    def test_refuses_floats(self):
        with self.assertRaises(TypeError):
            to_decimal(0.1)

    def test_keeps_every_cent(self):
        self.assertEqual(to_decimal("19.99") + to_decimal(1) / 100, Decimal("20.00"))


class RoundTest(unittest.TestCase):
    def test_half_a_cent_rounds_up(self):
        self.assertEqual(round_cents(Decimal("0.125")), Decimal("0.13"))


class SplitTest(unittest.TestCase):
    def test_parts_add_up_to_the_total(self):
        self.assertEqual(
            split(Decimal("100.00"), 3), [Decimal("33.34"), Decimal("33.33"), Decimal("33.33")]
        )

    def test_total_is_rounded_to_the_cent_first(self):
        self.assertEqual(split(Decimal("10.005"), 2), [Decimal("5.01"), Decimal("5.00")])


class FormatTest(unittest.TestCase):
    def test_two_decimals_and_the_currency(self):
        self.assertEqual(format_amount(Decimal("12.5")), "EUR 12.50")

    def test_thousands_are_grouped(self):
        self.assertEqual(format_amount(Decimal("1234.5"), "USD"), "USD 1,234.50")
