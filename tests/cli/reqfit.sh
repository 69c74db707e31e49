#!/usr/bin/env bash
# fleetsim trace fit --requests (docs/traces.md): request traces drawn by
# numpy with known parameters (written as Azure LLM inference CSVs) are
# fitted back: gamma gaps give process gamma with their shape, Poisson gaps
# under a daily profile give process poisson with that profile (the gaps
# are measured on the profile's clock), lognormal token counts give their
# median and sigma.  The fitted block, pasted into a service, validates and
# runs at the trace's rate; bad uses exit 2 with nothing written.
source "$(dirname "$0")/lib/common.bash"
PY=/usr/bin/python3
if ! $PY -c "import numpy" 2>/dev/null; then
    echo "python3-numpy missing: .ci/install-deps installs it" >&2
    exit 1
fi

# gen.py OUT KIND SEED: KIND gamma (20,000 requests at 10/s, shape 0.5) or
# daily (Poisson, 2 days, 0.5/s x a profile 3x higher in hours 8-19 than in
# the others); prompt tokens lognormal(median 600, sigma 1), output
# lognormal(median 200, sigma 0.8), rounded, at least 1.
cat > gen.py <<'EOF'
import sys, datetime, numpy as np
out, kind, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(seed)
if kind == "gamma":
    t = np.cumsum(rng.gamma(0.5, 0.1 / 0.5, 20000))
else:
    # a non-homogeneous Poisson process by thinning: rate 1.5/s in hours
    # 8..19 of each day, 0.5/s otherwise (mean 1/s over a day)
    n = rng.poisson(1.5 * 2 * 86400)
    t = np.sort(rng.uniform(0, 2 * 86400, n))
    h = (t // 3600) % 24
    keep = rng.uniform(0, 1.5, n) < np.where((h >= 8) & (h < 20), 1.5, 0.5)
    t = t[keep]
n = len(t)
inp = np.maximum(1, np.rint(rng.lognormal(np.log(600), 1.0, n))).astype(int)
outp = np.maximum(1, np.rint(rng.lognormal(np.log(200), 0.8, n))).astype(int)
t0 = datetime.datetime(2023, 11, 16, 0, 0, 0)
with open(out, "w") as f:
    f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
    for ti, a, b in zip(t, inp, outp):
        us = int(round(ti * 1e6))
        d = t0 + datetime.timedelta(microseconds=us)
        f.write(d.strftime("%Y-%m-%d %H:%M:%S.%f") + "0,%d,%d\n" % (a, b))
EOF
val() {   # val KEY FILE: the number after "KEY:" in the fitted block
    sed -n "s/^ *$1: *\([0-9.e+-]*\).*/\1/p" "$2" | head -1
}
inside() {   # inside LABEL VALUE LO HI
    if $PY -c "import sys; v=float(sys.argv[1]); sys.exit(0 if $3 <= v <= $4 else 1)" "$2" 2>/dev/null; then
        ok
    else
        bad "$1 = '$2', expected in [$3, $4]"
    fi
}

# gamma gaps: process gamma, shape 0.5, rate 10/s
$PY gen.py gamma.csv gamma 7 || bad "gen.py gamma failed"
expect_exit 0 "$FLEETSIM" trace fit --requests gamma.csv -o gamma.yaml
grep -q '^  process: gamma$' gamma.yaml && ok || bad "gamma gaps: $(grep process gamma.yaml)"
inside "gamma shape" "$(val shape gamma.yaml)" 0.47 0.53
inside "gamma rate" "$(sed -n 's/^  rate: \([0-9.]*\)\/s$/\1/p' gamma.yaml)" 9.6 10.4
grep -q 'hourly profile: flat' gamma.yaml && ok || bad "a 2,000 s trace has no profile"
inside "input median" "$(sed -n 's/^  input: {dist: lognormal, median: \([0-9.]*\),.*/\1/p' gamma.yaml)" 585 615
inside "input sigma" "$(sed -n 's/^  input: {dist: lognormal, .*sigma: \([0-9.]*\)}/\1/p' gamma.yaml)" 0.98 1.02
inside "output median" "$(sed -n 's/^  output: {dist: lognormal, median: \([0-9.]*\),.*/\1/p' gamma.yaml)" 195 205
inside "output sigma" "$(sed -n 's/^  output: {dist: lognormal, .*sigma: \([0-9.]*\)}/\1/p' gamma.yaml)" 0.78 0.82

# Poisson under a daily profile: poisson, hours 8-19 three times the others
$PY gen.py daily.csv daily 11 || bad "gen.py daily failed"
expect_exit 0 "$FLEETSIM" trace fit --requests daily.csv -o daily.yaml
grep -q '^  process: poisson$' daily.yaml && ok \
    || bad "Poisson gaps on the profile's clock: $(grep -A2 'Gaps' daily.yaml)"
grep -q '^    hourly: {' daily.yaml && ok || bad "a 2-day trace has an hourly profile"
# shares: 1.5/24 = 0.0625 in the busy hours, 0.5/24 = 0.0208 in the others
inside "share of hour 12" "$(sed -n 's/^    hourly: {.* 12: \([0-9.]*\).*/\1/p' daily.yaml)" 0.059 0.066
inside "share of hour 3" "$(sed -n 's/^    hourly: {.* 3: \([0-9.]*\).*/\1/p' daily.yaml)" 0.0185 0.023
inside "daily base rate" "$(sed -n 's/^  rate: \([0-9.]*\)\/s$/\1/p' daily.yaml)" 0.98 1.02

# the fitted block runs as a service: about rate x 1 h requests
{
    cat <<'YAML'
name: fitted-service
seed: 3
horizon: 1h
until: horizon
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 8}
workload:
  synthetic:
    arrivals: {process: poisson, rate: 1/h}
    gpus: {1: 1.0}
    duration: {dist: constant, value: 10m}
services:
  - name: chat
    min_replicas: 2
    max_replicas: 8
    performance: [{gpu: H100, prefill: 10000, decode: 2400, max_batch: 64, decode_single: 90}]
YAML
    sed -n '/^requests:/,$p' gamma.yaml | sed 's/^/    /'
} > svc.yaml
expect_exit 0 "$FLEETSIM" validate svc.yaml
expect_exit 0 "$FLEETSIM" run svc.yaml --no-output
n=$(sed -n 's/^service *chat: \([0-9]*\) requests.*/\1/p' out.txt)
inside "requests in 1 h at the fitted rate" "${n:-0}" 34000 38000

# the shared Azure conversation hour (when present): the trace's medians
# are the published ones (Splitwise, Patel et al., ISCA 2024: prompt 1020,
# output 129 tokens)
for d in "$SRC/../shared/data" "$SRC/../../shared/data" /work/shared/data; do
    AZ="$d/azure-llm-2023/AzureLLMInferenceTrace_conv.csv.gz"
    [ -f "$AZ" ] || continue
    expect_exit 0 "$FLEETSIM" trace fit --requests "$AZ" -o conv.yaml
    grep -q 'input      n=19366 .* trace p50/p90/p99 = 1020 /' conv.yaml && ok || bad "conv input p50"
    grep -q 'output     n=19366 .* trace p50/p90/p99 = 129 /' conv.yaml && ok || bad "conv output p50"
    break
done

# bad uses: exit 2, nothing written
expect_exit 2 "$FLEETSIM" trace fit --requests gamma.csv -o x.yaml --classes 1,2
expect_err 'takes a request trace FILE and -o only'
expect_no_file x.yaml
# (a file that cannot be opened is exit 1, as for trace info and run)
expect_exit 1 "$FLEETSIM" trace fit --requests missing.csv -o x.yaml
expect_err 'missing.csv'
expect_no_file x.yaml
expect_exit 2 "$FLEETSIM" trace fit --requests gamma.csv -o gamma.csv
head -c 40 gamma.csv | grep -q '^TIMESTAMP' && ok || bad "the input was overwritten"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,10,5\n2023-11-16 18:00:01.0,10,5\n' > two.csv
expect_exit 2 "$FLEETSIM" trace fit --requests two.csv -o x.yaml
expect_err 'at least 3'
expect_no_file x.yaml
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,10,5\n2023-11-16 18:00:01.0,ten,5\n' > bad.csv
expect_exit 2 "$FLEETSIM" trace fit --requests bad.csv -o x.yaml
expect_err 'bad.csv:3'
expect_no_file x.yaml
finish
