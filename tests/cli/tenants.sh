#!/usr/bin/env bash
# Issue 13, per-team results and preemption: the work-loss warning of
# preemptive policies (and the tiresias preset that silences it), the queued
# and preemption lines of the summary, the new /jobs, /summary, /tenants and
# /cost_pools columns, and fleetsim versus's per-tenant table.
source "$(dirname "$0")/lib/common.bash"

cat > t.yaml <<'EOF2'
name: teams
horizon: 1d
until: horizon
cluster: {pools: [{name: main, gpu: H100, nodes: 4, gpus_per_node: 8}]}
workload:
  synthetic: {arrivals: {rate: 10/h}, gpus: {1: 0.5, 8: 0.5}, tenants: {vision: 0.7, nlp: 0.3},
              duration: {dist: exponential, mean: 1h}}
EOF2

# a preemptive policy that loses work says so on stderr, naming the key
expect_exit 0 "$FLEETSIM" run t.yaml --set scheduler.queue=srtf -o s.h5
expect_err '^fleetsim run: warning: srtf preempts, and a preempted job loses all the work of its attempt .*scheduler.checkpoint_interval'
[ "$(grep -c warning err.txt)" -eq 1 ] && ok || bad "more than one warning line: $(cat err.txt)"
expect_out '^queued +mean .* \(all time queued, requeues included\)'
expect_out '^preemption +[0-9]+ preemptions \(not failures\), [0-9.]+ GPU-h of work lost to them \(\$[0-9]+\)'
expect_out 'failures \$0;'
expect_exit 0 "$FLEETSIM" run t.yaml --set scheduler.queue=las -q
expect_err 'las preempts.*scheduler.preset: tiresias'
# ... and not when work is kept, or the policy does not preempt
expect_exit 0 "$FLEETSIM" run t.yaml --set scheduler.queue=las --set scheduler.preset=tiresias -q
grep -q warning err.txt && bad "warning with the tiresias preset: $(cat err.txt)" || ok
expect_exit 0 "$FLEETSIM" run t.yaml --set scheduler.queue=srtf --set scheduler.checkpoint_interval=1us -q
grep -q warning err.txt && bad "warning with checkpoint_interval" || ok
expect_exit 0 "$FLEETSIM" run t.yaml -o f.h5
grep -q warning err.txt && bad "warning under FIFO" || ok
grep -q '^queued' out.txt && bad "queued line without preemption" || ok
grep -q '^preemption' out.txt && bad "preemption line without preemption" || ok
expect_exit 0 "$FLEETSIM" validate t.yaml --set scheduler.queue=srtf
expect_out 't.yaml: ok'
expect_err '^fleetsim validate: warning: srtf preempts'
expect_exit 0 "$FLEETSIM" validate t.yaml --set scheduler.preset=tiresias
grep -q warning err.txt && bad "validate warns with the tiresias preset" || ok
expect_exit 2 "$FLEETSIM" validate t.yaml --set scheduler.preset=tiresias --set scheduler.queue=sjf
expect_err "preset 'tiresias'"

if command -v h5dump >/dev/null; then
    h5dump -H s.h5 > h.txt
    for c in queued_s preemptions preempt_lost_gpu_s queued_mean queued_p50 queued_p95 queued_p99 \
             gpu_s_lost_preempt cost_preemptions wait_p50 wait_p95 wait_p99 jct_mean jct_p95 \
             preempt_lost_gpu_hours borrowed_gpu_hours lent_gpu_hours; do
        grep -q "\"$c\"" h.txt && ok || bad "no column $c in the results file"
    done
    # per tenant: two rows, named
    h5dump -d /tenants -m '%.6g' s.h5 | grep -Eq '"vision"' && ok || bad "/tenants has no vision row"
fi
# the held split per tenant adds up to /summary's (every job here has a tenant)
if /usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null; then
    /usr/bin/python3 - s.h5 <<'EOF' && ok || bad "/tenants' held split does not add up to /summary's"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
t, s = f["tenants"][:], f["summary"][0]
assert len(t) == 2
for tc, sc in (("held_gpu_hours", "gpu_s_held"), ("computing_gpu_hours", "gpu_s_computing"),
               ("redo_gpu_hours", "gpu_s_redo"), ("ckpt_gpu_hours", "gpu_s_ckpt"),
               ("startup_gpu_hours", "gpu_s_startup"), ("recovering_gpu_hours", "gpu_s_recovering")):
    got, want = t[tc].sum() * 3600, s[sc]
    assert abs(got - want) <= 1e-9 * max(s["gpu_s_busy"], 1), (tc, got, want)
assert s["gpu_s_held"] > 0 and t["held_gpu_hours"].min() > 0
EOF
fi

# report: a per-tenant section
if /usr/bin/python3 -c 'import h5py, numpy, matplotlib' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" report s.h5 -o rep.html
    grep -q '<h2>Per tenant (/tenants)</h2>' rep.html && ok || bad "report has no per-tenant section"
    grep -q '<td>vision</td>' rep.html && ok || bad "report's tenant table has no vision row"
    grep -q '<th>wait p95</th>' rep.html && ok || bad "report's tenant table has no wait p95"
fi

# versus: the per-tenant table, one column per policy
expect_exit 0 "$FLEETSIM" versus t.yaml -p fifo=scheduler.queue=fifo -p srtf=scheduler.queue=srtf \
    -r 2 -o vs
expect_out '^per tenant \(/tenants\): mean \+- 95% t half-width over 2 replications'
expect_err '^fleetsim versus: warning: srtf: srtf preempts'
[ "$(grep -c 'warning' err.txt)" -eq 1 ] && ok || bad "versus: not one warning: $(cat err.txt)"
expect_out '^tenant +metric +fifo +srtf'
expect_out '^vision +jobs +[0-9.]+( \+- [0-9.]+)? +[0-9.]+'
expect_out '^ +wait_p95 +[0-9.]+ (s|min|h|d)( \+- [0-9.]+ (s|min|h|d))? +[0-9.]+ (s|min|h|d)'
expect_out '^ +preemptions +0 +[1-9][0-9.]*'
expect_out '^nlp +jobs'
# ... and the paired differences against the first policy, with intervals
expect_out '^per tenant, paired differences against fifo: mean \[95% interval\]'
expect_out '^tenant +metric +srtf - fifo'
expect_out '^ +wait_p95 +[-+][0-9.]+ (s|min|h|d)'
# tenant nlp's load doubled: its job count up (versus --json: intervals per tenant)
expect_exit 0 "$FLEETSIM" versus t.yaml -p fifo=scheduler.queue=fifo \
    -p 'nlp2=workload.tenant_scale={nlp: 2}' -r 3 -o vs2 --json
/usr/bin/python3 - out.txt <<'EOF' && ok || bad "versus --json: no per-tenant intervals"
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["name"]: x["metrics"] for x in d["tenants"]}
j = t["nlp"]["jobs"]
assert len(j["fifo"]["values"]) == 3 and j["nlp2"]["half_width"] >= 0
assert j["nlp2"]["minus_baseline"]["diff"] > 0
assert "minus_baseline" not in j["fifo"]
EOF
# run --json: the run's /tenants rows
expect_exit 0 "$FLEETSIM" run t.yaml -o j.h5 --json
/usr/bin/python3 - out.txt <<'EOF' && ok || bad "run --json: no tenants"
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(x["name"] for x in d["tenants"]) == ["nlp", "vision"]
assert all(x["jobs"] > 0 and x["wait_p95"] >= 0 for x in d["tenants"])
EOF
# the versus report: per-tenant tables with bootstrap intervals, a p95-wait chart,
# no "95%%" and no "nan%" in it
if /usr/bin/python3 -c 'import h5py, numpy, matplotlib' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" report vs/index.h5 -o vsrep.html
    grep -q '<h2>Per tenant and policy (/tenants of the run files)</h2>' vsrep.html && ok \
        || bad "versus report has no per-tenant section"
    grep -q '<h2>Per tenant: paired differences against fifo</h2>' vsrep.html && ok \
        || bad "versus report has no per-tenant differences"
    grep -q 'percentile-bootstrap' vsrep.html && ok || bad "versus report: intervals not stated"
    grep -Eq '<td>[0-9.]+ (s|min|h|d) \[[0-9.]+ (s|min|h|d), [0-9.]+ (s|min|h|d)\]</td>' vsrep.html \
        && ok || bad "versus report: waits not humanized with intervals"
    grep -q '95%%' vsrep.html && bad "versus report: '95%%' in a caption" || ok
    grep -q 'nan%' vsrep.html && bad "versus report: nan%" || ok
fi
# a service-only versus (no training job completes): no nan% anywhere
expect_exit 0 "$FLEETSIM" versus "$SRC/scenarios/serving-mixed.yaml" --set horizon=30m \
    --set 'workload.synthetic.arrivals.rate=0.000001/h' -p a=scheduler.queue=priority \
    -p b=scheduler.queue=fifo -r 2 -o svo -q
grep -qi 'nan' out.txt && bad "service-only versus prints nan: $(grep -i nan out.txt)" || ok
expect_out '^wait_p95 +- +-'
if /usr/bin/python3 -c 'import h5py, numpy, matplotlib' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" report svo/index.h5 -o svo.html
    grep -q 'nan%' svo.html && bad "service-only versus report: nan%" || ok
fi
# sweep: the per-tenant tables after the runs, point 1 against point 0
{ cat t.yaml; printf 'sweep:\n  replications: 2\n  params:\n    - {key: scheduler.queue, values: [fifo, sjf]}\n'; } > sw.yaml
expect_exit 0 "$FLEETSIM" sweep sw.yaml -o sw -j 2
expect_out '^per tenant \(/tenants\): mean \+- 95% t half-width over 2 replications'
expect_out '^tenant +metric +point 0 +point 1'
expect_out '^tenant +metric +point 1 - point 0'
finish
