/*
 * fs_kueue_queue: Kueue's queued workloads (fs_kueue_int.h): each CQ keeps a
 * heap per shape class by (priority desc, admission sequence asc); the
 * active CQs offer their heads to the next round; tenants map to CQs.
 */
#include "fs_kueue_int.h"

#include <string.h>

/* ---- jobs ------------------------------------------------------------------ */

static int heap_push(fs_model_t *m, kcls_t *h, uint32_t slot)
{
    if (fs_grow((void **)&h->a, &h->cap, h->n + 1, sizeof *h->a))
        return FS_ENOMEM;
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!fs_kqueue_better(m, slot, h->a[p]))
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
void fs_kqueue_heap_remove_at(fs_model_t *m, kcls_t *h, size_t i)
{
    uint32_t last = h->a[--h->n];
    if (i < h->n) {
        size_t at = i;
        while (at > 0 && fs_kqueue_better(m, last, h->a[(at - 1) / 2])) {
            h->a[at] = h->a[(at - 1) / 2];
            at = (at - 1) / 2;
        }
        while (at >= i) {       /* not moved up (at < i): down */
            size_t l = 2 * at + 1, b = at;
            uint32_t bv = last;
            if (l < h->n && fs_kqueue_better(m, h->a[l], bv))
                b = l, bv = h->a[l];
            if (l + 1 < h->n && fs_kqueue_better(m, h->a[l + 1], bv))
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

void fs_kqueue_heap_pop(fs_model_t *m, kcls_t *h) { fs_kqueue_heap_remove_at(m, h, 0); }

int fs_kqueue_grow_jobs(kueue_t *k, uint32_t slot)
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

int fs_kqueue_wake(kueue_t *k, uint32_t c)
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
int fs_kqueue_wake_cohort(kueue_t *k, uint32_t c)
{
    int32_t h = k->cq[c].cohort;
    if (h < 0)
        return fs_kqueue_wake(k, c);
    for (size_t i = 0; i < k->coh[h].n; i++) {
        int rc = fs_kqueue_wake(k, k->coh[h].cqs[i]);
        if (rc)
            return rc;
    }
    return 0;
}

int fs_kqueue_wake_node_blocked(kueue_t *k)
{
    for (size_t i = 0; i < k->n_nb; i++) {
        k->cq[k->nb[i]].node_blocked = 0;
        int rc = fs_kqueue_wake(k, k->nb[i]);
        if (rc)
            return rc;
    }
    k->n_nb = 0;
    return 0;
}

/* ---- tenants --------------------------------------------------------------- */

int32_t fs_kqueue_cq_by_name(const kueue_t *k, const char *name)
{
    for (size_t i = 0; name && i < k->n_cq; i++)
        if (strcmp(k->cq[i].name, name) == 0)
            return (int32_t)i;
    return NO_CQ;
}

/* The CQ of source tenant t: a LocalQueue mapping, else the CQ named like
 * the tenant, else default_queue, else none. */
int32_t fs_kqueue_tenant_cq(kueue_t *k, fs_model_t *m, int32_t t, int *oom)
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
    return k->tenant_cq[t] = fs_kqueue_cq_of_name(k, fs_source_tenant_name(fs_model_source(m), t));
}

int32_t fs_kqueue_cq_of_name(const kueue_t *k, const char *name)
{
    int32_t c = NO_CQ;
    for (size_t i = 0; name && i < k->n_tm && c == NO_CQ; i++)
        if (strcmp(k->tm[i].tenant, name) == 0)
            c = k->tm[i].cq;
    if (c == NO_CQ)
        c = fs_kqueue_cq_by_name(k, name);
    return c == NO_CQ ? k->default_cq : c;
}

/* ---- queueing ---------------------------------------------------------------- */

/* The best head of CQ c's unblocked classes (strict: of all classes, none
 * when the CQ is blocked); *cls its class.  UINT32_MAX if none. */
uint32_t fs_kqueue_head(const kueue_t *k, fs_model_t *m, kcq_t *q, size_t *cls)
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

int fs_kqueue_job(kueue_t *k, fs_model_t *m, uint32_t slot, int32_t c)
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
    for (int r = 0; r < KR; r++)
        kj->a.fl[r] = -1;
    kj->in = J_QUEUED;
    q->pending++;
    k->queued++;
    if (h->a[0] != slot)
        return 0;   /* not a new class head: nothing changes */
    h->blocked = 0;
    if (q->strict && q->blocked) {
        size_t cls;
        q->blocked = 0;
        if (fs_kqueue_head(k, m, q, &cls) != slot) {
            q->blocked = 1;  /* the blocked head stays in front */
            return 0;
        }
    }
    return activate(k, (uint32_t)c);
}
