#include "fs_migrecut.h"
#include "fs_jobrt.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <string.h>

enum { EV_BACK = 0, EV_WAKE = 1, EV_EVICT = 2 };  /* data: node << 2 | kind */
enum { NP = FS_MIG_MAX_PROFILES, GMAX = FS_CLUSTER_MIG_MAX_GPN };
#define PX(node, pr) ((size_t)(node) * NP + (pr))   /* per node and profile */

/* ---- the mixed plan (fs_migrecut_plan) ---- */

static int same_layout(const fs_mig_layout_t *x, const fs_mig_layout_t *y)
{
    if (x->mem != y->mem || x->ninst != y->ninst)
        return 0;
    for (unsigned i = 0; i < x->ninst; i++)
        if (x->inst[i].profile != y->inst[i].profile || x->inst[i].start != y->inst[i].start)
            return 0;
    return 1;
}

typedef struct plan {
    fs_mig_layout_t out[GMAX];
    int fut[NP];            /* instances per profile on the node after the plan */
    uint8_t order[GMAX];    /* the re-cut GPUs, in the order they were chosen */
    uint32_t nre;
} plan_t;

/* One more instance of q on the re-cut GPUs (the first in order with room,
 * at fs_mig_find's lowest free start).  1 placed, 0 no room. */
static int place_one(const fs_mig_model_t *m, plan_t *pl, unsigned q)
{
    for (uint32_t i = 0; i < pl->nre; i++) {
        fs_mig_layout_t *l = &pl->out[pl->order[i]];
        if (fs_mig_find(m, l, q) >= 0 && fs_mig_place(m, l, q, -1) >= 0) {
            pl->fut[q]++;
            return 1;
        }
    }
    return 0;
}

int fs_migrecut_plan(const fs_mig_model_t *m, uint32_t gpn, const fs_mig_layout_t *cur,
                     const fs_migrecut_demand_t *dem, size_t n, fs_mig_layout_t *out, uint8_t *take)
{
    if (gpn == 0 || gpn > GMAX || n == 0 || dem[0].profile >= m->nprofiles)
        return FS_EINVAL;
    unsigned p = dem[0].profile;
    fs_mig_layout_t empty;
    fs_mig_layout_clear(&empty);
    unsigned cap = fs_mig_fits(m, &empty, p);
    plan_t pl, save;
    memset(&pl, 0, sizeof pl);
    for (uint32_t g = 0; g < gpn; g++) {
        pl.out[g] = cur[g];
        for (unsigned q = 0; q < NP; q++)
            pl.fut[q] += cur[g].count[q];
    }
    int prom[NP] = {0};
    uint8_t recut[GMAX] = {0};
    memset(take, 0, n);
    /* 1. the pods of p */
    for (size_t j = 0; j < n; j++) {
        if (dem[j].profile != p)
            continue;
        save = pl;
        uint8_t rsave[GMAX];
        memcpy(rsave, recut, sizeof rsave);
        int ok = 1;
        while (ok && pl.fut[p] - prom[p] < (int64_t)dem[j].k) {
            if (place_one(m, &pl, p))
                continue;
            uint32_t best = GMAX;       /* one more GPU: the fewest of p, then the lowest */
            for (uint32_t g = 0; g < gpn; g++)
                if (!recut[g] && cur[g].count[p] < cap &&
                    (best == GMAX || cur[g].count[p] < cur[best].count[p]))
                    best = g;
            if (best == GMAX) {
                ok = 0;
                break;
            }
            for (unsigned q = 0; q < NP; q++)
                pl.fut[q] -= pl.out[best].count[q];
            fs_mig_layout_clear(&pl.out[best]);
            recut[best] = 1;
            pl.order[pl.nre++] = (uint8_t)best;
        }
        if (!ok) {
            pl = save;
            memcpy(recut, rsave, sizeof rsave);
            continue;
        }
        take[j] = 1;
        prom[p] += (int)dem[j].k;
    }
    if (!take[0]) {
        memcpy(out, pl.out, gpn * sizeof *out);
        return FS_EINVAL;
    }
    /* 2. the pods of other profiles, in the slots the re-cut GPUs have left */
    for (size_t j = 1; j < n; j++) {
        unsigned q = dem[j].profile;
        if (q == p || q >= m->nprofiles)
            continue;
        save = pl;
        int ok = 1;
        while (ok && pl.fut[q] - prom[q] < (int64_t)dem[j].k)
            ok = place_one(m, &pl, q);
        if (!ok) {
            pl = save;
            continue;
        }
        take[j] = 1;
        prom[q] += (int)dem[j].k;
    }
    /* 3. what is still free on the re-cut GPUs takes p */
    while (place_one(m, &pl, p))
        ;
    /* a re-cut GPU is applied as its spec (instances per profile, what a
     * mig-parted config names) built by fs_mig_layout_build, as the scenario
     * loader and the exporter build a layout from its text: the same counts,
     * and the instance indexes /gpu_intervals writes match the rebuilt
     * layout */
    int changed = 0;
    for (uint32_t g = 0; g < gpn; g++) {
        out[g] = pl.out[g];
        if (recut[g]) {
            fs_mig_spec_t spec;
            fs_mig_spec_of(&pl.out[g], &spec);
            if (fs_mig_layout_build(m, &spec, &out[g], NULL))
                return FS_EINTERNAL;    /* cannot be: pl.out[g] is a placement of it */
        }
        changed += !same_layout(&cur[g], &out[g]);
    }
    return changed;
}

/* ---- the module ---- */

typedef struct rpool {
    uint32_t pool, first, n, gpn;
    fs_time_t phase;                    /* reconfigure + gpu_ready */
    fs_time_t min_interval;
    int drain;                          /* enum fs_mig_drain */
    fs_time_t timeout;                  /* evict: after the cordon */
    int mixed;                          /* layout: mixed (fs_migrecut_plan) */
} rpool_t;

typedef struct migrecut {
    uint32_t id;
    rpool_t *rp;
    size_t n_rp;
    int32_t *rp_of;                     /* per cluster pool: index in rp, -1 none */
    uint32_t n_pools;
    fs_time_t *last_cut;                /* per node: last re-cut decision, -1 none */
    fs_time_t *back_at;                 /* per node: end of its phase while out, -1 */
    uint8_t *target;                    /* per node: the profile it is being cut for */
    uint32_t *inst;                     /* per node and profile (PX): its instances after the cut */
    uint32_t *credit;                   /* scratch, PX: of inst, not yet promised in this walk */
    /* layout: mixed only (NULL otherwise) */
    fs_mig_layout_t *plan;              /* per node, GMAX: the planned layouts of a draining node */
    uint32_t *scr;                      /* scratch, PX: credits while a plan looks ahead */
    uint8_t *taken;                     /* per slot: promised by a plan of this walk */
    size_t cap_taken;
    fs_migrecut_demand_t *dem;          /* scratch: the plan's pods, and their slots */
    uint32_t *dem_slot;
    uint8_t *dem_take;
    size_t cap_dem, cap_dem_slot, cap_dem_take;
    fs_time_t *drain_at;                /* per node: its cordon while draining, -1 */
    double *cost;                       /* scratch per node: what draining it costs */
    int costs_now;                      /* cost is valid for this pass */
    int any_drain;                      /* some pool drains */
    size_t n_draining;
    fs_time_t wake;                     /* pending wake-up event, -1 none */
    uint64_t recuts, drains;
    double gpu_s;                       /* GPU-s of the phases that ended */
    fs_mig_layout_row_t *rows;          /* /mig_layouts, until the end */
    size_t n_rows, cap_rows;
} migrecut_t;

static void mr_destroy(void *ud)
{
    migrecut_t *a = ud;
    if (!a)
        return;
    fs_free(a->rp);
    fs_free(a->rp_of);
    fs_free(a->last_cut);
    fs_free(a->back_at);
    fs_free(a->target);
    fs_free(a->inst);
    fs_free(a->credit);
    fs_free(a->drain_at);
    fs_free(a->cost);
    fs_free(a->plan);
    fs_free(a->scr);
    fs_free(a->taken);
    fs_free(a->dem);
    fs_free(a->dem_slot);
    fs_free(a->dem_take);
    fs_free(a->rows);
    fs_free(a);
}

/* Instances of profile pr the node's GPUs have now. */
static uint32_t node_count(const fs_cluster_t *c, uint32_t node, uint32_t gpn, unsigned pr)
{
    uint32_t k = 0;
    for (uint32_t g = 0; g < gpn; g++)
        k += fs_cluster_mig_layout(c, node, g)->count[pr];
    return k;
}

/* Job slot s as a MIG pod waiting for a re-cut (queued, asking an
 * instance, not promised by a mixed plan of this walk, unable to start
 * now), else NULL. */
static const fs_jobrt_t *waiting(const migrecut_t *a, fs_model_t *m, size_t s)
{
    const fs_jobrt_t *j = fs_model_job(m, (uint32_t)s);
    if (j->state != FS_JOBRT_QUEUED || !j->job.mig || (s < a->cap_taken && a->taken[s]) ||
        fs_model_fits(m, (uint32_t)s))
        return NULL;
    return j;
}

/* layout: all: node's instances after its cut are n of pr and nothing
 * else, none promised yet. */
static void all_of(migrecut_t *a, uint32_t node, unsigned pr, uint32_t n)
{
    memset(&a->inst[PX(node, 0)], 0, NP * sizeof *a->inst);
    a->inst[PX(node, pr)] = n;
    memcpy(&a->credit[PX(node, 0)], &a->inst[PX(node, 0)], NP * sizeof *a->inst);
}

/* Mixed: plans node's new layouts (a->plan) for the pod at slot (k of pr)
 * and the queued pods after it in the walk that no other node of the pool
 * being re-cut or drained covers (each counted against those nodes'
 * unpromised instances, in queue order); the node's credits become the
 * plan's instances less those of the pods it serves, which are marked
 * taken (the walk skips them).  The node is already out of service, so
 * fs_model_fits no longer counts it. */
static int plan_mixed(migrecut_t *a, fs_model_t *m, const rpool_t *r, uint32_t node, unsigned pr,
                      uint32_t k, uint32_t slot)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    const fs_pool_t *pool = &c->pools[r->pool];
    for (uint32_t nd = r->first; nd < r->first + r->n; nd++)
        for (unsigned q = 0; q < NP; q++)
            a->scr[PX(nd, q)] = nd != node && (a->back_at[nd] >= 0 || a->drain_at[nd] >= 0)
                                    ? a->credit[PX(nd, q)] : 0;
    size_t n = 0;
    if (fs_grow((void **)&a->dem, &a->cap_dem, 1, sizeof *a->dem) ||
        fs_grow((void **)&a->dem_slot, &a->cap_dem_slot, 1, sizeof *a->dem_slot))
        return FS_ENOMEM;
    a->dem[0] = (fs_migrecut_demand_t){.profile = (uint8_t)pr, .k = k};
    a->dem_slot[n++] = slot;
    for (size_t s = (size_t)slot + 1, ns = fs_model_slots(m); s < ns; s++) {
        const fs_jobrt_t *j = waiting(a, m, s);
        if (!j)
            continue;
        const uint32_t *pools;
        size_t np = fs_model_job_pools(m, (uint32_t)s, &pools), i = 0;
        while (pools && i < np && pools[i] != r->pool)
            i++;
        if (pools && i == np)
            continue;
        int q = fs_mig_profile_of_code(pool->mig, j->job.mig);
        uint32_t kj = j->job.gpus;
        if (q < 0 || kj == 0 || kj > (uint64_t)r->gpn * pool->mig_cap[q])
            continue;
        int covered = 0;
        for (uint32_t nd = r->first; nd < r->first + r->n && !covered; nd++)
            if (a->scr[PX(nd, q)] >= kj) {
                a->scr[PX(nd, q)] -= kj;
                covered = 1;
            }
        if (covered)
            continue;
        if (fs_grow((void **)&a->dem, &a->cap_dem, n + 1, sizeof *a->dem) ||
            fs_grow((void **)&a->dem_slot, &a->cap_dem_slot, n + 1, sizeof *a->dem_slot))
            return FS_ENOMEM;
        a->dem[n] = (fs_migrecut_demand_t){.profile = (uint8_t)q, .k = kj};
        a->dem_slot[n++] = (uint32_t)s;
    }
    if (fs_grow((void **)&a->dem_take, &a->cap_dem_take, n, 1))
        return FS_ENOMEM;
    fs_mig_layout_t cur[GMAX];
    for (uint32_t g = 0; g < r->gpn; g++)
        cur[g] = *fs_cluster_mig_layout(c, node, g);
    fs_mig_layout_t *out = &a->plan[(size_t)node * GMAX];
    if (fs_migrecut_plan(pool->mig, r->gpn, cur, a->dem, n, out, a->dem_take) < 0)
        return FS_EINTERNAL;    /* the node was chosen because a re-cut serves dem[0] */
    for (unsigned q = 0; q < NP; q++) {
        uint32_t f = 0;
        for (uint32_t g = 0; g < r->gpn; g++)
            f += out[g].count[q];
        a->inst[PX(node, q)] = a->credit[PX(node, q)] = f;
    }
    for (size_t j = 0; j < n; j++) {
        if (!a->dem_take[j])
            continue;
        a->credit[PX(node, a->dem[j].profile)] -= a->dem[j].k;
        if (j > 0)
            a->taken[a->dem_slot[j]] = 1;
    }
    return 0;
}

/* The decision: node out of service, re-cut for pr (all: every GPU
 * all-<pr>; mixed: the plan, made now for the pod at slot asking k unless
 * `planned` at the drain's cordon), back after the phase; its new layouts
 * are kept for /mig_layouts (mixed: the GPUs that change). */
static int recut(migrecut_t *a, fs_model_t *m, const rpool_t *r, uint32_t node, unsigned pr,
                 uint32_t k, uint32_t slot, int planned)
{
    fs_time_t now = fs_model_now(m);
    int rc = fs_model_node_down(m, node, FS_DOWN_DRAIN, NULL);
    if (rc)
        return rc;
    const fs_cluster_t *c = fs_model_cluster(m);
    fs_mig_layout_t old[GMAX];
    if (r->mixed) {
        if (!planned && (rc = plan_mixed(a, m, r, node, pr, k, slot)) != 0)
            return rc;
        for (uint32_t g = 0; g < r->gpn; g++)
            old[g] = *fs_cluster_mig_layout(c, node, g);
        if (fs_model_mig_set(m, node, &a->plan[(size_t)node * GMAX]))
            return FS_EINTERNAL;
    } else {
        int n = fs_model_mig_recut(m, node, pr);
        if (n < 0)
            return FS_EINTERNAL;
        all_of(a, node, pr, (uint32_t)n);
    }
    a->last_cut[node] = now;
    a->back_at[node] = now + r->phase;
    a->target[node] = (uint8_t)pr;
    a->recuts++;
    const fs_pool_t *pl = &c->pools[r->pool];
    if (fs_grow((void **)&a->rows, &a->cap_rows, a->n_rows + r->gpn, sizeof *a->rows))
        return FS_ENOMEM;
    for (uint32_t g = 0; g < r->gpn; g++) {
        if (r->mixed && same_layout(&old[g], fs_cluster_mig_layout(c, node, g)))
            continue;   /* mig-parted leaves a GPU whose layout does not change alone */
        fs_mig_layout_row_t *row = &a->rows[a->n_rows++];
        memset(row, 0, sizeof *row);
        row->time = fs_time_to_s(now);
        row->ready = fs_time_to_s(now + r->phase);
        row->pool = r->pool;
        row->node = node;
        row->gpu = g;
        row->cordoned = a->drain_at[node] >= 0 ? fs_time_to_s(a->drain_at[node]) : NAN;
        fs_mig_spec_t spec;
        fs_mig_spec_of(fs_cluster_mig_layout(c, node, g), &spec);
        fs_mig_spec_format(pl->mig, &spec, row->layout, sizeof row->layout);
    }
    return fs_model_module_event(m, a->id, now + r->phase, FS_PRIO_REPAIR,
                                 (uint64_t)node << 2 | EV_BACK, NULL);
}

/* A draining node's pods are gone: its re-cut phase starts (the cut's hold
 * first, then the cordon is lifted: the node is never in service between). */
static int drained(migrecut_t *a, fs_model_t *m, uint32_t node)
{
    const rpool_t *r = &a->rp[a->rp_of[fs_model_cluster(m)->node_pool[node]]];
    int rc = recut(a, m, r, node, a->target[node], 0, 0, 1);
    if (!rc)
        rc = fs_model_node_cordon(m, node, 0);
    a->drain_at[node] = -1;
    a->n_draining--;
    return rc;
}

/* What draining each busy node of a draining pool costs now (once per
 * pass, O(slots)): wait, the planned end of its last running pod (us);
 * evict, the GPU-s of work its pods would lose at the timeout, taken now
 * (an estimate: they compute on until then and may checkpoint). */
static void drain_costs(migrecut_t *a, fs_model_t *m)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    for (uint32_t node = 0; node < c->n_nodes; node++)
        a->cost[node] = 0;
    for (size_t s = 0, n = fs_model_slots(m); s < n; s++) {
        const fs_jobrt_t *j = fs_model_job(m, (uint32_t)s);
        if (j->state != FS_JOBRT_RUNNING)
            continue;
        const fs_slice_t *sl = fs_placement_slices(&j->r->place);
        fs_time_t end = 0;
        double lost = 0;
        int known = 0;      /* the outlook, taken once per job */
        for (uint32_t i = 0; i < j->r->place.n; i++) {
            uint32_t node = sl[i].node, p = c->node_pool[node];
            if (a->rp_of[p] < 0 || a->rp[a->rp_of[p]].drain == FS_MIG_DRAIN_NONE)
                continue;
            if (!known && fs_model_job_outlook(m, (uint32_t)s, &end, &lost))
                break;
            known = 1;
            if (a->rp[a->rp_of[p]].drain == FS_MIG_DRAIN_WAIT) {
                if ((double)end > a->cost[node])
                    a->cost[node] = (double)end;
            } else {
                a->cost[node] += lost;
            }
        }
    }
    a->costs_now = 1;
}

/* The busy node of pool r whose drain costs least (ties: the lowest), not
 * in its anti-thrashing interval (*wake: the earliest end of one), that
 * would offer k of pr only after a re-cut; its cordon.  1 started, 0 none. */
static int drain(migrecut_t *a, fs_model_t *m, const rpool_t *r, unsigned pr, uint32_t k,
                 uint32_t slot, fs_time_t *wake)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    fs_time_t now = fs_model_now(m);
    uint32_t best = UINT32_MAX;
    /* a node in service whose layout offers k of pr serves the pod once its
     * pods end: no drain for a profile the layout has */
    for (uint32_t node = r->first; node < r->first + r->n; node++)
        if (a->drain_at[node] < 0 && fs_model_node_in_service(m, node) &&
            node_count(c, node, r->gpn, pr) >= k)
            return 0;
    for (uint32_t node = r->first; node < r->first + r->n; node++) {
        if (a->back_at[node] >= 0 || a->drain_at[node] >= 0 || !fs_model_node_in_service(m, node) ||
            !fs_cluster_mig_node_held(c, node) || node_count(c, node, r->gpn, pr) >= k)
            continue;
        if (a->last_cut[node] >= 0 && now - a->last_cut[node] < r->min_interval) {
            fs_time_t t = a->last_cut[node] + r->min_interval;
            if (*wake < 0 || t < *wake)
                *wake = t;
            continue;
        }
        if (!a->costs_now)
            drain_costs(a, m);
        if (r->drain == FS_MIG_DRAIN_WAIT && a->cost[node] >= (double)INT64_MAX)
            continue;   /* a service replica: it never ends */
        if (best == UINT32_MAX || a->cost[node] < a->cost[best])
            best = node;
    }
    if (best == UINT32_MAX)
        return 0;
    int rc = fs_model_node_cordon(m, best, 1);
    if (rc)
        return rc;
    a->drain_at[best] = now;
    a->target[best] = (uint8_t)pr;
    if (r->mixed) {     /* planned now: its layouts cannot change while it drains */
        if ((rc = plan_mixed(a, m, r, best, pr, k, slot)) != 0)
            return rc;
    } else {
        all_of(a, best, pr, r->gpn * c->pools[r->pool].mig_cap[pr]);
        a->credit[PX(best, pr)] -= k;
    }
    a->drains++;
    a->n_draining++;
    if (r->drain == FS_MIG_DRAIN_EVICT &&
        (rc = fs_model_module_event(m, a->id, now + r->timeout, FS_PRIO_TIMER,
                                    (uint64_t)best << 2 | EV_EVICT, NULL)) != 0)
        return rc;
    return 1;
}

/* One queued pod (k instances of code) that cannot start now: covered by a
 * node being cut for it, or the cut of an idle node, or (drain: wait or
 * evict) covered by a draining node, or the drain of a busy one, in the
 * first of its pools that can.  *wake: the earliest end of an
 * anti-thrashing interval that kept a node from it. */
static int serve(migrecut_t *a, fs_model_t *m, const uint32_t *pools, size_t np, int32_t code,
                 uint32_t k, uint32_t slot, fs_time_t *wake)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    fs_time_t now = fs_model_now(m);
    for (size_t i = 0; i < np; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        if (p >= a->n_pools || a->rp_of[p] < 0)
            continue;
        const rpool_t *r = &a->rp[a->rp_of[p]];
        const fs_pool_t *pl = &c->pools[p];
        int pr = fs_mig_profile_of_code(pl->mig, code);
        if (pr < 0 || k > (uint64_t)r->gpn * pl->mig_cap[pr])
            continue;
        for (uint32_t node = r->first; node < r->first + r->n; node++)
            if (a->back_at[node] >= 0 && a->credit[PX(node, pr)] >= k) {
                a->credit[PX(node, pr)] -= k;
                return 0;
            }
        for (uint32_t node = r->first; node < r->first + r->n; node++) {
            if (a->back_at[node] >= 0 || !fs_model_node_in_service(m, node) ||
                fs_cluster_mig_node_held(c, node) || node_count(c, node, r->gpn, (unsigned)pr) >= k)
                continue;
            if (a->last_cut[node] >= 0 && now - a->last_cut[node] < r->min_interval) {
                fs_time_t t = a->last_cut[node] + r->min_interval;
                if (*wake < 0 || t < *wake)
                    *wake = t;
                continue;
            }
            int rc = recut(a, m, r, node, (unsigned)pr, k, slot, 0);
            if (rc)
                return rc;
            if (!r->mixed)      /* mixed: the plan promised them */
                a->credit[PX(node, pr)] -= k;
            return 0;
        }
        if (r->drain == FS_MIG_DRAIN_NONE)
            continue;
        for (uint32_t node = r->first; node < r->first + r->n; node++)
            if (a->drain_at[node] >= 0 && a->credit[PX(node, pr)] >= k) {
                a->credit[PX(node, pr)] -= k;
                return 0;
            }
        int rc = drain(a, m, r, (unsigned)pr, k, slot, wake);
        if (rc)
            return rc < 0 ? rc : 0;
    }
    return 0;
}

static int mr_after_pass(void *ud, fs_model_t *m)
{
    migrecut_t *a = ud;
    const fs_cluster_t *c = fs_model_cluster(m);
    /* nothing to do without a node to cut: no walk over the queue */
    int any = 0;
    for (size_t i = 0; i < a->n_rp && !any; i++)
        for (uint32_t node = a->rp[i].first; node < a->rp[i].first + a->rp[i].n && !any; node++)
            any = a->back_at[node] < 0 && fs_model_node_in_service(m, node) &&
                  !fs_cluster_mig_node_held(c, node);
    if (!any && !a->any_drain)
        return 0;
    for (size_t i = 0; i < a->n_rp; i++)
        for (uint32_t node = a->rp[i].first; node < a->rp[i].first + a->rp[i].n; node++) {
            if (a->back_at[node] >= 0 || a->drain_at[node] >= 0)
                memcpy(&a->credit[PX(node, 0)], &a->inst[PX(node, 0)], NP * sizeof *a->credit);
            else
                memset(&a->credit[PX(node, 0)], 0, NP * sizeof *a->credit);
        }
    if (a->plan) {      /* mixed: no pod promised yet in this walk */
        size_t ns = fs_model_slots(m);
        if (fs_grow((void **)&a->taken, &a->cap_taken, ns, 1))
            return FS_ENOMEM;
        memset(a->taken, 0, a->cap_taken);
    }
    a->costs_now = 0;
    fs_time_t wake = -1;
    for (size_t s = 0, n = fs_model_slots(m); s < n; s++) {
        const fs_jobrt_t *j = waiting(a, m, s);
        if (!j)
            continue;
        const uint32_t *pools;
        size_t np = fs_model_job_pools(m, (uint32_t)s, &pools);
        if (!pools)
            np = a->n_pools;
        int rc = serve(a, m, pools, np, j->job.mig, j->job.gpus, (uint32_t)s, &wake);
        if (rc)
            return rc;
    }
    /* the draining nodes: no pod of this walk wants one any more (they
     * started elsewhere or left): the cordon is lifted; one whose pods are
     * gone starts its re-cut */
    for (size_t i = 0; i < a->n_rp && a->n_draining; i++)
        for (uint32_t node = a->rp[i].first; node < a->rp[i].first + a->rp[i].n; node++) {
            if (a->drain_at[node] < 0)
                continue;
            int rc = 0;
            if (!memcmp(&a->credit[PX(node, 0)], &a->inst[PX(node, 0)], NP * sizeof *a->inst)) {
                a->drain_at[node] = -1;
                a->n_draining--;
                rc = fs_model_node_cordon(m, node, 0);
            } else if (!fs_cluster_mig_node_held(c, node)) {
                rc = drained(a, m, node);
            }
            if (rc)
                return rc;
        }
    if (a->any_drain)
        fs_model_after_pass_idle(m, a->n_draining > 0);
    if (wake >= 0 && (a->wake < 0 || wake < a->wake)) {
        a->wake = wake;
        return fs_model_module_event(m, a->id, wake, FS_PRIO_TIMER, EV_WAKE, NULL);
    }
    return 0;
}

static int mr_event(void *ud, fs_model_t *m, uint64_t data)
{
    migrecut_t *a = ud;
    if ((data & 3) == EV_WAKE) {    /* an interval ended: the pass after it looks again */
        if (a->wake == fs_model_now(m))
            a->wake = -1;
        return 0;
    }
    uint32_t node = (uint32_t)(data >> 2);
    const fs_cluster_t *c = fs_model_cluster(m);
    if ((data & 3) == EV_EVICT) {   /* the timeout of a drain (a stale one: cancelled) */
        if (node >= c->n_nodes || a->drain_at[node] < 0 ||
            a->drain_at[node] + a->rp[a->rp_of[c->node_pool[node]]].timeout != fs_model_now(m))
            return 0;
        uint32_t n;
        /* a pod preempted before is not evicted again (the drain waits for
         * it): with evictions that lose work, evicting the pods that
         * restarted last could otherwise go on for ever */
        int rc = fs_model_evict_node(m, node, 1, &n);
        if (!rc && !fs_cluster_mig_node_held(c, node))
            rc = drained(a, m, node);
        return rc;
    }
    if (node >= c->n_nodes || a->back_at[node] != fs_model_now(m))
        return FS_EINTERNAL;
    const rpool_t *r = &a->rp[a->rp_of[c->node_pool[node]]];
    a->gpu_s += (double)r->gpn * fs_time_to_s(r->phase);
    a->back_at[node] = -1;
    return fs_model_node_up(m, node);
}

/* The end: the phases still running count up to now; the kept rows. */
static int mr_finish(void *ud, fs_model_t *m, fs_run_totals_t *totals)
{
    migrecut_t *a = ud;
    fs_time_t now = fs_model_now(m);
    double gs = a->gpu_s;
    for (size_t i = 0; i < a->n_rp; i++)
        for (uint32_t node = a->rp[i].first; node < a->rp[i].first + a->rp[i].n; node++)
            if (a->back_at[node] >= 0)
                gs += (double)a->rp[i].gpn * fs_time_to_s(now - a->last_cut[node]);
    totals->mig_recuts += a->recuts;
    totals->gpu_s_mig_reconfig += gs;
    totals->mig_drains += a->drains;
    if (a->drains)
        totals->gpu_s_mig_drain += fs_model_cordon_idle_gpu_s(m);
    const fs_sink_t *sk = fs_model_sink(m);
    if (!sk->mig_layout)
        return 0;
    for (size_t i = 0; i < a->n_rows; i++) {
        int rc = sk->mig_layout(sk->ud, &a->rows[i]);
        if (rc)
            return rc;
    }
    a->n_rows = 0;
    return 0;
}

static const fs_module_ops_t mr_ops = {.name = "MIG re-partitioning", .on_event = mr_event,
                                       .finish = mr_finish, .destroy = mr_destroy,
                                       .after_pass = mr_after_pass};

int fs_migrecut_attach(fs_model_t *m, fs_error_t *err)
{
    const fs_config_t *cfg = fs_model_config(m);
    const fs_cluster_t *c = fs_model_cluster(m);
    size_t n = 0;
    for (uint32_t p = 0; p < c->n_pools; p++)
        n += c->pools[p].mig_glay != NULL;
    if (n == 0)
        return 0;
    migrecut_t *a = fs_calloc(1, sizeof *a);
    if (!a || !(a->rp = fs_calloc(n, sizeof *a->rp)) ||
        !(a->rp_of = fs_malloc(c->n_pools * sizeof *a->rp_of)) ||
        !(a->last_cut = fs_malloc(c->n_nodes * sizeof *a->last_cut)) ||
        !(a->back_at = fs_malloc(c->n_nodes * sizeof *a->back_at)) ||
        !(a->target = fs_calloc(c->n_nodes, 1)) ||
        !(a->inst = fs_calloc((size_t)c->n_nodes * NP, sizeof *a->inst)) ||
        !(a->credit = fs_calloc((size_t)c->n_nodes * NP, sizeof *a->credit)) ||
        !(a->drain_at = fs_malloc(c->n_nodes * sizeof *a->drain_at)) ||
        !(a->cost = fs_calloc(c->n_nodes, sizeof *a->cost))) {
        mr_destroy(a);
        return fs_error_set(err, FS_ENOMEM, "MIG re-partitioning: out of memory");
    }
    a->n_pools = c->n_pools;
    a->wake = -1;
    for (uint32_t node = 0; node < c->n_nodes; node++)
        a->last_cut[node] = a->back_at[node] = a->drain_at[node] = -1;
    for (uint32_t p = 0; p < c->n_pools; p++) {
        a->rp_of[p] = -1;
        const fs_pool_t *pl = &c->pools[p];
        if (!pl->mig_glay)
            continue;
        const fs_pool_cfg_t *pc = &cfg->cluster.pools[p];
        a->rp_of[p] = (int32_t)a->n_rp;
        a->rp[a->n_rp++] = (rpool_t){.pool = p, .first = pl->first_node, .n = pl->n_nodes,
                                     .gpn = pl->gpn,
                                     .phase = pc->mig_reconfigure + pc->mig_gpu_ready,
                                     .min_interval = pc->mig_min_interval,
                                     .drain = pc->mig_drain, .timeout = pc->mig_drain_timeout,
                                     .mixed = pc->mig_layout == FS_MIG_LAYOUT_MIXED};
        a->any_drain |= pc->mig_drain != FS_MIG_DRAIN_NONE;
        if (pc->mig_layout == FS_MIG_LAYOUT_MIXED && !a->plan &&
            (!(a->plan = fs_calloc((size_t)c->n_nodes * GMAX, sizeof *a->plan)) ||
             !(a->scr = fs_calloc((size_t)c->n_nodes * NP, sizeof *a->scr)))) {
            mr_destroy(a);
            return fs_error_set(err, FS_ENOMEM, "MIG re-partitioning: out of memory");
        }
    }
    int rc = fs_model_add_module(m, &mr_ops, a, &a->id);
    if (rc) {
        mr_destroy(a);
        return fs_error_set(err, rc, "MIG re-partitioning: %s",
                            rc == FS_EINVAL ? "another module already acts after the pass"
                                            : "out of memory");
    }
    return 0;
}
