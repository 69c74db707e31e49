/*
 * fs_empirical: the file of an empirical distribution (dist: empirical,
 * path, column): numbers of seconds >= 0, one per line, or the column
 * `column` of a CSV with a header; '#' lines and blank lines are skipped,
 * and without `column` a first line that is not a number (a one-word
 * header such as "runtime").
 *
 * Bounded, so that /dev/zero, a FIFO that never ends or a huge file is
 * refused rather than read for minutes: at most FS_EMP_MAX_VALUES values,
 * FS_EMP_MAX_BYTES bytes in all and FS_EMP_MAX_LINE bytes per line; a NUL
 * byte means the file is not text.  Each refusal names the file, the line
 * and the limit (docs/robustness.md).
 */
#include "fs_scnint.h"
#include "fs_units.h"
#include "../sim/fs_alloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define FS_EMP_MAX_VALUES 10000000u                 /* 80 MB of doubles */
#define FS_EMP_MAX_BYTES ((size_t)256 << 20)         /* 256 MiB */
#define FS_EMP_MAX_LINE 65536u

typedef struct emp {
    fs_sctx_t *c;
    FILE *f;
    const char *path, *column, *dpath;
    const fs_ynode_t *at;
    char line[FS_EMP_MAX_LINE + 1];
    size_t lineno, bytes;
    long col;               /* the column read; -1: the whole line */
    double *vals;
    size_t n, cap;
} emp_t;

/* Reads the next line into e->line (NUL-terminated, no newline): 1, 0 at
 * the end of the file, or an error. */
static int next_line(emp_t *e)
{
    size_t len = 0;
    int ch = 0;
    while ((ch = getc(e->f)) != EOF && ch != '\n') {
        if (++e->bytes > FS_EMP_MAX_BYTES)
            return fs_yt_fail(e->c, e->at, "%s: %s: more than %zu MiB: an empirical sample is at most "
                              "%zu MiB and %u values (is it the right file?)", e->dpath, e->path,
                              FS_EMP_MAX_BYTES >> 20, FS_EMP_MAX_BYTES >> 20, FS_EMP_MAX_VALUES);
        if (ch == '\0')
            return fs_yt_fail(e->c, e->at, "%s: %s:%zu: not a text file (it holds a NUL byte)",
                              e->dpath, e->path, e->lineno + 1);
        if (len == FS_EMP_MAX_LINE)
            return fs_yt_fail(e->c, e->at, "%s: %s:%zu: line longer than %u bytes (expected a number "
                              "of seconds, or a CSV row)", e->dpath, e->path, e->lineno + 1,
                              FS_EMP_MAX_LINE);
        e->line[len++] = (char)ch;
    }
    if (ch == EOF && ferror(e->f))
        return fs_yt_fail(e->c, e->at, "%s: cannot read '%s': %s", e->dpath, e->path, strerror(errno));
    if (ch == EOF && len == 0)
        return 0;
    e->bytes++;     /* the newline */
    e->lineno++;
    while (len && isspace((unsigned char)e->line[len - 1]))
        len--;
    e->line[len] = '\0';
    return 1;
}

/* The header line p of a CSV: finds e->column in it. */
static int find_column(emp_t *e, const char *p)
{
    long i = 0;
    for (const char *q = p;; i++) {
        size_t fl = strcspn(q, ",");
        const char *fb = q, *fe = q + fl;
        while (fb < fe && (isspace((unsigned char)*fb) || *fb == '"'))
            fb++;
        while (fe > fb && (isspace((unsigned char)fe[-1]) || fe[-1] == '"'))
            fe--;
        if ((size_t)(fe - fb) == strlen(e->column) && strncmp(fb, e->column, (size_t)(fe - fb)) == 0) {
            e->col = i;
            return 0;
        }
        if (!q[fl])
            break;
        q += fl + 1;
    }
    return fs_yt_fail(e->c, e->at, "%s: %s:%zu: no column '%s' in the header '%s'", e->dpath, e->path,
                      e->lineno, e->column, p);
}

/* The value of data line p, appended to e->vals. */
static int add_value(emp_t *e, const char *p)
{
    const char *fb = p;
    size_t fl = strlen(p);
    if (e->col >= 0) {
        for (long i = 0; i < e->col; i++) {
            const char *comma = strchr(fb, ',');
            if (!comma)
                return fs_yt_fail(e->c, e->at, "%s: %s:%zu: the row has no column %ld ('%s')", e->dpath,
                                  e->path, e->lineno, e->col + 1, e->column);
            fb = comma + 1;
        }
        fl = strcspn(fb, ",");
    } else if (strchr(p, ',')) {
        return fs_yt_fail(e->c, e->at, "%s: %s:%zu: several columns: give 'column' to say which to read",
                          e->dpath, e->path, e->lineno);
    }
    char num[128];
    snprintf(num, sizeof num, "%.*s", (int)(fl < sizeof num ? fl : sizeof num - 1), fb);
    double x;
    if (fs_units_parse_number(num, &x, NULL) != 0 || x < 0)
        return fs_yt_fail(e->c, e->at, "%s: %s:%zu: '%s' is not a number of seconds >= 0", e->dpath,
                          e->path, e->lineno, num);
    if (e->n == FS_EMP_MAX_VALUES)
        return fs_yt_fail(e->c, e->at, "%s: %s:%zu: more than %u values: an empirical sample is at "
                          "most %u values and %zu MiB (thin it, or fit a distribution to it)",
                          e->dpath, e->path, e->lineno, FS_EMP_MAX_VALUES, FS_EMP_MAX_VALUES,
                          FS_EMP_MAX_BYTES >> 20);
    if (fs_grow((void **)&e->vals, &e->cap, e->n + 1, sizeof *e->vals))
        return fs_yt_nomem(e->c);
    e->vals[e->n++] = x;
    return 0;
}

static int read_values(emp_t *e)
{
    int rc, header_done = 0;
    while ((rc = next_line(e)) == 1) {
        const char *p = e->line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        if (!header_done) {
            header_done = 1;
            if (e->column) {
                if ((rc = find_column(e, p)) != 0)
                    return rc;
                continue;
            }
            double x;
            if (fs_units_parse_number(p, &x, NULL) != 0 && !strchr(p, ','))
                continue; /* a one-column header such as "runtime" */
        }
        if ((rc = add_value(e, p)) != 0)
            return rc;
    }
    return rc;
}

int fs_emp_load(fs_sctx_t *c, const char *path, const char *column, fs_dist_t *d,
                const fs_ynode_t *at, const char *dpath)
{
    emp_t *e = fs_calloc(1, sizeof *e);
    if (!e)
        return fs_yt_nomem(c);
    *e = (emp_t){.c = c, .path = path, .column = column, .dpath = dpath, .at = at, .col = -1};
    int rc = 0;
    if (!(e->f = fopen(path, "r")))
        rc = fs_yt_fail(c, at, "%s: cannot open '%s': %s", dpath, path, strerror(errno));
    else if ((rc = read_values(e)) == 0 && e->n == 0)
        rc = fs_yt_fail(c, at, "%s: '%s' holds no values", dpath, path);
    if (!rc) {
        fs_free(d->values);
        d->values = e->vals;
        d->n_values = e->n;
        e->vals = NULL;
    }
    if (e->f)
        fclose(e->f);
    fs_free(e->vals);
    fs_free(e);
    return rc;
}
