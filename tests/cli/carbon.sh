#!/usr/bin/env bash
# Carbon (docs/cost.md, "Carbon"): a bad cost.carbon_series is refused by
# `fleetsim validate` and `fleetsim run` with exit status 2 and the series'
# FILE:LINE:COL; a good one runs, prints the `carbon` line and writes the
# carbon columns of /summary, /cost, /cost_pools and /cost_tenants; -o
# naming the series is refused (an input); a run
# without carbon keys prints no `carbon` line; `fleetsim plan` takes
# carbon_kg as objective and carbon_per_gpu_hour_g as an SLO metric.
source "$(dirname "$0")/lib/common.bash"

cat > s.yaml <<'EOF'
name: carbon-cli
seed: 3
horizon: 1d
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 2, gpus_per_node: 8}
workload:
  synthetic:
    arrivals: {process: poisson, rate: 4/h}
    gpus: {1: 0.5, 8: 0.5}
    duration: {dist: exponential, mean: 1h}
cost:
  carbon_series: ci.csv
  pools: [{pool: main, embodied_kgco2e: 2500}]
output: {timeline_interval: 0s}
plan:
  objective: carbon_kg
  replications: 2
  slo:
    - {metric: carbon_per_gpu_hour_g, max: 100000}
  choices:
    - {pool: main, nodes: {from: 1, to: 2}}
EOF

printf 'hour_start_s,gco2e_per_kwh\n0,300\n3600,420\n7200,x\n' > ci.csv
expect_exit 2 "$FLEETSIM" validate s.yaml
expect_err 'ci\.csv:4:6: field gco2e_per_kwh: expected g CO2e per kWh, a number >= 0, got .x. \(cost\.carbon_series\)'
printf 'hour_start_s,gco2e_per_kwh\n0,300\n7200,420\n' > ci.csv
expect_exit 2 "$FLEETSIM" run s.yaml -o bad.h5
expect_err 'ci\.csv:3:1: field hour_start_s: expected 3600'
expect_no_file bad.h5

printf 'hour_start_s,gco2e_per_kwh\n0,300\n3600,420\n7200,350\n' > ci.csv
expect_exit 0 "$FLEETSIM" validate s.yaml
expect_exit 0 "$FLEETSIM" run s.yaml -o r.h5
expect_out '^carbon +[0-9.]+ t CO2e \(whole run\): [0-9.]+ g per delivered GPU-hour; embodied [0-9.]+ t; grid hourly series of 3 h, repeated$'
if command -v h5dump >/dev/null; then
    for t in summary cost cost_pools cost_tenants; do
        if h5dump -H -d "/$t" r.h5 | grep -q '"carbon_kg"'; then ok; else bad "/$t has no carbon_kg"; fi
    done
    if h5dump -H -d /cost r.h5 | grep -q '"carbon_embodied_kg"'; then ok; else bad "/cost has no carbon_embodied_kg"; fi
fi

expect_exit 2 "$FLEETSIM" run s.yaml -o ci.csv    # the series is an input: never overwritten
expect_err 'refusing to overwrite an input'
[ "$(head -1 ci.csv)" = hour_start_s,gco2e_per_kwh ] && ok || bad "ci.csv was overwritten"

expect_exit 0 "$FLEETSIM" run s.yaml --set cost.carbon_series=null --set cost.pools.0.embodied_kgco2e=0
if grep -q '^carbon ' out.txt; then bad "a run without carbon printed a carbon line"; else ok; fi

expect_exit 0 "$FLEETSIM" plan s.yaml -o plan-out
expect_out '^chosen: .*carbon_kg .*carbon_per_gpu_hour_g'

finish
