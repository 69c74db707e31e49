/*
 * fs_keytab: the types of a key table of the scenario language (a row per key: its path,
 * type, bounds, default, docs and field offset; scenarios/fs_keys.h has the tables and the row
 * functions).  Its own header so that the element tables defined beside their blocks
 * (fs_subkeys.h) need not include fs_keys.h, whose table refers to them.
 */
#ifndef FS_KEYTAB_H
#define FS_KEYTAB_H

#include <stddef.h>

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
    FS_KF_OPTIONAL = 1u << 5, /* FS_KT_CHOICE: the group may be absent altogether */
    FS_KF_FACTORS = 1u << 6   /* FS_KT_SHARES: the values are factors (finite, > 0), no sum */
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

#endif
