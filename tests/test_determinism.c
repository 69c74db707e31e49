/*
 * Determinism and common random numbers: the same scenario and seed give
 * identical job rows; another seed gives different ones; the arrival
 * sequence (ids, submit times, sizes) is the same under strict and
 * best-effort FIFO and under another placement, because each model draws
 * from its own keyed stream; two runs interleaved in one process do not
 * disturb each other.
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
#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"

typedef struct rowvec {
    fs_job_row_t *r;
    size_t n, cap;
} rowvec_t;

static int keep(void *ud, const fs_job_row_t *row)
{
    rowvec_t *v = ud;
    if (fs_grow((void **)&v->r, &v->cap, v->n + 1, sizeof *v->r))
        return FS_ENOMEM;
    v->r[v->n++] = *row;
    return 0;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const fs_job_row_t *)a)->id, y = ((const fs_job_row_t *)b)->id;
    return x < y ? -1 : x > y;
}

static void run_default(const char *const *sets, size_t n, rowvec_t *v, fs_summary_t *sum)
{
    fs_config_t cfg;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_string("<builtin>", fs_scenario_default_text(), sets, n,
                                             &cfg, &err), 0);
    fs_run_opts_t o;
    fs_run_opts_init(&o);
    o.on_job = keep;
    o.on_job_ud = v;
    fs_run_report_t rep;
    v->n = 0;
    assert_int_equal(fs_run_config(&cfg, &o, &rep, &err), 0);
    *sum = rep.summary;
    qsort(v->r, v->n, sizeof *v->r, by_id);
    fs_config_release(&cfg);
}

static void test_same_seed_identical(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    const char *sets[] = {"horizon=2d"};
    rowvec_t a = {0}, b = {0};
    fs_summary_t sa, sb;
    run_default(sets, 1, &a, &sa);
    run_default(sets, 1, &b, &sb);
    assert_true(a.n > 1000);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.r, b.r, a.n * sizeof *a.r);
    assert_memory_equal(&sa, &sb, sizeof sa);
    fs_free(a.r);
    fs_free(b.r);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_other_seed_differs(void **s)
{
    (void)s;
    const char *s1[] = {"horizon=2d", "seed=1"};
    const char *s2[] = {"horizon=2d", "seed=2"};
    rowvec_t a = {0}, b = {0};
    fs_summary_t sa, sb;
    run_default(s1, 2, &a, &sa);
    run_default(s2, 2, &b, &sb);
    size_t same = 0, n = a.n < b.n ? a.n : b.n;
    for (size_t i = 0; i < n; i++)
        same += a.r[i].submit == b.r[i].submit;
    assert_true(same < n / 100);
    fs_free(a.r);
    fs_free(b.r);
}

/* Common random numbers: the policy changes, the workload does not. */
static void test_arrivals_independent_of_policy(void **s)
{
    (void)s;
    const char *strict[] = {"horizon=2d", "scheduler.mode=strict"};
    const char *best[] = {"horizon=2d", "scheduler.mode=best_effort"};
    const char *ff[] = {"horizon=2d", "scheduler.placement=first_fit"};
    rowvec_t a = {0}, b = {0}, c = {0};
    fs_summary_t sa, sb, sc;
    run_default(strict, 2, &a, &sa);
    run_default(best, 2, &b, &sb);
    run_default(ff, 2, &c, &sc);
    assert_int_equal(a.n, b.n);
    assert_int_equal(a.n, c.n);
    int waits_differ = 0;
    for (size_t i = 0; i < a.n; i++) {
        assert_int_equal(a.r[i].id, b.r[i].id);
        assert_double_equal(a.r[i].submit, b.r[i].submit, 0);
        assert_int_equal(a.r[i].gpus, b.r[i].gpus);
        assert_double_equal(a.r[i].submit, c.r[i].submit, 0);
        assert_int_equal(a.r[i].gpus, c.r[i].gpus);
        waits_differ |= a.r[i].wait != b.r[i].wait;
    }
    /* and the policies really did something different */
    assert_true(waits_differ);
    assert_true(sb.wait_mean < sa.wait_mean);
    fs_free(a.r);
    fs_free(b.r);
    fs_free(c.r);
}

/* Changing the duration model leaves arrival times and sizes alone. */
static void test_arrivals_independent_of_durations(void **s)
{
    (void)s;
    const char *x[] = {"horizon=2d"};
    const char *y[] = {"horizon=2d", "workload.synthetic.duration={dist: weibull, shape: 0.7, mean: 1h}"};
    rowvec_t a = {0}, b = {0};
    fs_summary_t sa, sb;
    run_default(x, 1, &a, &sa);
    run_default(y, 1, &b, &sb);
    assert_int_equal(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        assert_double_equal(a.r[i].submit, b.r[i].submit, 0);
        assert_int_equal(a.r[i].gpus, b.r[i].gpus);
    }
    fs_free(a.r);
    fs_free(b.r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_identical),
        cmocka_unit_test(test_other_seed_differs),
        cmocka_unit_test(test_arrivals_independent_of_policy),
        cmocka_unit_test(test_arrivals_independent_of_durations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
