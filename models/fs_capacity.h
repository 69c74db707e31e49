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
#include "../traces/fs_outages.h"

int fs_capacity_attach(fs_model_t *m, fs_error_t *err);

/* The outage file of cfg (if any) read and checked against cluster cl:
 * nodes and pools that exist, no overlap.  0 or FS_EINVAL (key set to
 * "cluster.outages"), FS_EIO, FS_ENOMEM. */
int fs_capacity_cfg_check(const fs_config_t *cfg, const fs_cluster_t *cl, char *key,
                          size_t keylen, fs_error_t *err);

/* ---- the outages known ahead, for backfill (issue #42) ----------------------
 * EASY and conservative backfill plan against the outages of cluster.outages
 * (models/fs_sched_easy.c, fs_sched_cons.c; docs/traces.md "Backfill plans
 * around outages"): each outage's GPUs leave the free-GPU profile at its
 * start and return at its end, and a job starting at now with requested end
 * e is placed only on nodes whose next outage begins at e or later: the up
 * nodes of outages beginning in (now, e) are held out of service while it is
 * placed (fs_capplan_hold), then given back (fs_capplan_release).  Random
 * failures stay unknown to the plan.
 *
 * Owns: the rows (sorted by end), the held-node list. */
typedef struct fs_capplan {
    fs_outages_t o;         /* rows sorted by end, nodes [lo, hi) */
    uint64_t *gpus;         /* gpus[i]: row i's GPUs */
    size_t live;            /* rows before it end by the last `now` asked (a cursor) */
    uint32_t *held;         /* nodes held out by fs_capplan_hold */
    size_t n_held, cap_held;
    /* Starts that failed under a hold at time fnow on the cluster as of
     * generation fgen (after the release), as (end, GPUs): on one pool of
     * whole GPUs a job that ends no earlier and needs no fewer GPUs fails
     * too (more nodes held, more GPUs wanted) and is not tried (the
     * scheduler's fast path, fs_sched_cons.c start_planned). */
    fs_time_t fnow;
    uint64_t fgen;
    size_t n_fail;
    struct { fs_time_t e; uint64_t g; } fail[8];
} fs_capplan_t;

/* The plan of cfg's cluster.outages on cluster cl into *out (zeroed when
 * there is none: out->o.n == 0).  0, FS_EINVAL, FS_EIO, FS_ENOMEM. */
int fs_capplan_load(const fs_config_t *cfg, const fs_cluster_t *cl, fs_capplan_t *out,
                    fs_error_t *err);
void fs_capplan_free(fs_capplan_t *c);
/* Is an outage not yet over at now (the plan matters)?  Moves the cursor. */
int fs_capplan_live(fs_capplan_t *c, fs_time_t now);
/* The outages not over at now as takes of a free-GPU profile
 * (fs_prof_take): triples tdg[3i..3i+2] = (t, d, g), g GPUs taken over
 * [t, t + d): a later outage takes its GPUs over its time; one begun by now
 * (its nodes out already) gives them back (g < 0) from its end on.  The
 * caller gives room for 3 * o.n values.  Returns the number of triples. */
size_t fs_capplan_takes(const fs_capplan_t *c, fs_time_t now, fs_time_t *tdg);
/* Holds out of service (a drain) every node in service whose next outage
 * begins in (now, end): a job placed meanwhile avoids them.  0 or an error
 * (FS_ENOMEM). */
int fs_capplan_hold(fs_capplan_t *c, fs_model_t *m, fs_time_t now, fs_time_t end);
/* Gives the held nodes back.  0 or an error. */
int fs_capplan_release(fs_capplan_t *c, fs_model_t *m);

#endif
