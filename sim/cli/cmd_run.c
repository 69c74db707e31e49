#include "fs_cli.h"
#include "../../models/fs_policy.h"
#include "fs_runner.h"
#include "fs_cliout.h"
#include "../fs_out.h"
#include "../../scenarios/fs_scenario.h"
#include "../fs_alloc.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Set by SIGINT/SIGTERM; the engine checks it between instants.  Process
 * state for signal delivery, not run state: runs only read it. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

int fs_cmd_run(int argc, char **argv)
{
    const char *scenario = NULL, *output = "results.h5";
    const char **sets = calloc((size_t)argc + 2, sizeof *sets);
    size_t n_sets = 0;
    int quiet = 0, have_seed = 0;
    unsigned long long seed = 0;
    char seedbuf[64];
    if (!sets)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (fs_cli_is_help(a)) {
            fs_cli_print_usage(stdout, fs_cli_find("run"));
            free(sets);
            return 0;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (++i >= argc) {
                free(sets);
                return fs_cli_usage_error("run", "%s needs a file name", a);
            }
            output = argv[i];
        } else if (strcmp(a, "--no-output") == 0) {
            output = NULL;
        } else if (strcmp(a, "--seed") == 0) {
            if (++i >= argc || fs_cli_parse_u64(argv[i], &seed)) {
                free(sets);
                return fs_cli_usage_error("run", "--seed needs a non-negative integer");
            }
            have_seed = 1;
        } else if (strcmp(a, "--set") == 0) {
            if (++i >= argc || !strchr(argv[i], '=')) {
                free(sets);
                return fs_cli_usage_error("run", "--set needs KEY=VALUE");
            }
            sets[n_sets++] = argv[i];
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            free(sets);
            return fs_cli_usage_error("run", "unknown option '%s'", a);
        } else if (!scenario) {
            scenario = a;
        } else {
            free(sets);
            return fs_cli_usage_error("run", "only one scenario file may be given");
        }
    }
    if (have_seed) {  /* --seed N is --set seed=N, applied last */
        snprintf(seedbuf, sizeof seedbuf, "seed=%llu", seed);
        sets[n_sets++] = seedbuf;
    }

    fs_config_t cfg;
    fs_error_t err;
    fs_error_clear(&err);
    int rc = scenario ? fs_scenario_load_file(scenario, sets, n_sets, &cfg, &err)
                      : fs_scenario_load_string("<builtin default>", fs_scenario_default_text(),
                                                sets, n_sets, &cfg, &err);
    free(sets);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return fs_error_exit_status(rc);
    }

    /* -o /dev/null means --no-output; an output that is an input is refused */
    if (output && fs_out_is_null(output))
        output = NULL;
    const char *inputs[FS_CLI_MAX_INPUTS];
    size_t n_inputs = 0;
    fs_cli_config_inputs(&cfg, inputs, &n_inputs, FS_CLI_MAX_INPUTS);
    if ((rc = fs_cli_check_output("run", output, inputs, n_inputs)) != 0) {
        fs_config_release(&cfg);
        return rc;
    }
    char loss[512];
    if (fs_policy_work_loss(&cfg, loss, sizeof loss))
        fprintf(stderr, "fleetsim run: warning: %s\n", loss);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;     /* a second signal kills at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    opts.output = output;
    opts.interrupt = &interrupted;
    opts.progress = isatty(STDERR_FILENO);
    fs_run_report_t rep;
    rc = fs_run_config(&cfg, &opts, &rep, &err);
    if (rc) {
        fprintf(stderr, "fleetsim run: %s\n", err.msg);
        if (rep.partial)
            fprintf(stderr, "fleetsim run: partial results written to %s (complete = 0)\n",
                    output);
        else if (output)
            fprintf(stderr, "fleetsim run: no results written\n");
        fs_config_release(&cfg);
        return fs_error_exit_status(rc);
    }
    if (rep.truncated)
        fprintf(stderr, "fleetsim run: warning: the trace goes on past the horizon (%.2f d); "
                "later jobs were not replayed (raise 'horizon' to replay them)\n",
                fs_time_to_s(cfg.horizon) / 86400.0);
    if (!quiet)
        fs_run_print_summary(stdout, &cfg, &rep, output);
    fs_config_release(&cfg);
    return 0;
}
