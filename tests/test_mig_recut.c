/*
 * Dynamic MIG re-partitioning (issue 14, docs/mig.md "Re-partitioning in
 * the run", models/fs_migrecut.h).  Hand cases through the run model, times
 * exact (phase = reconfigure 60 s + gpu_ready 60 s = 120 s):
 *   - a pool cut all-7g.80gb and eight 1g.10gb pods: the lowest idle node is
 *     re-cut at the pods' arrival, the first seven start exactly 120 s
 *     later, the eighth waits for one of them: the re-cut GPU holds seven
 *     1g.10gb (mig-parted's all-1g.10gb count on H100-80GB); one re-cut,
 *     120 GPU-s reconfiguring, the same in gpu_s_down; /mig_layouts says
 *     "1g.10gb x7" from the decision, ready 120 s later;
 *   - a node with a running pod is never re-cut: the idle node is, and with
 *     no idle node the pod waits until the running one ends;
 *   - anti-thrashing with alternating demand (1g, 7g, 1g): decisions are
 *     min_interval apart, each pod starts phase after the later of its
 *     arrival and the end of the interval;
 *   - the cluster call: fs_cluster_mig_recut refuses an up or busy node and
 *     re-cuts a down one, the instance counters follow;
 *   - static MIG pools (no mig_repartition) keep their layouts;
 *   - the scenario key: its defaults, and a located error (FILE:LINE:COL)
 *     for a pool without a MIG layout;
 *   - random mixed demand (1g/2g/3g/7g pods of 1-3 instances): no pod holds
 *     a node across its re-cut or starts inside the phase, every instance
 *     index exists in the layout in force (/mig_layouts parsed back), and
 *     two runs give the same rows.
 * Mixed layouts (mig_repartition.layout: mixed, docs/mig.md "Mixed
 * layouts"):
 *   - the planner by hand: 2 x 1g.10gb on eight GPUs cut all-7g.80gb
 *     re-cuts GPU 0 only; a 3g pod and 1g pods share one GPU; more pods of
 *     p than one GPU holds take the GPUs with the fewest of p first;
 *   - the planner at random: every layout valid, its spec text read back
 *     to the same counts, only GPUs all-<p> would change too, the pods it
 *     serves fit in its instances;
 *   - in the run: a 7g pod after the 1g pods starts on the node being
 *     re-cut (all: it waits for another re-cut); a 3g and a 1g pod waiting
 *     together get one GPU, one re-cut (all: two nodes); a later pod is
 *     covered by the mixed node's spare instances;
 *   - random demand, layout all against mixed, drain none and wait: every
 *     layout applied is valid, no pod starts on a node between its cordon
 *     (or decision) and ready, and mixed re-cuts no more GPUs.
 * Every run also checks that the capacity states add up to capacity x time
 * (fs_test_run_src).
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
#include "models/fs_cluster.h"
#include "models/fs_mig.h"
#include "models/fs_migrecut.h"
#include "models/fs_model.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"

#define S(x) ((fs_time_t)((x) * 1e6))

static fs_job_t job(uint64_t id, double submit, uint32_t gpus, double dur, const char *mig)
{
    fs_job_t j;
    fs_job_init(&j);
    j.id = id;
    j.submit = S(submit);
    j.gpus = gpus;
    j.duration = S(dur);
    j.mig = fs_mig_code_find(mig, strlen(mig));
    assert_true(j.mig > 0);
    j.gpu_milli = fs_mig_code_milli(j.mig);
    return j;
}

typedef struct rows {
    fs_test_rows_t jobs;
    fs_interval_row_t iv[512];
    size_t n_iv;
    fs_mig_layout_row_t ml[512];
    size_t n_ml;
} rows_t;

static int on_interval(void *ud, const fs_interval_row_t *row)
{
    rows_t *r = ud;
    if (r->n_iv < 512)
        r->iv[r->n_iv++] = *row;
    return 0;
}

static int on_layout(void *ud, const fs_mig_layout_row_t *row)
{
    rows_t *r = ud;
    if (r->n_ml < 512)
        r->ml[r->n_ml++] = *row;
    return 0;
}

static int on_job(void *ud, const fs_job_row_t *row)
{
    rows_t *r = ud;
    return fs_test_collect(&r->jobs, row);
}

/* A pool of H100s cut `mig`, re-partitioning with reconfigure 60 s,
 * gpu_ready 60 s and the given min_interval. */
static void cfg_recut(fs_config_t *cfg, fs_pool_cfg_t *pool, uint32_t nodes, uint32_t gpn,
                      const char *mig, double min_interval)
{
    fs_test_base_cfg(cfg, pool, nodes, gpn, FS_QUEUE_FIFO);
    pool->mig = (char *)mig;
    pool->mig_recut_given = 1;
    pool->mig_recut = 1;
    pool->mig_reconfigure = S(60);
    pool->mig_gpu_ready = S(60);
    pool->mig_min_interval = S(min_interval);
}

static void run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, rows_t *r,
                fs_run_totals_t *t)
{
    fs_test_rows_free(&r->jobs);
    memset(r, 0, sizeof *r);
    fs_sink_t sink = {.job = on_job, .ud = r, .interval = on_interval, .mig_layout = on_layout};
    fs_test_run_cfg(cfg, jobs, n, &sink, t);
}

static const fs_job_row_t *row_of(rows_t *r, uint64_t id)
{
    const fs_job_row_t *j = fs_test_find(&r->jobs, id);
    assert_non_null(j);
    return j;
}

/* The node of job id's first interval. */
static uint32_t node_of(const rows_t *r, uint64_t id)
{
    for (size_t i = 0; i < r->n_iv; i++)
        if (r->iv[i].job == id)
            return r->iv[i].node;
    fail_msg("job %llu has no interval", (unsigned long long)id);
    return 0;
}

/* all-7g.80gb, one node of one GPU, eight 1g.10gb pods at 5 s for 100 s. */
static void test_first_recut(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    static rows_t r;
    fs_run_totals_t t;
    cfg_recut(&cfg, &pool, 1, 1, "all-7g.80gb", 600);
    fs_job_t jobs[8];
    for (unsigned i = 0; i < 8; i++)
        jobs[i] = job(i + 1, 5, 1, 100, "1g.10gb");
    run(&cfg, jobs, 8, &r, &t);
    assert_int_equal(r.jobs.n, 8);
    unsigned at125 = 0, at225 = 0;
    for (size_t i = 0; i < r.jobs.n; i++) {
        assert_int_equal(r.jobs.r[i].state, FS_STATE_COMPLETED);
        at125 += r.jobs.r[i].start == 125;  /* 5 + 60 + 60 */
        at225 += r.jobs.r[i].start == 225;
    }
    assert_int_equal(at125, 7);             /* seven instances on the re-cut GPU */
    assert_int_equal(at225, 1);
    assert_int_equal(t.mig_recuts, 1);
    assert_true(t.gpu_s_mig_reconfig == 120.0);
    assert_true(t.gpu_s_down == 120.0);     /* the phase is capacity `down`, nothing else */
    assert_int_equal(r.n_ml, 1);
    assert_true(r.ml[0].time == 5 && r.ml[0].ready == 125);
    assert_int_equal(r.ml[0].node, 0);
    assert_int_equal(r.ml[0].gpu, 0);
    assert_string_equal(r.ml[0].layout, "1g.10gb x7");
    /* instance indexes 0..6 of the new layout, each used */
    unsigned seen = 0;
    for (size_t i = 0; i < r.n_iv; i++) {
        assert_true(r.iv[i].gpu_instance >= 0 && r.iv[i].gpu_instance < 7);
        seen |= 1u << r.iv[i].gpu_instance;
    }
    assert_int_equal(seen, 0x7f);
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Two nodes of two GPUs: a 7g pod runs on node 0 (0..1000 s); 1g pods at
 * 10 s re-cut node 1 (the idle one), never node 0; 14 instances there. */
static void test_busy_never_cut(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    static rows_t r;
    fs_run_totals_t t;
    cfg_recut(&cfg, &pool, 2, 2, "all-7g.80gb", 600);
    fs_job_t jobs[16];
    jobs[0] = job(1, 0, 1, 1000, "7g.80gb");
    for (unsigned i = 1; i < 16; i++)   /* 15 pods: 14 on node 1, one waits */
        jobs[i] = job(i + 1, 10, 1, 100, "1g.10gb");
    run(&cfg, jobs, 16, &r, &t);
    assert_true(row_of(&r, 1)->start == 0 && row_of(&r, 1)->end == 1000);
    assert_int_equal(node_of(&r, 1), 0);
    unsigned at130 = 0;
    for (uint64_t id = 2; id <= 16; id++) {
        at130 += row_of(&r, id)->start == 130;
        if (row_of(&r, id)->start == 130)
            assert_int_equal(node_of(&r, id), 1);
    }
    assert_int_equal(at130, 14);
    assert_int_equal(t.mig_recuts, 1);
    assert_true(t.gpu_s_mig_reconfig == 2 * 120.0);
    assert_int_equal(r.n_ml, 2);
    for (size_t i = 0; i < r.n_ml; i++)
        assert_int_equal(r.ml[i].node, 1);

    /* one node: the 1g pod waits for the 7g one to end, then the re-cut */
    cfg_recut(&cfg, &pool, 1, 1, "all-7g.80gb", 600);
    fs_job_t two[] = {job(1, 0, 1, 1000, "7g.80gb"), job(2, 10, 1, 100, "1g.10gb")};
    run(&cfg, two, 2, &r, &t);
    assert_true(row_of(&r, 1)->end == 1000);
    assert_true(row_of(&r, 2)->start == 1120);
    assert_int_equal(t.mig_recuts, 1);
    assert_true(r.n_ml == 1 && r.ml[0].time == 1000);
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* One node of one GPU, min_interval 600 s: 1g at 0 (cut at 0, runs
 * 120..130), 7g at 200 (cut at 600, runs 720..730), 1g at 800 (cut at
 * 1200, starts 1320). */
static void test_anti_thrashing(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    static rows_t r;
    fs_run_totals_t t;
    cfg_recut(&cfg, &pool, 1, 1, "all-7g.80gb", 600);
    fs_job_t jobs[] = {job(1, 0, 1, 10, "1g.10gb"), job(2, 200, 1, 10, "7g.80gb"),
                       job(3, 800, 1, 10, "1g.10gb")};
    run(&cfg, jobs, 3, &r, &t);
    assert_true(row_of(&r, 1)->start == 120);
    assert_true(row_of(&r, 2)->start == 720);
    assert_true(row_of(&r, 3)->start == 1320);
    assert_int_equal(t.mig_recuts, 3);
    assert_true(t.gpu_s_mig_reconfig == 360.0);
    assert_int_equal(r.n_ml, 3);
    assert_true(r.ml[0].time == 0 && r.ml[1].time == 600 && r.ml[2].time == 1200);
    assert_string_equal(r.ml[1].layout, "7g.80gb");
    for (size_t i = 1; i < r.n_ml; i++)
        assert_true(r.ml[i].time - r.ml[i - 1].time >= 600);

    /* min_interval 0: the same demand re-cuts at once */
    cfg_recut(&cfg, &pool, 1, 1, "all-7g.80gb", 0);
    run(&cfg, jobs, 3, &r, &t);
    assert_true(row_of(&r, 2)->start == 320 && row_of(&r, 3)->start == 920);
    assert_int_equal(t.mig_recuts, 3);
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- draining a busy node (mig_repartition.drain) ---------------------------- */

static void cfg_drain(fs_config_t *cfg, fs_pool_cfg_t *pool, uint32_t nodes, uint32_t gpn,
                      const char *mig, int drain, double timeout)
{
    cfg_recut(cfg, pool, nodes, gpn, mig, 600);
    pool->mig_drain = drain;
    pool->mig_drain_timeout = S(timeout);
}

static double share(const char *mig)
{
    return fs_mig_code_milli(fs_mig_code_find(mig, strlen(mig))) / 1000.0;
}

/* One node of two GPUs cut all-1g.10gb.  A (1g) runs 0..1000 on GPU 0, B
 * (3g.40gb) arrives at 10, C (1g) at 500.  none: the node is never idle
 * while 1g pods keep coming (B never starts before the horizon); wait: the
 * node is cordoned at 10 (C does not start there), re-cut at 1000 when A
 * ends, B starts at 1000 + 120; evict (30 s): A is preempted at 40, B
 * starts at 160, A restarts from its last checkpoint. */
static void test_drain_hand(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    static rows_t r;
    fs_run_totals_t t;
    fs_job_t abc[] = {job(1, 0, 1, 1000, "1g.10gb"), job(2, 10, 1, 100, "3g.40gb"),
                      job(3, 500, 1, 100, "1g.10gb")};

    /* none, a stream of 1g pods (every 500 s, 1000 s each) to the horizon */
    enum { NS = 40 };
    fs_job_t stream[NS + 1];
    stream[0] = job(1, 0, 1, 1000, "1g.10gb");
    stream[1] = job(1000, 10, 1, 100, "3g.40gb");
    for (unsigned i = 1; i < NS; i++)
        stream[i + 1] = job(i + 1, 500.0 * i, 1, 1000, "1g.10gb");
    cfg_drain(&cfg, &pool, 1, 2, "all-1g.10gb", FS_MIG_DRAIN_NONE, 30);
    cfg.until = FS_UNTIL_HORIZON;
    cfg.horizon = S(20000);
    run(&cfg, stream, NS + 1, &r, &t);
    assert_int_equal(row_of(&r, 1000)->state, FS_STATE_QUEUED);
    assert_true(isnan(row_of(&r, 1000)->start));
    assert_true(t.mig_recuts == 0 && t.mig_drains == 0 && t.gpu_s_mig_drain == 0);
    /* wait: the same stream, B starts when the pod running at 10 ends */
    cfg_drain(&cfg, &pool, 1, 2, "all-1g.10gb", FS_MIG_DRAIN_WAIT, 30);
    cfg.until = FS_UNTIL_HORIZON;
    cfg.horizon = S(20000);
    run(&cfg, stream, NS + 1, &r, &t);
    assert_true(row_of(&r, 1000)->start == 1120);
    assert_true(row_of(&r, 2)->start >= 1000);      /* 500: the node was cordoned */
    assert_true(t.mig_drains >= 1);

    /* wait: exact times and the idle GPU-s of the drain */
    cfg_drain(&cfg, &pool, 1, 2, "all-1g.10gb", FS_MIG_DRAIN_WAIT, 30);
    run(&cfg, abc, 3, &r, &t);
    assert_true(row_of(&r, 1)->start == 0 && row_of(&r, 1)->end == 1000);
    assert_true(row_of(&r, 2)->start == 1120);
    assert_true(row_of(&r, 3)->start == 1720);      /* re-cut back to 1g at 1000 + 600 */
    assert_int_equal(t.mig_drains, 1);
    assert_int_equal(t.mig_recuts, 2);
    assert_true(t.gpu_s_mig_drain == 990.0);        /* GPU 1 idle 10..1000 */
    assert_int_equal(t.preemptions, 0);
    assert_int_equal(r.n_ml, 4);
    assert_true(r.ml[0].time == 1000 && r.ml[0].ready == 1120 && r.ml[0].cordoned == 10);
    assert_string_equal(r.ml[0].layout, "3g.40gb x2");
    assert_true(r.ml[2].time == 1600 && isnan(r.ml[2].cordoned));
    /* the cordoned GPU counts down; busy, waiting and idle stay >= 0
     * (fs_test_run_cfg checked the partition) */
    assert_true(t.gpu_s_down >= 990.0 + 2 * 240.0);

    /* evict after 30 s: A loses its 40 s of work */
    cfg_drain(&cfg, &pool, 1, 2, "all-1g.10gb", FS_MIG_DRAIN_EVICT, 30);
    run(&cfg, abc, 3, &r, &t);
    assert_true(row_of(&r, 2)->start == 160);       /* 10 + 30 + 120 */
    assert_int_equal(row_of(&r, 1)->preemptions, 1);
    assert_true(fabs(row_of(&r, 1)->preempt_lost_gpu_s - share("1g.10gb") * 40) < 1e-9);
    assert_true(row_of(&r, 1)->end == 760 + 1000);  /* re-cut to 1g at 40 + 600 */
    assert_true(row_of(&r, 3)->start == 760);
    assert_int_equal(t.preemptions, 1);
    assert_int_equal(t.mig_drains, 1);
    assert_true(t.gpu_s_mig_drain == 30.0);
    assert_true(r.ml[0].time == 40 && r.ml[0].cordoned == 10);
    /* with checkpoints every 25 s it loses 15 s */
    cfg.scheduler.checkpoint_interval = S(25);
    run(&cfg, abc, 3, &r, &t);
    assert_true(fabs(row_of(&r, 1)->preempt_lost_gpu_s - share("1g.10gb") * 15) < 1e-9);
    assert_true(row_of(&r, 1)->end == 760 + 975);
    /* A ends at 25, before the timeout: no eviction, the re-cut at 25 */
    fs_job_t early[] = {job(1, 0, 1, 25, "1g.10gb"), job(2, 10, 1, 100, "3g.40gb")};
    cfg_drain(&cfg, &pool, 1, 2, "all-1g.10gb", FS_MIG_DRAIN_EVICT, 30);
    run(&cfg, early, 2, &r, &t);
    assert_true(row_of(&r, 2)->start == 145);
    assert_int_equal(t.preemptions, 0);
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Two nodes of one GPU cut all-7g.80gb: A1 runs 0..1000 on node 0, A2
 * 8..2008 on node 1, B (1g) arrives at 10.  wait drains node 0 (its last
 * pod ends first); evict drains node 1 (2 GPU-s lost, not 10). */
static void test_drain_choice(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    static rows_t r;
    fs_run_totals_t t;
    fs_job_t jobs[] = {job(1, 0, 1, 1000, "7g.80gb"), job(2, 8, 1, 2000, "7g.80gb"),
                       job(3, 10, 1, 100, "1g.10gb")};
    cfg_drain(&cfg, &pool, 2, 1, "all-7g.80gb", FS_MIG_DRAIN_WAIT, 30);
    run(&cfg, jobs, 3, &r, &t);
    assert_true(node_of(&r, 1) == 0 && node_of(&r, 2) == 1);
    assert_true(r.n_ml == 1 && r.ml[0].node == 0 && r.ml[0].time == 1000);
    assert_true(row_of(&r, 3)->start == 1120);
    assert_int_equal(t.mig_drains, 1);      /* one node for the one pod */
    cfg_drain(&cfg, &pool, 2, 1, "all-7g.80gb", FS_MIG_DRAIN_EVICT, 30);
    run(&cfg, jobs, 3, &r, &t);
    assert_true(r.ml[0].node == 1 && r.ml[0].time == 40);
    assert_true(row_of(&r, 3)->start == 160);
    assert_int_equal(row_of(&r, 2)->preemptions, 1);
    assert_int_equal(row_of(&r, 1)->preemptions, 0);
    assert_true(row_of(&r, 1)->end == 1000);
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Cancellation: evict (300 s) drains node 1 for B (A2 lost less), but node
 * 0 goes idle at 100 and is re-cut for B: the drain is cancelled (node 1
 * uncordoned, A2 never evicted), and a 7g pod at 1100 starts on node 1. */
static void test_drain_cancel(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    static rows_t r;
    fs_run_totals_t t;
    fs_job_t jobs[] = {job(1, 0, 1, 100, "7g.80gb"), job(2, 5, 1, 1000, "7g.80gb"),
                       job(3, 10, 1, 100, "1g.10gb"), job(4, 1100, 1, 10, "7g.80gb")};
    cfg_drain(&cfg, &pool, 2, 1, "all-7g.80gb", FS_MIG_DRAIN_EVICT, 300);
    run(&cfg, jobs, 4, &r, &t);
    assert_true(node_of(&r, 1) == 0 && node_of(&r, 2) == 1);
    assert_int_equal(t.mig_drains, 1);
    assert_int_equal(t.mig_recuts, 1);
    assert_true(r.n_ml == 1 && r.ml[0].node == 0 && r.ml[0].time == 100 &&
                isnan(r.ml[0].cordoned));
    assert_true(row_of(&r, 3)->start == 220);
    assert_int_equal(t.preemptions, 0);
    assert_true(row_of(&r, 2)->end == 1005);
    assert_true(row_of(&r, 4)->start == 1100 && node_of(&r, 4) == 1);
    assert_true(t.gpu_s_mig_drain == 0);    /* its one GPU held A2 all along */
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The invariants under random mixed demand with drains (wait, then evict
 * 60 s): every pod completes, no pod is placed on a node between its
 * cordon and its re-cut, no pod runs on a node across its re-cut, some
 * drains happen, and the same jobs give the same rows. */
static void drain_run(rows_t *r, fs_run_totals_t *t, const fs_job_t *jobs, size_t n, int drain)
{
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    cfg_drain(&cfg, &pool, 3, 2, "all-balanced", drain, 60);
    cfg.cluster.pools[0].mig_min_interval = S(300);
    run(&cfg, jobs, n, r, t);
}

static void test_drain_random(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const char *prof[] = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};
    static const unsigned inst[] = {7, 3, 2, 1};
    enum { N = 80 };
    fs_job_t jobs[N];
    uint64_t x = 777;
    double at = 0;
    for (unsigned i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned p = (unsigned)(x >> 33) % 4;
        at += (double)((x >> 20) % 150);
        unsigned k = 1 + (unsigned)((x >> 40) % 3);
        if (k > 2 * inst[p])
            k = 2 * inst[p];
        jobs[i] = job(i + 1, at, k, 100 + (double)((x >> 50) % 900), prof[p]);
    }
    static rows_t a, b;
    for (int drain = FS_MIG_DRAIN_WAIT; drain <= FS_MIG_DRAIN_EVICT; drain++) {
        fs_run_totals_t ta, tb;
        drain_run(&a, &ta, jobs, N, drain);
        drain_run(&b, &tb, jobs, N, drain);
        assert_int_equal(a.jobs.n, N);
        assert_true(a.n_iv < 512 && a.n_ml < 512);
        print_message("drain %d: %llu drains, %llu re-cuts, %llu preemptions, %.0f GPU-s idle "
                      "by the drains\n", drain, (unsigned long long)ta.mig_drains,
                      (unsigned long long)ta.mig_recuts, (unsigned long long)ta.preemptions,
                      ta.gpu_s_mig_drain);
        assert_true(ta.mig_drains > 2 && ta.mig_drains == tb.mig_drains);
        assert_true(ta.gpu_s_mig_drain == tb.gpu_s_mig_drain && ta.gpu_s_mig_drain > 0);
        assert_true(ta.gpu_s_mig_drain + ta.gpu_s_mig_reconfig <= ta.gpu_s_down * (1 + 1e-12));
        if (drain == FS_MIG_DRAIN_EVICT)
            assert_true(ta.preemptions > 0);
        assert_true(a.n_ml == b.n_ml && a.n_iv == b.n_iv);
        for (size_t i = 0; i < a.jobs.n; i++) {
            const fs_job_row_t *x1 = &a.jobs.r[i], *y1 = &b.jobs.r[i];
            assert_int_equal(x1->state, FS_STATE_COMPLETED);
            assert_true(x1->id == y1->id && x1->start == y1->start && x1->end == y1->end);
        }
        size_t drained = 0;
        for (size_t k = 0; k < a.n_ml; k++) {
            const fs_mig_layout_row_t *m = &a.ml[k];
            drained += !isnan(m->cordoned);
            for (size_t i = 0; i < a.n_iv; i++) {
                const fs_interval_row_t *v = &a.iv[i];
                if (v->node != m->node)
                    continue;
                if (v->start < m->time && v->end > m->time)
                    fail_msg("drain %d: job %llu runs on node %u across its re-cut at %g", drain,
                             (unsigned long long)v->job, v->node, m->time);
                if (!isnan(m->cordoned) && v->start >= m->cordoned && v->start < m->ready)
                    fail_msg("drain %d: job %llu placed on node %u at %g, cordoned %g..%g", drain,
                             (unsigned long long)v->job, v->node, v->start, m->cordoned,
                             m->ready);
            }
        }
        assert_true(drained > 0);
    }
    fs_test_rows_free(&a.jobs);
    fs_test_rows_free(&b.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The cluster call itself, and a static MIG pool beside a re-partitioning one. */
static void test_cluster_recut(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    cfg_recut(&cfg, &pool, 2, 2, "all-7g.80gb", 600);
    fs_cluster_t c;
    fs_error_t err;
    assert_int_equal(fs_cluster_init(&c, &cfg.cluster, &err), 0);
    const fs_pool_t *p = &c.pools[0];
    assert_non_null(p->mig_glay);
    assert_int_equal(p->mig_total, 4);
    int pr = fs_mig_profile_of_code(p->mig, fs_mig_code_find("1g.10gb", 7));
    int p7 = fs_mig_profile_of_code(p->mig, fs_mig_code_find("7g.80gb", 7));
    assert_true(pr >= 0 && p7 >= 0);
    assert_int_equal(p->mig_cap[pr], 7);
    assert_int_equal(fs_cluster_mig_recut(&c, 0, (unsigned)pr), FS_EINVAL);  /* up */
    fs_placement_t pl;
    assert_int_equal(fs_cluster_mig_take(&c, 0, fs_mig_code_find("7g.80gb", 7), 1, &pl), 1);
    uint32_t busy = pl.one.node;
    fs_cluster_set_up(&c, busy, 0);
    assert_int_equal(fs_cluster_mig_recut(&c, busy, (unsigned)pr), FS_EINVAL);  /* held */
    fs_cluster_set_up(&c, busy, 1);
    uint32_t idle = busy == 0 ? 1 : 0;
    fs_cluster_set_up(&c, idle, 0);
    assert_int_equal(p->mig_free[p7], 1);      /* the busy node's other GPU */
    assert_int_equal(fs_cluster_mig_recut(&c, idle, (unsigned)pr), 14);
    assert_int_equal(p->mig_total, 2 + 14);
    assert_int_equal(p->mig_free[pr], 0);      /* still down */
    fs_cluster_set_up(&c, idle, 1);
    assert_int_equal(p->mig_free[pr], 14);
    assert_int_equal(fs_cluster_mig_layout(&c, idle, 1)->count[pr], 7);
    assert_int_equal(fs_cluster_mig_layout(&c, busy, 0)->count[p7], 1);
    assert_true(fs_cluster_mig_fits(&c, 0, fs_mig_code_find("1g.10gb", 7), 14));
    assert_false(fs_cluster_mig_fits(&c, 0, fs_mig_code_find("1g.10gb", 7), 15));
    /* a profile no GPU has now could still fit after a re-cut */
    assert_true(fs_cluster_mig_could_fit(&c, 0, fs_mig_code_find("3g.40gb", 7), 4));
    assert_false(fs_cluster_mig_could_fit(&c, 0, fs_mig_code_find("3g.40gb", 7), 5));
    fs_cluster_free(&c, &pl);
    fs_placement_release(&pl);
    fs_cluster_release(&c);

    /* without mig_repartition: one static layout, a 1g pod is rejected */
    fs_test_base_cfg(&cfg, &pool, 1, 1, FS_QUEUE_FIFO);
    pool.mig = "all-7g.80gb";
    static rows_t r;
    fs_run_totals_t t;
    fs_job_t one[] = {job(1, 0, 1, 10, "1g.10gb")};
    run(&cfg, one, 1, &r, &t);
    assert_int_equal(row_of(&r, 1)->state, FS_STATE_REJECTED);
    assert_int_equal(t.mig_recuts, 0);
    assert_int_equal(r.n_ml, 0);
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

static const char *yaml_head =
    "horizon: 1h\nworkload:\n  synthetic:\n    arrivals: {rate: 10/h}\n"
    "    gpus: {1: 1}\n    duration: {dist: exponential, mean: 1h}\n"
    "cluster:\n"
    "  pools:\n"
    "    - name: p\n"
    "      gpu: H100\n"
    "      nodes: 2\n"
    "      gpus_per_node: 2\n";

/* The scenario key: defaults, and errors located at the block. */
static void test_scenario(void **st)
{
    (void)st;
    char y[1024];
    fs_config_t cfg;
    fs_error_t err;
    snprintf(y, sizeof y, "%s      mig: all-7g.80gb\n      mig_repartition: {enabled: true}\n",
             yaml_head);
    if (fs_scenario_load_string("t.yaml", y, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    const fs_pool_cfg_t *p = &cfg.cluster.pools[0];
    assert_true(p->mig_recut_given && p->mig_recut);
    assert_true(p->mig_reconfigure == S(60) && p->mig_gpu_ready == S(60) &&
                p->mig_min_interval == S(600));
    fs_config_release(&cfg);
    snprintf(y, sizeof y,
             "%s      mig: all-7g.80gb\n      mig_repartition:\n        reconfigure: 30s\n"
             "        min_interval: 1h\n", yaml_head);
    if (fs_scenario_load_string("t.yaml", y, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    p = &cfg.cluster.pools[0];
    assert_true(p->mig_recut && p->mig_reconfigure == S(30) && p->mig_min_interval == S(3600));
    fs_config_release(&cfg);
    snprintf(y, sizeof y, "%s      mig_repartition: {reconfigure: 30s}\n", yaml_head);
    fs_test_expect_error(y, "t.yaml:13:24:", "expected a MIG pool to re-partition");
    snprintf(y, sizeof y, "%s      mig: all-disabled\n      mig_repartition: {gpu_ready: 1m}\n",
             yaml_head);
    fs_test_expect_error(y, "t.yaml:14:24:", "not all-disabled");
    snprintf(y, sizeof y, "%s      mig: all-7g.80gb\n      mig_repartition: {reconfigure: -1s}\n",
             yaml_head);
    fs_test_expect_error(y, "t.yaml:14:", "reconfigure");
    /* the drain: default none, 30 s; a bad mode and a negative timeout */
    snprintf(y, sizeof y,
             "%s      mig: all-7g.80gb\n      mig_repartition: {drain: evict, drain_timeout: 2m}\n",
             yaml_head);
    if (fs_scenario_load_string("t.yaml", y, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    p = &cfg.cluster.pools[0];
    assert_true(p->mig_drain == FS_MIG_DRAIN_EVICT && p->mig_drain_timeout == S(120));
    fs_config_release(&cfg);
    snprintf(y, sizeof y, "%s      mig: all-7g.80gb\n      mig_repartition: {}\n", yaml_head);
    if (fs_scenario_load_string("t.yaml", y, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    p = &cfg.cluster.pools[0];
    assert_true(p->mig_drain == FS_MIG_DRAIN_NONE && p->mig_drain_timeout == S(30));
    assert_int_equal(p->mig_layout, FS_MIG_LAYOUT_ALL);
    fs_config_release(&cfg);
    snprintf(y, sizeof y, "%s      mig: all-7g.80gb\n      mig_repartition: {drain: sometimes}\n",
             yaml_head);
    fs_test_expect_error(y, "t.yaml:14:32:", "not one of: none, wait, evict");
    snprintf(y, sizeof y,
             "%s      mig: all-7g.80gb\n      mig_repartition: {drain: evict, drain_timeout: -5s}\n",
             yaml_head);
    fs_test_expect_error(y, "t.yaml:14:", "drain_timeout");
    /* the layout: mixed; a bad value located at the value */
    snprintf(y, sizeof y, "%s      mig: all-7g.80gb\n      mig_repartition: {layout: mixed}\n",
             yaml_head);
    if (fs_scenario_load_string("t.yaml", y, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(cfg.cluster.pools[0].mig_layout, FS_MIG_LAYOUT_MIXED);
    fs_config_release(&cfg);
    snprintf(y, sizeof y, "%s      mig: all-7g.80gb\n      mig_repartition: {layout: balanced}\n",
             yaml_head);
    fs_test_expect_error(y, "t.yaml:14:33:", "not one of: all, mixed");
    /* enabled: false keeps the static layout (loads, no per-GPU layouts) */
    snprintf(y, sizeof y, "%s      mig: all-7g.80gb\n      mig_repartition: {enabled: false}\n",
             yaml_head);
    assert_int_equal(fs_test_create(y, &err), 0);
}

/* Random mixed demand (profiles 1g, 2g, 3g, 7g; 1-3 instances) on three
 * nodes of two GPUs, all-balanced at first: every pod completes, no pod
 * holds a node across one of its re-cut decisions or during the phase
 * after it, every instance index is one of the layout in force, and the
 * same jobs give the same rows. */
static void random_run(rows_t *r, fs_run_totals_t *t, fs_job_t *jobs, size_t n)
{
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    cfg_recut(&cfg, &pool, 3, 2, "all-balanced", 300);
    run(&cfg, jobs, n, r, t);
}

static void test_random_mix(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const char *prof[] = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};
    static const unsigned inst[] = {7, 3, 2, 1};     /* per GPU after a re-cut */
    enum { N = 60 };
    fs_job_t jobs[N];
    uint64_t x = 12345;
    double at = 0;
    for (unsigned i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned p = (unsigned)(x >> 33) % 4;
        at += (double)((x >> 20) % 400);
        unsigned k = 1 + (unsigned)((x >> 40) % 3);
        if (k > 2 * inst[p])
            k = 2 * inst[p];
        jobs[i] = job(i + 1, at, k, 50 + (double)((x >> 50) % 500), prof[p]);
    }
    static rows_t a, b;
    fs_run_totals_t ta, tb;
    random_run(&a, &ta, jobs, N);
    random_run(&b, &tb, jobs, N);
    assert_int_equal(a.jobs.n, N);
    assert_true(ta.mig_recuts > 2 && ta.mig_recuts == tb.mig_recuts);
    assert_true(ta.gpu_s_mig_reconfig == tb.gpu_s_mig_reconfig);
    assert_true(ta.gpu_s_mig_reconfig <= ta.gpu_s_down);
    assert_true(a.n_ml == b.n_ml && a.n_iv == b.n_iv && a.n_iv < 512 && a.n_ml < 512);
    for (size_t i = 0; i < a.jobs.n; i++) {
        const fs_job_row_t *x1 = &a.jobs.r[i], *y1 = &b.jobs.r[i];
        assert_int_equal(x1->state, FS_STATE_COMPLETED);
        assert_true(x1->id == y1->id && x1->start == y1->start && x1->end == y1->end);
    }
    for (size_t i = 0; i < a.n_iv; i++) {
        const fs_interval_row_t *v = &a.iv[i];
        /* the layout of its GPU in force at its start: the last row at or before it */
        unsigned ninst = 4;     /* all-balanced on H100: 1g.10gb x2, 2g.20gb, 3g.40gb */
        for (size_t k = 0; k < a.n_ml; k++) {
            const fs_mig_layout_row_t *m = &a.ml[k];
            if (m->node != v->node)
                continue;
            if (v->start < m->time && v->end > m->time)
                fail_msg("job %llu holds node %u across its re-cut at %g",
                         (unsigned long long)v->job, v->node, m->time);
            if (v->start >= m->time && v->start < m->ready)
                fail_msg("job %llu starts on node %u at %g, inside the phase %g..%g",
                         (unsigned long long)v->job, v->node, v->start, m->time, m->ready);
            if (m->gpu == v->gpu && m->time <= v->start) {
                fs_mig_spec_t spec;
                const fs_mig_model_t *mm = fs_mig_model_lookup("H100", NULL);
                assert_int_equal(fs_mig_layout_parse(mm, m->layout, &spec, NULL, NULL), 0);
                ninst = 0;
                for (unsigned q = 0; q < mm->nprofiles; q++)
                    ninst += spec.count[q];
            }
        }
        assert_true(v->gpu_instance >= 0 && (unsigned)v->gpu_instance < ninst);
    }
    fs_test_rows_free(&a.jobs);
    fs_test_rows_free(&b.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}


/* ---- mixed layouts (mig_repartition.layout: mixed) ---------------------------- */

static const fs_mig_model_t *h100(void)
{
    const fs_mig_model_t *m = fs_mig_model_lookup("H100", NULL);
    assert_non_null(m);
    return m;
}

static unsigned prof(const fs_mig_model_t *m, const char *name)
{
    int p = fs_mig_profile_find(m, name, strlen(name));
    assert_true(p >= 0);
    return (unsigned)p;
}

static void layout_text(const fs_mig_model_t *m, const fs_mig_layout_t *l, char *buf, size_t n)
{
    fs_mig_spec_t spec;
    fs_mig_spec_of(l, &spec);
    fs_mig_spec_format(m, &spec, buf, n);
}

static void expect_layout(const fs_mig_model_t *m, const fs_mig_layout_t *l, const char *want)
{
    char buf[128];
    assert_int_equal(fs_mig_layout_check(m, l, NULL), 0);
    layout_text(m, l, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void cut_all(const fs_mig_model_t *m, fs_mig_layout_t *l, uint32_t gpn, const char *text)
{
    fs_mig_spec_t spec;
    assert_int_equal(fs_mig_layout_parse(m, text, &spec, NULL, NULL), 0);
    for (uint32_t g = 0; g < gpn; g++)
        assert_int_equal(fs_mig_layout_build(m, &spec, &l[g], NULL), 0);
}

/* The planner by hand on eight H100s. */
static void test_mixed_plan_hand(void **st)
{
    (void)st;
    const fs_mig_model_t *m = h100();
    unsigned p1 = prof(m, "1g.10gb"), p3 = prof(m, "3g.40gb"), p7 = prof(m, "7g.80gb");
    fs_mig_layout_t cur[8], out[8];
    uint8_t take[4];
    /* all-7g.80gb, one pod of 2 x 1g.10gb: GPU 0 only, 1g.10gb x7 */
    cut_all(m, cur, 8, "all-7g.80gb");
    fs_migrecut_demand_t one[] = {{(uint8_t)p1, 2}};
    assert_int_equal(fs_migrecut_plan(m, 8, cur, one, 1, out, take), 1);
    expect_layout(m, &out[0], "1g.10gb x7");
    for (unsigned g = 1; g < 8; g++)
        expect_layout(m, &out[g], "7g.80gb");
    assert_int_equal(take[0], 1);
    /* a 3g pod, then pods of 2 x 1g.10gb, 3 x 1g.10gb and a 7g: the 3g and
     * the first 1g pod share GPU 0 (3g at slot 0, 1g at 4 and 5), the
     * second 1g pod does not fit whole in what is left (slot 6): not
     * served; the 7g pod finds the kept GPUs; the rest of GPU 0 stays free
     * (no second 3g fits) */
    fs_migrecut_demand_t mix[] = {{(uint8_t)p3, 1}, {(uint8_t)p1, 2}, {(uint8_t)p1, 3},
                                  {(uint8_t)p7, 1}};
    assert_int_equal(fs_migrecut_plan(m, 8, cur, mix, 4, out, take), 1);
    expect_layout(m, &out[0], "1g.10gb x2, 3g.40gb");
    assert_true(out[0].inst[0].profile == p3 && out[0].inst[0].start == 0);
    assert_true(out[0].inst[1].start == 4 && out[0].inst[2].start == 5);
    assert_true(take[0] && take[1] && !take[2] && take[3]);
    for (unsigned g = 1; g < 8; g++)
        expect_layout(m, &out[g], "7g.80gb");
    /* a 3g pod alone: GPU 0 as all-3g.40gb */
    assert_int_equal(fs_migrecut_plan(m, 8, cur, mix, 1, out, take), 1);
    expect_layout(m, &out[0], "3g.40gb x2");
    /* 9 x 1g.10gb: two GPUs; the second takes the 1g it needs (2) and the
     * rest of it more 1g (all-1g.10gb on both) */
    fs_migrecut_demand_t nine[] = {{(uint8_t)p1, 9}};
    assert_int_equal(fs_migrecut_plan(m, 8, cur, nine, 1, out, take), 2);
    expect_layout(m, &out[0], "1g.10gb x7");
    expect_layout(m, &out[1], "1g.10gb x7");
    expect_layout(m, &out[2], "7g.80gb");
    /* GPUs that already hold p are re-cut last: GPU 0 1g.10gb x3, GPU 1
     * 3g.40gb x2, the rest 7g; a pod of 8 x 1g.10gb: GPU 1 (no 1g, the
     * lowest such) is re-cut, 3 + 7 >= 8, GPU 0 keeps its layout (re-cut
     * lowest first, GPU 0 would give 7 and GPU 1 would be needed too) */
    cut_all(m, &cur[0], 1, "1g.10gb x3");
    cut_all(m, &cur[1], 1, "all-3g.40gb");
    fs_migrecut_demand_t eight[] = {{(uint8_t)p1, 8}};
    assert_int_equal(fs_migrecut_plan(m, 8, cur, eight, 1, out, take), 1);
    expect_layout(m, &out[0], "1g.10gb x3");
    expect_layout(m, &out[1], "1g.10gb x7");
    expect_layout(m, &out[2], "7g.80gb");
    /* more than the node can hold: refused */
    fs_migrecut_demand_t big[] = {{(uint8_t)p1, 57}};
    assert_int_equal(fs_migrecut_plan(m, 8, cur, big, 1, out, take), FS_EINVAL);
}

/* The planner at random: random current layouts on 1-8 GPUs of each MIG
 * model, random demand. */
static void test_mixed_plan_random(void **st)
{
    (void)st;
    uint64_t x = 4242;
#define RND(n) ((x = x * 6364136223846793005ull + 1442695040888963407ull), (unsigned)((x >> 33) % (n)))
    unsigned changed_mixed = 0, changed_all = 0;
    for (unsigned round = 0; round < 3000; round++) {
        const fs_mig_model_t *m = fs_mig_model((fs_mig_gpu_t)RND(FS_MIG_GPU_COUNT));
        uint32_t gpn = 1 + RND(8);
        fs_mig_layout_t cur[8], out[8];
        for (uint32_t g = 0; g < gpn; g++) {
            fs_mig_layout_clear(&cur[g]);
            for (unsigned t = RND(9); t > 0; t--)
                (void)fs_mig_place(m, &cur[g], RND(m->nprofiles), -1);
        }
        fs_migrecut_demand_t dem[6];
        uint8_t take[6];
        size_t n = 1 + RND(6);
        fs_mig_layout_t empty;
        fs_mig_layout_clear(&empty);
        for (size_t j = 0; j < n; j++) {
            dem[j].profile = (uint8_t)RND(m->nprofiles);
            unsigned cap = fs_mig_fits(m, &empty, dem[j].profile);
            dem[j].k = 1 + RND(j == 0 ? gpn * cap : 8);
        }
        unsigned p = dem[0].profile;
        unsigned have = 0;
        for (uint32_t g = 0; g < gpn; g++)
            have += cur[g].count[dem[0].profile];
        int ch = fs_migrecut_plan(m, gpn, cur, dem, n, out, take);
        /* the run plans only for a pod the node cannot serve now */
        assert_true(ch >= (have < dem[0].k) && (uint32_t)ch <= gpn);
        assert_int_equal(take[0], 1);
        unsigned fut[FS_MIG_MAX_PROFILES] = {0}, want[FS_MIG_MAX_PROFILES] = {0};
        for (uint32_t g = 0; g < gpn; g++) {
            fs_error_t err;
            if (fs_mig_layout_check(m, &out[g], &err))
                fail_msg("round %u GPU %u: %s", round, g, err.msg);
            /* the spec text reads back to the same counts */
            char buf[128];
            fs_mig_spec_t spec, back;
            fs_mig_spec_of(&out[g], &spec);
            fs_mig_spec_format(m, &spec, buf, sizeof buf);
            assert_int_equal(fs_mig_layout_parse(m, buf, &back, NULL, NULL), 0);
            assert_memory_equal(spec.count, back.count, sizeof spec.count);
            /* ... and a changed GPU builds to the same instances (the
             * exporter's view; kept ones stay as they were) */
            fs_mig_layout_t rebuilt;
            assert_int_equal(fs_mig_layout_build(m, &back, &rebuilt, NULL), 0);
            int canon = rebuilt.ninst == out[g].ninst && rebuilt.mem == out[g].mem &&
                        !memcmp(rebuilt.inst, out[g].inst, out[g].ninst * sizeof *out[g].inst);
            for (unsigned q = 0; q < FS_MIG_MAX_PROFILES; q++)
                fut[q] += out[g].count[q];
            /* a GPU that changes is one all-<p> changes too, and not one
             * that already holds as many of p as an empty GPU would */
            fs_mig_layout_t all;
            fs_mig_recut(m, &cur[g], 0, p, &all);
            int same = out[g].mem == cur[g].mem && out[g].ninst == cur[g].ninst &&
                       !memcmp(out[g].inst, cur[g].inst, cur[g].ninst * sizeof *cur[g].inst);
            int same_all = all.mem == cur[g].mem && all.ninst == cur[g].ninst &&
                           !memcmp(all.inst, cur[g].inst, cur[g].ninst * sizeof *cur[g].inst);
            if (!same)
                assert_true(!same_all && cur[g].count[p] < fs_mig_fits(m, &empty, p) && canon);
            changed_mixed += !same;
            changed_all += !same_all;
        }
        for (size_t j = 0; j < n; j++)
            if (take[j])
                want[dem[j].profile] += dem[j].k;
        for (unsigned q = 0; q < FS_MIG_MAX_PROFILES; q++)
            assert_true(want[q] <= fut[q]);
    }
#undef RND
    print_message("random plans: %u GPUs changed (mixed), %u (all)\n", changed_mixed, changed_all);
    assert_true(changed_mixed < changed_all);
}

static void cfg_mixed(fs_config_t *cfg, fs_pool_cfg_t *pool, uint32_t nodes, uint32_t gpn,
                      const char *mig, int mixed)
{
    cfg_recut(cfg, pool, nodes, gpn, mig, 600);
    pool->mig_layout = mixed ? FS_MIG_LAYOUT_MIXED : FS_MIG_LAYOUT_ALL;
}

/* One node of eight H100s cut all-7g.80gb: A (2 x 1g.10gb) at 5, B (7g)
 * at 10.  mixed: GPU 0 becomes 1g.10gb x7, B is covered by the seven
 * GPUs kept 7g.80gb and both start at 125, one row in /mig_layouts; all:
 * every GPU 1g.10gb x7, B waits for A to end (225) and min_interval (605),
 * a second re-cut. */
static void test_mixed_run_keep(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    static rows_t r;
    fs_run_totals_t t;
    fs_job_t jobs[] = {job(1, 5, 2, 100, "1g.10gb"), job(2, 10, 1, 50, "7g.80gb"),
                       job(3, 50, 5, 10, "1g.10gb")};
    cfg_mixed(&cfg, &pool, 1, 8, "all-7g.80gb", 1);
    run(&cfg, jobs, 3, &r, &t);
    assert_true(row_of(&r, 1)->start == 125 && row_of(&r, 2)->start == 125);
    assert_true(row_of(&r, 3)->start == 125);   /* covered: 5 of the 7 left after A */
    assert_int_equal(t.mig_recuts, 1);
    assert_true(t.gpu_s_mig_reconfig == 8 * 120.0);  /* the whole node is out */
    assert_int_equal(r.n_ml, 1);
    assert_true(r.ml[0].gpu == 0 && r.ml[0].time == 5 && r.ml[0].ready == 125);
    assert_string_equal(r.ml[0].layout, "1g.10gb x7");
    for (size_t i = 0; i < r.n_iv; i++)
        if (r.iv[i].job == 2)
            assert_true(r.iv[i].gpu >= 1);
        else
            assert_int_equal(r.iv[i].gpu, 0);

    cfg_mixed(&cfg, &pool, 1, 8, "all-7g.80gb", 0);
    run(&cfg, jobs, 3, &r, &t);
    assert_true(row_of(&r, 1)->start == 125 && row_of(&r, 3)->start == 125);
    assert_true(row_of(&r, 2)->start == 725);
    assert_int_equal(t.mig_recuts, 2);
    assert_int_equal(r.n_ml, 16);

    /* the kept GPUs' instances cover later pods too: two nodes of two GPUs
     * all-7g.80gb, drain wait, min_interval 0; Y (14 x 1g.10gb, long) cuts
     * node 0 at 0; A (3g.40gb) at 200 cuts node 1's GPU 0 (GPU 1 keeps
     * 7g.80gb); B (7g) at 210 finds no 7g in service but is covered by
     * node 1's GPU 1: no drain of node 0, B starts at 320 on GPU 1 */
    fs_job_t yab[] = {job(1, 0, 14, 10000, "1g.10gb"), job(2, 200, 1, 100, "3g.40gb"),
                      job(3, 210, 1, 100, "7g.80gb")};
    cfg_mixed(&cfg, &pool, 2, 2, "all-7g.80gb", 1);
    pool.mig_drain = FS_MIG_DRAIN_WAIT;
    pool.mig_min_interval = 0;
    run(&cfg, yab, 3, &r, &t);
    assert_true(row_of(&r, 1)->start == 120 && node_of(&r, 1) == 0);
    assert_true(row_of(&r, 2)->start == 320 && row_of(&r, 3)->start == 320);
    assert_true(node_of(&r, 3) == 1);
    assert_int_equal(t.mig_recuts, 2);
    assert_int_equal(t.mig_drains, 0);
    assert_int_equal(r.n_ml, 3);
    assert_true(r.ml[2].node == 1 && r.ml[2].gpu == 0);
    assert_string_equal(r.ml[2].layout, "3g.40gb x2");
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Two nodes of eight H100s cut all-7g.80gb: A (3g.40gb) and B (3 x
 * 1g.10gb) at 5.  mixed: node 0's GPU 0 becomes 3g.40gb + 1g.10gb x3, B is
 * served by it, node 1 is not cut; all: node 0 all-3g.40gb, node 1
 * all-1g.10gb. */
static void test_mixed_run_share(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    static rows_t r;
    fs_run_totals_t t;
    fs_job_t jobs[] = {job(1, 5, 1, 100, "3g.40gb"), job(2, 5, 3, 100, "1g.10gb")};
    cfg_mixed(&cfg, &pool, 2, 8, "all-7g.80gb", 1);
    run(&cfg, jobs, 2, &r, &t);
    assert_true(row_of(&r, 1)->start == 125 && row_of(&r, 2)->start == 125);
    assert_true(node_of(&r, 1) == 0 && node_of(&r, 2) == 0);
    assert_int_equal(t.mig_recuts, 1);
    assert_int_equal(r.n_ml, 1);
    assert_true(r.ml[0].node == 0 && r.ml[0].gpu == 0);
    assert_string_equal(r.ml[0].layout, "1g.10gb x3, 3g.40gb");
    unsigned n1 = 0;
    for (size_t i = 0; i < r.n_iv; i++) {
        assert_true(r.iv[i].node == 0 && r.iv[i].gpu == 0);
        n1 += r.iv[i].job == 2;
    }
    assert_int_equal(n1, 3);
    /* the layout text reads back to the same counts */
    fs_mig_spec_t spec;
    assert_int_equal(fs_mig_layout_parse(h100(), r.ml[0].layout, &spec, NULL, NULL), 0);
    assert_true(spec.count[prof(h100(), "3g.40gb")] == 1 && spec.count[prof(h100(), "1g.10gb")] == 3);

    cfg_mixed(&cfg, &pool, 2, 8, "all-7g.80gb", 0);
    run(&cfg, jobs, 2, &r, &t);
    assert_true(row_of(&r, 1)->start == 125 && row_of(&r, 2)->start == 125);
    assert_true(node_of(&r, 1) == 0 && node_of(&r, 2) == 1);
    assert_int_equal(t.mig_recuts, 2);
    assert_int_equal(r.n_ml, 16);
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Drain wait with mixed layouts: one node of two GPUs cut all-1g.10gb, A
 * (1g) runs 0..1000, B (3g.40gb) at 10: the node is cordoned at 10 and
 * re-cut at 1000, GPU 0 only (3g.40gb at 0 and 1g in the slots left:
 * 3g.40gb x2 as nothing else waits), GPU 1 keeps 1g.10gb x7: C (1g) at
 * 1500 starts at once, with all it waits for a second re-cut. */
static void test_mixed_drain(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    static rows_t r;
    fs_run_totals_t t;
    fs_job_t abc[] = {job(1, 0, 1, 1000, "1g.10gb"), job(2, 10, 1, 100, "3g.40gb"),
                      job(3, 1500, 1, 100, "1g.10gb")};
    cfg_drain(&cfg, &pool, 1, 2, "all-1g.10gb", FS_MIG_DRAIN_WAIT, 30);
    pool.mig_layout = FS_MIG_LAYOUT_MIXED;
    run(&cfg, abc, 3, &r, &t);
    assert_true(row_of(&r, 2)->start == 1120);
    assert_true(row_of(&r, 3)->start == 1500);
    assert_int_equal(t.mig_recuts, 1);
    assert_int_equal(t.mig_drains, 1);
    assert_int_equal(r.n_ml, 1);
    assert_true(r.ml[0].gpu == 0 && r.ml[0].time == 1000 && r.ml[0].cordoned == 10);
    assert_string_equal(r.ml[0].layout, "3g.40gb x2");
    pool.mig_layout = FS_MIG_LAYOUT_ALL;
    run(&cfg, abc, 3, &r, &t);
    assert_true(row_of(&r, 3)->start == 1720);
    assert_int_equal(t.mig_recuts, 2);
    fs_test_rows_free(&r.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Random demand, all against mixed, drain none and wait: every layout
 * applied is valid, no pod starts on a node between its cordon (or the
 * decision) and ready, no pod runs across a re-cut of its node, every pod
 * completes, and mixed re-cuts no more GPUs than all. */
static void mixed_random_run(rows_t *r, fs_run_totals_t *t, const fs_job_t *jobs, size_t n,
                             int mixed, int drain)
{
    fs_config_t cfg;
    fs_pool_cfg_t pool;
    cfg_drain(&cfg, &pool, 3, 4, "all-balanced", drain, 60);
    pool.mig_min_interval = S(300);
    pool.mig_layout = mixed ? FS_MIG_LAYOUT_MIXED : FS_MIG_LAYOUT_ALL;
    run(&cfg, jobs, n, r, t);
}

static void test_mixed_random(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const char *profs[] = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb", "1g.20gb"};
    static const unsigned inst[] = {7, 3, 2, 1, 4};
    enum { N = 100 };
    fs_job_t jobs[N];
    const fs_mig_model_t *mm = h100();
    static rows_t a;
    for (int drain = FS_MIG_DRAIN_NONE; drain <= FS_MIG_DRAIN_WAIT; drain++)
        for (unsigned seed = 1; seed <= 3; seed++) {
            uint64_t x = 99 + seed * 7919;
            double at = 0;
            for (unsigned i = 0; i < N; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                unsigned p = (unsigned)(x >> 33) % 5;
                at += (double)((x >> 20) % 200);
                unsigned k = 1 + (unsigned)((x >> 40) % 4);
                if (k > 4 * inst[p])
                    k = 4 * inst[p];
                jobs[i] = job(i + 1, at, k, 100 + (double)((x >> 50) % 900), profs[p]);
            }
            size_t gpus[2];
            for (int mixed = 0; mixed <= 1; mixed++) {
                fs_run_totals_t t;
                mixed_random_run(&a, &t, jobs, N, mixed, drain);
                assert_true(a.n_iv < 512 && a.n_ml < 512);
                gpus[mixed] = a.n_ml;
                for (size_t i = 0; i < a.jobs.n; i++)
                    assert_int_equal(a.jobs.r[i].state, FS_STATE_COMPLETED);
                for (size_t k = 0; k < a.n_ml; k++) {
                    const fs_mig_layout_row_t *m = &a.ml[k];
                    fs_mig_spec_t spec;
                    fs_mig_layout_t l;
                    assert_int_equal(fs_mig_layout_parse(mm, m->layout, &spec, NULL, NULL), 0);
                    assert_int_equal(fs_mig_layout_build(mm, &spec, &l, NULL), 0);
                    /* a pod started in the pass before the drain's cordon, at its
                     * instant, is one it waits for */
                    double from = isnan(m->cordoned) ? m->time : nextafter(m->cordoned, INFINITY);
                    for (size_t i = 0; i < a.n_iv; i++) {
                        const fs_interval_row_t *v = &a.iv[i];
                        if (v->node != m->node)
                            continue;
                        if (v->start < m->time && v->end > m->time)
                            fail_msg("job %llu runs on node %u across its re-cut at %g",
                                     (unsigned long long)v->job, v->node, m->time);
                        if (v->start >= from && v->start < m->ready)
                            fail_msg("mixed %d drain %d: job %llu placed on node %u at %g, out "
                                     "%g..%g", mixed, drain, (unsigned long long)v->job, v->node,
                                     v->start, from, m->ready);
                    }
                }
                print_message("drain %d seed %u %s: %llu re-cuts, %zu GPUs re-cut, %llu drains\n",
                              drain, seed, mixed ? "mixed" : "all", (unsigned long long)t.mig_recuts,
                              a.n_ml, (unsigned long long)t.mig_drains);
                assert_true(t.mig_recuts > 0);
            }
            assert_true(gpus[1] <= gpus[0]);
        }
    fs_test_rows_free(&a.jobs);
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_recut),
        cmocka_unit_test(test_busy_never_cut),
        cmocka_unit_test(test_anti_thrashing),
        cmocka_unit_test(test_cluster_recut),
        cmocka_unit_test(test_scenario),
        cmocka_unit_test(test_random_mix),
        cmocka_unit_test(test_drain_hand),
        cmocka_unit_test(test_drain_choice),
        cmocka_unit_test(test_drain_cancel),
        cmocka_unit_test(test_drain_random),
        cmocka_unit_test(test_mixed_plan_hand),
        cmocka_unit_test(test_mixed_plan_random),
        cmocka_unit_test(test_mixed_run_keep),
        cmocka_unit_test(test_mixed_run_share),
        cmocka_unit_test(test_mixed_drain),
        cmocka_unit_test(test_mixed_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
