/*
 * fs_sched_band: banded orders (fs_order.h band) in the composable
 * scheduler (fs_sched_int.h): each class keeps one treap per band in
 * sequence order and a tournament over the band heads.
 */
#include "fs_sched_int.h"

#include <string.h>

/*
 * Why: a Slurm PriorityCalcPeriod changes the key of every queued job, and
 * rebuilding the class treaps costs O(queue log queue) per period.  An order
 * with bands (fs_order.h) promises that within a band the keys taken at one
 * update never decrease with sequence.  So each class keeps one treap per
 * band in sequence order (its order at every update, untouched by one), and
 * a tournament over the band heads gives the class head: an update costs
 * O(bands), refreshing only the heads' keys (k1, k2 of other band nodes may
 * be stale: kep < kepoch).  A job whose key breaks the promise at insertion
 * (a job queued again between updates, whose key was taken later than its
 * band's) goes to the class's loose treap, ordered by key as without bands,
 * and rejoins its band at the next update.  Used where the class head is
 * all a pass reads (no backfill, no preemption) and under Slurm's bounded
 * backfill, whose first jobs come from a merge of the bands
 * (fs_sslurm_first_queued). */

/* The better of two tournament entries (band + 1, 0 = none). */
static uint32_t tw_win(const sched_t *s, const cls_t *c, uint32_t a, uint32_t b)
{
    if (!a || !b)
        return a ? a : b;
    return fs_stree_less(s->nd, s->k2, c->b[b - 1].head, c->b[a - 1].head) ? b : a;
}

/* Band i's head changed (its key is fresh): replay its matches. */
static void tw_fix(const sched_t *s, cls_t *c, uint32_t i)
{
    uint32_t k = c->pw + i;
    c->tw[k] = c->b[i].head ? i + 1 : 0;
    for (k /= 2; k >= 1; k /= 2)
        c->tw[k] = tw_win(s, c, c->tw[2 * k], c->tw[2 * k + 1]);
}

/* All matches again (every band head is fresh).  O(pw). */
static void tw_build(const sched_t *s, cls_t *c)
{
    if (!c->pw)
        return;
    for (uint32_t i = 0; i < c->pw; i++)
        c->tw[c->pw + i] = i < c->nb && c->b[i].head ? i + 1 : 0;
    for (uint32_t k = c->pw - 1; k >= 1; k--)
        c->tw[k] = tw_win(s, c, c->tw[2 * k], c->tw[2 * k + 1]);
}

/* Room for band i in class c.  0 or FS_ENOMEM. */
int fs_sband_room(sched_t *s, cls_t *c, uint32_t i)
{
    if (i >= c->nb) {
        size_t nb = c->nb;
        if (fs_grow((void **)&c->b, &nb, (size_t)i + 1, sizeof *c->b))
            return FS_ENOMEM;
        memset(c->b + c->nb, 0, (nb - c->nb) * sizeof *c->b);
        c->nb = (uint32_t)nb;
    }
    if (c->nb <= c->pw)
        return 0;
    uint32_t pw = c->pw ? c->pw : 1;
    while (pw < c->nb)
        pw *= 2;
    uint32_t *tw = fs_malloc(2 * (size_t)pw * sizeof *tw);
    if (!tw)
        return FS_ENOMEM;
    fs_free(c->tw);
    c->tw = tw;
    c->pw = pw;
    tw_build(s, c);
    return 0;
}

/* x (fresh key) may join band root t: its sequence neighbours there stay in
 * order by key. */
static int band_agrees(sched_t *s, fs_model_t *m, uint32_t t, uint32_t x)
{
    tnode_t *nd = s->nd;
    uint32_t p = 0, q = 0;
    while (t) {
        if (nd[t].seq < nd[x].seq) {
            p = t;
            t = nd[t].r;
        } else {
            q = t;
            t = nd[t].l;
        }
    }
    if (p) {
        fs_sband_refresh(s, m, p);
        if (fs_stree_less(nd, s->k2, x, p))
            return 0;
    }
    if (q) {
        fs_sband_refresh(s, m, q);
        if (fs_stree_less(nd, s->k2, q, x))
            return 0;
    }
    return 1;
}

/* Queues node x (fresh key, band set) in class c: its band, or loose. */
void fs_sband_insert(sched_t *s, fs_model_t *m, cls_t *c, uint32_t x)
{
    tnode_t *nd = s->nd;
    band_t *b = &c->b[s->nb[x].band];
    if (band_agrees(s, m, b->root, x)) {
        s->nb[x].loose = 0;
        b->root = fs_stree_insert(nd, s->k2, b->root, x, 1);
        if (!b->head || nd[x].seq < nd[b->head].seq) {
            b->head = x;
            tw_fix(s, c, s->nb[x].band);
        }
    } else {
        s->nb[x].loose = 1;
        s->n_loose++;
        c->root = fs_stree_insert(nd, s->k2, c->root, x, 0);
        if (!c->lhead || fs_stree_less(nd, s->k2, x, c->lhead))
            c->lhead = x;
    }
}

void fs_sband_remove(sched_t *s, fs_model_t *m, cls_t *c, uint32_t x)
{
    tnode_t *nd = s->nd;
    if (s->nb[x].loose) {
        c->root = fs_stree_erase(nd, s->k2, c->root, x, 0);
        if (c->lhead == x)
            c->lhead = fs_stree_first(nd, c->root);
    } else {
        band_t *b = &c->b[s->nb[x].band];
        b->root = fs_stree_erase(nd, s->k2, b->root, x, 1);
        if (b->head == x) {
            b->head = fs_stree_first(nd, b->root);
            if (b->head)
                fs_sband_refresh(s, m, b->head);
            tw_fix(s, c, s->nb[x].band);
        }
    }
    fs_sband_head(s, c);
}

/* Keys changed (an update): loose jobs rejoin their bands (or stay loose,
 * by their new keys), band heads take their new keys, tournaments are
 * replayed.  O(loose log + bands). */
int fs_sband_rekey(sched_t *s, fs_model_t *m)
{
    s->kepoch++;
    for (size_t ci = 0; ci < s->shapes.n; ci++) {
        cls_t *c = &s->cls[ci];
        for (uint32_t i = 0; i < c->nb; i++)
            if (c->b[i].head)
                fs_sband_refresh(s, m, c->b[i].head);
        if (c->root) {
            if (fs_sched_scratch(s, s->queued))
                return FS_ENOMEM;
            size_t n = 0;
            fs_sched_collect(s, c->root, &n);
            c->root = c->lhead = 0;
            for (size_t i = 0; i < n; i++) {
                fs_sband_refresh(s, m, s->scr[i]);
                fs_sband_insert(s, m, c, s->scr[i]);
            }
        }
        tw_build(s, c);
        fs_sband_head(s, c);
    }
    return 0;
}
