/*
 * The composable scheduler: an order (fs_order.h) x mode x backfill x
 * preemption, over shape classes of treaps.  fs_sched.h explains the
 * structure and its costs; docs/policies.md the semantics.
 */
#include "fs_sched.h"
#include "fs_shape.h"
#include "fs_order.h"
#include "fs_policy.h"
#include "../sim/fs_alloc.h"

#include <stdlib.h>
#include <string.h>

enum { TM_ORDER = 1, TM_BF = 2 };

/* A treap node; node x is slot x - 1 (0 = nil).  A slot is in at most one
 * treap: its class's (queued) or the running one. */
typedef struct tnode {
    uint32_t l, r;
    uint32_t pri;
    uint32_t cls;
    double k1, k2;          /* queued: order key; running: planned end, 0 */
    uint64_t seq;           /* admission sequence: the tie-break */
    double rank;            /* preemptive passes: position in the last pass's order */
    fs_time_t est;          /* planned run time (queued) */
    fs_time_t aug_est;      /* subtree minimum of est */
    uint64_t g;             /* GPUs */
    uint64_t aug_g;         /* subtree sum of g */
    fs_time_t rsv_at;       /* conservative (exact): its reservation, -1 none */
    fs_time_t rsv_d;        /* ... and the planned run time it holds */
    uint8_t reserved;       /* its first reservation is logged */
} tnode_t;

typedef struct cls {        /* the queue of one shape (fs_shapemap index) */
    uint32_t root;
    uint32_t head;          /* first node in order (cached), 0 if empty */
} cls_t;

typedef struct sched {
    const fs_sched_cfg_t *cfg;
    const fs_order_ops_t *ord;
    void *ost;
    int strict, backfill, preempt, bf_slurm;
    tnode_t *nd;
    size_t nd_cap;
    fs_shapemap_t shapes;   /* shape -> class index */
    cls_t *cls;             /* cls[i]: the queue of class i */
    size_t cap_cls;
    uint32_t run_root;
    size_t queued, running;
    double next_rank;
    fs_event_handle_t tm_order;
    fs_time_t tm_order_at;
    fs_event_handle_t tm_bf;
    fs_time_t tm_bf_at;
    int bf_due;
    int record;
    fs_sched_resv_t *log;
    size_t n_log, cap_log;
    uint64_t preemptions, backfilled;
    uint32_t *scr;          /* scratch node lists */
    size_t scr_cap;
    uint8_t *want;
    size_t want_cap;
    uint32_t *tmp32;        /* scratch for merge sorts */
    size_t tmp32_cap;
    double *kb;             /* preemptive pass: live keys, 2 per job */
    size_t kb_cap;
    size_t *ixb, *ixt;      /* preemptive pass: sort indices */
    size_t ixb_cap, ixt_cap;
    fs_time_t *ends;        /* conservative pass: planned ends, 2 per job */
    size_t ends_cap;
    fs_time_t *pt;          /* conservative profile: step times */
    int64_t *pf;            /* free GPUs from pt[i] to pt[i + 1] */
    size_t np, cap_pt, cap_pf;
} sched_t;

/* ---- treap ----------------------------------------------------------------- */

static int less(const tnode_t *nd, uint32_t a, uint32_t b)
{
    if (nd[a].k1 != nd[b].k1)
        return nd[a].k1 < nd[b].k1;
    if (nd[a].k2 != nd[b].k2)
        return nd[a].k2 < nd[b].k2;
    return nd[a].seq < nd[b].seq;
}

static void pull(tnode_t *nd, uint32_t x)
{
    tnode_t *n = &nd[x];
    n->aug_est = n->est;
    n->aug_g = n->g;
    if (n->l) {
        if (nd[n->l].aug_est < n->aug_est)
            n->aug_est = nd[n->l].aug_est;
        n->aug_g += nd[n->l].aug_g;
    }
    if (n->r) {
        if (nd[n->r].aug_est < n->aug_est)
            n->aug_est = nd[n->r].aug_est;
        n->aug_g += nd[n->r].aug_g;
    }
}

/* t -> (< x, >= x) */
static void split(tnode_t *nd, uint32_t t, uint32_t x, uint32_t *a, uint32_t *b)
{
    if (!t) {
        *a = *b = 0;
        return;
    }
    if (less(nd, t, x)) {
        split(nd, nd[t].r, x, &nd[t].r, b);
        *a = t;
    } else {
        split(nd, nd[t].l, x, a, &nd[t].l);
        *b = t;
    }
    pull(nd, t);
}

static uint32_t merge(tnode_t *nd, uint32_t a, uint32_t b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (nd[a].pri > nd[b].pri) {
        nd[a].r = merge(nd, nd[a].r, b);
        pull(nd, a);
        return a;
    }
    nd[b].l = merge(nd, a, nd[b].l);
    pull(nd, b);
    return b;
}

static uint32_t t_insert(tnode_t *nd, uint32_t root, uint32_t x)
{
    uint32_t a, b;
    nd[x].l = nd[x].r = 0;
    pull(nd, x);
    split(nd, root, x, &a, &b);
    return merge(nd, merge(nd, a, x), b);
}

static uint32_t t_erase(tnode_t *nd, uint32_t t, uint32_t x)
{
    if (t == x)
        return merge(nd, nd[t].l, nd[t].r);
    if (less(nd, x, t))
        nd[t].l = t_erase(nd, nd[t].l, x);
    else
        nd[t].r = t_erase(nd, nd[t].r, x);
    pull(nd, t);
    return t;
}

static uint32_t t_first(const tnode_t *nd, uint32_t t)
{
    if (t)
        while (nd[t].l)
            t = nd[t].l;
    return t;
}

/* The first node in order whose est <= lim, or 0.  O(depth). */
static uint32_t t_first_est_le(const tnode_t *nd, uint32_t t, fs_time_t lim)
{
    while (t && nd[t].aug_est <= lim) {
        uint32_t l = nd[t].l;
        if (l && nd[l].aug_est <= lim)
            t = l;
        else if (nd[t].est <= lim)
            return t;
        else
            t = nd[t].r;
    }
    return 0;
}

/* The first node in order at which the running sum of g reaches need. */
static uint32_t t_prefix_reach(const tnode_t *nd, uint32_t t, uint64_t need)
{
    uint64_t acc = 0;
    while (t) {
        uint64_t lg = nd[t].l ? nd[nd[t].l].aug_g : 0;
        if (acc + lg >= need) {
            t = nd[t].l;
        } else {
            acc += lg + nd[t].g;
            if (acc >= need)
                return t;
            t = nd[t].r;
        }
    }
    return 0;
}

/* Sum of g over nodes with k1 <= lim. */
static uint64_t t_sum_le(const tnode_t *nd, uint32_t t, double lim)
{
    uint64_t s = 0;
    while (t) {
        if (nd[t].k1 <= lim) {
            s += (nd[t].l ? nd[nd[t].l].aug_g : 0) + nd[t].g;
            t = nd[t].r;
        } else {
            t = nd[t].l;
        }
    }
    return s;
}

/* Appends the nodes of t in order to s->scr[*n...]. */
static void t_collect(sched_t *s, uint32_t t, size_t *n)
{
    while (t) {
        t_collect(s, s->nd[t].l, n);
        s->scr[(*n)++] = t;
        t = s->nd[t].r;
    }
}

/* Appends the first nodes of t in order to s->scr[*n...] until *n == lim. */
static void t_collect_lim(sched_t *s, uint32_t t, size_t *n, size_t lim)
{
    while (t && *n < lim) {
        t_collect_lim(s, s->nd[t].l, n, lim);
        if (*n >= lim)
            return;
        s->scr[(*n)++] = t;
        t = s->nd[t].r;
    }
}

/* ---- shape classes ----------------------------------------------------------- */

/* Class of a job shape, created on first use.  Returns its index or -1. */
static long class_of(sched_t *s, uint32_t gpus, uint32_t milli, int32_t tp)
{
    /* room for a new class first, so that the map never gets ahead */
    if (fs_grow((void **)&s->cls, &s->cap_cls, s->shapes.n + 1, sizeof *s->cls))
        return -1;
    int added;
    long c = fs_shapemap_get(&s->shapes, gpus, milli, tp, &added);
    if (c >= 0 && added)
        s->cls[c] = (cls_t){.root = 0, .head = 0};
    return c;
}

/* ---- queue and running set ----------------------------------------------------- */

static uint32_t mix32(uint64_t x)
{
    x ^= x >> 31;
    x *= UINT64_C(0x9e3779b97f4a7c15);
    x ^= x >> 29;
    return (uint32_t)(x >> 16);
}

static int ensure_nodes(sched_t *s, uint32_t slot)
{
    size_t old = s->nd_cap;
    if ((size_t)slot + 2 <= old)
        return 0;
    if (fs_grow((void **)&s->nd, &s->nd_cap, (size_t)slot + 2, sizeof *s->nd))
        return FS_ENOMEM;
    memset(s->nd + old, 0, (s->nd_cap - old) * sizeof *s->nd);
    return 0;
}

static int q_insert(sched_t *s, fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = fs_model_job(m, slot);
    uint32_t x = slot + 1;
    tnode_t *n = &s->nd[x];
    long c = class_of(s, j->job.gpus, j->job.gpu_milli, j->type_pools);
    if (c < 0)
        return FS_ENOMEM;
    fs_okey_t k = s->ord->key(s->ost, m, slot);
    n->k1 = k.k1;
    n->k2 = k.k2;
    n->seq = j->seq;
    n->pri = mix32(j->seq * 2 + 1);
    n->est = fs_order_plan(m, slot);
    n->g = j->job.gpus;
    n->cls = (uint32_t)c;
    cls_t *cl = &s->cls[c];
    cl->root = t_insert(s->nd, cl->root, x);
    if (!cl->head || less(s->nd, x, cl->head))
        cl->head = x;
    s->queued++;
    return 0;
}

static void q_remove(sched_t *s, uint32_t slot)
{
    uint32_t x = slot + 1;
    cls_t *c = &s->cls[s->nd[x].cls];
    c->root = t_erase(s->nd, c->root, x);
    if (c->head == x)
        c->head = t_first(s->nd, c->root);
    s->queued--;
}

static void r_insert(sched_t *s, fs_model_t *m, uint32_t slot)
{
    uint32_t x = slot + 1;
    tnode_t *n = &s->nd[x];
    fs_time_t plan = fs_order_plan(m, slot);
    n->k1 = (double)(fs_model_now(m) + plan);
    n->k2 = 0;
    n->est = plan;
    s->run_root = t_insert(s->nd, s->run_root, x);
    s->running++;
}

static void r_remove(sched_t *s, uint32_t slot)
{
    s->run_root = t_erase(s->nd, s->run_root, slot + 1);
    s->running--;
}

/* Starts a queued job.  1 started, 0 does not fit, < 0 error. */
static int start(sched_t *s, fs_model_t *m, uint32_t slot)
{
    int rc = fs_model_start(m, slot);
    if (rc != 1)
        return rc;
    q_remove(s, slot);
    r_insert(s, m, slot);
    if (s->ord->started)
        s->ord->started(s->ost, m, slot);
    return 1;
}

static int preempt(sched_t *s, fs_model_t *m, uint32_t slot)
{
    int rc = fs_model_preempt(m, slot);
    if (rc)
        return rc;
    r_remove(s, slot);
    if (s->ord->stopped)
        s->ord->stopped(s->ost, m, slot, 0);
    s->preemptions++;
    return q_insert(s, m, slot);
}

static int scratch(sched_t *s, size_t n)
{
    if (fs_grow((void **)&s->scr, &s->scr_cap, n + 1, sizeof *s->scr))
        return FS_ENOMEM;
    if (fs_grow((void **)&s->want, &s->want_cap, n + 1, sizeof *s->want))
        return FS_ENOMEM;
    return 0;
}

/* All queued nodes, in no particular order, into scr; returns the count. */
static size_t collect_queued(sched_t *s)
{
    size_t n = 0;
    for (size_t c = 0; c < s->shapes.n; c++)
        t_collect(s, s->cls[c].root, &n);
    return n;
}

static void pull_all(tnode_t *nd, uint32_t t)
{
    if (!t)
        return;
    pull_all(nd, nd[t].l);
    pull_all(nd, nd[t].r);
    pull(nd, t);
}

/* Keys of queued jobs changed: rebuild every class treap from its sorted
 * nodes as a Cartesian tree (O(n) after the sort: a stack of the right
 * spine).  O(q log q) in all, with a small constant. */
static int rekey(sched_t *s, fs_model_t *m)
{
    if (scratch(s, s->queued))
        return FS_ENOMEM;
    size_t n = collect_queued(s);
    tnode_t *nd = s->nd;
    for (size_t i = 0; i < n; i++) {
        fs_okey_t k = s->ord->key(s->ost, m, s->scr[i] - 1);
        nd[s->scr[i]].k1 = k.k1;
        nd[s->scr[i]].k2 = k.k2;
    }
    /* merge sort by (class, key) (stable and reentrant; qsort has no context) */
    uint32_t *a = s->scr;
    if (fs_grow((void **)&s->tmp32, &s->tmp32_cap, n + 1, sizeof *s->tmp32))
        return FS_ENOMEM;
    uint32_t *tmp = s->tmp32;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                uint32_t x = a[i], y = a[j];
                int ylt = nd[y].cls != nd[x].cls ? nd[y].cls < nd[x].cls : less(nd, y, x);
                tmp[k++] = ylt ? a[j++] : a[i++];
            }
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
    for (size_t c = 0; c < s->shapes.n; c++)
        s->cls[c].root = s->cls[c].head = 0;
    /* tmp is reused as the stack of the right spine */
    size_t i = 0;
    while (i < n) {
        uint32_t c = nd[a[i]].cls;
        size_t top = 0;
        s->cls[c].head = a[i];
        for (; i < n && nd[a[i]].cls == c; i++) {
            uint32_t x = a[i], last = 0;
            nd[x].l = nd[x].r = 0;
            while (top > 0 && nd[tmp[top - 1]].pri < nd[x].pri)
                last = tmp[--top];
            nd[x].l = last;
            if (top > 0)
                nd[tmp[top - 1]].r = x;
            tmp[top++] = x;
        }
        s->cls[c].root = tmp[0];
        pull_all(nd, s->cls[c].root);
    }
    return 0;
}

static void log_resv(sched_t *s, fs_model_t *m, uint32_t x, fs_time_t at)
{
    if (!s->record || s->nd[x].reserved)
        return;
    s->nd[x].reserved = 1;
    if (fs_grow((void **)&s->log, &s->cap_log, s->n_log + 1, sizeof *s->log))
        return;
    s->log[s->n_log++] = (fs_sched_resv_t){fs_model_job(m, x - 1)->job.id, at};
}

static int fits(fs_model_t *m, uint32_t x) { return fs_model_fits(m, x - 1); }

static uint64_t free_gpus(const fs_model_t *m)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    return c->gpus_up > c->gpus_busy ? c->gpus_up - c->gpus_busy : 0;
}

/* ---- non-preemptive pass: strict / best effort / EASY ------------------------ */

/* The EASY candidate while `head` is blocked: the first job in order that
 * fits now and either ends (as planned) by the head's shadow time or uses
 * only the extra GPUs left at that time.  0 if none. */
static uint32_t easy_candidate(sched_t *s, fs_model_t *m, uint32_t head)
{
    tnode_t *nd = s->nd;
    fs_time_t now = fs_model_now(m);
    uint64_t need = nd[head].g, free = free_gpus(m);
    fs_time_t shadow;
    uint64_t extra;
    if (free >= need) {         /* enough GPUs by count: fragmentation blocks it */
        shadow = now;
    } else {
        uint32_t x = t_prefix_reach(nd, s->run_root, need - free);
        shadow = x ? (fs_time_t)nd[x].k1 : FS_TIME_NEVER;
        if (shadow < now)       /* overran its estimate: assumed to end any moment */
            shadow = now;
    }
    if (shadow == FS_TIME_NEVER) {
        extra = UINT64_MAX;
    } else {
        uint64_t avail = free + t_sum_le(nd, s->run_root, (double)shadow);
        extra = avail > need ? avail - need : 0;
    }
    log_resv(s, m, head, shadow);
    fs_time_t lim = shadow == FS_TIME_NEVER ? FS_TIME_NEVER : shadow - now;
    uint32_t best = 0;
    for (size_t c = 0; c < s->shapes.n; c++) {
        uint32_t h = s->cls[c].head;
        if (!h || !fits(m, h))
            continue;
        uint32_t cand = s->shapes.shapes[c].gpus <= extra ? h : t_first_est_le(nd, s->cls[c].root, lim);
        if (cand && (!best || less(nd, cand, best)))
            best = cand;
    }
    return best;
}

static int npass(sched_t *s, fs_model_t *m)
{
    tnode_t *nd = s->nd;
    while (s->queued > 0) {
        uint32_t head = 0, pick = 0;
        for (size_t c = 0; c < s->shapes.n; c++) {
            uint32_t h = s->cls[c].head;
            if (h && (!head || less(nd, h, head)))
                head = h;
        }
        if (fits(m, head)) {
            pick = head;
        } else if (s->backfill == FS_BACKFILL_EASY) {
            pick = easy_candidate(s, m, head);
        } else if (!s->strict) {
            for (size_t c = 0; c < s->shapes.n; c++) {
                uint32_t h = s->cls[c].head;
                if (h && (!pick || less(nd, h, pick)) && fits(m, h))
                    pick = h;
            }
        }
        if (!pick)
            return 0;
        int rc = start(s, m, pick - 1);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return 0;
        if (s->backfill == FS_BACKFILL_EASY && pick != head)
            s->backfilled++;
    }
    return 0;
}

/* ---- conservative backfill ------------------------------------------------------ */

static int cmp_order(const tnode_t *nd, uint32_t a, uint32_t b)
{
    return less(nd, a, b) ? -1 : less(nd, b, a) ? 1 : 0;
}

/* Sorts scr[0..n) by order key (insertion sort for small n, else merge). */
static int sort_nodes(sched_t *s, size_t n, int (*cmp)(const tnode_t *, uint32_t, uint32_t))
{
    uint32_t *a = s->scr;
    if (n < 2)
        return 0;
    if (fs_grow((void **)&s->tmp32, &s->tmp32_cap, n, sizeof *s->tmp32))
        return FS_ENOMEM;
    uint32_t *tmp = s->tmp32;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = cmp(s->nd, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
    return 0;
}

static fs_time_t round_up(fs_time_t t, fs_time_t res)
{
    if (res <= 0 || t >= FS_TIME_NEVER - res)
        return t;
    return (t + res - 1) / res * res;
}

static int prof_point(sched_t *s, fs_time_t t, size_t *at)
{
    size_t lo = 0, hi = s->np;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->pt[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->np && s->pt[lo] == t) {
        *at = lo;
        return 0;
    }
    if (fs_grow((void **)&s->pt, &s->cap_pt, s->np + 1, sizeof *s->pt) ||
        fs_grow((void **)&s->pf, &s->cap_pf, s->np + 1, sizeof *s->pf))
        return FS_ENOMEM;
    memmove(s->pt + lo + 1, s->pt + lo, (s->np - lo) * sizeof *s->pt);
    memmove(s->pf + lo + 1, s->pf + lo, (s->np - lo) * sizeof *s->pf);
    s->pt[lo] = t;
    s->pf[lo] = lo > 0 ? s->pf[lo - 1] : 0;
    s->np++;
    *at = lo;
    return 0;
}

/* Takes g GPUs (g < 0: gives them back) over [t, t + d) from the profile. */
static int prof_take(sched_t *s, fs_time_t t, fs_time_t d, int64_t g)
{
    size_t a, b;
    fs_time_t end = d >= FS_TIME_NEVER - t ? FS_TIME_NEVER : t + d;
    if (prof_point(s, t, &a) || prof_point(s, end, &b))
        return FS_ENOMEM;
    for (size_t i = a; i < b; i++)
        s->pf[i] -= g;
    return 0;
}

/* Earliest step time t at which g GPUs are free for all of [t, t + d). */
static fs_time_t prof_earliest(const sched_t *s, uint64_t g, fs_time_t d)
{
    for (size_t i = 0; i < s->np;) {
        if (s->pf[i] < (int64_t)g) {
            i++;
            continue;
        }
        fs_time_t t = s->pt[i];
        fs_time_t end = d >= FS_TIME_NEVER - t ? FS_TIME_NEVER : t + d;
        size_t k = i;
        while (k < s->np && s->pt[k] < end && s->pf[k] >= (int64_t)g)
            k++;
        if (k == s->np || s->pt[k] >= end)
            return t;
        i = k + 1;
    }
    return FS_TIME_NEVER;
}

static int cmp_end(const void *a, const void *b)
{
    fs_time_t x = *(const fs_time_t *)a, y = *(const fs_time_t *)b;
    return x < y ? -1 : x > y;
}

static int cons_pass(sched_t *s, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    fs_time_t res = s->bf_slurm ? s->cfg->bf.resolution : 0;
    if (s->bf_slurm) {
        /* Slurm's main scheduler: priority order, stops at the first job
         * that cannot start; the backfill pass runs every bf_interval */
        while (s->queued > 0) {
            uint32_t head = 0;
            for (size_t c = 0; c < s->shapes.n; c++) {
                uint32_t h = s->cls[c].head;
                if (h && (!head || less(s->nd, h, head)))
                    head = h;
            }
            if (!fits(m, head))
                break;
            int rc = start(s, m, head - 1);
            if (rc <= 0)
                return rc;
        }
        if (!s->bf_due || s->queued == 0)
            return 0;
        s->bf_due = 0;
    }
    /* the profile: free now, plus each running job's GPUs at its planned
     * end (the running treap is in planned-end order: one linear sweep) */
    if (scratch(s, s->running > s->queued ? s->running : s->queued))
        return FS_ENOMEM;
    size_t n = 0;
    t_collect(s, s->run_root, &n);
    if (fs_grow((void **)&s->pt, &s->cap_pt, n + 2, sizeof *s->pt) ||
        fs_grow((void **)&s->pf, &s->cap_pf, n + 2, sizeof *s->pf))
        return FS_ENOMEM;
    s->np = 1;
    s->pt[0] = now;
    s->pf[0] = (int64_t)free_gpus(m);
    /* planned end = start + planned run time rounded up to the resolution
     * (the same rounding as for queued jobs, so that plans made at
     * different passes agree); with rounding, ends are sorted again */
    if (fs_grow((void **)&s->ends, &s->ends_cap, 2 * (n + 1), sizeof *s->ends))
        return FS_ENOMEM;
    fs_time_t *ends = s->ends;
    for (size_t i = 0; i < n; i++) {
        const tnode_t *r = &s->nd[s->scr[i]];
        fs_time_t e = (fs_time_t)r->k1;
        if (res > 0)
            e = e - r->est + round_up(r->est, res);
        ends[2 * i] = e < now ? now : e;
        ends[2 * i + 1] = (fs_time_t)r->g;
    }
    if (res > 0)
        qsort(ends, n, 2 * sizeof *ends, cmp_end);
    for (size_t i = 0; i < n; i++) {
        fs_time_t e = ends[2 * i];
        int64_t g = ends[2 * i + 1];
        if (e == s->pt[s->np - 1]) {
            s->pf[s->np - 1] += g;
        } else {
            s->pt[s->np] = e;
            s->pf[s->np] = s->pf[s->np - 1] + g;
            s->np++;
        }
    }
    /* the queue in order (slurm mode: only the first max_job_test, taken
     * from the head of each class: O(classes x max_job_test)) */
    size_t lim;
    if (s->bf_slurm) {
        size_t want = s->cfg->bf.max_job_test;
        if (scratch(s, want * (s->shapes.n + 1)))
            return FS_ENOMEM;
        n = 0;
        for (size_t c = 0; c < s->shapes.n; c++) {
            size_t base = n;
            t_collect_lim(s, s->cls[c].root, &n, base + want);
        }
        if (sort_nodes(s, n, cmp_order))
            return FS_ENOMEM;
        lim = want < n ? want : n;
    } else {
        n = collect_queued(s);
        if (sort_nodes(s, n, cmp_order))
            return FS_ENOMEM;
        lim = n;
    }
    /* exact mode keeps reservations from pass to pass (Mu'alem and
     * Feitelson's conservative backfilling with compression): all of them
     * are in the profile first; each job in order gives its own back and
     * takes the earliest slot, never later than the one it held (that slot
     * is still free).  Slurm mode replans from scratch, as Slurm does. */
    if (!s->bf_slurm)
        for (size_t i = 0; i < n; i++) {
            tnode_t *r = &s->nd[s->scr[i]];
            if (r->rsv_at >= 0 && prof_take(s, r->rsv_at > now ? r->rsv_at : now, r->rsv_d,
                                            (int64_t)r->g))
                return FS_ENOMEM;
        }
    int blocked = 0;
    for (size_t i = 0; i < lim; i++) {
        uint32_t x = s->scr[i];
        tnode_t *r = &s->nd[x];
        int64_t g = (int64_t)r->g;
        if (!s->bf_slurm && r->rsv_at >= 0 &&
            prof_take(s, r->rsv_at > now ? r->rsv_at : now, r->rsv_d, -g))
            return FS_ENOMEM;
        r->rsv_at = -1;
        fs_time_t d = round_up(r->est, res);
        if (d <= 0)
            d = 1;
        fs_time_t t = prof_earliest(s, (uint64_t)g, d);
        if (t == FS_TIME_NEVER)
            continue;
        if (t == now && fits(m, x)) {
            int rc = start(s, m, x - 1);
            if (rc < 0)
                return rc;
            if (rc == 1) {
                if (blocked)
                    s->backfilled++;
                if (prof_take(s, now, d, g))
                    return FS_ENOMEM;
                continue;
            }
        }
        blocked = 1;
        if (s->bf_slurm && t - now > s->cfg->bf.window)
            continue;
        log_resv(s, m, x, t);
        r->rsv_at = t;
        r->rsv_d = d;
        if (prof_take(s, t, d, g))
            return FS_ENOMEM;
    }
    return 0;
}

/* ---- preemptive pass -------------------------------------------------------------- */

/* Every active job (running or queued) in order; GPUs handed out greedily
 * by count (the Tiresias simulator's allocation); running jobs left out are
 * preempted, queued jobs let in are started.  Ties keep the previous pass's
 * order (a stable sort). */
static int ppass(sched_t *s, fs_model_t *m)
{
    if (scratch(s, s->queued + s->running))
        return FS_ENOMEM;
    size_t n = collect_queued(s);
    t_collect(s, s->run_root, &n);
    /* keys of running jobs change while they run (srtf, las), so every key
     * is read afresh into k1/k2 (the keys stored in the treaps must not
     * change while a node is in one) */
    if (fs_grow((void **)&s->kb, &s->kb_cap, 2 * (n + 1), sizeof *s->kb) ||
        fs_grow((void **)&s->ixb, &s->ixb_cap, n + 1, sizeof *s->ixb) ||
        fs_grow((void **)&s->ixt, &s->ixt_cap, n + 1, sizeof *s->ixt))
        return FS_ENOMEM;
    double *k1 = s->kb, *k2 = s->kb + n + 1;
    for (size_t i = 0; i < n; i++) {
        fs_okey_t k = s->ord->key(s->ost, m, s->scr[i] - 1);
        k1[i] = k.k1;
        k2[i] = k.k2;
    }
    /* merge sort of indices by (k1, k2, rank) */
    size_t *ix = s->ixb, *tmp = s->ixt;
    for (size_t i = 0; i < n; i++)
        ix[i] = i;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                size_t a = ix[i], b = ix[j];
                int bl = k1[b] != k1[a] ? k1[b] < k1[a]
                       : k2[b] != k2[a] ? k2[b] < k2[a]
                       : s->nd[s->scr[b]].rank < s->nd[s->scr[a]].rank;
                tmp[k++] = bl ? ix[j++] : ix[i++];
            }
            while (i < mid)
                tmp[k++] = ix[i++];
            while (j < hi)
                tmp[k++] = ix[j++];
        }
        memcpy(ix, tmp, n * sizeof *ix);
    }
    uint64_t left = fs_model_cluster(m)->gpus_up;
    int blocked = 0;
    for (size_t r = 0; r < n; r++) {
        uint32_t x = s->scr[ix[r]];
        uint64_t g = s->nd[x].g;
        s->want[ix[r]] = 0;
        if (!blocked && g <= left) {
            s->want[ix[r]] = 1;
            left -= g;
        } else if (s->strict) {
            blocked = 1;
        }
    }
    /* a running job is preempted only for a waiting job let in with a
     * strictly better key: equal keys never preempt each other */
    double b1 = 0, b2 = 0;
    int any = 0;
    for (size_t r = 0; r < n && !any; r++) {
        size_t i = ix[r];
        if (s->want[i] && fs_model_job(m, s->scr[i] - 1)->state == FS_JOBRT_QUEUED) {
            b1 = k1[i];
            b2 = k2[i];
            any = 1;
        }
    }
    int rc = 0;
    for (size_t r = 0; r < n && !rc && any; r++) {
        size_t i = ix[r];
        uint32_t x = s->scr[i];
        if (!s->want[i] && fs_model_job(m, x - 1)->state == FS_JOBRT_RUNNING &&
            (k1[i] > b1 || (k1[i] == b1 && k2[i] > b2)))
            rc = preempt(s, m, x - 1);
    }
    for (size_t r = 0; r < n && !rc; r++) {
        uint32_t x = s->scr[ix[r]];
        if (s->want[ix[r]] && fs_model_job(m, x - 1)->state == FS_JOBRT_QUEUED) {
            int st = start(s, m, x - 1);
            if (st < 0)
                rc = st;
        }
    }
    for (size_t r = 0; r < n; r++)
        s->nd[s->scr[ix[r]]].rank = s->next_rank++;
    if (!rc && s->ord->after_pass)
        rc = s->ord->after_pass(s->ost, m);
    return rc;
}

/* ---- timers ------------------------------------------------------------------------ */

static int set_timers(sched_t *s, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    if (s->ord->next_change) {
        fs_time_t t = s->ord->next_change(s->ost, m);
        if (t <= now)
            t = FS_TIME_NEVER;
        if (t != s->tm_order_at) {
            if (s->tm_order_at != FS_TIME_NEVER)
                fs_model_cancel(m, s->tm_order);
            s->tm_order_at = t;
            if (t != FS_TIME_NEVER && fs_model_timer(m, t, TM_ORDER, &s->tm_order))
                return FS_ENOMEM;
        }
    }
    if (s->bf_slurm && s->queued > 0 && s->tm_bf_at == FS_TIME_NEVER) {
        fs_time_t iv = s->cfg->bf.interval;
        s->tm_bf_at = (now / iv + 1) * iv;
        if (fs_model_timer(m, s->tm_bf_at, TM_BF, &s->tm_bf))
            return FS_ENOMEM;
    }
    return 0;
}

/* ---- policy ops ---------------------------------------------------------------------- */

static void sched_destroy(void *state);

static int sched_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    const fs_order_ops_t *ord = fs_order_get(cfg->queue);
    if (!ord)
        return fs_error_set(err, FS_EINVAL, "scheduler.queue: no order with index %d", cfg->queue);
    int pre = cfg->preemption == FS_PREEMPT_ORDER ||
              (cfg->preemption == FS_PREEMPT_AUTO && ord->preemptive);
    if (pre && cfg->backfill != FS_BACKFILL_NONE)
        return fs_error_set(err, FS_EINVAL,
                            "scheduler: backfill '%s' cannot be combined with preemption (queue '%s' "
                            "preempts; set scheduler.preemption: none)",
                            cfg->backfill == FS_BACKFILL_EASY ? "easy" : "conservative", ord->name);
    sched_t *s = fs_calloc(1, sizeof *s);
    if (!s || fs_shapemap_init(&s->shapes)) {
        fs_free(s);
        return fs_error_set(err, FS_ENOMEM, "scheduler: out of memory");
    }
    s->cfg = cfg;
    s->ord = ord;
    s->strict = cfg->mode == FS_FIFO_STRICT;
    s->backfill = cfg->backfill;
    s->preempt = pre;
    s->bf_slurm = cfg->backfill == FS_BACKFILL_CONSERVATIVE && cfg->bf.mode == FS_BF_SLURM;
    s->tm_order_at = s->tm_bf_at = FS_TIME_NEVER;
    if (ord->create) {
        int rc = ord->create(m, cfg, &s->ost, err);
        if (rc) {
            s->ord = NULL;
            sched_destroy(s);
            return rc;
        }
    }
    *state = s;
    return 0;
}

static void sched_destroy(void *state)
{
    sched_t *s = state;
    if (!s)
        return;
    if (s->ord && s->ord->destroy)
        s->ord->destroy(s->ost);
    fs_free(s->nd);
    fs_free(s->cls);
    fs_shapemap_release(&s->shapes);
    fs_free(s->log);
    fs_free(s->scr);
    fs_free(s->want);
    fs_free(s->pt);
    fs_free(s->pf);
    fs_free(s->tmp32);
    fs_free(s->kb);
    fs_free(s->ixb);
    fs_free(s->ixt);
    fs_free(s->ends);
    fs_free(s);
}

static int sched_enqueue(void *state, fs_model_t *m, uint32_t slot)
{
    sched_t *s = state;
    if (ensure_nodes(s, slot))
        return FS_ENOMEM;
    tnode_t *n = &s->nd[slot + 1];
    n->reserved = 0;
    n->rsv_at = -1;
    n->rank = s->next_rank++;
    if (s->ord->admit) {
        int rc = s->ord->admit(s->ost, m, slot);
        if (rc)
            return rc;
    }
    return q_insert(s, m, slot);
}

static int sched_pass(void *state, fs_model_t *m)
{
    sched_t *s = state;
    int rc = 0;
    if (s->ord->update && s->ord->update(s->ost, m))
        rc = rekey(s, m);
    if (!rc) {
        if (s->preempt)
            rc = ppass(s, m);
        else if (s->backfill == FS_BACKFILL_CONSERVATIVE)
            rc = cons_pass(s, m);
        else
            rc = npass(s, m);
    }
    return rc ? rc : set_timers(s, m);
}

static size_t sched_queued(const void *state) { return ((const sched_t *)state)->queued; }

static void sched_job_end(void *state, fs_model_t *m, uint32_t slot)
{
    sched_t *s = state;
    r_remove(s, slot);
    if (s->ord->stopped)
        s->ord->stopped(s->ost, m, slot, 1);
}

static int sched_timer(void *state, fs_model_t *m, uint64_t data)
{
    sched_t *s = state;
    if (data == TM_BF) {
        s->tm_bf_at = FS_TIME_NEVER;
        s->bf_due = 1;
    } else {
        s->tm_order_at = FS_TIME_NEVER;
        /* with jobs waiting, the pass at the end of this instant settles
         * the order (after this instant's arrivals, as Tiresias does);
         * with none, settle now (2D-LAS demotions of running jobs) */
        if (s->queued == 0 && s->ord->update && s->ord->update(s->ost, m)) {
            int rc = rekey(s, m);
            if (rc)
                return rc;
        }
    }
    return s->queued == 0 ? set_timers(s, m) : 0;
}

const fs_policy_ops_t fs_policy_sched = {
    .name = "sched",
    .create = sched_create,
    .destroy = sched_destroy,
    .enqueue = sched_enqueue,
    .pass = sched_pass,
    .queued = sched_queued,
    .job_end = sched_job_end,
    .timer = sched_timer,
};

/* ---- instrumentation ------------------------------------------------------------------ */

void fs_sched_record(void *state, int on) { ((sched_t *)state)->record = on; }

const fs_sched_resv_t *fs_sched_reservations(const void *state, size_t *n)
{
    const sched_t *s = state;
    *n = s->n_log;
    return s->log;
}

uint64_t fs_sched_preemptions(const void *state) { return ((const sched_t *)state)->preemptions; }
uint64_t fs_sched_backfilled(const void *state) { return ((const sched_t *)state)->backfilled; }
