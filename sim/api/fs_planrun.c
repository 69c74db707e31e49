/*
 * The wiring of a capacity plan (fs_planrun.h, docs/plan.md).  Each
 * candidate fleet is evaluated by the sweep machinery (fs_sweeprun.h): the
 * candidate is a one-point sweep of plan.replications runs
 * ("sweep={replications: R}" plus the candidate's overrides) executed into
 * DIR/evals/<choice>-n<N>/ on threads, MPI ranks or as one shard, exactly as
 * `fleetsim sweep` runs; its run files are then read back (every /summary
 * metric, by name).  Replication r of every candidate uses index r: common
 * random numbers.  A finished candidate's directory is reused (resume), so
 * an interrupted plan continues where it stopped and shards find the runs
 * of the others.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_planrun.h"
#include "../../analysis/fs_h5read.h"
#include "../../analysis/fs_index.h"
#include "../../analysis/fs_results.h"
#include "../../models/fs_cost.h"
#include "../../models/fs_purchase.h"
#include "../../scenarios/fs_scenario.h"
#include "../../scenarios/fs_sweep.h"
#include "../../scenarios/fs_where.h"
#include "../fs_alloc.h"
#include "../fs_clock.h"
#include "../fs_out.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void fs_planrun_opts_init(fs_planrun_opts_t *o)
{
    memset(o, 0, sizeof *o);
    fs_sweep_opts_init(&o->o);
    o->o.threads = 1;
    o->o.resume = 1;    /* a plan always continues from the finished candidates */
}

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

static int stopped(const fs_planrun_opts_t *o) { return o->o.interrupt && *o->o.interrupt; }

/* The scenario with the overrides sets[0..n). */
static int load_config(const fs_planrun_opts_t *o, const char *const *sets, size_t n,
                       fs_config_t *cfg, fs_error_t *err)
{
    return o->path ? fs_scenario_load_file(o->path, sets, n, cfg, err)
                   : fs_scenario_load_string(o->name, o->text, sets, n, cfg, err);
}

/* The base overrides, then the candidate's (fs_plan_candidate_sets), then
 * extra: a NULL-terminated list appended after them.  *out is freed with
 * fs_free (the strings are borrowed; *cs with fs_plan_sets_free). */
static int candidate_sets(const fs_planrun_opts_t *o, const fs_plan_spec_t *s, size_t choice,
                          uint32_t nodes, const char *const *extra, const char ***out, size_t *n,
                          char ***cs, size_t *ncs, fs_error_t *err)
{
    int rc = fs_plan_candidate_sets(s, choice, nodes, cs, ncs, err);
    if (rc)
        return rc;
    size_t n_extra = 0;
    while (extra && extra[n_extra])
        n_extra++;
    const char **all = fs_calloc(o->n_sets + *ncs + n_extra + 1, sizeof *all);
    if (!all) {
        fs_plan_sets_free(*cs, *ncs);
        *cs = NULL;
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < o->n_sets; i++)
        all[m++] = o->sets[i];
    for (size_t i = 0; i < *ncs; i++)
        all[m++] = (*cs)[i];
    for (size_t i = 0; i < n_extra; i++)
        all[m++] = extra[i];
    *out = all;
    *n = m;
    return 0;
}

/* DIR/evals/<choice>-n<N>: the choice's name with anything but [A-Za-z0-9._-]
 * replaced by '_'. */
static char *eval_dir(const char *dir, const fs_plan_spec_t *s, size_t choice, uint32_t nodes)
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

/* DIR/evals/<choice>-n<N>-q<Q>-x<SCALE>: quarter q (0-based) of a
 * candidate at demand scale `scale` (plan.years). */
static char *quarter_dir(const fs_planrun_opts_t *o, const fs_plan_spec_t *s, size_t choice,
                         uint32_t nodes, size_t q, double scale)
{
    char *base = eval_dir(o->dir, s, choice, nodes);
    char *dir = base ? dup_printf("%s-q%zu-x%.6f", base, q + 1, scale) : NULL;
    fs_free(base);
    return dir;
}

static int make_dir(const char *path, fs_error_t *err)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return fs_error_set(err, FS_EIO, "%s: cannot create the directory: %s", path, strerror(errno));
    return 0;
}

/* The sweep of one candidate: the base overrides, the candidate's, the
 * output trims and a one-point sweep of R replications. */
static int candidate_plan(const fs_planrun_opts_t *o, const fs_plan_spec_t *s,
                          const fs_plan_cand_t *c, fs_sweep_plan_t **out, fs_error_t *err)
{
    char *sweep = dup_printf("sweep={replications: %" PRIu64 "}", s->replications);
    if (!sweep)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    const char *trims[] = {"output.jobs=false", "output.timeline_interval=0s", sweep, NULL};
    const char *const *extra = s->keep_jobs ? trims + 2 : trims;
    const char **all = NULL;
    char **cs = NULL;
    size_t n = 0, ncs = 0;
    int rc = candidate_sets(o, s, c->choice, c->nodes, extra, &all, &n, &cs, &ncs, err);
    if (!rc)
        rc = o->path ? fs_sweep_plan_create(o->path, all, n, out, err)
                     : fs_sweep_plan_from_text(o->name, o->text, all, n, out, err);
    fs_free(all);
    fs_plan_sets_free(cs, ncs);
    fs_free(sweep);
    return rc;
}

/* Shards: waits until every run of the candidate is complete (the other
 * shards run them at the same time). */
static int wait_runs(const fs_planrun_opts_t *o, const char *dir, uint64_t reps, fs_error_t *err)
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
        if (stopped(o))
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

typedef struct eval_ctx {
    const fs_planrun_opts_t *o;
    size_t runs_done;
} eval_ctx_t;

static int eval_one(eval_ctx_t *ec, const fs_plan_spec_t *s, const fs_plan_cand_t *c, double *out,
                    fs_error_t *err)
{
    const fs_planrun_opts_t *o = ec->o;
    fs_sweep_plan_t *plan = NULL;
    char *dir = eval_dir(o->dir, s, c->choice, c->nodes);
    if (!dir)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    int rc = candidate_plan(o, s, c, &plan, err);
    if (!rc) {
        fs_sweep_opts_t so = o->o;
        so.dir = dir;
        fs_sweep_report_t rep;
        rc = fs_sweep_execute(plan, &so, &rep, err);
        ec->runs_done += rep.runs_done;
        if (rc == FS_EINTR) /* the sweep's advice (--resume) does not apply: plan always resumes */
            rc = fs_error_set(err, FS_EINTR, "interrupted in %s (%zu runs finished); run the same "
                              "command again to continue from the finished runs", dir,
                              ec->runs_done);
    }
    if (!rc && o->o.n_shards > 1)
        rc = wait_runs(o, dir, s->replications, err);
    for (uint64_t r = 0; !rc && r < s->replications; r++)
        rc = read_run(s, dir, r, out + r * s->n_metrics, err);
    fs_sweep_plan_destroy(plan);
    fs_free(dir);
    return rc;
}

/* The scale of quarter q at growth g and arrival factor a. */
static double qscale(double base, double a, double g, size_t q)
{
    return base * a * pow(1 + g, (double)q / 4);
}

static int quarter_sweep(const fs_planrun_opts_t *o, const fs_plan_spec_t *s, const fs_config_t *cfg,
                         size_t choice, uint32_t nodes, size_t q, double scale, char **dir_out,
                         size_t *runs, fs_error_t *err);

/* With plan.years (spec->n_periods quarters): candidate c in every quarter,
 * at that quarter's demand and fleet (the quarter runs the cash flow then
 * reuses), in order, up to the first quarter that misses.  out: n_periods x
 * R x n_metrics. */
static int eval_quarters(eval_ctx_t *ec, const fs_plan_spec_t *s, const fs_plan_cand_t *c,
                         double *out, fs_error_t *err)
{
    const fs_planrun_opts_t *o = ec->o;
    const char **all = NULL;
    char **cs = NULL;
    size_t m = 0, ncs = 0;
    int rc = candidate_sets(o, s, c->choice, c->nodes, NULL, &all, &m, &cs, &ncs, err);
    fs_config_t cfg;
    int loaded = !rc && (rc = load_config(o, all, m, &cfg, err)) == 0;
    fs_free(all);
    fs_plan_sets_free(cs, ncs);
    size_t per = (size_t)s->replications * s->n_metrics;
    for (size_t q = 0; !rc && q < s->n_periods; q++) {
        char *dir = NULL;
        double sc = qscale(cfg.workload.synth.scale, 1, cfg.plan.demand_growth, q);
        rc = quarter_sweep(o, s, &cfg, c->choice, c->nodes, q, sc, &dir, &ec->runs_done, err);
        for (uint64_t r = 0; !rc && r < s->replications; r++)
            rc = read_run(s, dir, r, out + q * per + r * s->n_metrics, err);
        fs_free(dir);
        int ok = rc ? 0 : fs_plan_period_meets(s, out + q * per);
        if (ok < 0)
            rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
        if (!ok)
            break;
    }
    if (loaded)
        fs_config_release(&cfg);
    return rc;
}

static int eval_sweeps(void *ud, const fs_plan_spec_t *s, const fs_plan_cand_t *cands, size_t n,
                       double *out, fs_error_t *err)
{
    eval_ctx_t *ec = ud;
    size_t per = s->n_periods * (size_t)s->replications * s->n_metrics;
    for (size_t i = 0; i < n; i++) {
        if (ec->o->on_candidate && ec->o->rank == 0)
            ec->o->on_candidate(ec->o->ud, s->choices[cands[i].choice].name, cands[i].nodes);
        int rc = s->n_periods > 1 ? eval_quarters(ec, s, &cands[i], out + i * per, err)
                                  : eval_one(ec, s, &cands[i], out + i * per, err);
        if (rc)
            return rc;
    }
    return 0;
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

int fs_planrun_load(const fs_planrun_opts_t *o, fs_planrun_t *p, fs_error_t *err)
{
    memset(p, 0, sizeof *p);
    if (!o->path && !o->text)
        return fs_error_set(err, FS_EINVAL, "plan: no scenario");
    int rc = load_config(o, o->sets, o->n_sets, &p->cfg, err);
    if (rc)
        return rc;
    if (o->scan)
        p->cfg.plan.search = FS_PLAN_SCAN;
    rc = fs_plan_spec_create(&p->cfg, &p->spec, err);
    if (!rc && (rc = check_metrics(&p->cfg, p->spec, err)) != 0) {
        fs_plan_spec_destroy(p->spec);
        p->spec = NULL;
    }
    if (rc) {
        fs_config_release(&p->cfg);
        memset(p, 0, sizeof *p);
        return rc;
    }
    p->loaded = 1;
    return 0;
}

/* The cash-flow view of point pt (docs/plan.md "Cash flow"): the
 * candidate's scenario priced by the cost model (fs_cost_rates), the mean
 * cost_total and end_time of its runs.  Returns 0 (cf filled), 1 when the
 * scenario has no cost, or an FS_E* code. */
static int cash_flow(const fs_planrun_opts_t *o, const fs_plan_spec_t *s,
                     const fs_plan_point_t *pt, fs_plan_cash_t *cf, fs_error_t *err)
{
    memset(cf, 0, sizeof *cf);
    const char **all = NULL;
    char **cs = NULL;
    size_t m = 0, ncs = 0;
    int rc = candidate_sets(o, s, pt->choice, pt->nodes, NULL, &all, &m, &cs, &ncs, err);
    if (rc)
        return rc;
    fs_config_t cfg;
    rc = load_config(o, all, m, &cfg, err);
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
    double scale = cfg.workload.synth.scale;
    fs_free(rates);
    fs_config_release(&cfg);
    if (rc)
        return rc;
    /* the runs: their priced span and cost (with plan.years: quarter 1's,
     * the scenario's own demand) */
    char *dir = s->n_periods > 1 ? quarter_dir(o, s, pt->choice, pt->nodes, 0, scale)
                                 : eval_dir(o->dir, s, pt->choice, pt->nodes);
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

/* ---- the quarterly cash flow (plan.years > 0) --------------------------------------------- */

/* Quarter q of the analysis (0-based): batch quarter Q (1-based) is, in
 * the run of quarter q, delivered at the start (Q <= q + 1) or Q - q - 1
 * quarters after it: cost.purchases.I.quarter = max(1, Q - q). */
static int quarter_sets(const fs_config_t *cfg, size_t q, double scale, char ***out, size_t *n)
{
    size_t m = 0;
    char **v = fs_calloc(cfg->cost.n_purchases + 2, sizeof *v);
    if (!v)
        return FS_ENOMEM;
    v[m++] = dup_printf("workload.synthetic.scale=%.17g", scale);
    for (size_t i = 0; i < cfg->cost.n_purchases; i++) {
        uint32_t Q = cfg->cost.purchases[i].quarter;
        if (Q)
            v[m++] = dup_printf("cost.purchases.%zu.quarter=%u", i,
                                Q > q + 1 ? Q - (uint32_t)q : 1u);
    }
    for (size_t i = 0; i < m; i++)
        if (!v[i]) {
            fs_plan_sets_free(v, m);
            return FS_ENOMEM;
        }
    *out = v;
    *n = m;
    return 0;
}

/* One quarter's run r: its cost split from /cost_pools and its span. */
static int read_qrun(const char *dir, uint64_t r, fs_plan_qrun_t *u, fs_error_t *err)
{
    char rel[64];
    fs_index_run_file(0, r, rel, sizeof rel);
    char *path = dup_printf("%s/%s", dir, rel);
    if (!path)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    memset(u, 0, sizeof *u);
    char **names = NULL;
    double *vals = NULL;
    size_t n = 0;
    int rc = fs_index_read_summary(path, &names, &vals, &n, err);
    for (size_t i = 0; !rc && i < n; i++)
        if (strcmp(names[i], "end_time") == 0)
            u->span_s = vals[i];
    fs_index_free_summary(names, vals, n);
    fs_h5file_t *f = NULL;
    if (!rc)
        rc = fs_h5read_open(path, &f, err);
    size_t rows = 0;
    if (!rc && !fs_h5read_has(f, "cost_pools"))
        rc = fs_error_set(err, FS_EINVAL, "%s: no /cost_pools: plan.years needs a cost model "
                          "(prices for every pool, docs/cost.md)", path);
    if (!rc)
        rc = fs_h5read_rows(f, "cost_pools", &rows, err);
    static const char *const cols[] = {"capex", "ops", "energy", "colocation", "cloud",
                                       "gpu_hours_busy"};
    double *col = rc ? NULL : fs_calloc(rows + 1, sizeof *col);
    if (!rc && !col)
        rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    double *dst[] = {&u->dep, &u->ops, &u->energy, &u->colo, &u->rent, &u->gpu_h};
    for (size_t c = 0; !rc && c < 6; c++) {
        rc = fs_h5read_f64(f, "cost_pools", cols[c], col, err);
        for (size_t i = 0; !rc && i < rows; i++)
            *dst[c] += col[i];
    }
    fs_free(col);
    if (f)
        fs_h5read_close(f);
    fs_free(path);
    return rc;
}

/* Runs (or reuses) quarter q of candidate (choice, nodes) at demand scale
 * `scale`: DIR/evals/<choice>-n<N>-q<Q>-x<SCALE>, returned in *dir_out
 * (fs_free) once its R runs are complete. */
static int quarter_sweep(const fs_planrun_opts_t *o, const fs_plan_spec_t *s, const fs_config_t *cfg,
                         size_t choice, uint32_t nodes, size_t q, double scale, char **dir_out,
                         size_t *runs, fs_error_t *err)
{
    *dir_out = NULL;
    char **qs = NULL;
    size_t nqs = 0;
    if (quarter_sets(cfg, q, scale, &qs, &nqs))
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    char *sweep = dup_printf("sweep={replications: %" PRIu64 "}", s->replications);
    const char **extra = fs_calloc(nqs + 4, sizeof *extra);
    char *dir = quarter_dir(o, s, choice, nodes, q, scale);
    int rc = !sweep || !extra || !dir ? fs_error_set(err, FS_ENOMEM, "plan: out of memory") : 0;
    const char **all = NULL;
    char **cs = NULL;
    size_t n = 0, ncs = 0, m = 0;
    if (!rc) {
        extra[m++] = "output.jobs=false";
        extra[m++] = "output.timeline_interval=0s";
        extra[m++] = sweep;
        for (size_t i = 0; i < nqs; i++)
            extra[m++] = qs[i];
        rc = candidate_sets(o, s, choice, nodes, extra, &all, &n, &cs, &ncs, err);
    }
    fs_sweep_plan_t *plan = NULL;
    if (!rc)
        rc = o->path ? fs_sweep_plan_create(o->path, all, n, &plan, err)
                     : fs_sweep_plan_from_text(o->name, o->text, all, n, &plan, err);
    if (!rc) {
        fs_sweep_opts_t so = o->o;
        so.dir = dir;
        fs_sweep_report_t rep;
        rc = fs_sweep_execute(plan, &so, &rep, err);
        *runs += rep.runs_done;
        if (rc == FS_EINTR)
            rc = fs_error_set(err, FS_EINTR, "interrupted in %s; run the same command again to "
                              "continue from the finished runs", dir);
    }
    if (!rc && o->o.n_shards > 1)
        rc = wait_runs(o, dir, s->replications, err);
    fs_sweep_plan_destroy(plan);
    fs_free(all);
    fs_plan_sets_free(cs, ncs);
    fs_plan_sets_free(qs, nqs);
    fs_free(extra);
    fs_free(sweep);
    if (rc)
        fs_free(dir);
    else
        *dir_out = dir;
    return rc;
}

/* Runs (or reuses) quarter q of fleet pt at demand scale `scale` and reads
 * its R runs into out[r * n_q + q]. */
static int run_quarter(const fs_planrun_opts_t *o, const fs_plan_spec_t *s, const fs_config_t *cfg,
                       const fs_plan_point_t *pt, size_t q, size_t n_q, double scale,
                       fs_plan_qrun_t *out, size_t *runs, fs_error_t *err)
{
    char *dir = NULL;
    int rc = quarter_sweep(o, s, cfg, pt->choice, pt->nodes, q, scale, &dir, runs, err);
    for (uint64_t r = 0; !rc && o->rank == 0 && r < s->replications; r++)
        rc = read_qrun(dir, r, &out[r * n_q + q], err);
    fs_free(dir);
    return rc;
}

/* The fleet of quarter q (0-based) in months from the start: a batch's
 * delivery quarter (0-based). */
static size_t batch_quarter(const fs_purchase_cfg_t *b)
{
    return (size_t)(fs_purchase_at(b) / FS_COST_QUARTER_US);
}

/* The fleet's schedule from its scenario: GPUs per billing each quarter,
 * owned capex bought each quarter, lease payments committed beyond the
 * period. */
static int fleet_schedule(const fs_config_t *cfg, const fs_cost_rate_t *rates, size_t n_q,
                          fs_plan_fleet_t *fl)
{
    fl->scale = fs_calloc(n_q, sizeof *fl->scale);
    fl->mix = fs_calloc(n_q * FS_PLAN_MIX, sizeof *fl->mix);
    fl->buy = fs_calloc(n_q, sizeof *fl->buy);
    if (!fl->scale || !fl->mix || !fl->buy)
        return FS_ENOMEM;
    double months = (double)n_q * 3, *after = NULL; /* committed lease $ per month after */
    size_t n_after = 0;
    const fs_cost_cfg_t *cc = &cfg->cost;
    for (size_t p = 0; p < cfg->cluster.n_pools; p++) {
        const fs_pool_cfg_t *pc = &cfg->cluster.pools[p];
        const fs_cost_pool_cfg_t *row = NULL;
        for (size_t i = 0; i < cc->n_pools; i++)
            if (cc->pools[i].pool && strcmp(cc->pools[i].pool, pc->name) == 0)
                row = &cc->pools[i];
        int bill = rates[p].billing;
        /* the pool's own nodes (from its online date), then its batches */
        uint64_t bought = 0;
        for (size_t i = 0; i < cc->n_purchases; i++)
            if (cc->purchases[i].pool && strcmp(cc->purchases[i].pool, pc->name) == 0)
                bought += cc->purchases[i].nodes;
        for (size_t i = 0; i <= cc->n_purchases; i++) {
            double nodes;
            size_t q0;
            if (i == cc->n_purchases) {
                nodes = (double)(pc->nodes - bought);
                q0 = row ? (size_t)(row->online / FS_COST_QUARTER_US) : 0;
            } else {
                const fs_purchase_cfg_t *b = &cc->purchases[i];
                if (!b->pool || strcmp(b->pool, pc->name) != 0)
                    continue;
                nodes = b->nodes;
                q0 = batch_quarter(b);
            }
            double gpus = nodes * pc->gpus_per_node;
            if (q0 >= n_q || gpus <= 0)
                continue;
            for (size_t q = q0; q < n_q; q++)
                fl->mix[q * FS_PLAN_MIX + (size_t)bill] += gpus;
            if (bill == FS_BILL_OWNED)
                fl->buy[q0] += gpus * rates[p].capex_per_gpu;
            if (bill == FS_BILL_LEASE && row) {
                double end = (double)q0 * 3 + row->lease_term;
                for (double mo = months; mo < end; mo += 1) {
                    size_t k = (size_t)(mo - months);
                    if (k >= n_after) {
                        size_t cap = n_after;
                        if (fs_grow((void **)&after, &cap, k + 1, sizeof *after)) {
                            fs_free(after);
                            return FS_ENOMEM;
                        }
                        for (size_t j = n_after; j <= k; j++)
                            after[j] = 0;
                        n_after = k + 1;
                    }
                    after[k] += gpus * row->lease_rate;
                }
            }
        }
    }
    fl->n_tail = (n_after + 2) / 3;
    fl->tail = fs_calloc(fl->n_tail + 1, sizeof *fl->tail);
    if (!fl->tail) {
        fs_free(after);
        return FS_ENOMEM;
    }
    for (size_t k = 0; k < n_after; k++)
        fl->tail[k / 3] += after[k];
    fs_free(after);
    return 0;
}

static int quarters(const fs_planrun_opts_t *o, fs_planrun_t *p, fs_error_t *err)
{
    const fs_plan_spec_t *s = p->spec;
    const fs_plan_result_t *res = p->res;
    const fs_plan_cfg_t *pc = &p->cfg.plan;
    fs_plan_fin_t *f = fs_calloc(1, sizeof *f);
    if (!f)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    p->fin = f;
    f->years = pc->years;
    f->n_q = (size_t)llround(pc->years * 4);
    f->reps = (size_t)s->replications;
    f->rate = pc->discount_rate;
    f->demand_growth = pc->demand_growth;
    f->elec_growth = pc->electricity_growth;
    f->price_decline = pc->gpu_price_decline;
    f->sensitivity = pc->sensitivity;
    f->dep_years = fs_time_to_s(p->cfg.cost.depreciation) / (365.25 * 86400);
    f->residual_share = p->cfg.cost.residual;
    f->n_fleets = s->n_choices;
    f->baseline = -1;
    f->sens_choice = -1;
    f->fleets = fs_calloc(s->n_choices, sizeof *f->fleets);
    if (!f->fleets)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    size_t Q = f->n_q, R = f->reps;
    int rc = 0;
    double least = INFINITY;
    for (size_t c = 0; c < s->n_choices && !rc; c++) {
        fs_plan_fleet_t *fl = &f->fleets[c];
        fl->point = res->best[c];
        if (fl->point < 0)
            continue;
        const fs_plan_point_t *pt = &res->points[fl->point];
        const char **all = NULL;
        char **cs = NULL;
        size_t m = 0, ncs = 0;
        rc = candidate_sets(o, s, c, pt->nodes, NULL, &all, &m, &cs, &ncs, err);
        fs_config_t cfg;
        int loaded = !rc && (rc = load_config(o, all, m, &cfg, err)) == 0;
        fs_free(all);
        fs_plan_sets_free(cs, ncs);
        fs_cost_rate_t *rates = loaded ? fs_calloc(cfg.cluster.n_pools + 1, sizeof *rates) : NULL;
        if (loaded && !rates)
            rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
        if (!rc) {
            int r = fs_cost_rates(&cfg, rates, err);
            if (r == 1)
                r = fs_error_set(err, FS_EINVAL, "plan.years: choice '%s' has no price for some "
                                 "pool (give the cost block's prices, docs/cost.md)",
                                 s->choices[c].name);
            rc = r;
        }
        if (!rc && fleet_schedule(&cfg, rates, Q, fl))
            rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
        double base = loaded ? cfg.workload.synth.scale : 1;
        fl->runs = rc ? NULL : fs_calloc(R * Q, sizeof *fl->runs);
        if (!rc && !fl->runs)
            rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
        f->quarter_runs += Q * R;
        for (size_t q = 0; q < Q && !rc; q++) {
            fl->scale[q] = qscale(1, 1, f->demand_growth, q);
            rc = run_quarter(o, s, &cfg, pt, q, Q, qscale(base, 1, f->demand_growth, q), fl->runs,
                             &f->runs, err);
        }
        if (!rc && fl->buy[0] < least) {
            least = fl->buy[0];
            f->baseline = (long)c;
        }
        /* the chosen fleet's demand sensitivities: re-run */
        if (!rc && pc->sensitivity > 0 && (long)fl->point == res->chosen) {
            f->sens_choice = (long)c;
            static const char *const names[] = {"electricity", "gpu_price", "demand_growth",
                                                "arrival_rate"};
            double X = pc->sensitivity;
            for (size_t i = 0; i < 4 && !rc; i++) {
                fs_plan_sens_t *sv = &f->sens[f->n_sens++];
                sv->param = names[i];
                sv->rerun = i >= 2;
                sv->lo_factor = 1 - X;
                sv->hi_factor = 1 + X;
                if (!sv->rerun)
                    continue;
                sv->runs_lo = fs_calloc(R * Q, sizeof *sv->runs_lo);
                sv->runs_hi = fs_calloc(R * Q, sizeof *sv->runs_hi);
                if (!sv->runs_lo || !sv->runs_hi) {
                    rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
                    break;
                }
                for (int side = 0; side < 2 && !rc; side++) {
                    double k = side ? sv->hi_factor : sv->lo_factor;
                    for (size_t q = 0; q < Q && !rc; q++) {
                        double sc = i == 2 ? qscale(base, 1, f->demand_growth * k, q)
                                           : qscale(base, k, f->demand_growth, q);
                        /* at a base quarter's demand (quarter 1 of the growth variants) the
                         * runs are the base quarter's, reused */
                        if (sc != qscale(base, 1, f->demand_growth, q))
                            f->sens_runs += R;
                        rc = run_quarter(o, s, &cfg, pt, q, Q, sc, side ? sv->runs_hi : sv->runs_lo,
                                         &f->runs, err);
                    }
                }
            }
        }
        fs_free(rates);
        if (loaded)
            fs_config_release(&cfg);
    }
    if (!rc && pc->baseline)
        for (size_t c = 0; c < s->n_choices; c++)
            if (strcmp(s->choices[c].name, pc->baseline) == 0)
                f->baseline = f->fleets[c].point >= 0 ? (long)c : -1;
    if (!rc && o->rank == 0 && fs_plan_fin_finish(f, s->confidence))
        rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    return rc;
}

int fs_planrun_execute(const fs_planrun_opts_t *o, fs_planrun_t *p, fs_error_t *err)
{
    if (!p->loaded)
        return fs_error_set(err, FS_EUSAGE, "plan: executed before it was loaded");
    const char *inputs[FS_SCENARIO_MAX_INPUTS], *plan_h5 = "plan.h5";
    size_t n_inputs = 0;
    fs_scenario_inputs(&p->cfg, inputs, &n_inputs, FS_SCENARIO_MAX_INPUTS);
    int rc = fs_out_check_dir_inputs("plan", o->dir, &plan_h5, 1, inputs, n_inputs, err);
    if (rc)
        return rc;
    p->plan_file = dup_printf("%s/plan.h5", o->dir);
    char *evals = dup_printf("%s/evals", o->dir);
    rc = !evals || !p->plan_file ? fs_error_set(err, FS_ENOMEM, "plan: out of memory") : 0;
    if (!rc && o->rank == 0 && (rc = make_dir(o->dir, err)) == 0)
        rc = make_dir(evals, err);
    fs_free(evals);
    double t0 = fs_clock_wall();
    eval_ctx_t ec = {o, 0};
    if (!rc)
        rc = fs_plan_search(p->spec, eval_sweeps, &ec, &p->res, err);
    p->runs_done = ec.runs_done;
    if (!rc && p->cfg.plan.years > 0) { /* every rank runs the quarters (MPI, shards) */
        rc = quarters(o, p, err);
        if (p->fin)
            p->runs_done += p->fin->runs;
    }
    if (rc || o->rank != 0) {
        p->wall_s = fs_clock_wall() - t0;
        return rc;
    }
    /* the cash-flow view of each choice's smallest fleet (the chosen among them) */
    const fs_plan_result_t *res = p->res;
    p->cash = fs_calloc(res->n_points + 1, sizeof *p->cash);
    p->have = fs_calloc(res->n_points + 1, sizeof *p->have);
    if (!p->cash || !p->have)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    for (size_t c = 0; c < p->spec->n_choices && !rc; c++) {
        long k = res->best[c];
        if (k < 0)
            continue;
        int r = cash_flow(o, p->spec, &res->points[k], &p->cash[k], err);
        if (r == 0)
            p->have[k] = 1;
        else if (r != 1)
            rc = r;
    }
    fs_plan_meta_t meta = {p->cfg.name, p->cfg.source_text, o->path, o->sets, o->n_sets,
                           res->chosen >= 0 && p->have[res->chosen] ? &p->cash[res->chosen] : NULL,
                           p->fin};
    if (!rc && o->o.shard == 0)
        rc = fs_plan_write(p->plan_file, p->spec, res, &meta, err);
    p->wall_s = fs_clock_wall() - t0;
    return rc;
}

void fs_planrun_release(fs_planrun_t *p)
{
    if (!p)
        return;
    fs_free(p->cash);
    fs_free(p->have);
    fs_free(p->plan_file);
    fs_plan_fin_destroy(p->fin);
    fs_plan_result_destroy(p->res);
    fs_plan_spec_destroy(p->spec);
    if (p->loaded)
        fs_config_release(&p->cfg);
    memset(p, 0, sizeof *p);
}
