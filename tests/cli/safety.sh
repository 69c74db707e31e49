#!/usr/bin/env bash
# Data safety (docs/robustness.md "Output files", docs/sweeps.md "One sweep
# per directory"): an output that is an input is refused with exit 2 and the
# input is left as it was, in every writing command; only regular files are
# replaced (a device, FIFO or directory is refused; -o /dev/null is
# --no-output for run; a symlink is written through; a read-only file is
# refused; a replaced file keeps its mode); stale temporaries of dead
# processes are removed and live ones kept; a 253-byte output name works;
# two sweeps on one directory: the second is refused naming the holder;
# run files of another run are refused by --resume and merge; a refused
# sweep prints no counts; SIGTERM during trace convert leaves nothing.
source "$(dirname "$0")/lib/common.bash"

cat > s.yaml <<'EOF'
name: safety
horizon: 1d
until: horizon
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 4/h}, gpus: {1: 0.5, 8: 0.5},
              duration: {dist: exponential, mean: 1h}}
EOF
cp s.yaml s.orig
# unchanged FILE ORIG: FILE is still ORIG (then restored, so that one
# failure does not hide the next)
unchanged() { cmp -s "$1" "$2" && ok || bad "$1 was changed"; rm -f "$1"; cp "$2" "$1"; }

# ---- an output that names an input ------------------------------------------
expect_exit 2 "$FLEETSIM" run s.yaml -o s.yaml -q
expect_err 'is the input'
unchanged s.yaml s.orig
ln -s s.yaml alias.h5                     # same file, another spelling
expect_exit 2 "$FLEETSIM" run s.yaml -o alias.h5 -q
unchanged s.yaml s.orig
[ -L alias.h5 ] && ok || bad "the symlink was replaced"
ln s.yaml hard.h5                         # same inode
expect_exit 2 "$FLEETSIM" run s.yaml -o ./hard.h5 -q
unchanged s.yaml s.orig
# the trace and the machine list of a scenario are inputs too
cp "$SRC/tests/data/traces/native_minimal.csv" t.csv
cp t.csv t.orig
cat > tr.yaml <<'EOF'
name: tr
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 8}
workload:
  trace: {path: t.csv, format: native}
EOF
expect_exit 2 "$FLEETSIM" run tr.yaml -o t.csv -q
expect_err 't.csv'
unchanged t.csv t.orig
expect_exit 2 "$FLEETSIM" trace convert t.csv -o t.csv
unchanged t.csv t.orig
expect_exit 2 "$FLEETSIM" trace convert --scenario tr.yaml -o t.csv
unchanged t.csv t.orig
expect_exit 2 "$FLEETSIM" trace fit t.csv -o t.csv
unchanged t.csv t.orig
expect_exit 2 "$FLEETSIM" frag tr.yaml -o tr.yaml
unchanged t.csv t.orig
# a sweep or plan directory whose index, manifest or run file is an input
mkdir -p sw/runs
cp s.yaml sw/index.h5
cat >> sw/index.h5 <<'EOF'
sweep:
  replications: 1
  params:
    - {key: scheduler.mode, values: [strict, best_effort]}
EOF
cp sw/index.h5 sw/index.orig
expect_exit 2 "$FLEETSIM" sweep sw/index.h5 -o sw -q
expect_err 'is the input'
unchanged sw/index.h5 sw/index.orig
[ -s out.txt ] && bad "a refused sweep printed: $(cat out.txt)" || ok
cp s.yaml pl.yaml
cat >> pl.yaml <<'EOF'
plan:
  replications: 2
  slo:
    - {metric: wait_prob, max: 0.5}
  choices:
    - {pool: main, nodes: {from: 2, to: 4}}
EOF
mkdir -p pd
cp pl.yaml pd/plan.h5
expect_exit 2 "$FLEETSIM" plan pd/plan.h5 -o pd -q
unchanged pd/plan.h5 pl.yaml
# report: the output is the results file
expect_exit 0 "$FLEETSIM" run s.yaml -o r.h5 -q
cp r.h5 r.orig
expect_exit 2 "$FLEETSIM" report r.h5 -o r.h5
unchanged r.h5 r.orig

# ---- what may be replaced ------------------------------------------------------
# Devices: private nodes made here (root only), never the system's own
# /dev/null, which an old fleetsim run as root would replace.
if [ "$(id -u)" = 0 ] && mknod devnull c 1 3 2>/dev/null && mknod devfull c 1 7 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" run s.yaml -o devnull     # the null device: --no-output
    expect_out 'utilization'
    [ -c devnull ] && ok || bad "the null device node was replaced"
    grep -q '^results ' out.txt && bad "run -o /dev/null claims a results file" || ok
    expect_exit 2 "$FLEETSIM" run s.yaml -o devfull -q
    expect_err 'character device'
    [ -c devfull ] && ok || bad "the /dev/full node was replaced"
    expect_exit 2 "$FLEETSIM" trace convert t.csv -o devnull
    [ -c devnull ] && ok || bad "the null device node was replaced by trace convert"
    expect_exit 2 "$FLEETSIM" trace convert t.csv -o devfull
    [ -c devfull ] && ok || bad "the /dev/full node was replaced by trace convert"
fi
mkfifo fifo
expect_exit 2 "$FLEETSIM" run s.yaml -o fifo -q
expect_err 'a FIFO'
[ -p fifo ] && ok || bad "the FIFO was replaced"
expect_exit 2 "$FLEETSIM" trace convert t.csv -o fifo
[ -p fifo ] && ok || bad "the FIFO was replaced by trace convert"
mkdir adir
expect_exit 2 "$FLEETSIM" run s.yaml -o adir -q
[ -d adir ] && ok || bad "the directory was replaced"
# a symlink is written through: the link stays, its target gets the results
mkdir real
ln -s real/out.h5 link.h5
expect_exit 0 "$FLEETSIM" run s.yaml -o link.h5 -q
[ -L link.h5 ] && ok || bad "the symlink was replaced by a file"
[ -f real/out.h5 ] && ok || bad "the symlink's target was not written"
# a read-only file is refused and left alone; a writable one keeps its mode
cp r.orig ro.h5
chmod 0444 ro.h5
expect_exit 2 "$FLEETSIM" run s.yaml -o ro.h5 -q
expect_err 'read-only'
[ "$(stat -c %a ro.h5)" = 444 ] && ok || bad "ro.h5 mode changed"
unchanged ro.h5 r.orig
cp r.orig rw.h5
chmod 0640 rw.h5
expect_exit 0 "$FLEETSIM" run s.yaml -o rw.h5 -q --seed 3
[ "$(stat -c %a rw.h5)" = 640 ] && ok || bad "rw.h5 mode became $(stat -c %a rw.h5), not 640"
cmp -s rw.h5 r.orig && bad "rw.h5 not replaced" || ok

# ---- temporaries ---------------------------------------------------------------
# a temporary of a dead process is removed; one of a live process is kept
sleep 30 & live=$!
( exit 0 ) & dead=$!; wait $dead
touch "o.h5.tmp.$dead" "o.h5.tmp.$live" "o.h5.tmp.${dead}x" "other.h5.tmp.$dead"
expect_exit 0 "$FLEETSIM" run s.yaml -o o.h5 -q
[ -e "o.h5.tmp.$dead" ] && bad "stale temporary of dead pid $dead kept" || ok
[ -e "o.h5.tmp.$live" ] && ok || bad "temporary of live pid $live removed"
[ -e "o.h5.tmp.${dead}x" ] && ok || bad "a file not of our pattern was removed"
[ -e "other.h5.tmp.$dead" ] && ok || bad "another target's temporary was removed"
kill $live 2>/dev/null; wait $live 2>/dev/null
# a valid 253-byte name: the temporary must still fit NAME_MAX
long=$(printf 'a%.0s' $(seq 1 250)).h5
expect_exit 0 "$FLEETSIM" run s.yaml -o "$long" -q
[ -f "$long" ] && ok || bad "the 253-byte output name was not written"
longcsv=$(printf 'b%.0s' $(seq 1 249)).csv
expect_exit 0 "$FLEETSIM" trace convert t.csv -o "$longcsv"
[ -f "$longcsv" ] && ok || bad "trace convert: the 253-byte output name was not written"
rm -f "o.h5.tmp.$live" "o.h5.tmp.${dead}x" "other.h5.tmp.$dead"
ls ./*.tmp.* >/dev/null 2>&1 && bad "temporaries left: $(ls ./*.tmp.*)" || ok

# SIGTERM during trace convert: no temporary left (input from a FIFO that
# stalls after 200,000 rows, once the temporary exists)
mkfifo tfifo
( echo id,submit,gpus,duration; seq 1 200000 | awk '{print $1","$1",1,60"}'; sleep 5 ) > tfifo &
feeder=$!
"$FLEETSIM" trace convert tfifo --format native -o conv.csv 2>conv.err &
conv=$!
for _ in $(seq 1 50); do ls conv.csv.tmp.* >/dev/null 2>&1 && break; sleep 0.1; done
sleep 0.3
kill -TERM $conv
wait $conv; st=$?
[ $st -ne 0 ] && ok || bad "trace convert exited 0 after SIGTERM"
ls conv.csv* >/dev/null 2>&1 && bad "trace convert left $(ls conv.csv*) after SIGTERM" || ok
kill $feeder 2>/dev/null; wait $feeder 2>/dev/null

# ---- a full disk: the writer's message (file, errno), nothing left behind -----------
mkdir full
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=256k fleetsim-full full 2>/dev/null; then
    sed 's/rate: 4\/h/rate: 3000\/h/; s/nodes: 4,/nodes: 400,/; s/horizon: 1d/horizon: 2d/' s.yaml > many.yaml
    expect_exit 1 "$FLEETSIM" run many.yaml -o full/r.h5 -q
    expect_err 'full/r.h5.*No space left on device'
    grep -q 'writing a job row: input/output error' err.txt && bad "the writer's message was replaced" || ok
    [ -z "$(ls -A full)" ] && ok || bad "a full disk left $(ls full)"
    # a sweep whose runs all fail: exit 1, every run's message, nothing left
    cp s.yaml fs.yaml
    printf 'sweep:\n  replications: 2\n  params:\n    - {key: scheduler.mode, values: [strict, best_effort]}\n' >> fs.yaml
    sed -i 's/rate: 4\/h/rate: 3000\/h/; s/nodes: 4,/nodes: 400,/' fs.yaml
    expect_exit 1 "$FLEETSIM" sweep fs.yaml -o full/d -j 1 -q
    expect_err 'No space left on device'
    ls full/d/runs/*.tmp.* >/dev/null 2>&1 && bad "temporaries left on the full disk" || ok
    umount full
fi

# ---- format auto reads a FIFO or a pipe once ------------------------------------
mkfifo afifo
( cat t.csv > afifo ) &
expect_exit 0 timeout 10 "$FLEETSIM" trace info afifo
expect_out '^jobs +3$'
wait
cat t.csv | timeout 10 "$FLEETSIM" trace info /dev/stdin > out.txt 2> err.txt \
    && ok || bad "trace info from a pipe failed: $(cat err.txt)"
expect_out '^jobs +3$'
gzip -c t.csv | timeout 10 "$FLEETSIM" trace info /dev/stdin > out.txt 2> err.txt \
    && ok || bad "trace info from a gzip pipe failed: $(cat err.txt)"
expect_out '^jobs +3$'

# ---- gzip: what follows a member must be another member ----------------------------
head -3 t.csv | gzip -c > two.csv.gz
first=$(stat -c %s two.csv.gz)
tail -n +4 t.csv | gzip -c >> two.csv.gz
expect_exit 0 "$FLEETSIM" trace info two.csv.gz
expect_out '^jobs +3$'
python3 - "$first" <<'EOF'
import sys
b = bytearray(open("two.csv.gz", "rb").read())
k = int(sys.argv[1])
bad = b[:]; bad[k] ^= 0xff                      # the second member's magic damaged
open("bad2.csv.gz", "wb").write(bad)
open("zeros.csv.gz", "wb").write(b[:k] + bytes(16))   # padding after the first member
EOF
expect_exit 2 "$FLEETSIM" trace info bad2.csv.gz
expect_err 'bad2.csv.gz:[0-9]+: corrupt gzip data \(bytes after gzip member 1 are not a gzip member\)'
expect_exit 2 "$FLEETSIM" trace info zeros.csv.gz
expect_err 'corrupt gzip data'
expect_exit 2 "$FLEETSIM" run tr.yaml --set workload.trace.path=bad2.csv.gz -o g.h5 -q
expect_no_file g.h5

# format auto applies workload.trace.load_scale once, as a named format does
sed 's/format: native}/format: auto, load_scale: 2}/' tr.yaml > la.yaml
sed 's/format: native}/format: native, load_scale: 2}/' tr.yaml > ln.yaml
expect_exit 0 "$FLEETSIM" run la.yaml -o la.h5 -q --set warmup=0s
expect_exit 0 "$FLEETSIM" run ln.yaml -o ln.h5 -q --set warmup=0s
if command -v h5dump >/dev/null; then
    cmp -s <(h5dump -d /jobs la.h5 | tail -n +2) <(h5dump -d /jobs ln.h5 | tail -n +2) && ok \
        || bad "format auto and native give different /jobs with load_scale 2"
fi

# ---- refusals that must come at once ---------------------------------------------
# /dev/zero as a scenario or a manifest: refused at the size cap, not read for ever
expect_exit 2 timeout 20 "$FLEETSIM" validate /dev/zero
expect_err 'larger than 67108864 bytes'
cat > kz.yaml <<'EOF'
name: kz
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 4/h}, gpus: {1: 1}, duration: {dist: exponential, mean: 1h}}
scheduler:
  queue: kueue
  kueue: {manifests: /dev/zero}
EOF
expect_exit 2 timeout 20 "$FLEETSIM" validate kz.yaml
expect_err 'kz.yaml:[0-9]+:[0-9]+: scheduler.kueue.manifests: /dev/zero: the manifest is larger'
# 80,001 keys, the last repeating the fifth: found in well under 10 s
awk 'BEGIN { print "name: x"; for (i = 0; i < 80000; i++) printf "key_%07d: 1\n", i;
             print "key_0000005: 2" }' > many.yaml
expect_exit 2 timeout 10 "$FLEETSIM" validate many.yaml
expect_err "many.yaml:80002:1: duplicate key 'key_0000005' \\(first given at line 7\\)"
# a sweep of 10^10 runs: refused from the counts, at the key, before any point is loaded
cat > big.yaml <<'EOF'
name: big
horizon: 1d
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 4/h}, gpus: {1: 1}, duration: {dist: exponential, mean: 1h}}
sweep:
  replications: 100
  params:
    - {key: workload.synthetic.arrivals.rate, range: {from: 1/h, to: 100/h, steps: 100000}}
    - {key: seed, range: {from: 1, to: 1000, steps: 1000}}
EOF
expect_exit 2 timeout 10 "$FLEETSIM" sweep big.yaml -o bigdir
expect_err 'big.yaml:12:[0-9]+: sweep.params.1: the sweep has more than 10000000 runs'
[ -e bigdir ] && bad "a refused sweep created its directory" || ok

finish
