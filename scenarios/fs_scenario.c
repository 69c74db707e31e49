/*
 * The scenario language: YAML text -> a tree of nodes that keep their
 * positions -> overrides merged into the tree -> the tree walked against the
 * key table (fs_keys.c) into an fs_config_t -> cross-field rules.
 *
 * Why a tree of our own rather than libyaml's document: overrides ("--set
 * cluster.pools.0.nodes=64") are merged into it before any value is read, so
 * that a value from --set and one from the file go through exactly the same
 * checks, and every node remembers where it came from (FILE:LINE:COL or
 * "--set KEY") for messages.  The tree is allocated through fs_alloc, so
 * fault injection reaches it.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* getcwd, strcasecmp */
#endif
#include "fs_scenario.h"
#include "../models/fs_service.h"
#include "fs_keys.h"
#include "fs_units.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"
#include "../sim/fs_dist.h"
#include "../traces/fs_carbon.h"
#include "../models/fs_fleetcfg.h"
#include "../models/fs_failure.h"
#include "../models/fs_policy.h"
#include "../models/fs_cluster.h"
#include "../models/fs_mig.h"
#include "../models/fs_taint.h"
#include "../models/fs_catalog.h"
#include "../models/fs_power.h"
#include "fs_kueue_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

/* Generated from scenarios/default.yaml by cmake/embed.cmake. */
extern const char fs_default_scenario_text[];

const char *fs_scenario_default_text(void)
{
    return fs_default_scenario_text;
}

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define MAX_DEPTH 64
#define MAX_NODES 1000000   /* after alias expansion */
#define PROB_TOL 1e-9
#define MAX_TOTAL_GPUS (UINT64_C(1) << 31)

#define FIELD(base, off, T) ((T *)(void *)((char *)(base) + (off)))

/* ---- the tree ------------------------------------------------------------ */

enum { YN_SCALAR, YN_MAP, YN_SEQ };

typedef struct ynode ynode_t;
typedef struct ypair {
    ynode_t *k;             /* MAP: key (a scalar); SEQ: NULL */
    ynode_t *v;
} ypair_t;

struct ynode {
    int kind;
    int plain;              /* scalar written without quotes or tag */
    char *s;                /* SCALAR: the text */
    ypair_t *items;         /* MAP, SEQ */
    size_t n, cap;
    unsigned line, col;     /* 1-based */
    int origin;             /* 0: the file; i + 1: override i */
};

static void node_free(ynode_t *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        node_free(n->items[i].k);
        node_free(n->items[i].v);
    }
    fs_free(n->items);
    fs_free(n->s);
    fs_free(n);
}

static ynode_t *node_new(int kind, unsigned line, unsigned col, int origin)
{
    ynode_t *n = fs_calloc(1, sizeof *n);
    if (n) {
        n->kind = kind;
        n->line = line;
        n->col = col;
        n->origin = origin;
    }
    return n;
}

static ynode_t *scalar_new(const char *s, size_t len, unsigned line, unsigned col, int origin)
{
    ynode_t *n = node_new(YN_SCALAR, line, col, origin);
    if (n && !(n->s = fs_strndup(s, len))) {
        fs_free(n);
        n = NULL;
    }
    if (n)
        n->plain = 1;
    return n;
}

static int node_push(ynode_t *n, ynode_t *k, ynode_t *v)
{
    if (fs_grow((void **)&n->items, &n->cap, n->n + 1, sizeof *n->items))
        return FS_ENOMEM;
    n->items[n->n].k = k;
    n->items[n->n].v = v;
    n->n++;
    return 0;
}

static int is_null(const ynode_t *n)
{
    if (!n)
        return 1;
    if (n->kind != YN_SCALAR || !n->plain)
        return 0;
    return !*n->s || strcmp(n->s, "~") == 0 || strcmp(n->s, "null") == 0 ||
           strcmp(n->s, "Null") == 0 || strcmp(n->s, "NULL") == 0;
}

static const char *kind_text(const ynode_t *n)
{
    return n->kind == YN_MAP ? "a block of keys" : n->kind == YN_SEQ ? "a list" : "a value";
}

static ypair_t *map_find(const ynode_t *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->items[i].k->s, key) == 0)
            return &m->items[i];
    return NULL;
}

/* The keys of a mapping being built, hashed, so that the duplicate-key
 * check of a map of n keys costs O(n) instead of O(n^2) (a 1.1 MB file of
 * 80,000 keys took 49 s with map_find): open addressing over item indices
 * + 1 (0: empty), FNV-1a hashes, at most half full. */
typedef struct keyidx {
    size_t *slot;
    size_t cap;             /* a power of two, or 0 */
} keyidx_t;

static size_t key_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

static ypair_t *keyidx_find(const keyidx_t *x, const ynode_t *m, const char *key)
{
    if (!x->cap)
        return NULL;
    for (size_t i = key_hash(key) & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
        size_t v = x->slot[i];
        if (!v)
            return NULL;
        if (strcmp(m->items[v - 1].k->s, key) == 0)
            return &m->items[v - 1];
    }
}

/* Adds item m->items[m->n - 1]; -1 when out of memory. */
static int keyidx_add(keyidx_t *x, const ynode_t *m)
{
    if (2 * m->n > x->cap) {   /* grow and re-insert every key */
        size_t cap = x->cap ? 2 * x->cap : 16;
        while (2 * m->n > cap)
            cap *= 2;
        size_t *slot = fs_calloc(cap, sizeof *slot);
        if (!slot)
            return -1;
        fs_free(x->slot);
        x->slot = slot;
        x->cap = cap;
        for (size_t j = 0; j + 1 < m->n; j++) {
            size_t i = key_hash(m->items[j].k->s) & (cap - 1);
            while (slot[i])
                i = (i + 1) & (cap - 1);
            slot[i] = j + 1;
        }
    }
    size_t i = key_hash(m->items[m->n - 1].k->s) & (x->cap - 1);
    while (x->slot[i])
        i = (i + 1) & (x->cap - 1);
    x->slot[i] = m->n;
    return 0;
}

/* ---- context and messages ------------------------------------------------ */

typedef struct sctx {
    const char *file;           /* name in messages */
    char *dir;                  /* directory of relative paths (owned); NULL: as given */
    const char *const *ovr;     /* overrides "KEY=VALUE" */
    size_t n_ovr;
    fs_error_t *err;
    fs_config_t *cfg;
    ynode_t *root;
    size_t nodes;               /* nodes built (alias bomb guard) */
} sctx_t;

/* Length of the KEY part of override i. */
static size_t ovr_keylen(const sctx_t *c, int i)
{
    const char *eq = strchr(c->ovr[i], '=');
    return eq ? (size_t)(eq - c->ovr[i]) : strlen(c->ovr[i]);
}

static void where(const sctx_t *c, const ynode_t *n, char *buf, size_t size)
{
    if (n && n->origin > 0)
        snprintf(buf, size, "--set %.*s", (int)ovr_keylen(c, n->origin - 1), c->ovr[n->origin - 1]);
    else if (n)
        snprintf(buf, size, "%s:%u:%u", c->file, n->line, n->col);
    else
        snprintf(buf, size, "%s:1:1", c->file);
}

/* Sets an FS_EINVAL message "WHERE: msg" at node n (NULL: the file's start).
 * For a node from --set KEY, a message that starts with "KEY: " drops it. */
__attribute__((format(printf, 3, 4)))
static int fail(sctx_t *c, const ynode_t *n, const char *fmt, ...)
{
    char pos[512], msg[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    where(c, n, pos, sizeof pos);
    const char *m = msg;
    if (n && n->origin > 0) {
        size_t kl = ovr_keylen(c, n->origin - 1);
        if (strncmp(msg, c->ovr[n->origin - 1], kl) == 0 && msg[kl] == ':' && msg[kl + 1] == ' ')
            m = msg + kl + 2;
    }
    return fs_error_set(c->err, FS_EINVAL, "%s: %s", pos, m);
}

static int nomem(sctx_t *c)
{
    return fs_error_set(c->err, FS_ENOMEM, "%s: out of memory", c->file);
}

/* ---- YAML -> tree (libyaml's event API) ------------------------------------ */

typedef struct anchor {
    char *name;
    const ynode_t *node;
} anchor_t;

typedef struct builder {
    sctx_t *c;
    yaml_parser_t p;
    const char *text;
    size_t len;
    int origin;
    anchor_t *anchors;
    size_t n_anchors, cap_anchors;
} builder_t;

static int parse_error(builder_t *b)
{
    yaml_parser_t *p = &b->p;
    if (p->error == YAML_MEMORY_ERROR)
        return nomem(b->c);
    ynode_t at = {.origin = b->origin, .line = (unsigned)p->problem_mark.line + 1,
                  .col = (unsigned)p->problem_mark.column + 1};
    if (p->error == YAML_READER_ERROR) { /* only a byte offset is known */
        at.line = at.col = 1;
        for (size_t i = 0; i < p->problem_offset && i < b->len; i++) {
            if (b->text[i] == '\n')
                at.line++, at.col = 1;
            else
                at.col++;
        }
    }
    const char *what = b->origin ? "malformed value" : "malformed YAML";
    const char *problem = p->problem ? p->problem : "syntax error";
    if (p->context)
        return fail(b->c, &at, "%s: %s (%s at line %u, column %u)", what, problem, p->context,
                    (unsigned)p->context_mark.line + 1, (unsigned)p->context_mark.column + 1);
    return fail(b->c, &at, "%s: %s", what, problem);
}

static int next_event(builder_t *b, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&b->p, ev))
        return parse_error(b);
    return 0;
}

static int count_node(builder_t *b, const ynode_t *at)
{
    if (++b->c->nodes > MAX_NODES)
        return fail(b->c, at, "the document is too large (more than %d nodes once aliases are "
                              "expanded)", MAX_NODES);
    return 0;
}

/* Deep copy of n (an alias), with the alias's position. */
static int node_copy(builder_t *b, const ynode_t *n, const ynode_t *pos, ynode_t **out)
{
    *out = NULL;
    int rc = count_node(b, pos);
    if (rc)
        return rc;
    ynode_t *d = node_new(n->kind, pos->line, pos->col, pos->origin);
    if (!d)
        return nomem(b->c);
    d->plain = n->plain;
    if (n->s && !(d->s = fs_strdup(n->s))) {
        node_free(d);
        return nomem(b->c);
    }
    for (size_t i = 0; i < n->n; i++) {
        ynode_t *k = NULL, *v = NULL;
        if ((n->items[i].k && (rc = node_copy(b, n->items[i].k, pos, &k)) != 0) ||
            (rc = node_copy(b, n->items[i].v, pos, &v)) != 0 || (rc = node_push(d, k, v)) != 0) {
            node_free(k);
            node_free(v);
            node_free(d);
            return rc == FS_ENOMEM && b->c->err && b->c->err->code != FS_ENOMEM ? nomem(b->c) : rc;
        }
    }
    *out = d;
    return 0;
}

static int add_anchor(builder_t *b, const char *name, const ynode_t *n)
{
    char *d = fs_strdup(name);
    if (!d || fs_grow((void **)&b->anchors, &b->cap_anchors, b->n_anchors + 1, sizeof *b->anchors)) {
        fs_free(d);
        return nomem(b->c);
    }
    b->anchors[b->n_anchors].name = d;
    b->anchors[b->n_anchors].node = n;
    b->n_anchors++;
    return 0;
}

/* Builds the node that starts with *ev (consumed). */
static int build(builder_t *b, yaml_event_t *ev, int depth, ynode_t **out)
{
    sctx_t *c = b->c;
    ynode_t *n = NULL;
    char *anchor = NULL;
    keyidx_t keys = {NULL, 0};   /* a mapping's keys (duplicate check) */
    int rc = 0;
    ynode_t pos = {.origin = b->origin, .line = (unsigned)ev->start_mark.line + 1,
                   .col = (unsigned)ev->start_mark.column + 1};
    *out = NULL;
    const yaml_char_t *an = NULL;
    if (ev->type == YAML_SCALAR_EVENT)
        an = ev->data.scalar.anchor;
    else if (ev->type == YAML_MAPPING_START_EVENT)
        an = ev->data.mapping_start.anchor;
    else if (ev->type == YAML_SEQUENCE_START_EVENT)
        an = ev->data.sequence_start.anchor;
    if (an && !(anchor = fs_strdup((const char *)an))) {
        rc = nomem(c);
        goto out;
    }
    if ((rc = count_node(b, &pos)) != 0)
        goto out;

    switch (ev->type) {
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        const ynode_t *target = NULL;
        for (size_t i = b->n_anchors; i-- > 0 && !target;)
            if (strcmp(b->anchors[i].name, name) == 0)
                target = b->anchors[i].node;
        if (!target) {
            rc = fail(c, &pos, "unknown alias '*%s'", name);
            goto out;
        }
        c->nodes--; /* node_copy counts it */
        rc = node_copy(b, target, &pos, &n);
        break;
    }
    case YAML_SCALAR_EVENT: {
        const char *v = (const char *)ev->data.scalar.value;
        size_t len = ev->data.scalar.length;
        if (memchr(v, '\0', len)) {
            rc = fail(c, &pos, "a value may not contain a NUL character");
            goto out;
        }
        if (!(n = scalar_new(v, len, pos.line, pos.col, b->origin))) {
            rc = nomem(c);
            goto out;
        }
        const char *tag = (const char *)ev->data.scalar.tag;
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                   !(tag && strcmp(tag, YAML_STR_TAG) == 0);
        break;
    }
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
        int is_map = ev->type == YAML_MAPPING_START_EVENT;
        int end_type = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
        if (depth >= MAX_DEPTH) {
            rc = fail(c, &pos, "blocks nested more than %d deep", MAX_DEPTH);
            goto out;
        }
        if (!(n = node_new(is_map ? YN_MAP : YN_SEQ, pos.line, pos.col, b->origin))) {
            rc = nomem(c);
            goto out;
        }
        for (;;) {
            yaml_event_t e;
            if ((rc = next_event(b, &e)) != 0)
                goto out;
            if ((int)e.type == end_type) {
                yaml_event_delete(&e);
                break;
            }
            ynode_t *k = NULL, *v = NULL;
            if (is_map) {
                if ((rc = build(b, &e, depth + 1, &k)) != 0)
                    goto out;
                if (k->kind != YN_SCALAR) {
                    rc = fail(c, k, "a key must be a plain name, not %s", kind_text(k));
                    node_free(k);
                    goto out;
                }
                ypair_t *dup = keyidx_find(&keys, n, k->s);
                if (dup) {
                    rc = fail(c, k, "duplicate key '%s' (first given at line %u)", k->s, dup->k->line);
                    node_free(k);
                    goto out;
                }
                if ((rc = next_event(b, &e)) != 0) {
                    node_free(k);
                    goto out;
                }
            }
            if ((rc = build(b, &e, depth + 1, &v)) != 0 || (rc = node_push(n, k, v)) != 0) {
                node_free(k);
                node_free(v);
                if (rc == FS_ENOMEM && c->err && c->err->code != FS_ENOMEM)
                    rc = nomem(c);
                goto out;
            }
            if (is_map && keyidx_add(&keys, n) != 0) {
                rc = nomem(c);
                goto out;
            }
        }
        break;
    }
    default:
        rc = fail(c, &pos, "unexpected YAML event %d", (int)ev->type);
        goto out;
    }
    if (!rc && anchor)
        rc = add_anchor(b, anchor, n);
out:
    yaml_event_delete(ev);
    fs_free(anchor);
    fs_free(keys.slot);
    if (rc) {
        node_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* Parses text into a tree (*root = NULL for an empty stream). */
static int parse_tree(sctx_t *c, const char *text, size_t len, int origin, ynode_t **root)
{
    builder_t b = {.c = c, .text = text, .len = len, .origin = origin};
    yaml_event_t ev;
    int rc = 0;
    *root = NULL;
    if (!yaml_parser_initialize(&b.p))
        return nomem(c);
    yaml_parser_set_input_string(&b.p, (const unsigned char *)text, len);
    if ((rc = next_event(&b, &ev)) != 0) /* STREAM-START */
        goto out;
    yaml_event_delete(&ev);
    if ((rc = next_event(&b, &ev)) != 0)
        goto out;
    if (ev.type == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&ev);
        goto out;
    }
    yaml_event_delete(&ev); /* DOCUMENT-START */
    if ((rc = next_event(&b, &ev)) != 0 || (rc = build(&b, &ev, 0, root)) != 0)
        goto out;
    if ((rc = next_event(&b, &ev)) != 0) /* DOCUMENT-END */
        goto out;
    yaml_event_delete(&ev);
    if ((rc = next_event(&b, &ev)) != 0)
        goto out;
    if (ev.type != YAML_STREAM_END_EVENT) {
        ynode_t at = {.origin = origin, .line = (unsigned)ev.start_mark.line + 1,
                      .col = (unsigned)ev.start_mark.column + 1};
        rc = fail(c, &at, "only one YAML document is allowed");
    }
    yaml_event_delete(&ev);
out:
    for (size_t i = 0; i < b.n_anchors; i++)
        fs_free(b.anchors[i].name);
    fs_free(b.anchors);
    yaml_parser_delete(&b.p);
    if (rc) {
        node_free(*root);
        *root = NULL;
    }
    return rc;
}

/* ---- tree lookups (positions for messages) --------------------------------- */

static int parse_index(const char *s, size_t *out)
{
    if (!*s || strlen(s) > 9)
        return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    *out = (size_t)strtoul(s, NULL, 10);
    return 0;
}

/* Walks the dotted path from root as far as it exists.  Returns the node
 * reached (the value), and in *key the key node of the last map step
 * (where that block is named); *complete says whether the whole path
 * exists. */
static const ynode_t *tree_walk(const ynode_t *root, const char *path, const ynode_t **key,
                                int *complete)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    const ynode_t *n = root;
    *key = NULL;
    *complete = 1;
    for (char *seg = buf, *next; n && seg && *seg; seg = next) {
        next = strchr(seg, '.');
        if (next)
            *next++ = '\0';
        size_t idx;
        const ynode_t *child = NULL, *k = NULL;
        if (n->kind == YN_MAP) {
            ypair_t *p = map_find(n, seg);
            if (p)
                child = p->v, k = p->k;
        } else if (n->kind == YN_SEQ && parse_index(seg, &idx) == 0 && idx < n->n) {
            child = n->items[idx].v;
            k = child;
        }
        if (!child) {
            *complete = 0;
            break;
        }
        n = child;
        *key = k;
    }
    return n;
}

/* The value node at path, or NULL. */
static const ynode_t *tree_get(const ynode_t *root, const char *path)
{
    const ynode_t *k;
    int complete;
    const ynode_t *n = tree_walk(root, path, &k, &complete);
    return complete ? n : NULL;
}

/* Where to report something missing at path: the key of its deepest
 * existing ancestor block. */
static const ynode_t *tree_nearest(const ynode_t *root, const char *path)
{
    const ynode_t *k;
    int complete;
    tree_walk(root, path, &k, &complete);
    return k ? k : root;
}

/* ---- overrides ------------------------------------------------------------ */

static int ovr_fail(sctx_t *c, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int ovr_fail(sctx_t *c, size_t i, const char *fmt, ...)
{
    char msg[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fs_error_set(c->err, FS_EINVAL, "--set %.*s: %s", (int)ovr_keylen(c, (int)i), c->ovr[i], msg);
}

/* Replaces *slot by an empty map from override i. */
static int slot_to_map(sctx_t *c, ynode_t **slot, int origin)
{
    ynode_t *m = node_new(YN_MAP, 1, 1, origin);
    if (!m)
        return nomem(c);
    node_free(*slot);
    *slot = m;
    return 0;
}

static int map_add(sctx_t *c, ynode_t *m, const char *key, ynode_t *v, int origin)
{
    ynode_t *k = scalar_new(key, strlen(key), 1, 1, origin);
    if (!k || node_push(m, k, v)) {
        node_free(k);
        return nomem(c);
    }
    return 0;
}

/* Merges "KEY=VALUE" into the tree: KEY is a dotted path (list items by
 * index; index = length appends), VALUE a YAML document.  A null value
 * (null, ~) removes the key, which restores its default. */
static int apply_override(sctx_t *c, size_t i)
{
    const char *o = c->ovr[i];
    const char *eq = strchr(o, '=');
    int origin = (int)i + 1;
    if (!eq || eq == o)
        return fs_error_set(c->err, FS_EINVAL, "--set %s: expected KEY=VALUE", o);
    size_t klen = (size_t)(eq - o);
    char key[512];
    if (klen >= sizeof key)
        return ovr_fail(c, i, "the key is too long");
    memcpy(key, o, klen);
    key[klen] = '\0';
    if (key[0] == '.' || key[klen - 1] == '.' || strstr(key, ".."))
        return ovr_fail(c, i, "empty part in the key");
    for (const char *p = key; *p; p++)
        if (isspace((unsigned char)*p))
            return ovr_fail(c, i, "blank in the key");
    const char *val = eq + 1;
    if (!*val)
        return ovr_fail(c, i, "missing value (write KEY=VALUE; null restores the default)");

    ynode_t *v = NULL;
    int rc = parse_tree(c, val, strlen(val), origin, &v);
    if (rc)
        return rc;
    if (!v)
        return ovr_fail(c, i, "missing value (write KEY=VALUE; null restores the default)");
    int remove = is_null(v);
    if (remove) {
        node_free(v);
        v = NULL;
    }

    ynode_t **slot = &c->root;
    char *seg = key, *next;
    for (;; seg = next) {
        next = strchr(seg, '.');
        if (next)
            *next++ = '\0';
        int last = next == NULL;
        ynode_t *cur = *slot;
        size_t idx;
        if (cur->kind == YN_SEQ && parse_index(seg, &idx) == 0) {
            if (idx > cur->n || (idx == cur->n && !last)) {
                node_free(v);
                return ovr_fail(c, i, "item %zu does not exist (the list has %zu)", idx, cur->n);
            }
            if (!last) {
                slot = &cur->items[idx].v;
                continue;
            }
            if (idx == cur->n) {
                if (v && node_push(cur, NULL, v)) {
                    node_free(v);
                    return nomem(c);
                }
            } else if (remove) {
                node_free(cur->items[idx].v);
                memmove(&cur->items[idx], &cur->items[idx + 1], (cur->n - idx - 1) * sizeof *cur->items);
                cur->n--;
            } else {
                node_free(cur->items[idx].v);
                cur->items[idx].v = v;
            }
            return 0;
        }
        if (cur->kind != YN_MAP && (rc = slot_to_map(c, slot, origin)) != 0) {
            node_free(v);
            return rc;
        }
        cur = *slot;
        ypair_t *p = map_find(cur, seg);
        if (!last) {
            if (!p) {
                ynode_t *m = node_new(YN_MAP, 1, 1, origin);
                if (!m || (rc = map_add(c, cur, seg, m, origin)) != 0) {
                    node_free(m);
                    node_free(v);
                    return m ? rc : nomem(c);
                }
                p = &cur->items[cur->n - 1];
            }
            slot = &p->v;
            continue;
        }
        if (p && remove) {
            size_t j = (size_t)(p - cur->items);
            node_free(p->k);
            node_free(p->v);
            memmove(&cur->items[j], &cur->items[j + 1], (cur->n - j - 1) * sizeof *cur->items);
            cur->n--;
        } else if (p) {
            node_free(p->v);
            p->v = v;
        } else if (v && (rc = map_add(c, cur, seg, v, origin)) != 0) {
            node_free(v);
            return rc;
        }
        return 0;
    }
}

/* ---- tree -> config -------------------------------------------------------- */

static const fs_key_t *find_row(const fs_keytab_t *t, const char *path, size_t *idx)
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
static void children(const fs_keytab_t *t, const char *prefix, char *buf, size_t size)
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
static int resolve_path(sctx_t *c, char **field)
{
    const char *p = *field;
    if (!c->dir || !p || p[0] == '/')
        return 0;
    while (p[0] == '.' && p[1] == '/')
        p += 2;
    size_t n = strlen(c->dir) + strlen(p) + 2;
    char *r = fs_malloc(n);
    if (!r)
        return nomem(c);
    snprintf(r, n, "%s/%s", c->dir, p);
    fs_free(*field);
    *field = r;
    return 0;
}

/* A scalar row's value from node n. */
static int conv_scalar(sctx_t *c, const fs_key_t *k, const ynode_t *n, const char *dpath, void *base)
{
    char exp[700];
    if (n->kind != YN_SCALAR)
        return fail(c, n, "%s: expected %s, found %s", dpath, fs_keys_expect(k, exp, sizeof exp),
                    kind_text(n));
    if (is_null(n))
        return fail(c, n, "%s: missing value (expected %s)", dpath, fs_keys_expect(k, exp, sizeof exp));
    fs_error_t e;
    int rc = fs_keys_parse(k, n->s, base, &e);
    if (rc == FS_ENOMEM)
        return nomem(c);
    if (rc)
        return fail(c, n, "%s: %s", dpath, e.msg);
    if (k->type == FS_KT_PATH)
        return resolve_path(c, FIELD(base, k->off, char *));
    return 0;
}

/* A compound value must be a map/list; null and scalars are reported. */
static int want_kind(sctx_t *c, const fs_key_t *k, const ynode_t *n, int kind, const char *dpath)
{
    char exp[700];
    if (n->kind == kind)
        return 0;
    if (is_null(n))
        return fail(c, n, "%s: missing value (expected %s)", dpath, fs_keys_expect(k, exp, sizeof exp));
    return fail(c, n, "%s: expected %s, found %s%s%s%s", dpath, fs_keys_expect(k, exp, sizeof exp),
                kind_text(n), n->kind == YN_SCALAR ? " '" : "", n->kind == YN_SCALAR ? n->s : "",
                n->kind == YN_SCALAR ? "'" : "");
}

static const fs_key_t prob_row = {.path = "probability", .type = FS_KT_PROB};

/* The value of one map entry as a probability. */
static int conv_prob(sctx_t *c, const ynode_t *v, const char *dpath, const char *key, double *out)
{
    if (v->kind != YN_SCALAR || is_null(v))
        return fail(c, v, "%s: '%s' needs a probability from 0 to 1", dpath, key);
    fs_error_t e;
    double p = NAN;
    int rc = fs_keys_parse(&prob_row, v->s, &p, &e);
    if (rc)
        return fail(c, v, "%s: %s: %s", dpath, key, e.msg);
    *out = p;
    return 0;
}

static int check_sum(sctx_t *c, const ynode_t *n, const char *dpath, const double *p, size_t cnt,
                     const char *what)
{
    double sum = 0;
    for (size_t i = 0; i < cnt; i++)
        sum += p[i];
    if (!(fabs(sum - 1.0) <= PROB_TOL))
        return fail(c, n, "%s: the %s sum to %.12g (expected 1, within 1e-9)", dpath, what, sum);
    return 0;
}

static int conv_mix(sctx_t *c, const fs_key_t *k, const ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, YN_MAP, dpath);
    if (rc)
        return rc;
    if (n->n == 0)
        return fail(c, n, "%s: expected at least one GPU count", dpath);
    uint32_t *sizes = fs_malloc(n->n * sizeof *sizes);
    double *probs = fs_malloc(n->n * sizeof *probs);
    if (!sizes || !probs) {
        rc = nomem(c);
        goto fail;
    }
    char bounds[160];
    fs_keys_bounds(k, bounds, sizeof bounds);
    for (size_t i = 0; i < n->n; i++) {
        const ynode_t *kn = n->items[i].k, *vn = n->items[i].v;
        const char *s = kn->s;
        char *end;
        errno = 0;
        unsigned long long g = isdigit((unsigned char)s[0]) ? strtoull(s, &end, 10) : 0;
        if (!isdigit((unsigned char)s[0]) || *end || errno || (double)g < k->min || (double)g > k->max) {
            rc = fail(c, kn, "%s: '%s' is not a GPU count (expected a whole number %s)", dpath, s, bounds);
            goto fail;
        }
        for (size_t j = 0; j < i; j++)
            if (sizes[j] == g) {
                rc = fail(c, kn, "%s: GPU count %llu is given twice (first at line %u)", dpath, g,
                          n->items[j].k->line);
                goto fail;
            }
        sizes[i] = (uint32_t)g;
        if ((rc = conv_prob(c, vn, dpath, s, &probs[i])) != 0)
            goto fail;
    }
    if ((rc = check_sum(c, n, dpath, probs, n->n, "probabilities")) != 0)
        goto fail;
    fs_free(*FIELD(base, k->off2, uint32_t *));
    fs_free(*FIELD(base, k->off3, double *));
    *FIELD(base, k->off2, uint32_t *) = sizes;
    *FIELD(base, k->off3, double *) = probs;
    *FIELD(base, k->off, size_t) = n->n;
    return 0;
fail:
    fs_free(sizes);
    fs_free(probs);
    return rc;
}

static int conv_shares(sctx_t *c, const fs_key_t *k, const ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, YN_MAP, dpath);
    if (rc)
        return rc;
    char **names = n->n ? fs_calloc(n->n, sizeof *names) : NULL;
    double *shares = n->n ? fs_malloc(n->n * sizeof *shares) : NULL;
    size_t done = 0;
    if (n->n && (!names || !shares)) {
        rc = nomem(c);
        goto fail;
    }
    for (; done < n->n; done++) {
        const ynode_t *kn = n->items[done].k;
        if (!*kn->s) {
            rc = fail(c, kn, "%s: a name may not be empty", dpath);
            goto fail;
        }
        if ((rc = conv_prob(c, n->items[done].v, dpath, kn->s, &shares[done])) != 0)
            goto fail;
        if (!(names[done] = fs_strdup(kn->s))) {
            rc = nomem(c);
            goto fail;
        }
    }
    if (n->n && (rc = check_sum(c, n, dpath, shares, n->n, "shares")) != 0)
        goto fail;
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base); /* the old value */
    *FIELD(base, k->off2, char **) = names;
    *FIELD(base, k->off3, double *) = shares;
    *FIELD(base, k->off, size_t) = n->n;
    return 0;
fail:
    for (size_t j = 0; names && j < done; j++)
        fs_free(names[j]);
    fs_free(names);
    fs_free(shares);
    return rc;
}

/* {name: name}: both sides non-empty scalars (a YAML map has no key twice). */
static int conv_names(sctx_t *c, const fs_key_t *k, const ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, YN_MAP, dpath);
    if (rc)
        return rc;
    char **keys = n->n ? fs_calloc(n->n, sizeof *keys) : NULL;
    char **vals = n->n ? fs_calloc(n->n, sizeof *vals) : NULL;
    size_t done = 0;
    if (n->n && (!keys || !vals)) {
        rc = nomem(c);
        goto fail;
    }
    for (; done < n->n; done++) {
        const ynode_t *kn = n->items[done].k, *vn = n->items[done].v;
        if (!*kn->s) {
            rc = fail(c, kn, "%s: a name may not be empty", dpath);
            goto fail;
        }
        if (vn->kind != YN_SCALAR || is_null(vn) || !*vn->s) {
            rc = fail(c, vn, "%s: '%s' needs a name", dpath, kn->s);
            goto fail;
        }
        if (!(keys[done] = fs_strdup(kn->s)) || !(vals[done] = fs_strdup(vn->s))) {
            fs_free(keys[done]);
            rc = nomem(c);
            goto fail;
        }
    }
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base); /* the old value */
    *FIELD(base, k->off2, char **) = keys;
    *FIELD(base, k->off3, char **) = vals;
    *FIELD(base, k->off, size_t) = n->n;
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

/* Reads an empirical sample: numbers of seconds, one per line, or column
 * `column` of a CSV with a header; '#' lines are comments.  Errors are
 * reported at node `at`. */
static int load_empirical(sctx_t *c, const char *path, const char *column, fs_dist_t *d,
                          const ynode_t *at, const char *dpath)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(c, at, "%s: cannot open '%s': %s", dpath, path, strerror(errno));
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
                rc = nomem(c);
                goto out;
            }
            line[len++] = (char)ch;
        }
        if (ch == EOF && len == 0)
            break;
        lineno++;
        if (fs_grow((void **)&line, &cap, len + 1, 1)) {
            rc = nomem(c);
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
                    rc = fail(c, at, "%s: %s:%zu: no column '%s' in the header '%s'", dpath, path,
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
                    rc = fail(c, at, "%s: %s:%zu: the row has no column %ld ('%s')", dpath, path,
                              lineno, col + 1, column);
                    goto out;
                }
                fb = comma + 1;
            }
            fl = strcspn(fb, ",");
        } else if (strchr(p, ',')) {
            rc = fail(c, at, "%s: %s:%zu: several columns: give 'column' to say which to read", dpath,
                      path, lineno);
            goto out;
        }
        char num[128];
        snprintf(num, sizeof num, "%.*s", (int)(fl < sizeof num ? fl : sizeof num - 1), fb);
        double x;
        if (fs_units_parse_number(num, &x, NULL) != 0 || x < 0) {
            rc = fail(c, at, "%s: %s:%zu: '%s' is not a number of seconds >= 0", dpath, path, lineno, num);
            goto out;
        }
        if (fs_grow((void **)&vals, &vcap, n + 1, sizeof *vals)) {
            rc = nomem(c);
            goto out;
        }
        vals[n++] = x;
    }
    if (ferror(f)) {
        rc = fail(c, at, "%s: cannot read '%s'", dpath, path);
        goto out;
    }
    if (n == 0) {
        rc = fail(c, at, "%s: '%s' holds no values", dpath, path);
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

static int conv_dist(sctx_t *c, const fs_key_t *k, const ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, YN_MAP, dpath);
    if (rc)
        return rc;
    const fs_keytab_t *t = k->sub;
    fs_dist_t *d = FIELD(base, k->off, fs_dist_t);
    fs_dist_cfg_t *dc = FIELD(base, k->off2, fs_dist_cfg_t);
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base);
    fs_dist_init(d);
    const ynode_t *keys[32] = {0}, *vals[32] = {0};
    char sub[512], exp[700];
    for (size_t i = 0; i < n->n; i++) {
        const ynode_t *kn = n->items[i].k, *vn = n->items[i].v;
        size_t ri;
        const fs_key_t *r = strchr(kn->s, '.') ? NULL : find_row(t, kn->s, &ri);
        if (!r) {
            children(t, "", exp, sizeof exp);
            return fail(c, kn, "unknown key '%s' in '%s' (expected one of: %s)", kn->s, dpath, exp);
        }
        join(sub, sizeof sub, dpath, r->path);
        if ((rc = conv_scalar(c, r, vn, sub, (r->flags & FS_KF_AUX) ? (void *)dc : (void *)d)) != 0)
            return rc;
        dc->given |= 1u << ri;
        keys[ri] = kn;
        vals[ri] = vn;
    }
    size_t di = 0;
    find_row(t, "dist", &di);
    if (!(dc->given & (1u << di))) {
        fs_keys_expect(&t->rows[di], exp, sizeof exp);
        return fail(c, n, "%s: missing key 'dist' (expected %s)", dpath, exp);
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
            return fail(c, keys[i], "%s: '%s' does not apply to %s (it takes: %s)", dpath,
                        t->rows[i].path, fs_dist_kind_name(d->kind), takes);
        }
    if (d->kind == FS_DIST_EMPIRICAL) {
        if (!dc->path)
            return fail(c, n, "%s: empirical needs 'path' (a file of values in seconds)", dpath);
        size_t pi = 0;
        find_row(t, "path", &pi);
        join(sub, sizeof sub, dpath, "path");
        if ((rc = load_empirical(c, dc->path, dc->column, d, vals[pi], sub)) != 0)
            return rc;
    }
    fs_error_t e;
    if (fs_dist_prepare(d, &e) != 0)
        return fail(c, n, "%s: %s", dpath, e.msg);
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

static int conv_block(sctx_t *c, const fs_keytab_t *t, const ynode_t *map, const char *prefix,
                      const char *disp, void *base, unsigned char *seen);
static int check_required(sctx_t *c, const fs_keytab_t *t, const unsigned char *seen,
                          const ynode_t *top, const char *disp);

static int conv_list(sctx_t *c, const fs_key_t *k, const ynode_t *n, const char *dpath, void *base)
{
    int rc = want_kind(c, k, n, YN_SEQ, dpath);
    if (rc)
        return rc;
    if (((k->flags & FS_KF_MIN) && (double)n->n < k->min))
        return fail(c, n, "%s: expected at least %.0f item%s, found %zu", dpath, k->min,
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
        return nomem(c);
    }
    *FIELD(base, k->off, char *) = arr;
    *FIELD(base, k->off2, size_t) = n->n; /* zeroed items release safely */
    for (size_t i = 0; i < n->n && !rc; i++) {
        char disp[512], idx[24];
        snprintf(idx, sizeof idx, "%zu", i);
        join(disp, sizeof disp, dpath, idx);
        const ynode_t *item = n->items[i].v;
        void *elem = arr + i * t->size;
        memset(seen, 0, t->n);
        fs_error_t e;
        int drc = fs_keys_defaults(t, elem, &e);
        if (drc) {
            rc = drc == FS_ENOMEM ? nomem(c) : fs_error_set(c->err, drc, "%s", e.msg);
        } else if (item->kind != YN_MAP) {
            char exp[512];
            children(t, "", exp, sizeof exp);
            rc = fail(c, item, "%s: expected a block of keys (%s), found %s", disp, exp, kind_text(item));
        } else if ((rc = conv_block(c, t, item, "", disp, elem, seen)) == 0) {
            rc = check_required(c, t, seen, item, disp);
        }
    }
    fs_free(seen);
    return rc;
}

/* A raw value: a scalar or a list of scalars kept as written, with the
 * position of each (fs_raw_t; interpreted later, e.g. by fs_sweep). */
static int conv_raw(sctx_t *c, const fs_key_t *k, const ynode_t *n, const char *dpath, void *base)
{
    char exp[700], pos[512];
    if (is_null(n) || n->kind == YN_MAP || (n->kind == YN_SEQ && n->n == 0))
        return fail(c, n, "%s: %s (expected %s)", dpath,
                    n->kind == YN_MAP ? "found a block of keys" : "missing value",
                    fs_keys_expect(k, exp, sizeof exp));
    size_t cnt = n->kind == YN_SEQ ? n->n : 1;
    for (size_t i = 0; n->kind == YN_SEQ && i < cnt; i++) {
        const ynode_t *it = n->items[i].v;
        if (it->kind != YN_SCALAR || is_null(it))
            return fail(c, it, "%s.%zu: expected a value, found %s", dpath, i,
                        it->kind != YN_SCALAR ? kind_text(it) : "nothing");
    }
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base); /* the old value */
    fs_raw_t *r = FIELD(base, k->off, fs_raw_t);
    r->text = fs_calloc(cnt, sizeof *r->text);
    r->where = fs_calloc(cnt, sizeof *r->where);
    r->quoted = fs_calloc(cnt, sizeof *r->quoted);
    where(c, n, pos, sizeof pos);
    r->at = fs_strdup(pos);
    r->given = 1;
    r->is_list = n->kind == YN_SEQ;
    if (!r->text || !r->where || !r->quoted || !r->at)
        goto oom;
    for (size_t i = 0; i < cnt; i++) {
        const ynode_t *it = n->kind == YN_SEQ ? n->items[i].v : n;
        where(c, it, pos, sizeof pos);
        r->n = i + 1;
        r->quoted[i] = !it->plain;
        if (!(r->text[i] = fs_strdup(it->s)) || !(r->where[i] = fs_strdup(pos)))
            goto oom;
    }
    return 0;
oom:
    fs_keys_release(&(fs_keytab_t){"", k, 1, 0}, base);
    return nomem(c);
}

static int conv_value(sctx_t *c, const fs_key_t *k, const ynode_t *n, const char *dpath, void *base)
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
static int conv_block(sctx_t *c, const fs_keytab_t *t, const ynode_t *map, const char *prefix,
                      const char *disp, void *base, unsigned char *seen)
{
    char path[512], dpath[512], dblock[512], list[700];
    int rc;
    if (is_null(map))
        return 0; /* an empty block */
    join(dblock, sizeof dblock, disp, prefix);
    if (map->kind != YN_MAP) {
        children(t, prefix, list, sizeof list);
        return fail(c, map, "%s: expected a block of keys (%s), found %s%s%s%s", dblock, list,
                    kind_text(map), map->kind == YN_SCALAR ? " '" : "",
                    map->kind == YN_SCALAR ? map->s : "", map->kind == YN_SCALAR ? "'" : "");
    }
    for (size_t i = 0; i < map->n; i++) {
        const ynode_t *kn = map->items[i].k, *vn = map->items[i].v;
        join(path, sizeof path, prefix, kn->s);
        join(dpath, sizeof dpath, disp, path);
        size_t ri;
        const fs_key_t *k = strchr(kn->s, '.') || !*kn->s ? NULL : find_row(t, path, &ri);
        if (k && k->type == FS_KT_CHOICE) {
            for (size_t j = 0; j < t->n; j++)
                if (j != ri && seen[j] && t->rows[j].type == FS_KT_CHOICE && t->rows[j].off == k->off) {
                    choice_names(t, k->off, " and ", list, sizeof list);
                    return fail(c, kn, "%s: give only one of %s, not both", dblock, list);
                }
            seen[ri] = 1;
            *FIELD(base, k->off, int) = k->choice;
            if ((rc = conv_block(c, t, vn, path, disp, base, seen)) != 0)
                return rc;
        } else if (k) {
            seen[ri] = 1;
            if ((rc = conv_value(c, k, vn, dpath, base)) != 0)
                return rc;
        } else if (*kn->s && !strchr(kn->s, '.') && has_children(t, path)) {
            if ((rc = conv_block(c, t, vn, path, disp, base, seen)) != 0)
                return rc;
        } else {
            children(t, prefix, list, sizeof list);
            if (*dblock)
                return fail(c, kn, "unknown key '%s' in '%s' (expected one of: %s)", kn->s, dblock, list);
            return fail(c, kn, "unknown key '%s' (expected one of: %s)", kn->s, list);
        }
    }
    return 0;
}

/* Required keys (in an active choice block) and choice groups, for table t
 * whose struct was read from `top`. */
static int check_required(sctx_t *c, const fs_keytab_t *t, const unsigned char *seen,
                          const ynode_t *top, const char *disp)
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
                return fail(c, tree_nearest(top, block), "'%s' needs one of %s", dpath, names);
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
        return fail(c, tree_nearest(top, k->path), "missing key '%s' (expected %s)", dpath,
                    fs_keys_expect(k, exp, sizeof exp));
    }
    return 0;
}

/* ---- cross-field rules ------------------------------------------------------ */

static const ynode_t *node_or(const sctx_t *c, const char *path, const char *fallback)
{
    const ynode_t *n = tree_get(c->root, path);
    if (!n && fallback)
        n = tree_get(c->root, fallback);
    return n ? n : tree_nearest(c->root, path);
}

/* cost.carbon_*: one source of intensity, the series read now (so that
 * `fleetsim validate` sees its errors, at its own FILE:LINE:COL), and
 * embodied carbon only where capex is (owned pools). */
static int validate_carbon(sctx_t *c)
{
    fs_cost_cfg_t *cc = &c->cfg->cost;
    char key[64];
    for (size_t i = 0; i < cc->n_pools; i++)
        if (cc->pools[i].embodied_kgco2e > 0 && cc->pools[i].billing != FS_BILL_OWNED) {
            snprintf(key, sizeof key, "cost.pools.%zu.embodied_kgco2e", i);
            return fail(c, node_or(c, key, "cost.pools"),
                        "%s: pool '%s' is not owned: embodied carbon is amortised like capex, "
                        "on owned pools only (a cloud price is the provider's)", key,
                        cc->pools[i].pool ? cc->pools[i].pool : "");
        }
    if (!cc->carbon_series)
        return 0;
    if (cc->carbon_intensity > 0)
        return fail(c, node_or(c, "cost.carbon_series", "cost"),
                    "cost.carbon_series: give carbon_intensity or carbon_series, not both "
                    "(carbon_intensity is %g)", cc->carbon_intensity);
    fs_error_t e;
    double *g = NULL;
    size_t n = 0;
    int rc = fs_carbon_load(cc->carbon_series, &g, &n, &e);
    if (rc == FS_ENOMEM)
        return nomem(c);
    if (rc == FS_EINVAL)    /* the message starts with the series' FILE:LINE:COL */
        return fs_error_set(c->err, FS_EINVAL, "%s (cost.carbon_series)", e.msg);
    if (rc)
        return fail(c, node_or(c, "cost.carbon_series", "cost"), "cost.carbon_series: %s", e.msg);
    fs_free(cc->carbon_hourly);
    cc->carbon_hourly = g;
    cc->n_carbon_hours = n;
    return 0;
}

/* cluster.pools[i].mig: the pool's GPU model has MIG, the layout parses
 * and fits (fs_mig_layout_parse), at most FS_CLUSTER_MIG_MAX_GPN GPUs per
 * node.  A token's error points at the token inside the value. */
static int validate_mig(sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    char key[64], gkey[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.mig", i);
    snprintf(gkey, sizeof gkey, "cluster.pools.%zu.gpu", i);
    fs_error_t e;
    const fs_mig_model_t *m = fs_mig_model_lookup(p->gpu, &e);
    if (!m)
        return fail(c, node_or(c, key, NULL), "%s: GPU model '%s' of the pool has no MIG (%s)", key,
                    p->gpu, e.msg);
    fs_mig_spec_t spec;
    size_t off = 0;
    if (fs_mig_layout_parse(m, p->mig, &spec, &off, &e)) {
        const ynode_t *n = node_or(c, key, NULL);
        ynode_t at;
        if (n && n->origin == 0 && n->kind == YN_SCALAR && !strchr(n->s, '\n')) {
            at = *n;    /* the token's column: a quoted scalar starts after its quote */
            at.col += (unsigned)off + (n->plain ? 0u : 1u);
            n = &at;
        }
        return fail(c, n, "%s: %s", key, e.msg);
    }
    /* the policies that count GPUs rather than ask the cluster: quotas
     * (Kueue, Volcano), preemption plans and backfill shadows */
    const fs_sched_cfg_t *sc = &c->cfg->scheduler;
    if (spec.enabled && (sc->queue == FS_QUEUE_KUEUE || sc->queue == FS_QUEUE_VOLCANO ||
                         fs_policy_preemptor(c->cfg) || sc->backfill != FS_BACKFILL_NONE))
        return fail(c, node_or(c, key, NULL),
                    "%s: MIG pools work with the non-preemptive queues without backfill only "
                    "(fifo, priority, sjf, slurm; preemption: none; backfill: none): Kueue and "
                    "Volcano quotas, preemption plans and backfill shadows count whole GPUs "
                    "(docs/mig.md)", key);
    if (spec.enabled && p->gpus_per_node > FS_CLUSTER_MIG_MAX_GPN)
        return fail(c, node_or(c, key, NULL), "%s: a MIG pool has at most %u GPUs per node (%s is %u)",
                    key, FS_CLUSTER_MIG_MAX_GPN, gkey, p->gpus_per_node);
    return 0;
}

/* cluster.pools[i].mig_repartition (enabled): the pool has a MIG layout
 * (not all-disabled) to re-cut. */
static int validate_mig_recut(sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    char key[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.mig_repartition", i);
    fs_error_t e;
    const fs_mig_model_t *m = p->mig ? fs_mig_model_lookup(p->gpu, &e) : NULL;
    fs_mig_spec_t spec;
    if (!m || fs_mig_layout_parse(m, p->mig, &spec, NULL, &e) || !spec.enabled)
        return fail(c, node_or(c, key, NULL),
                    "%s: expected a MIG pool to re-partition (a pool whose `mig` is a layout, "
                    "not all-disabled; docs/mig.md)", key);
    return 0;
}

/* The catalog's TDP of the pool's GPU, W; 0 when the catalog has none. */
static double pool_tdp(const fs_pool_cfg_t *p)
{
    int cat = fs_catalog_find(p->gpu);
    return cat >= 0 ? fs_catalog_get((size_t)cat)->tdp_w : 0;
}

/* Thermal throttling (telemetry.throttle_c) on pool i: the limit it sets,
 * (throttle_c - ambient_c) / 0.07 W, must leave the GPU above its floor (idle
 * + context), and must not bind on a MIG pool (not modelled, as power caps). */
static int validate_throttle(sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    char key[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.ambient_c", i);
    double tdp = pool_tdp(p);
    if (!(tdp > 0))
        return 0;   /* no TDP: the power model does not apply (nor throttling) */
    double lim = fs_thermal_limit_w(c->cfg->telemetry.throttle_c, p->ambient_c);
    if (lim <= fs_power_floor_w(tdp))
        return fail(c, node_or(c, key, "telemetry.throttle_c"),
                    "%s: at %g C the %s would pass telemetry.throttle_c (%g C) even at its idle + "
                    "context draw (%g W: the limit is (%g - %g) / %g = %g W); expected a cooler "
                    "pool or a higher slowdown temperature", key, p->ambient_c, p->gpu,
                    c->cfg->telemetry.throttle_c, fs_power_floor_w(tdp),
                    c->cfg->telemetry.throttle_c, p->ambient_c, FS_THERMAL_C_PER_W, lim);
    if (p->mig && lim < tdp)
        return fail(c, node_or(c, key, "telemetry.throttle_c"),
                    "%s: thermal throttling of MIG pools is not modelled (the instances share "
                    "one GPU's clock): at %g C the %s would throttle above %g W; cool the pool "
                    "or raise telemetry.throttle_c above %g C", key, p->ambient_c, p->gpu, lim,
                    p->ambient_c + FS_THERMAL_C_PER_W * tdp);
    return 0;
}

/* cluster.pools[i].power_cap_w: above the GPU's floor (idle + context), and
 * not on a MIG pool (whose instances share one GPU's limit: not modelled). */
static int validate_power_cap(sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    char key[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.power_cap_w", i);
    double tdp = pool_tdp(p);
    if (!(tdp > 0))
        return fail(c, node_or(c, key, NULL), "%s: the catalog has no TDP for GPU '%s'", key, p->gpu);
    if (p->power_cap_w <= fs_power_floor_w(tdp))
        return fail(c, node_or(c, key, NULL),
                    "%s: %g W is not above the %s's idle + context draw (%g W: 10%% of its %g W "
                    "TDP + %g W); expected more, or 0 for no cap", key, p->power_cap_w, p->gpu,
                    fs_power_floor_w(tdp), tdp, FS_POWER_CONTEXT_W);
    if (p->mig)
        return fail(c, node_or(c, key, NULL),
                    "%s: power caps on MIG pools are not modelled (the instances share one "
                    "GPU's limit); remove the cap or the pool's mig", key);
    return 0;
}

/* cluster.pools[i].sharing: exactly one of time_slicing and mps; not on a
 * MIG pool; only with the placements that go through the cluster's
 * request calls (pack, first_fit, topology) and the queues that place in a
 * job's own pools (Kueue and Volcano quotas count whole GPUs). */
static int validate_sharing(sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    const fs_sched_cfg_t *sc = &c->cfg->scheduler;
    char key[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.sharing", i);
    const ynode_t *at = node_or(c, key, NULL);
    if ((p->time_slicing != 0) == (p->mps != 0))
        return fail(c, at, "%s: expected exactly one of time_slicing: N and mps: N (N in 2..32)", key);
    if (p->mig)
        return fail(c, at, "%s: a MIG pool cannot also be shared (remove mig or sharing)", key);
    if (sc->placement != FS_PLACE_PACK && sc->placement != FS_PLACE_FIRST_FIT &&
        sc->placement != FS_PLACE_TOPOLOGY)
        return fail(c, node_or(c, "scheduler.placement", key),
                    "%s: shared pools work with scheduler.placement pack, first_fit or topology "
                    "(the scored placements do not know replicas yet; docs/models.md)", key);
    if (sc->queue == FS_QUEUE_KUEUE || sc->queue == FS_QUEUE_VOLCANO)
        return fail(c, at, "%s: shared pools work with the queues that place in a job's own pools "
                    "(fifo, priority, sjf, srtf, las, slurm and plugins): Kueue and Volcano "
                    "quotas count whole GPUs", key);
    return 0;
}

/* A taint list (models/fs_taint.h) at the key made from fmt and i: a bad
 * token's error points at the token inside the value.  Taints on pools
 * are refused with Kueue and Volcano, whose flavors and queues choose the
 * pools themselves. */
static int validate_taints(sctx_t *c, const char *list, const char *key)
{
    char why[300];
    size_t off = 0;
    if (fs_taint_check(list, &off, why, sizeof why)) {
        const ynode_t *n = node_or(c, key, NULL);
        ynode_t at;
        if (n && n->origin == 0 && n->kind == YN_SCALAR && !strchr(n->s, '\n')) {
            at = *n;
            at.col += (unsigned)off + (n->plain ? 0u : 1u);
            n = &at;
        }
        return fail(c, n, "%s: %s", key, why);
    }
    const fs_sched_cfg_t *sc = &c->cfg->scheduler;
    if (strncmp(key, "cluster.", 8) == 0 &&
        (sc->queue == FS_QUEUE_KUEUE || sc->queue == FS_QUEUE_VOLCANO))
        return fail(c, node_or(c, key, NULL), "%s: pool taints work with the queues that place "
                    "in a job's own pools (fifo, priority, sjf, srtf, las, slurm and plugins); "
                    "Kueue flavors and Volcano queues choose pools themselves (Kueue's "
                    "ResourceFlavor nodeTaints are not modelled)", key);
    return 0;
}

static int validate(sctx_t *c)
{
    fs_config_t *cfg = c->cfg;
    int rc;
    char a[FS_UNITS_BUF], b[FS_UNITS_BUF], p1[64], p2[64];
    /* Pools from a machine list (traces/fs_fleet.c) follow the written ones;
     * their GPU models need not be in the catalog (unknown: speed 1.0). */
    cfg->cluster.n_from = 0;
    if (cfg->cluster.from.given) {
        size_t given = cfg->cluster.n_pools;
        fs_error_t e;
        int frc = fs_fleetcfg_load(cfg->cluster.from.format, cfg->cluster.from.path,
                                cfg->cluster.from.gpu, &cfg->cluster.pools, &cfg->cluster.n_pools,
                                NULL, &e);
        if (frc == FS_ENOMEM)
            return nomem(c);
        if (frc)
            return fail(c, node_or(c, "cluster.from.path", "cluster.from"), "cluster.from: %s", e.msg);
        cfg->cluster.n_from = cfg->cluster.n_pools - given;
    }
    if (cfg->cluster.n_pools == 0) {
        char exp[700];
        size_t ri;
        return fail(c, tree_nearest(c->root, "cluster.pools"),
                    "missing key 'cluster.pools' (expected %s; or give cluster.from)",
                    fs_keys_expect(find_row(&fs_keys_config, "cluster.pools", &ri), exp, sizeof exp));
    }
    /* a trace without a horizon is replayed whole: the model ends the
     * arrival window at its last submission */
    cfg->horizon_auto = cfg->workload.kind == FS_WORKLOAD_TRACE && !tree_get(c->root, "horizon");
    if (cfg->horizon_auto)
        cfg->horizon = FS_TIME_MAX_INPUT;
    if (cfg->warmup >= cfg->horizon)
        return fail(c, node_or(c, "warmup", "horizon"), "warmup: %s is not shorter than the horizon (%s)",
                    fs_units_format_duration(cfg->warmup, a, sizeof a),
                    fs_units_format_duration(cfg->horizon, b, sizeof b));
    uint64_t total = 0, largest = 0;
    for (size_t i = 0; i < cfg->cluster.n_pools; i++) {
        const fs_pool_cfg_t *p = &cfg->cluster.pools[i];
        for (size_t j = 0; j < i; j++)
            if (strcmp(cfg->cluster.pools[j].name, p->name) == 0) {
                snprintf(p1, sizeof p1, "cluster.pools.%zu.name", i);
                snprintf(p2, sizeof p2, "cluster.pools.%zu", j);
                return fail(c, node_or(c, p1, NULL), "%s: pool name '%s' is already used by %s", p1,
                            p->name, p2);
            }
        if (p->mig && (rc = validate_mig(c, i)) != 0)
            return rc;
        if (p->mig_recut_given && p->mig_recut && (rc = validate_mig_recut(c, i)) != 0)
            return rc;
        if (p->power_cap_w > 0 && (rc = validate_power_cap(c, i)) != 0)
            return rc;
        if (c->cfg->telemetry.throttle_c > 0 && (rc = validate_throttle(c, i)) != 0)
            return rc;
        if (p->sharing && (rc = validate_sharing(c, i)) != 0)
            return rc;
        if (p->taints) {
            snprintf(p1, sizeof p1, "cluster.pools.%zu.taints", i);
            if ((rc = validate_taints(c, p->taints, p1)) != 0)
                return rc;
        }
        uint64_t g = (uint64_t)p->nodes * p->gpus_per_node;
        total += g;
        if (g > largest)
            largest = g;
    }
    if (total > MAX_TOTAL_GPUS)
        return fail(c, node_or(c, "cluster.pools", NULL),
                    "cluster.pools: %llu GPUs in all is more than the limit of 2^31",
                    (unsigned long long)total);
    if (cfg->workload.kind == FS_WORKLOAD_SYNTHETIC) {
        fs_synth_cfg_t *s = &cfg->workload.synth;
        const ynode_t *mix = tree_get(c->root, "workload.synthetic.gpus");
        s->mig = 0;
        if (cfg->workload.mig_profile) {  /* a profile some MIG model has */
            const char *n = cfg->workload.mig_profile;
            if (!(s->mig = fs_mig_code_find(n, strlen(n))))
                return fail(c, node_or(c, "workload.synthetic.mig_profile", "workload.synthetic"),
                            "workload.synthetic.mig_profile: unknown MIG profile '%s' (expected a "
                            "profile of a MIG GPU model such as 1g.10gb, 3g.40gb; docs/mig.md)", n);
            s->mig_milli = fs_mig_code_milli(s->mig);
        }
        for (size_t i = 0; i < s->n_sizes && !s->mig; i++)
            if (s->sizes[i] > largest)
                return fail(c, mix && mix->kind == YN_MAP && i < mix->n ? mix->items[i].k : mix,
                            "workload.synthetic.gpus: job size %u is larger than any pool (largest: %llu GPUs)",
                            s->sizes[i], (unsigned long long)largest);
        s->horizon = cfg->horizon;
        /* the generator's own rules (profile names, size classes, ...),
         * blamed on the key the generator names */
        fs_error_t se;
        char skey[128];
        if (fs_synth_cfg_check_key(s, skey, sizeof skey, &se) != 0)
            return fail(c, node_or(c, skey[0] ? skey : "workload.synthetic", "workload.synthetic"),
                        "%s", se.msg);
    }
    if (cfg->failures.given) {  /* failures.*: pools, causes, spares, presets */
        char key[128];
        fs_error_t fe;
        int frc = fs_failure_cfg_check(cfg, key, sizeof key, &fe);
        if (frc == FS_ENOMEM)
            return nomem(c);
        if (frc)
            return fail(c, node_or(c, key, "failures"), "%s", fe.msg);
    }
    if (cfg->services.n) {  /* services: */
        char key[160];
        fs_error_t ve;
        if (fs_service_cfg_check(cfg, key, sizeof key, &ve))
            return fail(c, node_or(c, key, "services"), "%s", ve.msg);
    }
    if ((rc = validate_carbon(c)) != 0)
        return rc;
    for (size_t i = 0; i < cfg->scheduler.n_tolerations; i++) {
        char key[200];
        snprintf(key, sizeof key, "scheduler.tolerations.%s", cfg->scheduler.toleration_tenants[i]);
        if ((rc = validate_taints(c, cfg->scheduler.toleration_lists[i], key)) != 0)
            return rc;
    }
    if (cfg->scheduler.queue == FS_QUEUE_KUEUE) {  /* scheduler.kueue.*, manifests */
        char key[200];
        fs_error_t ke;
        int krc = fs_kueue_cfg_resolve(&cfg->scheduler.kueue, &cfg->cluster, key, sizeof key, &ke);
        if (krc == FS_ENOMEM)
            return nomem(c);
        if (krc && *key)
            return fail(c, node_or(c, key, "scheduler"), "%s", ke.msg);
        if (krc)    /* a manifest error: the message names its FILE:LINE:COL */
            return fs_error_set(c->err, krc, "%s", ke.msg);
    }
    {   /* the policy's own rules (fs_policy_ops_t.check): what creating it
         * would refuse, refused here at the key it names */
        char key[200];
        fs_error_t pe;
        int prc = fs_policy_check(cfg, key, sizeof key, &pe);
        if (prc == FS_ENOMEM)
            return nomem(c);
        if (prc)
            return fail(c, node_or(c, key, "scheduler"), "%s", pe.msg);
    }
    return 0;
}

/* ---- loading ----------------------------------------------------------------- */

/* The absolute directory of a scenario file (NULL on failure: relative
 * paths are then left relative to the working directory). */
static char *dir_of(const char *path, int *oom)
{
    const char *slash = strrchr(path, '/');
    char cwd[PATH_MAX];
    char *d;
    *oom = 0;
    if (path[0] == '/') {
        d = fs_strndup(path, slash == path ? 1 : (size_t)(slash - path));
    } else if (!getcwd(cwd, sizeof cwd)) {
        d = slash ? fs_strndup(path, (size_t)(slash - path)) : NULL;
        if (!slash)
            return NULL;
    } else if (slash) {
        size_t n = strlen(cwd) + (size_t)(slash - path) + 2;
        if ((d = fs_malloc(n)) != NULL)
            snprintf(d, n, "%s/%.*s", cwd, (int)(slash - path), path);
    } else {
        d = fs_strdup(cwd);
    }
    if (!d)
        *oom = 1;
    else if (strcmp(d, "/") == 0)
        d[0] = '\0'; /* "/" + "/" + name would double the slash */
    return d;
}

/* Whether the scenario (after overrides) gives a value at path. */
static int given_at(const sctx_t *c, const char *path)
{
    const ynode_t *n = tree_get(c->root, path);
    return n && !is_null(n);
}

/* scheduler.preset: fills the keys the scenario does not give (a key given
 * in the file or by --set wins).  The dump writes every key, so a dumped
 * config loads back the same. */
static int apply_preset(sctx_t *c)
{
    fs_sched_cfg_t *s = &c->cfg->scheduler;
    if (s->preset != FS_PRESET_TIRESIAS)
        return 0;
    if (!given_at(c, "scheduler.queue"))
        s->queue = FS_QUEUE_LAS;
    else if (s->queue != FS_QUEUE_LAS)
        return fail(c, tree_get(c->root, "scheduler.queue"),
                    "scheduler.queue: preset 'tiresias' is Tiresias 2D-LAS: expected 'las' (or no "
                    "scheduler.queue), or another scheduler.preset");
    if (!given_at(c, "scheduler.tiresias.thresholds")) {
        char *t = fs_strdup(FS_TIRESIAS_THRESHOLDS);
        if (!t)
            return nomem(c);
        fs_free(s->tiresias.thresholds);
        s->tiresias.thresholds = t;
    }
    if (!given_at(c, "scheduler.checkpoint_interval"))
        s->checkpoint_interval = 1;   /* 1 us: a preempted job keeps all its work */
    if (!given_at(c, "scheduler.tiresias.promote_knob"))
        s->tiresias.promote_knob = FS_TIRESIAS_PROMOTE_KNOB;
    return 0;
}

/* cluster.autoscale.provisioner karpenter: a node group that gives no
 * `provision` gets Karpenter's Ready time (a group's own value wins). */
static int apply_karpenter(sctx_t *c)
{
    fs_autoscale_cfg_t *ac = &c->cfg->cluster.autoscale;
    if (ac->provisioner != FS_PROV_KARPENTER)
        return 0;
    for (size_t i = 0; i < ac->n_groups; i++) {
        char path[96];
        snprintf(path, sizeof path, "cluster.autoscale.node_groups.%zu.provision", i);
        if (!given_at(c, path))
            ac->groups[i].provision = FS_KARPENTER_PROVISION_US;
    }
    return 0;
}

static int load(const char *name, const char *path_for_dir, const char *text, size_t len,
                const char *const *overrides, size_t n, fs_config_t *cfg, fs_error_t *err)
{
    sctx_t c = {.file = name, .ovr = overrides, .n_ovr = n, .err = err, .cfg = cfg};
    unsigned char *seen = NULL;
    int rc;
    fs_config_init(cfg);
    if ((rc = fs_keys_defaults(&fs_keys_config, cfg, err)) != 0) {
        if (rc == FS_ENOMEM)
            nomem(&c);
        goto out;
    }
    if (path_for_dir) {
        int oom;
        c.dir = dir_of(path_for_dir, &oom);
        if (oom) {
            rc = nomem(&c);
            goto out;
        }
    }
    if (!(cfg->source_path = fs_strdup(name)) || !(cfg->source_text = fs_strndup(text, len)) ||
        !(seen = fs_calloc(fs_keys_config.n, 1))) {
        rc = nomem(&c);
        goto out;
    }
    if ((rc = parse_tree(&c, text, len, 0, &c.root)) != 0)
        goto out;
    if (is_null(c.root)) {
        char list[512];
        children(&fs_keys_config, "", list, sizeof list);
        rc = fail(&c, NULL, "the scenario is empty (expected keys such as: %s)", list);
        goto out;
    }
    if (c.root->kind != YN_MAP) {
        rc = fail(&c, c.root, "expected a block of keys at the top level, found %s", kind_text(c.root));
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = apply_override(&c, i)) != 0)
            goto out;
    if ((rc = conv_block(&c, &fs_keys_config, c.root, "", "", cfg, seen)) != 0 ||
        (rc = check_required(&c, &fs_keys_config, seen, c.root, "")) != 0 ||
        (rc = apply_preset(&c)) != 0 || (rc = apply_karpenter(&c)) != 0 || (rc = validate(&c)) != 0)
        goto out;
out:
    node_free(c.root);
    fs_free(c.dir);
    fs_free(seen);
    if (rc)
        fs_config_release(cfg);
    return rc;
}

int fs_scenario_load_string(const char *name, const char *text, const char *const *overrides,
                            size_t n, fs_config_t *cfg, fs_error_t *err)
{
    fs_error_clear(err);
    return load(name ? name : "<string>", NULL, text, strlen(text), overrides, n, cfg, err);
}

int fs_scenario_load_file(const char *path, const char *const *overrides, size_t n,
                          fs_config_t *cfg, fs_error_t *err)
{
    fs_error_clear(err);
    /* at most FS_IO_TEXT_MAX bytes: /dev/zero or a runaway pipe is refused,
     * not read for ever */
    char *buf = NULL;
    size_t len = 0;
    int rc = fs_io_read_text(path, "scenario", FS_IO_TEXT_MAX, &buf, &len, err);
    if (rc) {
        fs_config_init(cfg);
        fs_config_release(cfg);
        return rc;
    }
    if (memchr(buf, '\0', len)) {
        fs_free(buf);
        fs_config_init(cfg);
        fs_config_release(cfg);
        return fs_error_set(err, FS_EINVAL, "%s: not a text file (it holds NUL bytes)", path);
    }
    rc = load(path, path, buf, len, overrides, n, cfg, err);
    fs_free(buf);
    return rc;
}

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
        snprintf(bounds, sizeof bounds, "sum 1");
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
                char path[512];
                snprintf(path, sizeof path, "%s[].%s", k->path, k->sub->rows[j].path);
                print_row(f, &k->sub->rows[j], path, 1);
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

/* ---- the files a run reads ------------------------------------------------------------------ */

static void add_input(const char **in, size_t *n, size_t cap, const char *p)
{
    if (p && *p && *n < cap)
        in[(*n)++] = p;
}

void fs_scenario_inputs(const fs_config_t *cfg, const char **in, size_t *n, size_t cap)
{
    add_input(in, n, cap, cfg->source_path);
    if (cfg->workload.kind == FS_WORKLOAD_TRACE)
        add_input(in, n, cap, cfg->workload.trace.path);
    if (cfg->cluster.from.given)
        add_input(in, n, cap, cfg->cluster.from.path);
    add_input(in, n, cap, cfg->scheduler.kueue.manifests);
    add_input(in, n, cap, cfg->cost.carbon_series);
}
