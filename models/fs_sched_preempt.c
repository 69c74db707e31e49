/*
 * fs_sched_preempt: the composable scheduler's preemptive passes
 * (fs_sched_int.h): every active job sorted by the order's keys, GPUs handed
 * out greedily, or (fast path) the pass the order plans itself.
 */
#include "fs_sched_int.h"

#include <string.h>

/* Every active job (running or queued) in order; GPUs handed out greedily
 * by count (the Tiresias simulator's allocation); running jobs left out are
 * preempted, queued jobs let in are started.  Ties keep the previous pass's
 * order (a stable sort). */
int fs_spre_pass(sched_t *s, fs_model_t *m)
{
    if (fs_sched_scratch(s, s->queued + s->running))
        return FS_ENOMEM;
    size_t n = fs_sched_collect_queued(s);
    for (uint32_t p = 0; p < s->n_run; p++)
        fs_sched_collect(s, s->run[p], &n);
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
            rc = fs_sched_preempt(s, m, x - 1);
    }
    for (size_t r = 0; r < n && !rc; r++) {
        uint32_t x = s->scr[ix[r]];
        if (s->want[ix[r]] && fs_model_job(m, x - 1)->state == FS_JOBRT_QUEUED) {
            int st = fs_sched_start(s, m, x - 1);
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

/* The preemptive pass planned by the order (fs_order.h plan: no collection
 * from the treaps, no key call, no sort, no walk over all jobs): the same
 * preemptions and starts in the same order as fs_spre_pass, whose sort and greedy
 * give them when keys are unique.  (The ranks that break fs_spre_pass's ties are
 * not kept: the fast path is chosen before the first job and stays.) */
int fs_spre_plan(sched_t *s, fs_model_t *m)
{
    const uint32_t *pre, *go;
    size_t n_pre, n_go;
    int rc = s->ord->plan(s->ost, m, fs_model_cluster(m)->gpus_up, s->strict, &pre, &n_pre, &go,
                          &n_go);
    for (size_t i = 0; i < n_pre && !rc; i++)
        rc = fs_sched_preempt(s, m, pre[i]);
    for (size_t i = 0; i < n_go && !rc; i++) {
        int st = fs_sched_start(s, m, go[i]);
        if (st < 0)
            rc = st;
    }
    if (!rc && s->ord->after_pass)
        rc = s->ord->after_pass(s->ost, m);
    return rc;
}
