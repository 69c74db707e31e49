#!/usr/bin/env bash
# A results file cut short (an interrupted copy, a full disk): `report`,
# `compare` (and every reader of analysis/fs_h5read.c and fs_index.c) say it is
# truncated, naming the file and both sizes, exit 2, and write nothing
# (issue 39).  Cuts: inside the data, inside the superblock, right after the
# signature; a whole file still reads; a file with no HDF5 signature is
# still "not an HDF5 file".
source "$(dirname "$0")/lib/common.bash"

cat > t.yaml <<'YAML'
name: truncated
seed: 1
horizon: 6h
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic:
    arrivals: {rate: 4/h}
    gpus: {1: 0.5, 8: 0.5}
    duration: {dist: exponential, mean: 1h}
YAML
expect_exit 0 "$FLEETSIM" run t.yaml -o whole.h5 -q
size=$(stat -c %s whole.h5)

for cut in $((size / 2)) 100 40 9; do   # 40, 9: inside a version 0 superblock
    cp whole.h5 cut.h5
    truncate -s "$cut" cut.h5
    rm -f r.html
    expect_exit 2 "$FLEETSIM" report cut.h5 -o r.html
    expect_err "^fleetsim report: cut\.h5: truncated: the file has $cut bytes(, its HDF5 superblock records $size | and ends inside its HDF5 superblock)"
    if grep -q "HDF5:" err.txt; then bad "cut at $cut: an HDF5 error leaked: $(cat err.txt)"; else ok; fi
    expect_no_file r.html
    expect_exit 2 "$FLEETSIM" compare cut.h5 whole.h5
    expect_err "cut\.h5: truncated: the file has $cut bytes"
done
# the size the superblock records is the whole file's
cp whole.h5 cut.h5
truncate -s $((size - 1)) cut.h5
expect_exit 2 "$FLEETSIM" report cut.h5 -o r.html
expect_err "truncated: the file has $((size - 1)) bytes, its HDF5 superblock records $size "

# not HDF5 at all: the reader's own message, unchanged
printf 'id,submit\n' > not.h5
expect_exit 2 "$FLEETSIM" report not.h5 -o r.html
expect_err "not\.h5: not an HDF5 file"

finish
