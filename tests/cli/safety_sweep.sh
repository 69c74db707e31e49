#!/usr/bin/env bash
# Sweep directories (docs/sweeps.md): a second sweep on a directory in use
# is refused with exit 2 naming the holder (pid and host) and touches none
# of the first one's files; shards of one sweep run side by side, the same
# shard twice does not; --resume and merge refuse a complete run file that
# is another run (another point, replication or sweep); a refused sweep
# prints no "ran 0, N already finished" on stdout.
source "$(dirname "$0")/lib/common.bash"

cat > sw.yaml <<'EOF'
name: sw
horizon: 12h
until: horizon
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 4/h}, gpus: {1: 0.5, 8: 0.5},
              duration: {dist: exponential, mean: 1h}}
sweep:
  replications: 2
  params:
    - {key: scheduler.mode, values: [strict, best_effort]}
EOF
sed 's/^name: sw/name: other/; s/rate: 4\/h/rate: 5\/h/' sw.yaml > other.yaml
# a long sweep to hold a directory: one run of 2000 simulated days
sed 's/^horizon: 12h/horizon: 3000d/; s/replications: 2/replications: 1/' sw.yaml > long.yaml

# ---- one sweep per directory ------------------------------------------------------
"$FLEETSIM" sweep long.yaml -o busy -j 1 -q 2>long.err &
holder=$!
for _ in $(seq 1 100); do [ -s busy/.lock ] && break; sleep 0.05; done
# the holder's own run file appears some time after its lock (slowly under
# ASan): wait for it, so that the listing compares only what the refused
# sweeps could have done
for _ in $(seq 1 200); do ls busy/runs/*.tmp.* >/dev/null 2>&1 && break; sleep 0.05; done
ls busy/runs/ > before.txt 2>/dev/null
expect_exit 2 "$FLEETSIM" sweep long.yaml -o busy -j 1 --resume
expect_err "in use by another fleetsim \\(pid $holder on "
[ -s out.txt ] && bad "a refused sweep printed: $(cat out.txt)" || ok
expect_exit 2 "$FLEETSIM" sweep long.yaml -o busy --shard 0/2 -j 1
expect_err 'in use'
ls busy/runs/ > after.txt 2>/dev/null
cmp -s before.txt after.txt && ok || bad "the refused sweep changed busy/runs: $(cat after.txt)"
kill -INT $holder 2>/dev/null
wait $holder
# shards of one sweep side by side: allowed; the same shard twice: refused
"$FLEETSIM" sweep long.yaml -o sh --shard 0/2 -j 1 -q 2>sh0.err &
s0=$!
for _ in $(seq 1 100); do [ -s sh/.lock-shard-0-of-2 ] && break; sleep 0.05; done
expect_exit 2 "$FLEETSIM" sweep long.yaml -o sh --shard 0/2 -j 1 -q
expect_err "pid $s0"
expect_exit 0 "$FLEETSIM" sweep long.yaml -o sh --shard 1/2 -j 1 -q
kill -INT $s0 2>/dev/null
wait $s0

# ---- run files are checked for what they are -------------------------------------
expect_exit 0 "$FLEETSIM" sweep sw.yaml -o a -j 1 -q
expect_exit 0 "$FLEETSIM" sweep other.yaml -o b -j 1 -q
expect_exit 2 "$FLEETSIM" sweep sw.yaml -o a -j 1          # finished runs, no --resume
expect_err 'add --resume'
[ -s out.txt ] && bad "a refused sweep printed: $(cat out.txt)" || ok
cp a/runs/p0001-r0000.h5 keep.h5
cp a/runs/p0000-r0001.h5 a/runs/p0001-r0000.h5        # another point's file
expect_exit 2 "$FLEETSIM" sweep sw.yaml -o a -j 1 --resume
expect_err 'p0001-r0000.h5 is not run .* point 0, replication 1'
[ -s out.txt ] && bad "a refused sweep printed: $(cat out.txt)" || ok
expect_exit 1 "$FLEETSIM" merge a
expect_err 'p0001-r0000.h5 \(point 0, replication 1'
cp b/runs/p0001-r0000.h5 a/runs/p0001-r0000.h5        # another sweep's file
expect_exit 2 "$FLEETSIM" sweep sw.yaml -o a -j 1 --resume
expect_err 'another sweep'
expect_exit 1 "$FLEETSIM" merge a
expect_err 'another sweep'
cp keep.h5 a/runs/p0001-r0000.h5                      # its own file again
expect_exit 0 "$FLEETSIM" merge a -q
expect_exit 0 "$FLEETSIM" sweep sw.yaml -o a -j 1 --resume
expect_out 'ran 0, 4 already finished'
# merge replaces only a regular file: a FIFO at index.h5 is refused and kept
rm a/index.h5
mkfifo a/index.h5
expect_exit 2 timeout 20 "$FLEETSIM" merge a
expect_err 'a FIFO'
[ -p a/index.h5 ] && ok || bad "merge replaced the FIFO at a/index.h5"
finish
