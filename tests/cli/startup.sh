#!/usr/bin/env bash
# Start-up (docs/performance.md, "Start-up"): the program loads neither
# Open MPI (its calls are in fleetsim-mpi.so, loaded under an MPI launcher)
# nor, where the distribution ships HDF5's static archives
# (FS_HDF5_STATIC=1, set by CMake), the shared HDF5 and the 30-odd
# libraries it brings (curl, Kerberos, GnuTLS).  Not timed: what is loaded
# is counted, which is what the time follows.
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
# and it still reads and writes HDF5
expect_exit 0 "$FLEETSIM" run --set horizon=2d --set workload.synthetic.arrivals.rate=4/h -q -o r.h5
[ -s r.h5 ] && ok || bad "no results file"
expect_exit 0 "$FLEETSIM" compare r.h5 r.h5
expect_exit 0 "$FLEETSIM" version
expect_out '^fleetsim [0-9]'
finish
