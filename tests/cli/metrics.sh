#!/usr/bin/env bash
# Issue 15: fleetsim metrics writes DCGM-named telemetry that a real
# Prometheus ingests (promtool check metrics, promtool tsdb
# create-blocks-from openmetrics, prometheus serving the blocks), and the
# PromQL answers agree with the HDF5 results computed independently here
# (sums over /gpu_intervals, which do not depend on the GPU numbering).
source "$(dirname "$0")/lib/common.bash"

cat > m.yaml <<'EOF'
name: metrics
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
telemetry: {sm: 0.7}
failures:
  components: [{kind: node, tbf: {dist: exponential, mean: 8h}, causes: {dbe: 1}}]
  causes: [{name: dbe, xid: 48}]
output: {gpu_intervals: true, timeline_interval: 1m}
EOF

# errors first: no intervals, bad options, an output that is the input
expect_exit 0 "$FLEETSIM" run m.yaml -o plain.h5 --set output.gpu_intervals=false -q
expect_exit 2 "$FLEETSIM" metrics plain.h5 -o x.om
expect_err 'plain.h5: no /gpu_intervals rows \(run the scenario with output.gpu_intervals: true\)'
expect_no_file x.om
expect_exit 2 "$FLEETSIM" metrics plain.h5 -o x.om --step 0
expect_err '\-\-step: expected whole seconds'
expect_exit 2 "$FLEETSIM" metrics plain.h5 -o x.om --origin -5
expect_err '\-\-origin: expected Unix seconds'
expect_exit 2 "$FLEETSIM" metrics plain.h5 -o x.om --xid-window 0
expect_err '\-\-xid-window: expected whole seconds from 1 to 31536000, got .0.'
expect_no_file x.om
expect_exit 2 "$FLEETSIM" metrics plain.h5 -o plain.h5
expect_exit 2 "$FLEETSIM" metrics plain.h5
expect_err '\-o FILE \(OpenMetrics text\) or --tsdb DIR \(Prometheus blocks\) is needed'

expect_exit 0 "$FLEETSIM" run m.yaml -o m.h5 -q
# /gpu_intervals holds every GPU-second a job held, failed attempts included
# (each attempt's rows end at its failure): per job, the rows' GPU-seconds
# equal /jobs run x gpus, and the failures did interrupt some job
/usr/bin/python3 - > held.txt 2>&1 <<'EOF' && ok || bad "held GPU-s: $(cat held.txt)"
import h5py
f = h5py.File("m.h5", "r")
iv, jobs = f["gpu_intervals"][:], f["jobs"][:]
held = {}
for r in iv:
    held[r["job"]] = held.get(r["job"], 0) + (r["end"] - r["start"]) * r["gpus"] * r["gpu_milli"] / 1000
assert (jobs["restarts"] > 0).any(), "no job was interrupted"
for j in jobs:
    assert abs(held.get(j["id"], 0) - j["run"] * j["gpus"]) < 1e-6, (j["id"], held.get(j["id"]), j["run"] * j["gpus"])
EOF
expect_exit 0 "$FLEETSIM" metrics m.h5 -o m.om --step 60
expect_out '^metrics +m.om: 32 GPUs, [0-9]+ series, [0-9]+ samples'
tail -1 m.om | grep -qx '# EOF' && ok || bad "no # EOF at the end"
for n in DCGM_FI_DEV_GPU_UTIL DCGM_FI_PROF_SM_ACTIVE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE \
         DCGM_FI_PROF_DRAM_ACTIVE DCGM_FI_DEV_FB_USED DCGM_FI_DEV_FB_FREE DCGM_FI_DEV_POWER_USAGE \
         DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_XID_ERRORS \
         DCGM_EXP_XID_ERRORS_COUNT DCGM_FI_DEV_ECC_DBE_VOL_TOTAL fleetsim_jobs_queued; do
    grep -q "^# TYPE $n " m.om && ok || bad "no family $n"
done
# GPU subsets: --pools and --nodes keep exactly the selected GPUs' lines
expect_exit 0 "$FLEETSIM" metrics m.h5 -o sub.om --step 60 --pools h100 --nodes 1-2
expect_out '^metrics +sub.om: 16 GPUs'
grep '^DCGM' m.om | grep -E 'hostname="h100-[12]"' > want-sub.txt
grep '^DCGM' sub.om > got-sub.txt
[ -s got-sub.txt ] && cmp -s want-sub.txt got-sub.txt && ok || bad "--pools/--nodes: not the full export's lines of h100-1 and h100-2"
expect_exit 2 "$FLEETSIM" metrics m.h5 -o sub2.om --pools gpu
expect_err "--pools: 'gpu' is not a pool of m.h5 \(its pools: h100\)"
expect_no_file sub2.om
expect_exit 2 "$FLEETSIM" metrics m.h5 -o sub2.om --nodes 3-1
expect_err '\-\-nodes: expected FIRST-LAST'
# the same run gives the same file
expect_exit 0 "$FLEETSIM" metrics m.h5 -o m2.om --step 60
cmp -s m.om m2.om && ok || bad "metrics differ between two exports"

# the Grafana dashboard in the repo queries only series the exporter writes
/usr/bin/python3 - "$SRC/analysis/grafana/fleetsim-dcgm.json" m.om > dash.txt 2>&1 <<'EOF' && ok || bad "dashboard: $(cat dash.txt)"
import json, re, sys
d = json.load(open(sys.argv[1]))
have = {l.split()[2] for l in open(sys.argv[2]) if l.startswith("# TYPE ")}
exprs = [t["expr"] for p in d["panels"] for t in p["targets"]]
exprs.append(d["templating"]["list"][1]["query"])
used = {m for e in exprs for m in re.findall(r"\b(DCGM_FI_[A-Z_]+|fleetsim_[a-z_]+)\b", e)}
missing = sorted(used - have)
assert not missing, missing
assert len(used) >= 12, used
print(len(d["panels"]), "panels,", len(used), "series names, all written")
EOF

# MIG (docs/observability.md "MIG"): per-instance series with GPU_I_PROFILE
# and GPU_I_ID, device-level power from the instances' compute shares, no
# GPU_UTIL on a MIG GPU; checked against /gpu_intervals, one row per instance
cat > mig.yaml <<'EOF'
name: mig-metrics
seed: 3
horizon: 2h
warmup: 0
cluster:
  pools:
    - {name: mig, gpu: H100, nodes: 2, gpus_per_node: 2, mig: "3g.40gb, 2g.20gb, 1g.10gb x2"}
    - {name: whole, gpu: H100, nodes: 1, gpus_per_node: 2}
workload:
  synthetic:
    arrivals: {rate: 20/h}
    gpus: {1: 0.7, 2: 0.3}
    duration: {dist: exponential, mean: 30m}
    mig_profile: 1g.10gb
telemetry: {sm: 0.7, duty: 0.9}
output: {gpu_intervals: true, timeline_interval: 1m}
EOF
expect_exit 0 "$FLEETSIM" run mig.yaml -o mig.h5 -q
expect_exit 0 "$FLEETSIM" metrics mig.h5 -o mig.om --step 60
expect_out '^metrics +mig.om: 6 GPUs'
# a /gpu_intervals row naming an instance the GPU's layout lacks, and a /pools
# layout that does not parse, are refused (exit 2) with the file named
cp mig.h5 badinst.h5 && cp mig.h5 badlay.h5
/usr/bin/python3 - <<'EOF'
import h5py
with h5py.File("badinst.h5", "r+") as f:
    d = f["gpu_intervals"]; a = d[:]
    i = int((a["gpu_instance"] >= 0).nonzero()[0][0]); a["gpu_instance"][i] = 6; d[:] = a
with h5py.File("badlay.h5", "r+") as f:
    d = f["pools"]; a = d[:]; a["mig"][0] = b"9g.99gb"; d[:] = a
EOF
expect_exit 2 "$FLEETSIM" metrics badinst.h5 -o bad.om
expect_err "badinst.h5: /gpu_intervals: a MIG instance that the GPU's layout \(/pools.mig\) does not have"
expect_no_file bad.om
expect_exit 2 "$FLEETSIM" metrics badlay.h5 -o bad.om
expect_err "badlay.h5: /pools: pool 'mig': mig: "
expect_no_file bad.om
if command -v promtool >/dev/null; then
    promtool check metrics < mig.om 2>&1 | grep -v -e 'camelCase' -e 'snake_case' \
        -e "^fleetsim:[a-z_]*:sum_node metric names should not contain ':'" > miglint.txt
    [ -s miglint.txt ] && bad "promtool check metrics (MIG): $(head -3 miglint.txt)" || ok
fi
/usr/bin/python3 - mig.h5 mig.om > migpy.txt 2>&1 <<'EOF' && ok || bad "MIG series: $(cat migpy.txt)"
import re, sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
iv = f["gpu_intervals"][:]
tl = f["timeline"][:]
pat = re.compile(r'^(\w+)\{([^}]*)\} (\S+) (\d+)$')
series = {}
for line in open(sys.argv[2]):
    m = pat.match(line)
    if m:
        lab = dict(kv.split("=", 1) for kv in re.findall(r'(\w+="[^"]*")', m.group(2)))
        lab = {k: v.strip('"') for k, v in lab.items()}
        series.setdefault(m.group(1), []).append((lab, float(m.group(3)), int(m.group(4)) - 1767225600))
# layout in instance order (ascending start): 2g.20gb@0, 1g@2, 1g@3, 3g.40gb@4
order = ["2g.20gb", "1g.10gb", "1g.10gb", "3g.40gb"]
mig_rows = iv[iv["gpu_instance"] >= 0]
assert len(mig_rows) and (mig_rows["gpus"] == 1).all() and (mig_rows["gpu_milli"] == 142).all()
assert (iv[iv["gpu_instance"] < 0]["node"] == 4).all(), "a whole-GPU row on a MIG node"
for r in mig_rows:
    assert order[r["gpu_instance"]] == "1g.10gb", r
# an instance is held by one pod at a time
for key in set(zip(mig_rows["node"], mig_rows["gpu"], mig_rows["gpu_instance"])):
    rs = sorted((r["start"], r["end"]) for r in mig_rows
                if (r["node"], r["gpu"], r["gpu_instance"]) == key)
    assert all(a[1] <= b[0] for a, b in zip(rs, rs[1:])), (key, rs)
# instances held at each timeline sample = /timeline.mig_busy
for row in tl:
    t = row["time"]
    held = ((mig_rows["start"] <= t) & (t < mig_rows["end"])).sum()
    assert held == row["mig_busy"], (t, held, row["mig_busy"])
# no GPU_UTIL on MIG GPUs; per-instance SM_ACTIVE with profile and id labels
assert all(l["hostname"] == "whole-0" for l, _, _ in series["DCGM_FI_DEV_GPU_UTIL"])
sm = [(l, v, t) for l, v, t in series["DCGM_FI_PROF_SM_ACTIVE"] if l["hostname"] != "whole-0"]
ids = {(l["hostname"], l["gpu"], l["GPU_I_ID"], l["GPU_I_PROFILE"]) for l, _, _ in sm}
assert ids == {("mig-%d" % n, str(g), str(i), order[i]) for n in range(2) for g in range(2)
               for i in range(4)}, sorted(ids)
checked = 0
for l, v, t in sm:
    node, g, i = int(l["hostname"][4:]), int(l["gpu"]), int(l["GPU_I_ID"])
    rs = mig_rows[(mig_rows["node"] == node) & (mig_rows["gpu"] == g) & (mig_rows["gpu_instance"] == i)
                  & (mig_rows["ready"] <= t) & (t < mig_rows["end"])]
    want = 0.7 if len(rs) else 0.0
    assert abs(v - want) < 1e-9, (l, t, v, want)
    assert ("pod" in l) == bool(((mig_rows["node"] == node) & (mig_rows["gpu"] == g) &
            (mig_rows["gpu_instance"] == i) & (mig_rows["start"] <= t) & (t < mig_rows["end"])).sum()), (l, t)
    checked += len(rs)
assert checked > 50, checked
# device power: 70 W idle + 38 W while any instance computes + 592 W x sum(share x sm)
for l, v, t in series["DCGM_FI_DEV_POWER_USAGE"]:
    if l["hostname"] == "whole-0":
        continue
    assert "GPU_I_ID" not in l and "pod" not in l, l
    node, g = int(l["hostname"][4:]), int(l["gpu"])
    rs = mig_rows[(mig_rows["node"] == node) & (mig_rows["gpu"] == g) & (mig_rows["ready"] <= t) & (t < mig_rows["end"])]
    want = 70 + (38 if len(rs) else 0) + 592 * 0.142 * 0.7 * len(rs)
    assert abs(v - want) <= 5e-4 + 1e-9, (l, t, v, want)     # W to the mW, as DCGM reports
# framebuffer of an instance: its profile's memory
fb = [(l, v) for l, v, _ in series["DCGM_FI_DEV_FB_FREE"] if l.get("GPU_I_PROFILE") == "3g.40gb"]
assert fb and all(v == 40 * 1024 for _, v in fb), fb[:3]
print("MIG: checked", checked, "busy instance samples")
EOF

# MIG re-partitioning (docs/mig.md "Re-partitioning in the run"): a pool cut
# all-7g.80gb is re-cut for the 1g.10gb pods; each instance series exists
# only while the layout of /mig_layouts (or /pools.mig before its first row)
# is in force, with that layout's profile and index, and its SM_ACTIVE
# follows the /gpu_intervals rows of that instance
cat > recut.yaml <<'EOF'
name: mig-recut-metrics
seed: 4
horizon: 3h
warmup: 0
cluster:
  pools:
    - name: mig
      gpu: H100
      nodes: 3
      gpus_per_node: 1
      mig: all-7g.80gb
      mig_repartition: {reconfigure: 60s, gpu_ready: 1m, min_interval: 10m}
workload:
  synthetic:
    arrivals: {rate: 12/h}
    gpus: {1: 0.6, 3: 0.4}
    duration: {dist: exponential, mean: 20m}
    mig_profile: 1g.10gb
telemetry: {sm: 0.7}
output: {gpu_intervals: true, timeline_interval: 1m}
EOF
expect_exit 0 "$FLEETSIM" run recut.yaml -o recut.h5 -q
expect_exit 0 "$FLEETSIM" metrics recut.h5 -o recut.om --step 60
/usr/bin/python3 - recut.h5 recut.om > recutpy.txt 2>&1 <<'EOF' && ok || bad "MIG re-cut series: $(cat recutpy.txt)"
import re, sys, h5py
f = h5py.File(sys.argv[1], "r")
iv = f["gpu_intervals"][:]
ml = f["mig_layouts"][:]
s = f["summary"][0]
assert s["mig_recuts"] >= 1 and len(ml) == s["mig_recuts"], (s["mig_recuts"], len(ml))
assert abs(s["gpu_s_mig_reconfig"] - 120.0 * len(ml)) < 1e-6, s["gpu_s_mig_reconfig"]
def layout(node, t):   # the profiles of the node's GPU 0 in force at t, by index
    cur = ["7g.80gb"]
    for r in ml:
        if r["node"] == node and r["time"] <= t:
            assert r["layout"] == b"1g.10gb x7", r
            cur = ["1g.10gb"] * 7
    return cur
pat = re.compile(r'^(\w+)\{([^}]*)\} (\S+) (\d+)$')
n = 0
for line in open(sys.argv[2]):
    m = pat.match(line)
    if not m or m.group(1) != "DCGM_FI_PROF_SM_ACTIVE":
        continue
    lab = {k: v.strip('"') for k, v in (kv.split("=", 1) for kv in re.findall(r'(\w+="[^"]*")', m.group(2)))}
    t = int(m.group(4)) - 1767225600
    node, i = int(lab["hostname"][4:]), int(lab["GPU_I_ID"])
    lay = layout(node, t)
    assert i < len(lay) and lab["GPU_I_PROFILE"] == lay[i], (lab, t, lay)
    rs = iv[(iv["node"] == node) & (iv["gpu_instance"] == i) & (iv["ready"] <= t) & (t < iv["end"])]
    assert abs(float(m.group(3)) - (0.7 if len(rs) else 0.0)) < 1e-9, (lab, t)
    n += len(rs)
# no pod holds a node across its re-cut or inside the phase after it
for r in ml:
    on = iv[iv["node"] == r["node"]]
    assert not ((on["start"] < r["time"]) & (on["end"] > r["time"])).any(), r
    assert not ((on["start"] >= r["time"]) & (on["start"] < r["ready"])).any(), r
assert n > 20, n
print("re-cut: checked", n, "busy instance samples over", len(ml), "re-cuts")
EOF

# mixed re-cuts (docs/mig.md "Mixed layouts"): 2g.20gb pods and pods of two
# 1g.10gb arriving together share re-cut GPUs, the other GPUs keep 7g.80gb;
# every busy instance sample's GPU_I_PROFILE is the profile of the pod whose
# /gpu_intervals row holds that instance (the run's instance indexes are the
# exporter's), and /mig_layouts has rows for the changed GPUs only
/usr/bin/python3 - > mixed.csv <<'EOF'
print("id,submit,gpus,duration,mig_profile")
i = 0
for r in range(12):
    t = 900.0 * r
    for j, (k, prof, dur) in enumerate(((1, "2g.20gb", 1500), (2, "1g.10gb", 1300), (1, "7g.80gb", 700))):
        i += 1
        print(f"{i},{t + j // 2},{k},{dur + 37 * r},{prof}")
EOF
cat > mixed.yaml <<'EOF'
name: mig-mixed-metrics
horizon: 4h
warmup: 0
until: horizon
cluster:
  pools:
    - name: mig
      gpu: H100
      nodes: 2
      gpus_per_node: 2
      mig: all-7g.80gb
      mig_repartition: {reconfigure: 60s, gpu_ready: 1m, min_interval: 10m, layout: mixed}
workload:
  trace: {path: mixed.csv, format: native}
telemetry: {sm: 0.7}
output: {gpu_intervals: true, timeline_interval: 1m}
EOF
expect_exit 0 "$FLEETSIM" run mixed.yaml -o mixed.h5 -q
expect_exit 0 "$FLEETSIM" metrics mixed.h5 -o mixed.om --step 60
/usr/bin/python3 - mixed.h5 mixed.om > mixedpy.txt 2>&1 <<'EOF' && ok || bad "MIG mixed series: $(cat mixedpy.txt)"
import re, sys, h5py
f = h5py.File(sys.argv[1], "r")
iv = f["gpu_intervals"][:]
jobs = {int(j["id"]): int(j["gpu_milli"]) for j in f["jobs"][:]}
ml = f["mig_layouts"][:]
s = f["summary"][0]
assert s["mig_recuts"] >= 2 and len(ml) < 2 * s["mig_recuts"], (s["mig_recuts"], len(ml))
assert any(b"," in r["layout"] for r in ml), ml     # some GPU carries two profiles
milli = {"1g.10gb": 142, "2g.20gb": 285, "7g.80gb": 1000}
pat = re.compile(r'^(\w+)\{([^}]*)\} (\S+) (\d+)$')
n = 0
for line in open(sys.argv[2]):
    m = pat.match(line)
    if not m or m.group(1) != "DCGM_FI_PROF_SM_ACTIVE" or float(m.group(3)) == 0:
        continue
    lab = {k: v.strip('"') for k, v in (kv.split("=", 1) for kv in re.findall(r'(\w+="[^"]*")', m.group(2)))}
    t = int(m.group(4)) - 1767225600
    node, gpu, i = int(lab["hostname"][4:]), int(lab["gpu"]), int(lab["GPU_I_ID"])
    rs = iv[(iv["node"] == node) & (iv["gpu"] == gpu) & (iv["gpu_instance"] == i) & (iv["ready"] <= t) & (t < iv["end"])]
    assert len(rs) == 1, (lab, t, len(rs))
    assert jobs[int(rs[0]["job"])] == milli[lab["GPU_I_PROFILE"]], (lab, t, rs[0])
    n += 1
assert n > 50, n
print("mixed: checked", n, "busy instance samples over", len(ml), "GPU re-cuts")
EOF

# power caps (docs/observability.md "Power caps"): a job whose activity would
# draw more than its pool's cap runs slower by the cap's speed, per class; the
# exported power never exceeds the cap and a capped computing GPU draws it
cat > cap.csv <<'EOF'
id,submit,gpus,duration,class
1,0,1,3600,0
2,0,8,7200,0
3,10,4,1800,1
4,20,2,5400,0
EOF
cat > cap.yaml <<'EOF'
name: caps
seed: 1
warmup: 0
cluster:
  pools: [{name: h100, gpu: H100, nodes: 2, gpus_per_node: 8, power_cap_w: 450}]
workload:
  trace: {path: cap.csv, format: native}
telemetry:
  sm: 0.7
  activity: [{class: 1, sm: 0.3}]
output: {gpu_intervals: true, timeline_interval: 1m}
EOF
expect_exit 0 "$FLEETSIM" run cap.yaml -o cap.h5 -q
expect_exit 0 "$FLEETSIM" run cap.yaml -o nocap.h5 -q --set cluster.pools.0.power_cap_w=0
expect_exit 0 "$FLEETSIM" metrics cap.h5 -o cap.om --step 60
/usr/bin/python3 - cap.h5 nocap.h5 cap.om > cappy.txt 2>&1 <<'EOF' && ok || bad "power caps: $(cat cappy.txt)"
import re, sys, h5py
cap, free = (h5py.File(p, "r") for p in sys.argv[1:3])
assert float(cap["pools"][0]["power_cap_w"]) == 450 and float(free["pools"][0]["power_cap_w"]) == 0
floor = 0.1 * 700 + 38                     # idle 10% of TDP + a CUDA context
def speed(sm):
    draw = floor + (700 - floor) * sm
    return 1.0 if draw <= 450 else ((450 - floor) / (draw - floor)) ** (1 / 3)
dur = {1: 3600, 2: 7200, 3: 1800, 4: 5400}
sm = {1: 0.7, 2: 0.7, 3: 0.3, 4: 0.7}
for a, b in zip(cap["jobs"][:], free["jobs"][:]):
    i = int(a["id"])
    assert abs(b["run"] - dur[i]) < 1e-6, (i, b["run"])
    assert abs(a["run"] - dur[i] / speed(sm[i])) < 1e-5, (i, a["run"], dur[i] / speed(sm[i]))
assert abs(speed(0.7) - 0.93800) < 1e-5 and speed(0.3) == 1.0
iv = cap["gpu_intervals"][:]
n = 0
for line in open(sys.argv[3]):
    m = re.match(r'DCGM_FI_DEV_POWER_USAGE\{.*\} (\S+) (\d+)$', line)
    if m:
        v, t = float(m.group(1)), int(m.group(2)) - 1767225600
        assert v <= 450 + 1e-9, (line, v)
        n += v == 450
# a computing class-0 GPU draws the cap: GPU-samples at 450 W = class-0 GPUs computing
want = sum(int(r["gpus"]) for t in range(0, int(cap["summary"][0]["end_time"]) + 1, 60)
           for r in iv if r["ready"] <= t < r["end"] and r["job_class"] == 0)
assert n == want and n > 0, (n, want)
print("caps: speed", speed(0.7), n, "capped samples")
EOF
# thermal throttling (telemetry.throttle_c at the pool's ambient_c): at 55 C a GPU may draw
# (87 - 55) / 0.07 = 457.14 W before it passes 87 C; with a 500 W cap as well the thermal
# limit binds, with a 450 W cap the cap does (the tighter of the two)
sed 's/power_cap_w: 450/ambient_c: 55/; s/^telemetry:$/telemetry:\n  throttle_c: 87/' cap.yaml > hot.yaml
expect_exit 0 "$FLEETSIM" run hot.yaml -o hot.h5 -q
expect_exit 0 "$FLEETSIM" run hot.yaml -o hot500.h5 -q --set cluster.pools.0.power_cap_w=500
expect_exit 0 "$FLEETSIM" run hot.yaml -o hot450.h5 -q --set cluster.pools.0.power_cap_w=450
expect_exit 0 "$FLEETSIM" run hot.yaml -o cool.h5 -q --set cluster.pools.0.ambient_c=30
expect_exit 0 "$FLEETSIM" metrics hot.h5 -o hot.om --step 60
/usr/bin/python3 - hot.h5 hot500.h5 hot450.h5 cool.h5 cap.h5 hot.om > hotpy.txt 2>&1 <<'EOF' && ok || bad "thermal throttling: $(cat hotpy.txt)"
import re, sys, h5py
hot, h500, h450, cool, cap = (h5py.File(p, "r") for p in sys.argv[1:6])
floor = 0.1 * 700 + 38
lim = (87 - 55) / 0.07
def speed(sm, c):
    draw = floor + (700 - floor) * sm
    return 1.0 if draw <= c else ((c - floor) / (draw - floor)) ** (1 / 3)
dur = {1: 3600, 2: 7200, 3: 1800, 4: 5400}
sm = {1: 0.7, 2: 0.7, 3: 0.3, 4: 0.7}
assert abs(float(hot["pools"][0]["throttle_w"]) - lim) < 1e-9 and float(hot["pools"][0]["ambient_c"]) == 55
for f, c in ((hot, lim), (h500, lim), (h450, 450)):
    for a in f["jobs"][:]:
        i = int(a["id"])
        assert abs(a["run"] - dur[i] / speed(sm[i], c)) < 1e-5, (i, a["run"], dur[i] / speed(sm[i], c))
# at 30 C the limit (814 W) is above the TDP: nothing throttles; 450 W cap: the cap run's times
for a in cool["jobs"][:]:
    assert abs(a["run"] - dur[int(a["id"])]) < 1e-6
assert [float(r) for r in h450["jobs"]["run"]] == [float(r) for r in cap["jobs"]["run"]]
assert abs(speed(0.7, lim) - 0.94448) < 1e-4, speed(0.7, lim)
temps, powers = [], []
for line in open(sys.argv[6]):
    m = re.match(r'DCGM_FI_DEV_(GPU_TEMP|POWER_USAGE)\{.*\} (\S+) (\d+)$', line)
    if m:
        (temps if m.group(1) == "GPU_TEMP" else powers).append(float(m.group(2)))
assert max(powers) <= lim + 5e-4 and abs(max(powers) - lim) < 5e-4, max(powers)   # W to the mW
assert max(temps) == 87 and min(temps) >= 55, (max(temps), min(temps))
print("throttle: speed", speed(0.7, lim), "max power", max(powers), "max temp", max(temps))
EOF
sed 's/ambient_c: 55/ambient_c: 82/' hot.yaml > hot-floor.yaml
expect_exit 2 "$FLEETSIM" validate hot-floor.yaml
expect_err 'hot-floor.yaml:5:[0-9]+: cluster.pools.0.ambient_c: at 82 C the H100 would pass telemetry.throttle_c \(87 C\) even at its idle \+ context draw'
sed 's/gpus_per_node: 8, ambient_c: 55/gpus_per_node: 8, mig: all-1g.10gb, ambient_c: 55/' hot.yaml > hot-mig.yaml
expect_exit 2 "$FLEETSIM" validate hot-mig.yaml
expect_err 'thermal throttling of MIG pools is not modelled'
sed 's/power_cap_w: 450/power_cap_w: 100/' cap.yaml > cap-low.yaml
expect_exit 2 "$FLEETSIM" validate cap-low.yaml
expect_err 'cap-low.yaml:5:[0-9]+: cluster.pools.0.power_cap_w: 100 W is not above the H100.s idle \+ context draw \(108 W'
sed 's/gpus_per_node: 8, power_cap_w: 450/gpus_per_node: 8, mig: all-1g.10gb, power_cap_w: 450/' cap.yaml > cap-mig.yaml
expect_exit 2 "$FLEETSIM" validate cap-mig.yaml
expect_err 'power caps on MIG pools are not modelled'

if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null ||
   ! /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
    echo "SKIP: promtool/prometheus or python3-h5py not installed (Debian packages prometheus, python3-h5py)" >&2
    finish
fi
# promtool: parses; the only lint findings are dcgm-exporter's own camelCase label names and the
# ':' of the node energy counter's recording-rule name (fleetsim:total_energy_consumption:sum_node)
promtool check metrics < m.om > lint.txt 2>&1
grep -v -e "label names should be written in 'snake_case' not 'camelCase'" \
    -e "^fleetsim:total_energy_consumption:sum_node metric names should not contain ':'" lint.txt > lint-other.txt
[ -s lint-other.txt ] && bad "promtool check metrics: $(head -3 lint-other.txt)" || ok
grep -q "camelCase" lint.txt && ok || bad "expected the camelCase lint of modelName/UUID"
# a broken file fails it (the check can fail)
sed 's/^DCGM_FI_DEV_GPU_UTIL{\(.*\)} \([0-9]*\) /DCGM_FI_DEV_GPU_UTIL{\1} x\2 /' m.om | head -5 > broken.om
promtool check metrics < broken.om >/dev/null 2>&1 && bad "promtool accepted a broken file" || ok

expect_exit 0 promtool tsdb create-blocks-from openmetrics m.om tsdb
# the MIG run, two days later, into the same store (the dashboard's MIG panel)
expect_exit 0 "$FLEETSIM" metrics mig.h5 -o mig-later.om --step 60 --origin 1767398400
expect_exit 0 promtool tsdb create-blocks-from openmetrics mig-later.om tsdb
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'global: {scrape_interval: 1h}\nscrape_configs: []\n' > prom.yml
prometheus --config.file=prom.yml --storage.tsdb.path=tsdb --storage.tsdb.retention.time=100y \
    --web.listen-address=127.0.0.1:$PORT > prom.log 2>&1 &
PROM=$!
trap 'kill $PROM 2>/dev/null; wait $PROM 2>/dev/null; rm -rf "$WORK"' EXIT
for i in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null 2>&1 && break
    sleep 0.2
done
curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null && ok || bad "prometheus did not start: $(tail -3 prom.log)"

# every panel of the Grafana dashboard returns series over a run: the fleet
# panels over the first (6 h), the MIG panel over the MIG run (2 h)
/usr/bin/python3 - "$PORT" "$SRC/analysis/grafana/fleetsim-dcgm.json" > panels.txt 2>&1 <<'EOF' && ok || bad "dashboard panels: $(cat panels.txt)"
import json, sys, urllib.parse, urllib.request
port, dash = sys.argv[1], json.load(open(sys.argv[2]))
n = 0
for p in dash["panels"]:
    for tg in p["targets"]:
        expr = tg["expr"].replace("$host", ".*")
        t0, t1 = (1767398400, 1767398400 + 7200) if "GPU_I_PROFILE" in expr else (1767225600, 1767225600 + 6 * 3600)
        u = "http://127.0.0.1:%s/api/v1/query_range?%s" % (port, urllib.parse.urlencode(
            {"query": expr, "start": t0, "end": t1, "step": 300}))
        d = json.load(urllib.request.urlopen(u))
        assert d["status"] == "success", (p["title"], d)
        assert d["data"]["result"], ("no series", p["title"], expr)
        n += 1
print(n, "panel queries return series")
EOF
/usr/bin/python3 - "$PORT" m.h5 > py.txt 2>&1 <<'EOF' && ok || bad "PromQL vs HDF5: $(cat py.txt)"
import json, sys, urllib.parse, urllib.request
import h5py, numpy as np
port, path = sys.argv[1], sys.argv[2]
ORIGIN = 1767225600
f = h5py.File(path, "r")
iv = f["gpu_intervals"][:]
names = {int(r["tenant"]): r["name"].decode() for r in f["tenants"][:]}
end_time = float(f["summary"][0]["end_time"])
fails = f["failures"][:]

def q(expr, t):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr, "time": ORIGIN + t}))
    d = json.load(urllib.request.urlopen(u))
    assert d["status"] == "success", d
    return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in d["data"]["result"]}

def computing(t):
    return (iv["ready"] <= t) & (t < iv["end"])

checked = 0
# Backfilled series carry no staleness markers: an instant query would also
# see a series that ended up to 5 min before (a job's, then the idle one).
# last_over_time(...[1s]) takes only the samples at the instant itself.
# Busy GPUs (sum of duty x GPUs) per namespace at sample instants:
for t in range(1800, int(end_time), 1800):
    got = q('sum by (namespace) (last_over_time(DCGM_FI_DEV_GPU_UTIL{namespace!=""}[1s]))', t)
    m = computing(t)
    want = {}
    for r in iv[m]:
        k = names.get(int(r["tenant"]), "default")
        want[k] = want.get(k, 0) + 100 * r["duty"] * r["gpus"] * r["gpu_milli"] / 1000
    g = {dict(k)["namespace"]: v for k, v in got.items()}
    for k in set(g) | set(want):
        assert abs(g.get(k, 0) - want.get(k, 0)) < 1e-6, (t, k, g, want)
    checked += 1
# average utilization per namespace over an hour: samples in [T - 1h, T] (Prometheus 2 range
# selectors include their left end)
T = 5 * 3600
got = q('sum by (namespace) (sum_over_time(DCGM_FI_DEV_GPU_UTIL{namespace!=""}[1h]))', T)
want = {}
for t in range(T - 3600, T + 1, 60):
    for r in iv[computing(t)]:
        k = names.get(int(r["tenant"]), "default")
        want[k] = want.get(k, 0) + 100 * r["duty"] * r["gpus"]
g = {dict(k)["namespace"]: v for k, v in got.items()}
assert g.keys() == want.keys() and all(abs(g[k] - want[k]) < 1e-6 for k in g), (g, want)
# energy: every GPU idles at 10% of 700 W; a computing GPU adds 38 W + (700 - 70 - 38) x sm
t_end = int(end_time) // 60 * 60
got = q("sum(last_over_time(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[1s]))", t_end)
e = 32 * 70.0 * t_end
for r in iv:
    a, b = max(r["ready"], 0), min(r["end"], t_end)
    if b > a:
        e += r["gpus"] * (38 + (700 - 70 - 38) * r["sm"]) * (b - a)
val = list(got.values())[0] / 1000
assert abs(val - e) <= 32e-3 + 1e-9 * e, (val, e)
# Xid 48 bursts (docs/observability.md "Xid bursts"): every GPU of a node in repair logged
# 48 then 63 (row remapping pending), then 45 where a job held it; the last-value gauge shows
# 45 on the GPUs that were held (counted per node from /gpu_intervals) and 63 on the others
xf = [r for r in fails if int(r["xid"]) == 48 and r["time"] + 60 < min(end_time, r["time"] + r["repair_time"])]
assert xf, "no Xid failure to check"
def in_repair(t):
    return [r for r in fails if int(r["xid"]) == 48 and r["time"] <= t < r["time"] + r["repair_time"]]
def held_at_failure(r):
    m = (iv["node"] == r["unit"]) & (iv["start"] < r["time"]) & (r["time"] <= iv["end"])
    return int(iv[m]["gpus"].sum())
xchecked = 0
for r0 in xf:
    t = int(r0["time"]) // 60 * 60 + 60
    act = in_repair(t)
    g45 = sum(held_at_failure(r) for r in act)
    got = q("count(last_over_time(DCGM_FI_DEV_XID_ERRORS[1s]) == 45)", t)
    assert (list(got.values())[0] if got else 0) == g45, (t, got, g45)
    got = q("count(last_over_time(DCGM_FI_DEV_XID_ERRORS[1s]) == 63)", t)
    assert (list(got.values())[0] if got else 0) == 8 * len(act) - g45, (t, got, act)
    # the window count (300 s): 8 GPUs x the Xid 48s of the last 5 minutes
    n48 = sum(1 for r in fails if int(r["xid"]) == 48 and t - 300 < r["time"] <= t)
    got = q('sum(last_over_time(DCGM_EXP_XID_ERRORS_COUNT{xid="48"}[1s]))', t)
    assert (list(got.values())[0] if got else 0) == 8 * n48, (t, got, n48)
    xchecked += 1
# volatile DBE count: per node, the Xid 48s since its last reset (the end of a repair that
# resets: soft or hard), sampled every 10 min
dbe_seen = 0
for t in range(600, int(end_time), 600):
    want = 0
    for node in set(int(r["unit"]) for r in fails):
        rs = [r for r in fails if int(r["unit"]) == node]
        last = max([r["time"] + r["repair_time"] for r in rs
                    if int(r["repair"]) != 2 and r["time"] + r["repair_time"] <= t], default=-1)
        want += 8 * sum(1 for r in rs if int(r["xid"]) == 48 and last <= r["time"] <= t)
    got = q("sum(last_over_time(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[1s]))", t)
    assert list(got.values())[0] == want, (t, got, want)
    dbe_seen += want > 0
assert dbe_seen > 0, "no instant with a double-bit error counted"
print("checked", checked, "instants, an hour per namespace, energy %.3f MJ, Xid bursts at %d "
      "failures" % (e / 1e6, xchecked))
EOF
cat py.txt

# a trace's recorded GPU memory (native gpu_mem, GB per GPU; PAI avg_gpu_wrk_mem) is the
# framebuffer the export shows: 20 GB on an H100 is 20480 MiB used, 61440 free; more than
# the GPU has is all of it; no record keeps the class's share (telemetry.fb 0.5)
cat > fb.csv <<'EOF'
id,submit,gpus,duration,gpu_util,gpu_mem
1,0,2,3600,0.5,20
2,0,1,3600,,100
3,0,1,3600,,
EOF
cat > fb.yaml <<'EOF'
name: fb
cluster:
  pools: [{name: h100, gpu: H100, nodes: 1, gpus_per_node: 8}]
workload: {trace: {path: fb.csv, format: native}}
telemetry: {fb: 0.5}
output: {gpu_intervals: true}
EOF
expect_exit 0 "$FLEETSIM" run fb.yaml -o fb.h5 -q
expect_exit 0 "$FLEETSIM" metrics fb.h5 -o fb.om --step 600
python3 - <<'EOF' && ok || bad "recorded GPU memory is not the exported framebuffer"
import re
want = {"job-1": (20480, 61440), "job-2": (81920, 0), "job-3": (40960, 40960)}
seen = {}
for line in open("fb.om"):
    m = re.match(r'DCGM_FI_DEV_FB_(USED|FREE)\{.*pod="(job-\d)".*\} (\d+) \d+$', line)
    if m:
        v = want[m.group(2)][0 if m.group(1) == "USED" else 1]
        assert int(m.group(3)) == v, line
        seen[m.group(2), m.group(1)] = seen.get((m.group(2), m.group(1)), 0) + 1
assert seen == {(j, k): n for j, n in (("job-1", 12), ("job-2", 6), ("job-3", 6))
                for k in ("USED", "FREE")}, seen
EOF
finish
