/* compute_stats: count, sum, extremes, mean and median of the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

/* qsort comparator, ascending; avoids the overflow of returning x - y. */
static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a;
    long y = *(const long *)b;

    return (x > y) - (x < y);
}

static long median_x10(const long *values, size_t n)
{
    long *copy = malloc(n * sizeof *copy);
    long result;

    if (copy == NULL) {
        perror("wstat: median");
        exit(3);
    }
    memcpy(copy, values, n * sizeof *copy);
    qsort(copy, n, sizeof *copy, cmp_long);
    if (n % 2)
        result = copy[n / 2] * 10;
    else
        result = (copy[n / 2 - 1] + copy[n / 2]) * 5;
    free(copy);
    return result;
}

void compute_stats(const long *values, size_t n, struct stats *st)
{
    size_t i;

    st->count = n;
    st->sum = 0;
    st->min = values[0];
    st->max = values[0];
    for (i = 0; i < n; i++) {
        st->sum += values[i];
        st->min = min_long(st->min, values[i]);
        st->max = max_long(st->max, values[i]);
    }
    st->mean_x100 = div_round(st->sum * 100, (long)n);
    st->median_x10 = median_x10(values, n);
}
