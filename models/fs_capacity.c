/*
 * fs_capacity: the outages of cluster.outages as node drains (fs_capacity.h).
 */
#include "fs_capacity.h"

#include <stdio.h>
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
