#include "fs_dist.h"
#include "fs_alloc.h"

#include <math.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_statistics_double.h>

static const char *const kind_names[] = {
    [FS_DIST_NONE] = "none",           [FS_DIST_CONSTANT] = "constant",
    [FS_DIST_EXPONENTIAL] = "exponential", [FS_DIST_LOGNORMAL] = "lognormal",
    [FS_DIST_WEIBULL] = "weibull",     [FS_DIST_GAMMA] = "gamma",
    [FS_DIST_UNIFORM] = "uniform",     [FS_DIST_EMPIRICAL] = "empirical",
};

const char *fs_dist_kind_name(int kind)
{
    if (kind < 0 || kind > FS_DIST_EMPIRICAL)
        return "?";
    return kind_names[kind];
}

int fs_dist_kind_parse(const char *name)
{
    for (int k = FS_DIST_CONSTANT; k <= FS_DIST_EMPIRICAL; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

void fs_dist_init(fs_dist_t *d)
{
    memset(d, 0, sizeof *d);
    d->kind = FS_DIST_NONE;
    d->value = d->mean = d->median = d->sigma = NAN;
    d->shape = d->scale = d->lo = d->hi = d->mu = NAN;
}

void fs_dist_release(fs_dist_t *d)
{
    fs_free(d->values);
    d->values = NULL;
    d->n_values = 0;
}

int fs_dist_copy(fs_dist_t *dst, const fs_dist_t *src)
{
    *dst = *src;
    dst->values = NULL;
    if (src->n_values) {
        dst->values = fs_malloc(src->n_values * sizeof *src->values);
        if (!dst->values) {
            dst->n_values = 0;
            return FS_ENOMEM;
        }
        memcpy(dst->values, src->values, src->n_values * sizeof *src->values);
    }
    return 0;
}

static int pos(double x) { return isfinite(x) && x > 0; }
/* A parameter is given when it is not NAN (unset); a given parameter must be
 * valid even if another one would do. */
static int given(double x) { return !isnan(x); }

int fs_dist_prepare(fs_dist_t *d, fs_error_t *err)
{
    const char *k = fs_dist_kind_name(d->kind);
    switch (d->kind) {
    case FS_DIST_CONSTANT:
        if (!isfinite(d->value) || d->value < 0)
            return fs_error_set(err, FS_EINVAL, "constant needs value >= 0");
        return 0;
    case FS_DIST_EXPONENTIAL:
        if (!pos(d->mean))
            return fs_error_set(err, FS_EINVAL, "exponential needs mean > 0");
        return 0;
    case FS_DIST_LOGNORMAL:
        if (!isfinite(d->sigma) || d->sigma < 0)
            return fs_error_set(err, FS_EINVAL, "lognormal needs sigma >= 0");
        if (given(d->median) && !pos(d->median))
            return fs_error_set(err, FS_EINVAL, "lognormal needs median > 0");
        if (given(d->mean) && !pos(d->mean))
            return fs_error_set(err, FS_EINVAL, "lognormal needs mean > 0");
        if (pos(d->median) == pos(d->mean))
            return fs_error_set(err, FS_EINVAL, "lognormal needs exactly one of median and mean (> 0)");
        if (pos(d->median)) {
            d->mu = log(d->median);
            d->mean = exp(d->mu + d->sigma * d->sigma / 2);
        } else {
            d->mu = log(d->mean) - d->sigma * d->sigma / 2;
            d->median = exp(d->mu);
        }
        if (!pos(d->mean) || !pos(d->median))
            return fs_error_set(err, FS_EINVAL, "lognormal sigma is too large: the mean or median is out of range");
        return 0;
    case FS_DIST_WEIBULL:
    case FS_DIST_GAMMA:
        if (!pos(d->shape))
            return fs_error_set(err, FS_EINVAL, "%s needs shape > 0", k);
        if (given(d->scale) && !pos(d->scale))
            return fs_error_set(err, FS_EINVAL, "%s needs scale > 0", k);
        if (given(d->mean) && !pos(d->mean))
            return fs_error_set(err, FS_EINVAL, "%s needs mean > 0", k);
        if (pos(d->scale) == pos(d->mean))
            return fs_error_set(err, FS_EINVAL, "%s needs exactly one of mean and scale (> 0)", k);
        if (d->kind == FS_DIST_WEIBULL) {
            /* gsl_sf_gamma calls the GSL error handler (abort by default)
             * beyond GSL_SF_GAMMA_XMAX: refuse such shapes first */
            double x = 1.0 + 1.0 / d->shape;
            if (!(x < GSL_SF_GAMMA_XMAX))
                return fs_error_set(err, FS_EINVAL, "weibull needs shape > %.4g (the mean overflows)",
                                    1.0 / (GSL_SF_GAMMA_XMAX - 1.0));
            double g = gsl_sf_gamma(x);
            if (pos(d->mean))
                d->scale = d->mean / g;
            else
                d->mean = d->scale * g;
        } else {
            if (pos(d->mean))
                d->scale = d->mean / d->shape;
            else
                d->mean = d->scale * d->shape;
        }
        if (!pos(d->scale) || !pos(d->mean))
            return fs_error_set(err, FS_EINVAL, "%s parameters give no finite mean", k);
        return 0;
    case FS_DIST_UNIFORM:
        if (!isfinite(d->lo) || !isfinite(d->hi) || d->lo < 0 || d->hi < d->lo)
            return fs_error_set(err, FS_EINVAL, "uniform needs 0 <= lo <= hi");
        return 0;
    case FS_DIST_EMPIRICAL:
        if (d->n_values == 0)
            return fs_error_set(err, FS_EINVAL, "empirical needs at least one value");
        for (size_t i = 0; i < d->n_values; i++)
            if (!isfinite(d->values[i]) || d->values[i] < 0)
                return fs_error_set(err, FS_EINVAL, "empirical value %zu is not a finite number >= 0", i + 1);
        d->mean = gsl_stats_mean(d->values, 1, d->n_values);
        return 0;
    default:
        return fs_error_set(err, FS_EINVAL, "no distribution given");
    }
}

double fs_dist_sample(const fs_dist_t *d, gsl_rng *r)
{
    switch (d->kind) {
    case FS_DIST_CONSTANT:
        return d->value;
    case FS_DIST_EXPONENTIAL:
        return gsl_ran_exponential(r, d->mean);
    case FS_DIST_LOGNORMAL:
        return gsl_ran_lognormal(r, d->mu, d->sigma);
    case FS_DIST_WEIBULL:
        return gsl_ran_weibull(r, d->scale, d->shape);
    case FS_DIST_GAMMA:
        return gsl_ran_gamma(r, d->shape, d->scale);
    case FS_DIST_UNIFORM:
        return gsl_ran_flat(r, d->lo, d->hi);
    case FS_DIST_EMPIRICAL:
        return d->values[gsl_rng_uniform_int(r, d->n_values)];
    default:
        return NAN;
    }
}

double fs_dist_mean(const fs_dist_t *d)
{
    switch (d->kind) {
    case FS_DIST_CONSTANT:
        return d->value;
    case FS_DIST_UNIFORM:
        return (d->lo + d->hi) / 2;
    default:
        return d->mean;
    }
}
