/*
 * Backfill that plans around the outages known ahead (cluster.outages,
 * issue #42; models/fs_capacity.c fs_capplan_*, fs_sched_cons.c,
 * fs_sched_easy.c; docs/traces.md "Backfill plans around outages").
 *
 * Proofs, hand-worked on four 1-GPU nodes with an outage of nodes 2-3 over
 * [100 s, 400 s), estimates equal to run times:
 *   - EASY: a backfill candidate of 200 s is not started on the outage's
 *     nodes before it (it would run into the outage) but one of 50 s is;
 *   - EASY and conservative: the blocked head's reservation moves past the
 *     outage when its run would overlap it on the nodes it needs;
 *   - conservative: the same candidates as EASY;
 *   - bf.mode slurm: the main scheduler, not only its backfill pass, keeps
 *     a job off nodes whose outage its run would reach;
 *   - every case also runs without the outage file and checks the start
 *     capacity seen as lasting gives (the old behaviour) is another one;
 *   - a job running when its nodes' outage begins runs on (a drain);
 *   - an outage that never matters leaves every start of 500 generated jobs
 *     as without it (EASY's profile pass is EASY; conservative unchanged).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "models/fs_model.h"
#include "models/fs_policy.h"
#include "models/fs_sched.h"
#include "sim/fs_alloc.h"
#include "traces/fs_memsrc.h"

#define S(x) ((fs_time_t)((x) * FS_US_PER_S))

static fs_job_t job(uint64_t id, double submit, uint32_t gpus, double dur)
{
    fs_job_t j;
    fs_job_init(&j);
    j.id = id;
    j.submit = S(submit);
    j.gpus = gpus;
    j.duration = S(dur);
    return j;
}

typedef struct run_out {
    fs_run_totals_t t;
    uint64_t backfilled;
    fs_time_t first_resv;   /* the first reservation logged (its job: resv_id) */
    uint64_t resv_id;
} run_out_t;

static void run_fast(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, int fast,
                     fs_test_rows_t *rs, run_out_t *o, fs_sched_resv_t *log, size_t *n_log);

static void run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, fs_test_rows_t *rs,
                run_out_t *o)
{
    run_fast(cfg, jobs, n, 1, rs, o, NULL, NULL);
}

/* One run with the fast paths on or off; log (if given): the reservations
 * logged, *n_log of them. */
static void run_fast(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, int fast,
                     fs_test_rows_t *rs, run_out_t *o, fs_sched_resv_t *log, size_t *n_log)
{
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    memset(o, 0, sizeof *o);
    assert_int_equal(fs_memsrc_create(jobs, n, NULL, 0, NULL, 0, &src, &err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    int rc = fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err);
    if (rc)
        fail_msg("create: %s", err.msg);
    fs_sched_set_fast(fs_model_policy_state(m), fast);
    fs_sched_record(fs_model_policy_state(m), 1);
    rc = fs_model_run(m, NULL, NULL, &err);
    if (rc)
        fail_msg("run: %s", err.msg);
    assert_int_equal(fs_model_finish(m, &o->t, &err), 0);
    const void *st = fs_model_policy_state(m);
    size_t nr;
    const fs_sched_resv_t *r = fs_sched_reservations(st, &nr);
    o->first_resv = nr ? r[0].at : -1;
    o->resv_id = nr ? r[0].id : 0;
    o->backfilled = fs_sched_backfilled(st);
    if (log) {
        *n_log = nr;
        memcpy(log, r, nr * sizeof *r);
    }
    fs_model_destroy(m);
    fs_source_destroy(src);
}

/* Four 1-GPU nodes; the outage file (NULL: none) as cluster.outages. */
static void base(fs_config_t *cfg, fs_pool_cfg_t *pool, int backfill, char *outages)
{
    fs_test_base_cfg(cfg, pool, 4, 1, FS_QUEUE_FIFO);
    cfg->scheduler.backfill = backfill;
    cfg->cluster.outages = outages;
}

static double start_of(const fs_test_rows_t *rs, uint64_t id)
{
    const fs_job_row_t *r = fs_test_find(rs, id);
    assert_non_null(r);
    return r->start;
}

typedef struct fixture {
    char *dir, *window;
} fixture_t;

static int setup(void **st)
{
    fixture_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->dir = fs_test_tmpdir();
    f->window = fs_test_path(f->dir, "window.csv");
    assert_int_equal(fs_test_write(f->window, "start,end,nodes,cause\n100,400,2-3,maintenance\n"), 0);
    *st = f;
    return 0;
}

static int teardown(void **st)
{
    fixture_t *f = *st;
    fs_test_rmtree(f->dir);
    free(f->dir);
    free(f->window);
    free(f);
    return 0;
}

/* A(0, 2 GPUs, 1000 s) starts at 0 on nodes 0-1 (it ends after the outage
 * begins: nodes 2-3 are held out while it is placed).  H(0.5, 4 GPUs, 10 s)
 * blocks: its reservation is 1000 (A's end).  B(1, 1 GPU, 200 s) fits now
 * only on nodes 2-3, and would run into the outage at 100: not started;
 * its earliest slot is the outage's end, 400 (B 400-600 ends before H's
 * 1000).  C(2, 1 GPU, 50 s) ends at 52 < 100: backfilled at 2 on node 2 or
 * 3.  Capacity seen as lasting (before issue #42's change), B ends by the
 * shadow 1000 and was backfilled at 1, to run on into the outage. */
static void cand_case(fixture_t *f, int backfill)
{
    int64_t live0 = fs_alloc_live();
    fs_job_t jobs[4] = {job(1, 0, 2, 1000), job(2, 0.5, 4, 10), job(3, 1, 1, 200),
                        job(4, 2, 1, 50)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    run_out_t o;

    base(&cfg, &pool, backfill, f->window);
    run(&cfg, jobs, 4, &rs, &o);
    assert_double_equal(start_of(&rs, 1), 0, 0);
    assert_double_equal(start_of(&rs, 4), 2, 0);      /* 50 s: ends before the outage */
    assert_double_equal(start_of(&rs, 3), 400, 0);    /* 200 s: held until the outage ends */
    assert_double_equal(start_of(&rs, 2), 1000, 0);   /* the head's reservation holds */
    assert_int_equal(o.resv_id, 2);
    assert_true(o.first_resv == S(1000));

    /* without the outage: B backfilled at 1 */
    base(&cfg, &pool, backfill, NULL);
    run(&cfg, jobs, 4, &rs, &o);
    assert_double_equal(start_of(&rs, 3), 1, 0);
    assert_double_equal(start_of(&rs, 4), 2, 0);
    assert_double_equal(start_of(&rs, 2), 1000, 0);
    assert_int_equal(fs_alloc_live(), live0);  /* the plan is freed with the scheduler */
}

static void test_easy_candidate(void **st) { cand_case(*st, FS_BACKFILL_EASY); }
static void test_cons_candidate(void **st) { cand_case(*st, FS_BACKFILL_CONSERVATIVE); }

/* A(0, 2 GPUs, 50 s) on nodes 0-1 (ends before the outage: placed as the
 * placer likes).  H(1, 4 GPUs, 100 s) needs every node: from A's end at 50
 * it would run into the outage at 100, so its reservation moves past the
 * window: 400.  D(2, 2 GPUs, 30 s) ends at 32, before the outage and
 * before H's reservation: backfilled at 2 on nodes 2-3.  E(3, 2 GPUs,
 * 200 s) would run into the outage on nodes 2-3 and, from 50 on nodes
 * 0-1, into H's reservation at 400? No: 50 + 200 = 250 < 400, so it is
 * backfilled at 50 on nodes 0-1 (the outage takes 2-3 only).  Capacity seen
 * as lasting, H started at 50 (the shadow) and ran on over the outage's
 * nodes. */
static void head_case(fixture_t *f, int backfill)
{
    fs_job_t jobs[4] = {job(1, 0, 2, 50), job(2, 1, 4, 100), job(3, 2, 2, 30), job(4, 3, 2, 200)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    run_out_t o;

    base(&cfg, &pool, backfill, f->window);
    run(&cfg, jobs, 4, &rs, &o);
    assert_double_equal(start_of(&rs, 1), 0, 0);
    assert_double_equal(start_of(&rs, 3), 2, 0);
    assert_double_equal(start_of(&rs, 2), 400, 0);    /* past the window */
    assert_double_equal(start_of(&rs, 4), 50, 0);
    assert_int_equal(o.resv_id, 2);
    assert_true(o.first_resv == S(400));

    base(&cfg, &pool, backfill, NULL);
    run(&cfg, jobs, 4, &rs, &o);
    assert_double_equal(start_of(&rs, 2), 50, 0);     /* the shadow, capacity lasting */
    assert_true(o.first_resv == S(50));
}

static void test_easy_head(void **st) { head_case(*st, FS_BACKFILL_EASY); }
static void test_cons_head(void **st) { head_case(*st, FS_BACKFILL_CONSERVATIVE); }

/* bf.mode slurm: Slurm's main scheduler starts jobs in order before the
 * backfill pass (fs_sslurm_main) and, like it, leaves out the nodes of an
 * outage the job's run would reach.  A(0, 3 GPUs, 50 s) ends at 50 < 100:
 * started at 0 by the main scheduler on nodes 0-2.  B(0.5, 3 GPUs, 200 s)
 * fits at A's end, 50, on four free nodes, but three of them include one of
 * nodes 2-3, whose outage begins at 100 < 250: the main scheduler does not
 * start it, and neither does the backfill pass (only nodes 0-1 are free of
 * the outage before 400; its profile gives 400).  B starts at 400, when
 * the outage ends.  Without the main scheduler's hold (the old code) B
 * started at 50 by the main scheduler and ran into the outage; without the
 * outage file it starts at 50 too. */
static void test_slurm_main(void **st)
{
    fixture_t *f = *st;
    fs_job_t jobs[2] = {job(1, 0, 3, 50), job(2, 0.5, 3, 200)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    run_out_t o;

    base(&cfg, &pool, FS_BACKFILL_CONSERVATIVE, f->window);
    cfg.scheduler.bf.mode = FS_BF_SLURM;
    run(&cfg, jobs, 2, &rs, &o);
    assert_double_equal(start_of(&rs, 1), 0, 0);
    assert_double_equal(start_of(&rs, 2), 400, 0);    /* held past the outage */

    base(&cfg, &pool, FS_BACKFILL_CONSERVATIVE, NULL);
    cfg.scheduler.bf.mode = FS_BF_SLURM;
    run(&cfg, jobs, 2, &rs, &o);
    assert_double_equal(start_of(&rs, 1), 0, 0);
    assert_double_equal(start_of(&rs, 2), 50, 0);     /* capacity lasting: A's end */
    fs_test_rows_free(&rs);
}

/* A job running when its nodes' outage begins goes on (a drain): its
 * estimate (10 s) is shorter than its run (300 s), so it starts at 0 on
 * any node and runs over the outage; a job queued behind it that needs
 * every node waits for both (its end at 300 and the outage's at 400). */
static void test_running_drains(void **st)
{
    fixture_t *f = *st;
    fs_job_t jobs[2] = {job(1, 0, 4, 300), job(2, 1, 4, 10)};
    jobs[0].estimate = S(10);
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    run_out_t o;
    base(&cfg, &pool, FS_BACKFILL_EASY, f->window);
    run(&cfg, jobs, 2, &rs, &o);
    assert_double_equal(start_of(&rs, 1), 0, 0);
    assert_double_equal(fs_test_find(&rs, 1)->end, 300, 0);   /* ran on: not killed */
    assert_double_equal(start_of(&rs, 2), 400, 0);
    fs_test_rows_free(&rs);
}

/* An outage file whose one outage comes long after the last job: the
 * passes plan with it (EASY: the profile pass, every pass) but it never
 * matters, so every job starts when it does without the file -- EASY's
 * profile pass with one reservation is EASY (one pool, 1-GPU nodes).  500
 * generated jobs on 16 nodes, estimates 1-3x the run times. */
static void test_far_outage_same(void **st)
{
    fixture_t *f = *st;
    enum { N = 500 };
    static fs_job_t jobs[N];
    uint64_t x = 42;
    double t = 0;
    for (size_t i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t r = (uint32_t)(x >> 33);
        t += (double)(r % 60);
        jobs[i] = job(i + 1, t, 1 + r % 7 + (r % 11 == 0 ? 8 : 0), 10 + (double)(r % 900));
        jobs[i].estimate = jobs[i].duration * (fs_time_t)(1 + (r >> 8) % 3);
    }
    char *far = fs_test_path(f->dir, "far.csv");
    assert_int_equal(fs_test_write(far, "start,end,nodes\n100000000,100000001,0\n"), 0);
    static fs_test_rows_t with, without;
    const int kinds[] = {FS_BACKFILL_EASY, FS_BACKFILL_CONSERVATIVE};
    for (size_t k = 0; k < 2; k++) {
        fs_pool_cfg_t pool;
        fs_config_t cfg;
        run_out_t o1, o2;
        fs_test_base_cfg(&cfg, &pool, 16, 1, FS_QUEUE_FIFO);
        cfg.scheduler.backfill = kinds[k];
        cfg.cluster.outages = far;
        run(&cfg, jobs, N, &with, &o1);
        cfg.cluster.outages = NULL;
        run(&cfg, jobs, N, &without, &o2);
        assert_int_equal(with.n, N);
        size_t waited = 0;
        for (size_t i = 0; i < N; i++) {
            double a = start_of(&with, i + 1), b = start_of(&without, i + 1);
            assert_double_equal(a, b, 0);
            waited += a > jobs[i].submit / (double)FS_US_PER_S;
        }
        assert_true(waited > N / 4);    /* a queue: backfill had work */
        assert_true(o2.backfilled > 0);
        assert_int_equal(o1.backfilled, o2.backfilled);
    }
    fs_test_rows_free(&with);
    fs_test_rows_free(&without);
    free(far);
}

/* EASY's pass with outages ahead walks the queue in order by a cursor and
 * jumps, past the reservation, to the next job whose estimate fits before
 * the profile's first dip below its GPUs (fs_sched_cons.c easy_out_fast;
 * the slow path sorts the queue and searches the profile for every job,
 * the reference).  A backlog (1,500 jobs of 1-16 GPUs on 16 1-GPU nodes,
 * estimates 1-3x the run times, 40 outages of 1-16 nodes that matter):
 * every job's start, the backfill count and the reservation log are the
 * same both ways, for FIFO, SJF, the priority order (unbanded) and Slurm's
 * multifactor (banded: the sorted pass with the dip test on the fast
 * path). */
static void test_easy_fast_equals_slow(void **st)
{
    fixture_t *f = *st;
    int64_t live0 = fs_alloc_live();
    enum { N = 1500, NO = 40 };
    static fs_job_t jobs[N];
    uint64_t x = 7;
    double t = 0;
    for (size_t i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t r = (uint32_t)(x >> 33);
        t += (double)(r % 50);
        jobs[i] = job(i + 1, t, 1 + r % 5 + (r % 13 == 0 ? 11 : 0), 30 + (double)(r % 1500));
        jobs[i].estimate = jobs[i].duration * (fs_time_t)(1 + (r >> 8) % 3);
    }
    static char csv[NO * 64 + 64];
    size_t k = (size_t)snprintf(csv, sizeof csv, "start,end,nodes\n");
    for (size_t i = 0; i < NO; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t r = (uint32_t)(x >> 33);
        unsigned lo = r % 16, hi = lo + (r >> 4) % (16 - lo);
        /* outage i inside the i-th of NO equal slots of the submissions:
         * no two overlap */
        double L = t / NO, a = (double)i * L + (double)((r >> 8) % (uint32_t)(L / 4));
        k += (size_t)snprintf(csv + k, sizeof csv - k, "%.0f,%.0f,%u-%u\n", a,
                              a + 100 + (double)((r >> 12) % (uint32_t)(L / 2)), lo, hi);
    }
    char *path = fs_test_path(f->dir, "many.csv");
    assert_int_equal(fs_test_write(path, csv), 0);
    static fs_test_rows_t a, b;
    static fs_sched_resv_t la[N], lb[N];
    const int queues[] = {FS_QUEUE_FIFO, FS_QUEUE_SJF, FS_QUEUE_PRIORITY, FS_QUEUE_SLURM};
    for (size_t q = 0; q < sizeof queues / sizeof queues[0]; q++) {
        fs_pool_cfg_t pool;
        fs_config_t cfg;
        run_out_t o1, o2;
        size_t n1, n2;
        fs_test_base_cfg(&cfg, &pool, 16, 1, queues[q]);
        cfg.scheduler.backfill = FS_BACKFILL_EASY;
        cfg.cluster.outages = path;
        run_fast(&cfg, jobs, N, 1, &a, &o1, la, &n1);
        run_fast(&cfg, jobs, N, 0, &b, &o2, lb, &n2);
        assert_int_equal(a.n, N);
        assert_int_equal(b.n, N);
        size_t waited = 0;
        for (size_t i = 0; i < N; i++) {
            double s1 = start_of(&a, i + 1), s2 = start_of(&b, i + 1);
            if (s1 != s2)
                fail_msg("queue %zu: job %zu starts at %.6f fast, %.6f slow", q, i + 1, s1, s2);
            waited += s1 > jobs[i].submit / (double)FS_US_PER_S + 3600;
        }
        assert_true(waited > N / 4);    /* a backlog: jobs queued for over an hour */
        assert_true(o1.backfilled > 0);
        assert_int_equal(o1.backfilled, o2.backfilled);
        assert_int_equal(n1, n2);
        for (size_t i = 0; i < n1; i++) {
            assert_int_equal(la[i].id, lb[i].id);
            assert_int_equal(la[i].at, lb[i].at);
        }
    }
    fs_test_rows_free(&a);
    fs_test_rows_free(&b);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_easy_candidate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cons_candidate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_easy_head, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cons_head, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_main, setup, teardown),
        cmocka_unit_test_setup_teardown(test_running_drains, setup, teardown),
        cmocka_unit_test_setup_teardown(test_far_outage_same, setup, teardown),
        cmocka_unit_test_setup_teardown(test_easy_fast_equals_slow, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
