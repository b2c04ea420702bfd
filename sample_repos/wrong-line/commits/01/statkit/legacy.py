"""Names kept for scripts written against statkit 0.x."""

from statkit.central import mean


def old_mean(values):
    """Deprecated: use statkit.mean."""
    return mean(values)
