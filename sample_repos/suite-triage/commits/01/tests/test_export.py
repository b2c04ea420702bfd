import unittest
from datetime import date

from ledger.export import row, to_csv
from ledger.invoice import Invoice


class ExportTest(unittest.TestCase):
    def test_header_and_one_row(self):
        invoice = Invoice("2024-0007", "Acme", date(2024, 3, 1))
        invoice.add("Paper, A4", 10, "4.20")
        self.assertEqual(
            to_csv([invoice]),
            "number,customer,issued,terms,due,net,tax,total\r\n"
            "2024-0007,Acme,2024-03-01,net30,2024-03-31,42.00,8.40,50.40\r\n",
        )

    def test_terms_default_to_net30(self):
        invoice = Invoice("2024-0008", "Acme", date(2024, 3, 1), terms="")
        self.assertEqual(row(invoice)[3:5], ["net30", "2024-03-31"])
