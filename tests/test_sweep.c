/*
 * Tests of the sweep expansion (scenarios/fs_sweep.c) and of the sweep key
 * rows (scenarios/fs_keys.c, FS_KT_RAW): grid and zip expansion with exact
 * point values, ranges (linear, log, whole numbers, durations), the run
 * numbering and common random numbers (replication r of every point sees
 * the same arrivals: checked on real runs), shard assignment, the dump
 * round trip, every error of a sweep section with its FILE:LINE:COL,
 * the plan digest, and allocation-failure injection.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
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

#include "fs_test_util.h"
#include "models/fs_config.h"
#include "scenarios/fs_scenario.h"
#include "scenarios/fs_sweep.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"

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

/* A small base scenario (line numbers matter: the sweep starts on line 10). */
#define BASE "name: t\n"                                                     \
             "horizon: 1d\n"                                                 \
             "until: horizon\n"                                              \
             "cluster:\n"                                                    \
             "  pools:\n"                                                    \
             "    - {name: main, gpu: H100, nodes: 16, gpus_per_node: 8}\n"  \
             "workload:\n"                                                   \
             "  synthetic: {arrivals: {rate: 10/h}, gpus: {1: 0.5, 8: 0.5},\n" \
             "              duration: {dist: exponential, mean: 1h}}\n"

static fs_sweep_plan_t *plan_ok(const char *text)
{
    fs_sweep_plan_t *p = NULL;
    fs_error_t err;
    int rc = fs_sweep_plan_from_text("t.yaml", text, NULL, 0, &p, &err);
    if (rc)
        fail_msg("unexpected error: %s", err.msg);
    return p;
}

static void expect_plan_error(const char *text, const char *want)
{
    fs_sweep_plan_t *p = NULL;
    fs_error_t err;
    int rc = fs_sweep_plan_from_text("t.yaml", text, NULL, 0, &p, &err);
    assert_null(p);
    if (rc == 0)
        fail_msg("expected an error: %s", want);
    size_t n = strlen(want);
    if (n && want[n - 1] == '*') {
        if (strncmp(err.msg, want, n - 1) != 0)
            fail_msg("message\n  %s\ndoes not start with\n  %.*s", err.msg, (int)(n - 1), want);
    } else if (strcmp(err.msg, want) != 0) {
        fail_msg("message\n  %s\nexpected\n  %s", err.msg, want);
    }
    assert_int_equal(rc, FS_EINVAL);
}

static const char *val(const fs_sweep_plan_t *p, size_t point, size_t j)
{
    return p->params[j].values[fs_sweep_value_index(p, point, j)];
}

/* ---- expansion ------------------------------------------------------------- */

static void test_grid(void **state)
{
    (void)state;
    fs_sweep_plan_t *p = plan_ok(BASE "sweep:\n"
                                      "  replications: 3\n"
                                      "  params:\n"
                                      "    - {key: scheduler.mode, values: [strict, best_effort]}\n"
                                      "    - {key: workload.synthetic.arrivals.rate, range: {from: 30/h, to: 90/h, steps: 5}}\n");
    assert_int_equal(p->n_params, 2);
    assert_int_equal(p->n_points, 10);
    assert_int_equal(p->replications, 3);
    assert_int_equal(p->n_runs, 30);
    assert_int_equal(p->combine, FS_SWEEP_GRID);
    static const char *const rates[] = {"30/h", "45/h", "60/h", "75/h", "90/h"};
    for (size_t pt = 0; pt < 10; pt++) {
        /* the first parameter varies slowest */
        assert_string_equal(val(p, pt, 0), pt < 5 ? "strict" : "best_effort");
        assert_string_equal(val(p, pt, 1), rates[pt % 5]);
    }
    /* the positions of list values and of a range (its 'from') */
    assert_string_equal(p->params[0].where[1], "t.yaml:13:46");
    assert_string_equal(p->params[1].where[3], "t.yaml:14:61");
    fs_sweep_plan_destroy(p);
}

static void test_zip_and_no_params(void **state)
{
    (void)state;
    fs_sweep_plan_t *p = plan_ok(BASE "sweep:\n"
                                      "  combine: zip\n"
                                      "  params:\n"
                                      "    - {key: cluster.pools.0.nodes, values: [8, 16, 32]}\n"
                                      "    - {key: workload.synthetic.arrivals.rate, values: [5/h, 10/h, 20/h]}\n");
    assert_int_equal(p->n_points, 3);
    assert_int_equal(p->n_runs, 3);
    static const char *const n[] = {"8", "16", "32"}, *const r[] = {"5/h", "10/h", "20/h"};
    for (size_t pt = 0; pt < 3; pt++) {
        assert_string_equal(val(p, pt, 0), n[pt]);
        assert_string_equal(val(p, pt, 1), r[pt]);
    }
    /* the configs of the points carry the values */
    for (size_t pt = 0; pt < 3; pt++) {
        fs_config_t cfg;
        fs_error_t err;
        assert_int_equal(fs_sweep_load_run(p, pt, &cfg, &err), 0);
        assert_int_equal(cfg.cluster.pools[0].nodes, (uint32_t)atoi(n[pt]));
        assert_double_equal(cfg.workload.synth.rate, atof(r[pt]) / 3600.0, 1e-15);
        assert_int_equal(cfg.sweep.given, 0); /* a point is a single run */
        fs_config_release(&cfg);
    }
    fs_sweep_plan_destroy(p);

    /* replications of the base scenario alone: one point */
    p = plan_ok(BASE "sweep: {replications: 4}\n");
    assert_int_equal(p->n_params, 0);
    assert_int_equal(p->n_points, 1);
    assert_int_equal(p->n_runs, 4);
    fs_sweep_plan_destroy(p);
}

static void test_ranges(void **state)
{
    (void)state;
    fs_sweep_plan_t *p = plan_ok(BASE "sweep:\n  params:\n"
                                      "    - {key: cluster.pools.0.nodes, range: {from: 16, to: 64, steps: 4}}\n"
                                      "    - {key: workload.synthetic.duration.mean, range: {from: 10m, to: 1000m, steps: 3, scale: log}}\n"
                                      "    - {key: warmup, range: {from: 0s, to: 1h, steps: 3}}\n");
    assert_int_equal(p->n_points, 4 * 3 * 3);
    static const char *const nodes[] = {"16", "32", "48", "64"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(p->params[0].values[i], nodes[i]);
    static const double mean_s[] = {600, 6000, 60000}, warm_s[] = {0, 1800, 3600};
    for (size_t i = 0; i < 3; i++) {
        fs_config_t cfg;
        fs_error_t err;
        /* point (0, i, i): run index = point * replications */
        size_t point = i * 3 + i;
        assert_int_equal(fs_sweep_load_run(p, point, &cfg, &err), 0);
        assert_double_equal(cfg.workload.synth.duration.mean, mean_s[i], 1e-9);
        assert_int_equal(cfg.warmup, (fs_time_t)(warm_s[i] * 1e6));
        assert_int_equal(cfg.cluster.pools[0].nodes, 16);
        fs_config_release(&cfg);
    }
    fs_sweep_plan_destroy(p);
}

/* ---- runs, replications, shards ------------------------------------------------- */

static int collect_submits(void *ud, const fs_job_row_t *row)
{
    double **v = ud;
    size_t n = (size_t)(*v)[0];
    double *g = fs_realloc(*v, (n + 2) * sizeof *g);
    if (!g)
        return FS_ENOMEM;
    g[n + 1] = row->submit * 1e6 + (double)row->gpus; /* submit time and size */
    g[0] = (double)(n + 1);
    *v = g;
    return 0;
}

static double *run_submits(const fs_sweep_plan_t *p, size_t k)
{
    fs_config_t cfg;
    fs_error_t err;
    assert_int_equal(fs_sweep_load_run(p, k, &cfg, &err), 0);
    double *v = fs_calloc(1, sizeof *v);
    assert_non_null(v);
    fs_run_opts_t o;
    fs_run_opts_init(&o);
    o.on_job = collect_submits;
    o.on_job_ud = &v;
    fs_run_report_t rep;
    if (fs_run_config(&cfg, &o, &rep, &err) != 0)
        fail_msg("run %zu: %s", k, err.msg);
    fs_config_release(&cfg);
    /* rows come at job end: sort by the encoded submit time */
    size_t n = (size_t)v[0];
    for (size_t i = 1; i < n; i++)
        for (size_t j = i + 1; j > 1 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v;
}

static int same_series(const double *a, const double *b)
{
    if (a[0] != b[0])
        return 0;
    for (size_t i = 1; i <= (size_t)a[0]; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static void test_crn_and_shards(void **state)
{
    (void)state;
    fs_sweep_plan_t *p = plan_ok(BASE "sweep:\n  replications: 3\n  params:\n"
                                      "    - {key: scheduler.mode, values: [strict, best_effort]}\n");
    assert_int_equal(p->n_runs, 6);
    /* run k = point * replications + r */
    for (size_t k = 0; k < p->n_runs; k++) {
        size_t point;
        uint64_t rep;
        fs_sweep_run_split(p, k, &point, &rep);
        assert_int_equal(point, k / 3);
        assert_int_equal(rep, k % 3);
        assert_int_equal(fs_sweep_run_index(p, point, rep), k);
        fs_config_t cfg;
        fs_error_t err;
        assert_int_equal(fs_sweep_load_run(p, k, &cfg, &err), 0);
        assert_int_equal(cfg.replication, rep);  /* replication r uses index r */
        assert_int_equal(cfg.seed, 1);
        assert_int_equal(cfg.scheduler.mode, point == 0 ? FS_FIFO_STRICT : FS_FIFO_BEST_EFFORT);
        fs_config_release(&cfg);
    }
    /* common random numbers: point 0 rep 1 and point 1 rep 1 see the same
     * arrivals (times and sizes); rep 1 and rep 2 of one point do not */
    double *a1 = run_submits(p, fs_sweep_run_index(p, 0, 1));
    double *b1 = run_submits(p, fs_sweep_run_index(p, 1, 1));
    double *a2 = run_submits(p, fs_sweep_run_index(p, 0, 2));
    assert_true(a1[0] > 100);
    assert_true(same_series(a1, b1));
    assert_false(same_series(a1, a2));
    fs_free(a1);
    fs_free(b1);
    fs_free(a2);

    /* shards: run k goes to shard k mod N; every run to exactly one shard */
    for (size_t n = 1; n <= 7; n++) {
        size_t count[7] = {0};
        for (size_t k = 0; k < 100; k++) {
            size_t s = fs_sweep_shard_of(k, n);
            assert_int_equal(s, k % n);
            count[s]++;
        }
        for (size_t s = 0; s < n; s++)
            assert_true(count[s] == 100 / n || count[s] == 100 / n + 1);
    }
    fs_sweep_plan_destroy(p);
}

/* ---- the section in the scenario language ------------------------------------------ */

static void test_dump_round_trip_and_digest(void **state)
{
    (void)state;
    const char *text = BASE "sweep:\n  combine: zip\n  replications: 2\n  warmup: 1h\n  params:\n"
                            "    - {key: scheduler.mode, values: [strict, best_effort]}\n"
                            "    - {key: horizon, range: {from: 12h, to: 2d, steps: 2, scale: log}}\n";
    fs_config_t cfg, back;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_string("t.yaml", text, NULL, 0, &cfg, &err), 0);
    assert_int_equal(cfg.sweep.given, 1);
    assert_int_equal(cfg.sweep.n_params, 2);
    assert_string_equal(cfg.sweep.params[0].values.text[1], "best_effort");
    assert_string_equal(cfg.sweep.params[0].values.where[1], "t.yaml:15:46");
    assert_int_equal(cfg.sweep.params[1].has_range, 1);
    assert_int_equal(cfg.sweep.params[1].steps, 2);
    assert_int_equal(cfg.sweep.params[1].scale, FS_SWEEP_LOG);
    char *d1 = fs_scenario_dump(&cfg);
    assert_non_null(d1);
    assert_non_null(strstr(d1, "sweep:\n  combine: zip\n  replications: 2\n  warmup: \"1h\"\n"));
    assert_int_equal(fs_scenario_load_string("dump", d1, NULL, 0, &back, &err), 0);
    char *d2 = fs_scenario_dump(&back);
    assert_string_equal(d1, d2);
    fs_free(d1);
    fs_free(d2);
    fs_config_release(&back);
    /* without a sweep section the dump has none, and a single run ignores it */
    const char *ovr[] = {"sweep=null"};
    assert_int_equal(fs_scenario_load_string("t.yaml", text, ovr, 1, &back, &err), 0);
    d1 = fs_scenario_dump(&back);
    assert_null(strstr(d1, "sweep"));
    fs_free(d1);
    fs_config_release(&back);
    fs_config_release(&cfg);

    /* the digest: same text same digest; another value, another digest */
    fs_sweep_plan_t *p = plan_ok(text), *q = plan_ok(text);
    assert_true(fs_sweep_plan_digest(p) == fs_sweep_plan_digest(q));
    fs_sweep_plan_destroy(q);
    char *other = fs_strdup(text);
    *strstr(other, "2d") = '3';
    q = plan_ok(other);
    assert_true(fs_sweep_plan_digest(p) != fs_sweep_plan_digest(q));
    fs_sweep_plan_destroy(q);
    fs_sweep_plan_destroy(p);
    fs_free(other);
}

static void test_errors(void **state)
{
    (void)state;
#define SW BASE "sweep:\n  params:\n"
    expect_plan_error(BASE, "t.yaml:1:1: no 'sweep' section (add one, see docs/sweeps.md, or run a "
                            "single scenario with 'fleetsim run')");
    expect_plan_error(SW "    - {key: scheduler.nope, values: [a]}\n",
                      "t.yaml:12:13: sweep.params.0.key: unknown key 'scheduler.nope' (see 'fleetsim "
                      "validate --keys' for every key)");
    expect_plan_error(SW "    - {key: scheduler.mode, values: [strict, fastest]}\n",
                      "t.yaml:12:46: sweep.params.0: scheduler.mode=fastest: 'fastest' is not one of: "
                      "best_effort, strict");
    expect_plan_error(SW "    - {key: cluster.pools.0.nodes, values: [8, 0]}\n",
                      "t.yaml:12:48: sweep.params.0: cluster.pools.0.nodes=0: 0 is out of range "
                      "(expected a whole number from 1 to 10000000)");
    expect_plan_error(SW "    - {key: scheduler.mode, range: {from: 1, to: 2, steps: 2}}\n",
                      "t.yaml:12:13: sweep.params.0.range: 'scheduler.mode' is not a numeric key "
                      "(enum); give values instead");
    expect_plan_error(SW "    - {key: horizon, values: [1d], range: {from: 1d, to: 2d, steps: 2}}\n",
                      "t.yaml:12:30: sweep.params.0: give values or range, not both");
    expect_plan_error(SW "    - {key: horizon}\n",
                      "t.yaml:12:13: sweep.params.0: give values: [...] or range: {from, to, steps} for "
                      "'horizon'");
    expect_plan_error(SW "    - {key: horizon, values: 1d}\n",
                      "t.yaml:12:30: sweep.params.0.values: expected a list such as [a, b], found one value");
    expect_plan_error(SW "    - {key: horizon, range: {from: 1d, to: 2d, steps: 1}}\n",
                      "t.yaml:12:55: sweep.params.0.range.steps: 1 is out of range (expected a whole "
                      "number from 2 to 1000000)");
    expect_plan_error(SW "    - {key: horizon, range: {from: 1d, to: 2d}}\n",
                      "t.yaml:12:22: missing key 'sweep.params.0.range.steps' (expected a whole number "
                      "from 2 to 1000000)");
    expect_plan_error(SW "    - {key: horizon, range: {from: 1x, to: 2d, steps: 2}}\n",
                      "t.yaml:12:36: sweep.params.0.range.from: unknown unit 'x' in '1x' *");
    expect_plan_error(SW "    - {key: cluster.pools.0.nodes, range: {from: 1, to: 3, steps: 5}}\n",
                      "t.yaml:12:50: sweep.params.0.range: the value 2 comes twice (5 steps from 1 to 3); "
                      "use fewer steps");
    expect_plan_error(SW "    - {key: warmup, range: {from: 0s, to: 1h, steps: 3, scale: log}}\n",
                      "t.yaml:12:35: sweep.params.0.range: a log scale needs ends > 0 (expected a "
                      "duration such as 90s, 15m, 2h or 30d, >= 0s)");
    expect_plan_error(SW "    - {key: replication, values: [0, 1]}\n",
                      "t.yaml:12:13: sweep.params.0.key: 'replication' cannot be swept (the sweep sets "
                      "it: replication r of every point uses index r; use sweep.replications)");
    expect_plan_error(SW "    - {key: horizon, values: [1d, 2d, 1d]}\n",
                      "t.yaml:12:39: sweep.params.0.values: '1d' is given twice");
    expect_plan_error(SW "    - {key: horizon, values: [1d]}\n    - {key: horizon, values: [2d]}\n",
                      "t.yaml:13:13: sweep.params.1.key: 'horizon' is already swept by sweep.params.0");
    expect_plan_error(BASE "sweep:\n  combine: zip\n  params:\n"
                           "    - {key: horizon, values: [1d, 2d]}\n"
                           "    - {key: scheduler.mode, values: [strict]}\n",
                      "t.yaml:14:13: sweep.params.1: zip needs the same number of values for every key: "
                      "horizon has 2, scheduler.mode has 1");
    expect_plan_error(SW "    - {key: horizon, values: [1d, {a: 1}]}\n",
                      "t.yaml:12:35: sweep.params.0.values.1: expected a value, found a block of keys");
    expect_plan_error(BASE "sweep:\n  replicas: 3\n",
                      "t.yaml:11:3: unknown key 'replicas' in 'sweep' (expected one of: combine, "
                      "replications, warmup, params)");
    expect_plan_error(BASE "sweep:\n  replications: 0\n",
                      "t.yaml:11:17: sweep.replications: 0 is out of range (expected a whole number from "
                      "1 to 1000000)");
    /* a point that fails as a whole (each value alone is fine) */
    expect_plan_error(BASE "sweep:\n  warmup: 1d\n  params:\n    - {key: horizon, values: [2d, 12h]}\n",
                      "t.yaml:13:35: sweep point 1 (horizon=12h): --set warmup: 1d is not shorter than the horizon (12h)");
    expect_plan_error(BASE "sweep:\n  warmup: [1h, 2h]\n",
                      "t.yaml:11:11: sweep.warmup: expected one duration, not a list");
#undef SW
}

/* Plan creation under allocation failure: FS_ENOMEM, never a leak. */
static void test_alloc_failures(void **state)
{
    (void)state;
    const char *text = BASE "sweep:\n  params:\n    - {key: scheduler.mode, values: [strict, best_effort]}\n";
    int oom = 0;
    for (uint64_t n = 1;; n++) {
        fs_sweep_plan_t *p = NULL;
        fs_error_t err;
        fs_alloc_fail_after(n);
        int rc = fs_sweep_plan_from_text("t.yaml", text, NULL, 0, &p, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            assert_int_equal(p->n_points, 2);
            fs_sweep_plan_destroy(p);
            break;
        }
        assert_int_equal(rc, FS_ENOMEM);
        assert_null(p);
        oom++;
    }
    assert_true(oom > 100);
}

/* fleetsim versus: variants become zipped points; a key a variant leaves
 * out keeps the scenario's own value (written out: "fifo", "best_effort",
 * "10/h"); a run's overrides hold the variant's values and its
 * replication; no name: the sweep name is the scenario's `name`, not the
 * path; errors name the -p. */
static void test_variants(void **state)
{
    (void)state;
    fs_sweep_plan_t *p = plan_ok(BASE "sweep: {replications: 2}\n");
    assert_string_equal(p->name, "t");
    const char *ka[] = {"scheduler.queue"}, *va[] = {"sjf"};
    const char *kb[] = {"scheduler.mode", "workload.synthetic.arrivals.rate"},
               *vb[] = {"strict", "12/h"};
    fs_sweep_variant_t v[] = {{"base", NULL, NULL, 0}, {"a", ka, va, 1}, {"b", kb, vb, 2}};
    fs_error_t err;
    assert_int_equal(fs_sweep_plan_set_variants(p, v, 3, &err), 0);
    assert_int_equal(p->combine, FS_SWEEP_ZIP);
    assert_int_equal(p->n_points, 3);
    assert_int_equal(p->n_runs, 6);
    assert_int_equal(p->n_params, 3);
    static const char *const want[3][3] = {{"fifo", "sjf", "fifo"},
                                           {"best_effort", "best_effort", "strict"},
                                           {"10/h", "10/h", "12/h"}};
    for (size_t j = 0; j < 3; j++)
        for (size_t pt = 0; pt < 3; pt++)
            assert_string_equal(val(p, pt, j), want[j][pt]);
    assert_string_equal(p->params[2].where[2], "-p b");
    char **o = NULL;
    size_t n = 0;
    assert_int_equal(fs_sweep_run_overrides(p, 5, &o, &n, &err), 0);   /* point 2, rep 1 */
    int seen = 0;
    for (size_t i = 0; i < n; i++)
        seen |= (strcmp(o[i], "scheduler.mode=strict") == 0) |
                (strcmp(o[i], "workload.synthetic.arrivals.rate=12/h") == 0) << 1 |
                (strcmp(o[i], "replication=1") == 0) << 2;
    assert_int_equal(seen, 7);
    fs_sweep_overrides_free(o, n);
    fs_sweep_plan_destroy(p);

    /* errors: a banned key, a bad value (checked as a point); a list-item
     * key that only one variant sets is fine: the other keeps the base's */
    const char *ks[] = {"seed"}, *vs[] = {"3"};
    const char *kq[] = {"scheduler.queue"}, *vq[] = {"bogus"};
    const char *kn[] = {"cluster.pools.0.nodes"}, *vn[] = {"4"};
    fs_sweep_variant_t bad1[] = {{"x", NULL, NULL, 0}, {"y", ks, vs, 1}};
    fs_sweep_variant_t bad2[] = {{"x", NULL, NULL, 0}, {"y", kq, vq, 1}};
    fs_sweep_variant_t bad3[] = {{"x", NULL, NULL, 0}, {"y", kn, vn, 1}};
    p = plan_ok(BASE "sweep: {replications: 2}\n");
    assert_int_equal(fs_sweep_plan_set_variants(p, bad1, 2, &err), FS_EINVAL);
    assert_string_equal(err.msg, "-p y: seed cannot differ between policies (common random numbers)");
    fs_sweep_plan_destroy(p);
    p = plan_ok(BASE "sweep: {replications: 2}\n");
    assert_int_equal(fs_sweep_plan_set_variants(p, bad2, 2, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "-p y: sweep point 1 (scheduler.queue=bogus)"));
    fs_sweep_plan_destroy(p);
    p = plan_ok(BASE "sweep: {replications: 2}\n");
    assert_int_equal(fs_sweep_plan_set_variants(p, bad3, 2, &err), 0);
    assert_int_equal(p->n_params, 1);
    assert_string_equal(p->params[0].key, "cluster.pools.0.nodes");
    assert_string_equal(p->params[0].values[0], "16");     /* x: the scenario's value */
    assert_string_equal(p->params[0].values[1], "4");
    fs_sweep_plan_destroy(p);
}

/* Refusals that come at once: a sweep of 10^10 runs is refused from the
 * value counts, at the key that goes past the limit, before any value is
 * expanded or any point loaded (few allocations, where loading every point
 * took 51 s); a range whose steps repeat a value, or a list that repeats
 * one, is refused with the duplicate found by sorting (10^6 steps). */
static void test_refused_at_once(void **state)
{
    (void)state;
    fs_sweep_plan_t *p = NULL;
    fs_error_t err;
    uint64_t a0 = fs_alloc_count();
    int rc = fs_sweep_plan_from_text("t.yaml", BASE
        "sweep:\n"
        "  replications: 100\n"
        "  params:\n"
        "    - {key: workload.synthetic.arrivals.rate, range: {from: 1/h, to: 100/h, steps: 100000}}\n"
        "    - {key: seed, range: {from: 1, to: 1000, steps: 1000}}\n", NULL, 0, &p, &err);
    assert_int_equal(rc, FS_ELIMIT);
    assert_null(p);
    assert_int_equal(fs_error_exit_status(rc), 2);
    if (strncmp(err.msg, "t.yaml:14:", 10) != 0 ||
        !strstr(err.msg, "sweep.params.1: the sweep has more than 10000000 runs"))
        fail_msg("message: %s", err.msg);
    uint64_t used = fs_alloc_count() - a0;
    if (used > 20000)
        fail_msg("%llu allocations before the refusal: values were expanded or points loaded",
                 (unsigned long long)used);
    /* 10^6 steps whose written values repeat (a uint key from 1 to 10) */
    expect_plan_error(BASE "sweep:\n  params:\n"
                      "    - {key: seed, range: {from: 1, to: 10, steps: 1000000}}\n",
                      "t.yaml:12:*");
    expect_plan_error(BASE "sweep:\n  params:\n"
                      "    - {key: seed, values: [3, 1, 2, 1]}\n",
                      "t.yaml:12:37: sweep.params.0.values: '1' is given twice");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_variants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zip_and_no_params, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crn_and_shards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dump_round_trip_and_digest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
