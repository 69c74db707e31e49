/*
 * Allocation contexts (sim/fs_alloc.h, docs/library.md "Memory"): a
 * context's allocator sees every allocation made while it is bound, and
 * its counters and fault injection are its own.  Two runs on two threads,
 * one failing at its Nth allocation, fail and succeed respectively, the
 * successful one byte-identical to a lone run; live counts are zero after
 * teardown; blocks freed on another thread go back to their context; the
 * results writer's and a sweep's threads work in their starter's context;
 * the public API gives a run its allocator and reads its counters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_test_util.h"
#include "scenarios/fs_scenario.h"
#include "sim/api/fleetsim.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"

#define HORIZON "horizon=12h"
#define WARMUP "warmup=1h"

/* A thread-safe counting allocator that can refuse its Nth request. */
typedef struct counter {
    atomic_ullong requests;     /* allocations and resizes */
    atomic_llong live;
    uint64_t fail_at;           /* 0: never; else request number fail_at and later */
} counter_t;

static void *counting(void *ud, void *p, size_t osize, size_t nsize)
{
    counter_t *c = ud;
    (void)osize;
    if (nsize == 0) {
        atomic_fetch_sub(&c->live, 1);
        free(p);
        return NULL;
    }
    unsigned long long k = atomic_fetch_add(&c->requests, 1) + 1;
    if (c->fail_at && k >= c->fail_at)
        return NULL;
    if (p)
        return realloc(p, nsize);
    void *q = malloc(nsize);
    if (q)
        atomic_fetch_add(&c->live, 1);
    return q;
}

static void *free_on_thread(void *p)
{
    fs_free(p);     /* this thread is bound to nothing */
    return NULL;
}

static void test_context_counts(void **state)
{
    (void)state;
    counter_t k = {0};
    fs_alloc_ctx_t c;
    fs_alloc_ctx_init(&c, counting, &k);
    uint64_t d0 = fs_alloc_count();
    int64_t dlive0 = fs_alloc_live();
    assert_null(fs_alloc_bound());
    assert_null(fs_alloc_bind(&c));
    assert_ptr_equal(fs_alloc_bound(), &c);

    char *a = fs_malloc(100);
    unsigned char *z = fs_calloc(10, 8);
    assert_non_null(a);
    assert_non_null(z);
    assert_int_equal((uintptr_t)a % _Alignof(max_align_t), 0);
    assert_int_equal((uintptr_t)z % _Alignof(max_align_t), 0);
    for (int i = 0; i < 80; i++)
        assert_int_equal(z[i], 0);
    memset(a, 'x', 100);
    a = fs_realloc(a, 1000);
    assert_non_null(a);
    assert_int_equal(a[99], 'x');
    fs_alloc_stats_t st;
    fs_alloc_ctx_stats(&c, &st);
    assert_int_equal(st.served, 3);
    assert_int_equal(st.live_blocks, 2);
    assert_int_equal(st.live_bytes, 1000 + 80);
    assert_int_equal(fs_alloc_live(), 2);  /* the bound context's */
    a = fs_realloc(a, 10);
    fs_alloc_ctx_stats(&c, &st);
    assert_int_equal(st.live_bytes, 10 + 80);
    assert_int_equal(st.peak_bytes, 1000 + 80);
    assert_int_equal(atomic_load(&k.requests), 4);

    /* injection in c only: the 2nd request from now fails, and every later one */
    fs_alloc_ctx_fail_after(&c, 2);
    void *ok = fs_malloc(1), *bad = fs_malloc(1);
    assert_non_null(ok);
    assert_null(bad);
    assert_null(fs_realloc(ok, 5));
    assert_null(fs_calloc(SIZE_MAX / 2, 4));
    fs_alloc_ctx_fail_after(&c, 0);
    assert_null(fs_calloc(SIZE_MAX / 2, 4));    /* overflow: refused, counted */
    fs_alloc_ctx_stats(&c, &st);
    assert_int_equal(st.failed, 4);

    /* unbound: the default context, untouched by all of the above */
    assert_ptr_equal(fs_alloc_bind(NULL), &c);
    assert_int_equal(fs_alloc_count(), d0);
    assert_int_equal(fs_alloc_live(), dlive0);
    void *d = fs_malloc(3);
    assert_int_equal(fs_alloc_live(), dlive0 + 1);
    fs_free(ok);        /* unbound, still goes back to c */
    fs_free(d);
    assert_int_equal(fs_alloc_live(), dlive0);

    /* a block freed on another thread returns to its own context */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, free_on_thread, a), 0);
    pthread_join(t, NULL);
    fs_free(z);
    fs_alloc_ctx_stats(&c, &st);
    assert_int_equal(st.live_blocks, 0);
    assert_int_equal(st.live_bytes, 0);
    assert_int_equal(atomic_load(&k.live), 0);
    assert_int_equal(fs_alloc_ctx_release(&c), 0);
}

/* ---- two runs on two threads (the runner, results files) ------------------------- */

typedef struct job {
    const char *out;
    uint64_t fail_after;        /* 0: none */
    int writer_thread;
    pthread_mutex_t *h5;
    int rc;
    fs_alloc_stats_t st;
    int64_t unreleased;
} job_t;

static void h5_lock(void *ud, int lock)
{
    if (lock)
        pthread_mutex_lock(ud);
    else
        pthread_mutex_unlock(ud);
}

static void *run_job(void *arg)
{
    job_t *j = arg;
    fs_alloc_ctx_t c;
    fs_alloc_ctx_init(&c, NULL, NULL);
    fs_alloc_ctx_t *prev = fs_alloc_bind(&c);
    fs_alloc_ctx_fail_after(&c, j->fail_after);
    /* a timeline row a second: 43,200 rows, chunks for the writer thread */
    const char *sets[] = {WARMUP, HORIZON, "output.timeline_interval=1s"};
    fs_config_t cfg;
    fs_error_t e;
    j->rc = fs_scenario_load_string("<builtin>", fs_scenario_default_text(), sets, 3, &cfg, &e);
    if (j->rc == 0) {
        fs_run_opts_t o;
        fs_run_opts_init(&o);
        o.output = j->out;
        o.writer_thread = j->writer_thread;
        o.io_lock = h5_lock;
        o.io_lock_ud = j->h5;
        fs_run_report_t rep;
        j->rc = fs_run_config(&cfg, &o, &rep, &e);
        fs_config_release(&cfg);
    }
    fs_alloc_bind(prev);
    fs_alloc_ctx_stats(&c, &j->st);
    j->unreleased = fs_alloc_ctx_release(&c);
    return NULL;
}

static void test_two_runs_one_fails(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    assert_non_null(dir);
    char *lone = fs_test_path(dir, "lone.h5"), *a = fs_test_path(dir, "a.h5"),
         *b = fs_test_path(dir, "b.h5");
    pthread_mutex_t h5;
    pthread_mutex_init(&h5, NULL);
    int64_t live0 = fs_alloc_live();
    uint64_t count0 = fs_alloc_count();

    job_t l = {.out = lone, .writer_thread = 1, .h5 = &h5};
    run_job(&l);
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.unreleased, 0);
    assert_true(l.st.served > 100);
    assert_true(l.st.peak_bytes > 100000);
    assert_int_equal(l.st.failed, 0);

    /* one run fails at its Nth allocation (early, in the middle, near the
     * end) while the other, on its own thread at the same time, succeeds */
    uint64_t at[] = {1, l.st.served / 2, l.st.served - 5};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        job_t ja = {.out = a, .fail_after = at[i], .writer_thread = 1, .h5 = &h5};
        job_t jb = {.out = b, .writer_thread = 1, .h5 = &h5};
        pthread_t ta, tb;
        assert_int_equal(pthread_create(&ta, NULL, run_job, &ja), 0);
        assert_int_equal(pthread_create(&tb, NULL, run_job, &jb), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        assert_int_equal(ja.rc, FS_ENOMEM);
        assert_true(ja.st.failed >= 1);
        assert_int_equal(ja.st.live_blocks, 0);
        assert_int_equal(ja.unreleased, 0);
        size_t na;
        char *da = fs_test_read(a, &na);
        assert_null(da);    /* no results file from the failed run */
        assert_int_equal(jb.rc, 0);
        assert_int_equal(jb.st.failed, 0);
        assert_int_equal(jb.st.live_blocks, 0);
        assert_int_equal(jb.st.live_bytes, 0);
        size_t n1, nb;
        char *d1 = fs_test_read(lone, &n1), *db = fs_test_read(b, &nb);
        assert_non_null(d1);
        assert_non_null(db);
        assert_true(nb == n1 && memcmp(db, d1, n1) == 0);
        free(d1);
        free(db);
    }
    /* nothing of the runs (nor of their writer threads) went to the default context */
    assert_int_equal(fs_alloc_count(), count0);
    assert_int_equal(fs_alloc_live(), live0);
    pthread_mutex_destroy(&h5);
    fs_test_rmtree(dir);
    free(lone);
    free(a);
    free(b);
    free(dir);
}

/* ---- the public API ------------------------------------------------------------- */

static fleetsim_scenario *scenario(void)
{
    fleetsim_scenario *s;
    assert_int_equal(fleetsim_scenario_load_default(&s), FLEETSIM_OK);
    assert_int_equal(fleetsim_scenario_set(s, WARMUP), FLEETSIM_OK);
    assert_int_equal(fleetsim_scenario_set(s, HORIZON), FLEETSIM_OK);
    return s;
}

static void test_api_allocator_sees_every_allocation(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    char *out = fs_test_path(dir, "r.h5");
    int64_t live_start = fs_alloc_live();
    fleetsim_scenario *s = scenario();
    counter_t k = {0};
    assert_int_equal(fleetsim_scenario_set_allocator(s, counting, &k), FLEETSIM_OK);
    uint64_t count0 = fs_alloc_count();
    int64_t live0 = fs_alloc_live();
    fleetsim_result *r;
    assert_int_equal(fleetsim_run(s, out, NULL, NULL, &r), FLEETSIM_OK);
    /* the default context served the result only */
    assert_int_equal(fs_alloc_count(), count0 + 1);
    assert_int_equal(fs_alloc_live(), live0 + 1);
    fleetsim_memory m;
    assert_int_equal(fleetsim_scenario_memory(s, &m), FLEETSIM_OK);
    assert_true(m.allocations > 100);
    assert_int_equal(m.allocations, atomic_load(&k.requests));
    assert_int_equal(m.failed, 0);
    assert_int_equal(m.live_blocks, 0);
    assert_int_equal(m.live_bytes, 0);
    assert_true(m.peak_bytes > 100000);
    assert_int_equal(atomic_load(&k.live), 0);
    fleetsim_result_free(r);

    /* the counters start again at each call; a dump is counted too */
    assert_non_null(fleetsim_scenario_dump(s));
    assert_int_equal(fleetsim_scenario_memory(s, &m), FLEETSIM_OK);
    assert_true(m.allocations > 0 && m.allocations < 100000);
    assert_int_equal(m.live_blocks, 0);

    /* back to the C library */
    assert_int_equal(fleetsim_scenario_set_allocator(s, NULL, NULL), FLEETSIM_OK);
    unsigned long long before = atomic_load(&k.requests);
    assert_int_equal(fleetsim_run(s, NULL, NULL, NULL, &r), FLEETSIM_OK);
    assert_int_equal(atomic_load(&k.requests), before);
    fleetsim_result_free(r);
    fleetsim_scenario_free(s);
    assert_int_equal(fs_alloc_live(), live_start);
    fs_test_rmtree(dir);
    free(out);
    free(dir);
}

typedef struct apijob {
    uint64_t fail_at;
    int st;
    fleetsim_memory m;
    double v[256];
    size_t n;
    char err[256];
} apijob_t;

static void *api_run(void *arg)
{
    apijob_t *j = arg;
    fleetsim_scenario *s;
    if (fleetsim_scenario_load_default(&s) != FLEETSIM_OK ||
        fleetsim_scenario_set(s, WARMUP) != FLEETSIM_OK ||
        fleetsim_scenario_set(s, HORIZON) != FLEETSIM_OK) {
        j->st = -1;
        fleetsim_scenario_free(s);
        return NULL;
    }
    counter_t k = {.fail_at = j->fail_at};
    fleetsim_scenario_set_allocator(s, counting, &k);
    fleetsim_result *r;
    j->st = fleetsim_run(s, NULL, NULL, NULL, &r);
    fleetsim_scenario_memory(s, &j->m);
    snprintf(j->err, sizeof j->err, "%s", fleetsim_scenario_error(s));
    if (j->st == FLEETSIM_OK) {
        j->n = fleetsim_result_count(r);
        for (size_t i = 0; i < j->n && i < 256; i++)
            fleetsim_result_get(r, fleetsim_result_name(r, i), &j->v[i]);
        fleetsim_result_free(r);
    }
    fleetsim_scenario_free(s);
    if (atomic_load(&k.live) != 0)
        j->st = -2;
    return NULL;
}

static void test_api_two_threads_one_fails(void **state)
{
    (void)state;
    apijob_t lone = {0};
    api_run(&lone);
    assert_int_equal(lone.st, FLEETSIM_OK);
    assert_true(lone.n > 10 && lone.n <= 256);
    apijob_t ja = {.fail_at = lone.m.allocations / 3}, jb = {0};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, api_run, &ja), 0);
    assert_int_equal(pthread_create(&tb, NULL, api_run, &jb), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(ja.st, FLEETSIM_ENOMEM);
    assert_true(strstr(ja.err, "out of memory") != NULL);
    assert_true(ja.m.failed >= 1);
    assert_int_equal(ja.m.live_blocks, 0);
    assert_int_equal(jb.st, FLEETSIM_OK);
    assert_int_equal(jb.m.failed, 0);
    assert_int_equal(jb.m.live_blocks, 0);
    assert_int_equal(jb.m.allocations, lone.m.allocations);
    assert_int_equal(jb.m.peak_bytes, lone.m.peak_bytes);
    assert_int_equal(jb.n, lone.n);
    assert_memory_equal(jb.v, lone.v, lone.n * sizeof lone.v[0]);
}

/* A sweep's worker threads allocate in the scenario's context. */
static void test_api_sweep_threads(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    char *out = fs_test_path(dir, "sweep");
    fleetsim_scenario *s = scenario();
    assert_int_equal(fleetsim_scenario_set(s, "horizon=3h"), FLEETSIM_OK);
    assert_int_equal(fleetsim_scenario_set(s, "sweep={replications: 2}"), FLEETSIM_OK);
    counter_t k = {0};
    assert_int_equal(fleetsim_scenario_set_allocator(s, counting, &k), FLEETSIM_OK);
    uint64_t count0 = fs_alloc_count();
    assert_int_equal(fleetsim_sweep(s, out, 2, 0), FLEETSIM_OK);
    assert_int_equal(fs_alloc_count(), count0);
    fleetsim_memory m;
    assert_int_equal(fleetsim_scenario_memory(s, &m), FLEETSIM_OK);
    assert_true(m.allocations > 200);
    assert_int_equal(m.allocations, atomic_load(&k.requests));
    assert_int_equal(m.live_blocks, 0);
    assert_int_equal(atomic_load(&k.live), 0);
    fleetsim_scenario_free(s);
    fs_test_rmtree(dir);
    free(out);
    free(dir);
}

/* A plan (API 1.3) from a scenario given as text: its sweeps' threads
 * allocate in the scenario's context and give everything back; the answer
 * is consistent (the chosen point meets every SLO, no smaller evaluated
 * fleet does), its figures are named, and a scenario without a plan is
 * refused with the key's place. */
static const char *const PLAN_YAML =
    "name: plan-api\n"
    "seed: 5\n"
    "horizon: 4d\n"
    "warmup: 12h\n"
    "cluster:\n"
    "  pools:\n"
    "    - {name: main, gpu: H100, nodes: 4, gpus_per_node: 1}\n"
    "workload:\n"
    "  synthetic:\n"
    "    arrivals: {process: poisson, rate: 2/h}\n"
    "    gpus: {1: 1.0}\n"
    "    duration: {dist: exponential, mean: 1h}\n"
    "scheduler: {queue: fifo}\n"
    "plan:\n"
    "  objective: gpu_hours_capacity\n"
    "  replications: 3\n"
    "  slo:\n"
    "    - {metric: wait_prob, max: 0.25}\n"
    "  choices:\n"
    "    - {pool: main, nodes: {from: 2, to: 9}}\n";

static void test_api_plan(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    char *out = fs_test_path(dir, "plan");
    fleetsim_scenario *s;
    assert_int_equal(fleetsim_scenario_load_string("plan-api", PLAN_YAML, &s), FLEETSIM_OK);
    counter_t k = {0};
    assert_int_equal(fleetsim_scenario_set_allocator(s, counting, &k), FLEETSIM_OK);
    int64_t live0 = fs_alloc_live();
    fleetsim_plan_result *p = NULL;
    assert_int_equal(fleetsim_plan(s, out, 2, &p), FLEETSIM_OK);
    assert_true(fs_alloc_live() > live0);     /* the answer is the caller's */
    fleetsim_memory m;
    assert_int_equal(fleetsim_scenario_memory(s, &m), FLEETSIM_OK);
    assert_true(m.allocations > 100);
    assert_int_equal(m.live_blocks, 0);
    assert_int_equal(atomic_load(&k.live), 0);

    size_t n = fleetsim_plan_count(p);
    long c = fleetsim_plan_chosen(p);
    assert_true(n >= 2 && n <= 8);
    assert_true(c >= 0 && (size_t)c < n);
    double nodes_c, v, hi;
    assert_int_equal(fleetsim_plan_get(p, (size_t)c, "nodes", &nodes_c), FLEETSIM_OK);
    assert_int_equal(fleetsim_plan_get(p, (size_t)c, "meets", &v), FLEETSIM_OK);
    assert_true(v == 1);
    assert_int_equal(fleetsim_plan_get(p, (size_t)c, "wait_prob_hi", &hi), FLEETSIM_OK);
    assert_true(hi <= 0.25);
    assert_int_equal(fleetsim_plan_get(p, (size_t)c, "chosen", &v), FLEETSIM_OK);
    assert_true(v == 1);
    for (size_t i = 0; i < n; i++) {
        double nodes, meets;
        assert_string_equal(fleetsim_plan_choice(p, i), "main");
        assert_int_equal(fleetsim_plan_get(p, i, "nodes", &nodes), FLEETSIM_OK);
        assert_int_equal(fleetsim_plan_get(p, i, "meets", &meets), FLEETSIM_OK);
        assert_int_equal(fleetsim_plan_get(p, i, "wait_prob_hi", &hi), FLEETSIM_OK);
        assert_true(meets == (hi <= 0.25));
        if (nodes < nodes_c)
            assert_true(meets == 0);
    }
    assert_int_equal(fleetsim_plan_get(p, 0, "no_such_figure", &v), FLEETSIM_EINVAL);
    assert_int_equal(fleetsim_plan_get(p, n, "nodes", &v), FLEETSIM_EINVAL);
    assert_null(fleetsim_plan_choice(p, n));
    int has_cash = 0, j = 0;
    for (const char *name; (name = fleetsim_plan_name(p, (size_t)j)) != NULL; j++)
        has_cash |= strcmp(name, "npv") == 0;
    assert_true(has_cash && j == 7 + 4 * 2 + 6);
    char *h5 = fs_test_path(out, "plan.h5");
    assert_string_equal(fleetsim_plan_file(p), h5);
    assert_int_equal(access(h5, R_OK), 0);
    free(h5);
    fleetsim_plan_free(p);
    assert_int_equal(fs_alloc_live(), live0);

    /* no plan: block: refused, nothing written */
    fleetsim_scenario *d = scenario();
    char *out2 = fs_test_path(dir, "none");
    assert_int_equal(fleetsim_plan(d, out2, 1, &p), FLEETSIM_EINVAL);
    assert_null(p);
    assert_true(strstr(fleetsim_scenario_error(d), "plan") != NULL);
    assert_int_not_equal(access(out2, F_OK), 0);
    fleetsim_scenario_free(d);
    free(out2);

    fleetsim_scenario_free(s);
    fs_test_rmtree(dir);
    free(out);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_counts),
        cmocka_unit_test(test_two_runs_one_fails),
        cmocka_unit_test(test_api_allocator_sees_every_allocation),
        cmocka_unit_test(test_api_two_threads_one_fails),
        cmocka_unit_test(test_api_sweep_threads),
        cmocka_unit_test(test_api_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
