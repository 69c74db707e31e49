/*
 * fleetsim versus: one workload under several policies side by side, with
 * common random numbers (docs/policies.md, "Side by side").
 *
 *   fleetsim versus S.yaml -p fifo=scheduler.queue=fifo \
 *       -p easy=scheduler.queue=fifo,scheduler.backfill=easy -r 10 -o DIR
 *
 * Each -p is a named variant: overrides of the base scenario.  The variants
 * become the points of a sweep (scenarios/fs_sweep.h,
 * fs_sweep_plan_set_variants), run by the sweep machinery
 * (sim/api/fs_sweeprun.h) on threads with replication r of every variant on
 * the same random streams; DIR is an ordinary sweep directory (fleetsim
 * report DIR/index.h5, fleetsim compare DIR/index.h5 --points 0 1).  The
 * table printed: every chosen /summary metric per variant as mean +- the
 * 95% t half-width over the replications (analysis/fs_ci.h), then each
 * variant minus the first, paired by replication (analysis/fs_compare.h),
 * with its interval and whether it excludes 0.  The values are read from
 * the run files (their /summary and, as SERVICE.COLUMN, /services), so a
 * variant whose runs failed is marked with its error while the others are
 * shown (exit status 1; the index is written only when every run ran).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_cli.h"
#include "../api/fs_sweeprun.h"
#include "../../analysis/fs_ci.h"
#include "../../analysis/fs_compare.h"
#include "../../analysis/fs_index.h"
#include "../../analysis/fs_tenants.h"
#include "../../models/fs_policy.h"
#include "../../analysis/fs_fmt.h"
#include "../../scenarios/fs_scenario.h"
#include "fs_json.h"
#include "../../scenarios/fs_sweep.h"
#include "../../analysis/fs_h5util.h"
#include "../../analysis/fs_results.h"
#include "../fs_alloc.h"

#include <hdf5.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_VARIANTS 64
#define MAX_KEYS 64

static const char *const default_metrics[] = {
    "jobs_completed", "utilization", "goodput", "wait_mean", "wait_p95", "jct_mean", "makespan",
};

/* A variant as parsed: NAME and its KEY=VALUE pairs (pointers into
 * `text`, its -p argument copied and cut in place). */
typedef struct variant {
    char *text;                 /* owned copy of the -p argument, cut in place */
    const char *name;
    const char *keys[MAX_KEYS];
    const char *values[MAX_KEYS];
    size_t n;
} variant_t;

typedef struct vopts {
    const char *scenario, *dir;
    const char **sets;
    size_t n_sets;
    variant_t v[MAX_VARIANTS];
    size_t n_v;
    unsigned long long reps, jobs;
    int have_reps, quiet, resume, json;
    double progress_every;  /* --progress (-1: the default) */
    const char *metrics;        /* comma list, or NULL: default_metrics */
    /* after the runs: the first failure of each variant (code 0: every replication ran) */
    fs_error_t failed[MAX_VARIANTS];
    uint64_t failed_rep[MAX_VARIANTS]; /* the replication of that failure (the lowest) */
    size_t n_failed;
    size_t base;                /* the baseline: the first variant that ran */
} vopts_t;

/* Splits "K=V,K=V" at commas outside {} and [] (flow values keep theirs)
 * into v; returns 0 or a usage error. */
static int split_pairs(variant_t *v, char *s)
{
    while (*s) {
        char *start = s;
        int depth = 0;
        for (; *s && (*s != ',' || depth > 0); s++) {
            if (*s == '{' || *s == '[')
                depth++;
            else if ((*s == '}' || *s == ']') && depth > 0)
                depth--;
        }
        if (*s)
            *s++ = '\0';
        char *eq = strchr(start, '=');
        if (!eq || eq == start)
            return fs_cli_usage_error("versus", "-p %s: '%s' is not KEY=VALUE", v->name, start);
        if (v->n == MAX_KEYS)
            return fs_cli_usage_error("versus", "-p %s: more than %d keys", v->name, MAX_KEYS);
        *eq = '\0';
        v->keys[v->n] = start;
        v->values[v->n++] = eq + 1;
    }
    return 0;
}

/* -p NAME[=KEY=VALUE[,KEY=VALUE]...]: a variant (NAME alone: the scenario
 * as it is). */
static int parse_variant(vopts_t *o, const char *arg)
{
    char *text = fs_strdup(arg);
    if (!text)
        return 1;
    char *eq = strchr(text, '=');
    if (eq)
        *eq = '\0';
    int rc = 0;
    if (!*text || strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.+")
                      != strlen(text))
        rc = fs_cli_usage_error("versus", "-p '%s': expected NAME=KEY=VALUE[,KEY=VALUE...] "
                                "with NAME made of letters, digits, '_', '-', '.', '+'", arg);
    for (size_t i = 0; i < o->n_v && !rc; i++)
        if (strcmp(o->v[i].name, text) == 0)
            rc = fs_cli_usage_error("versus", "-p %s is given twice", text);
    if (!rc && o->n_v == MAX_VARIANTS)
        rc = fs_cli_usage_error("versus", "more than %d policies", MAX_VARIANTS);
    if (rc) {
        fs_free(text);
        return rc;
    }
    variant_t *v = &o->v[o->n_v++];
    v->text = text;
    v->name = text;
    return eq ? split_pairs(v, eq + 1) : 0;
}

static void free_opts(vopts_t *o)
{
    for (size_t i = 0; i < o->n_v; i++)
        fs_free(o->v[i].text);
    fs_free((void *)o->sets);
}

static int parse_args(vopts_t *o, int argc, char **argv, int *done)
{
    *done = 0;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "versus", argc, argv, fs_cli_find("versus")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        int bad = 0;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("versus"));
            *done = 1;
            return 0;
        } else if (id == 'p') {
            bad = !v ? fs_cli_usage_error("versus", "%s needs NAME=KEY=VALUE", a)
                              : parse_variant(o, v);
        } else if (id == 'o') {
            if (!v)
                bad = fs_cli_usage_error("versus", "%s needs a directory", a);
            else
                o->dir = v;
        } else if (id == 'r') {
            if (!v || fs_cli_parse_u64(v, &o->reps) || o->reps < 1 ||
                o->reps > 100000)
                bad = fs_cli_usage_error("versus", "-r needs a number of replications from 1 "
                                         "to 100000 (intervals need 2)");
            o->have_reps = 1;
        } else if (id == 'j') {
            if (!v || fs_cli_parse_u64(v, &o->jobs) || o->jobs < 1 ||
                o->jobs > 4096)
                bad = fs_cli_usage_error("versus", "-j needs a number of threads from 1 to 4096");
        } else if (id == FS_OPT_SET) {
            if (!v || !strchr(v, '='))
                bad = fs_cli_usage_error("versus", "--set needs KEY=VALUE");
            else
                o->sets[o->n_sets++] = v;
        } else if (id == FS_OPT_METRICS) {
            if (!v || !*v)
                bad = fs_cli_usage_error("versus", "--metrics needs NAME[,NAME...]");
            else
                o->metrics = v;
        } else if (id == FS_OPT_RESUME) {
            o->resume = 1;
        } else if (id == FS_OPT_JSON) {
            o->json = 1;
        } else if (id == 'q') {
            o->quiet = 1;
        } else if (id == FS_OPT_PROGRESS) {
            bad = fs_cli_parse_progress("versus", v, &o->progress_every);
        } else if (id == FS_CLI_BAD) {
            bad = g.status;
        } else if (!o->scenario) {
            o->scenario = a;
        } else {
            bad = fs_cli_usage_error("versus", "only one scenario file may be given");
        }
        if (bad)
            return bad;
    }
    if (!o->scenario)
        return fs_cli_usage_error("versus", "a scenario file is needed");
    if (!o->dir)
        return fs_cli_usage_error("versus", "-o DIR is needed (the output directory)");
    if (o->n_v < 2)
        return fs_cli_usage_error("versus", "give at least two policies (-p NAME=KEY=VALUE)");
    return 0;
}

/* What can differ between replications, over every variant: writes a
 * description into buf ("" when nothing: a deterministic replay) and
 * returns the number of sources.  Scenario errors are left to the plan. */
static int random_sources(const vopts_t *o, char *buf, size_t n)
{
    int synth = 0, fail = 0, place = 0;
    for (size_t i = 0; i < o->n_v; i++) {
        const char **sets = fs_calloc(o->n_sets + o->v[i].n + 1, sizeof *sets);
        char **own = fs_calloc(o->v[i].n + 1, sizeof *own);
        size_t m = 0;
        int oom = !sets || !own;
        for (size_t k = 0; !oom && k < o->n_sets; k++)
            sets[m++] = o->sets[k];
        for (size_t k = 0; !oom && k < o->v[i].n; k++) {
            size_t len = strlen(o->v[i].keys[k]) + strlen(o->v[i].values[k]) + 2;
            if (!(own[k] = fs_malloc(len))) {
                oom = 1;
                break;
            }
            snprintf(own[k], len, "%s=%s", o->v[i].keys[k], o->v[i].values[k]);
            sets[m++] = own[k];
        }
        fs_config_t cfg;
        fs_error_t err;
        if (!oom && fs_scenario_load_file(o->scenario, sets, m, &cfg, &err) == 0) {
            synth |= cfg.workload.kind != FS_WORKLOAD_TRACE;
            fail |= cfg.failures.given;
            place |= cfg.scheduler.placement == FS_PLACE_RANDOM;
            fs_config_release(&cfg);
        } else {
            synth = 1;      /* unknown: assume it varies */
        }
        for (size_t k = 0; own && k < o->v[i].n; k++)
            fs_free(own[k]);
        fs_free(own);
        fs_free(sets);
    }
    snprintf(buf, n, "%s%s%s%s%s", synth ? "arrivals, sizes and durations (synthetic workload)" : "",
             synth && (fail || place) ? ", " : "", fail ? "failure and repair times" : "",
             fail && place ? ", " : "", place ? "random placement" : "");
    return synth + fail + place;
}

/* The plan: the scenario with "sweep={replications: R}" (its own sweep
 * section, if any, replaced), then one point per variant. */
static int make_plan(const vopts_t *o, fs_sweep_plan_t **plan, fs_error_t *err)
{
    char rs[64];
    snprintf(rs, sizeof rs, "sweep={replications: %llu}", o->have_reps ? o->reps : 10ull);
    o->sets[o->n_sets] = rs;
    int rc = fs_sweep_plan_create(o->scenario, o->sets, o->n_sets + 1, plan, err);
    o->sets[o->n_sets] = NULL;
    if (rc)
        return rc;
    fs_sweep_variant_t sv[MAX_VARIANTS];
    for (size_t i = 0; i < o->n_v; i++)
        sv[i] = (fs_sweep_variant_t){o->v[i].name, o->v[i].keys, o->v[i].values, o->v[i].n};
    rc = fs_sweep_plan_set_variants(*plan, sv, o->n_v, err);
    if (rc) {
        fs_sweep_plan_destroy(*plan);
        *plan = NULL;
    }
    return rc;
}

/* ---- the table ------------------------------------------------------------------------------ */

/* The metric names to show (owned array of borrowed or owned strings). */
static size_t pick_metrics(const char *list, char *buf, size_t cap, const char **out,
                           size_t max)
{
    size_t n = 0;
    if (!list) {
        for (size_t i = 0; i < sizeof default_metrics / sizeof *default_metrics && n < max; i++)
            out[n++] = default_metrics[i];
        return n;
    }
    snprintf(buf, cap, "%s", list);
    for (char *t = strtok(buf, ","); t && n < max; t = strtok(NULL, ","))
        out[n++] = t;
    return n;
}

/* The unit a metric is shown in: a service's figure (SERVICE.COLUMN,
 * docs/results.md /services) by its column, a /summary one by its name. */
static fs_fmt_unit_t metric_unit(const char *m)
{
    const char *dot = strrchr(m, '.');
    if (!dot)
        return fs_fmt_metric_unit(m);
    const char *c = dot + 1;
    if (strncmp(c, "ttft_", 5) == 0 || strncmp(c, "tpot_", 5) == 0)
        return FS_FMT_DURATION;
    if (strcmp(c, "slo_attainment") == 0 || strcmp(c, "buckets_met") == 0)
        return FS_FMT_SHARE;
    return FS_FMT_NUMBER;
}

/* The width of the metric column: 16, or the longest name shown. */
static int metric_width(const char *const *ms, size_t nm)
{
    size_t w = 16;
    for (size_t k = 0; k < nm; k++)
        if (strlen(ms[k]) > w)
            w = strlen(ms[k]);
    return (int)w;
}

static int has_metric(const fs_compare_side_t *s, const char *m)
{
    for (size_t i = 0; i < s->n_metrics; i++)
        if (strcmp(s->metrics[i], m) == 0)
            return 1;
    return 0;
}

/* Metric m over side s's replications (s->n_reps values). */
static int side_ci(const fs_compare_side_t *s, const char *m, fs_ci_t *ci)
{
    double *x = fs_calloc(s->n_reps ? s->n_reps : 1, sizeof *x);
    if (!x)
        return FS_ENOMEM;
    for (size_t r = 0; r < s->n_reps; r++)
        x[r] = fs_compare_side_value(s, r, m);
    int rc = fs_ci_t_interval(x, s->n_reps, 0.95, ci);
    fs_free(x);
    return rc;
}

/* "mean +- half" of metric m over side s's replications, in the metric's
 * unit; the mean alone when the replications agree (or there is one). */
static void cell(const fs_compare_side_t *s, const char *m, char *buf, size_t n)
{
    fs_ci_t ci;
    if (side_ci(s, m, &ci) != 0 || ci.n == 0)
        snprintf(buf, n, "-");
    else
        fs_fmt_interval(buf, n, metric_unit(m), ci.mean,
                        fs_compare_side_constant(s, m) ? 0 : ci.half);
}

static const fs_compare_row_t *find_row(const fs_compare_t *c, const char *m)
{
    for (size_t i = 0; i < c->n_rows; i++)
        if (strcmp(c->rows[i].metric, m) == 0)
            return &c->rows[i];
    return NULL;
}

/* 1 when every replication of every variant has the same value of every
 * /summary metric, shown or not (a deterministic replay): one replication
 * is the answer. */
static int all_identical(const vopts_t *o, fs_compare_side_t *const *side)
{
    if (side[o->base]->n_reps < 2)
        return 0;
    for (size_t i = 0; i < o->n_v; i++)
        for (size_t k = 0; side[i] && k < side[i]->n_metrics; k++)
            if (!fs_compare_side_constant(side[i], side[i]->metrics[k]))
                return 0;
    return 1;
}

static void print_means(const vopts_t *o, fs_compare_side_t *const *side, const char **ms,
                        size_t nm, int identical)
{
    size_t reps = side[o->base]->n_reps;
    if (identical)
        printf("\nthe %zu replications of every policy are identical (nothing in this scenario "
               "draws random\nnumbers, e.g. a trace replay without failures): one replication "
               "is the answer (-r 1);\nno intervals and no significance are shown\n", reps);
    else if (reps < 2)
        printf("\none replication per policy: values without intervals\n");
    int w = metric_width(ms, nm);
    printf("\n%-*s", w, "metric");
    for (size_t i = 0; i < o->n_v; i++)
        printf("  %-24s", o->v[i].name);
    printf("\n");
    for (size_t k = 0; k < nm; k++) {
        printf("%-*s", w, ms[k]);
        for (size_t i = 0; i < o->n_v; i++) {
            char c[64];
            if (side[i])
                cell(side[i], ms[k], c, sizeof c);
            else
                snprintf(c, sizeof c, "failed");
            printf("  %-24s", c);
        }
        printf("\n");
    }
    for (size_t i = 0; i < o->n_v; i++)
        if (!side[i])
            printf("%s failed: %s\n", o->v[i].name, o->failed[i].msg);
}

static void diff_cell(const fs_compare_row_t *r, const char *m, int identical, char *c, size_t n)
{
    fs_fmt_unit_t u = metric_unit(m);
    char d[48], lo[48], hi[48];
    fs_fmt_diff(d, sizeof d, u, r ? r->diff : NAN);
    if (!r || identical || r->constant || r->ci.n < 2 || isnan(r->ci.lo)) {
        snprintf(c, n, "%s%s", d, r && r->constant && !identical && r->ci.n >= 2 ? " (every rep.)"
                                                                                  : "");
        return;
    }
    fs_fmt_diff(lo, sizeof lo, u, r->ci.lo);
    fs_fmt_diff(hi, sizeof hi, u, r->ci.hi);
    snprintf(c, n, "%s [%s, %s]%s", d, lo, hi, r->significant == 1 ? " *" : "");
}

static void print_diffs(const vopts_t *o, const fs_compare_t *cmp, const char **ms, size_t nm,
                        int identical, size_t reps)
{
    int w = metric_width(ms, nm);
    if (identical || reps < 2)
        printf("\ndifferences against %s%s\n%-*s", o->v[o->base].name,
               identical ? " (the same in every replication)" : " (one replication)", w, "metric");
    else
        printf("\npaired differences against %s: mean [95%% interval] over the replications; "
               "* = significant (the interval excludes 0); (every rep.) = the same difference "
               "in every replication, no interval\n%-*s", o->v[o->base].name, w, "metric");
    for (size_t i = 0; i < o->n_v; i++) {
        char h[96];
        if (i == o->base)
            continue;
        snprintf(h, sizeof h, "%s - %s", o->v[i].name, o->v[o->base].name);
        printf("  %-40s", h);
    }
    printf("\n");
    for (size_t k = 0; k < nm; k++) {
        printf("%-*s", w, ms[k]);
        for (size_t i = 0; i < o->n_v; i++) {
            char c[160];
            if (i == o->base)
                continue;
            if (o->failed[i].code)
                snprintf(c, sizeof c, "failed");
            else
                diff_cell(find_row(&cmp[i], ms[k]), ms[k], identical, c, sizeof c);
            printf("  %-40s", c);
        }
        printf("\n");
    }
}

/* The --json document (docs/cli.md): every variant's per-replication
 * values, mean and interval of each shown metric, and the paired
 * differences against the first. */
static void json_tenants(fs_json_t *j, const vopts_t *o, const fs_tenant_table_t *t,
                         const char *const *names, size_t nn, int identical);

static void print_json(const vopts_t *o, const fs_sweep_plan_t *p, fs_compare_side_t *const *side,
                       const fs_compare_t *cmp, const char **ms, size_t nm, int identical,
                       const fs_tenant_table_t *t, const char **names, size_t nn)
{
    fs_json_t j;
    fs_json_init(&j, stdout);
    fs_json_begin_object(&j);
    fs_json_key(&j, "command");
    fs_json_str(&j, "versus");
    fs_json_key(&j, "scenario");
    fs_json_str(&j, p->name);
    fs_json_key(&j, "index");
    char idx[4096];
    snprintf(idx, sizeof idx, "%s/index.h5", o->dir);
    fs_json_str(&j, idx);
    fs_json_key(&j, "replications");
    fs_json_uint(&j, side[o->base]->n_reps);
    fs_json_key(&j, "level");
    fs_json_num(&j, 0.95);
    fs_json_key(&j, "identical_replications");
    fs_json_bool(&j, identical);
    fs_json_key(&j, "baseline");
    fs_json_str(&j, o->v[o->base].name);
    fs_json_key(&j, "variants");
    fs_json_begin_array(&j);
    for (size_t i = 0; i < o->n_v; i++) {
        fs_json_begin_object(&j);
        fs_json_key(&j, "name");
        fs_json_str(&j, o->v[i].name);
        fs_json_key(&j, "point");
        fs_json_uint(&j, i);
        fs_json_key(&j, "set");
        fs_json_begin_object(&j);
        for (size_t k = 0; k < o->v[i].n; k++) {
            fs_json_key(&j, o->v[i].keys[k]);
            fs_json_str(&j, o->v[i].values[k]);
        }
        fs_json_end_object(&j);
        if (!side[i]) {     /* its runs failed: the error instead of the figures */
            fs_json_key(&j, "error");
            fs_json_str(&j, o->failed[i].msg);
            fs_json_end_object(&j);
            continue;
        }
        fs_json_key(&j, "metrics");
        fs_json_begin_object(&j);
        for (size_t k = 0; k < nm; k++) {
            fs_ci_t ci;
            int ok = side_ci(side[i], ms[k], &ci) == 0;
            int constant = fs_compare_side_constant(side[i], ms[k]);
            fs_json_key(&j, ms[k]);
            fs_json_begin_object(&j);
            fs_json_key(&j, "mean");
            fs_json_num(&j, ok ? ci.mean : NAN);
            fs_json_key(&j, "half_width");
            fs_json_num(&j, ok && !constant ? ci.half : NAN);
            fs_json_key(&j, "constant");
            fs_json_bool(&j, constant);
            fs_json_key(&j, "values");
            fs_json_begin_array(&j);
            for (size_t r = 0; r < side[i]->n_reps; r++)
                fs_json_num(&j, fs_compare_side_value(side[i], r, ms[k]));
            fs_json_end_array(&j);
            fs_json_end_object(&j);
        }
        fs_json_end_object(&j);
        if (i != o->base) {
            fs_json_key(&j, "minus_baseline");
            fs_json_begin_object(&j);
            for (size_t k = 0; k < nm; k++) {
                const fs_compare_row_t *r = find_row(&cmp[i], ms[k]);
                int interval = r && !identical && !r->constant && r->ci.n >= 2;
                fs_json_key(&j, ms[k]);
                fs_json_begin_object(&j);
                fs_json_key(&j, "diff");
                fs_json_num(&j, r ? r->diff : NAN);
                fs_json_key(&j, "lo");
                fs_json_num(&j, interval ? r->ci.lo : NAN);
                fs_json_key(&j, "hi");
                fs_json_num(&j, interval ? r->ci.hi : NAN);
                fs_json_key(&j, "significant");
                if (interval && r->significant >= 0)
                    fs_json_bool(&j, r->significant == 1);
                else
                    fs_json_null(&j);
                fs_json_end_object(&j);
            }
            fs_json_end_object(&j);
        }
        fs_json_end_object(&j);
    }
    fs_json_end_array(&j);
    json_tenants(&j, o, t, names, nn, identical);
    fs_json_end_object(&j);
    fs_json_finish(&j);
}

/* Names the index's points after the variants: root attribute "variants"
 * (one string per point, in -p order), which `fleetsim report` uses for
 * its labels (docs/report.md). */
static int label_index(const vopts_t *o, fs_error_t *err)
{
    char index[4096];
    snprintf(index, sizeof index, "%s/index.h5", o->dir);
    const char *names[MAX_VARIANTS];
    for (size_t i = 0; i < o->n_v; i++)
        names[i] = o->v[i].name;
    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    hid_t f = H5Fopen(index, H5F_ACC_RDWR, H5P_DEFAULT);
    int bad = f < 0;
    if (!bad && H5Aexists(f, "variants") > 0)
        bad = H5Adelete(f, "variants") < 0;
    if (!bad)
        bad = fs_h5_attr_strs(f, "variants", names, o->n_v) != 0;
    if (f >= 0 && H5Fclose(f) < 0)
        bad = 1;
    fs_h5_quiet_end(&q);
    return bad ? fs_error_set(err, FS_EIO, "%s: cannot record the variant names", index) : 0;
}

/* Every variant's /tenants over its replications (t[i] empty for a variant
 * whose runs failed) and the union of tenant names, baseline first
 * (*names borrowed from t). */
static int load_tenants(const vopts_t *o, size_t reps, fs_tenant_table_t *t, const char ***names,
                        size_t *nn, fs_error_t *err)
{
    memset(t, 0, o->n_v * sizeof *t);
    *names = NULL;
    *nn = 0;
    size_t plen = strlen(o->dir) + 40;
    char **paths = fs_calloc(reps ? reps : 1, sizeof *paths);
    int rc = paths ? 0 : fs_error_set(err, FS_ENOMEM, "out of memory");
    for (size_t r = 0; r < reps && !rc; r++) {
        paths[r] = fs_malloc(plen);
        if (!paths[r])
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < o->n_v && !rc; i++) {
        if (o->failed[i].code)
            continue;   /* its column stays empty */
        for (size_t r = 0; r < reps; r++) {
            char f[64];
            snprintf(paths[r], plen, "%s/%s", o->dir, fs_index_run_file(i, r, f, sizeof f));
        }
        rc = fs_tenant_table_load((const char *const *)paths, reps, &t[i], err);
    }
    for (size_t r = 0; paths && r < reps; r++)
        fs_free(paths[r]);
    fs_free(paths);
    size_t cap = 0;
    for (size_t i0 = 0; i0 < o->n_v && !rc; i0++) {
        size_t i = i0 == 0 ? o->base : (i0 <= o->base ? i0 - 1 : i0);
        for (size_t k = 0; k < t[i].n && !rc; k++) {
            size_t j = 0;
            while (j < *nn && strcmp((*names)[j], t[i].names[k]) != 0)
                j++;
            if (j < *nn)
                continue;
            if (fs_grow((void **)names, &cap, *nn + 1, sizeof **names)) {
                rc = fs_error_set(err, FS_ENOMEM, "out of memory");
                break;
            }
            (*names)[(*nn)++] = t[i].names[k];
        }
    }
    return rc;
}

static void release_tenants(const vopts_t *o, fs_tenant_table_t *t, const char **names)
{
    fs_free((void *)names);
    for (size_t i = 0; i < o->n_v; i++)
        fs_tenant_table_release(&t[i]);
}

/* 1 when some variant has a value of tenant `name`'s metric m. */
static int tenant_has(const vopts_t *o, const fs_tenant_table_t *t, const char *name, size_t m)
{
    for (size_t i = 0; i < o->n_v; i++) {
        long k = fs_tenant_table_find(&t[i], name);
        if (k >= 0 && t[i].count[(size_t)k * FS_TENANT_N_METRICS + m])
            return 1;
    }
    return 0;
}

/* Per-tenant tables (issues 13, 40; analysis/fs_tenants.h fs_tenant_print):
 * each tenant's figures per policy with their intervals, then each policy
 * minus the baseline, paired by replication. */
static int print_tenants(const vopts_t *o, size_t reps, int identical, fs_error_t *err)
{
    fs_tenant_table_t t[MAX_VARIANTS];
    const char *labels[MAX_VARIANTS];
    int failed[MAX_VARIANTS];
    const char **names = NULL;
    size_t nn = 0;
    int rc = load_tenants(o, reps, t, &names, &nn, err);
    for (size_t i = 0; i < o->n_v; i++) {
        labels[i] = o->v[i].name;
        failed[i] = o->failed[i].code != 0;
    }
    if (!rc)
        rc = fs_tenant_print(stdout, t, labels, failed, o->n_v, o->base, identical)
                 ? fs_error_set(err, FS_ENOMEM, "out of memory")
                 : 0;
    release_tenants(o, t, names);
    return rc;
}

/* The "tenants" member of the --json document: per tenant, each metric's
 * mean, half-width and values per variant, and the paired difference
 * against the baseline. */
static void json_tenants(fs_json_t *j, const vopts_t *o, const fs_tenant_table_t *t,
                         const char *const *names, size_t nn, int identical)
{
    fs_json_key(j, "tenants");
    fs_json_begin_array(j);
    for (size_t k = 0; k < nn; k++) {
        fs_json_begin_object(j);
        fs_json_key(j, "name");
        fs_json_str(j, names[k]);
        fs_json_key(j, "metrics");
        fs_json_begin_object(j);
        for (size_t m = 0; m < FS_TENANT_N_METRICS; m++) {
            if (!tenant_has(o, t, names[k], m))
                continue;
            fs_json_key(j, fs_tenant_metrics[m]);
            fs_json_begin_object(j);
            for (size_t i = 0; i < o->n_v; i++) {
                if (o->failed[i].code)
                    continue;
                long x = fs_tenant_table_find(&t[i], names[k]);
                fs_ci_t ci;
                int ok = x >= 0 && fs_tenant_ci(&t[i], (size_t)x, m, 0.95, &ci) == 0;
                fs_json_key(j, o->v[i].name);
                fs_json_begin_object(j);
                fs_json_key(j, "mean");
                fs_json_num(j, ok ? ci.mean : NAN);
                fs_json_key(j, "half_width");
                fs_json_num(j, ok && !identical ? ci.half : NAN);
                fs_json_key(j, "values");
                fs_json_begin_array(j);
                for (size_t r = 0; x >= 0 && r < t[i].n_files; r++)
                    fs_json_num(j, t[i].values[((size_t)x * FS_TENANT_N_METRICS + m) *
                                               t[i].n_files + r]);
                fs_json_end_array(j);
                if (i != o->base) {
                    fs_ci_t d;
                    int dk = fs_tenant_paired(&t[o->base], &t[i], names[k], m, 0.95, &d) == 0 &&
                             d.n > 0;
                    int iv = dk && !identical && d.n >= 2 && d.sd > 0;
                    fs_json_key(j, "minus_baseline");
                    fs_json_begin_object(j);
                    fs_json_key(j, "diff");
                    fs_json_num(j, dk ? d.mean : NAN);
                    fs_json_key(j, "lo");
                    fs_json_num(j, iv ? d.lo : NAN);
                    fs_json_key(j, "hi");
                    fs_json_num(j, iv ? d.hi : NAN);
                    fs_json_key(j, "significant");
                    if (iv)
                        fs_json_bool(j, fs_ci_significant(&d) == 1);
                    else
                        fs_json_null(j);
                    fs_json_end_object(j);
                }
                fs_json_end_object(j);
            }
            fs_json_end_object(j);
        }
        fs_json_end_object(j);
        fs_json_end_object(j);
    }
    fs_json_end_array(j);
}

/* A key column of the index's /runs, not a metric (as fs_compare reads it). */
static int is_key_column(const char *name)
{
    static const char *const keys[] = {"point", "replication", "file", "status", "seed"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(name, keys[i]) == 0)
            return 1;
    return 0;
}

/* Reads replication r of side s (its file s->files[r]) into row r: every
 * numeric /summary column, and each service's figures as SERVICE.COLUMN
 * (what `fleetsim plan` SLOs name); replication 0 fixes the metric list. */
static int side_read_rep(fs_compare_side_t *s, size_t r, fs_error_t *err)
{
    char **names = NULL;
    double *vals = NULL;
    size_t n = 0;
    int rc = fs_index_read_summary(s->files[r], &names, &vals, &n, err);
    if (!rc)
        rc = fs_index_read_services(s->files[r], &names, &vals, &n, err);
    if (!rc && r == 0) {
        s->metrics = fs_calloc(n + 1, sizeof *s->metrics);
        s->values = s->metrics ? fs_calloc(s->n_reps * n + 1, sizeof *s->values) : NULL;
        if (!s->values)
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        for (size_t i = 0; !rc && i < n; i++)
            if (!is_key_column(names[i]) && !(s->metrics[s->n_metrics++] = fs_strdup(names[i])))
                rc = fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    for (size_t m = 0, hint = 0; !rc && m < s->n_metrics; m++) {
        double v = NAN;     /* a figure this replication lacks */
        for (size_t t = 0; t < n; t++) {
            size_t i = (hint + t) % n;
            if (names[i] && strcmp(names[i], s->metrics[m]) == 0) {
                v = vals[i];
                hint = i + 1;
                break;
            }
        }
        s->values[r * s->n_metrics + m] = v;
    }
    fs_index_free_summary(names, vals, n);
    return rc;
}

/* Variant `point`'s side from its run files DIR/runs/p<P>-r<R>.h5 (the
 * index's /runs holds the same /summary values; the services' figures are
 * only in the run files, and a variant that failed has no index). */
static int side_from_runs(const vopts_t *o, size_t point, size_t reps, fs_compare_side_t **out,
                          fs_error_t *err)
{
    fs_compare_side_t *s = fs_calloc(1, sizeof *s);
    size_t plen = strlen(o->dir) + 80;
    int rc = 0;
    if (!s || !(s->path = fs_strdup(o->dir)) || !(s->label = fs_strdup(o->v[point].name)) ||
        !(s->reps = fs_calloc(reps, sizeof *s->reps)) ||
        !(s->files = fs_calloc(reps, sizeof *s->files)))
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
    if (s) {
        s->is_index = 1;
        s->point = (long)point;
        s->seed = NAN;
        s->n_reps = rc ? 0 : reps;
    }
    for (size_t r = 0; r < reps && !rc; r++) {
        char rel[64];
        s->reps[r] = r;
        if (!(s->files[r] = fs_malloc(plen))) {
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
            break;
        }
        snprintf(s->files[r], plen, "%s/%s", o->dir, fs_index_run_file(point, r, rel, sizeof rel));
        rc = side_read_rep(s, r, err);
    }
    if (rc) {
        fs_compare_side_destroy(s);
        s = NULL;
    }
    *out = s;
    return rc;
}

/* Loads every variant's side from its run files (none for a variant whose
 * runs failed), compares each with the baseline and prints the two tables
 * (or the JSON document). */
static int report(const vopts_t *o, const fs_sweep_plan_t *p, fs_error_t *err)
{
    fs_compare_side_t *side[MAX_VARIANTS] = {0};
    fs_compare_t cmp[MAX_VARIANTS];
    memset(cmp, 0, sizeof cmp);
    int rc = 0;
    for (size_t i = 0; i < o->n_v && !rc; i++)
        if (!o->failed[i].code)
            rc = side_from_runs(o, i, (size_t)p->replications, &side[i], err);
    for (size_t i = 0; i < o->n_v && !rc; i++)
        if (side[i] && i != o->base)
            rc = fs_compare_sides(side[o->base], side[i], 0.95, &cmp[i], err);
    char buf[1024];
    const char *ms[64];
    size_t nm = rc ? 0 : pick_metrics(o->metrics, buf, sizeof buf, ms, 64);
    for (size_t k = 0; k < nm && !rc; k++)
        if (!has_metric(side[o->base], ms[k]))
            rc = fs_error_set(err, FS_EINVAL, "--metrics: %s is not a /summary column nor "
                              "SERVICE.COLUMN of a service of %s", ms[k], side[o->base]->files[0]);
    if (!rc) {
        int identical = all_identical(o, side);
        if (o->json) {
            fs_tenant_table_t t[MAX_VARIANTS];
            const char **names = NULL;
            size_t nn = 0;
            rc = load_tenants(o, (size_t)p->replications, t, &names, &nn, err);
            if (!rc)
                print_json(o, p, side, cmp, ms, nm, identical, t, names, nn);
            release_tenants(o, t, names);
        } else {
            print_means(o, side, ms, nm, identical);
            if (o->n_v - o->n_failed > 1)
                print_diffs(o, cmp, ms, nm, identical, side[o->base]->n_reps);
            rc = print_tenants(o, (size_t)p->replications, identical, err);
        }
    }
    for (size_t i = 0; i < o->n_v; i++) {
        fs_compare_release(&cmp[i]);
        fs_compare_side_destroy(side[i]);
    }
    return rc;
}

/* Records each variant's failure of the lowest replication (on a worker
 * thread; the sweep makes one call at a time). */
static void on_failure(void *ud, size_t point, uint64_t rep, int rc, const fs_error_t *e)
{
    vopts_t *o = ud;
    if (point >= o->n_v || (o->failed[point].code && o->failed_rep[point] < rep))
        return;     /* the lowest replication's error: the same however the threads ran */
    o->n_failed += !o->failed[point].code;
    o->failed_rep[point] = rep;
    fs_error_set(&o->failed[point], rc, "replication %llu: %s", (unsigned long long)rep, e->msg);
}

/* 1 when name is a /summary column (docs/results.md). */
static int summary_column(const char *name)
{
    fs_summary_t zero;
    memset(&zero, 0, sizeof zero);
    double v;
    int is_count;
    const char *f;
    for (size_t i = 0; (f = fs_results_summary_field(i, &zero, &v, &is_count, NULL)); i++)
        if (strcmp(f, name) == 0)
            return 1;
    return 0;
}

/* Before anything runs: one warning per policy that throws work away, and
 * every --metrics name checked: a /summary column, or (as `fleetsim plan`
 * accepts, docs/services.md "Planning a mixed fleet") SERVICE.COLUMN of a
 * service some variant has.  A variant that does not load is left to the
 * runs.  0, FS_EINVAL or FS_ENOMEM. */
static int scan_variants(const vopts_t *o, const fs_sweep_plan_t *plan, fs_error_t *err)
{
    char *svc[64];
    size_t ns = 0;
    int rc = 0;
    for (size_t i = 0; i < o->n_v && !rc; i++) {
        fs_config_t vc;
        char loss[512];
        fs_error_t e;
        if (fs_sweep_load_run(plan, fs_sweep_run_index(plan, i, 0), &vc, &e) != 0)
            continue;
        if (fs_policy_work_loss(&vc, loss, sizeof loss))
            fprintf(stderr, "fleetsim versus: warning: %s: %s\n", o->v[i].name, loss);
        for (size_t k = 0; k < vc.services.n && ns < 64 && !rc; k++) {
            size_t j = 0;
            while (j < ns && strcmp(svc[j], vc.services.list[k].name) != 0)
                j++;
            if (j == ns && !(svc[ns++] = fs_strdup(vc.services.list[k].name)))
                rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        }
        fs_config_release(&vc);
    }
    char buf[1024], cols[512];
    const char *ms[64];
    size_t nm = rc || !o->metrics ? 0 : pick_metrics(o->metrics, buf, sizeof buf, ms, 64);
    for (size_t k = 0; k < nm && !rc; k++) {
        if (summary_column(ms[k]) ||
            fs_index_service_metric(ms[k], (const char *const *)svc, ns, cols, sizeof cols))
            continue;
        if (ns)
            rc = fs_error_set(err, FS_EINVAL, "--metrics: '%s' is neither a /summary column "
                              "(docs/results.md) nor SERVICE.COLUMN for a service of the scenario "
                              "(COLUMN one of %s)", ms[k], cols);
        else
            rc = fs_error_set(err, FS_EINVAL, "--metrics: '%s' is not a /summary column "
                              "(docs/results.md); the scenario has no services for SERVICE.COLUMN",
                              ms[k]);
    }
    for (size_t j = 0; j < ns; j++)
        fs_free(svc[j]);
    return rc;
}

static void print_plan(const vopts_t *o, const fs_sweep_plan_t *p)
{
    printf("versus %s: %zu policies x %llu replications (common random numbers) in %s\n",
           p->name, p->n_points, (unsigned long long)p->replications, o->dir);
    for (size_t pt = 0; pt < p->n_points; pt++) {
        printf("  point %zu  %-12s", pt, o->v[pt].name);
        for (size_t j = 0; j < p->n_params; j++)
            printf(" %s=%s", p->params[j].key, p->params[j].values[fs_sweep_value_index(p, pt, j)]);
        printf("\n");
    }
}

int fs_cmd_versus(int argc, char **argv)
{
    vopts_t o;
    memset(&o, 0, sizeof o);
    o.progress_every = -1;
    o.sets = fs_calloc((size_t)argc + 2, sizeof *o.sets);
    if (!o.sets)
        return 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o.jobs = cpus > 0 ? (unsigned long long)cpus : 1;
    int done = 0, rc = parse_args(&o, argc, argv, &done);
    if (rc || done) {
        free_opts(&o);
        return rc;
    }
    if (fs_sweep_mpi_launched() > 1) {   /* every rank would run every run */
        fprintf(stderr, "fleetsim versus: runs on threads (-j), not under an MPI launcher; for "
                "ranks, run the same points with fleetsim sweep under mpirun\n");
        free_opts(&o);
        return 2;
    }
    fs_error_t err;
    fs_error_clear(&err);
    fs_sweep_plan_t *plan = NULL;
    char why[256];
    int n_random = random_sources(&o, why, sizeof why);
    if (!n_random && !o.have_reps) {
        o.reps = 1;     /* a deterministic replay: more replications repeat it */
        o.have_reps = 1;
        if (!o.quiet)
            fprintf(stderr, "fleetsim versus: nothing in this scenario draws random numbers (a "
                    "trace replay without failures or random placement): every replication "
                    "would be the same, so one is run (-r 1)\n");
    } else if (!n_random && o.reps > 1 && !o.quiet) {
        fprintf(stderr, "fleetsim versus: note: nothing in this scenario draws random numbers: "
                "the %llu replications will be identical (-r 1 gives the same answer)\n", o.reps);
    } else if (!o.quiet && !o.json) {
        printf("random in each replication: %s\n", why);
    }
    if ((rc = make_plan(&o, &plan, &err))) {
        fprintf(stderr, "%s\n", err.msg);
        free_opts(&o);
        return fs_error_exit_status(rc);
    }
    if (!o.quiet && !o.json)
        print_plan(&o, plan);
    if ((rc = scan_variants(&o, plan, &err))) {
        fprintf(stderr, "fleetsim versus: %s\n", err.msg);
        fs_sweep_plan_destroy(plan);
        free_opts(&o);
        return fs_error_exit_status(rc);
    }
    fs_cli_catch_stop(0);

    fs_sweep_opts_t so;
    fs_sweep_opts_init(&so);
    so.dir = o.dir;
    so.threads = (unsigned)o.jobs;
    so.resume = o.resume;
    fs_cli_progress_mode(o.progress_every, 0, &so.progress, &so.progress_every);
    so.interrupt = &fs_cli_stop;
    so.on_failure = on_failure;
    so.on_failure_ud = &o;
    fs_sweep_report_t rep;
    rc = fs_sweep_execute(plan, &so, &rep, &err);
    if (rc && rep.runs_failed && !rep.interrupted && o.n_failed) {
        /* some variants failed: the others are still shown, the failed ones marked */
        for (size_t i = 0; i < o.n_v; i++)
            if (o.failed[i].code)
                fprintf(stderr, "fleetsim versus: %s failed: %s\n", o.v[i].name, o.failed[i].msg);
        fprintf(stderr, "fleetsim versus: %zu of %zu policies failed; %s/index.h5 is not written "
                "(the finished runs are kept: --resume runs only the failed ones again)\n",
                o.n_failed, o.n_v, o.dir);
        while (o.base < o.n_v && o.failed[o.base].code)
            o.base++;
        rc = o.base < o.n_v ? 0 : FS_EIO;
        fs_error_clear(&err);
        if (!rc && !o.quiet && !o.json)
            printf("ran %zu, %zu already finished, %zu failed\n", rep.runs_done, rep.runs_skipped,
                   rep.runs_failed);
        if (!rc)
            rc = report(&o, plan, &err);
        if (!rc)
            rc = FS_EIO;    /* exit status 1: a policy failed */
        else if (err.msg[0])
            fprintf(stderr, "fleetsim versus: %s\n", err.msg);
    } else {
        if (!rc && !o.quiet && !o.json)
            printf("ran %zu, %zu already finished; index %s/index.h5\n", rep.runs_done,
                   rep.runs_skipped, o.dir);
        if (!rc)
            rc = label_index(&o, &err);
        if (!rc)
            rc = report(&o, plan, &err);
        if (rc)
            fprintf(stderr, "fleetsim versus: %s\n", err.msg);
    }
    fs_sweep_plan_destroy(plan);
    free_opts(&o);
    return rc ? fs_error_exit_status(rc) : 0;
}
