#include "fs_carbon.h"
#include "fs_csv.h"
#include "fs_rdr.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEADER FS_CARBON_COL_HOUR "," FS_CARBON_COL_G

typedef struct reader {
    fs_csv_t csv;
    fs_error_t *err;
} reader_t;

__attribute__((format(printf, 3, 4)))
static int at(reader_t *r, size_t col, const char *fmt, ...)
{
    char msg[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fs_error_set(r->err, FS_EINVAL, "%s:%llu:%zu: %s", r->csv.path,
                        (unsigned long long)r->csv.line_no, col, msg);
}

static int blank(char ch) { return ch == ' ' || ch == '\t'; }

/* The next line that is neither blank nor a '#' comment: 1, 0 at the end,
 * or an error. */
static int next(reader_t *r)
{
    for (;;) {
        int rc = fs_csv_next_line(&r->csv, r->err);
        if (rc <= 0)
            return rc;
        const char *l = r->csv.line;
        size_t i = 0;
        while (i < r->csv.line_len && blank(l[i]))
            i++;
        if (i < r->csv.line_len && l[i] != '#')
            return 1;
    }
}

/* The 1-based column of a field of the current line (fs_csv_split cuts
 * the line in place, so a field points into it). */
static size_t col(const reader_t *r, const fs_csv_field_t *f)
{
    return (size_t)(f->s - r->csv.line) + 1;
}

static int is_name(const fs_csv_field_t *f, const char *name)
{
    return f->len == strlen(name) && memcmp(f->s, name, f->len) == 0;
}

/* A finite decimal number >= 0 ("412.5", "4.1e2"): no sign other than an
 * exponent's, no hex, inf or nan.  0 or -1. */
static int parse_g(const fs_csv_field_t *f, double *out)
{
    char buf[64];
    if (f->len == 0 || f->len >= sizeof buf)
        return -1;
    memcpy(buf, f->s, f->len);
    buf[f->len] = '\0';
    if (buf[0] != '.' && (buf[0] < '0' || buf[0] > '9'))
        return -1;
    for (size_t i = 0; i < f->len; i++)
        if (!strchr("0123456789.eE+-", buf[i]))
            return -1;
    char *e = NULL;
    double x = strtod(buf, &e);
    if (e != buf + f->len || !isfinite(x) || x < 0)
        return -1;
    *out = x;
    return 0;
}

static int header(reader_t *r)
{
    int rc = next(r);
    if (rc == 0)
        return fs_error_set(r->err, FS_EINVAL, "%s:%llu:1: empty file (expected the header %s)",
                            r->csv.path, (unsigned long long)r->csv.line_no + 1, HEADER);
    if (rc < 0)
        return rc;
    char got[128];
    fs_rdr_show(got, sizeof got, r->csv.line, r->csv.line_len);   /* before the split cuts it */
    size_t len = r->csv.line_len;
    if ((rc = fs_csv_split(&r->csv, ',', r->err)))
        return rc;
    const fs_csv_field_t *f = r->csv.fields;
    size_t n = r->csv.n_fields;
    for (size_t i = 0; i < 2; i++)
        if (i >= n || !is_name(&f[i], i ? FS_CARBON_COL_G : FS_CARBON_COL_HOUR))
            return at(r, i < n ? col(r, &f[i]) : len + 1, "expected the header %s (got '%s')",
                      HEADER, got);
    if (n > 2)
        return at(r, col(r, &f[1]) + f[1].len, "expected the header %s, nothing after it (got '%s')",
                  HEADER, got);
    return 0;
}

/* Row k: hour_start_s = 3600 k and the intensity. */
static int row(reader_t *r, size_t k, double *g)
{
    size_t len = r->csv.line_len;
    int rc = fs_csv_split(&r->csv, ',', r->err);
    if (rc)
        return rc;
    const fs_csv_field_t *f = r->csv.fields;
    size_t n = r->csv.n_fields;
    char got[128];
    if (n < 2)
        return at(r, len + 1, "expected 2 fields (%s), got %zu", HEADER, n);
    if (n > 2)
        return at(r, col(r, &f[1]) + f[1].len, "expected 2 fields (%s), got more", HEADER);
    uint64_t h;
    if (fs_rdr_u64(f[0].s, f[0].len, &h) || h != (uint64_t)k * 3600u) {
        fs_rdr_show(got, sizeof got, f[0].s, f[0].len);
        return at(r, col(r, &f[0]),
                  "field %s: expected %llu (row %zu starts hour %zu of the run: whole seconds, "
                  "consecutive hours from 0), got '%s'", FS_CARBON_COL_HOUR,
                  (unsigned long long)k * 3600u, k + 1, k, got);
    }
    if (parse_g(&f[1], g)) {
        fs_rdr_show(got, sizeof got, f[1].s, f[1].len);
        return at(r, col(r, &f[1]), "field %s: expected g CO2e per kWh, a number >= 0, got '%s'",
                  FS_CARBON_COL_G, got);
    }
    return 0;
}

int fs_carbon_load(const char *path, double **out, size_t *n, fs_error_t *err)
{
    *out = NULL;
    *n = 0;
    reader_t r = {.err = err};
    int rc = fs_csv_open(&r.csv, path, 0, err);
    if (rc)
        return rc;
    double *v = NULL;
    size_t len = 0, cap = 0;
    rc = header(&r);
    while (!rc) {
        int more = next(&r);
        if (more <= 0) {
            rc = more;
            break;
        }
        if (fs_grow((void **)&v, &cap, len + 1, sizeof *v)) {
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
            break;
        }
        if (!(rc = row(&r, len, &v[len])))
            len++;
    }
    if (!rc && len == 0)
        rc = fs_error_set(err, FS_EINVAL, "%s:%llu:1: expected a row after the header (the "
                          "hour starting at 0 s)", path, (unsigned long long)r.csv.line_no + 1);
    fs_csv_close(&r.csv);
    if (rc) {
        fs_free(v);
        return rc;
    }
    *out = v;
    *n = len;
    return 0;
}
