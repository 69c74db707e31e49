/*
 * scheduler.slurm.conf (models/fs_slurmconf.h): a site's slurm.conf in the
 * form Slurm's configurator writes it (tests/data/slurm/slurm.conf) sets
 * the modelled priority and backfill settings; a key the scenario gives
 * wins; bad values are located FILE:LINE:COL and named; other keys, node
 * and partition lines and other SchedulerParameters are ignored.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "models/fs_slurmconf.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"

#define CONF FS_TEST_DATA "/slurm/slurm.conf"

static char *g_dir;

static char *scenario(void)
{
    char *scn = fs_test_path(g_dir, "s.yaml");
    char text[1024];
    snprintf(text, sizeof text, "name: s\n"
             "cluster: {pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]}\n"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1}, "
             "duration: {dist: constant, value: 1h}}}\n"
             "scheduler: {slurm: {conf: '%s'}}\n", CONF);
    assert_int_equal(fs_test_write(scn, text), 0);
    return scn;
}

static void test_site_conf(void **st)
{
    (void)st;
    char *scn = scenario();
    fs_config_t c;
    fs_error_t err;
    if (fs_scenario_load_file(scn, NULL, 0, &c, &err))
        fail_msg("%s", err.msg);
    const fs_sched_cfg_t *s = &c.scheduler;
    assert_int_equal(s->queue, FS_QUEUE_SLURM);
    assert_int_equal(s->backfill, FS_BACKFILL_CONSERVATIVE);
    assert_int_equal(s->bf.mode, FS_BF_SLURM);
    assert_int_equal(s->bf.max_job_test, 300);
    assert_int_equal(s->bf.interval, 45 * FS_US_PER_S);
    assert_int_equal(s->bf.resolution, 120 * FS_US_PER_S);
    assert_int_equal(s->bf.window, (fs_time_t)2880 * 60 * FS_US_PER_S);
    assert_int_equal(s->slurm.weight_age, 1000);
    assert_int_equal(s->slurm.weight_fairshare, 10000);
    assert_int_equal(s->slurm.weight_jobsize, 500);
    assert_int_equal(s->slurm.weight_partition, 1000);
    assert_int_equal(s->slurm.weight_qos, 2000);
    assert_int_equal(s->slurm.decay_half_life, (fs_time_t)14 * 86400 * FS_US_PER_S);
    assert_int_equal(s->slurm.max_age, (fs_time_t)7 * 86400 * FS_US_PER_S);
    assert_int_equal(s->slurm.calc_period, 5 * 60 * FS_US_PER_S);
    assert_int_equal(s->slurm.favor_small, 0);
    fs_config_release(&c);

    /* a key the scenario gives wins over the file */
    const char *sets[] = {"scheduler.slurm.weight_age=7", "scheduler.bf.interval=10s",
                          "scheduler.queue=fifo"};
    if (fs_scenario_load_file(scn, sets, 3, &c, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(c.scheduler.slurm.weight_age, 7);
    assert_int_equal(c.scheduler.bf.interval, 10 * FS_US_PER_S);
    assert_int_equal(c.scheduler.queue, FS_QUEUE_FIFO);
    assert_int_equal(c.scheduler.slurm.weight_qos, 2000);   /* the others from the file */
    fs_config_release(&c);
    free(scn);
}

static void test_errors(void **st)
{
    (void)st;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"ClusterName=x\nPriorityWeightAge=lots\n", ":2:19: PriorityWeightAge: expected an integer"},
        {"PriorityDecayHalfLife=7days\n", ":1:23: PriorityDecayHalfLife: expected a Slurm time"},
        {"PriorityDecayHalfLife=7 days\n", ":1:25: slurm.conf: expected KEY=VALUE (got 'days')"},
        {"PriorityMaxAge=0\n", ":1:16: PriorityMaxAge: expected a Slurm time > 0"},
        {"PriorityFavorSmall=maybe\n", ":1:20: PriorityFavorSmall: expected YES or NO"},
        {"PriorityType=priority/fair_tree\n", ":1:14: PriorityType: expected priority/multifactor"},
        {"SchedulerType=sched/hold\n", ":1:15: SchedulerType: expected sched/backfill"},
        {"SchedulerParameters=bf_continue,bf_window=x\n",
         ":1:43: SchedulerParameters: expected bf_window=N with N an integer >= 1 (minutes)"},
        {"# a\nSchedulerType\n", ":2:1: slurm.conf: expected KEY=VALUE"},
        {"Include /etc/slurm/nodes.conf\n", ":1:1: Include: the included file is not read"},
    };
    char *conf = fs_test_path(g_dir, "bad.conf");
    char *scn = fs_test_path(g_dir, "b.yaml");
    char text[1024];
    snprintf(text, sizeof text, "name: s\n"
             "cluster: {pools: [{name: p, gpu: H100, nodes: 2, gpus_per_node: 8}]}\n"
             "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1}, "
             "duration: {dist: constant, value: 1h}}}\n"
             "scheduler: {slurm: {conf: bad.conf}}\n");
    assert_int_equal(fs_test_write(scn, text), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(fs_test_write(conf, cases[i].text), 0);
        fs_config_t c;
        fs_error_t err;
        int rc = fs_scenario_load_file(scn, NULL, 0, &c, &err);
        char want[512];
        snprintf(want, sizeof want, "%s%s", conf, cases[i].want);
        if (rc != FS_EINVAL || strncmp(err.msg, want, strlen(want)) != 0)
            fail_msg("case %zu: rc %d '%s' (want '%s')", i, rc, err.msg, want);
    }
    /* a missing file: named, FS_EIO */
    assert_int_equal(fs_test_write(scn, "name: s\n"
                                        "cluster: {pools: [{name: p, gpu: H100, nodes: 1, "
                                        "gpus_per_node: 8}]}\n"
                                        "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: "
                                        "{1: 1}, duration: {dist: constant, value: 1h}}}\n"
                                        "scheduler: {slurm: {conf: nowhere.conf}}\n"), 0);
    fs_config_t c;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_file(scn, NULL, 0, &c, &err), FS_EIO);
    assert_non_null(strstr(err.msg, "scheduler.slurm.conf: cannot read"));
    assert_non_null(strstr(err.msg, "nowhere.conf"));
    free(conf);
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
        cmocka_unit_test(test_site_conf),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
