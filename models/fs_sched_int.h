/*
 * fs_sched_int.h: the composable scheduler's private state, shared by its
 * files in models/ only (nothing outside models/ includes it).  The public
 * face is fs_sched.h (structure and costs) and fs_policy_sched.
 *
 *   fs_sched.c          the policy (create, enqueue, pass driver, timers),
 *                       the queue of shape classes and the running set  fs_sched_
 *   fs_sched_tree.c     the treaps every queue and running set is made of  fs_stree_
 *   fs_sched_band.c     banded orders: one treap per band, a tournament  fs_sband_
 *   fs_sched_easy.c     the non-preemptive pass: strict, best effort, EASY
 *                       backfill, and the settled-queue skip  fs_seasy_
 *   fs_sched_cons.c     conservative backfill (exact and Slurm-mode)  fs_scons_
 *   fs_sched_slurm.c    Slurm mode's main scheduler, bounded queue merge,
 *                       running-ends cache and pruning  fs_sslurm_
 *   fs_sched_preempt.c  preemptive passes (sorted, or planned by the order)  fs_spre_
 *
 * Every function takes the scheduler state (sched_t *) first.
 */
#ifndef FS_SCHED_INT_H
#define FS_SCHED_INT_H

#include "fs_sched.h"
#include "fs_shape.h"
#include "fs_order.h"
#include "fs_policy.h"
#include "fs_profile.h"
#include "fs_capacity.h"
#include "../sim/fs_alloc.h"

#define FS_SCHED_NO_POOL UINT32_MAX

/* A treap node; node x is slot x - 1 (0 = nil).  A slot is in at most one
 * treap: its class's (queued) or the running one, so one field names the
 * class (queued) or the pool (running).  The whole of a job's scheduler
 * state in every mode (issue #13: bytes per queued job): the second key
 * k2 is in a side array, only for orders that use it (fs_order_ops_t.k2). */
typedef struct tnode {
    uint32_t l, r;
    uint32_t g;             /* GPUs */
    uint32_t seq;           /* admission sequence (fs_jobrt_t.seq): the tie-break; the
                               heap priority is a hash of it (fs_stree_pri) */
    uint32_t cp;            /* queued: its class; running: the pool it runs in
                               (its running treap) */
    uint32_t aug_g;         /* subtree sum of g, modulo 2^32: read only in running
                               treaps, whose sums r_insert keeps below 2^32 (run_g) */
    double k1;              /* queued: order key; running: planned end */
    fs_time_t est;          /* planned run time (queued) */
    fs_time_t aug_est;      /* subtree minimum of est: kept in class queues only (a
                               running treap's is not read, fs_stree_insert_run) */
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
    uint32_t st_pool;       /* EASY: the pool the head's shadow is in (FS_SCHED_NO_POOL: none) */
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
    struct qhent *qh;       /* scratch: fs_sslurm_first_queued's heap */
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
    fs_capplan_t cap;       /* the outages known ahead (cluster.outages, fs_capacity.h) that
                               EASY and conservative backfill plan around (fs_scons_outages) */
    int cap_state;          /* 0 not read yet, 1 read, 2 none */
    char why[160];          /* what went wrong in this callback, "" nothing
                               (job_why in fs_sched.c; the run's error says it) */
} sched_t;

/* ---- treap (fs_sched_tree.c) ---------------------------------------------------- */

/* By (k1, k2, seq); k2 NULL: every k2 is 0. */
static inline int fs_stree_less(const tnode_t *nd, const double *k2, uint32_t a, uint32_t b)
{
    if (nd[a].k1 != nd[b].k1)
        return nd[a].k1 < nd[b].k1;
    if (k2 && k2[a] != k2[b])
        return k2[a] < k2[b];
    return nd[a].seq < nd[b].seq;
}

/* The heap priority of node n: a hash of its sequence (Fibonacci hashing,
 * as fs_order_las.c's treap; stored in the node before issue #13). */
static inline uint32_t fs_stree_pri(const tnode_t *n)
{
    return (uint32_t)((n->seq * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

/* The first node in order of the treap at t (0: empty). */
static inline uint32_t fs_stree_first(const tnode_t *nd, uint32_t t)
{
    if (t)
        while (nd[t].l)
            t = nd[t].l;
    return t;
}

/* Insertion and erasure in the treap at root (byseq: ordered by sequence,
 * a band; else by key); both return the new root. */
uint32_t fs_stree_insert(tnode_t *nd, const double *k2, uint32_t root, uint32_t x, int byseq);
uint32_t fs_stree_erase(tnode_t *nd, const double *k2, uint32_t root, uint32_t x, int byseq);
/* The same for a running treap (ordered by key): only aug_g is kept there. */
uint32_t fs_stree_insert_run(tnode_t *nd, const double *k2, uint32_t root, uint32_t x);
uint32_t fs_stree_erase_run(tnode_t *nd, const double *k2, uint32_t root, uint32_t x);
uint32_t fs_stree_first_est_le(const tnode_t *nd, uint32_t t, fs_time_t lim);
/* A position in the queue's order (k1, k2, seq): a cursor that outlives
 * its node's keys (a started job's k1 becomes its planned end). */
typedef struct tkey {
    double k1, k2;
    uint32_t seq;
} tkey_t;
/* The first node of treap t after key a in order (a NULL: the first) whose
 * est is at most lim; 0 if none. */
uint32_t fs_stree_next_est_le(const tnode_t *nd, const double *k2, uint32_t t, const tkey_t *a,
                              fs_time_t lim);
uint32_t fs_stree_prefix_reach(const tnode_t *nd, uint32_t t, uint64_t need);
uint64_t fs_stree_sum_le(const tnode_t *nd, uint32_t t, double lim);
uint32_t fs_stree_first_gt(const tnode_t *nd, uint32_t t, double lim);
uint32_t fs_stree_next_seq(const tnode_t *nd, uint32_t t, uint32_t x);
uint32_t fs_stree_next_key(const tnode_t *nd, const double *k2, uint32_t t, uint32_t x);
/* The sums of every node of t again, bottom-up (a treap built by links). */
void fs_stree_pull_all(tnode_t *nd, uint32_t t);

/* ---- bands (fs_sched_band.c) ------------------------------------------------------ */

/* Node x's keys as of the current key epoch (taken again if older). */
static inline void fs_sband_refresh(sched_t *s, fs_model_t *m, uint32_t x)
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

/* The class head: the better of the loose head and the tournament's. */
static inline void fs_sband_head(const sched_t *s, cls_t *c)
{
    uint32_t w = c->pw && c->tw[1] ? c->b[c->tw[1] - 1].head : 0, l = c->lhead;
    c->head = !w ? l : !l ? w : fs_stree_less(s->nd, s->k2, l, w) ? l : w;
}

int fs_sband_room(sched_t *s, cls_t *c, uint32_t i);
void fs_sband_insert(sched_t *s, fs_model_t *m, cls_t *c, uint32_t x);
void fs_sband_remove(sched_t *s, fs_model_t *m, cls_t *c, uint32_t x);
int fs_sband_rekey(sched_t *s, fs_model_t *m);

/* ---- queue and running set (fs_sched.c) ------------------------------------------ */

/* Starts a queued job.  1 started, 0 does not fit, < 0 error. */
int fs_sched_start(sched_t *s, fs_model_t *m, uint32_t slot);
/* Preempts a running job and queues it again.  0 or an error. */
int fs_sched_preempt(sched_t *s, fs_model_t *m, uint32_t slot);
/* Room for n nodes in the scratch lists scr and want.  0 or FS_ENOMEM. */
int fs_sched_scratch(sched_t *s, size_t n);
/* Appends the nodes of treap t in order to s->scr[*n...] (all, or until
 * *n == lim). */
void fs_sched_collect(sched_t *s, uint32_t t, size_t *n);
void fs_sched_collect_lim(sched_t *s, uint32_t t, size_t *n, size_t lim);
/* All queued nodes, in no particular order, into scr; returns the count. */
size_t fs_sched_collect_queued(sched_t *s);
/* Logs node x's first reservation, at (record only). */
void fs_sched_log_resv(sched_t *s, fs_model_t *m, uint32_t x, fs_time_t at);

static inline int fs_sched_fits(fs_model_t *m, uint32_t x) { return fs_model_fits(m, x - 1); }

/* Does x's shape fit now?  A pass only takes GPUs, so a shape that does not
 * fit stays so until the pass ends; and it stays so while the cluster's
 * generation is the same: remembered per class (fast path). */
static inline int fs_sched_cls_fits(sched_t *s, fs_model_t *m, uint32_t x, size_t ci)
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

static inline uint64_t fs_sched_free_gpus(const fs_model_t *m)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    return c->gpus_up > c->gpus_busy ? c->gpus_up - c->gpus_busy : 0;
}

/* t rounded up to a multiple of res (res <= 0, or no room: t). */
static inline fs_time_t fs_sched_round_up(fs_time_t t, fs_time_t res)
{
    if (res <= 0 || t >= FS_TIME_NEVER - res)
        return t;
    return (t + res - 1) / res * res;
}

/* A running node's planned end with its planned run time rounded up to res
 * (the same rounding as for queued jobs, so that plans made at different
 * passes agree). */
static inline fs_time_t fs_sched_rounded_end(const tnode_t *r, fs_time_t res)
{
    fs_time_t e = (fs_time_t)r->k1;
    return res > 0 ? e - r->est + fs_sched_round_up(r->est, res) : e;
}

/* The planned run time a backfill pass gives queued node x: its estimate
 * rounded up to the resolution, at least 1 us. */
static inline fs_time_t fs_sched_plan_d(const sched_t *s, uint32_t x, fs_time_t res)
{
    fs_time_t d = fs_sched_round_up(s->nd[x].est, res);
    return d > 0 ? d : 1;
}

/* Preemptive passes planned by the order (fast path). */
static inline int fs_sched_ranked(const sched_t *s) { return s->fast && s->preempt && s->ord->plan; }

/* ---- the passes ---------------------------------------------------------------------- */

/* Non-preemptive pass (fs_sched_easy.c): strict, best effort, EASY. */
int fs_seasy_pass(sched_t *s, fs_model_t *m);
/* May this pass be skipped (settled queues)? */
int fs_seasy_settled(sched_t *s, fs_model_t *m);
/* What the arrival of node x does to the settled state. */
enum { FS_SEASY_KEEPS, FS_SEASY_CANDIDATE, FS_SEASY_AHEAD };
int fs_seasy_arrival(sched_t *s, fs_model_t *m, uint32_t x);

/* Conservative backfill pass, exact or Slurm mode (fs_sched_cons.c). */
int fs_scons_pass(sched_t *s, fs_model_t *m);
/* Known outages (fs_sched_cons.c): is an outage of cluster.outages not yet
 * over, so that the backfill pass plans around it (read at the first call;
 * without outages, one test a pass)?  1 yes, 0 no, < 0 error. */
int fs_scons_outages(sched_t *s, fs_model_t *m);
/* EASY backfill while outages are ahead (fs_sched_cons.c): the
 * conservative pass's profile with the outages in it, the queue in order,
 * and one reservation, the first blocked job's. */
int fs_scons_easy_pass(sched_t *s, fs_model_t *m);
/* Starts queued node x at now for planned run time d (fs_sched_cons.c);
 * with outages ahead (out), on nodes whose next outage begins at now + d or
 * later: the others are held out while it is placed (fs_capplan_hold).  1
 * started, 0 not, < 0 error. */
int fs_scons_start_planned(sched_t *s, fs_model_t *m, uint32_t x, fs_time_t now, fs_time_t d,
                           int out);

/* Slurm mode (fs_sched_slurm.c).  The main scheduler: starts jobs in order
 * until the first that cannot start.  1 if the backfill pass is due, 0 if
 * not, < 0 error. */
int fs_sslurm_main(sched_t *s, fs_model_t *m);
/* Running-ends cache: merges the starts since the last fold; node x starts. */
int fs_sslurm_fold(sched_t *s);
int fs_sslurm_add(sched_t *s, uint32_t x);
/* The first `want` queued jobs in order into scr[0..); the count or
 * (size_t)-1 when out of memory. */
size_t fs_sslurm_first_queued(sched_t *s, fs_model_t *m, size_t want);
/* Whether the pass may end early on the profile's dips (the suffix minima
 * sfx of the first lim jobs in scr set up): 1 yes, 0 no, < 0 error. */
int fs_sslurm_prune_prep(sched_t *s, size_t lim, fs_time_t res);

/* Preemptive passes (fs_sched_preempt.c): sorted, or planned by the order. */
int fs_spre_pass(sched_t *s, fs_model_t *m);
int fs_spre_plan(sched_t *s, fs_model_t *m);

#endif
