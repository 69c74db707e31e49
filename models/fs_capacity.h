/*
 * fs_capacity: capacity over time from an outage file (cluster.outages,
 * traces/fs_outages.h): each row takes its nodes out of service (a drain:
 * running jobs go on, nothing new starts there) from its start to its end.
 * docs/traces.md "Outage files".
 *
 * Owned by the model once attached (a module).
 */
#ifndef FS_CAPACITY_H
#define FS_CAPACITY_H

#include <stddef.h>

#include "../sim/fs_error.h"
#include "fs_cluster.h"
#include "fs_config.h"
#include "fs_model.h"

int fs_capacity_attach(fs_model_t *m, fs_error_t *err);

/* The outage file of cfg (if any) read and checked against cluster cl:
 * nodes and pools that exist, no overlap.  0 or FS_EINVAL (key set to
 * "cluster.outages"), FS_EIO, FS_ENOMEM. */
int fs_capacity_cfg_check(const fs_config_t *cfg, const fs_cluster_t *cl, char *key,
                          size_t keylen, fs_error_t *err);

#endif
