"""The printed day report."""

from meter.window import mean, peak, smooth


def kwh(watt_hours):
    """Watt-hours as kilowatt-hours with three decimals."""
    return f"{watt_hours // 1000}.{watt_hours % 1000:03d}"


def render(readings, width):
    """The report as a list of text lines: one row per hour, then the day's summary."""
    times = [time for time, _ in readings]
    values = [value for _, value in readings]
    out = []
    for time, value, average in zip(times, values, smooth(values, width)):
        out.append(f"{time}  {kwh(value):>6} kWh  {average:>7.1f} Wh")
    out.append(f"total  {kwh(sum(values)):>6} kWh")
    out.append(f"mean   {mean(values):>19.1f} Wh")
    out.append(f"peak   {times[peak(values)]:>19}")
    return out
