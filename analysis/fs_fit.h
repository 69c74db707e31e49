/*
 * fs_fit: maximum-likelihood fits of positive samples (job run times, in
 * seconds) to the lognormal, Weibull and gamma distributions, their
 * Kolmogorov-Smirnov distance and Akaike information criterion, and the
 * choice of the best (GSL).  Pure functions on arrays: no I/O, no state.
 *
 *   lognormal  closed form: mu = mean(ln x), sigma^2 = mean((ln x - mu)^2)
 *              (the MLE divides by n, not n - 1)
 *   weibull    the shape k solves  sum x^k ln x / sum x^k - 1/k - mean(ln x) = 0
 *              (a strictly increasing function of k; Brent's method,
 *              gsl_root_fsolver_brent), then scale = (mean x^k)^(1/k); the
 *              powers are computed as exp(k (ln x - max ln x)) so that no
 *              sample overflows
 *   gamma      the shape k solves  ln k - psi(k) = ln(mean x) - mean(ln x)
 *              (strictly decreasing in k; Brent again, started from the
 *              Choi-Wette approximation), then scale = mean x / k
 *
 * Every fit has two parameters, so AIC = 4 - 2 ln L, and choosing the
 * smallest AIC is choosing the largest likelihood; the KS distance
 * D = sup |F_n(x) - F(x)| is reported beside it (not used to choose: it is
 * insensitive in the tails, where the run-time mass of a GPU fleet is).
 *
 * Inputs: n >= 2 finite values > 0, not all equal (otherwise FS_EINVAL).
 * Nothing is allocated except where a function says so.
 */
#ifndef FS_FIT_H
#define FS_FIT_H

#include <stddef.h>

#include "../sim/fs_dist.h"
#include "../sim/fs_error.h"

/* The three families fitted, in the order fs_fit_all reports them. */
enum { FS_FIT_LOGNORMAL = 0, FS_FIT_WEIBULL = 1, FS_FIT_GAMMA = 2, FS_FIT_N = 3 };

typedef struct fs_fit {
    int family;         /* FS_FIT_LOGNORMAL, FS_FIT_WEIBULL, FS_FIT_GAMMA */
    double a;           /* lognormal: mu (of ln x); weibull, gamma: shape k */
    double b;           /* lognormal: sigma (of ln x); weibull, gamma: scale (seconds) */
    double loglik;      /* ln L at the estimate */
    double aic;         /* 2 * 2 - 2 ln L */
    double ks;          /* Kolmogorov-Smirnov distance to the sample, in [0, 1] */
} fs_fit_t;

/* Family names: "lognormal", "weibull", "gamma". */
const char *fs_fit_family_name(int family);

/* Maximum-likelihood fits (ks is left NaN: see fs_fit_ks).  Returns 0 or
 * FS_EINVAL (fewer than 2 values, a value <= 0 or not finite, all values
 * equal, or a root that cannot be bracketed). */
int fs_fit_lognormal(const double *x, size_t n, fs_fit_t *out, fs_error_t *err);
int fs_fit_weibull(const double *x, size_t n, fs_fit_t *out, fs_error_t *err);
int fs_fit_gamma(const double *x, size_t n, fs_fit_t *out, fs_error_t *err);

/* The log-likelihood of the sample under a fitted (or any) parameter set. */
double fs_fit_loglik(const fs_fit_t *f, const double *x, size_t n);

/* The fitted CDF at x (gsl_cdf_lognormal_P, gsl_cdf_weibull_P,
 * gsl_cdf_gamma_P). */
double fs_fit_cdf(const fs_fit_t *f, double x);

/* Quantile function (the inverse CDF) at p in (0, 1). */
double fs_fit_quantile(const fs_fit_t *f, double p);

/* KS distance of an ascending sample to the fitted CDF:
 * max over i of max(i/n - F(x_i), F(x_i) - (i-1)/n), i = 1..n. */
double fs_fit_ks(const fs_fit_t *f, const double *sorted, size_t n);

/* Sorts x ascending in place, fits the three families, fills out[FS_FIT_N]
 * (ks included) and sets *best to the index with the smallest AIC (a
 * family whose fit failed gets aic = +inf; FS_EINVAL when all fail). */
int fs_fit_all(double *x, size_t n, fs_fit_t out[FS_FIT_N], int *best, fs_error_t *err);

/* The fit as a prepared fs_dist_t (lognormal: median = e^mu and sigma;
 * weibull, gamma: shape and scale).  d need not be initialised.  Returns 0
 * or FS_EINVAL. */
int fs_fit_to_dist(const fs_fit_t *f, fs_dist_t *d, fs_error_t *err);

#endif
