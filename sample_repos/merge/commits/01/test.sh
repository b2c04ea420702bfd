#!/bin/sh
# Exit codes as `git bisect run` reads them: 0 when the stock report is the expected one, 1 when
# it is not, 125 when stocktake itself failed (no report, so nothing to judge).
if ! report=$(python3 -B -m stocktake data/inventory.csv); then
    exit 125
fi
[ "$report" = "$(cat expected.txt)" ] && exit 0
printf '%s\n' "$report" | diff expected.txt -
exit 1
