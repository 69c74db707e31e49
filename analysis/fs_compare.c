/*
 * fs_compare: side-by-side /summary metrics with differences and paired
 * intervals (see fs_compare.h).
 */
#include "fs_compare.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../sim/fs_alloc.h"
#include "fs_fmt.h"
#include "fs_h5read.h"

/* Columns of /runs that are not /summary metrics. */
static int is_key_column(const char *name)
{
    static const char *const keys[] = {"point", "replication", "file", "status", "seed"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(name, keys[i]) == 0)
            return 1;
    return 0;
}

/* A /runs status that means "finished, its summary is valid". */
static int status_ok(const char *s)
{
    static const char *const ok[] = {"ok", "done", "complete", "completed", "finished"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcasecmp(s, ok[i]) == 0)
            return 1;
    return 0;
}

int fs_compare_is_index(const char *path, int *is_index, fs_error_t *err)
{
    fs_h5file_t *f;
    int rc = fs_h5read_open(path, &f, err);
    if (rc)
        return rc;
    if (fs_h5read_has(f, "runs"))
        *is_index = 1;
    else if (fs_h5read_has(f, "summary"))
        *is_index = 0;
    else
        rc = fs_error_set(err, FS_EINVAL,
                          "%s: neither a results file (no /summary) nor a sweep index (no /runs)",
                          path);
    fs_h5read_close(f);
    return rc;
}

/* Rows of /points, or distinct points of /runs when there is no /points. */
static int count_points(fs_h5file_t *f, size_t *n, fs_error_t *err)
{
    if (fs_h5read_has(f, "points"))
        return fs_h5read_rows(f, "points", n, err);
    size_t rows;
    int rc = fs_h5read_rows(f, "runs", &rows, err);
    if (rc)
        return rc;
    double *p = fs_malloc((rows ? rows : 1) * sizeof *p);
    if (!p)
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    if (!(rc = fs_h5read_f64(f, "runs", "point", p, err))) {
        double max = -1;
        for (size_t i = 0; i < rows; i++)
            if (p[i] > max)
                max = p[i];
        *n = (size_t)(max + 1);
    }
    fs_free(p);
    return rc;
}

int fs_compare_points(const char *path, size_t *n, fs_error_t *err)
{
    *n = 0;
    fs_h5file_t *f;
    int rc = fs_h5read_open(path, &f, err);
    if (rc)
        return rc;
    if (!fs_h5read_has(f, "runs"))
        rc = fs_error_set(err, FS_EINVAL, "%s: not a sweep index (no /runs table)", path);
    else
        rc = count_points(f, n, err);
    fs_h5read_close(f);
    return rc;
}

void fs_compare_side_destroy(fs_compare_side_t *s)
{
    if (!s)
        return;
    fs_free(s->path);
    fs_free(s->label);
    fs_h5read_free_strings(s->metrics, s->n_metrics);
    fs_h5read_free_strings(s->files, s->n_reps);
    fs_free(s->reps);
    fs_free(s->values);
    fs_free(s);
}

double fs_compare_side_value(const fs_compare_side_t *s, size_t r, const char *name)
{
    for (size_t m = 0; m < s->n_metrics; m++)
        if (strcmp(s->metrics[m], name) == 0)
            return s->values[r * s->n_metrics + m];
    return NAN;
}

/* Numeric columns of table that are metrics (not keys): names moved into s. */
static int take_metrics(fs_h5file_t *f, const char *table, fs_compare_side_t *s, fs_error_t *err)
{
    char **names;
    int *kinds;
    size_t n;
    int rc = fs_h5read_columns(f, table, &names, &kinds, &n, err);
    if (rc)
        return rc;
    s->metrics = fs_calloc(n + 1, sizeof *s->metrics);
    if (!s->metrics) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
    } else {
        for (size_t i = 0; i < n; i++) {
            if (kinds[i] == FS_H5COL_NUM && !is_key_column(names[i])) {
                s->metrics[s->n_metrics++] = names[i];
                names[i] = NULL;
            }
        }
    }
    fs_h5read_free_strings(names, n);
    fs_free(kinds);
    return rc;
}

/* "base (p=v, q=w)" from the row of /points for point, or "base point P". */
static char *point_label(fs_h5file_t *f, const char *base, long point)
{
    char buf[1024];
    int len = snprintf(buf, sizeof buf, "%s point %ld", base, point);
    char **names = NULL;
    int *kinds = NULL;
    size_t n = 0, rows = 0;
    double *pts = NULL;
    if (fs_h5read_has(f, "points") && !fs_h5read_rows(f, "points", &rows, NULL) && rows &&
        !fs_h5read_columns(f, "points", &names, &kinds, &n, NULL) &&
        (pts = fs_malloc(rows * sizeof *pts)) && !fs_h5read_f64(f, "points", "point", pts, NULL)) {
        size_t row = rows;
        for (size_t i = 0; i < rows; i++)
            if (pts[i] == (double)point)
                row = i;
        const char *sep = " (";
        for (size_t c = 0; c < n && row < rows; c++) {
            if (strcmp(names[c], "point") == 0 || kinds[c] == FS_H5COL_OTHER)
                continue;
            char *vals[1] = {NULL};
            char **all = fs_calloc(rows, sizeof *all);
            if (!all)
                break;
            if (kinds[c] == FS_H5COL_NUM) {
                double *v = fs_malloc(rows * sizeof *v);
                if (v && !fs_h5read_f64(f, "points", names[c], v, NULL)) {
                    char num[64];
                    snprintf(num, sizeof num, "%g", v[row]);
                    vals[0] = fs_strdup(num);
                }
                fs_free(v);
            } else if (!fs_h5read_str(f, "points", names[c], all, NULL)) {
                vals[0] = all[row];
                all[row] = NULL;
            }
            fs_h5read_free_strings(all, rows);
            if (vals[0] && len >= 0 && (size_t)len < sizeof buf) {
                len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s=%s", sep, names[c],
                                vals[0]);
                sep = ", ";
            }
            fs_free(vals[0]);
        }
        if (strcmp(sep, ", ") == 0 && len >= 0 && (size_t)len < sizeof buf)
            snprintf(buf + len, sizeof buf - (size_t)len, ")");
    }
    fs_free(pts);
    fs_h5read_free_strings(names, n);
    fs_free(kinds);
    return fs_strdup(buf);
}

/* dir of index + "/" + file, unless file is absolute. */
static char *resolve(const char *index, const char *file)
{
    if (!file || !*file)
        return NULL;
    if (file[0] == '/')
        return fs_strdup(file);
    const char *slash = strrchr(index, '/');
    size_t dl = slash ? (size_t)(slash - index) + 1 : 0;
    size_t fl = strlen(file);
    char *p = fs_malloc(dl + fl + 1);
    if (!p)
        return NULL;
    memcpy(p, index, dl);
    memcpy(p + dl, file, fl + 1);
    return p;
}

static int load_run(fs_h5file_t *f, fs_compare_side_t *s, fs_error_t *err)
{
    size_t rows;
    double v = 0;
    int rc = fs_h5read_rows(f, "summary", &rows, err);
    if (rc)
        return rc;
    if (fs_h5read_attr_f64(f, "complete", &v, NULL) == 0 && v != 1)
        return fs_error_set(err, FS_EINVAL, "%s: the run is incomplete (complete = 0)", s->path);
    if (rows != 1)
        return fs_error_set(err, FS_EINVAL, "%s: /summary has %zu rows, expected 1", s->path,
                            rows);
    if ((rc = take_metrics(f, "summary", s, err)))
        return rc;
    s->n_reps = 1;
    s->reps = fs_calloc(1, sizeof *s->reps);
    s->files = fs_calloc(1, sizeof *s->files);
    s->values = fs_calloc(s->n_metrics + 1, sizeof *s->values);
    if (!s->reps || !s->files || !s->values || !(s->files[0] = fs_strdup(s->path)) ||
        !(s->label = fs_strdup(s->path)))
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    if (fs_h5read_attr_f64(f, "replication", &v, NULL) == 0 && v >= 0)
        s->reps[0] = (uint64_t)v;
    double one;
    for (size_t m = 0; m < s->n_metrics; m++) {
        if ((rc = fs_h5read_f64(f, "summary", s->metrics[m], &one, err)))
            return rc;
        s->values[m] = one;
    }
    return 0;
}

typedef struct run_ref {
    uint64_t rep;
    size_t row;
} run_ref_t;

static int cmp_ref(const void *a, const void *b)
{
    const run_ref_t *x = a, *y = b;
    return (x->rep > y->rep) - (x->rep < y->rep);
}

static int load_index(fs_h5file_t *f, long point, fs_compare_side_t *s, fs_error_t *err)
{
    size_t rows, npoints;
    int rc;
    if ((rc = fs_h5read_rows(f, "runs", &rows, err)) || (rc = count_points(f, &npoints, err)))
        return rc;
    if (point < 0) {
        if (npoints != 1)
            return fs_error_set(err, FS_EINVAL,
                                "%s: the sweep has %zu points; choose them with --points", s->path,
                                npoints);
        point = 0;
    }
    if ((size_t)point >= npoints)
        return fs_error_set(err, FS_EINVAL, "%s: no point %ld (the sweep has points 0..%zu)",
                            s->path, point, npoints ? npoints - 1 : 0);
    s->point = point;
    if ((rc = take_metrics(f, "runs", s, err)))
        return rc;

    double *pt = fs_malloc((rows ? rows : 1) * sizeof *pt);
    double *rep = fs_malloc((rows ? rows : 1) * sizeof *rep);
    char **status = fs_calloc(rows ? rows : 1, sizeof *status);
    char **file = fs_calloc(rows ? rows : 1, sizeof *file);
    run_ref_t *refs = fs_malloc((rows ? rows : 1) * sizeof *refs);
    double *col = fs_malloc((rows ? rows : 1) * sizeof *col);
    int have_file = 0;
    size_t k = 0;
    if (!pt || !rep || !status || !file || !refs || !col) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = fs_h5read_f64(f, "runs", "point", pt, err)) ||
        (rc = fs_h5read_f64(f, "runs", "replication", rep, err)))
        goto out;
    /* status: a string or enum ("ok"), or a number (0 = ok) */
    double *st_num = col;
    int st_kind = -1;
    {
        char **names;
        int *kinds;
        size_t n;
        if ((rc = fs_h5read_columns(f, "runs", &names, &kinds, &n, err)))
            goto out;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(names[i], "status") == 0)
                st_kind = kinds[i];
            if (strcmp(names[i], "file") == 0 && kinds[i] == FS_H5COL_STR)
                have_file = 1;
        }
        fs_h5read_free_strings(names, n);
        fs_free(kinds);
    }
    if (st_kind == FS_H5COL_STR || st_kind == FS_H5COL_ENUM)
        rc = fs_h5read_str(f, "runs", "status", status, err);
    else if (st_kind == FS_H5COL_NUM)
        rc = fs_h5read_f64(f, "runs", "status", st_num, err);
    if (rc || (have_file && (rc = fs_h5read_str(f, "runs", "file", file, err))))
        goto out;
    for (size_t i = 0; i < rows; i++) {
        if (pt[i] != (double)point)
            continue;
        int ok = st_kind == FS_H5COL_STR || st_kind == FS_H5COL_ENUM ? status_ok(status[i])
                 : st_kind == FS_H5COL_NUM                           ? st_num[i] == 0
                                                                     : 1;
        if (!ok)
            continue;
        refs[k].rep = rep[i] >= 0 ? (uint64_t)rep[i] : 0;
        refs[k].row = i;
        k++;
    }
    qsort(refs, k, sizeof *refs, cmp_ref);
    for (size_t i = 1; i < k; i++)
        if (refs[i].rep == refs[i - 1].rep) {
            rc = fs_error_set(err, FS_EINVAL, "%s: point %ld has replication %llu twice in /runs",
                              s->path, point, (unsigned long long)refs[i].rep);
            goto out;
        }
    if (k == 0) {
        rc = fs_error_set(err, FS_EINVAL, "%s: point %ld has no finished run in /runs", s->path,
                          point);
        goto out;
    }
    s->n_reps = k;
    s->reps = fs_calloc(k, sizeof *s->reps);
    s->files = fs_calloc(k, sizeof *s->files);
    s->values = fs_calloc(k * s->n_metrics + 1, sizeof *s->values);
    if (!s->reps || !s->files || !s->values) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < k; i++) {
        s->reps[i] = refs[i].rep;
        if (have_file && !(s->files[i] = resolve(s->path, file[refs[i].row]))) {
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
            goto out;
        }
    }
    for (size_t m = 0; m < s->n_metrics; m++) {
        if ((rc = fs_h5read_f64(f, "runs", s->metrics[m], col, err)))
            goto out;
        for (size_t i = 0; i < k; i++)
            s->values[i * s->n_metrics + m] = col[refs[i].row];
    }
    if (!(s->label = point_label(f, s->path, point)))
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
out:
    fs_free(pt);
    fs_free(rep);
    fs_h5read_free_strings(status, rows);
    fs_h5read_free_strings(file, rows);
    fs_free(refs);
    fs_free(col);
    return rc;
}

int fs_compare_side_load(const char *path, long point, fs_compare_side_t **out, fs_error_t *err)
{
    *out = NULL;
    fs_compare_side_t *s = fs_calloc(1, sizeof *s);
    if (!s || !(s->path = fs_strdup(path))) {
        fs_free(s);
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    s->point = -1;
    s->seed = NAN;
    fs_h5file_t *f;
    int rc = fs_h5read_open(path, &f, err);
    if (rc) {
        fs_compare_side_destroy(s);
        return rc;
    }
    if (fs_h5read_has(f, "runs")) {
        s->is_index = 1;
        rc = load_index(f, point, s, err);
    } else if (fs_h5read_has(f, "summary")) {
        rc = point >= 0 ? fs_error_set(err, FS_EINVAL,
                                       "%s: a run file has no points (--points applies to sweep "
                                       "index files)",
                                       path)
                        : load_run(f, s, err);
    } else {
        rc = fs_error_set(err, FS_EINVAL,
                          "%s: neither a results file (no /summary) nor a sweep index (no /runs)",
                          path);
    }
    if (!rc && fs_h5read_attr_f64(f, "seed", &s->seed, NULL))
        s->seed = NAN;
    fs_h5read_close(f);
    if (rc) {
        fs_compare_side_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

void fs_compare_release(fs_compare_t *c)
{
    if (!c)
        return;
    fs_free(c->rows);
    c->rows = NULL;
    c->n_rows = 0;
}

static void no_interval(fs_ci_t *ci, double level)
{
    ci->n = 0;
    ci->mean = ci->sd = ci->half = ci->lo = ci->hi = NAN;
    ci->level = level;
}

/* 1 when x[0..n-1] are all equal to floating-point rounding (relative
 * 1e-9 of the largest magnitude; NaNs ignored). */
static int fs_compare_all_equal(const double *x, size_t n)
{
    double lo = INFINITY, hi = -INFINITY, mag = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            continue;
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
        mag = fabs(x[i]) > mag ? fabs(x[i]) : mag;
    }
    if (lo > hi || lo == hi)
        return 1;
    return isfinite(mag) && hi - lo <= 1e-9 * mag;
}

int fs_compare_side_constant(const fs_compare_side_t *s, const char *metric)
{
    size_t m = s->n_metrics;
    for (size_t k = 0; k < s->n_metrics; k++)
        if (strcmp(s->metrics[k], metric) == 0)
            m = k;
    if (m == s->n_metrics)
        return 0;
    for (size_t r = 1; r < s->n_reps; r++) {
        double a = s->values[m], b = s->values[r * s->n_metrics + m];
        if (isnan(a) && isnan(b))
            continue;
        double two[2] = {a, b};
        if (isnan(a) != isnan(b) || !fs_compare_all_equal(two, 2))
            return 0;
    }
    return 1;
}

static double mean_finite_pairs(const double *x, const double *y, size_t n)
{
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i])) {
            s += x[i];
            k++;
        }
    return k ? s / (double)k : NAN;
}

int fs_compare_sides(const fs_compare_side_t *a, const fs_compare_side_t *b, double level,
                     fs_compare_t *out, fs_error_t *err)
{
    memset(out, 0, sizeof *out);
    out->level = level;
    if (!(level > 0 && level < 1))
        return fs_error_set(err, FS_EINVAL, "confidence level %g is not in (0, 1)", level);
    if (a->is_index != b->is_index)
        return fs_error_set(err, FS_EINVAL,
                            "cannot compare a run file with a sweep point (%s, %s): compare two "
                            "run files, or two sweep points",
                            a->is_index ? b->path : a->path, a->is_index ? a->path : b->path);
    out->paired = a->is_index;
    out->seeds_differ = isfinite(a->seed) && isfinite(b->seed) && a->seed != b->seed;
    /* pairs: replication indexes present on both sides (both ascending) */
    size_t np = 0, *ia = NULL, *ib = NULL;
    double *va = NULL, *vb = NULL;
    int rc = 0;
    size_t cap = a->n_reps < b->n_reps ? a->n_reps : b->n_reps;
    ia = fs_malloc((cap + 1) * sizeof *ia);
    ib = fs_malloc((cap + 1) * sizeof *ib);
    va = fs_malloc((cap + 1) * sizeof *va);
    vb = fs_malloc((cap + 1) * sizeof *vb);
    out->rows = fs_calloc(a->n_metrics + 1, sizeof *out->rows);
    if (!ia || !ib || !va || !vb || !out->rows) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    if (out->paired) {
        for (size_t i = 0, j = 0; i < a->n_reps && j < b->n_reps;) {
            if (a->reps[i] < b->reps[j]) {
                i++;
            } else if (a->reps[i] > b->reps[j]) {
                j++;
            } else {
                ia[np] = i++;
                ib[np++] = j++;
            }
        }
        if (!np) {
            rc = fs_error_set(err, FS_EINVAL,
                              "%s and %s have no replication in common: nothing to pair",
                              a->label, b->label);
            goto out;
        }
        out->n_pairs = np;
    }
    for (size_t m = 0; m < a->n_metrics; m++) {
        size_t mb = b->n_metrics;
        for (size_t k = 0; k < b->n_metrics; k++)
            if (strcmp(a->metrics[m], b->metrics[k]) == 0)
                mb = k;
        if (mb == b->n_metrics)
            continue;
        fs_compare_row_t *r = &out->rows[out->n_rows++];
        r->metric = a->metrics[m];
        if (!out->paired) {
            r->a = a->values[m];
            r->b = b->values[mb];
            r->diff = r->b - r->a;
            no_interval(&r->ci, level);
            r->significant = -1;
        } else {
            for (size_t p = 0; p < np; p++) {
                va[p] = a->values[ia[p] * a->n_metrics + m];
                vb[p] = b->values[ib[p] * b->n_metrics + mb];
            }
            if ((rc = fs_ci_paired(vb, va, np, level, &r->ci))) {
                fs_error_set(err, rc, "out of memory");
                goto out;
            }
            r->a = mean_finite_pairs(va, vb, np);
            r->b = mean_finite_pairs(vb, va, np);
            r->diff = r->ci.mean;
            r->significant = fs_ci_significant(&r->ci);
            if (np >= 2) {
                /* the differences all alike (within rounding of the values):
                 * a zero-width interval, which proves nothing */
                int same = fs_compare_all_equal(va, np) && fs_compare_all_equal(vb, np);
                double mag = 0, lo = INFINITY, hi = -INFINITY;
                for (size_t p = 0; p < np; p++) {
                    if (isnan(va[p]) || isnan(vb[p]))
                        continue;
                    double d = vb[p] - va[p];
                    mag = fmax(mag, fmax(fabs(va[p]), fabs(vb[p])));
                    lo = fmin(lo, d);
                    hi = fmax(hi, d);
                }
                /* rounding of the values, not variance */
                r->constant = same || lo > hi || hi - lo <= 1e-9 * mag;
                if (r->constant && fabs(r->diff) <= 1e-9 * mag)
                    r->diff = r->ci.mean = 0;
                if (r->constant) {
                    r->significant = -1;
                    r->ci.sd = r->ci.half = 0;
                    r->ci.lo = r->ci.hi = r->ci.mean;
                }
            }
        }
        r->rel = isfinite(r->a) && r->a != 0 ? r->diff / fabs(r->a) : NAN;
    }
    if (!rc && out->paired && np >= 2) {
        out->identical_reps = 1;
        for (size_t m = 0; m < a->n_metrics && out->identical_reps; m++)
            out->identical_reps = fs_compare_side_constant(a, a->metrics[m]);
        for (size_t m = 0; m < b->n_metrics && out->identical_reps; m++)
            out->identical_reps = fs_compare_side_constant(b, b->metrics[m]);
    }
out:
    fs_free(ia);
    fs_free(ib);
    fs_free(va);
    fs_free(vb);
    if (rc)
        fs_compare_release(out);
    return rc;
}

/* ---- printing ---- */

void fs_compare_print(FILE *out, const fs_compare_side_t *a, const fs_compare_side_t *b,
                      const fs_compare_t *c)
{
    fprintf(out, "A  %s\nB  %s\n", a->label, b->label);
    if (!c->paired) {
        fprintf(out, "Two single runs: differences only.  No interval is possible from one run "
                     "each;\nrun a sweep with replications for confidence intervals.\n\n");
        fprintf(out, "%-20s %14s %14s %14s %9s\n", "metric", "A", "B", "B - A", "rel");
    } else if (c->identical_reps) {
        fprintf(out, "The %zu replications of each side are identical (nothing in the scenario "
                     "draws random\nnumbers, e.g. a trace replay without failures): one "
                     "replication is the answer;\nno interval and no significance are shown.\n\n",
                c->n_pairs);
        fprintf(out, "%-20s %14s %14s %14s %9s\n", "metric", "A", "B", "B - A", "rel");
    } else {
        fprintf(out,
                "Paired over %zu replication%s (common random numbers): %g%% Student-t interval of "
                "B - A.\n",
                c->n_pairs, c->n_pairs == 1 ? "" : "s", c->level * 100);
        if (c->seeds_differ)
            fprintf(out, "Note: the two sweeps have different seeds, so the pairs do not share "
                         "random numbers;\nthe intervals are valid but wider than under common "
                         "random numbers.\n");
        if (c->n_pairs < 2)
            fprintf(out, "Note: one pair only: no interval.\n");
        fprintf(out, "\n%-20s %14s %14s %14s %9s %14s %14s  significant at %g%%\n", "metric",
                "A (mean)", "B (mean)", "B - A", "rel", "ci_lo", "ci_hi", c->level * 100);
    }
    size_t n_const = 0;
    for (size_t i = 0; i < c->n_rows; i++) {
        const fs_compare_row_t *r = &c->rows[i];
        fs_fmt_unit_t u = fs_fmt_metric_unit(r->metric);
        char va[32], vb[32], vd[32], vr[32], lo[32], hi[32];
        fs_fmt_value(va, sizeof va, u, r->a);
        fs_fmt_value(vb, sizeof vb, u, r->b);
        fs_fmt_diff(vd, sizeof vd, u, r->diff);
        if (isnan(r->rel))
            snprintf(vr, sizeof vr, "-");
        else
            snprintf(vr, sizeof vr, "%+.1f%%", r->rel * 100);
        fprintf(out, "%-20s %14s %14s %14s %9s", r->metric, va, vb, vd, vr);
        if (c->paired && !c->identical_reps) {
            if (r->constant) {
                n_const++;
                fprintf(out, " %14s %14s  %s", "", "",
                        r->diff == 0 ? "no (identical)" : "- (same in every replication)");
            } else {
                fs_fmt_diff(lo, sizeof lo, u, r->ci.lo);
                fs_fmt_diff(hi, sizeof hi, u, r->ci.hi);
                fprintf(out, " %14s %14s  %s", lo, hi,
                        r->significant == 1   ? "yes"
                        : r->significant == 0 ? "no"
                        : r->diff == 0        ? "no (identical)"
                                              : "-");
            }
        }
        fputc('\n', out);
    }
    if (n_const && !c->identical_reps)
        fprintf(out, "(%zu metric%s with the same B - A in every replication: no interval, "
                     "no significance)\n", n_const, n_const == 1 ? "" : "s");
}

/* A CSV field: quoted when it holds a comma, quote or newline. */
static void csv_str(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void csv_num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, ",%.17g", v);
    else if (isinf(v))
        fprintf(out, ",%s", v > 0 ? "inf" : "-inf");
    else
        fputc(',', out);
}

void fs_compare_print_csv(FILE *out, const fs_compare_side_t *a, const fs_compare_side_t *b,
                          const fs_compare_t *c, int header)
{
    if (header)
        fprintf(out, "a,b,point_a,point_b,metric,value_a,value_b,diff,rel_diff,n,level,ci_lo,"
                     "ci_hi,significant\n");
    for (size_t i = 0; i < c->n_rows; i++) {
        const fs_compare_row_t *r = &c->rows[i];
        csv_str(out, a->path);
        fputc(',', out);
        csv_str(out, b->path);
        if (a->point >= 0)
            fprintf(out, ",%ld", a->point);
        else
            fputc(',', out);
        if (b->point >= 0)
            fprintf(out, ",%ld", b->point);
        else
            fputc(',', out);
        fputc(',', out);
        csv_str(out, r->metric);
        csv_num(out, r->a);
        csv_num(out, r->b);
        csv_num(out, r->diff);
        csv_num(out, r->rel);
        fprintf(out, ",%zu", c->paired ? r->ci.n : (size_t)0);
        fprintf(out, ",%g", c->level);
        csv_num(out, r->ci.lo);
        csv_num(out, r->ci.hi);
        if (r->significant >= 0 && !r->constant)
            fprintf(out, ",%d\n", r->significant);
        else
            fputs(",\n", out);
    }
}
