#!/usr/bin/env bash
# Issue 14: a job that ran on a time-sliced GPU (its share then one
# replica's) and is queued again after a failure asks a whole GPU again:
# on a mixed fleet it may restart on the whole-GPU pool, and then holds a
# whole GPU there (before the fix, 14 whole-pool attempts held a quarter).
source "$(dirname "$0")/lib/common.bash"

cat > mix.yaml <<'EOF'
name: mixed-sharing
seed: 4
horizon: 1d
until: horizon
warmup: 0
cluster:
  pools:
    - {name: ts, gpu: H100, nodes: 2, gpus_per_node: 2, sharing: {time_slicing: 4}}
    - {name: whole, gpu: H100, nodes: 2, gpus_per_node: 2}
workload:
  synthetic:
    arrivals: {rate: 6/h}
    gpus: {1: 1}
    duration: {dist: exponential, mean: 2h}
failures:
  components: [{kind: node, tbf: {dist: exponential, mean: 6h}}]
output: {gpu_intervals: true}
EOF
expect_exit 0 "$FLEETSIM" run mix.yaml -o mix.h5 -q
/usr/bin/python3 - mix.h5 > mixpy.txt 2>&1 <<'EOF' && ok || bad "shared then whole: $(cat mixpy.txt)"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
j, iv = f["jobs"][:], f["gpu_intervals"][:]
assert ((j["pool"] == 1) <= (j["gpu_milli"] == 1000)).all(), "a job on the whole-GPU pool holds a share"
assert ((j["pool"] == 0) <= (j["gpu_milli"] == 250)).all(), "a job on the time-sliced pool holds more than a replica"
# jobs that held a replica, then a whole GPU (nodes 2-3 are the whole pool)
both = set(iv[iv["node"] < 2]["job"]) & set(iv[iv["node"] >= 2]["job"])
assert len(both) >= 3, both
for r in iv:
    assert r["gpu_milli"] == (250 if r["node"] < 2 else 1000), r
print(len(both), "jobs ran on both pools")
EOF
finish
