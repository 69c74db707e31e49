#!/usr/bin/env bash
# Runs fleetsim's libFuzzer targets (docs/robustness.md).
#
#   fuzz/fuzz.sh smoke BUILD [TOTAL_S]    every target, TOTAL_S (default 50) seconds
#                                         shared among them: the CI run (CTest fuzz_smoke)
#   fuzz/fuzz.sh long BUILD [MAX_S] [ROUND_S] [TARGET...]
#                                         each target in rounds of ROUND_S (default 120)
#                                         seconds until a round adds no coverage and no
#                                         features (a plateau) or MAX_S (default 3600)
#                                         seconds have passed; two targets at a time
#
# BUILD is a build directory configured with CC=clang -DFLEETSIM_FUZZ=ON and built
# with --target fuzz_all.  The growing corpus lives in BUILD/fuzz/work/TARGET, seeded
# from the files fuzz/seeds.map lists and from fuzz/corpus/TARGET; crashes, leaks and hangs land in BUILD/fuzz/artifacts/TARGET/
# and make the script fail: minimise one (BUILD/fuzz/fuzz_T -minimize_crash=1 FILE),
# fix the bug, and keep the input in tests/data/fuzz-regressions/TARGET/ (replayed by
# the CTest test fuzz_regressions).  Logs and a summary: BUILD/fuzz/logs/.
set -uo pipefail
mode=${1:?usage: fuzz.sh smoke|long BUILD ...}
build=$(cd "${2:?build directory}" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
bin=$build/fuzz
shift 2

targets_all=()
for exe in "$bin"/fuzz_*; do
    [ -x "$exe" ] || continue
    name=${exe##*/fuzz_}
    [ "$name" = replay ] && continue
    case $name in trace_*) name=trace-${name#trace_} ;; esac
    targets_all+=("$name")
done
if [ "${#targets_all[@]}" -eq 0 ]; then
    echo "fuzz.sh: no fuzz targets in $bin (configure with CC=clang -DFLEETSIM_FUZZ=ON," \
         "build --target fuzz_all)" >&2
    exit 2
fi
mkdir -p "$bin/logs"

# Seeds from the repository's data, as fuzz/seeds.map lists them.
root=$(cd "$src/.." && pwd)
for t in "${targets_all[@]}"; do
    rm -rf "$bin/seeds/$t"
    mkdir -p "$bin/seeds/$t"
    read -ra globs <<<"$(awk -v t="$t" '$1 == t { $1 = ""; print }' "$src/seeds.map")"
    for g in "${globs[@]}"; do
        for f in $root/$g; do
            [ -f "$f" ] && cp "$f" "$bin/seeds/$t/"
        done
    done
done

max_len() {
    case $1 in
        units) echo 128 ;;
        scenario) echo 8192 ;;
        *) echo 16384 ;;
    esac
}

# run_one TARGET SECONDS LOG: one libFuzzer session; prints "cov ft corpus execs"
run_one() {
    local t=$1 secs=$2 log=$3
    local exe=$bin/fuzz_${t//-/_}
    local work=$bin/work/$t art=$bin/artifacts/$t/
    mkdir -p "$work" "$art"
    local args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")"
                -artifact_prefix="$art" -print_final_stats=1 ${FUZZ_EXTRA_ARGS:-})
    [ -f "$src/$t.dict" ] && args+=(-dict="$src/$t.dict")
    local seeds=("$bin/seeds/$t")
    [ -d "$src/corpus/$t" ] && seeds+=("$src/corpus/$t")
    (cd "$work" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
        UBSAN_OPTIONS=print_stacktrace=1 "$exe" "${args[@]}" "$work" "${seeds[@]}") >"$log" 2>&1
    local rc=$?
    local last
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    local cov ft corp execs
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
    corp=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$last")
    execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log")
    echo "${cov:-0} ${ft:-0} ${corp:-0} ${execs:-0} $rc"
}

fail=0
report() {  # TARGET SECONDS "cov ft corp execs rc"
    read -r cov ft corp execs rc <<<"$3"
    printf '%-18s %6ss  cov %5s  ft %6s  corpus %5s  execs %9s  %s\n' "$1" "$2" "$cov" "$ft" \
        "$corp" "$execs" "$([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)")"
    if [ "$rc" -ne 0 ]; then
        fail=1
        echo "  see $bin/logs/$1.log and $bin/artifacts/$1/" >&2
        grep -E 'ERROR|SUMMARY|invariant broken|runtime error' "$bin/logs/$1.log" | head -n 5 >&2
    fi
}

case $mode in
smoke)
    total=${1:-50}
    per=$(( total / ${#targets_all[@]} ))
    [ "$per" -lt 3 ] && per=3
    # A gate must not flake: the smoke run is deterministic (fixed seed, a
    # fixed number of inputs from a fresh corpus; the time bound only cuts it
    # short).  Exploration is the long mode's job.
    export FUZZ_EXTRA_ARGS="-seed=1 -runs=3000"
    for t in "${targets_all[@]}"; do
        rm -rf "$bin/work/$t"
        report "$t" "$per" "$(run_one "$t" "$per" "$bin/logs/$t.log")"
    done
    ;;
long)
    max=${1:-3600}
    round=${2:-120}
    shift 2 2>/dev/null || shift $#
    targets=("$@")
    [ "${#targets[@]}" -eq 0 ] && targets=("${targets_all[@]}")
    summary=$bin/logs/long-summary.txt
    : >"$summary"
    long_one() {
        local t=$1 elapsed=0 prev="" r
        while [ "$elapsed" -lt "$max" ]; do
            r=$(run_one "$t" "$round" "$bin/logs/$t.log")
            elapsed=$((elapsed + round))
            read -r cov ft corp execs rc <<<"$r"
            echo "$t round $((elapsed / round)): cov $cov ft $ft corpus $corp execs $execs rc $rc" \
                >>"$bin/logs/$t.rounds"
            [ "$rc" -ne 0 ] && break
            [ "$cov $ft" = "$prev" ] && break
            prev="$cov $ft"
        done
        echo "$t $elapsed $r" >>"$summary"
    }
    running=0
    for t in "${targets[@]}"; do
        : >"$bin/logs/$t.rounds"
        long_one "$t" &
        running=$((running + 1))
        if [ "$running" -ge 2 ]; then wait -n; running=$((running - 1)); fi
    done
    wait
    while read -r t secs r; do report "$t" "$secs" "$r"; done <"$summary"
    ;;
*)
    echo "fuzz.sh: unknown mode '$mode' (smoke or long)" >&2
    exit 2
    ;;
esac
exit $fail
