/*
 * Cluster and placement: the indexed queries (segment tree of free-level
 * masks) choose exactly the nodes that a naive scan chooses, on random
 * alloc/free/down/up sequences, for one-word and multi-word masks; plus
 * hand-checked placements for pack and first fit.
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

static void random_equivalence(uint32_t gpn, uint32_t nodes, uint64_t seed)
{
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2] = {{"a", "H100", nodes, gpn}, {"b", "A100", nodes / 2 + 1, gpn}};
    fs_cluster_cfg_t cc;
    make_cfg(&cc, pools, 2);
    fs_cluster_t fast, slow;
    fs_error_t err;
    assert_int_equal(fs_cluster_init(&fast, &cc, &err), 0);
    assert_int_equal(fs_cluster_init(&slow, &cc, &err), 0);
    slow.use_index = 0;
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, seed, 0, FS_RNG_PLACE, 0), 0);

    enum { MAXJ = 4096 };
    static fs_placement_t pf[MAXJ], ps[MAXJ];
    size_t nj = 0;
    for (int op = 0; op < 20000; op++) {
        double u = fs_rng_uniform(&r);
        if (u < 0.55 && nj < MAXJ) {
            uint32_t pool = (uint32_t)gsl_rng_uniform_int(r.g, 2);
            uint32_t g = 1 + (uint32_t)gsl_rng_uniform_int(r.g, fs_rng_uniform(&r) < 0.7 ? gpn : 3 * gpn);
            int place = fs_rng_uniform(&r) < 0.5 ? FS_PLACE_PACK : FS_PLACE_FIRST_FIT;
            int bf = brute_fits(&fast, pool, g);
            assert_int_equal(fs_cluster_fits(&fast, pool, g), bf);
            assert_int_equal(fs_cluster_fits(&slow, pool, g), bf);
            int a = fs_cluster_alloc(&fast, pool, g, place, &pf[nj]);
            int b = fs_cluster_alloc(&slow, pool, g, place, &ps[nj]);
            assert_int_equal(a, b);
            assert_int_equal(a, bf);
            if (a == 1) {
                assert_int_equal(pf[nj].n, ps[nj].n);
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
            uint32_t node = (uint32_t)gsl_rng_uniform_int(r.g, fast.n_nodes);
            int up = fs_rng_uniform(&r) < 0.6;
            fs_cluster_set_up(&fast, node, up);
            fs_cluster_set_up(&slow, node, up);
        }
        check_same(&fast, &slow);
    }
    for (size_t k = 0; k < nj; k++) {
        fs_cluster_free(&fast, &pf[k]);
        fs_cluster_free(&slow, &ps[k]);
        fs_placement_release(&pf[k]);
        fs_placement_release(&ps[k]);
    }
    assert_int_equal(fast.gpus_busy, 0);
    fs_rng_release(&r);
    fs_cluster_release(&fast);
    fs_cluster_release(&slow);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_equiv_gpn8(void **s) { (void)s; random_equivalence(8, 37, 1); }
static void test_equiv_gpn1(void **s) { (void)s; random_equivalence(1, 64, 2); }
static void test_equiv_gpn72(void **s) { (void)s; random_equivalence(72, 19, 3); }   /* 2-word masks */
static void test_equiv_gpn128(void **s) { (void)s; random_equivalence(128, 9, 4); }  /* level 128 in word 2 */
static void test_equiv_one_node(void **s) { (void)s; random_equivalence(4, 1, 5); }

static void test_pack_best_fit(void **s)
{
    (void)s;
    fs_pool_cfg_t pools[1] = {{"a", "H100", 4, 8}};
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
    fs_pool_cfg_t pools[1] = {{"a", "H100", 3, 4}};
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
    fs_pool_cfg_t pools[1] = {{"a", "H100", 4, 8}};
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
        cmocka_unit_test(test_pack_best_fit),
        cmocka_unit_test(test_first_fit_spreads_in_order),
        cmocka_unit_test(test_alloc_failure_is_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
