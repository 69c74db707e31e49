/*
 * Tests of the distributions (sim/fs_dist): derived parameters against the
 * textbook formulas, sample means of 10^6 draws within 5 standard errors of
 * the analytic mean (analytic variance for the standard error), every bad
 * parameter refused with FS_EINVAL and a message naming it, kind names, and
 * copy/release without leaks (also out of memory).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <gsl/gsl_sf_gamma.h>

#include "fs_test_util.h"
#include "sim/fs_alloc.h"
#include "sim/fs_dist.h"
#include "sim/fs_error.h"
#include "sim/fs_rng.h"

static fs_dist_t make(int kind)
{
    fs_dist_t d;
    fs_dist_init(&d);
    d.kind = kind;
    return d;
}

static void prepare_ok(fs_dist_t *d)
{
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_dist_prepare(d, &err);
    if (rc)
        fail_msg("fs_dist_prepare(%s): %s", fs_dist_kind_name(d->kind), err.msg);
    assert_int_equal(err.code, FS_OK);
}

/* ---- derived parameters ---- */

static void test_init_sets_everything_unset(void **st)
{
    (void)st;
    fs_dist_t d;
    memset(&d, 0x5a, sizeof d);
    fs_dist_init(&d);
    assert_int_equal(d.kind, FS_DIST_NONE);
    assert_true(isnan(d.value) && isnan(d.mean) && isnan(d.median) && isnan(d.sigma));
    assert_true(isnan(d.shape) && isnan(d.scale) && isnan(d.lo) && isnan(d.hi) && isnan(d.mu));
    assert_null(d.values);
    assert_int_equal(d.n_values, 0);
}

static void test_lognormal_parameters(void **st)
{
    (void)st;
    /* from the median: mu = ln(median), mean = exp(mu + sigma^2 / 2) */
    fs_dist_t d = make(FS_DIST_LOGNORMAL);
    d.median = 2700;
    d.sigma = 1.8;
    prepare_ok(&d);
    assert_double_equal(d.mu, log(2700.0), 1e-12);
    assert_double_equal(d.mean, 2700.0 * exp(1.8 * 1.8 / 2), 1e-9 * d.mean);
    assert_double_equal(fs_dist_mean(&d), d.mean, 0);
    /* from the mean: mu = ln(mean) - sigma^2 / 2, median = exp(mu) */
    fs_dist_t e = make(FS_DIST_LOGNORMAL);
    e.mean = 100;
    e.sigma = 0.5;
    prepare_ok(&e);
    assert_double_equal(e.mu, log(100.0) - 0.125, 1e-12);
    assert_double_equal(e.median, 100.0 * exp(-0.125), 1e-9);
    assert_double_equal(fs_dist_mean(&e), 100, 1e-9);
    /* sigma 0 is a constant at the median */
    fs_dist_t z = make(FS_DIST_LOGNORMAL);
    z.median = 5;
    z.sigma = 0;
    prepare_ok(&z);
    assert_double_equal(z.mean, 5, 1e-12);
}

static void test_weibull_parameters(void **st)
{
    (void)st;
    /* from the mean: scale = mean / Gamma(1 + 1/k) */
    fs_dist_t d = make(FS_DIST_WEIBULL);
    d.shape = 0.8;
    d.mean = 154.0 * 86400;
    prepare_ok(&d);
    assert_double_equal(d.scale, 154.0 * 86400 / gsl_sf_gamma(1.0 + 1.0 / 0.8), 1e-6);
    assert_double_equal(gsl_sf_gamma(2.25), tgamma(2.25), 1e-12); /* GSL agrees with libm */
    /* from the scale: mean = scale * Gamma(1 + 1/k) */
    fs_dist_t e = make(FS_DIST_WEIBULL);
    e.shape = 2;
    e.scale = 10;
    prepare_ok(&e);
    /* Gamma(3/2) = sqrt(pi) / 2 */
    assert_double_equal(e.mean, 10 * 0.88622692545275801365, 1e-12);
    /* shape 1 is the exponential: scale = mean */
    fs_dist_t x = make(FS_DIST_WEIBULL);
    x.shape = 1;
    x.mean = 42;
    prepare_ok(&x);
    assert_double_equal(x.scale, 42, 1e-12);
}

static void test_gamma_parameters(void **st)
{
    (void)st;
    fs_dist_t d = make(FS_DIST_GAMMA);
    d.shape = 2.5;
    d.mean = 10;
    prepare_ok(&d);
    assert_double_equal(d.scale, 4, 1e-12); /* theta = mean / k */
    fs_dist_t e = make(FS_DIST_GAMMA);
    e.shape = 0.5;
    e.scale = 3;
    prepare_ok(&e);
    assert_double_equal(e.mean, 1.5, 1e-12);
}

/* ---- sample means against the analytic mean ---- */

typedef struct moments {
    double mean, var;
} moments_t;

/* Draws n values: every one must lie in the support [lo, hi]; the sample
 * mean must be within 5 standard errors sqrt(var / n) of the mean. */
static void check_sample_mean(const fs_dist_t *d, moments_t m, double lo, double hi,
                              uint64_t entity)
{
    enum { N = 1000000 };
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 31337, 0, FS_RNG_DURATION, entity), 0);
    gsl_rng *g = fs_rng_gsl(&r);
    double sum = 0, comp = 0; /* Kahan: 10^6 terms */
    for (int i = 0; i < N; i++) {
        double x = fs_dist_sample(d, g);
        if (!(x >= lo && x <= hi))
            fail_msg("%s draw %d = %g outside [%g, %g]", fs_dist_kind_name(d->kind), i, x, lo, hi);
        double y = x - comp, t = sum + y;
        comp = (t - sum) - y;
        sum = t;
    }
    fs_rng_release(&r);
    double mean = sum / N, se = sqrt(m.var / N);
    assert_double_equal(fs_dist_mean(d), m.mean, 1e-9 * fabs(m.mean));
    if (se == 0)
        assert_double_equal(mean, m.mean, 1e-12 * fabs(m.mean));
    else if (!(fabs(mean - m.mean) < 5 * se))
        fail_msg("%s: sample mean %.6g, analytic %.6g, 5 SE = %.3g", fs_dist_kind_name(d->kind),
                 mean, m.mean, 5 * se);
}

static void test_sample_means(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();

    fs_dist_t c = make(FS_DIST_CONSTANT);
    c.value = 3;
    prepare_ok(&c);
    check_sample_mean(&c, (moments_t){3, 0}, 3, 3, 1);

    fs_dist_t e = make(FS_DIST_EXPONENTIAL);
    e.mean = 2;
    prepare_ok(&e);
    check_sample_mean(&e, (moments_t){2, 4}, 0, INFINITY, 2);

    /* lognormal: var = (exp(s^2) - 1) exp(2 mu + s^2) */
    fs_dist_t l = make(FS_DIST_LOGNORMAL);
    l.median = 10;
    l.sigma = 0.5;
    prepare_ok(&l);
    double mu = log(10.0), s2 = 0.25;
    check_sample_mean(&l, (moments_t){exp(mu + s2 / 2), (exp(s2) - 1) * exp(2 * mu + s2)}, 0,
                      INFINITY, 3);
    fs_dist_t l2 = make(FS_DIST_LOGNORMAL);
    l2.mean = 60;
    l2.sigma = 1.0;
    prepare_ok(&l2);
    check_sample_mean(&l2, (moments_t){60, (exp(1.0) - 1) * 60 * 60}, 0, INFINITY, 4);

    /* weibull: var = scale^2 (Gamma(1 + 2/k) - Gamma(1 + 1/k)^2) */
    fs_dist_t w = make(FS_DIST_WEIBULL);
    w.shape = 1.5;
    w.mean = 100;
    prepare_ok(&w);
    double g1 = gsl_sf_gamma(1 + 1 / 1.5), g2 = gsl_sf_gamma(1 + 2 / 1.5);
    double sc = 100 / g1;
    check_sample_mean(&w, (moments_t){100, sc * sc * (g2 - g1 * g1)}, 0, INFINITY, 5);
    fs_dist_t w2 = make(FS_DIST_WEIBULL);
    w2.shape = 0.8;
    w2.scale = 2;
    prepare_ok(&w2);
    g1 = gsl_sf_gamma(1 + 1 / 0.8);
    g2 = gsl_sf_gamma(1 + 2 / 0.8);
    check_sample_mean(&w2, (moments_t){2 * g1, 4 * (g2 - g1 * g1)}, 0, INFINITY, 6);

    /* gamma: var = k theta^2 */
    fs_dist_t ga = make(FS_DIST_GAMMA);
    ga.shape = 2.5;
    ga.mean = 10;
    prepare_ok(&ga);
    check_sample_mean(&ga, (moments_t){10, 2.5 * 16}, 0, INFINITY, 7);
    fs_dist_t ga2 = make(FS_DIST_GAMMA);
    ga2.shape = 0.5;
    ga2.scale = 3;
    prepare_ok(&ga2);
    check_sample_mean(&ga2, (moments_t){1.5, 0.5 * 9}, 0, INFINITY, 8);

    /* uniform: var = (hi - lo)^2 / 12 */
    fs_dist_t u = make(FS_DIST_UNIFORM);
    u.lo = 2;
    u.hi = 6;
    prepare_ok(&u);
    check_sample_mean(&u, (moments_t){4, 16.0 / 12}, 2, 6, 9);

    /* empirical: the population mean and variance of the values */
    fs_dist_t em = make(FS_DIST_EMPIRICAL);
    static const double vals[] = {1, 2, 7, 10};
    em.values = fs_malloc(sizeof vals);
    assert_non_null(em.values);
    memcpy(em.values, vals, sizeof vals);
    em.n_values = 4;
    prepare_ok(&em);
    assert_double_equal(em.mean, 5, 1e-12);
    check_sample_mean(&em, (moments_t){5, (1 + 4 + 49 + 100) / 4.0 - 25}, 1, 10, 10);
    fs_dist_release(&em);
    assert_null(em.values);
    assert_int_equal(em.n_values, 0);

    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- bad parameters ---- */

/* Prepares d; expects FS_EINVAL with a message containing want. */
static void expect_einval(fs_dist_t d, const char *want, int line)
{
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_dist_prepare(&d, &err);
    if (rc != FS_EINVAL || err.code != FS_EINVAL || !strstr(err.msg, want))
        fail_msg("line %d: rc %d, message \"%s\", expected FS_EINVAL naming \"%s\"", line, rc,
                 err.msg, want);
    /* and without an error object: same code, no crash */
    assert_int_equal(fs_dist_prepare(&d, NULL), FS_EINVAL);
}

#define EXPECT_EINVAL(d, want) expect_einval((d), (want), __LINE__)

static fs_dist_t with(int kind, double a, double b, double c)
{
    /* a, b, c fill the kind's parameters in the order of fs_dist.h */
    fs_dist_t d = make(kind);
    switch (kind) {
    case FS_DIST_CONSTANT: d.value = a; break;
    case FS_DIST_EXPONENTIAL: d.mean = a; break;
    case FS_DIST_LOGNORMAL: d.median = a; d.mean = b; d.sigma = c; break;
    case FS_DIST_WEIBULL:
    case FS_DIST_GAMMA: d.shape = a; d.mean = b; d.scale = c; break;
    case FS_DIST_UNIFORM: d.lo = a; d.hi = b; break;
    default: break;
    }
    return d;
}

static void test_bad_parameters(void **st)
{
    (void)st;
    const double N = NAN, I = INFINITY;
    EXPECT_EINVAL(with(FS_DIST_CONSTANT, -1, N, N), "value");
    EXPECT_EINVAL(with(FS_DIST_CONSTANT, N, N, N), "value");
    EXPECT_EINVAL(with(FS_DIST_CONSTANT, I, N, N), "value");

    EXPECT_EINVAL(with(FS_DIST_EXPONENTIAL, 0, N, N), "exponential needs mean > 0");
    EXPECT_EINVAL(with(FS_DIST_EXPONENTIAL, -3, N, N), "mean");
    EXPECT_EINVAL(with(FS_DIST_EXPONENTIAL, I, N, N), "mean");
    EXPECT_EINVAL(with(FS_DIST_EXPONENTIAL, N, N, N), "mean");

    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, 10, N, -1), "lognormal needs sigma >= 0");
    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, 10, N, N), "sigma");
    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, 10, N, I), "sigma");
    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, N, N, 1), "exactly one of median and mean");
    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, 10, 20, 1), "exactly one of median and mean");
    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, -5, 20, 1), "lognormal needs median > 0");
    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, 0, N, 1), "median");
    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, N, -2, 1), "lognormal needs mean > 0");
    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, 1e300, N, 30), "sigma is too large");
    EXPECT_EINVAL(with(FS_DIST_LOGNORMAL, N, 1, 1e200), "sigma is too large");

    EXPECT_EINVAL(with(FS_DIST_WEIBULL, 0, 10, N), "weibull needs shape > 0");
    EXPECT_EINVAL(with(FS_DIST_WEIBULL, N, 10, N), "shape");
    EXPECT_EINVAL(with(FS_DIST_WEIBULL, 0.8, N, N), "exactly one of mean and scale");
    EXPECT_EINVAL(with(FS_DIST_WEIBULL, 0.8, 10, 5), "exactly one of mean and scale");
    EXPECT_EINVAL(with(FS_DIST_WEIBULL, 0.8, 10, -5), "weibull needs scale > 0");
    EXPECT_EINVAL(with(FS_DIST_WEIBULL, 0.8, -10, 5), "weibull needs mean > 0");
    /* Gamma(1 + 1/k) overflows for tiny shapes: refused, not aborted by GSL */
    EXPECT_EINVAL(with(FS_DIST_WEIBULL, 0.001, 10, N), "weibull needs shape >");
    EXPECT_EINVAL(with(FS_DIST_WEIBULL, 1e-310, N, 1), "weibull needs shape >");

    EXPECT_EINVAL(with(FS_DIST_GAMMA, -1, 10, N), "gamma needs shape > 0");
    EXPECT_EINVAL(with(FS_DIST_GAMMA, 2, N, N), "gamma needs exactly one of mean and scale");
    EXPECT_EINVAL(with(FS_DIST_GAMMA, 2, I, N), "gamma needs mean > 0");
    EXPECT_EINVAL(with(FS_DIST_GAMMA, 2, N, 0), "gamma needs scale > 0");
    EXPECT_EINVAL(with(FS_DIST_GAMMA, 1e-300, N, 1e-300), "gamma parameters give no finite mean");

    EXPECT_EINVAL(with(FS_DIST_UNIFORM, 5, 2, N), "lo <= hi");
    EXPECT_EINVAL(with(FS_DIST_UNIFORM, -1, 2, N), "0 <= lo");
    EXPECT_EINVAL(with(FS_DIST_UNIFORM, N, 2, N), "lo");
    EXPECT_EINVAL(with(FS_DIST_UNIFORM, 1, I, N), "hi");

    fs_dist_t em = make(FS_DIST_EMPIRICAL);
    EXPECT_EINVAL(em, "empirical needs at least one value");
    double bad[] = {1, NAN, 3};
    em.values = bad;
    em.n_values = 3;
    EXPECT_EINVAL(em, "empirical value 2 is not a finite number >= 0");
    bad[1] = -4;
    EXPECT_EINVAL(em, "empirical value 2");

    EXPECT_EINVAL(make(FS_DIST_NONE), "no distribution given");
    EXPECT_EINVAL(make(99), "no distribution given");
}

/* ---- names, copy and release ---- */

static void test_kind_names(void **st)
{
    (void)st;
    static const char *const names[] = {"constant", "exponential", "lognormal", "weibull",
                                        "gamma", "uniform", "empirical"};
    for (int k = FS_DIST_CONSTANT; k <= FS_DIST_EMPIRICAL; k++) {
        assert_string_equal(fs_dist_kind_name(k), names[k - FS_DIST_CONSTANT]);
        assert_int_equal(fs_dist_kind_parse(names[k - FS_DIST_CONSTANT]), k);
    }
    assert_string_equal(fs_dist_kind_name(FS_DIST_NONE), "none");
    assert_string_equal(fs_dist_kind_name(-1), "?");
    assert_string_equal(fs_dist_kind_name(99), "?");
    assert_int_equal(fs_dist_kind_parse("none"), -1);
    assert_int_equal(fs_dist_kind_parse("Weibull"), -1);
    assert_int_equal(fs_dist_kind_parse(""), -1);
    assert_int_equal(fs_dist_kind_parse("normal"), -1);
}

static void test_copy_and_release(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_dist_t src = make(FS_DIST_EMPIRICAL);
    src.n_values = 1000;
    src.values = fs_malloc(src.n_values * sizeof *src.values);
    assert_non_null(src.values);
    for (size_t i = 0; i < src.n_values; i++)
        src.values[i] = (double)i / 10;
    prepare_ok(&src);

    fs_dist_t dst;
    assert_int_equal(fs_dist_copy(&dst, &src), 0);
    assert_true(dst.values != src.values); /* deep */
    assert_memory_equal(dst.values, src.values, src.n_values * sizeof *src.values);
    assert_int_equal(dst.n_values, src.n_values);
    assert_double_equal(dst.mean, src.mean, 0);
    dst.values[0] = 123; /* independent */
    assert_double_equal(src.values[0], 0, 0);
    fs_dist_release(&dst);
    fs_dist_release(&dst); /* twice is harmless */

    /* out of memory: FS_ENOMEM, nothing owned, nothing leaked */
    fs_alloc_fail_after(1);
    int rc = fs_dist_copy(&dst, &src);
    fs_alloc_fail_after(0);
    assert_int_equal(rc, FS_ENOMEM);
    assert_null(dst.values);
    assert_int_equal(dst.n_values, 0);
    fs_dist_release(&dst);

    /* a parametric copy allocates nothing */
    fs_dist_t w = make(FS_DIST_WEIBULL), w2;
    w.shape = 2;
    w.scale = 1;
    prepare_ok(&w);
    fs_alloc_fail_after(1);
    rc = fs_dist_copy(&w2, &w);
    fs_alloc_fail_after(0);
    assert_int_equal(rc, 0);
    assert_double_equal(w2.mean, w.mean, 0);
    assert_null(w2.values);
    fs_dist_release(&w2);

    fs_dist_release(&src);
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_sets_everything_unset),
        cmocka_unit_test(test_lognormal_parameters),
        cmocka_unit_test(test_weibull_parameters),
        cmocka_unit_test(test_gamma_parameters),
        cmocka_unit_test(test_sample_means),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_copy_and_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
