/*
 * fs_results: the file is read back with the plain HDF5 C API (H5TBread_table,
 * H5Aread), field by field and bit for bit, for 0, 1 and 200,000 jobs
 * (several batches); the layout is checked against docs/results.md (column
 * names, order, types, enum values, chunking and deflate); the crash-safety
 * protocol (temporary name, complete flag, rename, abort); errors (an
 * unwritable path, a bad state); fault injection on every allocation of
 * open, add and commit; and h5dump, when installed, reading the file.
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <zlib.h>

#include "analysis/fs_index.h"
#include "analysis/fs_results.h"
#include "sim/fs_alloc.h"
#include "sim/fs_io.h"
#include "fs_test_util.h"

typedef struct fixture {
    int64_t live0;
    char *dir;
    char *path;     /* dir/run.h5 */
} fixture_t;

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->live0 = fs_alloc_live();
    fx->dir = fs_test_tmpdir();
    assert_non_null(fx->dir);
    fx->path = fs_test_path(fx->dir, "run.h5");
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    fs_alloc_fail_after(0);
    assert_int_equal(fs_alloc_live(), fx->live0);
    fs_test_rmtree(fx->dir);
    free(fx->dir);
    free(fx->path);
    free(fx);
    return 0;
}

static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* Entries of dir other than . and .. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static char *tmp_name(const char *path)
{
    char *t = malloc(strlen(path) + 32);
    sprintf(t, "%s.tmp.%ld", path, (long)getpid());
    return t;
}

/* ---- rows ---------------------------------------------------------------- */

static const fs_pool_info_t pools[] = {
    {"main", "H100", 256, 8, NULL, 0, 4, 0, 30, 0},
    {"inference-pool", "L4", 3, 1, "3g.40gb x2", 60, 0, 0, 45.5, 600},
};
static const char scenario[] = "name: test\nseed: 7\nhorizon: 30d\n";
static const char source[] = "# as given\nname: test\n";

/* Test configuration, not run state: the tests that set it write through
 * the results file's writer thread (fs_results_meta_t.writer_thread). */
static int use_writer;

static fs_results_meta_t meta(void)
{
    fs_results_meta_t m = {.seed = 0xfedcba9876543210ull, .replication = 3,
                           .scenario = scenario, .scenario_source = source,
                           .scenario_path = NULL, .pools = pools, .n_pools = 2,
                           .writer_thread = use_writer};
    return m;
}

static fs_job_row_t job_row(uint64_t i)
{
    fs_job_row_t r;
    memset(&r, 0, sizeof r);
    r.id = (1ull << 40) + i * 7919u;
    r.tenant = (int32_t)(i % 5) - 1;
    r.state = (int32_t)(i % 5);
    int started = r.state != FS_STATE_QUEUED && r.state != FS_STATE_REJECTED;
    int ended = r.state == FS_STATE_COMPLETED || r.state == FS_STATE_FAILED;
    r.pool = started ? (int32_t)(i % 2) : -1;
    r.gpus = 1u << (i % 10);
    r.gpu_milli = i % 3 ? 1000 : 250;
    r.nodes = started ? (uint32_t)(i % 4) + 1 : 0;
    /* columns that hold one value for runs of rows (whole 64-row blocks of
     * the packer's constant path, and blocks where the value changes) */
    r.restarts = (uint32_t)(i / 200 % 7) * 1000003u;
    r.submit = (double)i * 0.25 + 1.0 / 3.0;
    r.start = started ? r.submit + (double)(i % 13) / 7.0 : NAN;
    r.end = ended ? r.start + 100.0 / (double)(i + 1) : NAN;
    r.wait = started ? r.start - r.submit : NAN;
    r.run = started ? (ended ? r.end - r.start : 1e9 - r.start) : 0.0;
    r.lost_gpu_s = (double)(i / 1000 % 11) * 1.5e3 + 1e-300;
    r.ckpt_s = (double)(i % 5) * 60.0 + 0.125;
    r.recovery_s = (double)(i % 3) * 600.0 + 1.0 / 7.0;
    r.ettr = started ? 1.0 / (double)(i % 9 + 1) : NAN;
    r.goodput = started ? 1.0 - 1.0 / (double)(i % 4 + 2) : NAN;
    r.queued_s = started ? r.wait + (double)(i % 6) * 30.0 : (double)i;
    r.preemptions = i < 70000 ? 0 : (uint32_t)(i / 150 % 3) * 65537u;
    r.preempt_lost_gpu_s = (double)(i % 3) * 250.0 + 1.0 / 9.0;
    r.startup_s = i / 640 % 3 == 1 ? NAN : (double)(i / 640 % 5) * 12.5 + 1.0 / 7.0;
    r.sched_goodput = started ? 1.0 / (double)(i % 5 + 1) : NAN;
    r.program_goodput = started ? 0.375 + (double)(i % 3) / 10.0 : NAN;
    r.rec_start = i % 4 ? r.submit + (double)(i % 17) * 60.0 : NAN;
    return r;
}

static fs_sample_row_t sample_row(uint64_t i)
{
    fs_sample_row_t s;
    memset(&s, 0, sizeof s);
    s.time = (double)i * 300.0 + 0.1;
    s.gpus_total = 2051;
    s.gpus_up = 2051 - (uint32_t)(i % 17);
    s.gpus_busy = (uint32_t)(i * 31 % 2000);
    s.jobs_running = (uint32_t)(i % 1000);
    s.jobs_queued = (uint32_t)(i % 4000000000u);
    s.gpus_queued = (1ull << 33) + i;   /* beyond 32 bits on purpose */
    s.nodes_down = (uint32_t)(i % 13);
    s.repair_queue = (uint32_t)(i % 5);
    s.nodes_provisioning = (uint32_t)(i % 7);
    s.nodes_autoscaled = (uint32_t)(i % 11);
    s.gpus_serving = (uint32_t)(i % 17);
    s.replicas = (uint32_t)(i % 19);
    s.gpu_s_busy = (double)i * 3.25;
    s.gpu_s_down = (double)(i % 7) * 0.5;
    s.gpu_s_waiting = (double)(i % 9) * 1.125;
    s.gpu_s_idle = (double)(i % 5) * 2.0;
    s.gpu_s_allocated = (double)(i % 7) * 0.75;
    s.gpu_s_share_idle = (double)(i % 3) * 0.125;
    s.gpu_s_held = (double)(i % 11) * 0.5;
    s.gpu_s_computing = (double)(i % 13) * 0.25;
    s.gpu_s_ckpt = (double)(i % 2) * 1.5;
    s.gpu_s_startup = (double)(i % 5) * 0.375;
    s.gpu_s_recovering = (double)(i % 3) * 0.0625;
    s.gpu_s_serving = (double)(i % 4) * 2.5;
    s.gpu_s_frag = (double)(i % 6) * 0.5;
    s.gpu_s_quota = (double)(i % 2) * 0.25;
    s.gpu_s_reserved = (double)(i % 3) * 0.75;
    s.gpu_s_blocked = (double)(i % 5) * 1.25;
    return s;
}

/* A /failures row: every component and repair path, causes up to 23 chars. */
static fs_failure_row_t failure_row(uint64_t i)
{
    static const char *const causes[] = {"gpu", "hbm", "network", "a_cause_of_23_chars_xyz"};
    fs_failure_row_t r;
    memset(&r, 0, sizeof r);
    r.time = (double)i * 977.5;
    r.component = (int32_t)(i % 8);
    r.unit = (uint32_t)(i * 7919 % 100000);
    r.nodes = r.component >= 3 ? 32 : 1;
    snprintf(r.cause, sizeof r.cause, "%s", causes[i % 4]);
    r.repair = (int32_t)(i % 5);
    r.repair_time = r.repair == 3 ? NAN : 60.0 * (double)(i % 1000);
    r.jobs_hit = (uint32_t)(i % 3);
    r.xid = (uint32_t)(i % 4 == 1 ? 48 : i % 4 == 2 ? 79 : 0);
    return r;
}

/* The summary columns in file order, each 8 bytes wide: the rows of
 * analysis/fs_summary.def (tests/test_summary.c checks them against
 * docs/results.md). */
typedef struct sum_field {
    const char *name;
    size_t off;
    int is_u64;
} sum_field_t;

#define SF_U64_uint64_t 1
#define SF_U64_double 0
#define FS_SUMMARY(name, ctype, unit, from, probe, desc)                                    \
    {#name, offsetof(fs_summary_t, name), SF_U64_##ctype},
static const sum_field_t sum_fields[] = {
#include "analysis/fs_summary.def"
};
#undef FS_SUMMARY
#define N_SUM (sizeof sum_fields / sizeof sum_fields[0])

static fs_summary_t summary_value(void)
{
    fs_summary_t s;
    memset(&s, 0, sizeof s);
    assert_int_equal(N_SUM * 8, sizeof s);   /* every field is listed */
    for (size_t i = 0; i < N_SUM; i++) {
        if (sum_fields[i].is_u64) {
            uint64_t v = 1000 * i + 7 + (i == 0 ? (1ull << 50) : 0);
            memcpy((char *)&s + sum_fields[i].off, &v, 8);
        } else {
            double v = ((double)i + 0.5) * 3.141592653589793;
            memcpy((char *)&s + sum_fields[i].off, &v, 8);
        }
    }
    s.little_rel_err = NAN;
    return s;
}

static const fs_tenant_row_t tenant_rows[] = {
    {0, 10, 9, 1.25, 30.5, 10, 80.25, 99.5, 400.125, 900, 31.5, 4, 0.75, 2.5, 0.125,
     1.5, 1.0, 0.25, 0.125, 0.0625, 0.3125, 2, 0, 4.5, 0, 1, 0},
    {2, 1, 0, 0.0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0, 0, NAN, NAN, 0, 0, 0, 0, 0, 0,
     NAN, NAN, NAN, NAN, NAN, NAN},
    {7, 5, 5, 1e6, 0.0, 0, 0, 0, 1e5, 2e5, 0, 0, 0, 0, 3e3,    /* no name for 7: stored as "" */
     1e6, 9e5, 1e4, 5e4, 2e4, 3e4, 0, 2, 0, 4.5, 0, 1},
};
static const char *const tenant_names[] = {"alpha", "beta", "research-long-name"};

/* Writes a run of n jobs and m samples and commits it. */
static void write_run(const char *path, size_t n, size_t m)
{
    fs_results_meta_t md = meta();
    fs_results_t *r = NULL;
    fs_error_t err;
    assert_int_equal(fs_results_open(path, &md, &r, &err), 0);
    for (size_t i = 0; i < n; i++) {
        fs_job_row_t row = job_row(i);
        assert_int_equal(fs_results_add_job(r, &row, &err), 0);
    }
    for (size_t i = 0; i < m; i++) {
        fs_sample_row_t s = sample_row(i);
        assert_int_equal(fs_results_add_sample(r, &s, &err), 0);
    }
    for (size_t i = 0; i < m; i++) {   /* as many failures as samples */
        fs_failure_row_t fr = failure_row(i);
        assert_int_equal(fs_results_add_failure(r, &fr, &err), 0);
    }
    fs_summary_t sum = summary_value();
    int rc = fs_results_commit(r, &sum, tenant_rows, 3, tenant_names, 3, &err);
    if (rc != 0)
        fail_msg("commit: %s", err.msg);
}

/* ---- readers --------------------------------------------------------------- */

static int bits_equal(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static hsize_t table_rows(hid_t f, const char *name)
{
    hsize_t nf, nr;
    assert_true(H5TBget_table_info(f, name, &nf, &nr) >= 0);
    return nr;
}

/* The table's column names in file order, joined with ','. */
static void column_names(hid_t f, const char *name, char *buf, size_t cap)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t t = H5Dget_type(d);
    assert_int_equal(H5Tget_class(t), H5T_COMPOUND);
    int n = H5Tget_nmembers(t);
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        char *mn = H5Tget_member_name(t, (unsigned)i);
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? "," : "", mn);
        H5free_memory(mn);
    }
    H5Tclose(t);
    H5Dclose(d);
}

static H5T_class_t member_class(hid_t f, const char *table, const char *col, size_t *size)
{
    hid_t d = H5Dopen2(f, table, H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    int idx = H5Tget_member_index(t, col);
    assert_true(idx >= 0);
    hid_t mt = H5Tget_member_type(t, (unsigned)idx);
    H5T_class_t c = H5Tget_class(mt);
    if (size)
        *size = H5Tget_size(mt);
    H5Tclose(mt);
    H5Tclose(t);
    H5Dclose(d);
    return c;
}

static char *attr_string(hid_t loc, const char *obj, const char *name)
{
    hid_t a = H5Aopen_by_name(loc, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    hid_t ft = H5Aget_type(a);
    assert_int_equal(H5Tget_class(ft), H5T_STRING);
    char *out;
    if (H5Tis_variable_str(ft) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(ft));
        char *s = NULL;
        assert_true(H5Aread(a, mt, &s) >= 0);
        out = strdup(s);
        H5free_memory(s);
        H5Tclose(mt);
    } else {
        size_t n = H5Tget_size(ft);
        out = calloc(1, n + 1);
        assert_true(H5Aread(a, ft, out) >= 0);
    }
    H5Tclose(ft);
    H5Aclose(a);
    return out;
}

static int64_t attr_int(hid_t loc, const char *name, H5T_class_t want_class, size_t want_size)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    assert_true(a >= 0);
    hid_t ft = H5Aget_type(a);
    assert_int_equal(H5Tget_class(ft), want_class);
    assert_int_equal(H5Tget_size(ft), want_size);
    int64_t v = 0;
    assert_true(H5Aread(a, H5T_NATIVE_INT64, &v) >= 0);
    H5Tclose(ft);
    H5Aclose(a);
    return v;
}

static void check_root(hid_t f, int complete)
{
    assert_int_equal(attr_int(f, "format_version", H5T_INTEGER, 4), FS_RESULTS_FORMAT_VERSION);
    assert_int_equal(attr_int(f, "complete", H5T_INTEGER, 4), complete);
    assert_int_equal(attr_int(f, "replication", H5T_INTEGER, 8), 3);
    hid_t a = H5Aopen(f, "seed", H5P_DEFAULT);
    uint64_t seed = 0;
    assert_true(H5Aread(a, H5T_NATIVE_UINT64, &seed) >= 0);
    H5Aclose(a);
    assert_true(seed == 0xfedcba9876543210ull);
    struct {
        const char *name, *want;
    } strs[] = {{"fleetsim_version", FLEETSIM_VERSION}, {"scenario", scenario},
                {"scenario_source", source},         {"scenario_path", ""},
                {"currency", "USD"},                  {"time_unit", "s"}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        char *s = attr_string(f, ".", strs[i].name);
        assert_string_equal(s, strs[i].want);
        free(s);
    }
}

/* Reads /jobs with offsets in documented column order. */
static void check_jobs(hid_t f, size_t n)
{
    char names[1024];
    column_names(f, "jobs", names, sizeof names);
    assert_string_equal(names, "id,tenant,pool,gpus,gpu_milli,nodes,restarts,submit,start,end,"
                               "wait,run,lost_gpu_s,state,ckpt_s,recovery_s,ettr,goodput,queued_s,"
                               "preemptions,preempt_lost_gpu_s,startup_s,sched_goodput,"
                               "program_goodput,rec_start");
    assert_int_equal(table_rows(f, "jobs"), n);
    /* chunks of 4,096 rows; a table the commit wrote whole with fewer rows
     * has its rows rounded up to 64 (a small run compresses no padding) */
    hid_t dj = H5Dopen2(f, "jobs", H5P_DEFAULT), pj = H5Dget_create_plist(dj);
    hsize_t ch[1];
    assert_int_equal(H5Pget_chunk(pj, 1, ch), 1);
    assert_int_equal(ch[0], n == 0 || n >= 4096 ? 4096 : (n + 63) / 64 * 64);
    H5Pclose(pj);
    H5Dclose(dj);
    const size_t off[] = {
        offsetof(fs_job_row_t, id),       offsetof(fs_job_row_t, tenant),
        offsetof(fs_job_row_t, pool),     offsetof(fs_job_row_t, gpus),
        offsetof(fs_job_row_t, gpu_milli), offsetof(fs_job_row_t, nodes),
        offsetof(fs_job_row_t, restarts), offsetof(fs_job_row_t, submit),
        offsetof(fs_job_row_t, start),    offsetof(fs_job_row_t, end),
        offsetof(fs_job_row_t, wait),     offsetof(fs_job_row_t, run),
        offsetof(fs_job_row_t, lost_gpu_s), offsetof(fs_job_row_t, state),
        offsetof(fs_job_row_t, ckpt_s),   offsetof(fs_job_row_t, recovery_s),
        offsetof(fs_job_row_t, ettr),     offsetof(fs_job_row_t, goodput),
        offsetof(fs_job_row_t, queued_s), offsetof(fs_job_row_t, preemptions),
        offsetof(fs_job_row_t, preempt_lost_gpu_s), offsetof(fs_job_row_t, startup_s),
        offsetof(fs_job_row_t, sched_goodput), offsetof(fs_job_row_t, program_goodput),
        offsetof(fs_job_row_t, rec_start)};
    const size_t sz[] = {8, 4, 4, 4, 4, 4, 4, 8, 8, 8, 8, 8, 8, 4, 8, 8, 8, 8, 8, 4, 8, 8, 8, 8, 8};
    if (n == 0)
        return;
    fs_job_row_t *rows = calloc(n, sizeof *rows);
    assert_non_null(rows);
    assert_true(H5TBread_table(f, "jobs", sizeof *rows, off, sz, rows) >= 0);
    for (size_t i = 0; i < n; i++) {
        fs_job_row_t w = job_row(i), *g = &rows[i];
        if (!(g->id == w.id && g->tenant == w.tenant && g->pool == w.pool &&
              g->gpus == w.gpus && g->gpu_milli == w.gpu_milli && g->nodes == w.nodes &&
              g->restarts == w.restarts && bits_equal(g->submit, w.submit) &&
              bits_equal(g->start, w.start) && bits_equal(g->end, w.end) &&
              bits_equal(g->wait, w.wait) && bits_equal(g->run, w.run) &&
              bits_equal(g->lost_gpu_s, w.lost_gpu_s) && g->state == w.state &&
              bits_equal(g->ckpt_s, w.ckpt_s) && bits_equal(g->recovery_s, w.recovery_s) &&
              bits_equal(g->ettr, w.ettr) && bits_equal(g->goodput, w.goodput) &&
              bits_equal(g->queued_s, w.queued_s) && g->preemptions == w.preemptions &&
              bits_equal(g->preempt_lost_gpu_s, w.preempt_lost_gpu_s) &&
              bits_equal(g->startup_s, w.startup_s) &&
              bits_equal(g->sched_goodput, w.sched_goodput) &&
              bits_equal(g->program_goodput, w.program_goodput) &&
              bits_equal(g->rec_start, w.rec_start))) {
            free(rows);
            fail_msg("/jobs row %zu differs", i);
        }
    }
    free(rows);
}

static void check_timeline(hid_t f, size_t m)
{
    char names[512];
    column_names(f, "timeline", names, sizeof names);
    assert_string_equal(names,
                        "time,gpus_total,gpus_up,gpus_busy,jobs_running,jobs_queued,gpus_queued,"
                        "nodes_down,repair_queue,nodes_provisioning,nodes_autoscaled,gpus_serving,"
                        "replicas,mig_instances,mig_busy,mig_serving,gpu_s_busy,gpu_s_down,gpu_s_waiting,gpu_s_idle,"
                        "gpu_s_allocated,gpu_s_share_idle,gpu_s_held,gpu_s_computing,gpu_s_ckpt,"
                        "gpu_s_startup,gpu_s_recovering,gpu_s_serving,gpu_s_frag,gpu_s_quota,"
                        "gpu_s_reserved,gpu_s_blocked");
    assert_int_equal(table_rows(f, "timeline"), m);
    const size_t off[] = {offsetof(fs_sample_row_t, time),       offsetof(fs_sample_row_t, gpus_total),
                          offsetof(fs_sample_row_t, gpus_up),    offsetof(fs_sample_row_t, gpus_busy),
                          offsetof(fs_sample_row_t, jobs_running), offsetof(fs_sample_row_t, jobs_queued),
                          offsetof(fs_sample_row_t, gpus_queued), offsetof(fs_sample_row_t, nodes_down),
                          offsetof(fs_sample_row_t, repair_queue),
                          offsetof(fs_sample_row_t, nodes_provisioning),
                          offsetof(fs_sample_row_t, nodes_autoscaled),
                          offsetof(fs_sample_row_t, gpus_serving),
                          offsetof(fs_sample_row_t, replicas),
                          offsetof(fs_sample_row_t, mig_instances), offsetof(fs_sample_row_t, mig_busy),
                          offsetof(fs_sample_row_t, mig_serving),
                          offsetof(fs_sample_row_t, gpu_s_busy), offsetof(fs_sample_row_t, gpu_s_down),
                          offsetof(fs_sample_row_t, gpu_s_waiting), offsetof(fs_sample_row_t, gpu_s_idle),
                          offsetof(fs_sample_row_t, gpu_s_allocated),
                          offsetof(fs_sample_row_t, gpu_s_share_idle),
                          offsetof(fs_sample_row_t, gpu_s_held),
                          offsetof(fs_sample_row_t, gpu_s_computing),
                          offsetof(fs_sample_row_t, gpu_s_ckpt),
                          offsetof(fs_sample_row_t, gpu_s_startup),
                          offsetof(fs_sample_row_t, gpu_s_recovering),
                          offsetof(fs_sample_row_t, gpu_s_serving),
                          offsetof(fs_sample_row_t, gpu_s_frag),
                          offsetof(fs_sample_row_t, gpu_s_quota),
                          offsetof(fs_sample_row_t, gpu_s_reserved),
                          offsetof(fs_sample_row_t, gpu_s_blocked)};
    const size_t sz[] = {8, 4, 4, 4, 4, 4, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 8, 8, 8, 8, 8, 8,
                         8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
    if (m == 0)
        return;
    fs_sample_row_t *rows = calloc(m, sizeof *rows);
    assert_true(H5TBread_table(f, "timeline", sizeof *rows, off, sz, rows) >= 0);
    for (size_t i = 0; i < m; i++) {
        fs_sample_row_t w = sample_row(i), *g = &rows[i];
        if (!(bits_equal(g->time, w.time) && g->gpus_total == w.gpus_total &&
              g->gpus_up == w.gpus_up && g->gpus_busy == w.gpus_busy &&
              g->jobs_running == w.jobs_running && g->jobs_queued == w.jobs_queued &&
              g->gpus_queued == w.gpus_queued && g->nodes_down == w.nodes_down &&
              g->repair_queue == w.repair_queue &&
              g->nodes_provisioning == w.nodes_provisioning &&
              g->nodes_autoscaled == w.nodes_autoscaled && g->gpus_serving == w.gpus_serving &&
              g->replicas == w.replicas && bits_equal(g->gpu_s_busy, w.gpu_s_busy) &&
              bits_equal(g->gpu_s_down, w.gpu_s_down) && bits_equal(g->gpu_s_waiting, w.gpu_s_waiting) &&
              bits_equal(g->gpu_s_idle, w.gpu_s_idle) &&
              bits_equal(g->gpu_s_allocated, w.gpu_s_allocated) &&
              bits_equal(g->gpu_s_share_idle, w.gpu_s_share_idle) &&
              bits_equal(g->gpu_s_held, w.gpu_s_held) &&
              bits_equal(g->gpu_s_computing, w.gpu_s_computing) &&
              bits_equal(g->gpu_s_ckpt, w.gpu_s_ckpt) &&
              bits_equal(g->gpu_s_startup, w.gpu_s_startup) &&
              bits_equal(g->gpu_s_recovering, w.gpu_s_recovering) &&
              bits_equal(g->gpu_s_serving, w.gpu_s_serving) &&
              bits_equal(g->gpu_s_frag, w.gpu_s_frag) && bits_equal(g->gpu_s_quota, w.gpu_s_quota) &&
              bits_equal(g->gpu_s_reserved, w.gpu_s_reserved) &&
              bits_equal(g->gpu_s_blocked, w.gpu_s_blocked))) {
            free(rows);
            fail_msg("/timeline row %zu differs", i);
        }
    }
    free(rows);
}

static void check_failures(hid_t f, size_t m)
{
    char names[512];
    column_names(f, "failures", names, sizeof names);
    assert_string_equal(names, "time,component,unit,nodes,cause,repair,repair_time,jobs_hit,xid");
    assert_int_equal(table_rows(f, "failures"), m);
    size_t csz;
    assert_int_equal(member_class(f, "failures", "cause", &csz), H5T_STRING);
    assert_int_equal(csz, FS_FAILURE_CAUSE_MAX);
    assert_int_equal(member_class(f, "failures", "component", &csz), H5T_ENUM);
    assert_int_equal(member_class(f, "failures", "repair", &csz), H5T_ENUM);
    const size_t off[] = {offsetof(fs_failure_row_t, time),   offsetof(fs_failure_row_t, component),
                          offsetof(fs_failure_row_t, unit),   offsetof(fs_failure_row_t, nodes),
                          offsetof(fs_failure_row_t, cause),  offsetof(fs_failure_row_t, repair),
                          offsetof(fs_failure_row_t, repair_time), offsetof(fs_failure_row_t, jobs_hit),
                          offsetof(fs_failure_row_t, xid)};
    const size_t sz[] = {8, 4, 4, 4, FS_FAILURE_CAUSE_MAX, 4, 8, 4, 4};
    if (m == 0)
        return;
    fs_failure_row_t *rows = calloc(m, sizeof *rows);
    assert_true(H5TBread_table(f, "failures", sizeof *rows, off, sz, rows) >= 0);
    for (size_t i = 0; i < m; i++) {
        fs_failure_row_t w = failure_row(i), *g = &rows[i];
        if (!(bits_equal(g->time, w.time) && g->component == w.component && g->unit == w.unit &&
              g->nodes == w.nodes && memcmp(g->cause, w.cause, sizeof w.cause) == 0 &&
              g->repair == w.repair && bits_equal(g->repair_time, w.repair_time) &&
              g->jobs_hit == w.jobs_hit && g->xid == w.xid)) {
            free(rows);
            fail_msg("/failures row %zu differs", i);
        }
    }
    free(rows);
}

static void check_summary(hid_t f)
{
    char names[2048], want[2048] = "";
    column_names(f, "summary", names, sizeof names);
    for (size_t i = 0; i < N_SUM; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "," : "",
                 sum_fields[i].name);
    assert_string_equal(names, want);
    assert_int_equal(table_rows(f, "summary"), 1);
    size_t off[N_SUM], sz[N_SUM];
    for (size_t i = 0; i < N_SUM; i++) {
        off[i] = sum_fields[i].off;
        sz[i] = 8;
        size_t fsz;
        H5T_class_t c = member_class(f, "summary", sum_fields[i].name, &fsz);
        assert_int_equal(c, sum_fields[i].is_u64 ? H5T_INTEGER : H5T_FLOAT);
        assert_int_equal(fsz, 8);
    }
    fs_summary_t got, want_s = summary_value();
    memset(&got, 0xab, sizeof got);
    assert_true(H5TBread_table(f, "summary", sizeof got, off, sz, &got) >= 0);
    for (size_t i = 0; i < N_SUM; i++)
        if (memcmp((char *)&got + sum_fields[i].off, (char *)&want_s + sum_fields[i].off, 8))
            fail_msg("/summary field %s differs", sum_fields[i].name);
}

typedef struct tenant_read {
    int32_t tenant;
    char name[40];
    uint64_t jobs, jobs_completed;
    double gpu_hours, wait_mean;
    double wait_p50, wait_p95, wait_p99, jct_mean, jct_p95, queued_mean;
    uint64_t preemptions;
    double preempt_lost_gpu_hours, borrowed_gpu_hours, lent_gpu_hours;
    double held[6];   /* held, computing, redo, ckpt, startup, recovering (GPU-h) */
    double res[6];    /* borrowed and lent cpu core-h, memory GiB-h, pod-h */
} tenant_read_t;

static void check_tenants(hid_t f)
{
    char names[512];
    column_names(f, "tenants", names, sizeof names);
    assert_string_equal(names, "tenant,name,jobs,jobs_completed,gpu_hours,wait_mean,wait_p50,"
                               "wait_p95,wait_p99,jct_mean,jct_p95,queued_mean,preemptions,"
                               "preempt_lost_gpu_hours,borrowed_gpu_hours,lent_gpu_hours,"
                               "held_gpu_hours,computing_gpu_hours,redo_gpu_hours,ckpt_gpu_hours,"
                               "startup_gpu_hours,recovering_gpu_hours,borrowed_cpu_core_hours,"
                               "lent_cpu_core_hours,borrowed_memory_gib_hours,"
                               "lent_memory_gib_hours,borrowed_pod_hours,lent_pod_hours");
    assert_int_equal(table_rows(f, "tenants"), 3);
    size_t nsz;
    assert_int_equal(member_class(f, "tenants", "name", &nsz), H5T_STRING);
    assert_int_equal(nsz, strlen("research-long-name"));
    const size_t off[] = {offsetof(tenant_read_t, tenant),    offsetof(tenant_read_t, name),
                          offsetof(tenant_read_t, jobs),      offsetof(tenant_read_t, jobs_completed),
                          offsetof(tenant_read_t, gpu_hours), offsetof(tenant_read_t, wait_mean),
                          offsetof(tenant_read_t, wait_p50), offsetof(tenant_read_t, wait_p95),
                          offsetof(tenant_read_t, wait_p99), offsetof(tenant_read_t, jct_mean),
                          offsetof(tenant_read_t, jct_p95), offsetof(tenant_read_t, queued_mean),
                          offsetof(tenant_read_t, preemptions),
                          offsetof(tenant_read_t, preempt_lost_gpu_hours),
                          offsetof(tenant_read_t, borrowed_gpu_hours),
                          offsetof(tenant_read_t, lent_gpu_hours),
                          offsetof(tenant_read_t, held[0]), offsetof(tenant_read_t, held[1]),
                          offsetof(tenant_read_t, held[2]), offsetof(tenant_read_t, held[3]),
                          offsetof(tenant_read_t, held[4]), offsetof(tenant_read_t, held[5]),
                          offsetof(tenant_read_t, res[0]), offsetof(tenant_read_t, res[1]),
                          offsetof(tenant_read_t, res[2]), offsetof(tenant_read_t, res[3]),
                          offsetof(tenant_read_t, res[4]), offsetof(tenant_read_t, res[5])};
    const size_t sz[] = {4, 40, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
                         8, 8, 8, 8, 8, 8};
    tenant_read_t rows[3];
    memset(rows, 0x5a, sizeof rows);
    assert_true(H5TBread_table(f, "tenants", sizeof rows[0], off, sz, rows) >= 0);
    const char *want_names[] = {"alpha", "research-long-name", ""};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rows[i].tenant, tenant_rows[i].tenant);
        assert_string_equal(rows[i].name, want_names[i]);
        assert_int_equal(rows[i].jobs, tenant_rows[i].jobs);
        assert_int_equal(rows[i].jobs_completed, tenant_rows[i].jobs_completed);
        assert_true(bits_equal(rows[i].gpu_hours, tenant_rows[i].gpu_hours));
        assert_true(bits_equal(rows[i].wait_mean, tenant_rows[i].wait_mean));
        const fs_tenant_row_t *t = &tenant_rows[i];
        assert_true(bits_equal(rows[i].wait_p50, t->wait_p50));
        assert_true(bits_equal(rows[i].wait_p95, t->wait_p95));
        assert_true(bits_equal(rows[i].wait_p99, t->wait_p99));
        assert_true(bits_equal(rows[i].jct_mean, t->jct_mean));
        assert_true(bits_equal(rows[i].jct_p95, t->jct_p95));
        assert_true(bits_equal(rows[i].queued_mean, t->queued_mean));
        assert_int_equal(rows[i].preemptions, t->preemptions);
        assert_true(bits_equal(rows[i].preempt_lost_gpu_hours, t->preempt_lost_gpu_hours));
        assert_true(bits_equal(rows[i].borrowed_gpu_hours, t->borrowed_gpu_hours));
        assert_true(bits_equal(rows[i].lent_gpu_hours, t->lent_gpu_hours));
        const double want_held[] = {t->held_gpu_hours, t->computing_gpu_hours, t->redo_gpu_hours,
                                    t->ckpt_gpu_hours, t->startup_gpu_hours,
                                    t->recovering_gpu_hours};
        for (int k = 0; k < 6; k++)
            assert_true(bits_equal(rows[i].held[k], want_held[k]));
        const double want_res[] = {t->borrowed_cpu_core_hours, t->lent_cpu_core_hours,
                                   t->borrowed_memory_gib_hours, t->lent_memory_gib_hours,
                                   t->borrowed_pod_hours, t->lent_pod_hours};
        for (int k = 0; k < 6; k++)
            assert_true(bits_equal(rows[i].res[k], want_res[k]));
    }
}

typedef struct pool_read {
    uint32_t index;
    char name[24];
    char gpu[24];
    uint32_t nodes, gpus_per_node;
    char mig[24];
    double power_cap_w;
    uint32_t time_slicing, mps;
    double ambient_c, throttle_w;
} pool_read_t;

static void check_pools(hid_t f)
{
    char names[256];
    column_names(f, "pools", names, sizeof names);
    assert_string_equal(names, "index,name,gpu,nodes,gpus_per_node,mig,power_cap_w,time_slicing,mps,"
                               "ambient_c,throttle_w");
    assert_int_equal(table_rows(f, "pools"), 2);
    const size_t off[] = {offsetof(pool_read_t, index), offsetof(pool_read_t, name),
                          offsetof(pool_read_t, gpu), offsetof(pool_read_t, nodes),
                          offsetof(pool_read_t, gpus_per_node), offsetof(pool_read_t, mig),
                          offsetof(pool_read_t, power_cap_w), offsetof(pool_read_t, time_slicing),
                          offsetof(pool_read_t, mps), offsetof(pool_read_t, ambient_c),
                          offsetof(pool_read_t, throttle_w)};
    const size_t sz[] = {4, 24, 24, 4, 4, 24, 8, 4, 4, 8, 8};
    pool_read_t rows[2];
    memset(rows, 0x5a, sizeof rows);
    assert_true(H5TBread_table(f, "pools", sizeof rows[0], off, sz, rows) >= 0);
    for (uint32_t i = 0; i < 2; i++) {
        assert_int_equal(rows[i].index, i);
        assert_string_equal(rows[i].name, pools[i].name);
        assert_string_equal(rows[i].gpu, pools[i].gpu);
        assert_int_equal(rows[i].nodes, pools[i].nodes);
        assert_int_equal(rows[i].gpus_per_node, pools[i].gpus_per_node);
        assert_string_equal(rows[i].mig, pools[i].mig ? pools[i].mig : "");
        assert_double_equal(rows[i].power_cap_w, pools[i].power_cap_w, 0);
        assert_int_equal(rows[i].time_slicing, pools[i].time_slicing);
        assert_int_equal(rows[i].mps, pools[i].mps);
        assert_double_equal(rows[i].ambient_c, pools[i].ambient_c, 0);
        assert_double_equal(rows[i].throttle_w, pools[i].throttle_w, 0);
    }
}

/* The sweep index reads /summary in one H5Dread (fs_index_read_summary):
 * every column by name, as a double, equal to what was written. */
static void check_index_summary(const char *path)
{
    char **names;
    double *v;
    size_t n;
    fs_error_t err;
    fs_error_clear(&err);
    assert_int_equal(fs_index_read_summary(path, &names, &v, &n, &err), 0);
    assert_int_equal(n, N_SUM);
    fs_summary_t want = summary_value();
    for (size_t i = 0; i < N_SUM; i++) {
        assert_string_equal(names[i], sum_fields[i].name);
        double w;
        if (sum_fields[i].is_u64) {
            uint64_t u;
            memcpy(&u, (char *)&want + sum_fields[i].off, 8);
            w = (double)u;
        } else {
            memcpy(&w, (char *)&want + sum_fields[i].off, 8);
        }
        if (!(v[i] == w || (isnan(v[i]) && isnan(w))))
            fail_msg("index summary %s: %g, want %g", names[i], v[i], w);
    }
    fs_index_free_summary(names, v, n);
}

static void check_file(const char *path, size_t n, size_t m)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    check_root(f, 1);
    check_pools(f);
    check_jobs(f, n);
    check_timeline(f, m);
    check_failures(f, table_rows(f, "failures") ? m : 0);   /* write_run writes m, others none */
    check_summary(f);
    check_tenants(f);
    assert_int_equal(H5Fget_obj_count(f, H5F_OBJ_ALL | H5F_OBJ_LOCAL), 1);   /* the file */
    assert_true(H5Fclose(f) >= 0);
    check_index_summary(path);
}

/* ---- round trips ------------------------------------------------------------ */

static void roundtrip(void **state, size_t n, size_t m)
{
    fixture_t *fx = *state;
    write_run(fx->path, n, m);
    assert_int_equal(dir_entries(fx->dir), 1);   /* the target, no temporary */
    check_file(fx->path, n, m);
}

static void test_roundtrip_0(void **state) { roundtrip(state, 0, 0); }
static void test_roundtrip_1(void **state) { roundtrip(state, 1, 1); }
static void test_roundtrip_200k(void **state)
{
    /* 200,000 jobs = 3 full batches + 3,392 rows; 70,000 samples = 2 batches. */
    roundtrip(state, 200000, 70000);
}

/* Column types, the enum, chunking, filters and the "columns" notes. */
static void test_layout(void **state)
{
    fixture_t *fx = *state;
    write_run(fx->path, 10, 3);
    hid_t f = H5Fopen(fx->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);

    hid_t d = H5Dopen2(f, "jobs", H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    hid_t st = H5Tget_member_type(t, (unsigned)H5Tget_member_index(t, "state"));
    assert_int_equal(H5Tget_class(st), H5T_ENUM);
    assert_int_equal(H5Tget_nmembers(st), 6);
    hid_t base = H5Tget_super(st);
    assert_true(H5Tequal(base, H5T_STD_I32LE) > 0);
    H5Tclose(base);
    const char *want[] = {"completed", "failed", "running", "queued", "rejected", "withdrawn"};
    for (int32_t v = 0; v < 6; v++) {
        char nm[32];
        assert_true(H5Tenum_nameof(st, &v, nm, sizeof nm) >= 0);
        assert_string_equal(nm, want[v]);
    }
    H5Tclose(st);
    struct {
        const char *col;
        hid_t type;
    } types[] = {{"id", H5T_STD_U64LE},      {"tenant", H5T_STD_I32LE},
                 {"pool", H5T_STD_I32LE},    {"gpus", H5T_STD_U32LE},
                 {"gpu_milli", H5T_STD_U32LE}, {"nodes", H5T_STD_U32LE},
                 {"restarts", H5T_STD_U32LE}, {"submit", H5T_IEEE_F64LE},
                 {"lost_gpu_s", H5T_IEEE_F64LE}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        hid_t mt = H5Tget_member_type(t, (unsigned)H5Tget_member_index(t, types[i].col));
        assert_true(H5Tequal(mt, types[i].type) > 0);
        H5Tclose(mt);
    }
    assert_int_equal(H5Tget_size(t), 8 + 6 * 4 + 6 * 8 + 4 + 4 * 8 + 8 + 4 + 8 + 8 + 3 * 8);   /* packed */
    H5Tclose(t);

    hid_t dcpl = H5Dget_create_plist(d);
    hsize_t chunk[1];
    assert_int_equal(H5Pget_layout(dcpl), H5D_CHUNKED);
    assert_int_equal(H5Pget_chunk(dcpl, 1, chunk), 1);
    assert_int_equal(chunk[0], 64);     /* 10 rows: one chunk of 64 rows, not 16,384 */
    unsigned flags, cd[4];
    size_t ncd = 4;
    assert_true(H5Pget_filter_by_id2(dcpl, H5Z_FILTER_DEFLATE, &flags, &ncd, cd, 0, NULL,
                                     NULL) >= 0);
    assert_int_equal(ncd, 1);
    assert_int_equal(cd[0], 1);
    H5Pclose(dcpl);
    H5Dclose(d);

    char *cols = attr_string(f, "jobs", "columns");
    assert_string_equal(cols, "id:-; tenant:-; pool:-; gpus:GPU; gpu_milli:milliGPU; "
                              "nodes:node; restarts:count; submit:s; start:s; end:s; wait:s; "
                              "run:s; lost_gpu_s:GPU-s; state:job_state; ckpt_s:s; "
                              "recovery_s:s; ettr:fraction; goodput:fraction; queued_s:s; "
                              "preemptions:count; preempt_lost_gpu_s:GPU-s; startup_s:s; "
                              "sched_goodput:fraction; program_goodput:fraction; rec_start:s");
    free(cols);
    cols = attr_string(f, "timeline", "columns");
    assert_string_equal(cols, "time:s; gpus_total:GPU; gpus_up:GPU; gpus_busy:GPU; "
                              "jobs_running:job; jobs_queued:job; gpus_queued:GPU; "
                              "nodes_down:node; repair_queue:count; nodes_provisioning:node; "
                              "nodes_autoscaled:node; gpus_serving:GPU; replicas:replica; "
                              "mig_instances:instance; mig_busy:instance; mig_serving:instance; gpu_s_busy:GPU-s; "
                              "gpu_s_down:GPU-s; gpu_s_waiting:GPU-s; gpu_s_idle:GPU-s; "
                              "gpu_s_allocated:GPU-s; gpu_s_share_idle:GPU-s; "
                              "gpu_s_held:GPU-s; gpu_s_computing:GPU-s; gpu_s_ckpt:GPU-s; "
                              "gpu_s_startup:GPU-s; gpu_s_recovering:GPU-s; gpu_s_serving:GPU-s; "
                              "gpu_s_frag:GPU-s; gpu_s_quota:GPU-s; gpu_s_reserved:GPU-s; "
                              "gpu_s_blocked:GPU-s");
    free(cols);
    cols = attr_string(f, "failures", "columns");
    assert_string_equal(cols, "time:s; component:component; unit:-; nodes:node; cause:-; "
                              "repair:repair; repair_time:s; jobs_hit:job; xid:-");
    free(cols);
    const char *tables[] = {"summary", "tenants", "pools"};
    for (int i = 0; i < 3; i++) {
        cols = attr_string(f, tables[i], "columns");
        assert_non_null(strstr(cols, ":"));
        free(cols);
        char *cls = attr_string(f, tables[i], "CLASS");
        assert_string_equal(cls, "TABLE");
        free(cls);
    }
    /* the H5TB attributes are CLASS, VERSION and TITLE; the per-column
     * FIELD_i_NAME ones are not written (a third of a small run's
     * instructions, read by no reader): H5TB takes the names from the
     * compound type */
    const char *streamed[] = {"jobs", "timeline", "failures", "summary"};
    for (int i = 0; i < 4; i++) {
        char *v = attr_string(f, streamed[i], "VERSION");
        assert_string_equal(v, "3.0");
        free(v);
        v = attr_string(f, streamed[i], "TITLE");
        assert_true(strlen(v) > 0);
        free(v);
        assert_int_equal(H5Aexists_by_name(f, streamed[i], "FIELD_0_NAME", H5P_DEFAULT), 0);
        hsize_t nf = 0, nr = 0;
        assert_true(H5TBget_table_info(f, streamed[i], &nf, &nr) >= 0);
        assert_true(nf > 0);
        char **names = calloc((size_t)nf, sizeof *names);
        for (hsize_t k = 0; k < nf; k++)
            names[k] = calloc(1, 256);
        assert_true(H5TBget_field_info(f, streamed[i], names, NULL, NULL, NULL) >= 0);
        char *note = attr_string(f, streamed[i], "columns");
        size_t at = 0;   /* the names in "columns", in order */
        for (hsize_t k = 0; k < nf; k++) {
            size_t len = strlen(names[k]);
            assert_memory_equal(note + at, names[k], len);
            assert_int_equal(note[at + len], ':');
            const char *next = strstr(note + at, "; ");
            at = next ? (size_t)(next - note) + 2 : strlen(note);
            free(names[k]);
        }
        assert_int_equal(at, strlen(note));
        free(note);
        free(names);
    }
    cols = attr_string(f, "summary", "columns");
    assert_non_null(strstr(cols, "wait_p95:s; "));
    assert_non_null(strstr(cols, "utilization:fraction; "));
    assert_non_null(strstr(cols, "arrival_rate:1/s; "));
    free(cols);
    assert_true(H5Fclose(f) >= 0);
}

/* ---- crash safety -------------------------------------------------------- */

static void test_complete_flag(void **state)
{
    fixture_t *fx = *state;
    fs_results_meta_t md = meta();
    md.scenario_path = "/some/where.yaml";
    md.scenario_source = NULL;
    fs_results_t *r;
    fs_error_t err;
    assert_int_equal(fs_results_open(fx->path, &md, &r, &err), 0);
    for (size_t i = 0; i < 100; i++) {
        fs_job_row_t row = job_row(i);
        assert_int_equal(fs_results_add_job(r, &row, &err), 0);
    }
    char *tmp = tmp_name(fx->path);
    assert_false(exists(fx->path));
    assert_true(exists(tmp));

    /* While open: a valid file saying complete = 0, with empty tables. */
    hid_t f = H5Fopen(tmp, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_int_equal(attr_int(f, "complete", H5T_INTEGER, 4), 0);
    char *s = attr_string(f, ".", "scenario_path");
    assert_string_equal(s, "/some/where.yaml");
    free(s);
    s = attr_string(f, ".", "scenario_source");
    assert_string_equal(s, "");
    free(s);
    assert_int_equal(table_rows(f, "jobs"), 0);
    assert_int_equal(table_rows(f, "pools"), 2);
    assert_true(H5Fclose(f) >= 0);

    fs_summary_t sum = summary_value();
    assert_int_equal(fs_results_commit(r, &sum, NULL, 0, NULL, 0, &err), 0);
    assert_true(exists(fx->path));
    assert_false(exists(tmp));
    assert_int_equal(dir_entries(fx->dir), 1);
    f = H5Fopen(fx->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_int_equal(attr_int(f, "complete", H5T_INTEGER, 4), 1);
    check_jobs(f, 100);
    assert_int_equal(table_rows(f, "tenants"), 0);
    assert_int_equal(table_rows(f, "timeline"), 0);
    assert_true(H5Fclose(f) >= 0);
    free(tmp);
}

static void test_replaces_existing_target_only_at_commit(void **state)
{
    fixture_t *fx = *state;
    assert_int_equal(fs_test_write(fx->path, "old results"), 0);
    fs_results_meta_t md = meta();
    fs_results_t *r;
    fs_error_t err;
    assert_int_equal(fs_results_open(fx->path, &md, &r, &err), 0);
    size_t len;
    char *old = fs_test_read(fx->path, &len);
    assert_string_equal(old, "old results");   /* untouched while running */
    free(old);
    fs_results_abort(r);
    old = fs_test_read(fx->path, &len);
    assert_string_equal(old, "old results");   /* and after an abort */
    free(old);
    assert_int_equal(dir_entries(fx->dir), 1);
    write_run(fx->path, 5, 5);
    check_file(fx->path, 5, 5);
}

static void test_abort(void **state)
{
    fixture_t *fx = *state;
    fs_results_meta_t md = meta();
    fs_results_t *r;
    fs_error_t err;
    assert_int_equal(fs_results_open(fx->path, &md, &r, &err), 0);
    for (size_t i = 0; i < 70000; i++) {   /* past one batch: data in the file */
        fs_job_row_t row = job_row(i);
        assert_int_equal(fs_results_add_job(r, &row, &err), 0);
    }
    fs_results_abort(r);
    assert_int_equal(dir_entries(fx->dir), 0);
    fs_results_abort(NULL);
}

/* ---- errors ------------------------------------------------------------------ */

static void test_unwritable_path(void **state)
{
    fixture_t *fx = *state;
    /* A regular file used as a directory: fails even for root. */
    char *file = fs_test_path(fx->dir, "plain");
    assert_int_equal(fs_test_write(file, "x"), 0);
    char *bad = fs_test_path(file, "run.h5");
    fs_results_meta_t md = meta();
    fs_results_t *r = (fs_results_t *)&md;
    fs_error_t err;
    fs_error_clear(&err);
    assert_int_equal(fs_results_open(bad, &md, &r, &err), FS_EIO);
    assert_int_equal(err.code, FS_EIO);
    assert_null(r);
    assert_non_null(strstr(err.msg, bad));
    assert_int_equal(dir_entries(fx->dir), 1);

    /* A directory that does not exist. */
    char *missing = fs_test_path(fx->dir, "no/such/dir/run.h5");
    assert_int_equal(fs_results_open(missing, &md, &r, &err), FS_EIO);
    assert_non_null(strstr(err.msg, missing));

    /* Bad arguments. */
    assert_int_equal(fs_results_open("", &md, &r, &err), FS_EINVAL);
    assert_int_equal(fs_results_open(fx->path, NULL, &r, &err), FS_EINVAL);
    md.pools = NULL;
    assert_int_equal(fs_results_open(fx->path, &md, &r, &err), FS_EINVAL);
    assert_int_equal(dir_entries(fx->dir), 1);
    free(missing);
    free(bad);
    free(file);
}

static void test_rename_failure(void **state)
{
    fixture_t *fx = *state;
    /* A directory at the target is refused at open (sim/fs_out.h: rename
     * only over a regular file or nothing), before anything is written. */
    assert_int_equal(mkdir(fx->path, 0700), 0);
    char *inner = fs_test_path(fx->path, "keep");
    assert_int_equal(fs_test_write(inner, "x"), 0);
    fs_results_meta_t md = meta();
    fs_results_t *r;
    fs_error_t err;
    assert_int_equal(fs_results_open(fx->path, &md, &r, &err), FS_EUSAGE);
    assert_non_null(strstr(err.msg, "a directory"));
    assert_int_equal(dir_entries(fx->dir), 1);
    /* The target becomes a non-empty directory after open: rename(2) must
     * fail at commit. */
    fs_test_rmtree(fx->path);
    assert_int_equal(fs_results_open(fx->path, &md, &r, &err), 0);
    assert_int_equal(mkdir(fx->path, 0700), 0);
    assert_int_equal(fs_test_write(inner, "x"), 0);
    fs_summary_t sum = summary_value();
    assert_int_equal(fs_results_commit(r, &sum, NULL, 0, NULL, 0, &err), FS_EIO);
    assert_non_null(strstr(err.msg, fx->path));
    assert_non_null(strstr(err.msg, "renam"));
    assert_int_equal(dir_entries(fx->dir), 1);   /* the directory only; tmp removed */
    fs_test_rmtree(fx->path);
    free(inner);
}

static void test_bad_rows(void **state)
{
    fixture_t *fx = *state;
    fs_results_meta_t md = meta();
    fs_results_t *r;
    fs_error_t err;
    assert_int_equal(fs_results_open(fx->path, &md, &r, &err), 0);
    fs_job_row_t row = job_row(1);
    row.state = 6;
    assert_int_equal(fs_results_add_job(r, &row, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "state 6"));
    row.state = -1;
    assert_int_equal(fs_results_add_job(r, &row, &err), FS_EINVAL);
    /* Commit without a summary: an error, and r is freed. */
    assert_int_equal(fs_results_commit(r, NULL, NULL, 0, NULL, 0, &err), FS_EINVAL);
    assert_int_equal(dir_entries(fx->dir), 0);
}

/*
 * I/O faults: a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes
 * HDF5's writes fail with EFBIG.  Whether the failure surfaces in a batch
 * flush during add or at commit, it is FS_EIO naming the file, the step and
 * the system's reason, and no file is left behind.
 *
 * The writer runs in a child process that leaves with _exit: after a write
 * failure that persists, HDF5 1.10 cannot close the file and crashes in its
 * exit handler (HDFFV-11052, fixed upstream in 1.14), which would otherwise
 * take this test program down.
 */
typedef struct io_result {
    int rc;
    int stage;    /* 1: add, 2: commit */
    char msg[FS_ERROR_MSG_MAX];
} io_result_t;

static void io_fault_child(const char *path, int commit_only, int fd)
{
    io_result_t res;
    memset(&res, 0, sizeof res);
    signal(SIGXFSZ, SIG_IGN);
    fs_results_meta_t md = meta();
    fs_results_t *r;
    fs_error_t err;
    fs_error_clear(&err);
    struct rlimit lim;
    getrlimit(RLIMIT_FSIZE, &lim);
    res.rc = fs_results_open(path, &md, &r, &err);
    if (res.rc == 0 && !commit_only) {
        lim.rlim_cur = 64 * 1024;
        setrlimit(RLIMIT_FSIZE, &lim);
    }
    size_t n = commit_only ? 1000 : 3 * FS_RESULTS_BATCH;
    for (size_t i = 0; i < n && res.rc == 0; i++) {
        fs_job_row_t row = job_row(i);
        res.rc = fs_results_add_job(r, &row, &err);
        res.stage = 1;
    }
    if (res.rc != 0 && res.stage == 1) {
        fs_results_abort(r);
    } else if (res.rc == 0) {
        if (commit_only) {
            char *tmp = tmp_name(path);
            struct stat sb;
            stat(tmp, &sb);
            free(tmp);
            lim.rlim_cur = (rlim_t)sb.st_size;   /* not one byte more */
            setrlimit(RLIMIT_FSIZE, &lim);
        }
        fs_summary_t sum = summary_value();
        res.stage = 2;
        res.rc = fs_results_commit(r, &sum, tenant_rows, 3, tenant_names, 3, &err);
    }
    snprintf(res.msg, sizeof res.msg, "%s", err.msg);
    ssize_t w = write(fd, &res, sizeof res);
    _exit(w == (ssize_t)sizeof res ? 0 : 3);
}

static io_result_t run_io_fault(const char *path, int commit_only)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        io_fault_child(path, commit_only, fds[1]);
    }
    close(fds[1]);
    io_result_t res;
    memset(&res, 0, sizeof res);
    size_t got = 0;
    while (got < sizeof res) {
        ssize_t k = read(fds[0], (char *)&res + got, sizeof res - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(got, sizeof res);
    return res;
}

static void test_io_faults(void **state)
{
    fixture_t *fx = *state;

    /* The limit hits a batch flush (in an add, or at the latest in commit). */
    io_result_t res = run_io_fault(fx->path, 0);
    assert_int_equal(res.rc, FS_EIO);
    assert_non_null(strstr(res.msg, fx->path));
    assert_non_null(strstr(res.msg, "appending"));
    assert_non_null(strstr(res.msg, "/jobs"));
    assert_non_null(strstr(res.msg, "File too large"));   /* HDF5's detail, errno 27 */
    assert_null(strchr(res.msg, '\n'));
    assert_int_equal(dir_entries(fx->dir), 0);

    /* The limit hits commit itself. */
    res = run_io_fault(fx->path, 1);
    assert_int_equal(res.stage, 2);
    assert_int_equal(res.rc, FS_EIO);
    assert_non_null(strstr(res.msg, fx->path));
    assert_non_null(strstr(res.msg, "File too large"));
    assert_int_equal(dir_entries(fx->dir), 0);

    /* And this process, untouched, still writes good files. */
    write_run(fx->path, 10, 10);
    check_file(fx->path, 10, 10);
}

/* ---- fault injection ------------------------------------------------------- */

static void test_alloc_faults_open(void **state)
{
    fixture_t *fx = *state;
    fs_results_meta_t md = meta();
    int failures = 0;
    for (uint64_t k = 1;; k++) {
        fs_results_t *r = NULL;
        fs_error_t err;
        fs_alloc_fail_after(k);
        int rc = fs_results_open(fx->path, &md, &r, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            fs_results_abort(r);
            break;
        }
        failures++;
        assert_int_equal(rc, FS_ENOMEM);
        assert_null(r);
        assert_non_null(strstr(err.msg, fx->path));
        assert_int_equal(dir_entries(fx->dir), 0);
        assert_int_equal(fs_alloc_live(), fx->live0);
    }
    assert_true(failures >= 3);   /* handle, path, temporary name, pool rows */
    assert_int_equal(dir_entries(fx->dir), 0);
}

/* A failed add leaves the writer as it was: retrying the row after the
 * fault gives a file equal to a run without faults. */
static void test_alloc_faults_add(void **state)
{
    fixture_t *fx = *state;
    const size_t n = 70000, m = 300;
    for (uint64_t k = 1; k <= 14; k += 1) {
        fs_results_meta_t md = meta();
        fs_results_t *r;
        fs_error_t err;
        assert_int_equal(fs_results_open(fx->path, &md, &r, &err), 0);
        int failed = 0;
        fs_alloc_fail_after(k);
        for (size_t i = 0; i < n; i++) {
            fs_job_row_t row = job_row(i);
            int rc = fs_results_add_job(r, &row, &err);
            if (rc != 0) {
                assert_int_equal(rc, FS_ENOMEM);
                failed = 1;
                fs_alloc_fail_after(0);
                assert_int_equal(fs_results_add_job(r, &row, &err), 0);
            }
        }
        for (size_t i = 0; i < m; i++) {
            fs_sample_row_t s = sample_row(i);
            int rc = fs_results_add_sample(r, &s, &err);
            if (rc != 0) {
                assert_int_equal(rc, FS_ENOMEM);
                failed = 1;
                fs_alloc_fail_after(0);
                assert_int_equal(fs_results_add_sample(r, &s, &err), 0);
            }
        }
        fs_alloc_fail_after(0);
        assert_true(failed);
        if (k % 5 == 0) {   /* sometimes give up instead */
            fs_results_abort(r);
            assert_int_equal(dir_entries(fx->dir), 0);
            continue;
        }
        fs_summary_t sum = summary_value();
        assert_int_equal(fs_results_commit(r, &sum, tenant_rows, 3, tenant_names, 3, &err), 0);
        check_file(fx->path, n, m);
        assert_int_equal(unlink(fx->path), 0);
        assert_int_equal(fs_alloc_live(), fx->live0);
    }
}

static void test_alloc_faults_commit(void **state)
{
    fixture_t *fx = *state;
    int failures = 0;
    for (uint64_t k = 1;; k++) {
        fs_results_meta_t md = meta();
        fs_results_t *r;
        fs_error_t err;
        assert_int_equal(fs_results_open(fx->path, &md, &r, &err), 0);
        for (size_t i = 0; i < 50; i++) {
            fs_job_row_t row = job_row(i);
            assert_int_equal(fs_results_add_job(r, &row, &err), 0);
        }
        fs_summary_t sum = summary_value();
        fs_alloc_fail_after(k);
        int rc = fs_results_commit(r, &sum, tenant_rows, 3, tenant_names, 3, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            check_file(fx->path, 50, 0);
            break;
        }
        failures++;
        assert_int_equal(rc, FS_ENOMEM);
        /* the buffered rows are compressed (outside the HDF5 lock) first;
         * the small tables' rows are packed before their write */
        assert_true(strstr(err.msg, "tenants") || strstr(err.msg, "compressing /jobs") ||
                    strstr(err.msg, "out of memory appending"));
        assert_int_equal(dir_entries(fx->dir), 0);   /* no half file anywhere */
        assert_int_equal(fs_alloc_live(), fx->live0);
    }
    assert_true(failures >= 1);
}

/* ---- two writers on two threads, one HDF5 lock ----------------------------- */

/* The lock of a sweep (fs_run_opts_t.io_lock): a mutex, plus checks that
 * every take is followed by a release and that nobody nests it. */
typedef struct tlock {
    pthread_mutex_t mu;
    int held;       /* under mu */
    long takes;     /* under mu */
    int nested;
} tlock_t;

static void tlock_fn(void *ud, int lock)
{
    tlock_t *l = ud;
    if (lock) {
        pthread_mutex_lock(&l->mu);
        if (l->held)
            l->nested = 1;
        l->held = 1;
        l->takes++;
    } else {
        if (!l->held)
            l->nested = 1;
        l->held = 0;
        pthread_mutex_unlock(&l->mu);
    }
}

typedef struct twriter {
    const char *path;
    tlock_t *lock;
    int rc;
} twriter_t;

/* 150,000 jobs and 70,000 samples (full chunks and a partial last one). */
static void *twrite(void *ud)
{
    twriter_t *w = ud;
    fs_results_meta_t md = meta();
    md.io_lock = tlock_fn;
    md.io_lock_ud = w->lock;
    fs_results_t *r = NULL;
    fs_error_t err;
    w->rc = fs_results_open(w->path, &md, &r, &err);
    for (size_t i = 0; i < 150000 && w->rc == 0; i++) {
        fs_job_row_t row = job_row(i);
        w->rc = fs_results_add_job(r, &row, &err);
    }
    for (size_t i = 0; i < 70000 && w->rc == 0; i++) {
        fs_sample_row_t s = sample_row(i);
        w->rc = fs_results_add_sample(r, &s, &err);
    }
    for (size_t i = 0; i < 70000 && w->rc == 0; i++) {   /* as write_run */
        fs_failure_row_t fr = failure_row(i);
        w->rc = fs_results_add_failure(r, &fr, &err);
    }
    fs_summary_t sum = summary_value();
    if (w->rc == 0)
        w->rc = fs_results_commit(r, &sum, tenant_rows, 3, tenant_names, 3, &err);
    else if (r)
        fs_results_abort(r);
    return NULL;
}

/* Chunks are compressed outside the lock and written under it: two threads
 * writing at once produce files that read back exactly and are byte for
 * byte the file one thread writes without any lock; the lock is taken by
 * the writer itself, never nested, always released. */
/* Files written with threads at work: byte for byte the file one thread
 * writes alone, except that a deflate stream may differ.
 * Why: in about one run in twenty under load (natively on this CI's
 * AMD EPYC VM, and under valgrind), one chunk compressed while another
 * thread of the process was at work came out of igzip as a different
 * valid zlib stream of the same bytes; the same chunk compressed again at
 * once, in the same thread from the same buffer, gave the usual stream.
 * igzip alone never does it: the same chunk, with its state, level buffer,
 * output buffer, the memory around its input, the stack and every vector
 * and mask register filled with other bytes, in one thread or four at
 * once beside a thread that maps, unmaps, locks and writes, always gives
 * one stream (docs/robustness.md).  So a differing file must still have
 * the same objects, the same chunks at the same places of each dataset
 * with the same filters, and every chunk the same bytes once inflated;
 * only the compressed streams (and so the chunks' file addresses) may
 * differ.  Returns the number of chunks whose stream differed. */
static size_t chunks_differ(hid_t fa, hid_t fb, const char *name)
{
    hid_t da = H5Dopen2(fa, name, H5P_DEFAULT), db = H5Dopen2(fb, name, H5P_DEFAULT);
    assert_true(da >= 0 && db >= 0);
    hid_t ta = H5Dget_type(da), tb = H5Dget_type(db);
    assert_true(H5Tequal(ta, tb) > 0);
    hid_t sa = H5Dget_space(da), sb = H5Dget_space(db);
    hsize_t na = 0, nb = 0, dims_a[1] = {0}, dims_b[1] = {0};
    assert_int_equal(H5Sget_simple_extent_dims(sa, dims_a, NULL), 1);
    assert_int_equal(H5Sget_simple_extent_dims(sb, dims_b, NULL), 1);
    assert_true(dims_a[0] == dims_b[0]);
    assert_true(H5Dget_num_chunks(da, sa, &na) >= 0 && H5Dget_num_chunks(db, sb, &nb) >= 0);
    assert_true(na == nb);
    hid_t pa = H5Dget_create_plist(da);
    hsize_t cdim[1];
    assert_int_equal(H5Pget_chunk(pa, 1, cdim), 1);
    size_t raw = (size_t)cdim[0] * H5Tget_size(ta), differ = 0;
    unsigned char *ra = malloc(raw), *rb = malloc(raw);
    assert_non_null(ra);
    assert_non_null(rb);
    for (hsize_t i = 0; i < na; i++) {
        hsize_t oa[1], ob[1], size_a, size_b;
        haddr_t addr_a, addr_b;
        unsigned fm_a, fm_b;
        assert_true(H5Dget_chunk_info(da, sa, i, oa, &fm_a, &addr_a, &size_a) >= 0);
        assert_true(H5Dget_chunk_info(db, sb, i, ob, &fm_b, &addr_b, &size_b) >= 0);
        assert_true(oa[0] == ob[0] && fm_a == fm_b);
        unsigned char *za = malloc(size_a), *zb = malloc(size_b);
        assert_non_null(za);
        assert_non_null(zb);
        uint32_t f1 = 0, f2 = 0;
        assert_true(H5Dread_chunk(da, H5P_DEFAULT, oa, &f1, za) >= 0);
        assert_true(H5Dread_chunk(db, H5P_DEFAULT, ob, &f2, zb) >= 0);
        if (size_a != size_b || memcmp(za, zb, size_a) != 0) {
            uLongf la = raw, lb = raw;
            assert_int_equal(uncompress(ra, &la, za, size_a), Z_OK);
            assert_int_equal(uncompress(rb, &lb, zb, size_b), Z_OK);
            if (la != lb || memcmp(ra, rb, la) != 0)
                fail_msg("/%s: chunk at row %llu holds other bytes", name, (unsigned long long)oa[0]);
            differ++;
        }
        free(za);
        free(zb);
    }
    free(ra);
    free(rb);
    H5Pclose(pa);
    H5Sclose(sa);
    H5Sclose(sb);
    H5Tclose(ta);
    H5Tclose(tb);
    H5Dclose(da);
    H5Dclose(db);
    return differ;
}

static herr_t list_name(hid_t g, const char *name, const H5L_info_t *info, void *ud)
{
    (void)g;
    (void)info;
    char *names = ud;
    strcat(names, name);
    strcat(names, "\n");
    return 0;
}

/* a (written with threads at work) against b: see chunks_differ. */
static void assert_same_file(const char *a, const char *b, const char *what)
{
    size_t na, nb;
    char *da = fs_test_read(a, &na), *db = fs_test_read(b, &nb);
    assert_non_null(da);
    assert_non_null(db);
    int same = na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    if (same)
        return;
    hid_t fa = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(fa >= 0 && fb >= 0);
    char la[4096] = "", lb[4096] = "";
    assert_true(H5Literate(fa, H5_INDEX_NAME, H5_ITER_INC, NULL, list_name, la) >= 0);
    assert_true(H5Literate(fb, H5_INDEX_NAME, H5_ITER_INC, NULL, list_name, lb) >= 0);
    assert_string_equal(la, lb);
    size_t differ = 0;
    for (char *s = la, *e; (e = strchr(s, '\n')) != NULL; s = e + 1) {
        *e = '\0';
        differ += chunks_differ(fa, fb, s);
    }
    H5Fclose(fa);
    H5Fclose(fb);
    if (differ == 0)
        fail_msg("%s: the files differ, and not in a chunk's stream", what);
    fprintf(stderr, "note: %s: %zu chunk(s) compressed to another valid stream of the same bytes\n",
            what, differ);
}

static void test_threads_one_lock(void **state)
{
    fixture_t *fx = *state;
    char *a = fs_test_path(fx->dir, "a.h5"), *b = fs_test_path(fx->dir, "b.h5");
    tlock_t l = {.held = 0};
    pthread_mutex_init(&l.mu, NULL);
    twriter_t wa = {a, &l, -1}, wb = {b, &l, -1};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, twrite, &wa), 0);
    assert_int_equal(pthread_create(&tb, NULL, twrite, &wb), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_mutex_destroy(&l.mu);
    assert_int_equal(wa.rc, 0);
    assert_int_equal(wb.rc, 0);
    assert_false(l.nested);
    assert_false(l.held);
    /* open, 3 + 2 flushes of /jobs and /timeline, commit: per file */
    assert_true(l.takes >= 2 * 7);
    check_file(a, 150000, 70000);
    write_run(fx->path, 150000, 70000);
    check_file(b, 150000, 70000);
    assert_same_file(a, fx->path, "two threads, file a");
    assert_same_file(b, fx->path, "two threads, file b");
    free(a);
    free(b);
}

/* ---- the writer thread ------------------------------------------------------ */

/* With the writer thread the file is byte for byte the one written without
 * it, at sizes around the chunk (4,096 rows) and batch (65,536) edges. */
static void test_writer_same_bytes(void **state)
{
    fixture_t *fx = *state;
    char *a = fs_test_path(fx->dir, "a.h5");
    static const size_t sizes[][2] = {{140000, 70000}, {65536, 16384}, {65537, 16385},
                                      {16384 * 5 + 1, 1}, {16383, 0}, {4097, 4095},
                                      {0, 0}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i][0], m = sizes[i][1];
        use_writer = 0;
        write_run(fx->path, n, m);
        use_writer = 1;
        write_run(a, n, m);
        use_writer = 0;
        check_file(a, n, m);
        char what[96];
        snprintf(what, sizeof what, "%zu jobs, %zu samples through the writer thread", n, m);
        assert_same_file(a, fx->path, what);
        assert_int_equal(unlink(a), 0);
        assert_int_equal(unlink(fx->path), 0);
        assert_int_equal(fs_alloc_live(), fx->live0);
    }
    free(a);
}

/* A file-size limit hit by the thread's write surfaces at a later add or
 * at the commit, with the file named; nothing is left. */
static void test_writer_io_limit(void **state)
{
    fixture_t *fx = *state;
    use_writer = 1;
    io_result_t res = run_io_fault(fx->path, 0);
    use_writer = 0;
    assert_int_equal(res.rc, FS_EIO);
    assert_non_null(strstr(res.msg, fx->path));
    assert_non_null(strstr(res.msg, "appending"));
    assert_non_null(strstr(res.msg, "/jobs"));
    assert_non_null(strstr(res.msg, "File too large"));
    assert_int_equal(dir_entries(fx->dir), 0);
}

/* One run of n jobs through the writer thread with the k-th HDF5 call
 * from now failing (k = 0: none); *calls_open and *calls (may be NULL):
 * the calls made by the open, by the whole run. */
static int writer_fault_run(const char *path, size_t n, uint64_t k, uint64_t *calls_open,
                            uint64_t *calls, fs_error_t *err)
{
    use_writer = 1;
    fs_results_meta_t md = meta();
    use_writer = 0;
    fs_results_t *r = NULL;
    fs_error_clear(err);
    uint64_t c0 = fs_io_count();
    fs_io_fail_after(k);
    int rc = fs_results_open(path, &md, &r, err);
    if (calls_open)
        *calls_open = fs_io_count() - c0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        fs_job_row_t row = job_row(i);
        rc = fs_results_add_job(r, &row, err);
    }
    if (rc == 0) {
        fs_summary_t sum = summary_value();
        rc = fs_results_commit(r, &sum, tenant_rows, 3, tenant_names, 3, err);
    } else if (r) {
        fs_results_abort(r);
    }
    fs_io_fail_after(0);
    if (calls)
        *calls = fs_io_count() - c0;
    return rc;
}

/* Each HDF5 call after the open failing in turn: the thread's write of the
 * first batch of /jobs, then the commit's, which starts with the chunks the
 * thread compressed and did not write.  An I/O error naming the file from
 * an add or the commit; no file, no temporary, nothing leaked.  (The
 * open's calls fail the same way with or without the thread: the tests
 * above.) */
static void test_writer_io_faults(void **state)
{
    fixture_t *fx = *state;
    const size_t n = FS_RESULTS_BATCH + 1;  /* one batch written by the thread, a row at commit */
    fs_error_t err;
    uint64_t c_open, c_all;
    assert_int_equal(writer_fault_run(fx->path, n, 0, &c_open, &c_all, &err), 0);
    check_file(fx->path, n, 0);
    assert_int_equal(unlink(fx->path), 0);
    assert_true(c_all > c_open + 16);
    for (uint64_t k = c_open + 1; k <= c_open + 16; k++) {
        int rc = writer_fault_run(fx->path, n, k, NULL, NULL, &err);
        assert_int_equal(fs_alloc_live(), fx->live0);
        if (rc != FS_EIO || !strstr(err.msg, fx->path))
            fail_msg("N = %llu: %s: %s", (unsigned long long)k, fs_error_name(rc), err.msg);
        assert_int_equal(dir_entries(fx->dir), 0);
    }
}

/* Allocations failing in turn, on either thread: the caller's own (a
 * buffer for the next rows) leave the writer as it was and the add can be
 * retried; the thread's (a compressed chunk) are kept and returned from
 * then on.  Either way FS_ENOMEM, and nothing left or leaked after an
 * abort; a file that commits reads back whole. */
static void test_writer_alloc_faults(void **state)
{
    fixture_t *fx = *state;
    const size_t n = FS_RESULTS_BATCH + 1;
    int retried = 0, sticky = 0;
    use_writer = 1;
    for (uint64_t k = 1; k <= 24; k++) {
        fs_results_meta_t md = meta();
        fs_results_t *r;
        fs_error_t err;
        assert_int_equal(fs_results_open(fx->path, &md, &r, &err), 0);
        fs_alloc_fail_after(k);
        int rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            fs_job_row_t row = job_row(i);
            if ((rc = fs_results_add_job(r, &row, &err)) == 0)
                continue;
            assert_int_equal(rc, FS_ENOMEM);
            assert_non_null(strstr(err.msg, fx->path));
            fs_alloc_fail_after(0);
            rc = fs_results_add_job(r, &row, &err);
            if (rc == 0)
                retried++;
            else
                assert_int_equal(rc, FS_ENOMEM);
        }
        fs_alloc_fail_after(0);
        if (rc == 0) {
            fs_summary_t sum = summary_value();
            rc = fs_results_commit(r, &sum, tenant_rows, 3, tenant_names, 3, &err);
            if (rc == 0) {
                use_writer = 0;
                check_file(fx->path, n, 0);
                use_writer = 1;
                assert_int_equal(unlink(fx->path), 0);
            }
        } else {
            sticky++;
            fs_results_abort(r);
        }
        if (rc != 0)
            assert_int_equal(rc, FS_ENOMEM);
        assert_int_equal(dir_entries(fx->dir), 0);
        assert_int_equal(fs_alloc_live(), fx->live0);
    }
    use_writer = 0;
    assert_true(retried + sticky > 0);
}

/* Aborting with chunks in flight: nothing left, nothing leaked. */
static void test_writer_abort(void **state)
{
    fixture_t *fx = *state;
    use_writer = 1;
    fs_results_meta_t md = meta();
    use_writer = 0;
    fs_results_t *r;
    fs_error_t err;
    assert_int_equal(fs_results_open(fx->path, &md, &r, &err), 0);
    for (size_t i = 0; i < 150000; i++) {
        fs_job_row_t row = job_row(i);
        assert_int_equal(fs_results_add_job(r, &row, &err), 0);
    }
    fs_results_abort(r);
    assert_int_equal(dir_entries(fx->dir), 0);
    assert_int_equal(fs_alloc_live(), fx->live0);
}

/* ---- h5dump ------------------------------------------------------------------ */

static void test_h5dump(void **state)
{
    fixture_t *fx = *state;
    if (system("command -v h5dump >/dev/null 2>&1") != 0)
        skip();
    write_run(fx->path, 7, 2);
    char *out = fs_test_path(fx->dir, "dump.txt");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "h5dump -H '%s' > '%s' 2>&1", fx->path, out);
    assert_int_equal(system(cmd), 0);
    size_t len;
    char *text = fs_test_read(out, &len);
    assert_non_null(text);
    const char *want[] = {"DATASET \"jobs\"", "DATASET \"timeline\"", "DATASET \"summary\"",
                          "DATASET \"tenants\"", "DATASET \"pools\"", "H5T_ENUM",
                          "\"rejected\"", "ATTRIBUTE \"complete\"", "ATTRIBUTE \"scenario\"",
                          "ATTRIBUTE \"columns\"", "SIMPLE { ( 7 ) / ( H5S_UNLIMITED ) }"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(text, want[i]))
            fail_msg("h5dump -H output lacks %s:\n%s", want[i], text);
    free(text);

    /* The values too: the complete flag and one enum value by name. */
    snprintf(cmd, sizeof cmd, "h5dump -a /complete -d /jobs -s 0 -c 2 '%s' > '%s' 2>&1",
             fx->path, out);
    assert_int_equal(system(cmd), 0);
    text = fs_test_read(out, &len);
    assert_non_null(text);
    if (!strstr(text, "(0): 1") || !strstr(text, "completed") || !strstr(text, "failed"))
        fail_msg("h5dump values unexpected:\n%s", text);
    free(text);
    free(out);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_roundtrip_0),
        T(test_roundtrip_1),
        T(test_roundtrip_200k),
        T(test_layout),
        T(test_complete_flag),
        T(test_replaces_existing_target_only_at_commit),
        T(test_abort),
        T(test_unwritable_path),
        T(test_rename_failure),
        T(test_bad_rows),
        T(test_io_faults),
        T(test_alloc_faults_open),
        T(test_alloc_faults_add),
        T(test_alloc_faults_commit),
        T(test_writer_same_bytes),
        T(test_writer_io_limit),
        T(test_writer_io_faults),
        T(test_writer_alloc_faults),
        T(test_writer_abort),
        T(test_threads_one_lock),
        T(test_h5dump),
    };
    if (getenv("FS_TEST_FILTER"))   /* e.g. FS_TEST_FILTER=test_writer_same_bytes */
        cmocka_set_test_filter(getenv("FS_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
