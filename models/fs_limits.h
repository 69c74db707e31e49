/*
 * fs_limits: per-user limits on the jobs a user has in the scheduler's hands
 * (scheduler.limits; docs/policies.md "Per-user limits"), as Slurm's QOS and
 * association limits MaxJobsPerUser and MaxTRESPerUser=gres/gpu, and Maui's
 * MAXJOB and MAXPROC, hold a user's jobs back while processors are free.
 *
 * A job of a user (its tenant; a job with no tenant is never limited) is
 * handed to the policy only while the user's active jobs (handed over and
 * not yet ended: queued in the policy, running or recovering) stay within
 * max_jobs_per_user and their GPUs within max_gpus_per_user; otherwise it is
 * held: it is queued for the model (its wait counts, /timeline counts it
 * queued) but no policy sees it, so it gets no reservation and no backfill.
 * When one of the user's active jobs ends, the user's held jobs are handed
 * over in submission order while the limits allow (the first that does not
 * fit stops the release: no job of a user overtakes an earlier one of the
 * same user).  A job that alone asks more GPUs than max_gpus_per_user is
 * handed over once the user has nothing active (it ran, so the site let it).
 *
 * Counting a handed-over job that still waits keeps the bound exact inside a
 * scheduling pass (a pass can never start more than the limit), at the price
 * of one difference from Slurm: there a pending job does not count, so a
 * user's later small job may backfill while the earlier ones wait; here only
 * the first (limit - running) waiting jobs are eligible, as with Maui's
 * MAXIJOB set to the same number.  Service replicas are never limited.
 */
#ifndef FS_LIMITS_H
#define FS_LIMITS_H

#include "fs_model.h"

/* The module table's row (fs_modules.c): attaches when scheduler.limits
 * sets a limit.  0 or FS_ENOMEM with err set. */
int fs_limits_attach(fs_model_t *m, fs_error_t *err);

#endif
