/*
 * fs_policy_ops: the interface of a scheduling policy, as the model calls it.
 *
 * The model runs the policy its creator passes in (fs_model_create); which
 * policy a configuration selects is fs_policy.h's business (fs_policy_select),
 * one floor up in models/: the model knows no policy by name, so that
 * fs_model.c and fs_policy.c do not depend on each other.  A policy owns the
 * queue of waiting jobs (slots of the model): the model calls enqueue() when a
 * job is admitted and pass() once at the end of every instant where something
 * changed; pass() starts jobs with fs_model_start.  State lives behind the
 * void pointer, never in globals.
 */
#ifndef FS_POLICY_OPS_H
#define FS_POLICY_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_config.h"

/* The model (fs_model.h declares the same type). */
typedef struct fs_model fs_model_t;

/* What a policy did over a run, for /summary (docs/results.md); zero where
 * the policy has no such action. */
typedef struct fs_policy_stats {
    uint64_t backfilled;    /* jobs started by backfill past a job that could not start */
    uint64_t admissions;    /* Kueue admissions (a requeued job counts again) */
    uint64_t admissions_borrowing; /* of which borrowed quota from the cohort */
    uint64_t reclaims;      /* preemptions that took back quota lent to another queue
                               (Kueue reclaim within the cohort, Volcano reclaim) */
} fs_policy_stats_t;

typedef struct fs_policy_ops {
    const char *name;           /* the scheduler.queue value */
    int (*create)(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err);
    void (*destroy)(void *state);
    /* A job was admitted (its slot is FS_JOBRT_QUEUED).  0 or FS_ENOMEM. */
    int (*enqueue)(void *state, fs_model_t *m, uint32_t slot);
    /* Start what the policy wants to start now.  0 or an error. */
    int (*pass)(void *state, fs_model_t *m);
    /* Jobs waiting. */
    size_t (*queued)(const void *state);
    /* Optional (NULL: not wanted).  A running job finished: called before
     * its slot is freed. */
    void (*job_end)(void *state, fs_model_t *m, uint32_t slot);
    /* Optional.  A timer the policy set with fs_model_timer fired (data as
     * given); a pass follows at the end of the instant if jobs wait. */
    int (*timer)(void *state, fs_model_t *m, uint64_t data);
    /* Optional (NULL: job_end is called instead).  A running job was
     * interrupted by the model (a node it ran on failed): it is no longer
     * running (its GPUs on healthy nodes are freed when the failure is
     * noticed, recovery.detection later).  The policy forgets it as
     * running; the model hands it back with enqueue() when it is requeued
     * (after the recovery delays), or never (retries exhausted: the job
     * failed for good). */
    void (*job_interrupted)(void *state, fs_model_t *m, uint32_t slot);
    /* Optional (NULL: no rule beyond the key table's).  Every rule create()
     * enforces that depends on the configuration alone, checked without a
     * model: `fleetsim validate` and the scenario loader call it (through
     * fs_policy_check) so that a file that validates also runs, and create()
     * calls it too, so that the rules live in one place.  Returns 0, or
     * FS_EINVAL / FS_ENOMEM with err set and, for FS_EINVAL, *key (room for
     * keylen bytes; key may be NULL) the dotted path of the key to blame. */
    int (*check)(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err);
    /* Optional.  Why a queued job that fits the GPUs in service is not
     * started (the model asks when a drain can never end): 1 with buf (n
     * bytes) written, or 0 when the policy has nothing to say. */
    int (*why_waiting)(const void *state, const fs_model_t *m, uint32_t slot, char *buf, size_t n);
    /* Optional (NULL: every job the cluster can hold may be admitted).
     * Admissibility from a configuration alone, for `fleetsim validate`:
     * probe_create builds the policy's view of cfg (queues, quotas, tenant
     * mappings; 0 or FS_EINVAL / FS_ENOMEM with err set); probe says
     * whether job (every resource it asks that the policy judges: its
     * milli-GPUs, a pod's CPU and memory, its pods) of tenant `tenant` (its
     * name; NULL: none) could ever be admitted with nothing else running:
     * 1, or 0 with why (n bytes) written.  why_waiting gives the same reason
     * for a job of a run. */
    int (*probe_create)(const fs_config_t *cfg, void **probe, fs_error_t *err);
    int (*probe)(const void *probe, const char *tenant, const struct fs_job *job, char *why,
                 size_t n);
    void (*probe_destroy)(void *probe);
    /* Optional (NULL: all zero).  The counts of fs_policy_stats_t so far. */
    void (*stats)(const void *state, fs_policy_stats_t *out);
    /* Optional (NULL: a queued job cannot be taken back).  A queued job
     * leaves the queue without running (a service no longer wants the
     * replica: fs_model_retire): the policy forgets it, as if it had never
     * been enqueued, before the model frees its slot.  0, or FS_EINVAL when
     * the policy does not hold it. */
    int (*withdraw)(void *state, fs_model_t *m, uint32_t slot);
    /* Optional (NULL: every queued job has its pods).  Kubernetes' pending
     * pods, as the cluster autoscaler sees them: a policy that admits
     * workloads before their pods exist (Kueue: a workload not admitted is
     * a suspended Job, with no pods) sets mark[slot] (fs_model_slots bytes,
     * zeroed by the caller) for the queued jobs whose pods would exist now:
     * those it would admit were there nodes for them.  0 or FS_ENOMEM. */
    int (*with_pods)(void *state, fs_model_t *m, uint8_t *mark);
} fs_policy_ops_t;

/* workload.trace.cancelled: withdraw needs policy p to take a queued job
 * back (its withdraw operation; a plugin has none): 0 or FS_EINVAL.  Asked
 * at load by fs_policy_check (so validate refuses what run would) and by
 * fs_model_create. */
static inline int fs_policy_withdraw_check(const fs_config_t *cfg, const fs_policy_ops_t *p,
                                           fs_error_t *err)
{
    if (cfg->workload.trace.opts.cancelled == FS_CANCELLED_WITHDRAW && !p->withdraw)
        return fs_error_set(err, FS_EINVAL, "workload.trace.cancelled: withdraw needs a policy that "
                            "can take a queued job back (scheduler.queue fifo, priority, sjf, "
                            "srtf, las, slurm, wfp, kueue or volcano); '%s' cannot", p->name);
    return 0;
}

#endif
