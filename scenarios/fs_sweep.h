/*
 * fs_sweep: the expansion of a scenario's `sweep:` section into runs.
 *
 * A sweep varies scenario keys (any key, by its dotted path) over lists of
 * values or numeric ranges, combined as a grid (cartesian product, the first
 * parameter varying slowest) or zipped (the i-th values together), and runs
 * every resulting point `replications` times.  Syntax: docs/sweeps.md.
 *
 * Owns: the plan (fs_sweep_plan_t): the scenario path and text, the base
 * overrides (--set), each parameter's key and values as override text, and
 * the positions of those values for messages.
 *
 * Invariants:
 *  - A point is the base scenario with "KEY=VALUE" overrides (the scenario
 *    language's override mechanism), so every key works and every value is
 *    checked exactly as if written in the file.  fs_sweep_plan_create checks
 *    every value and every point before anything runs; errors name the
 *    value's FILE:LINE:COL.
 *  - Runs are numbered k = point * replications + r (0 <= r < replications);
 *    run k of shard assignment I/N belongs to shard k mod N.
 *  - Common random numbers: replication r of EVERY point runs with
 *    replication index r (the key `replication`), so the random streams
 *    (keyed by seed, replication, purpose, entity) are the same across
 *    points: point A rep r and point B rep r see the same arrivals whenever
 *    the varied keys do not change the workload.
 *  - The plan depends only on the scenario text, its path and the base
 *    overrides; fs_sweep_plan_digest fingerprints it (resume and shards
 *    refuse a directory that holds another sweep).
 */
#ifndef FS_SWEEP_H
#define FS_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "../models/fs_config.h"
#include "../sim/fs_error.h"

typedef struct fs_sweep_param {
    char *key;              /* dotted path */
    size_t n_values;
    char **values;          /* override text of each value ("30/h", "strict") */
    char **where;           /* where each value was written (range: its 'from') */
    unsigned char *inherit; /* variants only (NULL otherwise): inherit[i] = 1 when point i does
                               not set the key: no override, the scenario's value stands, and
                               values[i] only describes it (the value, or "(scenario)") */
} fs_sweep_param_t;

typedef struct fs_sweep_plan {
    char *path;             /* the scenario file, as given */
    char *text;             /* its text (the base config's source_text) */
    char **sets;            /* base overrides (--set KEY=VALUE), applied first */
    size_t n_sets;
    int combine;            /* enum fs_sweep_combine */
    fs_sweep_param_t *params;
    size_t n_params;
    char *warmup;           /* warm-up override text, or NULL */
    uint64_t replications;
    size_t n_points;
    size_t n_runs;          /* n_points * replications */
    char *name;             /* the scenario's name (its `name` key) */
    char *label;            /* the scenario in messages: the path, or the text's name */
} fs_sweep_plan_t;

/* Loads the scenario (with the base overrides), expands its sweep section
 * and checks every value and every point.  A scenario without a sweep
 * section is an error.  Errors: FS_EINVAL ("FILE:LINE:COL: ..."),
 * FS_ENOMEM, FS_ELIMIT (more than 10^7 runs). */
int fs_sweep_plan_create(const char *path, const char *const *sets, size_t n_sets,
                         fs_sweep_plan_t **out, fs_error_t *err);

/* Same from a loaded config (its source_path and source_text); the config
 * is only read.  Used by the tests with in-memory scenarios: points are
 * loaded with fs_scenario_load_string when path is NULL. */
int fs_sweep_plan_from_text(const char *name, const char *text, const char *const *sets,
                            size_t n_sets, fs_sweep_plan_t **out, fs_error_t *err);

void fs_sweep_plan_destroy(fs_sweep_plan_t *p);

/* One named variant of the base scenario (`fleetsim versus -p NAME=...`):
 * n overrides keys[i]=values[i]. */
typedef struct fs_sweep_variant {
    const char *name;
    const char *const *keys;
    const char *const *values;
    size_t n;
} fs_sweep_variant_t;

/* Turns a plan without parameters into one point per variant, in order
 * (zipped parameters: one per distinct key).  A key that a variant does
 * not set is not overridden at its point: the scenario's value stands,
 * whatever its type (a scalar, a list, a map, a block such as
 * scheduler.plugin); the parameter's value text there only describes it
 * (param.inherit).  A variant that sets scheduler.queue and no
 * scheduler.plugin key means the built-in queue: when the scenario names a
 * plugin, that point also gets scheduler.plugin=null.  `replication`,
 * `seed` and `sweep` cannot be set (common random numbers).  Every point
 * is checked; errors name "-p NAME".  FS_EINVAL, FS_ENOMEM, FS_ELIMIT. */
int fs_sweep_plan_set_variants(fs_sweep_plan_t *p, const fs_sweep_variant_t *v, size_t n,
                               fs_error_t *err);

/* Index of parameter j's value at point p. */
size_t fs_sweep_value_index(const fs_sweep_plan_t *p, size_t point, size_t j);

/* Run k -> (point, replication), and back. */
void fs_sweep_run_split(const fs_sweep_plan_t *p, size_t k, size_t *point, uint64_t *rep);
size_t fs_sweep_run_index(const fs_sweep_plan_t *p, size_t point, uint64_t rep);

/* Shard of run k among n shards (k mod n). */
size_t fs_sweep_shard_of(size_t k, size_t n_shards);

/* The overrides of run k, in order: the base --set list, the point's
 * "KEY=VALUE" per parameter, "warmup=..." when sweep.warmup is given,
 * "replication=R" and "sweep=null" (a point is a single run).  *out is an
 * array of *n strings; free with fs_sweep_overrides_free. */
int fs_sweep_run_overrides(const fs_sweep_plan_t *p, size_t k, char ***out, size_t *n,
                           fs_error_t *err);
void fs_sweep_overrides_free(char **ovr, size_t n);

/* Loads the config of run k (the scenario with fs_sweep_run_overrides). */
int fs_sweep_load_run(const fs_sweep_plan_t *p, size_t k, fs_config_t *cfg, fs_error_t *err);

/* 64-bit FNV-1a fingerprint of the plan (path, text, overrides, points,
 * replications). */
uint64_t fs_sweep_plan_digest(const fs_sweep_plan_t *p);

#endif
