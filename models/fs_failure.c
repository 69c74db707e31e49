/*
 * fs_failure: component failures and repair (see fs_failure.h and
 * docs/failures.md).
 *
 * The configuration is first resolved into a spec (fs_failspec.c: presets
 * filled in, cause names gathered into one table with their repair paths,
 * the distributions copied), shared by the scenario check and by attach.
 *
 * State per unit: the count of its failures so far (the n of its keyed
 * draws) and, with infant mortality, when its hardware was new.  State per
 * node: how many failure outages hold it down (for the rack cordon rule),
 * and only when the feature is on: spare role, lemon history, slowness.
 * An outage in progress is a record (nodes held, repair path) found by the
 * repair event's data; records are recycled through a free list.
 *
 * Event data: type in the top 4 bits, a component index in the next 12,
 * an id (unit, record, planned item) in the low 48.
 */
#include "fs_failure.h"
#include "fs_failspec.h"
#include "fs_xid.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_rng.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PLANNED_COMP 0xFFEu     /* outage records of planned outages */
#define STRAGGLER_COMP 0xFFFu   /* draws and records of stragglers */

enum { EV_FAIL = 1, EV_REPAIRED = 2, EV_QSTART = 3, EV_SWAP = 4, EV_HEALTH = 5, EV_PLANNED = 6 };
#define EV_DATA(t, c, id) (((uint64_t)(t) << 60) | ((uint64_t)(c) << 48) | (uint64_t)(id))
#define EV_TYPE(d) ((unsigned)((d) >> 60))
#define EV_COMP(d) ((uint32_t)(((d) >> 48) & 0xFFFu))
#define EV_ID(d) ((d) & ((UINT64_C(1) << 48) - 1))

/* ---- the module state ------------------------------------------------------- */

typedef struct outage {
    uint32_t comp;              /* component, PLANNED_COMP or STRAGGLER_COMP */
    uint32_t unit;
    uint32_t lo, hi;            /* nodes held [lo, hi) */
    uint8_t path;               /* enum fs_repair_path */
} outage_t;

/* Spare roles of a node.  A node may have several single-node outages at
 * once (a GPU and its host): the role changes at the first that matters
 * and is settled when the last is repaired (nfail back to 0). */
enum { ROLE_NORMAL = 0,         /* serving (or out for a short repair) */
       ROLE_SPARE = 1,          /* idle hot spare, held out of service */
       ROLE_SPARE_BROKEN = 2,   /* a spare in repair */
       ROLE_SWAPPING = 3,       /* a spare on its way in (swap_time) */
       ROLE_REPLACED = 4 };     /* failed while serving; a spare took (or owes) its place */
enum { SLOW_NO = 0, SLOW_HIDDEN = 1, SLOW_DRAINING = 2, SLOW_REPAIR = 3 };

typedef struct pool_spares {
    uint32_t *stack;            /* idle spares (stale entries skipped by role) */
    size_t n, cap;
    uint32_t avail;             /* nodes with ROLE_SPARE */
    uint32_t owed;              /* failed nodes still waiting for a replacement */
} pool_spares_t;

typedef struct drain_item {
    uint32_t node;
    fs_time_t since;            /* detected */
} drain_item_t;

typedef struct fail {
    fs_model_t *m;
    const fs_config_t *cfg;
    const fs_failure_cfg_t *fc;
    const fs_cluster_t *cl;
    uint32_t id;                /* module id */
    fs_fail_spec_t sp;
    fs_rng_t rng;               /* scratch generator, reseeded per draw */
    uint64_t *gpu_base;         /* per pool: first global GPU id; [n_pools] = total */
    uint16_t *fail_holds;       /* per node: failure outages holding it */
    uint32_t *rack_failed;      /* rack cordon: failed nodes per rack */
    uint8_t *rack_cordoned;
    fs_time_t *lemon;           /* lemon_after failure times per node (ring) */
    uint8_t *lemon_pos;
    uint8_t *removed;           /* per node: removed for good (lemon) */
    uint8_t *role;              /* per node: spare role (spares only) */
    uint16_t *nfail;            /* per node: single-node outages in progress (spares only) */
    pool_spares_t *spares;      /* per pool (spares only) */
    uint8_t *slow;              /* per node: straggler state (stragglers only) */
    uint32_t *hidden;           /* slow nodes not found yet */
    size_t n_hidden, cap_hidden;
    drain_item_t *drain;        /* found, draining */
    size_t n_drain, cap_drain;
    int health_pending;
    fs_time_t *crew_free;       /* min-heap of when each crew is free */
    uint32_t n_crews;
    uint32_t qlen;              /* repairs waiting for a crew */
    outage_t *out;
    size_t n_out, cap_out;
    uint32_t *free_out;
    size_t n_free, cap_free;
    uint64_t failures, hit;
} fail_t;

/* ---- draws ------------------------------------------------------------------ */

static gsl_rng *stream(fail_t *f, uint32_t purpose, uint32_t comp, uint32_t seq, uint64_t unit)
{
    uint64_t e = ((uint64_t)comp << 52) ^ ((uint64_t)(seq & 0xFFFFFu) << 32) ^ unit;
    gsl_rng *g = fs_rng_gsl(&f->rng);
    gsl_rng_set(g, (unsigned long)fs_rng_key(f->cfg->seed, f->cfg->replication, purpose, e));
    return g;
}

/* Seconds -> a positive step of the clock, or FS_TIME_NEVER when beyond
 * any run. */
static fs_time_t step(double s)
{
    if (!(s * 1e6 < (double)FS_TIME_MAX_INPUT))
        return FS_TIME_NEVER;
    fs_time_t d = fs_time_from_s(s > 0 ? s : 0);
    return d > 0 ? d : 1;
}

/* When unit u of component ci fails next, from now (up since now).  With
 * infant mortality the unit's age runs `factor` times faster while its
 * hardware is new: the hazard is multiplied by factor (any distribution). */
static fs_time_t next_failure(fail_t *f, uint32_t ci, uint32_t u)
{
    fs_fail_comp_t *c = &f->sp.comps[ci];
    uint32_t i = u - c->lo;
    double x = fs_dist_sample(&c->tbf, stream(f, FS_RNG_FAILURE, ci, c->seq[i], u));
    if (!(x >= 0))
        x = 0;
    fs_time_t now = fs_model_now(f->m);
    if (c->born) {
        double k = f->fc->infant_factor;
        double r = fs_time_to_s(c->born[i] + f->fc->infant_period - now);
        if (r > 0)
            x = x <= k * r ? x / k : r + (x - k * r);
    }
    fs_time_t d = step(x);
    return d == FS_TIME_NEVER || d > FS_TIME_NEVER - now ? FS_TIME_NEVER : now + d;
}

static int schedule(fail_t *f, fs_time_t at, int prio, uint64_t data)
{
    if (at == FS_TIME_NEVER)
        return 0;
    if (f->cfg->until == FS_UNTIL_HORIZON && at > fs_model_horizon(f->m))
        return 0;   /* the run stops first */
    return fs_model_module_event(f->m, f->id, at, prio, data, NULL);
}

static int schedule_failure(fail_t *f, uint32_t ci, uint32_t u)
{
    return schedule(f, next_failure(f, ci, u), FS_PRIO_FAILURE, EV_DATA(EV_FAIL, ci, u));
}

/* After the horizon of a drain run, once no job is left, the module stops:
 * events change nothing and schedule nothing, so the run ends with its last
 * job (repairs still pending are not completed).  A job recovering from a
 * failure (detection, requeue delay) is not gone: it will be queued again
 * and needs the repairs. */
static int stopped(const fail_t *f)
{
    return f->cfg->until == FS_UNTIL_DRAIN && fs_model_now(f->m) >= fs_model_horizon(f->m) &&
           fs_model_jobs_queued(f->m) == 0 && fs_model_jobs_running(f->m) == 0 &&
           fs_model_jobs_recovering(f->m) == 0;
}

/* ---- units and nodes -------------------------------------------------------- */

static int topo_level(int kind)
{
    switch (kind) {
    case FS_FAIL_DOMAIN: return FS_TOPO_DOMAIN;
    case FS_FAIL_RACK:
    case FS_FAIL_POWER: return FS_TOPO_RACK;
    case FS_FAIL_LEAF: return FS_TOPO_LEAF;
    case FS_FAIL_SPINE: return FS_TOPO_SPINE;
    default: return -1;
    }
}

/* Without a configured topology a domain and a rack are one node, a leaf
 * and a spine one pool (the defaults of cluster.topology). */
static int per_pool(const fail_t *f, int kind)
{
    return !f->cl->topo && (kind == FS_FAIL_LEAF || kind == FS_FAIL_SPINE);
}

/* Units of `kind` in pool p (-1: all): [*lo, *hi). */
static void unit_range(const fail_t *f, int kind, int32_t p, uint32_t *lo, uint32_t *hi)
{
    const fs_cluster_t *cl = f->cl;
    int l = topo_level(kind);
    if (kind == FS_FAIL_GPU) {
        *lo = p < 0 ? 0 : (uint32_t)f->gpu_base[p];
        *hi = (uint32_t)(p < 0 ? f->gpu_base[cl->n_pools] : f->gpu_base[p + 1]);
    } else if (per_pool(f, kind)) {
        *lo = p < 0 ? 0 : (uint32_t)p;
        *hi = p < 0 ? cl->n_pools : (uint32_t)p + 1;
    } else if (l >= 0 && cl->topo) {
        if (p < 0) {
            *lo = 0;
            *hi = cl->topo->n_units[l];
        } else {
            const fs_pool_t *pp = &cl->pools[p];
            *lo = cl->topo->node_unit[l][pp->first_node];
            *hi = cl->topo->node_unit[l][pp->first_node + pp->n_nodes - 1] + 1;
        }
    } else {
        *lo = p < 0 ? 0 : cl->pools[p].first_node;
        *hi = p < 0 ? cl->n_nodes : cl->pools[p].first_node + cl->pools[p].n_nodes;
    }
}

/* The nodes below unit u of `kind`: [*lo, *hi). */
static void unit_nodes(const fail_t *f, int kind, uint32_t u, uint32_t *lo, uint32_t *hi)
{
    const fs_cluster_t *cl = f->cl;
    int l = topo_level(kind);
    if (kind == FS_FAIL_GPU) {
        uint32_t p = 0;
        while (p + 1 < cl->n_pools && f->gpu_base[p + 1] <= u)
            p++;
        *lo = cl->pools[p].first_node + (uint32_t)((u - f->gpu_base[p]) / cl->pools[p].gpn);
        *hi = *lo + 1;
    } else if (per_pool(f, kind)) {
        *lo = cl->pools[u].first_node;
        *hi = *lo + cl->pools[u].n_nodes;
    } else if (l >= 0 && cl->topo) {
        *lo = cl->topo->unit_first[l][u];
        *hi = cl->topo->unit_first[l][u + 1];
    } else {
        *lo = u;
        *hi = u + 1;
    }
}

/* ---- rows and the crews ------------------------------------------------------ */

static int emit(fail_t *f, fs_time_t at, int kind, uint32_t unit, uint32_t nodes, const char *cause,
                uint32_t xid, int path, double repair_s, uint32_t hit)
{
    const fs_sink_t *s = fs_model_sink(f->m);
    if (!s->failure)
        return 0;
    fs_failure_row_t r;
    memset(&r, 0, sizeof r);
    r.time = fs_time_to_s(at);
    r.component = kind;
    r.unit = unit;
    r.nodes = nodes;
    snprintf(r.cause, sizeof r.cause, "%s", cause);
    r.repair = path;
    r.repair_time = repair_s;
    r.jobs_hit = hit;
    r.xid = xid;
    return s->failure(s->ud, &r);
}

static void heap_down(fs_time_t *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < n && h[l] < h[s])
            s = l;
        if (r < n && h[r] < h[s])
            s = r;
        if (s == i)
            return;
        fs_time_t t = h[i];
        h[i] = h[s];
        h[s] = t;
        i = s;
    }
}

/* A repair of duration d asked for now: when it ends.  With crews, it
 * waits first come first served for the earliest free crew. */
static int crew_book(fail_t *f, fs_time_t d, fs_time_t *end)
{
    fs_time_t now = fs_model_now(f->m);
    if (!f->n_crews) {
        *end = now + d;
        return 0;
    }
    fs_time_t start = f->crew_free[0] > now ? f->crew_free[0] : now;
    f->crew_free[0] = start + d;
    heap_down(f->crew_free, f->n_crews, 0);
    *end = start + d;
    if (start > now) {
        f->qlen++;
        return schedule(f, start, FS_PRIO_REPAIR, EV_DATA(EV_QSTART, 0, 0));
    }
    return 0;
}

/* Repair time of a cause on its path (seconds). */
static double repair_draw(fail_t *f, const fs_fail_cause_t *c, int path, uint32_t comp, uint32_t seq,
                          uint64_t unit)
{
    if (path == FS_REPAIR_NONE || path == FS_REPAIR_REMOVED)
        return 0;
    const fs_dist_t *d = c && c->time ? c->time : path == FS_REPAIR_HARD ? &f->sp.hard : &f->sp.soft;
    double x = fs_dist_sample(d, stream(f, FS_RNG_REPAIR, comp, seq, unit));
    return x > 0 ? x : 0;
}

/* ---- outage records ----------------------------------------------------------- */

static int out_alloc(fail_t *f, uint32_t *idx)
{
    if (f->n_free) {
        *idx = f->free_out[--f->n_free];
        return 0;
    }
    if (fs_grow((void **)&f->out, &f->cap_out, f->n_out + 1, sizeof *f->out) ||
        fs_grow((void **)&f->free_out, &f->cap_free, f->n_out + 1, sizeof *f->free_out))
        return FS_ENOMEM;
    *idx = (uint32_t)f->n_out++;
    return 0;
}

static void out_free(fail_t *f, uint32_t idx)
{
    f->free_out[f->n_free++] = idx;   /* room reserved by out_alloc */
}

/* ---- holds: failure downs with the rack cordon rule ---------------------------- */

static int rack_of(const fail_t *f, uint32_t node, uint32_t *lo, uint32_t *hi)
{
    if (!f->rack_failed)
        return -1;
    uint32_t r = f->cl->topo->node_unit[FS_TOPO_RACK][node];
    *lo = f->cl->topo->unit_first[FS_TOPO_RACK][r];
    *hi = f->cl->topo->unit_first[FS_TOPO_RACK][r + 1];
    return (int)r;
}

static int cordon(fail_t *f, uint32_t node, int delta)
{
    uint32_t lo, hi;
    int r = rack_of(f, node, &lo, &hi);
    if (r < 0)
        return 0;
    f->rack_failed[r] = (uint32_t)((int64_t)f->rack_failed[r] + delta);
    int want = f->rack_failed[r] > f->fc->rack_cordon;
    if (want == f->rack_cordoned[r])
        return 0;
    f->rack_cordoned[r] = (uint8_t)want;
    for (uint32_t n = lo; n < hi; n++) {
        int rc = want ? fs_model_node_down(f->m, n, FS_DOWN_DRAIN, NULL) : fs_model_node_up(f->m, n);
        if (rc)
            return rc;
    }
    return 0;
}

static int hold(fail_t *f, uint32_t node, int how, uint32_t *hit)
{
    uint32_t h = 0;
    int rc = fs_model_node_down(f->m, node, how, &h);
    *hit += h;
    if (!rc && f->fail_holds[node]++ == 0)
        rc = cordon(f, node, +1);
    return rc;
}

/* Releases a failure hold; up = 0 keeps the node out (it becomes a spare). */
static int unhold(fail_t *f, uint32_t node, int up)
{
    int rc = up ? fs_model_node_up(f->m, node) : 0;
    if (!rc && --f->fail_holds[node] == 0)
        rc = cordon(f, node, -1);
    return rc;
}

/* ---- spares ------------------------------------------------------------------- */

static int spare_push(fail_t *f, uint32_t pool, uint32_t node)
{
    pool_spares_t *s = &f->spares[pool];
    if (fs_grow((void **)&s->stack, &s->cap, s->n + 1, sizeof *s->stack))
        return FS_ENOMEM;
    s->stack[s->n++] = node;
    f->role[node] = ROLE_SPARE;
    s->avail++;
    return 0;
}

/* A spare of pool is free again (node, held out of service): it pays a
 * replacement still owed (swapped in after swap_time), else it waits. */
static int spare_free(fail_t *f, uint32_t pool, uint32_t node)
{
    pool_spares_t *s = &f->spares[pool];
    if (!s->owed)
        return spare_push(f, pool, node);
    s->owed--;
    f->role[node] = ROLE_SWAPPING;
    return schedule(f, fs_model_now(f->m) + f->fc->spare_swap, FS_PRIO_REPAIR,
                    EV_DATA(EV_SWAP, 0, node));
}

/* A node of pool failed for longer than the swap time (or for good): a
 * spare takes its place after swap_time, or one is owed. */
static int spare_replace(fail_t *f, uint32_t pool)
{
    pool_spares_t *s = &f->spares[pool];
    if (!s->avail) {
        s->owed++;
        return 0;
    }
    uint32_t node;
    do
        node = s->stack[--s->n];
    while (f->role[node] != ROLE_SPARE);
    s->avail--;
    f->role[node] = ROLE_SWAPPING;
    return schedule(f, fs_model_now(f->m) + f->fc->spare_swap, FS_PRIO_REPAIR,
                    EV_DATA(EV_SWAP, 0, node));
}

/* ---- failure and repair ---------------------------------------------------------- */

static uint32_t draw_cause(fail_t *f, const fs_fail_comp_t *c, uint32_t ci, uint32_t seq, uint32_t u)
{
    if (c->n_causes == 1)
        return c->cause[0];
    double x = gsl_rng_uniform(stream(f, FS_RNG_CAUSE, ci, seq, u));
    size_t i = 0;
    while (i + 1 < c->n_causes && x >= c->cum[i])
        i++;
    return c->cause[i];
}

/* The lemon rule: is this failure of node the K-th within the window? */
static int lemon(fail_t *f, uint32_t node)
{
    uint32_t k = f->fc->lemon_after;
    if (!f->lemon)
        return 0;
    fs_time_t now = fs_model_now(f->m), *ring = f->lemon + (size_t)node * k;
    uint8_t *pos = &f->lemon_pos[node];
    ring[*pos] = now;
    *pos = (uint8_t)((*pos + 1) % k);
    fs_time_t oldest = ring[*pos];
    if (oldest == INT64_MIN || oldest < now - f->fc->lemon_window)
        return 0;
    for (uint32_t i = 0; i < k; i++)   /* the count restarts */
        ring[i] = INT64_MIN;
    return 1;
}

static int on_fail(fail_t *f, uint32_t ci, uint32_t u)
{
    fs_fail_comp_t *c = &f->sp.comps[ci];
    uint32_t i = u - c->lo, seq = c->seq[i]++, lo, hi, hit = 0;
    fs_time_t now = fs_model_now(f->m);
    unit_nodes(f, c->kind, u, &lo, &hi);
    int ns = fs_fail_node_scope(c->kind);
    if (ns && f->removed && f->removed[lo])
        return 0;   /* the node left the fleet: its units fail no more */
    const fs_fail_cause_t *cause = &f->sp.causes[draw_cause(f, c, ci, seq, u)];
    int path = cause->repair;
    if (ns && lemon(f, lo))
        path = f->fc->lemon_action == FS_LEMON_REMOVE ? FS_REPAIR_REMOVED : FS_REPAIR_HARD;
    double d = repair_draw(f, cause, path, ci, seq, u);
    fs_time_t end = now;
    int rc = 0;
    if (path == FS_REPAIR_SOFT || path == FS_REPAIR_HARD)
        rc = crew_book(f, step(d) == FS_TIME_NEVER ? FS_TIME_MAX_INPUT : fs_time_from_s(d), &end);
    /* a health check reads the Xid from the GPUs' fields (not an informational one) */
    const fs_xid_t *x = cause->xid ? fs_xid_find(cause->xid) : NULL;
    int how = x && x->action != FS_XID_IGNORE ? FS_DOWN_FAIL_XID : FS_DOWN_FAIL;
    for (uint32_t n = lo; n < hi && !rc; n++)
        rc = hold(f, n, how, &hit);
    f->failures++;
    f->hit += hit;
    if (!rc)
        rc = emit(f, now, c->kind, u, hi - lo, cause->name, cause->xid, path,
                  path == FS_REPAIR_REMOVED ? NAN : fs_time_to_s(end - now), hit);
    if (rc)
        return rc;
    if (path == FS_REPAIR_NONE) {   /* back at once: its jobs were hit all the same */
        for (uint32_t n = lo; n < hi && !rc; n++)
            rc = unhold(f, n, 1);
        return rc ? rc : schedule_failure(f, ci, u);
    }
    if (ns && f->spares) {
        uint8_t *role = &f->role[lo];
        f->nfail[lo]++;
        if (*role == ROLE_SPARE) {
            *role = ROLE_SPARE_BROKEN;
            f->spares[f->cl->node_pool[lo]].avail--;
        } else if (*role == ROLE_NORMAL &&
                   (path == FS_REPAIR_REMOVED || end - now > f->fc->spare_swap)) {
            *role = ROLE_REPLACED;
            rc = spare_replace(f, f->cl->node_pool[lo]);
        }
    }
    if (path == FS_REPAIR_REMOVED) {
        f->removed[lo] = 1;
        return rc;
    }
    uint32_t k;
    if (!rc)
        rc = out_alloc(f, &k);
    if (rc)
        return rc;
    f->out[k] = (outage_t){ci, u, lo, hi, (uint8_t)path};
    return schedule(f, end, FS_PRIO_REPAIR, EV_DATA(EV_REPAIRED, 0, k));
}

static int straggler_repaired(fail_t *f, uint32_t node)
{
    f->slow[node] = SLOW_NO;
    int rc = fs_model_node_speed(f->m, node, 1.0);
    return rc ? rc : fs_model_node_up(f->m, node);
}

static int on_repaired(fail_t *f, uint32_t k)
{
    outage_t o = f->out[k];
    out_free(f, k);
    int rc = 0;
    if (o.comp == PLANNED_COMP) {
        for (uint32_t n = o.lo; n < o.hi && !rc; n++)
            rc = unhold(f, n, 1);
        return rc;
    }
    if (o.comp == STRAGGLER_COMP)
        return straggler_repaired(f, o.lo);
    fs_fail_comp_t *c = &f->sp.comps[o.comp];
    if (f->spares && fs_fail_node_scope(c->kind) && --f->nfail[o.lo] == 0 &&
        f->role[o.lo] == ROLE_SPARE_BROKEN) {   /* back to the spares, still held as one */
        rc = spare_free(f, f->cl->node_pool[o.lo], o.lo);
        if (!rc)
            rc = unhold(f, o.lo, 1);
    } else if (f->spares && fs_fail_node_scope(c->kind) && f->nfail[o.lo] == 0 &&
               f->role[o.lo] == ROLE_REPLACED) {   /* it serves where a spare is owed */
        pool_spares_t *s = &f->spares[f->cl->node_pool[o.lo]];
        int up = s->owed > 0;
        if (up) {
            s->owed--;
            f->role[o.lo] = ROLE_NORMAL;
        } else {
            rc = spare_push(f, f->cl->node_pool[o.lo], o.lo);
        }
        if (!rc)
            rc = unhold(f, o.lo, up);
    } else {
        for (uint32_t n = o.lo; n < o.hi && !rc; n++)
            rc = unhold(f, n, 1);
    }
    if (rc)
        return rc;
    if (o.path == FS_REPAIR_HARD) {
        if (c->born)            /* new hardware */
            c->born[o.unit - c->lo] = fs_model_now(f->m);
        if (f->slow && fs_fail_node_scope(c->kind) && f->slow[o.lo] != SLOW_NO &&
            f->slow[o.lo] != SLOW_REPAIR) {
            int was_draining = f->slow[o.lo] == SLOW_DRAINING;
            f->slow[o.lo] = SLOW_NO;
            rc = fs_model_node_speed(f->m, o.lo, 1.0);
            if (!rc && was_draining)
                rc = fs_model_node_up(f->m, o.lo);
            if (rc)
                return rc;
        }
    }
    return schedule_failure(f, o.comp, o.unit);
}

static int on_planned(fail_t *f, uint32_t i)
{
    const fs_fail_planned_cfg_t *p = &f->fc->planned[i];
    uint32_t lo, hi, hit = 0, k;
    unit_nodes(f, p->kind, p->unit, &lo, &hi);
    int rc = 0;
    for (uint32_t n = lo; n < hi && !rc; n++)
        rc = hold(f, n, p->how == FS_PLANNED_FAIL ? FS_DOWN_FAIL : FS_DOWN_DRAIN, &hit);
    if (!rc)
        rc = emit(f, fs_model_now(f->m), p->kind, p->unit, hi - lo, p->cause ? p->cause : "planned",
                  0, FS_REPAIR_PLANNED, fs_time_to_s(p->duration), hit);
    if (!rc)
        rc = out_alloc(f, &k);
    if (rc)
        return rc;
    f->out[k] = (outage_t){PLANNED_COMP, p->unit, lo, hi, FS_REPAIR_PLANNED};
    /* not through schedule(): the outage must end even past the horizon */
    return fs_model_module_event(f->m, f->id, fs_model_now(f->m) + p->duration, FS_PRIO_REPAIR,
                                 EV_DATA(EV_REPAIRED, 0, k), NULL);
}

/* ---- health checks: stragglers ---------------------------------------------------- */

/* Finds the hidden slow nodes (drained from now on) and sends the drained
 * ones that have no job left to a soft repair. */
static int on_health(fail_t *f)
{
    fs_time_t now = fs_model_now(f->m);
    int rc = 0;
    f->health_pending = 0;
    for (size_t i = 0; i < f->n_hidden && !rc; i++) {
        uint32_t n = f->hidden[i];
        if (f->slow[n] != SLOW_HIDDEN)
            continue;
        f->slow[n] = SLOW_DRAINING;
        if (fs_grow((void **)&f->drain, &f->cap_drain, f->n_drain + 1, sizeof *f->drain))
            return FS_ENOMEM;
        f->drain[f->n_drain++] = (drain_item_t){n, now};
        rc = fs_model_node_down(f->m, n, FS_DOWN_DRAIN, NULL);
    }
    f->n_hidden = 0;
    size_t keep = 0;
    for (size_t i = 0; i < f->n_drain && !rc; i++) {
        drain_item_t it = f->drain[i];
        if (f->slow[it.node] != SLOW_DRAINING)
            continue;   /* a hard repair made it new meanwhile */
        if (fs_model_node_jobs(f->m, it.node) > 0) {
            f->drain[keep++] = it;
            continue;
        }
        double d = repair_draw(f, NULL, FS_REPAIR_SOFT, STRAGGLER_COMP, 0, it.node);
        fs_time_t end;
        uint32_t k;
        rc = crew_book(f, fs_time_from_s(d), &end);
        if (!rc)
            rc = out_alloc(f, &k);
        if (!rc)
            rc = emit(f, it.since, FS_FAIL_NODE, it.node, 1, "straggler", 0, FS_REPAIR_SOFT,
                      fs_time_to_s(end - it.since), 0);
        if (rc)
            return rc;
        f->slow[it.node] = SLOW_REPAIR;
        f->out[k] = (outage_t){STRAGGLER_COMP, it.node, it.node, it.node + 1, FS_REPAIR_SOFT};
        rc = schedule(f, end, FS_PRIO_REPAIR, EV_DATA(EV_REPAIRED, 0, k));
    }
    f->n_drain = keep;
    if (!rc && f->n_drain) {
        f->health_pending = 1;
        rc = schedule(f, now + f->fc->health_interval, FS_PRIO_TIMER, EV_DATA(EV_HEALTH, 0, 0));
    }
    return rc;
}

/* ---- module ops ------------------------------------------------------------------ */

static int on_event(void *ud, fs_model_t *m, uint64_t data)
{
    fail_t *f = ud;
    (void)m;
    if (stopped(f))
        return 0;
    switch (EV_TYPE(data)) {
    case EV_FAIL: return on_fail(f, EV_COMP(data), (uint32_t)EV_ID(data));
    case EV_REPAIRED: return on_repaired(f, (uint32_t)EV_ID(data));
    case EV_QSTART:
        f->qlen--;
        return 0;
    case EV_SWAP: {
        uint32_t node = (uint32_t)EV_ID(data);
        f->role[node] = ROLE_NORMAL;
        return fs_model_node_up(f->m, node);
    }
    case EV_HEALTH: return on_health(f);
    case EV_PLANNED: return on_planned(f, (uint32_t)EV_ID(data));
    default: return FS_EINTERNAL;
    }
}

static int on_finish(void *ud, fs_model_t *m, fs_run_totals_t *t)
{
    fail_t *f = ud;
    (void)m;
    t->failures += f->failures;
    t->interruptions += f->hit;
    return 0;
}

static void on_sample(void *ud, const fs_model_t *m, fs_sample_row_t *row)
{
    const fail_t *f = ud;
    (void)m;
    row->repair_queue = f->qlen;
}

static void destroy(void *ud)
{
    fail_t *f = ud;
    if (!f)
        return;
    fs_fail_spec_release(&f->sp);
    fs_rng_release(&f->rng);
    fs_free(f->gpu_base);
    fs_free(f->fail_holds);
    fs_free(f->rack_failed);
    fs_free(f->rack_cordoned);
    fs_free(f->lemon);
    fs_free(f->lemon_pos);
    fs_free(f->removed);
    fs_free(f->role);
    fs_free(f->nfail);
    if (f->spares)
        for (uint32_t p = 0; p < f->cl->n_pools; p++)
            fs_free(f->spares[p].stack);
    fs_free(f->spares);
    fs_free(f->slow);
    fs_free(f->hidden);
    fs_free(f->drain);
    fs_free(f->crew_free);
    fs_free(f->out);
    fs_free(f->free_out);
    fs_free(f);
}

static const fs_module_ops_t ops = {
    .name = "failures",
    .on_event = on_event,
    .finish = on_finish,
    .destroy = destroy,
    .sample = on_sample,
};

/* ---- attach -------------------------------------------------------------------- */

static int alloc_state(fail_t *f)
{
    const fs_cluster_t *cl = f->cl;
    const fs_failure_cfg_t *fc = f->fc;
    size_t nn = cl->n_nodes;
    f->gpu_base = fs_malloc((cl->n_pools + 1) * sizeof *f->gpu_base);
    f->fail_holds = fs_calloc(nn, sizeof *f->fail_holds);
    if (!f->gpu_base || !f->fail_holds)
        return FS_ENOMEM;
    f->gpu_base[0] = 0;
    for (uint32_t p = 0; p < cl->n_pools; p++)
        f->gpu_base[p + 1] = f->gpu_base[p] + cl->pools[p].gpus_total;
    if (fc->rack_cordon && cl->topo) {
        f->rack_failed = fs_calloc(cl->topo->n_units[FS_TOPO_RACK], sizeof *f->rack_failed);
        f->rack_cordoned = fs_calloc(cl->topo->n_units[FS_TOPO_RACK], 1);
        if (!f->rack_failed || !f->rack_cordoned)
            return FS_ENOMEM;
    }
    if (fc->lemon_after) {
        f->lemon = fs_malloc(nn * fc->lemon_after * sizeof *f->lemon);
        f->lemon_pos = fs_calloc(nn, 1);
        f->removed = fs_calloc(nn, 1);
        if (!f->lemon || !f->lemon_pos || !f->removed)
            return FS_ENOMEM;
        for (size_t i = 0; i < nn * fc->lemon_after; i++)
            f->lemon[i] = INT64_MIN;
    }
    if (fc->crews) {
        f->n_crews = fc->crews;
        f->crew_free = fs_calloc(fc->crews, sizeof *f->crew_free);
        if (!f->crew_free)
            return FS_ENOMEM;
    }
    return 0;
}

static int attach_spares(fail_t *f)
{
    const fs_cluster_t *cl = f->cl;
    const fs_failure_cfg_t *fc = f->fc;
    if (!fc->spare_nodes && !(f->sp.spare_fraction > 0))
        return 0;
    f->role = fs_calloc(cl->n_nodes, 1);
    f->nfail = fs_calloc(cl->n_nodes, sizeof *f->nfail);
    f->spares = fs_calloc(cl->n_pools, sizeof *f->spares);
    if (!f->role || !f->nfail || !f->spares)
        return FS_ENOMEM;
    for (uint32_t p = 0; p < cl->n_pools; p++) {
        const fs_pool_t *pp = &cl->pools[p];
        uint32_t k = fc->spare_nodes ? fc->spare_nodes
                                     : (uint32_t)floor(f->sp.spare_fraction * pp->n_nodes + 0.5);
        for (uint32_t j = 0; j < k && j < pp->n_nodes; j++) {
            uint32_t node = pp->first_node + pp->n_nodes - k + j;
            int rc = fs_model_node_down(f->m, node, FS_DOWN_DRAIN, NULL);
            if (rc || (rc = spare_push(f, p, node)))
                return rc;
        }
    }
    return 0;
}

static int attach_stragglers(fail_t *f)
{
    const fs_failure_cfg_t *fc = f->fc;
    if (!(fc->straggler_fraction > 0))
        return 0;
    int detect = fc->straggler_detect && fc->health_interval > 0;
    f->slow = fs_calloc(f->cl->n_nodes, 1);
    if (!f->slow)
        return FS_ENOMEM;
    for (uint32_t n = 0; n < f->cl->n_nodes; n++) {
        if (!(gsl_rng_uniform(stream(f, FS_RNG_FAILURE, STRAGGLER_COMP, 0, n)) < fc->straggler_fraction))
            continue;
        int rc = fs_model_node_speed(f->m, n, fc->straggler_factor);
        if (rc)
            return rc;
        f->slow[n] = SLOW_HIDDEN;
        if (!detect)
            continue;
        if (fs_grow((void **)&f->hidden, &f->cap_hidden, f->n_hidden + 1, sizeof *f->hidden))
            return FS_ENOMEM;
        f->hidden[f->n_hidden++] = n;
    }
    if (f->n_hidden) {
        f->health_pending = 1;
        return schedule(f, fc->health_interval, FS_PRIO_TIMER, EV_DATA(EV_HEALTH, 0, 0));
    }
    return 0;
}

static int attach_units(fail_t *f, fs_error_t *err)
{
    for (uint32_t ci = 0; ci < f->sp.n_comps; ci++) {
        fs_fail_comp_t *c = &f->sp.comps[ci];
        unit_range(f, c->kind, c->pool, &c->lo, &c->hi);
        size_t n = c->hi - c->lo;
        c->seq = fs_calloc(n ? n : 1, sizeof *c->seq);
        if (!c->seq)
            return fs_error_set(err, FS_ENOMEM, "failures: out of memory");
        if (f->fc->infant_factor > 1 && f->fc->infant_period > 0) {
            c->born = fs_calloc(n ? n : 1, sizeof *c->born);   /* all new at 0 */
            if (!c->born)
                return fs_error_set(err, FS_ENOMEM, "failures: out of memory");
        }
        for (uint32_t u = c->lo; u < c->hi; u++) {
            int rc = schedule_failure(f, ci, u);
            if (rc)
                return fs_error_set(err, rc, "failures: scheduling the first failure of %u %s "
                                    "units: %s", c->hi - c->lo, fs_failure_component_name(c->kind),
                                    fs_error_describe(rc));
        }
    }
    return 0;
}

/* Every planned outage names a unit the fleet has (f->cl, f->gpu_base). */
static int planned_units(const fail_t *f, char *key, size_t keylen, fs_error_t *err)
{
    for (size_t i = 0; i < f->fc->n_planned; i++) {
        const fs_fail_planned_cfg_t *p = &f->fc->planned[i];
        uint32_t lo, hi;
        unit_range(f, p->kind, -1, &lo, &hi);
        if (p->unit >= hi) {
            if (key && keylen)
                snprintf(key, keylen, "failures.planned.%zu.unit", i);
            return fs_error_set(err, FS_EINVAL, "failures.planned.%zu.unit: %u is out of range (the "
                                "fleet has %u %s units)", i, p->unit, hi,
                                fs_failure_component_name(p->kind));
        }
    }
    return 0;
}

int fs_failure_planned_check(const fs_config_t *cfg, const fs_cluster_t *cl, char *key,
                             size_t keylen, fs_error_t *err)
{
    if (key && keylen)
        key[0] = '\0';
    if (!cfg->failures.given || cfg->failures.n_planned == 0)
        return 0;
    fail_t f = {.cfg = cfg, .fc = &cfg->failures, .cl = cl};
    if (!(f.gpu_base = fs_malloc((cl->n_pools + 1) * sizeof *f.gpu_base)))
        return fs_error_set(err, FS_ENOMEM, "failures: out of memory");
    f.gpu_base[0] = 0;
    for (uint32_t p = 0; p < cl->n_pools; p++)
        f.gpu_base[p + 1] = f.gpu_base[p] + cl->pools[p].gpus_total;
    int rc = planned_units(&f, key, keylen, err);
    fs_free(f.gpu_base);
    return rc;
}

static int attach_planned(fail_t *f, fs_error_t *err)
{
    int rc = planned_units(f, NULL, 0, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < f->fc->n_planned; i++) {
        const fs_fail_planned_cfg_t *p = &f->fc->planned[i];
        if (fs_model_module_event(f->m, f->id, p->at, FS_PRIO_FAILURE,
                                  EV_DATA(EV_PLANNED, 0, i), NULL))
            return fs_error_set(err, FS_ENOMEM, "failures: out of memory");
    }
    return 0;
}

int fs_failures_attach(fs_model_t *m, fs_error_t *err)
{
    const fs_config_t *cfg = fs_model_config(m);
    if (!cfg->failures.given)
        return 0;
    fail_t *f = fs_calloc(1, sizeof *f);
    if (!f)
        return fs_error_set(err, FS_ENOMEM, "failures: out of memory");
    f->m = m;
    f->cfg = cfg;
    f->fc = &cfg->failures;
    f->cl = fs_model_cluster(m);
    int rc = fs_fail_spec_resolve(cfg, &f->sp, NULL, 0, err);
    if (rc) {
        destroy(f);
        return rc;
    }
    if (fs_rng_init(&f->rng, cfg->seed, cfg->replication, FS_RNG_FAILURE, 0) || alloc_state(f) ||
        fs_model_add_module(m, &ops, f, &f->id)) {
        destroy(f);
        return fs_error_set(err, FS_ENOMEM, "failures: out of memory");
    }
    /* the model owns f from here (fs_model_destroy calls destroy) */
    if ((rc = attach_spares(f)) || (rc = attach_stragglers(f)))
        return rc == FS_ENOMEM ? fs_error_set(err, rc, "failures: out of memory")
                               : fs_error_set(err, rc, "failures: %s", fs_error_describe(rc));
    if ((rc = attach_units(f, err)) || (rc = attach_planned(f, err)))
        return rc;
    return 0;
}
