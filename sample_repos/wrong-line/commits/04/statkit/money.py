"""Money amounts as integer cents, so that sums never drift."""


def round_cents(amount):
    """Round an amount of money (a float, in units) to integer cents, halves away from zero."""
    cents = abs(amount) * 100
    rounded = int(cents + 0.5)
    return rounded if amount >= 0 else -rounded


def parse_money(text):
    """'12.34' or '-0.5' to integer cents; at most two decimals."""
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("+-").partition(".")
    if len(frac) > 2:
        raise ValueError(f"more than two decimals: {text!r}")
    return sign * (int(whole or "0") * 100 + int(frac.ljust(2, "0")))


def format_money(cents, currency="EUR"):
    """Format integer cents as '1,234.56 EUR'; currency None leaves the suffix out."""
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    suffix = "" if currency is None else f" {currency}"
    return f"{sign}{whole:,}.{frac:02d}{suffix}"


def sum_cents(amounts):
    """Total of integer cent amounts; refuses floats, which would drift."""
    if any(isinstance(a, float) for a in amounts):
        raise TypeError("amounts must be integer cents")
    return sum(amounts)


def split_bill(cents, people):
    """Split cents among people; the first ones pay one cent more if it does not divide."""
    if people <= 0:
        raise ValueError(f"split_bill needs at least one person, got {people}")
    share, rest = divmod(cents, people)
    return [share + 1 if i < rest else share for i in range(people)]


def allocate(cents, weights):
    """Split cents in proportion to integer weights; rounding leftovers go to the first."""
    total = sum(weights)
    shares = [cents * w // total for w in weights]
    leftover = cents - sum(shares)
    for i in range(leftover):
        shares[i % len(shares)] += 1
    return shares


def add_vat(cents, rate_percent):
    """Price in cents including VAT at rate_percent, rounded to whole cents."""
    return round_cents(cents * (100 + rate_percent) / 10000)


def percent_of(cents, percent):
    """percent % of an amount in cents, rounded to whole cents."""
    return round_cents(cents * percent / 10000)
