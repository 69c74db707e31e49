#!/usr/bin/env bash
# Issue 38: the program holds no path of the source tree (nor of the build
# tree), and `fleetsim report` finds its script from where the program is:
# an installed tree (<bin>/../share/fleetsim), wherever it was moved, or a
# build tree (share/fleetsim/ beside the program), or FLEETSIM_DATADIR.
source "$(dirname "$0")/lib/common.bash"
unset FLEETSIM_DATADIR

BUILD=$(dirname "$FLEETSIM")
if ldd "$FLEETSIM" 2>/dev/null | grep -q -e libasan -e libubsan; then
    # a sanitizer build (CI's ASan+UBSan suite) keeps each check's source
    # location for its reports; the program as built for use (Release,
    # RelWithDebInfo, Debug) is checked
    echo "note: sanitizer build, source locations kept for its reports: path check not made"
    ok
elif strings -a "$FLEETSIM" | grep -F -e "$SRC" -e "$BUILD" > paths.txt; then
    bad "the program holds the source or build path: $(head -n 5 paths.txt)"
else
    ok
fi

cat > tiny.yaml <<'EOF2'
name: tiny
horizon: 2h
cluster: {pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]}
workload: {synthetic: {arrivals: {rate: 4/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}}
EOF2
expect_exit 0 "$FLEETSIM" run tiny.yaml -o run.h5 -q
# a stand-in script records which copy ran
stub() { mkdir -p "$1" && printf 'import sys\nopen(sys.argv[sys.argv.index("-o") + 1], "w").write("%s\\n")\n' "$2" > "$1/report.py"; }

# the build tree: CMake keeps a copy of analysis/report.py beside the program
[ -r "$BUILD/share/fleetsim/report.py" ] && cmp -s "$BUILD/share/fleetsim/report.py" "$SRC/analysis/report.py" \
    && ok || bad "no copy of analysis/report.py in $BUILD/share/fleetsim"
# an installed tree, moved elsewhere: <bin>/../share/fleetsim/report.py
mkdir -p moved/bin && cp "$FLEETSIM" moved/bin/fleetsim
stub moved/share/fleetsim "from the moved tree"
expect_exit 0 moved/bin/fleetsim report run.h5 -o moved.html
grep -q 'from the moved tree' moved.html && ok || bad "<bin>/../share/fleetsim/report.py not used"
# the environment comes first
stub env "from FLEETSIM_DATADIR"
FLEETSIM_DATADIR="$PWD/env" moved/bin/fleetsim report run.h5 -o env.html >/dev/null 2>&1
grep -q 'from FLEETSIM_DATADIR' env.html && ok || bad "FLEETSIM_DATADIR not used first"
# nowhere: a clear message naming where it looked and the variable to set
mkdir -p lone/bin && cp "$FLEETSIM" lone/bin/fleetsim
if [ ! -e /usr/local/share/fleetsim/report.py ] && [ ! -e /usr/share/fleetsim/report.py ]; then
    expect_exit 1 lone/bin/fleetsim report run.h5 -o lone.html
    expect_err 'report.py not found .*set FLEETSIM_DATADIR'
fi
finish
