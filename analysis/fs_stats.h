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

typedef struct fs_summary {
    uint64_t jobs_submitted;
    uint64_t jobs_completed;
    uint64_t jobs_failed;
    uint64_t jobs_unfinished;   /* running or queued at the end */
    uint64_t jobs_rejected;
    uint64_t jobs_in_stats;     /* started jobs submitted at or after warm-up */
    double wait_mean, wait_sd, wait_p50, wait_p95, wait_p99, wait_max; /* s */
    double wait_prob;           /* share of jobs in stats that waited > 0 */
    double jct_mean, jct_p50, jct_p95, jct_p99;   /* completion - submit, completed jobs, s */
    double utilization;         /* GPUs busy / up over the window [warmup, min(horizon, end)] */
    double utilization_all;     /* gpu_s_busy / gpu_s_capacity over the whole run */
    double goodput;             /* gpu_s_useful / gpu_s_capacity */
    double makespan;            /* s */
    double end_time;            /* s */
    double gpu_hours_capacity;
    double gpu_hours_busy;
    double queue_len_mean;      /* time-average jobs waiting */
    double system_len_mean;     /* time-average jobs waiting or running */
    double arrival_rate;        /* jobs submitted / end_time, 1/s */
    double little_rel_err;      /* |L - lambda W| / L over all jobs (drain runs), else NaN */
    uint64_t events;
    uint64_t passes;
    uint64_t rows_skipped;
    /* cost (models/fs_cost.h, docs/cost.md); NaN when the run has no cost */
    double cost_total;          /* $ over the whole run */
    double cost_per_gpu_hour;   /* $ per delivered (busy) GPU-hour */
    double cost_per_job;        /* $ per completed job */
    double cost_idle;           /* $ paid for idle capacity */
    double cost_failures;       /* $: lost GPU-hours x the pool's cost per GPU-hour */
    double energy_kwh;          /* facility energy of owned pools (PUE included), kWh */
    /* failures (models/fs_failure.h, docs/failures.md) */
    uint64_t failures;          /* component failures (planned outages and stragglers excluded) */
    uint64_t interruptions;     /* running jobs those failures hit */
    double availability;        /* GPUs in service / GPUs owned, time average over the run */
    /* recovery (docs/recovery.md) */
    double gpu_s_lost;          /* GPU-s of compute whose work was lost (failures, preemption) */
    double gpu_s_ckpt;          /* GPU-s spent writing checkpoints */
    double ettr_mean;           /* mean ETTR of completed jobs in statistics (NaN: none) */
    /* Google's ML Productivity Goodput over the jobs in statistics, GPU-second
     * weighted (docs/recovery.md "Goodput"): scheduling (held / GPUs x
     * (end - submit)), runtime (useful / held), program (MFU of the useful
     * compute), and their product */
    double goodput_scheduling, goodput_runtime, goodput_program, goodput_ml;
    /* the measurement window [window_start, window_end] (s): after warm-up,
     * to the end of the arrivals (the horizon, or a trace's last
     * submission) or of the run if sooner; utilization and the window's
     * cost cover it (docs/results.md) */
    double window_start, window_end;
    double cost_window;         /* $ over the window (NaN: no cost) */
    double cost_per_gpu_hour_window; /* cost_window / GPU-hours busy in the window */
    /* queueing under preemption: all time queued (queued_s of /jobs) of the
     * jobs that count in wait (started, in statistics), s */
    double queued_mean, queued_p50, queued_p95, queued_p99;
    /* preemptions are not failures (fs_model_preempt) */
    uint64_t preemptions;       /* preemptions by the policy */
    double gpu_s_lost_preempt;  /* the part of gpu_s_lost lost to preemptions, GPU-s */
    double cost_preemptions;    /* $: GPU-hours lost to preemptions x the pool's cost per GPU-hour */
    double gpu_s_startup;       /* GPU-s held in pod start-up (startup:; models/fs_startup.h) */
    /* the held split of gpu_s_busy (#15; fs_run_totals_t) */
    double gpu_s_allocated, gpu_s_share_idle, gpu_s_held, gpu_s_serving, gpu_s_computing,
        gpu_s_redo, gpu_s_recovering;
    /* carbon (docs/cost.md, "Carbon"); NaN when the run has no cost, 0 when
     * carbon is not modelled */
    double carbon_kg;           /* operational + embodied kg CO2e over the whole run */
    double carbon_per_gpu_hour_g; /* g CO2e per delivered (busy) GPU-hour */
    double carbon_per_job_kg;   /* kg CO2e per completed job */
    /* what the policy did (fs_policy_stats_t) */
    uint64_t backfilled, admissions, admissions_borrowing, reclaims;
    /* capacity states (#15; fs_run_totals_t): busy + down + waiting + idle == total */
    double gpu_s_total, gpu_s_busy, gpu_s_down, gpu_s_waiting, gpu_s_idle;
    /* allocated but idle (#15): computing of jobs whose activity (telemetry duty) is zero */
    double gpu_s_held_idle;
    /* the waiting split (#15): frag + quota + reserved + blocked == gpu_s_waiting */
    double gpu_s_frag, gpu_s_quota, gpu_s_reserved, gpu_s_blocked;
    /* MIG re-partitioning (fs_run_totals_t): nodes re-cut, GPU-s reconfiguring */
    uint64_t mig_recuts;
    double gpu_s_mig_reconfig;
    /* its drains: nodes cordoned for a re-cut, their GPUs idle meanwhile */
    uint64_t mig_drains;
    double gpu_s_mig_drain;
} fs_summary_t;

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

#endif
