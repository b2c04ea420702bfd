/* The report's layout: one "label value" row per statistic, then a histogram. */
#include <stdio.h>
#include <stdlib.h>

#include "fmt.h"
#include "util.h"

#define LABEL_WIDTH 8

void print_row(const char *label, long value)
{
    printf("%-*s %ld\n", LABEL_WIDTH, label, value);
}

void print_scaled(const char *label, long value, int decimals)
{
    long scale = 1;
    int i;

    for (i = 0; i < decimals; i++)
        scale *= 10;
    printf("%-*s %s%ld.%0*ld\n", LABEL_WIDTH, label, value < 0 ? "-" : "", labs(value) / scale,
           decimals, labs(value) % scale);
}

static long floor_div(long a, long b)
{
    long q = a / b;

    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void print_histogram(const long *values, size_t n, long width)
{
    long lo = values[0];
    long hi = values[0];
    long b;
    size_t i;

    for (i = 1; i < n; i++) {
        lo = min_long(lo, values[i]);
        hi = max_long(hi, values[i]);
    }
    for (b = floor_div(lo, width); b <= floor_div(hi, width); b++) {
        long count = 0;
        long pct;

        for (i = 0; i < n; i++)
            if (floor_div(values[i], width) == b)
                count++;
        pct = (count * 100 + (long)n / 2) / (long)n;
        printf("  [%4ld, %4ld) %3ld %3ld%%\n", b * width, (b + 1) * width, count, pct);
    }
}
