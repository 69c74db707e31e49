#!/bin/bash
# The 10,000-GPU week written as Prometheus blocks (issue #37, docs/performance.md "fleetsim
# metrics --tsdb"): tests/bench/tsdb-10k.yaml run, then `fleetsim metrics --tsdb` at 60 s
# under /usr/bin/time (wall, CPU, peak RSS), the blocks' size per sample and per block, then a
# stock Prometheus on them: its start-up (opening the blocks) and the wall time of a few
# queries (instant and 7-day range).  Not part of the test suite: several minutes and about
# 1.5 GB of disk in WORKDIR.
# usage: tests/bench/tsdb_10k.sh [FLEETSIM [WORKDIR]] (default build/fleetsim, a new /tmp dir);
# run from the repo root.  Needs prometheus and curl for the query part (skipped without).
# FAMILIES=LIST exports only those families (--families): the shorter variant that times the
# energy queries, FAMILIES=DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (the queries of other families
# then return nothing).
set -euo pipefail
bin=$(realpath "${1:-build/fleetsim}")
src=$(pwd)
work=${2:-$(mktemp -d /tmp/fleetsim-bench-XXXXXX)}
mkdir -p "$work"
cd "$work"
rm -rf blocks
"$bin" run "$src/tests/bench/tsdb-10k.yaml" -o bench.h5 -q
/usr/bin/time -f '%e %U %S %M' -o time.txt "$bin" metrics bench.h5 --tsdb blocks \
    ${FAMILIES:+--families "$FAMILIES"} > metrics.txt 2> progress.txt
cat metrics.txt
read -r wall user sys rss < time.txt
samples=$(grep ' blocks, ' metrics.txt | grep -o '[0-9]* samples' | cut -d' ' -f1)   # the total
bytes=$(du -sb blocks | cut -f1)
printf 'export: %.0f s wall, %.0f s CPU (%.0f user, %.0f system), peak RSS %.0f MB\n' \
    "$wall" "$(echo "$user + $sys" | bc)" "$user" "$sys" "$(echo "$rss / 1024" | bc)"
printf 'blocks: %d bytes for %d samples: %.3f bytes per sample\n' "$bytes" "$samples" \
    "$(echo "scale=6; $bytes / $samples" | bc)"
for b in blocks/*/; do
    [ -f "$b/meta.json" ] && printf '  %s %s MB\n' "$(basename "$b")" "$(du -sm "$b" | cut -f1)"
done
command -v prometheus >/dev/null && command -v curl >/dev/null || { echo "no prometheus: queries skipped"; exit 0; }
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'global: {scrape_interval: 1h}\nscrape_configs: []\n' > prom.yml
t0=$(date +%s.%N)
prometheus --config.file=prom.yml --storage.tsdb.path=blocks --storage.tsdb.retention.time=30d \
    --web.listen-address=127.0.0.1:$port > prom.log 2>&1 &
prom=$!
trap 'kill $prom 2>/dev/null; wait $prom 2>/dev/null || true' EXIT
until curl -sf "http://127.0.0.1:$port/-/ready" > /dev/null; do sleep 0.5; done
printf 'prometheus: ready in %.1f s\n' "$(echo "$(date +%s.%N) - $t0" | bc)"
O=1767225600
q() {   # q NAME PATH ARGS...: the query's wall time (curl) and result count, or its error
    local name=$1 path=$2
    shift 2
    curl -s -o q.json -w '%{time_total}' "http://127.0.0.1:$port$path" "$@" > t.txt || true
    printf '  %-46s %7.2f s  %s\n' "$name" "$(cat t.txt)" "$(/usr/bin/python3 -c '
import json
d = json.load(open("q.json"))
print("%d results" % len(d["data"]["result"]) if d["status"] == "success" else d["error"])')"
}
q 'count(DCGM_FI_DEV_GPU_UTIL) at day 3' /api/v1/query --data-urlencode 'query=count(DCGM_FI_DEV_GPU_UTIL)' -d time=$((O + 3 * 86400))
q 'avg(DCGM_FI_DEV_GPU_UTIL) at day 3' /api/v1/query --data-urlencode 'query=avg(DCGM_FI_DEV_GPU_UTIL)' -d time=$((O + 3 * 86400))
q 'avg(DCGM_FI_DEV_GPU_UTIL), 7 d at 1 h' /api/v1/query_range --data-urlencode 'query=avg(DCGM_FI_DEV_GPU_UTIL)' -d start=$O -d end=$((O + 7 * 86400)) -d step=3600
q 'sum(DCGM_FI_DEV_POWER_USAGE), 7 d at 1 h' /api/v1/query_range --data-urlencode 'query=sum(DCGM_FI_DEV_POWER_USAGE)' -d start=$O -d end=$((O + 7 * 86400)) -d step=3600
# "Energy per hour": the shipped dashboard's query (per host, all hosts), and the per-GPU one it
# replaced (max by UUID over 10,000 counters), each over the week at 1 h
ep=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print([p for p in d["panels"] if p["title"] == "Energy per hour"][0]["targets"][0]["expr"].replace("$host", ".*"))' \
    "$src/analysis/grafana/fleetsim-dcgm.json")
q 'energy per hour (shipped dashboard), 7 d' /api/v1/query_range --data-urlencode "query=$ep" -d start=$((O + 3600)) -d end=$((O + 7 * 86400)) -d step=3600
cp q.json energy_node.json
q 'energy per hour (max by UUID, before), 7 d' /api/v1/query_range --data-urlencode 'query=sum(max by (UUID) (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION) - max by (UUID) (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION offset 1h)) / 3.6e9' -d start=$((O + 3600)) -d end=$((O + 7 * 86400)) -d step=3600
cp q.json energy_uuid.json
# the two agree hour by hour (when the per-GPU one answered)
/usr/bin/python3 -c '
import json
a, b = json.load(open("energy_node.json")), json.load(open("energy_uuid.json"))
if a["status"] == "success" and b["status"] == "success" and a["data"]["result"] and b["data"]["result"]:
    x, y = a["data"]["result"][0]["values"], b["data"]["result"][0]["values"]
    d = max(abs(float(p[1]) - float(q[1])) / max(abs(float(q[1])), 1e-300) for p, q in zip(x, y))
    print("  energy per hour: %d hours, %.3f MWh, per host against per GPU: %.2g relative at most"
          % (len(x), sum(float(p[1]) for p in x) / 1e3, d))'
q 'one GPU (12239 panel), 7 d at 5 m' /api/v1/query_range --data-urlencode 'query=DCGM_FI_DEV_GPU_TEMP{instance=~"h100-17:9400", gpu=~"3"}' -d start=$O -d end=$((O + 7 * 86400)) -d step=300
