/* parse_long and read_values: the input format of wstat. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "parse.h"

/*
 * strtol alone would accept "12abc" as 12 and "" as 0; wstat wants the whole line to be one
 * number, so trailing text is an error, and so is a number that does not fit in a long.
 */
int parse_long(const char *s, long *out)
{
    char *end;
    long v;

    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int is_blank_or_comment(const char *line)
{
    while (isspace((unsigned char)*line))
        line++;
    return *line == '\0' || *line == '#';
}

long read_values(FILE *in, long *values, size_t cap)
{
    char line[256];
    size_t n = 0;

    while (fgets(line, sizeof line, in) != NULL) {
        if (is_blank_or_comment(line))
            continue;
        if (n == cap || parse_long(line, &values[n]) != 0)
            return -1;
        n++;
    }
    return (long)n;
}
