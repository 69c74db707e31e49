/*
 * fs_result: what a run reports, as plain rows.  The model emits them
 * through fs_sink_t; analysis/ turns them into statistics and the HDF5
 * results file (docs/results.md describes every column).  Times are float64
 * seconds since the start of the run, as in the results file.
 */
#ifndef FS_RESULT_H
#define FS_RESULT_H

#include <stdint.h>

/* Final state of a job in the simulation (HDF5 enum "job_state"). */
enum fs_job_state {
    FS_STATE_COMPLETED = 0,   /* ran to the end */
    FS_STATE_FAILED = 1,      /* gave up (retries exhausted) */
    FS_STATE_RUNNING = 2,     /* still running when the run stopped */
    FS_STATE_QUEUED = 3,      /* still waiting when the run stopped */
    FS_STATE_REJECTED = 4     /* can never fit the cluster */
};
const char *fs_job_state_name(int s);

typedef struct fs_job_row {
    uint64_t id;
    int32_t tenant;         /* index into the run's tenant names; -1 none */
    int32_t pool;           /* pool index it ran in; -1 never started */
    uint32_t gpus;          /* GPUs requested */
    uint32_t gpu_milli;     /* share of one GPU (1000 = whole) */
    uint32_t nodes;         /* nodes it spanned at its last start (0 never started) */
    uint32_t restarts;      /* times restarted after failure or preemption */
    double submit;          /* s */
    double start;           /* first start, s; NaN if never started */
    double end;             /* s; NaN if not finished */
    double wait;            /* first start - submit, s; NaN if never started */
    double run;             /* wall time spent running, all attempts, s */
    double lost_gpu_s;      /* GPU-seconds of work lost to failures/preemption */
    int32_t state;          /* enum fs_job_state */
} fs_job_row_t;

typedef struct fs_sample_row {
    double time;            /* s */
    uint32_t gpus_total;
    uint32_t gpus_up;
    uint32_t gpus_busy;     /* allocated (fractional shares count whole) */
    uint32_t jobs_running;
    uint32_t jobs_queued;
    uint64_t gpus_queued;   /* GPUs requested by queued jobs */
} fs_sample_row_t;

/* Totals the model accumulates over the run (integrals are exact: the
 * model integrates piecewise-constant state between events). */
typedef struct fs_run_totals {
    double end_time;        /* when the run stopped, s */
    double makespan;        /* last completion (or end_time if later events), s */
    uint64_t gpus_total;    /* GPUs in the fleet */
    double gpu_s_capacity;  /* integral of GPUs up over [0, end_time], GPU-s */
    double gpu_s_busy;      /* integral of GPUs allocated, GPU-s */
    double gpu_s_useful;    /* GPU-s of work kept by jobs (excludes lost work) */
    double window_start;    /* measurement window: [warmup, min(horizon, end_time)], s */
    double window_end;
    double gpu_s_capacity_window; /* integral of GPUs up over the window, GPU-s */
    double gpu_s_busy_window;     /* integral of GPUs allocated over the window */
    double jobs_queued_integral;  /* integral of jobs waiting, job-s */
    double jobs_system_integral;  /* integral of jobs waiting or running, job-s */
    uint64_t jobs_submitted;
    uint64_t events;        /* engine events handled */
    uint64_t passes;        /* scheduling passes */
    uint64_t rows_skipped;  /* lenient trace rows skipped */
} fs_run_totals_t;

/* The receiver of a run's rows.  Callbacks return 0 or an FS_E* code (the
 * model then stops the run with that error). */
typedef struct fs_sink {
    int (*job)(void *ud, const fs_job_row_t *row);
    int (*sample)(void *ud, const fs_sample_row_t *row);
    void *ud;
} fs_sink_t;

#endif
