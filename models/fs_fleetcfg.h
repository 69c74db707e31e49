/*
 * fs_fleetcfg: a scenario's pools from a real machine list (cluster.from).
 *
 * traces/fs_fleet.h reads the list into groups of identical machines as the
 * list writes them; this side maps them to the model: one pool per group,
 * named "<model>x<gpus per node>" (e.g. "G2x8", "V100M32x4"), or, when one
 * (model, GPUs per node) has nodes of several CPU and memory sizes,
 * "<model>x<gpus>-<cores>c<GiB>g" for each (e.g. "P100x2-16c120g"); its
 * `gpu` is the catalog's name when the model maps to one
 * (fs_fleetcfg_catalog_name: V100M32 and V100M16 -> V100, P100, T4, A10
 * ...) and the list's own name otherwise (G1/G2/G3, MISC: unknown to the
 * catalog, neutral speed 1.0).  The same naming rule decides which pools a
 * job's GPU-type constraint allows (fs_fleetcfg_type_allows).
 *
 * Ownership: the pools array and its strings are allocated with fs_alloc and
 * owned by the caller (free each name and gpu, then the array; a scenario
 * config does it in fs_config_release).
 */
#ifndef FS_FLEETCFG_H
#define FS_FLEETCFG_H

#include <stddef.h>

#include "../sim/fs_error.h"
#include "../traces/fs_fleet.h"
#include "fs_config.h"

/* Reads `path` (plain or gzip) in `format` (enum fs_fleet_format) and
 * appends its pools to *pools / *n (which may already hold pools: new names
 * must not clash).  gpu: the model name for lists that record none (NULL:
 * traces/fs_fleet.h).  Errors: FS_EIO (cannot open), FS_EINVAL "FILE:LINE:
 * field NAME: expected ...", FS_ENOMEM; on error *pools / *n are
 * unchanged.  stats may be NULL. */
int fs_fleetcfg_load(int format, const char *path, const char *gpu, fs_pool_cfg_t **pools,
                     size_t *n, fs_fleet_stats_t *stats, fs_error_t *err);

/* The catalog name of a GPU model as a trace writes it ("V100M32" ->
 * "V100", "t4" -> "T4"), or NULL when the catalog has no such model. */
const char *fs_fleetcfg_catalog_name(const char *model);

/* Does a job's GPU-type constraint `type` (one model or several separated
 * by '|', as openb's gpu_spec) allow a pool?  A name allows the pool when
 * it equals (ignoring case) the pool's gpu, its name, or its name without a
 * machine-list suffix "x<digits>" (so "V100M32" allows "V100M32x8"). */
int fs_fleetcfg_type_allows(const char *type, const char *pool_name, const char *pool_gpu);

#endif
