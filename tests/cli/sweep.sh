#!/usr/bin/env bash
# fleetsim sweep / merge: 1 worker, 2 and 3 worker processes and 2 shards +
# merge give byte-identical run files and identical index tables; a killed sweep
# resumes without redoing finished runs; merge refuses an incomplete set;
# a directory of another sweep is refused; errors carry FILE:LINE:COL.
source "$(dirname "$0")/lib/common.bash"

cat > tiny.yaml <<'EOF'
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
  replications: 2
  params:
    - {key: scheduler.mode, values: [strict, best_effort]}
EOF
RUNS="p0000-r0000 p0000-r0001 p0001-r0000 p0001-r0001"

# index tables as text (h5dump, without the file name line)
tables() { for t in points runs stats; do h5dump -d "/$t" "$1/index.h5" | tail -n +2; done; }

expect_exit 0 "$FLEETSIM" sweep tiny.yaml -o one -j 1
expect_out '2 points x 2 replications = 4 runs'
expect_out 'index +one/index.h5'
expect_out 'on 1 process$'
expect_out 'hdf5 lock +held [0-9.]+ s of [0-9.]+ s of runs'
expect_exit 0 "$FLEETSIM" sweep tiny.yaml -o two -j 2
expect_out 'ran 4, 0 already finished, 0 failed; [0-9.]+ s on 2 processes'
# more workers than runs: every run once, by whichever process takes it
expect_exit 0 "$FLEETSIM" sweep tiny.yaml -o three -j 5 -q
for r in $RUNS; do
    [ -f "one/runs/$r.h5" ] && ok || bad "one/runs/$r.h5 missing"
    cmp -s "one/runs/$r.h5" "two/runs/$r.h5" && ok || bad "$r.h5 differs between 1 and 2 workers"
    cmp -s "one/runs/$r.h5" "three/runs/$r.h5" && ok || bad "$r.h5 differs between 1 and 5 workers"
done
[ "$(ls three/runs | grep -c '\.h5$')" = 4 ] && ok || bad "5 workers did not write exactly the 4 runs"
cmp -s one/index.h5 three/index.h5 && ok || bad "index.h5 differs between 1 and 5 workers"
ls one/runs/*.tmp.* >/dev/null 2>&1 && bad "temporary files left" || ok

# shards: merge refuses until every shard has finished
expect_exit 0 "$FLEETSIM" sweep tiny.yaml -o sh --shard 0/2 -j 1
expect_out 'shard 0/2: 2 runs of its 2'
expect_out 'fleetsim merge sh'
[ -e sh/index.h5 ] && bad "a shard wrote the index" || ok
expect_exit 1 "$FLEETSIM" merge sh
expect_err '2 of 4 runs are not finished: runs/p0000-r0001.h5 \(missing\), runs/p0001-r0001.h5 \(missing\)'
[ -e sh/index.h5 ] && bad "merge wrote an index for an incomplete set" || ok
expect_exit 0 "$FLEETSIM" sweep tiny.yaml -o sh --shard 1/2 -j 1 -q
expect_exit 0 "$FLEETSIM" merge sh
for r in $RUNS; do
    cmp -s "one/runs/$r.h5" "sh/runs/$r.h5" && ok || bad "$r.h5 differs between threads and shards"
done

if command -v h5dump >/dev/null; then
    tables one > t1.txt; tables two > t2.txt; tables sh > t3.txt
    [ -s t1.txt ] && ok || bad "no index tables"
    cmp -s t1.txt t2.txt && ok || bad "index tables differ between 1 and 2 threads"
    cmp -s t1.txt t3.txt && ok || bad "index tables differ between threads and shards + merge"
    cmp -s one/index.h5 two/index.h5 && cmp -s one/index.h5 sh/index.h5 && ok ||
        bad "index.h5 is not byte-identical across 1 thread, 2 threads and shards + merge"
    grep -q '"scheduler.mode"' t1.txt && ok || bad "/points has no scheduler.mode column"
    grep -q '"best_effort"' t1.txt && ok || bad "/points lacks the values"
    grep -q '"wait_mean"' t1.txt && ok || bad "/stats lacks wait_mean"
    h5dump -a /n_runs one/index.h5 | grep -q '(0): 4' && ok || bad "n_runs is not 4"
    # `name` is the scenario's name key (not its path), in the index and the manifest
    h5dump -a /name one/index.h5 | grep -q '(0): "tiny"' && ok || bad "index name is not tiny"
    h5dump -a /name sh/sweep.h5 | grep -q '(0): "tiny"' && ok || bad "manifest name is not tiny"
    # the external links resolve from another directory
    (cd / && h5dump -d /runs_data/p0001-r0001/summary "$WORK/one/index.h5") > link.txt 2>&1 \
        && grep -q jobs_submitted link.txt && ok || bad "external link /runs_data/p0001-r0001 does not resolve"
fi

# another sweep into the same directory: refused
sed 's/8\/h/9\/h/' tiny.yaml > other.yaml
expect_exit 2 "$FLEETSIM" sweep other.yaml -o one -j 1
expect_err 'one holds another sweep'
# the same sweep again without --resume: refused; with it: nothing to do
expect_exit 2 "$FLEETSIM" sweep tiny.yaml -o one -j 1
expect_err 'already holds 4 finished runs of this sweep .*--resume'
expect_exit 0 "$FLEETSIM" sweep tiny.yaml -o one -j 1 --resume
expect_out 'ran 0, 4 already finished'

# resume after a kill -9: finished runs are kept (same inode and time),
# stale temporary files are removed, the result equals the clean sweep
cat > slow.yaml <<'EOF'
name: slow
horizon: 12h
until: horizon
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 8, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 8/h}, gpus: {1: 0.5, 8: 0.5},
              duration: {dist: exponential, mean: 1h}}
sweep:
  replications: 4
  params:
    - {key: scheduler.mode, values: [strict, best_effort]}
EOF
expect_exit 0 "$FLEETSIM" sweep slow.yaml -o clean -j 2 -q
"$FLEETSIM" sweep slow.yaml -o killed -j 1 -q >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do
    n=$(ls killed/runs 2>/dev/null | grep -c '^p[0-9]*-r[0-9]*\.h5$')
    [ "$n" -ge 2 ] && break
    sleep 0.05
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
touch killed/runs/p0001-r0003.h5.tmp.99999   # a stale temporary of a killed run
done_before=$(ls killed/runs | grep -E '^p[0-9]*-r[0-9]*\.h5$' | sort)
stat -c '%n %i %Y' $(printf 'killed/runs/%s ' $done_before) > before.txt
nb=$(echo "$done_before" | wc -w)
if [ "$nb" -ge 8 ]; then
    echo "note: the sweep finished before it was killed; resume checks are weaker" >&2
fi
expect_exit 0 "$FLEETSIM" sweep slow.yaml -o killed -j 2 --resume
expect_out "already finished"
stat -c '%n %i %Y' $(printf 'killed/runs/%s ' $done_before) > after.txt
cmp -s before.txt after.txt && ok || bad "resume touched finished runs"
ls killed/runs/*.tmp.* >/dev/null 2>&1 && bad "stale temporary files left after resume" || ok
for f in clean/runs/*.h5; do
    cmp -s "$f" "killed/runs/$(basename "$f")" && ok || bad "$(basename "$f") differs after resume"
done
[ -f killed/index.h5 ] && ok || bad "no index after resume"

# the sweep section in the language: validate, a single run ignores it
expect_exit 0 "$FLEETSIM" validate tiny.yaml
expect_exit 0 "$FLEETSIM" run tiny.yaml -o single.h5 -q
printf 'sweep:\n  params:\n    - {key: scheduler.mode, values: [strict, fastest]}\n' > badtail.yaml
head -9 tiny.yaml > bad.yaml; cat badtail.yaml >> bad.yaml
expect_exit 2 "$FLEETSIM" sweep bad.yaml -o bad
expect_err "^bad.yaml:12:46: sweep.params.0: scheduler.mode=fastest: 'fastest' is not one of: best_effort, strict"
expect_no_file bad
expect_exit 2 "$FLEETSIM" sweep tiny.yaml -o x --shard 2/2
expect_exit 2 "$FLEETSIM" sweep tiny.yaml

# the shipped example expands to 10 points x 10 replications
expect_exit 0 "$FLEETSIM" sweep "$SRC/scenarios/sweep-fifo-load.yaml" --dry-run
expect_out '10 points x 10 replications = 100 runs'
expect_out 'point 9: scheduler.mode=best_effort workload.synthetic.arrivals.rate=17/h'

# the run limit names the sweep section's place
cat > toobig.yaml <<'EOF2'
name: toobig
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 10, gpus_per_node: 1}
workload:
  synthetic:
    arrivals: {rate: 8/h}
    gpus: {1: 1.0}
    duration: {dist: exponential, mean: 1h}
sweep:
  params:
    - {key: cluster.pools.0.nodes, range: {from: 1, to: 100000, steps: 100000}}
  replications: 1000
EOF2
expect_exit 2 "$FLEETSIM" sweep toobig.yaml -o toobig --dry-run
expect_err '^toobig.yaml:12:13: sweep.params.0: the sweep has more than 10000000 runs'
# ---- progress off a terminal: whole lines with runs done and an ETA, at the rate asked ----
expect_exit 0 "$FLEETSIM" sweep tiny.yaml -o prog -j 1 -q --progress 0.000001
grep -q $'\r' err.txt && bad "a carriage return in the sweep's progress log" || ok
grep -Eq '^fleetsim sweep: [1-4] of 4 runs done \([0-9]+%\), .* elapsed, ETA ' err.txt && ok \
    || bad "no sweep progress line with an ETA: $(head -c 300 err.txt)"
expect_exit 0 "$FLEETSIM" sweep tiny.yaml -o prog2 -j 1 -q
[ ! -s err.txt ] && ok || bad "a short sweep off a terminal printed progress before 30 s"
expect_exit 2 "$FLEETSIM" sweep tiny.yaml -o prog3 --progress -1
expect_err '--progress needs seconds'
expect_exit 0 "$FLEETSIM" versus tiny.yaml -p a -p b=scheduler.mode=strict -r 2 -o vs -q --progress 0.000001
grep -Eq '^fleetsim sweep: [1-4] of 4 runs done' err.txt && ok \
    || bad "versus shows no progress line off a terminal: $(head -c 300 err.txt)"
finish
