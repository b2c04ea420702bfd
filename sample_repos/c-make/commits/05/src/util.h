/* Small helpers shared by all modules. */
#ifndef WSTAT_UTIL_H
#define WSTAT_UTIL_H

static inline long min_long(long a, long b)
{
    return a < b ? a : b;
}

static inline long max_long(long a, long b)
{
    return a > b ? a : b;
}

/* num / den rounded to the nearest integer, halves away from zero; den must be positive. */
static inline long div_round(long num, long den) { return num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den); }

#endif
