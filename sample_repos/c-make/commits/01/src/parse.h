/* Reading the input: one integer per line; blank lines and lines starting with '#' are skipped. */
#ifndef WSTAT_PARSE_H
#define WSTAT_PARSE_H

#include <stddef.h>
#include <stdio.h>

/* Parse a decimal integer that fills s (blanks around it allowed); 0 on success. */
int parse_long(const char *s, long *out);

/* Read up to cap values from in into values; how many, or -1 on a bad or extra line. */
long read_values(FILE *in, long *values, size_t cap);

#endif
