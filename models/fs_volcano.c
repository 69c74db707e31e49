/*
 * Volcano (volcano-sh/volcano, pkg/scheduler): queues with weights,
 * capability and guarantee; the proportion plugin's deserved shares; gang
 * all-or-nothing starts; priority and drf job order; the allocate, reclaim
 * and preempt actions.  Semantics and sources: docs/policies.md "Volcano"
 * and DOMAIN.md 3.2.  Data structures: fs_volcano.h.
 *
 * Units: GPU amounts are kept in integer milli-GPUs (a job holds gpus x
 * gpu_milli), so sums never drift; deserved shares are doubles in GPUs as
 * the plugin computes them.
 */
#include "fs_volcano.h"
#include "fs_policy.h"
#include "../sim/fs_alloc.h"
#include "fs_shape.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define EPS 1e-9            /* GPUs: tolerance of share comparisons */
#define NO_QUEUE UINT32_MAX

typedef struct vc_class {   /* waiting jobs of one (tenant, shape) */
    uint32_t queue;
    uint32_t tenant;        /* tenant row: job tenant + 1 */
    uint32_t gpus, milli;
    int32_t pools;
    uint32_t *heap;         /* slots by (priority desc, admission asc) */
    size_t n, cap;
    uint64_t failed;        /* number of the action round it last failed in */
} vc_class_t;

typedef struct vc_tenant {
    uint32_t queue;         /* NO_QUEUE until its first job */
    uint64_t alloc;         /* milli-GPUs held (drf) */
    fs_shapemap_t shapes;   /* shape -> local index */
    uint32_t *cls;          /* local index -> class */
    size_t cap_cls;
} vc_tenant_t;

typedef struct vc_queue {
    const char *name;       /* the config's, or "default" */
    const char *tenants;    /* comma-separated, or NULL */
    double weight, cap, guarantee;  /* GPUs; cap 0 = none */
    int reclaimable;
    uint64_t alloc, request, peak;  /* milli-GPUs */
    double deserved;        /* GPUs */
    uint32_t *cls;          /* its classes */
    size_t n_cls, cap_cls;
    uint32_t *run;          /* running slots; vc_t.run_at[slot] is a job's index here */
    size_t n_run, cap_run;
    size_t queued;
} vc_queue_t;

/* A candidate victim with its sort key (copied: qsort takes no context). */
typedef struct vc_victim {
    double share;           /* its queue's share */
    int32_t priority;
    fs_time_t start;
    uint64_t seq;
    uint32_t slot;
} vc_victim_t;

typedef struct vc {
    int reclaim, preempt, drf;
    fs_time_t period;
    vc_queue_t *q;
    size_t nq;
    uint32_t def_q;
    vc_tenant_t *t;         /* by tenant row */
    size_t nt, cap_t;
    vc_class_t *c;
    size_t nc, cap_c;
    size_t queued;
    uint32_t *run_at;       /* per slot: a running job's index in its queue's run list */
    size_t cap_run_at;
    uint64_t round;         /* action rounds (class failure marks) */
    int dirty;              /* demand changed since the shares were computed */
    uint64_t total_seen;    /* cluster GPUs up at that time */
    fs_time_t timer_at;     /* pending session timer, -1 none */
    uint32_t *qheap;        /* queues by share, per action */
    size_t nqh;
    fs_volcano_share_in_t *in;
    double *out;
    fs_volcano_sortkey_t *scratch;
    vc_victim_t *victims;
    size_t cap_v;
    uint32_t *node_ev;      /* per node: GPUs the candidate victims hold there (0 between uses) */
    uint8_t *node_mark;     /* per node: a target of the current eviction */
    uint32_t *touched;      /* nodes with node_ev > 0 */
    size_t n_touched;
    uint64_t reclaimed, preempted;
} vc_t;

/* ---- the proportion plugin ------------------------------------------------ */

static double real_cap(const fs_volcano_share_in_t *q, size_t n, size_t i, double total)
{
    double tg = 0;
    for (size_t k = 0; k < n; k++)
        tg += q[k].guarantee;
    double rc = total - tg + q[i].guarantee;
    return q[i].capability > 0 && q[i].capability < rc ? q[i].capability : rc;
}

void fs_volcano_deserved_ref(const fs_volcano_share_in_t *q, size_t n, double total, double *out,
                             fs_volcano_sortkey_t *scratch)
{
    double remaining = total;
    for (size_t i = 0; i < n; i++) {
        out[i] = 0;
        scratch[i].i = q[i].request <= 0;   /* met; only queues with jobs take part */
    }
#define met(i) scratch[i].i
    for (;;) {
        double w = 0;
        for (size_t i = 0; i < n; i++)
            if (!met(i))
                w += q[i].weight;
        if (w == 0)
            break;
        double old_rem = remaining, inc = 0, dec = 0;
        for (size_t i = 0; i < n; i++) {
            if (met(i))
                continue;
            double old = out[i];
            double d = old + remaining * q[i].weight / w;
            double rc = real_cap(q, n, i, total);
            if (d > rc)
                d = rc;
            if (d > q[i].request)
                d = q[i].request;
            if (q[i].request <= d || d == old)
                met(i) = 1;
            if (d < q[i].guarantee)
                d = q[i].guarantee;
            out[i] = d;
            if (d > old)
                inc += d - old;
            else
                dec += old - d;
        }
        remaining = remaining - inc + dec;
        if (remaining <= EPS * (total > 1 ? total : 1) || remaining == old_rem)
            break;
    }
#undef met
}

static int by_level(const void *a, const void *b)
{
    const fs_volcano_sortkey_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/*
 * Why this equals the plugin's loop: each round gives every unmet queue
 * remaining x w / W and clamps it to its limit (min of request and real
 * capability); a clamped queue drops out and its excess is shared again.
 * The fixed point is weighted max-min fairness: deserved = min(limit,
 * w x lambda) with lambda such that the shares sum to the total (or every
 * queue is at its limit).  Sorting by limit / w finds lambda in one sweep.
 */
int fs_volcano_deserved(const fs_volcano_share_in_t *q, size_t n, double total, double *out,
                        fs_volcano_sortkey_t *scratch)
{
    for (size_t i = 0; i < n; i++)
        if (q[i].guarantee > 0) {
            fs_volcano_deserved_ref(q, n, total, out, scratch);
            return 0;
        }
    /* out holds the limits while sorting */
    size_t m = 0;
    double w = 0;
    for (size_t i = 0; i < n; i++) {
        double rc = real_cap(q, n, i, total);
        out[i] = q[i].request < rc ? q[i].request : rc;
        if (q[i].request > 0) {
            scratch[m++] = (fs_volcano_sortkey_t){out[i] / q[i].weight, i};
            w += q[i].weight;
        } else {
            out[i] = 0;
        }
    }
    qsort(scratch, m, sizeof *scratch, by_level);
    double remaining = total;
    size_t k = 0;
    for (; k < m; k++) {
        size_t i = scratch[k].i;
        if (out[i] > remaining * q[i].weight / w)
            break;              /* this and every later queue are above the level */
        remaining -= out[i];
        w -= q[i].weight;
    }
    double level = w > 0 ? remaining / w : 0;
    for (; k < m; k++)
        out[scratch[k].i] = level * q[scratch[k].i].weight;
    return 0;
}

/* ---- small helpers ------------------------------------------------------------ */

static uint64_t job_milli(const fs_jobrt_t *j)
{
    return (uint64_t)j->job.gpus * j->job.gpu_milli;
}

static double gpus_of(uint64_t milli)
{
    return (double)milli / 1000.0;
}

/* Whole GPUs free on up nodes, all pools. */
static uint64_t free_gpus(const fs_model_t *m)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    uint64_t f = 0;
    for (uint32_t p = 0; p < c->n_pools; p++)
        f += c->pools[p].gpus_free;
    return f;
}

/* Does job a go before job b within a class (priority desc, admission)? */
static int job_before(const fs_jobrt_t *a, const fs_jobrt_t *b)
{
    if (a->job.priority != b->job.priority)
        return a->job.priority > b->job.priority;
    return a->seq < b->seq;
}

static int heap_push(fs_model_t *m, vc_class_t *c, uint32_t slot)
{
    if (fs_grow((void **)&c->heap, &c->cap, c->n + 1, sizeof *c->heap))
        return FS_ENOMEM;
    size_t i = c->n++;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!job_before(j, fs_model_job(m, c->heap[p])))
            break;
        c->heap[i] = c->heap[p];
        i = p;
    }
    c->heap[i] = slot;
    return 0;
}

/* Removes the entry at i: the last entry fills the hole and moves up or
 * down to its place. */
static void heap_remove_at(fs_model_t *m, vc_class_t *c, size_t i)
{
    uint32_t last = c->heap[--c->n];
    if (i >= c->n)
        return;
    const fs_jobrt_t *j = fs_model_job(m, last);
    size_t at = i;
    while (at > 0 && job_before(j, fs_model_job(m, c->heap[(at - 1) / 2]))) {
        c->heap[at] = c->heap[(at - 1) / 2];
        at = (at - 1) / 2;
    }
    while (at >= i) {           /* not moved up (at < i): down */
        size_t l = 2 * at + 1, b = l;
        if (l >= c->n)
            break;
        if (l + 1 < c->n && job_before(fs_model_job(m, c->heap[l + 1]), fs_model_job(m, c->heap[l])))
            b = l + 1;
        if (!job_before(fs_model_job(m, c->heap[b]), j))
            break;
        c->heap[at] = c->heap[b];
        at = b;
    }
    c->heap[at] = last;
}

static void heap_pop(fs_model_t *m, vc_class_t *c) { heap_remove_at(m, c, 0); }

/* ---- tenants and classes ------------------------------------------------------- */

/* Is name one of the comma-separated items of list? */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > p && t[-1] == ' ')
            t--;
        if ((size_t)(t - p) == n && n > 0 && memcmp(p, name, n) == 0)
            return 1;
        p = e;
    }
    return 0;
}

static uint32_t queue_for(const vc_t *v, const char *tenant)
{
    if (!tenant)
        return v->def_q;
    for (size_t i = 0; i < v->nq; i++)
        if (v->q[i].tenants && listed(v->q[i].tenants, tenant))
            return (uint32_t)i;
    for (size_t i = 0; i < v->nq; i++)
        if (strcmp(v->q[i].name, tenant) == 0)
            return (uint32_t)i;
    return v->def_q;
}

/* The tenant row of a job, created (and mapped to its queue) on first use. */
static vc_tenant_t *tenant_of(vc_t *v, fs_model_t *m, int32_t tenant)
{
    size_t row = (size_t)(tenant + 1);
    if (row >= v->nt) {
        if (fs_grow((void **)&v->t, &v->cap_t, row + 1, sizeof *v->t))
            return NULL;
        for (size_t i = v->nt; i <= row; i++) {
            memset(&v->t[i], 0, sizeof v->t[i]);
            v->t[i].queue = NO_QUEUE;
            if (fs_shapemap_init(&v->t[i].shapes)) {
                v->nt = i;
                return NULL;
            }
        }
        v->nt = row + 1;
    }
    vc_tenant_t *t = &v->t[row];
    if (t->queue == NO_QUEUE)
        t->queue = queue_for(v, fs_model_tenant_name(m, tenant));
    return t;
}

/* The class of a job, created on first use.  Returns its index or -1. */
static long class_of(vc_t *v, fs_model_t *m, const fs_jobrt_t *j)
{
    vc_tenant_t *t = tenant_of(v, m, j->job.tenant);
    if (!t)
        return -1;
    vc_queue_t *q = &v->q[t->queue];
    /* room for a new class first, so that the map never gets ahead */
    if (fs_grow((void **)&t->cls, &t->cap_cls, t->shapes.n + 1, sizeof *t->cls) ||
        fs_grow((void **)&v->c, &v->cap_c, v->nc + 1, sizeof *v->c) ||
        fs_grow((void **)&q->cls, &q->cap_cls, q->n_cls + 1, sizeof *q->cls))
        return -1;
    int added;
    long local = fs_shapemap_get(&t->shapes, j->job.gpus, j->job.gpu_milli, fs_jobq_pod_res(&j->job),
                                j->type_pools, &added);
    if (local < 0)
        return -1;
    if (!added)
        return t->cls[local];
    vc_class_t *c = &v->c[v->nc];
    memset(c, 0, sizeof *c);
    c->queue = t->queue;
    c->tenant = (uint32_t)(j->job.tenant + 1);
    c->gpus = j->job.gpus;
    c->milli = j->job.gpu_milli;
    c->pools = j->type_pools;
    t->cls[local] = (uint32_t)v->nc;
    q->cls[q->n_cls++] = (uint32_t)v->nc;
    return (long)v->nc++;
}

/* ---- running jobs ---------------------------------------------------------------- */

static vc_queue_t *queue_of_job(vc_t *v, const fs_jobrt_t *j)
{
    return &v->q[v->t[j->job.tenant + 1].queue];
}

static int run_add(vc_t *v, fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = fs_model_job(m, slot);
    vc_queue_t *q = queue_of_job(v, j);
    if (fs_grow((void **)&q->run, &q->cap_run, q->n_run + 1, sizeof *q->run) ||
        fs_grow((void **)&v->run_at, &v->cap_run_at, (size_t)slot + 1, sizeof *v->run_at))
        return FS_ENOMEM;
    v->run_at[slot] = (uint32_t)q->n_run;
    q->run[q->n_run++] = slot;
    q->alloc += job_milli(j);
    if (q->alloc > q->peak)
        q->peak = q->alloc;
    v->t[j->job.tenant + 1].alloc += job_milli(j);
    return 0;
}

static void run_remove(vc_t *v, fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = fs_model_job(m, slot);
    vc_queue_t *q = queue_of_job(v, j);
    uint32_t at = v->run_at[slot];
    uint32_t last = q->run[--q->n_run];
    q->run[at] = last;
    v->run_at[last] = at;
    q->alloc -= job_milli(j);
    v->t[j->job.tenant + 1].alloc -= job_milli(j);
}

/* Back to its class (a new job, or a victim). */
static int wait_add(vc_t *v, fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = fs_model_job(m, slot);
    long c = class_of(v, m, j);
    if (c < 0 || heap_push(m, &v->c[c], slot))
        return FS_ENOMEM;
    v->q[v->c[c].queue].queued++;
    v->queued++;
    return 0;
}

/* ---- queue order -------------------------------------------------------------------- */

static double share(const vc_queue_t *q)
{
    double a = gpus_of(q->alloc);
    if (q->deserved > 0)
        return a / q->deserved;
    return a > 0 ? 1 : 0;
}

static int q_before(const vc_t *v, uint32_t a, uint32_t b)
{
    double x = share(&v->q[a]), y = share(&v->q[b]);
    return x != y ? x < y : a < b;
}

static void qh_push(vc_t *v, uint32_t qi)
{
    size_t i = v->nqh++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!q_before(v, qi, v->qheap[p]))
            break;
        v->qheap[i] = v->qheap[p];
        i = p;
    }
    v->qheap[i] = qi;
}

static uint32_t qh_pop(vc_t *v)
{
    uint32_t top = v->qheap[0], last = v->qheap[--v->nqh];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, b = l;
        if (l >= v->nqh)
            break;
        if (l + 1 < v->nqh && q_before(v, v->qheap[l + 1], v->qheap[l]))
            b = l + 1;
        if (!q_before(v, v->qheap[b], last))
            break;
        v->qheap[i] = v->qheap[b];
        i = b;
    }
    if (v->nqh)
        v->qheap[i] = last;
    return top;
}

/* proportion's overused: deserved <= allocated */
static int overused(const vc_queue_t *q)
{
    return q->deserved <= gpus_of(q->alloc) + EPS;
}

/* proportion's allocatable: the job fits in deserved - allocated */
static int allocatable(const vc_queue_t *q, uint64_t milli)
{
    return gpus_of(q->alloc + milli) <= q->deserved + EPS;
}

/* ---- job order within a queue ------------------------------------------------------- */

/* Does class a's head go before class b's (priority, drf, admission)? */
static int class_before(const vc_t *v, fs_model_t *m, const vc_class_t *a, const vc_class_t *b)
{
    const fs_jobrt_t *x = fs_model_job(m, a->heap[0]), *y = fs_model_job(m, b->heap[0]);
    if (x->job.priority != y->job.priority)
        return x->job.priority > y->job.priority;
    if (v->drf && a->tenant != b->tenant) {
        uint64_t sa = v->t[a->tenant].alloc, sb = v->t[b->tenant].alloc;
        if (sa != sb)
            return sa < sb;
    }
    return x->seq < y->seq;
}

/* The first class of q in job order that is not known to fail in this
 * round.  check_room: classes whose head is not allocatable, or cannot fit
 * in the free GPUs of the cluster, are marked failed.  -1: none. */
static long pick(vc_t *v, fs_model_t *m, vc_queue_t *q, int check_room)
{
    uint64_t nfree = free_gpus(m);
    long best = -1;
    for (size_t k = 0; k < q->n_cls; k++) {
        vc_class_t *c = &v->c[q->cls[k]];
        if (c->n == 0 || c->failed == v->round)
            continue;
        if (!allocatable(q, (uint64_t)c->gpus * c->milli) ||
            (check_room && c->milli == 1000 && c->gpus > nfree)) {
            c->failed = v->round;
            continue;
        }
        if (best < 0 || class_before(v, m, c, &v->c[best]))
            best = (long)q->cls[k];
    }
    return best;
}

/* Starts the head of class ci.  1 started, 0 did not fit, or an error. */
static int start_head(vc_t *v, fs_model_t *m, long ci)
{
    vc_class_t *c = &v->c[ci];
    uint32_t slot = c->heap[0];
    int rc = fs_model_start(m, slot);
    if (rc <= 0) {
        if (rc == 0)
            c->failed = v->round;
        return rc;
    }
    heap_pop(m, c);
    v->q[c->queue].queued--;
    v->queued--;
    rc = run_add(v, m, slot);
    return rc ? rc : 1;
}

/* Evicts a running job (reclaim or preempt): it waits again in its class. */
static int evict(vc_t *v, fs_model_t *m, uint32_t slot)
{
    run_remove(v, m, slot);
    int rc = fs_model_preempt(m, slot);
    return rc ? rc : wait_add(v, m, slot);
}

/* ---- the actions ---------------------------------------------------------------------- */

typedef int (*try_fn)(vc_t *v, fs_model_t *m, long ci);

/* The loop shared by the actions (Volcano's allocate): queues by share,
 * overused ones left out; from the first queue its first job in order;
 * the queue goes back after every attempt.  (A reclaim lowers the share of
 * a victim's queue while it waits in the heap: it keeps its place until it
 * is next popped, an approximation of Volcano's re-sorted queue order.)  try starts the job (1), or
 * fails (0, the class is marked).  *started counts starts. */
static int session_loop(vc_t *v, fs_model_t *m, try_fn try, int check_room, uint64_t *started)
{
    v->round++;
    v->nqh = 0;
    for (uint32_t i = 0; i < v->nq; i++)
        if (v->q[i].queued > 0)
            qh_push(v, i);
    while (v->nqh > 0) {
        uint32_t qi = qh_pop(v);
        vc_queue_t *q = &v->q[qi];
        if (overused(q))
            continue;
        long ci = pick(v, m, q, check_room);
        if (ci < 0)
            continue;
        int rc = try(v, m, ci);
        if (rc < 0)
            return rc;
        if (rc > 0)
            (*started)++;
        else
            v->c[ci].failed = v->round;
        if (q->queued > 0)
            qh_push(v, qi);
    }
    return 0;
}

static int try_allocate(vc_t *v, fs_model_t *m, long ci)
{
    return start_head(v, m, ci);
}

/* Victim order: the most overused queue first, then lower priority, then
 * the latest started. */
static int victim_cmp(const void *pa, const void *pb)
{
    const vc_victim_t *a = pa, *b = pb;
    if (a->share != b->share)
        return a->share > b->share ? -1 : 1;
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    if (a->start != b->start)
        return a->start > b->start ? -1 : 1;
    return a->seq > b->seq ? -1 : a->seq < b->seq;
}

/* Can a victim's GPUs serve the job's pools?  (Same GPU-type constraint,
 * or the job takes any pool.) */
static int serves(const fs_jobrt_t *job, const fs_jobrt_t *victim)
{
    return job->type_pools < 0 || job->type_pools == victim->type_pools;
}

static int add_victim(vc_t *v, fs_model_t *m, size_t *n, uint32_t slot)
{
    if (fs_grow((void **)&v->victims, &v->cap_v, *n + 1, sizeof *v->victims))
        return FS_ENOMEM;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    v->victims[(*n)++] = (vc_victim_t){share(queue_of_job(v, j)), j->job.priority, j->r->start,
                                       j->seq, slot};
    return 0;
}

/* The nodes whose victims to evict for a job of g whole GPUs (Volcano
 * evicts per node).  A job that fits on one node takes the node where the
 * fewest victim GPUs must go (ties: lowest id).  A larger gang fits when
 * its pool has g free GPUs anywhere (fs_cluster.h), so every node of its
 * victims is a target, if they and the free GPUs hold it.  Marks them in
 * node_mark.  Returns 1 if a set was found. */
static int choose_nodes(vc_t *v, fs_model_t *m, uint32_t g)
{
    const fs_cluster_t *cl = fs_model_cluster(m);
    long best = -1;
    uint32_t best_need = UINT32_MAX;
    uint64_t have = free_gpus(m);
    size_t multi = 0;
    for (size_t k = 0; k < v->n_touched; k++) {
        uint32_t n = v->touched[k];
        uint32_t gpn = cl->pools[cl->node_pool[n]].gpn, fr = cl->node_free[n];
        if (g > gpn) {
            v->node_mark[n] = 1;
            have += v->node_ev[n];
            multi++;
        } else if (fr + v->node_ev[n] >= g) {
            uint32_t need = g > fr ? g - fr : 0;
            if (need < best_need || (need == best_need && (long)n < best)) {
                best = n;
                best_need = need;
            }
        }
    }
    if (multi > 0)
        return have >= g;
    if (best >= 0)
        v->node_mark[best] = 1;
    return best >= 0;
}

/* Node scratch of the cluster's size, allocated on first use. */
static int node_scratch(vc_t *v, fs_model_t *m)
{
    uint32_t nn = fs_model_cluster(m)->n_nodes;
    if (!v->node_ev) {
        v->node_ev = fs_calloc(nn ? nn : 1, sizeof *v->node_ev);
        v->node_mark = fs_calloc(nn ? nn : 1, sizeof *v->node_mark);
        v->touched = fs_malloc((nn ? nn : 1) * sizeof *v->touched);
        if (!v->node_ev || !v->node_mark || !v->touched)
            return FS_ENOMEM;
    }
    return 0;
}

static int on_marked(const vc_t *v, const fs_jobrt_t *j)
{
    const fs_slice_t *sl = fs_placement_slices(&j->r->place);
    for (uint32_t i = 0; i < j->r->place.n; i++)
        if (v->node_mark[sl[i].node])
            return 1;
    return 0;
}

/* Evicts the n candidate victims in order (most overused queue, lower
 * priority, latest start), only those on the chosen nodes, until the head
 * of class ci fits and is allocatable, then starts it.  cross: a victim is
 * taken only while its queue holds more than its deserved share
 * (proportion's reclaimable rule).  Nothing is evicted when no node set can
 * hold the job.  *evicted counts evictions.  1 started, 0 not, or an
 * error. */
static int evict_and_start(vc_t *v, fs_model_t *m, long ci, size_t n, int cross,
                           uint64_t *evicted)
{
    vc_class_t *c = &v->c[ci];
    uint32_t slot = c->heap[0];
    vc_queue_t *q = &v->q[c->queue];
    uint64_t need = (uint64_t)c->gpus * c->milli;
    int rc = node_scratch(v, m);
    if (rc)
        return rc;
    const fs_cluster_t *cl = fs_model_cluster(m);
    v->n_touched = 0;
    for (size_t i = 0; i < n; i++) {
        const fs_jobrt_t *vj = fs_model_job(m, v->victims[i].slot);
        const fs_slice_t *sl = fs_placement_slices(&vj->r->place);
        for (uint32_t k = 0; k < vj->r->place.n && vj->r->place.milli == 1000; k++) {
            if (!cl->node_up[sl[k].node])
                continue;
            if (v->node_ev[sl[k].node] == 0)
                v->touched[v->n_touched++] = sl[k].node;
            v->node_ev[sl[k].node] += sl[k].gpus;
        }
    }
    if (choose_nodes(v, m, c->milli == 1000 ? c->gpus : 1)) {
        size_t k = 0;   /* keep the victims on the chosen nodes, then order them */
        for (size_t i = 0; i < n; i++)
            if (on_marked(v, fs_model_job(m, v->victims[i].slot)))
                v->victims[k++] = v->victims[i];
        n = k;
        qsort(v->victims, n, sizeof *v->victims, victim_cmp);
        for (size_t i = 0; i < n; i++) {
            if (fs_model_fits(m, slot) && allocatable(q, need))
                break;
            const fs_jobrt_t *vj = fs_model_job(m, v->victims[i].slot);
            const vc_queue_t *vq = queue_of_job(v, vj);
            if (cross && !(gpus_of(vq->alloc) > vq->deserved + EPS))
                continue;
            rc = evict(v, m, v->victims[i].slot);
            if (rc)
                break;
            (*evicted)++;
        }
    }
    for (size_t k = 0; k < v->n_touched; k++) {
        v->node_ev[v->touched[k]] = 0;
        v->node_mark[v->touched[k]] = 0;
    }
    if (rc)
        return rc;
    if (!allocatable(q, need))
        return 0;
    return start_head(v, m, ci);
}

/* reclaim: the job takes GPUs from overused reclaimable queues. */
static int try_reclaim(vc_t *v, fs_model_t *m, long ci)
{
    vc_class_t *c = &v->c[ci];
    const fs_jobrt_t *j = fs_model_job(m, c->heap[0]);
    if (fs_model_fits(m, c->heap[0]))
        return start_head(v, m, ci);
    size_t n = 0;
    uint64_t have = free_gpus(m) * 1000;
    for (size_t k = 0; k < v->nq; k++) {
        const vc_queue_t *vq = &v->q[k];
        if (k == c->queue || !vq->reclaimable || !(gpus_of(vq->alloc) > vq->deserved + EPS))
            continue;
        for (size_t r = 0; r < vq->n_run; r++) {
            const fs_jobrt_t *vj = fs_model_job(m, vq->run[r]);
            if (!serves(j, vj))
                continue;
            if (add_victim(v, m, &n, vq->run[r]))
                return FS_ENOMEM;
            have += job_milli(vj);
        }
    }
    if (n == 0 || have < job_milli(j))
        return 0;
    return evict_and_start(v, m, ci, n, 1, &v->reclaimed);
}

/* preempt: the job takes GPUs from lower-priority jobs of its own queue. */
static int try_preempt(vc_t *v, fs_model_t *m, long ci)
{
    vc_class_t *c = &v->c[ci];
    const fs_jobrt_t *j = fs_model_job(m, c->heap[0]);
    if (fs_model_fits(m, c->heap[0]) && allocatable(&v->q[c->queue], job_milli(j)))
        return start_head(v, m, ci);
    const vc_queue_t *q = &v->q[c->queue];
    size_t n = 0;
    uint64_t have = free_gpus(m) * 1000;
    for (size_t r = 0; r < q->n_run; r++) {
        const fs_jobrt_t *vj = fs_model_job(m, q->run[r]);
        if (vj->job.priority >= j->job.priority || !serves(j, vj))
            continue;
        if (add_victim(v, m, &n, q->run[r]))
            return FS_ENOMEM;
        have += job_milli(vj);
    }
    if (n == 0 || have < job_milli(j))
        return 0;
    return evict_and_start(v, m, ci, n, 0, &v->preempted);
}

/* preempt works within queues, overused or not: each queue's first
 * waiting job in order may evict lower-priority jobs of its queue. */
static int preempt_action(vc_t *v, fs_model_t *m, uint64_t *started)
{
    v->round++;
    for (size_t qi = 0; qi < v->nq; qi++) {
        vc_queue_t *q = &v->q[qi];
        if (q->queued == 0)
            continue;
        long best = -1;
        for (size_t k = 0; k < q->n_cls; k++) {
            vc_class_t *c = &v->c[q->cls[k]];
            if (c->n > 0 && (best < 0 || class_before(v, m, c, &v->c[best])))
                best = (long)q->cls[k];
        }
        int rc = try_preempt(v, m, best);
        if (rc < 0)
            return rc;
        *started += (uint64_t)rc;
    }
    return 0;
}

/* ---- the session ------------------------------------------------------------------------ */

static void update_shares(vc_t *v, fs_model_t *m)
{
    uint64_t total = fs_model_cluster(m)->gpus_up;
    if (!v->dirty && total == v->total_seen)
        return;
    for (size_t i = 0; i < v->nq; i++) {
        v->in[i].weight = v->q[i].weight;
        v->in[i].request = gpus_of(v->q[i].request);
        v->in[i].capability = v->q[i].cap;
        v->in[i].guarantee = v->q[i].guarantee;
    }
    fs_volcano_deserved(v->in, v->nq, (double)total, v->out, v->scratch);
    for (size_t i = 0; i < v->nq; i++)
        v->q[i].deserved = v->out[i];
    v->dirty = 0;
    v->total_seen = total;
}

static int vc_pass(void *state, fs_model_t *m)
{
    vc_t *v = state;
    fs_time_t now = fs_model_now(m);
    if (v->period > 0 && now % v->period != 0) {
        fs_time_t at = (now / v->period + 1) * v->period;
        if (v->timer_at != at) {
            int rc = fs_model_timer(m, at, 0, NULL);
            if (rc)
                return rc;
            v->timer_at = at;
        }
        return 0;
    }
    update_shares(v, m);
    uint64_t started = 0, evicted = v->reclaimed + v->preempted;
    int rc = session_loop(v, m, try_allocate, 1, &started);
    if (!rc && v->reclaim && v->queued > 0)
        rc = session_loop(v, m, try_reclaim, 0, &started);
    if (!rc && v->preempt && v->queued > 0)
        rc = preempt_action(v, m, &started);
    /* victims' GPUs left over go to waiting jobs in this same session */
    if (!rc && v->reclaimed + v->preempted > evicted && v->queued > 0)
        rc = session_loop(v, m, try_allocate, 1, &started);
    return rc;
}

static int vc_timer(void *state, fs_model_t *m, uint64_t data)
{
    (void)data;
    vc_t *v = state;
    if (v->timer_at == fs_model_now(m))
        v->timer_at = -1;
    return 0;
}

/* ---- policy ops ---------------------------------------------------------------------------- */

static int vc_enqueue(void *state, fs_model_t *m, uint32_t slot)
{
    vc_t *v = state;
    int rc = wait_add(v, m, slot);
    if (rc)
        return rc;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    queue_of_job(v, j)->request += job_milli(j);
    v->dirty = 1;
    return 0;
}

static void vc_job_end(void *state, fs_model_t *m, uint32_t slot)
{
    vc_t *v = state;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    run_remove(v, m, slot);
    queue_of_job(v, j)->request -= job_milli(j);
    v->dirty = 1;
}

/* A pending job is deleted (a retired replica): out of its class's heap
 * and its queue's request. */
static int vc_withdraw(void *state, fs_model_t *m, uint32_t slot)
{
    vc_t *v = state;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    long ci = class_of(v, m, j);
    if (ci < 0)
        return FS_ENOMEM;
    vc_class_t *c = &v->c[ci];
    size_t i = 0;
    while (i < c->n && c->heap[i] != slot)
        i++;
    if (i == c->n)
        return FS_EINVAL;
    heap_remove_at(m, c, i);
    v->q[c->queue].queued--;
    v->queued--;
    queue_of_job(v, j)->request -= job_milli(j);
    v->dirty = 1;
    return 0;
}

static size_t vc_queued(const void *state)
{
    return ((const vc_t *)state)->queued;
}

static int check_cfg(const fs_volcano_cfg_t *c, fs_error_t *err)
{
    for (size_t i = 0; i < c->n_queues; i++)
        for (size_t k = 0; k < i; k++) {
            if (strcmp(c->queues[i].name, c->queues[k].name) == 0)
                return fs_error_set(err, FS_EINVAL, "scheduler.volcano.queues: queue '%s' is "
                                    "given twice", c->queues[i].name);
            const char *p = c->queues[i].tenants;
            while (p && *p) {   /* each tenant of queue i against queue k's list */
                while (*p == ' ' || *p == ',')
                    p++;
                size_t len = strcspn(p, ",");
                char name[256];
                size_t l = len < sizeof name - 1 ? len : sizeof name - 1;
                memcpy(name, p, l);
                while (l > 0 && name[l - 1] == ' ')
                    l--;
                name[l] = 0;
                if (l > 0 && c->queues[k].tenants && listed(c->queues[k].tenants, name))
                    return fs_error_set(err, FS_EINVAL, "scheduler.volcano.queues: tenant '%s' "
                                        "is in queues '%s' and '%s'", name, c->queues[k].name,
                                        c->queues[i].name);
                p += len;
            }
        }
    return 0;
}

static void vc_destroy(void *state)
{
    vc_t *v = state;
    if (!v)
        return;
    for (size_t i = 0; i < v->nq; i++) {
        fs_free(v->q[i].cls);
        fs_free(v->q[i].run);
    }
    for (size_t i = 0; i < v->nt; i++) {
        fs_shapemap_release(&v->t[i].shapes);
        fs_free(v->t[i].cls);
    }
    for (size_t i = 0; i < v->nc; i++)
        fs_free(v->c[i].heap);
    fs_free(v->q);
    fs_free(v->t);
    fs_free(v->c);
    fs_free(v->qheap);
    fs_free(v->in);
    fs_free(v->out);
    fs_free(v->scratch);
    fs_free(v->victims);
    fs_free(v->run_at);
    fs_free(v->node_ev);
    fs_free(v->node_mark);
    fs_free(v->touched);
    fs_free(v);
}

static int vc_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    (void)m;
    const fs_volcano_cfg_t *c = &cfg->volcano;
    int rc = check_cfg(c, err);
    if (rc)
        return rc;
    vc_t *v = fs_calloc(1, sizeof *v);
    size_t nq = c->n_queues + 1;    /* room for the default queue */
    if (!v || !(v->q = fs_calloc(nq, sizeof *v->q)) || !(v->qheap = fs_calloc(nq, sizeof *v->qheap)) ||
        !(v->in = fs_calloc(nq, sizeof *v->in)) || !(v->out = fs_calloc(nq, sizeof *v->out)) ||
        !(v->scratch = fs_calloc(nq, sizeof *v->scratch))) {
        vc_destroy(v);
        return fs_error_set(err, FS_ENOMEM, "volcano: out of memory");
    }
    v->def_q = NO_QUEUE;
    for (size_t i = 0; i < c->n_queues; i++) {
        const fs_volcano_queue_cfg_t *qc = &c->queues[i];
        v->q[i] = (vc_queue_t){.name = qc->name, .tenants = qc->tenants, .weight = qc->weight,
                               .cap = qc->capability, .guarantee = qc->guarantee,
                               .reclaimable = qc->reclaimable};
        if (strcmp(qc->name, "default") == 0)
            v->def_q = (uint32_t)i;
    }
    v->nq = c->n_queues;
    if (v->def_q == NO_QUEUE) {     /* Volcano's default queue: weight 1, reclaimable */
        v->q[v->nq] = (vc_queue_t){.name = "default", .weight = 1, .reclaimable = 1};
        v->def_q = (uint32_t)v->nq++;
    }
    v->reclaim = c->reclaim;
    v->preempt = c->preempt;
    v->drf = c->drf;
    v->period = c->period;
    v->timer_at = -1;
    v->dirty = 1;
    *state = v;
    return 0;
}

/* A running job lost its node: it no longer runs and waits outside the
 * policy until the model hands it back (enqueue), or never. */
static void vc_job_interrupted(void *state, fs_model_t *m, uint32_t slot)
{
    vc_job_end(state, m, slot);
}

/* A job larger than its queue's capability never runs. */
static int vc_why(const void *state, const fs_model_t *m, uint32_t slot, char *buf, size_t n)
{
    vc_t *v = (vc_t *)(uintptr_t)state;
    const fs_jobrt_t *j = fs_model_job((fs_model_t *)(uintptr_t)m, slot);
    const vc_queue_t *q = queue_of_job(v, j);
    double g = gpus_of(job_milli(j));
    if (!(q->cap > 0 && g > q->cap + EPS))
        return 0;
    snprintf(buf, n, "its queue '%s' has a capability of %g GPUs, less than the %g GPUs it asks",
             q->name, q->cap, g);
    return 1;
}

/* Admissibility from the configuration alone (fs_policy.h probe): the
 * policy's own state with no model, and the capability of the queue the
 * tenant maps to, as vc_why judges a job of a run. */
static int vc_probe_create(const fs_config_t *cfg, void **probe, fs_error_t *err)
{
    return vc_create(NULL, &cfg->scheduler, probe, err);
}

static int vc_probe(const void *probe, const char *tenant, const fs_job_t *j, char *why, size_t n)
{
    const vc_t *v = probe;
    const vc_queue_t *q = &v->q[queue_for(v, tenant)];
    double g = gpus_of(fs_job_milli(j));
    if (!(q->cap > 0 && g > q->cap + EPS))
        return 1;
    if (tenant)
        snprintf(why, n, "tenant '%s' maps to Volcano queue '%s', whose capability of %g GPUs is "
                 "less than the %g GPUs asked", tenant, q->name, q->cap, g);
    else
        snprintf(why, n, "jobs without a tenant go to Volcano queue '%s', whose capability of "
                 "%g GPUs is less than the %g GPUs asked", q->name, q->cap, g);
    return 0;
}

static void vc_probe_destroy(void *probe)
{
    vc_destroy(probe);
}

static int vc_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    int rc = check_cfg(&cfg->scheduler.volcano, err);
    if (rc == FS_EINVAL && key && keylen)
        snprintf(key, keylen, "scheduler.volcano.queues");
    return rc;
}

static void vc_stats(const void *state, fs_policy_stats_t *out)
{
    out->reclaims = ((const vc_t *)state)->reclaimed;
}

const fs_policy_ops_t fs_policy_volcano = {
    .name = "volcano",
    .check = vc_check,
    .why_waiting = vc_why,
    .probe_create = vc_probe_create,
    .probe = vc_probe,
    .probe_destroy = vc_probe_destroy,
    .create = vc_create,
    .destroy = vc_destroy,
    .enqueue = vc_enqueue,
    .pass = vc_pass,
    .queued = vc_queued,
    .job_end = vc_job_end,
    .timer = vc_timer,
    .job_interrupted = vc_job_interrupted,
    .withdraw = vc_withdraw,
    .stats = vc_stats,
};

/* ---- instrumentation -------------------------------------------------------------------------- */

size_t fs_volcano_queue_count(const void *state)
{
    return ((const vc_t *)state)->nq;
}

void fs_volcano_queue_stat(const void *state, size_t i, fs_volcano_qstat_t *out)
{
    const vc_queue_t *q = &((const vc_t *)state)->q[i];
    *out = (fs_volcano_qstat_t){.name = q->name, .deserved = q->deserved,
                                .allocated = gpus_of(q->alloc), .request = gpus_of(q->request),
                                .peak = gpus_of(q->peak), .capability = q->cap};
}

uint64_t fs_volcano_reclaimed(const void *state) { return ((const vc_t *)state)->reclaimed; }
uint64_t fs_volcano_preempted(const void *state) { return ((const vc_t *)state)->preempted; }
