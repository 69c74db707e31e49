#!/usr/bin/env bash
# mpirun -n 2 fleetsim sweep: the run files are byte-identical to those of
# a 1-thread sweep, the index tables identical, and both ranks did work.
# Skipped (with a message) only when mpirun is absent; a fleetsim built
# without MPI must refuse to run under mpirun with 2 processes.
source "$(dirname "$0")/lib/common.bash"

if ! command -v mpirun >/dev/null; then
    echo "SKIP: mpirun not found (install openmpi-bin and libopenmpi-dev)"
    exit 0
fi
# OpenMPI keeps allocations until exit: no leak reports from sanitized builds
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
MPIRUN=(mpirun -n 2 --oversubscribe --allow-run-as-root)

cat > tiny.yaml <<'YAML'
name: tiny
horizon: 12h
until: horizon
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 8, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 8/h}, gpus: {1: 0.5, 8: 0.5},
              duration: {dist: exponential, mean: 1h}}
sweep:
  replications: 3
  params:
    - {key: scheduler.mode, values: [strict, best_effort]}
YAML

expect_exit 0 "$FLEETSIM" sweep tiny.yaml -o one -j 1 -q
"${MPIRUN[@]}" "$FLEETSIM" sweep tiny.yaml -o mpi -j 1 >out.txt 2>err.txt
rc=$?
if grep -q 'built without MPI' err.txt; then
    [ "$rc" -eq 2 ] && ok || bad "a non-MPI fleetsim under mpirun exited $rc, expected 2"
    echo "SKIP: this fleetsim was built without MPI (FLEETSIM_MPI=OFF); refusal checked"
    finish
    exit $?
fi
[ "$rc" -eq 0 ] && ok || bad "mpirun -n 2 fleetsim sweep exited $rc: $(head -c 600 err.txt)"
expect_out '^mpi +2 ranks; runs done by rank: [0-9]+ [0-9]+'
# dynamic distribution: both ranks ran something, 6 runs in all
read -r a b < <(sed -n 's/^mpi .*by rank: \([0-9]*\) \([0-9]*\)$/\1 \2/p' out.txt)
[ "$((a + b))" -eq 6 ] && ok || bad "ranks ran $a + $b runs, expected 6"
[ "${a:-0}" -ge 1 ] && [ "${b:-0}" -ge 1 ] && ok || bad "one rank did no work ($a, $b)"
for f in one/runs/*.h5; do
    cmp -s "$f" "mpi/runs/$(basename "$f")" && ok || bad "$(basename "$f") differs between 1 thread and 2 MPI ranks"
done
# The MPI calls live in fleetsim-mpi.so, loaded only under a launcher: the
# program itself does not link Open MPI (start-up, docs/performance.md), and
# a module that cannot be found is said, with the places tried.
if command -v readelf >/dev/null; then
    readelf -d "$FLEETSIM" | grep NEEDED > needed.txt
    grep -q 'libmpi' needed.txt && bad "the program links libmpi: $(tr '\n' ' ' < needed.txt)" || ok
fi
FLEETSIM_MPI_MODULE=/nonexistent/fleetsim-mpi.so "${MPIRUN[@]}" "$FLEETSIM" sweep tiny.yaml -o nomod -j 1 \
    >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 1 ] && ok || bad "a missing MPI module: exit $rc, expected 1"
grep -q 'FLEETSIM_MPI_MODULE names /nonexistent/fleetsim-mpi.so, which does not exist' err.txt && ok ||
    bad "a missing MPI module is not said: $(head -c 400 err.txt)"
[ ! -e nomod/index.h5 ] && ok || bad "a sweep without its MPI module wrote an index"
if command -v h5dump >/dev/null; then
    for t in points runs stats; do
        h5dump -d "/$t" one/index.h5 | tail -n +2 > a.txt
        h5dump -d "/$t" mpi/index.h5 | tail -n +2 > b.txt
        [ -s a.txt ] && cmp -s a.txt b.txt && ok || bad "/$t differs between 1 thread and 2 MPI ranks"
    done
fi
finish
