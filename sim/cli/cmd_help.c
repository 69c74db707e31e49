#include "fs_cli.h"

#include <string.h>

int fs_cmd_help(int argc, char **argv)
{
    fs_cli_getopt_t g;
    const char *topic = NULL;
    fs_cli_getopt_init(&g, "help", argc, argv, fs_cli_find("help")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        if (id == FS_CLI_BAD) {
            return g.status;
        } else if (id == FS_OPT_MAN) {
            fs_cli_write_man(stdout);
            return 0;
        } else if (id == FS_OPT_COMPLETION) {
            if (!g.arg || strcmp(g.arg, "bash") != 0)
                return fs_cli_usage_error("help", "--completion needs a shell: bash");
            fs_cli_write_bash_completion(stdout);
            return 0;
        } else if (id == FS_CLI_OPERAND && !topic) {
            topic = g.arg;
        } else if (id == FS_CLI_OPERAND) {
            return fs_cli_usage_error("help", "one command at a time");
        }
    }
    if (topic) {
        const fs_command_t *c = fs_cli_find(topic);
        if (!c)
            return fs_cli_usage_error("help", "'%s' is not a command", topic);
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
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "version", argc, argv, fs_cli_find("version")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("version"));
            return 0;
        }
        if (id == FS_CLI_BAD)
            return g.status;
        return fs_cli_usage_error("version", "takes no arguments");
    }
    printf("fleetsim %s\n", FLEETSIM_VERSION);
    return 0;
}
