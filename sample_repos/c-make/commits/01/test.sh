#!/bin/sh
# 0: the report for tests/input.txt matches tests/expected.txt; 1: it differs;
# 125: wstat crashed, so the output says nothing (git bisect run's "skip").
out=$(./wstat < tests/input.txt) || exit 125
printf '%s\n' "$out" | diff -u tests/expected.txt -
