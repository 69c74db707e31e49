/*
 * fs_sched_tree: the treaps of the composable scheduler (fs_sched_int.h):
 * a class queue ordered by (key, sequence) or a band by sequence, and a
 * running set ordered by planned end, augmented with the subtree sum of
 * GPUs and minimum planned run time.
 */
#include "fs_sched_int.h"

static inline __attribute__((always_inline)) void pull(tnode_t *nd, uint32_t x)
{
    tnode_t *n = &nd[x];
    n->aug_est = n->est;
    n->aug_g = n->g;
    if (n->l) {
        if (nd[n->l].aug_est < n->aug_est)
            n->aug_est = nd[n->l].aug_est;
        n->aug_g += nd[n->l].aug_g;
    }
    if (n->r) {
        if (nd[n->r].aug_est < n->aug_est)
            n->aug_est = nd[n->r].aug_est;
        n->aug_g += nd[n->r].aug_g;
    }
}

/* The order a treap is in: by key (then sequence), or (bands) by sequence. */
static inline int tless(const tnode_t *nd, const double *k2, uint32_t a, uint32_t b, int byseq)
{
    return byseq ? nd[a].seq < nd[b].seq : fs_stree_less(nd, k2, a, b);
}

/* t -> (< x, >= x) */
static void split(tnode_t *nd, const double *k2, uint32_t t, uint32_t x, uint32_t *a, uint32_t *b, int byseq)
{
    if (!t) {
        *a = *b = 0;
        return;
    }
    if (tless(nd, k2, t, x, byseq)) {
        split(nd, k2, nd[t].r, x, &nd[t].r, b, byseq);
        *a = t;
    } else {
        split(nd, k2, nd[t].l, x, a, &nd[t].l, byseq);
        *b = t;
    }
    pull(nd, t);
}

static uint32_t merge(tnode_t *nd, uint32_t a, uint32_t b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (fs_stree_pri(&nd[a]) > fs_stree_pri(&nd[b])) {
        nd[a].r = merge(nd, nd[a].r, b);
        pull(nd, a);
        return a;
    }
    nd[b].l = merge(nd, a, nd[b].l);
    pull(nd, b);
    return b;
}

/* Insertion: down to where x's priority puts it, adding x to the sums on
 * the way, then a split of the subtree found there (its spines are O(1)
 * long in expectation).  O(depth) with no work on the way back. */
uint32_t fs_stree_insert(tnode_t *nd, const double *k2, uint32_t root, uint32_t x, int byseq)
{
    tnode_t *n = &nd[x];
    n->l = n->r = 0;
    uint32_t *link = &root, t = root, pri = fs_stree_pri(n);
    while (t && fs_stree_pri(&nd[t]) > pri) {
        nd[t].aug_g += n->g;
        if (n->est < nd[t].aug_est)
            nd[t].aug_est = n->est;
        link = tless(nd, k2, t, x, byseq) ? &nd[t].r : &nd[t].l;
        t = *link;
    }
    split(nd, k2, t, x, &n->l, &n->r, byseq);
    pull(nd, x);
    *link = x;
    return root;
}

/* The running treaps' insertion (r_insert in fs_sched.c): as
 * fs_stree_insert, but only the GPU sums are kept on the way down.  A
 * running treap's minimum estimate is never read (fs_stree_first_est_le
 * walks class queues only); split's pull still sets it, from whatever its
 * children hold. */
uint32_t fs_stree_insert_run(tnode_t *nd, const double *k2, uint32_t root, uint32_t x)
{
    tnode_t *n = &nd[x];
    n->l = n->r = 0;
    uint32_t *link = &root, t = root, pri = fs_stree_pri(n), g = n->g;
    while (t && fs_stree_pri(&nd[t]) > pri) {
        nd[t].aug_g += g;
        link = fs_stree_less(nd, k2, t, x) ? &nd[t].r : &nd[t].l;
        t = *link;
    }
    split(nd, k2, t, x, &n->l, &n->r, 0);
    pull(nd, x);
    *link = x;
    return root;
}

/* The running treaps' erasure (r_remove): x's GPUs come off the sums of its
 * ancestors on the way down, and its children are merged in its place; no
 * path kept and no way back up, the minimum estimate not being kept here
 * (fs_stree_insert_run).  x must be in the treap at root. */
uint32_t fs_stree_erase_run(tnode_t *nd, const double *k2, uint32_t root, uint32_t x)
{
    uint32_t *link = &root, t = root, g = nd[x].g;
    while (t != x) {
        nd[t].aug_g -= g;
        link = fs_stree_less(nd, k2, x, t) ? &nd[t].l : &nd[t].r;
        t = *link;
    }
    *link = merge(nd, nd[x].l, nd[x].r);
    return root;
}

static uint32_t t_erase_rec(tnode_t *nd, const double *k2, uint32_t t, uint32_t x, int byseq)
{
    if (t == x)
        return merge(nd, nd[t].l, nd[t].r);
    if (tless(nd, k2, x, t, byseq))
        nd[t].l = t_erase_rec(nd, k2, nd[t].l, x, byseq);
    else
        nd[t].r = t_erase_rec(nd, k2, nd[t].r, x, byseq);
    pull(nd, t);
    return t;
}

/* Erasure: down to x, its children merged in its place, then the sums of
 * the path fixed bottom-up (the GPU sums always; the minimum estimate only
 * while it was x's).  A path deeper than the stack (never, in practice)
 * takes the recursive way. */
uint32_t fs_stree_erase(tnode_t *nd, const double *k2, uint32_t root, uint32_t x, int byseq)
{
    enum { STK = 192 };
    uint32_t path[STK];
    size_t k = 0;
    uint32_t *link = &root, t = root;
    while (t != x) {
        if (k == STK)
            return t_erase_rec(nd, k2, root, x, byseq);
        path[k++] = t;
        link = tless(nd, k2, x, t, byseq) ? &nd[t].l : &nd[t].r;
        t = *link;
    }
    *link = merge(nd, nd[x].l, nd[x].r);
    uint32_t g = nd[x].g;
    fs_time_t est = nd[x].est;
    int fix_est = 1;
    while (k > 0) {
        tnode_t *p = &nd[path[--k]];
        p->aug_g -= g;
        if (fix_est && p->aug_est == est) {
            fs_time_t e = p->est;
            if (p->l && nd[p->l].aug_est < e)
                e = nd[p->l].aug_est;
            if (p->r && nd[p->r].aug_est < e)
                e = nd[p->r].aug_est;
            p->aug_est = e;
        } else {
            fix_est = 0;
        }
    }
    return root;
}

/* The first node in order whose est <= lim, or 0.  O(depth). */
uint32_t fs_stree_first_est_le(const tnode_t *nd, uint32_t t, fs_time_t lim)
{
    while (t && nd[t].aug_est <= lim) {
        uint32_t l = nd[t].l;
        if (l && nd[l].aug_est <= lim)
            t = l;
        else if (nd[t].est <= lim)
            return t;
        else
            t = nd[t].r;
    }
    return 0;
}

/* Is key a before node x in order (fs_stree_less with a for a node)? */
static int key_before(const tnode_t *nd, const double *k2, const tkey_t *a, uint32_t x)
{
    if (a->k1 != nd[x].k1)
        return a->k1 < nd[x].k1;
    double b2 = k2 ? k2[x] : 0;
    if (a->k2 != b2)
        return a->k2 < b2;
    return a->seq < nd[x].seq;
}

uint32_t fs_stree_next_est_le(const tnode_t *nd, const double *k2, uint32_t t, const tkey_t *a,
                              fs_time_t lim)
{
    if (!a)
        return fs_stree_first_est_le(nd, t, lim);
    /* down the path to a: a node after a has its right subtree after a too
     * (first_est_le there), its left subtree to search first; a node not
     * after a leaves only its right subtree.  The candidates met on the way
     * are in order from the last (deepest) to the first: the deepest node
     * after a, then its right subtree, then the next one up... */
    uint32_t stack[96];
    size_t n = 0;
    while (t && nd[t].aug_est <= lim) {
        if (key_before(nd, k2, a, t)) {
            if (n == sizeof stack / sizeof stack[0]) {
                /* deeper than any treap of 2^32 nodes should be: resolve
                 * the deepest candidates now (rare; same answer) */
                uint32_t r = fs_stree_next_est_le(nd, k2, t, a, lim);
                if (r)
                    return r;
                break;
            }
            stack[n++] = t;
            t = nd[t].l;
        } else {
            t = nd[t].r;
        }
    }
    while (n > 0) {
        uint32_t x = stack[--n];
        if (nd[x].est <= lim)
            return x;
        uint32_t r = fs_stree_first_est_le(nd, nd[x].r, lim);
        if (r)
            return r;
    }
    return 0;
}

/* The first node in order at which the running sum of g reaches need. */
uint32_t fs_stree_prefix_reach(const tnode_t *nd, uint32_t t, uint64_t need)
{
    uint64_t acc = 0;
    while (t) {
        uint64_t lg = nd[t].l ? nd[nd[t].l].aug_g : 0;
        if (acc + lg >= need) {
            t = nd[t].l;
        } else {
            acc += lg + nd[t].g;
            if (acc >= need)
                return t;
            t = nd[t].r;
        }
    }
    return 0;
}

/* Sum of g over nodes with k1 <= lim. */
uint64_t fs_stree_sum_le(const tnode_t *nd, uint32_t t, double lim)
{
    uint64_t s = 0;
    while (t) {
        if (nd[t].k1 <= lim) {
            s += (nd[t].l ? nd[nd[t].l].aug_g : 0) + nd[t].g;
            t = nd[t].r;
        } else {
            t = nd[t].l;
        }
    }
    return s;
}

/* The first running job planned to end after lim, or 0. */
uint32_t fs_stree_first_gt(const tnode_t *nd, uint32_t t, double lim)
{
    uint32_t best = 0;
    while (t) {
        if (nd[t].k1 > lim) {
            best = t;
            t = nd[t].l;
        } else {
            t = nd[t].r;
        }
    }
    return best;
}

/* The node after x in sequence order in the treap at t (a band), 0 none. */
uint32_t fs_stree_next_seq(const tnode_t *nd, uint32_t t, uint32_t x)
{
    uint32_t best = 0;
    while (t) {
        if (nd[t].seq > nd[x].seq) {
            best = t;
            t = nd[t].l;
        } else {
            t = nd[t].r;
        }
    }
    return best;
}

/* The node after x in key order in the treap at t (a loose treap), 0 none. */
uint32_t fs_stree_next_key(const tnode_t *nd, const double *k2, uint32_t t, uint32_t x)
{
    uint32_t best = 0;
    while (t) {
        if (fs_stree_less(nd, k2, x, t)) {
            best = t;
            t = nd[t].l;
        } else {
            t = nd[t].r;
        }
    }
    return best;
}

void fs_stree_pull_all(tnode_t *nd, uint32_t t)
{
    if (!t)
        return;
    fs_stree_pull_all(nd, nd[t].l);
    fs_stree_pull_all(nd, nd[t].r);
    pull(nd, t);
}
