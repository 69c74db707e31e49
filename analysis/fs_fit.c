#include "fs_fit.h"

#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_sf_psi.h>
#include <gsl/gsl_sort.h>

/* Root finding: relative tolerance on the shape and iteration cap. */
#define FIT_REL_TOL 1e-12
#define FIT_MAX_ITER 200
/* Shapes are searched in [FIT_K_MIN, FIT_K_MAX]. */
#define FIT_K_MIN 1e-4
#define FIT_K_MAX 1e4
/* ln(2 pi) / 2 */
#define FIT_HALF_LN_2PI 0.91893853320467274178

static const char *const family_names[FS_FIT_N] = {"lognormal", "weibull", "gamma"};

const char *fs_fit_family_name(int family)
{
    return family >= 0 && family < FS_FIT_N ? family_names[family] : "?";
}

/* Checks the sample and returns mean(ln x), mean(x), max(ln x) and whether
 * the values are all equal. */
static int sample_moments(const double *x, size_t n, const char *what, double *mlog, double *mean,
                          double *maxlog, fs_error_t *err)
{
    if (n < 2)
        return fs_error_set(err, FS_EINVAL, "%s fit: needs at least 2 values (got %zu)", what, n);
    double sl = 0, s = 0, mx = -INFINITY;
    int equal = 1;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !isfinite(x[i]))
            return fs_error_set(err, FS_EINVAL, "%s fit: value %zu is not a finite number > 0 (%g)",
                                what, i + 1, x[i]);
        double l = log(x[i]);
        sl += l;
        s += x[i];
        if (l > mx)
            mx = l;
        equal &= x[i] == x[0];
    }
    if (equal)
        return fs_error_set(err, FS_EINVAL, "%s fit: all %zu values are equal (%g)", what, n, x[0]);
    *mlog = sl / (double)n;
    *mean = s / (double)n;
    *maxlog = mx;
    return 0;
}

static void finish(fs_fit_t *out, int family, double a, double b, const double *x, size_t n)
{
    out->family = family;
    out->a = a;
    out->b = b;
    out->loglik = fs_fit_loglik(out, x, n);
    out->aic = 2.0 * 2 - 2.0 * out->loglik;
    out->ks = NAN;
}

int fs_fit_lognormal(const double *x, size_t n, fs_fit_t *out, fs_error_t *err)
{
    double mu, mean, mx;
    int rc = sample_moments(x, n, "lognormal", &mu, &mean, &mx, err);
    if (rc)
        return rc;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double d = log(x[i]) - mu;
        ss += d * d;
    }
    double sigma = sqrt(ss / (double)n);
    if (!(sigma > 0))
        return fs_error_set(err, FS_EINVAL, "lognormal fit: the logarithms have no spread");
    finish(out, FS_FIT_LOGNORMAL, mu, sigma, x, n);
    return 0;
}

/* Brent's method on f over [lo, hi], which must straddle a root (checked
 * before the solver is set, so that GSL's error handler is never called). */
static int brent(double (*f)(double, void *), void *p, double lo, double hi, double *root)
{
    double flo = f(lo, p), fhi = f(hi, p);
    if (!isfinite(flo) || !isfinite(fhi) || (flo > 0) == (fhi > 0))
        return -1;
    gsl_function F = {.function = f, .params = p};
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!s)
        return -1;
    gsl_root_fsolver_set(s, &F, lo, hi);
    int status = GSL_CONTINUE;
    for (int it = 0; it < FIT_MAX_ITER && status == GSL_CONTINUE; it++) {
        if (gsl_root_fsolver_iterate(s) != GSL_SUCCESS)
            break;
        status = gsl_root_test_interval(gsl_root_fsolver_x_lower(s), gsl_root_fsolver_x_upper(s), 0,
                                        FIT_REL_TOL);
    }
    *root = gsl_root_fsolver_root(s);
    gsl_root_fsolver_free(s);
    return status == GSL_SUCCESS ? 0 : -1;
}

/* Grows [lo, hi] geometrically around a start until f changes sign (f
 * increasing when inc, else decreasing).  Returns -1 if the search leaves
 * [FIT_K_MIN, FIT_K_MAX]. */
static int bracket(double (*f)(double, void *), void *p, double k0, int inc, double *lo, double *hi)
{
    double a = k0, b = k0;
    for (int it = 0; it < 64; it++) {
        double fa = f(a, p), fb = f(b, p);
        int a_below = inc ? fa < 0 : fa > 0; /* root is above a */
        int b_above = inc ? fb > 0 : fb < 0; /* root is below b */
        if (a_below && b_above) {
            *lo = a;
            *hi = b;
            return 0;
        }
        if (!a_below)
            a /= 2;
        if (!b_above)
            b *= 2;
        if (a < FIT_K_MIN || b > FIT_K_MAX)
            return -1;
    }
    return -1;
}

typedef struct wb_params {
    const double *x;
    size_t n;
    double mlog, maxlog;
} wb_params_t;

/* sum w_i ln x_i / sum w_i - 1/k - mean(ln x), with w_i = x_i^k scaled by
 * the largest (w_i = exp(k (ln x_i - max ln x)) <= 1). */
static double wb_score(double k, void *vp)
{
    const wb_params_t *p = vp;
    double sw = 0, swl = 0;
    for (size_t i = 0; i < p->n; i++) {
        double l = log(p->x[i]);
        double w = exp(k * (l - p->maxlog));
        sw += w;
        swl += w * l;
    }
    return swl / sw - 1.0 / k - p->mlog;
}

int fs_fit_weibull(const double *x, size_t n, fs_fit_t *out, fs_error_t *err)
{
    wb_params_t p = {.x = x, .n = n};
    double mean;
    int rc = sample_moments(x, n, "weibull", &p.mlog, &mean, &p.maxlog, err);
    if (rc)
        return rc;
    /* start: the shape of the lognormal-moment match, k ~ 1.2825 / sd(ln x) */
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (log(x[i]) - p.mlog) * (log(x[i]) - p.mlog);
    double sd = sqrt(ss / (double)n);
    double k0 = sd > 0 ? 1.2825 / sd : 1.0;
    if (k0 < 2 * FIT_K_MIN)
        k0 = 2 * FIT_K_MIN;
    if (k0 > FIT_K_MAX / 2)
        k0 = FIT_K_MAX / 2;
    double lo, hi, k;
    if (bracket(wb_score, &p, k0, 1, &lo, &hi) || brent(wb_score, &p, lo, hi, &k))
        return fs_error_set(err, FS_EINVAL, "weibull fit: no shape in [%g, %g] solves the likelihood "
                            "equation", FIT_K_MIN, FIT_K_MAX);
    /* scale = (mean x^k)^(1/k) = max x * (mean exp(k (ln x - max)))^(1/k) */
    double sw = 0;
    for (size_t i = 0; i < n; i++)
        sw += exp(k * (log(x[i]) - p.maxlog));
    double scale = exp(p.maxlog + log(sw / (double)n) / k);
    finish(out, FS_FIT_WEIBULL, k, scale, x, n);
    return 0;
}

/* ln k - psi(k) - s (decreasing in k). */
static double ga_score(double k, void *vp)
{
    double s = *(const double *)vp;
    return log(k) - gsl_sf_psi(k) - s;
}

int fs_fit_gamma(const double *x, size_t n, fs_fit_t *out, fs_error_t *err)
{
    double mlog, mean, mx;
    int rc = sample_moments(x, n, "gamma", &mlog, &mean, &mx, err);
    if (rc)
        return rc;
    double s = log(mean) - mlog; /* > 0 by Jensen unless all equal */
    if (!(s > 0))
        return fs_error_set(err, FS_EINVAL, "gamma fit: the sample has no spread");
    /* Choi & Wette (1969): within 1.5% of the root */
    double k0 = (3 - s + sqrt((s - 3) * (s - 3) + 24 * s)) / (12 * s);
    if (k0 < 2 * FIT_K_MIN)
        k0 = 2 * FIT_K_MIN;
    if (k0 > FIT_K_MAX / 2)
        k0 = FIT_K_MAX / 2;
    double lo, hi, k;
    if (bracket(ga_score, &s, k0, 0, &lo, &hi) || brent(ga_score, &s, lo, hi, &k))
        return fs_error_set(err, FS_EINVAL, "gamma fit: no shape in [%g, %g] solves the likelihood "
                            "equation", FIT_K_MIN, FIT_K_MAX);
    finish(out, FS_FIT_GAMMA, k, mean / k, x, n);
    return 0;
}

double fs_fit_loglik(const fs_fit_t *f, const double *x, size_t n)
{
    double ll = 0;
    switch (f->family) {
    case FS_FIT_LOGNORMAL: {
        double mu = f->a, s = f->b, c = -log(s) - FIT_HALF_LN_2PI;
        for (size_t i = 0; i < n; i++) {
            double l = log(x[i]), z = (l - mu) / s;
            ll += c - l - 0.5 * z * z;
        }
        break;
    }
    case FS_FIT_WEIBULL: {
        double k = f->a, lam = f->b, c = log(k) - k * log(lam);
        for (size_t i = 0; i < n; i++) {
            double l = log(x[i]);
            ll += c + (k - 1) * l - exp(k * (l - log(lam)));
        }
        break;
    }
    case FS_FIT_GAMMA: {
        double k = f->a, th = f->b, c = -gsl_sf_lngamma(k) - k * log(th);
        for (size_t i = 0; i < n; i++)
            ll += c + (k - 1) * log(x[i]) - x[i] / th;
        break;
    }
    default:
        return NAN;
    }
    return ll;
}

double fs_fit_cdf(const fs_fit_t *f, double x)
{
    if (!(x > 0))
        return 0;
    switch (f->family) {
    case FS_FIT_LOGNORMAL: return gsl_cdf_lognormal_P(x, f->a, f->b);
    case FS_FIT_WEIBULL: return gsl_cdf_weibull_P(x, f->b, f->a);
    case FS_FIT_GAMMA: return gsl_cdf_gamma_P(x, f->a, f->b);
    default: return NAN;
    }
}

double fs_fit_quantile(const fs_fit_t *f, double p)
{
    if (!(p > 0 && p < 1))
        return NAN;
    switch (f->family) {
    case FS_FIT_LOGNORMAL: return gsl_cdf_lognormal_Pinv(p, f->a, f->b);
    case FS_FIT_WEIBULL: return gsl_cdf_weibull_Pinv(p, f->b, f->a);
    case FS_FIT_GAMMA: return gsl_cdf_gamma_Pinv(p, f->a, f->b);
    default: return NAN;
    }
}

double fs_fit_ks(const fs_fit_t *f, const double *sorted, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double F = fs_fit_cdf(f, sorted[i]);
        double up = (double)(i + 1) / (double)n - F, dn = F - (double)i / (double)n;
        if (up > d)
            d = up;
        if (dn > d)
            d = dn;
    }
    return d;
}

int fs_fit_all(double *x, size_t n, fs_fit_t out[FS_FIT_N], int *best, fs_error_t *err)
{
    int (*const fits[FS_FIT_N])(const double *, size_t, fs_fit_t *, fs_error_t *) = {
        fs_fit_lognormal, fs_fit_weibull, fs_fit_gamma};
    gsl_sort(x, 1, n);
    int rc_first = 0;
    fs_error_t e_first = {0};
    *best = -1;
    for (int i = 0; i < FS_FIT_N; i++) {
        fs_error_t e;
        int rc = fits[i](x, n, &out[i], &e);
        if (rc) {
            out[i] = (fs_fit_t){.family = i, .a = NAN, .b = NAN, .loglik = -INFINITY,
                                .aic = INFINITY, .ks = NAN};
            if (!rc_first) {
                rc_first = rc;
                e_first = e;
            }
            continue;
        }
        out[i].ks = fs_fit_ks(&out[i], x, n);
        if (*best < 0 || out[i].aic < out[*best].aic)
            *best = i;
    }
    if (*best < 0) {
        if (err)
            *err = e_first;
        return rc_first;
    }
    return 0;
}

int fs_fit_to_dist(const fs_fit_t *f, fs_dist_t *d, fs_error_t *err)
{
    fs_dist_init(d);
    switch (f->family) {
    case FS_FIT_LOGNORMAL:
        d->kind = FS_DIST_LOGNORMAL;
        d->median = exp(f->a);
        d->sigma = f->b;
        break;
    case FS_FIT_WEIBULL:
        d->kind = FS_DIST_WEIBULL;
        d->shape = f->a;
        d->scale = f->b;
        break;
    case FS_FIT_GAMMA:
        d->kind = FS_DIST_GAMMA;
        d->shape = f->a;
        d->scale = f->b;
        break;
    default:
        return fs_error_set(err, FS_EINVAL, "fit: unknown family %d", f->family);
    }
    return fs_dist_prepare(d, err);
}
