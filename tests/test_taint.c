/*
 * Taints and tolerations (#14; models/fs_taint.h, docs/pods.md): the list
 * syntax and its located errors, Kubernetes' matching (Equal with a value,
 * Exists without), and runs where a reserved pool takes only the jobs of
 * the tenants that tolerate its taints.
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
#include "../models/fs_taint.h"
#include "../scenarios/fs_scenario.h"
#include "../sim/fs_alloc.h"
#include "../traces/fs_memsrc.h"
#include "fs_test_util.h"

static void test_syntax(void **st)
{
    (void)st;
    char why[300];
    size_t off = 99;
    assert_int_equal(fs_taint_check("dedicated=research:NoSchedule", &off, why, sizeof why), 0);
    assert_int_equal(fs_taint_check("a:NoSchedule, b/c.d=e-f_1:NoSchedule", &off, why, sizeof why), 0);
    const struct { const char *list; size_t off; const char *why; } bad[] = {
        {"dedicated=research", 0, "has no effect"},
        {"a:NoSchedule, b=c:NoExecute", 14, "effect 'NoExecute' is not modelled"},
        {"a:PreferNoSchedule", 0, "is not modelled"},
        {"a:Sometimes", 0, "is not a taint effect"},
        {"=x:NoSchedule", 0, "taint key is 1 to 253"},
        {"a b:NoSchedule", 0, "' ' cannot be in a taint key"},
        {"a=:NoSchedule", 0, "taint value is 1 to 63"},
        {"a=b c:NoSchedule", 0, "' ' cannot be in a taint value"},
        {"a:NoSchedule,,b:NoSchedule", 13, "has no effect"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(fs_taint_check(bad[i].list, &off, why, sizeof why), -1);
        if (!strstr(why, bad[i].why) || off != bad[i].off)
            fail_msg("'%s': got '%s' at %zu, expected '%s' at %zu", bad[i].list, why, off,
                     bad[i].why, bad[i].off);
    }
}

static void test_matching(void **st)
{
    (void)st;
    const char *t = "dedicated=research:NoSchedule, gpu:NoSchedule";
    assert_true(fs_taint_tolerated(NULL, NULL));
    assert_true(fs_taint_tolerated("", NULL));
    assert_false(fs_taint_tolerated(t, NULL));
    /* Equal needs the value, Exists any value; both taints must be tolerated */
    assert_true(fs_taint_tolerated(t, "gpu:NoSchedule, dedicated=research:NoSchedule"));
    assert_true(fs_taint_tolerated(t, "dedicated:NoSchedule, gpu:NoSchedule"));
    assert_false(fs_taint_tolerated(t, "dedicated=prod:NoSchedule, gpu:NoSchedule"));
    assert_false(fs_taint_tolerated(t, "dedicated=research:NoSchedule"));
    /* a toleration with a value does not match a taint without one */
    assert_false(fs_taint_tolerated("gpu:NoSchedule", "gpu=h100:NoSchedule"));
    assert_false(fs_taint_tolerated("gpus:NoSchedule", "gpu:NoSchedule"));
}

#define FLEET "name: t\nhorizon: 30d\n"                                                        \
              "cluster:\n  pools:\n"                                                          \
              "    - {name: shared, gpu: H100, nodes: 1, gpus_per_node: 8}\n"                 \
              "    - {name: reserved, gpu: H100, nodes: 1, gpus_per_node: 8,\n"               \
              "       taints: 'dedicated=research:NoSchedule'}\n"                             \
              "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "                    \
              "duration: {dist: constant, value: 1h}}}\n"                                      \
              "scheduler: {placement: first_fit, tolerations: {research: 'dedicated:NoSchedule'}}\n"

/* Three 8-GPU jobs of 1 h at 0: two of research, one of prod (submitted
 * first).  prod takes the shared pool; research's first job the reserved
 * one, its second waits for whichever frees first (both at 1 h: the
 * shared, first fit).  A job of 'ops' (no toleration) after them waits for
 * the shared pool though the reserved one is free at 1 h. */
static void test_reserved_pool(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_string("t.yaml", FLEET, NULL, 0, &cfg, &err), 0);
    static const char *const tenants[] = {"prod", "research", "ops"};
    fs_job_t js[4];
    for (int i = 0; i < 4; i++) {
        fs_job_init(&js[i]);
        js[i].id = (uint64_t)i + 1;
        js[i].gpus = 8;
        js[i].duration = 3600000000;
    }
    js[0].tenant = 0;
    js[1].tenant = 1;
    js[2].tenant = 1;
    js[3].tenant = 2;
    js[3].submit = 1;
    fs_source_t *src;
    assert_int_equal(fs_memsrc_create(js, 4, tenants, 3, NULL, 0, &src, &err), 0);
    fs_test_rows_t rs = {0};
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
    fs_run_totals_t t;
    fs_test_run_src(&cfg, src, &sink, &t);
    assert_int_equal(rs.n, 4);
    assert_int_equal(fs_test_find(&rs, 1)->pool, 0);      /* prod: shared */
    assert_int_equal(fs_test_find(&rs, 2)->pool, 1);      /* research: reserved */
    assert_double_equal(fs_test_find(&rs, 2)->start, 0, 0);
    assert_double_equal(fs_test_find(&rs, 3)->start, 3600, 1e-9);   /* waits an hour */
    /* ops tolerates nothing: never on the reserved pool, so it waits for the
     * shared one behind research's second job (FIFO): starts at 2 h */
    assert_int_equal(fs_test_find(&rs, 4)->pool, 0);
    assert_double_equal(fs_test_find(&rs, 4)->start, 7200, 1e-9);
    fs_test_rows_free(&rs);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* With every pool tainted, a tenant that tolerates nothing can never run:
 * its job is rejected (as one that fits no pool), the others run. */
static void test_all_tainted(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_config_t cfg;
    fs_error_t err;
    assert_int_equal(fs_scenario_load_string(
                         "t.yaml",
                         "name: t\nhorizon: 30d\ncluster:\n  pools:\n"
                         "    - {name: r, gpu: H100, nodes: 1, gpus_per_node: 8, taints: 'a:NoSchedule'}\n"
                         "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
                         "duration: {dist: constant, value: 1h}}}\n"
                         "scheduler: {tolerations: {x: 'a=1:NoSchedule, a:NoSchedule'}}\n",
                         NULL, 0, &cfg, &err),
                     0);
    static const char *const tenants[] = {"x", "y"};
    fs_job_t js[2];
    for (int i = 0; i < 2; i++) {
        fs_job_init(&js[i]);
        js[i].id = (uint64_t)i + 1;
        js[i].gpus = 8;
        js[i].duration = 3600000000;
        js[i].tenant = i;
    }
    fs_source_t *src;
    assert_int_equal(fs_memsrc_create(js, 2, tenants, 2, NULL, 0, &src, &err), 0);
    fs_test_rows_t rs = {0};
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
    fs_test_run_src(&cfg, src, &sink, NULL);
    assert_int_equal(fs_test_find(&rs, 1)->state, FS_STATE_COMPLETED);
    assert_int_equal(fs_test_find(&rs, 2)->state, FS_STATE_REJECTED);
    fs_test_rows_free(&rs);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Located errors: a bad token points at itself inside the value; taints
 * with Kueue are refused at the pool's key. */
static void test_scenario_errors(void **st)
{
    (void)st;
    fs_config_t cfg;
    fs_error_t err;
    const char *base = "name: t\nhorizon: 2d\ncluster:\n  pools:\n"
                       "    - {name: r, gpu: H100, nodes: 1, gpus_per_node: 8, taints: 'a:NoSchedule, b:NoExecute'}\n"
                       "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
                       "duration: {dist: constant, value: 1h}}}\n";
    assert_int_equal(fs_scenario_load_string("t.yaml", base, NULL, 0, &cfg, &err), FS_EINVAL);
    /* the quote is at column 64, the value at 65; "b:NoExecute" 14 bytes in */
    if (!strstr(err.msg, "t.yaml:5:79: cluster.pools.0.taints: 'b:NoExecute': effect 'NoExecute' is not modelled"))
        fail_msg("%s", err.msg);
    assert_int_equal(fs_scenario_load_string(
                         "t.yaml",
                         "name: t\nhorizon: 2d\ncluster:\n  pools:\n"
                         "    - {name: r, gpu: H100, nodes: 1, gpus_per_node: 8}\n"
                         "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
                         "duration: {dist: constant, value: 1h}}}\n"
                         "scheduler: {tolerations: {team: 'x=y'}}\n",
                         NULL, 0, &cfg, &err),
                     FS_EINVAL);
    if (!strstr(err.msg, "t.yaml:7:") || !strstr(err.msg, "scheduler.tolerations.team: 'x=y' has no effect"))
        fail_msg("%s", err.msg);
    const char *kueue = "name: t\nhorizon: 2d\ncluster:\n  pools:\n"
                        "    - {name: r, gpu: H100, nodes: 1, gpus_per_node: 8, taints: 'a:NoSchedule'}\n"
                        "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {8: 1}, "
                        "duration: {dist: constant, value: 1h}}}\n"
                        "scheduler: {queue: volcano}\n";
    assert_int_equal(fs_scenario_load_string("t.yaml", kueue, NULL, 0, &cfg, &err), FS_EINVAL);
    if (!strstr(err.msg, "t.yaml:5:") || !strstr(err.msg, "Volcano queues choose pools themselves"))
        fail_msg("%s", err.msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_matching),
        cmocka_unit_test(test_reserved_pool),
        cmocka_unit_test(test_all_tainted),
        cmocka_unit_test(test_scenario_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
