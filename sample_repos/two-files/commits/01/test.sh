#!/bin/sh
# Golden-output test, in `git bisect run` terms: 0 when the report matches expected.txt,
# 1 when it differs, 125 when the program crashed (that says nothing about the report).
report=$(python3 -B -m csvreport data/sales.csv) || exit 125
printf '%s\n' "$report" | diff -u expected.txt -
