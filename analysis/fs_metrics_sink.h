/*
 * fs_metrics_sink: the hook through which families computed outside
 * fs_metrics.c (fs_metrics_queues.c: vLLM, Kueue, cost and carbon) write
 * their series into the export fs_metrics.c is making (blocks or text),
 * with its step, sample instants, staleness markers, size checks and
 * per-family statistics.
 */
#ifndef FS_METRICS_SINK_H
#define FS_METRICS_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "fs_h5read.h"
#include "../sim/fs_error.h"

typedef struct fs_msink fs_msink_t;     /* fs_metrics.c's export */

/* What a family module reads of the export: the results file, the
 * sample instants k_lo..k_hi (simulated time k x step), the run's end. */
typedef struct fs_msink_info {
    fs_h5file_t *f;
    const char *results;
    fs_error_t *err;
    uint32_t step, k_lo, k_hi;
    double end_time;
} fs_msink_info_t;

void fs_msink_info(const fs_msink_t *s, fs_msink_info_t *out);

/* The name of tenant index t (/tenants) and of service i (/services). */
const char *fs_msink_tenant(const fs_msink_t *s, int32_t t);
const char *fs_msink_service(const fs_msink_t *s, uint32_t i);

/* Is node local of pool p (its index in the pool) exported (--pools,
 * --nodes), as the GPU series select their GPUs' nodes? */
int fs_msink_node_on(const fs_msink_t *s, uint32_t p, uint32_t local);

/* Text output: a family's "# HELP" and "# TYPE" lines (nothing for blocks). */
int fs_msink_family(fs_msink_t *s, const char *name, const char *type, const char *help);

/* One series of family fam (its index in fs_metrics_family_name) named
 * name with nl labels lab[i][0] = lab[i][1], sampled at instants k[i]
 * (the sample instants' indices, increasing) with values v[i]; a
 * staleness marker follows every sample not followed by the next instant. */
int fs_msink_series(fs_msink_t *s, size_t fam, const char *name, const char *const (*lab)[2],
                    size_t nl, const uint32_t *k, const double *v, size_t n);

#endif
