/*
 * fs_cliout: output-path checks of the writing commands (fs_cliout.h).
 */
#include "fs_cliout.h"
#include "../fs_out.h"

#include <stdio.h>

int fs_cli_check_output(const char *cmd, const char *out, const char *const *in, size_t n)
{
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_out_check_inputs(cmd, out, in, n, &err);
    if (rc)
        fprintf(stderr, "fleetsim %s: %s\n", cmd, err.msg);
    return rc ? fs_error_exit_status(rc) : 0;
}

