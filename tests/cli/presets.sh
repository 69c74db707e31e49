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

PY=
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
