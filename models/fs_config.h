/*
 * fs_config: the validated configuration of one run, as the scenario
 * language (scenarios/) builds it and the models consume it.
 *
 * Every field here is declared once, with its YAML path, type, unit, bounds,
 * default and doc, in the key table of scenarios/fs_keys.c; docs/scenario.md
 * is generated from that table.  Times are fs_time_t microseconds, rates per
 * second.  Strings and arrays are owned by the config (fs_config_release).
 */
#ifndef FS_CONFIG_H
#define FS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_time.h"
#include "../traces/fs_native.h"
#include "../traces/fs_synth.h"

typedef struct fs_pool_cfg {
    char *name;             /* unique pool name */
    char *gpu;              /* GPU model (catalog name) */
    uint32_t nodes;         /* nodes in the pool (>= 1) */
    uint32_t gpus_per_node; /* GPUs per node (1..1024) */
} fs_pool_cfg_t;

typedef struct fs_cluster_cfg {
    fs_pool_cfg_t *pools;   /* owned, n_pools >= 1 */
    size_t n_pools;
} fs_cluster_cfg_t;

enum fs_workload_kind { FS_WORKLOAD_SYNTHETIC = 0, FS_WORKLOAD_TRACE = 1 };
enum fs_arrival_process { FS_ARRIVAL_POISSON = 0 };

/* How a distribution block was written in the scenario, so that the dump
 * writes back what was given (fs_dist_prepare derives the parameters that
 * were not): bit i of `given` = parameter row i of the distribution block
 * table (scenarios/fs_keys.c) was given; path = the empirical file
 * (resolved), column = its CSV column (NULL: one number per line).  Owned. */
typedef struct fs_dist_cfg {
    unsigned given;
    char *path;
    char *column;
} fs_dist_cfg_t;

typedef struct fs_trace_cfg {
    char *path;             /* trace file (relative paths resolved against the scenario file) */
    char *format;           /* "native" (more formats: traces/) */
    fs_trace_opts_t opts;   /* lenient, time_scale */
} fs_trace_cfg_t;

typedef struct fs_workload_cfg {
    int kind;               /* enum fs_workload_kind */
    fs_synth_cfg_t synth;   /* when kind == SYNTHETIC (its horizon is the run's) */
    int arrival_process;    /* enum fs_arrival_process (synthetic arrivals) */
    fs_dist_cfg_t duration_cfg; /* how synth.duration was written */
    fs_trace_cfg_t trace;   /* when kind == TRACE */
} fs_workload_cfg_t;

enum fs_queue_kind { FS_QUEUE_FIFO = 0 };
enum fs_fifo_mode { FS_FIFO_BEST_EFFORT = 0, FS_FIFO_STRICT = 1 };
enum fs_placement_kind { FS_PLACE_PACK = 0, FS_PLACE_FIRST_FIT = 1 };

typedef struct fs_sched_cfg {
    int queue;              /* enum fs_queue_kind */
    int mode;               /* enum fs_fifo_mode */
    int placement;          /* enum fs_placement_kind */
} fs_sched_cfg_t;

typedef struct fs_output_cfg {
    fs_time_t timeline_interval; /* sampling period of /timeline, us (0 = off) */
    int jobs;               /* write /jobs (bool) */
} fs_output_cfg_t;

enum fs_run_until { FS_UNTIL_DRAIN = 0, FS_UNTIL_HORIZON = 1 };

typedef struct fs_config {
    char *name;             /* scenario name */
    uint64_t seed;          /* master seed */
    uint64_t replication;   /* replication index (sweeps); 0 for a single run */
    fs_time_t horizon;      /* arrivals are generated in [0, horizon), us */
    int until;              /* enum fs_run_until: drain the queue, or stop at horizon */
    fs_time_t warmup;       /* jobs submitted before this are left out of statistics */
    fs_cluster_cfg_t cluster;
    fs_workload_cfg_t workload;
    fs_sched_cfg_t scheduler;
    fs_output_cfg_t output;
    char *source_path;      /* file the scenario came from ("<builtin>" for the default) */
    char *source_text;      /* the YAML text as given */
} fs_config_t;

/* Defaults for every key (the key table's defaults).  c need not be
 * initialised.  Should allocating a string default fail, that field stays
 * NULL (the scenario loader checks and reports FS_ENOMEM). */
void fs_config_init(fs_config_t *c);
/* Frees everything; c is left released-but-valid (releasing it again is a
 * no-op). */
void fs_config_release(fs_config_t *c);

#endif
