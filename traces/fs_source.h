/*
 * fs_source: a stream of jobs in submission order, read in batches.
 *
 * Every workload -- a synthetic generator or a trace reader of any format --
 * is an fs_source_t: a function table plus a state pointer.  The consumer
 * pulls batches with fs_source_next; memory is bounded by the batch, never by
 * the length of the workload.  Submission times are non-decreasing across
 * the whole stream (a source that cannot guarantee it sorts or fails, as its
 * options say).
 *
 * Names (tenants, GPU types as written in the trace) are interned by the
 * source: fs_source_tenant_name(src, i) gives tenant i's name and
 * fs_source_gpu_type_name(src, i) GPU type i's, for the lifetime of the
 * source; a job's tenant and gpu_type fields index these tables.
 *
 * Ownership: fs_source_destroy frees the source and everything it owns.
 */
#ifndef FS_SOURCE_H
#define FS_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_job.h"

typedef struct fs_source_ops {
    const char *name;   /* "synthetic", "native", "swf", ... */
    /* Fills buf with up to cap jobs; *n = 0 means the stream has ended.
     * Returns 0 or an FS_E* code with err set. */
    int (*next)(void *state, fs_job_t *buf, size_t cap, size_t *n, fs_error_t *err);
    /* Tenant i's name, or NULL if unknown. */
    const char *(*tenant_name)(void *state, int32_t i);
    /* Number of tenant names known so far. */
    int32_t (*tenant_count)(void *state);
    /* GPU type i's name as the workload wrote it (jobs' gpu_type indexes
     * this table; the model maps names to its pools), or NULL. */
    const char *(*gpu_type_name)(void *state, int32_t i);
    int32_t (*gpu_type_count)(void *state);
    /* Rows skipped: bad rows in lenient mode, plus rows that an option
     * tells the reader to drop (e.g. CPU-only pods); 0 in strict mode
     * unless such an option applies. */
    uint64_t (*skipped)(void *state);
    void (*destroy)(void *state);
    /* Optional: the i-th reason rows were skipped for ("field gpus",
     * "cpu_only", ...) with its count, or NULL past the end. */
    const char *(*skip_reason)(void *state, size_t i, uint64_t *count);
} fs_source_ops_t;

typedef struct fs_source {
    const fs_source_ops_t *ops;
    void *state;
} fs_source_t;

static inline int fs_source_next(fs_source_t *s, fs_job_t *buf, size_t cap, size_t *n,
                                 fs_error_t *err)
{
    return s->ops->next(s->state, buf, cap, n, err);
}

static inline const char *fs_source_tenant_name(const fs_source_t *s, int32_t i)
{
    return s->ops->tenant_name ? s->ops->tenant_name(s->state, i) : NULL;
}

static inline int32_t fs_source_tenant_count(const fs_source_t *s)
{
    return s->ops->tenant_count ? s->ops->tenant_count(s->state) : 0;
}

static inline const char *fs_source_gpu_type_name(const fs_source_t *s, int32_t i)
{
    return s->ops->gpu_type_name ? s->ops->gpu_type_name(s->state, i) : NULL;
}

static inline int32_t fs_source_gpu_type_count(const fs_source_t *s)
{
    return s->ops->gpu_type_count ? s->ops->gpu_type_count(s->state) : 0;
}

static inline uint64_t fs_source_skipped(const fs_source_t *s)
{
    return s->ops->skipped ? s->ops->skipped(s->state) : 0;
}

static inline const char *fs_source_skip_reason(const fs_source_t *s, size_t i,
                                                uint64_t *count)
{
    return s->ops->skip_reason ? s->ops->skip_reason(s->state, i, count) : NULL;
}

/* Frees the source (s itself is heap-allocated by its constructor). */
void fs_source_destroy(fs_source_t *s);

#endif
