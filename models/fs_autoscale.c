#include "fs_autoscale.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_rng.h"
#include "fs_cost.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ABSENT = 0, PROVISIONING = 1, READY = 2 };
/* data: x << 3 | kind (x: a node for EV_READY, a batch generation for EV_BATCH) */
enum { EV_SCAN = 0, EV_READY = 1, EV_SEEN = 2, EV_BATCH = 3, EV_RECHECK = 4, EV_POLL = 5,
       EV_VALIDATE = 6, EV_GIVEUP = 7 };
#define EV_SHIFT 3

/* The Cluster Autoscaler's random stream (the expanders' ties, entity 0; a group's failed
 * scale-ups, entity 1 + group).  Purposes are never renumbered (sim/fs_rng.h); 11-13 are the
 * services'. */
#define RNG_AUTOSCALE 20

/* Node group backoff after a failed scale-up (kubernetes/autoscaler FAQ, flags
 * --initial-node-group-backoff-duration 5m, --max-node-group-backoff-duration 30m,
 * --node-group-backoff-reset-timeout 3h): 5 min, doubling per failure up to 30 min, the
 * count reset when the last failure is 3 h old. */
#define CA_BACKOFF_US (300 * 1000000LL)
#define CA_BACKOFF_MAX_US (1800 * 1000000LL)
#define CA_BACKOFF_RESET_US (3 * 3600 * 1000000LL)
/* --max-node-provision-time's default, for a config built without the scenario loader (0). */
#define CA_MAX_PROVISION_US (900 * 1000000LL)

/* Karpenter's constants that are not settings (kubernetes-sigs/karpenter):
 * a pending pod's controller requeues it every 10 s (provisioning/controller.go),
 * the disruption controller polls every 10 s (disruption/controller.go
 * pollingPeriod) and re-checks a command 15 s later before it acts
 * (disruption/consolidation.go commandValidationDelay); the default
 * disruption budget is 10% of a NodePool's nodes, rounded up. */
#define KP_REQUEUE_US 10000000
#define KP_POLL_US 10000000
#define KP_VALIDATE_US 15000000
#define KP_BUDGET_PERCENT 10
#define KP_MAX_GROUPS 64                /* groups as bits of a uint64_t */

/* a job seen entering the queue, checked after the instant's pass */
typedef struct fresh {
    uint32_t slot;
    uint64_t seq;
    fs_time_t at;
} fresh_t;

/* a pending job of a Karpenter batch */
typedef struct pend {
    uint32_t slot, need;                /* need: GPUs (fractions rounded up) */
    uint64_t seq;
    uint64_t groups;                    /* the groups it may use (bits) */
} pend_t;

/* a NodeClaim of a batch: the groups (instance types) it may still be,
 * the GPUs its pods take, and the group it would launch as now */
typedef struct claim {
    uint64_t options;
    uint32_t used, pods, tent;
} claim_t;

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
    double pfail;                       /* a scale-up fails (nodes never register) */
    int fails_long;                     /* provision > max_node_provision_time: every one does */
    uint32_t fails;                     /* failed scale-ups since the backoff's reset */
    fs_time_t backoff_until, last_fail; /* backed off until; the last failure (-1 none) */
    int has_prio;                       /* listed in cluster.autoscale.priorities */
    long prio;
    fs_rng_t rng;                       /* its scale-ups' failures (entity 1 + index) */
    /* this scan's option: new nodes, pods they hold, GPUs those pods use */
    uint32_t opt_nodes, opt_pods;
    uint64_t opt_used;
} group_t;

typedef struct autoscale {
    uint32_t id;
    fs_usage_t *usage;
    const fs_autoscale_cfg_t *cfg;
    group_t *g;
    size_t n_g;
    uint8_t *state;                     /* per node of the groups' pools, by global id */
    uint8_t *failing;                   /* per node: provisioning in a failed scale-up */
    fs_rng_t rng;                       /* the expanders' ties (entity 0) */
    /* scratch of a scan: pending jobs (slot, GPUs), the group whose in-flight
     * nodes hold each one (+1; 0 none), job indices by GPUs, free GPUs of
     * in-flight nodes */
    uint32_t *pj_slot, *pj_need, *pj_cover, *opts, *nfree;
    uint64_t *pj_order;
    size_t n_pj, cap_pj, cap_pj2, cap_pj3, cap_pj4;
    fs_time_t *empty_since;             /* per node: first scan that saw it empty; -1 */
    fs_time_t last_add;                 /* last scale-up decision; -1 none */
    uint32_t *group_of;                 /* per pool: group index + 1; 0 none */
    uint32_t n_pools;
    fs_time_t last_t;                   /* the node-seconds are counted up to here */
    fs_nodegroup_row_t *rows;           /* /nodegroups rows of the samples, until the end */
    size_t n_rows, cap_rows;
    int oom;                            /* a sample's rows could not be kept */
    /* ---- Karpenter (provisioner: karpenter) ---- */
    int karp;
    fs_time_t max_prov;                 /* max_node_provision_time (0 in the config: 15 min) */
    double *price;                      /* per group: $ per node-hour (or GPUs per node) */
    uint32_t *by_price;                 /* group indices, cheapest first */
    fresh_t *fresh;                     /* jobs that entered the queue this instant */
    size_t n_fresh, cap_fresh;
    int seen_pending;                   /* an EV_SEEN is scheduled */
    fs_time_t win_start;                /* the open batch window's first pod; -1 none */
    uint64_t win_gen;                   /* generation of the latest EV_BATCH */
    int recheck_pending;                /* an EV_RECHECK is scheduled */
    int polling;                        /* the disruption controller's poll chain runs */
    fs_time_t poll_anchor;              /* its polls are anchor + k x 10 s */
    uint32_t *chosen;                   /* the command under validation */
    size_t n_chosen, cap_chosen;
    pend_t *pend;                       /* scratch of a batch */
    size_t cap_pend;
    claim_t *claims;
    size_t cap_claims;
    uint32_t *inflight;                 /* scratch of a batch: free GPUs per node */
    fs_time_t *nominated;               /* per node: a batch counted on it until then */
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
        fs_rng_release(&a->g[i].rng);
    }
    fs_rng_release(&a->rng);
    fs_free(a->pj_slot);
    fs_free(a->pj_need);
    fs_free(a->pj_cover);
    fs_free(a->pj_order);
    fs_free(a->opts);
    fs_free(a->nfree);
    fs_free(a->failing);
    fs_free(a->g);
    fs_free(a->state);
    fs_free(a->empty_since);
    fs_free(a->group_of);
    fs_free(a->rows);
    fs_free(a->price);
    fs_free(a->by_price);
    fs_free(a->fresh);
    fs_free(a->chosen);
    fs_free(a->pend);
    fs_free(a->claims);
    fs_free(a->inflight);
    fs_free(a->nominated);
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
 * of a node or more takes whole empty nodes.  *add: the new nodes asked
 * for; g's option (opt_*): the first `room` of them, the jobs they complete
 * and the GPUs they fill. */
static int estimate(const autoscale_t *a, const fs_cluster_t *c, group_t *g, uint32_t room,
                    uint32_t *add)
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
    uint32_t pods = 0;
    qsort(g->need, g->n_need, sizeof *g->need, cmp_desc);
    for (size_t j = 0; j < g->n_need; j++) {
        uint32_t need = g->need[j];
        size_t last = 0;                /* the last bin the job took */
        if (need >= g->gpn) {           /* whole nodes: empty bins first, then new ones */
            uint32_t k = (need + g->gpn - 1) / g->gpn;
            for (size_t b = 0; b < nb && k > 0; b++)
                if (g->bins[b] == g->gpn) {
                    g->bins[b] = 0;
                    last = b;
                    k--;
                }
            while (k-- > 0) {
                if (fs_grow((void **)&g->bins, &g->cap_bins, nb + 1, sizeof *g->bins))
                    return FS_ENOMEM;
                last = nb;
                g->bins[nb++] = 0;
            }
        } else {
            size_t b = 0;
            while (b < nb && g->bins[b] < need)
                b++;
            if (b == nb) {
                if (fs_grow((void **)&g->bins, &g->cap_bins, nb + 1, sizeof *g->bins))
                    return FS_ENOMEM;
                g->bins[nb++] = g->gpn;
            }
            g->bins[b] -= need;
            last = b;
        }
        pods += last >= first_new && last < first_new + room;
    }
    *add = (uint32_t)(nb - first_new);
    uint32_t cap = *add < room ? *add : room;
    uint64_t free_new = 0;
    for (size_t b = first_new; b < first_new + cap; b++)
        free_new += g->bins[b];
    g->opt_nodes = cap;
    g->opt_pods = pods;
    g->opt_used = (uint64_t)cap * g->gpn - free_new;
    return 0;
}

/* Grows g by add nodes (lowest ids first).  A failed scale-up (drawn with
 * the group's provision_failure, or a provision longer than
 * max_node_provision_time): its nodes count as provisioning (CA waits for
 * them) but are not owned and never come up; they are abandoned
 * max_node_provision_time after the decision. */
static uint32_t job_need(const fs_jobrt_t *j);

static int provision(autoscale_t *a, fs_model_t *m, group_t *g, uint32_t add)
{
    fs_time_t now = fs_model_now(m);
    advance(a, now);
    int failed = add > 0 && (g->fails_long || (g->pfail > 0 && fs_rng_uniform(&g->rng) < g->pfail));
    for (uint32_t node = g->first; node < g->first + g->n && add > 0; node++) {
        if (a->state[node] != ABSENT)
            continue;
        a->state[node] = PROVISIONING;
        a->failing[node] = (uint8_t)failed;
        g->provisioning++;
        g->added++;
        add--;
        int rc = failed ? 0 : fs_usage_set_owned(a->usage, g->pool, (int64_t)g->gpn);
        if (!rc)
            rc = fs_model_module_event(m, a->id, now + (failed ? a->max_prov : g->delay),
                                       FS_PRIO_REPAIR,
                                       (uint64_t)node << EV_SHIFT | (failed ? EV_GIVEUP : EV_READY),
                                       NULL);
        if (rc)
            return rc;
    }
    a->last_add = now;
    return 0;
}

/* A node of a failed scale-up reached max_node_provision_time: abandoned
 * (removed from the group's target size), the group backed off. */
static int give_up(autoscale_t *a, fs_model_t *m, uint32_t node)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    if (node >= c->n_nodes || a->state[node] != PROVISIONING || !a->failing[node])
        return FS_EINTERNAL;
    group_t *g = &a->g[a->group_of[c->node_pool[node]] - 1];
    fs_time_t now = fs_model_now(m);
    advance(a, now);
    a->state[node] = ABSENT;
    a->failing[node] = 0;
    g->provisioning--;
    g->removed++;
    if (g->last_fail != now) {      /* one failure per scale-up (its nodes end together) */
        if (g->last_fail >= 0 && now - g->last_fail >= CA_BACKOFF_RESET_US)
            g->fails = 0;
        fs_time_t d = CA_BACKOFF_US;
        for (uint32_t k = 0; k < g->fails && d < CA_BACKOFF_MAX_US; k++)
            d *= 2;
        g->backoff_until = now + (d < CA_BACKOFF_MAX_US ? d : CA_BACKOFF_MAX_US);
        g->fails++;
        g->last_fail = now;
    }
    return 0;
}

/* Job slot s is an unschedulable pod: queued, with pods (pods: the marks
 * of fs_model_pods, NULL when every queued job has them), and it cannot
 * start now. */
static int unschedulable(fs_model_t *m, const uint8_t *pods, size_t s)
{
    const fs_jobrt_t *j = fs_model_job(m, (uint32_t)s);
    return j->state == FS_JOBRT_QUEUED && (!pods || pods[s]) && !fs_model_fits(m, (uint32_t)s);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* With several groups: each pending job (GPUs descending) that fits on the
 * in-flight nodes of a group it may use (first fit, its pools in order) is
 * held by them (pj_cover = group + 1): no other group's option counts it,
 * as CA simulates upcoming nodes in its snapshot.  With one group its own
 * estimate does this. */
static int cover(autoscale_t *a, fs_model_t *m)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    if (fs_grow((void **)&a->pj_order, &a->cap_pj3, a->n_pj + 1, sizeof *a->pj_order) ||
        (!a->nfree && !(a->nfree = fs_calloc(c->n_nodes, sizeof *a->nfree))))
        return FS_ENOMEM;
    for (size_t i = 0; i < a->n_g; i++)
        for (uint32_t node = a->g[i].first; node < a->g[i].first + a->g[i].n; node++)
            a->nfree[node] = a->state[node] == PROVISIONING ? a->g[i].gpn : 0;
    for (size_t j = 0; j < a->n_pj; j++)   /* GPUs descending, then queue slot */
        a->pj_order[j] = (uint64_t)(UINT32_MAX - a->pj_need[j]) << 32 | j;
    qsort(a->pj_order, a->n_pj, sizeof *a->pj_order, cmp_u64);
    for (size_t o = 0; o < a->n_pj; o++) {
        uint32_t j = (uint32_t)a->pj_order[o], need = a->pj_need[j];
        const uint32_t *pools;
        size_t np = fs_model_job_pools(m, a->pj_slot[j], &pools);
        if (!pools)
            np = a->n_pools;
        for (size_t k = 0; k < np && !a->pj_cover[j]; k++) {
            uint32_t p = pools ? pools[k] : (uint32_t)k;
            if (p >= a->n_pools || !a->group_of[p])
                continue;
            const group_t *g = &a->g[a->group_of[p] - 1];
            uint32_t whole = need >= g->gpn ? (need + g->gpn - 1) / g->gpn : 0, empty = 0;
            for (uint32_t node = g->first; whole && node < g->first + g->n; node++)
                empty += a->state[node] == PROVISIONING && a->nfree[node] == g->gpn;
            if (whole && empty < whole)
                continue;
            int held = 0;
            for (uint32_t node = g->first; node < g->first + g->n && !held; node++) {
                if (a->state[node] != PROVISIONING)
                    continue;
                if (whole && a->nfree[node] == g->gpn) {
                    a->nfree[node] = 0;
                    held = --whole == 0;
                } else if (!whole && a->nfree[node] >= need) {
                    a->nfree[node] -= need;
                    held = 1;
                }
            }
            if (held)
                a->pj_cover[j] = a->group_of[p];
        }
    }
    return 0;
}

/* The expander: the index of the group to grow among the n options (group
 * indices), or SIZE_MAX for none.  least-waste: fewest idle GPUs on the new
 * nodes as a share of their GPUs; most-pods: most pending jobs completed;
 * priority: the highest of cluster.autoscale.priorities (unlisted groups
 * only when no option is listed); random.  The options left tie: a uniform
 * draw among them (upstream's final random choice). */
static size_t expand(autoscale_t *a, uint32_t *opts, size_t n)
{
    if (n == 0)
        return SIZE_MAX;
    size_t keep = 0;
    int prio_any = 0;
    for (size_t k = 0; k < n; k++)
        prio_any |= a->g[opts[k]].has_prio;
    double best = 0;
    long best_prio = LONG_MIN;
    for (size_t k = 0; k < n; k++) {
        const group_t *g = &a->g[opts[k]];
        double v;
        switch (a->cfg->expander) {
        case FS_EXPANDER_LEAST_WASTE:
            v = -(double)((uint64_t)g->opt_nodes * g->gpn - g->opt_used) /
                (double)((uint64_t)g->opt_nodes * g->gpn);
            break;
        case FS_EXPANDER_MOST_PODS: v = g->opt_pods; break;
        case FS_EXPANDER_PRIORITY:
            if (prio_any && !g->has_prio)
                continue;
            v = 0;
            if (prio_any && (keep == 0 || g->prio > best_prio)) {
                best_prio = g->prio;
                keep = 0;
            } else if (prio_any && g->prio < best_prio) {
                continue;
            }
            opts[keep++] = opts[k];
            continue;
        default: v = 0; break;
        }
        if (keep == 0 || v > best + 1e-12) {
            best = v;
            keep = 0;
        } else if (v < best - 1e-12) {
            continue;
        }
        opts[keep++] = opts[k];
    }
    if (keep == 1)
        return opts[0];
    return opts[gsl_rng_uniform_int(fs_rng_gsl(&a->rng), keep)];
}

static int scan(autoscale_t *a, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    const fs_cluster_t *c = fs_model_cluster(m);
    /* pending pods that cannot start now (no walk over the job slots while
     * nothing waits) */
    const uint8_t *pods = NULL;
    if (fs_model_jobs_queued(m) && fs_model_pods(m, &pods))
        return FS_ENOMEM;
    a->n_pj = 0;
    for (size_t s = 0, n = fs_model_jobs_queued(m) ? fs_model_slots(m) : 0; s < n; s++) {
        if (!unschedulable(m, pods, s))
            continue;
        if (fs_grow((void **)&a->pj_slot, &a->cap_pj, a->n_pj + 1, sizeof *a->pj_slot) ||
            fs_grow((void **)&a->pj_need, &a->cap_pj2, a->n_pj + 1, sizeof *a->pj_need) ||
            fs_grow((void **)&a->pj_cover, &a->cap_pj4, a->n_pj + 1, sizeof *a->pj_cover))
            return FS_ENOMEM;
        a->pj_slot[a->n_pj] = (uint32_t)s;
        a->pj_need[a->n_pj] = job_need(fs_model_job(m, (uint32_t)s));
        a->pj_cover[a->n_pj++] = 0;
    }
    if (a->n_pj && a->n_g > 1 && cover(a, m))
        return FS_ENOMEM;
    /* each group's option: the jobs that may use it and no other group's
     * in-flight nodes hold */
    for (size_t i = 0; i < a->n_g; i++)
        a->g[i].n_need = 0;
    for (size_t j = 0; j < a->n_pj; j++) {
        const uint32_t *pools;
        size_t np = fs_model_job_pools(m, a->pj_slot[j], &pools);
        if (!pools)
            np = a->n_pools;    /* any pool */
        for (size_t k = 0; k < np; k++) {
            uint32_t p = pools ? pools[k] : (uint32_t)k;
            if (p >= a->n_pools || !a->group_of[p] ||
                (a->pj_cover[j] && a->pj_cover[j] != a->group_of[p]))
                continue;
            group_t *g = &a->g[a->group_of[p] - 1];
            if (fs_grow((void **)&g->need, &g->cap_need, g->n_need + 1, sizeof *g->need))
                return FS_ENOMEM;
            g->need[g->n_need++] = a->pj_need[j];
        }
    }
    if (!a->opts && !(a->opts = fs_calloc(a->n_g, sizeof *a->opts)))
        return FS_ENOMEM;
    size_t n_opts = 0;
    for (size_t i = 0; i < a->n_g; i++) {
        group_t *g = &a->g[i];
        uint32_t add = 0, room = g->max - g->provisioning - g->ready;
        if (!g->n_need || g->backoff_until > now)
            continue;
        int rc = estimate(a, c, g, room, &add);
        if (rc)
            return rc;
        if (g->opt_nodes)
            a->opts[n_opts++] = (uint32_t)i;
    }
    size_t pick = expand(a, a->opts, n_opts);
    if (pick != SIZE_MAX) {
        int rc = provision(a, m, &a->g[pick], a->g[pick].opt_nodes);
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

static int kp_event(autoscale_t *a, fs_model_t *m, uint64_t data);
static int kp_ready(autoscale_t *a, fs_model_t *m);

static int as_event(void *ud, fs_model_t *m, uint64_t data)
{
    autoscale_t *a = ud;
    unsigned kind = (unsigned)(data & ((1u << EV_SHIFT) - 1));
    if (kind == EV_SCAN)
        return scan(a, m);
    if (kind == EV_GIVEUP)
        return give_up(a, m, (uint32_t)(data >> EV_SHIFT));
    if (kind != EV_READY)
        return kp_event(a, m, data);
    uint32_t node = (uint32_t)(data >> EV_SHIFT);
    const fs_cluster_t *c = fs_model_cluster(m);
    if (node >= c->n_nodes || a->state[node] != PROVISIONING)
        return FS_EINTERNAL;
    group_t *g = &a->g[a->group_of[c->node_pool[node]] - 1];
    advance(a, fs_model_now(m));
    a->state[node] = READY;
    a->empty_since[node] = -1;
    g->provisioning--;
    g->ready++;
    if (a->karp)    /* Karpenter counts from the node's initialization until a pod event */
        a->empty_since[node] = fs_model_now(m);
    int rc = fs_model_node_up(m, node);
    return rc || !a->karp ? rc : kp_ready(a, m);
}

/* ---- Karpenter (cluster.autoscale.provisioner: karpenter) ---------------------
 * Pods: a queued job is a pending pod; it is provisionable (it triggers the
 * batcher) when it cannot start now after the scheduling pass of the instant
 * it entered the queue (kube-scheduler marked it Unschedulable), and it may
 * use a group.  The batch: a window opens at the first such pod, closes
 * batch_idle after the last one and at most batch_max after the first
 * (provisioning/batcher.go).  At its close every provisionable job is packed
 * (scheduling/scheduler.go): GPUs descending then queue order (queue.go
 * sorts by requests, then creation); each goes onto a node still
 * provisioning, else onto a NodeClaim of this batch (fewest pods first)
 * whose instance types still hold its pods, else onto a new NodeClaim; a
 * NodeClaim launches as the cheapest group that holds its pods (the
 * cloud provider's lowest price, kwok/cloudprovider.go).  Limits: a group
 * never has more than max nodes, counting this batch's NodeClaims. */

/* The groups job slot may use (bits); 0: none (not Karpenter's). */
static uint64_t kp_groups(const autoscale_t *a, fs_model_t *m, uint32_t slot)
{
    const uint32_t *pools;
    size_t np = fs_model_job_pools(m, slot, &pools);
    if (!pools)
        np = a->n_pools;
    uint64_t bits = 0;
    for (size_t k = 0; k < np; k++) {
        uint32_t p = pools ? pools[k] : (uint32_t)k;
        if (p < a->n_pools && a->group_of[p])
            bits |= 1ull << (a->group_of[p] - 1);
    }
    return bits;
}

/* GPUs a job asks for on one node, fractions rounded up (as CA's estimator). */
static uint32_t job_need(const fs_jobrt_t *j)
{
    uint64_t milli = (uint64_t)j->job.gpus * j->job.gpu_milli;
    uint32_t need = (uint32_t)((milli + 999) / 1000);
    return need ? need : 1;
}

/* A pod event at `at`: opens the batch window or extends it. */
static int kp_trigger(autoscale_t *a, fs_model_t *m, fs_time_t at)
{
    if (a->win_start < 0)
        a->win_start = at;
    fs_time_t end = at + a->cfg->batch_idle, cap = a->win_start + a->cfg->batch_max;
    if (cap < end)
        end = cap;
    if (end < fs_model_now(m))
        end = fs_model_now(m);
    a->win_gen++;
    return fs_model_module_event(m, a->id, end, FS_PRIO_TIMER, a->win_gen << EV_SHIFT | EV_BATCH,
                                 NULL);
}

/* A job entered the queue: looked at 1 us later, after this instant's pass
 * (before anything else of that instant: a priority below completions). */
static int kp_pending(void *ud, fs_model_t *m, uint32_t slot)
{
    autoscale_t *a = ud;
    if (fs_grow((void **)&a->fresh, &a->cap_fresh, a->n_fresh + 1, sizeof *a->fresh))
        return FS_ENOMEM;
    a->fresh[a->n_fresh++] = (fresh_t){slot, fs_model_job(m, slot)->seq, fs_model_now(m)};
    if (a->seen_pending)
        return 0;
    a->seen_pending = 1;
    return fs_model_module_event(m, a->id, fs_model_now(m) + 1, FS_PRIO_COMPLETION - 1, EV_SEEN,
                                 NULL);
}

static int kp_seen(autoscale_t *a, fs_model_t *m)
{
    a->seen_pending = 0;
    int trig = 0, asked = 0;
    fs_time_t at = 0;
    const uint8_t *pods = NULL;
    for (size_t i = 0; i < a->n_fresh && !trig; i++) {
        const fresh_t *f = &a->fresh[i];
        const fs_jobrt_t *j = fs_model_job(m, f->slot);
        if (j->state != FS_JOBRT_QUEUED || j->seq != f->seq || fs_model_fits(m, f->slot) ||
            !kp_groups(a, m, f->slot))
            continue;
        if (!asked++ && fs_model_pods(m, &pods))
            return FS_ENOMEM;
        if (!pods || pods[f->slot]) {
            trig = 1;
            at = f->at;     /* every entry is of the same instant */
        }
    }
    a->n_fresh = 0;
    return trig ? kp_trigger(a, m, at) : 0;
}

/* The cheapest group of opts with room (committed < room, not counting the
 * claim's own current group cur); KP_MAX_GROUPS if none. */
static uint32_t kp_cheapest(const autoscale_t *a, uint64_t opts, const uint32_t *room,
                            const uint32_t *committed, uint32_t cur)
{
    for (size_t k = 0; k < a->n_g; k++) {
        uint32_t g = a->by_price[k];
        if ((opts >> g & 1) && committed[g] - (g == cur) < room[g])
            return g;
    }
    return KP_MAX_GROUPS;
}

static int cmp_pend(const void *x, const void *y)
{
    const pend_t *p = x, *q = y;
    if (p->need != q->need)
        return p->need < q->need ? 1 : -1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* Packs one job of need GPUs (a single pod: single = the groups whose nodes
 * hold it) onto in-flight nodes or NodeClaims; 1 placed, 0 not, or FS_E*. */
static int kp_place_pod(autoscale_t *a, const pend_t *p, uint64_t single, size_t *nc,
                        uint32_t *room, uint32_t *committed)
{
    for (size_t i = 0; i < a->n_g; i++) {          /* a node being provisioned */
        const group_t *g = &a->g[i];
        if (!(single >> i & 1))
            continue;
        for (uint32_t node = g->first; node < g->first + g->n; node++)
            if (a->state[node] == PROVISIONING && a->inflight[node] >= p->need) {
                a->inflight[node] -= p->need;
                return 1;
            }
    }
    size_t best = SIZE_MAX;                         /* a NodeClaim, fewest pods first */
    uint64_t best_opts = 0;
    uint32_t best_tent = 0;
    for (size_t ci = 0; ci < *nc; ci++) {
        const claim_t *cl = &a->claims[ci];
        if (best != SIZE_MAX && cl->pods >= a->claims[best].pods)
            continue;
        uint64_t opts = 0;
        for (size_t i = 0; i < a->n_g; i++)
            if ((cl->options & single) >> i & 1 && cl->used + p->need <= a->g[i].gpn)
                opts |= 1ull << i;
        uint32_t tent = opts ? kp_cheapest(a, opts, room, committed, cl->tent) : KP_MAX_GROUPS;
        if (tent < KP_MAX_GROUPS) {
            best = ci;
            best_opts = opts;
            best_tent = tent;
        }
    }
    if (best != SIZE_MAX) {
        claim_t *cl = &a->claims[best];
        committed[cl->tent]--;
        committed[best_tent]++;
        *cl = (claim_t){best_opts, cl->used + p->need, cl->pods + 1, best_tent};
        return 1;
    }
    uint32_t tent = kp_cheapest(a, single, room, committed, KP_MAX_GROUPS);   /* a new one */
    if (tent == KP_MAX_GROUPS)
        return 0;
    if (fs_grow((void **)&a->claims, &a->cap_claims, *nc + 1, sizeof *a->claims))
        return FS_ENOMEM;
    a->claims[(*nc)++] = (claim_t){single, p->need, 1, tent};
    committed[tent]++;
    return 1;
}

/* A job larger than every node it may use: whole nodes of one group, the
 * group whose new nodes cost least (its empty nodes, in service or in
 * flight, first: the job may wait for more than one). */
static int kp_place_gang(autoscale_t *a, fs_model_t *m, const pend_t *p, size_t *nc,
                         uint32_t *room, uint32_t *committed)
{
    uint32_t best = KP_MAX_GROUPS, best_new = 0, best_k = 0;
    double best_cost = 0;
    for (size_t k = 0; k < a->n_g; k++) {
        uint32_t gi = a->by_price[k];
        const group_t *g = &a->g[gi];
        if (!(p->groups >> gi & 1))
            continue;
        uint32_t need_k = (p->need + g->gpn - 1) / g->gpn, empty = 0;
        for (uint32_t node = g->first; node < g->first + g->n; node++)
            empty += a->state[node] != ABSENT && a->inflight[node] == g->gpn;
        uint32_t fresh = need_k > empty ? need_k - empty : 0;
        if (fresh > room[gi] - committed[gi])
            continue;
        double cost = fresh * a->price[gi];
        if (best == KP_MAX_GROUPS || cost < best_cost) {
            best = gi;
            best_cost = cost;
            best_new = fresh;
            best_k = need_k;
        }
    }
    if (best == KP_MAX_GROUPS)
        return 0;
    const group_t *g = &a->g[best];
    for (uint32_t node = g->first, k = best_k - best_new; node < g->first + g->n && k > 0; node++)
        if (a->state[node] != ABSENT && a->inflight[node] == g->gpn) {
            a->inflight[node] = 0;
            k--;
            /* nominated: not disrupted for 2 x batch_max (at least 10 s;
             * state.Cluster.NominateNodeForPod), renewed by every batch */
            fs_time_t w = 2 * a->cfg->batch_max;
            a->nominated[node] = fs_model_now(m) + (w < KP_POLL_US ? KP_POLL_US : w);
        }
    if (fs_grow((void **)&a->claims, &a->cap_claims, *nc + best_new, sizeof *a->claims))
        return FS_ENOMEM;
    for (uint32_t k = 0; k < best_new; k++)
        a->claims[(*nc)++] = (claim_t){1ull << best, g->gpn, 1, best};
    committed[best] += best_new;
    return 1;
}

/* The batch closed: pack every provisionable job, launch the NodeClaims. */
static int kp_solve(autoscale_t *a, fs_model_t *m)
{
    size_t np = 0, nc = 0;
    const uint8_t *pods = NULL;
    if (fs_model_jobs_queued(m) && fs_model_pods(m, &pods))
        return FS_ENOMEM;
    for (size_t s = 0, n = fs_model_jobs_queued(m) ? fs_model_slots(m) : 0; s < n; s++) {
        if (!unschedulable(m, pods, s))
            continue;
        const fs_jobrt_t *j = fs_model_job(m, (uint32_t)s);
        uint64_t bits = kp_groups(a, m, (uint32_t)s);
        if (!bits)
            continue;
        if (fs_grow((void **)&a->pend, &a->cap_pend, np + 1, sizeof *a->pend))
            return FS_ENOMEM;
        a->pend[np++] = (pend_t){(uint32_t)s, job_need(j), j->seq, bits};
    }
    if (np == 0)
        return 0;
    qsort(a->pend, np, sizeof *a->pend, cmp_pend);
    const fs_cluster_t *c = fs_model_cluster(m);
    uint32_t room[KP_MAX_GROUPS], committed[KP_MAX_GROUPS];
    for (size_t i = 0; i < a->n_g; i++) {
        const group_t *g = &a->g[i];
        room[i] = g->max - g->provisioning - g->ready;
        committed[i] = 0;
        /* free GPUs: whole nodes in flight; nodes in service only whole and
         * empty (a pod that cannot start now does not fit the others) */
        for (uint32_t node = g->first; node < g->first + g->n; node++)
            a->inflight[node] = a->state[node] == PROVISIONING ? g->gpn
                                : a->state[node] == READY && c->node_up[node] &&
                                          c->node_free[node] == g->gpn
                                    ? g->gpn
                                    : 0;
    }
    uint32_t placed = 0;
    for (size_t k = 0; k < np; k++) {
        const pend_t *p = &a->pend[k];
        uint64_t single = 0;
        for (size_t i = 0; i < a->n_g; i++)
            if ((p->groups >> i & 1) && p->need <= a->g[i].gpn)
                single |= 1ull << i;
        int rc = single ? kp_place_pod(a, p, single, &nc, room, committed)
                        : kp_place_gang(a, m, p, &nc, room, committed);
        if (rc < 0)
            return rc;
        placed += (uint32_t)rc;
    }
    for (size_t i = 0; i < a->n_g; i++)
        if (committed[i]) {
            int rc = provision(a, m, &a->g[i], committed[i]);
            if (rc)
                return rc;
        }
    /* they stay pending until they start: their pods requeue every 10 s (a
     * job whose node another one took gets a new one).  When no job found
     * room, only capacity leaving can change that, which the requeue
     * cannot bring: then it does not keep a stuck drain alive. */
    if (a->recheck_pending)
        return 0;
    a->recheck_pending = 1;
    return fs_model_module_event(m, a->id, fs_model_now(m) + KP_REQUEUE_US,
                                 placed ? FS_PRIO_TIMER : FS_PRIO_FAILURE, EV_RECHECK, NULL);
}

/* Pending pods requeued: a trigger if some queued job is still provisionable. */
static int kp_recheck(autoscale_t *a, fs_model_t *m)
{
    a->recheck_pending = 0;
    const uint8_t *pods = NULL;
    if (fs_model_jobs_queued(m) && fs_model_pods(m, &pods))
        return FS_ENOMEM;
    for (size_t s = 0, n = fs_model_jobs_queued(m) ? fs_model_slots(m) : 0; s < n; s++) {
        if (unschedulable(m, pods, s) && kp_groups(a, m, (uint32_t)s))
            return kp_trigger(a, m, fs_model_now(m));
    }
    return 0;
}

/* ---- Karpenter's disruption: empty nodes ----------------------------------------
 * The disruption controller polls every 10 s; a node launched by Karpenter
 * (above its group's min) is a candidate once Consolidatable: empty for
 * consolidate_after since its last pod left or since it was initialized
 * (nodeclaim/disruption/consolidation.go).  Up to the budget (10% of those
 * nodes, rounded up) are chosen, re-checked 15 s later and removed if still
 * empty; the controller then polls again at once. */
static int kp_poll_at(autoscale_t *a, fs_model_t *m, fs_time_t at)
{
    return fs_model_module_event(m, a->id, at, FS_PRIO_FAILURE, EV_POLL, NULL);
}

static int kp_ready(autoscale_t *a, fs_model_t *m)
{
    if (a->polling)
        return 0;
    a->polling = 1;
    fs_time_t now = fs_model_now(m), at = a->poll_anchor;
    if (at < now)
        at += (now - at + KP_POLL_US - 1) / KP_POLL_US * KP_POLL_US;
    return kp_poll_at(a, m, at);
}

static int kp_poll(autoscale_t *a, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    const fs_cluster_t *c = fs_model_cluster(m);
    a->poll_anchor = now;
    uint64_t launched = 0, ready_above = 0;
    for (size_t i = 0; i < a->n_g; i++) {
        const group_t *g = &a->g[i];
        uint32_t have = g->provisioning + g->ready;
        launched += have > g->min ? have - g->min : 0;
        ready_above += g->ready > g->min;
    }
    if (!ready_above) {     /* no candidate until a node comes up */
        a->polling = 0;
        return 0;
    }
    uint64_t budget = (launched * KP_BUDGET_PERCENT + 99) / 100;
    a->n_chosen = 0;
    for (size_t i = 0; i < a->n_g; i++) {
        const group_t *g = &a->g[i];
        uint32_t have = g->provisioning + g->ready;
        uint32_t removable = have > g->min ? have - g->min : 0;
        for (uint32_t node = g->first + g->n; node-- > g->first;) {
            if (a->state[node] != READY)
                continue;
            if (!(c->node_up[node] && c->node_free[node] == g->gpn)) {
                a->empty_since[node] = -1;
                continue;
            }
            if (a->empty_since[node] < 0)
                a->empty_since[node] = now;
            if (removable == 0 || a->n_chosen >= budget || a->nominated[node] > now ||
                now - a->empty_since[node] < a->cfg->consolidate_after)
                continue;
            if (fs_grow((void **)&a->chosen, &a->cap_chosen, a->n_chosen + 1, sizeof *a->chosen))
                return FS_ENOMEM;
            a->chosen[a->n_chosen++] = node;
            removable--;
        }
    }
    if (a->n_chosen)
        return fs_model_module_event(m, a->id, now + KP_VALIDATE_US, FS_PRIO_FAILURE, EV_VALIDATE,
                                     NULL);
    return kp_poll_at(a, m, now + KP_POLL_US);
}

static int kp_validate(autoscale_t *a, fs_model_t *m)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    uint32_t removed = 0;
    for (size_t k = 0; k < a->n_chosen; k++) {
        uint32_t node = a->chosen[k];
        group_t *g = &a->g[a->group_of[c->node_pool[node]] - 1];
        if (a->state[node] != READY || !c->node_up[node] || c->node_free[node] != g->gpn ||
            a->nominated[node] > fs_model_now(m) || g->ready + g->provisioning <= g->min)
            continue;       /* a pod came: the command no longer holds for it */
        advance(a, fs_model_now(m));
        int rc = fs_model_node_down(m, node, FS_DOWN_DRAIN, NULL);
        if (!rc)
            rc = fs_usage_set_owned(a->usage, g->pool, -(int64_t)g->gpn);
        if (rc)
            return rc;
        a->state[node] = ABSENT;
        a->empty_since[node] = -1;
        g->ready--;
        g->removed++;
        removed++;
    }
    a->n_chosen = 0;
    return removed ? kp_poll(a, m) : kp_poll_at(a, m, fs_model_now(m) + KP_POLL_US);
}

static int kp_event(autoscale_t *a, fs_model_t *m, uint64_t data)
{
    switch (data & ((1u << EV_SHIFT) - 1)) {
    case EV_SEEN: return kp_seen(a, m);
    case EV_BATCH:
        if (data >> EV_SHIFT != a->win_gen)
            return 0;       /* the window was extended since */
        a->win_start = -1;
        return kp_solve(a, m);
    case EV_RECHECK: return kp_recheck(a, m);
    case EV_POLL: return kp_poll(a, m);
    case EV_VALIDATE: return kp_validate(a, m);
    default: return FS_EINTERNAL;
    }
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
/* Karpenter's events change nothing a policy sees but a node coming up
 * (fs_model_node_up asks for the pass itself): quiet. */
static const fs_module_ops_t kp_ops = {.name = "karpenter", .on_event = as_event,
                                       .finish = as_finish, .destroy = as_destroy,
                                       .sample = as_sample, .quiet = 1,
                                       .pending = kp_pending};

/* Karpenter's price of a group's node, $ per hour: its GPUs x the pool's
 * rate per GPU-hour in the cost model (docs/cost.md) -- cloud: the price
 * billed per GPU-hour (on-demand, spot or reserved); owned: depreciation,
 * operations and colocation per GPU-hour plus a busy GPU's energy.  A run
 * without prices (no cost block, a GPU type without a default): every
 * GPU-hour costs 1, so the fewest GPUs that hold the pods win.  Ties: the
 * group listed first. */
static int prices(autoscale_t *a, const fs_config_t *cfg, const fs_cluster_t *c, fs_error_t *err)
{
    fs_cost_rate_t *r = fs_calloc(c->n_pools, sizeof *r);
    if (!r || !(a->price = fs_calloc(a->n_g, sizeof *a->price)) ||
        !(a->by_price = fs_calloc(a->n_g, sizeof *a->by_price)) ||
        !(a->inflight = fs_calloc(c->n_nodes, sizeof *a->inflight)) ||
        !(a->nominated = fs_calloc(c->n_nodes, sizeof *a->nominated))) {
        fs_free(r);
        return fs_error_set(err, FS_ENOMEM, "karpenter: out of memory");
    }
    int rc = cfg->cluster.n_pools == c->n_pools ? fs_cost_rates(cfg, r, err) : 1;
    for (size_t i = 0; i < a->n_g && rc >= 0; i++) {
        const fs_cost_rate_t *pr = &r[a->g[i].pool];
        double per_gpu_h = rc == 1 ? 1.0
                           : pr->billing != FS_BILL_OWNED
                               ? pr->cloud_per_s * 3600.0
                               : (pr->dep_per_s + pr->ops_per_s + pr->colo_per_s) * 3600.0 +
                                     pr->busy_kw * pr->pue * pr->kwh_price;
        a->price[i] = per_gpu_h * a->g[i].gpn;
    }
    fs_free(r);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < a->n_g; i++) {      /* insertion sort: stable, few groups */
        size_t k = i;
        while (k > 0 && a->price[a->by_price[k - 1]] > a->price[i]) {
            a->by_price[k] = a->by_price[k - 1];
            k--;
        }
        a->by_price[k] = (uint32_t)i;
    }
    return 0;
}

/* The index of the pool named name in cfg, or -1. */
static int cfg_pool(const fs_config_t *cfg, const char *name)
{
    for (size_t p = 0; name && p < cfg->cluster.n_pools; p++)
        if (cfg->cluster.pools[p].name && strcmp(cfg->cluster.pools[p].name, name) == 0)
            return (int)p;
    return -1;
}

/* Whether pool `name` has a purchase batch or online / retire dates (the
 * purchase timeline's, which would fight the autoscaler over its nodes):
 * the message's tail, or NULL. */
static const char *dated(const fs_cost_cfg_t *cc, const char *name)
{
    for (size_t k = 0; k < cc->n_purchases; k++)
        if (cc->purchases[k].pool && strcmp(cc->purchases[k].pool, name) == 0)
            return "also has cost.purchases (a node group's nodes come and go with the autoscaler)";
    for (size_t k = 0; k < cc->n_pools; k++)
        if (cc->pools[k].pool && strcmp(cc->pools[k].pool, name) == 0 &&
            (cc->pools[k].online || cc->pools[k].retire))
            return "also has cost.pools online/retire dates";
    return NULL;
}

/* Sets *key to cluster.autoscale.node_groups.I.LEAF; returns rc. */
static int blame(char *key, size_t keylen, int rc, size_t i, const char *leaf)
{
    snprintf(key, keylen, "cluster.autoscale.node_groups.%zu.%s", i, leaf);
    return rc;
}

int fs_autoscale_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    const fs_autoscale_cfg_t *ac = &cfg->cluster.autoscale;
    if (keylen)
        key[0] = '\0';
    if (ac->provisioner == FS_PROV_KARPENTER && ac->n_groups > KP_MAX_GROUPS) {
        snprintf(key, keylen, "cluster.autoscale.node_groups");
        return fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups: %zu groups; "
                            "provisioner karpenter takes at most %d", ac->n_groups, KP_MAX_GROUPS);
    }
    for (size_t i = 0; i < ac->n_groups; i++) {
        const fs_nodegroup_cfg_t *gc = &ac->groups[i];
        int p = cfg_pool(cfg, gc->pool);
        if (p < 0)
            return blame(key, keylen, fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups."
                         "%zu.pool: no pool named '%s'", i, gc->pool ? gc->pool : ""), i, "pool");
        for (size_t j = 0; j < i; j++)
            if (ac->groups[j].pool && strcmp(ac->groups[j].pool, gc->pool) == 0)
                return blame(key, keylen, fs_error_set(err, FS_EINVAL, "cluster.autoscale."
                             "node_groups.%zu.pool: pool '%s' is already a node group (item %zu)",
                             i, gc->pool, j), i, "pool");
        const fs_pool_cfg_t *pc = &cfg->cluster.pools[p];
        uint32_t max = gc->max ? gc->max : pc->nodes;
        if (max > pc->nodes)
            return blame(key, keylen, fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups."
                         "%zu.max: %u nodes, more than pool '%s' has (%u; its nodes is the most it "
                         "can have)", i, max, pc->name, pc->nodes), i, "max");
        if (gc->min > max)
            return blame(key, keylen, fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups."
                         "%zu.min: %u is above max (%u)", i, gc->min, max), i, "min");
        const char *why = dated(&cfg->cost, pc->name);
        if (why)
            return blame(key, keylen, fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups."
                         "%zu.pool: pool '%s' %s", i, pc->name, why), i, "pool");
        if (ac->provisioner == FS_PROV_KARPENTER && gc->provision_failure > 0)
            return blame(key, keylen, fs_error_set(err, FS_EINVAL, "cluster.autoscale.node_groups."
                         "%zu.provision_failure: failed scale-ups are modelled for provisioner "
                         "cluster-autoscaler only", i), i, "provision_failure");
    }
    /* the priority expander's map: each name a node group's pool, each value an integer */
    for (size_t k = 0; k < ac->n_priorities; k++) {
        const char *name = ac->priority_pools[k], *v = ac->priority_values[k];
        size_t i = 0;
        while (i < ac->n_groups && !(ac->groups[i].pool && strcmp(ac->groups[i].pool, name) == 0))
            i++;
        snprintf(key, keylen, "cluster.autoscale.priorities.%s", name);
        if (i == ac->n_groups)
            return fs_error_set(err, FS_EINVAL, "cluster.autoscale.priorities: '%s' is not a node "
                                "group (the pools of cluster.autoscale.node_groups)", name);
        char *end;
        errno = 0;
        long pr = strtol(v, &end, 10);
        if (errno || end == v || *end || pr < INT_MIN || pr > INT_MAX)
            return fs_error_set(err, FS_EINVAL, "cluster.autoscale.priorities.%s: expected an "
                                "integer priority, found '%s'", name, v);
    }
    if (keylen)
        key[0] = '\0';
    return 0;
}

/* The groups of cfg (checked by fs_autoscale_cfg_check). */
static int build(autoscale_t *a, const fs_config_t *cfg, const fs_cluster_t *c, fs_error_t *err)
{
    const fs_autoscale_cfg_t *ac = &cfg->cluster.autoscale;
    a->n_pools = c->n_pools;
    if (!(a->g = fs_calloc(ac->n_groups, sizeof *a->g)) ||
        !(a->group_of = fs_calloc(c->n_pools, sizeof *a->group_of)) ||
        !(a->state = fs_calloc(c->n_nodes, sizeof *a->state)) ||
        !(a->failing = fs_calloc(c->n_nodes, sizeof *a->failing)) ||
        !(a->empty_since = fs_malloc(c->n_nodes * sizeof *a->empty_since)) ||
        fs_rng_init(&a->rng, cfg->seed, cfg->replication, RNG_AUTOSCALE, 0))
        return fs_error_set(err, FS_ENOMEM, "cluster autoscaler: out of memory");
    for (uint32_t n = 0; n < c->n_nodes; n++)
        a->empty_since[n] = -1;
    for (size_t i = 0; i < ac->n_groups; i++) {
        const fs_nodegroup_cfg_t *gc = &ac->groups[i];
        int p = fs_cluster_find_pool(c, gc->pool);
        if (p < 0 || a->group_of[p])    /* the cluster is not the config's */
            return fs_error_set(err, FS_EINTERNAL, "cluster autoscaler: node group %zu: pool '%s' "
                                "is not a pool of the cluster", i, gc->pool);
        const fs_pool_t *pl = &c->pools[p];
        a->group_of[p] = (uint32_t)i + 1;
        a->g[i] = (group_t){.pool = (uint32_t)p, .first = pl->first_node, .n = pl->n_nodes,
                            .gpn = pl->gpn, .min = gc->min, .max = gc->max ? gc->max : pl->n_nodes,
                            .delay = gc->provision + gc->gpu_ready,
                            .pfail = gc->provision_failure,
                            .fails_long = !a->karp && gc->provision > a->max_prov,
                            .backoff_until = -1, .last_fail = -1};
        a->n_g = i + 1;     /* released by as_destroy from here on */
        if (fs_rng_init(&a->g[i].rng, cfg->seed, cfg->replication, RNG_AUTOSCALE, 1 + i))
            return fs_error_set(err, FS_ENOMEM, "cluster autoscaler: out of memory");
        for (size_t k = 0; k < ac->n_priorities; k++)
            if (strcmp(ac->priority_pools[k], gc->pool) == 0) {
                a->g[i].has_prio = 1;
                a->g[i].prio = strtol(ac->priority_values[k], NULL, 10);
            }
    }
    a->n_g = ac->n_groups;
    return a->karp ? prices(a, cfg, c, err) : 0;
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
    if (a->karp)    /* no scans: pods trigger batches, nodes coming up start the polls */
        return 0;
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
    a->karp = a->cfg->provisioner == FS_PROV_KARPENTER;
    a->max_prov = a->cfg->max_provision > 0 ? a->cfg->max_provision : CA_MAX_PROVISION_US;
    a->win_start = -1;
    a->poll_anchor = fs_model_now(m);
    char key[96];
    int rc = fs_autoscale_cfg_check(cfg, key, sizeof key, err);
    if (!rc)
        rc = build(a, cfg, fs_model_cluster(m), err);
    if (rc) {
        as_destroy(a);
        return rc;
    }
    rc = fs_model_add_module(m, a->karp ? &kp_ops : &as_ops, a, &a->id);
    if (rc) {
        as_destroy(a);
        return fs_error_set(err, rc, "cluster autoscaler: %s", rc == FS_EINVAL
                            ? "another module already watches the queue" : "out of memory");
    }
    rc = start(a, m);
    if (rc)
        return fs_error_set(err, rc, "cluster autoscaler: %s", fs_error_describe(rc));
    return 0;
}
