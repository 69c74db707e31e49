/*
 * Tests of the native trace format (traces/fs_native) and its helpers
 * (traces/fs_csv, traces/fs_strtab, fs_job_rec_state_name): the example
 * fixture field by field, plain and gzip; round trips synth -> writer ->
 * reader; every strict-mode error with its exact "FILE:LINE: field NAME"
 * message; lenient counting; bounded memory over 300k rows; truncated and
 * corrupt gzip; allocation-failure injection on open, next and the writer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fs_test_util.h"
#include "models/fs_mig.h"
#include "sim/fs_alloc.h"
#include "traces/fs_csv.h"
#include "traces/fs_native.h"
#include "traces/fs_strtab.h"
#include "traces/fs_synth.h"

#define S(x) ((fs_time_t)(x) * FS_US_PER_S)

static char *g_dir;     /* per-test temporary directory */

static int setup(void **state)
{
    g_dir = fs_test_tmpdir();
    return g_dir ? 0 : -1;
}

static int teardown(void **state)
{
    fs_test_rmtree(g_dir);
    free(g_dir);
    g_dir = NULL;
    return 0;
}

static char *tmp_path(const char *name)
{
    char *p = fs_test_path(g_dir, name);
    assert_non_null(p);
    return p;
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

/* A read source drained into a malloc'd array, plus its name tables. */
typedef struct readout {
    fs_job_t *jobs;
    size_t n;
    char **tenants;     /* per job: its tenant name or NULL (malloc'd copies) */
    char **gpu_types;
    uint64_t skipped;
} readout_t;

static void readout_free(readout_t *r)
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

static char *dup_or_null(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    assert_non_null(d);
    return memcpy(d, s, n);
}

/* Opens and drains; returns the first error (0 if none) with err set. */
static int read_all(const char *path, const fs_trace_opts_t *o, size_t cap, readout_t *r,
                    fs_error_t *err)
{
    memset(r, 0, sizeof *r);
    fs_source_t *src = NULL;
    int rc = fs_native_open(path, o, &src, err);
    if (rc) {
        assert_null(src);
        return rc;
    }
    assert_string_equal(src->ops->name, "native");
    fs_job_t *buf = malloc(cap * sizeof *buf);
    assert_non_null(buf);
    size_t alloc = 0;
    for (;;) {
        size_t n = 0;
        rc = fs_source_next(src, buf, cap, &n, err);
        if (rc) {
            assert_int_equal(n, 0);
            /* The error is sticky. */
            fs_error_t again;
            size_t n2 = 1;
            assert_int_equal(fs_source_next(src, buf, cap, &n2, &again), rc);
            assert_int_equal(n2, 0);
            assert_string_equal(again.msg, err->msg);
            break;
        }
        if (n == 0)
            break;
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
            r->jobs[r->n] = buf[i];
            r->tenants[r->n] = dup_or_null(fs_source_tenant_name(src, buf[i].tenant));
            r->gpu_types[r->n] = dup_or_null(fs_source_gpu_type_name(src, buf[i].gpu_type));
            r->n++;
        }
    }
    r->skipped = fs_source_skipped(src);
    free(buf);
    fs_source_destroy(src);
    return rc;
}

static void job(fs_job_t *j, uint64_t id, fs_time_t submit, uint32_t gpus, fs_time_t duration)
{
    fs_job_init(j);
    j->id = id;
    j->submit = submit;
    j->gpus = gpus;
    j->duration = duration;
}

static void assert_job_equal(const fs_job_t *a, const fs_job_t *b)
{
    assert_int_equal(a->id, b->id);
    assert_int_equal(a->submit, b->submit);
    assert_int_equal(a->duration, b->duration);
    assert_int_equal(a->estimate, b->estimate);
    assert_int_equal(a->gpus, b->gpus);
    assert_int_equal(a->gpu_milli, b->gpu_milli);
    assert_int_equal(a->tenant, b->tenant);
    assert_int_equal(a->gpu_type, b->gpu_type);
    assert_int_equal(a->priority, b->priority);
    assert_int_equal(a->job_class, b->job_class);
    assert_int_equal(a->rec_start, b->rec_start);
    assert_int_equal(a->rec_end, b->rec_end);
    assert_int_equal(a->rec_state, b->rec_state);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->mig, b->mig);
}

static void assert_name(const char *got, const char *want)
{
    if (!want)
        assert_null(got);
    else
        assert_string_equal(got, want);
}

/* ------------------------------------------------------------------ */

static void test_rec_state_names(void **state)
{
    static const char *const want[] = {"unknown", "completed", "failed", "killed",
                                       "timeout", "node_fail", "running"};
    for (int32_t s = 0; s <= FS_JOB_REC_RUNNING; s++)
        assert_string_equal(fs_job_rec_state_name(s), want[s]);
    assert_string_equal(fs_job_rec_state_name(-1), "?");
    assert_string_equal(fs_job_rec_state_name(7), "?");
}

/* The recorded GPU memory code (fs_job_fb_code): every code decodes to a
 * value that codes back to it, the values rise, the steps are 0.25 GB to
 * 32 GB and 1.5 GB above, a value goes to the nearest step, and the range
 * ends at FS_JOB_FB_MAX_GB (0 is "not recorded"). */
static void test_fb_code(void **state)
{
    (void)state;
    assert_true(fs_job_fb_gb(0) < 0);
    double prev = -1;
    for (int c = 1; c <= 255; c++) {
        double gb = fs_job_fb_gb((uint8_t)c);
        assert_int_equal(fs_job_fb_code(gb), c);
        assert_true(gb > prev);
        assert_double_equal(gb - prev, c == 1 ? 1 : c <= 129 ? 0.25 : 1.5, 1e-12);
        prev = gb;
    }
    assert_double_equal(prev, FS_JOB_FB_MAX_GB, 0);
    assert_int_equal(fs_job_fb_code(1.2446746826171875), fs_job_fb_code(1.25));   /* PAI's example */
    assert_int_equal(fs_job_fb_code(1.12), fs_job_fb_code(1.0));
    assert_int_equal(fs_job_fb_code(79.2), fs_job_fb_code(78.5));    /* 32 + 31 x 1.5 */
    assert_int_equal(fs_job_fb_code(79.3), fs_job_fb_code(80.0));
    assert_int_equal(fs_job_fb_code(1e9), 255);
    assert_int_equal(fs_job_fb_code(0), 1);
}

static void test_strtab(void **state)
{
    int64_t live0 = fs_alloc_live();
    fs_strtab_t t;
    fs_strtab_init(&t);
    assert_int_equal(fs_strtab_find(&t, "a", 1), -1);
    assert_null(fs_strtab_name(&t, 0));
    char name[32];
    for (int i = 0; i < 5000; i++) {
        int32_t idx = -7;
        int len = snprintf(name, sizeof name, "tenant-%d", i);
        assert_int_equal(fs_strtab_intern(&t, name, (size_t)len, &idx), 0);
        assert_int_equal(idx, i);   /* dense, in order of first appearance */
    }
    assert_int_equal(fs_strtab_count(&t), 5000);
    for (int i = 4999; i >= 0; i--) {
        int32_t idx = -7;
        int len = snprintf(name, sizeof name, "tenant-%d", i);
        assert_int_equal(fs_strtab_intern(&t, name, (size_t)len, &idx), 0);
        assert_int_equal(idx, i);
        assert_int_equal(fs_strtab_find(&t, name, (size_t)len), i);
        assert_string_equal(fs_strtab_name(&t, i), name);
    }
    assert_int_equal(fs_strtab_count(&t), 5000);
    /* Lengths count: a prefix, and bytes after len, do not matter. */
    int32_t idx;
    assert_int_equal(fs_strtab_find(&t, "tenant-1", 7), -1);
    assert_int_equal(fs_strtab_intern(&t, "tenant-12XYZ", 9, &idx), 0);
    assert_int_equal(idx, 12);
    /* The empty name is a name. */
    assert_int_equal(fs_strtab_intern(&t, "", 0, &idx), 0);
    assert_int_equal(idx, 5000);
    assert_string_equal(fs_strtab_name(&t, 5000), "");
    assert_null(fs_strtab_name(&t, 5001));
    assert_null(fs_strtab_name(&t, -1));
    fs_strtab_release(&t);
    assert_int_equal(fs_strtab_count(&t), 0);
    assert_int_equal(fs_alloc_live(), live0);

    /* Allocation failures leave the table unchanged and usable. */
    fs_strtab_init(&t);
    int added = 0;
    for (int i = 0; i < 200; i++) {
        int len = snprintf(name, sizeof name, "n%d", added);
        fs_alloc_fail_after((uint64_t)(i % 3) + 1);
        int rc = fs_strtab_intern(&t, name, (size_t)len, &idx);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            assert_int_equal(idx, added);
            added++;
        } else {
            assert_int_equal(rc, FS_ENOMEM);
        }
        assert_int_equal(fs_strtab_count(&t), added);
    }
    assert_true(added > 10);
    for (int i = 0; i < added; i++) {
        int len = snprintf(name, sizeof name, "n%d", i);
        assert_int_equal(fs_strtab_find(&t, name, (size_t)len), i);
    }
    fs_strtab_release(&t);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Lines straddling buffer refills, CRLF, a missing final newline, a BOM,
 * blank lines, and the line-length limit. */
static void test_csv_lines(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("lines.txt");
    /* Lines of length 0..150 cycling, through a 64-byte buffer. */
    size_t cap = 200000;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t o = 0;
    memcpy(text, "\xEF\xBB\xBF", 3);
    o = 3;
    int nlines = 0;
    for (int i = 0; o < cap - 400; i++) {
        int len = (i * 7) % 61;
        for (int k = 0; k < len; k++)
            text[o++] = (char)('a' + (i + k) % 26);
        if (i % 5 == 0)
            text[o++] = '\r';
        text[o++] = '\n';
        nlines++;
    }
    memcpy(text + o, "last line", 9);
    o += 9;
    text[o] = '\0';
    nlines++;
    assert_int_equal(fs_test_write(path, text), 0);

    fs_csv_t c;
    fs_error_t err;
    assert_int_equal(fs_csv_open(&c, path, 64, &err), 0);
    for (int i = 0; i < nlines - 1; i++) {
        assert_int_equal(fs_csv_next_line(&c, &err), 1);
        assert_int_equal(c.line_no, (uint64_t)i + 1);
        int len = (i * 7) % 61;
        assert_int_equal(c.line_len, (size_t)len);
        assert_int_equal(strlen(c.line), (size_t)len);
        for (int k = 0; k < len; k++)
            assert_int_equal(c.line[k], 'a' + (i + k) % 26);
    }
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_string_equal(c.line, "last line");
    assert_int_equal(fs_csv_next_line(&c, &err), 0);
    assert_int_equal(fs_csv_next_line(&c, &err), 0);
    fs_csv_close(&c);

    /* A 62-byte line fits a 64-byte buffer (with its '\n' and the spare
     * byte); 63 bytes do not. */
    char line[200];
    memset(line, 'x', 62);
    strcpy(line + 62, "\nok\n");
    assert_int_equal(fs_test_write(path, line), 0);
    assert_int_equal(fs_csv_open(&c, path, 64, &err), 0);
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_int_equal(c.line_len, 62);
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_string_equal(c.line, "ok");
    fs_csv_close(&c);
    memset(line, 'x', 63);
    strcpy(line + 63, "\n");
    assert_int_equal(fs_test_write(path, "short\n"), 0);
    char *two = malloc(300);
    snprintf(two, 300, "short\n%s", line);
    assert_int_equal(fs_test_write(path, two), 0);
    free(two);
    assert_int_equal(fs_csv_open(&c, path, 64, &err), 0);
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_int_equal(fs_csv_next_line(&c, &err), FS_EINVAL);
    char want[4200];
    snprintf(want, sizeof want, "%s:2: line longer than 62 bytes", path);
    assert_string_equal(err.msg, want);
    fs_csv_close(&c);

    /* Cannot open. */
    char *missing = tmp_path("no-such-file.csv");
    assert_int_equal(fs_csv_open(&c, missing, 0, &err), FS_EIO);
    snprintf(want, sizeof want, "cannot open %s: No such file or directory", missing);
    assert_string_equal(err.msg, want);
    free(missing);
    free(text);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

static void expect_fields(fs_csv_t *c, int n, ...)
{
    assert_int_equal(c->n_fields, (size_t)n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const char *want = va_arg(ap, const char *);
        assert_string_equal(c->fields[i].s, want);
        assert_int_equal(c->fields[i].len, strlen(want));
    }
    va_end(ap);
}

static void test_csv_fields(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("fields.csv");
    assert_int_equal(fs_test_write(path,
        "a,b,,d\n"
        "  padded\t, \"q,uo\"\"te\" ,\"\",x\n"
        "\n"
        "\"open\n"
        "\"a\"b,c\n"
        "  lots   of\tblanks  \n"
        "one,two,three,four,five,six,seven,eight,nine,ten,eleven,twelve,13,14,15,16,17,18\n"
        "one,two,three,four,five,six,seven,eight,nine,ten,eleven,twelve,13,14,15,16,17,18\n"), 0);
    fs_csv_t c;
    fs_error_t err;
    char want[4200];
    assert_int_equal(fs_csv_open(&c, path, 0, &err), 0);
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_int_equal(fs_csv_split(&c, ',', &err), 0);
    expect_fields(&c, 4, "a", "b", "", "d");
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_int_equal(fs_csv_split(&c, ',', &err), 0);
    expect_fields(&c, 4, "padded", "q,uo\"te", "", "x");
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_int_equal(fs_csv_split(&c, ',', &err), 0);
    expect_fields(&c, 1, "");
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_int_equal(fs_csv_split(&c, ',', &err), FS_EINVAL);
    snprintf(want, sizeof want, "%s:4: field 1: unterminated quoted field", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_int_equal(fs_csv_split(&c, ',', &err), FS_EINVAL);
    snprintf(want, sizeof want,
             "%s:5: field 1: expected a separator after the closing quote (got 'b')", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_int_equal(fs_csv_split_blank(&c, &err), 0);
    expect_fields(&c, 3, "lots", "of", "blanks");
    /* Field array growth (16 -> 32), with an injected failure first. */
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    fs_alloc_fail_after(1);
    int rc = fs_csv_split(&c, ',', &err);
    fs_alloc_fail_after(0);
    assert_int_equal(rc, FS_ENOMEM);
    snprintf(want, sizeof want, "%s:7: out of memory", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(fs_csv_next_line(&c, &err), 1);
    assert_int_equal(fs_csv_split(&c, ',', &err), 0);
    assert_int_equal(c.n_fields, 18);
    assert_string_equal(c.fields[17].s, "18");
    assert_int_equal(fs_csv_next_line(&c, &err), 0);
    fs_csv_close(&c);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ------------------------------------------------------------------ */
/* The example fixture, field by field.                                */

static void check_example(const readout_t *r)
{
    fs_job_t e[6];
    job(&e[0], 1, 0, 8, S(3600));
    e[0].tenant = 0;
    e[0].gpu_type = 0;
    e[0].estimate = S(7200);
    e[0].rec_start = 12500000;
    e[0].rec_end = 3612500000;
    e[0].rec_state = FS_JOB_REC_COMPLETED;
    job(&e[1], 2, 500000, 1, 90250000);
    e[1].tenant = 1;
    e[1].priority = 5;
    e[1].gpu_milli = 250;
    e[1].job_class = 1;
    job(&e[2], 3, 500000, 4, S(1000));
    e[2].tenant = 0;
    e[2].gpu_type = 1;
    e[2].priority = -3;
    e[2].rec_state = FS_JOB_REC_KILLED;
    job(&e[3], 4, 12000001, 1, 1);
    e[3].gpu_type = 2;
    job(&e[4], 5, S(3600), 64, S(86400));
    e[4].tenant = 2;
    e[4].gpu_type = 0;
    e[4].estimate = S(172800);
    e[4].priority = INT32_MAX;
    e[4].job_class = 2;
    e[4].rec_start = S(3700);
    e[4].rec_end = S(90100);
    e[4].rec_state = FS_JOB_REC_NODE_FAIL;
    job(&e[5], 6, S(3600), 2, S(600));   /* 3600.0000004 rounds to 3600 s */
    e[5].tenant = 3;
    e[5].gpu_type = 1;
    e[5].estimate = S(600);
    e[5].rec_start = S(3600);
    e[5].rec_end = 4200500000;
    e[5].rec_state = FS_JOB_REC_FAILED;
    static const char *const tenants[] = {"research", "prod, inference", "research", NULL,
                                          "intern", "prod"};
    static const char *const types[] = {"H100", NULL, "A100", "T4", "H100", "A100"};
    assert_int_equal(r->n, 6);
    assert_int_equal(r->skipped, 0);
    for (int i = 0; i < 6; i++) {
        assert_job_equal(&r->jobs[i], &e[i]);
        assert_name(r->tenants[i], tenants[i]);
        assert_name(r->gpu_types[i], types[i]);
    }
}

static void test_example_fixture(void **state)
{
    int64_t live0 = fs_alloc_live();
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all(FS_TEST_DATA "/traces/native_example.csv", NULL, 4, &r, &err), 0);
    check_example(&r);
    readout_free(&r);
    /* The gzip copy (made by gzip(1)) reads the same, in any batch size. */
    assert_int_equal(read_all(FS_TEST_DATA "/traces/native_example.csv.gz", NULL, 1, &r, &err), 0);
    check_example(&r);
    readout_free(&r);

    /* gzip is recognised by its magic bytes, not by the name: the gzip file
     * named .txt and the plain file named .gz both read the same. */
    size_t len;
    char *gzbytes = fs_test_read(FS_TEST_DATA "/traces/native_example.csv.gz", &len);
    char *plain = fs_test_read(FS_TEST_DATA "/traces/native_example.csv", NULL);
    assert_non_null(gzbytes);
    assert_non_null(plain);
    char *as_txt = tmp_path("example.txt");
    char *as_gz = tmp_path("example.gz");
    FILE *f = fopen(as_txt, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(gzbytes, 1, len, f), len);
    fclose(f);
    assert_int_equal(fs_test_write(as_gz, plain), 0);
    assert_int_equal(read_all(as_txt, NULL, 5, &r, &err), 0);
    check_example(&r);
    readout_free(&r);
    assert_int_equal(read_all(as_gz, NULL, 5, &r, &err), 0);
    check_example(&r);
    readout_free(&r);
    free(as_txt);
    free(as_gz);
    free(gzbytes);
    free(plain);

    /* The name tables of the source, in order of first appearance. */
    fs_source_t *src;
    assert_int_equal(fs_native_open(FS_TEST_DATA "/traces/native_example.csv", NULL, &src, &err), 0);
    fs_job_t buf[16];
    size_t n;
    assert_int_equal(fs_source_next(src, buf, 16, &n, &err), 0);
    assert_int_equal(n, 6);
    assert_int_equal(fs_source_next(src, buf, 16, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(fs_source_tenant_count(src), 4);
    assert_string_equal(fs_source_tenant_name(src, 0), "research");
    assert_string_equal(fs_source_tenant_name(src, 1), "prod, inference");
    assert_string_equal(fs_source_tenant_name(src, 2), "intern");
    assert_string_equal(fs_source_tenant_name(src, 3), "prod");
    assert_null(fs_source_tenant_name(src, 4));
    assert_null(fs_source_tenant_name(src, -1));
    assert_int_equal(fs_source_gpu_type_count(src), 3);
    assert_string_equal(fs_source_gpu_type_name(src, 0), "H100");
    assert_string_equal(fs_source_gpu_type_name(src, 1), "A100");
    assert_string_equal(fs_source_gpu_type_name(src, 2), "T4");
    assert_int_equal(fs_source_next(src, buf, 0, &n, &err), FS_EINVAL);
    fs_source_destroy(src);

    /* Only the required columns: everything else takes fs_job_init's values. */
    assert_int_equal(read_all(FS_TEST_DATA "/traces/native_minimal.csv", NULL, 2, &r, &err), 0);
    assert_int_equal(r.n, 3);
    fs_job_t e;
    job(&e, 10, 0, 1, S(60));
    assert_job_equal(&r.jobs[0], &e);
    job(&e, 11, S(30), 2, 120500000);
    assert_job_equal(&r.jobs[1], &e);
    job(&e, 12, S(30), 16, S(7200));
    assert_job_equal(&r.jobs[2], &e);
    readout_free(&r);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Number forms: exponents, signs, padding, rounding at the 7th decimal,
 * sub-microsecond durations, the largest accepted values. */
static void test_number_forms(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("numbers.csv");
    assert_int_equal(fs_test_write(path,
        "id,submit,gpus,duration,estimate,priority,rec_start\n"
        "0,0.0000004,1,0.0000004,1e-7,-2147483648,0\n"
        "1,+0.0000005,+2,1.5e3,2E+1,+7,-0\n"
        "18446744073709551615,12.3456785,2147483648,12.3456784,0.1,0,1e10\n"
        "3,31557600000,1,31557600000,31557600000.000000,2147483647,31557600000\n"), 0);
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all(path, NULL, 3, &r, &err), 0);
    assert_int_equal(r.n, 4);
    fs_job_t e;
    job(&e, 0, 0, 1, 1);            /* 0.4 us: a positive duration, kept as 1 us */
    e.estimate = 1;
    e.priority = INT32_MIN;
    e.rec_start = 0;
    assert_job_equal(&r.jobs[0], &e);
    job(&e, 1, 1, 2, S(1500));      /* 0.5 us rounds up */
    e.estimate = S(20);
    e.priority = 7;
    e.rec_start = 0;
    assert_job_equal(&r.jobs[1], &e);
    job(&e, UINT64_MAX, 12345679, UINT32_C(1) << 31, 12345678);
    e.estimate = 100000;
    e.rec_start = S(10000000000);
    assert_job_equal(&r.jobs[2], &e);
    job(&e, 3, FS_TIME_MAX_INPUT, 1, FS_TIME_MAX_INPUT);
    e.estimate = FS_TIME_MAX_INPUT;
    e.priority = INT32_MAX;
    e.rec_start = FS_TIME_MAX_INPUT;
    assert_job_equal(&r.jobs[3], &e);
    readout_free(&r);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* time_scale multiplies durations and estimates, nothing else. */
static void test_time_scale(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("scale.csv");
    assert_int_equal(fs_test_write(path,
        "id,submit,gpus,duration,estimate,rec_start,rec_end\n"
        "1,10,1,100,200.000001,11,111\n"), 0);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    assert_int_equal(o.lenient, 0);
    assert_true(o.time_scale == 1.0);
    o.time_scale = 2.5;
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all(path, &o, 8, &r, &err), 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.jobs[0].submit, S(10));
    assert_int_equal(r.jobs[0].duration, S(250));
    assert_int_equal(r.jobs[0].estimate, 500000003);    /* 200000001 us * 2.5, rounded */
    assert_int_equal(r.jobs[0].rec_start, S(11));
    assert_int_equal(r.jobs[0].rec_end, S(111));
    readout_free(&r);

    char want[4200];
    double bad[] = {0, -1, NAN, INFINITY};
    for (size_t i = 0; i < 4; i++) {
        o.time_scale = bad[i];
        fs_source_t *src = NULL;
        assert_int_equal(fs_native_open(path, &o, &src, &err), FS_EINVAL);
        assert_null(src);
        snprintf(want, sizeof want, "%s: time_scale must be a finite number > 0", path);
        assert_non_null(strstr(err.msg, want));
    }
    /* A scale that pushes a duration past the limit is a row error. */
    assert_int_equal(fs_test_write(path, "id,submit,gpus,duration\n1,0,1,31557600000\n"), 0);
    o.time_scale = 2;
    assert_int_equal(read_all(path, &o, 8, &r, &err), FS_EINVAL);
    snprintf(want, sizeof want, "%s:2: field duration: expected a duration that stays <= "
             "31557600000 s after time_scale (got '31557600000')", path);
    assert_string_equal(err.msg, want);
    readout_free(&r);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* mig_profile: the reader checks the syntax itself and asks the hook
 * (fs_trace_opts_t.mig_profile, the model's table when a scenario reads the
 * trace) which names exist; an unknown name is a row error at FILE:LINE. */
static void test_mig_profile_names(void **state)
{
    (void)state;
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("mig.csv");
    assert_int_equal(fs_test_write(path, "id,submit,gpus,duration,mig_profile\n"
                                         "1,0,2,100,3g.40gb\n"
                                         "2,5,1,100,2g.25gb\n"), 0);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    assert_null(o.mig_profile);
    readout_t r;
    fs_error_t err;
    /* no hook: both names are well formed */
    assert_int_equal(read_all(path, &o, 8, &r, &err), 0);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.jobs[0].mig, fs_mig_code_find("3g.40gb", 7));
    assert_int_equal(r.jobs[0].gpu_milli, 428);
    assert_int_equal(r.jobs[1].mig, 2 << 16 | 25 << 1);
    readout_free(&r);
    /* the model's names: 2g.25gb is no GPU's profile */
    o.mig_profile = fs_mig_code_find;
    assert_int_equal(read_all(path, &o, 8, &r, &err), FS_EINVAL);
    char want[4200];
    snprintf(want, sizeof want, "%s:3: field mig_profile: expected a MIG profile name such as "
             "1g.10gb or 3g.40gb (docs/mig.md) or empty (got '2g.25gb')", path);
    assert_string_equal(err.msg, want);
    readout_free(&r);
    /* malformed: refused with or without the hook */
    assert_int_equal(fs_test_write(path, "id,submit,gpus,duration,mig_profile\n1,0,1,100,1g.10GB\n"),
                     0);
    o.mig_profile = NULL;
    assert_int_equal(read_all(path, &o, 8, &r, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, ":2: field mig_profile"));
    readout_free(&r);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ------------------------------------------------------------------ */
/* Strict-mode errors: each with its exact message.                    */

typedef struct err_case {
    const char *text;
    int code;
    const char *suffix;     /* message after the path */
} err_case_t;

#define HDR "id,submit,gpus,duration\n"
#define FULL "id,submit,gpus,duration,estimate,tenant,gpu_type,priority,gpu_milli,class," \
             "rec_start,rec_end,rec_state\n"
/* A header with every column up to single_node; the writer's adds mig_profile. */
#define FULL_W "id,submit,gpus,duration,estimate,tenant,gpu_type,priority,gpu_milli,class," \
               "rec_start,rec_end,rec_state,single_node\n"
#define WRITER_W "id,submit,gpus,duration,estimate,tenant,gpu_type,priority,gpu_milli,class," \
                 "rec_start,rec_end,rec_state,single_node,mig_profile,gpu_util,gpu_mem\n"
#define KNOWN "(known columns: id, submit, gpus, duration, estimate, tenant, gpu_type, " \
              "priority, gpu_milli, class, rec_start, rec_end, rec_state, single_node, mig_profile, " \
              "gpu_util, gpu_mem)"
#define NAME_MSG "expected a UTF-8 name without control characters"

static const err_case_t k_errors[] = {
    /* header */
    {"", FS_EINVAL, ": empty file (expected a header line naming the columns)"},
    {"# only a comment\n\n   \n", FS_EINVAL,
     ": empty file (expected a header line naming the columns)"},
    {"id,submit,duration\n1,0,5\n", FS_EINVAL, ":1: missing required column 'gpus'"},
    {"gpus,submit,duration\n", FS_EINVAL, ":1: missing required column 'id'"},
    {"# comment\n\nid,gpus,submit\n", FS_EINVAL, ":3: missing required column 'duration'"},
    {"id,submit,gpus,duration,color\n", FS_EINVAL, ":1: unknown column 'color' " KNOWN},
    {"id,submit,gpus,duration,\n", FS_EINVAL, ":1: unknown column '' " KNOWN},
    {"id,submit,GPUS,duration\n", FS_EINVAL, ":1: unknown column 'GPUS' " KNOWN},
    {"id,submit,gpus,duration,gpus\n", FS_EINVAL, ":1: duplicate column 'gpus' (fields 3 and 5)"},
    {"id,\"submit\n", FS_EINVAL, ":1: field 2: unterminated quoted field"},
    /* shape of a row */
    {HDR "1,0,1\n", FS_EINVAL, ":2: expected 4 fields as in the header, got 3"},
    {HDR "1,0,1,5\n2,0,1,5,6\n", FS_EINVAL, ":3: expected 4 fields as in the header, got 5"},
    {HDR "1,0,1,\"5\n", FS_EINVAL, ":2: field 4: unterminated quoted field"},
    /* id */
    {HDR "x,0,1,5\n", FS_EINVAL, ":2: field id: expected an unsigned integer id (got 'x')"},
    {HDR "-1,0,1,5\n", FS_EINVAL, ":2: field id: expected an unsigned integer id (got '-1')"},
    {HDR "18446744073709551616,0,1,5\n", FS_EINVAL,
     ":2: field id: expected an unsigned integer id (got '18446744073709551616')"},
    {HDR ",0,1,5\n", FS_EINVAL, ":2: field id: expected an unsigned integer id (got '')"},
    /* submit */
    {HDR "1,abc,1,5\n", FS_EINVAL, ":2: field submit: expected a time in seconds (got 'abc')"},
    {HDR "1,,1,5\n", FS_EINVAL, ":2: field submit: expected a time in seconds (got '')"},
    {HDR "1,1.2.3,1,5\n", FS_EINVAL, ":2: field submit: expected a time in seconds (got '1.2.3')"},
    {HDR "1,0x10,1,5\n", FS_EINVAL, ":2: field submit: expected a time in seconds (got '0x10')"},
    {HDR "1,-3,1,5\n", FS_EINVAL, ":2: field submit: expected a time in seconds >= 0 (got '-3')"},
    {HDR "1,nan,1,5\n", FS_EINVAL, ":2: field submit: expected a finite number (got 'nan')"},
    {HDR "1,inf,1,5\n", FS_EINVAL, ":2: field submit: expected a finite number (got 'inf')"},
    {HDR "1,-Infinity,1,5\n", FS_EINVAL,
     ":2: field submit: expected a finite number (got '-Infinity')"},
    {HDR "1,31557600000.000001,1,5\n", FS_EINVAL,
     ":2: field submit: expected a time in seconds <= 31557600000 (got '31557600000.000001')"},
    {HDR "1,99999999999999999999,1,5\n", FS_EINVAL,
     ":2: field submit: expected a time in seconds <= 31557600000 (got '99999999999999999999')"},
    {HDR "1,1e11,1,5\n", FS_EINVAL,
     ":2: field submit: expected a time in seconds <= 31557600000 (got '1e11')"},
    {HDR "1,1e999,1,5\n", FS_EINVAL,
     ":2: field submit: expected a time in seconds <= 31557600000 (got '1e999')"},
    /* gpus */
    {HDR "1,0,0,5\n", FS_EINVAL, ":2: field gpus: expected an integer in 1..2147483648 (got '0')"},
    {HDR "1,0,2147483649,5\n", FS_EINVAL,
     ":2: field gpus: expected an integer in 1..2147483648 (got '2147483649')"},
    {HDR "1,0,abc,5\n", FS_EINVAL,
     ":2: field gpus: expected an integer in 1..2147483648 (got 'abc')"},
    {HDR "1,0,2.0,5\n", FS_EINVAL,
     ":2: field gpus: expected an integer in 1..2147483648 (got '2.0')"},
    {HDR "1,0,-4,5\n", FS_EINVAL, ":2: field gpus: expected an integer in 1..2147483648 (got '-4')"},
    /* duration */
    {HDR "1,0,1,-5\n", FS_EINVAL, ":2: field duration: expected a duration in seconds > 0 (got '-5')"},
    {HDR "1,0,1,0\n", FS_EINVAL, ":2: field duration: expected a duration in seconds > 0 (got '0')"},
    {HDR "1,0,1,0.000\n", FS_EINVAL,
     ":2: field duration: expected a duration in seconds > 0 (got '0.000')"},
    {HDR "1,0,1,0e5\n", FS_EINVAL, ":2: field duration: expected a duration in seconds > 0 (got '0e5')"},
    {HDR "1,0,1,\n", FS_EINVAL, ":2: field duration: expected a duration in seconds (got '')"},
    {HDR "1,0,1,5s\n", FS_EINVAL, ":2: field duration: expected a duration in seconds (got '5s')"},
    {HDR "1,0,1,NaN\n", FS_EINVAL, ":2: field duration: expected a finite number (got 'NaN')"},
    {HDR "1,0,1,1e12\n", FS_EINVAL,
     ":2: field duration: expected a duration in seconds <= 31557600000 (got '1e12')"},
    /* optional fields */
    {FULL "1,0,1,5,0,,,,,,,,\n", FS_EINVAL,
     ":2: field estimate: expected a duration in seconds > 0 (got '0')"},
    {FULL "1,0,1,5,-1,,,,,,,,\n", FS_EINVAL,
     ":2: field estimate: expected a duration in seconds > 0 (got '-1')"},
    {FULL "1,0,1,5,,,,2147483648,,,,,\n", FS_EINVAL,
     ":2: field priority: expected an integer in -2147483648..2147483647 (got '2147483648')"},
    {FULL "1,0,1,5,,,,--1,,,,,\n", FS_EINVAL,
     ":2: field priority: expected an integer in -2147483648..2147483647 (got '--1')"},
    {FULL "1,0,1,5,,,,-+1,,,,,\n", FS_EINVAL,
     ":2: field priority: expected an integer in -2147483648..2147483647 (got '-+1')"},
    {FULL "1,0,1,5,,,,,0,,,,\n", FS_EINVAL,
     ":2: field gpu_milli: expected an integer in 1..1000 (got '0')"},
    {FULL "1,0,1,5,,,,,1001,,,,\n", FS_EINVAL,
     ":2: field gpu_milli: expected an integer in 1..1000 (got '1001')"},
    {FULL "1,0,1,5,,,,,0.5,,,,\n", FS_EINVAL,
     ":2: field gpu_milli: expected an integer in 1..1000 (got '0.5')"},
    {FULL "1,0,2,5,,,,,500,,,,\n", FS_EINVAL,
     ":2: field gpu_milli: expected 1000 when gpus > 1 (got '500')"},
    {FULL "1,0,1,5,,,,,,-1,,,\n", FS_EINVAL,
     ":2: field class: expected an integer in 0..2147483647 (got '-1')"},
    {FULL "1,0,1,5,,,,,,,x,,\n", FS_EINVAL,
     ":2: field rec_start: expected a time in seconds (got 'x')"},
    {FULL "1,0,1,5,,,,,,,,-2,\n", FS_EINVAL,
     ":2: field rec_end: expected a time in seconds >= 0 (got '-2')"},
    {FULL "1,0,1,5,,,,,,,10,5,\n", FS_EINVAL,
     ":2: field rec_end: expected a time >= rec_start (got '5')"},
    {FULL "1,0,1,5,,,,,,,,,done\n", FS_EINVAL,
     ":2: field rec_state: expected one of completed, failed, killed, timeout, node_fail, "
     "running, unknown (got 'done')"},
    {FULL "1,0,1,5,,,,,,,,,Completed\n", FS_EINVAL,
     ":2: field rec_state: expected one of completed, failed, killed, timeout, node_fail, "
     "running, unknown (got 'Completed')"},
    /* names: UTF-8 without control characters */
    {FULL "1,0,1,5,,\xff\xfe,,,,,,,\n", FS_EINVAL, ":2: field tenant: " NAME_MSG " (got '\\xff\\xfe')"},
    {FULL "1,0,1,5,,ab\xc0\xaf,,,,,,,\n", FS_EINVAL,
     ":2: field tenant: " NAME_MSG " (got 'ab\\xc0\\xaf')"},
    {FULL "1,0,1,5,,\xed\xa0\x80,,,,,,,\n", FS_EINVAL,
     ":2: field tenant: " NAME_MSG " (got '\\xed\\xa0\\x80')"},
    {FULL "1,0,1,5,,\xe2\x82,,,,,,,\n", FS_EINVAL, ":2: field tenant: " NAME_MSG " (got '\\xe2\\x82')"},
    {FULL "1,0,1,5,,\xf4\x90\x80\x80,,,,,,,\n", FS_EINVAL,
     ":2: field tenant: " NAME_MSG " (got '\\xf4\\x90\\x80\\x80')"},
    {FULL "1,0,1,5,,a\tb,,,,,,,\n", FS_EINVAL, ":2: field tenant: " NAME_MSG " (got 'a\\x09b')"},
    {FULL "1,0,1,5,,,H100\x01,,,,,,\n", FS_EINVAL,
     ":2: field gpu_type: " NAME_MSG " (got 'H100\\x01')"},
    /* single_node: 0 or 1 */
    {FULL_W "1,0,1,5,,,,,,,,,,2\n", FS_EINVAL, ":2: field single_node: expected 0 or 1 (got '2')"},
    {FULL_W "1,0,1,5,,,,,,,,,,yes\n", FS_EINVAL,
     ":2: field single_node: expected 0 or 1 (got 'yes')"},
    /* gpu_util: a utilization from 0 to 1, or empty */
    {"id,submit,gpus,duration,gpu_util\n1,0,1,5,1.5\n", FS_EINVAL,
     ":2: field gpu_util: expected a utilization from 0 to 1, or empty (got '1.5')"},
    {"id,submit,gpus,duration,gpu_util\n1,0,1,5,x\n", FS_EINVAL,
     ":2: field gpu_util: expected a utilization from 0 to 1, or empty (got 'x')"},
    {"id,submit,gpus,duration,gpu_util\n1,0,1,5,-0.1\n", FS_EINVAL,
     ":2: field gpu_util: expected a utilization from 0 to 1, or empty (got '-0.1')"},
    {"id,submit,gpus,duration,gpu_util\n1,0,1,5,nan\n", FS_EINVAL,
     ":2: field gpu_util: expected a utilization from 0 to 1, or empty (got 'nan')"},
    /* gpu_mem: a GPU memory use in GB from 0 to 221, or empty */
    {"id,submit,gpus,duration,gpu_mem\n1,0,1,5,221.5\n", FS_EINVAL,
     ":2: field gpu_mem: expected a GPU memory use in GB from 0 to 221, or empty (got '221.5')"},
    {"id,submit,gpus,duration,gpu_mem\n1,0,1,5,8GB\n", FS_EINVAL,
     ":2: field gpu_mem: expected a GPU memory use in GB from 0 to 221, or empty (got '8GB')"},
    {"id,submit,gpus,duration,gpu_mem\n1,0,1,5,-1\n", FS_EINVAL,
     ":2: field gpu_mem: expected a GPU memory use in GB from 0 to 221, or empty (got '-1')"},
    /* order of rows: physical line numbers count comments and blanks */
    {HDR "1,10,1,5\n# c\n\n2,9.5,1,5\n", FS_EINVAL,
     ":5: field submit: expected a time >= 10.000000, the previous row's submit (rows must be "
     "sorted by submit) (got '9.5')"},
    {HDR "1,10,1,5\n2,10,1,5\n3,10.000001,1,5\n4,10,1,5\n", FS_EINVAL,
     ":5: field submit: expected a time >= 10.000001, the previous row's submit (rows must be "
     "sorted by submit) (got '10')"},
};

static void test_strict_errors(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("bad.csv");
    char want[4200];
    for (size_t i = 0; i < sizeof k_errors / sizeof k_errors[0]; i++) {
        const err_case_t *c = &k_errors[i];
        assert_int_equal(fs_test_write(path, c->text), 0);
        readout_t r;
        fs_error_t err;
        fs_error_clear(&err);
        int rc = read_all(path, NULL, 4096, &r, &err);
        snprintf(want, sizeof want, "%s%s", path, c->suffix);
        if (rc != c->code || strcmp(err.msg, want) != 0) {
            print_error("case %zu: got %s '%s'\n   want %s '%s'\n", i, fs_error_name(rc),
                        err.msg, fs_error_name(c->code), want);
            fail();
        }
        assert_int_equal(err.code, c->code);
        readout_free(&r);
    }
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A header alone is a valid, empty trace; so is a header after comments. */
static void test_header_only(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("empty.csv");
    const char *texts[] = {HDR, "id,submit,gpus,duration", "# c\n\n" HDR "# c\n\n",
                           "\xEF\xBB\xBFid,submit,gpus,duration\r\n"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(fs_test_write(path, texts[i]), 0);
        readout_t r;
        fs_error_t err;
        assert_int_equal(read_all(path, NULL, 16, &r, &err), 0);
        assert_int_equal(r.n, 0);
        readout_free(&r);
    }
    /* A missing file. */
    char *missing = tmp_path("none.csv");
    fs_source_t *src = (fs_source_t *)&src;
    fs_error_t err;
    assert_int_equal(fs_native_open(missing, NULL, &src, &err), FS_EIO);
    assert_null(src);
    char want[4200];
    snprintf(want, sizeof want, "cannot open %s: No such file or directory", missing);
    assert_string_equal(err.msg, want);
    free(missing);
    /* A directory opens but cannot be read: an I/O error naming line 1. */
    assert_int_equal(fs_native_open(g_dir, NULL, &src, &err), FS_EIO);
    assert_null(src);
    snprintf(want, sizeof want, "%s:1: read error: Is a directory", g_dir);
    assert_string_equal(err.msg, want);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* A line longer than the 1 MiB buffer is an error with its line number. */
static void test_long_line(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("long.csv");
    size_t n = FS_CSV_BUF_DEFAULT + 100;
    char *text = malloc(n + 64);
    assert_non_null(text);
    int o = sprintf(text, HDR "1,0,1,5\n2,0,1,");
    memset(text + o, '9', n);
    strcpy(text + o + n, "\n");
    assert_int_equal(fs_test_write(path, text), 0);
    free(text);
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all(path, NULL, 16, &r, &err), FS_EINVAL);
    char want[4200];
    snprintf(want, sizeof want, "%s:3: line longer than %zu bytes", path, FS_CSV_BUF_DEFAULT - 2);
    assert_string_equal(err.msg, want);
    readout_free(&r);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Lenient: bad rows are skipped and counted; good rows come through; the
 * order check uses the last accepted row; header errors stay fatal. */
static void test_lenient(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("lenient.csv");
    assert_int_equal(fs_test_write(path,
        "id,submit,gpus,duration,tenant\n"
        "1,0,1,5,a\n"
        "2,1,0,5,bad-gpus\n"            /* skipped */
        "3,2,1,5\n"                     /* skipped: field count */
        "4,100,1,5,bad-order-later\n"   /* accepted */
        "5,50,1,5,unsorted\n"           /* skipped: before 100 */
        "6,100,1,nan,x\n"               /* skipped */
        "7,100,1,5,\"open\n"            /* skipped: quote */
        "8,100,1,5,\xff\n"              /* skipped: UTF-8; the name is not interned */
        "9,101,2,7,b\n"), 0);
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    readout_t r;
    fs_error_t err;
    assert_int_equal(read_all(path, &o, 2, &r, &err), 0);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.skipped, 6);
    assert_int_equal(r.jobs[0].id, 1);
    assert_int_equal(r.jobs[1].id, 4);
    assert_int_equal(r.jobs[2].id, 9);
    assert_int_equal(r.jobs[2].tenant, 2);      /* a, bad-order-later, b */
    assert_string_equal(r.tenants[2], "b");
    readout_free(&r);

    /* The same file in strict mode stops at line 3; skipped() is 0. */
    assert_int_equal(read_all(path, NULL, 2, &r, &err), FS_EINVAL);
    char want[4200];
    snprintf(want, sizeof want,
             "%s:3: field gpus: expected an integer in 1..2147483648 (got '0')", path);
    assert_string_equal(err.msg, want);
    readout_free(&r);

    /* Header errors are fatal in lenient mode too. */
    assert_int_equal(fs_test_write(path, "id,submit,gpus\n1,0,1\n"), 0);
    assert_int_equal(read_all(path, &o, 2, &r, &err), FS_EINVAL);
    snprintf(want, sizeof want, "%s:1: missing required column 'duration'", path);
    assert_string_equal(err.msg, want);
    readout_free(&r);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ------------------------------------------------------------------ */
/* Writer and round trips.                                             */

static const char *const k_types[] = {"H100", "A100 80GB", "T4"};

/* A synthetic workload dressed up so that every column is exercised. */
static fs_source_t *make_synth(uint64_t max_jobs, double rate)
{
    static const uint32_t sizes[] = {1, 2, 8, 64};
    static const double probs[] = {0.6, 0.2, 0.15, 0.05};
    static const char *const tenants[] = {"research", "prod, \"live\"", " spaced ", "d\xc3\xa9v"};
    fs_synth_cfg_t c;
    fs_synth_cfg_init(&c);
    c.rate = rate;
    c.horizon = FS_TIME_MAX_INPUT;
    c.max_jobs = max_jobs;
    c.n_sizes = 4;
    c.sizes = fs_malloc(sizeof sizes);
    c.size_probs = fs_malloc(sizeof probs);
    memcpy(c.sizes, sizes, sizeof sizes);
    memcpy(c.size_probs, probs, sizeof probs);
    c.duration.kind = FS_DIST_LOGNORMAL;
    c.duration.median = 600;
    c.duration.sigma = 2;
    assert_int_equal(fs_dist_prepare(&c.duration, NULL), 0);
    c.n_tenants = 4;
    c.tenant_names = fs_calloc(4, sizeof *c.tenant_names);
    c.tenant_shares = fs_malloc(4 * sizeof *c.tenant_shares);
    for (int i = 0; i < 4; i++) {
        c.tenant_names[i] = fs_strdup(tenants[i]);
        c.tenant_shares[i] = 0.25;
    }
    c.estimate_factor = 1.25;
    fs_source_t *src;
    fs_error_t err;
    assert_int_equal(fs_synth_create(&c, 77, 0, &src, &err), 0);
    fs_synth_cfg_release(&c);
    return src;
}

/* Fills the columns the generator leaves unknown, from the job id. */
static const char *dress(fs_job_t *j)
{
    uint64_t k = j->id;
    if (j->gpus == 1 && k % 3 == 0)
        j->gpu_milli = (uint32_t)(k % 999) + 1;
    j->priority = (int32_t)(k % 7) - 3;
    j->job_class = (int32_t)(k % 4);
    if (k % 5) {
        j->rec_start = j->submit + (fs_time_t)(k % 1000) * 1000001;
        j->rec_end = j->rec_start + j->duration;
        j->rec_state = (int32_t)(k % 7);
    }
    if (k % 11 == 0)
        j->estimate = -1;
    if (k % 6 == 1)
        j->flags |= FS_JOB_SINGLE_NODE;     /* a pod-level job converted to native */
    if (k % 5 == 2)     /* a recorded GPU utilization, whole percents */
        j->rec_util = fs_job_util_code((double)(k % 101) / 100.0);
    if (k % 7 == 3)     /* a recorded GPU memory use, every code in turn */
        j->rec_fb = (uint8_t)(1 + k % 255);
    if (k % 9 == 4) {   /* a MIG pod: its share is its profile's, whatever its size */
        j->mig = fs_mig_code_find(k % 2 ? "3g.40gb" : "1g.10gb+me", k % 2 ? 7 : 10);
        j->gpu_milli = fs_mig_code_milli(j->mig);
    }
    return k % 4 == 0 ? NULL : k_types[k % 3];
}

/* Writes n dressed synthetic jobs to path; returns them (malloc'd) with
 * their names. */
static fs_job_t *write_synth(const char *path, size_t n, char ***tenants, const char ***types)
{
    fs_source_t *src = make_synth(n, 2.0);
    fs_native_writer_t *w;
    fs_error_t err;
    assert_int_equal(fs_native_writer_open(path, &w, &err), 0);
    fs_job_t *all = malloc(n * sizeof *all);
    *tenants = malloc(n * sizeof **tenants);
    *types = malloc(n * sizeof **types);
    size_t got = 0, k;
    fs_job_t buf[1000];
    while (fs_source_next(src, buf, 1000, &k, &err) == 0 && k) {
        for (size_t i = 0; i < k; i++, got++) {
            const char *type = dress(&buf[i]);
            const char *tenant = fs_source_tenant_name(src, buf[i].tenant);
            assert_int_equal(fs_native_writer_put(w, &buf[i], tenant, type, &err), 0);
            all[got] = buf[i];
            (*tenants)[got] = dup_or_null(tenant);
            (*types)[got] = type;
        }
    }
    assert_int_equal(got, n);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    assert_true(file_exists(tmp));
    assert_false(file_exists(path));
    assert_int_equal(fs_native_writer_close(w, &err), 0);
    assert_false(file_exists(tmp));
    assert_true(file_exists(path));
    fs_source_destroy(src);
    return all;
}

static void round_trip(const char *name, int gz)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path(name);
    const size_t N = 20000;
    char **tenants;
    const char **types;
    fs_job_t *want = write_synth(path, N, &tenants, &types);

    /* The bytes say what the file is. */
    size_t len;
    char *bytes = fs_test_read(path, &len);
    assert_non_null(bytes);
    if (gz) {
        assert_int_equal((unsigned char)bytes[0], 0x1f);
        assert_int_equal((unsigned char)bytes[1], 0x8b);
    } else {
        assert_memory_equal(bytes, WRITER_W, strlen(WRITER_W));
    }
    free(bytes);

    readout_t r;
    fs_error_t err;
    size_t n_mig = 0;
    assert_int_equal(read_all(path, NULL, 999, &r, &err), 0);
    assert_int_equal(r.n, N);
    for (size_t i = 0; i < N; i++) {
        fs_job_t a = r.jobs[i], b = want[i];
        /* Indices are the reader's own (order of first appearance): compare
         * the names instead. */
        assert_string_equal(r.tenants[i], tenants[i]);
        assert_name(r.gpu_types[i], types[i]);
        a.tenant = b.tenant = 0;
        a.gpu_type = b.gpu_type = 0;
        assert_job_equal(&a, &b);
        n_mig += b.mig != 0;
        free(tenants[i]);
    }
    assert_true(n_mig > 1000);   /* MIG pods went through the writer and back */
    readout_free(&r);
    free(want);
    free(tenants);
    free(types);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_round_trip_plain(void **state) { round_trip("rt.csv", 0); }
static void test_round_trip_gzip(void **state) { round_trip("rt.csv.gz", 1); }

/* The writer refuses jobs the reader would refuse; abort leaves nothing;
 * an unwritable place is FS_EIO. */
static void test_writer_errors(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("w.csv");
    fs_native_writer_t *w;
    fs_error_t err;
    assert_int_equal(fs_native_writer_open(path, &w, &err), 0);
    fs_job_t j;
    job(&j, 1, S(10), 1, S(5));
    assert_int_equal(fs_native_writer_put(w, &j, "t", NULL, &err), 0);

    struct { fs_job_t j; const char *tenant, *type, *what; } bad[8];
    for (int i = 0; i < 8; i++) {
        job(&bad[i].j, 2, S(10), 1, S(5));
        bad[i].tenant = bad[i].type = NULL;
    }
    bad[0].j.submit = S(9);
    bad[0].what = "submit earlier than the previous job's";
    bad[1].j.duration = 0;
    bad[1].what = "duration outside";
    bad[2].j.gpus = 0;
    bad[2].what = "gpus outside";
    bad[3].j.gpus = 2;
    bad[3].j.gpu_milli = 500;
    bad[3].what = "gpu_milli outside 1..1000, or fractional with gpus > 1";
    bad[4].j.rec_state = 99;
    bad[4].what = "rec_state not a known state";
    bad[5].tenant = "two\nlines";
    bad[5].what = "tenant name not UTF-8 without control characters";
    bad[6].type = "\xff";
    bad[6].what = "gpu_type name not UTF-8";
    bad[7].j.rec_start = S(20);
    bad[7].j.rec_end = S(19);
    bad[7].what = "rec_end before rec_start";
    for (int i = 0; i < 8; i++) {
        assert_int_equal(fs_native_writer_put(w, &bad[i].j, bad[i].tenant, bad[i].type, &err),
                         FS_EINVAL);
        if (!strstr(err.msg, bad[i].what) || !strstr(err.msg, ": job 2: ")) {
            print_error("case %d: '%s' lacks '%s'\n", i, err.msg, bad[i].what);
            fail();
        }
    }
    /* Still usable: empty names are unknown. */
    job(&j, 3, S(11), 1, S(5));
    assert_int_equal(fs_native_writer_put(w, &j, "", "", &err), 0);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    assert_true(file_exists(tmp));
    fs_native_writer_abort(w);
    assert_false(file_exists(tmp));
    assert_false(file_exists(path));
    fs_native_writer_abort(NULL);

    /* A directory that does not exist. */
    char *deep = tmp_path("no/such/dir/w.csv");
    assert_int_equal(fs_native_writer_open(deep, &w, &err), FS_EIO);
    assert_null(w);
    assert_non_null(strstr(err.msg, "cannot create "));
    assert_non_null(strstr(err.msg, "No such file or directory"));
    free(deep);

    /* Exact text of a written file. */
    assert_int_equal(fs_native_writer_open(path, &w, &err), 0);
    job(&j, 7, 1500000, 1, 1);
    j.gpu_milli = 250;
    j.estimate = S(3600);
    j.priority = -2;
    j.rec_start = 0;
    j.rec_end = 86400123456;
    j.rec_state = FS_JOB_REC_TIMEOUT;
    j.flags = FS_JOB_SINGLE_NODE;
    j.rec_fb = fs_job_fb_code(37.1);    /* 32 + 3 x 1.5 */
    assert_int_equal(fs_native_writer_put(w, &j, "a \"b\", c", "T4", &err), 0);
    job(&j, 8, S(31557600000), 2147483648u, FS_TIME_MAX_INPUT);
    assert_int_equal(fs_native_writer_put(w, &j, NULL, NULL, &err), 0);
    assert_int_equal(fs_native_writer_close(w, &err), 0);
    char *text = fs_test_read(path, NULL);
    assert_string_equal(text, WRITER_W
        "7,1.500000,1,0.000001,3600.000000,\"a \"\"b\"\", c\",T4,-2,250,0,0.000000,"
        "86400.123456,timeout,1,,,36.50\n"
        "8,31557600000.000000,2147483648,31557600000.000000,,,,0,1000,0,,,unknown,0,,,\n");
    free(text);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ------------------------------------------------------------------ */
/* Truncated and corrupt gzip.                                         */

static void test_truncated_gzip(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("full.csv.gz");
    char **tenants;
    const char **types;
    const size_t N = 5000;
    fs_job_t *jobs = write_synth(path, N, &tenants, &types);
    for (size_t i = 0; i < N; i++)
        free(tenants[i]);
    free(tenants);
    free(types);
    free(jobs);
    size_t len;
    char *bytes = fs_test_read(path, &len);
    assert_non_null(bytes);
    assert_true(len > 1000);

    char *cut = tmp_path("cut.csv.gz");
    /* Cut in the middle of the deflate data, cut the 8-byte trailer (CRC
     * and length) or a part of it, cut inside the gzip header: all errors,
     * never a shorter trace.  The complete rows before the cut come first
     * (read one by one here), and the error names the line the data ended
     * in: header at line 1, rows from line 2. */
    size_t cuts[] = {len / 2, len - 8, len - 1, 5};
    for (size_t k = 0; k < 4; k++) {
        FILE *f = fopen(cut, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(bytes, 1, cuts[k], f), cuts[k]);
        fclose(f);
        readout_t r;
        fs_error_t err;
        int rc = read_all(cut, NULL, 1, &r, &err);
        assert_int_equal(rc, FS_EINVAL);
        if (k == 1 || k == 2)
            assert_int_equal(r.n, N);   /* all rows were there; the end was not */
        else
            assert_true(r.n < N);
        char want[4200];
        snprintf(want, sizeof want, "%s:%zu: truncated gzip data (unexpected end of file)", cut,
                 k == 3 ? (size_t)1 : r.n + 2);
        if (strcmp(err.msg, want) != 0) {
            print_error("cut %zu: '%s'\n  want '%s'\n", cuts[k], err.msg, want);
            fail();
        }
        readout_free(&r);
    }

    /* A damaged CRC in the trailer: every row decodes, the check fails.
     * zlib drops the output of the read that failed, so the rows before it
     * come through and the error names the first line not delivered. */
    bytes[len - 8] ^= 0xff;
    FILE *f = fopen(cut, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    fclose(f);
    readout_t r;
    fs_error_t err;
    int rc = read_all(cut, NULL, 1, &r, &err);
    assert_int_equal(rc, FS_EINVAL);
    assert_true(r.n > 0 && r.n < N);
    char want[4200];
    snprintf(want, sizeof want, "%s:%zu: corrupt gzip data (incorrect data check)", cut, r.n + 2);
    assert_string_equal(err.msg, want);
    readout_free(&r);
    bytes[len - 8] ^= 0xff;

    /* A flipped byte in the deflate data: whatever it decodes to (a bad
     * row or invalid codes or a failed check), reading fails. */
    bytes[len / 2] ^= 0x55;
    f = fopen(cut, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    fclose(f);
    rc = read_all(cut, NULL, 1, &r, &err);
    assert_int_equal(rc, FS_EINVAL);
    assert_true(r.n < N);
    readout_free(&r);
    free(bytes);
    free(cut);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ------------------------------------------------------------------ */
/* Bounded memory: 300k rows in batches of 4096.                       */

static void test_bounded_memory(void **state)
{
    int64_t live0 = fs_alloc_live();
    char *path = tmp_path("big.csv");
    const size_t N = 300000;
    {
        fs_source_t *src = make_synth(N, 50.0);
        fs_native_writer_t *w;
        fs_error_t err;
        assert_int_equal(fs_native_writer_open(path, &w, &err), 0);
        fs_job_t *buf = malloc(4096 * sizeof *buf);
        size_t k;
        while (fs_source_next(src, buf, 4096, &k, &err) == 0 && k)
            for (size_t i = 0; i < k; i++) {
                const char *type = dress(&buf[i]);
                assert_int_equal(fs_native_writer_put(w, &buf[i],
                    fs_source_tenant_name(src, buf[i].tenant), type, &err), 0);
            }
        assert_int_equal(fs_native_writer_close(w, &err), 0);
        fs_source_destroy(src);
        free(buf);
    }
    fs_source_t *src;
    fs_error_t err;
    assert_int_equal(fs_native_open(path, NULL, &src, &err), 0);
    fs_job_t *buf = malloc(4096 * sizeof *buf);
    size_t n, total = 0, batches = 0;
    int64_t live_first = 0;
    uint64_t count_first = 0;
    uint64_t last_id = 0;
    int rc;
    while ((rc = fs_source_next(src, buf, 4096, &n, &err)) == 0 && n) {
        total += n;
        last_id = buf[n - 1].id;
        if (++batches == 1) {
            /* Every name has been seen by now: from here on, reading makes
             * no allocation at all. */
            assert_int_equal(fs_source_tenant_count(src), 4);
            assert_int_equal(fs_source_gpu_type_count(src), 3);
            live_first = fs_alloc_live();
            count_first = fs_alloc_count();
        } else {
            assert_int_equal(fs_alloc_live(), live_first);
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(total, N);
    assert_int_equal(last_id, N);
    assert_true(batches >= N / 4096);
    assert_int_equal(fs_alloc_count(), count_first);
    /* The open reader holds a handful of blocks: source, state, path,
     * buffer, fields, name tables, the input stream (fs_csv's zlib state
     * and its 64 KiB input buffer, one block). */
    assert_true(live_first - live0 <= 17);
    fs_source_destroy(src);
    free(buf);
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ------------------------------------------------------------------ */
/* Allocation failures: open and next, reader and writer.              */

static void alloc_failures_read(const char *path)
{
    int64_t live0 = fs_alloc_live();
    readout_t ref;
    fs_error_t err;
    assert_int_equal(read_all(path, NULL, 2, &ref, &err), 0);
    int ok = 0;
    uint64_t k;
    for (k = 1; k < 500 && !ok; k++) {
        readout_t r;
        fs_alloc_fail_after(k);
        int rc = read_all(path, NULL, 2, &r, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            assert_int_equal(r.n, ref.n);
            for (size_t i = 0; i < r.n; i++)
                assert_job_equal(&r.jobs[i], &ref.jobs[i]);
        } else {
            assert_int_equal(rc, FS_ENOMEM);
            assert_non_null(strstr(err.msg, "out of memory"));
            assert_true(r.n <= ref.n);
        }
        readout_free(&r);
        assert_int_equal(fs_alloc_live(), live0);
    }
    assert_true(ok);
    assert_true(k > 8);     /* open and next both allocate: many points failed */
    readout_free(&ref);
}

static void test_alloc_failures(void **state)
{
    int64_t live0 = fs_alloc_live();
    alloc_failures_read(FS_TEST_DATA "/traces/native_example.csv");
    alloc_failures_read(FS_TEST_DATA "/traces/native_example.csv.gz");

    /* Lenient mode too: an allocation failure is never a skipped row. */
    fs_trace_opts_t o;
    fs_trace_opts_init(&o);
    o.lenient = 1;
    int ok = 0;
    for (uint64_t k = 1; k < 500 && !ok; k++) {
        readout_t r;
        fs_error_t err;
        fs_alloc_fail_after(k);
        int rc = read_all(FS_TEST_DATA "/traces/native_example.csv", &o, 3, &r, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            assert_int_equal(r.n, 6);
        } else {
            assert_int_equal(rc, FS_ENOMEM);
            assert_non_null(strstr(err.msg, "out of memory"));
        }
        assert_int_equal(r.skipped, 0);
        readout_free(&r);
        assert_int_equal(fs_alloc_live(), live0);
    }
    assert_true(ok);

    /* The writer. */
    char *path = tmp_path("wfail.csv");
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    ok = 0;
    for (uint64_t k = 1; k < 100 && !ok; k++) {
        fs_native_writer_t *w = NULL;
        fs_error_t err;
        fs_alloc_fail_after(k);
        int rc = fs_native_writer_open(path, &w, &err);
        if (rc == 0) {
            fs_job_t j;
            job(&j, 1, 0, 1, 5);
            rc = fs_native_writer_put(w, &j, "x", NULL, &err);
            int rc2 = fs_native_writer_close(w, &err);
            rc = rc ? rc : rc2;
            ok = rc == 0;
        } else {
            assert_null(w);
            assert_int_equal(rc, FS_ENOMEM);
            assert_false(file_exists(tmp));
        }
        fs_alloc_fail_after(0);
        assert_int_equal(fs_alloc_live(), live0);
    }
    assert_true(ok);
    assert_true(file_exists(path));
    free(path);
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rec_state_names),
        cmocka_unit_test(test_strtab),
        cmocka_unit_test(test_fb_code),
        cmocka_unit_test_setup_teardown(test_csv_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_example_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(test_number_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_scale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mig_profile_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strict_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lenient, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_plain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_gzip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writer_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_gzip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bounded_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
