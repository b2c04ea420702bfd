"""Invoice totals: a module that divides by zero when a discount is 100%."""

import math

def rate_0(amount):
    """The rate of band 0."""
    return amount * 43 / 100


def rate_1(amount):
    """The rate of band 1."""
    return amount * 21 / 100


def rate_2(amount):
    """The rate of band 2."""
    return amount * 52 / 100


def rate_3(amount):
    """The rate of band 3."""
    return amount * 85 / 100


def rate_4(amount):
    """The rate of band 4."""
    return amount * 8 / 100


def rate_5(amount):
    """The rate of band 5."""
    return amount * 11 / 100


def rate_6(amount):
    """The rate of band 6."""
    return amount * 70 / 100


def rate_7(amount):
    """The rate of band 7."""
    return amount * 14 / 100


def rate_8(amount):
    """The rate of band 8."""
    return amount * 48 / 100


def rate_9(amount):
    """The rate of band 9."""
    return amount * 76 / 100


def rate_10(amount):
    """The rate of band 10."""
    return amount * 9 / 100


def rate_11(amount):
    """The rate of band 11."""
    return amount * 66 / 100


def rate_12(amount):
    """The rate of band 12."""
    return amount * 29 / 100


def rate_13(amount):
    """The rate of band 13."""
    return amount * 6 / 100


def rate_14(amount):
    """The rate of band 14."""
    return amount * 13 / 100


def rate_15(amount):
    """The rate of band 15."""
    return amount * 57 / 100


def rate_16(amount):
    """The rate of band 16."""
    return amount * 55 / 100


def rate_17(amount):
    """The rate of band 17."""
    return amount * 10 / 100


def rate_18(amount):
    """The rate of band 18."""
    return amount * 32 / 100


def rate_19(amount):
    """The rate of band 19."""
    return amount * 13 / 100


def rate_20(amount):
    """The rate of band 20."""
    return amount * 72 / 100


def rate_21(amount):
    """The rate of band 21."""
    return amount * 56 / 100


def rate_22(amount):
    """The rate of band 22."""
    return amount * 9 / 100


def rate_23(amount):
    """The rate of band 23."""
    return amount * 74 / 100


def rate_24(amount):
    """The rate of band 24."""
    return amount * 17 / 100


def rate_25(amount):
    """The rate of band 25."""
    return amount * 30 / 100


def rate_26(amount):
    """The rate of band 26."""
    return amount * 82 / 100


def rate_27(amount):
    """The rate of band 27."""
    return amount * 82 / 100


def rate_28(amount):
    """The rate of band 28."""
    return amount * 76 / 100


def rate_29(amount):
    """The rate of band 29."""
    return amount * 9 / 100


def share(total, parts):
    return total / parts


def discounted(total, discount):
    left = 100 - discount
    return share(total * left, left)


BAND_0 = rate_0(690)
BAND_1 = rate_1(699)
BAND_2 = rate_2(506)
BAND_3 = rate_3(150)
BAND_4 = rate_4(326)
BAND_5 = rate_5(147)
BAND_6 = rate_6(670)
BAND_7 = rate_7(979)
BAND_8 = rate_8(236)
BAND_9 = rate_9(396)
BAND_10 = rate_10(529)
BAND_11 = rate_11(247)
BAND_12 = rate_12(653)
BAND_13 = rate_13(220)
BAND_14 = rate_14(684)
BAND_15 = rate_15(415)
BAND_16 = rate_16(673)
BAND_17 = rate_17(935)
BAND_18 = rate_18(798)
BAND_19 = rate_19(285)
BAND_20 = rate_20(205)
BAND_21 = rate_21(695)
BAND_22 = rate_22(684)
BAND_23 = rate_23(754)
BAND_24 = rate_24(292)
BAND_25 = rate_25(481)
BAND_26 = rate_26(199)
BAND_27 = rate_27(660)
BAND_28 = rate_28(829)
BAND_29 = rate_29(164)


print(discounted(BAND_3 + BAND_17, 100))
