#!/usr/bin/env bash
# Issue 36: the fabric (cluster.fabric, docs/models.md "Fabric").  Bad input
# is refused at FILE:LINE:COL with exit 2 and nothing written; a run with
# the fabric writes /summary's network figures; the same scenario with the
# fabric off runs as fast as the trace says (no GPU-s lost).
source "$(dirname "$0")/lib/common.bash"

# scen OVERSUB CLASS EXTRA: a scenario without its kind
scen() {
    cat <<EOF
name: fabric-cli
seed: 3
horizon: 12h
until: drain
workload: {synthetic: {arrivals: {rate: 4/h}, gpus: {24: 0.5, 16: 0.5}, duration: {dist: exponential, mean: 2h}}}
cluster:
  pools: [{name: p, gpu: H100, nodes: 16, gpus_per_node: 8}]
  fabric:
    oversubscription: $1
    traffic:
      - {class: $2, params: 7e9, compute: 1s}
$3
EOF
}

# build OVERSUB CLASS EXTRA FILE: with `kind: roce_400g` right after `fabric:`
# (lines: 9 kind, 10 oversubscription, 12 the traffic row, EXTRA from 13)
build() {
    scen "$1" "$2" "$3" | sed 's/^  fabric:$/  fabric:\n    kind: roce_400g/' > "$4"
}

build 2 0 "" good.yaml
expect_exit 0 "$FLEETSIM" validate good.yaml
expect_exit 0 "$FLEETSIM" run good.yaml -o good.h5 -q
/usr/bin/python3 - good.h5 > py.txt 2>&1 <<'EOF' && ok || bad "fabric figures: $(cat py.txt)"
import sys, h5py
s = h5py.File(sys.argv[1], "r")["summary"]
assert s["gpu_s_network"][0] > 0, s["gpu_s_network"][0]
assert s["fabric_recomputes"][0] > 0
assert s["fabric_jobs_touched"][0] >= s["fabric_recomputes"][0] // 2
EOF
expect_exit 0 "$FLEETSIM" run good.yaml -o off.h5 -q --set cluster.fabric.kind=off
/usr/bin/python3 - off.h5 > py.txt 2>&1 <<'EOF' && ok || bad "fabric off: $(cat py.txt)"
import sys, h5py
s = h5py.File(sys.argv[1], "r")["summary"]
assert s["gpu_s_network"][0] == 0 and s["fabric_recomputes"][0] == 0
EOF

# an oversubscription below 1 (line 10: the kind line comes first)
build 0.5 0 "" low.yaml
expect_exit 2 "$FLEETSIM" run low.yaml -o low.h5
expect_err '^low.yaml:10:23: .*oversubscription'
expect_no_file low.h5
# capacities that do not fit the shape: 16 down ports over 3
build 3 0 "" shape.yaml
expect_exit 2 "$FLEETSIM" run shape.yaml -o shape.h5
expect_err '^shape.yaml:10:23: .*whole uplink ports'
expect_no_file shape.h5
# traffic for a class no job has
build 2 4 "" cls.yaml
expect_exit 2 "$FLEETSIM" validate cls.yaml
expect_err '^cls.yaml:12:17: .*no job has class 4'
# span_speed and the fabric both set
build 2 0 "  span_speed: [{class: 0, leaves: 0.8}]" both.yaml
expect_exit 2 "$FLEETSIM" run both.yaml -o both.h5
expect_err '^both.yaml:13:[0-9]+: cluster.span_speed: .*not both'
expect_no_file both.h5
# an unknown kind
build 2 0 "" kind.yaml
sed -i 's/kind: roce_400g/kind: ethernet/' kind.yaml
expect_exit 2 "$FLEETSIM" validate kind.yaml
expect_err '^kind.yaml:9:11: .*ib_ndr'

# /links and /jobs_network (docs/results.md): read back; a job's bytes add
# up on the NICs; the GPU-s lost are the jobs' slowdowns times their GPUs;
# no link carries more than it can; the fabric off writes neither table.
/usr/bin/python3 - good.h5 > py.txt 2>&1 <<'EOF' && ok || bad "links read back: $(cat py.txt)"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
L, J, jobs, s = f["links"][:], f["jobs_network"][:], f["jobs"][:], f["summary"][0]
nic = L[L["tier"] == b"nic"]
up = L[L["tier"] == b"leaf_uplink"]
assert len(nic) == 16 and len(up) == len(L) - 16, len(L)
assert np.all(nic["node"] == np.arange(16)) and np.all(up["node"] == -1)
assert np.all(L["peak_util"] <= 1 + 1e-9), L["peak_util"].max()
assert np.all(L["mean_util"] <= L["peak_util"] + 1e-12)
assert np.all(L["saturated_s"] <= L["busy_s"] + 1e-6)
assert up["bytes"].sum() > 0 and J["bytes_sent"].sum() > 0
assert abs(nic["bytes"].sum() - J["bytes_sent"].sum()) <= 1e-9 * nic["bytes"].sum()
g = dict(zip(jobs["id"], jobs["gpus"]))
lost = sum(g[i] * x for i, x in zip(J["id"], J["network_slow_s"]))
assert abs(lost - s["gpu_s_network"]) <= 1e-9 * s["gpu_s_network"], (lost, s["gpu_s_network"])
assert len(set(J["id"])) == len(J) and set(J["id"]) <= set(g)
ok = J["net_run_s"] > 0
assert np.all((J["comm_share"][ok] > 0) & (J["comm_share"][ok] < 1))
assert np.all(L["failures"] == 0) and np.all(L["port_down_s"] == 0)
EOF
/usr/bin/python3 - off.h5 > py.txt 2>&1 <<'EOF' && ok || bad "fabric off writes no /links: $(cat py.txt)"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
assert "links" not in f and "jobs_network" not in f, list(f)
EOF
# the readers take a file with the fabric's tables
expect_exit 0 "$FLEETSIM" report good.h5 -o good.html
expect_exit 0 "$FLEETSIM" compare good.h5 off.h5

# link failures (docs/failures.md "Fabric links and switches"): every
# leaf-spine link fails after exponential(10h) and is repaired after
# exponential(2h), so a port is up MTTF/(MTTF+MTTR) = 5/6 of the time;
# 60 days of the uplink ports of 8 leaf groups: within 2%.
build 2 0 "    failures:
      - {unit: leaf_uplink, tbf: {dist: exponential, mean: 10h}, repair: {dist: exponential, mean: 2h}}" fail.yaml
sed -i 's/^horizon: 12h/horizon: 60d/; s/^until: drain/until: horizon/; s#rate: 4/h#rate: 1/h#' fail.yaml
expect_exit 0 "$FLEETSIM" run fail.yaml -o fail.h5 -q
/usr/bin/python3 - fail.h5 > py.txt 2>&1 <<'EOF' && ok || bad "link availability: $(cat py.txt)"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
L, T = f["links"][:], f["summary"]["end_time"][0]
up = L[L["tier"] == b"leaf_uplink"]
avail = 1 - up["port_down_s"].sum() / (up["ports"].sum() * T)
assert abs(avail - 5 / 6) < 0.02 * 5 / 6, avail
assert up["failures"].sum() > 100 and np.all(up["degraded_s"] > 0)
nic = L[L["tier"] == b"nic"]
assert np.all(nic["failures"] == 0) and np.all(nic["port_down_s"] == 0)
assert np.all(L["peak_util"] <= 1 + 1e-9)
print("availability %.4f (5/6 = %.4f)" % (avail, 5 / 6))
EOF
# the same with links that degrade to half instead: no port is down, the
# bundles run below their capacity, and jobs lose more to the network
# than on the fabric as built, less than with the ports down
sed 's/repair: {dist: exponential, mean: 2h}}/repair: {dist: exponential, mean: 2h}, effect: degrade, capacity: 0.5}/' fail.yaml > degr.yaml
expect_exit 0 "$FLEETSIM" run degr.yaml -o degr.h5 -q
sed '/failures:/,+1d' fail.yaml > nofail.yaml
expect_exit 0 "$FLEETSIM" run nofail.yaml -o nofail.h5 -q
/usr/bin/python3 - degr.h5 nofail.h5 fail.h5 > py.txt 2>&1 <<'EOF' && ok || bad "degraded links: $(cat py.txt)"
import sys, h5py
d, n, x = (h5py.File(p, "r") for p in sys.argv[1:4])
L = d["links"][:]
up = L[L["tier"] == b"leaf_uplink"]
assert up["port_down_s"].sum() == 0 and up["degraded_s"].min() > 0 and up["failures"].sum() > 100
sd, sn, sx = (h["summary"]["gpu_s_network"][0] for h in (d, n, x))
assert sn < sd < sx, (sn, sd, sx)
EOF
# a failure process for a pool that does not exist
build 2 0 "    failures:
      - {unit: spine, pool: nope}" nopool.yaml
expect_exit 2 "$FLEETSIM" run nopool.yaml -o nopool.h5
expect_err '^nopool.yaml:14:[0-9]+: .*no pool is named "nope"'
expect_no_file nopool.h5
finish
