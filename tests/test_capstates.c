/*
 * Capacity states (#15; models/fs_model.c, docs/results.md) on hand cases:
 * every GPU-second of a run is busy, down, waiting (free and up while jobs
 * wait) or idle (free and up, nothing waiting), and the states sum to the
 * fleet's GPUs x time.  The sum itself is checked on every run through the
 * test helpers (fs_test_check_capstates, fs_test_check_capstate_row); here
 * each state's value is known by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/fs_model.h"
#include "../sim/fs_alloc.h"
#include "fs_test_util.h"

#define ONE_NODE "name: s\ncluster:\n  pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]\n" \
                 "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "                    \
                 "duration: {dist: constant, value: 1h}}}\nscheduler: {placement: first_fit}\n"     \
                 "output: {timeline_interval: 10m}\n"

/* jobs: {submit s, gpus, duration s}; samples collected into *smp */
static void run(const double (*jobs)[3], size_t n, fs_run_totals_t *t, fs_test_samples_t *smp)
{
    fs_job_t js[8];
    memset(js, 0, sizeof js);
    for (size_t i = 0; i < n; i++)
        js[i] = (fs_job_t){.id = i + 1, .submit = (fs_time_t)(jobs[i][0] * 1e6),
                           .gpus = (uint32_t)jobs[i][1], .gpu_milli = 1000,
                           .duration = (fs_time_t)(jobs[i][2] * 1e6), .tenant = -1,
                           .gpu_type = -1};
    smp->n = 0;
    fs_sink_t sink = {.sample = fs_test_collect_sample, .ud = smp};
    fs_test_run_yaml(ONE_NODE, js, n, &sink, t);
}

static double col_sum(const fs_test_samples_t *s, size_t off)
{
    double x = 0;
    for (size_t i = 0; i < s->n; i++)
        x += *(const double *)((const char *)&s->r[i] + off);
    return x;
}

/* One 8-GPU node, one 4-GPU job of 1 h: 4 GPU-h busy, 4 GPU-h idle. */
static void test_half_node(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_run_totals_t t;
    fs_test_samples_t smp = {0};
    const double jobs[][3] = {{0, 4, 3600}};
    run(jobs, 1, &t, &smp);
    assert_double_equal(t.gpu_s_total, 8 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_busy, 4 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_idle, 4 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_waiting, 0, 0);
    assert_double_equal(t.gpu_s_down, 0, 0);
    /* the timeline's rows add up to the same totals */
    assert_true(smp.n >= 6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_busy)), t.gpu_s_busy, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_idle)), t.gpu_s_idle, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_allocated)), t.gpu_s_allocated, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_share_idle)), t.gpu_s_share_idle, 1e-6);
    free(smp.r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A 6-GPU job runs 1 h; a 4-GPU job submitted with it cannot fit beside it
 * (2 GPUs free) and waits that hour: 2 GPU-h waiting, then 4 GPU-h busy
 * and 4 idle in the second hour. */
static void test_waiting(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_run_totals_t t;
    fs_test_samples_t smp = {0};
    const double jobs[][3] = {{0, 6, 3600}, {0, 4, 3600}};
    run(jobs, 2, &t, &smp);
    assert_double_equal(t.gpu_s_total, 8 * 7200.0, 1e-9);
    assert_double_equal(t.gpu_s_busy, 6 * 3600.0 + 4 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_waiting, 2 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_idle, 4 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_down, 0, 0);
    /* the first hour's rows: 2 GPUs waiting each; the second's: none */
    for (size_t i = 1; i < smp.n; i++) {
        double len = smp.r[i].time - smp.r[i - 1].time;
        if (smp.r[i].time <= 3600)
            assert_double_equal(smp.r[i].gpu_s_waiting, 2 * len, 1e-9);
        else if (smp.r[i - 1].time >= 3600)
            assert_double_equal(smp.r[i].gpu_s_waiting, 0, 0);
    }
    free(smp.r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The held split of busy (#15): a half-GPU pod and a 4-GPU job for 1 h on
 * the 8-GPU node: 5 GPUs busy, 4.5 allocated (the shared GPU's other half
 * is an unallocated share), all of it computing. */
static void test_held_split_share(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t js[2];
    memset(js, 0, sizeof js);
    js[0] = (fs_job_t){.id = 1, .gpus = 1, .gpu_milli = 500, .duration = 3600000000,
                       .tenant = -1, .gpu_type = -1};
    js[1] = (fs_job_t){.id = 2, .gpus = 4, .gpu_milli = 1000, .duration = 3600000000,
                       .tenant = -1, .gpu_type = -1};
    fs_run_totals_t t;
    fs_test_run_yaml(ONE_NODE, js, 2, NULL, &t);
    assert_double_equal(t.gpu_s_busy, 5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_allocated, 4.5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_share_idle, 0.5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_held, 4.5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_computing, 4.5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_serving, 0, 1e-9);
    assert_double_equal(t.gpu_s_recovering, 0, 1e-9);
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_node),
        cmocka_unit_test(test_waiting),
        cmocka_unit_test(test_held_split_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
