import unittest

from statkit.dates import day_of_year, days_in_month, days_in_year, is_leap_year


class DatesTest(unittest.TestCase):
    def test_leap_years(self):
        self.assertEqual([y for y in (1900, 2000, 2023, 2024) if is_leap_year(y)], [2000, 2024])

    def test_days_in_month(self):
        self.assertEqual(days_in_month(2024, 2), 29)
        self.assertEqual(days_in_month(2023, 2), 28)
        self.assertRaises(ValueError, days_in_month, 2024, 13)

    def test_day_of_year(self):
        self.assertEqual(day_of_year(2024, 3, 1), 61)
        self.assertEqual(days_in_year(2100), 365)

    def test_last_day_of_leap_year(self):
        self.assertEqual(day_of_year(2024, 12, 31), 366)
