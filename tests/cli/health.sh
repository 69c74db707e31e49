#!/usr/bin/env bash
# Issue 15: health checks that read the DCGM fields (recovery.health_check).
# A failure whose cause has an Xid is noticed at the next check when that
# comes before the heartbeat timeout; others only by the timeout. For
# failures at Poisson times the check's phase is uniform, so the mean
# detection delay with timeout D and period I >= D is D - D^2 / (2 I)
# (E[min(D, U)], U uniform on [0, I)): checked within 4 standard errors.
source "$(dirname "$0")/lib/common.bash"

cat > h.yaml <<'EOF'
name: health
seed: 5
horizon: 4d
warmup: 0
cluster:
  pools: [{name: p, gpu: H100, nodes: 256, gpus_per_node: 1}]
workload:
  synthetic:
    arrivals: {rate: 23/h}
    gpus: {1: 1}
    duration: {dist: exponential, mean: 10h}
failures:
  components: [{kind: node, tbf: {dist: exponential, mean: 1d}, causes: {dbe: 1}}]
  causes: [{name: dbe, xid: 48, repair: none}]
recovery: {detection: 5m, restore: 0s, requeue: 0s, health_check: 10m}
EOF
expect_exit 0 "$FLEETSIM" run h.yaml -o h.h5 -q
expect_exit 0 "$FLEETSIM" run h.yaml -o h0.h5 -q --set recovery.health_check=0s
expect_exit 0 "$FLEETSIM" run h.yaml -o h5.h5 -q --set recovery.health_check=5m
# a cause without an Xid, and an informational one (92), are not in the fields
sed 's/xid: 48, repair: none/repair: none/' h.yaml > hn.yaml
expect_exit 0 "$FLEETSIM" run hn.yaml -o hn.h5 -q
sed 's/xid: 48, repair: none/xid: 92, repair: none/' h.yaml > h92.yaml
expect_exit 0 "$FLEETSIM" run h92.yaml -o h92.h5 -q
/usr/bin/python3 - h.h5 h0.h5 h5.h5 hn.h5 h92.h5 > hpy.txt 2>&1 <<'EOF' && ok || bad "health checks: $(cat hpy.txt)"
import sys, h5py, numpy as np
def delays(p):
    j = h5py.File(p, "r")["jobs"][:]
    n = int(j["restarts"].sum())
    return j["recovery_s"].sum(), n, j
for p in sys.argv[2], sys.argv[4], sys.argv[5]:     # the heartbeat alone: 300 s each
    tot, n, _ = delays(p)
    assert n > 500 and abs(tot - 300 * n) < 1e-6 * tot, (p, tot, n)
for p, period in (sys.argv[1], 600), (sys.argv[3], 300):
    tot, n, j = delays(p)
    D, I = 300.0, float(period)
    mean = D - D * D / (2 * I)
    var = (D ** 3 / 3 / I + D * D * (1 - D / I)) - mean ** 2
    got = tot / n
    se = (var / n) ** 0.5
    assert n > 500 and abs(got - mean) < 4 * se, (p, got, mean, se, n)
    # each delay is at most D and at least 0: every job's recovery fits
    assert (j["recovery_s"] <= D * j["restarts"] + 1e-6).all()
    print("period %d s: mean detection %.1f s, theory %.1f s, se %.1f, %d interruptions" % (period, got, mean, se, n))
EOF
cat hpy.txt
finish
