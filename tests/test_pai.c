/*
 * Tests of the Alibaba PAI 2020 task-table reader (traces/fs_pai) on a small
 * file written after the published schema (tests/data/traces/
 * pai_task_table.csv): jobs gathered from consecutive task rows, GPUs from
 * inst_num x plan_gpu (fractional below one GPU), times, states, GPU-type
 * constraints, skips per reason, re-sorting; row errors at their own line
 * (also the row that starts a new job); lenient counts; allocation failures.
 * A directory with the job and instance tables too (tests/data/traces/
 * pai-dir/): GPUs from the instances that existed, times from the
 * instances, submission, user and final state from the job table; errors of
 * the side tables at their own FILE:LINE; lenient counts per table.
 */
#include "fs_trace_test.h"

#include <sys/stat.h>
#include <unistd.h>

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
    /* a one-pod job keeps its pod's plan_cpu (600% = 6 cores) and plan_mem (29.3 GB =
     * 30,003.2 MiB, rounded up); gangs of several pods do not */
    assert_true(r.jobs[1].flags & FS_JOB_SINGLE_NODE);
    assert_int_equal(r.jobs[1].cpu_milli, 6000);
    assert_int_equal(r.jobs[1].mem_mib, 30004);
    assert_false(r.jobs[0].flags & FS_JOB_SINGLE_NODE);
    assert_int_equal(r.jobs[0].cpu_milli, 0);
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
                        "workload.trace.cpu_only = error; place is for openb pod lists)");
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
    tt_expect_error("pai", "j1,w,1,Terminated,1,2,six,29,50,T4\n", NULL,
                    ":1: field plan_cpu: expected a CPU share in percent of a core >= 0 (got 'six')");
    tt_expect_error("pai", "j1,w,1,Terminated,1,2,600,-1,50,T4\n", NULL,
                    ":1: field plan_mem: expected a memory size in GB >= 0 (got '-1')");
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

/* ---- a directory: task, job and instance tables ------------------------ */

#define DIR_DATA DATA "/pai-dir"

static void test_dir(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    readout_t r;
    fs_error_t err;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    assert_int_equal(read_all("pai", DIR_DATA, &o, 2, &r, &err), 0);
    assert_int_equal(r.n, 4);
    assert_string_equal(r.reasons, "not in the job table=1;");
    /* by hand from the three files; origin: j1's submission at 50 s */
    static const uint64_t ids[] = {1, 2, 3, 5};
    static const int submit[] = {0, 100, 190, 260};
    static const int start[] = {60, 160, 210, 270};     /* earliest instance (j5: task) */
    static const int run[] = {290, 80, 85, 160};        /* latest end - start */
    static const uint32_t gpus[] = {2, 1, 3, 2};        /* 3 x 50% (3 instances, plan 2); 25%; 2 x 100% + 100%; 2 x 100% (plan) */
    static const uint32_t milli[] = {1000, 250, 1000, 1000};
    static const int st[] = {FS_JOB_REC_COMPLETED, FS_JOB_REC_FAILED, FS_JOB_REC_KILLED,
                             FS_JOB_REC_COMPLETED};
    static const char *const user[] = {"alice", "bob", "alice", "carol"};
    static const char *const type[] = {"T4", NULL, "V100M32", "P100"};
    for (size_t i = 0; i < 4; i++) {
        const fs_job_t *j = &r.jobs[i];
        assert_int_equal(j->id, ids[i]);
        assert_int_equal(j->submit, S(submit[i]));
        assert_int_equal(j->rec_start, S(start[i]));
        assert_int_equal(j->duration, S(run[i]));
        assert_int_equal(j->rec_end, S(start[i] + run[i]));
        assert_int_equal(j->gpus, gpus[i]);
        assert_int_equal(j->gpu_milli, milli[i]);
        assert_int_equal(j->rec_state, st[i]);
        assert_string_equal(r.tenants[i], user[i]);
        if (type[i])
            assert_string_equal(r.gpu_types[i], type[i]);
        else
            assert_null(r.gpu_types[i]);
    }
    readout_free(&r);
    /* strict: the task-table job missing from the job table is an error,
     * reported when the next row (line 7) closes it */
    fs_trace_opts_init(&o);
    o.sort_window = 0;   /* deliver j1..j3 before the error */
    assert_int_equal(read_all("pai", DIR_DATA, &o, 1, &r, &err), FS_EINVAL);
    assert_int_equal(r.n, 3);
    char want[1024];
    snprintf(want, sizeof want, "%s/pai_task_table.csv:7: job 'j4' (from line 6): expected a "
             "job listed in the job table %s/pai_job_table.csv", DIR_DATA, DIR_DATA);
    assert_string_equal(err.msg, want);
    readout_free(&r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A directory <tmp>/NAME with the given tables (NULL: absent). */
static char *tt_pai_dir(const char *name, const char *task, const char *jobs, const char *insts)
{
    char *d = fs_test_path(g_dir, name);
    assert_non_null(d);
    mkdir(d, 0777);
    const char *const files[] = {"pai_task_table.csv", "pai_job_table.csv",
                                 "pai_instance_table.csv"};
    const char *const texts[] = {task, jobs, insts};
    for (size_t i = 0; i < 3; i++) {
        char *f = fs_test_path(d, files[i]);
        assert_non_null(f);
        unlink(f);
        if (texts[i])
            assert_int_equal(fs_test_write(f, texts[i]), 0);
        free(f);
    }
    return d;
}

/* Strict errors of the side tables name their own file and line. */
static void dir_error(const char *jobs, const char *insts, const char *file, const char *want)
{
    int64_t live0 = fs_alloc_live();
    char *d = tt_pai_dir("e", "j1,w,1,Terminated,1,2,600,29,50,T4\n", jobs, insts);
    readout_t r;
    fs_error_t err;
    int rc = read_all("pai", d, NULL, 4, &r, &err);
    char full[2048];
    snprintf(full, sizeof full, "%s/%s%s", d, file, want);
    if (rc != FS_EINVAL || strcmp(err.msg, full) != 0)
        fail_msg("rc %d, message\n  %s\nexpected\n  %s", rc, rc ? err.msg : "(none)", full);
    readout_free(&r);
    free(d);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_dir_errors(void **state)
{
    (void)state;
    const char *ok_inst = "j1,w,a,w1,i,Terminated,1,2,m1\n";
    dir_error("j1,i,u,Terminated,1,2\nj2,i,u,Done,1,2\n", ok_inst, "pai_job_table.csv",
              ":2: field status: expected one of Terminated, Failed, Running, Waiting, "
              "Interrupted (got 'Done')");
    dir_error("j1,i,u,Terminated,,2\n", ok_inst, "pai_job_table.csv",
              ":1: field start_time: expected the submission time in seconds (got '')");
    dir_error("j1,i,u,Terminated,5,2\n", ok_inst, "pai_job_table.csv",
              ":1: field end_time: expected a time >= start_time (got '2')");
    dir_error("j1,i,u,Terminated,1,2\nj1,i,u,Terminated,1,2\n", ok_inst, "pai_job_table.csv",
              ":2: field job_name: expected a job listed once (got 'j1')");
    dir_error("j1,i,u,Terminated,1\n", ok_inst, "pai_job_table.csv",
              ":1: expected 6 fields as in the header, got 5");
    dir_error("j1,i,u,Terminated,1,2\n", "j1,w,a,w1,i,Terminated,x,2,m1\n",
              "pai_instance_table.csv",
              ":1: field start_time: expected a time in seconds >= 0 (got 'x')");
    dir_error("j1,i,u,Terminated,1,2\n", "j1,w,a,w1,i,Terminated,1,2\n",
              "pai_instance_table.csv", ":1: expected 9 fields as in the header, got 8");
    dir_error(NULL, ",w,a,w1,i,Terminated,1,2,m\n", "pai_instance_table.csv",
              ":1: field job_name: expected a job name of 1..256 bytes (got '')");
    /* no task table */
    char *d = tt_pai_dir("none", NULL, NULL, NULL);
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("pai", d, NULL, 4, &r, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "a PAI directory needs pai_task_table.csv"));
    free(d);
}

/* Lenient: bad side rows are skipped and counted per table; only the task
 * table given: the same jobs as the file alone. */
static void test_dir_lenient(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    char *d = tt_pai_dir("l", "j1,w,2,Terminated,1,9,600,29,100,T4\nj2,w,1,Terminated,3,9,600,29,100,\n",
                         "j1,i,u,Terminated,1,9\nj2,i,v,Done,3,9\nj2,i,v,Failed,2,9\nj3,i\n",
                         "j1,w,a,w1,i,Terminated,2,8,m\nj1,w,b,w1,i,Terminated,x,8,m\n");
    readout_t r;
    fs_error_t err;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    assert_int_equal(read_all("pai", d, &o, 4, &r, &err), 0);
    assert_string_equal(r.reasons, "job table: field status=1;job table: field count=1;"
                                   "instance table: field start_time=1;");
    assert_int_equal(r.skipped, 3);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.jobs[0].gpus, 1);       /* one good instance of the planned 2 */
    assert_int_equal(r.jobs[0].duration, S(6));
    assert_int_equal(r.jobs[1].rec_state, FS_JOB_REC_FAILED);
    assert_string_equal(r.tenants[1], "v");
    readout_free(&r);
    free(d);
    /* the task table alone in a directory reads as the file does */
    d = tt_pai_dir("t", NULL, NULL, NULL);
    char *task = fs_test_path(d, "pai_task_table.csv");
    size_t len;
    char *text = fs_test_read(DATA "/pai_task_table.csv", &len);
    assert_int_equal(fs_test_write(task, text), 0);
    readout_t a, b;
    assert_int_equal(read_all("pai", d, &o, 3, &a, &err), 0);
    assert_int_equal(read_all("pai", DATA "/pai_task_table.csv", &o, 3, &b, &err), 0);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.jobs, b.jobs, a.n * sizeof *a.jobs);
    assert_string_equal(a.reasons, b.reasons);
    readout_free(&a);
    readout_free(&b);
    free(text);
    free(task);
    free(d);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_dir_alloc_failures(void **state)
{
    (void)state;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    tt_alloc_failures("pai", DIR_DATA, &o, 4);
}

/* The sensor table (pai_sensor_table): a job's recorded GPU utilization is
 * its workers' mean gpu_wrk_util over the GPU percent each worker plans
 * (fs_job_t.rec_util); a worker without GPUs (empty gpu_wrk_util) is left
 * out; a job with no sensor row records nothing; a bad value is an error at
 * the sensor table's own line. */
static void test_sensor_table(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    char *d = fs_test_path(g_dir, "sensors");
    assert_non_null(d);
    mkdir(d, 0777);
    char *task = fs_test_path(d, "pai_task_table.csv"), *sens = fs_test_path(d, "pai_sensor_table.csv");
    assert_int_equal(fs_test_write(task, "j1,w,2,Terminated,1,101,600,29,100,T4\n"
                                         "j2,w,1,Terminated,5,105,600,29,800,V100\n"
                                         "j3,w,1,Terminated,9,109,600,29,100,T4\n"), 0);
    assert_int_equal(fs_test_write(sens, "j1,w,w1,i1,m1,T4,50,60,1,2,3,4,0,0,0,0\n"
                                         "j1,w,w2,i2,m2,T4,50,40,1,2,5.1,6,0,0,0,0\n"
                                         "j2,w,w3,i3,m3,V100,50,300,1,2,12.2446,13,0,0,0,0\n"
                                         "j2,ps,w4,i4,m4,,50,,1,2,,,0,0,0,0\n"), 0);
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("pai", d, NULL, 4, &r, &err), 0);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.jobs[0].gpus, 2);
    assert_int_equal(r.jobs[0].rec_util, fs_job_util_code(0.5));     /* (60 + 40) / 2 / 100 */
    assert_int_equal(r.jobs[1].gpus, 8);
    assert_int_equal(r.jobs[1].rec_util, fs_job_util_code(0.375));   /* 300 / 800 */
    assert_int_equal(r.jobs[2].rec_util, 0);                          /* no sensor row */
    assert_double_equal(fs_job_util(r.jobs[1].rec_util), 0.38, 1e-12);  /* whole percents */
    /* memory: mean avg_gpu_wrk_mem over the GPUs each worker plans, 0.25 GB steps */
    assert_double_equal(fs_job_fb_gb(r.jobs[0].rec_fb), 4.0, 1e-12);     /* (3 + 5.1) / 2 = 4.05 */
    assert_double_equal(fs_job_fb_gb(r.jobs[1].rec_fb), 1.5, 1e-12);     /* 12.2446 / 8 = 1.53 */
    assert_int_equal(r.jobs[2].rec_fb, 0);
    readout_free(&r);
    assert_int_equal(fs_test_write(sens, "j1,w,w1,i1,m1,T4,50,60,1,2,-3,4,0,0,0,0\n"), 0);
    assert_int_equal(read_all("pai", d, NULL, 4, &r, &err), FS_EINVAL);
    char want_mem[2048];
    snprintf(want_mem, sizeof want_mem, "%s:1: field avg_gpu_wrk_mem: expected a GPU memory use in "
             "GB >= 0, or empty (got '-3')", sens);
    if (!strstr(err.msg, want_mem))
        fail_msg("got '%s'\nwant '%s'", err.msg, want_mem);
    readout_free(&r);
    assert_int_equal(fs_test_write(sens, "j1,w,w1,i1,m1,T4,50,60,1,2,3,4,0,0,0,0\n"
                                         "j1,w,w2,i2,m2,T4,50,busy,1,2,3,4,0,0,0,0\n"), 0);
    assert_int_equal(read_all("pai", d, NULL, 4, &r, &err), FS_EINVAL);
    char want[2048];
    snprintf(want, sizeof want, "%s:2: field gpu_wrk_util: expected a GPU utilization in percent "
             ">= 0, or empty (got 'busy')", sens);
    if (!strstr(err.msg, want))
        fail_msg("got '%s'\nwant '%s'", err.msg, want);
    readout_free(&r);
    unlink(task);
    unlink(sens);
    rmdir(d);
    free(task);
    free(sens);
    free(d);
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_dir),
        cmocka_unit_test(test_sensor_table),
        cmocka_unit_test(test_dir_errors),
        cmocka_unit_test(test_dir_lenient),
        cmocka_unit_test(test_dir_alloc_failures),
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
