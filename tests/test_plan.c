/*
 * Tests of the capacity-planning search (analysis/fs_plan.c) and of the
 * plan.* key rows:
 *  - the spec built from a scenario (bounds with units, node lists, the
 *    choice's overrides) and every error of a plan section;
 *  - bisection finds the same node count as a brute-force scan (on a
 *    synthetic monotone response, over many thresholds, and on real runs)
 *    with at most 1 + ceil(log2 n) evaluations per choice;
 *  - on an M/M/c workload (Poisson arrivals, exponential run times, 1-GPU
 *    jobs on 1-GPU nodes, FIFO) the node count that plan picks for a target
 *    P(wait > 0) and for a target mean wait is the smallest c that Erlang C
 *    says meets it (Erlang C computed here, independently);
 *  - the cheapest feasible choice across choices, the frontier, plan.h5.
 * The cost used by the synthetic tests is TEST SCAFFOLDING ONLY (a price per
 * GPU of the fleet, see test_cost below), never the shipped cost model.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "fs_test_util.h"
#include "analysis/fs_plan.h"
#include "models/fs_config.h"
#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"

static int64_t live0;

static int setup(void **state)
{
    (void)state;
    live0 = fs_alloc_live();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fs_alloc_fail_after(0);
    assert_int_equal(fs_alloc_live(), live0);
    return 0;
}

#define BASE "name: t\n"                                                    \
             "horizon: 1d\n"                                                \
             "cluster:\n"                                                   \
             "  pools:\n"                                                   \
             "    - {name: main, gpu: H100, nodes: 16, gpus_per_node: 8}\n" \
             "    - {name: spare, gpu: A100, nodes: 2, gpus_per_node: 8}\n" \
             "workload:\n"                                                  \
             "  synthetic: {arrivals: {rate: 10/h}, gpus: {1: 1},\n"        \
             "              duration: {dist: exponential, mean: 1h}}\n"

static int spec_of(const char *plan, fs_plan_spec_t **spec, fs_error_t *err)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", BASE, plan);
    fs_config_t cfg;
    int rc = fs_scenario_load_string("t.yaml", text, NULL, 0, &cfg, err);
    if (rc)
        return rc;
    rc = fs_plan_spec_create(&cfg, spec, err);
    fs_config_release(&cfg);
    return rc;
}

static void test_spec(void **state)
{
    (void)state;
    fs_plan_spec_t *s = NULL;
    fs_error_t err;
    int rc = spec_of("plan:\n"
                     "  confidence: 0.9\n"
                     "  replications: 4\n"
                     "  slo:\n"
                     "    - {metric: wait_p95, max: 1h}\n"
                     "    - {metric: finished_share, min: 0.99}\n"
                     "  choices:\n"
                     "    - {pool: main, nodes: {from: 8, to: 21, step: 4}}\n"
                     "    - {pool: main, gpu: a100, gpus_per_node: 4, nodes: {from: 2, to: 3},\n"
                     "       set: [{key: scheduler.queue, value: sjf}]}\n",
                     &s, &err);
    assert_int_equal(rc, 0);
    assert_double_equal(s->confidence, 0.9, 0);
    assert_int_equal(s->replications, 4);
    assert_int_equal(s->n_slo, 2);
    assert_int_equal(s->slo[0].kind, FS_PLAN_LE);
    assert_double_equal(s->slo[0].bound, 3600, 0);
    assert_string_equal(s->slo[0].text, "wait_p95 <= 1h");
    assert_int_equal(s->slo[1].kind, FS_PLAN_GE);
    assert_double_equal(s->slo[1].bound, 0.99, 0);
    assert_int_equal(s->n_metrics, 3);
    assert_string_equal(s->metrics[0], "cost_total"); /* the default objective */
    assert_string_equal(s->metrics[2], "finished_share");
    assert_int_equal(s->n_choices, 2);
    const fs_plan_choice_t *a = &s->choices[0], *b = &s->choices[1];
    assert_string_equal(a->name, "main");
    assert_int_equal(a->n_nodes, 4); /* 8 12 16 20 (<= 21) */
    assert_int_equal(a->nodes[3], 20);
    assert_int_equal(a->gpus_per_node, 8);
    assert_string_equal(a->gpu, "H100");
    assert_int_equal(a->n_sets, 0);
    assert_string_equal(b->name, "main/A100");
    assert_string_equal(b->gpu, "A100");
    assert_int_equal(b->gpus_per_node, 4);
    assert_int_equal(b->n_sets, 3);
    assert_string_equal(b->sets[0], "cluster.pools.0.gpu=A100");
    assert_string_equal(b->sets[1], "cluster.pools.0.gpus_per_node=4");
    assert_string_equal(b->sets[2], "scheduler.queue=sjf");
    char **cs = NULL;
    size_t n = 0;
    assert_int_equal(fs_plan_candidate_sets(s, 1, 3, &cs, &n, &err), 0);
    assert_int_equal(n, 4);
    assert_string_equal(cs[3], "cluster.pools.0.nodes=3");
    fs_plan_sets_free(cs, n);
    fs_plan_spec_destroy(s);

    /* the second pool */
    assert_int_equal(spec_of("plan: {choices: [{pool: spare, nodes: {from: 1, to: 2}}]}\n", &s, &err), 0);
    assert_int_equal(s->choices[0].pool_index, 1);
    assert_int_equal(fs_plan_candidate_sets(s, 0, 2, &cs, &n, &err), 0);
    assert_string_equal(cs[0], "cluster.pools.1.nodes=2");
    fs_plan_sets_free(cs, n);
    fs_plan_spec_destroy(s);
}

static void expect_error(const char *plan, const char *needle)
{
    fs_plan_spec_t *s = NULL;
    fs_error_t err;
    int rc = spec_of(plan, &s, &err);
    assert_int_equal(rc, FS_EINVAL);
    assert_null(s);
    if (!strstr(err.msg, needle))
        fail_msg("'%s' not in '%s'", needle, err.msg);
}

static void test_spec_errors(void **state)
{
    (void)state;
    expect_error("plan: {choices: [{pool: nope, nodes: {from: 1, to: 2}}]}\n",
                 "t.yaml:10:25: plan.choices.0.pool: no pool named 'nope'");
    /* value errors found after loading carry FILE:LINE:COL too (the key's place) */
    expect_error("plan: {choices: [{pool: main, nodes: {from: 5, to: 2}}]}\n",
                 "t.yaml:10:52: plan.choices.0.nodes: to (2) is below from (5)");
    expect_error("plan: {slo: [{metric: wait_p95, max: 1x}], choices: [{pool: main, nodes: {from: 1, to: 2}}]}\n",
                 "t.yaml:10:38: plan.slo.0.max: '1x' is not a number or a duration");
    expect_error("plan: {slo: [{metric: wait_p95, max: 1h, min: 1s}], choices: [{pool: main, nodes: {from: 1, to: 2}}]}\n",
                 "t.yaml:10:14: plan.slo.0 (wait_p95): give exactly one of max and min");
    expect_error("plan: {slo: [{metric: wait_p95}], choices: [{pool: main, nodes: {from: 1, to: 2}}]}\n",
                 "give exactly one of max and min");
    expect_error("plan: {choices: [{pool: main, nodes: {from: 1, to: 2}}, {pool: main, nodes: {from: 1, to: 2}}]}\n",
                 "t.yaml:10:57: plan.choices.1: the name 'main' is taken");
    /* key-table errors carry FILE:LINE:COL */
    expect_error("plan: {replications: 1, choices: [{pool: main, nodes: {from: 1, to: 2}}]}\n",
                 "t.yaml:10:");
    expect_error("plan: {choices: [{pool: main, nodes: {to: 2}}]}\n", "from");
    expect_error("plan: {confidence: 0.95}\n", "choices");
    /* no plan section */
    fs_config_t cfg;
    fs_error_t err;
    fs_plan_spec_t *s = NULL;
    assert_int_equal(fs_scenario_load_string("t.yaml", BASE, NULL, 0, &cfg, &err), 0);
    assert_int_equal(fs_plan_spec_create(&cfg, &s, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "no 'plan' section"));
    fs_config_release(&cfg);
}

static void test_metric(void **state)
{
    (void)state;
    const char *names[] = {"jobs_submitted", "jobs_completed", "wait_p95"};
    double vals[] = {200, 190, 42};
    double v = 0;
    assert_int_equal(fs_plan_metric(names, vals, 3, "wait_p95", &v), 0);
    assert_double_equal(v, 42, 0);
    assert_int_equal(fs_plan_metric(names, vals, 3, "finished_share", &v), 0);
    assert_double_equal(v, 0.95, 1e-15);
    assert_int_equal(fs_plan_metric(names, vals, 3, "ettr_mean", &v), -1);
    assert_int_equal(fs_plan_metric(names, vals, 2, "finished_share", &v), 0);
    assert_int_equal(fs_plan_metric(names, vals, 1, "finished_share", &v), -1);
}

/* ---- a synthetic, monotone response --------------------------------------------------- */

/* TEST SCAFFOLDING ONLY: a local cost of the fleet (price per GPU-node of
 * each choice), standing in for the objective so that the search can be
 * checked without the cost model. */
static double test_cost(const fs_plan_spec_t *s, size_t choice, uint32_t nodes)
{
    static const double price_per_gpu[] = {3.0, 2.0, 1.0};
    return (double)nodes * s->choices[choice].gpus_per_node * price_per_gpu[choice % 3];
}

typedef struct fake {
    double speed[3];    /* per choice: capacity per node */
    size_t calls, cands;
} fake_t;

/* metric 0: test_cost; metric 1 ("wait"): 100 / (capacity - 5) + noise
 * (replication-keyed, so common random numbers), infinite when capacity
 * <= 5.  Decreasing in nodes. */
static int fake_eval(void *ud, const fs_plan_spec_t *s, const fs_plan_cand_t *c, size_t n,
                     double *out, fs_error_t *err)
{
    fake_t *f = ud;
    (void)err;
    f->calls++;
    f->cands += n;
    for (size_t i = 0; i < n; i++)
        for (uint64_t r = 0; r < s->replications; r++) {
            double cap = f->speed[c[i].choice] * c[i].nodes;
            double noise = 0.5 * sin(1.7 * (double)r + 0.3);
            double *o = out + (i * s->replications + r) * s->n_metrics;
            o[0] = test_cost(s, c[i].choice, c[i].nodes);
            o[1] = cap > 5 ? 100.0 / (cap - 5) + noise : 1e9;
        }
    return 0;
}

static fs_plan_spec_t *fake_spec(double bound, int search, uint32_t to)
{
    char plan[1024];
    snprintf(plan, sizeof plan,
             "plan:\n"
             "  objective: test_cost\n"
             "  replications: 3\n"
             "  search: %s\n"
             "  slo: [{metric: wait, max: %g}]\n"
             "  choices:\n"
             "    - {name: a, pool: main, nodes: {from: 1, to: %u}}\n"
             "    - {name: b, pool: main, gpus_per_node: 4, nodes: {from: 2, to: %u, step: 2}}\n",
             search == FS_PLAN_SCAN ? "scan" : "bisect", bound, to, to);
    fs_plan_spec_t *s = NULL;
    fs_error_t err;
    if (spec_of(plan, &s, &err) != 0)
        fail_msg("%s", err.msg);
    return s;
}

static long best_nodes(const fs_plan_result_t *r, size_t c)
{
    return r->best[c] < 0 ? -1 : (long)r->points[r->best[c]].nodes;
}

static void test_bisect_equals_scan(void **state)
{
    (void)state;
    for (int t = 0; t < 60; t++) {
        double bound = 0.8 + 0.37 * t; /* from below the best reachable to loose */
        fs_plan_spec_t *sb = fake_spec(bound, FS_PLAN_BISECT, 100);
        fs_plan_spec_t *ss = fake_spec(bound, FS_PLAN_SCAN, 100);
        fake_t fb = {{1.0, 0.5, 0}, 0, 0}, fsn = fb;
        fs_plan_result_t *rb = NULL, *rs = NULL;
        fs_error_t err;
        assert_int_equal(fs_plan_search(sb, fake_eval, &fb, &rb, &err), 0);
        assert_int_equal(fs_plan_search(ss, fake_eval, &fsn, &rs, &err), 0);
        for (size_t c = 0; c < 2; c++)
            assert_int_equal(best_nodes(rb, c), best_nodes(rs, c));
        /* at most 1 + ceil(log2 n) candidates per choice: n = 100 and 50 */
        assert_true(fb.cands <= (1 + 7) + (1 + 6));
        assert_true(rb->rounds <= 8);
        assert_int_equal(fsn.cands, 150);
        assert_int_equal(rb->nonmonotone, 0);
        /* the chosen plan is the cheaper of the two choices' best (hand):
         * a costs 3 x 8 per node, b 2 x 4 per node */
        long na = best_nodes(rb, 0), nb = best_nodes(rb, 1);
        if (na < 0 && nb < 0) {
            assert_int_equal(rb->chosen, -1);
        } else {
            double ca = na < 0 ? INFINITY : 24.0 * (double)na, cb = nb < 0 ? INFINITY : 8.0 * (double)nb;
            const fs_plan_point_t *p = &rb->points[rb->chosen];
            assert_int_equal(p->choice, ca < cb ? 0 : 1);
            assert_int_equal(p->nodes, ca < cb ? na : nb);
            assert_int_equal(rs->chosen >= 0, 1);
            assert_int_equal(rs->points[rs->chosen].nodes, p->nodes);
        }
        fs_plan_result_destroy(rb);
        fs_plan_result_destroy(rs);
        fs_plan_spec_destroy(sb);
        fs_plan_spec_destroy(ss);
    }
}

/* The frontier: no frontier point is dominated; every other point is. */
static void test_frontier(void **state)
{
    (void)state;
    fs_plan_spec_t *s = fake_spec(3.0, FS_PLAN_SCAN, 30);
    fake_t f = {{1.0, 0.5, 0}, 0, 0};
    fs_plan_result_t *r = NULL;
    fs_error_t err;
    assert_int_equal(fs_plan_search(s, fake_eval, &f, &r, &err), 0);
    size_t front = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        const fs_plan_point_t *p = &r->points[i];
        int dominated = 0;
        for (size_t j = 0; j < r->n_points; j++) {
            const fs_plan_point_t *q = &r->points[j];
            if (q->ci[0].mean <= p->ci[0].mean && q->ci[1].mean <= p->ci[1].mean &&
                (q->ci[0].mean < p->ci[0].mean || q->ci[1].mean < p->ci[1].mean))
                dominated = 1;
        }
        assert_int_equal(p->frontier, !dominated);
        front += p->frontier;
    }
    assert_true(front >= 2 && front < r->n_points);
    fs_plan_result_destroy(r);
    fs_plan_spec_destroy(s);
}

static int failing_eval(void *ud, const fs_plan_spec_t *s, const fs_plan_cand_t *c, size_t n,
                        double *out, fs_error_t *err)
{
    size_t *calls = ud;
    (void)s;
    (void)c;
    (void)n;
    (void)out;
    if (++*calls == 2)
        return fs_error_set(err, FS_EINVAL, "plan: 'wait' is not a summary metric");
    return fake_eval(&(fake_t){{1.0, 0.5, 0}, 0, 0}, s, c, n, out, err);
}

static void test_eval_error(void **state)
{
    (void)state;
    fs_plan_spec_t *s = fake_spec(3.0, FS_PLAN_BISECT, 100);
    size_t calls = 0;
    fs_plan_result_t *r = NULL;
    fs_error_t err;
    assert_int_equal(fs_plan_search(s, failing_eval, &calls, &r, &err), FS_EINVAL);
    assert_null(r);
    assert_non_null(strstr(err.msg, "not a summary metric"));
    fs_plan_spec_destroy(s);
    /* allocation failures: an error, never a crash or a leak */
    for (uint64_t k = 1; k < 200; k++) {
        s = fake_spec(3.0, FS_PLAN_BISECT, 100);
        fake_t f = {{1.0, 0.5, 0}, 0, 0};
        fs_alloc_fail_after(k);
        int rc = fs_plan_search(s, fake_eval, &f, &r, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            fs_plan_result_destroy(r);
            fs_plan_spec_destroy(s);
            break;
        }
        assert_int_equal(rc, FS_ENOMEM);
        fs_plan_spec_destroy(s);
    }
}

/* ---- the search over the quarters (plan.years) ------------------------------------------ */

/* Quarter q's demand in the fake: 5 x 2^q capacity units; "wait" =
 * 100 / (capacity - demand) + the replication's noise, 1e9 when the
 * capacity does not exceed it.  Every quarter is filled (the search must
 * not look past the first one missed). */
static int period_eval(void *ud, const fs_plan_spec_t *s, const fs_plan_cand_t *c, size_t n,
                       double *out, fs_error_t *err)
{
    fake_t *f = ud;
    (void)err;
    f->calls++;
    f->cands += n;
    for (size_t i = 0; i < n; i++)
        for (size_t q = 0; q < s->n_periods; q++)
            for (uint64_t r = 0; r < s->replications; r++) {
                double cap = f->speed[c[i].choice] * c[i].nodes, d = 5.0 * pow(2, (double)q);
                double *o = out + ((i * s->n_periods + q) * s->replications + r) * s->n_metrics;
                o[0] = test_cost(s, c[i].choice, c[i].nodes) * (1 + 0.1 * (double)q);
                o[1] = cap > d ? 100.0 / (cap - d) + 0.5 * sin(1.7 * (double)r + 0.3) : 1e9;
            }
    return 0;
}

static fs_plan_spec_t *period_spec(int search, const char *years)
{
    char plan[1024];
    snprintf(plan, sizeof plan,
             "plan:\n"
             "  objective: test_cost\n"
             "  replications: 3\n"
             "  search: %s\n"
             "%s"
             "  slo: [{metric: wait, max: 3}]\n"
             "  choices:\n"
             "    - {name: a, pool: main, nodes: {from: 1, to: 100}}\n",
             search == FS_PLAN_SCAN ? "scan" : "bisect", years);
    fs_plan_spec_t *s = NULL;
    fs_error_t err;
    if (spec_of(plan, &s, &err) != 0)
        fail_msg("%s", err.msg);
    return s;
}

/* The smallest count whose quarters 0..Q-1 all meet "wait <= 3" by the
 * confidence rule, computed directly from the fake's formula. */
static uint32_t direct_smallest(size_t n_q, uint32_t at, long *miss_at)
{
    uint32_t best = 0;
    for (uint32_t nodes = 100; nodes >= 1; nodes--) {
        long miss = -1;
        for (size_t q = 0; q < n_q && miss < 0; q++) {
            double x[3], d = 5.0 * pow(2, (double)q);
            for (int r = 0; r < 3; r++)
                x[r] = nodes > d ? 100.0 / (nodes - d) + 0.5 * sin(1.7 * r + 0.3) : 1e9;
            fs_ci_t ci;
            assert_int_equal(fs_ci_t_interval(x, 3, 0.95, &ci), 0);
            if (!(ci.hi <= 3))
                miss = (long)q;
        }
        if (nodes == at)
            *miss_at = miss;
        if (miss < 0)
            best = nodes;
    }
    return best;
}

/* plan.years: the search sizes the fleet for every quarter's demand, not
 * the first's: the answer meets the SLO in the last (highest-demand)
 * quarter, is larger than the first quarter's answer, and a fleet that
 * cannot says which quarter it first misses. */
static void test_search_every_quarter(void **state)
{
    (void)state;
    long miss_fo = -2, unused = -2;
    uint32_t first_only = direct_smallest(1, 0, &unused);
    uint32_t all_q = direct_smallest(3, first_only, &miss_fo);
    assert_true(all_q > first_only);
    assert_true(miss_fo >= 1);   /* first_only nodes meet quarter 1's demand, not a later one's */
    for (int search = 0; search < 2; search++) {
        fs_plan_spec_t *s = period_spec(search ? FS_PLAN_SCAN : FS_PLAN_BISECT,
                                        "  years: 0.75\n  demand_growth: 1\n");
        assert_int_equal(s->n_periods, 3);
        fake_t f = {{1.0, 0.5, 0}, 0, 0};
        fs_plan_result_t *r = NULL;
        fs_error_t err;
        assert_int_equal(fs_plan_search(s, period_eval, &f, &r, &err), 0);
        assert_int_equal(best_nodes(r, 0), all_q);
        const fs_plan_point_t *p = &r->points[r->best[0]];
        assert_int_equal(p->miss_period, -1);
        assert_int_equal(p->n_periods, 3);
        assert_int_equal(p->binding[1], 2);  /* the highest demand binds */
        /* the reported wait is quarter 3's interval; the objective the mean over quarters */
        assert_double_equal(p->ci[1].hi, p->period_ci[2 * s->n_metrics + 1].hi, 1e-12);
        assert_double_equal(p->ci[0].mean, 24.0 * all_q * 1.1, 1e-9);
        if (search) {   /* scan: every count; first_only nodes stop at their first missed quarter */
            long pi = -1;
            for (size_t i = 0; i < r->n_points; i++)
                if (r->points[i].nodes == first_only)
                    pi = (long)i;
            assert_true(pi >= 0);
            assert_int_equal(r->points[pi].meets, 0);
            assert_int_equal(r->points[pi].miss_period, miss_fo);
            assert_int_equal(r->points[pi].n_periods, (size_t)miss_fo + 1);
            char name[16];
            fs_plan_period_name(5, name, sizeof name);
            assert_string_equal(name, "Y2Q2");
        }
        fs_plan_result_destroy(r);
        fs_plan_spec_destroy(s);
    }
    /* without plan.years: one period, the first quarter's answer */
    fs_plan_spec_t *s = period_spec(FS_PLAN_BISECT, "");
    assert_int_equal(s->n_periods, 1);
    fake_t f = {{1.0, 0.5, 0}, 0, 0};
    fs_plan_result_t *r = NULL;
    fs_error_t err;
    assert_int_equal(fs_plan_search(s, period_eval, &f, &r, &err), 0);
    assert_int_equal(best_nodes(r, 0), first_only);
    fs_plan_result_destroy(r);
    fs_plan_spec_destroy(s);
}

/* ---- plan.h5 ---------------------------------------------------------------------------- */

static uint64_t read_u64_attr(hid_t f, const char *name)
{
    uint64_t v = 0;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Aread(a, H5T_NATIVE_UINT64, &v) >= 0);
    H5Aclose(a);
    return v;
}

static void test_write(void **state)
{
    (void)state;
    fs_plan_spec_t *s = fake_spec(3.0, FS_PLAN_BISECT, 100);
    fake_t f = {{1.0, 0.5, 0}, 0, 0};
    fs_plan_result_t *r = NULL;
    fs_error_t err;
    assert_int_equal(fs_plan_search(s, fake_eval, &f, &r, &err), 0);
    assert_true(r->chosen >= 0);
    char *dir = fs_test_tmpdir(), *path = fs_test_path(dir, "plan.h5");
    const char *sets[] = {"seed=3"};
    fs_plan_meta_t meta = {"t", BASE, "t.yaml", sets, 1, NULL, NULL};
    assert_int_equal(fs_plan_write(path, s, r, &meta, &err), 0);
    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(h >= 0);
    assert_int_equal(read_u64_attr(h, "complete"), 1);
    assert_int_equal(read_u64_attr(h, "feasible"), 1);
    assert_int_equal(read_u64_attr(h, "evaluations"), r->n_points);
    assert_int_equal(read_u64_attr(h, "chosen_nodes"), r->points[r->chosen].nodes);
    hid_t d = H5Dopen2(h, "plan", H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t sp = H5Dget_space(d);
    assert_int_equal(H5Sget_simple_extent_npoints(sp), (hssize_t)r->n_points);
    hid_t t = H5Dget_type(d);
    assert_true(H5Tget_member_index(t, "test_cost_mean") >= 0);
    assert_true(H5Tget_member_index(t, "wait_hi") >= 0);
    /* the chosen column: 1 on exactly the chosen row */
    uint32_t *chosen = calloc(r->n_points, sizeof *chosen);
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(uint32_t));
    H5Tinsert(mt, "chosen", 0, H5T_NATIVE_UINT32);
    assert_true(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, chosen) >= 0);
    for (size_t i = 0; i < r->n_points; i++)
        assert_int_equal(chosen[i], (long)i == r->chosen);
    free(chosen);
    H5Tclose(mt);
    H5Tclose(t);
    H5Sclose(sp);
    H5Dclose(d);
    d = H5Dopen2(h, "plan_runs", H5P_DEFAULT);
    sp = H5Dget_space(d);
    assert_int_equal(H5Sget_simple_extent_npoints(sp), (hssize_t)(r->n_points * 3));
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(h);
    fs_test_rmtree(dir);
    free(dir);
    free(path);
    fs_plan_result_destroy(r);
    fs_plan_spec_destroy(s);
}

/* ---- M/M/c against Erlang C ---------------------------------------------------------------- */

/* Erlang C: P(wait > 0) in M/M/c with offered load a = lambda / mu < c,
 * from the Erlang B recursion B(k) = a B(k-1) / (k + a B(k-1)). */
static double erlang_c(unsigned c, double a)
{
    double b = 1.0;
    for (unsigned k = 1; k <= c; k++)
        b = a * b / (k + a * b);
    return c * b / (c - a * (1 - b));
}

/* lambda = 8/h, mean run time 1 h: a = 8 Erlangs; 30 days (~5,760 jobs
 * per run), warm-up 1 day. */
#define MMC "name: mmc\n"                                                   \
            "seed: 11\n"                                                    \
            "horizon: 30d\n"                                                \
            "warmup: 1d\n"                                                  \
            "output: {timeline_interval: 0s, jobs: false}\n"                \
            "cluster:\n"                                                    \
            "  pools:\n"                                                    \
            "    - {name: main, gpu: H100, nodes: 10, gpus_per_node: 1}\n"  \
            "workload:\n"                                                   \
            "  synthetic: {arrivals: {rate: 8/h}, gpus: {1: 1},\n"          \
            "              duration: {dist: exponential, mean: 1h}}\n"      \
            "scheduler: {queue: fifo}\n"

/* Runs are memoised by (nodes, replication): bisection and the scan share
 * them (the same runs, as common random numbers make them). */
typedef struct mmc {
    double wait_prob[64][8], wait_mean[64][8];
    unsigned char have[64][8];
    size_t runs;
} mmc_t;

static int mmc_eval(void *ud, const fs_plan_spec_t *s, const fs_plan_cand_t *c, size_t n,
                    double *out, fs_error_t *err)
{
    mmc_t *m = ud;
    for (size_t i = 0; i < n; i++)
        for (uint64_t r = 0; r < s->replications; r++) {
            uint32_t nodes = c[i].nodes;
            assert_true(nodes < 64 && r < 8);
            if (!m->have[nodes][r]) {
                char **cs = NULL, rep[48];
                size_t ncs = 0;
                assert_int_equal(fs_plan_candidate_sets(s, c[i].choice, nodes, &cs, &ncs, err), 0);
                snprintf(rep, sizeof rep, "replication=%llu", (unsigned long long)r);
                const char *ovr[8] = {0};
                for (size_t k = 0; k < ncs; k++)
                    ovr[k] = cs[k];
                ovr[ncs] = rep;
                fs_config_t cfg;
                int rc = fs_scenario_load_string("mmc", MMC, ovr, ncs + 1, &cfg, err);
                fs_plan_sets_free(cs, ncs);
                if (rc)
                    return rc;
                fs_run_opts_t ro;
                fs_run_opts_init(&ro);
                fs_run_report_t rr;
                rc = fs_run_config(&cfg, &ro, &rr, err);
                fs_config_release(&cfg);
                if (rc)
                    return rc;
                m->wait_prob[nodes][r] = rr.summary.wait_prob;
                m->wait_mean[nodes][r] = rr.summary.wait_mean;
                m->have[nodes][r] = 1;
                m->runs++;
            }
            double *o = out + (i * s->replications + r) * s->n_metrics;
            for (size_t k = 0; k < s->n_metrics; k++)
                o[k] = strcmp(s->metrics[k], "wait_prob") == 0 ? m->wait_prob[nodes][r]
                     : strcmp(s->metrics[k], "wait_mean") == 0 ? m->wait_mean[nodes][r]
                                                               : (double)nodes; /* objective */
        }
    return 0;
}

static fs_plan_result_t *mmc_plan(mmc_t *m, const char *slo, int search)
{
    char text[2048];
    snprintf(text, sizeof text,
             "%splan:\n"
             "  objective: gpus\n"
             "  replications: 5\n"
             "  search: %s\n"
             "  slo: [%s]\n"
             "  choices: [{pool: main, nodes: {from: 9, to: 40}}]\n",
             MMC, search == FS_PLAN_SCAN ? "scan" : "bisect", slo);
    fs_config_t cfg;
    fs_error_t err;
    fs_plan_spec_t *s = NULL;
    if (fs_scenario_load_string("mmc", text, NULL, 0, &cfg, &err) != 0 ||
        fs_plan_spec_create(&cfg, &s, &err) != 0)
        fail_msg("%s", err.msg);
    fs_config_release(&cfg);
    fs_plan_result_t *r = NULL;
    if (fs_plan_search(s, mmc_eval, m, &r, &err) != 0)
        fail_msg("%s", err.msg);
    fs_plan_spec_destroy(s);
    return r;
}

/* The smallest c meeting the target, by Erlang C. */
static unsigned erlang_smallest(double a, double target, int mean_wait, double mean_s)
{
    for (unsigned c = (unsigned)a + 1;; c++) {
        double pw = erlang_c(c, a);
        double v = mean_wait ? pw * mean_s / (c - a) : pw;
        if (v <= target)
            return c;
    }
}

static void test_erlang_c(void **state)
{
    (void)state;
    /* the formula itself against hand and table values: C(2, 1) = 1/3
     * (a^c/c! c/(c-a) / (1 + a + a^c/c! c/(c-a)) = 1 / 3), C(10, 8) = 0.4092 */
    assert_double_equal(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12);
    assert_double_equal(erlang_c(10, 8.0), 0.4092, 1e-4);

    mmc_t *m = calloc(1, sizeof *m);
    const double a = 8.0, mean_s = 3600;
    /* P(wait > 0) <= 0.19: Erlang C gives 0.2450 at c = 11 and 0.1398 at
     * c = 12; the target sits 0.05 from both, several interval widths */
    unsigned c1 = erlang_smallest(a, 0.19, 0, mean_s);
    assert_int_equal(c1, 12);
    assert_true(erlang_c(c1, a) < 0.19 - 0.04 && erlang_c(c1 - 1, a) > 0.19 + 0.04);
    fs_plan_result_t *rb = mmc_plan(m, "{metric: wait_prob, max: 0.19}", FS_PLAN_BISECT);
    size_t bisect_runs = m->runs;
    fs_plan_result_t *rs = mmc_plan(m, "{metric: wait_prob, max: 0.19}", FS_PLAN_SCAN);
    assert_int_equal(best_nodes(rb, 0), c1);
    assert_int_equal(best_nodes(rs, 0), c1);
    assert_true(rb->n_points <= 1 + 5); /* 32 counts: 1 + ceil(log2 32) */
    assert_int_equal(rs->n_points, 32);
    assert_true(bisect_runs <= 6 * 5);
    /* the simulated P(wait > 0) at c brackets Erlang C's value */
    const fs_plan_point_t *p = &rb->points[rb->best[0]];
    assert_true(fabs(p->ci[1].mean - erlang_c(c1, a)) < 0.03);
    fs_plan_result_destroy(rb);
    fs_plan_result_destroy(rs);

    /* mean wait <= 3 min: Erlang C gives 4.9 min at c = 11, 2.1 min at 12 */
    unsigned c2 = erlang_smallest(a, 180, 1, mean_s);
    assert_int_equal(c2, 12);
    rb = mmc_plan(m, "{metric: wait_mean, max: 3m}", FS_PLAN_BISECT);
    rs = mmc_plan(m, "{metric: wait_mean, max: 3m}", FS_PLAN_SCAN);
    assert_int_equal(best_nodes(rb, 0), c2);
    assert_int_equal(best_nodes(rs, 0), c2);
    fs_plan_result_destroy(rb);
    fs_plan_result_destroy(rs);
    free(m);
}

/* The quarterly cash flow by hand (docs/plan.md "Quarterly cash flow"):
 * two quarters, one purchase ($1,000,000 at the start of quarter 1), one
 * price change (electricity +46.41%/yr: x 1.1 in quarter 2, 1.1^4 =
 * 1.4641).  Each quarter's run spans a tenth of a quarter (x 10):
 *   opex q1 = 10 x (ops 1,000 + colo 500 + rent 300 + energy 2,000)       = 38,000
 *   opex q2 = 10 x (1,000 + 500 + 300 + 2,000 x 1.1)                     = 40,000
 *   residual = book value at 0.5 y (2-year straight line to 10%): 1e6 x (1 - 0.9 x 0.5 / 2) = 775,000
 *   NPV at 8%/yr: 1e6 + 38,000 / 1.08^0.25 + (40,000 - 775,000) / 1.08^0.5
 *               = 330,021.779023556 (computed apart from fleetsim)
 *   cost per delivered GPU-hour = (1e6 + 78,000 - 775,000) / (2 x 10 x 5,000) = 3.03
 *   payback against a fleet paying 700,000 a quarter: cumulative difference
 *   338,000 after quarter 1, -322,000 after quarter 2: (1 + 338/660) / 4 years. */
static void test_quarterly_by_hand(void **state)
{
    (void)state;
    double buy[2] = {1e6, 0}, q_capex[2], q_opex[2];
    fs_plan_qrun_t runs[2] = {
        {FS_PLAN_QUARTER_S / 10, 123, 1000, 2000, 500, 300, 5000},
        {FS_PLAN_QUARTER_S / 10, 123, 1000, 2000, 500, 300, 5000},
    };
    fs_plan_fin_in_t in = {.n_q = 2, .rate = 0.08, .elec_growth = 0.4641, .price_decline = 0,
                           .elec_mult = 1, .price_mult = 1, .dep_years = 2,
                           .residual_share = 0.1, .buy = buy};
    fs_plan_fin_out_t out;
    fs_plan_fin_compute(&in, runs, &out, q_capex, q_opex);
    assert_double_equal(q_capex[0], 1e6, 1e-6);
    assert_double_equal(q_capex[1], 0, 1e-9);
    assert_double_equal(q_opex[0], 38000, 1e-6);
    assert_double_equal(q_opex[1], 40000, 1e-6);
    assert_double_equal(out.residual, 775000, 1e-6);
    assert_double_equal(out.npv, 330021.779023556, 1e-6);
    assert_double_equal(out.cost_per_gpu_hour, 3.03, 1e-12);
    double b_capex[2] = {0, 0}, b_opex[2] = {700000, 700000};
    assert_double_equal(fs_plan_payback(q_capex, q_opex, b_capex, b_opex, 2),
                        (1 + 338000.0 / 660000.0) / 4, 1e-12);
    /* never paid back within the period, and no extra investment at all */
    double c_opex[2] = {400000, 400000};
    assert_true(isnan(fs_plan_payback(q_capex, q_opex, b_capex, c_opex, 2)));
    assert_double_equal(fs_plan_payback(b_capex, c_opex, q_capex, q_opex, 2), 0, 0);
    /* the GPU price +20% (recomputed): capex, the residual, ops and rent x 1.2 */
    in.price_mult = 1.2;
    fs_plan_fin_compute(&in, runs, &out, NULL, NULL);
    assert_double_equal(out.residual, 930000, 1e-6);
    assert_double_equal(out.opex, 10 * (1200 + 500 + 360 + 2000) + 10 * (1200 + 500 + 360 + 2200),
                        1e-6);
    /* a later purchase pays the declined price: 20%/yr, quarter 2 at 0.8^0.25 */
    double buy2[2] = {0, 1e6};
    in.price_mult = 1;
    in.price_decline = 0.2;
    in.buy = buy2;
    fs_plan_fin_compute(&in, runs, &out, q_capex, NULL);
    assert_double_equal(q_capex[1], 1e6 * 0.9457416090031758, 1e-3);
    /* committed lease payments after the period: one quarter of 9,000 at 0.75 y */
    double tail[1] = {9000};
    in.buy = buy;
    in.price_decline = 0;
    in.tail = tail;
    in.n_tail = 1;
    fs_plan_fin_compute(&in, runs, &out, NULL, NULL);
    assert_double_equal(out.tail, 9000, 1e-9);
    assert_double_equal(out.npv, 330021.779023556 + 9000 / 1.0594191442977763, 1e-6);
}

/* Per-replication NPV intervals: fs_plan_fin_finish against a direct
 * computation (mean, sd, t(0.975, 2) = 4.302652729911275 for 3 reps). */
static void test_quarterly_intervals(void **state)
{
    (void)state;
    fs_plan_fin_t *f = fs_calloc(1, sizeof *f);
    assert_non_null(f);
    f->years = 0.5;
    f->n_q = 2;
    f->reps = 3;
    f->rate = 0.08;
    f->dep_years = 2;
    f->residual_share = 0.1;
    f->baseline = -1;
    f->sens_choice = -1;
    f->n_fleets = 1;
    fs_plan_fleet_t fl;
    memset(&fl, 0, sizeof fl);
    fl.buy = test_calloc(2, sizeof *fl.buy);
    fl.buy[0] = 1e6;
    fl.runs = test_calloc(6, sizeof *fl.runs);
    double energy[3] = {2000, 2500, 1800}, npv[3];
    for (size_t r = 0; r < 3; r++)
        for (size_t q = 0; q < 2; q++)
            fl.runs[r * 2 + q] = (fs_plan_qrun_t){FS_PLAN_QUARTER_S / 10, 0, 1000, energy[r], 500,
                                                   300, 5000};
    for (size_t r = 0; r < 3; r++) /* direct: 1e6 + 10 x costs, discounted, less the residual */
        npv[r] = 1e6 + 10 * (1800 + energy[r]) / pow(1.08, 0.25) +
                 (10 * (1800 + energy[r]) - 775000) / pow(1.08, 0.5);
    double mean = (npv[0] + npv[1] + npv[2]) / 3, ss = 0;
    for (size_t r = 0; r < 3; r++)
        ss += (npv[r] - mean) * (npv[r] - mean);
    double half = 4.302652729911275 * sqrt(ss / 2) / sqrt(3);
    f->fleets = &fl;
    assert_int_equal(fs_plan_fin_finish(f, 0.95), 0);
    for (size_t r = 0; r < 3; r++)
        assert_double_equal(fl.npv[r], npv[r], 1e-6);
    assert_double_equal(fl.npv_ci.mean, mean, 1e-6);
    assert_double_equal(fl.npv_ci.half, half, 1e-6);
    assert_true(isnan(fl.payback[0])); /* no baseline */
    f->fleets = NULL;
    f->n_fleets = 0;
    fs_free(fl.out);
    fs_free(fl.q_capex);
    fs_free(fl.q_opex);
    fs_free(fl.npv);
    fs_free(fl.payback);
    fs_free(fl.cpgh);
    test_free(fl.buy);
    test_free(fl.runs);
    fs_plan_fin_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metric, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bisect_equals_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frontier, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eval_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_search_every_quarter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_erlang_c, setup, teardown),
        cmocka_unit_test(test_quarterly_by_hand),
        cmocka_unit_test(test_quarterly_intervals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
