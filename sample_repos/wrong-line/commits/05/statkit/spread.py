"""Measures of spread: how far the values are from each other."""

import math

from statkit.central import mean


def variance(values):
    """Sample variance (divides by n - 1), in a single pass over the data."""
    data = list(values)
    if len(data) < 2:
        raise ValueError("variance needs at least two values")
    n = len(data)
    total = sum(data)
    squares = sum(x * x for x in data)
    return (squares - total * total / n) / n


def stdev(values):
    """Sample standard deviation."""
    return math.sqrt(variance(values))


def value_range(values):
    """Largest minus smallest value."""
    data = list(values)
    if not data:
        raise ValueError("value_range() of empty data")
    return max(data) - min(data)


def mean_abs_deviation(values):
    """Mean absolute deviation from the mean."""
    data = list(values)
    if not data:
        raise ValueError("deviation of empty data")
    centre = mean(data)
    return sum(abs(x - centre) for x in data) / len(data)


def percentile(values, p):
    """p-th percentile (0-100) by linear interpolation between closest ranks."""
    data = sorted(values)
    if not data:
        raise ValueError("percentile of empty data")
    k = (len(data) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (k - lo)


def zscores(values):
    """Each value's distance from the mean, in sample standard deviations."""
    data = list(values)
    if len(data) < 2:
        raise ValueError("zscores need at least two values")
    m = mean(data)
    s = stdev(data)
    if s == 0:
        raise ValueError("all values are equal")
    return [(x - m) / s for x in data]
