#include "fs_cli.h"
#include <stddef.h>
#include <string.h>
#include "../../models/fs_policy.h"
#include "../api/fs_runner.h"
#include "fs_cliout.h"
#include "../fs_out.h"
#include "fs_json.h"
#include "../../analysis/fs_results.h"
#include "../../analysis/fs_tenants.h"
#include "../../scenarios/fs_scenario.h"
#include "../fs_alloc.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The "tenants" member of run --json: the results file's /tenants rows (one
 * replication: values, no intervals; `fleetsim versus` and `sweep` give
 * those), null without a results file or when it has no tenants. */
static void json_tenants(fs_json_t *j, const char *output)
{
    fs_tenant_table_t t;
    fs_error_t err;
    const char *paths[1] = {output};
    fs_json_key(j, "tenants");
    if (!output || fs_tenant_table_load(paths, 1, &t, &err) != 0) {
        fs_json_null(j);
        return;
    }
    fs_json_begin_array(j);
    for (size_t i = 0; i < t.n; i++) {
        fs_json_begin_object(j);
        fs_json_key(j, "name");
        fs_json_str(j, t.names[i]);
        for (size_t m = 0; m < FS_TENANT_N_METRICS; m++) {
            fs_json_key(j, fs_tenant_metrics[m]);
            fs_json_num(j, t.mean[i * FS_TENANT_N_METRICS + m]);
        }
        fs_json_end_object(j);
    }
    fs_json_end_array(j);
    fs_tenant_table_release(&t);
}

/* The --json document (docs/cli.md): the run's /summary row, field by
 * field as written to the results file, with units. */
static void print_json(const fs_config_t *cfg, const fs_run_report_t *rep, const char *output)
{
    fs_json_t j;
    fs_json_init(&j, stdout);
    fs_json_begin_object(&j);
    fs_json_key(&j, "command");
    fs_json_str(&j, "run");
    fs_json_key(&j, "scenario");
    fs_json_str(&j, cfg->name);
    fs_json_key(&j, "seed");
    fs_json_uint(&j, cfg->seed);
    fs_json_key(&j, "replication");
    fs_json_uint(&j, cfg->replication);
    fs_json_key(&j, "results");
    fs_json_str(&j, output);
    fs_json_key(&j, "truncated");
    fs_json_bool(&j, rep->truncated);
    fs_json_key(&j, "gpus_total");
    fs_json_uint(&j, rep->totals.gpus_total);
    fs_json_key(&j, "wall_s");
    fs_json_num(&j, rep->wall_s);
    const char *name, *unit;
    double v;
    int is_count;
    fs_json_key(&j, "summary");
    fs_json_begin_object(&j);
    for (size_t i = 0; (name = fs_results_summary_field(i, &rep->summary, &v, &is_count, &unit));
         i++) {
        fs_json_key(&j, name);
        if (is_count)
            fs_json_uint(&j, (uint64_t)v);
        else
            fs_json_num(&j, v);
    }
    fs_json_end_object(&j);
    fs_json_key(&j, "units");
    fs_json_begin_object(&j);
    for (size_t i = 0; (name = fs_results_summary_field(i, &rep->summary, &v, &is_count, &unit));
         i++) {
        fs_json_key(&j, name);
        fs_json_str(&j, unit);
    }
    fs_json_end_object(&j);
    if (rep->n_services) {  /* the first FS_RUN_SERVICES rows of /services */
        fs_json_key(&j, "services");
        fs_json_begin_array(&j);
        for (size_t i = 0; i < rep->n_services && i < FS_RUN_SERVICES; i++) {
            const fs_service_row_t *r = &rep->services[i];
            fs_json_begin_object(&j);
            fs_json_key(&j, "name");
            fs_json_str(&j, r->name);
            static const struct { const char *k; size_t off; } f[] = {
                {"ttft_p50", offsetof(fs_service_row_t, ttft_p50)},
                {"ttft_p95", offsetof(fs_service_row_t, ttft_p95)},
                {"ttft_p99", offsetof(fs_service_row_t, ttft_p99)},
                {"ttft_mean", offsetof(fs_service_row_t, ttft_mean)},
                {"tpot_p50", offsetof(fs_service_row_t, tpot_p50)},
                {"tpot_p99", offsetof(fs_service_row_t, tpot_p99)},
                {"slo_attainment", offsetof(fs_service_row_t, slo_attainment)},
                {"buckets_met", offsetof(fs_service_row_t, buckets_met)},
                {"gpu_hours", offsetof(fs_service_row_t, gpu_hours)},
                {"replica_hours", offsetof(fs_service_row_t, replica_hours)},
                {"tokens_out", offsetof(fs_service_row_t, tokens_out)},
                {"cost_per_mtok", offsetof(fs_service_row_t, cost_per_mtok)},
            };
            fs_json_key(&j, "requests");
            fs_json_uint(&j, r->requests);
            fs_json_key(&j, "completed");
            fs_json_uint(&j, r->completed);
            fs_json_key(&j, "cold_starts");
            fs_json_uint(&j, r->cold_starts);
            for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
                double x;
                memcpy(&x, (const char *)r + f[k].off, sizeof x);
                fs_json_key(&j, f[k].k);
                fs_json_num(&j, x);
            }
            fs_json_end_object(&j);
        }
        fs_json_end_array(&j);
    }
    json_tenants(&j, output);
    fs_json_end_object(&j);
    fs_json_finish(&j);
}

int fs_cmd_run(int argc, char **argv)
{
    const char *scenario = NULL, *output = "results.h5";
    const char **sets = fs_calloc((size_t)argc + 2, sizeof *sets);
    size_t n_sets = 0;
    int quiet = 0, have_seed = 0, json = 0;
    double every = -1;      /* --progress: seconds between log lines (-1: the default) */
    unsigned long long seed = 0;
    char seedbuf[64];
    if (!sets)
        return 1;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "run", argc, argv, fs_cli_find("run")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("run"));
            fs_free(sets);
            return 0;
        } else if (id == 'o') {
            if (!v) {
                fs_free(sets);
                return fs_cli_usage_error("run", "%s needs a file name", a);
            }
            output = v;
        } else if (id == FS_OPT_NO_OUTPUT) {
            output = NULL;
        } else if (id == FS_OPT_SEED) {
            if (!v || fs_cli_parse_u64(v, &seed)) {
                fs_free(sets);
                return fs_cli_usage_error("run", "--seed needs a non-negative integer");
            }
            have_seed = 1;
        } else if (id == FS_OPT_SET) {
            if (!v || !strchr(v, '=')) {
                fs_free(sets);
                return fs_cli_usage_error("run", "--set needs KEY=VALUE");
            }
            sets[n_sets++] = v;
        } else if (id == 'q') {
            quiet = 1;
        } else if (id == FS_OPT_JSON) {
            json = 1;
        } else if (id == FS_OPT_PROGRESS) {
            if (fs_cli_parse_progress("run", v, &every)) {
                fs_free(sets);
                return 2;
            }
        } else if (id == FS_CLI_BAD) {
            fs_free(sets);
            return g.status;
        } else if (!scenario) {
            scenario = a;
        } else {
            fs_free(sets);
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
                      : fs_scenario_load_string(FS_SCENARIO_DEFAULT_NAME, fs_scenario_default_text(),
                                                sets, n_sets, &cfg, &err);
    fs_free(sets);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return fs_error_exit_status(rc);
    }

    /* -o /dev/null means --no-output; an output that is an input is refused */
    if (output && fs_out_is_null(output))
        output = NULL;
    const char *inputs[FS_SCENARIO_MAX_INPUTS];
    size_t n_inputs = 0;
    fs_scenario_inputs(&cfg, inputs, &n_inputs, FS_SCENARIO_MAX_INPUTS);
    if ((rc = fs_cli_check_output("run", output, inputs, n_inputs)) != 0) {
        fs_config_release(&cfg);
        return rc;
    }
    char loss[512];
    if (fs_policy_work_loss(&cfg, loss, sizeof loss))
        fprintf(stderr, "fleetsim run: warning: %s\n", loss);

    fs_cli_catch_stop(1);     /* a second signal kills at once */

    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    opts.output = output;
    opts.interrupt = &fs_cli_stop;
    opts.writer_thread = 1;     /* compression on the second core (docs/performance.md) */
    /* on a terminal, a line redrawn in place; otherwise (a log, a pipe, a
     * batch job) one whole line every 30 s of wall time, or --progress S */
    fs_cli_progress_mode(every, 0, &opts.progress, &opts.progress_every);
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
    if (json)
        print_json(&cfg, &rep, output);
    else if (!quiet)
        fs_run_print_summary(stdout, &cfg, &rep, output);
    fs_config_release(&cfg);
    return 0;
}
