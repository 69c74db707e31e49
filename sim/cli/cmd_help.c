#include "fs_cli.h"

#include <string.h>

int fs_cmd_help(int argc, char **argv)
{
    if (argc >= 2 && !fs_cli_is_help(argv[1])) {
        const fs_command_t *c = fs_cli_find(argv[1]);
        if (!c)
            return fs_cli_usage_error("help", "'%s' is not a command", argv[1]);
        fs_cli_print_usage(stdout, c);
        return 0;
    }
    size_t n;
    const fs_command_t *c = fs_cli_commands(&n);
    printf("fleetsim %s: discrete-event simulator and capacity planner for GPU fleets\n\n"
           "usage: fleetsim COMMAND [ARGS]   (fleetsim COMMAND --help for details)\n\n",
           FLEETSIM_VERSION);
    for (size_t i = 0; i < n; i++)
        printf("  %-10s %s\n", c[i].name, c[i].summary);
    printf("\nExit status: 0 success, 1 run-time failure, 2 bad usage or invalid input.\n");
    return 0;
}

int fs_cmd_version(int argc, char **argv)
{
    if (argc >= 2 && fs_cli_is_help(argv[1])) {
        fs_cli_print_usage(stdout, fs_cli_find("version"));
        return 0;
    }
    printf("fleetsim %s\n", FLEETSIM_VERSION);
    return 0;
}
