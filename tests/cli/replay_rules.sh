#!/usr/bin/env bash
# Site rules of replayed logs: Cobalt's WFP utility order (queue: wfp,
# docs/policies.md): utility = (queued / requested)^exponent x size, largest
# first, recomputed every scheduler.wfp.period.
source "$(dirname "$0")/lib/common.bash"

# One node.  Job 1 holds it from 0 to 1000 s.  Job 2 (submitted at 10,
# asks 10,000 s, runs 50) and job 3 (at 20, asks 100 s, runs 50) wait.  At
# the recomputation at 900 s: job 2's utility (890/10000)^3 is far below
# job 3's (880/100)^3, so job 3 starts first at 1000 and job 2 at 1050;
# FIFO (and WFP with exponent 0: utility = size, equal) starts job 2 first.
cat > wfp.swf <<'SWF'
; MaxProcs: 1
1 0 0 1000 1 -1 -1 1 1000 -1 1 1 1 -1 -1 -1 -1 -1
2 10 -1 50 1 -1 -1 1 10000 -1 1 2 1 -1 -1 -1 -1 -1
3 20 -1 50 1 -1 -1 1 100 -1 1 3 1 -1 -1 -1 -1 -1
SWF
cat > wfp.yaml <<YAML
name: wfp
cluster:
  pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 1}]
workload:
  trace: {path: wfp.swf, format: swf}
scheduler: {queue: wfp}
YAML
starts() {  # starts FILE: "id:start ..." in id order
    /usr/bin/python3 -c '
import sys, h5py
j = h5py.File(sys.argv[1], "r")["jobs"][()]
print(" ".join("%d:%g" % (r["id"], r["start"]) for r in sorted(j, key=lambda r: r["id"])))' "$1"
}
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" run wfp.yaml -o wfp.h5 -q
    [ "$(starts wfp.h5)" = "1:0 2:1050 3:1000" ] && ok || bad "wfp: starts $(starts wfp.h5)"
    expect_exit 0 "$FLEETSIM" run wfp.yaml --set scheduler.wfp.exponent=0 -o wfp0.h5 -q
    [ "$(starts wfp0.h5)" = "1:0 2:1000 3:1050" ] && ok || bad "wfp exponent 0: starts $(starts wfp0.h5)"
    expect_exit 0 "$FLEETSIM" run wfp.yaml --set scheduler.queue=fifo -o fifo.h5 -q
    [ "$(starts fifo.h5)" = "1:0 2:1000 3:1050" ] && ok || bad "fifo: starts $(starts fifo.h5)"
    # recomputed only every period: with a period past the decision, both
    # utilities are still 0 at 1000 s and admission order decides
    expect_exit 0 "$FLEETSIM" run wfp.yaml --set scheduler.wfp.period=2000s -o wfpp.h5 -q
    [ "$(starts wfpp.h5)" = "1:0 2:1000 3:1050" ] && ok || bad "wfp period: starts $(starts wfpp.h5)"
fi
# Per-user limits (scheduler.limits, docs/policies.md "Per-user limits"):
# four GPUs free.  User 1 submits jobs 1-3 at 0 (one GPU, 100 s each), user
# 2 job 4 at 5.  With max_jobs_per_user 2, job 3 is held although two GPUs
# are free, and starts when job 1 ends (100); user 2 is not held.  Without
# the limit all start at once.
cat > lim.swf <<'SWF'
; MaxProcs: 4
1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
2 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
3 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
4 5 -1 100 1 -1 -1 1 100 -1 1 2 1 -1 -1 -1 -1 -1
SWF
# max_gpus_per_user 2: user 1's job 2 (3 GPUs, larger than the cap) waits
# until user 1 has nothing active (job 1 ends at 100) and then runs alone;
# job 3, submitted after it, is held behind it until it ends (200) although
# a GPU is free all along (no job of a user overtakes an earlier one).
cat > limg.swf <<'SWF'
; MaxProcs: 4
1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
2 1 -1 100 3 -1 -1 3 100 -1 1 1 1 -1 -1 -1 -1 -1
3 2 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
SWF
for t in lim limg; do
    cat > $t.yaml <<YAML
name: $t
cluster:
  pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 1}]
workload:
  trace: {path: $t.swf, format: swf}
scheduler: {queue: fifo, backfill: easy}
YAML
done
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" run lim.yaml -o lim0.h5 -q
    [ "$(starts lim0.h5)" = "1:0 2:0 3:0 4:5" ] && ok || bad "no limit: starts $(starts lim0.h5)"
    expect_exit 0 "$FLEETSIM" run lim.yaml --set scheduler.limits.max_jobs_per_user=2 -o lim2.h5 -q
    [ "$(starts lim2.h5)" = "1:0 2:0 3:100 4:5" ] && ok || bad "max_jobs 2: starts $(starts lim2.h5)"
    # the same with conservative backfill and with plain FIFO (any policy)
    expect_exit 0 "$FLEETSIM" run lim.yaml --set scheduler.limits.max_jobs_per_user=2 \
        --set scheduler.backfill=conservative -o lim2c.h5 -q
    [ "$(starts lim2c.h5)" = "1:0 2:0 3:100 4:5" ] && ok || bad "conservative: starts $(starts lim2c.h5)"
    expect_exit 0 "$FLEETSIM" run lim.yaml --set scheduler.limits.max_jobs_per_user=1 \
        --set scheduler.backfill=none -o lim1.h5 -q
    [ "$(starts lim1.h5)" = "1:0 2:100 3:200 4:5" ] && ok || bad "max_jobs 1: starts $(starts lim1.h5)"
    expect_exit 0 "$FLEETSIM" run limg.yaml --set scheduler.limits.max_gpus_per_user=2 -o limg.h5 -q
    [ "$(starts limg.h5)" = "1:0 2:100 3:200" ] && ok || bad "max_gpus 2: starts $(starts limg.h5)"
    expect_exit 0 "$FLEETSIM" run limg.yaml --set scheduler.limits.max_gpus_per_user=4 -o limg4.h5 -q
    [ "$(starts limg4.h5)" = "1:0 2:1 3:100" ] && ok || bad "max_gpus 4: starts $(starts limg4.h5)"
    # a job too large for the cluster is rejected at admission: its slot is
    # freed without ever being counted, and the user's count stays right
    sed 's/^; MaxProcs: 4/; MaxProcs: 8/' lim.swf > limr.swf
    echo "5 1 -1 100 8 -1 -1 8 100 -1 1 1 1 -1 -1 -1 -1 -1" >> limr.swf
    expect_exit 0 "$FLEETSIM" run lim.yaml --set workload.trace.path=limr.swf \
        --set scheduler.limits.max_jobs_per_user=2 -o limr.h5 -q
    [ "$(starts limr.h5)" = "1:0 2:0 3:100 4:5 5:nan" ] && ok || bad "rejected: starts $(starts limr.h5)"
fi
expect_exit 2 "$FLEETSIM" validate wfp.yaml --set scheduler.wfp.exponent=-1
expect_err 'scheduler.wfp.exponent'
finish
