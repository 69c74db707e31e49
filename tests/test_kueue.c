/*
 * Kueue admission (models/fs_kueue.c) and its manifests
 * (scenarios/fs_kueue_yaml.c).
 *
 * Proofs, each against times worked by hand on one-GPU nodes (no node
 * fragmentation, so quota alone decides):
 *   - borrowing within a cohort, borrowingLimit, lendingLimit, no cohort;
 *   - StrictFIFO's head blocks its CQ, BestEffortFIFO lets others go;
 *   - preemption: withinClusterQueue candidate order (lowest priority,
 *     then most recently admitted) and the minimal set; reclaim takes from
 *     borrowing CQs first and returns the quota to its owner; Never waits;
 *   - fair sharing admits the CQ with the lower dominant resource share;
 *   - a job that loses its node gives its quota back;
 *   - invariants after every pass on random workloads (usage = admitted
 *     jobs, limits, cohort sums), with and without preemption and fair
 *     sharing;
 *   - manifests: fields read, LocalQueues, errors with FILE:LINE:COL;
 *     scenario keys and their cross-checks;
 *   - qualitative: on a two-tenant workload borrowing cuts the busy
 *     tenant's mean wait.
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
#include "models/fs_kueue.h"
#include "models/fs_model.h"
#include "models/fs_policy.h"
#include "scenarios/fs_kueue_yaml.h"
#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"
#include "sim/fs_rng.h"
#include "traces/fs_memsrc.h"

#include <gsl/gsl_randist.h>

#define S(x) ((fs_time_t)((x) * FS_US_PER_S))

static const fs_job_row_t *find(const fs_test_rows_t *rs, uint64_t id)
{
    const fs_job_row_t *r = fs_test_find(rs, id);
    if (!r)
        fail_msg("no row for job %llu", (unsigned long long)id);
    return r;
}

/* ---- configs ------------------------------------------------------------- */

#define MAXCQ 8
typedef struct kcfg {
    fs_config_t c;
    fs_pool_cfg_t pool;
    fs_kueue_cq_cfg_t cq[MAXCQ];
    fs_kueue_quota_cfg_t q[MAXCQ];
} kcfg_t;

static void base(kcfg_t *k, uint32_t gpus)
{
    memset(k, 0, sizeof *k);
    fs_config_t *c = &k->c;
    k->pool = (fs_pool_cfg_t){.name = "p", .gpu = "H100", .nodes = gpus, .gpus_per_node = 1};
    c->cluster.pools = &k->pool;
    c->cluster.n_pools = 1;
    c->horizon = FS_TIME_MAX_INPUT;
    c->until = FS_UNTIL_DRAIN;
    c->scheduler.queue = FS_QUEUE_KUEUE;
    c->scheduler.placement = FS_PLACE_FIRST_FIT;
    c->scheduler.kueue.cqs = k->cq;
}

/* Adds CQ `name` (tenant of the same name) with nominal GPUs in flavor "p". */
static fs_kueue_cq_cfg_t *add_cq(kcfg_t *k, const char *name, const char *cohort, double nominal)
{
    size_t i = k->c.scheduler.kueue.n_cqs++;
    fs_kueue_cq_cfg_t *q = &k->cq[i];
    k->q[i] = (fs_kueue_quota_cfg_t){.flavor = "p", .nominal = nominal, .borrowing_limit = -1,
                                      .lending_limit = -1};
    *q = (fs_kueue_cq_cfg_t){.name = (char *)name, .cohort = (char *)cohort, .quotas = &k->q[i],
                             .n_quotas = 1, .borrow_max_priority = NAN, .weight = 1};
    return q;
}

static fs_job_t job(uint64_t id, double submit, uint32_t gpus, double dur, int32_t tenant, int32_t prio)
{
    fs_job_t j;
    fs_job_init(&j);
    j.id = id;
    j.submit = S(submit);
    j.gpus = gpus;
    j.duration = S(dur);
    j.tenant = tenant;
    j.priority = prio;
    return j;
}

static const char *const TN[] = {"a", "b", "c", "d"};

typedef struct out {
    fs_kueue_stats_t st;
    uint64_t adm[64], vic[64];
    size_t n_adm, n_vic;
} out_t;

static void run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, fs_test_rows_t *rs, out_t *o)
{
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, n, TN, 4, NULL, 0, &src, &err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    if (fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err))
        fail_msg("create: %s", err.msg);
    void *st = fs_model_policy_state(m);
    fs_kueue_check_every(st, 1);
    fs_kueue_record(st, 1);
    if (fs_model_run(m, NULL, NULL, &err))
        fail_msg("run: %s", err.msg);
    fs_run_totals_t t;
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    fs_test_check_capstates(&t);
    if (o) {
        o->st = *fs_kueue_stats(st);
        const uint64_t *a = fs_kueue_admissions(st, &o->n_adm);
        if (o->n_adm)
            memcpy(o->adm, a, (o->n_adm < 64 ? o->n_adm : 64) * sizeof *a);
        const uint64_t *v = fs_kueue_victims(st, &o->n_vic);
        if (o->n_vic)
            memcpy(o->vic, v, (o->n_vic < 64 ? o->n_vic : 64) * sizeof *v);
    }
    const fs_kueue_stats_t *s = fs_kueue_stats(st);
    if (s->violations)
        fail_msg("invariant: %s", s->last_violation);
    assert_true(s->checks > 0);
    /* /summary's policy counts are the policy's own */
    assert_int_equal(t.admissions, s->admitted);
    assert_int_equal(t.admissions_borrowing, s->borrowed);
    assert_int_equal(t.reclaims, s->reclaimed);
    assert_int_equal(t.backfilled, 0);
    fs_model_destroy(m);
    fs_source_destroy(src);
}

static double start_of(const fs_test_rows_t *rs, uint64_t id) { return find(rs, id)->start; }

/* ---- borrowing ------------------------------------------------------------ */

/* 16 GPUs; CQ a and b have 8 each; a submits four 4-GPU jobs of 10 s. */
static void borrow_case(const char *cohort, double blimit, double b_lend, const double *want)
{
    kcfg_t k;
    base(&k, 16);
    add_cq(&k, "a", cohort, 8)->quotas->borrowing_limit = blimit;
    add_cq(&k, "b", cohort, 8)->quotas->lending_limit = b_lend;
    fs_job_t jobs[4];
    for (int i = 0; i < 4; i++)
        jobs[i] = job((uint64_t)i + 1, 0, 4, 10, 0, 0);
    static fs_test_rows_t rs;
    out_t o;
    run(&k.c, jobs, 4, &rs, &o);
    for (int i = 0; i < 4; i++)
        assert_double_equal(start_of(&rs, (uint64_t)i + 1), want[i], 1e-9);
}

static void test_borrowing(void **state)
{
    (void)state;
    const double all[] = {0, 0, 0, 0}, half[] = {0, 0, 10, 10}, three[] = {0, 0, 0, 10};
    borrow_case("c", -1, -1, all);      /* a borrows b's idle 8 GPUs */
    borrow_case(NULL, -1, -1, half);    /* no cohort: a stays within 8 */
    borrow_case("c", 4, -1, three);     /* borrowingLimit 4: 12 GPUs at most */
    borrow_case("c", -1, 4, three);     /* b lends at most 4 */
    borrow_case("c", 0, -1, half);      /* borrowingLimit 0 */
    borrow_case("c", -1, 0, half);      /* lendingLimit 0 */
}

/* lendingLimit keeps the owner's guaranteed part: b (8, lends 2) is idle,
 * a takes 2 more; then b's own 6-GPU job starts at once at t=1. */
static void test_lending_keeps_guaranteed(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 16);
    add_cq(&k, "a", "c", 8);
    add_cq(&k, "b", "c", 8)->quotas->lending_limit = 2;
    fs_job_t jobs[] = {job(1, 0, 2, 100, 0, 0), job(2, 0, 2, 100, 0, 0), job(3, 0, 2, 100, 0, 0),
                       job(4, 0, 2, 100, 0, 0), job(5, 0, 2, 100, 0, 0), job(6, 0, 2, 100, 0, 0),
                       job(7, 1, 6, 10, 1, 0)};
    static fs_test_rows_t rs;
    out_t o;
    run(&k.c, jobs, 7, &rs, &o);
    for (uint64_t i = 1; i <= 5; i++)
        assert_double_equal(start_of(&rs, i), 0, 1e-9);
    assert_double_equal(start_of(&rs, 6), 100, 1e-9);  /* 10 GPUs used: a's 8 + 2 lent */
    assert_double_equal(start_of(&rs, 7), 1, 1e-9);    /* b's 6 guaranteed GPUs were kept */
    assert_int_equal(o.st.borrowed, 1);   /* and so /summary.admissions_borrowing */
}

/* ---- queueing strategies ------------------------------------------------- */

static void test_strict_and_best_effort(void **state)
{
    (void)state;
    for (int strict = 0; strict <= 1; strict++) {
        kcfg_t k;
        base(&k, 16);
        add_cq(&k, "a", NULL, 8)->strategy = strict ? FS_KUEUE_STRICT_FIFO : FS_KUEUE_BEST_EFFORT_FIFO;
        fs_job_t jobs[] = {job(1, 0, 6, 10, 0, 0), job(2, 1, 4, 10, 0, 0), job(3, 2, 2, 10, 0, 0)};
        static fs_test_rows_t rs;
        run(&k.c, jobs, 3, &rs, NULL);
        assert_double_equal(start_of(&rs, 1), 0, 1e-9);
        assert_double_equal(start_of(&rs, 2), 10, 1e-9);
        /* StrictFIFO: job 2 blocks the CQ; BestEffortFIFO: job 3 goes at 2 s */
        assert_double_equal(start_of(&rs, 3), strict ? 10 : 2, 1e-9);
    }
    /* the head of a CQ blocks only its own CQ */
    kcfg_t k;
    base(&k, 16);
    add_cq(&k, "a", NULL, 8)->strategy = FS_KUEUE_STRICT_FIFO;
    add_cq(&k, "b", NULL, 8);
    fs_job_t jobs[] = {job(1, 0, 6, 10, 0, 0), job(2, 1, 4, 10, 0, 0), job(3, 2, 2, 10, 1, 0)};
    static fs_test_rows_t rs;
    run(&k.c, jobs, 3, &rs, NULL);
    assert_double_equal(start_of(&rs, 3), 2, 1e-9);
}

/* Priority orders a CQ's queue (then admission order). */
static void test_priority_order(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 4);
    add_cq(&k, "a", NULL, 4);
    fs_job_t jobs[] = {job(1, 0, 4, 10, 0, 0), job(2, 1, 4, 10, 0, 0), job(3, 2, 4, 10, 0, 5),
                       job(4, 3, 4, 10, 0, 5)};
    static fs_test_rows_t rs;
    run(&k.c, jobs, 4, &rs, NULL);
    assert_double_equal(start_of(&rs, 3), 10, 1e-9);
    assert_double_equal(start_of(&rs, 4), 20, 1e-9);
    assert_double_equal(start_of(&rs, 2), 30, 1e-9);
}

/* ---- preemption ------------------------------------------------------------ */

/* withinClusterQueue LowerPriority: victims in order lowest priority, then
 * most recently admitted; the minimal set (fill-back) is kept. */
static void test_preempt_within(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 8);
    fs_kueue_cq_cfg_t *a = add_cq(&k, "a", NULL, 8);
    a->within_cq = FS_KUEUE_LOWER_PRIORITY;
    fs_job_t jobs[] = {job(1, 0, 2, 100, 0, 1), job(2, 0, 2, 100, 0, 0), job(3, 0, 2, 100, 0, 0),
                       job(4, 0, 2, 100, 0, 1), job(5, 5, 4, 10, 0, 5)};
    static fs_test_rows_t rs;
    out_t o;
    run(&k.c, jobs, 5, &rs, &o);
    assert_double_equal(start_of(&rs, 5), 5, 1e-9);
    assert_int_equal(o.n_vic, 2);
    assert_int_equal(o.vic[0], 3);  /* priority 0, admitted after job 2 */
    assert_int_equal(o.vic[1], 2);
    assert_int_equal(find(&rs, 2)->restarts, 1);
    assert_int_equal(find(&rs, 1)->restarts, 0);
    assert_double_equal(find(&rs, 3)->lost_gpu_s, 10, 1e-6); /* 2 GPUs x 5 s, no checkpoint */
    /* fill-back: the 1-GPU job taken first is not needed once the 4-GPU one is */
    fs_job_t fb[] = {job(1, 0, 3, 100, 0, 1), job(2, 0, 4, 100, 0, 0), job(3, 0.5, 1, 100, 0, 0),
                     job(4, 5, 4, 10, 0, 5)};
    run(&k.c, fb, 4, &rs, &o);
    assert_int_equal(o.n_vic, 1);
    assert_int_equal(o.vic[0], 2);
    assert_double_equal(start_of(&rs, 4), 5, 1e-9);
    /* Never: the job waits */
    a->within_cq = FS_KUEUE_NEVER;
    run(&k.c, jobs, 5, &rs, &o);
    assert_double_equal(start_of(&rs, 5), 100, 1e-9);
    assert_int_equal(o.n_vic, 0);
    /* LowerOrNewerEqualPriority also takes newer jobs of equal priority */
    a->within_cq = FS_KUEUE_LOWER_OR_NEWER_EQUAL;
    fs_job_t eq[] = {job(1, 0, 4, 100, 0, 0), job(2, 1, 4, 100, 0, 0), job(3, 2, 8, 10, 0, 0)};
    run(&k.c, eq, 3, &rs, &o);
    assert_int_equal(o.n_vic, 0);   /* job 3 is newer than both */
    a->within_cq = FS_KUEUE_LOWER_PRIORITY;
}

/* Reclaim: b gets its nominal quota back from a, which borrowed it; the
 * candidates of the other CQ come before b's own lower-priority job. */
static void test_reclaim(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 16);
    add_cq(&k, "a", "c", 8);
    fs_kueue_cq_cfg_t *b = add_cq(&k, "b", "c", 8);
    b->within_cq = FS_KUEUE_LOWER_PRIORITY;
    b->reclaim = FS_KUEUE_ANY;
    fs_job_t jobs[10];
    jobs[0] = job(1, 0, 2, 100, 1, 0);                  /* b's own, priority 0 */
    for (int i = 0; i < 7; i++)                         /* a: 14 GPUs, priority 3 */
        jobs[1 + i] = job((uint64_t)i + 2, (double)i * 0.1, 2, 100, 0, 3);
    jobs[8] = job(20, 5, 4, 10, 1, 5);                  /* b needs 4 */
    static fs_test_rows_t rs;
    out_t o;
    run(&k.c, jobs, 9, &rs, &o);
    assert_double_equal(start_of(&rs, 20), 5, 1e-9);
    assert_int_equal(o.n_vic, 2);
    assert_int_equal(o.vic[0], 8);  /* a's most recently admitted first */
    assert_int_equal(o.vic[1], 7);
    assert_int_equal(o.st.reclaimed, 2);
    assert_int_equal(find(&rs, 1)->restarts, 0);
    /* reclaim Never: b waits for a's jobs */
    b->reclaim = FS_KUEUE_NEVER;
    b->within_cq = FS_KUEUE_NEVER;
    run(&k.c, jobs, 9, &rs, &o);
    assert_int_equal(o.n_vic, 0);
    assert_true(start_of(&rs, 20) >= 100);
}

/* After a reclaim the owner holds its nominal quota and the borrower
 * keeps only what is left (checked on the live state at the horizon). */
static void test_reclaim_returns_quota(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 16);
    add_cq(&k, "a", "c", 8);
    fs_kueue_cq_cfg_t *b = add_cq(&k, "b", "c", 8);
    b->reclaim = FS_KUEUE_LOWER_PRIORITY;
    fs_job_t jobs[12];
    for (int i = 0; i < 8; i++)
        jobs[i] = job((uint64_t)i + 1, 0, 2, 1000, 0, 0);
    for (int i = 0; i < 4; i++)
        jobs[8 + i] = job((uint64_t)i + 11, 5, 2, 1000, 1, 1);
    k.c.until = FS_UNTIL_HORIZON;
    k.c.horizon = S(50);
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, 12, TN, 4, NULL, 0, &src, &err), 0);
    assert_int_equal(fs_model_create(&k.c, fs_policy_select(&k.c.scheduler),
                                     src, NULL, &m, &err), 0);
    void *st = fs_model_policy_state(m);
    fs_kueue_check_every(st, 1);
    assert_int_equal(fs_model_run(m, NULL, NULL, &err), 0);
    assert_double_equal(fs_kueue_usage(st, "a", "p"), 8, 1e-9);
    assert_double_equal(fs_kueue_usage(st, "b", "p"), 8, 1e-9);
    assert_int_equal(fs_kueue_stats(st)->reclaimed, 4);
    /* a job that loses its node gives its quota back: a keeps jobs 1-4 on
     * nodes 0-3 (first fit; 5-8 were reclaimed, the newest first) */
    uint32_t hit = 0;
    assert_int_equal(fs_model_node_down(m, 0, FS_DOWN_FAIL, &hit), 0);
    assert_int_equal(hit, 1);
    assert_double_equal(fs_kueue_usage(st, "b", "p") + fs_kueue_usage(st, "a", "p"), 14, 1e-9);
    char msg[160];
    assert_int_equal(fs_kueue_check(st, msg, sizeof msg), 0);
    assert_int_equal(fs_kueue_stats(st)->violations, 0);
    fs_model_destroy(m);
    fs_source_destroy(src);
}

/* Fair sharing: of two borrowing heads the CQ with the lower dominant
 * resource share goes first (without it: admission order). */
static void test_fair_sharing(void **state)
{
    (void)state;
    for (int fair = 0; fair <= 1; fair++) {
        kcfg_t k;
        base(&k, 16);
        add_cq(&k, "a", "c", 4);
        add_cq(&k, "b", "c", 4);
        add_cq(&k, "c", "c", 8);    /* idle: lends 8 */
        k.c.scheduler.kueue.fair_sharing = fair;
        /* a runs 8 (borrows 4), b runs 4; at 1 s both want 4 more, 4 are free */
        fs_job_t jobs[] = {job(1, 0, 8, 100, 0, 0), job(2, 0, 4, 100, 1, 0), job(3, 1, 4, 10, 0, 0),
                           job(4, 1, 4, 10, 1, 0)};
        static fs_test_rows_t rs;
        run(&k.c, jobs, 4, &rs, NULL);
        assert_double_equal(start_of(&rs, fair ? 4 : 3), 1, 1e-9);
        assert_double_equal(start_of(&rs, fair ? 3 : 4), 11, 1e-9);
    }
}

/* Unmapped tenants stay pending; default_queue takes them. */
static void test_tenants(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 8);
    add_cq(&k, "a", NULL, 8)->tenants = "c, d";
    fs_job_t jobs[] = {job(1, 0, 2, 10, 2, 0), job(2, 0, 2, 10, 1, 0), job(3, 0, 2, 10, -1, 0)};
    static fs_test_rows_t rs;
    out_t o;
    /* b and no tenant: no ClusterQueue, pending for ever -- the drain
     * stops at once with FS_ESTUCK and names them (job 1 ran) */
    {
        fs_source_t *src;
        fs_model_t *m;
        fs_error_t err;
        assert_int_equal(fs_memsrc_create(jobs, 3, TN, 4, NULL, 0, &src, &err), 0);
        fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
        rs.n = 0;
        assert_int_equal(fs_model_create(&k.c, fs_policy_select(&k.c.scheduler),
                                         src, &sink, &m, &err), 0);
        assert_int_equal(fs_model_run(m, NULL, NULL, &err), FS_ESTUCK);
        assert_non_null(strstr(err.msg, "2 jobs (2, 3)"));
        assert_non_null(strstr(err.msg, "policy 'kueue' never starts it: tenant 'b' has no "
                                        "LocalQueue"));
        assert_double_equal(start_of(&rs, 1), 0, 1e-9);  /* c -> a by LocalQueue */
        assert_int_equal(fs_kueue_stats(fs_model_policy_state(m))->unmapped, 2);
        assert_true(fs_model_now(m) == 10 * 1000000);     /* when job 1 ended */
        fs_model_destroy(m);
        fs_source_destroy(src);
    }
    k.c.scheduler.kueue.default_queue = "a";
    run(&k.c, jobs, 3, &rs, &o);
    assert_double_equal(start_of(&rs, 2), 0, 1e-9);
    assert_double_equal(start_of(&rs, 3), 0, 1e-9);
}

/* ---- invariants on random workloads ----------------------------------------- */

static void random_jobs(fs_job_t *j, size_t n, uint64_t seed, double rate, int tenants)
{
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, seed, 0, FS_RNG_TRACE, 0), 0);
    static const uint32_t sizes[] = {1, 1, 1, 2, 2, 4, 8};
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        t += gsl_ran_exponential(r.g, 1.0 / rate);
        j[i] = job(i + 1, t, sizes[gsl_rng_uniform_int(r.g, 7)], 1 + gsl_ran_exponential(r.g, 100),
                   (int32_t)gsl_rng_uniform_int(r.g, (unsigned long)tenants),
                   (int32_t)gsl_rng_uniform_int(r.g, 3));
    }
    fs_rng_release(&r);
}

static void test_invariants_random(void **state)
{
    (void)state;
    static fs_job_t jobs[3000];
    static fs_test_rows_t rs;
    for (int variant = 0; variant < 6; variant++) {
        kcfg_t k;
        base(&k, 24);
        fs_kueue_cq_cfg_t *a = add_cq(&k, "a", "c", 8), *b = add_cq(&k, "b", "c", 6);
        fs_kueue_cq_cfg_t *c = add_cq(&k, "c", "c", 6), *d = add_cq(&k, "d", NULL, 8);
        a->quotas->borrowing_limit = 4;
        b->quotas->lending_limit = 3;
        c->strategy = FS_KUEUE_STRICT_FIFO;
        d->strategy = FS_KUEUE_STRICT_FIFO;
        if (variant & 1) {
            a->within_cq = b->within_cq = FS_KUEUE_LOWER_PRIORITY;
            c->within_cq = FS_KUEUE_LOWER_OR_NEWER_EQUAL;
            a->reclaim = FS_KUEUE_ANY;
            b->reclaim = c->reclaim = FS_KUEUE_LOWER_PRIORITY;
            b->borrow_within = FS_KUEUE_LOWER_PRIORITY;
            c->borrow_within = FS_KUEUE_LOWER_PRIORITY;
            c->borrow_max_priority = 1;
        }
        k.c.scheduler.kueue.fair_sharing = variant >= 2;
        b->weight = variant >= 4 ? 3 : 1;
        k.c.scheduler.checkpoint_interval = S(10);
        random_jobs(jobs, 3000, (uint64_t)variant + 7, 0.12, 4);
        out_t o;
        run(&k.c, jobs, 3000, &rs, &o);
        assert_true(o.st.checks > 1000);
        assert_true(o.st.borrowed > 0);
        if (variant & 1)
            assert_true(o.st.preempted > 0 && o.st.reclaimed > 0);
        size_t done = 0;
        for (size_t i = 0; i < rs.n; i++)
            done += rs.r[i].state == FS_STATE_COMPLETED;
        assert_int_equal(done, 3000);
    }
}

/* ---- the pods Kueue would admit (fs_policy_ops_t.with_pods) ------------------
 * What the cluster autoscaler sees (models/fs_autoscale.c): only workloads
 * Kueue would admit by quota have pods.  Oracle, on random CQs, cohorts,
 * limits, strategies and jobs, all submitted at 0: with nodes for
 * everything (R1), Kueue admits at 0 exactly the jobs its quota lets in.
 * With the same fleet as an empty node group (R2), the scan at 10 s must
 * bring up nodes for exactly those jobs (8-GPU nodes, jobs of 8-24 GPUs:
 * whole nodes, packing plays no part), and at 190 s (provision 2 min +
 * gpu_ready 1 min) exactly those start.  The invariant checks after every
 * pass show with_pods hands back the quota it took. */
typedef struct ngout {
    fs_test_rows_t rows;
    uint32_t prov10;     /* nodes provisioning at the first sample after the 10 s scan */
    int seen;
} ngout_t;

static int ng_row(void *ud, const fs_nodegroup_row_t *row)
{
    ngout_t *o = ud;
    if (!o->seen && row->time >= 10 && row->time < 190) {
        o->prov10 = row->nodes_provisioning;
        o->seen = 1;
    }
    return 0;
}

static int ng_job(void *ud, const fs_job_row_t *row)
{
    return fs_test_collect(&((ngout_t *)ud)->rows, row);
}

static void run_ng(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, ngout_t *o)
{
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, n, TN, 4, NULL, 0, &src, &err), 0);
    o->rows.n = 0;
    o->seen = 0;
    o->prov10 = 0;
    fs_sink_t sink = {.job = ng_job, .nodegroup = ng_row, .ud = o};
    if (fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err))
        fail_msg("create: %s", err.msg);
    fs_kueue_check_every(fs_model_policy_state(m), 1);
    if (fs_model_run(m, NULL, NULL, &err))
        fail_msg("run: %s", err.msg);
    fs_run_totals_t t;
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    const fs_kueue_stats_t *s = fs_kueue_stats(fs_model_policy_state(m));
    if (s->violations)
        fail_msg("invariant: %s", s->last_violation);
    fs_model_destroy(m);
    fs_source_destroy(src);
}

static void test_pods_oracle(void **state)
{
    (void)state;
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 11, 0, FS_RNG_TRACE, 0), 0);
    static ngout_t o1, o2;
    size_t gated = 0, some = 0;
    for (int round = 0; round < 60; round++) {
        kcfg_t k;
        base(&k, 64);
        k.pool.gpus_per_node = 8;
        k.c.until = FS_UNTIL_HORIZON;
        k.c.horizon = S(7200);
        k.c.output.timeline_interval = S(60);
        k.c.scheduler.kueue.fair_sharing = gsl_rng_uniform_int(r.g, 2);
        const char *coh = gsl_rng_uniform_int(r.g, 4) ? "c" : NULL;
        for (size_t i = 0; i < 4; i++) {
            fs_kueue_cq_cfg_t *q =
                add_cq(&k, TN[i], i == 3 ? NULL : coh, 8.0 * (double)gsl_rng_uniform_int(r.g, 5));
            if (gsl_rng_uniform_int(r.g, 3) == 0)
                q->quotas->borrowing_limit = 8.0 * (double)gsl_rng_uniform_int(r.g, 3);
            if (gsl_rng_uniform_int(r.g, 3) == 0)
                q->quotas->lending_limit = 8.0 * (double)gsl_rng_uniform_int(r.g, 2);
            if (q->quotas->lending_limit > q->quotas->nominal)
                q->quotas->lending_limit = q->quotas->nominal;
            if (gsl_rng_uniform_int(r.g, 2))
                q->strategy = FS_KUEUE_STRICT_FIFO;
            q->weight = 1 + (double)gsl_rng_uniform_int(r.g, 3);
        }
        fs_job_t jobs[16];
        size_t n = 6 + gsl_rng_uniform_int(r.g, 10);
        for (size_t i = 0; i < n; i++)
            jobs[i] = job(i + 1, 0, 8 * (1 + (uint32_t)gsl_rng_uniform_int(r.g, 3)), 3600,
                          (int32_t)gsl_rng_uniform_int(r.g, 4), (int32_t)gsl_rng_uniform_int(r.g, 3));
        run_ng(&k.c, jobs, n, &o1);
        fs_nodegroup_cfg_t g = {.pool = "p", .min = 0, .max = 64, .provision = S(120),
                                .gpu_ready = S(60)};
        k.c.cluster.autoscale = (fs_autoscale_cfg_t){.groups = &g, .n_groups = 1,
                                                     .scan = S(10), .unneeded = S(600),
                                                     .delay_after_add = S(600)};
        run_ng(&k.c, jobs, n, &o2);
        uint32_t gpus = 0;
        size_t admitted = 0;
        for (size_t i = 0; i < n; i++) {
            const fs_job_row_t *a = fs_test_find(&o1.rows, i + 1), *b = fs_test_find(&o2.rows, i + 1);
            int at0 = a->start == 0, at190 = b->start == 190;
            if (at0 != at190)
                fail_msg("round %d job %zu: start %g with nodes, %g autoscaled", round, i + 1,
                         a->start, b->start);
            if (b->start >= 0 && b->start < 190)
                fail_msg("round %d job %zu started at %g", round, i + 1, b->start);
            gpus += at0 ? jobs[i].gpus : 0;
            admitted += (size_t)at0;
        }
        assert_true(o2.seen);
        assert_int_equal(o2.prov10, gpus / 8);
        gated += admitted < n;
        some += admitted > 0;
    }
    fs_rng_release(&r);
    fs_test_rows_free(&o1.rows);
    fs_test_rows_free(&o2.rows);
    /* the rounds are not trivial: most hold jobs back, most admit some */
    printf("pods oracle: %zu of 60 rounds held jobs back by quota, %zu admitted some\n", gated, some);
    assert_true(gated > 30 && some > 30);
}

/* The look-ahead's error paths: a run of Kueue over an empty node group
 * (the repro of test_kueue_gate: four 8-GPU jobs, 8 GPUs of quota, jobs of
 * no tenant to default_queue) with allocation k failing, k = 1, 2, ...:
 * every failed run returns FS_ENOMEM and leaves nothing allocated
 * (fs_test_alloc_sweep), and the run that succeeds starts the jobs one
 * after another on the one node: 190 s + k x 3,600 s. */
static void test_pods_alloc_failures(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 4);
    k.pool.gpus_per_node = 8;
    add_cq(&k, "a", NULL, 8);
    k.c.scheduler.kueue.default_queue = "a";
    fs_nodegroup_cfg_t g = {.pool = "p", .min = 0, .max = 4, .provision = S(120), .gpu_ready = S(60)};
    k.c.cluster.autoscale = (fs_autoscale_cfg_t){.groups = &g, .n_groups = 1, .scan = S(10),
                                                 .unneeded = S(600), .delay_after_add = S(600)};
    fs_job_t jobs[4];
    for (size_t i = 0; i < 4; i++)
        jobs[i] = job(i + 1, 0, 8, 3600, -1, 0);
    static fs_test_rows_t rs;
    int failed = fs_test_alloc_sweep(&k.c, jobs, 4, NULL, 0, &rs);
    assert_true(failed > 10);
    for (size_t i = 0; i < 4; i++)
        assert_double_equal(find(&rs, i + 1)->start, 190 + 3600.0 * (double)i, 1e-9);
    fs_test_rows_free(&rs);
}

/* ---- qualitative: borrowing cuts the busy tenant's wait ------------------------- */

static double mean_wait(const fs_test_rows_t *rs, int32_t tenant)
{
    double s = 0;
    size_t n = 0;
    for (size_t i = 0; i < rs->n; i++)
        if (rs->r[i].tenant == tenant) {
            s += rs->r[i].wait;
            n++;
        }
    return n ? s / (double)n : NAN;
}

static void test_borrowing_cuts_wait(void **state)
{
    (void)state;
    /* 64 GPUs; a offers 0.7 x 0.85 x 64 = 38 GPUs of work for a quota of
     * 32, b 16; borrowing lets a use b's idle quota */
    static fs_job_t jobs[5000];
    static fs_test_rows_t rs;
    fs_rng_t r;
    assert_int_equal(fs_rng_init(&r, 3, 0, FS_RNG_TRACE, 0), 0);
    static const uint32_t sizes[] = {1, 2, 4, 8};
    static const double p[] = {0.76, 0.02, 0.10, 0.12};
    gsl_ran_discrete_t *mix = gsl_ran_discrete_preproc(4, p);
    double mean_g = 0.76 + 0.04 + 0.4 + 0.96, mean_d = 3600.0 * exp(1.0 * 1.0 / 2);
    double rate = 0.85 * 64 / (mean_g * mean_d), t = 0;
    for (size_t i = 0; i < 5000; i++) {
        t += gsl_ran_exponential(r.g, 1 / rate);
        jobs[i] = job(i + 1, t, sizes[gsl_ran_discrete(r.g, mix)],
                      gsl_ran_lognormal(r.g, log(3600.0), 1.0), gsl_rng_uniform(r.g) < 0.7 ? 0 : 1, 0);
    }
    gsl_ran_discrete_free(mix);
    fs_rng_release(&r);
    double wa[2], wb[2];
    for (int borrow = 0; borrow <= 1; borrow++) {
        kcfg_t k;
        base(&k, 64);
        add_cq(&k, "a", borrow ? "c" : NULL, 32);
        add_cq(&k, "b", borrow ? "c" : NULL, 32);
        run(&k.c, jobs, 5000, &rs, NULL);
        wa[borrow] = mean_wait(&rs, 0);
        wb[borrow] = mean_wait(&rs, 1);
    }
    printf("two tenants, 64 GPUs, 85%% load: busy tenant a mean wait %.0f s without borrowing, "
           "%.0f s with; b %.0f s / %.0f s\n", wa[0], wa[1], wb[0], wb[1]);
    assert_true(wa[1] < 0.2 * wa[0]);
    assert_true(wb[0] < 0.2 * wa[0]);
}

/* ---- manifests ------------------------------------------------------------- */

static const char *const MANIFEST =
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ResourceFlavor\n"
    "metadata: {name: h100}\n"
    "spec:\n"
    "  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ClusterQueue\n"
    "metadata: {name: team-a}\n"
    "spec:\n"
    "  cohort: all\n"
    "  queueingStrategy: StrictFIFO\n"
    "  resourceGroups:\n"
    "  - coveredResources: [cpu, nvidia.com/gpu]\n"
    "    flavors:\n"
    "    - name: h100\n"
    "      resources:\n"
    "      - {name: cpu, nominalQuota: 96}\n"
    "      - {name: nvidia.com/gpu, nominalQuota: 16, borrowingLimit: 8, lendingLimit: 4}\n"
    "  preemption:\n"
    "    withinClusterQueue: LowerOrNewerEqualPriority\n"
    "    reclaimWithinCohort: Any\n"
    "    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}\n"
    "  fairSharing: {weight: 1500m}\n"
    "---\n"
    "kind: Cohort\n"
    "apiVersion: kueue.x-k8s.io/v1alpha1\n"
    "metadata: {name: all}\n"
    "spec:\n"
    "  resourceGroups:\n"
    "  - flavors:\n"
    "    - name: h100\n"
    "      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n"
    "---\n"
    "kind: WorkloadPriorityClass\n"
    "metadata: {name: high}\n"
    "value: 1000\n"
    "---\n"
    "kind: LocalQueue\n"
    "metadata: {namespace: ml, name: main}\n"
    "spec: {clusterQueue: team-a}\n";

static void test_manifest_parse(void **state)
{
    (void)state;
    fs_kueue_cfg_t k;
    memset(&k, 0, sizeof k);
    fs_error_t err;
    if (fs_kueue_manifest_parse("m.yaml", MANIFEST, strlen(MANIFEST), &k, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(k.n_flavors, 1);
    assert_string_equal(k.flavors[0].name, "h100");
    assert_string_equal(k.flavors[0].match, "NVIDIA-H100-80GB-HBM3");
    assert_int_equal(k.n_cqs, 2);
    const fs_kueue_cq_cfg_t *q = &k.cqs[0];
    assert_string_equal(q->name, "team-a");
    assert_string_equal(q->cohort, "all");
    assert_int_equal(q->strategy, FS_KUEUE_STRICT_FIFO);
    assert_int_equal(q->n_quotas, 2);  /* cpu and nvidia.com/gpu, in the order listed */
    assert_string_equal(q->quotas[0].flavor, "h100");
    assert_int_equal(q->quotas[0].resource, FS_KRES_CPU);
    assert_double_equal(q->quotas[0].nominal, 96, 0);
    assert_double_equal(q->quotas[0].borrowing_limit, -1, 0);
    assert_string_equal(q->quotas[1].flavor, "h100");
    assert_int_equal(q->quotas[1].resource, FS_KRES_GPU);
    assert_double_equal(q->quotas[1].nominal, 16, 0);
    assert_double_equal(q->quotas[1].borrowing_limit, 8, 0);
    assert_double_equal(q->quotas[1].lending_limit, 4, 0);
    assert_int_equal(q->within_cq, FS_KUEUE_LOWER_OR_NEWER_EQUAL);
    assert_int_equal(q->reclaim, FS_KUEUE_ANY);
    assert_int_equal(q->borrow_within, FS_KUEUE_LOWER_PRIORITY);
    assert_double_equal(q->borrow_max_priority, 100, 0);
    assert_double_equal(q->weight, 1.5, 1e-12);
    assert_string_equal(q->tenants, "ml,main");
    assert_string_equal(k.cqs[1].name, "cohort:all");
    assert_string_equal(k.cqs[1].cohort, "all");
    assert_double_equal(k.cqs[1].quotas[0].nominal, 8, 0);
    assert_null(k.cqs[1].tenants);
    /* the flavor stands for the H100 pool */
    fs_pool_cfg_t pools[2] = {{.name = "a", .gpu = "A100"}, {.name = "h", .gpu = "H100"}};
    fs_cluster_cfg_t cl = {.pools = pools, .n_pools = 2};
    uint8_t mask[2] = {0, 0};
    assert_int_equal(fs_kueue_match_pools("h100", k.flavors[0].match, &cl, mask), 1);
    assert_int_equal(mask[1], 1);
    char kp[200];
    assert_int_equal(fs_kueue_cfg_resolve(&k, &cl, kp, sizeof kp, &err), 0);
    fs_config_t c;
    memset(&c, 0, sizeof c);
    c.scheduler.kueue = k;
    fs_config_release(&c);  /* the key table frees what the manifest added */
}

static void expect_error(const char *text, const char *want)
{
    fs_kueue_cfg_t k;
    memset(&k, 0, sizeof k);
    fs_error_t err;
    int rc = fs_kueue_manifest_parse("m.yaml", text, strlen(text), &k, &err);
    fs_config_t c;
    memset(&c, 0, sizeof c);
    c.scheduler.kueue = k;
    fs_config_release(&c);
    assert_int_equal(rc, FS_EINVAL);
    if (!strstr(err.msg, want))
        fail_msg("got '%s', want '%s'", err.msg, want);
}

static void test_manifest_errors(void **state)
{
    (void)state;
    expect_error("kind: ClusterQueue\nmetadata: {name: q}\nspec:\n  queueingStrategy: Fifo\n",
                 "m.yaml:4:21: ClusterQueue 'q': spec.queueingStrategy: 'Fifo' is not one of "
                 "BestEffortFIFO, StrictFIFO");
    expect_error("kind: ClusterQueue\nmetadata: {name: q}\nspec:\n  resourceGroups:\n  - flavors:\n"
                 "    - name: f\n      resources:\n      - name: nvidia.com/gpu\n"
                 "        nominalQuota: lots\n",
                 "m.yaml:9:23: ClusterQueue 'q': nominalQuota: 'lots' is not a quantity");
    expect_error("---\nkind: LocalQueue\nmetadata: {name: l}\nspec: {clusterQueue: nope}\n",
                 "m.yaml:4:22: LocalQueue: spec.clusterQueue: no ClusterQueue 'nope'");
    expect_error("kind: ClusterQueue\nmetadata: {name: q}\nspec:\n  preemption: {withinClusterQueue: Any}\n",
                 "m.yaml:4:36: ClusterQueue 'q': spec.preemption.withinClusterQueue: 'Any'");
    expect_error("kind: Cohort\nmetadata: {name: c}\nspec: {parentName: root}\n",
                 "m.yaml:3:20: Cohort 'c': spec.parentName: hierarchical cohorts are not modelled");
    expect_error("kind: ResourceFlavor\nmetadata: {}\n", "m.yaml:2:11: ResourceFlavor: missing metadata.name");
    expect_error("kind: [x\n", "m.yaml:");
    expect_error("kind: ResourceFlavor\nmetadata: {name: f}\n---\nkind: ResourceFlavor\n"
                 "metadata: {name: f}\n", "m.yaml:5:18: ResourceFlavor 'f' is defined twice");
    /* resource groups as Kueue validates them (issue 40) */
    expect_error("kind: ClusterQueue\nmetadata: {name: q}\nspec:\n  resourceGroups:\n"
                 "  - coveredResources: [cpu, memory]\n    flavors:\n    - name: f\n"
                 "      resources: [{name: cpu, nominalQuota: 4}]\n",
                 "m.yaml:7:13: ClusterQueue 'q': flavor 'f' has no memory quota, which its "
                 "group's coveredResources list");
    expect_error("kind: ClusterQueue\nmetadata: {name: q}\nspec:\n  resourceGroups:\n"
                 "  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
                 "      resources: [{name: cpu, nominalQuota: 4}]\n"
                 "  - coveredResources: [cpu]\n    flavors:\n    - name: g\n"
                 "      resources: [{name: cpu, nominalQuota: 4}]\n",
                 "m.yaml:9:24: ClusterQueue 'q': resource cpu is covered by two resource groups");
    expect_error("kind: ClusterQueue\nmetadata: {name: q}\nspec:\n  resourceGroups:\n"
                 "  - coveredResources: [memory]\n    flavors:\n    - name: f\n"
                 "      resources: [{name: memory, nominalQuota: 9Ei}]\n",
                 "m.yaml:8:48: ClusterQueue 'q': nominalQuota: '9Ei' is more than the largest "
                 "memory quota, 8 PiB");
    expect_error("kind: ClusterQueue\nmetadata: {name: q}\nspec:\n  resourceGroups:\n"
                 "  - coveredResources: [memory]\n    flavors:\n    - name: f\n"
                 "      resources: [{name: memory, nominalQuota: 4GB}]\n",
                 "m.yaml:8:48: ClusterQueue 'q': nominalQuota: '4GB' is not a quantity of memory");
    /* Kubernetes quantities of memory, read into MiB */
    static const struct { const char *q; double mib; } mem[] = {
        {"16Gi", 16384}, {"64G", 64e9 / 1048576}, {"512Mi", 512}, {"1e9", 1e9 / 1048576},
        {"8Ti", 8388608}};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
        char text[400];
        snprintf(text, sizeof text, "kind: ClusterQueue\nmetadata: {name: q}\nspec:\n"
                 "  resourceGroups:\n  - coveredResources: [memory, pods]\n    flavors:\n"
                 "    - name: f\n      resources: [{name: memory, nominalQuota: %s}, "
                 "{name: pods, nominalQuota: 10}]\n", mem[i].q);
        fs_kueue_cfg_t k;
        memset(&k, 0, sizeof k);
        fs_error_t err;
        if (fs_kueue_manifest_parse("m.yaml", text, strlen(text), &k, &err))
            fail_msg("%s: %s", mem[i].q, err.msg);
        assert_int_equal(k.cqs[0].n_quotas, 2);
        assert_int_equal(k.cqs[0].quotas[0].resource, FS_KRES_MEMORY);
        assert_double_equal(k.cqs[0].quotas[0].nominal, mem[i].mib, 1e-9);
        assert_int_equal(k.cqs[0].quotas[1].resource, FS_KRES_PODS);
        assert_double_equal(k.cqs[0].quotas[1].nominal, 10, 0);
        fs_config_t c;
        memset(&c, 0, sizeof c);
        c.scheduler.kueue = k;
        fs_config_release(&c);
    }
}

/* Scenario keys and manifests through the loader, with positions. */
static void test_scenario_keys(void **state)
{
    (void)state;
    const char *ok =
        "cluster: {pools: [{name: main, gpu: H100, nodes: 4, gpus_per_node: 8}]}\n"
        "workload: {synthetic: {arrivals: {rate: 10/h}, gpus: {1: 1}, duration: {dist: constant, value: 1h},\n"
        "  tenants: {x: 0.5, y: 0.5}}}\n"
        "scheduler:\n"
        "  queue: kueue\n"
        "  kueue:\n"
        "    flavors: [{name: fast, match: H100}]\n"
        "    cluster_queues:\n"
        "      - {name: x, cohort: c, quotas: [{flavor: fast, nominal: 16, borrowing_limit: 8}],\n"
        "         within_cluster_queue: LowerPriority, reclaim_within_cohort: Any}\n"
        "      - {name: y, cohort: c, strategy: StrictFIFO, quotas: [{flavor: main, nominal: 16}]}\n"
        "    default_queue: x\n";
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_string("k.yaml", ok, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(cfg.scheduler.kueue.n_cqs, 2);
    assert_int_equal(cfg.scheduler.kueue.cqs[0].within_cq, FS_KUEUE_LOWER_PRIORITY);
    assert_double_equal(cfg.scheduler.kueue.cqs[0].quotas[0].borrowing_limit, 8, 0);
    assert_double_equal(cfg.scheduler.kueue.cqs[1].quotas[0].lending_limit, -1, 0);
    assert_int_equal(cfg.scheduler.kueue.cqs[1].strategy, FS_KUEUE_STRICT_FIFO);
    fs_config_release(&cfg);
    /* quotas of cpu, memory and pods (issue 40): a flavor of a group without one is refused */
    const char *res =
        "cluster: {pools: [{name: main, gpu: H100, nodes: 4, gpus_per_node: 8}]}\n"
        "workload: {synthetic: {arrivals: {rate: 10/h}, gpus: {1: 1}, duration: {dist: constant, value: 1h}}}\n"
        "scheduler:\n"
        "  queue: kueue\n"
        "  kueue:\n"
        "    flavors: [{name: fast, match: H100}]\n"
        "    cluster_queues:\n"
        "      - {name: x, quotas: [{flavor: main, nominal: 16}, {flavor: main, resource: cpu, nominal: 64},\n"
        "                           {flavor: main, resource: memory, nominal: 524288},\n"
        "                           {flavor: main, resource: pods, nominal: 100}";
    char text[1024];
    snprintf(text, sizeof text, "%s]}\n", res);
    if (fs_scenario_load_string("k.yaml", text, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(cfg.scheduler.kueue.cqs[0].n_quotas, 4);
    assert_int_equal(cfg.scheduler.kueue.cqs[0].quotas[0].resource, FS_KRES_GPU);
    assert_int_equal(cfg.scheduler.kueue.cqs[0].quotas[1].resource, FS_KRES_CPU);
    assert_int_equal(cfg.scheduler.kueue.cqs[0].quotas[2].resource, FS_KRES_MEMORY);
    assert_int_equal(cfg.scheduler.kueue.cqs[0].quotas[3].resource, FS_KRES_PODS);
    fs_config_release(&cfg);
    snprintf(text, sizeof text, "%s, {flavor: fast, nominal: 8}]}\n", res);
    assert_int_equal(fs_scenario_load_string("k.yaml", text, NULL, 0, &cfg, &err), FS_EINVAL);
    if (!strstr(err.msg, "ClusterQueue 'x': flavor 'fast' has no cpu quota, which flavor 'main'"))
        fail_msg("got '%s'", err.msg);
    const char *bad =
        "cluster: {pools: [{name: main, gpu: H100, nodes: 4, gpus_per_node: 8}]}\n"
        "workload: {synthetic: {arrivals: {rate: 10/h}, gpus: {1: 1}, duration: {dist: constant, value: 1h}}}\n"
        "scheduler:\n"
        "  queue: kueue\n"
        "  kueue:\n"
        "    cluster_queues:\n"
        "      - {name: x, quotas: [{flavor: a100, nominal: 16}]}\n";
    assert_int_equal(fs_scenario_load_string("k.yaml", bad, NULL, 0, &cfg, &err), FS_EINVAL);
    if (!strstr(err.msg, "k.yaml:7:28: scheduler.kueue.cluster_queues.0.quotas.0: ClusterQueue 'x': "
                         "flavor 'a100' is neither"))
        fail_msg("got '%s'", err.msg);
    /* a manifest error names the manifest's position */
    char *dir = fs_test_tmpdir();
    char *mp = fs_test_path(dir, "q.yaml"), *sp = fs_test_path(dir, "s.yaml");
    assert_int_equal(fs_test_write(mp, "kind: ClusterQueue\nmetadata:\n  name: q\nspec:\n"
                                       "  cohort: [a]\n"), 0);
    assert_int_equal(fs_test_write(sp, "cluster: {pools: [{name: main, gpu: H100, nodes: 4, "
                                       "gpus_per_node: 8}]}\nworkload: {synthetic: {arrivals: "
                                       "{rate: 10/h}, gpus: {1: 1}, duration: {dist: constant, "
                                       "value: 1h}}}\nscheduler: {queue: kueue, kueue: {manifests: "
                                       "q.yaml}}\n"), 0);
    assert_int_equal(fs_scenario_load_file(sp, NULL, 0, &cfg, &err), FS_EINVAL);
    if (!strstr(err.msg, "q.yaml:5:11: ClusterQueue 'q': spec.cohort: expected a value"))
        fail_msg("got '%s'", err.msg);
    /* a flavor that stands for no pool, at its manifest position */
    assert_int_equal(fs_test_write(mp, "kind: ClusterQueue\nmetadata: {name: q}\nspec:\n"
                                       "  resourceGroups:\n  - flavors:\n    - name: a100\n"
                                       "      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n"), 0);
    assert_int_equal(fs_scenario_load_file(sp, NULL, 0, &cfg, &err), FS_EINVAL);
    if (!strstr(err.msg, "q.yaml:6:13: flavor 'a100' is neither a ResourceFlavor nor a pool"))
        fail_msg("got '%s'", err.msg);
    /* the shipped example loads and names its flavor's pool */
    assert_int_equal(fs_scenario_load_file(FS_SOURCE_DIR "/scenarios/kueue-philly.yaml", NULL, 0,
                                           &cfg, &err), 0);
    assert_int_equal(cfg.scheduler.kueue.n_cqs, 2);
    assert_string_equal(cfg.scheduler.kueue.cqs[0].tenants, "team-a,training");
    fs_config_release(&cfg);
    fs_test_rmtree(dir);
    free(dir);
    free(mp);
    free(sp);
}

/* Kueue's own examples as upstream ships them (tests/data/kueue, issue 40):
 * the TAS GPU example loads with scheduler.kueue.flavor_pools naming the
 * pool its flavor stands for (over the manifest's nodeLabels), and runs; a
 * scenario-level flavor of the same name is the scenario's, not "defined
 * twice"; the CPU-only example is read with its cpu and memory quotas (a GPU
 * job is never admitted there); a map entry no flavor has is refused at its key. */
static void test_upstream_examples(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    char *sp = fs_test_path(dir, "s.yaml");
    const char *head =
        "name: up\nhorizon: 1d\n"
        "cluster: {pools: [{name: h100, gpu: H100, nodes: 2, gpus_per_node: 8}]}\n"
        "workload: {synthetic: {arrivals: {rate: 4/h}, gpus: {1: 0.5, 8: 0.5}, "
        "duration: {dist: constant, value: 1h}, tenants: {tas-user-queue: 1}}}\n"
        "output: {timeline_interval: 0s}\n";
    char text[2048];
    fs_config_t cfg;
    fs_error_t err;
    /* as it is: its flavor's node label names no pool; the message says how to map it */
    snprintf(text, sizeof text, "%sscheduler: {queue: kueue, kueue: {manifests: '%s'}}\n", head,
             FS_TEST_DATA "/kueue/sample-gpu-queues.yaml");
    assert_int_equal(fs_test_write(sp, text), 0);
    assert_int_equal(fs_scenario_load_file(sp, NULL, 0, &cfg, &err), FS_EINVAL);
    if (!strstr(err.msg, "flavor 'tas-flavor' (tas-group) stands for no pool") ||
        !strstr(err.msg, "scheduler.kueue.flavor_pools: {tas-flavor: POOL}"))
        fail_msg("got '%s'", err.msg);
    /* with the map */
    snprintf(text, sizeof text, "%sscheduler: {queue: kueue, kueue: {manifests: '%s',\n"
             "  flavor_pools: {tas-flavor: h100}}}\n", head,
             FS_TEST_DATA "/kueue/sample-gpu-queues.yaml");
    assert_int_equal(fs_test_write(sp, text), 0);
    if (fs_scenario_load_file(sp, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    const fs_kueue_cfg_t *k = &cfg.scheduler.kueue;
    assert_int_equal(k->n_cqs, 1);
    assert_string_equal(k->cqs[0].name, "tas-cluster-queue");
    assert_int_equal(k->cqs[0].n_quotas, 3);     /* cpu 100, memory 100Gi, 16 GPUs */
    assert_string_equal(k->cqs[0].quotas[2].flavor, "tas-flavor");
    assert_int_equal(k->cqs[0].quotas[2].resource, FS_KRES_GPU);
    assert_double_equal(k->cqs[0].quotas[2].nominal, 16, 0);
    assert_double_equal(k->cqs[0].quotas[1].nominal, 100 * 1024, 0);
    assert_string_equal(k->cqs[0].tenants, "default,tas-user-queue");
    assert_int_equal(k->n_flavors, 1);
    assert_string_equal(k->flavors[0].match, "h100");
    fs_run_opts_t ro;
    fs_run_opts_init(&ro);
    fs_run_report_t rep;
    if (fs_run_config(&cfg, &ro, &rep, &err))
        fail_msg("%s", err.msg);
    assert_true(rep.totals.jobs_submitted > 50);
    assert_true(rep.totals.gpu_s_busy_window > 0);   /* admitted under the quota, ran on h100 */
    fs_config_release(&cfg);
    /* a scenario-level flavor of the same name: the scenario's, not "defined twice" */
    snprintf(text, sizeof text, "%sscheduler: {queue: kueue, kueue: {manifests: '%s',\n"
             "  flavors: [{name: tas-flavor, match: H100}]}}\n", head,
             FS_TEST_DATA "/kueue/sample-gpu-queues.yaml");
    assert_int_equal(fs_test_write(sp, text), 0);
    if (fs_scenario_load_file(sp, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(cfg.scheduler.kueue.n_flavors, 1);
    assert_string_equal(cfg.scheduler.kueue.flavors[0].match, "H100");
    fs_config_release(&cfg);
    /* the CPU-only example: its cpu and memory quotas (test_res_upstream_cpu_only runs it) */
    snprintf(text, sizeof text, "%sscheduler: {queue: kueue, kueue: {manifests: '%s',\n"
             "  flavor_pools: {default-flavor: h100}}}\n", head,
             FS_TEST_DATA "/kueue/single-clusterqueue-setup.yaml");
    assert_int_equal(fs_test_write(sp, text), 0);
    if (fs_scenario_load_file(sp, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    k = &cfg.scheduler.kueue;
    assert_int_equal(k->n_cqs, 1);
    assert_int_equal(k->cqs[0].n_quotas, 2);
    assert_string_equal(k->cqs[0].quotas[0].flavor, "default-flavor");
    assert_int_equal(k->cqs[0].quotas[0].resource, FS_KRES_CPU);
    assert_double_equal(k->cqs[0].quotas[0].nominal, 9, 0);
    assert_string_equal(k->cqs[0].tenants, "default,user-queue");
    fs_config_release(&cfg);
    /* a map entry that no flavor or quota has: at its key */
    snprintf(text, sizeof text, "%sscheduler: {queue: kueue, kueue: {manifests: '%s',\n"
             "  flavor_pools: {tas-flavor: h100, spot: h100}}}\n", head,
             FS_TEST_DATA "/kueue/sample-gpu-queues.yaml");
    assert_int_equal(fs_test_write(sp, text), 0);
    assert_int_equal(fs_scenario_load_file(sp, NULL, 0, &cfg, &err), FS_EINVAL);
    if (!strstr(err.msg, "scheduler.kueue.flavor_pools.spot: 'spot' is neither a flavor"))
        fail_msg("got '%s'", err.msg);
    fs_test_rmtree(dir);
    free(dir);
    free(sp);
}

/* ---- cpu, memory and pods quotas (issue 40) -------------------------------- */

#define QR(fl, res, nom) ((fs_kueue_quota_cfg_t){.flavor = (fl), .resource = (res), \
                          .nominal = (nom), .borrowing_limit = -1, .lending_limit = -1})
static fs_kueue_quota_cfg_t RQ[MAXCQ][8];

/* CQ q's quotas become qs[0..n). */
static void set_quotas(kcfg_t *k, fs_kueue_cq_cfg_t *q, const fs_kueue_quota_cfg_t *qs, size_t n)
{
    size_t i = (size_t)(q - k->cq);
    memcpy(RQ[i], qs, n * sizeof *qs);
    q->quotas = RQ[i];
    q->n_quotas = n;
}

/* A pod: one node, `cores` CPU and `mib` MiB of memory. */
static fs_job_t pod(uint64_t id, double submit, uint32_t gpus, double cores, uint32_t mib, double dur,
                    int32_t tenant, int32_t prio)
{
    fs_job_t j = job(id, submit, gpus, dur, tenant, prio);
    j.flags |= FS_JOB_SINGLE_NODE;
    j.cpu_milli = (uint32_t)(cores * 1000);
    j.mem_mib = mib;
    return j;
}

/* The GPUs fit but the CPU does not: the second pod waits (GPU quota
 * alone would start both at once); a pod asking CPU of a CQ that covers
 * none is never admitted (Kueue: resource unavailable in the CQ). */
static void test_res_cpu_quota(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 4);
    fs_kueue_cq_cfg_t *a = add_cq(&k, "a", NULL, 4);
    set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 4), QR("p", FS_KRES_CPU, 8)}, 2);
    fs_job_t jobs[] = {pod(1, 0, 1, 6, 0, 100, 0, 0), pod(2, 0, 1, 6, 0, 100, 0, 0),
                       pod(3, 0, 1, 2, 0, 50, 0, 0)};
    static fs_test_rows_t rs;
    out_t o;
    run(&k.c, jobs, 3, &rs, &o);
    assert_double_equal(start_of(&rs, 1), 0, 1e-9);
    assert_double_equal(start_of(&rs, 2), 100, 1e-9);
    assert_double_equal(start_of(&rs, 3), 0, 1e-9);    /* BestEffortFIFO: 6 + 2 <= 8 */
    /* CQ b covers GPUs only: its pod asking CPU stays pending for good */
    fs_kueue_cq_cfg_t *b = add_cq(&k, "b", NULL, 4);
    (void)b;
    fs_job_t j2[] = {pod(1, 0, 1, 1, 0, 10, 1, 0), job(2, 0, 1, 10, 1, 0)};
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(j2, 2, TN, 4, NULL, 0, &src, &err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
    rs.n = 0;
    assert_int_equal(fs_model_create(&k.c, fs_policy_select(&k.c.scheduler), src, &sink, &m, &err), 0);
    assert_int_equal(fs_model_run(m, NULL, NULL, &err), FS_ESTUCK);
    if (!strstr(err.msg, "ClusterQueue 'b' has no cpu quota"))
        fail_msg("got '%s'", err.msg);
    assert_double_equal(start_of(&rs, 2), 0, 1e-9);    /* GPUs only: admitted */
    fs_model_destroy(m);
    fs_source_destroy(src);
}

/* One resource group {nvidia.com/gpu, cpu} in two flavors: the GPUs fit
 * flavor pa but the CPU only pb, so the pod goes to pb (both resources in
 * one flavor); a pod that fits neither waits.  A flavor of the group
 * without a cpu quota is refused. */
static void test_res_same_flavor(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 4);
    fs_pool_cfg_t pools[2] = {{.name = "pa", .gpu = "H100", .nodes = 4, .gpus_per_node = 1},
                              {.name = "pb", .gpu = "A100", .nodes = 4, .gpus_per_node = 1}};
    k.c.cluster.pools = pools;
    k.c.cluster.n_pools = 2;
    fs_kueue_cq_cfg_t *a = add_cq(&k, "a", NULL, 4);
    set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("pa", FS_KRES_GPU, 4), QR("pa", FS_KRES_CPU, 2),
                                               QR("pb", FS_KRES_GPU, 4), QR("pb", FS_KRES_CPU, 8)}, 4);
    fs_job_t jobs[] = {pod(1, 0, 1, 4, 0, 100, 0, 0), pod(2, 0, 1, 1, 0, 100, 0, 0),
                       pod(3, 0, 1, 5, 0, 100, 0, 0)};
    static fs_test_rows_t rs;
    run(&k.c, jobs, 3, &rs, NULL);
    assert_int_equal(find(&rs, 1)->pool, 1);   /* pb: where its CPU fits too */
    assert_double_equal(start_of(&rs, 1), 0, 1e-9);
    assert_int_equal(find(&rs, 2)->pool, 0);   /* pa: first flavor, all fits */
    assert_double_equal(start_of(&rs, 3), 100, 1e-9);  /* 5 cores: pa has 1 left, pb 4 */
    assert_int_equal(find(&rs, 3)->pool, 1);
    /* every flavor of a group quotas all of its resources */
    set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("pa", FS_KRES_GPU, 4), QR("pa", FS_KRES_CPU, 2),
                                               QR("pb", FS_KRES_GPU, 4)}, 3);
    void *probe = NULL;
    fs_error_t err;
    assert_int_equal(fs_kueue_probe_create(&k.c, &probe, &err), FS_EINVAL);
    if (!strstr(err.msg, "ClusterQueue 'a': flavor 'pb' has no cpu quota, which flavor 'pa'"))
        fail_msg("got '%s'", err.msg);
    /* two groups, GPUs in pb, memory in a flavor of both pools: a pod runs
     * where both of its flavors are, and waits for memory quota */
    fs_kueue_flavor_cfg_t any = {.name = "anywhere", .match = "pa, pb"};
    k.c.scheduler.kueue.flavors = &any;
    k.c.scheduler.kueue.n_flavors = 1;
    set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("pb", FS_KRES_GPU, 4),
                                               QR("anywhere", FS_KRES_MEMORY, 4096)}, 2);
    fs_job_t j2[] = {pod(1, 0, 1, 0, 1024, 100, 0, 0), pod(2, 0, 1, 0, 4096, 10, 0, 0),
                     job(3, 0, 1, 100, 0, 0)};
    run(&k.c, j2, 3, &rs, NULL);
    assert_int_equal(find(&rs, 1)->pool, 1);
    assert_double_equal(start_of(&rs, 2), 100, 1e-9);
    assert_int_equal(find(&rs, 2)->pool, 1);
    assert_int_equal(find(&rs, 3)->pool, 1);
}

/* Upstream's CPU-only example (tests/data/kueue/single-clusterqueue-setup.yaml:
 * 9 cpu, 36Gi memory), read as it is: CPU pods are admitted by its cpu and
 * memory quota (two 4-core pods at once, the third waits; 36 GiB of
 * and 1 MiB wait), and a pod asking GPUs is never admitted there. */
static void test_res_upstream_cpu_only(void **state)
{
    (void)state;
    size_t len;
    char *text = fs_test_read(FS_TEST_DATA "/kueue/single-clusterqueue-setup.yaml", &len);
    assert_non_null(text);
    kcfg_t k;
    base(&k, 4);
    k.pool.name = "default-flavor";     /* the flavor has no nodeLabels: its name */
    fs_kueue_cfg_t *kc = &k.c.scheduler.kueue;
    memset(kc, 0, sizeof *kc);
    fs_error_t err;
    if (fs_kueue_manifest_parse("single-clusterqueue-setup.yaml", text, len, kc, &err))
        fail_msg("%s", err.msg);
    free(text);
    assert_int_equal(kc->n_cqs, 1);
    assert_int_equal(kc->cqs[0].n_quotas, 2);
    assert_int_equal(kc->cqs[0].quotas[0].resource, FS_KRES_CPU);
    assert_double_equal(kc->cqs[0].quotas[0].nominal, 9, 0);
    assert_int_equal(kc->cqs[0].quotas[1].resource, FS_KRES_MEMORY);
    assert_double_equal(kc->cqs[0].quotas[1].nominal, 36 * 1024, 0);   /* MiB */
    kc->default_queue = fs_strdup("cluster-queue");
    fs_job_t jobs[] = {pod(1, 0, 0, 4, 8192, 100, 0, 0), pod(2, 0, 0, 4, 8192, 100, 0, 0),
                       pod(3, 0, 0, 4, 8192, 100, 0, 0), pod(4, 0, 0, 1, 20481, 50, 0, 0)};
    static fs_test_rows_t rs;
    run(&k.c, jobs, 4, &rs, NULL);
    assert_double_equal(start_of(&rs, 1), 0, 1e-9);
    assert_double_equal(start_of(&rs, 2), 0, 1e-9);
    assert_double_equal(start_of(&rs, 3), 100, 1e-9);  /* 12 cores > 9 */
    assert_double_equal(start_of(&rs, 4), 100, 1e-9);  /* 16 GiB + 20 GiB 1 MiB > 36 GiB */
    void *probe = NULL;
    assert_int_equal(fs_kueue_probe_create(&k.c, &probe, &err), 0);
    char why[300];
    fs_job_t one = job(1, 0, 1, 10, 0, 0);
    assert_int_equal(fs_kueue_probe(probe, "a", &one, why, sizeof why), 0);
    if (!strstr(why, "ClusterQueue 'cluster-queue' can hold at most 0 GPUs"))
        fail_msg("got '%s'", why);
    fs_kueue_probe_destroy(probe);
    fs_config_t c;
    memset(&c, 0, sizeof c);
    c.scheduler.kueue = *kc;
    fs_config_release(&c);
}

/* pods: one per pod (a job that is not a pod counts as one). */
static void test_res_pods_quota(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 8);
    fs_kueue_cq_cfg_t *a = add_cq(&k, "a", NULL, 8);
    set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 8), QR("p", FS_KRES_PODS, 2)}, 2);
    fs_job_t jobs[] = {job(1, 0, 1, 100, 0, 0), pod(2, 0, 1, 1, 0, 100, 0, 0), job(3, 0, 1, 10, 0, 0)};
    static fs_test_rows_t rs;
    run(&k.c, jobs, 3, &rs, NULL);
    assert_double_equal(start_of(&rs, 1), 0, 1e-9);
    assert_double_equal(start_of(&rs, 2), 0, 1e-9);
    assert_double_equal(start_of(&rs, 3), 100, 1e-9);
}

/* A gang counts one pod per node, as Kueue counts a Job's podset
 * (flavorassigner: pods = podSet.Count): on 4-GPU nodes the 8-GPU gang is
 * 2 pods, the 4-GPU one 1, so with 3 pods of quota the 1-GPU pod waits for
 * the 4-GPU job (counting every job as one pod starts all three at 0). */
static void test_res_pods_gang(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 4);
    k.pool.gpus_per_node = 4;
    fs_kueue_cq_cfg_t *a = add_cq(&k, "a", NULL, 16);
    set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 16), QR("p", FS_KRES_PODS, 3)}, 2);
    fs_job_t jobs[] = {job(1, 0, 8, 100, 0, 0), job(2, 0, 4, 50, 0, 0), pod(3, 0, 1, 1, 0, 10, 0, 0)};
    static fs_test_rows_t rs;
    run(&k.c, jobs, 3, &rs, NULL);
    assert_double_equal(start_of(&rs, 1), 0, 1e-9);
    assert_double_equal(start_of(&rs, 2), 0, 1e-9);
    assert_double_equal(start_of(&rs, 3), 50, 1e-9);
    /* 5 GPUs on 4-GPU nodes is 2 pods (ceil): with the pod it fits 3 */
    fs_job_t j2[] = {job(1, 0, 5, 100, 0, 0), pod(2, 0, 1, 1, 0, 10, 0, 0), pod(3, 0, 1, 1, 0, 10, 0, 0)};
    run(&k.c, j2, 3, &rs, NULL);
    assert_double_equal(start_of(&rs, 1), 0, 1e-9);
    assert_double_equal(start_of(&rs, 2), 0, 1e-9);
    assert_double_equal(start_of(&rs, 3), 10, 1e-9);
}

/* Borrowed and lent per resource (fs_kueue_quota_hours_res), by hand: CQs
 * a and b of one cohort each have 8 GPUs, 4 cores, 8 GiB and 1 pod; a runs
 * two pods of 1 GPU, 3 cores and 6 GiB for an hour.  a borrows 2 cores,
 * 4 GiB and 1 pod for that hour, b lends them; no GPU is borrowed.  A run
 * whose CQs quota GPUs only gives NaN for the other resources. */
static void test_res_borrowed_lent(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 16);
    const char *names[2] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        fs_kueue_cq_cfg_t *q = add_cq(&k, names[i], "co", 8);
        set_quotas(&k, q, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 8), QR("p", FS_KRES_CPU, 4),
                                                    QR("p", FS_KRES_MEMORY, 8192),
                                                    QR("p", FS_KRES_PODS, 1)}, 4);
    }
    fs_job_t jobs[] = {pod(1, 0, 1, 3, 6144, 3600, 0, 0), pod(2, 0, 1, 3, 6144, 3600, 0, 0)};
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    static fs_test_rows_t rs;
    for (int pass = 0; pass < 2; pass++) {
        assert_int_equal(fs_memsrc_create(jobs, 2, TN, 4, NULL, 0, &src, &err), 0);
        fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
        rs.n = 0;
        assert_int_equal(fs_model_create(&k.c, fs_policy_select(&k.c.scheduler), src, &sink, &m, &err), 0);
        assert_int_equal(fs_model_run(m, NULL, NULL, &err), 0);
        void *st = fs_model_policy_state(m);
        double b, l, want[FS_KRES_N] = {0, 2, 4, 1};
        for (int r = 0; r < FS_KRES_N; r++) {
            assert_int_equal(fs_kueue_quota_hours_res(st, m, 0, r, &b, &l), 0);
            if (pass == 1 && r != FS_KRES_GPU) {
                assert_true(isnan(b) && isnan(l));
                continue;
            }
            assert_double_equal(b, want[r], 1e-9);
            assert_double_equal(l, 0, 1e-9);
            assert_int_equal(fs_kueue_quota_hours_res(st, m, 1, r, &b, &l), 0);
            assert_double_equal(b, 0, 1e-9);
            assert_double_equal(l, want[r], 1e-9);
        }
        assert_int_equal(fs_kueue_quota_hours_res(st, m, 2, 0, &b, &l), FS_EINVAL);
        assert_int_equal(fs_kueue_quota_hours(st, m, 0, &b, &l), 0);
        assert_double_equal(b, 0, 1e-9);
        fs_model_destroy(m);
        fs_source_destroy(src);
        for (int i = 0; i < 2; i++)     /* then GPUs only */
            k.cq[i].n_quotas = 1;
    }
}

/* validate's probe judges every resource a job asks (fs_kueue_probe):
 * a pod asking more CPU than its CQ could ever hold, and a gang of more
 * pods; their GPUs alone would fit. */
static void test_res_probe_job(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 16);
    k.pool.nodes = 2;
    k.pool.gpus_per_node = 8;
    fs_kueue_cq_cfg_t *a = add_cq(&k, "a", "co", 8);
    set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 8), QR("p", FS_KRES_CPU, 4),
                                                QR("p", FS_KRES_PODS, 1)}, 3);
    fs_kueue_cq_cfg_t *b = add_cq(&k, "b", "co", 8);
    set_quotas(&k, b, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 8), QR("p", FS_KRES_CPU, 2),
                                                QR("p", FS_KRES_PODS, 0)}, 3);
    void *probe = NULL;
    fs_error_t err;
    assert_int_equal(fs_kueue_probe_create(&k.c, &probe, &err), 0);
    char why[320];
    /* 8 cores: a's 4 plus the 2 b lends are 6 */
    fs_job_t p8 = pod(1, 0, 1, 8, 0, 10, 0, 0), p6 = pod(2, 0, 1, 6, 0, 10, 0, 0);
    fs_job_t g1 = job(5, 0, 1, 10, 0, 0);
    assert_int_equal(fs_kueue_probe(probe, "a", &g1, why, sizeof why), 1);   /* GPUs alone fit */
    assert_int_equal(fs_kueue_probe(probe, "a", &p8, why, sizeof why), 0);
    if (!strstr(why, "ClusterQueue 'a' can hold at most 6 cores in any flavor (its nominal quota "
                "and what its cohort may lend), less than the 8 cores asked"))
        fail_msg("got '%s'", why);
    assert_int_equal(fs_kueue_probe(probe, "a", &p6, why, sizeof why), 1);
    /* a 16-GPU gang on 8-GPU nodes is 2 pods; the cohort holds 1 */
    fs_job_t g16 = job(3, 0, 16, 10, 0, 0), g8 = job(4, 0, 8, 10, 0, 0);
    assert_int_equal(fs_kueue_probe(probe, "a", &g16, why, sizeof why), 0);
    if (!strstr(why, "ClusterQueue 'a' can hold at most 1 pods in any flavor") ||
        !strstr(why, "less than the 2 pods asked"))
        fail_msg("got '%s'", why);
    assert_int_equal(fs_kueue_probe(probe, "a", &g8, why, sizeof why), 1);
    assert_int_equal(fs_kueue_probe(probe, "c", &g8, why, sizeof why), 0);
    if (!strstr(why, "tenant 'c' has no LocalQueue"))
        fail_msg("got '%s'", why);
    fs_kueue_probe_destroy(probe);
}

/* Preemption on the resource that is short: the high-priority pod's GPUs
 * fit but its CPU does not; the only candidate is the pod holding CPU (the
 * newer GPU-only job uses none of it and stays). */
static void test_res_preempt_cpu(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 4);
    fs_kueue_cq_cfg_t *a = add_cq(&k, "a", NULL, 4);
    a->within_cq = FS_KUEUE_LOWER_PRIORITY;
    set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 4), QR("p", FS_KRES_CPU, 8)}, 2);
    fs_job_t jobs[] = {pod(1, 0, 1, 8, 0, 100, 0, 0), job(2, 1, 1, 100, 0, 0),
                       pod(3, 10, 1, 4, 0, 10, 0, 5)};
    static fs_test_rows_t rs;
    out_t o;
    run(&k.c, jobs, 3, &rs, &o);
    assert_double_equal(start_of(&rs, 3), 10, 1e-9);
    assert_int_equal(o.n_vic, 1);
    assert_int_equal(o.vic[0], 1);
    assert_int_equal(find(&rs, 2)->restarts, 0);
    assert_int_equal(find(&rs, 1)->restarts, 1);
}

/* reclaimWithinCohort on memory: a borrows memory from b; b's pod, whose
 * GPUs fit, takes its memory back by preempting a's. */
static void test_res_reclaim_memory(void **state)
{
    (void)state;
    kcfg_t k;
    base(&k, 8);
    fs_kueue_cq_cfg_t *a = add_cq(&k, "a", "c", 4);
    fs_kueue_cq_cfg_t *b = add_cq(&k, "b", "c", 4);
    b->reclaim = FS_KUEUE_ANY;
    set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 4), QR("p", FS_KRES_MEMORY, 1024)}, 2);
    set_quotas(&k, b, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 4), QR("p", FS_KRES_MEMORY, 1024)}, 2);
    fs_job_t jobs[] = {pod(1, 0, 1, 0, 2048, 100, 0, 0), pod(2, 10, 1, 0, 1024, 10, 1, 0)};
    static fs_test_rows_t rs;
    out_t o;
    run(&k.c, jobs, 2, &rs, &o);
    assert_double_equal(start_of(&rs, 2), 10, 1e-9);
    assert_int_equal(o.n_vic, 1);
    assert_int_equal(o.vic[0], 1);
    assert_int_equal(o.st.reclaimed, 1);
    assert_double_equal(find(&rs, 1)->end, 120, 1e-9); /* back at 20, 100 s again */
}

/* Fair sharing's dominant resource share is the largest over resources: a
 * borrows half the cohort's lendable CPU, b a quarter of its GPUs, so b
 * (lower share) goes first although a's GPUs are within nominal. */
static void test_res_fair_sharing_drs(void **state)
{
    (void)state;
    for (int fair = 0; fair <= 1; fair++) {
        kcfg_t k;
        base(&k, 10);
        fs_kueue_cq_cfg_t *a = add_cq(&k, "a", "c", 4);
        fs_kueue_cq_cfg_t *b = add_cq(&k, "b", "c", 4);
        fs_kueue_cq_cfg_t *c = add_cq(&k, "c", "c", 8);
        set_quotas(&k, a, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 4), QR("p", FS_KRES_CPU, 4)}, 2);
        set_quotas(&k, b, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 4), QR("p", FS_KRES_CPU, 4)}, 2);
        set_quotas(&k, c, (fs_kueue_quota_cfg_t[]){QR("p", FS_KRES_GPU, 8), QR("p", FS_KRES_CPU, 8)}, 2);
        k.c.scheduler.kueue.fair_sharing = fair;
        /* lendable: 16 GPUs, 16 cores; a borrows 8 cores (500), b 4 GPUs (250) */
        fs_job_t jobs[] = {pod(1, 0, 1, 12, 0, 100, 0, 0), job(2, 0, 8, 100, 1, 0),
                           pod(3, 1, 1, 1, 0, 10, 0, 0), pod(4, 1, 1, 1, 0, 10, 1, 0)};
        static fs_test_rows_t rs;
        run(&k.c, jobs, 4, &rs, NULL);
        assert_double_equal(start_of(&rs, fair ? 4 : 3), 1, 1e-9);
        assert_double_equal(start_of(&rs, fair ? 3 : 4), 11, 1e-9);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_borrowing),
        cmocka_unit_test(test_lending_keeps_guaranteed),
        cmocka_unit_test(test_strict_and_best_effort),
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_preempt_within),
        cmocka_unit_test(test_reclaim),
        cmocka_unit_test(test_reclaim_returns_quota),
        cmocka_unit_test(test_fair_sharing),
        cmocka_unit_test(test_tenants),
        cmocka_unit_test(test_invariants_random),
        cmocka_unit_test(test_pods_oracle),
        cmocka_unit_test(test_pods_alloc_failures),
        cmocka_unit_test(test_borrowing_cuts_wait),
        cmocka_unit_test(test_manifest_parse),
        cmocka_unit_test(test_manifest_errors),
        cmocka_unit_test(test_scenario_keys),
        cmocka_unit_test(test_upstream_examples),
        cmocka_unit_test(test_res_cpu_quota),
        cmocka_unit_test(test_res_same_flavor),
        cmocka_unit_test(test_res_upstream_cpu_only),
        cmocka_unit_test(test_res_pods_quota),
        cmocka_unit_test(test_res_pods_gang),
        cmocka_unit_test(test_res_probe_job),
        cmocka_unit_test(test_res_borrowed_lent),
        cmocka_unit_test(test_res_preempt_cpu),
        cmocka_unit_test(test_res_reclaim_memory),
        cmocka_unit_test(test_res_fair_sharing_drs),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (fs_alloc_live() != 0) {
        fprintf(stderr, "live allocations at exit: %lld\n", (long long)fs_alloc_live());
        return 1;
    }
    return rc;
}
