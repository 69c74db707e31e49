/*
 * fs_burst: cloud burst rules (cost.pools[].burst, docs/cost.md).  A job may
 * start in a burst pool only after it has waited burst_after since its
 * submission, and only while the pool's busy GPUs plus the job's stay
 * within burst_cap.  The model asks before choosing pools (fs_model_fits,
 * fs_model_start); a module event at submit + burst_after makes sure a
 * scheduling pass runs when a job becomes eligible.
 *
 * Owned by the model once attached (a module: destroyed with the model).
 * Wait is measured from submission (a restarted job is eligible at once).
 */
#ifndef FS_BURST_H
#define FS_BURST_H

#include <stddef.h>
#include <stdint.h>

#include "fs_model.h"

typedef struct fs_burst fs_burst_t;

/* Registers the burst module when some pool is a burst pool; *out NULL
 * (and nothing registered) otherwise.  Unknown pool names: FS_EINVAL. */
int fs_burst_attach(fs_model_t *m, fs_burst_t **out, fs_error_t *err);
/* May job start in pool now (as far as burst rules go)? */
int fs_burst_allows(const fs_burst_t *b, const fs_cluster_t *c, uint32_t pool,
                    const fs_job_t *job, fs_time_t now);
/* Narrows a pool list (*pools NULL: all pools) to the pools the job may
 * use now; *pools may then point into b's scratch (valid until the next
 * call).  Returns 0 when none is left. */
int fs_burst_pools(fs_burst_t *b, const fs_cluster_t *c, const fs_job_t *job, fs_time_t now,
                   const uint32_t **pools, size_t *n);
/* A job was admitted: timers at its eligibility times.  0 or FS_ENOMEM. */
int fs_burst_admitted(fs_burst_t *b, fs_model_t *m, const fs_job_t *job);

#endif
