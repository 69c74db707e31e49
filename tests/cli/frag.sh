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
# the defaults: the ATC'23 paper's four policies
for p in random atc_best_fit gpu_packing fgd; do expect_out "^$p +[0-9.]+% "; done
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
# a demand below 100% never reaches the @100% column: said so, not nan
expect_out '^fgd +not reached +[0-9.]+% '
if grep -qiw nan out.txt; then bad "nan in the table: $(cat out.txt)"; else ok; fi

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

# the ATC'23 simulator's semantics: list draw (the whole list, then tuned), typical pods,
# integer scores with ties by node name; CPU-only pods placed and holding CPU: a pool of 2
# nodes of 8 cores where CPU-only pods of 6 cores and a GPU pod of 4 cores cannot share a
# node, so some pod fails although GPUs are free; without CPU none does
expect_exit 0 "$FLEETSIM" frag frag.yaml --seeds 2 --draw list --typical 95 \
    --placements random,atc_best_fit,gpu_packing,fgd --set scheduler.node_score=kubernetes_name -o k.csv
for p in random atc_best_fit gpu_packing fgd; do expect_out "^$p +[0-9.]+% "; done
if [ "$(wc -l < k.csv)" -eq 209 ]; then ok; else bad "k.csv has $(wc -l < k.csv) lines"; fi
expect_exit 0 "$FLEETSIM" frag frag.yaml --seeds 2 --draw list --typical 95 \
    --placements random,atc_best_fit,gpu_packing,fgd --set scheduler.node_score=kubernetes_name -o k2.csv
if cmp -s k.csv k2.csv; then ok; else bad "two list-draw runs differ"; fi
# the defaults are these flags (tests/validation/frag_atc23.sh checks them against the paper)
if cmp -s a.csv k.csv; then ok; else bad "the defaults differ from the ATC'23 flags"; fi
# the previous defaults stay reachable, and a --set replaces the default node score
expect_exit 0 "$FLEETSIM" frag frag.yaml --seeds 2 --draw uniform --typical 100 \
    --placements random,best_fit,pack,fgd --set scheduler.node_score=exact -o u.csv
for p in random best_fit pack fgd; do expect_out "^$p +[0-9.]+% "; done
if cmp -s u.csv k.csv; then bad "uniform draws and exact scores gave the defaults' CSV"; else ok; fi
# the same file on one thread as on three
expect_exit 0 "$FLEETSIM" frag frag.yaml --seeds 2 --draw list --typical 95 -j 1 \
    --placements random,atc_best_fit,gpu_packing,fgd --set scheduler.node_score=kubernetes_name -o k1.csv
expect_exit 0 "$FLEETSIM" frag frag.yaml --seeds 2 --draw list --typical 95 -j 3 \
    --placements random,atc_best_fit,gpu_packing,fgd --set scheduler.node_score=kubernetes_name -o k3.csv
if cmp -s k1.csv k3.csv && cmp -s k1.csv k.csv; then ok; else bad "-j 1 and -j 3 differ"; fi
expect_exit 2 "$FLEETSIM" frag frag.yaml -j 0
expect_err '-j needs a thread count'

printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\n' > cpu.csv
printf 'c-1,6000,1024,0,0\nc-2,6000,1024,0,0\ng-1,4000,1024,1,1000\n' >> cpu.csv
cat > cpu.yaml <<Y
name: frag-cpu
horizon: 1000d
cluster: {pools: [{name: s, gpu: T4, nodes: 2, gpus_per_node: 2, cpu_milli: 8000}]}
workload:
  trace: {path: cpu.csv, format: openb, default_duration: 1h, cpu_only: place}
Y
expect_exit 0 "$FLEETSIM" frag cpu.yaml --seeds 1 --demand 0.25 --draw list --placements best_fit -o cpu.out
# each node holds one of these pods (6 + 6 and 6 + 4 cores exceed 8), and the list
# tuning may append CPU-only pods (they add no GPU demand, as in the ATC'23 simulator)
expect_out '^best_fit .* [1-9][0-9]*\.0$'
expect_exit 0 "$FLEETSIM" frag cpu.yaml --seeds 1 --demand 0.25 --draw list --placements best_fit \
    --set cluster.pools.0.cpu_milli=0 -o nocpu.out
expect_out '^best_fit .* 0\.0$'
expect_exit 2 "$FLEETSIM" frag frag.yaml --draw sometimes
expect_err '--draw needs uniform or list'
expect_exit 2 "$FLEETSIM" frag frag.yaml --typical 0
expect_err '--typical needs a percentage'

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
