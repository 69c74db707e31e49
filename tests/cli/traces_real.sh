#!/usr/bin/env bash
# Real traces through `fleetsim run`: the Tiresias 60-job testbed trace on
# its cluster spec, and the first 300 openb pods (gzip, format auto) on the
# openb GPU node list (cluster.from); detection and skipped rows are named
# on stderr; a bad row stops the run (exit 2, FILE:LINE: field NAME).
source "$(dirname "$0")/lib/common.bash"
REAL="$SRC/tests/data/traces/real"

cat > tiresias.yaml <<Y
name: tiresias-60
horizon: 1d
cluster:
  from: {format: tiresias, path: $REAL/cluster_spec.csv, gpu: V100}
workload:
  trace: {path: $REAL/60_job.csv, format: tiresias}
Y
expect_exit 0 "$FLEETSIM" run tiresias.yaml -o t.h5
expect_out '^fleet +64 GPUs in 1 pool'
expect_out '60 submitted, 60 completed, 0 unfinished, 0 rejected'
[ -f t.h5 ] && ok || bad "no results"
if command -v h5dump >/dev/null; then
    h5dump -d /jobs t.h5 > jobs.txt 2>&1 && ok || bad "h5dump /jobs failed"
fi

cat > openb.yaml <<Y
name: openb-300
horizon: 200d
cluster:
  from: {format: openb, path: $REAL/openb_node_list_gpu_node.csv}
workload:
  trace: {path: $REAL/openb_pods_gpuspec33_300.csv.gz, format: auto}
Y
expect_exit 0 "$FLEETSIM" run openb.yaml -o o.h5
expect_out '^fleet +6212 GPUs in 15 pools'
expect_out '281 submitted, 281 completed, 0 unfinished, 0 rejected'
expect_out '^skipped +19 trace rows'
expect_err 'format auto: detected openb'
expect_err 'note: skipped 19 rows: cpu_only \(num_gpu 0\) 19'
[ -f o.h5 ] && ok || bad "no results"

# CPU-only pods refused: exit 2 with the row
sed 's/format: auto}/format: openb, cpu_only: error}/' openb.yaml > refuse.yaml
expect_exit 2 "$FLEETSIM" run refuse.yaml -o bad.h5
expect_err 'openb_pods_gpuspec33_300.csv.gz:[0-9]+: field num_gpu: expected a GPU count >= 1'
expect_no_file bad.h5

# validate shows the fleet key; a missing machine list is an input error
expect_exit 0 "$FLEETSIM" validate openb.yaml
sed "s|$REAL/openb_node_list_gpu_node.csv|nonexistent.csv|" openb.yaml > nolist.yaml
expect_exit 2 "$FLEETSIM" validate nolist.yaml
expect_err 'nolist.yaml:4:[0-9]+: cluster.from: cannot open .*nonexistent.csv'

finish
