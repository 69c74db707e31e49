/*
 * fs_ci: confidence intervals across replications (GSL).
 *
 * Student-t intervals: mean +- t_{(1+level)/2, n-1} * sd / sqrt(n), with
 * gsl_cdf_tdist_Pinv for the quantile and gsl_stats_mean/gsl_stats_sd for
 * the moments.  NaN inputs are skipped (a replication that has no value
 * for a metric, e.g. no job completed).  With n < 2 the half-width is NaN.
 * Paired intervals (common random numbers): the interval of a[i] - b[i]
 * over the pairs where both are finite.
 */
#ifndef FS_CI_H
#define FS_CI_H

#include <stddef.h>

typedef struct fs_ci {
    size_t n;       /* finite values used */
    double mean;
    double sd;      /* sample standard deviation (n - 1) */
    double half;    /* half-width of the interval */
    double lo, hi;  /* mean -+ half */
    double level;   /* e.g. 0.95 */
} fs_ci_t;

/* Returns 0, or FS_EINVAL for a level outside (0, 1) or FS_ENOMEM. */
int fs_ci_t_interval(const double *x, size_t n, double level, fs_ci_t *out);

/* Interval of the paired differences a[i] - b[i].  "significant" means the
 * interval excludes 0 (fs_ci_significant). */
int fs_ci_paired(const double *a, const double *b, size_t n, double level, fs_ci_t *out);

/* 1 if the interval excludes zero, 0 if not, -1 if undefined (NaN). */
int fs_ci_significant(const fs_ci_t *ci);

#endif
