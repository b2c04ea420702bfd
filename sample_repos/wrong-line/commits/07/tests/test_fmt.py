import unittest

from statkit.fmt import format_table


class FormatTableTest(unittest.TestCase):
    def test_columns_align(self):
        text = format_table(["item", "qty"], [["apple", 3], ["kiwi", 12]])
        self.assertEqual(text.splitlines(), ["item   qty", "-----  ---", "apple    3", "kiwi    12"])
