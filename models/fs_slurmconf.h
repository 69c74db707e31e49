/*
 * fs_slurmconf: a site's own slurm.conf, read for the settings the
 * scheduler's Slurm mode models (scheduler.slurm.conf: FILE; docs/policies.md
 * "Slurm multifactor"):
 *
 *   PriorityType=priority/multifactor      scheduler.queue: slurm
 *   PriorityWeightAge / Fairshare / JobSize / Partition / QOS
 *                                          scheduler.slurm.weight_*
 *   PriorityDecayHalfLife, PriorityMaxAge, PriorityCalcPeriod
 *                                          scheduler.slurm.decay_half_life, max_age, calc_period
 *   PriorityFavorSmall=YES|NO              scheduler.slurm.favor_small
 *   SchedulerType=sched/backfill           scheduler.backfill: conservative, bf.mode: slurm
 *   SchedulerParameters=bf_max_job_test=N,bf_interval=S,bf_resolution=S,bf_window=MIN
 *                                          scheduler.bf.max_job_test, interval, resolution, window
 *
 * Times as slurm.conf writes them (traces/fs_sacct.h fs_slurm_time: "7-0",
 * "14-00:00:00", "5" minutes); bf_interval and bf_resolution in seconds,
 * bf_window in minutes, as Slurm's man page says.  Lines are Key=Value
 * (keys ignoring case, '#' to the end of the line a comment, a trailing '\'
 * joins the next line); only a line's first key is a global setting (a
 * NodeName= or PartitionName= line is skipped whole).  Keys fleetsim does not
 * model are ignored (fs_slurmconf_t.n_ignored counts them); the other
 * SchedulerParameters options likewise.
 *
 * A key the scenario gives itself (in the file or by --set) wins over the
 * file's value: fs_slurmconf_apply asks `given` for each.
 */
#ifndef FS_SLURMCONF_H
#define FS_SLURMCONF_H

#include <stddef.h>

#include "fs_config.h"

/* Reads `path` and sets in cfg every modelled setting whose scenario key
 * (the dotted path above) given(ud, key) says the scenario does not give.
 * Returns 0; FS_EIO (cannot read, the path named); FS_EINVAL with
 * "FILE:LINE:COL: KEY: expected ... (got '...')"; FS_ENOMEM.  *n_set counts
 * the settings applied (may be NULL). */
int fs_slurmconf_apply(const char *path, fs_config_t *cfg,
                       int (*given)(void *ud, const char *key), void *ud, size_t *n_set,
                       fs_error_t *err);

#endif
