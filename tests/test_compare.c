/* fs_compare, fs_waits and fs_h5read on hand-made HDF5 files (written here
 * with the HDF5 C API): exact differences for two run files, paired
 * Student-t intervals over replications checked against values computed by
 * hand (t_{0.975,3} = 3.182446, t_{0.975,1} = 12.706205), significance
 * flags, the run selection of a sweep index (finished runs only, pairs by
 * replication), type-7 wait quantiles pooled and per replication, every
 * error path, and out-of-memory at every allocation without leaks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "fs_test_util.h"
#include "analysis/fs_compare.h"
#include "analysis/fs_h5read.h"
#include "analysis/fs_waits.h"
#include "sim/fs_alloc.h"
#include "sim/fs_error.h"

#define T975_3 3.182446305284263
#define T975_1 12.706204736174705

/* ---- fixtures ---- */

static hid_t str_type(size_t n)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, n);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    return t;
}

static void attr_num(hid_t fid, const char *name, hid_t type, const void *v)
{
    hid_t sid = H5Screate(H5S_SCALAR);
    hid_t aid = H5Acreate2(fid, name, type, sid, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(aid >= 0);
    H5Awrite(aid, type, v);
    H5Aclose(aid);
    H5Sclose(sid);
}

static void attr_vlstr(hid_t fid, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sid = H5Screate(H5S_SCALAR);
    hid_t aid = H5Acreate2(fid, name, t, sid, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(aid, t, &v);
    H5Aclose(aid);
    H5Sclose(sid);
    H5Tclose(t);
}

/* A run file: /summary (wait_mean f64, jobs_completed u64, a string column
 * that must be ignored), root attributes, and /jobs (submit, wait, state). */
typedef struct summary_row {
    double wait_mean;
    uint64_t jobs_completed;
    char tag[8];
} summary_row_t;

typedef struct job_row {
    double submit;
    double wait;
    int32_t state;
} job_row_t;

static void make_run(const char *path, double wait_mean, uint64_t completed, int complete,
                     const job_row_t *jobs, size_t n_jobs)
{
    hid_t fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(fid >= 0);
    int32_t c = complete;
    uint64_t rep = 3, seed = 42;
    attr_num(fid, "complete", H5T_NATIVE_INT32, &c);
    attr_num(fid, "replication", H5T_NATIVE_UINT64, &rep);
    attr_num(fid, "seed", H5T_NATIVE_UINT64, &seed);
    attr_vlstr(fid, "scenario", "name: x\n");
    summary_row_t row = {wait_mean, completed, "x"};
    const char *names[] = {"wait_mean", "jobs_completed", "tag"};
    size_t off[] = {offsetof(summary_row_t, wait_mean), offsetof(summary_row_t, jobs_completed),
                    offsetof(summary_row_t, tag)};
    hid_t st = str_type(8);
    hid_t types[] = {H5T_NATIVE_DOUBLE, H5T_NATIVE_UINT64, st};
    assert_true(H5TBmake_table("summary", fid, "summary", 3, 1, sizeof row, names, off, types,
                               8, NULL, 0, &row) >= 0);
    if (jobs) {
        hid_t en = H5Tenum_create(H5T_NATIVE_INT32);
        int32_t v0 = 0, v1 = 3;
        H5Tenum_insert(en, "completed", &v0);
        H5Tenum_insert(en, "queued", &v1);
        const char *jn[] = {"submit", "wait", "state"};
        size_t jo[] = {offsetof(job_row_t, submit), offsetof(job_row_t, wait),
                       offsetof(job_row_t, state)};
        hid_t jt[] = {H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, en};
        assert_true(H5TBmake_table("jobs", fid, "jobs", 3, n_jobs, sizeof(job_row_t), jn, jo, jt,
                                   16, NULL, 0, jobs) >= 0);
        H5Tclose(en);
    }
    H5Tclose(st);
    H5Fclose(fid);
}

/* A sweep index: /points (point, rate), /runs (point, replication, file,
 * status, wait_mean, utilization) and /stats is not needed by compare. */
typedef struct run_idx_row {
    uint32_t point;
    uint32_t replication;
    char file[24];
    char status[12];
    double wait_mean;
    double utilization;
} run_idx_row_t;

typedef struct point_row {
    uint32_t point;
    char rate[8];
} point_row_t;

static void make_index(const char *path, const run_idx_row_t *runs, size_t n,
                       const point_row_t *pts, size_t np, int status_enum)
{
    hid_t fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(fid >= 0);
    uint64_t seed = 42;
    attr_num(fid, "seed", H5T_NATIVE_UINT64, &seed);
    hid_t s8 = str_type(8), s24 = str_type(24), s12 = str_type(12);
    if (pts) {
        const char *pn[] = {"point", "rate"};
        size_t po[] = {offsetof(point_row_t, point), offsetof(point_row_t, rate)};
        hid_t pt[] = {H5T_NATIVE_UINT32, s8};
        assert_true(H5TBmake_table("points", fid, "points", 2, np, sizeof(point_row_t), pn, po,
                                   pt, 8, NULL, 0, pts) >= 0);
    }
    const char *rn[] = {"point", "replication", "file", "status", "wait_mean", "utilization"};
    size_t ro[] = {offsetof(run_idx_row_t, point),     offsetof(run_idx_row_t, replication),
                   offsetof(run_idx_row_t, file),      offsetof(run_idx_row_t, status),
                   offsetof(run_idx_row_t, wait_mean), offsetof(run_idx_row_t, utilization)};
    if (!status_enum) {
        hid_t rt[] = {H5T_NATIVE_UINT32, H5T_NATIVE_UINT32, s24, s12, H5T_NATIVE_DOUBLE,
                      H5T_NATIVE_DOUBLE};
        assert_true(H5TBmake_table("runs", fid, "runs", 6, n, sizeof *runs, rn, ro, rt, 8, NULL,
                                   0, runs) >= 0);
    } else {
        /* the same with status as an enum: ok = 0, failed = 1 */
        typedef struct {
            uint32_t point, replication;
            char file[24];
            int32_t status;
            double wait_mean, utilization;
        } erow_t;
        erow_t e[16];
        assert_true(n <= 16);
        for (size_t i = 0; i < n; i++) {
            e[i].point = runs[i].point;
            e[i].replication = runs[i].replication;
            memcpy(e[i].file, runs[i].file, sizeof e[i].file);
            e[i].status = strcmp(runs[i].status, "ok") == 0 ? 0 : 1;
            e[i].wait_mean = runs[i].wait_mean;
            e[i].utilization = runs[i].utilization;
        }
        hid_t en = H5Tenum_create(H5T_NATIVE_INT32);
        int32_t v0 = 0, v1 = 1;
        H5Tenum_insert(en, "ok", &v0);
        H5Tenum_insert(en, "failed", &v1);
        size_t eo[] = {offsetof(erow_t, point),     offsetof(erow_t, replication),
                       offsetof(erow_t, file),      offsetof(erow_t, status),
                       offsetof(erow_t, wait_mean), offsetof(erow_t, utilization)};
        hid_t rt[] = {H5T_NATIVE_UINT32, H5T_NATIVE_UINT32, s24, en, H5T_NATIVE_DOUBLE,
                      H5T_NATIVE_DOUBLE};
        assert_true(H5TBmake_table("runs", fid, "runs", 6, n, sizeof(erow_t), rn, eo, rt, 8,
                                   NULL, 0, e) >= 0);
        H5Tclose(en);
    }
    H5Tclose(s8);
    H5Tclose(s24);
    H5Tclose(s12);
    H5Fclose(fid);
}

/* Point 0: wait {10, 20, 30, 40}, util {.5, .6, .7, .8} for replications
 * 0..3; point 1: wait {12, 25, 31, 46}, util {.6, .72, .79, .91}; plus rows
 * that must be left out: point 0 rep 4 failed, point 1 rep 5 (no partner),
 * point 1 rep 6 failed.  Rows are not in replication order. */
static const run_idx_row_t RUNS[] = {
    {0, 2, "runs/p0-r2.h5", "ok", 30, 0.7},
    {0, 0, "runs/p0-r0.h5", "ok", 10, 0.5},
    {0, 1, "runs/p0-r1.h5", "ok", 20, 0.6},
    {0, 3, "runs/p0-r3.h5", "ok", 40, 0.8},
    {0, 4, "runs/p0-r4.h5", "failed", NAN, NAN},
    {1, 0, "runs/p1-r0.h5", "ok", 12, 0.6},
    {1, 3, "runs/p1-r3.h5", "ok", 46, 0.91},
    {1, 1, "runs/p1-r1.h5", "ok", 25, 0.72},
    {1, 2, "runs/p1-r2.h5", "ok", 31, 0.79},
    {1, 5, "runs/p1-r5.h5", "ok", 99, 0.99},
    {1, 6, "runs/p1-r6.h5", "failed", 1e9, 1},
};
#define N_RUNS (sizeof RUNS / sizeof RUNS[0])
static const point_row_t POINTS[] = {{0, "10/h"}, {1, "12/h"}};

/* mean and half-width of the 95% interval of 4 differences (t_{0.975,3}) */
static void hand_ci4(const double d[4], double *mean, double *half)
{
    double m = (d[0] + d[1] + d[2] + d[3]) / 4, ss = 0;
    for (int i = 0; i < 4; i++)
        ss += (d[i] - m) * (d[i] - m);
    *mean = m;
    *half = T975_3 * sqrt(ss / 3) / 2;
}

typedef struct fx {
    char *dir;
    char *a, *b, *inc, *idx, *idx_enum, *idx_nopts, *plain, *junk;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    f->dir = fs_test_tmpdir();
    f->a = fs_test_path(f->dir, "a.h5");
    f->b = fs_test_path(f->dir, "b.h5");
    f->inc = fs_test_path(f->dir, "inc.h5");
    f->idx = fs_test_path(f->dir, "index.h5");
    f->idx_enum = fs_test_path(f->dir, "index_enum.h5");
    f->idx_nopts = fs_test_path(f->dir, "index_nopts.h5");
    f->plain = fs_test_path(f->dir, "plain.h5");
    f->junk = fs_test_path(f->dir, "junk.h5");
    /* jobs: submit 0..9 h, warm-up will be 2 h; NaN waits never started */
    job_row_t jobs[] = {
        {0, 500, 0},        {3600, 400, 0},    {7200, 0, 0},     {9000, 10, 0},
        {10800, NAN, 3},    {14400, 20, 0},    {18000, 0, 0},    {21600, 30, 0},
        {25200, 100, 0},    {28800, NAN, 3},
    };
    make_run(f->a, 10.5, 100, 1, jobs, sizeof jobs / sizeof jobs[0]);
    make_run(f->b, 14, 90, 1, NULL, 0);
    make_run(f->inc, 1, 1, 0, NULL, 0);
    make_index(f->idx, RUNS, N_RUNS, POINTS, 2, 0);
    make_index(f->idx_enum, RUNS, N_RUNS, POINTS, 2, 1);
    make_index(f->idx_nopts, RUNS, 4, NULL, 0, 0);   /* point 0 only, no /points */
    hid_t fid = H5Fcreate(f->plain, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(fid);
    fs_test_write(f->junk, "this is not HDF5\n");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    fs_test_rmtree(f->dir);
    char **p[] = {&f->dir, &f->a, &f->b, &f->inc, &f->idx, &f->idx_enum, &f->idx_nopts,
                  &f->plain, &f->junk};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        free(*p[i]);
    free(f);
    return 0;
}

/* ---- tests ---- */

static const fs_compare_row_t *row_of(const fs_compare_t *c, const char *m)
{
    for (size_t i = 0; i < c->n_rows; i++)
        if (strcmp(c->rows[i].metric, m) == 0)
            return &c->rows[i];
    fail_msg("no row %s", m);
    return NULL;
}

static void test_two_runs(void **state)
{
    fx_t *f = *state;
    int64_t live0 = fs_alloc_live();
    fs_error_t err;
    fs_compare_side_t *a, *b;
    assert_int_equal(fs_compare_side_load(f->a, -1, &a, &err), 0);
    assert_int_equal(fs_compare_side_load(f->b, -1, &b, &err), 0);
    assert_int_equal(a->is_index, 0);
    assert_int_equal(a->n_reps, 1);
    assert_int_equal(a->reps[0], 3);            /* the replication attribute */
    assert_int_equal(a->n_metrics, 2);          /* the string column is no metric */
    assert_string_equal(a->metrics[0], "wait_mean");
    assert_string_equal(a->metrics[1], "jobs_completed");
    assert_double_equal(a->seed, 42, 0);
    fs_compare_t c;
    assert_int_equal(fs_compare_sides(a, b, 0.95, &c, &err), 0);
    assert_int_equal(c.paired, 0);
    assert_int_equal(c.n_rows, 2);
    const fs_compare_row_t *w = row_of(&c, "wait_mean");
    assert_double_equal(w->a, 10.5, 0);
    assert_double_equal(w->b, 14, 0);
    assert_double_equal(w->diff, 3.5, 0);
    assert_double_equal(w->rel, 3.5 / 10.5, 1e-15);
    assert_int_equal(w->ci.n, 0);
    assert_true(isnan(w->ci.lo) && isnan(w->ci.hi));
    assert_int_equal(w->significant, -1);
    const fs_compare_row_t *j = row_of(&c, "jobs_completed");
    assert_double_equal(j->diff, -10, 0);       /* u64 converted to double */

    /* the human text says why there is no interval; CSV has empty CI fields */
    char *out = fs_test_path(f->dir, "out.txt");
    FILE *fp = fopen(out, "w");
    fs_compare_print(fp, a, b, &c);
    fs_compare_print_csv(fp, a, b, &c, 1);
    fclose(fp);
    char *txt = fs_test_read(out, NULL);
    assert_non_null(strstr(txt, "No interval is possible from one run each"));
    assert_null(strstr(txt, "significant at"));
    char line[512];
    snprintf(line, sizeof line, "%s,%s,,,wait_mean,10.5,14,3.5,0.33333333333333331,0,0.95,,,\n",
             f->a, f->b);
    assert_non_null(strstr(txt, line));
    free(txt);
    free(out);
    fs_compare_release(&c);
    fs_compare_side_destroy(a);
    fs_compare_side_destroy(b);
    assert_int_equal(fs_alloc_live(), live0);
}

static void check_paired(const char *index, const char *label_a)
{
    fs_error_t err;
    fs_compare_side_t *a, *b;
    assert_int_equal(fs_compare_side_load(index, 0, &a, &err), 0);
    assert_int_equal(fs_compare_side_load(index, 1, &b, &err), 0);
    assert_string_equal(a->label, label_a);
    /* finished runs only, ascending replication */
    assert_int_equal(a->n_reps, 4);
    assert_int_equal(b->n_reps, 5);
    for (uint64_t r = 0; r < 4; r++)
        assert_int_equal(a->reps[r], r);
    assert_int_equal(b->reps[4], 5);
    assert_double_equal(fs_compare_side_value(a, 2, "wait_mean"), 30, 0);
    assert_true(isnan(fs_compare_side_value(a, 0, "nosuch")));
    /* file names resolved against the index's folder */
    const char *slash = strrchr(index, '/');
    char want[1024];
    snprintf(want, sizeof want, "%.*s/runs/p0-r2.h5", (int)(slash - index), index);
    assert_string_equal(a->files[2], want);
    assert_int_equal(a->n_metrics, 2);          /* point, replication, file, status are keys */

    fs_compare_t c;
    assert_int_equal(fs_compare_sides(a, b, 0.95, &c, &err), 0);
    assert_int_equal(c.paired, 1);
    assert_int_equal(c.n_pairs, 4);              /* rep 5 has no partner */
    assert_int_equal(c.seeds_differ, 0);
    double mean, half;
    const double dw[4] = {2, 5, 1, 6};
    hand_ci4(dw, &mean, &half);
    const fs_compare_row_t *w = row_of(&c, "wait_mean");
    assert_int_equal(w->ci.n, 4);
    assert_double_equal(w->a, 25, 1e-12);
    assert_double_equal(w->b, 28.5, 1e-12);
    assert_double_equal(w->diff, 3.5, 1e-12);
    assert_double_equal(w->ci.lo, mean - half, 1e-9);
    assert_double_equal(w->ci.hi, mean + half, 1e-9);
    assert_true(w->ci.lo < 0);
    assert_int_equal(w->significant, 0);         /* noisy: the interval holds 0 */
    const double du[4] = {0.1, 0.12, 0.09, 0.11};
    hand_ci4(du, &mean, &half);
    const fs_compare_row_t *u = row_of(&c, "utilization");
    assert_double_equal(u->diff, 0.105, 1e-12);
    assert_double_equal(u->ci.lo, mean - half, 1e-9);
    assert_double_equal(u->ci.hi, mean + half, 1e-9);
    assert_true(u->ci.lo > 0);
    assert_int_equal(u->significant, 1);         /* small but consistent: significant */
    fs_compare_release(&c);

    /* B against A: the differences change sign, the flags do not */
    assert_int_equal(fs_compare_sides(b, a, 0.95, &c, &err), 0);
    assert_double_equal(row_of(&c, "wait_mean")->diff, -3.5, 1e-12);
    assert_double_equal(row_of(&c, "utilization")->ci.hi, -(mean - half), 1e-9);
    assert_int_equal(row_of(&c, "utilization")->significant, 1);
    fs_compare_release(&c);

    /* a wider level: the wait interval grows, utilization stays significant
     * at 0.5 as well */
    assert_int_equal(fs_compare_sides(a, b, 0.5, &c, &err), 0);
    assert_true(row_of(&c, "utilization")->ci.hi - row_of(&c, "utilization")->ci.lo < 2 * half);
    fs_compare_release(&c);
    fs_compare_side_destroy(a);
    fs_compare_side_destroy(b);
}

static void test_paired_points(void **state)
{
    fx_t *f = *state;
    int64_t live0 = fs_alloc_live();
    char label[1024];
    snprintf(label, sizeof label, "%s point 0 (rate=10/h)", f->idx);
    check_paired(f->idx, label);
    snprintf(label, sizeof label, "%s point 0 (rate=10/h)", f->idx_enum);
    check_paired(f->idx_enum, label);            /* status as an HDF5 enum */
    size_t np;
    fs_error_t err;
    assert_int_equal(fs_compare_points(f->idx, &np, &err), 0);
    assert_int_equal(np, 2);
    /* no /points: the points of /runs; one point: chosen without --points */
    assert_int_equal(fs_compare_points(f->idx_nopts, &np, &err), 0);
    assert_int_equal(np, 1);
    fs_compare_side_t *s;
    assert_int_equal(fs_compare_side_load(f->idx_nopts, -1, &s, &err), 0);
    assert_int_equal(s->point, 0);
    assert_int_equal(s->n_reps, 4);
    char label2[1024];
    snprintf(label2, sizeof label2, "%s point 0", f->idx_nopts);
    assert_string_equal(s->label, label2);
    /* two indexes: point 0 of one against point 0 of the other: all zero */
    fs_compare_side_t *t;
    assert_int_equal(fs_compare_side_load(f->idx, 0, &t, &err), 0);
    fs_compare_t c;
    assert_int_equal(fs_compare_sides(s, t, 0.95, &c, &err), 0);
    assert_int_equal(c.n_pairs, 4);
    for (size_t i = 0; i < c.n_rows; i++) {
        assert_double_equal(c.rows[i].diff, 0, 0);
        assert_double_equal(c.rows[i].ci.half, 0, 0);
        /* the same difference in every pair: no interval to test */
        assert_int_equal(c.rows[i].constant, 1);
        assert_int_equal(c.rows[i].significant, -1);
    }
    char *out = fs_test_path(f->dir, "paired.txt");
    FILE *fp = fopen(out, "w");
    fs_compare_print(fp, s, t, &c);
    fs_compare_print_csv(fp, s, t, &c, 0);
    fclose(fp);
    char *txt = fs_test_read(out, NULL);
    assert_non_null(strstr(txt, "Paired over 4 replications (common random numbers)"));
    assert_non_null(strstr(txt, "significant at 95%"));
    assert_non_null(strstr(txt, ",0,0,utilization,0.65000000000000002,0.65000000000000002,0,0,4,0.95,0,0,\n"));
    free(txt);
    free(out);
    fs_compare_release(&c);
    fs_compare_side_destroy(s);
    fs_compare_side_destroy(t);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_errors(void **state)
{
    fx_t *f = *state;
    int64_t live0 = fs_alloc_live();
    fs_error_t err;
    fs_compare_side_t *s = NULL, *r = NULL;
    int is;
    assert_int_equal(fs_compare_side_load(f->idx, -1, &s, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "the sweep has 2 points; choose them with --points"));
    assert_null(s);
    assert_int_equal(fs_compare_side_load(f->idx, 2, &s, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "no point 2 (the sweep has points 0..1)"));
    assert_int_equal(fs_compare_side_load(f->a, 0, &s, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "a run file has no points"));
    assert_int_equal(fs_compare_side_load(f->inc, -1, &s, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "the run is incomplete (complete = 0)"));
    assert_int_equal(fs_compare_side_load(f->plain, -1, &s, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "neither a results file (no /summary) nor a sweep index"));
    assert_int_equal(fs_compare_is_index(f->plain, &is, &err), FS_EINVAL);
    assert_int_equal(fs_compare_side_load(f->junk, -1, &s, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "junk.h5: not an HDF5 file"));
    char *missing = fs_test_path(f->dir, "missing.h5");
    assert_int_equal(fs_compare_side_load(missing, -1, &s, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "missing.h5: cannot open: No such file or directory"));
    assert_int_equal(fs_compare_points(f->a, &(size_t){0}, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "not a sweep index"));
    free(missing);

    /* a run file against a sweep point; no common replication */
    assert_int_equal(fs_compare_side_load(f->a, -1, &r, &err), 0);
    assert_int_equal(fs_compare_side_load(f->idx, 0, &s, &err), 0);
    fs_compare_t c;
    assert_int_equal(fs_compare_sides(r, s, 0.95, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "cannot compare a run file with a sweep point"));
    assert_int_equal(fs_compare_sides(s, s, 1.5, &c, &err), FS_EINVAL);
    fs_compare_side_destroy(r);
    s->reps[0] = 100, s->reps[1] = 101, s->reps[2] = 102, s->reps[3] = 103;
    fs_compare_side_t *t;
    assert_int_equal(fs_compare_side_load(f->idx, 1, &t, &err), 0);
    assert_int_equal(fs_compare_sides(s, t, 0.95, &c, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "no replication in common"));
    fs_compare_side_destroy(s);
    fs_compare_side_destroy(t);

    /* fs_h5read: missing table and column, wrong kinds */
    fs_h5file_t *h;
    assert_int_equal(fs_h5read_open(f->a, &h, &err), 0);
    double d[16];
    char *strs[16];
    size_t n;
    assert_int_equal(fs_h5read_rows(h, "timeline", &n, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "no table /timeline"));
    assert_int_equal(fs_h5read_f64(h, "summary", "nosuch", d, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "table /summary has no column 'nosuch'"));
    assert_int_equal(fs_h5read_f64(h, "summary", "tag", d, &err), FS_EINVAL);
    assert_non_null(strstr(err.msg, "column 'tag' of /summary is not numeric"));
    assert_int_equal(fs_h5read_str(h, "summary", "wait_mean", strs, &err), FS_EINVAL);
    assert_int_equal(fs_h5read_str(h, "jobs", "state", strs, &err), 0);   /* enum names */
    assert_string_equal(strs[0], "completed");
    assert_string_equal(strs[4], "queued");
    for (int i = 0; i < 10; i++)
        fs_free(strs[i]);
    char *sc;
    assert_int_equal(fs_h5read_attr_str(h, "scenario", &sc, &err), 0);
    assert_string_equal(sc, "name: x\n");
    fs_free(sc);
    assert_int_equal(fs_h5read_attr_str(h, "nosuch", &sc, &err), FS_EINVAL);
    assert_int_equal(fs_h5read_attr_str(h, "seed", &sc, &err), FS_EINVAL);
    double v;
    assert_int_equal(fs_h5read_attr_f64(h, "scenario", &v, &err), FS_EINVAL);
    fs_h5read_close(h);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_waits(void **state)
{
    fx_t *f = *state;
    int64_t live0 = fs_alloc_live();
    /* type 7 by hand: {1,2,3,4}: p50 = 2.5, p90 = 3 + 0.7 = 3.7, p0 = 1, p1 = 4 */
    double x[] = {4, 1, 3, 2}, q[4];
    const double p4[] = {0.5, 0.9, 0, 1};
    assert_int_equal(fs_waits_quantiles(x, 4, p4, 4, q), 0);
    assert_double_equal(q[0], 2.5, 1e-12);
    assert_double_equal(q[1], 3.7, 1e-12);
    assert_double_equal(q[2], 1, 0);
    assert_double_equal(q[3], 4, 0);
    assert_int_equal(fs_waits_quantiles(x, 0, p4, 1, q), 0);
    assert_true(isnan(q[0]));
    const double bad[] = {1.5};
    assert_int_equal(fs_waits_quantiles(x, 4, bad, 1, q), FS_EINVAL);

    /* pooled {0,0,0,10,20}: p90 = 10 + 0.6 * 10 = 16; per replication
     * {0,10} -> 9 and {0,0,20} -> 16: mean 12.5, sd 4.9497, t_{0.975,1} */
    const double r0[] = {10, 0}, r1[] = {0, 20, 0};
    const double *w[] = {r0, r1};
    const size_t n[] = {2, 3};
    const double p[] = {0.5, 0.9};
    fs_wait_pct_t out[2];
    assert_int_equal(fs_waits_summarize(w, n, 2, p, 2, 0.95, out), 0);
    assert_double_equal(r0[0], 10, 0);           /* inputs untouched */
    assert_double_equal(out[0].pooled, 0, 0);
    assert_double_equal(out[1].pooled, 16, 1e-12);
    assert_double_equal(out[1].per_rep.mean, 12.5, 1e-12);
    assert_double_equal(out[1].per_rep.sd, sqrt(24.5), 1e-12);
    assert_double_equal(out[1].per_rep.half, T975_1 * sqrt(24.5) / sqrt(2), 1e-9);
    assert_double_equal(out[0].per_rep.mean, 2.5, 1e-12);   /* (5 + 0) / 2 */
    assert_int_equal(fs_waits_summarize(w, n, 2, p, 2, 0, out), FS_EINVAL);

    /* from a file: started jobs submitted at or after the warm-up (2 h) */
    double *got;
    size_t k;
    fs_error_t err;
    assert_int_equal(fs_waits_read(f->a, 7200, &got, &k, &err), 0);
    const double want[] = {0, 10, 20, 0, 30, 100};
    assert_int_equal(k, 6);
    for (size_t i = 0; i < k; i++)
        assert_double_equal(got[i], want[i], 0);
    fs_free(got);
    assert_int_equal(fs_waits_read(f->a, 0, &got, &k, &err), 0);
    assert_int_equal(k, 8);
    fs_free(got);
    assert_int_equal(fs_waits_read(f->b, 0, &got, &k, &err), FS_EINVAL);   /* no /jobs */
    assert_non_null(strstr(err.msg, "no table /jobs"));
    assert_int_equal(fs_alloc_live(), live0);
}

/* Every allocation of loading and comparing fails in turn: FS_ENOMEM (or
 * success once past the last), never a leak or a crash. */
static void test_out_of_memory(void **state)
{
    fx_t *f = *state;
    int64_t live0 = fs_alloc_live();
    int done = 0;
    for (uint64_t k = 1; k < 2000 && !done; k++) {
        fs_error_t err;
        fs_compare_side_t *a = NULL, *b = NULL;
        fs_compare_t c;
        fs_alloc_fail_after(k);
        int rc = fs_compare_side_load(f->idx, 0, &a, &err);
        if (!rc)
            rc = fs_compare_side_load(f->idx, 1, &b, &err);
        if (!rc)
            rc = fs_compare_sides(a, b, 0.95, &c, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            fs_compare_release(&c);
            done = 1;
        } else {
            assert_int_equal(rc, FS_ENOMEM);
        }
        fs_compare_side_destroy(a);
        fs_compare_side_destroy(b);
        assert_int_equal(fs_alloc_live(), live0);
    }
    assert_true(done);
    done = 0;
    for (uint64_t k = 1; k < 200 && !done; k++) {
        double *w = NULL;
        size_t n;
        fs_alloc_fail_after(k);
        int rc = fs_waits_read(f->a, 0, &w, &n, NULL);
        fs_alloc_fail_after(0);
        if (rc == 0)
            done = 1;
        else
            assert_int_equal(rc, FS_ENOMEM);
        fs_free(w);
        assert_int_equal(fs_alloc_live(), live0);
    }
    assert_true(done);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_runs),
        cmocka_unit_test(test_paired_points),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_waits),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
