#!/bin/sh
# 0: the invoice for data/orders.txt matches expected.txt; 1: it differs;
# 125: the program crashed, which says nothing about the invoice.
out=$(python3 -B -m orders data/orders.txt) || exit 125
printf '%s\n' "$out" | diff -u expected.txt -
