#!/usr/bin/env bash
# fleetsim compare: two run files (difference only), two points of a sweep
# index and two sweep indexes (paired intervals under common random numbers),
# CSV checked against the files with h5py and an independent paired t-interval,
# and the error paths.
source "$(dirname "$0")/lib/common.bash"
PY=/usr/bin/python3
LIB="$SRC/tests/cli/lib"
have_h5py=0
if [ -x "$PY" ] && "$PY" -c 'import h5py, numpy' 2>/dev/null; then have_h5py=1; fi

BASE=(--set horizon=2d --set warmup=6h --set workload.synthetic.arrivals.rate=12/h)

# ---- two run files: difference only ----
expect_exit 0 "$FLEETSIM" run "${BASE[@]}" --set cluster.pools.0.nodes=32 -o a.h5 -q
expect_exit 0 "$FLEETSIM" run "${BASE[@]}" --set cluster.pools.0.nodes=26 -o b.h5 -q
expect_exit 0 "$FLEETSIM" compare a.h5 b.h5
expect_out '^A +a\.h5'
expect_out 'No interval is possible from one run each'
expect_out '^wait_mean '
expect_out '^utilization '
grep -q 'significant' out.txt && bad "single runs show a significance column" || ok
expect_exit 0 "$FLEETSIM" compare a.h5 b.h5 --csv
cp out.txt single.csv
head -1 single.csv | grep -qx 'a,b,point_a,point_b,metric,value_a,value_b,diff,rel_diff,n,level,ci_lo,ci_hi,significant' \
    && ok || bad "CSV header: $(head -1 single.csv)"
if [ "$have_h5py" = 1 ]; then
    "$PY" - a.h5 b.h5 single.csv <<'EOF' && ok || bad "single-run CSV does not match the files"
import csv, math, sys, h5py
a = h5py.File(sys.argv[1], "r")["summary"][0]
b = h5py.File(sys.argv[2], "r")["summary"][0]
rows = list(csv.DictReader(open(sys.argv[3])))
assert [r["metric"] for r in rows] == list(a.dtype.names), [r["metric"] for r in rows]
for r in rows:
    va, vb = float(a[r["metric"]]), float(b[r["metric"]])
    for got, want in ((r["value_a"], va), (r["value_b"], vb), (r["diff"], vb - va)):
        if math.isnan(want):
            assert got == "", (r, want)
        else:
            assert abs(float(got) - want) <= 1e-12 * max(1, abs(want)), (r, want)
    assert r["ci_lo"] == r["ci_hi"] == r["significant"] == "" and r["n"] == "0", r
print("single ok")
EOF
fi

# ---- a sweep: nodes 32 vs 26, 5 replications, common random numbers ----
if [ "$have_h5py" = 1 ]; then
    mkdir -p sw/runs
    vals="32 26"
    p=0
    for n in $vals; do
        for r in 0 1 2 3 4; do
            "$FLEETSIM" run "${BASE[@]}" --set cluster.pools.0.nodes=$n --set replication=$r \
                -o sw/runs/p$p-r$r.h5 -q || bad "run p$p r$r failed"
        done
        p=$((p + 1))
    done
    "$PY" "$LIB/fake_sweep.py" sw cluster.pools.0.nodes "$vals" 5 && ok || bad "fake_sweep.py failed"

    expect_exit 0 "$FLEETSIM" compare sw/index.h5 --points 0 1
    expect_out 'point 0 \(cluster\.pools\.0\.nodes=32\)'
    expect_out 'point 1 \(cluster\.pools\.0\.nodes=26\)'
    expect_out 'Paired over 5 replications \(common random numbers\)'
    expect_out 'significant at 95%'
    # same arrivals in both points (CRN): identical job counts, interval [0, 0]
    expect_out '^jobs_submitted +[0-9.]+ +[0-9.]+ +\+0 +\+0\.0% +no \(identical\)$'
    # human units: times, money and shares, no e-notation
    expect_out '^wait_mean +[0-9.]+ (s|min|h|d) +[0-9.]+ (s|min|h|d) '
    expect_out '^utilization +[0-9.]+% +[0-9.]+% +[-+][0-9.]+ pts '
    grep -Eq '^[a-z_0-9]+ .*[0-9]e[+-][0-9]' out.txt && bad "e-notation: $(grep -E '[0-9]e[+-][0-9]' out.txt | head -2)" || ok
    expect_out 'Wait percentiles from /jobs'
    expect_exit 0 "$FLEETSIM" compare sw/index.h5 --points 0 1 --csv
    cp out.txt paired.csv
    "$PY" - sw paired.csv <<'EOF' && ok || bad "paired CSV does not match an independent paired t-interval"
import csv, math, sys, h5py, numpy as np
d, path = sys.argv[1], sys.argv[2]
T975_DF4 = 2.7764451051977987          # t_{0.975, 4}
rows = {r["metric"]: r for r in csv.DictReader(open(path))}
a = [h5py.File("%s/runs/p0-r%d.h5" % (d, r), "r")["summary"][0] for r in range(5)]
b = [h5py.File("%s/runs/p1-r%d.h5" % (d, r), "r")["summary"][0] for r in range(5)]
checked = 0
for m in ("wait_mean", "wait_p99", "utilization", "queue_len_mean", "jct_mean", "jobs_submitted"):
    x = np.array([float(b[i][m]) - float(a[i][m]) for i in range(5)])
    mean, sd = x.mean(), x.std(ddof=1)
    half = T975_DF4 * sd / math.sqrt(5)
    r = rows[m]
    assert r["n"] == "5" and r["point_a"] == "0" and r["point_b"] == "1", r
    for got, want in ((r["diff"], mean), (r["ci_lo"], mean - half), (r["ci_hi"], mean + half)):
        assert abs(float(got) - want) <= 1e-9 * max(1, abs(want)), (m, got, want)
    sig = (mean - half > 0) or (mean + half < 0)
    # a difference that is the same in every pair has no interval to test
    want = "" if sd == 0 else ("1" if sig else "0")
    assert r["significant"] == want, (m, r["significant"], sig)
    checked += 1
# CRN: both points saw the same arrivals
assert rows["jobs_submitted"]["diff"] == "0" and rows["jobs_submitted"]["significant"] == ""
# fewer GPUs, same work: busier, significantly (waits are heavy-tailed: 5 short
# replications leave their difference inside the noise, so it is not asserted)
assert rows["utilization"]["significant"] == "1" and float(rows["utilization"]["diff"]) > 0
# pooled wait percentiles: recomputed from /jobs (warm-up 6 h), numpy type 7
for q in (50, 90, 95, 99):
    r = rows["wait_pooled_p%d" % q]
    for side, p in (("value_a", 0), ("value_b", 1)):
        w = []
        for rep in range(5):
            j = h5py.File("%s/runs/p%d-r%d.h5" % (d, p, rep), "r")["jobs"]
            wait, sub = j.fields("wait")[:], j.fields("submit")[:]
            w.append(wait[~np.isnan(wait) & (sub >= 6 * 3600)])
        want = np.quantile(np.concatenate(w), q / 100)
        assert abs(float(r[side]) - want) <= 1e-9 * max(1, want), (q, side, r[side], want)
print("paired ok", checked)
EOF
    # the same with the sides swapped: differences change sign
    expect_exit 0 "$FLEETSIM" compare sw/index.h5 --points 1 0 --csv
    "$PY" - paired.csv out.txt <<'EOF' && ok || bad "swapping the points does not negate the differences"
import csv, sys
a = {r["metric"]: r for r in csv.DictReader(open(sys.argv[1]))}
b = {r["metric"]: r for r in csv.DictReader(open(sys.argv[2]))}
for m in ("wait_mean", "utilization"):
    assert abs(float(a[m]["diff"]) + float(b[m]["diff"])) < 1e-9 * abs(float(a[m]["diff"]))
    assert abs(float(a[m]["ci_lo"]) + float(b[m]["ci_hi"])) < 1e-6 * abs(float(a[m]["ci_lo"]) or 1)
    assert a[m]["significant"] == b[m]["significant"]
EOF

    # two sweep indexes, point by point: a copy against itself differs by 0
    cp -r sw sw2
    expect_exit 0 "$FLEETSIM" compare sw/index.h5 sw2/index.h5 --csv --no-waits
    [ "$(grep -c ',wait_mean,' out.txt)" = 2 ] && ok || bad "two indexes: not one row per point"
    awk -F, 'NR > 1 && $8 != "" && $8 != "0" { bad = 1 } END { exit bad }' out.txt \
        && ok || bad "an index against its copy has a nonzero difference"
    grep -q ',1$' out.txt && bad "an index against its copy is significant" || ok
    expect_exit 0 "$FLEETSIM" compare sw/index.h5 sw2/index.h5 --points 0 1 --no-waits
    expect_out 'Paired over 5 replications'

    # the real `fleetsim sweep`, when this build has it: the same comparison
    if "$FLEETSIM" help 2>/dev/null | grep -q '^ *sweep'; then
        cat > sweep.yaml <<'EOF'
name: compare-sweep
horizon: 2d
warmup: 6h
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 32, gpus_per_node: 8}
workload:
  synthetic:
    arrivals: {process: poisson, rate: 12/h}
    gpus: {1: 0.5, 2: 0.1, 4: 0.1, 8: 0.2, 16: 0.06, 64: 0.04}
    duration: {dist: lognormal, median: 45m, sigma: 1.5}
sweep:
  params:
    - {key: cluster.pools.0.nodes, values: [32, 26]}
  replications: 4
EOF
        if timeout 120 "$FLEETSIM" sweep sweep.yaml -o real -j 2 -q >sweep.out 2>&1; then
            expect_exit 0 "$FLEETSIM" compare real/index.h5 --points 0 1 --csv
            "$PY" - real/index.h5 out.txt <<'EOF' && ok || bad "compare on a real sweep disagrees with its run files"
import csv, math, os, sys, h5py, numpy as np
index, path = sys.argv[1], sys.argv[2]
rows = {r["metric"]: r for r in csv.DictReader(open(path))}
with h5py.File(index, "r") as f:
    runs = f["runs"][:]
files = {(int(r["point"]), int(r["replication"])): os.path.join(os.path.dirname(index), r["file"].decode())
         for r in runs}
T975_DF3 = 3.182446305284263
for m in ("utilization", "wait_mean", "jobs_submitted"):
    d = np.array([float(h5py.File(files[(1, k)], "r")["summary"][0][m]) -
                  float(h5py.File(files[(0, k)], "r")["summary"][0][m]) for k in range(4)])
    half = T975_DF3 * d.std(ddof=1) / 2
    r = rows[m]
    assert r["n"] == "4", r
    assert abs(float(r["diff"]) - d.mean()) <= 1e-9 * max(1, abs(d.mean())), (m, r, d)
    assert abs(float(r["ci_hi"]) - (d.mean() + half)) <= 1e-9 * max(1, abs(d.mean() + half)), (m, r)
assert rows["jobs_submitted"]["diff"] == "0"          # common random numbers across points
EOF
        else
            echo "NOTE: fleetsim sweep did not run: $(head -c 400 sweep.out)"
        fi
    fi

    # errors with sweeps
    expect_exit 2 "$FLEETSIM" compare sw/index.h5 a.h5
    expect_err 'cannot compare a run file with a sweep point'
    expect_exit 2 "$FLEETSIM" compare sw/index.h5 --points 0 7
    expect_err 'no point 7 \(the sweep has points 0\.\.1\)'
    expect_exit 2 "$FLEETSIM" compare sw/index.h5 sw/index.h5 --points 0
    expect_exit 2 "$FLEETSIM" compare a.h5 --points 0 1
    expect_err 'a run file has no points'
fi

# ---- --json: one document whose numbers are the files' /summary ----
expect_exit 0 "$FLEETSIM" compare a.h5 b.h5 --json
cp out.txt single.json
if [ "$have_h5py" = 1 ]; then
    "$PY" - a.h5 b.h5 single.json <<'EOF' && ok || bad "compare --json does not match the files"
import json, math, sys, h5py
a = h5py.File(sys.argv[1], "r")["summary"][0]
b = h5py.File(sys.argv[2], "r")["summary"][0]
doc = json.load(open(sys.argv[3]))
assert doc["command"] == "compare" and len(doc["pairs"]) == 1
p = doc["pairs"][0]
assert not p["paired"] and p["a"]["path"] == "a.h5"
assert list(p["metrics"]) == list(a.dtype.names)
for m, r in p["metrics"].items():
    for got, want in ((r["a"], float(a[m])), (r["b"], float(b[m]))):
        assert (got is None and math.isnan(want)) or got == want, (m, got, want)
    assert r["lo"] is None and r["significant"] is None
EOF
fi

# ---- a deterministic replay swept with replications: identical, said so ----
cat > replay.yaml <<EOF
name: replay
horizon: 2h
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 1, gpus_per_node: 8}
workload:
  trace: {path: $SRC/tests/data/fit/philly_native.csv, format: native}
sweep:
  params:
    - {key: scheduler.queue, values: [fifo, sjf]}
  replications: 3
EOF
expect_exit 0 "$FLEETSIM" sweep replay.yaml -o rp -j 2 -q
expect_exit 0 "$FLEETSIM" compare rp/index.h5 --points 0 1 --no-waits
expect_out 'The 3 replications of each side are identical'
expect_out '^cost_total +\$[0-9,.]+ +\$[0-9,.]+ +[-+]\$[0-9,.]+ '
grep -Eq 'significant|yes|e[-+][0-9]' out.txt && bad "identical replications shown with significance or noise" || ok
expect_exit 0 "$FLEETSIM" compare rp/index.h5 --points 0 1 --no-waits --json
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))["pairs"][0]; assert d["identical_replications"] is True; assert all(m["lo"] is None and m["significant"] is None for m in d["metrics"].values())' out.txt \
    && ok || bad "compare --json on identical replications: $(head -c 300 out.txt)"

# ---- error paths ----
expect_exit 2 "$FLEETSIM" compare
expect_exit 2 "$FLEETSIM" compare a.h5
expect_err 'give two results files'
expect_exit 2 "$FLEETSIM" compare a.h5 missing.h5
expect_err 'missing\.h5: cannot open'
echo "not hdf5" > junk.h5
expect_exit 2 "$FLEETSIM" compare a.h5 junk.h5
expect_err 'junk\.h5: not an HDF5 file'
expect_exit 2 "$FLEETSIM" compare a.h5 b.h5 --level 2
expect_exit 2 "$FLEETSIM" compare a.h5 b.h5 --bogus
expect_exit 0 "$FLEETSIM" compare --help
expect_out 'usage: fleetsim compare'
finish
