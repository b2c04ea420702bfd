"""The monthly budget, set in Swiss francs: how much of it is left."""

from ledger import to_base
from ledger.invoice import euros

# The household's monthly limit in Swiss franc cents (its bank account is in Zurich).
LIMIT_CHF = 250000


def limit():
    """The monthly limit in euro cents."""
    return to_base(LIMIT_CHF, "CHF")


def status(spent):
    """The budget lines of the report, for spent euro cents."""
    left = limit() - spent
    lines = [f"budget  {euros(limit()):>42} EUR"]
    if left >= 0:
        lines.append(f"left    {euros(left):>42} EUR")
    else:
        lines.append(f"over    {euros(-left):>42} EUR")
    return lines
