/*
 * Tests of the Tiresias-style job CSV reader (traces/fs_tiresias): the real
 * 60-job testbed trace (tests/data/traces/real/60_job.csv, copied from
 * shared/data/tiresias) with exact values, plain and gzip; every row error
 * with its exact FILE:LINE: field NAME message; lenient counts per reason;
 * unsorted rows (re-sorted within the window, refused beyond it or with a
 * window of 0); the origin shift and keep_origin; allocation failures; a
 * truncated gzip file.
 */
#include "fs_trace_test.h"

#include <zlib.h>

#define REAL FS_TEST_DATA "/traces/real"
#define HDR "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"

static void test_real_60_jobs(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("tiresias", REAL "/60_job.csv", NULL, 7, &r, &err), 0);
    /* awk -F, 'NR>1{n++; g+=$2; d+=$6}': 60 jobs, 170 GPUs, 10705 s of run time */
    assert_int_equal(r.n, 60);
    assert_int_equal(r.skipped, 0);
    uint64_t gpus = 0;
    fs_time_t dur = 0;
    for (size_t i = 0; i < r.n; i++) {
        gpus += r.jobs[i].gpus;
        dur += r.jobs[i].duration;
        assert_int_equal(r.jobs[i].id, i);  /* job_id 0..59 in order */
        assert_int_equal(r.jobs[i].gpu_milli, 1000);
        assert_int_equal(r.jobs[i].estimate, -1);
        assert_int_equal(r.jobs[i].rec_state, FS_JOB_REC_UNKNOWN);
        assert_int_equal(r.jobs[i].job_class, r.jobs[i].tenant);
    }
    assert_int_equal(gpus, 170);
    assert_int_equal(dur, S(10705));
    /* 1,8,30,133,vgg11,147,23 */
    assert_int_equal(r.jobs[1].gpus, 8);
    assert_int_equal(r.jobs[1].submit, S(30));
    assert_int_equal(r.jobs[1].duration, S(147));
    assert_string_equal(r.tenants[1], "vgg11");
    assert_int_equal(r.jobs[1].tenant, 1);
    /* 59,1,1779,525,inception3,122,33 */
    assert_int_equal(r.jobs[59].submit, S(1779));
    assert_int_equal(r.jobs[59].duration, S(122));
    assert_string_equal(r.tenants[59], "inception3");
    assert_int_equal(r.jobs[59].tenant, 4);
    /* ten models in order of first appearance */
    static const char *const models[] = {"vgg19", "vgg11", "inception4", "vgg16", "inception3",
                                         "resnet152", "resnet50", "alexnet", "googlenet",
                                         "resnet101"};
    for (size_t i = 0; i < r.n; i++)
        assert_string_equal(r.tenants[i], models[r.jobs[i].tenant]);
    int32_t maxt = 0;
    for (size_t i = 0; i < r.n; i++)
        maxt = r.jobs[i].tenant > maxt ? r.jobs[i].tenant : maxt;
    assert_int_equal(maxt, 9);
    readout_free(&r);

    /* gzip: the same jobs */
    char *gz = fs_test_path(g_dir, "60_job.csv.gz");
    size_t len;
    char *data = fs_test_read(REAL "/60_job.csv", &len);
    gzFile g = gzopen(gz, "wb9");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, data, (unsigned)len), (int)len);
    assert_int_equal(gzclose(g), Z_OK);
    readout_t z;
    assert_int_equal(read_all("tiresias", REAL "/60_job.csv", NULL, 60, &r, &err), 0);
    assert_int_equal(read_all("tiresias", gz, NULL, 1, &z, &err), 0);
    assert_int_equal(z.n, 60);
    assert_memory_equal(z.jobs, r.jobs, 60 * sizeof *z.jobs);
    readout_free(&r);

    /* a truncated gzip file is an error after the complete rows */
    char *cut = tt_truncated(gz, "cut.csv.gz", 400);
    readout_free(&z);
    int rc = read_all("tiresias", cut, NULL, 4, &z, &err);
    assert_int_equal(rc, FS_EINVAL);
    assert_non_null(strstr(err.msg, "truncated gzip data"));
    assert_true(strncmp(err.msg, cut, strlen(cut)) == 0);
    readout_free(&z);
    /* ... also in lenient mode */
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    assert_int_equal(read_all("tiresias", cut, &o, 4, &z, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "truncated gzip data"));
    readout_free(&z);
    free(cut);
    free(gz);
    free(data);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_errors(void **state)
{
    (void)state;
    tt_expect_error("tiresias", "", NULL,
                    ": empty file (expected a header line with job_id,num_gpu,submit_time,duration)");
    tt_expect_error("tiresias", "job_id,num_gpu,submit_time\n0,1,0\n", NULL,
                    ":1: missing required column 'duration' (tiresias header expected; got "
                    "'job_id,num_gpu,submit_time')");
    tt_expect_error("tiresias", "job_id,num_gpu,num_gpu,submit_time,duration\n", NULL,
                    ":1: duplicate column 'num_gpu' (fields 2 and 3)");
    tt_expect_error("tiresias", HDR "0,1,0,606,vgg19,164,30\n1,0,30,1,vgg11,147,23\n", NULL,
                    ":3: field num_gpu: expected an integer in 1..2147483648 (got '0')");
    tt_expect_error("tiresias", HDR "0,1,0,606,vgg19,164,30\n\n# c\n1,2,x,1,vgg11,147,23\n", NULL,
                    ":5: field submit_time: expected a time in seconds >= 0 (got 'x')");
    tt_expect_error("tiresias", HDR "0,1,-5,606,vgg19,164,30\n", NULL,
                    ":2: field submit_time: expected a time in seconds >= 0 (got '-5')");
    tt_expect_error("tiresias", HDR "0,1,0,606,vgg19,0,30\n", NULL,
                    ":2: field duration: expected a duration in seconds > 0 (got '0')");
    tt_expect_error("tiresias", HDR "0,1,0,606,vgg19,nan,30\n", NULL,
                    ":2: field duration: expected a duration in seconds > 0 (got 'nan')");
    tt_expect_error("tiresias", HDR "0,1,0,606,vgg19,1e12,30\n", NULL,
                    ":2: field duration: expected a duration in seconds > 0 (got '1e12')");
    tt_expect_error("tiresias", HDR "a,1,0,606,vgg19,5,30\n", NULL,
                    ":2: field job_id: expected an integer in 0..18446744073709551615 (got 'a')");
    tt_expect_error("tiresias", HDR "0,1,0,606,vgg19,5\n", NULL,
                    ":2: expected 7 fields as in the header, got 6");
    tt_expect_error("tiresias", HDR "0,1,0,606,\"vgg19,5,3\n", NULL,
                    ":2: field 5: unterminated quoted field");
    tt_expect_error("tiresias", HDR "0,1,0,606,\xff\xfe,5,3\n", NULL,
                    ":2: field model_name: expected a UTF-8 name without control characters "
                    "(got '\\xff\\xfe')");
    tt_expect_error("tiresias", HDR "0,1,0,x,m,5,3\n", NULL,
                    ":2: field iterations: expected an integer in 0..18446744073709551615 (got 'x')");
    /* out of order beyond the window (0: every unsorted row) */
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.sort_window = 0;
    tt_expect_error("tiresias", HDR "0,1,10,1,m,5,3\n1,1,20,1,m,5,3\n2,1,15,1,m,5,3\n", &o,
                    ":4: field submit_time: expected a time after the origin >= 10.000000 s, a "
                    "submission already delivered (rows must be sorted by submission; out of "
                    "order within 0 rows is re-sorted: workload.trace.sort_window)");
}

static void test_lenient(void **state)
{
    (void)state;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    tt_expect_lenient("tiresias",
                      HDR "0,1,0,606,vgg19,164,30\n"
                          "1,0,30,1,vgg11,147,23\n"     /* num_gpu */
                          "2,1,x,1,vgg11,147,23\n"      /* submit_time */
                          "3,1,40,1,vgg11,0,23\n"       /* duration */
                          "4,1,41,1,vgg11\n"            /* field count */
                          "5,2,42,1,vgg11,9,23\n"
                          "6,0,43,1,vgg11,147,23\n",    /* num_gpu */
                      o, 2, "field num_gpu=2;field submit_time=1;field duration=1;field count=1;");
    o.sort_window = 0;
    tt_expect_lenient("tiresias", HDR "0,1,10,1,m,5,3\n1,1,20,1,m,5,3\n2,1,15,1,m,5,3\n", o, 2,
                      "unsorted beyond the sort window=1;");
}

static void test_sorting_and_origin(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    const char *text = HDR "7,1,100,1,a,5,3\n8,1,130,1,b,5,3\n9,1,110,1,c,5,3\n10,1,120,1,d,5,3\n"
                           "11,1,105,1,e,5,3\n12,1,300,1,f,5,3\n";
    char *p = tt_file("u.csv", text);
    char *logp = fs_test_path(g_dir, "log.txt");
    FILE *log = fopen(logp, "w");
    assert_non_null(log);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.log = log;
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("tiresias", p, &o, 2, &r, &err), 0);
    fclose(log);
    static const uint64_t ids[] = {7, 11, 9, 10, 8, 12};
    static const int secs[] = {0, 5, 10, 20, 30, 200};   /* shifted: first submission at 0 */
    assert_int_equal(r.n, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(r.jobs[i].id, ids[i]);
        assert_int_equal(r.jobs[i].submit, S(secs[i]));
    }
    readout_free(&r);
    size_t len;
    char *note = fs_test_read(logp, &len);
    char want[4200];
    snprintf(want, sizeof want, "%s: note: 3 rows came before an earlier row's submission and "
             "were re-sorted (sort window 65536 rows)\n", p);
    assert_string_equal(note, want);
    free(note);
    /* a window of 2 rows: row 11 (105) comes after 120 was delivered */
    o.sort_window = 2;
    o.log = NULL;
    assert_int_equal(read_all("tiresias", p, &o, 2, &r, &err), FS_EINVAL);
    snprintf(want, sizeof want, "%s:6: field submit_time: expected a time after the origin >= "
             "20.000000 s, a submission already delivered (rows must be sorted by submission; "
             "out of order within 2 rows is re-sorted: workload.trace.sort_window)", p);
    assert_string_equal(err.msg, want);
    readout_free(&r);
    /* keep_origin: the file's times */
    fs_trace_opts_init(&o);
    o.keep_origin = 1;
    o.log = fopen("/dev/null", "w");
    assert_int_equal(read_all("tiresias", p, &o, 64, &r, &err), 0);
    fclose(o.log);
    assert_int_equal(r.jobs[0].submit, S(100));
    assert_int_equal(r.jobs[5].submit, S(300));
    readout_free(&r);
    /* time_scale multiplies run times only */
    fs_trace_opts_init(&o);
    o.time_scale = 0.5;
    o.sort_window = 0;
    char *q = tt_file("s.csv", HDR "1,1,100,1,a,5,3\n2,1,101,1,b,7,3\n");
    assert_int_equal(read_all("tiresias", q, &o, 64, &r, &err), 0);
    assert_int_equal(r.jobs[1].submit, S(1));
    assert_int_equal(r.jobs[1].duration, 3500000);
    readout_free(&r);
    free(q);
    free(p);
    free(logp);
    assert_int_equal(fs_alloc_live(), live0);
}

/* 200,000 rows, slightly out of order: once the sort window is full, reading
 * allocates nothing more (memory bounded by the window, not the trace). */
static void test_bounded_memory(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    char *p = fs_test_path(g_dir, "big.csv");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(HDR, f);
    for (int i = 0; i < 200000; i++)     /* pairs swapped: 1,0,3,2,... */
        fprintf(f, "%d,%d,%d,1,m%d,%d,1\n", i, 1 + i % 8, i ^ 1, i % 5, 10 + i % 100);
    fclose(f);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.sort_window = 1024;
    o.log = fopen("/dev/null", "w");
    fs_source_t *src;
    fs_error_t err;
    assert_int_equal(fs_trace_open("tiresias", p, &o, &src, &err), 0);
    fs_job_t buf[4096];
    size_t n, total = 0;
    uint64_t count_after = 0;
    fs_time_t last = -1;
    for (;;) {
        assert_int_equal(fs_source_next(src, buf, 4096, &n, &err), 0);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            assert_true(buf[i].submit >= last);
            last = buf[i].submit;
        }
        total += n;
        if (total >= 20000 && !count_after)
            count_after = fs_alloc_count();
    }
    assert_int_equal(total, 200000);
    assert_int_equal(fs_alloc_count(), count_after);
    assert_int_equal(fs_source_tenant_count(src), 5);
    fs_source_destroy(src);
    fclose(o.log);
    free(p);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    tt_alloc_failures("tiresias", REAL "/60_job.csv", NULL, 60);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    tt_alloc_failures("tiresias", REAL "/60_job.csv", &o, 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_60_jobs),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_sorting_and_origin),
        cmocka_unit_test(test_bounded_memory),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
