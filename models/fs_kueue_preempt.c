/*
 * fs_kueue_preempt: Kueue's classic preemption (fs_kueue_int.h): candidates
 * within the CQ and reclaimed from borrowing CQs of the cohort, Kueue's
 * minimal set of targets, and the eviction of each.
 */
#include "fs_kueue_int.h"

#include <string.h>

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
                               .aseq = kj->admit_seq};
    return 0;
}

/* Does admitted job v use one of the flavor-resources `need` of assignment
 * a (Kueue's classical.WorkloadUsesResources)? */
static int uses(const kueue_t *k, uint32_t v, const kasg_t *a, unsigned need)
{
    for (int r = 0; r < KR; r++)
        if ((need & KR_BIT(r)) && k->jobs[v].a.fl[r] == a->fl[r])
            return 1;
    return 0;
}

/* Candidates for the preemptor of entry e (k->cand, unsorted): Kueue's
 * findCandidates (pkg/scheduler/preemption/preemption.go) over the
 * flavor-resources that need preemption. */
static int find_candidates(kueue_t *k, fs_model_t *m, const entry_t *e, size_t *n)
{
    uint32_t c = e->cq;
    const kcq_t *q = &k->cq[c];
    const fs_jobrt_t *w = fs_model_job(m, e->slot);
    *n = 0;
    if (q->within != FS_KUEUE_NEVER)
        for (size_t i = 0; i < q->n_run; i++) {
            uint32_t v = q->run[i];
            const fs_jobrt_t *j = fs_model_job(m, v);
            if (!uses(k, v, &e->a, e->need))
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
            if (h->cqs[i] == c || !fs_kquota_borrowing_in(d, &e->a, e->need))
                continue;
            for (size_t r = 0; r < d->n_run; r++) {
                uint32_t v = d->run[r];
                if (!uses(k, v, &e->a, e->need))
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

/* A candidate's quota out of (sign -1) or back into (+1) its CQ. */
static void cand_quota(kueue_t *k, const cand_t *v, int sign)
{
    fs_kquota_add_asg(k, &k->cq[v->cq], &k->jobs[v->slot].a, sign);
}

static void minimal(kueue_t *k, const entry_t *e, cand_t *cand, size_t n, int allow, int64_t limit,
                    size_t *nt)
{
    kcq_t *q = &k->cq[e->cq];
    *nt = 0;
    /* fast fail: not even all of them together make room */
    for (size_t i = 0; i < n; i++)
        cand_quota(k, &cand[i], -1);
    int any = fs_kquota_fits_asg(k, q, &e->a, allow);
    for (size_t i = 0; i < n; i++)
        cand_quota(k, &cand[i], 1);
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
        if (d != q && !fs_kquota_borrowing_in(d, &e->a, e->need))
            continue;
        if (d != q && limit != NONE && v.prio >= limit)
            allow = 0;
        cand_quota(k, &v, -1);
        v.keep = 1;
        tk[taken++] = v;
        ok = fs_kquota_fits_asg(k, q, &e->a, allow);
    }
    if (!ok) {
        for (size_t i = 0; i < taken; i++)
            cand_quota(k, &tk[i], 1);
        return;
    }
    for (size_t i = taken - 1; i-- > 0;) {   /* fill back all but the last */
        cand_quota(k, &tk[i], 1);
        if (fs_kquota_fits_asg(k, q, &e->a, allow))
            tk[i].keep = 0;
        else
            cand_quota(k, &tk[i], -1);
    }
    for (size_t i = 0; i < taken; i++)
        if (tk[i].keep) {
            cand_quota(k, &tk[i], 1);
            cand[(*nt)++] = tk[i];
        }
}

/* An upper bound of what preemption could free for the preemptor of
 * entry e: per resource that needs preemption, the usage of the jobs that
 * the policies allow to take (by priority, all flavors).  If even that
 * much more would not make room in one of them, there is no need to look
 * at the candidates one by one. */
static int hopeless(kueue_t *k, fs_model_t *m, const entry_t *e)
{
    uint32_t c = e->cq;
    const kcq_t *q = &k->cq[c];
    int32_t pw = fs_model_job(m, e->slot)->job.priority;
    for (int r = 0; r < KR; r++) {
        if (!(e->need & KR_BIT(r)))
            continue;
        uint32_t f = (uint32_t)e->a.fl[r];
        int64_t bound = 0;
        if (q->within != FS_KUEUE_NEVER)
            bound += fs_kquota_prio_below(q, pw, q->within == FS_KUEUE_LOWER_OR_NEWER_EQUAL, r);
        if (q->cohort >= 0 && q->reclaim != FS_KUEUE_NEVER) {
            const kcoh_t *h = &k->coh[q->cohort];
            for (size_t i = 0; i < h->n; i++) {
                const kcq_t *d = &k->cq[h->cqs[i]];
                if (h->cqs[i] != c && fs_kquota_borrowing_in(d, &e->a, e->need))
                    bound += fs_kquota_prio_below(d, q->reclaim == FS_KUEUE_ANY ? INT32_MAX : pw,
                                                  q->reclaim == FS_KUEUE_ANY, r);
            }
        }
        if (fs_kquota_available(k, q, f, r) + bound < e->a.req[r])
            return 1;
    }
    return 0;
}

/* Kueue's classic preemption (classicalPreemptions): targets for the
 * preemptor of entry e, left in k->work[0..*nt). */
int fs_kpre_targets(kueue_t *k, fs_model_t *m, const entry_t *e, size_t *nt)
{
    size_t n;
    *nt = 0;
    if (hopeless(k, m, e))
        return 0;
    int rc = find_candidates(k, m, e, &n);
    if (rc || n == 0)
        return rc;
    if (fs_grow((void **)&k->work, &k->cap_work, n, sizeof *k->work) ||
        fs_grow((void **)&k->taken, &k->cap_taken, n, sizeof *k->taken))
        return FS_ENOMEM;
    const kcq_t *q = &k->cq[e->cq];
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += !k->cand[i].other;
    if (same == n) {   /* nothing to take from others: preempt own, may borrow */
        memcpy(k->work, k->cand, n * sizeof *k->work);
        minimal(k, e, k->work, n, 1, NONE, nt);
        return 0;
    }
    size_t wn = 0;
    int64_t limit = NONE;
    int allow = 0;
    if (q->bwc != FS_KUEUE_NEVER) {
        allow = 1;
        limit = q->has_thr ? q->thr + 1 : fs_model_job(m, e->slot)->job.priority;
        /* under nominal in every resource that needs preemption (Kueue's
         * queueUnderNominalInResourcesNeedingPreemption) */
        int under = 1;
        for (int r = 0; r < KR; r++)
            if (e->need & KR_BIT(r)) {
                const kres_t *x = fs_kquota_res(q, (uint32_t)e->a.fl[r], r);
                under &= x->usage < x->nominal;
            }
        for (size_t i = 0; i < n; i++)
            if (under || !k->cand[i].other || k->cand[i].prio < limit)
                k->work[wn++] = k->cand[i];
    } else {
        memcpy(k->work, k->cand, n * sizeof *k->work);
        wn = n;
    }
    minimal(k, e, k->work, wn, allow, limit, nt);
    if (*nt == 0 && same) { /* again: own workloads only, borrowing */
        wn = 0;
        for (size_t i = 0; i < n; i++)
            if (!k->cand[i].other)
                k->work[wn++] = k->cand[i];
        minimal(k, e, k->work, wn, 1, NONE, nt);
    }
    return 0;
}

/* Preempts one victim: the model's mechanics (lost work, restart cost),
 * its quota back, and back into its CQ. */
int fs_kpre_evict(kueue_t *k, fs_model_t *m, uint32_t v, uint32_t by_cq)
{
    int32_t c = k->jobs[v].cq;
    int rc = fs_kquota_release(k, m, v);
    if (!rc)
        rc = fs_model_preempt(m, v);
    if (rc)
        return rc;
    k->st.preempted++;
    k->st.reclaimed += c != (int32_t)by_cq;
    if (k->record && fs_kueue_log_id(&k->vic, &k->n_vic, &k->cap_vic, fs_model_job(m, v)->job.id))
        return FS_ENOMEM;
    return fs_kqueue_job(k, m, v, c);
}
