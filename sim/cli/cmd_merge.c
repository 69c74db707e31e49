/*
 * fleetsim merge DIR: builds DIR/index.h5 once every shard of a sweep has
 * finished (fs_sweeprun.c); refuses, naming the missing runs, otherwise.
 */
#include "fs_cli.h"
#include "../api/fs_sweeprun.h"

#include <string.h>

int fs_cmd_merge(int argc, char **argv)
{
    const char *dir = NULL;
    int quiet = 0;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "merge", argc, argv, fs_cli_find("merge")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("merge"));
            return 0;
        } else if (id == 'q') {
            quiet = 1;
        } else if (id == FS_CLI_BAD) {
            return g.status;
        } else if (!dir) {
            dir = g.arg;
        } else {
            return fs_cli_usage_error("merge", "only one directory may be given");
        }
    }
    if (!dir)
        return fs_cli_usage_error("merge", "the sweep directory is needed");
    fs_error_t err;
    int rc = fs_sweep_merge(dir, &err);
    if (rc) {
        fprintf(stderr, "fleetsim merge: %s\n", err.msg);
        return rc == FS_EINVAL ? 1 : fs_error_exit_status(rc);
    }
    if (!quiet)
        printf("index        %s/index.h5\n", dir);
    return 0;
}
