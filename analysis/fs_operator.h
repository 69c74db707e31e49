/*
 * fs_operator: the operator's serving figures of /summary (docs/results.md,
 * analysis/fs_summary.def rows from `runner`): the service replicas and
 * GPUs at the busiest output.service_bucket (the peak hour at the default
 * 1 h), and the daily curve's peak and swing of the GPUs serving holds (what
 * training does not have at the daily peak).  Built from the /service_buckets
 * rows as the services model hands them over (every service's buckets share
 * their boundaries: multiples of the bucket from time 0).
 *
 * Ownership: the accumulator owns its arrays; not thread-safe.
 */
#ifndef FS_OPERATOR_H
#define FS_OPERATOR_H

#include "../models/fs_result.h"
#include "fs_stats.h"

typedef struct fs_operator fs_operator_t;

/* bucket_s: output.service_bucket, s (> 0); warmup_s: buckets starting
 * before it are left out.  0 or FS_ENOMEM. */
int fs_operator_create(double bucket_s, double warmup_s, fs_operator_t **out);
void fs_operator_destroy(fs_operator_t *o);

/* One /service_buckets row (any service, any order).  0 or FS_ENOMEM. */
int fs_operator_add_bucket(fs_operator_t *o, const fs_svc_bucket_row_t *row);

/* Sets the summary's serving_replicas_peak, serving_gpus_peak,
 * serving_gpus_daily_peak and serving_gpus_daily_swing (NaN when no full
 * bucket after the warm-up; the daily two also when the bucket does not
 * divide a day).  o may be NULL (no services): all NaN. */
void fs_operator_finish(const fs_operator_t *o, fs_summary_t *s);

#endif
