/*
 * Tests of the Standard Workload Format reader (traces/fs_swf): the first
 * 200 jobs of the HPC2N excerpt (with waits, estimates and statuses) and of
 * NASA iPSC (gzip, no wait data), derived by tests/data/traces/real/derive.sh,
 * with exact figures (awk over the same files); procs_per_gpu; header
 * comments (MaxProcs bounds); jobs that cannot be replayed counted per
 * reason; row errors with their exact messages; lenient counts; allocation
 * failures; a truncated gzip file.
 */
#include "fs_trace_test.h"

#define REAL FS_TEST_DATA "/traces/real"
#define HDR "; MaxProcs: 64\n; UnixStartTime: 1000\n"
#define ROW(id, submit, wait, run, procs, req_time, status, user) \
    id " " submit " " wait " " run " " procs " -1 -1 " procs " " req_time " -1 " status " " user \
    " 1 -1 -1 1 -1 -1\n"

static void test_hpc2n(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("swf", REAL "/hpc2n_200.swf", NULL, 50, &r, &err), 0);
    /* awk: 194 jobs with a run time, 6 with -1; 3,609 processors; 1,949,579 s */
    assert_int_equal(r.n, 194);
    assert_int_equal(r.skipped, 6);
    assert_string_equal(r.reasons, "run time unknown (-1)=6;");
    uint64_t gpus = 0;
    fs_time_t dur = 0;
    for (size_t i = 0; i < r.n; i++) {
        gpus += r.jobs[i].gpus;
        dur += r.jobs[i].duration;
        assert_true(r.jobs[i].estimate > 0);
        assert_true(r.jobs[i].rec_start >= r.jobs[i].submit);
        assert_int_equal(r.jobs[i].rec_end - r.jobs[i].rec_start, r.jobs[i].duration);
        assert_int_equal(r.jobs[i].rec_state, FS_JOB_REC_COMPLETED);
    }
    assert_int_equal(gpus, 3609);
    assert_int_equal(dur, S(1949579));
    /* 1 0 308434 31405 30 31405 -1 30 37980 -1 1 1 1 -1 -1 1 -1 -1 */
    assert_int_equal(r.jobs[0].id, 1);
    assert_int_equal(r.jobs[0].submit, 0);
    assert_int_equal(r.jobs[0].gpus, 30);
    assert_int_equal(r.jobs[0].duration, S(31405));
    assert_int_equal(r.jobs[0].estimate, S(37980));
    assert_int_equal(r.jobs[0].rec_start, S(308434));
    assert_int_equal(r.jobs[0].rec_end, S(308434 + 31405));
    assert_string_equal(r.tenants[0], "u1");
    assert_int_equal(r.jobs[r.n - 1].submit, S(723522));
    static const char *const users[] = {"u1", "u3", "u4", "u5", "u6", "u22"};
    for (size_t i = 0; i < r.n; i++)
        assert_string_equal(r.tenants[i], users[r.jobs[i].tenant]);
    readout_free(&r);
    /* four processors per GPU: sum of ceil(procs / 4) = 933 */
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.procs_per_gpu = 4;
    assert_int_equal(read_all("swf", REAL "/hpc2n_200.swf", &o, 50, &r, &err), 0);
    gpus = 0;
    for (size_t i = 0; i < r.n; i++)
        gpus += r.jobs[i].gpus;
    assert_int_equal(gpus, 933);
    assert_int_equal(r.jobs[0].gpus, 8);
    readout_free(&r);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_nasa_gzip(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("swf", REAL "/nasa_ipsc_200.swf.gz", NULL, 64, &r, &err), 0);
    /* awk: 200 jobs, 3,960 processors, 132,031 s; no wait, estimate or status */
    assert_int_equal(r.n, 200);
    assert_int_equal(r.skipped, 0);
    uint64_t gpus = 0;
    fs_time_t dur = 0;
    for (size_t i = 0; i < r.n; i++) {
        gpus += r.jobs[i].gpus;
        dur += r.jobs[i].duration;
        assert_int_equal(r.jobs[i].rec_start, -1);
        assert_int_equal(r.jobs[i].estimate, -1);
        assert_int_equal(r.jobs[i].rec_state, FS_JOB_REC_UNKNOWN);
    }
    assert_int_equal(gpus, 3960);
    assert_int_equal(dur, S(132031));
    assert_int_equal(r.jobs[1].submit, S(1460));
    assert_int_equal(r.jobs[1].gpus, 128);
    assert_int_equal(r.jobs[199].submit, S(145195));
    int32_t maxt = 0;
    for (size_t i = 0; i < r.n; i++)
        maxt = r.jobs[i].tenant > maxt ? r.jobs[i].tenant : maxt;
    assert_int_equal(maxt, 15);     /* 16 users */
    readout_free(&r);
    char *cut = tt_truncated(REAL "/nasa_ipsc_200.swf.gz", "cut.swf.gz", 2000);
    assert_int_equal(read_all("swf", cut, NULL, 64, &r, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, ": truncated gzip data (unexpected end of file)"));
    readout_free(&r);
    free(cut);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_errors(void **state)
{
    (void)state;
    tt_expect_error("swf", HDR "1 0 5 10 4\n", NULL,
                    ":3: expected 18 fields (Standard Workload Format), got 5");
    tt_expect_error("swf", HDR ROW("1", "x", "5", "10", "4", "20", "1", "1"), NULL,
                    ":3: field submit: expected a time in seconds >= 0 (got 'x')");
    tt_expect_error("swf", HDR ROW("1", "0", "5", "10", "65", "20", "1", "1"), NULL,
                    ":3: field req_procs: expected at most MaxProcs (64) processors (got '65')");
    tt_expect_error("swf", HDR ROW("1", "0", "-7", "10", "4", "20", "1", "1"), NULL,
                    ":3: field wait: expected a time in seconds >= 0 (got '-7')");
    tt_expect_error("swf", HDR ROW("1", "0", "5", "10", "4", "20", "7", "1"), NULL,
                    ":3: field status: expected an integer in 0..5 (got '7')");
    tt_expect_error("swf", HDR ROW("1", "0", "5", "10", "4", "20", "1", "bob"), NULL,
                    ":3: field user: expected a user number >= 0 or -1 (got 'bob')");
    tt_expect_error("swf", "; MaxProcs: many\n" ROW("1", "0", "5", "10", "4", "20", "1", "1"),
                    NULL, ":1: field MaxProcs: expected a non-negative integer (got 'many')");
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.sort_window = 0;
    tt_expect_error("swf", HDR ROW("1", "10", "5", "10", "4", "20", "1", "1")
                               ROW("2", "9", "5", "10", "4", "20", "1", "1"), &o,
                    ":4: field submit: expected a time after the origin >= 0.000000 s, a "
                    "submission already delivered (rows must be sorted by submission; out of "
                    "order within 0 rows is re-sorted: workload.trace.sort_window)");
    /* a bad header comment is fatal in lenient mode too */
    o.lenient = 1;
    tt_expect_error("swf", "; UnixStartTime: -5\n", &o,
                    ":1: field UnixStartTime: expected a non-negative integer (got '-5')");
}

static void test_lenient_and_skips(void **state)
{
    (void)state;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    tt_expect_lenient("swf",
                      HDR ROW("1", "0", "5", "10", "4", "20", "1", "1")
                          ROW("2", "1", "5", "-1", "4", "20", "1", "1")   /* run unknown */
                          ROW("3", "2", "5", "0", "4", "20", "5", "1")    /* run 0 */
                          ROW("4", "3", "5", "10", "-1", "20", "1", "1")  /* procs unknown */
                          ROW("5", "4", "5", "10", "99", "20", "1", "1")  /* > MaxProcs */
                          "6 5 5\n"                                      /* field count */
                          ROW("7", "6", "5", "10", "4", "20", "5", "2"),
                      o, 2, "run time unknown (-1)=1;run time 0=1;processors unknown (-1)=1;"
                            "field req_procs=1;field count=1;");
}

/* workload.trace.cancelled (docs/traces.md "Jobs cancelled before they
 * started"): a status-5 row without a run time is skipped and counted by
 * default and with skip; with withdraw it is kept, flagged FS_JOB_WITHDRAW,
 * pending for its wait (the time to its cancellation), no recorded start,
 * rec_end its cancel time; without a wait it is skipped and counted; a
 * cancelled row that ran (run time > 0) is replayed as before; run is
 * refused. */
static void test_cancelled(void **state)
{
    (void)state;
    const char *text = HDR ROW("1", "0", "5", "10", "4", "20", "1", "1")
                           ROW("2", "1", "30", "-1", "8", "20", "5", "1")   /* cancelled at 31 */
                           ROW("3", "2", "0", "0", "2", "20", "5", "2")     /* cancelled at once */
                           ROW("4", "3", "-1", "-1", "2", "20", "5", "2")   /* no cancel time */
                           ROW("5", "4", "5", "10", "4", "20", "5", "1");   /* ran, then cancelled */
    char *path = tt_file("c.swf", text);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    fs_error_t err;
    readout_t r;
    for (int mode = FS_CANCELLED_DEFAULT; mode <= FS_CANCELLED_SKIP; mode++) {
        o.cancelled = mode;
        assert_int_equal(read_all("swf", path, &o, 16, &r, &err), 0);
        assert_int_equal(r.n, 2);
        assert_int_equal(r.jobs[0].flags & FS_JOB_WITHDRAW, 0);
        assert_int_equal(r.jobs[1].flags & FS_JOB_WITHDRAW, 0);
        assert_string_equal(r.reasons, "run time unknown (-1)=2;run time 0=1;");
        readout_free(&r);
    }
    o.cancelled = FS_CANCELLED_WITHDRAW;
    assert_int_equal(read_all("swf", path, &o, 16, &r, &err), 0);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.jobs[1].id, 2);
    assert_true(r.jobs[1].flags & FS_JOB_WITHDRAW);
    assert_int_equal(r.jobs[1].duration, S(30));
    assert_int_equal(r.jobs[1].submit, S(1));
    assert_int_equal(r.jobs[1].rec_start, -1);
    assert_int_equal(r.jobs[1].rec_end, S(31));
    assert_int_equal(r.jobs[1].gpus, 8);
    assert_int_equal(r.jobs[1].rec_state, FS_JOB_REC_KILLED);
    assert_int_equal(r.jobs[2].id, 3);
    assert_true(r.jobs[2].flags & FS_JOB_WITHDRAW);
    assert_int_equal(r.jobs[2].duration, 1);            /* 0 s becomes 1 us */
    assert_int_equal(r.jobs[2].rec_end, S(2));
    assert_int_equal(r.jobs[3].id, 5);                  /* it ran: as before */
    assert_int_equal(r.jobs[3].flags & FS_JOB_WITHDRAW, 0);
    assert_int_equal(r.jobs[3].duration, S(10));
    assert_int_equal(r.jobs[3].rec_start, S(9));
    assert_string_equal(r.reasons, "cancelled, cancel time unknown (wait -1)=1;");
    readout_free(&r);
    o.cancelled = FS_CANCELLED_RUN;
    assert_int_equal(read_all("swf", path, &o, 16, &r, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "workload.trace.cancelled: run is not possible for swf"));
    readout_free(&r);
    free(path);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    tt_alloc_failures("swf", REAL "/hpc2n_200.swf", NULL, 194);
    tt_alloc_failures("swf", REAL "/nasa_ipsc_200.swf.gz", NULL, 200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hpc2n),
        cmocka_unit_test(test_nasa_gzip),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lenient_and_skips),
        cmocka_unit_test(test_cancelled),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
