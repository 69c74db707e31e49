#include "fs_ci.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_error.h"

#include <math.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

static int interval(double *v, size_t k, double level, fs_ci_t *out)
{
    out->n = k;
    out->level = level;
    out->mean = k ? gsl_stats_mean(v, 1, k) : NAN;
    out->sd = k >= 2 ? gsl_stats_sd_m(v, 1, k, out->mean) : NAN;
    out->half = k >= 2 ? gsl_cdf_tdist_Pinv((1 + level) / 2, (double)(k - 1)) * out->sd / sqrt((double)k)
                       : NAN;
    out->lo = out->mean - out->half;
    out->hi = out->mean + out->half;
    return 0;
}

int fs_ci_t_interval(const double *x, size_t n, double level, fs_ci_t *out)
{
    if (!(level > 0 && level < 1))
        return FS_EINVAL;
    double *v = fs_malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return FS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            v[k++] = x[i];
    int rc = interval(v, k, level, out);
    fs_free(v);
    return rc;
}

int fs_ci_paired(const double *a, const double *b, size_t n, double level, fs_ci_t *out)
{
    if (!(level > 0 && level < 1))
        return FS_EINVAL;
    double *v = fs_malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return FS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(a[i]) && isfinite(b[i]))
            v[k++] = a[i] - b[i];
    int rc = interval(v, k, level, out);
    fs_free(v);
    return rc;
}

int fs_ci_significant(const fs_ci_t *ci)
{
    if (isnan(ci->lo) || isnan(ci->hi))
        return -1;
    return ci->lo > 0 || ci->hi < 0;
}
