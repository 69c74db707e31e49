#!/usr/bin/env bash
# Cluster Autoscaler keys (docs/models.md "Cluster autoscaling"): bad expanders, priority maps
# and failure probabilities are refused with FILE:LINE:COL and exit 2 by validate and run, and
# run writes nothing; a good file with every key runs.
source "$(dirname "$0")/lib/common.bash"

write() { # EXPANDER PRIORITIES FAILURE
    cat > ca.yaml <<Y
name: ca
horizon: 2h
cluster:
  pools: [{name: a, gpu: H100, nodes: 4, gpus_per_node: 8}, {name: b, gpu: H100, nodes: 4, gpus_per_node: 4}]
  autoscale:
    node_groups: [{pool: a, provision_failure: $3}, {pool: b}]
    expander: $1
    priorities: $2
    max_node_provision_time: 5m
workload: {synthetic: {arrivals: {rate: 4/h}, gpus: {4: 1}, duration: {dist: constant, value: 1h}}}
Y
}

write cheapest "{a: 1}" 0
for cmd in validate "run -o out.h5"; do
    expect_exit 2 "$FLEETSIM" $cmd ca.yaml
    expect_err "^ca.yaml:7:15: cluster.autoscale.expander: 'cheapest' is not one of: least-waste, random, most-pods, priority"
    expect_no_file out.h5
done
write priority "{a: 10, gpu-pool: 5}" 0
for cmd in validate "run -o out.h5"; do
    expect_exit 2 "$FLEETSIM" $cmd ca.yaml
    expect_err "^ca.yaml:8:35: cluster.autoscale.priorities: 'gpu-pool' is not a node group"
    expect_no_file out.h5
done
write priority "{a: ten}" 0
expect_exit 2 "$FLEETSIM" validate ca.yaml
expect_err "^ca.yaml:8:.*cluster.autoscale.priorities.a: expected an integer priority, found 'ten'"
write random "{}" 1.5
for cmd in validate "run -o out.h5"; do
    expect_exit 2 "$FLEETSIM" $cmd ca.yaml
    expect_err "^ca.yaml:6:.*node_groups.0.provision_failure: 1.5 is out of range \(expected a probability from 0 to 1\)"
    expect_no_file out.h5
done
write random "{}" -0.2
expect_exit 2 "$FLEETSIM" validate ca.yaml
expect_err "^ca.yaml:6:.*provision_failure"
write random "{}" 0
expect_exit 2 "$FLEETSIM" validate ca.yaml --set cluster.autoscale.expander=fewest
expect_err "cluster.autoscale.expander: 'fewest' is not one of"

# every key given: runs, and a's failed scale-ups leave the work to b
write priority "{a: 10, b: 1}" 1
expect_exit 0 "$FLEETSIM" run ca.yaml -q -o good.h5
if [ -s good.h5 ]; then ok; else bad "good.h5 not written"; fi
finish
