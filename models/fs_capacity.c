/*
 * fs_capacity: the outages of cluster.outages as node drains (fs_capacity.h).
 */
#include "fs_capacity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_sim.h"
#include "../traces/fs_outages.h"
#include "../traces/fs_resv.h"

typedef struct cap {
    fs_model_t *m;
    fs_outages_t o;
    uint32_t id;
} cap_t;

/* event data: row index x 2 + (0 start, 1 end) */
static int on_event(void *ud, fs_model_t *m, uint64_t data)
{
    cap_t *c = ud;
    const fs_outage_t *r = &c->o.rows[data / 2];
    int rc = 0;
    for (uint32_t n = r->lo; n < r->hi && !rc; n++)
        rc = data % 2 ? fs_model_node_up(m, n) : fs_model_node_down(m, n, FS_DOWN_DRAIN, NULL);
    return rc;
}

static void destroy(void *ud)
{
    cap_t *c = ud;
    fs_outages_free(&c->o);
    fs_free(c);
}

static const fs_module_ops_t ops = {
    .name = "outages",
    .on_event = on_event,
    .destroy = destroy,
};

static int load(const fs_config_t *cfg, const fs_cluster_t *cl, fs_outages_t *o, fs_error_t *err)
{
    int rc = fs_resv_outages_read(cfg->cluster.outages, cfg->cluster.outages_origin, o, err);
    if (rc)
        return rc;
    const char **names = fs_malloc((cl->n_pools + 1) * sizeof *names);
    uint32_t *first = fs_malloc((cl->n_pools + 1) * sizeof *first);
    uint32_t *count = fs_malloc((cl->n_pools + 1) * sizeof *count);
    if (!names || !first || !count) {
        rc = fs_error_set(err, FS_ENOMEM, "cluster.outages: out of memory");
    } else {
        for (uint32_t p = 0; p < cl->n_pools; p++) {
            names[p] = cl->pools[p].name;
            first[p] = cl->pools[p].first_node;
            count[p] = cl->pools[p].n_nodes;
        }
        rc = fs_outages_resolve(o, cl->n_nodes, names, first, count, cl->n_pools, err);
    }
    fs_free(names);
    fs_free(first);
    fs_free(count);
    if (rc)
        fs_outages_free(o);
    return rc;
}

int fs_capacity_cfg_check(const fs_config_t *cfg, const fs_cluster_t *cl, char *key,
                          size_t keylen, fs_error_t *err)
{
    if (!cfg->cluster.outages)
        return 0;
    fs_outages_t o;
    int rc = load(cfg, cl, &o, err);
    if (rc && rc != FS_ENOMEM && key && keylen)
        snprintf(key, keylen, "cluster.outages");
    if (!rc)
        fs_outages_free(&o);
    return rc;
}

int fs_capacity_attach(fs_model_t *m, fs_error_t *err)
{
    const fs_config_t *cfg = fs_model_config(m);
    if (!cfg->cluster.outages)
        return 0;
    cap_t *c = fs_calloc(1, sizeof *c);
    if (!c)
        return fs_error_set(err, FS_ENOMEM, "cluster.outages: out of memory");
    c->m = m;
    int rc = load(cfg, fs_model_cluster(m), &c->o, err);
    if (rc) {
        fs_free(c);
        return rc;
    }
    if (fs_model_add_module(m, &ops, c, &c->id)) {
        destroy(c);
        return fs_error_set(err, FS_ENOMEM, "cluster.outages: out of memory");
    }
    /* the model owns c from here */
    for (size_t i = 0; i < c->o.n; i++) {
        const fs_outage_t *r = &c->o.rows[i];
        if (fs_model_module_event(m, c->id, r->start, FS_PRIO_FAILURE, 2 * (uint64_t)i, NULL) ||
            fs_model_module_event(m, c->id, r->end, FS_PRIO_REPAIR, 2 * (uint64_t)i + 1, NULL))
            return fs_error_set(err, FS_ENOMEM, "cluster.outages: out of memory");
    }
    return 0;
}

/* ---- the plan backfill reads (fs_capacity.h) ------------------------------------------ */

static int by_end(const void *a, const void *b)
{
    const fs_outage_t *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

int fs_capplan_load(const fs_config_t *cfg, const fs_cluster_t *cl, fs_capplan_t *out,
                    fs_error_t *err)
{
    memset(out, 0, sizeof *out);
    if (!cfg->cluster.outages)
        return 0;
    int rc = load(cfg, cl, &out->o, err);
    if (rc)
        return rc;
    if (out->o.n == 0)
        return 0;
    qsort(out->o.rows, out->o.n, sizeof *out->o.rows, by_end);
    out->gpus = fs_calloc(out->o.n, sizeof *out->gpus);
    if (!out->gpus) {
        fs_capplan_free(out);
        return fs_error_set(err, FS_ENOMEM, "cluster.outages: out of memory");
    }
    for (size_t i = 0; i < out->o.n; i++) {
        const fs_outage_t *r = &out->o.rows[i];
        for (uint32_t p = 0; p < cl->n_pools; p++) {
            uint32_t a = cl->pools[p].first_node, b = a + cl->pools[p].n_nodes;
            a = a > r->lo ? a : r->lo;
            b = b < r->hi ? b : r->hi;
            if (a < b)
                out->gpus[i] += (uint64_t)(b - a) * cl->pools[p].gpn;
        }
    }
    return 0;
}

void fs_capplan_free(fs_capplan_t *c)
{
    fs_outages_free(&c->o);
    fs_free(c->gpus);
    fs_free(c->held);
    memset(c, 0, sizeof *c);
}

int fs_capplan_live(fs_capplan_t *c, fs_time_t now)
{
    while (c->live < c->o.n && c->o.rows[c->live].end <= now)
        c->live++;
    return c->live < c->o.n;
}

size_t fs_capplan_takes(const fs_capplan_t *c, fs_time_t now, fs_time_t *tdg)
{
    size_t k = 0;
    for (size_t i = c->live; i < c->o.n; i++) {
        const fs_outage_t *r = &c->o.rows[i];
        if (r->end <= now)
            continue;
        fs_time_t g = (fs_time_t)c->gpus[i];
        if (r->start > now) {
            tdg[3 * k] = r->start;
            tdg[3 * k + 1] = r->end - r->start;
            tdg[3 * k + 2] = g;
        } else {
            tdg[3 * k] = r->end;
            tdg[3 * k + 1] = FS_TIME_NEVER - r->end;
            tdg[3 * k + 2] = -g;
        }
        k++;
    }
    return k;
}

int fs_capplan_hold(fs_capplan_t *c, fs_model_t *m, fs_time_t now, fs_time_t end)
{
    const fs_cluster_t *cl = fs_model_cluster(m);
    c->n_held = 0;
    for (size_t i = c->live; i < c->o.n; i++) {
        const fs_outage_t *r = &c->o.rows[i];
        if (r->start <= now || r->start >= end)
            continue;
        for (uint32_t n = r->lo; n < r->hi; n++) {
            const fs_pool_t *pl = &cl->pools[cl->node_pool[n]];
            /* down already, or no room for anything there (a node with no
             * free whole GPU takes no job unless its GPUs are shared or cut) */
            if (!cl->node_up[n] || (!cl->node_free[n] && !pl->mig && !pl->share_n))
                continue;
            if (fs_grow((void **)&c->held, &c->cap_held, c->n_held + 1, sizeof *c->held))
                return FS_ENOMEM;
            int rc = fs_model_node_down(m, n, FS_DOWN_DRAIN, NULL);
            if (rc)
                return rc;
            c->held[c->n_held++] = n;
        }
    }
    return 0;
}

int fs_capplan_release(fs_capplan_t *c, fs_model_t *m)
{
    int rc = 0;
    for (size_t i = 0; i < c->n_held && !rc; i++)
        rc = fs_model_node_up(m, c->held[i]);
    c->n_held = 0;
    return rc;
}
