/* fleetsim: the program.  Dispatches to a row of the command table. */
#include "fs_cli.h"

#include <string.h>
#include <hdf5.h>

int main(int argc, char **argv)
{
    /* HDF5 1.10 can crash in its own exit handler after a failed write
     * (disk full); fleetsim closes every file it opens itself. */
    H5dont_atexit();
    if (argc < 2)
        return fs_cmd_help(1, argv);
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
        return fs_cmd_version(1, argv + 1);
    if (fs_cli_is_help(name))
        return fs_cmd_help(1, argv + 1);
    const fs_command_t *c = fs_cli_find(name);
    if (!c) {
        fprintf(stderr, "fleetsim: '%s' is not a command (see 'fleetsim help')\n", name);
        return 2;
    }
    return c->fn(argc - 1, argv + 1);
}
