/*
 * The composable scheduler: an order (fs_order.h) x mode x backfill x
 * preemption, over shape classes of treaps.  fs_sched.h explains the
 * structure and its costs; docs/policies.md the semantics.
 */
#include "fs_sched.h"
#include "fs_shape.h"
#include "fs_order.h"
#include "fs_policy.h"
#include "fs_profile.h"
#include "../sim/fs_alloc.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

enum { TM_ORDER = 1, TM_BF = 2 };
#define NO_POOL UINT32_MAX

/* A treap node; node x is slot x - 1 (0 = nil).  A slot is in at most one
 * treap: its class's (queued) or the running one, so one field names the
 * class (queued) or the pool (running).  The whole of a job's scheduler
 * state in every mode (issue #13: bytes per queued job): the second key
 * k2 is in a side array, only for orders that use it (fs_order_ops_t.k2). */
typedef struct tnode {
    uint32_t l, r;
    uint32_t g;             /* GPUs */
    uint32_t seq;           /* admission sequence (fs_jobrt_t.seq): the tie-break; the
                               heap priority is a hash of it (tpri) */
    uint32_t cp;            /* queued: its class; running: the pool it runs in
                               (its running treap) */
    uint32_t aug_g;         /* subtree sum of g, modulo 2^32: read only in running
                               treaps, whose sums r_insert keeps below 2^32 (run_g) */
    double k1;              /* queued: order key; running: planned end */
    fs_time_t est;          /* planned run time (queued) */
    fs_time_t aug_est;      /* subtree minimum of est */
} tnode_t;
_Static_assert(sizeof(tnode_t) == 48, "a treap node is 48 bytes (issue #13)");

/* Per-node state that only some modes read lives in side arrays beside nd,
 * allocated only when the mode is on (issue #13: bytes per queued job). */
typedef struct tband {      /* banded orders */
    uint32_t band;          /* its band (fs_order.h) */
    uint32_t kep;           /* k1, k2 are as of key epoch kep */
    uint8_t loose;          /* in its class's loose treap, not in its band */
} tband_t;

typedef struct trsv {       /* conservative backfill (exact) */
    fs_time_t at;           /* its reservation, -1 none */
    fs_time_t d;            /* ... and the planned run time it holds */
} trsv_t;

typedef struct rend {       /* Slurm-mode backfill: a running job's rounded planned end */
    fs_time_t e;            /* start + planned run time rounded up to bf.resolution */
    uint32_t x, ep;         /* its node and run epoch (valid while rep[x] == ep) */
    uint32_t g;             /* its GPUs */
} rend_t;

typedef struct band {       /* banded: one band of a class, in sequence order */
    uint32_t root;
    uint32_t head;          /* its first node (lowest sequence), 0 if empty */
} band_t;

typedef struct cls {        /* the queue of one shape (fs_shapemap index) */
    uint32_t root;          /* the treap (banded: the loose jobs only) */
    uint32_t head;          /* first node in order (cached), 0 if empty */
    uint32_t lhead;         /* banded: first loose node */
    band_t *b;              /* banded: b[i] is band i */
    uint32_t nb, pw;        /* bands allocated; tournament width (a power of 2) */
    uint32_t *tw;           /* tournament over band heads: tw[1] wins; leaves tw[pw + i] */
    uint64_t nofit;         /* the pass in which its shape was found not to fit */
    uint64_t nofit_gen;     /* ... or the cluster generation + 1 then */
    uint64_t cand_at;       /* EASY: cand is current for shadow number cand_at (fast path) */
    uint32_t cand;          /* ... the class's backfill candidate then, 0 none */
    int cand_extra;         /* ... found by the extra-GPU rule (else by the estimate rule) */
    uint64_t in_at;         /* EASY: in is current for shadow number in_at */
    int in;                 /* ... the class may run in the shadow's pool */
} cls_t;

typedef struct sched {
    const fs_sched_cfg_t *cfg;
    const fs_order_ops_t *ord;
    void *ost;
    int strict, backfill, preempt, bf_slurm;
    int banded;             /* the order's bands are used (fs_sched_set_fast) */
    uint32_t kepoch;        /* banded: key epoch, +1 at each update of keys */
    uint64_t n_loose;       /* banded: insertions into a loose treap */
    int fast;               /* fast paths on (fs_sched_set_fast) */
    uint64_t pass_no;       /* non-preemptive passes made */
    int settled;            /* the last pass started nothing and nothing since can change that */
    uint32_t st_head;       /* ... its blocked head */
    uint64_t st_gen;        /* ... the cluster generation after it */
    fs_time_t st_shadow;    /* ... EASY: the head's shadow time (FS_TIME_NEVER: none) */
    uint64_t st_extra;      /* ... and the extra GPUs then */
    fs_time_t st_next;      /* ... EASY: the first planned end after the shadow (-1 unknown) */
    int st_keep;            /* EASY: unsettled by arrivals alone: the shadow may be reused */
    uint32_t st_new;        /* ... the first of them that may start */
    uint32_t st_nnew;       /* ... and how many may */
    uint32_t qhead;         /* unbanded: the queue's first job, 0 unknown (fast path) */
    uint64_t shadow_no;     /* EASY: shadows computed (+1 each: class candidates expire) */
    tnode_t *nd;            /* inside nd_mem, 64-byte aligned */
    void *nd_mem;
    double *k2;             /* k2[x]: second order key (queued; 0 running): orders with
                               k2 only (fs_order_ops_t.k2), else NULL and every k2 is 0 */
    tband_t *nb;            /* nb[x]: banded orders only (has_bands) */
    double *rank;           /* rank[x]: preemptive passes only: position in the last pass's order */
    trsv_t *rsv;            /* rsv[x]: exact conservative backfill only (Slurm mode keeps
                               no reservation from one pass to the next) */
    uint32_t *rep;          /* rep[x]: Slurm-mode backfill (fast path): run epoch, +1 as the
                               job starts or stops running */
    uint8_t *logged;        /* logged[x]: its first reservation is logged (record only) */
    size_t logged_cap;
    int has_bands;          /* nb is kept (banded at creation) */
    size_t nd_cap;
    fs_shapemap_t shapes;   /* shape -> class index */
    cls_t *cls;             /* cls[i]: the queue of class i */
    size_t cap_cls;
    uint32_t *run;          /* run[p]: the treap of the jobs running in pool p */
    uint64_t *run_g;        /* run_g[p]: its GPUs (the sum of g), < 2^32 (tnode_t.aug_g) */
    uint32_t n_run;         /* pools */
    uint32_t st_pool;       /* EASY: the pool the head's shadow is in (NO_POOL: none) */
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
    struct qhent *qh;       /* scratch: first_queued's heap */
    size_t qh_cap;
    struct qrun *qr;        /* ... and its runs */
    size_t qr_cap;
    double *kb;             /* preemptive pass: live keys, 2 per job */
    size_t kb_cap;
    size_t *ixb, *ixt;      /* preemptive pass: sort indices */
    size_t ixb_cap, ixt_cap;
    fs_time_t *ends;        /* conservative pass: planned ends, 2 per job */
    size_t ends_cap;
    fs_time_t *sfx;         /* Slurm-mode backfill pass: least GPUs and planned time, 2 per job */
    size_t sfx_cap;
    int rcache;             /* Slurm-mode backfill, fast path: running ends kept in rc */
    rend_t *rc, *rc2;       /* the running jobs' ends, sorted by e, as of the last fold
                               (entries of jobs no longer running are dropped at the next) */
    rend_t *radd;           /* ... and the starts since, in start order */
    size_t n_rc, n_radd, rc_cap, rc2_cap, radd_cap;
    fs_profile_t prof;      /* conservative profile (fs_profile.h): blocked on the fast
                               path, flat on the slow one */
} sched_t;

/* ---- treap ----------------------------------------------------------------- */

/* By (k1, k2, seq); k2 NULL: every k2 is 0. */
static int less(const tnode_t *nd, const double *k2, uint32_t a, uint32_t b)
{
    if (nd[a].k1 != nd[b].k1)
        return nd[a].k1 < nd[b].k1;
    if (k2 && k2[a] != k2[b])
        return k2[a] < k2[b];
    return nd[a].seq < nd[b].seq;
}

/* The heap priority of node n: a hash of its sequence (Fibonacci hashing,
 * as fs_order_las.c's treap; stored in the node before issue #13). */
static inline uint32_t tpri(const tnode_t *n)
{
    return (uint32_t)((n->seq * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
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

/* The order a treap is in: by key (then sequence), or (bands) by sequence. */
static inline int tless(const tnode_t *nd, const double *k2, uint32_t a, uint32_t b, int byseq)
{
    return byseq ? nd[a].seq < nd[b].seq : less(nd, k2, a, b);
}

/* t -> (< x, >= x) */
static void split(tnode_t *nd, const double *k2, uint32_t t, uint32_t x, uint32_t *a, uint32_t *b, int byseq)
{
    if (!t) {
        *a = *b = 0;
        return;
    }
    if (tless(nd, k2, t, x, byseq)) {
        split(nd, k2, nd[t].r, x, &nd[t].r, b, byseq);
        *a = t;
    } else {
        split(nd, k2, nd[t].l, x, a, &nd[t].l, byseq);
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
    if (tpri(&nd[a]) > tpri(&nd[b])) {
        nd[a].r = merge(nd, nd[a].r, b);
        pull(nd, a);
        return a;
    }
    nd[b].l = merge(nd, a, nd[b].l);
    pull(nd, b);
    return b;
}

/* Insertion: down to where x's priority puts it, adding x to the sums on
 * the way, then a split of the subtree found there (its spines are O(1)
 * long in expectation).  O(depth) with no work on the way back. */
static uint32_t t_insert(tnode_t *nd, const double *k2, uint32_t root, uint32_t x, int byseq)
{
    tnode_t *n = &nd[x];
    n->l = n->r = 0;
    uint32_t *link = &root, t = root, pri = tpri(n);
    while (t && tpri(&nd[t]) > pri) {
        nd[t].aug_g += n->g;
        if (n->est < nd[t].aug_est)
            nd[t].aug_est = n->est;
        link = tless(nd, k2, t, x, byseq) ? &nd[t].r : &nd[t].l;
        t = *link;
    }
    split(nd, k2, t, x, &n->l, &n->r, byseq);
    pull(nd, x);
    *link = x;
    return root;
}

static uint32_t t_erase_rec(tnode_t *nd, const double *k2, uint32_t t, uint32_t x, int byseq)
{
    if (t == x)
        return merge(nd, nd[t].l, nd[t].r);
    if (tless(nd, k2, x, t, byseq))
        nd[t].l = t_erase_rec(nd, k2, nd[t].l, x, byseq);
    else
        nd[t].r = t_erase_rec(nd, k2, nd[t].r, x, byseq);
    pull(nd, t);
    return t;
}

/* Erasure: down to x, its children merged in its place, then the sums of
 * the path fixed bottom-up (the GPU sums always; the minimum estimate only
 * while it was x's).  A path deeper than the stack (never, in practice)
 * takes the recursive way. */
static uint32_t t_erase(tnode_t *nd, const double *k2, uint32_t root, uint32_t x, int byseq)
{
    enum { STK = 192 };
    uint32_t path[STK];
    size_t k = 0;
    uint32_t *link = &root, t = root;
    while (t != x) {
        if (k == STK)
            return t_erase_rec(nd, k2, root, x, byseq);
        path[k++] = t;
        link = tless(nd, k2, x, t, byseq) ? &nd[t].l : &nd[t].r;
        t = *link;
    }
    *link = merge(nd, nd[x].l, nd[x].r);
    uint32_t g = nd[x].g;
    fs_time_t est = nd[x].est;
    int fix_est = 1;
    while (k > 0) {
        tnode_t *p = &nd[path[--k]];
        p->aug_g -= g;
        if (fix_est && p->aug_est == est) {
            fs_time_t e = p->est;
            if (p->l && nd[p->l].aug_est < e)
                e = nd[p->l].aug_est;
            if (p->r && nd[p->r].aug_est < e)
                e = nd[p->r].aug_est;
            p->aug_est = e;
        } else {
            fix_est = 0;
        }
    }
    return root;
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
static long class_of(sched_t *s, uint32_t gpus, uint32_t milli, uint64_t res, int32_t tp)
{
    /* room for a new class first, so that the map never gets ahead */
    if (fs_grow((void **)&s->cls, &s->cap_cls, s->shapes.n + 1, sizeof *s->cls))
        return -1;
    int added;
    long c = fs_shapemap_get(&s->shapes, gpus, milli, res, tp, &added);
    if (c >= 0 && added)
        s->cls[c] = (cls_t){.root = 0, .head = 0};
    return c;
}

/* ---- queue and running set ----------------------------------------------------- */

/* Grows side array *a (elem bytes per node) from old to cap nodes, zeroing
 * the new part.  Returns 0 or FS_ENOMEM (*a unchanged). */
static int side_grow(void **a, size_t old, size_t cap, size_t elem)
{
    char *p = fs_realloc(*a, cap * elem);
    if (!p)
        return FS_ENOMEM;
    memset(p + old * elem, 0, (cap - old) * elem);
    *a = p;
    return 0;
}

static int ensure_nodes(sched_t *s, uint32_t slot)
{
    size_t old = s->nd_cap;
    if ((size_t)slot + 2 <= old)
        return 0;
    size_t cap = old ? old : 64;
    while (cap < (size_t)slot + 2)
        cap *= 2;
    if ((s->has_bands && side_grow((void **)&s->nb, old, cap, sizeof *s->nb)) ||
        (s->preempt && side_grow((void **)&s->rank, old, cap, sizeof *s->rank)) ||
        (s->ord->k2 && side_grow((void **)&s->k2, old, cap, sizeof *s->k2)) ||
        (s->backfill == FS_BACKFILL_CONSERVATIVE && !s->bf_slurm &&
         side_grow((void **)&s->rsv, old, cap, sizeof *s->rsv)) ||
        (s->bf_slurm && side_grow((void **)&s->rep, old, cap, sizeof *s->rep)))
        return FS_ENOMEM;
    void *mem = fs_malloc(cap * sizeof *s->nd + 64);
    if (!mem)
        return FS_ENOMEM;
    tnode_t *nd = (tnode_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    if (old)
        memcpy(nd, s->nd, old * sizeof *nd);
    memset(nd + old, 0, (cap - old) * sizeof *nd);
    fs_free(s->nd_mem);
    s->nd_mem = mem;
    s->nd = nd;
    s->nd_cap = cap;
    return 0;
}

/* ---- bands ------------------------------------------------------------------------
 * Why: a Slurm PriorityCalcPeriod changes the key of every queued job, and
 * rebuilding the class treaps costs O(queue log queue) per period.  An order
 * with bands (fs_order.h) promises that within a band the keys taken at one
 * update never decrease with sequence.  So each class keeps one treap per
 * band in sequence order (its order at every update, untouched by one), and
 * a tournament over the band heads gives the class head: an update costs
 * O(bands), refreshing only the heads' keys (k1, k2 of other band nodes may
 * be stale: kep < kepoch).  A job whose key breaks the promise at insertion
 * (a job queued again between updates, whose key was taken later than its
 * band's) goes to the class's loose treap, ordered by key as without bands,
 * and rejoins its band at the next update.  Used where the class head is
 * all a pass reads (no backfill, no preemption) and under Slurm's bounded
 * backfill, whose first jobs come from a merge of the bands
 * (first_queued). */

static void refresh(sched_t *s, fs_model_t *m, uint32_t x)
{
    tnode_t *n = &s->nd[x];
    if (s->nb[x].kep != s->kepoch) {
        fs_okey_t k = s->ord->update_key(s->ost, m, x - 1);
        n->k1 = k.k1;
        if (s->k2)
            s->k2[x] = k.k2;
        s->nb[x].kep = s->kepoch;
    }
}

/* The better of two tournament entries (band + 1, 0 = none). */
static uint32_t tw_win(const sched_t *s, const cls_t *c, uint32_t a, uint32_t b)
{
    if (!a || !b)
        return a ? a : b;
    return less(s->nd, s->k2, c->b[b - 1].head, c->b[a - 1].head) ? b : a;
}

/* Band i's head changed (its key is fresh): replay its matches. */
static void tw_fix(const sched_t *s, cls_t *c, uint32_t i)
{
    uint32_t k = c->pw + i;
    c->tw[k] = c->b[i].head ? i + 1 : 0;
    for (k /= 2; k >= 1; k /= 2)
        c->tw[k] = tw_win(s, c, c->tw[2 * k], c->tw[2 * k + 1]);
}

/* All matches again (every band head is fresh).  O(pw). */
static void tw_build(const sched_t *s, cls_t *c)
{
    if (!c->pw)
        return;
    for (uint32_t i = 0; i < c->pw; i++)
        c->tw[c->pw + i] = i < c->nb && c->b[i].head ? i + 1 : 0;
    for (uint32_t k = c->pw - 1; k >= 1; k--)
        c->tw[k] = tw_win(s, c, c->tw[2 * k], c->tw[2 * k + 1]);
}

/* The class head: the better of the loose head and the tournament's. */
static void cls_head(const sched_t *s, cls_t *c)
{
    uint32_t w = c->pw && c->tw[1] ? c->b[c->tw[1] - 1].head : 0, l = c->lhead;
    c->head = !w ? l : !l ? w : less(s->nd, s->k2, l, w) ? l : w;
}

/* Room for band i in class c.  0 or FS_ENOMEM. */
static int band_room(sched_t *s, cls_t *c, uint32_t i)
{
    if (i >= c->nb) {
        size_t nb = c->nb;
        if (fs_grow((void **)&c->b, &nb, (size_t)i + 1, sizeof *c->b))
            return FS_ENOMEM;
        memset(c->b + c->nb, 0, (nb - c->nb) * sizeof *c->b);
        c->nb = (uint32_t)nb;
    }
    if (c->nb <= c->pw)
        return 0;
    uint32_t pw = c->pw ? c->pw : 1;
    while (pw < c->nb)
        pw *= 2;
    uint32_t *tw = fs_malloc(2 * (size_t)pw * sizeof *tw);
    if (!tw)
        return FS_ENOMEM;
    fs_free(c->tw);
    c->tw = tw;
    c->pw = pw;
    tw_build(s, c);
    return 0;
}

/* x (fresh key) may join band root t: its sequence neighbours there stay in
 * order by key. */
static int band_agrees(sched_t *s, fs_model_t *m, uint32_t t, uint32_t x)
{
    tnode_t *nd = s->nd;
    uint32_t p = 0, q = 0;
    while (t) {
        if (nd[t].seq < nd[x].seq) {
            p = t;
            t = nd[t].r;
        } else {
            q = t;
            t = nd[t].l;
        }
    }
    if (p) {
        refresh(s, m, p);
        if (less(nd, s->k2, x, p))
            return 0;
    }
    if (q) {
        refresh(s, m, q);
        if (less(nd, s->k2, q, x))
            return 0;
    }
    return 1;
}

/* Queues node x (fresh key, band set) in class c: its band, or loose. */
static void b_insert(sched_t *s, fs_model_t *m, cls_t *c, uint32_t x)
{
    tnode_t *nd = s->nd;
    band_t *b = &c->b[s->nb[x].band];
    if (band_agrees(s, m, b->root, x)) {
        s->nb[x].loose = 0;
        b->root = t_insert(nd, s->k2, b->root, x, 1);
        if (!b->head || nd[x].seq < nd[b->head].seq) {
            b->head = x;
            tw_fix(s, c, s->nb[x].band);
        }
    } else {
        s->nb[x].loose = 1;
        s->n_loose++;
        c->root = t_insert(nd, s->k2, c->root, x, 0);
        if (!c->lhead || less(nd, s->k2, x, c->lhead))
            c->lhead = x;
    }
}

static void b_remove(sched_t *s, fs_model_t *m, cls_t *c, uint32_t x)
{
    tnode_t *nd = s->nd;
    if (s->nb[x].loose) {
        c->root = t_erase(nd, s->k2, c->root, x, 0);
        if (c->lhead == x)
            c->lhead = t_first(nd, c->root);
    } else {
        band_t *b = &c->b[s->nb[x].band];
        b->root = t_erase(nd, s->k2, b->root, x, 1);
        if (b->head == x) {
            b->head = t_first(nd, b->root);
            if (b->head)
                refresh(s, m, b->head);
            tw_fix(s, c, s->nb[x].band);
        }
    }
    cls_head(s, c);
}

static int scratch(sched_t *s, size_t n);

/* Keys changed (an update): loose jobs rejoin their bands (or stay loose,
 * by their new keys), band heads take their new keys, tournaments are
 * replayed.  O(loose log + bands). */
static int b_rekey(sched_t *s, fs_model_t *m)
{
    s->kepoch++;
    for (size_t ci = 0; ci < s->shapes.n; ci++) {
        cls_t *c = &s->cls[ci];
        for (uint32_t i = 0; i < c->nb; i++)
            if (c->b[i].head)
                refresh(s, m, c->b[i].head);
        if (c->root) {
            if (scratch(s, s->queued))
                return FS_ENOMEM;
            size_t n = 0;
            t_collect(s, c->root, &n);
            c->root = c->lhead = 0;
            for (size_t i = 0; i < n; i++) {
                refresh(s, m, s->scr[i]);
                b_insert(s, m, c, s->scr[i]);
            }
        }
        tw_build(s, c);
        cls_head(s, c);
    }
    return 0;
}

static int q_insert(sched_t *s, fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = fs_model_job(m, slot);
    uint32_t x = slot + 1;
    tnode_t *n = &s->nd[x];
    long c = class_of(s, j->job.gpus, j->job.gpu_milli, fs_jobq_pod_res(&j->job), j->type_pools);
    if (c < 0)
        return FS_ENOMEM;
    fs_okey_t k = s->ord->key(s->ost, m, slot);
    if (k.k2 != 0 && !s->k2)
        return FS_EINTERNAL;    /* an order with k2 must say so (fs_order_ops_t.k2) */
    n->k1 = k.k1;
    if (s->k2)
        s->k2[x] = k.k2;
    n->seq = j->seq;
    n->est = fs_order_plan(m, slot);
    n->g = j->job.gpus;
    n->cp = (uint32_t)c;
    cls_t *cl = &s->cls[c];
    if (s->banded) {
        s->nb[x].kep = s->kepoch;
        s->nb[x].band = s->ord->band(s->ost, m, slot);
        if (band_room(s, cl, s->nb[x].band))
            return FS_ENOMEM;
        b_insert(s, m, cl, x);
        cls_head(s, cl);
    } else {
        cl->root = t_insert(s->nd, s->k2, cl->root, x, 0);
        if (!cl->head || less(s->nd, s->k2, x, cl->head))
            cl->head = x;
        if (s->qhead && less(s->nd, s->k2, x, s->qhead))
            s->qhead = x;
    }
    s->queued++;
    return 0;
}

static void q_remove(sched_t *s, fs_model_t *m, uint32_t slot)
{
    uint32_t x = slot + 1;
    cls_t *c = &s->cls[s->nd[x].cp];
    if (s->qhead == x)
        s->qhead = 0;
    if (s->banded) {
        b_remove(s, m, c, x);
    } else {
        c->root = t_erase(s->nd, s->k2, c->root, x, 0);
        if (c->head == x)
            c->head = t_first(s->nd, c->root);
    }
    s->queued--;
}

/* ---- running ends (Slurm-mode backfill) ------------------------------------------
 * Slurm's backfill pass builds its profile from every running job's rounded
 * planned end.  Collecting them from the running treaps at each pass walks
 * every running node at random; the fast path keeps them sorted instead:
 * starts are appended to radd, a job that stops running moves its epoch on,
 * and a fold (at each backfill pass, or when radd grows) merges the sorted
 * starts into rc and drops the stale entries: sequential O(running + starts
 * log starts). */

/* t rounded up to a multiple of res (res <= 0, or no room: t). */
static fs_time_t round_up(fs_time_t t, fs_time_t res)
{
    if (res <= 0 || t >= FS_TIME_NEVER - res)
        return t;
    return (t + res - 1) / res * res;
}

/* A running node's planned end with its planned run time rounded up to res
 * (the same rounding as for queued jobs, so that plans made at different
 * passes agree). */
static fs_time_t rounded_end(const tnode_t *r, fs_time_t res)
{
    fs_time_t e = (fs_time_t)r->k1;
    return res > 0 ? e - r->est + round_up(r->est, res) : e;
}

static int rend_cmp(const void *a, const void *b)
{
    fs_time_t x = ((const rend_t *)a)->e, y = ((const rend_t *)b)->e;
    return x < y ? -1 : x > y;
}

/* Merges the live starts since the last fold into rc, dropping stale
 * entries on both sides.  0 or FS_ENOMEM. */
static int rc_fold(sched_t *s)
{
    size_t na = 0;
    for (size_t i = 0; i < s->n_radd; i++)
        if (s->rep[s->radd[i].x] == s->radd[i].ep)
            s->radd[na++] = s->radd[i];
    qsort(s->radd, na, sizeof *s->radd, rend_cmp);
    if (fs_grow((void **)&s->rc2, &s->rc2_cap, s->n_rc + na + 1, sizeof *s->rc2))
        return FS_ENOMEM;
    size_t i = 0, j = 0, k = 0;
    while (i < s->n_rc || j < na) {
        if (i < s->n_rc && s->rep[s->rc[i].x] != s->rc[i].ep) {
            i++;
        } else if (j < na && (i == s->n_rc || s->radd[j].e < s->rc[i].e)) {
            s->rc2[k++] = s->radd[j++];
        } else {
            s->rc2[k++] = s->rc[i++];
        }
    }
    rend_t *t = s->rc;
    size_t tc = s->rc_cap;
    s->rc = s->rc2;
    s->rc_cap = s->rc2_cap;
    s->rc2 = t;
    s->rc2_cap = tc;
    s->n_rc = k;
    s->n_radd = 0;
    return 0;
}

/* Node x starts running (its planned end set): a new epoch and entry. */
static int rc_add(sched_t *s, uint32_t x)
{
    if (s->n_radd >= 2 * s->running + 64 && rc_fold(s))
        return FS_ENOMEM;
    if (fs_grow((void **)&s->radd, &s->radd_cap, s->n_radd + 1, sizeof *s->radd))
        return FS_ENOMEM;
    const tnode_t *n = &s->nd[x];
    s->radd[s->n_radd++] = (rend_t){rounded_end(n, s->cfg->bf.resolution), x, ++s->rep[x], n->g};
    return 0;
}

/* 0, or FS_ELIMIT: 2^32 GPUs or more would run in one pool (tnode_t.aug_g). */
static int r_insert(sched_t *s, fs_model_t *m, uint32_t slot)
{
    uint32_t x = slot + 1;
    tnode_t *n = &s->nd[x];
    uint32_t p = fs_model_job(m, slot)->r->place.pool;
    if (s->run_g[p] + n->g > UINT32_MAX)
        return FS_ELIMIT;
    s->run_g[p] += n->g;
    fs_time_t plan = fs_order_plan(m, slot);
    n->k1 = (double)(fs_model_now(m) + plan);
    if (s->k2)
        s->k2[x] = 0;
    n->est = plan;
    n->cp = p;
    if (s->rcache && rc_add(s, x)) {
        s->run_g[p] -= n->g;
        return FS_ENOMEM;
    }
    s->run[p] = t_insert(s->nd, s->k2, s->run[p], x, 0);
    s->running++;
    return 0;
}

static void r_remove(sched_t *s, uint32_t slot)
{
    s->settled = 0;
    s->st_keep = 0;
    if (s->rep)
        s->rep[slot + 1]++;     /* its entry in the running-ends cache is stale */
    uint32_t p = s->nd[slot + 1].cp;
    s->run_g[p] -= s->nd[slot + 1].g;
    s->run[p] = t_erase(s->nd, s->k2, s->run[p], slot + 1, 0);
    s->running--;
}

/* Starts a queued job.  1 started, 0 does not fit, < 0 error. */
static int start(sched_t *s, fs_model_t *m, uint32_t slot)
{
    int rc = fs_model_start(m, slot);
    if (rc != 1)
        return rc;
    s->cls[s->nd[slot + 1].cp].cand_at = 0;
    q_remove(s, m, slot);
    rc = r_insert(s, m, slot);
    if (rc)
        return rc;
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
    s->qhead = 0;
    s->st_keep = 0;
    if (s->banded)
        return b_rekey(s, m);
    if (scratch(s, s->queued))
        return FS_ENOMEM;
    size_t n = collect_queued(s);
    tnode_t *nd = s->nd;
    for (size_t i = 0; i < n; i++) {
        fs_okey_t k = s->ord->key(s->ost, m, s->scr[i] - 1);
        if (k.k2 != 0 && !s->k2)
            return FS_EINTERNAL;    /* an order with k2 must say so (fs_order_ops_t.k2) */
        nd[s->scr[i]].k1 = k.k1;
        if (s->k2)
            s->k2[s->scr[i]] = k.k2;
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
                int ylt = nd[y].cp != nd[x].cp ? nd[y].cp < nd[x].cp : less(nd, s->k2, y, x);
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
        uint32_t c = nd[a[i]].cp;
        size_t top = 0;
        s->cls[c].head = a[i];
        for (; i < n && nd[a[i]].cp == c; i++) {
            uint32_t x = a[i], last = 0;
            nd[x].l = nd[x].r = 0;
            while (top > 0 && tpri(&nd[tmp[top - 1]]) < tpri(&nd[x]))
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
    if (!s->record)
        return;
    if (x >= s->logged_cap) {
        size_t old = s->logged_cap;
        if (side_grow((void **)&s->logged, old, s->nd_cap, 1))
            return;
        s->logged_cap = s->nd_cap;
    }
    if (s->logged[x])
        return;
    s->logged[x] = 1;
    if (fs_grow((void **)&s->log, &s->cap_log, s->n_log + 1, sizeof *s->log))
        return;
    s->log[s->n_log++] = (fs_sched_resv_t){fs_model_job(m, x - 1)->job.id, at};
}

static int fits(fs_model_t *m, uint32_t x) { return fs_model_fits(m, x - 1); }

/* Does x's shape fit now?  A pass only takes GPUs, so a shape that does not
 * fit stays so until the pass ends; and it stays so while the cluster's
 * generation is the same: remembered per class (fast path). */
static inline int cls_fits(sched_t *s, fs_model_t *m, uint32_t x, size_t ci)
{
    cls_t *c = &s->cls[ci];
    const fs_cluster_t *cl = fs_model_cluster(m), *one = fs_model_one_pool(m);
    uint64_t gen = cl->gen + 1;
    if (s->fast && (c->nofit == s->pass_no || c->nofit_gen == gen))
        return 0;
    const fs_shape_t *sh = &s->shapes.shapes[ci];
    if (one && sh->pools < 0 && sh->milli >= FS_GPU_MILLI_WHOLE && !sh->res && sh->gpus
            ? fs_cluster_fits(one, 0, sh->gpus)
                                                               : fs_model_fits(m, x - 1))
        return 1;
    c->nofit = s->pass_no;
    c->nofit_gen = gen;
    return 0;
}

static uint64_t free_gpus(const fs_model_t *m)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    return c->gpus_up > c->gpus_busy ? c->gpus_up - c->gpus_busy : 0;
}

/* ---- non-preemptive pass: strict / best effort / EASY ------------------------ */

/* ---- settled queues ----------------------------------------------------------------
 * Why: half the passes follow an arrival alone.  When the last pass started
 * nothing, the next one starts nothing either unless the cluster changed
 * (its generation), the running set changed (the EASY shadow), keys
 * changed, time passed the shadow time (extra GPUs are counted at it), or
 * a new job is a candidate itself: it is ahead of the blocked head, or its
 * shape fits and (best effort) it may start, or (EASY) it fits in the extra
 * GPUs or ends by the shadow time.  Old jobs stay blocked: their shapes
 * still do not fit, or (EASY) the extra GPUs are the same and the time left
 * to the shadow only shrank.  Such a pass is skipped. */

static void settle(sched_t *s, fs_model_t *m, uint32_t head)
{
    if (!s->fast)
        return;
    s->settled = 1;
    s->st_head = head;
    s->st_gen = fs_model_cluster(m)->gen;
    s->st_next = -1;
}

/* The first running job planned to end after lim, or 0. */
static uint32_t t_first_gt(const tnode_t *nd, uint32_t t, double lim)
{
    uint32_t best = 0;
    while (t) {
        if (nd[t].k1 > lim) {
            best = t;
            t = nd[t].l;
        } else {
            t = nd[t].r;
        }
    }
    return best;
}

static int cls_in_pool(sched_t *s, const fs_model_t *m, size_t ci);

/* The settled shadow as of now, into *eff: the shadow, or now once time has
 * passed it while no running job was planned to end in between (the GPUs
 * free at the shadow, and so the extra ones, are then the same at now: a
 * new pass would find the same).  0 if such an end passed (the settled
 * state is gone). */
static int shadow_now(sched_t *s, fs_model_t *m, fs_time_t *eff)
{
    fs_time_t now = fs_model_now(m);
    *eff = s->st_shadow;
    if (s->st_shadow == FS_TIME_NEVER || s->st_shadow >= now)
        return 1;
    if (s->st_next < 0) {
        uint32_t x = t_first_gt(s->nd, s->run[s->st_pool], (double)s->st_shadow);
        s->st_next = x ? (fs_time_t)s->nd[x].k1 : FS_TIME_NEVER;
    }
    *eff = now;
    return now < s->st_next;
}

/* What the arrival of node x does to the settled state. */
enum { ST_KEEPS, ST_CANDIDATE, ST_AHEAD };
static int settle_keeps(sched_t *s, fs_model_t *m, uint32_t x)
{
    tnode_t *nd = s->nd;
    uint32_t ci = s->nd[x].cp;
    if (s->backfill == FS_BACKFILL_NONE && !s->strict)
        return cls_fits(s, m, x, ci) ? ST_CANDIDATE : ST_KEEPS;
    if (less(nd, s->k2, x, s->st_head))
        return ST_AHEAD;
    if (s->backfill == FS_BACKFILL_NONE || !cls_fits(s, m, x, ci))
        return ST_KEEPS;
    fs_time_t shadow;
    if (!shadow_now(s, m, &shadow) || !cls_in_pool(s, m, ci))
        return ST_CANDIDATE;
    return nd[x].g > s->st_extra && shadow != FS_TIME_NEVER &&
                   nd[x].est > shadow - fs_model_now(m)
               ? ST_KEEPS
               : ST_CANDIDATE;
}

/* Is the state the last pass settled in still the same (the cluster, and
 * no planned end passed since the shadow)?  *eff: the shadow as of now. */
static int settled_state(sched_t *s, fs_model_t *m, fs_time_t *eff)
{
    return fs_model_cluster(m)->gen == s->st_gen && shadow_now(s, m, eff);
}

/* May this pass be skipped? */
static int settled(sched_t *s, fs_model_t *m)
{
    fs_time_t eff;
    return s->settled && settled_state(s, m, &eff);
}

/* The queue's first job (not 0: the queue is not empty).  Unbanded, it is
 * kept between passes (fast path): an insertion ahead of it takes its
 * place, its removal or new keys make it unknown. */
static uint32_t queue_head(sched_t *s)
{
    if (s->fast && !s->banded && s->qhead)
        return s->qhead;
    uint32_t head = 0;
    for (size_t c = 0; c < s->shapes.n; c++) {
        uint32_t h = s->cls[c].head;
        if (h && (!head || less(s->nd, s->k2, h, head)))
            head = h;
    }
    if (!s->banded)
        s->qhead = head;
    return head;
}

/* GPUs free in pool p now (on up nodes, by count). */
static uint64_t pool_free(const fs_model_t *m, uint32_t p)
{
    const fs_pool_t *pl = &fs_model_cluster(m)->pools[p];
    return pl->gpus_up > pl->gpus_busy ? pl->gpus_up - pl->gpus_busy : 0;
}

/* When `need` GPUs are free in pool p by count, as its running jobs end as
 * planned (FS_TIME_NEVER: never), and the GPUs beyond `need` free then. */
static fs_time_t pool_shadow(sched_t *s, fs_model_t *m, uint32_t p, uint64_t need,
                             uint64_t *extra)
{
    tnode_t *nd = s->nd;
    fs_time_t now = fs_model_now(m), shadow;
    uint64_t free = pool_free(m, p);
    if (free >= need) {         /* enough GPUs by count: fragmentation blocks it */
        shadow = now;
    } else {
        uint32_t x = t_prefix_reach(nd, s->run[p], need - free);
        shadow = x ? (fs_time_t)nd[x].k1 : FS_TIME_NEVER;
        if (shadow < now)       /* overran its estimate: assumed to end any moment */
            shadow = now;
    }
    if (shadow == FS_TIME_NEVER) {
        *extra = UINT64_MAX;
    } else {
        uint64_t avail = free + t_sum_le(nd, s->run[p], (double)shadow);
        *extra = avail > need ? avail - need : 0;
    }
    return shadow;
}

/* The head's shadow time and the extra GPUs at it (st_shadow, st_extra):
 * in the first of its pools (a gang runs in one pool) where it could start
 * earliest (st_pool); its reservation is logged. */
static void easy_shadow(sched_t *s, fs_model_t *m, uint32_t head)
{
    const uint32_t *pools;
    size_t n = fs_model_pool_set(m, s->shapes.shapes[s->nd[head].cp].pools, &pools);
    fs_time_t shadow = FS_TIME_NEVER;
    uint64_t extra = UINT64_MAX;
    s->st_pool = NO_POOL;
    for (size_t i = 0; i < n; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        uint64_t ex;
        fs_time_t sh = pool_shadow(s, m, p, s->nd[head].g, &ex);
        if (sh != FS_TIME_NEVER && (s->st_pool == NO_POOL || sh < shadow)) {
            shadow = sh;
            extra = ex;
            s->st_pool = p;
        }
    }
    log_resv(s, m, head, shadow);
    s->st_shadow = shadow;
    s->st_extra = extra;
    s->shadow_no++;
}

/* Could class ci's next job start in the shadow's pool now?  If not, it
 * starts in another pool, where it cannot delay the head's reservation.
 * Whether the class may run in that pool at all is kept per shadow; whether
 * its shape fits there is asked each time (starts fill the pool). */
static int cls_in_pool(sched_t *s, const fs_model_t *m, size_t ci)
{
    cls_t *c = &s->cls[ci];
    if (s->n_run == 1 || s->st_pool == NO_POOL)
        return 1;
    const fs_shape_t *sh = &s->shapes.shapes[ci];
    if (c->in_at != s->shadow_no) {
        const uint32_t *pools;
        size_t n = fs_model_pool_set(m, sh->pools, &pools);
        c->in = pools == NULL;
        for (size_t i = 0; i < n && !c->in; i++)
            c->in = pools[i] == s->st_pool;
        c->in_at = s->shadow_no;
    }
    return c->in && fs_cluster_fits_req(fs_model_cluster(m), s->st_pool, sh->gpus, sh->milli);
}

static uint32_t cls_candidate(sched_t *s, const fs_model_t *m, size_t ci, fs_time_t lim)
{
    cls_t *c = &s->cls[ci];
    int by_extra = s->shapes.shapes[ci].gpus <= s->st_extra || !cls_in_pool(s, m, ci);
    if (s->fast && c->cand_at == s->shadow_no && c->cand_extra == by_extra)
        return c->cand;
    c->cand = by_extra ? c->head : t_first_est_le(s->nd, c->root, lim);
    c->cand_extra = by_extra;
    c->cand_at = s->shadow_no;
    return c->cand;
}

/* The EASY candidate while the head is blocked (easy_shadow done): the
 * first job in order that fits now and either ends (as planned) by the
 * head's shadow time or uses only the extra GPUs left at that time.  0 if
 * none.  A class's candidates are not ahead of its head: classes whose head
 * is behind the best so far are not looked into. */
static uint32_t easy_candidate(sched_t *s, fs_model_t *m)
{
    tnode_t *nd = s->nd;
    fs_time_t now = fs_model_now(m), shadow = s->st_shadow;
    fs_time_t lim = shadow == FS_TIME_NEVER ? FS_TIME_NEVER : shadow - now;
    uint32_t best = 0;
    for (size_t c = 0; c < s->shapes.n; c++) {
        uint32_t h = s->cls[c].head;
        if (!h || (best && less(nd, s->k2, best, h)) || !cls_fits(s, m, h, c))
            continue;
        uint32_t cand = cls_candidate(s, m, c, lim);
        if (cand && (!best || less(nd, s->k2, cand, best)))
            best = cand;
    }
    return best;
}

/* Backfill job x just started while the head stays blocked: is the head's
 * shadow still current?  Taking g GPUs now and returning them at x's
 * planned end e leaves the shadow where it was (x ends by it, or it used
 * g <= extra GPUs free then), and the extra GPUs less g if e is after it.
 * So no new shadow is computed, unless the start did not take exactly g
 * of the free GPUs (a share, a burst pool) or the slow path is on. */
static int easy_shadow_keeps(sched_t *s, fs_model_t *m, uint32_t x, uint64_t free0, uint64_t up0)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    uint64_t g = s->nd[x].g;
    if (!s->fast || c->gpus_up != up0 || free0 - free_gpus(m) != g)
        return 0;
    /* g GPUs of x's pool taken: another pool's shadow is untouched */
    if (s->st_shadow == FS_TIME_NEVER || s->nd[x].cp != s->st_pool ||
        s->nd[x].k1 <= (double)s->st_shadow)
        return 1;
    if (g > s->st_extra)
        return 0;
    s->st_extra -= g;
    return 1;
}

static int npass(sched_t *s, fs_model_t *m)
{
    tnode_t *nd = s->nd;
    s->pass_no++;
    fs_time_t eff;
    int keep = s->fast && s->st_keep && settled_state(s, m, &eff);
    if (keep)
        s->st_shadow = eff;
    s->settled = 0;
    s->st_keep = 0;
    if (!keep)
        s->st_shadow = FS_TIME_NEVER;
    uint32_t blocked = 0;       /* EASY: the blocked head whose shadow is current */
    uint32_t sole = 0;          /* EASY: the one job that may start (see below) */
    while (s->queued > 0) {
        uint32_t head = blocked, pick = 0;
        if (!head) {
            head = queue_head(s);
            if (cls_fits(s, m, head, s->nd[head].cp))
                pick = head;
        }
        if (!pick && s->backfill == FS_BACKFILL_EASY) {
            if (!blocked) {
                if (keep && head == s->st_head) {
                    /* settled, then arrivals: the jobs queued then are
                     * still no candidates (they fit no better, the extra
                     * GPUs and the time to the shadow did not grow); with
                     * one arrival that may start, it is the pick */
                    s->shadow_no++;
                    if (s->st_nnew == 1)
                        sole = s->st_new;
                } else {
                    easy_shadow(s, m, head);
                }
                blocked = head;
            }
            keep = 0;
            pick = sole ? sole : easy_candidate(s, m);
        } else if (!pick && !s->strict) {
            for (size_t c = 0; c < s->shapes.n; c++) {
                uint32_t h = s->cls[c].head;
                if (h && (!pick || less(nd, s->k2, h, pick)) && cls_fits(s, m, h, c))
                    pick = h;
            }
        }
        if (!pick) {
            settle(s, m, head);
            return 0;
        }
        uint64_t free0 = blocked ? free_gpus(m) : 0;
        uint64_t up0 = blocked ? fs_model_cluster(m)->gpus_up : 0;
        int rc = start(s, m, pick - 1);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return 0;
        if (blocked) {
            s->backfilled++;
            if (!easy_shadow_keeps(s, m, pick, free0, up0)) {
                blocked = 0;
            } else if (sole && s->n_run == 1) {
                /* the rest are still no candidates (with several pools, a
                 * start that fills the shadow's pool makes candidates of
                 * jobs that could only have gone there) */
                settle(s, m, head);
                return 0;
            }
        }
        sole = 0;
    }
    return 0;
}

/* ---- conservative backfill ------------------------------------------------------ */

static int cmp_order(const tnode_t *nd, const double *k2, uint32_t a, uint32_t b)
{
    return less(nd, k2, a, b) ? -1 : less(nd, k2, b, a) ? 1 : 0;
}

/* Sorts scr[0..n) by order key (insertion sort for small n, else merge). */
static int sort_nodes(sched_t *s, size_t n, int (*cmp)(const tnode_t *, const double *, uint32_t, uint32_t))
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
                tmp[k++] = cmp(s->nd, s->k2, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
    return 0;
}

/* The planned run time a backfill pass gives queued node x: its estimate
 * rounded up to the resolution, at least 1 us. */
static fs_time_t plan_d(const sched_t *s, uint32_t x, fs_time_t res)
{
    fs_time_t d = round_up(s->nd[x].est, res);
    return d > 0 ? d : 1;
}

static int cmp_end(const void *a, const void *b)
{
    fs_time_t x = *(const fs_time_t *)a, y = *(const fs_time_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts (end, GPUs) pairs by end, by insertion: O(n + inversions) on the
 * running treap's planned ends once rounded up to the resolution (each
 * moves past only the ends less than one resolution after it).  The
 * profile built from them sums the GPUs of equal ends, so the order among
 * those does not matter. */
static void sort_near(fs_time_t *ends, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        fs_time_t e = ends[2 * i], g = ends[2 * i + 1];
        size_t k = i;
        for (; k > 0 && ends[2 * (k - 1)] > e; k--) {
            ends[2 * k] = ends[2 * (k - 1)];
            ends[2 * k + 1] = ends[2 * (k - 1) + 1];
        }
        ends[2 * k] = e;
        ends[2 * k + 1] = g;
    }
}

/* The node after x in sequence order in the treap at t (a band), 0 none. */
static uint32_t t_next_seq(const tnode_t *nd, uint32_t t, uint32_t x)
{
    uint32_t best = 0;
    while (t) {
        if (nd[t].seq > nd[x].seq) {
            best = t;
            t = nd[t].l;
        } else {
            t = nd[t].r;
        }
    }
    return best;
}

/* The node after x in key order in the treap at t (a loose treap), 0 none. */
static uint32_t t_next_key(const tnode_t *nd, const double *k2, uint32_t t, uint32_t x)
{
    uint32_t best = 0;
    while (t) {
        if (less(nd, k2, x, t)) {
            best = t;
            t = nd[t].l;
        } else {
            t = nd[t].r;
        }
    }
    return best;
}

/* A run's entry in first_queued's heap: its current node's keys
 * (copied: the comparisons stay in the heap's lines) and the run. */
typedef struct qhent {
    double k1, k2;
    uint32_t seq, run;
} qhent_t;

static int qh_less(const qhent_t *a, const qhent_t *b)
{
    if (a->k1 != b->k1)
        return a->k1 < b->k1;
    if (a->k2 != b->k2)
        return a->k2 < b->k2;
    return a->seq < b->seq;
}

/* Restores the heap h[0..n) from position i down. */
static void qheap_down(qhent_t *h, size_t n, size_t i)
{
    qhent_t e = h[i];
    for (;;) {
        size_t l = 2 * i + 1, b = l;
        if (l >= n)
            break;
        if (l + 1 < n && qh_less(&h[l + 1], &h[l]))
            b = l + 1;
        if (!qh_less(&h[b], &e))
            break;
        h[i] = h[b];
        i = b;
    }
    h[i] = e;
}

static qhent_t qh_entry(const sched_t *s, uint32_t x, uint32_t run)
{
    return (qhent_t){s->nd[x].k1, s->k2 ? s->k2[x] : 0, s->nd[x].seq, run};
}

/* A run of first_queued's merge: one treap read in order (a class's, a
 * band's or a loose one) from its first node, by an explicit stack of the
 * nodes still to visit, set up only when the run's first node is taken
 * (most runs give a pass one job or none).  A run whose path is deeper than
 * QSTK nodes finds each next node by a descent from its root instead. */
#define QSTK 48
typedef struct qrun {
    uint32_t root, cur;     /* its treap; the node it offers */
    uint32_t top;           /* stack size; UINT32_MAX: not set up */
    uint8_t seq;            /* in sequence order (a band), else by key */
    uint8_t deep;           /* stack overflowed: descents */
} qrun_t;

/* The node after run r's current one, 0 when it has no more. */
static uint32_t qrun_next(const sched_t *s, qrun_t *r, uint32_t *stk)
{
    const tnode_t *nd = s->nd;
    uint32_t x = r->cur;
    if (!r->deep && r->top == UINT32_MAX) {     /* the path to its first node */
        r->top = 0;
        for (uint32_t t = r->root; t && t != x && !r->deep; t = nd[t].l) {
            if (r->top == QSTK)
                r->deep = 1;
            else
                stk[r->top++] = t;
        }
    }
    if (!r->deep) {
        for (uint32_t t = nd[x].r; t && !r->deep; t = nd[t].l) {
            if (r->top == QSTK)
                r->deep = 1;
            else
                stk[r->top++] = t;
        }
        if (!r->deep)
            return r->top ? stk[--r->top] : 0;
    }
    return r->seq ? t_next_seq(nd, r->root, x) : t_next_key(nd, s->k2, r->root, x);
}

/* The first `want` queued jobs in order into scr[0..) (fast path): every
 * class treap is a run in key order; banded, every band is a run in
 * sequence order, which is its key order as of the last update (fs_order.h;
 * keys are refreshed as nodes are reached), and every loose treap a run in
 * key order.  A heap over the runs' current nodes gives the first `want`:
 * O(runs + want x log runs + the paths set up), where the rebuild at each
 * update was O(queue log queue) and collecting each class's first `want`
 * O(classes x want).  Returns the count or (size_t)-1 when out of memory. */
static size_t first_queued(sched_t *s, fs_model_t *m, size_t want)
{
    size_t runs = 0;
    for (size_t c = 0; c < s->shapes.n; c++)
        runs += s->banded ? s->cls[c].nb + 1 : 1;
    if (scratch(s, want) ||
        fs_grow((void **)&s->tmp32, &s->tmp32_cap, QSTK * runs + 1, sizeof *s->tmp32) ||
        fs_grow((void **)&s->qh, &s->qh_cap, runs + 1, sizeof *s->qh) ||
        fs_grow((void **)&s->qr, &s->qr_cap, runs + 1, sizeof *s->qr))
        return (size_t)-1;
    qhent_t *h = s->qh;
    qrun_t *rs = s->qr;
    size_t n = 0;
    for (size_t c = 0; c < s->shapes.n; c++) {
        const cls_t *cl = &s->cls[c];
        for (uint32_t i = 0; s->banded && i < cl->nb; i++)
            if (cl->b[i].head) {
                refresh(s, m, cl->b[i].head);
                rs[n] = (qrun_t){cl->b[i].root, cl->b[i].head, UINT32_MAX, 1, 0};
                h[n] = qh_entry(s, rs[n].cur, (uint32_t)n);
                n++;
            }
        uint32_t first = s->banded ? cl->lhead : cl->head;
        if (first) {
            rs[n] = (qrun_t){cl->root, first, UINT32_MAX, 0, 0};
            h[n] = qh_entry(s, first, (uint32_t)n);
            n++;
        }
    }
    for (size_t i = n / 2; i-- > 0;)
        qheap_down(h, n, i);
    size_t k = 0;
    while (k < want && n > 0) {
        uint32_t r = h[0].run;
        s->scr[k++] = rs[r].cur;
        if (k == want)
            break;
        uint32_t y = qrun_next(s, &rs[r], s->tmp32 + (size_t)QSTK * r);
        if (y) {
            if (rs[r].seq)
                refresh(s, m, y);
            rs[r].cur = y;
            h[0] = qh_entry(s, y, r);
        } else {
            h[0] = h[--n];
        }
        qheap_down(h, n, 0);
    }
    return k;
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
                if (h && (!head || less(s->nd, s->k2, h, head)))
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
     * end (the running treap is in planned-end order: one linear sweep;
     * Slurm mode's fast path: the kept running ends, rc) */
    size_t n = 0;
    if (s->rcache) {
        if (rc_fold(s))
            return FS_ENOMEM;
        n = s->n_rc;
    } else {
        if (scratch(s, s->running > s->queued ? s->running : s->queued))
            return FS_ENOMEM;
        for (uint32_t p = 0; p < s->n_run; p++)
            t_collect(s, s->run[p], &n);
    }
    if (fs_prof_reset(&s->prof, s->fast, now, (int64_t)free_gpus(m)))
        return FS_ENOMEM;
    /* planned ends rounded (rounded_end); with rounding, ends are sorted
     * again */
    if (fs_grow((void **)&s->ends, &s->ends_cap, 2 * (n + 1), sizeof *s->ends))
        return FS_ENOMEM;
    fs_time_t *ends = s->ends;
    for (size_t i = 0; s->rcache && i < n; i++) {   /* sorted already */
        ends[2 * i] = s->rc[i].e < now ? now : s->rc[i].e;
        ends[2 * i + 1] = (fs_time_t)s->rc[i].g;
    }
    for (size_t i = 0; !s->rcache && i < n; i++) {
        const tnode_t *r = &s->nd[s->scr[i]];
        fs_time_t e = rounded_end(r, res);
        ends[2 * i] = e < now ? now : e;
        ends[2 * i + 1] = (fs_time_t)r->g;
    }
    if (!s->rcache && (s->n_run > 1 || (res > 0 && !s->fast)))  /* several pools; slow path */
        qsort(ends, n, 2 * sizeof *ends, cmp_end);
    else if (!s->rcache && res > 0) /* rounding moves an end by less than res: */
        sort_near(ends, n);         /* nearly sorted */
    if (fs_prof_append_n(&s->prof, ends, n))    /* equal ends summed into one step */
        return FS_ENOMEM;
    /* the queue in order (slurm mode: only the first max_job_test, a merge
     * of the classes' (or bands') runs: first_queued) */
    size_t lim;
    if (s->bf_slurm && s->fast) {
        n = first_queued(s, m, s->cfg->bf.max_job_test);
        if (n == (size_t)-1)
            return FS_ENOMEM;
        lim = n;
    } else if (s->bf_slurm) {       /* slow path: every class's first ones, sorted */
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
            const trsv_t *r = &s->rsv[s->scr[i]];
            if (r->at >= 0 && fs_prof_take(&s->prof, r->at > now ? r->at : now, r->d,
                                           (int64_t)s->nd[s->scr[i]].g))
                return FS_ENOMEM;
        }
    /* Slurm mode forgets its reservations after the pass: they matter only
     * for the starts they prevent in it.  A job starts now only if its g
     * GPUs are free at every step before now + d, and the profile only
     * shrinks as the pass goes on; so once a step before now + (the least
     * d of the jobs left) has fewer GPUs free than the least g of the jobs
     * left, none of them can start and the pass ends (fast path; not when
     * the first reservations are recorded).  sfx[2i], sfx[2i + 1]: the
     * least g and d of jobs i.. */
    int prune = s->bf_slurm && s->fast && !s->record;
    if (prune) {
        if (fs_grow((void **)&s->sfx, &s->sfx_cap, 2 * (lim + 1), sizeof *s->sfx))
            return FS_ENOMEM;
        fs_time_t mg = FS_TIME_NEVER, md = FS_TIME_NEVER;
        for (size_t i = lim; i-- > 0;) {
            uint32_t x = s->scr[i];
            fs_time_t g = (fs_time_t)s->nd[x].g, d = plan_d(s, x, res);
            mg = g < mg ? g : mg;
            md = d < md ? d : md;
            s->sfx[2 * i] = mg;
            s->sfx[2 * i + 1] = md;
        }
    }
    int blocked = 0;
    for (size_t i = 0; i < lim; i++) {
        if (prune && fs_prof_dip(&s->prof, s->sfx[2 * i],
                                 s->sfx[2 * i + 1] >= FS_TIME_NEVER - now
                                     ? FS_TIME_NEVER
                                     : now + s->sfx[2 * i + 1]))
            break;
        uint32_t x = s->scr[i];
        trsv_t *r = s->rsv ? &s->rsv[x] : NULL;     /* exact mode: kept reservations */
        int64_t g = (int64_t)s->nd[x].g;
        if (r && r->at >= 0 && fs_prof_take(&s->prof, r->at > now ? r->at : now, r->d, -g))
            return FS_ENOMEM;
        if (r)
            r->at = -1;
        fs_time_t d = plan_d(s, x, res);
        fs_time_t t = fs_prof_earliest(&s->prof, g, d);
        if (t == FS_TIME_NEVER)
            continue;
        if (t == now && fits(m, x)) {
            int rc = start(s, m, x - 1);
            if (rc < 0)
                return rc;
            if (rc == 1) {
                if (blocked)
                    s->backfilled++;
                if (fs_prof_take(&s->prof, now, d, g))
                    return FS_ENOMEM;
                continue;
            }
        }
        blocked = 1;
        if (s->bf_slurm && t - now > s->cfg->bf.window)
            continue;
        log_resv(s, m, x, t);
        if (r) {
            r->at = t;
            r->d = d;
        }
        if (fs_prof_take(&s->prof, t, d, g))
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
    for (uint32_t p = 0; p < s->n_run; p++)
        t_collect(s, s->run[p], &n);
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
                       : s->rank[s->scr[b]] < s->rank[s->scr[a]];
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
        s->rank[s->scr[ix[r]]] = s->next_rank++;
    if (!rc && s->ord->after_pass)
        rc = s->ord->after_pass(s->ost, m);
    return rc;
}

/* Preemptive passes planned by the order (fast path). */
static int ranked(const sched_t *s) { return s->fast && s->preempt && s->ord->plan; }

/* The preemptive pass planned by the order (fs_order.h plan: no collection
 * from the treaps, no key call, no sort, no walk over all jobs): the same
 * preemptions and starts in the same order as ppass, whose sort and greedy
 * give them when keys are unique.  (The ranks that break ppass's ties are
 * not kept: the fast path is chosen before the first job and stays.) */
static int ppass_plan(sched_t *s, fs_model_t *m)
{
    const uint32_t *pre, *go;
    size_t n_pre, n_go;
    int rc = s->ord->plan(s->ost, m, fs_model_cluster(m)->gpus_up, s->strict, &pre, &n_pre, &go,
                          &n_go);
    for (size_t i = 0; i < n_pre && !rc; i++)
        rc = preempt(s, m, pre[i]);
    for (size_t i = 0; i < n_go && !rc; i++) {
        int st = start(s, m, go[i]);
        if (st < 0)
            rc = st;
    }
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

static void keyf(char *key, size_t keylen, const char *path)
{
    if (key && keylen)
        snprintf(key, keylen, "%s", path);
}

/* The rules of a scheduler block (the policy check hook): a known order,
 * backfill without preemption, the order's own rules. */
static int sched_check_cfg(const fs_sched_cfg_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    const fs_order_ops_t *ord = fs_order_get(cfg->queue);
    if (!ord) {
        keyf(key, keylen, "scheduler.queue");
        return fs_error_set(err, FS_EINVAL, "scheduler.queue: no order with index %d", cfg->queue);
    }
    int pre = cfg->preemption == FS_PREEMPT_ORDER ||
              (cfg->preemption == FS_PREEMPT_AUTO && ord->preemptive);
    if (pre && cfg->backfill != FS_BACKFILL_NONE) {
        keyf(key, keylen, "scheduler.backfill");
        return fs_error_set(err, FS_EINVAL,
                            "scheduler: backfill '%s' cannot be combined with preemption (queue '%s' "
                            "preempts; set scheduler.preemption: none)",
                            cfg->backfill == FS_BACKFILL_EASY ? "easy" : "conservative", ord->name);
    }
    return ord->check ? ord->check(cfg, key, keylen, err) : 0;
}

static int sched_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    return sched_check_cfg(&cfg->scheduler, key, keylen, err);
}

static int sched_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    int rc0 = sched_check_cfg(cfg, NULL, 0, err);
    if (rc0)
        return rc0;
    const fs_order_ops_t *ord = fs_order_get(cfg->queue);
    int pre = cfg->preemption == FS_PREEMPT_ORDER ||
              (cfg->preemption == FS_PREEMPT_AUTO && ord->preemptive);
    sched_t *s = fs_calloc(1, sizeof *s);
    if (!s || fs_shapemap_init(&s->shapes)) {
        fs_free(s);
        return fs_error_set(err, FS_ENOMEM, "scheduler: out of memory");
    }
    s->n_run = fs_model_cluster(m)->n_pools ? fs_model_cluster(m)->n_pools : 1;
    s->run = fs_calloc(s->n_run, sizeof *s->run);
    s->run_g = fs_calloc(s->n_run, sizeof *s->run_g);
    if (!s->run || !s->run_g) {
        sched_destroy(s);
        return fs_error_set(err, FS_ENOMEM, "scheduler: out of memory");
    }
    s->cfg = cfg;
    s->ord = ord;
    s->strict = cfg->mode == FS_FIFO_STRICT;
    s->backfill = cfg->backfill;
    s->preempt = pre;
    s->bf_slurm = cfg->backfill == FS_BACKFILL_CONSERVATIVE && cfg->bf.mode == FS_BF_SLURM;
    /* bands: where the class heads are all a pass reads (no backfill, no
     * preemption), or Slurm's bounded backfill (its first jobs merged from
     * the bands: first_queued) */
    s->banded = ord->band && ord->update_key && !pre &&
                (cfg->backfill == FS_BACKFILL_NONE || s->bf_slurm);
    s->has_bands = s->banded;
    s->fast = 1;
    s->rcache = s->bf_slurm;
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
    fs_free(s->nd_mem);
    fs_free(s->k2);
    fs_free(s->nb);
    fs_free(s->rank);
    fs_free(s->rsv);
    fs_free(s->logged);
    fs_free(s->run);
    fs_free(s->run_g);
    for (size_t c = 0; s->cls && c < s->shapes.n; c++) {
        fs_free(s->cls[c].b);
        fs_free(s->cls[c].tw);
    }
    fs_free(s->cls);
    fs_shapemap_release(&s->shapes);
    fs_free(s->log);
    fs_free(s->scr);
    fs_free(s->want);
    fs_prof_release(&s->prof);
    fs_free(s->tmp32);
    fs_free(s->qh);
    fs_free(s->qr);
    fs_free(s->sfx);
    fs_free(s->rep);
    fs_free(s->rc);
    fs_free(s->rc2);
    fs_free(s->radd);
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
    uint32_t x = slot + 1;
    if (s->logged && x < s->logged_cap)
        s->logged[x] = 0;
    if (s->rsv)
        s->rsv[x].at = -1;
    if (s->rank)
        s->rank[x] = s->next_rank++;
    /* admitted once: a job requeued after a failure (restarts > 0) keeps
     * the order's state (attained service, priority) */
    if (s->ord->admit && fs_jobrt_restarts(fs_model_job(m, slot)) == 0) {
        int rc = s->ord->admit(s->ost, m, slot);
        if (rc)
            return rc;
    } else if (s->ord->requeued && fs_jobrt_restarts(fs_model_job(m, slot)) > 0) {
        s->ord->requeued(s->ost, m, slot);
    }
    int rc = q_insert(s, m, slot);
    int what = !rc && (s->settled || s->st_keep) ? settle_keeps(s, m, x) : ST_KEEPS;
    if (what != ST_KEEPS) {
        /* x may start.  EASY, x behind the blocked head: the head and its
         * shadow stay, and while x is the only such arrival, x is the only
         * job that may start (npass) */
        int first = s->settled;
        s->settled = 0;
        if (s->backfill != FS_BACKFILL_EASY || what == ST_AHEAD) {
            s->st_keep = 0;
        } else if (first) {
            s->st_keep = 1;
            s->st_new = x;
            s->st_nnew = 1;
        } else {
            s->st_nnew++;
        }
    }
    return rc;
}

static int sched_pass(void *state, fs_model_t *m)
{
    sched_t *s = state;
    int rc = 0;
    if (s->ord->update && s->ord->update(s->ost, m)) {
        s->settled = 0;
        /* the order's list serves preemptive passes: the class treaps'
         * order is read by no one (their stored keys stay consistent) */
        if (!ranked(s))
            rc = rekey(s, m);
    }
    if (!rc) {
        if (ranked(s))
            rc = ppass_plan(s, m);
        else if (s->preempt)
            rc = ppass(s, m);
        else if (s->backfill == FS_BACKFILL_CONSERVATIVE)
            rc = cons_pass(s, m);
        else if (!settled(s, m))
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

/* A failure stopped the job (not finished: as a preemption for the order). */
static void sched_job_interrupted(void *state, fs_model_t *m, uint32_t slot)
{
    sched_t *s = state;
    r_remove(s, slot);
    if (s->ord->stopped)
        s->ord->stopped(s->ost, m, slot, 0);
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
        if (s->queued == 0 && s->ord->update && s->ord->update(s->ost, m) && !ranked(s)) {
            int rc = rekey(s, m);
            if (rc)
                return rc;
        }
    }
    return s->queued == 0 ? set_timers(s, m) : 0;
}

/* A queued job leaves (a retired replica): out of its class, and every
 * cached conclusion of the last pass (settled head, EASY shadow, class
 * candidates) is dropped: the next pass looks at the queue afresh. */
static int sched_withdraw(void *state, fs_model_t *m, uint32_t slot)
{
    sched_t *s = state;
    uint32_t x = slot + 1;
    if (x >= s->nd_cap || fs_model_job(m, slot)->state != FS_JOBRT_QUEUED ||
        s->nd[x].cp >= s->shapes.n)
        return FS_EINVAL;
    s->cls[s->nd[x].cp].cand_at = 0;
    q_remove(s, m, slot);
    s->settled = 0;
    s->st_keep = 0;
    if (s->ord->withdrawn)
        s->ord->withdrawn(s->ost, m, slot);
    return 0;
}

static void sched_stats(const void *state, fs_policy_stats_t *out)
{
    out->backfilled = ((const sched_t *)state)->backfilled;
}

const fs_policy_ops_t fs_policy_sched = {
    .name = "sched",
    .check = sched_check,
    .create = sched_create,
    .destroy = sched_destroy,
    .enqueue = sched_enqueue,
    .pass = sched_pass,
    .queued = sched_queued,
    .job_end = sched_job_end,
    .timer = sched_timer,
    .job_interrupted = sched_job_interrupted,
    .stats = sched_stats,
    .withdraw = sched_withdraw,
};

/* ---- instrumentation ------------------------------------------------------------------ */

void fs_sched_record(void *state, int on) { ((sched_t *)state)->record = on; }

void fs_sched_set_fast(void *state, int on)
{
    sched_t *s = state;
    s->fast = on != 0;
    if (!on)
        s->banded = s->rcache = 0;
    if (s->ord->set_fast)
        s->ord->set_fast(s->ost, on);
}

const fs_sched_resv_t *fs_sched_reservations(const void *state, size_t *n)
{
    const sched_t *s = state;
    *n = s->n_log;
    return s->log;
}

uint64_t fs_sched_preemptions(const void *state) { return ((const sched_t *)state)->preemptions; }
uint64_t fs_sched_backfilled(const void *state) { return ((const sched_t *)state)->backfilled; }
uint64_t fs_sched_loose(const void *state) { return ((const sched_t *)state)->n_loose; }

size_t fs_sched_slot_bytes(const void *state)
{
    const sched_t *s = state;
    return sizeof *s->nd + (s->ord->k2 ? sizeof *s->k2 : 0) + (s->has_bands ? sizeof *s->nb : 0) +
           (s->preempt ? sizeof *s->rank : 0) +
           (s->backfill == FS_BACKFILL_CONSERVATIVE && !s->bf_slurm ? sizeof *s->rsv : 0) +
           (s->bf_slurm ? sizeof *s->rep : 0);
}
