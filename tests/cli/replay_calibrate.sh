#!/usr/bin/env bash
# fleetsim calibrate (docs/validation.md "Replays against recorded waits"):
# the grid of replays finds the capacity share a log ran at, and says how
# close the fit comes on the window it did not see.
source "$(dirname "$0")/lib/common.bash"

# Eight one-GPU jobs of 100 s, submitted 10 s apart, recorded one after the
# other (the site ran them on one node): on two nodes a replay halves the
# waits; at a capacity share that leaves one node (0.7 rounds 1.4 nodes to 1:
# the first of the equal points is the fit) it matches the log exactly.
{
    echo '; MaxProcs: 2'
    for k in $(seq 0 7); do
        echo "$((k + 1)) $((k * 10)) $((k * 90)) 100 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1"
    done
} > serial.swf
cat > cal.yaml <<YAML
name: cal
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 1}]
workload:
  trace: {path: serial.swf, format: swf}
scheduler: {queue: fifo}
YAML
expect_exit 0 "$FLEETSIM" calibrate cal.yaml
expect_out '^fit: threshold 0.00, capacity share 0.70$'
expect_out '^test +4 .* 0\.000 +1\.000$'
expect_out 'KS <= 0.15 met, Spearman >= 0.5 met, mean within 20% met, p90 within 20% met'
expect_exit 0 "$FLEETSIM" calibrate cal.yaml --json --split 0.0003
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "calibrate --json: $(head -c 400 out.txt)"
import json
d = json.load(open("out.txt"))
b = d["best"]
assert b["share"] == 0.7 and b["threshold"] == 0, b
assert b["train"]["jobs"] == 3 and b["test"]["jobs"] == 5, b   # split at 25.92 s
assert len(d["grid"]) == 28 and all(d["targets_met"].values()), d
PY
fi
# the per-user limit in the grid (scheduler.limits.max_jobs_per_user = 2:
# none, 1, 2): the log's one user ran one job at a time, so one job per
# user on both nodes matches it exactly, and that point comes first
expect_exit 0 "$FLEETSIM" calibrate cal.yaml --set scheduler.limits.max_jobs_per_user=2
expect_out '^fit: threshold 0.00, capacity share 1.00, jobs per user 1 \(0: no limit\)$'
expect_out '^test +4 .* 0\.000 +1\.000$'
# a grid point whose replay cannot finish (here drain_limit 500 s: one node
# needs 730 s after the last arrival, two need 330 s) is shown, never chosen
expect_exit 0 "$FLEETSIM" calibrate cal.yaml --set drain_limit=500s
expect_out '^ +0\.00 +0\.70 +- +did not finish'
expect_out '^19 of 28 grid points did not finish their replay: never chosen$'
expect_out '^fit: threshold 0.00, capacity share 1.00$'
expect_exit 0 "$FLEETSIM" calibrate cal.yaml --set drain_limit=500s --json
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "calibrate --json, stuck points: $(head -c 400 out.txt)"
import json
d = json.load(open("out.txt"))
g = {(p["threshold"], p["share"]): p for p in d["grid"]}
assert g[(0, 0.7)]["finished"] is False and g[(0, 0.7)]["objective"] is None, g[(0, 0.7)]
assert g[(0, 1.0)]["finished"] is True and d["best"]["share"] == 1.0, d["best"]
PY
fi
# a scenario with its own cluster.outages (node 1 down all along: the log's
# one node) gives the same grid: every point replaces it with the rule's
# file, none at threshold 0 (before, the threshold-0 points kept it, and at
# share 0.7 it named a node that no longer exists)
printf 'start,end,nodes,cause\n0,100000,1,maintenance\n' > down.csv
expect_exit 0 "$FLEETSIM" calibrate cal.yaml --json
cp out.txt plain.json
# -j 3: the replays on three threads, the same document
expect_exit 0 "$FLEETSIM" calibrate cal.yaml --json -j 3
cmp -s out.txt plain.json && ok || bad "calibrate -j 3 differs from -j 1: $(diff out.txt plain.json | head -5)"
expect_exit 0 "$FLEETSIM" calibrate cal.yaml --set drain_limit=500s -j 2
expect_out '^19 of 28 grid points did not finish their replay: never chosen$'
expect_exit 1 "$FLEETSIM" calibrate cal.yaml --set drain_limit=1s -j 2
expect_err 'none of the 28 grid points finished its replay'
expect_exit 2 "$FLEETSIM" calibrate cal.yaml -j 0
expect_err '\-j needs a number of threads from 1 to 256'
mkdir -p tmpd
expect_exit 0 env TMPDIR="$PWD/tmpd" "$FLEETSIM" calibrate cal.yaml -j 2
[ -z "$(ls tmpd)" ] && ok || bad "temporary outage files left: $(ls tmpd)"
expect_exit 0 "$FLEETSIM" calibrate cal.yaml --set cluster.outages=down.csv --json
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "calibrate with the scenario's outages: $(head -c 400 out.txt)"
import json
a, b = json.load(open("plain.json")), json.load(open("out.txt"))
assert a["grid"] == b["grid"] and a["best"] == b["best"], (a["best"], b["best"])
assert b["best"]["share"] == 0.7 and b["best"]["threshold"] == 0, b["best"]
PY
fi
# the share of the log in which the recorded schedule had more GPUs busy
# than a point's capacity: jobs 1 and 2 ran at once over [0, 100), job 3
# alone over [100, 200); a share that leaves one node (0.7) is exceeded for
# half the log, the whole machine never
printf '; MaxProcs: 2\n1 0 0 100 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n2 0 0 100 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n3 0 100 100 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n' > over.swf
sed 's/serial.swf/over.swf/' cal.yaml > over.yaml
expect_exit 0 "$FLEETSIM" calibrate over.yaml
expect_out '^ +0\.00 +0\.70( +[^ ]+){3} +50\.0%'
expect_out '^ +0\.00 +1\.00( +[^ ]+){3} +0\.0%'
expect_exit 0 "$FLEETSIM" calibrate over.yaml --json
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "calibrate --json, recorded over capacity: $(head -c 400 out.txt)"
import json
g = {(p["threshold"], p["share"]): p for p in json.load(open("out.txt"))["grid"]}
assert g[(0, 0.7)]["recorded_over_capacity"] == 0.5, g[(0, 0.7)]
assert g[(0.2, 1.0)]["recorded_over_capacity"] == 0, g[(0.2, 1.0)]
PY
fi
# the rule on capacity (--max-over, default 0.05): the serial log, then two
# jobs that ran at once for 300 s (2,000-2,300 s).  On the training window
# (the serial jobs) one node matches the log exactly, but the recorded
# schedule had two nodes busy for 300 / 2,300 = 13% of its span: a share
# that leaves one node (0.7-0.4) is shown, excluded, never the fit; the fit
# keeps both nodes.  With the rule off, or at 0.2, one node is the fit again.
{
    cat serial.swf
    echo '9 2000 0 300 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1'
    echo '10 2000 0 300 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1'
} > pair.swf
sed 's/serial.swf/pair.swf/' cal.yaml > pair.yaml
expect_exit 0 "$FLEETSIM" calibrate pair.yaml
expect_out '^rule: a point with over > 5\.0% is not chosen'
expect_out '^ +0\.00 +0\.70( +[^ ]+){3} +13\.0%  excluded \(over\), the least objective$'
expect_out '^ +0\.00 +0\.40( +[^ ]+){3} +13\.0%  excluded \(over\)$'
expect_out '^16 of 28 grid points have over > 5\.0%: not chosen$'
expect_out '^fit: threshold [0-9.]+, capacity share (1\.00|0\.90|0\.80)$'
expect_out '^without the rule the fit would be threshold 0\.00, capacity share 0\.70 \(objective 0\.000, over 13\.0%\)'
expect_exit 0 "$FLEETSIM" calibrate pair.yaml --json
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "calibrate --json, the rule: $(head -c 400 out.txt)"
import json
d = json.load(open("out.txt"))
assert d["max_over"] == 0.05, d["max_over"]
assert d["best"]["share"] >= 0.8, d["best"]
w = d["best_without_rule"]
assert (w["threshold"], w["share"], w["objective"]) == (0, 0.7, 0), w
for p in d["grid"]:
    assert p["excluded"] == (p["share"] <= 0.7), p
    assert abs(p["recorded_over_capacity"] - (300 / 2300 if p["share"] <= 0.7 else 0)) < 1e-12, p
PY
fi
expect_exit 0 "$FLEETSIM" calibrate pair.yaml --max-over off
expect_out '^rule: off'
expect_out '^fit: threshold 0\.00, capacity share 0\.70$'
grep -Eq 'excluded|without the rule' out.txt && bad "--max-over off still excludes: $(head -c 400 out.txt)" || ok
expect_exit 0 "$FLEETSIM" calibrate pair.yaml --max-over 0.2 --json
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "calibrate --max-over 0.2: $(head -c 400 out.txt)"
import json
d = json.load(open("out.txt"))
assert d["max_over"] == 0.2 and d["best"]["share"] == 0.7, d["best"]
assert d["best_without_rule"]["share"] == 0.7 and not any(p["excluded"] for p in d["grid"])
PY
fi
# over.swf (two jobs at once for half the log) on a cluster of one node:
# even its whole capacity is exceeded half the time, so no point may be
# chosen: a cluster smaller than the one that ran the log is said, exit 2
sed 's/nodes: 2,/nodes: 1,/' over.yaml > small.yaml
expect_exit 2 "$FLEETSIM" calibrate small.yaml
expect_err 'more GPUs busy than every grid point.s capacity more than 5\.0% of the time'
expect_exit 0 "$FLEETSIM" calibrate small.yaml --max-over off
expect_exit 2 "$FLEETSIM" calibrate pair.yaml --max-over 1.5
expect_err 'max-over needs a fraction from 0 to 1'
# no point finishes: exit 1, said
expect_exit 1 "$FLEETSIM" calibrate cal.yaml --set drain_limit=1s
expect_err 'none of the 28 grid points finished its replay'
# a log that names no user: said
sed 's/^\([0-9]* [0-9]* [0-9]* 100 1 -1 -1 1 -1 -1 1\) 1 /\1 -1 /' serial.swf > nouser.swf
sed 's/serial.swf/nouser.swf/' cal.yaml > nouser.yaml
expect_exit 0 "$FLEETSIM" calibrate nouser.yaml --set scheduler.limits.max_jobs_per_user=2
expect_err 'no job of the trace names a user'
# bad usage and input
expect_exit 2 "$FLEETSIM" calibrate
expect_err 'give a scenario'
expect_exit 2 "$FLEETSIM" calibrate cal.yaml --split x
expect_err 'split needs a number of days'
cat > synth.yaml <<YAML
name: synth
horizon: 1h
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 1}]
workload:
  synthetic:
    arrivals: {process: poisson, rate: 12/h}
    gpus: {1: 1}
    duration: {dist: lognormal, median: 45m, sigma: 1.5}
YAML
expect_exit 2 "$FLEETSIM" calibrate synth.yaml
expect_err 'calibrate needs a trace replay'
finish
