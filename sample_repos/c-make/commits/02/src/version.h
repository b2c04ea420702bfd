/* The version of wstat, for --version. */
#ifndef WSTAT_VERSION_H
#define WSTAT_VERSION_H

const char *wstat_version(void);

#endif
