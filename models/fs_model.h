/*
 * fs_model: the modeled world of one run -- cluster, active jobs, the
 * scheduling policy -- driven by the engine (fs_sim).
 *
 * Jobs live in slots only while active (queued or running): memory is
 * bounded by the queue and the running set, not by the workload, which is
 * pulled from the fs_source_t in batches and merged into the event loop as a
 * sorted stream.  Finished jobs leave as fs_job_row_t through the sink.
 *
 * Progress is analytic (SimGrid-style): a running job has remaining work
 * (microseconds at speed 1.0) and a rate; it ends at a single completion
 * event.  A rate change settles the work done and reschedules that one
 * event (fs_model_set_rate).  With recovery.* an attempt also has restore
 * and checkpoint-write phases, still analytic (models/fs_recovery.h); a
 * failure sends a job through RECOVERING back to the queue
 * (docs/recovery.md).
 *
 * Time integrals (GPUs busy and up, jobs queued and in system) are settled
 * at every state change, so they are exact for the piecewise-constant state.
 *
 * A policy (fs_policy_ops.h), passed in by the model's creator, owns the
 * queue: the model hands it each admitted job (enqueue) and calls pass()
 * once at the end of every instant where something changed; the policy
 * starts jobs with fs_model_start.
 *
 * The implementation is split by concern behind models/fs_model_int.h
 * (internal to models/): fs_model.c is the event loop and this API's glue.
 */
#ifndef FS_MODEL_H
#define FS_MODEL_H

#include <stdint.h>

#include "../sim/fs_sim.h"
#include "../traces/fs_source.h"
#include "fs_cluster.h"
#include "fs_config.h"
#include "fs_jobrt.h"
#include "fs_policy_ops.h"
#include "fs_result.h"

typedef struct fs_model fs_model_t;

typedef struct fs_model_progress {
    void (*fn)(void *ud, const fs_model_t *m);
    void *ud;
} fs_model_progress_t;

/* Creates the model for cfg, running policy pol (the caller picks it:
 * fs_policy_select(&cfg->scheduler) for the one cfg names; NULL is
 * FS_EINVAL), reading jobs from src (borrowed; must outlive the model) and
 * emitting rows to *sink.  */
int fs_model_create(const fs_config_t *cfg, const fs_policy_ops_t *pol, fs_source_t *src,
                    const fs_sink_t *sink, fs_model_t **out, fs_error_t *err);
void fs_model_destroy(fs_model_t *m);

/* Runs the event loop to the end (drain, or the horizon).  interrupt: an
 * optional flag (SIGINT) checked between instants.  progress is called
 * every few thousand events.  Returns 0, FS_EINTR, or an error (err set). */
int fs_model_run(fs_model_t *m, const volatile sig_atomic_t *interrupt,
                 const fs_model_progress_t *progress, fs_error_t *err);

/* Emits the rows of jobs still active (running/queued) and fills totals.
 * Call once, after fs_model_run. */
int fs_model_finish(fs_model_t *m, fs_run_totals_t *totals, fs_error_t *err);

/* ---- for policies ------------------------------------------------------ */
fs_time_t fs_model_now(const fs_model_t *m);
fs_jobrt_t *fs_model_job(fs_model_t *m, uint32_t slot);
/* Job slots 0 .. fs_model_slots - 1 (free ones included: state FS_JOBRT_FREE). */
size_t fs_model_slots(const fs_model_t *m);
const fs_cluster_t *fs_model_cluster(const fs_model_t *m);
/* The run's placer (a plugin's place pins its node list there: fs_placer_pin). */
struct fs_placer *fs_model_placer(fs_model_t *m);
const fs_config_t *fs_model_config(const fs_model_t *m);
/* Could the job start now in one of its pools? */
int fs_model_fits(const fs_model_t *m, uint32_t slot);
/* Which queued jobs have pods now (fs_policy_ops_t.with_pods), for the
 * cluster autoscaler: *mark = NULL when all do, else a byte per slot
 * (fs_model_slots), nonzero for those that do; valid until the next call
 * or the next event.  0 or FS_ENOMEM. */
int fs_model_pods(fs_model_t *m, const uint8_t **mark);
/* The cluster, when the fleet is one pool and whether a job fits depends on
 * the cluster alone (no bursting): then a whole-GPU job of any type fits iff
 * fs_cluster_fits(c, 0, gpus).  NULL otherwise.  The scheduler asks fits
 * per class ~16 times per job: inline, this costs a few instructions. */
const fs_cluster_t *fs_model_one_pool(const fs_model_t *m);
/* The pools of a job's pool set (fs_jobrt_t.type_pools): their count, and
 * *pools = their indices, or NULL for a set of -1 (every pool, 0 .. count-1). */
size_t fs_model_pool_set(const fs_model_t *m, int32_t set, const uint32_t **pools);
/* Starts the job where the configured placement puts it among its pools
 * (models/fs_place.h), at its speed factor.  Returns 1 started, 0 does not
 * fit now, or an FS_E* error. */
int fs_model_start(fs_model_t *m, uint32_t slot);
/* The same, placing only in the given pools (a subset of the job's; a
 * quota flavor's pools for Kueue).  n_pools 0: returns 0. */
int fs_model_start_in(fs_model_t *m, uint32_t slot, const uint32_t *pools, size_t n_pools);
/* The pools a job may use: returns their count and sets *pools, or 0 with
 * *pools = NULL when it may use any pool.  Valid until the next arrival. */
size_t fs_model_job_pools(fs_model_t *m, uint32_t slot, const uint32_t **pools);
/* The workload source (tenant and GPU-type names). */
const fs_source_t *fs_model_source(const fs_model_t *m);

/* Preempts a running job (shared by every preempting policy): its
 * completion is cancelled, its GPUs freed, and it goes back to
 * FS_JOBRT_QUEUED.  Work done in this attempt is lost except what a
 * checkpoint kept: scheduler.checkpoint_interval > 0 keeps work up to the
 * last multiple of the interval, and a recovery checkpoint (recovery.*)
 * keeps work up to the last one written, whichever is later;
 * scheduler.restart_cost is added to its remaining work.  restarts and
 * lost_gpu_s count it.  The caller (the
 * policy) puts the job back in its own queue: the model does NOT call
 * enqueue.  Returns 0, or FS_EINVAL if the job is not running (or is
 * ending: inside the policy's job_end for it). */
int fs_model_preempt(fs_model_t *m, uint32_t slot);
/* Remaining work of a job at now (us at speed 1.0), running or not. */
fs_time_t fs_model_remaining(const fs_model_t *m, uint32_t slot);
/* How many times a running job's rate has changed after its start (any
 * job): an order that keeps keys of running jobs between passes (SRTF)
 * takes them afresh when this moves. */
uint64_t fs_model_rerates(const fs_model_t *m);
/* A policy timer: at `at` (>= now) the policy's timer op gets `data`.
 * h (may be NULL) can cancel it with fs_model_cancel.  0 or FS_ENOMEM. */
int fs_model_timer(fs_model_t *m, fs_time_t at, uint64_t data, fs_event_handle_t *h);
void fs_model_cancel(fs_model_t *m, fs_event_handle_t h);
/* The policy's state (tests read a policy's instrumentation through it). */
void *fs_model_policy_state(fs_model_t *m);
/* Tenant i's name as the workload wrote it (fs_job_t.tenant), or NULL. */
const char *fs_model_tenant_name(const fs_model_t *m, int32_t i);

/* ---- the fleet: nodes out of service and back ------------------------------
 * Failures, repairs, drains, spares and purchase timelines all act through
 * these.  A node holds a count of reasons to be out of service: every
 * fs_model_node_down adds one, every fs_model_node_up removes one, and the
 * node serves jobs only while the count is 0.  So independent actors (a
 * failed node under a failed switch, a node not yet delivered) each balance
 * their own downs and ups. */
enum fs_down_how {
    FS_DOWN_FAIL = 0,   /* every job with GPUs on the node is interrupted now
                           (recovery applies: work since the last checkpoint is
                           lost, detection and restore delays, retry rules) */
    FS_DOWN_DRAIN = 1,  /* cordon and drain: running jobs go on, none start there */
    FS_DOWN_FAIL_XID = 2 /* FS_DOWN_FAIL with an Xid that the GPUs' DCGM fields show: a
                           health check (recovery.health_check) may notice it first */
};
/* Adds a reason for node to be out of service at now.  *jobs_hit (may be
 * NULL) = jobs interrupted.  Returns 0 or an FS_E* error (the run stops). */
int fs_model_node_down(fs_model_t *m, uint32_t node, int how, uint32_t *jobs_hit);
/* Removes one reason; the node is back in service when none is left (and
 * the instant makes a scheduling pass). */
int fs_model_node_up(fs_model_t *m, uint32_t node);
/* Sets a node's speed factor (1.0 normal, < 1 a straggler): jobs running
 * on it re-rate (a synchronous job runs at its slowest node). */
int fs_model_node_speed(fs_model_t *m, uint32_t node, double factor);
/* Jobs with GPUs on node now: running ones, and jobs interrupted by a
 * failure elsewhere that still hold it until the failure is noticed
 * (recovery.detection).  O(1) once a fleet op built the node index. */
uint32_t fs_model_node_jobs(const fs_model_t *m, uint32_t node);
/* Is the node in service (no reason to be out)? */
int fs_model_node_in_service(const fs_model_t *m, uint32_t node);
/* MIG re-partitioning (models/fs_migrecut.h): re-cuts every GPU of node,
 * out of service with no instance held, for profile index pr of its pool's
 * MIG model (fs_cluster_mig_recut).  Returns the node's instances of pr, or
 * FS_EINVAL. */
int fs_model_mig_recut(fs_model_t *m, uint32_t node, unsigned pr);
/* MIG re-partitioning with planned per-GPU layouts (mig_repartition.layout:
 * mixed): GPU g of node takes lay[g] (fs_cluster_mig_set).  0 or FS_EINVAL. */
int fs_model_mig_set(fs_model_t *m, uint32_t node, const fs_mig_layout_t *lay);
/* A cordon (MIG re-partitioning's drain, models/fs_migrecut.h).  on = 1:
 * node takes no new pod, its running pods go on (a reason to be out of
 * service, as FS_DOWN_DRAIN: /timeline.nodes_down counts it); unlike a plain
 * drain, the capacity states count its GPUs held by pods as in service
 * (busy) and only its other GPUs as down.  on = 0 lifts it.  0, FS_EINVAL
 * (already so), FS_ENOMEM. */
int fs_model_node_cordon(fs_model_t *m, uint32_t node, int on);
/* GPU-s of cordoned nodes' GPUs that held no pod, over the run up to now. */
double fs_model_cordon_idle_gpu_s(const fs_model_t *m);
/* on: the after_pass module is called at the end of every instant that
 * wanted a pass even when nothing is left queued (a module that must see
 * its demand go away). */
void fs_model_after_pass_idle(fs_model_t *m, int on);
/* A running job's outlook now: *end, when it is planned to complete at its
 * current rate (INT64_MAX for a service replica), and *lost_gpu_s, the
 * GPU-s of work a preemption now would lose (fs_model_preempt's rule).
 * 0, or FS_EINVAL if it is not running. */
int fs_model_job_outlook(const fs_model_t *m, uint32_t slot, fs_time_t *end, double *lost_gpu_s);
/* Evicts every job running on node (in admission order) that was preempted
 * fewer than `below` times: the policy is told it stopped (job_interrupted,
 * else job_end), fs_model_preempt applies (its loss rule and counts) and
 * the policy gets it back (enqueue).  *n_evicted: how many.  0 or an FS_E*
 * error. */
int fs_model_evict_node(fs_model_t *m, uint32_t node, uint32_t below, uint32_t *n_evicted);

/* ---- modules: parts of the model with their own events ----------------------
 * (failures and repairs, purchase timelines, cloud burst, ...).  A module
 * registers once (from its row of fs_model_modules, at fs_model_create) and
 * schedules events for itself;
 * the model calls on_event at their time.  The model owns the module after
 * registering and calls destroy at fs_model_destroy. */
/* A gate decides where a job may start now beyond fitting (cloud burst:
 * a burst pool only after the job waited, and within a cap).  The model
 * asks it in every fit check (allows) and start (pools), and tells it of
 * every admitted job (admitted).  At most one module of a model is a gate;
 * with none the model asks nothing. */
typedef struct fs_gate_ops {
    /* May job start in pool now? */
    int (*allows)(const void *ud, const fs_cluster_t *c, uint32_t pool, const fs_jobq_t *job,
                  fs_time_t now);
    /* Narrows a pool list (*pools NULL: all pools) to the pools the job may
     * use now; *pools may then point into the gate's scratch (valid until
     * the next call).  Returns 0 when none is left. */
    int (*pools)(void *ud, const fs_cluster_t *c, const fs_jobq_t *job, fs_time_t now,
                 const uint32_t **pools, size_t *n);
    /* A job was admitted (e.g. timers at its eligibility times).  0 or FS_E*. */
    int (*admitted)(void *ud, fs_model_t *m, const fs_jobq_t *job);
} fs_gate_ops_t;

typedef struct fs_module_ops {
    const char *name;
    /* An event of this module fired (data as scheduled).  0 or FS_E*. */
    int (*on_event)(void *ud, fs_model_t *m, uint64_t data);
    /* Optional: the run ended (fs_model_finish), before totals are read. */
    int (*finish)(void *ud, fs_model_t *m, fs_run_totals_t *totals);
    /* Optional: frees ud. */
    void (*destroy)(void *ud);
    /* Optional: adds the module's columns to a /timeline sample. */
    void (*sample)(void *ud, const fs_model_t *m, fs_sample_row_t *row);
    /* Its events change nothing a policy sees unless they call the model
     * (fs_model_submit, fs_model_retire): an instant of only such events
     * makes no scheduling pass (a service's requests). */
    int quiet;
    /* Optional: the module is the model's gate (see fs_gate_ops_t). */
    const fs_gate_ops_t *gate;
    /* Optional: called at the end of every instant whose scheduling pass
     * left jobs queued (after the pass), e.g. to act on pods that cannot
     * start.  At most one module of a model has it.  0 or FS_E*. */
    int (*after_pass)(void *ud, fs_model_t *m);
    /* Optional: a job entered the queue at now (admitted, or back after a
     * preemption or a failure), before the instant's scheduling pass; at
     * most one module of a model has it (Karpenter's pod watch).  0 or FS_E*. */
    int (*pending)(void *ud, fs_model_t *m, uint32_t slot);
} fs_module_ops_t;
/* Registers a module; *id names it in fs_model_module_event.  0, FS_ENOMEM,
 * or FS_EINVAL (a second gate, after_pass or pending hook). */
int fs_model_add_module(fs_model_t *m, const fs_module_ops_t *ops, void *ud, uint32_t *id);

/* The table of modules (models/fs_modules.c, one row per module): the model
 * knows its modules only through it.  fs_model_create calls every row's
 * attach in table order (the order fixes module ids and so the order of
 * their first events); a module registers itself (fs_model_add_module) when
 * the model's config asks for it, and does nothing otherwise. */
typedef struct fs_module_def {
    const char *name;
    /* 0, or an FS_E* error with err set (the model is not created). */
    int (*attach)(fs_model_t *m, fs_error_t *err);
} fs_module_def_t;
extern const fs_module_def_t fs_model_modules[];

/* The rules that need the fleet built, as fs_model_create would build it
 * (fs_modules.c): the cluster itself (cluster.topology.nvlink_domain and
 * nodes_per_rack against the pools' nodes), failures.planned[].unit
 * against the fleet's units, and a pool for every service.  0, or the
 * model's error with key set to the key it is about (empty: none),
 * FS_ENOMEM.  The loader calls it so that validate refuses what run would,
 * at FILE:LINE:COL. */
int fs_model_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err);
extern const size_t fs_model_n_modules;
/* Schedules an event of module id at `at` (>= now) with a priority of
 * fs_sim.h (FS_PRIO_FAILURE, FS_PRIO_REPAIR, ...).  h may be NULL.
 * Contract: an event at FS_PRIO_FAILURE only takes capacity away (a
 * failure, an outage's start); whatever may bring capacity back (a repair,
 * a delivery, the end of an outage) has another priority.  A drain whose
 * queued jobs can never start counts on it (docs/models.md). */
int fs_model_module_event(fs_model_t *m, uint32_t id, fs_time_t at, int priority,
                          uint64_t data, fs_event_handle_t *h);
/* A module's own message for the error it is about to return (the run's
 * error, unless one is already set): e.g. a request trace's FILE:LINE. */
void fs_model_error(fs_model_t *m, const fs_error_t *e);
/* The sink the model was created with (modules emit their own rows). */
const fs_sink_t *fs_model_sink(const fs_model_t *m);

/* ---- service replicas (models/fs_service.h) ----------------------------------
 * A replica is a job with FS_JOB_SERVICE: it enters the policy's queue like
 * any job (its priority decides whether the policy preempts training for
 * it), holds its GPUs until its service retires it, and never completes,
 * checkpoints or restores.  It is not a row of /jobs and not in the job
 * statistics.  Services need until: horizon. */
enum fs_replica_event {
    FS_REPLICA_STARTED = 1,    /* placed; ready after `startup` us (pod start-up) */
    FS_REPLICA_STOPPED = 2     /* preempted (back in the queue) or hit by a failure
                                  (recovering: back in the queue later) */
};
typedef struct fs_replica_hook {
    /* slot's replica changed at now; startup: the start-up of a STARTED one */
    int (*fn)(void *ud, fs_model_t *m, uint32_t slot, int event, fs_time_t startup);
    void *ud;
} fs_replica_hook_t;
/* Sets the hook called for every event of a replica (one hook per model). */
void fs_model_set_replica_hook(fs_model_t *m, const fs_replica_hook_t *hook);
/* A pool set for replicas that may use the pools pools[0 .. n) (n 0: every
 * pool): *set for fs_model_submit.  0 or FS_ENOMEM. */
int fs_model_make_pool_set(fs_model_t *m, const uint32_t *pools, size_t n, int32_t *set);
/* Admits a replica now: job (flags gets FS_JOB_SERVICE, duration is
 * ignored) in pool set `set` (-1 any pool).  *slot: its slot, valid until
 * fs_model_retire.  0, FS_EINVAL (it can never fit its pools), FS_ENOMEM. */
int fs_model_submit(fs_model_t *m, const fs_job_t *job, int32_t set, uint32_t *slot);
/* Ends a replica.  A running one gives its GPUs back at once; a queued one
 * is taken out of the policy's queue now (fs_policy_ops_t.withdraw), or,
 * when the policy cannot give a queued job back (a plugin), stays queued
 * and 1 is returned: the caller retires it when it starts; a recovering one
 * ends when it would be requeued.  0, 1, or an FS_E* error. */
int fs_model_retire(fs_model_t *m, uint32_t slot);

/* ---- for progress lines and tests --------------------------------------- */
uint64_t fs_model_jobs_done(const fs_model_t *m);
uint64_t fs_model_jobs_queued(const fs_model_t *m);
uint64_t fs_model_jobs_running(const fs_model_t *m);
/* Jobs recovering from a failure (detection, requeue delay): neither queued
 * nor running, but not done. */
uint64_t fs_model_jobs_recovering(const fs_model_t *m);
/* Why an until: drain run stopped with FS_ESTUCK: FS_DRAIN_STUCK, jobs
 * wait that nothing can ever start; FS_DRAIN_LIMIT, jobs still queued or
 * running drain_limit after the last arrival.  0 otherwise. */
enum { FS_DRAIN_STUCK = 1, FS_DRAIN_LIMIT = 2 };
int fs_model_drain_stop(const fs_model_t *m);
/* 1 if the workload went on past the horizon (those jobs were not replayed). */
int fs_model_truncated(const fs_model_t *m);
/* The horizon in effect: cfg->horizon, or with cfg->horizon_auto the last
 * submission of the trace once the stream has ended. */
fs_time_t fs_model_horizon(const fs_model_t *m);
/* The jobs' accounts up to now over every job (not replicas), as their rows
 * would give them: held, computing, checkpoint and start-up GPU-s.  O(slots);
 * what the /timeline held split is tested against (tests/test_capstates.c). */
void fs_model_job_accounts(const fs_model_t *m, double out[4]);
/* The usage integrals the cost model prices (models/fs_usage.h); complete
 * after fs_model_finish. */
typedef struct fs_usage fs_usage_t;
fs_usage_t *fs_model_usage(fs_model_t *m);

#endif
