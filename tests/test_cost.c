/*
 * The cost model (models/fs_cost.h, fs_usage.h, fs_burst.h, fs_purchase.h)
 * against hand computation:
 *   - one GPU for one hour, owned (depreciation with residual, operations,
 *     colocation, busy and idle power with PUE) and cloud (on-demand per
 *     busy hour, reserved per fleet hour, default discounts);
 *   - the worked TCO example of DOMAIN.md section 4.5 to the cent it states;
 *   - whole runs: one job on one GPU (energy and cost per GPU-hour from the
 *     job's own times), a purchase timeline (capex counts from delivery to
 *     retirement; no job uses a node before delivery), cloud burst (jobs
 *     reach the cloud pool only after waiting burst_after, never above the
 *     cap, and the cloud bill is the cloud jobs' GPU-hours x the price);
 *   - input errors (unknown pools, missing prices).
 * docs/validation.md ("Cost model") records the numbers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "models/fs_cost.h"
#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"

/* ---- pure arithmetic ------------------------------------------------------ */

static fs_cost_cfg_t base_cfg(void)
{
    fs_cost_cfg_t c;
    memset(&c, 0, sizeof c);
    c.pue = 1.5;
    c.electricity = 0.10;
    c.colocation = 150;
    c.depreciation = 4 * 365 * FS_US_PER_DAY;
    c.residual = 0.1;
    c.ops_share = 0.12;
    c.server_multiplier = 1.5;
    c.network_share = 0.25;
    c.busy_fraction = 0.8;
    c.idle_fraction = 0.2;
    return c;
}

/* One owned GPU, $10,000, 1 kW peak: K = 10000 x 1.5 / 0.75 = $20,000.
 * Per hour: depreciation 20000 x 0.9 / (4 x 8760) = 0.513699;
 * operations 20000 x 0.12 / 8760 = 0.273973; colocation 1 kW x 150 / 730 =
 * 0.205479; energy busy 1 kW x 0.8 x 1.5 x $0.10 = $0.12 (1.2 kWh), idle
 * 1 x 0.2 x 1.5 x 0.10 = $0.03 (0.3 kWh). */
static void test_owned_one_gpu_hour(void **s)
{
    (void)s;
    fs_cost_cfg_t cc = base_cfg();
    fs_cost_rate_t r;
    fs_cost_rate_owned(&cc, 10000, 1000, &r);
    assert_double_equal(r.capex_per_gpu, 20000, 1e-9);
    fs_usage_cell_t busy = {.owned = 3600, .up = 3600, .busy = 3600, .idle = 0};
    fs_cost_cell_t c;
    fs_cost_cell(&r, &busy, &c);
    assert_double_equal(c.capex, 20000 * 0.9 / (4 * 8760.0), 1e-12);
    assert_double_equal(c.capex, 0.513699, 1e-6);
    assert_double_equal(c.ops, 0.273973, 1e-6);
    assert_double_equal(c.colocation, 0.205479, 1e-6);
    assert_double_equal(c.energy_kwh, 1.2, 1e-12);
    assert_double_equal(c.energy, 0.12, 1e-12);
    assert_double_equal(c.cloud, 0, 0);
    assert_double_equal(c.total, 0.513699 + 0.273973 + 0.205479 + 0.12, 2e-6);
    assert_double_equal(c.idle, 0, 0);

    fs_usage_cell_t idle = {.owned = 3600, .up = 3600, .busy = 0, .idle = 3600};
    fs_cost_cell(&r, &idle, &c);
    assert_double_equal(c.energy_kwh, 0.3, 1e-12);
    assert_double_equal(c.energy, 0.03, 1e-12);
    assert_double_equal(c.total, 0.513699 + 0.273973 + 0.205479 + 0.03, 2e-6);
    assert_double_equal(c.idle, c.total, 1e-12);   /* all of it pays for an idle GPU */

    /* PUE multiplies energy only */
    cc.pue = 1.0;
    fs_cost_rate_owned(&cc, 10000, 1000, &r);
    fs_cost_cell(&r, &busy, &c);
    assert_double_equal(c.energy_kwh, 0.8, 1e-12);
    assert_double_equal(c.colocation, 0.205479, 1e-6);
}

static void test_cloud_one_gpu_hour(void **s)
{
    (void)s;
    fs_cost_rate_t r;
    fs_usage_cell_t busy = {.owned = 3600, .busy = 3600};
    fs_usage_cell_t idle = {.owned = 3600, .idle = 3600};
    fs_cost_cell_t c;
    fs_cost_rate_cloud(FS_BILL_ON_DEMAND, 4.00, &r);
    fs_cost_cell(&r, &busy, &c);
    assert_double_equal(c.cloud, 4.00, 1e-12);
    assert_double_equal(c.total, 4.00, 1e-12);
    fs_cost_cell(&r, &idle, &c);   /* elastic: an idle hour is not billed */
    assert_double_equal(c.total, 0, 0);
    fs_cost_rate_cloud(FS_BILL_RESERVED_1Y, 2.36, &r);
    fs_cost_cell(&r, &idle, &c);   /* committed: billed, and all of it idle */
    assert_double_equal(c.total, 2.36, 1e-12);
    assert_double_equal(c.idle, 2.36, 1e-12);
    assert_double_equal(c.energy_kwh, 0, 0);
}

/* DOMAIN.md 4.5: "$45k / (5 x 8,760) = $1.03/GPU-h at 100% utilization.
 * Power: 1.27 kW x 1.3 x $0.08 = $0.13/GPU-h.  Colo at 1.27 kW x $184/730 =
 * $0.32/GPU-h.  That is about $1.5/GPU-h before utilization loss, and about
 * $2.1 at 70% utilization."  The example charges full power whether busy or
 * not (busy and idle fraction 1), no operations, capex $45k all-in. */
static void test_domain_tco_example(void **s)
{
    (void)s;
    fs_cost_cfg_t cc = base_cfg();
    cc.pue = 1.3;
    cc.electricity = 0.08;
    cc.colocation = 184;
    cc.depreciation = 5 * 365 * FS_US_PER_DAY;
    cc.residual = 0;
    cc.ops_share = 0;
    cc.server_multiplier = 1;
    cc.network_share = 0;
    cc.busy_fraction = cc.idle_fraction = 1;
    fs_cost_rate_t r;
    fs_cost_rate_owned(&cc, 45000, 1270, &r);
    fs_cost_cell_t c;
    fs_usage_cell_t full = {.owned = 3600, .busy = 3600};
    fs_cost_cell(&r, &full, &c);
    printf("TCO example per GPU-hour: capex %.4f power %.4f colo %.4f total %.4f\n", c.capex,
           c.energy, c.colocation, c.total);
    assert_double_equal(round(c.capex * 100) / 100, 1.03, 1e-9);
    assert_double_equal(round(c.energy * 100) / 100, 0.13, 1e-9);
    assert_double_equal(round(c.colocation * 100) / 100, 0.32, 1e-9);
    assert_double_equal(round(c.total * 10) / 10, 1.5, 1e-9);
    /* 70% utilization: one owned GPU-hour delivers 0.7 busy GPU-hours */
    fs_usage_cell_t u70 = {.owned = 3600, .busy = 0.7 * 3600, .idle = 0.3 * 3600};
    fs_cost_cell(&r, &u70, &c);
    double per_delivered = c.total / 0.7;
    printf("TCO example at 70%% utilization: %.4f per delivered GPU-hour\n", per_delivered);
    assert_double_equal(round(per_delivered * 10) / 10, 2.1, 1e-9);
    assert_double_equal(c.idle, 0.3 * c.total, 1e-12);
}

/* ---- whole runs ------------------------------------------------------------- */

typedef struct rows {
    fs_job_row_t *r;
    size_t n, cap;
} rows_t;

static int keep_row(void *ud, const fs_job_row_t *row)
{
    rows_t *k = ud;
    if (fs_grow((void **)&k->r, &k->cap, k->n + 1, sizeof *k->r))
        return FS_ENOMEM;
    k->r[k->n++] = *row;
    return 0;
}

/* Runs a scenario text; 0 or the error code (message in *err). */
static int run_text(const char *yaml, rows_t *rows, fs_run_report_t *rep, fs_error_t *err)
{
    fs_config_t cfg;
    int rc = fs_scenario_load_string("<cost>", yaml, NULL, 0, &cfg, err);
    if (rc)
        return rc;
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    opts.on_job = keep_row;
    opts.on_job_ud = rows;
    rc = fs_run_config(&cfg, &opts, rep, err);
    fs_config_release(&cfg);
    return rc;
}

/* One job of one hour on one GPU.  Before it arrives (at t0) the GPU is idle.
 * Energy = PUE x (1 h x 1.275 kW x 0.75 + t0 x 1.275 kW x 0.3) (defaults:
 * H100 host power 1,275 W, busy 0.75, idle 0.3, PUE 1.3); the cost per
 * delivered GPU-hour is the whole cost over the one busy hour. */
static void test_run_one_job(void **s)
{
    (void)s;
    const char *yaml =
        "name: one\nseed: 7\nhorizon: 10h\n"
        "cluster: {pools: [{name: a, gpu: H100, nodes: 1, gpus_per_node: 1}]}\n"
        "workload: {synthetic: {arrivals: {rate: 1/h}, max_jobs: 1, gpus: {1: 1.0},\n"
        "           duration: {dist: constant, value: 1h}}}\n"
        "output: {timeline_interval: 0s}\n";
    rows_t rows = {0};
    fs_run_report_t rep;
    fs_error_t err;
    int rc = run_text(yaml, &rows, &rep, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(rows.n, 1);
    double t0 = rows.r[0].submit / 3600.0, end = rep.summary.end_time / 3600.0;
    assert_double_equal(end, t0 + 1, 1e-9);
    double kwh = 1.3 * (1.275 * 0.75 + t0 * 1.275 * 0.3);
    assert_double_equal(rep.summary.energy_kwh, kwh, 1e-9);
    double k = 25000 * 1.64 / 0.81;   /* H100 default capex per GPU */
    double fixed_h = k / (5 * 8760) + k * 0.1 / 8760 + 1.275 * 184.06 / 730;
    double total = fixed_h * end + kwh * 0.08;
    printf("one job: t0 %.4f h, energy %.6f kWh, cost %.6f $, per GPU-hour %.6f $\n", t0,
           rep.summary.energy_kwh, rep.summary.cost_total, rep.summary.cost_per_gpu_hour);
    assert_double_equal(rep.summary.cost_total, total, 1e-9);
    assert_double_equal(rep.summary.cost_per_gpu_hour, total, 1e-9);
    assert_double_equal(rep.summary.cost_per_job, total, 1e-9);
    assert_double_equal(rep.summary.cost_idle, fixed_h * t0 + 1.3 * t0 * 1.275 * 0.3 * 0.08,
                        1e-9);
    assert_double_equal(rep.summary.cost_failures, 0, 0);
    fs_free(rows.r);
}

/* The window's cost (cost_window, priced over [warmup, min(horizon, end)]):
 * the one-job run above with a warm-up of 30 minutes, worked by hand; and
 * without a warm-up it is the whole run's. */
static void test_window_cost(void **s)
{
    (void)s;
    const char *yaml =
        "name: one\nseed: 7\nhorizon: 10h\nwarmup: 30m\n"
        "cluster: {pools: [{name: a, gpu: H100, nodes: 1, gpus_per_node: 1}]}\n"
        "workload: {synthetic: {arrivals: {rate: 1/h}, max_jobs: 1, gpus: {1: 1.0},\n"
        "           duration: {dist: constant, value: 1h}}}\n"
        "output: {timeline_interval: 0s}\n";
    rows_t rows = {0};
    fs_run_report_t rep;
    fs_error_t err;
    assert_int_equal(run_text(yaml, &rows, &rep, &err), 0);
    assert_int_equal(rows.n, 1);
    double t0 = rows.r[0].submit / 3600.0, end = rep.summary.end_time / 3600.0;
    assert_true(t0 > 0.5);  /* the job runs inside the window */
    assert_double_equal(rep.summary.window_start, 1800, 0);
    assert_double_equal(rep.summary.window_end, rep.summary.end_time, 0);
    double k = 25000 * 1.64 / 0.81;
    double fixed_h = k / (5 * 8760) + k * 0.1 / 8760 + 1.275 * 184.06 / 730;
    double kwh = 1.3 * (1.275 * 0.75 + (t0 - 0.5) * 1.275 * 0.3);
    double win = fixed_h * (end - 0.5) + kwh * 0.08;
    printf("window cost: %.6f $ (whole run %.6f $), per delivered GPU-hour %.6f $\n",
           rep.summary.cost_window, rep.summary.cost_total, rep.summary.cost_per_gpu_hour_window);
    assert_double_equal(rep.summary.cost_window, win, 1e-9);
    assert_double_equal(rep.summary.cost_per_gpu_hour_window, win, 1e-9);  /* 1 GPU-hour busy */
    assert_true(rep.summary.cost_window < rep.summary.cost_total);
    fs_free(rows.r);
    rows = (rows_t){0};
    const char *no_warmup[] = {"warmup=0s"};
    fs_config_t cfg;
    assert_int_equal(fs_scenario_load_string("w.yaml", yaml, no_warmup, 1, &cfg, &err), 0);
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    assert_int_equal(fs_run_config(&cfg, &opts, &rep, &err), 0);
    assert_double_equal(rep.summary.cost_window, rep.summary.cost_total, 1e-9);
    assert_double_equal(rep.summary.cost_per_gpu_hour_window, rep.summary.cost_per_gpu_hour, 1e-9);
    fs_config_release(&cfg);
}

/* Capex counts from delivery to retirement.  Pool a: 4 nodes x 8 H100, of
 * which 2 arrive at 1d and leave at 3d; run 4 days.  At $1 of depreciation
 * per GPU-hour (GPU price 43,800, 5 y, no server or network share) and no
 * other cost, the bill is the owned GPU-hours: 16 x 96 + 16 x 48 = 2,304.
 * 32-GPU jobs need all four nodes: they start only in [1d, 3d). */
static void test_purchase_timeline(void **s)
{
    (void)s;
    const char *yaml =
        "name: buy\nseed: 3\nhorizon: 4d\nuntil: horizon\n"
        "cluster: {pools: [{name: a, gpu: H100, nodes: 4, gpus_per_node: 8}]}\n"
        "workload: {synthetic: {arrivals: {rate: 2/h}, gpus: {32: 0.3, 8: 0.7},\n"
        "           duration: {dist: exponential, mean: 30m}}}\n"
        "cost: {electricity: 0, colocation: 0, ops_share: 0, server_multiplier: 1,\n"
        "       network_share: 0, pools: [{pool: a, gpu_price: 43800}],\n"
        "       purchases: [{pool: a, nodes: 2, at: 1d, retire: 3d}]}\n"
        "output: {timeline_interval: 0s}\n";
    rows_t rows = {0};
    fs_run_report_t rep;
    fs_error_t err;
    int rc = run_text(yaml, &rows, &rep, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    printf("purchase timeline: cost %.6f $ (owned GPU-hours 2304)\n", rep.summary.cost_total);
    assert_double_equal(rep.summary.cost_total, 2304, 1e-6);
    size_t big = 0;
    for (size_t i = 0; i < rows.n; i++) {
        const fs_job_row_t *r = &rows.r[i];
        if (r->gpus != 32 || isnan(r->start))
            continue;
        big++;
        assert_true(r->start >= 86400.0 && r->start < 3 * 86400.0);
    }
    printf("purchase timeline: %zu jobs of 32 GPUs, all started in [1d, 3d)\n", big);
    assert_true(big > 10);
    fs_free(rows.r);

    /* the pool's own dates: 8 GPUs online at 12h, retired at 36h: 8 x 24 GPU-hours;
     * no job starts outside [12h, 36h) */
    const char *own =
        "name: own\nseed: 5\nhorizon: 2d\nuntil: horizon\n"
        "cluster: {pools: [{name: b, gpu: H100, nodes: 1, gpus_per_node: 8}]}\n"
        "workload: {synthetic: {arrivals: {rate: 2/h}, gpus: {1: 1.0},\n"
        "           duration: {dist: exponential, mean: 30m}}}\n"
        "cost: {electricity: 0, colocation: 0, ops_share: 0, server_multiplier: 1,\n"
        "       network_share: 0, pools: [{pool: b, gpu_price: 43800, online: 12h, retire: 36h}]}\n"
        "output: {timeline_interval: 0s}\n";
    rows_t r2 = {0};
    int rc2 = run_text(own, &r2, &rep, &err);
    if (rc2)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc2, 0);
    printf("pool online 12h, retired 36h: cost %.6f $ (owned GPU-hours 192)\n",
           rep.summary.cost_total);
    assert_double_equal(rep.summary.cost_total, 192, 1e-6);
    size_t started = 0;
    for (size_t i = 0; i < r2.n; i++)
        if (!isnan(r2.r[i].start)) {
            started++;
            assert_true(r2.r[i].start >= 12 * 3600.0 && r2.r[i].start < 36 * 3600.0);
        }
    assert_true(started > 20);
    fs_free(r2.r);
}

typedef struct ev {
    double t;
    int d;
} ev_t;

static int ev_cmp(const void *a, const void *b)
{
    const ev_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->d - y->d;
}

/* Cloud burst: 2 owned GPUs, a cloud pool of 8 on-demand GPUs at $3.60 an
 * hour that jobs may use after waiting 30 min, at most 3 GPUs at once.
 * Load ~4 GPUs of work: jobs queue, some burst.  Every cloud job waited
 * >= 30 min (the first of them exactly 30 min: the timer), at most 3 run
 * there at once, and the cloud bill is their GPU-hours x 3.60. */
static void test_burst(void **s)
{
    (void)s;
    const char *yaml =
        "name: burst\nseed: 11\nhorizon: 3d\n"
        "cluster: {pools: [{name: own, gpu: H100, nodes: 2, gpus_per_node: 1},\n"
        "                  {name: cloud, gpu: H100, nodes: 8, gpus_per_node: 1}]}\n"
        "workload: {synthetic: {arrivals: {rate: 4/h}, gpus: {1: 1.0},\n"
        "           duration: {dist: exponential, mean: 1h}}}\n"
        "cost: {electricity: 0, colocation: 0, ops_share: 0, server_multiplier: 1,\n"
        "       network_share: 0, pools: [{pool: own, gpu_price: 43800},\n"
        "       {pool: cloud, billing: on_demand, price: 3.6, burst: true, burst_after: 30m,\n"
        "        burst_cap: 3}]}\n"
        "output: {timeline_interval: 0s}\n";
    rows_t rows = {0};
    fs_run_report_t rep;
    fs_error_t err;
    int rc = run_text(yaml, &rows, &rep, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    size_t n_cloud = 0;
    double min_wait = INFINITY, cloud_h = 0;
    /* concurrency in the cloud pool: +1 at start, -1 at end, in time order
     * (an end before a start at the same time) */
    ev_t *ev = fs_calloc(2 * rows.n + 1, sizeof *ev);
    size_t n_ev = 0;
    for (size_t i = 0; i < rows.n; i++) {
        const fs_job_row_t *r = &rows.r[i];
        if (r->pool != 1)
            continue;
        n_cloud++;
        assert_true(r->wait >= 1800.0);
        min_wait = fmin(min_wait, r->wait);
        cloud_h += r->run / 3600.0;
        ev[n_ev++] = (ev_t){r->start, +1};
        ev[n_ev++] = (ev_t){r->end, -1};
    }
    qsort(ev, n_ev, sizeof *ev, ev_cmp);
    int most = 0, cur = 0;
    for (size_t i = 0; i < n_ev; i++) {
        cur += ev[i].d;
        most = cur > most ? cur : most;
    }
    double own_h = 2 * rep.summary.end_time / 3600.0;
    printf("burst: %zu of %zu jobs in the cloud, min wait there %.1f s, at most %d at once, "
           "cloud %.4f GPU-h, cost %.4f $\n", n_cloud, rows.n, min_wait, most, cloud_h,
           rep.summary.cost_total);
    assert_true(n_cloud > 20);
    assert_double_equal(min_wait, 1800.0, 1e-6);
    assert_true(most <= 3);
    assert_int_equal(most, 3);
    assert_double_equal(rep.summary.cost_total, own_h + 3.6 * cloud_h, 1e-6);
    fs_free(ev);
    fs_free(rows.r);
}

static void expect_error(const char *yaml, const char *needle)
{
    rows_t rows = {0};
    fs_run_report_t rep;
    fs_error_t err;
    int rc = run_text(yaml, &rows, &rep, &err);
    assert_int_equal(rc, FS_EINVAL);
    if (!strstr(err.msg, needle))
        fail_msg("'%s' not in '%s'", needle, err.msg);
    fs_free(rows.r);
}

static void test_errors(void **s)
{
    (void)s;
    const char *head = "name: e\nhorizon: 1h\n"
                       "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1.0},\n"
                       "           duration: {dist: constant, value: 1h}}}\n";
    char y[1024];
    snprintf(y, sizeof y, "%scluster: {pools: [{name: a, gpu: H100, nodes: 1, gpus_per_node: 1}]}\n"
             "cost: {pools: [{pool: b}]}\n", head);
    expect_error(y, "cost.pools.0.pool: no cluster pool named 'b'");
    snprintf(y, sizeof y, "%scluster: {pools: [{name: a, gpu: V100, nodes: 1, gpus_per_node: 1}]}\n"
             "cost: {pue: 1.2}\n", head);
    expect_error(y, "has no default gpu_price");
    snprintf(y, sizeof y, "%scluster: {pools: [{name: a, gpu: H100, nodes: 1, gpus_per_node: 1}]}\n"
             "cost: {purchases: [{pool: a, nodes: 2, at: 1h}]}\n", head);
    expect_error(y, "2 nodes bought for pool 'a'");
    /* no cost block and no price: the run goes on without cost */
    snprintf(y, sizeof y, "%scluster: {pools: [{name: a, gpu: V100, nodes: 1, gpus_per_node: 1}]}\n",
             head);
    rows_t rows = {0};
    fs_run_report_t rep;
    fs_error_t err;
    assert_int_equal(run_text(y, &rows, &rep, &err), 0);
    assert_true(isnan(rep.summary.cost_total));
    fs_free(rows.r);
}

/* Default cloud prices: H100 on-demand $6.88 (AWS, June 2025), reserved
 * 1 y = 6.88 x (1 - 0.41), 3 y = 6.88 x (1 - 0.64), spot = 6.88 x 0.35. */
static void test_default_rates(void **s)
{
    (void)s;
    const char *yaml =
        "name: r\nhorizon: 1h\n"
        "cluster: {pools: [{name: a, gpu: H100, nodes: 1, gpus_per_node: 8},\n"
        "  {name: b, gpu: H100, nodes: 1, gpus_per_node: 8},\n"
        "  {name: c, gpu: H100, nodes: 1, gpus_per_node: 8},\n"
        "  {name: d, gpu: H100, nodes: 1, gpus_per_node: 8},\n"
        "  {name: e, gpu: A100, nodes: 1, gpus_per_node: 8}]}\n"
        "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1.0},\n"
        "           duration: {dist: constant, value: 1h}}}\n"
        "cost: {pools: [{pool: a, billing: on_demand}, {pool: b, billing: reserved_1y},\n"
        "  {pool: c, billing: reserved_3y}, {pool: d, billing: spot}]}\n";
    fs_config_t cfg;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_string("<r>", yaml, NULL, 0, &cfg, &err), 0);
    fs_cost_rate_t r[5];
    assert_int_equal(fs_cost_rates(&cfg, r, &err), 0);
    assert_double_equal(r[0].cloud_per_s * 3600, 6.88, 1e-12);
    assert_double_equal(r[1].cloud_per_s * 3600, 6.88 * 0.59, 1e-12);
    assert_double_equal(r[2].cloud_per_s * 3600, 6.88 * 0.36, 1e-12);
    assert_double_equal(r[3].cloud_per_s * 3600, 6.88 * 0.35, 1e-12);
    assert_int_equal(r[0].per_busy, 1);
    assert_int_equal(r[1].per_busy, 0);
    assert_int_equal(r[3].per_busy, 1);
    assert_int_equal(r[4].billing, FS_BILL_OWNED);
    assert_double_equal(r[4].capex_per_gpu, 12500 * 1.64 / 0.81, 1e-9);
    assert_double_equal(r[4].peak_kw, 0.8125, 1e-12);
    fs_config_release(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owned_one_gpu_hour),
        cmocka_unit_test(test_cloud_one_gpu_hour),
        cmocka_unit_test(test_domain_tco_example),
        cmocka_unit_test(test_default_rates),
        cmocka_unit_test(test_run_one_job),
        cmocka_unit_test(test_window_cost),
        cmocka_unit_test(test_purchase_timeline),
        cmocka_unit_test(test_burst),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
