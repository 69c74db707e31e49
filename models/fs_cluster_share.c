/*
 * fs_cluster_share: fractional GPU requests and pods in the cluster
 * (fs_cluster_int.h): shared GPUs hold slots of milli-GPUs, filed in a
 * level tree over nodes (bits: free milli of each open shared GPU); pods
 * ask GPUs, CPU and memory of one node.
 */
#include "fs_cluster_int.h"

#include <string.h>

/* ---- fractional sharing: shared slots and their level tree ------------- */

/* Rebuilds node's leaf of the shared tree (bits: free milli of each open
 * shared GPU, if the node is up) and the path to the root. */
void fs_clshare_update(fs_cluster_t *c, fs_pool_t *p, uint32_t node)
{
    c->gen++;
    if (!p->smask)
        return;
    uint32_t i = p->leaf0 + (node - p->first_node);
    uint64_t *leaf = fs_clshare_node(p, i);
    memset(leaf, 0, FS_CLUSTER_SWORDS * sizeof *leaf);
    if (c->node_up[node]) {
        const uint16_t *u = fs_clshare_slots(p, node);
        for (uint32_t k = 0; k < p->gpn; k++)
            if (u[k]) {
                uint32_t f = FS_GPU_MILLI_WHOLE - u[k];
                leaf[f / 64] |= UINT64_C(1) << (f % 64);
            }
    }
    for (i /= 2; i >= 1; i /= 2) {
        uint64_t *m = fs_clshare_node(p, i), *l = fs_clshare_node(p, 2 * i), *r = fs_clshare_node(p, 2 * i + 1);
        for (uint32_t w = 0; w < FS_CLUSTER_SWORDS; w++)
            m[w] = l[w] | r[w];
    }
}

/* Allocates the pool's shared slots and tree (first fractional job). */
static int ensure_shared(fs_pool_t *p)
{
    if (p->sused)
        return 0;
    uint16_t *u = fs_calloc((size_t)p->n_nodes * p->gpn, sizeof *u);
    uint64_t *m = fs_calloc((size_t)2 * p->leaf0 * FS_CLUSTER_SWORDS, sizeof *m);
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
    const uint16_t *u = fs_clshare_slots(p, node);
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
uint32_t fs_clshare_smax(const fs_pool_t *p, uint32_t node)
{
    if (!p->sused)
        return 0;
    const uint16_t *u = fs_clshare_slots(p, node);
    uint32_t best = 0;
    for (uint32_t k = 0; k < p->gpn; k++)
        if (u[k] && FS_GPU_MILLI_WHOLE - u[k] > best)
            best = FS_GPU_MILLI_WHOLE - u[k];
    return best;
}


static void share_take(fs_cluster_t *c, fs_pool_t *p, uint32_t node, int slot, uint32_t m,
                       fs_placement_t *out)
{
    uint16_t *u = fs_clshare_slots(p, node);
    if (slot < 0) {     /* open a new shared GPU: one fully free GPU leaves node_free */
        for (slot = 0; u[slot]; slot++)
            ;
        c->node_free[node]--;
        p->gpus_free--;
        p->n_shared++;
        c->gpus_busy++;
        p->gpus_busy++;
        if (c->topo)
            fs_cltopo_add(c, node, -1);
        fs_clidx_update(c, node);
    }
    u[slot] = (uint16_t)(u[slot] + m);
    c->milli_busy += m;
    fs_clshare_update(c, p, node);
    memset(out, 0, sizeof *out);
    out->pool = c->node_pool[node];
    out->n = 1;
    out->one = (fs_slice_t){node, 1};
    out->milli = m;
    out->gpu = (uint32_t)slot;
}

void fs_clshare_free(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t slot, uint32_t m)
{
    uint16_t *u = fs_clshare_slots(p, node);
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
                fs_cltopo_add(c, node, 1);
        }
        fs_clidx_update(c, node);
    }
    fs_clshare_update(c, p, node);
}

/* Leftmost node of the shared tree with level exactly k / some level >= m. */
static uint32_t sdescend_level(const fs_pool_t *p, uint32_t k)
{
    uint32_t i = 1;
    while (i < p->leaf0)
        i = fs_clidx_mask_has(fs_clshare_node(p, 2 * i), k) ? 2 * i : 2 * i + 1;
    return p->first_node + (i - p->leaf0);
}

static uint32_t sdescend_ge(const fs_pool_t *p, uint32_t m)
{
    uint32_t i = 1;
    while (i < p->leaf0)
        i = fs_clidx_mask_lowest_ge(fs_clshare_node(p, 2 * i), FS_CLUSTER_SWORDS, m) >= 0 ? 2 * i : 2 * i + 1;
    return p->first_node + (i - p->leaf0);
}

/* ---- queries: indexed and linear, same answers ------------------------ */

/* Is there an open shared GPU with >= m milli free? */
static int q_shared_fits(const fs_cluster_t *c, const fs_pool_t *p, uint32_t m)
{
    if (!p->smask)
        return 0;
    if (c->use_index)
        return fs_clidx_mask_lowest_ge(fs_clshare_node(p, 1), FS_CLUSTER_SWORDS, m) >= 0;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && fs_clshare_smax(p, n) >= m)
            return 1;
    return 0;
}

/* GPU packing: the node holding the open shared GPU with the fewest milli
 * free that are still >= m (lowest node on ties). */
static uint32_t q_shared_pack(const fs_cluster_t *c, const fs_pool_t *p, uint32_t m)
{
    if (!p->smask)
        return FS_CL_NONE;
    if (c->use_index) {
        int k = fs_clidx_mask_lowest_ge(fs_clshare_node(p, 1), FS_CLUSTER_SWORDS, m);
        return k < 0 ? FS_CL_NONE : sdescend_level(p, (uint32_t)k);
    }
    uint32_t best = FS_CL_NONE, bestf = UINT32_MAX;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++) {
        if (!c->node_up[n])
            continue;
        const uint16_t *u = fs_clshare_slots(p, n);
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
        return FS_CL_NONE;
    if (c->use_index)
        return fs_clidx_mask_lowest_ge(fs_clshare_node(p, 1), FS_CLUSTER_SWORDS, m) < 0 ? FS_CL_NONE : sdescend_ge(p, m);
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && fs_clshare_smax(p, n) >= m)
            return n;
    return FS_CL_NONE;
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
    return g == 1 && milli > 0 && (c->node_free[node] >= 1 || fs_clshare_smax(p, node) >= milli);
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
        uint32_t a = q_shared_first(c, p, milli), b = fs_clidx_first_fit(c, p, 1);
        node = a < b ? a : b;
        if (node == a)
            slot = node_slot(p, node, milli, 1);
    } else {
        node = q_shared_pack(c, p, milli);
        if (node != FS_CL_NONE)
            slot = node_slot(p, node, milli, 0);
        else
            node = fs_clidx_best_fit(c, p, 1);
    }
    if (node == FS_CL_NONE) /* cannot happen after fits_req() */
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
        fs_clidx_take(c, p, node, g);
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
