/*
 * fleetsim merge DIR: builds DIR/index.h5 once every shard of a sweep has
 * finished (fs_sweeprun.c); refuses, naming the missing runs, otherwise.
 */
#include "fs_cli.h"
#include "fs_sweeprun.h"

#include <string.h>

int fs_cmd_merge(int argc, char **argv)
{
    const char *dir = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (fs_cli_is_help(argv[i])) {
            fs_cli_print_usage(stdout, fs_cli_find("merge"));
            return 0;
        } else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fs_cli_usage_error("merge", "unknown option '%s'", argv[i]);
        } else if (!dir) {
            dir = argv[i];
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
