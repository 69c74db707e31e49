/*
 * Recovery: checkpoint/restart, retries, the node index and placement
 * speed (models/fs_recovery.c, the fleet ops and recovery of
 * models/fs_model.c).
 *
 * Proofs:
 *   - Young and Daly intervals against DOMAIN.md 2.1's table;
 *   - the analytic progress: advancing by the predicted finish time ends
 *     the work exactly; advancing in pieces equals advancing at once;
 *   - one long job under Poisson node failures (a test-only failure module
 *     registered with fs_model_add_module: exponential times, instant
 *     repair): mean wall time against Daly's expected-time formula
 *     T_w = M e^{R/M} (e^{(tau+delta)/M} - 1) T_s / tau inside the 95%
 *     confidence interval, for several (M, delta, tau, R), Daly's optimum
 *     among them; a sweep of tau (common random numbers) finds its best
 *     tau next to Daly's interval;
 *   - hand-worked runs: lost work = work since the last checkpoint
 *     (failure during compute, during a write), ETTR of a job without
 *     failures = compute / (compute + checkpoint writes), Kubernetes
 *     backoff 10, 20, 40 ... 360 s, retry limit -> FAILED, detection hold
 *     (healthy nodes stay busy, the failed node's share is freed at once);
 *   - the node index: node_jobs and node_speed re-rating (a straggler);
 *   - placement speed: cluster.span_speed factors by level spanned;
 *   - the generic scheduler and the FIFO fast path give the same schedule
 *     under failures;
 *   - the recovery.* and cluster.span_speed keys: defaults, --set, errors
 *     at FILE:LINE:COL.
 * Numbers of the Daly check are in docs/validation.md (Recovery).
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
#include <gsl/gsl_rng.h>

#include "fs_test_util.h"
#include "models/fs_model.h"
#include "models/fs_policy.h"
#include "models/fs_recovery.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "traces/fs_memsrc.h"

#define S(x) ((fs_time_t)llround((x) * 1e6))
#define MIN 60.0
#define HOUR 3600.0

/* ---- configs and jobs ----------------------------------------------------------- */

static fs_job_t job(uint64_t id, double submit, uint32_t gpus, fs_time_t dur)
{
    fs_job_t j;
    fs_job_init(&j);
    j.id = id;
    j.submit = S(submit);
    j.gpus = gpus;
    j.duration = dur;
    return j;
}

/* ---- test-only failure modules ------------------------------------------------------ */

/* Poisson failures of every node of the fleet together (one stream: the
 * fleet fails at rate 1/M), each repaired at once: the job on it restarts
 * right away (detection and requeue 0). */
typedef struct poisson_mod {
    gsl_rng *rng;
    double mean_s;
    uint32_t node;
    uint32_t id;
    double stop_at;     /* s: no failure after this (0: stop when no job runs or waits) */
    uint64_t fails, hits;
} poisson_mod_t;

static int poisson_next(poisson_mod_t *p, fs_model_t *m)
{
    fs_time_t at = fs_model_now(m) + S(gsl_ran_exponential(p->rng, p->mean_s));
    return fs_model_module_event(m, p->id, at, FS_PRIO_FAILURE, 0, NULL);
}

static int poisson_event(void *ud, fs_model_t *m, uint64_t data)
{
    (void)data;
    poisson_mod_t *p = ud;
    uint32_t hit = 0;
    int rc = fs_model_node_down(m, p->node, FS_DOWN_FAIL, &hit);
    if (!rc)
        rc = fs_model_node_up(m, p->node);
    p->fails++;
    p->hits += hit;
    /* stop when nothing is left to fail */
    int more = p->stop_at > 0 ? fs_time_to_s(fs_model_now(m)) < p->stop_at
                              : fs_model_jobs_running(m) + fs_model_jobs_queued(m) > 0;
    if (!rc && more)
        rc = poisson_next(p, m);
    return rc;
}

static const fs_module_ops_t poisson_ops = {.name = "test-poisson", .on_event = poisson_event};

/* Failures at listed times: fail (and repair at once unless `stay`), or a
 * probe that records what the fleet looks like. */
enum { ACT_FAIL = 0, ACT_FAIL_STAY = 1, ACT_PROBE = 2, ACT_SPEED = 3 };
typedef struct act {
    double at;
    int what;
    uint32_t node;
    double speed;
} act_t;

typedef struct list_mod {
    const act_t *acts;
    size_t n;
    uint32_t id;
    uint32_t hit[16];
    uint32_t probe_jobs[16];    /* node_jobs(node) */
    uint64_t probe_busy[16];    /* GPUs busy */
    uint64_t probe_running[16];
} list_mod_t;

static int list_event(void *ud, fs_model_t *m, uint64_t k)
{
    list_mod_t *l = ud;
    const act_t *a = &l->acts[k];
    int rc = 0;
    switch (a->what) {
    case ACT_FAIL:
    case ACT_FAIL_STAY:
        rc = fs_model_node_down(m, a->node, FS_DOWN_FAIL, &l->hit[k]);
        if (!rc && a->what == ACT_FAIL)
            rc = fs_model_node_up(m, a->node);
        break;
    case ACT_SPEED:
        rc = fs_model_node_speed(m, a->node, a->speed);
        break;
    default:
        break;
    }
    l->probe_jobs[k] = fs_model_node_jobs(m, a->node);
    l->probe_busy[k] = fs_model_cluster(m)->gpus_busy;
    l->probe_running[k] = fs_model_jobs_running(m);
    return rc;
}

static const fs_module_ops_t list_ops = {.name = "test-list", .on_event = list_event};

/* ---- running ------------------------------------------------------------------------- */

typedef struct run_opts {
    poisson_mod_t *poisson;
    list_mod_t *list;
} run_opts_t;

static void run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, fs_test_rows_t *rs,
                const run_opts_t *o, fs_run_totals_t *t)
{
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, n, NULL, 0, NULL, 0, &src, &err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    int rc = fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err);
    if (rc)
        fail_msg("create: %s", err.msg);
    if (o && o->poisson) {
        assert_int_equal(fs_model_add_module(m, &poisson_ops, o->poisson, &o->poisson->id), 0);
        assert_int_equal(poisson_next(o->poisson, m), 0);
    }
    if (o && o->list) {
        assert_int_equal(fs_model_add_module(m, &list_ops, o->list, &o->list->id), 0);
        for (size_t k = 0; k < o->list->n; k++)
            assert_int_equal(fs_model_module_event(m, o->list->id, S(o->list->acts[k].at),
                                                   FS_PRIO_FAILURE, k, NULL), 0);
    }
    rc = fs_model_run(m, NULL, NULL, &err);
    if (rc)
        fail_msg("run: %s", err.msg);
    fs_run_totals_t tt;
    assert_int_equal(fs_model_finish(m, t ? t : &tt, &err), 0);
    fs_test_check_capstates(t ? t : &tt);
    fs_model_destroy(m);
    fs_source_destroy(src);
}

/* ---- the math ------------------------------------------------------------------------- */

static void test_intervals(void **st)
{
    (void)st;
    /* DOMAIN.md 2.1: M, delta -> Young, Daly (minutes, one decimal) */
    static const double tab[][4] = {
        {24 * 60, 5, 120.0, 116.7}, {6 * 60, 5, 60.0, 56.7},  {15, 5, 12.2, 9.1},
        {150, 5, 38.7, 35.5},       {150, 1, 17.3, 16.7},     {7.9 * 60, 2, 43.5, 42.2},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        double m = tab[i][0] * MIN, d = tab[i][1] * MIN;
        assert_double_equal(fs_recov_young(d, m) / MIN, tab[i][2], 0.05);
        assert_double_equal(fs_recov_daly(d, m) / MIN, tab[i][3], 0.05);
    }
    assert_double_equal(fs_recov_daly(3 * HOUR, 1 * HOUR), HOUR, 0);  /* delta >= 2M: M */
    /* through the config: M = node MTTF / nodes */
    fs_recovery_cfg_t c = {.checkpoint = FS_CKPT_DALY, .write_cost = S(5 * MIN)};
    assert_double_equal(fs_recov_interval_s(&c, 4 * 6 * HOUR, 4) / MIN, 56.7, 0.05);
    assert_double_equal(fs_recov_interval_s(&c, 0, 4), 0, 0);   /* no failure rate: none */
    c.checkpoint = FS_CKPT_FIXED;
    c.interval = S(HOUR);
    assert_double_equal(fs_recov_interval_s(&c, 0, 4), HOUR, 0);
}

static void test_backoff(void **st)
{
    (void)st;
    /* Kubernetes Job: 10 s doubling, capped at 6 min, backoffLimit 6 */
    fs_recovery_cfg_t c = {.retry = FS_RETRY_BACKOFF, .retry_base = S(10), .retry_max = S(360)};
    static const double want[] = {10, 20, 40, 80, 160, 320};
    fs_time_t d;
    for (uint32_t f = 1; f <= 6; f++) {
        assert_int_equal(fs_recov_retry(&c, f, &d), 1);
        assert_int_equal(d, S(want[f - 1]));
    }
    assert_int_equal(fs_recov_retry(&c, 7, &d), 0);   /* the 7th failure fails the job */
    c.retry_limit = 9;
    assert_int_equal(fs_recov_retry(&c, 7, &d), 1);
    assert_int_equal(d, S(360));                         /* 640 capped */
    assert_int_equal(fs_recov_retry(&c, 9, &d), 1);
    assert_int_equal(d, S(360));
    assert_int_equal(fs_recov_retry(&c, 10, &d), 0);
    /* requeue: no limit by default, plus the requeue time */
    fs_recovery_cfg_t r = {.retry = FS_RETRY_REQUEUE, .requeue = S(60)};
    assert_int_equal(fs_recov_retry(&r, 1000000, &d), 1);
    assert_int_equal(d, S(60));
    r.retry_limit = 2;
    assert_int_equal(fs_recov_retry(&r, 2, &d), 1);
    assert_int_equal(fs_recov_retry(&r, 3, &d), 0);
    fs_recovery_cfg_t none = {.retry = FS_RETRY_NONE};
    assert_int_equal(fs_recov_retry(&none, 1, &d), 0);
}

/* Advancing by the predicted finish time ends the work exactly; pieces
 * equal one step; counters add up (wall = compute + writes + restore). */
static void test_advance(void **st)
{
    (void)st;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    for (int it = 0; it < 2000; it++) {
        fs_jobrun_t a;
        memset(&a, 0, sizeof a);
        a.rate = 0.25 + 2.0 * gsl_rng_uniform(r);
        a.remaining = 1 + (fs_time_t)gsl_rng_uniform_int(r, 100000000);
        a.ckpt_every = it % 3 ? 1 + (fs_time_t)gsl_rng_uniform_int(r, 5000000) : 0;
        fs_time_t delta = it % 5 ? (fs_time_t)gsl_rng_uniform_int(r, 700000) : 0;
        if (it % 2) {
            a.phase = FS_PHASE_RESTORE;
            a.phase_left = (fs_time_t)gsl_rng_uniform_int(r, 900000) + 1;
        }
        fs_jobrun_t b = a;
        fs_time_t w = fs_recov_finish_wall(&a, delta);
        fs_recov_advance(&a, w, delta);
        assert_int_equal(a.remaining, 0);
        assert_int_equal(a.w_compute + a.w_ckpt + a.w_recovery, w);
        if (a.ckpt_every > 0)
            assert_int_equal(a.w_ckpt, (b.remaining / b.ckpt_every) * delta);
        /* in pieces (no rate change): the same end state */
        fs_time_t left = w, steps = 0;
        while (left > 0) {
            steps++;
            fs_time_t step = 1 + (fs_time_t)gsl_rng_uniform_int(r, (unsigned long)(w / 7 + 1));
            if (step > left)
                step = left;
            fs_time_t before = fs_recov_finish_wall(&b, delta);
            fs_recov_advance(&b, step, delta);
            left -= step;
            /* the prediction holds within the rounding of a partial compute
             * step (floor(dt x rate) drops under 1 us of work: 1/rate us) */
            fs_time_t after = fs_recov_finish_wall(&b, delta);
            assert_true(llabs((long long)(before - step - after)) <= (long long)ceil(1 / b.rate) + 1);
        }
        assert_true(b.remaining <= (fs_time_t)ceil((double)steps * (1 + b.rate)));
    }
    gsl_rng_free(r);
}

/* ---- Daly --------------------------------------------------------------------------------- */

typedef struct daly_case {
    double m, delta, tau, r;    /* s */
    uint32_t segs;              /* T_s = segs x tau */
} daly_case_t;

/* N identical jobs of T_s on a one-node fleet, one after the other; the
 * node fails at exponential times of mean M and is repaired at once.
 * Returns the mean wall time (first start to end) and its 95% half-width. */
static void daly_run(const daly_case_t *dc, size_t n, uint64_t seed, double *mean, double *hw,
                     fs_run_totals_t *tot)
{
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pool, 1, 8, FS_QUEUE_FIFO);
    fs_time_t tau = S(dc->tau);
    cfg.recovery.checkpoint = FS_CKPT_FIXED;
    cfg.recovery.interval = tau;
    cfg.recovery.write_cost = S(dc->delta);
    cfg.recovery.restore = S(dc->r);
    fs_job_t *jobs = calloc(n, sizeof *jobs);
    assert_non_null(jobs);
    for (size_t i = 0; i < n; i++)
        jobs[i] = job(i + 1, 0, 8, (fs_time_t)dc->segs * tau);
    fs_test_rows_t rs = {0};
    poisson_mod_t pm = {.rng = gsl_rng_alloc(gsl_rng_mt19937), .mean_s = dc->m};
    gsl_rng_set(pm.rng, seed);
    run_opts_t o = {.poisson = &pm};
    run(&cfg, jobs, n, &rs, &o, tot);
    assert_int_equal(rs.n, n);
    double s = 0, s2 = 0;
    for (size_t i = 0; i < rs.n; i++) {
        assert_int_equal(rs.r[i].state, FS_STATE_COMPLETED);
        double w = rs.r[i].end - rs.r[i].start;
        s += w;
        s2 += w * w;
    }
    *mean = s / (double)n;
    double var = (s2 - s * s / (double)n) / (double)(n - 1);
    *hw = 1.96 * sqrt(var / (double)n);
    gsl_rng_free(pm.rng);
    fs_test_rows_free(&rs);
    free(jobs);
}

/* Jobs per Daly point: 2000 (FS_RECOVERY_N overrides, for the larger runs
 * of docs/validation.md). */
static size_t daly_n(size_t def)
{
    const char *e = getenv("FS_RECOVERY_N");
    long v = e ? strtol(e, NULL, 10) : 0;
    return v >= 10 ? (size_t)v : def;
}

static void test_daly_expected_time(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    const daly_case_t cases[] = {
        /* Daly's optimum: M 6 h, delta 5 min -> tau 56.7 min */
        {6 * HOUR, 5 * MIN, fs_recov_daly(5 * MIN, 6 * HOUR), 10 * MIN, 20},
        /* Llama 3 JMTTI 2.5 h, delta 1 min: Daly 16.7 min; and a longer tau */
        {2.5 * HOUR, 1 * MIN, fs_recov_daly(1 * MIN, 2.5 * HOUR), 5 * MIN, 30},
        {2.5 * HOUR, 1 * MIN, 60 * MIN, 5 * MIN, 10},
        /* failures more often than checkpoints cost: M 15 min, delta 5 min */
        {15 * MIN, 5 * MIN, fs_recov_daly(5 * MIN, 15 * MIN), 2 * MIN, 20},
        /* rare failures, expensive restart */
        {24 * HOUR, 5 * MIN, 2 * HOUR, 30 * MIN, 12},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const daly_case_t *c = &cases[i];
        double tau = fs_time_to_s(S(c->tau));
        double want = fs_recov_daly_wall(c->segs * tau, tau, c->delta, c->r, c->m);
        double mean, hw;
        fs_run_totals_t t;
        daly_run(c, daly_n(2000), 11 + i, &mean, &hw, &t);
        printf("daly M=%.0fs delta=%.0fs tau=%.1fs R=%.0fs Ts=%.0fs: sim %.1f +- %.1f s, "
               "Daly %.1f s (%+.2f%%), interruptions %llu\n",
               c->m, c->delta, tau, c->r, c->segs * tau, mean, hw, want,
               100 * (mean - want) / want, (unsigned long long)t.interruptions);
        assert_true(fabs(mean - want) <= hw);
        assert_true(t.interruptions > 0);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

/* The same through the scenario language and helper A's failure module
 * (models/fs_failure.c): `failures:` node failures, exponential, repaired
 * in no time; `recovery:` fixed interval at Daly's optimum. */
static void test_daly_scenario(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const char yaml[] =
        "name: daly\n"
        "seed: 5\n"
        "cluster:\n"
        "  pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]\n"
        "workload:\n"
        "  synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}\n"
        "failures:\n"
        "  components: [{kind: node, tbf: {dist: exponential, mean: 6h}}]\n"
        "  repair: {soft: {dist: constant, value: 0s}, default: soft}\n"
        "recovery: {checkpoint: daly, node_mttf: 6h, write_cost: 5m, restore: 10m,\n"
        "           detection: 0s, requeue: 0s}\n";
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_string("daly.yaml", yaml, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    cfg.until = FS_UNTIL_DRAIN;
    cfg.horizon = FS_TIME_MAX_INPUT;
    cfg.drain_limit = 0;    /* thousands of jobs submitted at 0 drain for years */
    cfg.output.timeline_interval = 0;
    const double m = 6 * HOUR, delta = 5 * MIN, r = 10 * MIN;
    const double tau = fs_recov_daly(delta, m);
    const size_t n = daly_n(2000);
    fs_job_t *jobs = calloc(n, sizeof *jobs);
    assert_non_null(jobs);
    /* T_s = 20 tau: the job's tau in work is tau rounded to the microsecond */
    fs_time_t tau_us = (fs_time_t)llround(tau * 1e6);
    for (size_t i = 0; i < n; i++)
        jobs[i] = job(i + 1, 0, 8, 20 * tau_us);
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    run(&cfg, jobs, n, &rs, NULL, &t);
    assert_int_equal(rs.n, n);
    double s = 0, s2 = 0, ettr = 0;
    for (size_t i = 0; i < n; i++) {
        double w = rs.r[i].end - rs.r[i].start;
        s += w;
        s2 += w * w;
        ettr += rs.r[i].ettr;
    }
    double mean = s / (double)n, hw = 1.96 * sqrt((s2 - s * s / (double)n) / (double)(n - 1) / (double)n);
    double want = fs_recov_daly_wall(20 * fs_time_to_s(tau_us), fs_time_to_s(tau_us), delta, r, m);
    printf("daly via failures: + recovery: sim %.1f +- %.1f s, Daly %.1f s (%+.2f%%), "
           "interruptions %llu, mean ETTR %.4f (T_s / T_w = %.4f)\n",
           mean, hw, want, 100 * (mean - want) / want, (unsigned long long)t.interruptions,
           ettr / (double)n, 20 * fs_time_to_s(tau_us) / want);
    assert_true(fabs(mean - want) <= hw);
    assert_true(t.interruptions > 0);
    fs_test_rows_free(&rs);
    free(jobs);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Out of memory while resolving the failures block for a node's MTTF is
 * -1 (an error the model turns into FS_ENOMEM), never 0 ("nothing fails",
 * which would silently turn Young/Daly checkpoints off). */
static void test_mttf_out_of_memory(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const char yaml[] =
        "name: mttf\n"
        "cluster:\n"
        "  pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]\n"
        "workload:\n"
        "  synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}\n"
        "failures:\n"
        "  components: [{kind: node, tbf: {dist: exponential, mean: 6h}},\n"
        "               {kind: gpu, tbf: {dist: exponential, mean: 48h}}]\n"
        "recovery: {checkpoint: daly, write_cost: 5m}\n";
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_string("mttf.yaml", yaml, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    double want = fs_recov_node_mttf_s(&cfg, "p", 8);
    assert_double_equal(want, 1.0 / (1.0 / (6 * HOUR) + 8.0 / (48 * HOUR)), 1e-6);
    int failed = 0;
    for (uint64_t k = 1; k < 1000; k++) {
        fs_alloc_fail_after(k);
        double got = fs_recov_node_mttf_s(&cfg, "p", 8);
        fs_alloc_fail_after(0);
        if (got == want)
            break;
        assert_double_equal(got, -1.0, 0);
        failed++;
    }
    assert_true(failed > 0);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The same through a run: under an allocation failure at any point, a run
 * with failures and Daly checkpoints fails with FS_ENOMEM or gives exactly
 * the rows of the run without the failure (never checkpoints silently
 * off). */
static void test_mttf_out_of_memory_run(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const char yaml[] =
        "name: mttf-run\n"
        "cluster:\n"
        "  pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]\n"
        "workload:\n"
        "  synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, duration: {dist: constant, value: 1h}}\n"
        "failures:\n"
        "  components: [{kind: node, tbf: {dist: exponential, mean: 2d}}]\n"
        "recovery: {checkpoint: daly, write_cost: 1m}\n"
        "output: {timeline_interval: 0s}\n";
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_string("mttf.yaml", yaml, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    fs_job_t jobs[6];
    for (size_t i = 0; i < 6; i++)
        jobs[i] = job(i + 1, 3600.0 * (double)i, 8, S(20 * HOUR));
    fs_test_rows_t ref = {0}, rs = {0};
    run(&cfg, jobs, 6, &ref, NULL, NULL);
    double ckpt = 0;
    for (size_t i = 0; i < ref.n; i++)
        ckpt += ref.r[i].ckpt_s;
    assert_true(ckpt > 0);  /* Daly checkpoints are written */
    int failed = 0;
    for (uint64_t k = 1; k < 5000; k++) {
        fs_source_t *src;
        fs_model_t *m = NULL;
        assert_int_equal(fs_memsrc_create(jobs, 6, NULL, 0, NULL, 0, &src, &err), 0);
        fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
        rs.n = 0;
        fs_alloc_fail_after(k);
        int rc = fs_model_create(&cfg, fs_policy_select(&cfg.scheduler), src, &sink, &m, &err);
        if (!rc)
            rc = fs_model_run(m, NULL, NULL, &err);
        fs_run_totals_t t;
        if (!rc)
            rc = fs_model_finish(m, &t, &err);
        fs_alloc_fail_after(0);
        fs_model_destroy(m);
        fs_source_destroy(src);
        if (rc == 0) {
            assert_int_equal(rs.n, ref.n);
            for (size_t i = 0; i < ref.n; i++) {
                const fs_job_row_t *y = fs_test_find(&rs, ref.r[i].id);
                assert_non_null(y);
                assert_double_equal(y->end, ref.r[i].end, 0);
                assert_double_equal(y->ckpt_s, ref.r[i].ckpt_s, 0);
            }
            break;
        }
        assert_int_equal(rc, FS_ENOMEM);
        failed++;
    }
    assert_true(failed > 10);
    fs_test_rows_free(&ref);
    fs_test_rows_free(&rs);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Keys: defaults, values as written, errors at the key's position. */
static void test_keys(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const char base[] =
        "cluster: {pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]}\n"
        "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1},\n"
        "           duration: {dist: constant, value: 1h}}}\n";
    fs_config_t cfg;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_string("k.yaml", base, NULL, 0, &cfg, &err), 0);
    const fs_recovery_cfg_t *r = &cfg.recovery;
    assert_int_equal(r->checkpoint, FS_CKPT_NONE);
    assert_int_equal(r->interval, S(HOUR));
    assert_int_equal(r->write_cost, S(MIN));
    assert_int_equal(r->restore, S(10 * MIN));
    assert_int_equal(r->detection, S(5 * MIN));
    assert_int_equal(r->requeue, 0);
    assert_int_equal(r->retry, FS_RETRY_REQUEUE);
    assert_int_equal(r->retry_limit, 0);
    assert_int_equal(r->retry_base, S(10));
    assert_int_equal(r->retry_max, S(360));
    assert_int_equal(cfg.cluster.n_span_speed, 0);
    fs_config_release(&cfg);

    const char *sets[] = {"recovery.checkpoint=young", "recovery.retry.policy=backoff",
                          "recovery.retry.limit=2", "recovery.node_mttf=154d"};
    assert_int_equal(fs_scenario_load_string("k.yaml", base, sets, 4, &cfg, &err), 0);
    assert_int_equal(cfg.recovery.checkpoint, FS_CKPT_YOUNG);
    assert_int_equal(cfg.recovery.retry, FS_RETRY_BACKOFF);
    assert_int_equal(cfg.recovery.retry_limit, 2);
    assert_int_equal(cfg.recovery.node_mttf, S(154 * 86400.0));
    fs_config_release(&cfg);

    char text[1024];
    snprintf(text, sizeof text,
             "cluster: {pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}],\n"
             "          span_speed: [{class: 1, nodes: 0.95, leaves: 0.85}]}\n"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1},\n"
             "           duration: {dist: constant, value: 1h}}}\n");
    assert_int_equal(fs_scenario_load_string("k.yaml", text, NULL, 0, &cfg, &err), 0);
    assert_int_equal(cfg.cluster.n_span_speed, 1);
    const fs_span_speed_cfg_t *sp = &cfg.cluster.span_speed[0];
    assert_int_equal(sp->job_class, 1);
    assert_double_equal(sp->nodes, 0.95, 0);
    assert_double_equal(sp->racks, 1, 0);
    assert_double_equal(sp->leaves, 0.85, 0);
    fs_config_release(&cfg);

    snprintf(text, sizeof text, "%srecovery: {checkpoint: sometimes}\n", base);
    assert_int_equal(fs_scenario_load_string("k.yaml", text, NULL, 0, &cfg, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "k.yaml:4:"));
    assert_non_null(strstr(err.msg, "checkpoint"));
    snprintf(text, sizeof text, "%srecovery: {retry: {policy: never}}\n", base);
    assert_int_equal(fs_scenario_load_string("k.yaml", text, NULL, 0, &cfg, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "k.yaml:4:"));
    const char *bad[] = {"cluster.span_speed.0.nodes=1.5"};
    snprintf(text, sizeof text,
             "cluster: {pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}],\n"
             "          span_speed: [{class: 1, nodes: 0.95}]}\n"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1},\n"
             "           duration: {dist: constant, value: 1h}}}\n");
    assert_int_equal(fs_scenario_load_string("k.yaml", text, bad, 1, &cfg, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "span_speed"));
    assert_int_equal(fs_alloc_live(), live0);
}

/* Sweeping tau = T_s / k (common random numbers): the best simulated tau
 * sits next to Daly's interval, and Daly's interval is not measurably
 * worse than the best. */
static void test_daly_sweep(void **st)
{
    (void)st;
    const double m = 6 * HOUR, delta = 5 * MIN, r = 10 * MIN, ts = 24 * HOUR;
    const double daly = fs_recov_daly(delta, m);
    const uint32_t ks[] = {10, 14, 18, 22, 25, 28, 32, 40, 50};
    double best = INFINITY, best_tau = 0, at_daly = 0, hw_daly = 0, best_hw = 0;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        daly_case_t c = {m, delta, ts / ks[i], r, ks[i]};
        double mean, hw;
        fs_run_totals_t t;
        daly_run(&c, daly_n(3000), 99, &mean, &hw, &t);
        double want = fs_recov_daly_wall(ts, fs_time_to_s(S(c.tau)), delta, r, m);
        printf("sweep tau=%.1f min: sim %.1f +- %.1f s, Daly %.1f s\n", c.tau / MIN, mean, hw, want);
        if (mean < best) {
            best = mean;
            best_tau = c.tau;
            best_hw = hw;
        }
        if (ks[i] == 25) {  /* 57.6 min, the grid point nearest Daly's 56.7 */
            at_daly = mean;
            hw_daly = hw;
        }
    }
    printf("sweep: best tau %.1f min, Daly %.1f min\n", best_tau / MIN, daly / MIN);
    assert_true(best_tau >= daly / 1.35 && best_tau <= daly * 1.35);
    assert_true(at_daly - best <= fmax(hw_daly, best_hw));
}

/* ---- hand-worked runs ------------------------------------------------------------------------ */

/* One 8-GPU job of 10 h on one node; checkpoints every 1 h of compute,
 * 6 min writes.  No failure: 10 writes, ends at 11 h, ETTR 10/11. */
static void cfg_ckpt(fs_config_t *cfg, fs_pool_cfg_t *pool)
{
    fs_test_base_cfg(cfg, pool, 1, 8, FS_QUEUE_FIFO);
    cfg->recovery.checkpoint = FS_CKPT_FIXED;
    cfg->recovery.interval = S(HOUR);
    cfg->recovery.write_cost = S(6 * MIN);
}

static void test_ettr_no_failures(void **st)
{
    (void)st;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    cfg_ckpt(&cfg, &pool);
    fs_job_t jobs[] = {job(1, 0, 8, S(10 * HOUR))};
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    run(&cfg, jobs, 1, &rs, NULL, &t);
    const fs_job_row_t *a = fs_test_find(&rs, 1);
    assert_double_equal(a->end, 11 * HOUR, 1e-6);
    assert_double_equal(a->ckpt_s, 10 * 6 * MIN, 1e-6);
    assert_double_equal(a->ettr, 10.0 / 11.0, 1e-12);
    assert_double_equal(a->goodput, 10.0 / 11.0, 1e-12);
    assert_double_equal(a->recovery_s, 0, 0);
    assert_double_equal(a->lost_gpu_s, 0, 0);
    assert_double_equal(t.gpu_s_ckpt, 8 * 3600.0, 1e-6);
    /* the held split of busy (#15): 10 h computing and 1 h writing, all held */
    assert_double_equal(t.gpu_s_computing, 8 * 10 * HOUR, 1e-6);
    assert_double_equal(t.gpu_s_held, 8 * 11 * HOUR, 1e-6);
    assert_double_equal(t.gpu_s_allocated, 8 * 11 * HOUR, 1e-6);
    assert_double_equal(t.gpu_s_busy, 8 * 11 * HOUR, 1e-6);
    assert_double_equal(t.gpu_s_recovering, 0, 1e-6);
    assert_double_equal(t.gpu_s_redo, 0, 0);
    assert_double_equal(t.gpu_s_serving, 0, 1e-6);
    assert_double_equal(t.gpu_s_share_idle, 0, 1e-6);
    /* without checkpoints: ETTR 1 */
    cfg.recovery.checkpoint = FS_CKPT_NONE;
    run(&cfg, jobs, 1, &rs, NULL, &t);
    assert_double_equal(fs_test_find(&rs, 1)->ettr, 1.0, 0);
    assert_double_equal(fs_test_find(&rs, 1)->end, 10 * HOUR, 0);
    fs_test_rows_free(&rs);
}

static void test_lost_work(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    cfg_ckpt(&cfg, &pool);
    fs_job_t jobs[] = {job(1, 0, 8, S(10 * HOUR))};
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    /* a failure at 2.5 h: checkpoints done at 1.1 h and 2.2 h (2 h of work
     * saved), 0.3 h computed since: lost 8 x 0.3 h; 8 h left: restart at
     * 2.5 h (R 0) + 8 x (1 h + 6 min) = 11.3 h */
    act_t a1[] = {{2.5 * HOUR, ACT_FAIL, 0, 0}};
    list_mod_t l = {.acts = a1, .n = 1};
    run_opts_t o = {.list = &l};
    run(&cfg, jobs, 1, &rs, &o, &t);
    const fs_job_row_t *r = fs_test_find(&rs, 1);
    assert_int_equal(l.hit[0], 1);
    assert_int_equal(r->restarts, 1);
    assert_double_equal(r->lost_gpu_s, 8 * 0.3 * HOUR, 1e-6);
    assert_double_equal(r->end, 11.3 * HOUR, 1e-6);
    assert_double_equal(r->ckpt_s, 10 * 6 * MIN, 1e-6);
    assert_double_equal(r->ettr, 10.0 / 11.3, 1e-9);
    assert_double_equal(t.gpu_s_lost, 8 * 0.3 * HOUR, 1e-6);
    assert_int_equal(t.interruptions, 1);
    /* during the second write (2.15 h): the whole second hour is lost, and
     * the half-done write counts as checkpoint time */
    act_t a2[] = {{2.15 * HOUR, ACT_FAIL, 0, 0}};
    l = (list_mod_t){.acts = a2, .n = 1};
    run(&cfg, jobs, 1, &rs, &o, &t);
    r = fs_test_find(&rs, 1);
    assert_double_equal(r->lost_gpu_s, 8 * 1.0 * HOUR, 1e-6);
    assert_double_equal(r->ckpt_s, (1 + 0.5 + 9) * 6 * MIN, 1e-6);
    /* 9 h left from 2.15 h: 9 x 1.1 h */
    assert_double_equal(r->end, 2.15 * HOUR + 9 * 1.1 * HOUR, 1e-6);
    /* with restore R = 10 min, detection 30 s and requeue 1 min: the
     * restart waits 90 s, then restores 10 min */
    cfg.recovery.restore = S(10 * MIN);
    cfg.recovery.detection = S(30);
    cfg.recovery.requeue = S(60);
    l = (list_mod_t){.acts = a1, .n = 1};
    run(&cfg, jobs, 1, &rs, &o, &t);
    r = fs_test_find(&rs, 1);
    assert_double_equal(r->end, 11.3 * HOUR + 90 + 10 * MIN, 1e-6);
    assert_double_equal(r->recovery_s, 90 + 10 * MIN, 1e-6);
    assert_double_equal(r->ettr, 10 * HOUR / (11.3 * HOUR + 90 + 10 * MIN), 1e-9);
    /* held: all but the 90 s (a one-node job holds nothing once its node is gone) */
    assert_double_equal(r->goodput, 10 * HOUR / (11.3 * HOUR + 10 * MIN), 1e-9);
    /* the held split (#15): computing 2.3 h + 8 h (0.3 h of it redone),
     * writing 10 x 6 min, restoring 10 min */
    assert_double_equal(t.gpu_s_computing, 8 * 10.3 * HOUR, 1e-6);
    assert_double_equal(t.gpu_s_redo, 8 * 0.3 * HOUR, 1e-6);
    assert_double_equal(t.gpu_s_ckpt, 8 * HOUR, 1e-6);
    assert_double_equal(t.gpu_s_recovering, 8 * 10 * MIN, 1e-6);
    assert_double_equal(t.gpu_s_held, 8 * (11.3 * HOUR + 10 * MIN), 1e-6);
    assert_double_equal(t.gpu_s_allocated, t.gpu_s_held, 1e-6);
    fs_test_rows_free(&rs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Kubernetes backoff: each failure at 1 h into an attempt; restarts after
 * detection 0 + 10, 20, 40 s; limit 3: the 4th failure fails the job. */
static void test_retry_limit(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pool, 1, 8, FS_QUEUE_FIFO);
    cfg.recovery.retry = FS_RETRY_BACKOFF;
    cfg.recovery.retry_limit = 3;
    cfg.recovery.retry_base = S(10);
    cfg.recovery.retry_max = S(360);
    fs_job_t jobs[] = {job(1, 0, 8, S(10 * HOUR)), job(2, 1, 8, S(HOUR))};
    /* attempts start at 0, 1h+10s, 2h+30s, 3h+70s; failure 1 h into each */
    act_t acts[] = {{1 * HOUR, ACT_FAIL, 0, 0},
                    {2 * HOUR + 10, ACT_FAIL, 0, 0},
                    {3 * HOUR + 30, ACT_FAIL, 0, 0},
                    {4 * HOUR + 70, ACT_FAIL, 0, 0}};
    list_mod_t l = {.acts = acts, .n = 4};
    run_opts_t o = {.list = &l};
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    /* job 2 is queued behind job 1 (FIFO); it runs in the backoff gaps?
     * No: a 1 h job does not fit a 10 s gap in time, but FIFO starts it as
     * soon as the node is free.  Keep the node to job 1: submit job 2 only
     * after the end. */
    jobs[1].submit = S(5 * HOUR);
    run(&cfg, jobs, 2, &rs, &o, &t);
    const fs_job_row_t *a = fs_test_find(&rs, 1);
    assert_int_equal(a->state, FS_STATE_FAILED);
    assert_double_equal(a->end, 4 * HOUR + 70, 1e-6);
    assert_int_equal(a->restarts, 3);
    assert_double_equal(a->recovery_s, 10 + 20 + 40, 1e-6);
    assert_double_equal(a->lost_gpu_s, 4 * 8 * HOUR, 1e-6);   /* no checkpoints */
    assert_double_equal(a->ettr, 0, 0);
    for (int k = 0; k < 4; k++)
        assert_int_equal(l.hit[k], 1);
    assert_int_equal(fs_test_find(&rs, 2)->state, FS_STATE_COMPLETED);
    /* policy none: the first failure ends it */
    cfg.recovery.retry = FS_RETRY_NONE;
    run(&cfg, jobs, 2, &rs, &o, &t);
    assert_int_equal(fs_test_find(&rs, 1)->state, FS_STATE_FAILED);
    assert_double_equal(fs_test_find(&rs, 1)->end, HOUR, 0);
    assert_int_equal(fs_test_find(&rs, 1)->restarts, 0);
    fs_test_rows_free(&rs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A 16-GPU job on nodes 0 and 1 (8 GPUs each), a 4-GPU job on node 2.
 * Node 0 fails at 100 s and stays down; detection 30 s: node 1's 8 GPUs
 * stay busy until 130 s, node 0's are freed at once; the job restarts at
 * 130 s on nodes 1 and 2?  Node 2 has 4 free: it waits for node 0. */
static void test_detection_hold(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pool, 3, 8, FS_QUEUE_FIFO);
    cfg.recovery.detection = S(30);
    fs_job_t jobs[] = {job(1, 0, 16, S(1000)), job(2, 0, 4, S(2000))};
    act_t acts[] = {{100, ACT_FAIL_STAY, 0, 0},
                    {120, ACT_PROBE, 1, 0},
                    {131, ACT_PROBE, 1, 0}};
    list_mod_t l = {.acts = acts, .n = 3};
    run_opts_t o = {.list = &l};
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    run(&cfg, jobs, 2, &rs, &o, &t);
    assert_int_equal(l.hit[0], 1);
    assert_int_equal(l.probe_jobs[0], 0);       /* node 0: its share freed at once */
    assert_int_equal(l.probe_busy[0], 8 + 4);   /* node 1 held + job 2 */
    assert_int_equal(l.probe_jobs[1], 1);       /* still held at 120 s */
    assert_int_equal(l.probe_busy[1], 8 + 4);
    assert_int_equal(l.probe_running[1], 1);    /* only job 2 runs */
    assert_int_equal(l.probe_jobs[2], 0);       /* released at 130 s; node 0 is down */
    assert_int_equal(l.probe_busy[2], 4);
    /* job 1 restarts when job 2 frees node 2 (2000 s): 1000 s from scratch */
    const fs_job_row_t *a = fs_test_find(&rs, 1);
    assert_double_equal(a->end, 3000, 1e-6);
    assert_double_equal(a->lost_gpu_s, 16 * 100, 1e-6);
    /* held: 16 x 100 s, 8 x 30 s (detection), 16 x 1000 s */
    assert_double_equal(a->goodput, 16.0 * 1000 / (16 * 100 + 8 * 30 + 16 * 1000), 1e-9);
    assert_double_equal(a->recovery_s, 30, 1e-9);
    /* the held split (#15): node 1's 8 GPUs held 30 s while the failure is
     * detected are recovering; job 2 computes 4 x 2000 s */
    assert_double_equal(t.gpu_s_recovering, 8 * 30, 1e-6);
    assert_double_equal(t.gpu_s_computing, 16 * 1100 + 4 * 2000, 1e-6);
    assert_double_equal(t.gpu_s_redo, 16 * 100, 1e-6);
    assert_double_equal(t.gpu_s_held, 16 * 1100 + 8 * 30 + 4 * 2000, 1e-6);
    assert_double_equal(t.gpu_s_allocated, t.gpu_s_held, 1e-6);
    assert_double_equal(t.gpu_s_share_idle, 0, 1e-6);
    fs_test_rows_free(&rs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A straggler: two 8-GPU jobs on nodes 0 and 1 (first fit); node 1 slows
 * to 0.5 at 50 s: job 2 (100 s of work) ends at 150 s, job 1 at 100 s;
 * back to 1.0 at 100 s: job 2 ends at 125 s. */
static void test_node_speed(void **st)
{
    (void)st;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pool, 2, 8, FS_QUEUE_FIFO);
    fs_job_t jobs[] = {job(1, 0, 8, S(100)), job(2, 0, 8, S(100))};
    act_t acts[] = {{50, ACT_SPEED, 1, 0.5}};
    list_mod_t l = {.acts = acts, .n = 1};
    run_opts_t o = {.list = &l};
    fs_test_rows_t rs = {0};
    run(&cfg, jobs, 2, &rs, &o, NULL);
    assert_double_equal(fs_test_find(&rs, 1)->end, 100, 0);
    assert_double_equal(fs_test_find(&rs, 2)->end, 150, 0);
    assert_int_equal(l.probe_jobs[0], 1);
    act_t acts2[] = {{50, ACT_SPEED, 1, 0.5}, {100, ACT_SPEED, 1, 1.0}};
    l = (list_mod_t){.acts = acts2, .n = 2};
    run(&cfg, jobs, 2, &rs, &o, NULL);
    assert_double_equal(fs_test_find(&rs, 2)->end, 125, 0);
    /* a checkpointed job keeps its checkpoints in the work: tau 40 s of
     * work, writes 10 s; job 2 slowed at 50 s (in its second compute,
     * 0 s done): 40 s of work at 0.5 = 80 s, write 10, last 20 s at 0.5
     * = 40 s: ends at 180 s */
    cfg.recovery.checkpoint = FS_CKPT_FIXED;
    cfg.recovery.interval = S(40);
    cfg.recovery.write_cost = S(10);
    l = (list_mod_t){.acts = acts, .n = 1};
    run(&cfg, jobs, 2, &rs, &o, NULL);
    assert_double_equal(fs_test_find(&rs, 1)->end, 120, 0);
    assert_double_equal(fs_test_find(&rs, 2)->end, 180, 0);
    assert_double_equal(fs_test_find(&rs, 2)->ckpt_s, 20, 0);
    fs_test_rows_free(&rs);
}

/* cluster.span_speed: 4 nodes of 8 GPUs, racks of 1 node, 2 racks per
 * leaf; class 0: nodes 0.9, leaves 0.5.  16 GPUs (nodes 0-1, one leaf):
 * 0.9; 24 GPUs (nodes 0-2, two leaves): 0.5; 8 GPUs: 1.0. */
static void test_span_speed(void **st)
{
    (void)st;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pool, 4, 8, FS_QUEUE_FIFO);
    cfg.cluster.topology.nodes_per_rack = 1;
    cfg.cluster.topology.racks_per_leaf = 2;
    fs_span_speed_cfg_t sp = {.job_class = 0, .nodes = 0.9, .domains = 1, .racks = 1,
                              .leaves = 0.5, .spines = 1};
    cfg.cluster.span_speed = &sp;
    cfg.cluster.n_span_speed = 1;
    fs_test_rows_t rs = {0};
    fs_job_t j16[] = {job(1, 0, 16, S(90))};
    run(&cfg, j16, 1, &rs, NULL, NULL);
    assert_double_equal(fs_test_find(&rs, 1)->end, 100, 1e-6);
    fs_job_t j24[] = {job(1, 0, 24, S(50))};
    run(&cfg, j24, 1, &rs, NULL, NULL);
    assert_double_equal(fs_test_find(&rs, 1)->end, 100, 1e-6);
    fs_job_t j8[] = {job(1, 0, 8, S(100))};
    run(&cfg, j8, 1, &rs, NULL, NULL);
    assert_double_equal(fs_test_find(&rs, 1)->end, 100, 0);
    /* another class: no row, 1.0 */
    j24[0].job_class = 3;
    run(&cfg, j24, 1, &rs, NULL, NULL);
    assert_double_equal(fs_test_find(&rs, 1)->end, 50, 0);
    /* without a topology only the nodes level counts: 0.9 */
    j24[0].job_class = 0;
    cfg.cluster.topology.nodes_per_rack = 0;
    cfg.cluster.topology.racks_per_leaf = 0;
    run(&cfg, j24, 1, &rs, NULL, NULL);
    assert_double_equal(fs_test_find(&rs, 1)->end, 50 / 0.9, 1e-6);
    /* the factor function alone: the smallest factor among levels spanned */
    fs_span_t s = {2, 2, 2, 1, 1};
    assert_double_equal(fs_recov_span_factor(&cfg.cluster, 0, &s, 1), 0.9, 0);
    s.leaves = s.spines = 2;
    sp.spines = 0.7;
    assert_double_equal(fs_recov_span_factor(&cfg.cluster, 0, &s, 1), 0.5, 0);
    sp.leaves = 1;
    assert_double_equal(fs_recov_span_factor(&cfg.cluster, 0, &s, 1), 0.7, 0);
    fs_test_rows_free(&rs);
}

/* Under failures the generic scheduler (queue priority, all equal) starts
 * the same jobs at the same times as the FIFO fast path. */
static void test_sched_equals_fifo(void **st)
{
    (void)st;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pool, 1, 8, FS_QUEUE_FIFO);
    cfg.recovery.checkpoint = FS_CKPT_FIXED;
    cfg.recovery.interval = S(30 * MIN);
    cfg.recovery.write_cost = S(MIN);
    cfg.recovery.restore = S(5 * MIN);
    cfg.recovery.detection = S(30);
    cfg.recovery.requeue = S(60);
    enum { N = 200 };
    fs_job_t jobs[N];
    for (int i = 0; i < N; i++)
        jobs[i] = job((uint64_t)i + 1, i * 600.0, (uint32_t)(1u << (i % 4)), S(600 + 97 * (i % 13)));
    fs_test_rows_t a = {0}, b = {0};
    poisson_mod_t pm = {.rng = gsl_rng_alloc(gsl_rng_mt19937), .mean_s = 3 * HOUR,
                        .stop_at = N * 600.0};
    run_opts_t o = {.poisson = &pm};
    gsl_rng_set(pm.rng, 5);
    run(&cfg, jobs, N, &a, &o, NULL);
    assert_true(pm.hits > 0);
    assert_true(fs_policy_select(&cfg.scheduler) == &fs_policy_fifo);
    cfg.scheduler.queue = FS_QUEUE_PRIORITY;
    assert_true(fs_policy_select(&cfg.scheduler) == &fs_policy_sched);
    pm.fails = pm.hits = 0;
    gsl_rng_set(pm.rng, 5);
    run(&cfg, jobs, N, &b, &o, NULL);
    assert_int_equal(a.n, b.n);
    size_t restarted = 0;
    for (size_t i = 0; i < a.n; i++) {
        const fs_job_row_t *x = &a.r[i], *y = fs_test_find(&b, x->id);
        assert_non_null(y);
        assert_double_equal(x->start, y->start, 0);
        assert_double_equal(x->end, y->end, 0);
        assert_int_equal(x->restarts, y->restarts);
        restarted += x->restarts > 0;
    }
    assert_true(restarted > 0);
    gsl_rng_free(pm.rng);
    fs_test_rows_free(&a);
    fs_test_rows_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intervals),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_advance),
        cmocka_unit_test(test_ettr_no_failures),
        cmocka_unit_test(test_lost_work),
        cmocka_unit_test(test_retry_limit),
        cmocka_unit_test(test_detection_hold),
        cmocka_unit_test(test_node_speed),
        cmocka_unit_test(test_span_speed),
        cmocka_unit_test(test_sched_equals_fifo),
        cmocka_unit_test(test_daly_expected_time),
        cmocka_unit_test(test_daly_sweep),
        cmocka_unit_test(test_daly_scenario),
        cmocka_unit_test(test_mttf_out_of_memory),
        cmocka_unit_test(test_mttf_out_of_memory_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
