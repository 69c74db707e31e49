/*
 * Tests of the Alibaba PAI 2020 task-table reader (traces/fs_pai) on a small
 * file written after the published schema (tests/data/traces/
 * pai_task_table.csv): jobs gathered from consecutive task rows, GPUs from
 * inst_num x plan_gpu (fractional below one GPU), times, states, GPU-type
 * constraints, skips per reason, re-sorting; row errors at their own line
 * (also the row that starts a new job); lenient counts; allocation failures.
 */
#include "fs_trace_test.h"

#define DATA FS_TEST_DATA "/traces"

static void test_fixture(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("pai", DATA "/pai_task_table.csv", NULL, 2, &r, &err), 0);
    assert_int_equal(r.n, 5);
    assert_int_equal(r.skipped, 3);
    assert_string_equal(r.reasons, "cpu_only (plan_gpu 0)=1;a task has not ended (no end_time)=1;"
                                   "a task never started (no start_time)=1;");
    static const uint64_t ids[] = {1, 2, 7, 3, 8};
    static const int submit[] = {0, 110, 150, 160, 410};   /* origin: j1's 90 s */
    static const int run[] = {320, 100, 340, 100, 300};
    static const uint32_t gpus[] = {1, 1, 8, 5, 2};
    static const uint32_t milli[] = {1000, 250, 1000, 1000, 1000};
    static const int st[] = {FS_JOB_REC_COMPLETED, FS_JOB_REC_COMPLETED, FS_JOB_REC_COMPLETED,
                             FS_JOB_REC_FAILED, FS_JOB_REC_COMPLETED};
    static const char *const type[] = {"T4", NULL, "MISC", "V100M32", "T4"};
    for (size_t i = 0; i < 5; i++) {
        const fs_job_t *j = &r.jobs[i];
        assert_int_equal(j->id, ids[i]);
        assert_int_equal(j->submit, S(submit[i]));
        assert_int_equal(j->duration, S(run[i]));
        assert_int_equal(j->rec_end, S(submit[i] + run[i]));
        assert_int_equal(j->rec_start, -1);
        assert_int_equal(j->gpus, gpus[i]);
        assert_int_equal(j->gpu_milli, milli[i]);
        assert_int_equal(j->rec_state, st[i]);
        if (type[i])
            assert_string_equal(r.gpu_types[i], type[i]);
        else
            assert_int_equal(j->gpu_type, -1);
        assert_int_equal(j->tenant, -1);
    }
    /* GPU types interned in order of first appearance: T4, V100M32, MISC */
    assert_int_equal(r.jobs[0].gpu_type, 0);
    assert_int_equal(r.jobs[3].gpu_type, 1);
    assert_int_equal(r.jobs[2].gpu_type, 2);
    readout_free(&r);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.cpu_only = 1;
    assert_int_equal(read_all("pai", DATA "/pai_task_table.csv", &o, 2, &r, &err), FS_EINVAL);
    assert_string_equal(err.msg, DATA "/pai_task_table.csv:7: job 'j4' (from line 6): expected "
                        "GPUs (plan_gpu > 0; jobs without GPUs are refused: "
                        "workload.trace.cpu_only = error)");
    readout_free(&r);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_errors(void **state)
{
    (void)state;
    tt_expect_error("pai", "j1,w,1,Terminated,1,2,600,29,50,T4\nj1,w,1,Terminated,1,2,600,29\n",
                    NULL, ":2: expected 10 fields as in the header, got 8");
    tt_expect_error("pai", "j1,w,x,Terminated,1,2,600,29,50,T4\n", NULL,
                    ":1: field inst_num: expected an integer in 0..4294967295 (got 'x')");
    tt_expect_error("pai", "j1,w,1,Done,1,2,600,29,50,T4\n", NULL,
                    ":1: field status: expected one of Terminated, Failed, Running, Waiting, "
                    "Interrupted (got 'Done')");
    tt_expect_error("pai", "j1,w,1,Terminated,5,2,600,29,50,T4\n", NULL,
                    ":1: field end_time: expected a time >= start_time (got '2')");
    tt_expect_error("pai", "j1,w,1,Terminated,1,2,600,29,-50,T4\n", NULL,
                    ":1: field plan_gpu: expected a GPU share in percent >= 0 (got '-50')");
    tt_expect_error("pai", ",w,1,Terminated,1,2,600,29,50,T4\n", NULL,
                    ":1: field job_name: expected a job name of 1..256 bytes (got '')");
    /* the row that starts a new job is reported at its own line, after the
     * previous job was delivered */
    int64_t live0 = fs_alloc_live();
    char *p = tt_file("p.csv", "j1,w,1,Terminated,1,2,600,29,50,T4\n"
                               "j2,w,1,Terminated,x,2,600,29,50,T4\n");
    readout_t r;
    fs_error_t err;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.sort_window = 0;
    assert_int_equal(read_all("pai", p, &o, 1, &r, &err), FS_EINVAL);
    assert_int_equal(r.n, 1);
    char want[2048];
    snprintf(want, sizeof want, "%s:2: field start_time: expected a time in seconds >= 0 (got "
             "'x')", p);
    assert_string_equal(err.msg, want);
    readout_free(&r);
    free(p);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_lenient(void **state)
{
    (void)state;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    tt_expect_lenient("pai",
                      "j1,w,1,Terminated,1,2,600,29,50,T4\n"
                      "j2,w,1,Terminated,x,2,600,29,50,T4\n"     /* start_time */
                      "j2,w,1,Terminated,3,4,600,29,50,T4\n"
                      "j3,w,1,Terminated,5,5,600,29,50,T4\n"     /* run time 0 */
                      "j4,w,1,Done,5,6,600,29,50,T4\n"           /* status */
                      "j5,w,1,Terminated,7,9,600,29,0,\n"        /* cpu only */
                      "j6,w,1,Terminated,8,9,600,29,100,\n",
                      o, 3, "field start_time=1;run time 0=1;field status=1;"
                            "cpu_only (plan_gpu 0)=1;");
}

static void test_gzip(void **state)
{
    (void)state;
    tt_gzip_checks("pai", DATA "/pai_task_table.csv");
}

static void test_alloc_failures(void **state)
{
    (void)state;
    tt_alloc_failures("pai", DATA "/pai_task_table.csv", NULL, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
