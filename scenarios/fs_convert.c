/*
 * fs_convert: the scenario's tree walked against the key table (fs_keys.c)
 * into an fs_config_t: scalars through fs_keys_parse, compound values (GPU
 * mixes, shares, name maps, distribution blocks, lists of blocks, raw
 * values) here; unknown keys, wrong kinds, missing required keys and choice
 * groups refused at their FILE:LINE:COL.
 */
#include "fs_scnint.h"
#include "fs_units.h"
#include "../sim/fs_alloc.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROB_TOL 1e-9

/* ---- tree -> config -------------------------------------------------------- */

const fs_key_t *fs_conv_find_row(const fs_keytab_t *t, const char *path, size_t *idx)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].path, path) == 0) {
            if (idx)
                *idx = i;
            return &t->rows[i];
        }
    return NULL;
}

/* Does any row lie under the block `path`? */
static int has_children(const fs_keytab_t *t, const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < t->n; i++)
        if (strncmp(t->rows[i].path, path, n) == 0 && t->rows[i].path[n] == '.')
            return 1;
    return 0;
}

/* "a, b, c": the keys allowed directly in block `prefix` ("" = top). */
void fs_conv_children(const fs_keytab_t *t, const char *prefix, char *buf, size_t size)
{
    size_t pl = strlen(prefix), len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->n; i++) {
        const char *p = t->rows[i].path;
        if (pl) {
            if (strncmp(p, prefix, pl) != 0 || p[pl] != '.')
                continue;
            p += pl + 1;
        }
        size_t sl = strcspn(p, ".");
        /* already listed? */
        int dup = 0;
        for (const char *q = buf; *q && !dup; q += strcspn(q, ",") + (q[strcspn(q, ",")] ? 2 : 0))
            dup = strncmp(q, p, sl) == 0 && (q[sl] == ',' || q[sl] == '\0');
        if (dup)
            continue;
        int w = snprintf(buf + len, size - len, "%s%.*s", len ? ", " : "", (int)sl, p);
        if (w < 0 || (size_t)w >= size - len)
            break;
        len += (size_t)w;
    }
}

/* Appends s to buf (size n, length *len), truncating: paths in messages. */
static void append(char *buf, size_t n, size_t *len, const char *s)
{
    size_t k = strlen(s);
    if (k > n - 1 - *len)
        k = n - 1 - *len;
    memcpy(buf + *len, s, k);
    *len += k;
    buf[*len] = '\0';
}

/* buf = "a.b" (or whichever is non-empty). */
static void join(char *buf, size_t n, const char *a, const char *b)
{
    size_t len = 0;
    buf[0] = '\0';
    append(buf, n, &len, a);
    if (*a && *b)
        append(buf, n, &len, ".");
    append(buf, n, &len, b);
}

/* Makes a relative path relative to the scenario file's directory. */
static int resolve_path(fs_sctx_t *c, char **field)
{
    const char *p = *field;
    if (!c->dir || !p || p[0] == '/')
        return 0;
    while (p[0] == '.' && p[1] == '/')
        p += 2;
    size_t n = strlen(c->dir) + strlen(p) + 2;
    char *r = fs_malloc(n);
    if (!r)
        return fs_yt_nomem(c);
    snprintf(r, n, "%s/%s", c->dir, p);
    fs_free(*field);
    *field = r;
    return 0;
}

/* A scalar row's value from node n. */
static int conv_scalar(fs_sctx_t *c, const fs_key_t *k, const fs_ynode_t *n, const char *dpath, void *base)
{
    char exp[700];
    if (n->kind != FS_YT_SCALAR)
        return fs_yt_fail(c, n, "%s: expected %s, found %s", dpath, fs_keys_expect(k, exp, sizeof exp),
                          fs_yt_kind_text(n));
    if (fs_yt_is_null(n))
        return fs_yt_fail(c, n, "%s: missing value (expected %s)", dpath, fs_keys_expect(k, exp, sizeof exp));
    fs_error_t e;
    int rc = fs_keys_parse(k, n->s, base, &e);
    if (rc == FS_ENOMEM)
        return fs_yt_nomem(c);
    if (rc)
        return fs_yt_fail(c, n, "%s: %s", dpath, e.msg);
    if (k->type == FS_KT_PATH)
        return resolve_path(c, FS_FIELD(base, k->off, char *));
    return 0;
}

/* A compound value must be a map/list; null and scalars are reported. */
static int want_kind(fs_sctx_t *c, const fs_key_t *k, const fs_ynode_t *n, int kind, const char *dpath)
{
    char exp[700];
    if (n->kind == kind)
        return 0;
    if (fs_yt_is_null(n))
        return fs_yt_fail(c, n, "%s: missing value (expected %s)", dpath, fs_keys_expect(k, exp, sizeof exp));
    return fs_yt_fail(c, n, "%s: expected %s, found %s%s%s%s", dpath, fs_keys_expect(k, exp, sizeof exp),
                      fs_yt_kind_text(n), n->kind == FS_YT_SCALAR ? " '" : "", n->kind == FS_YT_SCALAR ? n->s : "",
                      n->kind == FS_YT_SCALAR ? "'" : "");
}

static const fs_key_t prob_row = {.path = "probability", .type = FS_KT_PROB};

/* The value of one map entry as a probability. */
static int conv_prob(fs_sctx_t *c, const fs_ynode_t *v, const char *dpath, const char *key, double *out)
{
    if (v->kind != FS_YT_SCALAR || fs_yt_is_null(v))
        return fs_yt_fail(c, v, "%s: '%s' needs a probability from 0 to 1", dpath, key);
    fs_error_t e;
    double p = NAN;
    int rc = fs_keys_parse(&prob_row, v->s, &p, &e);
    if (rc)
        return fs_yt_fail(c, v, "%s: %s: %s", dpath, key, e.msg);
    *out = p;
    return 0;
}

/* A factor of an FS_KF_FACTORS map: a finite number > 0. */
static int conv_factor(fs_sctx_t *c, const fs_ynode_t *v, const char *dpath, const char *key,
                       double *out)
{
    static const fs_key_t factor_row = {.path = "factor", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN, .min = 0};
    if (v->kind != FS_YT_SCALAR || fs_yt_is_null(v))
        return fs_yt_fail(c, v, "%s: '%s' needs a factor (a number > 0)", dpath, key);
    fs_error_t e;
    double x = NAN;
    if (fs_keys_parse(&factor_row, v->s, &x, &e))
        return fs_yt_fail(c, v, "%s: %s: %s", dpath, key, e.msg);
    *out = x;
    return 0;
}

static int check_sum(fs_sctx_t *c, const fs_ynode_t *n, const char *dpath, const double *p, size_t cnt,
                     const char *what)
{
    double sum = 0;
    for (size_t i = 0; i < cnt; i++)
        sum += p[i];
    if (!(fabs(sum - 1.0) <= PROB_TOL))
        return fs_yt_fail(c, n, "%s: the %s sum to %.12g (expected 1, within 1e-9)", dpath, what, sum);
    return 0;
}

static int conv_mix(fs_sctx_t *c, const fs_key_t *k, const fs_ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, FS_YT_MAP, dpath);
    if (rc)
        return rc;
    if (n->n == 0)
        return fs_yt_fail(c, n, "%s: expected at least one GPU count", dpath);
    uint32_t *sizes = fs_malloc(n->n * sizeof *sizes);
    double *probs = fs_malloc(n->n * sizeof *probs);
    if (!sizes || !probs) {
        rc = fs_yt_nomem(c);
        goto fail;
    }
    char bounds[160];
    fs_keys_bounds(k, bounds, sizeof bounds);
    for (size_t i = 0; i < n->n; i++) {
        const fs_ynode_t *kn = n->items[i].k, *vn = n->items[i].v;
        const char *s = kn->s;
        char *end;
        errno = 0;
        unsigned long long g = isdigit((unsigned char)s[0]) ? strtoull(s, &end, 10) : 0;
        if (!isdigit((unsigned char)s[0]) || *end || errno || (double)g < k->min || (double)g > k->max) {
            rc = fs_yt_fail(c, kn, "%s: '%s' is not a GPU count (expected a whole number %s)", dpath, s, bounds);
            goto fail;
        }
        for (size_t j = 0; j < i; j++)
            if (sizes[j] == g) {
                rc = fs_yt_fail(c, kn, "%s: GPU count %llu is given twice (first at line %u)", dpath, g,
                                n->items[j].k->line);
                goto fail;
            }
        sizes[i] = (uint32_t)g;
        if ((rc = conv_prob(c, vn, dpath, s, &probs[i])) != 0)
            goto fail;
    }
    if ((rc = check_sum(c, n, dpath, probs, n->n, "probabilities")) != 0)
        goto fail;
    fs_free(*FS_FIELD(base, k->off2, uint32_t *));
    fs_free(*FS_FIELD(base, k->off3, double *));
    *FS_FIELD(base, k->off2, uint32_t *) = sizes;
    *FS_FIELD(base, k->off3, double *) = probs;
    *FS_FIELD(base, k->off, size_t) = n->n;
    return 0;
fail:
    fs_free(sizes);
    fs_free(probs);
    return rc;
}

static int conv_shares(fs_sctx_t *c, const fs_key_t *k, const fs_ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, FS_YT_MAP, dpath);
    if (rc)
        return rc;
    char **names = n->n ? fs_calloc(n->n, sizeof *names) : NULL;
    double *shares = n->n ? fs_malloc(n->n * sizeof *shares) : NULL;
    size_t done = 0;
    if (n->n && (!names || !shares)) {
        rc = fs_yt_nomem(c);
        goto fail;
    }
    for (; done < n->n; done++) {
        const fs_ynode_t *kn = n->items[done].k;
        if (!*kn->s) {
            rc = fs_yt_fail(c, kn, "%s: a name may not be empty", dpath);
            goto fail;
        }
        if ((rc = (k->flags & FS_KF_FACTORS)
                      ? conv_factor(c, n->items[done].v, dpath, kn->s, &shares[done])
                      : conv_prob(c, n->items[done].v, dpath, kn->s, &shares[done])) != 0)
            goto fail;
        if (!(names[done] = fs_strdup(kn->s))) {
            rc = fs_yt_nomem(c);
            goto fail;
        }
    }
    if (n->n && !(k->flags & FS_KF_FACTORS) &&
        (rc = check_sum(c, n, dpath, shares, n->n, "shares")) != 0)
        goto fail;
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base); /* the old value */
    *FS_FIELD(base, k->off2, char **) = names;
    *FS_FIELD(base, k->off3, double *) = shares;
    *FS_FIELD(base, k->off, size_t) = n->n;
    return 0;
fail:
    for (size_t j = 0; names && j < done; j++)
        fs_free(names[j]);
    fs_free(names);
    fs_free(shares);
    return rc;
}

/* {name: name}: both sides non-empty scalars (a YAML map has no key twice). */
static int conv_names(fs_sctx_t *c, const fs_key_t *k, const fs_ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, FS_YT_MAP, dpath);
    if (rc)
        return rc;
    char **keys = n->n ? fs_calloc(n->n, sizeof *keys) : NULL;
    char **vals = n->n ? fs_calloc(n->n, sizeof *vals) : NULL;
    size_t done = 0;
    if (n->n && (!keys || !vals)) {
        rc = fs_yt_nomem(c);
        goto fail;
    }
    for (; done < n->n; done++) {
        const fs_ynode_t *kn = n->items[done].k, *vn = n->items[done].v;
        if (!*kn->s) {
            rc = fs_yt_fail(c, kn, "%s: a name may not be empty", dpath);
            goto fail;
        }
        if (vn->kind != FS_YT_SCALAR || fs_yt_is_null(vn) || !*vn->s) {
            rc = fs_yt_fail(c, vn, "%s: '%s' needs a name", dpath, kn->s);
            goto fail;
        }
        if (!(keys[done] = fs_strdup(kn->s)) || !(vals[done] = fs_strdup(vn->s))) {
            fs_free(keys[done]);
            rc = fs_yt_nomem(c);
            goto fail;
        }
    }
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base); /* the old value */
    *FS_FIELD(base, k->off2, char **) = keys;
    *FS_FIELD(base, k->off3, char **) = vals;
    *FS_FIELD(base, k->off, size_t) = n->n;
    return 0;
fail:
    for (size_t j = 0; j < done; j++) {
        fs_free(keys[j]);
        fs_free(vals[j]);
    }
    fs_free(keys);
    fs_free(vals);
    return rc;
}


static int conv_dist(fs_sctx_t *c, const fs_key_t *k, const fs_ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, FS_YT_MAP, dpath);
    if (rc)
        return rc;
    const fs_keytab_t *t = k->sub;
    fs_dist_t *d = FS_FIELD(base, k->off, fs_dist_t);
    fs_dist_cfg_t *dc = FS_FIELD(base, k->off2, fs_dist_cfg_t);
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base);
    fs_dist_init(d);
    const fs_ynode_t *keys[32] = {0}, *vals[32] = {0};
    char sub[512], exp[700];
    for (size_t i = 0; i < n->n; i++) {
        const fs_ynode_t *kn = n->items[i].k, *vn = n->items[i].v;
        size_t ri;
        const fs_key_t *r = strchr(kn->s, '.') ? NULL : fs_conv_find_row(t, kn->s, &ri);
        if (!r) {
            fs_conv_children(t, "", exp, sizeof exp);
            return fs_yt_fail(c, kn, "unknown key '%s' in '%s' (expected one of: %s)", kn->s, dpath, exp);
        }
        join(sub, sizeof sub, dpath, r->path);
        if ((rc = conv_scalar(c, r, vn, sub, (r->flags & FS_KF_AUX) ? (void *)dc : (void *)d)) != 0)
            return rc;
        dc->given |= 1u << ri;
        keys[ri] = kn;
        vals[ri] = vn;
    }
    size_t di = 0;
    fs_conv_find_row(t, "dist", &di);
    if (!(dc->given & (1u << di))) {
        fs_keys_expect(&t->rows[di], exp, sizeof exp);
        return fs_yt_fail(c, n, "%s: missing key 'dist' (expected %s)", dpath, exp);
    }
    unsigned allowed = fs_keys_dist_params(d->kind);
    for (size_t i = 0; i < t->n; i++)
        if ((dc->given & (1u << i)) && !(allowed & (1u << i))) {
            char takes[256] = "";
            size_t len = 0;
            for (size_t j = 0; j < t->n; j++)
                if (j != di && (allowed & (1u << j)))
                    len += (size_t)snprintf(takes + len, sizeof takes - len, "%s%s", len ? ", " : "",
                                            t->rows[j].path);
            return fs_yt_fail(c, keys[i], "%s: '%s' does not apply to %s (it takes: %s)", dpath,
                              t->rows[i].path, fs_dist_kind_name(d->kind), takes);
        }
    if (d->kind == FS_DIST_EMPIRICAL) {
        if (!dc->path)
            return fs_yt_fail(c, n, "%s: empirical needs 'path' (a file of values in seconds)", dpath);
        size_t pi = 0;
        fs_conv_find_row(t, "path", &pi);
        join(sub, sizeof sub, dpath, "path");
        if ((rc = fs_emp_load(c, dc->path, dc->column, d, vals[pi], sub)) != 0)
            return rc;
    }
    fs_error_t e;
    if (fs_dist_prepare(d, &e) != 0)
        return fs_yt_fail(c, n, "%s: %s", dpath, e.msg);
    return 0;
}

/* "'synthetic' or 'trace'": the last segments of the choice rows sharing
 * the selector at off. */
static void choice_names(const fs_keytab_t *t, size_t off, const char *sep, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t j = 0; j < t->n; j++)
        if (t->rows[j].type == FS_KT_CHOICE && t->rows[j].off == off) {
            const char *dot = strrchr(t->rows[j].path, '.');
            int w = snprintf(buf + len, n - len, "%s'%s'", len ? sep : "", dot ? dot + 1 : t->rows[j].path);
            if (w < 0 || (size_t)w >= n - len)
                break;
            len += (size_t)w;
        }
}

static int conv_list(fs_sctx_t *c, const fs_key_t *k, const fs_ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, FS_YT_SEQ, dpath);
    if (rc)
        return rc;
    if (((k->flags & FS_KF_MIN) && (double)n->n < k->min))
        return fs_yt_fail(c, n, "%s: expected at least %.0f item%s, found %zu", dpath, k->min,
                          k->min == 1 ? "" : "s", n->n);
    const fs_keytab_t *t = k->sub;
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base);
    if (n->n == 0)
        return 0;
    char *arr = fs_calloc(n->n, t->size);
    unsigned char *seen = fs_calloc(t->n, 1);
    if (!arr || !seen) {
        fs_free(arr);
        fs_free(seen);
        return fs_yt_nomem(c);
    }
    *FS_FIELD(base, k->off, char *) = arr;
    *FS_FIELD(base, k->off2, size_t) = n->n; /* zeroed items release safely */
    for (size_t i = 0; i < n->n && !rc; i++) {
        char disp[512], idx[24];
        snprintf(idx, sizeof idx, "%zu", i);
        join(disp, sizeof disp, dpath, idx);
        const fs_ynode_t *item = n->items[i].v;
        void *elem = arr + i * t->size;
        memset(seen, 0, t->n);
        fs_error_t e;
        int drc = fs_keys_defaults(t, elem, &e);
        if (drc) {
            rc = drc == FS_ENOMEM ? fs_yt_nomem(c) : fs_error_set(c->err, drc, "%s", e.msg);
        } else if (item->kind != FS_YT_MAP) {
            char exp[512];
            fs_conv_children(t, "", exp, sizeof exp);
            rc = fs_yt_fail(c, item, "%s: expected a block of keys (%s), found %s", disp, exp, fs_yt_kind_text(item));
        } else if ((rc = fs_conv_block(c, t, item, "", disp, elem, seen)) == 0) {
            rc = fs_conv_required(c, t, seen, item, disp);
        }
    }
    fs_free(seen);
    return rc;
}

/* A raw value: a scalar or a list of scalars kept as written, with the
 * position of each (fs_raw_t; interpreted later, e.g. by fs_sweep). */
static int conv_raw(fs_sctx_t *c, const fs_key_t *k, const fs_ynode_t *n, const char *dpath, void *base)
{
    char exp[700], pos[512];
    if (fs_yt_is_null(n) || n->kind == FS_YT_MAP || (n->kind == FS_YT_SEQ && n->n == 0))
        return fs_yt_fail(c, n, "%s: %s (expected %s)", dpath,
                          n->kind == FS_YT_MAP ? "found a block of keys" : "missing value",
                          fs_keys_expect(k, exp, sizeof exp));
    size_t cnt = n->kind == FS_YT_SEQ ? n->n : 1;
    for (size_t i = 0; n->kind == FS_YT_SEQ && i < cnt; i++) {
        const fs_ynode_t *it = n->items[i].v;
        if (it->kind != FS_YT_SCALAR || fs_yt_is_null(it))
            return fs_yt_fail(c, it, "%s.%zu: expected a value, found %s", dpath, i,
                              it->kind != FS_YT_SCALAR ? fs_yt_kind_text(it) : "nothing");
    }
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base); /* the old value */
    fs_raw_t *r = FS_FIELD(base, k->off, fs_raw_t);
    r->text = fs_calloc(cnt, sizeof *r->text);
    r->where = fs_calloc(cnt, sizeof *r->where);
    r->quoted = fs_calloc(cnt, sizeof *r->quoted);
    fs_yt_where(c, n, pos, sizeof pos);
    r->at = fs_strdup(pos);
    r->given = 1;
    r->is_list = n->kind == FS_YT_SEQ;
    if (!r->text || !r->where || !r->quoted || !r->at)
        goto oom;
    for (size_t i = 0; i < cnt; i++) {
        const fs_ynode_t *it = n->kind == FS_YT_SEQ ? n->items[i].v : n;
        fs_yt_where(c, it, pos, sizeof pos);
        r->n = i + 1;
        r->quoted[i] = !it->plain;
        if (!(r->text[i] = fs_strdup(it->s)) || !(r->where[i] = fs_strdup(pos)))
            goto oom;
    }
    return 0;
oom:
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base);
    return fs_yt_nomem(c);
}

static int conv_value(fs_sctx_t *c, const fs_key_t *k, const fs_ynode_t *n, const char *dpath, void *base)
{
    switch (k->type) {
    case FS_KT_RAW: return conv_raw(c, k, n, dpath, base);
    case FS_KT_LIST: return conv_list(c, k, n, dpath, base);
    case FS_KT_MIX: return conv_mix(c, k, n, dpath, base);
    case FS_KT_SHARES: return conv_shares(c, k, n, dpath, base);
    case FS_KT_NAMES: return conv_names(c, k, n, dpath, base);
    case FS_KT_DIST: return conv_dist(c, k, n, dpath, base);
    default: return conv_scalar(c, k, n, dpath, base);
    }
}

/* Walks block `map` (path `prefix` within table t; `disp` is the path of
 * the table's struct for messages). */
int fs_conv_block(fs_sctx_t *c, const fs_keytab_t *t, const fs_ynode_t *map, const char *prefix,
                  const char *disp, void *base, unsigned char *seen)
{
    char path[512], dpath[512], dblock[512], list[700];
    int rc;
    if (fs_yt_is_null(map))
        return 0; /* an empty block */
    join(dblock, sizeof dblock, disp, prefix);
    if (map->kind != FS_YT_MAP) {
        fs_conv_children(t, prefix, list, sizeof list);
        return fs_yt_fail(c, map, "%s: expected a block of keys (%s), found %s%s%s%s", dblock, list,
                          fs_yt_kind_text(map), map->kind == FS_YT_SCALAR ? " '" : "",
                          map->kind == FS_YT_SCALAR ? map->s : "", map->kind == FS_YT_SCALAR ? "'" : "");
    }
    for (size_t i = 0; i < map->n; i++) {
        const fs_ynode_t *kn = map->items[i].k, *vn = map->items[i].v;
        join(path, sizeof path, prefix, kn->s);
        join(dpath, sizeof dpath, disp, path);
        size_t ri;
        const fs_key_t *k = strchr(kn->s, '.') || !*kn->s ? NULL : fs_conv_find_row(t, path, &ri);
        if (k && k->type == FS_KT_CHOICE) {
            for (size_t j = 0; j < t->n; j++)
                if (j != ri && seen[j] && t->rows[j].type == FS_KT_CHOICE && t->rows[j].off == k->off) {
                    choice_names(t, k->off, " and ", list, sizeof list);
                    return fs_yt_fail(c, kn, "%s: give only one of %s, not both", dblock, list);
                }
            seen[ri] = 1;
            *FS_FIELD(base, k->off, int) = k->choice;
            if ((rc = fs_conv_block(c, t, vn, path, disp, base, seen)) != 0)
                return rc;
        } else if (k) {
            seen[ri] = 1;
            if ((rc = conv_value(c, k, vn, dpath, base)) != 0)
                return rc;
        } else if (*kn->s && !strchr(kn->s, '.') && has_children(t, path)) {
            if ((rc = fs_conv_block(c, t, vn, path, disp, base, seen)) != 0)
                return rc;
        } else {
            fs_conv_children(t, prefix, list, sizeof list);
            if (*dblock)
                return fs_yt_fail(c, kn, "unknown key '%s' in '%s' (expected one of: %s)", kn->s, dblock, list);
            return fs_yt_fail(c, kn, "unknown key '%s' (expected one of: %s)", kn->s, list);
        }
    }
    return 0;
}

/* Required keys (in an active choice block) and choice groups, for table t
 * whose struct was read from `top`. */
int fs_conv_required(fs_sctx_t *c, const fs_keytab_t *t, const unsigned char *seen,
                     const fs_ynode_t *top, const char *disp)
{
    char exp[700], dpath[512];
    for (size_t i = 0; i < t->n; i++) {
        const fs_key_t *k = &t->rows[i];
        if (k->type == FS_KT_CHOICE) {
            /* the first row of each group checks the group */
            int first = 1, any = 0;
            for (size_t j = 0; j < t->n; j++)
                if (t->rows[j].type == FS_KT_CHOICE && t->rows[j].off == k->off) {
                    first &= j >= i;
                    any |= seen[j];
                }
            if (first && !any && !(k->flags & FS_KF_OPTIONAL)) {
                char block[256], names[256];
                snprintf(block, sizeof block, "%s", k->path);
                char *dot = strrchr(block, '.');
                if (dot)
                    *dot = '\0';
                join(dpath, sizeof dpath, disp, block);
                choice_names(t, k->off, " or ", names, sizeof names);
                return fs_yt_fail(c, fs_yt_nearest(top, block), "'%s' needs one of %s", dpath, names);
            }
            continue;
        }
        if (!(k->flags & FS_KF_REQUIRED) || seen[i])
            continue;
        int active = 1;
        for (size_t j = 0; j < t->n; j++) {
            size_t pl = strlen(t->rows[j].path);
            if (t->rows[j].type == FS_KT_CHOICE && !seen[j] && strncmp(k->path, t->rows[j].path, pl) == 0 &&
                k->path[pl] == '.')
                active = 0;
        }
        if (!active)
            continue;
        join(dpath, sizeof dpath, disp, k->path);
        return fs_yt_fail(c, fs_yt_nearest(top, k->path), "missing key '%s' (expected %s)", dpath,
                          fs_keys_expect(k, exp, sizeof exp));
    }
    return 0;
}
