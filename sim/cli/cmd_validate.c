#include "fs_cli.h"
#include "../../scenarios/fs_scenario.h"
#include "../fs_alloc.h"

#include <stdlib.h>
#include <string.h>

int fs_cmd_validate(int argc, char **argv)
{
    const char *scenario = NULL;
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    size_t n_sets = 0;
    int dump = 0;
    if (!sets)
        return 1;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "validate", argc, argv, fs_cli_find("validate")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("validate"));
            free(sets);
            return 0;
        } else if (id == FS_OPT_KEYS) {
            fs_scenario_print_keys(stdout);
            free(sets);
            return 0;
        } else if (id == FS_OPT_DUMP) {
            dump = 1;
        } else if (id == FS_OPT_SET) {
            if (!v || !strchr(v, '=')) {
                free(sets);
                return fs_cli_usage_error("validate", "--set needs KEY=VALUE");
            }
            sets[n_sets++] = v;
        } else if (id == FS_CLI_BAD) {
            free(sets);
            return g.status;
        } else if (!scenario) {
            scenario = a;
        } else {
            free(sets);
            return fs_cli_usage_error("validate", "only one scenario file may be given");
        }
    }
    if (!scenario) {
        free(sets);
        return fs_cli_usage_error("validate", "which scenario file? (fleetsim validate FILE)");
    }
    fs_config_t cfg;
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_scenario_load_file(scenario, sets, n_sets, &cfg, &err);
    free(sets);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    if (dump) {
        char *text = fs_scenario_dump(&cfg);
        if (!text) {
            fs_config_release(&cfg);
            fprintf(stderr, "fleetsim validate: out of memory\n");
            return 1;
        }
        fputs(text, stdout);
        fs_free(text);
    } else {
        printf("%s: ok\n", scenario);
    }
    fs_config_release(&cfg);
    return 0;
}
