#!/usr/bin/env bash
# Issue 15: Google's ML Productivity Goodput = scheduling x runtime x program,
# per job (/jobs) and over the jobs in statistics (/summary), on hand cases.
source "$(dirname "$0")/lib/common.bash"

# two 1-GPU jobs of 1 h on one GPU under FIFO: the first runs 0-1 h, the
# second waits 1 h and runs 1-2 h.  Scheduling: 1 and 0.5 per job, 2 h held
# over 3 h of GPUs x (end - submit) = 2/3 in all; runtime 1; program the MFU
# (0.375 by default, 0.5 for class 1); ML goodput = useful x MFU / 3 h.
cat > gp.csv <<'EOF'
id,submit,gpus,duration,class
1,0,1,3600,0
2,0,1,3600,1
EOF
cat > gp.yaml <<'EOF'
name: goodput
seed: 1
warmup: 0
cluster:
  pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 1}]
workload:
  trace: {path: gp.csv, format: native}
telemetry:
  activity: [{class: 1, mfu: 0.5}]
EOF
expect_exit 0 "$FLEETSIM" run gp.yaml -o gp.h5 -q
# with a failure (a planned node outage at 35 min, 1 min long, how: fail)
# under one 2-GPU job of 1 h with a checkpoint every 10 min of compute:
# 5 min of work lost, detection 5 min (nothing held: the job's one node
# failed), requeued at 40 min, a 10-min restore, 30 min of work left: it
# ends at 80 min.  Held 2 x (35 + 40) min = 9,000 GPU-s, useful 7,200:
# runtime 0.8; scheduling 9,000 / (2 x 4,800) = 0.9375; ML 0.28125.
# (Before, the drain ended the outage's repair while the job was only
# recovering, and the run stopped with the job stuck.)
cat > gpf.yaml <<'EOF'
name: goodput-failure
seed: 1
warmup: 0
cluster:
  pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 2}]
workload:
  trace: {path: gpf.csv, format: native}
failures:
  planned: [{at: 35m, kind: node, unit: 0, duration: 1m, how: fail}]
recovery: {checkpoint: fixed, interval: 10m, write_cost: 0s}
EOF
cat > gpf.csv <<'EOF'
id,submit,gpus,duration
1,0,2,3600
EOF
expect_exit 0 "$FLEETSIM" run gpf.yaml -o gpf.h5 -q
/usr/bin/python3 - gp.h5 gpf.h5 > gppy.txt 2>&1 <<'EOF' && ok || bad "goodput: $(cat gppy.txt)"
import sys, h5py, math
f = h5py.File(sys.argv[1], "r")
j = {int(r["id"]): r for r in f["jobs"][:]}
s = f["summary"][0]
close = lambda a, b: abs(a - b) < 1e-9
assert close(j[1]["sched_goodput"], 1) and close(j[2]["sched_goodput"], 0.5), (j[1], j[2])
assert close(j[1]["goodput"], 1) and close(j[2]["goodput"], 1)
assert close(j[1]["program_goodput"], 0.375) and close(j[2]["program_goodput"], 0.5)
assert close(s["goodput_scheduling"], 2 / 3) and close(s["goodput_runtime"], 1)
assert close(s["goodput_program"], (0.375 + 0.5) / 2)
assert close(s["goodput_ml"], (3600 * 0.375 + 3600 * 0.5) / (3 * 3600))
assert close(s["goodput_ml"], s["goodput_scheduling"] * s["goodput_runtime"] * s["goodput_program"])
g = h5py.File(sys.argv[2], "r")
r, s = g["jobs"][0], g["summary"][0]
assert r["restarts"] == 1 and close(r["lost_gpu_s"], 600) and close(r["end"], 4800), r
assert close(r["goodput"], 0.8) and close(r["sched_goodput"], 0.9375) and close(r["program_goodput"], 0.375), r
assert close(s["goodput_scheduling"], 0.9375) and close(s["goodput_runtime"], 0.8)
assert close(s["goodput_ml"], 0.28125)
print("goodput ok", s["goodput_scheduling"], s["goodput_runtime"], s["goodput_program"], s["goodput_ml"])
EOF
cat gppy.txt
finish
