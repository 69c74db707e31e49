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
# the .pc file's rpath: it runs without LD_LIBRARY_PATH (issue 39)
readelf -d consumer-pc | grep -q 'R\(UN\)\?PATH.*'"$LIBDIR" || bad "pkg-config consumer has no rpath to $LIBDIR"
env -u LD_LIBRARY_PATH ./consumer-pc > out-pc.txt 2> err-pc.txt || bad "consumer (pkg-config): $(cat err-pc.txt)"
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
# 3d. broken plugins (tests/install/plugin_bad.c): a message and exit status
#     2 from validate and run, never a crash, no results file (issue 39).  A
#     plugin that crashes while loading is caught by the forked probe; under
#     ASan the child's crash is ASan's report and exit status instead.
CRASH="crashed while loading (SIGSEGV)"
[ -n "$SAN_FLAGS" ] && CRASH="\(crashed\|exited\) while loading"
printf 'name: bad\nhorizon: 1d\ncluster: {pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]}\nworkload: {synthetic: {arrivals: {rate: 4/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}}\nscheduler:\n  plugin: {path: PLUGIN}\n' > bad.tmpl
bad_plugin() {  # NAME "CFLAGS" MESSAGE
    cc -std=c17 -Wall -Wextra -Werror -fPIC -shared $(pkg-config --cflags fleetsim) $2 \
       "$SRC/tests/install/plugin_bad.c" -o "$1.so" 2> "$1.cc" || { bad "$1: build: $(cat "$1.cc")"; return; }
    sed "s|PLUGIN|$WORK/$1.so|" bad.tmpl > "$1.yaml"
    "$FLEETSIM" validate "$1.yaml" > /dev/null 2> "$1.err"; local rc=$?
    [ $rc -eq 2 ] && grep -q "^$1.yaml:6:[0-9]*: scheduler.plugin.path: $WORK/$1.so: $3" "$1.err" ||
        bad "validate, $1 plugin: exit $rc: $(cat "$1.err")"
    "$FLEETSIM" run "$1.yaml" -o "$1.h5" > /dev/null 2> "$1.err"; rc=$?
    [ $rc -eq 2 ] && grep -q "^$1.yaml:6:[0-9]*: scheduler.plugin.path: $WORK/$1.so: $3" "$1.err" &&
        [ -z "$(ls "$1".h5* 2>/dev/null)" ] || bad "run, $1 plugin: exit $rc: $(cat "$1.err")"
}
bad_plugin abi4 "-DBAD_ABI=4" "ABI 4, this fleetsim loads ABI 1 to 3"
bad_plugin abi0 "-DBAD_ABI=0" "ABI 0, this fleetsim loads ABI 1 to 3"
bad_plugin nopass "-DBAD_NO_PASS" 'no `pass` function (create, enqueue, pass and queued are required)'
bad_plugin wild "-DBAD_WILD" "$CRASH"
bad_plugin crashcreate "-DBAD_CREATE" "$CRASH"
# the same source as an ABI 1 FIFO still loads and runs
cc -std=c17 -Wall -Wextra -Werror -fPIC -shared $(pkg-config --cflags fleetsim) \
   "$SRC/tests/install/plugin_bad.c" -o abi1.so 2> abi1.cc || bad "abi1 build: $(cat abi1.cc)"
sed "s|PLUGIN|$WORK/abi1.so|" bad.tmpl > abi1.yaml
"$FLEETSIM" validate abi1.yaml > /dev/null 2> abi1.err && "$FLEETSIM" run abi1.yaml -o abi1.h5 -q 2>> abi1.err &&
    [ -e abi1.h5 ] || bad "an ABI 1 plugin no longer loads: $(cat abi1.err)"
# a plugin that crashes during the run (for the isolated Python run below)
cc -std=c17 -Wall -Wextra -Werror -fPIC -shared $(pkg-config --cflags fleetsim) -DBAD_RUN \
   "$SRC/tests/install/plugin_bad.c" -o crashrun.so 2> crashrun.cc || bad "crashrun build: $(cat crashrun.cc)"

# 3e. the example plugins are installed with a Makefile that builds them out
#     of tree; the ABI 3 one (plugin_speed.c) chooses each job's GPU type by
#     its speed (cluster.speed) and starts it there (start_in), or on the
#     nodes it chooses (place).  Two pools: A100 (node 0, 8 GPUs, pool 0) and
#     H100 (nodes 1 and 2, one GPU each, pool 1), jobs of class 0 run twice as
#     fast on H100; six 1-GPU jobs of 1 h at time 0.
mkdir ex && (cd ex && make -s -f "$P/share/fleetsim/examples/plugins/Makefile" CFLAGS="-std=c17 -O2 -Wall -Wextra -Werror") > ex.log 2>&1 &&
    [ -e ex/plugin_fifo.so ] && [ -e ex/plugin_srtf.so ] && [ -e ex/plugin_speed.so ] ||
    bad "the installed example plugins do not build: $(cat ex.log)"
printf 'id,submit,gpus,duration\n1,0,1,3600\n2,0,1,3600\n3,0,1,3600\n4,0,1,3600\n5,0,1,3600\n6,0,1,3600\n' > sp.csv
speed_run() {  # NAME OPTIONS -> NAME.h5
    printf 'name: sp\nhorizon: 1d\ncluster:\n  pools: [{name: a, gpu: A100, nodes: 1, gpus_per_node: 8}, {name: h, gpu: H100, nodes: 2, gpus_per_node: 1}]\n  speed: [{class: 0, gpu: H100, factor: 2}]\nworkload: {trace: {path: sp.csv}}\noutput: {gpu_intervals: true}\nscheduler:\n  plugin: {path: %s, options: %s}\n' "$WORK/ex/plugin_speed.so" "$2" > "$1.yaml"
    "$FLEETSIM" run "$1.yaml" -o "$1.h5" -q 2> "$1.err" || bad "speed plugin ($2): $(cat "$1.err")"
}
speed_run sp-wait "{prefer: fastest, wait: 'true'}"
speed_run sp-spill "{prefer: fastest, wait: 'false'}"
speed_run sp-slow "{prefer: slowest, wait: 'true'}"
speed_run sp-last "{prefer: fastest, wait: 'true', nodes: last}"
/usr/bin/python3 - sp-wait.h5 sp-spill.h5 sp-slow.h5 sp-last.h5 <<'EOF' || bad "the speed plugin (ABI 3) placed or timed jobs otherwise than computed by hand"
import sys, h5py, numpy as np
def jobs(p):
    j = np.sort(h5py.File(p, "r")["jobs"][:], order="id")
    return list(j["pool"]), list(j["start"]), list(j["run"])
# all on H100, two at a time, 30 min each
assert jobs(sys.argv[1]) == ([1] * 6, [0, 0, 1800, 1800, 3600, 3600], [1800] * 6), jobs(sys.argv[1])
# two on H100 (30 min), the four others on A100 at once (1 h)
assert jobs(sys.argv[2]) == ([1, 1, 0, 0, 0, 0], [0] * 6, [1800, 1800] + [3600] * 4), jobs(sys.argv[2])
# the slowest type: all on A100 at once
assert jobs(sys.argv[3]) == ([0] * 6, [0] * 6, [3600] * 6), jobs(sys.argv[3])
# place: the same times, each start on the last H100 node with room (2, then 1);
# the placement (pack) takes node 1 first
def nodes(p):
    g = np.sort(h5py.File(p, "r")["gpu_intervals"][:], order=["job", "start"])
    return list(g["node"])
assert jobs(sys.argv[4]) == jobs(sys.argv[1]), jobs(sys.argv[4])
assert nodes(sys.argv[4]) == [2, 1, 2, 1, 2, 1], nodes(sys.argv[4])
assert nodes(sys.argv[1]) == [1, 2, 1, 2, 1, 2], nodes(sys.argv[1])
EOF

# 4. the Python package, imported from the installed prefix
#    (python3-pytest, -pandas, -h5py, -numpy: .ci/install-deps installs them; a
#    missing one is a failure, not a skip, so that CI cannot pass without it)
if /usr/bin/python3 -c 'import pytest, pandas, h5py, numpy' 2>/dev/null; then
    LD_PRELOAD="$PRELOAD" PYTHONPATH=$P/share/fleetsim/python FLEETSIM_CLI=$FLEETSIM \
        FLEETSIM_TEST_CRASH_PLUGIN=$WORK/crashrun.so \
        /usr/bin/python3 -m pytest -q -p no:cacheprovider "$SRC/tests/python/test_fleetsim.py" > py.log 2>&1 ||
        bad "pytest: $(tail -20 py.log)"
    tail -1 py.log
else
    bad "python3-pytest, python3-pandas, python3-h5py or python3-numpy is not installed (.ci/install-deps)"
fi
# 5. pip install of the package in a fresh virtual environment, offline
#    (python3-venv, python3-setuptools, python3-pip: .ci/install-deps), from
#    the installed prefix (it finds the prefix's library by itself) and from
#    the source tree (it finds the library through FLEETSIM_LIB); no PYTHONPATH
cat > venv_check.py <<'EOF'
import json, os, sys
import fleetsim
venv = sys.argv[1]
assert fleetsim.__file__.startswith(venv), fleetsim.__file__
want = json.load(open(sys.argv[2]))["summary"]
r = fleetsim.run(overrides={"horizon": "2d"})
for k in ("utilization", "jobs_completed", "wait_mean"):
    assert r.summary[k] == want[k], (k, r.summary[k], want[k])
jobs = r["jobs"]                          # a pandas DataFrame, by table name
assert type(jobs).__name__ == "DataFrame" and len(jobs) == r.summary["jobs_submitted"]
assert r.table("jobs").equals(jobs) and "timeline" in r.tables()
print("venv ok", os.path.basename(venv), len(jobs))
EOF
pip_check() {  # NAME SOURCE [VAR=VALUE at run time]
    local v=$WORK/$1
    /usr/bin/python3 -m venv --system-site-packages "$v" > "$1.log" 2>&1 &&
        env -u PYTHONPATH "$v/bin/pip" install -q --no-build-isolation --no-index "$2" >> "$1.log" 2>&1 ||
        { bad "$1: pip install $2 in a fresh venv: $(tail -5 "$1.log")"; return; }
    (cd / && env -u PYTHONPATH -u FLEETSIM_LIB LD_PRELOAD="$PRELOAD" ${3:+"$3"} \
        "$v/bin/python" "$WORK/venv_check.py" "$v" "$WORK/cli.json") >> "$1.log" 2>&1 ||
        bad "$1: the pip-installed package: $(tail -5 "$1.log")"
}
if /usr/bin/python3 -c 'import venv, ensurepip, setuptools' 2>/dev/null; then
    pip_check venv-prefix "$P/share/fleetsim/python"
    cp -r "$SRC/analysis/python" pysrc && find pysrc -name __pycache__ -prune -exec rm -rf {} +
    pip_check venv-source "$WORK/pysrc" "FLEETSIM_LIB=$LIBDIR/libfleetsim.so.1"
    [ -z "$(cd pysrc && ls -d build *.egg-info 2>/dev/null)" ] || bad "pip install left build files in the source tree"
else
    bad "python3-venv, python3-pip or python3-setuptools is not installed (.ci/install-deps)"
fi
[ "$fails" -eq 0 ] && echo "install: ok" || exit 1
