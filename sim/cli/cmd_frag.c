/*
 * fleetsim frag: the GPU fragmentation experiment of Weng et al. (USENIX
 * ATC'23, section 6), run by analysis/fs_frag.h: this file parses the
 * options, loads the scenario, prepares the CSV and prints the table.
 */
#include "fs_cli.h"
#include "../../analysis/fs_frag.h"
#include "../../models/fs_place.h"
#include "../../scenarios/fs_scenario.h"
#include "../fs_alloc.h"
#include "../fs_out.h"
#include "fs_cliout.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Placement names as in scheduler.placement (scenarios/fs_keys.c). */
static const struct {
    const char *name;
    int kind;
} kinds[] = {
    {"pack", FS_PLACE_PACK},       {"first_fit", FS_PLACE_FIRST_FIT}, {"best_fit", FS_PLACE_BEST_FIT},
    {"binpack", FS_PLACE_BINPACK}, {"spread", FS_PLACE_SPREAD},       {"random", FS_PLACE_RANDOM},
    {"topology", FS_PLACE_TOPOLOGY}, {"fgd", FS_PLACE_FGD},
    {"atc_best_fit", FS_PLACE_ATC_BEST_FIT}, {"gpu_packing", FS_PLACE_GPU_PACKING},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])
#define MAX_RUN_KINDS 16

/* The command line of fleetsim frag. */
typedef struct fargs {
    const char *scenario, *output, *list;
    const char **sets;
    size_t n_sets;
    unsigned long long seeds, threads;
    double demand, typical;
    int learned, show_pools, draw_list;
} fargs_t;

/* One option or operand (id, value v, as written a); 0, or an exit status. */
static int parse_one(fargs_t *a, int id, const char *opt, const char *v)
{
    char *end;
    if (id == 'o') {
        if (!v)
            return fs_cli_usage_error("frag", "%s needs a file name", opt);
        a->output = v;
    } else if (id == FS_OPT_PLACEMENTS) {
        if (!v)
            return fs_cli_usage_error("frag", "--placements needs a list such as fgd,best_fit");
        a->list = v;
    } else if (id == FS_OPT_SEEDS) {
        if (!v || fs_cli_parse_u64(v, &a->seeds) || a->seeds == 0 || a->seeds > 100000)
            return fs_cli_usage_error("frag", "--seeds needs an integer from 1 to 100000");
    } else if (id == FS_OPT_DEMAND) {
        if (!v || (a->demand = strtod(v, &end), *end) || !(a->demand >= FS_FRAG_STEP) ||
            a->demand > 100)
            return fs_cli_usage_error("frag", "--demand needs a number from 0.05 to 100");
    } else if (id == FS_OPT_SHAPES) {
        if (!v || (strcmp(v, "given") && strcmp(v, "learned")))
            return fs_cli_usage_error("frag", "--shapes needs given or learned");
        a->learned = strcmp(v, "learned") == 0;
    } else if (id == FS_OPT_POOLS) {
        a->show_pools = 1;
    } else if (id == 'j') {
        if (!v || fs_cli_parse_u64(v, &a->threads) || a->threads < 1 || a->threads > 4096)
            return fs_cli_usage_error("frag", "-j needs a thread count from 1 to 4096");
    } else if (id == FS_OPT_TYPICAL) {
        if (!v || (a->typical = strtod(v, &end), *end) || !(a->typical > 0) || a->typical > 100)
            return fs_cli_usage_error("frag", "--typical needs a percentage in (0, 100]");
        a->typical /= 100;
    } else if (id == FS_OPT_DRAW) {
        if (!v || (strcmp(v, "uniform") && strcmp(v, "list")))
            return fs_cli_usage_error("frag", "--draw needs uniform or list");
        a->draw_list = strcmp(v, "list") == 0;
    } else if (id == FS_OPT_SET) {
        if (!v || !strchr(v, '='))
            return fs_cli_usage_error("frag", "--set needs KEY=VALUE");
        a->sets[a->n_sets++] = v;
    } else if (!a->scenario) {
        a->scenario = opt;
    } else {
        return fs_cli_usage_error("frag", "only one scenario file may be given");
    }
    return 0;
}

/* -1: --help was printed; 0: parsed; else the exit status. */
static int parse_args(fargs_t *a, int argc, char **argv)
{
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "frag", argc, argv, fs_cli_find("frag")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("frag"));
            return -1;
        }
        if (id == FS_CLI_BAD)
            return g.status;
        int rc = parse_one(a, id, g.opt ? g.opt : g.arg, g.arg);
        if (rc)
            return rc;
    }
    if (!a->scenario)
        return fs_cli_usage_error("frag", "a scenario file is needed (see fleetsim frag --help)");
    return 0;
}

/* --placements LIST: the kinds and names to compare; 0 or a usage error. */
static int parse_placements(const char *list, int *run_kinds, const char **run_names, size_t *n_run)
{
    *n_run = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        size_t k = 0;
        while (k < N_KINDS && (strlen(kinds[k].name) != len || strncmp(kinds[k].name, p, len)))
            k++;
        if (k == N_KINDS || *n_run == MAX_RUN_KINDS)
            return fs_cli_usage_error("frag", "--placements: '%.*s' is not a placement (pack, "
                                      "first_fit, best_fit, binpack, spread, random, topology, "
                                      "fgd, atc_best_fit, gpu_packing)",
                                      (int)len, p);
        run_kinds[*n_run] = kinds[k].kind;
        run_names[(*n_run)++] = kinds[k].name;
        p += len + (p[len] == ',');
    }
    return 0;
}

static void print_table(const fs_config_t *cfg, const fs_frag_opts_t *o, const fs_frag_result_t *r)
{
    printf("fragmentation experiment: %zu pods (%s), %llu GPUs in %u pools, %llu seeds, demand to %.0f%%\n",
           r->n_pods, cfg->workload.trace.path, (unsigned long long)r->gpus, r->n_pools,
           (unsigned long long)o->seeds, o->demand * 100);
    printf("%-10s %22s %22s %14s\n", "placement", "alloc @100% (sd)", "alloc @end (sd)",
           "failed @end");
    for (size_t k = 0; k < o->n_kinds; k++) {
        if (r->reached_100)
            printf("%-10s %13.2f%% (%5.2f) %13.2f%% (%5.2f) %14.1f\n", o->names[k],
                   100 * r->at100_mean[k], 100 * r->at100_sd[k], 100 * r->atend_mean[k],
                   100 * r->atend_sd[k], r->failed_mean[k]);
        else    /* --demand < 1: the runs stop before 100% of the capacity is asked */
            printf("%-10s %22s %13.2f%% (%5.2f) %14.1f\n", o->names[k], "not reached",
                   100 * r->atend_mean[k], 100 * r->atend_sd[k], r->failed_mean[k]);
    }
}

/* The experiment into the CSV's temporary (renamed when complete), then the
 * table; an exit status. */
static int run_and_print(const fargs_t *a, const fs_config_t *cfg, fs_frag_opts_t *o)
{
    fs_error_t err;
    fs_error_clear(&err);
    fs_out_t out = {0};
    int rc = a->output ? fs_out_prepare(&out, a->output, &err) : 0;
    if (rc) {
        fprintf(stderr, "fleetsim frag: %s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    if (a->output && !(o->csv = fopen(out.tmp, "w"))) {
        fprintf(stderr, "fleetsim frag: cannot write '%s': %s\n", a->output, strerror(errno));
        fs_out_release(&out);
        return 1;
    }
    fs_frag_result_t res;
    rc = fs_frag_run(cfg, o, &res, &err);
    int status = rc == 0 ? 0 : rc == FS_EINVAL ? 2 : 1;
    if (rc)
        fprintf(stderr, "fleetsim frag: %s\n", err.msg);
    if (o->csv && fclose(o->csv) && status == 0) {
        fprintf(stderr, "fleetsim frag: error writing '%s': %s\n", a->output, strerror(errno));
        status = 1;
    }
    if (o->csv && status == 0 && fs_out_commit(&out, NULL, &err) != 0) {
        fprintf(stderr, "fleetsim frag: %s\n", err.msg);
        status = 1;
    } else if (o->csv && status != 0) {
        remove(out.tmp);
    }
    fs_out_release(&out);
    if (status == 0)
        print_table(cfg, o, &res);
    if (rc == 0)
        fs_frag_result_release(&res);
    return status;
}

/* The defaults reproduce the ATC'23 table (docs/validation.md, tests/validation/frag_atc23.sh):
 * the four policies of the paper's figure 7, the simulator's workload tuning (--draw list), its
 * typical pods (95%) and its integer node scores with ties by node name.  The node score is the
 * first --set, so the command line's own --set scheduler.node_score=... replaces it. */
#define FRAG_DEFAULT_PLACEMENTS "random,atc_best_fit,gpu_packing,fgd"
#define FRAG_DEFAULT_TYPICAL 0.95
#define FRAG_DEFAULT_NODE_SCORE "scheduler.node_score=kubernetes_name"

int fs_cmd_frag(int argc, char **argv)
{
    fargs_t a = {.list = FRAG_DEFAULT_PLACEMENTS, .seeds = 10, .demand = 1.3,
                 .typical = FRAG_DEFAULT_TYPICAL, .draw_list = 1};
    a.sets = fs_calloc((size_t)argc + 2, sizeof *a.sets);
    if (!a.sets)
        return 1;
    a.sets[a.n_sets++] = FRAG_DEFAULT_NODE_SCORE;
    int rc = parse_args(&a, argc, argv);
    int run_kinds[MAX_RUN_KINDS];
    const char *run_names[MAX_RUN_KINDS];
    size_t n_run = 0;
    if (!rc)
        rc = parse_placements(a.list, run_kinds, run_names, &n_run);
    fs_config_t cfg;
    fs_error_t err;
    fs_error_clear(&err);
    if (!rc && (rc = fs_scenario_load_file(a.scenario, a.sets, a.n_sets, &cfg, &err)) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        rc = rc == FS_EINVAL ? 2 : 1;
    } else if (!rc) {
        const char *inputs[FS_SCENARIO_MAX_INPUTS];
        size_t n_inputs = 0;
        fs_scenario_inputs(&cfg, inputs, &n_inputs, FS_SCENARIO_MAX_INPUTS);
        rc = fs_cli_check_output("frag", a.output, inputs, n_inputs);
        fs_frag_opts_t o = {.kinds = run_kinds, .names = run_names, .n_kinds = n_run,
                            .seeds = a.seeds, .demand = a.demand, .learned = a.learned,
                            .draw_list = a.draw_list, .typical = a.typical,
                            .show_pools = a.show_pools, .threads = (unsigned)a.threads,
                            .csv_name = a.output};
        if (!rc)
            rc = run_and_print(&a, &cfg, &o);
        fs_config_release(&cfg);
    }
    fs_free(a.sets);
    return rc < 0 ? 0 : rc;
}
