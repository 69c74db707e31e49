/*
 * fs_recovery: the analytic checkpoint/restart model of a job and the
 * recovery rules (retries, backoff, checkpoint intervals, placement speed),
 * as pure functions.  The run model (fs_model.c) owns the jobs and the
 * events; this module only computes.  docs/recovery.md has the math and
 * the sources.
 *
 * An attempt of a job (from one start to its end, preemption or failure)
 * is, in wall time: a restore of R (only after a failure), then cycles of
 * compute tau (work, at the job's rate) and a checkpoint write delta (no
 * progress), the last cycle cut short by the end of the work.  A checkpoint
 * is written after every tau of work, the final one included when the
 * work ends exactly on one (Daly's model: T_s / tau writes).  The state of
 * a running job (fs_jobrun_t: phase, phase_left, remaining, since_ckpt,
 * since_wall) is as of its settled_at; fs_recov_advance moves it forward
 * and fs_recov_finish_wall says when the work is done.  Both are O(1) in
 * the number of checkpoints crossed.
 *
 * Rounding: work w at rate r takes ceil(w / r) us of wall time; wall dt
 * does floor(dt * r) us of work.  fs_recov_advance by exactly
 * fs_recov_finish_wall leaves remaining == 0.
 */
#ifndef FS_RECOVERY_H
#define FS_RECOVERY_H

#include <stdint.h>

#include "fs_cluster.h"
#include "fs_config.h"
#include "fs_jobrt.h"

enum fs_phase { FS_PHASE_COMPUTE = 0, FS_PHASE_RESTORE = 1, FS_PHASE_WRITE = 2,
                FS_PHASE_STARTING = 3 /* pod start-up (models/fs_startup.h), then the
                                         restore of restore_after, then compute */ };

/* Moves a running job's progress forward by dt us of wall time at its rate
 * (j->rate) with checkpoint writes of delta us: remaining, since_ckpt,
 * since_wall, phase, phase_left, and the wall counters w_compute, w_ckpt,
 * w_recovery (restore), w_startup.  Does not touch settled_at. */
void fs_recov_advance(fs_jobrun_t *j, fs_time_t dt, fs_time_t delta);

/* Wall time (us) from the job's settled state until its work is done. */
fs_time_t fs_recov_finish_wall(const fs_jobrun_t *j, fs_time_t delta);

/* Young (1974): tau = sqrt(2 delta M).  Daly (2006): for delta < 2M,
 * tau = sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] - delta,
 * else M.  Seconds in, seconds out. */
double fs_recov_young(double delta, double mttf);
double fs_recov_daly(double delta, double mttf);
/* Daly's expected wall time of a job of T_s compute seconds with
 * checkpoints every tau, writes delta, restart R, exponential failures of
 * mean M: M e^{R/M} (e^{(tau + delta)/M} - 1) T_s / tau. */
double fs_recov_daly_wall(double ts, double tau, double delta, double restart, double mttf);

/* The checkpoint interval (compute seconds) of an attempt of a job on
 * `nodes` nodes whose nodes each fail at mean node_mttf_s (0: unknown):
 * fixed: the interval; young/daly: from M = node_mttf_s / nodes; none, or
 * young/daly with no failure rate: 0 (no checkpoints). */
double fs_recov_interval_s(const fs_recovery_cfg_t *c, double node_mttf_s, uint32_t nodes);

/* The mean time between failures of one node of pool `pool` (name) with
 * gpn GPUs, in seconds: recovery.node_mttf, or else the failures block's
 * processes that hit single nodes (gpu: gpn of them, node, link; presets
 * resolved: fs_failure_node_mttf_s); 0 when nothing fails, -1 out of
 * memory (an error for the caller, never "nothing fails").  Not cheap
 * (it resolves the failures block): callers cache it per pool. */
double fs_recov_node_mttf_s(const fs_config_t *cfg, const char *pool, uint32_t gpn);

/* After a job's `failures`-th failure (1, 2, ...): 1 and *delay (us, the
 * requeue time plus the backoff) if it is retried, 0 if it fails for good.
 * requeue: retried up to limit times (0: always); backoff (Kubernetes Job):
 * up to limit times (0: 6), delay base * 2^(failures - 1) capped at max;
 * none: never. */
int fs_recov_retry(const fs_recovery_cfg_t *c, uint32_t failures, fs_time_t *delay);

/* The speed factor of a placement that spans *sp (fs_cluster_span) for a
 * job of class job_class: from the cluster.span_speed row of that class,
 * the smallest factor among the levels it spans (more than one unit there:
 * a job across two leaves also spans nodes and racks; with factors that
 * fall level by level, the highest level spanned decides).  Without a
 * topology (has_topo 0) only the nodes level counts.  1.0 with no row. */
double fs_recov_span_factor(const fs_cluster_cfg_t *c, uint32_t job_class, const fs_span_t *sp,
                            int has_topo);
/* Does any cluster.span_speed row name this class? */
int fs_recov_span_row(const fs_cluster_cfg_t *c, uint32_t job_class);

#endif
