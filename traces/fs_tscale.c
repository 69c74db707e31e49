/*
 * fs_tscale: per-tenant load scaling (fs_tscale.h).
 */
#include "fs_tscale.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int fs_tscale_synth(fs_synth_cfg_t *sc, const char *const *names, const double *k, size_t n,
                    double **shares, fs_error_t *err)
{
    *shares = NULL;
    if (n == 0)
        return 0;
    if (sc->n_tenants == 0)
        return fs_error_set(err, FS_EINVAL, "workload.tenant_scale: the synthetic workload has "
                            "no tenants (workload.synthetic.tenants) to scale");
    double *s = fs_malloc(sc->n_tenants * sizeof *s);
    if (!s)
        return fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
    for (size_t i = 0; i < sc->n_tenants; i++)
        s[i] = sc->tenant_shares[i];
    for (size_t j = 0; j < n; j++) {
        size_t i = 0;
        while (i < sc->n_tenants && strcmp(sc->tenant_names[i], names[j]) != 0)
            i++;
        if (i == sc->n_tenants) {
            char known[256] = "";
            for (size_t t = 0; t < sc->n_tenants; t++) {
                if (t)
                    strncat(known, ", ", sizeof known - strlen(known) - 1);
                strncat(known, sc->tenant_names[t], sizeof known - strlen(known) - 1);
            }
            fs_free(s);
            return fs_error_set(err, FS_EINVAL, "workload.tenant_scale: '%s' is not a tenant of "
                                "workload.synthetic.tenants (%s)", names[j], known);
        }
        s[i] = sc->tenant_shares[i] * k[j];
    }
    double sum = 0;
    for (size_t i = 0; i < sc->n_tenants; i++)
        sum += s[i];
    for (size_t i = 0; i < sc->n_tenants; i++)
        s[i] /= sum;
    sc->rate *= sum;    /* the old shares sum to 1 */
    sc->tenant_shares = s;
    *shares = s;
    return 0;
}

typedef struct tscale {
    fs_source_t *in;
    char **names;           /* the scaled tenants (owned copies) */
    double *k;
    size_t n;
    uint64_t seed, replication;
    int loaded;
    fs_job_t *jobs;         /* the whole workload, sorted, after the first batch */
    size_t n_jobs, next;
} tscale_t;

static void tscale_destroy(void *state)
{
    tscale_t *t = state;
    if (!t)
        return;
    if (t->in)
        fs_source_destroy(t->in);
    for (size_t i = 0; t->names && i < t->n; i++)
        fs_free(t->names[i]);
    fs_free(t->names);
    fs_free(t->k);
    fs_free(t->jobs);
    fs_free(t);
}

/* A job and its position in the scaled list (ties in submit keep it). */
typedef struct keyed {
    fs_time_t submit;
    size_t pos;
} keyed_t;

static int by_submit(const void *a, const void *b)
{
    const keyed_t *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Appends job j to t->jobs (capacity *cap). */
static int push(tscale_t *t, size_t *cap, const fs_job_t *j)
{
    if (fs_grow((void **)&t->jobs, cap, t->n_jobs + 1, sizeof *t->jobs))
        return FS_ENOMEM;
    t->jobs[t->n_jobs++] = *j;
    return 0;
}

/* Reads the inner source whole, then keeps/copies the scaled tenants' jobs
 * and sorts by submit. */
static int load(tscale_t *t, fs_error_t *err)
{
    fs_job_t *in = NULL;
    size_t n_in = 0, cap_in = 0;
    int rc = 0;
    for (;;) {
        size_t got = 0;
        if (fs_grow((void **)&in, &cap_in, n_in + 4096, sizeof *in)) {
            rc = fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
            break;
        }
        if ((rc = fs_source_next(t->in, in + n_in, 4096, &got, err)) != 0 || got == 0)
            break;
        n_in += got;
    }
    /* each scaled tenant's index, job count and first/last submit */
    int32_t nt = fs_source_tenant_count(t->in);
    int32_t *idx = rc ? NULL : fs_malloc((t->n ? t->n : 1) * sizeof *idx);
    double *gap = rc ? NULL : fs_calloc(t->n ? t->n : 1, sizeof *gap);
    if (!rc && (!idx || !gap))
        rc = fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
    for (size_t j = 0; j < t->n && !rc; j++) {
        idx[j] = -1;
        for (int32_t i = 0; i < nt && idx[j] < 0; i++) {
            const char *name = fs_source_tenant_name(t->in, i);
            if (name && strcmp(name, t->names[j]) == 0)
                idx[j] = i;
        }
        if (idx[j] < 0) {
            char known[256] = "";
            for (int32_t i = 0; i < nt; i++) {
                const char *name = fs_source_tenant_name(t->in, i);
                if (i)
                    strncat(known, ", ", sizeof known - strlen(known) - 1);
                strncat(known, name ? name : "?", sizeof known - strlen(known) - 1);
            }
            rc = fs_error_set(err, FS_EINVAL, "workload.tenant_scale: '%s' is not a tenant of "
                              "the trace (its tenants: %s)", t->names[j], nt ? known : "none");
            break;
        }
        size_t cnt = 0;
        fs_time_t first = 0, last = 0;
        for (size_t r = 0; r < n_in; r++)
            if (in[r].tenant == idx[j]) {
                if (cnt++ == 0)
                    first = in[r].submit;
                last = in[r].submit;
            }
        if (cnt < 2) {
            rc = fs_error_set(err, FS_EINVAL, "workload.tenant_scale: tenant '%s' has %zu job%s "
                              "in the trace; its mean inter-arrival gap needs at least 2",
                              t->names[j], cnt, cnt == 1 ? "" : "s");
            break;
        }
        gap[j] = (double)(last - first) / (double)(cnt - 1);
    }
    uint64_t max_id = 0;
    for (size_t r = 0; r < n_in && !rc; r++)
        if (in[r].id > max_id)
            max_id = in[r].id;
    fs_rng_t rng = {0};
    if (!rc && fs_rng_init(&rng, t->seed, t->replication, FS_RNG_TENANT_SCALE, 0))
        rc = fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
    size_t cap = 0;
    for (size_t r = 0; r < n_in && !rc; r++) {
        size_t j = 0;
        while (j < t->n && (in[r].tenant < 0 || in[r].tenant != idx[j]))
            j++;
        if (j == t->n) {    /* not scaled */
            if (push(t, &cap, &in[r]))
                rc = fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
            continue;
        }
        double k = t->k[j], whole = floor(k);
        if (k < 1) {        /* thinning */
            if (fs_rng_uniform(&rng) < k && push(t, &cap, &in[r]))
                rc = fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
            continue;
        }
        size_t copies = (size_t)whole - 1;
        if (k > whole && fs_rng_uniform(&rng) < k - whole)
            copies++;
        if (push(t, &cap, &in[r])) {
            rc = fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
            break;
        }
        for (size_t c = 0; c < copies && !rc; c++) {
            fs_job_t cp = in[r];
            double shift = fs_rng_uniform(&rng) * gap[j];
            fs_time_t d = (fs_time_t)llround(shift);
            cp.id = ++max_id;
            cp.submit = in[r].submit + d;
            if (cp.rec_start >= 0)
                cp.rec_start += d;
            if (cp.rec_end >= 0)
                cp.rec_end += d;
            if (push(t, &cap, &cp))
                rc = fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
        }
    }
    fs_rng_release(&rng);
    fs_free(in);
    fs_free(idx);
    fs_free(gap);
    /* sort by submit, ties in list order (an original before its copies) */
    keyed_t *key = rc || !t->n_jobs ? NULL : fs_malloc(t->n_jobs * sizeof *key);
    fs_job_t *sorted = key ? fs_malloc(t->n_jobs * sizeof *sorted) : NULL;
    if (!rc && t->n_jobs && !sorted) {
        fs_free(key);
        return fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
    }
    if (!rc && t->n_jobs) {
        for (size_t i = 0; i < t->n_jobs; i++)
            key[i] = (keyed_t){t->jobs[i].submit, i};
        qsort(key, t->n_jobs, sizeof *key, by_submit);
        for (size_t i = 0; i < t->n_jobs; i++)
            sorted[i] = t->jobs[key[i].pos];
        fs_free(t->jobs);
        t->jobs = sorted;
        fs_free(key);
    }
    t->loaded = 1;
    return rc;
}

static int tscale_next(void *state, fs_job_t *buf, size_t cap, size_t *n, fs_error_t *err)
{
    tscale_t *t = state;
    *n = 0;
    if (!t->loaded) {
        int rc = load(t, err);
        if (rc)
            return rc;
    }
    size_t k = t->n_jobs - t->next < cap ? t->n_jobs - t->next : cap;
    if (k)
        memcpy(buf, t->jobs + t->next, k * sizeof *buf);
    t->next += k;
    *n = k;
    return 0;
}

static const char *tscale_tenant_name(void *state, int32_t i)
{
    return fs_source_tenant_name(((tscale_t *)state)->in, i);
}

static int32_t tscale_tenant_count(void *state)
{
    return fs_source_tenant_count(((tscale_t *)state)->in);
}

static const char *tscale_gpu_type_name(void *state, int32_t i)
{
    return fs_source_gpu_type_name(((tscale_t *)state)->in, i);
}

static int32_t tscale_gpu_type_count(void *state)
{
    return fs_source_gpu_type_count(((tscale_t *)state)->in);
}

static uint64_t tscale_skipped(void *state)
{
    return fs_source_skipped(((tscale_t *)state)->in);
}

static const char *tscale_skip_reason(void *state, size_t i, uint64_t *count)
{
    return fs_source_skip_reason(((tscale_t *)state)->in, i, count);
}

static const fs_source_ops_t tscale_ops = {
    .name = "tenant_scale",
    .next = tscale_next,
    .tenant_name = tscale_tenant_name,
    .tenant_count = tscale_tenant_count,
    .gpu_type_name = tscale_gpu_type_name,
    .gpu_type_count = tscale_gpu_type_count,
    .skipped = tscale_skipped,
    .destroy = tscale_destroy,
    .skip_reason = tscale_skip_reason,
};

int fs_tscale_wrap(fs_source_t **src, const char *const *names, const double *k, size_t n,
                   uint64_t seed, uint64_t replication, fs_error_t *err)
{
    if (n == 0)
        return 0;
    fs_source_t *w = fs_malloc(sizeof *w);
    tscale_t *t = fs_calloc(1, sizeof *t);
    int oom = !w || !t;
    if (!oom) {
        t->in = *src;
        t->seed = seed;
        t->replication = replication;
        t->names = fs_calloc(n, sizeof *t->names);
        t->k = fs_malloc(n * sizeof *t->k);
        oom = !t->names || !t->k;
        for (size_t j = 0; !oom && j < n; j++) {
            t->k[j] = k[j];
            oom = !(t->names[t->n++] = fs_strdup(names[j]));
        }
    }
    if (oom) {
        if (t)
            tscale_destroy(t);
        else
            fs_source_destroy(*src);
        fs_free(w);
        *src = NULL;
        return fs_error_set(err, FS_ENOMEM, "workload.tenant_scale: out of memory");
    }
    for (size_t j = 0; j < n; j++)
        if (!(isfinite(k[j]) && k[j] > 0)) {
            tscale_destroy(t);
            fs_free(w);
            *src = NULL;
            return fs_error_set(err, FS_EINVAL, "workload.tenant_scale: %s: the factor must be a "
                                "number > 0", names[j]);
        }
    w->ops = &tscale_ops;
    w->state = t;
    *src = w;
    return 0;
}
