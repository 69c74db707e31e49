#!/usr/bin/env bash
# Replaying a native trace through `fleetsim run`: a good trace runs; a bad
# row stops the run with FILE:LINE: field NAME, exit 2 and no results file;
# lenient mode skips and counts it.
source "$(dirname "$0")/lib/common.bash"

cat > jobs.csv <<'C'
id,submit,gpus,duration,tenant
1,0,8,3600,alice
2,10,4,600,bob
3,20,16,1800,alice
4,30,1,60,bob
C
cat > replay.yaml <<'Y'
name: replay
horizon: 30d
cluster:
  pools:
    - {name: a, gpu: H100, nodes: 2, gpus_per_node: 8}
workload:
  trace: {path: jobs.csv, format: native}
Y
expect_exit 0 "$FLEETSIM" run replay.yaml -o r.h5
expect_out '4 submitted, 4 completed'
[ -f r.h5 ] && ok || bad "no results"

gzip -k jobs.csv
sed 's/jobs.csv/jobs.csv.gz/' replay.yaml > replay_gz.yaml
expect_exit 0 "$FLEETSIM" run replay_gz.yaml -o rgz.h5
expect_out '4 submitted, 4 completed'

cat > badjobs.csv <<'C'
id,submit,gpus,duration
1,0,8,3600
2,10,four,600
3,20,1,60
C
sed 's/jobs.csv/badjobs.csv/' replay.yaml > bad.yaml
expect_exit 2 "$FLEETSIM" run bad.yaml -o bad.h5
expect_err 'badjobs.csv:3: field gpus'
expect_no_file bad.h5

sed 's/format: native}/format: native, lenient: true}/' bad.yaml > lenient.yaml
expect_exit 0 "$FLEETSIM" run lenient.yaml -o len.h5
expect_out '2 submitted'
expect_out 'skipped +1'
finish
