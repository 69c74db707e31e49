/*
 * fs_order: queue orders for the composable scheduler (fs_sched.c).
 *
 * An order says which job goes first; it knows nothing of backfill,
 * preemption mechanics or placement (fs_sched.c composes those).  It is a
 * function table plus a void * state, one file per order and one row in
 * fs_order.c's table (indexed by enum fs_queue_kind).
 *
 * Keys: key() returns (k1, k2); smaller first.  The scheduler breaks ties
 * by admission order (non-preemptive passes) or by the previous pass's
 * order (preemptive passes: a stable sort, as the Tiresias simulator).
 * A queued job's key is taken when it is queued and again whenever
 * update() reports that keys changed (e.g. Slurm's PriorityCalcPeriod, a
 * 2D-LAS promotion); a running job's key is taken at each preemptive pass.
 *
 * Time-driven orders say when their keys will change next (next_change);
 * the scheduler sets a timer for it, so that recomputation is an event, not
 * a per-pass cost.  All hooks but key are optional (NULL).
 *
 * Admission components (Kueue quotas, Volcano queues: not in this module)
 * plug in beside the order in fs_sched.c, as a may_start test on the
 * candidate the order proposes (docs/policies.md).
 */
#ifndef FS_ORDER_H
#define FS_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_model.h"

typedef struct fs_okey {
    double k1, k2;
} fs_okey_t;

typedef struct fs_order_ops {
    const char *name;       /* the scheduler.queue value */
    int preemptive;         /* preemption: auto means "order" for this order */
    int k2;                 /* key() may give a nonzero k2 (else the scheduler keeps no
                               k2 per job, and a nonzero one is an internal error) */
    int (*create)(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err);
    void (*destroy)(void *state);
    fs_okey_t (*key)(void *state, fs_model_t *m, uint32_t slot);
    /* A job was admitted (first time only).  0 or FS_ENOMEM. */
    int (*admit)(void *state, fs_model_t *m, uint32_t slot);
    void (*started)(void *state, fs_model_t *m, uint32_t slot);
    /* A running job stopped: finished (1) or preempted (0). */
    void (*stopped)(void *state, fs_model_t *m, uint32_t slot, int finished);
    /* Settle time-dependent state up to now.  Returns 1 if the keys of
     * queued jobs changed, 0 if not. */
    int (*update)(void *state, fs_model_t *m);
    /* After a preemptive pass (2D-LAS keeps running jobs ahead in a queue).
     * 0 or FS_ENOMEM. */
    int (*after_pass)(void *state, fs_model_t *m);
    /* When keys change next by time alone; FS_TIME_NEVER if not. */
    fs_time_t (*next_change)(void *state, fs_model_t *m);
    /* Optional pair: bands (the scheduler's fast path for orders whose keys
     * all change at once, fs_sched.c "bands").  band() names a queued job's
     * band (a small dense index, fixed while it is queued).  The promise:
     * among the jobs of one band and of one shape whose keys are taken at
     * the same update(), keys never decrease with admission sequence (so
     * the band is in order by sequence alone and an update need not touch
     * it).  update_key() is the key a job queued at the last update() that
     * returned 1 got there (computed on demand, as of that update). */
    uint32_t (*band)(void *state, fs_model_t *m, uint32_t slot);
    fs_okey_t (*update_key)(void *state, fs_model_t *m, uint32_t slot);
    /* Optional: the rules of create() on the configuration alone (the
     * policy check hook, fs_policy.h): 0, or FS_EINVAL / FS_ENOMEM with err
     * set and *key (may be NULL) the key to blame. */
    int (*check)(const fs_sched_cfg_t *cfg, char *key, size_t keylen, fs_error_t *err);
    /* Optional: a job queued again after a failure (not admitted again). */
    void (*requeued)(void *state, fs_model_t *m, uint32_t slot);
    /* Optional: a queued job left the queue without running (a service
     * retired the replica; fs_policy_ops_t.withdraw): forget it. */
    void (*withdrawn)(void *state, fs_model_t *m, uint32_t slot);
    /* Optional: the preemptive fast path (fs_sched.c "ppass_plan").  plan()
     * is the greedy allocation of a preemptive pass over every job the order
     * tracks in key order (keys unique), gpus GPUs up, strict or best
     * effort: the running jobs to preempt and then the queued jobs to start,
     * each in order (the lists are the order's, valid until its next hook
     * call).  It is what ppass's sort and walk would decide; the order keeps
     * the structure that answers it from pass to pass (2D-LAS: a tree,
     * O((changes) log active) per pass).  0, or an error (nothing done).
     * set_fast(state, 0), called before the first job, turns the order's own
     * fast paths off (the slow path: tests prove equal). */
    int (*plan)(void *state, fs_model_t *m, uint64_t gpus, int strict, const uint32_t **pre,
                size_t *n_pre, const uint32_t **go, size_t *n_go);
    void (*set_fast)(void *state, int on);
} fs_order_ops_t;

/* The order for enum fs_queue_kind q, or NULL. */
const fs_order_ops_t *fs_order_get(int queue_kind);

/* The run time the scheduler plans with for a job (us): scheduler.runtime
 * oracle -> its true remaining work; user -> its estimate, or, if it has
 * none, its run time (unknown_estimate: oracle) or default_limit.  Inline,
 * in its users (fs_order_sjf.c's keys, fs_sched.c's backfill): the table of
 * orders (fs_order.c) calls nothing of the model's. */
static inline fs_time_t fs_order_plan(const fs_model_t *m, uint32_t slot)
{
    const fs_sched_cfg_t *c = &fs_model_config(m)->scheduler;
    const fs_jobrt_t *j = fs_model_job((fs_model_t *)m, slot);
    if (c->runtime == FS_RUNTIME_ORACLE)
        return fs_jobrt_remaining(j);
    if (j->job.estimate >= 0)
        return j->job.estimate;
    return c->unknown_estimate == FS_UNKNOWN_EST_ORACLE ? j->job.duration : c->default_limit;
}

/* The orders of fs_queues.h's rows. */
#define ORDER(o) extern const fs_order_ops_t o;
#define NO_ORDER
#define FS_ORDER_DECL(e, name, policy, order) order
FS_QUEUE_KINDS(FS_ORDER_DECL)
#undef FS_ORDER_DECL
#undef NO_ORDER
#undef ORDER

#endif
