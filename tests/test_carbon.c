/*
 * Carbon accounting (docs/cost.md, "Carbon"; models/fs_cost.h, fs_usage.h,
 * traces/fs_carbon.h) against hand computation, to 1e-9 relative:
 *   - one cell: operational carbon = facility kWh x intensity, embodied per
 *     owned GPU-second;
 *   - whole runs from a native trace with known times: 8 GPUs busy for
 *     exactly 2 h at a constant intensity; then an hourly series of two
 *     hours whose load differs from hour to hour (busy, then half busy and
 *     half idle, then a third hour on the series' first row again): the
 *     test fails if the energy is weighted by anything but each hour's own
 *     intensity (the series' mean is 27% off here, which the test shows);
 *   - a run of 30 h over a 7-hour series: the series repeats, and the /cost
 *     rows of day 0 and day 1 hold exactly their hours (read back from the
 *     results file), /cost_pools and /cost_tenants sum to carbon_kg;
 *   - embodied carbon amortised over the depreciation period like capex;
 *   - without carbon keys carbon is 0 and nothing else changes; the `carbon`
 *     line of `fleetsim run` appears only when carbon is modelled;
 *   - bad series files: every error names FILE:LINE:COL and what was
 *     expected, and the scenario loader refuses with FS_EINVAL (exit 2);
 *     a failed allocation anywhere in a load is FS_ENOMEM, nothing leaked.
 * docs/validation.md ("Carbon") records the numbers.
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
#include "traces/fs_carbon.h"

/* H100 defaults (docs/cost.md): 1.275 kW peak per GPU incl. host, busy
 * 0.75 and idle 0.3 of it, PUE 1.3. */
#define P_KW 1.275
#define BF 0.75
#define IF 0.3
#define PUE 1.3
/* kg CO2e of one busy (idle) GPU-second at 1 g/kWh */
#define KG_BUSY (P_KW * BF * PUE / 3600.0 / 1000.0)
#define KG_IDLE (P_KW * IF * PUE / 3600.0 / 1000.0)
#define DEP_S (5 * 365 * 86400.0)

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
    printf("%s: %.12g (hand %.12g, relative error %.2g)\n", what, got, want, rel);
    if (!(rel <= 1e-9))
        fail_msg("%s: %.17g, by hand %.17g", what, got, want);
}

static char *put(const fx_t *f, const char *name, const char *text)
{
    char *p = fs_test_path(f->dir, name);
    assert_int_equal(fs_test_write(p, text), 0);
    return p;
}

/* A scenario replaying trace (native CSV) on one node of 8 H100s, with the
 * cost block `cost` (text inside {}). */
static char *scenario(const char *trace, const char *cost)
{
    static const char fmt[] =
        "name: carbon\nseed: 1\n"
        "cluster: {pools: [{name: a, gpu: H100, nodes: 1, gpus_per_node: 8}]}\n"
        "workload: {trace: {path: %s, format: native}}\n"
        "cost: {%s}\n"
        "output: {timeline_interval: 0s}\n";
    size_t n = sizeof fmt + strlen(trace) + strlen(cost);
    char *y = malloc(n);
    snprintf(y, n, fmt, trace, cost);
    return y;
}

/* Loads and runs yaml (writing out when not NULL); 0 or the error code. */
static int run(const char *yaml, const char *out, fs_run_report_t *rep, fs_config_t *cfg_out,
               fs_error_t *err)
{
    fs_config_t cfg;
    int rc = fs_scenario_load_string("<carbon>", yaml, NULL, 0, &cfg, err);
    if (rc)
        return rc;
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    opts.output = out;
    rc = fs_run_config(&cfg, &opts, rep, err);
    if (cfg_out && !rc)
        *cfg_out = cfg;
    else
        fs_config_release(&cfg);
    return rc;
}

static void run_ok(const char *yaml, const char *out, fs_run_report_t *rep)
{
    fs_error_t err;
    int rc = run(yaml, out, rep, NULL, &err);
    if (rc)
        fail_msg("run: %s", err.msg);
}

/* ---- one cell ------------------------------------------------------------- */

/* One owned GPU of 1 kW, busy 0.8, idle 0.2, PUE 1.5, 400 g/kWh: a busy
 * hour is 1.2 kWh = 480 g, an idle hour 0.3 kWh = 120 g; embodied 1,000 kg
 * per node of 8 GPUs over 4 years: 1000 / 8 / (4 x 8760) kg per GPU-hour. */
static void test_cell(void **state)
{
    (void)state;
    fs_cost_cfg_t cc;
    memset(&cc, 0, sizeof cc);
    cc.pue = 1.5;
    cc.depreciation = 4 * 365 * FS_US_PER_DAY;
    cc.server_multiplier = 1;
    cc.busy_fraction = 0.8;
    cc.idle_fraction = 0.2;
    cc.carbon_intensity = 400;
    fs_cost_rate_t r;
    fs_cost_rate_owned(&cc, 10000, 1000, &r);
    fs_usage_cell_t busy = {.owned = 3600, .busy = 3600}, idle = {.owned = 3600, .idle = 3600};
    fs_cost_cell_t c;
    fs_cost_cell(&r, &busy, &c);
    assert_rel(c.carbon_kg, 0.48, "busy GPU-hour, kg");
    assert_rel(c.carbon_kg, c.energy_kwh * 400 / 1000, "= kWh x intensity");
    assert_double_equal(c.carbon_embodied_kg, 0, 0);
    fs_cost_cell(&r, &idle, &c);
    assert_rel(c.carbon_kg, 0.12, "idle GPU-hour, kg");
    r.embodied_per_s = 1000.0 / 8 / (4 * 365 * 86400.0);
    fs_cost_cell(&r, &idle, &c);
    assert_rel(c.carbon_embodied_kg, 1000.0 / 8 / (4 * 8760.0), "embodied per GPU-hour, kg");
    assert_rel(c.carbon_kg, 0.12 + c.carbon_embodied_kg, "operational + embodied");
    /* with a series the weighted integrals replace busy and idle */
    cc.carbon_intensity = 0;
    cc.n_carbon_hours = 2;
    fs_cost_rate_owned(&cc, 10000, 1000, &r);
    fs_usage_cell_t w = {.owned = 7200, .busy = 3600, .idle = 3600, .busy_g = 3600 * 100.0,
                         .idle_g = 3600 * 500.0};
    fs_cost_cell(&r, &w, &c);
    assert_rel(c.carbon_kg, (1.2 * 100 + 0.3 * 500) / 1000, "weighted cell, kg");
    /* a cloud pool: its energy and hardware are in its price */
    fs_cost_rate_cloud(FS_BILL_ON_DEMAND, 4, &r);
    fs_cost_cell(&r, &busy, &c);
    assert_double_equal(c.carbon_kg, 0, 0);
}

/* ---- whole runs --------------------------------------------------------------- */

/* 8 GPUs busy for exactly 2 h at 400 g/kWh: 8 x 2 h x 1.275 kW x 0.75 x
 * 1.3 = 19.89 kWh, x 400 g = 7.956 kg; per delivered GPU-hour 7956 / 16 =
 * 497.25 g. */
static void test_constant(void **state)
{
    fx_t *f = *state;
    char *trace = put(f, "two_hours.csv", "id,submit,gpus,duration\n1,0,8,7200\n");
    char *y = scenario(trace, "carbon_intensity: 400");
    fs_run_report_t rep;
    run_ok(y, NULL, &rep);
    assert_double_equal(rep.summary.end_time, 7200, 0);
    assert_rel(rep.summary.energy_kwh, 19.89, "energy, kWh");
    assert_rel(rep.summary.carbon_kg, 7.956, "8 GPUs x 2 h at 400 g/kWh, kg");
    assert_rel(rep.summary.carbon_per_gpu_hour_g, 497.25, "g per delivered GPU-hour");
    assert_double_equal(rep.carbon_embodied_kg, 0, 0);
    free(y);
    free(trace);
}

/* Job 1: 8 GPUs over [0, 1.5 h); job 2: 4 GPUs over [2 h, 2.5 h).  Series
 * 100, 500 g/kWh, repeated: hour 2 is at 100 again.
 *   hour 0: 8 busy x 3600 s                      at 100
 *   hour 1: 8 busy x 1800 s, 8 idle x 1800 s     at 500
 *   hour 2: 4 busy x 1800 s, 4 idle x 1800 s     at 100 (row 0 again) */
static double two_hour_hand(void)
{
    double busy[3] = {8 * 3600.0, 8 * 1800.0, 4 * 1800.0};
    double idle[3] = {0, 8 * 1800.0, 4 * 1800.0};
    double g[3] = {100, 500, 100}, kg = 0;
    for (int h = 0; h < 3; h++)
        kg += g[h] * (busy[h] * KG_BUSY + idle[h] * KG_IDLE);
    return kg;
}

static void test_series_hourly(void **state)
{
    fx_t *f = *state;
    char *trace = put(f, "jobs.csv", "id,submit,gpus,duration\n1,0,8,5400\n2,7200,4,1800\n");
    char *series = put(f, "ci.csv", "hour_start_s,gco2e_per_kwh\n0,100\n3600,500\n");
    char cost[512];
    snprintf(cost, sizeof cost, "carbon_series: %s", series);
    char *y = scenario(trace, cost);
    fs_run_report_t rep;
    run_ok(y, NULL, &rep);
    assert_double_equal(rep.summary.end_time, 9000, 0);
    double hand = two_hour_hand();
    assert_rel(rep.summary.carbon_kg, hand, "two-hour series, repeated, kg");
    /* the same energy weighted by the mean of the series (what a daily
     * average would do) is 27% off: the test tells them apart */
    double kwh = rep.summary.energy_kwh;
    printf("the daily mean (300 g/kWh) would give %.6f kg (%.1f%% off)\n", kwh * 0.3,
           100 * (kwh * 0.3 / hand - 1));
    assert_true(fabs(kwh * 0.3 / hand - 1) > 0.05);
    assert_rel(rep.summary.carbon_per_gpu_hour_g, hand * 1000 / 14.0, "g per GPU-hour");
    assert_true(rep.summary.jobs_completed > 0);
    assert_rel(rep.summary.carbon_per_job_kg, rep.summary.carbon_kg / (double)rep.summary.jobs_completed,
               "kg per completed job");
    free(y);
    free(series);
    free(trace);
}

/* 8 GPUs busy for 30 h over a 7-hour series 100, 200, ..., 700: hour h at
 * 100 (1 + h mod 7).  /cost day 0 holds hours 0-23, day 1 hours 24-29;
 * embodied 2,000 kg per node over 5 years on 8 GPUs x 30 h. */
static void test_series_days(void **state)
{
    fx_t *f = *state;
    char *trace = put(f, "long.csv", "id,submit,gpus,duration\n1,0,8,108000\n");
    char text[512] = "# a comment, then the header\nhour_start_s,gco2e_per_kwh\n";
    for (int h = 0; h < 7; h++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%d, %d\r\n%s", 3600 * h,
                 100 * (h + 1), h == 3 ? "\n" : "");
    char *series = put(f, "week.csv", text);
    char cost[512];
    snprintf(cost, sizeof cost, "carbon_series: %s, pools: [{pool: a, embodied_kgco2e: 2000}]",
             series);
    char *y = scenario(trace, cost);
    char *out = fs_test_path(f->dir, "run.h5");
    fs_run_report_t rep;
    run_ok(y, out, &rep);
    double day[2] = {0, 0};
    for (int h = 0; h < 30; h++)
        day[h / 24] += 100.0 * (1 + h % 7) * 8 * 3600 * KG_BUSY;
    double emb[2] = {2000.0 / 8 / DEP_S * 8 * 86400, 2000.0 / 8 / DEP_S * 8 * 6 * 3600};
    assert_rel(rep.carbon_embodied_kg, emb[0] + emb[1], "embodied, kg");
    assert_rel(rep.carbon_embodied_kg, 2000 * 30 / (5 * 8760.0), "= 2000 kg x 30 h / 5 y");
    assert_rel(rep.summary.carbon_kg, day[0] + day[1] + emb[0] + emb[1], "30 h on a 7 h series");

    fs_h5file_t *h;
    fs_error_t err;
    assert_int_equal(fs_h5read_open(out, &h, &err), 0);
    size_t n = 0;
    assert_int_equal(fs_h5read_rows(h, "cost", &n, &err), 0);
    assert_int_equal(n, 2);
    double kg[2], ekg[2], d[2];
    assert_int_equal(fs_h5read_f64(h, "cost", "day", d, &err), 0);
    assert_int_equal(fs_h5read_f64(h, "cost", "carbon_kg", kg, &err), 0);
    assert_int_equal(fs_h5read_f64(h, "cost", "carbon_embodied_kg", ekg, &err), 0);
    for (int i = 0; i < 2; i++) {
        assert_double_equal(d[i], i, 0);
        assert_rel(kg[i], day[i] + emb[i], i ? "/cost day 1" : "/cost day 0");
        assert_rel(ekg[i], emb[i], "/cost carbon_embodied_kg");
    }
    double pk, tk, sk;
    assert_int_equal(fs_h5read_f64(h, "cost_pools", "carbon_kg", &pk, &err), 0);
    assert_int_equal(fs_h5read_f64(h, "cost_tenants", "carbon_kg", &tk, &err), 0);
    assert_int_equal(fs_h5read_f64(h, "summary", "carbon_kg", &sk, &err), 0);
    assert_rel(pk, rep.summary.carbon_kg, "/cost_pools carbon_kg");
    assert_rel(tk, rep.summary.carbon_kg, "/cost_tenants carbon_kg (one tenant)");
    assert_double_equal(sk, rep.summary.carbon_kg, 0);
    fs_h5read_close(h);
    free(out);
    free(y);
    free(series);
    free(trace);
}

/* No carbon key: carbon is 0, the cost the same as with carbon, and the
 * `carbon` line is printed only when carbon is modelled. */
static void test_not_modelled(void **state)
{
    fx_t *f = *state;
    char *trace = put(f, "two_hours.csv", "id,submit,gpus,duration\n1,0,8,7200\n");
    char *y0 = scenario(trace, "pue: 1.3");
    char *y1 = scenario(trace, "pue: 1.3, carbon_intensity: 400");
    fs_run_report_t r0, r1;
    fs_config_t c0, c1;
    fs_error_t err;
    assert_int_equal(run(y0, NULL, &r0, &c0, &err), 0);
    assert_int_equal(run(y1, NULL, &r1, &c1, &err), 0);
    assert_double_equal(r0.summary.carbon_kg, 0, 0);
    assert_double_equal(r0.summary.carbon_per_gpu_hour_g, 0, 0);
    assert_double_equal(r0.summary.cost_total, r1.summary.cost_total, 0);
    assert_double_equal(r0.summary.energy_kwh, r1.summary.energy_kwh, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    fs_run_print_summary(m, &c0, &r0, NULL);
    fclose(m);
    assert_null(strstr(text, "\ncarbon "));
    free(text);
    m = open_memstream(&text, &len);
    fs_run_print_summary(m, &c1, &r1, NULL);
    fclose(m);
    printf("%s", text);
    assert_non_null(strstr(text, "\ncarbon       0.008 t CO2e (whole run): 497.2 g per delivered "
                                 "GPU-hour; embodied 0.000 t; grid 400 g/kWh\n"));
    free(text);
    fs_config_release(&c0);
    fs_config_release(&c1);
    free(y0);
    free(y1);
    free(trace);
}

/* ---- bad input ---------------------------------------------------------------- */

/* fs_carbon_load on text: FS_EINVAL and "FILE:want" at the start of the
 * message (want = "LINE:COL: ..."), and the same through the scenario. */
static void bad(const fx_t *f, const char *text, const char *want)
{
    char *p = put(f, "bad.csv", text);
    double *g = (double *)1;
    size_t n = 7;
    fs_error_t err;
    assert_int_equal(fs_carbon_load(p, &g, &n, &err), FS_EINVAL);
    assert_null(g);
    assert_int_equal(n, 0);
    char head[1024];
    snprintf(head, sizeof head, "%s:%s", p, want);
    printf("%s\n", err.msg);
    if (strncmp(err.msg, head, strlen(head)) != 0)
        fail_msg("expected '%s...', got '%s'", head, err.msg);
    /* through the scenario loader: the same place, exit status 2 */
    char cost[1200];
    snprintf(cost, sizeof cost, "carbon_series: %s", p);
    char *y = scenario("/nonexistent-trace.csv", cost);
    fs_config_t cfg;
    assert_int_equal(fs_scenario_load_string("s.yaml", y, NULL, 0, &cfg, &err), FS_EINVAL);
    assert_int_equal(fs_error_exit_status(FS_EINVAL), 2);
    if (strncmp(err.msg, head, strlen(head)) != 0 || !strstr(err.msg, "(cost.carbon_series)"))
        fail_msg("scenario: expected '%s... (cost.carbon_series)', got '%s'", head, err.msg);
    free(y);
    free(p);
}

static void test_bad_series(void **state)
{
    fx_t *f = *state;
    bad(f, "", "1:1: empty file (expected the header hour_start_s,gco2e_per_kwh)");
    bad(f, "# only a comment\n", "2:1: empty file");
    bad(f, "hour,g\n0,1\n", "1:1: expected the header hour_start_s,gco2e_per_kwh (got 'hour,g')");
    bad(f, "hour_start_s,g\n0,1\n", "1:14: expected the header");
    bad(f, "hour_start_s\n0\n", "1:13: expected the header");
    bad(f, "hour_start_s,gco2e_per_kwh,zone\n", "1:27: expected the header");
    bad(f, "hour_start_s,gco2e_per_kwh\n", "2:1: expected a row after the header");
    bad(f, "hour_start_s,gco2e_per_kwh\n3600,5\n",
        "2:1: field hour_start_s: expected 0 (row 1 starts hour 0 of the run");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,5\n7200,5\n",
        "3:1: field hour_start_s: expected 3600 (row 2 starts hour 1");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,5\n  3600.5,5\n", "3:3: field hour_start_s: expected 3600");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,5\n2023-01-01T01:00Z,5\n", "3:1: field hour_start_s");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,-4\n",
        "2:3: field gco2e_per_kwh: expected g CO2e per kWh, a number >= 0, got '-4'");
    bad(f, "hour_start_s,gco2e_per_kwh\n0, abc\n", "2:4: field gco2e_per_kwh: expected");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,nan\n", "2:3: field gco2e_per_kwh");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,1e999\n", "2:3: field gco2e_per_kwh");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,\n", "2:3: field gco2e_per_kwh");
    bad(f, "hour_start_s,gco2e_per_kwh\n0\n", "2:2: expected 2 fields (hour_start_s,gco2e_per_kwh), got 1");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,1,2\n", "2:4: expected 2 fields");
    /* good: comments, blank lines, CRLF, exponents */
    char *p = put(f, "good.csv", "# DE 2023\r\nhour_start_s,gco2e_per_kwh\r\n\r\n0,4.5e2\r\n3600,0\r\n");
    double *g = NULL;
    size_t n = 0;
    fs_error_t err;
    assert_int_equal(fs_carbon_load(p, &g, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_double_equal(g[0], 450, 0);
    assert_double_equal(g[1], 0, 0);
    fs_free(g);
    free(p);
}

/* Scenario-level rules: one source of intensity; a file that cannot be
 * opened is blamed on the key; embodied carbon only on owned pools. */
static void test_bad_scenario(void **state)
{
    fx_t *f = *state;
    char *series = put(f, "ok.csv", "hour_start_s,gco2e_per_kwh\n0,5\n");
    const char *pools = "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1.0},\n"
                        "  duration: {dist: constant, value: 1h}}}\n"
                        "cluster: {pools: [{name: a, gpu: H100, nodes: 1, gpus_per_node: 8},\n"
                        "  {name: c, gpu: H100, nodes: 1, gpus_per_node: 8}]}\n";
    char y[2048];
    fs_config_t cfg;
    fs_error_t err;
    snprintf(y, sizeof y, "name: x\n%scost: {carbon_intensity: 300,\n  carbon_series: %s}\n",
             pools, series);
    assert_int_equal(fs_scenario_load_string("s.yaml", y, NULL, 0, &cfg, &err), FS_EINVAL);
    printf("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "s.yaml:7:18: cost.carbon_series: give carbon_intensity or "
                                    "carbon_series, not both"));
    snprintf(y, sizeof y, "name: x\n%scost: {carbon_series: %s/none.csv}\n", pools, f->dir);
    assert_int_equal(fs_scenario_load_string("s.yaml", y, NULL, 0, &cfg, &err), FS_EINVAL);
    printf("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "s.yaml:6:23: cost.carbon_series: "));
    assert_non_null(strstr(err.msg, "none.csv"));
    snprintf(y, sizeof y, "name: x\n%scost: {pools: [{pool: c, billing: on_demand,\n"
             "  embodied_kgco2e: 100}]}\n", pools);
    assert_int_equal(fs_scenario_load_string("s.yaml", y, NULL, 0, &cfg, &err), FS_EINVAL);
    printf("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "s.yaml:7:20: cost.pools.0.embodied_kgco2e: pool 'c' is not "
                                    "owned"));
    /* a good one loads the series into the config, and --set reaches the keys */
    const char *set[] = {"cost.carbon_intensity=0"};
    snprintf(y, sizeof y, "name: x\n%scost: {carbon_series: %s}\n", pools, series);
    assert_int_equal(fs_scenario_load_string("s.yaml", y, set, 1, &cfg, &err), 0);
    assert_int_equal(cfg.cost.n_carbon_hours, 1);
    assert_double_equal(cfg.cost.carbon_hourly[0], 5, 0);
    assert_true(fs_cost_carbon_modelled(&cfg.cost));
    fs_config_release(&cfg);
    free(series);
}

/* Fault injection: the Nth allocation of a load fails for every N until
 * one succeeds; each failure is FS_ENOMEM with nothing left allocated. */
static void test_alloc_failures(void **state)
{
    fx_t *f = *state;
    char text[4096] = "hour_start_s,gco2e_per_kwh\n";
    for (int h = 0; h < 100; h++)   /* enough rows to grow the array several times */
        snprintf(text + strlen(text), sizeof text - strlen(text), "%d,%d\n", 3600 * h, h);
    char *p = put(f, "many.csv", text);
    int ok = 0;
    for (uint64_t nth = 1; nth < 1000 && !ok; nth++) {
        double *g = NULL;
        size_t n = 0;
        fs_error_t err;
        int64_t live = fs_alloc_live();
        fs_alloc_fail_after(nth);
        int rc = fs_carbon_load(p, &g, &n, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            assert_int_equal(n, 100);
            assert_true(g[99] == 99);
            fs_free(g);
        } else {
            assert_int_equal(rc, FS_ENOMEM);
            assert_null(g);
        }
        assert_int_equal(fs_alloc_live(), live);
    }
    assert_true(ok);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cell),
        cmocka_unit_test_setup_teardown(test_constant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series_hourly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series_days, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_modelled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_series, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_scenario, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
