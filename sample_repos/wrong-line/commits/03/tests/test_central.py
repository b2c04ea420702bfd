import unittest

from statkit.central import mean, median, midrange, mode, weighted_mean


class CentralTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)
        self.assertRaises(ValueError, mean, [])

    def test_median(self):
        self.assertEqual(median([5, 1, 3]), 3)
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_mode(self):
        self.assertEqual(mode([1, 2, 2, 3, 3]), 2)

    def test_weighted_mean(self):
        self.assertEqual(weighted_mean([1, 3], [3, 1]), 1.5)
        self.assertRaises(ValueError, weighted_mean, [1], [1, 2])

    def test_midrange(self):
        self.assertEqual(midrange([3, 9, 4]), 6)

    def test_mode_ties(self):
        self.assertEqual(mode([3, 1, 3, 1]), 1)
