#!/bin/sh
# 0: the report for data/expenses.txt matches expected.txt; 1: it differs;
# 125: the program crashed, which says nothing about the report.
out=$(python3 -B -m ledger data/expenses.txt) || exit 125
printf '%s\n' "$out" | diff -u expected.txt -
