#!/usr/bin/env bash
# Tables of "trace vs fitted synthetic workload" for docs/validation.md.
#   tests/validation/fit_tables.sh [FLEETSIM] [DATA_DIR]  > tables.md
# For each shipped trace: `fleetsim trace info --json` of the trace; `fleetsim
# trace fit`; the fitted fragment completed with a cluster large enough for
# every size and horizon = the trace's span; `fleetsim trace info --json
# --scenario` of that synthetic workload (seed 1); then the GPU-count mix, the
# run-time percentiles and the arrivals per hour of day side by side.
# Needs python3 (only to lay out the tables).  Not part of ctest.
set -eu
FLEETSIM=${1:-build/fleetsim}
DATA=${2:-/work/shared/data}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fleetsim-fit-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

one() { # NAME FILE FORMAT
    local name=$1 file=$2 fmt=$3
    [ -f "$file" ] || { echo "(skipped $name: $file not found)"; echo; return; }
    "$FLEETSIM" trace info "$file" --format "$fmt" --json > "$WORK/t.json" 2>/dev/null
    "$FLEETSIM" trace fit "$file" --format "$fmt" -o "$WORK/fit.yaml" 2>/dev/null
    python3 - "$WORK/t.json" "$WORK/fit.yaml" "$WORK/s.yaml" <<'PY'
import json, math, sys
t = json.load(open(sys.argv[1]))
big = max(int(k) for k in t["gpus"])
nodes = max(1, -(-big // 8))
span = max(1, math.ceil(t["span_s"]))
with open(sys.argv[3], "w") as f:
    f.write("name: fit-check\nseed: 1\nhorizon: %ds\ncluster:\n  pools:\n" % span)
    f.write("    - {name: a, gpu: H100, nodes: %d, gpus_per_node: 8}\n" % nodes)
    f.write(open(sys.argv[2]).read())
PY
    "$FLEETSIM" trace info --scenario "$WORK/s.yaml" --json > "$WORK/s.json"
    python3 - "$name" "$file" "$fmt" "$WORK/t.json" "$WORK/s.json" "$WORK/fit.yaml" <<'PY'
import json, sys
name, path, fmt, tj, sj, fy = sys.argv[1:]
t, s = json.load(open(tj)), json.load(open(sj))
print("#### %s (`%s`, format %s)\n" % (name, path.split("/")[-1], fmt))
print("%d jobs over %.2f d (skipped %d); synthetic: %d jobs.\n" % (t["jobs"], t["span_s"] / 86400, t["skipped"], s["jobs"]))
print("Run-time model per size class (`trace fit` report: the trace's percentiles, then the\nfamily chosen by AIC with its parameters, KS distance and percentiles):\n\n```")
for l in open(fy):
    if " n=" in l or "<- chosen" in l:
        l = " ".join(l[1:].split()).replace(" <- chosen", "")
        print(("  " if "<-" not in l and "n=" not in l else "") + l)
print("```\n")
print("| GPUs | trace share | fit share |\n|---|---|---|")
sizes = sorted(set(t["gpus"]) | set(s["gpus"]), key=int)
for k in sizes:
    a = t["gpus"].get(k, 0) / t["jobs"]; b = s["gpus"].get(k, 0) / max(1, s["jobs"])
    if a >= 0.001 or b >= 0.001:
        print("| %s | %.4f | %.4f |" % (k, a, b))
print("\n| run time (s) | trace | fit | fit / trace |\n|---|---|---|---|")
for q in ("p10", "p50", "p90", "p99"):
    a, b = t["duration_s"][q], s["duration_s"][q]
    print("| %s | %.6g | %.6g | %.2f |" % (q, a, b, b / a))
ht, hs = t["jobs_per_hour_by_hour_of_day"], s["jobs_per_hour_by_hour_of_day"]
print("\nArrivals per hour by hour of day (from the trace origin):\n")
print("| hour | " + " | ".join(str(h) for h in range(24)) + " |")
print("|---" * 25 + "|")
f = lambda v: "-" if v is None else "%.3g" % v
print("| trace | " + " | ".join(f(v) for v in ht) + " |")
print("| fit | " + " | ".join(f(v) for v in hs) + " |\n")
PY
}

one "Philly (Gavel job distribution, every 4th job; no submit times)" "$SRC/tests/data/fit/philly_native.csv" native
one "Tiresias 60-job testbed trace" "$DATA/tiresias/60_job.csv" tiresias
one "Alibaba openb 2023, default pod list" "$DATA/alibaba-openb-2023/openb_pod_list_default.csv" openb
one "HPC2N 2002 excerpt (SWF, 1 processor = 1 GPU)" "$DATA/swf/alea-hpc2n-excerpt.swf" swf
one "NASA iPSC 1993 (SWF)" "$DATA/swf/NASA-iPSC-1993-3.1-cln.swf.gz" swf
