#!/usr/bin/env bash
# fleetsim plan on an M/M/c workload (Poisson arrivals 8/h, exponential run
# times of mean 1 h, 1-GPU jobs on 1-GPU nodes, FIFO: a = 8 Erlangs): the
# node count chosen for P(wait > 0) <= 0.19 is the smallest c that Erlang C
# (computed here with awk, independently) says meets it (12: C = 0.140 at
# 12, 0.245 at 11); bisection and --scan agree; bisection evaluates at most
# 1 + ceil(log2 16) = 5 of the 16 counts; plan.h5 is complete; a second
# run reuses every run; an interrupted shard resumes; 2 shards at once and 2 MPI ranks give the same
# choice and byte-identical run files; errors exit 2 with the place.
source "$(dirname "$0")/lib/common.bash"

# the scenario (also read by tests/python/test_fleetsim.py test_plan_equals_cli)
cp "$SRC/tests/data/scenarios/mmc-plan.yaml" mmc.yaml

# Erlang C by the Erlang B recursion; the smallest c with C(c, 8) <= 0.19
want=$(awk 'BEGIN { a = 8; b = 1; for (c = 1; c <= 64; c++) { b = a * b / (c + a * b);
        if (c > a) { C = c * b / (c - a * (1 - b)); if (C <= 0.19) { print c; exit } } } }')
[ "$want" = 12 ] && ok || bad "Erlang C gives c = $want, expected 12"

expect_exit 0 "$FLEETSIM" plan mmc.yaml -o bis -j 2
expect_out "^chosen: main, $want nodes of pool main"
expect_out '^evaluated [1-5] candidates in [1-5] rounds \([0-9]+ runs\) of 16 possible'
grep -c '^main ' out.txt > n.txt; [ "$(cat n.txt)" -le 5 ] && ok || bad "bisection printed $(cat n.txt) points"
cp out.txt bis.txt

expect_exit 0 "$FLEETSIM" plan mmc.yaml -o scan -j 2 --scan -q
[ -s out.txt ] && bad "-q printed on stdout" || ok
expect_exit 0 "$FLEETSIM" plan mmc.yaml -o scan -j 2 --scan
expect_out '^0 runs executed now'
expect_out "^chosen: main, $want nodes"
expect_out '^evaluated 16 candidates in 1 round \(80 runs\) of 16 possible'
# common random numbers: the bisection's runs are the scan's, byte for byte
for d in bis/evals/*; do
    for f in "$d"/runs/*.h5; do
        cmp -s "$f" "scan/evals/$(basename "$d")/runs/$(basename "$f")" && ok || bad "$f differs in the scan"
    done
done

if command -v h5dump >/dev/null; then
    h5dump -a /complete bis/plan.h5 | grep -q '(0): 1' && ok || bad "plan.h5 is not complete"
    h5dump -a /chosen_nodes bis/plan.h5 | grep -q "(0): $want\$" && ok || bad "chosen_nodes is not $want"
    h5dump -H -d /plan bis/plan.h5 | grep -q '"wait_prob_hi"' && ok || bad "/plan has no wait_prob_hi"
    h5dump -H -d /plan_runs bis/plan.h5 | grep -q '"replication"' && ok || bad "/plan_runs missing"
fi
ls bis/*.tmp.* >/dev/null 2>&1 && bad "temporary files left" || ok

# two shards at the same time (shared directory); shard 0 writes plan.h5
"$FLEETSIM" plan mmc.yaml -o sh --shard 0/2 -j 1 > sh0.txt 2> sh0.err &
p0=$!
"$FLEETSIM" plan mmc.yaml -o sh --shard 1/2 -j 1 > sh1.txt 2> sh1.err &
p1=$!
wait $p0 && wait $p1 && ok || bad "a shard failed: $(cat sh0.err sh1.err | head -c 600)"
grep -q "^chosen: main, $want nodes" sh0.txt && grep -q "^chosen: main, $want nodes" sh1.txt && ok ||
    bad "shards chose otherwise: $(grep chosen sh0.txt sh1.txt)"
grep -q 'shard 1/2 done; shard 0 writes' sh1.txt && ok || bad "shard 1 did not defer to shard 0"
[ -f sh/plan.h5 ] && ok || bad "shard 0 wrote no plan.h5"
for d in bis/evals/*; do
    for f in "$d"/runs/*.h5; do
        cmp -s "$f" "sh/evals/$(basename "$d")/runs/$(basename "$f")" && ok || bad "$f differs between threads and shards"
    done
done

# a lone shard waits for the others; SIGTERM stops it (exit 1); the same plan
# without shards then reuses its 3 runs (25 - 3 = 22 run now) and agrees
"$FLEETSIM" plan mmc.yaml -o half --shard 0/2 -j 1 > half.txt 2> half.err &
p=$!
for _ in $(seq 1 1200); do
    [ "$(ls half/evals/main-n24/runs/*.h5 2>/dev/null | wc -l)" -ge 3 ] && break
    sleep 0.1
done
sleep 0.5
kill -TERM $p
wait $p
rc=$?
[ "$rc" -eq 1 ] && ok || bad "an interrupted shard exited $rc, expected 1"
grep -q "interrupted while waiting for the other shards' runs in half/evals/main-n24; run the same command again" half.err &&
    ok || bad "no interruption message: $(head -c 600 half.err)"
expect_exit 0 "$FLEETSIM" plan mmc.yaml -o half -j 2
expect_out '^22 runs executed now'
expect_out "^chosen: main, $want nodes"

# MPI (when built with it)
if command -v mpirun >/dev/null; then
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
    mpirun -n 2 --oversubscribe --allow-run-as-root "$FLEETSIM" plan mmc.yaml -o mpi -j 1 >out.txt 2>err.txt
    rc=$?
    if grep -q 'built without MPI' err.txt; then
        [ "$rc" -eq 2 ] && ok || bad "a non-MPI fleetsim under mpirun exited $rc"
    else
        [ "$rc" -eq 0 ] && ok || bad "mpirun fleetsim plan exited $rc: $(head -c 600 err.txt)"
        expect_out "^chosen: main, $want nodes"
        for d in bis/evals/*; do
            for f in "$d"/runs/*.h5; do
                cmp -s "$f" "mpi/evals/$(basename "$d")/runs/$(basename "$f")" && ok ||
                    bad "$f differs between threads and MPI ranks"
            done
        done
    fi
fi

# dry run, errors
expect_exit 0 "$FLEETSIM" plan mmc.yaml --dry-run
expect_out '^choice main: pool main \(H100, 1 GPUs/node\), 16 node counts 9\.\.24'
sed '/^plan:/,$d' mmc.yaml > noplan.yaml
expect_exit 2 "$FLEETSIM" plan noplan.yaml -o e1
expect_err "noplan.yaml:1:1: no 'plan' section"
# an unknown metric is refused before any candidate runs, at its place
sed 's/metric: wait_prob/metric: nope/' mmc.yaml > badm.yaml
expect_exit 2 "$FLEETSIM" plan badm.yaml -o e2
expect_err "^fleetsim plan: badm.yaml:19:16: plan.slo.0.metric: 'nope' is not a summary metric of the runs \(finished_share, or a /summary column of docs/results.md: jobs_submitted, "
[ -z "$(ls e2/evals 2>/dev/null)" ] && ok || bad "a candidate ran before the SLO metric was checked"
expect_exit 2 "$FLEETSIM" plan mmc.yaml -o e2b --set plan.objective=nope
expect_err "mmc.yaml:15:14: plan.objective: 'nope' is not a summary metric"
# value errors carry FILE:LINE:COL
sed 's/max: 0.19/max: 1x/' mmc.yaml > badb.yaml
expect_exit 2 "$FLEETSIM" plan badb.yaml -o e3
expect_err "badb.yaml:19:32: plan.slo.0.max: '1x' is not a number or a duration"
sed 's/pool: main,/pool: gpu,/' mmc.yaml > badp.yaml
expect_exit 2 "$FLEETSIM" plan badp.yaml -o e3b
expect_err "badp.yaml:21:14: plan.choices.0.pool: no pool named 'gpu'"
expect_exit 2 "$FLEETSIM" plan mmc.yaml -o e4 --set plan.replications=1
expect_err "plan.replications"
expect_exit 2 "$FLEETSIM" plan mmc.yaml -o e5 --set plan.choices.0.pool=gpu
expect_err "plan.choices.0.pool: no pool named 'gpu'"
expect_exit 2 "$FLEETSIM" plan
expect_exit 2 "$FLEETSIM" plan mmc.yaml --bogus
finish
