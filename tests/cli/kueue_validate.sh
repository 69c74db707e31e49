#!/usr/bin/env bash
# fleetsim validate's warning about jobs no Kueue queue can ever admit judges
# every resource a job asks (issue 40), per ClusterQueue and resource: a pod's
# CPU and memory against cpu and memory quotas, and a gang's pods (one per
# node) against a pods quota.  Judging GPUs alone warned about none of them.
# The run's drain diagnosis gives the same reason.
source "$(dirname "$0")/lib/common.bash"

# openb pods (one node each; 5-column list: no tenant, so default_queue)
cat > ob.csv <<EOF
name,cpu_milli,memory_mib,num_gpu,gpu_milli
openb-pod-0001,4000,8192,1,1000
openb-pod-0002,12000,8192,1,1000
openb-pod-0003,2000,65536,1,1000
EOF
cat > kcpu.yaml <<EOF
name: kueue-cpu-memory-quota
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  trace: {path: ob.csv, format: openb, default_duration: 1h}
scheduler:
  queue: kueue
  kueue:
    default_queue: a
    cluster_queues:
      - name: a
        quotas: [{flavor: p, nominal: 8}, {flavor: p, resource: cpu, nominal: 8},
                 {flavor: p, resource: memory, nominal: 32768}]
EOF
expect_exit 0 "$FLEETSIM" validate kcpu.yaml
expect_err "kcpu.yaml: warning: no queue or quota can ever admit 1 job of the trace \(2\): ClusterQueue 'a' can hold at most 8 cores in any flavor \(its nominal quota and what its cohort may lend\), less than the 12 cores asked"
expect_err "kcpu.yaml: warning: no queue or quota can ever admit 1 job of the trace \(3\): ClusterQueue 'a' can hold at most 32768 MiB of memory in any flavor \(its nominal quota and what its cohort may lend\), less than the 65536 MiB of memory asked"
grep -q '(1)' err.txt && bad "pod 1 fits its quota but was warned about" || ok
# a cohort that lends 4 more cores: pod 2 (12 cores) fits, pod 3 still not
sed -e 's/- name: a/- name: a\n        cohort: co/' kcpu.yaml > kco.yaml
cat >> kco.yaml <<EOF
      - name: b
        cohort: co
        quotas: [{flavor: p, nominal: 0}, {flavor: p, resource: cpu, nominal: 4},
                 {flavor: p, resource: memory, nominal: 0}]
EOF
expect_exit 0 "$FLEETSIM" validate kco.yaml
grep -q 'trace (2)' err.txt && bad "pod 2 fits a + b's cores but was warned about: $(cat err.txt)" || ok
expect_err "kco.yaml: warning: no queue or quota can ever admit 1 job of the trace \(3\)"
# the run stops on pods 2 and 3, naming the same reasons
expect_exit 1 timeout 20 "$FLEETSIM" run kcpu.yaml -o kcpu.h5 -q
expect_err "ClusterQueue 'a' can hold at most 8 cores in any flavor"

# a 16-GPU gang on 8-GPU nodes is 2 pods; the queue holds 1
pods_quota() {  # pods_quota FILE NAME WORKLOAD: 16 GPUs and 1 pod of quota for tenant a
    cat > "$1" <<EOF
name: $2
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
$3
scheduler:
  queue: kueue
  kueue:
    cluster_queues:
      - name: a
        tenants: a
        quotas: [{flavor: p, nominal: 16}, {flavor: p, resource: pods, nominal: 1}]
EOF
}
printf 'id,submit,gpus,duration,tenant\n1,0,8,600,a\n2,0,16,600,a\n' > g.csv
pods_quota kpods.yaml kueue-pods-quota '  trace: {path: g.csv}'
expect_exit 0 "$FLEETSIM" validate kpods.yaml
expect_err "kpods.yaml: warning: no queue or quota can ever admit 1 job of the trace \(2\): ClusterQueue 'a' can hold at most 1 pods in any flavor \(its nominal quota and what its cohort may lend\), less than the 2 pods asked"
grep -q 'trace (1)' err.txt && bad "the 8-GPU job is one pod but was warned about" || ok

# a synthetic mix is judged by its GPU counts' pods too
pods_quota ksyn.yaml kueue-pods-synthetic '  synthetic:
    arrivals: {rate: 1/h}
    gpus: {8: 0.5, 16: 0.5}
    duration: {dist: constant, value: 1h}
    tenants: {a: 1}'
expect_exit 0 "$FLEETSIM" validate ksyn.yaml
expect_err "warning: no queue or quota can ever admit 16-GPU jobs of tenant 'a': ClusterQueue 'a' can hold at most 1 pods"
grep -q '8-GPU jobs' err.txt && bad "8-GPU jobs are one pod but were warned about" || ok
finish
