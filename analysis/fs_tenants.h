/*
 * fs_tenants: per-tenant figures of several run files side by side (the
 * /tenants tables of the replications of one policy, docs/results.md):
 * each tenant's value in every file and its mean over the files, matched by
 * tenant name, for the columns in fs_tenant_metrics.  `fleetsim versus`
 * prints one table per policy from it, with each mean's interval over the
 * replications (fs_tenant_ci) and, against the baseline policy, the paired
 * difference by replication (fs_tenant_paired: common random numbers make
 * file r of one policy the twin of file r of the other).
 *
 * Ownership: fs_tenant_table_t owns its names and values
 * (fs_tenant_table_release).  Memory: tenants x metrics x (files + 2)
 * doubles.
 */
#ifndef FS_TENANTS_H
#define FS_TENANTS_H

#include <stddef.h>
#include <stdio.h>

#include "../sim/fs_error.h"
#include "fs_ci.h"

/* The /tenants columns averaged, in this order. */
#define FS_TENANT_N_METRICS 17
extern const char *const fs_tenant_metrics[FS_TENANT_N_METRICS];

typedef struct fs_tenant_table {
    char **names;           /* n tenants, in order of first appearance */
    double *mean;           /* n x FS_TENANT_N_METRICS: mean over the files that have a
                               finite value (NaN: none) */
    size_t *count;          /* n x FS_TENANT_N_METRICS: those files */
    double *values;         /* n x FS_TENANT_N_METRICS x n_files: file f's value at
                               [(i * FS_TENANT_N_METRICS + m) * n_files + f] (NaN: none) */
    size_t n_files;
    size_t n;
} fs_tenant_table_t;

/* Reads /tenants of every file.  A file without the newer columns (an older
 * results file) contributes NaN there.  0, FS_EIO/FS_EINVAL (file named), or
 * FS_ENOMEM. */
int fs_tenant_table_load(const char *const *paths, size_t n_paths, fs_tenant_table_t *out,
                         fs_error_t *err);
void fs_tenant_table_release(fs_tenant_table_t *t);

/* Index of tenant name in t, or -1. */
long fs_tenant_table_find(const fs_tenant_table_t *t, const char *name);

/* Tenant i's metric m over the files: mean and Student-t interval at level
 * (fs_ci.h; NaN values skipped, half-width NaN with fewer than 2).  0 or
 * FS_EINVAL (level) / FS_ENOMEM. */
int fs_tenant_ci(const fs_tenant_table_t *t, size_t i, size_t m, double level, fs_ci_t *ci);

/* The paired difference b - a of tenant `name`'s metric m, file r of b
 * against file r of a (the same replication), over the replications where
 * both have a value: mean and Student-t interval (ci->n = 0 when the tenant
 * is missing from either or no pair has values).  The tables must have been
 * loaded from the same number of files (FS_EINVAL otherwise). */
int fs_tenant_paired(const fs_tenant_table_t *a, const fs_tenant_table_t *b, const char *name,
                     size_t m, double level, fs_ci_t *ci);

/* Prints the per-tenant tables of n policies or sweep points (t[i] named
 * labels[i]; failed[i] != 0: its runs failed, the column says so): each
 * tenant's metrics as mean +- the 95% t half-width over the files, then
 * each column minus column `base`, paired by replication, with its 95%
 * interval and * when that excludes 0.  identical: the replications agree
 * (no intervals).  Tenants in order of first appearance in t[base], then
 * the others'; metrics no column has are left out.  Nothing when no table
 * has tenants.  0 or FS_ENOMEM. */
int fs_tenant_print(FILE *f, const fs_tenant_table_t *t, const char *const *labels,
                    const int *failed, size_t n, size_t base, int identical);

#endif
