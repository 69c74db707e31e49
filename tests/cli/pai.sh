#!/usr/bin/env bash
# The Alibaba PAI 2020 tables given as a directory (task, job and instance
# tables), and the skip reasons of a lenient trace stored in the results
# file (root attribute rows_skipped_by_reason), also for a partial file.
source "$(dirname "$0")/lib/common.bash"
DIR="$SRC/tests/data/traces/pai-dir"

scenario() {  # scenario NAME LENIENT
    cat > "$1.yaml" <<EOT
name: $1
horizon: 1d
cluster:
  pools:
    - {name: main, gpu: T4, nodes: 4, gpus_per_node: 8}
    - {name: V100M32, gpu: V100, nodes: 1, gpus_per_node: 8}
    - {name: p, gpu: P100, nodes: 1, gpus_per_node: 8}
workload:
  trace: {path: $DIR, format: pai, lenient: $2}
EOT
}

# strict: the task-table job missing from the job table stops the run (exit 2)
scenario strict false
expect_exit 2 "$FLEETSIM" run strict.yaml -o s.h5 -q
expect_err "pai_task_table\.csv:7: job 'j4' \(from line 6\): expected a job listed in the job table .*pai_job_table\.csv"
expect_no_file s.h5

# lenient: the four other jobs run; the skip is counted in the file
scenario lenient true
expect_exit 0 "$FLEETSIM" run lenient.yaml -o l.h5
expect_out 'jobs +4 submitted, 4 completed'
expect_out 'skipped +1 trace rows'
expect_err 'skipped 1 row: not in the job table 1 \(lenient mode\)'
h5dump -a /rows_skipped_by_reason l.h5 > attr.txt 2>&1
grep -q '"not in the job table' attr.txt && ok || bad "rows_skipped_by_reason lacks the reason: $(head -c 300 attr.txt)"
grep -Eq '^ +1$' attr.txt && ok || bad "rows_skipped_by_reason: count is not 1"
h5dump -d /summary l.h5 | grep -q 'rows_skipped' && ok || bad "no rows_skipped in /summary"
# job table: users become tenants
h5dump -d /tenants l.h5 > ten.txt 2>&1
for u in alice bob carol; do grep -q "\"$u" ten.txt && ok || bad "tenant $u missing"; done

# one reason per row kind, with counts, through h5py when present
cat > bad.csv <<'EOT'
j1,w,1,Terminated,1,20,600,29,100,T4
j2,w,1,Terminated,x,20,600,29,100,T4
j3,w,1,Done,3,20,600,29,100,T4
j4,w,1,Done,3,20,600,29,100,T4
j5,w,1,Terminated,5,20,600,29,0,
j6,w,1,Terminated,6,30,600,29,100,T4
EOT
cat > bad.yaml <<EOT
name: bad
horizon: 1d
cluster:
  pools:
    - {name: main, gpu: T4, nodes: 1, gpus_per_node: 8}
workload:
  trace: {path: bad.csv, format: pai, lenient: true}
EOT
expect_exit 0 "$FLEETSIM" run bad.yaml -o b.h5 -q
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    /usr/bin/python3 - b.h5 <<'EOT' && ok || bad "rows_skipped_by_reason of b.h5 is wrong"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    got = {r["reason"].decode(): int(r["count"]) for r in f.attrs["rows_skipped_by_reason"]}
    assert got == {"field start_time": 1, "field status": 2, "cpu_only (plan_gpu 0)": 1}, got
    assert int(f["summary"]["rows_skipped"][0]) == 4
EOT
else
    h5dump -a /rows_skipped_by_reason b.h5 | grep -q '"field status' && ok || bad "no field status reason"
fi
# a synthetic run skips nothing: no attribute
expect_exit 0 "$FLEETSIM" run --set horizon=1h --set warmup=0s -o syn.h5 -q
h5dump -a /rows_skipped_by_reason syn.h5 >/dev/null 2>&1 && bad "a synthetic run has rows_skipped_by_reason" || ok
finish
