/*
 * fs_kueue_admit: Kueue's admission pass (fs_kueue_int.h): every active CQ
 * offers its head, the heads are ordered as Kueue orders a cycle's entries
 * (no borrowing first, then fair sharing's share, priority, age), and each
 * is admitted in the first flavor with quota, after preemption where it may
 * help, or blocks its class (BestEffortFIFO) or CQ (StrictFIFO).
 */
#include "fs_kueue_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The mode of flavor f for the resources `want` of request req, per
 * resource as Kueue's flavorassigner (pkg/scheduler/flavorassigner/
 * flavorassigner.go, fitsResourceQuota): Fit when it fits now; Preempt
 * when preemption may help (the request fits in the nominal quota, or with
 * borrowWithinCohort in what the cohort could lend); else NoFit.  The
 * flavor's mode is its worst resource's; *need: its resources in Preempt. */
static int flavor_mode(const kueue_t *k, const kcq_t *q, uint32_t f, unsigned want, const int64_t *req,
                       unsigned *need)
{
    int mode = MODE_FIT;
    *need = 0;
    for (int r = 0; r < KR; r++) {
        if (!(want & KR_BIT(r)))
            continue;
        if (req[r] <= fs_kquota_available(k, q, f, r))
            continue;
        if (can_preempt(q) && (req[r] <= fs_kquota_res(q, f, r)->nominal ||
                               (q->bwc != FS_KUEUE_NEVER && req[r] <= fs_kquota_potential(k, q, f, r)))) {
            mode = MODE_PREEMPT;
            *need |= KR_BIT(r);
        } else
            return MODE_NOFIT;
    }
    return mode;
}

/* Kueue's flavor assignment (whenCanBorrow: Borrow, whenCanPreempt:
 * TryNextFlavor), one resource group at a time: in each group whose
 * resources the job asks for, the first flavor where all of them fit now,
 * else the first where preemption may help for those that do not (a
 * group's resources all go to one flavor).  A job asking none of its CQ's
 * resources is assigned in the first group (its flavor gives its pools).
 * A resource asked for that no group of the CQ covers: NoFit (Kueue: the
 * resource is unavailable in the ClusterQueue). */
void fs_kadm_assign(kueue_t *k, fs_model_t *m, uint32_t c, uint32_t slot, entry_t *e)
{
    const kcq_t *q = &k->cq[c];
    int64_t req[KR];
    fs_kqueue_reqv(k, m, slot, (int32_t)c, req);
    unsigned asked = 0;
    for (int r = 0; r < KR; r++) {
        e->a.fl[r] = -1;
        e->a.req[r] = req[r];
        asked |= req[r] > 0 ? KR_BIT(r) : 0;
    }
    e->mode = MODE_NOFIT;
    e->borrow = 0;
    e->need = 0;
    if (asked & ~(unsigned)q->cover)
        return;
    int mode = MODE_FIT, any = 0;
    for (unsigned g = 0; g < q->ng; g++) {
        unsigned want = q->gmask[g] & asked;
        if (!want) {
            if (asked || g > 0)
                continue;
            want = q->gmask[0];     /* asks nothing: the first group, for its pools */
        }
        any = 1;
        int gm = MODE_NOFIT;
        int32_t gf = -1;
        unsigned gneed = 0;
        for (size_t i = g ? q->gend[g - 1] : 0; i < q->gend[g]; i++) {
            uint32_t f = q->fl[i];
            if (!eligible(k, m, slot, f))
                continue;
            unsigned need;
            int fm = flavor_mode(k, q, f, want, req, &need);
            if (fm == MODE_FIT) {
                gm = MODE_FIT;
                gf = (int32_t)f;
                gneed = 0;
                break;
            }
            if (fm == MODE_PREEMPT && gm == MODE_NOFIT) {
                gm = MODE_PREEMPT;
                gf = (int32_t)f;
                gneed = need;
            }
        }
        if (gm == MODE_NOFIT) {
            for (int r = 0; r < KR; r++)
                e->a.fl[r] = -1;
            e->need = 0;
            return;
        }
        if (gm < mode)
            mode = gm;
        e->need |= (uint8_t)gneed;
        for (int r = 0; r < KR; r++)
            if (want & KR_BIT(r))
                e->a.fl[r] = gf;
    }
    if (!any)
        return;
    e->mode = mode;
    for (int r = 0; r < KR; r++)
        if (e->a.fl[r] >= 0) {
            const kres_t *x = fs_kquota_res(q, (uint32_t)e->a.fl[r], r);
            e->borrow |= x->usage + req[r] > x->nominal;
        }
}

/* Starts the job in the pools of every flavor it was assigned (their
 * intersection with its own): 1 started, 0 no room, or an error. */
static int place(kueue_t *k, fs_model_t *m, uint32_t slot, const kasg_t *a)
{
    uint32_t f0 = UINT32_MAX;
    for (int r = 0; r < KR && f0 == UINT32_MAX; r++)
        if (a->fl[r] >= 0)
            f0 = (uint32_t)a->fl[r];
    size_t n = job_flavor_pools(k, m, slot, f0);
    const uint32_t *src = k->pools;
    if (n == SIZE_MAX) {
        src = k->fl[f0].pools;
        n = k->fl[f0].n_pools;
    }
    size_t keep = 0;    /* in every other assigned flavor too, in order */
    for (size_t i = 0; i < n; i++) {
        int in = 1;
        for (int r = 0; r < KR && in; r++)
            if (a->fl[r] >= 0 && (uint32_t)a->fl[r] != f0)
                in = k->fl[a->fl[r]].mask[src[i]];
        if (in)
            k->pools[keep++] = src[i];
    }
    return fs_model_start_in(m, slot, k->pools, keep);
}

enum { TRY_ADMITTED = 0, TRY_QUOTA = 1, TRY_NODES = 2 };

static int try_admit(kueue_t *k, fs_model_t *m, const entry_t *e, int *out)
{
    kcq_t *q = &k->cq[e->cq];
    *out = TRY_QUOTA;
    if (e->mode == MODE_NOFIT)
        return 0;
    if (e->mode == MODE_PREEMPT) {
        size_t nt;
        int rc = fs_kpre_targets(k, m, e, &nt);
        if (rc || nt == 0)
            return rc;
        for (size_t i = 0; i < nt && !rc; i++)
            rc = fs_kpre_evict(k, m, k->work[i].slot, e->cq);
        if (rc)
            return rc;
        if (!fs_kquota_fits_asg(k, q, &e->a, 1))
            return 0;
    }
    int rc = place(k, m, e->slot, &e->a);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        *out = TRY_NODES;
        return 0;
    }
    kcls_t *h = &q->cls[k->jobs[e->slot].shape];
    if (h->a[0] != e->slot)
        return snprintf(k->why, sizeof k->why, "job %llu: not the top of its class in "
                        "ClusterQueue '%s' (a bug)",
                        (unsigned long long)fs_model_job(m, e->slot)->job.id, q->name),
               FS_EINTERNAL;    /* the head is its class's top */
    fs_kqueue_heap_pop(m, h);
    q->hok = 0;
    q->pending--;
    k->queued--;
    *out = TRY_ADMITTED;
    if (fs_kquota_admit(k, m, e->slot, &e->a))
        return FS_ENOMEM;
    if (k->record && fs_kueue_log_id(&k->adm, &k->n_adm, &k->cap_adm, fs_model_job(m, e->slot)->job.id))
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

entry_t *fs_kadm_entry_add(kueue_t *k, fs_model_t *m, uint32_t c, uint32_t h, size_t *ne)
{
    if (fs_grow((void **)&k->ent, &k->cap_ent, *ne + 1, sizeof *k->ent))
        return NULL;
    entry_t *e = &k->ent[(*ne)++];
    const fs_jobrt_t *j = fs_model_job(m, h);
    e->cq = c;
    e->slot = h;
    e->prio = j->job.priority;
    e->seq = j->seq;
    fs_kadm_assign(k, m, c, h, e);
    e->drs = k->fair ? fs_kquota_drs(k, &k->cq[c], &e->a) : 0;
    return e;
}

int fs_kadm_entry_cmp(const void *a, const void *b)
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
        uint32_t h = fs_kqueue_head(k, m, &k->cq[c], &cls);
        if (h == UINT32_MAX) {
            k->cq[c].active = 0;
            continue;
        }
        k->act[keep++] = c;
        if (!fs_kadm_entry_add(k, m, c, h, ne))
            return FS_ENOMEM;
    }
    k->n_act = keep;
    return 0;
}

int fs_kadm_pass(void *state, fs_model_t *m)
{
    kueue_t *k = state;
    k->why[0] = '\0';
    const fs_cluster_t *cl = fs_model_cluster(m);
    int rc = 0;
    if (k->released || cl->gpus_up > k->up_seen)
        rc = fs_kqueue_wake_node_blocked(k);
    k->released = 0;
    k->pass_no++;
    while (!rc) {
        size_t ne;
        if ((rc = collect(k, m, &ne)) != 0 || ne == 0)
            break;
        qsort(k->ent, ne, sizeof *k->ent, fs_kadm_entry_cmp);
        uint64_t ev0 = k->st.preempted;
        for (size_t i = 0; i < ne && !rc; i++) {
            entry_t e = k->ent[i];
            size_t cls;
            /* an earlier entry may have changed this CQ (a victim came back) */
            if (k->st.preempted != ev0 && fs_kqueue_head(k, m, &k->cq[e.cq], &cls) != e.slot)
                continue;
            if (i > 0)
                fs_kadm_assign(k, m, e.cq, e.slot, &e);
            int out;
            if ((rc = try_admit(k, m, &e, &out)) != 0)
                break;
            if (out != TRY_ADMITTED)
                rc = block(k, &e, out);
            if (k->released) {  /* victims freed GPUs */
                k->released = 0;
                if (!rc)
                    rc = fs_kqueue_wake_node_blocked(k);
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
