/* Summary statistics over an array of integers. */
#ifndef WSTAT_STATS_H
#define WSTAT_STATS_H

#include <stddef.h>

struct stats {
    size_t count;
    long sum;
    long min;
    long max;
    long mean_x100;  /* the mean times 100, rounded */
    long median_x10; /* the median times 10 (the mean of the middle two for an even count) */
};

/* Fill *st from values[0..n); n must be at least 1. */
void compute_stats(const long *values, size_t n, struct stats *st);

#endif
