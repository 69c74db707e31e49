#!/usr/bin/env bash
# A service-only run (no training jobs) prints no "nan" anywhere in its
# summary: the share of jobs that waited is "no jobs" there (issue 40).
source "$(dirname "$0")/lib/common.bash"

expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/serving-fleet-sizing.yaml" -o out --set horizon=1h
expect_out '^wait .*\(no jobs\)$'
grep -qi 'nan' out.txt && bad "the summary prints nan: $(grep -i nan out.txt)" || ok

finish
