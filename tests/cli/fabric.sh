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
finish
