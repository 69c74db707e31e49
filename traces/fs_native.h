/*
 * fs_native: fleetsim's native trace format, read as an fs_source_t.
 *
 * CSV (plain, or gzip detected from the magic bytes and read through zlib)
 * with a header line naming the columns; columns may come in any order.
 *   required: id, submit, gpus, duration
 *   optional: estimate, tenant, gpu_type, priority, gpu_milli, class,
 *             rec_start, rec_end, rec_state, single_node (0 or 1: the job is one
 *             pod and must fit on one node)
 * Times are seconds (decimal) since the trace origin; tenant and gpu_type are
 * names; rec_state is one of completed, failed, killed, timeout, node_fail,
 * running, unknown.  Empty optional fields mean unknown.  Lines starting
 * with '#' are comments.  docs/traces.md is the reference.
 *
 * Reading is streamed in batches: memory is bounded by the batch and the
 * interned names, never by the number of rows.  Rows must be sorted by
 * submit; an unsorted row is an error in strict mode (the default) and is
 * skipped and counted in lenient mode.
 * Errors name the row: "FILE:LINE: field NAME: what was expected".
 */
#ifndef FS_NATIVE_H
#define FS_NATIVE_H

#include "fs_source.h"

/* Options of every trace reader (docs/traces.md says which format uses
 * which; the scenario keys are workload.trace.*).  The native reader uses
 * lenient and time_scale only (it never sorts and keeps its origin). */
/* workload.trace.cpu_only: rows without GPUs are skipped and counted, refused,
 * or (openb pod lists, which record CPU and memory) placed as CPU-only pods. */
enum fs_cpu_only { FS_CPU_ONLY_SKIP = 0, FS_CPU_ONLY_ERROR = 1, FS_CPU_ONLY_PLACE = 2 };

typedef struct fs_trace_opts {
    int lenient;            /* skip bad rows (counted) instead of failing */
    double time_scale;      /* multiply durations by this (1.0 = as is) */
    uint32_t sort_window;   /* re-sort rows out of submission order within this many rows
                               (0: refuse every out-of-order row); default 65536 */
    int keep_origin;        /* 1: times as the trace states them; 0 (default): shifted so
                               that the first submission is at 0 */
    uint32_t procs_per_gpu; /* swf: processors per GPU (GPUs = ceil(procs / this)); 1 */
    int cpu_only;           /* rows without GPUs: enum fs_cpu_only */
    fs_time_t default_duration; /* run time for rows that record none (openb multigpu
                                   files without times), us; 0: such a file is an error */
    void *log;              /* FILE * for notes (format detected, rows re-sorted);
                               NULL: stderr */
    char *teams;            /* user,team CSV (traces/fs_remap.h); NULL: tenants as read.
                               Not owned by the readers (the config owns it) */
    char **team_users;      /* inline team map (workload.trace.team_map): user i -> */
    char **team_of;         /* team i; not owned by the readers (the config owns it) */
    size_t n_team_map;
    double load_scale;      /* arrival compression: submit times divided by this (1: as is) */
    struct fs_csv *take_csv;/* internal (format auto): a stream already open on the same
                               path, nothing consumed; the reader takes it over (and
                               zeroes it) instead of opening the path again */
} fs_trace_opts_t;

void fs_trace_opts_init(fs_trace_opts_t *o);

int fs_native_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                   fs_error_t *err);

/* Writes jobs as native CSV (gzip when path ends in .gz): used by
 * `trace convert` and by tests.  names: tenant and GPU-type tables of the
 * source the jobs came from (may be NULL). */
typedef struct fs_native_writer fs_native_writer_t;
int fs_native_writer_open(const char *path, fs_native_writer_t **out, fs_error_t *err);
int fs_native_writer_put(fs_native_writer_t *w, const fs_job_t *job, const char *tenant,
                         const char *gpu_type, fs_error_t *err);
/* Finishes the file (renamed into place only now); returns 0 or an error. */
int fs_native_writer_close(fs_native_writer_t *w, fs_error_t *err);
/* Drops the partial file. */
void fs_native_writer_abort(fs_native_writer_t *w);

#endif
