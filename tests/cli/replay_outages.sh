#!/usr/bin/env bash
# Capacity over time (docs/traces.md "Outage files"): cluster.outages drains
# nodes from start to end; `fleetsim trace outages` infers them from a log's
# recorded utilization; bad outage files are located errors (exit 2).
source "$(dirname "$0")/lib/common.bash"

# ---- cluster.outages: two nodes, both out for the first 100 s, node 1 again
# from 300 s to 400 s.  Job 1 (2 GPUs, at 0) waits to 100; job 2 (1 GPU,
# 100 s, submitted at 250) starts at 250 on node 0 while node 1 is free; job 3
# (2 GPUs, at 290) needs node 1, out from 300 to 400: starts at 400.
cat > jobs.swf <<'SWF'
; MaxProcs: 2
1 0 0 50 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1
2 250 0 100 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1
3 290 0 10 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1
SWF
cat > out.csv <<'CSV'
# maintenance, then node 1 alone
start,end,nodes,cause
0,100,all,maintenance
300,400,1
CSV
scenario() {  # scenario FILE OUTAGES
    cat > "$1" <<YAML
name: outages
cluster:
  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 1}]
  outages: $2
workload:
  trace: {path: jobs.swf, format: swf}
scheduler: {queue: fifo}
YAML
}
scenario run.yaml out.csv
expect_exit 0 "$FLEETSIM" run run.yaml -o run.h5 -q
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "outages: wrong starts"
import h5py
j = h5py.File("run.h5", "r")["jobs"][()]
start = {int(r["id"]): float(r["start"]) for r in j}
assert start == {1: 100.0, 2: 250.0, 3: 400.0}, start
PY
fi
# without the file: job 1 at once, job 3 at 350 (after job 2)
sed '/outages:/d' run.yaml > none.yaml
expect_exit 0 "$FLEETSIM" run none.yaml -o none.h5 -q
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "no outages: wrong starts"
import h5py
j = h5py.File("none.h5", "r")["jobs"][()]
start = {int(r["id"]): float(r["start"]) for r in j}
assert start == {1: 0.0, 2: 250.0, 3: 350.0}, start
PY
fi

# ---- bad outage files: located, exit 2, from run and validate alike
bad_file() {  # bad_file CONTENT REGEX
    printf '%b' "$1" > bad.csv
    scenario bad.yaml bad.csv
    expect_exit 2 "$FLEETSIM" run bad.yaml -o bad.h5 -q
    expect_err "$2"
    expect_no_file bad.h5
    expect_exit 2 "$FLEETSIM" validate bad.yaml
    expect_err "$2"
}
bad_file 'start,end,nodes\n0,100,0-2\n' 'bad.csv:2:7: nodes: node 2 does not exist \(the cluster has 2 nodes, 0-1\)'
bad_file 'start,end,nodes\n0,100,gpu\n' "bad.csv:2:7: nodes: no pool is named 'gpu'"
bad_file 'start,end,nodes\n0,100,1\n50,60,all\n' 'bad.csv:3:1: overlaps the outage of line 2 on node 1'
bad_file 'start,end,nodes\n100,50,all\n' 'bad.csv:2:5: end: expected seconds after start'
bad_file 'begin,end,nodes\n' "bad.csv:1:1: expected the header 'start,end,nodes'"
bad_file 'start,end,nodes\n0,10,3-1\n' 'bad.csv:2:6: nodes: expected .* I <= J'
# back to back is no overlap
printf 'start,end,nodes\n0,100,all\n100,200,all\n' > ok.csv
scenario ok.yaml ok.csv
expect_exit 0 "$FLEETSIM" validate ok.yaml

# ---- trace outages: hours 1 and 2 (3600-10800) have 1 of 10 GPUs busy
# while job 3 waits (recorded: submitted at 3600, started at 10800)
cat > log.swf <<'SWF'
; MaxProcs: 10
1 0 0 3600 10 -1 -1 10 -1 -1 1 1 1 -1 -1 -1 -1 -1
2 3600 0 7200 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1
3 3600 7200 3600 8 -1 -1 8 -1 -1 1 1 1 -1 -1 -1 -1 -1
4 3700 -1 3600 8 -1 -1 8 -1 -1 1 1 1 -1 -1 -1 -1 -1
SWF
expect_exit 0 "$FLEETSIM" trace outages log.swf -o inferred.csv --capacity 10 --threshold 0.2
expect_err '1 outages, 2 h of 4 \(50.0%\) written to inferred.csv; 1 jobs without a recorded start'
grep -v '^#' inferred.csv > body.csv
printf 'start,end,nodes,cause\n3600,10800,0-8,inferred\n' | cmp -s - body.csv && ok ||
    bad "inferred outages: $(cat inferred.csv)"
# under the threshold no more: nothing out
expect_exit 0 "$FLEETSIM" trace outages log.swf -o none.csv --capacity 10 --threshold 0.05
expect_err '0 outages'
expect_exit 2 "$FLEETSIM" trace outages log.swf -o x.csv
expect_err 'needs --capacity'
expect_exit 2 "$FLEETSIM" trace outages log.swf -o x.csv --capacity 10 --threshold 2
expect_err 'threshold needs a share'
# ---- the same outages as `scontrol show reservation` output (traces/fs_resv.h):
# dates made seconds of the run by cluster.outages_origin; Nodes=ALL, and a
# host list whose host numbers are node indexes; a reservation over before
# the origin is left out.  The starts are those of out.csv.
cat > resv.txt <<'RESV'
ReservationName=maint StartTime=2022-03-07T08:00:00 EndTime=2022-03-07T08:01:40 Duration=00:01:40
   Nodes=ALL NodeCnt=2 CoreCnt=2 Features=(null) PartitionName=(null) Flags=MAINT,IGNORE_JOBS
   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE BurstBuffer=(null)

ReservationName=one StartTime=2022-03-07T08:05:00 EndTime=2022-03-07T08:06:40 Duration=00:01:40
   Nodes=nid[00001] NodeCnt=1 Flags=SPEC_NODES
   Users=alice State=INACTIVE

ReservationName=old StartTime=2022-03-01T00:00:00 EndTime=2022-03-01T01:00:00
   Nodes=nid[00000-00001] NodeCnt=2
RESV
scenario resv.yaml resv.txt
expect_exit 0 "$FLEETSIM" run resv.yaml --set cluster.outages_origin=2022-03-07T08:00:00 -o resv.h5 -q
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    /usr/bin/python3 - <<'PY' && ok || bad "reservations: wrong starts"
import h5py
j = h5py.File("resv.h5", "r")["jobs"][()]
start = {int(r["id"]): float(r["start"]) for r in j}
assert start == {1: 100.0, 2: 250.0, 3: 400.0}, start
PY
fi
# no origin: refused, naming the file's first reservation line
expect_exit 2 "$FLEETSIM" run resv.yaml -o x.h5 -q
expect_err 'resv.txt:1:1: .*cluster.outages_origin'
# a bad date and a bad host, located
sed 's/EndTime=2022-03-07T08:06:40/EndTime=2022-03-07X/' resv.txt > resv_bad.txt
scenario resvb.yaml resv_bad.txt
expect_exit 2 "$FLEETSIM" run resvb.yaml --set cluster.outages_origin=2022-03-07T08:00:00 -o x.h5 -q
expect_err 'resv_bad.txt:5:59: EndTime: expected a date'
sed 's/Nodes=nid\[00001\]/Nodes=login/' resv.txt > resv_host.txt
scenario resvh.yaml resv_host.txt
expect_exit 2 "$FLEETSIM" run resvh.yaml --set cluster.outages_origin=2022-03-07T08:00:00 -o x.h5 -q
expect_err 'resv_host.txt:6:10: Nodes: expected ALL or host names'
# overlapping reservations of one node, and a node that does not exist
cat > resv_ov.txt <<'RESV'
ReservationName=a StartTime=2022-03-07T08:00:00 EndTime=2022-03-07T09:00:00 Nodes=nid[0-1]
ReservationName=b StartTime=2022-03-07T08:30:00 EndTime=2022-03-07T09:30:00 Nodes=nid1
RESV
scenario resvo.yaml resv_ov.txt
expect_exit 2 "$FLEETSIM" run resvo.yaml --set cluster.outages_origin=2022-03-07T08:00:00 -o x.h5 -q
expect_err 'resv_ov.txt:2:1: overlaps the outage of line 1 on node 1'
echo "ReservationName=c StartTime=2022-03-08T08:30:00 EndTime=2022-03-08T09:30:00 Nodes=nid7" > resv_ov.txt
expect_exit 2 "$FLEETSIM" run resvo.yaml --set cluster.outages_origin=2022-03-07T08:00:00 -o x.h5 -q
expect_err 'resv_ov.txt:1:77: nodes: node 7 does not exist'
finish
