/*
 * fs_cluster_index: the free-capacity index of the cluster
 * (fs_cluster_int.h): each pool's up nodes filed by free GPUs (a level)
 * in hierarchical bitsets, so that best fit, first fit and the largest
 * node are O(levels x layers) and placement never scans every node; the
 * linear queries give the same answers (use_index off).
 */
#include "fs_cluster_int.h"

/* ---- bit helpers over W-word masks ---------------------------------- */

/* Lowest set bit >= g, or -1. */
int fs_clidx_mask_lowest_ge(const uint64_t *m, uint32_t W, uint32_t g)
{
    uint32_t w = g / 64;
    if (w >= W)
        return -1;
    uint64_t x = m[w] & (~UINT64_C(0) << (g % 64));
    for (;;) {
        if (x)
            return (int)(w * 64 + (uint32_t)__builtin_ctzll(x));
        if (++w >= W)
            return -1;
        x = m[w];
    }
}

static int mask_highest(const uint64_t *m, uint32_t W)
{
    for (uint32_t w = W; w-- > 0;)
        if (m[w])
            return (int)(w * 64 + 63 - (uint32_t)__builtin_clzll(m[w]));
    return -1;
}

/* ---- index maintenance ------------------------------------------------ */

static inline uint64_t *lset_of(const fs_pool_t *p, uint32_t L)
{
    return p->lset + (size_t)L * p->hwords;
}

/* The climbs above the bottom layer, after x's bottom word of level L
 * went from empty to non-empty (insert) or back (remove): each continues
 * while it sets the first (clears the last) bit of a word.  They return 1
 * if the level itself appeared (disappeared). */
static inline int hb_insert_up(const fs_pool_t *p, uint32_t L, uint32_t x)
{
    uint64_t *b = lset_of(p, L);
    for (uint32_t d = p->hdepth - 1; d-- > 0;) {
        x /= 64;
        uint64_t *w = &b[p->hoff[d] + x / 64];
        uint64_t was = *w;
        *w = was | UINT64_C(1) << (x % 64);
        if (was)
            return 0;
    }
    return 1;
}

static inline int hb_remove_up(const fs_pool_t *p, uint32_t L, uint32_t x)
{
    uint64_t *b = lset_of(p, L);
    for (uint32_t d = p->hdepth - 1; d-- > 0;) {
        x /= 64;
        uint64_t *w = &b[p->hoff[d] + x / 64];
        *w &= ~(UINT64_C(1) << (x % 64));
        if (*w)
            return 0;
    }
    return 1;
}

/* Leftmost member of a non-empty level: one ctz per layer. */
uint32_t fs_clidx_first(const fs_pool_t *p, uint32_t L)
{
    const uint64_t *b = lset_of(p, L);
    uint32_t x = 0;
    for (uint32_t d = 0; d < p->hdepth; d++)
        x = x * 64 + (uint32_t)__builtin_ctzll(b[p->hoff[d] + x]);
    return x;
}

/* Smallest member >= x of level L, or FS_CL_NONE: up while the rest of the word
 * is empty, then down the leftmost path. */
uint32_t fs_clidx_next(const fs_pool_t *p, uint32_t L, uint32_t x)
{
    const uint64_t *b = lset_of(p, L);
    uint32_t d = p->hdepth - 1;
    for (;;) {
        uint32_t w = x / 64;
        if (w >= p->hn[d])
            return FS_CL_NONE;
        uint64_t bits = b[p->hoff[d] + w] & (~UINT64_C(0) << (x % 64));
        if (bits) {
            x = w * 64 + (uint32_t)__builtin_ctzll(bits);
            break;
        }
        if (d == 0)
            return FS_CL_NONE;
        d--;
        x = w + 1;
    }
    for (d++; d < p->hdepth; d++)
        x = x * 64 + (uint32_t)__builtin_ctzll(b[p->hoff[d] + x]);
    return x;
}

/* Leftmost member of the union of the levels >= g (some is non-empty):
 * the union of hierarchical bitsets is the OR of their words, so descend
 * once with OR-ed words.  O(levels x layers). */
static uint32_t hb_first_ge(const fs_pool_t *p, uint32_t g)
{
    uint32_t x = 0;
    for (uint32_t d = 0; d < p->hdepth; d++) {
        uint64_t acc = 0;
        for (uint32_t r = g / 64; r < p->rwords; r++) {
            uint64_t m = p->lroot[r] & (r == g / 64 ? ~UINT64_C(0) << (g % 64) : ~UINT64_C(0));
            for (; m; m &= m - 1)
                acc |= lset_of(p, r * 64 + (uint32_t)__builtin_ctzll(m))[p->hoff[d] + x];
        }
        x = x * 64 + (uint32_t)__builtin_ctzll(acc);
    }
    return x;
}

/* Files node under its current level (node_free if up, none if down).
 * Every change of a node's free GPUs or state comes here, so c->gen
 * counts them.  The common case is straight-line: the node's bit leaves
 * the old level's bottom word and enters the new one's (the same word
 * index); the climbs run when a bottom word empties or fills (few nodes
 * at that level, as under full load). */
void fs_clidx_update(fs_cluster_t *c, uint32_t node)
{
    c->gen++;
    uint32_t old = c->node_lvl[node];
    uint32_t lv = c->node_up[node] ? c->node_free[node] : FS_CLUSTER_NOLVL;
    if (old == lv)
        return;
    c->node_lvl[node] = lv;
    fs_pool_t *p = &c->pools[c->node_pool[node]];
    uint32_t x = node - p->first_node;
    size_t w = p->hleaf + x / 64;
    uint64_t bit = UINT64_C(1) << (x % 64);
    if (old != FS_CLUSTER_NOLVL) {
        p->lvl_n[old]--;
        uint64_t *o = lset_of(p, old) + w;
        if (!(*o &= ~bit) && hb_remove_up(p, old, x)) {
            p->lroot[old / 64] &= ~(UINT64_C(1) << (old % 64));
            if ((int32_t)old == p->max_level)
                p->max_level = mask_highest(p->lroot, p->rwords);
        }
    }
    if (lv != FS_CLUSTER_NOLVL) {
        p->lvl_n[lv]++;
        uint64_t *n = lset_of(p, lv) + w, was = *n;
        *n = was | bit;
        if (!was && hb_insert_up(p, lv, x))
            p->lroot[lv / 64] |= UINT64_C(1) << (lv % 64);
        if ((int32_t)lv > p->max_level)
            p->max_level = (int32_t)lv;
    }
}

/* Lays out the pool's level sets (layer sizes from the bottom up, stored
 * top first) and files every node, up, at level gpn. */
int fs_clidx_init(fs_cluster_t *c, fs_pool_t *p)
{
    uint32_t n[FS_CLUSTER_HMAXD], d = 0, w = (p->n_nodes + 63) / 64;
    for (;; w = (w + 63) / 64) {
        n[d++] = w;
        if (w == 1)
            break;
    }
    p->hdepth = d;
    p->hwords = 0;
    for (uint32_t i = 0; i < d; i++) {
        p->hn[i] = n[d - 1 - i];
        p->hoff[i] = p->hwords;
        p->hwords += p->hn[i];
    }
    p->hleaf = p->hoff[d - 1];
    p->rwords = (p->gpn + 1 + 63) / 64;
    p->lset = fs_calloc((size_t)(p->gpn + 1) * p->hwords, sizeof *p->lset);
    p->lroot = fs_calloc(p->rwords, sizeof *p->lroot);
    p->lvl_n = fs_calloc(p->gpn + 1, sizeof *p->lvl_n);
    if (!p->lset || !p->lroot || !p->lvl_n)
        return FS_ENOMEM;
    p->max_level = -1;
    for (uint32_t x = 0; x < p->n_nodes; x++) {
        c->node_lvl[p->first_node + x] = FS_CLUSTER_NOLVL;
        fs_clidx_update(c, p->first_node + x);
    }
    return 0;
}

/* ---- queries: indexed and linear, same answers ------------------------ */

uint32_t fs_clidx_best_fit(const fs_cluster_t *c, const fs_pool_t *p, uint32_t g)
{
    if (c->use_index) {
        int k = fs_clidx_mask_lowest_ge(p->lroot, p->rwords, g);
        return k < 0 ? FS_CL_NONE : p->first_node + fs_clidx_first(p, (uint32_t)k);
    }
    uint32_t best = FS_CL_NONE, bestf = UINT32_MAX;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && c->node_free[n] >= g && c->node_free[n] < bestf) {
            best = n;
            bestf = c->node_free[n];
        }
    return best;
}

uint32_t fs_clidx_first_fit(const fs_cluster_t *c, const fs_pool_t *p, uint32_t g)
{
    if (c->use_index)
        return (int64_t)g > p->max_level ? FS_CL_NONE : p->first_node + hb_first_ge(p, g);
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && c->node_free[n] >= g)
            return n;
    return FS_CL_NONE;
}

uint32_t fs_clidx_largest(const fs_cluster_t *c, const fs_pool_t *p)
{
    if (c->use_index)
        return p->max_level <= 0 ? FS_CL_NONE : p->first_node + fs_clidx_first(p, (uint32_t)p->max_level);
    uint32_t best = FS_CL_NONE, bestf = 0;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && c->node_free[n] > bestf) {
            best = n;
            bestf = c->node_free[n];
        }
    return best;
}

/* ---- whole GPUs taken and given back ------------------------------------- */

void fs_clidx_take(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t g)
{
    c->node_free[node] -= g;
    p->gpus_free -= g;
    c->gpus_busy += g;
    p->gpus_busy += g;
    c->milli_busy += (uint64_t)g * 1000u;
    if (c->topo)
        fs_cltopo_add(c, node, -(int64_t)g);
    fs_clidx_update(c, node);
}

void fs_clidx_untake(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t g)
{
    c->node_free[node] += g;
    if (c->node_up[node]) {
        p->gpus_free += g;
        if (c->topo)
            fs_cltopo_add(c, node, (int64_t)g);
    } else {
        c->gpus_busy_down -= g;
    }
    c->gpus_busy -= g;
    p->gpus_busy -= g;
    c->milli_busy -= (uint64_t)g * 1000u;
    fs_clidx_update(c, node);
}

