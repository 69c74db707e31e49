/*
 * fs_startup: pod start-up, from bound to running (startup:; docs/models.md
 * "Pod start-up").  When a job is placed, each node it lands on needs the
 * job's image (one per job class): a node whose cache holds it (or is
 * pulling it) waits for that pull at most; any other node starts a pull now.
 * Pulls share bandwidth: each runs at min(node bandwidth, registry
 * bandwidth / pulls in progress, this job's included), fixed when it
 * starts (pulls that start later do not slow it: a first-order model that
 * makes 1,000 nodes pulling one image at once slow, and one node fast).  A
 * node's cache keeps images up to its disk, evicting the least recently
 * used image no pull is writing.  The job then starts its containers and
 * loads its weights: start-up = slowest node's image wait + container +
 * load.  During it the job holds its GPUs and makes no progress (phase
 * STARTING of models/fs_recovery.h, wall time in fs_jobrt_t.w_startup).
 */
#ifndef FS_STARTUP_H
#define FS_STARTUP_H

#include "fs_cluster.h"
#include "fs_config.h"

typedef struct fs_startup fs_startup_t;

/* *out = NULL when cfg->startup models nothing (all zero); else the
 * state for cluster c.  0, FS_EINVAL (a bad image row: key named in err)
 * or FS_ENOMEM. */
int fs_startup_create(const fs_config_t *cfg, const fs_cluster_t *c, fs_startup_t **out,
                      fs_error_t *err);
void fs_startup_destroy(fs_startup_t *s);

/* The start-up (us) of a job of job_class placed at p now (starting the
 * pulls it needs), or -1 when out of memory. */
fs_time_t fs_startup_begin(fs_startup_t *s, const fs_placement_t *p, uint32_t job_class,
                           fs_time_t now);

#endif
