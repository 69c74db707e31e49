/*
 * fs_scenario: the scenario language.  YAML (libyaml) -> fs_config_t.
 *
 * Every key is declared once in the key table (scenarios/fs_keys.c): its
 * dotted path, type, unit, bounds, default and doc.  Unknown keys, duplicate
 * keys, bad units, NaN, out-of-range and inconsistent values are errors
 * reported as "FILE:LINE:COL: what was expected" (FS_EINVAL, exit 2).
 * Values with units: durations "90s" "15m" "2h" "30d" "1y" (also "500ms",
 * "250us"), rates "40/h" "3/min" "0.5/s" "10/d".
 *
 * Overrides "KEY=VALUE" (the CLI's --set) reach any key by its dotted path;
 * list elements by index ("cluster.pools.0.nodes=128"); the value is parsed
 * as a YAML scalar or flow collection ("workload.synthetic.gpus={1: 0.5, 8: 0.5}").
 * Errors in overrides name "--set KEY".  Overrides are applied in order
 * (the last wins) after the file is parsed and before any value is checked;
 * index = the list's length appends an item; a null value ("KEY=null")
 * removes the key, restoring its default.
 *
 * Relative file paths in a scenario (workload.trace.path, an empirical
 * distribution's path) are resolved against the scenario file's directory
 * and stored absolute by fs_scenario_load_file; fs_scenario_load_string
 * leaves them as written (relative to the working directory).
 */
#ifndef FS_SCENARIO_H
#define FS_SCENARIO_H

#include <stddef.h>

#include "../models/fs_config.h"
#include "fs_defaults.h"
#include "../sim/fs_error.h"

/* Loads a scenario file.  On success *cfg owns everything; on failure *cfg
 * is released (nothing to free).  *cfg need not be initialised (its old
 * content is not freed).  overrides: n strings "KEY=VALUE".  Errors:
 * FS_EINVAL (bad or missing input, message "FILE:LINE:COL: ..."), FS_ENOMEM. */
int fs_scenario_load_file(const char *path, const char *const *overrides, size_t n,
                          fs_config_t *cfg, fs_error_t *err);

/* Same, from text in memory; name is used in messages ("<builtin>"). */
int fs_scenario_load_string(const char *name, const char *text, const char *const *overrides,
                            size_t n, fs_config_t *cfg, fs_error_t *err);

/* The built-in default scenario (also shipped as scenarios/default.yaml),
 * and the name it goes by in messages and in a results file's
 * scenario_path (the CLI and libfleetsim give it the same, so that their
 * results files are the same bytes). */
const char *fs_scenario_default_text(void);
#define FS_SCENARIO_DEFAULT_NAME "<builtin default>"

/* Canonical YAML of a config: every key, in table order, including defaults.
 * Loading it gives back the same config.  Caller frees with fs_free. */
char *fs_scenario_dump(const fs_config_t *cfg);

/* Writes the key reference (Markdown table: path, type, unit, default,
 * bounds, doc) to f: docs/scenario.md is generated from it. */
#include <stdio.h>
void fs_scenario_print_keys(FILE *f);

/* Most input files one command checks its outputs against (scenario,
 * trace, machine list, manifests, slurm.conf, outages, carbon series, the
 * services' request traces and step-time profiles, plus the command's own);
 * past it, later ones are not checked. */
#define FS_SCENARIO_MAX_INPUTS 64

/* Appends the files a loaded configuration reads (its scenario file, trace,
 * machine list, Kueue manifests, carbon series) to in[*n] (at most cap
 * entries in all): what an output path must not name (sim/fs_out.h). */
void fs_scenario_inputs(const fs_config_t *cfg, const char **in, size_t *n, size_t cap);

#endif
