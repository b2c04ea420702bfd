"""Plane geometry on (x, y) tuples."""

import math


def circle_area(radius):
    """Area of a circle."""
    if radius < 0:
        raise ValueError("negative radius")
    return math.pi * radius * radius


def rectangle_area(width, height):
    """Area of a width x height rectangle."""
    if width < 0 or height < 0:
        raise ValueError("negative side")
    return width * height


def distance(p, q):
    """Euclidean distance between two points."""
    return math.hypot(q[0] - p[0], q[1] - p[1])


def midpoint(p, q):
    """Point halfway between p and q."""
    return ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)


def manhattan(p, q):
    """Taxicab distance between p and q."""
    return abs(q[0] - p[0]) + abs(q[1] - p[1])


def perimeter(points):
    """Length of the closed polygon through points."""
    n = len(points)
    return sum(distance(points[i], points[(i + 1) % n]) for i in range(n))


def polygon_area(points):
    """Area of a simple polygon (shoelace formula), always non-negative."""
    n = len(points)
    twice = 0
    for i in range(n):
        x1, y1 = points[i]
        x2, y2 = points[(i + 1) % n]
        twice += x1 * y2 - x2 * y1
    return abs(twice) / 2


def triangle_area(a, b, c):
    """Area of the triangle abc."""
    return polygon_area([a, b, c])


def is_convex(points):
    """True if the polygon turns the same way at every vertex."""
    n = len(points)
    signs = set()
    for i in range(n):
        (x1, y1), (x2, y2), (x3, y3) = points[i], points[(i + 1) % n], points[(i + 2) % n]
        cross = (x2 - x1) * (y3 - y2) - (y2 - y1) * (x3 - x2)
        if cross:
            signs.add(cross > 0)
    return len(signs) <= 1


def centroid(points):
    """Mean of the vertices."""
    n = len(points)
    return (sum(p[0] for p in points) / n, sum(p[1] for p in points) / n)
