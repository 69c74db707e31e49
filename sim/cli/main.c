/* fleetsim: the program.  Dispatches to a row of the command table. */
#include "fs_cli.h"

#include <string.h>
#include <hdf5.h>

int main(int argc, char **argv)
{
    /* The version and the help touch no HDF5: they return before its
     * first call, which initialises its thread-safety state
     * (docs/performance.md, "Start-up"). */
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
    /* HDF5 1.10 can crash in its own exit handler after a failed write
     * (disk full); fleetsim closes every file it opens itself. */
    if (c->fn != fs_cmd_version && c->fn != fs_cmd_help)
        H5dont_atexit();
    return c->fn(argc - 1, argv + 1);
}
