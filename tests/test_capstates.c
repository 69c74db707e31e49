/*
 * Capacity states (#15; models/fs_model.c, docs/results.md) on hand cases:
 * every GPU-second of a run is busy, down, waiting (free and up while jobs
 * wait) or idle (free and up, nothing waiting), and the states sum to the
 * fleet's GPUs x time.  The sum itself is checked on every run through the
 * test helpers (fs_test_check_capstates, fs_test_check_capstate_row); here
 * each state's value is known by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../scenarios/fs_scenario.h"
#include "../traces/fs_synth.h"

#include "../models/fs_model.h"
#include "../models/fs_policy.h"
#include "../sim/fs_alloc.h"
#include "fs_test_util.h"

#define ONE_NODE "name: s\ncluster:\n  pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]\n" \
                 "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "                    \
                 "duration: {dist: constant, value: 1h}}}\nscheduler: {placement: first_fit}\n"     \
                 "output: {timeline_interval: 10m}\n"

/* jobs: {submit s, gpus, duration s}; samples collected into *smp */
static void run(const double (*jobs)[3], size_t n, fs_run_totals_t *t, fs_test_samples_t *smp)
{
    fs_job_t js[8];
    memset(js, 0, sizeof js);
    for (size_t i = 0; i < n; i++)
        js[i] = (fs_job_t){.id = i + 1, .submit = (fs_time_t)(jobs[i][0] * 1e6),
                           .gpus = (uint32_t)jobs[i][1], .gpu_milli = 1000,
                           .duration = (fs_time_t)(jobs[i][2] * 1e6), .tenant = -1,
                           .gpu_type = -1};
    smp->n = 0;
    fs_sink_t sink = {.sample = fs_test_collect_sample, .ud = smp};
    fs_test_run_yaml(ONE_NODE, js, n, &sink, t);
}

static double col_sum(const fs_test_samples_t *s, size_t off)
{
    double x = 0;
    for (size_t i = 0; i < s->n; i++)
        x += *(const double *)((const char *)&s->r[i] + off);
    return x;
}

/* One 8-GPU node, one 4-GPU job of 1 h: 4 GPU-h busy, 4 GPU-h idle. */
static void test_half_node(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_run_totals_t t;
    fs_test_samples_t smp = {0};
    const double jobs[][3] = {{0, 4, 3600}};
    run(jobs, 1, &t, &smp);
    assert_double_equal(t.gpu_s_total, 8 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_busy, 4 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_idle, 4 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_waiting, 0, 0);
    assert_double_equal(t.gpu_s_down, 0, 0);
    /* the timeline's rows add up to the same totals */
    assert_true(smp.n >= 6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_busy)), t.gpu_s_busy, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_idle)), t.gpu_s_idle, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_allocated)), t.gpu_s_allocated, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_share_idle)), t.gpu_s_share_idle, 1e-6);
    free(smp.r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A 6-GPU job runs 1 h; a 4-GPU job submitted with it cannot fit beside it
 * (2 GPUs free) and waits that hour: 2 GPU-h waiting, then 4 GPU-h busy
 * and 4 idle in the second hour. */
static void test_waiting(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_run_totals_t t;
    fs_test_samples_t smp = {0};
    const double jobs[][3] = {{0, 6, 3600}, {0, 4, 3600}};
    run(jobs, 2, &t, &smp);
    assert_double_equal(t.gpu_s_total, 8 * 7200.0, 1e-9);
    assert_double_equal(t.gpu_s_busy, 6 * 3600.0 + 4 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_waiting, 2 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_idle, 4 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_down, 0, 0);
    /* the first hour's rows: 2 GPUs waiting each; the second's: none */
    for (size_t i = 1; i < smp.n; i++) {
        double len = smp.r[i].time - smp.r[i - 1].time;
        if (smp.r[i].time <= 3600)
            assert_double_equal(smp.r[i].gpu_s_waiting, 2 * len, 1e-9);
        else if (smp.r[i - 1].time >= 3600)
            assert_double_equal(smp.r[i].gpu_s_waiting, 0, 0);
    }
    free(smp.r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The held split of busy (#15): a half-GPU pod and a 4-GPU job for 1 h on
 * the 8-GPU node: 5 GPUs busy, 4.5 allocated (the shared GPU's other half
 * is an unallocated share), all of it computing. */
static void test_held_split_share(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t js[2];
    memset(js, 0, sizeof js);
    js[0] = (fs_job_t){.id = 1, .gpus = 1, .gpu_milli = 500, .duration = 3600000000,
                       .tenant = -1, .gpu_type = -1};
    js[1] = (fs_job_t){.id = 2, .gpus = 4, .gpu_milli = 1000, .duration = 3600000000,
                       .tenant = -1, .gpu_type = -1};
    fs_run_totals_t t;
    fs_test_run_yaml(ONE_NODE, js, 2, NULL, &t);
    assert_double_equal(t.gpu_s_busy, 5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_allocated, 4.5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_share_idle, 0.5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_held, 4.5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_computing, 4.5 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_serving, 0, 1e-9);
    assert_double_equal(t.gpu_s_recovering, 0, 1e-9);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Overlap of [a, b) with (lo, hi], seconds. */
static double overlap(double a, double b, double lo, double hi)
{
    double x = a > lo ? a : lo, y = b < hi ? b : hi;
    return y > x ? y - x : 0;
}

/* The held split per /timeline row (#15): one 8-GPU job of 1 h on the node,
 * 60 s of pod start-up, a checkpoint every 20 min of compute written in 60 s,
 * sampled every 10 min.  By hand: start-up [0, 60), compute [60, 1260),
 * write [1260, 1320), compute [1320, 2520), write [2520, 2580), compute
 * [2580, 3780), and the checkpoint due as the work ends [3780, 3840)
 * (docs/recovery.md: the job ends at 3840 s): each row's computing, ckpt and start-up GPU-s are 8 x the
 * overlap of those phases with the row's interval; held = their sum,
 * recovering and serving 0; the rows add up to /summary's. */
static void test_held_split_timeline(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t js[1];
    memset(js, 0, sizeof js);
    js[0] = (fs_job_t){.id = 1, .gpus = 8, .gpu_milli = 1000, .duration = 3600000000,
                       .tenant = -1, .gpu_type = -1};
    fs_test_samples_t smp = {0};
    fs_sink_t sink = {.sample = fs_test_collect_sample, .ud = &smp};
    fs_run_totals_t t;
    fs_test_run_yaml(ONE_NODE "startup: {container: 60s}\n"
                     "recovery: {checkpoint: fixed, interval: 20m, write_cost: 1m}\n",
                     js, 1, &sink, &t);
    static const double ph[][3] = {/* start, end, kind: 0 startup, 1 compute, 2 write */
                                   {0, 60, 0},       {60, 1260, 1},    {1260, 1320, 2},
                                   {1320, 2520, 1},  {2520, 2580, 2},  {2580, 3780, 1},
                                   {3780, 3840, 2}};
    assert_true(smp.n >= 7);
    double prev = 0;
    for (size_t i = 0; i < smp.n; i++) {
        const fs_sample_row_t *r = &smp.r[i];
        double want[3] = {0, 0, 0};
        for (size_t k = 0; k < sizeof ph / sizeof ph[0]; k++)
            want[(int)ph[k][2]] += 8 * overlap(ph[k][0], ph[k][1], prev, r->time);
        assert_double_equal(r->gpu_s_startup, want[0], 1e-6);
        assert_double_equal(r->gpu_s_computing, want[1], 1e-6);
        assert_double_equal(r->gpu_s_ckpt, want[2], 1e-6);
        assert_double_equal(r->gpu_s_held, want[0] + want[1] + want[2], 1e-6);
        assert_double_equal(r->gpu_s_recovering, 0, 1e-6);
        assert_double_equal(r->gpu_s_serving, 0, 1e-6);
        prev = r->time;
    }
    assert_double_equal(t.gpu_s_startup, 8 * 60.0, 1e-6);
    assert_double_equal(t.gpu_s_ckpt, 8 * 180.0, 1e-6);
    assert_double_equal(smp.r[smp.n - 1].time, 3840.0, 0);   /* the closing row: the end */
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_held)), t.gpu_s_held, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_computing)), t.gpu_s_computing,
                        1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_ckpt)), t.gpu_s_ckpt, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_startup)), t.gpu_s_startup,
                        1e-6);
    free(smp.r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A node failure mid-job (at 25 min, node 0 out for 2 h): the one-node job
 * holds no healthy node while the failure is detected (5 min), so nothing
 * is held then; it starts again at 30 min on node 1 and restores for 10
 * min: recovering is 8 x 600 GPU-s, all in the row (1800, 2400], and the
 * rows add up to /summary's. */
static void test_held_split_timeline_failure(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t js[1];
    memset(js, 0, sizeof js);
    js[0] = (fs_job_t){.id = 1, .gpus = 8, .gpu_milli = 1000, .duration = 3600000000,
                       .tenant = -1, .gpu_type = -1};
    fs_test_samples_t smp = {0};
    fs_sink_t sink = {.sample = fs_test_collect_sample, .ud = &smp};
    fs_run_totals_t t;
    fs_test_run_yaml("name: s\ncluster:\n  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]\n"
                     "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
                     "duration: {dist: constant, value: 1h}}}\nscheduler: {placement: first_fit}\n"
                     "output: {timeline_interval: 10m}\n"
                     "failures: {planned: [{at: 25m, kind: node, unit: 0, duration: 2h}]}\n"
                     "recovery: {checkpoint: fixed, interval: 10m, write_cost: 0s, detection: 5m, "
                     "restore: 10m}\n",
                     js, 1, &sink, &t);
    assert_true(t.interruptions == 1);
    assert_double_equal(t.gpu_s_recovering, 8 * 600.0, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_recovering)),
                        t.gpu_s_recovering, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_held)), t.gpu_s_held, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_computing)), t.gpu_s_computing,
                        1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_serving)), t.gpu_s_serving,
                        1e-6);
    int seen = 0;
    for (size_t i = 0; i < smp.n; i++) {
        double want = smp.r[i].time == 2400.0 ? 8 * 600.0 : 0;
        seen += smp.r[i].time == 2400.0;
        assert_double_equal(smp.r[i].gpu_s_recovering, want, 1e-6);
    }
    assert_int_equal(seen, 1);
    free(smp.r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A planned drain of a busy node (how: drain, at 10 min for 2 h): its
 * 8-GPU job runs on to 1 h.  Its GPUs are busy and in service until then
 * and down only after: 8 x 70 min down, not 8 x 120 min (the node's GPUs
 * counted both busy and down while the job ran). */
static void test_drained_busy_node(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t js[1] = {fs_test_job(1, 0, 8, 3600)};
    fs_run_totals_t t;
    fs_test_run_yaml("name: s\nhorizon: 3h\nuntil: horizon\nwarmup: 0\n"
                     "cluster:\n  pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]\n"
                     "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
                     "duration: {dist: constant, value: 1h}}}\n"
                     "failures: {planned: [{at: 10m, kind: node, unit: 0, duration: 2h, how: drain}]}\n",
                     js, 1, NULL, &t);
    assert_double_equal(t.gpu_s_busy, 8 * 3600.0, 1e-6);
    assert_double_equal(t.gpu_s_down, 8 * 70 * 60.0, 1e-6);
    assert_double_equal(t.gpu_s_capacity, 8 * (3 * 3600.0 - 70 * 60), 1e-6);
    fs_test_check_capstates(&t);
    assert_int_equal(fs_alloc_live(), live0);
}

/* One 1-GPU job on a pool of one time-sliced GPU (4 replicas) beside a
 * pool of one whole GPU; node 0 (the time-sliced one) fails at `fail_at`
 * for 10 h, with `recovery` (a flow mapping). */
static void run_share_requeue(const char *fail_at, const char *recovery, const fs_job_t *js,
                              const fs_sink_t *sink, fs_run_totals_t *t)
{
    char y[1024];
    snprintf(y, sizeof y,
             "name: s\ncluster:\n  pools:\n"
             "    - {name: ts, gpu: H100, nodes: 1, gpus_per_node: 1, sharing: {time_slicing: 4}}\n"
             "    - {name: whole, gpu: H100, nodes: 1, gpus_per_node: 1}\n"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1}, "
             "duration: {dist: constant, value: 1h}}}\nscheduler: {placement: first_fit}\n"
             "output: {timeline_interval: 10m}\n"
             "failures: {planned: [{at: %s, kind: node, unit: 0, duration: 10h}]}\n"
             "recovery: %s\n",
             fail_at, recovery);
    fs_test_run_yaml(y, js, 1, sink, t);
}

/* A job whose share changes between attempts: a 1-GPU job takes a replica
 * (250 milli-GPUs) of a time-sliced GPU, its node fails at 1 h (work lost,
 * no checkpoint), and it runs again, 2 h, on a whole GPU of the other pool.
 * /summary's split prices each attempt at its own share, as the /timeline
 * rows do: computing 0.25 x 1 h + 1 x 2 h, not the last share for all 3 h
 * (which made computing exceed held and recovering negative). */
static void test_held_split_share_requeue(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t js[1] = {fs_test_job(1, 0, 1, 7200)};
    fs_test_samples_t smp = {0};
    fs_sink_t sink = {.sample = fs_test_collect_sample, .ud = &smp};
    fs_run_totals_t t;
    run_share_requeue("1h", "{detection: 5m, restore: 0s}", js, &sink, &t);
    assert_true(t.interruptions == 1);
    assert_double_equal(t.gpu_s_computing, 0.25 * 3600 + 7200.0, 1e-6);
    assert_true(t.gpu_s_recovering >= 0);
    assert_double_equal(t.gpu_s_held, t.gpu_s_computing + t.gpu_s_ckpt + t.gpu_s_startup +
                                          t.gpu_s_recovering, 1e-6);
    static const size_t cols[] = {offsetof(fs_sample_row_t, gpu_s_held),
                                  offsetof(fs_sample_row_t, gpu_s_computing),
                                  offsetof(fs_sample_row_t, gpu_s_ckpt),
                                  offsetof(fs_sample_row_t, gpu_s_startup),
                                  offsetof(fs_sample_row_t, gpu_s_recovering)};
    const double want[] = {t.gpu_s_held, t.gpu_s_computing, t.gpu_s_ckpt, t.gpu_s_startup,
                           t.gpu_s_recovering};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        assert_double_equal(col_sum(&smp, cols[i]), want[i], 1e-6);
    free(smp.r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The same kind of job with checkpoints: the replica attempt keeps its
 * work up to the last checkpoint before the failure (at 65 min), the whole
 * GPU does the rest.  /summary's useful GPU-s price each attempt's kept work
 * at its share (0.25 x kept + 1 x the rest), not the last share for all of
 * it, and the job's goodput is its computing at each share less what was
 * lost, over what it held. */
static void test_useful_share_requeue(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t js[1] = {fs_test_job(1, 0, 1, 7200)};
    fs_test_rows_t rows = {0};
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rows};
    fs_run_totals_t t;
    run_share_requeue("65m", "{checkpoint: fixed, interval: 10m, write_cost: 0s, detection: 5m, "
                             "restore: 0s}", js, &sink, &t);
    assert_true(t.interruptions == 1);
    const fs_job_row_t *r = fs_test_find(&rows, 1);
    assert_non_null(r);
    assert_int_equal(r->state, FS_STATE_COMPLETED);
    /* the last attempt starts at 70 min (failure + detection) on the whole
     * GPU at speed 1 and does the rest; the replica attempt kept the other
     * part (whole checkpoints only) */
    double rest = r->end - 4200, kept = 7200 - rest;
    assert_true(kept >= 600 && kept <= 3900 && fmod(kept, 1) == 0);
    assert_double_equal(t.gpu_s_useful, 0.25 * kept + 1.0 * rest, 1e-6);
    assert_double_equal(r->goodput, (0.25 * (r->compute_s - rest) - r->lost_gpu_s + rest) /
                                        r->held_gpu_s, 1e-9);
    fs_test_rows_free(&rows);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- the aggregates against the jobs' own accounts ----------------------
 * The /timeline held split is kept as aggregates that change with the jobs
 * (models/fs_model.c acct_*).  At every row the running sum of the rows must
 * equal fs_model_job_accounts, which sums every job's account as its row
 * would give it (O(slots), independent of the aggregates): on runs with
 * failures (multi-node jobs holding healthy nodes while the failure is
 * detected, spares, stragglers, restores, Daly checkpoints), preemption with
 * work kept, pod start-up with image pulls, and services. */
typedef struct xcheck {
    fs_model_t *m;
    double cum[4];
    size_t rows;
    double worst;
} xcheck_t;

static int xcheck_sample(void *ud, const fs_sample_row_t *row)
{
    xcheck_t *x = ud;
    const double add[4] = {row->gpu_s_held, row->gpu_s_computing, row->gpu_s_ckpt,
                           row->gpu_s_startup};
    double ref[4];
    fs_model_job_accounts(x->m, ref);
    for (int k = 0; k < 4; k++) {
        x->cum[k] += add[k];
        double err = fabs(ref[k] - x->cum[k]) / (fabs(ref[k]) > 1 ? fabs(ref[k]) : 1);
        if (err > x->worst)
            x->worst = err;
    }
    x->rows++;
    return 0;
}

static void xcheck_run(const char *path, const char *const *sets, size_t n_sets)
{
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_file(path, sets, n_sets, &cfg, &err))
        fail_msg("%s", err.msg);
    fs_source_t *src;   /* the three are synthetic workloads (as fs_runner.c opens them) */
    fs_synth_cfg_t sc = cfg.workload.synth;
    sc.horizon = cfg.horizon;
    if (cfg.workload.kind != FS_WORKLOAD_SYNTHETIC ||
        fs_synth_create(&sc, cfg.seed, cfg.replication, &src, &err))
        fail_msg("%s: not a synthetic workload, or: %s", path, err.msg);
    xcheck_t x = {0};
    fs_sink_t sink = {.sample = xcheck_sample, .ud = &x};
    fs_model_t *m;
    if (fs_model_create(&cfg, fs_policy_select(&cfg.scheduler), src, &sink, &m, &err))
        fail_msg("create: %s", err.msg);
    x.m = m;
    fs_run_totals_t t;
    if (fs_model_run(m, NULL, NULL, &err) || fs_model_finish(m, &t, &err))
        fail_msg("run: %s", err.msg);
    fs_test_check_capstates(&t);
    /* the rows cover the run: their sums are /summary's */
    const double sum[4] = {t.gpu_s_held, t.gpu_s_computing, t.gpu_s_ckpt, t.gpu_s_startup};
    for (int k = 0; k < 4; k++)
        if (!(fabs(sum[k] - x.cum[k]) <= 1e-9 * (fabs(sum[k]) > 1 ? fabs(sum[k]) : 1)))
            fail_msg("%s: account %d: rows add up to %.17g, /summary %.17g", path, k, x.cum[k],
                     sum[k]);
    /* what each run is here to cover */
    if (strstr(path, "llama3") && !(t.interruptions > 0 && t.gpu_s_recovering > 0 &&
                                    t.gpu_s_ckpt > 0 && t.gpu_s_startup > 0))
        fail_msg("%s: no interruption, restore, checkpoint or start-up", path);
    if (strstr(path, "default") && !(t.preemptions > 0))
        fail_msg("%s: no preemption", path);
    if (strstr(path, "serving") && !(t.gpu_s_serving > 0 && t.gpu_s_startup > 0))
        fail_msg("%s: nothing served or started", path);
    if (!(x.rows > 10 && x.worst <= 1e-9))
        fail_msg("%s: %zu rows, worst relative difference to the jobs' accounts %.3g", path,
                 x.rows, x.worst);
    print_message("%s: %zu rows, worst %.2g; GPU-s held %.6g, ckpt %.6g, startup %.6g, "
                  "recovering %.6g, serving %.6g; %llu interruptions, %llu preemptions\n", path,
                  x.rows, x.worst, t.gpu_s_held, t.gpu_s_ckpt, t.gpu_s_startup, t.gpu_s_recovering,
                  t.gpu_s_serving, (unsigned long long)t.interruptions,
                  (unsigned long long)t.preemptions);
    fs_model_destroy(m);
    fs_source_destroy(src);
    fs_config_release(&cfg);
}

static void test_held_split_aggregates(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    const char *llama[] = {"horizon=2d", "cluster.pools.0.nodes=128",
                           "workload.synthetic.gpus={8: 0.6, 64: 0.3, 512: 0.1}",
                           "workload.synthetic.arrivals.rate=3/h", "output.timeline_interval=20m",
                           "failures.repair.crews=4",
                           "failures.components=[{kind: node, tbf: {dist: exponential, mean: 8d}, "
                           "causes: {tor_switch: 1}}]",
                           "startup={container: 5s, image_size: 9537, node_bandwidth: 80}"};
    xcheck_run(FS_SOURCE_DIR "/scenarios/failures-llama3.yaml", llama, 8);
    const char *srtf[] = {"horizon=12h", "warmup=0s", "cluster.pools.0.nodes=16",
                          "scheduler.queue=srtf", "scheduler.checkpoint_interval=10m",
                          "output.timeline_interval=15m"};
    xcheck_run(FS_SOURCE_DIR "/scenarios/default.yaml", srtf, 6);
    const char *svc[] = {"horizon=12h", "output.timeline_interval=10m"};
    xcheck_run(FS_SOURCE_DIR "/scenarios/serving-mixed.yaml", svc, 2);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Allocated but idle (#15): a job of a class whose activity is zero
 * (telemetry.activity duty 0: it holds its GPUs and runs no kernel) counts
 * its computing in gpu_s_held_idle; a job of an active class does not.  Two
 * 4-GPU jobs of 1 h side by side: computing 8 GPU-h, held idle 4. */
static void test_held_idle(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t js[2];
    memset(js, 0, sizeof js);
    for (int i = 0; i < 2; i++)
        js[i] = (fs_job_t){.id = (uint64_t)i + 1, .gpus = 4, .gpu_milli = 1000,
                           .duration = 3600000000, .tenant = -1, .gpu_type = -1, .job_class = i};
    fs_run_totals_t t;
    fs_test_run_yaml(ONE_NODE "telemetry: {activity: [{class: 1, duty: 0, sm: 0, tensor: 0, "
                     "dram: 0}]}\n", js, 2, NULL, &t);
    assert_double_equal(t.gpu_s_computing, 8 * 3600.0, 1e-9);
    assert_double_equal(t.gpu_s_held_idle, 4 * 3600.0, 1e-9);
    fs_test_run_yaml(ONE_NODE, js, 2, NULL, &t);
    assert_double_equal(t.gpu_s_held_idle, 0, 0);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The waiting split (#15): two 8-GPU nodes, two 6-GPU pods for 2 h (one per
 * node, 2 GPUs free on each) and a third job submitted with them.
 * - a 4-GPU pod: no node has 4 free, so the 4 free GPUs are fragmented for
 *   the 2 h: frag 4 x 7200 GPU-s, nothing held back;
 * - an 8-GPU gang that may spread: every free GPU could take a part, but 4
 *   are free: held back, labelled blocked (FIFO), reserved (EASY backfill);
 * - Kueue with a ClusterQueue quota of 8 GPUs and 4-GPU jobs: two run, the
 *   third waits for quota beside 8 free GPUs: quota 8 x 7200. */
#define TWO_NODES "name: s\ncluster:\n  pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]\n" \
                  "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "                    \
                  "duration: {dist: constant, value: 1h}}}\noutput: {timeline_interval: 10m}\n"

static void waiting_case(const char *yaml, const uint32_t gpus[3], int pod3, double hours,
                         fs_run_totals_t *t, fs_test_samples_t *smp)
{
    fs_job_t js[3];
    memset(js, 0, sizeof js);
    for (int i = 0; i < 3; i++)
        js[i] = (fs_job_t){.id = (uint64_t)i + 1, .gpus = gpus[i], .gpu_milli = 1000,
                           .duration = (fs_time_t)(hours * 3600e6), .tenant = -1, .gpu_type = -1,
                           .flags = (uint16_t)(i < 2 || pod3 ? FS_JOB_SINGLE_NODE : 0)};
    smp->n = 0;
    fs_sink_t sink = {.sample = fs_test_collect_sample, .ud = smp};
    fs_test_run_yaml(yaml, js, 3, &sink, t);
}

static void test_waiting_split(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_run_totals_t t;
    fs_test_samples_t smp = {0};
    const uint32_t pod[3] = {6, 6, 4}, gang[3] = {6, 6, 8};
    waiting_case(TWO_NODES "scheduler: {placement: first_fit}\n", pod, 1, 2, &t, &smp);
    assert_double_equal(t.gpu_s_waiting, 4 * 7200.0, 1e-6);
    assert_double_equal(t.gpu_s_frag, 4 * 7200.0, 1e-6);
    assert_double_equal(t.gpu_s_blocked + t.gpu_s_reserved + t.gpu_s_quota, 0, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_frag)), t.gpu_s_frag, 1e-6);

    waiting_case(TWO_NODES "scheduler: {placement: first_fit}\n", gang, 0, 2, &t, &smp);
    assert_double_equal(t.gpu_s_waiting, 4 * 7200.0, 1e-6);
    assert_double_equal(t.gpu_s_frag, 0, 1e-6);
    assert_double_equal(t.gpu_s_blocked, 4 * 7200.0, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_blocked)), t.gpu_s_blocked,
                        1e-6);

    waiting_case(TWO_NODES "scheduler: {placement: first_fit, backfill: easy}\n", gang, 0, 2, &t,
                 &smp);
    assert_double_equal(t.gpu_s_frag, 0, 1e-6);
    assert_double_equal(t.gpu_s_reserved, 4 * 7200.0, 1e-6);
    assert_double_equal(t.gpu_s_blocked, 0, 0);

    const uint32_t four[3] = {4, 4, 4};
    waiting_case(TWO_NODES "scheduler: {placement: first_fit, queue: kueue, kueue: {flavors: "
                           "[{name: f, match: H100}], cluster_queues: [{name: x, quotas: "
                           "[{flavor: f, nominal: 8}]}], default_queue: x}}\n",
                 four, 0, 2, &t, &smp);
    assert_double_equal(t.gpu_s_waiting, 8 * 7200.0, 1e-6);
    assert_double_equal(t.gpu_s_frag, 0, 1e-6);
    assert_double_equal(t.gpu_s_quota, 8 * 7200.0, 1e-6);
    assert_double_equal(col_sum(&smp, offsetof(fs_sample_row_t, gpu_s_quota)), t.gpu_s_quota, 1e-6);
    free(smp.r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A job whose trace recorded its GPU utilization (fs_job_t.rec_util, PAI's
 * sensor table) runs with that duty and its class's sm, tensor and dram
 * scaled by it (/gpu_intervals, which fleetsim metrics reads); one that
 * recorded 0 holds its GPUs idle (gpu_s_held_idle).  A recorded memory use
 * (rec_fb, GB) is its framebuffer share of the GPU's memory, at most 1. */
typedef struct ivs { fs_interval_row_t r[8]; size_t n; } ivs_t;
static int collect_iv(void *ud, const fs_interval_row_t *row)
{
    ivs_t *v = ud;
    if (v->n < 8)
        v->r[v->n++] = *row;
    return 0;
}

static void test_recorded_util(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_job_t js[3];
    memset(js, 0, sizeof js);
    for (int i = 0; i < 3; i++)
        js[i] = (fs_job_t){.id = (uint64_t)i + 1, .gpus = 2, .gpu_milli = 1000,
                           .duration = 3600000000, .tenant = -1, .gpu_type = -1};
    js[0].rec_util = fs_job_util_code(0.25);
    js[1].rec_util = fs_job_util_code(0);
    js[0].rec_fb = fs_job_fb_code(20);     /* of an H100's 80 GB: 0.25 */
    js[1].rec_fb = fs_job_fb_code(100);    /* more than the GPU has: all of it */
    ivs_t v = {.n = 0};
    fs_sink_t sink = {.interval = collect_iv, .ud = &v};
    fs_run_totals_t t;
    fs_test_run_yaml(ONE_NODE "telemetry: {duty: 0.8, sm: 0.6, tensor: 0.4, dram: 0.2, fb: 0.5}\n",
                     js, 3, &sink, &t);
    assert_int_equal(v.n, 3);
    for (size_t i = 0; i < v.n; i++) {
        const fs_interval_row_t *r = &v.r[i];
        double k = r->job == 1 ? 0.25 / 0.8 : r->job == 2 ? 0 : 1;
        assert_double_equal(r->duty, r->job == 1 ? 0.25 : r->job == 2 ? 0 : 0.8, 1e-12);
        assert_double_equal(r->sm, 0.6 * k, 1e-12);
        assert_double_equal(r->tensor, 0.4 * k, 1e-12);
        assert_double_equal(r->dram, 0.2 * k, 1e-12);
        assert_double_equal(r->fb, r->job == 1 ? 0.25 : r->job == 2 ? 1 : 0.5, 1e-12);
    }
    assert_double_equal(t.gpu_s_held_idle, 2 * 3600.0, 1e-9);   /* job 2 */
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_node),
        cmocka_unit_test(test_waiting),
        cmocka_unit_test(test_held_split_share),
        cmocka_unit_test(test_held_split_timeline),
        cmocka_unit_test(test_held_split_timeline_failure),
        cmocka_unit_test(test_held_split_share_requeue),
        cmocka_unit_test(test_useful_share_requeue),
        cmocka_unit_test(test_drained_busy_node),
        cmocka_unit_test(test_held_split_aggregates),
        cmocka_unit_test(test_held_idle),
        cmocka_unit_test(test_waiting_split),
        cmocka_unit_test(test_recorded_util),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
