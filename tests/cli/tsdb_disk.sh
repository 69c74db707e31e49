#!/usr/bin/env bash
# Issue 37 ("Bad input: ... a full disk"): fleetsim metrics on a file system that
# fills up.  Refused before writing when the expected size is above the free
# space; and when the disk fills while writing (a tmpfs with a few inodes: the
# free bytes say yes, the files cannot be made), at each stage of the blocks
# (staging directory, block directory, chunk file) and of the text: exit 2, the
# error named, nothing left.  Needs to mount a tmpfs (root): skipped (SKIP on
# stderr) where it cannot.
source "$(dirname "$0")/lib/common.bash"

cat > m.yaml <<'EOF'
name: disk
seed: 3
horizon: 6h
until: horizon
cluster:
  pools: [{name: h100, gpu: H100, nodes: 4, gpus_per_node: 8}]
workload:
  synthetic:
    arrivals: {rate: 6/h}
    gpus: {1: 0.4, 4: 0.3, 8: 0.3}
    duration: {dist: exponential, mean: 1h}
    tenants: {vision: 0.6, nlp: 0.4}
output: {gpu_intervals: true, timeline_interval: 1m}
EOF
expect_exit 0 "$FLEETSIM" run m.yaml -o m.h5 -q

mkdir mnt
if ! mount -t tmpfs -o size=1m tmpfs mnt 2>/dev/null; then
    echo "SKIP: cannot mount a tmpfs (not root, or no CAP_SYS_ADMIN)" >&2
    finish
    exit $?
fi
trap 'umount "$WORK/mnt" 2>/dev/null; rm -rf "$WORK"' EXIT

# ---- expected above the free space: refused before anything is written -------------------
expect_exit 2 "$FLEETSIM" metrics m.h5 -o mnt/m.om
expect_err 'mnt/m.om: the export is expected to need [0-9.]+ GB and [0-9.]+ GB are free'
[ -z "$(ls -A mnt)" ] && ok || bad "a refused text export left $(ls -A mnt)"
# (the blocks of this run fit in 1 MB: written)
expect_exit 0 "$FLEETSIM" metrics m.h5 --tsdb mnt/db -q
[ -f mnt/db/*/index ] && ok || bad "the blocks were not written: $(ls -AR mnt)"
umount mnt

# ---- the disk fills while writing: the bytes are free, the inodes are not ------------------
# inodes 3: the staging directory; 5: the block's directory; 8: its chunk file
for ni in 3 5 8; do
    mount -t tmpfs -o size=200m,nr_inodes=$ni tmpfs mnt
    expect_exit 2 "$FLEETSIM" metrics m.h5 --tsdb mnt/db -q
    expect_err 'mnt/db/fleetsim-[0-9]+\.tmp-for-creation[^:]*: No space left on device'
    [ -z "$(ls -A mnt)" ] && ok || bad "inodes $ni: a full disk left $(ls -AR mnt)"
    # ... into an existing Prometheus directory: only what was there stays
    mkdir mnt/prom 2>/dev/null && touch mnt/prom/lock 2>/dev/null
    if [ -e mnt/prom/lock ]; then
        expect_exit 2 "$FLEETSIM" metrics m.h5 --tsdb mnt/prom -q
        [ "$(ls -A mnt/prom)" = lock ] && ok || bad "inodes $ni: left in a Prometheus directory: $(ls -A mnt/prom)"
    fi
    umount mnt
done
# the text: its temporary cannot be made
mount -t tmpfs -o size=200m,nr_inodes=1 tmpfs mnt
expect_exit 2 "$FLEETSIM" metrics m.h5 -o mnt/m.om
expect_err 'mnt/m.om: No space left on device'
[ -z "$(ls -A mnt)" ] && ok || bad "text on a full disk left $(ls -A mnt)"
umount mnt
finish
