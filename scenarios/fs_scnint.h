/*
 * fs_scnint: the scenario loader's internal header (scenarios/ only), as
 * SQLite's sqliteInt.h.  The loader is one pipeline in several files, each
 * its own prefix:
 *
 *   fs_ytree.c     fs_yt_    YAML text -> a tree of nodes that keep their
 *                            positions; lookups by dotted path; messages
 *                            "FILE:LINE:COL: ..." (or "--set KEY: ...")
 *   fs_override.c  fs_ovr_   --set KEY=VALUE merged into the tree
 *   fs_convert.c   fs_conv_  the tree walked against the key table
 *                            (fs_keys.c) into an fs_config_t
 *   fs_empirical.c fs_emp_   an empirical distribution's file of values
 *   fs_rules.c     fs_rules_ cross-key rules, blamed on the offending key
 *   fs_scenario.c            loading (the pipeline), presets, inputs
 *   fs_dump.c                a config back to YAML, the key reference
 *
 * Why a tree of our own rather than libyaml's document: overrides are
 * merged into it before any value is read, so that a value from --set and
 * one from the file go through exactly the same checks, and every node
 * remembers where it came from for messages.  The tree is allocated
 * through fs_alloc, so fault injection reaches it.
 */
#ifndef FS_SCNINT_H
#define FS_SCNINT_H

#include <stddef.h>

#include "fs_keys.h"
#include "../models/fs_config.h"
#include "../sim/fs_dist.h"
#include "../sim/fs_error.h"

#define FS_YT_MAX_DEPTH 64
#define FS_YT_MAX_NODES 1000000   /* after alias expansion */

/* The field at byte offset off of a struct. */
#define FS_FIELD(base, off, T) ((T *)(void *)((char *)(base) + (off)))

/* ---- the tree (fs_ytree.c) ------------------------------------------------ */

enum { FS_YT_SCALAR, FS_YT_MAP, FS_YT_SEQ };

typedef struct fs_ynode fs_ynode_t;
typedef struct fs_ypair {
    fs_ynode_t *k;          /* MAP: key (a scalar); SEQ: NULL */
    fs_ynode_t *v;
} fs_ypair_t;

struct fs_ynode {
    int kind;
    int plain;              /* scalar written without quotes or tag */
    char *s;                /* SCALAR: the text */
    fs_ypair_t *items;      /* MAP, SEQ */
    size_t n, cap;
    unsigned line, col;     /* 1-based */
    int origin;             /* 0: the file; i + 1: override i */
};

/* The loader's context: where messages point, what is being built. */
typedef struct fs_sctx {
    const char *file;           /* name in messages */
    char *dir;                  /* directory of relative paths (owned); NULL: as given */
    const char *const *ovr;     /* overrides "KEY=VALUE" */
    size_t n_ovr;
    fs_error_t *err;
    fs_config_t *cfg;
    fs_ynode_t *root;
    size_t nodes;               /* nodes built (alias bomb guard) */
} fs_sctx_t;

void fs_yt_free(fs_ynode_t *n);
fs_ynode_t *fs_yt_new(int kind, unsigned line, unsigned col, int origin);
fs_ynode_t *fs_yt_scalar(const char *s, size_t len, unsigned line, unsigned col, int origin);
/* Appends (k, v) to a MAP or SEQ: 0 or FS_ENOMEM. */
int fs_yt_push(fs_ynode_t *n, fs_ynode_t *k, fs_ynode_t *v);
/* NULL, or a plain empty, ~ or null scalar. */
int fs_yt_is_null(const fs_ynode_t *n);
/* "a block of keys", "a list", "a value". */
const char *fs_yt_kind_text(const fs_ynode_t *n);
fs_ypair_t *fs_yt_map_find(const fs_ynode_t *m, const char *key);
/* Parses text into a tree (*root = NULL for an empty stream); origin 0:
 * the file, i + 1: override i.  Errors are set in c->err. */
int fs_yt_parse(fs_sctx_t *c, const char *text, size_t len, int origin, fs_ynode_t **root);
/* A list index ("12"): 0, or -1 when s is not one. */
int fs_yt_index(const char *s, size_t *out);
/* The value node at the dotted path, or NULL. */
const fs_ynode_t *fs_yt_get(const fs_ynode_t *root, const char *path);
/* Where to report something missing at path: the key of its deepest
 * existing ancestor block. */
const fs_ynode_t *fs_yt_nearest(const fs_ynode_t *root, const char *path);

/* Length of the KEY part of override i. */
size_t fs_yt_ovr_keylen(const fs_sctx_t *c, int i);
/* "FILE:LINE:COL" or "--set KEY" of node n (NULL: the file's start). */
void fs_yt_where(const fs_sctx_t *c, const fs_ynode_t *n, char *buf, size_t size);
/* Sets an FS_EINVAL message "WHERE: msg" at node n (NULL: the file's start)
 * and returns FS_EINVAL.  For a node from --set KEY, a message that starts
 * with "KEY: " drops it. */
int fs_yt_fail(fs_sctx_t *c, const fs_ynode_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets "FILE: out of memory", returns FS_ENOMEM. */
int fs_yt_nomem(fs_sctx_t *c);

/* ---- overrides (fs_override.c) --------------------------------------------- */

/* Merges override i ("KEY=VALUE") into c->root. */
int fs_ovr_apply(fs_sctx_t *c, size_t i);

/* ---- tree -> config (fs_convert.c) ----------------------------------------- */

const fs_key_t *fs_conv_find_row(const fs_keytab_t *t, const char *path, size_t *idx);
/* "a, b, c": the keys allowed directly in block `prefix` ("" = top). */
void fs_conv_children(const fs_keytab_t *t, const char *prefix, char *buf, size_t size);
/* Walks block `map` (path `prefix` within table t; `disp` is the path of
 * the table's struct for messages) into base; seen[row] marks rows given. */
int fs_conv_block(fs_sctx_t *c, const fs_keytab_t *t, const fs_ynode_t *map, const char *prefix,
                  const char *disp, void *base, unsigned char *seen);
/* Required keys (in an active choice block) and choice groups, for table t
 * whose struct was read from `top`. */
int fs_conv_required(fs_sctx_t *c, const fs_keytab_t *t, const unsigned char *seen,
                     const fs_ynode_t *top, const char *disp);

/* ---- empirical samples (fs_empirical.c) ------------------------------------- */

/* Reads an empirical sample into d->values (see fs_empirical.c for the
 * format and the limits); errors at node `at`, key dpath. */
int fs_emp_load(fs_sctx_t *c, const char *path, const char *column, fs_dist_t *d,
                const fs_ynode_t *at, const char *dpath);

/* ---- cross-key rules (fs_rules.c) ------------------------------------------- */

/* The rules between keys (pools, node groups, cost, workload, policy...)
 * on the converted c->cfg, each error at the offending key's node. */
int fs_rules_check(fs_sctx_t *c);

#endif
