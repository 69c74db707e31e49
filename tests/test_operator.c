/*
 * The operator's figures of /summary (docs/results.md, docs/validation.md
 * "Operator figures"):
 *  - ckpt_interval_mean / _min: the checkpoint interval Daly's rule chose,
 *    against Daly (2006)'s higher-order formula written out here, for jobs
 *    on one node and on two (M = node MTTF / nodes), and NaN without
 *    checkpoints;
 *  - serving_replicas_peak, serving_gpus_peak, serving_gpus_daily_peak and
 *    serving_gpus_daily_swing (analysis/fs_operator.c) on hand-made
 *    /service_buckets rows: two services summed per bucket, the warm-up and
 *    the run's cut last bucket left out, the daily curve by hour of the
 *    day, NaN when the bucket does not divide a day;
 *  - the runner fills them: a service run's figures equal the sums of its
 *    own /service_buckets rows.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/fs_operator.h"
#include "analysis/fs_summary.h"
#include "fs_test_util.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "sim/api/fs_runner.h"

/* Daly (2006), "A higher order estimate of the optimum checkpoint interval
 * for restart dumps", eq. 37: for delta < 2M,
 * tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / (2M)) + (1/9) (delta / (2M))] - delta. */
static double daly(double delta, double m)
{
    double x = delta / (2 * m);
    return sqrt(2 * delta * m) * (1 + sqrt(x) / 3 + x / 9) - delta;
}

static fs_summary_t run_text(const char *yaml)
{
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_string("op.yaml", yaml, NULL, 0, &cfg, &err) != 0)
        fail_msg("%s", err.msg);
    fs_run_opts_t o;
    fs_run_opts_init(&o);
    fs_run_report_t rep;
    if (fs_run_config(&cfg, &o, &rep, &err) != 0)
        fail_msg("%s", err.msg);
    fs_config_release(&cfg);
    return rep.summary;
}

#define DALY_YAML(GPUS, CKPT)                                                     \
    "name: op\nseed: 5\nhorizon: 3d\nuntil: horizon\n"                             \
    "cluster: {pools: [{name: main, gpu: H100, nodes: 8, gpus_per_node: 8}]}\n"    \
    "workload:\n  synthetic:\n    arrivals: {process: poisson, rate: 2/h}\n"       \
    "    gpus: {" GPUS "}\n"                                                    \
    "    duration: {dist: exponential, mean: 6h}\n"                                \
    "scheduler: {queue: fifo}\n"                                                   \
    "failures: {components: [{kind: node, tbf: {dist: exponential, mean: 5d}}]}\n" \
    "recovery: {checkpoint: " CKPT ", write_cost: 2m, restore: 5m}\n"              \
    "output: {timeline_interval: 0s}\n"

static void test_daly_interval(void **state)
{
    (void)state;
    double delta = 120, m = 5 * 86400.0;
    /* one node (8 GPUs): M = 5 d; every attempt gets the same interval */
    fs_summary_t s = run_text(DALY_YAML("8: 1", "daly"));
    assert_true(s.ckpt_interval_mean > 0);
    assert_double_equal(s.ckpt_interval_mean, daly(delta, m), 1e-6);
    assert_double_equal(s.ckpt_interval_min, daly(delta, m), 1e-6);
    /* by hand: sqrt(2 x 120 x 432,000) = 10,182.34 s; x (1 + 0.0117851 / 3 + 0.000138889 / 9)
     * = 10,222.49 s; - 120 s = 10,102.49 s (2 h 48 min) */
    assert_true(fabs(s.ckpt_interval_mean - 10102.49) < 0.01);
    /* two nodes (16 GPUs): M = 2.5 d */
    s = run_text(DALY_YAML("16: 1", "daly"));
    assert_double_equal(s.ckpt_interval_mean, daly(delta, m / 2), 1e-6);
    assert_true(fabs(s.ckpt_interval_mean - 7120.22) < 0.01);   /* docs/validation.md */
    /* a mix: the least is the two-node jobs', the mean between */
    s = run_text(DALY_YAML("8: 0.5, 16: 0.5", "daly"));
    assert_double_equal(s.ckpt_interval_min, daly(delta, m / 2), 1e-6);
    assert_true(s.ckpt_interval_mean > daly(delta, m / 2) && s.ckpt_interval_mean < daly(delta, m));
    /* Young (1974): sqrt(2 delta M) */
    s = run_text(DALY_YAML("8: 1", "young"));
    assert_double_equal(s.ckpt_interval_mean, sqrt(2 * delta * m), 1e-6);
    /* no checkpoints: NaN, not 0 */
    s = run_text(DALY_YAML("8: 1", "none"));
    assert_true(isnan(s.ckpt_interval_mean) && isnan(s.ckpt_interval_min));
}

static fs_svc_bucket_row_t bucket(uint32_t svc, double start, double end, double reps, double gpus)
{
    fs_svc_bucket_row_t r;
    memset(&r, 0, sizeof r);
    r.service = svc;
    r.start = start;
    r.end = end;
    r.replicas = reps;
    r.gpus = gpus;
    return r;
}

/* Two days of hourly buckets after a 1 h warm-up, two services: service 0
 * holds 2 GPUs per replica, h + 1 replicas at hour h of the day (day 2: one
 * more); service 1 holds 3 GPUs all the time on 1 replica.  The run ends
 * 30 min into day 3 (a cut bucket of 100 replicas that must not count). */
static void test_operator_hand(void **state)
{
    (void)state;
    fs_operator_t *o = NULL;
    assert_int_equal(fs_operator_create(3600, 3600, &o), 0);
    for (int d = 0; d < 2; d++)
        for (int h = 0; h < 24; h++) {
            double t = (d * 24 + h) * 3600.0, reps = h + 1 + d;
            fs_svc_bucket_row_t a = bucket(0, t, t + 3600, reps, 2 * reps);
            fs_svc_bucket_row_t b = bucket(1, t, t + 3600, 1, 3);
            assert_int_equal(fs_operator_add_bucket(o, &b), 0);
            assert_int_equal(fs_operator_add_bucket(o, &a), 0);
        }
    fs_svc_bucket_row_t cut = bucket(0, 48 * 3600.0, 48.5 * 3600, 100, 200);
    assert_int_equal(fs_operator_add_bucket(o, &cut), 0);
    fs_summary_t s;
    memset(&s, 0, sizeof s);
    fs_operator_finish(o, &s);
    /* busiest bucket: day 2, hour 23: 25 replicas of service 0 + 1 */
    assert_double_equal(s.serving_replicas_peak, 26, 1e-12);
    assert_double_equal(s.serving_gpus_peak, 2 * 25 + 3, 1e-12);
    /* daily curve: hour h averages 2 (h + 1.5) + 3 over the days (hour 0 only
     * day 2's: 2 x 2 + 3, the warm-up's bucket left out); peak at hour 23 = 52,
     * quietest hour 0 = 7 */
    assert_double_equal(s.serving_gpus_daily_peak, 52, 1e-12);
    assert_double_equal(s.serving_gpus_daily_swing, 52 - 7, 1e-12);
    fs_operator_destroy(o);
    /* a 7 h bucket does not divide a day: no daily curve */
    assert_int_equal(fs_operator_create(7 * 3600, 0, &o), 0);
    fs_svc_bucket_row_t r = bucket(0, 0, 7 * 3600, 4, 8);
    assert_int_equal(fs_operator_add_bucket(o, &r), 0);
    fs_operator_finish(o, &s);
    assert_double_equal(s.serving_gpus_peak, 8, 1e-12);
    assert_true(isnan(s.serving_gpus_daily_peak) && isnan(s.serving_gpus_daily_swing));
    fs_operator_destroy(o);
    /* no services: NaN */
    fs_operator_finish(NULL, &s);
    assert_true(isnan(s.serving_replicas_peak) && isnan(s.serving_gpus_peak));
    assert_int_equal(fs_operator_create(0, 0, &o), FS_EINVAL);
}

/* The runner fills the figures for a service run. */

static void test_operator_run(void **state)
{
    (void)state;
    char yaml[512];
    snprintf(yaml, sizeof yaml, "%s/summary/services.yaml", FS_TEST_DATA);
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_file(yaml, NULL, 0, &cfg, &err) != 0)
        fail_msg("%s", err.msg);
    fs_run_opts_t o;
    fs_run_opts_init(&o);
    fs_run_report_t rep;
    if (fs_run_config(&cfg, &o, &rep, &err) != 0)
        fail_msg("%s", err.msg);
    fs_config_release(&cfg);
    const fs_summary_t *s = &rep.summary;
    assert_true(s->serving_gpus_peak > 0 && s->serving_replicas_peak >= 4);
    /* one service, 12 h of hourly buckets from 0: the daily curve is the
     * buckets themselves, so its peak is the busiest bucket */
    assert_double_equal(s->serving_gpus_daily_peak, s->serving_gpus_peak, 1e-9);
    assert_true(s->serving_gpus_daily_swing > 0 &&
                s->serving_gpus_daily_swing < s->serving_gpus_daily_peak);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daly_interval),
        cmocka_unit_test(test_operator_hand),
        cmocka_unit_test(test_operator_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
