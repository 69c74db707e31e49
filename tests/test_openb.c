/*
 * Tests of the Alibaba openb 2023 pod-list reader (traces/fs_openb): the
 * first 300 pods of openb_pod_list_gpuspec33.csv and 100 of the five-column
 * multigpu50 variant (tests/data/traces/real, derived by derive.sh) with
 * exact counts and values (expected figures from awk over the same files),
 * plain and gzip; CPU-only pods skipped and counted or refused; every row
 * error with its exact message; lenient counts; allocation failures; a
 * truncated gzip file.
 */
#include "fs_trace_test.h"

#define REAL FS_TEST_DATA "/traces/real"
#define HDR "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time," \
            "deletion_time,scheduled_time\n"

static void check_300(const readout_t *r)
{
    /* awk -F, 'NR>1 && $4>0': 281 GPU pods (19 CPU-only), 295 GPUs, 103
     * fractional, 2 multi-GPU, 21 never scheduled (Pending) */
    assert_int_equal(r->n, 281);
    assert_int_equal(r->skipped, 19);
    assert_string_equal(r->reasons, "cpu_only (num_gpu 0)=19;");
    uint64_t gpus = 0, frac = 0, multi = 0, nosched = 0;
    uint64_t phase[7] = {0};
    fs_time_t dur = 0;
    for (size_t i = 0; i < r->n; i++) {
        const fs_job_t *j = &r->jobs[i];
        gpus += j->gpus;
        frac += j->gpu_milli < 1000;
        multi += j->gpus > 1;
        nosched += j->rec_start < 0;
        phase[j->rec_state]++;
        dur += j->duration;
        assert_true(j->rec_end >= j->submit);
    }
    assert_int_equal(gpus, 295);
    assert_int_equal(frac, 103);
    assert_int_equal(multi, 2);
    assert_int_equal(nosched, 21);
    assert_int_equal(phase[FS_JOB_REC_COMPLETED], 10);
    assert_int_equal(phase[FS_JOB_REC_FAILED], 103);
    assert_int_equal(phase[FS_JOB_REC_KILLED], 21);
    assert_int_equal(phase[FS_JOB_REC_RUNNING], 147);
    /* sum of deletion - (scheduled or creation): no pod has a zero run time here */
    assert_int_equal(dur, S(141777327));
    /* openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061 */
    const fs_job_t *j = &r->jobs[1];
    assert_int_equal(j->id, 2);
    assert_int_equal(j->gpus, 1);
    assert_int_equal(j->gpu_milli, 460);
    assert_int_equal(j->submit, S(427061));
    assert_int_equal(j->rec_start, S(427061));
    assert_int_equal(j->rec_end, S(12902960));
    assert_int_equal(j->duration, S(12902960 - 427061));
    assert_int_equal(j->rec_state, FS_JOB_REC_RUNNING);
    assert_int_equal(j->priority, 2);
    assert_string_equal(r->tenants[1], "LS");
    assert_null(r->gpu_types[1]);
    assert_int_equal(j->gpu_type, -1);
    /* openb-pod-0061,11908,47104,1,1000,,BE,Pending,10001278,10001403, */
    j = &r->jobs[55];
    assert_int_equal(j->id, 62);
    assert_int_equal(j->submit, S(10001278));
    assert_int_equal(j->rec_start, -1);
    assert_int_equal(j->rec_end, S(10001403));
    assert_int_equal(j->duration, S(125));
    assert_int_equal(j->rec_state, FS_JOB_REC_KILLED);
    assert_int_equal(j->priority, 0);
    assert_string_equal(r->tenants[55], "BE");
    /* openb-pod-0299,...,V100M16|V100M32,BE,Running,10123064,10123745,10123133 */
    j = &r->jobs[280];
    assert_int_equal(j->id, 300);
    assert_int_equal(j->submit, S(10123064));
    assert_int_equal(j->rec_start, S(10123133));
    assert_int_equal(j->duration, S(10123745 - 10123133));
    assert_string_equal(r->gpu_types[280], "V100M16|V100M32");
    assert_int_equal(j->gpu_type, 0);
    /* GPU specs and QoS classes in order of first appearance */
    static const char *const specs[] = {
        "V100M16|V100M32", "T4", "G2", "G2|P100|T4|V100M16|V100M32", "P100",
        "P100|V100M16|V100M32", "G3", "P100|T4|V100M16|V100M32", "V100M32"};
    static const char *const qos[] = {"LS", "Burstable", "BE", "Guaranteed"};
    static const int prio[] = {2, 1, 0, 3};
    int32_t maxs = -1;
    for (size_t i = 0; i < r->n; i++) {
        if (r->jobs[i].gpu_type >= 0)
            assert_string_equal(r->gpu_types[i], specs[r->jobs[i].gpu_type]);
        assert_string_equal(r->tenants[i], qos[r->jobs[i].tenant]);
        assert_int_equal(r->jobs[i].priority, prio[r->jobs[i].tenant]);
        maxs = r->jobs[i].gpu_type > maxs ? r->jobs[i].gpu_type : maxs;
    }
    assert_int_equal(maxs, 8);
}

static void test_real_pods(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    readout_t r, z;
    fs_error_t err;
    assert_int_equal(read_all("openb", REAL "/openb_pods_gpuspec33_300.csv", NULL, 32, &r, &err), 0);
    check_300(&r);
    assert_int_equal(read_all("openb", REAL "/openb_pods_gpuspec33_300.csv.gz", NULL, 1, &z, &err), 0);
    check_300(&z);
    assert_memory_equal(z.jobs, r.jobs, r.n * sizeof *r.jobs);
    readout_free(&r);
    readout_free(&z);

    /* the five-column multigpu variant: times from default_duration */
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    assert_int_equal(read_all("openb", REAL "/openb_pods_multigpu50_100.csv", &o, 32, &r, &err),
                     FS_EINVAL);
    assert_string_equal(err.msg, REAL "/openb_pods_multigpu50_100.csv:1: a pod list without "
                        "creation_time and deletion_time records no run times: set "
                        "workload.trace.default_duration");
    o.default_duration = S(3600);
    assert_int_equal(read_all("openb", REAL "/openb_pods_multigpu50_100.csv", &o, 32, &r, &err), 0);
    /* awk: 94 GPU pods, 6 CPU-only, 101 GPUs, 34 fractional */
    assert_int_equal(r.n, 94);
    assert_int_equal(r.skipped, 6);
    uint64_t gpus = 0, frac = 0;
    for (size_t i = 0; i < r.n; i++) {
        gpus += r.jobs[i].gpus;
        frac += r.jobs[i].gpu_milli < 1000;
        assert_int_equal(r.jobs[i].submit, 0);
        assert_int_equal(r.jobs[i].duration, S(3600));
        assert_int_equal(r.jobs[i].rec_state, FS_JOB_REC_UNKNOWN);
        if (i)
            assert_true(r.jobs[i].id > r.jobs[i - 1].id);  /* file order kept */
    }
    assert_int_equal(gpus, 101);
    assert_int_equal(frac, 34);
    readout_free(&r);

    /* CPU-only pods refused */
    o.cpu_only = 1;
    assert_int_equal(read_all("openb", REAL "/openb_pods_multigpu50_100.csv", &o, 32, &r, &err),
                     FS_EINVAL);
    assert_non_null(strstr(err.msg, "field num_gpu: expected a GPU count >= 1 (CPU-only pods "
                                    "are refused: workload.trace.cpu_only = error) (got '0')"));
    readout_free(&r);

    /* truncated gzip */
    char *cut = tt_truncated(REAL "/openb_pods_gpuspec33_300.csv.gz", "cut.csv.gz", 3000);
    assert_int_equal(read_all("openb", cut, NULL, 8, &r, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, ": truncated gzip data (unexpected end of file)"));
    assert_int_equal(r.n, 0);   /* the rows sat in the sort window: none delivered */
    readout_free(&r);
    fs_trace_opts_init(&o);
    o.sort_window = 0;          /* without a window the complete rows come first */
    assert_int_equal(read_all("openb", cut, &o, 8, &r, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, ": truncated gzip data (unexpected end of file)"));
    assert_true(r.n > 0 && r.n < 281);
    readout_free(&r);
    free(cut);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_errors(void **state)
{
    (void)state;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    tt_expect_error("openb", "name,num_gpu\n", NULL,
                    ":1: missing required column 'gpu_milli' (openb header expected; got "
                    "'name,num_gpu')");
    tt_expect_error("openb", "name,num_gpu,gpu_milli,creation_time\n", NULL,
                    ":1: missing required column 'deletion_time' (creation_time and "
                    "deletion_time come together)");
    tt_expect_error("openb", HDR "p0,1,1,1,0,,LS,Running,0,10,0\n", NULL,
                    ":2: field gpu_milli: expected an integer in 1..1000 when num_gpu is 1 (got '0')");
    tt_expect_error("openb", HDR "p0,1,1,2,500,,LS,Running,0,10,0\n", NULL,
                    ":2: field gpu_milli: expected 1000 when num_gpu > 1 (got '500')");
    tt_expect_error("openb", HDR "p0,1,1,1,1001,,LS,Running,0,10,0\n", NULL,
                    ":2: field gpu_milli: expected an integer in 0..1000 (got '1001')");
    tt_expect_error("openb", HDR "p0,1,1,-1,1000,,LS,Running,0,10,0\n", NULL,
                    ":2: field num_gpu: expected an integer in 0..2147483648 (got '-1')");
    tt_expect_error("openb", HDR "p0,1,1,1,1000,,XX,Running,0,10,0\n", NULL,
                    ":2: field qos: expected one of LS, BE, Burstable, Guaranteed (got 'XX')");
    tt_expect_error("openb", HDR "p0,1,1,1,1000,,LS,Done,0,10,0\n", NULL,
                    ":2: field pod_phase: expected one of Succeeded, Failed, Running, Pending "
                    "(got 'Done')");
    tt_expect_error("openb", HDR "p0,1,1,1,1000,,LS,Running,5,10,4\n", NULL,
                    ":2: field scheduled_time: expected a time >= creation_time (got '4')");
    tt_expect_error("openb", HDR "p0,1,1,1,1000,,LS,Running,5,7,8\n", NULL,
                    ":2: field deletion_time: expected a time >= scheduled_time (got '7')");
    tt_expect_error("openb", HDR "p0,1,1,1,1000,,LS,Pending,5,4,\n", NULL,
                    ":2: field deletion_time: expected a time >= creation_time (got '4')");
    tt_expect_error("openb", HDR "p0,1,1,1,1000,G\x01,LS,Running,5,7,5\n", NULL,
                    ":2: field gpu_spec: expected a UTF-8 name without control characters "
                    "(got 'G\\x01')");
    tt_expect_error("openb", HDR "p0,x,1,1,1000,,LS,Running,5,7,5\n", NULL,
                    ":2: field cpu_milli: expected an integer in 0..4294967295 (got 'x')");
    tt_expect_error("openb", HDR "p0,1,1,1,1000,,LS,Running,5,7\n", NULL,
                    ":2: expected 11 fields as in the header, got 10");
    o.cpu_only = 1;
    tt_expect_error("openb", HDR "p0,1,1,0,0,,LS,Running,5,7,5\n", &o,
                    ":2: field num_gpu: expected a GPU count >= 1 (CPU-only pods are refused: "
                    "workload.trace.cpu_only = error) (got '0')");
}

static void test_lenient(void **state)
{
    (void)state;
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    tt_expect_lenient("openb",
                      HDR "p0,1,1,1,0,,LS,Running,0,10,0\n"
                          "p1,1,1,0,0,,LS,Running,1,10,1\n"
                          "p2,1,1,1,100,T4,LS,Running,2,10,2\n"
                          "p3,1,1,1,100,,ZZ,Running,3,10,3\n"
                          "p4,1,1,1,100,,LS,Running,4,3,4\n"
                          "p5,1,1,1,100,G\x01,LS,Running,5,10,5\n"
                          "p6,1,1,1,100,V100M32,BE,Succeeded,6,10,6\n",
                      o, 2, "field gpu_milli=1;cpu_only (num_gpu 0)=1;field qos=1;"
                            "field deletion_time=1;field gpu_spec=1;");
    /* a skipped row's names are not interned: V100M32 is GPU type 1 */
    int64_t live0 = fs_alloc_live();
    char *p = tt_file("n.csv", HDR "p5,1,1,1,100,G2,LS,Running,5,x,5\n"
                                   "p2,1,1,1,100,T4,LS,Running,6,10,6\n");
    readout_t r;
    fs_error_t err;
    o.lenient = 1;
    assert_int_equal(read_all("openb", p, &o, 4, &r, &err), 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.jobs[0].gpu_type, 0);
    assert_string_equal(r.gpu_types[0], "T4");
    readout_free(&r);
    free(p);
    assert_int_equal(fs_alloc_live(), live0);
}

/* workload.trace.cancelled on pods deleted while Pending (no
 * scheduled_time): default and run replay them from creation to deletion,
 * as always; skip skips and counts them; withdraw flags them
 * FS_JOB_WITHDRAW, pending from creation to deletion.  A Pending pod that
 * was scheduled (a scheduled_time) and other phases are never affected. */
static void test_cancelled(void **state)
{
    (void)state;
    char *p = tt_file("c.csv", HDR "p0,1,1,1,1000,,LS,Succeeded,0,100,5\n"
                                   "p1,1,1,2,1000,,LS,Pending,10,70,\n"
                                   "p2,1,1,1,500,,BE,Pending,20,90,30\n");
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    readout_t r;
    fs_error_t err;
    for (int mode = FS_CANCELLED_DEFAULT; mode <= FS_CANCELLED_RUN; mode++) {
        o.cancelled = mode;
        assert_int_equal(read_all("openb", p, &o, 4, &r, &err), 0);
        if (mode == FS_CANCELLED_SKIP) {
            assert_int_equal(r.n, 2);
            assert_int_equal(r.jobs[0].id, 1);
            assert_int_equal(r.jobs[1].id, 3);
            assert_string_equal(r.reasons, "deleted while Pending (cancelled: skip)=1;");
        } else {
            assert_int_equal(r.n, 3);
            assert_int_equal(r.jobs[1].id, 2);
            assert_int_equal(r.jobs[1].submit, S(10));
            assert_int_equal(r.jobs[1].duration, S(60));    /* creation to deletion */
            assert_int_equal(r.jobs[1].rec_start, -1);
            assert_int_equal(r.jobs[1].rec_end, S(70));
            assert_int_equal(r.jobs[1].rec_state, FS_JOB_REC_KILLED);
            assert_int_equal(r.jobs[1].flags & FS_JOB_WITHDRAW,
                             mode == FS_CANCELLED_WITHDRAW ? FS_JOB_WITHDRAW : 0);
            assert_int_equal(r.jobs[2].flags & FS_JOB_WITHDRAW, 0);   /* it was scheduled */
            assert_int_equal(r.jobs[2].duration, S(60));
        }
        assert_int_equal(r.jobs[0].flags & FS_JOB_WITHDRAW, 0);
        readout_free(&r);
    }
    free(p);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    tt_alloc_failures("openb", REAL "/openb_pods_gpuspec33_300.csv", NULL, 281);
    tt_alloc_failures("openb", REAL "/openb_pods_gpuspec33_300.csv.gz", NULL, 281);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_pods),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_cancelled),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
