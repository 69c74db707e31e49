/*
 * fs_tenants: per-tenant means over run files (fs_tenants.h).
 */
#include "fs_tenants.h"
#include "fs_h5read.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <string.h>

const char *const fs_tenant_metrics[FS_TENANT_N_METRICS] = {
    "jobs", "wait_p50", "wait_p95", "wait_p99", "jct_mean", "jct_p95", "gpu_hours",
    "borrowed_gpu_hours", "lent_gpu_hours", "preemptions", "preempt_lost_gpu_hours"};

void fs_tenant_table_release(fs_tenant_table_t *t)
{
    if (!t)
        return;
    fs_h5read_free_strings(t->names, t->n);
    fs_free(t->mean);
    fs_free(t->count);
    memset(t, 0, sizeof *t);
}

long fs_tenant_table_find(const fs_tenant_table_t *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0)
            return (long)i;
    return -1;
}

/* Adds tenant name (a copy) with empty sums; its index in *idx. */
static int add_tenant(fs_tenant_table_t *t, size_t *cap, const char *name, size_t *idx)
{
    long k = fs_tenant_table_find(t, name);
    if (k >= 0) {
        *idx = (size_t)k;
        return 0;
    }
    if (t->n == *cap) {   /* names (one spare), means and counts: at least nc each */
        size_t nc = *cap ? 2 * *cap : 8, cn = *cap ? *cap + 1 : 0;
        size_t cm = *cap * FS_TENANT_N_METRICS, ck = cm;
        if (fs_grow((void **)&t->names, &cn, nc + 1, sizeof *t->names) ||
            fs_grow((void **)&t->mean, &cm, nc * FS_TENANT_N_METRICS, sizeof *t->mean) ||
            fs_grow((void **)&t->count, &ck, nc * FS_TENANT_N_METRICS, sizeof *t->count))
            return FS_ENOMEM;
        *cap = nc;
    }
    char *s = fs_strdup(name);
    if (!s)
        return FS_ENOMEM;
    t->names[t->n] = s;
    for (size_t m = 0; m < FS_TENANT_N_METRICS; m++) {
        t->mean[t->n * FS_TENANT_N_METRICS + m] = 0;
        t->count[t->n * FS_TENANT_N_METRICS + m] = 0;
    }
    *idx = t->n++;
    return 0;
}

/* One file's /tenants into the sums. */
static int add_file(fs_tenant_table_t *t, size_t *cap, const char *path, fs_error_t *err)
{
    fs_h5file_t *f = NULL;
    int rc = fs_h5read_open(path, &f, err);
    if (rc)
        return rc;
    size_t rows = 0, nc = 0;
    char **names = NULL, **cols = NULL;
    int *kinds = NULL;
    double *v = NULL;
    if (!fs_h5read_has(f, "tenants"))
        goto out;   /* no tenants in this run */
    if ((rc = fs_h5read_rows(f, "tenants", &rows, err)) != 0 ||
        (rc = fs_h5read_columns(f, "tenants", &cols, &kinds, &nc, err)) != 0)
        goto out;
    if (rows == 0)
        goto out;
    names = fs_calloc(rows, sizeof *names);
    v = fs_calloc(rows, sizeof *v);
    if (!names || !v) {
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory reading /tenants", path);
        goto out;
    }
    if ((rc = fs_h5read_str(f, "tenants", "name", names, err)) != 0)
        goto out;
    size_t *slot = fs_calloc(rows, sizeof *slot);
    if (!slot) {
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory reading /tenants", path);
        goto out;
    }
    for (size_t i = 0; i < rows && !rc; i++)
        if (add_tenant(t, cap, names[i], &slot[i]))
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory reading /tenants", path);
    for (size_t m = 0; m < FS_TENANT_N_METRICS && !rc; m++) {
        int have = 0;
        for (size_t c = 0; c < nc; c++)
            have |= strcmp(cols[c], fs_tenant_metrics[m]) == 0;
        if (!have)
            continue;   /* an older file: NaN there */
        if ((rc = fs_h5read_f64(f, "tenants", fs_tenant_metrics[m], v, err)) != 0)
            break;
        for (size_t i = 0; i < rows; i++)
            if (isfinite(v[i])) {
                t->mean[slot[i] * FS_TENANT_N_METRICS + m] += v[i];
                t->count[slot[i] * FS_TENANT_N_METRICS + m]++;
            }
    }
    fs_free(slot);
out:
    if (names)
        fs_h5read_free_strings(names, rows);
    fs_h5read_free_strings(cols, nc);
    fs_free(kinds);
    fs_free(v);
    fs_h5read_close(f);
    return rc;
}

int fs_tenant_table_load(const char *const *paths, size_t n_paths, fs_tenant_table_t *out,
                         fs_error_t *err)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < n_paths && !rc; i++)
        rc = add_file(out, &cap, paths[i], err);
    if (rc) {
        fs_tenant_table_release(out);
        return rc;
    }
    for (size_t k = 0; k < out->n * FS_TENANT_N_METRICS; k++)
        out->mean[k] = out->count[k] ? out->mean[k] / (double)out->count[k] : NAN;
    return 0;
}
