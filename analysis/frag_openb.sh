#!/bin/sh
# The ATC'23 fragmentation experiment on the openb trace (docs/validation.md):
# `fleetsim frag` on the default, gpushare40, multigpu50 and gpuspec33 pod lists
# over the openb GPU node list (1,213 nodes, 6,212 GPUs, with their CPU and
# memory; CPU-only pods placed), 10 seeds each, with frag's defaults, which are
# the ATC'23 simulator's semantics: the four policies random, atc_best_fit,
# gpu_packing and fgd; the whole list shuffled then tuned to the demand (--draw
# list); FGD's typical pods covering 95% (--typical 95); integer node scores
# with the first node name among equals (scheduler.node_score=kubernetes_name).
# tests/validation/frag_atc23.sh checks those defaults against the paper.  Then a
# Markdown table of the GPU allocation ratio at 100% and 130% demand (mean and
# standard deviation over the seeds) from the CSV files.
#
#   analysis/frag_openb.sh [FLEETSIM] [OPENB_DATA_DIR] [OUT_DIR] [extra frag options...]
#
# Defaults: ./build/fleetsim, ../shared/data/alibaba-openb-2023, frag-out.
set -eu
FS=${1:-./build/fleetsim}
DATA=${2:-../shared/data/alibaba-openb-2023}
OUT=${3:-frag-out}
[ $# -gt 3 ] && shift 3 || set --
HERE=$(cd "$(dirname "$0")/.." && pwd)
DATA=$(cd "$DATA" && pwd)
mkdir -p "$OUT"
for list in default gpushare40 multigpu50 gpuspec33; do
    "$FS" frag "$HERE/scenarios/openb-frag.yaml" --seeds 10 --demand 1.3 \
        --set "workload.trace.path=$DATA/openb_pod_list_$list.csv" \
        --set "cluster.from.path=$DATA/openb_node_list_gpu_node.csv" \
        -o "$OUT/$list.csv" "$@" >"$OUT/$list.txt"
done
# CSV columns: placement,seed,demand,requested_milli,allocated_milli,capacity_milli,
#              alloc_ratio,placed,failed
echo "| pod list | placement | alloc @100% | sd | alloc @130% | sd | unplaced pods @130% |"
echo "|---|---|---:|---:|---:|---:|---:|"
for list in default gpushare40 multigpu50 gpuspec33; do
    awk -F, -v list="$list" '
        NR == 1 { next }
        $3 == "1.00" { n1[$1]++; s1[$1] += $7; q1[$1] += $7 * $7 }
        $3 == "1.30" { n2[$1]++; s2[$1] += $7; q2[$1] += $7 * $7; f[$1] += $9
                       if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
        function sd(s, q, n) { return n > 1 ? sqrt((q - s * s / n) / (n - 1)) : 0 }
        END {
            for (i = 1; i <= k; i++) {
                p = order[i]
                printf "| %s | %s | %.2f%% | %.2f | %.2f%% | %.2f | %.0f |\n", list, p,
                       100 * s1[p] / n1[p], 100 * sd(s1[p], q1[p], n1[p]),
                       100 * s2[p] / n2[p], 100 * sd(s2[p], q2[p], n2[p]), f[p] / n2[p]
            }
        }' "$OUT/$list.csv"
done
