/*
 * fs_svprofile: a measured step-time profile of a serving replica
 * (performance[].profile; docs/services.md "Step time: a measured profile").
 *
 * A CSV file with the header batch,prefill_tokens,context_tokens,step_us
 * (any order, by name; lines starting with # are comments).  Two kinds of
 * rows:
 *   - prefill rows: batch 0, prefill_tokens > 0, context_tokens 0: the time
 *     of an iteration that prefills that many prompt tokens;
 *   - decode rows: batch >= 1, prefill_tokens 0: the time of an iteration
 *     that decodes `batch` sequences each holding context_tokens of KV.
 *     They must form a full grid (every batch at every context).
 * An iteration with p prefill tokens and b decoding sequences holding C KV
 * tokens in all takes prefill(p) + decode(b, C), rounded half up to whole
 * us (at least 1):
 *   prefill(p): piecewise linear through (0, 0) and the prefill rows, the
 *     last segment extended beyond the last row;
 *   decode(b, C): the grid's context column is the smallest context_tokens
 *     >= C / b (the last one beyond it: a step, never under the measured
 *     context below); in it, piecewise linear in b between the grid's
 *     batches, the end values beyond them.
 * Pure functions of the table; the table is read once per run.
 */
#ifndef FS_SVPROFILE_H
#define FS_SVPROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"

typedef struct fs_svprof {
    size_t n_pre;           /* prefill rows, by prefill tokens (increasing) */
    uint64_t *pre_p;
    double *pre_us;
    size_t n_b, n_x;        /* the decode grid: batches and contexts (increasing) */
    uint32_t *b;
    uint64_t *x;
    double *d;              /* d[i * n_x + g]: us at batch b[i], context x[g] */
} fs_svprof_t;

/* Reads path.  0, or FS_EINVAL with err "PATH:ROW: field NAME: ..." (a
 * missing, negative or malformed entry; a row of neither kind; a repeated
 * row) or "PATH: ..." (no prefill or decode rows, a grid with a hole),
 * FS_EIO, FS_ENOMEM. */
int fs_svprof_load(const char *path, fs_svprof_t **out, fs_error_t *err);
void fs_svprof_free(fs_svprof_t *p);

/* prefill(p), us (0 for p = 0). */
double fs_svprof_prefill(const fs_svprof_t *p, uint64_t tokens);
/* The decode grid column for b >= 1 sequences holding ctx KV tokens. */
size_t fs_svprof_column(const fs_svprof_t *p, uint32_t b, uint64_t ctx);
/* decode(b, .) in column g, us (0 for b = 0). */
double fs_svprof_decode(const fs_svprof_t *p, uint32_t b, size_t g);
/* Iterations of a decode macro step whose ctx starts at ctx0 and grows by
 * b per iteration that stay in column g (from the one at ctx0, which is
 * in g): how many before it passes x[g] (SIZE_MAX: the last column). */
uint64_t fs_svprof_left_in(const fs_svprof_t *p, uint32_t b, uint64_t ctx0, size_t g);

#endif
