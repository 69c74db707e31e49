/*
 * fs_fit: maximum-likelihood fits against known values.
 *  - lognormal against its closed form on a hand-made sample, and the
 *    log-likelihood against a sum of gsl_ran_lognormal_pdf;
 *  - samples of 20,000 drawn from known lognormal, Weibull and gamma
 *    distributions: the fitted parameters are within 5 asymptotic standard
 *    errors (the inverse Fisher information / n) of the truth, and AIC picks
 *    the family the sample came from;
 *  - the estimate is a maximum: moving either parameter lowers ln L;
 *  - the KS distance of a 3-point sample computed by hand, and against a
 *    brute-force sup over a fine grid;
 *  - quantile(cdf(x)) = x, fs_fit_to_dist gives the fitted mean;
 *  - every error path (too few values, a value <= 0, all equal).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_psi.h>

#include "analysis/fs_fit.h"
#include "sim/fs_alloc.h"
#include "fs_test_util.h"

#define N_DRAW 20000
#define EULER_GAMMA 0.57721566490153286061
#define PI_ 3.14159265358979323846

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
    assert_int_equal(fs_alloc_live(), live0);
    return 0;
}

static void test_lognormal_closed_form(void **state)
{
    (void)state;
    /* ln x = 0, 1, 2, 3 (x ln 2): mu = 1.5 ln 2, sigma^2 = 1.25 (ln 2)^2 */
    const double x[] = {1, 2, 4, 8};
    fs_fit_t f;
    fs_error_t err;
    assert_int_equal(fs_fit_lognormal(x, 4, &f, &err), 0);
    assert_int_equal(f.family, FS_FIT_LOGNORMAL);
    assert_double_equal(f.a, 1.5 * log(2.0), 1e-15);
    assert_double_equal(f.b, sqrt(1.25) * log(2.0), 1e-15);
    double ll = 0;
    for (size_t i = 0; i < 4; i++)
        ll += log(gsl_ran_lognormal_pdf(x[i], f.a, f.b));
    assert_double_equal(f.loglik, ll, 1e-12);
    assert_double_equal(f.aic, 4 - 2 * ll, 1e-12);
    assert_true(isnan(f.ks)); /* only fs_fit_all and fs_fit_ks compute it */
}

/* Draws N_DRAW values of one family from a fixed generator. */
static double *draw(int family, double a, double b, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    double *x = malloc(N_DRAW * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < N_DRAW; i++)
        x[i] = family == FS_FIT_LOGNORMAL ? gsl_ran_lognormal(r, a, b)
               : family == FS_FIT_WEIBULL ? gsl_ran_weibull(r, b, a)
                                          : gsl_ran_gamma(r, a, b);
    gsl_rng_free(r);
    return x;
}

/* Moving a parameter by a small relative step lowers the likelihood. */
static void check_maximum(const fs_fit_t *f, const double *x, size_t n)
{
    for (int which = 0; which < 2; which++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            fs_fit_t g = *f;
            double *p = which ? &g.b : &g.a;
            *p *= 1 + sgn * 1e-3;
            assert_true(fs_fit_loglik(&g, x, n) < f->loglik);
        }
}

static void fit_and_check(int family, double a, double b, double se_a, double se_b)
{
    double *x = draw(family, a, b, 12345 + (unsigned long)family);
    fs_fit_t all[FS_FIT_N];
    int best = -1;
    fs_error_t err;
    assert_int_equal(fs_fit_all(x, N_DRAW, all, &best, &err), 0);
    for (size_t i = 1; i < N_DRAW; i++)
        assert_true(x[i - 1] <= x[i]); /* sorted in place */
    const fs_fit_t *f = &all[family];
    if (fabs(f->a - a) > 5 * se_a || fabs(f->b - b) > 5 * se_b)
        fail_msg("%s: fitted (%g, %g), true (%g, %g), 5 se (%g, %g)", fs_fit_family_name(family),
                 f->a, f->b, a, b, 5 * se_a, 5 * se_b);
    assert_int_equal(best, family);
    /* KS of the right family: below the 1% critical value 1.628 / sqrt(n) */
    assert_true(f->ks < 1.628 / sqrt(N_DRAW));
    for (int i = 0; i < FS_FIT_N; i++) {
        assert_int_equal(all[i].family, i);
        assert_true(all[i].ks >= 0 && all[i].ks <= 1);
        assert_double_equal(all[i].aic, 4 - 2 * all[i].loglik, 1e-9);
        assert_double_equal(all[i].ks, fs_fit_ks(&all[i], x, N_DRAW), 0);
        check_maximum(&all[i], x, N_DRAW);
    }
    free(x);
}

static void test_recover_lognormal(void **state)
{
    (void)state;
    double mu = log(2700.0), s = 1.5, n = N_DRAW;
    fit_and_check(FS_FIT_LOGNORMAL, mu, s, s / sqrt(n), s / sqrt(2 * n));
}

static void test_recover_weibull(void **state)
{
    (void)state;
    /* var(k) = 6 k^2 / (pi^2 n), var(lambda) = lambda^2 (1 + 6 (1 - gamma)^2 / pi^2) / (k^2 n) */
    double k = 0.7, lam = 5000, n = N_DRAW;
    double se_k = sqrt(6 * k * k / (PI_ * PI_ * n));
    double se_l = lam / k * sqrt((1 + 6 * (1 - EULER_GAMMA) * (1 - EULER_GAMMA) / (PI_ * PI_)) / n);
    fit_and_check(FS_FIT_WEIBULL, k, lam, se_k, se_l);
}

static void test_recover_gamma(void **state)
{
    (void)state;
    /* Fisher information per value [[psi'(k), 1/theta], [1/theta, k/theta^2]] */
    double k = 3, th = 600, n = N_DRAW, t = gsl_sf_psi_1(k);
    double se_k = sqrt(k / (n * (k * t - 1)));
    double se_t = sqrt(th * th * t / (n * (k * t - 1)));
    fit_and_check(FS_FIT_GAMMA, k, th, se_k, se_t);
}

static void test_ks_by_hand(void **state)
{
    (void)state;
    /* standard lognormal at 0.5, 1, 2: F = 0.2441086, 0.5, 0.7558914;
     * D = max(0.2441 - 0, 1 - 0.7559) = 0.2441086 */
    fs_fit_t f = {.family = FS_FIT_LOGNORMAL, .a = 0, .b = 1};
    const double x[] = {0.5, 1, 2};
    assert_double_equal(fs_fit_ks(&f, x, 3), 0.24410859578558275, 1e-12);
    /* brute force: sup over a grid of |F_n(t) - F(t)|, F_n right-continuous,
     * also just below each jump */
    fs_fit_t g = {.family = FS_FIT_GAMMA, .a = 2, .b = 3};
    const double y[] = {0.7, 1.9, 2.5, 4, 4, 6.1, 9.5, 17};
    double brute = 0;
    for (double t = 0.001; t < 40; t += 0.001) {
        size_t c = 0;
        for (size_t i = 0; i < 8; i++)
            c += y[i] <= t;
        double d = fabs((double)c / 8 - fs_fit_cdf(&g, t));
        if (d > brute)
            brute = d;
    }
    for (size_t i = 0; i < 8; i++) {
        size_t c = 0;
        for (size_t j = 0; j < 8; j++)
            c += y[j] < y[i];
        double d = fabs((double)c / 8 - fs_fit_cdf(&g, y[i]));
        if (d > brute)
            brute = d;
    }
    assert_double_equal(fs_fit_ks(&g, y, 8), brute, 1e-3);
    assert_true(fs_fit_ks(&g, y, 8) >= brute - 1e-12);
}

static void test_quantile_and_dist(void **state)
{
    (void)state;
    const fs_fit_t fits[] = {
        {.family = FS_FIT_LOGNORMAL, .a = log(2700.0), .b = 1.5},
        {.family = FS_FIT_WEIBULL, .a = 0.7, .b = 5000},
        {.family = FS_FIT_GAMMA, .a = 3, .b = 600},
    };
    const double means[] = {2700 * exp(1.125), 5000 * tgamma(1 + 1 / 0.7), 1800};
    for (size_t i = 0; i < 3; i++) {
        for (double p = 0.01; p < 1; p += 0.07)
            assert_double_equal(fs_fit_cdf(&fits[i], fs_fit_quantile(&fits[i], p)), p, 1e-9);
        assert_true(isnan(fs_fit_quantile(&fits[i], 0)) && isnan(fs_fit_quantile(&fits[i], 1)));
        assert_double_equal(fs_fit_cdf(&fits[i], 0), 0, 0);
        fs_dist_t d;
        fs_error_t err;
        assert_int_equal(fs_fit_to_dist(&fits[i], &d, &err), 0);
        assert_double_equal(fs_dist_mean(&d), means[i], 1e-9 * means[i]);
        fs_dist_release(&d);
    }
    fs_fit_t bad = {.family = 7};
    fs_dist_t d;
    fs_error_t err;
    assert_int_equal(fs_fit_to_dist(&bad, &d, &err), FS_EINVAL);
    assert_string_equal(fs_fit_family_name(FS_FIT_WEIBULL), "weibull");
    assert_string_equal(fs_fit_family_name(9), "?");
}

static void test_errors(void **state)
{
    (void)state;
    fs_fit_t f;
    fs_error_t err;
    const double one[] = {5};
    const double neg[] = {5, -1, 3};
    const double inf[] = {5, INFINITY};
    const double eq[] = {7, 7, 7};
    int (*const fits[])(const double *, size_t, fs_fit_t *, fs_error_t *) = {
        fs_fit_lognormal, fs_fit_weibull, fs_fit_gamma};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(fits[i](one, 1, &f, &err), FS_EINVAL);
        assert_non_null(strstr(err.msg, "needs at least 2 values (got 1)"));
        assert_int_equal(fits[i](neg, 3, &f, &err), FS_EINVAL);
        assert_non_null(strstr(err.msg, "value 2 is not a finite number > 0"));
        assert_int_equal(fits[i](inf, 2, &f, &err), FS_EINVAL);
        assert_non_null(strstr(err.msg, "value 2 is not a finite number > 0"));
        assert_int_equal(fits[i](eq, 3, &f, &err), FS_EINVAL);
        assert_non_null(strstr(err.msg, "all 3 values are equal"));
    }
    fs_fit_t all[FS_FIT_N];
    int best = 5;
    double eq2[] = {7, 7, 7};
    assert_int_equal(fs_fit_all(eq2, 3, all, &best, &err), FS_EINVAL);
    assert_int_equal(best, -1);
    assert_non_null(strstr(err.msg, "lognormal fit: all 3 values are equal"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lognormal_closed_form, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_lognormal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_weibull, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_gamma, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ks_by_hand, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quantile_and_dist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
