#!/usr/bin/env bash
# Borrowed and lent quota per resource in /tenants and run --json (issue
# 40), a hand case: ClusterQueues a (team LS) and b (team BE) of one cohort;
# a has 4 cores, 8 GiB and 1 pod, b 4 cores, 8 GiB and 2 pods (8 GPUs each).
# LS runs two pods of 3 cores and 6 GiB for an hour, BE one of 1 core and
# 1 GiB: LS borrows 2 core-hours, 4 GiB-hours and 1 pod-hour, and BE (b's
# only team) lends them.  No GPU is borrowed.
source "$(dirname "$0")/lib/common.bash"

cat > q.csv <<EOF
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0001,3000,6144,1,1000,,LS,Succeeded,0,3600,0
openb-pod-0002,3000,6144,1,1000,,LS,Succeeded,0,3600,0
openb-pod-0003,1000,1024,1,1000,,BE,Succeeded,0,3600,0
EOF
cat > q.yaml <<EOF
name: kueue-quota-per-resource
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  trace: {path: q.csv, format: openb}
scheduler:
  queue: kueue
  kueue:
    cluster_queues:
      - {name: a, cohort: co, tenants: LS,
         quotas: [{flavor: p, nominal: 8}, {flavor: p, resource: cpu, nominal: 4},
                  {flavor: p, resource: memory, nominal: 8192}, {flavor: p, resource: pods, nominal: 1}]}
      - {name: b, cohort: co, tenants: BE,
         quotas: [{flavor: p, nominal: 8}, {flavor: p, resource: cpu, nominal: 4},
                  {flavor: p, resource: memory, nominal: 8192}, {flavor: p, resource: pods, nominal: 2}]}
EOF
expect_exit 0 "$FLEETSIM" run q.yaml -o q.h5 -q --json
cp out.txt q.json
/usr/bin/python3 - q.h5 q.json > py.txt 2>&1 <<'EOF' && ok || bad "per-resource borrowed/lent: $(cat py.txt)"
import sys, json, math, h5py
t = h5py.File(sys.argv[1], "r")["tenants"][:]
rows = {r["name"].decode(): r for r in t}
want = {"LS": dict(borrowed_cpu_core_hours=2, borrowed_memory_gib_hours=4, borrowed_pod_hours=1,
                   lent_cpu_core_hours=0, lent_memory_gib_hours=0, lent_pod_hours=0,
                   borrowed_gpu_hours=0, lent_gpu_hours=0),
        "BE": dict(borrowed_cpu_core_hours=0, borrowed_memory_gib_hours=0, borrowed_pod_hours=0,
                   lent_cpu_core_hours=2, lent_memory_gib_hours=4, lent_pod_hours=1,
                   borrowed_gpu_hours=0, lent_gpu_hours=0)}
names = list(t.dtype.names)
assert names[-6:] == ["borrowed_cpu_core_hours", "lent_cpu_core_hours", "borrowed_memory_gib_hours",
                      "lent_memory_gib_hours", "borrowed_pod_hours", "lent_pod_hours"], names
js = {r["name"]: r for r in json.load(open(sys.argv[2]))["tenants"]}
for team, cols in want.items():
    for c, v in cols.items():
        assert abs(rows[team][c] - v) < 1e-9, (team, c, rows[team][c], v)
        assert abs(js[team][c] - v) < 1e-9, ("json", team, c, js[team][c], v)
EOF

# GPU quotas only: the other resources' columns are NaN (null in --json)
sed -n '1,/cluster_queues:/p' q.yaml > g.yaml
cat >> g.yaml <<EOF
      - {name: a, cohort: co, tenants: LS, quotas: [{flavor: p, nominal: 8}]}
      - {name: b, cohort: co, tenants: BE, quotas: [{flavor: p, nominal: 8}]}
EOF
expect_exit 0 "$FLEETSIM" run g.yaml -o g.h5 -q
/usr/bin/python3 - g.h5 > py.txt 2>&1 <<'EOF' && ok || bad "GPU-only quotas: $(cat py.txt)"
import sys, math, h5py
for r in h5py.File(sys.argv[1], "r")["tenants"][:]:
    for c in ("borrowed_cpu_core_hours", "lent_cpu_core_hours", "borrowed_memory_gib_hours",
              "lent_memory_gib_hours", "borrowed_pod_hours", "lent_pod_hours"):
        assert math.isnan(r[c]), (r["name"], c, r[c])
    assert r["borrowed_gpu_hours"] == 0, r
EOF
finish
