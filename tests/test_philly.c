/*
 * Tests of the Philly cluster_job_log reader (traces/fs_philly) and its
 * streaming JSON tokenizer, on a small log written after the published
 * schema (tests/data/traces/philly_job_log.json): jobs, attempts, GPUs from
 * the detail lists, states, skips per reason, re-sorting, escapes and
 * unknown nested keys; JSON Lines; gzip and a truncated gzip file; syntax
 * errors (fatal in both modes) and value errors (skipped in lenient mode)
 * with their line; allocation failures.
 */
#include "fs_trace_test.h"

#include <zlib.h>

#define DATA FS_TEST_DATA "/traces"

static void check_fixture(const readout_t *r)
{
    assert_int_equal(r->n, 3);
    assert_int_equal(r->skipped, 2);
    assert_string_equal(r->reasons, "never started (no attempt with a start_time)=1;"
                                    "an attempt has no end_time=1;");
    static const uint64_t ids[] = {1, 5, 2};
    static const int submit[] = {0, 268, 848};
    static const int start[] = {7, 278, 858};
    static const int end[] = {5698, 338, 2358};
    static const int run[] = {5691, 60, 900};
    static const uint32_t gpus[] = {8, 8, 1};
    static const int st[] = {FS_JOB_REC_COMPLETED, FS_JOB_REC_KILLED, FS_JOB_REC_FAILED};
    static const char *const vc[] = {"6214e9", "vc-\xc3\xa9t\xc3\xa9", "b436b2"};
    static const int32_t ten[] = {0, 2, 1};
    for (size_t i = 0; i < 3; i++) {
        const fs_job_t *j = &r->jobs[i];
        assert_int_equal(j->id, ids[i]);
        assert_int_equal(j->submit, S(submit[i]));
        assert_int_equal(j->rec_start, S(start[i]));
        assert_int_equal(j->rec_end, S(end[i]));
        assert_int_equal(j->duration, S(run[i]));
        assert_int_equal(j->gpus, gpus[i]);
        assert_int_equal(j->rec_state, st[i]);
        assert_string_equal(r->tenants[i], vc[i]);
        assert_int_equal(j->tenant, ten[i]);
    }
}

static void test_fixture(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    readout_t r, z;
    fs_error_t err;
    assert_int_equal(read_all("philly", DATA "/philly_job_log.json", NULL, 2, &r, &err), 0);
    check_fixture(&r);
    /* gzip */
    size_t len;
    char *data = fs_test_read(DATA "/philly_job_log.json", &len);
    char *gz = fs_test_path(g_dir, "log.json.gz");
    gzFile g = gzopen(gz, "wb9");
    assert_int_equal(gzwrite(g, data, (unsigned)len), (int)len);
    assert_int_equal(gzclose(g), Z_OK);
    assert_int_equal(read_all("philly", gz, NULL, 1, &z, &err), 0);
    check_fixture(&z);
    assert_memory_equal(z.jobs, r.jobs, 3 * sizeof *r.jobs);
    readout_free(&z);
    readout_free(&r);
    /* truncated: an error, never a shorter trace (also in lenient mode) */
    char *cut = tt_truncated(gz, "cut.json.gz", 300);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    assert_int_equal(read_all("philly", cut, &o, 4, &r, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, ": truncated gzip data (unexpected end of file)"));
    readout_free(&r);
    /* the same bytes cut in the middle, plain: a JSON error at the end */
    char *plain = fs_test_path(g_dir, "cut.json");
    FILE *f = fopen(plain, "wb");
    assert_int_equal(fwrite(data, 1, 700, f), 700);
    fclose(f);
    assert_int_equal(read_all("philly", plain, &o, 4, &r, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, ": JSON: expected "));
    assert_non_null(strstr(err.msg, "(got end of file)"));
    readout_free(&r);
    free(plain);
    free(cut);
    free(gz);
    free(data);
    assert_int_equal(fs_alloc_live(), live0);
}

#define JOB(status, vc, submit, start, end) \
    "{\"status\": \"" status "\", \"vc\": \"" vc "\", \"submitted_time\": \"" submit "\", " \
    "\"attempts\": [{\"start_time\": \"" start "\", \"end_time\": \"" end "\", " \
    "\"detail\": [{\"ip\": \"m1\", \"gpus\": [\"gpu0\", \"gpu1\"]}]}]}"
#define T0 "2017-10-03 00:00:00"
#define T1 "2017-10-03 00:00:10"
#define T2 "2017-10-03 00:01:10"

static void test_json_lines_and_empty(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    char *p = tt_file("l.json", JOB("Pass", "a", T0, T1, T2) "\n" JOB("Killed", "b", T1, T1, T2)
                                "\n");
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("philly", p, NULL, 8, &r, &err), 0);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.jobs[1].submit, S(10));
    assert_int_equal(r.jobs[1].duration, S(60));
    assert_int_equal(r.jobs[1].gpus, 2);
    readout_free(&r);
    free(p);
    p = tt_file("e.json", " [ ] \n");
    assert_int_equal(read_all("philly", p, NULL, 8, &r, &err), 0);
    assert_int_equal(r.n, 0);
    readout_free(&r);
    free(p);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A log written on one line of more than 1 MiB (json.dump without indent):
 * no line limit, detected by format auto, streamed job by job. */
static void test_one_long_line(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    char *p = fs_test_path(g_dir, "one.json");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputc('[', f);
    for (int i = 0; i < 6000; i++)
        fprintf(f, "%s" JOB("Pass", "vc%d", T0, T1, T2), i ? ", " : "", i % 7);
    fputc(']', f);
    assert_true(ftell(f) > (1L << 20));
    fclose(f);
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all("auto", p, NULL, 512, &r, &err), 0);
    assert_int_equal(r.n, 6000);
    assert_int_equal(r.jobs[5999].id, 6000);
    assert_string_equal(r.tenants[5999], "vc0");   /* 5999 = 7 x 857 */
    readout_free(&r);
    free(p);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_errors(void **state)
{
    (void)state;
    tt_expect_error("philly", "", NULL, ":1: empty file (expected a JSON array of Philly jobs)");
    tt_expect_error("philly", "job,gpus\n", NULL,
                    ":1: JSON: expected '[' or '{' (Philly cluster_job_log JSON) (got 'j')");
    tt_expect_error("philly", "[\n" JOB("Pass", "a", T0, T1, T2) "\n" JOB("Pass", "a", T0, T1, T2)
                    "]", NULL, ":3: JSON: expected ',' or ']' (got '{')");
    tt_expect_error("philly", "[{\"status\" \"Pass\"}]", NULL, ":1: JSON: expected ':' (got '\"')");
    tt_expect_error("philly", "[{\"status\": \"Pa\nss\"}]", NULL,
                    ":1: JSON: expected a closing '\"' (got byte 0x0a)");
    tt_expect_error("philly", "[{\"x\": tru}]", NULL, ":1: JSON: expected a JSON value (got '}')");
    tt_expect_error("philly", "[{\"x\": \"\\q\"}]", NULL,
                    ":1: JSON: expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u) (got 'q')");
    tt_expect_error("philly", "[" JOB("Pass", "a", T0, T1, T2) "] x", NULL,
                    ":1: JSON: expected the end of the file after the job list (got 'x')");
    tt_expect_error("philly", "[\n" JOB("Done", "a", T0, T1, T2) "]", NULL,
                    ":2: field status: expected one of Pass, Killed, Failed (got 'Done')");
    tt_expect_error("philly", "[\n" JOB("Pass", "a", "2017-10-03", T1, T2) "]", NULL,
                    ":2: field submitted_time: expected a date and time YYYY-MM-DD HH:MM:SS, "
                    "null or \"None\" (got '2017-10-03')");
    tt_expect_error("philly", "[\n" JOB("Pass", "a", T1, T0, T2) "]", NULL,
                    ":2: field attempts: expected start times >= submitted_time");
    /* a key fleetsim reads given twice in one object: an error at its line,
     * never two values merged (a second attempts list, a second detail) */
    tt_expect_error("philly", "[\n{\"status\": \"Pass\", \"vc\": \"a\",\n\"vc\": \"b\", "
                    "\"submitted_time\": \"" T0 "\"}]", NULL,
                    ":3: JSON: key \"vc\" given twice in one object");
    tt_expect_error("philly", "[{\"status\": \"Pass\", \"submitted_time\": \"" T0 "\", "
                    "\"attempts\": [{\"start_time\": \"" T1 "\", \"end_time\": \"" T2 "\", "
                    "\"detail\": [{\"gpus\": [\"g0\"], \"gpus\": [\"g1\"]}]}]}]", NULL,
                    ":1: JSON: key \"gpus\" given twice in one object");
    tt_expect_error("philly", "[{\"status\": \"Pass\", \"attempts\": [], \"attempts\": []}]",
                    NULL, ":1: JSON: key \"attempts\" given twice in one object");
    /* syntax errors are fatal in lenient mode too */
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    tt_expect_error("philly", "[{\"status\" \"Pass\"}]", &o, ":1: JSON: expected ':' (got '\"')");
}

static void test_lenient(void **state)
{
    (void)state;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    tt_expect_lenient("philly",
                      "[" JOB("Pass", "a", T0, T1, T2) ",\n" JOB("Done", "a", T0, T1, T2) ",\n"
                      JOB("Pass", "a", "x", T1, T2) ",\n" JOB("Pass", "b", T1, T1, T2) "]\n",
                      o, 2, "field status=1;field submitted_time=1;");
}

static void test_alloc_failures(void **state)
{
    (void)state;
    tt_alloc_failures("philly", DATA "/philly_job_log.json", NULL, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_json_lines_and_empty),
        cmocka_unit_test(test_one_long_line),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
