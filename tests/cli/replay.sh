#!/usr/bin/env bash
# Replays against what happened: `fleetsim compare RUN.h5 --recorded` puts a
# trace replay's waits beside the waits its trace recorded (docs/validation.md
# "Replays against recorded waits"); bad recorded starts are located errors.
source "$(dirname "$0")/lib/common.bash"

# A two-GPU machine and four jobs whose simulated waits are known by hand
# (FIFO, no backfill): job 1 starts at once; job 2 (2 GPUs) waits for it
# (90 s); job 3 records no start; jobs 3 and 4 start when job 2 ends at 200
# (job 4: 170 s simulated, 200 s recorded).
swf() {  # swf FILE WAIT2: the four jobs, job 2's recorded wait given
    cat > "$1" <<SWF
; MaxProcs: 2
1 0 0 100 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1
2 10 $2 100 2 -1 -1 2 -1 -1 1 2 1 -1 -1 -1 -1 -1
3 20 -1 50 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1
4 30 200 10 1 -1 -1 1 -1 -1 1 3 1 -1 -1 -1 -1 -1
SWF
}
scenario() {  # scenario FILE TRACE
    cat > "$1" <<YAML
name: replay-small
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 1}]
workload:
  trace: {path: $2, format: swf}
scheduler: {queue: fifo}
YAML
}
swf small.swf 90
scenario small.yaml small.swf
expect_exit 0 "$FLEETSIM" run small.yaml -o small.h5 -q
expect_exit 0 "$FLEETSIM" compare small.h5 --recorded
expect_out '^jobs 4 in /jobs: 3 compared, 1 with no recorded start, 0 never started'
expect_out '^mean +86.7 s +96.7 s +0.90$'
expect_out '^KS distance of the wait CDFs +0\.333$'
expect_out '^Spearman per job +1\.000$'
expect_exit 0 "$FLEETSIM" compare small.h5 --recorded --json
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "--json: wrong values: $(head -c 400 out.txt)"
import json, math
d = json.load(open("out.txt"))["recorded"]
assert d["compared"] == 3 and d["no_recorded_start"] == 1, d
assert abs(d["simulated"]["mean"] - 260 / 3) < 1e-6, d["simulated"]
assert abs(d["recorded"]["mean"] - 290 / 3) < 1e-6, d["recorded"]
assert abs(d["ks"] - 1 / 3) < 1e-9 and abs(d["spearman"] - 1) < 1e-9, d
assert d["simulated"]["share_waited"] == 2 / 3, d
assert len(d["util_day_simulated"]) == 1 and d["capacity_gpus"] == 2, d
# simulated: 2x100 + 2x100 + 1x50 + 1x10 GPU-s over 2 GPUs x 1 day
assert abs(d["util_day_simulated"][0] - 460 / 172800) < 1e-12, d
PY
fi

# a start overhead counts as wait (the recorded start is when the job began
# to run): startup.container 30 s holds each job's GPUs 30 s before it
# computes.  Job 1 computes from 30 (counted wait 30), ends at 130; job 2
# starts there (120 + 30 = 150); job 4 when job 2 ends at 260 (230 + 30).
expect_exit 0 "$FLEETSIM" run small.yaml --set startup.container=30s -o smallsu.h5 -q
expect_exit 0 "$FLEETSIM" compare smallsu.h5 --recorded --json
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "start overhead: wrong mean: $(head -c 300 out.txt)"
import json
d = json.load(open("out.txt"))["recorded"]
assert abs(d["simulated"]["mean"] - 440 / 3) < 1e-6, d["simulated"]
PY
fi

# the report's section: both CDFs, the daily utilization and the table
# (exit 3: the report's Python modules are missing here)
"$FLEETSIM" report small.h5 -o small.html >out.txt 2>err.txt
rrc=$?
if [ "$rrc" -ne 3 ]; then
    [ "$rrc" -eq 0 ] && ok || bad "report exited $rrc: $(head -c 300 err.txt)"
    grep -q 'Simulated against recorded waits' small.html && ok || bad "report: no recorded section"
    grep -q 'Jobs compared 3; with no recorded start 1' small.html && ok ||
        bad "report: recorded section without the counts"
fi

# --recorded takes one run file
expect_exit 2 "$FLEETSIM" compare small.h5 small.h5 --recorded
expect_err 'recorded takes one results file'
# a run of a synthetic workload has no recorded starts
cat > synth.yaml <<YAML
name: synth
horizon: 2h
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]
workload:
  synthetic:
    arrivals: {process: poisson, rate: 12/h}
    gpus: {1: 1}
    duration: {dist: lognormal, median: 45m, sigma: 1.5}
YAML
expect_exit 0 "$FLEETSIM" run synth.yaml -o synth.h5 -q
expect_exit 2 "$FLEETSIM" compare synth.h5 --recorded
expect_err 'synth.h5: the run replayed no trace'
# ... and its report has no recorded section, and no note about one
if [ "$rrc" -ne 3 ]; then
    expect_exit 0 "$FLEETSIM" report synth.h5 -o synth.html
    grep -q 'recorded' synth.html && bad "report of a synthetic run: a recorded section" || ok
fi
# a trace that records no start at all: said, exit 2
sed -E 's/^([0-9]+ [0-9]+) [0-9]+ /\1 -1 /' small.swf > nowait.swf
scenario nowait.yaml nowait.swf
expect_exit 0 "$FLEETSIM" run nowait.yaml -o nowait.h5 -q
expect_exit 2 "$FLEETSIM" compare nowait.h5 --recorded
expect_err 'records no start for any of its 4 jobs'

# /jobs.rec_start: the trace's recorded start beside the simulated one, job
# by job (NaN: none recorded; a synthetic workload records none).  late.swf:
# the first job records none, and jobs 5 and 6 come after the others ended
# (their slots held jobs that recorded one: job 5 records none)
{ sed -E '2s/^([0-9]+ [0-9]+) [0-9]+ /\1 -1 /' small.swf
  echo '5 500 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1'
  echo '6 600 5 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1'; } > late.swf
scenario late.yaml late.swf
expect_exit 0 "$FLEETSIM" run late.yaml -o late.h5 -q
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "/jobs.rec_start: wrong values"
import h5py, math
def rec(path):
    j = h5py.File(path, "r")["jobs"][()]
    return {int(i): float(r) for i, r in zip(j["id"], j["rec_start"])}
def same(got, want):
    assert got.keys() == want.keys(), (got, want)
    for k in want:
        assert (math.isnan(got[k]) and math.isnan(want[k])) or got[k] == want[k], (got, want)
nan = float("nan")
same(rec("small.h5"), {1: 0.0, 2: 100.0, 3: nan, 4: 230.0})
same(rec("late.h5"), {1: nan, 2: 100.0, 3: nan, 4: 230.0, 5: nan, 6: 605.0})
assert all(math.isnan(v) for v in rec("nowait.h5").values())
s = rec("synth.h5")
assert s and all(math.isnan(v) for v in s.values()), s
PY
fi

# ---- trace info: sizes bucketed by powers of two past a dozen distinct
# counts; the recorded waits and GPUs busy over time
{
    echo '; MaxProcs: 64'
    for k in $(seq 1 13); do   # sizes 1..13, one job each, a day apart
        echo "$k $(( (k - 1) * 86400 )) $(( k * 60 )) 3600 $k -1 -1 $k -1 -1 1 1 1 -1 -1 -1 -1 -1"
    done
} > sizes.swf
expect_exit 0 "$FLEETSIM" trace info sizes.swf
expect_out '^GPUs +13 distinct counts, by powers of two:$'
expect_out '^  3-4 +2 jobs \( +15\.4%\) +2 sizes$'
expect_out '^  9-16 +5 jobs \( +38\.5%\) +5 sizes$'
expect_out '^recorded over time \(per day from day 0 of the origin\)'
# day 2: job 3 waited 180 s, 3 GPUs busy for an hour: 3 x 3600 / 86400
expect_out '^  day +2 +1 jobs +wait 3.0 min +busy +0.1 GPUs$'
head -n 13 sizes.swf > twelve.swf
expect_exit 0 "$FLEETSIM" trace info twelve.swf
expect_out '^GPUs +1: 1 \(8.3%\), 2: 1'
expect_exit 0 "$FLEETSIM" trace info sizes.swf --json
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "trace info --json: recorded_by_day: $(head -c 300 out.txt)"
import json
d = json.load(open("out.txt"))
r = d["recorded_by_day"]
assert len(r) == 13 and r[4]["day"] == 4 and r[4]["wait_mean_s"] == 300, r[4]
assert abs(r[4]["gpus_busy_mean"] - 5 * 3600 / 86400) < 1e-9, r[4]
assert len(d["gpus"]) == 13
PY
fi

# a recorded start before the submission (negative wait): located, exit 2
swf neg.swf -5
scenario neg.yaml neg.swf
expect_exit 2 "$FLEETSIM" run neg.yaml -o neg.h5 -q
expect_err 'neg.swf:3:.*wait.*>= 0'
expect_no_file neg.h5
# ... in a native trace (rec_start before submit, which its reader lets
# through): compare and trace outages name the job, exit 2
printf 'id,submit,gpus,duration,rec_start,rec_end\n1,0,1,100,0,100\n2,50,1,100,40,140\n' > early.csv
cat > early.yaml <<YAML
name: early
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 1}]
workload:
  trace: {path: early.csv, format: native}
YAML
expect_exit 0 "$FLEETSIM" run early.yaml -o early.h5 -q
expect_exit 2 "$FLEETSIM" compare early.h5 --recorded
expect_err 'early.csv: job 2: recorded start 10 s before its submission'
expect_exit 2 "$FLEETSIM" trace outages early.csv --format native -o o.csv --capacity 2
expect_err 'early.csv: job 2: recorded start before its submission'
expect_no_file o.csv
finish
