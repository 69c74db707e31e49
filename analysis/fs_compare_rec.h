/*
 * fs_compare_rec: a replay's simulated waits against the waits its trace
 * recorded (`fleetsim compare RUN.h5 --recorded`, docs/validation.md
 * "Replays against recorded waits").
 *
 * The recorded start of a job is not a /jobs column: it is read again from
 * the trace the run replayed, through the canonical scenario stored in the
 * results file (root attribute "scenario": absolute paths, every trace
 * option), so the reader delivers the same jobs with the same ids and the
 * same time origin as the run saw.  Jobs are matched by id.
 *
 * Per job, the simulated wait is /jobs `wait` (first start - submit) and the
 * recorded wait rec_start - submit.  Jobs that cannot be compared are
 * counted, never dropped silently: cancelled before it started (withdrawn,
 * docs/traces.md), no recorded start in the trace, never
 * started in the run, or (a run with a horizon) in the trace but not in
 * /jobs.  Statistics over the matched jobs: mean, p50, p90, p99 (GSL,
 * quantiles from sorted data), the share that waited more than
 * FS_REC_WAITED_S, the two-sample Kolmogorov-Smirnov distance of the two
 * wait CDFs and Spearman's rank correlation per job (gsl_stats_spearman).
 * Daily utilization: GPU-seconds busy per day over the capacity (/pools),
 * simulated ([start, end] of /jobs) and recorded ([rec_start, rec_end] of
 * the trace) side by side.
 *
 * Owns: a fs_rec_cmp_t owns its arrays (fs_rec_cmp_release).
 */
#ifndef FS_COMPARE_REC_H
#define FS_COMPARE_REC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../sim/fs_error.h"

/* A wait longer than this counts as "waited" (a production scheduler's
 * cycle makes a few tens of seconds of recorded wait the norm). */
#define FS_REC_WAITED_S 60.0

typedef struct fs_rec_waits {
    double mean, p50, p90, p99;
    double share_waited;      /* share of the jobs with wait > FS_REC_WAITED_S */
} fs_rec_waits_t;

typedef struct fs_rec_cmp {
    size_t n_jobs;            /* rows of /jobs in the window */
    size_t n_matched;         /* compared: started in the run, recorded start known */
    size_t n_no_rec;          /* in /jobs, no recorded start in the trace */
    size_t n_not_started;     /* recorded start known, never started in the run */
    size_t n_not_in_trace;    /* in /jobs, id not in the trace */
    size_t n_withdrawn;       /* in /jobs, cancelled before it started in the trace
                                 (workload.trace.cancelled: withdraw): no recorded start */
    size_t n_trace;           /* jobs the trace delivered */
    fs_rec_waits_t sim, rec;  /* over the matched jobs, s */
    double ks;                /* sup |F_sim - F_rec| */
    double spearman;          /* rank correlation of the paired waits (NaN under 2 jobs) */
    double capacity;          /* GPUs (from /pools) */
    size_t n_days;
    double *util_sim;         /* [n_days]: busy share of each day */
    double *util_rec;
    double *wait_sim;         /* [n_matched] paired waits, s, in id order */
    double *wait_rec;
    double *submit;           /* [n_matched] submit times, s */
} fs_rec_cmp_t;

/* The statistics of n paired waits (sim[i], rec[i]): fills c->sim, c->rec,
 * c->ks and c->spearman.  The arrays are not changed.  FS_ENOMEM. */
int fs_rec_stats(const double *sim, const double *rec, size_t n, fs_rec_cmp_t *c);

/* Two-sample Kolmogorov-Smirnov distance of a[0..na) and b[0..nb), both
 * sorted ascending (0 when either is empty). */
double fs_rec_ks_sorted(const double *a, size_t na, const double *b, size_t nb);

/* Reads RUN.h5 and its trace and compares jobs submitted in [from_s,
 * to_s) (run times, s; -INFINITY/INFINITY for all).  FS_EINVAL when the
 * run did not replay a trace, or the trace records no start at all
 * (message says so); FS_EIO, FS_ENOMEM. */
int fs_rec_compare(const char *path, double from_s, double to_s, fs_rec_cmp_t *out,
                   fs_error_t *err);
void fs_rec_cmp_release(fs_rec_cmp_t *c);

/* Human table: the counts, the wait statistics side by side and the
 * daily utilization (weekly means when the run spans more than 60 days). */
void fs_rec_print(FILE *out, const char *path, const fs_rec_cmp_t *c);

#endif
