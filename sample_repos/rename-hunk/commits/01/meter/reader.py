"""Reading a day of meter readings: one "HH:MM watt_hours" line per hour."""


def parse_line(text):
    """(time, watt_hours) from "HH:MM watt_hours"."""
    time, value = text.split()
    return time, int(value)


def read_readings(path):
    """Every reading of the file at path, in file order, as (time, watt_hours) pairs."""
    readings = []
    with open(path, encoding="utf-8") as fh:
        for text in fh:
            readings.append(parse_line(text))
    return readings
