#include "fs_purchase.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A contiguous range of one pool's nodes with one delivery and retirement. */
typedef struct batch {
    uint32_t pool;
    uint32_t first, n;      /* global node ids [first, first + n) */
    fs_time_t at, retire;   /* retire 0: never */
} batch_t;

typedef struct purchase {
    uint32_t id;
    fs_usage_t *usage;
    batch_t *b;
    size_t n, cap;
} purchase_t;

enum { EV_DELIVER = 0, EV_RETIRE = 1 };

static void purchase_destroy(void *ud)
{
    purchase_t *p = ud;
    if (p) {
        fs_free(p->b);
        fs_free(p);
    }
}

/* Holds (down = 1) or releases the batch's nodes and moves owned GPUs. */
static int hold(purchase_t *p, fs_model_t *m, const batch_t *b, int down)
{
    for (uint32_t i = 0; i < b->n; i++) {
        int rc = down ? fs_model_node_down(m, b->first + i, FS_DOWN_DRAIN, NULL)
                      : fs_model_node_up(m, b->first + i);
        if (rc)
            return rc;
    }
    int64_t g = (int64_t)b->n * fs_model_cluster(m)->pools[b->pool].gpn;
    return fs_usage_set_owned(p->usage, b->pool, down ? -g : g);
}

static int purchase_event(void *ud, fs_model_t *m, uint64_t data)
{
    purchase_t *p = ud;
    size_t i = (size_t)(data >> 1);
    if (i >= p->n)
        return FS_EINTERNAL;
    return hold(p, m, &p->b[i], (data & 1) == EV_RETIRE);
}

static const fs_module_ops_t purchase_ops = {
    .name = "purchase timeline", .on_event = purchase_event, .destroy = purchase_destroy};

static int add(purchase_t *p, batch_t b)
{
    if (b.n == 0 || (b.at == 0 && b.retire == 0))
        return 0;
    if (fs_grow((void **)&p->b, &p->cap, p->n + 1, sizeof *p->b))
        return FS_ENOMEM;
    p->b[p->n++] = b;
    return 0;
}

fs_time_t fs_purchase_at(const fs_purchase_cfg_t *b)
{
    return b->quarter ? (fs_time_t)(b->quarter - 1) * FS_COST_QUARTER_US : b->at;
}

/* cost.pools[].billing lease: a rate and a term; lease keys only there. */
static int check_lease(const fs_cost_cfg_t *cc, char *key, size_t keylen, fs_error_t *err)
{
    for (size_t r = 0; r < cc->n_pools; r++) {
        const fs_cost_pool_cfg_t *pc = &cc->pools[r];
        if (pc->billing != FS_BILL_LEASE) {
            if (pc->lease_rate > 0 || pc->lease_term > 0) {
                snprintf(key, keylen, "cost.pools.%zu.%s", r,
                         pc->lease_rate > 0 ? "lease_rate" : "lease_term");
                return fs_error_set(err, FS_EINVAL, "%s: pool '%s' is not leased (lease_rate and "
                                    "lease_term go with billing: lease)", key, pc->pool);
            }
            continue;
        }
        if (pc->lease_rate <= 0 || pc->lease_term == 0) {
            snprintf(key, keylen, "cost.pools.%zu.billing", r);
            return fs_error_set(err, FS_EINVAL, "cost.pools.%zu: billing lease needs lease_rate "
                                "(> 0, $ per GPU-month) and lease_term (months >= 1); pool '%s' "
                                "has %s%s%s", r, pc->pool, pc->lease_rate > 0 ? "" : "no lease_rate",
                                pc->lease_rate <= 0 && !pc->lease_term ? " and " : "",
                                pc->lease_term ? "" : "no lease_term");
        }
    }
    return 0;
}

int fs_purchase_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    const fs_cost_cfg_t *cc = &cfg->cost;
    if (keylen)
        key[0] = '\0';
    int rc = check_lease(cc, key, keylen, err);
    if (rc)
        return rc;
    uint32_t quarters = (uint32_t)llround(cfg->plan.years * 4);
    for (size_t i = 0; i < cc->n_purchases; i++) {
        const fs_purchase_cfg_t *b = &cc->purchases[i];
        if (b->quarter && b->at) {
            snprintf(key, keylen, "cost.purchases.%zu.quarter", i);
            return fs_error_set(err, FS_EINVAL, "%s: give at or quarter, not both", key);
        }
        if (b->quarter && cfg->plan.given && quarters && b->quarter > quarters) {
            snprintf(key, keylen, "cost.purchases.%zu.quarter", i);
            return fs_error_set(err, FS_EINVAL, "%s: quarter %u is beyond plan.years (%g years: "
                                "quarters 1..%u)", key, b->quarter, cfg->plan.years, quarters);
        }
    }
    for (size_t q = 0; q < cfg->cluster.n_pools; q++) {
        const fs_pool_cfg_t *pc = &cfg->cluster.pools[q];
        uint64_t bought = 0;
        size_t over = 0;    /* the batch that passes the pool's nodes */
        for (size_t i = 0; i < cc->n_purchases; i++)
            if (pc->name && cc->purchases[i].pool && strcmp(cc->purchases[i].pool, pc->name) == 0 &&
                (bought += cc->purchases[i].nodes) > pc->nodes && !over)
                over = i + 1;
        if (over) {
            snprintf(key, keylen, "cost.purchases.%zu.nodes", over - 1);
            return fs_error_set(err, FS_EINVAL, "cost.purchases: %llu nodes bought for pool '%s', "
                                "which has %u (cluster.pools: nodes is the most it ever has)",
                                (unsigned long long)bought, pc->name, pc->nodes);
        }
    }
    for (size_t r = 0; r < cc->n_pools; r++)
        if (cc->pools[r].retire && cc->pools[r].retire <= cc->pools[r].online) {
            snprintf(key, keylen, "cost.pools.%zu.retire", r);
            return fs_error_set(err, FS_EINVAL, "cost.pools.%zu.retire: must be after online", r);
        }
    for (size_t i = 0; i < cc->n_purchases; i++)
        if (cc->purchases[i].retire && cc->purchases[i].retire <= fs_purchase_at(&cc->purchases[i])) {
            snprintf(key, keylen, "cost.purchases.%zu.retire", i);
            return fs_error_set(err, FS_EINVAL, "cost.purchases.%zu.retire: must be after at", i);
        }
    return 0;
}

/* Splits every pool into its batches (the pool's own dates for the nodes in
 * no purchase batch); cfg checked by fs_purchase_cfg_check. */
static int build(purchase_t *p, const fs_config_t *cfg, const fs_cluster_t *c)
{
    const fs_cost_cfg_t *cc = &cfg->cost;
    for (uint32_t q = 0; q < c->n_pools; q++) {
        const fs_pool_t *pl = &c->pools[q];
        uint64_t bought = 0;
        for (size_t i = 0; i < cc->n_purchases; i++)
            if (cc->purchases[i].pool && strcmp(cc->purchases[i].pool, pl->name) == 0)
                bought += cc->purchases[i].nodes;
        if (bought > pl->n_nodes)   /* the cluster is not the config's */
            return FS_EINTERNAL;
        uint32_t base = pl->n_nodes - (uint32_t)bought, next = pl->first_node + base;
        int r = -1;
        for (size_t i = 0; i < cc->n_pools; i++)
            if (cc->pools[i].pool && strcmp(cc->pools[i].pool, pl->name) == 0)
                r = (int)i;
        batch_t own = {q, pl->first_node, base, r >= 0 ? cc->pools[r].online : 0,
                       r >= 0 ? cc->pools[r].retire : 0};
        if (add(p, own))
            return FS_ENOMEM;
        for (size_t i = 0; i < cc->n_purchases; i++) {
            const fs_purchase_cfg_t *pc = &cc->purchases[i];
            if (!pc->pool || strcmp(pc->pool, pl->name) != 0)
                continue;
            if (add(p, (batch_t){q, next, pc->nodes, fs_purchase_at(pc), pc->retire}))
                return FS_ENOMEM;
            next += pc->nodes;
        }
    }
    return 0;
}

/* Holds the undelivered batches now and schedules deliveries and retirements. */
static int start(purchase_t *p, fs_model_t *m)
{
    for (size_t i = 0; i < p->n; i++) {
        const batch_t *b = &p->b[i];
        int rc = 0;
        if (b->at > 0 && !(rc = hold(p, m, b, 1)))
            rc = fs_model_module_event(m, p->id, b->at, FS_PRIO_REPAIR, (uint64_t)i << 1 | EV_DELIVER,
                                       NULL);
        if (!rc && b->retire > 0)
            rc = fs_model_module_event(m, p->id, b->retire, FS_PRIO_TIMER,
                                       (uint64_t)i << 1 | EV_RETIRE, NULL);
        if (rc)
            return rc;
    }
    return 0;
}

int fs_purchase_attach(fs_model_t *m, fs_error_t *err)
{
    fs_usage_t *u = fs_model_usage(m);
    purchase_t *p = fs_calloc(1, sizeof *p);
    if (!p)
        return fs_error_set(err, FS_ENOMEM, "purchase timeline: out of memory");
    p->usage = u;
    char key[64];
    int rc = fs_purchase_cfg_check(fs_model_config(m), key, sizeof key, err);
    if (rc) {
        purchase_destroy(p);
        return rc;
    }
    rc = build(p, fs_model_config(m), fs_model_cluster(m));
    if (rc || p->n == 0) {
        purchase_destroy(p);
        return rc ? fs_error_set(err, rc, "purchase timeline: %s", fs_error_describe(rc)) : 0;
    }
    if (fs_model_add_module(m, &purchase_ops, p, &p->id)) {
        purchase_destroy(p);
        return fs_error_set(err, FS_ENOMEM, "purchase timeline: out of memory");
    }
    rc = start(p, m);
    if (rc)
        return fs_error_set(err, rc, "purchase timeline: %s", fs_error_describe(rc));
    return 0;
}
