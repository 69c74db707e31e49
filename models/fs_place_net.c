/*
 * fs_place_net: placement that knows the network's load (scheduler.placement
 * topology and fabric_aware with cluster.fabric; docs/policies.md
 * "Placement and the network's load").
 */
#include "fs_place_int.h"
#include "fs_catalog.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the network's load (topology and fabric_aware with a fabric) ----------------- */

/* A unit of place_net: a leaf group, an NVLink domain or a node, its node
 * range, fully free GPUs on its up nodes, and its tie-break (lower first;
 * groups: their uplinks' utilisation, or minus the rate they would give). */
typedef struct net_unit {
    uint32_t lo, hi;
    uint64_t free;
    double key, util;
} net_unit_t;

enum { NU_GROUP = 0, NU_DOMAIN = 1, NU_NODE = 2 };

/* The unit for `need` GPUs: the one with the fewest free GPUs that holds
 * them all (best fit), else the one with the most; ties by key, then the
 * first.  n when none has a free GPU. */
static size_t pick_unit(const net_unit_t *u, size_t n, uint64_t need)
{
    size_t bf = n, lg = n;
    for (size_t i = 0; i < n; i++) {
        if (u[i].free == 0)
            continue;
        if (u[i].free >= need &&
            (bf == n || u[i].free < u[bf].free || (u[i].free == u[bf].free && u[i].key < u[bf].key)))
            bf = i;
        if (lg == n || u[i].free > u[lg].free || (u[i].free == u[lg].free && u[i].key < u[lg].key))
            lg = i;
    }
    return bf < n ? bf : lg;
}

static uint64_t node_free_up(const fs_cluster_t *c, uint32_t v)
{
    return c->node_up[v] ? c->node_free[v] : 0;
}

/* The nodes [lo, hi] cut into runs of `size` nodes from lo, with their
 * free GPUs, into pl->nu[level]; their count, -1 out of memory. */
static ptrdiff_t cut_units(fs_placer_t *pl, const fs_cluster_t *c, int level, uint32_t lo,
                           uint32_t hi, uint32_t size)
{
    size_t n = (size_t)(hi - lo) / size + 1;
    if (fs_grow((void **)&pl->nu[level], &pl->nu_cap[level], n, sizeof *pl->nu[level]))
        return -1;
    net_unit_t *s = pl->nu[level];
    for (size_t i = 0; i < n; i++) {
        uint32_t a = lo + (uint32_t)i * size, b = a + size - 1 < hi ? a + size - 1 : hi;
        s[i] = (net_unit_t){a, b, 0, 0, 0};
        for (uint32_t v = a; v <= b; v++)
            s[i].free += node_free_up(c, v);
    }
    return (ptrdiff_t)n;
}

/* Takes `need` GPUs from the units u[0..n) of `level`: pick_unit, whole
 * or the rest, recursing into the domains and nodes (Slurm topology/tree
 * best fit, level by level, as fs_cluster_topo.c's topo_take).  Slices
 * appended to pl->sl[*ns]. */
static int take_units(fs_placer_t *pl, fs_cluster_t *c, net_unit_t *u, size_t n, int level,
                      uint32_t dom_nodes, uint64_t need, size_t *ns)
{
    while (need > 0) {
        size_t k = pick_unit(u, n, need);
        if (k == n)
            return FS_EINVAL;   /* cannot happen: the units hold need */
        uint64_t amt = u[k].free < need ? u[k].free : need;
        if (level == NU_NODE || u[k].lo == u[k].hi) {
            fs_placement_t one;
            if (fs_grow((void **)&pl->sl, &pl->sl_cap, *ns + 1, sizeof *pl->sl) ||
                fs_cluster_take(c, u[k].lo, (uint32_t)amt, WHOLE, -1, &one) != 1)
                return FS_ENOMEM;
            pl->sl[(*ns)++] = one.one;
        } else {
            /* a group's domains (its nodes when they are their own), a
             * domain's nodes */
            int sub = level == NU_GROUP && dom_nodes > 1 ? NU_DOMAIN : NU_NODE;
            ptrdiff_t m = cut_units(pl, c, sub, u[k].lo, u[k].hi, sub == NU_DOMAIN ? dom_nodes : 1);
            if (m < 0)
                return FS_ENOMEM;
            int rc = take_units(pl, c, pl->nu[sub], (size_t)m, sub, dom_nodes, amt, ns);
            if (rc)
                return rc;
        }
        u[k].free -= amt;
        need -= amt;
    }
    return 0;
}

/* qsort order of the groups by key, then free GPUs (most first), then id. */
static int cmp_load(const void *a, const void *b)
{
    const net_unit_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->free != y->free)
        return x->free > y->free ? -1 : 1;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Min-heap of the m largest free counts seen (heap_push keeps m). */
static void heap_push(uint64_t *h, size_t *n, size_t m, uint64_t v, uint64_t *sum)
{
    if (*n == m) {
        if (v <= h[0])
            return;
        *sum -= h[0];
        h[0] = v;   /* replace the root, sift down */
        for (size_t i = 0;;) {
            size_t l = 2 * i + 1, r = l + 1, s = i;
            if (l < *n && h[l] < h[s])
                s = l;
            if (r < *n && h[r] < h[s])
                s = r;
            if (s == i)
                break;
            uint64_t t = h[i];
            h[i] = h[s];
            h[s] = t;
            i = s;
        }
    } else {
        size_t i = (*n)++;
        h[i] = v;
        while (i > 0 && h[(i - 1) / 2] > h[i]) {
            uint64_t t = h[i];
            h[i] = h[(i - 1) / 2];
            h[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    }
    *sum += v;
}

/* The rate a ring edge would get on group uplinks with capacity cap, load
 * and `flows` flows now: what is left, or its max-min fair share among
 * flows + 1 equal edges, whichever is more (max-min gives a new flow at
 * least the fair share of a link where every flow has coefficient 1). */
static double edge_rate(double cap, double load, uint32_t flows)
{
    double left = cap - load, fair = cap / (flows + 1.0);
    return left > fair ? left : fair;
}

/* A gang of g > gpus-per-node whole GPUs in pool p with the net
 * (docs/policies.md "Placement and the network's load").  The pool's
 * leaf groups with their free GPUs; then
 *   one group holds g: the best fit, ties by the uplinks' utilisation
 *     (load / capacity) now, then the lowest id;
 *   topology: the fewest groups m* that can hold g (the m* largest), from
 *     the least loaded groups: groups in ascending utilisation, the
 *     shortest prefix whose m* largest hold g; every group no more loaded
 *     than its last is eligible, and they are taken largest first, the
 *     rest best fit (ties by utilisation);
 *   fabric_aware: groups by the rate their uplinks would give its ring
 *     (edge_rate, at most the NICs' rate), highest first; the shortest
 *     prefix that holds g sets the predicted bottleneck x*; every group
 *     with at least x* is eligible, and the fewest of them are taken as
 *     above.
 * Inside a group, NVLink domains then nodes, best fit.  O(nodes of the
 * pool + groups log groups) per decision.  1 placed, 0 no room, FS_ENOMEM. */
static int place_net(fs_placer_t *pl, fs_cluster_t *c, uint32_t pool, uint32_t g,
                     fs_placement_t *out)
{
    const fs_place_net_t *net = pl->net;
    const fs_pool_t *pp = &c->pools[pool];
    memset(out, 0, sizeof *out);
    out->pool = pool;
    out->milli = WHOLE;
    if (pp->n_nodes == 0)
        return 0;
    uint32_t leaf, dom;
    net->shape(net->ud, pool, &leaf, &dom);
    ptrdiff_t nn = cut_units(pl, c, NU_GROUP, pp->first_node, pp->first_node + pp->n_nodes - 1, leaf);
    if (nn < 0)
        return FS_ENOMEM;
    net_unit_t *u = pl->nu[NU_GROUP];
    size_t n = (size_t)nn;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += u[i].free;
    if (total < g)
        return 0;
    int aware = pl->kind == FS_PLACE_FABRIC_AWARE;
    /* the NICs' rate of a ring over this pool's domains: one node's NICs
     * times the nodes of a domain */
    double x_nic = net->nic_cap(net->ud, pp->first_node) * dom;
    int one = 0;
    uint64_t maxf = 0;
    for (size_t i = 0; i < n; i++) {
        double cap, load;
        uint32_t flows;
        net->uplinks(net->ud, u[i].lo, &cap, &load, &flows);
        u[i].util = cap > 0 ? load / cap : INFINITY;
        double x = edge_rate(cap, load, flows);
        u[i].key = aware ? -(x < x_nic ? x : x_nic) : u[i].util;
        one |= u[i].free >= g;
        if (u[i].free > maxf)
            maxf = u[i].free;
    }
    size_t ne = n;
    if (one) {
        /* inside one group: its ring crosses no uplink; best fit, ties by
         * the uplinks' utilisation now (fabric_aware too) */
        for (size_t i = 0; i < n; i++)
            u[i].key = u[i].util;
    } else {
        size_t hcap = n > maxf + 1 ? n : (size_t)maxf + 1;
        if (fs_grow((void **)&pl->ord, &pl->ord_cap, n, sizeof *pl->ord) ||
            fs_grow((void **)&pl->heap, &pl->heap_cap, hcap, sizeof *pl->heap))
            return FS_ENOMEM;
        memcpy(pl->ord, u, n * sizeof *u);
        qsort(pl->ord, n, sizeof *pl->ord, cmp_load);
        size_t m = n, hn = 0;
        uint64_t sum = 0;
        if (!aware) {   /* m*: the fewest groups that hold g (counted by free GPUs) */
            memset(pl->heap, 0, ((size_t)maxf + 1) * sizeof *pl->heap);
            for (size_t i = 0; i < n; i++)
                pl->heap[u[i].free]++;
            uint64_t acc = 0;
            m = 0;
            for (uint64_t f = maxf; f > 0 && acc < g; f--)
                for (uint64_t k = pl->heap[f]; k > 0 && acc < g; k--) {
                    acc += f;
                    m++;
                }
        }
        size_t t = 0;
        for (; t < n; t++) {
            heap_push(pl->heap, &hn, m, pl->ord[t].free, &sum);
            if (sum >= g)
                break;
        }
        if (t == n)
            return 0;   /* cannot happen: total >= g */
        double bound = pl->ord[t].key;
        ne = 0;     /* the eligible groups, in id order */
        for (size_t i = 0; i < n; i++)
            if (u[i].key <= bound)
                u[ne++] = u[i];
    }
    size_t ns = 0;
    int rc = take_units(pl, c, u, ne, NU_GROUP, dom, g, &ns);
    if (rc) {
        for (size_t i = 0; i < ns; i++) {
            fs_placement_t back = {.pool = pool, .n = 1, .one = pl->sl[i], .milli = WHOLE};
            fs_cluster_free(c, &back);
        }
        return rc == FS_EINVAL ? 0 : rc;
    }
    out->n = (uint32_t)ns;
    if (ns == 1) {
        out->one = pl->sl[0];
        return 1;
    }
    out->many = fs_malloc(ns * sizeof *out->many);
    if (!out->many) {
        fs_placement_t back = {.pool = pool, .n = (uint32_t)ns, .many = pl->sl, .milli = WHOLE};
        fs_cluster_free(c, &back);
        memset(out, 0, sizeof *out);
        return FS_ENOMEM;
    }
    memcpy(out->many, pl->sl, ns * sizeof *out->many);
    return 1;
}

/* topology and fabric_aware with the net: gangs larger than a node by
 * place_net, the rest as topology places them without a net (pack). */
int fs_place_with_net(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t np,
                      uint32_t g, uint32_t milli, fs_placement_t *out)
{
    for (size_t i = 0; i < np; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        if (!fs_cluster_fits_req(c, p, g, milli))
            continue;
        int rc = g > c->pools[p].gpn && milli >= WHOLE && !c->pools[p].mig
                     ? place_net(pl, c, p, g, out)
                     : fs_cluster_alloc_req(c, p, g, milli, FS_PLACE_TOPOLOGY, out);
        if (rc != 0)
            return rc;
    }
    memset(out, 0, sizeof *out);
    return 0;
}
