/*
 * fs_cluster: GPU pools, nodes and placements (fs_cluster.h).  This file is
 * init and release, whole-GPU placement, nodes going up and down, and the
 * candidates of scored placements; fs_cluster_int.h lists the files of the
 * index, fractional sharing, MIG and topology.
 */
#include "fs_cluster_int.h"
#include "fs_catalog.h"
#include "fs_sharing.h"

#include <stdlib.h>
#include <string.h>

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
        if (fs_clidx_init(c, p))
            goto nomem;
        if (pc->mig) {
            int mrc = fs_clmig_init(c, p, pc->mig, pc->mig_recut_given && pc->mig_recut, err);
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
    int rc = fs_cltopo_build(c, &cfg->topology, err);
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
    fs_cltopo_release(c->topo);
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
        return fs_cltopo_alloc(c, p, g, out);
    if (g <= p->gpn) {
        uint32_t n = placement == FS_PLACE_FIRST_FIT ? fs_clidx_first_fit(c, p, g) : fs_clidx_best_fit(c, p, g);
        if (n == FS_CL_NONE)
            return 0;
        fs_clidx_take(c, p, n, g);
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
            node = fs_clidx_first_fit(c, p, 1);
        else if (need >= p->gpn)
            node = fs_clidx_largest(c, p);
        else {
            node = fs_clidx_best_fit(c, p, need);
            if (node == FS_CL_NONE)
                node = fs_clidx_largest(c, p);
        }
        if (node == FS_CL_NONE || n == cap) /* cannot happen after fits() */
            break;
        uint32_t k = c->node_free[node] < need ? c->node_free[node] : need;
        fs_clidx_take(c, p, node, k);
        s[n++] = (fs_slice_t){node, k};
        need -= k;
    }
    if (need > 0) { /* undo: an inconsistent index would be a bug */
        for (size_t i = 0; i < n; i++)
            fs_clidx_untake(c, p, s[i].node, s[i].gpus);
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
    if (pl->mig) {
        fs_clmig_free(c, p, pl);
        return;
    }
    if (pl->cpu || pl->mem) {
        c->node_cpu[pl->one.node] += pl->cpu;
        c->node_mem[pl->one.node] += pl->mem;
        c->gen++;
    }
    if (pl->milli < FS_GPU_MILLI_WHOLE) {
        fs_clshare_free(c, p, pl->one.node, pl->gpu, pl->milli);
        return;
    }
    const fs_slice_t *s = fs_placement_slices(pl);
    for (uint32_t i = 0; i < pl->n; i++)
        fs_clidx_untake(c, p, s[i].node, s[i].gpus);
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
        fs_cltopo_add(c, node, up ? (int64_t)c->node_free[node] : -(int64_t)c->node_free[node]);
    if (p->mig) {   /* the node's free instances leave (or rejoin) the counters */
        size_t g0 = (size_t)(node - p->first_node) * p->gpn;
        const uint8_t *u = p->mig_used + g0;
        for (unsigned pr = 0; pr < p->mig->nprofiles; pr++)
            for (uint32_t g = 0; g < p->gpn; g++) {
                uint64_t f = (uint64_t)__builtin_popcount(fs_clmig_mask(p, g0 + g, pr) & ~u[g] & 0xffu);
                p->mig_free[pr] = up ? p->mig_free[pr] + f : p->mig_free[pr] - f;
            }
    }
    fs_clidx_update(c, node);
    fs_clshare_update(c, p, node);
}

/* ---- candidates for scored placements -------------------------------------- */

static void collect_shared(const fs_pool_t *p, uint32_t i, uint32_t m, uint32_t k, uint32_t *out,
                           size_t *n, uint32_t *cnt)
{
    if ((k && *cnt >= k) || fs_clidx_mask_lowest_ge(fs_clshare_node(p, i), FS_CLUSTER_SWORDS, m) < 0)
        return;
    if (i >= p->leaf0) {
        out[(*n)++] = p->first_node + (i - p->leaf0);
        (*cnt)++;
        return;
    }
    collect_shared(p, 2 * i, m, k, out, n, cnt);
    collect_shared(p, 2 * i + 1, m, k, out, n, cnt);
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
            if (!fs_clidx_mask_has(p->lroot, L))
                continue;
            for (uint32_t x = fs_clidx_first(p, L); x != FS_CL_NONE && (!k || cnt < k); x = fs_clidx_next(p, L, x + 1)) {
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
                if (c->node_up[v] && fs_clshare_smax(p, v) >= milli) {
                    out[n++] = v;
                    cnt++;
                }
    }
    qsort(out, n, sizeof *out, fs_cl_cmp_u32);
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
