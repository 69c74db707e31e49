/*
 * fs_waits: pooled and per-replication wait percentiles (see fs_waits.h).
 */
#include "fs_waits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "../sim/fs_alloc.h"
#include "fs_h5read.h"

int fs_waits_read(const char *path, double warmup_s, double **waits, size_t *n,
                  fs_error_t *err)
{
    *waits = NULL;
    *n = 0;
    fs_h5file_t *f;
    int rc = fs_h5read_open(path, &f, err);
    if (rc)
        return rc;
    size_t rows = 0;
    double *w = NULL, *sub = NULL;
    if ((rc = fs_h5read_rows(f, "jobs", &rows, err)))
        goto out;
    w = fs_malloc((rows ? rows : 1) * sizeof *w);
    sub = fs_malloc((rows ? rows : 1) * sizeof *sub);
    if (!w || !sub) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = fs_h5read_f64(f, "jobs", "wait", w, err)) ||
        (rc = fs_h5read_f64(f, "jobs", "submit", sub, err)))
        goto out;
    size_t k = 0;
    for (size_t i = 0; i < rows; i++)
        if (!isnan(w[i]) && sub[i] >= warmup_s)
            w[k++] = w[i];
    *waits = w;
    *n = k;
    w = NULL;
out:
    fs_free(w);
    fs_free(sub);
    fs_h5read_close(f);
    return rc;
}

int fs_waits_quantiles(double *x, size_t n, const double *p, size_t k, double *out)
{
    for (size_t j = 0; j < k; j++)
        if (!(p[j] >= 0 && p[j] <= 1))
            return FS_EINVAL;
    if (n)
        gsl_sort(x, 1, n);
    for (size_t j = 0; j < k; j++)
        out[j] = n ? gsl_stats_quantile_from_sorted_data(x, 1, n, p[j]) : NAN;
    return 0;
}

int fs_waits_summarize(const double *const *waits, const size_t *n, size_t reps, const double *p,
                       size_t k, double level, fs_wait_pct_t *out)
{
    if (!(level > 0 && level < 1))
        return FS_EINVAL;
    size_t total = 0;
    for (size_t r = 0; r < reps; r++)
        total += n[r];
    double *all = fs_malloc((total ? total : 1) * sizeof *all);
    double *one = NULL;
    double *q = fs_malloc((k ? k : 1) * sizeof *q);
    double *per = fs_malloc((reps * (k ? k : 1) + 1) * sizeof *per);  /* per[j * reps + r] */
    int rc = 0;
    if (!all || !q || !per) {
        rc = FS_ENOMEM;
        goto out;
    }
    size_t at = 0;
    for (size_t r = 0; r < reps; r++) {
        if (n[r])
            memcpy(all + at, waits[r], n[r] * sizeof *all);
        at += n[r];
        fs_free(one);
        if (!(one = fs_malloc((n[r] ? n[r] : 1) * sizeof *one))) {
            rc = FS_ENOMEM;
            goto out;
        }
        if (n[r])
            memcpy(one, waits[r], n[r] * sizeof *one);
        if ((rc = fs_waits_quantiles(one, n[r], p, k, q)))
            goto out;
        for (size_t j = 0; j < k; j++)
            per[j * reps + r] = q[j];
    }
    if ((rc = fs_waits_quantiles(all, total, p, k, q)))
        goto out;
    for (size_t j = 0; j < k; j++) {
        out[j].p = p[j];
        out[j].pooled = q[j];
        if ((rc = fs_ci_t_interval(per + j * reps, reps, level, &out[j].per_rep)))
            goto out;
    }
out:
    fs_free(all);
    fs_free(one);
    fs_free(q);
    fs_free(per);
    return rc;
}
