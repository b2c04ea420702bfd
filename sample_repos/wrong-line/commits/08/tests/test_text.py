import unittest

from statkit.text import initials, slugify, title_case, truncate, word_count


class TextTest(unittest.TestCase):
    def test_slugify(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")
        self.assertEqual(slugify("Crème brûlée"), "creme-brulee")

    def test_truncate(self):
        self.assertEqual(truncate("abcdefgh", 6), "abc...")
        self.assertEqual(truncate("abc", 6), "abc")

    def test_title_case(self):
        self.assertEqual(title_case("the art OF computer programming"), "The Art of Computer Programming")

    def test_word_count(self):
        self.assertEqual(word_count("  one two\tthree\n"), 3)

    def test_initials(self):
        self.assertEqual(initials("ada king lovelace"), "AKL")

    def test_truncate_exact_width(self):
        self.assertEqual(truncate("abcdef", 6), "abcdef")
