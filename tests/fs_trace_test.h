/*
 * Helpers shared by the trace-reader tests (tests/test_tiresias.c,
 * test_openb.c, test_swf.c, test_helios.c, test_detect.c): drain a reader
 * through the format table into plain arrays, check exact error messages
 * of small files written on the fly, and run allocation-failure injection
 * over a whole read.  Included by each test (static functions).
 */
#ifndef FS_TRACE_TEST_H
#define FS_TRACE_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_test_util.h"
#include "sim/fs_alloc.h"
#include "traces/fs_trace.h"

#include <zlib.h>

#define S(x) ((fs_time_t)(x) * FS_US_PER_S)

typedef struct readout {
    fs_job_t *jobs;
    size_t n;
    char **tenants;     /* per job: its tenant name or NULL (malloc'd) */
    char **gpu_types;
    uint64_t skipped;
    char reasons[512];  /* "reason=count;..." */
} readout_t;

__attribute__((unused)) static char *tt_dup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    assert_non_null(d);
    return memcpy(d, s, n);
}

__attribute__((unused)) static void readout_free(readout_t *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->tenants[i]);
        free(r->gpu_types[i]);
    }
    free(r->tenants);
    free(r->gpu_types);
    free(r->jobs);
    memset(r, 0, sizeof *r);
}

/* Opens `format` and drains it in batches of cap; returns the first error
 * (checked sticky) with err set, or 0. */
__attribute__((unused)) static int read_all(const char *format, const char *path, const fs_trace_opts_t *o, size_t cap,
                    readout_t *r, fs_error_t *err)
{
    memset(r, 0, sizeof *r);
    fs_source_t *src = NULL;
    /* notes go to /dev/null unless the test asks for them */
    fs_trace_opts_t quiet;
    if (o)
        quiet = *o;
    else
        fs_trace_opts_init(&quiet);
    FILE *devnull = NULL;
    if (!quiet.log)
        quiet.log = devnull = fopen("/dev/null", "w");
    int rc = fs_trace_open(format, path, &quiet, &src, err);
    if (rc) {
        assert_null(src);
        if (devnull)
            fclose(devnull);
        return rc;
    }
    fs_job_t *buf = malloc(cap * sizeof *buf);
    assert_non_null(buf);
    size_t alloc = 0;
    for (;;) {
        size_t n = 7;
        rc = fs_source_next(src, buf, cap, &n, err);
        if (rc) {
            assert_int_equal(n, 0);
            fs_error_t again;
            size_t n2 = 1;
            assert_int_equal(fs_source_next(src, buf, cap, &n2, &again), rc);
            assert_int_equal(n2, 0);
            assert_string_equal(again.msg, err->msg);
            break;
        }
        if (n == 0) {
            size_t n2 = 1;  /* ended streams stay ended */
            assert_int_equal(fs_source_next(src, buf, cap, &n2, err), 0);
            assert_int_equal(n2, 0);
            break;
        }
        if (r->n + n > alloc) {
            alloc = (r->n + n) * 2;
            r->jobs = realloc(r->jobs, alloc * sizeof *r->jobs);
            r->tenants = realloc(r->tenants, alloc * sizeof *r->tenants);
            r->gpu_types = realloc(r->gpu_types, alloc * sizeof *r->gpu_types);
            assert_non_null(r->jobs);
            assert_non_null(r->tenants);
            assert_non_null(r->gpu_types);
        }
        for (size_t i = 0; i < n; i++) {
            if (r->n)   /* the stream is sorted */
                assert_true(buf[i].submit >= r->jobs[r->n - 1].submit);
            r->jobs[r->n] = buf[i];
            r->tenants[r->n] = tt_dup(fs_source_tenant_name(src, buf[i].tenant));
            r->gpu_types[r->n] = tt_dup(fs_source_gpu_type_name(src, buf[i].gpu_type));
            r->n++;
        }
    }
    r->skipped = fs_source_skipped(src);
    uint64_t cnt, total = 0;
    const char *why;
    for (size_t i = 0; (why = fs_source_skip_reason(src, i, &cnt)) != NULL; i++) {
        size_t l = strlen(r->reasons);
        snprintf(r->reasons + l, sizeof r->reasons - l, "%s=%llu;", why, (unsigned long long)cnt);
        total += cnt;
    }
    assert_int_equal(total, r->skipped);
    free(buf);
    fs_source_destroy(src);
    if (devnull)
        fclose(devnull);
    return rc;
}

/* A temporary directory per test file run. */
static char *g_dir;

__attribute__((unused)) static int tt_setup(void **state)
{
    (void)state;
    g_dir = fs_test_tmpdir();
    return g_dir ? 0 : -1;
}

__attribute__((unused)) static int tt_teardown(void **state)
{
    (void)state;
    fs_test_rmtree(g_dir);
    free(g_dir);
    g_dir = NULL;
    return 0;
}

/* Writes text to <tmp>/name and returns the path (malloc'd). */
__attribute__((unused)) static char *tt_file(const char *name, const char *text)
{
    char *p = fs_test_path(g_dir, name);
    assert_non_null(p);
    assert_int_equal(fs_test_write(p, text), 0);
    return p;
}

/* Reads text as `format` (file <tmp>/t.csv) and expects FS_EINVAL with the
 * message "<path>" + want_after_path (want starts right after the path). */
__attribute__((unused)) static void tt_expect_error(const char *format, const char *text, const fs_trace_opts_t *o,
                            const char *want)
{
    int64_t live0 = fs_alloc_live();
    char *p = tt_file("t.csv", text);
    readout_t r;
    fs_error_t err;
    int rc = read_all(format, p, o, 4, &r, &err);
    char full[2048];
    snprintf(full, sizeof full, "%s%s", p, want);
    if (rc != FS_EINVAL || strcmp(err.msg, full) != 0)
        fail_msg("rc %d, message\n  %s\nexpected\n  %s", rc, rc ? err.msg : "(none)", full);
    readout_free(&r);
    free(p);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Reads text leniently: expects success, n_jobs jobs and the reasons. */
__attribute__((unused)) static void tt_expect_lenient(const char *format, const char *text, fs_trace_opts_t o,
                              size_t n_jobs, const char *reasons)
{
    int64_t live0 = fs_alloc_live();
    char *p = tt_file("t.csv", text);
    readout_t r;
    fs_error_t err;
    o.lenient = 1;
    int rc = read_all(format, p, &o, 3, &r, &err);
    if (rc)
        fail_msg("lenient read failed: %s", err.msg);
    assert_int_equal(r.n, n_jobs);
    assert_string_equal(r.reasons, reasons);
    readout_free(&r);
    free(p);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Fails the k-th allocation for k = 1, 2, ... until a whole read succeeds:
 * every failure is FS_ENOMEM ("out of memory"), never a shorter trace; no
 * leaks; the successful read gives n_jobs. */
__attribute__((unused)) static void tt_alloc_failures(const char *format, const char *path, const fs_trace_opts_t *o,
                              size_t n_jobs)
{
    int64_t live0 = fs_alloc_live();
    int ok = 0;
    for (uint64_t k = 1; k < 2000 && !ok; k++) {
        readout_t r;
        fs_error_t err;
        fs_alloc_fail_after(k);
        int rc = read_all(format, path, o, 16, &r, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            assert_int_equal(r.n, n_jobs);
        } else {
            if (rc != FS_ENOMEM)
                fail_msg("allocation %llu: rc %d: %s", (unsigned long long)k, rc, err.msg);
            assert_non_null(strstr(err.msg, "out of memory"));
        }
        readout_free(&r);
        assert_int_equal(fs_alloc_live(), live0);
    }
    assert_true(ok);
}

/* A copy of the first `keep` bytes of src at <tmp>/name (a truncated file). */
__attribute__((unused)) static char *tt_truncated(const char *src, const char *name, size_t keep)
{
    size_t len = 0;
    char *data = fs_test_read(src, &len);
    assert_non_null(data);
    assert_true(keep < len);
    char *p = fs_test_path(g_dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, keep, f), keep);
    fclose(f);
    free(data);
    return p;
}

/* gzip: the file compressed reads to exactly the same jobs; cut short it
 * is an error (truncated gzip data), in lenient mode too. */
__attribute__((unused)) static void tt_gzip_checks(const char *format, const char *path)
{
    int64_t live0 = fs_alloc_live();
    size_t len;
    char *data = fs_test_read(path, &len);
    assert_non_null(data);
    char *gz = fs_test_path(g_dir, "copy.gz");
    gzFile g = gzopen(gz, "wb9");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, data, (unsigned)len), (int)len);
    assert_int_equal(gzclose(g), Z_OK);
    readout_t a, b;
    fs_error_t err;
    assert_int_equal(read_all(format, path, NULL, 5, &a, &err), 0);
    assert_int_equal(read_all(format, gz, NULL, 2, &b, &err), 0);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.jobs, b.jobs, a.n * sizeof *a.jobs);
    readout_free(&a);
    readout_free(&b);
    size_t gl;
    char *gdata = fs_test_read(gz, &gl);
    char *cut = tt_truncated(gz, "cut.gz", gl - 12);   /* the trailer and some data gone */
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    assert_int_equal(read_all(format, cut, &o, 4, &a, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, ": truncated gzip data (unexpected end of file)"));
    readout_free(&a);
    free(cut);
    free(gdata);
    free(gz);
    free(data);
    assert_int_equal(fs_alloc_live(), live0);
}

#endif
