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

#include <signal.h>
#include <stdint.h>

#include "../sim/fs_error.h"

/* --tsdb's default block range: a day (aligned to days from the Unix epoch).
 * Prometheus, Thanos and Mimir take it; it holds each series' labels once a
 * day where 2 h blocks (promtool's default) hold them 12 times: 1.2 bytes per
 * sample against 2.3 on a 256-GPU week (docs/observability.md "Size"). */
#define FS_METRICS_BLOCK_MS ((int64_t)24 * 3600 * 1000)

/* families at most (fs_metrics_n_families() is below it) */
#define FS_METRICS_MAX_FAMILIES 64

typedef enum fs_metrics_level {
    FS_METRICS_GPU = 0,     /* dcgm-exporter's series, per GPU (and MIG instance) */
    FS_METRICS_NODE,        /* recording-rule series per node: fleetsim:gpu_util:avg_node, ... */
    FS_METRICS_POOL         /* ... and per pool: fleetsim:gpu_util:avg_pool, ... */
} fs_metrics_level_t;

typedef struct fs_metrics_opts {
    uint32_t step;          /* seconds between samples (>= 1) */
    int64_t origin;         /* Unix seconds of simulated time 0 */
    const char *pools;      /* only these pools' GPUs (names, comma-separated); NULL: all */
    uint32_t node_lo, node_hi;  /* only nodes node_lo..node_hi of each pool (0, UINT32_MAX: all) */
    uint32_t xid_window;    /* DCGM_EXP_XID_ERRORS_COUNT's window, s (dcgm-exporter: 5 min) */
    int tsdb;               /* out is a directory of Prometheus TSDB blocks (fs_tsdb.h) */
    int64_t block_ms;       /* --tsdb: block range, ms (a multiple of 2 h; 0: FS_METRICS_BLOCK_MS) */
    int legacy_hostname;    /* the label Hostname (dcgm-exporter before 3.3) for hostname */
    int lenient;            /* a step below /timeline's interval: leave the scheduler's
                               families out (st says so) instead of FS_EINVAL, unless named
                               in families */
    const char *families;   /* only these families (names, comma-separated); NULL: all */
    fs_metrics_level_t level;
    double from, to;        /* only samples in [from, to] (simulated s; to < 0: the end) */
    uint64_t max_size;      /* refuse an export expected larger than this (bytes; 0: none) */
    /* the expected size, before anything is written (NULL: not told); a
     * nonzero return stops with FS_EUSAGE */
    int (*on_estimate)(void *arg, uint64_t series, uint64_t samples, uint64_t bytes);
    /* progress, done of total GPUs x families (NULL: none) */
    void (*on_progress)(void *arg, uint64_t done, uint64_t total);
    void *arg;
    const volatile sig_atomic_t *interrupt;  /* nonzero: stop (FS_EINTR), removing what was written */
} fs_metrics_opts_t;

typedef struct fs_metrics_stats {
    uint64_t gpus, series, samples, bytes;
    uint64_t blocks;        /* --tsdb */
    double sched_skipped_interval;  /* > 0 (lenient only): the scheduler's series (fleetsim_*)
                                       were left out, /timeline being sampled this coarser
                                       than the step */
    /* per family (fs_metrics_family_name); bytes: --tsdb */
    uint64_t fam_samples[FS_METRICS_MAX_FAMILIES], fam_bytes[FS_METRICS_MAX_FAMILIES];
} fs_metrics_stats_t;

/* The name of family i (0 .. fs_metrics_n_families() - 1), for stats. */
const char *fs_metrics_family_name(size_t i);
size_t fs_metrics_n_families(void);

/* Writes out from results.  0, FS_EINVAL (no /gpu_intervals rows: the run
 * was made without output.gpu_intervals; inconsistent intervals; a step
 * below /timeline's interval while the scheduler's families are on: by
 * default or named in families; with lenient and not named they are left
 * out, st says so), FS_EUSAGE (a target directory holding
 * other data, an export above max_size or the free space), FS_EINTR,
 * FS_EIO, FS_ENOMEM; err names the file.  Nothing is left on failure. */
int fs_metrics_write(const char *results, const char *out, const fs_metrics_opts_t *o,
                     fs_metrics_stats_t *st, fs_error_t *err);

#endif
