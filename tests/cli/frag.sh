#!/usr/bin/env bash
# fleetsim frag: the fragmentation experiment on a real openb sample (the
# node list and 300 pods of the gpuspec33 list, tests/data/traces/real):
# CSV shape, determinism, placed capacity accounted exactly, usage errors.
source "$(dirname "$0")/lib/common.bash"
REAL="$SRC/tests/data/traces/real"

cat > frag.yaml <<Y
name: frag-sample
horizon: 1000d
cluster:
  from: {format: openb, path: $REAL/openb_node_list_gpu_node.csv}
workload:
  trace: {path: $REAL/openb_pods_gpuspec33_300.csv, format: openb}
scheduler: {candidates: 8}
Y
expect_exit 0 "$FLEETSIM" frag frag.yaml --seeds 2 -o a.csv
expect_out '^fragmentation experiment: 281 pods .* 6212 GPUs in 15 pools, 2 seeds, demand to 130%'
for p in random best_fit pack fgd; do expect_out "^$p +[0-9.]+% "; done
# header + 4 placements x 2 seeds x 26 demand steps (5% .. 130%)
if [ "$(wc -l < a.csv)" -eq 209 ]; then ok; else bad "a.csv has $(wc -l < a.csv) lines"; fi
if head -1 a.csv | grep -q '^placement,seed,demand,requested_milli,allocated_milli,capacity_milli,alloc_ratio,placed,failed$'; then ok; else bad "header: $(head -1 a.csv)"; fi
# while no pod has failed, every requested milli-GPU is allocated; never more
# than requested or than the capacity; the ratio is allocated / capacity
if awk -F, 'NR > 1 && (($9 == 0 && $4 != $5) || $5 > $4 || $5 > $6 || ($7 - $5 / $6) > 1e-6 || ($5 / $6 - $7) > 1e-6) { bad = 1 } END { exit bad }' a.csv; then ok; else bad "allocation accounting in a.csv"; fi
# the same seeds give the same file; stdout/stderr do not change the CSV
expect_exit 0 "$FLEETSIM" frag frag.yaml --seeds 2 -o b.csv
if cmp -s a.csv b.csv; then ok; else bad "two runs differ"; fi
# learned shapes and one placement
expect_exit 0 "$FLEETSIM" frag frag.yaml --seeds 1 --placements fgd --shapes learned --demand 0.5
expect_out '^fgd '

# pods are never split over nodes: 4-GPU pods on 2-GPU nodes all fail, under
# every placement (before, they took two nodes each)
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\n' > pods4.csv
for i in 1 2 3 4; do printf 'pod-%d,1000,1024,4,1000\n' "$i" >> pods4.csv; done
cat > small.yaml <<Y
name: frag-small
horizon: 1000d
cluster: {pools: [{name: s, gpu: T4, nodes: 8, gpus_per_node: 2}]}
workload:
  trace: {path: pods4.csv, format: openb, default_duration: 1h}
Y
expect_exit 0 "$FLEETSIM" frag small.yaml --seeds 1 --demand 1 -o small.csv
if awk -F, 'NR > 1 && $8 != 0 { bad = 1 } END { exit bad }' small.csv; then ok; else bad "a 4-GPU pod was placed on 2-GPU nodes: $(tail -2 small.csv)"; fi

expect_exit 2 "$FLEETSIM" frag frag.yaml --placements fgd,tetris
expect_err "'tetris' is not a placement"
expect_exit 2 "$FLEETSIM" frag
expect_err 'a scenario file is needed'
expect_exit 2 "$FLEETSIM" frag frag.yaml --seeds 0
expect_err 'seeds'
expect_exit 2 "$FLEETSIM" frag "$SRC/scenarios/default.yaml"
expect_err 'the workload must be a trace'
expect_exit 0 "$FLEETSIM" frag --help
expect_out '^usage: fleetsim frag'
finish
