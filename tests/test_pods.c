/*
 * Kubernetes pods are never split over nodes (issue 13): a job of a
 * pod-level trace (openb, one-instance PAI jobs: FS_JOB_SINGLE_NODE) runs
 * on one node, in the pools whose nodes hold all its GPUs; a gang job of
 * the same size may still span nodes.
 *   - by hand on a fleet of 2-GPU nodes plus one 4-GPU node, under every
 *     placement and under FIFO, EASY, Kueue and Volcano;
 *   - a pod larger than every node is rejected, never queued for ever;
 *   - the openb reader marks its pods, the PAI reader one-pod jobs only;
 *   - the real openb multigpu50 fixture replayed over the openb node
 *     list: no row spans more than one node.
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
#include "models/fs_model.h"
#include "models/fs_place.h"
#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"
#include "traces/fs_memsrc.h"
#include "traces/fs_trace.h"

#define S(x) ((fs_time_t)((x) * 1e6))

static fs_job_t job(uint64_t id, double submit, uint32_t gpus, double dur, int pod)
{
    fs_job_t j;
    fs_job_init(&j);
    j.id = id;
    j.submit = S(submit);
    j.gpus = gpus;
    j.duration = S(dur);
    if (pod)
        j.flags |= FS_JOB_SINGLE_NODE;
    return j;
}

static void run(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, fs_test_rows_t *rs)
{
    fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
    rs->n = 0;
    fs_test_run_cfg(cfg, jobs, n, &sink, NULL);
}

/* Pools: "p" 4 nodes x 2 GPUs (listed first), "a" 1 node x 4 GPUs.
 * Pods A (0 s, 4 GPUs, 10 s) and B (1 s, 4 GPUs, 10 s): A takes the 4-GPU
 * node, B waits for it (starts at 10) although 8 GPUs of 2-GPU nodes are
 * free; a gang C (1 s, 4 GPUs) starts at once on two 2-GPU nodes. */
static void test_pod_one_node(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const int places[] = {FS_PLACE_PACK, FS_PLACE_FIRST_FIT, FS_PLACE_BEST_FIT,
                                 FS_PLACE_SPREAD, FS_PLACE_RANDOM, FS_PLACE_TOPOLOGY, FS_PLACE_FGD};
    static const int queues[] = {FS_QUEUE_FIFO, FS_QUEUE_SJF, FS_QUEUE_SRTF};
    for (size_t q = 0; q < sizeof queues / sizeof queues[0]; q++)
        for (size_t k = 0; k < sizeof places / sizeof places[0]; k++) {
            fs_pool_cfg_t pools[2];
            fs_config_t cfg;
            static fs_test_rows_t rs;
            fs_test_base_cfg(&cfg, &pools[0], 4, 2, queues[q]);
            fs_test_add_a100(&cfg, pools, 1);
            pools[1].gpus_per_node = 4;
            cfg.scheduler.placement = places[k];
            cfg.scheduler.candidates = 0;
            cfg.scheduler.checkpoint_interval = 1;
            fs_job_t jobs[] = {job(1, 0, 4, 10, 1), job(2, 1, 4, 10, 1), job(3, 2, 4, 10, 0)};
            run(&cfg, jobs, 3, &rs);
            const fs_job_row_t *a = fs_test_find(&rs, 1), *b = fs_test_find(&rs, 2),
                               *c = fs_test_find(&rs, 3);
            assert_int_equal(a->nodes, 1);
            assert_int_equal(a->pool, 1);
            assert_int_equal(b->nodes, 1);
            assert_int_equal(b->pool, 1);
            assert_double_equal(b->start, 10, 0);
            assert_int_equal(c->nodes, 2);       /* a gang may span nodes */
            assert_double_equal(c->start, 2, 0);
            for (size_t i = 0; i < rs.n; i++)
                assert_int_equal(rs.r[i].state, FS_STATE_COMPLETED);
        }
    assert_int_equal(fs_alloc_live(), live0);
}

/* Pods with CPU (issue 14) through the run model, under every placement,
 * FIFO best effort, SJF and Kueue-free SRTF: 2 nodes x 2 GPUs x 8 cores.
 * Pods A and B (0 s, 1 GPU, 6 cores, 10 s) take one node each; C (1 s, 1
 * GPU, 6 cores) waits for CPU until 10 s although 2 GPUs are free; a
 * CPU-only pod D (2 s, 0 GPUs, 2 cores, 5 s) fits beside A at once; E (3 s,
 * 1 GPU, 9 cores) can never fit a node and is rejected, not queued. */
static void test_pod_cpu(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    static const int places[] = {FS_PLACE_PACK, FS_PLACE_FIRST_FIT, FS_PLACE_BEST_FIT,
                                 FS_PLACE_SPREAD, FS_PLACE_RANDOM, FS_PLACE_FGD,
                                 FS_PLACE_ATC_BEST_FIT, FS_PLACE_GPU_PACKING};
    static const int queues[] = {FS_QUEUE_FIFO, FS_QUEUE_SJF, FS_QUEUE_SRTF};
    for (size_t q = 0; q < sizeof queues / sizeof queues[0]; q++)
        for (size_t k = 0; k < sizeof places / sizeof places[0]; k++)
            for (int ns = FS_SCORE_EXACT; ns <= FS_SCORE_KUBE_NAME; ns++) {
                fs_pool_cfg_t pool;
                fs_config_t cfg;
                static fs_test_rows_t rs;
                fs_test_base_cfg(&cfg, &pool, 2, 2, queues[q]);
                pool.cpu_milli = 8000;
                cfg.scheduler.placement = places[k];
                cfg.scheduler.node_score = ns;
                cfg.scheduler.candidates = 0;
                cfg.scheduler.checkpoint_interval = 1;
                fs_job_t jobs[] = {job(1, 0, 1, 10, 1), job(2, 0, 1, 10, 1), job(3, 1, 1, 10, 1),
                                   job(4, 2, 0, 5, 1), job(5, 3, 1, 10, 1)};
                jobs[0].cpu_milli = jobs[1].cpu_milli = jobs[2].cpu_milli = 6000;
                jobs[3].cpu_milli = 2000;
                jobs[4].cpu_milli = 9000;
                run(&cfg, jobs, 5, &rs);
                const fs_job_row_t *a = fs_test_find(&rs, 1), *c = fs_test_find(&rs, 3),
                                   *d = fs_test_find(&rs, 4), *e = fs_test_find(&rs, 5);
                assert_double_equal(a->start, 0, 0);
                assert_double_equal(c->start, 10, 0);
                assert_double_equal(d->start, 2, 0);
                assert_int_equal(d->state, FS_STATE_COMPLETED);
                assert_int_equal(e->state, FS_STATE_REJECTED);
            }
    assert_int_equal(fs_alloc_live(), live0);
}

/* Only 2-GPU nodes: a 4-GPU pod can never run (rejected at once, not
 * queued for ever); a 4-GPU gang runs on two nodes. */
static void test_pod_larger_than_nodes(void **st)
{
    (void)st;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    static fs_test_rows_t rs;
    fs_test_base_cfg(&cfg, &pool, 4, 2, FS_QUEUE_FIFO);
    fs_job_t jobs[] = {job(1, 0, 4, 10, 1), job(2, 1, 4, 10, 0), job(3, 2, 2, 10, 1)};
    run(&cfg, jobs, 3, &rs);
    assert_int_equal(fs_test_find(&rs, 1)->state, FS_STATE_REJECTED);
    assert_int_equal(fs_test_find(&rs, 2)->state, FS_STATE_COMPLETED);
    assert_int_equal(fs_test_find(&rs, 2)->nodes, 2);
    assert_int_equal(fs_test_find(&rs, 3)->nodes, 1);
    fs_test_rows_free(&rs);
}

/* The placer alone (the path of `fleetsim frag`). */
static void test_placer_place_node(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2];
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pools[0], 4, 2, FS_QUEUE_FIFO);
    fs_test_add_a100(&cfg, pools, 1);
    pools[1].gpus_per_node = 4;
    fs_cluster_t c;
    fs_error_t err;
    assert_int_equal(fs_cluster_init(&c, &cfg.cluster, &err), 0);
    fs_placer_t *pl;
    assert_int_equal(fs_placer_create(&c, FS_PLACE_FIRST_FIT, 0, &cfg.cluster, 1, 0, &pl, &err), 0);
    fs_placement_t a, b, g;
    assert_int_equal(fs_placer_place_node(pl, &c, NULL, 0, 4, 1000, &a), 1);
    assert_int_equal(a.pool, 1);
    assert_int_equal(a.n, 1);
    assert_int_equal(fs_placer_place_node(pl, &c, NULL, 0, 4, 1000, &b), 0);   /* never split */
    const uint32_t only_p[] = {0};
    assert_int_equal(fs_placer_place_node(pl, &c, only_p, 1, 4, 1000, &b), 0);
    assert_int_equal(fs_placer_place(pl, &c, only_p, 1, 4, 1000, &g), 1);      /* a gang is */
    assert_int_equal(g.n, 2);
    assert_int_equal(fs_placer_place_node(pl, &c, only_p, 1, 2, 1000, &b), 1);
    assert_int_equal(b.n, 1);
    fs_cluster_free(&c, &a);
    fs_cluster_free(&c, &b);
    fs_cluster_free(&c, &g);
    fs_placement_release(&a);
    fs_placement_release(&b);
    fs_placement_release(&g);
    fs_placer_destroy(pl);
    fs_cluster_release(&c);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The readers: openb pods are pods; a PAI job is a pod when it has one
 * GPU instance. */
static void test_readers_mark_pods(void **st)
{
    (void)st;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.default_duration = S(60);
    fs_source_t *src;
    fs_error_t err;
    if (fs_trace_open("openb", FS_TEST_DATA "/traces/real/openb_pods_multigpu50_100.csv", &o,
                      &src, &err))
        fail_msg("%s", err.msg);
    fs_job_t jobs[128];
    size_t n, pods = 0;
    assert_int_equal(fs_source_next(src, jobs, 128, &n, &err), 0);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++)
        pods += (jobs[i].flags & FS_JOB_SINGLE_NODE) != 0;
    assert_int_equal(pods, n);
    fs_source_destroy(src);

    char *dir = fs_test_tmpdir();
    char *p = fs_test_path(dir, "pai.csv");
    /* job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type */
    assert_int_equal(fs_test_write(p, "j1,t,1,Terminated,100,200,600,10,400,V100\n"
                                      "j2,w,2,Terminated,100,300,600,10,400,V100\n"
                                      "j3,ps,1,Terminated,100,300,600,10,,\n"
                                      "j3,w,1,Terminated,100,300,600,10,800,V100\n"),
                     0);
    fs_trace_opts_init(&o);
    if (fs_trace_open("pai", p, &o, &src, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(fs_source_next(src, jobs, 128, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(jobs[0].gpus, 4);
    assert_true(jobs[0].flags & FS_JOB_SINGLE_NODE);          /* one instance */
    assert_int_equal(jobs[1].gpus, 8);
    assert_false(jobs[1].flags & FS_JOB_SINGLE_NODE);         /* two pods: a gang */
    assert_true(jobs[2].flags & FS_JOB_SINGLE_NODE);          /* one GPU pod (+ a CPU pod) */
    fs_source_destroy(src);
    fs_test_rmtree(dir);
    free(p);
    free(dir);
}

/* The real openb multigpu50 fixture over the openb node list: no pod on
 * two nodes, under random placement (the worst case for splitting). */
static int count_row(void *ud, const fs_job_row_t *row)
{
    size_t *split = ud;
    if (row->nodes > 1)
        ++*split;
    return 0;
}

static void test_openb_fixture_no_split(void **st)
{
    (void)st;
    static const char *const places[] = {"random", "spread", "pack"};
    for (size_t k = 0; k < 3; k++) {
        char yaml[2048];
        snprintf(yaml, sizeof yaml,
                 "name: pods\nseed: 3\n"
                 "cluster: {from: {format: openb, path: '%s/traces/real/openb_node_list_gpu_node.csv'}}\n"
                 "workload: {trace: {path: '%s/traces/real/openb_pods_multigpu50_100.csv', "
                 "format: openb, default_duration: 1h}}\n"
                 "scheduler: {placement: %s}\noutput: {timeline_interval: 0s}\n",
                 FS_TEST_DATA, FS_TEST_DATA, places[k]);
        fs_config_t cfg;
        fs_error_t err;
        if (fs_scenario_load_string("<pods>", yaml, NULL, 0, &cfg, &err))
            fail_msg("%s", err.msg);
        size_t split = 0;
        fs_run_opts_t opts;
        fs_run_opts_init(&opts);
        opts.on_job = count_row;
        opts.on_job_ud = &split;
        fs_run_report_t rep;
        if (fs_run_config(&cfg, &opts, &rep, &err))
            fail_msg("%s", err.msg);
        fs_config_release(&cfg);
        assert_int_equal(split, 0);
        assert_int_equal(rep.summary.jobs_completed, rep.summary.jobs_submitted);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_one_node),
        cmocka_unit_test(test_pod_larger_than_nodes),
        cmocka_unit_test(test_pod_cpu),
        cmocka_unit_test(test_placer_place_node),
        cmocka_unit_test(test_readers_mark_pods),
        cmocka_unit_test(test_openb_fixture_no_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
