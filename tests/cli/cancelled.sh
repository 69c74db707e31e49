#!/usr/bin/env bash
# Jobs cancelled before they started, replayed as withdrawn at their cancel
# time (workload.trace.cancelled: withdraw; docs/traces.md "Jobs cancelled
# before they started", models/fs_model_withdraw.c).
source "$(dirname "$0")/lib/common.bash"

# Four one-GPU nodes.  Job 1 (2 GPUs, 0-1000 s).  Job 2 (4 GPUs, submitted
# at 10) is status 5: cancelled 490 s after its submission, at 500, before
# it started.  Job 3 (2 GPUs, 2000 s, submitted at 20), job 4 (2 GPUs,
# 100 s, at 30).  With withdraw, job 2 heads the queue from 10 to 500 and
# holds the EASY reservation for all four GPUs at 1000 (job 1's end): job 3
# cannot backfill (it would run past 1000 on two of them), job 4 can (30 to
# 130, before 1000).  At 500 job 2 leaves without running: job 3 starts at
# once.  Conservative backfill plans the same (job 2 at 1000-2000, job 3
# after it at 2000, job 4 into the hole at 30) and job 3 moves up to 500;
# priority and WFP orders (equal priorities, WFP utilities favour the head)
# give the same.  Without it (default: the row is skipped) job 3 starts at
# 20 and job 4 waits for job 1's end at 1000.  Kueue with a StrictFIFO
# ClusterQueue: job 2 blocks the queue until 500, job 3 is admitted then,
# job 4 (no backfill) at 1000.  Volcano starts what fits (no reservation):
# job 3 at 20, job 4 at 1000, job 2 withdrawn at 500.
cat > wd.swf <<'SWF'
; MaxProcs: 4
1 0 0 1000 2 -1 -1 2 1000 -1 1 1 1 -1 -1 -1 -1 -1
2 10 490 -1 4 -1 -1 4 1000 -1 5 2 1 -1 -1 -1 -1 -1
3 20 -1 2000 2 -1 -1 2 2000 -1 1 3 1 -1 -1 -1 -1 -1
4 30 -1 100 2 -1 -1 2 100 -1 1 4 1 -1 -1 -1 -1 -1
SWF
cat > wd.yaml <<YAML
name: wd
cluster:
  pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 1}]
workload:
  trace: {path: wd.swf, format: swf, cancelled: withdraw}
scheduler: {queue: fifo, backfill: easy}
YAML
rows() {  # rows FILE: "id:start:end:state ..." in id order
    /usr/bin/python3 -c '
import sys, h5py
f = h5py.File(sys.argv[1], "r"); j = f["jobs"][()]
names = {v: k for k, v in h5py.check_enum_dtype(f["jobs"].dtype["state"]).items()}
print(" ".join("%d:%g:%g:%s" % (r["id"], r["start"], r["end"], names[r["state"]])
               for r in sorted(j, key=lambda r: r["id"])))' "$1"
}
summary() {  # summary FILE COLUMN
    /usr/bin/python3 -c 'import sys, h5py; print(int(h5py.File(sys.argv[1], "r")["summary"][sys.argv[2]][0]))' "$@"
}
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    want="1:0:1000:completed 2:nan:500:withdrawn 3:500:2500:completed 4:30:130:completed"
    for s in "" scheduler.backfill=conservative scheduler.queue=priority scheduler.queue=wfp; do
        expect_exit 0 "$FLEETSIM" run wd.yaml ${s:+--set $s} -o wd.h5 -q
        [ "$(rows wd.h5)" = "$want" ] && ok || bad "withdraw ${s:-easy}: $(rows wd.h5)"
    done
    expect_exit 0 "$FLEETSIM" run wd.yaml --set scheduler.queue=volcano -o wdv.h5 -q
    [ "$(rows wdv.h5)" = "1:0:1000:completed 2:nan:500:withdrawn 3:20:2020:completed 4:1000:1100:completed" ] &&
        ok || bad "withdraw volcano: $(rows wdv.h5)"
    sed 's/cancelled: withdraw}/cancelled: withdraw, team_map: {u1: q, u2: q, u3: q, u4: q}}/
         /^scheduler:/d' wd.yaml > wdk.yaml
    cat >> wdk.yaml <<YAML
scheduler:
  queue: kueue
  kueue:
    cluster_queues: [{name: q, strategy: StrictFIFO, quotas: [{flavor: p, nominal: 4}]}]
YAML
    expect_exit 0 "$FLEETSIM" run wdk.yaml -o wdk.h5 -q
    [ "$(rows wdk.h5)" = "1:0:1000:completed 2:nan:500:withdrawn 3:500:2500:completed 4:1000:1100:completed" ] &&
        ok || bad "withdraw kueue: $(rows wdk.h5)"
    [ "$(summary wd.h5 jobs_withdrawn)" = 1 ] && ok || bad "jobs_withdrawn $(summary wd.h5 jobs_withdrawn)"
    [ "$(summary wd.h5 jobs_completed)" = 3 ] && ok || bad "jobs_completed $(summary wd.h5 jobs_completed)"
    expect_exit 0 "$FLEETSIM" run wd.yaml --set workload.trace.cancelled=default -o wd0.h5 -q
    [ "$(rows wd0.h5)" = "1:0:1000:completed 3:20:2020:completed 4:1000:1100:completed" ] && ok ||
        bad "default: $(rows wd0.h5)"
    [ "$(summary wd0.h5 jobs_withdrawn)" = 0 ] && ok || bad "default jobs_withdrawn"
    # compare --recorded: job 2 has no recorded start; it is counted as withdrawn
    expect_exit 0 "$FLEETSIM" compare wd.h5 --recorded --json
    /usr/bin/python3 -c 'import json; d = json.load(open("out.txt"))["recorded"]
assert d["withdrawn"] == 1 and d["compared"] == 1 and d["no_recorded_start"] == 2, d' && ok ||
        bad "compare --recorded --json: $(cat out.txt)"
    expect_exit 0 "$FLEETSIM" compare wd.h5 --recorded
    expect_out '^withdrawn: 1 jobs cancelled before they started'
fi

# Started before its cancel time (possible in simulation): stopped then.
# Two GPUs, one user, all submitted at 0.  Job 1 is cancelled 300 s after
# its submission (in production it never ran); here it starts at 0 and is
# stopped at 300.  Job 3 (cancelled at 40) waits behind jobs 1 and 2, which
# hold both GPUs, and leaves at 40 never started; job 4 starts at 100.
cat > k.swf <<'SWF'
; MaxProcs: 2
1 0 300 -1 1 -1 -1 1 1000 -1 5 1 1 -1 -1 -1 -1 -1
2 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
3 0 40 0 1 -1 -1 1 100 -1 5 1 1 -1 -1 -1 -1 -1
4 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
SWF
sed 's/wd.swf/k.swf/; s/nodes: 4/nodes: 2/' wd.yaml > k.yaml
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" run k.yaml -o k.h5 -q
    [ "$(rows k.h5)" = "1:0:300:withdrawn 2:0:100:completed 3:nan:40:withdrawn 4:100:200:completed" ] &&
        ok || bad "stopped at the cancel time: $(rows k.h5)"
    /usr/bin/python3 -c 'import h5py; j = {r["id"]: r for r in h5py.File("k.h5")["jobs"][()]}
assert j[1]["run"] == 300 and j[1]["wait"] == 0 and j[3]["queued_s"] == 40, j' && ok ||
        bad "stopped job: run/wait/queued_s"
    # a job held back by a per-user limit (max 1 job: jobs 2-4 held behind
    # job 1) leaves its user's held list at its cancel time
    expect_exit 0 "$FLEETSIM" run k.yaml --set scheduler.limits.max_jobs_per_user=1 -o kl.h5 -q
    [ "$(rows kl.h5)" = "1:0:300:withdrawn 2:300:400:completed 3:nan:40:withdrawn 4:400:500:completed" ] &&
        ok || bad "held by a limit: $(rows kl.h5)"
    # the first held job of its user withdrawn: the jobs held behind it that
    # fit go at once.  Two GPUs at most per user: job 1 (1 GPU, 0-1000)
    # runs; job 2 (2 GPUs, cancelled at 100) is held (1 + 2 > 2), job 3
    # (1 GPU) behind it.  At 100 job 2 leaves and job 3 (1 + 1 <= 2) is
    # handed over and starts, not at job 1's end.
    cat > hl.swf <<'SWF'
; MaxProcs: 4
1 0 -1 1000 1 -1 -1 1 1000 -1 1 1 1 -1 -1 -1 -1 -1
2 0 100 -1 2 -1 -1 2 1000 -1 5 1 1 -1 -1 -1 -1 -1
3 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
SWF
    sed 's/wd.swf/hl.swf/' wd.yaml > hl.yaml
    expect_exit 0 "$FLEETSIM" run hl.yaml --set scheduler.limits.max_gpus_per_user=2 -o hl.h5 -q
    [ "$(rows hl.h5)" = "1:0:1000:completed 2:nan:100:withdrawn 3:100:200:completed" ] &&
        ok || bad "first held job withdrawn: $(rows hl.h5)"
fi

# run's summary counts the withdrawn jobs (none: not said)
expect_exit 0 "$FLEETSIM" run wd.yaml -o ws.h5
expect_out '^jobs +4 submitted, 3 completed, 0 unfinished, 0 rejected, 1 withdrawn \(whole run\)'
expect_exit 0 "$FLEETSIM" run wd.yaml --set workload.trace.cancelled=skip -o ws.h5
expect_out '^jobs +3 submitted, 3 completed, 0 unfinished, 0 rejected \(whole run\)'

# refused: a policy that cannot take a queued job back (a plugin), and run
# for a format that records no run time for such a job
cc -std=c17 -Wall -Wextra -Werror -fPIC -shared -I "$SRC/sim/api" "$SRC/tests/install/plugin_fifo.c" \
    -o plugin_fifo.so 2> cc.log || bad "plugin build: $(cat cc.log)"
sed "\$a scheduler:\n  plugin: {path: $WORK/plugin_fifo.so}" k.yaml | sed '/^scheduler: {queue/d' > kp.yaml
expect_exit 2 "$FLEETSIM" run kp.yaml -o kp.h5 -q
expect_err "workload.trace.cancelled: withdraw needs a policy that can take a queued job back"
expect_no_file kp.h5
# validate refuses it too, at the key (the same message), as run does at load
expect_exit 2 "$FLEETSIM" validate kp.yaml
expect_err "kp.yaml:[0-9]+:[0-9]+: .*workload.trace.cancelled: withdraw needs a policy that can take a queued job back"
expect_exit 0 "$FLEETSIM" run kp.yaml --set workload.trace.cancelled=skip -o kp.h5 -q
expect_exit 2 "$FLEETSIM" run k.yaml --set workload.trace.cancelled=run -o kr.h5 -q
expect_err "workload.trace.cancelled: run is not possible for swf"
expect_no_file kr.h5
# trace convert: the native format has no column for a withdrawal
expect_exit 2 "$FLEETSIM" trace convert --scenario wd.yaml -o wd.csv
expect_err "wd.csv: job 2: cancelled before it started, read with workload.trace.cancelled: withdraw"
expect_no_file wd.csv
sed 's/cancelled: withdraw/cancelled: skip/' wd.yaml > wds.yaml
expect_exit 0 "$FLEETSIM" trace convert --scenario wds.yaml -o wd.csv
expect_err "3 jobs written to wd.csv \(1 rows skipped\)"
expect_exit 2 "$FLEETSIM" validate k.yaml --set workload.trace.cancelled=later
expect_err "workload.trace.cancelled"
finish
