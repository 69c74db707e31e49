/*
 * The fast paths of the composable scheduler (models/fs_sched.c) equal its
 * slow paths, job by job (fs_sched_set_fast(state, 0) turns them off).
 *
 * Proofs:
 *   - Slurm multifactor with bands (a PriorityCalcPeriod costs O(bands)
 *     instead of a rebuild of the queue): random workloads with tenants,
 *     QOS values and sizes, several weight sets (age saturating at
 *     PriorityMaxAge, fair share, job size both ways, QOS, all zero),
 *     strict, best effort and Slurm's bounded backfill (its first jobs a
 *     heap merge of the bands and loose treaps), with and without node
 *     failures (interrupted jobs queue again between two boundaries), start
 *     and end of every job equal to the slow path's, no job outside its band
 *     without failures, and loose jobs merged under backfill;
 *   - the loose path by hand: a job queued again between two boundaries
 *     with a key ahead of an older job of its band starts first, as on the
 *     slow path;
 *   - non-preemptive passes (fits cached per pass and per cluster
 *     generation, passes skipped after an arrival alone, the cheaper treap
 *     updates): FIFO, SJF, priority and Slurm orders, strict and best effort,
 *     no backfill and exact EASY, with and without failures, equal too;
 *     and Slurm's bounded backfill (the first max_job_test jobs merged from
 *     the classes, the running jobs' rounded ends insertion-sorted) against
 *     a sort of every class's first jobs and qsort; and its running ends
 *     kept between passes and its pass ended once nothing left can start,
 *     with one and two typed pools, overrunning estimates, busy and idle
 *     queues;
 *   - conservative backfill's blocked profile against the flat one: exact
 *     mode (FIFO, three seeds, with and without failures, queues of
 *     hundreds) and bounded mode on 512 GPUs, job by job;
 *   - Tiresias 2D-LAS on the order's tree and per-job settling (a pass
 *     planned by block descents, only changed jobs moved after it, demotions
 *     and promotions from a heap): two to five queues, with and without
 *     promotion, work kept or lost, strict and best effort, no preemption,
 *     1-GPU and 4-GPU nodes (starts that fail by fragmentation), two typed
 *     pools, with and without node failures (recovering jobs keep their
 *     place in the order; delayed requeues; jobs that give up), three seeds:
 *     equal to the slow path's settling of every job and sorts, with
 *     preemptions, demotions and promotions happening;
 *   - 2D-LAS under allocation failures: each failing allocation stops the
 *     run with FS_ENOMEM and nothing leaks;
 *   - the workloads are not trivial: each weight set reorders jobs against
 *     FIFO, and the failure runs interrupt jobs.
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

#include "fs_test_util.h"
#include "models/fs_model.h"
#include "models/fs_policy.h"
#include "models/fs_sched.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"
#include "sim/fs_sim.h"
#include "traces/fs_memsrc.h"

#define S(x) ((fs_time_t)((x) * FS_US_PER_S))

/* fs_test_base_cfg with packed placement and shorter Slurm periods. */
static void base_cfg(fs_config_t *c, fs_pool_cfg_t *pool, uint32_t nodes, uint32_t gpn, int queue)
{
    fs_test_base_cfg(c, pool, nodes, gpn, queue);
    c->scheduler.placement = FS_PLACE_PACK;
    c->scheduler.slurm = (fs_slurm_cfg_t){.max_age = S(3600), .decay_half_life = S(1800),
                                          .calc_period = S(60)};
}

/* n jobs, Poisson-like arrivals with mean gap `gap` s (whole seconds, so
 * that some arrive together), sizes 1-16, 4 tenants, QOS 0-3, run times
 * 1 s - 3 h, estimates 1-3x the run time, or (under) 0.3-2x: jobs that
 * overrun their estimate put the EASY shadow in the past. */
static void gen_est(fs_job_t *jobs, size_t n, uint64_t seed, double gap, int under)
{
    static const uint32_t sizes[] = {1, 1, 1, 2, 2, 4, 4, 8, 16};
    fs_rng_t rr;
    assert_int_equal(fs_rng_init(&rr, seed, 0, FS_RNG_TRACE, 0), 0);
    gsl_rng *r = rr.g;
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        t += floor(gsl_rng_uniform(r) * 2 * gap);
        fs_job_init(&jobs[i]);
        jobs[i].id = i + 1;
        jobs[i].submit = S(t);
        jobs[i].gpus = sizes[gsl_rng_uniform_int(r, 9)];
        double d = 1 + floor(exp(gsl_rng_uniform(r) * 9));
        jobs[i].duration = S(d);
        double f = under ? 0.3 + 1.7 * gsl_rng_uniform(r) : 1 + 2 * gsl_rng_uniform(r);
        jobs[i].estimate = S(floor(d * f)) + 1;
        jobs[i].tenant = (int32_t)gsl_rng_uniform_int(r, 4);
        jobs[i].priority = (int32_t)gsl_rng_uniform_int(r, 4);
    }
    fs_rng_release(&rr);
}

static void gen(fs_job_t *jobs, size_t n, uint64_t seed, double gap)
{
    gen_est(jobs, n, seed, gap, 0);
}

/* A test module: node failures at given times, each repaired later. */
typedef struct fails {
    uint32_t id;
    uint64_t hit;           /* jobs interrupted */
} fails_t;

static uint64_t loose;      /* fs_sched_loose of the last run */

static int fails_event(void *ud, fs_model_t *m, uint64_t data)
{
    fails_t *f = ud;
    uint32_t node = (uint32_t)(data >> 1), hit = 0;
    if (data & 1)
        return fs_model_node_up(m, node);
    int rc = fs_model_node_down(m, node, FS_DOWN_FAIL, &hit);
    f->hit += hit;
    return rc;
}

static void fails_destroy(void *ud) { fs_free(ud); }

static const fs_module_ops_t fails_ops = {.name = "test-failures", .on_event = fails_event,
                                          .destroy = fails_destroy};

typedef struct outage {
    uint32_t node;
    double down, up;        /* s */
} outage_t;

static const char *const gpu_types[] = {"H100", "A100"};
static int typed;           /* run_plan: jobs' gpu_type indexes gpu_types */

/* One run, fast paths on or off, with `failures` random node outages or
 * the n_plan outages of plan.  Returns the jobs interrupted. */
static uint64_t run_plan(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, int fast,
                         int failures, const outage_t *plan, size_t n_plan, fs_test_rows_t *rs)
{
    static const char *const tn[] = {"a", "b", "c", "d"};
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, n, tn, 4, typed ? gpu_types : NULL, typed ? 2 : 0,
                                      &src, &err),
                     0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    if (fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err))
        fail_msg("create: %s", err.msg);
    assert_ptr_equal(fs_policy_select(&cfg->scheduler), &fs_policy_sched);
    fs_sched_set_fast(fs_model_policy_state(m), fast);
    fails_t *f = NULL;
    if (failures || n_plan) {
        f = fs_calloc(1, sizeof *f);
        assert_non_null(f);
        assert_int_equal(fs_model_add_module(m, &fails_ops, f, &f->id), 0);
        fs_rng_t rr;
        assert_int_equal(fs_rng_init(&rr, 99, 0, FS_RNG_TRACE, 1), 0);
        fs_time_t span = jobs[n - 1].submit;
        uint32_t nodes = cfg->cluster.pools[0].nodes;
        for (int k = 0; k < failures; k++) {
            /* whole seconds plus 0.5 s: off the arrivals' instants, and on
             * them (k odd) */
            fs_time_t at = S(floor(gsl_rng_uniform(rr.g) * fs_time_to_s(span))) + (k & 1 ? 0 : S(0.5));
            uint64_t node = gsl_rng_uniform_int(rr.g, nodes);
            fs_time_t up = at + S(1 + floor(gsl_rng_uniform(rr.g) * 600));
            assert_int_equal(fs_model_module_event(m, f->id, at, FS_PRIO_FAILURE, node << 1, NULL), 0);
            assert_int_equal(fs_model_module_event(m, f->id, up, FS_PRIO_REPAIR, node << 1 | 1, NULL), 0);
        }
        fs_rng_release(&rr);
        for (size_t k = 0; k < n_plan; k++) {
            uint64_t node = plan[k].node;
            assert_int_equal(fs_model_module_event(m, f->id, S(plan[k].down), FS_PRIO_FAILURE,
                                                   node << 1, NULL), 0);
            assert_int_equal(fs_model_module_event(m, f->id, S(plan[k].up), FS_PRIO_REPAIR,
                                                   node << 1 | 1, NULL), 0);
        }
    }
    if (fs_model_run(m, NULL, NULL, &err))
        fail_msg("run: %s", err.msg);
    fs_run_totals_t t;
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    fs_test_check_capstates(&t);
    uint64_t hit = f ? f->hit : 0;
    loose = fs_sched_loose(fs_model_policy_state(m));
    fs_model_destroy(m);
    fs_source_destroy(src);
    return hit;
}

static uint64_t run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, int fast, int failures,
                    fs_test_rows_t *rs)
{
    return run_plan(cfg, jobs, n, fast, failures, NULL, 0, rs);
}

static void assert_same(const fs_test_rows_t *a, const fs_test_rows_t *b, const char *what)
{
    if (a->n != b->n)
        fail_msg("%s: %zu rows, slow path %zu", what, a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        if (a->r[i].id != b->r[i].id || a->r[i].start != b->r[i].start ||
            a->r[i].end != b->r[i].end || a->r[i].restarts != b->r[i].restarts)
            fail_msg("%s: row %zu: job %llu %.6f-%.6f, slow path job %llu %.6f-%.6f", what, i,
                     (unsigned long long)a->r[i].id, a->r[i].start, a->r[i].end,
                     (unsigned long long)b->r[i].id, b->r[i].start, b->r[i].end);
}

/* Runs cfg over jobs[0..n) with the fast paths and without, with `failures`
 * random outages: every job ends, the two give the same rows and interrupt
 * the same jobs (returned). */
static uint64_t fast_is_slow(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, int failures,
                             const char *what)
{
    static fs_test_rows_t fast, slow;
    uint64_t h1 = run(cfg, jobs, n, 1, failures, &fast);
    uint64_t h0 = run(cfg, jobs, n, 0, failures, &slow);
    assert_int_equal(fast.n, n);
    assert_same(&fast, &slow, what);
    assert_int_equal(h1, h0);
    return h1;
}

/* Rows differ in some start time (the order did something). */
static int differ(const fs_test_rows_t *a, const fs_test_rows_t *b)
{
    for (size_t i = 0; i < a->n && i < b->n; i++)
        if (a->r[i].id != b->r[i].id || a->r[i].start != b->r[i].start)
            return 1;
    return a->n != b->n;
}

typedef struct weights {
    uint32_t age, fs, size, qos;
    int favor_small;
    int reorders;           /* not FIFO order */
} weights_t;

static const weights_t W[] = {
    {1000, 5000, 100, 10000, 0, 1}, /* the benchmark's */
    {1000, 0, 0, 0, 0, 0},          /* age only (FIFO order, saturating at max_age) */
    {0, 1000, 0, 0, 0, 1},          /* fair share only */
    {10, 10, 1000, 0, 1, 1},        /* size, small first */
    {0, 0, 0, 1000, 0, 1},          /* QOS only: ties broken by sequence */
    {0, 0, 0, 0, 0, 0},             /* Slurm's default: FIFO */
};

static void slurm_cfg(fs_config_t *cfg, const weights_t *w)
{
    cfg->scheduler.slurm.weight_age = w->age;
    cfg->scheduler.slurm.weight_fairshare = w->fs;
    cfg->scheduler.slurm.weight_jobsize = w->size;
    cfg->scheduler.slurm.weight_qos = w->qos;
    cfg->scheduler.slurm.favor_small = w->favor_small;
}

static void test_slurm_bands_equal_rebuild(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static fs_job_t jobs[1200];
    static fs_test_rows_t fast, slow, fifo;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    for (int seed = 0; seed < 2; seed++) {
        gen(jobs, 1200, 7 + (uint64_t)seed, 20);
        for (size_t wi = 0; wi < sizeof W / sizeof W[0] && (!seed || !wi); wi++)
            for (int mode = 0; mode < 3; mode++)    /* best effort, strict, bounded backfill */
                for (int fail = 0; fail < 2; fail++) {
                    base_cfg(&cfg, &pool, 16, 4, FS_QUEUE_SLURM);
                    cfg.scheduler.mode = mode == 1 ? FS_FIFO_STRICT : FS_FIFO_BEST_EFFORT;
                    if (mode == 2) {    /* the first jobs merged from the bands */
                        cfg.scheduler.backfill = FS_BACKFILL_CONSERVATIVE;
                        cfg.scheduler.bf.mode = FS_BF_SLURM;
                        cfg.scheduler.bf.max_job_test = 20;
                    }
                    slurm_cfg(&cfg, &W[wi]);
                    uint64_t h1 = run(&cfg, jobs, 1200, 1, fail ? 40 : 0, &fast);
                    uint64_t n_loose = loose;
                    uint64_t h0 = run(&cfg, jobs, 1200, 0, fail ? 40 : 0, &slow);
                    assert_int_equal(loose, 0);
                    char what[96];
                    snprintf(what, sizeof what, "seed %d weights %zu mode %d failures %d", seed, wi,
                             mode, fail);
                    assert_int_equal(fast.n, 1200);
                    assert_same(&fast, &slow, what);
                    assert_int_equal(h1, h0);
                    if (fail)
                        assert_true(h1 > 0);
                    /* first admissions keep the bands' promise: no loose job
                     * without failures (test_slurm_loose_hand covers those) */
                    if (!fail)
                        assert_int_equal(n_loose, 0);
                    if (W[wi].reorders && !fail) {
                        slurm_cfg(&cfg, &W[sizeof W / sizeof W[0] - 1]); /* FIFO */
                        run(&cfg, jobs, 1200, 1, 0, &fifo);
                        if (!differ(&fast, &fifo))
                            fail_msg("%s: same schedule as FIFO", what);
                    }
                }
    }
    assert_int_equal(fs_alloc_live(), live0);
}

/* The loose path by hand.  Two 1-GPU nodes, age weight only (one band),
 * PriorityCalcPeriod 100 s, no checkpoints, immediate requeue.  w (0 s)
 * and x (10 s), 1,000 s each, start on nodes 0 and 1.  Node 0 fails at 50
 * (back at 500): w queues again.  At the boundary 100, w's age is 100 s.
 * Node 1 fails at 150 (back at 160): x queues again with its key taken
 * now, age 140 s: x is ahead of w although w is older (w's key is from
 * the boundary).  So x restarts at 160 (ends 1,160) and w at 500 (ends
 * 1,500); a band in sequence order alone would have started w at 160. */
static void test_slurm_loose_hand(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t jobs[2];
    for (int i = 0; i < 2; i++) {
        fs_job_init(&jobs[i]);
        jobs[i].id = (uint64_t)i + 1;
        jobs[i].submit = S(10 * i);
        jobs[i].gpus = 1;
        jobs[i].duration = S(1000);
        jobs[i].tenant = 0;
    }
    static const outage_t plan[] = {{0, 50, 500}, {1, 150, 160}};
    static fs_test_rows_t fast, slow;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    base_cfg(&cfg, &pool, 2, 1, FS_QUEUE_SLURM);
    cfg.scheduler.placement = FS_PLACE_FIRST_FIT;
    cfg.scheduler.slurm.max_age = S(1e6);
    cfg.scheduler.slurm.calc_period = S(100);
    cfg.scheduler.slurm.weight_age = 1000;
    assert_int_equal(run_plan(&cfg, jobs, 2, 1, 0, plan, 2, &fast), 2);
    uint64_t n_loose = loose;
    assert_int_equal(run_plan(&cfg, jobs, 2, 0, 0, plan, 2, &slow), 2);
    assert_double_equal(fs_test_find(&fast, 2)->end, 1160, 1e-9);
    assert_double_equal(fs_test_find(&fast, 1)->end, 1500, 1e-9);
    assert_same(&fast, &slow, "hand");
    assert_int_equal(n_loose, 1);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The loose path under Slurm's bounded backfill, by hand: the merge of the
 * first max_job_test jobs takes a loose job in its place.  Four 1-GPU
 * nodes; a and b (0 and 3 s, 5,000 s) hold nodes 0 and 3; w (1 s) and x
 * (2 s), 1,000 s each, run on nodes 1 and 2; h (4 s, 4 GPUs, QOS 1) is the
 * head by its QOS and never fits while node 1 is down (its reservation is
 * "never", so it blocks nothing).  Node 1 fails at 50 (back at 500): w
 * queues again and joins its band; the boundary at 100 gives it age 99 s.
 * Node 2 fails at 150 (back at 160): x queues again with age 148 s, ahead
 * of w but after it in sequence: loose.  The backfill pass at 180 tests
 * two jobs, h and then x (the merge's second), and x starts: it ends at
 * 1,180; w starts at the first backfill pass after node 1 is back (510)
 * and ends at 1,510.  A merge without the loose treaps would test h and
 * w and start w at 180. */
static void test_slurm_loose_bounded_hand(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t jobs[5];
    static const double sub[] = {0, 1, 2, 3, 4}, dur[] = {5000, 1000, 1000, 5000, 1000};
    for (int i = 0; i < 5; i++) {
        fs_job_init(&jobs[i]);
        jobs[i].id = (uint64_t)i + 1;
        jobs[i].submit = S(sub[i]);
        jobs[i].gpus = i == 4 ? 4 : 1;
        jobs[i].duration = S(dur[i]);
        jobs[i].priority = i == 4 ? 1 : 0;
        jobs[i].tenant = 0;
    }
    static const outage_t plan[] = {{1, 50, 500}, {2, 150, 160}};
    static fs_test_rows_t fast, slow;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    base_cfg(&cfg, &pool, 4, 1, FS_QUEUE_SLURM);
    cfg.scheduler.placement = FS_PLACE_FIRST_FIT;
    cfg.scheduler.slurm.max_age = S(1e6);
    cfg.scheduler.slurm.calc_period = S(100);
    cfg.scheduler.slurm.weight_age = 1000;
    cfg.scheduler.slurm.weight_qos = 10000;
    cfg.scheduler.backfill = FS_BACKFILL_CONSERVATIVE;
    cfg.scheduler.bf.mode = FS_BF_SLURM;
    cfg.scheduler.bf.max_job_test = 2;
    assert_int_equal(run_plan(&cfg, jobs, 5, 1, 0, plan, 2, &fast), 2);
    uint64_t n_loose = loose;
    assert_int_equal(run_plan(&cfg, jobs, 5, 0, 0, plan, 2, &slow), 2);
    assert_double_equal(fs_test_find(&fast, 3)->end, 1180, 1e-9);
    assert_double_equal(fs_test_find(&fast, 2)->end, 1510, 1e-9);
    assert_same(&fast, &slow, "bounded hand");
    assert_int_equal(n_loose, 1);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Non-preemptive passes (the per-pass fit cache, skipped passes after an
 * arrival alone, the treap updates): orders x modes x backfill, with and
 * without failures. */
static void test_npass_fast_equals_slow(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static fs_job_t jobs[1500];
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static const struct {
        int queue, mode, backfill, bf_slurm;
    } C[] = {
        {FS_QUEUE_FIFO, FS_FIFO_BEST_EFFORT, FS_BACKFILL_CONSERVATIVE, 1},
        {FS_QUEUE_SJF, FS_FIFO_BEST_EFFORT, FS_BACKFILL_CONSERVATIVE, 1},
        {FS_QUEUE_SLURM, FS_FIFO_BEST_EFFORT, FS_BACKFILL_CONSERVATIVE, 1},
        {FS_QUEUE_FIFO, FS_FIFO_STRICT, FS_BACKFILL_EASY, 0},
        {FS_QUEUE_SLURM, FS_FIFO_STRICT, FS_BACKFILL_EASY, 0},
        {FS_QUEUE_SJF, FS_FIFO_STRICT, FS_BACKFILL_EASY, 0},
        {FS_QUEUE_PRIORITY, FS_FIFO_BEST_EFFORT, FS_BACKFILL_EASY, 0},
        {FS_QUEUE_PRIORITY, FS_FIFO_BEST_EFFORT, FS_BACKFILL_NONE, 0},
        {FS_QUEUE_PRIORITY, FS_FIFO_STRICT, FS_BACKFILL_NONE, 0},
        {FS_QUEUE_SJF, FS_FIFO_BEST_EFFORT, FS_BACKFILL_NONE, 0},
    };
    gen(jobs, 1500, 3, 8);
    for (size_t ci = 0; ci < sizeof C / sizeof C[0]; ci++)
        for (int fail = 0; fail < 2; fail++) {
            base_cfg(&cfg, &pool, 16, 4, C[ci].queue);
            cfg.scheduler.mode = C[ci].mode;
            cfg.scheduler.backfill = C[ci].backfill;
            cfg.scheduler.preemption = FS_PREEMPT_NONE;
            if (C[ci].bf_slurm) {   /* Slurm's bounded backfill: a test depth below the queue's */
                cfg.scheduler.bf.mode = FS_BF_SLURM;
                cfg.scheduler.bf.max_job_test = 20;
            }
            slurm_cfg(&cfg, &W[0]);
            char what[64];
            snprintf(what, sizeof what, "case %zu failures %d", ci, fail);
            fast_is_slow(&cfg, jobs, 1500, fail ? 40 : 0, what);
        }
    assert_int_equal(fs_alloc_live(), live0);
}

/* Slurm's bounded backfill, fast path (the running jobs' rounded ends kept
 * sorted between passes, the pass ended once nothing left can start, the
 * bands merged) against the slow path (ends collected from the running
 * treaps and sorted, every tested job planned): one pool and two typed
 * pools (8 x 8 H100, 6 x 8 A100; jobs of each type and of any), estimates
 * over and under the run times (overrunning jobs' ends are clamped to now),
 * a busy queue and a mostly empty one (few backfill passes: the starts
 * kept between them are folded as they pile up), FIFO and Slurm
 * multifactor, with and without node failures. */
static void test_bounded_fast_equals_slow(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static fs_job_t jobs[2000];
    fs_pool_cfg_t pools[2];
    fs_config_t cfg;
    static const int queues[] = {FS_QUEUE_FIFO, FS_QUEUE_SLURM};
    for (int two = 0; two < 2; two++)
        for (int under = 0; under < 2; under++)
            for (int busy = 0; busy < 2; busy++) {
                gen_est(jobs, 2000, 21 + (uint64_t)(4 * two + 2 * under + busy), busy ? 4 : 400,
                        under);
                for (size_t i = 0; two && i < 2000; i++)
                    jobs[i].gpu_type = (int32_t)(i % 3) - 1;
                for (size_t qi = 0; qi < 2; qi++)
                    for (int fail = 0; fail < 2; fail++) {
                        base_cfg(&cfg, &pools[0], 8, 8, queues[qi]);
                        if (two)
                            fs_test_add_a100(&cfg, pools, 6);
                        cfg.scheduler.backfill = FS_BACKFILL_CONSERVATIVE;
                        cfg.scheduler.bf.mode = FS_BF_SLURM;
                        cfg.scheduler.bf.max_job_test = 30;
                        cfg.scheduler.runtime = FS_RUNTIME_USER;
                        cfg.scheduler.preemption = FS_PREEMPT_NONE;
                        slurm_cfg(&cfg, &W[0]);
                        char what[96];
                        snprintf(what, sizeof what, "pools %d under %d busy %d queue %zu failures %d",
                                 1 + two, under, busy, qi, fail);
                        typed = two;
                        fast_is_slow(&cfg, jobs, 2000, fail ? 40 : 0, what);
                        typed = 0;
                    }
            }
    assert_int_equal(fs_alloc_live(), live0);
}

/* Conservative backfill's profile (models/fs_profile.h): blocked on the
 * fast path, flat on the slow one.  Exact mode (Mu'alem-Feitelson
 * compression: every queued job's reservation in the profile, about two
 * steps per queued job) with FIFO, three seeds, with and without failures,
 * queues of a few hundred jobs (profiles of many blocks); and Slurm's
 * bounded mode on a larger cluster (a hundred or more running jobs, 100
 * jobs planned per pass: blocks split within a pass).  Job by job equal. */
static void test_conservative_fast_equals_slow(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static fs_job_t jobs[1500];
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    for (int seed = 1; seed <= 3; seed++)
        for (int fail = 0; fail < 2; fail++) {
            gen(jobs, 400, (uint64_t)seed, 30);
            base_cfg(&cfg, &pool, 16, 4, FS_QUEUE_FIFO);
            cfg.scheduler.mode = FS_FIFO_BEST_EFFORT;
            cfg.scheduler.backfill = FS_BACKFILL_CONSERVATIVE;
            cfg.scheduler.bf.mode = FS_BF_EXACT;
            cfg.scheduler.preemption = FS_PREEMPT_NONE;
            char what[64];
            snprintf(what, sizeof what, "exact seed %d failures %d", seed, fail);
            uint64_t h = fast_is_slow(&cfg, jobs, 400, fail ? 20 : 0, what);
            if (fail)
                assert_true(h > 0);
        }
    gen(jobs, 1500, 5, 2);
    for (int fail = 0; fail < 2; fail++) {
        base_cfg(&cfg, &pool, 64, 8, FS_QUEUE_FIFO);
        cfg.scheduler.mode = FS_FIFO_BEST_EFFORT;
        cfg.scheduler.backfill = FS_BACKFILL_CONSERVATIVE;
        cfg.scheduler.bf.mode = FS_BF_SLURM;
        cfg.scheduler.bf.max_job_test = 100;
        cfg.scheduler.preemption = FS_PREEMPT_NONE;
        char what[64];
        snprintf(what, sizeof what, "bounded, 512 GPUs, failures %d", fail);
        fast_is_slow(&cfg, jobs, 1500, fail ? 40 : 0, what);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

/* One run with the reservation log on: rows, the log and the backfill count. */
static void run_logged(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, int fast,
                       fs_test_rows_t *rs, fs_sched_resv_t *log, size_t *n_log, uint64_t *bf)
{
    static const char *const tn[] = {"a", "b", "c", "d"};
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, n, tn, 4, NULL, 0, &src, &err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    if (fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err))
        fail_msg("create: %s", err.msg);
    fs_sched_set_fast(fs_model_policy_state(m), fast);
    fs_sched_record(fs_model_policy_state(m), 1);
    if (fs_model_run(m, NULL, NULL, &err))
        fail_msg("run: %s", err.msg);
    fs_run_totals_t t;
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    const fs_sched_resv_t *r = fs_sched_reservations(fs_model_policy_state(m), n_log);
    assert_true(*n_log <= n);
    if (*n_log)
        memcpy(log, r, *n_log * sizeof *r);
    *bf = fs_sched_backfilled(fs_model_policy_state(m));
    fs_model_destroy(m);
    fs_source_destroy(src);
}

/* Exact conservative backfill's pass with one job queued (fs_sched_cons.c
 * cons_one: no profile built when the GPUs free now are enough): at loads
 * from half to twice the cluster, FIFO and SJF order, the rows, every
 * job's first reservation and the backfill count equal the slow path's; a
 * reservation made at now while too few GPUs are free (the GPU test left
 * out) fails it. */
static void test_conservative_one_queued(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    enum { N = 600 };
    static fs_job_t jobs[N];
    static fs_test_rows_t fast, slow;
    static fs_sched_resv_t lf[N], ls[N];
    static const double gaps[] = {30, 60, 120};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    size_t logged = 0;
    for (int seed = 1; seed <= 2; seed++)
        for (size_t gi = 0; gi < sizeof gaps / sizeof gaps[0]; gi++)
            for (int q = 0; q < 2; q++) {
                gen(jobs, N, 40 + (uint64_t)seed, gaps[gi]);
                base_cfg(&cfg, &pool, 16, 4, q ? FS_QUEUE_SJF : FS_QUEUE_FIFO);
                cfg.scheduler.mode = FS_FIFO_BEST_EFFORT;
                cfg.scheduler.backfill = FS_BACKFILL_CONSERVATIVE;
                cfg.scheduler.bf.mode = FS_BF_EXACT;
                cfg.scheduler.preemption = FS_PREEMPT_NONE;
                size_t nf, ns;
                uint64_t bff, bfs;
                run_logged(&cfg, jobs, N, 1, &fast, lf, &nf, &bff);
                run_logged(&cfg, jobs, N, 0, &slow, ls, &ns, &bfs);
                char what[64];
                snprintf(what, sizeof what, "seed %d gap %.0f %s", seed, gaps[gi], q ? "sjf" : "fifo");
                assert_int_equal(fast.n, N);
                assert_same(&fast, &slow, what);
                if (nf != ns)
                    fail_msg("%s: %zu reservations, slow path %zu", what, nf, ns);
                for (size_t i = 0; i < nf; i++)
                    if (lf[i].id != ls[i].id || lf[i].at != ls[i].at)
                        fail_msg("%s: reservation %zu: job %llu at %lld, slow path job %llu at %lld",
                                 what, i, (unsigned long long)lf[i].id, (long long)lf[i].at,
                                 (unsigned long long)ls[i].id, (long long)ls[i].at);
                assert_int_equal(bff, bfs);
                logged += nf;
            }
    assert_true(logged > 100);
    assert_int_equal(fs_alloc_live(), live0);
}

/* EASY with jobs that overrun their estimates (the shadow falls behind
 * now, and a settled queue stays settled only until the next planned end),
 * bursts of arrivals (several new candidates per pass) and fragmentation
 * (pack and spread placement, 8-GPU nodes): fast == slow job by job. */
static void test_easy_overrun_fast_equals_slow(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static fs_job_t jobs[2000];
    static fs_test_rows_t fast, slow;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static const int queues[] = {FS_QUEUE_FIFO, FS_QUEUE_SJF};
    static const int places[] = {FS_PLACE_PACK, FS_PLACE_SPREAD};
    for (int seed = 0; seed < 2; seed++) {
        gen_est(jobs, 2000, 11 + (uint64_t)seed, seed ? 2 : 6, 1);
        for (size_t qi = 0; qi < 2; qi++)
            for (size_t pi = 0; pi < 2; pi++) {
                base_cfg(&cfg, &pool, 12, 8, queues[qi]);
                cfg.scheduler.mode = FS_FIFO_STRICT;
                cfg.scheduler.backfill = FS_BACKFILL_EASY;
                cfg.scheduler.preemption = FS_PREEMPT_NONE;
                cfg.scheduler.placement = places[pi];
                cfg.scheduler.runtime = FS_RUNTIME_USER;
                uint64_t h1 = run(&cfg, jobs, 2000, 1, seed ? 30 : 0, &fast);
                uint64_t h0 = run(&cfg, jobs, 2000, 0, seed ? 30 : 0, &slow);
                char what[64];
                snprintf(what, sizeof what, "seed %d queue %zu placement %zu", seed, qi, pi);
                assert_int_equal(fast.n, 2000);
                assert_same(&fast, &slow, what);
                assert_int_equal(h1, h0);
            }
    }
    /* two pools (8 x 8 H100, 6 x 8 A100), jobs H100, A100 and of any type:
     * the shadow is in one pool, jobs that cannot go there are candidates */
    fs_pool_cfg_t pools[2];
    gen_est(jobs, 2000, 13, 3, 1);
    for (size_t i = 0; i < 2000; i++)
        jobs[i].gpu_type = (int32_t)(i % 3) - 1;
    for (size_t qi = 0; qi < 2; qi++)
        for (int fail = 0; fail < 2; fail++) {
            base_cfg(&cfg, &pools[0], 8, 8, queues[qi]);
            fs_test_add_a100(&cfg, pools, 6);
            cfg.scheduler.mode = FS_FIFO_STRICT;
            cfg.scheduler.backfill = FS_BACKFILL_EASY;
            cfg.scheduler.preemption = FS_PREEMPT_NONE;
            typed = 1;
            uint64_t h1 = run(&cfg, jobs, 2000, 1, fail ? 30 : 0, &fast);
            uint64_t h0 = run(&cfg, jobs, 2000, 0, fail ? 30 : 0, &slow);
            typed = 0;
            char what[64];
            snprintf(what, sizeof what, "two pools, queue %zu failures %d", qi, fail);
            assert_int_equal(fast.n, 2000);
            assert_same(&fast, &slow, what);
            assert_int_equal(h1, h0);
        }
    assert_int_equal(fs_alloc_live(), live0);
}

/* 2D-LAS: per-job settling and the tree's passes equal the slow path's
 * settling of every job at each update and sort at each pass, job by job:
 * two to five queues, promotion knobs from none to fractional, work kept or
 * lost, strict and best effort, 1- to 4-GPU nodes (starts that fail by
 * fragmentation), no preemption (settling alone), failures with the
 * default recovery, with detection and requeue delays (jobs recovering in
 * the order, promoted while recovering) and with no retry (jobs that leave
 * the order while recovering, slots reused), two typed pools; three seeds
 * (the second and third with failures only). */
static void test_las_fast_equals_slow(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    enum { NJ = 500 };
    static fs_job_t jobs[NJ];
    static fs_test_rows_t fast, slow;
    fs_pool_cfg_t pools[2];
    fs_config_t cfg;
    static const struct {
        const char *thr;
        double knob;
        int ckpt, strict;
        uint32_t nodes, gpn;
        int nopre;          /* preemption: none */
        int rec;            /* 0 default recovery, 1 delays, 2 no retry */
        int typed;          /* two pools, jobs typed */
    } C[] = {
        {"3600", 0, 1, 0, 32, 1, 0, 0, 0},
        {"400,3600,18000", 0, 1, 0, 32, 1, 0, 0, 0},
        {"400,3600", 3, 1, 0, 32, 1, 0, 0, 0},
        {"400,3600", 0, 0, 0, 8, 4, 0, 0, 0},     /* work lost (with promotion it can livelock) */
        {"400,3600", 2, 1, 0, 8, 4, 0, 0, 0},
        {"100,1000,10000", 1, 1, 1, 8, 4, 0, 0, 0},
        {"200", 4, 1, 1, 16, 2, 0, 0, 0},
        {"50", 0.5, 1, 0, 16, 2, 0, 0, 0},
        {"60,600,6000,60000", 1.5, 1, 0, 8, 4, 0, 0, 0},
        {"400,3600", 2, 1, 0, 8, 4, 1, 0, 0},
        {"100,1000", 3, 1, 1, 32, 1, 1, 0, 0},
        {"400,3600", 2, 1, 0, 8, 4, 0, 1, 0},
        {"100,1000", 1, 1, 0, 16, 2, 0, 2, 0},
        {"400,3600", 2, 1, 0, 4, 4, 0, 0, 1},
        {"100,1000,10000", 0, 1, 1, 4, 4, 0, 1, 1},
    };
    uint64_t restarts = 0;
    for (int seed = 0; seed < 3; seed++) {
        gen(jobs, NJ, 21 + (uint64_t)seed, 6);
        for (size_t ci = 0; ci < sizeof C / sizeof C[0]; ci++)
            for (int fail = 0; fail < 2; fail++) {
                if ((C[ci].rec || seed > 0) && !fail)
                    continue;   /* (seeds 1 and 2: with failures only, for time) */
                base_cfg(&cfg, &pools[0], C[ci].nodes, C[ci].gpn, FS_QUEUE_LAS);
                if (C[ci].typed) {
                    fs_test_add_a100(&cfg, pools, C[ci].nodes);
                    for (size_t i = 0; i < NJ; i++)
                        jobs[i].gpu_type = (int32_t)(i % 3) - 1;
                }
                cfg.scheduler.tiresias.thresholds = (char *)C[ci].thr;
                cfg.scheduler.tiresias.promote_knob = C[ci].knob;
                cfg.scheduler.checkpoint_interval = S(C[ci].ckpt);
                cfg.scheduler.mode = C[ci].strict ? FS_FIFO_STRICT : FS_FIFO_BEST_EFFORT;
                if (C[ci].nopre)
                    cfg.scheduler.preemption = FS_PREEMPT_NONE;
                if (C[ci].rec) {
                    cfg.recovery.detection = S(30);
                    cfg.recovery.requeue = S(60);
                    cfg.recovery.retry = C[ci].rec == 2 ? FS_RETRY_NONE : FS_RETRY_REQUEUE;
                }
                typed = C[ci].typed;
                uint64_t h1 = run(&cfg, jobs, NJ, 1, fail ? 40 : 0, &fast);
                uint64_t h0 = run(&cfg, jobs, NJ, 0, fail ? 40 : 0, &slow);
                typed = 0;
                if (C[ci].typed)
                    for (size_t i = 0; i < NJ; i++)
                        jobs[i].gpu_type = -1;
                char what[80];
                snprintf(what, sizeof what, "LAS seed %d case %zu failures %d", seed, ci, fail);
                assert_int_equal(fast.n, NJ);
                assert_same(&fast, &slow, what);
                assert_int_equal(h1, h0);
                if (fail)
                    assert_true(h1 > 0);
                for (size_t i = 0; i < fast.n; i++)
                    restarts += fast.r[i].restarts;
            }
    }
    assert_true(restarts > 3000);   /* preemptions happened, many */
    assert_int_equal(fs_alloc_live(), live0);
}

/* A test module: node speed changes (stragglers) at given times: data is
 * node << 8 | speed in tenths. */
static int speeds_event(void *ud, fs_model_t *m, uint64_t data)
{
    (void)ud;
    return fs_model_node_speed(m, (uint32_t)(data >> 8), (double)(data & 0xff) / 10);
}

static const fs_module_ops_t speeds_ops = {.name = "test-speeds", .on_event = speeds_event};

/* One SRTF run, fast (the order's plan) or slow (fs_spre_pass), with
 * `failures` random outages and (speeds) 200 straggler episodes. */
static void srtf_run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, int fast, int failures,
                     int speeds, fs_test_rows_t *rs)
{
    static const char *const tn[] = {"a", "b", "c", "d"};
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, n, tn, 4, NULL, 0, &src, &err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    if (fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err))
        fail_msg("create: %s", err.msg);
    fs_sched_set_fast(fs_model_policy_state(m), fast);
    fs_rng_t rr;
    assert_int_equal(fs_rng_init(&rr, 77, 0, FS_RNG_TRACE, 1), 0);
    fs_time_t span = jobs[n - 1].submit;
    uint32_t nodes = cfg->cluster.pools[0].nodes, id;
    if (failures) {
        fails_t *f = fs_calloc(1, sizeof *f);
        assert_non_null(f);
        assert_int_equal(fs_model_add_module(m, &fails_ops, f, &f->id), 0);
        for (int k = 0; k < failures; k++) {
            fs_time_t at = S(floor(gsl_rng_uniform(rr.g) * fs_time_to_s(span)));
            uint64_t node = gsl_rng_uniform_int(rr.g, nodes);
            fs_time_t up = at + S(1 + floor(gsl_rng_uniform(rr.g) * 600));
            assert_int_equal(fs_model_module_event(m, f->id, at, FS_PRIO_FAILURE, node << 1, NULL), 0);
            assert_int_equal(fs_model_module_event(m, f->id, up, FS_PRIO_REPAIR, node << 1 | 1, NULL), 0);
        }
    }
    if (speeds) {
        assert_int_equal(fs_model_add_module(m, &speeds_ops, NULL, &id), 0);
        for (int k = 0; k < 200; k++) {
            fs_time_t at = S(floor(gsl_rng_uniform(rr.g) * fs_time_to_s(span)));
            uint64_t node = gsl_rng_uniform_int(rr.g, nodes);
            fs_time_t back = at + S(1 + floor(gsl_rng_uniform(rr.g) * 36000));
            assert_int_equal(fs_model_module_event(m, id, at, FS_PRIO_FAILURE, node << 8 | 5, NULL), 0);
            assert_int_equal(fs_model_module_event(m, id, back, FS_PRIO_REPAIR, node << 8 | 10, NULL), 0);
        }
    }
    fs_rng_release(&rr);
    if (fs_model_run(m, NULL, NULL, &err))
        fail_msg("run: %s", err.msg);
    fs_run_totals_t t;
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    fs_model_destroy(m);
    fs_source_destroy(src);
}

/* SRTF's plan (fs_order_sjf.c: the list kept between passes, linear keys)
 * against the slow path's collection and sort at every pass (the old
 * algorithm), job by job: oracle and user run times (estimates above and
 * below the run time: keys that reach 0 and tie), best effort and strict,
 * checkpoints kept or not, restart_cost (a key that moves at a start),
 * recovery checkpoints (keys that are not linear), stragglers (rates that
 * change), failures; whole-second times, so that keys tie often. */
static void test_srtf_fast_equals_slow(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    enum { NJ = 600 };
    static fs_job_t jobs[NJ];
    static fs_test_rows_t fast, slow;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static const struct {
        int oracle, under, strict, ckpt, restart, rec_ckpt, speeds;
        uint32_t nodes, gpn;
        double gap;         /* s: 5 a deep queue; 100 and 200 queues that empty */
    } C[] = {
        {1, 0, 0, 1, 0, 0, 0, 16, 2, 5},
        {0, 0, 0, 1, 0, 0, 0, 16, 2, 100},
        {0, 1, 0, 1, 0, 0, 0, 16, 2, 200},
        {1, 0, 0, 1, 0, 0, 0, 16, 2, 150},
        {0, 1, 1, 0, 0, 0, 0, 8, 4, 100},
        {1, 0, 1, 60, 0, 0, 0, 8, 4, 150},
        {0, 0, 0, 60, 30, 0, 0, 16, 2, 100},
        {1, 0, 0, 0, 10, 0, 0, 32, 1, 150},
        {1, 0, 0, 1, 900, 0, 0, 16, 2, 150},
        {0, 0, 0, 1, 900, 0, 0, 16, 2, 200},
        {0, 1, 0, 1, 0, 1, 0, 16, 2, 150},
        {1, 0, 0, 1, 0, 0, 1, 16, 2, 150},
        {0, 1, 1, 1, 0, 0, 1, 8, 4, 100},
        {1, 1, 0, 1, 0, 0, 1, 16, 2, 5},
    };
    uint64_t restarts = 0;
    for (int seed = 0; seed < 2; seed++)
        for (size_t ci = 0; ci < sizeof C / sizeof C[0]; ci++)
            for (int fail = 0; fail < 2; fail++) {
                gen_est(jobs, NJ, 51 + (uint64_t)seed, C[ci].gap, C[ci].under);
                base_cfg(&cfg, &pool, C[ci].nodes, C[ci].gpn, FS_QUEUE_SRTF);
                cfg.scheduler.runtime = C[ci].oracle ? FS_RUNTIME_ORACLE : FS_RUNTIME_USER;
                cfg.scheduler.mode = C[ci].strict ? FS_FIFO_STRICT : FS_FIFO_BEST_EFFORT;
                cfg.scheduler.checkpoint_interval = S(C[ci].ckpt);
                cfg.scheduler.restart_cost = S(C[ci].restart);
                if (C[ci].rec_ckpt) {
                    cfg.recovery.checkpoint = FS_CKPT_FIXED;
                    cfg.recovery.interval = S(600);
                    cfg.recovery.write_cost = S(20);
                }
                srtf_run(&cfg, jobs, NJ, 1, fail ? 30 : 0, C[ci].speeds, &fast);
                srtf_run(&cfg, jobs, NJ, 0, fail ? 30 : 0, C[ci].speeds, &slow);
                char what[80];
                snprintf(what, sizeof what, "SRTF seed %d case %zu failures %d", seed, ci, fail);
                assert_int_equal(fast.n, NJ);
                assert_same(&fast, &slow, what);
                for (size_t i = 0; i < fast.n; i++)
                    restarts += fast.r[i].restarts;
            }
    assert_true(restarts > 1000);   /* preemptions happened, many */
    assert_int_equal(fs_alloc_live(), live0);
}

/* SRTF's plan under allocation failures: each run stops with FS_ENOMEM
 * and frees everything (or runs whole). */
static void test_srtf_out_of_memory(void **st)
{
    (void)st;
    enum { NJ = 40 };
    static fs_job_t jobs[NJ];
    static fs_test_rows_t rs;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    gen(jobs, NJ, 33, 2);
    base_cfg(&cfg, &pool, 4, 2, FS_QUEUE_SRTF);
    cfg.scheduler.checkpoint_interval = S(1);
    int failed = fs_test_alloc_sweep(&cfg, jobs, NJ, NULL, 0, &rs);
    assert_true(failed > 5);
}

/* 2D-LAS's fast path under allocation failures: every allocation of a
 * run fails in turn; each run stops with FS_ENOMEM and frees everything
 * (or, past the last allocation, runs whole). */
static void test_las_out_of_memory(void **st)
{
    (void)st;
    enum { NJ = 40 };
    static fs_job_t jobs[NJ];
    static fs_test_rows_t rs;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    gen(jobs, NJ, 31, 2);
    base_cfg(&cfg, &pool, 4, 2, FS_QUEUE_LAS);
    cfg.scheduler.tiresias.thresholds = "100,1000";
    cfg.scheduler.tiresias.promote_knob = 2;
    cfg.scheduler.checkpoint_interval = S(1);
    int failed = fs_test_alloc_sweep(&cfg, jobs, NJ, NULL, 0, &rs);
    assert_true(failed > 10);
}

/* Allocation failures in Slurm's bounded backfill with multifactor bands
 * (the band merge's heap, runs and stacks, the kept running ends, the
 * suffix minima, the blocked profile's blocks and directory) and in exact
 * conservative backfill: every failing allocation stops the run with
 * FS_ENOMEM, nothing leaks, and the run that succeeds ends every job. */
static void test_conservative_out_of_memory(void **st)
{
    (void)st;
    enum { NJ = 60 };
    static fs_job_t jobs[NJ];
    static fs_test_rows_t rs;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    gen(jobs, NJ, 41, 2);
    for (int exact = 0; exact < 2; exact++) {
        base_cfg(&cfg, &pool, 4, 4, exact ? FS_QUEUE_FIFO : FS_QUEUE_SLURM);
        slurm_cfg(&cfg, &W[0]);
        cfg.scheduler.backfill = FS_BACKFILL_CONSERVATIVE;
        cfg.scheduler.bf.mode = exact ? FS_BF_EXACT : FS_BF_SLURM;
        cfg.scheduler.bf.max_job_test = 10;
        cfg.scheduler.preemption = FS_PREEMPT_NONE;
        int failed = fs_test_alloc_sweep(&cfg, jobs, NJ, NULL, 0, &rs);
        assert_true(failed > 10);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_bands_equal_rebuild),
        cmocka_unit_test(test_slurm_loose_hand),
        cmocka_unit_test(test_slurm_loose_bounded_hand),
        cmocka_unit_test(test_npass_fast_equals_slow),
        cmocka_unit_test(test_bounded_fast_equals_slow),
        cmocka_unit_test(test_conservative_fast_equals_slow),
        cmocka_unit_test(test_conservative_one_queued),
        cmocka_unit_test(test_easy_overrun_fast_equals_slow),
        cmocka_unit_test(test_las_fast_equals_slow),
        cmocka_unit_test(test_las_out_of_memory),
        cmocka_unit_test(test_srtf_fast_equals_slow),
        cmocka_unit_test(test_srtf_out_of_memory),
        cmocka_unit_test(test_conservative_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
