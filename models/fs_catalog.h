/*
 * fs_catalog: the built-in GPU catalog.
 *
 * One row per GPU model: memory, board power, NVLink bandwidth, a relative
 * training speed (H100 = 1.0) and the source of each figure.  Sources and
 * dates are in docs/catalog.md (from shared/docs/DOMAIN.md sections 3.7 and
 * 4.2).  Unknown models found in traces are not in the catalog: they keep
 * their name and run at neutral speed 1.0.
 */
#ifndef FS_CATALOG_H
#define FS_CATALOG_H

#include <stddef.h>

typedef struct fs_gpu_model {
    const char *name;       /* "H100" */
    const char *long_name;  /* "NVIDIA H100 SXM5 80GB" */
    double memory_gb;       /* HBM capacity, GB */
    double tdp_w;           /* board power, W */
    double host_w;          /* server power per GPU incl. host at peak, W */
    double nvlink_gbps;     /* NVLink bandwidth per GPU, GB/s */
    double speed;           /* relative training throughput, H100 = 1.0 */
    const char *source;     /* short citation */
} fs_gpu_model_t;

size_t fs_catalog_count(void);
const fs_gpu_model_t *fs_catalog_get(size_t i);
/* Case-insensitive lookup; returns the index or -1. */
int fs_catalog_find(const char *name);

#endif
