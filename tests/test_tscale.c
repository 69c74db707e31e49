/*
 * workload.tenant_scale (traces/fs_tscale.h, docs/traces.md "Scaling one
 * tenant's load"):
 *   - on a trace: tenant B x2 doubles B's job count, halves its mean
 *     inter-arrival gap, leaves A's jobs as they were; x1.5 adds a copy to
 *     about half of B's jobs, x0.5 keeps about half; copies get new ids and
 *     arrive within B's mean gap of their job; same seed, same copies;
 *   - synthetic: B's share and the total rate as the superposition of the
 *     tenants' Poisson streams says, and B's arrivals counted in a run;
 *   - the key: parsed, factors > 0, an unknown tenant named.
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
#include "traces/fs_trace.h"
#include "traces/fs_tscale.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"

static char *g_dir;

/* A native trace: A every 60 s, B every 100 s, 200 jobs each. */
static char *write_trace(void)
{
    char *path = fs_test_path(g_dir, "ab.csv");
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text + len, cap - len, "submit,id,duration,gpus,tenant\n");
    /* merged in submit order */
    size_t ia = 0, ib = 0;
    uint64_t id = 1;
    while (ia < 200 || ib < 200) {
        double ta = ia < 200 ? 60.0 * (double)ia : INFINITY;
        double tb = ib < 200 ? 100.0 * (double)ib + 7 : INFINITY;
        if (ta <= tb) {
            len += (size_t)snprintf(text + len, cap - len, "%.0f,%llu,300,1,A\n", ta,
                                    (unsigned long long)id++);
            ia++;
        } else {
            len += (size_t)snprintf(text + len, cap - len, "%.0f,%llu,300,2,B\n", tb,
                                    (unsigned long long)id++);
            ib++;
        }
        assert_true(len < cap);
    }
    assert_int_equal(fs_test_write(path, text), 0);
    free(text);
    return path;
}

typedef struct counts {
    size_t n[2];                /* jobs of A, B */
    double first[2], last[2];   /* submit, s */
    double gap_max_b;           /* largest copy shift seen, s */
    uint64_t max_id;
    int sorted, ids_unique;
    fs_job_t b_jobs[1024];      /* B's jobs in order */
} counts_t;

/* Reads the trace scaled by {B: k} and counts per tenant. */
static void read_scaled(const char *path, double k, uint64_t seed, counts_t *c)
{
    memset(c, 0, sizeof *c);
    fs_source_t *src;
    fs_error_t err;
    if (fs_trace_open("native", path, NULL, &src, &err))
        fail_msg("%s", err.msg);
    const char *names[] = {"B"};
    if (fs_tscale_wrap(&src, names, &k, 1, seed, 0, &err))
        fail_msg("%s", err.msg);
    fs_job_t buf[97];
    size_t n;
    fs_time_t prev = 0;
    c->sorted = 1;
    c->ids_unique = 1;
    uint64_t *ids = calloc(4096, sizeof *ids);
    size_t nid = 0;
    while (fs_source_next(src, buf, 97, &n, &err) == 0 && n > 0)
        for (size_t i = 0; i < n; i++) {
            const char *t = fs_source_tenant_name(src, buf[i].tenant);
            size_t w = strcmp(t, "A") == 0 ? 0 : 1;
            double s = (double)buf[i].submit / 1e6;
            if (c->n[w]++ == 0)
                c->first[w] = s;
            c->last[w] = s;
            if (w == 1 && c->n[1] <= 1024)
                c->b_jobs[c->n[1] - 1] = buf[i];
            c->sorted &= buf[i].submit >= prev;
            prev = buf[i].submit;
            for (size_t j = 0; j < nid; j++)
                c->ids_unique &= ids[j] != buf[i].id;
            if (nid < 4096)
                ids[nid++] = buf[i].id;
            if (buf[i].id > c->max_id)
                c->max_id = buf[i].id;
        }
    free(ids);
    fs_source_destroy(src);
}

static void test_trace_counts_and_gap(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    char *path = write_trace();
    counts_t *c = malloc(sizeof *c);
    assert_non_null(c);

    read_scaled(path, 2, 7, c);
    assert_int_equal(c->n[0], 200);     /* A unchanged */
    assert_int_equal(c->n[1], 400);     /* B doubled */
    assert_true(c->sorted);
    assert_true(c->ids_unique);
    assert_int_equal(c->max_id, 600);   /* copies numbered after the trace's 400 */
    assert_double_equal(c->first[0], 0, 0);
    assert_double_equal(c->last[0], 60.0 * 199, 0);
    /* B's mean inter-arrival gap: 100 s in the trace, about 50 s scaled.
     * The copies sit in [submit, submit + 100 s): (last - first) / (n - 1)
     * is within (19900 .. 20000) / 399. */
    double gap = (c->last[1] - c->first[1]) / (double)(c->n[1] - 1);
    assert_true(gap > 19900.0 / 399 - 1e-9 && gap < 20000.0 / 399);
    /* every copy within B's gap of an original (the originals at 7 + 100 i) */
    for (size_t i = 0; i < c->n[1]; i++) {
        double s = (double)c->b_jobs[i].submit / 1e6 - 7;
        double off = s - 100.0 * floor(s / 100.0);
        assert_true(off >= 0 && off < 100);
        if (c->b_jobs[i].id > 400)
            assert_int_equal(c->b_jobs[i].gpus, 2);    /* a copy of a B job */
    }
    /* the same seed: the same copies; another seed: others */
    counts_t *d = malloc(sizeof *d);
    assert_non_null(d);
    read_scaled(path, 2, 7, d);
    assert_memory_equal(c->b_jobs, d->b_jobs, 400 * sizeof *c->b_jobs);
    read_scaled(path, 2, 8, d);
    assert_int_equal(d->n[1], 400);
    assert_true(memcmp(c->b_jobs, d->b_jobs, 400 * sizeof *c->b_jobs) != 0);

    /* x3: two copies per job */
    read_scaled(path, 3, 7, c);
    assert_int_equal(c->n[0], 200);
    assert_int_equal(c->n[1], 600);
    /* x1.5: one copy with probability 1/2 (binomial 200, 1/2: sd 7.1) */
    read_scaled(path, 1.5, 7, c);
    assert_int_equal(c->n[0], 200);
    assert_true(c->n[1] > 300 - 36 && c->n[1] < 300 + 36);
    /* x0.5: thinning, each B job kept with probability 1/2 */
    read_scaled(path, 0.5, 7, c);
    assert_int_equal(c->n[0], 200);
    assert_true(c->n[1] > 100 - 36 && c->n[1] < 100 + 36);
    assert_true(c->max_id <= 400);

    /* a tenant the trace does not have; one with one job */
    fs_source_t *src;
    fs_error_t err;
    assert_int_equal(fs_trace_open("native", path, NULL, &src, &err), 0);
    const char *names[] = {"C"};
    double k = 2;
    assert_int_equal(fs_tscale_wrap(&src, names, &k, 1, 1, 0, &err), 0);
    fs_job_t buf[8];
    size_t n;
    assert_int_equal(fs_source_next(src, buf, 8, &n, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "'C' is not a tenant of the trace (its tenants: A, B)"));
    fs_source_destroy(src);
    char *one = fs_test_path(g_dir, "one.csv");
    assert_int_equal(fs_test_write(one, "submit,id,duration,gpus,tenant\n0,1,5,1,A\n3,2,5,1,B\n"
                                        "9,3,5,1,A\n"), 0);
    assert_int_equal(fs_trace_open("native", one, NULL, &src, &err), 0);
    names[0] = "B";
    assert_int_equal(fs_tscale_wrap(&src, names, &k, 1, 1, 0, &err), 0);
    assert_int_equal(fs_source_next(src, buf, 8, &n, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "tenant 'B' has 1 job in the trace"));
    fs_source_destroy(src);
    free(one);
    free(d);
    free(c);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_synth_rates(void **st)
{
    (void)st;
    fs_synth_cfg_t sc;
    memset(&sc, 0, sizeof sc);
    char *tn[] = {"A", "B", "C"};
    double sh[] = {0.5, 0.3, 0.2};
    sc.rate = 10.0 / 3600;
    sc.n_tenants = 3;
    sc.tenant_names = tn;
    sc.tenant_shares = sh;
    const char *names[] = {"B"};
    double k = 2, *shares = NULL;
    fs_error_t err;
    assert_int_equal(fs_tscale_synth(&sc, names, &k, 1, &shares, &err), 0);
    /* B's stream 3/h -> 6/h, the others 5/h and 2/h: 13/h in all */
    assert_double_equal(sc.rate * 3600, 13, 1e-9);
    assert_double_equal(sc.tenant_shares[0] * 13, 5, 1e-9);
    assert_double_equal(sc.tenant_shares[1] * 13, 6, 1e-9);
    assert_double_equal(sc.tenant_shares[2] * 13, 2, 1e-9);
    assert_double_equal(sh[1], 0.3, 0);     /* the caller's shares untouched */
    fs_free(shares);
    sc.tenant_shares = sh;
    sc.rate = 10.0 / 3600;
    names[0] = "D";
    assert_int_equal(fs_tscale_synth(&sc, names, &k, 1, &shares, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "'D' is not a tenant of workload.synthetic.tenants (A, B, C)"));
    sc.n_tenants = 0;
    assert_int_equal(fs_tscale_synth(&sc, names, &k, 1, &shares, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "no tenants"));
}

/* The key through a scenario, and a synthetic run's arrivals per tenant. */
static void test_key_and_synthetic_counts(void **st)
{
    (void)st;
    char *scn = fs_test_path(g_dir, "ts.yaml");
    assert_int_equal(fs_test_write(scn, "name: ts\nhorizon: 200d\n"
                                        "cluster: {pools: [{name: p, gpu: H100, nodes: 64, "
                                        "gpus_per_node: 8}]}\n"
                                        "workload:\n"
                                        "  synthetic: {arrivals: {rate: 10/h}, gpus: {1: 1},\n"
                                        "    duration: {dist: exponential, mean: 1m},\n"
                                        "    tenants: {A: 0.5, B: 0.3, C: 0.2}}\n"
                                        "  tenant_scale: {B: 2}\n"), 0);
    fs_config_t c;
    fs_error_t err;
    if (fs_scenario_load_file(scn, NULL, 0, &c, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(c.workload.n_tenant_scale, 1);
    assert_string_equal(c.workload.tenant_scale_names[0], "B");
    assert_double_equal(c.workload.tenant_scale[0], 2, 0);
    /* B: 3/h -> 6/h; over 200 days 28800 B jobs expected (sd 170), A 24000 */
    fs_synth_cfg_t sc = c.workload.synth;
    sc.horizon = c.horizon;
    double *shares = NULL;
    assert_int_equal(fs_tscale_synth(&sc, (const char *const *)c.workload.tenant_scale_names,
                                     c.workload.tenant_scale, 1, &shares, &err), 0);
    fs_source_t *src;
    if (fs_synth_create(&sc, 7, 0, &src, &err))
        fail_msg("%s", err.msg);
    fs_free(shares);
    size_t per[3] = {0}, n;
    fs_job_t buf[256];
    while (fs_source_next(src, buf, 256, &n, &err) == 0 && n > 0)
        for (size_t i = 0; i < n; i++)
            per[buf[i].tenant]++;
    fs_source_destroy(src);
    assert_true(fabs((double)per[0] - 24000) < 5 * 155);
    assert_true(fabs((double)per[1] - 28800) < 5 * 170);
    assert_true(fabs((double)per[2] - 9600) < 5 * 98);
    fs_config_release(&c);
    /* a factor must be > 0; a named tenant must exist (at the run) */
    const char *bad[] = {"workload.tenant_scale={B: 0}"};
    assert_int_equal(fs_scenario_load_file(scn, bad, 1, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "tenant_scale"));
    const char *bad2[] = {"workload.tenant_scale={B: x}"};
    assert_int_equal(fs_scenario_load_file(scn, bad2, 1, &c, &err), FS_EINVAL);
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
        cmocka_unit_test(test_trace_counts_and_gap),
        cmocka_unit_test(test_synth_rates),
        cmocka_unit_test(test_key_and_synthetic_counts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
