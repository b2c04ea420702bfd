import unittest
from datetime import date

from ledger.terms import days_overdue, due_date, end_of_month, statement_line


class DueDateTest(unittest.TestCase):
    def test_net30(self):
        self.assertEqual(due_date(date(2024, 3, 1), "net30"), date(2024, 3, 31))

    def test_net90(self):
        self.assertEqual(due_date(date(2024, 3, 1), "net90"), date(2024, 5, 30))

    def test_receipt_is_due_the_same_day(self):
        self.assertEqual(due_date(date(2024, 3, 1), "receipt"), date(2024, 3, 1))

    def test_unknown_terms_are_an_error(self):
        with self.assertRaises(ValueError):
            due_date(date(2024, 3, 1), "net45")


class OverdueTest(unittest.TestCase):
    def test_days_count_from_the_due_day(self):
        due = date(2024, 3, 31)
        self.assertEqual(days_overdue(due, date(2024, 3, 31)), 0)
        self.assertEqual(days_overdue(due, date(2024, 4, 10)), 10)


class EndOfMonthTest(unittest.TestCase):
    def test_end_of_april(self):
        self.assertEqual(end_of_month(date(2024, 4, 10)), date(2024, 4, 30))

    def test_leap_february(self):
        self.assertEqual(end_of_month(date(2024, 2, 10)), date(2024, 2, 29))


class StatementTest(unittest.TestCase):
    def test_due_line(self):
        self.assertEqual(statement_line(date(2024, 3, 31), date(2024, 3, 20)), "due 2024-03-31")

    def test_overdue_line(self):
        self.assertEqual(
            statement_line(date(2024, 3, 31), date(2024, 4, 10)),
            "overdue since 2024-03-31 (10 days)",
        )
