/*
 * The sacct reader (traces/fs_sacct.h, docs/traces.md "sacct") on a file in
 * the form `sacct -P -X --format=JobID,User,Account,Partition,QOS,Submit,
 * Start,End,Timelimit,AllocTRES,State` writes (tests/data/sacct/sacct-PX.txt):
 * GPUs from gres/gpu (a typed entry gives the GPU type), run time End -
 * Start, Start/End kept as the recorded start/end, Timelimit as the
 * estimate, the account as the tenant (the user when empty), array ids as
 * row numbers; pending, running and CPU-only rows skipped and counted;
 * format auto finds it; bad fields are located FILE:LINE and named; Slurm's
 * time strings.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "traces/fs_sacct.h"
#include "traces/fs_detect.h"
#include "traces/fs_trace.h"
#include "sim/fs_alloc.h"

#define SAMPLE FS_TEST_DATA "/sacct/sacct-PX.txt"
#define S(x) ((fs_time_t)(x) * FS_US_PER_S)

static char *g_dir;

static void test_sample(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    for (int fmt = 0; fmt < 2; fmt++) {
        fs_trace_opts_t o;
        fs_trace_opts_init(&o);
        FILE *log = tmpfile();
        o.log = log;
        fs_source_t *src;
        fs_error_t err;
        if (fs_trace_open(fmt ? "auto" : "sacct", SAMPLE, &o, &src, &err))
            fail_msg("%s", err.msg);
        fs_job_t j[16];
        size_t n;
        assert_int_equal(fs_source_next(src, j, 16, &n, &err), 0);
        assert_int_equal(n, 4);
        /* origin: the first delivered submission, 09:12:01 */
        static const struct {
            uint64_t id;
            double submit, start, run, est;
            uint32_t gpus;
            const char *tenant, *type;
            int state;
        } want[] = {
            {4120031, 0, 2, 8904, 86400, 4, "vision", NULL, FS_JOB_REC_COMPLETED},
            {4120032, 219, 479, 1800, 7200, 8, "nlp", "h100", FS_JOB_REC_FAILED},
            {3, 239, 2879, 7200, -1, 1, "vision", NULL, FS_JOB_REC_TIMEOUT},
            {4120038, 479, 539, 1800, 2700, 2, "dave", "a100", FS_JOB_REC_COMPLETED},
        };
        for (size_t i = 0; i < 4; i++) {
            assert_int_equal(j[i].id, want[i].id);
            assert_int_equal(j[i].submit, (fs_time_t)(want[i].submit * 1e6));
            assert_int_equal(j[i].rec_start, (fs_time_t)(want[i].start * 1e6));
            assert_int_equal(j[i].rec_end, (fs_time_t)((want[i].start + want[i].run) * 1e6));
            assert_int_equal(j[i].duration, (fs_time_t)(want[i].run * 1e6));
            assert_int_equal(j[i].estimate, want[i].est < 0 ? -1 : (fs_time_t)(want[i].est * 1e6));
            assert_int_equal(j[i].gpus, want[i].gpus);
            assert_int_equal(j[i].rec_state, want[i].state);
            assert_string_equal(fs_source_tenant_name(src, j[i].tenant), want[i].tenant);
            if (want[i].type)
                assert_string_equal(fs_source_gpu_type_name(src, j[i].gpu_type), want[i].type);
            else
                assert_int_equal(j[i].gpu_type, -1);
        }
        assert_int_equal(fs_source_next(src, j, 16, &n, &err), 0);
        assert_int_equal(n, 0);
        /* skipped and counted: the CPU-only job, two never started, one running */
        assert_int_equal(fs_source_skipped(src), 4);
        uint64_t c;
        const char *why;
        int seen = 0;
        for (size_t k = 0; (why = fs_source_skip_reason(src, k, &c)); k++) {
            if (strcmp(why, "never started (Start Unknown)") == 0)
                seen |= (c == 2) << 0;
            else if (strcmp(why, "still running (End Unknown)") == 0)
                seen |= (c == 1) << 1;
            else if (strcmp(why, "cpu_only (no gres/gpu in AllocTRES)") == 0)
                seen |= (c == 1) << 2;
        }
        assert_int_equal(seen, 7);
        fs_source_destroy(src);
        fclose(log);
    }
    const char *format = NULL;
    char why[160];
    fs_error_t err;
    assert_int_equal(fs_detect_format(SAMPLE, &format, why, sizeof why, &err), 0);
    assert_string_equal(format, "sacct");
    assert_int_equal(fs_alloc_live(), live0);
}

/* Bad fields: FILE:LINE: field NAME: expected ... (strict); lenient skips. */
static void test_errors(void **st)
{
    (void)st;
    static const struct {
        const char *row, *want;
    } cases[] = {
        {"7|u|a|gpu|n|2024-03-04T09:00:00|2024-03-04T09:00:01|2024-03-04T10:00:00|1:2:3:4|gres/gpu=1|COMPLETED",
         ":2: field Timelimit: expected a Slurm time limit"},
        {"7|u|a|gpu|n|2024-03-04T09:00:00|2024-03-04T09:00:01|2024-03-04T10:00:00|1:00:00|cpu=4,gres/gpu=x|COMPLETED",
         ":2: field AllocTRES: expected a GPU count"},
        {"7|u|a|gpu|n|2024-03-04T09:00:00|2024-03-04T09:00:01|2024-03-04T10:00:00|1:00:00|gres/gpu|COMPLETED",
         ":2: field AllocTRES: expected TRES=COUNT entries"},
        {"7|u|a|gpu|n|yesterday|2024-03-04T09:00:01|2024-03-04T10:00:00|1:00:00|gres/gpu=1|COMPLETED",
         ":2: field Submit: expected a date and time"},
        {"7|u|a|gpu|n|2024-03-04T09:00:00|2024-03-04T08:00:01|2024-03-04T10:00:00|1:00:00|gres/gpu=1|COMPLETED",
         ":2: field Start: expected a time >= Submit"},
        {"7|u|a|gpu|n|2024-03-04T09:00:00|2024-03-04T09:00:01|2024-03-04T10:00:00|1:00:00|gres/gpu=1|DONE",
         ":2: field State: expected a Slurm job state"},
        {"7|u|a|gpu|n|2024-03-04T09:00:00|2024-03-04T09:00:01|2024-03-04T10:00:00|1:00:00|gres/gpu=1",
         ":2: expected 11 fields"},
    };
    char *p = fs_test_path(g_dir, "bad.txt");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "JobID|User|Account|Partition|QOS|Submit|Start|End|"
                 "Timelimit|AllocTRES|State\n%s\n", cases[i].row);
        assert_int_equal(fs_test_write(p, text), 0);
        fs_trace_opts_t o;
        fs_trace_opts_init(&o);
        FILE *log = tmpfile();
        o.log = log;
        fs_source_t *src;
        fs_error_t err;
        assert_int_equal(fs_trace_open("sacct", p, &o, &src, &err), 0);
        fs_job_t j[4];
        size_t n;
        int rc = fs_source_next(src, j, 4, &n, &err);
        if (rc != FS_EINVAL || strncmp(err.msg, p, strlen(p)) != 0 || !strstr(err.msg, cases[i].want))
            fail_msg("case %zu: rc %d '%s'", i, rc, err.msg);
        fs_source_destroy(src);
        o.lenient = 1;      /* lenient: skipped and counted */
        assert_int_equal(fs_trace_open("sacct", p, &o, &src, &err), 0);
        assert_int_equal(fs_source_next(src, j, 4, &n, &err), 0);
        assert_int_equal(n, 0);
        assert_int_equal(fs_source_skipped(src), 1);
        fs_source_destroy(src);
        fclose(log);
    }
    /* a header without a needed column, on its line */
    assert_int_equal(fs_test_write(p, "JobID|User|Submit|Start|End|State\n1|u|x|y|z|COMPLETED\n"), 0);
    fs_source_t *src;
    fs_error_t err;
    assert_int_equal(fs_trace_open("sacct", p, NULL, &src, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, ":1:"));
    assert_non_null(strstr(err.msg, "AllocTRES"));
    free(p);
}

/* workload.trace.cancelled: withdraw keeps a job CANCELLED while pending
 * (Start Unknown) as FS_JOB_WITHDRAW, pending from Submit to End, its GPUs
 * from ReqTRES (Slurm allocates nothing to it: AllocTRES is empty); without
 * ReqTRES it has no GPU count (skipped and counted); PENDING rows stay
 * skipped; by default and with skip it is skipped as before; run is
 * refused. */
static void test_cancelled(void **st)
{
    (void)st;
    char *p = fs_test_path(g_dir, "cancel.txt");
    assert_int_equal(fs_test_write(p,
        "JobID|User|Account|Submit|Start|End|Timelimit|AllocTRES|State|ReqTRES\n"
        "11|u|vision|2024-03-04T09:00:00|2024-03-04T09:00:10|2024-03-04T10:00:10|02:00:00|gres/gpu=2|COMPLETED|gres/gpu=2\n"
        "12|v|nlp|2024-03-04T09:01:00|None|2024-03-04T09:31:00|04:00:00||CANCELLED by 77|billing=8,gres/gpu:h100=4\n"
        "13|v|nlp|2024-03-04T09:02:00|Unknown|Unknown|04:00:00||PENDING|gres/gpu=1\n"
        "14|v|nlp|2024-03-04T09:03:00|Unknown|2024-03-04T09:04:00|04:00:00||CANCELLED|cpu=4\n"), 0);
    for (int mode = FS_CANCELLED_DEFAULT; mode <= FS_CANCELLED_WITHDRAW; mode++) {
        fs_trace_opts_t o;
        fs_trace_opts_init(&o);
        FILE *log = tmpfile();
        o.log = log;
        o.cancelled = mode;
        fs_source_t *src;
        fs_error_t err;
        assert_int_equal(fs_trace_open("sacct", p, &o, &src, &err), 0);
        fs_job_t j[8];
        size_t n;
        assert_int_equal(fs_source_next(src, j, 8, &n, &err), 0);
        assert_int_equal(n, mode == FS_CANCELLED_WITHDRAW ? 2 : 1);
        assert_int_equal(j[0].id, 11);
        assert_int_equal(j[0].flags & FS_JOB_WITHDRAW, 0);
        uint64_t c;
        const char *why = fs_source_skip_reason(src, 0, &c);
        if (mode == FS_CANCELLED_WITHDRAW) {
            assert_int_equal(j[1].id, 12);
            assert_true(j[1].flags & FS_JOB_WITHDRAW);
            assert_int_equal(j[1].gpus, 4);
            assert_string_equal(fs_source_gpu_type_name(src, j[1].gpu_type), "h100");
            assert_string_equal(fs_source_tenant_name(src, j[1].tenant), "nlp");
            assert_int_equal(j[1].submit, S(60));
            assert_int_equal(j[1].duration, S(1800));           /* Submit to End */
            assert_int_equal(j[1].rec_start, -1);
            assert_int_equal(j[1].rec_end, S(1860));
            assert_int_equal(j[1].rec_state, FS_JOB_REC_KILLED);
            assert_int_equal(j[1].estimate, S(4 * 3600));
            assert_string_equal(why, "never started (Start Unknown)");
            assert_int_equal(c, 1);
            why = fs_source_skip_reason(src, 1, &c);
            assert_string_equal(why, "cpu_only (no gres/gpu in Alloc/ReqTRES)");
            assert_int_equal(c, 1);
        } else {
            assert_string_equal(why, "never started (Start Unknown)");
            assert_int_equal(c, 3);
        }
        fs_source_destroy(src);
        fclose(log);
    }
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.cancelled = FS_CANCELLED_RUN;
    fs_source_t *src;
    fs_error_t err;
    assert_int_equal(fs_trace_open("sacct", p, &o, &src, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "workload.trace.cancelled: run is not possible for sacct"));
    free(p);
}

static void test_slurm_time(void **st)
{
    (void)st;
    static const struct {
        const char *s;
        double sec;
    } ok[] = {
        {"45", 2700}, {"90", 5400}, {"30:15", 1815}, {"02:00:00", 7200}, {"1-00:00:00", 86400},
        {"7-0", 7 * 86400}, {"1-12", 86400 + 12 * 3600}, {"1-2:30", 86400 + 9000},
        {"0", 0}, {"14-00:00:00", 14 * 86400},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        fs_time_t t;
        assert_int_equal(fs_slurm_time(ok[i].s, strlen(ok[i].s), &t), 0);
        assert_int_equal(t, (fs_time_t)(ok[i].sec * 1e6));
    }
    static const char *const bad[] = {"", "1:2:3:4", "a", "1-", "-5", "1-2:3:4:5", "UNLIMITED",
                                      "1:", ":1", "1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fs_time_t t;
        if (fs_slurm_time(bad[i], strlen(bad[i]), &t) == 0)
            fail_msg("'%s' accepted", bad[i]);
    }
}

static int setup(void **st)
{
    (void)st;
    g_dir = fs_test_tmpdir();
    return g_dir ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    fs_test_rmtree(g_dir);
    free(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_cancelled),
        cmocka_unit_test(test_slurm_time),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
