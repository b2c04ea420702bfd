#!/bin/sh
# The settings loader hangs when a [net] section is followed, anywhere later, by timeout = 0:
# exit 1 (the failure) when that is so.
awk '/^\[net\]/ { net = 1 } net && /^timeout = 0$/ { found = 1 } END { exit found ? 1 : 0 }' settings.txt
