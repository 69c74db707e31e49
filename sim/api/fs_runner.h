/*
 * fs_runner: one run, wired end to end: config -> workload source (synthetic
 * or trace) -> model + policy -> statistics and the HDF5 results file.
 * Used by `fleetsim run`, `fleetsim bench` and the tests; the only place
 * (with the other sim/cli files) that ties the folders together.
 */
#ifndef FS_RUNNER_H
#define FS_RUNNER_H

#include <signal.h>
#include <stdint.h>

#include "../../analysis/fs_stats.h"
#include "../../models/fs_config.h"
#include "../../models/fs_result.h"
#include "../fs_error.h"

typedef struct fs_run_opts {
    const char *output;     /* results file, or NULL for none */
    const volatile sig_atomic_t *interrupt; /* optional stop flag */
    int progress;           /* print a progress line on stderr */
    double progress_every;  /* 0: the terminal's line, redrawn in place every 0.25 s; > 0:
                               one whole line (no carriage return) every this many seconds
                               of wall time, with an ETA, for logs and pipes */
    /* optional (the library's progress callback): called every few thousand
     * events with the simulated time, the horizon and the job counts */
    void (*on_progress)(void *ud, double now_s, double horizon_s, uint64_t done,
                        uint64_t running, uint64_t queued);
    void *on_progress_ud;
    /* optional extra receiver of every job row (tests) */
    int (*on_job)(void *ud, const fs_job_row_t *row);
    void *on_job_ud;
    /* optional: the process-wide HDF5 lock (Debian builds HDF5 without
     * thread safety), called with lock = 1 / 0; handed to the results writer,
     * which takes it around its HDF5 calls only (compression runs outside
     * it): sweeps running on several threads pass one mutex here */
    void (*io_lock)(void *ud, int lock);
    void *io_lock_ud;
    /* optional: the results file is compressed and written on a thread of
     * its own while the run goes on (fs_results_meta_t.writer_thread; the
     * same bytes); `fleetsim run` sets it, sweeps (a run per core) do not */
    int writer_thread;
    /* optional: a sweep's run (fs_results_meta_t.in_sweep and after) */
    int in_sweep;
    uint64_t sweep_digest, sweep_point;
} fs_run_opts_t;

#define FS_RUN_SERVICES 16
typedef struct fs_run_report {
    fs_summary_t summary;
    fs_run_totals_t totals;
    double wall_s;          /* wall-clock seconds of the run (not in results) */
    int truncated;          /* the trace went on past the horizon */
    int partial;            /* stopped before its end (FS_EINTR, or FS_ESTUCK from a drain
                               that cannot end) and the rows so far written to
                               opts->output with complete = 0 */
    fs_service_row_t services[FS_RUN_SERVICES]; /* the first services' rows (/services) */
    size_t n_services;      /* services in the run (rows above: at most FS_RUN_SERVICES) */
    double carbon_embodied_kg; /* the embodied part of summary.carbon_kg (NaN: no cost) */
} fs_run_report_t;

void fs_run_opts_init(fs_run_opts_t *o);

/* Runs cfg.  Returns 0 or an FS_E* code with err set; on failure no results
 * file is left at opts->output, except when the run stops before its end:
 * *opts->interrupt non-zero stops it with FS_EINTR, an until: drain run
 * that cannot end stops with FS_ESTUCK (drain_limit reached, or jobs that
 * nothing can ever start); the results so far are then committed partial
 * (fs_results_commit_partial, reason "interrupted by SIGINT" when the flag
 * holds SIGINT's number, likewise SIGTERM, "drain_limit reached" or "no
 * queued job can ever start"; unfinished_jobs counted) and rep->partial is
 * set. */
int fs_run_config(const fs_config_t *cfg, const fs_run_opts_t *opts, fs_run_report_t *rep,
                  fs_error_t *err);

/* Prints the human summary (stdout of `fleetsim run`). */
#include <stdio.h>
/* 1 when the all-time-queued figures (queued_*) differ from the first wait's
 * (wait_*): jobs were queued again after preemptions or failures. */
int fs_run_queued_differs(const fs_summary_t *s);
void fs_run_print_summary(FILE *f, const fs_config_t *cfg, const fs_run_report_t *rep,
                          const char *output);

#endif
