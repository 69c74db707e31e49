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
#include <string.h>
#include <gsl/gsl_randist.h>

#include "fs_test_util.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"
#include "traces/fs_synth.h"

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
