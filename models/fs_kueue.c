/*
 * Kueue admission (fs_kueue.h, docs/policies.md "Kueue").  Sources: the
 * Kueue docs (kueue.sigs.k8s.io: ClusterQueue, Cohort, ResourceFlavor,
 * LocalQueue, Preemption, Fair Sharing) and DOMAIN.md 3.3.
 *
 * One pass: every active CQ offers its head (the best job of its classes
 * that are not blocked); the heads are ordered as Kueue's scheduler orders
 * a cycle's entries -- those that need no borrowing first, then (fair
 * sharing) lower dominant resource share, then higher priority, then
 * earlier admission -- and each is tried in turn: admitted in the first
 * flavor with quota, or after preempting victims in the first flavor where
 * preemption may help, or blocked.  A blocked head blocks its class
 * (BestEffortFIFO: later classes of the CQ go on) or the whole CQ
 * (StrictFIFO) until something is released in its cohort.  Rounds repeat
 * until no CQ is active.
 */
#include "fs_kueue.h"
#include "fs_policy.h"
#include "fs_shape.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NONE INT64_MAX
#define NO_CQ (-1)
#define UNSEEN (-2)

enum { MODE_NOFIT = 0, MODE_PREEMPT = 1, MODE_FIT = 2 };
enum { J_NONE = 0, J_QUEUED = 1, J_ADMITTED = 2, J_UNMAPPED = 3 };

typedef struct kres {       /* one CQ x one flavor, milli-GPUs */
    int64_t nominal, blimit, guaranteed, usage; /* blimit NONE: no borrowingLimit */
    int has;                /* the CQ has quota in this flavor */
} kres_t;

typedef struct kcls {       /* a class: heap by (priority desc, seq asc) */
    uint32_t *a;
    size_t n, cap;
    int32_t tprio;          /* the top's key, cached (valid when n > 0) */
    uint64_t tseq;
    uint8_t blocked;
    /* with_pods: the heap read in order without changing it, a heap of
     * positions in a (the next best is the best of those not taken yet) */
    size_t *va;
    size_t vn, vcap;
    uint8_t vblocked;
} kcls_t;

typedef struct kcq {
    char *name;
    int32_t cohort;         /* -1: none */
    int strict, within, reclaim, bwc;
    int has_thr;
    int64_t thr;            /* maxPriorityThreshold */
    int64_t weight_milli;
    uint32_t *fl;           /* flavors in the order tried */
    size_t n_fl;
    kres_t *res;            /* one per flavor of the policy */
    kcls_t *cls;            /* by shape index */
    size_t n_cls;
    uint32_t *run;          /* admitted slots */
    size_t n_run, cap_run;
    size_t pending;
    int32_t hcls;           /* cached head class (-1: none), valid while hok */
    uint8_t hok;
    int32_t *pv;            /* distinct priorities of admitted jobs, ascending */
    int64_t *pu;            /* their usage (all flavors), milli-GPUs */
    size_t n_pv, cap_pv;
    uint8_t active, blocked, node_blocked, vblocked;
    double borrowed_mus, lent_mus; /* quota borrowed from / lent to the cohort, milli-GPU x us */
} kcq_t;

typedef struct kcoh {
    char *name;
    int64_t *quota, *usage; /* per flavor: sum of lendable; sum of max(0, usage - guaranteed) */
    int64_t lendable_total; /* all flavors (fair sharing) */
    uint32_t *cqs;
    size_t n;
} kcoh_t;

typedef struct kflavor {
    char *name;
    uint8_t *mask;          /* per pool */
    uint32_t *pools;
    size_t n_pools;
} kflavor_t;

typedef struct kjob {
    int32_t cq, flavor;
    uint32_t shape, run_idx;
    uint64_t admit_seq;
    int64_t req;            /* milli-GPUs reserved while admitted */
    uint64_t admit_pass;    /* the pass that admitted it */
    uint8_t in;
} kjob_t;

typedef struct cand {       /* a preemption candidate */
    uint32_t slot;
    int32_t cq, prio;
    int other;              /* in another CQ than the preemptor's */
    uint64_t aseq;          /* admission order */
    int64_t req;
    uint8_t keep;
} cand_t;

typedef struct tmap {       /* tenant name -> CQ */
    char *tenant;
    int32_t cq;
} tmap_t;

typedef struct entry {
    uint32_t cq, slot;
    int mode, borrow;
    int32_t flavor;
    int64_t drs;
    int32_t prio;
    uint64_t seq;
} entry_t;

typedef struct kueue {
    kcq_t *cq;
    size_t n_cq;
    kcoh_t *coh;
    size_t n_coh;
    kflavor_t *fl;
    size_t n_fl;
    size_t n_pools;
    int fair;
    int32_t default_cq;
    tmap_t *tm;
    size_t n_tm;
    int32_t *tenant_cq;     /* source tenant index -> CQ, UNSEEN or NO_CQ */
    size_t cap_tenant;
    fs_time_t q_last;       /* borrowed/lent integrals settled up to here */
    fs_shapemap_t shapes;
    kjob_t *jobs;           /* by slot */
    size_t cap_jobs;
    uint32_t *act;          /* active CQs */
    size_t n_act, cap_act;
    uint32_t *nb;           /* CQs blocked by node capacity */
    size_t n_nb, cap_nb;
    int released;           /* GPUs released since the last pass */
    uint64_t up_seen;
    size_t queued;
    uint64_t admit_seq;
    uint64_t pass_no;       /* passes run (a job admitted in this pass is no victim) */
    /* scratch */
    entry_t *ent;
    size_t cap_ent;
    cand_t *cand, *work, *taken;
    size_t cap_cand, cap_work, cap_taken;
    uint32_t *pools;
    uint32_t *vact;         /* with_pods: its CQs still offering */
    size_t cap_vact;
    struct vlog { uint32_t cq, flavor; int64_t req; } *vlog; /* its quota taken */
    size_t cap_vlog;
    /* instrumentation */
    fs_kueue_stats_t st;
    int check_on, record;
    uint64_t *adm, *vic;
    size_t n_adm, cap_adm, n_vic, cap_vic;
} kueue_t;

/* ---- flavors --------------------------------------------------------------- */

/* Does `item` name GPU model `gpu` as a word (separated by - _ space /)? */
static int has_word(const char *item, const char *gpu)
{
    size_t gl = strlen(gpu);
    if (gl == 0)
        return 0;
    for (const char *p = item; *p; p++) {
        if (strncasecmp(p, gpu, gl) != 0)
            continue;
        int lb = p == item || strchr("-_ /.", p[-1]);
        int rb = p[gl] == '\0' || strchr("-_ /.", p[gl]);
        if (lb && rb)
            return 1;
    }
    return 0;
}

size_t fs_kueue_match_pools(const char *name, const char *match, const fs_cluster_cfg_t *cl,
                            uint8_t *mask)
{
    const char *s = match ? match : name;
    size_t count = 0;
    while (s && *s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char item[256];
        while (len && *s == ' ')
            s++, len--;
        while (len && s[len - 1] == ' ')
            len--;
        if (len >= sizeof item)
            len = sizeof item - 1;
        memcpy(item, s, len);
        item[len] = '\0';
        for (size_t p = 0; len && p < cl->n_pools; p++) {
            const fs_pool_cfg_t *pc = &cl->pools[p];
            if (strcasecmp(item, pc->name) == 0 || strcasecmp(item, pc->gpu) == 0 ||
                has_word(item, pc->gpu)) {
                count += !mask[p];
                mask[p] = 1;
            }
        }
        s = comma ? comma + 1 : NULL;
    }
    return count;
}

/* ---- quota arithmetic ------------------------------------------------------ */

static int64_t pos(int64_t x) { return x > 0 ? x : 0; }

static int64_t available(const kueue_t *k, const kcq_t *c, uint32_t f)
{
    const kres_t *r = &c->res[f];
    if (c->cohort < 0)
        return r->nominal - r->usage;
    const kcoh_t *h = &k->coh[c->cohort];
    int64_t local = pos(r->guaranteed - r->usage);
    int64_t parent = h->quota[f] - h->usage[f];
    if (r->blimit != NONE) {
        int64_t stored = r->nominal - r->guaranteed;
        int64_t cap = stored - pos(r->usage - r->guaranteed) + r->blimit;
        if (cap < parent)
            parent = cap;
    }
    return local + parent;
}

/* What the CQ could get with no usage of its own (preemption may help up
 * to this much when it may borrow while preempting). */
static int64_t potential(const kueue_t *k, const kcq_t *c, uint32_t f)
{
    const kres_t *r = &c->res[f];
    if (c->cohort < 0)
        return r->nominal;
    int64_t parent = k->coh[c->cohort].quota[f];
    if (r->blimit != NONE && r->nominal - r->guaranteed + r->blimit < parent)
        parent = r->nominal - r->guaranteed + r->blimit;
    return r->guaranteed + parent;
}

static void usage_add(kueue_t *k, kcq_t *c, uint32_t f, int64_t d)
{
    kres_t *r = &c->res[f];
    int64_t before = pos(r->usage - r->guaranteed);
    r->usage += d;
    if (c->cohort >= 0)
        k->coh[c->cohort].usage[f] += pos(r->usage - r->guaranteed) - before;
}

static int fits(const kueue_t *k, const kcq_t *c, uint32_t f, int64_t req, int allow_borrow)
{
    if (!allow_borrow && c->res[f].usage + req > c->res[f].nominal)
        return 0;
    return req <= available(k, c, f);
}

/* Dominant resource share of CQ c with req more in flavor f (Kueue's
 * fair sharing, one resource): borrowed / the cohort's lendable quota,
 * per mille, divided by the weight. */
static int64_t drs(const kueue_t *k, const kcq_t *c, int32_t f, int64_t req)
{
    if (c->cohort < 0)
        return 0;
    int64_t borrowed = 0;
    for (size_t i = 0; i < c->n_fl; i++) {
        const kres_t *r = &c->res[c->fl[i]];
        borrowed += pos(r->usage + ((int32_t)c->fl[i] == f ? req : 0) - r->nominal);
    }
    int64_t lend = k->coh[c->cohort].lendable_total;
    if (borrowed == 0 || lend <= 0)
        return 0;
    if (c->weight_milli == 0)
        return INT64_MAX;
    return borrowed * 1000 / lend * 1000000 / c->weight_milli;
}

/* ---- jobs ------------------------------------------------------------------ */

static int64_t req_of(fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = fs_model_job(m, slot);
    return (int64_t)fs_jobq_milli(&j->job);
}

static int better(fs_model_t *m, uint32_t a, uint32_t b)
{
    const fs_jobrt_t *x = fs_model_job(m, a), *y = fs_model_job(m, b);
    if (x->job.priority != y->job.priority)
        return x->job.priority > y->job.priority;
    return x->seq < y->seq;
}

static int heap_push(fs_model_t *m, kcls_t *h, uint32_t slot)
{
    if (fs_grow((void **)&h->a, &h->cap, h->n + 1, sizeof *h->a))
        return FS_ENOMEM;
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!better(m, slot, h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = slot;
    const fs_jobrt_t *t = fs_model_job(m, h->a[0]);
    h->tprio = t->job.priority;
    h->tseq = t->seq;
    return 0;
}

/* Removes the entry at i: the last entry fills the hole and moves up or
 * down to its place. */
static void heap_remove_at(fs_model_t *m, kcls_t *h, size_t i)
{
    uint32_t last = h->a[--h->n];
    if (i < h->n) {
        size_t at = i;
        while (at > 0 && better(m, last, h->a[(at - 1) / 2])) {
            h->a[at] = h->a[(at - 1) / 2];
            at = (at - 1) / 2;
        }
        while (at >= i) {       /* not moved up (at < i): down */
            size_t l = 2 * at + 1, b = at;
            uint32_t bv = last;
            if (l < h->n && better(m, h->a[l], bv))
                b = l, bv = h->a[l];
            if (l + 1 < h->n && better(m, h->a[l + 1], bv))
                b = l + 1;
            if (b == at)
                break;
            h->a[at] = h->a[b];
            at = b;
        }
        h->a[at] = last;
    }
    if (h->n) {
        const fs_jobrt_t *t = fs_model_job(m, h->a[0]);
        h->tprio = t->job.priority;
        h->tseq = t->seq;
    }
}

static void heap_pop(fs_model_t *m, kcls_t *h) { heap_remove_at(m, h, 0); }

static int grow_jobs(kueue_t *k, uint32_t slot)
{
    size_t old = k->cap_jobs;
    if (slot < old)
        return 0;
    if (fs_grow((void **)&k->jobs, &k->cap_jobs, (size_t)slot + 1, sizeof *k->jobs))
        return FS_ENOMEM;
    memset(k->jobs + old, 0, (k->cap_jobs - old) * sizeof *k->jobs);
    return 0;
}

/* ---- activity -------------------------------------------------------------- */

static int activate(kueue_t *k, uint32_t c)
{
    if (k->cq[c].active)
        return 0;
    if (fs_grow((void **)&k->act, &k->cap_act, k->n_act + 1, sizeof *k->act))
        return FS_ENOMEM;
    k->cq[c].active = 1;
    k->act[k->n_act++] = c;
    return 0;
}

static int wake(kueue_t *k, uint32_t c)
{
    kcq_t *q = &k->cq[c];
    if (q->pending == 0)
        return 0;
    for (size_t i = 0; i < q->n_cls; i++)
        q->cls[i].blocked = 0;
    q->blocked = 0;
    q->hok = 0;
    return activate(k, c);
}

/* Quota was released in CQ c: its cohort's CQs may admit again. */
static int wake_cohort(kueue_t *k, uint32_t c)
{
    int32_t h = k->cq[c].cohort;
    if (h < 0)
        return wake(k, c);
    for (size_t i = 0; i < k->coh[h].n; i++) {
        int rc = wake(k, k->coh[h].cqs[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static int wake_node_blocked(kueue_t *k)
{
    for (size_t i = 0; i < k->n_nb; i++) {
        k->cq[k->nb[i]].node_blocked = 0;
        int rc = wake(k, k->nb[i]);
        if (rc)
            return rc;
    }
    k->n_nb = 0;
    return 0;
}

/* ---- tenants --------------------------------------------------------------- */

static int32_t cq_by_name(const kueue_t *k, const char *name)
{
    for (size_t i = 0; name && i < k->n_cq; i++)
        if (strcmp(k->cq[i].name, name) == 0)
            return (int32_t)i;
    return NO_CQ;
}

/* The CQ of source tenant t: a LocalQueue mapping, else the CQ named like
 * the tenant, else default_queue, else none. */
static int32_t tenant_cq(kueue_t *k, fs_model_t *m, int32_t t, int *oom)
{
    if (t < 0)
        return k->default_cq;
    if ((size_t)t >= k->cap_tenant) {
        size_t old = k->cap_tenant;
        if (fs_grow((void **)&k->tenant_cq, &k->cap_tenant, (size_t)t + 1, sizeof *k->tenant_cq)) {
            *oom = 1;
            return NO_CQ;
        }
        for (size_t i = old; i < k->cap_tenant; i++)
            k->tenant_cq[i] = UNSEEN;
    }
    if (k->tenant_cq[t] != UNSEEN)
        return k->tenant_cq[t];
    const char *name = fs_source_tenant_name(fs_model_source(m), t);
    int32_t c = NO_CQ;
    for (size_t i = 0; name && i < k->n_tm && c == NO_CQ; i++)
        if (strcmp(k->tm[i].tenant, name) == 0)
            c = k->tm[i].cq;
    if (c == NO_CQ)
        c = cq_by_name(k, name);
    if (c == NO_CQ)
        c = k->default_cq;
    return k->tenant_cq[t] = c;
}

/* ---- queueing ---------------------------------------------------------------- */

/* The best head of CQ c's unblocked classes (strict: of all classes, none
 * when the CQ is blocked); *cls its class.  UINT32_MAX if none. */
static uint32_t cq_head(const kueue_t *k, fs_model_t *m, kcq_t *q, size_t *cls)
{
    (void)k;
    (void)m;
    if (q->strict && q->blocked)
        return UINT32_MAX;
    if (!q->hok) {
        const kcls_t *best = NULL;
        q->hcls = -1;
        for (size_t i = 0; i < q->n_cls; i++) {
            const kcls_t *h = &q->cls[i];
            if (h->n == 0 || (!q->strict && h->blocked))
                continue;
            if (!best || h->tprio > best->tprio ||
                (h->tprio == best->tprio && h->tseq < best->tseq)) {
                best = h;
                q->hcls = (int32_t)i;
            }
        }
        q->hok = 1;
    }
    if (q->hcls < 0)
        return UINT32_MAX;
    *cls = (size_t)q->hcls;
    return q->cls[q->hcls].a[0];
}

static int queue_job(kueue_t *k, fs_model_t *m, uint32_t slot, int32_t c)
{
    fs_jobrt_t *j = fs_model_job(m, slot);
    kjob_t *kj = &k->jobs[slot];
    kcq_t *q = &k->cq[c];
    int added;
    long s = fs_shapemap_get(&k->shapes, j->job.gpus, j->job.gpu_milli, fs_jobq_pod_res(&j->job),
                             j->type_pools, &added);
    if (s < 0)
        return FS_ENOMEM;
    if ((size_t)s >= q->n_cls) {
        size_t cap = q->n_cls;
        if (fs_grow((void **)&q->cls, &cap, (size_t)s + 1, sizeof *q->cls))
            return FS_ENOMEM;
        memset(q->cls + q->n_cls, 0, (cap - q->n_cls) * sizeof *q->cls);
        q->n_cls = cap;
    }
    kcls_t *h = &q->cls[s];
    if (heap_push(m, h, slot))
        return FS_ENOMEM;
    q->hok = 0;
    kj->cq = c;
    kj->shape = (uint32_t)s;
    kj->flavor = -1;
    kj->in = J_QUEUED;
    q->pending++;
    k->queued++;
    if (h->a[0] != slot)
        return 0;   /* not a new class head: nothing changes */
    h->blocked = 0;
    if (q->strict && q->blocked) {
        size_t cls;
        q->blocked = 0;
        if (cq_head(k, m, q, &cls) != slot) {
            q->blocked = 1;  /* the blocked head stays in front */
            return 0;
        }
    }
    return activate(k, (uint32_t)c);
}

static int kueue_enqueue(void *state, fs_model_t *m, uint32_t slot)
{
    kueue_t *k = state;
    if (grow_jobs(k, slot))
        return FS_ENOMEM;
    int oom = 0;
    int32_t c = tenant_cq(k, m, fs_model_job(m, slot)->job.tenant, &oom);
    if (oom)
        return FS_ENOMEM;
    if (c == NO_CQ) {   /* no LocalQueue: pending for good, as in Kueue */
        k->jobs[slot].in = J_UNMAPPED;
        k->jobs[slot].cq = NO_CQ;
        k->st.unmapped++;
        k->queued++;
        return 0;
    }
    return queue_job(k, m, slot, c);
}

/* ---- admission ------------------------------------------------------------- */

static int log_id(uint64_t **a, size_t *n, size_t *cap, uint64_t id)
{
    if (fs_grow((void **)a, cap, *n + 1, sizeof **a))
        return FS_ENOMEM;
    (*a)[(*n)++] = id;
    return 0;
}

/* Usage by priority (a bound for preemption: what lower priorities hold). */
static int prio_add(kcq_t *q, int32_t prio, int64_t d)
{
    size_t i = 0;
    while (i < q->n_pv && q->pv[i] < prio)
        i++;
    if (i == q->n_pv || q->pv[i] != prio) {
        size_t cap = q->cap_pv;
        if (fs_grow((void **)&q->pv, &cap, q->n_pv + 1, sizeof *q->pv) ||
            fs_grow((void **)&q->pu, &q->cap_pv, q->n_pv + 1, sizeof *q->pu))
            return FS_ENOMEM;
        memmove(q->pv + i + 1, q->pv + i, (q->n_pv - i) * sizeof *q->pv);
        memmove(q->pu + i + 1, q->pu + i, (q->n_pv - i) * sizeof *q->pu);
        q->pv[i] = prio;
        q->pu[i] = 0;
        q->n_pv++;
    }
    q->pu[i] += d;
    return 0;
}

/* Usage of CQ q's jobs with priority < prio (<= prio when eq). */
static int64_t prio_below(const kcq_t *q, int32_t prio, int eq)
{
    int64_t u = 0;
    for (size_t i = 0; i < q->n_pv && (q->pv[i] < prio || (eq && q->pv[i] == prio)); i++)
        u += q->pu[i];
    return u;
}

/* Borrowed and lent quota integrated up to now (before every change of
 * usage).  Per cohort and flavor: a CQ borrows max(0, usage - nominal);
 * what the cohort borrows, B, is lent by the CQs with idle lendable quota
 * min(nominal - usage, nominal - guaranteed) > 0, in proportion to it.  So
 * the cohort's lent equals its borrowed at every instant.  O(CQs x flavors)
 * per admission or release. */
static void quota_settle(kueue_t *k, fs_time_t now)
{
    double dt = (double)(now - k->q_last);
    k->q_last = now;
    if (dt <= 0)
        return;
    for (size_t h = 0; h < k->n_coh; h++) {
        const kcoh_t *co = &k->coh[h];
        for (size_t f = 0; f < k->n_fl; f++) {
            int64_t b = 0, l = 0;
            for (size_t i = 0; i < co->n; i++) {
                const kres_t *r = &k->cq[co->cqs[i]].res[f];
                if (!r->has)
                    continue;
                int64_t idle = r->nominal - r->usage, lend = r->nominal - r->guaranteed;
                b += pos(r->usage - r->nominal);
                l += pos(idle < lend ? idle : lend);
            }
            if (b == 0)
                continue;
            for (size_t i = 0; i < co->n; i++) {
                kcq_t *q = &k->cq[co->cqs[i]];
                const kres_t *r = &q->res[f];
                if (!r->has)
                    continue;
                int64_t idle = r->nominal - r->usage, lend = r->nominal - r->guaranteed;
                q->borrowed_mus += (double)pos(r->usage - r->nominal) * dt;
                if (l > 0)
                    q->lent_mus += (double)b * (double)pos(idle < lend ? idle : lend) / (double)l * dt;
            }
        }
    }
}

static int admit_account(kueue_t *k, fs_model_t *m, uint32_t slot, uint32_t f)
{
    kjob_t *kj = &k->jobs[slot];
    kcq_t *q = &k->cq[kj->cq];
    int64_t r = req_of(m, slot);
    if (fs_grow((void **)&q->run, &q->cap_run, q->n_run + 1, sizeof *q->run))
        return FS_ENOMEM;
    if (q->res[f].usage + r > q->res[f].nominal)
        k->st.borrowed++;
    quota_settle(k, fs_model_now(m));
    usage_add(k, q, f, r);
    kj->req = r;
    kj->flavor = (int32_t)f;
    kj->run_idx = (uint32_t)q->n_run;
    q->run[q->n_run++] = slot;
    kj->admit_seq = k->admit_seq++;
    kj->admit_pass = k->pass_no;
    kj->in = J_ADMITTED;
    k->st.admitted++;
    return prio_add(q, fs_model_job(m, slot)->job.priority, r);
}

/* Releases an admitted job's quota (it ended, was preempted or lost its
 * node). */
static int release(kueue_t *k, fs_model_t *m, uint32_t slot)
{
    kjob_t *kj = &k->jobs[slot];
    if (slot >= k->cap_jobs || kj->in != J_ADMITTED)
        return 0;
    kcq_t *q = &k->cq[kj->cq];
    quota_settle(k, fs_model_now(m));
    usage_add(k, q, (uint32_t)kj->flavor, -kj->req);
    (void)prio_add(q, fs_model_job(m, slot)->job.priority, -kj->req); /* the entry exists */
    uint32_t last = q->run[--q->n_run];
    q->run[kj->run_idx] = last;
    k->jobs[last].run_idx = kj->run_idx;
    kj->in = J_NONE;
    k->released = 1;
    return wake_cohort(k, (uint32_t)kj->cq);
}

/* The pools of flavor f the job may use (k->pools), their count. */
static size_t job_flavor_pools(kueue_t *k, fs_model_t *m, uint32_t slot, uint32_t f)
{
    const kflavor_t *fl = &k->fl[f];
    const uint32_t *jp;
    size_t jn = fs_model_job_pools(m, slot, &jp);
    if (!jp)
        return SIZE_MAX;    /* any: the flavor's own list */
    size_t n = 0;
    for (size_t i = 0; i < jn; i++)
        if (jp[i] < k->n_pools && fl->mask[jp[i]])
            k->pools[n++] = jp[i];
    return n;
}

static int eligible(kueue_t *k, fs_model_t *m, uint32_t slot, uint32_t f)
{
    return job_flavor_pools(k, m, slot, f) > 0;
}

static int can_preempt(const kcq_t *q)
{
    return q->within != FS_KUEUE_NEVER || (q->cohort >= 0 && q->reclaim != FS_KUEUE_NEVER);
}

/* Kueue's flavor assignment (whenCanBorrow: Borrow, whenCanPreempt:
 * TryNextFlavor): the first flavor with quota now, else the first where
 * preemption may help. */
static void assign(kueue_t *k, fs_model_t *m, uint32_t c, uint32_t slot, entry_t *e)
{
    const kcq_t *q = &k->cq[c];
    int64_t r = req_of(m, slot);
    e->mode = MODE_NOFIT;
    e->flavor = -1;
    e->borrow = 0;
    for (size_t i = 0; i < q->n_fl; i++) {
        uint32_t f = q->fl[i];
        if (!eligible(k, m, slot, f))
            continue;
        if (r <= available(k, q, f)) {
            e->mode = MODE_FIT;
            e->flavor = (int32_t)f;
            e->borrow = q->res[f].usage + r > q->res[f].nominal;
            return;
        }
        if (e->mode == MODE_NOFIT && can_preempt(q) &&
            (r <= q->res[f].nominal || (q->bwc != FS_KUEUE_NEVER && r <= potential(k, q, f)))) {
            e->mode = MODE_PREEMPT;
            e->flavor = (int32_t)f;
            e->borrow = q->res[f].usage + r > q->res[f].nominal;
        }
    }
}

/* ---- preemption (Kueue's classic preemption) ----------------------------- */

/* Candidate order: workloads of other CQs first, then lower priority,
 * then the most recently admitted. */
static int cand_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->other != y->other)
        return x->other ? -1 : 1;
    if (x->prio != y->prio)
        return x->prio < y->prio ? -1 : 1;
    return x->aseq > y->aseq ? -1 : x->aseq < y->aseq;
}

static int add_cand(kueue_t *k, fs_model_t *m, size_t *n, uint32_t slot, uint32_t by)
{
    /* admitted in this very pass: Kueue evicts asynchronously, so a
     * workload admitted at this instant is not preempted at it (this also
     * bounds a pass: no job is evicted twice in one instant) */
    if (k->jobs[slot].admit_pass == k->pass_no)
        return 0;
    if (fs_grow((void **)&k->cand, &k->cap_cand, *n + 1, sizeof *k->cand))
        return FS_ENOMEM;
    const kjob_t *kj = &k->jobs[slot];
    k->cand[(*n)++] = (cand_t){.slot = slot, .cq = kj->cq, .other = kj->cq != (int32_t)by,
                               .prio = fs_model_job(m, slot)->job.priority,
                               .aseq = kj->admit_seq, .req = kj->req};
    return 0;
}

static int borrowing(const kcq_t *q, uint32_t f) { return q->res[f].usage > q->res[f].nominal; }

/* Candidates for preemptor `slot` of CQ c in flavor f (k->cand, unsorted). */
static int find_candidates(kueue_t *k, fs_model_t *m, uint32_t c, uint32_t slot, uint32_t f,
                           size_t *n)
{
    const kcq_t *q = &k->cq[c];
    const fs_jobrt_t *w = fs_model_job(m, slot);
    *n = 0;
    if (q->within != FS_KUEUE_NEVER)
        for (size_t i = 0; i < q->n_run; i++) {
            uint32_t v = q->run[i];
            const fs_jobrt_t *j = fs_model_job(m, v);
            if (k->jobs[v].flavor != (int32_t)f)
                continue;
            int lower = j->job.priority < w->job.priority;
            int newer = q->within == FS_KUEUE_LOWER_OR_NEWER_EQUAL &&
                        j->job.priority == w->job.priority && w->seq < j->seq;
            if ((lower || newer) && add_cand(k, m, n, v, c))
                return FS_ENOMEM;
        }
    if (q->cohort >= 0 && q->reclaim != FS_KUEUE_NEVER) {
        const kcoh_t *h = &k->coh[q->cohort];
        for (size_t i = 0; i < h->n; i++) {
            const kcq_t *d = &k->cq[h->cqs[i]];
            if (h->cqs[i] == c || !borrowing(d, f))
                continue;
            for (size_t r = 0; r < d->n_run; r++) {
                uint32_t v = d->run[r];
                if (k->jobs[v].flavor != (int32_t)f)
                    continue;
                if (q->reclaim == FS_KUEUE_LOWER_PRIORITY &&
                    fs_model_job(m, v)->job.priority >= w->job.priority)
                    continue;
                if (add_cand(k, m, n, v, c))
                    return FS_ENOMEM;
            }
        }
    }
    return 0;   /* minimal() takes them in Kueue's order */
}

/* Kueue's minimalPreemptions over cand[0..n): remove candidates in order
 * (those of other CQs only while their CQ still borrows) until the
 * preemptor fits, then put back, newest removal first, every one but the
 * last that is not needed.  The targets are left at cand[0..*nt); usage is
 * restored.  limit (borrowWithinCohort): removing a candidate of another
 * CQ with priority >= limit forbids borrowing (NONE: no limit). */
static int cand_less(const cand_t *a, const cand_t *b) { return cand_cmp(a, b) < 0; }

static void cand_sift(cand_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, b = i;
        if (l < n && cand_less(&h[l], &h[b]))
            b = l;
        if (l + 1 < n && cand_less(&h[l + 1], &h[b]))
            b = l + 1;
        if (b == i)
            return;
        cand_t t = h[i];
        h[i] = h[b];
        h[b] = t;
        i = b;
    }
}

static void minimal(kueue_t *k, uint32_t c, uint32_t f, int64_t req, cand_t *cand, size_t n,
                    int allow, int64_t limit, size_t *nt)
{
    kcq_t *q = &k->cq[c];
    *nt = 0;
    /* fast fail: not even all of them together make room */
    for (size_t i = 0; i < n; i++)
        usage_add(k, &k->cq[cand[i].cq], f, -cand[i].req);
    int any = fits(k, q, f, req, allow);
    for (size_t i = 0; i < n; i++)
        usage_add(k, &k->cq[cand[i].cq], f, cand[i].req);
    if (!any)
        return;
    /* candidates in Kueue's order, popped from a heap: usually few are taken */
    for (size_t i = n / 2; i-- > 0;)
        cand_sift(cand, n, i);
    cand_t *tk = k->taken;
    size_t taken = 0, hn = n;
    int ok = 0;
    while (hn > 0 && !ok) {
        cand_t v = cand[0];
        cand[0] = cand[--hn];
        cand_sift(cand, hn, 0);
        kcq_t *d = &k->cq[v.cq];
        if (d != q && !borrowing(d, f))
            continue;
        if (d != q && limit != NONE && v.prio >= limit)
            allow = 0;
        usage_add(k, d, f, -v.req);
        v.keep = 1;
        tk[taken++] = v;
        ok = fits(k, q, f, req, allow);
    }
    if (!ok) {
        for (size_t i = 0; i < taken; i++)
            usage_add(k, &k->cq[tk[i].cq], f, tk[i].req);
        return;
    }
    for (size_t i = taken - 1; i-- > 0;) {   /* fill back all but the last */
        kcq_t *d = &k->cq[tk[i].cq];
        usage_add(k, d, f, tk[i].req);
        if (fits(k, q, f, req, allow))
            tk[i].keep = 0;
        else
            usage_add(k, d, f, -tk[i].req);
    }
    for (size_t i = 0; i < taken; i++)
        if (tk[i].keep) {
            usage_add(k, &k->cq[tk[i].cq], f, tk[i].req);
            cand[(*nt)++] = tk[i];
        }
}

/* Kueue's classic preemption: targets for preemptor slot of CQ c in
 * flavor f, left in k->work[0..*nt). */
/* An upper bound of what preemption could free for preemptor slot: the
 * usage of the jobs that the policies allow to take (by priority, all
 * flavors).  If even that much more would not make room, there is no
 * need to look at the candidates one by one. */
static int hopeless(kueue_t *k, fs_model_t *m, uint32_t c, uint32_t slot, uint32_t f)
{
    const kcq_t *q = &k->cq[c];
    int32_t pw = fs_model_job(m, slot)->job.priority;
    int64_t bound = 0;
    if (q->within != FS_KUEUE_NEVER)
        bound += prio_below(q, pw, q->within == FS_KUEUE_LOWER_OR_NEWER_EQUAL);
    if (q->cohort >= 0 && q->reclaim != FS_KUEUE_NEVER) {
        const kcoh_t *h = &k->coh[q->cohort];
        for (size_t i = 0; i < h->n; i++) {
            const kcq_t *d = &k->cq[h->cqs[i]];
            if (h->cqs[i] != c && borrowing(d, f))
                bound += prio_below(d, q->reclaim == FS_KUEUE_ANY ? INT32_MAX : pw,
                                    q->reclaim == FS_KUEUE_ANY);
        }
    }
    return available(k, q, f) + bound < req_of(m, slot);
}

static int find_targets(kueue_t *k, fs_model_t *m, uint32_t c, uint32_t slot, uint32_t f,
                        size_t *nt)
{
    size_t n;
    *nt = 0;
    if (hopeless(k, m, c, slot, f))
        return 0;
    int rc = find_candidates(k, m, c, slot, f, &n);
    if (rc || n == 0)
        return rc;
    if (fs_grow((void **)&k->work, &k->cap_work, n, sizeof *k->work) ||
        fs_grow((void **)&k->taken, &k->cap_taken, n, sizeof *k->taken))
        return FS_ENOMEM;
    const kcq_t *q = &k->cq[c];
    int64_t req = req_of(m, slot);
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += !k->cand[i].other;
    if (same == n) {   /* nothing to take from others: preempt own, may borrow */
        memcpy(k->work, k->cand, n * sizeof *k->work);
        minimal(k, c, f, req, k->work, n, 1, NONE, nt);
        return 0;
    }
    size_t wn = 0;
    int64_t limit = NONE;
    int allow = 0;
    if (q->bwc != FS_KUEUE_NEVER) {
        allow = 1;
        limit = q->has_thr ? q->thr + 1 : fs_model_job(m, slot)->job.priority;
        int under = q->res[f].usage < q->res[f].nominal;
        for (size_t i = 0; i < n; i++)
            if (under || !k->cand[i].other || k->cand[i].prio < limit)
                k->work[wn++] = k->cand[i];
    } else {
        memcpy(k->work, k->cand, n * sizeof *k->work);
        wn = n;
    }
    minimal(k, c, f, req, k->work, wn, allow, limit, nt);
    if (*nt == 0 && same) { /* again: own workloads only, borrowing */
        wn = 0;
        for (size_t i = 0; i < n; i++)
            if (!k->cand[i].other)
                k->work[wn++] = k->cand[i];
        minimal(k, c, f, req, k->work, wn, 1, NONE, nt);
    }
    return 0;
}

/* Preempts one victim: the model's mechanics (lost work, restart cost),
 * its quota back, and back into its CQ. */
static int evict(kueue_t *k, fs_model_t *m, uint32_t v, uint32_t by_cq)
{
    int32_t c = k->jobs[v].cq;
    int rc = release(k, m, v);
    if (!rc)
        rc = fs_model_preempt(m, v);
    if (rc)
        return rc;
    k->st.preempted++;
    k->st.reclaimed += c != (int32_t)by_cq;
    if (k->record && log_id(&k->vic, &k->n_vic, &k->cap_vic, fs_model_job(m, v)->job.id))
        return FS_ENOMEM;
    return queue_job(k, m, v, c);
}

/* Starts the job in flavor f's pools: 1 started, 0 no room, or an error. */
static int place(kueue_t *k, fs_model_t *m, uint32_t slot, uint32_t f)
{
    size_t n = job_flavor_pools(k, m, slot, f);
    if (n == SIZE_MAX)
        return fs_model_start_in(m, slot, k->fl[f].pools, k->fl[f].n_pools);
    return fs_model_start_in(m, slot, k->pools, n);
}

enum { TRY_ADMITTED = 0, TRY_QUOTA = 1, TRY_NODES = 2 };

static int try_admit(kueue_t *k, fs_model_t *m, const entry_t *e, int *out)
{
    kcq_t *q = &k->cq[e->cq];
    *out = TRY_QUOTA;
    if (e->mode == MODE_NOFIT)
        return 0;
    uint32_t f = (uint32_t)e->flavor;
    if (e->mode == MODE_PREEMPT) {
        size_t nt;
        int rc = find_targets(k, m, e->cq, e->slot, f, &nt);
        if (rc || nt == 0)
            return rc;
        for (size_t i = 0; i < nt && !rc; i++)
            rc = evict(k, m, k->work[i].slot, e->cq);
        if (rc)
            return rc;
        if (!fits(k, q, f, req_of(m, e->slot), 1))
            return 0;
    }
    int rc = place(k, m, e->slot, f);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        *out = TRY_NODES;
        return 0;
    }
    kcls_t *h = &q->cls[k->jobs[e->slot].shape];
    if (h->a[0] != e->slot)
        return FS_EINTERNAL;    /* a bug: the head is its class's top */
    heap_pop(m, h);
    q->hok = 0;
    q->pending--;
    k->queued--;
    *out = TRY_ADMITTED;
    if (admit_account(k, m, e->slot, f))
        return FS_ENOMEM;
    if (k->record && log_id(&k->adm, &k->n_adm, &k->cap_adm, fs_model_job(m, e->slot)->job.id))
        return FS_ENOMEM;
    return 0;
}

static int block(kueue_t *k, const entry_t *e, int why)
{
    kcq_t *q = &k->cq[e->cq];
    q->hok = 0;
    if (q->strict)
        q->blocked = 1;
    else
        q->cls[k->jobs[e->slot].shape].blocked = 1;
    if (why == TRY_NODES && !q->node_blocked) {
        if (fs_grow((void **)&k->nb, &k->cap_nb, k->n_nb + 1, sizeof *k->nb))
            return FS_ENOMEM;
        q->node_blocked = 1;
        k->nb[k->n_nb++] = e->cq;
    }
    return 0;
}

static int entry_cmp(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    if (x->borrow != y->borrow)
        return x->borrow ? 1 : -1;
    if (x->drs != y->drs)   /* 0 without fair sharing */
        return x->drs < y->drs ? -1 : 1;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->cq < y->cq ? -1 : x->cq > y->cq;
}

/* The heads of the active CQs, with their assignments; CQs with none
 * become inactive. */
static int collect(kueue_t *k, fs_model_t *m, size_t *ne)
{
    size_t keep = 0;
    *ne = 0;
    for (size_t i = 0; i < k->n_act; i++) {
        uint32_t c = k->act[i];
        size_t cls;
        uint32_t h = cq_head(k, m, &k->cq[c], &cls);
        if (h == UINT32_MAX) {
            k->cq[c].active = 0;
            continue;
        }
        k->act[keep++] = c;
        if (fs_grow((void **)&k->ent, &k->cap_ent, *ne + 1, sizeof *k->ent))
            return FS_ENOMEM;
        entry_t *e = &k->ent[(*ne)++];
        const fs_jobrt_t *j = fs_model_job(m, h);
        e->cq = c;
        e->slot = h;
        e->prio = j->job.priority;
        e->seq = j->seq;
        assign(k, m, c, h, e);
        e->drs = k->fair ? drs(k, &k->cq[c], e->flavor, req_of(m, h)) : 0;
    }
    k->n_act = keep;
    return 0;
}

static int kueue_pass(void *state, fs_model_t *m)
{
    kueue_t *k = state;
    const fs_cluster_t *cl = fs_model_cluster(m);
    int rc = 0;
    if (k->released || cl->gpus_up > k->up_seen)
        rc = wake_node_blocked(k);
    k->released = 0;
    k->pass_no++;
    while (!rc) {
        size_t ne;
        if ((rc = collect(k, m, &ne)) != 0 || ne == 0)
            break;
        qsort(k->ent, ne, sizeof *k->ent, entry_cmp);
        uint64_t ev0 = k->st.preempted;
        for (size_t i = 0; i < ne && !rc; i++) {
            entry_t e = k->ent[i];
            size_t cls;
            /* an earlier entry may have changed this CQ (a victim came back) */
            if (k->st.preempted != ev0 && cq_head(k, m, &k->cq[e.cq], &cls) != e.slot)
                continue;
            if (i > 0)
                assign(k, m, e.cq, e.slot, &e);
            int out;
            if ((rc = try_admit(k, m, &e, &out)) != 0)
                break;
            if (out != TRY_ADMITTED)
                rc = block(k, &e, out);
            if (k->released) {  /* victims freed GPUs */
                k->released = 0;
                if (!rc)
                    rc = wake_node_blocked(k);
            }
        }
    }
    k->up_seen = cl->gpus_up;
    if (!rc && k->check_on) {
        k->st.checks++;
        char msg[sizeof k->st.last_violation];
        if (fs_kueue_check(k, msg, sizeof msg)) {
            k->st.violations++;
            memcpy(k->st.last_violation, msg, sizeof msg);
        }
    }
    return rc;
}

static void kueue_job_end(void *state, fs_model_t *m, uint32_t slot)
{
    kueue_t *k = state;
    (void)release(k, m, slot);  /* FS_ENOMEM here only delays a wake-up */
    k->released = 1;
}

static size_t kueue_queued(const void *state) { return ((const kueue_t *)state)->queued; }

/* A pending workload is deleted (a retired replica): out of its class's
 * heap; its CQ is woken, since a blocked head may be the one that left. */
static int kueue_withdraw(void *state, fs_model_t *m, uint32_t slot)
{
    kueue_t *k = state;
    kjob_t *kj = slot < k->cap_jobs ? &k->jobs[slot] : NULL;
    if (kj && kj->in == J_UNMAPPED) {
        kj->in = J_NONE;
        k->queued--;
        return 0;
    }
    if (!kj || kj->in != J_QUEUED)
        return FS_EINVAL;
    kcq_t *q = &k->cq[kj->cq];
    kcls_t *h = &q->cls[kj->shape];
    size_t i = 0;
    while (i < h->n && h->a[i] != slot)
        i++;
    if (i == h->n)
        return FS_EINVAL;
    heap_remove_at(m, h, i);
    q->hok = 0;
    q->pending--;
    k->queued--;
    kj->in = J_NONE;
    return wake(k, (uint32_t)kj->cq);
}

/* ---- pods: what Kueue would admit by quota (fs_policy_ops_t.with_pods) ------
 * In Kubernetes a workload's pods exist once Kueue admits it, which takes
 * quota only; its pods then wait for nodes, and those are the pending pods
 * the cluster autoscaler scales up for.  Here admission also places the
 * job, so a job with quota but no nodes stays queued: this is the list of
 * queued jobs Kueue would admit now were the nodes there.  The pass runs
 * as kueue_pass does (rounds of CQ heads in entry_cmp order, BestEffortFIFO
 * / StrictFIFO blocking), from the quota in use now, every admission
 * taking quota as it goes; a head that would need preemption is not
 * admitted (its victims go first, in a real pass).  The quota is given
 * back afterwards, as it was.  Each class's heap is read in order through
 * a heap of its positions, so the cost is O(admitted x log + CQs x classes
 * per round), not the queue's length. */

static int vbetter(fs_model_t *m, const kcls_t *h, size_t x, size_t y)
{
    return better(m, h->a[x], h->a[y]);
}

static int vpush(fs_model_t *m, kcls_t *h, size_t pos)
{
    if (fs_grow((void **)&h->va, &h->vcap, h->vn + 1, sizeof *h->va))
        return FS_ENOMEM;
    size_t i = h->vn++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!vbetter(m, h, pos, h->va[p]))
            break;
        h->va[i] = h->va[p];
        i = p;
    }
    h->va[i] = pos;
    return 0;
}

/* Takes the class's next job: its children in the heap become candidates. */
static int vpop(fs_model_t *m, kcls_t *h)
{
    size_t top = h->va[0], last = h->va[--h->vn], i = 0;
    for (;;) {
        size_t l = 2 * i + 1, b;
        if (l >= h->vn)
            break;
        b = l + 1 < h->vn && vbetter(m, h, h->va[l + 1], h->va[l]) ? l + 1 : l;
        if (!vbetter(m, h, h->va[b], last))
            break;
        h->va[i] = h->va[b];
        i = b;
    }
    if (h->vn > 0)
        h->va[i] = last;
    int rc = 0;
    if (2 * top + 1 < h->n)
        rc = vpush(m, h, 2 * top + 1);
    if (!rc && 2 * top + 2 < h->n)
        rc = vpush(m, h, 2 * top + 2);
    return rc;
}

/* The CQ's next job in the pass (cq_head over the positions read so far). */
static uint32_t vhead(fs_model_t *m, const kcq_t *q)
{
    if (q->strict && q->vblocked)
        return UINT32_MAX;
    uint32_t best = UINT32_MAX;
    for (size_t i = 0; i < q->n_cls; i++) {
        const kcls_t *h = &q->cls[i];
        if (h->vn == 0 || (!q->strict && h->vblocked))
            continue;
        uint32_t s = h->a[h->va[0]];
        if (best == UINT32_MAX || better(m, s, best))
            best = s;
    }
    return best;
}

static int kueue_with_pods(void *state, fs_model_t *m, uint8_t *mark)
{
    kueue_t *k = state;
    size_t nact = 0, nlog = 0;
    int rc = 0;
    if (fs_grow((void **)&k->vact, &k->cap_vact, k->n_cq + 1, sizeof *k->vact))
        return FS_ENOMEM;
    for (size_t c = 0; c < k->n_cq; c++) {
        kcq_t *q = &k->cq[c];
        q->vblocked = 0;
        for (size_t i = 0; i < q->n_cls; i++) {
            kcls_t *h = &q->cls[i];
            h->vn = 0;
            h->vblocked = 0;
            if (h->n && (rc = vpush(m, h, 0)) != 0)
                return rc;
        }
        if (q->pending)
            k->vact[nact++] = (uint32_t)c;
    }
    while (!rc) {
        size_t ne = 0, keep = 0;
        for (size_t i = 0; i < nact && !rc; i++) {
            uint32_t c = k->vact[i];
            uint32_t h = vhead(m, &k->cq[c]);
            if (h == UINT32_MAX)
                continue;
            k->vact[keep++] = c;
            if (fs_grow((void **)&k->ent, &k->cap_ent, ne + 1, sizeof *k->ent)) {
                rc = FS_ENOMEM;
                break;
            }
            entry_t *e = &k->ent[ne++];
            const fs_jobrt_t *j = fs_model_job(m, h);
            e->cq = c;
            e->slot = h;
            e->prio = j->job.priority;
            e->seq = j->seq;
            assign(k, m, c, h, e);
            e->drs = k->fair ? drs(k, &k->cq[c], e->flavor, req_of(m, h)) : 0;
        }
        nact = keep;
        if (rc || ne == 0)
            break;
        qsort(k->ent, ne, sizeof *k->ent, entry_cmp);
        for (size_t i = 0; i < ne && !rc; i++) {
            entry_t e = k->ent[i];
            kcq_t *q = &k->cq[e.cq];
            kcls_t *h = &q->cls[k->jobs[e.slot].shape];
            if (i > 0)
                assign(k, m, e.cq, e.slot, &e);
            if (e.mode != MODE_FIT) {
                if (q->strict)
                    q->vblocked = 1;
                else
                    h->vblocked = 1;
                continue;
            }
            if (fs_grow((void **)&k->vlog, &k->cap_vlog, nlog + 1, sizeof *k->vlog)) {
                rc = FS_ENOMEM;
                break;
            }
            int64_t r = req_of(m, e.slot);
            k->vlog[nlog++] = (struct vlog){e.cq, (uint32_t)e.flavor, r};
            usage_add(k, q, (uint32_t)e.flavor, r);
            mark[e.slot] = 1;
            rc = vpop(m, h);
        }
    }
    while (nlog > 0) {  /* the quota in use as it was */
        const struct vlog *v = &k->vlog[--nlog];
        usage_add(k, &k->cq[v->cq], v->flavor, -v->req);
    }
    return rc;
}

/* ---- lifecycle ------------------------------------------------------------- */

static void kueue_destroy(void *state)
{
    kueue_t *k = state;
    if (!k)
        return;
    for (size_t i = 0; i < k->n_cq; i++) {
        kcq_t *q = &k->cq[i];
        for (size_t c = 0; c < q->n_cls; c++) {
            fs_free(q->cls[c].a);
            fs_free(q->cls[c].va);
        }
        fs_free(q->cls);
        fs_free(q->res);
        fs_free(q->fl);
        fs_free(q->run);
        fs_free(q->pv);
        fs_free(q->pu);
    }
    for (size_t i = 0; i < k->n_coh; i++) {
        fs_free(k->coh[i].quota);
        fs_free(k->coh[i].usage);
        fs_free(k->coh[i].cqs);
    }
    for (size_t i = 0; i < k->n_fl; i++) {
        fs_free(k->fl[i].mask);
        fs_free(k->fl[i].pools);
    }
    for (size_t i = 0; i < k->n_tm; i++)
        fs_free(k->tm[i].tenant);
    fs_free(k->cq);
    fs_free(k->coh);
    fs_free(k->fl);
    fs_free(k->tm);
    fs_free(k->tenant_cq);
    fs_shapemap_release(&k->shapes);
    fs_free(k->jobs);
    fs_free(k->act);
    fs_free(k->nb);
    fs_free(k->ent);
    fs_free(k->cand);
    fs_free(k->work);
    fs_free(k->taken);
    fs_free(k->pools);
    fs_free(k->vact);
    fs_free(k->vlog);
    fs_free(k->adm);
    fs_free(k->vic);
    fs_free(k);
}

static int64_t to_milli(double gpus) { return (int64_t)llround(gpus * 1000.0); }

static int32_t flavor_index(const kueue_t *k, const char *name)
{
    for (size_t i = 0; i < k->n_fl; i++)
        if (strcmp(k->fl[i].name, name) == 0)
            return (int32_t)i;
    return -1;
}

/* Adds flavor name (match: its pools) unless known; its index or an error. */
static int add_flavor(kueue_t *k, const fs_cluster_cfg_t *cl, const char *name, const char *match,
                      int32_t *out, fs_error_t *err)
{
    if ((*out = flavor_index(k, name)) >= 0)
        return 0;
    kflavor_t *f = &k->fl[k->n_fl];
    memset(f, 0, sizeof *f);
    f->name = (char *)name;     /* borrowed from the config */
    f->mask = fs_calloc(cl->n_pools ? cl->n_pools : 1, 1);
    f->pools = fs_malloc((cl->n_pools ? cl->n_pools : 1) * sizeof *f->pools);
    k->n_fl++;
    if (!f->mask || !f->pools)
        return fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    fs_kueue_match_pools(name, match, cl, f->mask);
    for (size_t p = 0; p < cl->n_pools; p++)
        if (f->mask[p])
            f->pools[f->n_pools++] = (uint32_t)p;
    if (f->n_pools == 0)
        return fs_error_set(err, FS_EINVAL, "scheduler.kueue: flavor '%s' stands for no pool "
                            "(name a pool or a GPU model)", name);
    *out = (int32_t)(k->n_fl - 1);
    return 0;
}

static int32_t cohort_of(kueue_t *k, const char *name, size_t n_cq)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < k->n_coh; i++)
        if (strcmp(k->coh[i].name, name) == 0)
            return (int32_t)i;
    kcoh_t *h = &k->coh[k->n_coh];
    memset(h, 0, sizeof *h);
    h->name = (char *)name;
    h->cqs = fs_malloc(n_cq * sizeof *h->cqs);
    return h->cqs ? (int32_t)k->n_coh++ : -2;
}

static int add_tenants(kueue_t *k, const char *list, int32_t c)
{
    const char *s = list;
    while (s && *s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        while (len && *s == ' ')
            s++, len--;
        while (len && s[len - 1] == ' ')
            len--;
        if (len) {
            size_t cap = k->n_tm;
            if (fs_grow((void **)&k->tm, &cap, k->n_tm + 1, sizeof *k->tm))
                return FS_ENOMEM;
            char *t = fs_malloc(len + 1);
            if (!t)
                return FS_ENOMEM;
            memcpy(t, s, len);
            t[len] = '\0';
            k->tm[k->n_tm++] = (tmap_t){t, c};
        }
        s = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int setup_cq(kueue_t *k, const fs_kueue_cq_cfg_t *cc, const fs_cluster_cfg_t *cl, size_t nf_max,
                    uint32_t idx, fs_error_t *err)
{
    kcq_t *q = &k->cq[idx];
    q->name = cc->name;
    q->strict = cc->strategy == FS_KUEUE_STRICT_FIFO;
    q->within = cc->within_cq;
    q->reclaim = cc->reclaim;
    q->bwc = cc->borrow_within;
    q->has_thr = !isnan(cc->borrow_max_priority);
    q->thr = q->has_thr ? (int64_t)floor(cc->borrow_max_priority) : 0;
    q->weight_milli = to_milli(cc->weight);
    q->res = fs_calloc(nf_max, sizeof *q->res);
    q->fl = fs_malloc((cc->n_quotas ? cc->n_quotas : 1) * sizeof *q->fl);
    if (!q->res || !q->fl || add_tenants(k, cc->tenants, (int32_t)idx))
        return fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    q->cohort = cohort_of(k, cc->cohort, k->n_cq);
    if (q->cohort == -2)
        return fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    if (q->cohort >= 0) {
        kcoh_t *h = &k->coh[q->cohort];
        h->cqs[h->n++] = idx;
    }
    for (size_t i = 0; i < cc->n_quotas; i++) {
        const fs_kueue_quota_cfg_t *qc = &cc->quotas[i];
        int32_t f;
        int rc = add_flavor(k, cl, qc->flavor, NULL, &f, err);
        if (rc)
            return rc;
        kres_t *r = &q->res[f];
        if (r->has)
            return fs_error_set(err, FS_EINVAL, "scheduler.kueue: ClusterQueue '%s' lists "
                                "flavor '%s' twice", cc->name, qc->flavor);
        r->has = 1;
        r->nominal = to_milli(qc->nominal);
        r->blimit = qc->borrowing_limit < 0 ? NONE : to_milli(qc->borrowing_limit);
        r->guaranteed = qc->lending_limit < 0 ? 0 : pos(r->nominal - to_milli(qc->lending_limit));
        q->fl[q->n_fl++] = (uint32_t)f;
    }
    return 0;
}

/* Cohort quotas: the sum of what each member lends, per flavor. */
static int setup_cohorts(kueue_t *k, fs_error_t *err)
{
    for (size_t i = 0; i < k->n_coh; i++) {
        kcoh_t *h = &k->coh[i];
        h->quota = fs_calloc(k->n_fl ? k->n_fl : 1, sizeof *h->quota);
        h->usage = fs_calloc(k->n_fl ? k->n_fl : 1, sizeof *h->usage);
        if (!h->quota || !h->usage)
            return fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
        for (size_t c = 0; c < h->n; c++) {
            const kcq_t *q = &k->cq[h->cqs[c]];
            for (size_t f = 0; f < q->n_fl; f++) {
                const kres_t *r = &q->res[q->fl[f]];
                h->quota[q->fl[f]] += r->nominal - r->guaranteed;
                h->lendable_total += r->nominal - r->guaranteed;
            }
        }
    }
    return 0;
}

/* The policy's state for a configuration and a fleet (create() with no
 * model: the check hook builds it too, so that validate enforces the same
 * rules). */
static int kueue_build(const fs_sched_cfg_t *cfg, const fs_cluster_cfg_t *cl, void **state,
                       fs_error_t *err)
{
    const fs_kueue_cfg_t *kc = &cfg->kueue;
    *state = NULL;
    if (kc->n_cqs == 0)
        return fs_error_set(err, FS_EINVAL, "scheduler.queue kueue needs at least one ClusterQueue "
                            "(scheduler.kueue.cluster_queues or scheduler.kueue.manifests)");
    kueue_t *k = fs_calloc(1, sizeof *k);
    if (!k || fs_shapemap_init(&k->shapes)) {
        fs_free(k);
        return fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    }
    *state = k;
    size_t nf_max = kc->n_flavors;
    for (size_t i = 0; i < kc->n_cqs; i++)
        nf_max += kc->cqs[i].n_quotas;
    k->fair = kc->fair_sharing;
    k->n_pools = cl->n_pools;
    k->cq = fs_calloc(kc->n_cqs, sizeof *k->cq);
    k->coh = fs_calloc(kc->n_cqs, sizeof *k->coh);
    k->fl = fs_calloc(nf_max ? nf_max : 1, sizeof *k->fl);
    k->pools = fs_malloc((cl->n_pools ? cl->n_pools : 1) * sizeof *k->pools);
    int rc = 0;
    if (!k->cq || !k->coh || !k->fl || !k->pools)
        rc = fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    for (size_t i = 0; !rc && i < kc->n_flavors; i++) {
        int32_t f;
        if (flavor_index(k, kc->flavors[i].name) >= 0)
            rc = fs_error_set(err, FS_EINVAL, "scheduler.kueue: flavor '%s' is defined twice",
                              kc->flavors[i].name);
        else
            rc = add_flavor(k, cl, kc->flavors[i].name, kc->flavors[i].match, &f, err);
    }
    k->n_cq = k->cq ? kc->n_cqs : 0;   /* destroy walks n_cq of them */
    for (size_t i = 0; !rc && i < kc->n_cqs; i++) {
        for (size_t j = 0; j < i && !rc; j++)
            if (strcmp(kc->cqs[j].name, kc->cqs[i].name) == 0)
                rc = fs_error_set(err, FS_EINVAL, "scheduler.kueue: ClusterQueue '%s' is defined "
                                  "twice", kc->cqs[i].name);
        if (!rc)
            rc = setup_cq(k, &kc->cqs[i], cl, nf_max ? nf_max : 1, (uint32_t)i, err);
    }
    if (!rc)
        rc = setup_cohorts(k, err);
    k->default_cq = NO_CQ;
    if (!rc && kc->default_queue && (k->default_cq = cq_by_name(k, kc->default_queue)) == NO_CQ)
        rc = fs_error_set(err, FS_EINVAL, "scheduler.kueue.default_queue: no ClusterQueue '%s'",
                          kc->default_queue);
    if (rc) {
        kueue_destroy(k);
        *state = NULL;
    }
    return rc;
}

/* ---- instrumentation ------------------------------------------------------- */

void fs_kueue_check_every(void *state, int on) { ((kueue_t *)state)->check_on = on; }
const fs_kueue_stats_t *fs_kueue_stats(const void *state) { return &((const kueue_t *)state)->st; }
void fs_kueue_record(void *state, int on) { ((kueue_t *)state)->record = on; }

const uint64_t *fs_kueue_admissions(const void *state, size_t *n)
{
    *n = ((const kueue_t *)state)->n_adm;
    return ((const kueue_t *)state)->adm;
}

const uint64_t *fs_kueue_victims(const void *state, size_t *n)
{
    *n = ((const kueue_t *)state)->n_vic;
    return ((const kueue_t *)state)->vic;
}

double fs_kueue_usage(const void *state, const char *cq, const char *flavor)
{
    const kueue_t *k = state;
    int32_t c = cq_by_name(k, cq), f = flavor_index(k, flavor);
    if (c < 0 || f < 0)
        return NAN;
    return (double)k->cq[c].res[f].usage / 1000.0;
}

int fs_kueue_check(const void *state, char *msg, size_t n)
{
    const kueue_t *k = state;
    for (size_t c = 0; c < k->n_cq; c++) {
        const kcq_t *q = &k->cq[c];
        for (size_t i = 0; i < k->n_fl; i++) {
            const kres_t *r = &q->res[i];
            int64_t sum = 0;    /* the usage, recomputed from the admitted jobs */
            for (size_t j = 0; j < q->n_run; j++)
                if (k->jobs[q->run[j]].flavor == (int32_t)i)
                    sum += k->jobs[q->run[j]].req;
            if (sum != r->usage) {
                snprintf(msg, n, "CQ %s flavor %s: usage %lld but admitted jobs hold %lld", q->name,
                         k->fl[i].name, (long long)r->usage, (long long)sum);
                return -1;
            }
            if (r->usage < 0 || (!r->has && r->usage != 0)) {
                snprintf(msg, n, "CQ %s flavor %s: usage %lld without quota", q->name, k->fl[i].name,
                         (long long)r->usage);
                return -1;
            }
            if (q->cohort < 0 && r->usage > r->nominal) {
                snprintf(msg, n, "CQ %s flavor %s: usage %lld > nominal %lld without a cohort",
                         q->name, k->fl[i].name, (long long)r->usage, (long long)r->nominal);
                return -1;
            }
            if (r->blimit != NONE && r->usage > r->nominal + r->blimit) {
                snprintf(msg, n, "CQ %s flavor %s: usage %lld > nominal %lld + borrowingLimit %lld",
                         q->name, k->fl[i].name, (long long)r->usage, (long long)r->nominal,
                         (long long)r->blimit);
                return -1;
            }
        }
    }
    for (size_t h = 0; h < k->n_coh; h++) {
        const kcoh_t *co = &k->coh[h];
        for (size_t f = 0; f < k->n_fl; f++) {
            int64_t used = 0;
            for (size_t c = 0; c < co->n; c++) {
                const kres_t *r = &k->cq[co->cqs[c]].res[f];
                used += pos(r->usage - r->guaranteed);
            }
            if (used != co->usage[f] || used > co->quota[f]) {
                snprintf(msg, n, "cohort %s flavor %s: borrowed usage %lld (kept %lld) > lendable %lld",
                         co->name, k->fl[f].name, (long long)used, (long long)co->usage[f],
                         (long long)co->quota[f]);
                return -1;
            }
        }
    }
    return 0;
}

static int kueue_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    return kueue_build(cfg, &fs_model_config(m)->cluster, state, err);
}

/* ---- admissibility (validate) ---------------------------------------------------- */

int fs_kueue_probe_create(const fs_config_t *cfg, void **probe, fs_error_t *err)
{
    return kueue_build(&cfg->scheduler, &cfg->cluster, probe, err);
}

void fs_kueue_probe_destroy(void *probe)
{
    if (probe)
        kueue_destroy(probe);
}

int fs_kueue_probe(const void *probe, const char *tenant, int64_t milli, char *why, size_t n)
{
    const kueue_t *k = probe;
    int32_t c = NO_CQ;
    for (size_t i = 0; tenant && i < k->n_tm && c == NO_CQ; i++)   /* as tenant_cq does */
        if (strcmp(k->tm[i].tenant, tenant) == 0)
            c = k->tm[i].cq;
    if (c == NO_CQ && tenant)
        c = cq_by_name(k, tenant);
    if (c == NO_CQ)
        c = k->default_cq;
    if (c == NO_CQ) {
        if (tenant)
            snprintf(why, n, "tenant '%s' has no LocalQueue, no ClusterQueue of its name and no "
                     "scheduler.kueue.default_queue", tenant);
        else
            snprintf(why, n, "jobs without a tenant go to scheduler.kueue.default_queue, which "
                     "is not set");
        return 0;
    }
    const kcq_t *q = &k->cq[c];
    int64_t most = 0;
    for (size_t i = 0; i < q->n_fl; i++) {
        int64_t p = potential(k, q, q->fl[i]);
        if (p > most)
            most = p;
    }
    if (milli <= most)
        return 1;
    snprintf(why, n, "ClusterQueue '%s' can hold at most %.6g GPUs in any flavor (its nominal "
             "quota and what its cohort may lend), less than the %.6g GPUs asked", q->name,
             (double)most / 1000.0, (double)milli / 1000.0);
    return 0;
}

static int kueue_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    void *st = NULL;
    int rc = kueue_build(&cfg->scheduler, &cfg->cluster, &st, err);
    if (st)
        kueue_destroy(st);
    if (rc == FS_EINVAL && key && keylen)
        snprintf(key, keylen, "scheduler.kueue");
    return rc;
}

static int kueue_why(const void *state, const fs_model_t *m, uint32_t slot, char *buf, size_t n)
{
    const fs_jobrt_t *j = fs_model_job((fs_model_t *)m, slot);
    const char *tn = fs_model_tenant_name(m, j->job.tenant);
    char why[300];
    if (fs_kueue_probe(state, tn, (int64_t)fs_jobq_milli(&j->job), why, sizeof why))
        return 0;
    snprintf(buf, n, "%s", why);
    return 1;
}

static void kq_stats(const void *state, fs_policy_stats_t *out)
{
    const fs_kueue_stats_t *st = fs_kueue_stats(state);
    out->admissions = st->admitted;
    out->admissions_borrowing = st->borrowed;
    out->reclaims = st->reclaimed;
}

const fs_policy_ops_t fs_policy_kueue = {
    .name = "kueue",
    .check = kueue_check,
    .why_waiting = kueue_why,
    .probe_create = fs_kueue_probe_create,
    .probe = fs_kueue_probe,
    .probe_destroy = fs_kueue_probe_destroy,
    .create = kueue_create,
    .destroy = kueue_destroy,
    .enqueue = kueue_enqueue,
    .pass = kueue_pass,
    .queued = kueue_queued,
    .job_end = kueue_job_end,
    .job_interrupted = kueue_job_end,
    .stats = kq_stats,
    .withdraw = kueue_withdraw,
    .with_pods = kueue_with_pods,
};

size_t fs_kueue_n_cq(const void *state) { return ((const kueue_t *)state)->n_cq; }

int fs_kueue_quota_hours(void *state, fs_model_t *m, size_t cq, double *borrowed, double *lent)
{
    kueue_t *k = state;
    if (cq >= k->n_cq)
        return FS_EINVAL;
    quota_settle(k, fs_model_now(m));
    *borrowed = k->cq[cq].borrowed_mus / 1000.0 / 1e6 / 3600.0;
    *lent = k->cq[cq].lent_mus / 1000.0 / 1e6 / 3600.0;
    return 0;
}

int32_t fs_kueue_tenant_cq(void *state, fs_model_t *m, int32_t tenant)
{
    int oom = 0;
    int32_t c = tenant_cq(state, m, tenant, &oom);
    return oom || c < 0 ? -1 : c;
}
