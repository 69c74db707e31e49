#!/usr/bin/env bash
# Issue 14: /nodegroups, the Cluster Autoscaler's node groups over time.
# The hand case of tests/test_autoscale.c: one 8-GPU job of 1 h on an empty
# group is decided at the first scan (10 s), its node is allocatable 2 min +
# 1 min later (190 s), the job runs to 3790 s, and the node leaves 600 s
# after the first scan that saw it empty (4390 s): 180 node-seconds
# provisioning and 4200 ready, one node added and one removed.
source "$(dirname "$0")/lib/common.bash"

cat > ng.csv <<'EOF'
id,submit,gpus,duration
1,0,8,3600
EOF
cat > ng.yaml <<'EOF'
name: nodegroups
seed: 1
horizon: 2h
until: horizon
warmup: 0
cluster:
  pools:
    - {name: fixed, gpu: H100, nodes: 1, gpus_per_node: 4}
    - {name: burst, gpu: H100, nodes: 4, gpus_per_node: 8}
  autoscale:
    node_groups: [{pool: burst, min: 0, max: 3}]
workload:
  trace: {path: ng.csv, format: native}
output: {timeline_interval: 1m}
EOF
expect_exit 0 "$FLEETSIM" run ng.yaml -o ng.h5 -q
/usr/bin/python3 - ng.h5 > ngpy.txt 2>&1 <<'EOF' && ok || bad "/nodegroups: $(cat ngpy.txt)"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
ng, tl = f["nodegroups"][:], f["timeline"][:]
assert set(ng["group"]) == {0} and set(ng["pool"]) == {1}, ng[:3]
last = ng[-1]
assert last["time"] == 7200, last
assert (last["nodes_added"], last["nodes_removed"]) == (1, 1), last
assert abs(last["node_s_provisioning"] - 180) < 1e-6 and abs(last["node_s_ready"] - 4200) < 1e-6, last
# one row per /timeline sample (the end's row replaces a sample at the last
# instant), agreeing with /timeline's totals over the (one) group
samples = ng
assert len(samples) == len(tl) and (samples["time"] == tl["time"]).all()
assert (samples["nodes_provisioning"] == tl["nodes_provisioning"]).all()
assert (samples["nodes_ready"] == tl["nodes_autoscaled"]).all()
at = {float(r["time"]): r for r in ng}
assert at[60]["nodes_provisioning"] == 1 and at[240]["nodes_ready"] == 1 and at[4440]["nodes_ready"] == 0
# node-seconds are cumulative and never decrease
assert (ng["node_s_ready"][1:] >= ng["node_s_ready"][:-1]).all()
print("nodegroups ok:", len(ng), "rows")
EOF
# without node groups there is no /nodegroups table
sed '/autoscale:/d; /node_groups:/d' ng.yaml > plain.yaml
expect_exit 0 "$FLEETSIM" run plain.yaml -o plain.h5 -q
/usr/bin/python3 -c "import h5py, sys; sys.exit('nodegroups' in h5py.File('plain.h5', 'r'))" && ok || bad "/nodegroups written without node groups"
finish
