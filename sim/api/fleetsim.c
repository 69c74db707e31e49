/*
 * libfleetsim's public API (fleetsim.h) over the runner (sim/cli/fs_runner.h)
 * and the scenario loader.  The API floor: it includes every other folder,
 * and nothing includes it but the CLI and callers.
 */
#include "fleetsim.h"
#include "../../analysis/fs_results.h"
#include "../../scenarios/fs_scenario.h"
#include "../../analysis/fs_h5util.h"
#include "fs_runner.h"
#include "fs_sweeprun.h"
#include "fs_planrun.h"
#include "../fs_alloc.h"

#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct variant {   /* fleetsim_scenario_add_variant */
    char *name;
    char **keys, **values;
    size_t n;
} variant_t;

struct fleetsim_scenario {
    char *name;             /* for messages: the path, or the caller's name */
    char *text;             /* YAML (NULL: load path) */
    char *path;
    char **sets;            /* "KEY=VALUE" overrides, in order */
    size_t n_sets, cap_sets;
    char *dump;
    int loaded;             /* the last load succeeded */
    const fleetsim_policy *policy;  /* fleetsim_scenario_set_policy (borrowed), NULL none */
    variant_t *variants;
    size_t n_variants, cap_variants;
    /* The allocation context of the work of every call on s (the run, the
     * sweep and its threads, the checks of a load): bound to the calling
     * thread by enter()/leave().  What outlives a call (s, its strings, the
     * dump, a result) is allocated in the caller's context, so that no
     * block of mem is live between calls. */
    fs_alloc_ctx_t mem;
    char err[FS_ERROR_MSG_MAX];
};

struct fleetsim_result {
    fs_summary_t summary;
    double wall_s;
};

int fleetsim_api_version(void) { return FLEETSIM_API_VERSION; }

const char *fleetsim_version(void) { return FLEETSIM_VERSION; }

static int status_of(int rc)
{
    switch (rc) {
    case 0: return FLEETSIM_OK;
    case FS_EINVAL:
    case FS_EUSAGE: return FLEETSIM_EINVAL;
    case FS_ENOMEM: return FLEETSIM_ENOMEM;
    case FS_EIO: return FLEETSIM_EIO;
    case FS_EINTR: return FLEETSIM_ECANCELED;
    case FS_ESTUCK: return FLEETSIM_ESTUCK;
    case FS_ELIMIT: return FLEETSIM_ELIMIT;
    default: return FLEETSIM_EINTERNAL;
    }
}

const char *fleetsim_strerror(int status)
{
    static const char *const text[] = {
        [FLEETSIM_OK] = "success", [FLEETSIM_EINVAL] = "invalid input",
        [FLEETSIM_ENOMEM] = "out of memory", [FLEETSIM_EIO] = "input/output error",
        [FLEETSIM_ECANCELED] = "canceled", [FLEETSIM_ESTUCK] = "queued jobs can never start",
        [FLEETSIM_ELIMIT] = "value beyond a supported limit",
        [FLEETSIM_EINTERNAL] = "internal error (a bug)"};
    return status >= 0 && (size_t)status < sizeof text / sizeof text[0] ? text[status]
                                                                        : "unknown status";
}

/* Binds s's context to the calling thread for one call (a new measuring
 * period); leave() restores what the caller had bound. */
static fs_alloc_ctx_t *enter(fleetsim_scenario *s)
{
    fs_alloc_ctx_reset_stats(&s->mem);
    return fs_alloc_bind(&s->mem);
}

static void leave(fs_alloc_ctx_t *prev) { fs_alloc_bind(prev); }

/* Loads s (with its overrides) into *cfg; the message into s->err. */
static int load(fleetsim_scenario *s, fs_config_t *cfg)
{
    fs_error_t e;
    fs_error_clear(&e);
    int rc = s->path ? fs_scenario_load_file(s->path, (const char *const *)s->sets, s->n_sets, cfg, &e)
                     : fs_scenario_load_string(s->name, s->text, (const char *const *)s->sets,
                                               s->n_sets, cfg, &e);
    snprintf(s->err, sizeof s->err, "%s", rc ? e.msg : "");
    if (!rc)
        cfg->scheduler.plugin_table = s->policy;
    return status_of(rc);
}

static int create(const char *name, const char *text, const char *path, fleetsim_scenario **out)
{
    *out = NULL;
    fleetsim_scenario *s = fs_calloc(1, sizeof *s);
    if (!s)
        return FLEETSIM_ENOMEM;
    fs_alloc_ctx_init(&s->mem, NULL, NULL);
    if (!(s->name = fs_strdup(name ? name : "<string>")) || (text && !(s->text = fs_strdup(text))) ||
        (path && !(s->path = fs_strdup(path)))) {
        fleetsim_scenario_free(s);
        return FLEETSIM_ENOMEM;
    }
    *out = s;
    fs_config_t cfg;
    fs_alloc_ctx_t *prev = enter(s);
    int st = load(s, &cfg);
    if (st == FLEETSIM_OK)
        fs_config_release(&cfg);
    leave(prev);
    s->loaded = st == FLEETSIM_OK;
    return st;
}

int fleetsim_scenario_load_file(const char *path, fleetsim_scenario **out)
{
    if (!path)
        return FLEETSIM_EINVAL;
    return create(path, NULL, path, out);
}

int fleetsim_scenario_load_string(const char *name, const char *yaml, fleetsim_scenario **out)
{
    if (!yaml)
        return FLEETSIM_EINVAL;
    return create(name, yaml, NULL, out);
}

int fleetsim_scenario_load_default(fleetsim_scenario **out)
{
    return create(FS_SCENARIO_DEFAULT_NAME, fs_scenario_default_text(), NULL, out);
}

int fleetsim_scenario_set(fleetsim_scenario *s, const char *key_value)
{
    if (!key_value)
        return FLEETSIM_EINVAL;
    return fleetsim_scenario_set_many(s, &key_value, 1);
}

int fleetsim_scenario_set_many(fleetsim_scenario *s, const char *const *key_values, size_t n)
{
    if (!s || (n && !key_values))
        return FLEETSIM_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!key_values[i])
            return FLEETSIM_EINVAL;
    size_t before = s->n_sets;
    if (fs_grow((void **)&s->sets, &s->cap_sets, s->n_sets + n, sizeof *s->sets))
        return FLEETSIM_ENOMEM;
    int st = FLEETSIM_OK;
    for (size_t i = 0; i < n && st == FLEETSIM_OK; i++) {
        if ((s->sets[s->n_sets] = fs_strdup(key_values[i])))
            s->n_sets++;
        else
            st = FLEETSIM_ENOMEM;
    }
    if (st == FLEETSIM_OK) {    /* all of them, then one check */
        fs_config_t cfg;
        fs_alloc_ctx_t *prev = enter(s);
        st = load(s, &cfg);
        if (st == FLEETSIM_OK)
            fs_config_release(&cfg);
        leave(prev);
    }
    if (st == FLEETSIM_OK) {
        s->loaded = 1;
    } else {    /* keep the previous overrides */
        while (s->n_sets > before)
            fs_free(s->sets[--s->n_sets]);
    }
    return st;
}

int fleetsim_scenario_set_policy(fleetsim_scenario *s, const fleetsim_policy *policy)
{
    if (!s)
        return FLEETSIM_EINVAL;
    if (policy && (policy->abi < FLEETSIM_POLICY_ABI_MIN || policy->abi > FLEETSIM_POLICY_ABI)) {
        snprintf(s->err, sizeof s->err, "fleetsim_scenario_set_policy: ABI %u, this fleetsim loads "
                 "ABI %d to %d", policy->abi, FLEETSIM_POLICY_ABI_MIN, FLEETSIM_POLICY_ABI);
        return FLEETSIM_EINVAL;
    }
    if (policy && (!policy->create || !policy->enqueue || !policy->pass || !policy->queued)) {
        const char *missing = !policy->create ? "create" : !policy->enqueue ? "enqueue"
                              : !policy->pass ? "pass" : "queued";
        snprintf(s->err, sizeof s->err, "fleetsim_scenario_set_policy: no `%s` function (create, "
                 "enqueue, pass and queued are required)", missing);
        return FLEETSIM_EINVAL;
    }
    s->policy = policy;
    s->err[0] = '\0';
    return FLEETSIM_OK;
}

const char *fleetsim_scenario_error(const fleetsim_scenario *s)
{
    return s ? s->err : "out of memory";
}

const char *fleetsim_scenario_dump(fleetsim_scenario *s)
{
    if (!s)
        return NULL;
    fs_config_t cfg;
    fs_alloc_ctx_t *prev = enter(s);
    char *d = NULL;
    int st = load(s, &cfg);
    if (st == FLEETSIM_OK) {
        d = fs_scenario_dump(&cfg);
        fs_config_release(&cfg);
    }
    leave(prev);
    if (st != FLEETSIM_OK)
        return NULL;
    fs_free(s->dump);   /* the copy kept in s is the caller's */
    s->dump = d ? fs_strdup(d) : NULL;
    fs_free(d);
    if (!s->dump)
        snprintf(s->err, sizeof s->err, "out of memory");
    return s->dump;
}

static void variant_free(variant_t *v)
{
    for (size_t k = 0; k < v->n; k++) {
        fs_free(v->keys[k]);
        fs_free(v->values[k]);
    }
    fs_free(v->keys);
    fs_free(v->values);
    fs_free(v->name);
}

int fleetsim_scenario_add_variant(fleetsim_scenario *s, const char *name,
                                  const char *const *key_values, size_t n)
{
    if (!s || !name || !*name || (n && !key_values))
        return FLEETSIM_EINVAL;
    for (size_t k = 0; k < n; k++) {
        const char *eq = key_values[k] ? strchr(key_values[k], '=') : NULL;
        if (!eq || eq == key_values[k]) {
            snprintf(s->err, sizeof s->err, "variant %s: '%s' is not KEY=VALUE", name,
                     key_values[k] ? key_values[k] : "(null)");
            return FLEETSIM_EINVAL;
        }
    }
    if (fs_grow((void **)&s->variants, &s->cap_variants, s->n_variants + 1, sizeof *s->variants))
        return FLEETSIM_ENOMEM;
    variant_t v = {fs_strdup(name), fs_calloc(n ? n : 1, sizeof(char *)),
                   fs_calloc(n ? n : 1, sizeof(char *)), 0};
    int oom = !v.name || !v.keys || !v.values;
    for (size_t k = 0; k < n && !oom; k++) {
        const char *eq = strchr(key_values[k], '=');
        size_t kl = (size_t)(eq - key_values[k]);
        v.keys[k] = fs_malloc(kl + 1);
        v.values[k] = fs_strdup(eq + 1);
        if (!v.keys[k] || !v.values[k]) {
            fs_free(v.keys[k]);
            fs_free(v.values[k]);
            oom = 1;
            break;
        }
        memcpy(v.keys[k], key_values[k], kl);
        v.keys[k][kl] = '\0';
        v.n++;
    }
    if (oom) {
        variant_free(&v);
        return FLEETSIM_ENOMEM;
    }
    s->variants[s->n_variants++] = v;
    s->err[0] = '\0';
    return FLEETSIM_OK;
}

/* Names the index's points after the variants (root attribute "variants",
 * as `fleetsim versus` does: `fleetsim report` labels them so). */
static int label_index(const fleetsim_scenario *s, const char *dir, fs_error_t *err)
{
    size_t len = strlen(dir) + 16;
    char *index = fs_malloc(len);
    const char **names = fs_calloc(s->n_variants, sizeof *names);
    if (!index || !names) {
        fs_free(index);
        fs_free(names);
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    snprintf(index, len, "%s/index.h5", dir);
    for (size_t i = 0; i < s->n_variants; i++)
        names[i] = s->variants[i].name;
    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    hid_t f = H5Fopen(index, H5F_ACC_RDWR, H5P_DEFAULT);
    int bad = f < 0 || fs_h5_attr_strs(f, "variants", names, s->n_variants) != 0;
    if (f >= 0 && H5Fclose(f) < 0)
        bad = 1;
    fs_h5_quiet_end(&q);
    int rc = bad ? fs_error_set(err, FS_EIO, "%s: cannot record the variant names", index) : 0;
    fs_free(index);
    fs_free(names);
    return rc;
}

static int sweep(fleetsim_scenario *s, const char *dir, unsigned threads, unsigned replications);

int fleetsim_sweep(fleetsim_scenario *s, const char *dir, unsigned threads, unsigned replications)
{
    if (!s || !dir || !*dir)
        return FLEETSIM_EINVAL;
    if (s->policy) {
        snprintf(s->err, sizeof s->err, "fleetsim_sweep: a policy given through the library "
                 "(fleetsim_scenario_set_policy) runs with fleetsim_run only");
        return FLEETSIM_EINVAL;
    }
    fs_alloc_ctx_t *prev = enter(s);   /* the workers bind it too (fs_sweeprun.c) */
    int rc = sweep(s, dir, threads, replications);
    leave(prev);
    return rc;
}

static int sweep(fleetsim_scenario *s, const char *dir, unsigned threads, unsigned replications)
{
    /* the overrides, then the replications (versus: 10 by default) */
    const char **sets = fs_calloc(s->n_sets + 1, sizeof *sets);
    if (!sets) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return FLEETSIM_ENOMEM;
    }
    for (size_t i = 0; i < s->n_sets; i++)
        sets[i] = s->sets[i];
    size_t n_sets = s->n_sets;
    char rs[64];
    if (s->n_variants) {    /* versus: the variants replace the scenario's sweep section */
        snprintf(rs, sizeof rs, "sweep={replications: %u}", replications ? replications : 10u);
        sets[n_sets++] = rs;
    } else if (replications) {
        snprintf(rs, sizeof rs, "sweep.replications=%u", replications);
        sets[n_sets++] = rs;
    }
    fs_error_t e;
    fs_error_clear(&e);
    fs_sweep_plan_t *plan = NULL;
    int rc = s->path ? fs_sweep_plan_create(s->path, sets, n_sets, &plan, &e)
                     : fs_sweep_plan_from_text(s->name, s->text, sets, n_sets, &plan, &e);
    fs_free(sets);
    if (!rc && s->n_variants) {
        fs_sweep_variant_t *sv = fs_calloc(s->n_variants, sizeof *sv);
        if (!sv) {
            rc = fs_error_set(&e, FS_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < s->n_variants; i++)
                sv[i] = (fs_sweep_variant_t){s->variants[i].name,
                                             (const char *const *)s->variants[i].keys,
                                             (const char *const *)s->variants[i].values,
                                             s->variants[i].n};
            rc = fs_sweep_plan_set_variants(plan, sv, s->n_variants, &e);
            fs_free(sv);
        }
    }
    if (!rc) {
        fs_sweep_opts_t o;
        fs_sweep_opts_init(&o);
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        o.dir = dir;
        o.threads = threads ? threads : cpus > 0 ? (unsigned)cpus : 1u;
        o.progress = 0;
        fs_sweep_report_t rep;
        rc = fs_sweep_execute(plan, &o, &rep, &e);
        if (!rc && s->n_variants)
            rc = label_index(s, dir, &e);
    }
    fs_sweep_plan_destroy(plan);
    snprintf(s->err, sizeof s->err, "%s", rc ? e.msg : "");
    return status_of(rc);
}

/* ---- plans ---- */

struct fleetsim_plan_result {
    size_t n_points, n_cols;
    long chosen;
    char **choice;          /* per point */
    char **cols;            /* the figures' names */
    double *vals;           /* n_points x n_cols */
    char *file;
};

void fleetsim_plan_free(fleetsim_plan_result *p)
{
    if (!p)
        return;
    for (size_t i = 0; p->choice && i < p->n_points; i++)
        fs_free(p->choice[i]);
    for (size_t j = 0; p->cols && j < p->n_cols; j++)
        fs_free(p->cols[j]);
    fs_free(p->choice);
    fs_free(p->cols);
    fs_free(p->vals);
    fs_free(p->file);
    fs_free(p);
}

static const char *const plan_flags[] = {"nodes", "gpus", "round", "meets", "frontier", "best",
                                         "chosen"};
static const char *const plan_cash[] = {"purchase", "depreciation", "depreciation_share",
                                        "opex_per_year", "residual", "npv"};
static const char *const plan_stat[] = {"mean", "sd", "lo", "hi"};
#define N_OF(a) (sizeof a / sizeof a[0])

/* The answer, in the caller's allocation context, from p. */
static fleetsim_plan_result *plan_copy(const fs_planrun_t *p)
{
    const fs_plan_spec_t *s = p->spec;
    const fs_plan_result_t *res = p->res;
    fleetsim_plan_result *r = fs_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->chosen = res->chosen;
    size_t n_cols = N_OF(plan_flags) + N_OF(plan_cash) + N_OF(plan_stat) * s->n_metrics;
    r->cols = fs_calloc(n_cols, sizeof *r->cols);
    r->choice = fs_calloc(res->n_points + 1, sizeof *r->choice);
    r->vals = fs_calloc(n_cols * (res->n_points + 1), sizeof *r->vals);
    r->file = fs_strdup(p->plan_file ? p->plan_file : "");
    int bad = !r->cols || !r->choice || !r->vals || !r->file;
    /* the names; a metric named twice (the objective and an SLO) once */
    size_t *col_of = fs_calloc(s->n_metrics + 1, sizeof *col_of);
    bad |= !col_of;
    for (size_t k = 0; !bad && k < N_OF(plan_flags); k++)
        bad |= !(r->cols[r->n_cols++] = fs_strdup(plan_flags[k]));
    for (size_t m = 0; !bad && m < s->n_metrics; m++) {
        size_t first = m;
        for (size_t q = 0; q < m && first == m; q++)
            if (strcmp(s->metrics[q], s->metrics[m]) == 0)
                first = q;
        if (first != m) {
            col_of[m] = col_of[first];
            continue;
        }
        col_of[m] = r->n_cols;
        for (size_t k = 0; !bad && k < N_OF(plan_stat); k++) {
            char name[256];
            snprintf(name, sizeof name, "%s_%s", s->metrics[m], plan_stat[k]);
            bad |= !(r->cols[r->n_cols++] = fs_strdup(name));
        }
    }
    size_t cash_col = r->n_cols;
    for (size_t k = 0; !bad && k < N_OF(plan_cash); k++)
        bad |= !(r->cols[r->n_cols++] = fs_strdup(plan_cash[k]));
    for (size_t i = 0; !bad && i < res->n_points; i++) {
        const fs_plan_point_t *pt = &res->points[i];
        double *v = r->vals + i * r->n_cols;
        bad |= !(r->choice[i] = fs_strdup(s->choices[pt->choice].name));
        r->n_points = i + 1;
        v[0] = pt->nodes;
        v[1] = (double)pt->gpus;
        v[2] = pt->round;
        v[3] = pt->meets;
        v[4] = pt->frontier;
        v[5] = res->best[pt->choice] == (long)i;
        v[6] = res->chosen == (long)i;
        for (size_t m = 0; m < s->n_metrics; m++) {
            v[col_of[m]] = pt->ci[m].mean;
            v[col_of[m] + 1] = pt->ci[m].sd;
            v[col_of[m] + 2] = pt->ci[m].lo;
            v[col_of[m] + 3] = pt->ci[m].hi;
        }
        const fs_plan_cash_t *cf = p->have && p->have[i] ? &p->cash[i] : NULL;
        double cash[] = {cf ? cf->purchase : NAN, cf ? cf->depreciation : NAN,
                         cf ? cf->depreciation_share : NAN, cf ? cf->opex_per_year : NAN,
                         cf ? cf->residual : NAN, cf ? cf->npv : NAN};
        memcpy(v + cash_col, cash, sizeof cash);
    }
    fs_free(col_of);
    if (bad) {
        fleetsim_plan_free(r);
        return NULL;
    }
    return r;
}

int fleetsim_plan(fleetsim_scenario *s, const char *dir, unsigned threads,
                  fleetsim_plan_result **out)
{
    if (out)
        *out = NULL;
    if (!s || !dir || !*dir)
        return FLEETSIM_EINVAL;
    if (s->policy) {
        snprintf(s->err, sizeof s->err, "fleetsim_plan: a policy given through the library "
                 "(fleetsim_scenario_set_policy) runs with fleetsim_run only");
        return FLEETSIM_EINVAL;
    }
    fs_planrun_opts_t o;
    fs_planrun_opts_init(&o);
    o.path = s->path;
    o.name = s->name;
    o.text = s->text;
    o.sets = (const char *const *)s->sets;
    o.n_sets = s->n_sets;
    o.dir = dir;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o.o.threads = threads ? threads : cpus > 0 ? (unsigned)cpus : 1u;
    fs_error_t e;
    fs_error_clear(&e);
    fs_planrun_t p;
    fs_alloc_ctx_t *prev = enter(s);    /* the workers bind it too (fs_sweeprun.c) */
    int rc = fs_planrun_load(&o, &p, &e);
    if (!rc)
        rc = fs_planrun_execute(&o, &p, &e);
    leave(prev);
    if (!rc && out && !(*out = plan_copy(&p)))
        rc = fs_error_set(&e, FS_ENOMEM, "out of memory");
    fs_planrun_release(&p);     /* its blocks go back to s's context */
    snprintf(s->err, sizeof s->err, "%s", rc ? e.msg : "");
    return status_of(rc);
}

size_t fleetsim_plan_count(const fleetsim_plan_result *p) { return p ? p->n_points : 0; }

long fleetsim_plan_chosen(const fleetsim_plan_result *p) { return p ? p->chosen : -1; }

const char *fleetsim_plan_choice(const fleetsim_plan_result *p, size_t i)
{
    return p && i < p->n_points ? p->choice[i] : NULL;
}

const char *fleetsim_plan_name(const fleetsim_plan_result *p, size_t j)
{
    return p && j < p->n_cols ? p->cols[j] : NULL;
}

int fleetsim_plan_get(const fleetsim_plan_result *p, size_t i, const char *name, double *value)
{
    if (!p || !name || !value || i >= p->n_points)
        return FLEETSIM_EINVAL;
    for (size_t j = 0; j < p->n_cols; j++)
        if (strcmp(p->cols[j], name) == 0) {
            *value = p->vals[i * p->n_cols + j];
            return FLEETSIM_OK;
        }
    return FLEETSIM_EINVAL;
}

const char *fleetsim_plan_file(const fleetsim_plan_result *p) { return p ? p->file : NULL; }

void fleetsim_scenario_free(fleetsim_scenario *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_variants; i++)
        variant_free(&s->variants[i]);
    fs_free(s->variants);
    for (size_t i = 0; i < s->n_sets; i++)
        fs_free(s->sets[i]);
    fs_free(s->sets);
    fs_free(s->name);
    fs_free(s->text);
    fs_free(s->path);
    fs_free(s->dump);
    fs_free(s);
}

typedef struct prog {
    fleetsim_progress_fn fn;
    void *ud;
    volatile sig_atomic_t stop;
} prog_t;

static void on_progress(void *ud, double now_s, double horizon_s, uint64_t done, uint64_t running,
                        uint64_t queued)
{
    prog_t *p = ud;
    if (p->fn(p->ud, now_s, horizon_s, done, running, queued))
        p->stop = 1;
}

int fleetsim_run(fleetsim_scenario *s, const char *output, fleetsim_progress_fn progress,
                 void *progress_ud, fleetsim_result **out)
{
    if (out)
        *out = NULL;
    if (!s || !out)
        return FLEETSIM_EINVAL;
    fleetsim_result *r = fs_calloc(1, sizeof *r);  /* the caller's: it outlives the call */
    if (!r) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return FLEETSIM_ENOMEM;
    }
    fs_alloc_ctx_t *prev = enter(s);
    fs_config_t cfg;
    int st = load(s, &cfg);
    if (st != FLEETSIM_OK) {
        leave(prev);
        fs_free(r);
        return st;
    }
    prog_t p = {.fn = progress, .ud = progress_ud, .stop = 0};
    fs_run_opts_t o;
    fs_run_opts_init(&o);
    o.output = output;
    o.interrupt = &p.stop;
    if (progress) {
        o.on_progress = on_progress;
        o.on_progress_ud = &p;
    }
    fs_run_report_t rep;
    fs_error_t e;
    fs_error_clear(&e);
    int rc = fs_run_config(&cfg, &o, &rep, &e);
    fs_config_release(&cfg);
    leave(prev);
    if (rc) {
        snprintf(s->err, sizeof s->err, "%s", rc == FS_EINTR ? "canceled by the progress callback" : e.msg);
        fs_free(r);
        return status_of(rc);
    }
    r->summary = rep.summary;
    r->wall_s = rep.wall_s;
    s->err[0] = '\0';
    *out = r;
    return FLEETSIM_OK;
}

size_t fleetsim_result_count(const fleetsim_result *r)
{
    if (!r)
        return 0;
    size_t n = 0;
    double v;
    int ic;
    while (fs_results_summary_field(n, &r->summary, &v, &ic, NULL))
        n++;
    return n;
}

const char *fleetsim_result_name(const fleetsim_result *r, size_t i)
{
    double v;
    int ic;
    return r ? fs_results_summary_field(i, &r->summary, &v, &ic, NULL) : NULL;
}

int fleetsim_result_get(const fleetsim_result *r, const char *name, double *value)
{
    if (!r || !name || !value)
        return FLEETSIM_EINVAL;
    const char *n;
    double v;
    int ic;
    for (size_t i = 0; (n = fs_results_summary_field(i, &r->summary, &v, &ic, NULL)); i++)
        if (strcmp(n, name) == 0) {
            *value = v;
            return FLEETSIM_OK;
        }
    return FLEETSIM_EINVAL;
}

double fleetsim_result_wall_seconds(const fleetsim_result *r) { return r ? r->wall_s : 0; }

int fleetsim_scenario_set_allocator(fleetsim_scenario *s, fleetsim_alloc_fn fn, void *ud)
{
    if (!s)
        return FLEETSIM_EINVAL;
    if (fs_alloc_ctx_release(&s->mem) != 0) {   /* a leak of an earlier call: keep its allocator */
        snprintf(s->err, sizeof s->err, "fleetsim_scenario_set_allocator: blocks of the previous "
                 "allocator are still live");
        return FLEETSIM_EINTERNAL;
    }
    fs_alloc_ctx_init(&s->mem, fn, ud);
    s->err[0] = '\0';
    return FLEETSIM_OK;
}

int fleetsim_scenario_memory(const fleetsim_scenario *s, fleetsim_memory *out)
{
    if (!s || !out)
        return FLEETSIM_EINVAL;
    fs_alloc_stats_t st;
    fs_alloc_ctx_stats(&s->mem, &st);
    *out = (fleetsim_memory){.allocations = st.served, .failed = st.failed,
                             .live_blocks = st.live_blocks, .live_bytes = st.live_bytes,
                             .peak_bytes = st.peak_bytes};
    return FLEETSIM_OK;
}

void fleetsim_result_free(fleetsim_result *r) { fs_free(r); }
