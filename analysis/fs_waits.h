/*
 * fs_waits: queue-wait percentiles across replications.
 *
 * A sweep point has R replications; its wait percentiles come two ways:
 *   pooled          every in-stats wait of every replication in one sample,
 *                   then the quantile (the "planner's CDF" of the point);
 *   per replication the quantile of each replication alone, then the mean,
 *                   sd and Student-t interval of those R values (fs_ci):
 *                   the honest interval, since jobs within one run are
 *                   correlated and replications are independent.
 * "In stats" is the /summary definition (docs/results.md): started (wait
 * not NaN) and submitted at or after the warm-up.  Quantiles are type 7
 * (R's default, numpy's "linear"), as in /summary, via GSL.
 *
 * Owns nothing past a call: fs_waits_read hands its array to the caller.
 */
#ifndef FS_WAITS_H
#define FS_WAITS_H

#include <stddef.h>

#include "../sim/fs_error.h"
#include "fs_ci.h"

/* Reads the in-stats waits (s) of a run file's /jobs; *waits is fs_malloc'd
 * (caller fs_frees), *n its length (may be 0).  FS_EIO for an unreadable
 * file, FS_EINVAL when /jobs or its wait/submit columns are missing. */
int fs_waits_read(const char *path, double warmup_s, double **waits, size_t *n,
                  fs_error_t *err);

/* Type-7 quantiles of x[0..n) at probabilities p[0..k) (each in [0, 1]);
 * sorts x in place.  NaN results when n == 0.  FS_EINVAL for p outside. */
int fs_waits_quantiles(double *x, size_t n, const double *p, size_t k, double *out);

typedef struct fs_wait_pct {
    double p;           /* probability, e.g. 0.95 */
    double pooled;      /* quantile of all replications' waits together, s */
    fs_ci_t per_rep;    /* interval of the R per-replication quantiles, s */
} fs_wait_pct_t;

/* waits[r][0..n[r]) for r < reps (not modified); out[0..k). */
int fs_waits_summarize(const double *const *waits, const size_t *n, size_t reps, const double *p,
                       size_t k, double level, fs_wait_pct_t *out);

#endif
