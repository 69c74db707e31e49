#!/usr/bin/env bash
# fleetsim run: the default scenario end to end, the results contract as
# seen by h5dump, overrides, and exit codes.
source "$(dirname "$0")/lib/common.bash"

expect_exit 0 "$FLEETSIM" run --set horizon=2d -o r.h5
expect_out '^jobs +[0-9]+ submitted'
expect_out '^utilization'
expect_out 'p95'
[ -f r.h5 ] && ok || bad "r.h5 not written"
ls r.h5.tmp.* >/dev/null 2>&1 && bad "temporary file left behind" || ok

if command -v h5dump >/dev/null; then
    h5dump -H r.h5 >dump.txt 2>&1 || bad "h5dump failed"
    for obj in '"/jobs"|DATASET "jobs"' 'DATASET "timeline"' 'DATASET "summary"' 'ATTRIBUTE "complete"' 'ATTRIBUTE "scenario"'; do
        grep -Eq "$obj" dump.txt && ok || bad "h5dump -H shows no $obj"
    done
    h5dump -a /complete r.h5 2>/dev/null | grep -Eq '\(0\): 1' && ok || bad "complete is not 1"
fi

# the same seed twice: identical /jobs
expect_exit 0 "$FLEETSIM" run --set horizon=2d -o r2.h5 -q
if command -v h5dump >/dev/null; then
    h5dump -d /jobs r.h5 | tail -n +2 > j1.txt
    h5dump -d /jobs r2.h5 | tail -n +2 > j2.txt
    cmp -s j1.txt j2.txt && ok || bad "same seed gave different /jobs"
    expect_exit 0 "$FLEETSIM" run --set horizon=2d --seed 7 -o r3.h5 -q
    h5dump -d /jobs r3.h5 | tail -n +2 > j3.txt
    cmp -s j1.txt j3.txt && bad "another seed gave identical /jobs" || ok
fi

# the shipped default file and the embedded default are the same scenario
expect_exit 0 "$FLEETSIM" validate --dump "$SRC/scenarios/default.yaml"
cp out.txt dump_file.txt
expect_exit 0 "$FLEETSIM" run --set horizon=2d -o r4.h5 -q "$SRC/scenarios/default.yaml"

# usage errors: exit 2, no results file
expect_exit 2 "$FLEETSIM" run --set nosuchkey=1 -o bad.h5
expect_err "nosuchkey"
expect_no_file bad.h5
expect_exit 2 "$FLEETSIM" run --bogus
expect_exit 2 "$FLEETSIM" run --seed -3
expect_exit 2 "$FLEETSIM" run a.yaml b.yaml
expect_exit 2 "$FLEETSIM" run missing.yaml -o bad.h5
expect_err "missing.yaml"
expect_no_file bad.h5
expect_exit 2 "$FLEETSIM" nosuchcommand
for c in run validate bench help version; do
    expect_exit 0 "$FLEETSIM" "$c" --help
    expect_out 'usage: fleetsim'
done
expect_exit 0 "$FLEETSIM" --version
expect_out '^fleetsim [0-9]+\.[0-9]+'
expect_exit 0 "$FLEETSIM" help
expect_out 'validate'
finish
