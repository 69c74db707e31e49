/*
 * fs_resv: `scontrol show reservation` output as outages (fs_resv.h).
 */
#include "fs_resv.h"

#include <stdio.h>
#include <string.h>

#include "../sim/fs_alloc.h"
#include "fs_csv.h"
#include "fs_rdr.h"

#define NODES_MAX 4096

typedef struct resv {
    int open;               /* a ReservationName= was seen */
    char name[FS_OUTAGE_CAUSE_MAX];
    uint32_t line;          /* of ReservationName= */
    fs_time_t start, end;   /* us since 1970; -1 not seen */
    int maint;
    char nodes[NODES_MAX];  /* the Nodes= value, copied */
    uint32_t n_line, n_col; /* where it is; 0: not seen */
} resv_t;

static int at(fs_error_t *err, const fs_csv_t *c, uint32_t line, size_t col, const char *key,
              const char *what, const char *v, size_t n)
{
    return fs_error_set(err, FS_EINVAL, "%s:%u:%zu: %s: expected %s (got '%.*s')", c->path, line,
                        col, key, what, (int)(n < 60 ? n : 60), v);
}

static int add_row(fs_outages_t *o, size_t *cap, const resv_t *r, fs_time_t origin, int kind,
                   uint32_t lo, uint32_t hi)
{
    if (fs_grow((void **)&o->rows, cap, o->n + 1, sizeof *o->rows))
        return -1;
    fs_outage_t *x = &o->rows[o->n++];
    memset(x, 0, sizeof *x);
    x->start = r->start - origin < 0 ? 0 : r->start - origin;
    x->end = r->end - origin;
    x->kind = kind;
    x->lo = lo;
    x->hi = hi;
    x->line = r->line;
    x->col_nodes = r->n_col;
    const char *what = r->maint ? "maintenance" : "reservation";
    int room = (int)(sizeof x->cause - strlen(what) - 2);
    snprintf(x->cause, sizeof x->cause, "%s %.*s", what, room, r->name);
    return 0;
}

/* The number a host name ends in. */
static int host_number(const char *s, size_t n, uint32_t *out)
{
    size_t d = n;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
    uint64_t v;
    if (d == n || fs_rdr_u64(s + d, n - d, &v) || v > UINT32_MAX - 1)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* A range "A" or "A-B" of a bracket. */
static int range_of(const char *s, size_t n, uint32_t *lo, uint32_t *hi)
{
    const char *dash = memchr(s, '-', n);
    uint64_t a, b;
    if (dash) {
        if (fs_rdr_u64(s, (size_t)(dash - s), &a) ||
            fs_rdr_u64(dash + 1, n - (size_t)(dash - s) - 1, &b))
            return -1;
    } else if (fs_rdr_u64(s, n, &a)) {
        return -1;
    } else {
        b = a;
    }
    if (b < a || b > UINT32_MAX - 1)
        return -1;
    *lo = (uint32_t)a;
    *hi = (uint32_t)b;
    return 0;
}

static int finish(const fs_csv_t *c, resv_t *r, fs_time_t origin, fs_outages_t *o, size_t *cap,
                  fs_error_t *err)
{
    if (!r->open)
        return 0;
    r->open = 0;
    if (r->start < 0 || r->end < 0 || !r->n_line)
        return fs_error_set(err, FS_EINVAL, "%s:%u:1: reservation '%s': expected StartTime=, "
                            "EndTime= and Nodes=", c->path, r->line, r->name);
    if (r->end <= r->start)
        return fs_error_set(err, FS_EINVAL, "%s:%u:1: reservation '%s': expected EndTime after "
                            "StartTime", c->path, r->line, r->name);
    if (r->end - origin <= 0)
        return 0;   /* over before the run */
    const char *v = r->nodes;
    size_t n = strlen(v);
    if (n == 3 && memcmp(v, "ALL", 3) == 0)
        return add_row(o, cap, r, origin, FS_OUT_ALL, 0, 0)
                   ? fs_error_set(err, FS_ENOMEM, "%s: out of memory", c->path) : 0;
    size_t i = 0;
    while (i < n) {
        /* one host expression: up to a comma outside brackets */
        size_t j = i;
        int depth = 0;
        while (j < n && (depth || v[j] != ',')) {
            depth += v[j] == '[';
            depth -= v[j] == ']';
            j++;
        }
        const char *h = v + i, *br = memchr(h, '[', j - i);
        size_t col = r->n_col + 6 + i;  /* after "Nodes=" */
        if (!br) {
            uint32_t x;
            if (host_number(h, j - i, &x))
                return at(err, c, r->n_line, col, "Nodes", "ALL or host names ending in their "
                          "node number (nid00012, nid[00000-00099])", h, j - i);
            if (add_row(o, cap, r, origin, FS_OUT_RANGE, x, x))
                return fs_error_set(err, FS_ENOMEM, "%s: out of memory", c->path);
        } else {
            const char *close = memchr(br, ']', (size_t)(v + j - br));
            if (!close || close != v + j - 1)
                return at(err, c, r->n_line, col, "Nodes", "a host list prefix[A-B,C]", h, j - i);
            const char *p = br + 1;
            while (p < close) {
                const char *e = memchr(p, ',', (size_t)(close - p));
                if (!e)
                    e = close;
                uint32_t lo, hi;
                if (range_of(p, (size_t)(e - p), &lo, &hi))
                    return at(err, c, r->n_line, r->n_col + 6 + (size_t)(p - v), "Nodes",
                              "a node number N or a range A-B with A <= B", p, (size_t)(e - p));
                if (add_row(o, cap, r, origin, FS_OUT_RANGE, lo, hi))
                    return fs_error_set(err, FS_ENOMEM, "%s: out of memory", c->path);
                p = e + (e < close);
            }
        }
        i = j + (j < n);
    }
    return 0;
}

static int token(const fs_csv_t *c, const char *t, size_t n, size_t col, resv_t *r,
                 fs_time_t origin, fs_outages_t *o, size_t *cap, fs_error_t *err)
{
    const char *eq = memchr(t, '=', n);
    size_t kn = eq ? (size_t)(eq - t) : n;
    const char *v = eq ? eq + 1 : t + n;
    size_t vn = eq ? n - kn - 1 : 0;
    uint32_t line = (uint32_t)c->line_no;
#define IS(k) (kn == sizeof k - 1 && memcmp(t, k, kn) == 0)
    if (IS("ReservationName")) {
        int rc = finish(c, r, origin, o, cap, err);
        if (rc)
            return rc;
        memset(r, 0, sizeof *r);
        r->open = 1;
        r->line = line;
        r->start = r->end = -1;
        snprintf(r->name, sizeof r->name, "%.*s", (int)vn, v);
        return 0;
    }
    if (!r->open)
        return at(err, c, line, col, "ReservationName", "a reservation to begin with "
                  "ReservationName=", t, n);
    if (IS("StartTime") || IS("EndTime")) {
        fs_time_t x;
        if (fs_rdr_datetime(v, vn, &x))
            return at(err, c, line, col + kn + 1, IS("StartTime") ? "StartTime" : "EndTime",
                      "a date YYYY-MM-DDTHH:MM:SS", v, vn);
        *(IS("StartTime") ? &r->start : &r->end) = x;
    } else if (IS("Nodes")) {
        if (vn == 0 || vn >= NODES_MAX)
            return at(err, c, line, col + kn + 1, "Nodes", "ALL or a host list (at most 4095 "
                      "bytes)", v, vn);
        memcpy(r->nodes, v, vn);
        r->nodes[vn] = '\0';
        r->n_line = line;
        r->n_col = (uint32_t)col;
    } else if (IS("Flags")) {
        for (size_t i = 0; i + 5 <= vn; i++)
            if (memcmp(v + i, "MAINT", 5) == 0 && (i == 0 || v[i - 1] == ',') &&
                (i + 5 == vn || v[i + 5] == ','))
                r->maint = 1;
    }
#undef IS
    return 0;
}

/* The reservations of c, whose current line is the first one. */
static int resv_rows(fs_csv_t *c, const char *origin, fs_outages_t *o, size_t *cap,
                     fs_error_t *err)
{
    fs_time_t org;
    if (!origin)
        return fs_error_set(err, FS_EINVAL, "%s:%llu:1: reservations (scontrol show "
                            "reservation) give dates: set cluster.outages_origin to the date at "
                            "the run's time 0", c->path, (unsigned long long)c->line_no);
    if (fs_rdr_datetime(origin, strlen(origin), &org))
        return fs_error_set(err, FS_EINVAL, "cluster.outages_origin: expected a date "
                            "YYYY-MM-DDTHH:MM:SS (got '%.60s')", origin);
    resv_t *r = fs_calloc(1, sizeof *r);
    if (!r)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", c->path);
    int rc = 0;
    do {
        const char *l = c->line;
        while (!rc && *l) {
            while (*l == ' ' || *l == '\t' || *l == '\r')
                l++;
            if (!*l || *l == '#')
                break;
            const char *e = l;
            while (*e && *e != ' ' && *e != '\t' && *e != '\r')
                e++;
            rc = token(c, l, (size_t)(e - l), (size_t)(l - c->line) + 1, r, org, o, cap, err);
            l = e;
        }
    } while (!rc && (rc = fs_csv_next_line(c, err)) == 1 && ((rc = 0), 1));
    if (!rc)    /* the end of the file */
        rc = finish(c, r, org, o, cap, err);
    fs_free(r);
    return rc;
}

int fs_resv_outages_read(const char *path, const char *origin, fs_outages_t *out,
                         fs_error_t *err)
{
    memset(out, 0, sizeof *out);
    fs_csv_t c;
    int rc = fs_csv_open(&c, path, 0, err);
    if (rc)
        return rc;
    int resv = 0;
    while ((rc = fs_csv_next_line(&c, err)) == 1) {
        const char *l = c.line;
        while (*l == ' ' || *l == '\t')
            l++;
        if (*l == '\0' || *l == '#')
            continue;
        resv = strncmp(l, "ReservationName=", 16) == 0;
        break;
    }
    if (!resv) {
        fs_csv_close(&c);
        return rc < 0 ? rc : fs_outages_read(path, out, err);
    }
    size_t cap = 0;
    if (!(out->path = fs_strdup(path)))
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    else
        rc = resv_rows(&c, origin, out, &cap, err);
    fs_csv_close(&c);
    if (rc)
        fs_outages_free(out);
    return rc;
}
