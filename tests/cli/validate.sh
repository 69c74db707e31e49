#!/usr/bin/env bash
# fleetsim validate: good files pass, bad files fail with FILE:LINE:COL and
# exit status 2.
source "$(dirname "$0")/lib/common.bash"

expect_exit 0 "$FLEETSIM" validate "$SRC/scenarios/default.yaml"
expect_out 'ok'

cat > unknown.yaml <<'Y'
name: x
horizon: 1d
cluster:
  pools:
    - {name: a, gpu: H100, nodes: 2, gpus_per_node: 8}
  colour: blue
workload:
  synthetic:
    arrivals: {process: poisson, rate: 1/h}
    gpus: {1: 1.0}
    duration: {dist: exponential, mean: 1h}
Y
expect_exit 2 "$FLEETSIM" validate unknown.yaml
expect_err '^unknown.yaml:6:3: .*colour'

sed 's/rate: 1\/h/rate: 1 per hour/' unknown.yaml | sed '/colour/d' > badrate.yaml
expect_exit 2 "$FLEETSIM" validate badrate.yaml
expect_err '^badrate.yaml:8:[0-9]+: .*rate'

sed '/colour/d; s/{1: 1.0}/{1: 0.5, 8: 0.4}/' unknown.yaml > badmix.yaml
expect_exit 2 "$FLEETSIM" validate badmix.yaml
expect_err '^badmix.yaml:9:[0-9]+: .*(sum|1)'

sed '/colour/d; s/{1: 1.0}/{1: 0.5, 32: 0.5}/' unknown.yaml > toobig.yaml
expect_exit 2 "$FLEETSIM" validate toobig.yaml
expect_err '^toobig.yaml:9:[0-9]+: .*32'

# MIG re-partitioning's drain (docs/mig.md "Draining a busy node"): a bad mode, a negative timeout
sed '/colour/d; s/gpus_per_node: 8}/gpus_per_node: 8, mig: all-1g.10gb, mig_repartition: {drain: sometimes}}/' unknown.yaml > baddrain.yaml
expect_exit 2 "$FLEETSIM" validate baddrain.yaml
expect_err '^baddrain.yaml:5:[0-9]+: .*drain.*none, wait, evict'
sed 's/drain: sometimes/drain: evict, drain_timeout: -5s/' baddrain.yaml > badtimeout.yaml
expect_exit 2 "$FLEETSIM" validate badtimeout.yaml
expect_err '^badtimeout.yaml:5:[0-9]+: .*drain_timeout.*negative'

# ... and its layout (docs/mig.md "Mixed layouts"): all or mixed
sed 's/drain: sometimes/layout: balanced/' baddrain.yaml > badlayout.yaml
expect_exit 2 "$FLEETSIM" validate badlayout.yaml
expect_err '^badlayout.yaml:5:[0-9]+: .*layout.*all, mixed'
sed 's/drain: sometimes/layout: mixed/' baddrain.yaml > mixed.yaml
expect_exit 0 "$FLEETSIM" validate mixed.yaml

sed '/colour/d; s/H100/Z900/' unknown.yaml > badgpu.yaml
expect_exit 2 "$FLEETSIM" validate badgpu.yaml
expect_err '^badgpu.yaml:5:[0-9]+: .*Z900'

sed '/colour/d; s/horizon: 1d/horizon: nan/' unknown.yaml > nan.yaml
expect_exit 2 "$FLEETSIM" validate nan.yaml
expect_err '^nan.yaml:2:10: '

printf 'name: x\nname: y\n' > dup.yaml
expect_exit 2 "$FLEETSIM" validate dup.yaml
expect_err '^dup.yaml:2:1: .*(duplicate|twice)'

printf 'name: [unclosed\n' > broken.yaml
expect_exit 2 "$FLEETSIM" validate broken.yaml
expect_err '^broken.yaml:[0-9]+:[0-9]+: '

expect_exit 2 "$FLEETSIM" validate "$SRC/scenarios/default.yaml" --set cluster.pools.0.nodes=0
expect_err 'cluster.pools.0.nodes'
expect_exit 2 "$FLEETSIM" validate
expect_exit 0 "$FLEETSIM" validate --keys
expect_out 'cluster.pools'

# Issue 39: what run refuses, validate refuses, both at the offending key's
# FILE:LINE:COL with exit 2 and no results file (docs/robustness.md)
refused() {    # refused FILE REGEX
    expect_exit 2 "$FLEETSIM" validate "$1" && expect_err "$2"
    expect_exit 2 "$FLEETSIM" run "$1" -o refused.h5 -q && expect_err "$2"
    expect_no_file refused.h5
}
printf 'id,submit,gpus,duration\n1,0,8,3600\n' > ng.csv
cat > ng.yaml <<'Y'
name: nodegroups
horizon: 2h
until: horizon
cluster:
  pools:
    - {name: fixed, gpu: H100, nodes: 1, gpus_per_node: 4}
    - {name: burst, gpu: H100, nodes: 4, gpus_per_node: 8}
  autoscale:
    node_groups: [{pool: burst, min: 0, max: 3}]
workload:
  trace: {path: ng.csv, format: native}
Y
expect_exit 0 "$FLEETSIM" validate ng.yaml
sed 's/pool: burst,/pool: bust,/' ng.yaml > ng-pool.yaml
refused ng-pool.yaml '^ng-pool.yaml:9:26: cluster.autoscale.node_groups.0.pool: no pool named .bust.'
sed 's/min: 0, max: 3/min: 4, max: 3/' ng.yaml > ng-min.yaml
refused ng-min.yaml '^ng-min.yaml:9:38: cluster.autoscale.node_groups.0.min: 4 is above max \(3\)'
sed 's/max: 3/max: 9/' ng.yaml > ng-max.yaml
refused ng-max.yaml '^ng-max.yaml:9:46: cluster.autoscale.node_groups.0.max: 9 nodes, more than pool .burst. has \(4'
sed 's/\[{pool: burst, min: 0, max: 3}\]/[{pool: burst}, {pool: burst}]/' ng.yaml > ng-twice.yaml
refused ng-twice.yaml '^ng-twice.yaml:9:41: cluster.autoscale.node_groups.1.pool: pool .burst. is already a node group \(item 0\)'
(cat ng.yaml; printf 'cost:\n  purchases:\n    - {pool: burst, nodes: 1, at: 1h}\n') > ng-bought.yaml
refused ng-bought.yaml '^ng-bought.yaml:9:26: cluster.autoscale.node_groups.0.pool: pool .burst. also has cost.purchases'
# the purchase timeline's and the cost model's rules
(cat ng.yaml; printf 'cost:\n  purchases:\n    - {pool: fixed, nodes: 1, at: 1h}\n    - {pool: fixed, nodes: 2, at: 2h}\n') > overbuy.yaml
refused overbuy.yaml '^overbuy.yaml:15:28: cost.purchases: 3 nodes bought for pool .fixed., which has 1'
(cat ng.yaml; printf 'cost:\n  pools:\n    - {pool: fixed, online: 2h, retire: 1h}\n') > retire.yaml
refused retire.yaml '^retire.yaml:14:41: cost.pools.0.retire: must be after online'
(cat ng.yaml; printf 'cost:\n  purchases:\n    - {pool: fixed, nodes: 1, at: 2h, retire: 1h}\n') > pretire.yaml
refused pretire.yaml '^pretire.yaml:14:47: cost.purchases.0.retire: must be after at'
(cat ng.yaml; printf 'cost:\n  pools:\n    - {pool: nope, billing: owned}\n') > costpool.yaml
refused costpool.yaml '^costpool.yaml:14:14: cost.pools.0.pool: no cluster pool named .nope.'

# an empirical distribution's file is bounded: /dev/zero, an endless stream
sed '/colour/d; s|duration: {dist: exponential, mean: 1h}|duration: {dist: empirical, path: /dev/zero}|' unknown.yaml > zero.yaml
refused zero.yaml '^zero.yaml:10:39: workload.synthetic.duration.path: /dev/zero:1: not a text file \(it holds a NUL byte\)'
sed 's|/dev/zero|/dev/stdin|' zero.yaml > endless.yaml
yes 1 | "$FLEETSIM" validate endless.yaml >out.txt 2>err.txt
[ $? -eq 2 ] && ok || bad "an endless stream of values: exit $? (expected 2)"
expect_err '^endless.yaml:10:39: .*/dev/stdin:10000001: more than 10000000 values: an empirical sample is at most'
yes '# a comment that never ends ............................................' |
    "$FLEETSIM" validate endless.yaml >out.txt 2>err.txt
[ $? -eq 2 ] && ok || bad "an endless stream of comments: exit $? (expected 2)"
expect_err '^endless.yaml:10:39: .*/dev/stdin: more than 256 MiB: an empirical sample is at most 256 MiB'
printf 'runtime\n60\n# a comment\n120\n' > sample.txt
sed 's|/dev/zero|sample.txt|' zero.yaml > sample.yaml
expect_exit 0 "$FLEETSIM" validate sample.yaml

# 300,000 tenants (what `trace fit` writes for a large trace) validate in
# seconds: the duplicate-name check is O(n log n), not pairwise (minutes)
sed '/colour/d' unknown.yaml > many.yaml
awk 'BEGIN { n = 300000; printf "    tenants: {"; for (i = 0; i < n; i++) printf "%st%d: %.17g", (i ? ", " : ""), i, 1 / n; print "}" }' >> many.yaml
start=$(date +%s)
expect_exit 0 timeout 60 "$FLEETSIM" validate many.yaml
took=$(( $(date +%s) - start ))
[ "$took" -le 20 ] && ok || bad "300,000 tenants took $took s to validate (expected seconds)"

# a service's request trace is opened when the scenario is validated: a
# directory or a missing file is refused at the key, an empty trace warned about
mkdir -p tracedir
cat > svc.yaml <<'Y'
name: svc
horizon: 1h
until: horizon
cluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]}
workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1.0}, duration: {dist: constant, value: 1m}}}
services:
  - name: s
    requests: {process: trace, trace: tracedir}
    performance: [{gpu: H100, prefill: 1000, decode: 100, max_batch: 4}]
Y
refused svc.yaml '^svc.yaml:8:39: services.0.requests.trace: .*/tracedir: is a directory \(expected a request trace'
sed 's/trace: tracedir/trace: missing.csv/' svc.yaml > svc-missing.yaml
refused svc-missing.yaml '^svc-missing.yaml:8:39: services.0.requests.trace: cannot open .*/missing.csv: No such file'
expect_exit 2 "$FLEETSIM" trace fit --requests tracedir -o fit.yaml
expect_err '^tracedir: is a directory'
expect_no_file fit.yaml
: > empty.csv
sed 's/trace: tracedir/trace: empty.csv/' svc.yaml > svc-empty.yaml
expect_exit 0 "$FLEETSIM" validate svc-empty.yaml
expect_err '^svc-empty.yaml:8:39: warning: services.0.requests.trace: .*/empty.csv holds no requests \(an empty file\)'
expect_exit 0 "$FLEETSIM" run svc-empty.yaml -o empty.h5 -q
expect_err 'warning: services.0.requests.trace: .*/empty.csv holds no requests'
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n' > header.csv
sed 's/trace: tracedir/trace: header.csv/' svc.yaml > svc-header.yaml
expect_exit 0 "$FLEETSIM" validate svc-header.yaml
expect_err '^svc-header.yaml:8:39: warning: services.0.requests.trace: .*/header.csv holds no requests \(only its header\)'
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,10,5\n' > one.csv
sed 's/trace: tracedir/trace: one.csv/' svc.yaml > svc-one.yaml
expect_exit 0 "$FLEETSIM" validate svc-one.yaml
[ -s err.txt ] && bad "a trace with a request: stderr: $(cat err.txt)" || ok

# the dump is a fixed point: dump(load(dump(x))) == dump(x)
expect_exit 0 "$FLEETSIM" validate --dump "$SRC/scenarios/default.yaml"
cp out.txt d1.yaml
expect_exit 0 "$FLEETSIM" validate --dump d1.yaml
cmp -s out.txt d1.yaml && ok || bad "dump is not a fixed point"
# ---- the rules that need the fleet built (issue 39): the topology against
# the pools' nodes, a planned outage's unit, a service's pool -- refused by
# validate as by run, at the key's FILE:LINE:COL
W='workload: {synthetic: {arrivals: {process: poisson, rate: 1/h}, gpus: {8: 1}, duration: {dist: exponential, mean: 1h}}}'
cat > fleet.yaml <<Y
name: fleet-rules
until: horizon
horizon: 2h
cluster:
  pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]
  topology: {nvlink_domain: 16, nodes_per_rack: 2}
$W
failures:
  planned:
    - {kind: node, unit: 3, at: 1h, duration: 1h}
services:
  - name: chat
    gpus: 2
    requests: {rate: 1/s, input: {dist: lognormal, median: 600, sigma: 1}, output: {dist: lognormal, median: 200, sigma: 0.8}}
    performance: [{gpu: H100, prefill: 10000, decode: 50, max_batch: 32}]
Y
expect_exit 0 "$FLEETSIM" validate fleet.yaml
sed 's/nvlink_domain: 16/nvlink_domain: 12/' fleet.yaml > fl-dom.yaml
refused fl-dom.yaml "^fl-dom.yaml:6:29: cluster.topology.nvlink_domain: 12 GPUs is not a multiple of pool 'p''s 8 GPUs per node"
sed 's/nodes_per_rack: 2/nodes_per_rack: 3/' fleet.yaml > fl-rack.yaml
refused fl-rack.yaml '^fl-rack.yaml:6:49: cluster.topology.nodes_per_rack: 3 nodes do not hold whole NVLink domains of 2 nodes'
sed 's/unit: 3,/unit: 4,/' fleet.yaml > fl-unit.yaml
refused fl-unit.yaml '^fl-unit.yaml:10:26: failures.planned.0.unit: 4 is out of range \(the fleet has 4 node units\)'
sed 's/kind: node, unit: 3/kind: rack, unit: 2/' fleet.yaml > fl-rack-unit.yaml
refused fl-rack-unit.yaml '^fl-rack-unit.yaml:10:26: failures.planned.0.unit: 2 is out of range \(the fleet has 2 rack units\)'
sed 's/gpu: H100, prefill/gpu: A100, prefill/' fleet.yaml > fl-svc.yaml
refused fl-svc.yaml "^fl-svc.yaml:15:18: services.0.performance: service 'chat' has no pool to run on"
sed 's/gpus: 2$/gpus: 16/' fleet.yaml > fl-svc16.yaml
refused fl-svc16.yaml "^fl-svc16.yaml:15:18: services.0.performance: service 'chat' has no pool to run on \(no pool of its GPU models without MIG with nodes of 16 GPUs\)"

finish
