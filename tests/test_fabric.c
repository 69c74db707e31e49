/*
 * The fabric (issue 36, docs/models.md "Fabric", models/fs_fabric.h):
 *   - closed forms: a ring all-reduce alone on an idle fabric takes
 *     2(n-1)/n x S/B + 2(n-1) x alpha (+ the NVLink phase); NCCL's busbw
 *     (nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n) of that
 *     ring equals the node's NIC bandwidth;
 *   - a lone job whose ring is grouped by leaf is not slowed by a 2:1
 *     oversubscribed leaf; two jobs sharing every uplink of a 2:1 leaf each
 *     get half;
 *   - the kinds' leaf groups against the DGX SuperPOD reference
 *     architectures' scalable units;
 *   - a published figure: nccl-tests' all-reduce busbw on 4 nodes of 8
 *     H100 with 8 NDR HCAs each, against the model's (23% below, pinned);
 *   - max-min on a hand example with three links, and after a flow leaves
 *     (the changed flows named), and a link's capacity change;
 *   - conservation on random flows: no link above its capacity after any
 *     change, every flow has a bottleneck (a full link where no flow gets
 *     more), and the incremental rates equal a recomputation from scratch;
 *   - through the run model: a lone job runs exactly its trace duration;
 *     two contending jobs end at the closed-form time;
 *   - work conservation: GPU-s lost to the network equal the jobs' GPUs x
 *     (run time - trace duration), summed;
 *   - placement and the network's load (docs/policies.md "Placement and the
 *     network's load"): topology takes, of the leaf groups that hold a
 *     gang, those whose uplinks are idle; fabric_aware trades more groups
 *     for a higher predicted ring rate; through the run model, topology
 *     keeps a second gang off the first one's uplinks (no GPU-s lost);
 *   - the scenario's located errors;
 *   - /links and /jobs_network read back bit for bit with the plain HDF5
 *     API (0, 1 and two chunks and a part of /jobs_network rows, with and
 *     without the results file's writer thread).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include <hdf5.h>

#include "fs_test_util.h"
#include "analysis/fs_results.h"
#include "models/fs_fabric.h"
#include "models/fs_model.h"
#include "models/fs_place.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"

#define REL(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol) * fabs((double)(b)) + 1e-300)

static uint32_t pick(fs_rng_t *r, uint32_t n);
/* comm = edge / x: iteration times in the ratio of the rates */
static const fs_fabric_ring_t no_compute = {.bytes = 1e9, .domains = 2, .edge = 1e9};

/* A cluster of one pool with the fabric cfg fc; placement of nodes[]. */
static void cluster_of(fs_cluster_t *cl, fs_config_t *cfg, fs_pool_cfg_t *pool, uint32_t nodes,
                       uint32_t gpn)
{
    fs_test_base_cfg(cfg, pool, nodes, gpn, FS_QUEUE_FIFO);
    fs_error_t err;
    assert_int_equal(fs_cluster_init(cl, &cfg->cluster, &err), 0);
}

static fs_placement_t place(const uint32_t *nodes, uint32_t n, uint32_t gpus_each)
{
    fs_placement_t p = {0};
    p.n = n;
    p.milli = 1000;
    if (n == 1) {
        p.one = (fs_slice_t){nodes[0], gpus_each};
        return p;
    }
    p.many = fs_malloc(n * sizeof *p.many);
    for (uint32_t i = 0; i < n; i++)
        p.many[i] = (fs_slice_t){nodes[i], gpus_each};
    return p;
}

/* cluster.fabric.efficiency's default */
#define EFF 0.83

/* NCCL's all-reduce over n nodes of 8 GPUs with B bytes/s of NICs each, at
 * efficiency EFF, its NVLink at 450 GB/s (docs/models.md "Fabric"), written
 * out case by case: at 2 and 3 nodes the tree of nodes (bytes and 1.5 x
 * bytes over the network, a chain of 2 x bytes over NVLink) when its time
 * is shorter, else the ring over all 8n GPUs (2(8n-1)/8n x bytes over the
 * network, 7/8 of it over NVLink). *edge: the bytes a node sends. */
static double nccl_time(uint32_t n, double S, double B, double *edge)
{
    double ring = 2.0 * (8.0 * n - 1) / (8.0 * n) * S;
    double t = fmax(ring / (EFF * B), 7.0 / 8.0 * ring / 450e9);
    *edge = ring;
    if (n == 2 || n == 3) {
        double tree = n == 2 ? S : 1.5 * S;
        double tt = fmax(tree / (EFF * B), 2.0 * S / 450e9);
        if (tt < t) {
            t = tt;
            *edge = tree;
        }
    }
    return t;
}

static fs_fabric_cfg_t base_fabric(void)
{
    fs_fabric_cfg_t fc = {0};
    fc.kind = FS_FABRIC_IB_NDR;
    fc.oversubscription = 1;
    fc.alpha_us = 14;   /* the key's default */
    fc.efficiency = EFF;
    return fc;
}

/* Ring all-reduce alone: the closed form, and nccl-tests' busbw. */
static void test_ring_closed_form(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    fs_cluster_t cl;
    cluster_of(&cl, &cfg, &pool, 64, 8);
    fs_fabric_cfg_t fc = base_fabric();
    fs_fabric_traffic_cfg_t tr = {.job_class = 0, .params = 8e9, .dtype = FS_FAB_BF16,
                                  .compute_s = 2.0, .overlap = 0};
    fs_fabric_net_t net;
    fs_error_t err;
    assert_int_equal(fs_fabric_net_init(&net, &fc, &cl, &err), 0);
    /* SuperPOD NDR defaults: 8 NICs of 400 Gb/s per node = 400 GB/s */
    double B = 8 * 400e9 / 8;
    assert_true(net.cap[0] == B);
    for (uint32_t n = 2; n <= 64; n = n < 4 ? n + 1 : 2 * n) {
        uint32_t nodes[64];
        for (uint32_t i = 0; i < n; i++)
            nodes[i] = i;
        fs_placement_t p = place(nodes, n, 8);
        const uint32_t *links;
        const double *coef;
        fs_fabric_ring_t r;
        int nl = fs_fabric_net_flow(&net, &cl, &p, &tr, &links, &coef, &r);
        assert_true(nl >= (int)n);
        fs_fabric_t *f = fs_fabric_new(net.n_nodes + net.n_groups, net.cap);
        assert_int_equal(fs_fabric_add(f, 7, links, coef, (uint32_t)nl, &r), 0);
        double S = 16e9;
        double edge, want = nccl_time(n, S, B, &edge) + 2.0 * (n - 1) * 14e-6;
        REL(fs_fabric_comm_s(&r, fs_fabric_x(f, 7)), want, 1e-12);
        REL(fs_fabric_edge_bytes(&r), edge, 1e-15);
        assert_true(r.tree == (n <= 3));    /* the tree sends less at 2 and 3 nodes */
        assert_true(fs_fabric_factor(f, 7) == 1.0);
        /* nccl-tests: algbw = S / t, busbw = algbw x 2(N-1)/N over its N = 8n
         * ranks: the ring's is the NICs' rate it reaches, EFF x B */
        if (!r.tree) {
            fs_fabric_ring_t bare = r;
            bare.alpha_s = 0;
            bare.nvl_s = 0;
            double algbw = S / fs_fabric_comm_s(&bare, fs_fabric_x(f, 7));
            REL(algbw * 2.0 * (8.0 * n - 1) / (8.0 * n), EFF * B, 1e-12);
        }
        /* beyond one leaf group of 32 nodes the ring leaves each group once
         * each way: 1:1 uplinks of 32 x 8 ports do not bind */
        for (uint32_t g = 0; g < net.n_groups; g++)
            assert_true(fs_fabric_load(f, net.n_nodes + g) <= net.cap[net.n_nodes + g]);
        fs_fabric_free(f);
        fs_placement_release(&p);
    }
    fs_fabric_net_release(&net);
    fs_cluster_release(&cl);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The kinds' defaults against NVIDIA's DGX SuperPOD reference
 * architectures (docs/models.md "Fabric"): a leaf group is a scalable
 * unit's rail group, its leaves have the RA's downlinks and (at 1:1) as
 * many uplinks.  B200 NDR: 32 nodes, radix-64 leaves; B300 XDR: 72 nodes,
 * radix-144 leaves; B300 Spectrum-X: 64 nodes per rail (two 400GbE planes
 * as one 800G leaf); GB200 NVL72: a rack of 18 trays of 4 GPUs. */
static void test_kind_defaults(void **st)
{
    (void)st;
    static const struct {
        int kind;
        uint32_t gpn, dom_nodes, nodes, rails, down;
        double gbps;
    } want[] = {
        {FS_FABRIC_IB_NDR, 8, 1, 32, 8, 32, 400},   {FS_FABRIC_IB_XDR, 8, 1, 72, 8, 72, 800},
        {FS_FABRIC_ROCE_800, 8, 1, 64, 8, 64, 800}, {FS_FABRIC_NVL72, 4, 18, 18, 4, 18, 400},
        {FS_FABRIC_ROCE_400, 8, 1, 2, 1, 16, 400},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fs_fabric_cfg_t fc = base_fabric();
        fc.kind = want[i].kind;
        fs_fabric_shape_t s;
        fs_error_t err;
        assert_int_equal(fs_fabric_shape(&fc, want[i].gpn, want[i].dom_nodes, &s, &err), 0);
        assert_int_equal(s.nodes_per_leaf, want[i].nodes);
        assert_int_equal(s.rails, want[i].rails);
        assert_int_equal(s.leaf_down, want[i].down);
        assert_int_equal(s.up_ports, want[i].down);
        assert_true(s.port_Bps == want[i].gbps * 1e9 / 8);
    }
}

/* Published figures side by side (docs/validation.md "A published
 * all-reduce side by side").  nccl-tests all_reduce_perf (NCCL 2.24.3,
 * float sum, out-of-place) on 4 nodes of 8 H100 SXM with 8 NDR 400 Gb/s
 * HCAs each, github.com/ZiyanIshani/vpbenchmarking,
 * results/nccl/nccl_multinode/nccl_allreduce_20260224_225706.txt: busbw
 * 324.48-330.93 GB/s at 1-8 GiB.  cluster.fabric.efficiency's default 0.83
 * is its 8 GiB figure over the ring's 400 GB/s bound, so these four check
 * the closed form and the latency's share across sizes (within 2%).  Not
 * fitted: all_reduce_perf on 2 nodes of 8 H100 with 8 x 200G GPUDirect-
 * TCPXO (GCP A3 Mega, github.com/lessizzmore/create-a3mega-ztan-fork,
 * ztan-NCCL-test-result): 330.58 and 338.82 GB/s at 4 and 8 GiB, above
 * the ring's bound of 8 x 25 GB/s: NCCL's tree of 2 nodes sends each byte
 * once; the model, its tree at the same 0.83, is 6.0-8.2% below (within
 * 10%).  Before the pipelined model (NVLink and network phases one after
 * the other) the first four were 22.6-23.5% below. */
static void test_nccl_published(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const struct {
        uint32_t nodes;
        double nic_gbps;      /* each of 8 NICs */
        double bytes, busbw;  /* size, and its published out-of-place busbw, GB/s */
        double tol;           /* |model / published - 1| at most */
    } pub[] = {
        /* 4 x 8 H100, 8 x 400G NDR (vpbenchmarking): the ring */
        {4, 400, 1073741824.0, 324.48, 0.02}, {4, 400, 2147483648.0, 328.11, 0.02},
        {4, 400, 4294967296.0, 329.36, 0.02}, {4, 400, 8589934592.0, 330.93, 0.02},
        /* 2 x 8 H100, 8 x 200G GPUDirect-TCPXO (GCP A3 Mega): the tree */
        {2, 200, 4294967296.0, 330.58, 0.10}, {2, 200, 8589934592.0, 338.82, 0.10},
    };
    for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
        fs_config_t cfg;
        fs_pool_cfg_t pool;
        fs_cluster_t cl;
        uint32_t n = pub[i].nodes;
        cluster_of(&cl, &cfg, &pool, n, 8);
        fs_fabric_cfg_t fc = base_fabric();
        fc.nic_gbps = pub[i].nic_gbps;
        fs_fabric_net_t net;
        fs_error_t err;
        assert_int_equal(fs_fabric_net_init(&net, &fc, &cl, &err), 0);
        uint32_t nodes[4] = {0, 1, 2, 3};
        fs_placement_t p = place(nodes, n, 8);
        fs_fabric_traffic_cfg_t tr = {.job_class = 0, .bytes = pub[i].bytes, .compute_s = 1.0,
                                      .overlap = 0};
        const uint32_t *links;
        const double *coef;
        fs_fabric_ring_t r;
        int nl = fs_fabric_net_flow(&net, &cl, &p, &tr, &links, &coef, &r);
        assert_true(nl >= (int)n);
        assert_true(r.tree == (n == 2));
        fs_fabric_t *f = fs_fabric_new(net.n_nodes + net.n_groups, net.cap);
        assert_int_equal(fs_fabric_add(f, 1, links, coef, (uint32_t)nl, &r), 0);
        double S = pub[i].bytes, t = fs_fabric_comm_s(&r, fs_fabric_x(f, 1));
        double N = 8.0 * n, busbw = S / t * 2.0 * (N - 1) / N / 1e9;
        double edge, want = nccl_time(n, S, 8 * pub[i].nic_gbps * 1e9 / 8, &edge);
        want = S / (want + 2.0 * (n - 1) * 14e-6) * 2.0 * (N - 1) / N / 1e9;
        REL(busbw, want, 1e-12);
        double rel = busbw / pub[i].busbw - 1;
        assert_true(fabs(rel) <= pub[i].tol);
        fs_fabric_free(f);
        fs_placement_release(&p);
        fs_fabric_net_release(&net);
        fs_cluster_release(&cl);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

/* Oversubscription 2:1: one job across two leaf groups is not slowed; two
 * jobs that share every uplink of a leaf get half each. */
static void test_oversubscription(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    fs_cluster_t cl;
    cluster_of(&cl, &cfg, &pool, 8, 8);
    fs_fabric_cfg_t fc = base_fabric();
    fc.nodes_per_leaf = 4;
    fc.oversubscription = 2;
    fs_fabric_traffic_cfg_t tr = {.bytes = 1e9, .compute_s = 0.5};
    fs_fabric_net_t net;
    fs_error_t err;
    assert_int_equal(fs_fabric_net_init(&net, &fc, &cl, &err), 0);
    assert_int_equal(net.n_groups, 2);
    assert_int_equal(fs_fabric_net_group(&net, &cl, 3), 0);
    assert_int_equal(fs_fabric_net_group(&net, &cl, 4), 1);
    fs_fabric_shape_t sh;
    assert_int_equal(fs_fabric_shape(&fc, 8, 1, &sh, &err), 0);
    assert_int_equal(sh.rails, 8);          /* rail-optimized (the kind's): a leaf per NIC */
    assert_int_equal(sh.leaf_down, 4);
    assert_int_equal(sh.up_ports, 2);
    assert_int_equal(sh.spines, 2);
    double port = 400e9 / 8, B = 8 * port;
    /* rail-optimized: 8 leaves of 4 down, 2 up ports per group */
    REL(net.cap[net.n_nodes], 8 * 2 * port, 1e-15);
    uint32_t all[] = {0, 1, 2, 3, 4, 5, 6, 7};
    fs_placement_t p = place(all, 8, 8);
    const uint32_t *links;
    const double *coef;
    fs_fabric_ring_t r;
    int nl = fs_fabric_net_flow(&net, &cl, &p, &tr, &links, &coef, &r);
    assert_int_equal(nl, 10);   /* 8 NICs, 2 uplink bundles (coef 1: one exit each) */
    fs_fabric_t *f = fs_fabric_new(net.n_nodes + net.n_groups, net.cap);
    assert_int_equal(fs_fabric_add(f, 1, links, coef, (uint32_t)nl, &r), 0);
    REL(fs_fabric_x(f, 1), B, 1e-15);
    assert_true(fs_fabric_factor(f, 1) == 1.0);
    fs_fabric_free(f);
    fs_placement_release(&p);
    fs_fabric_net_release(&net);
    fs_cluster_release(&cl);

    /* 1-NIC nodes, 2 per leaf, 2:1: one uplink port per leaf.  A on nodes
     * 0, 2 and B on 1, 3 cross both leaves' only uplinks */
    cluster_of(&cl, &cfg, &pool, 4, 1);
    fc.nodes_per_leaf = 2;
    fc.nics_per_node = 1;
    fc.rail_optimized = FS_FAB_RAIL_NO;
    assert_int_equal(fs_fabric_net_init(&net, &fc, &cl, &err), 0);
    REL(net.cap[net.n_nodes], port, 1e-15);
    f = fs_fabric_new(net.n_nodes + net.n_groups, net.cap);
    uint32_t a[] = {0, 2}, b[] = {1, 3};
    fs_placement_t pa = place(a, 2, 1), pb = place(b, 2, 1);
    nl = fs_fabric_net_flow(&net, &cl, &pa, &tr, &links, &coef, &r);
    assert_int_equal(fs_fabric_add(f, 0, links, coef, (uint32_t)nl, &r), 0);
    REL(fs_fabric_x(f, 0), port, 1e-15);        /* alone: its NIC, the uplink equal */
    REL(fs_fabric_x_idle(f, 0), port, 1e-15);
    nl = fs_fabric_net_flow(&net, &cl, &pb, &tr, &links, &coef, &r);
    assert_int_equal(fs_fabric_add(f, 1, links, coef, (uint32_t)nl, &r), 0);
    REL(fs_fabric_x(f, 0), port / 2, 1e-15);
    REL(fs_fabric_x(f, 1), port / 2, 1e-15);
    size_t nch;
    const uint32_t *ch = fs_fabric_changed(f, &nch);
    assert_int_equal(nch, 1);
    assert_int_equal(ch[0], 0);
    /* the factor: idle iteration over iteration now */
    /* 2 GPUs: the ring and the tree both send the bytes once (the ring is
     * kept on a tie), at EFF of the rate */
    double t1 = 0.5 + 1e9 / (EFF * port) + 2 * 14e-6;
    double t2 = 0.5 + 1e9 / (EFF * port / 2) + 2 * 14e-6;
    REL(fs_fabric_factor(f, 0), t1 / t2, 1e-12);
    REL(fs_fabric_iter_s(&r, port), t1, 1e-12);
    assert_int_equal(fs_fabric_remove(f, 1), 0);
    REL(fs_fabric_x(f, 0), port, 1e-15);
    assert_true(fs_fabric_factor(f, 0) == 1.0);
    fs_fabric_free(f);
    fs_placement_release(&pa);
    fs_placement_release(&pb);
    fs_fabric_net_release(&net);
    fs_cluster_release(&cl);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Max-min by hand.  Links L0 = 0.5, L1 = 3, L2 = 4; A on L0 and L1, B on
 * L1, C on L1 and L2, D on L2.  Filling: L0 fills first at 0.5 (A); L1 has
 * 2.5 left for B and C: 1.25 each; L2 has 4 - 1.25 = 2.75 for D.  Without
 * A: L1 gives B and C 1.5, L2 gives D 2.5.  L2 down to 2: C and D 1 each
 * (L2 fills first), B takes L1's rest, 2. */
static void test_maxmin_hand(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    double cap[] = {0.5, 3, 4};
    fs_fabric_t *f = fs_fabric_new(3, cap);
    uint32_t la[] = {0, 1}, lb[] = {1}, lc[] = {1, 2}, ld[] = {2};
    double one[] = {1, 1};
    assert_int_equal(fs_fabric_add(f, 0, la, one, 2, &no_compute), 0);
    assert_int_equal(fs_fabric_add(f, 1, lb, one, 1, &no_compute), 0);
    assert_int_equal(fs_fabric_add(f, 2, lc, one, 2, &no_compute), 0);
    assert_int_equal(fs_fabric_add(f, 3, ld, one, 1, &no_compute), 0);
    REL(fs_fabric_x(f, 0), 0.5, 1e-15);
    REL(fs_fabric_x(f, 1), 1.25, 1e-15);
    REL(fs_fabric_x(f, 2), 1.25, 1e-15);
    REL(fs_fabric_x(f, 3), 2.75, 1e-15);
    REL(fs_fabric_load(f, 1), 3, 1e-15);
    assert_int_equal(fs_fabric_remove(f, 0), 0);
    size_t n;
    const uint32_t *ch = fs_fabric_changed(f, &n);
    assert_int_equal(n, 3);
    assert_int_equal(ch[0] + ch[1] + ch[2], 1 + 2 + 3);
    REL(fs_fabric_x(f, 1), 1.5, 1e-15);
    REL(fs_fabric_x(f, 2), 1.5, 1e-15);
    REL(fs_fabric_x(f, 3), 2.5, 1e-15);
    /* the factor of a flow with no compute: x / x_idle (idle: 3 for B) */
    REL(fs_fabric_factor(f, 1), 1.5 / 3.0, 1e-12);
    assert_int_equal(fs_fabric_set_cap(f, 2, 2), 0);
    REL(fs_fabric_x(f, 2), 1, 1e-15);
    REL(fs_fabric_x(f, 3), 1, 1e-15);
    REL(fs_fabric_x(f, 1), 2, 1e-15);
    fs_fabric_stats_t s = fs_fabric_stats(f);
    assert_int_equal(s.recomputes, 6);
    fs_fabric_free(f);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Random flows on random links, added and removed: after every change no
 * link is above its capacity, every flow has a bottleneck (a full link on
 * which no flow has a larger rate), and the rates equal those of a fresh
 * engine given the same flows at once. */
static void test_conservation(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_rng_t rng;
    assert_int_equal(fs_rng_init(&rng, 36, 0, FS_RNG_PURPOSE_USER, 0), 0);
    enum { L = 24, F = 60 };
    double cap[L];
    for (int i = 0; i < L; i++)
        cap[i] = 1 + 9 * fs_rng_uniform(&rng);
    fs_fabric_t *f = fs_fabric_new(L, cap);
    uint32_t fl[F][4];
    double fc[F][4];
    uint32_t fn[F];
    int on[F] = {0};
    for (int k = 0; k < 400; k++) {
        uint32_t id = (uint32_t)(fs_rng_uniform(&rng) * F);
        if (on[id]) {
            assert_int_equal(fs_fabric_remove(f, id), 0);
            on[id] = 0;
        } else {
            fn[id] = 1 + (uint32_t)(fs_rng_uniform(&rng) * 4);
            for (uint32_t i = 0; i < fn[id]; i++) {
                uint32_t l;
                int dup;
                do {
                    l = (uint32_t)(fs_rng_uniform(&rng) * L);
                    dup = 0;
                    for (uint32_t j = 0; j < i; j++)
                        dup |= fl[id][j] == l;
                } while (dup);
                fl[id][i] = l;
                fc[id][i] = 0.25 + 2 * fs_rng_uniform(&rng);
            }
            assert_int_equal(fs_fabric_add(f, id, fl[id], fc[id], fn[id], &no_compute), 0);
            on[id] = 1;
        }
        for (uint32_t l = 0; l < L; l++)
            assert_true(fs_fabric_load(f, l) <= cap[l] * (1 + 1e-9));
        fs_fabric_t *g = fs_fabric_new(L, cap);
        for (uint32_t i = 0; i < F; i++)
            if (on[i])
                assert_int_equal(fs_fabric_add(g, i, fl[i], fc[i], fn[i], &no_compute), 0);
        for (uint32_t i = 0; i < F; i++) {
            if (!on[i])
                continue;
            REL(fs_fabric_x(f, i), fs_fabric_x(g, i), 1e-9);
            int bottleneck = 0;
            for (uint32_t j = 0; j < fn[i] && !bottleneck; j++) {
                uint32_t l = fl[i][j];
                if (fs_fabric_load(f, l) < cap[l] * (1 - 1e-9))
                    continue;
                int most = 1;
                for (uint32_t o = 0; o < F; o++)
                    for (uint32_t q = 0; on[o] && q < fn[o]; q++)
                        if (fl[o][q] == l && fs_fabric_x(f, o) > fs_fabric_x(f, i) * (1 + 1e-9))
                            most = 0;
                bottleneck = most;
            }
            assert_true(bottleneck);
        }
        fs_fabric_free(g);
    }
    fs_fabric_stats_t s = fs_fabric_stats(f);
    assert_int_equal(s.recomputes, 400);
    fs_fabric_free(f);
    fs_rng_release(&rng);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Lines: 1-3 the workload, 4 cluster:, 5 pools:, 6 the pool, 7 fabric:,
 * 8 kind, 9 nodes_per_leaf, 10 rail_optimized, 11 oversubscription, 12
 * alpha_us, 13 traffic:, 14 its row, then `extra`. */
#define FABRIC_Y(over, cls, extra)                                                            \
    "horizon: 1d\nuntil: drain\nworkload: {synthetic: {arrivals: {rate: 1/h}, gpus: {3: 1}, " \
    "duration: {dist: exponential, mean: 1h}}}\n"                                            \
    "cluster:\n"                                                                              \
    "  pools:\n"                                                                              \
    "    - {name: p, gpu: H100, nodes: 4, gpus_per_node: 2}\n"                                \
    "  fabric:\n"                                                                             \
    "    kind: ib_ndr\n"                                                                      \
    "    nodes_per_leaf: 1\n"                                                                 \
    "    rail_optimized: false\n"                                                             \
    "    oversubscription: " over "\n"                                                        \
    "    alpha_us: 0\n"                                                                       \
    "    traffic:\n"                                                                          \
    "      - {class: " cls ", bytes: 50e9, compute: 1s}\n" extra                              \
    "scheduler: {queue: fifo, placement: first_fit}\n"
#define FABRIC_YAML(extra) FABRIC_Y("2", "0", extra)

/* Through the run model.  Nodes of 2 GPUs with 2 NICs (100 GB/s), each
 * node its own leaf with one uplink port (2:1): 50 GB/s.  A job of 3 GPUs
 * takes node 0 whole and 1 GPU of node 1: NCCL's tree over 2 nodes (each
 * sends the 50 GB once; its ring would send 2(3-1)/3 x 50 GB), at EFF of
 * the uplink's 50 GB/s, above the chain's 2 x 50 GB / 450 GB/s of NVLink:
 * alone its factor is 1, it ends at its trace duration.  A second such job
 * takes node 1's other GPU and node 2: both cross node 1's uplink, 25 GB/s
 * each. */
static void test_run_model(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_test_rows_t rs = {0};
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
    fs_job_t one[] = {fs_test_job(1, 0, 3, 3600)};
    fs_run_totals_t t;
    fs_test_run_yaml(FABRIC_YAML(""), one, 1, &sink, &t);
    assert_int_equal(rs.n, 1);
    assert_true(rs.r[0].end == 3600.0);
    assert_true(t.gpu_s_network == 0);
    assert_int_equal(t.fabric_recomputes, 2);
    rs.n = 0;
    fs_job_t two[] = {fs_test_job(1, 0, 3, 3600), fs_test_job(2, 0, 3, 3600)};
    fs_test_run_yaml(FABRIC_YAML(""), two, 2, &sink, &t);
    assert_int_equal(rs.n, 2);
    /* the tree (2 nodes): 50 GB over the network at EFF of the rate, above
     * the chain's 2 x 50 GB / 450 GB/s of NVLink */
    double idle = 1 + 50e9 / (EFF * 50e9), slow = 1 + 50e9 / (EFF * 25e9);
    double end = 3600 * slow / idle;
    for (size_t i = 0; i < 2; i++)
        REL(rs.r[i].end, end, 1e-6);
    /* GPU-s lost: 3 GPUs x (1 - factor) x run time, each */
    REL(t.gpu_s_network, 2 * 3 * (1 - idle / slow) * end, 1e-6);
    assert_int_equal(t.fabric_recomputes, 4);
    fs_test_rows_free(&rs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The job rows (first: fs_test_collect's ud) and the fabric's rows at the
 * run's end (sink.fabric). */
typedef struct fab_rows {
    fs_test_rows_t rs;
    fs_link_row_t links[16];
    size_t n_links, n_jobs;
    fs_jobnet_row_t jobs[4];
} fab_rows_t;

static int collect_fabric(void *ud, const fs_link_row_t *links, size_t n_links,
                          const fs_jobnet_row_t *jobs, size_t n_jobs)
{
    fab_rows_t *f = ud;
    assert_true(n_links <= 16 && n_jobs <= 4);
    memcpy(f->links, links, n_links * sizeof *links);
    memcpy(f->jobs, jobs, n_jobs * sizeof *jobs);
    f->n_links = n_links;
    f->n_jobs = n_jobs;
    return 0;
}

/* A degraded spine (cluster.fabric.failures, docs/failures.md "Fabric
 * links and switches").  As test_run_model at 1:1: every leaf has 2 uplink
 * ports (100 GB/s, one to each of 2 spines), so the 3-GPU job's tree runs
 * at its NICs' 100 GB/s.  Both spines degrade to half for 1,000 s every
 * 2,000 s (constant times: out at 1,000, back at 2,000, out at 3,000,
 * back at 4,000): each bundle then carries 50 GB/s and the job's factor is
 * iteration(100) / iteration(50).  Its work, 3,600 s at factor 1, ends at
 * the closed-form time; /links has the bundles degraded for exactly the
 * time they were, and the job's /jobs_network row its slowdown. */
static void test_failed_spine(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fab_rows_t fr = {0};
    fs_test_rows_t *rsp = &fr.rs;
    fs_sink_t sink = {.job = fs_test_collect, .ud = &fr, .fabric = collect_fabric};
    fs_job_t one[] = {fs_test_job(1, 0, 3, 3600)};
    fs_run_totals_t t;
    fs_test_run_yaml(FABRIC_Y("1", "0",
                              "    failures:\n"
                              "      - {unit: spine, effect: degrade, capacity: 0.5, tbf: {dist: "
                              "constant, value: 1000s}, repair: {dist: constant, value: 1000s}}\n"),
                     one, 1, &sink, &t);
    assert_int_equal(rsp->n, 1);
    double it = 1 + 0.5 / EFF, f = it / (1 + 1.0 / EFF);
    /* work by time: 1000 (up) + 1000 f (out) + 1000 (up) + 1000 f (out)
     * by 4,000, the rest at factor 1 (3600 - 2000 - 2000 f > 0) */
    double rest = 3600 - 2000 - 2000 * f;
    assert_true(rest > 0 && rest < 1000);
    double end = 4000 + rest;
    REL(rsp->r[0].end, end, 1e-9);
    REL(t.gpu_s_network, 3 * (1 - f) * 2000, 1e-9);
    /* /links: 4 NIC links, then the 4 leaves' bundles, degraded 2,000 s */
    assert_int_equal(fr.n_links, 8);
    for (size_t l = 4; l < 8; l++) {
        assert_int_equal(fr.links[l].tier, FS_LINK_LEAF_UPLINK);
        assert_int_equal(fr.links[l].failures, 4);  /* two spines, twice each */
        REL(fr.links[l].degraded_s, 2000, 1e-9);
        assert_true(fr.links[l].port_down_s == 0);
        REL(fr.links[l].capacity, 100e9, 1e-12);
    }
    /* the job's ring crosses leaves 0 and 1: saturated all along (alone at
     * its NICs' rate, then at the degraded bundles') */
    REL(fr.links[4].saturated_s, end, 1e-9);
    assert_true(fr.links[6].busy_s == 0);
    assert_int_equal(fr.n_jobs, 1);
    REL(fr.jobs[0].network_slow_s, (1 - f) * 2000, 1e-9);
    REL(fr.jobs[0].iterations, 3600 / it, 1e-9);
    REL(fr.jobs[0].bytes_sent, fr.jobs[0].iterations * 2 * 50e9, 1e-9);
    /* /summary's link counters are /links summed (NIC links 0-3, bundles
     * 4-7), the same with no /links sink */
    double nic = 0, up = 0, umax = 0, sat = 0;
    for (size_t l = 0; l < 8; l++) {
        if (l < 4)
            nic += fr.links[l].bytes;
        else
            up += fr.links[l].bytes;
        if (l >= 4 && fr.links[l].mean_util > umax)
            umax = fr.links[l].mean_util;
        if (l >= 4)
            sat += fr.links[l].saturated_s;
    }
    assert_true(up > 0 && nic > 0 && umax > 0);
    REL(sat, 2 * end, 1e-9);    /* the bundles of leaves 0 and 1, all along */
    assert_true(t.fabric_nic_bytes == nic && t.fabric_uplink_bytes == up);
    assert_true(t.fabric_uplink_util_max == umax && t.fabric_uplink_saturated_s == sat);
    /* one node per leaf group: every byte the job's NICs sent left its
     * leaf group through its bundle */
    REL(nic, fr.jobs[0].bytes_sent, 1e-9);
    REL(up, fr.jobs[0].bytes_sent, 1e-9);
    rsp->n = 0;
    fs_sink_t plain = {.job = fs_test_collect, .ud = &fr};
    fs_run_totals_t t2;
    fs_test_run_yaml(FABRIC_Y("1", "0",
                              "    failures:\n"
                              "      - {unit: spine, effect: degrade, capacity: 0.5, tbf: {dist: "
                              "constant, value: 1000s}, repair: {dist: constant, value: 1000s}}\n"),
                     one, 1, &plain, &t2);
    assert_true(t2.fabric_nic_bytes == nic && t2.fabric_uplink_bytes == up);
    assert_true(t2.fabric_uplink_util_max == umax && t2.fabric_uplink_saturated_s == sat);
    fs_test_rows_free(rsp);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Work is conserved: a job whose speed factor f(t) changes as others come
 * and go does its trace duration D of work, so its run time T has
 * integral (1 - f) dt = T - D, and /summary gpu_s_network (GPUs x that,
 * summed) equals the sum of GPUs x (run - duration) over the jobs.  60
 * random gangs of 4-40 GPUs on 12 nodes, leaf groups of 2 nodes at 4:1,
 * placed spread across groups; every job at least its duration. */
static void test_work_conservation(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_rng_t rng;
    assert_int_equal(fs_rng_init(&rng, 37, 0, FS_RNG_PURPOSE_USER, 0), 0);
    enum { N = 60 };
    fs_job_t jobs[N];
    for (int k = 0; k < N; k++)
        jobs[k] = fs_test_job((uint64_t)k + 1, 600.0 * k * fs_rng_uniform(&rng) / 10, 4 + 4 * pick(&rng, 10),
                              600 + 7200 * fs_rng_uniform(&rng));
    for (int k = 1; k < N; k++)     /* submissions in order */
        if (jobs[k].submit < jobs[k - 1].submit)
            jobs[k].submit = jobs[k - 1].submit;
    static const char yaml[] =
        "horizon: 30d\nuntil: drain\n"
        "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
        "duration: {dist: exponential, mean: 1h}}}\n"
        "cluster:\n"
        "  pools: [{name: p, gpu: H100, nodes: 12, gpus_per_node: 8}]\n"
        "  fabric: {kind: roce_400g, oversubscription: 4, traffic: [{class: 0, params: 7e10, "
        "compute: 2s, overlap: 0.2}]}\n"
        "scheduler: {queue: fifo, placement: spread}\n";
    fs_test_rows_t rs = {0};
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
    fs_run_totals_t t;
    fs_test_run_yaml(yaml, jobs, N, &sink, &t);
    assert_int_equal(rs.n, N);
    double lost = 0;
    for (size_t i = 0; i < rs.n; i++) {
        const fs_job_row_t *r = &rs.r[i];
        const fs_job_t *j = &jobs[r->id - 1];
        double d = (double)j->duration / 1e6;
        assert_int_equal(r->state, FS_STATE_COMPLETED);
        assert_true(r->run >= d - 1e-6);
        lost += r->gpus * (r->run - d);
    }
    assert_true(t.gpu_s_network > 0);
    REL(t.gpu_s_network, lost, 1e-6);
    assert_true(t.fabric_jobs_touched > t.fabric_recomputes);
    fs_test_rows_free(&rs);
    fs_rng_release(&rng);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- the tables read back ---------------------------------------------- */

static fs_jobnet_row_t jobnet_row(size_t i)
{
    fs_jobnet_row_t r = {(1ull << 40) + i * 7919u, (double)i / 3.0, (double)i * 0.1 + 1e-9,
                         i % 97 ? (double)i / (double)(i + 7) : NAN, (double)i * 3.141592653589793,
                         (double)(i * i) / 7.0, (double)i * 1.7e12 + 0.5};
    return r;
}

static fs_link_row_t link_row(size_t i)
{
    fs_link_row_t r = {(uint32_t)i, i % 3 ? FS_LINK_NIC : FS_LINK_LEAF_UPLINK, (uint32_t)(i % 2),
                       i % 3 ? (int32_t)i : -1, (uint32_t)(i / 4), (uint32_t)(i % 3 ? 8 : 64),
                       5e10 * (double)(i + 1), 1e15 / (double)(i + 1), (double)i + 0.25,
                       1.0 / (double)(i + 1), 0.5 / (double)(i + 2), (double)i * 2.5,
                       (uint32_t)(i % 5), (double)i * 600.0, (double)i / 9.0,
                       (uint32_t)(i % 3 ? 8 : 1 + i % 8)};
    return r;
}

static int bits_equal(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Writes n_links /links rows and n_jobs /jobs_network rows, commits, and
 * reads both tables back with H5Dread into native compound types. */
static void write_and_read(const char *path, size_t n_links, size_t n_jobs, int writer)
{
    static const fs_pool_info_t pools[] = {{"p", "H100", 64, 8, NULL, 0, 0, 0, 30, 0}};
    fs_results_meta_t md = {.seed = 7, .scenario = "name: t\n", .pools = pools, .n_pools = 1,
                            .writer_thread = writer};
    fs_results_t *r = NULL;
    fs_error_t err;
    assert_int_equal(fs_results_open(path, &md, &r, &err), 0);
    fs_link_row_t *links = calloc(n_links + 1, sizeof *links);
    fs_jobnet_row_t *jobs = calloc(n_jobs + 1, sizeof *jobs);
    assert_non_null(links);
    assert_non_null(jobs);
    for (size_t i = 0; i < n_links; i++)
        links[i] = link_row(i);
    for (size_t i = 0; i < n_jobs; i++)
        jobs[i] = jobnet_row(i);
    if (fs_results_add_fabric(r, links, n_links, jobs, n_jobs, &err))
        fail_msg("add_fabric: %s", err.msg);
    fs_summary_t sum;
    memset(&sum, 0, sizeof sum);
    if (fs_results_commit(r, &sum, NULL, 0, NULL, 0, &err))
        fail_msg("commit: %s", err.msg);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    /* /jobs_network: every column */
    hid_t jt = H5Tcreate(H5T_COMPOUND, sizeof(fs_jobnet_row_t));
    H5Tinsert(jt, "id", offsetof(fs_jobnet_row_t, id), H5T_NATIVE_UINT64);
#define JD(name) H5Tinsert(jt, #name, offsetof(fs_jobnet_row_t, name), H5T_NATIVE_DOUBLE)
    JD(network_slow_s);
    JD(comm_s);
    JD(comm_share);
    JD(net_run_s);
    JD(iterations);
    JD(bytes_sent);
#undef JD
    hid_t d = H5Dopen2(f, "jobs_network", H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t sp = H5Dget_space(d);
    hsize_t rows = 0;
    H5Sget_simple_extent_dims(sp, &rows, NULL);
    assert_int_equal(rows, n_jobs);
    fs_jobnet_row_t *back = calloc(n_jobs + 1, sizeof *back);
    assert_non_null(back);
    if (n_jobs)
        assert_true(H5Dread(d, jt, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
    for (size_t i = 0; i < n_jobs; i++) {
        const fs_jobnet_row_t *a = &jobs[i], *b = &back[i];
        assert_int_equal(a->id, b->id);
        assert_true(bits_equal(a->network_slow_s, b->network_slow_s));
        assert_true(bits_equal(a->comm_s, b->comm_s));
        assert_true(bits_equal(a->comm_share, b->comm_share));
        assert_true(bits_equal(a->net_run_s, b->net_run_s));
        assert_true(bits_equal(a->iterations, b->iterations));
        assert_true(bits_equal(a->bytes_sent, b->bytes_sent));
    }
    H5Sclose(sp);
    H5Dclose(d);
    H5Tclose(jt);
    free(back);

    /* /links: its numbers and the tier's name */
    typedef struct {
        uint32_t link;
        char tier[12];
        int32_t node;
        uint32_t failures, rails;
        double capacity, bytes, degraded_s;
    } lback_t;
    hid_t s12 = H5Tcopy(H5T_C_S1);
    H5Tset_size(s12, 12);   /* as written: UTF-8, padded with NULs */
    H5Tset_cset(s12, H5T_CSET_UTF8);
    H5Tset_strpad(s12, H5T_STR_NULLPAD);
    hid_t lt = H5Tcreate(H5T_COMPOUND, sizeof(lback_t));
    H5Tinsert(lt, "link", offsetof(lback_t, link), H5T_NATIVE_UINT32);
    H5Tinsert(lt, "tier", offsetof(lback_t, tier), s12);
    H5Tinsert(lt, "node", offsetof(lback_t, node), H5T_NATIVE_INT32);
    H5Tinsert(lt, "failures", offsetof(lback_t, failures), H5T_NATIVE_UINT32);
    H5Tinsert(lt, "rails", offsetof(lback_t, rails), H5T_NATIVE_UINT32);
    H5Tinsert(lt, "capacity", offsetof(lback_t, capacity), H5T_NATIVE_DOUBLE);
    H5Tinsert(lt, "bytes", offsetof(lback_t, bytes), H5T_NATIVE_DOUBLE);
    H5Tinsert(lt, "degraded_s", offsetof(lback_t, degraded_s), H5T_NATIVE_DOUBLE);
    d = H5Dopen2(f, "links", H5P_DEFAULT);
    assert_true(d >= 0);
    sp = H5Dget_space(d);
    H5Sget_simple_extent_dims(sp, &rows, NULL);
    assert_int_equal(rows, n_links);
    lback_t *lb = calloc(n_links + 1, sizeof *lb);
    assert_non_null(lb);
    if (n_links)
        assert_true(H5Dread(d, lt, H5S_ALL, H5S_ALL, H5P_DEFAULT, lb) >= 0);
    for (size_t i = 0; i < n_links; i++) {
        assert_int_equal(lb[i].link, links[i].link);
        assert_string_equal(lb[i].tier, links[i].tier == FS_LINK_NIC ? "nic" : "leaf_uplink");
        assert_int_equal(lb[i].node, links[i].node);
        assert_int_equal(lb[i].failures, links[i].failures);
        assert_int_equal(lb[i].rails, links[i].rails);
        assert_true(bits_equal(lb[i].capacity, links[i].capacity));
        assert_true(bits_equal(lb[i].bytes, links[i].bytes));
        assert_true(bits_equal(lb[i].degraded_s, links[i].degraded_s));
    }
    H5Sclose(sp);
    H5Dclose(d);
    H5Tclose(lt);
    H5Tclose(s12);
    H5Fclose(f);
    free(lb);
    free(links);
    free(jobs);
}

static void test_tables_read_back(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    char *dir = fs_test_tmpdir();
    char *path = fs_test_path(dir, "fab.h5");
    /* 0 rows, 1 row (a small chunk), and two whole chunks of 16,384 rows
     * and a part (the edge chunk's padding) */
    static const size_t njobs[] = {0, 1, 2 * 16384 + 77};
    for (int writer = 0; writer < 2; writer++)
        for (size_t k = 0; k < sizeof njobs / sizeof njobs[0]; k++)
            write_and_read(path, k == 0 ? 0 : 13, njobs[k], writer);
    fs_test_rmtree(dir);
    free(path);
    free(dir);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_scenario_errors(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_error_t err;
    assert_int_equal(fs_test_create(FABRIC_YAML(""), &err), 0);
    /* an oversubscription below 1 */
    fs_test_expect_error(FABRIC_Y("0.5", "0", ""), "t.yaml:11:23", "oversubscription");
    /* capacities that do not fit the shape: 2 down ports / 3 */
    fs_test_expect_error(FABRIC_Y("3", "0", ""), "t.yaml:11:23", "whole uplink ports");
    /* 2 spines for a leaf's one uplink port */
    fs_test_expect_error(FABRIC_YAML("    spines: 2\n"), "t.yaml:15:13", "spines");
    /* traffic for a class no job has (a synthetic workload's are class 0) */
    fs_test_expect_error(FABRIC_Y("2", "1", ""), "t.yaml:14:17", "no job has class 1");
    /* a class twice */
    fs_test_expect_error(FABRIC_YAML("      - {class: 0, bytes: 1e9, compute: 1s}\n"),
                         "t.yaml:15:17", "already has traffic");
    /* neither bytes nor params */
    fs_test_expect_error(FABRIC_YAML("      - {class: 2, compute: 1s}\n"), "t.yaml:15:9",
                         "give bytes or params");
    /* span_speed and the fabric both set */
    fs_test_expect_error(FABRIC_YAML("  span_speed:\n    - {class: 0, leaves: 0.9}\n"),
                         "t.yaml:16:5", "span_speed");
    /* NVLink domains of 4 nodes do not fit leaf groups of 1 */
    fs_test_expect_error(FABRIC_YAML("  topology: {nvlink_domain: 8}\n"), "t.yaml:9:21",
                         "whole NVLink domains");
    /* fabric_aware placement without a fabric */
    fs_test_expect_error("horizon: 1d\nworkload: {synthetic: {arrivals: {rate: 1/h}, gpus: {3: 1}, "
                         "duration: {dist: exponential, mean: 1h}}}\ncluster:\n  pools:\n"
                         "    - {name: p, gpu: H100, nodes: 4, gpus_per_node: 2}\n"
                         "scheduler: {queue: fifo, placement: fabric_aware}\n",
                         "t.yaml:6:37", "needs cluster.fabric");
    assert_int_equal(fs_alloc_live(), live0);
}

/* --ref-cases FILE: random fabrics and placements for tests/fabric_ref.py
 * (the independent reference): per case the shape as given, the jobs'
 * nodes, GPUs per node and traffic, and what the engine computed (each
 * active job's rate x and factor, each link's load), as JSON. */
static uint32_t pick(fs_rng_t *r, uint32_t n)
{
    return (uint32_t)(fs_rng_uniform(r) * n);
}

static int write_cases(const char *path, int n_cases)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return 1;
    fs_rng_t rng;
    if (fs_rng_init(&rng, 3636, 0, FS_RNG_PURPOSE_USER, 1))
        return 1;
    fprintf(out, "[\n");
    for (int c = 0; c < n_cases; c++) {
        static const uint32_t gpns[] = {1, 2, 4, 8};
        static const uint32_t npls[] = {1, 2, 4, 8};
        static const double gbps[] = {100, 200, 400, 800};
        uint32_t gpn = gpns[pick(&rng, 4)], npl = npls[pick(&rng, 4)];
        uint32_t nodes = 4 + pick(&rng, 40);
        uint32_t dom = npl % 2 == 0 && pick(&rng, 2) ? 2 : 1;
        char domtxt[16];
        snprintf(domtxt, sizeof domtxt, "%u", dom * gpn);
        fs_config_t cfg;
        fs_pool_cfg_t pool;
        fs_test_base_cfg(&cfg, &pool, nodes, gpn, FS_QUEUE_FIFO);
        cfg.cluster.topology.nvlink_domain = dom > 1 ? domtxt : NULL;
        fs_cluster_t cl;
        fs_error_t err;
        if (fs_cluster_init(&cl, &cfg.cluster, &err))
            return 1;
        fs_fabric_cfg_t fc = base_fabric();
        fc.nodes_per_leaf = npl;
        fc.nics_per_node = 1 + pick(&rng, gpn);
        fc.rail_optimized = pick(&rng, 2) ? FS_FAB_RAIL_YES : FS_FAB_RAIL_NO;
        uint32_t down = fc.rail_optimized == FS_FAB_RAIL_YES ? npl : npl * fc.nics_per_node;
        uint32_t up = 1 + pick(&rng, down);
        while (down % up)
            up--;
        fc.oversubscription = (double)down / up;
        uint32_t sp = 1 + pick(&rng, up);
        while (up % sp)
            sp--;
        fc.spines = sp;
        fc.nic_gbps = gbps[pick(&rng, 4)];
        fc.nvlink_gbs = 100 + 800 * fs_rng_uniform(&rng);
        fc.alpha_us = 20 * fs_rng_uniform(&rng);
        fc.efficiency = 0.5 + 0.5 * fs_rng_uniform(&rng);
        fs_fabric_net_t net;
        if (fs_fabric_net_init(&net, &fc, &cl, &err))
            return 1;
        fs_fabric_t *f = fs_fabric_new(net.n_nodes + net.n_groups, net.cap);
        enum { J = 14 };
        uint32_t jn[J], jnodes[J][8], jg[J];
        fs_fabric_traffic_cfg_t tr[J];
        int on[J] = {0}, gone[J] = {0};
        uint32_t n_jobs = 1 + pick(&rng, J);
        for (uint32_t k = 0; k < n_jobs; k++) {
            jn[k] = 2 + pick(&rng, 7);
            if (jn[k] > nodes)
                jn[k] = nodes;
            for (uint32_t i = 0; i < jn[k]; i++) {
                uint32_t v;
                int dup;
                do {
                    v = pick(&rng, nodes);
                    dup = 0;
                    for (uint32_t q = 0; q < i; q++)
                        dup |= jnodes[k][q] == v;
                } while (dup);
                jnodes[k][i] = v;
            }
            jg[k] = 1 + pick(&rng, gpn);
            tr[k] = (fs_fabric_traffic_cfg_t){.bytes = 1e8 + 2e10 * fs_rng_uniform(&rng),
                                              .compute_s = 0.05 + 2 * fs_rng_uniform(&rng),
                                              .overlap = pick(&rng, 2) ? fs_rng_uniform(&rng) : 0};
            fs_placement_t p = place(jnodes[k], jn[k], jg[k]);
            const uint32_t *links;
            const double *coef;
            fs_fabric_ring_t r;
            int nl = fs_fabric_net_flow(&net, &cl, &p, &tr[k], &links, &coef, &r);
            if (nl > 0) {
                if (fs_fabric_add(f, k, links, coef, (uint32_t)nl, &r))
                    return 1;
                on[k] = 1;
            }
            fs_placement_release(&p);
        }
        for (uint32_t k = 0; k < n_jobs; k++)    /* some leave */
            if (on[k] && pick(&rng, 4) == 0) {
                if (fs_fabric_remove(f, k))
                    return 1;
                on[k] = 0;
                gone[k] = 1;
            }
        fprintf(out, "{\"nodes\": %u, \"gpn\": %u, \"dom_nodes\": %u, \"nodes_per_leaf\": %u, "
                     "\"nics\": %u, \"rail\": %d, \"oversubscription\": %.17g, \"spines\": %u, "
                     "\"nic_gbps\": %.17g, \"nvlink_gbs\": %.17g, \"alpha_us\": %.17g, "
                     "\"efficiency\": %.17g,\n \"jobs\": [",
                nodes, gpn, dom, npl, fc.nics_per_node, fc.rail_optimized == FS_FAB_RAIL_YES,
                fc.oversubscription, fc.spines, fc.nic_gbps, fc.nvlink_gbs, fc.alpha_us,
                fc.efficiency);
        for (uint32_t k = 0; k < n_jobs; k++) {
            fprintf(out, "%s\n  {\"nodes\": [", k ? "," : "");
            for (uint32_t i = 0; i < jn[k]; i++)
                fprintf(out, "%s%u", i ? ", " : "", jnodes[k][i]);
            fprintf(out, "], \"gpus_per_node\": %u, \"bytes\": %.17g, \"compute_s\": %.17g, "
                         "\"overlap\": %.17g, \"active\": %d, \"removed\": %d, \"x\": %.17g, "
                         "\"factor\": %.17g}",
                    jg[k], tr[k].bytes, tr[k].compute_s, tr[k].overlap, on[k], gone[k],
                    fs_fabric_x(f, k),
                    fs_fabric_factor(f, k));
        }
        fprintf(out, "],\n \"link_load\": [");
        for (uint32_t l = 0; l < fs_fabric_n_links(f); l++)
            fprintf(out, "%s%.17g", l ? ", " : "", fs_fabric_load(f, l));
        fprintf(out, "],\n \"link_cap\": [");
        for (uint32_t l = 0; l < fs_fabric_n_links(f); l++)
            fprintf(out, "%s%.17g", l ? ", " : "", fs_fabric_cap(f, l));
        fprintf(out, "]}%s\n", c + 1 < n_cases ? "," : "");
        fs_fabric_free(f);
        fs_fabric_net_release(&net);
        fs_cluster_release(&cl);
    }
    fprintf(out, "]\n");
    fs_rng_release(&rng);
    return fclose(out) != 0;
}


/* ---- placement and the network's load -------------------------------------------- */

/* A hand network for the placer: leaf groups of `per` nodes, every node
 * its own NVLink domain, each group's uplinks given (capacity 100). */
typedef struct hand_net {
    uint32_t per, dom;  /* nodes per group and per NVLink domain (0: 1) */
    double load[8];
    uint32_t flows[8];
} hand_net_t;

static void hn_shape(const void *ud, uint32_t pool, uint32_t *leaf_nodes, uint32_t *domain_nodes)
{
    (void)pool;
    const hand_net_t *h = ud;
    *leaf_nodes = h->per;
    *domain_nodes = h->dom ? h->dom : 1;
}

static void hn_uplinks(const void *ud, uint32_t node, double *cap, double *load, uint32_t *flows)
{
    const hand_net_t *h = ud;
    *cap = 100;
    *load = h->load[node / h->per];
    *flows = h->flows[node / h->per];
}

static double hn_nic(const void *ud, uint32_t node)
{
    (void)ud;
    (void)node;
    return 50;
}

static int cmp_node(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The nodes of a placement, ascending, into v (room 16); their count. */
static uint32_t nodes_of(const fs_placement_t *p, uint32_t *v)
{
    const fs_slice_t *s = fs_placement_slices(p);
    for (uint32_t i = 0; i < p->n; i++)
        v[i] = s[i].node;
    qsort(v, p->n, sizeof *v, cmp_node);
    return p->n;
}

/* A placer of `kind` over a pool of `nodes` nodes of 8 GPUs; the hand net
 * set, else cluster.topology racks of 2 nodes (the same groups, topology
 * placement without the load). */
static fs_placer_t *hand_placer(fs_cluster_t *cl, fs_config_t *cfg, fs_pool_cfg_t *pool,
                                uint32_t nodes, int kind, const fs_place_net_t *net)
{
    fs_test_base_cfg(cfg, pool, nodes, 8, FS_QUEUE_FIFO);
    if (!net)
        cfg->cluster.topology.nodes_per_rack = 2;
    fs_error_t err;
    assert_int_equal(fs_cluster_init(cl, &cfg->cluster, &err), 0);
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(cl, kind, 0, &cfg->cluster, 1, 0, &pl, NULL), 0);
    if (net)
        fs_placer_set_net(pl, net);
    return pl;
}

/* topology with the fabric: every leaf group (2 nodes, uplinks 90%, 0%,
 * 10%, 80% loaded) holds a 16-GPU gang whole: it goes to the idle group 1
 * (without the load, Slurm's best fit over racks: group 0, the busy one).
 * A 24-GPU gang needs two groups: the least loaded two (1 and 2), not the
 * lowest ids.  The fewest groups and best fit still come first: a group
 * that holds the gang whole takes it whatever its load. */
static void test_place_load_topology(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    hand_net_t h = {.per = 2, .load = {90, 0, 10, 80}};
    fs_place_net_t net = {&h, hn_shape, hn_uplinks, hn_nic};
    for (int with = 0; with <= 1; with++) {
        fs_cluster_t cl;
        fs_config_t cfg;
        fs_pool_cfg_t pool;
        fs_placer_t *pl = hand_placer(&cl, &cfg, &pool, 8, FS_PLACE_TOPOLOGY, with ? &net : NULL);
        fs_placement_t a;
        uint32_t v[16];
        assert_int_equal(fs_placer_place(pl, &cl, NULL, 0, 16, 1000, &a), 1);
        assert_int_equal(nodes_of(&a, v), 2);
        /* with the load: group 1 (idle); without: group 0 */
        assert_int_equal(v[0], with ? 2 : 0);
        assert_int_equal(v[1], with ? 3 : 1);
        fs_cluster_free(&cl, &a);
        fs_placement_release(&a);
        fs_placement_t b;
        assert_int_equal(fs_placer_place(pl, &cl, NULL, 0, 24, 1000, &b), 1);
        assert_int_equal(nodes_of(&b, v), 3);
        if (with) {     /* groups 1 (0%) and 2 (10%): nodes 2, 3 and 4 */
            assert_int_equal(v[0], 2);
            assert_int_equal(v[2], 4);
        } else {        /* groups 0 and 1 */
            assert_int_equal(v[0], 0);
            assert_int_equal(v[2], 2);
        }
        fs_cluster_free(&cl, &b);
        fs_placement_release(&b);
        /* node 0 busy: groups 1-3 hold a 16-GPU gang whole (group 1, the
         * idle one and the lowest id) */
        fs_placement_t c0, c1;
        assert_int_equal(fs_cluster_take(&cl, 0, 8, 1000, -1, &c0), 1);
        assert_int_equal(fs_placer_place(pl, &cl, NULL, 0, 16, 1000, &c1), 1);
        assert_int_equal(nodes_of(&c1, v), 2);
        assert_int_equal(v[0], 2);
        fs_cluster_free(&cl, &c1);
        fs_placement_release(&c1);
        /* nodes 0, 2 and 4 busy: groups 0-2 have 8 GPUs, group 3 has 16:
         * a 16-GPU gang goes whole to group 3 (80% loaded) with the load
         * too, as the fewest groups come first */
        fs_placement_t c2, c4, d;
        assert_int_equal(fs_cluster_take(&cl, 2, 8, 1000, -1, &c2), 1);
        assert_int_equal(fs_cluster_take(&cl, 4, 8, 1000, -1, &c4), 1);
        assert_int_equal(fs_placer_place(pl, &cl, NULL, 0, 16, 1000, &d), 1);
        assert_int_equal(nodes_of(&d, v), 2);
        assert_int_equal(v[0], 6);
        fs_cluster_free(&cl, &d);
        fs_placement_release(&d);
        fs_cluster_free(&cl, &c0);
        fs_cluster_free(&cl, &c2);
        fs_cluster_free(&cl, &c4);
        fs_placer_destroy(pl);
        fs_cluster_release(&cl);
    }
    /* NVLink domains of 2 nodes in groups of 4: nodes 0, 1, 3 and 4 busy;
     * a 16-GPU gang goes to group 1 (24 free) and there to the domain that
     * holds it whole (nodes 6 and 7), not to nodes 5 and 6 */
    hand_net_t hd = {.per = 4, .dom = 2};
    fs_place_net_t netd = {&hd, hn_shape, hn_uplinks, hn_nic};
    fs_cluster_t cl;
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    fs_placer_t *pl = hand_placer(&cl, &cfg, &pool, 8, FS_PLACE_TOPOLOGY, &netd);
    fs_placement_t busy[4], d;
    const uint32_t taken[4] = {0, 1, 3, 4};
    for (int i = 0; i < 4; i++)
        assert_int_equal(fs_cluster_take(&cl, taken[i], 8, 1000, -1, &busy[i]), 1);
    uint32_t v[16];
    assert_int_equal(fs_placer_place(pl, &cl, NULL, 0, 16, 1000, &d), 1);
    assert_int_equal(nodes_of(&d, v), 2);
    assert_int_equal(v[0], 6);
    assert_int_equal(v[1], 7);
    fs_cluster_free(&cl, &d);
    fs_placement_release(&d);
    for (int i = 0; i < 4; i++)
        fs_cluster_free(&cl, &busy[i]);
    fs_placer_destroy(pl);
    fs_cluster_release(&cl);
    assert_int_equal(fs_alloc_live(), live0);
}

/* fabric_aware: group 0 (2 nodes free) has its uplinks full with 4 flows
 * (a new ring edge would get 100 / 5 = 20), groups 1-3 have one node free
 * each and idle uplinks (the NICs' 50).  A 24-GPU gang: topology takes
 * the fewest groups (0 whole and a node of 1: predicted rate 20);
 * fabric_aware the three idle groups (predicted 50, the NICs' rate).  A
 * gang that one group holds stays in it (no uplink crossed). */
static void test_place_fabric_aware(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    hand_net_t h = {.per = 2, .load = {100, 0, 0, 0}, .flows = {4, 0, 0, 0}};
    fs_place_net_t net = {&h, hn_shape, hn_uplinks, hn_nic};
    for (int aware = 0; aware <= 1; aware++) {
        fs_cluster_t cl;
        fs_config_t cfg;
        fs_pool_cfg_t pool;
        fs_placer_t *pl = hand_placer(&cl, &cfg, &pool, 8,
                                      aware ? FS_PLACE_FABRIC_AWARE : FS_PLACE_TOPOLOGY, &net);
        fs_placement_t busy[3], a, b;
        for (uint32_t i = 0; i < 3; i++)
            assert_int_equal(fs_cluster_take(&cl, 2 * i + 3, 8, 1000, -1, &busy[i]), 1);
        uint32_t v[16];
        assert_int_equal(fs_placer_place(pl, &cl, NULL, 0, 24, 1000, &a), 1);
        assert_int_equal(nodes_of(&a, v), 3);
        if (aware) {
            assert_int_equal(v[0], 2);
            assert_int_equal(v[1], 4);
            assert_int_equal(v[2], 6);
        } else {
            assert_int_equal(v[0], 0);
            assert_int_equal(v[1], 1);
            assert_int_equal(v[2], 2);
        }
        fs_cluster_free(&cl, &a);
        fs_placement_release(&a);
        assert_int_equal(fs_placer_place(pl, &cl, NULL, 0, 16, 1000, &b), 1);
        assert_int_equal(nodes_of(&b, v), 2);
        assert_int_equal(v[0], 0);      /* group 0 holds it: no uplink crossed */
        fs_cluster_free(&cl, &b);
        fs_placement_release(&b);
        /* a single-node job: as pack, on one node */
        fs_placement_t s;
        assert_int_equal(fs_placer_place(pl, &cl, NULL, 0, 4, 1000, &s), 1);
        assert_int_equal(s.n, 1);
        fs_cluster_free(&cl, &s);
        for (uint32_t i = 0; i < 3; i++)
            fs_cluster_free(&cl, &busy[i]);
        fs_placer_destroy(pl);
        fs_cluster_release(&cl);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

/* Through the run model with topology placement: 8 nodes of 2 GPUs (2
 * NICs, 100 GB/s), leaf groups of 2 nodes with 2 uplink ports (100 GB/s,
 * 2:1).  Gang A (6 GPUs) takes group 0 and node 2 of group 1; its ring
 * fills the uplinks of groups 0 and 1.  Gang B (6 GPUs, same time) needs
 * two groups: group 2 and group 1's last node would share group 1's
 * uplinks with A (both slowed); with the load it takes groups 2 and 3, and
 * no GPU-s is lost to the network.  fabric_aware the same. */
#define LOAD_YAML(placement)                                                                  \
    "horizon: 1d\nuntil: drain\nworkload: {synthetic: {arrivals: {rate: 1/h}, gpus: {6: 1}, " \
    "duration: {dist: exponential, mean: 1h}}}\n"                                            \
    "cluster:\n"                                                                              \
    "  pools:\n"                                                                              \
    "    - {name: p, gpu: H100, nodes: 8, gpus_per_node: 2}\n"                                \
    "  fabric:\n"                                                                             \
    "    kind: ib_ndr\n"                                                                      \
    "    nodes_per_leaf: 2\n"                                                                 \
    "    rail_optimized: false\n"                                                             \
    "    oversubscription: 2\n"                                                               \
    "    alpha_us: 0\n"                                                                       \
    "    traffic:\n"                                                                          \
    "      - {class: 0, bytes: 50e9, compute: 1s}\n"                                          \
    "scheduler: {queue: fifo, placement: " placement "}\n"

static void test_place_load_run(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    const char *yaml[] = {LOAD_YAML("topology"), LOAD_YAML("fabric_aware")};
    for (int i = 0; i < 2; i++) {
        fs_test_rows_t rs = {0};
        fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
        fs_job_t two[] = {fs_test_job(1, 0, 6, 3600), fs_test_job(2, 0, 6, 3600)};
        fs_run_totals_t t;
        fs_test_run_yaml(yaml[i], two, 2, &sink, &t);
        assert_int_equal(rs.n, 2);
        assert_true(rs.r[0].end == 3600.0);
        assert_true(rs.r[1].end == 3600.0);
        assert_true(t.gpu_s_network == 0);
        assert_true(t.fabric_uplink_saturated_s > 0);   /* A and B each fill their uplinks */
        fs_test_rows_free(&rs);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--ref-cases") == 0)
        return write_cases(argv[2], 300);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_closed_form),
        cmocka_unit_test(test_nccl_published),
        cmocka_unit_test(test_kind_defaults),
        cmocka_unit_test(test_oversubscription),
        cmocka_unit_test(test_maxmin_hand),
        cmocka_unit_test(test_conservation),
        cmocka_unit_test(test_run_model),
        cmocka_unit_test(test_failed_spine),
        cmocka_unit_test(test_work_conservation),
        cmocka_unit_test(test_place_load_topology),
        cmocka_unit_test(test_place_fabric_aware),
        cmocka_unit_test(test_place_load_run),
        cmocka_unit_test(test_scenario_errors),
        cmocka_unit_test(test_tables_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
