#include "fs_autoscale.h"
#include "../sim/fs_alloc.h"

#include <stdlib.h>
#include <string.h>

enum { ABSENT = 0, PROVISIONING = 1, READY = 2 };
enum { EV_SCAN = 0, EV_READY = 1 };     /* data: node << 1 | kind */

typedef struct group {
    uint32_t pool, first, n, gpn;       /* the pool's nodes [first, first + n) */
    uint32_t min, max;
    fs_time_t delay;                    /* decision -> GPUs allocatable */
    uint32_t provisioning, ready;       /* nodes in each state */
    int at_min;                         /* the last scan found it at min */
    uint32_t *bins;                     /* scratch: free GPUs of the bins of a scan */
    size_t cap_bins;
    uint32_t *need;                     /* scratch: GPUs of the group's pending jobs */
    size_t n_need, cap_need;
    uint64_t added, removed;            /* nodes, since time 0 */
    double prov_s, ready_s;             /* node-seconds in each state, up to last_t */
} group_t;

typedef struct autoscale {
    uint32_t id;
    fs_usage_t *usage;
    const fs_autoscale_cfg_t *cfg;
    group_t *g;
    size_t n_g;
    uint8_t *state;                     /* per node of the groups' pools, by global id */
    fs_time_t *empty_since;             /* per node: first scan that saw it empty; -1 */
    fs_time_t last_add;                 /* last scale-up decision; -1 none */
    uint32_t *group_of;                 /* per pool: group index + 1; 0 none */
    uint32_t n_pools;
    fs_time_t last_t;                   /* the node-seconds are counted up to here */
    fs_nodegroup_row_t *rows;           /* /nodegroups rows of the samples, until the end */
    size_t n_rows, cap_rows;
    int oom;                            /* a sample's rows could not be kept */
} autoscale_t;

/* Counts the node-seconds of every group up to now (before a change). */
static void advance(autoscale_t *a, fs_time_t now)
{
    if (now <= a->last_t)
        return;
    double dt = fs_time_to_s(now - a->last_t);
    for (size_t i = 0; i < a->n_g; i++) {
        a->g[i].prov_s += dt * a->g[i].provisioning;
        a->g[i].ready_s += dt * a->g[i].ready;
    }
    a->last_t = now;
}

/* Keeps the rows of every group at now (a /timeline sample or the end). */
static void keep_rows(autoscale_t *a, fs_time_t now)
{
    advance(a, now);
    if (a->oom || fs_grow((void **)&a->rows, &a->cap_rows, a->n_rows + a->n_g, sizeof *a->rows)) {
        a->oom = 1;
        return;
    }
    for (size_t i = 0; i < a->n_g; i++) {
        const group_t *g = &a->g[i];
        a->rows[a->n_rows++] = (fs_nodegroup_row_t){
            .time = fs_time_to_s(now), .group = (uint32_t)i, .pool = g->pool,
            .nodes_provisioning = g->provisioning, .nodes_ready = g->ready, .nodes_added = g->added,
            .nodes_removed = g->removed, .node_s_provisioning = g->prov_s, .node_s_ready = g->ready_s};
    }
}

static void as_destroy(void *ud)
{
    autoscale_t *a = ud;
    if (!a)
        return;
    for (size_t i = 0; i < a->n_g; i++) {
        fs_free(a->g[i].bins);
        fs_free(a->g[i].need);
    }
    fs_free(a->g);
    fs_free(a->state);
    fs_free(a->empty_since);
    fs_free(a->group_of);
    fs_free(a->rows);
    fs_free(a);
}

static void as_sample(void *ud, const fs_model_t *m, fs_sample_row_t *row)
{
    autoscale_t *a = ud;
    if (fs_model_sink(m)->nodegroup)
        keep_rows(a, fs_model_now(m));
    uint32_t p = 0, r = 0;
    for (size_t i = 0; i < a->n_g; i++) {
        p += a->g[i].provisioning;
        r += a->g[i].ready;
    }
    row->nodes_provisioning = p;
    row->nodes_autoscaled = r;
}

static int cmp_desc(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? 1 : a > b ? -1 : 0;
}

/* Nodes to add to g for its pending jobs: first-fit decreasing onto the
 * free GPUs of its nodes (those in service as they are, those still
 * provisioning whole, as they come up empty), then onto new nodes; a job
 * of a node or more takes whole empty nodes. */
static int estimate(const autoscale_t *a, const fs_cluster_t *c, group_t *g, uint32_t *add)
{
    size_t nb = 0;
    if (fs_grow((void **)&g->bins, &g->cap_bins, (size_t)g->provisioning + g->ready + 1,
                sizeof *g->bins))
        return FS_ENOMEM;
    for (uint32_t node = g->first; node < g->first + g->n; node++)
        if (a->state[node] == PROVISIONING)
            g->bins[nb++] = g->gpn;
        else if (a->state[node] == READY && c->node_up[node] && c->node_free[node] > 0)
            g->bins[nb++] = c->node_free[node];
    size_t first_new = nb;
    qsort(g->need, g->n_need, sizeof *g->need, cmp_desc);
    for (size_t j = 0; j < g->n_need; j++) {
        uint32_t need = g->need[j];
        if (need >= g->gpn) {           /* whole nodes: empty bins first, then new ones */
            uint32_t k = (need + g->gpn - 1) / g->gpn;
            for (size_t b = 0; b < nb && k > 0; b++)
                if (g->bins[b] == g->gpn) {
                    g->bins[b] = 0;
                    k--;
                }
            while (k-- > 0) {
                if (fs_grow((void **)&g->bins, &g->cap_bins, nb + 1, sizeof *g->bins))
                    return FS_ENOMEM;
                g->bins[nb++] = 0;
            }
            continue;
        }
        size_t b = 0;
        while (b < nb && g->bins[b] < need)
            b++;
        if (b == nb) {
            if (fs_grow((void **)&g->bins, &g->cap_bins, nb + 1, sizeof *g->bins))
                return FS_ENOMEM;
            g->bins[nb++] = g->gpn;
        }
        g->bins[b] -= need;
    }
    *add = (uint32_t)(nb - first_new);
    return 0;
}

static int provision(autoscale_t *a, fs_model_t *m, group_t *g, uint32_t add)
{
    fs_time_t now = fs_model_now(m);
    advance(a, now);
    for (uint32_t node = g->first; node < g->first + g->n && add > 0; node++) {
        if (a->state[node] != ABSENT)
            continue;
        a->state[node] = PROVISIONING;
        g->provisioning++;
        g->added++;
        add--;
        int rc = fs_usage_set_owned(a->usage, g->pool, (int64_t)g->gpn);
        if (!rc)
            rc = fs_model_module_event(m, a->id, now + g->delay, FS_PRIO_REPAIR,
                                       (uint64_t)node << 1 | EV_READY, NULL);
        if (rc)
            return rc;
    }
    a->last_add = now;
    return 0;
}

static int scan(autoscale_t *a, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    const fs_cluster_t *c = fs_model_cluster(m);
    for (size_t i = 0; i < a->n_g; i++)
        a->g[i].n_need = 0;
    /* pending jobs that cannot start now, each to the first group of its pools
     * (no walk over the job slots while nothing waits) */
    for (size_t s = 0, n = fs_model_jobs_queued(m) ? fs_model_slots(m) : 0; s < n; s++) {
        fs_jobrt_t *j = fs_model_job(m, (uint32_t)s);
        if (j->state != FS_JOBRT_QUEUED || fs_model_fits(m, (uint32_t)s))
            continue;
        const uint32_t *pools;
        size_t np = fs_model_job_pools(m, (uint32_t)s, &pools);
        if (!pools)
            np = a->n_pools;    /* any pool */
        for (size_t k = 0; k < np; k++) {
            uint32_t p = pools ? pools[k] : (uint32_t)k;
            if (p >= a->n_pools || !a->group_of[p])
                continue;
            group_t *g = &a->g[a->group_of[p] - 1];
            uint64_t milli = (uint64_t)j->job.gpus * j->job.gpu_milli;
            uint32_t need = (uint32_t)((milli + 999) / 1000);
            if (fs_grow((void **)&g->need, &g->cap_need, g->n_need + 1, sizeof *g->need))
                return FS_ENOMEM;
            g->need[g->n_need++] = need ? need : 1;
            break;
        }
    }
    for (size_t i = 0; i < a->n_g; i++) {
        group_t *g = &a->g[i];
        uint32_t add = 0;
        int rc = g->n_need ? estimate(a, c, g, &add) : 0;
        uint32_t room = g->max - g->provisioning - g->ready;
        if (!rc && add)
            rc = provision(a, m, g, add < room ? add : room);
        if (rc)
            return rc;
    }
    /* scale down: empty provisioned nodes above min, highest ids first */
    int may_remove = a->last_add < 0 || now - a->last_add >= a->cfg->delay_after_add;
    for (size_t i = 0; i < a->n_g; i++) {
        group_t *g = &a->g[i];
        /* at min no node is a candidate (CA counts unneeded time only for
         * candidates): no walk; the clocks start again once above min */
        if (g->ready + g->provisioning <= g->min) {
            g->at_min = 1;
            continue;
        }
        for (uint32_t node = g->first + g->n; g->at_min && node-- > g->first;)
            a->empty_since[node] = -1;
        g->at_min = 0;
        for (uint32_t node = g->first + g->n; node-- > g->first;) {
            if (a->state[node] != READY)
                continue;
            int empty = c->node_up[node] && c->node_free[node] == g->gpn;
            if (!empty) {
                a->empty_since[node] = -1;
                continue;
            }
            if (a->empty_since[node] < 0)
                a->empty_since[node] = now;
            if (!may_remove || g->ready + g->provisioning <= g->min ||
                now - a->empty_since[node] < a->cfg->unneeded)
                continue;
            advance(a, now);
            int rc = fs_model_node_down(m, node, FS_DOWN_DRAIN, NULL);
            if (!rc)
                rc = fs_usage_set_owned(a->usage, g->pool, -(int64_t)g->gpn);
            if (rc)
                return rc;
            a->state[node] = ABSENT;
            a->empty_since[node] = -1;
            g->ready--;
            g->removed++;
        }
    }
    /* the next scan: a timer while a group can grow, else it only removes */
    int can_grow = 0;
    for (size_t i = 0; i < a->n_g; i++)
        can_grow |= a->g[i].provisioning + a->g[i].ready < a->g[i].max;
    return fs_model_module_event(m, a->id, now + a->cfg->scan,
                                 can_grow ? FS_PRIO_TIMER : FS_PRIO_FAILURE, EV_SCAN, NULL);
}

static int as_event(void *ud, fs_model_t *m, uint64_t data)
{
    autoscale_t *a = ud;
    if ((data & 1) == EV_SCAN)
        return scan(a, m);
    uint32_t node = (uint32_t)(data >> 1);
    const fs_cluster_t *c = fs_model_cluster(m);
    if (node >= c->n_nodes || a->state[node] != PROVISIONING)
        return FS_EINTERNAL;
    group_t *g = &a->g[a->group_of[c->node_pool[node]] - 1];
    advance(a, fs_model_now(m));
    a->state[node] = READY;
    a->empty_since[node] = -1;
    g->provisioning--;
    g->ready++;
    return fs_model_node_up(m, node);
}

/* The end: the last rows, then every kept row to /nodegroups. */
static int as_finish(void *ud, fs_model_t *m, fs_run_totals_t *totals)
{
    autoscale_t *a = ud;
    (void)totals;
    const fs_sink_t *sk = fs_model_sink(m);
    if (!sk->nodegroup)
        return 0;
    double end = fs_time_to_s(fs_model_now(m));
    if (a->n_rows >= a->n_g && a->rows[a->n_rows - 1].time == end)
        a->n_rows -= a->n_g;    /* a sample at the last instant: the end's rows replace it */
    keep_rows(a, fs_model_now(m));
    if (a->oom)
        return FS_ENOMEM;
    for (size_t i = 0; i < a->n_rows; i++) {
        int rc = sk->nodegroup(sk->ud, &a->rows[i]);
        if (rc)
            return rc;
    }
    a->n_rows = 0;
    return 0;
}

static const fs_module_ops_t as_ops = {.name = "cluster autoscaler", .on_event = as_event,
                                       .finish = as_finish, .destroy = as_destroy,
                                       .sample = as_sample};

/* The groups of cfg; FS_EINVAL names the key. */
static int build(autoscale_t *a, const fs_config_t *cfg, const fs_cluster_t *c, fs_error_t *err)
{
    const fs_autoscale_cfg_t *ac = &cfg->cluster.autoscale;
    const fs_cost_cfg_t *cc = &cfg->cost;
    a->n_pools = c->n_pools;
    if (!(a->g = fs_calloc(ac->n_groups, sizeof *a->g)) ||
        !(a->group_of = fs_calloc(c->n_pools, sizeof *a->group_of)) ||
        !(a->state = fs_calloc(c->n_nodes, sizeof *a->state)) ||
        !(a->empty_since = fs_malloc(c->n_nodes * sizeof *a->empty_since)))
        return fs_error_set(err, FS_ENOMEM, "cluster autoscaler: out of memory");
    for (uint32_t n = 0; n < c->n_nodes; n++)
        a->empty_since[n] = -1;
    for (size_t i = 0; i < ac->n_groups; i++) {
        const fs_nodegroup_cfg_t *gc = &ac->groups[i];
        int p = fs_cluster_find_pool(c, gc->pool);
        if (p < 0)
            return fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups.%zu.pool: no pool "
                                "named '%s'", i, gc->pool);
        if (a->group_of[p])
            return fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups.%zu.pool: pool "
                                "'%s' is already a node group (item %u)", i, gc->pool,
                                a->group_of[p] - 1);
        const fs_pool_t *pl = &c->pools[p];
        uint32_t max = gc->max ? gc->max : pl->n_nodes;
        if (max > pl->n_nodes)
            return fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups.%zu.max: %u nodes, "
                                "more than pool '%s' has (%u; its nodes is the most it can have)",
                                i, max, pl->name, pl->n_nodes);
        if (gc->min > max)
            return fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups.%zu.min: %u is "
                                "above max (%u)", i, gc->min, max);
        for (size_t k = 0; k < cc->n_purchases; k++)
            if (cc->purchases[k].pool && strcmp(cc->purchases[k].pool, pl->name) == 0)
                return fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups.%zu.pool: "
                                    "pool '%s' also has cost.purchases (a node group's nodes "
                                    "come and go with the autoscaler)", i, pl->name);
        for (size_t k = 0; k < cc->n_pools; k++)
            if (cc->pools[k].pool && strcmp(cc->pools[k].pool, pl->name) == 0 &&
                (cc->pools[k].online || cc->pools[k].retire))
                return fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups.%zu.pool: "
                                    "pool '%s' also has cost.pools online/retire dates", i,
                                    pl->name);
        a->group_of[p] = (uint32_t)i + 1;
        a->g[i] = (group_t){.pool = (uint32_t)p, .first = pl->first_node, .n = pl->n_nodes,
                            .gpn = pl->gpn, .min = gc->min, .max = max,
                            .delay = gc->provision + gc->gpu_ready};
    }
    a->n_g = ac->n_groups;
    return 0;
}

/* Every group starts with its min nodes (lowest ids); the rest are held
 * out of the fleet. */
static int start(autoscale_t *a, fs_model_t *m)
{
    for (size_t i = 0; i < a->n_g; i++) {
        group_t *g = &a->g[i];
        for (uint32_t k = 0; k < g->n; k++) {
            uint32_t node = g->first + k;
            if (k < g->min) {
                a->state[node] = READY;
                continue;
            }
            int rc = fs_model_node_down(m, node, FS_DOWN_DRAIN, NULL);
            if (rc)
                return rc;
        }
        g->ready = g->min;
        int rc = fs_usage_set_owned(a->usage, g->pool, -(int64_t)(g->n - g->min) * g->gpn);
        if (rc)
            return rc;
    }
    return fs_model_module_event(m, a->id, fs_model_now(m) + a->cfg->scan, FS_PRIO_TIMER, EV_SCAN,
                                 NULL);
}

int fs_autoscale_attach(fs_model_t *m, fs_error_t *err)
{
    fs_usage_t *u = fs_model_usage(m);
    const fs_config_t *cfg = fs_model_config(m);
    if (cfg->cluster.autoscale.n_groups == 0)
        return 0;
    autoscale_t *a = fs_calloc(1, sizeof *a);
    if (!a)
        return fs_error_set(err, FS_ENOMEM, "cluster autoscaler: out of memory");
    a->usage = u;
    a->cfg = &cfg->cluster.autoscale;
    a->last_add = -1;
    a->last_t = fs_model_now(m);
    int rc = build(a, cfg, fs_model_cluster(m), err);
    if (rc) {
        as_destroy(a);
        return rc;
    }
    if (fs_model_add_module(m, &as_ops, a, &a->id)) {
        as_destroy(a);
        return fs_error_set(err, FS_ENOMEM, "cluster autoscaler: out of memory");
    }
    rc = start(a, m);
    if (rc)
        return fs_error_set(err, rc, "cluster autoscaler: %s", fs_error_describe(rc));
    return 0;
}
