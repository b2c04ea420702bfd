"""meter: smoothed hourly readings of an electricity meter."""

__version__ = "1.0"
