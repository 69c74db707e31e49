/*
 * fs_results: the HDF5 results file of one run (contract: docs/results.md).
 *
 * Layout: root attributes (format_version, fleetsim_version, seed,
 * replication, scenario, scenario_source, scenario_path, complete,
 * currency), and tables written with the HDF5 high-level table API (H5TB,
 * chunked and deflate-compressed, appended in batches, never one call per
 * row): /jobs, /timeline, /failures, /summary (one row), /tenants, /pools.
 *
 * Crash safety: the file is written under a temporary name beside the target
 * (TARGET.tmp.PID) with complete = 0, and only fs_results_commit sets
 * complete = 1, closes and renames it over the target.  A killed run never
 * leaves a file at the target name that claims to be complete;
 * fs_results_commit_partial puts a stopped run's rows there with
 * complete = 0 and the reason.  Every file and HDF5 call goes through the
 * fault-injection hook of sim/fs_io.h.
 */
#ifndef FS_RESULTS_H
#define FS_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "../models/fs_cost.h"
#include "../models/fs_result.h"
#include "../sim/fs_error.h"
#include "fs_stats.h"

#define FS_RESULTS_FORMAT_VERSION 1

typedef struct fs_pool_info {
    const char *name;
    const char *gpu;
    uint32_t nodes;
    uint32_t gpus_per_node;
    const char *mig;        /* the pool's static MIG layout as configured, NULL: none */
    double power_cap_w;     /* the pool's GPU power limit, W; 0: none */
    uint32_t time_slicing;  /* time-slicing replicas per GPU; 0: none */
    uint32_t mps;           /* MPS clients per GPU; 0: none */
    double ambient_c;       /* the air at its GPUs, C */
    double throttle_w;      /* the thermal limit telemetry.throttle_c sets there, W; 0: none */
} fs_pool_info_t;

typedef struct fs_results_meta {
    uint64_t seed;
    uint64_t replication;
    const char *scenario;         /* canonical YAML of the config as run */
    const char *scenario_source;  /* the YAML text as given (may be NULL) */
    const char *scenario_path;    /* where it came from (may be NULL) */
    const fs_pool_info_t *pools;
    size_t n_pools;
    /* optional: the process-wide HDF5 lock (Debian's HDF5 is built without
     * thread safety), called with lock = 1 / 0.  Every fs_results_* call
     * takes it around its own HDF5 calls only: rows of /jobs and /timeline
     * are packed, shuffled and deflated outside it and written as whole
     * chunks (H5Dwrite_chunk) inside it.  Callers must not hold it. */
    void (*io_lock)(void *ud, int lock);
    void *io_lock_ud;
    /* optional: compress and write /jobs and the other streamed tables on a
     * thread of the results file's own while the caller goes on (the file
     * is byte for byte the one written without it).  For a run that has a
     * core to spare; a sweep that runs one run per core leaves it off. */
    int writer_thread;
    /* optional: a run of a sweep writes which one it is (root attributes
     * sweep_digest and sweep_point, besides replication), so that merge and
     * --resume take a file only for the run it is (docs/sweeps.md) */
    int in_sweep;
    uint64_t sweep_digest;        /* fs_sweep_plan_digest of the sweep */
    uint64_t sweep_point;         /* the point's index */
    /* inference services (docs/services.md): /services and /service_buckets
     * are made when services > 0, /requests when requests is also set */
    size_t services;
    int requests;
    /* Cluster Autoscaler node groups: /nodegroups is made when nodegroups > 0 */
    size_t nodegroups;
    /* MIG re-partitioning (a pool's mig_repartition): /mig_layouts is made */
    int mig_layouts;
} fs_results_meta_t;

typedef struct fs_results fs_results_t;

/* Creates TARGET.tmp.PID and writes the root attributes with complete = 0. */
int fs_results_open(const char *path, const fs_results_meta_t *meta, fs_results_t **out,
                    fs_error_t *err);

/* Buffered appends (flushed every FS_RESULTS_BATCH rows). */
int fs_results_add_job(fs_results_t *r, const fs_job_row_t *row, fs_error_t *err);
int fs_results_add_sample(fs_results_t *r, const fs_sample_row_t *row, fs_error_t *err);
int fs_results_add_failure(fs_results_t *r, const fs_failure_row_t *row, fs_error_t *err);
int fs_results_add_interval(fs_results_t *r, const fs_interval_row_t *row, fs_error_t *err);
int fs_results_add_service(fs_results_t *r, const fs_service_row_t *row, fs_error_t *err);
int fs_results_add_svc_bucket(fs_results_t *r, const fs_svc_bucket_row_t *row, fs_error_t *err);
int fs_results_add_nodegroup(fs_results_t *r, const fs_nodegroup_row_t *row, fs_error_t *err);
int fs_results_add_request(fs_results_t *r, const fs_request_row_t *row, fs_error_t *err);
int fs_results_add_mig_layout(fs_results_t *r, const fs_mig_layout_row_t *row, fs_error_t *err);

/* Writes the cost tables /cost (per day and pool), /cost_pools and
 * /cost_tenants (names from tenant_names[0..n_tenants)); call before
 * fs_results_commit.  docs/cost.md describes the columns. */
int fs_results_add_cost(fs_results_t *r, const fs_cost_report_t *cost,
                        const char *const *tenant_names, size_t n_tenants, fs_error_t *err);

/* Writes the fabric's tables /links and /jobs_network
 * (analysis/fs_results_links.c; docs/results.md); call before
 * fs_results_commit. */
int fs_results_add_fabric(fs_results_t *r, const fs_link_row_t *links, size_t n_links,
                          const fs_jobnet_row_t *jobs, size_t n_jobs, fs_error_t *err);

/* Stores why trace rows were skipped (lenient mode, or dropped by an
 * option): the root attribute `rows_skipped_by_reason`, a 1-D array of
 * compound {reason: UTF-8 string, count: uint64}, one element per reason in
 * the reader's order (h5py: f.attrs["rows_skipped_by_reason"]).  Nothing is
 * written when n is 0.  Call before a commit; 0 or FS_EIO / FS_ENOMEM. */
int fs_results_set_skipped(fs_results_t *r, const char *const *reasons, const uint64_t *counts,
                           size_t n, fs_error_t *err);

/* Writes /summary, /tenants (names from tenant_names[0..n_tenants)), sets
 * complete = 1, closes and renames into place.  r is freed either way. */
int fs_results_commit(fs_results_t *r, const fs_summary_t *sum, const fs_tenant_row_t *tenants,
                      size_t n_tenant_rows, const char *const *tenant_names, size_t n_tenants,
                      fs_error_t *err);

/* Keeps what a stopped run has produced (SIGINT, SIGTERM, a drain that
 * cannot end): appends the buffered /jobs and /timeline rows, writes the
 * root attributes incomplete_reason (e.g. "interrupted by SIGINT"),
 * stopped_at (the simulated time reached, s) and, when unfinished >= 0,
 * unfinished_jobs (jobs queued, running or recovering when it stopped),
 * leaves complete = 0 and writes no /summary or /tenants; then closes and
 * renames into place like a commit.  A file at the target name is thus
 * either complete = 1 or says why it is not.  r is freed either way; on
 * failure the temporary is deleted. */
int fs_results_commit_partial(fs_results_t *r, const char *reason, double stopped_at_s,
                              int64_t unfinished, fs_error_t *err);

/* Closes and deletes the temporary file; r is freed. */
void fs_results_abort(fs_results_t *r);

#define FS_RESULTS_BATCH 65536

/* The i-th column of /summary (i < the number of columns; NULL past the
 * end): its name, its unit and *value = that field of sum (unsigned counts
 * converted to double); *is_count is 1 for the unsigned integer columns.
 * For printing the summary as it is written (fleetsim run --json). */
const char *fs_results_summary_field(size_t i, const fs_summary_t *sum, double *value,
                                     int *is_count, const char **unit);

#endif
