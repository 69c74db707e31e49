/*
 * The Volcano policy (models/fs_volcano.c).
 *
 * Proofs:
 *   - proportion: deserved shares against hand computations (weights 1:2:3
 *     with demands under and over their share, capability, guarantee), and
 *     the O(Q log Q) water-filling equal to Volcano's own iterative loop on
 *     random inputs;
 *   - gang: a job starts with all its GPUs or waits, while smaller jobs
 *     pass it (hand schedule);
 *   - capability is never exceeded (peak held GPUs, hand schedule);
 *   - reclaim brings an underserved queue up to exactly its deserved share
 *     and evicts no more than that (hand schedule);
 *   - drf: the tenant with the lower dominant share goes first (hand case,
 *     and the reverse order without drf);
 *   - preempt within a queue by priority (hand case);
 *   - schedule-period: a session only at multiples of the period;
 *   - configuration: queue list keys, errors for duplicate queues/tenants;
 *   - qualitative: a steady and a bursty queue, with and without reclaim
 *     (numbers in docs/validation.md).
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

#include <gsl/gsl_randist.h>

#include "fs_test_util.h"
#include "models/fs_model.h"
#include "models/fs_policy.h"
#include "models/fs_volcano.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"
#include "traces/fs_memsrc.h"

#define S(x) ((fs_time_t)((x) * FS_US_PER_S))

static const fs_job_row_t *find(const fs_test_rows_t *rs, uint64_t id)
{
    const fs_job_row_t *r = fs_test_find(rs, id);
    if (!r)
        fail_msg("job %llu has no row", (unsigned long long)id);
    return r;
}

static fs_job_t job(uint64_t id, double submit, uint32_t gpus, double dur, int32_t tenant)
{
    fs_job_t j;
    fs_job_init(&j);
    j.id = id;
    j.submit = S(submit);
    j.gpus = gpus;
    j.duration = S(dur);
    j.tenant = tenant;
    return j;
}

/* A config from a scheduler block and a pool of nodes x gpn GPUs. */
static void load(fs_config_t *cfg, uint32_t nodes, uint32_t gpn, const char *sched)
{
    char text[4096];
    snprintf(text, sizeof text,
             "cluster: {pools: [{name: p, gpu: H100, nodes: %u, gpus_per_node: %u}]}\n"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1}, "
             "duration: {dist: constant, value: 1h}}}\n"
             "output: {timeline_interval: 0s}\n"
             "scheduler: %s\n",
             nodes, gpn, sched);
    fs_error_t err;
    fs_error_clear(&err);
    if (fs_scenario_load_string("<test>", text, NULL, 0, cfg, &err))
        fail_msg("scenario: %s", err.msg);
    cfg->horizon = FS_TIME_MAX_INPUT;
}

static const char *const tenants[] = {"a", "b", "c", "d"};

typedef struct vout {
    fs_volcano_qstat_t q[8];
    size_t nq;
    uint64_t reclaimed, preempted;
} vout_t;

static void run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, fs_test_rows_t *rs, vout_t *o)
{
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    fs_error_clear(&err);
    assert_int_equal(fs_memsrc_create(jobs, n, tenants, 4, NULL, 0, &src, &err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    if (fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err))
        fail_msg("create: %s", err.msg);
    assert_ptr_equal(fs_policy_select(&cfg->scheduler), &fs_policy_volcano);
    if (fs_model_run(m, NULL, NULL, &err))
        fail_msg("run: %s", err.msg);
    fs_run_totals_t t;
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    fs_test_check_capstates(&t);
    const void *st = fs_model_policy_state(m);
    o->nq = fs_volcano_queue_count(st);
    for (size_t i = 0; i < o->nq && i < 8; i++)
        fs_volcano_queue_stat(st, i, &o->q[i]);
    o->reclaimed = fs_volcano_reclaimed(st);
    o->preempted = fs_volcano_preempted(st);
    fs_model_destroy(m);
    fs_source_destroy(src);
}

/* ---- proportion ------------------------------------------------------------------ */

static void shares(const fs_volcano_share_in_t *in, size_t n, double total, double *fast,
                   double *ref)
{
    fs_volcano_sortkey_t scratch[64];
    assert_int_equal(fs_volcano_deserved(in, n, total, fast, scratch), 0);
    fs_volcano_deserved_ref(in, n, total, ref, scratch);
}

/* 60 GPUs, weights 1:2:3 (fair shares 10, 20, 30). */
static void test_waterfill_hand(void **st)
{
    (void)st;
    double f[4], r[4];
    /* q1 asks 5 (under its 10): the 55 left split 2:3 -> 22, 33 */
    fs_volcano_share_in_t a[] = {{1, 5, 0, 0}, {2, 100, 0, 0}, {3, 100, 0, 0}};
    shares(a, 3, 60, f, r);
    double want_a[] = {5, 22, 33};
    for (int i = 0; i < 3; i++) {
        assert_double_equal(f[i], want_a[i], 1e-9);
        assert_double_equal(r[i], want_a[i], 1e-9);
    }
    /* q2 asks 15 (under its 22 of round 2): q3 takes the rest, 40 */
    fs_volcano_share_in_t b[] = {{1, 5, 0, 0}, {2, 15, 0, 0}, {3, 100, 0, 0}};
    shares(b, 3, 60, f, r);
    double want_b[] = {5, 15, 40};
    for (int i = 0; i < 3; i++) {
        assert_double_equal(f[i], want_b[i], 1e-9);
        assert_double_equal(r[i], want_b[i], 1e-9);
    }
    /* capability: q3 capped at 30 (< its 33): q2 gets 60 - 5 - 30 = 25 */
    fs_volcano_share_in_t c[] = {{1, 5, 0, 0}, {2, 100, 0, 0}, {3, 100, 30, 0}};
    shares(c, 3, 60, f, r);
    double want_c[] = {5, 25, 30};
    for (int i = 0; i < 3; i++) {
        assert_double_equal(f[i], want_c[i], 1e-9);
        assert_double_equal(r[i], want_c[i], 1e-9);
    }
    /* everyone over-demands: exactly 10, 20, 30; a queue without jobs gets 0 */
    fs_volcano_share_in_t d[] = {{1, 100, 0, 0}, {2, 100, 0, 0}, {3, 100, 0, 0}, {5, 0, 0, 0}};
    shares(d, 4, 60, f, r);
    double want_d[] = {10, 20, 30, 0};
    for (int i = 0; i < 4; i++) {
        assert_double_equal(f[i], want_d[i], 1e-9);
        assert_double_equal(r[i], want_d[i], 1e-9);
    }
    /* demand under the cluster: every queue gets its request */
    fs_volcano_share_in_t e[] = {{1, 7, 0, 0}, {2, 3, 0, 0}, {3, 11, 0, 0}};
    shares(e, 3, 60, f, r);
    double want_e[] = {7, 3, 11};
    for (int i = 0; i < 3; i++)
        assert_double_equal(f[i], want_e[i], 1e-9);
}

/* Guarantee (Volcano's loop): 100 GPUs, two queues of weight 1 asking 100.
 * g1 = 40: round 1 gives 50 each (>= 40): 50/50.  g1 = 70: q1 is raised to
 * 70 and q2's real capability is 100 - 70 = 30: 70/30. */
static void test_guarantee_hand(void **st)
{
    (void)st;
    double f[2], r[2];
    fs_volcano_share_in_t a[] = {{1, 100, 0, 40}, {1, 100, 0, 0}};
    shares(a, 2, 100, f, r);
    assert_double_equal(f[0], 50, 1e-9);
    assert_double_equal(f[1], 50, 1e-9);
    a[0].guarantee = 70;
    shares(a, 2, 100, f, r);
    assert_double_equal(f[0], 70, 1e-9);
    assert_double_equal(f[1], 30, 1e-9);
}

/* The sorted water-filling equals the plugin's loop on random queues. */
static void test_waterfill_equals_loop(void **st)
{
    (void)st;
    fs_rng_t rng;
    assert_int_equal(fs_rng_init(&rng, 7, 0, FS_RNG_TRACE, 0), 0);
    for (int rep = 0; rep < 2000; rep++) {
        size_t n = 1 + gsl_rng_uniform_int(rng.g, 20);
        fs_volcano_share_in_t in[20];
        double total = (double)(1 + gsl_rng_uniform_int(rng.g, 4096));
        for (size_t i = 0; i < n; i++) {
            in[i].weight = (double)(1 + gsl_rng_uniform_int(rng.g, 10));
            in[i].request = gsl_rng_uniform(rng.g) < 0.15
                                ? 0
                                : (double)gsl_rng_uniform_int(rng.g, (unsigned long)total);
            in[i].capability = gsl_rng_uniform(rng.g) < 0.3
                                   ? (double)(1 + gsl_rng_uniform_int(rng.g, (unsigned long)total))
                                   : 0;
            in[i].guarantee = 0;
        }
        double f[20], r[20], sum = 0;
        shares(in, n, total, f, r);
        for (size_t i = 0; i < n; i++) {
            assert_double_equal(f[i], r[i], 1e-7 * total);
            assert_true(f[i] <= in[i].request + 1e-9);
            if (in[i].capability > 0)
                assert_true(f[i] <= in[i].capability + 1e-9);
            sum += f[i];
        }
        assert_true(sum <= total + 1e-6);
    }
    fs_rng_release(&rng);
}

/* ---- hand schedules ------------------------------------------------------------------- */

/* Gang, one 8-GPU node, one queue.  A(0, 6 GPUs, 100 s).  B(1, 4 GPUs)
 * needs 4 with 2 free: it gets none (no partial start) until A ends at
 * 100.  C(2, 2 GPUs, 10 s) passes it at 2.  D(3, 3 GPUs) waits with B and
 * starts beside it at 100 (4 + 3 <= 8). */
static void test_gang_all_or_nothing(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    load(&cfg, 1, 8, "{queue: volcano, volcano: {period: 0s}}");
    fs_job_t jobs[] = {job(1, 0, 6, 100, -1), job(2, 1, 4, 50, -1), job(3, 2, 2, 10, -1),
                       job(4, 3, 3, 50, -1)};
    static fs_test_rows_t rs;
    vout_t o;
    run(&cfg, jobs, 4, &rs, &o);
    assert_double_equal(find(&rs, 1)->start, 0, 0);
    assert_double_equal(find(&rs, 2)->start, 100, 0);
    assert_double_equal(find(&rs, 3)->start, 2, 0);
    assert_double_equal(find(&rs, 4)->start, 100, 0);
    assert_int_equal(find(&rs, 2)->gpus, 4);
    assert_double_equal(o.q[0].peak, 8, 0); /* never more than the node */
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Capability 4 on an 8-GPU cluster: ten 1-GPU jobs of 10 s at 0 run four
 * at a time (0, 10, 20), never five, though GPUs are idle. */
static void test_capability(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    load(&cfg, 8, 1,
         "{queue: volcano, volcano: {period: 0s, queues: [{name: qa, capability: 4, "
         "tenants: a}]}}");
    fs_job_t jobs[10];
    for (int i = 0; i < 10; i++)
        jobs[i] = job((uint64_t)i + 1, 0, 1, 10, 0);
    static fs_test_rows_t rs;
    vout_t o;
    run(&cfg, jobs, 10, &rs, &o);
    for (int i = 0; i < 10; i++)
        assert_double_equal(find(&rs, (uint64_t)i + 1)->start, 10.0 * (i / 4), 0);
    assert_string_equal(o.q[0].name, "qa");
    assert_double_equal(o.q[0].peak, 4, 0);
    assert_double_equal(o.q[0].capability, 4, 0);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Reclaim.  12 one-GPU nodes; qa (weight 1) and qb (weight 2).  At 0 qa
 * starts twelve 1-GPU jobs of 1000 s (alone, it deserves all 12).  At 10
 * qb asks for 8: deserved = 4 and 8 (12 x 1/3 and x 2/3).  Reclaim evicts
 * exactly 8 of qa's jobs (down to its 4), and qb's eight start at 10.
 * Without reclaim qb waits until 1000. */
static void test_reclaim(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t jobs[20];
    for (int i = 0; i < 12; i++)
        jobs[i] = job((uint64_t)i + 1, 0, 1, 1000, 0);
    for (int i = 12; i < 20; i++)
        jobs[i] = job((uint64_t)i + 1, 10, 1, 100, 1);
    static fs_test_rows_t rs;
    vout_t o;
    fs_config_t cfg;
    load(&cfg, 12, 1,
         "{queue: volcano, volcano: {period: 0s, reclaim: true, queues: [{name: qa, weight: 1, "
         "tenants: a}, {name: qb, weight: 2, tenants: b}]}}");
    run(&cfg, jobs, 20, &rs, &o);
    for (int i = 12; i < 20; i++)
        assert_double_equal(find(&rs, (uint64_t)i + 1)->start, 10, 0);
    uint32_t restarted = 0;
    for (int i = 0; i < 12; i++)
        restarted += find(&rs, (uint64_t)i + 1)->restarts;
    assert_int_equal(restarted, 8);
    assert_int_equal(o.reclaimed, 8);
    assert_double_equal(o.q[1].peak, 8, 0);     /* qb reached its deserved 8 */
    assert_double_equal(o.q[0].peak, 12, 0);
    fs_config_release(&cfg);
    load(&cfg, 12, 1,
         "{queue: volcano, volcano: {period: 0s, queues: [{name: qa, weight: 1, "
         "tenants: a}, {name: qb, weight: 2, tenants: b}]}}");
    run(&cfg, jobs, 20, &rs, &o);
    for (int i = 12; i < 20; i++)
        assert_double_equal(find(&rs, (uint64_t)i + 1)->start, 1000, 0);
    assert_int_equal(o.reclaimed, 0);
    fs_config_release(&cfg);
    /* qa not reclaimable: qb waits too */
    load(&cfg, 12, 1,
         "{queue: volcano, volcano: {period: 0s, reclaim: true, queues: [{name: qa, weight: 1, "
         "reclaimable: false, tenants: a}, {name: qb, weight: 2, tenants: b}]}}");
    run(&cfg, jobs, 20, &rs, &o);
    assert_int_equal(o.reclaimed, 0);
    assert_double_equal(find(&rs, 13)->start, 1000, 0);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* DRF order within a queue.  4 one-GPU nodes, tenants a and b, both in
 * the default queue.  a holds 3 GPUs for 100 s and a 4th for 10 s.  a4
 * (t=1) and b1 (t=2) wait.  At 10 one GPU frees: drf picks b1 (tenant b
 * holds 0 < a's 3) though a4 came first; a4 starts when b1 ends at 60.
 * drf off: a4 at 10, b1 at 60. */
static void test_drf_order(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t jobs[] = {job(1, 0, 1, 100, 0), job(2, 0, 1, 100, 0), job(3, 0, 1, 100, 0),
                       job(4, 0, 1, 10, 0),  job(5, 1, 1, 50, 0),  job(6, 2, 1, 50, 1)};
    static fs_test_rows_t rs;
    vout_t o;
    fs_config_t cfg;
    load(&cfg, 4, 1, "{queue: volcano, volcano: {period: 0s}}");
    run(&cfg, jobs, 6, &rs, &o);
    assert_double_equal(find(&rs, 6)->start, 10, 0);
    assert_double_equal(find(&rs, 5)->start, 60, 0);
    assert_int_equal(o.nq, 1);
    assert_string_equal(o.q[0].name, "default");
    fs_config_release(&cfg);
    load(&cfg, 4, 1, "{queue: volcano, volcano: {period: 0s, drf: false}}");
    run(&cfg, jobs, 6, &rs, &o);
    assert_double_equal(find(&rs, 5)->start, 10, 0);
    assert_double_equal(find(&rs, 6)->start, 60, 0);
    fs_config_release(&cfg);
    /* priority comes before drf: a4 with priority 1 goes first again */
    jobs[4].priority = 1;
    load(&cfg, 4, 1, "{queue: volcano, volcano: {period: 0s}}");
    run(&cfg, jobs, 6, &rs, &o);
    assert_double_equal(find(&rs, 5)->start, 10, 0);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Preempt within a queue.  Two 1-GPU nodes.  L (priority 0, 2 GPUs, 100 s)
 * at 0; H (priority 5, 1 GPU, 10 s) at 5 evicts L and runs 5-15; L
 * (all its work lost) restarts at 15 and ends at 115.  Without preempt H
 * waits until 100. */
static void test_preempt(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t jobs[] = {job(1, 0, 2, 100, -1), job(2, 5, 1, 10, -1)};
    jobs[1].priority = 5;
    static fs_test_rows_t rs;
    vout_t o;
    fs_config_t cfg;
    load(&cfg, 2, 1, "{queue: volcano, volcano: {period: 0s, preempt: true}}");
    run(&cfg, jobs, 2, &rs, &o);
    assert_double_equal(find(&rs, 2)->start, 5, 0);
    assert_double_equal(find(&rs, 1)->end, 115, 0);
    assert_int_equal(find(&rs, 1)->restarts, 1);
    assert_int_equal(o.preempted, 1);
    fs_config_release(&cfg);
    load(&cfg, 2, 1, "{queue: volcano, volcano: {period: 0s}}");
    run(&cfg, jobs, 2, &rs, &o);
    assert_double_equal(find(&rs, 2)->start, 100, 0);
    assert_int_equal(o.preempted, 0);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* schedule-period 1 s (the default): a job submitted at 0.3 s starts at
 * 1 s; one submitted at exactly 2 s starts at 2 s. */
static void test_period(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t jobs[] = {job(1, 0.3, 1, 10, -1), job(2, 2, 1, 10, -1)};
    static fs_test_rows_t rs;
    vout_t o;
    fs_config_t cfg;
    load(&cfg, 2, 1, "{queue: volcano}");
    assert_int_equal(cfg.scheduler.volcano.period, S(1));
    run(&cfg, jobs, 2, &rs, &o);
    assert_double_equal(find(&rs, 1)->start, 1, 0);
    assert_double_equal(find(&rs, 2)->start, 2, 0);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Tenants map to queues by list, by name, else to default. */
static void test_mapping_and_errors(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t jobs[] = {job(1, 0, 1, 10, 0), job(2, 0, 1, 10, 1), job(3, 0, 1, 10, 2),
                       job(4, 0, 1, 10, 3), job(5, 0, 1, 10, -1)};
    static fs_test_rows_t rs;
    vout_t o;
    fs_config_t cfg;
    /* a, c -> q1 (listed); b -> b (its name); d and no tenant -> default */
    load(&cfg, 8, 1,
         "{queue: volcano, volcano: {period: 0s, queues: [{name: q1, tenants: 'a, c'}, "
         "{name: b}]}}");
    assert_int_equal(cfg.scheduler.volcano.n_queues, 2);
    assert_int_equal(cfg.scheduler.volcano.queues[0].weight, 1);
    assert_true(cfg.scheduler.volcano.queues[0].reclaimable);
    run(&cfg, jobs, 5, &rs, &o);
    assert_int_equal(o.nq, 3);
    assert_string_equal(o.q[2].name, "default");
    assert_double_equal(o.q[0].peak, 2, 0);
    assert_double_equal(o.q[1].peak, 1, 0);
    assert_double_equal(o.q[2].peak, 2, 0);
    fs_config_release(&cfg);

    /* errors: a queue twice, a tenant in two queues -- refused by the
     * scenario loader at the key (the policy's check hook), and by
     * creating the policy from a configuration changed afterwards */
    const char *bad[] = {"{queue: volcano, volcano: {queues: [{name: x}, {name: x}]}}",
                         "{queue: volcano, volcano: {queues: [{name: x, tenants: 'a,b'}, "
                         "{name: y, tenants: 'c, b'}]}}"};
    for (int i = 0; i < 2; i++) {
        char text[4096];
        snprintf(text, sizeof text,
                 "cluster: {pools: [{name: p, gpu: H100, nodes: 8, gpus_per_node: 1}]}\n"
                 "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1}, "
                 "duration: {dist: constant, value: 1h}}}\n"
                 "scheduler: %s\n", bad[i]);
        fs_error_t err;
        assert_int_equal(fs_scenario_load_string("<test>", text, NULL, 0, &cfg, &err), FS_EINVAL);
        assert_non_null(strstr(err.msg, "<test>:3:"));
        assert_non_null(strstr(err.msg, i == 0 ? "'x' is given twice" : "tenant 'b'"));
    }
    load(&cfg, 8, 1, "{queue: volcano, volcano: {queues: [{name: x}, {name: y}]}}");
    fs_free(cfg.scheduler.volcano.queues[1].name);
    cfg.scheduler.volcano.queues[1].name = fs_strdup("x");
    {
        fs_source_t *src;
        fs_model_t *m;
        fs_error_t err;
        fs_error_clear(&err);
        assert_int_equal(fs_memsrc_create(jobs, 5, tenants, 4, NULL, 0, &src, &err), 0);
        assert_int_equal(fs_model_create(&cfg, fs_policy_select(&cfg.scheduler),
                                         src, NULL, &m, &err), FS_EINVAL);
        assert_non_null(strstr(err.msg, "'x' is given twice"));
        fs_source_destroy(src);
        fs_config_release(&cfg);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- qualitative: a steady and a bursty queue ---------------------------------------------- */

/* 64 nodes of 8 GPUs (512); queues steady and bursty, equal weights
 * (deserved 256 each when both want more).  steady: 1-8 GPU jobs of 6 h
 * (exponential) at 90% of the cluster, all the time.  bursty: 50 jobs of
 * 1-8 GPUs and 30 min every 12 h (about 225 GPUs: under its 256).  Without
 * reclaim a burst waits for steady jobs to end; with reclaim it takes its
 * share at once, at the price of evicted steady jobs. */
typedef struct qual {
    double wait_b, wait_s;  /* mean wait, s */
    double lost_s;          /* GPU-hours of steady work lost to evictions */
    uint64_t reclaimed;
} qual_t;

static void qualitative(int reclaim, const char *ckpt, qual_t *q)
{
    enum { N = 4000, BURST = 50 };
    static fs_job_t jobs[N];
    fs_rng_t rng;
    assert_int_equal(fs_rng_init(&rng, 11, 0, FS_RNG_TRACE, 0), 0);
    double t = 0, rate = 0.9 * 512 / (4.5 * 6 * 3600.0);    /* mean 4.5 GPUs, 6 h */
    size_t n = 0;
    double next_burst = 6 * 3600.0;
    while (n < N) {
        t += gsl_ran_exponential(rng.g, 1.0 / rate);
        while (next_burst <= t && n + BURST <= N) {
            for (int k = 0; k < BURST; k++, n++)
                jobs[n] = job(n + 1, next_burst, 1 + (uint32_t)gsl_rng_uniform_int(rng.g, 8),
                              gsl_ran_exponential(rng.g, 1800.0) + 1, 1);
            next_burst += 12 * 3600.0;
        }
        if (n < N) {
            jobs[n] = job(n + 1, t, 1 + (uint32_t)gsl_rng_uniform_int(rng.g, 8),
                          gsl_ran_exponential(rng.g, 6 * 3600.0) + 1, 0);
            n++;
        }
    }
    fs_rng_release(&rng);
    static fs_test_rows_t rs;
    vout_t o;
    fs_config_t cfg;
    char sched[512];
    snprintf(sched, sizeof sched,
             "{queue: volcano, placement: binpack, checkpoint_interval: %s, volcano: {reclaim: %s, "
             "queues: [{name: steady, tenants: a}, {name: bursty, tenants: b}]}}",
             ckpt, reclaim ? "true" : "false");
    load(&cfg, 64, 8, sched);
    run(&cfg, jobs, n, &rs, &o);
    double wb = 0, ws = 0, rsum = 0;
    size_t nb = 0, ns = 0;
    for (size_t i = 0; i < rs.n; i++) {
        if (rs.r[i].tenant == 1) {
            wb += rs.r[i].wait;
            nb++;
        } else {
            ws += rs.r[i].wait;
            rsum += rs.r[i].lost_gpu_s / 3600;
            ns++;
        }
    }
    q->wait_b = wb / (double)nb;
    q->wait_s = ws / (double)ns;
    q->lost_s = rsum;
    q->reclaimed = o.reclaimed;
    fs_config_release(&cfg);
}

static void test_bursty_qualitative(void **st)
{
    (void)st;
    qual_t off, on, ck;
    qualitative(0, "0s", &off);
    qualitative(1, "0s", &on);
    qualitative(1, "30m", &ck);
    printf("# bursty queue mean wait: %.0f s without reclaim, %.0f s with reclaim, %.0f s with "
           "reclaim and 30 min checkpoints\n", off.wait_b, on.wait_b, ck.wait_b);
    printf("# steady queue mean wait: %.0f s, %.0f s, %.0f s; evicted %llu, %llu jobs; "
           "%.0f, %.0f GPU-h lost\n", off.wait_s, on.wait_s, ck.wait_s,
           (unsigned long long)on.reclaimed, (unsigned long long)ck.reclaimed, on.lost_s,
           ck.lost_s);
    assert_true(ck.lost_s < on.lost_s);
    assert_int_equal(off.reclaimed, 0);
    assert_true(off.lost_s == 0);
    assert_true(on.reclaimed > 0);
    assert_true(on.wait_b < 0.2 * off.wait_b);      /* reclaim serves the burst at once */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waterfill_hand),
        cmocka_unit_test(test_guarantee_hand),
        cmocka_unit_test(test_waterfill_equals_loop),
        cmocka_unit_test(test_gang_all_or_nothing),
        cmocka_unit_test(test_capability),
        cmocka_unit_test(test_reclaim),
        cmocka_unit_test(test_drf_order),
        cmocka_unit_test(test_preempt),
        cmocka_unit_test(test_period),
        cmocka_unit_test(test_mapping_and_errors),
        cmocka_unit_test(test_bursty_qualitative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
