/*
 * Limits: absurd sizes are refused with a message naming the key (or the
 * trace row and field) and the limit, or handled, never undefined behaviour
 * (this test is meant for the UBSan build, where any overflow aborts).
 * Through the scenario language: billions of GPUs, 10^9 pools, huge
 * gpus_per_node, horizons of centuries, 2^63 and 2^64 values, arrival rates
 * beyond the clock's resolution.  Through the native reader: 2^31+1 GPUs,
 * times beyond 1000 years, 2^64 ids, 2^31 priorities, 1e400, a time_scale
 * that overflows.  And runs at the accepted extremes (1000-year horizon,
 * 2^64-1 seed, a job of 2^31 GPUs, a job submitted at 999 years running
 * 1000 years) finish with exact counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"
#include "traces/fs_native.h"
#include "fs_test_util.h"

static const char base[] =
    "name: lim\n"
    "horizon: 1d\n"
    "cluster:\n"
    "  pools:\n"
    "    - {name: a, gpu: H100, nodes: 2, gpus_per_node: 8}\n"
    "workload:\n"
    "  synthetic:\n"
    "    arrivals: {rate: 1/h}\n"
    "    gpus: {1: 1}\n"
    "    duration: {dist: constant, value: 1h}\n";

/* Loads base with one override; expects FS_EINVAL and every needle in the
 * message. */
static void refused(const char *set, const char *n1, const char *n2)
{
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_error_t err;
    const char *sets[] = {set};
    int rc = fs_scenario_load_string("<lim>", base, sets, 1, &cfg, &err);
    if (rc != FS_EINVAL)
        fail_msg("--set %s: status %s (%s), expected FS_EINVAL", set, fs_error_name(rc),
                 rc ? err.msg : "accepted");
    if (!strstr(err.msg, n1) || (n2 && !strstr(err.msg, n2)))
        fail_msg("--set %s: message '%s' lacks '%s' / '%s'", set, err.msg, n1, n2 ? n2 : "");
    assert_int_equal(fs_error_exit_status(rc), 2);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_scenario_refuses(void **state)
{
    (void)state;
    refused("cluster.pools.0.nodes=10000001", "--set cluster.pools.0.nodes", "1 to 10000000");
    refused("cluster.pools.0.nodes=4294967297", "out of range", "1 to 10000000");
    refused("cluster.pools.0.gpus_per_node=1025", "out of range", "1 to 1024");
    refused("cluster.pools.0.gpus_per_node=9223372036854775808", "out of range", "1 to 1024");
    refused("cluster.pools.0.gpus_per_node=-1", "gpus_per_node", NULL);
    refused("cluster.pools.0={name: a, gpu: H100, nodes: 10000000, gpus_per_node: 1024}",
            "10240000000 GPUs", "2^31");
    refused("cluster.pools.1000000000.nodes=1", "cluster.pools", NULL);
    refused("horizon=1001y", "beyond the limit of 1000 years", NULL);
    refused("horizon=1e300s", "beyond the limit of 1000 years", NULL);
    refused("horizon=9223372036854775807us", "beyond the limit of 1000 years", NULL);
    refused("horizon=9223372036854775808", "horizon", NULL);
    refused("warmup=1000y", "not shorter than the horizon", NULL);
    refused("seed=18446744073709551616", "out of range", NULL);
    refused("seed=-1", "seed", NULL);
    refused("workload.synthetic.max_jobs=18446744073709551616", "out of range", NULL);
    refused("workload.synthetic.gpus={2147483649: 1}", "2147483648", NULL);
    refused("workload.synthetic.gpus={2147483648: 1}", "larger than any pool", NULL);
    refused("workload.synthetic.arrivals.rate=1e300/s", "out of range", "1e+06/s");
    refused("workload.synthetic.arrivals.rate=2000000/s", "out of range", NULL);
    refused("workload.synthetic.duration={dist: constant, value: 1001y}", "1000 years", NULL);
    refused("output.timeline_interval=1e400s", "timeline_interval", NULL);
}

/* Runs text; returns the report. */
static fs_run_report_t run(const char *text, const char *const *sets, size_t n)
{
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_error_t err;
    int rc = fs_scenario_load_string("<lim>", text, sets, n, &cfg, &err);
    if (rc)
        fail_msg("%s", err.msg);
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    fs_run_report_t rep;
    rc = fs_run_config(&cfg, &opts, &rep, &err);
    if (rc)
        fail_msg("%s", err.msg);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
    return rep;
}

static void test_scenario_extremes_run(void **state)
{
    (void)state;
    /* 1000 years of arrivals (capped at 40 jobs), the largest seed */
    const char *sets[] = {"horizon=1000y", "seed=18446744073709551615",
                          "workload.synthetic.max_jobs=40", "output.timeline_interval=0s",
                          "workload.synthetic.arrivals.rate=1/y"};
    fs_run_report_t rep = run(base, sets, 5);
    assert_int_equal(rep.summary.jobs_submitted, 40);
    assert_int_equal(rep.summary.jobs_completed, 40);
    /* the largest fleet: 10^7 nodes of 8 GPUs (8e7 GPUs), a few jobs */
    const char *big[] = {"cluster.pools.0.nodes=10000000", "horizon=3h",
                         "output.timeline_interval=0s"};
    rep = run(base, big, 3);
    assert_int_equal(rep.totals.gpus_total, 80000000);
    assert_int_equal(rep.summary.jobs_submitted, rep.summary.jobs_completed);
}

/* ---- the native reader ---------------------------------------------------- */

static int read_trace(const char *path, double time_scale, size_t *n, fs_error_t *err)
{
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.time_scale = time_scale;
    fs_source_t *src;
    *n = 0;
    int rc = fs_native_open(path, &o, &src, err);
    if (rc)
        return rc;
    fs_job_t buf[16];
    for (;;) {
        size_t k = 0;
        if ((rc = fs_source_next(src, buf, 16, &k, err)) || k == 0)
            break;
        *n += k;
    }
    fs_source_destroy(src);
    return rc;
}

static void row_refused(const char *dir, const char *header, const char *row, double scale,
                        const char *field, const char *expect)
{
    int64_t live0 = fs_alloc_live();
    char *path = fs_test_path(dir, "t.csv");
    char text[512];
    snprintf(text, sizeof text, "%s\n%s\n", header, row);
    assert_int_equal(fs_test_write(path, text), 0);
    fs_error_t err;
    size_t n;
    int rc = read_trace(path, scale, &n, &err);
    if (rc != FS_EINVAL)
        fail_msg("row '%s': status %s, expected FS_EINVAL", row, fs_error_name(rc));
    char where[600];
    snprintf(where, sizeof where, "%s:2: field %s: expected %s", path, field, expect);
    if (!strstr(err.msg, where))
        fail_msg("row '%s': message '%s' lacks '%s'", row, err.msg, where);
    assert_int_equal(fs_alloc_live(), live0);
    free(path);
}

static void test_native_refuses(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    const char *h = "id,submit,gpus,duration";
    row_refused(dir, h, "1,0,2147483649,1", 1, "gpus", "an integer in 1..2147483648");
    row_refused(dir, h, "1,0,18446744073709551616,1", 1, "gpus", "an integer in 1..2147483648");
    row_refused(dir, h, "18446744073709551616,0,1,1", 1, "id", "an unsigned integer id");
    row_refused(dir, h, "1,31557600000.000001,1,1", 1, "submit",
                "a time in seconds <= 31557600000");
    row_refused(dir, h, "1,1e400,1,1", 1, "submit", "a time in seconds <= 31557600000");
    row_refused(dir, h, "1,9223372036854775807,1,1", 1, "submit",
                "a time in seconds <= 31557600000");
    row_refused(dir, h, "1,0,1,1e400", 1, "duration", "a duration in seconds <= 31557600000");
    row_refused(dir, h, "1,0,1,-9223372036854775808", 1, "duration",
                "a duration in seconds > 0");
    row_refused(dir, h, "1,0,1,1000", 1e300, "duration",
                "a duration that stays <= 31557600000 s after time_scale");
    row_refused(dir, "id,submit,gpus,duration,priority", "1,0,1,1,2147483648", 1, "priority",
                "an integer in -2147483648..2147483647");
    row_refused(dir, "id,submit,gpus,duration,gpu_milli", "1,0,1,1,4294967297", 1, "gpu_milli",
                "an integer in 1..1000");
    fs_test_rmtree(dir);
    free(dir);
}

static void test_native_extremes_run(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    char *trace = fs_test_path(dir, "t.csv");
    /* a job of 2^31 GPUs (rejected: larger than the fleet), a job at 999
     * years running 1000 years, the largest id */
    assert_int_equal(fs_test_write(trace, "id,submit,gpus,duration\n"
                                          "1,0,2147483648,1\n"
                                          "18446744073709551615,31525043600,16,31557600000\n"),
                     0);
    char text[1024];
    snprintf(text, sizeof text,
             "name: lim\nhorizon: 1000y\ndrain_limit: 0s\ncluster:\n  pools:\n    - {name: a, gpu: H100, "
             "nodes: 2, gpus_per_node: 8}\nworkload:\n  trace: {path: %s}\n"
             "output: {timeline_interval: 0s}\n", trace);
    fs_run_report_t rep = run(text, NULL, 0);
    assert_int_equal(rep.summary.jobs_submitted, 2);
    assert_int_equal(rep.summary.jobs_rejected, 1);
    assert_int_equal(rep.summary.jobs_completed, 1);
    assert_double_equal(rep.summary.makespan, 31525043600.0 + 31557600000.0, 1e-3);
    fs_test_rmtree(dir);
    free(dir);
    free(trace);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario_refuses),
        cmocka_unit_test(test_scenario_extremes_run),
        cmocka_unit_test(test_native_refuses),
        cmocka_unit_test(test_native_extremes_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
