"""Calendar arithmetic for the proleptic Gregorian calendar."""

# February has 28 days here; days_in_month adds the leap day.
MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def is_leap_year(year):
    """True for leap years: every 4th year, except centuries not divisible by 400."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def is_valid_date(year, month, day):
    """True if year-month-day names a real date."""
    if not 1 <= month <= 12:
        return False
    limit = 29 if month == 2 and is_leap_year(year) else MONTH_DAYS[month - 1]
    return 1 <= day <= limit


def month_name(month):
    """English name of month 1-12."""
    return MONTH_NAMES[month - 1]


def days_in_month(year, month):
    """Number of days in month (1-12) of year."""
    if not 1 <= month <= 12:
        raise ValueError(f"month must be 1..12, got {month}")
    if month == 2 and is_leap_year(year):
        return 29
    return MONTH_DAYS[month - 1]


def day_of_year(year, month, day):
    """1-based ordinal of the date within its year."""
    if not 1 <= day <= days_in_month(year, month):
        raise ValueError(f"day out of range: {day}")
    return day + sum(days_in_month(year, m) for m in range(1, month))


def quarter(month):
    """Quarter 1-4 that month 1-12 belongs to."""
    if not 1 <= month <= 12:
        raise ValueError(f"month out of range: {month}")
    return (month - 1) // 3 + 1


def days_in_year(year):
    """Number of days in year: 365, or 366 in a leap year."""
    return 366 if is_leap_year(year) else 365


def iso_date(year, month, day):
    """The date as 'YYYY-MM-DD'."""
    if not is_valid_date(year, month, day):
        raise ValueError(f"no such date: {year}-{month}-{day}")
    return f"{year:04d}-{month:02d}-{day:02d}"


def weekday(year, month, day):
    """Day of the week, 0 = Monday, by Zeller's congruence."""
    if month < 3:
        month += 12
        year -= 1
    k, j = year % 100, year // 100
    h = (day + 13 * (month + 1) // 5 + k + k // 4 + j // 4 + 5 * j) % 7
    return (h + 5) % 7
