/*
 * fs_tenants: per-tenant figures of several run files side by side (the
 * /tenants tables of the replications of one policy, docs/results.md):
 * each tenant's mean over the files, matched by tenant name, for the
 * columns in fs_tenant_metrics.  `fleetsim versus` prints one table per
 * policy from it.
 *
 * Ownership: fs_tenant_table_t owns its names and values
 * (fs_tenant_table_release).  Memory: tenants x metrics doubles.
 */
#ifndef FS_TENANTS_H
#define FS_TENANTS_H

#include <stddef.h>

#include "../sim/fs_error.h"

/* The /tenants columns averaged, in this order. */
#define FS_TENANT_N_METRICS 11
extern const char *const fs_tenant_metrics[FS_TENANT_N_METRICS];

typedef struct fs_tenant_table {
    char **names;           /* n tenants, in order of first appearance */
    double *mean;           /* n x FS_TENANT_N_METRICS: mean over the files that have a
                               finite value (NaN: none) */
    size_t *count;          /* n x FS_TENANT_N_METRICS: those files */
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

#endif
