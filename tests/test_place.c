/*
 * Placement policies (models/fs_place.c) and fractional GPU sharing
 * (models/fs_cluster.c):
 *   - fast path == slow path for every kind (indexed queries vs linear
 *     scans, same seeds): identical placements and state over random
 *     alloc/free/down/up sequences with whole, fractional and multi-node
 *     requests and GPU-type constraints;
 *   - a shared GPU is never over-committed, and the cluster's accounting
 *     equals a reference recomputed from the live placements, after every
 *     operation;
 *   - best_fit == pack on whole-GPU workloads; scored kinds with every
 *     node as a candidate equal a brute-force scorer; the FGD closed form
 *     equals the definition of fragmentation (Weng et al. 2023) computed
 *     GPU by GPU;
 *   - hand-checked placements (FGD vs packing, spread, GPU packing, first
 *     fit, topology) and errors of the topology settings;
 *   - random placement is uniform over feasible nodes and keyed by the seed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "models/fs_catalog.h"
#include "models/fs_cluster.h"
#include "models/fs_model.h"
#include "models/fs_policy.h"
#include "models/fs_place.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"
#include "traces/fs_job.h"
#include "traces/fs_memsrc.h"

static void make_cfg(fs_cluster_cfg_t *cc, fs_pool_cfg_t *pools, size_t n)
{
    memset(cc, 0, sizeof *cc);
    cc->pools = pools;
    cc->n_pools = n;
}

/* ---- reference accounting -------------------------------------------------- */

enum { MAXJ = 2048 };

typedef struct live {
    fs_placement_t pl[MAXJ];
    size_t n;
} live_t;

/* Recomputes every node's whole-GPU use and every shared slot's milli from
 * the live placements and compares with the cluster. */
static void check_accounting(const fs_cluster_t *c, const live_t *lv)
{
    uint32_t *whole = fs_calloc(c->n_nodes, sizeof *whole);
    uint64_t milli = 0, busy = 0;
    for (uint32_t p = 0; p < c->n_pools; p++) {
        const fs_pool_t *pp = &c->pools[p];
        uint32_t *slot = fs_calloc((size_t)pp->n_nodes * pp->gpn + 1, sizeof *slot);
        for (size_t i = 0; i < lv->n; i++) {
            const fs_placement_t *pl = &lv->pl[i];
            if (pl->pool != p)
                continue;
            if (pl->milli < FS_GPU_MILLI_WHOLE) {
                assert_int_equal(pl->n, 1);
                slot[(size_t)(pl->one.node - pp->first_node) * pp->gpn + pl->gpu] += pl->milli;
                milli += pl->milli;
                continue;
            }
            const fs_slice_t *s = fs_placement_slices(pl);
            for (uint32_t k = 0; k < pl->n; k++) {
                whole[s[k].node] += s[k].gpus;
                milli += 1000u * s[k].gpus;
                busy += s[k].gpus;
            }
        }
        for (uint32_t v = pp->first_node; v < pp->first_node + pp->n_nodes; v++) {
            uint32_t open = 0;
            for (uint32_t k = 0; k < pp->gpn; k++) {
                uint32_t used = slot[(size_t)(v - pp->first_node) * pp->gpn + k];
                assert_true(used <= 1000);  /* never over-committed */
                assert_int_equal(fs_cluster_slot_used(c, pp, v, k), used);
                open += used > 0;
            }
            busy += open;
            assert_int_equal(c->node_free[v] + open + whole[v], pp->gpn);
        }
        fs_free(slot);
    }
    assert_int_equal(c->milli_busy, milli);
    assert_int_equal(c->gpus_busy, busy);
    fs_free(whole);
}

static void check_same(const fs_cluster_t *a, const fs_cluster_t *b)
{
    assert_memory_equal(a->node_free, b->node_free, a->n_nodes * sizeof *a->node_free);
    assert_int_equal(a->gpus_busy, b->gpus_busy);
    assert_int_equal(a->milli_busy, b->milli_busy);
    for (uint32_t p = 0; p < a->n_pools; p++) {
        assert_int_equal(a->pools[p].gpus_free, b->pools[p].gpus_free);
        assert_int_equal(a->pools[p].n_shared, b->pools[p].n_shared);
        assert_int_equal(!a->pools[p].sused, !b->pools[p].sused);
        if (a->pools[p].sused)
            assert_memory_equal(a->pools[p].sused, b->pools[p].sused,
                                (size_t)a->pools[p].n_nodes * a->pools[p].gpn * sizeof(uint16_t));
    }
}

static void same_placement(const fs_placement_t *a, const fs_placement_t *b)
{
    assert_int_equal(a->pool, b->pool);
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->milli, b->milli);
    if (a->milli < FS_GPU_MILLI_WHOLE)
        assert_int_equal(a->gpu, b->gpu);
    assert_memory_equal(fs_placement_slices(a), fs_placement_slices(b), a->n * sizeof(fs_slice_t));
}

/* A random request: fractional, whole single-node, or multi-node. */
static void random_req(fs_rng_t *r, uint32_t gpn, uint32_t *g, uint32_t *milli)
{
    double u = fs_rng_uniform(r);
    if (u < 0.45) {
        static const uint32_t shares[] = {100, 250, 300, 460, 500, 700, 810, 999};
        *g = 1;
        *milli = shares[gsl_rng_uniform_int(r->g, 8)];
    } else if (u < 0.9) {
        *g = 1 + (uint32_t)gsl_rng_uniform_int(r->g, gpn);
        *milli = FS_GPU_MILLI_WHOLE;
    } else {
        *g = gpn + 1 + (uint32_t)gsl_rng_uniform_int(r->g, 2 * gpn);
        *milli = FS_GPU_MILLI_WHOLE;
    }
}

static const uint32_t pools_a[] = {0}, pools_b[] = {1}, pools_ba[] = {1, 0};

static void pick_pools(fs_rng_t *r, const uint32_t **pools, size_t *n)
{
    switch (gsl_rng_uniform_int(r->g, 4)) {
    case 0: *pools = NULL; *n = 0; break;
    case 1: *pools = pools_a; *n = 1; break;
    case 2: *pools = pools_b; *n = 1; break;
    default: *pools = pools_ba; *n = 2; break;
    }
}

/* Indexed and linear clusters with identical placers choose the same. */
static void fast_slow(int kind, uint32_t k, uint64_t seed, int ops)
{
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2] = {{"a", "H100", 29, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}, {"b", "A100", 13, 4, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 2);
    cc.topology.nodes_per_rack = 4;
    cc.topology.racks_per_leaf = 2;
    fs_cluster_t fast, slow;
    assert_int_equal(fs_cluster_init(&fast, &cc, NULL), 0);
    assert_int_equal(fs_cluster_init(&slow, &cc, NULL), 0);
    slow.use_index = 0;
    fs_placer_t *pf, *ps;
    assert_int_equal(fs_placer_create(&fast, kind, k, &cc, seed, 0, &pf, NULL), 0);
    assert_int_equal(fs_placer_create(&slow, kind, k, &cc, seed, 0, &ps, NULL), 0);
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, seed, 0, FS_RNG_PURPOSE_USER, 1), 0);
    static live_t lf, ls;
    lf.n = ls.n = 0;
    for (int op = 0; op < ops; op++) {
        double u = fs_rng_uniform(&r);
        if (u < 0.6 && lf.n < MAXJ) {
            uint32_t g, milli;
            const uint32_t *pl;
            size_t np;
            pick_pools(&r, &pl, &np);
            random_req(&r, 8, &g, &milli);
            assert_int_equal(fs_placer_observe(pf, &fast, g, milli, pl, np, 1), 0);
            assert_int_equal(fs_placer_observe(ps, &slow, g, milli, pl, np, 1), 0);
            int a = fs_placer_place(pf, &fast, pl, np, g, milli, &lf.pl[lf.n]);
            int b = fs_placer_place(ps, &slow, pl, np, g, milli, &ls.pl[ls.n]);
            assert_int_equal(a, b);
            if (a == 1) {
                same_placement(&lf.pl[lf.n], &ls.pl[ls.n]);
                uint32_t sum = 0;
                const fs_slice_t *s = fs_placement_slices(&lf.pl[lf.n]);
                for (uint32_t i = 0; i < lf.pl[lf.n].n; i++)
                    sum += s[i].gpus;
                assert_int_equal(sum, g);   /* gang: all or nothing */
                lf.n++;
                ls.n++;
            }
        } else if (u < 0.95 && lf.n > 0) {
            size_t j = gsl_rng_uniform_int(r.g, lf.n);
            fs_cluster_free(&fast, &lf.pl[j]);
            fs_cluster_free(&slow, &ls.pl[j]);
            fs_placement_release(&lf.pl[j]);
            fs_placement_release(&ls.pl[j]);
            lf.pl[j] = lf.pl[--lf.n];
            ls.pl[j] = ls.pl[--ls.n];
        } else {
            uint32_t node = (uint32_t)gsl_rng_uniform_int(r.g, fast.n_nodes);
            int up = fs_rng_uniform(&r) < 0.6;
            fs_cluster_set_up(&fast, node, up);
            fs_cluster_set_up(&slow, node, up);
        }
        check_same(&fast, &slow);
        if (op % 16 == 0)
            check_accounting(&fast, &lf);
    }
    check_accounting(&fast, &lf);
    for (size_t j = 0; j < lf.n; j++) {
        fs_cluster_free(&fast, &lf.pl[j]);
        fs_cluster_free(&slow, &ls.pl[j]);
        fs_placement_release(&lf.pl[j]);
        fs_placement_release(&ls.pl[j]);
    }
    assert_int_equal(fast.gpus_busy, 0);
    assert_int_equal(fast.milli_busy, 0);
    for (uint32_t p = 0; p < fast.n_pools; p++)
        assert_int_equal(fast.pools[p].n_shared, 0);
    fs_rng_release(&r);
    fs_placer_destroy(pf);
    fs_placer_destroy(ps);
    fs_cluster_release(&fast);
    fs_cluster_release(&slow);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_fast_slow_pack(void **s) { (void)s; fast_slow(FS_PLACE_PACK, 100, 1, 3000); }
static void test_fast_slow_first_fit(void **s) { (void)s; fast_slow(FS_PLACE_FIRST_FIT, 100, 2, 3000); }
static void test_fast_slow_best_fit(void **s) { (void)s; fast_slow(FS_PLACE_BEST_FIT, 3, 3, 3000); }
static void test_fast_slow_binpack(void **s) { (void)s; fast_slow(FS_PLACE_BINPACK, 0, 4, 2000); }
static void test_fast_slow_spread(void **s) { (void)s; fast_slow(FS_PLACE_SPREAD, 2, 5, 3000); }
static void test_fast_slow_random(void **s) { (void)s; fast_slow(FS_PLACE_RANDOM, 0, 6, 3000); }
static void test_fast_slow_topology(void **s) { (void)s; fast_slow(FS_PLACE_TOPOLOGY, 0, 7, 3000); }
static void test_fast_slow_fgd(void **s) { (void)s; fast_slow(FS_PLACE_FGD, 4, 8, 3000); }
static void test_fast_slow_fgd_all(void **s) { (void)s; fast_slow(FS_PLACE_FGD, 0, 9, 2000); }

/* ---- best_fit == pack without sharing ----------------------------------------- */

static void test_best_fit_is_pack_for_whole_gpus(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[1] = {{"a", "H100", 40, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t a, b;
    assert_int_equal(fs_cluster_init(&a, &cc, NULL), 0);
    assert_int_equal(fs_cluster_init(&b, &cc, NULL), 0);
    fs_placer_t *pa, *pb;
    assert_int_equal(fs_placer_create(&a, FS_PLACE_BEST_FIT, 100, &cc, 1, 0, &pa, NULL), 0);
    assert_int_equal(fs_placer_create(&b, FS_PLACE_PACK, 100, &cc, 1, 0, &pb, NULL), 0);
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 11, 0, FS_RNG_PURPOSE_USER, 0), 0);
    static live_t la, lb;
    la.n = lb.n = 0;
    for (int op = 0; op < 4000; op++) {
        if (fs_rng_uniform(&r) < 0.6 && la.n < MAXJ) {
            uint32_t g = 1 + (uint32_t)gsl_rng_uniform_int(r.g, fs_rng_uniform(&r) < 0.9 ? 8 : 24);
            int x = fs_placer_place(pa, &a, NULL, 0, g, 1000, &la.pl[la.n]);
            int y = fs_placer_place(pb, &b, NULL, 0, g, 1000, &lb.pl[lb.n]);
            assert_int_equal(x, y);
            if (x == 1) {
                same_placement(&la.pl[la.n], &lb.pl[lb.n]);
                la.n++;
                lb.n++;
            }
        } else if (la.n > 0) {
            size_t j = gsl_rng_uniform_int(r.g, la.n);
            fs_cluster_free(&a, &la.pl[j]);
            fs_cluster_free(&b, &lb.pl[j]);
            fs_placement_release(&la.pl[j]);
            fs_placement_release(&lb.pl[j]);
            la.pl[j] = la.pl[--la.n];
            lb.pl[j] = lb.pl[--lb.n];
        }
    }
    for (size_t j = 0; j < la.n; j++) {
        fs_placement_release(&la.pl[j]);
        fs_placement_release(&lb.pl[j]);
    }
    fs_rng_release(&r);
    fs_placer_destroy(pa);
    fs_placer_destroy(pb);
    fs_cluster_release(&a);
    fs_cluster_release(&b);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- fabric_aware without the fabric's view: as topology -------------------------- */

/* A placer of fabric_aware that was given no network (fs_placer_set_net:
 * the fabric module sets one; a scenario refuses fabric_aware without
 * cluster.fabric) places as topology does: single-node jobs too, not only
 * gangs. */
static void test_fabric_aware_without_net_is_topology(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[1] = {{"a", "H100", 4, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t a, b;
    assert_int_equal(fs_cluster_init(&a, &cc, NULL), 0);
    assert_int_equal(fs_cluster_init(&b, &cc, NULL), 0);
    fs_placer_t *pa, *pb;
    assert_int_equal(fs_placer_create(&a, FS_PLACE_FABRIC_AWARE, 0, &cc, 1, 0, &pa, NULL), 0);
    assert_int_equal(fs_placer_create(&b, FS_PLACE_TOPOLOGY, 0, &cc, 1, 0, &pb, NULL), 0);
    static const uint32_t gs[] = {1, 3, 8, 16, 2, 2};   /* all 32 GPUs */
    fs_placement_t x[6], y[6];
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(fs_placer_place(pa, &a, NULL, 0, gs[i], 1000, &x[i]), 1);
        assert_int_equal(fs_placer_place(pb, &b, NULL, 0, gs[i], 1000, &y[i]), 1);
        same_placement(&x[i], &y[i]);
    }
    for (size_t i = 0; i < 6; i++) {
        fs_placement_release(&x[i]);
        fs_placement_release(&y[i]);
    }
    fs_placer_destroy(pa);
    fs_placer_destroy(pb);
    fs_cluster_release(&a);
    fs_cluster_release(&b);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- brute force: scores and fragmentation by definition ------------------------ */

/* Per-GPU free milli of a node: fully free 1000, shared 1000 - used, whole-
 * allocated 0.  Returns the count (gpn). */
static uint32_t gpu_free(const fs_cluster_t *c, uint32_t node, uint32_t *f)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->node_free[node]; i++)
        f[n++] = 1000;
    for (uint32_t k = 0; k < p->gpn; k++)
        if (fs_cluster_slot_used(c, p, node, k))
            f[n++] = 1000 - fs_cluster_slot_used(c, p, node, k);
    while (n < p->gpn)
        f[n++] = 0;
    return n;
}

/* F_n with CPU, by the ATC'23 simulator's definition (frag.go GetNodePodFrag):
 * a CPU-only shape sees all free GPU capacity as fragment; a GPU shape that
 * lacks GPU or CPU on the node (or may not use its pool) likewise; one that
 * fits sees the GPUs whose free part is below its demand. */
typedef struct cshape {
    uint32_t g, milli, cpu;
    int pool;
    uint64_t w;
} cshape_t;

static int64_t brute_F_cpu(const uint32_t *f, uint32_t n, uint32_t pool, uint32_t cpu_free,
                           const cshape_t *sh, size_t ns)
{
    int64_t F = 0, T = 0;
    for (uint32_t i = 0; i < n; i++)
        T += f[i];
    for (size_t s = 0; s < ns; s++) {
        int64_t frag = T;
        int allowed = sh[s].pool < 0 || (uint32_t)sh[s].pool == pool;
        uint32_t can = 0;
        for (uint32_t i = 0; i < n; i++)
            can += f[i] >= sh[s].milli;
        if (sh[s].g > 0 && allowed && can >= sh[s].g && cpu_free >= sh[s].cpu) {
            frag = 0;
            for (uint32_t i = 0; i < n; i++)
                if (f[i] < sh[s].milli)
                    frag += f[i];
        }
        F += (int64_t)sh[s].w * frag;
    }
    return F;
}

static uint32_t cpu_free_of(const fs_cluster_t *c, uint32_t v)
{
    return c->node_cpu && c->pools[c->node_pool[v]].cpu_milli ? c->node_cpu[v] : UINT32_MAX;
}

/* Brute force: every feasible node and GPU option for shape q, the lowest
 * growth of F (CPU levels before and after), then the lowest node, then
 * open slots in order before a new GPU.  *bestn = UINT32_MAX: none fits. */
static void brute_choice(const fs_cluster_t *c, const cshape_t *sh, size_t nsh,
                         const cshape_t *q, uint32_t *bestn, int *bests)
{
    uint32_t f[16];
    int64_t bestd = INT64_MAX;
    fs_podreq_t req = {q->g, q->milli, q->cpu, 0};
    *bestn = UINT32_MAX;
    *bests = -2;
    for (uint32_t v = 0; v < c->n_nodes; v++) {
        uint32_t p = c->node_pool[v];
        if ((q->pool >= 0 && (uint32_t)q->pool != p) || q->g > c->pools[p].gpn ||
            !fs_cluster_node_fits_pod(c, v, &req))
            continue;
        uint32_t n = gpu_free(c, v, f), cpu0 = cpu_free_of(c, v);
        uint32_t cpu1 = cpu0 == UINT32_MAX ? cpu0 : cpu0 - q->cpu;
        int64_t F0 = brute_F_cpu(f, n, p, cpu0, sh, nsh);
        if (q->milli >= 1000) {
            uint32_t left = q->g;
            for (uint32_t i = 0; i < n && left; i++)
                if (f[i] == 1000) {
                    f[i] = 0;
                    left--;
                }
            int64_t d = brute_F_cpu(f, n, p, cpu1, sh, nsh) - F0;
            if (d < bestd) {
                bestd = d;
                *bestn = v;
                *bests = -1;
            }
            continue;
        }
        const fs_pool_t *pp = &c->pools[p];
        for (uint32_t k = 0; k <= pp->gpn; k++) {
            /* k < gpn: open slot k; k == gpn: a new shared GPU */
            uint32_t used = k < pp->gpn ? fs_cluster_slot_used(c, pp, v, k) : 0;
            if (k < pp->gpn && (!used || 1000 - used < q->milli))
                continue;
            if (k == pp->gpn && c->node_free[v] == 0)
                continue;
            uint32_t want = k < pp->gpn ? 1000 - used : 1000;
            for (uint32_t i = 0; i < n; i++)
                if (f[i] == want) {
                    f[i] -= q->milli;
                    break;
                }
            int64_t d = brute_F_cpu(f, n, p, cpu1, sh, nsh) - F0;
            for (uint32_t i = 0; i < n; i++)
                if (f[i] == want - q->milli) {
                    f[i] = want;
                    break;
                }
            if (d < bestd) {
                bestd = d;
                *bestn = v;
                *bests = k < pp->gpn ? (int)k : -1;
            }
        }
    }
}

/* Pods with CPU: F_n equals the definition on every node after every
 * operation, FGD's node and GPU equal a brute-force search over every
 * feasible node and option (CPU level before and after), CPU never
 * over-committed, CPU-only pods placed; a mutation that lets CPU-infeasible
 * shapes count as feasible fails it. */
static void test_fgd_cpu_matches_definition(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2] = {{"a", "T4", 7, 4, 16000, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}, {"b", "V100", 5, 8, 64000, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 2);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_FGD, 0, &cc, 1, 0, &pl, NULL), 0);
    static const cshape_t sh[] = {{1, 1000, 4000, -1, 5}, {2, 1000, 12000, -1, 2},
                                  {1, 500, 2000, -1, 4},  {1, 250, 6000, 0, 3},
                                  {1, 800, 30000, 1, 2},  {8, 1000, 60000, 1, 1},
                                  {0, 1000, 8000, -1, 3}, {0, 1000, 20000, -1, 1},
                                  {1, 460, 0, -1, 3},     {4, 1000, 16000, 0, 1}};
    const size_t nsh = sizeof sh / sizeof sh[0];
    for (size_t i = 0; i < nsh; i++) {
        uint32_t one = (uint32_t)sh[i].pool;
        fs_podreq_t q = {sh[i].g, sh[i].milli, sh[i].cpu, 0};
        assert_int_equal(fs_placer_observe_pod(pl, &c, &q, sh[i].pool < 0 ? NULL : &one,
                                               sh[i].pool < 0 ? 0 : 1, sh[i].w), 0);
    }
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 9, 0, FS_RNG_PURPOSE_USER, 2), 0);
    static live_t lv;
    lv.n = 0;
    uint32_t f[16];
    int placed_cpu_only = 0;
    for (int op = 0; op < 500; op++) {
        for (uint32_t v = 0; v < c.n_nodes; v++) {
            uint32_t n = gpu_free(&c, v, f);
            assert_int_equal(fs_placer_fragmentation(pl, &c, v),
                             brute_F_cpu(f, n, c.node_pool[v], cpu_free_of(&c, v), sh, nsh));
            /* CPU: capacity less what the live pods on the node hold */
            uint64_t held = 0;
            for (size_t j = 0; j < lv.n; j++)
                if (lv.pl[j].one.node == v)
                    held += lv.pl[j].cpu;
            assert_int_equal(c.node_cpu[v] + held, c.pools[c.node_pool[v]].cpu_milli);
        }
        if (fs_rng_uniform(&r) < 0.7 && lv.n < MAXJ) {
            const cshape_t *q = &sh[gsl_rng_uniform_int(r.g, nsh)];
            uint32_t one = (uint32_t)q->pool;
            fs_podreq_t req = {q->g, q->milli, q->cpu, 0};
            uint32_t bestn;
            int bests;
            brute_choice(&c, sh, nsh, q, &bestn, &bests);
            int rc = fs_placer_place_pod(pl, &c, q->pool < 0 ? NULL : &one, q->pool < 0 ? 0 : 1,
                                         &req, &lv.pl[lv.n]);
            if (bestn == UINT32_MAX) {
                assert_int_equal(rc, 0);
                continue;
            }
            assert_int_equal(rc, 1);
            assert_int_equal(lv.pl[lv.n].one.node, bestn);
            assert_int_equal(lv.pl[lv.n].cpu, q->cpu);
            if (q->milli < 1000 && bests >= 0)
                assert_int_equal(lv.pl[lv.n].gpu, bests);
            placed_cpu_only += q->g == 0;
            lv.n++;
        } else if (lv.n > 0) {
            size_t j = gsl_rng_uniform_int(r.g, lv.n);
            fs_cluster_free(&c, &lv.pl[j]);
            fs_placement_release(&lv.pl[j]);
            lv.pl[j] = lv.pl[--lv.n];
        }
    }
    assert_true(placed_cpu_only > 10);
    for (size_t j = 0; j < lv.n; j++)
        fs_placement_release(&lv.pl[j]);
    fs_rng_release(&r);
    fs_placer_destroy(pl);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* FGD learning online (issue #41): a known shape's weight is added to the
 * built tables in place, a new shape rebuilds them.  Shapes observed one at
 * a time in a random order, with pods placed and freed between, F_n equals
 * the definition at the weights so far on every node after every step; a
 * mutation of the in-place add (a level or a rank too few) fails it. */
static void test_fgd_online_weights(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2] = {{"a", "T4", 5, 4, 16000, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}, {"b", "V100", 4, 8, 64000, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 2);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_FGD, 0, &cc, 1, 0, &pl, NULL), 0);
    cshape_t sh[] = {{1, 1000, 4000, -1, 0}, {2, 1000, 12000, -1, 0}, {1, 500, 2000, -1, 0},
                     {1, 250, 6000, 0, 0},   {1, 800, 30000, 1, 0},  {8, 1000, 60000, 1, 0},
                     {0, 1000, 8000, -1, 0}, {1, 460, 0, -1, 0},     {1, 500, 12000, -1, 0},
                     {4, 1000, 16000, 0, 0}, {1, 120, 4000, -1, 0}};
    const size_t nsh = sizeof sh / sizeof sh[0];
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 11, 0, FS_RNG_PURPOSE_USER, 2), 0);
    static live_t lv;
    lv.n = 0;
    uint32_t f[16];
    int added = 0;
    for (int op = 0; op < 400; op++) {
        double u = fs_rng_uniform(&r);
        size_t i = gsl_rng_uniform_int(r.g, nsh);
        uint32_t one = (uint32_t)sh[i].pool;
        if (u < 0.5) {      /* observe: new shapes early, known ones mostly */
            uint64_t w = 1 + gsl_rng_uniform_int(r.g, 3);
            added += sh[i].w > 0;
            fs_podreq_t q = {sh[i].g, sh[i].milli, sh[i].cpu, 0};
            assert_int_equal(fs_placer_observe_pod(pl, &c, &q, sh[i].pool < 0 ? NULL : &one,
                                                   sh[i].pool < 0 ? 0 : 1, w), 0);
            sh[i].w += w;
        } else if (u < 0.8 && lv.n < MAXJ) {
            fs_podreq_t q = {sh[i].g, sh[i].milli, sh[i].cpu, 0};
            if (fs_placer_place_pod(pl, &c, sh[i].pool < 0 ? NULL : &one,
                                    sh[i].pool < 0 ? 0 : 1, &q, &lv.pl[lv.n]) == 1)
                lv.n++;
        } else if (lv.n > 0) {
            size_t j = gsl_rng_uniform_int(r.g, lv.n);
            fs_cluster_free(&c, &lv.pl[j]);
            fs_placement_release(&lv.pl[j]);
            lv.pl[j] = lv.pl[--lv.n];
        }
        for (uint32_t v = 0; v < c.n_nodes; v++) {
            uint32_t n = gpu_free(&c, v, f);
            assert_int_equal(fs_placer_fragmentation(pl, &c, v),
                             brute_F_cpu(f, n, c.node_pool[v], cpu_free_of(&c, v), sh, nsh));
        }
    }
    assert_true(added > 100);   /* the in-place path ran */
    for (size_t j = 0; j < lv.n; j++)
        fs_placement_release(&lv.pl[j]);
    fs_rng_release(&r);
    fs_placer_destroy(pl);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Pods with CPU and memory, hand cases: NodeResourcesFit filters on every
 * resource; the ATC'23 scores; ties by node name (kubernetes_name) follow
 * the machine-list order, not the node ids; CPU-only pods hold CPU only. */
static void test_pods_cpu_hand(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    uint32_t rank[3] = {2, 0, 1};   /* list order: node 1, node 2, node 0 */
    fs_pool_cfg_t pools[1] = {{"a", "T4", 3, 4, 16000, 65536, rank, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    assert_int_equal(c.node_rank[0], 2);
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_ATC_BEST_FIT, 0, &cc, 1, 0, &pl, NULL), 0);
    fs_placer_set_scoring(pl, FS_SCORE_KUBE_NAME, 1, 0, 0);
    fs_placement_t a, b, d, e;
    /* three empty nodes score alike: the first by name is node 1 */
    fs_podreq_t q = {1, 1000, 12000, 1024};
    assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &q, &a), 1);
    assert_int_equal(a.one.node, 1);
    assert_int_equal(c.node_cpu[1], 4000);
    assert_int_equal(c.node_mem[1], 64512);
    /* 12 cores no longer fit node 1 (4 left): best fit among 2 and 0 ties, node 2 by name */
    assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &q, &b), 1);
    assert_int_equal(b.one.node, 2);
    /* a CPU-only pod of 4 cores: best fit on CPU is a node with 4 cores free (1 or 2,
     * node 1 first by name); it takes no GPU */
    fs_podreq_t cpu = {0, 1000, 4000, 0};
    uint64_t busy = c.gpus_busy;
    assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &cpu, &d), 1);
    assert_int_equal(d.one.node, 1);
    assert_int_equal(c.gpus_busy, busy);
    assert_int_equal(c.node_cpu[1], 0);
    /* memory filters too: 64 GiB fits only node 0 */
    fs_podreq_t mem = {1, 1000, 1000, 65536};
    assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &mem, &e), 1);
    assert_int_equal(e.one.node, 0);
    assert_int_equal(fs_cluster_fits_pod(&c, 0, &mem), 0);
    assert_int_equal(fs_cluster_could_fit_pod(&c, 0, &mem), 1);
    fs_podreq_t huge = {1, 1000, 17000, 0};
    assert_int_equal(fs_cluster_could_fit_pod(&c, 0, &huge), 0);
    /* freeing gives CPU and memory back */
    fs_cluster_free(&c, &d);
    assert_int_equal(c.node_cpu[1], 4000);
    fs_cluster_free(&c, &e);
    assert_int_equal(c.node_mem[0], 65536);
    fs_cluster_free(&c, &a);
    fs_cluster_free(&c, &b);
    assert_int_equal(c.node_cpu[1], 16000);
    assert_int_equal(c.gpus_busy, 0);
    /* gpu_packing (gpu_packing_score.go): an all-free node scores max(33 - 4, 4) = 29, a
     * node with a share of 300 milli taken, for a 500 share: 100 - 70 / 10 = 93 */
    fs_placer_destroy(pl);
    assert_int_equal(fs_placer_create(&c, FS_PLACE_GPU_PACKING, 0, &cc, 1, 0, &pl, NULL), 0);
    fs_placer_set_scoring(pl, FS_SCORE_KUBE_NAME, 1, 0, 0);
    fs_podreq_t s3 = {1, 300, 1000, 0}, s5 = {1, 500, 1000, 0};
    assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &s3, &a), 1);
    assert_int_equal(a.one.node, 1);    /* all alike: first by name */
    assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &s5, &b), 1);
    assert_int_equal(b.one.node, 1);    /* packed into the open shared GPU */
    assert_int_equal(b.gpu, a.gpu);
    fs_cluster_free(&c, &a);
    fs_cluster_free(&c, &b);
    fs_placer_destroy(pl);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Allocation failures on the pod paths (cluster CPU, memory and rank arrays,
 * FGD shape list and CPU levels, scoring a pod) return FS_ENOMEM and leak
 * nothing; past the last allocation the same steps succeed. */
static void test_pods_alloc_failures(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    uint32_t rank[4] = {3, 1, 0, 2};
    fs_pool_cfg_t pools[1] = {{"a", "T4", 4, 4, 16000, 65536, rank, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    int ok = 0;
    for (uint64_t k = 1; k < 200 && !ok; k++) {
        fs_cluster_t c;
        fs_placer_t *pl = NULL;
        fs_placement_t a = {0};
        fs_podreq_t sh1 = {1, 1000, 4000, 0}, sh2 = {1, 500, 8000, 0}, pod = {1, 500, 6000, 1024};
        int rc, placed = 0;
        fs_alloc_fail_after(k);
        if (!(rc = fs_cluster_init(&c, &cc, NULL))) {
            if (!(rc = fs_placer_create(&c, FS_PLACE_FGD, 0, &cc, 1, 0, &pl, NULL))) {
                fs_placer_set_scoring(pl, FS_SCORE_KUBE_NAME, 1, 0, 0);
                if (!(rc = fs_placer_observe_pod(pl, &c, &sh1, NULL, 0, 3)) &&
                    !(rc = fs_placer_observe_pod(pl, &c, &sh2, NULL, 0, 1))) {
                    rc = fs_placer_place_pod(pl, &c, NULL, 0, &pod, &a);
                    placed = rc == 1;
                    rc = rc == 1 ? 0 : rc;
                }
            }
        }
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            assert_true(placed);
            assert_int_equal(c.node_cpu[a.one.node], 10000);
        } else {
            assert_int_equal(rc, FS_ENOMEM);
        }
        if (placed)
            fs_cluster_free(&c, &a);
        fs_placer_destroy(pl);
        if (rc == 0 || pl || c.pools)
            fs_cluster_release(&c);
        assert_int_equal(fs_alloc_live(), live0);
    }
    assert_true(ok);
}

/* With every node a candidate, FGD's choice and F_n equal brute force. */
static void test_fgd_matches_definition(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2] = {{"a", "T4", 9, 4, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}, {"b", "V100", 6, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 2);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_FGD, 0, &cc, 1, 0, &pl, NULL), 0);
    static const cshape_t sh[] = {{1, 1000, 0, -1, 5}, {2, 1000, 0, -1, 2}, {1, 500, 0, -1, 4},
                                  {1, 250, 0, 0, 3},   {1, 800, 0, 1, 2},   {8, 1000, 0, 1, 1},
                                  {4, 1000, 0, 0, 1},  {1, 460, 0, -1, 3}};
    const size_t nsh = sizeof sh / sizeof sh[0];
    for (size_t i = 0; i < nsh; i++) {
        uint32_t one = (uint32_t)sh[i].pool;
        assert_int_equal(fs_placer_observe(pl, &c, sh[i].g, sh[i].milli, sh[i].pool < 0 ? NULL : &one,
                                           sh[i].pool < 0 ? 0 : 1, sh[i].w), 0);
    }
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 5, 0, FS_RNG_PURPOSE_USER, 2), 0);
    static live_t lv;
    lv.n = 0;
    uint32_t f[16];
    for (int op = 0; op < 600; op++) {
        for (uint32_t v = 0; v < c.n_nodes; v++) {
            uint32_t n = gpu_free(&c, v, f);
            assert_int_equal(fs_placer_fragmentation(pl, &c, v),
                             brute_F_cpu(f, n, c.node_pool[v], UINT32_MAX, sh, nsh));
        }
        if (fs_rng_uniform(&r) < 0.7 && lv.n < MAXJ) {
            const cshape_t *q = &sh[gsl_rng_uniform_int(r.g, nsh)];
            uint32_t one = (uint32_t)q->pool;
            uint32_t bestn;
            int bests;
            brute_choice(&c, sh, nsh, q, &bestn, &bests);
            int rc = fs_placer_place(pl, &c, q->pool < 0 ? NULL : &one, q->pool < 0 ? 0 : 1, q->g,
                                     q->milli, &lv.pl[lv.n]);
            if (bestn == UINT32_MAX) {  /* every shape is single-node where allowed */
                assert_int_equal(rc, 0);
                continue;
            }
            assert_int_equal(rc, 1);
            assert_int_equal(lv.pl[lv.n].one.node, bestn);
            if (q->milli < 1000 && bests >= 0)
                assert_int_equal(lv.pl[lv.n].gpu, bests);
            if (q->milli < 1000 && bests < 0)   /* a new shared GPU: it holds only this share */
                assert_int_equal(fs_cluster_slot_used(&c, &c.pools[lv.pl[lv.n].pool], bestn,
                                                      lv.pl[lv.n].gpu), q->milli);
            lv.n++;
        } else if (lv.n > 0) {
            size_t j = gsl_rng_uniform_int(r.g, lv.n);
            fs_cluster_free(&c, &lv.pl[j]);
            fs_placement_release(&lv.pl[j]);
            lv.pl[j] = lv.pl[--lv.n];
        }
        check_accounting(&c, &lv);
    }
    for (size_t j = 0; j < lv.n; j++)
        fs_placement_release(&lv.pl[j]);
    fs_rng_release(&r);
    fs_placer_destroy(pl);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* best_fit and spread with every node a candidate equal brute force. */
static void scored_brute(int kind)
{
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2] = {{"a", "T4", 7, 4, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}, {"b", "V100", 5, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 2);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(&c, kind, 0, &cc, 1, 0, &pl, NULL), 0);
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 77, 0, FS_RNG_PURPOSE_USER, 3), 0);
    static live_t lv;
    lv.n = 0;
    uint32_t f[16];
    for (int op = 0; op < 1500; op++) {
        if (fs_rng_uniform(&r) < 0.65 && lv.n < MAXJ) {
            uint32_t g, milli;
            random_req(&r, 4, &g, &milli);
            /* brute: allocation ratio after placement, per node */
            uint32_t bestn = UINT32_MAX;
            int64_t bnum = 0, bden = 1;
            for (uint32_t v = 0; v < c.n_nodes; v++) {
                if (!fs_cluster_node_fits(&c, v, g, milli))
                    continue;
                uint32_t n = gpu_free(&c, v, f);
                int64_t T = 0;
                for (uint32_t i = 0; i < n; i++)
                    T += f[i];
                int64_t cap = 1000 * (int64_t)n, req = milli < 1000 ? milli : 1000 * (int64_t)g;
                int64_t num = kind == FS_PLACE_SPREAD ? T - req : cap - T + req;
                if (bestn == UINT32_MAX || num * bden > bnum * cap) {
                    bestn = v;
                    bnum = num;
                    bden = cap;
                }
            }
            int rc = fs_placer_place(pl, &c, NULL, 0, g, milli, &lv.pl[lv.n]);
            if (bestn != UINT32_MAX) {
                assert_int_equal(rc, 1);
                assert_int_equal(lv.pl[lv.n].one.node, bestn);
                lv.n++;
            } else if (rc == 1) {
                assert_true(g > 4);     /* only multi-node gangs go past the scorer */
                lv.n++;
            }
        } else if (lv.n > 0) {
            size_t j = gsl_rng_uniform_int(r.g, lv.n);
            fs_cluster_free(&c, &lv.pl[j]);
            fs_placement_release(&lv.pl[j]);
            lv.pl[j] = lv.pl[--lv.n];
        }
    }
    check_accounting(&c, &lv);
    for (size_t j = 0; j < lv.n; j++)
        fs_placement_release(&lv.pl[j]);
    fs_rng_release(&r);
    fs_placer_destroy(pl);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_best_fit_brute(void **s) { (void)s; scored_brute(FS_PLACE_BEST_FIT); }
static void test_spread_brute(void **s) { (void)s; scored_brute(FS_PLACE_SPREAD); }

/* ---- hand-checked placements ---------------------------------------------------- */

static void test_fgd_avoids_fragment(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[1] = {{"a", "T4", 1, 2, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placer_t *fgd, *bf;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_FGD, 100, &cc, 1, 0, &fgd, NULL), 0);
    assert_int_equal(fs_placer_create(&c, FS_PLACE_BEST_FIT, 100, &cc, 1, 0, &bf, NULL), 0);
    /* the workload: 600-milli tasks only */
    assert_int_equal(fs_placer_observe(fgd, &c, 1, 600, NULL, 0, 1), 0);
    fs_placement_t a, b, x;
    assert_int_equal(fs_placer_place(fgd, &c, NULL, 0, 1, 300, &a), 1);   /* GPU 0: 700 free */
    assert_int_equal(a.gpu, 0);
    assert_int_equal(fs_placer_fragmentation(fgd, &c, 0), 0);
    /* packing puts the next 300 on GPU 0 (400 free: unusable by a 600 task) */
    assert_int_equal(fs_placer_place(bf, &c, NULL, 0, 1, 300, &x), 1);
    assert_int_equal(x.gpu, 0);
    assert_int_equal(fs_placer_fragmentation(fgd, &c, 0), 400);
    fs_cluster_free(&c, &x);
    /* FGD opens GPU 1 instead: both GPUs keep 700 free, no fragment */
    assert_int_equal(fs_placer_place(fgd, &c, NULL, 0, 1, 300, &b), 1);
    assert_int_equal(b.gpu, 1);
    assert_int_equal(fs_placer_fragmentation(fgd, &c, 0), 0);
    assert_int_equal(c.milli_busy, 600);
    assert_int_equal(c.gpus_busy, 2);
    assert_int_equal(c.node_free[0], 0);
    /* a whole GPU no longer fits; a 700 share does (exactly full) */
    assert_int_equal(fs_cluster_fits_req(&c, 0, 1, 1000), 0);
    assert_int_equal(fs_cluster_fits_req(&c, 0, 1, 701), 0);
    assert_int_equal(fs_cluster_fits_req(&c, 0, 1, 700), 1);
    fs_cluster_free(&c, &a);
    fs_cluster_free(&c, &b);
    assert_int_equal(c.node_free[0], 2);
    assert_int_equal(c.gpus_busy, 0);
    fs_placer_destroy(fgd);
    fs_placer_destroy(bf);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_gpu_packing_and_first_fit(void **s)
{
    (void)s;
    fs_pool_cfg_t pools[1] = {{"a", "T4", 3, 2, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placement_t p[8];
    /* pack: a whole GPU on node 1 makes it the fullest node with a free GPU */
    assert_int_equal(fs_cluster_take(&c, 1, 1, 1000, -1, &p[0]), 1);
    assert_int_equal(fs_cluster_alloc_req(&c, 0, 1, 600, FS_PLACE_PACK, &p[1]), 1);
    assert_int_equal(p[1].one.node, 1);     /* idle GPU on an active node */
    assert_int_equal(fs_cluster_alloc_req(&c, 0, 1, 300, FS_PLACE_PACK, &p[2]), 1);
    assert_int_equal(p[2].one.node, 1);     /* occupied GPU first (400 free) */
    assert_int_equal(p[2].gpu, p[1].gpu);
    assert_int_equal(fs_cluster_alloc_req(&c, 0, 1, 300, FS_PLACE_PACK, &p[3]), 1);
    assert_int_equal(p[3].one.node, 0);     /* only 100 left there: an idle node */
    /* first fit: the lowest node with a shared GPU that fits or a free GPU */
    assert_int_equal(fs_cluster_alloc_req(&c, 0, 1, 700, FS_PLACE_FIRST_FIT, &p[4]), 1);
    assert_int_equal(p[4].one.node, 0);
    assert_int_equal(p[4].gpu, p[3].gpu);   /* 300 + 700: full, not over */
    assert_int_equal(fs_cluster_alloc_req(&c, 0, 1, 200, FS_PLACE_FIRST_FIT, &p[5]), 1);
    assert_int_equal(p[5].one.node, 0);
    assert_true(p[5].gpu != p[4].gpu);
    assert_int_equal(c.milli_busy, 1000 + 600 + 300 + 300 + 700 + 200);
    assert_int_equal(c.gpus_busy, 4);
    for (int i = 0; i < 6; i++)
        fs_cluster_free(&c, &p[i]);
    assert_int_equal(c.milli_busy, 0);
    assert_int_equal(c.pools[0].gpus_free, 6);
    fs_cluster_release(&c);
}

static void test_spread_and_best_fit(void **s)
{
    (void)s;
    fs_pool_cfg_t pools[1] = {{"a", "H100", 3, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placer_t *sp, *bf;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_SPREAD, 100, &cc, 1, 0, &sp, NULL), 0);
    assert_int_equal(fs_placer_create(&c, FS_PLACE_BINPACK, 100, &cc, 1, 0, &bf, NULL), 0);
    fs_placement_t a, b, x, y;
    assert_int_equal(fs_cluster_take(&c, 1, 5, 1000, -1, &a), 1);  /* free: 8, 3, 8 */
    assert_int_equal(fs_cluster_take(&c, 2, 3, 1000, -1, &b), 1);  /* free: 8, 3, 5 */
    assert_int_equal(fs_placer_place(sp, &c, NULL, 0, 3, 1000, &x), 1);
    assert_int_equal(x.one.node, 0);        /* LeastAllocated */
    assert_int_equal(fs_placer_place(bf, &c, NULL, 0, 3, 1000, &y), 1);
    assert_int_equal(y.one.node, 1);        /* MostAllocated: node 1 becomes full */
    fs_placement_t *all[] = {&a, &b, &x, &y};
    for (int i = 0; i < 4; i++)
        fs_cluster_free(&c, all[i]);
    fs_placer_destroy(sp);
    fs_placer_destroy(bf);
    fs_cluster_release(&c);
}

static void test_topology(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[1] = {{"a", "H100", 16, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    cc.topology.nodes_per_rack = 4;
    cc.topology.racks_per_leaf = 2;
    fs_cluster_t c, d;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    assert_int_equal(fs_cluster_init(&d, &cc, NULL), 0);
    assert_int_equal(c.topo->n_units[FS_TOPO_RACK], 4);
    assert_int_equal(c.topo->n_units[FS_TOPO_LEAF], 2);
    assert_int_equal(c.topo->n_units[FS_TOPO_SPINE], 1);
    assert_int_equal(c.topo->node_unit[FS_TOPO_LEAF][9], 1);
    fs_placement_t o[4], t, p;
    /* one GPU busy on nodes 1 and 2: rack 0 has 30 free, the others 32 */
    assert_int_equal(fs_cluster_take(&c, 1, 1, 1000, -1, &o[0]), 1);
    assert_int_equal(fs_cluster_take(&c, 2, 1, 1000, -1, &o[1]), 1);
    assert_int_equal(fs_cluster_take(&d, 1, 1, 1000, -1, &o[2]), 1);
    assert_int_equal(fs_cluster_take(&d, 2, 1, 1000, -1, &o[3]), 1);
    assert_int_equal(c.topo->unit_free[FS_TOPO_RACK][0], 30);
    /* topology: the rack that holds 24 with the fewest free (rack 0) */
    assert_int_equal(fs_cluster_alloc(&c, 0, 24, FS_PLACE_TOPOLOGY, &t), 1);
    fs_slice_t want[] = {{0, 8}, {3, 8}, {1, 7}, {2, 1}};
    assert_int_equal(t.n, 4);
    assert_memory_equal(t.many, want, sizeof want);
    fs_span_t sp;
    assert_int_equal(fs_cluster_span(&c, &t, &sp), 0);
    assert_int_equal(sp.nodes, 4);
    assert_int_equal(sp.racks, 1);
    assert_int_equal(sp.leaves, 1);
    /* pack: the emptiest nodes first, across racks */
    assert_int_equal(fs_cluster_alloc(&d, 0, 24, FS_PLACE_PACK, &p), 1);
    assert_int_equal(fs_cluster_span(&d, &p, &sp), 0);
    assert_int_equal(sp.nodes, 3);
    assert_int_equal(sp.racks, 2);
    /* a gang larger than a leaf spans two leaves, taking the emptiest first */
    fs_placement_t big;
    assert_int_equal(fs_cluster_alloc(&c, 0, 70, FS_PLACE_TOPOLOGY, &big), 1);
    assert_int_equal(fs_cluster_span(&c, &big, &sp), 0);
    assert_int_equal(sp.leaves, 2);
    assert_int_equal(sp.racks, 3);          /* leaf 1 whole (64), then 6 in rack 0 */
    assert_int_equal(c.topo->unit_free[FS_TOPO_SPINE][0], 128 - 2 - 24 - 70);
    fs_cluster_free(&c, &big);
    fs_cluster_free(&c, &t);
    fs_cluster_free(&c, &o[0]);
    fs_cluster_free(&c, &o[1]);
    assert_int_equal(c.topo->unit_free[FS_TOPO_SPINE][0], 128);
    assert_int_equal(c.topo->unit_free[FS_TOPO_RACK][0], 32);
    /* down nodes leave their units */
    fs_cluster_set_up(&c, 5, 0);
    assert_int_equal(c.topo->unit_free[FS_TOPO_RACK][1], 24);
    fs_cluster_set_up(&c, 5, 1);
    assert_int_equal(c.topo->unit_free[FS_TOPO_RACK][1], 32);
    fs_placement_release(&big);
    fs_placement_release(&t);
    fs_placement_release(&p);
    fs_cluster_release(&c);
    fs_cluster_release(&d);
    /* NVLink domains of 16 GPUs (2 nodes): a 16-GPU gang fills one */
    cc.topology.nvlink_domain = "16";
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    assert_int_equal(c.topo->n_units[FS_TOPO_DOMAIN], 8);
    assert_int_equal(fs_cluster_take(&c, 0, 1, 1000, -1, &o[0]), 1);
    assert_int_equal(fs_cluster_alloc(&c, 0, 16, FS_PLACE_TOPOLOGY, &t), 1);
    assert_int_equal(fs_cluster_span(&c, &t, &sp), 0);
    assert_int_equal(sp.domains, 1);
    assert_int_equal(t.many[0].node, 2);
    fs_placement_release(&t);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_topology_errors(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[1] = {{"gb", "B200", 36, 4, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t c;
    fs_error_t err;
    cc.topology.nvlink_domain = "nvl";
    assert_int_equal(fs_cluster_init(&c, &cc, &err), FS_EINVAL);
    assert_string_equal(err.msg, "cluster.topology.nvlink_domain: 'nvl' is not 'node' or a number "
                                 "of GPUs (1 to 1048576)");
    cc.topology.nvlink_domain = "6";
    assert_int_equal(fs_cluster_init(&c, &cc, &err), FS_EINVAL);
    assert_string_equal(err.msg, "cluster.topology.nvlink_domain: 6 GPUs is not a multiple of pool "
                                 "'gb''s 4 GPUs per node");
    cc.topology.nvlink_domain = "72";
    cc.topology.nodes_per_rack = 9;
    assert_int_equal(fs_cluster_init(&c, &cc, &err), FS_EINVAL);
    assert_string_equal(err.msg, "cluster.topology.nodes_per_rack: 9 nodes do not hold whole "
                                 "NVLink domains of 18 nodes (pool 'gb')");
    cc.topology.nodes_per_rack = 0;     /* NVL72: a rack is one domain of 18 trays */
    assert_int_equal(fs_cluster_init(&c, &cc, &err), 0);
    assert_int_equal(c.topo->n_units[FS_TOPO_DOMAIN], 2);
    assert_int_equal(c.topo->n_units[FS_TOPO_RACK], 2);
    fs_cluster_release(&c);
    for (uint64_t n = 1; n < 40; n++) {     /* allocation failures are clean */
        fs_alloc_fail_after(n);
        int rc = fs_cluster_init(&c, &cc, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            fs_cluster_release(&c);
            break;
        }
        assert_int_equal(rc, FS_ENOMEM);
        assert_int_equal(fs_alloc_live(), live0);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- random ------------------------------------------------------------------------ */

static void test_random_uniform_and_keyed(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[1] = {{"a", "H100", 5, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placer_t *pl, *same, *other;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_RANDOM, 0, &cc, 42, 0, &pl, NULL), 0);
    assert_int_equal(fs_placer_create(&c, FS_PLACE_RANDOM, 0, &cc, 42, 0, &same, NULL), 0);
    assert_int_equal(fs_placer_create(&c, FS_PLACE_RANDOM, 0, &cc, 43, 0, &other, NULL), 0);
    /* node 4 is full: the other four share 4,000 draws */
    fs_placement_t full, x;
    assert_int_equal(fs_cluster_take(&c, 4, 8, 1000, -1, &full), 1);
    uint32_t cnt[5] = {0};
    int diff = 0;
    for (int i = 0; i < 4000; i++) {
        assert_int_equal(fs_placer_place(pl, &c, NULL, 0, 2, 1000, &x), 1);
        cnt[x.one.node]++;
        uint32_t n1 = x.one.node;
        fs_cluster_free(&c, &x);
        assert_int_equal(fs_placer_place(same, &c, NULL, 0, 2, 1000, &x), 1);
        assert_int_equal(x.one.node, n1);
        fs_cluster_free(&c, &x);
        assert_int_equal(fs_placer_place(other, &c, NULL, 0, 2, 1000, &x), 1);
        diff += x.one.node != n1;
        fs_cluster_free(&c, &x);
    }
    assert_int_equal(cnt[4], 0);
    for (int v = 0; v < 4; v++)  /* binomial(4000, 1/4): sd 27 */
        assert_true(cnt[v] > 880 && cnt[v] < 1120);
    assert_true(diff > 2500);
    /* only node 2 fits 8: found when every probe misses */
    fs_placement_t h[3];
    assert_int_equal(fs_cluster_take(&c, 0, 1, 1000, -1, &h[0]), 1);
    assert_int_equal(fs_cluster_take(&c, 1, 1, 1000, -1, &h[1]), 1);
    assert_int_equal(fs_cluster_take(&c, 3, 1, 1000, -1, &h[2]), 1);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(fs_placer_place(pl, &c, NULL, 0, 8, 1000, &x), 1);
        assert_int_equal(x.one.node, 2);
        fs_cluster_free(&c, &x);
    }
    fs_placer_destroy(pl);
    fs_placer_destroy(same);
    fs_placer_destroy(other);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- speed factors ------------------------------------------------------------------- */

static void test_speed(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2] = {{"h", "H100", 1, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}, {"a", "A100", 1, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_speed_cfg_t rows[2] = {{1, "a100", 0.4}, {2, "h", 1.5}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 2);
    cc.speed = rows;
    cc.n_speed = 2;
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_PACK, 0, &cc, 1, 0, &pl, NULL), 0);
    assert_true(fs_placer_speed(pl, 1, 1) == 0.4);
    assert_true(fs_placer_speed(pl, 0, 1) == 1.0);
    assert_true(fs_placer_speed(pl, 1, 0) == 1.0);
    assert_true(fs_placer_speed(pl, 0, 2) == 1.5);  /* by pool name */
    fs_placer_destroy(pl);
    cc.speed_catalog = 1;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_PACK, 0, &cc, 1, 0, &pl, NULL), 0);
    assert_true(fs_placer_speed(pl, 1, 0) == fs_catalog_get((size_t)fs_catalog_find("A100"))->speed);
    assert_true(fs_placer_speed(pl, 1, 1) == 0.4);
    fs_placer_destroy(pl);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- through the run model ------------------------------------------------------------ */

typedef struct mrows {
    fs_job_row_t r[8];
    size_t n;
} mrows_t;

static int mcollect(void *ud, const fs_job_row_t *row)
{
    mrows_t *rs = ud;
    if (rs->n < 8)
        rs->r[rs->n++] = *row;
    return 0;
}

/* Two halves of one A100 run side by side; the class-1 half runs at the
 * A100 speed factor 0.5; a whole-GPU job then goes to the H100 pool. */
static void test_model_fractional_and_speed(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2] = {{"h", "H100", 1, 1, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}, {"a", "A100", 1, 1, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_speed_cfg_t rows[1] = {{1, "A100", 0.5}};
    fs_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.cluster.pools = pools;
    cfg.cluster.n_pools = 2;
    cfg.cluster.speed = rows;
    cfg.cluster.n_speed = 1;
    cfg.horizon = FS_TIME_MAX_INPUT;
    cfg.until = FS_UNTIL_DRAIN;
    cfg.scheduler.placement = FS_PLACE_FGD;
    cfg.scheduler.candidates = 100;
    fs_job_t jobs[3];
    for (int i = 0; i < 3; i++) {
        fs_job_init(&jobs[i]);
        jobs[i].id = (uint64_t)i + 1;
        jobs[i].gpu_milli = 500;
        jobs[i].gpu_type = 0;
        jobs[i].duration = 10 * FS_US_PER_S;
    }
    jobs[0].job_class = 1;
    jobs[2].submit = 1 * FS_US_PER_S;
    jobs[2].gpu_milli = 1000;
    jobs[2].gpu_type = -1;
    jobs[2].duration = 4 * FS_US_PER_S;
    const char *types[] = {"A100"};
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, 3, NULL, 0, types, 1, &src, &err), 0);
    static mrows_t rs;
    rs.n = 0;
    fs_sink_t sink = {.job = mcollect, .ud = &rs};
    fs_run_totals_t t;
    assert_int_equal(fs_model_create(&cfg, fs_policy_select(&cfg.scheduler),
                                     src, &sink, &m, &err), 0);
    assert_int_equal(fs_model_run(m, NULL, NULL, &err), 0);
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    fs_test_check_capstates(&t);
    fs_model_destroy(m);
    fs_source_destroy(src);
    assert_int_equal(rs.n, 3);
    for (size_t i = 0; i < 3; i++) {
        const fs_job_row_t *r = &rs.r[i];
        if (r->id == 1) {       /* half an A100 at speed 0.5: 20 s */
            assert_int_equal(r->pool, 1);
            assert_double_equal(r->start, 0, 0);
            assert_double_equal(r->end, 20, 0);
        } else if (r->id == 2) {
            assert_int_equal(r->pool, 1);
            assert_double_equal(r->start, 0, 0);
            assert_double_equal(r->end, 10, 0);
        } else {                /* the A100 is shared: the whole-GPU job takes the H100 */
            assert_int_equal(r->pool, 0);
            assert_double_equal(r->start, 1, 0);
            assert_double_equal(r->end, 5, 0);
        }
    }
    /* useful GPU-s: 0.5 x 10 + 0.5 x 10 + 1 x 4 */
    assert_double_equal(t.gpu_s_useful, 14, 1e-9);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- scenario keys ------------------------------------------------------------------- */

#define SCN_PLACE                                                                           \
    "name: t\n"                                                                             \
    "cluster:\n"                                                                            \
    "  pools:\n"                                                                            \
    "    - {name: h, gpu: H100, nodes: 16, gpus_per_node: 8}\n"                             \
    "    - {name: a, gpu: A100, nodes: 4, gpus_per_node: 8}\n"                              \
    "  topology: {nvlink_domain: 16, nodes_per_rack: 4, racks_per_leaf: 2}\n"               \
    "  speed:\n"                                                                            \
    "    - {class: 1, gpu: A100, factor: 0.4}\n"                                            \
    "    - {gpu: h, factor: 1.5}\n"                                                         \
    "  speed_catalog: true\n"                                                               \
    "workload:\n"                                                                           \
    "  synthetic:\n"                                                                        \
    "    arrivals: {rate: 1/h}\n"                                                           \
    "    gpus: {1: 1.0}\n"                                                                  \
    "    duration: {dist: exponential, mean: 1h}\n"                                         \
    "scheduler: {placement: binpack, candidates: 7}\n"

/* kube-scheduler's numFeasibleNodesToFind (pkg/scheduler/schedule_one.go): every node below
 * 100; else nodes x percentage / 100 with percentage 0 adaptive (50 - nodes / 125, at least 5),
 * at least 100 nodes. */
static void test_kube_nodes_to_find(void **s)
{
    (void)s;
    static const uint32_t cases[][3] = {
        {50, 0, 50},     {99, 0, 99},      {100, 0, 100},   {150, 0, 100},   {500, 0, 230},
        {1000, 0, 420},  {1213, 0, 497},   {5000, 0, 500},  {10000, 0, 500}, {20000, 0, 1000},
        {1000, 10, 100}, {1000, 30, 300},  {1000, 100, 1000}, {99, 10, 99},  {6000, 1, 100}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (fs_kube_nodes_to_find(cases[i][0], cases[i][1]) != cases[i][2])
            fail_msg("%u nodes, %u%%: %u, expected %u", cases[i][0], cases[i][1],
                     fs_kube_nodes_to_find(cases[i][0], cases[i][1]), cases[i][2]);
}

/* node_score kubernetes on 200 empty 8-GPU nodes, best_fit (MostAllocated): 100 nodes are
 * filtered per pod (200 x 49% = 98, at least 100) from a round-robin start.  Pod 1 searches
 * nodes 0-99 (all tie: one of them); pod 2 searches 100-199, so it cannot join pod 1 and lands
 * on one of those; pod 3 searches 0-99 again and joins pod 1 (the fullest there).  With
 * percentage 100 pod 2 joins pod 1 at once. */
static void test_kube_percentage_round_robin(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[1] = {{.name = "a", .gpu = "H100", .nodes = 200, .gpus_per_node = 8}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    for (uint64_t seed = 1; seed <= 5; seed++) {
        fs_cluster_t c;
        assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
        fs_placer_t *pl;
        assert_int_equal(fs_placer_create(&c, FS_PLACE_BEST_FIT, 0, &cc, seed, 0, &pl, NULL), 0);
        fs_placer_set_scoring(pl, FS_SCORE_KUBE, 1, 0, 0);
        fs_placer_set_kube(pl, 0, 0);
        fs_podreq_t q = {1, 1000, 0, 0};
        fs_placement_t a, b, d;
        assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &q, &a), 1);
        assert_true(a.one.node < 100);
        assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &q, &b), 1);
        assert_true(b.one.node >= 100 && b.one.node < 200);
        assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &q, &d), 1);
        assert_int_equal(d.one.node, a.one.node);
        fs_cluster_free(&c, &a);
        fs_cluster_free(&c, &b);
        fs_cluster_free(&c, &d);
        /* percentage 100: every node is scored, the second pod joins the first */
        fs_placer_set_kube(pl, 100, 0);
        assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &q, &a), 1);
        assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &q, &b), 1);
        assert_int_equal(b.one.node, a.one.node);
        fs_cluster_free(&c, &a);
        fs_cluster_free(&c, &b);
        fs_placer_destroy(pl);
        fs_cluster_release(&c);
    }
    /* nodes that fail the filter count as searched: a pod allowed only in pool b (nodes
     * 150-299 of 300; 300 x (50 - 2)% = 144 to find) searches from 0, finds 144 of b's nodes
     * by node 293; the next search starts at 294 */
    fs_pool_cfg_t two[2] = {{.name = "a", .gpu = "H100", .nodes = 150, .gpus_per_node = 8},
                            {.name = "b", .gpu = "H100", .nodes = 150, .gpus_per_node = 8}};
    make_cfg(&cc, two, 2);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_SPREAD, 0, &cc, 3, 0, &pl, NULL), 0);
    fs_placer_set_scoring(pl, FS_SCORE_KUBE, 1, 0, 0);
    fs_placer_set_kube(pl, 0, 0);
    const uint32_t only_b = 1;
    fs_podreq_t q = {1, 1000, 0, 0};
    fs_placement_t a, b;
    assert_int_equal(fs_placer_place_pod(pl, &c, &only_b, 1, &q, &a), 1);
    assert_true(a.one.node >= 150 && a.one.node < 294);
    /* the next search: 294-299 (6 of b), then 0-149 (a: filtered out), then 150-287 (138
     * more of b); spread (LeastAllocated) avoids the node with the first pod */
    assert_int_equal(fs_placer_place_pod(pl, &c, &only_b, 1, &q, &b), 1);
    assert_true(b.one.node >= 150 && b.one.node != a.one.node);
    assert_true(b.one.node >= 294 || b.one.node < 288);
    fs_cluster_free(&c, &a);
    fs_cluster_free(&c, &b);
    fs_placer_destroy(pl);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* NodeResourcesBalancedAllocation beside MostAllocated (GPU and CPU weighted 1): node 0 holds
 * 1 GPU and 8 of 16 cores, node 1 holds 3 GPUs and 4 cores.  A 1-GPU pod with no CPU: fit
 * (MostAllocated) scores node 0 (2/4, 8/16) 50 and node 1 (4/4, 4/16) 62.5, so best_fit
 * takes node 1; balanced scores node 0 100 (shares equal) and node 1 (1 - |1 - 0.25| / 2) x
 * 100 = 62.5, so with weight 1 node 0 wins (150 against 125); under integer scores too. */
static void test_balanced_allocation(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[1] = {
        {.name = "a", .gpu = "H100", .nodes = 2, .gpus_per_node = 4, .cpu_milli = 16000}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    for (int score = FS_SCORE_EXACT; score <= FS_SCORE_KUBE; score++)
        for (int bal = 0; bal <= 1; bal++) {
            fs_cluster_t c;
            assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
            fs_placer_t *pl;
            assert_int_equal(fs_placer_create(&c, FS_PLACE_BEST_FIT, 0, &cc, 1, 0, &pl, NULL), 0);
            fs_placer_set_scoring(pl, score, 1, 1, 0);
            fs_placer_set_kube(pl, 0, bal);
            fs_podreq_t q0 = {1, 1000, 8000, 0}, q1 = {3, 1000, 4000, 0}, q = {1, 1000, 0, 0};
            fs_placement_t p0, p1, p;
            assert_int_equal(fs_cluster_take_pod(&c, 0, &q0, -1, &p0), 1);
            assert_int_equal(fs_cluster_take_pod(&c, 1, &q1, -1, &p1), 1);
            assert_int_equal(fs_placer_place_pod(pl, &c, NULL, 0, &q, &p), 1);
            if (p.one.node != (uint32_t)(bal ? 0 : 1))
                fail_msg("node_score %d, balanced %d: node %u", score, bal, p.one.node);
            fs_cluster_free(&c, &p);
            fs_cluster_free(&c, &p1);
            fs_cluster_free(&c, &p0);
            fs_placer_destroy(pl);
            fs_cluster_release(&c);
        }
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_scenario_keys(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_config_t c;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_string("t.yaml", SCN_PLACE, NULL, 0, &c, &err), 0);
    assert_string_equal(c.cluster.topology.nvlink_domain, "16");
    assert_int_equal(c.cluster.topology.nodes_per_rack, 4);
    assert_int_equal(c.cluster.topology.racks_per_leaf, 2);
    assert_int_equal(c.cluster.topology.leaves_per_spine, 0);
    assert_int_equal(c.cluster.n_speed, 2);
    assert_int_equal(c.cluster.speed[0].job_class, 1);
    assert_string_equal(c.cluster.speed[0].gpu, "A100");
    assert_true(c.cluster.speed[0].factor == 0.4);
    assert_int_equal(c.cluster.speed[1].job_class, 0);
    assert_int_equal(c.cluster.speed_catalog, 1);
    assert_int_equal(c.scheduler.placement, FS_PLACE_BINPACK);
    assert_int_equal(c.scheduler.candidates, 7);
    fs_cluster_t cl;
    assert_int_equal(fs_cluster_init(&cl, &c.cluster, &err), 0);
    assert_int_equal(cl.topo->n_units[FS_TOPO_DOMAIN], 10);     /* 8 + 2 */
    assert_int_equal(cl.topo->n_units[FS_TOPO_LEAF], 3);        /* 2 + 1 */
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(&cl, c.scheduler.placement, c.scheduler.candidates, &c.cluster,
                                      c.seed, 0, &pl, &err), 0);
    assert_true(fs_placer_speed(pl, 1, 1) == 0.4);
    assert_true(fs_placer_speed(pl, 0, 0) == 1.5);
    assert_true(fs_placer_speed(pl, 1, 0) == fs_catalog_get((size_t)fs_catalog_find("A100"))->speed);
    fs_placer_destroy(pl);
    fs_cluster_release(&cl);
    /* the dump reads back the same */
    char *d = fs_scenario_dump(&c);
    assert_non_null(d);
    assert_non_null(strstr(d, "nvlink_domain: \"16\"") ? d : strstr(d, "nvlink_domain: 16"));
    fs_config_t c2;
    assert_int_equal(fs_scenario_load_string("dump.yaml", d, NULL, 0, &c2, &err), 0);
    assert_int_equal(c2.cluster.n_speed, 2);
    assert_true(c2.cluster.speed[0].factor == 0.4);
    assert_int_equal(c2.scheduler.placement, FS_PLACE_BINPACK);
    fs_config_release(&c2);
    fs_free(d);
    fs_config_release(&c);
    /* errors: file:line:col */
    const char *o[] = {"scheduler.placement=tetris"};
    assert_int_equal(fs_scenario_load_string("t.yaml", SCN_PLACE, o, 1, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "'tetris' is not one of: pack, first_fit, best_fit, binpack, "
                                    "spread, random, topology, fgd"));
    const char *o2[] = {"cluster.speed.0.factor=0"};
    assert_int_equal(fs_scenario_load_string("t.yaml", SCN_PLACE, o2, 1, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "0 is out of range"));
    char bad[2048];
    snprintf(bad, sizeof bad, "%s", SCN_PLACE);
    char *f = strstr(bad, "factor: 0.4");
    memcpy(f, "factor: -1 ", 11);
    assert_int_equal(fs_scenario_load_string("t.yaml", bad, NULL, 0, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:8:"));
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_slow_pack),
        cmocka_unit_test(test_fast_slow_first_fit),
        cmocka_unit_test(test_fast_slow_best_fit),
        cmocka_unit_test(test_fast_slow_binpack),
        cmocka_unit_test(test_fast_slow_spread),
        cmocka_unit_test(test_fast_slow_random),
        cmocka_unit_test(test_fast_slow_topology),
        cmocka_unit_test(test_fast_slow_fgd),
        cmocka_unit_test(test_fast_slow_fgd_all),
        cmocka_unit_test(test_best_fit_is_pack_for_whole_gpus),
        cmocka_unit_test(test_fgd_matches_definition),
        cmocka_unit_test(test_fgd_cpu_matches_definition),
        cmocka_unit_test(test_fgd_online_weights),
        cmocka_unit_test(test_pods_cpu_hand),
        cmocka_unit_test(test_pods_alloc_failures),
        cmocka_unit_test(test_best_fit_brute),
        cmocka_unit_test(test_spread_brute),
        cmocka_unit_test(test_fgd_avoids_fragment),
        cmocka_unit_test(test_gpu_packing_and_first_fit),
        cmocka_unit_test(test_spread_and_best_fit),
        cmocka_unit_test(test_topology),
        cmocka_unit_test(test_topology_errors),
        cmocka_unit_test(test_random_uniform_and_keyed),
        cmocka_unit_test(test_speed),
        cmocka_unit_test(test_model_fractional_and_speed),
        cmocka_unit_test(test_scenario_keys),
        cmocka_unit_test(test_kube_nodes_to_find),
        cmocka_unit_test(test_kube_percentage_round_robin),
        cmocka_unit_test(test_balanced_allocation),
        cmocka_unit_test(test_fabric_aware_without_net_is_topology),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
