/*
 * The Cluster Autoscaler (models/fs_autoscale.c) on hand cases whose
 * timings follow from its documented defaults: scans every 10 s, a new
 * node's GPUs allocatable provision (2 min) + gpu_ready (1 min) after the
 * scan that decided it, an empty node above min removed once it has been
 * empty for 10 min (and no scale-up for 10 min).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/fs_model.h"
#include "../sim/fs_alloc.h"
#include "fs_test_util.h"

typedef struct res {
    fs_test_rows_t rows;
    fs_test_samples_t smp;
    fs_run_totals_t t;
} res_t;

static int on_sample(void *ud, const fs_sample_row_t *row)
{
    return fs_test_collect_sample(&((res_t *)ud)->smp, row);
}

static int on_job(void *ud, const fs_job_row_t *row)
{
    return fs_test_collect(&((res_t *)ud)->rows, row);
}

/* Runs a scenario (group block appended to a one-pool fleet of 4 x 8
 * H100) on jobs (id i + 1: submit s, gpus, duration d). */
static void run(const char *group, const char *extra, const double (*jobs)[3], size_t n, res_t *r)
{
    char text[2048];
    snprintf(text, sizeof text,
             "name: a\nhorizon: 6h\nuntil: horizon\n"
             "cluster:\n  pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]\n"
             "  autoscale:\n    node_groups: [%s]\n%s"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
             "duration: {dist: constant, value: 1h}}}\n"
             "output: {timeline_interval: 10s}\n",
             group, extra);
    fs_job_t js[16];
    memset(js, 0, sizeof js);
    for (size_t i = 0; i < n; i++) {
        js[i].id = i + 1;
        js[i].submit = (fs_time_t)(jobs[i][0] * 1e6);
        js[i].gpus = (uint32_t)jobs[i][1];
        js[i].gpu_milli = 1000;
        js[i].duration = (fs_time_t)(jobs[i][2] * 1e6);
        js[i].tenant = -1;
        js[i].gpu_type = -1;
    }
    memset(r, 0, sizeof *r);
    fs_sink_t sink = {.job = on_job, .sample = on_sample, .ud = r};
    fs_test_run_yaml(text, js, n, &sink, &r->t);
}

static void res_free(res_t *r)
{
    fs_test_rows_free(&r->rows);
    free(r->smp.r);
}

/* The samples' node counts at time t (s). */
static const fs_sample_row_t *at(const res_t *r, double t)
{
    for (size_t i = 0; i < r->smp.n; i++)
        if (r->smp.r[i].time == t)
            return &r->smp.r[i];
    fail_msg("no sample at %g s", t);
    return NULL;
}

/* One 8-GPU job at 0 on an empty group: decided at the 10 s scan, GPUs at
 * 190 s, the job runs 190-3790 s; the scan at 3790 s (after the completion
 * of that instant) sees the node empty, and the one at 4390 s removes it.
 * GPUs in service: 8 x (4390 - 190). */
static void test_one_job(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    const double jobs[][3] = {{0, 8, 3600}};
    res_t r;
    run("{pool: p, min: 0}", "", jobs, 1, &r);
    assert_int_equal(r.rows.n, 1);
    assert_double_equal(r.rows.r[0].start, 190, 1e-9);
    assert_int_equal(at(&r, 0)->nodes_autoscaled, 0);
    assert_int_equal(at(&r, 10)->nodes_provisioning, 1);
    assert_int_equal(at(&r, 180)->nodes_provisioning, 1);
    assert_int_equal(at(&r, 190)->nodes_provisioning, 0);
    assert_int_equal(at(&r, 190)->nodes_autoscaled, 1);
    assert_int_equal(at(&r, 4380)->nodes_autoscaled, 1);
    assert_int_equal(at(&r, 4390)->nodes_autoscaled, 0);
    assert_int_equal(at(&r, 4390)->nodes_down, 4);
    assert_double_equal(r.t.gpu_s_capacity, 8.0 * (4390 - 190), 1e-6);
    res_free(&r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Three 4-GPU jobs: first-fit decreasing packs them onto 2 nodes of 8, all
 * three start at 190 s.  A 16-GPU job takes 2 whole nodes. */
static void test_binpacking(void **st)
{
    (void)st;
    const double small[][3] = {{0, 4, 3600}, {0, 4, 3600}, {0, 4, 3600}};
    res_t r;
    run("{pool: p}", "", small, 3, &r);
    assert_int_equal(at(&r, 190)->nodes_autoscaled, 2);
    for (size_t i = 0; i < 3; i++)
        assert_double_equal(r.rows.r[i].start, 190, 1e-9);
    res_free(&r);
    const double big[][3] = {{0, 16, 3600}};
    run("{pool: p}", "", big, 1, &r);
    assert_int_equal(at(&r, 190)->nodes_autoscaled, 2);
    assert_double_equal(r.rows.r[0].start, 190, 1e-9);
    res_free(&r);
}

/* max 2: of three 8-GPU jobs, two start at 190 s; the third waits for the
 * first to end (3790 s).  min 1: one node from the start (a job at 0
 * starts at once) and never fewer. */
static void test_min_max(void **st)
{
    (void)st;
    const double jobs[][3] = {{0, 8, 3600}, {0, 8, 3600}, {0, 8, 3600}};
    res_t r;
    run("{pool: p, max: 2}", "", jobs, 3, &r);
    const fs_job_row_t *third = fs_test_find(&r.rows, 3);
    assert_non_null(third);
    assert_double_equal(third->start, 3790, 1e-9);
    uint32_t most = 0;
    for (size_t i = 0; i < r.smp.n; i++)
        most = r.smp.r[i].nodes_autoscaled + r.smp.r[i].nodes_provisioning > most
                   ? r.smp.r[i].nodes_autoscaled + r.smp.r[i].nodes_provisioning
                   : most;
    assert_int_equal(most, 2);
    res_free(&r);

    const double one[][3] = {{0, 8, 3600}};
    run("{pool: p, min: 1}", "", one, 1, &r);
    assert_double_equal(r.rows.r[0].start, 0, 1e-9);
    for (size_t i = 0; i < r.smp.n; i++)
        assert_int_equal(r.smp.r[i].nodes_autoscaled, 1);
    assert_double_equal(r.t.gpu_s_capacity, 8.0 * 6 * 3600, 1e-6);
    res_free(&r);
}

/* The scale-down delay after a scale-up, and free GPUs counted: an 8-GPU
 * 10-min job at 0 (runs 190-790 s) and a 16-GPU job at 1000 s.  With a
 * 1-min unneeded time but a 1-hour delay after add, the first node stays
 * although empty from 790 s.  The 1000 s scan runs before that instant's
 * arrival; the 1010 s one packs the 16 GPUs onto the empty node and one new
 * node (not two), which starts the job at 1190 s.  Both are empty from
 * 1790 s and leave at 1010 + 3600 s. */
static void test_delay_after_add(void **st)
{
    (void)st;
    const double jobs[][3] = {{0, 8, 600}, {1000, 16, 600}};
    res_t r;
    run("{pool: p}", "    scale_down_unneeded: 1m\n    scale_down_delay_after_add: 1h\n", jobs, 2,
        &r);
    /* the 16-GPU job needs 2 nodes: one is there, one more is decided at 1010 s */
    const fs_job_row_t *second = fs_test_find(&r.rows, 2);
    assert_double_equal(second->start, 1010 + 180, 1e-9);
    assert_int_equal(at(&r, 1000)->nodes_autoscaled, 1);   /* kept by the delay after add */
    assert_int_equal(at(&r, 1010)->nodes_provisioning, 1);  /* one new node, not two */
    /* after the second job (ends 1790 s) both are empty; removal waits for 1010 + 3600 */
    assert_int_equal(at(&r, 4600)->nodes_autoscaled, 2);
    assert_int_equal(at(&r, 4610)->nodes_autoscaled, 0);
    res_free(&r);
}

/* ---- Karpenter (provisioner: karpenter) --------------------------------------
 * Timings from Karpenter's defaults: a batch closes 1 s after its last
 * pending pod (BATCH_IDLE_DURATION) and at most 10 s after its first
 * (BATCH_MAX_DURATION); its nodes are Ready 35 s later (provision's
 * Karpenter default) and allocatable 60 s after that (gpu_ready); the
 * disruption controller polls every 10 s (anchored at 0 while nodes are
 * up), a chosen empty node is removed 15 s later, 10% of the launched nodes
 * (rounded up) at a time. */

/* Runs a full scenario text (cluster and autoscale blocks given) on jobs. */
static void run_text(const char *cluster, const double (*jobs)[3], size_t n, res_t *r)
{
    char text[2048];
    snprintf(text, sizeof text,
             "name: a\nhorizon: 6h\nuntil: horizon\n%s"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
             "duration: {dist: constant, value: 1h}}}\n"
             "output: {timeline_interval: 10s}\n",
             cluster);
    fs_job_t js[32];
    memset(js, 0, sizeof js);
    for (size_t i = 0; i < n; i++) {
        js[i].id = i + 1;
        js[i].submit = (fs_time_t)(jobs[i][0] * 1e6);
        js[i].gpus = (uint32_t)jobs[i][1];
        js[i].gpu_milli = 1000;
        js[i].duration = (fs_time_t)(jobs[i][2] * 1e6);
        js[i].tenant = -1;
        js[i].gpu_type = -1;
    }
    memset(r, 0, sizeof *r);
    fs_sink_t sink = {.job = on_job, .sample = on_sample, .ud = r};
    fs_test_run_yaml(text, js, n, &sink, &r->t);
}

#define KP_ONE(nodes, extra)                                                                     \
    "cluster:\n  pools: [{name: p, gpu: H100, nodes: " #nodes ", gpus_per_node: 8}]\n"          \
    "  autoscale:\n    provisioner: karpenter\n" extra

/* The batch window: three 4-GPU pods at 0, 0.5 and 1.2 s are one batch that
 * closes at 2.2 s (1 s idle after the last); packed onto two 8-GPU nodes
 * (two pods on the first NodeClaim, the third on a second), allocatable
 * at 2.2 + 35 + 60 = 97.2 s.  8-GPU pods every 0.9 s from 0 to 12.6 s: the
 * window is capped 10 s after its first pod, so the 12 pods up to 9.9 s
 * start at 10 + 95 = 105 s; the 3 after it are a second batch closing at
 * 12.6 + 1 = 13.6 s, started at 108.6 s. */
static void test_kp_batch(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    const double three[][3] = {{0, 4, 3600}, {0.5, 4, 3600}, {1.2, 4, 3600}};
    res_t r;
    run_text(KP_ONE(4, "    node_groups: [{pool: p}]\n"), three, 3, &r);
    for (size_t i = 0; i < 3; i++)
        assert_double_equal(r.rows.r[i].start, 97.2, 1e-9);
    assert_int_equal(at(&r, 10)->nodes_provisioning, 2);
    res_free(&r);

    double burst[15][3];
    for (size_t i = 0; i < 15; i++) {
        burst[i][0] = 0.9 * (double)i;
        burst[i][1] = 8;
        burst[i][2] = 3600;
    }
    run_text(KP_ONE(16, "    node_groups: [{pool: p}]\n"), (const double (*)[3])burst, 15, &r);
    for (size_t i = 0; i < 15; i++) {
        const fs_job_row_t *j = fs_test_find(&r.rows, i + 1);
        assert_double_equal(j->start, i < 12 ? 105 : 108.6, 1e-9);
    }
    res_free(&r);
    /* a group's own provision wins over Karpenter's default: 1 + 10 + 60 s */
    const double one[][3] = {{0, 8, 3600}};
    run_text(KP_ONE(4, "    node_groups: [{pool: p, provision: 10s}]\n"), one, 1, &r);
    assert_double_equal(r.rows.r[0].start, 71, 1e-9);
    res_free(&r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Two instance types, priced per GPU-hour in the cost model (on_demand):
 * small 4 GPUs, big 8 GPUs.  A NodeClaim launches as its cheapest type that
 * holds its pods. */
#define KP_TWO(small_price, big_price)                                                          \
    "cluster:\n  pools: [{name: small, gpu: H100, nodes: 4, gpus_per_node: 4},\n"              \
    "          {name: big, gpu: H100, nodes: 4, gpus_per_node: 8}]\n"                          \
    "  autoscale:\n    provisioner: karpenter\n"                                               \
    "    node_groups: [{pool: small}, {pool: big}]\n"                                           \
    "cost: {pools: [{pool: small, billing: on_demand, price: " #small_price "},\n"             \
    "               {pool: big, billing: on_demand, price: " #big_price "}]}\n"

static void test_kp_cheapest(void **st)
{
    (void)st;
    res_t r;
    /* one 4-GPU pod: small $12/h beats big $16/h */
    const double one[][3] = {{0, 4, 3600}};
    run_text(KP_TWO(3, 2), one, 1, &r);
    assert_int_equal(r.rows.r[0].pool, 0);
    assert_double_equal(r.rows.r[0].start, 96, 1e-9);
    res_free(&r);
    /* small at $5/GPU-h is a $20 node: the big $16 node is cheaper for it */
    run_text(KP_TWO(5, 2), one, 1, &r);
    assert_int_equal(r.rows.r[0].pool, 1);
    res_free(&r);
    /* two 4-GPU pods of one batch share one NodeClaim, which only big holds:
     * one $16 node (two small ones would be $24) */
    const double two[][3] = {{0, 4, 3600}, {0, 4, 3600}};
    run_text(KP_TWO(3, 2), two, 2, &r);
    assert_int_equal(r.rows.r[0].pool, 1);
    assert_int_equal(r.rows.r[1].pool, 1);
    assert_int_equal(at(&r, 10)->nodes_provisioning, 1);
    res_free(&r);
    /* a 16-GPU job: two big nodes ($32) beat four small ones ($48) */
    const double gang[][3] = {{0, 16, 3600}};
    run_text(KP_TWO(3, 2), gang, 1, &r);
    assert_int_equal(r.rows.r[0].pool, 1);
    assert_int_equal(at(&r, 10)->nodes_provisioning, 2);
    res_free(&r);
}

/* Consolidation: one 8-GPU job at 0 runs 96-3696 s.  consolidate_after 0:
 * the poll at 3700 s (the first after the job's end) chooses the node, it
 * leaves at 3715 s.  consolidate_after 5m: Consolidatable at 3696 + 300 =
 * 3996 s, chosen at the 4000 s poll, gone at 4015 s.  Three nodes empty at
 * once leave one at a time (budget ceil(10% x 3) = 1): at 3715, 3730 and
 * 3745 s. */
static void test_kp_consolidation(void **st)
{
    (void)st;
    const double one[][3] = {{0, 8, 3600}};
    res_t r;
    run_text(KP_ONE(4, "    node_groups: [{pool: p}]\n"), one, 1, &r);
    assert_double_equal(r.rows.r[0].start, 96, 1e-9);
    assert_int_equal(at(&r, 3710)->nodes_autoscaled, 1);
    assert_int_equal(at(&r, 3720)->nodes_autoscaled, 0);
    assert_double_equal(r.t.gpu_s_capacity, 8.0 * (3715 - 96), 1e-6);
    res_free(&r);
    run_text(KP_ONE(4, "    consolidate_after: 5m\n    consolidation_policy: when_empty\n"
                       "    node_groups: [{pool: p}]\n"),
             one, 1, &r);
    assert_double_equal(r.t.gpu_s_capacity, 8.0 * (4015 - 96), 1e-6);
    res_free(&r);
    const double three[][3] = {{0, 8, 3600}, {0, 8, 3600}, {0, 8, 3600}};
    run_text(KP_ONE(4, "    node_groups: [{pool: p}]\n"), three, 3, &r);
    assert_int_equal(at(&r, 3710)->nodes_autoscaled, 3);
    assert_int_equal(at(&r, 3720)->nodes_autoscaled, 2);
    assert_int_equal(at(&r, 3740)->nodes_autoscaled, 1);
    assert_int_equal(at(&r, 3750)->nodes_autoscaled, 0);
    assert_double_equal(r.t.gpu_s_capacity, 8.0 * ((3715 - 96) + (3730 - 96) + (3745 - 96)), 1e-6);
    res_free(&r);
}

/* Limits: min 1, max 3 and five 8-GPU jobs at 0: one starts at once on the
 * min node, two more at 96 s (the batch launches only 2, the room), the
 * last two when the first two end (3600 s, 3696 s); the min node is never
 * removed and 1 <= nodes <= 3 at every sample. */
static void test_kp_limits(void **st)
{
    (void)st;
    const double five[][3] = {{0, 8, 3600}, {0, 8, 3600}, {0, 8, 3600}, {0, 8, 3600},
                              {0, 8, 3600}};
    res_t r;
    run_text(KP_ONE(4, "    node_groups: [{pool: p, min: 1, max: 3}]\n"), five, 5, &r);
    assert_double_equal(fs_test_find(&r.rows, 1)->start, 0, 1e-9);
    assert_double_equal(fs_test_find(&r.rows, 2)->start, 96, 1e-9);
    assert_double_equal(fs_test_find(&r.rows, 3)->start, 96, 1e-9);
    assert_double_equal(fs_test_find(&r.rows, 4)->start, 3600, 1e-9);
    assert_double_equal(fs_test_find(&r.rows, 5)->start, 3696, 1e-9);
    for (size_t i = 0; i < r.smp.n; i++) {
        uint32_t size = r.smp.r[i].nodes_autoscaled + r.smp.r[i].nodes_provisioning;
        if (size < 1 || size > 3)
            fail_msg("%u nodes at %g s", size, r.smp.r[i].time);
    }
    assert_int_equal(r.smp.r[r.smp.n - 1].nodes_autoscaled, 1);
    res_free(&r);
}

/* A job larger than a node counts the empty nodes it may use.  An 8-GPU
 * job runs 96-196 s; the 200 s poll chooses its empty node, and a 16-GPU
 * job submitted at 200 s closes its batch at 201 s with that node and one
 * new one, which nominates the empty node (not disrupted until 201 + 20 s):
 * the 215 s validation keeps it, and the job starts at 201 + 95 = 296 s on
 * two nodes, not three. */
static void test_kp_gang(void **st)
{
    (void)st;
    const double jobs[][3] = {{0, 8, 100}, {200, 16, 3600}};
    res_t r;
    run_text(KP_ONE(4, "    node_groups: [{pool: p}]\n"), jobs, 2, &r);
    assert_double_equal(fs_test_find(&r.rows, 1)->end, 196, 1e-9);
    assert_double_equal(fs_test_find(&r.rows, 2)->start, 296, 1e-9);
    assert_int_equal(at(&r, 210)->nodes_provisioning, 1);
    assert_int_equal(at(&r, 220)->nodes_autoscaled, 1);
    assert_int_equal(at(&r, 300)->nodes_autoscaled, 2);
    res_free(&r);
}

/* extra: more scenario text (a cost block) */
/* Nodes provisioning or provisioned, the most at any sample before `until` s. */
static uint32_t peak_nodes(const res_t *r, double until)
{
    uint32_t peak = 0;
    for (size_t i = 0; i < r->smp.n && r->smp.r[i].time < until; i++) {
        uint32_t n = r->smp.r[i].nodes_autoscaled + r->smp.r[i].nodes_provisioning;
        peak = n > peak ? n : peak;
    }
    return peak;
}

/* Kueue's ClusterQueues (jobs of no tenant go to default_queue a). */
#define KQ(cqs) "scheduler: {queue: kueue, kueue: {flavors: [{name: h, match: H100}], " \
                "default_queue: a, cluster_queues: [" cqs "]}}\n"

/* Kueue gates pods: a workload it has not admitted is a suspended Job with no
 * pods, which the autoscaler never sees.  Four 8-GPU jobs at 0 on a queue
 * of 8 GPUs: one node, the jobs one after another on it (190 s + k x 1 h);
 * without the gate four nodes came up (and were added again and again as
 * the idle ones left).  The queue's cohort lends 8 more: two nodes; with
 * borrowing_limit 0: one.  A quota of 32: four.  StrictFIFO: the second
 * 8-GPU job does not fit 12 GPUs and holds back the 4-GPU one behind it
 * (one node) until the first ends at 3790 s: the second takes its node,
 * the 4-GPU job's pods appear and get a node of their own (scan at 3800 s,
 * ready 180 s later); BestEffortFIFO lets it by at once (two nodes, 190 s).
 * Karpenter likewise. */
static void test_kueue_gate(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    const double four[][3] = {{0, 8, 3600}, {0, 8, 3600}, {0, 8, 3600}, {0, 8, 3600}};
    res_t r;
    run("{pool: p}", KQ("{name: a, quotas: [{flavor: h, nominal: 8}]}"), four, 4, &r);
    assert_int_equal(peak_nodes(&r, 1e9), 1);
    for (size_t i = 0; i < 4; i++)
        assert_double_equal(fs_test_find(&r.rows, i + 1)->start, 190 + 3600.0 * (double)i, 1e-9);
    res_free(&r);
    run("{pool: p}",
        KQ("{name: a, cohort: c, quotas: [{flavor: h, nominal: 8}]}, "
           "{name: b, cohort: c, quotas: [{flavor: h, nominal: 8}]}"),
        four, 4, &r);
    assert_int_equal(peak_nodes(&r, 1e9), 2);
    assert_double_equal(fs_test_find(&r.rows, 2)->start, 190, 1e-9);
    res_free(&r);
    run("{pool: p}",
        KQ("{name: a, cohort: c, quotas: [{flavor: h, nominal: 8, borrowing_limit: 0}]}, "
           "{name: b, cohort: c, quotas: [{flavor: h, nominal: 8}]}"),
        four, 4, &r);
    assert_int_equal(peak_nodes(&r, 1e9), 1);
    res_free(&r);
    run("{pool: p}", KQ("{name: a, quotas: [{flavor: h, nominal: 32}]}"), four, 4, &r);
    assert_int_equal(peak_nodes(&r, 1e9), 4);
    res_free(&r);
    const double mix[][3] = {{0, 8, 3600}, {0, 8, 3600}, {0, 4, 3600}};
    run("{pool: p}", KQ("{name: a, strategy: StrictFIFO, quotas: [{flavor: h, nominal: 12}]}"),
        mix, 3, &r);
    assert_int_equal(peak_nodes(&r, 3600), 1);
    assert_double_equal(fs_test_find(&r.rows, 3)->start, 3790 + 10 + 180, 1e-9);
    res_free(&r);
    run("{pool: p}", KQ("{name: a, quotas: [{flavor: h, nominal: 12}]}"), mix, 3, &r);
    assert_int_equal(peak_nodes(&r, 1e9), 2);
    assert_double_equal(fs_test_find(&r.rows, 3)->start, 190, 1e-9);
    res_free(&r);
    run_text(KP_ONE(4, "    node_groups: [{pool: p}]\n") KQ("{name: a, quotas: [{flavor: h, nominal: 8}]}"),
             four, 4, &r);
    assert_int_equal(peak_nodes(&r, 1e9), 1);
    res_free(&r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- Cluster Autoscaler expanders and failed scale-ups -------------------------
 * Two node groups a (8-GPU nodes) and b (4-GPU nodes, max 2) that every job
 * may use; three 4-GPU jobs at 0.  The options of the 10 s scan: a, 2 new
 * nodes holding the 3 jobs (16 GPUs, 12 used: 25% idle); b, its 2 nodes
 * holding 2 jobs (none idle).  Only one group grows per scan.  If b grew,
 * the 20 s scan finds the third job held by no in-flight node and grows a
 * by one node (b is at max); if a grew, its nodes hold every job. */
#define CA_TWO(extra)                                                                            \
    "cluster:\n  pools: [{name: a, gpu: H100, nodes: 4, gpus_per_node: 8},\n"                    \
    "          {name: b, gpu: H100, nodes: 4, gpus_per_node: 4}]\n"                               \
    "  autoscale:\n    node_groups: [{pool: a}, {pool: b, max: 2}]\n" extra

static const double three4[][3] = {{0, 4, 3600}, {0, 4, 3600}, {0, 4, 3600}};

/* Which group the 10 s scan grew: 'b' (2 nodes at 10 s, 3 at 20 s, two jobs
 * in pool b from 190 s, the third in a from 200 s) or 'a' (2 nodes, every
 * job in pool a at 190 s). */
static char first_group(const res_t *r)
{
    assert_int_equal(at(r, 10)->nodes_provisioning, 2);
    if (at(r, 20)->nodes_provisioning == 3) {
        size_t in_b = 0;
        for (size_t i = 0; i < r->rows.n; i++) {
            const fs_job_row_t *j = &r->rows.r[i];
            in_b += j->pool == 1;
            assert_double_equal(j->start, j->pool == 1 ? 190 : 200, 1e-9);
        }
        assert_int_equal(in_b, 2);
        return 'b';
    }
    assert_int_equal(at(r, 20)->nodes_provisioning, 2);
    for (size_t i = 0; i < r->rows.n; i++) {
        assert_int_equal(r->rows.r[i].pool, 0);
        assert_double_equal(r->rows.r[i].start, 190, 1e-9);
    }
    return 'a';
}

static void test_ca_expanders(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    res_t r;
    run_text(CA_TWO(""), three4, 3, &r);        /* least-waste, upstream's default */
    assert_int_equal(first_group(&r), 'b');
    res_free(&r);
    run_text(CA_TWO("    expander: most-pods\n"), three4, 3, &r);
    assert_int_equal(first_group(&r), 'a');
    res_free(&r);
    run_text(CA_TWO("    expander: priority\n    priorities: {a: 10, b: 1}\n"), three4, 3, &r);
    assert_int_equal(first_group(&r), 'a');
    res_free(&r);
    /* b listed: it wins; at 20 s only a helps, unlisted: it grows */
    run_text(CA_TWO("    expander: priority\n    priorities: {b: -5}\n"), three4, 3, &r);
    assert_int_equal(first_group(&r), 'b');
    res_free(&r);
    /* random: both groups over 24 seeds, each seed's choice the same twice */
    int seen_a = 0, seen_b = 0;
    for (int seed = 1; seed <= 24; seed++) {
        char text[512];
        snprintf(text, sizeof text, "seed: %d\n" CA_TWO("    expander: random\n"), seed);
        run_text(text, three4, 3, &r);
        char g = first_group(&r);
        res_free(&r);
        run_text(text, three4, 3, &r);
        assert_int_equal(first_group(&r), g);
        res_free(&r);
        seen_a += g == 'a';
        seen_b += g == 'b';
    }
    assert_true(seen_a >= 4 && seen_b >= 4);    /* binomial(24, 1/2): P(< 4) < 1e-3 */
    assert_int_equal(fs_alloc_live(), live0);
}

/* A failed scale-up: a is preferred (priority) but its scale-up fails; its
 * node counts as provisioning (CA waits for it) until max_node_provision_time
 * (305 s) after the 10 s decision, 315 s; a is then backed off (5 min) and
 * the 320 s scan grows b: its GPUs at 320 + 180 = 500 s.  The same when a's
 * provision (20 min) exceeds the default 15 min: abandoned at 910 s, before
 * that instant's scan, which grows b: the job at 910 + 180 = 1090 s.  Without the failure the job starts at 190 s. */
static void test_ca_failed_provision(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    const double one[][3] = {{0, 4, 3600}};
    res_t r;
#define CA_FAIL(groups, extra)                                                                   \
    "cluster:\n  pools: [{name: a, gpu: H100, nodes: 4, gpus_per_node: 8},\n"                    \
    "          {name: b, gpu: H100, nodes: 4, gpus_per_node: 4}]\n"                               \
    "  autoscale:\n    node_groups: [" groups ", {pool: b}]\n"                                    \
    "    expander: priority\n    priorities: {a: 10, b: 1}\n" extra
    run_text(CA_FAIL("{pool: a, provision_failure: 1}", "    max_node_provision_time: 305s\n"),
             one, 1, &r);
    assert_int_equal(r.rows.n, 1);
    assert_int_equal(r.rows.r[0].pool, 1);
    assert_double_equal(r.rows.r[0].start, 500, 1e-9);
    assert_int_equal(at(&r, 10)->nodes_provisioning, 1);
    assert_int_equal(at(&r, 310)->nodes_provisioning, 1);  /* waited for */
    assert_int_equal(at(&r, 310)->nodes_autoscaled, 0);
    assert_int_equal(at(&r, 320)->nodes_provisioning, 1);  /* b's */
    assert_int_equal(at(&r, 500)->nodes_autoscaled, 1);
    res_free(&r);
    run_text(CA_FAIL("{pool: a, provision: 20m}", ""), one, 1, &r);
    assert_int_equal(r.rows.r[0].pool, 1);
    assert_double_equal(r.rows.r[0].start, 1090, 1e-9);
    res_free(&r);
    run_text(CA_FAIL("{pool: a, provision_failure: 0}", ""), one, 1, &r);
    assert_int_equal(r.rows.r[0].pool, 0);
    assert_double_equal(r.rows.r[0].start, 190, 1e-9);
    res_free(&r);
#undef CA_FAIL
    /* one group that always fails: the job never starts, nothing is owned
     * (no capacity), and the group is retried after each backoff: decisions
     * at 10 s, then 315 + 300 = 615 s (its backoff), ... */
    run_text("cluster:\n  pools: [{name: a, gpu: H100, nodes: 4, gpus_per_node: 8}]\n"
             "  autoscale:\n    node_groups: [{pool: a, provision_failure: 1}]\n"
             "    max_node_provision_time: 305s\n",
             one, 1, &r);
    assert_int_equal(r.rows.n, 1);
    assert_true(r.rows.r[0].start < 0 || r.rows.r[0].pool < 0);
    assert_double_equal(r.t.gpu_s_capacity, 0, 1e-9);
    assert_int_equal(at(&r, 310)->nodes_provisioning, 1);
    assert_int_equal(at(&r, 320)->nodes_provisioning, 0);  /* backed off until 615 s */
    assert_int_equal(at(&r, 610)->nodes_provisioning, 0);
    assert_int_equal(at(&r, 620)->nodes_provisioning, 1);  /* retried at the 620 s scan */
    res_free(&r);
    assert_int_equal(fs_alloc_live(), live0);
}

static void expect_error(const char *group, const char *extra, const char *want)
{
    char text[1024];
    snprintf(text, sizeof text,
             "name: a\ncluster:\n  pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]\n"
             "  autoscale: {node_groups: [%s]}\n"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
             "duration: {dist: constant, value: 1h}}}\n%s",
             group, extra);
    fs_error_t err;
    assert_int_equal(fs_test_create(text, &err), FS_EINVAL);
    if (!strstr(err.msg, want))
        fail_msg("expected '%s' in: %s", want, err.msg);
}

/* As expect_error, the autoscale block's keys beside node_groups given
 * (node_groups [{pool: p}] unless they give it). */
static void expect_error_as(const char *keys, const char *want)
{
    char text[1024];
    snprintf(text, sizeof text,
             "name: a\ncluster:\n  pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]\n"
             "  autoscale: {%s%s}\n"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
             "duration: {dist: constant, value: 1h}}}\n",
             strstr(keys, "node_groups") ? "" : "node_groups: [{pool: p}], ", keys);
    fs_error_t err;
    assert_int_equal(fs_test_create(text, &err), FS_EINVAL);
    if (!strstr(err.msg, want))
        fail_msg("expected '%s' in: %s", want, err.msg);
}

static void test_errors(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    expect_error("{pool: q}", "", "cluster.autoscale.node_groups.0.pool: no pool named 'q'");
    expect_error("{pool: p, min: 3, max: 2}", "", "node_groups.0.min: 3 is above max (2)");
    expect_error("{pool: p, max: 5}", "", "node_groups.0.max: 5 nodes, more than pool 'p' has (4");
    expect_error("{pool: p}, {pool: p}", "", "node_groups.1.pool: pool 'p' is already a node group");
    expect_error("{pool: p, provision: -1s}", "", "t.yaml:4:");
    /* a node group's nodes come and go with the autoscaler, not a purchase timeline */
    expect_error("{pool: p}", "cost: {purchases: [{pool: p, nodes: 2, at: 10d}]}\n",
                 "node_groups.0.pool: pool 'p' also has cost.purchases");
    expect_error("{pool: p}", "cost: {pools: [{pool: p, online: 5d}]}\n",
                 "node_groups.0.pool: pool 'p' also has cost.pools online/retire dates");
    /* expanders and failed scale-ups: FILE:LINE:COL of the key */
    expect_error_as("expander: cheapest", "t.yaml:4:");
    expect_error_as("expander: cheapest", "least-waste");
    expect_error_as("priorities: {q: 5}", "cluster.autoscale.priorities: 'q' is not a node group");
    expect_error_as("priorities: {q: 5}", "t.yaml:4:");
    expect_error_as("priorities: {p: high}",
                    "cluster.autoscale.priorities.p: expected an integer priority, found 'high'");
    expect_error("{pool: p, provision_failure: 1.5}", "", "t.yaml:4:");
    expect_error("{pool: p, provision_failure: -0.1}", "", "provision_failure");
    expect_error_as("provisioner: karpenter, node_groups: [{pool: p, provision_failure: 0.5}]",
                    "node_groups.0.provision_failure: failed scale-ups are modelled for "
                    "provisioner cluster-autoscaler only");
    expect_error_as("max_node_provision_time: 0s", "max_node_provision_time");
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_job),       cmocka_unit_test(test_binpacking),
        cmocka_unit_test(test_min_max),       cmocka_unit_test(test_delay_after_add),
        cmocka_unit_test(test_errors),        cmocka_unit_test(test_kp_batch),
        cmocka_unit_test(test_kp_cheapest),   cmocka_unit_test(test_kp_consolidation),
        cmocka_unit_test(test_kp_limits),     cmocka_unit_test(test_kp_gang),
        cmocka_unit_test(test_kueue_gate),    cmocka_unit_test(test_ca_expanders),
        cmocka_unit_test(test_ca_failed_provision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
