/*
 * fs_metrics_links: the fabric's link counters (fs_metrics_links.h;
 * docs/observability.md "Network links").  A link's value at a sample
 * instant is its /link_bytes row at or before the instant (the bytes it
 * carried from time 0 to that /timeline sample), 0 before its first row;
 * every link of the fabric exists the whole run, so every one is sampled
 * at every instant, and its last row equals its /links bytes.  An uplink
 * bundle's ports are spread evenly over its group's rails (/links rails):
 * each rail's leaf switch is its own switch with its own uplink ports, as
 * snmp_exporter polls a rail-optimized fabric; a file written before the
 * rails column reads as one switch per group.
 *
 * --pools and --nodes select links as they select GPUs: a node's NIC ports
 * with its node; a leaf group's uplink ports when at least one node of the
 * group (a node whose NIC row names that leaf) is selected.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_metrics_links.h"
#include "fs_h5read.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { NIC_TX, NIC_RX, SW_OUT, SW_IN, N_FAM };

/* node_exporter collector/infiniband_linux.go (help texts as it writes them;
 * the counters already end in _total: typed counter under that name, as
 * fs_metrics_queues.c's); snmp_exporter snmp.yml, if_mib (IF-MIB's
 * ifHCOutOctets and ifHCInOctets keep their names, which dashboards query:
 * typed gauge, as the DCGM energy counter, since an OpenMetrics counter's
 * samples would have to be named ..._total). */
static const struct {
    const char *name, *type, *help;
    int nic;
} fams[N_FAM] = {
    {"node_infiniband_port_data_transmitted_bytes_total", "counter",
     "Number of data octets transmitted on all links", 1},
    {"node_infiniband_port_data_received_bytes_total", "counter",
     "Number of data octets received on all links", 1},
    {"ifHCOutOctets", "gauge",
     "The total number of octets transmitted out of the interface, including framing "
     "characters - 1.3.6.1.2.1.31.1.1.1.10", 0},
    {"ifHCInOctets", "gauge",
     "The total number of octets received on the interface, including framing characters "
     "- 1.3.6.1.2.1.31.1.1.1.6", 0},
};

size_t fs_mlinks_n_families(void)
{
    return N_FAM;
}

const char *fs_mlinks_family_name(size_t i)
{
    return i < N_FAM ? fams[i].name : NULL;
}

/* What the export reads: /links, /pools and /link_bytes. */
typedef struct lk {
    fs_msink_info_t in;
    size_t n;               /* links */
    double *pool, *node, *leaf, *ports, *rails;
    int *nic;               /* tier nic (else leaf_uplink) */
    uint8_t *on;            /* the link is exported (--pools, --nodes) */
    char **pool_name;
    size_t n_pools;
    double *pool_node0;     /* the pool's first node (global id) */
    double *pool_leaf0;     /* the pool's first leaf group (global id) */
    size_t m;               /* /link_bytes rows */
    double *t, *b;
    size_t *first, *idx;    /* link l's rows: idx[first[l] .. first[l + 1]), in time order */
} lk_t;

static int oom(lk_t *x)
{
    return fs_error_set(x->in.err, FS_ENOMEM, "%s: out of memory", x->in.results);
}

static int read_f64(lk_t *x, const char *table, const char *col, size_t n, double **out)
{
    if (!(*out = fs_malloc((n ? n : 1) * sizeof **out)))
        return oom(x);
    return n ? fs_h5read_f64(x->in.f, table, col, *out, x->in.err) : 0;
}

static void release(lk_t *x)
{
    fs_free(x->pool);
    fs_free(x->node);
    fs_free(x->leaf);
    fs_free(x->ports);
    fs_free(x->rails);
    fs_free(x->nic);
    fs_free(x->on);
    if (x->pool_name)
        fs_h5read_free_strings(x->pool_name, x->n_pools);
    fs_free(x->pool_node0);
    fs_free(x->pool_leaf0);
    fs_free(x->t);
    fs_free(x->b);
    fs_free(x->first);
    fs_free(x->idx);
}

static int bad(lk_t *x, const char *table, const char *what, size_t row)
{
    return fs_error_set(x->in.err, FS_EINVAL, "%s: /%s row %zu: %s", x->in.results, table, row,
                        what);
}

/* /links rails (1 per link in a file written before that column). */
static int read_rails(lk_t *x)
{
    char **names = NULL;
    int *kinds = NULL;
    size_t nc = 0;
    int rc = fs_h5read_columns(x->in.f, "links", &names, &kinds, &nc, x->in.err), has = 0;
    for (size_t i = 0; !rc && i < nc; i++)
        has |= strcmp(names[i], "rails") == 0;
    if (names)
        fs_h5read_free_strings(names, nc);
    fs_free(kinds);
    if (rc)
        return rc;
    if (has)
        return read_f64(x, "links", "rails", x->n, &x->rails);
    if (!(x->rails = fs_malloc((x->n ? x->n : 1) * sizeof *x->rails)))
        return oom(x);
    for (size_t l = 0; l < x->n; l++)
        x->rails[l] = 1;
    return 0;
}

static int read_links(lk_t *x)
{
    int rc = fs_h5read_rows(x->in.f, "links", &x->n, x->in.err);
    if (rc || (rc = fs_h5read_rows(x->in.f, "pools", &x->n_pools, x->in.err)))
        return rc;
    char **tier = fs_calloc(x->n + 1, sizeof *tier);
    x->pool_name = fs_calloc(x->n_pools + 1, sizeof *x->pool_name);
    x->nic = fs_calloc(x->n + 1, sizeof *x->nic);
    x->pool_node0 = fs_calloc(x->n_pools + 1, sizeof *x->pool_node0);
    x->pool_leaf0 = fs_calloc(x->n_pools + 1, sizeof *x->pool_leaf0);
    double *pool_nodes = NULL;
    if (!tier || !x->pool_name || !x->nic || !x->pool_node0 || !x->pool_leaf0)
        rc = oom(x);
    if (!rc && x->n_pools &&
        (rc = fs_h5read_str(x->in.f, "pools", "name", x->pool_name, x->in.err)) == 0)
        rc = read_f64(x, "pools", "nodes", x->n_pools, &pool_nodes);
    if (!rc && !(rc = read_f64(x, "links", "pool", x->n, &x->pool)) &&
        !(rc = read_f64(x, "links", "node", x->n, &x->node)) &&
        !(rc = read_f64(x, "links", "leaf", x->n, &x->leaf)) &&
        !(rc = read_f64(x, "links", "ports", x->n, &x->ports)) &&
        !(rc = read_rails(x)) && x->n)
        rc = fs_h5read_str(x->in.f, "links", "tier", tier, x->in.err);
    for (size_t p = 1; !rc && p < x->n_pools; p++)
        x->pool_node0[p] = x->pool_node0[p - 1] + pool_nodes[p - 1];
    for (size_t p = 0; !rc && p < x->n_pools; p++)
        x->pool_leaf0[p] = -1;
    for (size_t l = 0; !rc && l < x->n; l++) {
        x->nic[l] = strcmp(tier[l], "nic") == 0;
        if (!x->nic[l] && strcmp(tier[l], "leaf_uplink") != 0)
            rc = bad(x, "links", "tier is neither nic nor leaf_uplink", l);
        else if (!(x->pool[l] >= 0 && x->pool[l] < (double)x->n_pools))
            rc = bad(x, "links", "pool is not a /pools row", l);
        else if (!(x->ports[l] >= 1 && x->ports[l] <= 65536))
            rc = bad(x, "links", "ports is not 1 to 65536", l);
        else if (!x->nic[l] && !(x->rails[l] >= 1 && x->rails[l] <= x->ports[l] &&
                                 fmod(x->ports[l], x->rails[l]) == 0))
            rc = bad(x, "links", "an uplink bundle's ports are not a whole number per rail", l);
        else if (x->nic[l] && !(x->node[l] >= x->pool_node0[(size_t)x->pool[l]]))
            rc = bad(x, "links", "node is not a node of its pool", l);
        else {
            double *g0 = &x->pool_leaf0[(size_t)x->pool[l]];
            if (*g0 < 0 || x->leaf[l] < *g0)
                *g0 = x->leaf[l];
        }
    }
    if (tier)
        fs_h5read_free_strings(tier, x->n);
    fs_free(pool_nodes);
    return rc;
}

/* The links --pools and --nodes select (x->on): a NIC with its node, an
 * uplink with any selected node of its leaf group. */
static int select_links(lk_t *x, const fs_msink_t *s)
{
    size_t n_leaf = 0;
    for (size_t l = 0; l < x->n; l++) {
        if (!(x->leaf[l] >= 0 && x->leaf[l] < 4294967296.0))
            return bad(x, "links", "leaf is not a leaf group's index", l);
        if ((size_t)x->leaf[l] >= n_leaf)
            n_leaf = (size_t)x->leaf[l] + 1;
    }
    uint8_t *leaf_on = fs_calloc(n_leaf + 1, 1);
    if (!(x->on = fs_calloc(x->n + 1, 1)) || !leaf_on) {
        fs_free(leaf_on);
        return oom(x);
    }
    for (size_t l = 0; l < x->n; l++) {
        if (!x->nic[l])
            continue;
        size_t p = (size_t)x->pool[l];
        double local = x->node[l] - x->pool_node0[p];
        x->on[l] = local < 4294967296.0 && fs_msink_node_on(s, (uint32_t)p, (uint32_t)local);
        leaf_on[(size_t)x->leaf[l]] |= x->on[l];
    }
    for (size_t l = 0; l < x->n; l++)
        if (!x->nic[l])
            x->on[l] = leaf_on[(size_t)x->leaf[l]];
    fs_free(leaf_on);
    return 0;
}

/* /link_bytes: each link's rows, in time order (the file's order within a link). */
static int read_bytes(lk_t *x)
{
    int rc = fs_h5read_rows(x->in.f, "link_bytes", &x->m, x->in.err);
    double *link = NULL;
    if (!rc && !(rc = read_f64(x, "link_bytes", "time", x->m, &x->t)) &&
        !(rc = read_f64(x, "link_bytes", "bytes", x->m, &x->b)))
        rc = read_f64(x, "link_bytes", "link", x->m, &link);
    if (!rc && (!(x->first = fs_calloc(x->n + 2, sizeof *x->first)) ||
                !(x->idx = fs_malloc((x->m ? x->m : 1) * sizeof *x->idx))))
        rc = oom(x);
    for (size_t r = 0; !rc && r < x->m; r++) {
        if (!(link[r] >= 0 && link[r] < (double)x->n))
            rc = bad(x, "link_bytes", "link is not a /links row", r);
        else if (r && x->t[r] < x->t[r - 1])
            rc = bad(x, "link_bytes", "time is before the previous row's", r);
        else
            x->first[(size_t)link[r] + 2]++;
    }
    for (size_t l = 2; !rc && l < x->n + 2; l++)
        x->first[l] += x->first[l - 1];
    for (size_t r = 0; !rc && r < x->m; r++)
        x->idx[x->first[(size_t)link[r] + 1]++] = r;
    /* first[l] is now where link l's rows start */
    for (size_t l = 0; !rc && l < x->n; l++)
        for (size_t j = x->first[l] + 1; j < x->first[l + 1]; j++)
            if (x->b[x->idx[j]] < x->b[x->idx[j - 1]]) {
                rc = bad(x, "link_bytes", "bytes fall below the link's previous row", x->idx[j]);
                break;
            }
    fs_free(link);
    return rc;
}

/* Link l's value at every instant k_lo..k_hi, split over its ports. */
static void values(const lk_t *x, size_t l, double *v)
{
    size_t j = x->first[l], end = x->first[l + 1], i = 0;
    double last = 0, per = x->ports[l];
    for (uint32_t k = x->in.k_lo; k <= x->in.k_hi; k++, i++) {
        double tk = (double)k * x->in.step;
        while (j < end && x->t[x->idx[j]] <= tk)
            last = x->b[x->idx[j++]];
        v[i] = last / per;
    }
}

static int emit_family(lk_t *x, fs_msink_t *s, size_t f, size_t fam, const uint32_t *k,
                       double *v)
{
    size_t ns = (size_t)(x->in.k_hi - x->in.k_lo) + 1;
    int hdr = 0, rc = 0;
    for (size_t l = 0; l < x->n && !rc; l++) {
        if (x->nic[l] != fams[f].nic || !x->on[l])
            continue;
        if (!hdr++ && (rc = fs_msink_family(s, fams[f].name, fams[f].type, fams[f].help)))
            break;
        values(x, l, v);
        size_t p = (size_t)x->pool[l];
        const char *pool = x->pool_name[p] ? x->pool_name[p] : "pool";
        char a[64], b[96], c[32];
        const char *lab[5][2];
        size_t nl;
        for (uint32_t port = 0; port < (uint32_t)x->ports[l] && !rc; port++) {
            if (fams[f].nic) {
                /* an HGX node's ConnectX HCAs mlx5_0.., one port each; instance
                 * as a scrape of node_exporter (:9100) on the node adds it */
                snprintf(a, sizeof a, "mlx5_%u", (unsigned)port);
                snprintf(b, sizeof b, "%s-%.0f:9100", pool, x->node[l] - x->pool_node0[p]);
                lab[0][0] = "device", lab[0][1] = a;
                lab[1][0] = "port", lab[1][1] = "1";
                lab[2][0] = "instance", lab[2][1] = b;
                lab[3][0] = "job", lab[3][1] = "node-exporter";
                nl = 4;
            } else {
                /* the leaf group's uplink ports, every rail's leaf switch in turn, each
                 * with its own ports 1..per; one rail: the group's one leaf switch */
                uint32_t per = (uint32_t)(x->ports[l] / x->rails[l]);
                double g = x->leaf[l] - x->pool_leaf0[p];
                if (x->rails[l] > 1)
                    snprintf(a, sizeof a, "%s-leaf%.0f-rail%u", pool, g, (unsigned)(port / per));
                else
                    snprintf(a, sizeof a, "%s-leaf%.0f", pool, g);
                snprintf(b, sizeof b, "uplink%u", (unsigned)(port % per) + 1);
                snprintf(c, sizeof c, "%u", (unsigned)(port % per) + 1);
                lab[0][0] = "switch", lab[0][1] = a;
                lab[1][0] = "port", lab[1][1] = b;
                lab[2][0] = "ifName", lab[2][1] = b;
                lab[3][0] = "ifIndex", lab[3][1] = c;
                lab[4][0] = "job", lab[4][1] = "snmp";
                nl = 5;
            }
            rc = fs_msink_series(s, fam, fams[f].name, (const char *const (*)[2])lab, nl, k, v,
                                 ns);
        }
    }
    return rc;
}

int fs_mlinks_emit(fs_msink_t *s, const uint8_t *fam_on, size_t fam_base)
{
    lk_t x = {0};
    fs_msink_info(s, &x.in);
    int any = 0;
    for (size_t f = 0; f < N_FAM; f++)
        any |= fam_on[fam_base + f];
    if (!any || !fs_h5read_has(x.in.f, "links") || !fs_h5read_has(x.in.f, "link_bytes") ||
        x.in.k_hi < x.in.k_lo)
        return 0;
    size_t ns = (size_t)(x.in.k_hi - x.in.k_lo) + 1;
    uint32_t *k = fs_malloc(ns * sizeof *k);
    double *v = fs_malloc(ns * sizeof *v);
    int rc = !k || !v ? oom(&x) : 0;
    for (size_t i = 0; !rc && i < ns; i++)
        k[i] = x.in.k_lo + (uint32_t)i;
    if (!rc && !(rc = read_links(&x)) && !(rc = read_bytes(&x)))
        rc = select_links(&x, s);
    for (size_t f = 0; f < N_FAM && !rc; f++)
        if (fam_on[fam_base + f])
            rc = emit_family(&x, s, f, fam_base + f, k, v);
    fs_free(k);
    fs_free(v);
    release(&x);
    return rc;
}
