#!/usr/bin/env bash
# Disaggregated serving (docs/services.md "Disaggregated serving"): a service
# with a prefill group on H100 and a decode group on A100 runs, /requests
# carries decode_replica and kv_transfer, the decode replicas are the group's;
# bad blocks are refused at FILE:LINE:COL with exit 2 and nothing written.
source "$(dirname "$0")/lib/common.bash"

# scen FILE DISAGG-BLOCK [INPUT]: a scenario whose service ends with the block given
scen() {
    local input=${3:-}
    [ -n "$input" ] || input='{dist: lognormal, median: 800, sigma: 0.6}'
    cat > "$1" <<YAML
name: pd
seed: 3
horizon: 20m
until: horizon
cluster:
  pools:
    - {name: hot, gpu: H100, nodes: 1, gpus_per_node: 8}
    - {name: cold, gpu: A100, nodes: 1, gpus_per_node: 8}
workload:
  synthetic:
    arrivals: {process: poisson, rate: 1/h}
    gpus: {1: 1.0}
    duration: {dist: constant, value: 10m}
services:
  - name: chat
    requests:
      rate: 4/s
      input: $input
      output: {dist: lognormal, median: 120, sigma: 0.6}
    performance:
      - {gpu: H100, prefill: 12000, decode: 2400, max_batch: 64, decode_single: 90}
      - {gpu: A100, prefill: 6000, decode: 1500, max_batch: 64, decode_single: 60, kv_tokens: 16384}
    autoscale: {metric: none}
    slo: {ttft: 1s, tpot: 100ms}
$2
output: {requests: true}
YAML
}

scen ok.yaml '    disaggregated:
      prefill: {replicas: 2, gpu: H100}
      decode: {replicas: 3, gpu: A100}
      kv_transfer: {bandwidth: 25e9, bytes_per_token: 131072,
                    links: [{prefill_pool: hot, decode_pool: cold, bandwidth: 12.5e9}]}'
expect_exit 0 "$FLEETSIM" validate ok.yaml
expect_exit 0 "$FLEETSIM" run ok.yaml -o ok.h5 -q
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
    /usr/bin/python3 - ok.h5 > check.txt <<'PY' && ok || bad "ok.h5: $(cat check.txt)"
import sys, h5py, numpy as np
t = h5py.File(sys.argv[1])["requests"][()]
assert len(t) > 3000, len(t)
# replicas 0-1 prefill, 2-4 decode; the link (12.5 GB/s) times each transfer
assert set(np.unique(t["replica"])) <= {0, 1}, np.unique(t["replica"])
assert set(np.unique(t["decode_replica"])) == {2, 3, 4}, np.unique(t["decode_replica"])
x = t["kv_transfer"]
want = np.floor(t["input"] * 131072 / 12.5e9 * 1e6 + 0.5) / 1e6
moved = t["preemptions"] == 0
assert np.all(np.abs(x[moved] - want[moved]) < 1e-9), (x[moved][:5], want[moved][:5])
assert np.all(t["end"] >= t["arrival"] + t["ttft"] + x - 1e-9)
print("ok")
PY
fi

# bad blocks: exit 2 at the key, nothing written
no() {  # no NAME BLOCK REGEX [INPUT]
    scen "$1.yaml" "$2" "${4:-}"
    expect_exit 2 "$FLEETSIM" run "$1.yaml" -o "$1.h5" -q
    expect_err "$3"
    expect_no_file "$1.h5"
}
no nodec '    disaggregated:
      prefill: {replicas: 2}
      kv_transfer: {bandwidth: 25e9, bytes_per_token: 131072}' \
    '^nodec.yaml:[0-9]+:[0-9]+: .*needs a decode group'
no zerobw '    disaggregated:
      prefill: {replicas: 2}
      decode: {replicas: 2}
      kv_transfer: {bandwidth: 0, bytes_per_token: 131072}' \
    '^zerobw.yaml:[0-9]+:[0-9]+: .*bandwidth'
no negbw '    disaggregated:
      prefill: {replicas: 2}
      decode: {replicas: 2}
      kv_transfer: {bandwidth: -5e9, bytes_per_token: 131072}' \
    '^negbw.yaml:[0-9]+:[0-9]+: .*bandwidth'
no nobw '    disaggregated:
      prefill: {replicas: 2}
      decode: {replicas: 2}
      kv_transfer: {bytes_per_token: 131072}' \
    '^nobw.yaml:[0-9]+:[0-9]+: .*needs disaggregated.kv_transfer.bandwidth'
no nokvb '    disaggregated:
      prefill: {replicas: 2}
      decode: {replicas: 2}
      kv_transfer: {bandwidth: 25e9}' \
    '^nokvb.yaml:[0-9]+:[0-9]+: .*bytes_per_token'
no nogpu '    disaggregated:
      prefill: {replicas: 2, gpu: H100}
      decode: {replicas: 2, gpu: B200}
      kv_transfer: {bandwidth: 25e9, bytes_per_token: 131072}' \
    '^nogpu.yaml:[0-9]+:[0-9]+: .*no row for GPU model B200'
# 20,000 prompt tokens and one output token need 1,251 blocks; an A100 decode replica holds 1,024
no toolong '    disaggregated:
      prefill: {replicas: 2, gpu: H100}
      decode: {replicas: 2, gpu: A100}
      kv_transfer: {bandwidth: 25e9, bytes_per_token: 131072}' \
    '^toolong.yaml:[0-9]+:[0-9]+: .*decode replica on A100 holds 16384 KV tokens.*needs 1251 blocks' \
    '{dist: uniform, lo: 100, hi: 20000}'
no badlink '    disaggregated:
      prefill: {replicas: 2}
      decode: {replicas: 2}
      kv_transfer: {bandwidth: 25e9, bytes_per_token: 131072,
                    links: [{prefill_pool: hot, decode_pool: lukewarm, bandwidth: 1e9}]}' \
    "^badlink.yaml:[0-9]+:[0-9]+: .*no pool named 'lukewarm'"
finish
