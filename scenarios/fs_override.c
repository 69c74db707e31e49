/*
 * fs_override: "--set KEY=VALUE" merged into the scenario's tree before any
 * value is read (fs_scenario.h: paths, list indices, null removes a key).
 */
#include "fs_scnint.h"
#include "../sim/fs_alloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- overrides ------------------------------------------------------------ */

static int ovr_fail(fs_sctx_t *c, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int ovr_fail(fs_sctx_t *c, size_t i, const char *fmt, ...)
{
    char msg[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fs_error_set(c->err, FS_EINVAL, "--set %.*s: %s", (int)fs_yt_ovr_keylen(c, (int)i), c->ovr[i], msg);
}

/* Replaces *slot by an empty map from override i. */
static int slot_to_map(fs_sctx_t *c, fs_ynode_t **slot, int origin)
{
    fs_ynode_t *m = fs_yt_new(FS_YT_MAP, 1, 1, origin);
    if (!m)
        return fs_yt_nomem(c);
    fs_yt_free(*slot);
    *slot = m;
    return 0;
}

static int map_add(fs_sctx_t *c, fs_ynode_t *m, const char *key, fs_ynode_t *v, int origin)
{
    fs_ynode_t *k = fs_yt_scalar(key, strlen(key), 1, 1, origin);
    if (!k || fs_yt_push(m, k, v)) {
        fs_yt_free(k);
        return fs_yt_nomem(c);
    }
    return 0;
}

/* Merges "KEY=VALUE" into the tree: KEY is a dotted path (list items by
 * index; index = length appends), VALUE a YAML document.  A null value
 * (null, ~) removes the key, which restores its default. */
int fs_ovr_apply(fs_sctx_t *c, size_t i)
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

    fs_ynode_t *v = NULL;
    int rc = fs_yt_parse(c, val, strlen(val), origin, &v);
    if (rc)
        return rc;
    if (!v)
        return ovr_fail(c, i, "missing value (write KEY=VALUE; null restores the default)");
    int remove = fs_yt_is_null(v);
    if (remove) {
        fs_yt_free(v);
        v = NULL;
    }

    fs_ynode_t **slot = &c->root;
    char *seg = key, *next;
    for (;; seg = next) {
        next = strchr(seg, '.');
        if (next)
            *next++ = '\0';
        int last = next == NULL;
        fs_ynode_t *cur = *slot;
        size_t idx;
        if (cur->kind == FS_YT_SEQ && fs_yt_index(seg, &idx) == 0) {
            if (idx > cur->n || (idx == cur->n && !last)) {
                fs_yt_free(v);
                return ovr_fail(c, i, "item %zu does not exist (the list has %zu)", idx, cur->n);
            }
            if (!last) {
                slot = &cur->items[idx].v;
                continue;
            }
            if (idx == cur->n) {
                if (v && fs_yt_push(cur, NULL, v)) {
                    fs_yt_free(v);
                    return fs_yt_nomem(c);
                }
            } else if (remove) {
                fs_yt_free(cur->items[idx].v);
                memmove(&cur->items[idx], &cur->items[idx + 1], (cur->n - idx - 1) * sizeof *cur->items);
                cur->n--;
            } else {
                fs_yt_free(cur->items[idx].v);
                cur->items[idx].v = v;
            }
            return 0;
        }
        if (cur->kind != FS_YT_MAP && (rc = slot_to_map(c, slot, origin)) != 0) {
            fs_yt_free(v);
            return rc;
        }
        cur = *slot;
        fs_ypair_t *p = fs_yt_map_find(cur, seg);
        if (!last) {
            if (!p) {
                fs_ynode_t *m = fs_yt_new(FS_YT_MAP, 1, 1, origin);
                if (!m || (rc = map_add(c, cur, seg, m, origin)) != 0) {
                    fs_yt_free(m);
                    fs_yt_free(v);
                    return m ? rc : fs_yt_nomem(c);
                }
                p = &cur->items[cur->n - 1];
            }
            slot = &p->v;
            continue;
        }
        if (p && remove) {
            size_t j = (size_t)(p - cur->items);
            fs_yt_free(p->k);
            fs_yt_free(p->v);
            memmove(&cur->items[j], &cur->items[j + 1], (cur->n - j - 1) * sizeof *cur->items);
            cur->n--;
        } else if (p) {
            fs_yt_free(p->v);
            p->v = v;
        } else if (v && (rc = map_add(c, cur, seg, v, origin)) != 0) {
            fs_yt_free(v);
            return rc;
        }
        return 0;
    }
}
