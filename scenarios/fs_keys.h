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
#include "fs_keytab.h"


extern const fs_keytab_t fs_keys_config;
extern const fs_keytab_t fs_keys_pool;
extern const fs_keytab_t fs_keys_dist;

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
