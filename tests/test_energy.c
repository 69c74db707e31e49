/*
 * cost.energy: power (docs/cost.md "Energy from the power model";
 * models/fs_model.c energy_hold, models/fs_usage.c fs_usage_energy,
 * models/fs_cost.c) against closed forms written from the power model's
 * definition (models/fs_power.h), to 1e-9 relative:
 *   - one capped job: 4 H100s of a node of 8, 30 s of pod start-up, a
 *     450 W cap under the job's 581.6 W: GPU energy = idle x 8 GPUs x T +
 *     (cap - idle) x 4 x the time it computed, its run stretched by the
 *     cap's speed; plus the host part (peak - TDP) at busy / idle
 *     fractions, x PUE, priced; a node bought an hour in adds only its
 *     idle and host-idle draw from its delivery;
 *   - the same job over an hourly carbon series of two hours: each hour's
 *     kWh at its own intensity;
 *   - a GPU shared by MPS (2 replicas): the two jobs' SM activity x share
 *     summed, the CUDA context counted once while either computes;
 *   - the key off changes nothing; a peak below the TDP is refused.
 * The agreement with the exported power (fleetsim metrics) is checked in
 * tests/cli/energy.sh.  docs/validation.md ("Energy from the power model")
 * records the numbers.
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
#include "analysis/fs_h5read.h"
#include "models/fs_cost.h"
#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"

/* H100 (docs/catalog.md, models/fs_power.h): TDP 700 W, idle 10% = 70 W,
 * a CUDA context 38 W, peak per GPU with its host share 1,275 W; the cost
 * defaults busy 0.75, idle 0.3 of the host part, PUE 1.3, $0.08/kWh. */
#define TDP 700.0
#define IDLE 70.0
#define CTX 38.0
#define HOST (1275.0 - TDP)
#define BF 0.75
#define IF 0.3
#define PUE 1.3
#define KWH_PRICE 0.08

typedef struct fx {
    int64_t live0;
    char *dir;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    f->live0 = fs_alloc_live();
    f->dir = fs_test_tmpdir();
    *state = f;
    return f->dir ? 0 : -1;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    fs_test_rmtree(f->dir);
    free(f->dir);
    assert_int_equal(fs_alloc_live(), f->live0);
    free(f);
    return 0;
}

static void assert_rel(double got, double want, const char *what)
{
    double rel = fabs(got - want) / fmax(fabs(want), 1e-300);
    printf("%s: %.12g (closed form %.12g, relative error %.2g)\n", what, got, want, rel);
    if (!(rel <= 1e-9))
        fail_msg("%s: %.17g, closed form %.17g", what, got, want);
}

static char *put(const fx_t *f, const char *name, const char *text)
{
    char *p = fs_test_path(f->dir, name);
    assert_int_equal(fs_test_write(p, text), 0);
    return p;
}

/* Loads and runs yaml (writing out when not NULL); 0 or the error code. */
static int run(const char *yaml, const char *out, fs_run_report_t *rep, fs_error_t *err)
{
    fs_config_t cfg;
    int rc = fs_scenario_load_string("<energy>", yaml, NULL, 0, &cfg, err);
    if (rc)
        return rc;
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    opts.output = out;
    rc = fs_run_config(&cfg, &opts, rep, err);
    fs_config_release(&cfg);
    return rc;
}

static void run_ok(const char *yaml, const char *out, fs_run_report_t *rep)
{
    fs_error_t err;
    int rc = run(yaml, out, rep, &err);
    if (rc)
        fail_msg("run: %s", err.msg);
}

/* One node of 8 H100s (nodes: `nodes`, the second bought at 1 h when 2),
 * a 450 W cap, sm 0.8, 30 s of start-up, the run cut at 2 h; `cost` inside
 * the cost block. */
static char *scenario(const char *trace, int nodes, const char *cost)
{
    static const char fmt[] =
        "name: energy\nseed: 1\nhorizon: 2h\nuntil: horizon\n"
        "cluster: {pools: [{name: a, gpu: H100, nodes: %d, gpus_per_node: 8, power_cap_w: 450}]}\n"
        "workload: {trace: {path: %s, format: native}}\n"
        "startup: {container: 30s}\n"
        "telemetry: {sm: 0.8}\n"
        "cost: {%s%s}\n"
        "output: {timeline_interval: 0s}\n";
    const char *buy = nodes == 2 ? ", purchases: [{pool: a, nodes: 1, at: 1h}]" : "";
    size_t n = sizeof fmt + strlen(trace) + strlen(cost) + strlen(buy) + 16;
    char *y = malloc(n);
    snprintf(y, n, fmt, nodes, trace, cost, buy);
    return y;
}

/* The capped job: it draws the cap from 30 s to its end, at the cap's speed
 * ((cap - floor) / (P - floor))^(1/3), floor = idle + context. */
#define T_END 7200.0
#define READY 30.0
#define WORK 3600.0
static double p_uncapped(void) { return IDLE + CTX + (TDP - IDLE - CTX) * 0.8; }
static double job_end(void)
{
    double speed = cbrt((450.0 - IDLE - CTX) / (p_uncapped() - IDLE - CTX));
    return READY + WORK / speed;
}

/* GPU J, host J over [a, b) of the run (one node of 8, the job on 4). */
static void hand_j(double a, double b, double *gpu, double *host)
{
    double end = job_end();
    double busy = fmax(0, fmin(b, end) - a) * 4;              /* GPU-s held */
    double comp = fmax(0, fmin(b, end) - fmax(a, READY)) * 4; /* GPU-s computing */
    double all = (b - a) * 8;
    *gpu = IDLE * all + (450.0 - IDLE) * comp;
    *host = HOST * (BF * busy + IF * (all - busy));
}

static void test_capped_job(void **state)
{
    fx_t *f = *state;
    char *trace = put(f, "one.csv", "id,submit,gpus,duration\n1,0,4,3600\n");
    char *y = scenario(trace, 1, "energy: power");
    char *out = fs_test_path(f->dir, "one.h5");
    fs_run_report_t rep;
    run_ok(y, out, &rep);
    assert_double_equal(rep.summary.end_time, T_END, 0);
    printf("the job: uncapped %.1f W, capped at 450 W, computes %.6f s\n", p_uncapped(),
           job_end() - READY);
    double gpu, host;
    hand_j(0, T_END, &gpu, &host);
    double kwh = (gpu + host) / 3.6e6 * PUE;
    assert_rel(rep.summary.energy_kwh, kwh, "energy_kwh (GPUs + host) x PUE");
    /* /cost carries it, priced */
    fs_h5file_t *h;
    fs_error_t err;
    assert_int_equal(fs_h5read_open(out, &h, &err), 0);
    double e, d;
    assert_int_equal(fs_h5read_f64(h, "cost", "energy_kwh", &e, &err), 0);
    assert_int_equal(fs_h5read_f64(h, "cost", "energy", &d, &err), 0);
    assert_rel(e, kwh, "/cost energy_kwh");
    assert_rel(d, kwh * KWH_PRICE, "/cost energy ($)");
    fs_h5read_close(h);

    /* the GPU part alone: peak = TDP leaves no host part, PUE 1 */
    free(y);
    y = scenario(trace, 1, "energy: power, pue: 1, pools: [{pool: a, power_w: 700}]");
    run_ok(y, NULL, &rep);
    assert_rel(rep.summary.energy_kwh, gpu / 3.6e6,
               "GPU energy: idle x 8 x T + (cap - idle) x 4 x t_compute");
    /* flat, for scale: 0.75 x 1.275 kW per busy GPU-s, 0.3 x per idle */
    free(y);
    y = scenario(trace, 1, "energy: flat");
    run_ok(y, NULL, &rep);
    double busy = job_end() * 4, flat = (busy * 0.75 + (T_END * 8 - busy) * 0.3) * 1.275 / 3600 * PUE;
    assert_rel(rep.summary.energy_kwh, flat, "flat energy_kwh (unchanged)");
    printf("power model / flat: %.4f\n", kwh / flat);

    /* a second node delivered at 1 h: its idle draw and host idle from then */
    free(y);
    y = scenario(trace, 2, "energy: power");
    run_ok(y, NULL, &rep);
    double add = (IDLE + HOST * IF) * 8 * (T_END - 3600) / 3.6e6 * PUE;
    assert_rel(rep.summary.energy_kwh, kwh + add, "with a node bought at 1 h");
    free(out);
    free(y);
    free(trace);
}

/* The same job over an hourly series 100, 500 g/kWh: each hour's energy at
 * its own intensity. */
static void test_carbon_hours(void **state)
{
    fx_t *f = *state;
    char *trace = put(f, "one.csv", "id,submit,gpus,duration\n1,0,4,3600\n");
    char *series = put(f, "ci.csv", "hour_start_s,gco2e_per_kwh\n0,100\n3600,500\n");
    char cost[512];
    snprintf(cost, sizeof cost, "energy: power, carbon_series: %s", series);
    char *y = scenario(trace, 1, cost);
    fs_run_report_t rep;
    run_ok(y, NULL, &rep);
    double g0, h0, g1, h1;
    hand_j(0, 3600, &g0, &h0);
    hand_j(3600, T_END, &g1, &h1);
    double kg = ((g0 + h0) * 100 + (g1 + h1) * 500) / 3.6e6 * PUE / 1000;
    assert_rel(rep.summary.carbon_kg, kg, "carbon, each hour at its intensity, kg");
    free(y);
    y = scenario(trace, 1, "energy: power, carbon_intensity: 400");
    run_ok(y, NULL, &rep);
    assert_rel(rep.summary.carbon_kg, rep.summary.energy_kwh * 0.4, "constant 400 g/kWh");
    free(y);
    free(series);
    free(trace);
}

/* One H100 shared by MPS with 2 replicas (each 500 milli, speed 1/2): job
 * A (1,200 s of work) from 0 to 2,400 s, job B from 600 s to 3,000 s; the
 * run cut at 1 h.  Alone a job draws idle + context + 592 x 0.5 x 0.8 =
 * 344.8 W, both 581.6 W (one context). */
static void test_mps(void **state)
{
    fx_t *f = *state;
    char *trace = put(f, "mps.csv", "id,submit,gpus,duration\n1,0,1,1200\n2,600,1,1200\n");
    char *y = strdup("name: mps\nseed: 1\nhorizon: 1h\nuntil: horizon\n"
                     "cluster: {pools: [{name: a, gpu: H100, nodes: 1, gpus_per_node: 1, "
                     "sharing: {mps: 2}}]}\n"
                     "workload: {trace: {path: TRACE, format: native}}\n"
                     "telemetry: {sm: 0.8}\n"
                     "cost: {energy: power, pue: 1, pools: [{pool: a, power_w: 700}]}\n"
                     "output: {timeline_interval: 0s}\n");
    size_t n = strlen(y) + strlen(trace) + 1;
    char *yy = malloc(n), *at = strstr(y, "TRACE");
    snprintf(yy, n, "%.*s%s%s", (int)(at - y), y, trace, at + 5);
    fs_run_report_t rep;
    run_ok(yy, NULL, &rep);
    double one = IDLE + CTX + (TDP - IDLE - CTX) * 0.4, two = IDLE + CTX + (TDP - IDLE - CTX) * 0.8;
    double j = IDLE * 3600 + (one - IDLE) * 600 + (two - IDLE) * 1800 + (one - IDLE) * 600;
    assert_rel(rep.summary.energy_kwh, j / 3.6e6, "MPS: shares summed, one context");
    free(yy);
    free(y);
    free(trace);
}

/* A peak below the TDP would give the host a negative part: refused. */
static void test_refused(void **state)
{
    fx_t *f = *state;
    char *trace = put(f, "one.csv", "id,submit,gpus,duration\n1,0,4,3600\n");
    char *y = scenario(trace, 1, "energy: power, pools: [{pool: a, power_w: 600}]");
    fs_run_report_t rep;
    fs_error_t err;
    assert_int_equal(run(y, NULL, &rep, &err), FS_EINVAL);
    printf("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "cost.energy: power: pool 'a': peak power per GPU 600 W is "
                                    "below the GPU's TDP (700 W)"));
    free(y);
    free(trace);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_capped_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_carbon_hours, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
