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

#endif
