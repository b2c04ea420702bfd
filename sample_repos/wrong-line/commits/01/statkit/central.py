"""Measures of central tendency."""

from collections import Counter


def mean(values):
    """Arithmetic mean of a non-empty sequence."""
    data = list(values)
    if not data:
        raise ValueError("mean of empty data")
    return sum(data) / len(data)


def median(values):
    """Middle value; the mean of the two middle values for an even count."""
    data = sorted(values)
    if not data:
        raise ValueError("median of empty data")
    mid = len(data) // 2
    if len(data) % 2:
        return data[mid]
    return (data[mid - 1] + data[mid]) / 2


def mode(values):
    """Most common value; the smallest one on ties."""
    counts = Counter(values)
    if not counts:
        raise ValueError("mode of empty data")
    best = max(counts.values())
    return min(v for v, c in counts.items() if c == best)


def weighted_mean(values, weights):
    """Mean of values weighted by weights (same length, positive total weight)."""
    values = list(values)
    weights = list(weights)
    if len(values) != len(weights):
        raise ValueError("values and weights differ in length")
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
