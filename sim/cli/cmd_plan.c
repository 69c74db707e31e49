/*
 * fleetsim plan: the cheapest fleet that meets the scenario's SLOs with
 * stated confidence (docs/plan.md).  The search is analysis/fs_plan.c;
 * here each candidate fleet is evaluated by the sweep machinery
 * (fs_sweeprun.h): the candidate is a one-point sweep of
 * plan.replications runs ("sweep={replications: R}" plus the candidate's
 * overrides) executed into DIR/evals/<choice>-n<N>/ on threads, MPI ranks
 * or as one shard, exactly as `fleetsim sweep` runs; its run files are then
 * read back (every /summary metric, by name).  Replication r of every
 * candidate uses index r: common random numbers.  A finished candidate's
 * directory is reused (resume), so an interrupted plan continues where it
 * stopped and shards find the runs of the others.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_cli.h"
#include "../api/fs_sweeprun.h"
#include "fs_json.h"
#include "../../analysis/fs_plan.h"
#include "../../analysis/fs_fmt.h"
#include "../../analysis/fs_index.h"
#include "../../analysis/fs_results.h"
#include "../../scenarios/fs_where.h"
#include "../../models/fs_cost.h"
#include "../../scenarios/fs_scenario.h"
#include "../../scenarios/fs_sweep.h"
#include "../fs_alloc.h"
#include "../fs_out.h"
#include "fs_cliout.h"
#include "../fs_clock.h"

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

/* How candidates are run: the sweep options and the base scenario. */
typedef struct planrun {
    const char *scenario;       /* path */
    const char *const *sets;    /* --set */
    size_t n_sets;
    const char *dir;
    fs_sweep_opts_t o;
    int rank;
    int progress;               /* a progress line on stderr */
    size_t runs_done;           /* runs executed by this call chain (not reused) */
} planrun_t;

static char *dup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dup_printf(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return fs_strdup(buf);
}

/* DIR/evals/<choice>-n<N>: the choice's name with anything but [A-Za-z0-9._-]
 * replaced by '_'. */
static char *eval_dir_in(const char *dir, const fs_plan_spec_t *s, size_t choice, uint32_t nodes)
{
    char name[128];
    const char *n = s->choices[choice].name;
    size_t i = 0;
    for (; n[i] && i < sizeof name - 1; i++) {
        char ch = n[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '_' || ch == '-';
        name[i] = ok ? ch : '_';
    }
    name[i] = '\0';
    return dup_printf("%s/evals/%s-n%" PRIu32, dir, name, nodes);
}

static char *eval_dir(const planrun_t *pr, const fs_plan_spec_t *s, const fs_plan_cand_t *c)
{
    return eval_dir_in(pr->dir, s, c->choice, c->nodes);
}


static int make_dir(const char *path, fs_error_t *err)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return fs_error_set(err, FS_EIO, "%s: cannot create the directory: %s", path, strerror(errno));
    return 0;
}

/* The sweep of one candidate: the base --set list, the candidate's
 * overrides, the output trims and a one-point sweep of R replications. */
static int candidate_plan(const planrun_t *pr, const fs_plan_spec_t *s, const fs_plan_cand_t *c,
                          fs_sweep_plan_t **out, fs_error_t *err)
{
    char **cs = NULL;
    size_t ncs = 0;
    int rc = fs_plan_candidate_sets(s, c->choice, c->nodes, &cs, &ncs, err);
    if (rc)
        return rc;
    size_t n = pr->n_sets + ncs + 3, m = 0;
    const char **all = fs_calloc(n, sizeof *all);
    char *sweep = dup_printf("sweep={replications: %" PRIu64 "}", s->replications);
    if (!all || !sweep) {
        fs_free(all);
        fs_free(sweep);
        fs_plan_sets_free(cs, ncs);
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    }
    for (size_t i = 0; i < pr->n_sets; i++)
        all[m++] = pr->sets[i];
    for (size_t i = 0; i < ncs; i++)
        all[m++] = cs[i];
    if (!s->keep_jobs) {
        all[m++] = "output.jobs=false";
        all[m++] = "output.timeline_interval=0s";
    }
    all[m++] = sweep;
    rc = fs_sweep_plan_create(pr->scenario, all, m, out, err);
    fs_free(all);
    fs_free(sweep);
    fs_plan_sets_free(cs, ncs);
    return rc;
}

/* Shards: waits until every run of the candidate is complete (the other
 * shards run them at the same time). */
static int wait_runs(const planrun_t *pr, const char *dir, uint64_t reps, fs_error_t *err)
{
    struct timespec nap = {0, 250000000};
    for (;;) {
        size_t missing = 0;
        for (uint64_t r = 0; r < reps; r++) {
            char rel[64];
            fs_index_run_file(0, r, rel, sizeof rel);
            char *p = dup_printf("%s/%s", dir, rel);
            if (!p)
                return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
            missing += fs_index_run_state(p) != FS_RUN_COMPLETE;
            fs_free(p);
        }
        if (!missing)
            return 0;
        if (fs_cli_stop)
            return fs_error_set(err, FS_EINTR, "interrupted while waiting for the other shards' "
                                "runs in %s; run the same command again to continue", dir);
        nanosleep(&nap, NULL);
    }
}

/* Every metric of the spec from run r's summary. */
static int read_run(const fs_plan_spec_t *s, const char *dir, uint64_t r, double *out,
                    fs_error_t *err)
{
    char rel[64];
    fs_index_run_file(0, r, rel, sizeof rel);
    char *p = dup_printf("%s/%s", dir, rel);
    if (!p)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    char **names = NULL;
    double *vals = NULL;
    size_t n = 0;
    int rc = fs_index_read_summary(p, &names, &vals, &n, err);
    if (!rc)    /* and the services' figures, as SERVICE.COLUMN */
        rc = fs_index_read_services(p, &names, &vals, &n, err);
    for (size_t m = 0; !rc && m < s->n_metrics; m++) {
        if (fs_plan_metric((const char *const *)names, vals, n, s->metrics[m], &out[m]) == 0)
            continue;
        char list[2048] = "";
        size_t len = 0;
        for (size_t i = 0; i < n && len < sizeof list - 64; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
        rc = fs_error_set(err, FS_EINVAL, "plan: %s '%s' is not a summary metric of the runs "
                          "(finished_share, or one of: %s)",
                          m ? "the SLO metric" : "the objective (plan.objective)", s->metrics[m], list);
    }
    fs_index_free_summary(names, vals, n);
    fs_free(p);
    return rc;
}

static int eval_one(planrun_t *pr, const fs_plan_spec_t *s, const fs_plan_cand_t *c, double *out,
                    fs_error_t *err)
{
    fs_sweep_plan_t *plan = NULL;
    char *dir = eval_dir(pr, s, c);
    if (!dir)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    int rc = candidate_plan(pr, s, c, &plan, err);
    if (!rc) {
        fs_sweep_opts_t o = pr->o;
        o.dir = dir;
        fs_sweep_report_t rep;
        rc = fs_sweep_execute(plan, &o, &rep, err);
        pr->runs_done += rep.runs_done;
        if (rc == FS_EINTR) /* the sweep's advice (--resume) does not apply: plan always resumes */
            rc = fs_error_set(err, FS_EINTR, "interrupted in %s (%zu runs finished); run the same "
                              "command again to continue from the finished runs", dir,
                              pr->runs_done);
    }
    if (!rc && pr->o.n_shards > 1)
        rc = wait_runs(pr, dir, s->replications, err);
    for (uint64_t r = 0; !rc && r < s->replications; r++)
        rc = read_run(s, dir, r, out + r * s->n_metrics, err);
    fs_sweep_plan_destroy(plan);
    fs_free(dir);
    return rc;
}

static int eval_sweeps(void *ud, const fs_plan_spec_t *s, const fs_plan_cand_t *cands, size_t n,
                       double *out, fs_error_t *err)
{
    planrun_t *pr = ud;
    size_t per = (size_t)s->replications * s->n_metrics;
    for (size_t i = 0; i < n; i++) {
        if (pr->progress && pr->rank == 0)
            fprintf(stderr, "\r\033[Kfleetsim plan: %s at %" PRIu32 " nodes ...",
                    s->choices[cands[i].choice].name, cands[i].nodes);
        int rc = eval_one(pr, s, &cands[i], out + i * per, err);
        if (rc)
            return rc;
    }
    if (pr->progress && pr->rank == 0)
        fputs("\r\033[K", stderr);
    return 0;
}

/* "I/N" with 0 <= I < N. */
static int parse_shard(const char *s, size_t *i, size_t *n)
{
    const char *slash = strchr(s, '/');
    unsigned long long a, b;
    char left[32];
    if (!slash || (size_t)(slash - s) >= sizeof left)
        return -1;
    memcpy(left, s, (size_t)(slash - s));
    left[slash - s] = '\0';
    if (fs_cli_parse_u64(left, &a) || fs_cli_parse_u64(slash + 1, &b) || b == 0 || a >= b ||
        b > 1000000)
        return -1;
    *i = (size_t)a;
    *n = (size_t)b;
    return 0;
}

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
            if (!v || parse_shard(v, &a->shard, &a->n_shards))
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

/* Every metric of the spec (the objective, each SLO's) is a /summary
 * column of a run or a derived metric (fs_plan_metric): checked before any
 * candidate runs, with the key's position. */
static int check_metrics(const fs_config_t *cfg, const fs_plan_spec_t *s, fs_error_t *err)
{
    for (size_t m = 0; m < s->n_metrics; m++) {
        const char *name;
        double v;
        int is_count, ok = strcmp(s->metrics[m], "finished_share") == 0;
        fs_summary_t zero;
        memset(&zero, 0, sizeof zero);
        for (size_t i = 0; !ok && (name = fs_results_summary_field(i, &zero, &v, &is_count, NULL));
             i++)
            ok = strcmp(name, s->metrics[m]) == 0;
        const char *svc[64];
        size_t ns = 0;
        for (size_t i = 0; i < cfg->services.n && ns < 64; i++)
            svc[ns++] = cfg->services.list[i].name;
        char cols[512];
        if (!ok && fs_index_service_metric(s->metrics[m], svc, ns, cols, sizeof cols))
            ok = 1;
        if (ok)
            continue;
        char key[64], at[32], list[2048];
        if (m == 0)
            snprintf(key, sizeof key, "plan.objective");
        else
            snprintf(key, sizeof key, "plan.slo.%zu.metric", m - 1);
        fs_where_key(cfg->source_text, key, at, sizeof at);
        size_t len = 0;
        list[0] = '\0';
        for (size_t i = 0; len < sizeof list - 64 &&
                           (name = fs_results_summary_field(i, &zero, &v, &is_count, NULL)); i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", name);
        if (ns)
            return fs_error_set(err, FS_EINVAL, "%s:%s: %s: '%s' is not a summary metric of the "
                                "runs (finished_share; SERVICE.COLUMN for a service of services: "
                                "with COLUMN one of %s; or a /summary column of docs/results.md: "
                                "%s)", cfg->source_path ? cfg->source_path : "?", at, key,
                                s->metrics[m], cols, list);
        return fs_error_set(err, FS_EINVAL, "%s:%s: %s: '%s' is not a summary metric of the runs "
                            "(finished_share, or a /summary column of docs/results.md: %s)",
                            cfg->source_path ? cfg->source_path : "?", at, key, s->metrics[m],
                            list);
    }
    return 0;
}

/* Loads the scenario and builds the spec. */
static int load_spec(const plan_args_t *a, fs_config_t *cfg, fs_plan_spec_t **spec, fs_error_t *err)
{
    int rc = fs_scenario_load_file(a->scenario, a->sets, a->n_sets, cfg, err);
    if (rc)
        return rc;
    if (a->scan)
        cfg->plan.search = FS_PLAN_SCAN;
    rc = fs_plan_spec_create(cfg, spec, err);
    if (!rc && (rc = check_metrics(cfg, *spec, err)) != 0) {
        fs_plan_spec_destroy(*spec);
        *spec = NULL;
    }
    if (rc)
        fs_config_release(cfg);
    return rc;
}

/* The cash-flow view of point p (docs/plan.md "Cash flow"): the candidate's
 * scenario priced by the cost model (fs_cost_rates), the mean cost_total
 * and end_time of its runs.  Returns 0 (cf filled), 1 when the scenario has
 * no cost, or an FS_E* code. */
static int cash_flow(const plan_args_t *a, const fs_plan_spec_t *s, const fs_plan_point_t *p,
                     fs_plan_cash_t *cf, fs_error_t *err)
{
    memset(cf, 0, sizeof *cf);
    char **cs = NULL;
    size_t ncs = 0;
    int rc = fs_plan_candidate_sets(s, p->choice, p->nodes, &cs, &ncs, err);
    if (rc)
        return rc;
    const char **all = fs_calloc(a->n_sets + ncs + 1, sizeof *all);
    if (!all) {
        fs_plan_sets_free(cs, ncs);
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < a->n_sets; i++)
        all[m++] = a->sets[i];
    for (size_t i = 0; i < ncs; i++)
        all[m++] = cs[i];
    fs_config_t cfg;
    rc = fs_scenario_load_file(a->scenario, all, m, &cfg, err);
    fs_free(all);
    fs_plan_sets_free(cs, ncs);
    if (rc)
        return rc;
    fs_cost_rate_t *rates = fs_calloc(cfg.cluster.n_pools + 1, sizeof *rates);
    rc = rates ? fs_cost_rates(&cfg, rates, err) : fs_error_set(err, FS_ENOMEM, "out of memory");
    double dep_per_s = 0;
    for (size_t i = 0; rc == 0 && i < cfg.cluster.n_pools; i++) {
        double gpus = (double)cfg.cluster.pools[i].nodes * cfg.cluster.pools[i].gpus_per_node;
        if (rates[i].billing != FS_BILL_OWNED)
            continue;
        cf->purchase += rates[i].capex_per_gpu * gpus;
        dep_per_s += rates[i].dep_per_s * gpus;
    }
    cf->years = fs_time_to_s(cfg.cost.depreciation) / (365.25 * 86400);
    cf->residual = cf->purchase * cfg.cost.residual;
    cf->rate = cfg.plan.discount_rate;
    fs_free(rates);
    fs_config_release(&cfg);
    if (rc)
        return rc;
    /* the runs: their priced span and cost */
    char *dir = eval_dir_in(a->dir, s, p->choice, p->nodes);
    if (!dir)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    size_t k = 0;
    for (uint64_t r = 0; r < s->replications && !rc; r++) {
        char rel[64];
        fs_index_run_file(0, r, rel, sizeof rel);
        char *path = dup_printf("%s/%s", dir, rel);
        char **names = NULL;
        double *vals = NULL;
        size_t n = 0;
        double end = NAN, cost = NAN;
        rc = path ? fs_index_read_summary(path, &names, &vals, &n, err)
                  : fs_error_set(err, FS_ENOMEM, "plan: out of memory");
        for (size_t i = 0; !rc && i < n; i++) {
            if (strcmp(names[i], "end_time") == 0)
                end = vals[i];
            else if (strcmp(names[i], "cost_total") == 0)
                cost = vals[i];
        }
        if (!rc && isfinite(end) && isfinite(cost) && end > 0) {
            cf->run_s += end;
            cf->run_cost += cost;
            k++;
        }
        fs_index_free_summary(names, vals, n);
        fs_free(path);
    }
    fs_free(dir);
    if (rc)
        return rc;
    if (!k)
        return 1;
    cf->run_s /= (double)k;
    cf->run_cost /= (double)k;
    cf->depreciation = dep_per_s * cf->run_s;
    cf->depreciation_share = cf->purchase > 0 ? cf->depreciation / cf->purchase : NAN;
    cf->opex_per_year = (cf->run_cost - cf->depreciation) * (365.25 * 86400 / cf->run_s);
    fs_plan_cash_npv(cf);
    return 0;
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
static void print_json(const plan_args_t *a, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                       const char *out, const fs_plan_cash_t *cash, const int *have)
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
    fs_json_end_object(&j);
    fs_json_finish(&j);
}

static int finish_plan(const plan_args_t *a, const fs_config_t *cfg, const fs_plan_spec_t *spec,
                       const fs_plan_result_t *res, double wall, const planrun_t *pr,
                       fs_error_t *err)
{
    char *out = dup_printf("%s/plan.h5", a->dir);
    /* the cash-flow view of each choice's smallest fleet (the chosen among them) */
    fs_plan_cash_t *cash = fs_calloc(res->n_points + 1, sizeof *cash);
    int *have = fs_calloc(res->n_points + 1, sizeof *have);
    if (!out || !cash || !have) {
        fs_free(out);
        fs_free(cash);
        fs_free(have);
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    }
    int rc = 0;
    for (size_t c = 0; c < spec->n_choices && !rc; c++) {
        long k = res->best[c];
        if (k < 0)
            continue;
        int r = cash_flow(a, spec, &res->points[k], &cash[k], err);
        if (r == 0)
            have[k] = 1;
        else if (r != 1)
            rc = r;
    }
    fs_plan_meta_t meta = {cfg->name, cfg->source_text, a->scenario, a->sets, a->n_sets,
                           res->chosen >= 0 && have[res->chosen] ? &cash[res->chosen] : NULL};
    if (!rc)
        rc = a->shard == 0 ? fs_plan_write(out, spec, res, &meta, err) : 0;
    if (!rc && a->json) {
        print_json(a, spec, res, out, cash, have);
    } else if (!rc && !a->quiet) {
        fs_plan_print(stdout, spec, res);
        int any = 0;
        for (size_t k = 0; k < res->n_points; k++)
            any |= have[k];
        if (any) {
            printf("\ncash flow (finance view: the purchase at year 0, the run's other costs as a "
                   "yearly operating cost,\nthe residual value at the end of depreciation, "
                   "discounted at plan.discount_rate):\n");
            for (size_t c = 0; c < spec->n_choices; c++)
                if (res->best[c] >= 0 && have[res->best[c]])
                    print_cash(spec, &res->points[res->best[c]], &cash[res->best[c]]);
        }
        printf("\n%zu runs executed now (the others reused from %s/evals); %.2f s on %s%llu "
               "thread%s\n", pr->runs_done, a->dir, wall, pr->o.mpi ? "ranks x " : "", a->jobs,
               a->jobs == 1 ? "" : "s");
        if (a->shard == 0)
            printf("results      %s\n", out);
        else
            printf("shard %zu/%zu done; shard 0 writes %s\n", a->shard, a->n_shards, out);
    }
    fs_free(out);
    fs_free(cash);
    fs_free(have);
    return rc;
}

static int run_plan(const plan_args_t *a, planrun_t *pr, fs_error_t *err)
{
    fs_config_t cfg;
    fs_plan_spec_t *spec = NULL;
    int rc = load_spec(a, &cfg, &spec, err);
    if (rc)
        return rc;
    const char *inputs[FS_SCENARIO_MAX_INPUTS], *plan_h5 = "plan.h5";
    size_t n_inputs = 0;
    fs_scenario_inputs(&cfg, inputs, &n_inputs, FS_SCENARIO_MAX_INPUTS);
    if (!a->dry &&
        (rc = fs_out_check_dir_inputs("plan", a->dir, &plan_h5, 1, inputs, n_inputs, err)) != 0) {
        fs_plan_spec_destroy(spec);
        fs_config_release(&cfg);
        return rc;
    }
    if (a->dry) {
        if (pr->rank == 0)
            print_dry(spec);
        fs_plan_spec_destroy(spec);
        fs_config_release(&cfg);
        return 0;
    }
    char *evals = dup_printf("%s/evals", a->dir);
    rc = !evals ? fs_error_set(err, FS_ENOMEM, "plan: out of memory") : 0;
    if (!rc && pr->rank == 0 && (rc = make_dir(a->dir, err)) == 0)
        rc = make_dir(evals, err);
    fs_free(evals);
    double t0 = fs_clock_wall();
    fs_plan_result_t *res = NULL;
    if (!rc)
        rc = fs_plan_search(spec, eval_sweeps, pr, &res, err);
    if (!rc && pr->rank == 0)
        rc = finish_plan(a, &cfg, spec, res, fs_clock_wall() - t0, pr, err);
    fs_plan_result_destroy(res);
    fs_plan_spec_destroy(spec);
    fs_config_release(&cfg);
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

    planrun_t pr;
    memset(&pr, 0, sizeof pr);
    pr.scenario = a.scenario;
    pr.sets = a.sets;
    pr.n_sets = a.n_sets;
    pr.dir = a.dir;
    pr.rank = rank;
    fs_sweep_opts_init(&pr.o);
    pr.o.threads = (unsigned)a.jobs;
    pr.o.shard = a.shard;
    pr.o.n_shards = a.n_shards;
    pr.o.resume = 1;
    pr.progress = !a.quiet && rank == 0 && isatty(STDERR_FILENO);
    pr.o.interrupt = &fs_cli_stop;
    pr.o.mpi = use_mpi;
    int rc = run_plan(&a, &pr, &err);
    if (rc && rank == 0)
        fprintf(stderr, "fleetsim plan: %s\n", err.msg);
    fs_free(a.sets);
    rc = rc ? fs_error_exit_status(rc) : 0;
    return use_mpi ? fs_sweep_mpi_finish(rc) : rc;
}
