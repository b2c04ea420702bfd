import unittest

from statkit.units import c_to_f, f_to_c, kg_to_lb, km_to_miles, lb_to_kg, miles_to_km


class UnitsTest(unittest.TestCase):
    def test_temperature(self):
        self.assertEqual(c_to_f(100), 212)
        self.assertEqual(f_to_c(-40), -40)

    def test_distance(self):
        self.assertAlmostEqual(km_to_miles(1.609344), 1)
        self.assertAlmostEqual(miles_to_km(10), 16.09344)

    def test_mass(self):
        self.assertAlmostEqual(kg_to_lb(0.45359237), 1)
        self.assertAlmostEqual(lb_to_kg(2), 0.90718474)
