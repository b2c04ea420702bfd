/* wstat: summary statistics of the integers on standard input, one per line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "parse.h"
#include "stats.h"
#include "version.h"

/* Width of a histogram bucket. */
#define HIST_WIDTH 10

static int report(const long *v, size_t n)
{
    struct stats st;

    compute_stats(v, n, &st);
    print_row("count", (long)st.count);
    print_row("sum", st.sum);
    print_row("min", st.min);
    print_row("max", st.max);
    print_scaled("mean", st.mean_x100, 2);
    print_scaled("median", st.median_x10, 1);
    printf("histogram:\n");
    print_histogram(v, n, HIST_WIDTH);
    return 0;
}

static long values[1024];

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s < NUMBERS\n", argv0);
}

int main(int argc, char **argv)
{
    long n;

    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("wstat %s\n", wstat_version());
        return 0;
    }
    if (argc > 1) {
        usage(argv[0]);
        return 2;
    }
    n = read_values(stdin, values, sizeof values / sizeof values[0]);
    if (n < 0) {
        fprintf(stderr, "%s: bad input\n", argv[0]);
        return 2;
    }
    if (n == 0) {
        print_row("count", 0);
        return 0;
    }
    return report(values, (size_t)n);
}
