/*
 * fs_cliout: the checks every writing command makes on its output path
 * before it reads or writes anything big (sim/fs_out.h has the rules;
 * docs/robustness.md "Output files").
 */
#ifndef FS_CLIOUT_H
#define FS_CLIOUT_H

#include <stddef.h>

#include "../../models/fs_config.h"

/* Most input files one command names (scenario, trace, machine list,
 * manifests, plus the command's own). */
#define FS_CLI_MAX_INPUTS 16

/* Appends the files a loaded configuration reads (its scenario file, trace,
 * machine list, Kueue manifests, carbon series) to in[*n] (at most cap
 * entries in all). */
void fs_cli_config_inputs(const fs_config_t *cfg, const char **in, size_t *n, size_t cap);

/* Refuses an output file that is one of the inputs (same device and inode):
 * prints "fleetsim CMD: ..." and returns 2; 0 when it names none.
 * out NULL: nothing to check. */
int fs_cli_check_output(const char *cmd, const char *out, const char *const *in, size_t n);

/* The same for an output directory: its files names[] (e.g. "index.h5")
 * and its run files runs/pP-rR.h5. */
int fs_cli_check_output_dir(const char *cmd, const char *dir, const char *const *names,
                            size_t n_names, const char *const *in, size_t n);

#endif
