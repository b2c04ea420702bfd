import math
import unittest

from statkit.geometry import centroid, circle_area, distance, perimeter, polygon_area

SQUARE = [(0, 0), (2, 0), (2, 2), (0, 2)]


class GeometryTest(unittest.TestCase):
    def test_circle_area(self):
        self.assertAlmostEqual(circle_area(2), 4 * math.pi)

    def test_distance(self):
        self.assertEqual(distance((0, 0), (3, 4)), 5)

    def test_polygon(self):
        self.assertEqual(perimeter(SQUARE), 8)
        self.assertEqual(polygon_area(SQUARE), 4)
        self.assertEqual(centroid(SQUARE), (1, 1))

    def test_distance_is_symmetric(self):
        self.assertEqual(distance((1, 2), (4, 6)), distance((4, 6), (1, 2)))
