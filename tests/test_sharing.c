/*
 * GPU time-slicing and MPS (issue 14, docs/models.md "GPU sharing",
 * models/fs_sharing.h): cluster.pools[].sharing.
 *   - hand cases through the run model: two jobs of work W started together
 *     on one time-sliced GPU both end at 2W; staggered by W/2 they end at
 *     3W/2 and 2W; under MPS with N = 4 a job runs at 1/4 alone or not;
 *   - replicas in use never exceed N per GPU (so N x GPUs in the pool), at
 *     every start and end of a random workload, and the bound is reached;
 *   - jobs asking more than one GPU never use a shared pool (rejected on a
 *     shared-only fleet, placed in the whole-GPU pool of a mixed one);
 *   - validation against queueing theory: one GPU time-sliced among
 *     Poisson arrivals of 1-GPU jobs is an M/G/1 processor-sharing queue,
 *     whose mean response time is E[S] / (1 - rho) for any work
 *     distribution (insensitivity): exponential and deterministic work
 *     both give 200 s at rho = 0.5, E[S] = 100 s (a FIFO queue would give
 *     150 s for the deterministic work), within 4 batch-means standard
 *     errors;
 *   - the scenario loader's located errors.
 * Every run goes through fs_test_run_cfg, which checks that the capacity
 * states sum to capacity x time.
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
#include <gsl/gsl_randist.h>

#include "fs_test_util.h"
#include "models/fs_model.h"
#include "models/fs_sharing.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"

#define S(x) ((fs_time_t)((x) * 1e6))



/* /gpu_intervals rows collected (plain malloc, outside fs_alloc_live). */
typedef struct {
    fs_interval_row_t *r;
    size_t n, cap;
} ivals_t;

static int collect_ival(void *ud, const fs_interval_row_t *row)
{
    ivals_t *v = ud;
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 256;
        fs_interval_row_t *r = realloc(v->r, cap * sizeof *r);
        if (!r)
            return FS_ENOMEM;
        v->r = r;
        v->cap = cap;
    }
    v->r[v->n++] = *row;
    return 0;
}

static void run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, fs_test_rows_t *rs,
                ivals_t *iv)
{
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    fs_test_run_cfg(cfg, jobs, n, &sink, NULL);
    if (iv) {   /* a second, identical run for the intervals (the sink has one ud) */
        fs_sink_t s2 = {.job = NULL, .interval = collect_ival, .ud = iv};
        iv->n = 0;
        fs_test_run_cfg(cfg, jobs, n, &s2, NULL);
    }
}

static void shared_cfg(fs_config_t *cfg, fs_pool_cfg_t *pool, uint32_t nodes, uint32_t gpn,
                       uint32_t ts, uint32_t mps)
{
    fs_test_base_cfg(cfg, pool, nodes, gpn, FS_QUEUE_FIFO);
    pool->sharing = 1;
    pool->time_slicing = ts;
    pool->mps = mps;
}

/* One GPU, time_slicing: 4.  Two jobs of W = 100 s at 0: each runs at 1/2,
 * both end at 200 s.  Then A at 0 and B at 50: A alone does 50 s of work by
 * 50, the rest at 1/2 ends it at 150; B has done 50 by then and ends alone
 * at 200.  Each job holds one replica: 250 milli. */
static void test_two_jobs(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    shared_cfg(&cfg, &pool, 1, 1, 4, 0);
    fs_job_t together[] = {fs_test_job(1, 0, 1, 100), fs_test_job(2, 0, 1, 100)};
    run(&cfg, together, 2, &rs, NULL);
    assert_int_equal(rs.n, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(rs.r[i].state, FS_STATE_COMPLETED);
        assert_double_equal(rs.r[i].start, 0, 1e-9);
        assert_double_equal(rs.r[i].end, 200, 1e-6);
        assert_int_equal(rs.r[i].gpu_milli, 250);
    }
    fs_job_t staggered[] = {fs_test_job(1, 0, 1, 100), fs_test_job(2, 50, 1, 100)};
    run(&cfg, staggered, 2, &rs, NULL);
    assert_double_equal(fs_test_find(&rs, 1)->end, 150, 1e-6);
    assert_double_equal(fs_test_find(&rs, 2)->start, 50, 1e-9);
    assert_double_equal(fs_test_find(&rs, 2)->end, 200, 1e-6);
    /* MPS, 4 clients: 1/4 of the SMs each, alone or not */
    shared_cfg(&cfg, &pool, 1, 1, 0, 4);
    fs_job_t mps[] = {fs_test_job(1, 0, 1, 100), fs_test_job(2, 0, 1, 100), fs_test_job(3, 1000, 1, 100)};
    run(&cfg, mps, 3, &rs, NULL);
    assert_double_equal(fs_test_find(&rs, 1)->end, 400, 1e-6);
    assert_double_equal(fs_test_find(&rs, 2)->end, 400, 1e-6);
    assert_double_equal(fs_test_find(&rs, 3)->end, 1400, 1e-6);
    fs_test_rows_free(&rs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The speed table itself (fs_sharing.h). */
static void test_speed(void **st)
{
    (void)st;
    assert_double_equal(fs_sharing_speed(FS_SHARING_TIME_SLICING, 8, 1), 1.0, 0);
    assert_double_equal(fs_sharing_speed(FS_SHARING_TIME_SLICING, 8, 3), 1.0 / 3, 0);
    assert_double_equal(fs_sharing_speed(FS_SHARING_MPS, 8, 1), 0.125, 0);
    assert_double_equal(fs_sharing_speed(FS_SHARING_MPS, 8, 8), 0.125, 0);
    for (uint32_t n = 2; n <= FS_SHARING_MAX; n++) {   /* exactly n replicas fit in 1000 milli */
        assert_true(n * FS_SHARING_MILLI(n) <= 1000);
        assert_true((n + 1) * FS_SHARING_MILLI(n) > 1000);
        for (uint32_t k = 1; k <= n; k++)
            assert_int_equal(fs_sharing_count(n, k * FS_SHARING_MILLI(n)), k);
    }
}

/* Two nodes of 2 GPUs, time_slicing: 3, 300 random 1-GPU jobs arriving
 * faster than they run: at every start and end the jobs on each GPU are at
 * most 3 (and all four GPUs' 12 replicas are in use at some point), the
 * jobs that waited did so, and every job ran at least its work. */
static void test_replicas_bound(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    static ivals_t iv;
    shared_cfg(&cfg, &pool, 2, 2, 3, 0);
    enum { N = 300 };
    static fs_job_t jobs[N];
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 14);
    double t = 0;
    for (unsigned i = 0; i < N; i++) {
        t += gsl_ran_exponential(g, 10);
        jobs[i] = fs_test_job(i + 1, floor(t), 1, 1 + floor(gsl_ran_exponential(g, 100)));
    }
    gsl_rng_free(g);
    run(&cfg, jobs, N, &rs, &iv);
    assert_int_equal(rs.n, N);
    assert_int_equal(iv.n, N);
    unsigned waited = 0, peak_total = 0;
    for (size_t i = 0; i < rs.n; i++) {
        assert_int_equal(rs.r[i].state, FS_STATE_COMPLETED);
        assert_true(rs.r[i].run >= fs_time_to_s(jobs[rs.r[i].id - 1].duration) - 1e-6);
        waited += rs.r[i].wait > 0;
    }
    /* every interval boundary is an event: count the holders of each GPU
     * just after it (an end at t frees before a start at t takes) */
    for (size_t e = 0; e < 2 * iv.n; e++) {
        double at = e < iv.n ? iv.r[e].start : iv.r[e - iv.n].end;
        unsigned per[4] = {0}, total = 0;
        for (size_t i = 0; i < iv.n; i++)
            if (iv.r[i].start <= at && at < iv.r[i].end) {
                assert_true(iv.r[i].node < 2 && iv.r[i].gpu < 2);
                assert_int_equal(iv.r[i].gpu_milli, FS_SHARING_MILLI(3));
                per[iv.r[i].node * 2 + iv.r[i].gpu]++;
                total++;
            }
        for (unsigned k = 0; k < 4; k++)
            if (per[k] > 3)
                fail_msg("GPU %u holds %u replicas at %.0f s (time_slicing: 3)", k, per[k], at);
        if (total > peak_total)
            peak_total = total;
    }
    assert_int_equal(peak_total, 12);
    assert_true(waited > 0);
    fs_test_rows_free(&rs);
    free(iv.r);
    iv = (ivals_t){0};
    assert_int_equal(fs_alloc_live(), live0);
}

/* Jobs of 2 GPUs never use a shared pool: rejected when it is the only
 * pool; in the whole-GPU pool "a" of a mixed fleet, while 1-GPU jobs take
 * replicas in the shared pool listed first. */
static void test_multi_gpu(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2];
    fs_config_t cfg;
    static fs_test_rows_t rs;
    shared_cfg(&cfg, &pools[0], 1, 8, 4, 0);
    fs_job_t jobs[] = {fs_test_job(1, 0, 2, 10), fs_test_job(2, 0, 1, 10)};
    run(&cfg, jobs, 2, &rs, NULL);
    assert_int_equal(fs_test_find(&rs, 1)->state, FS_STATE_REJECTED);
    assert_int_equal(fs_test_find(&rs, 2)->state, FS_STATE_COMPLETED);
    fs_test_add_a100(&cfg, pools, 1);
    pools[1].sharing = 0;   /* a copy of pools[0] but for name and GPU: whole GPUs */
    pools[1].time_slicing = pools[1].mps = 0;
    run(&cfg, jobs, 2, &rs, NULL);
    assert_int_equal(fs_test_find(&rs, 1)->state, FS_STATE_COMPLETED);
    assert_int_equal(fs_test_find(&rs, 1)->pool, 1);
    assert_int_equal(fs_test_find(&rs, 1)->gpu_milli, 1000);
    assert_int_equal(fs_test_find(&rs, 2)->pool, 0);
    assert_int_equal(fs_test_find(&rs, 2)->gpu_milli, 250);
    fs_test_rows_free(&rs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Mean response time of n Poisson(1/200 s) arrivals of 1-GPU jobs on one
 * GPU with time_slicing: 32 (P(more than 32 jobs) = 0.5^33: no job waits),
 * work exponential (mean 100 s) or exactly 100 s; with the batch-means
 * standard error (20 batches in arrival order). */
static void ps_queue(int expo, double *mean, double *se)
{
    enum { N = 20000, B = 20 };
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    static fs_job_t jobs[N];
    shared_cfg(&cfg, &pool, 1, 1, 32, 0);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, expo ? 1401 : 1402);
    double t = 0;
    for (unsigned i = 0; i < N; i++) {
        t += gsl_ran_exponential(g, 200);
        fs_job_t j = fs_test_job(i + 1, 0, 1, 0);
        j.submit = (fs_time_t)llround(t * 1e6);
        j.duration = expo ? (fs_time_t)llround(gsl_ran_exponential(g, 100) * 1e6) + 1 : S(100);
        jobs[i] = j;
    }
    gsl_rng_free(g);
    run(&cfg, jobs, N, &rs, NULL);
    assert_int_equal(rs.n, N);
    double bm[B] = {0}, sum = 0;
    for (size_t i = 0; i < rs.n; i++) {
        const fs_job_row_t *r = &rs.r[i];
        assert_int_equal(r->state, FS_STATE_COMPLETED);
        assert_true(r->wait == 0);
        double resp = r->end - r->submit;
        bm[(r->id - 1) * B / N] += resp / (N / B);
        sum += resp;
    }
    *mean = sum / N;
    double v = 0;
    for (unsigned b = 0; b < B; b++)
        v += (bm[b] - *mean) * (bm[b] - *mean);
    *se = sqrt(v / (B - 1) / B);
    fs_test_rows_free(&rs);
}

static void test_ps_queue(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    const double want = 100.0 / (1 - 0.5);   /* E[S] / (1 - rho) = 1 / (mu - lambda) */
    for (int expo = 1; expo >= 0; expo--) {
        double mean, se;
        ps_queue(expo, &mean, &se);
        print_message("M/%s/1-PS: mean response %.1f s (se %.1f), theory %.1f s\n",
                      expo ? "M" : "D", mean, se, want);
        if (fabs(mean - want) > 4 * se)
            fail_msg("M/%s/1-PS mean response %.2f s, expected %.1f within 4 x %.2f",
                     expo ? "M" : "D", mean, want, se);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

#define expect_error fs_test_expect_error

#define HEAD "horizon: 1h\nworkload:\n  synthetic:\n    arrivals: {rate: 10/h}\n" \
             "    gpus: {1: 1}\n    duration: {dist: exponential, mean: 1h}\n"
#define POOL "    - {name: p, gpu: H100, nodes: 1, gpus_per_node: 8, "

static void test_scenario_errors(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_error_t err;
    assert_int_equal(fs_test_create(HEAD "cluster:\n  pools:\n" POOL "sharing: {time_slicing: 4}}\n",
                                    &err), 0);
    assert_int_equal(fs_test_create(HEAD "cluster:\n  pools:\n" POOL "sharing: {mps: 2}}\n", &err), 0);
    expect_error(HEAD "cluster:\n  pools:\n" POOL "sharing: {time_slicing: 4, mps: 2}}\n",
                 "t.yaml:9:65", "exactly one of time_slicing");
    expect_error(HEAD "cluster:\n  pools:\n" POOL "sharing: {}}\n", "t.yaml:9:65",
                 "exactly one of time_slicing");
    expect_error(HEAD "cluster:\n  pools:\n" POOL "sharing: {time_slicing: 1}}\n", "t.yaml:9:80",
                 "time_slicing");
    expect_error(HEAD "cluster:\n  pools:\n" POOL "sharing: {mps: 33}}\n", "t.yaml:9:71", "mps");
    expect_error(HEAD "cluster:\n  pools:\n" POOL "mig: all-1g.10gb, sharing: {mps: 2}}\n",
                 "t.yaml:9:83", "MIG pool cannot also be shared");
    expect_error(HEAD "scheduler: {placement: best_fit}\ncluster:\n  pools:\n" POOL
                      "sharing: {mps: 2}}\n",
                 "t.yaml:7:24", "pack, first_fit or topology");
    expect_error(HEAD "scheduler: {queue: kueue}\ncluster:\n  pools:\n" POOL "sharing: {mps: 2}}\n",
                 "t.yaml:10:65", "Kueue and Volcano");
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speed),
        cmocka_unit_test(test_two_jobs),
        cmocka_unit_test(test_replicas_bound),
        cmocka_unit_test(test_multi_gpu),
        cmocka_unit_test(test_ps_queue),
        cmocka_unit_test(test_scenario_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
