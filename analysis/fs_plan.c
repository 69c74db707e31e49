/*
 * The search of `fleetsim plan` and its output (see fs_plan.h and
 * docs/plan.md).
 *
 * Why bisection per choice, in lockstep rounds: the node count is the one
 * monotone dimension (more nodes of a pool never make waits longer), so
 * the smallest count that meets the SLOs is found in 1 + ceil(log2 n)
 * evaluations instead of n; advancing every choice by one step per round
 * gives the evaluator one batch of (choices x replications) independent
 * runs to spread over threads or ranks.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_plan.h"
#include "fs_fmt.h"
#include "fs_h5util.h"
#include "../scenarios/fs_units.h"
#include "../scenarios/fs_where.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_out.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>
#include <hdf5_hl.h>

#ifndef FLEETSIM_VERSION
#define FLEETSIM_VERSION "unknown"
#endif

#define MAX_COUNTS 1000000u /* node counts per choice */

/* ---- spec ------------------------------------------------------------------------ */

void fs_plan_sets_free(char **sets, size_t n)
{
    for (size_t i = 0; sets && i < n; i++)
        fs_free(sets[i]);
    fs_free(sets);
}

void fs_plan_spec_destroy(fs_plan_spec_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_slo; i++) {
        fs_free(s->slo[i].metric);
        fs_free(s->slo[i].text);
    }
    fs_free(s->slo);
    for (size_t i = 0; i < s->n_choices; i++) {
        fs_plan_choice_t *c = &s->choices[i];
        fs_free(c->name);
        fs_free(c->pool);
        fs_free(c->gpu);
        fs_free(c->nodes);
        fs_plan_sets_free(c->sets, c->n_sets);
    }
    fs_free(s->choices);
    fs_plan_sets_free(s->metrics, s->n_metrics);
    fs_free(s);
}

static char *printf_dup(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *printf_dup(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = fs_malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* "LINE:COL" of the key path (printf-style) in cfg's scenario text. */
static const char *where(const fs_config_t *cfg, char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static const char *where(const fs_config_t *cfg, char *buf, size_t n, const char *fmt, ...)
{
    char path[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    fs_where_key(cfg->source_text, path, buf, n);
    return buf;
}

/* A bound: a plain number, or a duration (in seconds). */
static int parse_bound(const char *text, double *out)
{
    fs_error_t e;
    if (fs_units_parse_number(text, out, &e) == 0)
        return 0;
    fs_time_t t;
    if (fs_units_parse_duration(text, &t, &e) == 0) {
        *out = (double)t / 1e6;
        return 0;
    }
    return -1;
}

static int spec_slo(const fs_config_t *cfg, fs_plan_spec_t *s, fs_error_t *err)
{
    const char *file = cfg->source_path ? cfg->source_path : "<scenario>";
    const fs_plan_cfg_t *p = &cfg->plan;
    if (p->n_slo && !(s->slo = fs_calloc(p->n_slo, sizeof *s->slo)))
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    for (size_t i = 0; i < p->n_slo; i++) {
        const fs_plan_slo_cfg_t *c = &p->slo[i];
        fs_plan_slo_t *o = &s->slo[i];
        s->n_slo = i + 1;
        char at[32];
        if (!c->max == !c->min)
            return fs_error_set(err, FS_EINVAL, "%s:%s: plan.slo.%zu (%s): give exactly one of max "
                                "and min", file, where(cfg, at, sizeof at, "plan.slo.%zu", i), i,
                                c->metric);
        const char *text = c->max ? c->max : c->min;
        o->kind = c->max ? FS_PLAN_LE : FS_PLAN_GE;
        if (parse_bound(text, &o->bound) != 0)
            return fs_error_set(err, FS_EINVAL, "%s:%s: plan.slo.%zu.%s: '%s' is not a number or "
                                "a duration such as 1h", file,
                                where(cfg, at, sizeof at, "plan.slo.%zu.%s", i, c->max ? "max" : "min"),
                                i, c->max ? "max" : "min", text);
        if (!(o->metric = fs_strdup(c->metric)) ||
            !(o->text = printf_dup("%s %s %s", c->metric, c->max ? "<=" : ">=", text)))
            return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    }
    return 0;
}

static long find_pool(const fs_config_t *cfg, const char *name)
{
    size_t n = cfg->cluster.n_pools - cfg->cluster.n_from;
    for (size_t i = 0; i < n; i++)
        if (strcmp(cfg->cluster.pools[i].name, name) == 0)
            return (long)i;
    return -1;
}

static int choice_sets(const fs_plan_choice_cfg_t *c, fs_plan_choice_t *o)
{
    size_t n = c->n_sets + 2, m = 0;
    if (!(o->sets = fs_calloc(n, sizeof *o->sets)))
        return -1;
    if (c->gpu && !(o->sets[m++] = printf_dup("cluster.pools.%zu.gpu=%s", o->pool_index, c->gpu)))
        return -1;
    if (c->gpus_per_node &&
        !(o->sets[m++] = printf_dup("cluster.pools.%zu.gpus_per_node=%" PRIu32, o->pool_index,
                                    c->gpus_per_node)))
        return -1;
    for (size_t i = 0; i < c->n_sets; i++)
        if (!(o->sets[m++] = printf_dup("%s=%s", c->sets[i].key, c->sets[i].value)))
            return -1;
    o->n_sets = m;
    return 0;
}

static int spec_choice(const fs_config_t *cfg, size_t i, fs_plan_choice_t *o, fs_error_t *err)
{
    const char *file = cfg->source_path ? cfg->source_path : "<scenario>";
    const fs_plan_choice_cfg_t *c = &cfg->plan.choices[i];
    long pi = find_pool(cfg, c->pool);
    char at[32];
    if (pi < 0)
        return fs_error_set(err, FS_EINVAL, "%s:%s: plan.choices.%zu.pool: no pool named '%s' in "
                            "cluster.pools", file,
                            where(cfg, at, sizeof at, "plan.choices.%zu.pool", i), i, c->pool);
    if (c->to < c->from)
        return fs_error_set(err, FS_EINVAL, "%s:%s: plan.choices.%zu.nodes: to (%" PRIu32 ") is "
                            "below from (%" PRIu32 ")", file,
                            where(cfg, at, sizeof at, "plan.choices.%zu.nodes.to", i), i, c->to,
                            c->from);
    uint64_t count = (uint64_t)(c->to - c->from) / c->step + 1;
    if (count > MAX_COUNTS)
        return fs_error_set(err, FS_ELIMIT, "%s:%s: plan.choices.%zu.nodes: more than %u node "
                            "counts; use a larger step", file,
                            where(cfg, at, sizeof at, "plan.choices.%zu.nodes", i), i, MAX_COUNTS);
    const fs_pool_cfg_t *pool = &cfg->cluster.pools[pi];
    o->pool_index = (size_t)pi;
    o->gpus_per_node = c->gpus_per_node ? c->gpus_per_node : pool->gpus_per_node;
    o->n_nodes = (size_t)count;
    if (!(o->pool = fs_strdup(c->pool)) || !(o->gpu = fs_strdup(c->gpu ? c->gpu : pool->gpu)) ||
        !(o->nodes = fs_calloc(o->n_nodes, sizeof *o->nodes)) || choice_sets(c, o) != 0)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    for (size_t k = 0; k < o->n_nodes; k++)
        o->nodes[k] = c->from + (uint32_t)k * c->step;
    o->name = c->name ? fs_strdup(c->name)
                      : c->gpu ? printf_dup("%s/%s", c->pool, c->gpu) : fs_strdup(c->pool);
    if (!o->name)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    return 0;
}

static int spec_metrics(const fs_config_t *cfg, fs_plan_spec_t *s)
{
    s->n_metrics = 1 + s->n_slo;
    if (!(s->metrics = fs_calloc(s->n_metrics, sizeof *s->metrics)) ||
        !(s->metrics[0] = fs_strdup(cfg->plan.objective ? cfg->plan.objective : "cost_total")))
        return -1;
    for (size_t i = 0; i < s->n_slo; i++)
        if (!(s->metrics[1 + i] = fs_strdup(s->slo[i].metric)))
            return -1;
    return 0;
}

/* plan.years and its companions (docs/plan.md "Quarterly cash flow"): a
 * whole number of quarters; the demand keys need a synthetic workload (its
 * scale is what each quarter changes); the baseline names a choice. */
static int spec_years(const fs_config_t *cfg, const fs_plan_spec_t *s, fs_error_t *err)
{
    const char *file = cfg->source_path ? cfg->source_path : "<scenario>";
    const fs_plan_cfg_t *p = &cfg->plan;
    char at[32];
    double q = p->years * 4;
    if (fabs(q - round(q)) > 1e-9)
        return fs_error_set(err, FS_EINVAL, "%s:%s: plan.years: %g is not a whole number of "
                            "quarters (0.25, 0.5, ..., each quarter is simulated)", file,
                            where(cfg, at, sizeof at, "plan.years"), p->years);
    const char *only = p->demand_growth != 0 ? "plan.demand_growth"
                       : p->electricity_growth != 0 ? "plan.electricity_growth"
                       : p->gpu_price_decline != 0 ? "plan.gpu_price_decline"
                       : p->sensitivity != 0 ? "plan.sensitivity"
                       : p->baseline ? "plan.baseline" : NULL;
    if (p->years <= 0 && only)
        return fs_error_set(err, FS_EINVAL, "%s:%s: %s applies to the quarterly cash flow: give "
                            "plan.years too", file, where(cfg, at, sizeof at, "%s", only), only);
    if (p->years > 0 && cfg->workload.kind != FS_WORKLOAD_SYNTHETIC &&
        (p->demand_growth != 0 || p->sensitivity != 0)) {
        only = p->demand_growth != 0 ? "plan.demand_growth" : "plan.sensitivity";
        return fs_error_set(err, FS_EINVAL, "%s:%s: %s: the quarters' demand is the synthetic "
                            "workload's arrival rate x its growth (workload.synthetic.scale); a "
                            "trace has no rate to scale", file,
                            where(cfg, at, sizeof at, "%s", only), only);
    }
    if (p->baseline) {
        for (size_t c = 0; c < s->n_choices; c++)
            if (strcmp(s->choices[c].name, p->baseline) == 0)
                return 0;
        return fs_error_set(err, FS_EINVAL, "%s:%s: plan.baseline: '%s' is not the name of a "
                            "choice", file, where(cfg, at, sizeof at, "plan.baseline"), p->baseline);
    }
    return 0;
}

int fs_plan_spec_create(const fs_config_t *cfg, fs_plan_spec_t **out, fs_error_t *err)
{
    *out = NULL;
    const char *file = cfg->source_path ? cfg->source_path : "<scenario>";
    const fs_plan_cfg_t *p = &cfg->plan;
    if (!p->given || !p->n_choices)
        return fs_error_set(err, FS_EINVAL, "%s:1:1: no 'plan' section with choices (add one, see "
                            "docs/plan.md)", file);
    fs_plan_spec_t *s = fs_calloc(1, sizeof *s);
    if (!s)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    s->confidence = p->confidence;
    s->replications = p->replications;
    s->search = p->search;
    s->keep_jobs = p->keep_jobs;
    int rc = spec_slo(cfg, s, err);
    if (!rc && !(s->choices = fs_calloc(p->n_choices, sizeof *s->choices)))
        rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    for (size_t i = 0; !rc && i < p->n_choices; i++) {
        s->n_choices = i + 1;
        rc = spec_choice(cfg, i, &s->choices[i], err);
        char at[32];
        for (size_t j = 0; !rc && j < i; j++)
            if (strcmp(s->choices[j].name, s->choices[i].name) == 0)
                rc = fs_error_set(err, FS_EINVAL, "%s:%s: plan.choices.%zu: the name '%s' is taken "
                                  "by plan.choices.%zu (give each a name)", file,
                                  where(cfg, at, sizeof at, "plan.choices.%zu", i), i,
                                  s->choices[i].name, j);
    }
    if (!rc)
        rc = spec_years(cfg, s, err);
    s->n_periods = p->years > 0 ? (size_t)llround(p->years * 4) : 1;
    if (!rc && spec_metrics(cfg, s) != 0)
        rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    if (rc) {
        fs_plan_spec_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int fs_plan_candidate_sets(const fs_plan_spec_t *s, size_t choice, uint32_t nodes, char ***out,
                           size_t *n, fs_error_t *err)
{
    const fs_plan_choice_t *c = &s->choices[choice];
    char **o = fs_calloc(c->n_sets + 1, sizeof *o);
    int oom = !o;
    for (size_t i = 0; !oom && i < c->n_sets; i++)
        oom = !(o[i] = fs_strdup(c->sets[i]));
    if (!oom)
        oom = !(o[c->n_sets] = printf_dup("cluster.pools.%zu.nodes=%" PRIu32, c->pool_index, nodes));
    if (oom) {
        fs_plan_sets_free(o, c->n_sets + 1);
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    }
    *out = o;
    *n = c->n_sets + 1;
    return 0;
}

int fs_plan_metric(const char *const *names, const double *values, size_t n, const char *metric,
                   double *out)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], metric) == 0) {
            *out = values[i];
            return 0;
        }
    if (strcmp(metric, "finished_share") == 0) {
        double done = NAN, sub = NAN;
        if (fs_plan_metric(names, values, n, "jobs_completed", &done) ||
            fs_plan_metric(names, values, n, "jobs_submitted", &sub))
            return -1;
        *out = sub > 0 ? done / sub : NAN;
        return 0;
    }
    return -1;
}

/* ---- search -------------------------------------------------------------------------- */

void fs_plan_result_destroy(fs_plan_result_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_points; i++) {
        fs_free(r->points[i].runs);
        fs_free(r->points[i].ci);
        fs_free(r->points[i].period_ci);
        fs_free(r->points[i].binding);
    }
    fs_free(r->points);
    fs_free(r->best);
    fs_free(r);
}

static long find_point(const fs_plan_result_t *r, size_t choice, uint32_t nodes)
{
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].choice == choice && r->points[i].nodes == nodes)
            return (long)i;
    return -1;
}

static int slo_holds(const fs_plan_slo_t *slo, const fs_ci_t *ci)
{
    if (ci->n < 2 || isnan(ci->lo) || isnan(ci->hi))
        return 0;
    return slo->kind == FS_PLAN_LE ? ci->hi <= slo->bound : ci->lo >= slo->bound;
}

/* The intervals of runs (reps x n_metrics) into ci (n_metrics); x: reps
 * of scratch.  0 or -1 (out of memory). */
static int metric_cis(const fs_plan_spec_t *s, const double *runs, double *x, fs_ci_t *ci)
{
    size_t reps = (size_t)s->replications;
    for (size_t m = 0; m < s->n_metrics; m++) {
        for (size_t k = 0; k < reps; k++)
            x[k] = runs[k * s->n_metrics + m];
        if (fs_ci_t_interval(x, reps, s->confidence, &ci[m]) != 0)
            return -1;
    }
    return 0;
}

static int cis_meet(const fs_plan_spec_t *s, const fs_ci_t *ci)
{
    int ok = 1;
    for (size_t i = 0; i < s->n_slo; i++)
        ok &= slo_holds(&s->slo[i], &ci[1 + i]);
    return ok;
}

int fs_plan_period_meets(const fs_plan_spec_t *s, const double *runs)
{
    fs_ci_t *ci = fs_calloc(s->n_metrics, sizeof *ci);
    double *x = fs_calloc((size_t)s->replications + 1, sizeof *x);
    int rc = !ci || !x || metric_cis(s, runs, x, ci) ? -1 : cis_meet(s, ci);
    fs_free(ci);
    fs_free(x);
    return rc;
}

void fs_plan_period_name(size_t q, char *buf, size_t n)
{
    snprintf(buf, n, "Y%zuQ%zu", q / 4 + 1, q % 4 + 1);
}

/* How bad SLO i's interval is (larger: worse): the end the rule tests,
 * signed so that larger is nearer to (or past) the bound. */
static double slo_badness(const fs_plan_slo_t *slo, const fs_ci_t *ci)
{
    double v = slo->kind == FS_PLAN_LE ? ci->hi : -ci->lo;
    return isnan(v) ? INFINITY : v;
}

/* With periods: the periods looked at (up to the first miss), each one's
 * intervals, and the reported runs (fs_plan_point_t): all[] is
 * n_periods x reps x n_metrics; runs (reps x n_metrics) is filled. */
static int period_points(const fs_plan_spec_t *s, fs_plan_point_t *p, const double *all,
                         double *runs, double *x)
{
    size_t reps = (size_t)s->replications, nm = s->n_metrics, per = reps * nm;
    p->period_ci = fs_calloc(s->n_periods * nm, sizeof *p->period_ci);
    p->binding = fs_calloc(nm, sizeof *p->binding);
    if (!p->period_ci || !p->binding)
        return -1;
    p->miss_period = -1;
    p->n_periods = 0;
    for (size_t q = 0; q < s->n_periods; q++) {
        if (metric_cis(s, all + q * per, x, p->period_ci + q * nm))
            return -1;
        p->n_periods = q + 1;
        if (!cis_meet(s, p->period_ci + q * nm)) {
            p->miss_period = (long)q;
            break;
        }
    }
    for (size_t m = 1; m < nm; m++) {
        size_t b = 0;
        if (p->miss_period >= 0)
            b = (size_t)p->miss_period;
        else
            for (size_t q = 1; q < p->n_periods; q++)
                if (slo_badness(&s->slo[m - 1], &p->period_ci[q * nm + m]) >
                    slo_badness(&s->slo[m - 1], &p->period_ci[b * nm + m]))
                    b = q;
        p->binding[m] = b;
        for (size_t k = 0; k < reps; k++)
            runs[k * nm + m] = all[b * per + k * nm + m];
    }
    for (size_t k = 0; k < reps; k++) {  /* the objective: the mean over the periods */
        double sum = 0;
        for (size_t q = 0; q < p->n_periods; q++)
            sum += all[q * per + k * nm];
        runs[k * nm] = sum / (double)p->n_periods;
    }
    return 0;
}

/* Adds a point from its runs (all: n_periods x reps x n_metrics, taken
 * over). */
static int add_point(const fs_plan_spec_t *s, fs_plan_result_t *r, const fs_plan_cand_t *c,
                     uint32_t round, double *all, fs_error_t *err)
{
    size_t reps = (size_t)s->replications;
    fs_ci_t *ci = fs_calloc(s->n_metrics, sizeof *ci);
    double *x = fs_calloc(reps, sizeof *x);
    double *runs = s->n_periods > 1 ? fs_calloc(reps * s->n_metrics, sizeof *runs) : all;
    if (!ci || !x || !runs ||
        fs_grow((void **)&r->points, &r->cap_points, r->n_points + 1, sizeof *r->points)) {
        fs_free(ci);
        fs_free(x);
        if (runs != all)
            fs_free(runs);
        fs_free(all);
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    }
    fs_plan_point_t *p = &r->points[r->n_points];
    memset(p, 0, sizeof *p);
    p->miss_period = -1;
    p->n_periods = 1;
    int oom = s->n_periods > 1 && period_points(s, p, all, runs, x) != 0;
    if (!oom)
        oom = metric_cis(s, runs, x, ci) != 0;
    fs_free(x);
    if (runs != all)
        fs_free(all);
    if (oom) {
        fs_free(ci);
        fs_free(runs);
        fs_free(p->period_ci);
        fs_free(p->binding);
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    }
    r->n_points++;
    p->choice = c->choice;
    p->nodes = c->nodes;
    p->gpus = (uint64_t)c->nodes * s->choices[c->choice].gpus_per_node;
    p->round = round;
    p->runs = runs;
    p->ci = ci;
    p->meets = s->n_periods > 1 ? p->miss_period < 0 : cis_meet(s, ci);
    if (s->n_periods == 1 && !p->meets)
        p->miss_period = 0;
    return 0;
}

/* Search state of one choice: the smallest feasible index lies in
 * [lo, hi] (hi feasible once `top` has been evaluated and met). */
typedef struct cstate {
    size_t lo, hi;
    int top;        /* the largest count has been evaluated */
    int done;
} cstate_t;

/* The index this choice wants evaluated next, or -1 when it is done. */
static long next_index(const fs_plan_spec_t *s, size_t c, const cstate_t *st)
{
    if (st->done)
        return -1;
    if (!st->top)
        return (long)(s->choices[c].n_nodes - 1);
    return (long)(st->lo + (st->hi - st->lo) / 2);
}

static void advance(const fs_plan_spec_t *s, const fs_plan_result_t *r, size_t c, cstate_t *st,
                    long *best)
{
    const fs_plan_choice_t *ch = &s->choices[c];
    if (s->search == FS_PLAN_SCAN) {
        for (size_t k = 0; k < ch->n_nodes && *best < 0; k++) {
            long pi = find_point(r, c, ch->nodes[k]);
            if (pi >= 0 && r->points[pi].meets)
                *best = pi;
        }
        st->done = 1;
        return;
    }
    long idx = next_index(s, c, st);
    long pi = find_point(r, c, ch->nodes[idx]);
    int ok = r->points[pi].meets;
    if (!st->top) {
        st->top = 1;
        st->lo = 0;
        st->hi = ch->n_nodes - 1;
        if (!ok)
            st->done = 1;
        else
            *best = pi;
    } else if (ok) {
        st->hi = (size_t)idx;
        *best = pi;
    } else {
        st->lo = (size_t)idx + 1;
    }
    if (!st->done && st->lo >= st->hi)
        st->done = 1;
}

/* One round: every active choice's next candidate(s), evaluated together. */
static int round_candidates(const fs_plan_spec_t *s, const fs_plan_result_t *r, const cstate_t *st,
                            fs_plan_cand_t **out, size_t *n)
{
    size_t cap = 0, m = 0;
    fs_plan_cand_t *c = NULL;
    for (size_t i = 0; i < s->n_choices; i++) {
        if (st[i].done)
            continue;
        size_t from = 0, to = 0;
        if (s->search == FS_PLAN_SCAN) {
            to = s->choices[i].n_nodes;
        } else {
            from = (size_t)next_index(s, i, &st[i]);
            to = from + 1;
        }
        for (size_t k = from; k < to; k++) {
            uint32_t nodes = s->choices[i].nodes[k];
            if (find_point(r, i, nodes) >= 0)
                continue;
            if (fs_grow((void **)&c, &cap, m + 1, sizeof *c) != 0) {
                fs_free(c);
                return -1;
            }
            c[m++] = (fs_plan_cand_t){i, nodes};
        }
    }
    *out = c;
    *n = m;
    return 0;
}

static int better(const fs_plan_point_t *a, const fs_plan_point_t *b)
{
    double x = isnan(a->ci[0].mean) ? INFINITY : a->ci[0].mean;
    double y = isnan(b->ci[0].mean) ? INFINITY : b->ci[0].mean;
    if (x != y)
        return x < y;
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus;
    return a->choice < b->choice;
}

/* q at least as good as p everywhere and better somewhere. */
static int dominates(const fs_plan_spec_t *s, const fs_plan_point_t *q, const fs_plan_point_t *p)
{
    int strict = 0;
    for (size_t m = 0; m < s->n_metrics; m++) {
        double a = q->ci[m].mean, b = p->ci[m].mean;
        if (isnan(a) || isnan(b))
            return 0;
        if (m > 0 && s->slo[m - 1].kind == FS_PLAN_GE) {
            a = -a;
            b = -b;
        }
        if (a > b)
            return 0;
        strict |= a < b;
    }
    return strict;
}

static void finish(const fs_plan_spec_t *s, fs_plan_result_t *r)
{
    r->chosen = -1;
    for (size_t i = 0; i < r->n_points; i++) {
        fs_plan_point_t *p = &r->points[i];
        p->frontier = 1;
        for (size_t j = 0; j < r->n_points && p->frontier; j++)
            if (j != i && dominates(s, &r->points[j], p))
                p->frontier = 0;
        if (p->meets && (r->chosen < 0 || better(p, &r->points[r->chosen])))
            r->chosen = (long)i;
        for (size_t j = 0; j < r->n_points; j++) {
            const fs_plan_point_t *q = &r->points[j];
            if (q->choice == p->choice && p->nodes < q->nodes && p->meets && !q->meets)
                r->nonmonotone++;
        }
    }
}

static int eval_round(const fs_plan_spec_t *s, fs_plan_eval_fn eval, void *ud, fs_plan_result_t *r,
                      const fs_plan_cand_t *c, size_t n, fs_error_t *err)
{
    size_t per = s->n_periods * (size_t)s->replications * s->n_metrics;
    double *out = fs_calloc(n * per, sizeof *out);
    if (!out)
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    for (size_t i = 0; i < n * per; i++)
        out[i] = NAN;
    int rc = eval(ud, s, c, n, out, err);
    for (size_t i = 0; !rc && i < n; i++) {
        double *runs = fs_malloc(per * sizeof *runs);
        if (!runs) {
            rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
            break;
        }
        memcpy(runs, out + i * per, per * sizeof *runs);
        rc = add_point(s, r, &c[i], (uint32_t)r->rounds, runs, err);
    }
    fs_free(out);
    r->rounds++;
    return rc;
}

int fs_plan_search(const fs_plan_spec_t *s, fs_plan_eval_fn eval, void *ud, fs_plan_result_t **out,
                   fs_error_t *err)
{
    *out = NULL;
    fs_plan_result_t *r = fs_calloc(1, sizeof *r);
    cstate_t *st = fs_calloc(s->n_choices, sizeof *st);
    if (r)
        r->best = fs_calloc(s->n_choices, sizeof *r->best);
    if (!r || !st || !r->best) {
        fs_free(st);
        fs_plan_result_destroy(r);
        return fs_error_set(err, FS_ENOMEM, "plan: out of memory");
    }
    for (size_t i = 0; i < s->n_choices; i++)
        r->best[i] = -1;
    int rc = 0;
    for (;;) {
        fs_plan_cand_t *c = NULL;
        size_t n = 0, active = 0;
        for (size_t i = 0; i < s->n_choices; i++)
            active += !st[i].done;
        if (!active)
            break;
        if (round_candidates(s, r, st, &c, &n) != 0) {
            rc = fs_error_set(err, FS_ENOMEM, "plan: out of memory");
            break;
        }
        if (n)
            rc = eval_round(s, eval, ud, r, c, n, err);
        fs_free(c);
        if (rc)
            break;
        for (size_t i = 0; i < s->n_choices; i++)
            if (!st[i].done)
                advance(s, r, i, &st[i], &r->best[i]);
    }
    fs_free(st);
    if (rc) {
        fs_plan_result_destroy(r);
        return rc;
    }
    finish(s, r);
    *out = r;
    return 0;
}

void fs_plan_cash_npv(fs_plan_cash_t *c)
{
    double npv = c->purchase;
    double y = 0;
    for (int k = 1; y < c->years && k <= 1000; k++) {
        double part = c->years - y < 1 ? c->years - y : 1;
        npv += c->opex_per_year * part / pow(1 + c->rate, k);
        y += part;
    }
    npv -= c->residual / pow(1 + c->rate, c->years);
    c->npv = npv;
}

/* ---- the quarterly cash flow -------------------------------------------------------------- */

static double disc(double rate, double t) { return pow(1 + rate, -t); }

void fs_plan_fin_compute(const fs_plan_fin_in_t *in, const fs_plan_qrun_t *runs,
                         fs_plan_fin_out_t *out, double *q_capex, double *q_opex)
{
    memset(out, 0, sizeof *out);
    double years = (double)in->n_q / 4;
    for (size_t q = 0; q < in->n_q; q++) {
        double t = (double)q / 4;
        const fs_plan_qrun_t *u = &runs[q];
        double capex = in->buy[q] * in->price_mult * pow(1 - in->price_decline, t);
        double k = u->span_s > 0 ? FS_PLAN_QUARTER_S / u->span_s : NAN;
        double opex = k * (u->ops * in->price_mult + u->colo + u->rent * in->price_mult +
                           u->energy * in->elec_mult * pow(1 + in->elec_growth, t));
        /* book value at the end: straight line from capex to capex x residual over dep_years */
        double held = years - t, used = in->dep_years > 0 ? held / in->dep_years : 1;
        double book = capex * (1 - (1 - in->residual_share) * (used < 1 ? used : 1));
        out->capex += capex;
        out->opex += opex;
        out->residual += book;
        out->gpu_h += u->gpu_h * k;
        out->npv += capex * disc(in->rate, t) + opex * disc(in->rate, t + 0.25);
        if (q_capex)
            q_capex[q] = capex;
        if (q_opex)
            q_opex[q] = opex;
    }
    for (size_t k = 0; k < in->n_tail; k++) {
        double pay = in->tail[k] * in->price_mult;
        out->tail += pay;
        out->npv += pay * disc(in->rate, years + (double)(k + 1) / 4);
    }
    out->npv -= out->residual * disc(in->rate, years);
    double cash = out->capex + out->opex + out->tail - out->residual;
    out->cost_per_gpu_hour = out->gpu_h > 0 ? cash / out->gpu_h : NAN;
}

double fs_plan_payback(const double *a_capex, const double *a_opex, const double *b_capex,
                       const double *b_opex, size_t n_q)
{
    double d = 0;   /* cumulative cash of a less b */
    for (size_t q = 0; q < n_q; q++) {
        double d0 = d + a_capex[q] - b_capex[q], d1 = d0 + a_opex[q] - b_opex[q];
        if (q == 0 && d0 <= 0)
            return 0;
        if (d0 <= 0)    /* a capex in quarter q was already paid back: payback at its start */
            return (double)q / 4;
        if (d1 <= 0)
            return ((double)q + d0 / (d0 - d1)) / 4;
        d = d1;
    }
    return NAN;
}

static void fin_in(const fs_plan_fin_t *f, const fs_plan_fleet_t *fl, double elec, double price,
                   fs_plan_fin_in_t *in)
{
    in->n_q = f->n_q;
    in->rate = f->rate;
    in->elec_growth = f->elec_growth;
    in->price_decline = f->price_decline;
    in->elec_mult = elec;
    in->price_mult = price;
    in->dep_years = f->dep_years;
    in->residual_share = f->residual_share;
    in->buy = fl->buy;
    in->tail = fl->tail;
    in->n_tail = fl->n_tail;
}

int fs_plan_fin_finish(fs_plan_fin_t *f, double confidence)
{
    size_t R = f->reps, Q = f->n_q;
    for (size_t c = 0; c < f->n_fleets; c++) {
        fs_plan_fleet_t *fl = &f->fleets[c];
        if (fl->point < 0)
            continue;
        fl->out = fs_calloc(R, sizeof *fl->out);
        fl->q_capex = fs_calloc(R * Q, sizeof *fl->q_capex);
        fl->q_opex = fs_calloc(R * Q, sizeof *fl->q_opex);
        fl->npv = fs_calloc(R, sizeof *fl->npv);
        fl->payback = fs_calloc(R, sizeof *fl->payback);
        fl->cpgh = fs_calloc(R, sizeof *fl->cpgh);
        if (!fl->out || !fl->q_capex || !fl->q_opex || !fl->npv || !fl->payback || !fl->cpgh)
            return FS_ENOMEM;
        fs_plan_fin_in_t in;
        fin_in(f, fl, 1, 1, &in);
        for (size_t r = 0; r < R; r++) {
            fs_plan_fin_compute(&in, fl->runs + r * Q, &fl->out[r], fl->q_capex + r * Q,
                                fl->q_opex + r * Q);
            fl->npv[r] = fl->out[r].npv;
            fl->cpgh[r] = fl->out[r].cost_per_gpu_hour;
        }
    }
    /* payback against the baseline, replication by replication (common random numbers) */
    for (size_t c = 0; c < f->n_fleets; c++) {
        fs_plan_fleet_t *fl = &f->fleets[c];
        if (fl->point < 0)
            continue;
        const fs_plan_fleet_t *b = f->baseline >= 0 ? &f->fleets[f->baseline] : NULL;
        for (size_t r = 0; r < R; r++)
            fl->payback[r] = b && b != fl && b->point >= 0
                                 ? fs_plan_payback(fl->q_capex + r * Q, fl->q_opex + r * Q,
                                                   b->q_capex + r * Q, b->q_opex + r * Q, Q)
                                 : NAN;
        if (fs_ci_t_interval(fl->npv, R, confidence, &fl->npv_ci) ||
            fs_ci_t_interval(fl->payback, R, confidence, &fl->payback_ci) ||
            fs_ci_t_interval(fl->cpgh, R, confidence, &fl->cpgh_ci))
            return FS_ENOMEM;
    }
    if (f->sens_choice < 0)
        return 0;
    const fs_plan_fleet_t *fl = &f->fleets[f->sens_choice];
    for (size_t i = 0; i < f->n_sens; i++) {
        fs_plan_sens_t *sv = &f->sens[i];
        sv->npv_lo = fs_calloc(R, sizeof *sv->npv_lo);
        sv->npv_hi = fs_calloc(R, sizeof *sv->npv_hi);
        if (!sv->npv_lo || !sv->npv_hi)
            return FS_ENOMEM;
        int elec = strcmp(sv->param, "electricity") == 0, price = strcmp(sv->param, "gpu_price") == 0;
        for (int side = 0; side < 2; side++) {
            double fac = side ? sv->hi_factor : sv->lo_factor;
            fs_plan_fin_in_t in;
            fin_in(f, fl, elec ? fac : 1, price ? fac : 1, &in);
            const fs_plan_qrun_t *runs = sv->rerun ? (side ? sv->runs_hi : sv->runs_lo) : fl->runs;
            double *npv = side ? sv->npv_hi : sv->npv_lo;
            for (size_t r = 0; r < R; r++) {
                fs_plan_fin_out_t o;
                fs_plan_fin_compute(&in, runs + r * Q, &o, NULL, NULL);
                npv[r] = o.npv;
            }
        }
        if (fs_ci_t_interval(sv->npv_lo, R, confidence, &sv->lo) ||
            fs_ci_t_interval(sv->npv_hi, R, confidence, &sv->hi))
            return FS_ENOMEM;
    }
    return 0;
}

void fs_plan_fin_destroy(fs_plan_fin_t *f)
{
    if (!f)
        return;
    for (size_t c = 0; c < f->n_fleets; c++) {
        fs_plan_fleet_t *fl = &f->fleets[c];
        fs_free(fl->scale);
        fs_free(fl->mix);
        fs_free(fl->buy);
        fs_free(fl->tail);
        fs_free(fl->runs);
        fs_free(fl->out);
        fs_free(fl->q_capex);
        fs_free(fl->q_opex);
        fs_free(fl->npv);
        fs_free(fl->payback);
        fs_free(fl->cpgh);
    }
    for (size_t i = 0; i < f->n_sens; i++) {
        fs_free(f->sens[i].runs_lo);
        fs_free(f->sens[i].runs_hi);
        fs_free(f->sens[i].npv_lo);
        fs_free(f->sens[i].npv_hi);
    }
    fs_free(f->fleets);
    fs_free(f);
}

static const char *const mix_names[FS_PLAN_MIX] = {"owned", "on_demand", "reserved_1y",
                                                   "reserved_3y", "spot", "lease"};

static const char *money_ci(char *buf, size_t n, const fs_ci_t *ci)
{
    fs_fmt_interval(buf, n, FS_FMT_MONEY, ci->mean, ci->half);
    return buf;
}

void fs_plan_fin_print(FILE *out, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                       const fs_plan_fin_t *f)
{
    size_t R = f->reps, Q = f->n_q;
    fprintf(out, "\nquarterly cash flow over %g years (%zu quarters, each simulated: %zu runs; "
            "demand %+.1f%%/yr, electricity %+.1f%%/yr, GPU price decline %.1f%%/yr; capex when bought, "
            "opex at each quarter's end, residual = book value after straight-line depreciation; "
            "nominal discount rate %.1f%%/yr; means over %zu replications):\n", f->years, Q,
            f->quarter_runs, 100 * f->demand_growth, 100 * f->elec_growth, 100 * f->price_decline,
            100 * f->rate, R);
    for (size_t c = 0; c < f->n_fleets; c++) {
        const fs_plan_fleet_t *fl = &f->fleets[c];
        if (fl->point < 0)
            continue;
        const fs_plan_point_t *p = &r->points[fl->point];
        fprintf(out, "\n  %s, %" PRIu32 " nodes (%" PRIu64 " GPUs)\n", s->choices[c].name,
                p->nodes, p->gpus);
        fprintf(out, "  %-8s %6s  %-34s %14s %14s %14s %15s %9s\n", "quarter", "demand", "GPUs",
                "capex", "opex", "cash", "cumulative", "GPU-h");
        double cum = 0;
        for (size_t q = 0; q < Q; q++) {
            double capex = 0, opex = 0, gh = 0;
            for (size_t k = 0; k < R; k++) {
                capex += fl->q_capex[k * Q + q] / (double)R;
                opex += fl->q_opex[k * Q + q] / (double)R;
                const fs_plan_qrun_t *u = &fl->runs[k * Q + q];
                gh += u->span_s > 0 ? u->gpu_h * FS_PLAN_QUARTER_S / u->span_s / (double)R : NAN;
            }
            cum += capex + opex;
            char mix[96] = "", a[32], b[32], cc[32], d[32];
            size_t len = 0;
            for (int m = 0; m < FS_PLAN_MIX; m++)
                if (fl->mix[q * FS_PLAN_MIX + m] > 0 && len < sizeof mix - 32)
                    len += (size_t)snprintf(mix + len, sizeof mix - len, "%s%.0f %s",
                                            len ? ", " : "", fl->mix[q * FS_PLAN_MIX + m],
                                            mix_names[m]);
            fs_fmt_money(a, sizeof a, capex);
            fs_fmt_money(b, sizeof b, opex);
            fs_fmt_money(cc, sizeof cc, capex + opex);
            fs_fmt_money(d, sizeof d, cum);
            fprintf(out, "  Y%zuQ%zu     x%5.3f  %-34s %14s %14s %14s %15s %9.0f\n", q / 4 + 1,
                    q % 4 + 1, fl->scale[q], mix, a, b, cc, d, gh);
        }
        double tail = 0, res = 0;
        for (size_t k = 0; k < R; k++) {
            tail += fl->out[k].tail / (double)R;
            res += fl->out[k].residual / (double)R;
        }
        char a[48], b[48], cc[96], d[48];
        fs_fmt_money(a, sizeof a, res);
        fs_fmt_money(b, sizeof b, tail);
        fprintf(out, "  residual %s recovered at year %g", a, f->years);
        if (tail > 0)
            fprintf(out, "; lease payments committed after the period %s", b);
        fprintf(out, "\n");
        money_ci(a, sizeof a, &fl->npv_ci);
        fs_fmt_interval(b, sizeof b, FS_FMT_MONEY, fl->cpgh_ci.mean, fl->cpgh_ci.half);
        if (f->baseline < 0)
            snprintf(cc, sizeof cc, "- (no baseline fleet: plan.baseline's choice has none)");
        else if (c == (size_t)f->baseline)
            snprintf(cc, sizeof cc, "- (the baseline)");
        else if (fl->payback_ci.n < R)
            snprintf(cc, sizeof cc, "beyond %g years in %zu of %zu replications", f->years,
                     R - fl->payback_ci.n, R);
        else
            snprintf(cc, sizeof cc, "%.2f +- %.2f years", fl->payback_ci.mean,
                     isfinite(fl->payback_ci.half) ? fl->payback_ci.half : 0.0);
        snprintf(d, sizeof d, "%s", f->baseline >= 0 ? s->choices[f->baseline].name : "-");
        fprintf(out, "  NPV of the cost %s; cost per delivered GPU-hour %s; payback against %s: "
                "%s (%.0f%% t-intervals over %zu replications)\n", a, b, d, cc,
                100 * s->confidence, R);
    }
    if (f->sens_choice < 0 || !f->n_sens)
        return;
    char base[48];
    money_ci(base, sizeof base, &f->fleets[f->sens_choice].npv_ci);
    fprintf(out, "\nsensitivity of the NPV of %s (%s), each parameter x (1 -+ %g): electricity and "
            "GPU price recomputed from the same runs, demand re-run (%zu runs)\n",
            s->choices[f->sens_choice].name, base, f->sensitivity, f->sens_runs);
    fprintf(out, "  %-14s %-10s %26s %26s %16s\n", "parameter", "how", "NPV at -X", "NPV at +X",
            "swing");
    for (size_t i = 0; i < f->n_sens; i++) {
        const fs_plan_sens_t *sv = &f->sens[i];
        char lo[48], hi[48], sw[48];
        money_ci(lo, sizeof lo, &sv->lo);
        money_ci(hi, sizeof hi, &sv->hi);
        fs_fmt_money(sw, sizeof sw, fabs(sv->hi.mean - sv->lo.mean));
        fprintf(out, "  %-14s %-10s %26s %26s %16s\n", sv->param, sv->rerun ? "re-run" : "recomputed",
                lo, hi, sw);
    }
}

/* ---- printing ---------------------------------------------------------------------------- */

/* "mean +- half" of metric m in its unit (analysis/fs_fmt.h). */
static const char *fmt_ci(char *buf, size_t n, const char *m, const fs_ci_t *ci)
{
    fs_fmt_interval(buf, n, fs_fmt_metric_unit(m), ci->mean, ci->half);
    return buf;
}

static const char *fmt_v(char *buf, size_t n, const char *m, double v)
{
    fs_fmt_value(buf, n, fs_fmt_metric_unit(m), v);
    return buf;
}

static void print_point(FILE *f, const fs_plan_spec_t *s, const fs_plan_point_t *p, int chosen)
{
    fprintf(f, "%-16s %7" PRIu32 " %8" PRIu64, s->choices[p->choice].name, p->nodes, p->gpus);
    for (size_t m = 0; m < s->n_metrics; m++) {
        char b[64];
        fprintf(f, "  %23s", fmt_ci(b, sizeof b, s->metrics[m], &p->ci[m]));
    }
    char q[40] = "";
    if (s->n_periods > 1 && p->miss_period >= 0) {
        char b[16];
        fs_plan_period_name((size_t)p->miss_period, b, sizeof b);
        snprintf(q, sizeof q, " (%s)", b);
    }
    fprintf(f, "  %-5s%s %-8s%s\n", p->meets ? "yes" : "no", q, p->frontier ? "frontier" : "",
            chosen ? " <- chosen" : "");
}

/* With periods: point p's SLO intervals in every period looked at. */
static void print_periods(FILE *f, const fs_plan_spec_t *s, const fs_plan_point_t *p,
                          const char *indent)
{
    fprintf(f, "%s%-8s", indent, "quarter");
    for (size_t i = 0; i < s->n_slo; i++)
        fprintf(f, "  %23.23s", s->metrics[1 + i]);
    fprintf(f, "  meets\n");
    for (size_t q = 0; q < p->n_periods; q++) {
        char name[16];
        fs_plan_period_name(q, name, sizeof name);
        fprintf(f, "%s%-8s", indent, name);
        for (size_t i = 0; i < s->n_slo; i++) {
            char b[64];
            fprintf(f, "  %23s", fmt_ci(b, sizeof b, s->metrics[1 + i],
                                        &p->period_ci[q * s->n_metrics + 1 + i]));
        }
        fprintf(f, "  %s\n", (long)q == p->miss_period ? "no" : "yes");
    }
}

void fs_plan_print(FILE *f, const fs_plan_spec_t *s, const fs_plan_result_t *r)
{
    fprintf(f, "plan: %zu choice%s, objective %s (minimised), confidence %g, %" PRIu64
            " replications, %s\n", s->n_choices, s->n_choices == 1 ? "" : "s", s->metrics[0],
            s->confidence, s->replications, s->search == FS_PLAN_SCAN ? "scan" : "bisection");
    fprintf(f, "SLOs:");
    for (size_t i = 0; i < s->n_slo; i++)
        fprintf(f, "%s %s", i ? "," : "", s->slo[i].text);
    fprintf(f, "%s (each at the %s end of its %g%% t-interval)\n", s->n_slo ? "" : " none",
            "upper/lower", s->confidence * 100);
    if (s->n_periods > 1)
        fprintf(f, "each SLO must hold in every one of the %zu quarters (each at its own demand "
                "and fleet); an SLO column shows its binding quarter (the worst; a fleet that "
                "misses: the first quarter missed, in brackets), %s the mean over the quarters\n",
                s->n_periods, s->metrics[0]);
    fprintf(f, "\n%-16s %7s %8s", "choice", "nodes", "GPUs");
    for (size_t m = 0; m < s->n_metrics; m++)
        fprintf(f, "  %23.23s", s->metrics[m]);
    fprintf(f, "  meets\n");
    /* by choice, then nodes */
    for (size_t c = 0; c < s->n_choices; c++)
        for (size_t k = 0; k < s->choices[c].n_nodes; k++) {
            long pi = find_point(r, c, s->choices[c].nodes[k]);
            if (pi >= 0)
                print_point(f, s, &r->points[pi], pi == r->chosen);
        }
    size_t runs = 0;
    for (size_t i = 0; i < r->n_points; i++)
        runs += r->points[i].n_periods * (size_t)s->replications;
    fprintf(f, "\nevaluated %zu candidate%s in %zu round%s (%zu runs%s)", r->n_points,
            r->n_points == 1 ? "" : "s", r->rounds, r->rounds == 1 ? "" : "s", runs,
            s->n_periods > 1 ? ", quarter by quarter up to the first quarter missed" : "");
    size_t total = 0;
    for (size_t c = 0; c < s->n_choices; c++)
        total += s->choices[c].n_nodes;
    fprintf(f, " of %zu possible\n", total);
    if (r->nonmonotone)
        fprintf(f, "warning: %zu pair%s where more nodes did not meet the SLOs while fewer did "
                "(not monotone within the noise; more replications help)\n", r->nonmonotone,
                r->nonmonotone == 1 ? "" : "s");
    fprintf(f, "\nfrontier (%s vs the SLO metrics; no other point is better in all):\n",
            s->metrics[0]);
    for (int pass = 0; pass < 1; pass++) {
        /* by objective, ascending: repeated selection (the frontier is small) */
        unsigned char *done = fs_calloc(r->n_points ? r->n_points : 1, 1);
        for (size_t n = 0; done && n < r->n_points; n++) {
            long b = -1;
            for (size_t i = 0; i < r->n_points; i++)
                if (r->points[i].frontier && !done[i] &&
                    (b < 0 || better(&r->points[i], &r->points[b])))
                    b = (long)i;
            if (b < 0)
                break;
            done[b] = 1;
            const fs_plan_point_t *p = &r->points[b];
            char vb[64];
            fprintf(f, "  %-16s %7" PRIu32 " nodes  %s %s", s->choices[p->choice].name, p->nodes,
                    s->metrics[0], fmt_v(vb, sizeof vb, s->metrics[0], p->ci[0].mean));
            for (size_t i = 0; i < s->n_slo; i++)
                fprintf(f, "  %s %s", s->metrics[1 + i],
                        fmt_v(vb, sizeof vb, s->metrics[1 + i], p->ci[1 + i].mean));
            fprintf(f, "  %s\n", p->meets ? "meets" : "misses");
        }
        fs_free(done);
    }
    fprintf(f, "\nper choice, the smallest fleet that meets the SLOs:\n");
    for (size_t c = 0; c < s->n_choices; c++) {
        if (r->best[c] < 0) {
            uint32_t top = s->choices[c].nodes[s->choices[c].n_nodes - 1];
            fprintf(f, "  %-16s none up to %" PRIu32 " nodes", s->choices[c].name, top);
            long pi = find_point(r, c, top);
            if (s->n_periods > 1 && pi >= 0 && r->points[pi].miss_period >= 0) {
                const fs_plan_point_t *p = &r->points[pi];
                char name[16], prev[16], b[64];
                fs_plan_period_name((size_t)p->miss_period, name, sizeof name);
                if (p->miss_period == 0) {
                    fprintf(f, ": %" PRIu32 " nodes miss the SLOs already in %s:", top, name);
                } else {
                    fs_plan_period_name((size_t)p->miss_period - 1, prev, sizeof prev);
                    fprintf(f, ": %" PRIu32 " nodes meet the SLOs through %s, first miss them in "
                            "%s:", top, prev, name);
                }
                for (size_t i = 0; i < s->n_slo; i++)
                    fprintf(f, "%s %s %s", i ? "," : "", s->metrics[1 + i],
                            fmt_ci(b, sizeof b, s->metrics[1 + i],
                                   &p->period_ci[(size_t)p->miss_period * s->n_metrics + 1 + i]));
                fprintf(f, "\n");
                print_periods(f, s, p, "      ");
                continue;
            }
            fprintf(f, "\n");
            continue;
        }
        const fs_plan_point_t *p = &r->points[r->best[c]];
        char b[64];
        fprintf(f, "  %-16s %7" PRIu32 " nodes (%" PRIu64 " %s GPUs)  %s %s\n",
                s->choices[c].name, p->nodes, p->gpus, s->choices[c].gpu, s->metrics[0],
                fmt_ci(b, sizeof b, s->metrics[0], &p->ci[0]));
    }
    if (r->chosen < 0) {
        fprintf(f, "\nchosen: none: no evaluated fleet meets the SLOs%s (widen the node ranges%s)\n",
                s->n_periods > 1 ? " in every quarter" : "",
                s->n_periods > 1 ? ", or add a later purchase: cost.purchases with a quarter" : "");
        return;
    }
    const fs_plan_point_t *p = &r->points[r->chosen];
    if (isnan(p->ci[0].mean))
        fprintf(f, "\nwarning: the objective %s has no value for the chosen fleet (NaN: for cost, a "
                "GPU type without prices, docs/cost.md); it was chosen by fewest GPUs\n",
                s->metrics[0]);
    char b1[48], b2[48], b3[48];
    const char *m0 = s->metrics[0];
    fprintf(f, "\nchosen: %s, %" PRIu32 " nodes of pool %s (%" PRIu64 " %s GPUs): %s %s "
            "[%s, %s]", s->choices[p->choice].name, p->nodes, s->choices[p->choice].pool,
            p->gpus, s->choices[p->choice].gpu, m0, fmt_v(b1, sizeof b1, m0, p->ci[0].mean),
            fmt_v(b2, sizeof b2, m0, p->ci[0].lo), fmt_v(b3, sizeof b3, m0, p->ci[0].hi));
    for (size_t i = 0; i < s->n_slo; i++) {
        const char *m = s->metrics[1 + i];
        fprintf(f, "; %s %s [%s, %s]", m, fmt_v(b1, sizeof b1, m, p->ci[1 + i].mean),
                fmt_v(b2, sizeof b2, m, p->ci[1 + i].lo), fmt_v(b3, sizeof b3, m, p->ci[1 + i].hi));
        if (s->n_periods > 1) {
            char name[16];
            fs_plan_period_name(p->binding[1 + i], name, sizeof name);
            fprintf(f, " in %s", name);
        }
    }
    fprintf(f, "\n");
    if (s->n_periods > 1) {
        fprintf(f, "the chosen fleet's SLOs in every quarter (%g%% t-intervals):\n",
                s->confidence * 100);
        print_periods(f, s, p, "  ");
    }
}

/* ---- plan.h5 ------------------------------------------------------------------------------ */

/* Column names are built at run time ("wait_p95_mean"): each column's name
 * lives in names[n], beside the columns. */
typedef char colname_t[96];

static size_t add_col(fs_h5_col_t *cols, colname_t *names, size_t n, const char *name,
                      const char *suffix, int kind, size_t width)
{
    snprintf(names[n], sizeof names[n], "%s%s", name, suffix);
    cols[n].name = names[n];
    cols[n].kind = kind;
    cols[n].width = width;
    return n + 1;
}

/* Metric m's first position in the metric list (columns are written once). */
static int metric_first(const fs_plan_spec_t *s, size_t m)
{
    for (size_t j = 0; j < m; j++)
        if (strcmp(s->metrics[j], s->metrics[m]) == 0)
            return 0;
    return 1;
}

static void put(char *row, const fs_h5_col_t *c, const void *v)
{
    memcpy(row + c->off, v, fs_h5_col_size(c));
}

static void put_str(char *row, const fs_h5_col_t *c, const char *s)
{
    size_t n = strlen(s);
    memcpy(row + c->off, s, n < c->width ? n : c->width);
}

static size_t name_width(const fs_plan_spec_t *s, int what)
{
    size_t w = 1;
    for (size_t c = 0; c < s->n_choices; c++) {
        const char *v = what == 0 ? s->choices[c].name : what == 1 ? s->choices[c].pool
                                                                   : s->choices[c].gpu;
        if (strlen(v) > w)
            w = strlen(v);
    }
    return w;
}

static int write_plan_table(hid_t f, const fs_plan_spec_t *s, const fs_plan_result_t *r)
{
    size_t cap = 11 + 4 * s->n_metrics, n = 0;
    fs_h5_col_t *cols = fs_calloc(cap, sizeof *cols);
    colname_t *names = fs_calloc(cap, sizeof *names);
    if (!cols || !names) {
        fs_free(cols);
        fs_free(names);
        return -1;
    }
    n = add_col(cols, names, n, "choice", "", FS_H5_STR, name_width(s, 0));
    n = add_col(cols, names, n, "pool", "", FS_H5_STR, name_width(s, 1));
    n = add_col(cols, names, n, "gpu", "", FS_H5_STR, name_width(s, 2));
    n = add_col(cols, names, n, "nodes", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "gpus", "", FS_H5_U64, 0);
    n = add_col(cols, names, n, "round", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "replications", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "meets", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "frontier", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "best", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "chosen", "", FS_H5_U32, 0);
    size_t fixed = n;
    for (size_t m = 0; m < s->n_metrics; m++) {
        if (!metric_first(s, m))
            continue;
        n = add_col(cols, names, n, s->metrics[m], "_mean", FS_H5_F64, 0);
        n = add_col(cols, names, n, s->metrics[m], "_sd", FS_H5_F64, 0);
        n = add_col(cols, names, n, s->metrics[m], "_lo", FS_H5_F64, 0);
        n = add_col(cols, names, n, s->metrics[m], "_hi", FS_H5_F64, 0);
    }
    size_t row = fs_h5_layout(cols, n);
    char *rows = fs_calloc(r->n_points ? r->n_points : 1, row);
    if (!rows) {
        fs_free(cols);
        fs_free(names);
        return -1;
    }
    for (size_t i = 0; i < r->n_points; i++) {
        const fs_plan_point_t *p = &r->points[i];
        const fs_plan_choice_t *ch = &s->choices[p->choice];
        char *w = rows + i * row;
        uint32_t u[7] = {p->nodes, 0, p->round, (uint32_t)s->replications, (uint32_t)p->meets,
                         (uint32_t)p->frontier, 0};
        uint32_t best = r->best[p->choice] == (long)i, chosen = r->chosen == (long)i;
        put_str(w, &cols[0], ch->name);
        put_str(w, &cols[1], ch->pool);
        put_str(w, &cols[2], ch->gpu);
        put(w, &cols[3], &u[0]);
        put(w, &cols[4], &p->gpus);
        put(w, &cols[5], &u[2]);
        put(w, &cols[6], &u[3]);
        put(w, &cols[7], &u[4]);
        put(w, &cols[8], &u[5]);
        put(w, &cols[9], &best);
        put(w, &cols[10], &chosen);
        size_t k = fixed;
        for (size_t m = 0; m < s->n_metrics; m++) {
            if (!metric_first(s, m))
                continue;
            put(w, &cols[k++], &p->ci[m].mean);
            put(w, &cols[k++], &p->ci[m].sd);
            put(w, &cols[k++], &p->ci[m].lo);
            put(w, &cols[k++], &p->ci[m].hi);
        }
    }
    int rc = fs_h5_write_table(f, "plan", cols, n, row, rows, r->n_points);
    fs_free(rows);
    fs_free(cols);
    fs_free(names);
    return rc;
}

static int write_runs_table(hid_t f, const fs_plan_spec_t *s, const fs_plan_result_t *r)
{
    size_t n = 0, reps = (size_t)s->replications, nrows = r->n_points * reps;
    fs_h5_col_t *cols = fs_calloc(3 + s->n_metrics, sizeof *cols);
    colname_t *names = fs_calloc(3 + s->n_metrics, sizeof *names);
    if (!cols || !names) {
        fs_free(cols);
        fs_free(names);
        return -1;
    }
    n = add_col(cols, names, n, "choice", "", FS_H5_STR, name_width(s, 0));
    n = add_col(cols, names, n, "nodes", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "replication", "", FS_H5_U32, 0);
    for (size_t m = 0; m < s->n_metrics; m++)
        if (metric_first(s, m))
            n = add_col(cols, names, n, s->metrics[m], "", FS_H5_F64, 0);
    size_t row = fs_h5_layout(cols, n);
    char *rows = fs_calloc(nrows ? nrows : 1, row);
    if (!rows) {
        fs_free(cols);
        fs_free(names);
        return -1;
    }
    for (size_t i = 0; i < r->n_points; i++)
        for (size_t k = 0; k < reps; k++) {
            const fs_plan_point_t *p = &r->points[i];
            char *w = rows + (i * reps + k) * row;
            uint32_t rep = (uint32_t)k;
            put_str(w, &cols[0], s->choices[p->choice].name);
            put(w, &cols[1], &p->nodes);
            put(w, &cols[2], &rep);
            size_t c = 3;
            for (size_t m = 0; m < s->n_metrics; m++)
                if (metric_first(s, m))
                    put(w, &cols[c++], &p->runs[k * s->n_metrics + m]);
        }
    int rc = fs_h5_write_table(f, "plan_runs", cols, n, row, rows, nrows);
    fs_free(rows);
    fs_free(cols);
    fs_free(names);
    return rc;
}

/* With periods: /plan_periods, one row per point and period looked at:
 * choice, nodes, quarter (1-based), meets, and per metric _mean, _lo, _hi. */
static int write_periods_table(hid_t f, const fs_plan_spec_t *s, const fs_plan_result_t *r)
{
    size_t n = 0, nrows = 0, cap = 4 + 3 * s->n_metrics;
    for (size_t i = 0; i < r->n_points; i++)
        nrows += r->points[i].n_periods;
    fs_h5_col_t *cols = fs_calloc(cap, sizeof *cols);
    colname_t *names = fs_calloc(cap, sizeof *names);
    if (!cols || !names) {
        fs_free(cols);
        fs_free(names);
        return -1;
    }
    n = add_col(cols, names, n, "choice", "", FS_H5_STR, name_width(s, 0));
    n = add_col(cols, names, n, "nodes", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "quarter", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "meets", "", FS_H5_U32, 0);
    for (size_t m = 0; m < s->n_metrics; m++)
        if (metric_first(s, m)) {
            n = add_col(cols, names, n, s->metrics[m], "_mean", FS_H5_F64, 0);
            n = add_col(cols, names, n, s->metrics[m], "_lo", FS_H5_F64, 0);
            n = add_col(cols, names, n, s->metrics[m], "_hi", FS_H5_F64, 0);
        }
    size_t row = fs_h5_layout(cols, n);
    char *rows = fs_calloc(nrows ? nrows : 1, row);
    if (!rows) {
        fs_free(cols);
        fs_free(names);
        return -1;
    }
    size_t w = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        const fs_plan_point_t *p = &r->points[i];
        for (size_t q = 0; q < p->n_periods; q++, w++) {
            char *o = rows + w * row;
            uint32_t quarter = (uint32_t)q + 1, meets = (long)q != p->miss_period;
            put_str(o, &cols[0], s->choices[p->choice].name);
            put(o, &cols[1], &p->nodes);
            put(o, &cols[2], &quarter);
            put(o, &cols[3], &meets);
            size_t c = 4;
            for (size_t m = 0; m < s->n_metrics; m++)
                if (metric_first(s, m)) {
                    const fs_ci_t *ci = &p->period_ci[q * s->n_metrics + m];
                    put(o, &cols[c++], &ci->mean);
                    put(o, &cols[c++], &ci->lo);
                    put(o, &cols[c++], &ci->hi);
                }
        }
    }
    int rc = fs_h5_write_table(f, "plan_periods", cols, n, row, rows, nrows);
    fs_free(rows);
    fs_free(cols);
    fs_free(names);
    return rc;
}

static int write_attrs(hid_t f, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                       const fs_plan_meta_t *meta)
{
    const char *e = "";
    const char **slo = fs_calloc(s->n_slo + 1, sizeof *slo);
    const char **slo_metric = fs_calloc(s->n_slo + 1, sizeof *slo_metric);
    const char **slo_kind = fs_calloc(s->n_slo + 1, sizeof *slo_kind);
    double *slo_bound = fs_calloc(s->n_slo + 1, sizeof *slo_bound);
    const char **names = fs_calloc(s->n_choices + 1, sizeof *names);
    int bad = !slo || !names || !slo_metric || !slo_kind || !slo_bound;
    for (size_t i = 0; !bad && i < s->n_slo; i++) {
        slo[i] = s->slo[i].text;
        slo_metric[i] = s->slo[i].metric;
        slo_kind[i] = s->slo[i].kind == FS_PLAN_LE ? "max" : "min";
        slo_bound[i] = s->slo[i].bound;
    }
    for (size_t i = 0; !bad && i < s->n_choices; i++)
        names[i] = s->choices[i].name;
    bad = bad ||
          fs_h5_attr_u64(f, "format_version", FS_PLAN_FORMAT_VERSION) ||
          fs_h5_attr_str(f, "fleetsim_version", FLEETSIM_VERSION) ||
          fs_h5_attr_str(f, "kind", "fleetsim plan") ||
          fs_h5_attr_str(f, "name", meta->name ? meta->name : e) ||
          fs_h5_attr_str(f, "scenario", meta->scenario_text ? meta->scenario_text : e) ||
          fs_h5_attr_str(f, "scenario_path", meta->scenario_path ? meta->scenario_path : e) ||
          fs_h5_attr_strs(f, "sets", meta->sets, meta->n_sets) ||
          fs_h5_attr_str(f, "objective", s->metrics[0]) ||
          fs_h5_attr_f64(f, "confidence", s->confidence) ||
          fs_h5_attr_u64(f, "replications", s->replications) ||
          fs_h5_attr_str(f, "search", s->search == FS_PLAN_SCAN ? "scan" : "bisect") ||
          fs_h5_attr_strs(f, "slo", slo, s->n_slo) ||
          /* the SLOs as numbers (bounds in the metric's unit, seconds for times) */
          fs_h5_attr_strs(f, "slo_metric", slo_metric, s->n_slo) ||
          fs_h5_attr_strs(f, "slo_kind", slo_kind, s->n_slo) ||
          (s->n_slo && H5LTset_attribute_double(f, "/", "slo_bound", slo_bound, s->n_slo) < 0) ||
          fs_h5_attr_strs(f, "choices", names, s->n_choices) ||
          fs_h5_attr_u64(f, "evaluations", r->n_points) ||
          fs_h5_attr_u64(f, "rounds", r->rounds) ||
          fs_h5_attr_u64(f, "runs", r->n_points * s->replications) ||
          fs_h5_attr_u64(f, "nonmonotone", r->nonmonotone) ||
          fs_h5_attr_u64(f, "feasible", r->chosen >= 0) ||
          fs_h5_attr_f64(f, "discount_rate", meta->cash ? meta->cash->rate : NAN) ||
          fs_h5_attr_str(f, "currency", "USD");
    fs_free(slo);
    fs_free(slo_metric);
    fs_free(slo_kind);
    fs_free(slo_bound);
    fs_free(names);
    if (bad || r->chosen < 0)
        return bad ? -1 : 0;
    const fs_plan_point_t *p = &r->points[r->chosen];
    const fs_plan_choice_t *ch = &s->choices[p->choice];
    return fs_h5_attr_str(f, "chosen_choice", ch->name) ||
           fs_h5_attr_str(f, "chosen_pool", ch->pool) ||
           fs_h5_attr_str(f, "chosen_gpu", ch->gpu) ||
           fs_h5_attr_u64(f, "chosen_nodes", p->nodes) ||
           fs_h5_attr_u64(f, "chosen_gpus", p->gpus) ||
           fs_h5_attr_f64(f, "chosen_objective_mean", p->ci[0].mean) ||
           fs_h5_attr_f64(f, "chosen_objective_lo", p->ci[0].lo) ||
           fs_h5_attr_f64(f, "chosen_objective_hi", p->ci[0].hi) ||
           (meta->cash &&
            (fs_h5_attr_f64(f, "chosen_purchase", meta->cash->purchase) ||
             fs_h5_attr_f64(f, "chosen_depreciation_share", meta->cash->depreciation_share) ||
             fs_h5_attr_f64(f, "chosen_opex_per_year", meta->cash->opex_per_year) ||
             fs_h5_attr_f64(f, "chosen_residual", meta->cash->residual) ||
             fs_h5_attr_f64(f, "cash_flow_years", meta->cash->years) ||
             fs_h5_attr_f64(f, "chosen_npv", meta->cash->npv)))
               ? -1
               : 0;
}

/* /plan_quarters: one row per (fleet, replication, quarter); /plan_sensitivity:
 * one row per parameter (plan.years). */
static int write_fin_tables(hid_t f, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                            const fs_plan_fin_t *fin)
{
    size_t Q = fin->n_q, R = fin->reps, nrows = 0;
    for (size_t c = 0; c < fin->n_fleets; c++)
        nrows += fin->fleets[c].point >= 0 ? R * Q : 0;
    static const char *const mix[FS_PLAN_MIX] = {"gpus_owned", "gpus_on_demand",
                                                 "gpus_reserved_1y", "gpus_reserved_3y",
                                                 "gpus_spot", "gpus_lease"};
    fs_h5_col_t cols[20];
    colname_t names[20];
    size_t n = 0;
    n = add_col(cols, names, n, "choice", "", FS_H5_STR, name_width(s, 0));
    n = add_col(cols, names, n, "nodes", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "replication", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "quarter", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "demand_scale", "", FS_H5_F64, 0);
    for (int m = 0; m < FS_PLAN_MIX; m++)
        n = add_col(cols, names, n, mix[m], "", FS_H5_F64, 0);
    n = add_col(cols, names, n, "capex", "", FS_H5_F64, 0);
    n = add_col(cols, names, n, "opex", "", FS_H5_F64, 0);
    n = add_col(cols, names, n, "gpu_hours", "", FS_H5_F64, 0);
    size_t row = fs_h5_layout(cols, n);
    char *rows = fs_calloc(nrows ? nrows : 1, row);
    if (!rows)
        return -1;
    size_t i = 0;
    for (size_t c = 0; c < fin->n_fleets; c++) {
        const fs_plan_fleet_t *fl = &fin->fleets[c];
        if (fl->point < 0)
            continue;
        for (size_t k = 0; k < R; k++)
            for (size_t q = 0; q < Q; q++, i++) {
                char *w = rows + i * row;
                uint32_t rep = (uint32_t)k, qq = (uint32_t)q + 1;
                const fs_plan_qrun_t *u = &fl->runs[k * Q + q];
                double gh = u->span_s > 0 ? u->gpu_h * FS_PLAN_QUARTER_S / u->span_s : NAN;
                put_str(w, &cols[0], s->choices[c].name);
                put(w, &cols[1], &r->points[fl->point].nodes);
                put(w, &cols[2], &rep);
                put(w, &cols[3], &qq);
                put(w, &cols[4], &fl->scale[q]);
                for (int m = 0; m < FS_PLAN_MIX; m++)
                    put(w, &cols[5 + m], &fl->mix[q * FS_PLAN_MIX + m]);
                put(w, &cols[11], &fl->q_capex[k * Q + q]);
                put(w, &cols[12], &fl->q_opex[k * Q + q]);
                put(w, &cols[13], &gh);
            }
    }
    int rc = fs_h5_write_table(f, "plan_quarters", cols, n, row, rows, nrows);
    fs_free(rows);
    if (rc || !fin->n_sens)
        return rc;
    n = 0;
    n = add_col(cols, names, n, "parameter", "", FS_H5_STR, 16);
    n = add_col(cols, names, n, "rerun", "", FS_H5_U32, 0);
    n = add_col(cols, names, n, "low_factor", "", FS_H5_F64, 0);
    n = add_col(cols, names, n, "high_factor", "", FS_H5_F64, 0);
    const char *sfx[] = {"_mean", "_lo", "_hi"};
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < 3; k++)
            n = add_col(cols, names, n, side ? "npv_high" : "npv_low", sfx[k], FS_H5_F64, 0);
    row = fs_h5_layout(cols, n);
    rows = fs_calloc(fin->n_sens, row);
    if (!rows)
        return -1;
    for (size_t k = 0; k < fin->n_sens; k++) {
        const fs_plan_sens_t *sv = &fin->sens[k];
        char *w = rows + k * row;
        uint32_t rr = (uint32_t)sv->rerun;
        double v[6] = {sv->lo.mean, sv->lo.lo, sv->lo.hi, sv->hi.mean, sv->hi.lo, sv->hi.hi};
        put_str(w, &cols[0], sv->param);
        put(w, &cols[1], &rr);
        put(w, &cols[2], &sv->lo_factor);
        put(w, &cols[3], &sv->hi_factor);
        for (int j = 0; j < 6; j++)
            put(w, &cols[4 + j], &v[j]);
    }
    rc = fs_h5_write_table(f, "plan_sensitivity", cols, n, row, rows, fin->n_sens);
    fs_free(rows);
    return rc;
}

static int write_fin_attrs(hid_t f, const fs_plan_spec_t *s, const fs_plan_fin_t *fin)
{
    if (fs_h5_attr_f64(f, "years", fin->years) ||
        fs_h5_attr_f64(f, "demand_growth", fin->demand_growth) ||
        fs_h5_attr_f64(f, "electricity_growth", fin->elec_growth) ||
        fs_h5_attr_f64(f, "gpu_price_decline", fin->price_decline) ||
        fs_h5_attr_f64(f, "sensitivity", fin->sensitivity) ||
        fs_h5_attr_u64(f, "quarter_runs", fin->quarter_runs) ||
        fs_h5_attr_u64(f, "sensitivity_runs", fin->sens_runs) ||
        fs_h5_attr_str(f, "baseline", fin->baseline >= 0 ? s->choices[fin->baseline].name : ""))
        return -1;
    if (fin->sens_choice < 0)
        return 0;
    const fs_plan_fleet_t *fl = &fin->fleets[fin->sens_choice];
    return fs_h5_attr_str(f, "sensitivity_choice", s->choices[fin->sens_choice].name) ||
           fs_h5_attr_f64(f, "sensitivity_npv_mean", fl->npv_ci.mean);
}

int fs_plan_write(const char *path, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                  const fs_plan_meta_t *meta, fs_error_t *err)
{
    fs_out_t out;   /* the target's rules and the temporary: sim/fs_out.h */
    int orc = fs_out_prepare(&out, path, err);
    if (orc)
        return orc;
    char *tmp = fs_strdup(out.tmp);
    if (!tmp) {
        fs_out_release(&out);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    }
    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl >= 0)
        H5Pset_obj_track_times(fcpl, 0);
    hid_t f = fcpl >= 0 ? H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT) : -1;
    if (fcpl >= 0)
        H5Pclose(fcpl);
    const char *step = "creating the file";
    int ok = f >= 0;
    if (ok) {
        step = "writing the attributes";
        ok = write_attrs(f, s, r, meta) == 0 && fs_h5_attr_u64(f, "complete", 0) == 0;
    }
    if (ok) {
        step = "writing /plan";
        ok = write_plan_table(f, s, r) == 0;
    }
    if (ok) {
        step = "writing /plan_runs";
        ok = write_runs_table(f, s, r) == 0;
    }
    if (ok && s->n_periods > 1) {
        step = "writing /plan_periods";
        ok = write_periods_table(f, s, r) == 0 &&
             fs_h5_attr_u64(f, "search_quarters", s->n_periods) == 0;
    }
    if (ok && meta->fin) {
        step = "writing /plan_quarters and /plan_sensitivity";
        ok = write_fin_tables(f, s, r, meta->fin) == 0 && write_fin_attrs(f, s, meta->fin) == 0;
    }
    if (ok) { /* complete = 1 last */
        step = "setting complete = 1";
        uint64_t one = 1;
        hid_t a = H5Aopen(f, "complete", H5P_DEFAULT);
        ok = a >= 0 && H5Awrite(a, H5T_NATIVE_UINT64, &one) >= 0;
        if (a >= 0)
            H5Aclose(a);
    }
    if (f >= 0 && H5Fclose(f) < 0 && ok) {
        ok = 0;
        step = "closing";
    }
    fs_h5_quiet_end(&q);
    int rc = 0;
    if (ok)
        rc = fs_out_commit(&out, NULL, err);
    else
        rc = fs_error_set(err, FS_EIO, "%s: %s failed (HDF5)", path, step);
    if (rc)
        unlink(tmp);
    fs_free(tmp);
    fs_out_release(&out);
    return rc;
}
