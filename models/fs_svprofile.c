/*
 * fs_svprofile: a measured step-time profile (fs_svprofile.h).
 */
#include "fs_svprofile.h"

#include "../sim/fs_alloc.h"
#include "../traces/fs_csv.h"
#include "../traces/fs_rdr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { C_BATCH, C_PREFILL, C_CONTEXT, C_STEP, N_COLS };
static const char *const names[N_COLS] = {"batch", "prefill_tokens", "context_tokens", "step_us"};

typedef struct row {
    uint64_t v[3];
    double us;
    uint64_t line;
} row_t;

void fs_svprof_free(fs_svprof_t *p)
{
    if (!p)
        return;
    fs_free(p->pre_p);
    fs_free(p->pre_us);
    fs_free(p->b);
    fs_free(p->x);
    fs_free(p->d);
    fs_free(p);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted distinct values of v[0..n) in place; their count. */
static size_t distinct(uint64_t *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[k - 1])
            v[k++] = v[i];
    return k;
}

static size_t index_of(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (v[m] < x)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* The rows of the file into *rows (*n of them). */
static int read_rows(const char *path, row_t **rows, size_t *n, fs_error_t *err)
{
    fs_csv_t c;
    int rc = fs_csv_open(&c, path, FS_CSV_BUF_DEFAULT, err);
    if (rc)
        return rc;
    size_t col[N_COLS], cap = 0, have = 0;
    row_t *r = NULL;
    int header = 0;
    while ((rc = fs_csv_next_line(&c, err)) == 1) {
        if (c.line[0] == '\0' || c.line[0] == '#')
            continue;
        if ((rc = fs_csv_split(&c, ',', err)))
            break;
        if (!header) {
            for (size_t k = 0; k < N_COLS && !rc; k++) {
                col[k] = SIZE_MAX;
                for (size_t i = 0; i < c.n_fields; i++)
                    if (strcasecmp(c.fields[i].s, names[k]) == 0)
                        col[k] = i;
                if (col[k] == SIZE_MAX)
                    rc = fs_error_set(err, FS_EINVAL, "%s:%llu: expected the header %s,%s,%s,%s "
                                      "(a step-time profile), no column %s", path,
                                      (unsigned long long)c.line_no, names[0], names[1], names[2],
                                      names[3], names[k]);
            }
            if (rc)
                break;
            header = 1;
            continue;
        }
        if (have == cap && fs_grow((void **)&r, &cap, have + 1, sizeof *r)) {
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
            break;
        }
        row_t *w = &r[have];
        w->line = c.line_no;
        for (size_t k = 0; k < N_COLS && !rc; k++) {
            const fs_csv_field_t *f = col[k] < c.n_fields ? &c.fields[col[k]] : NULL;
            if (!f || f->len == 0) {
                rc = fs_error_set(err, FS_EINVAL, "%s:%llu: field %s: missing", path,
                                  (unsigned long long)c.line_no, names[k]);
            } else if (k < C_STEP) {
                if (fs_rdr_u64(f->s, f->len, &w->v[k]) || (k == C_BATCH && w->v[k] > UINT32_MAX))
                    rc = fs_error_set(err, FS_EINVAL, "%s:%llu: field %s: expected a whole number "
                                      ">= 0, got '%s'", path, (unsigned long long)c.line_no,
                                      names[k], f->s);
            } else {
                char *end;
                w->us = strtod(f->s, &end);
                if (end != f->s + f->len || !isfinite(w->us) || !(w->us > 0))
                    rc = fs_error_set(err, FS_EINVAL, "%s:%llu: field %s: expected a time in us "
                                      "> 0, got '%s'", path, (unsigned long long)c.line_no,
                                      names[k], f->s);
            }
        }
        if (rc)
            break;
        int pre = w->v[C_BATCH] == 0 && w->v[C_PREFILL] > 0 && w->v[C_CONTEXT] == 0;
        int dec = w->v[C_BATCH] > 0 && w->v[C_PREFILL] == 0;
        if (!pre && !dec) {
            rc = fs_error_set(err, FS_EINVAL, "%s:%llu: field %s: a row is a prefill (batch 0, "
                              "prefill_tokens > 0, context_tokens 0) or a decode (batch >= 1, "
                              "prefill_tokens 0); a mixed iteration is the sum of the two",
                              path, (unsigned long long)c.line_no,
                              w->v[C_BATCH] == 0 && w->v[C_PREFILL] == 0 ? names[C_PREFILL]
                              : w->v[C_BATCH] == 0 ? names[C_CONTEXT] : names[C_PREFILL]);
            break;
        }
        have++;
    }
    fs_csv_close(&c);
    if (rc == 0 && !header)
        rc = fs_error_set(err, FS_EINVAL, "%s: empty: expected the header %s,%s,%s,%s", path,
                          names[0], names[1], names[2], names[3]);
    if (rc) {
        fs_free(r);
        return rc;
    }
    *rows = r;
    *n = have;
    return 0;
}

static int build(const char *path, const row_t *r, size_t n, fs_svprof_t *p, fs_error_t *err)
{
    size_t np = 0, nd = 0;
    for (size_t i = 0; i < n; i++)
        r[i].v[C_BATCH] ? nd++ : np++;
    if (!np || !nd)
        return fs_error_set(err, FS_EINVAL, "%s: no %s rows (expected prefill rows: batch 0, and "
                            "decode rows: batch >= 1)", path, np ? "decode" : "prefill");
    uint64_t *bs = fs_calloc(nd, sizeof *bs), *xs = fs_calloc(nd, sizeof *xs);
    p->pre_p = fs_calloc(np, sizeof *p->pre_p);
    p->pre_us = fs_calloc(np, sizeof *p->pre_us);
    if (!bs || !xs || !p->pre_p || !p->pre_us) {
        fs_free(bs);
        fs_free(xs);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].v[C_BATCH]) {
            bs[k] = r[i].v[C_BATCH];
            xs[k++] = r[i].v[C_CONTEXT];
        }
    p->n_b = distinct(bs, nd);
    p->n_x = distinct(xs, nd);
    int rc = 0;
    p->b = fs_calloc(p->n_b, sizeof *p->b);
    p->x = fs_calloc(p->n_x, sizeof *p->x);
    p->d = fs_calloc(p->n_b * p->n_x, sizeof *p->d);
    uint64_t *seen = fs_calloc(p->n_b * p->n_x + np, sizeof *seen);   /* line of each cell */
    if (!p->b || !p->x || !p->d || !seen) {
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    for (size_t i = 0; i < p->n_b; i++)
        p->b[i] = (uint32_t)bs[i];
    memcpy(p->x, xs, p->n_x * sizeof *p->x);
    /* prefill rows: sorted by tokens (insertion: profiles are small) */
    for (size_t i = 0; i < n && !rc; i++) {
        const row_t *w = &r[i];
        if (w->v[C_BATCH] == 0) {
            size_t j = p->n_pre;
            for (size_t q = 0; q < p->n_pre; q++)
                if (p->pre_p[q] == w->v[C_PREFILL])
                    rc = fs_error_set(err, FS_EINVAL, "%s:%llu: field %s: a second prefill row "
                                      "of %llu tokens (the first at line %llu)", path,
                                      (unsigned long long)w->line, names[C_PREFILL],
                                      (unsigned long long)w->v[C_PREFILL],
                                      (unsigned long long)seen[p->n_b * p->n_x + q]);
            if (rc)
                break;
            while (j > 0 && p->pre_p[j - 1] > w->v[C_PREFILL]) {
                p->pre_p[j] = p->pre_p[j - 1];
                p->pre_us[j] = p->pre_us[j - 1];
                seen[p->n_b * p->n_x + j] = seen[p->n_b * p->n_x + j - 1];
                j--;
            }
            p->pre_p[j] = w->v[C_PREFILL];
            p->pre_us[j] = w->us;
            seen[p->n_b * p->n_x + j] = w->line;
            p->n_pre++;
        } else {
            size_t cell = index_of(bs, p->n_b, w->v[C_BATCH]) * p->n_x +
                          index_of(xs, p->n_x, w->v[C_CONTEXT]);
            if (seen[cell])
                rc = fs_error_set(err, FS_EINVAL, "%s:%llu: field %s: a second decode row for "
                                  "batch %llu at %llu context tokens (the first at line %llu)",
                                  path, (unsigned long long)w->line, names[C_CONTEXT],
                                  (unsigned long long)w->v[C_BATCH],
                                  (unsigned long long)w->v[C_CONTEXT],
                                  (unsigned long long)seen[cell]);
            seen[cell] = w->line;
            p->d[cell] = w->us;
        }
    }
    for (size_t c = 0; c < p->n_b * p->n_x && !rc; c++)
        if (!seen[c])
            rc = fs_error_set(err, FS_EINVAL, "%s: the decode rows are not a grid: no row for "
                              "batch %u at %llu context tokens (every batch needs every context)",
                              path, p->b[c / p->n_x], (unsigned long long)p->x[c % p->n_x]);
out:
    fs_free(seen);
    fs_free(bs);
    fs_free(xs);
    return rc;
}

int fs_svprof_load(const char *path, fs_svprof_t **out, fs_error_t *err)
{
    *out = NULL;
    row_t *r = NULL;
    size_t n = 0;
    int rc = read_rows(path, &r, &n, err);
    if (rc)
        return rc;
    fs_svprof_t *p = fs_calloc(1, sizeof *p);
    if (!p)
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    else
        rc = build(path, r, n, p, err);
    fs_free(r);
    if (rc) {
        fs_svprof_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* y0 + (y1 - y0) (x - x0) / (x1 - x0), in that order. */
static double lerp(double y0, double y1, uint64_t x, uint64_t x0, uint64_t x1)
{
    if (x >= x0)
        return y0 + (y1 - y0) * (double)(x - x0) / (double)(x1 - x0);
    return y0 - (y1 - y0) * (double)(x0 - x) / (double)(x1 - x0);
}

double fs_svprof_prefill(const fs_svprof_t *p, uint64_t tokens)
{
    if (tokens == 0)
        return 0;
    size_t k = index_of(p->pre_p, p->n_pre, tokens);   /* first row >= tokens */
    if (k == p->n_pre)
        k = p->n_pre - 1;   /* beyond: the last segment extended */
    if (k == 0)
        return lerp(0, p->pre_us[0], tokens, 0, p->pre_p[0]);
    return lerp(p->pre_us[k - 1], p->pre_us[k], tokens, p->pre_p[k - 1], p->pre_p[k]);
}

size_t fs_svprof_column(const fs_svprof_t *p, uint32_t b, uint64_t ctx)
{
    /* the first g with b x x[g] >= ctx */
    size_t lo = 0, hi = p->n_x;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if ((uint64_t)b * p->x[m] >= ctx)
            hi = m;
        else
            lo = m + 1;
    }
    return lo < p->n_x ? lo : p->n_x - 1;
}

double fs_svprof_decode(const fs_svprof_t *p, uint32_t b, size_t g)
{
    if (b == 0)
        return 0;
    if (b <= p->b[0] || p->n_b == 1)
        return p->d[g];
    if (b > p->b[p->n_b - 1])
        return p->d[(p->n_b - 1) * p->n_x + g];
    size_t i = 0;           /* the segment b[i] < b <= b[i + 1] */
    while (p->b[i + 1] < b)
        i++;
    return lerp(p->d[i * p->n_x + g], p->d[(i + 1) * p->n_x + g], b, p->b[i], p->b[i + 1]);
}

uint64_t fs_svprof_left_in(const fs_svprof_t *p, uint32_t b, uint64_t ctx0, size_t g)
{
    if (g + 1 >= p->n_x)
        return UINT64_MAX;
    uint64_t top = (uint64_t)b * p->x[g];     /* >= ctx0 */
    return (top - ctx0) / b + 1;
}
