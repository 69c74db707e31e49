/*
 * fs_burst: cloud burst rules (cost.pools[].burst, docs/cost.md).  A job may
 * start in a burst pool only after it has waited burst_after since its
 * submission, and only while the pool's busy GPUs plus the job's stay
 * within burst_cap.  The model asks its gate ops before choosing pools
 * (fs_model_fits, fs_model_start); a module event at submit + burst_after makes sure a
 * scheduling pass runs when a job becomes eligible.
 *
 * Owned by the model once attached (a module: destroyed with the model).
 * Wait is measured from submission (a restarted job is eligible at once).
 */
#ifndef FS_BURST_H
#define FS_BURST_H

#include "fs_model.h"

/* Registers the burst module, the model's gate (fs_gate_ops_t: fit checks
 * and starts ask it), when some pool is a burst pool; nothing otherwise.
 * Unknown pool names: FS_EINVAL. */
int fs_burst_attach(fs_model_t *m, fs_error_t *err);

#endif
