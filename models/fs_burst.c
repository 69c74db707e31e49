#include "fs_burst.h"
#include "../sim/fs_alloc.h"

#include <string.h>

typedef struct fs_burst {
    uint32_t id;            /* module id */
    uint32_t n_pools;
    uint8_t *is_burst;      /* per pool */
    fs_time_t *after;       /* per pool, us */
    uint64_t *cap;          /* per pool, GPUs */
    fs_time_t *afters;      /* distinct burst_after values > 0 */
    size_t n_afters;
    uint32_t *scratch;      /* n_pools */
} fs_burst_t;

static void burst_destroy(void *ud)
{
    fs_burst_t *b = ud;
    if (!b)
        return;
    fs_free(b->is_burst);
    fs_free(b->after);
    fs_free(b->cap);
    fs_free(b->afters);
    fs_free(b->scratch);
    fs_free(b);
}

/* The timer only has to exist: the pass at the end of its instant does the rest. */
static int burst_event(void *ud, fs_model_t *m, uint64_t data) { return 0; }

static int burst_allows(const void *ud, const fs_cluster_t *c, uint32_t pool,
                        const fs_jobq_t *job, fs_time_t now);
static int burst_pools(void *ud, const fs_cluster_t *c, const fs_jobq_t *job, fs_time_t now,
                       const uint32_t **pools, size_t *n);
static int burst_admitted(void *ud, fs_model_t *m, const fs_jobq_t *job);

static const fs_gate_ops_t burst_gate = {
    .allows = burst_allows, .pools = burst_pools, .admitted = burst_admitted};
static const fs_module_ops_t burst_ops = {
    .name = "cloud burst", .on_event = burst_event, .destroy = burst_destroy, .gate = &burst_gate};

/* Fills b from the cost.pools rows.  0 or FS_ENOMEM. */
static int fill(fs_burst_t *b, const fs_config_t *cfg, const fs_cluster_t *c, int *any)
{
    size_t np = c->n_pools ? c->n_pools : 1;
    b->n_pools = c->n_pools;
    b->is_burst = fs_calloc(np, 1);
    b->after = fs_calloc(np, sizeof *b->after);
    b->cap = fs_calloc(np, sizeof *b->cap);
    b->afters = fs_calloc(np, sizeof *b->afters);
    b->scratch = fs_calloc(np, sizeof *b->scratch);
    if (!b->is_burst || !b->after || !b->cap || !b->afters || !b->scratch)
        return FS_ENOMEM;
    *any = 0;
    for (size_t i = 0; i < cfg->cost.n_pools; i++) {
        const fs_cost_pool_cfg_t *r = &cfg->cost.pools[i];
        int p = r->burst && r->pool ? fs_cluster_find_pool(c, r->pool) : -1;
        if (p < 0)
            continue;
        *any = 1;
        b->is_burst[p] = 1;
        b->after[p] = r->burst_after;
        b->cap[p] = r->burst_cap ? r->burst_cap : c->pools[p].gpus_total;
        int seen = r->burst_after == 0;
        for (size_t k = 0; k < b->n_afters && !seen; k++)
            seen = b->afters[k] == r->burst_after;
        if (!seen)
            b->afters[b->n_afters++] = r->burst_after;
    }
    return 0;
}

int fs_burst_attach(fs_model_t *m, fs_error_t *err)
{
    const fs_config_t *cfg = fs_model_config(m);
    fs_burst_t *b = fs_calloc(1, sizeof *b);
    int any = 0;
    if (!b || fill(b, cfg, fs_model_cluster(m), &any)) {
        burst_destroy(b);
        return fs_error_set(err, FS_ENOMEM, "cloud burst: out of memory");
    }
    if (!any) {
        burst_destroy(b);
        return 0;
    }
    if (fs_model_add_module(m, &burst_ops, b, &b->id)) {
        burst_destroy(b);
        return fs_error_set(err, FS_ENOMEM, "cloud burst: out of memory");
    }
    return 0;
}

static int burst_allows(const void *ud, const fs_cluster_t *c, uint32_t pool,
                        const fs_jobq_t *job, fs_time_t now)
{
    const fs_burst_t *b = ud;
    if (pool >= b->n_pools || !b->is_burst[pool])
        return 1;
    if (now - job->submit < b->after[pool])
        return 0;
    uint64_t need = job->gpu_milli < 1000 ? 1 : job->gpus;
    return c->pools[pool].gpus_busy + need <= b->cap[pool];
}

static int burst_pools(void *ud, const fs_cluster_t *c, const fs_jobq_t *job, fs_time_t now,
                       const uint32_t **pools, size_t *n)
{
    fs_burst_t *b = ud;
    size_t total = *pools ? *n : b->n_pools, k = 0;
    for (size_t i = 0; i < total; i++) {
        uint32_t p = *pools ? (*pools)[i] : (uint32_t)i;
        if (burst_allows(b, c, p, job, now))
            b->scratch[k++] = p;
    }
    if (k == total)
        return total > 0;
    *pools = b->scratch;
    *n = k;
    return k > 0;
}

static int burst_admitted(void *ud, fs_model_t *m, const fs_jobq_t *job)
{
    const fs_burst_t *b = ud;
    for (size_t k = 0; k < b->n_afters; k++) {
        int rc = fs_model_module_event(m, b->id, job->submit + b->afters[k], FS_PRIO_TIMER, 0,
                                       NULL);
        if (rc)
            return rc;
    }
    return 0;
}
