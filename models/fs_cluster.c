#include "fs_cluster.h"
#include "fs_sharing.h"
#include "fs_catalog.h"
#include "../sim/fs_alloc.h"
#include "../traces/fs_job.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

#define NONE UINT32_MAX
#define NOLVL FS_CLUSTER_NOLVL

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
static uint32_t hb_first(const fs_pool_t *p, uint32_t L)
{
    const uint64_t *b = lset_of(p, L);
    uint32_t x = 0;
    for (uint32_t d = 0; d < p->hdepth; d++)
        x = x * 64 + (uint32_t)__builtin_ctzll(b[p->hoff[d] + x]);
    return x;
}

/* Smallest member >= x of level L, or NONE: up while the rest of the word
 * is empty, then down the leftmost path. */
static uint32_t hb_next(const fs_pool_t *p, uint32_t L, uint32_t x)
{
    const uint64_t *b = lset_of(p, L);
    uint32_t d = p->hdepth - 1;
    for (;;) {
        uint32_t w = x / 64;
        if (w >= p->hn[d])
            return NONE;
        uint64_t bits = b[p->hoff[d] + w] & (~UINT64_C(0) << (x % 64));
        if (bits) {
            x = w * 64 + (uint32_t)__builtin_ctzll(bits);
            break;
        }
        if (d == 0)
            return NONE;
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
static void index_update(fs_cluster_t *c, uint32_t node)
{
    c->gen++;
    uint32_t old = c->node_lvl[node];
    uint32_t lv = c->node_up[node] ? c->node_free[node] : NOLVL;
    if (old == lv)
        return;
    c->node_lvl[node] = lv;
    fs_pool_t *p = &c->pools[c->node_pool[node]];
    uint32_t x = node - p->first_node;
    size_t w = p->hleaf + x / 64;
    uint64_t bit = UINT64_C(1) << (x % 64);
    if (old != NOLVL) {
        p->lvl_n[old]--;
        uint64_t *o = lset_of(p, old) + w;
        if (!(*o &= ~bit) && hb_remove_up(p, old, x)) {
            p->lroot[old / 64] &= ~(UINT64_C(1) << (old % 64));
            if ((int32_t)old == p->max_level)
                p->max_level = mask_highest(p->lroot, p->rwords);
        }
    }
    if (lv != NOLVL) {
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
static int index_init(fs_cluster_t *c, fs_pool_t *p)
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
        c->node_lvl[p->first_node + x] = NOLVL;
        index_update(c, p->first_node + x);
    }
    return 0;
}

/* ---- fractional sharing: shared slots and their level tree ------------- */

#define SW FS_CLUSTER_SWORDS

static inline uint64_t *snode(const fs_pool_t *p, uint32_t i) { return p->smask + (size_t)i * SW; }

static inline uint16_t *slots_of(const fs_pool_t *p, uint32_t node)
{
    return p->sused + (size_t)(node - p->first_node) * p->gpn;
}

/* Rebuilds node's leaf of the shared tree (bits: free milli of each open
 * shared GPU, if the node is up) and the path to the root. */
static void sindex_update(fs_cluster_t *c, fs_pool_t *p, uint32_t node)
{
    c->gen++;
    if (!p->smask)
        return;
    uint32_t i = p->leaf0 + (node - p->first_node);
    uint64_t *leaf = snode(p, i);
    memset(leaf, 0, SW * sizeof *leaf);
    if (c->node_up[node]) {
        const uint16_t *u = slots_of(p, node);
        for (uint32_t k = 0; k < p->gpn; k++)
            if (u[k]) {
                uint32_t f = FS_GPU_MILLI_WHOLE - u[k];
                leaf[f / 64] |= UINT64_C(1) << (f % 64);
            }
    }
    for (i /= 2; i >= 1; i /= 2) {
        uint64_t *m = snode(p, i), *l = snode(p, 2 * i), *r = snode(p, 2 * i + 1);
        for (uint32_t w = 0; w < SW; w++)
            m[w] = l[w] | r[w];
    }
}

/* Allocates the pool's shared slots and tree (first fractional job). */
static int ensure_shared(fs_pool_t *p)
{
    if (p->sused)
        return 0;
    uint16_t *u = fs_calloc((size_t)p->n_nodes * p->gpn, sizeof *u);
    uint64_t *m = fs_calloc((size_t)2 * p->leaf0 * SW, sizeof *m);
    if (!u || !m) {
        fs_free(u);
        fs_free(m);
        return FS_ENOMEM;
    }
    p->sused = u;
    p->smask = m;
    return 0;
}

/* The node's best open shared slot for m milli under `placement`: packing
 * (fewest free still >= m) or first fit (lowest slot); -1 if none. */
static int node_slot(const fs_pool_t *p, uint32_t node, uint32_t m, int first)
{
    const uint16_t *u = slots_of(p, node);
    int best = -1;
    uint32_t bestf = UINT32_MAX;
    for (uint32_t k = 0; k < p->gpn; k++) {
        if (!u[k])
            continue;
        uint32_t f = FS_GPU_MILLI_WHOLE - u[k];
        if (f >= m && f < bestf) {
            best = (int)k;
            bestf = f;
            if (first)
                break;
        }
    }
    return best;
}

/* Largest free milli on an open shared slot of node (0 if none). */
static uint32_t node_smax(const fs_pool_t *p, uint32_t node)
{
    if (!p->sused)
        return 0;
    const uint16_t *u = slots_of(p, node);
    uint32_t best = 0;
    for (uint32_t k = 0; k < p->gpn; k++)
        if (u[k] && FS_GPU_MILLI_WHOLE - u[k] > best)
            best = FS_GPU_MILLI_WHOLE - u[k];
    return best;
}

/* Adds d fully free GPUs to the units above node (topology only). */
static void topo_add(fs_cluster_t *c, uint32_t node, int64_t d)
{
    for (int l = 0; l < FS_TOPO_LEVELS; l++)
        c->topo->unit_free[l][c->topo->node_unit[l][node]] += (uint64_t)d;
}

static void share_take(fs_cluster_t *c, fs_pool_t *p, uint32_t node, int slot, uint32_t m,
                       fs_placement_t *out)
{
    uint16_t *u = slots_of(p, node);
    if (slot < 0) {     /* open a new shared GPU: one fully free GPU leaves node_free */
        for (slot = 0; u[slot]; slot++)
            ;
        c->node_free[node]--;
        p->gpus_free--;
        p->n_shared++;
        c->gpus_busy++;
        p->gpus_busy++;
        if (c->topo)
            topo_add(c, node, -1);
        index_update(c, node);
    }
    u[slot] = (uint16_t)(u[slot] + m);
    c->milli_busy += m;
    sindex_update(c, p, node);
    memset(out, 0, sizeof *out);
    out->pool = c->node_pool[node];
    out->n = 1;
    out->one = (fs_slice_t){node, 1};
    out->milli = m;
    out->gpu = (uint32_t)slot;
}

static void share_free(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t slot, uint32_t m)
{
    uint16_t *u = slots_of(p, node);
    u[slot] = (uint16_t)(u[slot] - m);
    c->milli_busy -= m;
    if (u[slot] == 0) { /* the last share left: a fully free GPU again */
        c->node_free[node]++;
        p->n_shared--;
        c->gpus_busy--;
        p->gpus_busy--;
        c->gpus_busy_down -= !c->node_up[node];
        if (c->node_up[node]) {
            p->gpus_free++;
            if (c->topo)
                topo_add(c, node, 1);
        }
        index_update(c, node);
    }
    sindex_update(c, p, node);
}

/* Leftmost node of the shared tree with level exactly k / some level >= m. */
static uint32_t sdescend_level(const fs_pool_t *p, uint32_t k)
{
    uint32_t i = 1;
    while (i < p->leaf0)
        i = mask_has(snode(p, 2 * i), k) ? 2 * i : 2 * i + 1;
    return p->first_node + (i - p->leaf0);
}

static uint32_t sdescend_ge(const fs_pool_t *p, uint32_t m)
{
    uint32_t i = 1;
    while (i < p->leaf0)
        i = mask_lowest_ge(snode(p, 2 * i), SW, m) >= 0 ? 2 * i : 2 * i + 1;
    return p->first_node + (i - p->leaf0);
}

static void topo_release(fs_topo_t *t);
static int topo_build(fs_cluster_t *c, const fs_topology_cfg_t *tc, fs_error_t *err);
static int topo_alloc(fs_cluster_t *c, fs_pool_t *p, uint32_t g, fs_placement_t *out);

/* ---- queries: indexed and linear, same answers ------------------------ */

static uint32_t q_best_fit(const fs_cluster_t *c, const fs_pool_t *p, uint32_t g)
{
    if (c->use_index) {
        int k = mask_lowest_ge(p->lroot, p->rwords, g);
        return k < 0 ? NONE : p->first_node + hb_first(p, (uint32_t)k);
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
        return (int64_t)g > p->max_level ? NONE : p->first_node + hb_first_ge(p, g);
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && c->node_free[n] >= g)
            return n;
    return NONE;
}

static uint32_t q_largest(const fs_cluster_t *c, const fs_pool_t *p)
{
    if (c->use_index)
        return p->max_level <= 0 ? NONE : p->first_node + hb_first(p, (uint32_t)p->max_level);
    uint32_t best = NONE, bestf = 0;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && c->node_free[n] > bestf) {
            best = n;
            bestf = c->node_free[n];
        }
    return best;
}

/* Is there an open shared GPU with >= m milli free? */
static int q_shared_fits(const fs_cluster_t *c, const fs_pool_t *p, uint32_t m)
{
    if (!p->smask)
        return 0;
    if (c->use_index)
        return mask_lowest_ge(snode(p, 1), SW, m) >= 0;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && node_smax(p, n) >= m)
            return 1;
    return 0;
}

/* GPU packing: the node holding the open shared GPU with the fewest milli
 * free that are still >= m (lowest node on ties). */
static uint32_t q_shared_pack(const fs_cluster_t *c, const fs_pool_t *p, uint32_t m)
{
    if (!p->smask)
        return NONE;
    if (c->use_index) {
        int k = mask_lowest_ge(snode(p, 1), SW, m);
        return k < 0 ? NONE : sdescend_level(p, (uint32_t)k);
    }
    uint32_t best = NONE, bestf = UINT32_MAX;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++) {
        if (!c->node_up[n])
            continue;
        const uint16_t *u = slots_of(p, n);
        for (uint32_t k = 0; k < p->gpn; k++)
            if (u[k] && FS_GPU_MILLI_WHOLE - u[k] >= m && FS_GPU_MILLI_WHOLE - u[k] < bestf) {
                best = n;
                bestf = FS_GPU_MILLI_WHOLE - u[k];
            }
    }
    return best;
}

/* The lowest node with an open shared GPU of >= m free. */
static uint32_t q_shared_first(const fs_cluster_t *c, const fs_pool_t *p, uint32_t m)
{
    if (!p->smask)
        return NONE;
    if (c->use_index)
        return mask_lowest_ge(snode(p, 1), SW, m) < 0 ? NONE : sdescend_ge(p, m);
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && node_smax(p, n) >= m)
            return n;
    return NONE;
}

/* ---- lifecycle ---------------------------------------------------------- */

/* A MIG pool: every GPU gets the layout; the nodes are filed at level 0
 * (no whole GPU is ever free).  "all-disabled" leaves the pool whole. */
static int mig_init(fs_cluster_t *c, fs_pool_t *p, const char *text, int per_gpu, fs_error_t *err)
{
    fs_error_t e;
    const fs_mig_model_t *m = fs_mig_model_lookup(p->gpu, &e);
    fs_mig_spec_t spec;
    if (!m || fs_mig_layout_parse(m, text, &spec, NULL, &e))
        return fs_error_set(err, FS_EINVAL, "cluster: pool '%s': mig: %s", p->name, e.msg);
    if (!spec.enabled)
        return 0;
    if (p->gpn > FS_CLUSTER_MIG_MAX_GPN)
        return fs_error_set(err, FS_EINVAL, "cluster: pool '%s': mig: %u GPUs per node (at most %u)",
                            p->name, p->gpn, FS_CLUSTER_MIG_MAX_GPN);
    if (fs_mig_layout_build(m, &spec, &p->mig_layout, &e))
        return fs_error_set(err, FS_EINVAL, "cluster: pool '%s': mig: %s", p->name, e.msg);
    if (!(p->mig_used = fs_calloc((size_t)p->n_nodes * p->gpn, 1)))
        return fs_error_set(err, FS_ENOMEM, "cluster: out of memory");
    p->mig = m;
    for (unsigned i = 0; i < p->mig_layout.ninst; i++) {
        unsigned pr = p->mig_layout.inst[i].profile;
        p->mig_pmask[pr] |= (uint8_t)(1u << i);
        p->mig_free[pr] += (uint64_t)p->n_nodes * p->gpn;
    }
    p->mig_total = (uint64_t)p->n_nodes * p->gpn * p->mig_layout.ninst;
    if (per_gpu) {  /* re-partitioning: every GPU its own layout, the static one at first */
        size_t ng = (size_t)p->n_nodes * p->gpn;
        if (!(p->mig_glay = fs_malloc(ng * sizeof *p->mig_glay)) ||
            !(p->mig_gpm = fs_malloc(ng * FS_MIG_MAX_PROFILES)))
            return fs_error_set(err, FS_ENOMEM, "cluster: out of memory");
        for (size_t g = 0; g < ng; g++) {
            p->mig_glay[g] = p->mig_layout;
            memcpy(p->mig_gpm + g * FS_MIG_MAX_PROFILES, p->mig_pmask, FS_MIG_MAX_PROFILES);
        }
        fs_mig_layout_t empty;
        memset(&empty, 0, sizeof empty);
        for (unsigned pr = 0; pr < m->nprofiles; pr++)
            p->mig_cap[pr] = (uint8_t)fs_mig_fits(m, &empty, pr);
    }
    p->gpus_free = 0;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++) {
        c->node_free[n] = 0;
        index_update(c, n);
    }
    return 0;
}

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
    c->node_lvl = fs_malloc((size_t)c->n_nodes * sizeof *c->node_lvl);
    if (!c->pools || !c->node_free || !c->node_pool || !c->node_up || !c->node_lvl)
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
        p->cpu_milli = pc->cpu_milli;
        p->mem_mib = pc->memory_mib;
        if (pc->time_slicing || pc->mps) {
            p->share_kind = pc->time_slicing ? FS_SHARING_TIME_SLICING : FS_SHARING_MPS;
            p->share_n = pc->time_slicing ? pc->time_slicing : pc->mps;
            p->share_milli = FS_SHARING_MILLI(p->share_n);
        }
        p->leaf0 = 1;
        while (p->leaf0 < p->n_nodes)
            p->leaf0 *= 2;
        for (uint32_t n = next; n < next + p->n_nodes; n++) {
            c->node_free[n] = p->gpn;
            c->node_pool[n] = i;
            c->node_up[n] = 1;
        }
        if (index_init(c, p))
            goto nomem;
        if (pc->mig) {
            int mrc = mig_init(c, p, pc->mig, pc->mig_recut_given && pc->mig_recut, err);
            if (mrc) {
                fs_cluster_release(c);
                return mrc;
            }
        }
        next += p->n_nodes;
        c->gpus_total += p->gpus_total;
    }
    c->gpus_up = c->gpus_total;
    int res = 0;
    for (uint32_t i = 0; i < c->n_pools; i++)
        res |= c->pools[i].cpu_milli || c->pools[i].mem_mib;
    if (res) {
        c->node_cpu = fs_malloc((size_t)c->n_nodes * sizeof *c->node_cpu);
        c->node_mem = fs_malloc((size_t)c->n_nodes * sizeof *c->node_mem);
        if (!c->node_cpu || !c->node_mem)
            goto nomem;
        for (uint32_t n = 0; n < c->n_nodes; n++) {
            c->node_cpu[n] = c->pools[c->node_pool[n]].cpu_milli;
            c->node_mem[n] = c->pools[c->node_pool[n]].mem_mib;
        }
    }
    int ranked = 0;
    for (size_t i = 0; i < cfg->n_pools; i++)
        ranked |= cfg->pools[i].node_rank != NULL;
    if (ranked) {   /* pools from a list follow the written ones: their ranks after those */
        if (!(c->node_rank = fs_malloc((size_t)c->n_nodes * sizeof *c->node_rank)))
            goto nomem;
        uint32_t base = UINT32_MAX;
        for (uint32_t i = 0; i < c->n_pools; i++)
            if (cfg->pools[i].node_rank && c->pools[i].first_node < base)
                base = c->pools[i].first_node;
        for (uint32_t i = 0; i < c->n_pools; i++)
            for (uint32_t k = 0; k < c->pools[i].n_nodes; k++)
                c->node_rank[c->pools[i].first_node + k] =
                    cfg->pools[i].node_rank ? base + cfg->pools[i].node_rank[k]
                                            : c->pools[i].first_node + k;
    }
    c->gen = 0;     /* filing the nodes is not a change */
    c->one_whole = c->n_pools == 1 && !c->pools[0].mig && !c->pools[0].share_n;
    int rc = topo_build(c, &cfg->topology, err);
    if (rc) {
        fs_cluster_release(c);
        return rc;
    }
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
            fs_free(c->pools[i].lset);
            fs_free(c->pools[i].lvl_n);
            fs_free(c->pools[i].lroot);
            fs_free(c->pools[i].sused);
            fs_free(c->pools[i].smask);
            fs_free(c->pools[i].mig_used);
            fs_free(c->pools[i].mig_glay);
            fs_free(c->pools[i].mig_gpm);
        }
    topo_release(c->topo);
    fs_free(c->pools);
    fs_free(c->node_free);
    fs_free(c->node_pool);
    fs_free(c->node_up);
    fs_free(c->node_lvl);
    fs_free(c->node_cpu);
    fs_free(c->node_mem);
    fs_free(c->node_rank);
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
    if (p->share_n)
        return g == 1;
    return g >= 1 && !p->mig && (g <= p->gpn || g <= p->gpus_total);
}

int fs_cluster_fits_scan(const fs_cluster_t *c, uint32_t pool, uint32_t g)
{
    const fs_pool_t *p = &c->pools[pool];
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && c->node_free[n] >= g)
            return 1;
    return 0;
}

static void take(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t g)
{
    c->node_free[node] -= g;
    p->gpus_free -= g;
    c->gpus_busy += g;
    p->gpus_busy += g;
    c->milli_busy += (uint64_t)g * 1000u;
    if (c->topo)
        topo_add(c, node, -(int64_t)g);
    index_update(c, node);
}

static void untake(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t g)
{
    c->node_free[node] += g;
    if (c->node_up[node]) {
        p->gpus_free += g;
        if (c->topo)
            topo_add(c, node, (int64_t)g);
    } else {
        c->gpus_busy_down -= g;
    }
    c->gpus_busy -= g;
    p->gpus_busy -= g;
    c->milli_busy -= (uint64_t)g * 1000u;
    index_update(c, node);
}

int fs_cluster_alloc(fs_cluster_t *c, uint32_t pool, uint32_t g, int placement,
                     fs_placement_t *out)
{
    fs_pool_t *p = &c->pools[pool];
    memset(out, 0, sizeof *out);
    out->pool = pool;
    out->milli = FS_GPU_MILLI_WHOLE;
    if (g == 0 || !fs_cluster_fits(c, pool, g))
        return 0;
    if (placement == FS_PLACE_TOPOLOGY && c->topo && g > p->gpn)
        return topo_alloc(c, p, g, out);
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
        for (size_t i = 0; i < n; i++)
            untake(c, p, s[i].node, s[i].gpus);
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

static void mig_free(fs_cluster_t *c, fs_pool_t *p, const fs_placement_t *pl);

void fs_cluster_free(fs_cluster_t *c, const fs_placement_t *pl)
{
    fs_pool_t *p = &c->pools[pl->pool];
    if (pl->mig) {
        mig_free(c, p, pl);
        return;
    }
    if (pl->cpu || pl->mem) {
        c->node_cpu[pl->one.node] += pl->cpu;
        c->node_mem[pl->one.node] += pl->mem;
        c->gen++;
    }
    if (pl->milli < FS_GPU_MILLI_WHOLE) {
        share_free(c, p, pl->one.node, pl->gpu, pl->milli);
        return;
    }
    const fs_slice_t *s = fs_placement_slices(pl);
    for (uint32_t i = 0; i < pl->n; i++)
        untake(c, p, s[i].node, s[i].gpus);
}

/* The instances of profile pr on GPU gi (node index x gpn + GPU) of p. */
static inline uint8_t mig_mask(const fs_pool_t *p, size_t gi, unsigned pr)
{
    return p->mig_gpm ? p->mig_gpm[gi * FS_MIG_MAX_PROFILES + pr] : p->mig_pmask[pr];
}

void fs_cluster_set_up(fs_cluster_t *c, uint32_t node, int up)
{
    if (!!c->node_up[node] == !!up)
        return;
    fs_pool_t *p = &c->pools[c->node_pool[node]];
    uint32_t busy = fs_cluster_node_busy(c, node);
    c->gpus_busy_down = up ? c->gpus_busy_down - busy : c->gpus_busy_down + busy;
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
    if (c->topo)
        topo_add(c, node, up ? (int64_t)c->node_free[node] : -(int64_t)c->node_free[node]);
    if (p->mig) {   /* the node's free instances leave (or rejoin) the counters */
        size_t g0 = (size_t)(node - p->first_node) * p->gpn;
        const uint8_t *u = p->mig_used + g0;
        for (unsigned pr = 0; pr < p->mig->nprofiles; pr++)
            for (uint32_t g = 0; g < p->gpn; g++) {
                uint64_t f = (uint64_t)__builtin_popcount(mig_mask(p, g0 + g, pr) & ~u[g] & 0xffu);
                p->mig_free[pr] = up ? p->mig_free[pr] + f : p->mig_free[pr] - f;
            }
    }
    index_update(c, node);
    sindex_update(c, p, node);
}

/* ---- MIG pools -------------------------------------------------------------- */

/* Free instances of profile pr on node (up or not). */
static uint32_t mig_node_free(const fs_pool_t *p, uint32_t node, unsigned pr)
{
    size_t g0 = (size_t)(node - p->first_node) * p->gpn;
    const uint8_t *u = p->mig_used + g0;
    uint32_t f = 0;
    for (uint32_t g = 0; g < p->gpn; g++)
        f += (uint32_t)__builtin_popcount(mig_mask(p, g0 + g, pr) & ~u[g] & 0xffu);
    return f;
}

int fs_cluster_mig_node_held(const fs_cluster_t *c, uint32_t node)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (!p->mig)
        return 0;
    const uint8_t *u = p->mig_used + (size_t)(node - p->first_node) * p->gpn;
    for (uint32_t g = 0; g < p->gpn; g++)
        if (u[g])
            return 1;
    return 0;
}

uint32_t fs_cluster_node_busy(const fs_cluster_t *c, uint32_t node)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (!p->mig)
        return p->gpn - c->node_free[node];
    const uint8_t *u = p->mig_used + (size_t)(node - p->first_node) * p->gpn;
    uint32_t b = 0;
    for (uint32_t g = 0; g < p->gpn; g++)
        b += u[g] != 0;
    return b;
}

/* GPU gi (pool-wide index) of a re-partitioning pool takes layout l: the
 * pool's instance total and the GPU's per-profile instance masks follow. */
static void mig_set_gpu(fs_pool_t *p, size_t gi, const fs_mig_layout_t *l)
{
    fs_mig_layout_t *cur = &p->mig_glay[gi];
    p->mig_total = p->mig_total - cur->ninst + l->ninst;
    *cur = *l;
    uint8_t *mk = p->mig_gpm + gi * FS_MIG_MAX_PROFILES;
    memset(mk, 0, FS_MIG_MAX_PROFILES);
    for (unsigned i = 0; i < l->ninst; i++)
        mk[l->inst[i].profile] |= (uint8_t)(1u << i);
}

int fs_cluster_mig_recut(fs_cluster_t *c, uint32_t node, unsigned pr)
{
    fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (!p->mig_glay || c->node_up[node] || pr >= p->mig->nprofiles ||
        fs_cluster_mig_node_held(c, node))
        return FS_EINVAL;
    size_t g0 = (size_t)(node - p->first_node) * p->gpn;
    int n = 0;
    for (uint32_t g = 0; g < p->gpn; g++) {
        fs_mig_layout_t cut;
        n += (int)fs_mig_recut(p->mig, &p->mig_glay[g0 + g], 0, pr, &cut);
        mig_set_gpu(p, g0 + g, &cut);
    }
    c->gen++;
    return n;
}

int fs_cluster_mig_set(fs_cluster_t *c, uint32_t node, const fs_mig_layout_t *lay)
{
    fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (!p->mig_glay || c->node_up[node] || fs_cluster_mig_node_held(c, node))
        return FS_EINVAL;
    for (uint32_t g = 0; g < p->gpn; g++)
        if (fs_mig_layout_check(p->mig, &lay[g], NULL))
            return FS_EINVAL;
    size_t g0 = (size_t)(node - p->first_node) * p->gpn;
    for (uint32_t g = 0; g < p->gpn; g++)
        mig_set_gpu(p, g0 + g, &lay[g]);
    c->gen++;
    return 0;
}

int fs_cluster_mig_fits(const fs_cluster_t *c, uint32_t pool, int32_t code, uint32_t k)
{
    const fs_pool_t *p = &c->pools[pool];
    int pr = p->mig ? fs_mig_profile_of_code(p->mig, code) : -1;
    if (pr < 0 || k == 0 || p->mig_free[pr] < k)
        return 0;
    if (k == 1)
        return 1;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && mig_node_free(p, n, (unsigned)pr) >= k)
            return 1;
    return 0;
}

int fs_cluster_mig_could_fit(const fs_cluster_t *c, uint32_t pool, int32_t code, uint32_t k)
{
    const fs_pool_t *p = &c->pools[pool];
    int pr = p->mig ? fs_mig_profile_of_code(p->mig, code) : -1;
    if (pr >= 0 && p->mig_glay)  /* re-partitioning: what a re-cut node would hold */
        return k >= 1 && k <= (uint64_t)p->gpn * p->mig_cap[pr];
    return pr >= 0 && k >= 1 &&
           k <= (uint64_t)p->gpn * (uint32_t)__builtin_popcount(p->mig_pmask[pr]);
}

int fs_cluster_mig_take(fs_cluster_t *c, uint32_t pool, int32_t code, uint32_t k, fs_placement_t *out)
{
    fs_pool_t *p = &c->pools[pool];
    memset(out, 0, sizeof *out);
    out->pool = pool;
    if (!fs_cluster_mig_fits(c, pool, code, k))
        return 0;
    unsigned pr = (unsigned)fs_mig_profile_of_code(p->mig, code);
    uint32_t best = NONE, best_free = UINT32_MAX;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++) {
        if (!c->node_up[n])
            continue;
        uint32_t f = mig_node_free(p, n, pr);
        if (f >= k && f < best_free) {
            best = n;
            best_free = f;
        }
    }
    if (best == NONE)
        return 0;
    size_t g0 = (size_t)(best - p->first_node) * p->gpn;
    uint8_t *u = p->mig_used + g0;
    uint32_t need = k;
    for (uint32_t g = 0; g < p->gpn && need; g++) {
        uint8_t was = u[g], mk = mig_mask(p, g0 + g, pr);
        for (unsigned i = 0; i < FS_MIG_MAX_INSTANCES && need; i++)
            if ((mk >> i & 1u) && !(u[g] >> i & 1u)) {
                u[g] |= (uint8_t)(1u << i);
                out->mig_bits |= UINT64_C(1) << (8 * g + i);
                need--;
            }
        if (!was && u[g]) {
            c->gpus_busy++;
            p->gpus_busy++;
        }
    }
    out->gpu = (uint32_t)__builtin_ctzll(out->mig_bits) / 8;
    out->n = 1;
    out->one = (fs_slice_t){best, k};
    out->mig = code;
    out->milli = p->mig->profile[pr].gpu_milli;
    p->mig_free[pr] -= k;
    p->mig_busy += k;
    c->milli_busy += (uint64_t)k * out->milli;
    c->gen++;
    return 1;
}

static void mig_free(fs_cluster_t *c, fs_pool_t *p, const fs_placement_t *pl)
{
    unsigned pr = (unsigned)fs_mig_profile_of_code(p->mig, pl->mig);
    uint8_t *u = p->mig_used + (size_t)(pl->one.node - p->first_node) * p->gpn;
    for (uint32_t g = 0; g < p->gpn; g++) {
        uint8_t bits = (uint8_t)(pl->mig_bits >> (8 * g));
        if (!bits)
            continue;
        u[g] &= (uint8_t)~bits;
        if (!u[g]) {
            c->gpus_busy--;
            p->gpus_busy--;
            c->gpus_busy_down -= !c->node_up[pl->one.node];
        }
    }
    if (c->node_up[pl->one.node])
        p->mig_free[pr] += pl->one.gpus;
    p->mig_busy -= pl->one.gpus;
    c->milli_busy -= (uint64_t)pl->one.gpus * pl->milli;
    c->gen++;
}

uint64_t fs_cluster_mig_busy(const fs_cluster_t *c)
{
    uint64_t b = 0;
    for (uint32_t i = 0; i < c->n_pools; i++)
        b += c->pools[i].mig_busy;
    return b;
}

/* ---- fractional requests ------------------------------------------------- */

int fs_cluster_fits_share(const fs_cluster_t *c, uint32_t pool, uint32_t g, uint32_t milli)
{
    if (g != 1 || milli == 0)
        return 0;
    return fs_cluster_fits(c, pool, 1) || q_shared_fits(c, &c->pools[pool], milli);
}

int fs_cluster_node_fits(const fs_cluster_t *c, uint32_t node, uint32_t g, uint32_t milli)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (!c->node_up[node])
        return 0;
    if (milli >= FS_GPU_MILLI_WHOLE)
        return g >= 1 && g <= p->gpn && c->node_free[node] >= g;
    return g == 1 && milli > 0 && (c->node_free[node] >= 1 || node_smax(p, node) >= milli);
}

int fs_cluster_alloc_req(fs_cluster_t *c, uint32_t pool, uint32_t g, uint32_t milli,
                         int placement, fs_placement_t *out)
{
    if (c->pools[pool].share_n) {   /* a replica (fs_sharing.h) */
        if (g != 1) {
            memset(out, 0, sizeof *out);
            return 0;
        }
        milli = c->pools[pool].share_milli;
    }
    if (milli >= FS_GPU_MILLI_WHOLE)
        return fs_cluster_alloc(c, pool, g, placement, out);
    fs_pool_t *p = &c->pools[pool];
    memset(out, 0, sizeof *out);
    out->pool = pool;
    out->milli = FS_GPU_MILLI_WHOLE;
    if (!fs_cluster_fits_req(c, pool, g, milli))
        return 0;
    if (ensure_shared(p))
        return FS_ENOMEM;
    uint32_t node;
    int slot = -1;
    if (placement == FS_PLACE_FIRST_FIT) {
        uint32_t a = q_shared_first(c, p, milli), b = q_first_fit(c, p, 1);
        node = a < b ? a : b;
        if (node == a)
            slot = node_slot(p, node, milli, 1);
    } else {
        node = q_shared_pack(c, p, milli);
        if (node != NONE)
            slot = node_slot(p, node, milli, 0);
        else
            node = q_best_fit(c, p, 1);
    }
    if (node == NONE) /* cannot happen after fits_req() */
        return 0;
    share_take(c, p, node, slot, milli, out);
    return 1;
}

int fs_cluster_take(fs_cluster_t *c, uint32_t node, uint32_t g, uint32_t milli, int slot,
                    fs_placement_t *out)
{
    uint32_t pool = c->node_pool[node];
    fs_pool_t *p = &c->pools[pool];
    if (milli >= FS_GPU_MILLI_WHOLE) {
        memset(out, 0, sizeof *out);
        out->pool = pool;
        out->milli = FS_GPU_MILLI_WHOLE;
        take(c, p, node, g);
        out->n = 1;
        out->one = (fs_slice_t){node, g};
        return 1;
    }
    if (ensure_shared(p))
        return FS_ENOMEM;
    share_take(c, p, node, slot, milli, out);
    return 1;
}

/* ---- pods: GPUs, CPU and memory ------------------------------------------------ */

int fs_cluster_node_fits_pod(const fs_cluster_t *c, uint32_t node, const fs_podreq_t *q)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (p->share_n && q->g)     /* GPU pods do not use shared pools (fs_sharing.h) */
        return 0;
    if (!c->node_up[node] || (q->g == 0 ? 0 : !fs_cluster_node_fits(c, node, q->g, q->milli)))
        return 0;
    return (!q->cpu || !p->cpu_milli || c->node_cpu[node] >= q->cpu) &&
           (!q->mem || !p->mem_mib || c->node_mem[node] >= q->mem);
}

int fs_cluster_fits_pod(const fs_cluster_t *c, uint32_t pool, const fs_podreq_t *q)
{
    const fs_pool_t *p = &c->pools[pool];
    if (p->share_n && q->g)     /* GPU pods do not use shared pools (fs_sharing.h) */
        return 0;
    if (!fs_cluster_pod_res(c, pool, q))
        return fs_cluster_fits_req(c, pool, q->g, q->milli);
    if (q->g > p->gpn || (q->g && !fs_cluster_fits_req(c, pool, q->g, q->milli)))
        return 0;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (fs_cluster_node_fits_pod(c, n, q))
            return 1;
    return 0;
}

int fs_cluster_could_fit_pod(const fs_cluster_t *c, uint32_t pool, const fs_podreq_t *q)
{
    const fs_pool_t *p = &c->pools[pool];
    if (p->share_n && q->g)     /* GPU pods do not use shared pools (fs_sharing.h) */
        return 0;
    return q->g <= p->gpn && (q->g == 0 || fs_cluster_could_fit(c, pool, q->g)) &&
           (!p->cpu_milli || q->cpu <= p->cpu_milli) && (!p->mem_mib || q->mem <= p->mem_mib);
}

int fs_cluster_take_pod(fs_cluster_t *c, uint32_t node, const fs_podreq_t *q, int slot,
                        fs_placement_t *out)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (q->g == 0) {
        memset(out, 0, sizeof *out);
        out->pool = c->node_pool[node];
        out->milli = FS_GPU_MILLI_WHOLE;
        out->n = 1;
        out->one = (fs_slice_t){node, 0};
    } else {
        int rc = fs_cluster_take(c, node, q->g, q->milli, slot, out);
        if (rc != 1)
            return rc;
    }
    out->cpu = p->cpu_milli ? q->cpu : 0;
    out->mem = p->mem_mib ? q->mem : 0;
    if (out->cpu || out->mem) {
        c->node_cpu[node] -= out->cpu;
        c->node_mem[node] -= out->mem;
        c->gen++;
    }
    return 1;
}

/* ---- candidates for scored placements -------------------------------------- */

static void collect_shared(const fs_pool_t *p, uint32_t i, uint32_t m, uint32_t k, uint32_t *out,
                           size_t *n, uint32_t *cnt)
{
    if ((k && *cnt >= k) || mask_lowest_ge(snode(p, i), SW, m) < 0)
        return;
    if (i >= p->leaf0) {
        out[(*n)++] = p->first_node + (i - p->leaf0);
        (*cnt)++;
        return;
    }
    collect_shared(p, 2 * i, m, k, out, n, cnt);
    collect_shared(p, 2 * i + 1, m, k, out, n, cnt);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

size_t fs_cluster_candidates(const fs_cluster_t *c, uint32_t pool, uint32_t g, uint32_t milli,
                             uint32_t k, uint32_t *out)
{
    const fs_pool_t *p = &c->pools[pool];
    int frac = milli < FS_GPU_MILLI_WHOLE;
    uint32_t lo = frac ? 1 : g;
    size_t n = 0;
    if (lo == 0 || (frac && g != 1))
        return 0;
    for (uint32_t L = lo; L <= p->gpn; L++) {
        uint32_t cnt = 0;
        if (c->use_index) {
            if (!mask_has(p->lroot, L))
                continue;
            for (uint32_t x = hb_first(p, L); x != NONE && (!k || cnt < k); x = hb_next(p, L, x + 1)) {
                out[n++] = p->first_node + x;
                cnt++;
            }
            continue;
        }
        for (uint32_t v = p->first_node; v < p->first_node + p->n_nodes && (!k || cnt < k); v++)
            if (c->node_up[v] && c->node_free[v] == L) {
                out[n++] = v;
                cnt++;
            }
    }
    if (frac && p->smask) {
        uint32_t cnt = 0;
        if (c->use_index)
            collect_shared(p, 1, milli, k, out, &n, &cnt);
        else
            for (uint32_t v = p->first_node; v < p->first_node + p->n_nodes && (!k || cnt < k); v++)
                if (c->node_up[v] && node_smax(p, v) >= milli) {
                    out[n++] = v;
                    cnt++;
                }
    }
    qsort(out, n, sizeof *out, cmp_u32);
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (w == 0 || out[w - 1] != out[i])
            out[w++] = out[i];
    return w;
}

size_t fs_cluster_candidates_cap(const fs_cluster_t *c, uint32_t pool, uint32_t k)
{
    const fs_pool_t *p = &c->pools[pool];
    size_t all = (size_t)2 * p->n_nodes;
    size_t per = (size_t)(p->gpn + 2) * k;
    return k && per < all ? per : all;
}

/* ---- topology -------------------------------------------------------------- */

static void topo_release(fs_topo_t *t)
{
    if (!t)
        return;
    for (int l = 0; l < FS_TOPO_LEVELS; l++) {
        fs_free(t->node_unit[l]);
        fs_free(t->unit_first[l]);
        fs_free(t->unit_free[l]);
    }
    fs_free(t);
}

/* Unit sizes in nodes for one pool: domain, rack, leaf, spine. */
static int topo_sizes(const fs_pool_t *p, uint32_t dom_gpus, const fs_topology_cfg_t *tc,
                      uint64_t size[FS_TOPO_LEVELS], fs_error_t *err)
{
    uint64_t dn = 1;
    if (dom_gpus) {
        if (dom_gpus % p->gpn != 0)
            return fs_error_set(err, FS_EINVAL, "cluster.topology.nvlink_domain: %u GPUs is not a "
                                "multiple of pool '%s''s %u GPUs per node", dom_gpus, p->name, p->gpn);
        dn = dom_gpus / p->gpn;
    }
    uint64_t rn = tc->nodes_per_rack ? tc->nodes_per_rack : dn;
    if (rn % dn != 0)
        return fs_error_set(err, FS_EINVAL, "cluster.topology.nodes_per_rack: %llu nodes do not hold "
                            "whole NVLink domains of %llu nodes (pool '%s')",
                            (unsigned long long)rn, (unsigned long long)dn, p->name);
    uint64_t ln = tc->racks_per_leaf ? rn * tc->racks_per_leaf : p->n_nodes;
    uint64_t sn = tc->racks_per_leaf && tc->leaves_per_spine ? ln * tc->leaves_per_spine : p->n_nodes;
    size[FS_TOPO_DOMAIN] = dn;
    size[FS_TOPO_RACK] = rn;
    size[FS_TOPO_LEAF] = ln > rn ? ln : rn;
    size[FS_TOPO_SPINE] = sn > size[FS_TOPO_LEAF] ? sn : size[FS_TOPO_LEAF];
    return 0;
}

static int topo_build(fs_cluster_t *c, const fs_topology_cfg_t *tc, fs_error_t *err)
{
    const char *d = tc->nvlink_domain;
    int node_dom = !d || strcasecmp(d, "node") == 0;
    if (node_dom && !tc->nodes_per_rack && !tc->racks_per_leaf && !tc->leaves_per_spine)
        return 0;
    uint32_t dom_gpus = 0;
    if (!node_dom) {
        char *end;
        unsigned long v = strtoul(d, &end, 10);
        if (*d < '0' || *d > '9' || *end || v == 0 || v > 1u << 20)
            return fs_error_set(err, FS_EINVAL, "cluster.topology.nvlink_domain: '%s' is not 'node' "
                                "or a number of GPUs (1 to 1048576)", d);
        dom_gpus = (uint32_t)v;
    }
    uint64_t size[FS_TOPO_LEVELS];
    uint64_t units[FS_TOPO_LEVELS] = {0};
    for (uint32_t i = 0; i < c->n_pools; i++) {
        int rc = topo_sizes(&c->pools[i], dom_gpus, tc, size, err);
        if (rc)
            return rc;
        for (int l = 0; l < FS_TOPO_LEVELS; l++)
            units[l] += (c->pools[i].n_nodes + size[l] - 1) / size[l];
    }
    fs_topo_t *t = fs_calloc(1, sizeof *t);
    if (!t)
        return fs_error_set(err, FS_ENOMEM, "cluster: out of memory");
    c->topo = t;
    for (int l = 0; l < FS_TOPO_LEVELS; l++) {
        t->n_units[l] = (uint32_t)units[l];
        t->node_unit[l] = fs_malloc((size_t)c->n_nodes * sizeof *t->node_unit[l]);
        t->unit_first[l] = fs_malloc((units[l] + 1) * sizeof *t->unit_first[l]);
        t->unit_free[l] = fs_calloc(units[l], sizeof *t->unit_free[l]);
        if (!t->node_unit[l] || !t->unit_first[l] || !t->unit_free[l])
            return fs_error_set(err, FS_ENOMEM, "cluster: out of memory");
    }
    uint32_t base[FS_TOPO_LEVELS] = {0};
    for (uint32_t i = 0; i < c->n_pools; i++) {
        const fs_pool_t *p = &c->pools[i];
        topo_sizes(p, dom_gpus, tc, size, NULL);
        for (int l = 0; l < FS_TOPO_LEVELS; l++) {
            for (uint32_t j = 0; j < p->n_nodes; j++) {
                uint32_t u = base[l] + (uint32_t)(j / size[l]);
                t->node_unit[l][p->first_node + j] = u;
                if (j % size[l] == 0)
                    t->unit_first[l][u] = p->first_node + j;
                t->unit_free[l][u] += p->gpn;
            }
            base[l] += (uint32_t)((p->n_nodes + size[l] - 1) / size[l]);
        }
    }
    for (int l = 0; l < FS_TOPO_LEVELS; l++)
        t->unit_first[l][t->n_units[l]] = c->n_nodes;
    return 0;
}

typedef struct slices {
    fs_slice_t *s;
    size_t n, cap;
} slices_t;

static uint64_t unit_free(const fs_cluster_t *c, int level, uint32_t u)
{
    if (level < 0)
        return c->node_up[u] ? c->node_free[u] : 0;
    return c->topo->unit_free[level][u];
}

/* Takes `need` GPUs from the units lo..hi of `level` (-1: nodes): the unit
 * with the fewest free GPUs that still holds the rest (best fit), else the
 * unit with the most free GPUs, whole, and on; recursing into the chosen
 * unit's children.  Slurm topology/tree best fit, level by level. */
static void topo_take(fs_cluster_t *c, fs_pool_t *p, int level, uint32_t lo, uint32_t hi,
                      uint64_t need, slices_t *sl)
{
    while (need > 0) {
        uint32_t bf = NONE, lg = NONE;
        uint64_t bff = UINT64_MAX, lgf = 0;
        for (uint32_t u = lo; u <= hi; u++) {
            uint64_t f = unit_free(c, level, u);
            if (f >= need && f < bff) {
                bf = u;
                bff = f;
            }
            if (f > lgf) {
                lg = u;
                lgf = f;
            }
        }
        uint32_t pick = bf != NONE ? bf : lg;
        uint64_t amt = bf != NONE ? need : lgf;
        if (pick == NONE)
            return;
        if (level < 0) {
            if (sl->n == sl->cap)
                return;
            take(c, p, pick, (uint32_t)amt);
            sl->s[sl->n++] = (fs_slice_t){pick, (uint32_t)amt};
        } else {
            const fs_topo_t *t = c->topo;
            uint32_t first = t->unit_first[level][pick], last = t->unit_first[level][pick + 1] - 1;
            if (level == 0)
                topo_take(c, p, -1, first, last, amt, sl);
            else
                topo_take(c, p, level - 1, t->node_unit[level - 1][first],
                          t->node_unit[level - 1][last], amt, sl);
        }
        need -= amt;
    }
}

static int topo_alloc(fs_cluster_t *c, fs_pool_t *p, uint32_t g, fs_placement_t *out)
{
    const fs_topo_t *t = c->topo;
    uint32_t lastn = p->first_node + p->n_nodes - 1;
    int level = FS_TOPO_SPINE;
    uint32_t lo = t->node_unit[FS_TOPO_SPINE][p->first_node], hi = t->node_unit[FS_TOPO_SPINE][lastn];
    for (int l = 0; l < FS_TOPO_LEVELS; l++) {
        uint32_t best = NONE;
        uint64_t bestf = UINT64_MAX;
        for (uint32_t u = t->node_unit[l][p->first_node]; u <= t->node_unit[l][lastn]; u++)
            if (t->unit_free[l][u] >= g && t->unit_free[l][u] < bestf) {
                best = u;
                bestf = t->unit_free[l][u];
            }
        if (best != NONE) {
            level = l;
            lo = hi = best;
            break;
        }
    }
    slices_t sl = {NULL, 0, g < p->n_nodes ? g : p->n_nodes};
    sl.s = fs_malloc(sl.cap * sizeof *sl.s);
    if (!sl.s)
        return FS_ENOMEM;
    topo_take(c, p, level, lo, hi, g, &sl);
    uint64_t got = 0;
    for (size_t i = 0; i < sl.n; i++)
        got += sl.s[i].gpus;
    if (got < g) { /* cannot happen after fits() */
        for (size_t i = 0; i < sl.n; i++)
            untake(c, p, sl.s[i].node, sl.s[i].gpus);
        fs_free(sl.s);
        return 0;
    }
    if (sl.n == 1) {
        out->one = sl.s[0];
        fs_free(sl.s);
    } else {
        out->many = sl.s;
    }
    out->n = (uint32_t)sl.n;
    return 1;
}

static uint32_t count_distinct(uint32_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u32);
    uint32_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += i == 0 || v[i] != v[i - 1];
    return d;
}

int fs_cluster_span(const fs_cluster_t *c, const fs_placement_t *pl, fs_span_t *out)
{
    const fs_slice_t *s = fs_placement_slices(pl);
    uint32_t *v = fs_malloc((pl->n ? pl->n : 1) * sizeof *v);
    if (!v)
        return FS_ENOMEM;
    uint32_t cnt[1 + FS_TOPO_LEVELS];
    for (int l = -1; l < FS_TOPO_LEVELS; l++) {
        for (uint32_t i = 0; i < pl->n; i++)
            v[i] = l < 0 || !c->topo ? s[i].node : c->topo->node_unit[l][s[i].node];
        cnt[l + 1] = count_distinct(v, pl->n);
    }
    fs_free(v);
    *out = (fs_span_t){cnt[0], cnt[1], cnt[2], cnt[3], cnt[4]};
    return 0;
}
