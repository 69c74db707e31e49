/*
 * fs_kueue_int.h: the Kueue policy's private state, shared by its files in
 * models/ only (the public face is fs_kueue.h; docs/policies.md "Kueue").
 *
 *   fs_kueue.c          the policy's ops, instrumentation  fs_kueue_
 *   fs_kueue_queue.c    queued workloads: class heaps, active CQs, tenants  fs_kqueue_
 *   fs_kueue_quota.c    ClusterQueue and cohort quota: usage, borrowing and
 *                       lending, fair sharing's share, the invariants  fs_kquota_
 *   fs_kueue_admit.c    the admission pass: flavor assignment, entry order  fs_kadm_
 *   fs_kueue_preempt.c  Kueue's classic preemption: candidates, targets  fs_kpre_
 *   fs_kueue_pods.c     what Kueue would admit by quota alone (with_pods)  fs_kpods_
 *   fs_kueue_setup.c    flavors, ClusterQueues and cohorts from the
 *                       configuration; the probe of validate  fs_kset_
 */
#ifndef FS_KUEUE_INT_H
#define FS_KUEUE_INT_H

#include "fs_kueue.h"
#include "fs_policy.h"
#include "fs_shape.h"
#include "../sim/fs_alloc.h"

#define NONE INT64_MAX
#define NO_CQ (-1)
#define UNSEEN (-2)

enum { MODE_NOFIT = 0, MODE_PREEMPT = 1, MODE_FIT = 2 };
enum { J_NONE = 0, J_QUEUED = 1, J_ADMITTED = 2, J_UNMAPPED = 3 };

/* Resources (enum fs_kueue_resource): quota and usage are kept per CQ x
 * flavor x resource, in milli-GPUs, milli-cores, bytes and milli-pods. */
#define KR FS_KRES_N
#define KR_BIT(r) (1u << (r))

typedef struct kres {       /* one CQ x one flavor x one resource */
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
    uint32_t *fl;           /* its flavors: resource group by group, each in the order tried */
    size_t n_fl;
    uint8_t ng;             /* resource groups */
    uint8_t gmask[KR];      /* the resources each covers (KR_BIT) */
    uint32_t gend[KR];      /* group g's flavors are fl[gend[g-1] .. gend[g]) */
    uint8_t cover;          /* all the resources it covers */
    uint32_t node_gpus;     /* the most GPUs per node in its flavors' pools (a gang's pods) */
    kres_t *res;            /* per flavor of the policy x resource: res[f * KR + r] */
    kcls_t *cls;            /* by shape index */
    size_t n_cls;
    uint32_t *run;          /* admitted slots */
    size_t n_run, cap_run;
    size_t pending;
    int32_t hcls;           /* cached head class (-1: none), valid while hok */
    uint8_t hok;
    int32_t *pv;            /* distinct priorities of admitted jobs, ascending */
    int64_t *pu;            /* their usage (all flavors) per resource: pu[i * KR + r] */
    size_t n_pv, cap_pv, cap_pu;
    uint8_t active, blocked, node_blocked, vblocked;
    double borrowed_us[KR], lent_us[KR]; /* quota borrowed from / lent to the cohort per
                                            resource, its units (milli-GPUs, ...) x us */
} kcq_t;

typedef struct kcoh {
    char *name;
    int64_t *quota, *usage; /* per flavor x resource ([f * KR + r]): sum of lendable; sum of
                               max(0, usage - guaranteed) */
    int64_t lendable_total[KR]; /* per resource, all flavors (fair sharing) */
    uint32_t *cqs;
    size_t n;
} kcoh_t;

typedef struct kflavor {
    char *name;
    uint8_t *mask;          /* per pool */
    uint32_t *pools;
    size_t n_pools;
} kflavor_t;

/* A job's assignment: per resource its flavor (-1: not assigned) and the
 * quota it takes there. */
typedef struct kasg {
    int32_t fl[KR];
    int64_t req[KR];
} kasg_t;

typedef struct kjob {
    int32_t cq;
    uint32_t shape, run_idx;
    uint64_t admit_seq;
    kasg_t a;               /* the quota reserved while admitted */
    uint64_t admit_pass;    /* the pass that admitted it */
    uint8_t in;
} kjob_t;

typedef struct cand {       /* a preemption candidate */
    uint32_t slot;
    int32_t cq, prio;
    int other;              /* in another CQ than the preemptor's */
    uint64_t aseq;          /* admission order */
    uint8_t keep;
} cand_t;

typedef struct tmap {       /* tenant name -> CQ */
    char *tenant;
    int32_t cq;
} tmap_t;

typedef struct entry {
    uint32_t cq, slot;
    int mode, borrow;
    kasg_t a;               /* the flavor assignment and request */
    uint8_t need;           /* resources whose flavor needs preemption (KR_BIT) */
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
    uint8_t used;           /* the resources counted (KR_BIT): nvidia.com/gpu, and the
                               others where some CQ covers them */
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
    struct vlog { uint32_t cq; kasg_t a; } *vlog; /* its quota taken */
    size_t cap_vlog;
    /* instrumentation */
    fs_kueue_stats_t st;
    int check_on, record;
    uint64_t *adm, *vic;
    size_t n_adm, cap_adm, n_vic, cap_vic;
    char why[200];          /* what went wrong in this pass ("" nothing): the run's error */
} kueue_t;

/* ---- quota arithmetic (fs_kueue_quota.c) ------------------------------------------ */

static inline int64_t fs_kquota_pos(int64_t x) { return x > 0 ? x : 0; }

static inline kres_t *fs_kquota_res(const kcq_t *c, uint32_t f, int r)
{
    return &c->res[(size_t)f * KR + (size_t)r];
}

static inline int64_t fs_kquota_available(const kueue_t *k, const kcq_t *c, uint32_t f, int r)
{
    const kres_t *q = fs_kquota_res(c, f, r);
    if (c->cohort < 0)
        return q->nominal - q->usage;
    const kcoh_t *h = &k->coh[c->cohort];
    size_t i = (size_t)f * KR + (size_t)r;
    int64_t local = fs_kquota_pos(q->guaranteed - q->usage);
    int64_t parent = h->quota[i] - h->usage[i];
    if (q->blimit != NONE) {
        int64_t stored = q->nominal - q->guaranteed;
        int64_t cap = stored - fs_kquota_pos(q->usage - q->guaranteed) + q->blimit;
        if (cap < parent)
            parent = cap;
    }
    return local + parent;
}

/* What the CQ could get with no usage of its own (preemption may help up
 * to this much when it may borrow while preempting). */
static inline int64_t fs_kquota_potential(const kueue_t *k, const kcq_t *c, uint32_t f, int r)
{
    const kres_t *q = fs_kquota_res(c, f, r);
    if (c->cohort < 0)
        return q->nominal;
    int64_t parent = k->coh[c->cohort].quota[(size_t)f * KR + (size_t)r];
    if (q->blimit != NONE && q->nominal - q->guaranteed + q->blimit < parent)
        parent = q->nominal - q->guaranteed + q->blimit;
    return q->guaranteed + parent;
}

static inline void fs_kquota_add(kueue_t *k, kcq_t *c, uint32_t f, int r, int64_t d)
{
    kres_t *q = fs_kquota_res(c, f, r);
    int64_t before = fs_kquota_pos(q->usage - q->guaranteed);
    q->usage += d;
    if (c->cohort >= 0)
        k->coh[c->cohort].usage[(size_t)f * KR + (size_t)r] +=
            fs_kquota_pos(q->usage - q->guaranteed) - before;
}

/* Adds sign x the assignment's quota to CQ c. */
static inline void fs_kquota_add_asg(kueue_t *k, kcq_t *c, const kasg_t *a, int sign)
{
    for (int r = 0; r < KR; r++)
        if (a->fl[r] >= 0)
            fs_kquota_add(k, c, (uint32_t)a->fl[r], r, sign * a->req[r]);
}

static inline int fs_kquota_fits(const kueue_t *k, const kcq_t *c, uint32_t f, int r, int64_t req,
                                 int allow_borrow)
{
    if (!allow_borrow && fs_kquota_res(c, f, r)->usage + req > fs_kquota_res(c, f, r)->nominal)
        return 0;
    return req <= fs_kquota_available(k, c, f, r);
}

/* Every resource of the assignment fits (Kueue's workloadFits). */
static inline int fs_kquota_fits_asg(const kueue_t *k, const kcq_t *c, const kasg_t *a, int allow_borrow)
{
    for (int r = 0; r < KR; r++)
        if (a->fl[r] >= 0 && !fs_kquota_fits(k, c, (uint32_t)a->fl[r], r, a->req[r], allow_borrow))
            return 0;
    return 1;
}

static inline int fs_kquota_borrowing(const kcq_t *q, uint32_t f, int r)
{
    return fs_kquota_res(q, f, r)->usage > fs_kquota_res(q, f, r)->nominal;
}

/* CQ q borrows in one of the resources `need` of assignment a (Kueue's
 * cqIsBorrowing over the flavor-resources that need preemption). */
static inline int fs_kquota_borrowing_in(const kcq_t *q, const kasg_t *a, unsigned need)
{
    for (int r = 0; r < KR; r++)
        if ((need & KR_BIT(r)) && fs_kquota_borrowing(q, (uint32_t)a->fl[r], r))
            return 1;
    return 0;
}

/* Dominant resource share of CQ c with assignment a more (fair sharing). */
int64_t fs_kquota_drs(const kueue_t *k, const kcq_t *c, const kasg_t *a);
/* Usage of resource r of CQ q's jobs with priority < prio (<= prio with eq). */
int64_t fs_kquota_prio_below(const kcq_t *q, int32_t prio, int eq, int r);
/* The admitted job's quota taken (assignment a); an admitted job's given back. */
int fs_kquota_admit(kueue_t *k, fs_model_t *m, uint32_t slot, const kasg_t *a);
int fs_kquota_release(kueue_t *k, fs_model_t *m, uint32_t slot);

/* ---- queued workloads (fs_kueue_queue.c) ---------------------------------------------- */

/* A job's pods as Kueue counts them (a Job's podset count: one pod per
 * node of a multi-node job): a pod (FS_JOB_SINGLE_NODE) or a MIG job is
 * one; a gang of g GPUs is ceil(g / G) pods, G the most GPUs per node in
 * the pools of CQ c's flavors (the fewest pods of one node each that hold
 * its GPUs); without a CQ, one. */
static inline int64_t fs_kqueue_pods(const kueue_t *k, int32_t c, uint32_t gpus, unsigned flags,
                                     int32_t mig)
{
    if ((flags & FS_JOB_SINGLE_NODE) || mig || c < 0)
        return 1;
    uint32_t g = k->cq[c].node_gpus;
    return g == 0 || gpus <= g ? 1 : ((int64_t)gpus + g - 1) / g;
}

/* What a job asks of each resource the policy counts (k->used), in CQ c
 * (-1: none): its milli-GPUs; a pod's CPU (milli-cores) and memory (bytes)
 * (only pods carry them: the model places no CPU or memory for a gang);
 * its pods (fs_kqueue_pods, in milli-pods).  Others are 0. */
static inline void fs_kqueue_reqv_of(const kueue_t *k, int32_t c, uint32_t gpus, uint64_t milli,
                                     unsigned flags, int32_t mig, uint32_t cpu_milli,
                                     uint32_t mem_mib, int64_t *v)
{
    int pod = (flags & FS_JOB_SINGLE_NODE) != 0;
    v[FS_KRES_GPU] = (int64_t)milli;
    v[FS_KRES_CPU] = (k->used & KR_BIT(FS_KRES_CPU)) && pod ? (int64_t)cpu_milli : 0;
    v[FS_KRES_MEMORY] = (k->used & KR_BIT(FS_KRES_MEMORY)) && pod ? (int64_t)mem_mib << 20 : 0;
    v[FS_KRES_PODS] = k->used & KR_BIT(FS_KRES_PODS) ? 1000 * fs_kqueue_pods(k, c, gpus, flags, mig) : 0;
}

/* fs_kqueue_reqv_of for the job in slot, in CQ c. */
static inline void fs_kqueue_reqv(const kueue_t *k, fs_model_t *m, uint32_t slot, int32_t c, int64_t *v)
{
    const fs_jobq_t *j = &fs_model_job(m, slot)->job;
    fs_kqueue_reqv_of(k, c, j->gpus, fs_jobq_milli(j), j->flags, j->mig, j->cpu_milli, j->mem_mib, v);
}

static inline int fs_kqueue_better(fs_model_t *m, uint32_t a, uint32_t b)
{
    const fs_jobrt_t *x = fs_model_job(m, a), *y = fs_model_job(m, b);
    if (x->job.priority != y->job.priority)
        return x->job.priority > y->job.priority;
    return x->seq < y->seq;
}

void fs_kqueue_heap_remove_at(fs_model_t *m, kcls_t *h, size_t i);
void fs_kqueue_heap_pop(fs_model_t *m, kcls_t *h);
/* Room in k->jobs for slot.  0 or FS_ENOMEM. */
int fs_kqueue_grow_jobs(kueue_t *k, uint32_t slot);
/* CQ c (its cohort's CQs; the CQs blocked by nodes) may admit again. */
int fs_kqueue_wake(kueue_t *k, uint32_t c);
int fs_kqueue_wake_cohort(kueue_t *k, uint32_t c);
int fs_kqueue_wake_node_blocked(kueue_t *k);
int32_t fs_kqueue_cq_by_name(const kueue_t *k, const char *name);
/* The CQ a tenant named name goes to (NULL: a job without one): the first
 * CQ whose LocalQueues (tenants) list it, else the CQ of its name, else
 * default_queue; NO_CQ none.  The one rule for the run and its readers. */
int32_t fs_kqueue_cq_of_name(const kueue_t *k, const char *name);
/* The CQ of source tenant t (*oom set when out of memory). */
int32_t fs_kqueue_tenant_cq(kueue_t *k, fs_model_t *m, int32_t t, int *oom);
/* The best head of CQ q's unblocked classes, *cls its class; UINT32_MAX none. */
uint32_t fs_kqueue_head(const kueue_t *k, fs_model_t *m, kcq_t *q, size_t *cls);
/* Queues the job in CQ c. */
int fs_kqueue_job(kueue_t *k, fs_model_t *m, uint32_t slot, int32_t c);

/* ---- admission, preemption, pods --------------------------------------------------------- */

/* Kueue's flavor assignment of the job at the head of CQ c into e. */
void fs_kadm_assign(kueue_t *k, fs_model_t *m, uint32_t c, uint32_t slot, entry_t *e);
/* Appends to k->ent[*ne] the entry of job h at the head of CQ c: its
 * priority and order, flavor assignment and (fair sharing) dominant
 * resource share; the entry, or NULL when out of memory. */
entry_t *fs_kadm_entry_add(kueue_t *k, fs_model_t *m, uint32_t c, uint32_t h, size_t *ne);
/* The order of a cycle's entries (qsort). */
int fs_kadm_entry_cmp(const void *a, const void *b);
/* The admission pass (fs_policy_ops_t.pass). */
int fs_kadm_pass(void *state, fs_model_t *m);
/* Targets for entry e (its preemptor, CQ and assignment) into k->work[0..*nt). */
int fs_kpre_targets(kueue_t *k, fs_model_t *m, const entry_t *e, size_t *nt);
/* Preempts victim v for CQ by_cq and queues it again. */
int fs_kpre_evict(kueue_t *k, fs_model_t *m, uint32_t v, uint32_t by_cq);
/* fs_policy_ops_t.with_pods. */
int fs_kpods_with_pods(void *state, fs_model_t *m, uint8_t *mark);

/* ---- set-up (fs_kueue_setup.c), instrumentation (fs_kueue.c) ------------------------------- */

int fs_kset_build(const fs_sched_cfg_t *cfg, const fs_cluster_cfg_t *cl, void **state,
                  fs_error_t *err);
void fs_kset_destroy(void *state);
int32_t fs_kset_flavor_index(const kueue_t *k, const char *name);
/* Could a job asking req[] (fs_kqueue_reqv) of CQ c ever be admitted
 * (with no usage anywhere)?  1 yes; 0 no, with why set.  The CQ of a
 * tenant: fs_kset_probe_cq (NO_CQ with why set). */
int32_t fs_kset_probe_cq(const kueue_t *k, const char *tenant, char *why, size_t n);
int fs_kset_probe_req(const kueue_t *k, int32_t c, const int64_t *req, char *why, size_t n);
/* Appends id to the log *a (record only).  0 or FS_ENOMEM. */
int fs_kueue_log_id(uint64_t **a, size_t *n, size_t *cap, uint64_t id);

#endif
