/*
 * fs_stats against hand-computed values: type-7 quantiles of 1..100 (and a
 * reference implementation on shuffled data), warm-up exclusion, wait
 * probability, the ratios of the run totals, Little's law on a hand-made
 * consistent run, NaN for empty and undrained runs, per-tenant rows, and
 * fault injection on every allocation.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <float.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "analysis/fs_stats.h"
#include "sim/fs_alloc.h"
#include "fs_test_util.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * fmax(1.0, fabs(b)))

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

/* A started job; end = start + run; completed unless state says else. */
static fs_job_row_t job(double submit, double wait, double run, int32_t state)
{
    fs_job_row_t r;
    memset(&r, 0, sizeof r);
    r.id = 1;
    r.tenant = -1;
    r.pool = 0;
    r.gpus = 1;
    r.gpu_milli = 1000;
    r.nodes = 1;
    r.submit = submit;
    r.wait = wait;
    r.start = submit + wait;
    r.run = run;
    r.end = r.start + run;
    r.state = state;
    return r;
}

static fs_job_row_t never_started(double submit, int32_t state)
{
    fs_job_row_t r = job(submit, NAN, 0, state);
    r.pool = -1;
    r.nodes = 0;
    r.start = NAN;
    r.end = NAN;
    return r;
}

static fs_run_totals_t totals_for(uint64_t submitted, double end_time)
{
    fs_run_totals_t t;
    memset(&t, 0, sizeof t);
    t.jobs_submitted = submitted;
    t.end_time = end_time;
    t.makespan = end_time;
    return t;
}

/* Type-7 quantile (R's default, numpy's "linear"), written out. */
static double ref_quantile(const double *sorted, size_t n, double p)
{
    double h = (double)(n - 1) * p;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return sorted[n - 1];
    return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_quantiles_1_to_100(void **state)
{
    (void)state;
    fs_stats_t *st;
    assert_int_equal(fs_stats_create(0.0, &st), 0);
    /* 1..100 added in a scrambled order (37 is coprime with 100). */
    for (int k = 0; k < 100; k++) {
        int v = (k * 37) % 100 + 1;
        fs_job_row_t r = job(10.0 * k, (double)v, 10.0, FS_STATE_COMPLETED);
        assert_int_equal(fs_stats_add_job(st, &r), 0);
    }
    fs_run_totals_t t = totals_for(100, 2000.0);
    fs_summary_t s;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);

    assert_int_equal(s.jobs_submitted, 100);
    assert_int_equal(s.jobs_completed, 100);
    assert_int_equal(s.jobs_in_stats, 100);
    NEAR(s.wait_mean, 50.5);
    NEAR(s.wait_sd, sqrt(100.0 * 101.0 / 12.0)); /* sample sd of 1..n: sqrt(n(n+1)/12) */
    NEAR(s.wait_p50, 50.5);
    NEAR(s.wait_p95, 95.05);
    NEAR(s.wait_p99, 99.01);
    assert_true(s.wait_max == 100.0);
    assert_true(s.wait_prob == 1.0);
    /* JCT = wait + run = wait + 10. */
    NEAR(s.jct_mean, 60.5);
    NEAR(s.jct_p50, 60.5);
    NEAR(s.jct_p95, 105.05);
    NEAR(s.jct_p99, 109.01);
    fs_stats_destroy(st);
}

static void test_quantiles_match_reference(void **state)
{
    (void)state;
    enum { N = 997 };
    double vals[N];
    uint64_t x = 88172645463325252ull;
    fs_stats_t *st;
    assert_int_equal(fs_stats_create(0.0, &st), 0);
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;   /* xorshift64 */
        vals[i] = (double)(x % 100000) / 7.0;
        fs_job_row_t r = job(i, vals[i], 1.0, FS_STATE_RUNNING);
        r.end = NAN;
        assert_int_equal(fs_stats_add_job(st, &r), 0);
    }
    fs_run_totals_t t = totals_for(N, 1e4);
    fs_summary_t s;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    qsort(vals, N, sizeof vals[0], cmp_double);
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += vals[i];
    NEAR(s.wait_mean, sum / N);
    NEAR(s.wait_p50, ref_quantile(vals, N, 0.50));
    NEAR(s.wait_p95, ref_quantile(vals, N, 0.95));
    NEAR(s.wait_p99, ref_quantile(vals, N, 0.99));
    assert_true(s.wait_max == vals[N - 1]);
    /* Running jobs: in wait statistics, not in JCT; unfinished -> no Little. */
    assert_int_equal(s.jobs_unfinished, N);
    assert_true(isnan(s.jct_mean) && isnan(s.jct_p50));
    assert_true(isnan(s.little_rel_err));
    fs_stats_destroy(st);
}

static void test_warmup_exclusion(void **state)
{
    (void)state;
    fs_stats_t *st;
    assert_int_equal(fs_stats_create(100.0, &st), 0);
    fs_job_row_t rows[] = {
        job(10.0, 1000.0, 5.0, FS_STATE_COMPLETED),   /* warm-up: out of stats */
        job(99.999, 500.0, 5.0, FS_STATE_COMPLETED),  /* warm-up: out of stats */
        job(100.0, 0.0, 20.0, FS_STATE_COMPLETED),    /* at warm-up: in */
        job(150.0, 4.0, 6.0, FS_STATE_COMPLETED),     /* in */
        job(200.0, 8.0, 2.0, FS_STATE_FAILED),        /* in wait stats, not JCT */
        never_started(300.0, FS_STATE_QUEUED),        /* counted, no wait */
        never_started(5.0, FS_STATE_REJECTED),        /* counted */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(fs_stats_add_job(st, &rows[i]), 0);
    fs_run_totals_t t = totals_for(7, 1000.0);
    fs_summary_t s;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    assert_int_equal(s.jobs_submitted, 7);
    assert_int_equal(s.jobs_completed, 4);
    assert_int_equal(s.jobs_failed, 1);
    assert_int_equal(s.jobs_unfinished, 1);
    assert_int_equal(s.jobs_rejected, 1);
    assert_int_equal(s.jobs_in_stats, 3);
    NEAR(s.wait_mean, 4.0);              /* (0 + 4 + 8) / 3 */
    NEAR(s.wait_sd, 4.0);                /* sample sd of 0, 4, 8 */
    NEAR(s.wait_p50, 4.0);
    NEAR(s.wait_max, 8.0);
    NEAR(s.wait_prob, 2.0 / 3.0);        /* 4 and 8 waited, 0 did not */
    NEAR(s.jct_mean, 15.0);              /* (20 + 10) / 2 */
    NEAR(s.jct_p50, 15.0);
    NEAR(s.jct_p95, 19.5);               /* 10 + 0.95 * 10 */
    assert_true(isnan(s.little_rel_err)); /* a job is still queued */
    fs_stats_destroy(st);
}

static void test_empty(void **state)
{
    (void)state;
    fs_stats_t *st;
    assert_int_equal(fs_stats_create(0.0, &st), 0);
    fs_run_totals_t t = totals_for(0, 0.0);
    fs_summary_t s;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    assert_int_equal(s.jobs_submitted, 0);
    assert_int_equal(s.jobs_in_stats, 0);
    double nans[] = {s.wait_mean, s.wait_sd, s.wait_p50, s.wait_p95, s.wait_p99, s.wait_max,
                     s.wait_prob, s.jct_mean, s.jct_p50, s.jct_p95, s.jct_p99, s.utilization,
                     s.goodput, s.queue_len_mean, s.system_len_mean, s.arrival_rate};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++)
        assert_true(isnan(nans[i]));
    /* Nothing submitted, nothing in the system: the law holds trivially. */
    assert_true(s.little_rel_err == 0.0);
    size_t n = 99;
    fs_stats_tenants(st, &n);
    assert_int_equal(n, 0);
    fs_stats_destroy(st);

    /* Only warm-up jobs: counts, but NaN statistics. */
    assert_int_equal(fs_stats_create(50.0, &st), 0);
    fs_job_row_t r = job(1.0, 2.0, 3.0, FS_STATE_COMPLETED);
    assert_int_equal(fs_stats_add_job(st, &r), 0);
    t = totals_for(1, 10.0);
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    assert_int_equal(s.jobs_completed, 1);
    assert_int_equal(s.jobs_in_stats, 0);
    assert_true(isnan(s.wait_mean) && isnan(s.jct_p99) && isnan(s.wait_prob));
    /* One job in stats: mean defined, sd not. */
    fs_stats_destroy(st);
    assert_int_equal(fs_stats_create(0.0, &st), 0);
    assert_int_equal(fs_stats_add_job(st, &r), 0);
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    assert_true(s.wait_mean == 2.0 && s.wait_p50 == 2.0 && s.wait_p99 == 2.0);
    assert_true(isnan(s.wait_sd));
    fs_stats_destroy(st);
}

/*
 * A hand-made drained run over [0, 100]:
 *   A submit 0,  start 0,  end 10 (completed)   in system [0,10],  queued -
 *   B submit 5,  start 10, end 30 (completed)   in system [5,30],  queued [5,10]
 *   C submit 20, rejected, never started        never in the system
 *   D submit 30, start 40, end 50 (failed)      in system [30,50], queued [30,40]
 * System integral 10 + 25 + 20 = 55 job-s; queue integral 5 + 10 = 15 job-s.
 */
static void little_rows(fs_stats_t *st)
{
    fs_job_row_t rows[] = {
        job(0.0, 0.0, 10.0, FS_STATE_COMPLETED),
        job(5.0, 5.0, 20.0, FS_STATE_COMPLETED),
        never_started(20.0, FS_STATE_REJECTED),
        job(30.0, 10.0, 10.0, FS_STATE_FAILED),
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(fs_stats_add_job(st, &rows[i]), 0);
}

static void test_little_and_ratios(void **state)
{
    (void)state;
    fs_stats_t *st;
    assert_int_equal(fs_stats_create(0.0, &st), 0);
    little_rows(st);
    fs_run_totals_t t = totals_for(4, 100.0);
    t.makespan = 50.0;
    t.jobs_system_integral = 55.0;
    t.jobs_queued_integral = 15.0;
    t.gpus_total = 2;
    t.gpu_s_capacity = 7200.0;
    t.gpu_s_busy = 3600.0;
    t.gpu_s_useful = 1800.0;
    t.gpu_s_capacity_window = 400.0;
    t.gpu_s_busy_window = 300.0;
    t.events = 12345;
    t.passes = 678;
    t.rows_skipped = 9;
    fs_summary_t s;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    assert_true(s.little_rel_err == 0.0);
    assert_true(s.queue_len_mean == 0.15);
    assert_true(s.system_len_mean == 0.55);
    assert_true(s.arrival_rate == 0.04);
    assert_true(s.utilization == 0.75);
    assert_true(s.utilization_all == 0.5);
    assert_true(s.goodput == 0.25);
    assert_true(s.gpu_hours_capacity == 2.0);
    assert_true(s.gpu_hours_busy == 1.0);
    assert_true(s.makespan == 50.0);
    assert_true(s.end_time == 100.0);
    assert_int_equal(s.events, 12345);
    assert_int_equal(s.passes, 678);
    assert_int_equal(s.rows_skipped, 9);
    assert_int_equal(s.jobs_rejected, 1);
    assert_int_equal(s.jobs_failed, 1);
    assert_int_equal(s.jobs_in_stats, 3);
    /* Finishing twice gives the same answer. */
    fs_summary_t s2;
    assert_int_equal(fs_stats_finish(st, &t, &s2), 0);
    assert_memory_equal(&s, &s2, sizeof s);

    /* An integral 10 % off the sum of sojourn times (50 vs 55). */
    t.jobs_system_integral = 50.0;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    NEAR(s.little_rel_err, 0.1);

    /* Not every submitted job reported: no Little check. */
    t.jobs_system_integral = 55.0;
    t.jobs_submitted = 5;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    assert_true(isnan(s.little_rel_err));
    fs_stats_destroy(st);

    /* A job still running at the end: no Little check. */
    assert_int_equal(fs_stats_create(0.0, &st), 0);
    little_rows(st);
    fs_job_row_t r = job(60.0, 0.0, 40.0, FS_STATE_RUNNING);
    r.end = NAN;
    assert_int_equal(fs_stats_add_job(st, &r), 0);
    t = totals_for(5, 100.0);
    t.jobs_system_integral = 95.0;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    assert_true(isnan(s.little_rel_err));
    assert_int_equal(s.jobs_unfinished, 1);
    assert_true(isnan(s.utilization) && isnan(s.goodput));   /* no capacity */
    fs_stats_destroy(st);
}

static void test_tenants(void **state)
{
    (void)state;
    fs_stats_t *st;
    assert_int_equal(fs_stats_create(10.0, &st), 0);
    fs_job_row_t a = job(20.0, 4.0, 3600.0, FS_STATE_COMPLETED);
    a.tenant = 3;
    a.gpus = 2;
    a.gpu_milli = 500;                     /* 3600 s * 2 * 0.5 = 1 GPU-h */
    fs_job_row_t b = job(30.0, 8.0, 1800.0, FS_STATE_FAILED);
    b.tenant = 3;
    b.gpus = 4;                            /* 1800 s * 4 = 2 GPU-h */
    fs_job_row_t c = job(5.0, 100.0, 360.0, FS_STATE_COMPLETED);
    c.tenant = 3;                          /* warm-up: counts, no wait */
    c.gpus = 10;                           /* 1 GPU-h */
    fs_job_row_t d = never_started(40.0, FS_STATE_QUEUED);
    d.tenant = 0;
    fs_job_row_t e = job(50.0, 1.0, 7200.0, FS_STATE_COMPLETED);
    e.tenant = -1;                         /* no tenant: no row */
    fs_job_row_t f = job(60.0, 0.0, 36.0, FS_STATE_COMPLETED);
    f.tenant = 1000000;                    /* sparse index */
    f.gpus = 100;                          /* 1 GPU-h */
    fs_job_row_t rows[] = {a, d, f, b, e, c};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(fs_stats_add_job(st, &rows[i]), 0);
    fs_run_totals_t t = totals_for(6, 1e4);
    fs_summary_t s;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    size_t n = 0;
    const fs_tenant_row_t *tr = fs_stats_tenants(st, &n);
    assert_int_equal(n, 3);
    assert_int_equal(tr[0].tenant, 0);
    assert_int_equal(tr[0].jobs, 1);
    assert_int_equal(tr[0].jobs_completed, 0);
    assert_true(tr[0].gpu_hours == 0.0);
    assert_true(isnan(tr[0].wait_mean));
    assert_int_equal(tr[1].tenant, 3);
    assert_int_equal(tr[1].jobs, 3);
    assert_int_equal(tr[1].jobs_completed, 2);
    NEAR(tr[1].gpu_hours, 4.0);
    NEAR(tr[1].wait_mean, 6.0);            /* (4 + 8) / 2, warm-up job left out */
    assert_int_equal(tr[2].tenant, 1000000);
    assert_int_equal(tr[2].jobs, 1);
    NEAR(tr[2].gpu_hours, 1.0);
    assert_true(tr[2].wait_mean == 0.0);
    fs_stats_destroy(st);
}

/* Every allocation failure is clean: the failed add leaves the state as it
 * was, so retrying it gives exactly the summary of a run without faults. */
static void run_rows(fs_stats_t *st, int inject, uint64_t k, int *failures)
{
    for (int i = 0; i < 300; i++) {
        fs_job_row_t r = job(i, (double)(i % 17), 5.0 + i, i % 4 ? FS_STATE_COMPLETED
                                                                : FS_STATE_FAILED);
        r.tenant = (i * 7) % 23;
        if (inject && i == 0)
            fs_alloc_fail_after(k);
        int rc = fs_stats_add_job(st, &r);
        if (rc != 0) {
            assert_int_equal(rc, FS_ENOMEM);
            (*failures)++;
            fs_alloc_fail_after(0);
            assert_int_equal(fs_stats_add_job(st, &r), 0);
        }
    }
    fs_alloc_fail_after(0);
}

static void test_alloc_faults(void **state)
{
    (void)state;
    fs_stats_t *ref;
    int none = 0;
    assert_int_equal(fs_stats_create(3.0, &ref), 0);
    run_rows(ref, 0, 0, &none);
    fs_run_totals_t t = totals_for(300, 1e3);
    fs_summary_t want;
    assert_int_equal(fs_stats_finish(ref, &t, &want), 0);
    size_t nref;
    const fs_tenant_row_t *tref = fs_stats_tenants(ref, &nref);

    fs_alloc_fail_after(1);
    fs_stats_t *st = (fs_stats_t *)&st;
    assert_int_equal(fs_stats_create(0.0, &st), FS_ENOMEM);
    assert_null(st);
    fs_alloc_fail_after(0);

    int total_failures = 0;
    for (uint64_t k = 1; k < 40; k++) {
        int failures = 0;
        assert_int_equal(fs_stats_create(3.0, &st), 0);
        run_rows(st, 1, k, &failures);
        total_failures += failures;
        fs_summary_t got;
        assert_int_equal(fs_stats_finish(st, &t, &got), 0);
        assert_memory_equal(&got, &want, sizeof got);
        size_t n;
        const fs_tenant_row_t *tr = fs_stats_tenants(st, &n);
        assert_int_equal(n, nref);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(tr[i].tenant, tref[i].tenant);
            assert_int_equal(tr[i].jobs, tref[i].jobs);
            assert_int_equal(tr[i].jobs_completed, tref[i].jobs_completed);
            assert_true(tr[i].gpu_hours == tref[i].gpu_hours);
            assert_true(tr[i].wait_mean == tref[i].wait_mean);
        }
        fs_stats_destroy(st);
    }
    assert_true(total_failures > 0);
    fs_stats_destroy(ref);
}

/* The queued-time figures when only some jobs were queued again: the
 * waits of the jobs before the first such job count as their queued times
 * (the accumulator keeps queued times only from then on, a copy of the
 * waits so far), and the figures equal GSL's on the whole list.  A run
 * where no job was queued again holds no queued array: one block less. */
static void test_queued_after_requeue(void **state)
{
    (void)state;
    enum { N = 200, FIRST = 120 };
    double q[N], sorted[N];
    fs_stats_t *st = NULL;
    assert_int_equal(fs_stats_create(0, &st), 0);
    for (int i = 0; i < N; i++) {
        double wait = (double)((i * 37) % N) + 1;
        fs_job_row_t r = job(i, wait, 5, FS_STATE_COMPLETED);
        r.queued_s = i < FIRST ? (i % 2 ? NAN : wait) : wait / 4;
        q[i] = i < FIRST ? wait : wait / 4;
        assert_int_equal(fs_stats_add_job(st, &r), 0);
    }
    fs_run_totals_t t = totals_for(N, 1000);
    fs_summary_t s;
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    memcpy(sorted, q, sizeof q);
    gsl_sort(sorted, 1, N);
    assert_true(s.queued_mean == gsl_stats_mean(q, 1, N));
    assert_true(s.queued_p50 == gsl_stats_quantile_from_sorted_data(sorted, 1, N, 0.50));
    assert_true(s.queued_p95 == gsl_stats_quantile_from_sorted_data(sorted, 1, N, 0.95));
    assert_true(s.queued_p99 == gsl_stats_quantile_from_sorted_data(sorted, 1, N, 0.99));
    assert_true(s.queued_p50 < s.wait_p50);
    fs_stats_destroy(st);

    /* no job queued again: waits and JCTs only */
    int64_t before = fs_alloc_live();
    assert_int_equal(fs_stats_create(0, &st), 0);
    for (int i = 0; i < N; i++) {
        fs_job_row_t r = job(i, 1 + i % 7, 5, FS_STATE_COMPLETED);
        r.queued_s = r.wait;
        assert_int_equal(fs_stats_add_job(st, &r), 0);
    }
    assert_int_equal(fs_alloc_live() - before, 3);   /* the accumulator, waits, JCTs */
    assert_int_equal(fs_stats_finish(st, &t, &s), 0);
    assert_true(s.queued_mean == s.wait_mean);
    assert_true(s.queued_p95 == s.wait_p95);
    fs_stats_destroy(st);
}

/* fs_stats_sort gives gsl_sort's array bit for bit on what runs produce
 * (no NaN; -0.0 and +0.0 compare equal, so only their order may differ and
 * none is written here), at every size around the radix threshold, with
 * the radix path and its gsl_sort fallback (allocation failures). */
static void check_sort(const double *in, size_t n)
{
    double *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    memcpy(a, in, n * sizeof *a);
    memcpy(b, in, n * sizeof *b);
    fs_stats_sort(a, n);
    if (n > 1)
        gsl_sort(b, 1, n);
    assert_memory_equal(a, b, n * sizeof *a);
    free(a);
    free(b);
}

static void test_sort_equals_gsl(void **state)
{
    (void)state;
    static const double special[] = {0.0, 1.0, -1.0, DBL_MIN, -DBL_MIN, 4.9e-324, -4.9e-324,
                                     DBL_MAX, -DBL_MAX, HUGE_VAL, -HUGE_VAL, 1e-300, 3600.0,
                                     86400.0, 0.5, 1.0 + DBL_EPSILON, 2.0, 1e300};
    const size_t ns = sizeof special / sizeof special[0];
    size_t sizes[] = {0, 1, 2, 3, 511, 512, 513, 1000, 4096, 70001};
    uint64_t x = 88172645463325252ULL;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        double *v = malloc((n ? n : 1) * sizeof *v);
        assert_non_null(v);
        for (int kind = 0; kind < 10; kind++) {
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;   /* xorshift64 */
                switch (kind) {
                case 5: v[i] = 0.0; break;                         /* nobody waited */
                case 6: v[i] = (double)i * 0.5 - 100.0; break;    /* already in order */
                case 7: v[i] = i + 1 == n ? -1.0 : (double)i; break;   /* but the last */
                case 8: v[i] = x % 10 ? 0.0 : (double)(x % 977); break;   /* mostly 0 */
                case 9: v[i] = x % 10 ? 0.0 : -(double)(x % 977 + 1); break;   /* 0 and below */
                case 0: v[i] = special[x % ns]; break;             /* many equal keys */
                case 1: v[i] = (double)(x % 1000) * 0.25; break;   /* waits on a grid */
                case 2: v[i] = ldexp((double)(x >> 11), -53) * 1e7; break;  /* uniform */
                case 3: v[i] = (x & 1 ? -1.0 : 1.0) * ldexp(1.0, (int)(x % 2000) - 1000); break;
                default: v[i] = (double)(n - i); break;           /* reversed */
                }
            }
            check_sort(v, n);
            fs_alloc_fail_after(1);   /* the scratch fails: the gsl_sort fallback */
            check_sort(v, n);
            fs_alloc_fail_after(2);   /* the digit counts fail */
            check_sort(v, n);
            fs_alloc_fail_after(0);
        }
        free(v);
    }
}

/* fs_stats_mean and fs_stats_sd_m give GSL's bits: arrays with and without
 * a leading run of zeros (sorted waits of a lightly loaded run), with
 * negatives first, with infinities, all zeros, and unsorted data.  A skip
 * that also dropped the zeros after a negative, or an sd that skipped the
 * elements equal to mean anywhere but at the start, fails here. */
static void check_mean_sd(const double *v, size_t n)
{
    double gm = n ? gsl_stats_mean(v, 1, n) : NAN, m = fs_stats_mean(v, n);
    if (n == 0)
        assert_true(isnan(m));
    else
        assert_memory_equal(&gm, &m, sizeof m);
    double gsd = n >= 2 ? gsl_stats_sd_m(v, 1, n, gm) : NAN, sd = fs_stats_sd_m(v, n, gm);
    if (n < 2)
        assert_true(isnan(sd));
    else if (isnan(gsd))
        assert_true(isnan(sd));
    else
        assert_memory_equal(&gsd, &sd, sizeof sd);
}

static void test_mean_sd_equal_gsl(void **state)
{
    (void)state;
    size_t sizes[] = {0, 1, 2, 3, 17, 1000, 20000};
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        double *v = malloc((n ? n : 1) * sizeof *v);
        assert_non_null(v);
        for (int kind = 0; kind < 7; kind++) {
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                double u = ldexp((double)(x >> 11), -53);
                switch (kind) {
                case 0: v[i] = 0.0; break;                               /* nobody waited */
                case 1: v[i] = i < n * 9 / 10 ? 0.0 : u * 3600.0; break; /* a few waited */
                case 2: v[i] = i < n / 3 ? -u : (i < 2 * n / 3 ? 0.0 : u); break;
                case 3: v[i] = (x & 3) == 0 ? 0.0 : u * 1e6; break;      /* zeros inside */
                case 4: v[i] = i < n / 2 ? (i & 1 ? -0.0 : 0.0) : 1.0 / 3.0; break;
                case 5: v[i] = i + 1 == n ? HUGE_VAL : 0.0; break;
                default: v[i] = HUGE_VAL; break;                          /* inf - inf */
                }
            }
            check_mean_sd(v, n);
            gsl_sort(v, 1, n);
            check_mean_sd(v, n);
        }
        free(v);
    }
}

/* fs_stats_finish sorts the JCTs in the waits' array once their figures
 * are taken, and the waits' zeros go through no radix pass: no n-double
 * scratch is allocated (peak memory of the finish below 8 bytes per job),
 * and the figures are those of a sort with its own scratch. */
static void test_finish_reuses_waits(void **state)
{
    (void)state;
    const size_t n = 20000;
    double *jct = malloc(n * sizeof *jct);
    assert_non_null(jct);
    fs_alloc_ctx_t c;
    fs_alloc_ctx_init(&c, NULL, NULL);
    fs_alloc_ctx_t *prev = fs_alloc_bind(&c);
    fs_stats_t *st;
    assert_int_equal(fs_stats_create(0, &st), 0);
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        /* waits mostly 0 and 100 others, JCTs, both in no order */
        double wait = i % 200 == 7 ? (double)(n - i) : 0.0, run = ldexp((double)(x >> 11), -53) * 1e5;
        fs_job_row_t r = job((double)i, wait, run, FS_STATE_COMPLETED);
        jct[i] = r.end - r.submit;
        assert_int_equal(fs_stats_add_job(st, &r), 0);
    }
    fs_alloc_ctx_reset_stats(&c);
    fs_alloc_stats_t before, after;
    fs_alloc_ctx_stats(&c, &before);
    fs_run_totals_t t = totals_for(n, 1e6);
    fs_summary_t sum;
    assert_int_equal(fs_stats_finish(st, &t, &sum), 0);
    fs_alloc_ctx_stats(&c, &after);
    if (after.peak_bytes - before.live_bytes >= (int64_t)(n * sizeof(double)))
        fail_msg("finish allocated %lld bytes for %zu jobs",
                 (long long)(after.peak_bytes - before.live_bytes), n);
    fs_stats_destroy(st);
    fs_alloc_bind(prev);
    assert_int_equal(fs_alloc_ctx_release(&c), 0);
    fs_stats_sort(jct, n);   /* with its own scratch */
    double mean = fs_stats_mean(jct, n);
    assert_memory_equal(&sum.jct_mean, &mean, sizeof mean);
    double p95 = gsl_stats_quantile_from_sorted_data(jct, 1, n, 0.95);
    assert_memory_equal(&sum.jct_p95, &p95, sizeof p95);
    assert_true(sum.wait_p50 == 0.0 && sum.wait_max == (double)(n - 7));
    free(jct);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_quantiles_1_to_100, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quantiles_match_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warmup_exclusion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_little_and_ratios, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tenants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sort_equals_gsl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queued_after_requeue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mean_sd_equal_gsl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finish_reuses_waits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
