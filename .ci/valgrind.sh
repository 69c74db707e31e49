#!/usr/bin/env bash
# Runs fleetsim's core unit tests under valgrind memcheck (docs/robustness.md):
# any memory error or definite leak fails.  .ci/valgrind.sh BUILD_DIR
# (a plain, unsanitized build).  Two tests at a time.
set -uo pipefail
build=${1:?build directory}
TESTS=(test_units test_rng test_evq test_sim test_dist test_stats test_cluster test_fifo
       test_native test_results test_io test_limits test_failure test_recovery test_cost
       test_volcano test_kueue test_sched_fast test_plan test_mig test_tenants test_pods
       test_startup test_autoscale test_service test_carbon test_place test_capstates test_mig_run
       test_taint test_alloc test_mig_recut test_profile test_fabric test_operator
       test_sched_outages)
fail=0
run() {
    local t=$1 log=$build/valgrind-$1.log
    if (cd "$build/tests" && FS_UNDER_VALGRIND=1 valgrind -q --error-exitcode=99 --leak-check=full \
            --errors-for-leak-kinds=definite --show-leak-kinds=definite "./$t") >"$log" 2>&1; then
        echo "valgrind $t: clean"
    else
        echo "valgrind $t: FAILED (see $log)"; tail -n 30 "$log"; return 1
    fi
}
pids=()
for t in "${TESTS[@]}"; do
    run "$t" & pids+=($!)
    if [ "${#pids[@]}" -ge 2 ]; then wait "${pids[0]}" || fail=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
exit $fail
