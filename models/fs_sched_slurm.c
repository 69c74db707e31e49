/*
 * fs_sched_slurm: Slurm mode of the composable scheduler (fs_sched_int.h,
 * scheduler.bf.mode: slurm): the main scheduler that starts jobs in
 * priority order up to the first that cannot start, and what keeps its
 * bounded backfill pass fast: the running jobs' rounded ends kept sorted,
 * the first bf.max_job_test queued jobs merged from the classes' (or
 * bands') runs, and the pass ended at the profile's first dip below every
 * job left.
 */
#include "fs_sched_int.h"

#include <stdlib.h>

/* ---- main scheduler ---------------------------------------------------------------- */

/* Slurm's main scheduler: priority order, stops at the first job that
 * cannot start; the backfill pass runs every bf_interval (bf_due).  With
 * outages of cluster.outages ahead, a job starts only on nodes whose next
 * outage begins at or after its requested end (now + its estimate), as in
 * the backfill pass: Slurm's main scheduler (node_scheduler.c
 * _get_req_features, for a job without a reservation of its own) and its
 * backfill both leave out the nodes of a reservation that the job's time
 * limit would run into (reservation.c job_test_resv; docs/traces.md
 * "Backfill plans around outages").  A job held back by that is the first
 * that cannot start. */
int fs_sslurm_main(sched_t *s, fs_model_t *m)
{
    int out = fs_scons_outages(s, m);
    if (out < 0)
        return out;
    fs_time_t now = fs_model_now(m);
    while (s->queued > 0) {
        uint32_t head = 0;
        for (size_t c = 0; c < s->shapes.n; c++) {
            uint32_t h = s->cls[c].head;
            if (h && (!head || fs_stree_less(s->nd, s->k2, h, head)))
                head = h;
        }
        if (!fs_sched_fits(m, head))
            break;
        int rc = fs_scons_start_planned(s, m, head, now, fs_sched_plan_d(s, head, 0), out);
        if (rc < 0 || (rc == 0 && !out))
            return rc;
        if (rc == 0)
            break;
    }
    if (!s->bf_due || s->queued == 0)
        return 0;
    s->bf_due = 0;
    return 1;
}

/* ---- running ends ----------------------------------------------------------------
 * Slurm's backfill pass builds its profile from every running job's rounded
 * planned end.  Collecting them from the running treaps at each pass walks
 * every running node at random; the fast path keeps them sorted instead:
 * starts are appended to radd, a job that stops running moves its epoch on,
 * and a fold (at each backfill pass, or when radd grows) merges the sorted
 * starts into rc and drops the stale entries: sequential O(running + starts
 * log starts). */

static int rend_cmp(const void *a, const void *b)
{
    fs_time_t x = ((const rend_t *)a)->e, y = ((const rend_t *)b)->e;
    return x < y ? -1 : x > y;
}

/* Merges the live starts since the last fold into rc, dropping stale
 * entries on both sides.  0 or FS_ENOMEM. */
int fs_sslurm_fold(sched_t *s)
{
    size_t na = 0;
    for (size_t i = 0; i < s->n_radd; i++)
        if (s->rep[s->radd[i].x] == s->radd[i].ep)
            s->radd[na++] = s->radd[i];
    qsort(s->radd, na, sizeof *s->radd, rend_cmp);
    if (fs_grow((void **)&s->rc2, &s->rc2_cap, s->n_rc + na + 1, sizeof *s->rc2))
        return FS_ENOMEM;
    size_t i = 0, j = 0, k = 0;
    while (i < s->n_rc || j < na) {
        if (i < s->n_rc && s->rep[s->rc[i].x] != s->rc[i].ep) {
            i++;
        } else if (j < na && (i == s->n_rc || s->radd[j].e < s->rc[i].e)) {
            s->rc2[k++] = s->radd[j++];
        } else {
            s->rc2[k++] = s->rc[i++];
        }
    }
    rend_t *t = s->rc;
    size_t tc = s->rc_cap;
    s->rc = s->rc2;
    s->rc_cap = s->rc2_cap;
    s->rc2 = t;
    s->rc2_cap = tc;
    s->n_rc = k;
    s->n_radd = 0;
    return 0;
}

/* Node x starts running (its planned end set): a new epoch and entry.  0 or
 * FS_ENOMEM. */
int fs_sslurm_add(sched_t *s, uint32_t x)
{
    if (s->n_radd >= 2 * s->running + 64 && fs_sslurm_fold(s))
        return FS_ENOMEM;
    if (fs_grow((void **)&s->radd, &s->radd_cap, s->n_radd + 1, sizeof *s->radd))
        return FS_ENOMEM;
    const tnode_t *n = &s->nd[x];
    s->radd[s->n_radd++] = (rend_t){fs_sched_rounded_end(n, s->cfg->bf.resolution), x, ++s->rep[x], n->g};
    return 0;
}

/* ---- the first queued jobs ------------------------------------------------------------ */

/* A run's entry in fs_sslurm_first_queued's heap: its current node's keys
 * (copied: the comparisons stay in the heap's lines) and the run. */
typedef struct qhent {
    double k1, k2;
    uint32_t seq, run;
} qhent_t;

static int qh_less(const qhent_t *a, const qhent_t *b)
{
    if (a->k1 != b->k1)
        return a->k1 < b->k1;
    if (a->k2 != b->k2)
        return a->k2 < b->k2;
    return a->seq < b->seq;
}

/* Restores the heap h[0..n) from position i down. */
static void qheap_down(qhent_t *h, size_t n, size_t i)
{
    qhent_t e = h[i];
    for (;;) {
        size_t l = 2 * i + 1, b = l;
        if (l >= n)
            break;
        if (l + 1 < n && qh_less(&h[l + 1], &h[l]))
            b = l + 1;
        if (!qh_less(&h[b], &e))
            break;
        h[i] = h[b];
        i = b;
    }
    h[i] = e;
}

static qhent_t qh_entry(const sched_t *s, uint32_t x, uint32_t run)
{
    return (qhent_t){s->nd[x].k1, s->k2 ? s->k2[x] : 0, s->nd[x].seq, run};
}

/* A run of fs_sslurm_the merge: one treap read in order (a class's, a
 * band's or a loose one) from its first node, by an explicit stack of the
 * nodes still to visit, set up only when the run's first node is taken
 * (most runs give a pass one job or none).  A run whose path is deeper than
 * QSTK nodes finds each next node by a descent from its root instead. */
#define QSTK 48
typedef struct qrun {
    uint32_t root, cur;     /* its treap; the node it offers */
    uint32_t top;           /* stack size; UINT32_MAX: not set up */
    uint8_t seq;            /* in sequence order (a band), else by key */
    uint8_t deep;           /* stack overflowed: descents */
} qrun_t;

/* The node after run r's current one, 0 when it has no more. */
static uint32_t qrun_next(const sched_t *s, qrun_t *r, uint32_t *stk)
{
    const tnode_t *nd = s->nd;
    uint32_t x = r->cur;
    if (!r->deep && r->top == UINT32_MAX) {     /* the path to its first node */
        r->top = 0;
        for (uint32_t t = r->root; t && t != x && !r->deep; t = nd[t].l) {
            if (r->top == QSTK)
                r->deep = 1;
            else
                stk[r->top++] = t;
        }
    }
    if (!r->deep) {
        for (uint32_t t = nd[x].r; t && !r->deep; t = nd[t].l) {
            if (r->top == QSTK)
                r->deep = 1;
            else
                stk[r->top++] = t;
        }
        if (!r->deep)
            return r->top ? stk[--r->top] : 0;
    }
    return r->seq ? fs_stree_next_seq(nd, r->root, x) : fs_stree_next_key(nd, s->k2, r->root, x);
}

/* The first `want` queued jobs in order into scr[0..) (fast path): every
 * class treap is a run in key order; banded, every band is a run in
 * sequence order, which is its key order as of the last update (fs_order.h;
 * keys are refreshed as nodes are reached), and every loose treap a run in
 * key order.  A heap over the runs' current nodes gives the first `want`:
 * O(runs + want x log runs + the paths set up), where the rebuild at each
 * update was O(queue log queue) and collecting each class's first `want`
 * O(classes x want).  Returns the count or (size_t)-1 when out of memory. */
size_t fs_sslurm_first_queued(sched_t *s, fs_model_t *m, size_t want)
{
    size_t runs = 0;
    for (size_t c = 0; c < s->shapes.n; c++)
        runs += s->banded ? s->cls[c].nb + 1 : 1;
    if (fs_sched_scratch(s, want) ||
        fs_grow((void **)&s->tmp32, &s->tmp32_cap, QSTK * runs + 1, sizeof *s->tmp32) ||
        fs_grow((void **)&s->qh, &s->qh_cap, runs + 1, sizeof *s->qh) ||
        fs_grow((void **)&s->qr, &s->qr_cap, runs + 1, sizeof *s->qr))
        return (size_t)-1;
    qhent_t *h = s->qh;
    qrun_t *rs = s->qr;
    size_t n = 0;
    for (size_t c = 0; c < s->shapes.n; c++) {
        const cls_t *cl = &s->cls[c];
        for (uint32_t i = 0; s->banded && i < cl->nb; i++)
            if (cl->b[i].head) {
                fs_sband_refresh(s, m, cl->b[i].head);
                rs[n] = (qrun_t){cl->b[i].root, cl->b[i].head, UINT32_MAX, 1, 0};
                h[n] = qh_entry(s, rs[n].cur, (uint32_t)n);
                n++;
            }
        uint32_t first = s->banded ? cl->lhead : cl->head;
        if (first) {
            rs[n] = (qrun_t){cl->root, first, UINT32_MAX, 0, 0};
            h[n] = qh_entry(s, first, (uint32_t)n);
            n++;
        }
    }
    for (size_t i = n / 2; i-- > 0;)
        qheap_down(h, n, i);
    size_t k = 0;
    while (k < want && n > 0) {
        uint32_t r = h[0].run;
        s->scr[k++] = rs[r].cur;
        if (k == want)
            break;
        uint32_t y = qrun_next(s, &rs[r], s->tmp32 + (size_t)QSTK * r);
        if (y) {
            if (rs[r].seq)
                fs_sband_refresh(s, m, y);
            rs[r].cur = y;
            h[0] = qh_entry(s, y, r);
        } else {
            h[0] = h[--n];
        }
        qheap_down(h, n, 0);
    }
    return k;
}

/* ---- pruning ------------------------------------------------------------------------ */

/* Slurm mode forgets its reservations after the pass: they matter only for
 * the starts they prevent in it.  A job starts now only if its g GPUs are
 * free at every step before now + d, and the profile only shrinks as the
 * pass goes on; so once a step before now + (the least d of the jobs left)
 * has fewer GPUs free than the least g of the jobs left, none of them can
 * start and the pass ends (fast path; not when the first reservations are
 * recorded).  sfx[2i], sfx[2i + 1]: the least g and d of jobs i.. */
int fs_sslurm_prune_prep(sched_t *s, size_t lim, fs_time_t res)
{
    if (!s->fast || s->record)
        return 0;
    if (fs_grow((void **)&s->sfx, &s->sfx_cap, 2 * (lim + 1), sizeof *s->sfx))
        return FS_ENOMEM;
    fs_time_t mg = FS_TIME_NEVER, md = FS_TIME_NEVER;
    for (size_t i = lim; i-- > 0;) {
        uint32_t x = s->scr[i];
        fs_time_t g = (fs_time_t)s->nd[x].g, d = fs_sched_plan_d(s, x, res);
        mg = g < mg ? g : mg;
        md = d < md ? d : md;
        s->sfx[2 * i] = mg;
        s->sfx[2 * i + 1] = md;
    }
    return 1;
}
