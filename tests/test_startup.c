/*
 * Pod start-up (models/fs_startup.c) on hand cases: image pulls at the
 * node's or the registry's share of bandwidth, the per-node image cache
 * (a second job waits for a pull in flight, a cached image costs nothing,
 * LRU eviction by disk size), container start and weight load; the job
 * holds its GPUs while starting (startup_s, gpu_s_startup) and its
 * completion moves by exactly the start-up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../models/fs_model.h"
#include "../sim/fs_alloc.h"
#include "fs_test_util.h"

#define FLEET "name: s\ncluster:\n  pools: [{name: p, gpu: H100, nodes: 4, gpus_per_node: 8}]\n" \
              "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "                   \
              "duration: {dist: constant, value: 1h}}}\nscheduler: {placement: first_fit}\n"

/* jobs: {submit s, gpus, duration s, class} */
static void run(const char *startup, const double (*jobs)[4], size_t n, fs_test_rows_t *rows,
                fs_run_totals_t *t)
{
    char text[2048];
    snprintf(text, sizeof text, FLEET "startup:\n%s", startup);
    fs_job_t js[16];
    memset(js, 0, sizeof js);
    for (size_t i = 0; i < n; i++) {
        js[i] = (fs_job_t){.id = i + 1, .submit = (fs_time_t)(jobs[i][0] * 1e6),
                           .gpus = (uint32_t)jobs[i][1], .gpu_milli = 1000,
                           .duration = (fs_time_t)(jobs[i][2] * 1e6),
                           .job_class = (uint32_t)jobs[i][3], .tenant = -1, .gpu_type = -1};
    }
    rows->n = 0;
    fs_sink_t sink = {.job = fs_test_collect, .ud = rows};
    fs_test_run_yaml(text, js, n, &sink, t);
}

static const fs_job_row_t *job(const fs_test_rows_t *rs, uint64_t id)
{
    const fs_job_row_t *r = fs_test_find(rs, id);
    assert_non_null(r);
    return r;
}

/* Container start and load only: a 1-h job ends 1 h + 3 s after it
 * starts, and held 8 GPUs x 3 s starting. */
static void test_container_and_load(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    const double jobs[][4] = {{0, 8, 3600, 0}};
    run("  container: 2s\n  load: 1s\n", jobs, 1, &rs, &t);
    assert_double_equal(job(&rs, 1)->start, 0, 0);
    assert_double_equal(job(&rs, 1)->end, 3603, 1e-9);
    assert_double_equal(job(&rs, 1)->startup_s, 3, 1e-9);
    assert_double_equal(job(&rs, 1)->run, 3603, 1e-9);
    assert_double_equal(t.gpu_s_startup, 24, 1e-9);
    fs_test_rows_free(&rs);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A 9,600 MiB image at 80 MiB/s: 120 s.  Job 1 pulls it on node 0 at 0 s;
 * job 2 (same class, 4 GPUs) arrives at 60 s, lands on node 1 (first fit:
 * node 0 is full) and pulls again; job 3 at 7,000 s lands on node 0 and
 * finds it cached.  Job 4 (4 GPUs, at 100 s) shares node 1 with job 2:
 * it waits for job 2's pull in flight (20 s), not a pull of its own. */
static void test_pull_and_cache(void **st)
{
    (void)st;
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    const double jobs[][4] = {{0, 8, 3600, 0}, {60, 4, 3600, 0}, {100, 4, 3600, 0},
                              {7000, 8, 3600, 0}};
    run("  image_size: 9600\n  node_bandwidth: 80\n", jobs, 4, &rs, &t);
    assert_double_equal(job(&rs, 1)->startup_s, 120, 1e-9);
    assert_double_equal(job(&rs, 1)->end, 3720, 1e-9);
    assert_double_equal(job(&rs, 2)->startup_s, 120, 1e-9);
    assert_double_equal(job(&rs, 3)->startup_s, 80, 1e-9);   /* the pull of job 2 ends at 180 s */
    assert_double_equal(job(&rs, 4)->startup_s, 0, 1e-9);
    assert_double_equal(job(&rs, 4)->end, 10600, 1e-9);
    assert_double_equal(t.gpu_s_startup, 8 * 120.0 + 4 * 120.0 + 4 * 80.0, 1e-6);
    fs_test_rows_free(&rs);
}

/* The registry's 160 MiB/s shared: a 32-GPU job on 4 nodes pulls 4 images
 * at once, each at 40 MiB/s (not the node's 80): 240 s.  Without a
 * registry limit, 120 s. */
static void test_registry_share(void **st)
{
    (void)st;
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    const double jobs[][4] = {{0, 32, 3600, 0}};
    run("  image_size: 9600\n  node_bandwidth: 80\n  registry_bandwidth: 160\n", jobs, 1, &rs, &t);
    assert_double_equal(job(&rs, 1)->startup_s, 240, 1e-9);
    run("  image_size: 9600\n  node_bandwidth: 80\n", jobs, 1, &rs, &t);
    assert_double_equal(job(&rs, 1)->startup_s, 120, 1e-9);
    fs_test_rows_free(&rs);
}

/* Two classes with 6,000 MiB images on nodes of 10,000 MiB disk (60 MiB/s:
 * 100 s a pull, 30 s load for class 1): on node 0, class 0 at 0 s pulls;
 * class 1 at 5,000 s evicts it and pulls; class 0 again at 10,000 s pulls
 * again.  With 20,000 MiB of disk the third job finds its image. */
static void test_lru_eviction(void **st)
{
    (void)st;
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    const double jobs[][4] = {{0, 8, 3600, 0}, {5000, 8, 3600, 1}, {10000, 8, 3600, 0}};
#define LRU_CFG(disk) "  node_bandwidth: 60\n  node_disk: " disk "\n  images:\n" \
                     "    - {class: 0, size: 6000}\n    - {class: 1, size: 6000, load: 30s}\n"
    run(LRU_CFG("10000"), jobs, 3, &rs, &t);
    assert_double_equal(job(&rs, 1)->startup_s, 100, 1e-9);
    assert_double_equal(job(&rs, 2)->startup_s, 130, 1e-9);
    assert_double_equal(job(&rs, 3)->startup_s, 100, 1e-9);
    run(LRU_CFG("20000"), jobs, 3, &rs, &t);
    assert_double_equal(job(&rs, 3)->startup_s, 0, 1e-9);
    fs_test_rows_free(&rs);
}

/* A start-up cut by a failure is paid again, and the restore after a
 * failure follows the start-up.  A 32-GPU job (every node) pulls for 120 s;
 * node 0 fails at 60 s (a planned outage of 10 min, jobs die): the job
 * waits for it and restarts at 660 s with its image cached everywhere (the
 * pulls went on and ended at 120 s): 2 s of container, then the 5-min
 * restore, then the hour. */
static void test_failure_during_startup(void **st)
{
    (void)st;
    fs_test_rows_t rs = {0};
    fs_run_totals_t t;
    const double jobs[][4] = {{0, 32, 3600, 0}};
    run("  image_size: 9600\n  node_bandwidth: 80\n  container: 2s\n"
        "recovery: {restore: 5m, detection: 0s}\n"
        "failures:\n  planned: [{at: 1m, kind: node, unit: 0, duration: 10m, how: fail}]\n"
        "  components: []\n",
        jobs, 1, &rs, &t);
    const fs_job_row_t *r = job(&rs, 1);
    assert_int_equal(r->restarts, 1);
    assert_double_equal(r->startup_s, 60 + 2, 1e-9);
    assert_double_equal(r->end, 60 + 600 + 2 + 300 + 3600, 1e-6);
    assert_double_equal(r->recovery_s, 300, 1e-6);
    fs_test_rows_free(&rs);
}

static void test_errors(void **st)
{
    (void)st;
    const char *bad[] = {
        FLEET "startup: {image_size: 20000, node_disk: 10000}\n",
        FLEET "startup: {images: [{class: 1, size: 1}, {class: 1, size: 2}]}\n",
        FLEET "startup: {node_bandwidth: 0}\n",
    };
    const char *want[] = {"startup.image_size: 20000 MiB is more than a node's image cache",
                          "startup.images.1.class: class 1 already has an image (item 0)",
                          "t.yaml:6:27: startup.node_bandwidth: 0 is out of range"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fs_error_t err;
        assert_int_equal(fs_test_create(bad[i], &err), FS_EINVAL);
        if (!strstr(err.msg, want[i]))
            fail_msg("case %zu: '%s'", i, err.msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_container_and_load), cmocka_unit_test(test_pull_and_cache),
        cmocka_unit_test(test_registry_share),     cmocka_unit_test(test_lru_eviction),
        cmocka_unit_test(test_failure_during_startup), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
