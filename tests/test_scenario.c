/*
 * Tests of the scenario language (scenarios/fs_scenario.c, fs_keys.c) and
 * of fs_config_init/release: the default scenario's values, every error
 * class with its exact FILE:LINE:COL, overrides, the dump round trip,
 * empirical files, the key table's own consistency, docs/scenario.md being
 * up to date, robustness on damaged input, and allocation-failure injection.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* open_memstream, chdir */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_test_util.h"
#include "models/fs_catalog.h"
#include "models/fs_config.h"
#include "scenarios/fs_keys.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "sim/fs_dist.h"

#define SCN FS_TEST_DATA "/scenarios"

static int64_t live0;

static int setup(void **state)
{
    (void)state;
    live0 = fs_alloc_live();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fs_alloc_fail_after(0);
    assert_int_equal(fs_alloc_live(), live0);
    return 0;
}

/* A small valid scenario, for error tests to break one line of. */
#define POOL "cluster:\n  pools:\n    - {name: main, gpu: H100, nodes: 32, gpus_per_node: 8}\n"
#define SYNTH "workload:\n  synthetic:\n    arrivals: {rate: 10/h}\n    gpus: {1: 0.5, 8: 0.5}\n" \
              "    duration: {dist: exponential, mean: 1h}\n"

/* Loads text named "t.yaml"; expects FS_EINVAL and exactly `want` as the
 * message, or (want ending in '*') a message starting with it. */
static void expect_error(const char *text, const char *const *ovr, size_t n, const char *want)
{
    fs_config_t cfg;
    fs_error_t err;
    int rc = fs_scenario_load_string("t.yaml", text, ovr, n, &cfg, &err);
    if (rc != FS_EINVAL)
        fail_msg("rc %d (%s) for:\n%s", rc, err.msg, text);
    assert_int_equal(err.code, FS_EINVAL);
    size_t wl = strlen(want);
    if (wl && want[wl - 1] == '*') {
        if (strncmp(err.msg, want, wl - 1) != 0)
            fail_msg("message\n  %s\ndoes not start with\n  %.*s", err.msg, (int)wl - 1, want);
    } else if (strcmp(err.msg, want) != 0) {
        fail_msg("message\n  %s\nis not\n  %s", err.msg, want);
    }
    /* the config was released: releasing again is harmless */
    fs_config_release(&cfg);
}

static void load_ok(const char *text, const char *const *ovr, size_t n, fs_config_t *cfg)
{
    fs_error_t err;
    int rc = fs_scenario_load_string("t.yaml", text, ovr, n, cfg, &err);
    if (rc)
        fail_msg("load failed: %s", err.msg);
}

/* ---- the default scenario ------------------------------------------------ */

static void check_default_values(const fs_config_t *c)
{
    assert_string_equal(c->name, "default-h100-fifo");
    assert_int_equal(c->seed, 1);
    assert_int_equal(c->replication, 0);
    assert_int_equal(c->horizon, 7 * FS_US_PER_DAY);
    assert_int_equal(c->until, FS_UNTIL_DRAIN);
    assert_int_equal(c->warmup, FS_US_PER_DAY);
    assert_int_equal(c->cluster.n_pools, 1);
    assert_string_equal(c->cluster.pools[0].name, "main");
    assert_string_equal(c->cluster.pools[0].gpu, "H100");
    assert_int_equal(c->cluster.pools[0].nodes, 128);
    assert_int_equal(c->cluster.pools[0].gpus_per_node, 8);
    assert_int_equal(c->workload.kind, FS_WORKLOAD_SYNTHETIC);
    assert_int_equal(c->workload.arrival_process, FS_ARRIVAL_POISSON);
    const fs_synth_cfg_t *s = &c->workload.synth;
    assert_true(s->rate == 60.0 / 3600.0);
    assert_int_equal(s->horizon, c->horizon);
    assert_int_equal(s->max_jobs, 0);
    static const uint32_t sizes[] = {1, 2, 4, 8, 16, 64};
    static const double probs[] = {0.5, 0.1, 0.1, 0.2, 0.06, 0.04};
    assert_int_equal(s->n_sizes, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(s->sizes[i], sizes[i]);
        assert_true(s->size_probs[i] == probs[i]);
    }
    assert_int_equal(s->duration.kind, FS_DIST_LOGNORMAL);
    assert_true(s->duration.median == 2700.0);
    assert_true(s->duration.sigma == 1.5);
    assert_true(s->duration.mu == log(2700.0)); /* prepared */
    assert_true(fabs(s->duration.mean - 2700.0 * exp(1.125)) < 1e-6);
    assert_true(isnan(s->duration.value) && isnan(s->duration.scale) && isnan(s->duration.shape));
    assert_int_equal(s->n_tenants, 0);
    assert_true(s->estimate_factor == 0);
    assert_int_equal(c->scheduler.queue, FS_QUEUE_FIFO);
    assert_int_equal(c->scheduler.mode, FS_FIFO_BEST_EFFORT);
    assert_int_equal(c->scheduler.placement, FS_PLACE_PACK);
    assert_int_equal(c->output.timeline_interval, 5 * FS_US_PER_MIN);
    assert_int_equal(c->output.jobs, 1);
}

/* The canonical form of tests/data/scenarios/multi.yaml, byte for byte. */
static const char multi_dump[] =
    "name: two-pools\n"
    "seed: 42\n"
    "replication: 3\n"
    "horizon: 36h\n"
    "until: horizon\n"
    "drain_limit: 365d\n"
    "warmup: 90m\n"
    "cluster:\n"
    "  pools:\n"
    "    - name: h100\n"
    "      gpu: H100\n"
    "      nodes: 32\n"
    "      gpus_per_node: 8\n"
    "      cpu_milli: 0\n"
    "      memory_mib: 0\n"
    "      ambient_c: 30\n"
    "      power_cap_w: 0\n"
    "    - name: a100\n"
    "      gpu: A100\n"
    "      nodes: 16\n"
    "      gpus_per_node: 8\n"
    "      cpu_milli: 0\n"
    "      memory_mib: 0\n"
    "      ambient_c: 30\n"
    "      power_cap_w: 0\n"
    "  topology:\n"
    "    nvlink_domain: node\n"
    "    nodes_per_rack: 0\n"
    "    racks_per_leaf: 0\n"
    "    leaves_per_spine: 0\n"
    "  speed: []\n"
    "  speed_catalog: false\n"
    "  span_speed: []\n"
    "  fabric:\n"
    "    kind: off\n"
    "    nodes_per_leaf: 0\n"
    "    nics_per_node: 0\n"
    "    nic_gbps: 0\n"
    "    rail_optimized: kind\n"
    "    oversubscription: 1\n"
    "    spines: 0\n"
    "    nvlink_gbs: 0\n"
    "    alpha_us: 14\n"
    "    efficiency: 0.83\n"
    "    traffic: []\n"
    "    failures: []\n"
    "  autoscale:\n"
    "    node_groups: []\n"
    "    provisioner: cluster-autoscaler\n"
    "    scan_interval: 10s\n"
    "    scale_down_unneeded: 10m\n"
    "    scale_down_delay_after_add: 10m\n"
    "    batch_idle_duration: 1s\n"
    "    batch_max_duration: 10s\n"
    "    consolidation_policy: when_empty_or_underutilized\n"
    "    consolidate_after: 0s\n"
    "    expander: least-waste\n"
    "    max_node_provision_time: 15m\n"
    "workload:\n"
    "  synthetic:\n"
    "    arrivals:\n"
    "      process: poisson\n"
    "      rate: 3/min\n"
    "      profile:\n"
    "        hourly: {}\n"
    "        weekly: {}\n"
    "    scale: 1\n"
    "    growth:\n"
    "      rate: 0\n"
    "      period: 30d\n"
    "    max_jobs: 5000\n"
    "    gpus: {1: 0.25, 2: 0.25, 8: 0.25, 256: 0.25}\n"
    "    duration: {dist: weibull, mean: 2h, shape: 0.8}\n"
    "    duration_by_size: []\n"
    "    tenants: {research: 0.6, prod: 0.3, \"team x\": 0.1}\n"
    "    estimate_factor: 1.5\n"
    "  tenant_scale: {}\n"
    "scheduler:\n"
    "  queue: fifo\n"
    "  preset: none\n"
    "  mode: strict\n"
    "  placement: first_fit\n"
    "  node_score: exact\n"
    "  resource_weights:\n"
    "    gpu: 1\n"
    "    cpu: 0\n"
    "    memory: 0\n"
    "  percentage_of_nodes_to_score: 0\n"
    "  balanced_allocation: 0\n"
    "  candidates: 100\n"
    "  backfill: none\n"
    "  preemption: auto\n"
    "  runtime: user\n"
    "  unknown_estimate: oracle\n"
    "  default_limit: 1d\n"
    "  restart_cost: 0s\n"
    "  checkpoint_interval: 0s\n"
    "  bf:\n"
    "    mode: exact\n"
    "    max_job_test: 100\n"
    "    resolution: 1m\n"
    "    interval: 30s\n"
    "    window: 1d\n"
    "  wfp:\n"
    "    exponent: 3\n"
    "    period: 5m\n"
    "  limits:\n"
    "    max_jobs_per_user: 0\n"
    "    max_gpus_per_user: 0\n"
    "  slurm:\n"
    "    max_age: 7d\n"
    "    decay_half_life: 7d\n"
    "    calc_period: 5m\n"
    "    weight_age: 0\n"
    "    weight_fairshare: 0\n"
    "    weight_jobsize: 0\n"
    "    weight_partition: 0\n"
    "    weight_qos: 0\n"
    "    favor_small: false\n"
    "  tiresias:\n"
    "    thresholds: \"3600\"\n"
    "    promote_knob: 0\n"
    "  kueue:\n"
    "    cluster_queues: []\n"
    "    flavors: []\n"
    "    fair_sharing: false\n"
    "  volcano:\n"
    "    queues: []\n"
    "    reclaim: false\n"
    "    preempt: false\n"
    "    drf: true\n"
    "    period: 1s\n"
    "recovery:\n"
    "  checkpoint: none\n"
    "  interval: 1h\n"
    "  write_cost: 1m\n"
    "  restore: 10m\n"
    "  detection: 5m\n"
    "  health_check: 0s\n"
    "  requeue: 0s\n"
    "  node_mttf: 0s\n"
    "  retry:\n"
    "    policy: requeue\n"
    "    limit: 0\n"
    "    base: 10s\n"
    "    max: 6m\n"
    "startup:\n"
    "  container: 0s\n"
    "  image_size: 0\n"
    "  load: 0s\n"
    "  images: []\n"
    "  node_bandwidth: 80\n"
    "  registry_bandwidth: 0\n"
    "  node_disk: 0\n"
    "telemetry:\n"
    "  duty: 1\n"
    "  sm: 0.76\n"
    "  tensor: 0.5\n"
    "  dram: 0.4\n"
    "  fb: 0.9\n"
    "  mfu: 0.375\n"
    "  activity: []\n"
    "  cap_exponent: 3\n"
    "  throttle_c: 0\n"
    "output:\n"
    "  timeline_interval: 0s\n"
    "  jobs: false\n"
    "  gpu_intervals: false\n"
    "  service_bucket: 1h\n"
    "  requests: false\n"
    "services: []\n";

static void test_default_scenario(void **state)
{
    (void)state;
    fs_config_t c;
    fs_error_t err;
    const char *text = fs_scenario_default_text();
    /* the embedded text is scenarios/default.yaml, byte for byte */
    char *file = fs_test_read(FS_SOURCE_DIR "/scenarios/default.yaml", NULL);
    assert_non_null(file);
    assert_string_equal(text, file);
    free(file);

    assert_int_equal(fs_scenario_load_string("<builtin>", text, NULL, 0, &c, &err), 0);
    check_default_values(&c);
    assert_string_equal(c.source_path, "<builtin>");
    assert_string_equal(c.source_text, text);
    fs_config_release(&c);
    fs_config_release(&c); /* released twice: harmless */

    assert_int_equal(fs_scenario_load_file(FS_SOURCE_DIR "/scenarios/default.yaml", NULL, 0, &c, &err), 0);
    check_default_values(&c);
    assert_string_equal(c.source_path, FS_SOURCE_DIR "/scenarios/default.yaml");
    fs_config_release(&c);
}

static void test_config_init_defaults(void **state)
{
    (void)state;
    fs_config_t c;
    memset(&c, 0xA5, sizeof c); /* init needs no prior state */
    fs_config_init(&c);
    assert_string_equal(c.name, "unnamed");
    assert_int_equal(c.seed, 1);
    assert_int_equal(c.replication, 0);
    assert_int_equal(c.horizon, 7 * FS_US_PER_DAY);
    assert_int_equal(c.until, FS_UNTIL_DRAIN);
    assert_int_equal(c.warmup, 0);
    assert_int_equal(c.cluster.n_pools, 0);
    assert_null(c.cluster.pools);
    assert_int_equal(c.workload.kind, FS_WORKLOAD_SYNTHETIC);
    assert_int_equal(c.workload.synth.max_jobs, 0);
    assert_true(c.workload.synth.estimate_factor == 0);
    assert_int_equal(c.workload.synth.duration.kind, FS_DIST_NONE);
    assert_null(c.workload.trace.path);
    assert_string_equal(c.workload.trace.format, "native");
    assert_int_equal(c.workload.trace.opts.lenient, 0);
    assert_true(c.workload.trace.opts.time_scale == 1.0);
    assert_int_equal(c.scheduler.queue, FS_QUEUE_FIFO);
    assert_int_equal(c.scheduler.mode, FS_FIFO_BEST_EFFORT);
    assert_int_equal(c.scheduler.placement, FS_PLACE_PACK);
    assert_int_equal(c.output.timeline_interval, 5 * FS_US_PER_MIN);
    assert_int_equal(c.output.jobs, 1);
    assert_null(c.source_path);
    fs_config_release(&c);
    assert_null(c.name);
    assert_null(c.workload.trace.format);
    fs_config_release(&c);

    /* init under allocation failure: strings stay NULL, nothing leaks */
    fs_alloc_fail_after(1);
    fs_config_init(&c);
    fs_alloc_fail_after(0);
    assert_null(c.name);
    fs_config_release(&c);
}

/* ---- the key table ------------------------------------------------------- */

static void check_table(const fs_keytab_t *t)
{
    for (size_t i = 0; i < t->n; i++) {
        const fs_key_t *k = &t->rows[i];
        assert_non_null(k->doc);
        assert_true(strlen(k->doc) > 5);
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->rows[j].path, k->path) == 0)
                fail_msg("%s: path '%s' twice", t->name, k->path);
        /* rows of one block are contiguous: once a block is left, no later
         * row returns to it (the dump would write a block twice) */
        char block[256];
        snprintf(block, sizeof block, "%s", k->path);
        for (char *dot = strrchr(block, '.'); dot; dot = strrchr(block, '.')) {
            *dot = '\0';
            size_t bl = strlen(block);
            int left = 0;
            for (size_t j = 0; j < i; j++) {
                int in = strncmp(t->rows[j].path, block, bl) == 0 &&
                         (t->rows[j].path[bl] == '.' || t->rows[j].path[bl] == '\0');
                if (in && left)
                    fail_msg("%s: block '%s' is split (row %s)", t->name, block, t->rows[j].path);
                if (!in && j > 0 && strncmp(t->rows[j - 1].path, block, bl) == 0 &&
                    (t->rows[j - 1].path[bl] == '.' || t->rows[j - 1].path[bl] == '\0'))
                    left = 1;
            }
            if (left)
                fail_msg("%s: block '%s' is split (row %s)", t->name, block, k->path);
        }
        /* every default parses (into scratch memory of the table's struct) */
        if (k->def && fs_keys_is_scalar(k)) {
            void *scratch = fs_calloc(1, t->size);
            fs_error_t e;
            if (fs_keys_parse(k, k->def, scratch, &e) != 0)
                fail_msg("%s: default '%s' of %s: %s", t->name, k->def, k->path, e.msg);
            fs_keys_release(&(fs_keytab_t){"", k, 1, t->size}, scratch);
            fs_free(scratch);
        }
        if (k->flags & FS_KF_REQUIRED)
            assert_null(k->def);
        if (k->sub)
            check_table(k->sub);
    }
}

static void test_key_table(void **state)
{
    (void)state;
    check_table(&fs_keys_config);
    /* the distribution names are fs_dist's, in its enum order */
    const fs_key_t *dk = &fs_keys_dist.rows[0];
    assert_string_equal(dk->path, "dist");
    for (int kind = FS_DIST_CONSTANT; kind <= FS_DIST_EMPIRICAL; kind++) {
        assert_string_equal(fs_keys_name(dk, (size_t)kind), fs_dist_kind_name(kind));
        assert_int_equal(fs_dist_kind_parse(fs_keys_name(dk, (size_t)kind)), kind);
        assert_true(fs_keys_dist_params(kind) & 1u);
    }
    assert_true(fs_keys_dist.n <= 32); /* fs_dist_cfg_t.given is 32 bits */
    /* the GPU names are the catalog's */
    const fs_key_t *gpu = &fs_keys_pool.rows[1];
    assert_string_equal(gpu->path, "gpu");
    for (size_t i = 0; i < fs_catalog_count(); i++)
        assert_string_equal(fs_keys_name(gpu, i), fs_catalog_get(i)->name);
    assert_null(fs_keys_name(gpu, fs_catalog_count()));
}

/* ---- errors ---------------------------------------------------------------- */

static void test_error_unknown_keys(void **state)
{
    (void)state;
    expect_error("name: x\nclusterr: 1\n", NULL, 0,
                 "t.yaml:2:1: unknown key 'clusterr' (expected one of: name, seed, replication, horizon, "
                 "until, drain_limit, warmup, cluster, workload, scheduler, failures, recovery, startup, telemetry, cost, plan, output, services, sweep)");
    expect_error("cluster:\n  pool: []\n", NULL, 0,
                 "t.yaml:2:3: unknown key 'pool' in 'cluster' (expected one of: pools, from, outages, outages_origin, topology, speed, speed_catalog, span_speed, fabric, autoscale)");
    expect_error(POOL "workload:\n  synthetic:\n    arrivals: {rat: 1/h}\n", NULL, 0,
                 "t.yaml:6:16: unknown key 'rat' in 'workload.synthetic.arrivals' (expected one of: "
                 "process, rate, profile)");
    expect_error("cluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 1, gpus: 8}\n", NULL, 0,
                 "t.yaml:3:38: unknown key 'gpus' in 'cluster.pools.0' (expected one of: name, gpu, "
                 "nodes, gpus_per_node, cpu_milli, memory_mib, mig, mig_repartition, taints, ambient_c, power_cap_w, sharing)");
    expect_error(POOL "workload:\n  synthetic:\n    duration: {dist: constant, val: 1h}\n", NULL, 0,
                 "t.yaml:6:32: unknown key 'val' in 'workload.synthetic.duration' (expected one of: "
                 "dist, value, mean, median, scale, lo, hi, sigma, shape, path, column)");
    /* a dotted key in the file is not a path */
    expect_error("cluster.pools: []\n", NULL, 0, "t.yaml:1:1: unknown key 'cluster.pools' (expected one of: *");
}

static void test_error_duplicates(void **state)
{
    (void)state;
    expect_error("seed: 1\nname: a\nseed: 2\n", NULL, 0, "t.yaml:3:1: duplicate key 'seed' (first given at line 1)");
    expect_error(POOL "workload:\n  synthetic:\n    arrivals: {rate: 1/h,\n      rate: 2/h}\n", NULL, 0,
                 "t.yaml:7:7: duplicate key 'rate' (first given at line 6)");
    expect_error(POOL "workload:\n  synthetic:\n    gpus: {1: 0.5, 01: 0.5}\n", NULL, 0,
                 "t.yaml:6:20: workload.synthetic.gpus: GPU count 1 is given twice (first at line 6)");
    expect_error("cluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 1, gpus_per_node: 8}\n"
                 "    - {name: a, gpu: A100, nodes: 1, gpus_per_node: 8}\n" SYNTH, NULL, 0,
                 "t.yaml:4:14: cluster.pools.1.name: pool name 'a' is already used by cluster.pools.0");
}

static void test_error_values(void **state)
{
    (void)state;
    /* bad unit, missing unit, NaN, negative, beyond the limit */
    expect_error("horizon: 5 parsecs\n", NULL, 0,
                 "t.yaml:1:10: horizon: unknown unit 'parsecs' in '5 parsecs' (expected a duration such as "
                 "90s, 15m, 2h or 30d; units: us, ms, s, m, h, d, w, y)");
    expect_error("horizon: 7\n", NULL, 0,
                 "t.yaml:1:10: horizon: '7' has no unit (expected a duration such as 90s, 15m, 2h or 30d)");
    expect_error(POOL SYNTH "    estimate_factor: .nan\n", NULL, 0,
                 "t.yaml:9:22: workload.synthetic.estimate_factor: '.nan' is not a finite number "
                 "(expected a number >= 0)");
    expect_error("warmup: -3m\n", NULL, 0, "t.yaml:1:9: warmup: '-3m': a duration cannot be negative*");
    expect_error("horizon: 1e400s\n", NULL, 0, "t.yaml:1:10: horizon: '1e400s' is beyond the limit of 1000 years");
    /* out of range */
    expect_error("horizon: 0s\n", NULL, 0, "t.yaml:1:10: horizon: 0s is out of range (expected a duration > 0s)");
    expect_error("cluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 0, gpus_per_node: 8}\n", NULL, 0,
                 "t.yaml:3:35: cluster.pools.0.nodes: 0 is out of range (expected a whole number from 1 "
                 "to 10000000)");
    expect_error("cluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 1, gpus_per_node: 2048}\n", NULL, 0,
                 "t.yaml:3:53: cluster.pools.0.gpus_per_node: 2048 is out of range (expected a whole "
                 "number from 1 to 1024)");
    expect_error("seed: 18446744073709551616\n", NULL, 0,
                 "t.yaml:1:7: seed: 18446744073709551616 is out of range (expected a whole number >= 0)");
    expect_error(POOL "workload:\n  synthetic:\n    arrivals: {rate: 0/h}\n", NULL, 0,
                 "t.yaml:6:22: workload.synthetic.arrivals.rate: 0/h is out of range (expected a rate > 0/s and <= 1e+06/s)");
    expect_error(POOL "workload:\n  trace: {path: x.csv, time_scale: 0}\n", NULL, 0,
                 "t.yaml:5:36: workload.trace.time_scale: 0 is out of range (expected a number > 0)");
    expect_error(POOL "workload:\n  synthetic:\n    gpus: {1: 1.5, 8: -0.5}\n", NULL, 0,
                 "t.yaml:6:15: workload.synthetic.gpus: 1: 1.5 is out of range (expected a probability from 0 to 1)");
    /* enums, booleans, GPU models */
    expect_error("until: never\n", NULL, 0, "t.yaml:1:8: until: 'never' is not one of: drain, horizon");
    expect_error("output: {jobs: maybe}\n", NULL, 0, "t.yaml:1:16: output.jobs: 'maybe' is not true or false");
    expect_error("cluster:\n  pools:\n    - {name: a, gpu: X999, nodes: 1, gpus_per_node: 8}\n", NULL, 0,
                 "t.yaml:3:22: cluster.pools.0.gpu: 'X999' is not one of: *");
    fs_config_t c;
    fs_error_t e;
    fs_scenario_load_string("t.yaml", "cluster:\n  pools:\n    - {name: a, gpu: X999, nodes: 1, gpus_per_node: 8}\n",
                            NULL, 0, &c, &e);
    for (size_t i = 0; i < fs_catalog_count(); i++) /* the message lists every known model */
        assert_non_null(strstr(e.msg, fs_catalog_get(i)->name));
}

static void test_error_types(void **state)
{
    (void)state;
    expect_error("seed: [1, 2]\n", NULL, 0, "t.yaml:1:7: seed: expected a whole number >= 0, found a list");
    expect_error("horizon: {a: 1}\n", NULL, 0,
                 "t.yaml:1:10: horizon: expected a duration such as 90s, 15m, 2h or 30d, > 0s, found a block of keys");
    expect_error("seed: 1.5\n", NULL, 0, "t.yaml:1:7: seed: '1.5' is not a whole number (expected a whole number >= 0)");
    expect_error("seed:\n", NULL, 0, "t.yaml:1:6: seed: missing value (expected a whole number >= 0)");
    expect_error("cluster: 5\n", NULL, 0, "t.yaml:1:10: cluster: expected a block of keys (pools, from, outages, outages_origin, topology, speed, speed_catalog, span_speed, fabric, autoscale), found a value '5'");
    expect_error("cluster:\n  pools: {name: a}\n", NULL, 0,
                 "t.yaml:2:10: cluster.pools: expected a list of blocks (one '- {...}' per item), found a block of keys");
    expect_error("cluster:\n  pools: [5]\n", NULL, 0,
                 "t.yaml:2:11: cluster.pools.0: expected a block of keys (name, gpu, nodes, gpus_per_node, cpu_milli, memory_mib, mig, mig_repartition, taints, ambient_c, power_cap_w, sharing), found a value");
    expect_error(POOL "workload:\n  synthetic:\n    gpus: 8\n", NULL, 0,
                 "t.yaml:6:11: workload.synthetic.gpus: expected a map of GPU counts to probabilities such as "
                 "{1: 0.5, 8: 0.5}, found a value '8'");
    expect_error(POOL "workload:\n  synthetic:\n    duration: lognormal\n", NULL, 0,
                 "t.yaml:6:15: workload.synthetic.duration: expected a distribution block such as {dist: "
                 "lognormal, median: 45m, sigma: 1.5}, found a value 'lognormal'");
    expect_error("- a\n- b\n", NULL, 0, "t.yaml:1:1: expected a block of keys at the top level, found a list");
    expect_error("{a: 1}: 2\n", NULL, 0, "t.yaml:1:1: a key must be a plain name, not a block of keys");
}

static void test_error_workload(void **state)
{
    (void)state;
    /* probabilities not summing to 1 */
    expect_error(POOL "workload:\n  synthetic:\n    gpus: {1: 0.5, 8: 0.4}\n", NULL, 0,
                 "t.yaml:6:11: workload.synthetic.gpus: the probabilities sum to 0.9 (expected 1, within 1e-9)");
    expect_error(POOL SYNTH "    tenants: {a: 0.5, b: 0.6}\n", NULL, 0,
                 "t.yaml:9:14: workload.synthetic.tenants: the shares sum to 1.1 (expected 1, within 1e-9)");
    /* a job larger than the cluster */
    expect_error("cluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 32, gpus_per_node: 8}\n"
                 "    - {name: b, gpu: H100, nodes: 16, gpus_per_node: 8}\n"
                 "workload:\n  synthetic:\n    arrivals: {rate: 1/h}\n    gpus: {1: 0.5, 512: 0.5}\n"
                 "    duration: {dist: constant, value: 1h}\n", NULL, 0,
                 "t.yaml:8:20: workload.synthetic.gpus: job size 512 is larger than any pool (largest: 256 GPUs)");
    /* both, neither */
    expect_error(POOL SYNTH "  trace: {path: x.csv}\n", NULL, 0,
                 "t.yaml:9:3: workload: give only one of 'synthetic' and 'trace', not both");
    expect_error(POOL, NULL, 0, "t.yaml:1:1: 'workload' needs one of 'synthetic' or 'trace'");
    expect_error(POOL "workload: {}\n", NULL, 0, "t.yaml:4:1: 'workload' needs one of 'synthetic' or 'trace'");
    /* required keys: at the block that lacks them */
    expect_error(POOL "workload:\n  synthetic:\n    gpus: {1: 1}\n    duration: {dist: constant, value: 1h}\n",
                 NULL, 0,
                 "t.yaml:5:3: missing key 'workload.synthetic.arrivals.rate' (expected a rate such as 40/h, "
                 "3/min or 0.5/s, > 0/s and <= 1e+06/s)");
    expect_error(SYNTH, NULL, 0, "t.yaml:1:1: missing key 'cluster.pools' (expected a list of blocks*");
    expect_error("cluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 1}\n", NULL, 0,
                 "t.yaml:3:7: missing key 'cluster.pools.0.gpus_per_node' (expected a whole number from 1 to 1024)");
    expect_error("cluster:\n  pools: []\n", NULL, 0, "t.yaml:2:10: cluster.pools: expected at least 1 item, found 0");
    expect_error(POOL "workload:\n  trace: {format: native}\n", NULL, 0,
                 "t.yaml:5:3: missing key 'workload.trace.path' (expected a file path)");
    /* cross-field */
    expect_error(POOL SYNTH "horizon: 1d\nwarmup: 2d\n", NULL, 0,
                 "t.yaml:10:9: warmup: 2d is not shorter than the horizon (1d)");
    expect_error("cluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 10000000, gpus_per_node: 1024}\n" SYNTH,
                 NULL, 0, "t.yaml:3:5: cluster.pools: 10240000000 GPUs in all is more than the limit of 2^31");
}

static void test_error_distributions(void **state)
{
    (void)state;
    const char *base = POOL "workload:\n  synthetic:\n    arrivals: {rate: 1/h}\n    gpus: {1: 1}\n";
    char text[1024];
    struct { const char *dur, *want; } cases[] = {
        {"{dist: pareto, mean: 1h}", "t.yaml:8:22: workload.synthetic.duration.dist: 'pareto' is not one of: "
                                     "constant, exponential, lognormal, weibull, gamma, uniform, empirical"},
        {"{mean: 1h}", "t.yaml:8:15: workload.synthetic.duration: missing key 'dist' (expected one of: *"},
        {"{dist: exponential, mean: 1h, sigma: 2}",
         "t.yaml:8:45: workload.synthetic.duration: 'sigma' does not apply to exponential (it takes: mean)"},
        {"{dist: lognormal, median: 1h}", "t.yaml:8:15: workload.synthetic.duration: lognormal needs sigma >= 0"},
        {"{dist: lognormal, median: 1h, mean: 2h, sigma: 1}",
         "t.yaml:8:15: workload.synthetic.duration: lognormal needs exactly one of median and mean (> 0)"},
        {"{dist: weibull, mean: 1h}", "t.yaml:8:15: workload.synthetic.duration: weibull needs shape > 0"},
        {"{dist: uniform, lo: 2h, hi: 1h}", "t.yaml:8:15: workload.synthetic.duration: uniform needs 0 <= lo <= hi"},
        {"{dist: constant, value: 3600}",
         "t.yaml:8:39: workload.synthetic.duration.value: '3600' has no unit (expected a duration*"},
        {"{dist: gamma, shape: .inf, mean: 1h}",
         "t.yaml:8:36: workload.synthetic.duration.shape: '.inf' is not a finite number (expected a number)"},
        {"{dist: empirical}", "t.yaml:8:15: workload.synthetic.duration: empirical needs 'path' (a file of values in seconds)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(text, sizeof text, "%s    duration: %s\n", base, cases[i].dur);
        expect_error(text, NULL, 0, cases[i].want);
    }
}

static void test_error_yaml_and_files(void **state)
{
    (void)state;
    expect_error("name: [a, b\nseed: 1\n", NULL, 0,
                 "t.yaml:2:5: malformed YAML: did not find expected ',' or ']' (while parsing a flow sequence at "
                 "line 1, column 7)");
    expect_error("name: a\n  seed: 1\n", NULL, 0, "t.yaml:2:7: malformed YAML: mapping values are not allowed in this context");
    expect_error("name: a\n\tseed: 1\n", NULL, 0, "t.yaml:2:1: malformed YAML: found a tab character*");
    expect_error("name: \xff\n", NULL, 0, "t.yaml:1:7: malformed YAML: invalid leading UTF-8 octet");
    expect_error("name: a\n---\nname: b\n", NULL, 0, "t.yaml:2:1: only one YAML document is allowed");
    expect_error("name: *nope\n", NULL, 0, "t.yaml:1:7: unknown alias '*nope'");
    char deep[400];
    snprintf(deep, sizeof deep, "name: %.*s1%.*s\n", 70, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
             70, "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
    expect_error(deep, NULL, 0, "t.yaml:1:70: blocks nested more than 64 deep");
    /* alias expansion is bounded */
    char bomb[2048];
    size_t len = (size_t)snprintf(bomb, sizeof bomb, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 8; i++)
        len += (size_t)snprintf(bomb + len, sizeof bomb - len, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, "
                                "*a%d, *a%d, *a%d, *a%d]\n", i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
                                i - 1, i - 1, i - 1, i - 1);
    expect_error(bomb, NULL, 0, "t.yaml:*");
    fs_config_t c;
    fs_error_t e;
    fs_scenario_load_string("t.yaml", bomb, NULL, 0, &c, &e);
    assert_non_null(strstr(e.msg, "the document is too large"));

    /* empty and comment-only files */
    expect_error("", NULL, 0, "t.yaml:1:1: the scenario is empty (expected keys such as: name, seed, *");
    expect_error("# nothing here\n\n", NULL, 0, "t.yaml:1:1: the scenario is empty*");
    expect_error("---\n", NULL, 0, "t.yaml:1:1: the scenario is empty*");

    /* files */
    char *dir = fs_test_tmpdir();
    assert_non_null(dir);
    char *p = fs_test_path(dir, "bad.yaml");
    assert_int_equal(fs_test_write(p, POOL SYNTH "seed: lots\n"), 0);
    assert_int_equal(fs_scenario_load_file(p, NULL, 0, &c, &e), FS_EINVAL);
    char want[4200];
    snprintf(want, sizeof want, "%s:9:7: seed: 'lots' is not a whole number (expected a whole number >= 0)", p);
    assert_string_equal(e.msg, want);
    assert_int_equal(fs_test_write(p, ""), 0);
    assert_int_equal(fs_scenario_load_file(p, NULL, 0, &c, &e), FS_EINVAL);
    snprintf(want, sizeof want, "%s:1:1: the scenario is empty", p);
    assert_memory_equal(e.msg, want, strlen(want));
    free(p);
    p = fs_test_path(dir, "missing.yaml");
    assert_int_equal(fs_scenario_load_file(p, NULL, 0, &c, &e), FS_EINVAL);
    snprintf(want, sizeof want, "%s: cannot read the scenario: No such file or directory", p);
    assert_string_equal(e.msg, want);
    fs_config_release(&c);
    free(p);
    fs_test_rmtree(dir);
    free(dir);
}

/* ---- overrides ---------------------------------------------------------------- */

static void test_overrides(void **state)
{
    (void)state;
    const char *text = fs_scenario_default_text();
    fs_config_t c;
    const char *const o1[] = {
        "seed=42",
        "cluster.pools.0.nodes=64",
        "workload.synthetic.gpus={1: 0.5, 8: 0.5}",
        "workload.synthetic.duration={dist: weibull, shape: 0.8, mean: 2h}",
        "workload.synthetic.duration.mean=3h", /* into the block just set */
        "cluster.pools.1={name: spare, gpu: a100, nodes: 2, gpus_per_node: 4}", /* append */
        "scheduler.mode=strict",
        "output={timeline_interval: 0}",
        "workload.synthetic.tenants.alpha=1",
        "seed=43", /* the last one wins */
        "name=null", /* back to the default */
    };
    load_ok(text, o1, sizeof o1 / sizeof o1[0], &c);
    assert_int_equal(c.seed, 43);
    assert_string_equal(c.name, "unnamed");
    assert_int_equal(c.cluster.n_pools, 2);
    assert_int_equal(c.cluster.pools[0].nodes, 64);
    assert_string_equal(c.cluster.pools[1].name, "spare");
    assert_string_equal(c.cluster.pools[1].gpu, "A100");
    assert_int_equal(c.cluster.pools[1].gpus_per_node, 4);
    assert_int_equal(c.workload.synth.n_sizes, 2);
    assert_int_equal(c.workload.synth.sizes[1], 8);
    assert_int_equal(c.workload.synth.duration.kind, FS_DIST_WEIBULL);
    assert_true(c.workload.synth.duration.mean == 3 * 3600.0);
    assert_true(c.workload.synth.duration.shape == 0.8);
    assert_int_equal(c.scheduler.mode, FS_FIFO_STRICT);
    assert_int_equal(c.output.timeline_interval, 0);
    assert_int_equal(c.output.jobs, 1); /* the rest of the replaced block: defaults */
    assert_int_equal(c.workload.synth.n_tenants, 1);
    assert_string_equal(c.workload.synth.tenant_names[0], "alpha");
    /* the source text stays as given */
    assert_string_equal(c.source_text, text);
    fs_config_release(&c);

    /* switching the workload: drop one choice, set the other */
    const char *const o2[] = {"workload.synthetic=null", "workload.trace.path=/data/t.csv"};
    load_ok(text, o2, 2, &c);
    assert_int_equal(c.workload.kind, FS_WORKLOAD_TRACE);
    assert_string_equal(c.workload.trace.path, "/data/t.csv");
    assert_string_equal(c.workload.trace.format, "native");
    fs_config_release(&c);

    /* removing a list item */
    const char *const o3[] = {"cluster.pools.1={name: b, gpu: H100, nodes: 16, gpus_per_node: 8}",
                              "cluster.pools.0=null"};
    load_ok(text, o3, 2, &c);
    assert_int_equal(c.cluster.n_pools, 1);
    assert_string_equal(c.cluster.pools[0].name, "b");
    fs_config_release(&c);
}

static void test_override_errors(void **state)
{
    (void)state;
    const char *text = fs_scenario_default_text();
    struct { const char *set, *want; } cases[] = {
        {"cluster.foo=1", "--set cluster.foo: unknown key 'foo' in 'cluster' (expected one of: pools, from, outages, outages_origin, topology, speed, speed_catalog, span_speed, fabric, autoscale)"},
        {"foo.bar=1", "--set foo.bar: unknown key 'foo' (expected one of: name, seed, replication, horizon, "
                      "until, drain_limit, warmup, cluster, workload, scheduler, failures, recovery, startup, telemetry, cost, plan, output, services, sweep)"},
        {"cluster.pools.0.nodes=0",
         "--set cluster.pools.0.nodes: 0 is out of range (expected a whole number from 1 to 10000000)"},
        {"cluster.pools.5.nodes=1", "--set cluster.pools.5.nodes: item 5 does not exist (the list has 1)"},
        {"horizon=7", "--set horizon: '7' has no unit (expected a duration such as 90s, 15m, 2h or 30d)"},
        {"scheduler.plugin.options.quantum=60",
         "--set scheduler.plugin.options.quantum: scheduler.plugin.options: options for a plugin, but "
         "there is no scheduler.plugin.path (nor a policy given through the library): nothing would read them"},
        {"horizon=nan h", "--set horizon: 'nan h' is not a finite duration*"},
        {"workload.synthetic.gpus={1: 0.5, 8: 0.4}",
         "--set workload.synthetic.gpus: the probabilities sum to 0.9 (expected 1, within 1e-9)"},
        {"workload.synthetic.gpus={1: 0.5, 2048: 0.5}",
         "--set workload.synthetic.gpus: job size 2048 is larger than any pool (largest: 1024 GPUs)"},
        {"workload.trace.path=x.csv", "--set workload.trace.path: workload: give only one of 'synthetic' and "
                                      "'trace', not both"},
        {"scheduler=fifo", "--set scheduler: expected a block of keys (queue, plugin, tolerations, preset, mode, placement, node_score, resource_weights, percentage_of_nodes_to_score, balanced_allocation, candidates, backfill, "
                          "preemption, runtime, unknown_estimate, default_limit, restart_cost, "
                          "checkpoint_interval, bf, wfp, limits, slurm, tiresias, kueue, volcano), found a value 'fifo'"},
        {"name=[1", "--set name: malformed value: did not find expected ',' or ']'*"},
        {"name=", "--set name: missing value (write KEY=VALUE; null restores the default)"},
        {"noequals", "--set noequals: expected KEY=VALUE"},
        {"=5", "--set =5: expected KEY=VALUE"},
        {"a..b=1", "--set a..b: empty part in the key"},
        {"seed=1\n---\n2", "--set seed: only one YAML document is allowed"},
        {"cluster.pools.0.gpu=X1", "--set cluster.pools.0.gpu: 'X1' is not one of: *"},
        {"warmup=8d", "--set warmup: 8d is not shorter than the horizon (7d)"},
        {"cluster.pools=null", "t.yaml:16:1: missing key 'cluster.pools' (expected a list of blocks*"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const o[] = {cases[i].set};
        expect_error(text, o, 1, cases[i].want);
    }
}

/* ---- dump round trip ------------------------------------------------------------ */

static void round_trip(const fs_config_t *c1)
{
    char *d1 = fs_scenario_dump(c1);
    assert_non_null(d1);
    fs_config_t c2;
    fs_error_t err;
    if (fs_scenario_load_string("dump.yaml", d1, NULL, 0, &c2, &err) != 0)
        fail_msg("the dump does not load: %s\n%s", err.msg, d1);
    char *d2 = fs_scenario_dump(&c2);
    assert_non_null(d2);
    assert_string_equal(d1, d2);
    /* and the values are the same, bit for bit */
    assert_string_equal(c1->name, c2.name);
    assert_int_equal(c1->seed, c2.seed);
    assert_int_equal(c1->horizon, c2.horizon);
    assert_int_equal(c1->warmup, c2.warmup);
    assert_int_equal(c1->cluster.n_pools, c2.cluster.n_pools);
    assert_int_equal(c1->workload.kind, c2.workload.kind);
    const fs_synth_cfg_t *a = &c1->workload.synth, *b = &c2.workload.synth;
    if (c1->workload.kind == FS_WORKLOAD_SYNTHETIC) {
        assert_true(a->rate == b->rate);
        assert_int_equal(a->n_sizes, b->n_sizes);
        assert_memory_equal(a->sizes, b->sizes, a->n_sizes * sizeof *a->sizes);
        assert_memory_equal(a->size_probs, b->size_probs, a->n_sizes * sizeof *a->size_probs);
        const fs_dist_t *x = &a->duration, *y = &b->duration;
        assert_int_equal(x->kind, y->kind);
        const double fx[] = {x->value, x->mean, x->median, x->sigma, x->shape, x->scale, x->lo, x->hi, x->mu};
        const double fy[] = {y->value, y->mean, y->median, y->sigma, y->shape, y->scale, y->lo, y->hi, y->mu};
        for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++)
            if (!(fx[i] == fy[i] || (isnan(fx[i]) && isnan(fy[i]))))
                fail_msg("distribution field %zu: %.17g != %.17g", i, fx[i], fy[i]);
        assert_int_equal(a->duration.n_values, b->duration.n_values);
        if (a->duration.n_values)
            assert_memory_equal(a->duration.values, b->duration.values, a->duration.n_values * sizeof(double));
        assert_int_equal(a->n_tenants, b->n_tenants);
        for (size_t i = 0; i < a->n_tenants; i++) {
            assert_string_equal(a->tenant_names[i], b->tenant_names[i]);
            assert_true(a->tenant_shares[i] == b->tenant_shares[i]);
        }
        assert_true(a->estimate_factor == b->estimate_factor);
    } else {
        assert_string_equal(c1->workload.trace.path, c2.workload.trace.path);
        assert_true(c1->workload.trace.opts.time_scale == c2.workload.trace.opts.time_scale);
    }
    fs_free(d1);
    fs_free(d2);
    fs_config_release(&c2);
}

static void test_dump_round_trip(void **state)
{
    (void)state;
    fs_config_t c;
    fs_error_t err;
    static const char *const files[] = {"multi.yaml", "trace.yaml", "empirical.yaml", "philly.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", SCN, files[i]);
        if (fs_scenario_load_file(path, NULL, 0, &c, &err))
            fail_msg("%s", err.msg);
        round_trip(&c);
        fs_config_release(&c);
    }
    load_ok(fs_scenario_default_text(), NULL, 0, &c);
    round_trip(&c);
    fs_config_release(&c);

    /* every distribution, odd durations and rates, names needing quotes */
    static const char *const durs[] = {
        "{dist: constant, value: 1.0000005s}", "{dist: exponential, mean: 1.1d}",
        "{dist: lognormal, mean: 17m, sigma: 0.3333}", "{dist: weibull, scale: 250us, shape: 2}",
        "{dist: gamma, mean: 1w, shape: 0.5}", "{dist: uniform, lo: 0, hi: 1y}"};
    for (size_t i = 0; i < sizeof durs / sizeof durs[0]; i++) {
        char dset[128];
        snprintf(dset, sizeof dset, "workload.synthetic.duration=%s", durs[i]);
        const char *const o[] = {dset, "name=\"yes\"", "workload.synthetic.arrivals.rate=1e-3/s",
                                 "workload.synthetic.tenants={\"a: b\": 0.1, \"#x\": 0.2, 'q\"': 0.3, é: 0.4}",
                                 "workload.synthetic.gpus={1: 0.1, 3: 0.2, 5: 0.7}", "horizon=1234567us",
                                 "warmup=0.1s", "until=horizon", "seed=18446744073709551615"};
        load_ok(fs_scenario_default_text(), o, sizeof o / sizeof o[0], &c);
        round_trip(&c);
        fs_config_release(&c);
    }
}

static void test_multi_values(void **state)
{
    (void)state;
    fs_config_t c;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_file(SCN "/multi.yaml", NULL, 0, &c, &err), 0);
    assert_string_equal(c.name, "two-pools");
    assert_int_equal(c.seed, 42);
    assert_int_equal(c.replication, 3);
    assert_int_equal(c.horizon, 36 * FS_US_PER_H);
    assert_int_equal(c.warmup, 90 * FS_US_PER_MIN);
    assert_int_equal(c.until, FS_UNTIL_HORIZON);
    assert_int_equal(c.cluster.n_pools, 2);
    assert_string_equal(c.cluster.pools[1].gpu, "A100");
    assert_int_equal(c.cluster.pools[1].gpus_per_node, 8); /* through the alias */
    const fs_synth_cfg_t *s = &c.workload.synth;
    assert_true(s->rate == 3.0 / 60.0);
    assert_int_equal(s->max_jobs, 5000);
    assert_int_equal(s->horizon, 36 * FS_US_PER_H);
    assert_int_equal(s->duration.kind, FS_DIST_WEIBULL);
    assert_true(s->duration.mean == 7200.0);
    assert_true(fabs(s->duration.scale - 7200.0 / tgamma(1 + 1 / 0.8)) < 1e-9);
    assert_int_equal(s->n_tenants, 3);
    assert_string_equal(s->tenant_names[2], "team x");
    assert_true(s->tenant_shares[2] == 0.1);
    assert_true(s->estimate_factor == 1.5);
    assert_int_equal(c.scheduler.mode, FS_FIFO_STRICT);
    assert_int_equal(c.scheduler.placement, FS_PLACE_FIRST_FIT);
    assert_int_equal(c.output.timeline_interval, 0);
    assert_int_equal(c.output.jobs, 0);
    char *d = fs_scenario_dump(&c);
    assert_non_null(d);
    assert_string_equal(d, multi_dump);
    fs_free(d);
    fs_config_release(&c);
}

/* ---- paths and empirical files ---------------------------------------------------- */

static void test_paths(void **state)
{
    (void)state;
    fs_config_t c;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_file(SCN "/trace.yaml", NULL, 0, &c, &err), 0);
    assert_int_equal(c.workload.kind, FS_WORKLOAD_TRACE);
    assert_string_equal(c.workload.trace.path, SCN "/jobs.csv"); /* absolute: FS_TEST_DATA is */
    assert_int_equal(c.workload.trace.opts.lenient, 1);
    assert_true(c.workload.trace.opts.time_scale == 0.5);
    assert_true(access(c.workload.trace.path, R_OK) == 0);
    fs_config_release(&c);

    /* a relative scenario path gives an absolute trace path */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(FS_TEST_DATA), 0);
    int rc = fs_scenario_load_file("scenarios/trace.yaml", NULL, 0, &c, &err);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_string_equal(c.workload.trace.path, SCN "/jobs.csv");
    fs_config_release(&c);

    /* absolute paths are kept; from a string, relative paths stay relative */
    const char *const o[] = {"workload.trace.path=/abs/t.csv"};
    assert_int_equal(fs_scenario_load_file(SCN "/trace.yaml", o, 1, &c, &err), 0);
    assert_string_equal(c.workload.trace.path, "/abs/t.csv");
    fs_config_release(&c);
    load_ok(POOL "workload: {trace: {path: ./rel/t.csv}}\n", NULL, 0, &c);
    assert_string_equal(c.workload.trace.path, "./rel/t.csv");
    fs_config_release(&c);
}

static void test_empirical(void **state)
{
    (void)state;
    fs_config_t c;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_file(SCN "/empirical.yaml", NULL, 0, &c, &err), 0);
    const fs_dist_t *d = &c.workload.synth.duration;
    assert_int_equal(d->kind, FS_DIST_EMPIRICAL);
    assert_int_equal(d->n_values, 3);
    assert_true(d->values[0] == 30 && d->values[1] == 90.25 && d->values[2] == 5400);
    assert_true(d->mean == (30 + 90.25 + 5400) / 3.0);
    assert_string_equal(c.workload.duration_cfg.column, "runtime_s");
    assert_string_equal(c.workload.duration_cfg.path, SCN "/runtimes.csv");
    fs_config_release(&c);

    /* one number per line, a one-column header, comments and blank lines */
    const char *const o[] = {"workload.synthetic.duration={dist: empirical, path: runtimes.txt}"};
    assert_int_equal(fs_scenario_load_file(SCN "/empirical.yaml", o, 1, &c, &err), 0);
    d = &c.workload.synth.duration;
    assert_int_equal(d->n_values, 3);
    assert_true(d->values[0] == 60 && d->values[1] == 3600.5 && d->values[2] == 7200);
    assert_null(c.workload.duration_cfg.column);
    fs_config_release(&c);

    /* real run times: the derived Philly sample, checked against the file */
    assert_int_equal(fs_scenario_load_file(SCN "/philly.yaml", NULL, 0, &c, &err), 0);
    d = &c.workload.synth.duration;
    assert_int_equal(d->n_values, 208);
    FILE *f = fopen(SCN "/philly_runtime_sample.csv", "r");
    assert_non_null(f);
    char line[128];
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    double sum = 0;
    for (size_t i = 0; i < 208; i++) {
        assert_non_null(fgets(line, sizeof line, f));
        assert_true(d->values[i] == strtod(line, NULL));
        sum += d->values[i];
    }
    fclose(f);
    assert_true(fabs(d->mean - sum / 208) < 1e-9 * sum);
    fs_config_release(&c);

    /* errors name the file and its line, at the path's position */
    char *dir = fs_test_tmpdir();
    char *yaml = fs_test_path(dir, "e.yaml"), *data = fs_test_path(dir, "v.csv");
    const char *scen = POOL "workload:\n  synthetic:\n    arrivals: {rate: 1/h}\n    gpus: {1: 1}\n"
                            "    duration: {dist: empirical, path: v.csv, column: secs}\n";
    assert_int_equal(fs_test_write(yaml, scen), 0);
    struct { const char *content, *want; } cases[] = {
        {"id,s\n1,2\n", "no column 'secs' in the header 'id,s'"},
        {"id,secs\n1,2\n2,x\n", "v.csv:3: 'x' is not a number of seconds >= 0"},
        {"id,secs\n1,2\n2\n", "v.csv:3: the row has no column 2 ('secs')"},
        {"id,secs\n1,-2\n", "v.csv:2: '-2' is not a number of seconds >= 0"},
        {"# only a header\nid,secs\n", "/v.csv' holds no values"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(fs_test_write(data, cases[i].content), 0);
        assert_int_equal(fs_scenario_load_file(yaml, NULL, 0, &c, &err), FS_EINVAL);
        char want[4200];
        const char *tail = cases[i].want;
        snprintf(want, sizeof want, "%s:8:39: workload.synthetic.duration.path: ", yaml);
        assert_memory_equal(err.msg, want, strlen(want));
        if (!strstr(err.msg, tail))
            fail_msg("'%s' lacks '%s'", err.msg, tail);
    }
    assert_int_equal(fs_test_write(data, "1\n2,3\n"), 0);
    const char *const nocol[] = {"workload.synthetic.duration={dist: empirical, path: v.csv}"};
    assert_int_equal(fs_scenario_load_file(yaml, nocol, 1, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "v.csv:2: several columns: give 'column' to say which to read"));
    /* bounded: a NUL byte, a line longer than 64 KiB (issue 39: /dev/zero
     * was read for 49 s) */
    const char *const zero[] = {"workload.synthetic.duration={dist: empirical, path: /dev/zero}"};
    assert_int_equal(fs_scenario_load_file(yaml, zero, 1, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "/dev/zero:1: not a text file (it holds a NUL byte)"));
    char *longline = malloc(70000 + 2);
    assert_non_null(longline);
    memset(longline, '1', 70000);
    strcpy(longline + 70000, "\n");
    assert_int_equal(fs_test_write(data, longline), 0);
    free(longline);
    assert_int_equal(fs_scenario_load_file(yaml, nocol, 1, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "v.csv:1: line longer than 65536 bytes"));
    unlink(data);
    assert_int_equal(fs_scenario_load_file(yaml, NULL, 0, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "cannot open"));
    assert_non_null(strstr(err.msg, "No such file or directory"));
    free(yaml);
    free(data);
    fs_test_rmtree(dir);
    free(dir);
}

/* ---- the models' rules, checked when loading (issue 39) ----------------------------- */

#define NODEGROUPS "cluster:\n  pools:\n    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 8}\n" \
                   "  autoscale:\n    node_groups: [{pool: main, min: 1, max: 3}]\n"

static void test_error_model_rules(void **state)
{
    (void)state;
    fs_config_t c;
    load_ok(NODEGROUPS SYNTH, NULL, 0, &c);
    fs_config_release(&c);
    /* node groups: at the key's position in the file, or at its --set */
    const char *const pool[] = {"cluster.autoscale.node_groups.0.pool=nope"};
    expect_error(NODEGROUPS SYNTH, pool, 1,
                 "--set cluster.autoscale.node_groups.0.pool: no pool named 'nope'");
    const char *const min[] = {"cluster.autoscale.node_groups.0.min=4"};
    expect_error(NODEGROUPS SYNTH, min, 1, "--set cluster.autoscale.node_groups.0.min: 4 is above max (3)");
    const char *const nomax[] = {"cluster.autoscale.node_groups.0.max=null",
                                 "cluster.autoscale.node_groups.0.min=5"};
    expect_error(NODEGROUPS SYNTH, nomax, 2, "--set cluster.autoscale.node_groups.0.min: 5 is above max (4)");
    const char *const max[] = {"cluster.autoscale.node_groups.0.max=5"};
    expect_error(NODEGROUPS SYNTH, max, 1, "--set cluster.autoscale.node_groups.0.max: 5 nodes, more "
                 "than pool 'main' has (4; its nodes is the most it can have)");
    const char *const twice[] = {"cluster.autoscale.node_groups.1={pool: main}"};
    expect_error(NODEGROUPS SYNTH, twice, 1, "--set cluster.autoscale.node_groups.1: "
                 "cluster.autoscale.node_groups.1.pool: pool 'main' is already a node group (item 0)");
    expect_error(NODEGROUPS SYNTH "cost:\n  pools: [{pool: main, online: 1d}]\n", NULL, 0,
                 "t.yaml:5:26: cluster.autoscale.node_groups.0.pool: pool 'main' also has cost.pools "
                 "online/retire dates");
    /* the purchase timeline and the cost model's names */
    expect_error(POOL SYNTH "cost:\n  purchases:\n    - {pool: main, nodes: 30, at: 1d}\n"
                 "    - {pool: main, nodes: 3, at: 2d}\n    - {pool: main, nodes: 3, at: 3d}\n", NULL, 0,
                 "t.yaml:12:27: cost.purchases: 36 nodes bought for pool 'main', which has 32 "
                 "(cluster.pools: nodes is the most it ever has)");
    expect_error(POOL SYNTH "cost:\n  purchases: [{pool: main, nodes: 1, at: 2d, retire: 1d}]\n", NULL, 0,
                 "t.yaml:10:54: cost.purchases.0.retire: must be after at");
    expect_error(POOL SYNTH "cost:\n  purchases: [{pool: other, nodes: 1, at: 2d}]\n", NULL, 0,
                 "t.yaml:10:22: cost.purchases.0.pool: no cluster pool named 'other'");
}

/* ---- docs/scenario.md --------------------------------------------------------------- */

#define DOC_MARK "<!-- generated by fs_scenario_print_keys: do not edit below this line -->\n"

static void test_docs_up_to_date(void **state)
{
    (void)state;
    char *gen = NULL;
    size_t glen = 0;
    FILE *f = open_memstream(&gen, &glen);
    assert_non_null(f);
    fs_scenario_print_keys(f);
    fclose(f);
    assert_non_null(strstr(gen, "| `workload.synthetic.arrivals.rate` | rate | 1/s | required | > 0/s and <= 1e+06/s |"));
    assert_non_null(strstr(gen, "| `cluster.pools[].gpus_per_node` | integer |  | required | from 1 to 1024 |"));
    const char *path = FS_SOURCE_DIR "/docs/scenario.md";
    char *doc = fs_test_read(path, NULL);
    assert_non_null(doc);
    char *mark = strstr(doc, DOC_MARK);
    assert_non_null(mark);
    const char *body = mark + strlen(DOC_MARK);
    if (strcmp(body, gen) != 0) {
        const char *upd = getenv("FS_UPDATE_DOCS");
        if (upd && *upd) {
            FILE *o = fopen(path, "w");
            assert_non_null(o);
            fwrite(doc, 1, (size_t)(body - doc), o);
            fputs(gen, o);
            fclose(o);
        } else {
            fail_msg("docs/scenario.md is out of date: run the test with FS_UPDATE_DOCS=1");
        }
    }
    free(doc);
    free(gen);
}

/* ---- robustness and allocation failures --------------------------------------------- */

/* Every prefix of the default scenario, and copies with one byte changed,
 * either load or fail with FS_EINVAL and a positioned message: no crash, no
 * leak, no other code. */
static void test_damaged_input(void **state)
{
    (void)state;
    const char *text = fs_scenario_default_text();
    size_t n = strlen(text);
    char *buf = malloc(n + 1);
    assert_non_null(buf);
    static const char junk[] = {':', '-', '{', '}', '[', ']', '&', '*', '"', '\'', '\t', '\n', ' ', '0', 'x', '#', '!',
                                '\x80'};
    uint64_t x = 42;
    for (size_t i = 0; i <= n + 3 * n; i++) {
        if (i <= n) {
            memcpy(buf, text, i);
            buf[i] = '\0';
        } else {
            memcpy(buf, text, n + 1);
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[x % n] = junk[(x >> 32) % sizeof junk];
        }
        fs_config_t c;
        fs_error_t err;
        int rc = fs_scenario_load_string("d.yaml", buf, NULL, 0, &c, &err);
        if (rc == 0) {
            char *d = fs_scenario_dump(&c);
            assert_non_null(d);
            fs_free(d);
            fs_config_release(&c);
        } else {
            assert_int_equal(rc, FS_EINVAL);
            assert_memory_equal(err.msg, "d.yaml:", 7);
        }
        assert_int_equal(fs_alloc_live(), live0);
    }
    free(buf);
}

/* SQLite-style: fail allocation N for N = 1, 2, ... until the load succeeds. */
static void fault_loop(const char *path, const char *text, const char *const *ovr, size_t n_ovr)
{
    int failures = 0;
    for (uint64_t nth = 1;; nth++) {
        fs_config_t c;
        fs_error_t err;
        fs_alloc_fail_after(nth);
        int rc = path ? fs_scenario_load_file(path, ovr, n_ovr, &c, &err)
                      : fs_scenario_load_string("<builtin>", text, ovr, n_ovr, &c, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            /* the dump under the same treatment */
            int64_t live_cfg = fs_alloc_live();
            for (uint64_t k = 1;; k++) {
                fs_alloc_fail_after(k);
                char *d = fs_scenario_dump(&c);
                fs_alloc_fail_after(0);
                if (d) {
                    fs_free(d);
                    break;
                }
                assert_int_equal(fs_alloc_live(), live_cfg);
            }
            fs_config_release(&c);
            assert_int_equal(fs_alloc_live(), live0);
            break;
        }
        if (rc != FS_ENOMEM)
            fail_msg("allocation %llu failed: rc %d (%s)", (unsigned long long)nth, rc, err.msg);
        assert_int_equal(err.code, FS_ENOMEM);
        assert_int_equal(fs_alloc_live(), live0);
        failures++;
        assert_true(nth < 100000);
    }
    assert_true(failures > 10);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    fault_loop(NULL, fs_scenario_default_text(), NULL, 0);
    fault_loop(SCN "/multi.yaml", NULL, NULL, 0);
    fault_loop(SCN "/empirical.yaml", NULL, NULL, 0);
    const char *const o[] = {"cluster.pools.1={name: b, gpu: H100, nodes: 1, gpus_per_node: 8}",
                             "workload.synthetic.tenants={a: 0.5, b: 0.5}", "name=x", "seed=null"};
    fault_loop(NULL, fs_scenario_default_text(), o, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_scenario, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_init_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_unknown_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_workload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_distributions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_yaml_and_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overrides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_override_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dump_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empirical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_model_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_docs_up_to_date, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
