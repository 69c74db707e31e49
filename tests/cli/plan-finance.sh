#!/usr/bin/env bash
# fleetsim plan with plan.years (docs/plan.md "Quarterly cash flow"): two
# quarters of a leased fleet (billing lease, $2,000 per GPU-month, 12 months
# committed) against an owned one.  Checked independently of fleetsim:
# a leased quarter's opex is GPUs x $2,000 x 2,191.5 h / 730 h (the quarter
# over a 730-hour month, no energy); the lease payments committed after the
# 6-month period are 6 months x GPUs x $2,000; each replication's NPV equals
# the discounted quarterly flows of plan.h5 (/plan_quarters) recomputed
# here; the interval is the t-interval of those NPVs.  Bad input exits 2
# with FILE:LINE:COL.
source "$(dirname "$0")/lib/common.bash"

cat > fin.yaml <<'YAML'
name: fin
seed: 3
horizon: 2d
warmup: 6h
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 1}
workload:
  synthetic:
    arrivals: {process: poisson, rate: 2/h}
    gpus: {1: 1.0}
    duration: {dist: exponential, mean: 1h}
scheduler: {queue: fifo}
cost:
  pools:
    - {pool: main, billing: owned}
plan:
  replications: 3
  years: 0.5
  demand_growth: 0.4
  electricity_growth: 1
  slo:
    - {metric: wait_p95, max: 1d}
  choices:
    - {name: owned, pool: main, nodes: {from: 4, to: 4}}
    - {name: leased, pool: main, nodes: {from: 4, to: 4},
       set: [{key: cost.pools.0.billing, value: lease}, {key: cost.pools.0.lease_rate, value: "2000"},
             {key: cost.pools.0.lease_term, value: "12"}]}
YAML

expect_exit 0 "$FLEETSIM" plan fin.yaml -o out -j 2
expect_out '^quarterly cash flow over 0.5 years \(2 quarters, each simulated: 12 runs'
expect_out 'lease payments committed after the period \$48,000'
expect_out '^  Y1Q2     x1\.088  4 lease '
expect_out 'payback against leased: '
expect_out '^each SLO must hold in every one of the 2 quarters'
expect_out '^  Y1Q2 +[0-9.]+ min \+- [0-9.]+ min  yes$'
expect_exit 0 "$FLEETSIM" plan fin.yaml -o out -j 2 --json
cp out.txt fin.json
/usr/bin/python3 - fin.json out/plan.h5 <<'PY' && ok || bad "quarterly figures differ from the direct computation"
import json, sys, math
import h5py, numpy as np
doc = json.load(open(sys.argv[1]))["quarterly"]
q = h5py.File(sys.argv[2])["plan_quarters"][:]
rate = 0.08
for fl in doc["fleets"]:
    rows = q[q["choice"] == fl["choice"].encode()]
    npv = []
    for r in range(3):
        rr = rows[rows["replication"] == r]
        v = 0.0
        for x in rr:
            t = (x["quarter"] - 1) / 4
            v += x["capex"] * (1 + rate) ** -t + x["opex"] * (1 + rate) ** -(t + 0.25)
        if fl["choice"] == "leased":
            # no energy: the rent of 4 GPUs for a quarter, exactly
            want = 4 * 2000 * (365.25 * 24 / 4) / 730
            assert all(abs(x["opex"] - want) < 1e-6 * want for x in rr), (rr["opex"], want)
            v += 4 * 2000 * 3 * ((1 + rate) ** -0.75 + (1 + rate) ** -1.0)
        else:   # owned: 4 H100 at capex, book value after half a year (of 365.25 d) of
                # straight line over cost.depreciation 5y (of 365 d)
            capex = rr["capex"][0]
            v -= capex * (1 - 0.5 / (5 * 365 / 365.25)) * (1 + rate) ** -0.5
        npv.append(v)
    assert np.allclose(npv, fl["npv_values"], rtol=1e-9), (npv, fl["npv_values"])
    m, s = np.mean(npv), np.std(npv, ddof=1)
    half = 4.302652729911275 * s / math.sqrt(3)
    assert abs(fl["npv"]["mean"] - m) < 1e-6 * abs(m)
    assert abs((fl["npv"]["hi"] - fl["npv"]["lo"]) / 2 - half) <= 1e-6 * abs(m)
PY

# the search over the quarters (docs/plan.md "The search over the quarters"):
# each fleet's SLO must hold in both quarters; /plan_periods' intervals are
# the t-intervals of the quarter runs' wait_p95 (read from the run files)
/usr/bin/python3 - out/plan.h5 out/evals <<'PY' && ok || bad "/plan_periods differs from the quarter runs"
import sys, glob, math, h5py, numpy as np
f = h5py.File(sys.argv[1])
assert f.attrs["search_quarters"] == 2
rows = f["plan_periods"][:]
assert len(rows) == 4, rows     # 2 fleets x 2 quarters, both met
for x in rows:
    d, = glob.glob(f'{sys.argv[2]}/{x["choice"].decode()}-n{x["nodes"]}-q{x["quarter"]}-x*')
    w = [h5py.File(f"{d}/runs/p0000-r{r:04d}.h5")["summary"]["wait_p95"][0] for r in range(3)]
    m, half = np.mean(w), 4.302652729911275 * np.std(w, ddof=1) / math.sqrt(3)
    assert abs(x["wait_p95_mean"] - m) <= 1e-9 * max(1, abs(m)), (x, w)
    assert abs(x["wait_p95_hi"] - (m + half)) <= 1e-6 * max(1, abs(m)), (x, w)
    assert x["meets"] == 1 and x["wait_p95_hi"] <= 86400
PY
# a bound only the first quarter's demand meets: the fleet misses from Y1Q2, and says so
expect_exit 0 "$FLEETSIM" plan fin.yaml -o tight -j 2 --set plan.demand_growth=20 \
    --set plan.slo.0.max=3h
expect_out '^chosen: none'
expect_out '^  owned +none up to 4 nodes: 4 nodes meet the SLOs through Y1Q1, first miss them in Y1Q2: wait_p95 '
expect_exit 0 "$FLEETSIM" plan fin.yaml -o tight -j 2 --set plan.demand_growth=20 \
    --set plan.slo.0.max=3h --json
/usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["points"][0]
assert p["miss_quarter"] == "Y1Q2" and [q["meets"] for q in p["quarters"]] == [True, False], p
assert p["quarters"][1]["wait_p95"]["hi"] > 3 * 3600 >= p["quarters"][0]["wait_p95"]["hi"]
' out.txt && ok || bad "--json: miss_quarter and quarters"

# the sensitivity block: electricity and GPU price recomputed (no run), demand
# growth and arrival rate re-run: 2 x (2 - 1) quarters (quarter 1 of the
# growth variants is the base demand, reused) + 2 x 2 quarters, x 3 reps = 18 runs;
# in all 12 search runs (2 fleets x 2 quarters x 3, which the quarterly cash
# flow reuses) + 18 sensitivity runs
expect_exit 0 "$FLEETSIM" plan fin.yaml -o sens -j 2 --set plan.sensitivity=0.25
expect_out '^sensitivity of the NPV of owned .*demand re-run \(18 runs\)'
expect_out '^  electricity    recomputed '
expect_out '^  arrival_rate   re-run '
expect_out '^30 runs executed now'
/usr/bin/python3 - sens/plan.h5 <<'PY' && ok || bad "/plan_sensitivity"
import sys, h5py
f = h5py.File(sys.argv[1])
s = f["plan_sensitivity"][:]
assert [p.decode() for p in s["parameter"]] == ["electricity", "gpu_price", "demand_growth",
                                                "arrival_rate"]
assert list(s["rerun"]) == [0, 0, 1, 1]
assert all(abs(x - 0.75) < 1e-12 for x in s["low_factor"])
# electricity x 1.25 costs more, x 0.75 less, around the NPV as given
base = f.attrs["sensitivity_npv_mean"]
e = s[0]
assert e["npv_low_mean"] < base < e["npv_high_mean"], (e, base)
assert f.attrs["sensitivity_runs"] == 18
PY
expect_exit 0 "$FLEETSIM" report sens/plan.h5 -o rep.html
[ -s rep_plots/plan_tornado.png ] && [ -s rep_plots/plan_cash.png ] && ok || bad "no tornado or cash plot"
grep -q 'Sensitivity of the NPV (tornado)' rep.html && ok || bad "no tornado in the report"

# bad input: exit 2 at the place
sed 's/    - {pool: main, billing: owned}/    - {pool: main, billing: lease, lease_term: 12}/' fin.yaml > norate.yaml
expect_exit 2 "$FLEETSIM" plan norate.yaml -o x
expect_err 'norate.yaml:[0-9]+:[0-9]+: .*billing lease needs lease_rate'
sed 's/  demand_growth: 0.4/  demand_growth: -1.5/' fin.yaml > neg.yaml
expect_exit 2 "$FLEETSIM" plan neg.yaml -o x
expect_err 'neg.yaml:20:18: .*demand_growth'
sed 's/  years: 0.5/  years: 0.3/' fin.yaml > years.yaml
expect_exit 2 "$FLEETSIM" plan years.yaml -o x
expect_err 'years.yaml:19:10: plan.years: 0.3 is not a whole number of quarters'
(cat fin.yaml; printf '  baseline: nope\n') > base.yaml
expect_exit 2 "$FLEETSIM" plan base.yaml -o x
expect_err "base.yaml:[0-9]+:[0-9]+: plan.baseline: 'nope' is not the name of a choice"
sed 's/    - {pool: main, billing: owned}/    - {pool: main, billing: owned}\n  purchases: [{pool: main, nodes: 2, quarter: 3}]/' fin.yaml > late.yaml
expect_exit 2 "$FLEETSIM" plan late.yaml -o x
expect_err 'late.yaml:[0-9]+:[0-9]+: .*quarter 3 is beyond plan.years \(0.5 years: quarters 1..2\)'
sed 's/    - {pool: main, billing: owned}/    - {pool: main, billing: lease, lease_rate: 100}/' fin.yaml > noterm.yaml
expect_exit 2 "$FLEETSIM" validate noterm.yaml
expect_err 'noterm.yaml:[0-9]+:[0-9]+: .*no lease_term'

finish
