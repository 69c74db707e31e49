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
                               .aseq = kj->admit_seq, .req = kj->req};
    return 0;
}

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
            if (h->cqs[i] == c || !fs_kquota_borrowing(d, f))
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
        fs_kquota_add(k, &k->cq[cand[i].cq], f, -cand[i].req);
    int any = fs_kquota_fits(k, q, f, req, allow);
    for (size_t i = 0; i < n; i++)
        fs_kquota_add(k, &k->cq[cand[i].cq], f, cand[i].req);
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
        if (d != q && !fs_kquota_borrowing(d, f))
            continue;
        if (d != q && limit != NONE && v.prio >= limit)
            allow = 0;
        fs_kquota_add(k, d, f, -v.req);
        v.keep = 1;
        tk[taken++] = v;
        ok = fs_kquota_fits(k, q, f, req, allow);
    }
    if (!ok) {
        for (size_t i = 0; i < taken; i++)
            fs_kquota_add(k, &k->cq[tk[i].cq], f, tk[i].req);
        return;
    }
    for (size_t i = taken - 1; i-- > 0;) {   /* fill back all but the last */
        kcq_t *d = &k->cq[tk[i].cq];
        fs_kquota_add(k, d, f, tk[i].req);
        if (fs_kquota_fits(k, q, f, req, allow))
            tk[i].keep = 0;
        else
            fs_kquota_add(k, d, f, -tk[i].req);
    }
    for (size_t i = 0; i < taken; i++)
        if (tk[i].keep) {
            fs_kquota_add(k, &k->cq[tk[i].cq], f, tk[i].req);
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
        bound += fs_kquota_prio_below(q, pw, q->within == FS_KUEUE_LOWER_OR_NEWER_EQUAL);
    if (q->cohort >= 0 && q->reclaim != FS_KUEUE_NEVER) {
        const kcoh_t *h = &k->coh[q->cohort];
        for (size_t i = 0; i < h->n; i++) {
            const kcq_t *d = &k->cq[h->cqs[i]];
            if (h->cqs[i] != c && fs_kquota_borrowing(d, f))
                bound += fs_kquota_prio_below(d, q->reclaim == FS_KUEUE_ANY ? INT32_MAX : pw,
                                    q->reclaim == FS_KUEUE_ANY);
        }
    }
    return fs_kquota_available(k, q, f) + bound < fs_kqueue_req(m, slot);
}

int fs_kpre_targets(kueue_t *k, fs_model_t *m, uint32_t c, uint32_t slot, uint32_t f,
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
    int64_t req = fs_kqueue_req(m, slot);
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
