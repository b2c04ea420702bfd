import unittest

from statkit.money import add_vat, format_money, round_cents, split_bill


class MoneyTest(unittest.TestCase):
    def test_round_cents(self):
        self.assertEqual(round_cents(2.675), 268)
        self.assertEqual(round_cents(-0.125), -13)

    def test_format_money(self):
        self.assertEqual(format_money(123456), "1,234.56 EUR")
        self.assertEqual(format_money(-5, "USD"), "-0.05 USD")

    def test_split_bill(self):
        self.assertEqual(split_bill(1000, 3), [334, 333, 333])

    def test_add_vat(self):
        self.assertEqual(add_vat(1000, 19), 1190)
