#!/usr/bin/env bash
# The A30-24GB under MIG (docs/mig.md "A30-24GB"): 4 compute slices, so a
# 1g.6gb pod holds a quarter of the GPU and a 2g.12gb half.  On mig-parted's
# A30 all-balanced (2 x 1g.6gb + 2g.12gb) two 1g pods and a 2g pod fill the
# GPU: the jobs' gpu_milli is 250/250/500, the node's mean SM activity is
# the full 0.7 (0.7 x (1 + 1 + 2) / 4; with sevenths it would be 0.4), the
# board draws idle 16.5 + context 38 + (165 - 16.5 - 38) x 0.7 = 131.85 W;
# once only one 1g pod runs, 0.7 / 4 = 0.175 and 54.5 + 110.5 x 0.175 W.
source "$(dirname "$0")/lib/common.bash"

cat > a30.csv <<'EOF'
id,submit,gpus,duration,mig_profile
1,0,1,2400,1g.6gb
2,0,1,1200,1g.6gb
3,0,1,1200,2g.12gb
EOF
cat > a30.yaml <<'EOF'
name: a30-metrics
horizon: 1h
warmup: 0
until: horizon
cluster:
  pools: [{name: a30, gpu: A30, nodes: 1, gpus_per_node: 1, mig: all-balanced}]
workload:
  trace: {path: a30.csv, format: native}
telemetry: {sm: 0.7}
output: {gpu_intervals: true, timeline_interval: 1m}
EOF
expect_exit 0 "$FLEETSIM" run a30.yaml -o a30.h5 -q
expect_exit 0 "$FLEETSIM" metrics a30.h5 -o node.om --level node --families DCGM_FI_PROF_SM_ACTIVE --step 60
expect_exit 0 "$FLEETSIM" metrics a30.h5 -o gpu.om --families DCGM_FI_DEV_POWER_USAGE --step 60
/usr/bin/python3 - a30.h5 node.om gpu.om > a30py.txt 2>&1 <<'EOF' && ok || bad "A30 MIG: $(cat a30py.txt)"
import re, sys, h5py
f = h5py.File(sys.argv[1], "r")
milli = {int(j["id"]): int(j["gpu_milli"]) for j in f["jobs"][:]}
assert milli == {1: 250, 2: 250, 3: 500}, milli
assert all(j["start"] == 0 for j in f["jobs"][:]), f["jobs"][:]
def samples(path, name):
    out = {}
    for line in open(path):
        m = re.match(r'^([\w:]+)\{[^}]*\} (\S+) (\d+)$', line)
        if m and m.group(1) == name:
            out[int(m.group(3)) - 1767225600] = float(m.group(2))
    return out
sm = samples(sys.argv[2], "fleetsim:sm_active:avg_node")
pw = samples(sys.argv[3], "DCGM_FI_DEV_POWER_USAGE")
n = 0
for t in range(0, 2400, 60):
    want_sm = 0.7 if t < 1200 else 0.7 / 4
    want_pw = 16.5 + 38 + (165 - 16.5 - 38) * want_sm
    assert abs(sm[t] - want_sm) < 1e-9, (t, sm[t], want_sm)
    assert abs(pw[t] - want_pw) <= 5e-4 + 1e-9, (t, pw[t], want_pw)
    n += 1
print("A30: checked", n, "samples")
EOF
finish
