/*
 * What the run's error says when a scheduling policy fails (issue 39: "Errors
 * from a policy say 'scheduling pass: invalid input': say which job, which
 * policy, what").
 *   - a plugin (a policy table, as a shared object's) whose pass asks the
 *     host for something it refuses and returns that error: the message
 *     names the pass, the plugin's policy, the job and the refused action;
 *   - a plugin whose pass returns a code of its own: the code;
 *   - a plugin's timer that fails: "policy timer", not "scheduling pass";
 *   - the built-in scheduler failing in a pass (each allocation made to fail
 *     in turn): the message names policy sched and its queue order.
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

#include "fs_test_util.h"
#include "models/fs_model.h"
#include "models/fs_plugin_abi.h"
#include "models/fs_policy.h"
#include "scenarios/fs_scenario.h"
#include "sim/fs_alloc.h"
#include "traces/fs_memsrc.h"

static const char *const YAML =
    "name: t\nseed: 3\n"
    "cluster: {pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]}\n"
    "workload: {synthetic: {arrivals: {rate: 1/h}, gpus: {1: 1.0}, "
    "duration: {dist: constant, value: 1m}}}\n";

/* n jobs of one GPU each, ids 1.., submitted at 0, 10 s, ... */
static void make_jobs(fs_job_t *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fs_job_init(&jobs[i]);
        jobs[i].id = i + 1;
        jobs[i].gpus = 1;
        jobs[i].submit = fs_time_from_s(10.0 * (double)i);
        jobs[i].duration = fs_time_from_s(3600);
    }
}

/* Runs cfg over jobs (fail_at: the model's allocations from that one on
 * fail, 0 none); the run's return code, its error in *err. */
static int run_cfg(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, uint64_t fail_at,
                   fs_error_t *err)
{
    fs_source_t *src;
    fs_model_t *m = NULL;
    fs_test_rows_t rows = {0};
    assert_int_equal(fs_memsrc_create(jobs, n, NULL, 0, NULL, 0, &src, err), 0);
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rows};
    fs_error_clear(err);
    fs_alloc_fail_after(fail_at);
    int rc = fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, err);
    if (!rc)
        rc = fs_model_run(m, NULL, NULL, err);
    fs_alloc_fail_after(0);
    fs_model_destroy(m);
    fs_source_destroy(src);
    fs_test_rows_free(&rows);
    return rc;
}

/* ---- plugins ------------------------------------------------------------------------- */

/* The plugins below keep the handles queued to them in a short list; each
 * pass does one wrong thing (`bad`) with them. */
enum { BAD_START_TWICE, BAD_PREEMPT_QUEUED, BAD_NO_JOB, BAD_RETURN, BAD_NAN_TIMER,
       BAD_TIMER_FAILS };

typedef struct bp {
    const fleetsim_host *h;
    uint32_t q[16];
    size_t n;
    int bad;
} bp_t;

static int bp_bad;  /* the next plugin's wrong thing (create reads it) */

static int bp_create(const fleetsim_host *h, const char *const *k, const char *const *v, size_t n,
                     void **state, char *err, size_t errlen)
{
    (void)k, (void)v, (void)n, (void)err, (void)errlen;
    bp_t *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->h = h;
    p->bad = bp_bad;
    *state = p;
    return 0;
}
static void bp_destroy(void *state) { free(state); }
static int bp_enqueue(void *state, uint32_t handle)
{
    bp_t *p = state;
    if (p->n == 16)
        return -1;
    p->q[p->n++] = handle;
    return 0;
}
static int bp_pass(void *state)
{
    bp_t *p = state;
    const fleetsim_host *h = p->h;
    if (p->n == 0)
        return 0;
    switch (p->bad) {
    case BAD_START_TWICE: {     /* the first job, then the same again */
        int rc = h->start(h->sim, p->q[0]);
        return rc < 0 ? rc : h->start(h->sim, p->q[0]);
    }
    case BAD_PREEMPT_QUEUED: return h->preempt(h->sim, p->q[0]);
    case BAD_NO_JOB: return h->start(h->sim, 12345);
    case BAD_RETURN: return 5;
    case BAD_NAN_TIMER: return h->timer(h->sim, NAN, 1);
    default: return h->timer(h->sim, h->now(h->sim) + 1, 1);  /* bp_timer fails */
    }
}
static void bp_job_end(void *state, uint32_t handle) { (void)state, (void)handle; }
static size_t bp_queued(const void *state) { return ((const bp_t *)state)->n; }
static int bp_timer(void *state, uint64_t data)
{
    (void)state, (void)data;
    return -1;
}

static const fleetsim_policy bp_policy = {
    .abi = FLEETSIM_POLICY_ABI, .name = "wrong-plugin", .create = bp_create,
    .destroy = bp_destroy, .enqueue = bp_enqueue, .pass = bp_pass, .job_end = bp_job_end,
    .queued = bp_queued, .timer = bp_timer};

/* The run's error under a plugin doing `bad`. */
static int plugin_run(int bad, fs_error_t *err)
{
    fs_config_t cfg;
    assert_int_equal(fs_scenario_load_string("t.yaml", YAML, NULL, 0, &cfg, err), 0);
    cfg.scheduler.plugin_table = &bp_policy;
    fs_job_t jobs[2];
    make_jobs(jobs, 2);
    bp_bad = bad;
    int rc = run_cfg(&cfg, jobs, 2, 0, err);
    fs_config_release(&cfg);
    print_message("%d: %s\n", bad, err->msg);
    return rc;
}

static void test_plugin_refused_action(void **state)
{
    (void)state;
    fs_error_t err;
    assert_int_equal(plugin_run(BAD_START_TWICE, &err), FS_EINVAL);
    assert_string_equal(err.msg, "scheduling pass (policy wrong-plugin): job 1: plugin asked to "
                                 "start a job that is not queued (it is running)");
    assert_int_equal(plugin_run(BAD_PREEMPT_QUEUED, &err), FS_EINVAL);
    assert_string_equal(err.msg, "scheduling pass (policy wrong-plugin): job 1: plugin asked to "
                                 "preempt a job that is not running (it is queued)");
    assert_int_equal(plugin_run(BAD_NO_JOB, &err), FS_EINVAL);
    assert_string_equal(err.msg, "scheduling pass (policy wrong-plugin): handle 12345: plugin "
                                 "asked to start a job, but the handle names no job");
    assert_int_equal(plugin_run(BAD_NAN_TIMER, &err), FS_EINVAL);
    assert_string_equal(err.msg, "scheduling pass (policy wrong-plugin): plugin set a timer at "
                                 "NaN seconds");
}

static void test_plugin_own_code(void **state)
{
    (void)state;
    fs_error_t err;
    assert_int_equal(plugin_run(BAD_RETURN, &err), FS_EINTERNAL);
    assert_string_equal(err.msg, "scheduling pass (policy wrong-plugin): the plugin returned 5 "
                                 "(0, or a negative error code, expected)");
    assert_int_equal(plugin_run(BAD_TIMER_FAILS, &err), FS_EINVAL);
    assert_string_equal(err.msg, "policy timer (policy wrong-plugin): the plugin returned -1 "
                                 "(invalid input)");
}

/* ---- the built-in scheduler ------------------------------------------------------------------ */

/* Every allocation in turn fails under conservative backfill (whose pass
 * allocates its profile and scratch lists): a run the pass stopped says the
 * policy and its order, and at least one did. */
static void test_sched_pass_names_policy(void **state)
{
    (void)state;
    fs_config_t cfg;
    fs_error_t err;
    char y[1024];
    snprintf(y, sizeof y, "%sscheduler: {queue: fifo, backfill: conservative}\n", YAML);
    assert_int_equal(fs_scenario_load_string("t.yaml", y, NULL, 0, &cfg, &err), 0);
    fs_job_t jobs[12];
    make_jobs(jobs, 12);
    for (size_t i = 0; i < 12; i++)
        jobs[i].gpus = 1 + (uint32_t)(i % 5);
    int64_t live0 = fs_alloc_live();
    size_t in_pass = 0;
    const char *want = "scheduling pass (policy sched, queue fifo): ";
    for (uint64_t k = 1; k < 5000; k++) {
        int rc = run_cfg(&cfg, jobs, 12, k, &err);
        assert_int_equal(fs_alloc_live(), live0);
        if (rc == 0)
            break;
        assert_int_equal(rc, FS_ENOMEM);
        if (strncmp(err.msg, "scheduling pass", 15) != 0)
            continue;
        if (strncmp(err.msg, want, strlen(want)) != 0)
            fail_msg("allocation %llu: \"%s\" does not start with \"%s\"", (unsigned long long)k,
                     err.msg, want);
        in_pass++;
    }
    print_message("%zu runs stopped in a pass\n", in_pass);
    assert_true(in_pass > 0);
    fs_config_release(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plugin_refused_action),
        cmocka_unit_test(test_plugin_own_code),
        cmocka_unit_test(test_sched_pass_names_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
