#!/bin/bash
# Bytes per queued job (issue #13, docs/performance.md "Memory per queued job"): the peak RSS
# difference between 65,000/h and 6,500/h arrivals on 16 nodes for one hour (about 58,000 more
# jobs still queued at the end), per scheduler configuration.  Not part of the test suite.
# usage: tests/bench/mem_queued.sh [FLEETSIM] (default build/fleetsim); run from the repo root.
set -euo pipefail
bin=${1:-build/fleetsim}
extra=57964   # jobs queued at the end: 64,317 at 65,000/h minus 6,353 at 6,500/h
rss() {
    /usr/bin/time -f %M "$bin" run scenarios/default.yaml --no-output \
        --set cluster.pools.0.nodes=16 --set until=horizon --set horizon=1h --set warmup=0 \
        --set workload.synthetic.arrivals.rate="$1" "${@:2}" 2>&1 >/dev/null | tail -1
}
for q in "fifo" "fifo strict" "fifo easy" "sjf" "priority" "srtf"; do
    set -- $q
    args=(--set scheduler.queue="$1")
    case "${2:-}" in
    strict) args+=(--set scheduler.mode=strict) ;;
    easy) args+=(--set scheduler.backfill=easy) ;;
    esac
    lo=$(rss 6500/h "${args[@]}")
    hi=$(rss 65000/h "${args[@]}")
    printf '%-12s %4d B per queued job  (peak RSS %d KB and %d KB)\n' "$q" $(((hi - lo) * 1024 / extra)) "$lo" "$hi"
done
