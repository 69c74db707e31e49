#!/bin/sh
# Derives philly_native.csv from the shared Philly data (never edit the output
# by hand): every 4th (duration_s, num_gpus) pair of the Gavel Philly job
# distribution, as a native trace.  The pairs carry no submission times, so
# the jobs are given one every 60 s (only sizes and run times are real).
#   sh derive_philly_native.sh /work/shared/data/philly/gavel_philly_job_distribution.csv
set -e
awk -F, 'BEGIN { print "id,submit,gpus,duration" }
         NR > 1 && (NR - 2) % 4 == 0 { n++; printf "%d,%d,%d,%s\n", n, (n - 1) * 60, $2, $1 }' \
    "$1" > "$(dirname "$0")/philly_native.csv"
