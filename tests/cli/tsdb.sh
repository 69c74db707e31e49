#!/usr/bin/env bash
# Issue 37: fleetsim metrics --tsdb writes Prometheus TSDB blocks directly
# (analysis/fs_tsdb.c): a stock Prometheus (default settings) serves them
# and its answers equal /gpu_intervals at the sample instants; promtool
# tsdb analyze and dump read them and the dump is the OpenMetrics export
# (the same series and samples) plus a staleness marker where each series
# stops; bad input and signals leave nothing behind.  The Prometheus part
# is skipped (SKIP on stderr) where prometheus/promtool are not installed
# (CI: .ci/install-deps installs them).
source "$(dirname "$0")/lib/common.bash"

cat > m.yaml <<'EOF'
name: tsdb
seed: 3
horizon: 6h
until: horizon
cluster:
  pools: [{name: h100, gpu: H100, nodes: 4, gpus_per_node: 8}]
workload:
  synthetic:
    arrivals: {rate: 6/h}
    gpus: {1: 0.4, 4: 0.3, 8: 0.3}
    duration: {dist: exponential, mean: 1h}
    tenants: {vision: 0.6, nlp: 0.4}
startup: {container: 30s}
telemetry: {sm: 0.7, duty: 0.83}
failures:
  components: [{kind: node, tbf: {dist: exponential, mean: 8h}, causes: {dbe: 1}}]
  causes: [{name: dbe, xid: 48}]
output: {gpu_intervals: true, timeline_interval: 1m}
EOF
expect_exit 0 "$FLEETSIM" run m.yaml -o m.h5 -q

# ---- bad input: exit 2, nothing written -------------------------------------------------
expect_exit 0 "$FLEETSIM" run m.yaml -o plain.h5 -q --set output.gpu_intervals=false
expect_exit 2 "$FLEETSIM" metrics plain.h5 --tsdb nodb
expect_err 'plain.h5: no /gpu_intervals rows \(run the scenario with output.gpu_intervals: true\)'
[ -e nodb ] && bad "--tsdb left a directory for a file without /gpu_intervals" || ok
# a step below /timeline's resolution, the scheduler's series asked for by name
expect_exit 0 "$FLEETSIM" run m.yaml -o coarse.h5 -q --set output.timeline_interval=5m
expect_exit 2 "$FLEETSIM" metrics coarse.h5 --tsdb nodb --families fleetsim_gpus_busy --step 60
expect_err 'coarse.h5: --step 60 is below the resolution of /timeline \(sampled every 300 s\)'
[ -e nodb ] && bad "a refused step left a directory" || ok
# ... and by default too (they are among the default families): refused, nothing written
expect_exit 2 "$FLEETSIM" metrics coarse.h5 --tsdb nodb --step 60
expect_err 'coarse.h5: --step 60 is below the resolution of /timeline \(sampled every 300 s\).*use --step 300 or more, --families without them, --lenient to leave them out'
[ -e nodb ] && bad "a refused step (default families) left a directory" || ok
expect_exit 2 "$FLEETSIM" metrics coarse.h5 -o nodb.om --step 60
[ -e nodb.om ] && bad "a refused step left a text file" || ok
# ... --lenient keeps the export but not the names asked for
expect_exit 2 "$FLEETSIM" metrics coarse.h5 --tsdb nodb --families fleetsim_gpus_busy --step 60 --lenient
[ -e nodb ] && bad "--lenient with the scheduler's series named left a directory" || ok
# ... with --lenient they are left out, with a note, and the rest is written
expect_exit 0 "$FLEETSIM" metrics coarse.h5 --tsdb coarsedb --step 60 --lenient
expect_err "note: the scheduler's series \(fleetsim_\*\) are left out: /timeline is sampled every 300 s"
expect_exit 0 "$FLEETSIM" metrics coarse.h5 -o coarse.om --step 60 --lenient
grep -q '^DCGM_FI_DEV_GPU_UTIL{' coarse.om && ! grep -q '^fleetsim_gpus_busy' coarse.om && ok ||
    bad "--lenient: the GPUs' series kept and the scheduler's left out"
# ... and at the timeline's own step they are written without --lenient
expect_exit 0 "$FLEETSIM" metrics coarse.h5 -o coarse300.om --step 300
grep -q '^fleetsim_gpus_busy' coarse300.om && ok || bad "--step 300: the scheduler's series missing"
# a directory that holds other data
mkdir other && echo keep > other/notes.txt
expect_exit 2 "$FLEETSIM" metrics m.h5 --tsdb other
expect_err "other: holds other data than Prometheus blocks \('notes.txt'\)"
[ "$(ls -A other)" = notes.txt ] && ok || bad "--tsdb wrote into a directory holding other data: $(ls -A other)"
expect_exit 2 "$FLEETSIM" metrics m.h5 --tsdb m.h5
expect_exit 2 "$FLEETSIM" metrics m.h5 --tsdb x -o y
expect_err '\-o FILE and --tsdb DIR: give one of them'
expect_exit 2 "$FLEETSIM" metrics m.h5 --tsdb x --block 3
expect_err '\-\-block: expected whole hours, a multiple of 2'
expect_exit 2 "$FLEETSIM" metrics m.h5 --tsdb x --families DCGM_FI_DEV_NOPE
expect_err "\-\-families: 'DCGM_FI_DEV_NOPE' is not a family \(the families: DCGM_FI_DEV_GPU_UTIL, "
expect_exit 2 "$FLEETSIM" metrics m.h5 --tsdb x --level rack
expect_err '\-\-level: expected gpu, node or pool'
# the expected size comes first; --max-size refuses what would pass it
expect_exit 2 "$FLEETSIM" metrics m.h5 --tsdb x --max-size 100k
expect_out '^metrics +x: expected about [0-9]+ series, [0-9]+ samples, [0-9.]+ MB'
expect_err 'x: the export is expected to take .* GB, more than --max-size 0.0001 GB'
expect_exit 2 "$FLEETSIM" metrics m.h5 -o x.om --max-size 100k
expect_no_file x.om
[ -e x ] && bad "--max-size left a directory" || ok

# ---- SIGTERM and SIGINT: exit 1, no block, no staging directory, no temporary ----------
cat > long.yaml <<'EOF'
name: long
seed: 5
horizon: 4d
until: horizon
cluster:
  pools: [{name: a, gpu: H100, nodes: 16, gpus_per_node: 8}]
workload:
  synthetic:
    arrivals: {rate: 8/h}
    gpus: {1: 0.5, 8: 0.5}
    duration: {dist: exponential, mean: 2h}
output: {gpu_intervals: true}
EOF
expect_exit 0 "$FLEETSIM" run long.yaml -o long.h5 -q
for sig in TERM INT; do
    "$FLEETSIM" metrics long.h5 --tsdb sigdb --step 5 --lenient -q > /dev/null 2> sig.txt &
    pid=$!
    sleep 1
    kill -$sig $pid
    wait $pid
    rc=$?
    [ $rc -eq 1 ] && ok || bad "SIG$sig: exit $rc, expected 1 ($(cat sig.txt))"
    grep -q "interrupted by SIG$sig; nothing was kept" sig.txt && ok || bad "SIG$sig: $(cat sig.txt)"
    [ -e sigdb ] && bad "SIG$sig left $(ls -A sigdb)" || ok
    mkdir -p sigprom && touch sigprom/lock     # into an existing Prometheus directory
    "$FLEETSIM" metrics long.h5 --tsdb sigprom --step 5 --lenient -q > /dev/null 2> sig.txt &
    pid=$!
    sleep 1
    kill -$sig $pid
    wait $pid
    [ "$(ls -A sigprom)" = lock ] && ok || bad "SIG$sig left in a Prometheus directory: $(ls -A sigprom)"
    "$FLEETSIM" metrics long.h5 -o sig.om --step 5 --lenient -q > /dev/null 2> sig.txt &
    pid=$!
    sleep 1
    kill -$sig $pid
    wait $pid
    rc=$?
    [ $rc -eq 1 ] && ok || bad "SIG$sig (text): exit $rc ($(cat sig.txt))"
    expect_no_file sig.om
done

# ---- what is written --------------------------------------------------------------------
expect_exit 0 "$FLEETSIM" metrics m.h5 --tsdb db --step 60
expect_out '^metrics +db: 32 GPUs, [0-9]+ series, [0-9]+ samples, 1 blocks'
ls db | grep -Eq '^[0-9A-HJKMNP-TV-Z]{26}$' && ok || bad "no block named by a ULID: $(ls db)"
# 2 h blocks, as promtool's backfill makes them
expect_exit 0 "$FLEETSIM" metrics m.h5 --tsdb db2 --step 60 --block 2
expect_out '^metrics +db2: 32 GPUs, [0-9]+ series, [0-9]+ samples, 4 blocks'
expect_exit 0 "$FLEETSIM" metrics m.h5 -o m.om --step 60
# a second export goes beside the first (a Prometheus data directory takes more blocks)
expect_exit 0 "$FLEETSIM" metrics m.h5 --tsdb twice --step 60 --origin 1767398400 -q
expect_exit 0 "$FLEETSIM" metrics m.h5 --tsdb twice --step 60 -q
[ "$(ls twice | grep -c .)" -eq 3 ] && ok || bad "two exports into one directory: $(ls twice)"
/usr/bin/python3 - db2 > meta.txt 2>&1 <<'EOF' && ok || bad "meta.json: $(cat meta.txt)"
import json, os, sys
blocks = [json.load(open(os.path.join(sys.argv[1], b, "meta.json"))) for b in os.listdir(sys.argv[1]) if len(b) == 26]
blocks.sort(key=lambda m: m["minTime"])
H2 = 2 * 3600 * 1000
for m in blocks:
    assert m["compaction"] == {"level": 1, "sources": [m["ulid"]]} and m["version"] == 1, m
    assert m["minTime"] // H2 == (m["maxTime"] - 1) // H2, m         # inside one 2 h window
    assert m["stats"]["numSamples"] > 0 and m["stats"]["numSeries"] > 0, m
for a, b in zip(blocks, blocks[1:]):
    assert a["maxTime"] <= b["minTime"], (a, b)
assert blocks[0]["minTime"] == 1767225600000, blocks[0]
EOF
# service replicas: namespace = the service, pod = SERVICE-REPLICA (their ids do not fit a
# double: read exactly)
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/serving-fleet-sizing.yaml" -o serve.h5 -q \
    --set output.gpu_intervals=true --set horizon=1h
expect_exit 0 "$FLEETSIM" metrics serve.h5 -o serve.om --families DCGM_FI_DEV_GPU_UTIL -q
grep -o 'namespace="[^"]*",pod="[^"]*"' serve.om | sort -u > pods.txt
grep -qx 'namespace="azure",pod="azure-0"' pods.txt && grep -qx 'namespace="azure",pod="azure-1"' pods.txt &&
    ! grep -q 'job-9223372036854775808\|namespace="default"' pods.txt && ok ||
    bad "service replicas' pods: $(head -3 pods.txt)"
# --level node: recording-rule series per node; --legacy-hostname; --from/--to
expect_exit 0 "$FLEETSIM" metrics m.h5 -o node.om --level node --families DCGM_FI_DEV_GPU_UTIL,DCGM_FI_DEV_POWER_USAGE
[ "$(grep -c '^# TYPE fleetsim:gpu_util:avg_node gauge' node.om)" -eq 1 ] && ok || bad "no fleetsim:gpu_util:avg_node"
[ "$(grep '^fleetsim:power_usage:sum_node{' node.om | sed 's/}.*//' | sort -u | wc -l)" -eq 4 ] && ok || bad "not one power series per node"
expect_exit 0 "$FLEETSIM" metrics m.h5 -o pool.om --level pool --families DCGM_FI_DEV_POWER_USAGE
expect_exit 0 "$FLEETSIM" metrics m.h5 -o legacy.om --legacy-hostname --families DCGM_FI_DEV_GPU_TEMP
grep -q 'Hostname="h100-0"' legacy.om && ! grep -q 'hostname=' legacy.om && ok || bad "--legacy-hostname"
expect_exit 0 "$FLEETSIM" metrics m.h5 -o window.om --from 1h --to 2h --families DCGM_FI_DEV_POWER_USAGE
/usr/bin/python3 - > level.txt 2>&1 <<'EOF' && ok || bad "levels and windows: $(cat level.txt)"
import re
def parse(path):
    out = []
    for line in open(path):
        m = re.match(r'^([\w:]+)\{(.*)\} (\S+) (\d+)$', line)
        if m:
            lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            out.append((m.group(1), lab, float(m.group(3)), int(m.group(4))))
    return out
full = parse("m.om")
# node level: the mean of the node's GPUs' utilization, the sum of their power
for name, agg, fam in (("fleetsim:gpu_util:avg_node", lambda v: sum(v) / len(v), "DCGM_FI_DEV_GPU_UTIL"),
                       ("fleetsim:power_usage:sum_node", sum, "DCGM_FI_DEV_POWER_USAGE")):
    per = {}
    for n, lab, v, t in full:
        if n == fam:
            per.setdefault((lab["hostname"], t), []).append(v)
    got = {(lab["hostname"], t): v for n, lab, v, t in parse("node.om") if n == name}
    assert got.keys() == per.keys() and all(abs(got[k] - agg(per[k])) < 1e-6 for k in got), name
pool = {t: v for n, lab, v, t in parse("pool.om")}
want = {}
for n, lab, v, t in full:
    if n == "DCGM_FI_DEV_POWER_USAGE":
        want[t] = want.get(t, 0) + v
assert pool.keys() == want.keys() and all(abs(pool[t] - want[t]) < 1e-6 for t in want)
win = parse("window.om")
ts = sorted({t for _, _, _, t in win})
assert ts[0] == 1767225600 + 3600 and ts[-1] == 1767225600 + 7200, (ts[0], ts[-1])
sub = {(tuple(sorted(l.items())), t): v for n, l, v, t in full if n == "DCGM_FI_DEV_POWER_USAGE" and 3600 <= t - 1767225600 <= 7200}
assert {(tuple(sorted(l.items())), t): v for n, l, v, t in win} == sub
print("levels and windows agree with the GPU series")
EOF

if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null ||
   ! /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
    echo "SKIP: promtool/prometheus or python3-h5py not installed (Debian packages prometheus, python3-h5py)" >&2
    finish
fi

# ---- promtool: analyze, and the dump is what fleetsim meant to write ----------------------
expect_exit 0 promtool tsdb analyze db
expect_out 'Block ID: '
expect_exit 0 promtool tsdb analyze db2
promtool tsdb dump db > dump.txt 2> dump.err && ok || bad "promtool tsdb dump: $(head -3 dump.err)"
/usr/bin/python3 - > dump-check.txt 2>&1 <<'EOF' && ok || bad "dump vs OpenMetrics: $(cat dump-check.txt)"
import math, re
# the OpenMetrics export: the same series and samples, in seconds
want = {}
for line in open("m.om"):
    m = re.match(r'^([\w:]+)\{(.*)\} (\S+) (\d+)$', line)
    if m:
        lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        lab["__name__"] = m.group(1)
        want.setdefault(tuple(sorted(lab.items())), []).append((int(m.group(4)) * 1000, float(m.group(3))))
got = {}
for line in open("dump.txt"):
    m = re.match(r'^\{(.*)\} (\S+) (\d+)$', line)
    assert m, line
    lab = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', m.group(1))))
    got.setdefault(lab, []).append((int(m.group(3)), float(m.group(2))))
assert got.keys() == want.keys(), (len(got), len(want), list(set(got) ^ set(want))[:2])
stale = 0
for k, w in want.items():
    g = got[k]
    samples = [(t, v) for t, v in g if not math.isnan(v)]
    assert len(samples) == len(w) and all(a[0] == b[0] and abs(a[1] - b[1]) <= 1e-9 * max(1, abs(b[1]))
                                          for a, b in zip(samples, w)), k
    # a staleness marker one step after each sample not followed by one, and nowhere else
    have = {t for t, _ in w}
    marks = sorted(t for t, v in g if math.isnan(v))
    expect = sorted(t + 60000 for t in have if t + 60000 not in have)
    assert marks == expect, (k, marks[:3], expect[:3])
    stale += len(marks)
print(len(got), "series,", sum(map(len, want.values())), "samples,", stale, "staleness markers")
EOF
cat dump-check.txt

# ---- a stock Prometheus on the blocks (default settings) ---------------------------------
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'global: {scrape_interval: 1h}\nscrape_configs: []\n' > prom.yml
start_prom() {   # start_prom DIR [FLAGS...]: prometheus on DIR, ready
    local dir=$1
    shift
    prometheus --config.file=prom.yml --storage.tsdb.path="$dir" --web.listen-address=127.0.0.1:$PORT \
        "$@" > "$dir.log" 2>&1 &
    PROM=$!
    for i in $(seq 1 150); do
        curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}
stop_prom() { kill $PROM 2>/dev/null; wait $PROM 2>/dev/null; PROM=; }
PROM=
trap 'stop_prom; rm -rf "$WORK"' EXIT
start_prom db && ok || bad "prometheus did not start: $(tail -3 db.log)"
/usr/bin/python3 - "$PORT" m.h5 "$SRC/analysis/grafana/fleetsim-dcgm.json" > py.txt 2>&1 <<'EOF' && ok || bad "PromQL vs HDF5: $(cat py.txt)"
import json, sys, urllib.parse, urllib.request
import h5py, numpy as np
port, path, dash = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
ORIGIN, STEP = 1767225600, 60
f = h5py.File(path, "r")
iv = f["gpu_intervals"][:]
tl = f["timeline"][:]
names = {int(r["tenant"]): r["name"].decode() for r in f["tenants"][:]}
end = float(f["summary"][0]["end_time"])

def q(expr, t):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr, "time": ORIGIN + t}))
    d = json.load(urllib.request.urlopen(u))
    assert d["status"] == "success", d
    return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in d["data"]["result"]}

def one(expr, t):
    r = q(expr, t)
    return list(r.values())[0] if r else 0.0

n = 0
for t in range(0, int(end) + 1, STEP * 7):
    comp = iv[(iv["ready"] <= t) & (t < iv["end"])]
    held = iv[(iv["start"] <= t) & (t < iv["end"])]
    # the naive queries, exact: one utilization series per GPU at every instant
    for at in (t, t + 30):      # at the sample and between samples (the last sample)
        if at > end:
            continue
        assert one("count(DCGM_FI_DEV_GPU_UTIL)", at) == 32, (at, q("count(DCGM_FI_DEV_GPU_UTIL)", at))
        want = float(sum(round(100 * r["duty"]) * r["gpus"] for r in comp))
        assert one("sum(DCGM_FI_DEV_GPU_UTIL)", at) == want, (at, want)
        assert abs(one("avg(DCGM_FI_DEV_GPU_UTIL)", at) - want / 32) < 1e-9
        # busy GPUs per namespace: the pod labels of what runs there
        got = {dict(k).get("namespace"): v for k, v in q('count by (namespace) (DCGM_FI_DEV_FB_USED{pod!=""})', at).items()}
        w = {}
        for r in held:
            w[names.get(int(r["tenant"]), "default")] = w.get(names.get(int(r["tenant"]), "default"), 0) + int(r["gpus"])
        assert got == w, (at, got, w)
        # device-level: one power series per GPU, the power model summed
        assert one("count(DCGM_FI_DEV_POWER_USAGE)", at) == 32
        p = 32 * 70.0 + sum(r["gpus"] * (38 + 592 * r["sm"]) for r in comp)
        assert abs(one("sum(DCGM_FI_DEV_POWER_USAGE)", at) - p) < 1e-6, (at, p)
    # the scheduler's series at the instant: /timeline's row
    row = tl[tl["time"] <= t][-1]
    assert one("fleetsim_gpus_busy", t) == row["gpus_busy"], (t, row["gpus_busy"])
    # capacity states over the last interval: busy, waiting, idle and down add up to the fleet
    if t > 0:
        assert abs(one('sum(fleetsim_capacity_gpus{state!="starting"})', t) - 32) < 1e-9, t
        r = tl[tl["time"] <= t]
        assert abs(one('fleetsim_capacity_gpus{state="busy"}', t) - r[-1]["gpu_s_busy"] / (r[-1]["time"] - r[-2]["time"])) < 1e-9
    n += 1
# energy at the last instant: the power integral, to 1e-9 relative
t_end = int(end) // STEP * STEP
e = 32 * 70.0 * t_end
for r in iv:
    a, b = max(r["ready"], 0), min(r["end"], t_end)
    if b > a:
        e += r["gpus"] * (38 + 592 * r["sm"]) * (b - a)
val = one("sum(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION)", t_end) / 1000
assert abs(val - e) <= 1e-9 * e, (val, e, (val - e) / e)
assert one("count(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION)", t_end) == 32
# the dashboard's energy panel (kWh in each hour, the counter's difference per UUID) summed
# over the run's hours is the power integral
ep = [p for p in dash["panels"] if p["title"] == "Energy per hour"][0]["targets"][0]["expr"]
u = "http://127.0.0.1:%s/api/v1/query_range?%s" % (port, urllib.parse.urlencode(
    {"query": ep.replace("$host", ".*"), "start": ORIGIN + 3600, "end": ORIGIN + t_end, "step": 3600}))
hours = json.load(urllib.request.urlopen(u))["data"]["result"][0]["values"]
assert len(hours) == t_end // 3600, hours
kwh = sum(float(v) for _, v in hours)
assert abs(kwh * 3.6e6 - e) <= 1e-9 * e, (kwh * 3.6e6, e)
# after the run: every series has stopped (staleness markers), none lingers 5 minutes
assert q("count(DCGM_FI_DEV_GPU_UTIL)", t_end + STEP + 1) == {}, q("count(DCGM_FI_DEV_GPU_UTIL)", t_end + STEP + 1)
# every panel of the shipped dashboard returns series
panels = 0
for p in dash["panels"]:
    for tg in p["targets"]:
        expr = tg["expr"].replace("$host", ".*")
        if "GPU_I_PROFILE" in expr:
            continue        # no MIG pool in this run
        u = "http://127.0.0.1:%s/api/v1/query_range?%s" % (port, urllib.parse.urlencode(
            {"query": expr, "start": ORIGIN, "end": ORIGIN + 6 * 3600, "step": 300}))
        d = json.load(urllib.request.urlopen(u))
        assert d["status"] == "success" and d["data"]["result"], (p["title"], expr)
        panels += 1
print("checked", n, "instants exactly, energy %.6f MJ, %d dashboard queries" % (e / 1e6, panels))
EOF
cat py.txt
# NVIDIA's dashboard 12239 as published (tests/data/grafana): its variables resolved as Grafana
# resolves them (label_values, All of a multi-value variable: the values' regex alternation),
# then every panel's expression over the run.  The SM clock panel has no data: fleetsim models
# no clocks (DCGM_FI_DEV_SM_CLOCK is not exported; docs/observability.md "Grafana").
/usr/bin/python3 - "$PORT" "$SRC/tests/data/grafana/dcgm-exporter-dashboard.json" > d12239.txt 2>&1 <<'EOF2' && ok || bad "dashboard 12239: $(cat d12239.txt)"
import json, re, sys, urllib.parse, urllib.request
port, dash = sys.argv[1], json.load(open(sys.argv[2]))
assert dash["gnetId"] == 12239 and dash["uid"] == "Oxed_c6Wz", (dash["gnetId"], dash["uid"])
ORIGIN = 1767225600
def get(path, **params):
    u = "http://127.0.0.1:%s%s?%s" % (port, path, urllib.parse.urlencode(params, doseq=True))
    d = json.load(urllib.request.urlopen(u))
    assert d["status"] == "success", d
    return d["data"]
var = {}
for v in dash["templating"]["list"]:
    if v["type"] != "query":
        continue
    m = re.fullmatch(r"label_values\((\w+), *(\w+)\)", v["query"])
    vals = get("/api/v1/label/%s/values" % m.group(2), **{"match[]": m.group(1), "start": ORIGIN, "end": ORIGIN + 6 * 3600})
    assert vals, v["name"]
    # Grafana's Prometheus data source escapes regex metacharacters with a doubled backslash
    esc = lambda x: re.sub(r"([$^*{}\[\]'+?.()|])", r"\\\\\1", x.replace("\\", "\\\\\\\\"))
    var[v["name"]] = "(" + "|".join(esc(x) for x in vals) + ")"
assert set(var) == {"instance", "gpu"}, var
assert var["instance"].count("|") == 3 and var["gpu"].count("|") == 7, var     # 4 hosts, GPUs 0-7
done, empty = [], []
for p in dash["panels"]:
    for t in p.get("targets", []):
        expr = re.sub(r"\$(\w+)", lambda m: var[m.group(1)], t["expr"])
        r = get("/api/v1/query_range", query=expr, start=ORIGIN, end=ORIGIN + 6 * 3600, step=60)
        (done if r["result"] else empty).append(p["title"])
        if r["result"] and "avg(" not in expr and "sum(" not in expr:
            # a series per GPU (device-level), per GPU and pod (utilization, memory, tensor)
            per_gpu = {(s["metric"]["instance"], s["metric"]["gpu"]) for s in r["result"]}
            assert len(per_gpu) == 32, (p["title"], len(per_gpu))
            assert ("POWER" not in expr and "TEMP" not in expr) or len(r["result"]) == 32, p["title"]
assert empty == ["GPU SM Clocks"], empty
print("dashboard 12239:", len(done), "panels with data:", ", ".join(done), "; no data:", ", ".join(empty))
EOF2
cat d12239.txt
stop_prom
grep -E 'level=(warn|error)' db.log | grep -v 'Received SIGTERM' > warn.txt
[ -s warn.txt ] && bad "prometheus warned: $(head -3 warn.txt)" || ok

# ---- 30 days: with the documented retention (the run's length and a day), all of it ------
cat > month.yaml <<'EOF'
name: month
seed: 2
horizon: 30d
until: horizon
cluster:
  pools: [{name: small, gpu: H100, nodes: 1, gpus_per_node: 2}]
workload:
  synthetic:
    arrivals: {rate: 1/h}
    gpus: {1: 1}
    duration: {dist: exponential, mean: 1h}
output: {gpu_intervals: true}
EOF
expect_exit 0 "$FLEETSIM" run month.yaml -o month.h5 -q
expect_exit 0 "$FLEETSIM" metrics month.h5 --tsdb month --step 300 -q \
    --families DCGM_FI_DEV_POWER_USAGE,DCGM_FI_DEV_GPU_UTIL
cp -r month month-default
check_month() {  # check_month WANT_FIRST_DAY: the first day's samples (2 GPUs x 288) or 0
    /usr/bin/python3 - "$PORT" "$1" > month.txt 2>&1 <<'EOF'
import json, sys, urllib.parse, urllib.request
port, first = sys.argv[1], int(sys.argv[2])
O = 1767225600
def q(expr, t):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr, "time": t}))
    r = json.load(urllib.request.urlopen(u))["data"]["result"]
    return float(r[0]["value"][1]) if r else 0
got = q("sum(count_over_time(DCGM_FI_DEV_POWER_USAGE[1d]))", O + 86400 - 1)
assert got == first, (got, first)
assert q("count(DCGM_FI_DEV_GPU_UTIL)", O + 30 * 86400) == 2
total = q("sum(count_over_time(DCGM_FI_DEV_POWER_USAGE[31d]))", O + 30 * 86400)
assert total == (2 * (30 * 288 + 1) if first else total), total
print("first day", got, "samples; 30 days", total)
EOF
}
start_prom month --storage.tsdb.retention.time=31d && ok || bad "prometheus (31d) did not start: $(tail -3 month.log)"
check_month 576 && ok || bad "30 days with --storage.tsdb.retention.time=31d: $(cat month.txt)"
stop_prom
# with the default 15 days, counted back from the newest block, the first days are gone
start_prom month-default && ok || bad "prometheus (default) did not start: $(tail -3 month-default.log)"
for i in $(seq 1 50); do check_month 0 && break; sleep 0.2; done
check_month 0 && ok || bad "the default retention kept the first day: $(cat month.txt)"
stop_prom
finish
