/*
 * Queueing, preemption and per-tenant accounting (issue 13):
 *   - queued_s of /jobs: all time queued (first wait, then after each
 *     preemption), by hand on one GPU under SRTF; its mean and quantiles
 *     in the summary;
 *   - preemptions are counted and priced on their own, never as failures
 *     (cost_failures 0, cost_preemptions = lost GPU-hours x the unit cost);
 *   - per-tenant wait p50/p95/p99, JCT mean/p95, preemptions and GPU-hours
 *     lost to them (fs_stats) against hand-computed type-7 quantiles.
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

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "fs_test_util.h"
#include "analysis/fs_stats.h"
#include "analysis/fs_tenants.h"
#include "models/fs_cost.h"
#include "models/fs_policy.h"
#include "traces/fs_remap.h"
#include "traces/fs_trace.h"
#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"

static char *g_dir;

typedef struct rows {
    fs_job_row_t *r;
    size_t n, cap;
} rows_t;

static int keep_row(void *ud, const fs_job_row_t *row)
{
    rows_t *rs = ud;
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? 2 * rs->cap : 16;
        rs->r = realloc(rs->r, rs->cap * sizeof *rs->r);
        if (!rs->r)
            return FS_ENOMEM;
    }
    rs->r[rs->n++] = *row;
    return 0;
}

static const fs_job_row_t *find(const rows_t *rs, uint64_t id)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->r[i].id == id)
            return &rs->r[i];
    return NULL;
}

/* yaml with its one "@TRACE@" replaced by path, into buf. */
static void subst(char *buf, size_t cap, const char *yaml, const char *path)
{
    const char *at = strstr(yaml, "@TRACE@");
    assert_non_null(at);
    snprintf(buf, cap, "%.*s%s%s", (int)(at - yaml), yaml, path, at + strlen("@TRACE@"));
}

/* Writes trace text to DIR/trace.csv and runs yaml (@TRACE@ = that path). */
static int run_yaml(const char *yaml_fmt, const char *trace, rows_t *rows, fs_run_report_t *rep,
                    fs_error_t *err)
{
    char *tp = fs_test_path(g_dir, "trace.csv");
    assert_int_equal(fs_test_write(tp, trace), 0);
    char yaml[2048];
    subst(yaml, sizeof yaml, yaml_fmt, tp);
    free(tp);
    fs_config_t cfg;
    int rc = fs_scenario_load_string("<tenants>", yaml, NULL, 0, &cfg, err);
    if (rc)
        return rc;
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    opts.on_job = keep_row;
    opts.on_job_ud = rows;
    rows->n = 0;
    rc = fs_run_config(&cfg, &opts, rep, err);
    fs_config_release(&cfg);
    return rc;
}

#define SRTF_1GPU                                                                      \
    "name: t\nseed: 1\n"                                                               \
    "cluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 1}]}\n"          \
    "workload: {trace: {path: '@TRACE@', format: native}}\n"                                \
    "scheduler: {queue: srtf, runtime: oracle}\n"                                      \
    "output: {timeline_interval: 0s}\n"

/* One GPU, SRTF.  A (tenant a, 0 s, 10 s), B (tenant b, 2 s, 3 s), C
 * (tenant a, 6 s, 1 s).  B preempts A at 2 (A loses 2 s of work), runs
 * 2-5; A restarts at 5 (10 s left); C (1 s) preempts A at 6 (1 s lost),
 * runs 6-7; A restarts at 7, ends 17.  Queued: A 0 + (5-2) + (7-6) = 4 s,
 * B 0, C 0; wait is 0 for all three.  Preemptions 2, lost 3 GPU-s. */
static void test_queued_and_preemptions(void **st)
{
    (void)st;
    rows_t rows = {0};
    fs_run_report_t rep;
    fs_error_t err;
    int rc = run_yaml(SRTF_1GPU, "submit,id,duration,gpus,tenant\n0,1,10,1,a\n2,2,3,1,b\n"
                                 "6,3,1,1,a\n", &rows, &rep, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(rows.n, 3);
    const fs_job_row_t *a = find(&rows, 1), *b = find(&rows, 2), *c = find(&rows, 3);
    assert_double_equal(a->end, 17, 1e-9);
    assert_double_equal(a->wait, 0, 0);
    assert_double_equal(a->queued_s, 4, 1e-9);
    assert_int_equal(a->preemptions, 2);
    assert_int_equal(a->restarts, 2);
    assert_double_equal(a->preempt_lost_gpu_s, 3, 1e-9);
    assert_double_equal(a->lost_gpu_s, 3, 1e-9);
    assert_double_equal(b->queued_s, 0, 0);
    assert_int_equal(b->preemptions, 0);
    assert_double_equal(c->queued_s, 0, 0);

    const fs_summary_t *s = &rep.summary;
    assert_double_equal(s->wait_mean, 0, 0);
    assert_double_equal(s->queued_mean, 4.0 / 3.0, 1e-12);
    assert_double_equal(s->queued_p50, 0, 0);
    assert_double_equal(s->queued_p95, 4 * 0.9, 1e-12);    /* type 7: 0, 0, 4 */
    assert_double_equal(s->queued_p99, 4 * 0.98, 1e-12);
    assert_true(fs_run_queued_differs(s));
    assert_int_equal(s->preemptions, 2);
    assert_double_equal(s->gpu_s_lost_preempt, 3, 1e-9);
    assert_double_equal(s->gpu_s_lost, 3, 1e-9);
    /* preemption is not failure: priced on its own */
    assert_int_equal(s->failures, 0);
    assert_double_equal(s->cost_failures, 0, 0);
    assert_true(s->cost_preemptions > 0);
    /* lost GPU-hours x the pool's cost per delivered GPU-hour (one pool,
     * owned: the total over the busy GPU-hours) */
    assert_double_equal(s->cost_preemptions, 3.0 / 3600 * s->cost_per_gpu_hour, 1e-12);

    /* the printed summary shows both lines, and "failures $0" */
    char *out = fs_test_path(g_dir, "summary.txt");
    FILE *f = fopen(out, "w+");
    assert_non_null(f);
    fs_config_t cfg;
    char yaml[1024];
    subst(yaml, sizeof yaml, SRTF_1GPU, "x.csv");
    assert_int_equal(fs_scenario_load_string("<tenants>", yaml, NULL, 0, &cfg, &err), 0);
    fs_run_print_summary(f, &cfg, &rep, NULL);
    fs_config_release(&cfg);
    fclose(f);
    char *text = fs_test_read(out, NULL);
    assert_non_null(strstr(text, "\nqueued       mean 1.3 s   p50 0.0 s   p95 3.6 s   p99 3.9 s"));
    assert_non_null(strstr(text, "\npreemption   2 preemptions (not failures), 0.0 GPU-h"));
    assert_non_null(strstr(text, "failures $0;"));
    free(text);
    free(out);
    free(rows.r);
}

/* Without preemption the queued line is not printed (the figures equal
 * the wait's). */
static void test_queued_equals_wait_without_preemption(void **st)
{
    (void)st;
    rows_t rows = {0};
    fs_run_report_t rep;
    fs_error_t err;
    const char *fifo = "name: t\nseed: 1\n"
                       "cluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 1}]}\n"
                       "workload: {trace: {path: '@TRACE@', format: native}}\n"
                       "output: {timeline_interval: 0s}\n";
    int rc = run_yaml(fifo, "submit,id,duration,gpus,tenant\n0,1,10,1,a\n2,2,3,1,b\n", &rows,
                      &rep, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_double_equal(find(&rows, 2)->queued_s, 8, 1e-9);
    assert_double_equal(find(&rows, 2)->wait, 8, 1e-9);
    assert_false(fs_run_queued_differs(&rep.summary));
    assert_int_equal(rep.summary.preemptions, 0);
    assert_double_equal(rep.summary.cost_preemptions, 0, 0);
    free(rows.r);
}

static fs_job_row_t row(int32_t tenant, double submit, double wait, double run, int done,
                        uint32_t preempt, double plost)
{
    fs_job_row_t r;
    memset(&r, 0, sizeof r);
    r.tenant = tenant;
    r.gpus = 2;
    r.gpu_milli = 1000;
    r.submit = submit;
    r.wait = wait;
    r.start = submit + wait;
    r.run = run;
    r.end = done ? r.start + run : NAN;
    r.state = done ? FS_STATE_COMPLETED : FS_STATE_RUNNING;
    r.queued_s = wait + 5.0 * preempt;
    r.preemptions = preempt;
    r.preempt_lost_gpu_s = plost;
    r.lost_gpu_s = plost;
    return r;
}

/* Tenant 3: waits 0, 10, 20, 30, 40 (type-7 p50 20, p95 38, p99 39.6),
 * JCTs of the four completed: 110, 120, 120, 130 -> mean 120, p95 128.5;
 * 3 preemptions losing 7200 GPU-s = 2 GPU-h.  Tenant 1: one job.  A job
 * submitted before warm-up (10 s) counts in jobs, GPU-hours and
 * preemptions but not in waits. */
static void test_tenant_quantiles(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_stats_t *s;
    assert_int_equal(fs_stats_create(10, &s), 0);
    const fs_job_row_t rs[] = {
        row(3, 10, 40, 90, 1, 0, 0),   row(3, 20, 0, 110, 1, 1, 3600),
        row(3, 30, 30, 60, 0, 0, 0),   row(3, 40, 20, 100, 1, 2, 3600),
        row(3, 50, 10, 110, 1, 0, 0),  row(1, 60, 7, 3600, 1, 0, 0),
        row(3, 0, 1000, 10, 1, 5, 0),  /* before warm-up */
    };
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
        assert_int_equal(fs_stats_add_job(s, &rs[i]), 0);
    fs_run_totals_t t;
    memset(&t, 0, sizeof t);
    t.end_time = 5000;
    t.jobs_submitted = 7;
    fs_summary_t sum;
    assert_int_equal(fs_stats_finish(s, &t, &sum), 0);
    size_t n;
    const fs_tenant_row_t *tr = fs_stats_tenants(s, &n);
    assert_int_equal(n, 2);
    assert_int_equal(tr[0].tenant, 1);
    assert_double_equal(tr[0].wait_p50, 7, 0);
    assert_double_equal(tr[0].wait_p99, 7, 0);
    assert_double_equal(tr[0].jct_mean, 3607, 1e-9);
    assert_int_equal(tr[0].preemptions, 0);
    assert_true(isnan(tr[0].borrowed_gpu_hours));   /* no quotas in this run */
    const fs_tenant_row_t *x = &tr[1];
    assert_int_equal(x->tenant, 3);
    assert_int_equal(x->jobs, 6);
    assert_double_equal(x->wait_mean, 20, 1e-12);
    assert_double_equal(x->wait_p50, 20, 1e-12);
    assert_double_equal(x->wait_p95, 38, 1e-12);
    assert_double_equal(x->wait_p99, 39.6, 1e-12);
    /* JCT = wait + run: 130, 110, 120, 120 -> sorted 110, 120, 120, 130 */
    assert_double_equal(x->jct_mean, 120, 1e-12);
    assert_double_equal(x->jct_p95, 120 + 0.85 * 10, 1e-9);
    assert_double_equal(x->queued_mean, 20 + 5.0 * 3 / 5, 1e-12);
    assert_int_equal(x->preemptions, 8);
    assert_double_equal(x->preempt_lost_gpu_hours, 2, 1e-12);
    assert_double_equal(x->gpu_hours, 2.0 * (90 + 110 + 60 + 100 + 110 + 10) / 3600, 1e-12);
    fs_stats_destroy(s);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The selection quantile (per-tenant figures, queued_*) equals GSL's
 * sorted-data quantile bit for bit: sizes 1-300, with ties, at the
 * fractions used and others. */
static void test_quantile_select_equals_sorted(void **st)
{
    (void)st;
    static double a[300], b[300];
    static const double fs[] = {0, 0.01, 0.5, 0.95, 0.99, 1, 0.333};
    uint64_t x = 88172645463325252ull;
    for (size_t n = 1; n <= 300; n += (n < 20 ? 1 : 17)) {
        for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                a[i] = (double)(x % 1000) / (i % 3 ? 7.0 : 1.0);   /* ties and fractions */
            }
            memcpy(b, a, n * sizeof *a);
            gsl_sort(b, 1, n);
            double want = gsl_stats_quantile_from_sorted_data(b, 1, n, fs[k]);
            double got = fs_stats_quantile_select(a, n, fs[k]);
            if (memcmp(&want, &got, sizeof got) != 0)
                fail_msg("n %zu f %g: select %.17g, sorted %.17g", n, fs[k], got, want);
        }
    }
    assert_true(isnan(fs_stats_quantile_select(a, 0, 0.5)));
}

/* Allocation failures at every allocation of fs_stats_add_job leave the
 * accumulator as it was: the tenant rows match a run without failures. */
static void test_tenant_out_of_memory(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_stats_t *ref, *s;
    assert_int_equal(fs_stats_create(0, &ref), 0);
    assert_int_equal(fs_stats_create(0, &s), 0);
    for (int i = 0; i < 200; i++) {
        fs_job_row_t r = row(i % 7, i, (double)(i % 13), 100 + i, i % 3 != 0, (uint32_t)(i % 2), 1);
        assert_int_equal(fs_stats_add_job(ref, &r), 0);
        for (int k = 1;; k++) {
            fs_alloc_fail_after(k);
            int rc = fs_stats_add_job(s, &r);
            fs_alloc_fail_after(0);
            if (rc == 0)
                break;
            assert_int_equal(rc, FS_ENOMEM);
        }
    }
    fs_run_totals_t t;
    memset(&t, 0, sizeof t);
    t.end_time = 1000;
    fs_summary_t a, b;
    assert_int_equal(fs_stats_finish(ref, &t, &a), 0);
    assert_int_equal(fs_stats_finish(s, &t, &b), 0);
    size_t na, nb;
    const fs_tenant_row_t *ta = fs_stats_tenants(ref, &na), *tb = fs_stats_tenants(s, &nb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(ta[i].jobs, tb[i].jobs);
        assert_double_equal(ta[i].wait_p95, tb[i].wait_p95, 0);
        assert_double_equal(ta[i].jct_p95, tb[i].jct_p95, 0);
    }
    assert_double_equal(a.queued_p99, b.queued_p99, 0);
    fs_stats_destroy(ref);
    fs_stats_destroy(s);
    assert_int_equal(fs_alloc_live(), live0);
}

/* scheduler.preset: tiresias fills the keys not given; keys given (file or
 * --set) win; another queue is refused at its location; without the preset
 * nothing changes (the defaults stay 3600, 0s, 0). */
static void test_tiresias_preset(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    const char *base = "name: p\ncluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]}\n"
                       "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1.0},\n"
                       "           duration: {dist: constant, value: 1h}}}\n";
    char yaml[512];
    fs_config_t c;
    fs_error_t err;
    snprintf(yaml, sizeof yaml, "%sscheduler: {preset: tiresias}\n", base);
    assert_int_equal(fs_scenario_load_string("<p>", yaml, NULL, 0, &c, &err), 0);
    assert_int_equal(c.scheduler.queue, FS_QUEUE_LAS);
    assert_string_equal(c.scheduler.tiresias.thresholds, "3250,7200");
    assert_int_equal(c.scheduler.checkpoint_interval, 1);
    assert_double_equal(c.scheduler.tiresias.promote_knob, 0, 0);
    char msg[512];
    assert_int_equal(fs_policy_work_loss(&c, msg, sizeof msg), 0);
    /* the dump loads back the same */
    char *dump = fs_scenario_dump(&c);
    fs_config_t d;
    assert_int_equal(fs_scenario_load_string("<dump>", dump, NULL, 0, &d, &err), 0);
    assert_string_equal(d.scheduler.tiresias.thresholds, "3250,7200");
    assert_int_equal(d.scheduler.checkpoint_interval, 1);
    assert_int_equal(d.scheduler.queue, FS_QUEUE_LAS);
    fs_config_release(&d);
    fs_free(dump);
    fs_config_release(&c);

    const char *ovr[] = {"scheduler.tiresias.promote_knob=2", "scheduler.checkpoint_interval=10m"};
    assert_int_equal(fs_scenario_load_string("<p>", yaml, ovr, 2, &c, &err), 0);
    assert_double_equal(c.scheduler.tiresias.promote_knob, 2, 0);
    assert_int_equal(c.scheduler.checkpoint_interval, (fs_time_t)600 * 1000000);
    assert_string_equal(c.scheduler.tiresias.thresholds, "3250,7200");
    fs_config_release(&c);

    snprintf(yaml, sizeof yaml, "%sscheduler: {preset: tiresias, queue: srtf}\n", base);
    assert_int_equal(fs_scenario_load_string("<p>", yaml, NULL, 0, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "<p>:5:"));
    assert_non_null(strstr(err.msg, "preset 'tiresias'"));

    /* no preset: las keeps its defaults and loses work (warned) */
    snprintf(yaml, sizeof yaml, "%sscheduler: {queue: las}\n", base);
    assert_int_equal(fs_scenario_load_string("<p>", yaml, NULL, 0, &c, &err), 0);
    assert_string_equal(c.scheduler.tiresias.thresholds, "3600");
    assert_int_equal(c.scheduler.checkpoint_interval, 0);
    assert_int_equal(fs_policy_work_loss(&c, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "scheduler.checkpoint_interval"));
    assert_non_null(strstr(msg, "scheduler.preset: tiresias"));
    fs_config_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* fs_policy_work_loss: which policies preempt, and what stops the loss. */
static void test_work_loss_warning(void **st)
{
    (void)st;
    const char *base = "name: p\ncluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]}\n"
                       "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1.0},\n"
                       "           duration: {dist: constant, value: 1h}}}\n";
    static const struct {
        const char *sched;
        int loses;
        const char *names;
    } cases[] = {
        {"scheduler: {queue: srtf}\n", 1, "srtf preempts"},
        {"scheduler: {queue: srtf, preemption: none}\n", 0, NULL},
        {"scheduler: {queue: srtf, checkpoint_interval: 1h}\n", 0, NULL},
        {"scheduler: {queue: srtf}\nrecovery: {checkpoint: fixed, interval: 1h}\n", 0, NULL},
        {"scheduler: {queue: sjf}\n", 0, NULL},
        {"scheduler: {queue: priority, preemption: order}\n", 1, "priority preempts"},
        {"scheduler: {queue: fifo}\n", 0, NULL},
        {"scheduler: {queue: volcano, volcano: {queues: [{name: default}], reclaim: true}}\n", 1,
         "Volcano"},
        {"scheduler: {queue: kueue, kueue: {cluster_queues: [{name: a, quotas: [{flavor: p, "
         "nominal: 8}], within_cluster_queue: LowerPriority}], default_queue: a}}\n", 1, "Kueue"},
        {"scheduler: {queue: kueue, kueue: {cluster_queues: [{name: a, quotas: [{flavor: p, "
         "nominal: 8}]}], default_queue: a}}\n", 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char yaml[1024], msg[512];
        snprintf(yaml, sizeof yaml, "%s%s", base, cases[i].sched);
        fs_config_t c;
        fs_error_t err;
        if (fs_scenario_load_string("<p>", yaml, NULL, 0, &c, &err))
            fail_msg("case %zu: %s", i, err.msg);
        int got = fs_policy_work_loss(&c, msg, sizeof msg);
        if (got != cases[i].loses)
            fail_msg("case %zu: %s gives %d", i, cases[i].sched, got);
        if (got)
            assert_non_null(strstr(msg, cases[i].names));
        fs_config_release(&c);
    }
}

/* workload.trace.teams and load_scale: users mapped to teams (unlisted
 * users keep their name), submit times divided by the scale, run times
 * kept; through a scenario (relative team path) and through fs_trace_open. */
static void test_teams_and_load_scale(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    char *trace = fs_test_path(g_dir, "users.csv");
    char *teams = fs_test_path(g_dir, "teams.csv");
    assert_int_equal(fs_test_write(trace, "submit,id,duration,gpus,tenant\n0,1,100,1,alice\n"
                                          "10,2,50,1,carol\n21,3,60,2,bob\n31,4,70,1,alice\n"), 0);
    assert_int_equal(fs_test_write(teams, "# user to team\nteam,user,site\nvision,alice,x\n"
                                          "vision,bob,y\nnlp,dave,z\nvision,alice,x\n"), 0);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.teams = teams;
    o.load_scale = 2;
    fs_source_t *src;
    fs_error_t err;
    if (fs_trace_open("native", trace, &o, &src, &err))
        fail_msg("%s", err.msg);
    fs_job_t jobs[8];
    size_t n;
    assert_int_equal(fs_source_next(src, jobs, 8, &n, &err), 0);
    assert_int_equal(n, 4);
    static const double submit[] = {0, 5, 10.5, 15.5};
    static const char *const team[] = {"vision", "carol", "vision", "vision"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(jobs[i].submit, (fs_time_t)(submit[i] * 1e6));
        assert_string_equal(fs_source_tenant_name(src, jobs[i].tenant), team[i]);
    }
    assert_int_equal(jobs[0].duration, (fs_time_t)100 * 1000000);   /* run times kept */
    assert_int_equal(fs_source_tenant_count(src), 2);
    assert_int_equal(fs_remap_unmapped(src), 1);   /* carol */
    fs_source_destroy(src);

    /* a scenario: the team file relative to the scenario's directory */
    char *scn = fs_test_path(g_dir, "teams.yaml");
    assert_int_equal(fs_test_write(scn, "name: t\n"
                                        "cluster: {pools: [{name: p, gpu: H100, nodes: 1, "
                                        "gpus_per_node: 2}]}\n"
                                        "workload: {trace: {path: users.csv, teams: teams.csv, "
                                        "load_scale: 2}}\n"),
                     0);
    fs_config_t c;
    if (fs_scenario_load_file(scn, NULL, 0, &c, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(c.workload.trace.opts.teams, teams);
    assert_double_equal(c.workload.trace.opts.load_scale, 2, 0);
    fs_config_release(&c);
    const char *bad[] = {"workload.trace.load_scale=0"};
    assert_int_equal(fs_scenario_load_file(scn, bad, 1, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "load_scale"));

    /* errors in the team file name the file and line */
    static const struct {
        const char *text, *want;
    } errs[] = {
        {"name,group\na,b\n", ":1: expected a header naming the columns 'user' and 'team'"},
        {"user,team\nalice,vision\nalice,nlp\n", ":3: user 'alice' is mapped twice, to 'vision' and to 'nlp'"},
        {"user,team\nalice,\n", ":2: field team: expected a name, got an empty field"},
        {"user,team\nalice\n", ":2: expected 2 fields (user and team), got 1"},
        {"", ": empty team file"},
    };
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        assert_int_equal(fs_test_write(teams, errs[i].text), 0);
        int rc = fs_trace_open("native", trace, &o, &src, &err);
        assert_int_equal(rc, FS_EINVAL);
        if (!strstr(err.msg, errs[i].want) || strncmp(err.msg, teams, strlen(teams)) != 0)
            fail_msg("case %zu: '%s'", i, err.msg);
    }
    /* a missing team file */
    o.teams = "/nonexistent/teams.csv";
    assert_int_equal(fs_trace_open("native", trace, &o, &src, &err), FS_EIO);
    assert_non_null(strstr(err.msg, "workload.trace.teams"));

    /* the inline map (workload.trace.team_map) maps as the file does */
    assert_int_equal(fs_test_write(scn, "name: t\n"
                                        "cluster: {pools: [{name: p, gpu: H100, nodes: 1, "
                                        "gpus_per_node: 2}]}\n"
                                        "workload: {trace: {path: users.csv, load_scale: 2,\n"
                                        "  team_map: {alice: vision, bob: vision, dave: nlp}}}\n"),
                     0);
    if (fs_scenario_load_file(scn, NULL, 0, &c, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(c.workload.trace.opts.n_team_map, 3);
    assert_string_equal(c.workload.trace.opts.team_users[1], "bob");
    assert_string_equal(c.workload.trace.opts.team_of[2], "nlp");
    if (fs_trace_open("native", trace, &c.workload.trace.opts, &src, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(fs_source_next(src, jobs, 8, &n, &err), 0);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(jobs[i].submit, (fs_time_t)(submit[i] * 1e6));
        assert_string_equal(fs_source_tenant_name(src, jobs[i].tenant), team[i]);
    }
    assert_int_equal(fs_remap_unmapped(src), 1);   /* carol */
    fs_source_destroy(src);
    /* ... and with the file: a user both map to one team is fine, two is an error */
    assert_int_equal(fs_test_write(teams, "user,team\nalice,vision\ncarol,robotics\n"), 0);
    c.workload.trace.opts.teams = teams;
    if (fs_trace_open("native", trace, &c.workload.trace.opts, &src, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(fs_source_next(src, jobs, 8, &n, &err), 0);
    assert_string_equal(fs_source_tenant_name(src, jobs[1].tenant), "robotics");
    assert_int_equal(fs_remap_unmapped(src), 0);
    fs_source_destroy(src);
    assert_int_equal(fs_test_write(teams, "user,team\ncarol,nlp\nalice,nlp\n"), 0);
    assert_int_equal(fs_trace_open("native", trace, &c.workload.trace.opts, &src, &err), FS_EINVAL);
    if (!strstr(err.msg, ":3: user 'alice' is mapped twice, to 'vision' and to 'nlp' (the first in "
                         "workload.trace.team_map)"))
        fail_msg("%s", err.msg);
    c.workload.trace.opts.teams = NULL;
    fs_config_release(&c);
    /* values must be names, located */
    assert_int_equal(fs_test_write(scn, "name: t\n"
                                        "cluster: {pools: [{name: p, gpu: H100, nodes: 1, "
                                        "gpus_per_node: 2}]}\n"
                                        "workload: {trace: {path: users.csv,\n"
                                        "  team_map: {alice: [a, b]}}}\n"),
                     0);
    assert_int_equal(fs_scenario_load_file(scn, NULL, 0, &c, &err), FS_EINVAL);
    if (!strstr(err.msg, "teams.yaml:4:") || !strstr(err.msg, "workload.trace.team_map: 'alice' needs a name"))
        fail_msg("%s", err.msg);
    assert_int_equal(fs_test_write(scn, "name: t\n"
                                        "cluster: {pools: [{name: p, gpu: H100, nodes: 1, "
                                        "gpus_per_node: 2}]}\n"
                                        "workload: {trace: {path: users.csv, team_map: vision}}\n"),
                     0);
    assert_int_equal(fs_scenario_load_file(scn, NULL, 0, &c, &err), FS_EINVAL);
    if (!strstr(err.msg, "teams.yaml:3:") || !strstr(err.msg, "a map of names to names"))
        fail_msg("%s", err.msg);
    free(scn);
    free(trace);
    free(teams);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Kueue: two ClusterQueues of one cohort with 4 GPUs each on one 8-GPU
 * node.  Team a's 8-GPU job runs 0-1 h on its 4 GPUs and 4 borrowed from
 * b (idle): a borrowed 4 GPU-h, b lent 4 GPU-h.  b's 1-GPU job at 2 h runs
 * on its own quota.  Without quotas (FIFO) the columns are NaN. */
static void test_kueue_borrowed_lent(void **st)
{
    (void)st;
    const char *yaml =
        "name: k\nseed: 1\n"
        "cluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]}\n"
        "workload: {trace: {path: '@TRACE@', format: native}}\n"
        "scheduler:\n"
        "  queue: kueue\n"
        "  kueue:\n"
        "    cluster_queues:\n"
        "      - {name: qa, cohort: c, quotas: [{flavor: p, nominal: 4}], tenants: a}\n"
        "      - {name: qb, cohort: c, quotas: [{flavor: p, nominal: 4}], tenants: b}\n"
        "output: {timeline_interval: 0s}\n";
    const char *trace = "submit,id,duration,gpus,tenant\n0,1,3600,8,a\n7200,2,3600,1,b\n";
    char *tp = fs_test_path(g_dir, "k.csv");
    assert_int_equal(fs_test_write(tp, trace), 0);
    char text[2048];
    subst(text, sizeof text, yaml, tp);
    char *scn = fs_test_path(g_dir, "k.yaml");
    assert_int_equal(fs_test_write(scn, text), 0);
    char *out = fs_test_path(g_dir, "k.h5");
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_file(scn, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    opts.output = out;
    fs_run_report_t rep;
    if (fs_run_config(&cfg, &opts, &rep, &err))
        fail_msg("%s", err.msg);
    fs_config_release(&cfg);
    /* read /tenants back */
    fs_tenant_table_t t;
    const char *paths[] = {out};
    if (fs_tenant_table_load(paths, 1, &t, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(t.n, 2);
    long a = fs_tenant_table_find(&t, "a"), b = fs_tenant_table_find(&t, "b");
    assert_true(a >= 0 && b >= 0);
    size_t ib = 7, il = 8;   /* borrowed_gpu_hours, lent_gpu_hours */
    assert_string_equal(fs_tenant_metrics[ib], "borrowed_gpu_hours");
    assert_string_equal(fs_tenant_metrics[il], "lent_gpu_hours");
    assert_double_equal(t.mean[(size_t)a * FS_TENANT_N_METRICS + ib], 4, 1e-9);
    assert_double_equal(t.mean[(size_t)a * FS_TENANT_N_METRICS + il], 0, 0);
    assert_double_equal(t.mean[(size_t)b * FS_TENANT_N_METRICS + ib], 0, 0);
    assert_double_equal(t.mean[(size_t)b * FS_TENANT_N_METRICS + il], 4, 1e-9);
    fs_tenant_table_release(&t);
    free(tp);
    free(scn);
    free(out);
}

/* Per-tenant intervals over replications (issue 40): four replications of
 * two policies (FIFO, and FIFO with tenant nlp's load doubled), each run
 * file read on its own; fs_tenant_ci's mean and half-width, and
 * fs_tenant_paired's difference replication by replication, against the
 * Student-t formulas computed here from those values. */
static void test_tenant_intervals_direct(void **st)
{
    (void)st;
    char *scn = fs_test_path(g_dir, "iv.yaml");
    assert_int_equal(fs_test_write(scn, "name: iv\nhorizon: 1d\nuntil: horizon\n"
                                        "cluster: {pools: [{name: p, gpu: H100, nodes: 2, "
                                        "gpus_per_node: 8}]}\n"
                                        "workload:\n  synthetic: {arrivals: {rate: 6/h}, "
                                        "gpus: {1: 0.5, 8: 0.5},\n"
                                        "    tenants: {vision: 0.7, nlp: 0.3},\n"
                                        "    duration: {dist: exponential, mean: 1h}}\n"
                                        "output: {timeline_interval: 0s}\n"),
                     0);
    enum { R = 4 };
    char *paths[2][R];
    const char *sets[] = {"workload.tenant_scale={nlp: 2}"};
    for (size_t v = 0; v < 2; v++)
        for (size_t r = 0; r < R; r++) {
            char name[32];
            snprintf(name, sizeof name, "iv-%zu-%zu.h5", v, r);
            paths[v][r] = fs_test_path(g_dir, name);
            fs_config_t cfg;
            fs_error_t err;
            if (fs_scenario_load_file(scn, sets, v, &cfg, &err))
                fail_msg("%s", err.msg);
            cfg.replication = r;
            fs_run_opts_t opts;
            fs_run_opts_init(&opts);
            opts.output = paths[v][r];
            fs_run_report_t rep;
            if (fs_run_config(&cfg, &opts, &rep, &err))
                fail_msg("%s", err.msg);
            fs_config_release(&cfg);
        }
    fs_tenant_table_t t[2];
    fs_error_t err;
    for (size_t v = 0; v < 2; v++)
        if (fs_tenant_table_load((const char *const *)paths[v], R, &t[v], &err))
            fail_msg("%s", err.msg);
    const char *tenants[] = {"vision", "nlp"};
    const size_t ms[] = {0, 2, 4};   /* jobs, wait_p95, jct_mean */
    double tq = gsl_cdf_tdist_Pinv(0.975, R - 1);
    for (size_t k = 0; k < 2; k++)
        for (size_t q = 0; q < 3; q++) {
            size_t m = ms[q];
            double x[2][R];
            for (size_t v = 0; v < 2; v++)
                for (size_t r = 0; r < R; r++) {   /* each file on its own */
                    fs_tenant_table_t one;
                    const char *p1[] = {paths[v][r]};
                    if (fs_tenant_table_load(p1, 1, &one, &err))
                        fail_msg("%s", err.msg);
                    long i = fs_tenant_table_find(&one, tenants[k]);
                    assert_true(i >= 0);
                    x[v][r] = one.mean[(size_t)i * FS_TENANT_N_METRICS + m];
                    fs_tenant_table_release(&one);
                }
            for (size_t v = 0; v < 2; v++) {
                double mean = 0, ss = 0;
                for (size_t r = 0; r < R; r++)
                    mean += x[v][r] / R;
                for (size_t r = 0; r < R; r++)
                    ss += (x[v][r] - mean) * (x[v][r] - mean);
                double half = tq * sqrt(ss / (R - 1)) / sqrt((double)R);
                fs_ci_t ci;
                long i = fs_tenant_table_find(&t[v], tenants[k]);
                assert_int_equal(fs_tenant_ci(&t[v], (size_t)i, m, 0.95, &ci), 0);
                assert_int_equal(ci.n, R);
                assert_double_equal(ci.mean, mean, 1e-9 * (1 + fabs(mean)));
                assert_double_equal(ci.half, half, 1e-9 * (1 + half));
            }
            double d[R], dm = 0, ds = 0;
            for (size_t r = 0; r < R; r++) {
                d[r] = x[1][r] - x[0][r];
                dm += d[r] / R;
            }
            for (size_t r = 0; r < R; r++)
                ds += (d[r] - dm) * (d[r] - dm);
            double dh = tq * sqrt(ds / (R - 1)) / sqrt((double)R);
            fs_ci_t ci;
            assert_int_equal(fs_tenant_paired(&t[0], &t[1], tenants[k], m, 0.95, &ci), 0);
            assert_int_equal(ci.n, R);
            assert_double_equal(ci.mean, dm, 1e-9 * (1 + fabs(dm)));
            assert_double_equal(ci.lo, dm - dh, 1e-9 * (1 + fabs(dm) + dh));
            assert_double_equal(ci.hi, dm + dh, 1e-9 * (1 + fabs(dm) + dh));
        }
    /* tenant nlp's job count about doubles (its load scaled) */
    fs_ci_t a, b;
    assert_int_equal(fs_tenant_paired(&t[0], &t[1], "nlp", 0, 0.95, &a), 0);
    long i0 = fs_tenant_table_find(&t[0], "nlp");
    double nlp0 = t[0].mean[(size_t)i0 * FS_TENANT_N_METRICS];
    assert_true(a.mean > 0.6 * nlp0 && a.mean < 1.4 * nlp0);
    assert_int_equal(fs_tenant_paired(&t[0], &t[1], "nobody", 0, 0.95, &b), 0);
    assert_int_equal(b.n, 0);
    /* the printed tables: means with intervals, then the paired differences */
    char *txt = fs_test_path(g_dir, "iv.txt");
    FILE *f = fopen(txt, "w");
    assert_non_null(f);
    const char *labels[] = {"base", "nlp_x2"};
    const int failed[] = {0, 0};
    assert_int_equal(fs_tenant_print(f, t, labels, failed, 2, 0, 0), 0);
    fclose(f);
    size_t len;
    char *got = fs_test_read(txt, &len);
    assert_non_null(got);
    assert_non_null(strstr(got, "mean +- 95% t half-width over 4 replications"));
    assert_non_null(strstr(got, "paired differences against base"));
    assert_non_null(strstr(got, "nlp_x2 - base"));
    free(got);
    free(txt);
    for (size_t v = 0; v < 2; v++) {
        fs_tenant_table_release(&t[v]);
        for (size_t r = 0; r < R; r++)
            free(paths[v][r]);
    }
    free(scn);
}

static int setup(void **st)
{
    (void)st;
    g_dir = fs_test_tmpdir();
    return g_dir ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    fs_test_rmtree(g_dir);
    free(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queued_and_preemptions),
        cmocka_unit_test(test_queued_equals_wait_without_preemption),
        cmocka_unit_test(test_tenant_quantiles),
        cmocka_unit_test(test_tenant_out_of_memory),
        cmocka_unit_test(test_quantile_select_equals_sorted),
        cmocka_unit_test(test_tiresias_preset),
        cmocka_unit_test(test_work_loss_warning),
        cmocka_unit_test(test_teams_and_load_scale),
        cmocka_unit_test(test_kueue_borrowed_lent),
        cmocka_unit_test(test_tenant_intervals_direct),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
