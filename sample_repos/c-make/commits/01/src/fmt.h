/* Printing the report. */
#ifndef WSTAT_FMT_H
#define WSTAT_FMT_H

#include <stddef.h>

/* Print "label value" with the label padded to a fixed column. */
void print_row(const char *label, long value);

/* Print value / 10^decimals with that many decimals: ("mean", 1234, 2) prints 12.34. */
void print_scaled(const char *label, long value, int decimals);

/* Print a histogram of values[0..n) in buckets of the given width, with percentages. */
void print_histogram(const long *values, size_t n, long width);

#endif
