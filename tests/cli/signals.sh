#!/usr/bin/env bash
# Crash safety of `fleetsim run` (docs/robustness.md):
# - SIGINT and SIGTERM stop a run cleanly: exit status 1, a message naming the
#   signal and the simulated time, and the rows so far at the target name with
#   complete = 0, incomplete_reason = "interrupted by SIGINT" (SIGTERM) and
#   stopped_at > 0; no temporary left behind;
# - kill -9 at random moments never leaves a file at the target name that is not
#   complete = 1 (a TARGET.tmp.PID may be left behind: never the target).
source "$(dirname "$0")/lib/common.bash"

attr() {  # attr FILE NAME: the value of a root attribute as h5dump prints it
    h5dump -a "/$2" "$1" 2>/dev/null | sed -nE 's/^ *\(0\): *//p' | head -n 1
}

have_h5dump=0
command -v h5dump >/dev/null && have_h5dump=1

# A run that takes long enough to be interrupted: a century of arrivals (about
# 5 M jobs; it is always stopped).  A year was not enough: with the results
# written on a second thread a Release build finished it in under a second,
# before the signal came.
long_run() {
    "$FLEETSIM" run -q --set horizon=36500d --set output.timeline_interval=1h -o "$1" 2>err.txt &
    pid=$!
}

# Waits until the run has written its temporary (it is then inside the engine).
wait_started() {
    for _ in $(seq 1 200); do
        ls "$1".tmp.* >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    return 1
}

for sig in INT TERM; do
    out=stop-$sig.h5
    long_run "$out"
    wait_started "$out" || bad "SIG$sig: the run never created its temporary file"
    sleep 0.5
    kill -s "$sig" "$pid"
    wait "$pid"
    st=$?
    [ "$st" -eq 1 ] && ok || bad "SIG$sig: exit status $st, expected 1"
    [ -f "$out" ] && ok || bad "SIG$sig: no partial results at $out"
    ls "$out".tmp.* >/dev/null 2>&1 && bad "SIG$sig: temporary left behind" || ok
    if [ "$have_h5dump" -eq 1 ] && [ -f "$out" ]; then
        [ "$(attr "$out" complete)" = 1 ] && bad "SIG$sig: partial file says complete = 1" || ok
        [ "$(attr "$out" complete)" = 0 ] && ok || bad "SIG$sig: complete is not 0"
        attr "$out" incomplete_reason | grep -q "interrupted by SIG$sig" && ok ||
            bad "SIG$sig: incomplete_reason is '$(attr "$out" incomplete_reason)'"
        at=$(attr "$out" stopped_at)
        awk -v t="$at" 'BEGIN { exit !(t > 0) }' && ok || bad "SIG$sig: stopped_at is '$at'"
        h5dump -H "$out" 2>/dev/null | grep -q 'DATASET "jobs"' && ok || bad "SIG$sig: no /jobs"
    fi
done
# the message on stderr
long_run stop-msg.h5
wait_started stop-msg.h5
sleep 0.3
kill -s INT "$pid"
wait "$pid"
expect_err 'interrupted at simulated time'
expect_err 'partial results written to stop-msg.h5 \(complete = 0\)'

# kill -9 at random moments of short runs: whatever is at the target name is complete.
killed=0
finished=0
for i in $(seq 1 12); do
    out=k$i.h5
    "$FLEETSIM" run -q --set horizon=3d -o "$out" >/dev/null 2>&1 &
    pid=$!
    sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if [ -e "$out" ]; then
        finished=$((finished + 1))
        if [ "$have_h5dump" -eq 1 ]; then
            [ "$(attr "$out" complete)" = 1 ] && ok || bad "kill -9 run $i: $out is not complete"
        fi
    else
        killed=$((killed + 1))
    fi
    rm -f "$out".tmp.*   # a temporary may be left (and may even say complete = 1 if the
                         # kill fell between setting the flag and the rename): not a target
done
echo "kill -9: $killed runs killed before their commit, $finished finished before the kill"
finish
