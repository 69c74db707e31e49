/*
 * fleetsim plan: the cheapest fleet that meets the scenario's SLOs with
 * stated confidence (docs/plan.md).  The wiring (loading, evaluating each
 * candidate as a one-point sweep, the search, the cash flow, plan.h5) is
 * the API layer's (sim/api/fs_planrun.c, also behind fleetsim_plan); here
 * are the arguments, MPI and what is printed.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_cli.h"
#include "../api/fs_planrun.h"
#include "fs_json.h"
#include "../../analysis/fs_fmt.h"
#include "../fs_alloc.h"

#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

typedef struct plan_args {
    const char *scenario, *dir;
    const char **sets;
    size_t n_sets, shard, n_shards;
    unsigned long long jobs;
    int have_j, quiet, dry, scan, json;
} plan_args_t;

static int parse_args(int argc, char **argv, plan_args_t *a)
{
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "plan", argc, argv, fs_cli_find("plan")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *s = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("plan"));
            return -1;
        } else if (id == 'o') {
            if (!v)
                return fs_cli_usage_error("plan", "%s needs a directory", s);
            a->dir = v;
        } else if (id == 'j') {
            if (!v || fs_cli_parse_u64(v, &a->jobs) || a->jobs < 1 || a->jobs > 4096)
                return fs_cli_usage_error("plan", "-j needs a number of threads from 1 to 4096");
            a->have_j = 1;
        } else if (id == FS_OPT_SHARD) {
            if (!v || fs_cli_parse_shard(v, &a->shard, &a->n_shards))
                return fs_cli_usage_error("plan", "--shard needs I/N with 0 <= I < N");
        } else if (id == FS_OPT_SET) {
            if (!v || !strchr(v, '='))
                return fs_cli_usage_error("plan", "--set needs KEY=VALUE");
            a->sets[a->n_sets++] = v;
        } else if (id == FS_OPT_SCAN) {
            a->scan = 1;
        } else if (id == FS_OPT_DRY_RUN) {
            a->dry = 1;
        } else if (id == FS_OPT_JSON) {
            a->json = 1;
        } else if (id == 'q') {
            a->quiet = 1;
        } else if (id == FS_CLI_BAD) {
            return g.status;
        } else if (!a->scenario) {
            a->scenario = s;
        } else {
            return fs_cli_usage_error("plan", "only one scenario file may be given");
        }
    }
    if (!a->scenario)
        return fs_cli_usage_error("plan", "a scenario file is needed");
    if (!a->dir)
        a->dir = "plan-out";
    return 0;
}

static void print_dry(const fs_plan_spec_t *s)
{
    printf("plan: objective %s, confidence %g, %" PRIu64 " replications, %s\n", s->metrics[0],
           s->confidence, s->replications, s->search == FS_PLAN_SCAN ? "scan" : "bisection");
    for (size_t i = 0; i < s->n_slo; i++)
        printf("slo %zu: %s\n", i, s->slo[i].text);
    for (size_t c = 0; c < s->n_choices; c++) {
        const fs_plan_choice_t *ch = &s->choices[c];
        printf("choice %s: pool %s (%s, %" PRIu32 " GPUs/node), %zu node counts %" PRIu32
               "..%" PRIu32 "", ch->name, ch->pool, ch->gpu, ch->gpus_per_node, ch->n_nodes,
               ch->nodes[0], ch->nodes[ch->n_nodes - 1]);
        for (size_t k = 0; k < ch->n_sets; k++)
            printf("%s%s", k ? ", " : "; overrides: ", ch->sets[k]);
        printf("\n");
    }
}

static void print_cash(const fs_plan_spec_t *s, const fs_plan_point_t *p, const fs_plan_cash_t *c)
{
    char pur[32], dep[32], opex[32], res[32], npv[32], span[32];
    fs_fmt_money(pur, sizeof pur, c->purchase);
    fs_fmt_money(dep, sizeof dep, c->depreciation);
    fs_fmt_money(opex, sizeof opex, c->opex_per_year);
    fs_fmt_money(res, sizeof res, c->residual);
    fs_fmt_money(npv, sizeof npv, c->npv);
    fs_fmt_duration(span, sizeof span, c->run_s);
    printf("  %-16s %7" PRIu32 " nodes: ", s->choices[p->choice].name, p->nodes);
    if (c->purchase > 0)
        printf("purchase %s; the run's cost over its %s includes %s of depreciation = %.2f%% of "
               "the purchase (straight line over %.3g years, less the residual); ", pur, span, dep,
               100 * c->depreciation_share, c->years);
    printf("operating cost %s/yr; residual %s at year %.3g; NPV of the cost %s at %.1f%%/yr over "
           "%.3g years\n", opex, res, c->years, npv, 100 * c->rate, c->years);
}

/* The --json document (docs/cli.md): every evaluated fleet with each
 * metric's per-replication values and interval, and the choice. */
static void json_ci(fs_json_t *j, const char *key, const fs_ci_t *ci)
{
    fs_json_key(j, key);
    fs_json_begin_object(j);
    fs_json_key(j, "mean");
    fs_json_num(j, ci->mean);
    fs_json_key(j, "lo");
    fs_json_num(j, ci->lo);
    fs_json_key(j, "hi");
    fs_json_num(j, ci->hi);
    fs_json_key(j, "n");
    fs_json_uint(j, ci->n);
    fs_json_end_object(j);
}

/* With plan.years: the quarter a point first misses ("miss_quarter", null
 * when none) and its SLO metrics in each quarter looked at ("quarters"). */
static void json_periods(fs_json_t *j, const fs_plan_spec_t *s, const fs_plan_point_t *p)
{
    char name[16];
    fs_json_key(j, "miss_quarter");
    if (p->miss_period >= 0) {
        fs_plan_period_name((size_t)p->miss_period, name, sizeof name);
        fs_json_str(j, name);
    } else {
        fs_json_str(j, NULL);
    }
    fs_json_key(j, "quarters");
    fs_json_begin_array(j);
    for (size_t q = 0; q < p->n_periods; q++) {
        fs_json_begin_object(j);
        fs_plan_period_name(q, name, sizeof name);
        fs_json_key(j, "quarter");
        fs_json_str(j, name);
        fs_json_key(j, "meets");
        fs_json_bool(j, (long)q != p->miss_period);
        for (size_t i = 0; i < s->n_slo; i++) {
            int seen = 0;   /* a metric of two SLOs is written once */
            for (size_t e = 0; e < i; e++)
                seen |= strcmp(s->metrics[1 + e], s->metrics[1 + i]) == 0;
            if (!seen)
                json_ci(j, s->metrics[1 + i], &p->period_ci[q * s->n_metrics + 1 + i]);
        }
        fs_json_end_object(j);
    }
    fs_json_end_array(j);
}

/* "quarterly": the quarterly cash flow (plan.years), docs/plan.md. */
static void json_fin(fs_json_t *j, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                     const fs_plan_fin_t *f)
{
    static const char *const mix[FS_PLAN_MIX] = {"owned", "on_demand", "reserved_1y",
                                                 "reserved_3y", "spot", "lease"};
    size_t Q = f->n_q, R = f->reps;
    fs_json_begin_object(j);
    fs_json_key(j, "years");
    fs_json_num(j, f->years);
    fs_json_key(j, "discount_rate");
    fs_json_num(j, f->rate);
    fs_json_key(j, "demand_growth");
    fs_json_num(j, f->demand_growth);
    fs_json_key(j, "electricity_growth");
    fs_json_num(j, f->elec_growth);
    fs_json_key(j, "gpu_price_decline");
    fs_json_num(j, f->price_decline);
    fs_json_key(j, "quarter_runs");
    fs_json_uint(j, f->quarter_runs);
    fs_json_key(j, "baseline");
    fs_json_str(j, f->baseline >= 0 ? s->choices[f->baseline].name : NULL);
    fs_json_key(j, "fleets");
    fs_json_begin_array(j);
    for (size_t c = 0; c < f->n_fleets; c++) {
        const fs_plan_fleet_t *fl = &f->fleets[c];
        if (fl->point < 0)
            continue;
        fs_json_begin_object(j);
        fs_json_key(j, "choice");
        fs_json_str(j, s->choices[c].name);
        fs_json_key(j, "nodes");
        fs_json_uint(j, r->points[fl->point].nodes);
        json_ci(j, "npv", &fl->npv_ci);
        json_ci(j, "payback_years", &fl->payback_ci);
        json_ci(j, "cost_per_gpu_hour", &fl->cpgh_ci);
        fs_json_num_array(j, "npv_values", fl->npv, R);
        fs_json_num_array(j, "payback_values", fl->payback, R);
        fs_json_num_array(j, "cost_per_gpu_hour_values", fl->cpgh, R);
        fs_json_key(j, "quarters");
        fs_json_begin_array(j);
        for (size_t q = 0; q < Q; q++) {
            double capex = 0, opex = 0;
            for (size_t k = 0; k < R; k++) {
                capex += fl->q_capex[k * Q + q] / (double)R;
                opex += fl->q_opex[k * Q + q] / (double)R;
            }
            fs_json_begin_object(j);
            fs_json_key(j, "quarter");
            fs_json_uint(j, q + 1);
            fs_json_key(j, "demand_scale");
            fs_json_num(j, fl->scale[q]);
            fs_json_key(j, "gpus");
            fs_json_begin_object(j);
            for (int m = 0; m < FS_PLAN_MIX; m++) {
                fs_json_key(j, mix[m]);
                fs_json_num(j, fl->mix[q * FS_PLAN_MIX + m]);
            }
            fs_json_end_object(j);
            fs_json_key(j, "capex");
            fs_json_num(j, capex);
            fs_json_key(j, "opex");
            fs_json_num(j, opex);
            fs_json_end_object(j);
        }
        fs_json_end_array(j);
        fs_json_end_object(j);
    }
    fs_json_end_array(j);
    fs_json_key(j, "sensitivity");
    fs_json_begin_array(j);
    for (size_t i = 0; i < f->n_sens; i++) {
        const fs_plan_sens_t *sv = &f->sens[i];
        fs_json_begin_object(j);
        fs_json_key(j, "parameter");
        fs_json_str(j, sv->param);
        fs_json_key(j, "rerun");
        fs_json_bool(j, sv->rerun);
        fs_json_key(j, "low_factor");
        fs_json_num(j, sv->lo_factor);
        fs_json_key(j, "high_factor");
        fs_json_num(j, sv->hi_factor);
        json_ci(j, "npv_low", &sv->lo);
        json_ci(j, "npv_high", &sv->hi);
        fs_json_end_object(j);
    }
    fs_json_end_array(j);
    fs_json_key(j, "sensitivity_runs");
    fs_json_uint(j, f->sens_runs);
    fs_json_end_object(j);
}

static void print_json(const plan_args_t *a, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                       const char *out, const fs_plan_cash_t *cash, const int *have,
                       const fs_plan_fin_t *fin)
{
    fs_json_t j;
    fs_json_init(&j, stdout);
    fs_json_begin_object(&j);
    fs_json_key(&j, "command");
    fs_json_str(&j, "plan");
    fs_json_key(&j, "plan_file");
    fs_json_str(&j, a->shard == 0 ? out : NULL);
    fs_json_key(&j, "objective");
    fs_json_str(&j, s->metrics[0]);
    fs_json_key(&j, "confidence");
    fs_json_num(&j, s->confidence);
    fs_json_key(&j, "replications");
    fs_json_uint(&j, s->replications);
    fs_json_key(&j, "slo");
    fs_json_begin_array(&j);
    for (size_t i = 0; i < s->n_slo; i++) {
        fs_json_begin_object(&j);
        fs_json_key(&j, "metric");
        fs_json_str(&j, s->slo[i].metric);
        fs_json_key(&j, "kind");
        fs_json_str(&j, s->slo[i].kind == FS_PLAN_LE ? "max" : "min");
        fs_json_key(&j, "bound");
        fs_json_num(&j, s->slo[i].bound);
        fs_json_key(&j, "text");
        fs_json_str(&j, s->slo[i].text);
        fs_json_end_object(&j);
    }
    fs_json_end_array(&j);
    fs_json_key(&j, "points");
    fs_json_begin_array(&j);
    for (size_t k = 0; k < r->n_points; k++) {
        const fs_plan_point_t *p = &r->points[k];
        fs_json_begin_object(&j);
        fs_json_key(&j, "choice");
        fs_json_str(&j, s->choices[p->choice].name);
        fs_json_key(&j, "pool");
        fs_json_str(&j, s->choices[p->choice].pool);
        fs_json_key(&j, "gpu");
        fs_json_str(&j, s->choices[p->choice].gpu);
        fs_json_key(&j, "nodes");
        fs_json_uint(&j, p->nodes);
        fs_json_key(&j, "gpus");
        fs_json_uint(&j, p->gpus);
        fs_json_key(&j, "meets");
        fs_json_bool(&j, p->meets);
        fs_json_key(&j, "frontier");
        fs_json_bool(&j, p->frontier);
        fs_json_key(&j, "best");
        fs_json_bool(&j, r->best[p->choice] == (long)k);
        fs_json_key(&j, "chosen");
        fs_json_bool(&j, r->chosen == (long)k);
        fs_json_key(&j, "metrics");
        fs_json_begin_object(&j);
        for (size_t m = 0; m < s->n_metrics; m++) {
            size_t first = m;   /* a metric listed twice is written once */
            for (size_t q = 0; q < m; q++)
                if (strcmp(s->metrics[q], s->metrics[m]) == 0 && first == m)
                    first = q;
            if (first != m)
                continue;
            fs_json_key(&j, s->metrics[m]);
            fs_json_begin_object(&j);
            fs_json_key(&j, "mean");
            fs_json_num(&j, p->ci[m].mean);
            fs_json_key(&j, "sd");
            fs_json_num(&j, p->ci[m].sd);
            fs_json_key(&j, "lo");
            fs_json_num(&j, p->ci[m].lo);
            fs_json_key(&j, "hi");
            fs_json_num(&j, p->ci[m].hi);
            fs_json_key(&j, "values");
            fs_json_begin_array(&j);
            for (uint64_t rep = 0; rep < s->replications; rep++)
                fs_json_num(&j, p->runs[rep * s->n_metrics + m]);
            fs_json_end_array(&j);
            fs_json_end_object(&j);
        }
        fs_json_end_object(&j);
        if (s->n_periods > 1)
            json_periods(&j, s, p);
        fs_json_key(&j, "cash_flow");
        if (have[k]) {
            const fs_plan_cash_t *c = &cash[k];
            fs_json_begin_object(&j);
            fs_json_key(&j, "purchase");
            fs_json_num(&j, c->purchase);
            fs_json_key(&j, "run_s");
            fs_json_num(&j, c->run_s);
            fs_json_key(&j, "run_cost");
            fs_json_num(&j, c->run_cost);
            fs_json_key(&j, "depreciation");
            fs_json_num(&j, c->depreciation);
            fs_json_key(&j, "depreciation_share");
            fs_json_num(&j, c->depreciation_share);
            fs_json_key(&j, "opex_per_year");
            fs_json_num(&j, c->opex_per_year);
            fs_json_key(&j, "residual");
            fs_json_num(&j, c->residual);
            fs_json_key(&j, "years");
            fs_json_num(&j, c->years);
            fs_json_key(&j, "discount_rate");
            fs_json_num(&j, c->rate);
            fs_json_key(&j, "npv");
            fs_json_num(&j, c->npv);
            fs_json_end_object(&j);
        } else {
            fs_json_null(&j);
        }
        fs_json_end_object(&j);
    }
    fs_json_end_array(&j);
    fs_json_key(&j, "chosen");
    if (r->chosen >= 0)
        fs_json_uint(&j, (uint64_t)r->chosen);
    else
        fs_json_null(&j);
    fs_json_key(&j, "quarterly");
    if (fin)
        json_fin(&j, s, r, fin);
    else
        fs_json_null(&j);
    fs_json_end_object(&j);
    fs_json_finish(&j);
}

/* Progress on a terminal: the candidate being evaluated. */
static void show_candidate(void *ud, const char *choice, uint32_t nodes)
{
    (void)ud;
    fprintf(stderr, "\r\033[Kfleetsim plan: %s at %" PRIu32 " nodes ...", choice, nodes);
}

static void print_plan(const plan_args_t *a, const fs_planrun_opts_t *o, const fs_planrun_t *p)
{
    const fs_plan_spec_t *spec = p->spec;
    const fs_plan_result_t *res = p->res;
    if (a->json) {
        print_json(a, spec, res, p->plan_file, p->cash, p->have, p->fin);
        return;
    }
    if (a->quiet)
        return;
    fs_plan_print(stdout, spec, res);
    int any = 0;
    for (size_t k = 0; k < res->n_points; k++)
        any |= p->have[k];
    if (p->fin)
        fs_plan_fin_print(stdout, spec, res, p->fin);
    else if (any) {
        printf("\ncash flow (finance view: the purchase at year 0, the run's other costs as a "
               "yearly operating cost,\nthe residual value at the end of depreciation, "
               "discounted at plan.discount_rate):\n");
        for (size_t c = 0; c < spec->n_choices; c++)
            if (res->best[c] >= 0 && p->have[res->best[c]])
                print_cash(spec, &res->points[res->best[c]], &p->cash[res->best[c]]);
    }
    printf("\n%zu runs executed now (the others reused from %s/evals); %.2f s on %s%llu "
           "thread%s\n", p->runs_done, a->dir, p->wall_s, o->o.mpi ? "ranks x " : "", a->jobs,
           a->jobs == 1 ? "" : "s");
    if (a->shard == 0)
        printf("results      %s\n", p->plan_file);
    else
        printf("shard %zu/%zu done; shard 0 writes %s\n", a->shard, a->n_shards, p->plan_file);
}

static int run_plan(const plan_args_t *a, const fs_planrun_opts_t *o, fs_error_t *err)
{
    fs_planrun_t p;
    int rc = fs_planrun_load(o, &p, err);
    if (rc)
        return rc;
    if (a->dry) {
        if (o->rank == 0)
            print_dry(p.spec);
    } else {
        rc = fs_planrun_execute(o, &p, err);
        if (o->on_candidate && o->rank == 0 && p.res)
            fputs("\r\033[K", stderr);
        if (!rc && o->rank == 0)
            print_plan(a, o, &p);
    }
    fs_planrun_release(&p);
    return rc;
}

int fs_cmd_plan(int argc, char **argv)
{
    plan_args_t a;
    memset(&a, 0, sizeof a);
    a.jobs = 1;
    a.sets = fs_calloc((size_t)argc + 1, sizeof *a.sets);
    if (!a.sets)
        return 1;
    int bad = parse_args(argc, argv, &a);
    if (bad) {
        fs_free(a.sets);
        return bad < 0 ? 0 : bad;
    }
    int launched = fs_sweep_mpi_launched(), use_mpi = 0, rank = 0, size = 1;
    fs_error_t err;
    fs_error_clear(&err);
    if (launched >= 1 && !a.dry && fs_sweep_mpi_available()) {
        if (fs_sweep_mpi_init(&argc, &argv, &rank, &size, &err)) {
            fprintf(stderr, "fleetsim plan: %s\n", err.msg);
            fs_free(a.sets);
            return 1;
        }
        use_mpi = 1;
    } else if (launched > 1 && !a.dry) {
        fprintf(stderr, "fleetsim plan: started by an MPI launcher with %d processes, but this "
                "fleetsim was built without MPI (install libopenmpi-dev and rebuild)\n", launched);
        fs_free(a.sets);
        return 2;
    }
    if (!a.have_j && !use_mpi) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        a.jobs = cpus > 0 ? (unsigned long long)cpus : 1;
    }
    fs_cli_catch_stop(0);

    fs_planrun_opts_t o;
    fs_planrun_opts_init(&o);
    o.path = a.scenario;
    o.sets = a.sets;
    o.n_sets = a.n_sets;
    o.dir = a.dir;
    o.rank = rank;
    o.scan = a.scan;
    o.o.threads = (unsigned)a.jobs;
    o.o.shard = a.shard;
    o.o.n_shards = a.n_shards;
    o.o.interrupt = &fs_cli_stop;
    o.o.mpi = use_mpi;
    if (!a.quiet && rank == 0 && isatty(STDERR_FILENO))
        o.on_candidate = show_candidate;
    int rc = run_plan(&a, &o, &err);
    if (rc && rank == 0)
        fprintf(stderr, "fleetsim plan: %s\n", err.msg);
    fs_free(a.sets);
    rc = rc ? fs_error_exit_status(rc) : 0;
    return use_mpi ? fs_sweep_mpi_finish(rc) : rc;
}
