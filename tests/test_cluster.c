/*
 * Cluster and placement: the indexed queries (per-level hierarchical
 * bitsets of nodes) choose exactly the nodes that a naive scan chooses, on
 * random alloc/free/share/down/up sequences, for one-word and multi-word
 * level masks and for bitsets of 1 to 4 layers (node counts across 64,
 * 4096 and 262144); the index itself is checked bit by bit against its
 * definition; plus hand-checked placements for pack and first fit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "models/fs_cluster.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"

static void make_cfg(fs_cluster_cfg_t *cc, fs_pool_cfg_t *pools, size_t n)
{
    memset(cc, 0, sizeof *cc);
    cc->pools = pools;
    cc->n_pools = n;
}

static void check_same(const fs_cluster_t *a, const fs_cluster_t *b)
{
    assert_int_equal(a->n_nodes, b->n_nodes);
    assert_memory_equal(a->node_free, b->node_free, a->n_nodes * sizeof *a->node_free);
    assert_memory_equal(a->node_up, b->node_up, a->n_nodes * sizeof *a->node_up);
    assert_int_equal(a->gpus_busy, b->gpus_busy);
    assert_int_equal(a->gpus_up, b->gpus_up);
    for (uint32_t p = 0; p < a->n_pools; p++)
        assert_int_equal(a->pools[p].gpus_free, b->pools[p].gpus_free);
}

/* Brute-force fits: what the definition says, from node_free alone. */
static int brute_fits(const fs_cluster_t *c, uint32_t pool, uint32_t g)
{
    const fs_pool_t *p = &c->pools[pool];
    uint64_t total = 0;
    uint32_t maxf = 0;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n]) {
            total += c->node_free[n];
            if (c->node_free[n] > maxf)
                maxf = c->node_free[n];
        }
    return g <= p->gpn ? maxf >= g : total >= g;
}

/* The index against its definition, word by word: for each level L the
 * bottom layer is exactly the up nodes with node_free == L, every upper
 * bit says "that word below is non-zero", nothing beyond the ends is set,
 * the root mask and max_level follow, and node_lvl says where a node is. */
static void check_index(const fs_cluster_t *c)
{
    for (uint32_t pi = 0; pi < c->n_pools; pi++) {
        const fs_pool_t *p = &c->pools[pi];
        uint32_t leafw = p->hn[p->hdepth - 1];
        assert_int_equal(p->hn[0], 1);
        assert_int_equal(leafw, (p->n_nodes + 63) / 64);
        uint64_t *want = test_calloc((size_t)(p->gpn + 1) * leafw, sizeof *want);
        for (uint32_t x = 0; x < p->n_nodes; x++) {
            uint32_t n = p->first_node + x;
            uint32_t lv = c->node_up[n] ? c->node_free[n] : FS_CLUSTER_NOLVL;
            assert_int_equal(c->node_lvl[n], lv);
            if (lv != FS_CLUSTER_NOLVL)
                want[(size_t)lv * leafw + x / 64] |= UINT64_C(1) << (x % 64);
        }
        int32_t maxl = -1;
        for (uint32_t L = 0; L <= p->gpn; L++) {
            const uint64_t *b = p->lset + (size_t)L * p->hwords;
            assert_memory_equal(b + p->hoff[p->hdepth - 1], want + (size_t)L * leafw,
                                leafw * sizeof *b);
            for (uint32_t d = 0; d + 1 < p->hdepth; d++)
                for (uint32_t w = 0; w < p->hn[d]; w++)
                    for (uint32_t bit = 0; bit < 64; bit++) {
                        uint32_t j = w * 64 + bit;
                        int below = j < p->hn[d + 1] && b[p->hoff[d + 1] + j] != 0;
                        assert_int_equal((b[p->hoff[d] + w] >> bit) & 1, below);
                    }
            int present = b[0] != 0;
            assert_int_equal((p->lroot[L / 64] >> (L % 64)) & 1, present);
            if (present)
                maxl = (int32_t)L;
        }
        for (uint32_t L = p->gpn + 1; L < 64 * p->rwords; L++)
            assert_int_equal((p->lroot[L / 64] >> (L % 64)) & 1, 0);
        assert_int_equal(p->max_level, maxl);
        test_free(want);
    }
}

/* Candidates for random requests (whole and fractional, k limits 0..5):
 * the indexed and linear paths list the same nodes. */
static void check_candidates(const fs_cluster_t *fast, const fs_cluster_t *slow, fs_rng_t *r)
{
    uint32_t pool = (uint32_t)gsl_rng_uniform_int(r->g, fast->n_pools);
    const fs_pool_t *p = &fast->pools[pool];
    uint32_t k = (uint32_t)gsl_rng_uniform_int(r->g, 6);
    int frac = fs_rng_uniform(r) < 0.25;
    uint32_t g = frac ? 1 : 1 + (uint32_t)gsl_rng_uniform_int(r->g, p->gpn);
    uint32_t milli = frac ? 1 + (uint32_t)gsl_rng_uniform_int(r->g, 999) : FS_GPU_MILLI_WHOLE;
    size_t cap = fs_cluster_candidates_cap(fast, pool, k);
    uint32_t *a = test_malloc(cap * sizeof *a), *b = test_malloc(cap * sizeof *b);
    size_t na = fs_cluster_candidates(fast, pool, g, milli, k, a);
    size_t nb = fs_cluster_candidates(slow, pool, g, milli, k, b);
    assert_int_equal(na, nb);
    if (na)
        assert_memory_equal(a, b, na * sizeof *a);
    test_free(a);
    test_free(b);
}

typedef struct equiv {
    uint32_t gpn, nodes;
    uint64_t seed;
    int ops;
    int sparse;     /* start with all but ~64 nodes down, toggle among those */
} equiv_t;

/* The nodes a sparse run keeps up or toggles: bitset word and layer
 * boundaries and random ones. */
static uint32_t sparse_node(const fs_cluster_t *c, fs_rng_t *r, uint32_t i)
{
    static const uint32_t edge[] = {0, 1, 63, 64, 65, 4095, 4096, 4097, 262143, 262144};
    if (i < sizeof edge / sizeof *edge && edge[i] < c->n_nodes)
        return edge[i];
    return (uint32_t)gsl_rng_uniform_int(r->g, c->n_nodes);
}

static void random_equivalence(const equiv_t *e)
{
    int64_t live0 = fs_alloc_live();
    uint32_t gpn = e->gpn, nodes = e->nodes;
    fs_pool_cfg_t pools[2] = {{"a", "H100", nodes, gpn, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}, {"b", "A100", nodes / 2 + 1, gpn, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 2);
    fs_cluster_t fast, slow;
    fs_error_t err;
    assert_int_equal(fs_cluster_init(&fast, &cc, &err), 0);
    assert_int_equal(fs_cluster_init(&slow, &cc, &err), 0);
    slow.use_index = 0;
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, e->seed, 0, FS_RNG_PLACE, 0), 0);
    check_index(&fast);
    if (e->sparse) {
        for (uint32_t n = 0; n < fast.n_nodes; n++) {
            fs_cluster_set_up(&fast, n, 0);
            fs_cluster_set_up(&slow, n, 0);
        }
        for (uint32_t i = 0; i < 64; i++) {
            uint32_t n = sparse_node(&fast, &r, i);
            fs_cluster_set_up(&fast, n, 1);
            fs_cluster_set_up(&slow, n, 1);
        }
        check_index(&fast);
    }
    /* the white-box check costs O(nodes): every op on small clusters */
    int every = 1 + (int)((uint64_t)nodes * (gpn + 1) / 4000);

    enum { MAXJ = 4096 };
    static fs_placement_t pf[MAXJ], ps[MAXJ];
    size_t nj = 0;
    for (int op = 0; op < e->ops; op++) {
        double u = fs_rng_uniform(&r);
        if (u < 0.55 && nj < MAXJ) {
            uint32_t pool = (uint32_t)gsl_rng_uniform_int(r.g, 2);
            uint32_t g = 1 + (uint32_t)gsl_rng_uniform_int(r.g, fs_rng_uniform(&r) < 0.7 ? gpn : 3 * gpn);
            int place = fs_rng_uniform(&r) < 0.5 ? FS_PLACE_PACK : FS_PLACE_FIRST_FIT;
            uint32_t milli = FS_GPU_MILLI_WHOLE;
            if (fs_rng_uniform(&r) < 0.15) {    /* a share of one GPU */
                g = 1;
                milli = 1 + (uint32_t)gsl_rng_uniform_int(r.g, 999);
            }
            int bf = milli == FS_GPU_MILLI_WHOLE ? brute_fits(&fast, pool, g) : -1;
            if (bf >= 0) {
                assert_int_equal(fs_cluster_fits(&fast, pool, g), bf);
                assert_int_equal(fs_cluster_fits(&slow, pool, g), bf);
            }
            assert_int_equal(fs_cluster_fits_req(&fast, pool, g, milli),
                             fs_cluster_fits_req(&slow, pool, g, milli));
            int a = fs_cluster_alloc_req(&fast, pool, g, milli, place, &pf[nj]);
            int b = fs_cluster_alloc_req(&slow, pool, g, milli, place, &ps[nj]);
            assert_int_equal(a, b);
            if (bf >= 0)
                assert_int_equal(a, bf);
            if (a == 1) {
                assert_int_equal(pf[nj].n, ps[nj].n);
                assert_int_equal(pf[nj].gpu, ps[nj].gpu);
                assert_memory_equal(fs_placement_slices(&pf[nj]), fs_placement_slices(&ps[nj]),
                                    pf[nj].n * sizeof(fs_slice_t));
                uint32_t sum = 0;
                for (uint32_t i = 0; i < pf[nj].n; i++)
                    sum += fs_placement_slices(&pf[nj])[i].gpus;
                assert_int_equal(sum, g); /* gang: all of it */
                nj++;
            }
        } else if (u < 0.95 && nj > 0) {
            size_t k = gsl_rng_uniform_int(r.g, nj);
            fs_cluster_free(&fast, &pf[k]);
            fs_cluster_free(&slow, &ps[k]);
            fs_placement_release(&pf[k]);
            fs_placement_release(&ps[k]);
            pf[k] = pf[nj - 1];
            ps[k] = ps[nj - 1];
            nj--;
        } else {
            uint32_t node = e->sparse ? sparse_node(&fast, &r, (uint32_t)gsl_rng_uniform_int(r.g, 64))
                                      : (uint32_t)gsl_rng_uniform_int(r.g, fast.n_nodes);
            int up = fs_rng_uniform(&r) < 0.6;
            fs_cluster_set_up(&fast, node, up);
            fs_cluster_set_up(&slow, node, up);
        }
        check_same(&fast, &slow);
        if (op % every == 0) {
            check_index(&fast);
            check_candidates(&fast, &slow, &r);
        }
    }
    check_index(&fast);
    for (size_t k = 0; k < nj; k++) {
        fs_cluster_free(&fast, &pf[k]);
        fs_cluster_free(&slow, &ps[k]);
        fs_placement_release(&pf[k]);
        fs_placement_release(&ps[k]);
    }
    check_index(&fast);
    assert_int_equal(fast.gpus_busy, 0);
    assert_int_equal(fast.milli_busy, 0);
    fs_rng_release(&r);
    fs_cluster_release(&fast);
    fs_cluster_release(&slow);
    assert_int_equal(fs_alloc_live(), live0);
}

#define EQUIV(name, ...)                                               \
    static void name(void **s)                                         \
    {                                                                  \
        (void)s;                                                       \
        random_equivalence(&(equiv_t){__VA_ARGS__});                   \
    }
EQUIV(test_equiv_gpn8, 8, 37, 1, 20000, 0)
EQUIV(test_equiv_gpn1, 1, 64, 2, 20000, 0)
EQUIV(test_equiv_gpn72, 72, 19, 3, 20000, 0)    /* 2-word level masks */
EQUIV(test_equiv_gpn128, 128, 9, 4, 20000, 0)   /* level 128 in word 2 */
EQUIV(test_equiv_one_node, 4, 1, 5, 20000, 0)
EQUIV(test_equiv_65_nodes, 8, 65, 6, 20000, 0)  /* 2 layers; pool b: 33 nodes, 1 layer */
EQUIV(test_equiv_4097_nodes, 8, 4097, 7, 5000, 0)  /* 3 layers; pool b: 2049, 2 */
EQUIV(test_equiv_4097_gpn72, 72, 4097, 8, 3000, 1)  /* sparse: climbs to the top */
EQUIV(test_equiv_262145_nodes, 2, 262145, 9, 200, 1) /* 4 layers; pool b: 131073, 3 */

static void test_pack_best_fit(void **s)
{
    (void)s;
    fs_pool_cfg_t pools[1] = {{"a", "H100", 4, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placement_t p1, p2, p3, p4;
    /* node 0 gets 6 (2 left), node 1 gets 5 (3 left) */
    assert_int_equal(fs_cluster_alloc(&c, 0, 6, FS_PLACE_PACK, &p1), 1);
    assert_int_equal(p1.one.node, 0);
    assert_int_equal(fs_cluster_alloc(&c, 0, 5, FS_PLACE_PACK, &p2), 1);
    assert_int_equal(p2.one.node, 1);  /* best fit: node 0 has only 2 */
    /* 2 GPUs: best fit is node 0 (exactly 2 free), first fit too */
    assert_int_equal(fs_cluster_alloc(&c, 0, 2, FS_PLACE_PACK, &p3), 1);
    assert_int_equal(p3.one.node, 0);
    /* 3 GPUs: best fit node 1 (3 free) rather than empty node 2 */
    assert_int_equal(fs_cluster_alloc(&c, 0, 3, FS_PLACE_PACK, &p4), 1);
    assert_int_equal(p4.one.node, 1);
    assert_int_equal(c.node_free[0], 0);
    assert_int_equal(c.node_free[1], 0);
    /* a 12-GPU gang on two empty nodes: 8 + 4 */
    fs_placement_t p5;
    assert_int_equal(fs_cluster_alloc(&c, 0, 12, FS_PLACE_PACK, &p5), 1);
    assert_int_equal(p5.n, 2);
    assert_int_equal(p5.many[0].node, 2);
    assert_int_equal(p5.many[0].gpus, 8);
    assert_int_equal(p5.many[1].node, 3);
    assert_int_equal(p5.many[1].gpus, 4);
    /* now 4 GPUs free in all: a 5-GPU job does not fit, nothing changes */
    fs_placement_t p6;
    assert_int_equal(fs_cluster_fits(&c, 0, 5), 0);
    assert_int_equal(fs_cluster_alloc(&c, 0, 5, FS_PLACE_PACK, &p6), 0);
    assert_int_equal(c.gpus_busy, 28);
    fs_placement_t *all[] = {&p1, &p2, &p3, &p4, &p5};
    for (int i = 0; i < 5; i++) {
        fs_cluster_free(&c, all[i]);
        fs_placement_release(all[i]);
    }
    assert_int_equal(c.gpus_busy, 0);
    fs_cluster_release(&c);
}

static void test_first_fit_spreads_in_order(void **s)
{
    (void)s;
    fs_pool_cfg_t pools[1] = {{"a", "H100", 3, 4, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t c;
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placement_t a, b;
    assert_int_equal(fs_cluster_alloc(&c, 0, 1, FS_PLACE_FIRST_FIT, &a), 1);
    assert_int_equal(a.one.node, 0);
    /* 6 GPUs first fit: 3 from node 0, 3 from node 1 */
    assert_int_equal(fs_cluster_alloc(&c, 0, 6, FS_PLACE_FIRST_FIT, &b), 1);
    assert_int_equal(b.n, 2);
    assert_int_equal(b.many[0].node, 0);
    assert_int_equal(b.many[0].gpus, 3);
    assert_int_equal(b.many[1].node, 1);
    assert_int_equal(b.many[1].gpus, 3);
    /* down node 2: its GPUs leave the pool */
    fs_cluster_set_up(&c, 2, 0);
    assert_int_equal(c.pools[0].gpus_free, 1);
    assert_int_equal(fs_cluster_fits(&c, 0, 2), 0);
    assert_int_equal(fs_cluster_could_fit(&c, 0, 12), 1);
    assert_int_equal(fs_cluster_could_fit(&c, 0, 13), 0);
    fs_cluster_set_up(&c, 2, 1);
    assert_int_equal(fs_cluster_fits(&c, 0, 4), 1);
    fs_cluster_free(&c, &a);
    fs_cluster_free(&c, &b);
    fs_placement_release(&b);
    fs_cluster_release(&c);
}

static void test_alloc_failure_is_clean(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[1] = {{"a", "H100", 4, 8, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 0}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 1);
    fs_cluster_t c;
    for (uint64_t n = 1; n < 32; n++) {
        fs_alloc_fail_after(n);
        fs_error_t err;
        int rc = fs_cluster_init(&c, &cc, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            fs_cluster_release(&c);
            break;
        }
        assert_int_equal(rc, FS_ENOMEM);
        assert_int_equal(fs_alloc_live(), live0);
    }
    /* a multi-node gang whose slice array cannot be allocated: no change */
    assert_int_equal(fs_cluster_init(&c, &cc, NULL), 0);
    fs_placement_t p;
    fs_alloc_fail_after(1);
    assert_int_equal(fs_cluster_alloc(&c, 0, 16, FS_PLACE_PACK, &p), FS_ENOMEM);
    fs_alloc_fail_after(0);
    assert_int_equal(c.gpus_busy, 0);
    assert_int_equal(c.pools[0].gpus_free, 32);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equiv_gpn8),
        cmocka_unit_test(test_equiv_gpn1),
        cmocka_unit_test(test_equiv_gpn72),
        cmocka_unit_test(test_equiv_gpn128),
        cmocka_unit_test(test_equiv_one_node),
        cmocka_unit_test(test_equiv_65_nodes),
        cmocka_unit_test(test_equiv_4097_nodes),
        cmocka_unit_test(test_equiv_4097_gpn72),
        cmocka_unit_test(test_equiv_262145_nodes),
        cmocka_unit_test(test_pack_best_fit),
        cmocka_unit_test(test_first_fit_spreads_in_order),
        cmocka_unit_test(test_alloc_failure_is_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
