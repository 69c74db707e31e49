/*
 * fs_stats: the headline figures of one run, computed from the job rows and
 * the model's totals.  Quantiles come from GSL (gsl_stats_quantile_from_
 * sorted_data, which interpolates linearly between order statistics: the
 * "type 7" definition of R and numpy's default).
 *
 * Memory: per job that counts in statistics, its wait and queued time, and
 * its JCT when completed (for the exact quantiles), and the same wait and
 * JCT again in its tenant's arrays (per-tenant quantiles): 1 M jobs with
 * tenants cost about 40 MB.
 */
#ifndef FS_STATS_H
#define FS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "../models/fs_result.h"
#include "../sim/fs_error.h"
#include "fs_summary.h"

/* fs_summary_t, the /summary row: fs_summary.h (one row per figure in
 * fs_summary.def). */

/* Per-tenant breakdown (the /tenants table).  Waits and JCTs over the
 * tenant's jobs in statistics (as in /summary); counts and GPU-hours over
 * all its jobs. */
typedef struct fs_tenant_row {
    int32_t tenant;
    uint64_t jobs;
    uint64_t jobs_completed;
    double gpu_hours;           /* GPU-hours of run time */
    double wait_mean;           /* s, started jobs */
    double wait_p50, wait_p95, wait_p99;   /* s, started jobs */
    double jct_mean, jct_p95;   /* s, completed jobs */
    double queued_mean;         /* s, all time queued of started jobs */
    uint64_t preemptions;       /* preemptions of its jobs */
    double preempt_lost_gpu_hours; /* GPU-hours of work lost to those preemptions */
    double borrowed_gpu_hours;  /* Kueue: GPU-hours its jobs ran on quota borrowed from the
                                   cohort (NaN: the policy has no quotas) */
    double lent_gpu_hours;      /* Kueue: GPU-hours of its ClusterQueue's quota lent to
                                   other ClusterQueues' jobs (NaN: no quotas) */
    /* the held split of busy (#15, /summary's gpu_s_held ...) over its jobs */
    double held_gpu_hours;      /* held: attempts and failure detection */
    double computing_gpu_hours; /* computing, work kept or later lost */
    double redo_gpu_hours;      /* the part of computing whose work was lost */
    double ckpt_gpu_hours;      /* writing checkpoints */
    double startup_gpu_hours;   /* pod start-up */
    double recovering_gpu_hours;/* held - computing - ckpt - startup: restore, detection */
    /* Kueue: borrowed and lent as borrowed_gpu_hours, for cpu (core-hours),
     * memory (GiB-hours) and pods (pod-hours); NaN where no ClusterQueue
     * quotas the resource */
    double borrowed_cpu_core_hours, lent_cpu_core_hours;
    double borrowed_memory_gib_hours, lent_memory_gib_hours;
    double borrowed_pod_hours, lent_pod_hours;
} fs_tenant_row_t;

typedef struct fs_stats fs_stats_t;

/* warmup_s: jobs submitted before it are left out of wait/JCT statistics. */
int fs_stats_create(double warmup_s, fs_stats_t **out);
void fs_stats_destroy(fs_stats_t *st);

/* Adds one finished (or unfinished, at the end) job.  0 or FS_ENOMEM. */
int fs_stats_add_job(fs_stats_t *st, const fs_job_row_t *row);

/* Computes the summary.  Can be called once, after the last job. */
int fs_stats_finish(fs_stats_t *st, const fs_run_totals_t *totals, fs_summary_t *out);

/* Quantile f (type 7) of n unsorted doubles by selection, O(n); equal to
 * gsl_stats_quantile_from_sorted_data on the sorted data.  Reorders data.
 * NaN when n is 0. */
double fs_stats_quantile_select(double *data, size_t n, double f);
/* GSL's gsl_stats_mean(x, 1, n) and gsl_stats_sd_m(x, 1, n, mean), bit for
 * bit: the same long double recurrences, with a division per element, in
 * the same order, but starting after the leading elements that leave the
 * recurrence at exactly 0 (a 0 for the mean; an element equal to mean for
 * the sd).  Why: the wait array of a run where few jobs wait is mostly
 * zeros, first once sorted, and the two GSL calls over 1 M of them were 1.7%
 * of a 1 M-job run's CPU.  NaN for n = 0 (mean) and n < 2 (sd), as the
 * callers wrote it. */
double fs_stats_mean(const double *x, size_t n);
double fs_stats_sd_m(const double *x, size_t n, double mean);
/* Sorts x[0..n) ascending, the array gsl_sort gives for data without NaN
 * (the run's waits and JCTs), in O(n): an LSD radix sort of the doubles'
 * order-preserving 64-bit keys, skipping the byte positions where every key
 * agrees.  Small arrays, and any array when the n-double scratch cannot be
 * allocated, go to gsl_sort.  Why: gsl_sort is a heapsort, 34% of a 1 M-job
 * run's CPU without output and 48% at 10 M (docs/performance.md).  The only
 * difference from gsl_sort: -0.0 sorts before +0.0 (they compare equal). */
void fs_stats_sort(double *x, size_t n);

/* Tenant rows (valid until destroy); *n set to the count. */
const fs_tenant_row_t *fs_stats_tenants(const fs_stats_t *st, size_t *n);

/* Sets row i's borrowed and lent quota GPU-hours (a quota policy's figures,
 * after fs_stats_finish).  FS_EINVAL when i is not a row. */
int fs_stats_set_tenant_quota(fs_stats_t *st, size_t i, double borrowed, double lent);
/* The same for cpu core-hours, memory GiB-hours and pod-hours ([0], [1],
 * [2] of borrowed and lent).  FS_EINVAL when i is not a row. */
int fs_stats_set_tenant_quota_res(fs_stats_t *st, size_t i, const double borrowed[3],
                                  const double lent[3]);

#endif
