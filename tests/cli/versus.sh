#!/usr/bin/env bash
# fleetsim versus: three policy variants of one workload under common random
# numbers.  A variant identical to the baseline differs by exactly 0 in every
# replication (same streams); SJF cuts FIFO's mean wait on a loaded cluster,
# significantly; the means printed are the index's /stats means; the run
# files are those `fleetsim sweep` writes for the same points; DIR works
# with compare and report; bad input exits 2 naming the -p.
source "$(dirname "$0")/lib/common.bash"

cat > loaded.yaml <<'EOF2'
name: loaded
horizon: 1d
until: horizon
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 8, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 14/h}, gpus: {1: 0.5, 8: 0.5},
              duration: {dist: exponential, mean: 1h}}
EOF2
P=(-p fifo=scheduler.queue=fifo -p sjf=scheduler.queue=sjf -p same=scheduler.mode=best_effort)
expect_exit 0 "$FLEETSIM" versus loaded.yaml "${P[@]}" -r 6 -j 2 -o vs \
    --metrics wait_mean,utilization,jobs_submitted
cp out.txt versus.txt
expect_out 'versus loaded: 3 policies x 6 replications'
expect_out 'point 1  sjf +scheduler.queue=sjf scheduler.mode=best_effort'
expect_out 'point 2  same +scheduler.queue=fifo scheduler.mode=best_effort'
# the identical variant: exactly 0, no interval width; arrivals the same everywhere
grep -Eq '^wait_mean .*\+0 \[\+0, \+0\] *$' out.txt && ok || bad "same - fifo is not exactly 0"
grep -Eq '^jobs_submitted +[-+0-9.e]+ \[\+0, \+0\] +\+0 \[\+0, \+0\]' out.txt && ok \
    || bad "jobs_submitted differs between variants (not common random numbers)"
# SJF against FIFO at ~90% load: shorter mean wait, significant
line=$(grep -E '^wait_mean ' out.txt | tail -n 1)
[[ $line =~ ^wait_mean\ +-[0-9.e+]+\ \[-[0-9.e+]+,\ -[0-9.e+]+\]\ \* ]] && ok \
    || bad "sjf - fifo wait_mean is not negative and significant: $line"
# the printed means are the index's per-point means
if command -v h5dump >/dev/null; then
    h5dump -d /stats vs/index.h5 > stats.txt
    mean0=$(grep -E '^wait_mean ' versus.txt | head -n 1 | awk '{print $2}')
    python3 - stats.txt "$mean0" <<'EOF2' && ok || bad "fifo's wait_mean mean is not /stats'"
import re, sys
text = open(sys.argv[1]).read()
rows = re.findall(r'\{\s*(\d+),\s*"wait_mean[^"]*",\s*(\d+),\s*([-0-9.e+]+)', text)
p0 = [float(m) for p, n, m in rows if p == "0"]
assert p0 and abs(p0[0] - float(sys.argv[2])) <= 1e-4 * abs(p0[0]), (p0, sys.argv[2])
EOF2
fi
# the same run as a sweep of that point (same scenario file) gives the same bytes
expect_exit 0 "$FLEETSIM" sweep loaded.yaml -o sw -j 2 -q --set 'sweep={replications: 6}' \
    --set scheduler.queue=sjf
# (but for the attributes that say which run of which sweep a file is)
run_dump() { h5dump "$1" | tail -n +2 | awk '/ATTRIBUTE "sweep_(digest|point)"/ { skip = 1 }
    !skip { print } skip && /^   }/ { skip = 0 }'; }
run_dump sw/runs/p0000-r0003.h5 > run_sw.txt
run_dump vs/runs/p0001-r0003.h5 > run_vs.txt
[ -s run_sw.txt ] && cmp -s run_sw.txt run_vs.txt && ok \
    || bad "versus point 1 replication 3 differs from the sweep's run"
# the directory is a sweep directory
expect_exit 0 "$FLEETSIM" compare vs/index.h5 --points 0 1 --no-waits
expect_out 'point 0 \(scheduler.queue=fifo'
if /usr/bin/python3 -c 'import h5py, matplotlib' 2>/dev/null; then
    expect_exit 0 "$FLEETSIM" report vs/index.h5 -o vs.html
fi
# resume: nothing to redo
expect_exit 0 "$FLEETSIM" versus loaded.yaml "${P[@]}" -r 6 -o vs --resume -q
expect_out 'sjf - fifo'

# errors
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a=scheduler.queue=fifo -o e1
expect_err 'at least two policies'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a=scheduler.queue=fifo -p b=scheduler.queue=bogus -o e2
expect_err '^-p b: sweep point 1 .*bogus'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p b=seed=3 -o e3
expect_err '-p b: seed cannot differ'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p a=scheduler.queue=sjf -o e4
expect_err '-p a is given twice'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p b=scheduler.queue -o e5
expect_err "-p b: 'scheduler.queue' is not KEY=VALUE"
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p b=cluster.pools.0.nodes=4 -o e6
expect_err '-p a: does not set cluster.pools.0.nodes'
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p b -r 1 -o e7
expect_exit 0 "$FLEETSIM" versus --help
expect_out 'usage: fleetsim versus'
finish
