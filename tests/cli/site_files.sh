#!/usr/bin/env bash
# A Slurm site's own files read as they are (issue 40): its job history as
# `sacct -P -X --format=JobID,User,Account,Partition,QOS,Submit,Start,End,
# Timelimit,AllocTRES,State` writes it (format auto finds it) replayed under
# the priority and backfill settings of its slurm.conf (scheduler.slurm.conf);
# a bad value in either stops the run at its place, exit 2.
source "$(dirname "$0")/lib/common.bash"

cat > site.yaml <<EOF2
name: site
cluster: {pools: [{name: h100, gpu: H100, nodes: 2, gpus_per_node: 8},
                  {name: a100, gpu: A100, nodes: 1, gpus_per_node: 8}]}
workload: {trace: {path: "$SRC/tests/data/sacct/sacct-PX.txt", format: auto}}
scheduler: {slurm: {conf: "$SRC/tests/data/slurm/slurm.conf"}}
EOF2
expect_exit 0 "$FLEETSIM" run site.yaml -o site.h5
expect_out '^jobs +4 submitted, 4 completed'
expect_err 'format auto: detected sacct'
expect_err 'skipped 4 rows: cpu_only \(no gres/gpu in AllocTRES\) 1, never started \(Start Unknown\) 2, still running \(End Unknown\) 1'
# the slurm.conf settings are the scenario's (the dump shows them)
expect_exit 0 "$FLEETSIM" validate site.yaml --dump
expect_out '^  queue: slurm'
expect_out '^    max_job_test: 300'
expect_out '^    weight_fairshare: 10000'
expect_out '^    decay_half_life: 14d'

# a bad slurm.conf value: FILE:LINE:COL, exit 2
printf 'ClusterName=x\nSchedulerParameters=bf_continue,bf_interval=soon\n' > bad.conf
expect_exit 2 "$FLEETSIM" validate site.yaml --set scheduler.slurm.conf=bad.conf
expect_err 'bad.conf:2:45: SchedulerParameters: expected bf_interval=N with N an integer >= 1 \(seconds\) \(got .soon.\)'
# a bad sacct row: FILE:LINE: field NAME, exit 2
{ head -2 "$SRC/tests/data/sacct/sacct-PX.txt"
  echo '9|u|a|gpu|n|2024-03-04T09:30:00|2024-03-04T09:31:00|2024-03-04T09:51:00|2-3:4:5:6|gres/gpu=1|COMPLETED'
} > bad.txt
expect_exit 2 "$FLEETSIM" run site.yaml --set workload.trace.path="$PWD/bad.txt" -o bad.h5
expect_err 'bad.txt:3: field Timelimit: expected a Slurm time limit'
finish
