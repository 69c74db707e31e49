/*
 * fs_metrics: a results file's GPUs as DCGM telemetry, in the OpenMetrics
 * text format (`fleetsim metrics`; docs/observability.md).
 *
 * Input: /gpu_intervals (written with output.gpu_intervals: true), /pools,
 * /tenants, /failures (Xid codes), /timeline (scheduler series, when
 * sampled) and /summary (end_time).  Output: one series per GPU and label
 * set with dcgm-exporter's metric names and labels (gpu, UUID, modelName,
 * Hostname, and namespace/pod/container while a job holds the GPU), sampled
 * every `step` seconds from 0 to the end of the run, timestamps in whole
 * seconds from `origin` (Unix time of simulated time 0), families grouped
 * as OpenMetrics requires and "# EOF" at the end, written atomically.
 *
 * GPU indices inside a node are assigned in time order, lowest free first
 * (the model counts GPUs per node; which physical GPU a job holds does not
 * change any result).  Per GPU, from the activity of the jobs on it
 * (fractions summed over shares, at most 1):
 *   power = idle + context (a job computing) + (TDP - idle - context) x SM
 *   activity, with idle = 10% of the catalog's TDP, context 38 W;
 *   energy = its exact integral (mJ, a counter); temperature = a first-order
 *   lag to ambient 30 C + 0.07 C/W x power with a 60 s time constant,
 *   integrated exactly between changes.
 */
#ifndef FS_METRICS_H
#define FS_METRICS_H

#include <stdint.h>

#include "../sim/fs_error.h"

typedef struct fs_metrics_opts {
    uint32_t step;          /* seconds between samples (>= 1) */
    int64_t origin;         /* Unix seconds of simulated time 0 */
    const char *pools;      /* only these pools' GPUs (names, comma-separated); NULL: all */
    uint32_t node_lo, node_hi;  /* only nodes node_lo..node_hi of each pool (0, UINT32_MAX: all) */
    uint32_t xid_window;    /* DCGM_EXP_XID_ERRORS_COUNT's window, s (dcgm-exporter: 5 min) */
} fs_metrics_opts_t;

typedef struct fs_metrics_stats {
    uint64_t gpus, series, samples, bytes;
} fs_metrics_stats_t;

/* Writes out from results.  0, FS_EINVAL (no /gpu_intervals rows: the run
 * was made without output.gpu_intervals; inconsistent intervals), FS_EIO,
 * FS_ENOMEM; err names the file. */
int fs_metrics_write(const char *results, const char *out, const fs_metrics_opts_t *o,
                     fs_metrics_stats_t *st, fs_error_t *err);

#endif
