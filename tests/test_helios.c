/*
 * Tests of the wall-clock cluster-log readers (traces/fs_helios): Helios
 * cluster_log.csv and Acme trace_seren.csv on small files written after the
 * published schemas (tests/data/traces/helios_cluster_log.csv,
 * acme_trace_seren.csv), the date-time parser (UTC offsets, leap days,
 * invalid dates), states, jobs without GPUs or run time counted, re-sorting,
 * keep_origin, row errors with exact messages, lenient counts, allocation
 * failures.
 */
#include "fs_trace_test.h"

#include "traces/fs_rdr.h"

#define DATA FS_TEST_DATA "/traces"
#define HHDR "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time," \
             "duration,queue\n"

static fs_time_t dt(const char *s)
{
    fs_time_t t = 0;
    if (fs_rdr_datetime(s, strlen(s), &t))
        return INT64_MIN;
    return t;
}

static void test_datetime(void **state)
{
    (void)state;
    assert_int_equal(dt("1970-01-01 00:00:00"), 0);
    assert_int_equal(dt("2020-04-01 00:00:00"), S(1585699200));    /* date -u -d ... +%s */
    assert_int_equal(dt("2020-04-01T00:00:00Z"), S(1585699200));
    assert_int_equal(dt("2020-04-01 08:00:00+08:00"), S(1585699200));
    assert_int_equal(dt("2020-03-31 16:00:00-0800"), S(1585699200));
    assert_int_equal(dt("2020-04-01 05:30:00+05:30"), S(1585699200));
    assert_int_equal(dt("2020-04-01 02:00:00+02"), S(1585699200));
    assert_int_equal(dt("2020-04-01 00:00:00.25"), S(1585699200) + 250000);
    assert_int_equal(dt("2024-02-29 12:00:00"), S(1709208000));
    assert_int_equal(dt("2000-02-29 00:00:00"), S(951782400));
    assert_int_equal(dt("1969-12-31 23:59:59"), -S(1));
    assert_int_equal(dt("2023-02-29 00:00:00"), INT64_MIN);        /* not a leap year */
    assert_int_equal(dt("1900-02-29 00:00:00"), INT64_MIN);
    assert_int_equal(dt("2023-13-01 00:00:00"), INT64_MIN);
    assert_int_equal(dt("2023-04-31 00:00:00"), INT64_MIN);
    assert_int_equal(dt("2023-04-01 24:00:00"), INT64_MIN);
    assert_int_equal(dt("2023-04-01 00:00"), INT64_MIN);
    assert_int_equal(dt("2023-04-01 00:00:00+25:00"), INT64_MIN);
    assert_int_equal(dt("2023-04-01 00:00:00 x"), INT64_MIN);
    assert_int_equal(dt("2023/04/01 00:00:00"), INT64_MIN);
    assert_int_equal(dt(""), INT64_MIN);
}

static void test_helios(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("helios", DATA "/helios_cluster_log.csv", NULL, 2, &r, &err), 0);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.skipped, 2);
    assert_string_equal(r.reasons, "cpu_only (gpu_num 0)=1;run time 0=1;");
    static const uint64_t ids[] = {1001, 1003, 1005, 1006};
    static const int submit[] = {0, 60, 90, 86399};
    static const int start[] = {10, 300, 90, 86400};
    static const int end[] = {3610, 400, 86490, 88200};
    static const int run[] = {3600, 100, 86400, 1800};
    static const uint32_t gpus[] = {8, 16, 1, 2};
    static const int st[] = {FS_JOB_REC_COMPLETED, FS_JOB_REC_FAILED, FS_JOB_REC_TIMEOUT,
                             FS_JOB_REC_NODE_FAIL};
    static const char *const vc[] = {"vcA", "vcA", "vcC", "vcB"};
    static const int32_t ten[] = {0, 0, 1, 2};
    for (size_t i = 0; i < 4; i++) {
        const fs_job_t *j = &r.jobs[i];
        assert_int_equal(j->id, ids[i]);
        assert_int_equal(j->submit, S(submit[i]));
        assert_int_equal(j->rec_start, S(start[i]));
        assert_int_equal(j->rec_end, S(end[i]));
        assert_int_equal(j->duration, S(run[i]));
        assert_int_equal(j->gpus, gpus[i]);
        assert_int_equal(j->rec_state, st[i]);
        assert_string_equal(r.tenants[i], vc[i]);
        assert_int_equal(j->tenant, ten[i]);
    }
    readout_free(&r);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.keep_origin = 1;
    assert_int_equal(read_all("helios", DATA "/helios_cluster_log.csv", &o, 8, &r, &err), 0);
    assert_int_equal(r.jobs[0].submit, S(1585699200));
    assert_int_equal(r.jobs[3].rec_end, S(1585699200 + 88200));
    readout_free(&r);
    o.keep_origin = 0;
    o.cpu_only = 1;
    assert_int_equal(read_all("helios", DATA "/helios_cluster_log.csv", &o, 8, &r, &err),
                     FS_EINVAL);
    assert_string_equal(err.msg, DATA "/helios_cluster_log.csv:3: field gpu_num: expected a GPU "
                        "count >= 1 (jobs without GPUs are refused: workload.trace.cpu_only = "
                        "error; place is for openb pod lists) (got '0')");
    readout_free(&r);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_acme(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    readout_t r;
    fs_error_t err;
    char *logp = fs_test_path(g_dir, "log.txt");
    FILE *log = fopen(logp, "w");
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.log = log;
    assert_int_equal(read_all("acme", DATA "/acme_trace_seren.csv", &o, 16, &r, &err), 0);
    fclose(log);
    /* a1 00:00Z, a2 00:30Z, a3 (no GPU) skipped, a4 00:20Z re-sorted before a2 */
    assert_int_equal(r.n, 3);
    assert_string_equal(r.reasons, "cpu_only (gpu_num 0)=1;");
    assert_int_equal(r.jobs[0].id, 1);  /* textual ids: the row number */
    assert_int_equal(r.jobs[1].id, 4);
    assert_int_equal(r.jobs[2].id, 2);
    assert_int_equal(r.jobs[0].submit, 0);
    assert_int_equal(r.jobs[0].rec_start, S(30));
    assert_int_equal(r.jobs[0].rec_end, S(3630));
    assert_int_equal(r.jobs[1].submit, S(1200));
    assert_int_equal(r.jobs[1].rec_start, S(2700));
    assert_int_equal(r.jobs[1].rec_end, S(3600));
    assert_int_equal(r.jobs[1].rec_state, FS_JOB_REC_KILLED);   /* "cancelled": any case */
    assert_int_equal(r.jobs[2].submit, S(1800));
    assert_int_equal(r.jobs[2].gpus, 32);
    assert_int_equal(r.jobs[2].duration, S(600));
    assert_int_equal(r.jobs[2].rec_state, FS_JOB_REC_FAILED);
    assert_string_equal(r.tenants[0], "alice");
    assert_string_equal(r.tenants[1], "carol");
    assert_string_equal(r.tenants[2], "bob");
    assert_int_equal(r.jobs[1].tenant, 2);
    readout_free(&r);
    size_t len;
    char *note = fs_test_read(logp, &len);
    assert_string_equal(note, DATA "/acme_trace_seren.csv: note: skipped 1 row: cpu_only "
                        "(gpu_num 0) 1\n"
                        DATA "/acme_trace_seren.csv: note: 1 row came before an earlier "
                        "row's submission and was re-sorted (sort window 65536 rows)\n");
    free(note);
    free(logp);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_errors(void **state)
{
    (void)state;
    tt_expect_error("helios", "job_id,user,vc,gpu_num\n", NULL,
                    ":1: missing required column 'state' (helios header expected; got "
                    "'job_id,user,vc,gpu_num')");
    tt_expect_error("helios", HHDR "1,u,v,1,1,1,COMPLETED,2020-04-01 00:00,,,5,0\n", NULL,
                    ":2: field submit_time: expected a date and time YYYY-MM-DD HH:MM:SS "
                    "(optionally with a UTC offset) not before 1970 (got '2020-04-01 00:00')");
    tt_expect_error("helios", HHDR "1,u,v,1,1,1,DONE,2020-04-01 00:00:00,,,5,0\n", NULL,
                    ":2: field state: expected one of COMPLETED, CANCELLED, FAILED, TIMEOUT, "
                    "NODE_FAIL, OUT_OF_MEMORY, RUNNING (got 'DONE')");
    tt_expect_error("helios", HHDR "1,u,v,1,1,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 "
                    "00:00:00,,5,0\n", NULL,
                    ":2: field start_time: expected a time >= submit_time (got '2020-04-01 "
                    "00:00:00')");
    tt_expect_error("helios", HHDR "1,u,v,1,1,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 "
                    "00:00:20,2020-04-01 00:00:15,5,0\n", NULL,
                    ":2: field end_time: expected a time >= start_time (got '2020-04-01 "
                    "00:00:15')");
    tt_expect_error("helios", HHDR "1,u,v,1,1,1,COMPLETED,2020-04-01 00:00:10,,,-5,0\n", NULL,
                    ":2: field duration: expected a time in seconds >= 0 (got '-5')");
    tt_expect_error("helios", HHDR "1,u,v,1,1,1,COMPLETED,2020-04-01 00:00:10,,,,0\n", NULL,
                    ":2: field duration: expected a run time (or start_time and end_time) (got '')");
    tt_expect_error("helios", HHDR "1,u,v,x,1,1,COMPLETED,2020-04-01 00:00:10,,,5,0\n", NULL,
                    ":2: field gpu_num: expected an integer in 0..2147483648 (got 'x')");
    tt_expect_error("helios", HHDR "1,u,v\xc3,1,1,1,COMPLETED,2020-04-01 00:00:10,,,5,0\n", NULL,
                    ":2: field vc: expected a UTF-8 name without control characters (got "
                    "'v\\xc3')");
    tt_expect_error("acme", "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time\n"
                    "a1,alice,1,8,64,P,COMPLETED,2023-06-01 08:00:00+08:00\n", NULL,
                    ":2: field duration: expected a run time (or start_time and end_time) (got '')");
}

static void test_lenient(void **state)
{
    (void)state;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    tt_expect_lenient("helios",
                      HHDR "1,u,v,1,1,1,COMPLETED,2020-04-01 00:00:00,,,5,0\n"
                           "2,u,v,1,1,1,DONE,2020-04-01 00:00:00,,,5,0\n"
                           "3,u,v,1,1,1,COMPLETED,2020-04-01,,,5,0\n"
                           "4,u,v,1,1,1,COMPLETED,2020-04-01 00:00:00,,,5\n"
                           "5,u,v,1,1,1,COMPLETED,2020-04-01 00:00:09,,,5,0\n",
                      o, 2, "field state=1;field submit_time=1;field count=1;");
}

static void test_gzip(void **state)
{
    (void)state;
    tt_gzip_checks("helios", DATA "/helios_cluster_log.csv");
    tt_gzip_checks("acme", DATA "/acme_trace_seren.csv");
}

static void test_alloc_failures(void **state)
{
    (void)state;
    tt_alloc_failures("helios", DATA "/helios_cluster_log.csv", NULL, 4);
    tt_alloc_failures("acme", DATA "/acme_trace_seren.csv", NULL, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datetime),
        cmocka_unit_test(test_helios),
        cmocka_unit_test(test_acme),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
