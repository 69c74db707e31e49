/*
 * fs_memsrc: a workload source over jobs held in memory (tests, tools that
 * build workloads programmatically).  The jobs are copied at creation and
 * must be sorted by submit (FS_EINVAL otherwise).  Tenant and GPU-type names
 * are optional tables copied too.
 */
#ifndef FS_MEMSRC_H
#define FS_MEMSRC_H

#include "fs_source.h"

int fs_memsrc_create(const fs_job_t *jobs, size_t n, const char *const *tenants, size_t n_tenants,
                     const char *const *gpu_types, size_t n_gpu_types, fs_source_t **out,
                     fs_error_t *err);

#endif
