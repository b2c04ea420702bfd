"""python3 -m meter FILE: the smoothed day report for a file of hourly readings."""

import sys

from meter.reader import read_readings
from meter.report import render

# Readings per moving-average window: odd, so that the window is centred on its reading.
WIDTH = 3


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("\n".join(render(read_readings(argv[0]), WIDTH)))
    return 0


sys.exit(main(sys.argv[1:]))
