/*
 * fs_outages: the outage file reader and its check against a cluster
 * (fs_outages.h).
 */
#include "fs_outages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/fs_alloc.h"
#include "fs_csv.h"
#include "fs_rdr.h"

static const char *const k_cols[] = {"start", "end", "nodes", "cause"};

void fs_outages_free(fs_outages_t *o)
{
    if (!o)
        return;
    fs_free(o->path);
    fs_free(o->rows);
    memset(o, 0, sizeof *o);
}

/* Column (1-based) of field k of the current line. */
static size_t col_of(const fs_csv_t *c, size_t k)
{
    return (size_t)(c->fields[k].s - c->line) + 1;
}

static int bad(fs_error_t *err, const fs_csv_t *c, size_t k, const char *what)
{
    char got[48];
    snprintf(got, sizeof got, "%.40s", c->fields[k].s);
    return fs_error_set(err, FS_EINVAL, "%s:%llu:%zu: %s: expected %s (got '%s')", c->path,
                        (unsigned long long)c->line_no, col_of(c, k), k_cols[k], what, got);
}

static int parse_u32(const char *s, size_t n, uint32_t *out)
{
    uint64_t v;
    if (!n || fs_rdr_u64(s, n, &v) || v > UINT32_MAX - 1)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int nodes_field(const fs_csv_t *c, fs_outage_t *r, fs_error_t *err)
{
    const fs_csv_field_t *f = &c->fields[2];
    r->col_nodes = (uint32_t)col_of(c, 2);
    if (f->len == 3 && memcmp(f->s, "all", 3) == 0) {
        r->kind = FS_OUT_ALL;
        return 0;
    }
    if (f->len && f->s[0] >= '0' && f->s[0] <= '9') {
        const char *dash = memchr(f->s, '-', f->len);
        size_t n1 = dash ? (size_t)(dash - f->s) : f->len;
        r->kind = FS_OUT_RANGE;
        if (parse_u32(f->s, n1, &r->lo) ||
            (dash ? parse_u32(dash + 1, f->len - n1 - 1, &r->hi) : (r->hi = r->lo, 0)) ||
            r->hi < r->lo)
            return bad(err, c, 2, "'all', a pool name, a node I or a range I-J with I <= J");
        return 0;
    }
    if (!f->len || f->len >= FS_OUTAGE_NAME_MAX)
        return bad(err, c, 2, "'all', a pool name, a node I or a range I-J");
    r->kind = FS_OUT_POOL;
    memcpy(r->pool, f->s, f->len);
    r->pool[f->len] = '\0';
    return 0;
}

static int read_rows(fs_csv_t *c, fs_outages_t *o, fs_error_t *err)
{
    size_t cap = 0;
    int header = 0, rc;
    while ((rc = fs_csv_next_line(c, err)) == 1) {
        const char *l = c->line;
        while (*l == ' ' || *l == '\t')
            l++;
        if (*l == '\0' || *l == '#')
            continue;
        if ((rc = fs_csv_split(c, ',', err)))
            return rc;
        for (size_t k = 0; k < c->n_fields; k++) {   /* trim blanks */
            fs_csv_field_t *f = &c->fields[k];
            while (f->len && (*f->s == ' ' || *f->s == '\t')) {
                f->s++;
                f->len--;
            }
            while (f->len && (f->s[f->len - 1] == ' ' || f->s[f->len - 1] == '\t'))
                f->s[--f->len] = '\0';
        }
        if (!header) {
            int okh = c->n_fields >= 3 && c->n_fields <= 4;
            for (size_t k = 0; okh && k < c->n_fields; k++)
                okh = strcmp(c->fields[k].s, k_cols[k]) == 0;
            if (!okh)
                return fs_error_set(err, FS_EINVAL, "%s:%llu:1: expected the header "
                                    "'start,end,nodes' or 'start,end,nodes,cause'", c->path,
                                    (unsigned long long)c->line_no);
            header = (int)c->n_fields;
            continue;
        }
        if (c->n_fields < 3 || c->n_fields > (size_t)header)
            return fs_error_set(err, FS_EINVAL, "%s:%llu:1: expected %s fields as the header "
                                "has, got %zu", c->path, (unsigned long long)c->line_no,
                                header == 4 ? "3 or 4" : "3", c->n_fields);
        if (fs_grow((void **)&o->rows, &cap, o->n + 1, sizeof *o->rows))
            return fs_error_set(err, FS_ENOMEM, "%s: out of memory", c->path);
        fs_outage_t *r = &o->rows[o->n];
        memset(r, 0, sizeof *r);
        r->line = (uint32_t)c->line_no;
        if (fs_rdr_seconds(c->fields[0].s, c->fields[0].len, &r->start) || r->start < 0)
            return bad(err, c, 0, "seconds >= 0");
        if (fs_rdr_seconds(c->fields[1].s, c->fields[1].len, &r->end) || r->end <= r->start)
            return bad(err, c, 1, "seconds after start");
        if ((rc = nodes_field(c, r, err)))
            return rc;
        if (c->n_fields == 4) {
            if (c->fields[3].len >= FS_OUTAGE_CAUSE_MAX)
                return bad(err, c, 3, "at most 31 bytes");
            memcpy(r->cause, c->fields[3].s, c->fields[3].len + 1);
        }
        if (!r->cause[0])
            snprintf(r->cause, sizeof r->cause, "outage");
        o->n++;
    }
    if (rc < 0 || rc > 1)
        return rc;
    if (!header)
        return fs_error_set(err, FS_EINVAL, "%s:1:1: expected the header 'start,end,nodes'; "
                            "the file is empty", c->path);
    return 0;
}

int fs_outages_read(const char *path, fs_outages_t *out, fs_error_t *err)
{
    memset(out, 0, sizeof *out);
    fs_csv_t c;
    int rc = fs_csv_open(&c, path, 0, err);
    if (rc)
        return rc;
    if (!(out->path = fs_strdup(path)))
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    else
        rc = read_rows(&c, out, err);
    fs_csv_close(&c);
    if (rc)
        fs_outages_free(out);
    return rc;
}

static int by_start(const void *a, const void *b)
{
    const fs_outage_t *x = *(const fs_outage_t *const *)a, *y = *(const fs_outage_t *const *)b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

int fs_outages_resolve(fs_outages_t *o, uint32_t n_nodes, const char *const *names,
                       const uint32_t *first, const uint32_t *count, size_t n_pools,
                       fs_error_t *err)
{
    for (size_t i = 0; i < o->n; i++) {
        fs_outage_t *r = &o->rows[i];
        if (r->kind == FS_OUT_ALL) {
            r->lo = 0;
            r->hi = n_nodes;
        } else if (r->kind == FS_OUT_POOL) {
            size_t p = 0;
            while (p < n_pools && strcmp(names[p], r->pool) != 0)
                p++;
            if (p == n_pools)
                return fs_error_set(err, FS_EINVAL, "%s:%u:%u: nodes: no pool is named '%s' "
                                    "(expected 'all', a pool's name, or node indexes)",
                                    o->path, r->line, r->col_nodes, r->pool);
            r->lo = first[p];
            r->hi = first[p] + count[p];
        } else {
            if (r->hi >= n_nodes)
                return fs_error_set(err, FS_EINVAL, "%s:%u:%u: nodes: node %u does not exist "
                                    "(the cluster has %u nodes, 0-%u)", o->path, r->line,
                                    r->col_nodes, r->hi, n_nodes, n_nodes ? n_nodes - 1 : 0);
            r->hi++;
        }
    }
    /* overlaps: in start order, each row against the rows still open */
    const fs_outage_t **by = fs_malloc((o->n ? o->n : 1) * sizeof *by);
    if (!by)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", o->path);
    for (size_t i = 0; i < o->n; i++)
        by[i] = &o->rows[i];
    qsort(by, o->n, sizeof *by, by_start);
    int rc = 0;
    for (size_t i = 0; i < o->n && !rc; i++)
        for (size_t k = i + 1; k < o->n && by[k]->start < by[i]->end && !rc; k++)
            if (by[k]->lo < by[i]->hi && by[i]->lo < by[k]->hi) {
                const fs_outage_t *a = by[i], *b = by[k];
                const fs_outage_t *later = a->line > b->line ? a : b, *other = later == a ? b : a;
                uint32_t node = a->lo > b->lo ? a->lo : b->lo;
                rc = fs_error_set(err, FS_EINVAL, "%s:%u:1: overlaps the outage of line %u on "
                                  "node %u (expected outages of one node not to overlap in "
                                  "time)", o->path, later->line, other->line, node);
            }
    fs_free(by);
    return rc;
}
