/*
 * Tests of fleets built from real machine lists (traces/fs_fleet): the
 * openb GPU node list (1,213 nodes, 6,212 GPUs), the PAI machine spec
 * (1,897 machines, 6,742 GPUs), both Philly machine lists and the Tiresias
 * cluster spec, all copied from shared/data (tests/data/traces/real);
 * catalog mapping of model names; GPU-type matching; errors with FILE:LINE;
 * allocation failures; and cluster.from in a scenario (pools appended,
 * left out of the dump, a round trip, errors at the key's position).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_test_util.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "models/fs_fleetcfg.h"

#define REAL FS_TEST_DATA "/traces/real"

static char *g_dir;

static int setup(void **state)
{
    (void)state;
    g_dir = fs_test_tmpdir();
    return g_dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    fs_test_rmtree(g_dir);
    free(g_dir);
    return 0;
}

static void free_pools(fs_pool_cfg_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fs_free(p[i].name);
        fs_free(p[i].gpu);
        fs_free(p[i].node_rank);
    }
    fs_free(p);
}

typedef struct want {
    const char *name, *gpu;
    uint32_t nodes, gpn, cpu, mem;
} want_t;

static void load_and_check(int format, const char *path, const char *gpu, const want_t *w,
                           size_t nw, const fs_fleet_stats_t *ws)
{
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t *p = NULL;
    size_t n = 0;
    fs_fleet_stats_t st;
    fs_error_t err;
    int rc = fs_fleetcfg_load(format, path, gpu, &p, &n, &st, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(n, nw);
    uint64_t gpus = 0, nodes = 0;
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(p[i].name, w[i].name);
        assert_string_equal(p[i].gpu, w[i].gpu);
        assert_int_equal(p[i].nodes, w[i].nodes);
        assert_int_equal(p[i].gpus_per_node, w[i].gpn);
        assert_int_equal(p[i].cpu_milli, w[i].cpu);
        assert_int_equal(p[i].memory_mib, w[i].mem);
        gpus += (uint64_t)p[i].nodes * p[i].gpus_per_node;
        nodes += p[i].nodes;
    }
    assert_int_equal(st.machines, ws->machines);
    assert_int_equal(st.gpu_machines, ws->gpu_machines);
    assert_int_equal(st.no_gpu, ws->no_gpu);
    assert_int_equal(st.gpus, ws->gpus);
    assert_int_equal(gpus, ws->gpus);
    assert_int_equal(nodes, ws->gpu_machines);
    /* node ranks (the list order of the GPU machines): a permutation, in order per pool */
    uint8_t *seen = calloc(nodes, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < p[i].nodes; k++) {
            assert_non_null(p[i].node_rank);
            assert_true(p[i].node_rank[k] < nodes && !seen[p[i].node_rank[k]]);
            seen[p[i].node_rank[k]] = 1;
            if (k)
                assert_true(p[i].node_rank[k] > p[i].node_rank[k - 1]);
        }
    free(seen);
    free_pools(p, n);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_openb_nodes(void **state)
{
    (void)state;
    /* awk -F, 'NR>1{n[$5" "$4" "$2" "$3]++}' openb_node_list_gpu_node.csv, in order of
     * first appearance: (model, GPUs, CPU, memory); P100x2 and V100M16x8 have nodes of
     * several sizes, so each size is a pool */
    static const want_t w[] = {
        {"P100x2-64c256g", "P100", 22, 2, 64000, 262144},
        {"G3x8", "G3", 39, 8, 128000, 786432},
        {"V100M32x8", "V100", 21, 8, 96000, 786432},
        {"V100M16x4", "V100", 28, 4, 32000, 131072},
        {"G2x8", "G2", 549, 8, 96000, 393216},
        {"T4x4", "T4", 17, 4, 96000, 393216},
        {"T4x2", "T4", 387, 2, 104000, 524288},
        {"P100x2-16c120g", "P100", 107, 2, 16000, 122880},
        {"V100M16x1", "V100", 19, 1, 8000, 32768},
        {"V100M16x8-64c256g", "V100", 7, 8, 64000, 262144},
        {"V100M32x4", "V100", 9, 4, 48000, 376832},
        {"P100x1", "P100", 3, 1, 8000, 61440},
        {"V100M16x8-82c336g", "V100", 1, 8, 82000, 344064},
        {"P100x2-8c60g", "P100", 2, 2, 8000, 61440},
        {"A10x1", "A10", 2, 1, 128000, 1048576},
    };
    /* G2 4,392 = 549 x 8; T4 842; G3 312; P100 265; V100M32 204; V100M16 195; A10 2 */
    assert_int_equal(549 * 8, 4392);
    assert_int_equal(17 * 4 + 387 * 2, 842);
    assert_int_equal(131 * 2 + 3, 265);
    assert_int_equal(21 * 8 + 9 * 4, 204);
    assert_int_equal(28 * 4 + 19 + 8 * 8, 195);
    fs_fleet_stats_t st = {.machines = 1213, .gpu_machines = 1213, .no_gpu = 0, .gpus = 6212};
    load_and_check(FS_FLEET_OPENB, REAL "/openb_node_list_gpu_node.csv", NULL, w,
                   sizeof w / sizeof w[0], &st);
}

static void test_pai_spec(void **state)
{
    (void)state;
    /* cap_cpu cores and cap_mem GB: V100x8 has nodes of 384 and 512 GB */
    static const want_t w[] = {
        {"V100M32x8", "V100", 135, 8, 96000, 393216},
        {"V100x8-96c384g", "V100", 45, 8, 96000, 393216},
        {"V100x8-96c512g", "V100", 59, 8, 96000, 524288},
        {"MISCx8", "MISC", 280, 8, 96000, 524288},
        {"T4x2", "T4", 497, 2, 96000, 524288},
        {"P100x2", "P100", 798, 2, 64000, 524288},
    };
    /* 1,897 machines, 83 without GPUs; 6,742 GPUs: MISC 2,240, P100 1,596,
     * V100M32 1,080, T4 994, V100 832 */
    fs_fleet_stats_t st = {.machines = 1897, .gpu_machines = 1814, .no_gpu = 83, .gpus = 6742};
    /* the order of first appearance in the file */
    want_t sorted[6];
    fs_pool_cfg_t *p = NULL;
    size_t n = 0;
    fs_error_t err;
    assert_int_equal(fs_fleetcfg_load(FS_FLEET_PAI, REAL "/pai_machine_spec.csv", NULL, &p, &n,
                                   NULL, &err), 0);
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < 6; k++)
            if (strcmp(p[i].name, w[k].name) == 0)
                sorted[i] = w[k];
    free_pools(p, n);
    load_and_check(FS_FLEET_PAI, REAL "/pai_machine_spec.csv", NULL, sorted, 6, &st);
    assert_int_equal(2240 + 1596 + 1080 + 994 + 832, 6742);
}

static void test_philly_and_tiresias(void **state)
{
    (void)state;
    /* revised list: 3,205 GPUs (264 x 8, 271 x 4, 3 x 2, 1 x 3), 13 machines without */
    static const want_t rev[] = {
        {"unknownx8", "unknown", 264, 8, 0, 0}, {"unknownx4", "unknown", 271, 4, 0, 0},
        {"unknownx2", "unknown", 3, 2, 0, 0},   {"unknownx3", "unknown", 1, 3, 0, 0},
    };
    fs_fleet_stats_t st = {.machines = 552, .gpu_machines = 539, .no_gpu = 13, .gpus = 3205};
    fs_pool_cfg_t *p = NULL;
    size_t n = 0;
    fs_error_t err;
    assert_int_equal(fs_fleetcfg_load(FS_FLEET_PHILLY, REAL "/revised_machine_list.csv", NULL, &p,
                                   &n, NULL, &err), 0);
    want_t order[4];
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < 4; k++)
            if (strcmp(p[i].name, rev[k].name) == 0)
                order[i] = rev[k];
    assert_int_equal(n, 4);
    free_pools(p, n);
    load_and_check(FS_FLEET_PHILLY, REAL "/revised_machine_list.csv", NULL, order, 4, &st);
    /* the original list: 321 x 2 (12GB), 231 x 8 (24GB) = 2,490 GPUs */
    static const want_t orig[] = {{"GPU-12GBx2", "GPU-12GB", 321, 2, 0, 0},
                                  {"GPU-24GBx8", "GPU-24GB", 231, 8, 0, 0}};
    fs_fleet_stats_t st2 = {.machines = 552, .gpu_machines = 552, .no_gpu = 0, .gpus = 2490};
    load_and_check(FS_FLEET_PHILLY, REAL "/cluster_machine_list", NULL, orig, 2, &st2);
    /* a model given for a list that names none */
    static const want_t named[] = {{"P100x2", "P100", 321, 2, 0, 0}, {"P100x8", "P100", 231, 8, 0, 0}};
    load_and_check(FS_FLEET_PHILLY, REAL "/cluster_machine_list", "P100", named, 2, &st2);
    /* Tiresias: 1 switch x 16 nodes x 4 GPUs */
    static const want_t t[] = {{"unknownx4", "unknown", 16, 4, 0, 0}};
    fs_fleet_stats_t st3 = {.machines = 16, .gpu_machines = 16, .no_gpu = 0, .gpus = 64};
    load_and_check(FS_FLEET_TIRESIAS, REAL "/cluster_spec.csv", NULL, t, 1, &st3);
    static const want_t t2[] = {{"V100M32x4", "V100", 16, 4, 0, 0}};
    load_and_check(FS_FLEET_TIRESIAS, REAL "/cluster_spec.csv", "V100M32", t2, 1, &st3);
}

static void test_catalog_and_matching(void **state)
{
    (void)state;
    assert_string_equal(fs_fleetcfg_catalog_name("V100M32"), "V100");
    assert_string_equal(fs_fleetcfg_catalog_name("v100m16"), "V100");
    assert_string_equal(fs_fleetcfg_catalog_name("t4"), "T4");
    assert_string_equal(fs_fleetcfg_catalog_name("A10"), "A10");
    assert_null(fs_fleetcfg_catalog_name("G2"));
    assert_null(fs_fleetcfg_catalog_name("MISC"));
    assert_true(fs_fleetcfg_type_allows("V100M32", "V100M32x8", "V100"));
    assert_true(fs_fleetcfg_type_allows("V100M16|V100M32", "V100M32x4", "V100"));
    assert_false(fs_fleetcfg_type_allows("V100M16", "V100M32x8", "V100"));
    assert_true(fs_fleetcfg_type_allows("V100", "V100M32x8", "V100"));     /* by catalog model */
    assert_true(fs_fleetcfg_type_allows("G2|P100", "P100x2", "P100"));
    assert_false(fs_fleetcfg_type_allows("G2|P100", "T4x2", "T4"));
    assert_true(fs_fleetcfg_type_allows("main", "main", "H100"));          /* by pool name */
    assert_true(fs_fleetcfg_type_allows("h100", "main", "H100"));          /* case */
    assert_false(fs_fleetcfg_type_allows("G2", "G2xa", "G2x"));
    assert_false(fs_fleetcfg_type_allows("G", "G2x8", "G2"));
    assert_false(fs_fleetcfg_type_allows("", "x", "y"));
    /* pools of one model split by node size keep the model's name */
    assert_true(fs_fleetcfg_type_allows("V100M16", "V100M16x8-64c256g", "V100M16"));
    assert_true(fs_fleetcfg_type_allows("V100M16|V100M32", "V100M16x8-82c336g", "V100"));
    assert_false(fs_fleetcfg_type_allows("V100M16", "V100M16x-64c", "V100"));
    assert_false(fs_fleetcfg_type_allows("V100M16", "V100M16x8c", "V100"));
}

static void expect_load_error(int format, const char *text, const char *want_after_path)
{
    int64_t live0 = fs_alloc_live();
    char *p = fs_test_path(g_dir, "m.csv");
    assert_int_equal(fs_test_write(p, text), 0);
    fs_pool_cfg_t *pools = NULL;
    size_t n = 0;
    fs_error_t err;
    int rc = fs_fleetcfg_load(format, p, NULL, &pools, &n, NULL, &err);
    char want[2048];
    snprintf(want, sizeof want, "%s%s", p, want_after_path);
    if (rc != FS_EINVAL || strcmp(err.msg, want) != 0)
        fail_msg("rc %d: %s\nexpected\n%s", rc, rc ? err.msg : "", want);
    assert_int_equal(n, 0);
    fs_free(pools);
    free(p);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_errors(void **state)
{
    (void)state;
    expect_load_error(FS_FLEET_OPENB, "", ": empty file (expected an openb node list: "
                      "sn,cpu_milli,memory_mib,gpu,model)");
    expect_load_error(FS_FLEET_OPENB, "sn,gpu\n", ":1: missing column 'model' (an openb node "
                      "list: sn,cpu_milli,memory_mib,gpu,model)");
    expect_load_error(FS_FLEET_OPENB, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,8,G2\nn1,1,1,x,G2\n",
                      ":3: field gpu: expected an integer in 0..1024 (got 'x')");
    expect_load_error(FS_FLEET_OPENB, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,8,\n",
                      ":2: field model: expected a GPU model name (got '')");
    expect_load_error(FS_FLEET_OPENB, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,8\n",
                      ":2: expected 5 fields, got 4");
    expect_load_error(FS_FLEET_OPENB, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,0,\n",
                      ": no machine with GPUs (1 machines read)");
    expect_load_error(FS_FLEET_PAI, "m0,T4,96,512,2000\n",
                      ":1: field cap_gpu: expected an integer in 0..1024 (got '2000')");
    expect_load_error(FS_FLEET_PAI, "m0,T4,96,512\n", ":1: expected 5 fields, got 4");
    expect_load_error(FS_FLEET_PHILLY, "machineId,gpus\nm0,8\n", ":1: missing column 'number of "
                      "GPUs' (a Philly machine list with a 'number of GPUs' column)");
    expect_load_error(FS_FLEET_TIRESIAS, "num_switch,num_node_p_switch,num_gpu_p_node\n",
                      ": no cluster row after the header");
    expect_load_error(FS_FLEET_TIRESIAS, "num_switch,num_node_p_switch,num_gpu_p_node\n1,-2,4\n",
                      ":2: field num_node_p_switch: expected an integer in 0..100000 (got '-2')");
    fs_pool_cfg_t *pools = NULL;
    size_t n = 0;
    fs_error_t err;
    assert_int_equal(fs_fleetcfg_load(FS_FLEET_PAI, "/nonexistent/x.csv", NULL, &pools, &n, NULL,
                                   &err), FS_EIO);
    assert_string_equal(err.msg, "cannot open /nonexistent/x.csv: No such file or directory");
}

static void test_alloc_failures(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    int ok = 0;
    for (uint64_t k = 1; k < 500 && !ok; k++) {
        fs_pool_cfg_t *p = NULL;
        size_t n = 0;
        fs_error_t err;
        fs_alloc_fail_after(k);
        int rc = fs_fleetcfg_load(FS_FLEET_OPENB, REAL "/openb_node_list_gpu_node.csv", NULL, &p,
                               &n, NULL, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            assert_int_equal(n, 15);
        } else {
            assert_int_equal(rc, FS_ENOMEM);
            assert_int_equal(n, 0);
        }
        free_pools(p, n);
        assert_int_equal(fs_alloc_live(), live0);
    }
    assert_true(ok);
}

#define SCN_HEAD "name: from-list\nhorizon: 1d\n"
#define SCN_WORK "workload:\n  synthetic:\n    arrivals: {rate: 10/h}\n    gpus: {1: 1}\n" \
                 "    duration: {dist: constant, value: 1h}\n"

static void test_scenario(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    char text[2048];
    snprintf(text, sizeof text, SCN_HEAD "cluster:\n  pools:\n    - {name: extra, gpu: H100, "
             "nodes: 2, gpus_per_node: 8}\n  from: {format: openb, path: %s}\n" SCN_WORK,
             REAL "/openb_node_list_gpu_node.csv");
    fs_config_t c;
    fs_error_t err;
    int rc = fs_scenario_load_string("t.yaml", text, NULL, 0, &c, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(c.cluster.n_pools, 16);
    assert_int_equal(c.cluster.n_from, 15);
    assert_string_equal(c.cluster.pools[0].name, "extra");
    assert_string_equal(c.cluster.pools[5].name, "G2x8");
    assert_string_equal(c.cluster.pools[5].gpu, "G2");
    assert_int_equal(c.cluster.pools[5].nodes, 549);
    uint64_t gpus = 0;
    for (size_t i = 1; i < c.cluster.n_pools; i++)
        gpus += (uint64_t)c.cluster.pools[i].nodes * c.cluster.pools[i].gpus_per_node;
    assert_int_equal(gpus, 6212);
    /* the dump writes cluster.from, not the pools it built; it loads back the same */
    char *d = fs_scenario_dump(&c);
    assert_non_null(d);
    assert_non_null(strstr(d, "  from:\n    format: openb\n"));
    assert_null(strstr(d, "G2x8"));
    fs_config_t c2;
    rc = fs_scenario_load_string("dump.yaml", d, NULL, 0, &c2, &err);
    if (rc)
        fail_msg("%s\n%s", err.msg, d);
    assert_int_equal(c2.cluster.n_pools, 16);
    for (size_t i = 0; i < 16; i++) {
        assert_string_equal(c2.cluster.pools[i].name, c.cluster.pools[i].name);
        assert_string_equal(c2.cluster.pools[i].gpu, c.cluster.pools[i].gpu);
        assert_int_equal(c2.cluster.pools[i].nodes, c.cluster.pools[i].nodes);
    }
    fs_free(d);
    fs_config_release(&c2);
    fs_config_release(&c);

    /* only cluster.from; a model for a list without one */
    snprintf(text, sizeof text, SCN_HEAD "cluster:\n  from: {format: tiresias, path: %s, gpu: "
             "V100}\n" SCN_WORK, REAL "/cluster_spec.csv");
    rc = fs_scenario_load_string("t.yaml", text, NULL, 0, &c, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(c.cluster.n_pools, 1);
    assert_string_equal(c.cluster.pools[0].name, "V100x4");
    assert_int_equal(c.cluster.pools[0].nodes, 16);
    d = fs_scenario_dump(&c);
    assert_null(strstr(d, "pools"));
    rc = fs_scenario_load_string("dump.yaml", d, NULL, 0, &c2, &err);
    if (rc)
        fail_msg("%s\n%s", err.msg, d);
    assert_int_equal(c2.cluster.n_pools, 1);
    fs_free(d);
    fs_config_release(&c2);
    fs_config_release(&c);

    /* errors at the position of the key */
    rc = fs_scenario_load_string("t.yaml", SCN_HEAD "cluster:\n  from: {format: openb, path: "
                                 "/nonexistent.csv}\n" SCN_WORK, NULL, 0, &c, &err);
    assert_int_equal(rc, FS_EINVAL);
    assert_string_equal(err.msg, "t.yaml:4:31: cluster.from: cannot open /nonexistent.csv: No "
                        "such file or directory");
    rc = fs_scenario_load_string("t.yaml", SCN_HEAD "cluster:\n  from: {format: slurm, path: "
                                 "x}\n" SCN_WORK, NULL, 0, &c, &err);
    assert_int_equal(rc, FS_EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:4:18: "));
    assert_non_null(strstr(err.msg, "openb, pai, philly, tiresias"));
    rc = fs_scenario_load_string("t.yaml", SCN_HEAD SCN_WORK, NULL, 0, &c, &err);
    assert_int_equal(rc, FS_EINVAL);
    assert_non_null(strstr(err.msg, "missing key 'cluster.pools' (expected a list of blocks"));
    assert_non_null(strstr(err.msg, "or give cluster.from)"));
    /* the same name twice: the list's pool clashes with a written one */
    snprintf(text, sizeof text, SCN_HEAD "cluster:\n  pools:\n    - {name: unknownx4, gpu: H100, "
             "nodes: 2, gpus_per_node: 8}\n  from: {format: tiresias, path: %s}\n" SCN_WORK,
             REAL "/cluster_spec.csv");
    rc = fs_scenario_load_string("t.yaml", text, NULL, 0, &c, &err);
    assert_int_equal(rc, FS_EINVAL);
    assert_non_null(strstr(err.msg, "pool name 'unknownx4' is already used"));
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openb_nodes),
        cmocka_unit_test(test_pai_spec),
        cmocka_unit_test(test_philly_and_tiresias),
        cmocka_unit_test(test_catalog_and_matching),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_scenario),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
