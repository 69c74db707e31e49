#include "fs_synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_rng.h"

/* Largest GPU count a job may ask for (as in the native format). */
#define SYNTH_MAX_GPUS (UINT32_C(1) << 31)
/* Tolerance on "probabilities sum to 1". */
#define SYNTH_SUM_TOL 1e-6

void fs_synth_cfg_init(fs_synth_cfg_t *c)
{
    memset(c, 0, sizeof *c);
    c->rate = 0;
    c->horizon = 0;
    c->max_jobs = 0;
    fs_dist_init(&c->duration);
    c->estimate_factor = 0;
    c->scale = 1;
    c->growth = 0;
    c->growth_period = 30 * FS_US_PER_DAY;
}

static void free_names(char **names, size_t n)
{
    if (names)
        for (size_t i = 0; i < n; i++)
            fs_free(names[i]);
    fs_free(names);
}

static void class_release(fs_synth_class_t *k)
{
    fs_dist_release(&k->duration);
    fs_free(k->duration_cfg.path);
    fs_free(k->duration_cfg.column);
    k->duration_cfg.path = k->duration_cfg.column = NULL;
}

void fs_synth_cfg_release(fs_synth_cfg_t *c)
{
    fs_free(c->sizes);
    fs_free(c->size_probs);
    if (c->tenant_names)
        for (size_t i = 0; i < c->n_tenants; i++)
            fs_free(c->tenant_names[i]);
    fs_free(c->tenant_names);
    fs_free(c->tenant_shares);
    fs_dist_release(&c->duration);
    free_names(c->hourly_names, c->n_hourly);
    fs_free(c->hourly);
    free_names(c->weekly_names, c->n_weekly);
    fs_free(c->weekly);
    for (size_t i = 0; c->classes && i < c->n_classes; i++)
        class_release(&c->classes[i]);
    fs_free(c->classes);
    fs_synth_cfg_init(c);
}

/* Deep copy of a {name: share} table (n may be 0). */
static int copy_shares(size_t n, char *const *names, const double *shares, size_t *dn,
                       char ***dnames, double **dshares)
{
    if (!n)
        return 0;
    *dnames = fs_calloc(n, sizeof **dnames);
    *dshares = fs_malloc(n * sizeof **dshares);
    if (!*dnames || !*dshares)
        return FS_ENOMEM;
    *dn = n;
    for (size_t i = 0; i < n; i++) {
        const char *name = names ? names[i] : NULL;
        if (name && !((*dnames)[i] = fs_strdup(name)))
            return FS_ENOMEM;
        (*dshares)[i] = shares ? shares[i] : NAN;
    }
    return 0;
}

static char *dup_or_null(const char *s, int *oom)
{
    char *d = s ? fs_strdup(s) : NULL;
    if (s && !d)
        *oom = 1;
    return d;
}

/* Deep copy into dst (uninitialised storage).  On failure dst is left empty
 * (as after fs_synth_cfg_init), so releasing it is always safe. */
int fs_synth_cfg_copy(fs_synth_cfg_t *dst, const fs_synth_cfg_t *src)
{
    fs_synth_cfg_init(dst);
    dst->rate = src->rate;
    dst->horizon = src->horizon;
    dst->max_jobs = src->max_jobs;
    dst->estimate_factor = src->estimate_factor;
    dst->scale = src->scale;
    dst->growth = src->growth;
    dst->growth_period = src->growth_period;
    dst->mig = src->mig;
    dst->mig_milli = src->mig_milli;
    if (fs_dist_copy(&dst->duration, &src->duration))
        goto nomem;
    if (copy_shares(src->n_hourly, src->hourly_names, src->hourly, &dst->n_hourly,
                    &dst->hourly_names, &dst->hourly) ||
        copy_shares(src->n_weekly, src->weekly_names, src->weekly, &dst->n_weekly,
                    &dst->weekly_names, &dst->weekly))
        goto nomem;
    if (src->n_classes && src->classes) {
        if (!(dst->classes = fs_calloc(src->n_classes, sizeof *dst->classes)))
            goto nomem;
        dst->n_classes = src->n_classes;
        for (size_t i = 0; i < src->n_classes; i++) {
            const fs_synth_class_t *a = &src->classes[i];
            fs_synth_class_t *b = &dst->classes[i];
            int oom = 0;
            b->gpus_min = a->gpus_min;
            b->gpus_max = a->gpus_max;
            fs_dist_init(&b->duration);
            b->duration_cfg.given = a->duration_cfg.given;
            b->duration_cfg.path = dup_or_null(a->duration_cfg.path, &oom);
            b->duration_cfg.column = dup_or_null(a->duration_cfg.column, &oom);
            if (oom || fs_dist_copy(&b->duration, &a->duration))
                goto nomem;
        }
    }
    if (src->n_sizes) {
        dst->sizes = fs_malloc(src->n_sizes * sizeof *dst->sizes);
        dst->size_probs = fs_malloc(src->n_sizes * sizeof *dst->size_probs);
        if (!dst->sizes || !dst->size_probs)
            goto nomem;
        dst->n_sizes = src->n_sizes;
        if (src->sizes)
            memcpy(dst->sizes, src->sizes, src->n_sizes * sizeof *dst->sizes);
        else
            memset(dst->sizes, 0, src->n_sizes * sizeof *dst->sizes);
        if (src->size_probs)
            memcpy(dst->size_probs, src->size_probs, src->n_sizes * sizeof *dst->size_probs);
        else
            for (size_t i = 0; i < src->n_sizes; i++)
                dst->size_probs[i] = NAN;
    }
    if (src->n_tenants) {
        dst->tenant_names = fs_calloc(src->n_tenants, sizeof *dst->tenant_names);
        dst->tenant_shares = fs_malloc(src->n_tenants * sizeof *dst->tenant_shares);
        if (!dst->tenant_names || !dst->tenant_shares)
            goto nomem;
        dst->n_tenants = src->n_tenants;
        for (size_t i = 0; i < src->n_tenants; i++) {
            const char *name = src->tenant_names ? src->tenant_names[i] : NULL;
            if (name && !(dst->tenant_names[i] = fs_strdup(name)))
                goto nomem;
            dst->tenant_shares[i] = src->tenant_shares ? src->tenant_shares[i] : NAN;
        }
    }
    return 0;
nomem:
    fs_synth_cfg_release(dst);
    return FS_ENOMEM;
}

/* Checks a probability vector: finite, >= 0, summing to 1. */
static int check_probs(const double *p, size_t n, const char *what, fs_error_t *err)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(p[i]) || p[i] < 0)
            return fs_error_set(err, FS_EINVAL,
                                "synthetic workload: %s probability %zu is not a finite "
                                "number >= 0", what, i + 1);
        sum += p[i];
    }
    if (!(fabs(sum - 1.0) <= SYNTH_SUM_TOL))
        return fs_error_set(err, FS_EINVAL,
                            "synthetic workload: %s probabilities sum to %.9g, not 1", what, sum);
    return 0;
}

/* A duration distribution that fs_synth can sample. */
static int dist_ok(const fs_dist_t *d)
{
    double m = fs_dist_mean(d);
    return !(d->kind <= FS_DIST_NONE || d->kind > FS_DIST_EMPIRICAL || !isfinite(m) || m < 0 ||
             (d->kind == FS_DIST_LOGNORMAL && !isfinite(d->mu)) ||
             ((d->kind == FS_DIST_WEIBULL || d->kind == FS_DIST_GAMMA) && !isfinite(d->scale)));
}

/* Parses a profile slot name: a whole number in 0..n-1 ("7", also "07"). */
static int slot_index(const char *name, int n)
{
    if (!name || !*name || strlen(name) > 3)
        return -1;
    int v = 0;
    for (const char *p = name; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v < n ? v : -1;
}

/* Checks a profile table and, when out is not NULL, expands it into n
 * multipliers (n * share; 1 everywhere when the table is empty). */
static int check_profile(size_t cnt, char *const *names, const double *shares, int n,
                         const char *what, double *out, fs_error_t *err)
{
    for (int i = 0; out && i < n; i++)
        out[i] = cnt ? 0 : 1;
    if (!cnt)
        return 0;
    if (!names || !shares)
        return fs_error_set(err, FS_EINVAL, "synthetic workload: the %s profile lacks names or shares",
                            what);
    for (size_t i = 0; i < cnt; i++) {
        int k = slot_index(names[i], n);
        if (k < 0)
            return fs_error_set(err, FS_EINVAL,
                                "synthetic workload: %s profile: '%s' is not a whole number in 0..%d",
                                what, names[i] ? names[i] : "", n - 1);
        for (size_t j = 0; j < i; j++)
            if (slot_index(names[j], n) == k)
                return fs_error_set(err, FS_EINVAL,
                                    "synthetic workload: %s profile: %d is listed twice", what, k);
        if (out)
            out[k] = n * shares[i];
    }
    return check_probs(shares, cnt, what, err);
}

int fs_synth_profile(size_t cnt, char *const *names, const double *shares, int n,
                     const char *what, double *out, fs_error_t *err)
{
    return check_profile(cnt, names, shares, n, what, out, err);
}

/* Sets *key (room for keylen; key may be NULL) and returns rc. */
static int blame(char *key, size_t keylen, const char *path, int rc)
{
    if (rc && key && keylen)
        snprintf(key, keylen, "%s", path);
    return rc;
}

static int check_rest(const fs_synth_cfg_t *c, char *key, size_t keylen, fs_error_t *err);

typedef struct name_at {
    const char *name;
    size_t i;
} name_at_t;

static int cmp_name_at(const void *a, const void *b)
{
    const name_at_t *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : (x->i > y->i) - (x->i < y->i);
}

/* The first name (in list order) that repeats an earlier one: 1 with *at
 * its index, 0 when all differ, FS_ENOMEM.  O(n log n) (300,000 tenants of
 * a fitted trace: a pairwise check took minutes). */
static int first_repeat(char *const *names, size_t n, size_t *at)
{
    if (n < 2)
        return 0;
    name_at_t *v = fs_malloc(n * sizeof *v);
    if (!v)
        return FS_ENOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = (name_at_t){names[i], i};
    qsort(v, n, sizeof *v, cmp_name_at);
    int found = 0;
    for (size_t k = 1; k < n; k++)  /* a run of equal names is in list order */
        if (strcmp(v[k].name, v[k - 1].name) == 0 &&
            (k < 2 || strcmp(v[k - 1].name, v[k - 2].name) != 0) && (!found || v[k].i < *at)) {
            *at = v[k].i;   /* the second of its run: the first repeat of that name */
            found = 1;
        }
    fs_free(v);
    return found;
}

int fs_synth_cfg_check_key(const fs_synth_cfg_t *c, char *key, size_t keylen, fs_error_t *err)
{
    if (key && keylen)
        key[0] = '\0';
    if (!isfinite(c->rate) || c->rate <= 0)
        return blame(key, keylen, "workload.synthetic.arrivals.rate",
                     fs_error_set(err, FS_EINVAL, "synthetic workload: rate must be > 0 (got %g/s)",
                                  c->rate));
    if (c->horizon <= 0)
        return blame(key, keylen, "horizon",
                     fs_error_set(err, FS_EINVAL, "synthetic workload: horizon must be > 0"));
    if (c->n_sizes == 0 || !c->sizes || !c->size_probs)
        return blame(key, keylen, "workload.synthetic.gpus",
                     fs_error_set(err, FS_EINVAL, "synthetic workload: the GPU-count mix is empty"));
    for (size_t i = 0; i < c->n_sizes; i++)
        if (c->sizes[i] < 1 || c->sizes[i] > SYNTH_MAX_GPUS)
            return blame(key, keylen, "workload.synthetic.gpus",
                         fs_error_set(err, FS_EINVAL,
                                      "synthetic workload: GPU count %zu must be in 1..%lu (got %lu)",
                                      i + 1, (unsigned long)SYNTH_MAX_GPUS,
                                      (unsigned long)c->sizes[i]));
    int rc = check_probs(c->size_probs, c->n_sizes, "GPU-count", err);
    if (rc)
        return blame(key, keylen, "workload.synthetic.gpus", rc);
    if (!dist_ok(&c->duration))
        return blame(key, keylen, "workload.synthetic.duration",
                     fs_error_set(err, FS_EINVAL,
                                  "synthetic workload: duration distribution missing or not prepared"));
    if (!isfinite(c->scale) || c->scale <= 0)
        return blame(key, keylen, "workload.synthetic.scale",
                     fs_error_set(err, FS_EINVAL, "synthetic workload: scale must be > 0 (got %g)",
                                  c->scale));
    if (!isfinite(c->growth) || c->growth <= -1)
        return blame(key, keylen, "workload.synthetic.growth.rate",
                     fs_error_set(err, FS_EINVAL, "synthetic workload: growth must be > -1 (got %g)",
                                  c->growth));
    if (c->growth != 0 && c->growth_period <= 0)
        return blame(key, keylen, "workload.synthetic.growth.period",
                     fs_error_set(err, FS_EINVAL, "synthetic workload: the growth period must be > 0"));
    if ((rc = check_profile(c->n_hourly, c->hourly_names, c->hourly, FS_SYNTH_HOURS, "hourly", NULL,
                            err)) != 0)
        return blame(key, keylen, "workload.synthetic.arrivals.profile.hourly", rc);
    if ((rc = check_profile(c->n_weekly, c->weekly_names, c->weekly, FS_SYNTH_DAYS, "weekly", NULL,
                            err)) != 0)
        return blame(key, keylen, "workload.synthetic.arrivals.profile.weekly", rc);
    /* the rest: size classes, tenants, estimate_factor */
    rc = check_rest(c, key, keylen, err);
    return rc;
}

static int check_rest(const fs_synth_cfg_t *c, char *key, size_t keylen, fs_error_t *err)
{
    int rc;
    if (c->n_classes && !c->classes)
        return blame(key, keylen, "workload.synthetic.duration_by_size",
                     fs_error_set(err, FS_EINVAL, "synthetic workload: size classes missing"));
    for (size_t i = 0; i < c->n_classes; i++) {
        const fs_synth_class_t *k = &c->classes[i];
        if (k->gpus_min < 1 || k->gpus_min > k->gpus_max)
            return blame(key, keylen, "workload.synthetic.duration_by_size", fs_error_set(err, FS_EINVAL,
                                "synthetic workload: size class %zu: expected 1 <= gpus_min <= "
                                "gpus_max (got %lu..%lu)", i + 1, (unsigned long)k->gpus_min,
                                (unsigned long)k->gpus_max));
        for (size_t j = 0; j < i; j++)
            if (k->gpus_min <= c->classes[j].gpus_max && c->classes[j].gpus_min <= k->gpus_max)
                return blame(key, keylen, "workload.synthetic.duration_by_size", fs_error_set(err, FS_EINVAL,
                                    "synthetic workload: size classes %zu (%lu..%lu) and %zu "
                                    "(%lu..%lu) overlap", j + 1,
                                    (unsigned long)c->classes[j].gpus_min,
                                    (unsigned long)c->classes[j].gpus_max, i + 1,
                                    (unsigned long)k->gpus_min, (unsigned long)k->gpus_max));
        if (!dist_ok(&k->duration))
            return blame(key, keylen, "workload.synthetic.duration_by_size", fs_error_set(err, FS_EINVAL,
                                "synthetic workload: size class %zu: duration distribution missing "
                                "or not prepared", i + 1));
    }
    if (c->n_tenants) {
        if (!c->tenant_names || !c->tenant_shares)
            return blame(key, keylen, "workload.synthetic.tenants",
                         fs_error_set(err, FS_EINVAL, "synthetic workload: tenants lack names or shares"));
        for (size_t i = 0; i < c->n_tenants; i++)
            if (!c->tenant_names[i] || !c->tenant_names[i][0])
                return blame(key, keylen, "workload.synthetic.tenants",
                             fs_error_set(err, FS_EINVAL, "synthetic workload: tenant %zu has no name",
                                          i + 1));
        size_t dup = 0;
        rc = first_repeat(c->tenant_names, c->n_tenants, &dup);
        if (rc == FS_ENOMEM)
            return fs_error_set(err, rc, "synthetic workload: out of memory");
        if (rc)
            return blame(key, keylen, "workload.synthetic.tenants", fs_error_set(err, FS_EINVAL,
                                "synthetic workload: tenant '%s' is listed twice",
                                c->tenant_names[dup]));
        rc = check_probs(c->tenant_shares, c->n_tenants, "tenant", err);
        if (rc)
            return blame(key, keylen, "workload.synthetic.tenants", rc);
    }
    if (!isfinite(c->estimate_factor) || c->estimate_factor < 0)
        return blame(key, keylen, "workload.synthetic.estimate_factor",
                     fs_error_set(err, FS_EINVAL,
                                  "synthetic workload: estimate_factor must be a finite number >= 0"));
    return 0;
}

typedef struct synth {
    fs_synth_cfg_t cfg;             /* own copy */
    fs_rng_t r_arrival, r_gpus, r_duration, r_tenant;
    gsl_ran_discrete_t *size_table;     /* Walker alias table over cfg.size_probs */
    gsl_ran_discrete_t *tenant_table;   /* over cfg.tenant_shares, or NULL */
    fs_time_t end;                  /* arrivals at or after this are not generated */
    double t_s;                     /* time of the last arrival, seconds (running sum) */
    int homogeneous;                /* no profile and no growth: exponential gaps */
    double mult[FS_SYNTH_HOURS * FS_SYNTH_DAYS]; /* rate * scale * profile per hour of the week, 1/s */
    double beta;                    /* growth exponent ln(1 + growth) / period, 1/s */
    const fs_dist_t **size_dist;    /* per entry of the GPU-count mix: its run-time distribution */
    uint64_t emitted;               /* jobs generated so far (= last id) */
    int done;
} synth_t;

static void synth_destroy(void *state)
{
    synth_t *s = state;
    if (!s)
        return;
    if (s->size_table)
        gsl_ran_discrete_free(s->size_table);
    if (s->tenant_table)
        gsl_ran_discrete_free(s->tenant_table);
    fs_free(s->size_dist);
    fs_rng_release(&s->r_arrival);
    fs_rng_release(&s->r_gpus);
    fs_rng_release(&s->r_duration);
    fs_rng_release(&s->r_tenant);
    fs_synth_cfg_release(&s->cfg);
    fs_free(s);
}

/* Seconds -> us for a drawn duration: rounded, at least 1 us, at most
 * FS_TIME_MAX_INPUT (a heavy tail may draw absurd values). */
static fs_time_t duration_us(double sec)
{
    if (!(sec * 1e6 < (double)FS_TIME_MAX_INPUT))
        return isnan(sec) ? 1 : FS_TIME_MAX_INPUT;
    fs_time_t us = fs_time_from_s(sec);
    return us < 1 ? 1 : us;
}

/* us * factor, rounded, clamped to [1, FS_TIME_MAX_INPUT]. */
static fs_time_t scaled_us(fs_time_t us, double factor)
{
    double e = (double)us * factor;
    if (!(e < (double)FS_TIME_MAX_INPUT))
        return FS_TIME_MAX_INPUT;
    fs_time_t r = (fs_time_t)(e + 0.5);
    return r < 1 ? 1 : r;
}

/*
 * Why the running sum is kept in double seconds: each arrival time is
 * t_k = sum of k exponential gaps, converted to us on its own.  Rounding each
 * gap to us and summing integers would add up to 0.5 us of bias per job
 * (a drift of seconds over millions of jobs); rounding the sum once per job
 * keeps every submit within 0.5 us of the exact Poisson epoch (double
 * precision at 1000 years is still below 4 us per ulp, at 30 days ~0.5 ns).
 */
/*
 * The next epoch of the non-homogeneous process after t (seconds), or
 * +inf past `end_s`: the integrated rate from t must grow by e ~ Exp(1).
 * The rate is piecewise constant per hour (mult[]) times e^{beta t}; in an
 * hour [t, b) at rate c e^{beta u} the integral is
 * c e^{beta t} expm1(beta (b - t)) / beta (c (b - t) when beta = 0), and
 * the epoch inside the hour is t + log1p(e beta / (c e^{beta t})) / beta.
 */
static double next_epoch(const synth_t *s, double t, double e, double end_s)
{
    const size_t week = FS_SYNTH_HOURS * FS_SYNTH_DAYS;
    while (t < end_s) {
        double h = floor(t / 3600.0);
        double b = (h + 1) * 3600.0;
        double c = s->mult[(size_t)fmod(h, (double)week)];
        if (c > 0) {
            double g = s->beta != 0 ? c * exp(s->beta * t) : c;
            double integral = s->beta != 0 ? g * expm1(s->beta * (b - t)) / s->beta : g * (b - t);
            if (e <= integral)
                return t + (s->beta != 0 ? log1p(e * s->beta / g) / s->beta : e / g);
            e -= integral;
        }
        t = b;
    }
    return INFINITY;
}

static int synth_next(void *state, fs_job_t *buf, size_t cap, size_t *n, fs_error_t *err)
{
    synth_t *s = state;
    const fs_synth_cfg_t *c = &s->cfg;
    *n = 0;
    if (cap == 0)
        return fs_error_set(err, FS_EINVAL, "synthetic workload: batch capacity must be >= 1");
    double mean_gap = 1.0 / (c->rate * c->scale);
    double end_s = (double)s->end / 1e6;
    size_t k = 0;
    while (k < cap && !s->done) {
        if (c->max_jobs && s->emitted >= c->max_jobs) {
            s->done = 1;
            break;
        }
        if (s->homogeneous)
            s->t_s += gsl_ran_exponential(fs_rng_gsl(&s->r_arrival), mean_gap);
        else
            s->t_s = next_epoch(s, s->t_s, gsl_ran_exponential(fs_rng_gsl(&s->r_arrival), 1.0), end_s);
        fs_time_t submit = s->t_s * 1e6 < (double)s->end ? fs_time_from_s(s->t_s) : s->end;
        if (submit >= s->end) {
            s->done = 1;
            break;
        }
        fs_job_t *j = &buf[k];
        fs_job_init(j);
        j->id = ++s->emitted;
        j->submit = submit;
        size_t si = gsl_ran_discrete(fs_rng_gsl(&s->r_gpus), s->size_table);
        j->gpus = c->sizes[si];
        j->duration = duration_us(fs_dist_sample(s->size_dist[si], fs_rng_gsl(&s->r_duration)));
        if (s->tenant_table)
            j->tenant = (int32_t)gsl_ran_discrete(fs_rng_gsl(&s->r_tenant), s->tenant_table);
        if (c->estimate_factor > 0)
            j->estimate = scaled_us(j->duration, c->estimate_factor);
        if (c->mig) {   /* no draw: the other streams are unchanged */
            j->mig = c->mig;
            j->gpu_milli = c->mig_milli;
        }
        k++;
    }
    *n = k;
    return 0;
}

static const char *synth_tenant_name(void *state, int32_t i)
{
    synth_t *s = state;
    if (i < 0 || (size_t)i >= s->cfg.n_tenants)
        return NULL;
    return s->cfg.tenant_names[i];
}

static int32_t synth_tenant_count(void *state)
{
    synth_t *s = state;
    return (int32_t)s->cfg.n_tenants;
}

static const char *synth_gpu_type_name(void *state, int32_t i) { return NULL; }
static int32_t synth_gpu_type_count(void *state) { return 0; }
static uint64_t synth_skipped(void *state) { return 0; }

static const fs_source_ops_t synth_ops = {
    .name = "synthetic",
    .next = synth_next,
    .tenant_name = synth_tenant_name,
    .tenant_count = synth_tenant_count,
    .gpu_type_name = synth_gpu_type_name,
    .gpu_type_count = synth_gpu_type_count,
    .skipped = synth_skipped,
    .destroy = synth_destroy,
};

int fs_synth_create(const fs_synth_cfg_t *cfg, uint64_t seed, uint64_t replication,
                    fs_source_t **out, fs_error_t *err)
{
    *out = NULL;
    int rc = fs_synth_cfg_check_key(cfg, NULL, 0, err);
    if (rc)
        return rc;
    if (cfg->n_tenants > (size_t)INT32_MAX)
        return fs_error_set(err, FS_ELIMIT, "synthetic workload: too many tenants");
    fs_source_t *src = fs_malloc(sizeof *src);
    synth_t *s = fs_calloc(1, sizeof *s);
    if (!src || !s) {
        fs_free(src);
        fs_free(s);
        return fs_error_set(err, FS_ENOMEM, "synthetic workload: out of memory");
    }
    fs_synth_cfg_init(&s->cfg);
    if (fs_synth_cfg_copy(&s->cfg, cfg))
        goto nomem;
    /* Entity 0 for every stream: one generator per run. */
    if (fs_rng_init(&s->r_arrival, seed, replication, FS_RNG_ARRIVAL, 0) ||
        fs_rng_init(&s->r_gpus, seed, replication, FS_RNG_GPUS, 0) ||
        fs_rng_init(&s->r_duration, seed, replication, FS_RNG_DURATION, 0) ||
        fs_rng_init(&s->r_tenant, seed, replication, FS_RNG_TENANT, 0))
        goto nomem;
    /* gsl_ran_discrete_preproc allocates with malloc (library-internal). */
    s->size_table = gsl_ran_discrete_preproc(s->cfg.n_sizes, s->cfg.size_probs);
    if (!s->size_table)
        goto nomem;
    if (s->cfg.n_tenants) {
        s->tenant_table = gsl_ran_discrete_preproc(s->cfg.n_tenants, s->cfg.tenant_shares);
        if (!s->tenant_table)
            goto nomem;
    }
    s->end = cfg->horizon < FS_TIME_MAX_INPUT ? cfg->horizon : FS_TIME_MAX_INPUT;
    s->t_s = 0;
    /* rate profile per hour of the week, growth exponent */
    double hourly[FS_SYNTH_HOURS], weekly[FS_SYNTH_DAYS];
    check_profile(s->cfg.n_hourly, s->cfg.hourly_names, s->cfg.hourly, FS_SYNTH_HOURS, "hourly",
                  hourly, NULL);
    check_profile(s->cfg.n_weekly, s->cfg.weekly_names, s->cfg.weekly, FS_SYNTH_DAYS, "weekly",
                  weekly, NULL);
    for (size_t d = 0; d < FS_SYNTH_DAYS; d++)
        for (size_t h = 0; h < FS_SYNTH_HOURS; h++)
            s->mult[d * FS_SYNTH_HOURS + h] = cfg->rate * cfg->scale * hourly[h] * weekly[d];
    s->beta = cfg->growth != 0 ? log1p(cfg->growth) / fs_time_to_s(cfg->growth_period) : 0;
    s->homogeneous = cfg->n_hourly == 0 && cfg->n_weekly == 0 && cfg->growth == 0;
    /* the run-time distribution of each entry of the mix */
    if (!(s->size_dist = fs_malloc(cfg->n_sizes * sizeof *s->size_dist)))
        goto nomem;
    for (size_t i = 0; i < cfg->n_sizes; i++) {
        s->size_dist[i] = &s->cfg.duration;
        for (size_t k = 0; k < s->cfg.n_classes; k++)
            if (s->cfg.sizes[i] >= s->cfg.classes[k].gpus_min &&
                s->cfg.sizes[i] <= s->cfg.classes[k].gpus_max)
                s->size_dist[i] = &s->cfg.classes[k].duration;
    }
    src->ops = &synth_ops;
    src->state = s;
    *out = src;
    return 0;
nomem:
    synth_destroy(s);
    fs_free(src);
    return fs_error_set(err, FS_ENOMEM, "synthetic workload: out of memory");
}
