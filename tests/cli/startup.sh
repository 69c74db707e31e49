#!/usr/bin/env bash
# Start-up (docs/performance.md, "Start-up"): the program loads neither
# Open MPI (its calls are in fleetsim-mpi.so, loaded under an MPI launcher)
# nor, where the distribution ships HDF5's static archives
# (FS_HDF5_STATIC=1, set by CMake), the shared HDF5 and the 30-odd
# libraries it brings (curl, Kerberos, GnuTLS); nor any library CMake
# linked from its static archive (FS_STATIC_LIBS, the stems: "libgsl
# libyaml libz ..."), neither as the program's own need nor through
# another library; linked at a fixed address (FS_NO_PIE=1), the program
# has (almost) no relocations for the loader to apply.  Not timed: what is loaded is counted, which is what
# the time follows.
source "$(dirname "$0")/lib/common.bash"

if ! command -v readelf >/dev/null; then
    echo "SKIP: readelf not found (binutils)"
    exit 0
fi
readelf -d "$FLEETSIM" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' > needed.txt
[ -s needed.txt ] && ok || bad "readelf listed no NEEDED library"
for lib in libmpi libopen-rte libopen-pal libhwloc; do
    grep -q "^$lib" needed.txt && bad "the program links $lib: $(tr '\n' ' ' < needed.txt)" || ok
done
if [ "${FS_HDF5_STATIC:-0}" = 1 ]; then
    for lib in libhdf5 libcurl libcrypto libssl libgssapi; do
        grep -q "^$lib" needed.txt && bad "the program links $lib: $(tr '\n' ' ' < needed.txt)" || ok
    done
    n=$(wc -l < needed.txt)
    [ "$n" -le 12 ] && ok || bad "the program needs $n libraries directly: $(tr '\n' ' ' < needed.txt)"
fi
# every library the loader maps (LD_TRACE_LOADED_OBJECTS: ldd's list)
LD_TRACE_LOADED_OBJECTS=1 "$FLEETSIM" > loaded.txt 2>&1
grep -q 'libc\.so' loaded.txt && ok || bad "the loader's list names no libc: $(head -c 600 loaded.txt)"
sed -n 's/^[[:space:]]*\([^[:space:]]*\).*/\1/p' loaded.txt | sed 's,.*/,,' > mapped.txt
# a library linked statically must not come back shared (an archive
# dropped from the link, a shared library listed ahead of it)
for stem in ${FS_STATIC_LIBS:-}; do
    if grep -Eq "^$stem[-_.]" needed.txt mapped.txt; then
        bad "$stem is linked statically, yet the program loads it: $(tr '\n' ' ' < mapped.txt)"
    else
        ok
    fi
done
# linked at a fixed address (FS_NO_PIE=1: FLEETSIM_PIE off), the loader
# has no relative relocations to apply to the program
if [ "${FS_NO_PIE:-0}" = 1 ]; then
    readelf -h "$FLEETSIM" | grep -Eq 'Type:[[:space:]]+EXEC' && ok ||
        bad "the program is not linked at a fixed address: $(readelf -h "$FLEETSIM" | grep Type:)"
    nrel=$(readelf -r "$FLEETSIM" | grep -c R_X86_64_RELATIVE)
    [ "$nrel" -le 100 ] && ok || bad "the loader applies $nrel relative relocations to the program"
fi
# ISA-L (the results' compressor, linked BIND_NOW by Debian: 194
# symbols resolved at load) is loaded with dlopen by the results writer:
# not a NEEDED library, not mapped by the commands that write no file,
# mapped by the ones that do
isal=${FS_ISAL_SONAME:-libisal.so.2}
grep -Eq '^libisal[-_.]' needed.txt mapped.txt &&
    bad "the program loads ISA-L at start: $(tr '\n' ' ' < mapped.txt)" || ok
ld_libs() {   # ld_libs CMD...: the loader's log (LD_DEBUG=libs) in ld.txt
    LD_DEBUG=libs LD_DEBUG_OUTPUT="$WORK/lddbg" "$@" >out.txt 2>err.txt
    local rc=$?
    cat "$WORK"/lddbg.* > ld.txt 2>/dev/null
    rm -f "$WORK"/lddbg.*
    return $rc
}
ld_libs "$FLEETSIM" version && ok || bad "version failed under LD_DEBUG"
grep -q 'calling init' ld.txt && ok || bad "LD_DEBUG=libs logged nothing: $(head -c 300 ld.txt)"
for cmd in "version" "--help" "validate $SRC/scenarios/default.yaml" \
           "run --set horizon=2d --set workload.synthetic.arrivals.rate=4/h -q --no-output"; do
    # shellcheck disable=SC2086
    ld_libs "$FLEETSIM" $cmd || bad "'fleetsim $cmd' failed: $(head -c 300 err.txt)"
    grep -q "$isal" ld.txt && bad "'fleetsim $cmd' loads ISA-L: $(grep "$isal" ld.txt | head -3)" || ok
done
# and it still reads and writes HDF5, with ISA-L
ld_libs "$FLEETSIM" run --set horizon=2d --set workload.synthetic.arrivals.rate=4/h -q -o r.h5 &&
    ok || bad "run -o failed: $(head -c 600 err.txt)"
[ -s r.h5 ] && ok || bad "no results file"
grep -q "calling init: .*$isal" ld.txt && ok ||
    bad "a run that writes results did not load $isal: $(grep -i isal ld.txt | head -3)"
# without a usable ISA-L: a clear error, exit 2, no file, no temporary.
# A library of that name earlier on the search path: an empty file (the
# loader refuses it), then a real library without igzip's functions.
mkdir -p noisal
: > "noisal/$isal"
expect_exit 2 env LD_LIBRARY_PATH="$WORK/noisal" "$FLEETSIM" run --set horizon=2d -q -o n.h5
expect_err "n\.h5: cannot write results: ISA-L, the compressor, cannot be loaded \(.*$isal"
expect_no_file n.h5
if command -v cc >/dev/null; then
    echo 'int not_igzip(void) { return 0; }' > fake.c
    if cc -shared -fPIC -o "noisal/$isal" fake.c 2>cc.txt; then
        expect_exit 2 env LD_LIBRARY_PATH="$WORK/noisal" "$FLEETSIM" run --set horizon=2d -q -o n.h5
        expect_err "n\.h5: cannot write results: ISA-L.*has no isal_deflate"
        expect_no_file n.h5
        # the commands that write nothing do not notice
        expect_exit 0 env LD_LIBRARY_PATH="$WORK/noisal" "$FLEETSIM" validate "$SRC/scenarios/default.yaml"
        expect_exit 0 env LD_LIBRARY_PATH="$WORK/noisal" "$FLEETSIM" run --set horizon=2d -q --no-output
    else
        echo "note: cc could not build a shared library, one case skipped: $(head -c 200 cc.txt)"
    fi
fi
expect_exit 0 "$FLEETSIM" compare r.h5 r.h5
expect_exit 0 "$FLEETSIM" version
expect_out '^fleetsim [0-9]'
finish
