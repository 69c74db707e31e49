#!/usr/bin/env bash
# Issue 37: what serves and queues, under the exporters' own names
# (analysis/fs_metrics_queues.c): vLLM's per replica from /requests, Kueue's per
# ClusterQueue (a Kueue run's own, from its stored scenario) and per LocalQueue
# (its manifest's, else the tenant's) from /jobs, the cost and carbon rates per pool from /cost.  The
# families, label values and bucket boundaries are vLLM's and Kueue's; a stock
# Prometheus on the blocks answers exactly what the results file says at every
# sample instant.  The Prometheus part is skipped (SKIP on stderr) where
# prometheus is not installed (CI: .ci/install-deps installs it).
source "$(dirname "$0")/lib/common.bash"

cat > q.yaml <<'EOF'
name: queues
seed: 4
horizon: 3h
until: horizon
cluster:
  pools: [{name: h100, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic:
    arrivals: {rate: 12/h}
    gpus: {1: 0.5, 4: 0.3, 8: 0.2}
    duration: {dist: exponential, mean: 1h}
    tenants: {vision: 0.6, nlp: 0.4}
services:
  - name: chat
    min_replicas: 2
    max_replicas: 2
    engine: {scheduler: v1, max_num_batched_tokens: 2048}
    requests: {rate: 3/s, input: {dist: constant, value: 600}, output: {dist: exponential, mean: 120}}
    performance: [{gpu: H100, prefill: 10000, decode: 2400, max_batch: 16, kv_tokens: 20000}]
output: {gpu_intervals: true, timeline_interval: 1m, requests: true}
EOF
expect_exit 0 "$FLEETSIM" run q.yaml -o q.h5 -q

# ---- the families, their types and the exporters' bucket boundaries ------------------------
# (a counter family is named with its _total, as its samples, which promtool's linter and its
# OpenMetrics backfill both take)
expect_exit 0 "$FLEETSIM" metrics q.h5 -o q.om
for fam in 'vllm:num_requests_running gauge' 'vllm:num_requests_waiting gauge' \
    'vllm:kv_cache_usage_perc gauge' 'vllm:time_to_first_token_seconds histogram' \
    'vllm:request_time_per_output_token_seconds histogram' \
    'vllm:e2e_request_latency_seconds histogram' 'vllm:request_queue_time_seconds histogram' \
    'vllm:prompt_tokens_total counter' 'vllm:generation_tokens_total counter' \
    'kueue_pending_workloads gauge' 'kueue_admitted_workloads_total counter' \
    'kueue_admission_wait_time_seconds histogram' \
    'kueue_local_queue_pending_workloads gauge' 'kueue_local_queue_admitted_workloads_total counter' \
    'kueue_local_queue_admission_wait_time_seconds histogram' 'fleetsim_cost_dollars_per_hour gauge' \
    'fleetsim_carbon_kg_per_hour gauge'; do
    grep -qx "# TYPE $fam" q.om && ok || bad "no '# TYPE $fam'"
done
les() { grep "^$1_bucket{" q.om | grep -o ',le="[^"]*"' | sort -u | sed 's/,le="//; s/"//' | sort -g | paste -sd' '; }
[ "$(les vllm:time_to_first_token_seconds)" = \
  "0.001 0.005 0.01 0.02 0.04 0.06 0.08 0.1 0.25 0.5 0.75 1.0 2.5 5.0 7.5 10.0 20.0 40.0 80.0 160.0 640.0 2560.0 +Inf" ] &&
    ok || bad "vLLM's TTFT buckets: $(les vllm:time_to_first_token_seconds)"
[ "$(les vllm:e2e_request_latency_seconds)" = \
  "0.3 0.5 0.8 1.0 1.5 2.0 2.5 5.0 10.0 15.0 20.0 30.0 40.0 50.0 60.0 120.0 240.0 480.0 960.0 1920.0 7680.0 +Inf" ] &&
    ok || bad "vLLM's latency buckets: $(les vllm:e2e_request_latency_seconds)"
[ "$(les vllm:request_time_per_output_token_seconds)" = \
  "0.01 0.025 0.05 0.075 0.1 0.15 0.2 0.3 0.4 0.5 0.75 1.0 2.5 5.0 7.5 10.0 20.0 40.0 80.0 +Inf" ] &&
    ok || bad "vLLM's TPOT buckets: $(les vllm:request_time_per_output_token_seconds)"
[ "$(les kueue_admission_wait_time_seconds)" = \
  "1 2.5 5 10 20 40 80 160 320 640 1280 2560 5120 10240 20480 40960 +Inf" ] &&
    ok || bad "Kueue's wait buckets: $(les kueue_admission_wait_time_seconds)"
[ "$(les kueue_local_queue_admission_wait_time_seconds)" = "$(les kueue_admission_wait_time_seconds)" ] &&
    ok || bad "Kueue's LocalQueue wait buckets: $(les kueue_local_queue_admission_wait_time_seconds)"
grep -q '^vllm:num_requests_running{model_name="chat",engine="0",namespace="chat",pod="chat-0",instance="chat-0:8000",job="vllm"} ' q.om &&
    ok || bad "vLLM's labels: $(grep -m1 '^vllm:num_requests_running' q.om)"
grep -q '^kueue_pending_workloads{cluster_queue="vision",replica_role="leader",job="kueue",status="active"} ' q.om &&
    ok || bad "Kueue's labels: $(grep -m1 '^kueue_pending_workloads' q.om)"
# per tenant: its LocalQueue, named after it in its namespace (the DCGM pods' namespace)
grep -q '^kueue_local_queue_pending_workloads{name="nlp",namespace="nlp",replica_role="leader",job="kueue",status="active"} ' q.om &&
    ok || bad "Kueue's LocalQueue labels: $(grep -m1 '^kueue_local_queue_pending_workloads' q.om)"
grep -q '^kueue_local_queue_admission_wait_time_seconds_bucket{name="vision",namespace="vision",replica_role="leader",job="kueue",le="+Inf"} ' q.om &&
    ok || bad "Kueue's LocalQueue histogram labels: $(grep -m1 '^kueue_local_queue_admission_wait_time_seconds_bucket' q.om)"
# priority_class: none without a manifest's WorkloadPriorityClass (Kueue's "" for a workload
# without one, which Prometheus stores as no label; classes: the trace run below)
grep -q priority_class q.om && bad "priority_class without classes: $(grep -m1 priority_class q.om)" || ok
# --families selects them by the name queried
expect_exit 0 "$FLEETSIM" metrics q.h5 -o only.om --families kueue_admitted_workloads_total,vllm:prompt_tokens_total
[ "$(grep '^# TYPE' only.om | paste -sd' ')" = "# TYPE vllm:prompt_tokens_total counter # TYPE kueue_admitted_workloads_total counter" ] &&
    ok || bad "--families: $(grep '^# TYPE' only.om | paste -sd' ')"
# a run without services or cost: no vLLM or cost series, and no error
expect_exit 0 "$FLEETSIM" run q.yaml -o plain.h5 -q --set services=[]
expect_exit 0 "$FLEETSIM" metrics plain.h5 -o plain.om
grep -q "^vllm:" plain.om && bad "vLLM series without /requests" || ok
# ---- under scheduler.queue kueue: the run's own ClusterQueues, and a LocalQueue per tenant ----
# (research serves vision and nlp through its LocalQueues; ops is the CQ of its tenant's name)
cat > kq.yaml <<'EOF'
name: kqueues
seed: 4
horizon: 3h
until: horizon
cluster:
  pools: [{name: h100, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic:
    arrivals: {rate: 12/h}
    gpus: {1: 0.5, 4: 0.3, 8: 0.2}
    duration: {dist: exponential, mean: 1h}
    tenants: {vision: 0.4, nlp: 0.3, ops: 0.3}
scheduler:
  queue: kueue
  kueue:
    cluster_queues:
      - {name: research, cohort: all, quotas: [{flavor: h100, nominal: 8}], tenants: "vision, nlp"}
      - {name: ops, cohort: all, quotas: [{flavor: h100, nominal: 8}]}
output: {gpu_intervals: true, timeline_interval: 1m}
EOF
expect_exit 0 "$FLEETSIM" run kq.yaml -o kq.h5 -q
expect_exit 0 "$FLEETSIM" metrics kq.h5 -o kq.om --families kueue_pending_workloads,kueue_admitted_workloads_total,kueue_admission_wait_time_seconds,kueue_local_queue_pending_workloads,kueue_local_queue_admitted_workloads_total
/usr/bin/python3 - kq.h5 kq.om > kqpy.txt 2>&1 <<'EOF' && ok || bad "Kueue per ClusterQueue and LocalQueue: $(cat kqpy.txt)"
import math, re, sys
import h5py
f = h5py.File(sys.argv[1], "r")
jobs = f["jobs"][:]
names = {int(r["tenant"]): r["name"].decode() for r in f["tenants"][:]}
cq_of = {"vision": "research", "nlp": "research", "ops": "ops"}
got = {}
for line in open(sys.argv[2]):
    m = re.match(r'([a-z_]+)\{(.*)\} (\S+) (\d+)$', line)
    if m:
        lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        if "le" in lab:
            continue
        key = lab.get("cluster_queue") or lab["name"]
        t = int(m.group(4))
        t = t // 1000 if t > 10**11 else t
        got[(m.group(1), key, t - 1767225600)] = float(m.group(3))
assert {k[1] for k in got if k[0] == "kueue_pending_workloads"} == {"research", "ops"}, got.keys()
assert {k[1] for k in got if k[0] == "kueue_local_queue_pending_workloads"} == {"vision", "nlp", "ops"}
ts = sorted({k[2] for k in got})
assert len(ts) > 100, len(ts)
for t in ts:
    want = {}
    for j in jobs:
        tn = names[int(j["tenant"])]
        out = j["start"] if not math.isnan(j["start"]) else j["end"]
        for fam, q in (("kueue_pending_workloads", cq_of[tn]), ("kueue_local_queue_pending_workloads", tn)):
            want[(fam, q, t)] = want.get((fam, q, t), 0) + (j["submit"] <= t and not (out <= t))
        for fam, q in (("kueue_admitted_workloads_total", cq_of[tn]), ("kueue_local_queue_admitted_workloads_total", tn)):
            want[(fam, q, t)] = want.get((fam, q, t), 0) + (j["start"] <= t)
        k = ("kueue_admission_wait_time_seconds_count", cq_of[tn], t)
        want[k] = want.get(k, 0) + (j["start"] <= t)
    for k, v in want.items():
        assert got.get(k, 0) == v, (k, got.get(k), v)
assert sum(1 for j in jobs if names[int(j["tenant"])] == "ops") and len(jobs) > 20, len(jobs)
print("checked", len(ts), "instants")
EOF
cat kqpy.txt
# through a manifest and default_queue: every tenant in the one ClusterQueue; once the manifest
# is gone its ClusterQueues cannot be named: exit 2, nothing written (without them: written)
cat > kq-manifest.yaml <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: research
spec:
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: h100
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 16
EOF
sed '/^scheduler:/,$d' kq.yaml > kqm.yaml
printf 'scheduler:\n  queue: kueue\n  kueue: {manifests: kq-manifest.yaml, default_queue: research}\noutput: {gpu_intervals: true, timeline_interval: 1m}\n' >> kqm.yaml
expect_exit 0 "$FLEETSIM" run kqm.yaml -o kqm.h5 -q
expect_exit 0 "$FLEETSIM" metrics kqm.h5 -o kqm.om --families kueue_pending_workloads
[ "$(grep -o 'cluster_queue="[^"]*"' kqm.om | sort -u | paste -sd' ')" = 'cluster_queue="research"' ] &&
    ok || bad "default_queue: $(grep -o 'cluster_queue="[^"]*"' kqm.om | sort -u | paste -sd' ')"
rm kq-manifest.yaml
expect_exit 2 "$FLEETSIM" metrics kqm.h5 -o kqm2.om
expect_err "kqm.h5: the run's Kueue ClusterQueues cannot be read from its stored scenario \(.*kq-manifest.yaml"
[ -e kqm2.om ] && bad "a refused export left its file" || ok
# (the LocalQueue families too: their names are the manifest's)
expect_exit 2 "$FLEETSIM" metrics kqm.h5 -o kqm3.om --families kueue_local_queue_pending_workloads,DCGM_FI_DEV_GPU_UTIL
expect_err "kqm.h5: the run's Kueue ClusterQueues cannot be read from its stored scenario \(.*kq-manifest.yaml.*--families without the kueue_ families"
expect_exit 0 "$FLEETSIM" metrics kqm.h5 -o kqm3.om --families vllm:num_requests_running,DCGM_FI_DEV_GPU_UTIL

# ---- LocalQueues of a manifest: their own names and namespaces ------------------------------
# (the LocalQueue nlp in namespace vision serves the tenants vision and nlp (its namespace and
# its name), batch in namespace ops the tenant ops; misc, in no LocalQueue, reaches ops through
# default_queue and keeps a LocalQueue named after it)
cat > lq-manifest.yaml <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: research}
spec:
  cohort: all
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: ops}
spec:
  cohort: all
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: nlp, namespace: vision}
spec: {clusterQueue: research}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: batch, namespace: ops}
spec: {clusterQueue: ops}
EOF
sed '/^scheduler:/,$d; s/tenants: {vision: 0.4, nlp: 0.3, ops: 0.3}/tenants: {vision: 0.3, nlp: 0.3, ops: 0.2, misc: 0.2}/' kq.yaml > lq.yaml
printf 'scheduler:\n  queue: kueue\n  kueue: {manifests: lq-manifest.yaml, default_queue: ops}\noutput: {gpu_intervals: true, timeline_interval: 1m}\n' >> lq.yaml
expect_exit 0 "$FLEETSIM" run lq.yaml -o lq.h5 -q
expect_exit 0 "$FLEETSIM" metrics lq.h5 -o lq.om --families kueue_pending_workloads,kueue_local_queue_pending_workloads,kueue_local_queue_admitted_workloads_total,kueue_local_queue_admission_wait_time_seconds
/usr/bin/python3 - lq.h5 lq.om > lqpy.txt 2>&1 <<'EOF' && ok || bad "Kueue LocalQueues of a manifest: $(cat lqpy.txt)"
import math, re, sys
import h5py
f = h5py.File(sys.argv[1], "r")
jobs = f["jobs"][:]
names = {int(r["tenant"]): r["name"].decode() for r in f["tenants"][:]}
lq_of = {"vision": ("nlp", "vision"), "nlp": ("nlp", "vision"), "ops": ("batch", "ops"),
         "misc": ("misc", "misc")}
cq_of = {"vision": "research", "nlp": "research", "ops": "ops", "misc": "ops"}
got, pc = {}, set()
for line in open(sys.argv[2]):
    m = re.match(r'([a-z_]+)\{(.*)\} (\S+) (\d+)$', line)
    if not m:
        continue
    lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
    if "le" in lab and lab["le"] != "+Inf":
        continue
    if m.group(1).startswith("kueue_local_queue_admi"):
        pc.add(lab.get("priority_class", ""))
    key = lab.get("cluster_queue") or (lab["name"], lab["namespace"])
    got[(m.group(1), key, int(m.group(4)) - 1767225600)] = float(m.group(3))
assert {k[1] for k in got if k[0] == "kueue_local_queue_pending_workloads"} == set(lq_of.values()), got.keys()
assert {k[1] for k in got if k[0] == "kueue_pending_workloads"} == {"research", "ops"}
assert pc == {""}, pc
ts = sorted({k[2] for k in got})
assert len(ts) > 100, len(ts)
for t in ts:
    want = {}
    for j in jobs:
        tn = names[int(j["tenant"])]
        out = j["start"] if not math.isnan(j["start"]) else j["end"]
        for fam, q in (("kueue_pending_workloads", cq_of[tn]), ("kueue_local_queue_pending_workloads", lq_of[tn])):
            want[(fam, q, t)] = want.get((fam, q, t), 0) + (j["submit"] <= t and not (out <= t))
        for fam in ("kueue_local_queue_admitted_workloads_total", "kueue_local_queue_admission_wait_time_seconds_bucket"):
            want[(fam, lq_of[tn], t)] = want.get((fam, lq_of[tn], t), 0) + (j["start"] <= t)
    for k, v in want.items():
        assert got.get(k, 0) == v, (k, got.get(k), v)
n = {tn: sum(1 for j in jobs if names[int(j["tenant"])] == tn) for tn in lq_of}
assert min(n.values()) > 0, n
print("checked", len(ts), "instants", n)
EOF
cat lqpy.txt
# the blocks: the same names, and no priority_class (no class)
expect_exit 0 "$FLEETSIM" metrics lq.h5 --tsdb lqdb -q --families kueue_local_queue_admitted_workloads_total
if command -v promtool >/dev/null; then
    promtool tsdb dump lqdb > lqdump.txt 2>&1
    grep -o '{[^}]*}' lqdump.txt | sort -u > lqseries.txt
    [ "$(grep -c . lqseries.txt)" = 3 ] && grep -q 'name="batch", namespace="ops"' lqseries.txt &&
        ! grep -q priority_class lqseries.txt && ok || bad "LocalQueue blocks: $(head -5 lqseries.txt)"
fi

# ---- priority_class: the WorkloadPriorityClass of the job's priority -------------------------
# (a trace's priority column; the manifest's classes high 1000 and low 100; priority 0 and 7
# match no class: no label, as Prometheus stores Kueue's "")
/usr/bin/python3 - > pc.csv <<'EOF'
print("id,submit,gpus,duration,tenant,priority")
for i in range(60):
    print("%d,%d,%d,%d,%s,%d" % (i + 1, i * 120, (1, 4, 8)[i % 3], 1800 + 97 * i,
                                 ("vision", "nlp", "ops", "misc")[i % 4], (0, 100, 1000, 7, 100)[i % 5]))
EOF
cat lq-manifest.yaml > pc-manifest.yaml
cat >> pc-manifest.yaml <<'EOF'
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: low}
value: 100
EOF
sed '/^workload:/,$d' lq.yaml > pc.yaml
printf 'workload:\n  trace: {path: pc.csv, format: native}\nscheduler:\n  queue: kueue\n  kueue: {manifests: pc-manifest.yaml, default_queue: ops}\noutput: {gpu_intervals: true, timeline_interval: 1m}\n' >> pc.yaml
expect_exit 0 "$FLEETSIM" run pc.yaml -o pc.h5 -q
expect_exit 0 "$FLEETSIM" metrics pc.h5 -o pc.om --families kueue_pending_workloads,kueue_admitted_workloads_total,kueue_local_queue_admitted_workloads_total,kueue_local_queue_admission_wait_time_seconds
/usr/bin/python3 - pc.h5 pc.om pc.csv > pcpy.txt 2>&1 <<'EOF' && ok || bad "priority_class: $(cat pcpy.txt)"
import csv, re, sys
import h5py
f = h5py.File(sys.argv[1], "r")
jobs = f["jobs"][:]
names = {int(r["tenant"]): r["name"].decode() for r in f["tenants"][:]}
prio = {int(r["id"]): int(r["priority"]) for r in csv.DictReader(open(sys.argv[3]))}
cls = {1000: "high", 100: "low"}
lq_of = {"vision": ("nlp", "vision"), "nlp": ("nlp", "vision"), "ops": ("batch", "ops"),
         "misc": ("misc", "misc")}
cq_of = {"vision": "research", "nlp": "research", "ops": "ops", "misc": "ops"}
got, pend_pc = {}, False
for line in open(sys.argv[2]):
    m = re.match(r'([a-z_]+)\{(.*)\} (\S+) (\d+)$', line)
    if not m:
        continue
    lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
    if "le" in lab and lab["le"] != "+Inf":
        continue
    if m.group(1) == "kueue_pending_workloads":
        pend_pc |= "priority_class" in lab
        continue
    q = lab.get("cluster_queue") or (lab["name"], lab["namespace"])
    got[(m.group(1), q, lab.get("priority_class", ""), int(m.group(4)) - 1767225600)] = float(m.group(3))
assert not pend_pc
assert {k[2] for k in got} == {"", "high", "low"}, {k[2] for k in got}
ts = sorted({k[3] for k in got})
assert len(ts) > 60, len(ts)
for t in ts:
    want = {}
    for j in jobs:
        tn, pc = names[int(j["tenant"])], cls.get(prio[int(j["id"])], "")
        for fam, q in (("kueue_admitted_workloads_total", cq_of[tn]),
                       ("kueue_local_queue_admitted_workloads_total", lq_of[tn]),
                       ("kueue_local_queue_admission_wait_time_seconds_bucket", lq_of[tn])):
            want[(fam, q, pc, t)] = want.get((fam, q, pc, t), 0) + (j["start"] <= t)
    for k, v in want.items():
        assert got.get(k, 0) == v, (k, got.get(k), v)
    extra = [k for k in got if k[3] == t and got[k] and k[0] in {w[0] for w in want} and k not in want]
    assert not extra, (t, extra)
print("checked", len(ts), "instants,", len(jobs), "jobs")
EOF
cat pcpy.txt
# Kueue's label order: the class after the queue, before replica_role; the blocks carry it too
grep -q '^kueue_admitted_workloads_total{cluster_queue="research",priority_class="high",replica_role="leader",job="kueue"} ' pc.om &&
    ok || bad "priority_class's place: $(grep -m1 '^kueue_admitted_workloads_total{' pc.om)"
expect_exit 0 "$FLEETSIM" metrics pc.h5 --tsdb pcdb -q --families kueue_local_queue_admitted_workloads_total
if command -v promtool >/dev/null; then
    promtool tsdb dump pcdb 2>&1 | grep -o 'priority_class="[a-z]*"' | sort -u | paste -sd' ' > pcdb.txt
    [ "$(cat pcdb.txt)" = 'priority_class="high" priority_class="low"' ] && ok || bad "blocks' classes: $(cat pcdb.txt)"
fi
# a class value that is no integer: exit 2 at its position
sed 's/^value: 100$/value: lots/' pc-manifest.yaml > pc-bad.yaml
sed 's/pc-manifest.yaml/pc-bad.yaml/' pc.yaml > pcb.yaml
expect_exit 0 "$FLEETSIM" run pcb.yaml -o pcb.h5 -q
expect_exit 2 "$FLEETSIM" metrics pcb.h5 -o pcb.om
expect_err "pc-bad.yaml:[0-9]+:8: WorkloadPriorityClass 'low': value: expected an integer"
[ -e pcb.om ] && bad "a refused export left its file" || ok

# promtool's linter: only its naming advice (vLLM's names have colons, DCGM's camelCase labels)
if command -v promtool >/dev/null; then
    promtool check metrics < q.om 2>&1 | grep -v -e "should not contain ':'" -e camelCase -e snake_case > lint.txt
    [ -s lint.txt ] && bad "promtool check metrics: $(head -3 lint.txt)" || ok
fi
grep -q '^kueue_pending_workloads{' plain.om && ok || bad "no Kueue series in a training run"

if ! command -v prometheus >/dev/null || ! /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
    echo "SKIP: prometheus or python3-h5py not installed (Debian packages prometheus, python3-h5py)" >&2
    finish
fi

# ---- a stock Prometheus on the blocks: every instant as the results file says ----------------
expect_exit 0 "$FLEETSIM" metrics q.h5 --tsdb db -q
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'global: {scrape_interval: 1h}\nscrape_configs: []\n' > prom.yml
prometheus --config.file=prom.yml --storage.tsdb.path=db --web.listen-address=127.0.0.1:$PORT > db.log 2>&1 &
PROM=$!
trap 'kill $PROM 2>/dev/null; wait $PROM 2>/dev/null; rm -rf "$WORK"' EXIT
for i in $(seq 1 150); do
    curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null 2>&1 && break
    sleep 0.2
done
/usr/bin/python3 - "$PORT" q.h5 > py.txt 2>&1 <<'EOF' && ok || bad "PromQL vs HDF5: $(cat py.txt)"
import json, math, sys, urllib.parse, urllib.request
import h5py, numpy as np
port, path = sys.argv[1], sys.argv[2]
ORIGIN, STEP = 1767225600, 60
f = h5py.File(path, "r")
rq, jobs, sb, cost = f["requests"][:], f["jobs"][:], f["service_buckets"][:], f["cost"][:]
names = {int(r["tenant"]): r["name"].decode() for r in f["tenants"][:]}
end = float(f["summary"][0]["end_time"])

def q(expr, t):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr, "time": ORIGIN + t}))
    d = json.load(urllib.request.urlopen(u))
    assert d["status"] == "success", d
    return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in d["data"]["result"]}

def by(expr, label, t):
    return {dict(k)[label]: v for k, v in q(expr, t).items()}

def drop0(d):
    return {k: v for k, v in d.items() if v != 0}

checked = 0
for t in range(0, int(end) + 1, STEP * 3):
    pod = lambda r: "chat-%d" % r["replica"]
    # vLLM: requests in the batch and waiting, per replica
    run, wait = {}, {}
    for r in rq:
        if r["admitted"] <= t < r["end"]:
            run[pod(r)] = run.get(pod(r), 0) + 1
        if r["arrival"] <= t < r["admitted"]:
            wait[pod(r)] = wait.get(pod(r), 0) + 1
    assert drop0(by("vllm:num_requests_running", "pod", t)) == run, (t, by("vllm:num_requests_running", "pod", t), run)
    assert drop0(by("vllm:num_requests_waiting", "pod", t)) == wait, t
    # the TTFT histogram: observed at the first token, vLLM's buckets
    first = rq[rq["arrival"] + rq["ttft"] <= t]
    if len(first):
        assert sum(by("vllm:time_to_first_token_seconds_count", "pod", t).values()) == len(first), t
        got = sum(q('vllm:time_to_first_token_seconds_bucket{le="0.25"}', t).values())
        assert got == np.sum(first["ttft"] <= 0.25), (t, got)
        s = sum(q("vllm:time_to_first_token_seconds_sum", t).values())
        assert abs(s - first["ttft"].sum()) <= 1e-9 * max(1, s), t
        assert sum(q("vllm:prompt_tokens_total", t).values()) == first["input"].sum(), t
    done = rq[rq["end"] <= t]
    if len(done):
        assert sum(q("vllm:generation_tokens_total", t).values()) == done["output"].sum(), t
        assert sum(q('vllm:e2e_request_latency_seconds_bucket{le="+Inf"}', t).values()) == len(done), t
        got = sum(q('vllm:request_queue_time_seconds_bucket{le="0.3"}', t).values())
        assert got == np.sum(done["admitted"] - done["arrival"] <= 0.3), t
    # vllm:kv_cache_usage_perc: the service bucket holding the instant (the last one at the end)
    row = sb[(sb["start"] <= t) & (t < sb["end"])]
    if not len(row):
        row = sb[sb["end"] == t]
    assert len(row) and not math.isnan(row[0]["kv_usage"]), t
    assert abs(by("vllm:kv_cache_usage_perc", "model_name", t)["chat"] - row[0]["kv_usage"]) < 1e-12, t
    # Kueue: pending from submission to admission, admitted, wait histogram, per ClusterQueue
    pend, adm, w10 = {}, {}, {}
    for j in jobs:
        cq = names[int(j["tenant"])]
        out = j["start"] if not math.isnan(j["start"]) else j["end"]
        if j["submit"] <= t and not (out <= t):
            pend[cq] = pend.get(cq, 0) + 1
        if j["start"] <= t:
            adm[cq] = adm.get(cq, 0) + 1
            w10[cq] = w10.get(cq, 0) + (j["start"] - j["submit"] <= 10)
    assert drop0(by('kueue_pending_workloads{status="active"}', "cluster_queue", t)) == pend, (t, pend)
    assert drop0(by("kueue_admitted_workloads_total", "cluster_queue", t)) == adm, t
    assert drop0(by('kueue_admission_wait_time_seconds_bucket{le="10"}', "cluster_queue", t)) == drop0(w10), t
    # ... and per LocalQueue: the tenant's, in its namespace
    assert drop0(by('kueue_local_queue_pending_workloads{status="active"}', "namespace", t)) == pend, (t, pend)
    assert drop0(by("kueue_local_queue_admitted_workloads_total", "name", t)) == adm, t
    assert drop0(by('kueue_local_queue_admission_wait_time_seconds_bucket{le="10"}', "namespace", t)) == drop0(w10), t
    wsum = {}
    for j in jobs:
        if j["start"] <= t:
            cq = names[int(j["tenant"])]
            wsum[cq] = wsum.get(cq, 0) + (j["start"] - j["submit"])
    got = by("kueue_local_queue_admission_wait_time_seconds_sum", "name", t)
    assert set(drop0(got)) == set(drop0(wsum)) and all(abs(got[k] - wsum[k]) <= 1e-9 * max(1, wsum[k]) for k in drop0(wsum)), (t, got, wsum)
    # cost: the day's total over its hours
    day = cost[cost["day"] == min(int(t // 86400), int(max(cost["day"])))]
    hours = min(86400.0, end - day[0]["day"] * 86400) / 3600
    assert abs(by("fleetsim_cost_dollars_per_hour", "pool", t)["h100"] - day[0]["total"] / hours) < 1e-9, t
    checked += 1
assert checked > 50, checked
assert len(rq) > 1000 and len(jobs) > 20, (len(rq), len(jobs))
print("checked", checked, "instants,", len(rq), "requests,", len(jobs), "jobs")
EOF
cat py.txt
grep -E 'level=(warn|error)' db.log | grep -v 'Received SIGTERM' > warn.txt
[ -s warn.txt ] && bad "prometheus warned: $(head -3 warn.txt)" || ok
finish
