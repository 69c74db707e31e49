#!/usr/bin/env bash
# Issue 39, fleetsim versus: a key one variant sets need not be restated by
# the others, whatever its type (a block such as scheduler.plugin, a list
# such as scheduler.volcano.queues): a variant that does not set it runs the
# scenario's value; scheduler.queue=X without scheduler.plugin.* means the
# built-in X even when the scenario names a plugin; a variant whose runs
# fail is marked with its error while the others are shown (exit 1, no
# index); --metrics takes the SERVICE.COLUMN figures `fleetsim plan` takes.
source "$(dirname "$0")/lib/common.bash"

cat > loaded.yaml <<'EOF'
name: loaded
horizon: 6h
until: horizon
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 8, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 14/h}, gpus: {1: 0.5, 8: 0.5},
              duration: {dist: exponential, mean: 1h}}
EOF

# two plugins built from the repository's header: the FIFO of docs/plugins.md,
# and one whose every scheduling pass fails (a run that fails, not a scenario
# that validate refuses)
cat > plugin_fail.c <<'EOF'
#include <fleetsim.h>
#include <stdlib.h>

typedef struct st { size_t queued; } st_t;

static int create(const fleetsim_host *host, const char *const *keys, const char *const *values,
                  size_t n, void **state, char *err, size_t errlen)
{
    (void)host, (void)keys, (void)values, (void)n, (void)err, (void)errlen;
    return (*state = calloc(1, sizeof(st_t))) ? 0 : 1;
}
static void destroy(void *state) { free(state); }
static int enqueue(void *state, uint32_t handle) { (void)handle; ((st_t *)state)->queued++; return 0; }
static int pass(void *state) { (void)state; return -1; }
static void job_end(void *state, uint32_t handle) { (void)state, (void)handle; }
static size_t queued(const void *state) { return ((const st_t *)state)->queued; }
static const fleetsim_policy table = {FLEETSIM_POLICY_ABI, "fail", create, destroy, enqueue, pass,
                                      job_end, queued, NULL};
const fleetsim_policy *fleetsim_policy_entry(void) { return &table; }
EOF
for p in "$SRC/tests/install/plugin_fifo.c" plugin_fail.c; do
    cc -std=c17 -Wall -Wextra -Werror -fPIC -shared -I "$SRC/sim/api" "$p" \
        -o "$(basename "$p" .c).so" 2> cc.log || bad "plugin build: $(cat cc.log)"
done

json_get() {  # json_get FILE PYTHON-EXPRESSION-ON-doc
    /usr/bin/python3 -c 'import json, sys; doc = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}

# 1. the scenario names a plugin: -p sjf=scheduler.queue=sjf is the built-in SJF (it was the
# plugin, the block leaking in), -p fifo=scheduler.queue=fifo the built-in FIFO, which
# schedules as the FIFO plugin does
sed "\$a scheduler:\n  plugin: {path: $WORK/plugin_fifo.so, options: {mode: best_effort}}" loaded.yaml > pl.yaml
expect_exit 0 "$FLEETSIM" versus pl.yaml -p plug -p fifo=scheduler.queue=fifo -p sjf=scheduler.queue=sjf \
    -r 3 -j 2 -o v1 --metrics wait_mean,jobs_completed
expect_out 'point 1  fifo +scheduler.queue=fifo scheduler.plugin=null$'
expect_out 'point 2  sjf +scheduler.queue=sjf scheduler.plugin=null$'
expect_out 'point 0  plug +scheduler.queue=fifo scheduler.plugin=\(scenario\)$'
expect_exit 0 "$FLEETSIM" versus pl.yaml -p plug -p fifo=scheduler.queue=fifo -p sjf=scheduler.queue=sjf \
    -r 3 -j 2 -o v1 --metrics wait_mean,jobs_completed --resume --json
cp out.txt v1.json
[ "$(json_get v1.json 'doc["variants"][1]["minus_baseline"]["wait_mean"]["diff"] == 0')" = True ] && ok \
    || bad "the built-in FIFO does not schedule as the FIFO plugin: $(cat v1.json)"
[ "$(json_get v1.json 'doc["variants"][2]["minus_baseline"]["wait_mean"]["diff"] < 0')" = True ] && ok \
    || bad "-p sjf=scheduler.queue=sjf ran the scenario's plugin, not the built-in SJF"
# a plugin variant beside the built-ins keeps its plugin: scheduler.plugin.* in it
expect_exit 0 "$FLEETSIM" versus pl.yaml -p sjf=scheduler.queue=sjf \
    -p strict=scheduler.queue=fifo,scheduler.plugin.options.mode=strict -r 2 -j 2 -o v1b --metrics wait_mean
expect_out 'point 1  strict +scheduler.queue=fifo scheduler.plugin.options.mode=strict scheduler.plugin=\(scenario\)$'

# 2. the scenario names no plugin: one variant sets the whole plugin block, another a list;
# neither is restated by the others (both were refused: "give ... in every -p")
expect_exit 0 "$FLEETSIM" versus loaded.yaml -p fifo=scheduler.queue=fifo \
    -p "plug=scheduler.plugin={path: ./plugin_fifo.so}" \
    -p "vol=scheduler.queue=volcano,scheduler.volcano.queues=[{name: a, weight: 1}]" \
    -r 2 -j 2 -o v2 --metrics wait_mean
expect_out 'point 0  fifo +scheduler.queue=fifo scheduler.plugin=\(scenario\) scheduler.volcano.queues=\(scenario\)$'
grep -Eq '^wait_mean .* \+0\.0 s \(every rep\.\) ' out.txt && ok || bad "the FIFO plugin differs from the built-in FIFO"

# 3. a variant whose runs fail: the others are shown, it is marked with its error, exit 1
expect_exit 1 "$FLEETSIM" versus loaded.yaml -p fifo=scheduler.queue=fifo \
    -p bad=scheduler.plugin.path=./plugin_fail.so -p sjf=scheduler.queue=sjf -r 2 -j 2 -o v3 \
    --metrics wait_mean
expect_out '^wait_mean +[0-9.]+ (s|min|h) \+- [0-9.]+ (s|min|h) +failed +[0-9.]+ (s|min|h) \+- '
expect_out '^bad failed: replication 0: scheduling pass'
expect_out '^wait_mean +failed +-?[0-9.]+ (s|min|h) \['
expect_err 'fleetsim versus: bad failed: replication 0: scheduling pass'
expect_err '1 of 3 policies failed; v3/index.h5 is not written'
expect_no_file v3/index.h5
[ -e v3/runs/p0002-r0001.h5 ] && ok || bad "the other variants' runs were not kept"
expect_exit 1 "$FLEETSIM" versus loaded.yaml -p fifo=scheduler.queue=fifo \
    -p bad=scheduler.plugin.path=./plugin_fail.so -p sjf=scheduler.queue=sjf -r 2 -j 2 -o v3 \
    --metrics wait_mean --resume --json
cp out.txt v3.json
[ "$(json_get v3.json '[v.get("error", "-")[:30] for v in doc["variants"]]')" = \
  "['-', 'replication 0: scheduling pass', '-']" ] && ok || bad "--json: the failed variant: $(cat v3.json)"
[ "$(json_get v3.json '"metrics" in doc["variants"][2] and "minus_baseline" in doc["variants"][2]')" = True ] \
    && ok || bad "--json: sjf is not shown beside the failed variant"
# the baseline fails: the differences are against the first that ran
expect_exit 1 "$FLEETSIM" versus loaded.yaml -p bad=scheduler.plugin.path=./plugin_fail.so \
    -p fifo=scheduler.queue=fifo -p sjf=scheduler.queue=sjf -r 2 -j 2 -o v4 --metrics wait_mean
expect_out 'paired differences against fifo'
expect_out 'bad - fifo +sjf - fifo'
# every variant fails: nothing to show, exit 1
expect_exit 1 "$FLEETSIM" versus loaded.yaml -p bad=scheduler.plugin.path=./plugin_fail.so \
    -p bad2=scheduler.plugin.path=./plugin_fail.so,scheduler.mode=strict -r 1 -o v5
expect_err '2 of 2 policies failed'

# 4. --metrics: SERVICE.COLUMN as plan's SLOs take them (docs/services.md "Planning a mixed fleet")
cat > svc.yaml <<'EOF'
name: svc
horizon: 6h
until: horizon
cluster:
  pools:
    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 8}
workload:
  synthetic: {arrivals: {rate: 6/h}, gpus: {1: 0.5, 8: 0.5},
              duration: {dist: exponential, mean: 1h}}
scheduler: {queue: priority, preemption: order, checkpoint_interval: 30m}
services:
  - name: chat
    mode: fluid
    gpus: 2
    priority: 1000
    min_replicas: 1
    max_replicas: 6
    requests: {process: poisson, rate: 2/s, input: {dist: lognormal, median: 600, sigma: 1},
               output: {dist: lognormal, median: 200, sigma: 0.8}}
    performance:
      - {gpu: H100, prefill: 8000, decode: 1500, max_batch: 32, decode_single: 80}
    slo: {ttft: 2s}
output: {service_bucket: 1h}
EOF
expect_exit 0 "$FLEETSIM" versus svc.yaml -p prio -p fifo=scheduler.queue=fifo,scheduler.preemption=none \
    -r 2 -j 2 -o s1 --metrics chat.ttft_p99,chat.buckets_met,chat.replica_hours,wait_mean
expect_out '^chat.ttft_p99 +[0-9.]+ (s|min|h)'
expect_out '^chat.buckets_met +[0-9.]+%'
expect_out '^chat.replica_hours +[0-9.]+'
expect_out '^wait_mean '
# each the run files' /services figure
expect_exit 0 "$FLEETSIM" versus svc.yaml -p prio -p fifo=scheduler.queue=fifo,scheduler.preemption=none \
    -r 2 -j 2 -o s1 --metrics chat.replica_hours --resume --json
cp out.txt s1.json
if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    /usr/bin/python3 - s1.json <<'EOF' && ok || bad "versus --json chat.replica_hours is not the run files' /services"
import json, sys, h5py
doc = json.load(open(sys.argv[1]))
for p, v in enumerate(doc["variants"]):
    for r, got in enumerate(v["metrics"]["chat.replica_hours"]["values"]):
        s = h5py.File("s1/runs/p%04d-r%04d.h5" % (p, r), "r")["services"]
        want = float(s["replica_hours"][list(s["name"]).index(b"chat")])
        assert got == want, (p, r, got, want)
EOF
fi
# a wrong name is refused before anything runs, with the columns listed
expect_exit 2 "$FLEETSIM" versus svc.yaml -p prio -p fifo=scheduler.queue=fifo,scheduler.preemption=none \
    -r 2 -o s2 --metrics chat.bogus
expect_err "--metrics: 'chat.bogus' is neither a /summary column .* \(COLUMN one of requests, completed, ttft_p50"
expect_no_file s2
expect_exit 2 "$FLEETSIM" versus loaded.yaml -p a -p b=scheduler.queue=sjf -r 2 -o s3 --metrics chat.ttft_p99
expect_err "'chat.ttft_p99' is not a /summary column \(docs/results.md\); the scenario has no services"
expect_no_file s3
finish
