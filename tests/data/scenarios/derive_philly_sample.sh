#!/bin/sh
# Derives philly_runtime_sample.csv from the shared Philly data (never edit the
# output by hand): the header and every 400th run time of the sorted file.
#   sh derive_philly_sample.sh /work/shared/data/philly/philly_runtime_from_alibaba.csv
set -e
awk 'NR == 1 || (NR - 2) % 400 == 0' "$1" > "$(dirname "$0")/philly_runtime_sample.csv"
