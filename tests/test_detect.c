/*
 * Tests of `format: auto` (traces/fs_detect): every shipped fixture is
 * detected as its format, the choice is written to the log (never silent),
 * the auto reader yields exactly what the named reader yields, and content
 * that matches no rule (or an empty file) is refused with the line.
 */
#include "fs_trace_test.h"

#include "traces/fs_detect.h"

#define DATA FS_TEST_DATA "/traces"
#define REAL DATA "/real"

static void detect(const char *path, const char *want, const char *why)
{
    const char *f = NULL;
    char w[160];
    fs_error_t err;
    int rc = fs_detect_format(path, &f, w, sizeof w, &err);
    if (rc)
        fail_msg("%s: %s", path, err.msg);
    assert_string_equal(f, want);
    assert_string_equal(w, why);
}

static void test_rules(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    detect(DATA "/native_example.csv", "native",
           "header 'submit,id,duration,gpus,tenant,gpu_type,estimate,priority,gp...'");
    detect(DATA "/native_example.csv.gz", "native",
           "header 'submit,id,duration,gpus,tenant,gpu_type,estimate,priority,gp...'");
    detect(REAL "/60_job.csv", "tiresias",
           "header 'job_id,num_gpu,submit_time,iterations,model_name,duration,in...'");
    detect(REAL "/openb_pods_gpuspec33_300.csv.gz", "openb",
           "header 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod...'");
    detect(REAL "/openb_pods_multigpu50_100.csv", "openb",
           "header 'name,cpu_milli,memory_mib,num_gpu,gpu_milli'");
    detect(REAL "/hpc2n_200.swf", "swf", "line 1 is a ';' header comment");
    detect(REAL "/nasa_ipsc_200.swf.gz", "swf", "line 1 is a ';' header comment");
    detect(DATA "/helios_cluster_log.csv", "helios",
           "header 'job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,st...'");
    detect(DATA "/acme_trace_seren.csv", "acme",
           "header 'job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,...'");
    detect(DATA "/philly_job_log.json", "philly", "line 1 starts JSON ('[')");
    detect(DATA "/pai_task_table.csv", "pai", "line 1: 10 fields with a task status 'Terminated'");
    char *p = tt_file("bare.swf", "# a comment\n\n1 0 5 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 1 -1 -1\n");
    detect(p, "swf", "line 3 has 18 blank-separated numbers");
    free(p);
    assert_int_equal(fs_alloc_live(), live0);
}

static void expect_refused(const char *text, const char *want_after_path)
{
    char *p = tt_file("x.txt", text);
    const char *f = NULL;
    fs_error_t err;
    assert_int_equal(fs_detect_format(p, &f, NULL, 0, &err), FS_EINVAL);
    assert_null(f);
    char want[2048];
    snprintf(want, sizeof want, "%s%s", p, want_after_path);
    assert_string_equal(err.msg, want);
    free(p);
}

static void test_refused(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    expect_refused("", ": format auto: empty file");
    expect_refused("# only\n\n", ": format auto: empty file");
    expect_refused("a,b,c\n1,2,3\n", ":1: format auto: cannot tell the format from 'a,b,c' "
                   "(known headers: native, tiresias, openb, helios, acme, sacct -P; or SWF, PAI task rows); set "
                   "workload.trace.format");
    expect_refused("1 2 3\n", ":1: format auto: cannot tell the format from '1 2 3' (known "
                   "headers: native, tiresias, openb, helios, acme, sacct -P; or SWF, PAI task rows); set "
                   "workload.trace.format");
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_auto_equals_named(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    static const struct {
        const char *path, *format;
    } cases[] = {
        {REAL "/60_job.csv", "tiresias"},
        {REAL "/openb_pods_gpuspec33_300.csv", "openb"},
        {REAL "/hpc2n_200.swf", "swf"},
        {DATA "/helios_cluster_log.csv", "helios"},
        {DATA "/native_example.csv", "native"},
        {DATA "/pai_task_table.csv", "pai"},
        {DATA "/philly_job_log.json", "philly"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *logp = fs_test_path(g_dir, "log.txt");
        FILE *log = fopen(logp, "w");
        fs_trace_opts_t o;
        fs_trace_opts_init(&o);
        o.log = log;
        readout_t a, b;
        fs_error_t err;
        assert_int_equal(read_all("auto", cases[i].path, &o, 16, &a, &err), 0);
        assert_int_equal(read_all(cases[i].format, cases[i].path, &o, 16, &b, &err), 0);
        fclose(log);
        assert_int_equal(a.n, b.n);
        assert_true(a.n > 0);
        assert_memory_equal(a.jobs, b.jobs, a.n * sizeof *a.jobs);
        size_t len;
        char *note = fs_test_read(logp, &len);
        char want[512];
        snprintf(want, sizeof want, "%s: format auto: detected %s (", cases[i].path,
                 cases[i].format);
        assert_true(strncmp(note, want, strlen(want)) == 0);
        free(note);
        free(logp);
        readout_free(&a);
        readout_free(&b);
    }
    /* the format table names every reader, auto included */
    size_t n;
    const fs_trace_format_t *f = fs_trace_formats(&n);
    const char *names[16];
    for (size_t i = 0; i < n && i < 16; i++)
        names[i] = f[i].name;
    static const char *const want[] = {"native", "tiresias", "openb", "swf", "helios", "acme",
                                       "pai", "philly", "auto"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int found = 0;
        for (size_t i = 0; i < n; i++)
            found |= strcmp(names[i], want[k]) == 0;
        assert_true(found);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_auto_equals_named),
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
