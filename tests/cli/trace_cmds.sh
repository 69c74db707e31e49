#!/usr/bin/env bash
# fleetsim trace info|convert|fit:
#  - info on a hand-made trace: exact counts, GPU-hours, histogram, type-7
#    percentiles of run times and recorded waits, states, tenants (text and JSON);
#  - convert round trips (plain and gzip) give the same statistics and the
#    same bytes when converted again; a bad row stops with FILE:LINE: field
#    NAME, exit 2, and leaves no output file;
#  - fit -> validate -> run; the workload generated from the fitted YAML
#    (another seed) reproduces the trace's GPU-count mix (each share within
#    0.02) and run-time median (within 5%) on a trace drawn from a lognormal
#    with a day profile; on real Philly sizes and run times the mix within
#    0.02 and the median within a factor of 2 (the lognormal fits Philly's
#    >= 1 h run times loosely: docs/validation.md);
#  - --help of the command and of each subcommand; usage errors exit 2.
source "$(dirname "$0")/lib/common.bash"

# jnum KEY FILE: the first number after "KEY": in a JSON file
jnum() { grep -o "\"$1\": [-0-9.e+]*" "$2" | head -1 | sed 's/.*: //'; }
# jgpus FILE: the "gpus" histogram as "size count" lines
jgpus() { sed -n 's/.*"gpus": {\([^}]*\)}.*/\1/p' "$1" | tr ',' '\n' | tr -d ' "' | tr ':' ' '; }
# close A B TOL: |A - B| <= TOL
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
# mix_close A.json B.json TOL: every size's share agrees within TOL
mix_close() {
    local na nb
    na=$(jnum jobs "$1")
    nb=$(jnum jobs "$2")
    jgpus "$1" > mixa.txt
    jgpus "$2" > mixb.txt
    awk -v na="$na" -v nb="$nb" -v t="$3" '
        FNR == NR { a[$1] = $2 / na; next } { b[$1] = $2 / nb }
        END { for (k in a) { d = a[k] - b[k]; if (d < 0) d = -d; if (d > t) { print "size " k ": " a[k] " vs " b[k]; bad = 1 } }
              for (k in b) if (!(k in a) && b[k] > t) { print "size " k " only in the fit"; bad = 1 }
              exit bad }' mixa.txt mixb.txt
}

# ---- help and usage --------------------------------------------------------
expect_exit 0 "$FLEETSIM" trace --help
expect_out 'fleetsim trace info FILE'
for sub in info convert fit; do
    expect_exit 0 "$FLEETSIM" trace "$sub" --help
    expect_out "usage: fleetsim trace $sub"
done
expect_exit 0 "$FLEETSIM" help
expect_out '^ *trace '
expect_exit 2 "$FLEETSIM" trace
expect_exit 2 "$FLEETSIM" trace frobnicate x.csv
expect_err "'frobnicate' is not a trace subcommand"
expect_exit 2 "$FLEETSIM" trace convert x.csv
expect_err 'needs -o OUT'
expect_exit 2 "$FLEETSIM" trace info --bogus x.csv
expect_err "unknown option '--bogus'"
expect_exit 2 "$FLEETSIM" trace fit x.csv -o w.yaml --classes 4-2
expect_err -- '--classes: bad range'
"$FLEETSIM" trace info missing.csv >out.txt 2>err.txt && bad "a missing file succeeded" || ok
expect_err 'missing.csv'

# ---- info: known values ------------------------------------------------------
cat > known.csv <<'C'
id,submit,gpus,duration,tenant,rec_start,rec_state
1,0,1,3600,a,10,completed
2,1800,2,7200,b,1800,completed
3,3600,8,1800,a,3700,failed
4,90000,1,600,,,killed
C
# GPU-hours 1 + 4 + 4 + 1/6; run times 600 1800 3600 7200 -> p50 2700, p90 6120;
# waits 0 10 100 -> p50 10, p90 82
expect_exit 0 "$FLEETSIM" trace info known.csv --json
cp out.txt known.json
expect_out '"jobs": 4, "skipped": 0'
expect_out '"span_s": 90000'
expect_out '"gpu_hours": 9.166666667'
expect_out '"gpus": \{"1": 2, "2": 1, "8": 1\}'
expect_out '"p50": 2700, "p75": 4500, "p90": 6120'
expect_out '"wait_s": \{"recorded": 3, "p50": 10, "p90": 82'
expect_out '"states": \{"completed": 2, "failed": 1, "killed": 1\}'
expect_out '"a": \{"jobs": 2, "gpu_hours": 5\}, "b": \{"jobs": 1, "gpu_hours": 4\}'
expect_out '"jobs_without_tenant": 1'
expect_out '"arrivals_by_hour_of_day": \[2, 2, 0,'
expect_exit 0 "$FLEETSIM" trace info known.csv
expect_out '^jobs +4$'
expect_out 'GPU-hours +9.2'
expect_out '1: 2 \(50.0%\), 2: 1 \(25.0%\), 8: 1 \(25.0%\)'
expect_out 'p50 45.0 min'
expect_out 'wait +3 recorded: p50 10.0 s'
expect_out 'completed 2 failed 1 killed 1'

# ---- convert: round trips, atomic output -----------------------------------------
expect_exit 0 "$FLEETSIM" trace convert known.csv -o k1.csv
expect_err '4 jobs written to k1.csv'
expect_exit 0 "$FLEETSIM" trace convert k1.csv -o k2.csv.gz
expect_exit 0 "$FLEETSIM" trace convert k2.csv.gz -o k3.csv
cmp -s k1.csv k3.csv && ok || bad "plain -> gzip -> plain changed the bytes"
[ "$(head -c 2 k2.csv.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] && ok || bad "k2.csv.gz is not gzip"
expect_exit 0 "$FLEETSIM" trace info k2.csv.gz --json
sed 's/"trace": "[^"]*"//' known.json > a.json
sed 's/"trace": "[^"]*"//' out.txt > b.json
cmp -s a.json b.json && ok || bad "info differs after the round trip: $(diff a.json b.json | head -3)"

cat > badrow.csv <<'C'
id,submit,gpus,duration
1,0,8,3600
2,10,four,600
3,20,1,60
C
expect_exit 2 "$FLEETSIM" trace convert badrow.csv -o bad.csv
expect_err '^badrow.csv:3: field gpus'
expect_no_file bad.csv
expect_exit 2 "$FLEETSIM" trace info badrow.csv
expect_err '^badrow.csv:3: field gpus'
expect_exit 2 "$FLEETSIM" trace fit badrow.csv -o bad.yaml
expect_err '^badrow.csv:3: field gpus'
expect_no_file bad.yaml
expect_exit 0 "$FLEETSIM" trace info badrow.csv --lenient --json
expect_out '"jobs": 2, "skipped": 1'

# ---- fit: a trace drawn from a known workload ---------------------------------------
cat > truth.yaml <<'Y'
name: truth
seed: 3
horizon: 14d
cluster:
  pools:
    - {name: a, gpu: H100, nodes: 64, gpus_per_node: 8}
workload:
  synthetic:
    arrivals:
      rate: 40/h
      profile:
        hourly: {8: 0.1, 9: 0.1, 10: 0.1, 11: 0.1, 12: 0.1, 13: 0.1, 14: 0.1, 15: 0.1, 16: 0.1, 17: 0.1}
    gpus: {1: 0.6, 2: 0.1, 4: 0.1, 8: 0.15, 64: 0.05}
    duration: {dist: lognormal, median: 30m, sigma: 1.2}
    tenants: {alpha: 0.7, beta: 0.3}
Y
expect_exit 0 "$FLEETSIM" trace convert --scenario truth.yaml -o truth.csv.gz
expect_exit 0 "$FLEETSIM" trace info truth.csv.gz --json
cp out.txt truth.json
expect_exit 0 "$FLEETSIM" trace fit truth.csv.gz -o fit.yaml
grep -q '^# Run times: lognormal, Weibull and gamma' fit.yaml && ok || bad "no fit report"
grep -q 'lognormal .*<- chosen' fit.yaml && ok || bad "lognormal not chosen for lognormal data"
# sigma of the pooled fit within 0.05 of 1.2 (n ~ 5000: se 0.012)
sig=$(sed -n 's/^    duration: {dist: lognormal, median: [0-9.a-z]*, sigma: \([0-9.]*\)}$/\1/p' fit.yaml)
close "$sig" 1.2 0.05 && ok || bad "fitted sigma '$sig', expected 1.2 +- 0.05"
# hours with no arrivals get no share; hours 8-17 about 0.1 each
grep -q 'hourly: {8: 0\.\(09\|10\|11\)' fit.yaml && ok || bad "hourly profile: $(grep hourly fit.yaml)"
grep -q 'hourly: {[^}]* 3: ' fit.yaml && bad "hour 3 has a share" || ok
grep -q 'tenants: {"alpha": 0\.[67]' fit.yaml && ok || bad "tenants: $(grep tenants fit.yaml)"
{
    printf 'name: refit\nseed: 99\nhorizon: 14d\ncluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 64, gpus_per_node: 8}\n'
    cat fit.yaml
} > refit.yaml
expect_exit 0 "$FLEETSIM" validate refit.yaml
expect_exit 0 "$FLEETSIM" run refit.yaml --set horizon=12h -o refit.h5
expect_out 'completed'
expect_exit 0 "$FLEETSIM" trace info --scenario refit.yaml --json
cp out.txt refit.json
mix_close truth.json refit.json 0.02 && ok || bad "size mix of the refit differs: $(mix_close truth.json refit.json 0.02)"
m1=$(jnum p50 truth.json)
m2=$(jnum p50 refit.json)
close "$m2" "$m1" "$(awk -v m="$m1" 'BEGIN { print 0.05 * m }')" && ok || bad "median $m2 vs the trace's $m1"
n1=$(jnum jobs truth.json)
n2=$(jnum jobs refit.json)
close "$n2" "$n1" "$(awk -v n="$n1" 'BEGIN { print 5 * sqrt(n) }')" && ok || bad "jobs $n2 vs the trace's $n1"

# ---- fit: real Philly sizes and run times ----------------------------------------------
expect_exit 0 "$FLEETSIM" trace info "$SRC/tests/data/fit/philly_native.csv" --json
cp out.txt philly.json
expect_exit 0 "$FLEETSIM" trace fit "$SRC/tests/data/fit/philly_native.csv" -o pfit.yaml
{
    printf 'name: philly-fit\nseed: 5\nhorizon: 497820s\ncluster:\n  pools:\n    - {name: a, gpu: V100, nodes: 64, gpus_per_node: 8}\n'
    cat pfit.yaml
} > pscn.yaml
expect_exit 0 "$FLEETSIM" validate pscn.yaml
expect_exit 0 "$FLEETSIM" trace info --scenario pscn.yaml --json
cp out.txt pgen.json
mix_close philly.json pgen.json 0.02 && ok || bad "Philly size mix differs: $(mix_close philly.json pgen.json 0.02)"
m1=$(jnum p50 philly.json)
m2=$(jnum p50 pgen.json)
awk -v a="$m1" -v b="$m2" 'BEGIN { exit !(b < 2 * a && a < 2 * b) }' && ok || bad "Philly median $m2 vs $m1"
finish
