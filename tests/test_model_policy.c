/*
 * The model runs the policy its creator passes in (fs_model_create, issue
 * #38 "the policy passed in"): a policy the configuration does not name
 * (a last-in first-out stack, defined here) decides the order, and a NULL
 * policy is refused with the configuration's key named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "fs_test_util.h"
#include "models/fs_model.h"
#include "models/fs_policy.h"
#include "sim/fs_alloc.h"
#include "traces/fs_memsrc.h"

#define S(x) ((fs_time_t)((x) * FS_US_PER_S))

/* LIFO: the job queued last starts first; strict (nothing passes the top). */
typedef struct lifo {
    uint32_t v[16];
    size_t n;
    unsigned enqueued, passes;
} lifo_t;

static int lifo_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    (void)m, (void)cfg, (void)err;
    lifo_t *l = fs_calloc(1, sizeof *l);
    if (!l)
        return FS_ENOMEM;
    *state = l;
    return 0;
}

static void lifo_destroy(void *state) { fs_free(state); }

static int lifo_enqueue(void *state, fs_model_t *m, uint32_t slot)
{
    (void)m;
    lifo_t *l = state;
    if (l->n == sizeof l->v / sizeof l->v[0])
        return FS_ENOMEM;
    l->v[l->n++] = slot;
    l->enqueued++;
    return 0;
}

static int lifo_pass(void *state, fs_model_t *m)
{
    lifo_t *l = state;
    l->passes++;
    while (l->n) {
        int rc = fs_model_start(m, l->v[l->n - 1]);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        l->n--;
    }
    return 0;
}

static size_t lifo_queued(const void *state) { return ((const lifo_t *)state)->n; }

static const fs_policy_ops_t lifo_policy = {
    .name = "lifo",
    .create = lifo_create,
    .destroy = lifo_destroy,
    .enqueue = lifo_enqueue,
    .pass = lifo_pass,
    .queued = lifo_queued,
};

static fs_job_t job(uint64_t id, double submit, double dur)
{
    fs_job_t j;
    fs_job_init(&j);
    j.id = id;
    j.submit = S(submit);
    j.gpus = 8;
    j.duration = S(dur);
    return j;
}

/* One 8-GPU node, three whole-node jobs: 1 runs 0-10 s, 2 and 3 wait.  The
 * configuration names FIFO (2 then 3); the policy passed in runs 3 first. */
static void test_runs_the_policy_passed_in(void **s)
{
    (void)s;
    fs_job_t jobs[] = {job(1, 0, 10), job(2, 1, 10), job(3, 2, 10)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pool, 1, 8, FS_QUEUE_FIFO);
    assert_ptr_not_equal(fs_policy_select(&cfg.scheduler), &lifo_policy);
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    static fs_test_rows_t rs;
    rs.n = 0;
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
    assert_int_equal(fs_memsrc_create(jobs, 3, NULL, 0, NULL, 0, &src, &err), 0);
    assert_int_equal(fs_model_create(&cfg, &lifo_policy, src, &sink, &m, &err), 0);
    assert_int_equal(fs_model_run(m, NULL, NULL, &err), 0);
    fs_run_totals_t t;
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    const lifo_t *l = fs_model_policy_state(m);
    assert_int_equal(l->enqueued, 3);
    assert_true(l->passes >= 3);
    assert_int_equal(rs.n, 3);
    assert_double_equal(fs_test_find(&rs, 1)->start, 0, 1e-9);
    assert_double_equal(fs_test_find(&rs, 3)->start, 10, 1e-9);
    assert_double_equal(fs_test_find(&rs, 2)->start, 20, 1e-9);
    fs_model_destroy(m);
    fs_source_destroy(src);

    /* the same run with the policy the configuration names: FIFO order */
    rs.n = 0;
    assert_int_equal(fs_memsrc_create(jobs, 3, NULL, 0, NULL, 0, &src, &err), 0);
    assert_int_equal(fs_model_create(&cfg, fs_policy_select(&cfg.scheduler), src, &sink, &m,
                                     &err), 0);
    assert_int_equal(fs_model_run(m, NULL, NULL, &err), 0);
    assert_int_equal(fs_model_finish(m, &t, &err), 0);
    assert_double_equal(fs_test_find(&rs, 2)->start, 10, 1e-9);
    assert_double_equal(fs_test_find(&rs, 3)->start, 20, 1e-9);
    fs_model_destroy(m);
    fs_source_destroy(src);
    fs_test_rows_free(&rs);
}

/* A pass that fails without a message of its own: the run's error says
 * where, which policy and what the code means (it said "scheduling pass:
 * invalid input" before). */
static int broken_pass(void *state, fs_model_t *m)
{
    (void)state, (void)m;
    return FS_EINVAL;
}

static void test_failed_pass_names_the_policy(void **s)
{
    (void)s;
    fs_job_t jobs[] = {job(1, 0, 10)};
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pool, 1, 8, FS_QUEUE_FIFO);
    fs_policy_ops_t broken = lifo_policy;
    broken.name = "broken";
    broken.pass = broken_pass;
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(jobs, 1, NULL, 0, NULL, 0, &src, &err), 0);
    static fs_test_rows_t rs;
    rs.n = 0;
    fs_sink_t sink = {.job = fs_test_collect, .ud = &rs};
    assert_int_equal(fs_model_create(&cfg, &broken, src, &sink, &m, &err), 0);
    fs_error_clear(&err);
    assert_int_equal(fs_model_run(m, NULL, NULL, &err), FS_EINVAL);
    assert_string_equal(err.msg, "scheduling pass (policy broken): invalid input");
    fs_model_destroy(m);
    fs_source_destroy(src);
    fs_test_rows_free(&rs);
}

/* No policy: FS_EINVAL naming scheduler.queue, no model. */
static void test_no_policy_is_refused(void **s)
{
    (void)s;
    fs_pool_cfg_t pool;
    fs_config_t cfg;
    fs_test_base_cfg(&cfg, &pool, 1, 8, FS_QUEUE_FIFO);
    fs_source_t *src;
    fs_model_t *m = (fs_model_t *)&cfg;     /* overwritten with NULL */
    fs_error_t err;
    assert_int_equal(fs_memsrc_create(NULL, 0, NULL, 0, NULL, 0, &src, &err), 0);
    assert_int_equal(fs_model_create(&cfg, NULL, src, NULL, &m, &err), FS_EINVAL);
    assert_null(m);
    assert_non_null(strstr(err.msg, "scheduler.queue"));
    fs_source_destroy(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_the_policy_passed_in),
        cmocka_unit_test(test_no_policy_is_refused),
        cmocka_unit_test(test_failed_pass_names_the_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
