import unittest

from statkit.spread import mean_abs_deviation, stdev, value_range, variance, zscores

DATA = [2, 4, 4, 4, 5, 5, 7, 9]


class SpreadTest(unittest.TestCase):
    def test_variance(self):
        self.assertAlmostEqual(variance(DATA), 32 / 7)
        self.assertRaises(ValueError, variance, [1])

    def test_stdev(self):
        self.assertAlmostEqual(stdev([1, 3]), 2**0.5)

    def test_value_range(self):
        self.assertEqual(value_range(DATA), 7)

    def test_mean_abs_deviation(self):
        self.assertEqual(mean_abs_deviation([1, 3]), 1)

    def test_zscores(self):
        self.assertEqual([round(z, 6) for z in zscores([1, 3])], [-0.707107, 0.707107])

    def test_value_range_of_one(self):
        self.assertEqual(value_range([5]), 0)
