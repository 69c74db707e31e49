/*
 * fs_purchase: the purchase timeline (cost.purchases, cost.pools[].online
 * and .retire; docs/cost.md).  Nodes not yet delivered are out of service:
 * the module holds them down (fs_model_node_down, FS_DOWN_DRAIN) from the
 * start and releases its hold at delivery; at retirement it holds them
 * down again (drain: jobs running there finish, none start).  The usage's
 * owned GPUs (models/fs_usage.h) follow delivery and retirement, so capex,
 * colocation, operations and idle power count from delivery to
 * retirement only.
 *
 * Holds are counted per node, so a delivered node that fails (helper A's
 * failure model, burn-in / infant mortality included) is down for either
 * reason independently; a failure process that starts at time 0 also
 * "fails" undelivered nodes, which stay down until both holds are gone.
 *
 * Owned by the model once attached (a module).
 */
#ifndef FS_PURCHASE_H
#define FS_PURCHASE_H

#include "fs_model.h"
#include "fs_usage.h"

/* Registers the module when some pool has a date; nothing otherwise.  The
 * usage it updates is the model's (fs_model_usage).  Bad batches (more
 * nodes than the pool, retire not after delivery): FS_EINVAL. */
int fs_purchase_attach(fs_model_t *m, fs_error_t *err);

/* Those rules on the configuration alone (the scenario loader, so that
 * validate refuses what run would; attach applies them too): 0 or
 * FS_EINVAL with *key (keylen bytes) the dotted key to blame. */
int fs_purchase_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err);

/* A batch's delivery date: the start of its quarter (quarter Q at (Q - 1)
 * x FS_COST_QUARTER_US) or its `at`. */
fs_time_t fs_purchase_at(const fs_purchase_cfg_t *b);

#endif
