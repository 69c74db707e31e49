/*
 * fs_model_int.h: the model's insides, shared by the files of models/ that
 * implement fs_model.h.
 *
 *     INTERNAL TO models/: NOT TO BE INCLUDED OUTSIDE models/.
 *     Everything else talks to the model through fs_model.h.
 *
 * The model is split by concern, one file and one function prefix each, and
 * struct fs_model is made of one sub-struct per concern (as Lua keeps
 * global_State apart from lua_State), each defined here next to the
 * functions of its file:
 *
 *   file                   prefix        sub-struct            concern
 *   fs_model.c             fs_mdl_       (the core fields)     event loop, modules, lifecycle, API glue
 *   fs_model_arrivals.c    fs_arr_       fs_arrivals_t arr     the arrival stream, admission
 *   fs_model_slots.c       fs_slot_      fs_jobslots_t js      job slots and run records
 *   fs_model_psets.c       fs_pset_      fs_poolsets_t psets   pool sets, fit checks
 *   fs_model_attempt.c     fs_att_       -                     starting, rating, stopping, preempting jobs
 *   fs_model_rows.c        fs_row_       -                     /jobs and /gpu_intervals rows
 *   fs_model_accounts.c    fs_acct_      fs_accounts_t acct    the jobs' GPU-s accounts
 *   fs_model_integ.c       fs_integ_     fs_integrals_t integ  integrals, capacity states, /timeline
 *   fs_model_nodes.c       fs_nidx_      fs_nodeidx_t nodes    the node index (node -> jobs on it)
 *   fs_model_fleet.c       fs_fleet_     fs_fleet_t fleet      nodes out of service, speeds, cordons, eviction
 *   fs_model_recover.c     fs_rcv_       fs_recovering_t rec   jobs hit by a failure, back to the queue
 *   fs_model_energy.c      fs_energy_    fs_energy_t energy    energy from the power model
 *   fs_model_replicas.c    fs_repl_      fs_replicas_t svc     service replicas
 *   fs_model_drain.c       fs_drain_     -                     a drain that cannot end
 *
 * The modules' registry (fs_modreg_t mods) lives in fs_model.c.
 */
#ifndef FS_MODEL_INT_H
#define FS_MODEL_INT_H

#include "fs_model.h"
#include "fs_place.h"
#include "fs_startup.h"
#include "fs_usage.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <string.h>

#define BATCH 4096
#define NO_SLOT UINT32_MAX

enum { FS_WAIT_QUOTA = 1, FS_WAIT_RESERVED = 2, FS_WAIT_BLOCKED = 3 };  /* fs_integrals_t.wait_label */
enum { EV_JOB_END = 1, EV_SAMPLE = 2, EV_POLICY = 3, EV_MODULE = 4, EV_RECOVER = 5,
       EV_DRAIN_CAP = 6, EV_WITHDRAW = 7 };
/* The drain cap fires after every sample of its instant. */
#define PRIO_DRAIN_CAP (FS_PRIO_SAMPLE + 5)
/* Jobs named in a message about jobs that cannot go on. */
#define NAMED_JOBS 5
/* EV_RECOVER data: the failure is noticed (detection over), or the job is
 * back in the queue (requeue and backoff over). */
enum { RC_DETECTED = 1, RC_REQUEUE = 2 };
/* Derived pool sets (fs_pset_derived). */
enum { DSET_NODE_GPUS = 0, DSET_TENANT = 1 };

/* ---- the arrival stream (fs_model_arrivals.c) ------------------------------ */
typedef struct fs_arrivals {
    fs_job_t *batch;        /* one batch at a time */
    size_t batch_n, batch_i;
    int src_done;
    int truncated;          /* the trace went on past the horizon */
    fs_time_t horizon;      /* cfg->horizon; with cfg->horizon_auto, the last
                               submission once the stream has ended */
    fs_time_t last_arrival; /* submission of the last job taken (-1: none) */
    uint64_t submitted;
} fs_arrivals_t;

/* Admits job now into pool set `set` (INT32_MIN: the set of its GPU type). */
void fs_arr_admit(fs_model_t *m, const fs_job_t *job, int32_t set, uint32_t *slot);
/* A job entered the queue: the modules that asked to know. */
int fs_arr_queue_entered(fs_model_t *m, uint32_t slot, int admitted);
/* The engine's view of the stream (fs_model_ops_t.source_peek, _take). */
fs_time_t fs_arr_peek(void *vm);
void fs_arr_take(fs_sim_t *sim, void *vm);

/* ---- job slots and run records (fs_model_slots.c) --------------------------- */
typedef struct fs_jobslots {
    /* active jobs */
    fs_jobrt_t *slots;
    size_t n_slots, cap_slots;
    uint32_t *free_slots;
    size_t n_free, cap_free;
    /* run records (fs_jobrun_t) of the jobs that have run, in chunks that
     * never move; given-back ones are reused first */
    fs_jobrun_t **run_chunks;
    size_t n_run_chunks, cap_run_chunks, run_used;  /* run_used: of the last chunk */
    fs_jobrun_t **run_free;
    size_t n_run_free, cap_run_free;
    uint64_t next_seq;
    /* the trace's recorded start of the job in each slot (fs_job_t.rec_start,
     * /jobs.rec_start; fs_jobq_t leaves it out), -1 none: NULL until a job
     * that records one is admitted, so a run of a trace without recorded
     * starts or of a generator costs nothing */
    fs_time_t *rec_start;
    size_t cap_rec;
} fs_jobslots_t;

/* fs_model_slots.c: slot s's recorded start (-1: none); FS_ENOMEM. */
int fs_slot_rec_set(fs_model_t *m, uint32_t s, fs_time_t rec_start);

int fs_slot_free(fs_model_t *m, uint32_t s);
/* fs_limits.c (m->lim set): hands the admitted job to the policy or holds
 * it; the job's slot is being freed (its user's held jobs may go).  0 or FS_E*. */
typedef struct fs_limits fs_limits_t;
int fs_lim_admit(fs_model_t *m, uint32_t slot);
int fs_lim_gone(fs_model_t *m, uint32_t slot);
/* fs_limits.c: a queued job leaves without running (withdrawn): 1 if it was
 * held back by its user's limit (now out of the user's held list: the
 * policy never had it; the jobs held behind it that now fit are handed
 * over), 0 if it is the policy's, < 0 an error (FS_ENOMEM, or the
 * policy's enqueue's). */
int fs_lim_unhold(fs_model_t *m, uint32_t slot);
/* fs_model_withdraw.c: the withdraw event of an admitted job with
 * FS_JOB_WITHDRAW (at its recorded cancel time), and its handling.  0 or
 * FS_ENOMEM. */
int fs_wd_schedule(fs_model_t *m, uint32_t slot);
void fs_wd_event(fs_model_t *m, uint32_t slot, uint64_t seq);
fs_jobrun_t *fs_slot_run_take(fs_model_t *m, const fs_jobrt_t *j);
void fs_slot_release(fs_model_t *m);

/* ---- pool sets (fs_model_psets.c) --------------------------------------------
 * set k -> pools set_pool[set_off[k] .. set_off[k+1]); source GPU type t ->
 * set type_set[t]; derived sets (dsets, fs_pset_derived): single-node jobs
 * (FS_JOB_SINGLE_NODE) of g GPUs -> the pools of their set with
 * gpus_per_node >= g; a tenant's jobs -> the pools of their set whose taints
 * (models/fs_taint.h) it tolerates */
typedef struct fs_poolsets {
    uint32_t *set_pool;
    size_t set_pool_n, set_pool_cap;
    size_t *set_off;        /* n_sets + 1 entries */
    size_t n_sets, set_off_cap;
    int32_t *type_set;
    size_t n_types, cap_type_set;
    struct dset { int32_t base; int kind; int64_t key; int32_t set; } *dsets;
    size_t n_dsets, cap_dsets;
    int tainted;            /* some pool has taints */
} fs_poolsets_t;

int fs_pset_of_type(fs_model_t *m, int32_t t);
int fs_pset_derived(fs_model_t *m, int32_t base, int kind, int64_t key, int32_t *out);
int fs_pset_could_ever_fit(const fs_model_t *m, const fs_jobrt_t *j);
void fs_pset_release(fs_model_t *m);

/* Iterates the pools a job may use: any pool (set < 0) or its set. */
#define FOR_POOLS(m, set, p)                                                          \
    for (size_t i_ = (set) < 0 ? 0 : (m)->psets.set_off[(set)],                       \
                e_ = (set) < 0 ? (m)->cluster.n_pools : (m)->psets.set_off[(set) + 1]; \
         i_ < e_ && ((p) = (set) < 0 ? (uint32_t)i_ : (m)->psets.set_pool[i_], 1); i_++)

/* ---- attempts: starting, rating, stopping, preempting (fs_model_attempt.c) --- */
void fs_att_unshare(fs_jobrt_t *j);
double fs_att_rate(const fs_model_t *m, const fs_jobrt_t *j);
void fs_att_lose_work(fs_model_t *m, fs_jobrt_t *j, fs_time_t lost);
void fs_att_stop(fs_model_t *m, fs_jobrt_t *j);
void fs_att_release(fs_model_t *m, uint32_t slot);
int fs_att_rerate(fs_model_t *m, uint32_t slot, double rate);
void fs_att_job_end(fs_model_t *m, uint32_t slot);

/* ---- rows (fs_model_rows.c) -------------------------------------------------- */
int fs_row_emit(fs_model_t *m, const fs_jobrt_t *j, int state);
void fs_row_intervals(fs_model_t *m, const fs_jobrt_t *j, fs_time_t end);
fs_activity_cfg_t fs_row_job_activity(const fs_model_t *m, const fs_jobq_t *job);
fs_time_t fs_row_hold_ready(const fs_jobrt_t *j, fs_time_t end);

/* ---- the jobs' accounts (fs_model_accounts.c) ---------------------------------
 * The jobs' accounts as they accrue (kept only with a timeline, `on`):
 * every settled increment of every job (not replicas), and what is not
 * settled yet as aggregates: running jobs (sum of GPU shares and of share x
 * attempt start, s), those of them in plain compute (share and share x
 * settled_at), recovering jobs' holds (GPUs and GPUs x settled_at), and a
 * list of the running jobs with phases (checkpoint writes, start-up,
 * restore), advanced one by one at a sample.  Then the sums over the jobs
 * emitted so far, for /summary. */
typedef struct fs_accounts {
    int on;
    double ac_held, ac_comp, ac_ckpt, ac_startup;
    double ac_run_s, ac_run_t, ac_pure_s, ac_pure_t, ac_rec_s, ac_rec_t;
    uint32_t *cx;
    size_t n_cx, cap_cx;
    /* all jobs' accounts up to the last sample: the /timeline held split */
    double smp_held, smp_compute, smp_ckpt, smp_startup;
    /* the held split of capacity state busy (#15, docs/results.md): sums
     * over the jobs emitted so far (replicas not included) */
    double job_held_gpu_s;  /* GPU-s jobs held: attempts and failure detection */
    double job_compute_gpu_s; /* GPU-s jobs computed (work kept or later lost) */
    double job_idle_gpu_s;  /* of it, by jobs whose activity is zero (telemetry duty 0) */
    double job_lost_gpu_s;  /* GPU-s of that compute whose work was lost */
    double startup_gpu_s;   /* GPU-s held starting, jobs emitted so far */
    double ckpt_gpu_s;
    double lost_gpu_s;      /* lost to failures and preemptions */
    double lost_preempt_gpu_s; /* the part of lost_gpu_s lost to preemptions */
    double useful_gpu_s;
    /* the checkpoint intervals chosen per attempt (compute s): sum, count, least */
    double ckpt_tau_sum, ckpt_tau_min;
    uint64_t ckpt_taus;
} fs_accounts_t;

int fs_acct_run_add(fs_model_t *m, fs_jobrt_t *j, uint32_t slot);
void fs_acct_run_sub(fs_model_t *m, fs_jobrt_t *j);
void fs_acct_hold_add(fs_model_t *m, fs_jobrt_t *j);
void fs_acct_hold_sub(fs_model_t *m, fs_jobrt_t *j);
void fs_acct_hold_until(fs_model_t *m, fs_jobrt_t *j, fs_time_t at);
void fs_acct_now(const fs_model_t *m, double out[4]);
void fs_acct_progress(fs_model_t *m, fs_jobrt_t *j);
void fs_acct_useful_mark(fs_jobrt_t *j);

/* ---- integrals and capacity states (fs_model_integ.c) ----------------------- */
typedef struct fs_integrals {
    fs_time_t last_settle;
    double int_busy, int_up, int_queued, int_system;   /* x-seconds */
    fs_time_t win_lo, win_hi;       /* the measurement window: [warmup, horizon] */
    double win_busy, win_up;        /* int_busy, int_up over the window */
    /* capacity states of the whole fleet (#15, docs/results.md): integrals
     * of GPUs in the fleet, out of service (total - up), free while jobs or
     * replicas wait (up - busy, queued > 0) and free with nothing waiting
     * (up - busy, queued == 0); with int_busy they partition int_total */
    double int_total, int_down, int_waiting, int_idle;
    /* the waiting split (#15; frag_refresh): per pool p, the queued jobs by
     * the GPUs one of their pods needs on one node, qdem[qdem_off[p] + d]
     * for d in 1..gpn (a gang that may spread over nodes needs 1), and the
     * queued MIG pods with a profile of p's layout, qmig[p]; frag_now: the
     * free GPUs no queued pod fits on, valid while the cluster's gen is
     * frag_cgen and frag_stale is 0.  int_frag: its integral over the
     * waiting instants; the rest of waiting is held back, labelled by the
     * policy's mechanism (wait_label: quota, reserved or blocked). */
    uint32_t *qdem, *qdem_off, *qmig;
    uint64_t frag_cgen;
    int frag_stale, wait_label;
    double frag_now, int_frag, smp_frag;
    double smp_busy, smp_down, smp_waiting, smp_idle; /* their values at the last sample */
    double int_alloc;       /* GPU-s allocated (shares of shared GPUs as shares) */
    double smp_alloc;       /* int_alloc at the last sample */
    fs_time_t last_sample;  /* time of the last /timeline row, -1 none yet */
    uint8_t sample_last;    /* the run's closing /timeline row (fs_model_finish): no next */
} fs_integrals_t;

int fs_integ_init(fs_model_t *m);
void fs_integ_release(fs_model_t *m);
void fs_integ_settle(fs_model_t *m, fs_time_t t);
void fs_integ_sample(fs_model_t *m);
/* A queued job's pods in the waiting split's counts: dlt 1 or UINT32_MAX (-1). */
void fs_integ_qdem_count(fs_model_t *m, const fs_jobrt_t *j, uint32_t dlt);
void fs_integ_held_back_split(const fs_model_t *m, double held, double *quota, double *reserved,
                              double *blocked);

/* ---- the node index (fs_model_nodes.c) ----------------------------------------
 * The jobs holding GPUs on one node (running, or recovering and still
 * holding), in no order; swap-remove.  Per node: O(jobs on the node). */
typedef struct nodevec {
    uint32_t *v;
    size_t n, cap;
} nodevec_t;

typedef struct fs_nodeidx {
    nodevec_t *jobs;        /* node -> jobs on it; NULL until a fleet op needs it */
    uint32_t *scr;          /* scratch: jobs hit by a failure or an eviction */
    size_t scr_cap;
} fs_nodeidx_t;

int fs_nidx_ensure(fs_model_t *m);
int fs_nidx_add(fs_model_t *m, uint32_t slot);
void fs_nidx_del(fs_model_t *m, uint32_t slot);
void fs_nidx_drop(nodevec_t *v, uint32_t slot);
void fs_nidx_release(fs_model_t *m);

/* ---- the fleet: nodes out of service, speed factors (fs_model_fleet.c) ------- */
typedef struct fs_fleet {
    uint32_t *node_holds;   /* reasons each node is out of service; NULL until a node first goes down */
    uint32_t nodes_out;     /* nodes with node_holds > 0 */
    double *node_speed;     /* NULL: every node at 1.0 */
    int capped;             /* some pool has a power cap or a thermal limit (cap_speed) */
    int shared;             /* some pool shares its GPUs (cluster.pools[].sharing) */
    /* cordoned nodes (fs_model_node_cordon): their GPUs held by running
     * pods stay in service in the capacity states; int_cordon_idle: the
     * integral of their other GPUs */
    uint32_t *cordon;
    size_t n_cordon, cap_cordon;
    double int_cordon_idle;
} fs_fleet_t;

void fs_fleet_init(fs_model_t *m);
double fs_fleet_cordon_free(const fs_model_t *m);
void fs_fleet_release(fs_model_t *m);

/* ---- jobs hit by failures (fs_model_recover.c; docs/recovery.md) ------------- */
typedef struct fs_recovering {
    uint64_t recovering;    /* jobs between a failure and the queue */
    uint64_t interruptions; /* running jobs interrupted by failures */
    double *pool_mttf;      /* young/daly: node MTTF per pool, s (NULL until needed; < 0 unknown) */
    int fail_xid;           /* the failure being applied shows an Xid (FS_DOWN_FAIL_XID) */
} fs_recovering_t;

int fs_rcv_fail_job(fs_model_t *m, uint32_t slot, uint32_t node);
void fs_rcv_drop_node(fs_model_t *m, uint32_t slot, uint32_t node);
void fs_rcv_on_event(fs_model_t *m, uint32_t slot, uint64_t step);

/* ---- energy from the power model (fs_model_energy.c; cost.energy: power) ----
 * per pool its GPUs' TDP, power limit and idle draw (NULL: the key is off);
 * per GPU of the pools whose GPUs are shared (fractions, replicas, MIG) the
 * time its draw was added up to (allocated on the first shared hold) */
typedef struct fs_energy {
    struct epool { double tdp, lim, idle; uint64_t gpu0; } *pool;
    fs_time_t *unit;
    struct ehold { fs_time_t ready; double w; } *scr;
    size_t scr_cap;
} fs_energy_t;

int fs_energy_init(fs_model_t *m);
/* (cold: a run without cost.energy: power pays one test per hold) */
__attribute__((cold, noinline)) void fs_energy_hold(fs_model_t *m, const fs_jobrt_t *j,
                                                    fs_time_t end);
void fs_energy_release(fs_model_t *m);

/* ---- service replicas (fs_model_replicas.c; FS_JOB_SERVICE, models/fs_service.h) */
typedef struct fs_replicas {
    fs_replica_hook_t hook;
    uint64_t live;          /* replicas submitted and not ended (queued, running, recovering) */
    uint64_t queued;        /* the queued ones */
    uint64_t running;       /* the running ones */
} fs_replicas_t;

void fs_repl_event(fs_model_t *m, uint32_t slot, int event, fs_time_t startup);
int fs_repl_end(fs_model_t *m, uint32_t slot);

/* ---- a drain that cannot end (fs_model_drain.c) -------------------------------- */
void fs_drain_cannot_go_on(fs_model_t *m, int capped);

/* ---- the modules' registry (fs_model.c) ---------------------------------------- */
typedef struct module {
    const fs_module_ops_t *ops;
    void *ud;
} module_t;

typedef struct fs_modreg {
    module_t *v;
    size_t n, cap;
    const fs_gate_ops_t *gate; /* the gate module's (cloud burst rules), NULL: none */
    void *gate_ud;
    const fs_module_ops_t *pend; /* the module with a pending hook, NULL: none */
    void *pend_ud;
    int queue_hooks;        /* a gate or a pending hook: admission calls fs_arr_queue_entered */
    size_t after_pass;      /* the module with an after_pass op: its id + 1; 0 none */
    int after_pass_idle;    /* call it after a pass that left nothing queued too */
} fs_modreg_t;

/* ---- pending events that cannot start a queued job (fs_model.c) -----------------
 * The timeline sample, the drain cap, and module events at FS_PRIO_FAILURE
 * (a failure only takes capacity away).  When these are all that is
 * pending, nothing runs and jobs wait, nothing can ever start them
 * (fs_drain_cannot_go_on). */
typedef struct fs_inert {
    uint8_t sample, cap;    /* a sample, the drain cap */
    uint64_t failures;      /* module events at FS_PRIO_FAILURE */
} fs_inert_t;

/* ---- the model ----------------------------------------------------------------- */
struct fs_model {
    const fs_config_t *cfg;
    fs_sim_t sim;
    fs_cluster_t cluster;
    fs_placer_t *placer;    /* scheduler.placement (models/fs_place.h) */
    fs_source_t *src;
    fs_sink_t sink;
    const fs_policy_ops_t *pol; /* passed in by the creator */
    void *pol_state;
    const uint32_t *start_pools; /* fs_model_start_in: the pools to place in (else NULL) */
    size_t start_n;

    /* counters */
    uint64_t queued, running, done, rejected;
    uint64_t gpus_queued;   /* GPUs requested by queued jobs */
    uint64_t preemptions;   /* fs_model_preempt calls */
    uint64_t rerates;       /* fs_att_rerate calls (fs_model_rerates) */
    fs_time_t last_change;
    uint32_t ending;        /* slot + 1 of the job whose job_end callback runs (0: none):
                               it still says RUNNING but holds nothing, and cannot be
                               preempted */
    uint64_t progress_mark;
    const fs_model_progress_t *progress;
    int finishing;          /* in fs_model_finish: rows end at end_at */
    fs_time_t end_at;
    fs_usage_t *usage;      /* per-pool, per-day integrals for the cost model (owned) */
    fs_startup_t *startup;  /* pod start-up (owned), NULL: jobs compute once placed */
    uint8_t *pods;          /* scratch: fs_model_pods's marks */
    size_t pods_cap;
    int pass_wanted;        /* this instant had an event a policy may act on */
    int drain_stop;         /* 0, or FS_DRAIN_STUCK / FS_DRAIN_LIMIT (fs_drain_cannot_go_on) */

    /* the concerns (fs_model_int.h's table) */
    fs_arrivals_t arr;
    fs_jobslots_t js;
    fs_poolsets_t psets;
    fs_accounts_t acct;
    fs_integrals_t integ;
    fs_nodeidx_t nodes;
    fs_fleet_t fleet;
    fs_recovering_t rec;
    fs_energy_t energy;
    fs_replicas_t svc;
    fs_modreg_t mods;
    fs_inert_t inert;
    struct fs_fabmod *fab;  /* cluster.fabric (fs_fabric_mod.h), NULL: off */
    struct fs_limits *lim;  /* scheduler.limits (fs_limits.h), NULL: off */

    fs_error_t err;
};

/* ---- the core (fs_model.c) ------------------------------------------------------ */
/* The run's error (the first one) and the engine stopped. */
void fs_mdl_fail(fs_model_t *m, int code, const char *what);
/* A sink callback failed: its own message when it left one. */
void fs_mdl_fail_sink(fs_model_t *m, int code, const char *what);

/* ---- small shared helpers ------------------------------------------------------- */
static inline double gpu_share(const fs_jobrt_t *j)
{
    return (double)j->job.gpus * j->job.gpu_milli / 1000.0;
}

static inline int is_replica(const fs_jobrt_t *j) { return (j->job.flags & FS_JOB_SERVICE) != 0; }

/* ---- hot helpers, inline (each called once or more per job; without LTO a
 * call across the files costs more than their bodies) ------------------------ */

/* fs_model_integ.c: the queue counts (jobs, GPUs, replicas) as a job enters
 * or leaves the policy's queue: admission, requeue and preemption; start
 * and withdrawal. */
static inline void fs_integ_queue_enter(fs_model_t *m, const fs_jobrt_t *j)
{
    m->queued++;
    m->gpus_queued += j->job.gpus;
    m->svc.queued += is_replica(j);
    fs_integ_qdem_count(m, j, 1);
}

static inline void fs_integ_queue_leave(fs_model_t *m, const fs_jobrt_t *j)
{
    m->queued--;
    m->gpus_queued -= j->job.gpus;
    m->svc.queued -= is_replica(j);
    fs_integ_qdem_count(m, j, UINT32_MAX);   /* -1, modulo 2^32 */
}

/* fs_model_slots.c.  The run record of a job that has not run yet: nothing run, queued since
 * its submission. */
static inline void fs_slot_run_init(fs_jobrun_t *x, const fs_jobrt_t *j)
{
    memset(x, 0, sizeof *x);
    x->first_start = -1;
    x->start = -1;
    x->remaining = j->job.duration;
    x->rate = 1.0;
    x->queued_since = j->job.submit;
    x->ac_share = -1;       /* in no account aggregate (fs_acct_*) */
    x->cx_pos = UINT32_MAX;
}

/* fs_model_slots.c: a free slot, NO_SLOT out of memory or slots. */
static inline uint32_t fs_slot_alloc(fs_model_t *m)
{
    if (m->js.n_free)
        return m->js.free_slots[--m->js.n_free];
    if (m->js.n_slots >= NO_SLOT - 1 ||
        fs_grow((void **)&m->js.slots, &m->js.cap_slots, m->js.n_slots + 1, sizeof *m->js.slots))
        return NO_SLOT;
    return (uint32_t)m->js.n_slots++;
}

/* fs_model_slots.c: the job's run record back (never fails: the stack of
 * given-back records has room for every record there is). */
static inline void fs_slot_run_give_back(fs_model_t *m, fs_jobrt_t *j)
{
    m->js.run_free[m->js.n_run_free++] = j->r;
    j->r = NULL;
}

/* fs_model_accounts.c.  An attempt's computing, checkpoint and start-up GPU-s at its own share
 * (fs_jobrun_t.gs_*): a job whose share changes between attempts (a
 * shared GPU's replica, then a whole GPU after a requeue) is not priced at
 * its last share for all of them in /summary's split. */
static inline void fs_acct_shares_open(fs_jobrt_t *j)
{
    fs_jobrun_t *x = j->r;
    double sh = gpu_share(j);
    x->sh_var |= x->milli_asked != 0;
    x->sh_open = 1;
    x->gs_comp -= sh * fs_time_to_s(x->w_compute);
    x->gs_ckpt -= sh * fs_time_to_s(x->w_ckpt);
    x->gs_start -= sh * fs_time_to_s(x->w_startup);
}

static inline void fs_acct_shares_close(fs_jobrt_t *j)
{
    fs_jobrun_t *x = j->r;
    double sh = gpu_share(j);
    x->sh_open = 0;
    x->gs_comp += sh * fs_time_to_s(x->w_compute);
    x->gs_ckpt += sh * fs_time_to_s(x->w_ckpt);
    x->gs_start += sh * fs_time_to_s(x->w_startup);
}

/* The useful GPU-s of a job whose work kept is `kept` us now: its duration
 * at its share, or (sh_var) each attempt's kept work at its own share. */
static inline double fs_acct_useful_gpu_s(const fs_jobrt_t *j, fs_time_t kept)
{
    kept = kept > 0 ? kept : 0;
    if (!j->r->sh_var)
        return (double)j->job.gpus * j->job.gpu_milli / 1000.0 * fs_time_to_s(kept);
    return j->r->u_gs + gpu_share(j) * fs_time_to_s(kept - j->r->u_p);
}

/* fs_model_attempt.c.  The policy's job_end for a job whose GPUs are already freed: while it
 * runs, the job cannot be preempted (fs_model_preempt refuses it). */
static inline void fs_att_end_callback(fs_model_t *m, uint32_t slot)
{
    if (!m->pol->job_end)
        return;
    m->ending = slot + 1;
    m->pol->job_end(m->pol_state, m, slot);
    m->ending = 0;
}

#endif
