"""statkit: small statistics, units and text helpers."""

from statkit.central import geometric_mean, mean, median, mode
from statkit.dates import days_in_month, is_leap_year
from statkit.fmt import format_table
from statkit.geometry import circle_area, distance
from statkit.money import format_money, round_cents
from statkit.primes import is_prime, primes_below
from statkit.spread import stdev, variance
from statkit.text import slugify, truncate
from statkit.units import c_to_f, f_to_c

__version__ = "1.1"
