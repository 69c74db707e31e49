/*
 * fs_index: the HDF5 files of a sweep directory besides the per-run results
 * files (layout: docs/sweeps.md).
 *
 *   DIR/sweep.h5   the manifest: what the sweep is (scenario text and path,
 *                  base overrides, parameters, every point's values,
 *                  replications, a digest).  Written before any run, by every
 *                  shard or rank 0 (identical content), so that `fleetsim
 *                  merge DIR` needs nothing but DIR.
 *   DIR/index.h5   the index, written last (temp name, renamed): the
 *                  manifest's attributes plus the tables /points, /runs
 *                  (one row per (point, replication) with every /summary
 *                  field), /stats (per point and metric: n, mean, sd and the
 *                  95% Student-t interval of analysis/fs_ci.h) and the group
 *                  /runs_data of HDF5 external links p<P>-r<R> -> the run
 *                  files (relative paths: the directory can be moved).
 *
 * Owns nothing between calls.  Not thread-safe (HDF5 on Debian is built
 * without thread safety): callers serialize every call of this module and
 * every other HDF5 call (the sweep runner holds one lock).  Tables are
 * compound datasets written with object times off, so the same inputs give
 * the same table bytes.
 */
#ifndef FS_INDEX_H
#define FS_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"

#define FS_INDEX_FORMAT_VERSION 1
#define FS_INDEX_CI_LEVEL 0.95

/* A sweep as the files describe it (all strings borrowed). */
typedef struct fs_index_sweep {
    const char *name;           /* scenario name */
    const char *scenario_path;  /* as given to fleetsim sweep */
    const char *scenario_text;  /* the sweep scenario's text */
    const char *const *sets;    /* base overrides (--set) */
    size_t n_sets;
    const char *combine;        /* "grid" or "zip" */
    const char *warmup;         /* sweep.warmup or NULL */
    uint64_t replications;
    size_t n_params;
    const char *const *keys;    /* n_params dotted paths */
    size_t n_points;
    const char *const *values;  /* n_points * n_params, point-major */
    uint64_t digest;            /* fs_sweep_plan_digest */
} fs_index_sweep_t;

/* A manifest read back; the strings are owned by it. */
typedef struct fs_index_manifest {
    fs_index_sweep_t s;
    char **strings;             /* everything s points to */
    size_t n_strings;
} fs_index_manifest_t;

enum fs_index_run_state {
    FS_RUN_MISSING = 0,         /* no file */
    FS_RUN_INCOMPLETE = 1,      /* a file that is not readable or has complete != 1 */
    FS_RUN_COMPLETE = 2,        /* complete == 1 */
    FS_RUN_FOREIGN = 3          /* complete, but another run's file (fs_index_run_state_of) */
};

/* The state of a run file (a file is complete iff its root attribute
 * complete == 1). */
int fs_index_run_state(const char *path);

/* The state of the file at path as run (point, rep) of the sweep whose
 * digest is digest: as fs_index_run_state, except that a complete file
 * whose root attributes sweep_digest, sweep_point and replication do not
 * all say so (or are absent) is FS_RUN_FOREIGN, and why (n bytes, may be
 * NULL) says what it holds. */
int fs_index_run_state_of(const char *path, uint64_t digest, size_t point, uint64_t rep,
                          char *why, size_t n);

/* Name of run (point, rep) relative to the sweep directory:
 * "runs/p0003-r0012.h5".  buf needs 64 bytes. */
char *fs_index_run_file(size_t point, uint64_t rep, char *buf, size_t n);

/* Writes the manifest (temp name, renamed into place). */
int fs_index_write_manifest(const char *path, const fs_index_sweep_t *s, fs_error_t *err);

/* Reads a manifest.  FS_EIO when missing or unreadable. */
int fs_index_read_manifest(const char *path, fs_index_manifest_t **out, fs_error_t *err);
void fs_index_manifest_free(fs_index_manifest_t *m);

/* Writes DIR/index.h5 from the manifest data and the run files
 * DIR/runs/...: every run must be complete (FS_EINVAL naming the first
 * missing ones otherwise). */
int fs_index_write(const char *dir, const fs_index_sweep_t *s, fs_error_t *err);

/* Reads the one row of a results file's /summary as doubles, in column
 * order: *names and *values (n entries) are owned by the caller
 * (fs_index_free_summary). */
int fs_index_read_summary(const char *path, char ***names, double **values, size_t *n,
                          fs_error_t *err);
void fs_index_free_summary(char **names, double *values, size_t n);
/* Appends each service's figures of /services (docs/services.md) to the
 * arrays of fs_index_read_summary as "SERVICE.COLUMN" (chat.ttft_p99,
 * chat.buckets_met, ...): what `fleetsim plan` SLOs name.  A file without
 * /services adds nothing.  0, FS_EIO or FS_ENOMEM (the arrays stay the
 * caller's to free either way). */
int fs_index_read_services(const char *path, char ***names, double **values, size_t *n,
                           fs_error_t *err);
/* Whether metric is "SERVICE.COLUMN" for a service named in services[0..n)
 * (names) and a column fs_index_read_services reads.  "" in list (room for
 * len) the columns, for messages. */
int fs_index_service_metric(const char *metric, const char *const *services, size_t n,
                            char *list, size_t len);

#endif
