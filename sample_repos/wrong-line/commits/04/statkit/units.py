"""Unit conversions used by the reports (exact factors from the 1959 agreement)."""

KM_PER_MILE = 1.609344
KG_PER_LB = 0.45359237


def c_to_f(celsius):
    """Degrees Celsius to degrees Fahrenheit."""
    return celsius * 9 / 5 + 32


def f_to_c(fahrenheit):
    """Degrees Fahrenheit to degrees Celsius."""
    return (fahrenheit - 32) * 5 / 9


def km_to_miles(km):
    """Kilometres to statute miles."""
    return km / KM_PER_MILE


def miles_to_km(miles):
    """Statute miles to kilometres."""
    return miles * KM_PER_MILE


def m_to_ft(metres):
    """Metres to international feet."""
    return metres / 0.3048


def ft_to_m(feet):
    """International feet to metres."""
    return feet * 0.3048


def kg_to_lb(kg):
    """Kilograms to avoirdupois pounds."""
    return kg / KG_PER_LB


def lb_to_kg(lb):
    """Avoirdupois pounds to kilograms."""
    return lb * KG_PER_LB


def l_to_gal(litres):
    """Litres to US liquid gallons."""
    return litres / 3.785411784


def gal_to_l(gallons):
    """US liquid gallons to litres."""
    return gallons * 3.785411784


def c_to_k(celsius):
    """Degrees Celsius to kelvin."""
    return celsius + 273.15
