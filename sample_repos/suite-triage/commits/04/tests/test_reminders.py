import unittest
from datetime import date

from ledger.invoice import Invoice
from ledger.reminders import letter_for, reminder


def paper_order():
    invoice = Invoice("2024-0007", "Acme", date(2024, 3, 1))
    invoice.add("Paper, A4", 10, "4.20")
    return invoice


class ReminderTest(unittest.TestCase):
    def test_letters_get_firmer(self):
        self.assertEqual(
            [letter_for(days) for days in (0, 1, 13, 14, 30)],
            [None, "reminder", "reminder", "second reminder", "final notice"],
        )

    def test_nothing_to_send_on_the_due_day(self):
        self.assertIsNone(reminder(paper_order(), date(2024, 3, 31)))

    def test_the_second_reminder_adds_the_fee(self):
        self.assertEqual(
            reminder(paper_order(), date(2024, 4, 20)),
            "Second reminder: invoice 2024-0007 is 20 days overdue, EUR 55.40 to pay.",
        )
