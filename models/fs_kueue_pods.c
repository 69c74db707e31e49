/*
 * fs_kueue_pods: what Kueue would admit by quota alone
 * (fs_policy_ops_t.with_pods; fs_kueue_int.h).
 */
#include "fs_kueue_int.h"

#include <stdlib.h>

/* ---- pods: what Kueue would admit by quota (fs_policy_ops_t.with_pods) ------
 * In Kubernetes a workload's pods exist once Kueue admits it, which takes
 * quota only; its pods then wait for nodes, and those are the pending pods
 * the cluster autoscaler scales up for.  Here admission also places the
 * job, so a job with quota but no nodes stays queued: this is the list of
 * queued jobs Kueue would admit now were the nodes there.  The pass runs
 * as fs_kadm_pass does (rounds of CQ heads in fs_kadm_entry_cmp order, BestEffortFIFO
 * / StrictFIFO blocking), from the quota in use now, every admission
 * taking quota as it goes; a head that would need preemption is not
 * admitted (its victims go first, in a real pass).  The quota is given
 * back afterwards, as it was.  Each class's heap is read in order through
 * a heap of its positions, so the cost is O(admitted x log + CQs x classes
 * per round), not the queue's length. */

static int vbetter(fs_model_t *m, const kcls_t *h, size_t x, size_t y)
{
    return fs_kqueue_better(m, h->a[x], h->a[y]);
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

/* The CQ's next job in the pass (fs_kqueue_head over the positions read so far). */
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
        if (best == UINT32_MAX || fs_kqueue_better(m, s, best))
            best = s;
    }
    return best;
}

int fs_kpods_with_pods(void *state, fs_model_t *m, uint8_t *mark)
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
            if (!fs_kadm_entry_add(k, m, c, h, &ne)) {
                rc = FS_ENOMEM;
                break;
            }
        }
        nact = keep;
        if (rc || ne == 0)
            break;
        qsort(k->ent, ne, sizeof *k->ent, fs_kadm_entry_cmp);
        for (size_t i = 0; i < ne && !rc; i++) {
            entry_t e = k->ent[i];
            kcq_t *q = &k->cq[e.cq];
            kcls_t *h = &q->cls[k->jobs[e.slot].shape];
            if (i > 0)
                fs_kadm_assign(k, m, e.cq, e.slot, &e);
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
            k->vlog[nlog++] = (struct vlog){e.cq, e.a};
            fs_kquota_add_asg(k, q, &e.a, 1);
            mark[e.slot] = 1;
            rc = vpop(m, h);
        }
    }
    while (nlog > 0) {  /* the quota in use as it was */
        const struct vlog *v = &k->vlog[--nlog];
        fs_kquota_add_asg(k, &k->cq[v->cq], &v->a, -1);
    }
    return rc;
}
