/*
 * fs_keys: the key table of the scenario language (internal to scenarios/
 * and models/fs_config.c).
 *
 * Every key of a scenario file is ONE row of a table: its dotted path
 * (relative to the table), its type, unit, bounds, default (as scenario
 * text), doc string and the offset of its field in the struct the table
 * describes.  Three tables:
 *   fs_keys_config  the whole file, offsets into fs_config_t;
 *   fs_keys_pool    one element of cluster.pools, offsets into fs_pool_cfg_t;
 *   fs_keys_dist    a distribution block, offsets into fs_dist_t (rows
 *                   flagged FS_KF_AUX: into fs_dist_cfg_t);
 *   fs_keys_sweep_param  one item of sweep.params, offsets into
 *                   fs_sweep_param_cfg_t.
 * Blocks ("cluster", "workload.synthetic.arrivals") are implicit in the
 * dotted paths; rows of one block are contiguous (the dump relies on it and
 * a test checks it).  Adding a key is one row here plus its struct field:
 * the parser, --set, defaults, release, the dump and docs/scenario.md all
 * follow from the table.
 *
 * The row functions below parse, check, default, format and free single
 * fields; the tree walk, overrides and cross-field rules are in
 * fs_scenario.c.
 */
#ifndef FS_KEYS_H
#define FS_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"

enum fs_key_type {
    FS_KT_BOOL,     /* int 0/1: true|false (also yes|no, on|off) */
    FS_KT_UINT,     /* uint32_t or uint64_t (size says which) */
    FS_KT_DOUBLE,   /* double, finite; NaN until given when there is no default */
    FS_KT_PROB,     /* double in [0, 1] */
    FS_KT_STRING,   /* char *, owned, non-empty */
    FS_KT_PATH,     /* char *, owned: relative paths resolved against the scenario's directory */
    FS_KT_ENUM,     /* int: index into names[] */
    FS_KT_NAME,     /* char *, owned: one of name_at(i), matched ignoring case, stored as listed */
    FS_KT_DURATION, /* fs_time_t microseconds */
    FS_KT_SECONDS,  /* double seconds, written as a duration ("45m"); NaN until given */
    FS_KT_RATE,     /* double per second, written "40/h" */
    FS_KT_DIST,     /* block: fs_dist_t at off, fs_dist_cfg_t at off2; sub = fs_keys_dist */
    FS_KT_MIX,      /* {int: prob}: size_t at off, uint32_t * at off2, double * at off3 */
    FS_KT_SHARES,   /* {name: share}: size_t at off, char ** at off2, double * at off3 */
    FS_KT_NAMES,    /* {name: name}: size_t at off, char ** keys at off2, char ** values at off3 */
    FS_KT_LIST,     /* list of blocks: element array at off, size_t count at off2; sub */
    FS_KT_CHOICE,   /* optional block; exactly one of the choices sharing the int
                       selector at off is given, which stores `choice` there */
    FS_KT_RAW       /* a scalar or a list of scalars kept as written, with
                       positions: fs_raw_t at off (interpreted later: sweeps) */
};

enum fs_key_flags {
    FS_KF_REQUIRED = 1u << 0, /* must be given (when its enclosing choice block is) */
    FS_KF_MIN = 1u << 1,      /* min is a bound (inclusive) */
    FS_KF_MIN_OPEN = 1u << 2, /* min is a bound, exclusive */
    FS_KF_MAX = 1u << 3,      /* max is a bound (inclusive) */
    FS_KF_AUX = 1u << 4,      /* fs_keys_dist only: the field is in fs_dist_cfg_t */
    FS_KF_OPTIONAL = 1u << 5  /* FS_KT_CHOICE: the group may be absent altogether */
};

struct fs_keytab;

typedef struct fs_key {
    const char *path;       /* dotted, relative to the table */
    int type;               /* enum fs_key_type */
    unsigned flags;         /* enum fs_key_flags */
    size_t off, off2, off3; /* field offsets (see the types) */
    size_t size;            /* sizeof the field at off (FS_KT_UINT) */
    double min, max;        /* bounds (flags say which apply); durations in us;
                               LIST: element count; MIX: GPU count */
    const char *def;        /* default as scenario text; NULL = none */
    const char *const *names;          /* FS_KT_ENUM: NULL-terminated; "" = unused value */
    const char *(*name_at)(size_t i);  /* FS_KT_NAME: the i-th allowed name, NULL past the end */
    const struct fs_keytab *sub;       /* FS_KT_LIST: element table; FS_KT_DIST: fs_keys_dist */
    int choice;             /* FS_KT_CHOICE: the selector's value */
    const char *unit;       /* for docs: "", "s", "1/s" */
    const char *doc;
} fs_key_t;

typedef struct fs_keytab {
    const char *name;       /* for messages and docs */
    const fs_key_t *rows;
    size_t n;
    size_t size;            /* sizeof the struct the offsets index */
} fs_keytab_t;

extern const fs_keytab_t fs_keys_config;
extern const fs_keytab_t fs_keys_pool;
extern const fs_keytab_t fs_keys_dist;
extern const fs_keytab_t fs_keys_count_dist;   /* the same rows, plain numbers (tokens) */
extern const fs_keytab_t fs_keys_sweep_param; /* one item of sweep.params */

/* Bit mask of the fs_keys_dist rows that a distribution kind takes (the
 * `dist` row itself included); 0 for an unknown kind. */
unsigned fs_keys_dist_params(int kind);

/* Sets every row's default (rows without one are left as they are; LIST,
 * MIX, SHARES, DIST and CHOICE rows have none).  Returns 0, FS_ENOMEM, or
 * FS_EINTERNAL (naming the row) if a default does not parse: a bug in the
 * table. */
int fs_keys_defaults(const fs_keytab_t *t, void *base, fs_error_t *err);

/* Frees what the table's fields own and sets them to NULL / 0. */
void fs_keys_release(const fs_keytab_t *t, void *base);

/* Parses the scalar text of a scalar row (not LIST, MIX, SHARES, DIST,
 * CHOICE), checks its bounds and stores it at base + k->off (an owned
 * string replaces the old one).  FS_KT_PATH stores the text as given.
 * Returns 0, FS_EINVAL with a message saying what was expected (no
 * position, no key name), or FS_ENOMEM. */
int fs_keys_parse(const fs_key_t *k, const char *text, void *base, fs_error_t *err);

/* Does the row hold a single scalar? */
int fs_keys_is_scalar(const fs_key_t *k);

/* "a duration such as 90s, 15m, 2h or 30d" etc. (plus the bounds), for
 * "expected ..." messages. */
const char *fs_keys_expect(const fs_key_t *k, char *buf, size_t n);
/* The bounds as text ("from 1 to 1024", "> 0s"), "" if none. */
const char *fs_keys_bounds(const fs_key_t *k, char *buf, size_t n);
/* Short type name for docs ("duration", "enum", ...). */
const char *fs_keys_type_name(const fs_key_t *k);
/* The i-th name of an ENUM or NAME row (NULL past the end; "" = unused). */
const char *fs_keys_name(const fs_key_t *k, size_t i);

/* Formats a scalar field that is not a string (BOOL, UINT, DOUBLE, PROB,
 * ENUM, DURATION, SECONDS, RATE) so that fs_keys_parse reads back the same
 * value.  buf needs 64 bytes. */
char *fs_keys_format(const fs_key_t *k, const void *base, char *buf, size_t n);

#endif
