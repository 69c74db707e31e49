#!/usr/bin/env bash
# Serving presets (docs/services.md "Presets") end to end: a row naming a model validates and
# its computed numbers are in the canonical dump; a pair that does not fit is refused at its
# FILE:LINE:COL (exit 2); and the preset as the v1 engine runs it: 3,000 requests queued at
# once on one replica, as TensorRT-LLM's offline table (DOMAIN.md 6.2), give an output
# throughput within 0.6-1.5 of the published one for the seven cases (docs/validation.md
# "Serving presets"; needs python3 with h5py, else that part is skipped).
source "$(dirname "$0")/lib/common.bash"

scenario() {  # scenario GPU GPUS MODEL DTYPE TRACE
    cat <<YAML
name: preset
horizon: 8h
until: horizon
cluster:
  pools:
    - {name: main, gpu: $1, nodes: 1, gpus_per_node: 8}
workload:
  synthetic:
    arrivals: {rate: 0.0001/h}
    gpus: {1: 1.0}
    duration: {dist: constant, value: 1m}
services:
  - name: s
    gpus: $2
    requests: {process: trace, trace: $5}
    engine: {scheduler: v1}
    performance: [{gpu: $1, model: $3, dtype: $4}]
output: {requests: true}
YAML
}

printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,100,10\n' > one.csv
scenario H100 4 llama3-70b fp8 one.csv > ok.yaml
expect_exit 0 "$FLEETSIM" validate ok.yaml --dump
expect_out '^ +model: llama3-70b$'
expect_out '^ +tp: 4$'
expect_out '^ +prefill: [0-9.]+$'
expect_out '^ +kv_tokens: [1-9][0-9]*$'

scenario A100 4 llama3-70b fp8 one.csv > a100.yaml
expect_exit 2 "$FLEETSIM" validate a100.yaml
expect_err '^a100.yaml:17:57: services.0.performance.0.dtype: A100 has no FP8 tensor cores: use dtype bf16 \(bf16 fits from tp 4\)$'
scenario H100 2 llama3-405b fp8 one.csv > big.yaml
expect_exit 2 "$FLEETSIM" validate big.yaml
expect_err '^big.yaml:17:38: services.0.performance.0.model: llama3-405b in fp8 at tp 2 needs .* the smallest tp that fits is 8 \(gpus: 8\)$'

# The step time's context term by hand (docs/services.md "Step time"): one replica, prefill
# 10,000 tokens/s, a 10 ms decode step (max_batch 1), us_per_kv_token 0.5.  A request of
# 1,000 prompt and 101 output tokens: its prefill 100,000 us (first token at 0.1 s), then 100
# decode steps of 10,000 us + round(0.5 x C), C = 1,000 ... 1,099 its KV tokens: 52,500 us in
# all (a macro step, in closed form), so it ends at 1.1525 s.  A request arriving at 0.5 s
# (cutting the macro step, whose end stays) waits for the batch and is prefilled in 1,000 us.
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,1000,101\n2023-11-16 18:00:00.5,10,1\n' > ctx.csv
sed -e 's/model: llama3-70b, dtype: fp8/prefill: 10000, decode: 100, max_batch: 1, us_per_kv_token: 0.5/' \
    -e 's/trace: one.csv/trace: ctx.csv/' ok.yaml > ctx.yaml
expect_exit 0 "$FLEETSIM" run ctx.yaml -o ctx.h5 -q
PY=
for p in "${FS_TEST_PYTHON:-}" python3 /usr/bin/python3; do
    if [ -n "$p" ] && "$p" -c 'import h5py' 2>/dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ]; then
    "$PY" - ctx.h5 <<'PY' && ok || bad "context term by hand"
import sys, h5py
r = h5py.File(sys.argv[1], "r")["requests"][:]
got = sorted((round(x["arrival"] * 1e6), round((x["arrival"] + x["ttft"]) * 1e6), round(x["end"] * 1e6))
             for x in r)
want = [(0, 100000, 1152500), (500000, 1153500, 1153500)]
print(got)
sys.exit(0 if got == want else 1)
PY
fi

# A measured profile (docs/services.md "A measured profile"): the row's own step times as a
# profile (tests/data/profiles/azure-row.csv) give the same requests, to the microsecond, as
# the row, on 2,000 requests of mixed lengths at 2 replicas, v1 and v0; the roofline preset's
# grid (h100-8b.csv) runs.
awk 'BEGIN { print "TIMESTAMP,ContextTokens,GeneratedTokens"; s = 7;
    for (k = 0; k < 2000; k++) { s = (s * 1103515245 + 12345) % 2147483648;
        printf "2023-11-16 18:%02d:%02d.%06d,%d,%d\n", int(k * 0.9 / 60), int(k * 0.9) % 60,
               (k * 900000) % 1000000, 50 + s % 3000, 1 + int(s / 7) % 400 } }' > mix.csv
for sched in v1 v0; do
    sed -e 's/model: llama3-70b, dtype: fp8/prefill: 10000, decode: 2400, max_batch: 64, decode_single: 90/' \
        -e 's/trace: one.csv/trace: mix.csv/' -e "s/scheduler: v1/scheduler: $sched/" \
        -e 's/    gpus: 4/    gpus: 1\n    min_replicas: 2\n    max_replicas: 2\n    autoscale: {metric: none}/' \
        ok.yaml > row.yaml
    sed "s|decode_single: 90|profile: $SRC/tests/data/profiles/azure-row.csv|" row.yaml > prof.yaml
    expect_exit 0 "$FLEETSIM" run row.yaml -o row-$sched.h5 -q
    expect_exit 0 "$FLEETSIM" run prof.yaml -o prof-$sched.h5 -q
done
if [ -n "$PY" ]; then
    for sched in v1 v0; do
        "$PY" - row-$sched.h5 prof-$sched.h5 <<'PY' && ok || bad "profile of the row ($sched) differs"
import sys, h5py
a = h5py.File(sys.argv[1], "r")["requests"][:]
b = h5py.File(sys.argv[2], "r")["requests"][:]
same = len(a) == len(b) and a.tobytes() == b.tobytes()   # bytewise: NaN tpot of 1-token outputs
print("%s: %d requests, %s" % (sys.argv[2], len(a), "same" if same else "DIFFERENT"))
sys.exit(0 if len(a) == 2000 and same else 1)
PY
    done
fi
sed "s|decode_single: 90|profile: $SRC/tests/data/profiles/h100-8b.csv|" row.yaml > p8b.yaml
expect_exit 0 "$FLEETSIM" run p8b.yaml -o p8b.h5 -q
expect_exit 0 "$FLEETSIM" validate p8b.yaml --dump
expect_out '^ +profile: .*h100-8b.csv$'

# Chunked prefill and the TPOT tail (docs/validation.md, beside Sarathi-Serve's ablation): at
# 1.8 requests/s on the yi-34b preset, 512-token chunks (v1) cut the TPOT p99 at least 1.8x
# against v0 and raise the TTFT p50 at least 3x.
SAR=$SRC/tests/data/scenarios/sarathi-chunking.yaml
expect_exit 0 "$FLEETSIM" run "$SAR" -o sar-v1.h5 -q
expect_exit 0 "$FLEETSIM" run "$SAR" -o sar-v0.h5 -q --set services.0.engine.scheduler=v0 \
    --set services.0.engine.max_num_batched_tokens=2048
if [ -n "$PY" ]; then
    "$PY" - sar-v0.h5 sar-v1.h5 <<'PY' && ok || bad "chunked prefill: TPOT tail or TTFT not as expected"
import sys, h5py, numpy as np
def q(path):
    r = h5py.File(path, "r")["requests"][:]
    t = r["tpot"][~np.isnan(r["tpot"])]
    return np.percentile(t, 99), np.percentile(r["ttft"], 50)
(t0, f0), (t1, f1) = q(sys.argv[1]), q(sys.argv[2])
print("v0: tpot p99 %.1f ms ttft p50 %.2f s; v1 512: tpot p99 %.1f ms ttft p50 %.2f s"
      % (t0 * 1e3, f0, t1 * 1e3, f1))
sys.exit(0 if t0 >= 1.8 * t1 and f1 >= 3 * f0 else 1)
PY
fi

# Bad profiles: the row's key at FILE:LINE:COL, then the profile's FILE:LINE: field.
badprof() {  # badprof NAME ROWS REGEX
    printf 'batch,prefill_tokens,context_tokens,step_us\n%b' "$2" > "$1.csv"
    sed "s|decode_single: 90|profile: $1.csv|" row.yaml > "$1.yaml"
    expect_exit 2 "$FLEETSIM" validate "$1.yaml"
    expect_err "^$1.yaml:[0-9]+:[0-9]+: services.0.performance.0.profile: .*$1.csv:$3\$"
    expect_exit 2 "$FLEETSIM" run "$1.yaml" -o "$1.h5"
    expect_no_file "$1.h5"
}
badprof miss '0,2048,0,204800\n1,0,0,\n' '3: field step_us: missing'
badprof neg '0,2048,0,204800\n1,0,-5,9000\n' "3: field context_tokens: expected a whole number >= 0, got '-5'"
badprof zero '0,2048,0,0\n1,0,0,9000\n' "2: field step_us: expected a time in us > 0, got '0'"
badprof hole '0,2048,0,204800\n1,0,0,9000\n1,0,1024,9500\n8,0,0,9900\n' ' the decode rows are not a grid: no row for batch 8 at 1024 context tokens \(every batch needs every context\)'
badprof mixed '0,2048,0,204800\n4,512,0,60000\n' '3: field prefill_tokens: a row is a prefill .*'
badprof dup '0,2048,0,204800\n1,0,0,9000\n1,0,0,9100\n' '4: field context_tokens: a second decode row for batch 1 at 0 context tokens \(the first at line 3\)'
badprof nodec '0,2048,0,204800\n' ' no decode rows \(expected prefill rows: batch 0, and decode rows: batch >= 1\)'

# Bad input (exit 2, nothing written): a prompt longer than max_model_len, a request the KV
# cache cannot hold alone (a trace: at its FILE:LINE, found by validate), a max_model_len the KV
# cache cannot hold (vLLM's start-up check; a preset's is its model's context), kv_context
# without a model; a synthetic prompt longer than max_model_len stops the run.
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,100,10\n2023-11-16 18:00:01.0,5000,10\n' > long.csv
plain() {  # plain ROW-EXTRAS TRACE
    sed -e "s/model: llama3-70b, dtype: fp8/prefill: 10000, decode: 2400, max_batch: 64$1/" \
        -e "s/trace: one.csv/trace: $2/" ok.yaml
}
plain ", max_model_len: 4096" long.csv > ml.yaml
expect_exit 2 "$FLEETSIM" validate ml.yaml
expect_err '^ml.yaml:15:39: services.0.requests.trace: .*/long.csv:3:23: field ContextTokens: a prompt of 5000 tokens is longer than max_model_len of services.0.performance.0 \(4096 tokens\)$'
expect_exit 2 "$FLEETSIM" run ml.yaml -o ml.h5
expect_no_file ml.h5
plain ", kv_tokens: 4096" long.csv > kv.yaml
expect_exit 2 "$FLEETSIM" validate kv.yaml
expect_err '^kv.yaml:15:39: services.0.requests.trace: .*/long.csv:3:1: a request of 5000 prompt and 10 output tokens needs 314 KV blocks of 16 tokens, more than a replica.s kv_tokens \(services.0.performance.0\) holds \(256 blocks\)$'
plain ", kv_tokens: 4096, max_model_len: 8192" one.csv > kvml.yaml
expect_exit 2 "$FLEETSIM" validate kvml.yaml
expect_err '^kvml.yaml:17:[0-9]+: services.0.performance.0.kv_tokens: max_model_len 8192 is more than the KV cache holds \(kv_tokens 4096: 4096 in blocks of 16\): lower max_model_len to 4096 or raise kv_tokens$'
sed 's/dtype: fp8}/dtype: fp8, kv_tokens: 65536}/' ok.yaml > pkv.yaml
expect_exit 2 "$FLEETSIM" validate pkv.yaml
expect_err '^pkv.yaml:17:[0-9]+: services.0.performance.0.kv_tokens: max_model_len 131072 \(llama3-70b.s context\) is more than the KV cache holds \(kv_tokens 65536: 65536 in blocks of 16\): lower max_model_len to 65536 or raise kv_tokens or gpu_memory_utilization$'
sed -e 's/requests: {process: trace, trace: one.csv}/requests: {rate: 1\/s, input: {dist: constant, value: 3000}, output: {dist: constant, value: 5}}/' \
    -e 's/model: llama3-70b, dtype: fp8/prefill: 10000, decode: 2400, max_batch: 64, max_model_len: 2048/' ok.yaml > syn.yaml
expect_exit 2 "$FLEETSIM" run syn.yaml -o syn.h5
expect_err 'services.0: a prompt of 3000 tokens is longer than the replica.s max_model_len \(2048 tokens; vLLM refuses it\)'
expect_no_file syn.h5

for p in "${FS_TEST_PYTHON:-}" python3 /usr/bin/python3; do
    if [ -n "$p" ] && "$p" -c 'import h5py' 2>/dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ]; then
    for len in "1000 1000" "2048 128"; do
        set -- $len
        awk -v i="$1" -v o="$2" 'BEGIN { print "TIMESTAMP,ContextTokens,GeneratedTokens";
            for (k = 0; k < 3000; k++) print "2023-11-16 18:00:00.0," i "," o }' > "b$1.csv"
    done
    # case: GPU TP model trace published-tokens/s
    while read -r gpu tp model trace published; do
        scenario "$gpu" "$tp" "$model" fp8 "$trace" > b.yaml
        expect_exit 0 "$FLEETSIM" run b.yaml -o b.h5 || continue
        "$PY" - b.h5 "$published" "$model $gpu TP$tp $trace" <<'PY' && ok || bad "$model $gpu TP$tp $trace: outside 0.6-1.5"
import sys, h5py
r = h5py.File(sys.argv[1], "r")["requests"][:]
done = r["end"] > 0
t0 = r["admitted"][r["admitted"] > 0].min()
tps = r["output"][done].sum() / (r["end"][done].max() - t0)
q = tps / float(sys.argv[2])
print("%s: %d of %d requests, %.0f tokens/s, ratio %.2f, %d preemptions"
      % (sys.argv[3], done.sum(), len(r), tps, q, r["preemptions"].sum()))
sys.exit(0 if done.all() and 0.6 <= q <= 1.5 else 1)
PY
    done <<'CASES'
H100 1 llama3-8b b1000.csv 15220
H100 1 llama3-8b b2048.csv 3450
H100 2 llama3-70b b1000.csv 4205
H100 2 llama3-70b b2048.csv 762
H100 8 llama3-405b b1000.csv 2919
H100 8 llama3-405b b2048.csv 453
H200 1 llama3-8b b1000.csv 17744
CASES
fi
finish
