"""Exchange rates: amounts in cents of some currency, in euro cents (the base currency)."""

# Euro cents per 100 units of each currency, times 100: 9210 means 1 USD = 0.9210 EUR.
RATES = {
    "CHF": 10420,
    "EUR": 10000,
    "GBP": 11690,
    "SEK": 870,
    "USD": 9210,
}


def known(currency):
    """Whether there is a rate for currency."""
    return currency in RATES


def to_base(amount, currency):
    """amount cents of currency in euro cents, rounded half up."""
    return (amount * RATES[currency] + 5000) // 10000


def rate_table():
    """Every currency we know, sorted."""
    return sorted(RATES)


def per_unit(currency):
    """Euro cents for one unit (100 cents) of currency."""
    return to_base(100, currency)
