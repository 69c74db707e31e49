#!/usr/bin/env bash
# How a run ends: a trace without a horizon is replayed whole; a drain ends
# with its last job even when failure processes go on; a drain that can
# never end (jobs no pool or quota can ever start, or still active past
# drain_limit) stops with exit 1 naming the jobs (docs/scenario.md, until).
source "$(dirname "$0")/lib/common.bash"
REAL="$SRC/tests/data/traces/real"
attr() {  # attr FILE NAME: the value of a root attribute as h5dump prints it
    h5dump -a "/$2" "$1" 2>/dev/null | sed -nE 's/^ *\(0\): *//p' | head -n 1
}
# partial FILE REASON UNFINISHED: a run that could not drain left its rows
# so far with complete = 0, the reason and the unfinished jobs counted
partial() {
    [ -f "$1" ] && ok || bad "$1: no partial results"
    expect_err "partial results written to $1 \\(complete = 0\\)"
    if command -v h5dump >/dev/null && [ -f "$1" ]; then
        [ "$(attr "$1" complete)" = 0 ] && ok || bad "$1: complete is not 0"
        attr "$1" incomplete_reason | grep -q "$2" && ok ||
            bad "$1: incomplete_reason is '$(attr "$1" incomplete_reason)', not '$2'"
        [ "$(attr "$1" unfinished_jobs)" = "$3" ] && ok ||
            bad "$1: unfinished_jobs is '$(attr "$1" unfinished_jobs)', not $3"
    fi
}

# ---- a trace without a horizon: every job (the SWF excerpt spans 8.4 days,
# more than the 7-day default that used to cut it)
cat > swf.yaml <<EOF
name: swf-whole
cluster:
  pools: [{name: p, gpu: H100, nodes: 16, gpus_per_node: 8}]
workload:
  trace: {path: $REAL/hpc2n_200.swf, format: swf}
EOF
expect_exit 0 "$FLEETSIM" run swf.yaml -o swf.h5
expect_out '^jobs +194 submitted, 194 completed'
grep -q 'past the horizon' err.txt && bad "warned of a cut trace" || ok
# the dump leaves the horizon to the trace; an explicit horizon still cuts
expect_exit 0 "$FLEETSIM" validate --dump swf.yaml
grep -q '^horizon:' out.txt && bad "dump wrote a horizon that was not given" || ok
expect_exit 0 "$FLEETSIM" run swf.yaml --set horizon=2d -o swf2.h5
expect_out '^jobs +[0-9]+ submitted'
grep -Eq '^jobs +194 submitted' out.txt && bad "horizon=2d did not cut the trace" || ok
expect_err 'past the horizon'

# the openb pods (117 days) over their own node list: all 281 GPU pods
cat > openb.yaml <<EOF
name: openb-whole
cluster:
  from: {format: openb, path: $REAL/openb_node_list_gpu_node.csv}
workload:
  trace: {path: $REAL/openb_pods_gpuspec33_300.csv, format: openb, default_duration: 1h}
output: {timeline_interval: 0s}
EOF
expect_exit 0 "$FLEETSIM" run openb.yaml -o openb.h5 -q
expect_exit 0 "$FLEETSIM" run openb.yaml -o openb.h5
expect_out '^jobs +281 submitted, 281 completed'
# the full default pod list of the shared data set, when it is there
for d in "$SRC/../shared/data" "$SRC/../../shared/data" /work/shared/data; do
    OB="$d/alibaba-openb-2023"
    [ -f "$OB/openb_pod_list_default.csv" ] || continue
    cat > openb_default.yaml <<EOF
name: openb-default
cluster:
  from: {format: openb, path: $OB/openb_node_list_gpu_node.csv}
workload:
  trace: {path: $OB/openb_pod_list_default.csv, format: openb, default_duration: 1h}
output: {timeline_interval: 0s}
EOF
    expect_exit 0 "$FLEETSIM" run openb_default.yaml --no-output
    expect_out '^jobs +7064 submitted, 7064 completed'
    break
done

# ---- failures on, until: drain: the run ends with the last job (7 h of
# work, one node failure on the way), not at the 7-day horizon
printf 'id,submit,gpus,duration\n1,0,8,25200\n' > one.csv
cat > onefail.yaml <<EOF
name: one-job-failures
horizon: 7d
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  trace: {path: one.csv}
failures:
  components: [{kind: node, tbf: {dist: exponential, mean: 1d}}]
EOF
expect_exit 0 "$FLEETSIM" run onefail.yaml -o onefail.h5
expect_out '^makespan +9\.52 h'
expect_out '^failures +1, 1 jobs interrupted'

# ---- stuck: a job larger than what is left after a pool retires for good
# (FIFO), with the timeline sampling every 5 minutes: exit 1 at once,
# naming the job and why; the results so far are kept, complete = 0
printf 'id,submit,gpus,duration\n1,0,8,600\n2,7200,16,600\n3,7300,8,600\n' > three.csv
cat > retired.yaml <<EOF
name: retired-pool
cluster:
  pools: [{name: old, gpu: H100, nodes: 2, gpus_per_node: 8}, {name: new, gpu: H100, nodes: 1, gpus_per_node: 8}]
workload:
  trace: {path: three.csv}
cost:
  pools: [{pool: old, retire: 1h}]
EOF
expect_exit 1 timeout 20 "$FLEETSIM" run retired.yaml -o retired.h5
expect_err 'no queued job can ever start: 1 job \(2\) waits'
expect_err 'job 2 needs 16 GPUs; its pools have 8 of 24 GPUs in service'
partial retired.h5 'no queued job can ever start' 1

# Kueue: a ClusterQueue quota smaller than a job, and a tenant no queue
# covers: exit 1, both named
printf 'id,submit,gpus,duration,tenant\n1,0,4,600,a\n2,60,8,600,a\n3,120,2,600,b\n' > k.csv
cat > ksmall.yaml <<EOF
name: kueue-small-quota
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  trace: {path: k.csv}
scheduler:
  queue: kueue
  kueue:
    cluster_queues: [{name: a, quotas: [{flavor: p, nominal: 4}], tenants: a}]
EOF
expect_exit 1 timeout 20 "$FLEETSIM" run ksmall.yaml -o k.h5
expect_err 'no queued job can ever start: 2 jobs \(2, 3\) wait'
expect_err "policy 'kueue' never starts it: ClusterQueue 'a' can hold at most 4 GPUs in any flavor"
partial k.h5 'no queued job can ever start' 2
# validate warns about both before anything runs (the trace is read for it)
expect_exit 0 "$FLEETSIM" validate ksmall.yaml
expect_err "ksmall.yaml: warning: no queue or quota can ever admit 1 job of the trace \(2\): ClusterQueue 'a' can hold at most 4 GPUs"
expect_err "ksmall.yaml: warning: no queue or quota can ever admit 1 job of the trace \(3\): tenant 'b' has no LocalQueue"
# and for a synthetic workload, by its tenants and GPU-count mix
cat > ksynth.yaml <<EOF
name: kueue-synthetic
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic:
    arrivals: {rate: 1/h}
    gpus: {4: 0.5, 8: 0.5}
    duration: {dist: constant, value: 1h}
    tenants: {a: 0.5, b: 0.5}
scheduler:
  queue: kueue
  kueue:
    cluster_queues: [{name: a, quotas: [{flavor: p, nominal: 4}], tenants: a}]
EOF
expect_exit 0 "$FLEETSIM" validate ksynth.yaml
expect_err "warning: no queue or quota can ever admit 8-GPU jobs of tenant 'a': ClusterQueue 'a' can hold at most 4 GPUs"
expect_err "warning: no queue or quota can ever admit 4-GPU jobs of tenant 'b': tenant 'b' has no LocalQueue"
grep -q "4-GPU jobs of tenant 'a'" err.txt && bad "warned about admissible jobs" || ok
# a real manifest whose LocalQueue covers one team only
cat > lq-manifest.yaml <<EOF
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: research
spec:
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: p
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 16
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: team-a
  name: training
spec:
  clusterQueue: research
EOF
cat > lq.yaml <<EOF
name: one-localqueue
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}, tenants: {team-a: 0.7, team-b: 0.3}}
scheduler:
  queue: kueue
  kueue: {manifests: lq-manifest.yaml}
EOF
expect_exit 0 "$FLEETSIM" validate lq.yaml
expect_err "warning: no queue or quota can ever admit 8-GPU jobs of tenant 'team-b': tenant 'team-b' has no LocalQueue, no ClusterQueue of its name and no scheduler.kueue.default_queue"
grep -q "tenant 'team-a'" err.txt && bad "warned about team-a" || ok

# Volcano: a job larger than its queue's capability
cat > vcap.yaml <<EOF
name: volcano-capability
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  trace: {path: k.csv}
scheduler:
  queue: volcano
  volcano:
    queues: [{name: a, capability: 4, tenants: a}, {name: b, tenants: b}]
EOF
expect_exit 1 timeout 20 "$FLEETSIM" run vcap.yaml -o vcap.h5
expect_err "1 job \(2\) waits .* policy 'volcano' never starts it: its queue 'a' has a capability of 4 GPUs, less than the 8 GPUs it asks"
partial vcap.h5 "no queued job can ever start" 1
# validate warns about it (the policy's probe hook), and only about it
expect_exit 0 "$FLEETSIM" validate vcap.yaml
expect_err "vcap.yaml: warning: no queue or quota can ever admit 1 job of the trace \(2\): tenant 'a' maps to Volcano queue 'a', whose capability of 4 GPUs is less than the 8 GPUs asked"
grep -q "job of the trace (1)\|(3)" err.txt && bad "warned about admissible jobs" || ok
sed 's/capability: 4/capability: 8/' vcap.yaml > vcap8.yaml
expect_exit 0 "$FLEETSIM" validate vcap8.yaml
grep -q "warning" err.txt && bad "warned with a capability that holds every job" || ok

# ---- the drain cap: a job still running drain_limit after the last arrival
printf 'id,submit,gpus,duration\n1,0,8,7200\n2,60,8,60\n' > long.csv
cat > long.yaml <<EOF
name: drain-cap
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  trace: {path: long.csv}
EOF
expect_exit 0 "$FLEETSIM" run long.yaml --no-output
expect_exit 1 "$FLEETSIM" run long.yaml --set drain_limit=1h -o long.h5
expect_err '1 job is still queued or running 0.0416667 d after the last arrival \(drain_limit\)'
expect_err ': 1; raise drain_limit'
partial long.h5 'drain_limit reached' 1
# its /jobs holds the job that finished (2), not the one still running (1)
if command -v h5dump >/dev/null; then
    h5dump -d /jobs -m %.0f long.h5 > jobs.txt 2>&1
    grep -Eq '^ *\([0-9]+\): \{$' jobs.txt && ok || bad "no /jobs rows in long.h5"
    [ "$(grep -Ec '^ *\([0-9]+\): \{$' jobs.txt)" = 1 ] && ok || bad "long.h5: /jobs should hold 1 row"
fi
expect_exit 2 "$FLEETSIM" validate long.yaml --set drain_limit=-1h
expect_err 'drain_limit'
# ---- the first run's headline: one line says which window the figures
# cover; the window is priced, and its cost per delivered GPU-hour is below
# the H100 on-demand price fleetsim itself uses ($6.88, models/fs_cost.c)
expect_exit 0 "$FLEETSIM" run -o d.h5
expect_out '^window +day 1\.00 to day 7\.00: the arrivals after 24\.00 h of warm-up; figures cover it unless marked "whole run" \(to day 18\.84, the drain included\)'
expect_out '^utilization +76\.6% +\(whole run: 28\.8%'
expect_out '^cost +\$[0-9]+ in the window: \$[0-9.]+ per delivered GPU-hour; whole run \$977840'
price=$(sed -nE 's/^cost .*: \$([0-9.]+) per delivered GPU-hour.*/\1/p' out.txt)
awk -v p="$price" 'BEGIN { exit !(p > 0 && p < 6.88) }' && ok || bad "headline \$/GPU-h '$price' not below 6.88"
if command -v h5dump >/dev/null; then
    h5dump -d /summary d.h5 > s.txt 2>&1
    for f in window_start window_end cost_window cost_per_gpu_hour_window; do
        grep -q "\"$f\"" s.txt && ok || bad "/summary has no $f"
    done
fi
finish
