/*
 * fs_ytree: YAML text -> a tree of nodes that keep their positions
 * (fs_scnint.h), through libyaml's event API; anchors and aliases expanded
 * (at most FS_YT_MAX_NODES nodes in all, FS_YT_MAX_DEPTH deep); duplicate
 * keys refused in O(n) per map.  Lookups by dotted path, and the messages
 * that point at a node.
 */
#include "fs_scnint.h"
#include "../sim/fs_alloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- the tree ------------------------------------------------------------ */

void fs_yt_free(fs_ynode_t *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        fs_yt_free(n->items[i].k);
        fs_yt_free(n->items[i].v);
    }
    fs_free(n->items);
    fs_free(n->s);
    fs_free(n);
}

fs_ynode_t *fs_yt_new(int kind, unsigned line, unsigned col, int origin)
{
    fs_ynode_t *n = fs_calloc(1, sizeof *n);
    if (n) {
        n->kind = kind;
        n->line = line;
        n->col = col;
        n->origin = origin;
    }
    return n;
}

fs_ynode_t *fs_yt_scalar(const char *s, size_t len, unsigned line, unsigned col, int origin)
{
    fs_ynode_t *n = fs_yt_new(FS_YT_SCALAR, line, col, origin);
    if (n && !(n->s = fs_strndup(s, len))) {
        fs_free(n);
        n = NULL;
    }
    if (n)
        n->plain = 1;
    return n;
}

int fs_yt_push(fs_ynode_t *n, fs_ynode_t *k, fs_ynode_t *v)
{
    if (fs_grow((void **)&n->items, &n->cap, n->n + 1, sizeof *n->items))
        return FS_ENOMEM;
    n->items[n->n].k = k;
    n->items[n->n].v = v;
    n->n++;
    return 0;
}

int fs_yt_is_null(const fs_ynode_t *n)
{
    if (!n)
        return 1;
    if (n->kind != FS_YT_SCALAR || !n->plain)
        return 0;
    return !*n->s || strcmp(n->s, "~") == 0 || strcmp(n->s, "null") == 0 ||
           strcmp(n->s, "Null") == 0 || strcmp(n->s, "NULL") == 0;
}

const char *fs_yt_kind_text(const fs_ynode_t *n)
{
    return n->kind == FS_YT_MAP ? "a block of keys" : n->kind == FS_YT_SEQ ? "a list" : "a value";
}

fs_ypair_t *fs_yt_map_find(const fs_ynode_t *m, const char *key)
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

static fs_ypair_t *keyidx_find(const keyidx_t *x, const fs_ynode_t *m, const char *key)
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
static int keyidx_add(keyidx_t *x, const fs_ynode_t *m)
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

/* Length of the KEY part of override i. */
size_t fs_yt_ovr_keylen(const fs_sctx_t *c, int i)
{
    const char *eq = strchr(c->ovr[i], '=');
    return eq ? (size_t)(eq - c->ovr[i]) : strlen(c->ovr[i]);
}

void fs_yt_where(const fs_sctx_t *c, const fs_ynode_t *n, char *buf, size_t size)
{
    if (n && n->origin > 0)
        snprintf(buf, size, "--set %.*s", (int)fs_yt_ovr_keylen(c, n->origin - 1), c->ovr[n->origin - 1]);
    else if (n)
        snprintf(buf, size, "%s:%u:%u", c->file, n->line, n->col);
    else
        snprintf(buf, size, "%s:1:1", c->file);
}

/* Sets an FS_EINVAL message "WHERE: msg" at node n (NULL: the file's start).
 * For a node from --set KEY, a message that starts with "KEY: " drops it. */
int fs_yt_fail(fs_sctx_t *c, const fs_ynode_t *n, const char *fmt, ...)
{
    char pos[512], msg[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fs_yt_where(c, n, pos, sizeof pos);
    const char *m = msg;
    if (n && n->origin > 0) {
        size_t kl = fs_yt_ovr_keylen(c, n->origin - 1);
        if (strncmp(msg, c->ovr[n->origin - 1], kl) == 0 && msg[kl] == ':' && msg[kl + 1] == ' ')
            m = msg + kl + 2;
    }
    return fs_error_set(c->err, FS_EINVAL, "%s: %s", pos, m);
}

int fs_yt_nomem(fs_sctx_t *c)
{
    return fs_error_set(c->err, FS_ENOMEM, "%s: out of memory", c->file);
}

/* ---- YAML -> tree (libyaml's event API) ------------------------------------ */

typedef struct anchor {
    char *name;
    const fs_ynode_t *node;
} anchor_t;

typedef struct builder {
    fs_sctx_t *c;
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
        return fs_yt_nomem(b->c);
    fs_ynode_t at = {.origin = b->origin, .line = (unsigned)p->problem_mark.line + 1,
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
        return fs_yt_fail(b->c, &at, "%s: %s (%s at line %u, column %u)", what, problem, p->context,
                          (unsigned)p->context_mark.line + 1, (unsigned)p->context_mark.column + 1);
    return fs_yt_fail(b->c, &at, "%s: %s", what, problem);
}

static int next_event(builder_t *b, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&b->p, ev))
        return parse_error(b);
    return 0;
}

static int count_node(builder_t *b, const fs_ynode_t *at)
{
    if (++b->c->nodes > FS_YT_MAX_NODES)
        return fs_yt_fail(b->c, at, "the document is too large (more than %d nodes once aliases are "
                                    "expanded)", FS_YT_MAX_NODES);
    return 0;
}

/* Deep copy of n (an alias), with the alias's position. */
static int node_copy(builder_t *b, const fs_ynode_t *n, const fs_ynode_t *pos, fs_ynode_t **out)
{
    *out = NULL;
    int rc = count_node(b, pos);
    if (rc)
        return rc;
    fs_ynode_t *d = fs_yt_new(n->kind, pos->line, pos->col, pos->origin);
    if (!d)
        return fs_yt_nomem(b->c);
    d->plain = n->plain;
    if (n->s && !(d->s = fs_strdup(n->s))) {
        fs_yt_free(d);
        return fs_yt_nomem(b->c);
    }
    for (size_t i = 0; i < n->n; i++) {
        fs_ynode_t *k = NULL, *v = NULL;
        if ((n->items[i].k && (rc = node_copy(b, n->items[i].k, pos, &k)) != 0) ||
            (rc = node_copy(b, n->items[i].v, pos, &v)) != 0 || (rc = fs_yt_push(d, k, v)) != 0) {
            fs_yt_free(k);
            fs_yt_free(v);
            fs_yt_free(d);
            return rc == FS_ENOMEM && b->c->err && b->c->err->code != FS_ENOMEM ? fs_yt_nomem(b->c) : rc;
        }
    }
    *out = d;
    return 0;
}

static int add_anchor(builder_t *b, const char *name, const fs_ynode_t *n)
{
    char *d = fs_strdup(name);
    if (!d || fs_grow((void **)&b->anchors, &b->cap_anchors, b->n_anchors + 1, sizeof *b->anchors)) {
        fs_free(d);
        return fs_yt_nomem(b->c);
    }
    b->anchors[b->n_anchors].name = d;
    b->anchors[b->n_anchors].node = n;
    b->n_anchors++;
    return 0;
}

/* Builds the node that starts with *ev (consumed). */
static int build(builder_t *b, yaml_event_t *ev, int depth, fs_ynode_t **out)
{
    fs_sctx_t *c = b->c;
    fs_ynode_t *n = NULL;
    char *anchor = NULL;
    keyidx_t keys = {NULL, 0};   /* a mapping's keys (duplicate check) */
    int rc = 0;
    fs_ynode_t pos = {.origin = b->origin, .line = (unsigned)ev->start_mark.line + 1,
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
        rc = fs_yt_nomem(c);
        goto out;
    }
    if ((rc = count_node(b, &pos)) != 0)
        goto out;

    switch (ev->type) {
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        const fs_ynode_t *target = NULL;
        for (size_t i = b->n_anchors; i-- > 0 && !target;)
            if (strcmp(b->anchors[i].name, name) == 0)
                target = b->anchors[i].node;
        if (!target) {
            rc = fs_yt_fail(c, &pos, "unknown alias '*%s'", name);
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
            rc = fs_yt_fail(c, &pos, "a value may not contain a NUL character");
            goto out;
        }
        if (!(n = fs_yt_scalar(v, len, pos.line, pos.col, b->origin))) {
            rc = fs_yt_nomem(c);
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
        if (depth >= FS_YT_MAX_DEPTH) {
            rc = fs_yt_fail(c, &pos, "blocks nested more than %d deep", FS_YT_MAX_DEPTH);
            goto out;
        }
        if (!(n = fs_yt_new(is_map ? FS_YT_MAP : FS_YT_SEQ, pos.line, pos.col, b->origin))) {
            rc = fs_yt_nomem(c);
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
            fs_ynode_t *k = NULL, *v = NULL;
            if (is_map) {
                if ((rc = build(b, &e, depth + 1, &k)) != 0)
                    goto out;
                if (k->kind != FS_YT_SCALAR) {
                    rc = fs_yt_fail(c, k, "a key must be a plain name, not %s", fs_yt_kind_text(k));
                    fs_yt_free(k);
                    goto out;
                }
                fs_ypair_t *dup = keyidx_find(&keys, n, k->s);
                if (dup) {
                    rc = fs_yt_fail(c, k, "duplicate key '%s' (first given at line %u)", k->s, dup->k->line);
                    fs_yt_free(k);
                    goto out;
                }
                if ((rc = next_event(b, &e)) != 0) {
                    fs_yt_free(k);
                    goto out;
                }
            }
            if ((rc = build(b, &e, depth + 1, &v)) != 0 || (rc = fs_yt_push(n, k, v)) != 0) {
                fs_yt_free(k);
                fs_yt_free(v);
                if (rc == FS_ENOMEM && c->err && c->err->code != FS_ENOMEM)
                    rc = fs_yt_nomem(c);
                goto out;
            }
            if (is_map && keyidx_add(&keys, n) != 0) {
                rc = fs_yt_nomem(c);
                goto out;
            }
        }
        break;
    }
    default:
        rc = fs_yt_fail(c, &pos, "unexpected YAML event %d", (int)ev->type);
        goto out;
    }
    if (!rc && anchor)
        rc = add_anchor(b, anchor, n);
out:
    yaml_event_delete(ev);
    fs_free(anchor);
    fs_free(keys.slot);
    if (rc) {
        fs_yt_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* Parses text into a tree (*root = NULL for an empty stream). */
int fs_yt_parse(fs_sctx_t *c, const char *text, size_t len, int origin, fs_ynode_t **root)
{
    builder_t b = {.c = c, .text = text, .len = len, .origin = origin};
    yaml_event_t ev;
    int rc = 0;
    *root = NULL;
    if (!yaml_parser_initialize(&b.p))
        return fs_yt_nomem(c);
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
        fs_ynode_t at = {.origin = origin, .line = (unsigned)ev.start_mark.line + 1,
                      .col = (unsigned)ev.start_mark.column + 1};
        rc = fs_yt_fail(c, &at, "only one YAML document is allowed");
    }
    yaml_event_delete(&ev);
out:
    for (size_t i = 0; i < b.n_anchors; i++)
        fs_free(b.anchors[i].name);
    fs_free(b.anchors);
    yaml_parser_delete(&b.p);
    if (rc) {
        fs_yt_free(*root);
        *root = NULL;
    }
    return rc;
}

/* ---- tree lookups (positions for messages) --------------------------------- */

int fs_yt_index(const char *s, size_t *out)
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
static const fs_ynode_t *tree_walk(const fs_ynode_t *root, const char *path, const fs_ynode_t **key,
                                   int *complete)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    const fs_ynode_t *n = root;
    *key = NULL;
    *complete = 1;
    for (char *seg = buf, *next; n && seg && *seg; seg = next) {
        next = strchr(seg, '.');
        if (next)
            *next++ = '\0';
        size_t idx;
        const fs_ynode_t *child = NULL, *k = NULL;
        if (n->kind == FS_YT_MAP) {
            fs_ypair_t *p = fs_yt_map_find(n, seg);
            if (p)
                child = p->v, k = p->k;
        } else if (n->kind == FS_YT_SEQ && fs_yt_index(seg, &idx) == 0 && idx < n->n) {
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
const fs_ynode_t *fs_yt_get(const fs_ynode_t *root, const char *path)
{
    const fs_ynode_t *k;
    int complete;
    const fs_ynode_t *n = tree_walk(root, path, &k, &complete);
    return complete ? n : NULL;
}

/* Where to report something missing at path: the key of its deepest
 * existing ancestor block. */
const fs_ynode_t *fs_yt_nearest(const fs_ynode_t *root, const char *path)
{
    const fs_ynode_t *k;
    int complete;
    tree_walk(root, path, &k, &complete);
    return k ? k : root;
}

