#!/usr/bin/env bash
# Issue 14: Karpenter (cluster.autoscale.provisioner: karpenter) against the
# Cluster Autoscaler on one burst: twelve pods of 1-8 GPUs submitted over
# the first 5 s, two instance types billed per provisioned GPU-hour
# (reserved_1y: small 4-GPU nodes at $3/GPU-h = $12/node-h, big 8-GPU nodes
# at $2.5/GPU-h = $20/node-h).  Closed forms: the Cluster Autoscaler's first
# pod starts at its 10 s scan + 2 min + 1 min = 190 s; Karpenter's batch
# closes 1 s after the last pod (6 s) and its nodes are allocatable
# 6 + 35 + 60 = 101 s later.  Every /nodegroups row keeps min <= size <= max.
# The node-hours and cost of both are printed (docs/validation.md).
source "$(dirname "$0")/lib/common.bash"

cat > burst.csv <<'CSV'
id,submit,gpus,duration
1,0,8,3600
2,0.5,4,3600
3,1,4,1800
4,1.5,2,3600
5,2,2,1800
6,2.5,1,3600
7,3,1,3600
8,3.5,8,1800
9,4,4,3600
10,4.5,4,3600
11,5,2,3600
12,5,1,1800
CSV
cat > ca.yaml <<'YAML'
name: burst
seed: 1
horizon: 3h
until: horizon
warmup: 0
cluster:
  pools:
    - {name: small, gpu: H100, nodes: 8, gpus_per_node: 4}
    - {name: big, gpu: H100, nodes: 6, gpus_per_node: 8}
  autoscale:
    provisioner: cluster-autoscaler
    node_groups: [{pool: small, min: 0, max: 8}, {pool: big, min: 0, max: 6}]
cost:
  pools:
    - {pool: small, billing: reserved_1y, price: 3}
    - {pool: big, billing: reserved_1y, price: 2.5}
workload:
  trace: {path: burst.csv, format: native}
output: {timeline_interval: 10s}
YAML
sed 's/provisioner: cluster-autoscaler/provisioner: karpenter/' ca.yaml > kp.yaml
expect_exit 0 "$FLEETSIM" run ca.yaml -o ca.h5 -q
expect_exit 0 "$FLEETSIM" run kp.yaml -o kp.h5 -q
/usr/bin/python3 - ca.h5 kp.h5 > cmp.txt 2>&1 <<'PY' && ok || bad "karpenter vs cluster-autoscaler: $(cat cmp.txt)"
import sys, h5py
out = {}
for name, path in (("cluster-autoscaler", sys.argv[1]), ("karpenter", sys.argv[2])):
    f = h5py.File(path, "r")
    jobs, ng, s = f["jobs"][:], f["nodegroups"][:], f["summary"][0]
    groups = sorted(set(ng["group"]))
    last = [ng[ng["group"] == g][-1] for g in groups]
    node_h = sum(r["node_s_provisioning"] + r["node_s_ready"] for r in last) / 3600
    gpu_h = sum((r["node_s_provisioning"] + r["node_s_ready"]) * gpn for r, gpn in zip(last, (4, 8))) / 3600
    for g, (lo, hi) in zip(groups, ((0, 8), (0, 6))):
        size = ng[ng["group"] == g]["nodes_provisioning"] + ng[ng["group"] == g]["nodes_ready"]
        assert lo <= size.min() and size.max() <= hi, (name, g, size.min(), size.max())
    out[name] = (jobs["start"].min(), jobs["wait"].mean(), node_h, gpu_h, s["cost_total"],
                 [int(r["nodes_added"]) for r in last])
    print("%-18s first start %6.1f s  mean wait %7.1f s  node-hours %7.3f  GPU-hours %7.3f  "
          "cost $%8.3f  nodes added (small, big) %s" %
          ((name,) + out[name]))
ca, kp = out["cluster-autoscaler"], out["karpenter"]
assert abs(ca[0] - 190) < 1e-9, ca
assert abs(kp[0] - 101) < 1e-9, kp
PY
cat cmp.txt
finish
