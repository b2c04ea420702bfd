/* wstat_version: one place to bump on a release. */
#include "version.h"

const char *wstat_version(void)
{
    return "1.1";
}
