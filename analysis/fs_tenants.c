/*
 * fs_tenants: per-tenant means over run files (fs_tenants.h).
 */
#include "fs_tenants.h"
#include "fs_h5read.h"
#include "../sim/fs_alloc.h"
#include "fs_fmt.h"

#include <math.h>
#include <string.h>

const char *const fs_tenant_metrics[FS_TENANT_N_METRICS] = {
    "jobs", "wait_p50", "wait_p95", "wait_p99", "jct_mean", "jct_p95", "gpu_hours",
    "borrowed_gpu_hours", "lent_gpu_hours", "preemptions", "preempt_lost_gpu_hours",
    "borrowed_cpu_core_hours", "lent_cpu_core_hours", "borrowed_memory_gib_hours",
    "lent_memory_gib_hours", "borrowed_pod_hours", "lent_pod_hours"};

void fs_tenant_table_release(fs_tenant_table_t *t)
{
    if (!t)
        return;
    fs_h5read_free_strings(t->names, t->n);
    fs_free(t->mean);
    fs_free(t->count);
    fs_free(t->values);
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
        size_t cm = *cap * FS_TENANT_N_METRICS, ck = cm, cv = cm * t->n_files;
        if (fs_grow((void **)&t->names, &cn, nc + 1, sizeof *t->names) ||
            fs_grow((void **)&t->mean, &cm, nc * FS_TENANT_N_METRICS, sizeof *t->mean) ||
            fs_grow((void **)&t->count, &ck, nc * FS_TENANT_N_METRICS, sizeof *t->count) ||
            fs_grow((void **)&t->values, &cv, nc * FS_TENANT_N_METRICS * t->n_files + 1,
                    sizeof *t->values))
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
        for (size_t f = 0; f < t->n_files; f++)
            t->values[(t->n * FS_TENANT_N_METRICS + m) * t->n_files + f] = NAN;
    }
    *idx = t->n++;
    return 0;
}

/* One file's /tenants into the sums. */
static int add_file(fs_tenant_table_t *t, size_t *cap, size_t file, const char *path,
                    fs_error_t *err)
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
                t->values[(slot[i] * FS_TENANT_N_METRICS + m) * t->n_files + file] = v[i];
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
    out->n_files = n_paths;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < n_paths && !rc; i++)
        rc = add_file(out, &cap, i, paths[i], err);
    if (rc) {
        fs_tenant_table_release(out);
        return rc;
    }
    for (size_t k = 0; k < out->n * FS_TENANT_N_METRICS; k++)
        out->mean[k] = out->count[k] ? out->mean[k] / (double)out->count[k] : NAN;
    return 0;
}

int fs_tenant_ci(const fs_tenant_table_t *t, size_t i, size_t m, double level, fs_ci_t *ci)
{
    if (i >= t->n || m >= FS_TENANT_N_METRICS)
        return FS_EINVAL;
    return fs_ci_t_interval(t->values + (i * FS_TENANT_N_METRICS + m) * t->n_files, t->n_files,
                            level, ci);
}

int fs_tenant_paired(const fs_tenant_table_t *a, const fs_tenant_table_t *b, const char *name,
                     size_t m, double level, fs_ci_t *ci)
{
    if (a->n_files != b->n_files || m >= FS_TENANT_N_METRICS)
        return FS_EINVAL;
    long ia = fs_tenant_table_find(a, name), ib = fs_tenant_table_find(b, name);
    if (ia < 0 || ib < 0) {
        memset(ci, 0, sizeof *ci);
        ci->mean = ci->sd = ci->half = ci->lo = ci->hi = NAN;
        ci->level = level;
        return 0;
    }
    const double *x = a->values + ((size_t)ia * FS_TENANT_N_METRICS + m) * a->n_files;
    const double *y = b->values + ((size_t)ib * FS_TENANT_N_METRICS + m) * b->n_files;
    return fs_ci_paired(y, x, a->n_files, level, ci);
}

/* The unit a /tenants column is shown in: waits and JCTs as durations. */
static fs_fmt_unit_t tenant_unit(const char *metric)
{
    return strncmp(metric, "wait_", 5) == 0 || strncmp(metric, "jct_", 4) == 0
               ? FS_FMT_DURATION
               : FS_FMT_NUMBER;
}

/* 1 when some column has a value of tenant `name`'s metric m. */
static int any_value(const fs_tenant_table_t *t, const int *failed, size_t n, const char *name,
                     size_t m)
{
    for (size_t i = 0; i < n; i++) {
        long k = failed[i] ? -1 : fs_tenant_table_find(&t[i], name);
        if (k >= 0 && t[i].count[(size_t)k * FS_TENANT_N_METRICS + m])
            return 1;
    }
    return 0;
}

/* "mean +- half" of tenant `name`'s metric m over t's files. */
static void mean_cell(const fs_tenant_table_t *t, const char *name, size_t m, int identical,
                      char *buf, size_t n)
{
    long k = fs_tenant_table_find(t, name);
    fs_ci_t ci;
    if (k < 0 || fs_tenant_ci(t, (size_t)k, m, 0.95, &ci) || ci.n == 0) {
        snprintf(buf, n, "-");
        return;
    }
    fs_fmt_interval(buf, n, tenant_unit(fs_tenant_metrics[m]), ci.mean,
                    identical || ci.n < 2 || ci.sd == 0 ? 0 : ci.half);
}

/* The paired difference t - base of a tenant's metric, with its interval. */
static void diff_cell(const fs_tenant_table_t *base, const fs_tenant_table_t *t, const char *name,
                      size_t m, int identical, char *c, size_t n)
{
    fs_fmt_unit_t u = tenant_unit(fs_tenant_metrics[m]);
    fs_ci_t ci;
    if (fs_tenant_paired(base, t, name, m, 0.95, &ci) || ci.n == 0) {
        snprintf(c, n, "-");
        return;
    }
    char d[48], lo[48], hi[48];
    fs_fmt_diff(d, sizeof d, u, ci.mean);
    if (identical || ci.n < 2 || isnan(ci.lo) || ci.sd == 0) {
        snprintf(c, n, "%s", d);
        return;
    }
    fs_fmt_diff(lo, sizeof lo, u, ci.lo);
    fs_fmt_diff(hi, sizeof hi, u, ci.hi);
    snprintf(c, n, "%s [%s, %s]%s", d, lo, hi, fs_ci_significant(&ci) == 1 ? " *" : "");
}

int fs_tenant_print(FILE *f, const fs_tenant_table_t *t, const char *const *labels,
                    const int *failed, size_t n, size_t base, int identical)
{
    /* the union of tenant names, base first */
    const char **names = NULL;
    size_t nn = 0, cap = 0, reps = 0, ok = 0;
    for (size_t i0 = 0; i0 < n; i0++) {
        size_t i = i0 == 0 ? base : (i0 <= base ? i0 - 1 : i0);
        if (failed[i])
            continue;
        ok++;
        reps = t[i].n_files;
        for (size_t k = 0; k < t[i].n; k++) {
            size_t j = 0;
            while (j < nn && strcmp(names[j], t[i].names[k]) != 0)
                j++;
            if (j < nn)
                continue;
            if (fs_grow((void **)&names, &cap, nn + 1, sizeof *names)) {
                fs_free((void *)names);
                return FS_ENOMEM;
            }
            names[nn++] = t[i].names[k];
        }
    }
    if (nn == 0) {
        fs_free((void *)names);
        return 0;
    }
    int intervals = !identical && reps >= 2;
    fprintf(f, "\nper tenant (/tenants): mean%s over %zu replication%s\n%-16s %-22s",
            intervals ? " +- 95% t half-width" : "", reps, reps == 1 ? "" : "s", "tenant",
            "metric");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-24s", labels[i]);
    fprintf(f, "\n");
    for (size_t j = 0; j < nn; j++)
        for (size_t m = 0, first = 1; m < FS_TENANT_N_METRICS; m++) {
            if (!any_value(t, failed, n, names[j], m))
                continue;   /* e.g. borrowed GPU-hours without quotas */
            fprintf(f, "%-16.16s %-22s", first ? (names[j][0] ? names[j] : "(unnamed)") : "",
                    fs_tenant_metrics[m]);
            first = 0;
            for (size_t i = 0; i < n; i++) {
                char c[64];
                if (failed[i])
                    snprintf(c, sizeof c, "failed");
                else
                    mean_cell(&t[i], names[j], m, identical, c, sizeof c);
                fprintf(f, "  %-24s", c);
            }
            fprintf(f, "\n");
        }
    if (ok > 1) {
        fprintf(f, "\nper tenant, paired differences against %s%s\n%-16s %-22s", labels[base],
                intervals ? ": mean [95% interval] over the replications (replication r "
                            "against replication r); * = significant (the interval excludes 0)"
                          : "",
                "tenant", "metric");
        for (size_t i = 0; i < n; i++) {
            char h[96];
            if (i == base)
                continue;
            snprintf(h, sizeof h, "%s - %s", labels[i], labels[base]);
            fprintf(f, "  %-40s", h);
        }
        fprintf(f, "\n");
        for (size_t j = 0; j < nn; j++)
            for (size_t m = 0, first = 1; m < FS_TENANT_N_METRICS; m++) {
                if (!any_value(t, failed, n, names[j], m))
                    continue;
                fprintf(f, "%-16.16s %-22s", first ? (names[j][0] ? names[j] : "(unnamed)") : "",
                        fs_tenant_metrics[m]);
                first = 0;
                for (size_t i = 0; i < n; i++) {
                    char c[160];
                    if (i == base)
                        continue;
                    if (failed[i])
                        snprintf(c, sizeof c, "failed");
                    else
                        diff_cell(&t[base], &t[i], names[j], m, identical, c, sizeof c);
                    fprintf(f, "  %-40s", c);
                }
                fprintf(f, "\n");
            }
    }
    fs_free((void *)names);
    return 0;
}
