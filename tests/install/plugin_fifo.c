/* A scheduling policy written out of tree as a fleetsim plugin (docs/library.md):
 * first come, first served, option `mode: strict` (stop at the first job that does
 * not fit, as scheduler.mode strict) or `best_effort` (skip it, as the default).
 * tests/install/install.sh builds it from the installed fleetsim.h and checks that
 * it schedules exactly as the built-in FIFO does. */
#include <fleetsim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fifo {
    const fleetsim_host *host;
    int strict;
    uint32_t *q;            /* waiting handles, in arrival order */
    size_t n, cap;
} fifo_t;

static int create(const fleetsim_host *host, const char *const *keys, const char *const *values,
                  size_t n, void **state, char *err, size_t errlen)
{
    fifo_t *f = calloc(1, sizeof *f);
    if (!f)
        return snprintf(err, errlen, "out of memory"), 1;
    f->host = host;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(keys[i], "mode") == 0 && strcmp(values[i], "strict") == 0) {
            f->strict = 1;
        } else if (strcmp(keys[i], "mode") == 0 && strcmp(values[i], "best_effort") == 0) {
            f->strict = 0;
        } else {
            snprintf(err, errlen, "unknown option %s: %s (expected mode: strict or best_effort)",
                     keys[i], values[i]);
            free(f);
            return 1;
        }
    }
    *state = f;
    return 0;
}

static void destroy(void *state)
{
    fifo_t *f = state;
    free(f->q);
    free(f);
}

static int enqueue(void *state, uint32_t handle)
{
    fifo_t *f = state;
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        uint32_t *q = realloc(f->q, cap * sizeof *q);
        if (!q)
            return -1;
        f->q = q;
        f->cap = cap;
    }
    f->q[f->n++] = handle;
    return 0;
}

static int pass(void *state)
{
    fifo_t *f = state;
    size_t keep = 0, i = 0;
    for (; i < f->n; i++) {
        int rc = f->host->start(f->host->sim, f->q[i]);
        if (rc < 0)
            return rc;
        if (rc == 1)
            continue;                   /* started: leaves the queue */
        f->q[keep++] = f->q[i];
        if (f->strict) {
            i++;
            break;
        }
    }
    for (; i < f->n; i++)
        f->q[keep++] = f->q[i];
    f->n = keep;
    return 0;
}

static size_t queued(const void *state) { return ((const fifo_t *)state)->n; }

static const fleetsim_policy policy = {
    .abi = 1, .name = "fifo-plugin", .create = create, .destroy = destroy,
    .enqueue = enqueue, .pass = pass, .job_end = NULL, .queued = queued};

const fleetsim_policy *fleetsim_policy_entry(void);
const fleetsim_policy *fleetsim_policy_entry(void) { return &policy; }
