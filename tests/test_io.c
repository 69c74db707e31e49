/*
 * fs_io: the I/O fault-injection hook, and through it every I/O failure of
 * the native trace reader (plain and gzip, via fs_csv), the native trace
 * writer, the results writer (every HDF5 call, the rename; commit and
 * partial commit) and a whole run (fs_run_config).  Each loop fails the Nth
 * I/O operation for N = 1, 2, ... until the operation succeeds and checks,
 * for every N: FS_EIO, a one-line message naming the file and the reason
 * ("Input/output error"), exit status 1, no fs_alloc leak, and no file at
 * the target name (nor a temporary) -- or, for a partial commit that
 * succeeded, a file that says complete = 0.  The successful end of each
 * loop is checked against a run without injection (same jobs, same file).
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <hdf5.h>
#include <hdf5_hl.h>

#include "analysis/fs_results.h"
#include "scenarios/fs_scenario.h"
#include "sim/api/fs_runner.h"
#include "sim/fs_alloc.h"
#include "sim/fs_io.h"
#include "sim/fs_out.h"
#include "traces/fs_native.h"
#include "fs_test_util.h"

typedef struct fixture {
    int64_t live0;
    char *dir;
} fixture_t;

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->live0 = fs_alloc_live();
    fx->dir = fs_test_tmpdir();
    assert_non_null(fx->dir);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    fs_io_fail_after(0);
    fs_alloc_fail_after(0);
    assert_int_equal(fs_alloc_live(), fx->live0);
    fs_test_rmtree(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

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

static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* The checks every injected failure must pass. */
static void check_failure(int rc, const fs_error_t *err, const char *file, uint64_t n)
{
    if (rc != FS_EIO)
        fail_msg("N = %llu: status %s, expected FS_EIO (%s)", (unsigned long long)n,
                 fs_error_name(rc), err->msg);
    assert_int_equal(fs_error_exit_status(rc), 1);
    if (!strstr(err->msg, file) || !strstr(err->msg, strerror(EIO)))
        fail_msg("N = %llu: message does not name the file and the reason: %s",
                 (unsigned long long)n, err->msg);
    assert_null(strchr(err->msg, '\n'));
}

/* ---- the hook itself ------------------------------------------------------ */

static void test_counter(void **state)
{
    (void)state;
    uint64_t c0 = fs_io_count();
    fs_io_fail_after(3);
    assert_int_equal(fs_io_fault(), 0);
    assert_int_equal(fs_io_fault(), 0);
    errno = 0;
    assert_int_equal(fs_io_fault(), 1);
    assert_int_equal(errno, EIO);
    assert_int_equal(fs_io_fault(), 1);     /* and every later one */
    fs_io_fail_after(0);
    assert_int_equal(fs_io_fault(), 0);
    assert_int_equal(fs_io_count(), c0 + 5);

    fs_io_fail_after(1);
    errno = 0;
    assert_null(fs_io_fopen("/dev/null", "r"));
    assert_int_equal(errno, EIO);
    assert_int_equal(fs_io_rename("/nonexistent-a", "/nonexistent-b"), -1);
    assert_int_equal(errno, EIO);
    fs_io_fail_after(0);
    FILE *f = fs_io_fopen("/dev/null", "w");
    assert_non_null(f);
    assert_int_equal(fs_io_fwrite("x", 1, 1, f), 1);
    fs_io_fail_after(1);
    assert_int_equal(fs_io_fwrite("x", 1, 1, f), 0);
    fs_io_fail_after(0);
    fclose(f);
}

/* ---- the native reader ---------------------------------------------------- */

/* Reads path to the end; returns the status, counts jobs and sums ids. */
static int read_all(const char *path, size_t *n_jobs, uint64_t *id_sum, fs_error_t *err)
{
    fs_source_t *src = NULL;
    *n_jobs = 0;
    *id_sum = 0;
    int rc = fs_native_open(path, NULL, &src, err);
    if (rc)
        return rc;
    fs_job_t buf[2];   /* small batches: many reads between them */
    for (;;) {
        size_t n = 0;
        if ((rc = fs_source_next(src, buf, 2, &n, err)) || n == 0)
            break;
        for (size_t i = 0; i < n; i++)
            *id_sum += buf[i].id;
        *n_jobs += n;
    }
    fs_source_destroy(src);
    return rc;
}

static void reader_loop(const fixture_t *fx, const char *path)
{
    fs_error_t err;
    size_t want_n = 0, n = 0;
    uint64_t want_sum = 0, sum = 0;
    assert_int_equal(read_all(path, &want_n, &want_sum, &err), 0);
    assert_true(want_n >= 3);
    uint64_t failures = 0;
    for (uint64_t k = 1;; k++) {
        fs_io_fail_after(k);
        fs_error_clear(&err);
        int rc = read_all(path, &n, &sum, &err);
        fs_io_fail_after(0);
        assert_int_equal(fs_alloc_live(), fx->live0);
        if (rc == 0) {
            assert_int_equal(n, want_n);
            assert_int_equal(sum, want_sum);
            break;
        }
        check_failure(rc, &err, path, k);
        failures++;
        assert_true(k < 1000);
    }
    assert_true(failures >= 2);   /* the open and at least one read */
}

static void test_native_reader(void **state)
{
    fixture_t *fx = *state;
    reader_loop(fx, FS_TEST_DATA "/traces/native_example.csv");
    reader_loop(fx, FS_TEST_DATA "/traces/native_example.csv.gz");
}

/* ---- the native writer ---------------------------------------------------- */

static int write_trace(const char *path, size_t n, fs_error_t *err)
{
    fs_native_writer_t *w = NULL;
    int rc = fs_native_writer_open(path, &w, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        fs_job_t j;
        fs_job_init(&j);
        j.id = i + 1;
        j.submit = (fs_time_t)i * FS_US_PER_S;
        j.duration = 60 * FS_US_PER_S;
        j.gpus = 8;
        if ((rc = fs_native_writer_put(w, &j, i % 2 ? "alice" : NULL, "H100", err))) {
            fs_native_writer_abort(w);
            return rc;
        }
    }
    return fs_native_writer_close(w, err);
}

static void writer_loop(const fixture_t *fx, const char *name, size_t rows)
{
    char *path = fs_test_path(fx->dir, name);
    fs_error_t err;
    uint64_t failures = 0;
    for (uint64_t k = 1;; k++) {
        fs_io_fail_after(k);
        fs_error_clear(&err);
        int rc = write_trace(path, rows, &err);
        fs_io_fail_after(0);
        assert_int_equal(fs_alloc_live(), fx->live0);
        if (rc == 0)
            break;
        check_failure(rc, &err, path, k);
        assert_int_equal(dir_entries(fx->dir), 0);   /* no target, no temporary */
        failures++;
        assert_true(k < 1000);
    }
    assert_true(failures >= 3);   /* open, write, close, rename */
    size_t n = 0;
    uint64_t sum = 0;
    assert_int_equal(read_all(path, &n, &sum, &err), 0);
    assert_int_equal(n, rows);
    assert_int_equal(sum, (uint64_t)rows * (rows + 1) / 2);
    unlink(path);
    free(path);
}

static void test_native_writer(void **state)
{
    fixture_t *fx = *state;
    writer_loop(fx, "t.csv", 5);
    writer_loop(fx, "t.csv.gz", 5);
    /* more than one 256 KiB buffer: a write failure before the close */
    writer_loop(fx, "big.csv", 20000);
}

/* ---- the results writer --------------------------------------------------- */

static const fs_pool_info_t pools[] = {{"main", "H100", 4, 8, NULL, 0, 0, 0, 30, 0}};

static fs_results_meta_t meta(void)
{
    fs_results_meta_t m = {.seed = 1, .replication = 0, .scenario = "name: t\n",
                           .scenario_source = NULL, .scenario_path = NULL, .pools = pools,
                           .n_pools = 1};
    return m;
}

static fs_job_row_t job_row(uint64_t i)
{
    fs_job_row_t r;
    memset(&r, 0, sizeof r);
    r.id = i + 1;
    r.tenant = -1;
    r.gpus = 8;
    r.gpu_milli = 1000;
    r.nodes = 1;
    r.submit = (double)i;
    r.start = (double)i + 1;
    r.end = (double)i + 61;
    r.wait = 1;
    r.run = 60;
    r.state = FS_STATE_COMPLETED;
    return r;
}

/* Attribute of the root as an int (complete) or 0 when absent. */
static int read_attr_i32(const char *path, const char *name, int *out)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return -1;
    int rc = H5LTget_attribute_int(f, "/", name, out) < 0 ? -1 : 0;
    H5Fclose(f);
    return rc;
}

static hsize_t table_rows(const char *path, const char *table)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hsize_t nf = 0, nr = 0;
    assert_true(H5TBget_table_info(f, table, &nf, &nr) >= 0);
    H5Fclose(f);
    return nr;
}

/* partial: commit_partial instead of commit.  n rows of /jobs. */
static int write_results(const char *path, size_t n, int partial, fs_error_t *err)
{
    fs_results_meta_t md = meta();
    fs_results_t *r = NULL;
    int rc = fs_results_open(path, &md, &r, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        fs_job_row_t row = job_row(i);
        if ((rc = fs_results_add_job(r, &row, err))) {
            fs_results_abort(r);
            return rc;
        }
    }
    fs_sample_row_t s = {.time = 0, .gpus_total = 32, .gpus_up = 32};
    if ((rc = fs_results_add_sample(r, &s, err))) {
        fs_results_abort(r);
        return rc;
    }
    if (partial)
        return fs_results_commit_partial(r, "interrupted by SIGTERM", 1234.5, 7, err);
    fs_summary_t sum;
    memset(&sum, 0, sizeof sum);
    sum.jobs_submitted = n;
    fs_tenant_row_t t = {.tenant = -1, .jobs = n};
    return fs_results_commit(r, &sum, &t, 1, NULL, 0, err);
}

static void results_loop(const fixture_t *fx, int partial)
{
    char *path = fs_test_path(fx->dir, "run.h5");
    fs_error_t err;
    uint64_t failures = 0;
    H5E_auto2_t f0;
    void *d0;
    H5Eget_auto2(H5E_DEFAULT, &f0, &d0);
    for (uint64_t k = 1;; k++) {
        fs_io_fail_after(k);
        fs_error_clear(&err);
        int rc = write_results(path, 10, partial, &err);
        fs_io_fail_after(0);
        assert_int_equal(fs_alloc_live(), fx->live0);
        if (rc == 0)
            break;
        check_failure(rc, &err, path, k);
        assert_int_equal(dir_entries(fx->dir), 0);
        failures++;
        assert_true(k < 5000);
    }
    /* every HDF5 call of open and commit could fail: there are dozens */
    assert_true(failures >= 40);
    /* the caller's HDF5 error handler is back after every failure */
    H5E_auto2_t f1;
    void *d1;
    H5Eget_auto2(H5E_DEFAULT, &f1, &d1);
    assert_ptr_equal(f1, f0);
    assert_ptr_equal(d1, d0);

    int complete = -1;
    assert_int_equal(read_attr_i32(path, "complete", &complete), 0);
    assert_int_equal(complete, partial ? 0 : 1);
    assert_int_equal(table_rows(path, "jobs"), 10);
    assert_int_equal(table_rows(path, "timeline"), 1);
    if (partial) {
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        assert_true(f >= 0);
        double at = 0;
        assert_true(H5LTget_attribute_double(f, "/", "stopped_at", &at) >= 0);
        assert_true(at == 1234.5);
        hid_t a = H5Aopen(f, "incomplete_reason", H5P_DEFAULT);
        assert_true(a >= 0);
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        H5Tset_cset(t, H5T_CSET_UTF8);
        char *reason = NULL;
        assert_true(H5Aread(a, t, &reason) >= 0);
        assert_string_equal(reason, "interrupted by SIGTERM");
        H5free_memory(reason);
        H5Tclose(t);
        H5Aclose(a);
        assert_int_equal(H5Lexists(f, "summary", H5P_DEFAULT), 0);
        H5Fclose(f);
    }
    unlink(path);
    free(path);
}

static void test_results_commit(void **state) { results_loop(*state, 0); }
static void test_results_partial(void **state) { results_loop(*state, 1); }

/* A batch flush inside add (the 65,537th row) fails: FS_EIO, and the
 * abort that follows leaves nothing. */
static void test_results_batch_flush(void **state)
{
    fixture_t *fx = *state;
    char *path = fs_test_path(fx->dir, "run.h5");
    fs_results_meta_t md = meta();
    fs_results_t *r = NULL;
    fs_error_t err;
    assert_int_equal(fs_results_open(path, &md, &r, &err), 0);
    for (size_t i = 0; i < FS_RESULTS_BATCH; i++) {
        fs_job_row_t row = job_row(i);
        assert_int_equal(fs_results_add_job(r, &row, &err), 0);
    }
    fs_job_row_t row = job_row(FS_RESULTS_BATCH);
    fs_io_fail_after(1);
    int rc = fs_results_add_job(r, &row, &err);
    fs_io_fail_after(0);
    check_failure(rc, &err, path, 1);
    assert_non_null(strstr(err.msg, "appending 65536 rows to /jobs"));
    fs_results_abort(r);
    assert_int_equal(dir_entries(fx->dir), 0);
    assert_int_equal(fs_alloc_live(), fx->live0);
    free(path);
}

/* ---- a whole run ---------------------------------------------------------- */

static void test_run(void **state)
{
    fixture_t *fx = *state;
    char *trace = fs_test_path(fx->dir, "jobs.csv");
    char *out = fs_test_path(fx->dir, "out.h5");
    fs_error_t err;
    assert_int_equal(write_trace(trace, 50, &err), 0);
    char text[1024];
    snprintf(text, sizeof text,
             "name: io\nhorizon: 1d\ncluster:\n  pools:\n    - {name: a, gpu: H100, nodes: 2, "
             "gpus_per_node: 8}\nworkload:\n  trace: {path: %s, format: native}\n", trace);
    fs_config_t cfg;
    assert_int_equal(fs_scenario_load_string("<io>", text, NULL, 0, &cfg, &err), 0);
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    opts.output = out;
    fs_run_report_t rep;
    uint64_t failures = 0;
    for (uint64_t k = 1;; k++) {
        fs_io_fail_after(k);
        fs_error_clear(&err);
        int rc = fs_run_config(&cfg, &opts, &rep, &err);
        fs_io_fail_after(0);
        if (rc == 0)
            break;
        if (rc != FS_EIO || !strstr(err.msg, strerror(EIO)))
            fail_msg("N = %llu: %s: %s", (unsigned long long)k, fs_error_name(rc), err.msg);
        assert_false(exists(out));
        assert_int_equal(dir_entries(fx->dir), 1);    /* only the trace */
        failures++;
        assert_true(k < 5000);
    }
    assert_true(failures >= 40);
    assert_int_equal(rep.summary.jobs_submitted, 50);
    int complete = -1;
    assert_int_equal(read_attr_i32(out, "complete", &complete), 0);
    assert_int_equal(complete, 1);
    fs_config_release(&cfg);
    assert_int_equal(fs_alloc_live(), fx->live0);
    free(trace);
    free(out);
}

/* ---- output paths (sim/fs_out.h) ------------------------------------------ */

static void test_out_paths(void **state)
{
    fixture_t *fx = *state;
    fs_error_t err;
    fs_out_t o;
    /* a 255-byte target name: the temporary's last component fits NAME_MAX,
     * is the same for every pid but for the pid, and differs from that of a
     * name sharing the first 200 bytes */
    char base[256], base2[256];
    memset(base, 'a', 255);
    base[255] = '\0';
    memcpy(base2, base, 256);
    base2[250] = 'b';
    char *target = fs_test_path(fx->dir, base), *target2 = fs_test_path(fx->dir, base2);
    char *t1 = fs_out_tmp_name(target, 1), *t2 = fs_out_tmp_name(target, 4194304);
    char *t3 = fs_out_tmp_name(target2, 1);
    assert_true(strlen(strrchr(t1, '/') + 1) <= 255 && strlen(strrchr(t2, '/') + 1) <= 255);
    assert_int_equal(strncmp(t1, t2, strlen(t1) - 1), 0);
    assert_string_not_equal(t1, t3);
    assert_int_equal(fs_out_prepare(&o, target, &err), 0);
    assert_int_equal(fs_test_write(o.tmp, "x"), 0);
    assert_int_equal(fs_out_commit(&o, NULL, &err), 0);
    assert_true(exists(target));
    fs_out_release(&o);
    /* short names keep TARGET.tmp.PID */
    char *r = fs_test_path(fx->dir, "r.h5"), *t = fs_out_tmp_name(r, 42);
    char *want = fs_test_path(fx->dir, "r.h5.tmp.42");
    assert_string_equal(t, want);
    fs_free(t);
    free(want);

    /* stale temporaries: a dead pid's goes, a live one's and other names stay */
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char *sd = fs_out_tmp_name(r, (long)dead), *sl = fs_out_tmp_name(r, (long)getppid());
    char *other = fs_test_path(fx->dir, "r.h5.tmp.12x");
    assert_int_equal(fs_test_write(sd, "x"), 0);
    assert_int_equal(fs_test_write(sl, "x"), 0);
    assert_int_equal(fs_test_write(other, "x"), 0);
    assert_int_equal(fs_out_remove_stale(r), 1);
    assert_false(exists(sd));
    assert_true(exists(sl) && exists(other));
    unlink(sl);
    unlink(other);

    /* what may be replaced: nothing, a writable regular file (mode kept), a
     * symlink's target; not a directory, a FIFO, a device or a read-only file */
    assert_int_equal(fs_test_write(r, "old"), 0);
    assert_int_equal(chmod(r, 0640), 0);
    assert_int_equal(fs_out_prepare(&o, r, &err), 0);
    assert_int_equal(fs_test_write(o.tmp, "new"), 0);
    assert_int_equal(fs_out_commit(&o, NULL, &err), 0);
    fs_out_release(&o);
    struct stat st;
    assert_int_equal(stat(r, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    char *link = fs_test_path(fx->dir, "link.h5");
    assert_int_equal(symlink("r.h5", link), 0);
    assert_int_equal(fs_out_prepare(&o, link, &err), 0);
    assert_string_equal(o.target, r);
    fs_out_release(&o);
    assert_int_equal(chmod(r, 0444), 0);
    assert_int_equal(fs_out_prepare(&o, r, &err), FS_EUSAGE);
    assert_non_null(strstr(err.msg, "read-only"));
    assert_int_equal(fs_out_prepare(&o, fx->dir, &err), FS_EUSAGE);
    assert_non_null(strstr(err.msg, "a directory"));
    char *fifo = fs_test_path(fx->dir, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(fs_out_prepare(&o, fifo, &err), FS_EUSAGE);
    assert_non_null(strstr(err.msg, "a FIFO"));
    assert_int_equal(fs_out_prepare(&o, "/dev/null", &err), FS_EUSAGE);
    assert_non_null(strstr(err.msg, "--no-output"));
    assert_true(fs_out_is_null("/dev/null"));
    assert_false(fs_out_is_null(r));

    /* an output that is an input, by any spelling */
    const char *in[] = {NULL, "/nonexistent/x", r};
    assert_int_equal(fs_out_check_inputs("t", link, in, 3, &err), FS_EUSAGE);
    assert_non_null(strstr(err.msg, "is the input"));
    assert_int_equal(fs_out_check_inputs("t", fifo, in, 3, &err), 0);
    assert_int_equal(fs_out_check_inputs("t", t1, in, 3, &err), 0);   /* does not exist */

    unlink(link);
    unlink(fifo);
    unlink(r);
    unlink(target);
    free(link);
    free(fifo);
    free(r);
    fs_free(t1);
    fs_free(t2);
    fs_free(t3);
    fs_free(sd);
    fs_free(sl);
    free(other);
    free(target);
    free(target2);
}

/* fs_io_read_text: a stated cap, refused at once on an endless stream */
static void test_read_text_cap(void **state)
{
    fixture_t *fx = *state;
    fs_error_t err;
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(fs_io_read_text("/dev/zero", "scenario", 1 << 20, &buf, &len, &err),
                     FS_ELIMIT);
    assert_null(buf);
    assert_non_null(strstr(err.msg, "/dev/zero: the scenario is larger than 1048576 bytes"));
    assert_int_equal(fs_error_exit_status(FS_ELIMIT), 2);
    char *p = fs_test_path(fx->dir, "t.yaml");
    assert_int_equal(fs_test_write(p, "a: 1\n"), 0);
    assert_int_equal(fs_io_read_text(p, "scenario", 5, &buf, &len, &err), 0);
    assert_int_equal(len, 5);
    assert_string_equal(buf, "a: 1\n");
    fs_free(buf);
    assert_int_equal(fs_io_read_text(p, "scenario", 4, &buf, &len, &err), FS_ELIMIT);
    assert_int_equal(fs_io_read_text("/nonexistent/t.yaml", "scenario", 4, &buf, &len, &err),
                     FS_EINVAL);
    unlink(p);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_counter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_native_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(test_native_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_partial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_batch_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_text_cap, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
