/*
 * fs_fleet: the machine lists of public traces, read as they are written.
 *
 * Reads the machine list of a public trace and groups its machines into
 * groups of identical nodes, keyed by (GPU model as the list writes it, GPUs
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
 * Machines without GPUs are left out and counted.  The reader knows no GPU
 * catalog and builds no config: models/fs_fleetcfg.h turns the groups into
 * a scenario's pools (names, catalog GPU names).
 *
 * Ownership: the groups array, its model strings and node lists are
 * allocated with fs_alloc and owned by the caller (fs_fleet_groups_free).
 */
#ifndef FS_FLEET_H
#define FS_FLEET_H

#include <stddef.h>
#include <stdint.h>

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

/* A group of identical GPU machines of a list, in order of first appearance. */
typedef struct fs_fleet_group {
    char *model;            /* GPU model as the list writes it (philly, tiresias: see above) */
    uint32_t gpn;           /* GPUs per node */
    uint32_t cpu_milli;     /* per node; 0: the list records none */
    uint32_t mem_mib;       /* per node; 0: the list records none */
    uint64_t nodes;
    uint32_t *rows;         /* each node's index among the list's GPU machines (nodes of them) */
    size_t cap_rows;        /* room in rows (the reader's) */
} fs_fleet_group_t;

/* Reads `path` (plain or gzip) in `format`: *groups / *n get its groups of
 * GPU machines (at least one).  gpu: the model name for lists that record
 * none (NULL: see above).  Errors: FS_EIO (cannot open), FS_EINVAL
 * "FILE:LINE: field NAME: expected ...", FS_ENOMEM; on error *groups is
 * NULL and *n 0.  stats may be NULL. */
int fs_fleet_read(int format, const char *path, const char *gpu, fs_fleet_group_t **groups,
                  size_t *n, fs_fleet_stats_t *stats, fs_error_t *err);
void fs_fleet_groups_free(fs_fleet_group_t *groups, size_t n);

#endif
