/*
 * The model with FIFO gang scheduling, on small hand-made workloads whose
 * schedules are worked out by hand: strict head-of-line blocking versus
 * best-effort skipping, gang all-or-nothing, rejection of impossible jobs,
 * the same-instant rule (a completion frees capacity for an arrival at the
 * same time), exact time integrals, and best-effort == full in-order scan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "models/fs_model.h"
#include "models/fs_policy.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"
#include "traces/fs_memsrc.h"
#include <gsl/gsl_randist.h>

#define S(x) ((fs_time_t)((x) * FS_US_PER_S))

/* fs_test_base_cfg with the FIFO queue in `mode`, packed placement, and the
 * default limit, backfill, Slurm and Tiresias settings left at zero. */
static void base_cfg(fs_config_t *c, fs_pool_cfg_t *pool, uint32_t nodes, uint32_t gpn, int mode)
{
    fs_test_base_cfg(c, pool, nodes, gpn, FS_QUEUE_FIFO);
    c->scheduler.mode = mode;
    c->scheduler.placement = FS_PLACE_PACK;
    c->scheduler.default_limit = 0;
    memset(&c->scheduler.bf, 0, sizeof c->scheduler.bf);
    memset(&c->scheduler.slurm, 0, sizeof c->scheduler.slurm);
    c->scheduler.tiresias.thresholds = NULL;
}


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

static void run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, fs_test_rows_t *rs,
                fs_run_totals_t *t)
{
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, n, NULL, 0, NULL, 0, &src, &err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    assert_int_equal(fs_model_create(cfg, fs_policy_select(&cfg->scheduler),
                                     src, &sink, &m, &err), 0);
    assert_int_equal(fs_model_run(m, NULL, NULL, &err), 0);
    assert_int_equal(fs_model_finish(m, t, &err), 0);
    fs_test_check_capstates(t);
    fs_model_destroy(m);
    fs_source_destroy(src);
}

/* One 8-GPU node.  A(0s, 6 GPUs, 10s), B(1s, 4 GPUs, 10s), C(2s, 2 GPUs, 5s).
 * strict:      A 0-10; B blocks the head; B 10-20 and C 10-15.
 * best effort: A 0-10; C skips B: 2-7; B 10-20. */
static void test_strict_vs_best_effort(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_job_t jobs[] = {job(1, 0, 6, 10), job(2, 1, 4, 10), job(3, 2, 2, 5)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    fs_run_totals_t t;

    base_cfg(&cfg, &pool, 1, 8, FS_FIFO_STRICT);
    run(&cfg, jobs, 3, &rs, &t);
    assert_int_equal(rs.n, 3);
    assert_double_equal(fs_test_find(&rs, 1)->start, 0, 0);
    assert_double_equal(fs_test_find(&rs, 2)->start, 10, 0);
    assert_double_equal(fs_test_find(&rs, 3)->start, 10, 0);
    assert_double_equal(fs_test_find(&rs, 3)->wait, 8, 0);
    assert_double_equal(fs_test_find(&rs, 2)->end, 20, 0);
    assert_double_equal(t.makespan, 20, 0);
    /* busy GPU-s: 6*10 + 4*10 + 2*5 = 110 over 8 GPUs x 20 s */
    assert_double_equal(t.gpu_s_busy, 110, 1e-9);
    assert_double_equal(t.gpu_s_capacity, 160, 1e-9);
    /* queued job-seconds: B waits 9, C waits 8 */
    assert_double_equal(t.jobs_queued_integral, 17, 1e-9);

    base_cfg(&cfg, &pool, 1, 8, FS_FIFO_BEST_EFFORT);
    run(&cfg, jobs, 3, &rs, &t);
    assert_double_equal(fs_test_find(&rs, 3)->start, 2, 0);
    assert_double_equal(fs_test_find(&rs, 3)->end, 7, 0);
    assert_double_equal(fs_test_find(&rs, 2)->start, 10, 0);
    assert_double_equal(t.jobs_queued_integral, 9, 1e-9);
    /* Little: integral of jobs in system == sum of sojourn times */
    double soj = 0;
    for (size_t i = 0; i < rs.n; i++)
        soj += rs.r[i].end - rs.r[i].submit;
    assert_double_equal(t.jobs_system_integral, soj, 1e-9);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Two 8-GPU nodes.  A(0, 1 GPU, 10s) sits on node 0; G(1, 16 GPUs, 5s) needs
 * both whole nodes: it waits for A (gang: never a partial start). */
static void test_gang_all_or_nothing(void **s)
{
    (void)s;
    fs_job_t jobs[] = {job(1, 0, 1, 10), job(2, 1, 16, 5), job(3, 2, 17, 1)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    fs_run_totals_t t;
    base_cfg(&cfg, &pool, 2, 8, FS_FIFO_BEST_EFFORT);
    run(&cfg, jobs, 3, &rs, &t);
    const fs_job_row_t *g = fs_test_find(&rs, 2);
    assert_double_equal(g->start, 10, 0);
    assert_int_equal(g->nodes, 2);
    assert_int_equal(g->state, FS_STATE_COMPLETED);
    /* 17 GPUs can never fit 16: rejected at once, never started */
    const fs_job_row_t *r = fs_test_find(&rs, 3);
    assert_int_equal(r->state, FS_STATE_REJECTED);
    assert_true(isnan(r->start));
    assert_int_equal(r->pool, -1);
}

/* A completion and an arrival at the same instant: the completion is applied
 * first, so the arriving job starts at once with no wait. */
static void test_same_instant(void **s)
{
    (void)s;
    fs_job_t jobs[] = {job(1, 0, 8, 10), job(2, 10, 8, 5)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    fs_run_totals_t t;
    base_cfg(&cfg, &pool, 1, 8, FS_FIFO_STRICT);
    run(&cfg, jobs, 2, &rs, &t);
    assert_double_equal(fs_test_find(&rs, 2)->start, 10, 0);
    assert_double_equal(fs_test_find(&rs, 2)->wait, 0, 0);
    assert_double_equal(t.jobs_queued_integral, 0, 0);
}

/* Stopping at the horizon: unfinished jobs are reported running/queued with
 * what they did so far, and the integrals stop at the horizon. */
static void test_until_horizon(void **s)
{
    (void)s;
    fs_job_t jobs[] = {job(1, 0, 8, 100), job(2, 1, 8, 5)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    fs_run_totals_t t;
    base_cfg(&cfg, &pool, 1, 8, FS_FIFO_STRICT);
    cfg.until = FS_UNTIL_HORIZON;
    cfg.horizon = S(50);
    run(&cfg, jobs, 2, &rs, &t);
    assert_int_equal(fs_test_find(&rs, 1)->state, FS_STATE_RUNNING);
    assert_double_equal(fs_test_find(&rs, 1)->run, 50, 0);
    assert_true(isnan(fs_test_find(&rs, 1)->end));
    assert_int_equal(fs_test_find(&rs, 2)->state, FS_STATE_QUEUED);
    assert_double_equal(t.end_time, 50, 0);
    assert_double_equal(t.gpu_s_busy, 400, 1e-9);
    assert_double_equal(t.jobs_queued_integral, 49, 1e-9);
}

/* Issue #13, memory per queued job: a job that has never run holds its
 * 80-byte fs_jobrt_t alone (no run record, no policy field); a job that
 * ran has a run record.  One 8-GPU node, A runs, B and C wait to the
 * horizon, B asks more than fits now (strict: C waits behind it). */
static void test_queued_jobs_hold_no_run_record(void **s)
{
    (void)s;
    assert_true(sizeof(fs_jobrt_t) <= 80);
    fs_job_t jobs[] = {job(1, 0, 6, 100), job(2, 1, 4, 5), job(3, 2, 1, 5)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    base_cfg(&cfg, &pool, 1, 8, FS_FIFO_STRICT);
    cfg.until = FS_UNTIL_HORIZON;
    cfg.horizon = S(50);
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    static fs_test_rows_t rs;
    rs.n = 0;
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
    assert_int_equal(fs_memsrc_create(jobs, 3, NULL, 0, NULL, 0, &src, &err), 0);
    assert_int_equal(fs_model_create(&cfg, fs_policy_select(&cfg.scheduler),
                                     src, &sink, &m, &err), 0);
    assert_int_equal(fs_model_run(m, NULL, NULL, &err), 0);
    size_t queued = 0, running = 0;
    for (uint32_t i = 0; i < fs_model_slots(m); i++) {
        const fs_jobrt_t *j = fs_model_job(m, i);
        if (j->state == FS_JOBRT_QUEUED) {
            assert_null(j->r);
            assert_int_equal(fs_jobrt_remaining(j), j->job.duration);
            assert_int_equal(fs_jobrt_restarts(j), 0);
            queued++;
        } else if (j->state == FS_JOBRT_RUNNING) {
            assert_non_null(j->r);
            assert_int_equal(j->r->first_start, 0);
            running++;
        }
    }
    assert_int_equal(queued, 2);
    assert_int_equal(running, 1);
    /* their rows say what a job that never ran says */
    fs_run_totals_t t;
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    const fs_job_row_t *b = fs_test_find(&rs, 2);
    assert_int_equal(b->state, FS_STATE_QUEUED);
    assert_true(isnan(b->start) && isnan(b->wait));
    assert_double_equal(b->queued_s, 49, 1e-9);
    assert_double_equal(b->run, 0, 0);
    assert_int_equal(b->restarts, 0);
    assert_int_equal(b->pool, -1);
    fs_model_destroy(m);
    fs_source_destroy(src);
}

/* Issue #13: the model keeps a packed copy of a job's record (fs_jobq_t):
 * a job_class or gpu_milli beyond 16 bits is refused with FS_ELIMIT and a
 * message, not cut. */
static void test_job_beyond_packed_record(void **s)
{
    (void)s;
    for (int k = 0; k < 2; k++) {
        fs_job_t jobs[] = {job(1, 0, 1, 10), job(2, 1, 1, 10)};
        if (k == 0)
            jobs[1].job_class = INT16_MAX + 1;
        else
            jobs[1].gpu_milli = UINT16_MAX + 1u;
        fs_pool_cfg_t pool;
        fs_config_t cfg;
        base_cfg(&cfg, &pool, 1, 8, FS_FIFO_STRICT);
        fs_source_t *src;
        fs_model_t *m;
        fs_error_t err;
        fs_sink_t sink = {0};
        assert_int_equal(fs_memsrc_create(jobs, 2, NULL, 0, NULL, 0, &src, &err), 0);
        assert_int_equal(fs_model_create(&cfg, fs_policy_select(&cfg.scheduler),
                                         src, &sink, &m, &err), 0);
        assert_int_equal(fs_model_run(m, NULL, NULL, &err), FS_ELIMIT);
        assert_non_null(strstr(err.msg, "beyond 16 bits"));
        fs_model_destroy(m);
        fs_source_destroy(src);
    }
}

/* Reference: best-effort FIFO as a full in-order scan over the whole queue
 * at every instant, on a plain GPU counter per node (naive placement with
 * the same pack rule).  The model must produce the same start times. */
static void test_best_effort_equals_full_scan(void **s)
{
    (void)s;
    enum { N = 1500 };
    static fs_job_t jobs[N];
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 99, 0, FS_RNG_TRACE, 0), 0);
    double t = 0;
    static const uint32_t sizes[] = {1, 1, 2, 3, 4, 8, 8, 12, 16, 24};
    for (int i = 0; i < N; i++) {
        t += gsl_ran_exponential(r.g, 30);
        jobs[i] = job((uint64_t)i + 1, floor(t), sizes[gsl_rng_uniform_int(r.g, 10)],
                      1 + floor(gsl_ran_exponential(r.g, 400)));
    }
    fs_rng_release(&r);
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_job_row_t fast[N];
    fs_run_totals_t tot;
    base_cfg(&cfg, &pool, 4, 8, FS_FIFO_BEST_EFFORT);

    /* fast: the model */
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, N, NULL, 0, NULL, 0, &src, &err), 0);
    static fs_test_rows_t big;
    big.n = 0;
    fs_sink_t sink = {.job = fs_test_collect, .ud = &big};
    assert_int_equal(fs_model_create(&cfg, fs_policy_select(&cfg.scheduler),
                                     src, &sink, &m, &err), 0);
    assert_int_equal(fs_model_run(m, NULL, NULL, &err), 0);
    assert_int_equal(fs_model_finish(m, &tot, &err), 0);
    fs_test_check_capstates(&tot);
    fs_model_destroy(m);
    fs_source_destroy(src);
    assert_int_equal(big.n, N);
    for (size_t i = 0; i < big.n; i++)
        fast[big.r[i].id - 1] = big.r[i];

    /* slow: time-stepped over event instants with a full queue scan */
    static double start[N], end[N];
    static int state[N];  /* 0 not arrived, 1 queued, 2 running, 3 done */
    uint32_t freeg[4] = {8, 8, 8, 8};
    static uint32_t where[N][4];
    memset(state, 0, sizeof state);
    memset(where, 0, sizeof where);
    int done = 0;
    double now = 0;
    while (done < N) {
        /* next instant: earliest arrival or completion */
        double next = INFINITY;
        for (int i = 0; i < N; i++) {
            if (state[i] == 0 && fs_time_to_s(jobs[i].submit) < next)
                next = fs_time_to_s(jobs[i].submit);
            if (state[i] == 2 && end[i] < next)
                next = end[i];
        }
        now = next;
        for (int i = 0; i < N; i++)
            if (state[i] == 2 && end[i] == now) {
                for (int k = 0; k < 4; k++)
                    freeg[k] += where[i][k];
                state[i] = 3;
                done++;
            }
        for (int i = 0; i < N; i++)
            if (state[i] == 0 && fs_time_to_s(jobs[i].submit) == now)
                state[i] = 1;
        for (int i = 0; i < N; i++) {
            if (state[i] != 1)
                continue;
            uint32_t g = jobs[i].gpus, total = freeg[0] + freeg[1] + freeg[2] + freeg[3];
            if (g <= 8) {
                int best = -1;
                for (int k = 0; k < 4; k++)
                    if (freeg[k] >= g && (best < 0 || freeg[k] < freeg[best]))
                        best = k;
                if (best < 0)
                    continue;
                freeg[best] -= g;
                where[i][best] = g;
            } else {
                if (total < g)
                    continue;
                uint32_t need = g;
                while (need) {
                    int k = -1;
                    if (need >= 8) {
                        for (int q = 0; q < 4; q++)
                            if (freeg[q] > 0 && (k < 0 || freeg[q] > freeg[k]))
                                k = q;
                    } else {
                        for (int q = 0; q < 4; q++)
                            if (freeg[q] >= need && (k < 0 || freeg[q] < freeg[k]))
                                k = q;
                        if (k < 0)
                            for (int q = 0; q < 4; q++)
                                if (freeg[q] > 0 && (k < 0 || freeg[q] > freeg[k]))
                                    k = q;
                    }
                    uint32_t take = freeg[k] < need ? freeg[k] : need;
                    freeg[k] -= take;
                    where[i][k] += take;
                    need -= take;
                }
            }
            state[i] = 2;
            start[i] = now;
            end[i] = now + fs_time_to_s(jobs[i].duration);
        }
    }
    for (int i = 0; i < N; i++) {
        assert_double_equal(fast[i].start, start[i], 0);
        assert_double_equal(fast[i].end, end[i], 0);
    }
}

/* Fractional shares are their own shape: one node of 2 GPUs; a half-GPU job
 * (t=0) and a whole GPU (t=1) are running; a whole-GPU job (t=2) must wait,
 * but a 300-milli job (t=3) fits beside the half share and, best effort,
 * starts at once instead of queueing behind the whole-GPU job. */
static void test_fractional_shape_not_blocked(void **s)
{
    (void)s;
    fs_job_t jobs[] = {job(1, 0, 1, 100), job(2, 1, 1, 100), job(3, 2, 1, 10), job(4, 3, 1, 10)};
    jobs[0].gpu_milli = 500;
    jobs[3].gpu_milli = 300;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    fs_run_totals_t t;
    base_cfg(&cfg, &pool, 1, 2, FS_FIFO_BEST_EFFORT);
    run(&cfg, jobs, 4, &rs, &t);
    assert_double_equal(fs_test_find(&rs, 1)->start, 0, 0);
    assert_double_equal(fs_test_find(&rs, 3)->start, 100, 0);
    assert_double_equal(fs_test_find(&rs, 4)->start, 3, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strict_vs_best_effort),
        cmocka_unit_test(test_gang_all_or_nothing),
        cmocka_unit_test(test_same_instant),
        cmocka_unit_test(test_until_horizon),
        cmocka_unit_test(test_queued_jobs_hold_no_run_record),
        cmocka_unit_test(test_job_beyond_packed_record),
        cmocka_unit_test(test_best_effort_equals_full_scan),
        cmocka_unit_test(test_fractional_shape_not_blocked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
