/*
 * Failures and repair (models/fs_failure.c), checked against theory and
 * hand computation:
 *   - availability of repairable nodes = MTTF / (MTTF + MTTR) for
 *     exponential and lognormal repair (and Weibull times between
 *     failures), inside the 95% t-interval over replications;
 *   - job-size scaling: the mean time to interruption of an N-node job is
 *     MTTF_node / N;
 *   - a leaf switch failure interrupts exactly the jobs under it (planned
 *     and from a failure process restricted to one pool);
 *   - the llama3-h100 preset gives a 16,384-GPU job about 7.8
 *     interruptions a day (419 in 54 days);
 *   - repair crews serve first come first served (one crew: repairs end
 *     one repair time apart, and a queue forms);
 *   - lemon removal, straggler detection, the rack cordon rule, spares;
 *   - draws keyed per unit: another component does not move them, and the
 *     same seed gives the same rows;
 *   - scenario errors name the key.
 * The validation numbers are printed (docs/validation.md quotes them).
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
#include "analysis/fs_ci.h"
#include "models/fs_model.h"
#include "models/fs_policy.h"
#include "models/fs_xid.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "traces/fs_memsrc.h"

#define DAY 86400.0
#define HOUR 3600.0
#define S(x) ((fs_time_t)((x) * FS_US_PER_S))

/* What a run produced. */
typedef struct res {
    fs_job_row_t *jobs;
    size_t nj, cj;
    fs_failure_row_t *fails;
    size_t nf, cf;
    fs_sample_row_t *smp;
    size_t ns, cs;
    fs_run_totals_t t;
} res_t;

static int on_job(void *ud, const fs_job_row_t *row)
{
    res_t *r = ud;
    if (fs_grow((void **)&r->jobs, &r->cj, r->nj + 1, sizeof *r->jobs))
        return FS_ENOMEM;
    r->jobs[r->nj++] = *row;
    return 0;
}

static int on_fail(void *ud, const fs_failure_row_t *row)
{
    res_t *r = ud;
    if (fs_grow((void **)&r->fails, &r->cf, r->nf + 1, sizeof *r->fails))
        return FS_ENOMEM;
    r->fails[r->nf++] = *row;
    return 0;
}

static int on_sample(void *ud, const fs_sample_row_t *row)
{
    res_t *r = ud;
    if (fs_grow((void **)&r->smp, &r->cs, r->ns + 1, sizeof *r->smp))
        return FS_ENOMEM;
    if (r->ns > 0)
        fs_test_check_capstate_row(&r->smp[r->ns - 1], row);
    r->smp[r->ns++] = *row;
    return 0;
}

static void res_free(res_t *r)
{
    fs_free(r->jobs);
    fs_free(r->fails);
    fs_free(r->smp);
    memset(r, 0, sizeof *r);
}

#define WORK "workload:\n  synthetic:\n    arrivals: {rate: 1/h}\n    gpus: {8: 1}\n" \
             "    duration: {dist: constant, value: 1h}\n"

static void load(const char *text, fs_config_t *cfg)
{
    fs_error_t err;
    int rc = fs_scenario_load_string("t.yaml", text, NULL, 0, cfg, &err);
    if (rc)
        fail_msg("scenario: %s", err.msg);
}

/* Runs cfg (replication rep) on the given jobs. */
static void run(fs_config_t *cfg, uint64_t rep, const fs_job_t *jobs, size_t n, res_t *r)
{
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    memset(r, 0, sizeof *r);
    cfg->replication = rep;
    assert_int_equal(fs_memsrc_create(jobs, n, NULL, 0, NULL, 0, &src, &err), 0);
    fs_sink_t sink = {.job = on_job, .sample = on_sample, .failure = on_fail, .ud = r};
    int rc = fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err);
    if (rc)
        fail_msg("model: %s", err.msg);
    rc = fs_model_run(m, NULL, NULL, &err);
    if (rc)
        fail_msg("run: %s", err.msg);
    assert_int_equal(fs_model_finish(m, &r->t, &err), 0);
    fs_test_check_capstates(&r->t);
    fs_model_destroy(m);
    fs_source_destroy(src);
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

static const fs_job_row_t *find_job(const res_t *r, uint64_t id)
{
    for (size_t i = 0; i < r->nj; i++)
        if (r->jobs[i].id == id)
            return &r->jobs[i];
    fail_msg("job %llu has no row", (unsigned long long)id);
    return NULL;
}

/* The sample at time t (s). */
static const fs_sample_row_t *sample_at(const res_t *r, double t)
{
    for (size_t i = 0; i < r->ns; i++)
        if (fabs(r->smp[i].time - t) < 1e-6)
            return &r->smp[i];
    fail_msg("no sample at %.0f s", t);
    return NULL;
}

/* ---- 1. availability ---------------------------------------------------------- */

/* 100 nodes, up for a draw of tbf (mean 10 d), down for a draw of the
 * repair (mean 1 d), 2,000 days, 10 replications: the time-average share
 * of GPUs up against MTTF / (MTTF + MTTR) = 10/11. */
static void availability_case(const char *tbf, const char *repair, const char *label)
{
    char text[2048];
    snprintf(text, sizeof text,
             "name: avail\nhorizon: 2000d\nuntil: horizon\n"
             "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 100, gpus_per_node: 8}\n" WORK
             "failures:\n  components:\n    - {kind: node, tbf: %s}\n"
             "  repair: {soft: %s}\noutput: {timeline_interval: 0s}\n",
             tbf, repair);
    fs_config_t cfg;
    load(text, &cfg);
    enum { REPS = 10 };
    double a[REPS];
    res_t r;
    for (int k = 0; k < REPS; k++) {
        run(&cfg, (uint64_t)k, NULL, 0, &r);
        a[k] = r.t.gpu_s_capacity / ((double)r.t.gpus_total * r.t.end_time);
        assert_true(r.t.failures > 10000);
        res_free(&r);
    }
    fs_ci_t ci;
    assert_int_equal(fs_ci_t_interval(a, REPS, 0.95, &ci), 0);
    double want = 10.0 / 11.0;
    print_message("availability %-28s mean %.5f  95%% CI [%.5f, %.5f]  theory %.5f\n", label,
                  ci.mean, ci.lo, ci.hi, want);
    assert_true(ci.lo <= want && want <= ci.hi);
    assert_true(ci.half < 0.002);   /* the interval is narrow enough to mean something */
    fs_config_release(&cfg);
}

static void test_availability_exponential(void **s)
{
    (void)s;
    availability_case("{dist: exponential, mean: 10d}", "{dist: exponential, mean: 1d}",
                      "exp TBF, exp repair");
}

static void test_availability_lognormal(void **s)
{
    (void)s;
    availability_case("{dist: exponential, mean: 10d}", "{dist: lognormal, mean: 1d, sigma: 1}",
                      "exp TBF, lognormal repair");
    availability_case("{dist: weibull, shape: 0.7, mean: 10d}",
                      "{dist: lognormal, mean: 1d, sigma: 1}", "weibull 0.7 TBF, lognormal rep");
}

/* ---- 2. job-size scaling ----------------------------------------------------------- */

/* 80 nodes failing at exponential times (mean 20 d), repaired in 1 min: a
 * long synchronous job of N nodes is interrupted at rate N / MTTF, so its
 * mean running time per interruption is MTTF / N. */
static void test_job_size_scaling(void **s)
{
    (void)s;
    const char *text = "name: scale\nhorizon: 1000d\nuntil: horizon\n"
                       "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 80, gpus_per_node: 8}\n" WORK
                       "recovery: {detection: 0s, restore: 0s}\n"
                       "failures:\n  components:\n    - {kind: node, tbf: {dist: exponential, mean: 20d}}\n"
                       "  repair: {soft: {dist: constant, value: 1m}}\noutput: {timeline_interval: 0s}\n";
    fs_config_t cfg;
    load(text, &cfg);
    const uint32_t sizes[] = {1, 4, 16, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t n = sizes[i];
        fs_job_t j = job(1, 0, 8 * n, 1e9);
        double k = 0, ran = 0, want = 20 * DAY / n;
        for (uint64_t rep = 0; rep < 5; rep++) {   /* 5 replications, pooled */
            res_t r;
            run(&cfg, rep, &j, 1, &r);
            const fs_job_row_t *row = find_job(&r, 1);
            uint64_t hit = 0;
            for (size_t f = 0; f < r.nf; f++)
                hit += r.fails[f].jobs_hit;
            assert_int_equal(hit, row->restarts);      /* every hit is one restart */
            k += row->restarts;
            ran += row->run;
            res_free(&r);
        }
        double mtti = ran / k;
        print_message("job of %2u nodes: %5.0f interruptions, mean time to interruption %8.3f h, "
                      "MTTF/N %8.3f h (%+.1f%%, 3 sd = %.1f%%)\n", n, k, mtti / HOUR, want / HOUR,
                      100 * (mtti / want - 1), 300 / sqrt(k));
        assert_true(fabs(mtti / want - 1) < 3 / sqrt(k));
    }
    fs_config_release(&cfg);
}

/* ---- 3. correlated: a leaf switch ----------------------------------------------------- */

/* 16 nodes, racks of 2, leaves of 2 racks (4 nodes): one 8-GPU job per
 * node (first fit: job i on node i-1).  Leaf 1 (nodes 4..7) fails for an
 * hour on day 1: jobs 5..8 restart once, no other job does. */
static void test_leaf_planned(void **s)
{
    (void)s;
    const char *text = "name: leaf\nhorizon: 3d\nuntil: horizon\n"
                       "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 16, gpus_per_node: 8}\n"
                       "  topology: {nodes_per_rack: 2, racks_per_leaf: 2}\n" WORK
                       "scheduler: {placement: first_fit}\n"
                       "failures:\n  planned:\n    - {at: 1d, kind: leaf, unit: 1, duration: 1h, cause: tor}\n"
                       "output: {timeline_interval: 30m}\n";
    fs_config_t cfg;
    load(text, &cfg);
    fs_job_t jobs[16];
    for (uint32_t i = 0; i < 16; i++)
        jobs[i] = job(i + 1, 0, 8, 10 * DAY);
    res_t r;
    run(&cfg, 0, jobs, 16, &r);
    assert_int_equal(r.nf, 1);
    assert_double_equal(r.fails[0].time, DAY, 0);
    assert_int_equal(r.fails[0].component, FS_FAIL_LEAF);
    assert_int_equal(r.fails[0].unit, 1);
    assert_int_equal(r.fails[0].nodes, 4);
    assert_int_equal(r.fails[0].jobs_hit, 4);
    assert_int_equal(r.fails[0].repair, FS_REPAIR_PLANNED);
    assert_string_equal(r.fails[0].cause, "tor");
    for (uint64_t id = 1; id <= 16; id++)
        assert_int_equal(find_job(&r, id)->restarts, id >= 5 && id <= 8 ? 1 : 0);
    assert_int_equal(sample_at(&r, DAY + 1800)->gpus_up, 12 * 8);
    assert_int_equal(sample_at(&r, DAY + 1800)->nodes_down, 4);
    assert_int_equal(sample_at(&r, DAY + 3600)->gpus_up, 16 * 8);
    assert_int_equal(r.t.failures, 0);   /* planned outages are not failures */
    res_free(&r);
    fs_config_release(&cfg);
}

/* Two pools, one leaf each (no racks_per_leaf): a leaf failure process in
 * pool b only (constant 1 d between failures, 2 h repair) takes down b's
 * 4 nodes at day 1 and hits b's 4 jobs, never a's. */
static void test_leaf_component(void **s)
{
    (void)s;
    const char *text = "name: leaf2\nhorizon: 36h\nuntil: horizon\n"
                       "cluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 8, gpus_per_node: 8}\n"
                       "    - {name: b, gpu: H100, nodes: 4, gpus_per_node: 8}\n" WORK
                       "scheduler: {placement: first_fit}\n"
                       "failures:\n  components:\n    - {kind: leaf, pool: b, tbf: {dist: constant, value: 1d},"
                       " causes: {switch: 1}}\n  causes: [{name: switch, repair: hard}]\n"
                       "  repair: {hard: {dist: constant, value: 2h}}\noutput: {timeline_interval: 1h}\n";
    fs_config_t cfg;
    load(text, &cfg);
    fs_job_t jobs[12];
    for (uint32_t i = 0; i < 12; i++)
        jobs[i] = job(i + 1, 0, 8, 10 * DAY);
    res_t r;
    run(&cfg, 0, jobs, 12, &r);
    assert_int_equal(r.nf, 1);
    assert_int_equal(r.fails[0].component, FS_FAIL_LEAF);
    assert_int_equal(r.fails[0].unit, 1);    /* pool b's leaf */
    assert_int_equal(r.fails[0].nodes, 4);
    assert_int_equal(r.fails[0].jobs_hit, 4);
    assert_int_equal(r.fails[0].repair, FS_REPAIR_HARD);
    assert_double_equal(r.fails[0].repair_time, 2 * HOUR, 1e-9);
    size_t hit = 0;
    for (size_t i = 0; i < r.nj; i++) {
        int in_b = r.jobs[i].pool == 1;
        assert_int_equal(r.jobs[i].restarts, in_b ? 1 : 0);
        hit += in_b;
    }
    assert_int_equal(hit, 4);
    assert_int_equal(sample_at(&r, DAY + HOUR)->gpus_up, 8 * 8);
    assert_int_equal(sample_at(&r, DAY + 2 * HOUR)->gpus_up, 12 * 8);
    assert_int_equal(r.t.failures, 1);
    assert_int_equal(r.t.interruptions, 4);
    res_free(&r);
    fs_config_release(&cfg);
}

/* ---- 4. the llama3-h100 preset ---------------------------------------------------------- */

/* 24,576 H100 (3,072 nodes), one synchronous 16,384-GPU job, 54 days, 10
 * replications: interruptions per day of running time against 419 / 54. */
static void test_llama3_preset(void **s)
{
    (void)s;
    const char *text = "name: l3\nhorizon: 54d\nuntil: horizon\n"
                       "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 3072, gpus_per_node: 8}\n" WORK
                       "failures: {preset: llama3-h100}\noutput: {timeline_interval: 0s}\n";
    fs_config_t cfg;
    load(text, &cfg);
    enum { REPS = 10 };
    double per_day[REPS];
    fs_job_t j = job(1, 0, 16384, 1e9);
    for (int k = 0; k < REPS; k++) {
        res_t r;
        run(&cfg, (uint64_t)k, &j, 1, &r);
        const fs_job_row_t *row = find_job(&r, 1);
        per_day[k] = row->restarts / (row->run / DAY);
        res_free(&r);
    }
    fs_ci_t ci;
    assert_int_equal(fs_ci_t_interval(per_day, REPS, 0.95, &ci), 0);
    double want = 419.0 / 54.0;
    print_message("llama3-h100, 16,384-GPU job: %.2f interruptions/day, 95%% CI [%.2f, %.2f], "
                  "paper %.2f\n", ci.mean, ci.lo, ci.hi, want);
    assert_true(ci.lo <= want && want <= ci.hi);
    assert_true(fabs(ci.mean / want - 1) < 0.1);
    fs_config_release(&cfg);
}

/* ---- crews ----------------------------------------------------------------------------- */

/* 20 nodes failing every 2 days on average, repairs of exactly 1 day.
 * Unlimited crews: every repair_time is 1 day.  One crew (load 10): the
 * repairs end at least one day apart, a queue forms, and repair_time
 * includes the wait. */
#define CREWS_FMT "name: crews\nhorizon: 60d\nuntil: horizon\n" \
    "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 20, gpus_per_node: 8}\n" WORK \
    "failures:\n  components:\n    - {kind: node, tbf: {dist: exponential, mean: 2d}}\n" \
    "  repair: {soft: {dist: constant, value: 1d}, crews: %d}\n" \
    "output: {timeline_interval: 1h}\n"

static void test_crews(void **s)
{
    (void)s;
    char text[1024];
    fs_config_t cfg;
    res_t r;
    snprintf(text, sizeof text, CREWS_FMT, 0);
    load(text, &cfg);
    run(&cfg, 0, NULL, 0, &r);
    assert_true(r.nf > 100);
    for (size_t i = 0; i < r.nf; i++)
        assert_double_equal(r.fails[i].repair_time, DAY, 1e-6);
    uint32_t qmax = 0;
    for (size_t i = 0; i < r.ns; i++)
        qmax = r.smp[i].repair_queue > qmax ? r.smp[i].repair_queue : qmax;
    assert_int_equal(qmax, 0);
    res_free(&r);
    fs_config_release(&cfg);

    snprintf(text, sizeof text, CREWS_FMT, 1);
    load(text, &cfg);
    run(&cfg, 0, NULL, 0, &r);
    assert_true(r.nf >= 20);
    double *end = malloc(r.nf * sizeof *end);
    double wait = 0;
    for (size_t i = 0; i < r.nf; i++) {
        end[i] = r.fails[i].time + r.fails[i].repair_time;
        wait += r.fails[i].repair_time - DAY;
        assert_true(r.fails[i].repair_time >= DAY - 1e-6);
    }
    for (size_t i = 1; i < r.nf; i++)     /* first come, first served: ends in failure order */
        assert_true(end[i] - end[i - 1] >= DAY - 1e-6);
    for (size_t i = 0; i < r.ns; i++)
        qmax = r.smp[i].repair_queue > qmax ? r.smp[i].repair_queue : qmax;
    print_message("one crew: %zu failures, mean wait for the crew %.1f d, longest queue %u\n", r.nf,
                  wait / r.nf / DAY, qmax);
    assert_true(qmax > 5);
    free(end);
    res_free(&r);
    fs_config_release(&cfg);
}

/* ---- lemons ---------------------------------------------------------------------------- */

/* Two nodes failing every hour of uptime, soft repair 1 min, lemon after
 * 3 failures within a day: each node is up [0,1h), [1h01,2h01),
 * [2h02,3h02) and removed at 3h02.  Capacity 2 x 8 GPUs x 3 h. */
static void test_lemon(void **s)
{
    (void)s;
    const char *text = "name: lemon\nhorizon: 1d\nuntil: horizon\n"
                       "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 2, gpus_per_node: 8}\n" WORK
                       "failures:\n  components:\n    - {kind: node, tbf: {dist: constant, value: 1h}}\n"
                       "  repair: {soft: {dist: constant, value: 1m}}\n"
                       "  lemon: {after: 3, window: 1d}\noutput: {timeline_interval: 0s}\n";
    fs_config_t cfg;
    load(text, &cfg);
    res_t r;
    run(&cfg, 0, NULL, 0, &r);
    assert_int_equal(r.nf, 6);
    assert_int_equal(r.t.failures, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(r.fails[i].repair, i >= 4 ? FS_REPAIR_REMOVED : FS_REPAIR_SOFT);
        if (i >= 4)
            assert_true(isnan(r.fails[i].repair_time));
    }
    assert_double_equal(r.fails[5].time, 3 * HOUR + 120, 1e-6);
    assert_double_equal(r.t.gpu_s_capacity, 2 * 8 * 3 * HOUR, 1e-6);
    res_free(&r);
    fs_config_release(&cfg);
}

/* ---- stragglers ------------------------------------------------------------------------- */

/* 200 nodes, 10% slow at 0.5x.  Found (health check every 5 min): each is
 * drained at 5 min and repaired (soft, 30 min) at once, being idle; a row
 * per node.  Not found: no row, and a job on a slow node runs at half
 * speed. */
#define STRAGGLERS_FMT "name: slow\nhorizon: 2h\nuntil: horizon\n" \
    "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 200, gpus_per_node: 8}\n" WORK \
    "scheduler: {placement: first_fit}\n" \
    "failures:\n  stragglers: {fraction: 0.1, factor: 0.5, detect: %s}\n" \
    "  repair: {soft: {dist: constant, value: 30m}}\noutput: {timeline_interval: 10m}\n"

static void test_stragglers(void **s)
{
    (void)s;
    char text[1024];
    fs_config_t cfg;
    res_t r;
    snprintf(text, sizeof text, STRAGGLERS_FMT, "true");
    load(text, &cfg);
    run(&cfg, 0, NULL, 0, &r);
    assert_true(r.nf > 10 && r.nf < 30);
    for (size_t i = 0; i < r.nf; i++) {
        assert_string_equal(r.fails[i].cause, "straggler");
        assert_double_equal(r.fails[i].time, 300, 1e-9);
        assert_double_equal(r.fails[i].repair_time, 1800, 1e-9);
    }
    assert_int_equal(sample_at(&r, 600)->nodes_down, r.nf);
    assert_int_equal(sample_at(&r, 1800)->nodes_down, r.nf);
    assert_int_equal(sample_at(&r, 1800)->gpus_up, 8 * (200 - r.nf));
    assert_int_equal(sample_at(&r, 2400)->nodes_down, 0);
    print_message("stragglers: %zu of 200 nodes slow, found at 5 min, back at 35 min\n", r.nf);
    res_free(&r);
    fs_config_release(&cfg);

    snprintf(text, sizeof text, STRAGGLERS_FMT, "false");
    load(text, &cfg);
    fs_job_t jobs[200];
    for (uint32_t i = 0; i < 200; i++)
        jobs[i] = job(i + 1, 0, 8, 1800);
    run(&cfg, 0, jobs, 200, &r);
    assert_int_equal(r.nf, 0);
    size_t slow = 0;
    for (size_t i = 0; i < r.nj; i++) {
        double run_s = r.jobs[i].run;
        assert_true(fabs(run_s - 1800) < 1e-3 || fabs(run_s - 3600) < 1e-3);
        slow += run_s > 2700;
    }
    assert_true(slow > 10 && slow < 30);
    res_free(&r);
    fs_config_release(&cfg);
}

/* ---- the rack cordon rule --------------------------------------------------------------- */

/* Racks of 4 nodes, trays_down 1.  Node 0 out [1h, 3h), node 1 out
 * [2h, 4h): from 2h two nodes of rack 0 are out, more than 1, so the
 * whole rack is cordoned until 3h. */
static void test_rack_cordon(void **s)
{
    (void)s;
    const char *text = "name: cordon\nhorizon: 5h\nuntil: horizon\n"
                       "cluster:\n  pools:\n    - {name: p, gpu: B200, nodes: 8, gpus_per_node: 4}\n"
                       "  topology: {nodes_per_rack: 4}\n" WORK
                       "failures:\n  rack_cordon: {trays_down: 1}\n  planned:\n"
                       "    - {at: 1h, kind: node, unit: 0, duration: 2h}\n"
                       "    - {at: 2h, kind: node, unit: 1, duration: 2h}\n"
                       "output: {timeline_interval: 30m}\n";
    fs_config_t cfg;
    load(text, &cfg);
    res_t r;
    run(&cfg, 0, NULL, 0, &r);
    assert_int_equal(sample_at(&r, 0.5 * HOUR)->gpus_up, 32);
    assert_int_equal(sample_at(&r, 1.5 * HOUR)->gpus_up, 28);
    assert_int_equal(sample_at(&r, 2.5 * HOUR)->gpus_up, 16);   /* rack 0 cordoned */
    assert_int_equal(sample_at(&r, 2.5 * HOUR)->nodes_down, 4);
    assert_int_equal(sample_at(&r, 3.5 * HOUR)->gpus_up, 28);
    assert_int_equal(sample_at(&r, 4.5 * HOUR)->gpus_up, 32);
    res_free(&r);
    fs_config_release(&cfg);

    /* off: only the two nodes */
    load(text, &cfg);
    cfg.failures.rack_cordon = 0;
    run(&cfg, 0, NULL, 0, &r);
    assert_int_equal(sample_at(&r, 2.5 * HOUR)->gpus_up, 24);
    res_free(&r);
    fs_config_release(&cfg);
}

/* ---- spares ---------------------------------------------------------------------------- */

/* 10 nodes, the last 2 hot spares (out of service).  Nodes fail (mean 30
 * d), hard repair 20 d, swap 10 min: after each failure of a serving node
 * a spare serves 10 min later, as long as there is one; a repaired node
 * becomes a spare (or serves at once where one is owed). */
static void test_spares(void **s)
{
    (void)s;
    const char *text = "name: spares\nhorizon: 30d\nuntil: horizon\n"
                       "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 10, gpus_per_node: 8}\n" WORK
                       "failures:\n  components:\n    - {kind: node, tbf: {dist: exponential, mean: 30d}}\n"
                       "  causes: [{name: node, repair: hard}]\n"
                       "  repair: {hard: {dist: constant, value: 20d}}\n"
                       "  spares: {nodes: 2, swap_time: 10m}\noutput: {timeline_interval: 1m}\n";
    fs_config_t cfg;
    load(text, &cfg);
    res_t r;
    run(&cfg, 0, NULL, 0, &r);
    assert_int_equal(sample_at(&r, 0)->gpus_up, 8 * 8);
    assert_true(r.nf >= 3);
    /* replay the spare rule from the rows until the first repair ends */
    int serving = 8, owed = 0, checked = 0, idle[2] = {8, 9}, n_idle = 2;
    double horizon = r.fails[0].time + 20 * DAY;
    for (size_t i = 0; i < r.nf && r.fails[i].time < horizon; i++) {
        const fs_failure_row_t *f = &r.fails[i];
        int quiet = (i == 0 || r.fails[i - 1].time < f->time - 900) &&
                    (i + 1 == r.nf || r.fails[i + 1].time > f->time + 900);
        int k = -1;
        for (int q = 0; q < n_idle; q++)
            if (idle[q] == (int)f->unit)
                k = q;
        if (k >= 0) {   /* an idle spare broke */
            idle[k] = idle[--n_idle];
            continue;
        }
        double t = ceil(f->time / 60) * 60;   /* the next sample */
        serving--;
        if (quiet)
            assert_int_equal(sample_at(&r, t + 60)->gpus_up, 8 * serving);
        if (n_idle > 0) {
            n_idle--;       /* the last pushed spare goes first */
            serving++;
        } else {
            owed++;
        }
        if (quiet) {
            assert_int_equal(sample_at(&r, t + 660)->gpus_up, 8 * serving);
            checked++;
        }
    }
    print_message("spares: %zu failures, %d checked one by one, %d owed at the end\n", r.nf,
                  checked, owed);
    assert_true(checked >= 2);
    res_free(&r);
    fs_config_release(&cfg);
}

/* GPU and host failures, several outages per node at once: a serving node
 * takes one spare however many of its parts are out, so at most 8 of the
 * 10 nodes ever serve (nodes_down >= 2 at every sample), and every node is
 * back, serving or spare, once all repairs are done. */
static void test_spares_many_outages(void **s)
{
    (void)s;
    const char *text = "name: spares2\nhorizon: 400d\nuntil: horizon\n"
                       "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 10, gpus_per_node: 8}\n" WORK
                       "failures:\n  components:\n"
                       "    - {kind: gpu, tbf: {dist: exponential, mean: 80d}, causes: {g: 1}}\n"
                       "    - {kind: node, tbf: {dist: exponential, mean: 20d}, causes: {h: 0.5, s: 0.5}}\n"
                       "  causes: [{name: g, repair: hard}, {name: h, repair: hard}, {name: s, repair: soft}]\n"
                       "  repair: {hard: {dist: exponential, mean: 3d}}\n"
                       "  lemon: {after: 4, window: 5d, action: hard}\n"
                       "  spares: {nodes: 2, swap_time: 10m}\noutput: {timeline_interval: 1h}\n";
    fs_config_t cfg;
    load(text, &cfg);
    res_t r;
    run(&cfg, 0, NULL, 0, &r);
    assert_true(r.nf > 300);
    uint32_t min_down = 10, max_down = 0;
    for (size_t i = 0; i < r.ns; i++) {
        min_down = r.smp[i].nodes_down < min_down ? r.smp[i].nodes_down : min_down;
        max_down = r.smp[i].nodes_down > max_down ? r.smp[i].nodes_down : max_down;
    }
    print_message("spares, several outages per node: %zu failures, nodes down %u..%u\n", r.nf,
                  min_down, max_down);
    assert_int_equal(min_down, 2);
    assert_true(max_down > 2);
    res_free(&r);
    fs_config_release(&cfg);
}

/* ---- the end of a drain run ---------------------------------------------------------------- */

/* until: drain with failures that never stop: the run ends with its last
 * job (10 jobs of 1 h on 4 nodes failing daily, 10-day repairs), not with
 * the last repair or failure. */
static void test_drain_ends(void **s)
{
    (void)s;
    const char *text = "name: drain\nhorizon: 2h\nuntil: drain\n"
                       "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 4, gpus_per_node: 8}\n" WORK
                       "failures:\n  components:\n    - {kind: node, tbf: {dist: exponential, mean: 1d}}\n"
                       "  repair: {default: hard, hard: {dist: constant, value: 10d}}\n"
                       "output: {timeline_interval: 0s}\n";
    fs_config_t cfg;
    load(text, &cfg);
    fs_job_t jobs[10];
    for (uint32_t i = 0; i < 10; i++)
        jobs[i] = job(i + 1, 60.0 * i, 8, HOUR);
    res_t r;
    run(&cfg, 0, jobs, 10, &r);
    double last = 0;
    for (size_t i = 0; i < r.nj; i++) {
        assert_int_equal(r.jobs[i].state, FS_STATE_COMPLETED);
        last = r.jobs[i].end > last ? r.jobs[i].end : last;
    }
    assert_int_equal(r.nj, 10);
    assert_true(r.t.end_time <= last + 1e-6);
    res_free(&r);
    fs_config_release(&cfg);
}

/* ---- infant mortality --------------------------------------------------------------------- */

/* 2,000 nodes, exponential mean 100 d, failures with nothing to repair
 * (path none: the hardware is not renewed): the hazard is 3x in the first
 * 30 days.  Expected failures: 2,000 x 30/100 x 3 = 1,800 in [0, 30 d) and
 * 600 in [30 d, 60 d); Poisson counts, 4 sd. */
static void test_infant(void **s)
{
    (void)s;
    const char *text = "name: infant\nhorizon: 60d\nuntil: horizon\n"
                       "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 2000, gpus_per_node: 8}\n" WORK
                       "failures:\n  components:\n    - {kind: node, tbf: {dist: exponential, mean: 100d}}\n"
                       "  repair: {default: none}\n  infant: {factor: 3, period: 30d}\n"
                       "output: {timeline_interval: 0s}\n";
    fs_config_t cfg;
    load(text, &cfg);
    res_t r;
    run(&cfg, 0, NULL, 0, &r);
    double early = 0, late = 0;
    for (size_t i = 0; i < r.nf; i++) {
        assert_int_equal(r.fails[i].repair, FS_REPAIR_NONE);
        if (r.fails[i].time < 30 * DAY)
            early++;
        else
            late++;
    }
    print_message("infant mortality x3 for 30 d: %.0f failures in the first 30 d (expected 1800), "
                  "%.0f in the next 30 d (expected 600)\n", early, late);
    assert_true(fabs(early - 1800) < 4 * sqrt(1800));
    assert_true(fabs(late - 600) < 4 * sqrt(600));
    res_free(&r);
    fs_config_release(&cfg);
}

/* ---- determinism ------------------------------------------------------------------------ */

#define KEYED_DRAWS_FMT "name: k\nhorizon: 200d\nuntil: horizon\n" \
    "cluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 64, gpus_per_node: 8}\n" \
    "  topology: {nodes_per_rack: 4, racks_per_leaf: 4}\n" WORK \
    "failures:\n  components:\n" \
    "    - {kind: gpu, tbf: {dist: weibull, shape: 0.8, mean: 300d}, causes: {a: 0.5, b: 0.5}}\n" \
    "%s  causes: [{name: a, repair: hard}]\n"

static void test_keyed_draws(void **s)
{
    (void)s;
    char t1[1024], t2[1024];
    snprintf(t1, sizeof t1, KEYED_DRAWS_FMT, "");
    snprintf(t2, sizeof t2, KEYED_DRAWS_FMT, "    - {kind: leaf, tbf: {dist: exponential, mean: 20d}}\n");
    fs_config_t c1, c2;
    load(t1, &c1);
    load(t2, &c2);
    res_t a, b, a2;
    fs_job_t jobs[4] = {job(1, 0, 64, 30 * DAY), job(2, 0, 8, 60 * DAY), job(3, 1, 128, 90 * DAY),
                        job(4, 2, 1, 5 * DAY)};
    run(&c1, 0, jobs, 4, &a);
    run(&c1, 0, jobs, 4, &a2);
    run(&c2, 0, jobs, 4, &b);
    assert_true(a.nf > 50);
    assert_int_equal(a.nf, a2.nf);
    assert_memory_equal(a.fails, a2.fails, a.nf * sizeof *a.fails);
    assert_true(b.nf > a.nf);
    /* GPU failure times and causes do not depend on the leaf process */
    size_t j = 0;
    for (size_t i = 0; i < a.nf; i++) {
        while (j < b.nf && b.fails[j].component != FS_FAIL_GPU)
            j++;
        assert_true(j < b.nf);
        assert_int_equal(a.fails[i].unit, b.fails[j].unit);
        assert_string_equal(a.fails[i].cause, b.fails[j].cause);
        assert_double_equal(a.fails[i].time, b.fails[j].time, 0);
        assert_double_equal(a.fails[i].repair_time, b.fails[j].repair_time, 0);
        j++;
    }
    res_free(&a);
    res_free(&a2);
    res_free(&b);
    fs_config_release(&c1);
    fs_config_release(&c2);
}

/* ---- scenario errors -------------------------------------------------------------------- */

static void expect_error(const char *fail_block, const char *want)
{
    char text[2048];
    snprintf(text, sizeof text,
             "name: e\ncluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 4, gpus_per_node: 8}\n" WORK
             "failures:\n%s",
             fail_block);
    fs_config_t cfg;
    fs_error_t err;
    int rc = fs_scenario_load_string("e.yaml", text, NULL, 0, &cfg, &err);
    assert_int_equal(rc, FS_EINVAL);
    if (!strstr(err.msg, want))
        fail_msg("expected '%s' in: %s", want, err.msg);
}

static void test_errors(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    expect_error("  components:\n    - {kind: node, pool: q, tbf: {dist: exponential, mean: 1d}}\n",
                 "e.yaml:12:26:");
    expect_error("  components:\n    - {kind: node, pool: q, tbf: {dist: exponential, mean: 1d}}\n",
                 "failures.components.0.pool: no pool named 'q'");
    expect_error("  components:\n    - {kind: node, tbf: {dist: exponential, mean: 1d},"
                 " causes: {a_very_long_cause_name_indeed: 1}}\n", "longer than 23");
    expect_error("  preset: bloom\n  spares: {nodes: 1, fraction: 0.1}\n", "not both");
    expect_error("  spares: {nodes: 4}\n  preset: opt\n", "none in service");
    expect_error("  components:\n    - {kind: switch, tbf: {dist: exponential, mean: 1d}}\n",
                 "'switch' is not one of");
    expect_error("  causes: [{name: a, repair: soft}, {name: a, repair: hard}]\n  preset: opt\n",
                 "already listed");
    /* a cause needs a repair path or an Xid that gives one; an Xid must be known */
    expect_error("  components:\n    - {kind: gpu, tbf: {dist: exponential, mean: 1d}, causes: {a: 1}}\n"
                 "  causes: [{name: a}]\n",
                 "failures.causes.0: cause 'a' needs a repair path (repair: soft, hard or none) or an "
                 "xid");
    expect_error("  causes: [{name: a, xid: 47}]\n",
                 "failures.causes.0.xid: Xid 47 is not in fleetsim's catalog (known: 8, 13, 31,");
    expect_error("  causes: [{name: a, xid: 47}]\n", "e.yaml:11:27:");
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- Xid causes ------------------------------------------------------------------------ */

/* GPU failures drawn among four Xid causes: each row records its cause's
 * Xid, and the repair path is the catalog action's (48 reset -> soft, 79
 * reboot -> soft, 13 restart the app -> none, 64 contact support -> hard)
 * unless the cause names one (repair: hard on 74).  The shares are kept
 * within a binomial tolerance. */
static void test_xid_causes(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    load("name: x\nhorizon: 60d\nuntil: horizon\ncluster:\n  pools:\n"
         "    - {name: p, gpu: H100, nodes: 16, gpus_per_node: 8}\n" WORK
         "failures:\n  components:\n"
         "    - {kind: gpu, tbf: {dist: exponential, mean: 20d},"
         " causes: {dbe: 0.3, offbus: 0.2, app: 0.2, rma: 0.2, nvlink: 0.1}}\n"
         "  causes:\n    - {name: dbe, xid: 48}\n    - {name: offbus, xid: 79}\n"
         "    - {name: app, xid: 13}\n    - {name: rma, xid: 64}\n"
         "    - {name: nvlink, xid: 74, repair: hard}\n",
         &cfg);
    res_t r;
    run(&cfg, 0, NULL, 0, &r);
    static const struct {
        const char *cause;
        uint32_t xid;
        int repair;
        double share;
    } want[] = {{"dbe", 48, FS_REPAIR_SOFT, 0.3}, {"offbus", 79, FS_REPAIR_SOFT, 0.2},
                {"app", 13, FS_REPAIR_NONE, 0.2}, {"rma", 64, FS_REPAIR_HARD, 0.2},
                {"nvlink", 74, FS_REPAIR_HARD, 0.1}};
    size_t count[5] = {0};
    assert_true(r.nf > 300);
    for (size_t i = 0; i < r.nf; i++) {
        size_t k = 0;
        while (k < 5 && strcmp(r.fails[i].cause, want[k].cause) != 0)
            k++;
        if (k == 5)
            fail_msg("row %zu: cause '%s'", i, r.fails[i].cause);
        assert_int_equal(r.fails[i].xid, want[k].xid);
        assert_int_equal(r.fails[i].repair, want[k].repair);
        count[k]++;
    }
    for (size_t k = 0; k < 5; k++) {
        double p = want[k].share, sd = sqrt(p * (1 - p) / (double)r.nf);
        double got = (double)count[k] / (double)r.nf;
        if (fabs(got - p) > 4 * sd)
            fail_msg("%s: share %.3f, expected %.3f +- %.3f", want[k].cause, got, p, 4 * sd);
    }
    res_free(&r);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Every failures key survives the canonical dump: load, dump, load the
 * dump, dump again: the same text. */
static void test_dump_round_trip(void **s)
{
    (void)s;
    const char *text = "name: d\ncluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 40, gpus_per_node: 8}\n"
                       "    - {name: q, gpu: A100, nodes: 8, gpus_per_node: 8}\n" WORK
                       "failures:\n  preset: meta-rsc\n"
                       "  components:\n    - {kind: gpu, pool: q, tbf: {dist: weibull, shape: 0.7, mean: 900d},"
                       " causes: {xid79: 0.25, hbm: 0.75}}\n"
                       "  causes: [{name: xid79, repair: hard, time: {dist: lognormal, median: 2d, sigma: 1}}]\n"
                       "  repair: {soft: {dist: exponential, mean: 20m}, crews: 3, default: hard}\n"
                       "  infant: {factor: 3, period: 20d}\n  lemon: {after: 3, window: 10d, action: hard}\n"
                       "  stragglers: {fraction: 0.02, factor: 0.8, detect: false}\n"
                       "  health_check: {interval: 10m}\n  rack_cordon: {trays_down: 2}\n"
                       "  spares: {fraction: 0.05, swap_time: 3m}\n"
                       "  planned: [{at: 2d, kind: leaf, unit: 0, duration: 4h, how: drain, cause: fw}]\n";
    fs_config_t c1, c2;
    load(text, &c1);
    char *d1 = fs_scenario_dump(&c1);
    assert_non_null(d1);
    assert_non_null(strstr(d1, "xid79"));
    assert_non_null(strstr(d1, "meta-rsc"));
    load(d1, &c2);
    char *d2 = fs_scenario_dump(&c2);
    assert_string_equal(d1, d2);
    assert_int_equal(c2.failures.n_components, 1);
    assert_int_equal(c2.failures.components[0].kind, FS_FAIL_GPU);
    assert_int_equal(c2.failures.crews, 3);
    assert_int_equal(c2.failures.planned[0].how, FS_PLANNED_DRAIN);
    fs_free(d1);
    fs_free(d2);
    fs_config_release(&c1);
    fs_config_release(&c2);
}

/* A planned outage's unit beyond the fleet is refused when the model is
 * built (units depend on the topology). */
static void test_planned_unit_range(void **s)
{
    (void)s;
    const char *text = "name: r\ncluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 4, gpus_per_node: 8}\n" WORK
                       "failures:\n  planned: [{at: 1h, kind: rack, unit: 4, duration: 1h}]\n";
    fs_config_t cfg;
    fs_error_t err;
    /* the loader refuses it at the key (as validate does) */
    assert_int_equal(fs_scenario_load_string("t.yaml", text, NULL, 0, &cfg, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:11:40: "));
    assert_non_null(strstr(err.msg, "failures.planned.0.unit: 4 is out of range"));
    /* and a configuration built in C is refused when the model attaches */
    const char *ok = "name: r\ncluster:\n  pools:\n    - {name: p, gpu: H100, nodes: 4, gpus_per_node: 8}\n" WORK
                     "failures:\n  planned: [{at: 1h, kind: rack, unit: 3, duration: 1h}]\n";
    load(ok, &cfg);
    cfg.failures.planned[0].unit = 4;
    fs_source_t *src;
    fs_model_t *m;
    assert_int_equal(fs_memsrc_create(NULL, 0, NULL, 0, NULL, 0, &src, &err), 0);
    assert_int_equal(fs_model_create(&cfg, fs_policy_select(&cfg.scheduler),
                                     src, NULL, &m, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "failures.planned.0.unit: 4 is out of range"));
    fs_source_destroy(src);
    fs_config_release(&cfg);
}

/* Xid bursts (fs_xid_burst): an uncorrectable memory error is followed by
 * 63 (row remapping pending until a reset), a fault that ends applications
 * by 45 where a job held the GPU; informational codes by nothing. */
static void test_xid_bursts(void **s)
{
    (void)s;
    uint32_t f[2];
    assert_int_equal(fs_xid_burst(48, 1, f), 2);
    assert_int_equal(f[0], 63);
    assert_int_equal(f[1], 45);
    assert_int_equal(fs_xid_burst(48, 0, f), 1);
    assert_int_equal(f[0], 63);
    assert_int_equal(fs_xid_burst(95, 1, f), 2);
    assert_int_equal(fs_xid_burst(94, 1, f), 2);
    assert_int_equal(fs_xid_burst(79, 1, f), 1);
    assert_int_equal(f[0], 45);
    assert_int_equal(fs_xid_burst(79, 0, f), 0);
    assert_int_equal(fs_xid_burst(92, 1, f), 0);    /* IGNORE: monitor */
    assert_int_equal(fs_xid_burst(45, 1, f), 0);
    assert_int_equal(fs_xid_burst(7, 1, f), 0);     /* not in the catalog */
    assert_true(fs_xid_is_dbe(48) && fs_xid_is_dbe(94) && fs_xid_is_dbe(95));
    assert_false(fs_xid_is_dbe(63) || fs_xid_is_dbe(92) || fs_xid_is_dbe(45));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_availability_exponential),
        cmocka_unit_test(test_availability_lognormal),
        cmocka_unit_test(test_job_size_scaling),
        cmocka_unit_test(test_leaf_planned),
        cmocka_unit_test(test_leaf_component),
        cmocka_unit_test(test_llama3_preset),
        cmocka_unit_test(test_crews),
        cmocka_unit_test(test_lemon),
        cmocka_unit_test(test_stragglers),
        cmocka_unit_test(test_rack_cordon),
        cmocka_unit_test(test_spares),
        cmocka_unit_test(test_spares_many_outages),
        cmocka_unit_test(test_infant),
        cmocka_unit_test(test_drain_ends),
        cmocka_unit_test(test_keyed_draws),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_xid_causes),
        cmocka_unit_test(test_xid_bursts),
        cmocka_unit_test(test_dump_round_trip),
        cmocka_unit_test(test_planned_unit_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
