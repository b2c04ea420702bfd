"""Windows over a series of readings: centred moving averages, the mean and the peak."""


def smooth(xs, k):
    """Centred moving averages of a series, one per reading.

    Each average is over the k readings around it (k odd); near either end the window is
    clipped to the series, so it holds fewer readings there.
    """
    h = k // 2
    n = len(xs)
    out = []
    # one average per reading
    for i in range(n):
        # the window around reading i, clipped to the series
        lo = max(0, i - h)
        hi = min(n, i + h + 1)
        # its sum
        tot = 0
        for j in range(lo, hi):
            tot += xs[j]
        # its mean, to one decimal
        out.append(round(tot / (hi - lo), 1))

    return out


def mean(values):
    """The mean of values, to one decimal."""
    return round(sum(values) / len(values), 1)


def peak(values):
    """The index of the largest value (the first one of equal largest values)."""
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    return best
