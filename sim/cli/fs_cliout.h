/*
 * fs_cliout: the checks every writing command makes on its output path
 * before it reads or writes anything big (sim/fs_out.h has the rules;
 * docs/robustness.md "Output files").
 */
#ifndef FS_CLIOUT_H
#define FS_CLIOUT_H

#include <stddef.h>

#include "../../scenarios/fs_scenario.h"    /* fs_scenario_inputs: what a run reads */

/* Refuses an output file that is one of the inputs (same device and inode):
 * prints "fleetsim CMD: ..." and returns 2; 0 when it names none.
 * out NULL: nothing to check. */
int fs_cli_check_output(const char *cmd, const char *out, const char *const *in, size_t n);

#endif
