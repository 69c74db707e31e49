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
#include "fs_topts.h"

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
