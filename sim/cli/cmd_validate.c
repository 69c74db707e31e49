#include "fs_cli.h"
#include "../../models/fs_policy.h"
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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (fs_cli_is_help(a)) {
            fs_cli_print_usage(stdout, fs_cli_find("validate"));
            free(sets);
            return 0;
        } else if (strcmp(a, "--keys") == 0) {
            fs_scenario_print_keys(stdout);
            free(sets);
            return 0;
        } else if (strcmp(a, "--dump") == 0) {
            dump = 1;
        } else if (strcmp(a, "--set") == 0) {
            if (++i >= argc || !strchr(argv[i], '=')) {
                free(sets);
                return fs_cli_usage_error("validate", "--set needs KEY=VALUE");
            }
            sets[n_sets++] = argv[i];
        } else if (a[0] == '-' && a[1]) {
            free(sets);
            return fs_cli_usage_error("validate", "unknown option '%s'", a);
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
    char loss[512];   /* valid, but a preemptive policy would throw work away */
    if (fs_policy_work_loss(&cfg, loss, sizeof loss))
        fprintf(stderr, "fleetsim validate: warning: %s\n", loss);
    fs_config_release(&cfg);
    return 0;
}
