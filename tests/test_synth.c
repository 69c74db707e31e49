/*
 * Tests of traces/fs_synth: the synthetic workload generator.
 * Exact equality with a reference built from the same keyed streams, the
 * same seed twice, another seed, common random numbers across duration
 * models, statistics against theory (5-sigma bounds), horizon and max_jobs,
 * validation, config copy and allocation-failure injection.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "fs_test_util.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"
#include "traces/fs_synth.h"
#include "scenarios/fs_scenario.h"

static const uint32_t k_sizes[] = {1, 2, 8, 64};
static const double k_probs[] = {0.55, 0.2, 0.2, 0.05};
static const char *const k_tenants[] = {"research", "prod", "intern"};
static const double k_shares[] = {0.5, 0.3, 0.2};

/* A config: rate /s, horizon s, exponential durations of mean dur_mean s,
 * three tenants. */
static void make_cfg(fs_synth_cfg_t *c, double rate, double horizon_s, double dur_mean)
{
    fs_synth_cfg_init(c);
    c->rate = rate;
    c->horizon = fs_time_from_s(horizon_s);
    c->n_sizes = 4;
    c->sizes = fs_malloc(sizeof k_sizes);
    c->size_probs = fs_malloc(sizeof k_probs);
    assert_non_null(c->sizes);
    assert_non_null(c->size_probs);
    memcpy(c->sizes, k_sizes, sizeof k_sizes);
    memcpy(c->size_probs, k_probs, sizeof k_probs);
    c->duration.kind = FS_DIST_EXPONENTIAL;
    c->duration.mean = dur_mean;
    assert_int_equal(fs_dist_prepare(&c->duration, NULL), 0);
    c->n_tenants = 3;
    c->tenant_names = fs_calloc(3, sizeof *c->tenant_names);
    c->tenant_shares = fs_malloc(sizeof k_shares);
    assert_non_null(c->tenant_names);
    assert_non_null(c->tenant_shares);
    for (int i = 0; i < 3; i++)
        c->tenant_names[i] = fs_strdup(k_tenants[i]);
    memcpy(c->tenant_shares, k_shares, sizeof k_shares);
    c->estimate_factor = 1.5;
}

/* Drains a generator into a malloc'd array (batches of cap). */
static fs_job_t *drain(const fs_synth_cfg_t *c, uint64_t seed, uint64_t rep, size_t cap,
                       size_t *count)
{
    fs_source_t *src = NULL;
    fs_error_t err;
    assert_int_equal(fs_synth_create(c, seed, rep, &src, &err), 0);
    size_t n = 0, total = 0, alloc = 1024;
    fs_job_t *all = malloc(alloc * sizeof *all);
    fs_job_t *buf = malloc(cap * sizeof *buf);
    assert_non_null(all);
    assert_non_null(buf);
    for (;;) {
        assert_int_equal(fs_source_next(src, buf, cap, &n, &err), 0);
        if (n == 0)
            break;
        assert_true(n <= cap);
        if (total + n > alloc) {
            while (total + n > alloc)
                alloc *= 2;
            all = realloc(all, alloc * sizeof *all);
            assert_non_null(all);
        }
        memcpy(all + total, buf, n * sizeof *buf);
        total += n;
    }
    /* The end is sticky. */
    assert_int_equal(fs_source_next(src, buf, cap, &n, &err), 0);
    assert_int_equal(n, 0);
    free(buf);
    fs_source_destroy(src);
    *count = total;
    return all;
}

static int same_job(const fs_job_t *a, const fs_job_t *b)
{
    return a->id == b->id && a->submit == b->submit && a->duration == b->duration &&
           a->estimate == b->estimate && a->gpus == b->gpus && a->gpu_milli == b->gpu_milli &&
           a->tenant == b->tenant && a->gpu_type == b->gpu_type && a->priority == b->priority &&
           a->job_class == b->job_class && a->rec_start == b->rec_start &&
           a->rec_end == b->rec_end && a->rec_state == b->rec_state && a->flags == b->flags;
}

/* The generator equals a reference built by hand from the keyed streams:
 * arrivals from FS_RNG_ARRIVAL, sizes from FS_RNG_GPUS, durations from
 * FS_RNG_DURATION, tenants from FS_RNG_TENANT, entity 0. */
static void test_reference_stream(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 0.5, 2000.0, 3600.0);
    size_t n;
    fs_job_t *jobs = drain(&c, 42, 3, 64, &n);

    fs_rng_t ra, rg, rd, rt;
    assert_int_equal(fs_rng_init(&ra, 42, 3, FS_RNG_ARRIVAL, 0), 0);
    assert_int_equal(fs_rng_init(&rg, 42, 3, FS_RNG_GPUS, 0), 0);
    assert_int_equal(fs_rng_init(&rd, 42, 3, FS_RNG_DURATION, 0), 0);
    assert_int_equal(fs_rng_init(&rt, 42, 3, FS_RNG_TENANT, 0), 0);
    gsl_ran_discrete_t *gt = gsl_ran_discrete_preproc(4, k_probs);
    gsl_ran_discrete_t *tt = gsl_ran_discrete_preproc(3, k_shares);
    double t = 0;
    size_t k = 0;
    for (;; k++) {
        t += gsl_ran_exponential(fs_rng_gsl(&ra), 2.0);
        fs_time_t submit = fs_time_from_s(t);
        if (submit >= c.horizon)
            break;
        assert_true(k < n);
        fs_job_t e;
        fs_job_init(&e);
        e.id = k + 1;
        e.submit = submit;
        e.gpus = k_sizes[gsl_ran_discrete(fs_rng_gsl(&rg), gt)];
        e.duration = fs_time_from_s(gsl_ran_exponential(fs_rng_gsl(&rd), 3600.0));
        if (e.duration < 1)
            e.duration = 1;
        e.tenant = (int32_t)gsl_ran_discrete(fs_rng_gsl(&rt), tt);
        e.estimate = (fs_time_t)((double)e.duration * 1.5 + 0.5);
        assert_true(same_job(&jobs[k], &e));
    }
    assert_int_equal(k, n);
    assert_true(n > 900 && n < 1100);  /* 1000 expected; sd 32 */
    gsl_ran_discrete_free(gt);
    gsl_ran_discrete_free(tt);
    fs_rng_release(&ra);
    fs_rng_release(&rg);
    fs_rng_release(&rd);
    fs_rng_release(&rt);
    free(jobs);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Same seed: the same jobs, whatever the batch size. */
static void test_same_seed_identical(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 3.0, 600.0, 100.0);
    size_t n1, n2, n3;
    fs_job_t *a = drain(&c, 7, 0, 4096, &n1);
    fs_job_t *b = drain(&c, 7, 0, 1, &n2);
    fs_job_t *d = drain(&c, 7, 0, 7, &n3);
    assert_int_equal(n1, n2);
    assert_int_equal(n1, n3);
    assert_true(n1 > 1000);
    for (size_t i = 0; i < n1; i++) {
        assert_true(same_job(&a[i], &b[i]));
        assert_true(same_job(&a[i], &d[i]));
        assert_int_equal(a[i].id, i + 1);
        if (i)
            assert_true(a[i].submit >= a[i - 1].submit);
    }
    free(a);
    free(b);
    free(d);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Another seed or another replication: another workload. */
static void test_other_seed_differs(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 3.0, 600.0, 100.0);
    size_t n1, n2, n3;
    fs_job_t *a = drain(&c, 7, 0, 256, &n1);
    fs_job_t *b = drain(&c, 8, 0, 256, &n2);
    fs_job_t *d = drain(&c, 7, 1, 256, &n3);
    size_t m = n1 < n2 ? n1 : n2;
    m = m < n3 ? m : n3;
    size_t same_b = 0, same_d = 0;
    for (size_t i = 0; i < m; i++) {
        same_b += a[i].submit == b[i].submit;
        same_d += a[i].submit == d[i].submit;
    }
    /* Independent streams: no submit time in common at the same index
     * (a coincidence to the microsecond is all but impossible). */
    assert_int_equal(same_b, 0);
    assert_int_equal(same_d, 0);
    free(a);
    free(b);
    free(d);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Common random numbers: another duration model changes the durations
 * (and estimates) only; submit times, sizes and tenants stay identical. */
static void test_crn_duration_model(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c1, c2;
    make_cfg(&c1, 2.0, 3600.0, 100.0);
    make_cfg(&c2, 2.0, 3600.0, 100.0);
    fs_dist_init(&c2.duration);
    c2.duration.kind = FS_DIST_LOGNORMAL;
    c2.duration.median = 2700;
    c2.duration.sigma = 1.8;
    assert_int_equal(fs_dist_prepare(&c2.duration, NULL), 0);
    size_t n1, n2;
    fs_job_t *a = drain(&c1, 11, 0, 333, &n1);
    fs_job_t *b = drain(&c2, 11, 0, 333, &n2);
    assert_int_equal(n1, n2);
    size_t dur_same = 0;
    for (size_t i = 0; i < n1; i++) {
        assert_int_equal(a[i].id, b[i].id);
        assert_int_equal(a[i].submit, b[i].submit);
        assert_int_equal(a[i].gpus, b[i].gpus);
        assert_int_equal(a[i].tenant, b[i].tenant);
        dur_same += a[i].duration == b[i].duration;
    }
    assert_int_equal(dur_same, 0);
    free(a);
    free(b);
    fs_synth_cfg_release(&c1);
    fs_synth_cfg_release(&c2);
    assert_int_equal(fs_alloc_live(), live0);
}

/* |x - mu| <= 5 sigma, printing the numbers when it fails. */
static void assert_within(const char *what, double x, double mu, double sigma)
{
    if (!(fabs(x - mu) <= 5 * sigma)) {
        print_error("%s: %.9g vs theory %.9g (5 sigma = %.9g)\n", what, x, mu, 5 * sigma);
        fail();
    }
}

/* 200k jobs: the mean gap, the size mix, the tenant shares and the mean
 * duration agree with the configuration within 5 standard errors computed
 * from theory. */
static void run_stats(const fs_dist_t *dur, double dur_mean, double dur_var)
{
    const size_t N = 200000;
    const double rate = 4.0;
    fs_synth_cfg_t c;
    make_cfg(&c, rate, 1e9, 1.0);
    fs_dist_release(&c.duration);
    assert_int_equal(fs_dist_copy(&c.duration, dur), 0);
    c.max_jobs = N;
    size_t n;
    fs_job_t *j = drain(&c, 2024, 0, 4096, &n);
    assert_int_equal(n, N);

    /* Mean inter-arrival time = last submit / N (the first gap starts at 0).
     * Exponential gaps: sd of the mean = (1/rate)/sqrt(N); the rounding of the
     * last submit to 1 us adds at most 0.5 us / N. */
    double mean_gap = fs_time_to_s(j[N - 1].submit) / (double)N;
    assert_within("mean gap", mean_gap, 1.0 / rate, (1.0 / rate) / sqrt((double)N) + 1e-6);

    /* Counts ~ Binomial(N, p). */
    size_t cnt[4] = {0}, tcnt[3] = {0};
    double dsum = 0;
    for (size_t i = 0; i < N; i++) {
        int hit = 0;
        for (int k = 0; k < 4; k++)
            if (j[i].gpus == k_sizes[k]) {
                cnt[k]++;
                hit = 1;
            }
        assert_true(hit);
        assert_true(j[i].tenant >= 0 && j[i].tenant < 3);
        tcnt[j[i].tenant]++;
        dsum += fs_time_to_s(j[i].duration);
    }
    for (int k = 0; k < 4; k++)
        assert_within("size count", (double)cnt[k], N * k_probs[k],
                      sqrt(N * k_probs[k] * (1 - k_probs[k])));
    for (int k = 0; k < 3; k++)
        assert_within("tenant count", (double)tcnt[k], N * k_shares[k],
                      sqrt(N * k_shares[k] * (1 - k_shares[k])));
    /* Mean duration: sd of the mean sqrt(var/N); rounding to 1 us adds at
     * most 0.5 us. */
    assert_within("mean duration", dsum / (double)N, dur_mean, sqrt(dur_var / (double)N) + 1e-6);
    free(j);
    fs_synth_cfg_release(&c);
}

static void test_statistics(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_dist_t d;
    fs_dist_init(&d);
    d.kind = FS_DIST_EXPONENTIAL;
    d.mean = 3600;
    assert_int_equal(fs_dist_prepare(&d, NULL), 0);
    run_stats(&d, 3600.0, 3600.0 * 3600.0);

    /* Lognormal, median 600 s, sigma 1: mean e^(mu + s^2/2), variance
     * (e^(s^2) - 1) e^(2 mu + s^2). */
    fs_dist_init(&d);
    d.kind = FS_DIST_LOGNORMAL;
    d.median = 600;
    d.sigma = 1.0;
    assert_int_equal(fs_dist_prepare(&d, NULL), 0);
    double mu = log(600.0);
    run_stats(&d, exp(mu + 0.5), (exp(1.0) - 1) * exp(2 * mu + 1.0));
    fs_dist_release(&d);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Arrivals stay in [0, horizon); their number is Poisson(rate * horizon);
 * a shorter horizon gives a prefix of the same stream; max_jobs stops it. */
static void test_horizon_and_max_jobs(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 10.0, 1000.0, 60.0);
    size_t n_long, n_short, n_max;
    fs_job_t *a = drain(&c, 5, 0, 500, &n_long);
    for (size_t i = 0; i < n_long; i++) {
        assert_true(a[i].submit >= 0);
        assert_true(a[i].submit < c.horizon);
    }
    assert_within("arrivals", (double)n_long, 10000.0, sqrt(10000.0));
    /* The last arrival is within a few mean gaps of the horizon. */
    assert_true(c.horizon - a[n_long - 1].submit < 5 * FS_US_PER_S);

    c.horizon = 500 * FS_US_PER_S;
    fs_job_t *b = drain(&c, 5, 0, 500, &n_short);
    size_t expect = 0;
    while (expect < n_long && a[expect].submit < c.horizon)
        expect++;
    assert_int_equal(n_short, expect);
    for (size_t i = 0; i < n_short; i++)
        assert_true(same_job(&a[i], &b[i]));

    c.horizon = 1000 * FS_US_PER_S;
    c.max_jobs = 123;
    fs_job_t *d = drain(&c, 5, 0, 50, &n_max);
    assert_int_equal(n_max, 123);
    for (size_t i = 0; i < n_max; i++)
        assert_true(same_job(&a[i], &d[i]));
    free(a);
    free(b);
    free(d);

    /* A horizon far beyond the input limit is capped there, not overflowed. */
    c.horizon = FS_TIME_NEVER;
    c.max_jobs = 10;
    fs_job_t *e = drain(&c, 5, 0, 3, &n_max);
    assert_int_equal(n_max, 10);
    free(e);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Tenant names, GPU types and the ops table of the source. */
static void test_names(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 1.0, 10.0, 1.0);
    fs_source_t *src;
    assert_int_equal(fs_synth_create(&c, 1, 0, &src, NULL), 0);
    /* The source holds its own copy of the config. */
    fs_synth_cfg_release(&c);
    assert_string_equal(src->ops->name, "synthetic");
    assert_int_equal(fs_source_tenant_count(src), 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(fs_source_tenant_name(src, i), k_tenants[i]);
    assert_null(fs_source_tenant_name(src, 3));
    assert_null(fs_source_tenant_name(src, -1));
    assert_int_equal(fs_source_gpu_type_count(src), 0);
    assert_null(fs_source_gpu_type_name(src, 0));
    assert_int_equal(fs_source_skipped(src), 0);
    fs_job_t buf[4];
    size_t n = 99;
    fs_error_t err;
    assert_int_equal(fs_source_next(src, buf, 0, &n, &err), FS_EINVAL);
    assert_int_equal(n, 0);
    fs_source_destroy(src);
    fs_source_destroy(NULL);

    /* No tenants: tenant -1; estimate factor 0: estimate -1. */
    make_cfg(&c, 1.0, 100.0, 1.0);
    for (int i = 0; i < 3; i++)
        fs_free(c.tenant_names[i]);
    fs_free(c.tenant_names);
    fs_free(c.tenant_shares);
    c.tenant_names = NULL;
    c.tenant_shares = NULL;
    c.n_tenants = 0;
    c.estimate_factor = 0;
    size_t cnt;
    fs_job_t *j = drain(&c, 1, 0, 16, &cnt);
    assert_true(cnt > 50);
    for (size_t i = 0; i < cnt; i++) {
        assert_int_equal(j[i].tenant, -1);
        assert_int_equal(j[i].estimate, -1);
        assert_int_equal(j[i].gpu_type, -1);
        assert_int_equal(j[i].gpu_milli, FS_GPU_MILLI_WHOLE);
        assert_true(j[i].duration >= 1);
    }
    free(j);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Durations never fall below 1 us (a constant 0 s model). */
static void test_min_duration(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 1.0, 100.0, 1.0);
    fs_dist_init(&c.duration);
    c.duration.kind = FS_DIST_CONSTANT;
    c.duration.value = 0;
    assert_int_equal(fs_dist_prepare(&c.duration, NULL), 0);
    size_t n;
    fs_job_t *j = drain(&c, 3, 0, 16, &n);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(j[i].duration, 1);
        assert_int_equal(j[i].estimate, 2);  /* 1 us * 1.5, rounded */
    }
    free(j);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

static void expect_invalid(const fs_synth_cfg_t *c, const char *needle)
{
    fs_source_t *src = (fs_source_t *)&src;
    fs_error_t err;
    fs_error_clear(&err);
    assert_int_equal(fs_synth_create(c, 1, 0, &src, &err), FS_EINVAL);
    assert_null(src);
    assert_int_equal(err.code, FS_EINVAL);
    if (!strstr(err.msg, needle)) {
        print_error("message '%s' lacks '%s'\n", err.msg, needle);
        fail();
    }
}

static void test_validation(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 1.0, 100.0, 1.0);

    c.rate = 0;
    expect_invalid(&c, "rate must be > 0");
    c.rate = -2;
    expect_invalid(&c, "rate must be > 0");
    c.rate = NAN;
    expect_invalid(&c, "rate must be > 0");
    c.rate = INFINITY;
    expect_invalid(&c, "rate must be > 0");
    c.rate = 1.0;

    c.horizon = 0;
    expect_invalid(&c, "horizon must be > 0");
    c.horizon = 100 * FS_US_PER_S;

    c.n_sizes = 0;
    expect_invalid(&c, "GPU-count mix is empty");
    c.n_sizes = 4;

    c.size_probs[1] = 0.3;
    expect_invalid(&c, "GPU-count probabilities sum to 1.1");
    c.size_probs[1] = -0.2;
    expect_invalid(&c, "GPU-count probability 2 is not a finite number >= 0");
    c.size_probs[1] = NAN;
    expect_invalid(&c, "GPU-count probability 2");
    c.size_probs[1] = 0.2;

    c.sizes[2] = 0;
    expect_invalid(&c, "GPU count 3 must be in 1..2147483648");
    c.sizes[2] = 8;

    fs_dist_t keep = c.duration;
    fs_dist_init(&c.duration);
    expect_invalid(&c, "duration distribution missing or not prepared");
    c.duration.kind = FS_DIST_LOGNORMAL;
    c.duration.median = 5;
    c.duration.sigma = 1;  /* not prepared: mu is NAN */
    expect_invalid(&c, "duration distribution missing or not prepared");
    c.duration = keep;

    c.tenant_shares[0] = 0.6;
    expect_invalid(&c, "tenant probabilities sum to");
    c.tenant_shares[0] = 0.5;
    char *t2 = c.tenant_names[2];
    c.tenant_names[2] = c.tenant_names[0];
    expect_invalid(&c, "tenant 'research' is listed twice");
    c.tenant_names[2] = NULL;
    expect_invalid(&c, "tenant 3 has no name");
    c.tenant_names[2] = t2;

    c.estimate_factor = -1;
    expect_invalid(&c, "estimate_factor must be a finite number >= 0");
    c.estimate_factor = 1.5;

    fs_source_t *src;
    assert_int_equal(fs_synth_create(&c, 1, 0, &src, NULL), 0);
    fs_source_destroy(src);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Copy is deep and equal; release empties; failed copies leave nothing. */
static void test_cfg_copy(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c, d;
    make_cfg(&c, 2.5, 100.0, 7.0);
    c.max_jobs = 99;
    assert_int_equal(fs_synth_cfg_copy(&d, &c), 0);
    assert_true(d.rate == 2.5);
    assert_int_equal(d.horizon, c.horizon);
    assert_int_equal(d.max_jobs, 99);
    assert_int_equal(d.n_sizes, 4);
    assert_ptr_not_equal(d.sizes, c.sizes);
    assert_memory_equal(d.sizes, c.sizes, sizeof k_sizes);
    assert_memory_equal(d.size_probs, c.size_probs, sizeof k_probs);
    assert_int_equal(d.n_tenants, 3);
    for (int i = 0; i < 3; i++) {
        assert_ptr_not_equal(d.tenant_names[i], c.tenant_names[i]);
        assert_string_equal(d.tenant_names[i], k_tenants[i]);
    }
    assert_int_equal(d.duration.kind, FS_DIST_EXPONENTIAL);
    assert_true(d.duration.mean == 7.0);
    assert_true(d.estimate_factor == 1.5);
    fs_synth_cfg_release(&d);
    assert_null(d.sizes);
    assert_int_equal(d.n_sizes, 0);
    assert_int_equal(d.n_tenants, 0);

    int64_t live1 = fs_alloc_live();
    int ok = 0;
    for (uint64_t k = 1; k < 100 && !ok; k++) {
        fs_alloc_fail_after(k);
        int rc = fs_synth_cfg_copy(&d, &c);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            fs_synth_cfg_release(&d);
        } else {
            assert_int_equal(rc, FS_ENOMEM);
            assert_null(d.sizes);
            assert_null(d.tenant_names);
        }
        assert_int_equal(fs_alloc_live(), live1);
    }
    assert_true(ok);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Every allocation of fs_synth_create can fail: FS_ENOMEM, nothing leaked;
 * once it succeeds, the jobs are the usual ones. */
static void test_create_alloc_failures(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 1.0, 100.0, 1.0);
    size_t n_ref;
    fs_job_t *ref = drain(&c, 9, 0, 64, &n_ref);
    int64_t live1 = fs_alloc_live();
    int ok = 0;
    uint64_t k;
    for (k = 1; k < 200 && !ok; k++) {
        fs_source_t *src = NULL;
        fs_error_t err;
        fs_alloc_fail_after(k);
        int rc = fs_synth_create(&c, 9, 0, &src, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            fs_job_t buf[256];
            size_t n;
            assert_int_equal(fs_source_next(src, buf, 256, &n, &err), 0);
            assert_int_equal(n, n_ref);
            for (size_t i = 0; i < n; i++)
                assert_true(same_job(&buf[i], &ref[i]));
            fs_source_destroy(src);
        } else {
            assert_int_equal(rc, FS_ENOMEM);
            assert_null(src);
            assert_non_null(strstr(err.msg, "out of memory"));
        }
        assert_int_equal(fs_alloc_live(), live1);
    }
    assert_true(ok);
    assert_true(k > 3);     /* some failures were really injected */
    free(ref);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- extensions: scale, rate profile, growth, duration by size ------------ */

/* Sets a {name: share} profile table from n shares (names "0".."n-1";
 * zero shares are left out). */
static void set_profile(fs_synth_cfg_t *c, int weekly, const double *shares, size_t n)
{
    char ***names = weekly ? &c->weekly_names : &c->hourly_names;
    double **vals = weekly ? &c->weekly : &c->hourly;
    size_t *cnt = weekly ? &c->n_weekly : &c->n_hourly;
    *names = fs_calloc(n, sizeof **names);
    *vals = fs_malloc(n * sizeof **vals);
    assert_non_null(*names);
    assert_non_null(*vals);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (shares[i] == 0)
            continue;
        char name[24];
        snprintf(name, sizeof name, "%zu", i);
        (*names)[k] = fs_strdup(name);
        (*vals)[k++] = shares[i];
    }
    *cnt = k;
}

/* Adds a size class with constant run times of `value` seconds. */
static void add_class(fs_synth_cfg_t *c, uint32_t lo, uint32_t hi, double value)
{
    c->classes = fs_realloc(c->classes, (c->n_classes + 1) * sizeof *c->classes);
    assert_non_null(c->classes);
    fs_synth_class_t *k = &c->classes[c->n_classes++];
    memset(k, 0, sizeof *k);
    k->gpus_min = lo;
    k->gpus_max = hi;
    fs_dist_init(&k->duration);
    k->duration.kind = FS_DIST_CONSTANT;
    k->duration.value = value;
    assert_int_equal(fs_dist_prepare(&k->duration, NULL), 0);
    k->duration_cfg.given = 3;
    k->duration_cfg.path = fs_strdup("unused.csv");
}

/* scale = 2 is exactly rate x 2: the same jobs. */
static void test_scale(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t a, b;
    make_cfg(&a, 0.25, 5000.0, 60.0);
    make_cfg(&b, 0.5, 5000.0, 60.0);
    a.scale = 2;
    size_t na, nb;
    fs_job_t *ja = drain(&a, 5, 0, 100, &na), *jb = drain(&b, 5, 0, 100, &nb);
    assert_int_equal(na, nb);
    assert_true(na > 2000);
    for (size_t i = 0; i < na; i++)
        assert_true(same_job(&ja[i], &jb[i]));
    free(ja);
    free(jb);
    fs_synth_cfg_release(&a);
    fs_synth_cfg_release(&b);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A flat profile given explicitly goes through the integrated-rate path:
 * the same Exp(1) draws spent at a constant rate give the homogeneous
 * epochs again (within 1 us of rounding). */
static void test_flat_profile_equals_homogeneous(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t a, b;
    make_cfg(&a, 0.01, 20 * 86400.0, 60.0);
    make_cfg(&b, 0.01, 20 * 86400.0, 60.0);
    double flat[24];
    for (int i = 0; i < 24; i++)
        flat[i] = 1.0 / 24;
    set_profile(&b, 0, flat, 24);
    size_t na, nb;
    fs_job_t *ja = drain(&a, 11, 0, 64, &na), *jb = drain(&b, 11, 0, 64, &nb);
    assert_true(na > 15000);
    assert_true(na == nb || na == nb + 1 || nb == na + 1); /* the last one may round across */
    size_t m = na < nb ? na : nb;
    for (size_t i = 0; i < m; i++) {
        if (llabs((long long)(ja[i].submit - jb[i].submit)) > 1)
            fail_msg("job %zu: %lld vs %lld us", i, (long long)ja[i].submit, (long long)jb[i].submit);
        assert_int_equal(ja[i].gpus, jb[i].gpus);
        assert_int_equal(ja[i].duration, jb[i].duration);
    }
    free(ja);
    free(jb);
    fs_synth_cfg_release(&a);
    fs_synth_cfg_release(&b);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Hour-of-day and day-of-week profile: no arrivals where the share is 0,
 * and the counts per hour and per day within 5 sigma of
 * N * share (Poisson counts). */
static void test_profile_counts(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 0.05, 28 * 86400.0, 60.0); /* 4 weeks, ~121k jobs */
    double hourly[24] = {0}, weekly[7] = {0.2, 0.2, 0.2, 0.2, 0.15, 0.05, 0};
    for (int h = 8; h < 20; h++)
        hourly[h] = h < 12 ? 0.1 : (1 - 0.4) / 8;
    set_profile(&c, 0, hourly, 24);
    set_profile(&c, 1, weekly, 7);
    size_t n;
    fs_job_t *jobs = drain(&c, 3, 0, 256, &n);
    double per_hour[24] = {0}, per_day[7] = {0};
    for (size_t i = 0; i < n; i++) {
        double t = fs_time_to_s(jobs[i].submit);
        per_hour[(int)fmod(floor(t / 3600), 24)]++;
        per_day[(int)fmod(floor(t / 86400), 7)]++;
        if (i)
            assert_true(jobs[i].submit >= jobs[i - 1].submit);
    }
    /* expected total: rate * 28 d (the multipliers average to 1) */
    double total = 0.05 * 28 * 86400;
    assert_true(fabs((double)n - total) < 5 * sqrt(total));
    for (int h = 0; h < 24; h++) {
        double e = total * hourly[h];
        if (e == 0)
            assert_true(per_hour[h] == 0);
        else if (fabs(per_hour[h] - e) > 5 * sqrt(e))
            fail_msg("hour %d: %g arrivals, expected %g", h, per_hour[h], e);
    }
    for (int d = 0; d < 7; d++) {
        double e = total * weekly[d];
        if (e == 0)
            assert_true(per_day[d] == 0);
        else if (fabs(per_day[d] - e) > 5 * sqrt(e))
            fail_msg("day %d: %g arrivals, expected %g", d, per_day[d], e);
    }
    free(jobs);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Growth of 50% per 10 days, compounding, over 40 days: the count in each
 * 10-day window is rate * int e^{beta t} dt over it (5 sigma). */
static void test_growth(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 0.02, 40 * 86400.0, 60.0);
    c.growth = 0.5;
    c.growth_period = 10 * FS_US_PER_DAY;
    size_t n;
    fs_job_t *jobs = drain(&c, 8, 0, 256, &n);
    double beta = log(1.5) / (10 * 86400.0), cnt[4] = {0};
    for (size_t i = 0; i < n; i++)
        cnt[(size_t)(fs_time_to_s(jobs[i].submit) / (10 * 86400.0))]++;
    for (int w = 0; w < 4; w++) {
        double a = w * 10 * 86400.0, b = a + 10 * 86400.0;
        double e = 0.02 * (exp(beta * b) - exp(beta * a)) / beta;
        if (fabs(cnt[w] - e) > 5 * sqrt(e))
            fail_msg("window %d: %g arrivals, expected %g", w, cnt[w], e);
    }
    /* each window has 1.5x the previous one's expectation */
    assert_true(cnt[3] > 2.5 * cnt[0]);
    free(jobs);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Run times by size class; sizes outside every class use `duration`; the
 * arrivals and sizes do not change (common random numbers). */
static void test_duration_by_size(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t a, b;
    make_cfg(&a, 0.5, 4000.0, 60.0);
    make_cfg(&b, 0.5, 4000.0, 60.0);
    add_class(&b, 1, 1, 100);
    add_class(&b, 2, 8, 200);
    size_t na, nb;
    fs_job_t *ja = drain(&a, 21, 0, 64, &na), *jb = drain(&b, 21, 0, 64, &nb);
    assert_int_equal(na, nb);
    int seen64 = 0;
    for (size_t i = 0; i < nb; i++) {
        assert_int_equal(ja[i].submit, jb[i].submit);
        assert_int_equal(ja[i].gpus, jb[i].gpus);
        if (jb[i].gpus == 1)
            assert_int_equal(jb[i].duration, 100 * FS_US_PER_S);
        else if (jb[i].gpus <= 8)
            assert_int_equal(jb[i].duration, 200 * FS_US_PER_S);
        else
            seen64 += jb[i].duration != 100 * FS_US_PER_S && jb[i].duration != 200 * FS_US_PER_S;
    }
    assert_true(seen64 > 10);
    /* the copy carries the classes */
    fs_synth_cfg_t d;
    assert_int_equal(fs_synth_cfg_copy(&d, &b), 0);
    assert_int_equal(d.n_classes, 2);
    assert_int_equal(d.classes[1].gpus_max, 8);
    assert_string_equal(d.classes[1].duration_cfg.path, "unused.csv");
    assert_true(d.classes[1].duration.value == 200);
    fs_synth_cfg_release(&d);
    free(ja);
    free(jb);
    fs_synth_cfg_release(&a);
    fs_synth_cfg_release(&b);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_extension_validation(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 1, 100, 1);
    c.scale = 0;
    expect_invalid(&c, "scale must be > 0 (got 0)");
    c.scale = 1;
    c.growth = -1;
    expect_invalid(&c, "growth must be > -1 (got -1)");
    c.growth = 0.1;
    c.growth_period = 0;
    expect_invalid(&c, "the growth period must be > 0");
    c.growth = 0;
    double h[24] = {0};
    h[3] = 0.5;
    h[23] = 0.25;
    set_profile(&c, 0, h, 24);
    expect_invalid(&c, "hourly probabilities sum to 0.75, not 1");
    c.hourly[1] = 0.5;
    fs_free(c.hourly_names[1]);
    c.hourly_names[1] = fs_strdup("24");
    expect_invalid(&c, "hourly profile: '24' is not a whole number in 0..23");
    fs_free(c.hourly_names[1]);
    c.hourly_names[1] = fs_strdup("03");
    expect_invalid(&c, "hourly profile: 3 is listed twice");
    fs_free(c.hourly_names[1]);
    c.hourly_names[1] = fs_strdup("x");
    expect_invalid(&c, "hourly profile: 'x' is not a whole number");
    fs_free(c.hourly_names[1]);
    c.hourly_names[1] = fs_strdup("4");
    double w[7] = {0.5, 0.5, 0, 0, 0, 0, 0};
    set_profile(&c, 1, w, 7);
    fs_free(c.weekly_names[1]);
    c.weekly_names[1] = fs_strdup("7");
    expect_invalid(&c, "weekly profile: '7' is not a whole number in 0..6");
    fs_free(c.weekly_names[1]);
    c.weekly_names[1] = fs_strdup("6");
    add_class(&c, 2, 8, 10);
    add_class(&c, 8, 16, 10);
    expect_invalid(&c, "size classes 1 (2..8) and 2 (8..16) overlap");
    c.classes[1].gpus_min = 9;
    c.classes[1].gpus_max = 4;
    expect_invalid(&c, "size class 2: expected 1 <= gpus_min <= gpus_max (got 9..4)");
    c.classes[1].gpus_max = 16;
    c.classes[1].duration.kind = FS_DIST_NONE;
    expect_invalid(&c, "size class 2: duration distribution missing");
    c.classes[1].duration.kind = FS_DIST_CONSTANT;
    /* now valid: arrivals only in hours 3 and 4 of days 0 and 6 */
    fs_source_t *src = NULL;
    fs_error_t err;
    assert_int_equal(fs_synth_create(&c, 1, 0, &src, &err), 0);
    fs_source_destroy(src);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Allocation failures with every extension configured. */
static void test_extension_alloc_failures(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_synth_cfg_t c;
    make_cfg(&c, 0.01, 3 * 86400.0, 1.0);
    double h[24], w[7] = {0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.1};
    for (int i = 0; i < 24; i++)
        h[i] = 1.0 / 24;
    set_profile(&c, 0, h, 24);
    set_profile(&c, 1, w, 7);
    add_class(&c, 1, 4, 30);
    c.growth = 0.1;
    size_t n_ref;
    fs_job_t *ref = drain(&c, 9, 0, 4096, &n_ref);
    int64_t live1 = fs_alloc_live();
    int ok = 0;
    uint64_t k;
    for (k = 1; k < 400 && !ok; k++) {
        fs_source_t *src = NULL;
        fs_error_t err;
        fs_alloc_fail_after(k);
        int rc = fs_synth_create(&c, 9, 0, &src, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            fs_job_t *buf = malloc(4096 * sizeof *buf);
            size_t n;
            assert_int_equal(fs_source_next(src, buf, 4096, &n, &err), 0);
            assert_int_equal(n, n_ref);
            for (size_t i = 0; i < n; i++)
                assert_true(same_job(&buf[i], &ref[i]));
            free(buf);
            fs_source_destroy(src);
        } else {
            assert_int_equal(rc, FS_ENOMEM);
            assert_null(src);
        }
        assert_int_equal(fs_alloc_live(), live1);
    }
    assert_true(ok);
    assert_true(k > 40); /* the names and classes were copied one by one */
    free(ref);
    fs_synth_cfg_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The scenario keys of the extensions: values, the dump round trip, and
 * errors at FILE:LINE:COL (checked when the scenario is loaded). */
#define EXT_YAML(profile, classes) \
    "cluster:\n" \
    "  pools:\n" \
    "    - {name: a, gpu: H100, nodes: 4, gpus_per_node: 8}\n" \
    "workload:\n" \
    "  synthetic:\n" \
    "    arrivals:\n" \
    "      rate: 10/h\n" \
    "      profile: " profile "\n" \
    "    scale: 2.5\n" \
    "    growth: {rate: 0.05, period: 7d}\n" \
    "    gpus: {1: 0.5, 8: 0.5}\n" \
    "    duration: {dist: exponential, mean: 1h}\n" \
    "    duration_by_size:\n" classes

static void test_scenario_keys(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_config_t c;
    fs_error_t err;
    const char *good = EXT_YAML("{hourly: {9: 0.5, 10: 0.5}, weekly: {0: 0.25, 1: 0.75}}",
                                "      - {gpus_min: 1, gpus_max: 1, duration: {dist: lognormal, median: 10m, sigma: 1}}\n"
                                "      - {gpus_min: 2, gpus_max: 64, duration: {dist: weibull, scale: 2h, shape: 0.7}}\n");
    if (fs_scenario_load_string("x.yaml", good, NULL, 0, &c, &err) != 0)
        fail_msg("%s", err.msg);
    const fs_synth_cfg_t *s = &c.workload.synth;
    assert_true(s->scale == 2.5);
    assert_true(s->growth == 0.05);
    assert_int_equal(s->growth_period, 7 * FS_US_PER_DAY);
    assert_int_equal(s->n_hourly, 2);
    assert_string_equal(s->hourly_names[1], "10");
    assert_true(s->hourly[1] == 0.5);
    assert_int_equal(s->n_weekly, 2);
    assert_true(s->weekly[1] == 0.75);
    assert_int_equal(s->n_classes, 2);
    assert_int_equal(s->classes[1].gpus_min, 2);
    assert_int_equal(s->classes[1].gpus_max, 64);
    assert_int_equal(s->classes[1].duration.kind, FS_DIST_WEIBULL);
    assert_true(s->classes[1].duration.scale == 7200);
    assert_true(s->classes[0].duration.mu == log(600.0)); /* prepared */
    char *d1 = fs_scenario_dump(&c);
    assert_non_null(d1);
    assert_non_null(strstr(d1, "      profile:\n        hourly: {\"9\": 0.5, \"10\": 0.5}\n"));
    assert_non_null(strstr(d1, "    duration_by_size:\n      - gpus_min: 1\n"));
    fs_config_t c2;
    if (fs_scenario_load_string("dump.yaml", d1, NULL, 0, &c2, &err) != 0)
        fail_msg("%s\n%s", err.msg, d1);
    char *d2 = fs_scenario_dump(&c2);
    assert_string_equal(d1, d2);
    fs_free(d1);
    fs_free(d2);
    /* the scenario runs through the generator */
    fs_source_t *src = NULL;
    fs_synth_cfg_t sc = c.workload.synth;
    assert_int_equal(fs_synth_create(&sc, 1, 0, &src, &err), 0);
    fs_source_destroy(src);
    fs_config_release(&c2);
    fs_config_release(&c);

    static const struct {
        const char *yaml, *msg;
    } bad[] = {
        {EXT_YAML("{hourly: {24: 1}}", "      - {gpus_min: 1, gpus_max: 1, duration: {dist: constant, value: 1m}}\n"),
         "x.yaml:8:25: synthetic workload: hourly profile: '24' is not a whole number in 0..23"},
        {EXT_YAML("{weekly: {0: 0.5}}", "      - {gpus_min: 1, gpus_max: 1, duration: {dist: constant, value: 1m}}\n"),
         "x.yaml:8:25: workload.synthetic.arrivals.profile.weekly: the shares sum to 0.5"},
        {EXT_YAML("{}", "      - {gpus_min: 1, gpus_max: 8, duration: {dist: constant, value: 1m}}\n"
                        "      - {gpus_min: 8, gpus_max: 9, duration: {dist: constant, value: 1m}}\n"),
         "x.yaml:14:7: synthetic workload: size classes 1 (1..8) and 2 (8..9) overlap"},
        {EXT_YAML("{}", "      - {gpus_min: 0, gpus_max: 8, duration: {dist: constant, value: 1m}}\n"),
         "x.yaml:14:20: workload.synthetic.duration_by_size.0.gpus_min: 0 is out of range"},
        {EXT_YAML("{}", "      - {gpus_min: 1, gpus_max: 8}\n"),
         "x.yaml:14:9: missing key 'workload.synthetic.duration_by_size.0.duration'"},
        {EXT_YAML("{}", "      - {gpus_min: 1, gpus_max: 8, duration: {dist: gamma, shape: 2}}\n"),
         "x.yaml:14:46: workload.synthetic.duration_by_size.0.duration: gamma needs"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(fs_scenario_load_string("x.yaml", bad[i].yaml, NULL, 0, &c, &err), FS_EINVAL);
        if (strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) != 0)
            fail_msg("case %zu: '%s' does not start with '%s'", i, err.msg, bad[i].msg);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_stream),
        cmocka_unit_test(test_same_seed_identical),
        cmocka_unit_test(test_other_seed_differs),
        cmocka_unit_test(test_crn_duration_model),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_horizon_and_max_jobs),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_min_duration),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_cfg_copy),
        cmocka_unit_test(test_create_alloc_failures),
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_flat_profile_equals_homogeneous),
        cmocka_unit_test(test_profile_counts),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_duration_by_size),
        cmocka_unit_test(test_extension_validation),
        cmocka_unit_test(test_extension_alloc_failures),
        cmocka_unit_test(test_scenario_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
