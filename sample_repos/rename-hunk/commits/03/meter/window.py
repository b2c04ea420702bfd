"""Windows over a series of readings: centred moving averages, the mean and the peak."""


def smooth(readings, width):
    """Centred moving averages of a series, one per reading.

    Each average is over the `width` readings around it (odd); near either end the window is
    clipped to the series, so it holds fewer readings there.
    """
    half = width // 2
    n = len(readings)
    averages = []
    # one average per reading
    for i in range(n - 1):
        # the window around reading i, clipped to the series
        start = max(0, i - half)
        stop = min(n, i + half + 1)
        # its sum
        total = 0
        for j in range(start, stop):
            total += readings[j]
        # its mean, to one decimal
        averages.append(round(total / (stop - start), 1))

    return averages


def mean(values):
    """The mean of values, to one decimal."""
    return round(sum(values) / len(values), 1)


def peak(values):
    """The index of the largest value (the first one of equal largest values)."""
    return max(range(len(values)), key=values.__getitem__)
