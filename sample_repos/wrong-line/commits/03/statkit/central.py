"""Measures of central tendency: where the middle of the data is."""

import math
from collections import Counter


def mean(values):
    """Arithmetic mean of a non-empty iterable."""
    data = list(values)
    if not data:
        raise ValueError("mean of empty data")
    return sum(data) / len(data)


def median(values):
    """Middle value; the mean of the two middle values for an even count."""
    data = sorted(values)
    if not data:
        raise ValueError("median of empty data")
    half = len(data) // 2
    if len(data) % 2:
        return data[half]
    return (data[half - 1] + data[half]) / 2


def mode(values):
    """Most common value; the smallest one on ties."""
    counts = Counter(values)
    if not counts:
        raise ValueError("mode of empty data")
    # Several values may share the highest count: pick the smallest for a stable answer.
    best = max(counts.values())
    return min(v for v, c in counts.items() if c == best)


def weighted_mean(values, weights):
    """Mean of values weighted by weights (same length, positive total weight)."""
    values = list(values)
    weights = list(weights)
    if len(values) != len(weights):
        raise ValueError("values and weights must have the same length")
    total = sum(weights)
    if total <= 0:
        raise ValueError("total weight must be positive")
    return sum(v * w for v, w in zip(values, weights)) / total


def midrange(values):
    """Mean of the smallest and largest value."""
    data = list(values)
    if not data:
        raise ValueError("midrange of empty data")
    return (min(data) + max(data)) / 2


def geometric_mean(values):
    """n-th root of the product of n positive values, computed with logarithms."""
    data = list(values)
    if not data or min(data) <= 0:
        raise ValueError("geometric mean needs positive values")
    return math.exp(sum(math.log(x) for x in data) / len(data))
