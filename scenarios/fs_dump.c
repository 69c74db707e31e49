/*
 * fs_dump: a configuration back to canonical YAML (fs_scenario_dump: every
 * key in table order, loading it gives back the same config), and the key
 * reference of docs/scenario.md (fs_scenario_print_keys).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#endif
#include "fs_scenario.h"
#include "fs_keys.h"
#include "fs_units.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_dist.h"

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- dump ---------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf_t;

static void sb_add(sbuf_t *b, const char *s, size_t n)
{
    if (b->oom || fs_grow((void **)&b->p, &b->cap, b->n + n + 1, 1)) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf_t *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_spaces(sbuf_t *b, int n)
{
    for (int i = 0; i < n; i++)
        sb_add(b, " ", 1);
}

/* A string as a YAML scalar: plain when that reads back as the same
 * string, else double-quoted. */
static void sb_yaml_string(sbuf_t *b, const char *s)
{
    static const char *const reserved[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", NULL};
    int plain = isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == '/';
    for (const char *p = s; *p && plain; p++)
        plain = isalnum((unsigned char)*p) || strchr("_./+-", *p);
    for (size_t i = 0; plain && reserved[i]; i++)
        plain = strcasecmp(s, reserved[i]) != 0;
    if (plain) {
        sb_str(b, s);
        return;
    }
    sb_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            sb_add(b, esc, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            snprintf(esc, sizeof esc, "\\x%02x", *p);
            sb_str(b, esc);
        } else {
            sb_add(b, (const char *)p, 1);
        }
    }
    sb_add(b, "\"", 1);
}

static void dump_table(sbuf_t *b, const fs_keytab_t *t, const void *base, int indent, int dash);

/* The value of row k (after "key:"), ending the line. */
static void dump_value(sbuf_t *b, const fs_key_t *k, const void *base, int indent)
{
    char buf[FS_UNITS_BUF];
    const char *cb = base;
    switch (k->type) {
    case FS_KT_STRING:
    case FS_KT_PATH:
    case FS_KT_NAME:
        sb_str(b, " ");
        sb_yaml_string(b, *(char *const *)(const void *)(cb + k->off));
        sb_str(b, "\n");
        break;
    case FS_KT_MIX:
    case FS_KT_SHARES: {
        size_t n = *(const size_t *)(const void *)(cb + k->off);
        const double *p = *(double *const *)(const void *)(cb + k->off3);
        sb_str(b, " {");
        for (size_t i = 0; i < n; i++) {
            if (i)
                sb_str(b, ", ");
            if (k->type == FS_KT_MIX) {
                snprintf(buf, sizeof buf, "%u", (*(uint32_t *const *)(const void *)(cb + k->off2))[i]);
                sb_str(b, buf);
            } else {
                sb_yaml_string(b, (*(char **const *)(const void *)(cb + k->off2))[i]);
            }
            sb_str(b, ": ");
            sb_str(b, fs_units_format_number(p[i], buf, sizeof buf));
        }
        sb_str(b, "}\n");
        break;
    }
    case FS_KT_NAMES: {
        size_t n = *(const size_t *)(const void *)(cb + k->off);
        char *const *keys = *(char **const *)(const void *)(cb + k->off2);
        char *const *vals = *(char **const *)(const void *)(cb + k->off3);
        sb_str(b, " {");
        for (size_t i = 0; i < n; i++) {
            sb_str(b, i ? ", " : "");
            sb_yaml_string(b, keys[i]);
            sb_str(b, ": ");
            sb_yaml_string(b, vals[i]);
        }
        sb_str(b, "}\n");
        break;
    }
    case FS_KT_DIST: {
        const fs_dist_t *d = (const fs_dist_t *)(const void *)(cb + k->off);
        const fs_dist_cfg_t *dc = (const fs_dist_cfg_t *)(const void *)(cb + k->off2);
        sb_str(b, " {");
        int first = 1;
        for (size_t i = 0; i < k->sub->n; i++) {
            const fs_key_t *r = &k->sub->rows[i];
            const void *rb = (r->flags & FS_KF_AUX) ? (const void *)dc : (const void *)d;
            if (!(dc->given & (1u << i)))
                continue;
            if (!first)
                sb_str(b, ", ");
            first = 0;
            sb_str(b, r->path);
            sb_str(b, ": ");
            if (r->type == FS_KT_STRING || r->type == FS_KT_PATH)
                sb_yaml_string(b, *(char *const *)(const void *)((const char *)rb + r->off));
            else
                sb_str(b, fs_keys_format(r, rb, buf, sizeof buf));
        }
        sb_str(b, "}\n");
        break;
    }
    case FS_KT_RAW: {
        const fs_raw_t *r = (const fs_raw_t *)(const void *)(cb + k->off);
        sb_str(b, r->is_list ? " [" : " ");
        for (size_t i = 0; i < r->n; i++) {
            if (i)
                sb_str(b, ", ");
            sb_yaml_string(b, r->text[i]);
        }
        sb_str(b, r->is_list ? "]\n" : "\n");
        break;
    }
    case FS_KT_LIST: {
        const char *arr = *(char *const *)(const void *)(cb + k->off);
        size_t n = *(const size_t *)(const void *)(cb + k->off2);
        if (!n) {
            sb_str(b, " []\n");
            break;
        }
        sb_str(b, "\n");
        for (size_t i = 0; i < n; i++)
            dump_table(b, k->sub, arr + i * k->sub->size, indent + 4, 1);
        break;
    }
    default:
        sb_str(b, " ");
        sb_str(b, fs_keys_format(k, base, buf, sizeof buf));
        sb_str(b, "\n");
        break;
    }
}

/* Is the row left out of the dump (an unselected choice, an unset string)? */
static int dump_skip(const fs_keytab_t *t, size_t i, const void *base)
{
    const fs_key_t *k = &t->rows[i];
    for (size_t j = 0; j < t->n; j++) {
        const fs_key_t *ch = &t->rows[j];
        size_t pl = strlen(ch->path);
        if (ch->type == FS_KT_CHOICE && strncmp(k->path, ch->path, pl) == 0 &&
            (k->path[pl] == '.' || k->path[pl] == '\0') &&
            *(const int *)(const void *)((const char *)base + ch->off) != ch->choice)
            return 1;
    }
    if (k->type == FS_KT_CHOICE)
        return 1; /* its rows open the block */
    if (k->type == FS_KT_LIST && !(k->flags & FS_KF_REQUIRED) && (k->flags & FS_KF_MIN) &&
        k->min >= 1 && *(const size_t *)(const void *)((const char *)base + k->off2) == 0)
        return 1; /* an optional list that "[]" would not satisfy (cluster.pools when
                     cluster.from builds them) */
    if (k->type == FS_KT_RAW && !((const fs_raw_t *)(const void *)((const char *)base + k->off))->given)
        return 1;
    if (k->type == FS_KT_DIST &&
        !((const fs_dist_cfg_t *)(const void *)((const char *)base + k->off2))->given)
        return 1; /* an optional distribution left out (failures.repair.soft) */
    if (k->type == FS_KT_NAMES && *(const size_t *)(const void *)((const char *)base + k->off) == 0)
        return 1; /* an empty map left out (workload.trace.team_map) */
    if ((k->type == FS_KT_STRING || k->type == FS_KT_PATH || k->type == FS_KT_NAME) &&
        !*(char *const *)(const void *)((const char *)base + k->off))
        return 1;
    return 0;
}

/* Number of whole dotted segments that a and b[0..blen) share. */
static size_t common_segments(const char *a, const char *b, size_t blen)
{
    size_t alen = strlen(a), i = 0, n = 0;
    if (!alen || !blen)
        return 0;
    for (;;) {
        size_t sa = strcspn(a + i, "."), sb = strcspn(b + i, ".");
        if (sb > blen - i)
            sb = blen - i;
        if (sa != sb || strncmp(a + i, b + i, sa) != 0)
            return n;
        n++;
        i += sa;
        if (i >= alen || i >= blen)
            return n;
        i++;
    }
}

/* Starts a line at `spaces`; the first line of a list item starts "- ". */
static void line_start(sbuf_t *b, int spaces, int *dash)
{
    sb_spaces(b, spaces - (*dash ? 2 : 0));
    if (*dash)
        sb_str(b, "- ");
    *dash = 0;
}

/* Writes the rows of t at `indent` spaces, opening the blocks that their
 * dotted paths name (rows of one block are contiguous in the tables). */
static void dump_table(sbuf_t *b, const fs_keytab_t *t, const void *base, int indent, int dash)
{
    char open[512] = ""; /* the block path now open */
    for (size_t i = 0; i < t->n; i++) {
        const fs_key_t *k = &t->rows[i];
        if (dump_skip(t, i, base))
            continue;
        if (t == &fs_keys_config && k->off == offsetof(fs_config_t, horizon) &&
            ((const fs_config_t *)base)->horizon_auto)
            continue;   /* left to the trace, as written */
        const char *p = k->path, *leaf = strrchr(p, '.');
        size_t blen = leaf ? (size_t)(leaf - p) : 0;
        size_t common = common_segments(open, p, blen), seg = 0;
        for (size_t pos = 0; pos < blen; seg++) {
            size_t sl = strcspn(p + pos, ".");
            if (seg >= common) {
                line_start(b, indent + 2 * (int)seg, &dash);
                sb_add(b, p + pos, sl);
                sb_str(b, ":\n");
            }
            pos += sl + 1;
        }
        snprintf(open, sizeof open, "%.*s", (int)blen, p);
        line_start(b, indent + 2 * (int)seg, &dash);
        sb_str(b, leaf ? leaf + 1 : p);
        sb_str(b, ":");
        dump_value(b, k, base, indent + 2 * (int)seg);
    }
}

char *fs_scenario_dump(const fs_config_t *cfg)
{
    sbuf_t b = {0};
    /* Only the pools written in the scenario: cluster.from rebuilds the rest. */
    fs_config_t written = *cfg;
    written.cluster.n_pools -= cfg->cluster.n_from < cfg->cluster.n_pools ? cfg->cluster.n_from
                                                                          : cfg->cluster.n_pools;
    /* nor the Kueue objects that scheduler.kueue.manifests adds again */
    written.scheduler.kueue.n_cqs -= cfg->scheduler.kueue.n_manifest_cqs;
    written.scheduler.kueue.n_flavors -= cfg->scheduler.kueue.n_manifest_flavors;
    dump_table(&b, &fs_keys_config, &written, 0, 0);
    if (b.oom || !b.p) {
        fs_free(b.p);
        return NULL;
    }
    return b.p;
}

/* ---- key reference ----------------------------------------------------------------- */

static void print_row(FILE *f, const fs_key_t *k, const char *path, int show_default)
{
    char bounds[200], names[512];
    fs_keys_bounds(k, bounds, sizeof bounds);
    if (k->type == FS_KT_LIST && (k->flags & FS_KF_MIN))
        snprintf(bounds, sizeof bounds, "at least %.0f item%s", k->min, k->min == 1 ? "" : "s");
    else if (k->type == FS_KT_MIX)
        snprintf(bounds, sizeof bounds, "sizes from %.0f to %.0f; sum 1", k->min, k->max);
    else if (k->type == FS_KT_SHARES)
        snprintf(bounds, sizeof bounds, "%s", (k->flags & FS_KF_FACTORS) ? "each > 0" : "sum 1");
    fprintf(f, "| `%s` | %s", path, fs_keys_type_name(k));
    if (k->type == FS_KT_ENUM) {
        size_t len = 0;
        names[0] = '\0';
        const char *s;
        for (size_t i = 0; (s = fs_keys_name(k, i)) != NULL; i++)
            if (*s)
                len += (size_t)snprintf(names + len, sizeof names - len, "%s`%s`", len ? ", " : "", s);
        fprintf(f, ": %s", names);
    }
    fprintf(f, " | %s | ", k->unit ? k->unit : "");
    if (!show_default)
        fprintf(f, " ");
    else if (k->flags & FS_KF_REQUIRED)
        fprintf(f, "required");
    else if (k->def)
        fprintf(f, "`%s`", k->def);
    fprintf(f, " | %s | %s |\n", bounds, k->doc ? k->doc : "");
}

void fs_scenario_print_keys(FILE *f)
{
    const fs_keytab_t *t = &fs_keys_config;
    fprintf(f, "| Key | Type | Unit | Default | Bounds | Description |\n");
    fprintf(f, "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < t->n; i++) {
        const fs_key_t *k = &t->rows[i];
        print_row(f, k, k->path, 1);
        if (k->type == FS_KT_LIST)
            for (size_t j = 0; j < k->sub->n; j++) {
                const fs_key_t *s = &k->sub->rows[j];
                char path[512];
                snprintf(path, sizeof path, "%s[].%s", k->path, s->path);
                print_row(f, s, path, 1);
                if (s->type == FS_KT_LIST)   /* a list in a list item: services[].performance[] */
                    for (size_t q = 0; q < s->sub->n; q++) {
                        char p2[600];
                        snprintf(p2, sizeof p2, "%s[].%s", path, s->sub->rows[q].path);
                        print_row(f, &s->sub->rows[q], p2, 1);
                    }
            }
    }
    fprintf(f, "\n### Distribution blocks\n\n");
    fprintf(f, "A distribution block (`{dist: lognormal, median: 45m, sigma: 1.5}`) takes `dist` and "
               "the parameters of that distribution:\n\n");
    fprintf(f, "| Key | Type | Unit | Used by | Description |\n");
    fprintf(f, "|---|---|---|---|---|\n");
    const fs_keytab_t *d = &fs_keys_dist;
    for (size_t i = 0; i < d->n; i++) {
        const fs_key_t *k = &d->rows[i];
        char users[256] = "";
        size_t len = 0;
        for (int kind = FS_DIST_CONSTANT; kind <= FS_DIST_EMPIRICAL; kind++)
            if (fs_keys_dist_params(kind) & (1u << i))
                len += (size_t)snprintf(users + len, sizeof users - len, "%s%s", len ? ", " : "",
                                        fs_dist_kind_name(kind));
        if (strcmp(k->path, "dist") == 0)
            snprintf(users, sizeof users, "all (required)");
        char names[256] = "";
        if (k->type == FS_KT_ENUM) {
            size_t nl = 0;
            const char *s;
            for (size_t j = 0; (s = fs_keys_name(k, j)) != NULL; j++)
                if (*s)
                    nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s`%s`", nl ? ", " : ": ", s);
        }
        fprintf(f, "| `%s` | %s%s | %s | %s | %s |\n", k->path, fs_keys_type_name(k), names,
                k->unit ? k->unit : "", users, k->doc ? k->doc : "");
    }
}

