/* Summary statistics over an array of integers. */
#ifndef WSTAT_STATS_H
#define WSTAT_STATS_H

#include <stddef.h>

/* Most values wstat reads; more is an error. */
#define WSTAT_MAX_VALUES 4096

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
