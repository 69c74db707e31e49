/*
 * fs_fleet: clusters built from real machine lists.
 *
 * Reads the machine list of a public trace and groups its machines into
 * pools of identical nodes, keyed by (GPU model as the list writes it, GPUs
 * per node, CPU and memory per node where the list records them: openb
 * cpu_milli and memory_mib, PAI cap_cpu cores and cap_mem GB), in order of
 * first appearance:
 *   openb     Alibaba openb 2023 node list: header sn,cpu_milli,memory_mib,gpu,model
 *   pai       Alibaba PAI 2020 machine spec, headerless
 *             machine,gpu_type,cap_cpu,cap_mem,cap_gpu (a header line is skipped)
 *   philly    Philly machine lists: revised_machine_list.csv (",machineId,number of
 *             GPUs") or cluster_machine_list ("machineId, number of GPUs, single GPU
 *             mem"); no model is written: the model is `gpu` if given, else
 *             "GPU-<mem>" (e.g. GPU-24GB) when the memory column is there, else
 *             "unknown"
 *   tiresias  Tiresias cluster spec: num_switch,num_node_p_switch,num_gpu_p_node,...
 *             (one row = num_switch x num_node_p_switch nodes); model `gpu` or
 *             "unknown"
 * Machines without GPUs are left out and counted.  A pool is named
 * "<model>x<gpus per node>" (e.g. "G2x8", "V100M32x4"), or, when one (model,
 * GPUs per node) has nodes of several CPU and memory sizes,
 * "<model>x<gpus>-<cores>c<GiB>g" for each (e.g. "P100x2-16c120g"); its `gpu` is the
 * catalog's name when the model maps to one (fs_fleet_catalog_name: V100M32
 * and V100M16 -> V100, P100, T4, A10 ...) and the list's own name otherwise
 * (G1/G2/G3, MISC: unknown to the catalog, neutral speed 1.0).
 *
 * Ownership: the pools array and its strings are allocated with fs_alloc and
 * owned by the caller (free each name and gpu, then the array; a scenario
 * config does it in fs_config_release).
 */
#ifndef FS_FLEET_H
#define FS_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "../models/fs_config.h"
#include "../sim/fs_error.h"

enum fs_fleet_format {
    FS_FLEET_OPENB = 0, FS_FLEET_PAI = 1, FS_FLEET_PHILLY = 2, FS_FLEET_TIRESIAS = 3
};

/* Format names indexed by enum fs_fleet_format, NULL-terminated. */
extern const char *const fs_fleet_format_names[];

typedef struct fs_fleet_stats {
    uint64_t machines;      /* machine rows read (tiresias: nodes described) */
    uint64_t gpu_machines;  /* machines with at least one GPU (in the pools) */
    uint64_t no_gpu;        /* machines without GPUs, left out */
    uint64_t gpus;          /* GPUs in all pools */
} fs_fleet_stats_t;

/* Reads `path` (plain or gzip) in `format` and appends its pools to
 * *pools / *n (which may already hold pools: new names must not clash).
 * gpu: the model name for lists that record none (NULL: see above).
 * Errors: FS_EIO (cannot open), FS_EINVAL "FILE:LINE: field NAME: expected
 * ...", FS_ENOMEM; on error *pools / *n are unchanged.  stats may be NULL. */
int fs_fleet_load(int format, const char *path, const char *gpu, fs_pool_cfg_t **pools,
                  size_t *n, fs_fleet_stats_t *stats, fs_error_t *err);

/* The catalog name of a GPU model as a trace writes it ("V100M32" ->
 * "V100", "t4" -> "T4"), or NULL when the catalog has no such model. */
const char *fs_fleet_catalog_name(const char *model);

/* Does a job's GPU-type constraint `type` (one model or several separated
 * by '|', as openb's gpu_spec) allow a pool?  A name allows the pool when
 * it equals (ignoring case) the pool's gpu, its name, or its name without a
 * machine-list suffix "x<digits>" (so "V100M32" allows "V100M32x8"). */
int fs_fleet_type_allows(const char *type, const char *pool_name, const char *pool_gpu);

#endif
