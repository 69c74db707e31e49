#!/usr/bin/env bash
# The layering checks stop the build (docs/layering.md, cmake/fs_layer.cmake).
#
# 1. A copy of tests/layering/probe (three floors sim <- traces <- models and a
#    program, built with the fleetsim build's own fs_layer and
#    fs_layer_symbols) builds; then, one at a time, a file that breaks a rule
#    is added and the build must stop with the message that names it:
#    a hand-written prototype of a higher floor's function, an include
#    through a macro, an unused export (and the list that excuses it, and
#    the stale entry once it is gone), an include circle (and its exception,
#    and the stale exception), a wrong-way include.
# 2. The fleetsim build itself runs the symbol check (its inputs exist), and
#    that check stops on an object of traces/ that declares a models/
#    function by hand.
# 3. Every symbol cmake/exports-for-tests.txt lists is used by a test object
#    (or the fuzz entry points), once every test is built.
#
#   layering.sh SOURCE_DIR BUILD_DIR WORK_DIR C_COMPILER BUILD_TYPE IPO GENERATOR
set -u
src=$1 build=$2 work=$3 cc=$4 btype=$5 ipo=$6 gen=$7

fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cp -r "$src/tests/layering/probe" "$work/src"
p=$work/src b=$work/build log=$work/log

configure() {
    cmake -S "$p" -B "$b" -G "$gen" -DFS_CMAKE_DIR="$src/cmake" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_BUILD_TYPE="$btype" -DCMAKE_INTERPROCEDURAL_OPTIMIZATION="$ipo" "$@" \
        >"$log" 2>&1 || { cat "$log"; fail "configure"; }
}
builds() {     # builds() NAME: the build must succeed
    cmake --build "$b" >"$log" 2>&1 || { cat "$log"; fail "$1: the build stopped"; }
}
stops() {      # stops() NAME TEXT...: the build must fail, its output holding every TEXT
    local name=$1; shift
    if cmake --build "$b" >"$log" 2>&1; then
        cat "$log"; fail "$name: the build did not stop"
    fi
    for t in "$@"; do
        grep -qF -- "$t" "$log" || { cat "$log"; fail "$name: no '$t' in the build's output"; }
    done
    echo "ok: $name"
}

configure
builds "the probe as it is"
[ -f "$b/layering/symbols.ok" ] || fail "the symbol check did not run"
[ -x "$b/probe" ] && "$b/probe" || fail "the probe program"
echo "ok: the probe builds"

# a traces/ file calls a models/ function through a prototype written by hand
cat >"$p/traces/fs_upcall.c" <<'EOF'
int fs_model_step(int x);
int fs_reader_peek(int x);

int fs_reader_peek(int x) { return fs_model_step(x) + 1; }
EOF
stops "hand-written prototype" \
    "traces/fs_upcall.c (floor traces: traces) uses fs_model_step, defined by models/fs_model.c (floor models: models, above it)"
rm "$p/traces/fs_upcall.c"
builds "after removing the prototype"

# the same through an include the include check cannot read
cat >"$p/traces/fs_upmacro.c" <<'EOF'
#define FS_UP_HEADER "../models/fs_model.h"
#include FS_UP_HEADER
int fs_reader_twice(int x);

int fs_reader_twice(int x) { return fs_model_step(x) * 2; }
EOF
stops "include through a macro" "traces/fs_upmacro.c (floor traces: traces) uses fs_model_step"
rm "$p/traces/fs_upmacro.c"

# an export nothing uses
cat >"$p/sim/fs_dead.c" <<'EOF'
int fs_dead_code(void);

int fs_dead_code(void) { return 4; }
EOF
stops "unused export" "unused exports" "sim/fs_dead.c: fs_dead_code (floor sim)"
cp "$p/exports-for-tests.txt" "$work/list"
echo "fs_dead_code   # a test calls it" >>"$p/exports-for-tests.txt"
builds "an unused export in the list of test-only symbols"
rm "$p/sim/fs_dead.c"
stops "stale list entry" "fs_dead_code is defined by no object: remove it from"
cp "$work/list" "$p/exports-for-tests.txt"
# a listed symbol the program uses after all
echo "fs_base_twice  # no longer test-only" >>"$p/exports-for-tests.txt"
stops "listed but used" "fs_base_twice (sim/fs_base.c) is used by the program"
cp "$work/list" "$p/exports-for-tests.txt"
builds "after restoring the list"

# an include circle between two modules of models/
cat >"$p/models/fs_ping.h" <<'EOF'
#ifndef FS_PING_H
#define FS_PING_H
#include "fs_pong.h"
#endif
EOF
cat >"$p/models/fs_pong.c" <<'EOF'
#include "fs_pong.h"
#include "fs_ping.h"
int fs_pong_probe(void);
EOF
cat >"$p/models/fs_pong.h" <<'EOF'
#ifndef FS_PONG_H
#define FS_PONG_H
#endif
EOF
stops "include circle" "include cycles" "models/fs_ping -> models/fs_pong -> models/fs_ping" \
    'models/fs_pong.c: #include "fs_ping.h"'
configure "-DPROBE_CYCLE_EXCEPTIONS=models/fs_pong -> models/fs_ping"
builds "an include circle listed as an exception"
rm "$p/models/fs_ping.h" "$p/models/fs_pong.c" "$p/models/fs_pong.h"
stops "stale circle exception" "FS_INCLUDE_CYCLE_EXCEPTIONS" "  models/fs_pong -> models/fs_ping"
configure -UPROBE_CYCLE_EXCEPTIONS -DPROBE_CYCLE_EXCEPTIONS=
builds "after removing the exception"

# a wrong-way literal include
cat >"$p/traces/fs_upinclude.c" <<'EOF'
#include "../models/fs_model.h"
int fs_reader_third(int x);

int fs_reader_third(int x) { return fs_model_step(x) / 3; }
EOF
stops "wrong-way include" "wrong-way includes" 'traces/fs_upinclude.c: #include "../models/fs_model.h"'
rm "$p/traces/fs_upinclude.c"

# 2. the fleetsim build: its check, with an object of traces/ that calls a
# models/ function through a prototype written by hand
inputs=$(ls "$build"/layering/symbols-inputs-*.cmake 2>/dev/null | head -1)
[ -n "$inputs" ] || fail "the fleetsim build has no symbol check ($build/layering/symbols-inputs-*.cmake)"
[ -f "$build/layering/symbols.ok" ] || fail "the fleetsim build did not run its symbol check"
mkdir -p "$work/fake/CMakeFiles/fleetsim_traces.dir/traces"
cat >"$work/fake/fs_upcall.c" <<'EOF'
int fs_catalog_find(const char *name);
int fs_trace_upcall(const char *name);

int fs_trace_upcall(const char *name) { return fs_catalog_find(name); }
EOF
flags=()
[ "$ipo" = ON ] && flags+=(-flto)
obj=$work/fake/CMakeFiles/fleetsim_traces.dir/traces/fs_upcall.c.o
"$cc" "${flags[@]}" -O2 -c "$work/fake/fs_upcall.c" -o "$obj" || fail "compiling the fake object"
if cmake -DINPUTS="$inputs" -DEXTRA_FLOOR=traces -DEXTRA_OBJECTS="$obj" \
        -DSTAMP="$work/fake/symbols.ok" -P "$src/cmake/symbols.cmake" >"$log" 2>&1; then
    cat "$log"; fail "fleetsim's check accepted traces/ calling fs_catalog_find"
fi
grep -qF "traces/fs_upcall.c (floor traces: traces) uses fs_catalog_find, defined by models/fs_catalog.c (floor models: models, above it)" "$log" \
    || { cat "$log"; fail "fleetsim's check: no message naming fs_catalog_find"; }
echo "ok: fleetsim's own check stops on traces/ calling models/"

# 3. every symbol cmake/exports-for-tests.txt lists is used by a test or the
# fuzz entry points (when every test is built): the list holds no dead code
n_tests=$(ls "$src"/tests/test_*.c | wc -l)
objs=$(find "$build/tests" "$build/fuzz" -name '*.c.o' 2>/dev/null)
n_built=$(printf '%s\n' "$objs" | grep -c '/test_[^/]*\.dir/test_[^/]*\.c\.o$')
if [ "$n_built" -ge "$n_tests" ]; then
    nm_prog=$(sed -n 's/^set(NM \[==\[\(.*\)\]==\])$/\1/p' "$inputs")
    printf '%s\n' "$objs" | xargs "$nm_prog" -u -P 2>/dev/null | awk '{print $1}' | sort -u >"$work/used"
    missing=$(sed 's/#.*//' "$src/cmake/exports-for-tests.txt" | awk 'NF{print $1}' | sort -u \
              | comm -23 - "$work/used")
    [ -z "$missing" ] || fail "cmake/exports-for-tests.txt lists symbols no test uses: $missing"
    echo "ok: every symbol of cmake/exports-for-tests.txt is used by a test"
else
    echo "skipped: the list of test-only exports against the tests ($n_built of $n_tests tests built)"
fi
rm -rf "$work"
echo "layering: all checks stop the build"
