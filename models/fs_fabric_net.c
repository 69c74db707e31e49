/*
 * fs_fabric_net: a pool's two-tier Clos and a job's flow on it
 * (fs_fabric.h; docs/models.md "Fabric"): the kinds' defaults, the
 * cluster.fabric rules, link ids and capacities, and the ring of a
 * placement.
 */
#include "fs_fabric.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Defaults per kind (docs/models.md "Fabric" names the sources): NIC rate
 * Gb/s, nodes per leaf group, rail-optimized, NVLink GB/s per GPU and
 * direction.  The leaf groups are the DGX SuperPOD scalable units' rail
 * groups: B200 NDR 32 nodes (radix-64 leaves, 32 down), B300 XDR 72
 * (radix 144, 72 down), B300 Spectrum-X 64 (each rail's two 400GbE planes
 * taken as one 800G leaf of 64 nodes).  The latency per ring step is cluster.fabric.alpha_us (its
 * default: NCCL's network ring latency, Simple protocol,
 * src/graph/tuning.cc hwLat: 14 us). */
static const struct kind_def {
    double nic_gbps;
    uint32_t nodes_per_leaf;
    int rail;
    double nvlink_gbs;
} kind_defs[FS_FABRIC_KINDS] = {
    [FS_FABRIC_IB_NDR] = {400, 32, 1, 450},
    [FS_FABRIC_IB_XDR] = {800, 72, 1, 900},
    [FS_FABRIC_ROCE_400] = {400, 2, 0, 450},
    [FS_FABRIC_ROCE_800] = {800, 64, 1, 900},
    [FS_FABRIC_NVL72] = {400, 18, 1, 900},
};

int fs_fabric_shape(const fs_fabric_cfg_t *fc, uint32_t gpn, uint32_t dom_nodes,
                    fs_fabric_shape_t *out, fs_error_t *err)
{
    const struct kind_def *k = &kind_defs[fc->kind > 0 && fc->kind < FS_FABRIC_KINDS ? fc->kind
                                                                                    : FS_FABRIC_IB_NDR];
    fs_fabric_shape_t s = {0};
    s.nics = fc->nics_per_node ? fc->nics_per_node : gpn;
    s.nodes_per_leaf = fc->nodes_per_leaf ? fc->nodes_per_leaf : k->nodes_per_leaf;
    int rail = fc->rail_optimized == FS_FAB_RAIL_AUTO ? k->rail : fc->rail_optimized == FS_FAB_RAIL_YES;
    s.rails = rail ? s.nics : 1;
    s.leaf_down = rail ? s.nodes_per_leaf : s.nodes_per_leaf * s.nics;
    double gbps = fc->nic_gbps > 0 ? fc->nic_gbps : k->nic_gbps;
    s.port_Bps = gbps * 1e9 / 8.0;
    s.nvl_Bps = (fc->nvlink_gbs > 0 ? fc->nvlink_gbs : k->nvlink_gbs) * 1e9;
    s.alpha_s = fc->alpha_us * 1e-6;
    s.eff = fc->efficiency > 0 ? fc->efficiency : 1.0;
    if (dom_nodes > 1 && s.nodes_per_leaf % dom_nodes != 0)
        return fs_error_set(err, FS_EINVAL, "cluster.fabric.nodes_per_leaf: %u nodes do not hold "
                            "whole NVLink domains of %u nodes (cluster.topology.nvlink_domain)",
                            s.nodes_per_leaf, dom_nodes);
    double up = s.leaf_down / fc->oversubscription;
    if (fabs(up - nearbyint(up)) > 1e-9 * up || nearbyint(up) < 1)
        return fs_error_set(err, FS_EINVAL, "cluster.fabric.oversubscription: %g does not divide a "
                            "leaf's %u downlink ports into whole uplink ports (%g)",
                            fc->oversubscription, s.leaf_down, up);
    s.up_ports = (uint32_t)nearbyint(up);
    s.spines = fc->spines ? fc->spines : s.up_ports;
    if (s.spines > s.up_ports || s.up_ports % s.spines != 0)
        return fs_error_set(err, FS_EINVAL, "cluster.fabric.spines: %u spines do not take a leaf's "
                            "%u uplink ports in equal whole numbers (a leaf connects to every spine)",
                            s.spines, s.up_ports);
    *out = s;
    return 0;
}

/* NVLink domain size in nodes of a pool (cluster.topology.nvlink_domain). */
static int dom_nodes_of(const fs_config_t *cfg, uint32_t gpn, uint32_t *out)
{
    const char *d = cfg->cluster.topology.nvlink_domain;
    *out = 1;
    if (!d || strcasecmp(d, "node") == 0)
        return 0;
    unsigned long v = strtoul(d, NULL, 10);
    if (v == 0 || gpn == 0 || v % gpn != 0)
        return FS_EINVAL;   /* the cluster refuses it */
    *out = (uint32_t)(v / gpn);
    return 0;
}

const fs_fabric_traffic_cfg_t *fs_fabric_traffic(const fs_fabric_cfg_t *fc, uint32_t job_class)
{
    for (size_t i = 0; i < fc->n_traffic; i++)
        if (fc->traffic[i].job_class == job_class)
            return &fc->traffic[i];
    return NULL;
}

int fs_fabric_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    const fs_fabric_cfg_t *fc = &cfg->cluster.fabric;
    if (key && keylen)
        key[0] = '\0';
#define BLAME(...) snprintf(key, keylen, __VA_ARGS__)
    if (fc->kind == FS_FABRIC_OFF && cfg->scheduler.placement == FS_PLACE_FABRIC_AWARE) {
        BLAME("scheduler.placement");
        return fs_error_set(err, FS_EINVAL, "scheduler.placement: fabric_aware places by the "
                            "network's load and needs cluster.fabric (a kind other than off)");
    }
    if (fc->kind == FS_FABRIC_OFF)
        return 0;
    if (cfg->cluster.n_span_speed) {
        BLAME("cluster.span_speed");
        return fs_error_set(err, FS_EINVAL, "cluster.span_speed: the fabric (cluster.fabric) "
                            "models what span factors stand for; give one of them, not both");
    }
    for (size_t i = 0; i < cfg->cluster.n_pools; i++) {
        const fs_pool_cfg_t *p = &cfg->cluster.pools[i];
        uint32_t dn;
        if (dom_nodes_of(cfg, p->gpus_per_node, &dn))
            continue;   /* cluster.topology's own error */
        fs_fabric_shape_t s;
        if (fs_fabric_shape(fc, p->gpus_per_node, dn, &s, err)) {
            size_t kl = strcspn(err->msg, ":");
            snprintf(key, keylen, "%.*s", (int)kl, err->msg);
            return FS_EINVAL;
        }
    }
    for (size_t i = 0; i < fc->n_traffic; i++) {
        const fs_fabric_traffic_cfg_t *t = &fc->traffic[i];
        if ((t->bytes > 0) == (t->params > 0)) {
            BLAME("cluster.fabric.traffic.%zu", i);
            return fs_error_set(err, FS_EINVAL, "cluster.fabric.traffic.%zu: give bytes or params "
                                "(with dtype), one of them", i);
        }
        for (size_t j = 0; j < i; j++)
            if (fc->traffic[j].job_class == t->job_class) {
                BLAME("cluster.fabric.traffic.%zu.class", i);
                return fs_error_set(err, FS_EINVAL, "cluster.fabric.traffic.%zu.class: class %u "
                                    "already has traffic (item %zu)", i, t->job_class, j);
            }
        if (cfg->workload.kind == FS_WORKLOAD_SYNTHETIC && t->job_class != 0) {
            BLAME("cluster.fabric.traffic.%zu.class", i);
            return fs_error_set(err, FS_EINVAL, "cluster.fabric.traffic.%zu.class: no job has "
                                "class %u (a synthetic workload's jobs are class 0)", i,
                                t->job_class);
        }
    }
    for (size_t i = 0; i < fc->n_failures; i++) {
        const char *pn = fc->failures[i].pool;
        size_t p = 0;
        while (pn && p < cfg->cluster.n_pools && strcmp(cfg->cluster.pools[p].name, pn) != 0)
            p++;
        if (pn && p == cfg->cluster.n_pools) {
            BLAME("cluster.fabric.failures.%zu.pool", i);
            return fs_error_set(err, FS_EINVAL, "cluster.fabric.failures.%zu.pool: no pool is "
                                "named \"%s\"", i, pn);
        }
    }
#undef BLAME
    return 0;
}

int fs_fabric_net_init(fs_fabric_net_t *net, const fs_fabric_cfg_t *fc, const fs_cluster_t *c,
                       fs_error_t *err)
{
    memset(net, 0, sizeof *net);
    net->n_nodes = c->n_nodes;
    net->shape = fs_calloc(c->n_pools ? c->n_pools : 1, sizeof *net->shape);
    net->pool_group0 = fs_calloc(c->n_pools ? c->n_pools : 1, sizeof *net->pool_group0);
    net->node_dom = fs_malloc((c->n_nodes ? c->n_nodes : 1) * sizeof *net->node_dom);
    if (!net->shape || !net->pool_group0 || !net->node_dom)
        return fs_error_set(err, FS_ENOMEM, "fabric: out of memory");
    uint32_t groups = 0;
    for (uint32_t p = 0; p < c->n_pools; p++) {
        const fs_pool_t *pl = &c->pools[p];
        uint32_t dn = 1;
        if (c->topo && pl->n_nodes)
            dn = c->topo->unit_first[FS_TOPO_DOMAIN][c->topo->node_unit[FS_TOPO_DOMAIN][pl->first_node] + 1] -
                 pl->first_node;
        int rc = fs_fabric_shape(fc, pl->gpn, dn, &net->shape[p], err);
        if (rc)
            return rc;
        net->pool_group0[p] = groups;
        groups += (pl->n_nodes + net->shape[p].nodes_per_leaf - 1) / net->shape[p].nodes_per_leaf;
    }
    net->n_groups = groups;
    for (uint32_t v = 0; v < c->n_nodes; v++)
        net->node_dom[v] = c->topo ? c->topo->node_unit[FS_TOPO_DOMAIN][v] : v;
    size_t nl = (size_t)c->n_nodes + groups;
    net->cap = fs_malloc((nl ? nl : 1) * sizeof *net->cap);
    if (!net->cap)
        return fs_error_set(err, FS_ENOMEM, "fabric: out of memory");
    for (uint32_t v = 0; v < c->n_nodes; v++) {
        const fs_fabric_shape_t *s = &net->shape[c->node_pool[v]];
        net->cap[v] = s->nics * s->port_Bps;
    }
    for (uint32_t p = 0; p < c->n_pools; p++) {
        const fs_fabric_shape_t *s = &net->shape[p];
        uint32_t end = p + 1 < c->n_pools ? net->pool_group0[p + 1] : groups;
        for (uint32_t g = net->pool_group0[p]; g < end; g++)  /* every rail's leaf, every uplink */
            net->cap[c->n_nodes + g] = (double)s->rails * s->up_ports * s->port_Bps;
    }
    return 0;
}

void fs_fabric_net_release(fs_fabric_net_t *net)
{
    fs_free(net->shape);
    fs_free(net->pool_group0);
    fs_free(net->node_dom);
    fs_free(net->cap);
    fs_free(net->links);
    fs_free(net->coef);
    fs_free(net->sl);
    memset(net, 0, sizeof *net);
}

uint32_t fs_fabric_net_group(const fs_fabric_net_t *net, const fs_cluster_t *c, uint32_t node)
{
    uint32_t p = c->node_pool[node];
    return net->pool_group0[p] + (node - c->pools[p].first_node) / net->shape[p].nodes_per_leaf;
}

static int cmp_slice(const void *a, const void *b)
{
    uint32_t x = ((const fs_slice_t *)a)->node, y = ((const fs_slice_t *)b)->node;
    return (x > y) - (x < y);
}

static double dtype_bytes(int dtype)
{
    return dtype == FS_FAB_FP32 ? 4.0 : dtype == FS_FAB_FP8 ? 1.0 : 2.0;
}

/* How NCCL moves a job's all-reduce across d >= 2 domains (docs/models.md
 * "Fabric"), on m GPUs per domain, n in all.  Its ring over every GPU
 * (channels as many as the domain's GPUs, each leaving the domain through
 * its own NIC): a domain sends 2(n-1)/n x bytes over the network and each
 * GPU (m-1)/m of that over NVLink.  Its double binary tree of domains (each
 * tree takes half the bytes; a domain sends half the bytes on each edge it
 * has in either tree): at d = 2 each domain has one edge in each tree,
 * bytes in all; at d = 3 the busiest has three, 1.5 x bytes; from d = 4
 * on the busiest has four (a parent and two children in one tree, a parent
 * in the other), 2 x bytes, no less than the ring's, so the tree is never
 * taken.  Inside a domain the tree is a chain, each GPU sending the bytes
 * up and again down: 2 x bytes over NVLink.  The one whose idle time at the
 * domains' NIC rate is shorter is taken (NCCL picks by its own model of
 * the two; the ring when they tie). */
static void ring_or_tree(const fs_fabric_net_t *net, fs_fabric_ring_t *r, const fs_slice_t *sl,
                         uint32_t n, uint32_t ranks, uint32_t m, const fs_fabric_shape_t *sh)
{
    double S = r->bytes, eff = r->eff > 0 ? r->eff : 1.0;
    /* the domains' NIC rate: the least of NIC capacity x nodes of a domain */
    double x = INFINITY;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j < n && net->node_dom[sl[j].node] == net->node_dom[sl[i].node])
            j++;
        for (uint32_t k = i; k < j; k++)
            if (net->cap[sl[k].node] * (j - i) < x)
                x = net->cap[sl[k].node] * (j - i);
        i = j;
    }
    double ring_e = 2.0 * (ranks - 1.0) / ranks * S;
    double ring_v = m >= 2 ? (m - 1.0) / m * ring_e / sh->nvl_Bps : 0.0;
    r->edge = ring_e;
    r->nvl_s = ring_v;
    r->tree = 0;
    if (r->domains > 3)
        return;
    double tree_e = (r->domains == 2 ? 1.0 : 1.5) * S;
    double tree_v = m >= 2 ? 2.0 * S / sh->nvl_Bps : 0.0;
    double t_ring = fmax(ring_e / (eff * x), ring_v), t_tree = fmax(tree_e / (eff * x), tree_v);
    if (t_tree < t_ring) {
        r->edge = tree_e;
        r->nvl_s = tree_v;
        r->tree = 1;
    }
}

int fs_fabric_net_flow(fs_fabric_net_t *net, const fs_cluster_t *c, const fs_placement_t *pl,
                       const fs_fabric_traffic_cfg_t *t, const uint32_t **links,
                       const double **coef, fs_fabric_ring_t *ring)
{
    uint32_t n = pl->n;
    size_t need = (size_t)2 * n + 2;
    if (fs_grow((void **)&net->links, &net->cap_links, need, sizeof *net->links) ||
        fs_grow((void **)&net->coef, &net->cap_coef, need, sizeof *net->coef) ||
        fs_grow((void **)&net->sl, &net->cap_sl, need, sizeof *net->sl))
        return -1;
    const fs_slice_t *s = fs_placement_slices(pl);
    /* nodes in id order: domains and leaf groups are contiguous node
     * ranges, so the ring visits each group's domains in a row */
    fs_slice_t *sl = net->sl;
    memcpy(sl, s, n * sizeof *sl);
    qsort(sl, n, sizeof *sl, cmp_slice);
#define nodes_at(i) (sl[(i)].node)
    const fs_fabric_shape_t *sh = &net->shape[pl->pool];
    double bytes = t->bytes > 0 ? t->bytes : t->params * dtype_bytes(t->dtype);
    /* GPUs (NCCL's ranks), GPUs per domain (the largest), domains */
    uint32_t d = 0, mmax = 0, m = 0, ranks = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = sl[i].gpus;
        if (i == 0 || net->node_dom[nodes_at(i)] != net->node_dom[nodes_at(i - 1)]) {
            d++;
            m = 0;
        }
        m += g;
        ranks += g;
        if (m > mmax)
            mmax = m;
    }
    *ring = (fs_fabric_ring_t){
        .bytes = bytes,
        .domains = d,
        .nvl_s = mmax >= 2 ? 2.0 * (mmax - 1.0) / mmax * bytes / sh->nvl_Bps : 0.0,
        .eff = sh->eff,
        .alpha_s = sh->alpha_s,
        .compute_s = t->compute_s,
        .overlap = t->overlap,
    };
    if (d < 2)
        return 0;
    ring_or_tree(net, ring, sl, n, ranks, mmax, sh);
    if (d < 2)
        return 0;
    uint32_t nl = 0;
    /* each node's NICs: its domain's share of the ring's traffic */
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j < n && net->node_dom[nodes_at(j)] == net->node_dom[nodes_at(i)])
            j++;
        for (uint32_t k = i; k < j; k++) {
            net->links[nl] = nodes_at(k);
            net->coef[nl++] = 1.0 / (j - i);
        }
        i = j;
    }
    /* each leaf group's uplinks: the ring's edges that leave it (a domain
     * to the next, cyclic), traffic split evenly over its rails and spines */
    uint32_t first_nic = nl;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t nx = (i + 1) % n;
        uint32_t g = fs_fabric_net_group(net, c, nodes_at(i));
        if (net->node_dom[nodes_at(nx)] == net->node_dom[nodes_at(i)] ||
            fs_fabric_net_group(net, c, nodes_at(nx)) == g)
            continue;
        uint32_t id = net->n_nodes + g, k = first_nic;
        while (k < nl && net->links[k] != id)
            k++;
        if (k == nl) {
            net->links[nl] = id;
            net->coef[nl++] = 0.0;
        }
        net->coef[k] += 1.0;
    }
    *links = net->links;
    *coef = net->coef;
    return (int)nl;
#undef nodes_at
}
