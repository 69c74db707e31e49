#!/usr/bin/env bash
# Inference services (docs/services.md) end to end: the shipped mixed
# scenario (shortened) runs, prints its service line and writes /services,
# /service_buckets and /timeline.gpus_serving; the MIG scenario's replicas
# hold instances (/timeline.mig_serving); the Azure LLM traces replay
# every row (19,366 conversation and 8,819 code requests) when the shared
# data is there; a bad request trace stops the run at its line (exit 2, no
# file); plan finds the cheapest fleet with an SLO on a service; the report
# draws serving vs training; results are the same however many threads a
# sweep uses.
source "$(dirname "$0")/lib/common.bash"

expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/serving-mixed.yaml" --set horizon=6h -o mixed.h5
expect_out '^service +chat: [0-9]+ requests, TTFT p50 [0-9.]+ [a-z]+ p99 [0-9.]+ [a-z]+, SLO met by'
if command -v h5dump >/dev/null; then
    h5dump -H mixed.h5 > layout.txt
    for t in services service_buckets; do
        grep -q "DATASET \"$t\"" layout.txt && ok || bad "mixed.h5 has no /$t"
    done
    grep -q '"gpus_serving"' layout.txt && ok || bad "/timeline has no gpus_serving"
    # six hourly buckets of the one service
    h5dump -d /service_buckets -H mixed.h5 | grep -q 'SIMPLE { ( 6 )' && ok \
        || bad "expected 6 rows of /service_buckets"
fi

# replicas on MIG instances (services[].mig): the shipped scenario, shortened;
# its replicas hold 1g.10gb instances (/timeline.mig_serving), no whole GPU
expect_exit 0 "$FLEETSIM" run "$SRC/scenarios/serving-mig.yaml" --set horizon=3h -o mig.h5
expect_out '^service +small-chat: [0-9]+ requests, TTFT p50 [0-9.]+ [a-z]+ p99 [0-9.]+ [a-z]+, SLO met by'
if python3 -c 'import h5py' 2>/dev/null; then
    python3 - mig.h5 <<'PY' && ok || bad "mig.h5: /timeline.mig_serving is not >= 4 with gpus_serving 0 after the start"
import sys, h5py
t = h5py.File(sys.argv[1], "r")["timeline"][1:]
sys.exit(0 if len(t) and (t["mig_serving"] >= 4).all() and (t["gpus_serving"] == 0).all() else 1)
PY
fi

# the Azure traces, every row
for d in "$SRC/../shared/data" "$SRC/../../shared/data" /work/shared/data; do
    AZ="$d/azure-llm-2023"
    [ -f "$AZ/AzureLLMInferenceTrace_conv.csv.gz" ] || continue
    sed "s|../../shared/data/azure-llm-2023|$AZ|" "$SRC/scenarios/serving-azure.yaml" > azure.yaml
    expect_exit 0 "$FLEETSIM" run azure.yaml -o azure.h5
    expect_out '^service +conv: 19366 requests'
    expect_out '^service +code: 8819 requests'
    break
done

# a bad row of a request trace: exit 2 at its line, nothing written
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,10,5\n2023-11-16 17:00:00.0,10,5\n' > bad.csv
cat > bad.yaml <<'YAML'
name: bad-trace
horizon: 1h
until: horizon
cluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]}
workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1.0}, duration: {dist: constant, value: 1m}}}
services:
  - name: s
    requests: {process: trace, trace: bad.csv}
    performance: [{gpu: H100, prefill: 1000, decode: 100, max_batch: 4}]
YAML
expect_exit 2 "$FLEETSIM" run bad.yaml -o bad.h5
expect_err 'bad.csv:3:1: field TIMESTAMP: 2023-11-16 17:00:00.0 is earlier than the row before'
expect_no_file bad.h5
# services need until: horizon, said at the key
sed 's/^until: horizon$/until: drain/' bad.yaml > drain.yaml
expect_exit 2 "$FLEETSIM" validate drain.yaml
expect_err 'drain.yaml:[0-9]+:[0-9]+: services run until the horizon'

# plan with an SLO on the service: the bisection finds a fleet, deterministically
expect_exit 0 "$FLEETSIM" plan "$SRC/scenarios/serving-plan.yaml" -o pl -j 2 \
    --set plan.replications=3
expect_out '^SLOs: chat.buckets_met >= 0.95, wait_p95 <= 1h'
expect_out '^chosen: main, [0-9]+ nodes of pool main'
grep '^chosen' out.txt > chosen1.txt
expect_exit 0 "$FLEETSIM" plan "$SRC/scenarios/serving-plan.yaml" -o pl2 -j 1 \
    --set plan.replications=3
grep '^chosen' out.txt > chosen2.txt
cmp -s chosen1.txt chosen2.txt && ok || bad "plan chose differently on 1 and 2 threads"
sed 's/chat.buckets_met/chat.no_such_column/' "$SRC/scenarios/serving-plan.yaml" > badplan.yaml
expect_exit 2 "$FLEETSIM" plan badplan.yaml -o bp
expect_err "badplan.yaml:[0-9]+:[0-9]+: plan.slo.0.metric: 'chat.no_such_column' is not a summary metric.*SERVICE.COLUMN"

# the report: serving vs training
if python3 -c 'import h5py, matplotlib' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" report mixed.h5 -o mixed.html
    grep -q 'Serving vs training GPUs' mixed.html && grep -q 'Service latency and replicas' mixed.html \
        && ok || bad "the report lacks the service sections"
fi
# ---- the iteration engine's bad input (issue 35): a token budget below the batch, refused at
# its key by validate and run; a KV cache too small for a request stops the run with exit 2
cat > eng.yaml <<'Y'
name: engine-bad
until: horizon
horizon: 10m
cluster:
  pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]
workload: {synthetic: {arrivals: {process: poisson, rate: 1/h}, gpus: {1: 1}, duration: {dist: exponential, mean: 1h}}}
services:
  - name: chat
    engine: {scheduler: v1, max_num_batched_tokens: 2048}
    requests: {rate: 2/s, input: {dist: constant, value: 600}, output: {dist: constant, value: 50}}
    performance: [{gpu: H100, prefill: 10000, decode: 2400, max_batch: 64, kv_tokens: 0}]
Y
expect_exit 0 "$FLEETSIM" run eng.yaml --no-output -q
sed 's/max_num_batched_tokens: 2048/max_num_batched_tokens: 32/' eng.yaml > eng-budget.yaml
expect_exit 2 "$FLEETSIM" validate eng-budget.yaml
expect_err "^eng-budget.yaml:9:53: max_num_batched_tokens 32 is below performance row 0's max_batch 64"
sed 's/kv_tokens: 0/kv_tokens: 320/' eng.yaml > eng-kv.yaml
expect_exit 2 "$FLEETSIM" run eng-kv.yaml -o eng-kv.h5 -q
expect_err 'services.0: a request of 600 prompt and 50 output tokens needs 41 KV blocks of 16 tokens, more than .* \(20 blocks\): raise kv_tokens'
expect_no_file eng-kv.h5

finish
