/*
 * Static MIG layouts in the run (issue 14, docs/mig.md "In the run"): a
 * pool's `mig` layout turns its GPUs into instances, pods asking a profile
 * (fs_job_t.mig) take instances, whole-GPU jobs never use such a pool.
 *   - by hand through the run model: a 7 x 1g GPU runs exactly 7 one-instance
 *     pods at once and queues the 8th until one ends (an A30, 4 compute
 *     slices: 4 and the 5th, each pod 250 milli); a 3g pod on an all-1g
 *     pool and a whole-GPU job on a MIG-only fleet are rejected (they can
 *     never fit); whole-GPU jobs and MIG pods in a mixed fleet each land in
 *     their own pool; a pod of k instances takes k on one node;
 *   - the cluster's instance bookkeeping under random takes and frees on a
 *     mixed layout (3g + 2g + 1g x 2, mig-parted's geometry from fs_mig):
 *     per GPU and profile the instances in use never exceed the layout, the
 *     counters equal a recount, and a full pool holds exactly mig_total;
 *   - the scenario loader: located errors (FILE:LINE:COL) for a bad layout
 *     token, a GPU model without MIG and an unknown profile name;
 *   - the same seed gives the same rows (synthetic MIG workload, twice).
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
#include <gsl/gsl_rng.h>

#include "fs_test_util.h"
#include "models/fs_cluster.h"
#include "models/fs_mig.h"
#include "models/fs_model.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"
#include "traces/fs_memsrc.h"
#include "traces/fs_synth.h"
#include "traces/fs_trace.h"

#define S(x) ((fs_time_t)((x) * 1e6))

static int32_t code(const char *name)
{
    int32_t c = fs_mig_code_find(name, strlen(name));
    assert_true(c > 0);
    return c;
}

static fs_job_t job(uint64_t id, double submit, uint32_t gpus, double dur, const char *mig)
{
    fs_job_t j;
    fs_job_init(&j);
    j.id = id;
    j.submit = S(submit);
    j.gpus = gpus;
    j.duration = S(dur);
    if (mig) {
        j.mig = code(mig);
        j.gpu_milli = fs_mig_code_milli(j.mig);
    }
    return j;
}

static void run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, fs_test_rows_t *rs)
{
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    fs_test_run_cfg(cfg, jobs, n, &sink, NULL);
}

/* One node of one H100, all-1g.10gb: 7 instances.  Eight 1-instance pods
 * at 0 s (10 s each): 7 start at 0, the 8th at 10.  Under FIFO and SJF. */
static void test_seven_then_queue(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const int queues[] = {FS_QUEUE_FIFO, FS_QUEUE_SJF, FS_QUEUE_PRIORITY};
    for (size_t q = 0; q < sizeof queues / sizeof queues[0]; q++) {
        fs_pool_cfg_t pool;
        fs_config_t cfg;
        static fs_test_rows_t rs;
        fs_test_base_cfg(&cfg, &pool, 1, 1, queues[q]);
        pool.mig = "all-1g.10gb";
        fs_job_t jobs[8];
        for (unsigned i = 0; i < 8; i++)
            jobs[i] = job(i + 1, 0, 1, 10, "1g.10gb");
        run(&cfg, jobs, 8, &rs);
        assert_int_equal(rs.n, 8);
        unsigned at0 = 0, at10 = 0;
        for (size_t i = 0; i < rs.n; i++) {
            assert_int_equal(rs.r[i].state, FS_STATE_COMPLETED);
            assert_int_equal(rs.r[i].pool, 0);
            assert_int_equal(rs.r[i].gpu_milli, 142);
            at0 += rs.r[i].start == 0;
            at10 += rs.r[i].start == 10;
        }
        if (at0 != 7)
            fail_msg("queue %d: %u pods started at 0 (expected 7)", queues[q], at0);
        assert_int_equal(at10, 1);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

/* The A30-24GB has 4 compute slices (docs/mig.md): all-1g.6gb is 4
 * instances, so five 1g.6gb pods at 0 s (10 s each) run 4 at 0 and the 5th
 * at 10, each a quarter of the GPU (gpu_milli 250, not 1000/7).  On
 * mig-parted's A30 all-balanced (2 x 1g.6gb + 2g.12gb) a 2g.12gb pod runs
 * at half the GPU (500); a 4g.24gb pod (the whole A30, not in that layout)
 * and a 3g pod (no A30 profile) never fit. */
static void test_a30_four_then_queue(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    fs_test_base_cfg(&cfg, &pool, 1, 1, FS_QUEUE_FIFO);
    pool.gpu = "A30-24GB";
    pool.mig = "all-1g.6gb";
    fs_job_t jobs[5];
    for (unsigned i = 0; i < 5; i++)
        jobs[i] = job(i + 1, 0, 1, 10, "1g.6gb");
    run(&cfg, jobs, 5, &rs);
    assert_int_equal(rs.n, 5);
    unsigned at0 = 0, at10 = 0;
    for (size_t i = 0; i < rs.n; i++) {
        assert_int_equal(rs.r[i].state, FS_STATE_COMPLETED);
        assert_int_equal(rs.r[i].gpu_milli, 250);
        at0 += rs.r[i].start == 0;
        at10 += rs.r[i].start == 10;
    }
    assert_int_equal(at0, 4);
    assert_int_equal(at10, 1);

    pool.mig = "all-balanced";
    fs_job_t mixed[] = {job(1, 0, 1, 10, "2g.12gb"), job(2, 0, 1, 10, "1g.6gb"), job(3, 0, 1, 10, "1g.6gb"),
                        job(4, 0, 1, 10, "2g.12gb"), job(5, 1, 1, 10, "4g.24gb"), job(6, 2, 1, 10, "3g.40gb")};
    run(&cfg, mixed, 6, &rs);
    assert_int_equal(rs.n, 6);
    assert_int_equal(fs_test_find(&rs, 1)->gpu_milli, 500);
    assert_true(fs_test_find(&rs, 1)->start == 0 && fs_test_find(&rs, 2)->start == 0 &&
                fs_test_find(&rs, 3)->start == 0);
    assert_true(fs_test_find(&rs, 4)->start == 10);   /* the one 2g.12gb instance was busy */
    assert_int_equal(fs_test_find(&rs, 5)->state, FS_STATE_REJECTED);
    assert_int_equal(fs_test_find(&rs, 6)->state, FS_STATE_REJECTED);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A 3g pod on an all-1g pool and a whole-GPU job on a MIG-only fleet can
 * never fit: rejected, not queued for ever; the 1g pod beside them runs. */
static void test_never_fits(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    fs_test_base_cfg(&cfg, &pool, 2, 8, FS_QUEUE_FIFO);
    pool.mig = "all-1g.10gb";
    fs_job_t jobs[] = {job(1, 0, 1, 10, "3g.40gb"), job(2, 1, 1, 10, NULL), job(3, 2, 1, 10, "1g.10gb"),
                       job(4, 3, 57, 10, "1g.10gb")};   /* 57 > 8 x 7 on one node */
    run(&cfg, jobs, 4, &rs);
    assert_int_equal(fs_test_find(&rs, 1)->state, FS_STATE_REJECTED);
    assert_int_equal(fs_test_find(&rs, 2)->state, FS_STATE_REJECTED);
    assert_int_equal(fs_test_find(&rs, 3)->state, FS_STATE_COMPLETED);
    assert_int_equal(fs_test_find(&rs, 4)->state, FS_STATE_REJECTED);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Pool "p" (MIG, listed first, so first fit would pick it) and pool "a"
 * (whole A100s): whole-GPU jobs and shares all run in "a", MIG pods in
 * "p"; a pod of 14 instances takes 2 GPUs' worth on one node, and a second
 * one waits for it (one node of 2 GPUs). */
static void test_pools_apart(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const int places[] = {FS_PLACE_PACK, FS_PLACE_FIRST_FIT, FS_PLACE_SPREAD, FS_PLACE_FGD};
    for (size_t k = 0; k < sizeof places / sizeof places[0]; k++) {
        fs_pool_cfg_t pools[2];
        fs_config_t cfg;
        static fs_test_rows_t rs;
        fs_test_base_cfg(&cfg, &pools[0], 1, 2, FS_QUEUE_FIFO);
        fs_test_add_a100(&cfg, pools, 2);
        pools[0].mig = "all-1g.10gb";
        cfg.scheduler.placement = places[k];
        fs_job_t jobs[] = {job(1, 0, 1, 10, NULL), job(2, 0, 2, 10, NULL), job(3, 0, 14, 10, "1g.10gb"),
                           job(4, 1, 1, 10, "1g.10gb"), job(5, 2, 1, 10, NULL)};
        jobs[4].gpu_milli = 500;
        run(&cfg, jobs, 5, &rs);
        for (uint64_t id = 1; id <= 5; id++)
            assert_int_equal(fs_test_find(&rs, id)->state, FS_STATE_COMPLETED);
        assert_int_equal(fs_test_find(&rs, 1)->pool, 1);
        assert_int_equal(fs_test_find(&rs, 2)->pool, 1);
        assert_int_equal(fs_test_find(&rs, 5)->pool, 1);
        assert_int_equal(fs_test_find(&rs, 3)->pool, 0);
        assert_int_equal(fs_test_find(&rs, 3)->nodes, 1);
        assert_int_equal(fs_test_find(&rs, 3)->gpu_milli, 142);
        assert_double_equal(fs_test_find(&rs, 3)->start, 0, 0);
        assert_int_equal(fs_test_find(&rs, 4)->pool, 0);
        assert_double_equal(fs_test_find(&rs, 4)->start, 10, 0);   /* all 14 were taken */
    }
    assert_int_equal(fs_alloc_live(), live0);
}

/* Recount of the instances in use per (node, GPU, profile) from the live
 * placements; checks it against the layout and the pool's counters. */
static void check_pool(const fs_cluster_t *c, const fs_placement_t *pl, const uint8_t *live, size_t n)
{
    const fs_pool_t *p = &c->pools[0];
    uint64_t busy = 0, gbusy = 0, ffree[FS_MIG_MAX_PROFILES] = {0};
    for (uint32_t node = 0; node < p->n_nodes; node++)
        for (uint32_t g = 0; g < p->gpn; g++) {
            uint8_t u = p->mig_used[node * p->gpn + g], mine = 0;
            for (size_t i = 0; i < n; i++)
                if (live[i] && pl[i].one.node == node)
                    mine |= (uint8_t)(pl[i].mig_bits >> (8 * g));
            assert_int_equal(u, mine);  /* exactly the live placements' instances */
            assert_int_equal(u & ~((1u << p->mig_layout.ninst) - 1u), 0);
            for (unsigned pr = 0; pr < p->mig->nprofiles; pr++) {
                unsigned used = (unsigned)__builtin_popcount(u & p->mig_pmask[pr]);
                assert_true(used <= p->mig_layout.count[pr]);
                ffree[pr] += p->mig_layout.count[pr] - used;
            }
            busy += (unsigned)__builtin_popcount(u);
            gbusy += u != 0;
        }
    assert_int_equal(p->mig_busy, busy);
    assert_int_equal(c->gpus_busy, gbusy);
    for (unsigned pr = 0; pr < p->mig->nprofiles; pr++)
        assert_int_equal(p->mig_free[pr], ffree[pr]);
}

/* Random takes and frees on 3 nodes x 2 H100 of "3g.40gb, 2g.20gb, 1g.10gb
 * x2" (4 instances per GPU, fs_mig_layout_build's placement). */
static void test_counts_never_exceed(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pc = {.name = "p", .gpu = "H100", .nodes = 3, .gpus_per_node = 2,
                        .mig = "3g.40gb, 2g.20gb, 1g.10gb x2"};
    fs_cluster_cfg_t cc;
    memset(&cc, 0, sizeof cc);
    cc.pools = &pc;
    cc.n_pools = 1;
    fs_cluster_t c;
    fs_error_t err;
    assert_int_equal(fs_cluster_init(&c, &cc, &err), 0);
    assert_int_equal(c.pools[0].mig_total, 3 * 2 * 4);
    assert_int_equal(c.pools[0].mig_layout.ninst, 4);
    assert_int_equal(c.pools[0].gpus_free, 0);
    assert_false(fs_cluster_fits(&c, 0, 1));            /* no whole GPU */
    assert_false(fs_cluster_could_fit(&c, 0, 1));
    assert_false(fs_cluster_fits_share(&c, 0, 1, 500)); /* no share either */
    const char *names[] = {"3g.40gb", "2g.20gb", "1g.10gb", "1g.20gb", "7g.80gb"};
    enum { N = 64 };
    fs_placement_t pl[N];
    uint8_t live[N] = {0};
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 7, 0, 0, 0), 0);
    uint64_t taken = 0;
    for (int step = 0; step < 4000; step++) {
        size_t i = (size_t)gsl_rng_uniform_int(fs_rng_gsl(&r), N);
        if (live[i]) {
            fs_cluster_free(&c, &pl[i]);
            fs_placement_release(&pl[i]);
            live[i] = 0;
        } else {
            const char *nm = names[gsl_rng_uniform_int(fs_rng_gsl(&r), 5)];
            uint32_t k = 1 + (uint32_t)gsl_rng_uniform_int(fs_rng_gsl(&r), 3);
            int fits = fs_cluster_mig_fits(&c, 0, code(nm), k);
            int rc = fs_cluster_mig_take(&c, 0, code(nm), k, &pl[i]);
            assert_int_equal(rc, fits);
            if (rc) {
                live[i] = 1;
                taken++;
                assert_int_equal((unsigned)__builtin_popcountll(pl[i].mig_bits), k);
                assert_int_equal(pl[i].mig, code(nm));
            }
            /* profiles the layout lacks never fit */
            if (!strcmp(nm, "1g.20gb") || !strcmp(nm, "7g.80gb"))
                assert_int_equal(rc, 0);
        }
        check_pool(&c, pl, live, N);
    }
    assert_true(taken > 100);
    for (size_t i = 0; i < N; i++)
        if (live[i]) {
            fs_cluster_free(&c, &pl[i]);
            live[i] = 0;
        }
    /* full: one instance at a time, exactly mig_total, then none */
    size_t got = 0;
    for (int pr = 0; pr < 3; pr++)
        while (got < N && fs_cluster_mig_take(&c, 0, code(names[pr]), 1, &pl[got]))
            live[got++] = 1;
    assert_int_equal(got, c.pools[0].mig_total);
    assert_int_equal(c.milli_busy, 3 * 2 * (428 + 285 + 2 * 142));
    check_pool(&c, pl, live, N);
    fs_rng_release(&r);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Located errors: the bad token's column, exit-2 class errors (FS_EINVAL). */
#define expect_error fs_test_expect_error

#define HEAD "horizon: 1h\nworkload:\n  synthetic:\n    arrivals: {rate: 10/h}\n" \
             "    gpus: {1: 1}\n    duration: {dist: exponential, mean: 1h}\n"

static void test_scenario_errors(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    expect_error(HEAD "cluster:\n  pools:\n    - name: p\n      gpu: H100\n      nodes: 1\n"
                      "      gpus_per_node: 8\n      mig: 3g.40gb, 2g.25gb\n",
                 "t.yaml:13:21", "unknown MIG profile '2g.25gb'");
    expect_error(HEAD "cluster:\n  pools:\n    - name: p\n      gpu: H100\n      nodes: 1\n"
                      "      gpus_per_node: 8\n      mig: \"3g.40gb x3\"\n",
                 "t.yaml:13:13", "does not fit on one H100-80GB");
    expect_error(HEAD "cluster:\n  pools:\n    - name: p\n      gpu: V100\n      nodes: 1\n"
                      "      gpus_per_node: 8\n      mig: all-1g.10gb\n",
                 "t.yaml:13:12", "has no MIG");
    /* an A30 has no 3g profile: the layout's token is named with the A30's profiles */
    expect_error(HEAD "cluster:\n  pools:\n    - name: p\n      gpu: A30\n      nodes: 1\n"
                      "      gpus_per_node: 4\n      mig: 2g.12gb, 3g.20gb\n",
                 "t.yaml:13:21",
                 "unknown MIG profile '3g.20gb' for A30-24GB (expected one of 1g.6gb, 1g.6gb+me, 2g.12gb, "
                 "2g.12gb+me, 4g.24gb)");
    expect_error(HEAD "cluster:\n  pools:\n    - name: p\n      gpu: A30\n      nodes: 1\n"
                      "      gpus_per_node: 4\n      mig: 2g.12gb x2, 1g.6gb\n",
                 "t.yaml:13:12", "does not fit on one A30-24GB");
    expect_error(HEAD "    mig_profile: 1g.11gb\ncluster:\n  pools:\n"
                      "    - {name: p, gpu: H100, nodes: 1, gpus_per_node: 8, mig: all-1g.10gb}\n",
                 "t.yaml:7:18", "unknown MIG profile '1g.11gb'");
    expect_error(HEAD "scheduler: {queue: srtf}\ncluster:\n  pools:\n"
                      "    - {name: p, gpu: H100, nodes: 1, gpus_per_node: 8, mig: all-1g.10gb}\n",
                 "t.yaml:10:61", "non-preemptive queues");
    expect_error(HEAD "scheduler: {backfill: easy}\ncluster:\n  pools:\n"
                      "    - {name: p, gpu: H100, nodes: 1, gpus_per_node: 8, mig: all-1g.10gb}\n",
                 "t.yaml:10:61", "without backfill");
    expect_error(HEAD "cluster:\n  pools:\n"
                      "    - {name: p, gpu: H100, nodes: 1, gpus_per_node: 16, mig: all-1g.10gb}\n",
                 "t.yaml:9:62", "at most 8 GPUs per node");
    /* a valid one loads */
    fs_error_t err;
    assert_int_equal(fs_test_create(HEAD "    mig_profile: 1g.10gb\ncluster:\n  pools:\n"
                                          "    - {name: p, gpu: H100, nodes: 1, gpus_per_node: 8, "
                                          "mig: all-1g.10gb}\n",
                                    &err),
                     0);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Loads `yaml` and runs its synthetic workload into *rs. */
static void run_synth(const char *yaml, fs_test_rows_t *rs)
{
    fs_config_t cfg;
    fs_error_t err;
    fs_source_t *src;
    if (fs_scenario_load_string("t.yaml", yaml, NULL, 0, &cfg, &err))
        fail_msg("load: %s", err.msg);
    assert_int_equal(fs_synth_create(&cfg.workload.synth, cfg.seed, 0, &src, &err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    fs_test_run_src(&cfg, src, &sink, NULL);
    fs_config_release(&cfg);
}

/* Same seed, same rows: a synthetic MIG workload over a mixed fleet. */
static void test_deterministic(void **st)
{
    (void)st;
    static const char *yaml =
        "seed: 5\nhorizon: 3h\nworkload:\n  synthetic:\n    arrivals: {rate: 300/h}\n"
        "    gpus: {1: 0.7, 2: 0.2, 3: 0.1}\n    duration: {dist: exponential, mean: 30m}\n"
        "    mig_profile: 2g.20gb\ncluster:\n  pools:\n"
        "    - {name: w, gpu: H100, nodes: 2, gpus_per_node: 8}\n"
        "    - {name: m, gpu: H100, nodes: 2, gpus_per_node: 8, mig: all-balanced}\n"
        "    - {name: n, gpu: H100, nodes: 1, gpus_per_node: 4, mig: all-2g.20gb}\n";
    static fs_test_rows_t a, b;
    run_synth(yaml, &a);
    run_synth(yaml, &b);
    assert_true(a.n > 500);
    assert_int_equal(a.n, b.n);
    size_t in_m = 0, in_n = 0;
    for (size_t i = 0; i < a.n; i++) {
        /* field by field: the row struct has padding that no one writes */
        const fs_job_row_t *x = &a.r[i], *y = &b.r[i];
        assert_true(x->id == y->id && x->tenant == y->tenant && x->pool == y->pool &&
                    x->gpus == y->gpus && x->gpu_milli == y->gpu_milli && x->nodes == y->nodes &&
                    x->restarts == y->restarts && x->state == y->state &&
                    x->preemptions == y->preemptions);
        assert_memory_equal(&x->submit, &y->submit, sizeof x->submit);
        assert_memory_equal(&x->start, &y->start, sizeof x->start);
        assert_memory_equal(&x->end, &y->end, sizeof x->end);
        assert_memory_equal(&x->wait, &y->wait, sizeof x->wait);
        assert_memory_equal(&x->run, &y->run, sizeof x->run);
        assert_memory_equal(&x->queued_s, &y->queued_s, sizeof x->queued_s);
        assert_int_equal(a.r[i].state, FS_STATE_COMPLETED);
        assert_int_not_equal(a.r[i].pool, 0);     /* never the whole-GPU pool */
        assert_int_equal(a.r[i].gpu_milli, 285);
        in_m += a.r[i].pool == 1;
        in_n += a.r[i].pool == 2;
    }
    assert_true(in_m > 0 && in_n > 0);
    fs_test_rows_free(&a);
    fs_test_rows_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seven_then_queue),
        cmocka_unit_test(test_never_fits),
        cmocka_unit_test(test_a30_four_then_queue),
        cmocka_unit_test(test_pools_apart),
        cmocka_unit_test(test_counts_never_exceed),
        cmocka_unit_test(test_scenario_errors),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
