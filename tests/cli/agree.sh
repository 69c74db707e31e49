#!/usr/bin/env bash
# validate and run agree: every rule a policy enforces when it is created
# (its check hook, models/fs_policy.h) is reported by `validate` at the
# key's FILE:LINE:COL, exit 2, and `run` refuses the file the same way
# before anything is written.
source "$(dirname "$0")/lib/common.bash"

cat > las.yaml <<'YAML'
name: las-easy
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}
scheduler: {queue: las, backfill: easy}
YAML
# backfill x preemption (the LAS order preempts)
expect_exit 2 "$FLEETSIM" validate las.yaml
expect_err "^las.yaml:6:35: scheduler: backfill 'easy' cannot be combined with preemption"
expect_exit 2 "$FLEETSIM" run las.yaml -o las.h5
expect_err "^las.yaml:6:35: scheduler: backfill 'easy'"
expect_no_file las.h5
# the same for FIFO with preemption: order, and conservative backfill
expect_exit 2 "$FLEETSIM" validate las.yaml --set scheduler.queue=fifo --set scheduler.preemption=order
expect_err "queue 'fifo' preempts"
expect_exit 2 "$FLEETSIM" validate las.yaml --set scheduler.backfill=conservative
expect_err "backfill 'conservative' cannot be combined"
# preemption: none makes it valid
expect_exit 0 "$FLEETSIM" validate las.yaml --set scheduler.preemption=none
# the LAS thresholds, parsed as the order parses them
cat > thr.yaml <<'YAML'
name: las-thresholds
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}
scheduler:
  queue: las
  tiresias: {thresholds: "7200,3600"}
YAML
expect_exit 2 "$FLEETSIM" validate thr.yaml
expect_err '^thr.yaml:8:[0-9]+: scheduler.tiresias.thresholds: expected increasing positive'
expect_exit 2 "$FLEETSIM" run thr.yaml -o thr.h5
expect_no_file thr.h5
# Volcano: a tenant in two queues
cat > vc.yaml <<'YAML'
name: volcano-tenant-twice
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}
scheduler:
  queue: volcano
  volcano:
    queues: [{name: a, tenants: x}, {name: b, tenants: x}]
YAML
expect_exit 2 "$FLEETSIM" validate vc.yaml
expect_err "^vc.yaml:9:[0-9]+: scheduler.volcano.queues: tenant 'x' is in queues 'a' and 'b'"
expect_exit 2 "$FLEETSIM" run vc.yaml -o vc.h5
expect_no_file vc.h5
# a Kueue quota that a double cannot hold exactly (2^54 GPUs) is refused at
# its FILE:LINE:COL, in the scenario and in a manifest (it used to pass and
# admit nothing)
cat > kbig.yaml <<'YAML'
name: kueue-big-quota
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}
scheduler:
  queue: kueue
  kueue:
    cluster_queues:
      - {name: a, quotas: [{flavor: p, nominal: 18014398509481984}]}
YAML
expect_exit 2 "$FLEETSIM" validate kbig.yaml
expect_err '^kbig.yaml:10:49: scheduler.kueue.cluster_queues.0.quotas.0.nominal: 18014398509481984 is out of range'
expect_exit 0 "$FLEETSIM" validate kbig.yaml --set 'scheduler.kueue.cluster_queues.0.quotas.0.nominal=9007199254740'
cat > kbig-manifest.yaml <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: a
spec:
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: p
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 18014398509481984
YAML
cat > kbig2.yaml <<'YAML'
name: kueue-big-quota-manifest
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}
scheduler:
  queue: kueue
  kueue: {manifests: kbig-manifest.yaml}
YAML
expect_exit 2 "$FLEETSIM" validate kbig2.yaml
expect_err "kbig-manifest.yaml:12:23: ClusterQueue 'a': nominalQuota: '18014398509481984' is more than the largest quota"
finish
