#!/usr/bin/env bash
# Issue 17: install libfleetsim into a temporary prefix and build a program
# out of tree against it, with pkg-config and with find_package(fleetsim);
# both print the summary the CLI prints for the same scenario, exactly.  Then
# the Python package from the same prefix (tests/python/test_fleetsim.py).
# Usage: install.sh BUILD_DIR SOURCE_DIR FLEETSIM
set -u
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
FLEETSIM=$3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fleetsim-install-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
P=$WORK/prefix
cmake --install "$BUILD" --prefix "$P" > "$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; exit 1; }
for f in include/fleetsim.h bin/fleetsim; do [ -e "$P/$f" ] || bad "not installed: $f"; done
LIBDIR=$(dirname "$(ls "$P"/lib*/libfleetsim.so.1 "$P"/lib/*/libfleetsim.so.1 2>/dev/null | head -1)")
[ -n "$LIBDIR" ] && [ -e "$LIBDIR/libfleetsim.a" ] && [ -e "$LIBDIR/pkgconfig/fleetsim.pc" ] &&
    [ -e "$LIBDIR/cmake/fleetsim/fleetsimConfig.cmake" ] || bad "library files missing under $P"
# the shared library exports the API and nothing else
others=$(nm -D --defined-only "$LIBDIR/libfleetsim.so.1" | awk '$2 ~ /[TDBR]/ && $3 !~ /^fleetsim_/' | head -3)
[ -z "$others" ] || bad "libfleetsim.so exports more than fleetsim_*: $others"

# A sanitizer build's library needs the sanitizer runtimes first: consumers
# are built with the same flags, and Python preloads them.
SAN_FLAGS=
PRELOAD=
if readelf -d "$LIBDIR/libfleetsim.so.1" | grep -q 'libasan'; then
    SAN_FLAGS="-fsanitize=address,undefined"
    PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=detect_leaks=0
fi

# the CLI's answer for the same scenario
"$FLEETSIM" run --set horizon=2d --no-output --json > "$WORK/cli.json" || bad "fleetsim run failed"
"$FLEETSIM" run --set horizon=2d -o "$WORK/cli.h5" -q || bad "fleetsim run -o failed"
/usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
for k in ("utilization", "jobs_completed", "wait_mean"):
    print("%s %.17g" % (k, s[k]))' "$WORK/cli.json" > "$WORK/want.txt"

cd "$WORK"
# 1. pkg-config
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
cc -std=c17 -Wall -Wextra -Werror $SAN_FLAGS "$SRC/tests/install/consumer.c" -o consumer-pc \
   $(pkg-config --cflags --libs fleetsim) 2> cc.log || bad "pkg-config build: $(cat cc.log)"
LD_LIBRARY_PATH=$LIBDIR ./consumer-pc > out-pc.txt 2> err-pc.txt || bad "consumer (pkg-config): $(cat err-pc.txt)"
grep -v '^fleetsim ' out-pc.txt | diff - want.txt > /dev/null || bad "pkg-config consumer differs from the CLI: $(cat out-pc.txt)"
cmp -s api.h5 cli.h5 || bad "the C API's results file differs from the CLI's (cmp api.h5 cli.h5)"
# 2. find_package(fleetsim)
cmake -S "$SRC/tests/install" -B cmk -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="$SAN_FLAGS" \
      -DCMAKE_EXE_LINKER_FLAGS="$SAN_FLAGS" > cmk.log 2>&1 &&
    cmake --build cmk > cmkb.log 2>&1 || bad "find_package build: $(tail -5 cmk.log cmkb.log)"
./cmk/consumer > out-cm.txt 2> err-cm.txt || bad "consumer (find_package): $(cat err-cm.txt)"
grep -v '^fleetsim ' out-cm.txt | diff - want.txt > /dev/null || bad "find_package consumer differs from the CLI: $(cat out-cm.txt)"
# 3. a policy plugin built out of tree from the installed header schedules
#    exactly as the built-in FIFO (both modes); its errors are located
cc -std=c17 -Wall -Wextra -Werror -fPIC -shared $(pkg-config --cflags fleetsim) \
   "$SRC/tests/install/plugin_fifo.c" -o plugin_fifo.so 2> ccp.log || bad "plugin build: $(cat ccp.log)"
for mode in strict best_effort; do
    "$FLEETSIM" run --set horizon=3d --set scheduler.mode=$mode -o b-$mode.h5 -q || bad "built-in $mode"
    "$FLEETSIM" run --set horizon=3d --set scheduler.plugin.path=$WORK/plugin_fifo.so \
        --set "scheduler.plugin.options={mode: $mode}" -o p-$mode.h5 -q || bad "plugin $mode"
    /usr/bin/python3 - b-$mode.h5 p-$mode.h5 <<'EOF' || bad "plugin ($mode) schedules differently from the built-in FIFO"
import sys, h5py, numpy as np
a, b = (np.sort(h5py.File(p, "r")["jobs"][:], order="id") for p in sys.argv[1:3])
assert len(a) == len(b) > 1000
for c in ("start", "end", "wait", "pool", "nodes"):
    assert np.array_equal(a[c], b[c], equal_nan=True), c
EOF
done
printf 'name: pl\nhorizon: 3d\ncluster: {pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]}\nworkload: {synthetic: {arrivals: {rate: 4/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}}\nscheduler:\n  plugin: {path: %s, options: {mode: lottery}}\n' "$WORK/plugin_fifo.so" > pl.yaml
"$FLEETSIM" validate pl.yaml > /dev/null 2> pl.err; [ $? -eq 2 ] && grep -q "^pl.yaml:6:[0-9]*: scheduler.plugin.options: policy 'fifo-plugin' refused them: unknown option mode: lottery" pl.err || bad "bad plugin option: $(cat pl.err)"
sed -i "s|$WORK/plugin_fifo.so|$WORK/none.so|" pl.yaml
"$FLEETSIM" run pl.yaml -o x.h5 > /dev/null 2> pl.err; [ $? -eq 2 ] && grep -q "^pl.yaml:6:[0-9]*: scheduler.plugin.path: cannot load" pl.err && [ ! -e x.h5 ] || bad "missing plugin: $(cat pl.err)"
sed -i "s|$WORK/none.so|$(ls $LIBDIR/libfleetsim.so.1)|" pl.yaml
"$FLEETSIM" validate pl.yaml > /dev/null 2> pl.err; [ $? -eq 2 ] && grep -q "exports no fleetsim_policy_entry" pl.err || bad "not a plugin: $(cat pl.err)"
# 3b. ABI 2: a preemptive plugin (tests/install/plugin_srtf.c) schedules
#     exactly as the built-in srtf (work kept), with preemptions; its round-
#     robin mode (a timer per start) gives the hand-computed completions
cc -std=c17 -Wall -Wextra -Werror -fPIC -shared $(pkg-config --cflags fleetsim) \
   "$SRC/tests/install/plugin_srtf.c" -o plugin_srtf.so 2> ccs.log || bad "srtf plugin build: $(cat ccs.log)"
KEEP="--set horizon=3d --set scheduler.checkpoint_interval=1us"
"$FLEETSIM" run $KEEP --set scheduler.queue=srtf -o b-srtf.h5 -q || bad "built-in srtf"
"$FLEETSIM" run $KEEP --set scheduler.plugin.path=$WORK/plugin_srtf.so -o p-srtf.h5 -q || bad "srtf plugin"
/usr/bin/python3 - b-srtf.h5 p-srtf.h5 <<'EOF' || bad "the srtf plugin schedules differently from the built-in srtf"
import sys, h5py, numpy as np
a, b = (np.sort(h5py.File(p, "r")["jobs"][:], order="id") for p in sys.argv[1:3])
assert len(a) == len(b) > 1000
assert a["preemptions"].sum() > 100, a["preemptions"].sum()
for c in ("start", "end", "wait", "pool", "nodes", "preemptions", "queued_s"):
    assert np.array_equal(a[c], b[c], equal_nan=True), c
EOF
# round robin, quantum 1 h, three 2.5 h jobs at 0 on one GPU: A B C A B C,
# then A ends at 6.5 h, B at 7 h, C at 7.5 h
printf 'id,submit,gpus,duration\n1,0,1,9000\n2,0,1,9000\n3,0,1,9000\n' > rr.csv
printf 'name: rr\nhorizon: 1d\ncluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 1}]}\nworkload: {trace: {path: rr.csv}}\nscheduler:\n  checkpoint_interval: 1us\n  plugin: {path: %s, options: {quantum: 3600}}\n' "$WORK/plugin_srtf.so" > rr.yaml
"$FLEETSIM" run rr.yaml -o rr.h5 -q || bad "round-robin plugin run"
/usr/bin/python3 - rr.h5 <<'EOF' || bad "round robin: completions differ from the hand computation"
import sys, h5py, numpy as np
j = np.sort(h5py.File(sys.argv[1], "r")["jobs"][:], order="id")
assert list(j["end"]) == [6.5 * 3600, 7 * 3600, 7.5 * 3600], list(j["end"])
assert list(j["preemptions"]) == [2, 2, 2], list(j["preemptions"])
EOF
# 3c. the host keeps ABI 2's promises (tests/install/plugin_contract.c):
#     preempting a waiting or finishing job, starting a running one and a NaN
#     timer are refused, a timer in the past fires at once; a broken promise
#     makes the plugin's pass fail the run
cc -std=c17 -Wall -Wextra -Werror -fPIC -shared $(pkg-config --cflags fleetsim) \
   "$SRC/tests/install/plugin_contract.c" -o plugin_contract.so -lm 2> ccc.log || bad "contract plugin build: $(cat ccc.log)"
"$FLEETSIM" run --set horizon=3d --set scheduler.plugin.path=$WORK/plugin_contract.so -o c.h5 -q 2> c.err ||
    bad "the host broke a plugin promise: $(cat c.err)"
/usr/bin/python3 - c.h5 <<'EOF' || bad "contract plugin: not every job completed"
import sys, h5py
j = h5py.File(sys.argv[1], "r")["jobs"][:]
assert len(j) > 1000 and (j["state"] == 0).all(), len(j)
EOF
# 4. the Python package, imported from the installed prefix
#    (python3-pytest, -pandas, -h5py, -numpy: .ci/install-deps installs them; a
#    missing one is a failure, not a skip, so that CI cannot pass without it)
if /usr/bin/python3 -c 'import pytest, pandas, h5py, numpy' 2>/dev/null; then
    LD_PRELOAD="$PRELOAD" PYTHONPATH=$P/share/fleetsim/python FLEETSIM_CLI=$FLEETSIM \
        /usr/bin/python3 -m pytest -q -p no:cacheprovider "$SRC/tests/python/test_fleetsim.py" > py.log 2>&1 ||
        bad "pytest: $(tail -20 py.log)"
    tail -1 py.log
else
    bad "python3-pytest, python3-pandas, python3-h5py or python3-numpy is not installed (.ci/install-deps)"
fi
[ "$fails" -eq 0 ] && echo "install: ok" || exit 1
