#!/usr/bin/env bash
# scheduler.queue kueue through the CLI: the shipped manifests validate and
# run, the dump of a manifest scenario is a fixed point (manifest objects
# are not dumped), manifest errors name the manifest's FILE:LINE:COL with
# exit status 2, borrowing cuts team-a's wait, and an autoscaled group grows
# only for the workloads Kueue admits.
source "$(dirname "$0")/lib/common.bash"

cp -r "$SRC/scenarios/kueue" "$SRC/scenarios/kueue-philly.yaml" .
expect_exit 0 "$FLEETSIM" validate kueue-philly.yaml
expect_out 'ok'
expect_exit 0 "$FLEETSIM" validate --dump kueue-philly.yaml
cp out.txt d1.yaml
expect_exit 0 "$FLEETSIM" validate --dump d1.yaml
cmp -s out.txt d1.yaml && ok || bad "the dump of a manifest scenario is not a fixed point"
grep -q 'name: team-a' d1.yaml && bad "manifest ClusterQueues were dumped" || ok

expect_exit 0 "$FLEETSIM" run kueue-philly.yaml -o b.h5 --set horizon=10d
expect_out '0 unfinished'
expect_exit 0 "$FLEETSIM" run kueue-philly.yaml -o n.h5 --set horizon=10d \
    --set scheduler.kueue.manifests=kueue/research-no-borrow.yaml
if command -v h5dump >/dev/null; then
    wa() { h5dump -d /tenants -y -w 300 "$1" | sed -n '/DATA {/,/^   }/p' | tr -d ' \n' |
           sed 's/.*"team-a",[0-9]*,[0-9]*,[0-9.e+]*,\([0-9.e+-]*\)}.*/\1/'; }
    awk -v b="$(wa b.h5)" -v n="$(wa n.h5)" 'BEGIN { exit !(b * 5 < n) }' && ok ||
        bad "borrowing did not cut team-a's mean wait 5x: $(wa b.h5) vs $(wa n.h5)"
fi

# Kueue in front of the autoscaler (scenarios/kueue-autoscale.yaml): only
# admitted workloads have pods, so a group that may grow to 64 nodes stays
# near what 256 GPUs of quota use (peak 44 nodes, 279 added in 30 days);
# counting every queued job as a pending pod brought up 64 and added 45,628.
cp "$SRC/scenarios/kueue-autoscale.yaml" .
expect_exit 0 "$FLEETSIM" run kueue-autoscale.yaml -o ka.h5 -q
/usr/bin/python3 - ka.h5 > kapy.txt 2>&1 <<'EOF' && ok || bad "kueue-autoscale: $(cat kapy.txt)"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
last, tl = f["nodegroups"][-1], f["timeline"][:]
peak = max(tl["nodes_autoscaled"] + tl["nodes_provisioning"])
assert peak <= 48 and last["nodes_added"] < 1000, (peak, last["nodes_added"])
EOF

sed 's/queueingStrategy: BestEffortFIFO/queueingStrategy: Fifo/' kueue/research-cohort.yaml > kueue/bad.yaml
expect_exit 2 "$FLEETSIM" validate kueue-philly.yaml --set scheduler.kueue.manifests=kueue/bad.yaml
expect_err 'kueue/bad.yaml:19:21: ClusterQueue .team-a.: spec.queueingStrategy: .Fifo.'
finish
