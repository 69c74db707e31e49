#!/usr/bin/env bash
# fleetsim versus: three policy variants of one workload under common random
# numbers.  A variant identical to the baseline differs by exactly 0 in every
# replication (same streams); SJF cuts FIFO's mean wait on a loaded cluster,
# significantly; the means printed are the index's /stats means; the run
# files are those `fleetsim sweep` writes for the same points; DIR works
# with compare and report; bad input exits 2 naming the -p.
source "$(dirname "$0")/lib/common.bash"

cat > loaded.yaml <<'EOF2'
name: loaded
horizon: 1d
until: horizon
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 8, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 14/h}, gpus: {1: 0.5, 8: 0.5},
              duration: {dist: exponential, mean: 1h}}
EOF2
P=(-p fifo=scheduler.queue=fifo -p sjf=scheduler.queue=sjf -p same=scheduler.mode=best_effort)
expect_exit 0 "$FLEETSIM" versus loaded.yaml "${P[@]}" -r 6 -j 2 -o vs \
    --metrics wait_mean,utilization,jobs_submitted
cp out.txt versus.txt
expect_out 'versus loaded: 3 policies x 6 replications'
expect_out 'point 1  sjf +scheduler.queue=sjf scheduler.mode=best_effort'
expect_out 'point 2  same +scheduler.queue=fifo scheduler.mode=best_effort'
# the identical variant: exactly 0 in every replication, so no interval and no star
grep -Eq '^wait_mean .* \+0\.0 s \(every rep\.\) *$' out.txt && ok || bad "same - fifo is not exactly 0"
grep -Eq '^jobs_submitted .*\+0 \(every rep\.\) +\+0 \(every rep\.\) *$' out.txt && ok \
    || bad "jobs_submitted differs between variants (not common random numbers)"
# times in human units, never 1.8301e+05; shares as percentages
grep -Eq '^wait_mean +[0-9.]+ (s|min|h|d) \+- [0-9.]+ (s|min|h|d) ' out.txt && ok || bad "wait_mean not in human units"
grep -Eq '^utilization +[0-9.]+% \+- [0-9.]+ pts ' out.txt && ok || bad "utilization not a percentage"
grep -Eq 'e[+-][0-9]' out.txt && bad "a number in e-notation: $(grep -E 'e[+-][0-9]' out.txt)" || ok
# SJF against FIFO at ~90% load: shorter mean wait, significant
line=$(grep -E '^wait_mean ' out.txt | tail -n 1)
[[ $line =~ ^wait_mean\ +-[0-9.]+\ (s|min|h)\ \[-[0-9.]+\ (s|min|h),\ -[0-9.]+\ (s|min|h)\]\ \* ]] && ok \
    || bad "sjf - fifo wait_mean is not negative and significant: $line"
# --json: one document; its numbers are the run files' /summary and the index's /stats
expect_exit 0 "$FLEETSIM" versus loaded.yaml "${P[@]}" -r 6 -j 2 -o vs --resume --json \
    --metrics wait_mean,utilization,jobs_submitted,cost_total
cp out.txt versus.json
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    /usr/bin/python3 - versus.json vs <<'EOF2' && ok || bad "$(cat err.txt) versus --json does not match the files"
import json, sys, h5py, math
doc = json.load(open(sys.argv[1]))
assert doc["command"] == "versus" and doc["replications"] == 6 and not doc["identical_replications"]
assert [v["name"] for v in doc["variants"]] == ["fifo", "sjf", "same"]
for p, v in enumerate(doc["variants"]):
    for m, x in v["metrics"].items():
        for r, got in enumerate(x["values"]):
            want = float(h5py.File("%s/runs/p%04d-r%04d.h5" % (sys.argv[2], p, r), "r")["summary"][m][0])
            assert (got is None and math.isnan(want)) or got == want, (p, r, m, got, want)
same = doc["variants"][2]["minus_baseline"]
assert same["wait_mean"]["diff"] == 0 and same["wait_mean"]["lo"] is None
assert same["wait_mean"]["significant"] is None
sjf = doc["variants"][1]["minus_baseline"]["wait_mean"]
assert sjf["diff"] < 0 and sjf["hi"] < 0 and sjf["significant"] is True
assert doc["variants"][0]["metrics"]["jobs_submitted"]["constant"] is False
assert doc["variants"][1]["minus_baseline"]["jobs_submitted"]["diff"] == 0
EOF2
fi
if command -v h5dump >/dev/null; then
    h5dump -d /stats vs/index.h5 > stats.txt
    /usr/bin/python3 - stats.txt versus.json <<'EOF2' && ok || bad "fifo's wait_mean mean is not /stats'"
import re, sys, json
text = open(sys.argv[1]).read()
rows = re.findall(r'\{\s*(\d+),\s*"wait_mean[^"]*",\s*(\d+),\s*([-0-9.e+]+)', text)
p0 = [float(m) for p, n, m in rows if p == "0"]
mean0 = json.load(open(sys.argv[2]))["variants"][0]["metrics"]["wait_mean"]["mean"]
assert p0 and abs(p0[0] - mean0) <= 1e-5 * abs(p0[0]), (p0, mean0)  # h5dump prints 6 digits
EOF2
fi
# the same run as a sweep of that point (same scenario file) gives the same bytes
expect_exit 0 "$FLEETSIM" sweep loaded.yaml -o sw -j 2 -q --set 'sweep={replications: 6}' \
    --set scheduler.queue=sjf
# (but for the attributes that say which run of which sweep a file is)
run_dump() { h5dump "$1" | tail -n +2 | awk '/ATTRIBUTE "sweep_(digest|point)"/ { skip = 1 }
    !skip { print } skip && /^   }/ { skip = 0 }'; }
run_dump sw/runs/p0000-r0003.h5 > run_sw.txt
run_dump vs/runs/p0001-r0003.h5 > run_vs.txt
[ -s run_sw.txt ] && cmp -s run_sw.txt run_vs.txt && ok \
    || bad "versus point 1 replication 3 differs from the sweep's run"
# the directory is a sweep directory
expect_exit 0 "$FLEETSIM" compare vs/index.h5 --points 0 1 --no-waits
expect_out 'point 0 \(scheduler.queue=fifo'
if /usr/bin/python3 -c 'import h5py, matplotlib' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" report vs/index.h5 -o vs.html
fi
# resume: nothing to redo
expect_exit 0 "$FLEETSIM" versus loaded.yaml "${P[@]}" -r 6 -o vs --resume -q
expect_out 'sjf - fifo'

# errors
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a=scheduler.queue=fifo -o e1
expect_err 'at least two policies'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a=scheduler.queue=fifo -p b=scheduler.queue=bogus -o e2
expect_err '^-p b: sweep point 1 .*bogus'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p b=seed=3 -o e3
expect_err '-p b: seed cannot differ'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p a=scheduler.queue=sjf -o e4
expect_err '-p a is given twice'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p b=scheduler.queue -o e5
expect_err "-p b: 'scheduler.queue' is not KEY=VALUE"
# a per-variant value inside a list: a keeps the scenario's 8 nodes
expect_exit 0 "$FLEETSIM" versus loaded.yaml -p a -p big=cluster.pools.0.nodes=16 -r 2 -j 2 -o e6 \
    --metrics utilization
expect_out 'point 0  a +cluster.pools.0.nodes=8$'
expect_out 'point 1  big +cluster.pools.0.nodes=16$'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p b -r 0 -o e7
expect_err '-r needs a number of replications from 1'

# a deterministic replay: identical replications are said to be so, no interval, no star
cat > replay.yaml <<EOF2
name: replay
horizon: 2h
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 1, gpus_per_node: 8}
workload:
  trace: {path: $SRC/tests/data/fit/philly_native.csv, format: native}
EOF2
expect_exit 0 "$FLEETSIM" versus replay.yaml -p fifo -p sjf=scheduler.queue=sjf -r 3 -j 2 -o rp \
    --metrics wait_mean,utilization,cost_total
expect_err 'nothing in this scenario draws random numbers: the 3 replications will be identical'
expect_out 'the 3 replications of every policy are identical'
grep -Eq '\+-|\*|\[' <(sed -n '/^metric/,$p' out.txt) && bad "an interval or star for identical replications" || ok
expect_out '^cost_total +\$[0-9,.]+ +\$[0-9,.]+ *$'
# without -r: one replication, said on stderr
expect_exit 0 "$FLEETSIM" versus replay.yaml -p fifo -p sjf=scheduler.queue=sjf -o rp1
expect_err 'so one is run \(-r 1\)'
expect_out 'versus replay: 2 policies x 1 replications'
# a random scenario whose shown metric happens to be constant is not called identical
expect_exit 0 "$FLEETSIM" versus loaded.yaml -p a -p b=scheduler.queue=sjf -r 2 -j 2 -o nz \
    --metrics jobs_rejected
grep -q 'identical' out.txt && bad "a synthetic workload's replications called identical" || ok
expect_out '^random in each replication: arrivals, sizes and durations \(synthetic workload\)'
# the scenario of docs/validation.md's Philly-like table is shipped and valid
expect_exit 0 "$FLEETSIM" validate "$SRC/scenarios/philly-like.yaml"
expect_exit 0 "$FLEETSIM" versus --help
expect_out 'usage: fleetsim versus'
finish
