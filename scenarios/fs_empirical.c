/*
 * fs_empirical: the file of an empirical distribution (dist: empirical,
 * path, column).
 */
#include "fs_scnint.h"
#include "fs_units.h"
#include "../sim/fs_alloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Reads an empirical sample: numbers of seconds, one per line, or column
 * `column` of a CSV with a header; '#' lines are comments.  Errors are
 * reported at node `at`. */
int fs_emp_load(fs_sctx_t *c, const char *path, const char *column, fs_dist_t *d,
                const fs_ynode_t *at, const char *dpath)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fs_yt_fail(c, at, "%s: cannot open '%s': %s", dpath, path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 0, n = 0, vcap = 0;
    double *vals = NULL;
    int rc = 0, header_done = 0;
    long col = -1;
    for (;;) {
        size_t len = 0;
        int ch = 0;
        while ((ch = fgetc(f)) != EOF && ch != '\n') {
            if (fs_grow((void **)&line, &cap, len + 2, 1)) {
                rc = fs_yt_nomem(c);
                goto out;
            }
            line[len++] = (char)ch;
        }
        if (ch == EOF && len == 0)
            break;
        lineno++;
        if (fs_grow((void **)&line, &cap, len + 1, 1)) {
            rc = fs_yt_nomem(c);
            goto out;
        }
        line[len] = '\0';
        while (len && (line[len - 1] == '\r' || isspace((unsigned char)line[len - 1])))
            line[--len] = '\0';
        const char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        if (!header_done) {
            header_done = 1;
            if (column) {
                long i = 0;
                for (const char *q = p;; i++) {
                    size_t fl = strcspn(q, ",");
                    const char *fb = q, *fe = q + fl;
                    while (fb < fe && (isspace((unsigned char)*fb) || *fb == '"'))
                        fb++;
                    while (fe > fb && (isspace((unsigned char)fe[-1]) || fe[-1] == '"'))
                        fe--;
                    if ((size_t)(fe - fb) == strlen(column) && strncmp(fb, column, (size_t)(fe - fb)) == 0) {
                        col = i;
                        break;
                    }
                    if (!q[fl])
                        break;
                    q += fl + 1;
                }
                if (col < 0) {
                    rc = fs_yt_fail(c, at, "%s: %s:%zu: no column '%s' in the header '%s'", dpath, path,
                                    lineno, column, p);
                    goto out;
                }
                continue;
            }
            double x;
            if (fs_units_parse_number(p, &x, NULL) != 0 && !strchr(p, ','))
                continue; /* a one-column header such as "runtime" */
        }
        const char *fb = p;
        size_t fl = strlen(p);
        if (col >= 0) {
            for (long i = 0; i < col; i++) {
                const char *comma = strchr(fb, ',');
                if (!comma) {
                    rc = fs_yt_fail(c, at, "%s: %s:%zu: the row has no column %ld ('%s')", dpath, path,
                                    lineno, col + 1, column);
                    goto out;
                }
                fb = comma + 1;
            }
            fl = strcspn(fb, ",");
        } else if (strchr(p, ',')) {
            rc = fs_yt_fail(c, at, "%s: %s:%zu: several columns: give 'column' to say which to read", dpath,
                            path, lineno);
            goto out;
        }
        char num[128];
        snprintf(num, sizeof num, "%.*s", (int)(fl < sizeof num ? fl : sizeof num - 1), fb);
        double x;
        if (fs_units_parse_number(num, &x, NULL) != 0 || x < 0) {
            rc = fs_yt_fail(c, at, "%s: %s:%zu: '%s' is not a number of seconds >= 0", dpath, path, lineno, num);
            goto out;
        }
        if (fs_grow((void **)&vals, &vcap, n + 1, sizeof *vals)) {
            rc = fs_yt_nomem(c);
            goto out;
        }
        vals[n++] = x;
    }
    if (ferror(f)) {
        rc = fs_yt_fail(c, at, "%s: cannot read '%s'", dpath, path);
        goto out;
    }
    if (n == 0) {
        rc = fs_yt_fail(c, at, "%s: '%s' holds no values", dpath, path);
        goto out;
    }
    fs_free(d->values);
    d->values = vals;
    d->n_values = n;
    vals = NULL;
out:
    fclose(f);
    fs_free(line);
    fs_free(vals);
    return rc;
}
