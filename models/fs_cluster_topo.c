/*
 * fs_cluster_topo: the cluster's topology (fs_cluster_int.h): units above
 * nodes with their free GPUs, gangs packed into the fewest units, and the
 * span of a placement.
 */
#include "fs_cluster_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void fs_cltopo_release(fs_topo_t *t)
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

int fs_cltopo_build(fs_cluster_t *c, const fs_topology_cfg_t *tc, fs_error_t *err)
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
        uint32_t bf = FS_CL_NONE, lg = FS_CL_NONE;
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
        uint32_t pick = bf != FS_CL_NONE ? bf : lg;
        uint64_t amt = bf != FS_CL_NONE ? need : lgf;
        if (pick == FS_CL_NONE)
            return;
        if (level < 0) {
            if (sl->n == sl->cap)
                return;
            fs_clidx_take(c, p, pick, (uint32_t)amt);
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

int fs_cltopo_alloc(fs_cluster_t *c, fs_pool_t *p, uint32_t g, fs_placement_t *out)
{
    const fs_topo_t *t = c->topo;
    uint32_t lastn = p->first_node + p->n_nodes - 1;
    int level = FS_TOPO_SPINE;
    uint32_t lo = t->node_unit[FS_TOPO_SPINE][p->first_node], hi = t->node_unit[FS_TOPO_SPINE][lastn];
    for (int l = 0; l < FS_TOPO_LEVELS; l++) {
        uint32_t best = FS_CL_NONE;
        uint64_t bestf = UINT64_MAX;
        for (uint32_t u = t->node_unit[l][p->first_node]; u <= t->node_unit[l][lastn]; u++)
            if (t->unit_free[l][u] >= g && t->unit_free[l][u] < bestf) {
                best = u;
                bestf = t->unit_free[l][u];
            }
        if (best != FS_CL_NONE) {
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
            fs_clidx_untake(c, p, sl.s[i].node, sl.s[i].gpus);
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
    qsort(v, n, sizeof *v, fs_cl_cmp_u32);
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
