#include "fs_cluster.h"
#include "fs_catalog.h"
#include "../sim/fs_alloc.h"

#include <string.h>

/* ---- bit helpers over W-word masks ---------------------------------- */

/* Lowest set bit >= g, or -1. */
static int mask_lowest_ge(const uint64_t *m, uint32_t W, uint32_t g)
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

static inline int mask_has(const uint64_t *m, uint32_t bit)
{
    return (m[bit / 64] >> (bit % 64)) & 1;
}

/* ---- index maintenance ------------------------------------------------ */

static inline uint64_t *tnode(const fs_pool_t *p, uint32_t i) { return p->mask + (size_t)i * p->words; }

static void index_update(fs_cluster_t *c, uint32_t node)
{
    fs_pool_t *p = &c->pools[c->node_pool[node]];
    uint32_t i = p->leaf0 + (node - p->first_node);
    uint64_t *leaf = tnode(p, i);
    memset(leaf, 0, p->words * sizeof *leaf);
    if (c->node_up[node])
        leaf[c->node_free[node] / 64] |= UINT64_C(1) << (c->node_free[node] % 64);
    /* climb while the union changes: above the first unchanged ancestor
     * nothing can change either */
    for (i /= 2; i >= 1; i /= 2) {
        uint64_t *m = tnode(p, i), *l = tnode(p, 2 * i), *r = tnode(p, 2 * i + 1);
        uint64_t diff = 0;
        for (uint32_t w = 0; w < p->words; w++) {
            uint64_t v = l[w] | r[w];
            diff |= v ^ m[w];
            m[w] = v;
        }
        if (!diff)
            break;
    }
}

/* Leftmost node whose level is exactly k (k present under the root). */
static uint32_t descend_level(const fs_pool_t *p, uint32_t k)
{
    uint32_t i = 1;
    while (i < p->leaf0)
        i = mask_has(tnode(p, 2 * i), k) ? 2 * i : 2 * i + 1;
    return p->first_node + (i - p->leaf0);
}

/* Leftmost node with level >= g (present under the root). */
static uint32_t descend_ge(const fs_pool_t *p, uint32_t g)
{
    uint32_t i = 1;
    while (i < p->leaf0)
        i = mask_lowest_ge(tnode(p, 2 * i), p->words, g) >= 0 ? 2 * i : 2 * i + 1;
    return p->first_node + (i - p->leaf0);
}

/* ---- queries: indexed and linear, same answers ------------------------ */

#define NONE UINT32_MAX

static uint32_t q_best_fit(const fs_cluster_t *c, const fs_pool_t *p, uint32_t g)
{
    if (c->use_index) {
        int k = mask_lowest_ge(tnode(p, 1), p->words, g);
        return k < 0 ? NONE : descend_level(p, (uint32_t)k);
    }
    uint32_t best = NONE, bestf = UINT32_MAX;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && c->node_free[n] >= g && c->node_free[n] < bestf) {
            best = n;
            bestf = c->node_free[n];
        }
    return best;
}

static uint32_t q_first_fit(const fs_cluster_t *c, const fs_pool_t *p, uint32_t g)
{
    if (c->use_index)
        return mask_lowest_ge(tnode(p, 1), p->words, g) < 0 ? NONE : descend_ge(p, g);
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && c->node_free[n] >= g)
            return n;
    return NONE;
}

static uint32_t q_largest(const fs_cluster_t *c, const fs_pool_t *p)
{
    if (c->use_index) {
        int k = mask_highest(tnode(p, 1), p->words);
        return k <= 0 ? NONE : descend_level(p, (uint32_t)k);
    }
    uint32_t best = NONE, bestf = 0;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && c->node_free[n] > bestf) {
            best = n;
            bestf = c->node_free[n];
        }
    return best;
}

/* ---- lifecycle ---------------------------------------------------------- */

int fs_cluster_init(fs_cluster_t *c, const fs_cluster_cfg_t *cfg, fs_error_t *err)
{
    memset(c, 0, sizeof *c);
    c->use_index = 1;
    if (cfg->n_pools == 0 || cfg->n_pools > UINT32_MAX / 2)
        return fs_error_set(err, FS_EINVAL, "cluster: need at least one pool");
    uint64_t nodes = 0;
    for (size_t i = 0; i < cfg->n_pools; i++) {
        const fs_pool_cfg_t *pc = &cfg->pools[i];
        if (pc->nodes == 0 || pc->gpus_per_node == 0)
            return fs_error_set(err, FS_EINVAL, "cluster: pool '%s' has no GPUs", pc->name);
        nodes += pc->nodes;
    }
    if (nodes > UINT32_MAX / 4)
        return fs_error_set(err, FS_ELIMIT, "cluster: %llu nodes is beyond the supported %u",
                            (unsigned long long)nodes, UINT32_MAX / 4);
    c->n_pools = (uint32_t)cfg->n_pools;
    c->n_nodes = (uint32_t)nodes;
    c->pools = fs_calloc(c->n_pools, sizeof *c->pools);
    c->node_free = fs_malloc((size_t)c->n_nodes * sizeof *c->node_free);
    c->node_pool = fs_malloc((size_t)c->n_nodes * sizeof *c->node_pool);
    c->node_up = fs_malloc((size_t)c->n_nodes * sizeof *c->node_up);
    if (!c->pools || !c->node_free || !c->node_pool || !c->node_up)
        goto nomem;
    uint32_t next = 0;
    for (uint32_t i = 0; i < c->n_pools; i++) {
        const fs_pool_cfg_t *pc = &cfg->pools[i];
        fs_pool_t *p = &c->pools[i];
        p->name = fs_strdup(pc->name ? pc->name : "");
        p->gpu = fs_strdup(pc->gpu ? pc->gpu : "");
        if (!p->name || !p->gpu)
            goto nomem;
        p->catalog = fs_catalog_find(p->gpu);
        p->first_node = next;
        p->n_nodes = pc->nodes;
        p->gpn = pc->gpus_per_node;
        p->gpus_total = (uint64_t)p->n_nodes * p->gpn;
        p->gpus_free = p->gpus_up = p->gpus_total;
        p->words = (p->gpn + 1 + 63) / 64;
        p->leaf0 = 1;
        while (p->leaf0 < p->n_nodes)
            p->leaf0 *= 2;
        p->mask = fs_calloc((size_t)2 * p->leaf0 * p->words, sizeof *p->mask);
        if (!p->mask)
            goto nomem;
        for (uint32_t n = next; n < next + p->n_nodes; n++) {
            c->node_free[n] = p->gpn;
            c->node_pool[n] = i;
            c->node_up[n] = 1;
        }
        /* build bottom-up in O(N) rather than N updates */
        for (uint32_t j = 0; j < p->n_nodes; j++)
            tnode(p, p->leaf0 + j)[p->gpn / 64] |= UINT64_C(1) << (p->gpn % 64);
        for (uint32_t t = p->leaf0; t-- > 1;) {
            uint64_t *m = tnode(p, t), *l = tnode(p, 2 * t), *r = tnode(p, 2 * t + 1);
            for (uint32_t w = 0; w < p->words; w++)
                m[w] = l[w] | r[w];
        }
        next += p->n_nodes;
        c->gpus_total += p->gpus_total;
    }
    c->gpus_up = c->gpus_total;
    return 0;
nomem:
    fs_cluster_release(c);
    return fs_error_set(err, FS_ENOMEM, "cluster: out of memory");
}

void fs_cluster_release(fs_cluster_t *c)
{
    if (c->pools)
        for (uint32_t i = 0; i < c->n_pools; i++) {
            fs_free(c->pools[i].name);
            fs_free(c->pools[i].gpu);
            fs_free(c->pools[i].mask);
        }
    fs_free(c->pools);
    fs_free(c->node_free);
    fs_free(c->node_pool);
    fs_free(c->node_up);
    memset(c, 0, sizeof *c);
}

void fs_placement_release(fs_placement_t *p)
{
    if (p->n > 1)
        fs_free(p->many);
    p->many = NULL;
    p->n = 0;
}

int fs_cluster_find_pool(const fs_cluster_t *c, const char *name)
{
    for (uint32_t i = 0; i < c->n_pools; i++)
        if (strcmp(c->pools[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* ---- placement ------------------------------------------------------------ */

int fs_cluster_could_fit(const fs_cluster_t *c, uint32_t pool, uint32_t g)
{
    const fs_pool_t *p = &c->pools[pool];
    return g >= 1 && (g <= p->gpn || g <= p->gpus_total);
}

int fs_cluster_fits(const fs_cluster_t *c, uint32_t pool, uint32_t g)
{
    const fs_pool_t *p = &c->pools[pool];
    if (g > p->gpn)
        return p->gpus_free >= g;
    if (c->use_index)
        return mask_lowest_ge(tnode(p, 1), p->words, g) >= 0;
    return q_first_fit(c, p, g) != NONE;
}

static void take(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t g)
{
    c->node_free[node] -= g;
    p->gpus_free -= g;
    c->gpus_busy += g;
    index_update(c, node);
}

int fs_cluster_alloc(fs_cluster_t *c, uint32_t pool, uint32_t g, int placement,
                     fs_placement_t *out)
{
    fs_pool_t *p = &c->pools[pool];
    memset(out, 0, sizeof *out);
    out->pool = pool;
    if (g == 0 || !fs_cluster_fits(c, pool, g))
        return 0;
    if (g <= p->gpn) {
        uint32_t n = placement == FS_PLACE_FIRST_FIT ? q_first_fit(c, p, g) : q_best_fit(c, p, g);
        if (n == NONE)
            return 0;
        take(c, p, n, g);
        out->n = 1;
        out->one = (fs_slice_t){n, g};
        return 1;
    }
    /* multi-node gang: at most min(g, nodes) slices */
    size_t cap = g < p->n_nodes ? g : p->n_nodes, n = 0;
    fs_slice_t *s = fs_malloc(cap * sizeof *s);
    if (!s)
        return FS_ENOMEM;
    uint32_t need = g;
    while (need > 0) {
        uint32_t node;
        if (placement == FS_PLACE_FIRST_FIT)
            node = q_first_fit(c, p, 1);
        else if (need >= p->gpn)
            node = q_largest(c, p);
        else {
            node = q_best_fit(c, p, need);
            if (node == NONE)
                node = q_largest(c, p);
        }
        if (node == NONE || n == cap) /* cannot happen after fits() */
            break;
        uint32_t k = c->node_free[node] < need ? c->node_free[node] : need;
        take(c, p, node, k);
        s[n++] = (fs_slice_t){node, k};
        need -= k;
    }
    if (need > 0) { /* undo: an inconsistent index would be a bug */
        for (size_t i = 0; i < n; i++) {
            c->node_free[s[i].node] += s[i].gpus;
            p->gpus_free += s[i].gpus;
            c->gpus_busy -= s[i].gpus;
            index_update(c, s[i].node);
        }
        fs_free(s);
        return 0;
    }
    if (n == 1) {
        out->one = s[0];
        fs_free(s);
    } else {
        out->many = s;
    }
    out->n = (uint32_t)n;
    return 1;
}

void fs_cluster_free(fs_cluster_t *c, const fs_placement_t *pl)
{
    fs_pool_t *p = &c->pools[pl->pool];
    const fs_slice_t *s = fs_placement_slices(pl);
    for (uint32_t i = 0; i < pl->n; i++) {
        c->node_free[s[i].node] += s[i].gpus;
        if (c->node_up[s[i].node])
            p->gpus_free += s[i].gpus;
        c->gpus_busy -= s[i].gpus;
        index_update(c, s[i].node);
    }
}

void fs_cluster_set_up(fs_cluster_t *c, uint32_t node, int up)
{
    if (!!c->node_up[node] == !!up)
        return;
    fs_pool_t *p = &c->pools[c->node_pool[node]];
    c->node_up[node] = (uint8_t)!!up;
    if (up) {
        p->gpus_free += c->node_free[node];
        p->gpus_up += p->gpn;
        c->gpus_up += p->gpn;
    } else {
        p->gpus_free -= c->node_free[node];
        p->gpus_up -= p->gpn;
        c->gpus_up -= p->gpn;
    }
    index_update(c, node);
}
