/*
 * fs_autoscale: the Kubernetes Cluster Autoscaler over node groups
 * (cluster.autoscale; docs/models.md "Cluster autoscaling").
 *
 * A node group is a pool.  Its nodes beyond those provisioned are out of
 * the fleet: the module holds them down (fs_model_node_down, drain) and
 * takes their GPUs out of the owned GPUs of the usage (so capex, cloud
 * hours and idle power count only provisioned nodes, as the purchase
 * timeline does).  Every scan_interval (a module event) it
 *   - scales up: the queued jobs that cannot start now in any of their
 *     pools (Kubernetes' unschedulable pods; a job blocked only by the
 *     policy's order is not one) are packed first-fit decreasing onto the
 *     free GPUs of the group's nodes still provisioning, then onto new
 *     nodes (CA's binpacking estimator); the group grows by the new nodes
 *     (lowest ids first) up to max.  A job counts for the first group among
 *     its pools.  A new node is owned from the decision and its GPUs are
 *     allocatable provision + gpu_ready later;
 *   - scales down: a provisioned node above min with no GPU held is
 *     "unneeded" from the first scan that sees it empty; after
 *     scale_down_unneeded (and no scale-up within
 *     scale_down_delay_after_add) it leaves the fleet (highest ids first).
 * Scans are timers while some group can still grow; when every group is at
 * max they only remove capacity, and are scheduled as such (a drain whose
 * queued jobs can never start still ends).
 *
 * Owned by the model once attached (a module).
 */
#ifndef FS_AUTOSCALE_H
#define FS_AUTOSCALE_H

#include "fs_model.h"
#include "fs_usage.h"

/* Registers the module when cluster.autoscale has node groups; nothing
 * otherwise.  The usage it updates is the model's (fs_model_usage).  Bad groups (no such pool,
 * a pool twice, min > max, a pool with a purchase timeline): FS_EINVAL
 * naming the key. */
int fs_autoscale_attach(fs_model_t *m, fs_error_t *err);

/* The rules of cluster.autoscale that need no model (the scenario loader,
 * so that validate refuses what run would; attach applies them too): each
 * group's pool exists and is no other group's, min <= max <= the pool's
 * nodes, no purchase timeline on the pool, at most 64 groups for
 * Karpenter.  0 or FS_EINVAL with *key (keylen bytes) the dotted key to
 * blame. */
int fs_autoscale_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err);

#endif
