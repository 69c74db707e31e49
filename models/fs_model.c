#include "fs_model.h"
#include "fs_taint.h"
#include "fs_place.h"
#include "fs_startup.h"
#include "fs_usage.h"
#include "fs_policy.h"
#include "fs_recovery.h"
#include "../sim/fs_alloc.h"
#include "fs_fleetcfg.h"
#include "fs_catalog.h"
#include "fs_power.h"
#include "fs_sharing.h"

#include <math.h>
#include <strings.h>
#include <string.h>

#define BATCH 4096
#define NO_SLOT UINT32_MAX

enum { FS_WAIT_QUOTA = 1, FS_WAIT_RESERVED = 2, FS_WAIT_BLOCKED = 3 };  /* fs_model_t.wait_label */
enum { EV_JOB_END = 1, EV_SAMPLE = 2, EV_POLICY = 3, EV_MODULE = 4, EV_RECOVER = 5,
       EV_DRAIN_CAP = 6 };
/* The drain cap fires after every sample of its instant. */
#define PRIO_DRAIN_CAP (FS_PRIO_SAMPLE + 5)
/* Jobs named in a message about jobs that cannot go on. */
#define NAMED_JOBS 5
/* EV_RECOVER data: the failure is noticed (detection over), or the job is
 * back in the queue (requeue and backoff over). */
enum { RC_DETECTED = 1, RC_REQUEUE = 2 };

/* The jobs holding GPUs on one node (running, or recovering and still
 * holding), in no order; swap-remove.  Per node: O(jobs on the node). */
typedef struct nodevec {
    uint32_t *v;
    size_t n, cap;
} nodevec_t;

typedef struct module {
    const fs_module_ops_t *ops;
    void *ud;
} module_t;

struct fs_model {
    const fs_config_t *cfg;
    fs_sim_t sim;
    fs_cluster_t cluster;
    fs_placer_t *placer;    /* scheduler.placement (models/fs_place.h) */
    fs_source_t *src;
    fs_sink_t sink;
    const fs_policy_ops_t *pol;
    void *pol_state;

    /* the arrival stream, one batch at a time */
    fs_job_t *batch;
    size_t batch_n, batch_i;
    int src_done;
    int truncated;          /* the trace went on past the horizon */
    fs_time_t horizon;      /* cfg->horizon; with cfg->horizon_auto, the last
                               submission once the stream has ended */
    fs_time_t last_arrival; /* submission of the last job taken (-1: none) */

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
    const uint32_t *start_pools; /* fs_model_start_in: the pools to place in (else NULL) */
    size_t start_n;

    /* pool sets: set k -> pools set_pool[set_off[k] .. set_off[k+1]); source GPU
     * type t -> set type_set[t]; derived sets (dsets, derived_set): single-node
     * jobs (FS_JOB_SINGLE_NODE) of g GPUs -> the pools of their set with
     * gpus_per_node >= g; a tenant's jobs -> the pools of their set whose
     * taints (models/fs_taint.h) it tolerates */
    uint32_t *set_pool;
    size_t set_pool_n, set_pool_cap;
    size_t *set_off;        /* n_sets + 1 entries */
    size_t n_sets, set_off_cap;
    int32_t *type_set;
    size_t n_types, cap_type_set;
    struct dset { int32_t base; int kind; int64_t key; int32_t set; } *dsets;
    size_t n_dsets, cap_dsets;
    int tainted;            /* some pool has taints */

    /* counters and exact integrals of piecewise-constant state */
    uint64_t queued, running, done, submitted, rejected;
    uint64_t gpus_queued;   /* GPUs requested by queued jobs */
    fs_time_t last_settle;
    fs_time_t last_change;
    uint32_t ending;        /* slot + 1 of the job whose job_end callback runs (0: none):
                               it still says RUNNING but holds nothing, and cannot be
                               preempted */
    double int_busy, int_up, int_queued, int_system;   /* x-seconds */
    double win_busy, win_up;        /* the same over the measurement window */
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
    double smp_alloc;       /* int_alloc at the last sample */
    /* the jobs' accounts (held, computing, ckpt, start-up GPU-s) of all jobs
     * up to the last sample: the /timeline held split (acct_now) */
    double smp_held, smp_compute, smp_ckpt, smp_startup;
    /* The jobs' accounts as they accrue (acct_*; kept only with a timeline):
     * every settled increment of every job (not replicas), and what is not
     * settled yet as aggregates: running jobs (sum of GPU shares and of
     * share x attempt start, s), those of them in plain compute (share and
     * share x settled_at), recovering jobs' holds (GPUs and GPUs x
     * settled_at), and a list of the running jobs with phases (checkpoint
     * writes, start-up, restore), advanced one by one at a sample. */
    int acct_on;
    double ac_held, ac_comp, ac_ckpt, ac_startup;
    double ac_run_s, ac_run_t, ac_pure_s, ac_pure_t, ac_rec_s, ac_rec_t;
    uint32_t *cx;
    size_t n_cx, cap_cx;
    fs_time_t win_lo, win_hi;       /* [warmup, horizon] */
    double useful_gpu_s;
    uint64_t progress_mark;
    const fs_model_progress_t *progress;

    /* the fleet: reasons each node is out of service, speed factors */
    uint32_t *node_holds;   /* NULL until a node first goes down */
    uint32_t nodes_out;     /* nodes with node_holds > 0 */
    double *node_speed;     /* NULL: every node at 1.0 */
    int capped;             /* some pool has a power cap or a thermal limit (cap_speed) */
    int shared;             /* some pool shares its GPUs (cluster.pools[].sharing) */
    int fail_xid;           /* the failure being applied shows an Xid (FS_DOWN_FAIL_XID) */
    nodevec_t *nidx;        /* node -> jobs on it; NULL until a fleet op needs it */
    uint32_t *scr;          /* scratch: jobs hit by a failure */
    size_t scr_cap;
    uint8_t *pods;          /* scratch: fs_model_pods's marks */
    size_t pods_cap;
    /* recovery (docs/recovery.md) */
    uint64_t recovering;    /* jobs between a failure and the queue */
    uint64_t interruptions; /* running jobs interrupted by failures */
    double lost_gpu_s, ckpt_gpu_s;
    uint64_t preemptions;   /* fs_model_preempt calls */
    double lost_preempt_gpu_s; /* the part of lost_gpu_s lost to them */
    double *pool_mttf;      /* young/daly: node MTTF per pool, s (NULL until needed; < 0 unknown) */
    int finishing;          /* in fs_model_finish: rows end at end_at */
    fs_time_t end_at;
    fs_usage_t *usage;      /* per-pool, per-day integrals for the cost model (owned) */
    /* cost.energy: power (energy_hold): per pool its GPUs' TDP, power limit
     * and idle draw (NULL: the key is off); per GPU of the pools whose GPUs
     * are shared (fractions, replicas, MIG) the time its draw was added up
     * to (allocated on the first shared hold) */
    struct epool { double tdp, lim, idle; uint64_t gpu0; } *epool;
    fs_time_t *eunit;
    struct ehold { fs_time_t ready; double w; } *escr;
    size_t escr_cap;
    fs_startup_t *startup;  /* pod start-up (owned), NULL: jobs compute once placed */
    double startup_gpu_s;   /* GPU-s held starting, jobs emitted so far */
    /* the held split of capacity state busy (#15, docs/results.md):
     * int_alloc integrates the cluster's allocated milli-GPUs; the others
     * are sums over the jobs emitted so far (replicas not included) */
    double int_alloc;       /* GPU-s allocated (shares of shared GPUs as shares) */
    double job_held_gpu_s;  /* GPU-s jobs held: attempts and failure detection */
    double job_compute_gpu_s; /* GPU-s jobs computed (work kept or later lost) */
    double job_idle_gpu_s;  /* of it, by jobs whose activity is zero (telemetry duty 0) */
    double job_lost_gpu_s;  /* GPU-s of that compute whose work was lost */
    const fs_gate_ops_t *gate; /* the gate module's (cloud burst rules), NULL: none */
    void *gate_ud;
    const fs_module_ops_t *pend; /* the module with a pending hook, NULL: none */
    void *pend_ud;
    int queue_hooks;        /* a gate or a pending hook: admit() calls queue_entered */

    module_t *modules;
    size_t n_modules, cap_modules;
    /* service replicas (FS_JOB_SERVICE; models/fs_service.h) */
    fs_replica_hook_t rhook;
    uint64_t svc_live;      /* replicas submitted and not ended (queued, running, recovering) */
    uint64_t svc_queued;    /* the queued ones */
    uint64_t svc_running;   /* the running ones */
    int pass_wanted;        /* this instant had an event a policy may act on */
    size_t after_pass;      /* the module with an after_pass op: its id + 1; 0 none */
    int after_pass_idle;    /* call it after a pass that left nothing queued too */
    /* cordoned nodes (fs_model_node_cordon): their GPUs held by running
     * pods stay in service in the capacity states; int_cordon_idle: the
     * integral of their other GPUs */
    uint32_t *cordon;
    size_t n_cordon, cap_cordon;
    double int_cordon_idle;

    /* pending events that cannot start a queued job: the timeline sample,
     * the drain cap, and module events at FS_PRIO_FAILURE (a failure only
     * takes capacity away).  When these are all that is pending, nothing
     * runs and jobs wait, nothing can ever start them (stuck()). */
    uint8_t sample_pending, cap_pending;
    uint8_t sample_last;    /* the run's closing /timeline row (fs_model_finish): no next */
    fs_time_t last_sample;  /* time of the last /timeline row, -1 none yet */
    uint64_t inert_pending;

    fs_error_t err;
};

/* ---- accessors ----------------------------------------------------------- */

fs_time_t fs_model_now(const fs_model_t *m) { return m->sim.now; }
fs_jobrt_t *fs_model_job(fs_model_t *m, uint32_t slot) { return &m->slots[slot]; }
size_t fs_model_slots(const fs_model_t *m) { return m->n_slots; }
const fs_cluster_t *fs_model_cluster(const fs_model_t *m) { return &m->cluster; }
const fs_config_t *fs_model_config(const fs_model_t *m) { return m->cfg; }
uint64_t fs_model_jobs_done(const fs_model_t *m) { return m->done; }
uint64_t fs_model_jobs_queued(const fs_model_t *m) { return m->queued; }

int fs_model_pods(fs_model_t *m, const uint8_t **mark)
{
    *mark = NULL;
    if (!m->pol->with_pods)
        return 0;
    if (fs_grow((void **)&m->pods, &m->pods_cap, m->n_slots + 1, 1))
        return FS_ENOMEM;
    memset(m->pods, 0, m->n_slots);
    int rc = m->pol->with_pods(m->pol_state, m, m->pods);
    if (!rc)
        *mark = m->pods;
    return rc;
}
uint64_t fs_model_jobs_running(const fs_model_t *m) { return m->running; }
uint64_t fs_model_jobs_recovering(const fs_model_t *m) { return m->recovering; }
const fs_sim_t *fs_model_sim(const fs_model_t *m) { return &m->sim; }
const char *fs_model_tenant_name(const fs_model_t *m, int32_t i)
{
    return i < 0 ? NULL : fs_source_tenant_name(m->src, i);
}

static void fail(fs_model_t *m, int code, const char *what)
{
    if (m->err.code == 0)
        fs_error_set(&m->err, code, "%s: %s", what, fs_error_describe(code));
    fs_sim_fail(&m->sim, code);
}

/* A sink callback failed: its own message (the writer's, with the file and
 * the real errno) when it left one in sink.err, else a generic one. */
static void fail_sink(fs_model_t *m, int code, const char *what)
{
    if (m->err.code == 0 && m->sink.err && m->sink.err->code == code && m->sink.err->msg[0])
        m->err = *m->sink.err;
    fail(m, code, what);
}

/* GPUs in service: those of up nodes, and those of drained or cordoned
 * nodes that still run a pod (out of service for placement only). */
static inline uint64_t in_service(const fs_model_t *m)
{
    return m->cluster.gpus_up + m->cluster.gpus_busy_down;
}

/* Adds dt seconds of the current state to the capacity-state integrals
 * (#15): GPUs in the fleet, out of service (total - up), and the free up
 * GPUs (up - busy) as waiting while jobs or replicas are queued, else idle.
 * Busy is int_busy.  Each state is integrated on its own, so none can go
 * below zero by rounding. */
static inline void capstates_add(const fs_model_t *m, double dt, double *total, double *down,
                                 double *waiting, double *idle, double *frag)
{
    double tot = (double)m->cluster.gpus_total, up = (double)in_service(m);
    double free_up = up - (double)m->cluster.gpus_busy;
    *total += dt * tot;
    *down += dt * (tot - up);
    if (m->queued > 0) {
        *waiting += dt * free_up;
        *frag += dt * m->frag_now;     /* <= free_up: a part of it (tested on every run) */
    } else {
        *idle += dt * free_up;
    }
}

/* The free GPUs that no queued pod fits on (#15, docs/results.md "The
 * waiting split"): per pool, the up nodes with fewer free GPUs than the
 * smallest pod of a queued job that may use the pool (every free GPU of a
 * pool that no queued job may use); a MIG pool's free GPUs when no queued
 * MIG pod asks a profile of its layout.  Recomputed when a node or the
 * queue changed: O(pools x GPUs per node). */
static void frag_refresh(fs_model_t *m)
{
    if (!m->frag_stale && m->frag_cgen == m->cluster.gen)
        return;
    double frag = 0;
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {
        const fs_pool_t *pl = &m->cluster.pools[p];
        if (pl->mig) {
            if (!m->qmig[p])
                frag += (double)(pl->gpus_up - pl->gpus_busy);
            continue;
        }
        const uint32_t *q = m->qdem + m->qdem_off[p];
        uint32_t dmin = 1;
        while (dmin <= pl->gpn && !q[dmin])
            dmin++;
        for (uint32_t k = 1; k < dmin && k <= pl->gpn; k++)
            frag += (double)k * pl->lvl_n[k];
    }
    m->frag_now = frag;
    m->frag_cgen = m->cluster.gen;
    m->frag_stale = 0;
}

/* Waiting GPU-s that are not fragmented, held back by the policy: under
 * the label of its mechanism (quota for Kueue and Volcano, reserved with
 * backfill, blocked otherwise: a gang larger than what is free, or the
 * head of a strict order). */
static void held_back_split(const fs_model_t *m, double held, double *quota, double *reserved,
                            double *blocked)
{
    *quota = m->wait_label == FS_WAIT_QUOTA ? held : 0;
    *reserved = m->wait_label == FS_WAIT_RESERVED ? held : 0;
    *blocked = m->wait_label == FS_WAIT_BLOCKED ? held : 0;
}

/* The GPUs held by pods on the nodes cordoned for a MIG re-cut
 * (fs_model_node_cordon), and all their GPUs: the re-cut's drain cost
 * (gpu_s_mig_drain) is the rest.  O(cordoned nodes x GPUs per node). */
static double cordon_busy(const fs_model_t *m)
{
    double b = 0;
    for (size_t i = 0; i < m->n_cordon; i++)
        b += (double)fs_cluster_node_busy(&m->cluster, m->cordon[i]);
    return b;
}

static double cordon_gpus(const fs_model_t *m)
{
    double g = 0;
    for (size_t i = 0; i < m->n_cordon; i++)
        g += (double)m->cluster.pools[m->cluster.node_pool[m->cordon[i]]].gpn;
    return g;
}

/* Integrates the state since the last change up to t. */
static void settle(fs_model_t *m, fs_time_t t)
{
    double dt = fs_time_to_s(t - m->last_settle);
    if (dt > 0) {
        if (m->n_cordon)
            m->int_cordon_idle += dt * (cordon_gpus(m) - cordon_busy(m));
        fs_usage_settle(m->usage, &m->cluster, m->last_settle, t);
        m->int_busy += dt * (double)m->cluster.gpus_busy;
        m->int_up += dt * (double)in_service(m);
        m->int_alloc += dt * ((double)m->cluster.milli_busy / 1000.0);
        if (m->queued > 0)
            frag_refresh(m);
        capstates_add(m, dt, &m->int_total, &m->int_down, &m->int_waiting, &m->int_idle,
                      &m->int_frag);
        /* jobs only: replicas are not in the job statistics */
        m->int_queued += dt * (double)(m->queued - m->svc_queued);
        m->int_system += dt * (double)(m->queued + m->running + m->recovering - m->svc_live);
        fs_time_t lo = m->last_settle > m->win_lo ? m->last_settle : m->win_lo;
        fs_time_t hi = t < m->win_hi ? t : m->win_hi;
        if (hi > lo) {
            double w = fs_time_to_s(hi - lo);
            m->win_busy += w * (double)m->cluster.gpus_busy;
            m->win_up += w * (double)in_service(m);
        }
        m->last_settle = t;
    }
}

/* ---- pool sets ---------------------------------------------------------- */

/* Makes sure source GPU type t has its pool set (built from the type's name
 * the first time it is seen).  Returns 0 or FS_ENOMEM. */
/* Opens a new set (its pools are appended with set_add, then set_end). */
static int set_begin(fs_model_t *m)
{
    if (m->n_sets >= INT16_MAX)     /* fs_jobrt_t.type_pools is 16 bits */
        return FS_ELIMIT;
    if (fs_grow((void **)&m->set_off, &m->set_off_cap, m->n_sets + 2, sizeof *m->set_off))
        return FS_ENOMEM;
    if (m->n_sets == 0)
        m->set_off[0] = 0;
    return 0;
}

static int set_add(fs_model_t *m, uint32_t p)
{
    if (fs_grow((void **)&m->set_pool, &m->set_pool_cap, m->set_pool_n + 1, sizeof *m->set_pool))
        return FS_ENOMEM;
    m->set_pool[m->set_pool_n++] = p;
    return 0;
}

static int32_t set_end(fs_model_t *m)
{
    m->set_off[++m->n_sets] = m->set_pool_n;
    return (int32_t)(m->n_sets - 1);
}

static int ensure_set(fs_model_t *m, int32_t t)
{
    while (m->n_types <= (size_t)t) {
        const char *name = fs_source_gpu_type_name(m->src, (int32_t)m->n_types);
        if (fs_grow((void **)&m->type_set, &m->cap_type_set, m->n_types + 1, sizeof *m->type_set))
            return FS_ENOMEM;
        int rc = set_begin(m);
        if (rc)
            return rc;
        for (uint32_t p = 0; name && p < m->cluster.n_pools; p++) {
            /* the pool's GPU model or name, or one of 'A|B|C' (openb gpu_spec);
             * "V100M32" also names machine-list pools "V100M32x8" */
            if (!fs_fleetcfg_type_allows(name, m->cluster.pools[p].name, m->cluster.pools[p].gpu))
                continue;
            if (set_add(m, p))
                return FS_ENOMEM;
        }
        m->type_set[m->n_types++] = set_end(m);
    }
    return 0;
}

enum { DSET_NODE_GPUS = 0, DSET_TENANT = 1 };

/* The tolerations of tenant t (scheduler.tolerations' entry of its name), NULL none. */
static const char *tolerations_of(const fs_model_t *m, int32_t t)
{
    const fs_sched_cfg_t *sc = &m->cfg->scheduler;
    const char *name = t >= 0 ? fs_source_tenant_name(m->src, t) : NULL;
    for (size_t i = 0; name && i < sc->n_tolerations; i++)
        if (strcmp(sc->toleration_tenants[i], name) == 0)
            return sc->toleration_lists[i];
    return NULL;
}

/* Pool p stays in a derived set: single-node jobs of `key` GPUs need nodes
 * of >= key GPUs (Kubernetes places a pod on one node: openb, PAI pods;
 * traces set FS_JOB_SINGLE_NODE); tenant `key`'s jobs need its taints
 * tolerated. */
static int dset_keeps(const fs_model_t *m, uint32_t p, int kind, int64_t key)
{
    if (kind == DSET_NODE_GPUS)
        return (uint64_t)key <= m->cluster.pools[p].gpn;
    return fs_taint_tolerated(m->cfg->cluster.pools[p].taints, tolerations_of(m, (int32_t)key));
}

/* The pools of set `base` (-1: all) that dset_keeps(kind, key): base itself
 * when it keeps all of them, else a new set (possibly empty: the job can
 * never start), made once per (base, kind, key). */
static int derived_set(fs_model_t *m, int32_t base, int kind, int64_t key, int32_t *out)
{
    for (size_t i = 0; i < m->n_dsets; i++)
        if (m->dsets[i].base == base && m->dsets[i].kind == kind && m->dsets[i].key == key) {
            *out = m->dsets[i].set;
            return 0;
        }
    size_t b = base < 0 ? 0 : m->set_off[base], e = base < 0 ? m->cluster.n_pools : m->set_off[base + 1];
    int all = 1;
    for (size_t i = b; i < e && all; i++)
        all = dset_keeps(m, base < 0 ? (uint32_t)i : m->set_pool[i], kind, key);
    int32_t set = base;
    if (!all) {
        int rc = set_begin(m);
        if (rc)
            return rc;
        for (size_t i = b; i < e; i++) {
            uint32_t p = base < 0 ? (uint32_t)i : m->set_pool[i];
            if (dset_keeps(m, p, kind, key) && set_add(m, p))
                return FS_ENOMEM;
        }
        set = set_end(m);
    }
    if (fs_grow((void **)&m->dsets, &m->cap_dsets, m->n_dsets + 1, sizeof *m->dsets))
        return FS_ENOMEM;
    m->dsets[m->n_dsets++] = (struct dset){base, kind, key, set};
    *out = set;
    return 0;
}

/* Iterates the pools a job may use: any pool (set < 0) or its set. */
#define FOR_POOLS(m, set, p)                                                        \
    for (size_t i_ = (set) < 0 ? 0 : (m)->set_off[(set)],                           \
                e_ = (set) < 0 ? (m)->cluster.n_pools : (m)->set_off[(set) + 1];    \
         i_ < e_ && ((p) = (set) < 0 ? (uint32_t)i_ : (m)->set_pool[i_], 1); i_++)

/* Any pool of the job's type (out of line: the loop's register saves
 * would otherwise be paid by the common case below). */
__attribute__((noinline)) static int fits_pools(const fs_model_t *m, const fs_jobrt_t *j)
{
    uint32_t p;
    if (j->job.mig) {   /* MIG pods: only MIG pools with the profile (docs/mig.md) */
        FOR_POOLS(m, j->type_pools, p)
            if (fs_cluster_mig_fits(&m->cluster, p, j->job.mig, j->job.gpus) &&
                (!m->gate || m->gate->allows(m->gate_ud, &m->cluster, p, &j->job, m->sim.now)))
                return 1;
        return 0;
    }
    fs_podreq_t q = fs_jobq_podreq(&j->job);
    FOR_POOLS(m, j->type_pools, p)
        if ((j->job.flags & FS_JOB_SINGLE_NODE ? fs_cluster_fits_pod(&m->cluster, p, &q)
                                               : fs_cluster_fits_req(&m->cluster, p, j->job.gpus,
                                                                     j->job.gpu_milli)) &&
            (!m->gate || m->gate->allows(m->gate_ud, &m->cluster, p, &j->job, m->sim.now)))
            return 1;
    return 0;
}

const fs_cluster_t *fs_model_one_pool(const fs_model_t *m)
{
    return m->cluster.one_whole && !m->gate ? &m->cluster : NULL;
}

int fs_model_fits(const fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = &m->slots[slot];
    /* the common case: whole GPUs of any type on a one-pool fleet */
    const fs_cluster_t *one = fs_model_one_pool(m);
    if (one && j->type_pools < 0 && j->job.gpu_milli >= FS_GPU_MILLI_WHOLE && j->job.gpus &&
        !(j->job.flags & FS_JOB_SINGLE_NODE && (j->job.cpu_milli || j->job.mem_mib)))
        return fs_cluster_fits(one, 0, j->job.gpus);
    return fits_pools(m, j);
}

size_t fs_model_pool_set(const fs_model_t *m, int32_t set, const uint32_t **pools)
{
    if (set < 0) {
        *pools = NULL;
        return m->cluster.n_pools;
    }
    *pools = m->set_pool + m->set_off[set];
    return m->set_off[set + 1] - m->set_off[set];
}

static int could_ever_fit(const fs_model_t *m, const fs_jobrt_t *j)
{
    uint32_t p;
    if (j->job.mig) {
        FOR_POOLS(m, j->type_pools, p)
            if (fs_cluster_mig_could_fit(&m->cluster, p, j->job.mig, j->job.gpus))
                return 1;
        return 0;
    }
    fs_podreq_t q = fs_jobq_podreq(&j->job);
    FOR_POOLS(m, j->type_pools, p)
        if (j->job.flags & FS_JOB_SINGLE_NODE ? fs_cluster_could_fit_pod(&m->cluster, p, &q)
                                              : fs_cluster_could_fit(&m->cluster, p, j->job.gpus))
            return 1;
    return 0;
}

/* ---- rows ------------------------------------------------------------------ */

static double gpu_share(const fs_jobrt_t *j)
{
    return (double)j->job.gpus * j->job.gpu_milli / 1000.0;
}

/* The activity profile of a job class (telemetry:). */
static const fs_activity_cfg_t *activity_of(const fs_model_t *m, int32_t job_class)
{
    const fs_telemetry_cfg_t *tc = &m->cfg->telemetry;
    for (size_t i = 0; i < tc->n_activity; i++)
        if ((int64_t)tc->activity[i].job_class == job_class)
            return &tc->activity[i];
    return &tc->dflt;
}

/* A job's activity: its class's profile, or, when its trace recorded its GPU
 * utilization (fs_job_t.rec_util: PAI's sensor table), the class's with duty
 * set to it and sm, tensor and dram scaled with it (a job that runs kernels
 * half the time is half as active; an assumption, docs/observability.md
 * "Recorded utilization"), each at most 1. */
static fs_activity_cfg_t job_activity(const fs_model_t *m, const fs_jobq_t *job)
{
    fs_activity_cfg_t a = *activity_of(m, job->job_class);
    double u = fs_job_util(job->rec_util);
    if (u >= 0) {
        double k = a.duty > 0 ? u / a.duty : 0;
        a.sm = fmin(1, a.sm * k);
        a.tensor = fmin(1, a.tensor * k);
        a.dram = fmin(1, a.dram * k);
        a.duty = u;
    }
    return a;
}

/* ckpt_s, recovery_s, ettr, goodput of a row (docs/recovery.md): useful
 * compute = wall computing minus wall computing work later lost. */
static void recovery_cols(const fs_model_t *m, const fs_jobrt_t *j, const fs_jobrun_t *x,
                          fs_job_row_t *r)
{
    fs_time_t at = m->finishing ? m->end_at : m->sim.now;
    double useful = fs_time_to_s(x->w_compute - x->w_lost);
    r->ckpt_s = fs_time_to_s(x->w_ckpt);
    r->recovery_s = fs_time_to_s(x->w_recovery);
    r->ettr = x->first_start >= 0 && at > x->first_start ? useful / fs_time_to_s(at - x->first_start)
                                                         : NAN;
    /* a job whose share changed between attempts (sh_var): each attempt's
     * computing at its own share, less what was lost (lost_gpu_s is priced
     * at the share of the attempt that lost it) */
    double useful_gs = !x->sh_var ? gpu_share(j) * useful
                     : x->gs_comp + (x->sh_open ? gpu_share(j) * fs_time_to_s(x->w_compute) : 0) -
                           x->lost_gpu_s;
    r->goodput = x->held_gpu_s > 0 ? useful_gs / x->held_gpu_s : NAN;
    /* Google's ML Productivity Goodput = scheduling x runtime x program
     * (docs/recovery.md "Goodput") */
    double span = gpu_share(j) * fs_time_to_s(at - j->job.submit);  /* at: its row's end */
    r->sched_goodput = x->held_gpu_s > 0 && span > 0 ? x->held_gpu_s / span : NAN;
    r->program_goodput = x->held_gpu_s > 0 ? activity_of(m, j->job.job_class)->mfu : NAN;
}

/* The run record of a job that has not run yet: nothing run, queued since
 * its submission. */
static void run_init(fs_jobrun_t *x, const fs_jobrt_t *j)
{
    memset(x, 0, sizeof *x);
    x->first_start = -1;
    x->start = -1;
    x->remaining = j->job.duration;
    x->rate = 1.0;
    x->queued_since = j->job.submit;
    x->ac_share = -1;       /* in no account aggregate (acct_*) */
    x->cx_pos = UINT32_MAX;
}

static int is_replica(const fs_jobrt_t *j) { return (j->job.flags & FS_JOB_SERVICE) != 0; }

/* An attempt's computing, checkpoint and start-up GPU-s at its own share
 * (fs_jobrun_t.gs_*): a job whose share changes between attempts (a
 * shared GPU's replica, then a whole GPU after a requeue) is not priced at
 * its last share for all of them in /summary's split. */
static void shares_open(fs_jobrt_t *j)
{
    fs_jobrun_t *x = j->r;
    double sh = gpu_share(j);
    x->sh_var |= x->milli_asked != 0;
    x->sh_open = 1;
    x->gs_comp -= sh * fs_time_to_s(x->w_compute);
    x->gs_ckpt -= sh * fs_time_to_s(x->w_ckpt);
    x->gs_start -= sh * fs_time_to_s(x->w_startup);
}

static void shares_close(fs_jobrt_t *j)
{
    fs_jobrun_t *x = j->r;
    double sh = gpu_share(j);
    x->sh_open = 0;
    x->gs_comp += sh * fs_time_to_s(x->w_compute);
    x->gs_ckpt += sh * fs_time_to_s(x->w_ckpt);
    x->gs_start += sh * fs_time_to_s(x->w_startup);
}

/* ---- the jobs' accounts as they accrue (the /timeline held split) --------
 * Kept only with a timeline (m->acct_on).  The invariants: ac_held,
 * ac_comp, ac_ckpt, ac_startup hold every settled increment of the jobs'
 * accounts (held_gpu_s, and w_compute, w_ckpt, w_startup x the share);
 * ac_run_s / ac_run_t = sum over running jobs of share / share x start;
 * ac_pure_s / ac_pure_t the same with settled_at for the running jobs in
 * plain compute (no checkpoints, no start-up or restore), whose compute
 * since settled_at is the wall time since; m->cx the other running jobs;
 * ac_rec_s / ac_rec_t = sum over recovering jobs of held GPUs / held GPUs x
 * settled_at.  Replicas are not jobs: never in them. */
#define CX_NONE UINT32_MAX

static inline double tsec(fs_time_t t) { return fs_time_to_s(t); }

/* An attempt starts (after attempt_begin set its phases). */
static int acct_run_add(fs_model_t *m, fs_jobrt_t *j, uint32_t slot)
{
    fs_jobrun_t *r = j->r;
    if (!m->acct_on || is_replica(j))
        return 0;
    double sh = gpu_share(j);
    if (r->ckpt_every != 0 || r->phase != FS_PHASE_COMPUTE) {
        if (fs_grow((void **)&m->cx, &m->cap_cx, m->n_cx + 1, sizeof *m->cx))
            return FS_ENOMEM;
        r->cx_pos = (uint32_t)m->n_cx;
        m->cx[m->n_cx++] = slot;
    } else {
        m->ac_pure_s += sh;
        m->ac_pure_t += sh * tsec(r->settled_at);
    }
    r->ac_share = sh;
    m->ac_run_s += sh;
    m->ac_run_t += sh * tsec(r->start);
    return 0;
}

/* The attempt stops (after its last progress). */
static void acct_run_sub(fs_model_t *m, fs_jobrt_t *j)
{
    fs_jobrun_t *r = j->r;
    double sh = r->ac_share;
    if (sh < 0)
        return;
    m->ac_run_s -= sh;
    m->ac_run_t -= sh * tsec(r->start);
    if (r->cx_pos == CX_NONE) {
        m->ac_pure_s -= sh;
        m->ac_pure_t -= sh * tsec(r->settled_at);
    } else {
        uint32_t last = m->cx[--m->n_cx];
        if (r->cx_pos < m->n_cx) {
            m->cx[r->cx_pos] = last;
            m->slots[last].r->cx_pos = r->cx_pos;
        }
        r->cx_pos = CX_NONE;
    }
    r->ac_share = -1;
}

/* A replica's event to its service (a hook error stops the run). */
static void replica_event(fs_model_t *m, uint32_t slot, int event, fs_time_t startup)
{
    if (!m->rhook.fn || m->err.code)
        return;
    int rc = m->rhook.fn(m->rhook.ud, m, slot, event, startup);
    if (rc)
        fail(m, rc, "service replica");
}

static int emit(fs_model_t *m, const fs_jobrt_t *j, int state)
{
    if (is_replica(j))  /* replicas are rows of /services, not /jobs */
        return 0;
    fs_jobrun_t blank;
    const fs_jobrun_t *x = j->r;
    if (!x) {   /* never ran */
        run_init(&blank, j);
        x = &blank;
    }
    fs_job_row_t r;
    memset(&r, 0, sizeof r);    /* padding too: rows are compared and copied whole */
    r.id = j->job.id;
    r.tenant = j->job.tenant;
    r.pool = x->first_start >= 0 ? (int32_t)x->place.pool : -1;
    r.gpus = j->job.gpus;
    r.gpu_milli = j->job.gpu_milli;
    r.nodes = x->first_start >= 0 ? x->place.n : 0;
    r.restarts = x->restarts;
    r.submit = fs_time_to_s(j->job.submit);
    r.start = x->first_start >= 0 ? fs_time_to_s(x->first_start) : NAN;
    r.end = (state == FS_STATE_COMPLETED || state == FS_STATE_FAILED) ? fs_time_to_s(m->sim.now) : NAN;
    r.wait = x->first_start >= 0 ? fs_time_to_s(x->first_start - j->job.submit) : NAN;
    r.run = x->run_s;
    r.lost_gpu_s = x->lost_gpu_s;
    r.state = state;
    r.preemptions = x->preemptions;
    r.preempt_lost_gpu_s = x->preempt_lost_gpu_s;
    r.startup_s = fs_time_to_s(x->w_startup);
    r.held_gpu_s = x->held_gpu_s;
    r.compute_s = fs_time_to_s(x->w_compute);
    /* /summary's split: each job's accounts at its share (shares_open) */
    double sh = gpu_share(j), g_comp = sh * r.compute_s, g_start = sh * r.startup_s, g_ckpt;
    if (x->sh_var) {
        g_comp = x->gs_comp + (x->sh_open ? g_comp : 0);
        g_start = x->gs_start + (x->sh_open ? g_start : 0);
    }
    m->startup_gpu_s += g_start;
    /* a job still queued at the end counts its time queued up to the end */
    fs_time_t at = m->finishing ? m->end_at : m->sim.now;
    fs_time_t q = x->queued_us + (j->state == FS_JOBRT_QUEUED && state != FS_STATE_REJECTED
                                      ? at - x->queued_since : 0);
    r.queued_s = fs_time_to_s(q);
    recovery_cols(m, j, x, &r);
    g_ckpt = sh * r.ckpt_s;
    if (x->sh_var)
        g_ckpt = x->gs_ckpt + (x->sh_open ? g_ckpt : 0);
    m->ckpt_gpu_s += g_ckpt;
    m->job_held_gpu_s += x->held_gpu_s;
    m->job_compute_gpu_s += g_comp;
    if (j->job.rec_util ? j->job.rec_util == 1 : activity_of(m, j->job.job_class)->duty == 0)
        m->job_idle_gpu_s += g_comp;
    m->job_lost_gpu_s += x->lost_gpu_s;
    fs_usage_job(m->usage, &r);
    int rc = m->sink.job ? m->sink.job(m->sink.ud, &r) : 0;
    if (rc)
        fail_sink(m, rc, "writing a job row");
    return rc;
}

/* The queue counts (jobs, GPUs, replicas) as a job enters or leaves the
 * policy's queue: admission, requeue and preemption; start and withdrawal. */
/* A queued job's pods in the waiting split's counts (frag_refresh): +1 as
 * it enters the queue, -1 (UINT32_MAX) as it leaves. */
static void qdem_count(fs_model_t *m, const fs_jobrt_t *j, uint32_t dlt)
{
    m->frag_stale = 1;
    if (!j->job.gpus)   /* a CPU-only pod uses no GPU */
        return;
    uint32_t p;
    FOR_POOLS(m, j->type_pools, p) {
        const fs_pool_t *pl = &m->cluster.pools[p];
        if (j->job.mig || pl->mig) {
            if (j->job.mig && pl->mig && fs_mig_profile_of_code(pl->mig, j->job.mig) >= 0)
                m->qmig[p] += dlt;
            continue;
        }
        /* a pod needs its GPUs on one node; a gang that may spread, one;
         * a shared pool's replica, one (more never fits there) */
        uint32_t d = pl->share_n ? (j->job.gpus == 1 ? 1 : 0)
                     : j->job.flags & FS_JOB_SINGLE_NODE ? j->job.gpus : 1;
        if (d >= 1 && d <= pl->gpn)
            m->qdem[m->qdem_off[p] + d] += dlt;
    }
}

static void queue_enter(fs_model_t *m, const fs_jobrt_t *j)
{
    m->queued++;
    m->gpus_queued += j->job.gpus;
    m->svc_queued += is_replica(j);
    qdem_count(m, j, 1);
}

static void queue_leave(fs_model_t *m, const fs_jobrt_t *j)
{
    m->queued--;
    m->gpus_queued -= j->job.gpus;
    m->svc_queued -= is_replica(j);
    qdem_count(m, j, UINT32_MAX);   /* -1, modulo 2^32 */
}

/* ---- slots ------------------------------------------------------------------- */

static uint32_t slot_alloc(fs_model_t *m)
{
    if (m->n_free)
        return m->free_slots[--m->n_free];
    if (m->n_slots >= NO_SLOT - 1 ||
        fs_grow((void **)&m->slots, &m->cap_slots, m->n_slots + 1, sizeof *m->slots))
        return NO_SLOT;
    return (uint32_t)m->n_slots++;
}

/* A run record for job j, as run_init leaves it; NULL out of memory.  The
 * stack of given-back records has room for every record there is, so
 * giving one back cannot fail. */
static fs_jobrun_t *run_take(fs_model_t *m, const fs_jobrt_t *j)
{
    enum { CHUNK = 256 };
    fs_jobrun_t *x;
    if (m->n_run_free) {
        x = m->run_free[--m->n_run_free];
    } else {
        if (m->n_run_chunks == 0 || m->run_used == CHUNK) {
            if (fs_grow((void **)&m->run_chunks, &m->cap_run_chunks, m->n_run_chunks + 1,
                        sizeof *m->run_chunks) ||
                fs_grow((void **)&m->run_free, &m->cap_run_free, (m->n_run_chunks + 1) * CHUNK,
                        sizeof *m->run_free))
                return NULL;
            fs_jobrun_t *c = fs_malloc(CHUNK * sizeof *c);
            if (!c)
                return NULL;
            m->run_chunks[m->n_run_chunks++] = c;
            m->run_used = 0;
        }
        x = &m->run_chunks[m->n_run_chunks - 1][m->run_used++];
    }
    run_init(x, j);
    return x;
}

static void run_give_back(fs_model_t *m, fs_jobrt_t *j)
{
    m->run_free[m->n_run_free++] = j->r;
    j->r = NULL;
}

static int slot_free(fs_model_t *m, uint32_t s)
{
    fs_jobrt_t *j = &m->slots[s];
    if (j->r)
        run_give_back(m, j);
    m->slots[s].state = FS_JOBRT_FREE;
    if (fs_grow((void **)&m->free_slots, &m->cap_free, m->n_free + 1, sizeof *m->free_slots))
        return FS_ENOMEM;
    m->free_slots[m->n_free++] = s;
    return 0;
}

/* Useful GPU-s at each attempt's share (fs_jobrun_t.u_*): called when the
 * job goes back to the queue, after its losses and before a restart cost
 * (which is no useful work) and before unshare; the work it has kept since
 * the last call is priced at the share it ran at. */
static void useful_mark(fs_jobrt_t *j)
{
    fs_jobrun_t *x = j->r;
    fs_time_t p = j->job.duration - x->remaining;
    p = p < 0 ? 0 : p;
    x->u_gs += gpu_share(j) * fs_time_to_s(p - x->u_p);
    x->u_p = p;
}

/* The useful GPU-s of a job whose work kept is `kept` us now: its duration
 * at its share, or (sh_var) each attempt's kept work at its own share. */
static double useful_gpu_s(const fs_jobrt_t *j, fs_time_t kept)
{
    kept = kept > 0 ? kept : 0;
    if (!j->r->sh_var)
        return (double)j->job.gpus * j->job.gpu_milli / 1000.0 * fs_time_to_s(kept);
    return j->r->u_gs + gpu_share(j) * fs_time_to_s(kept - j->r->u_p);
}

/* ---- starting and ending jobs ------------------------------------------------ */

static double slowest_node(const fs_model_t *m, const fs_placement_t *p);
static int share_rerate(fs_model_t *m, const fs_placement_t *pl, uint32_t skip);

/* A job queued again asks what it asked before a shared GPU's replica
 * replaced its share (it may start next on a whole-GPU pool). */
static void unshare(fs_jobrt_t *j)
{
    if (j->r->milli_asked) {
        j->job.gpu_milli = (uint16_t)j->r->milli_asked;
        j->r->milli_asked = 0;
    }
}

/* GPU sharing (cluster.pools[].sharing, models/fs_sharing.h): the speed
 * factor of a replica placement from the jobs on its GPU now; 1 for
 * anything else. */
static double share_speed(const fs_model_t *m, const fs_placement_t *pl)
{
    const fs_pool_t *p = &m->cluster.pools[pl->pool];
    if (!p->share_n || pl->milli >= FS_GPU_MILLI_WHOLE || pl->n != 1)
        return 1.0;
    uint32_t used = fs_cluster_slot_used(&m->cluster, p, pl->one.node, pl->gpu);
    return fs_sharing_speed(p->share_kind, p->share_n, fs_sharing_count(p->share_n, used));
}

/* A running job's rate: its base (pool, span, power cap) x its slowest
 * node x the sharing of its GPU. */
static double job_rate(const fs_model_t *m, const fs_jobrt_t *j)
{
    double r = j->r->rate_base * slowest_node(m, &j->r->place);
    return m->shared ? r * share_speed(m, &j->r->place) : r;
}

/* Speed left to a job of this class by its pool's power cap
 * (cluster.pools[].power_cap_w) and thermal limit (telemetry.throttle_c at
 * the pool's ambient_c), the tighter of the two (models/fs_power.h); 1
 * without either.  The thermal limit binds from the attempt's start: the
 * minute or so a GPU takes to warm up to it is not modelled. */
static double cap_speed(const fs_model_t *m, uint32_t pool, const fs_jobq_t *job)
{
    if (pool >= m->cfg->cluster.n_pools)
        return 1.0;
    const fs_pool_cfg_t *pc = &m->cfg->cluster.pools[pool];
    double lim = fs_power_limit_w(pc->power_cap_w,
                                  fs_thermal_limit_w(m->cfg->telemetry.throttle_c, pc->ambient_c));
    if (!(lim > 0))
        return 1.0;
    int cat = m->cluster.pools[pool].catalog;   /* resolved once, at the cluster's start */
    double tdp = cat >= 0 ? fs_catalog_get((size_t)cat)->tdp_w : 0;
    return tdp > 0 ? fs_power_cap_speed(tdp, lim, job_activity(m, job).sm,
                                        m->cfg->telemetry.cap_exponent)
                   : 1.0;
}

/* The speed factor of the slowest node of a placement (synchronous jobs
 * run at the pace of their slowest member). */
static double slowest_node(const fs_model_t *m, const fs_placement_t *p)
{
    if (!m->node_speed)
        return 1.0;
    const fs_slice_t *s = fs_placement_slices(p);
    double f = 1.0;
    for (uint32_t i = 0; i < p->n; i++)
        if (m->node_speed[s[i].node] < f)
            f = m->node_speed[s[i].node];
    return f;
}

static int on_node(const fs_jobrt_t *j, uint32_t node)
{
    const fs_slice_t *s = fs_placement_slices(&j->r->place);
    for (uint32_t i = 0; i < j->r->place.n; i++)
        if (s[i].node == node)
            return 1;
    return 0;
}

/* ---- the node index and attempts ------------------------------------------------ */

static int nidx_push(nodevec_t *v, uint32_t slot)
{
    if (fs_grow((void **)&v->v, &v->cap, v->n + 1, sizeof *v->v))
        return FS_ENOMEM;
    v->v[v->n++] = slot;
    return 0;
}

static void nidx_drop(nodevec_t *v, uint32_t slot)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->v[i] == slot) {
            v->v[i] = v->v[--v->n];
            return;
        }
}

static int nidx_add(fs_model_t *m, uint32_t slot)
{
    const fs_placement_t *p = &m->slots[slot].r->place;
    const fs_slice_t *s = fs_placement_slices(p);
    for (uint32_t i = 0; i < p->n; i++)
        if (nidx_push(&m->nidx[s[i].node], slot))
            return FS_ENOMEM;
    return 0;
}

/* O(slices x jobs per node); a slice already dropped is a no-op. */
static void nidx_del(fs_model_t *m, uint32_t slot)
{
    const fs_placement_t *p = &m->slots[slot].r->place;
    const fs_slice_t *s = fs_placement_slices(p);
    for (uint32_t i = 0; i < p->n; i++)
        nidx_drop(&m->nidx[s[i].node], slot);
}

/* The placement's span factor (cluster.span_speed), or -1 out of memory. */
static double span_factor(const fs_model_t *m, const fs_jobrt_t *j)
{
    const fs_cluster_cfg_t *cc = &m->cfg->cluster;
    if (j->r->place.n < 2 || !fs_recov_span_row(cc, j->job.job_class))
        return 1.0;
    fs_span_t sp;
    if (fs_cluster_span(&m->cluster, &j->r->place, &sp))
        return -1.0;
    return fs_recov_span_factor(cc, j->job.job_class, &sp, m->cluster.topo != NULL);
}

/* A new attempt: restore first after a failure; the checkpoint interval
 * (compute seconds, recovery.checkpoint) turned into work at the rate it
 * starts with, so that a rate change later does not move the checkpoints
 * in the work (a training job checkpoints every N steps). */
/* The MTTF of a node of pool p, s (0: nothing fails), cached; -1 out of
 * memory. */
static double pool_mttf(fs_model_t *m, uint32_t p)
{
    if (!m->pool_mttf) {
        m->pool_mttf = fs_malloc(m->cluster.n_pools * sizeof *m->pool_mttf);
        if (!m->pool_mttf)
            return -1;
        for (uint32_t i = 0; i < m->cluster.n_pools; i++)
            m->pool_mttf[i] = -1;
    }
    if (m->pool_mttf[p] < 0) {
        const fs_pool_t *pp = &m->cluster.pools[p];
        m->pool_mttf[p] = fs_recov_node_mttf_s(m->cfg, pp->name, pp->gpn);
    }
    return m->pool_mttf[p];
}

/* startup: the attempt's pod start-up, us (0: none). */
static int attempt_begin(fs_model_t *m, fs_jobrt_t *j, fs_time_t startup)
{
    const fs_recovery_cfg_t *rc = &m->cfg->recovery;
    j->r->rem0 = j->r->remaining;
    j->r->since_ckpt = j->r->since_wall = 0;
    j->r->phase = FS_PHASE_COMPUTE;
    j->r->phase_left = 0;
    j->r->restore_after = 0;
    if (j->r->need_restore && rc->restore > 0) {
        j->r->phase = FS_PHASE_RESTORE;
        j->r->phase_left = rc->restore;
    }
    j->r->att_startup = startup;
    if (startup > 0) {      /* start-up first, then the restore */
        j->r->restore_after = j->r->phase == FS_PHASE_RESTORE ? j->r->phase_left : 0;
        j->r->phase = FS_PHASE_STARTING;
        j->r->phase_left = startup;
    }
    j->r->need_restore = 0;
    j->r->ckpt_every = 0;
    if (is_replica(j)) {    /* a replica restores nothing and never checkpoints */
        j->r->phase = startup > 0 ? FS_PHASE_STARTING : FS_PHASE_COMPUTE;
        j->r->phase_left = startup;
        j->r->restore_after = 0;
        return 0;
    }
    if (rc->checkpoint == FS_CKPT_NONE)
        return 0;
    double mttf = 0;
    if (rc->checkpoint == FS_CKPT_YOUNG || rc->checkpoint == FS_CKPT_DALY)
        mttf = pool_mttf(m, j->r->place.pool);
    if (mttf < 0)
        return FS_ENOMEM;
    double tau = fs_recov_interval_s(rc, mttf, j->r->place.n);
    if (tau > 0) {
        double w = tau * 1e6 * j->r->rate;
        j->r->ckpt_every = w < 1 ? 1 : w > 9e18 ? INT64_MAX / 4 : (fs_time_t)llround(w);
    }
    return 0;
}

/* A MIG pod: the first of its pools (in order) that has k free instances
 * of its profile on one node; fs_cluster_mig_take picks the node.  The
 * placer's kinds and scores do not apply (docs/mig.md). */
static int mig_place(fs_model_t *m, const uint32_t *pools, size_t n_pools, const fs_jobrt_t *j,
                     fs_placement_t *out)
{
    size_t n = pools ? n_pools : m->cluster.n_pools;
    for (size_t i = 0; i < n; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        if (fs_cluster_mig_take(&m->cluster, p, j->job.mig, j->job.gpus, out))
            return 1;
    }
    return 0;
}

int fs_model_start(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    /* the job's pools: all (NULL) or its type's set; the placer picks */
    const uint32_t *pools = j->type_pools < 0 ? NULL : m->set_pool + m->set_off[j->type_pools];
    size_t n_pools = j->type_pools < 0 ? 0 : m->set_off[j->type_pools + 1] - m->set_off[j->type_pools];
    if (m->start_pools) {   /* fs_model_start_in (a quota flavor's pools) */
        pools = m->start_pools;
        n_pools = m->start_n;
    }
    if (m->gate && !m->gate->pools(m->gate_ud, &m->cluster, &j->job, m->sim.now, &pools, &n_pools))
        return 0;   /* cost.pools burst rules leave no pool now */
    settle(m, m->sim.now);
    {
        fs_podreq_t q = fs_jobq_podreq(&j->job);
        /* the first start takes the job's run record (given back if the
         * job does not fit after all) */
        int first = !j->r;
        if (first && !(j->r = run_take(m, j))) {
            fail(m, FS_ENOMEM, "starting a job");
            return FS_ENOMEM;
        }
        int rc = j->job.mig
                     ? mig_place(m, pools, n_pools, j, &j->r->place)
                     : j->job.flags & FS_JOB_SINGLE_NODE
                     ? fs_placer_place_pod(m->placer, &m->cluster, pools, n_pools, &q, &j->r->place)
                     : fs_placer_place(m->placer, &m->cluster, pools, n_pools, j->job.gpus,
                                       j->job.gpu_milli, &j->r->place);
        if (rc <= 0 && first)
            run_give_back(m, j);
        if (rc < 0) {
            fail(m, rc, "placing a job");
            return rc;
        }
        if (rc == 0)
            return 0;
        /* speed of the pool's GPU type for the job's class, times the
         * placement's span factor (cluster.span_speed), times the slowest
         * node's speed */
        double span = span_factor(m, j);
        if (span < 0) {
            fs_cluster_free(&m->cluster, &j->r->place);
            fs_placement_release(&j->r->place);
            fail(m, FS_ENOMEM, "placing a job");
            return FS_ENOMEM;
        }
        j->r->rate_base = fs_placer_speed(m->placer, j->r->place.pool, j->job.job_class) * span;
        if (m->capped)
            j->r->rate_base *= cap_speed(m, j->r->place.pool, &j->job);
        j->r->rate = j->r->rate_base * slowest_node(m, &j->r->place);
        if (m->shared && m->cluster.pools[j->r->place.pool].share_n) {    /* one replica */
            if (!j->r->milli_asked)
                j->r->milli_asked = j->job.gpu_milli;
            j->job.gpu_milli = (uint16_t)j->r->place.milli;
            j->r->rate *= share_speed(m, &j->r->place);
        }
        j->state = FS_JOBRT_RUNNING;
        shares_open(j);
        if (j->r->first_start < 0)
            j->r->first_start = m->sim.now;
        j->r->queued_us += m->sim.now - j->r->queued_since;
        j->r->start = j->r->settled_at = m->sim.now;
        fs_time_t su = m->startup ? fs_startup_begin(m->startup, &j->r->place, j->job.job_class,
                                                      m->sim.now)
                                  : 0;
        if (su < 0 || attempt_begin(m, j, su) || (m->nidx && nidx_add(m, slot)) ||
            acct_run_add(m, j, slot)) {
            fail(m, FS_ENOMEM, "starting a job");
            return FS_ENOMEM;
        }
        queue_leave(m, j);
        m->running++;
        m->last_change = m->sim.now;
        if (is_replica(j)) {    /* runs until its service retires it */
            m->svc_running++;
            replica_event(m, slot, FS_REPLICA_STARTED, su);
            return m->err.code ? m->err.code : 1;
        }
        fs_time_t dt = fs_recov_finish_wall(j->r, m->cfg->recovery.write_cost);
        fs_event_t ev = {.time = m->sim.now + dt, .type = EV_JOB_END, .entity = slot,
                         .priority = FS_PRIO_COMPLETION};
        rc = fs_sim_schedule(&m->sim, &ev, &j->r->end_ev);
        if (rc) {
            fail(m, rc, "scheduling a completion");
            return rc;
        }
        if (m->shared && (rc = share_rerate(m, &j->r->place, slot)))
            return rc;
        return 1;
    }
}

fs_time_t fs_model_remaining(const fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = &m->slots[slot];
    if (j->state != FS_JOBRT_RUNNING)
        return fs_jobrt_remaining(j);
    fs_jobrun_t c = *j->r;
    fs_recov_advance(&c, m->sim.now - c.settled_at, m->cfg->recovery.write_cost);
    return c.remaining;
}

/* Settles a running job's progress at now (phases, checkpoints, wall
 * counters). */
static void progress(fs_model_t *m, fs_jobrt_t *j)
{
    fs_jobrun_t *r = j->r;
    if (r->ac_share < 0) {
        fs_recov_advance(r, m->sim.now - r->settled_at, m->cfg->recovery.write_cost);
        r->settled_at = m->sim.now;
        return;
    }
    /* what settles moves from the aggregates to the settled accounts */
    fs_time_t c0 = r->w_compute, k0 = r->w_ckpt, s0 = r->w_startup, t0 = r->settled_at;
    fs_recov_advance(r, m->sim.now - r->settled_at, m->cfg->recovery.write_cost);
    r->settled_at = m->sim.now;
    double sh = r->ac_share;
    m->ac_comp += sh * tsec(r->w_compute - c0);
    m->ac_ckpt += sh * tsec(r->w_ckpt - k0);
    m->ac_startup += sh * tsec(r->w_startup - s0);
    if (r->cx_pos == CX_NONE)
        m->ac_pure_t += sh * tsec(r->settled_at) - sh * tsec(t0);
}

/* Work since the last checkpoint is lost: `lost` us of work (<= since_ckpt)
 * is redone. */
static fs_time_t lost_wall(const fs_jobrun_t *x, fs_time_t lost)
{
    return lost >= x->since_ckpt ? x->since_wall
                                 : (fs_time_t)((double)x->since_wall * (double)lost / (double)x->since_ckpt);
}

/* The work a preemption now loses: this attempt's work since the last
 * multiple of checkpoint_interval, or since the last recovery checkpoint,
 * whichever is less. */
static fs_time_t preempt_lost(const fs_model_t *m, const fs_jobrun_t *x)
{
    fs_time_t done = x->rem0 - x->remaining, ci = m->cfg->scheduler.checkpoint_interval;
    fs_time_t lost = ci > 0 ? done % ci : done;
    return lost > x->since_ckpt ? x->since_ckpt : lost;
}

static void lose_work(fs_model_t *m, fs_jobrt_t *j, fs_time_t lost)
{
    fs_time_t wall = lost_wall(j->r, lost);
    j->r->remaining += lost;
    j->r->w_lost += wall;
    double g = gpu_share(j) * fs_time_to_s(wall);
    j->r->lost_gpu_s += g;
    m->lost_gpu_s += g;
    j->r->since_ckpt = j->r->since_wall = 0;
}

/* A running attempt stops at now: completion cancelled, wall and GPU-s
 * counted.  The placement is left to the caller. */
static void attempt_stop(fs_model_t *m, fs_jobrt_t *j)
{
    progress(m, j);
    shares_close(j);
    fs_sim_cancel(&m->sim, j->r->end_ev);
    j->r->end_ev = (fs_event_handle_t){0, 0};
    double ran = fs_time_to_s(m->sim.now - j->r->start);
    j->r->run_s += ran;
    j->r->held_gpu_s += gpu_share(j) * ran;
    if (j->r->ac_share >= 0) {
        m->ac_held += gpu_share(j) * ran;
        acct_run_sub(m, j);
    }
    m->running--;
    if (is_replica(j))
        m->svc_running--;
}

/* A recorded GPU memory use (fs_job_t.rec_fb, GB per whole GPU) as the
 * share of the memory of what the job holds: a MIG instance's (its
 * profile's), else the pool's GPU model's (80 GB when the catalog does not
 * know it, as the exporter assumes); at most 1. */
static double recorded_fb(const fs_model_t *m, const fs_jobrt_t *j)
{
    double gb = fs_job_fb_gb(j->job.rec_fb), mem = 80;
    if (j->r->place.mig) {
        mem = fs_migname_memory_gb(j->r->place.mig);
    } else {
        int cat = m->cluster.pools[j->r->place.pool].catalog;
        if (cat >= 0)
            mem = fs_catalog_get((size_t)cat)->memory_gb;
    }
    return mem > 0 && gb < mem ? gb / mem : 1;
}

/* When a hold ending at `end` computes from: after its attempt's pod
 * start-up; never (`end`) for the hold of a recovering job, which keeps
 * GPUs only until its failure is noticed. */
static fs_time_t hold_ready(const fs_jobrt_t *j, fs_time_t end)
{
    if (j->state == FS_JOBRT_RECOVERING)
        return end;
    return j->r->start + j->r->att_startup < end ? j->r->start + j->r->att_startup : end;
}

/* (cold: a run without cost.energy: power pays one test per hold) */
__attribute__((cold, noinline)) static void energy_hold(fs_model_t *m, const fs_jobrt_t *j,
                                                        fs_time_t end);

/* The /gpu_intervals rows of a job's current hold, ending at `end`
 * (output.gpu_intervals: the sink asks for them); with cost.energy: power,
 * the hold's draw into the usage (energy_hold), from the same figures. */
static void emit_intervals(fs_model_t *m, const fs_jobrt_t *j, fs_time_t end)
{
    if (__builtin_expect(m->epool != NULL, 0) && !m->err.code)
        energy_hold(m, j, end);
    if (!m->sink.interval || m->err.code)
        return;
    const fs_slice_t *sl = fs_placement_slices(&j->r->place);
    fs_time_t ready = hold_ready(j, end);
    const fs_activity_cfg_t act = job_activity(m, &j->job), *a = &act;
    fs_interval_row_t r = {.job = j->job.id, .tenant = j->job.tenant,
                           .job_class = j->job.job_class, .gpu_milli = j->r->place.milli,
                           .start = fs_time_to_s(j->r->start), .ready = fs_time_to_s(ready),
                           .end = fs_time_to_s(end), .duty = a->duty, .sm = a->sm,
                           .tensor = a->tensor, .dram = a->dram, .fb = a->fb, .gpu_instance = -1};
    if (j->job.rec_fb)  /* the trace's memory use (PAI avg_gpu_wrk_mem), not the class's */
        r.fb = recorded_fb(m, j);
    if (j->r->place.mig) {  /* one row per instance: bit 8 g + i = instance i of GPU g */
        r.node = sl[0].node;
        r.gpus = 1;
        for (uint64_t bits = j->r->place.mig_bits; bits; bits &= bits - 1) {
            unsigned b = (unsigned)__builtin_ctzll(bits);
            r.gpu = b / 8;
            r.gpu_instance = (int32_t)(b % 8);
            int rc = m->sink.interval(m->sink.ud, &r);
            if (rc) {
                fail_sink(m, rc, "writing a GPU interval");
                return;
            }
        }
        return;
    }
    for (uint32_t k = 0; k < j->r->place.n; k++) {
        if (sl[k].gpus == 0)
            continue;   /* a failed node's slice, given back at the failure (drop_node) */
        r.node = sl[k].node;
        r.gpus = sl[k].gpus;
        r.gpu = j->r->place.milli < 1000 ? j->r->place.gpu : 0;
        int rc = m->sink.interval(m->sink.ud, &r);
        if (rc) {
            fail_sink(m, rc, "writing a GPU interval");
            return;
        }
    }
}

/* ---- energy from the power model (cost.energy: power) ------------------ */

static int nidx_ensure(fs_model_t *m);

/* Per pool: TDP, the tighter of the power cap and the thermal limit (as
 * cap_speed), idle draw; the first GPU's index in a fleet-wide numbering.
 * 0 or FS_ENOMEM. */
static int energy_init(fs_model_t *m)
{
    const fs_config_t *cfg = m->cfg;
    m->epool = fs_calloc(m->cluster.n_pools ? m->cluster.n_pools : 1, sizeof *m->epool);
    if (!m->epool)
        return FS_ENOMEM;
    uint64_t gpu0 = 0;
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {
        const fs_pool_cfg_t *pc = &cfg->cluster.pools[p];
        int cat = m->cluster.pools[p].catalog;
        double tdp = cat >= 0 ? fs_catalog_get((size_t)cat)->tdp_w : 0;
        m->epool[p] = (struct epool){
            .tdp = tdp,
            .lim = fs_power_limit_w(pc->power_cap_w,
                                    fs_thermal_limit_w(cfg->telemetry.throttle_c, pc->ambient_c)),
            .idle = fs_power_w(tdp, 0, 0), .gpu0 = gpu0};
        gpu0 += m->cluster.pools[p].gpus_total;
    }
    return 0;
}

/* The draw of a GPU of pool ep above its idle draw, W: computing or not,
 * with SM activity sm summed over its jobs (at most 1), clipped at the
 * pool's limit -- as fleetsim metrics writes DCGM_FI_DEV_POWER_USAGE
 * (analysis/fs_metrics.c power_w). */
static double energy_above(const struct epool *ep, int computing, double sm)
{
    double p = fs_power_w(ep->tdp, computing, sm < 1 ? sm : 1);
    if (ep->lim > 0 && p > ep->lim)
        p = ep->lim;
    return p - ep->idle;
}

/* Hold x's weight on GPU `gpu` of its node: share x SM activity, summed
 * over the MIG instances it holds there (fleetsim metrics counts each
 * /gpu_intervals row, one per instance, by gpu_milli / 1000); 0 if it holds
 * nothing there. */
static double energy_weight(const fs_model_t *m, const fs_jobrt_t *x, uint32_t gpu)
{
    const fs_placement_t *pl = &x->r->place;
    double k = pl->mig ? (double)__builtin_popcount((unsigned)(uint8_t)(pl->mig_bits >> (8 * gpu)))
                       : pl->gpu == gpu;
    return k * (double)pl->milli / 1000.0 * job_activity(m, &x->job).sm;
}

static int cmp_ehold(const void *a, const void *b)
{
    const struct ehold *x = a, *y = b;
    return x->ready < y->ready ? -1 : x->ready > y->ready;
}

/* A shared GPU (slot `gpu` of node, or MIG GPU `gpu`) whose hold by job j
 * ends at `end`: its draw above idle from where it was last added up to
 * `end`, with every hold on it over that span -- j's and the ones on it
 * now (a hold that ended since was added up then) -- summed as fleetsim
 * metrics sums the rows of one GPU: SM activity x share summed, the CUDA
 * context once while any computes, the limit on the sum.  O(holds on the
 * node). */
static void energy_unit(fs_model_t *m, const fs_jobrt_t *j, uint32_t node, uint32_t gpu,
                        fs_time_t end)
{
    const fs_placement_t *pl = &j->r->place;
    const fs_pool_t *p = &m->cluster.pools[pl->pool];
    const struct epool *ep = &m->epool[pl->pool];
    fs_time_t *at = &m->eunit[ep->gpu0 + (uint64_t)(node - p->first_node) * p->gpn + gpu];
    fs_time_t from = *at;
    if (end <= from)
        return;
    *at = end;
    const nodevec_t *v = &m->nidx[node];
    if (fs_grow((void **)&m->escr, &m->escr_cap, v->n + 1, sizeof *m->escr)) {
        fail(m, FS_ENOMEM, "adding up the energy");
        return;
    }
    size_t n = 0;
    m->escr[n++] = (struct ehold){hold_ready(j, end), energy_weight(m, j, gpu)};
    for (size_t i = 0; i < v->n; i++) {
        const fs_jobrt_t *x = &m->slots[v->v[i]];
        const fs_placement_t *xp = x != j && x->state == FS_JOBRT_RUNNING ? &x->r->place : NULL;
        if (!xp || xp->pool != pl->pool || xp->one.node != node || xp->n != 1 ||
            (xp->milli >= FS_GPU_MILLI_WHOLE && !xp->mig) ||
            (xp->mig ? !(xp->mig_bits >> (8 * gpu) & 0xff) : xp->gpu != gpu))
            continue;
        m->escr[n++] = (struct ehold){x->r->start + x->r->att_startup, energy_weight(m, x, gpu)};
    }
    qsort(m->escr, n, sizeof *m->escr, cmp_ehold);
    double sm = 0;
    size_t k = 0, computing = 0;
    fs_time_t t = from;
    while (t < end) {
        for (; k < n && m->escr[k].ready <= t; k++, computing++)
            sm += m->escr[k].w;
        fs_time_t nx = k < n && m->escr[k].ready < end ? m->escr[k].ready : end;
        if (computing)
            fs_usage_energy(m->usage, pl->pool, t, nx, energy_above(ep, 1, sm));
        t = nx;
    }
}

/* cost.energy: power (docs/cost.md "Energy from the power model"): the draw
 * above idle of job j's hold ending at `end`, from the figures of its
 * /gpu_intervals rows (emit_intervals), into the usage.  Whole GPUs: each
 * draws the same from ready to end, one product.  Shared GPUs: energy_unit
 * per GPU.  The idle draw of every GPU is the cost model's (busy + idle
 * GPU-s). */
__attribute__((cold, noinline)) static void energy_hold(fs_model_t *m, const fs_jobrt_t *j,
                                                        fs_time_t end)
{
    const fs_placement_t *pl = &j->r->place;
    if (pl->pool >= m->cluster.n_pools || !(m->epool[pl->pool].tdp > 0) || pl->n == 0)
        return;
    const struct epool *ep = &m->epool[pl->pool];
    if (pl->milli >= FS_GPU_MILLI_WHOLE && !pl->mig) {
        fs_time_t ready = hold_ready(j, end);
        if (ready >= end)
            return;
        const fs_slice_t *sl = fs_placement_slices(pl);
        uint64_t gpus = 0;
        for (uint32_t k = 0; k < pl->n; k++)
            gpus += sl[k].gpus;
        fs_usage_energy(m->usage, pl->pool, ready, end,
                        (double)gpus * energy_above(ep, 1, job_activity(m, &j->job).sm));
        return;
    }
    if (!m->eunit) {
        uint64_t n = ep->gpu0;
        for (uint32_t p = pl->pool; p < m->cluster.n_pools; p++)
            n += m->cluster.pools[p].gpus_total;
        m->eunit = fs_calloc(n ? n : 1, sizeof *m->eunit);  /* every GPU: added up to 0 */
    }
    if (!m->eunit || nidx_ensure(m)) {
        fail(m, FS_ENOMEM, "adding up the energy");
        return;
    }
    uint32_t node = pl->one.node;
    if (!pl->mig) {
        energy_unit(m, j, node, pl->gpu, end);
        return;
    }
    for (uint32_t g = 0; g < m->cluster.pools[pl->pool].gpn && !m->err.code; g++)
        if (pl->mig_bits >> (8 * g) & 0xff)
            energy_unit(m, j, node, g, end);
}

/* Gives a job's GPUs back and forgets its placement (the pool stays for
 * the row). */
static void release_place(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    emit_intervals(m, j, m->sim.now);
    fs_cluster_free(&m->cluster, &j->r->place);
    if (m->nidx)
        nidx_del(m, slot);
    uint32_t pool = j->r->place.pool, n = j->r->place.n;
    fs_placement_t was = j->r->place;
    fs_placement_release(&j->r->place);
    j->r->place.pool = pool;
    j->r->place.n = n;
    if (m->shared && n == 1)    /* its GPU's neighbours speed up */
        share_rerate(m, &was, slot);
}

static int queue_entered(fs_model_t *m, uint32_t slot, int admitted);

int fs_model_preempt(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    if (j->state != FS_JOBRT_RUNNING || m->ending == slot + 1)
        return FS_EINVAL;
    const fs_sched_cfg_t *sc = &m->cfg->scheduler;
    settle(m, m->sim.now);
    attempt_stop(m, j);
    if (j->r->phase == FS_PHASE_RESTORE ||   /* a restore cut short is done again */
        (j->r->phase == FS_PHASE_STARTING && j->r->restore_after > 0))
        j->r->need_restore = 1;
    /* kept: up to the last multiple of checkpoint_interval in this attempt,
     * or the last recovery checkpoint, whichever is later */
    double lost0 = j->r->lost_gpu_s;
    lose_work(m, j, preempt_lost(m, j->r));
    j->r->preempt_lost_gpu_s += j->r->lost_gpu_s - lost0;
    m->lost_preempt_gpu_s += j->r->lost_gpu_s - lost0;
    j->r->preemptions++;
    m->preemptions++;
    useful_mark(j);
    j->r->remaining += sc->restart_cost;
    j->r->restarts++;
    j->state = FS_JOBRT_QUEUED;
    j->r->queued_since = m->sim.now;
    release_place(m, slot);
    unshare(j);
    queue_enter(m, j);
    m->last_change = m->sim.now;
    if (is_replica(j)) {
        replica_event(m, slot, FS_REPLICA_STOPPED, 0);
    }
    if (m->pend) {
        int rc = queue_entered(m, slot, 0);
        if (rc)
            fail(m, rc, "queueing a preempted job");
    }
    return m->err.code;
}

int fs_model_timer(fs_model_t *m, fs_time_t at, uint64_t data, fs_event_handle_t *h)
{
    fs_event_t ev = {.time = at, .type = EV_POLICY, .data = data, .priority = FS_PRIO_TIMER};
    return fs_sim_schedule(&m->sim, &ev, h);
}

void fs_model_cancel(fs_model_t *m, fs_event_handle_t h) { fs_sim_cancel(&m->sim, h); }
void *fs_model_policy_state(fs_model_t *m) { return m->pol_state; }

int fs_model_start_in(fs_model_t *m, uint32_t slot, const uint32_t *pools, size_t n_pools)
{
    if (!pools || n_pools == 0)
        return 0;
    m->start_pools = pools;
    m->start_n = n_pools;
    int rc = fs_model_start(m, slot);
    m->start_pools = NULL;
    m->start_n = 0;
    return rc;
}

size_t fs_model_job_pools(fs_model_t *m, uint32_t slot, const uint32_t **pools)
{
    const fs_jobrt_t *j = &m->slots[slot];
    if (j->type_pools < 0) {
        *pools = NULL;
        return 0;
    }
    *pools = m->set_pool + m->set_off[j->type_pools];
    return m->set_off[j->type_pools + 1] - m->set_off[j->type_pools];
}

const fs_source_t *fs_model_source(const fs_model_t *m) { return m->src; }

/* ---- the fleet ------------------------------------------------------------------ */

/* Settles a running job's work at now and sets a new rate: its one
 * completion event moves. */
static int rerate(fs_model_t *m, uint32_t slot, double rate)
{
    fs_jobrt_t *j = &m->slots[slot];
    progress(m, j);
    j->r->rate = rate;
    if (is_replica(j))      /* no completion to move */
        return 0;
    fs_sim_cancel(&m->sim, j->r->end_ev);
    fs_time_t dt = fs_recov_finish_wall(j->r, m->cfg->recovery.write_cost);
    fs_event_t ev = {.time = m->sim.now + dt, .type = EV_JOB_END, .entity = slot,
                     .priority = FS_PRIO_COMPLETION};
    int rc = fs_sim_schedule(&m->sim, &ev, &j->r->end_ev);
    if (rc)
        fail(m, rc, "rescheduling a completion");
    return rc;
}

/* Time-slicing: the running jobs on the GPU of replica placement pl (but
 * `skip`) take the speed its jobs give now, their work settled at the old
 * one.  In the node index's order (slot ids, insertion order): no
 * addresses.  MPS speeds do not depend on the neighbours. */
static int nidx_ensure(fs_model_t *m);
static int share_rerate(fs_model_t *m, const fs_placement_t *pl, uint32_t skip)
{
    const fs_pool_t *p = &m->cluster.pools[pl->pool];
    if (p->share_kind != FS_SHARING_TIME_SLICING || pl->milli >= FS_GPU_MILLI_WHOLE || pl->n != 1)
        return 0;
    if (nidx_ensure(m)) {
        fail(m, FS_ENOMEM, "sharing a GPU");
        return FS_ENOMEM;
    }
    const nodevec_t *v = &m->nidx[pl->one.node];
    for (size_t i = 0; i < v->n; i++) {
        uint32_t s = v->v[i];
        fs_jobrt_t *j = &m->slots[s];
        if (s == skip || j->state != FS_JOBRT_RUNNING || j->r->place.pool != pl->pool ||
            j->r->place.milli >= FS_GPU_MILLI_WHOLE || j->r->place.gpu != pl->gpu)
            continue;
        double r = job_rate(m, j);
        if (r != j->r->rate) {
            int rc = rerate(m, s, r);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* The node index, built from the jobs holding GPUs the first time a fleet
 * op needs it (a run without failures never pays for it). */
static int nidx_ensure(fs_model_t *m)
{
    if (m->nidx)
        return 0;
    m->nidx = fs_calloc(m->cluster.n_nodes ? m->cluster.n_nodes : 1, sizeof *m->nidx);
    if (!m->nidx)
        return FS_ENOMEM;
    for (size_t i = 0; i < m->n_slots; i++) {
        const fs_jobrt_t *j = &m->slots[i];
        int holds = j->state == FS_JOBRT_RUNNING || (j->state == FS_JOBRT_RECOVERING && j->r->holding);
        if (holds && nidx_add(m, (uint32_t)i))
            return FS_ENOMEM;
    }
    return 0;
}

/* GPUs a recovering job still holds. */
static double held_gpus(const fs_jobrt_t *j)
{
    if (!j->r->holding)
        return 0;
    if (j->r->place.n <= 1)
        return gpu_share(j);
    double g = 0;
    for (uint32_t i = 0; i < j->r->place.n; i++)
        g += j->r->place.many[i].gpus;
    return g;
}

/* A recovering job's hold enters or leaves the account aggregates (around
 * every change of its holding, placement or settled_at). */
static void acct_hold_add(fs_model_t *m, fs_jobrt_t *j)
{
    if (!m->acct_on || is_replica(j))
        return;
    double g = held_gpus(j);
    j->r->ac_hold = g;
    m->ac_rec_s += g;
    m->ac_rec_t += g * tsec(j->r->settled_at);
}

static void acct_hold_sub(fs_model_t *m, fs_jobrt_t *j)
{
    if (!m->acct_on || is_replica(j))
        return;
    double g = j->r->ac_hold;
    m->ac_rec_s -= g;
    m->ac_rec_t -= g * tsec(j->r->settled_at);
    j->r->ac_hold = 0;
}

/* Counts the GPU-s a recovering job held from settled_at to at. */
static void hold_account(fs_model_t *m, fs_jobrt_t *j, fs_time_t at)
{
    double add = held_gpus(j) * fs_time_to_s(at - j->r->settled_at);
    acct_hold_sub(m, j);
    j->r->held_gpu_s += add;
    j->r->settled_at = at;
    if (m->acct_on && !is_replica(j))
        m->ac_held += add;
    acct_hold_add(m, j);
}

/* A recovering job's share of failed `node` is freed now (the node is
 * gone); the rest it holds until the failure is noticed. */
static void drop_node(fs_model_t *m, uint32_t slot, uint32_t node)
{
    fs_jobrt_t *j = &m->slots[slot];
    hold_account(m, j, m->sim.now);
    acct_hold_sub(m, j);
    if (j->r->place.n <= 1) {
        release_place(m, slot);
        j->r->holding = 0;
        return;
    }
    for (uint32_t i = 0; i < j->r->place.n; i++) {
        fs_slice_t *s = &j->r->place.many[i];
        if (s->node != node || s->gpus == 0)
            continue;
        fs_placement_t one = {.pool = j->r->place.pool, .n = 1, .one = *s,
                              .milli = FS_GPU_MILLI_WHOLE};
        fs_cluster_free(&m->cluster, &one);
        s->gpus = 0;
    }
    nidx_drop(&m->nidx[node], slot);
    acct_hold_add(m, j);
}

static int recover_at(fs_model_t *m, uint32_t slot, fs_time_t at, uint64_t step)
{
    fs_event_t ev = {.time = at, .type = EV_RECOVER, .entity = slot, .data = step,
                     .priority = FS_PRIO_TIMER};
    int rc = fs_sim_schedule(&m->sim, &ev, NULL);
    if (rc)
        fail(m, rc, "scheduling a recovery step");
    return rc;
}

/* Back in the queue after a failure (the next start restores first). */
static int replica_end(fs_model_t *m, uint32_t slot);

static int requeue(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    if (j->r->retiring) {      /* its service retired it while it recovered */
        m->recovering--;
        return replica_end(m, slot);
    }
    j->r->w_recovery += m->sim.now - j->r->start;
    j->state = FS_JOBRT_QUEUED;
    j->r->queued_since = m->sim.now;
    j->r->restarts++;
    m->recovering--;
    useful_mark(j);
    unshare(j);
    queue_enter(m, j);
    m->last_change = m->sim.now;
    int rc = m->pol->enqueue(m->pol_state, m, slot);
    if (!rc && m->pend)
        rc = queue_entered(m, slot, 0);
    if (rc)
        fail(m, rc, "requeueing a job");
    return rc;
}

/* Retries exhausted: the job ends FAILED. */
static int give_up(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    j->r->w_recovery += m->sim.now - j->r->start;
    m->recovering--;
    m->last_change = m->sim.now;
    int rc = emit(m, j, FS_STATE_FAILED);
    fs_placement_release(&j->r->place);
    if (!rc && slot_free(m, slot)) {
        fail(m, FS_ENOMEM, "freeing a job slot");
        rc = FS_ENOMEM;
    }
    return rc;
}

/* The failure is noticed: the job lets go of what it still holds; it is
 * retried after the requeue and backoff delay, or fails for good. */
static int detected(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    hold_account(m, j, m->sim.now);
    acct_hold_sub(m, j);
    if (j->r->holding) {
        release_place(m, slot);
        j->r->holding = 0;
    }
    m->last_change = m->sim.now;
    if (is_replica(j))      /* the ReplicaSet makes a new pod at once, retries unlimited */
        return requeue(m, slot);
    fs_time_t delay;
    if (!fs_recov_retry(&m->cfg->recovery, j->r->failures, &delay))
        return give_up(m, slot);
    if (delay > 0)
        return recover_at(m, slot, m->sim.now + delay, RC_REQUEUE);
    return requeue(m, slot);
}

static void on_recover(fs_model_t *m, uint32_t slot, uint64_t step)
{
    if (slot >= m->n_slots || m->slots[slot].state != FS_JOBRT_RECOVERING)
        FS_BUG(&m->sim, "recovery step %llu of slot %u, which is not recovering",
               (unsigned long long)step, slot);
    settle(m, m->sim.now);
    if (step == RC_DETECTED)
        detected(m, slot);
    else
        requeue(m, slot);
}

/* From a failure now until its jobs notice it: the heartbeat timeout
 * (recovery.detection), or, for a failure with an Xid, the next health check
 * (recovery.health_check: at multiples of the period, strictly after now)
 * when it comes first (docs/recovery.md "Health checks"). */
static fs_time_t detection_delay(const fs_model_t *m)
{
    fs_time_t det = m->cfg->recovery.detection, hc = m->cfg->recovery.health_check;
    if (m->fail_xid && hc > 0 && det > 0) {
        fs_time_t next = (m->sim.now / hc + 1) * hc - m->sim.now;
        if (next < det)
            det = next;
    }
    return det;
}

/* A running job loses a node to a failure: work since its last checkpoint
 * is lost, the policy forgets it as running, it keeps its healthy nodes
 * until the failure is noticed (recovery.detection), then follows the
 * retry rules (docs/recovery.md). */
static int fail_job(fs_model_t *m, uint32_t slot, uint32_t node)
{
    fs_jobrt_t *j = &m->slots[slot];
    /* the attempt's hold up to the failure: its rows now, before the hold
     * clock restarts for the GPUs it keeps until the failure is noticed */
    emit_intervals(m, j, m->sim.now);
    attempt_stop(m, j);
    lose_work(m, j, j->r->since_ckpt);
    j->r->failures++;
    j->state = FS_JOBRT_RECOVERING;
    j->r->holding = 1;
    j->r->need_restore = 1;
    j->r->start = j->r->settled_at = m->sim.now;  /* recovery and hold clocks */
    acct_hold_add(m, j);
    m->interruptions++;
    m->recovering++;
    m->last_change = m->sim.now;
    if (m->pol->job_interrupted)
        m->pol->job_interrupted(m->pol_state, m, slot);
    else if (m->pol->job_end)
        m->pol->job_end(m->pol_state, m, slot);
    drop_node(m, slot, node);
    if (is_replica(j))
        replica_event(m, slot, FS_REPLICA_STOPPED, 0);
    fs_time_t det = detection_delay(m);
    if (det > 0)
        return recover_at(m, slot, m->sim.now + det, RC_DETECTED);
    return detected(m, slot);
}

/* Insertion sort of slots by admission order (a handful per node): the
 * jobs a failure hits are handled in the same order however they were
 * found. */
static void sort_by_seq(const fs_model_t *m, uint32_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = v[i];
        size_t k = i;
        for (; k > 0 && m->slots[v[k - 1]].seq > m->slots[x].seq; k--)
            v[k] = v[k - 1];
        v[k] = x;
    }
}

/* Every job holding GPUs on a failed node: running ones are interrupted,
 * recovering ones lose their share of it.  *hit = jobs interrupted. */
static int fail_node_jobs(fs_model_t *m, uint32_t node, uint32_t *hit)
{
    int rc = nidx_ensure(m);
    size_t n = rc ? 0 : m->nidx[node].n;
    if (rc || fs_grow((void **)&m->scr, &m->scr_cap, n + 1, sizeof *m->scr)) {
        fail(m, FS_ENOMEM, "interrupting jobs");
        return FS_ENOMEM;
    }
    if (n == 0)
        return 0;
    memcpy(m->scr, m->nidx[node].v, n * sizeof *m->scr);
    sort_by_seq(m, m->scr, n);
    for (size_t i = 0; i < n && !rc; i++) {
        uint32_t s = m->scr[i];
        if (m->slots[s].state == FS_JOBRT_RUNNING) {
            rc = fail_job(m, s, node);
            (*hit)++;
        } else if (m->slots[s].state == FS_JOBRT_RECOVERING && m->slots[s].r->holding) {
            drop_node(m, s, node);
        }
    }
    return rc;
}

int fs_model_node_down(fs_model_t *m, uint32_t node, int how, uint32_t *jobs_hit)
{
    if (jobs_hit)
        *jobs_hit = 0;
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    if (!m->node_holds) {
        m->node_holds = fs_calloc(m->cluster.n_nodes, sizeof *m->node_holds);
        if (!m->node_holds) {
            fail(m, FS_ENOMEM, "taking a node out of service");
            return FS_ENOMEM;
        }
    }
    settle(m, m->sim.now);
    m->last_change = m->sim.now;
    if (m->node_holds[node]++ == 0) {
        fs_cluster_set_up(&m->cluster, node, 0);
        m->nodes_out++;
    }
    if (how != FS_DOWN_FAIL && how != FS_DOWN_FAIL_XID)
        return 0;
    uint32_t hit = 0;
    m->fail_xid = how == FS_DOWN_FAIL_XID;
    int rc = fail_node_jobs(m, node, &hit);
    m->fail_xid = 0;
    if (jobs_hit)
        *jobs_hit = hit;
    return rc;
}

int fs_model_node_up(fs_model_t *m, uint32_t node)
{
    if (node >= m->cluster.n_nodes || !m->node_holds || m->node_holds[node] == 0)
        return FS_EINVAL;
    settle(m, m->sim.now);
    m->last_change = m->sim.now;
    if (--m->node_holds[node] == 0) {
        fs_cluster_set_up(&m->cluster, node, 1);
        m->nodes_out--;
        m->pass_wanted = 1;     /* capacity came back (a quiet module's too) */
    }
    return 0;
}

int fs_model_node_in_service(const fs_model_t *m, uint32_t node)
{
    return node < m->cluster.n_nodes && (!m->node_holds || m->node_holds[node] == 0);
}

int fs_model_mig_recut(fs_model_t *m, uint32_t node, unsigned pr)
{
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    int n = fs_cluster_mig_recut(&m->cluster, node, pr);
    m->frag_stale = 1;
    return n;
}

int fs_model_mig_set(fs_model_t *m, uint32_t node, const fs_mig_layout_t *lay)
{
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    int rc = fs_cluster_mig_set(&m->cluster, node, lay);
    m->frag_stale = 1;
    return rc;
}

int fs_model_node_cordon(fs_model_t *m, uint32_t node, int on)
{
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    size_t i = 0;
    while (i < m->n_cordon && m->cordon[i] != node)
        i++;
    if (!!on == (i < m->n_cordon))
        return FS_EINVAL;
    if (on) {
        if (fs_grow((void **)&m->cordon, &m->cap_cordon, m->n_cordon + 1, sizeof *m->cordon)) {
            fail(m, FS_ENOMEM, "cordoning a node");
            return FS_ENOMEM;
        }
        /* settled before the node leaves: the integrals up to now see it as it was */
        int rc = fs_model_node_down(m, node, FS_DOWN_DRAIN, NULL);
        if (rc)
            return rc;
        m->cordon[m->n_cordon++] = node;
        return 0;
    }
    settle(m, m->sim.now);
    m->cordon[i] = m->cordon[--m->n_cordon];
    return fs_model_node_up(m, node);
}

double fs_model_cordon_idle_gpu_s(const fs_model_t *m)
{
    /* not settled here: a settle would split the other integrals' sums */
    double dt = fs_time_to_s(m->sim.now - m->last_settle);
    return m->int_cordon_idle + (m->n_cordon ? dt * (cordon_gpus(m) - cordon_busy(m)) : 0);
}

void fs_model_after_pass_idle(fs_model_t *m, int on) { m->after_pass_idle = !!on; }

int fs_model_job_outlook(const fs_model_t *m, uint32_t slot, fs_time_t *end, double *lost_gpu_s)
{
    if (slot >= m->n_slots || m->slots[slot].state != FS_JOBRT_RUNNING)
        return FS_EINVAL;
    const fs_jobrt_t *j = &m->slots[slot];
    fs_jobrun_t c = *j->r;
    fs_recov_advance(&c, m->sim.now - c.settled_at, m->cfg->recovery.write_cost);
    *end = is_replica(j) ? INT64_MAX
                         : m->sim.now + fs_recov_finish_wall(&c, m->cfg->recovery.write_cost);
    /* as fs_model_preempt would count it (lose_work) */
    *lost_gpu_s = gpu_share(j) * fs_time_to_s(lost_wall(&c, preempt_lost(m, &c)));
    return 0;
}

int fs_model_evict_node(fs_model_t *m, uint32_t node, uint32_t below, uint32_t *n_evicted)
{
    *n_evicted = 0;
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    /* the jobs on the node (the node index, as a failure finds them),
     * copied: each preemption leaves the index */
    int rc0 = nidx_ensure(m);
    size_t all = rc0 ? 0 : m->nidx[node].n, n = 0;
    if (rc0 || fs_grow((void **)&m->scr, &m->scr_cap, all + 1, sizeof *m->scr)) {
        fail(m, FS_ENOMEM, "evicting jobs");
        return FS_ENOMEM;
    }
    for (size_t i = 0; i < all; i++) {
        uint32_t s = m->nidx[node].v[i];
        if (m->slots[s].state == FS_JOBRT_RUNNING && m->ending != s + 1 &&
            m->slots[s].r->preemptions < below)
            m->scr[n++] = s;
    }
    sort_by_seq(m, m->scr, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t s = m->scr[i];
        /* the policy forgets it as running (as for a failure), the model
         * preempts it, and the policy gets it back */
        if (m->pol->job_interrupted)
            m->pol->job_interrupted(m->pol_state, m, s);
        else if (m->pol->job_end)
            m->pol->job_end(m->pol_state, m, s);
        int rc = fs_model_preempt(m, s);
        if (!rc)
            rc = m->pol->enqueue(m->pol_state, m, s);
        if (rc) {
            fail(m, rc, "evicting a job");
            return rc;
        }
        (*n_evicted)++;
    }
    m->pass_wanted = 1;
    return 0;
}

uint32_t fs_model_node_jobs(const fs_model_t *m, uint32_t node)
{
    if (node >= m->cluster.n_nodes)
        return 0;
    if (m->nidx)
        return (uint32_t)m->nidx[node].n;
    /* before the index exists no job is recovering: scan the running */
    uint32_t n = 0;
    for (size_t i = 0; i < m->n_slots; i++)
        if (m->slots[i].state == FS_JOBRT_RUNNING && on_node(&m->slots[i], node))
            n++;
    return n;
}

int fs_model_node_speed(fs_model_t *m, uint32_t node, double factor)
{
    if (node >= m->cluster.n_nodes || !(factor > 0))
        return FS_EINVAL;
    if (!m->node_speed) {
        if (factor == 1.0)
            return 0;
        m->node_speed = fs_malloc(m->cluster.n_nodes * sizeof *m->node_speed);
        if (!m->node_speed) {
            fail(m, FS_ENOMEM, "setting a node's speed");
            return FS_ENOMEM;
        }
        for (uint32_t i = 0; i < m->cluster.n_nodes; i++)
            m->node_speed[i] = 1.0;
    }
    m->node_speed[node] = factor;
    if (nidx_ensure(m)) {
        fail(m, FS_ENOMEM, "setting a node's speed");
        return FS_ENOMEM;
    }
    const nodevec_t *v = &m->nidx[node];
    for (size_t i = 0; i < v->n; i++) {
        fs_jobrt_t *j = &m->slots[v->v[i]];
        if (j->state != FS_JOBRT_RUNNING)
            continue;
        double r = job_rate(m, j);
        if (r != j->r->rate) {
            int rc = rerate(m, v->v[i], r);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ---- modules ------------------------------------------------------------------ */

int fs_model_add_module(fs_model_t *m, const fs_module_ops_t *ops, void *ud, uint32_t *id)
{
    if ((ops->gate && m->gate) || (ops->after_pass && m->after_pass) ||
        (ops->pending && m->pend))
        return FS_EINVAL;
    if (fs_grow((void **)&m->modules, &m->cap_modules, m->n_modules + 1, sizeof *m->modules))
        return FS_ENOMEM;
    m->modules[m->n_modules] = (module_t){ops, ud};
    *id = (uint32_t)m->n_modules++;
    if (ops->gate) {
        m->gate = ops->gate;
        m->gate_ud = ud;
    }
    if (ops->after_pass)
        m->after_pass = m->n_modules;
    if (ops->pending) {
        m->pend = ops;
        m->pend_ud = ud;
    }
    m->queue_hooks = m->gate || m->pend;
    return 0;
}

int fs_model_module_event(fs_model_t *m, uint32_t id, fs_time_t at, int priority,
                          uint64_t data, fs_event_handle_t *h)
{
    fs_event_t ev = {.time = at, .type = EV_MODULE, .entity = id, .data = data,
                     .priority = (uint8_t)priority};
    int rc = fs_sim_schedule(&m->sim, &ev, h);
    if (!rc && priority == FS_PRIO_FAILURE)
        m->inert_pending++;
    return rc;
}

const fs_sink_t *fs_model_sink(const fs_model_t *m) { return &m->sink; }

void fs_model_error(fs_model_t *m, const fs_error_t *e)
{
    if (m->err.code == 0 && e && e->code)
        m->err = *e;
}

/* The policy's job_end for a job whose GPUs are already freed: while it
 * runs, the job cannot be preempted (fs_model_preempt refuses it). */
static void end_callback(fs_model_t *m, uint32_t slot)
{
    if (!m->pol->job_end)
        return;
    m->ending = slot + 1;
    m->pol->job_end(m->pol_state, m, slot);
    m->ending = 0;
}

static void job_end(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    settle(m, m->sim.now);
    j->r->end_ev = (fs_event_handle_t){0, 0};  /* fired */
    attempt_stop(m, j);
    j->r->remaining = 0;
    emit_intervals(m, j, m->sim.now);
    fs_cluster_free(&m->cluster, &j->r->place);
    if (m->nidx)
        nidx_del(m, slot);
    if (m->shared)          /* its GPU's neighbours speed up */
        share_rerate(m, &j->r->place, slot);
    m->useful_gpu_s += useful_gpu_s(j, j->job.duration);
    m->done++;
    m->last_change = m->sim.now;
    end_callback(m, slot);
    emit(m, j, FS_STATE_COMPLETED);
    fs_placement_release(&j->r->place);
    if (slot_free(m, slot))
        fail(m, FS_ENOMEM, "freeing a job slot");
}

/* ---- the arrival stream -------------------------------------------------------- */

/* The stream has no more jobs (at now, the last one's submission or the
 * first one cut by the horizon).  A horizon left to the trace
 * (cfg->horizon_auto) becomes its last submission: the measurement window
 * ends there.  A drain gets its cap (drain_limit after the last arrival). */
static void source_ended(fs_model_t *m)
{
    m->src_done = 1;
    if (m->cfg->horizon_auto) {
        m->horizon = m->last_arrival > 0 ? m->last_arrival : 0;
        /* (arrivals all at or before the warm-up leave no arrival window:
         * the window is then the run after the warm-up) */
        if (m->horizon > m->win_lo) {
            m->win_hi = m->horizon;
            fs_usage_set_window(m->usage, m->win_lo, m->win_hi);
        }
    }
    if (m->cfg->until == FS_UNTIL_DRAIN && m->cfg->drain_limit > 0) {
        fs_time_t from = m->last_arrival > 0 ? m->last_arrival : 0;
        fs_time_t at = m->cfg->drain_limit > FS_TIME_NEVER - 1 - from ? FS_TIME_NEVER - 1
                                                                       : from + m->cfg->drain_limit;
        fs_event_t ev = {.time = at < m->sim.now ? m->sim.now : at, .type = EV_DRAIN_CAP,
                         .priority = PRIO_DRAIN_CAP};
        if (fs_sim_schedule(&m->sim, &ev, NULL))
            fail(m, FS_ENOMEM, "scheduling the drain cap");
        else
            m->cap_pending = 1;
    }
}

static fs_time_t src_peek(void *vm)
{
    fs_model_t *m = vm;
    if (m->batch_i < m->batch_n)
        return m->batch[m->batch_i].submit;
    if (m->src_done)
        return FS_TIME_NEVER;
    m->batch_i = m->batch_n = 0;
    int rc = fs_source_next(m->src, m->batch, BATCH, &m->batch_n, &m->err);
    if (rc) {
        m->src_done = 1;
        fs_sim_fail(&m->sim, rc);
        return FS_TIME_NEVER;
    }
    if (m->batch_n == 0) {
        source_ended(m);
        return FS_TIME_NEVER;
    }
    /* arrivals at or after the horizon are not replayed; the stream is
     * sorted, so nothing after them is either */
    if (m->batch[0].submit >= m->horizon) {
        m->truncated = 1;
        m->batch_n = 0;
        source_ended(m);
        return FS_TIME_NEVER;
    }
    for (size_t i = 1; i < m->batch_n; i++)
        if (m->batch[i].submit >= m->horizon) {
            m->truncated = 1;
            m->batch_n = i;
            break;
        }
    if (m->batch[0].submit < m->sim.now) {
        fs_error_set(&m->err, FS_EINVAL, "workload '%s': job %llu submitted at %.6f s, before "
                     "the previous job (the stream must be sorted by submission time)",
                     m->src->ops->name, (unsigned long long)m->batch[0].id,
                     fs_time_to_s(m->batch[0].submit));
        m->src_done = 1;
        fs_sim_fail(&m->sim, FS_EINVAL);
        return FS_TIME_NEVER;
    }
    return m->batch[0].submit;
}

/* A job entered the queue (admitted: the gate hears of it too): the
 * modules that asked to know.  Out of line: admit() without hooks pays one
 * test, as it did for the gate alone. */
__attribute__((noinline)) static int queue_entered(fs_model_t *m, uint32_t slot, int admitted)
{
    int rc = admitted && m->gate ? m->gate->admitted(m->gate_ud, m, &m->slots[slot].job) : 0;
    if (!rc && m->pend)
        rc = m->pend->pending(m->pend_ud, m, slot);
    return rc;
}

/* Admits job now into pool set `set` (INT32_MIN: the set of its GPU type):
 * a slot, the policy's queue.  *slot: NO_SLOT when it was rejected (it can
 * never fit) or on an error (m->err set). */
static void admit(fs_model_t *m, const fs_job_t *job, int32_t set, uint32_t *slot)
{
    *slot = NO_SLOT;
    settle(m, m->sim.now);
    m->last_change = m->sim.now;
    m->pass_wanted = 1;
    int32_t t = set;
    int rc;
    if (t == INT32_MIN) {
        if (job->gpu_type >= 0 && (rc = ensure_set(m, job->gpu_type))) {
            fail(m, rc, "admitting a job");
            return;
        }
        t = job->gpu_type >= 0 ? m->type_set[job->gpu_type] : -1;   /* its pool set */
    }
    if (m->tainted && (rc = derived_set(m, t, DSET_TENANT, job->tenant, &t))) {
        fail(m, rc, "admitting a job");
        return;
    }
    if ((job->flags & FS_JOB_SINGLE_NODE) &&
        (rc = derived_set(m, t, DSET_NODE_GPUS, job->gpus, &t))) {
        fail(m, rc, "admitting a job");
        return;
    }
    if (m->next_seq > UINT32_MAX) {     /* fs_jobrt_t.seq is 32 bits */
        fail(m, FS_ELIMIT, "admitting a job: more than 2^32 admissions in one run");
        return;
    }
    if (!fs_jobq_fits(job)) {           /* fs_jobq_t: 16-bit class and share */
        fail(m, FS_ELIMIT, "admitting a job: job_class or gpu_milli beyond 16 bits");
        return;
    }
    if (fs_placer_learns(m->placer) && !job->mig) {  /* FGD learns the task shapes online */
        fs_podreq_t q = fs_podreq_of(job);
        if (fs_placer_observe_pod(m->placer, &m->cluster, &q,
                                  t < 0 ? NULL : m->set_pool + m->set_off[t],
                                  t < 0 ? 0 : m->set_off[t + 1] - m->set_off[t], 1)) {
            fail(m, FS_ENOMEM, "admitting a job");
            return;
        }
    }
    uint32_t s = slot_alloc(m);
    if (s == NO_SLOT) {
        fail(m, FS_ENOMEM, "admitting a job");
        return;
    }
    fs_jobrt_t *j = &m->slots[s];
    memset(j, 0, sizeof *j);
    j->job = fs_jobq_of(job);
    j->seq = (uint32_t)m->next_seq++;
    j->type_pools = (int16_t)t;
    j->state = FS_JOBRT_QUEUED;
    /* no run record until it starts: a job is admitted at its submission
     * (the stream is in submission order; a replica's is now), so that is
     * when it entered the queue */
    if (!could_ever_fit(m, j)) {
        if (is_replica(j)) {    /* the caller says why */
            if (slot_free(m, s))
                fail(m, FS_ENOMEM, "freeing a job slot");
            return;
        }
        m->rejected++;
        emit(m, j, FS_STATE_REJECTED);
        if (slot_free(m, s))
            fail(m, FS_ENOMEM, "freeing a job slot");
        return;
    }
    queue_enter(m, j);
    m->svc_live += is_replica(j);
    *slot = s;
    rc = m->pol->enqueue(m->pol_state, m, s);
    if (!rc && m->queue_hooks)
        rc = queue_entered(m, s, 1);
    if (rc)
        fail(m, rc, "queueing a job");
}

static void src_take(fs_sim_t *sim, void *vm)
{
    fs_model_t *m = vm;
    const fs_job_t *job = &m->batch[m->batch_i++];
    m->submitted++;
    m->last_arrival = sim->now;
    uint32_t slot;
    admit(m, job, INT32_MIN, &slot);
}

/* ---- service replicas ----------------------------------------------------------- */

void fs_model_set_replica_hook(fs_model_t *m, const fs_replica_hook_t *hook)
{
    m->rhook = *hook;
}

int fs_model_make_pool_set(fs_model_t *m, const uint32_t *pools, size_t n, int32_t *set)
{
    if (n == 0) {
        *set = -1;
        return 0;
    }
    int rc = set_begin(m);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (set_add(m, pools[i]))
            return FS_ENOMEM;
    *set = set_end(m);
    return 0;
}

int fs_model_submit(fs_model_t *m, const fs_job_t *job, int32_t set, uint32_t *slot)
{
    fs_job_t r = *job;
    r.flags |= FS_JOB_SERVICE;
    r.submit = m->sim.now;
    r.duration = FS_TIME_MAX_INPUT;     /* never completes: no end event is scheduled */
    admit(m, &r, set, slot);
    if (m->err.code)
        return m->err.code;
    return *slot == NO_SLOT ? FS_EINVAL : 0;
}

/* A replica ends now (retired, or retired while recovering): the slot is
 * freed; the GPUs were given back by the caller. */
static int replica_end(fs_model_t *m, uint32_t slot)
{
    if (m->slots[slot].r)   /* none: withdrawn before it ever ran */
        fs_placement_release(&m->slots[slot].r->place);
    m->svc_live--;
    m->last_change = m->sim.now;
    if (slot_free(m, slot)) {
        fail(m, FS_ENOMEM, "freeing a job slot");
        return FS_ENOMEM;
    }
    return 0;
}

int fs_model_retire(fs_model_t *m, uint32_t slot)
{
    if (slot >= m->n_slots || !is_replica(&m->slots[slot]))
        return FS_EINVAL;
    fs_jobrt_t *j = &m->slots[slot];
    settle(m, m->sim.now);
    m->pass_wanted = 1;
    switch (j->state) {
    case FS_JOBRT_RUNNING:
        attempt_stop(m, j);
        emit_intervals(m, j, m->sim.now);
        fs_cluster_free(&m->cluster, &j->r->place);
        if (m->nidx)
            nidx_del(m, slot);
        if (m->shared)
            share_rerate(m, &j->r->place, slot);
        end_callback(m, slot);
        return replica_end(m, slot);
    case FS_JOBRT_RECOVERING:
        j->r->retiring = 1;
        return 0;
    case FS_JOBRT_QUEUED: {
        if (!m->pol->withdraw)
            return 1;   /* the policy's until it starts it */
        int rc = m->pol->withdraw(m->pol_state, m, slot);
        if (rc) {
            fail(m, rc, "taking a replica out of the queue");
            return rc;
        }
        queue_leave(m, j);
        return replica_end(m, slot);
    }
    default:
        return FS_EINVAL;
    }
}

/* ---- a run that cannot go on ------------------------------------------------- */

/* Why queued job j does not start with nothing running: it does not fit
 * the GPUs of its pools in service, or it fits and the policy holds it. */
static void stuck_reason(const fs_model_t *m, const fs_jobrt_t *j, uint32_t slot, char *buf,
                         size_t n)
{
    uint64_t up = 0, total = 0;
    uint32_t p;
    FOR_POOLS(m, j->type_pools, p) {
        up += m->cluster.pools[p].gpus_up;
        total += m->cluster.pools[p].gpus_total;
    }
    if (!fs_model_fits(m, slot))
        snprintf(buf, n, "job %llu needs %u GPU%s; its pool%s %llu of %llu GPUs in service, "
                 "and nothing pending can bring more back",
                 (unsigned long long)j->job.id, j->job.gpus, j->job.gpus == 1 ? "" : "s",
                 j->type_pools < 0 && m->cluster.n_pools == 1 ? " has" : "s have",
                 (unsigned long long)up, (unsigned long long)total);
    else {
        char why[320];
        if (m->pol->why_waiting && m->pol->why_waiting(m->pol_state, m, slot, why, sizeof why))
            snprintf(buf, n, "job %llu fits the GPUs in service, but policy '%s' never starts it: "
                     "%s", (unsigned long long)j->job.id, m->pol->name, why);
        else
            snprintf(buf, n, "job %llu fits the GPUs in service, but policy '%s' does not start "
                     "it (a queue or quota that can never admit it)",
                     (unsigned long long)j->job.id, m->pol->name);
    }
}

/* The run cannot end as a drain should (docs/scenario.md, until): jobs
 * wait with nothing running and no pending event that could start them
 * (capped == 0), or jobs are still active drain_limit after the last
 * arrival (capped == 1).  Names the first jobs by admission order and the
 * reason; the run stops with FS_ESTUCK (exit status 1). */
static void cannot_go_on(fs_model_t *m, int capped)
{
    uint32_t first[NAMED_JOBS];
    size_t k = 0;
    uint64_t n = 0;
    for (size_t i = 0; i < m->n_slots; i++) {
        const fs_jobrt_t *j = &m->slots[i];
        if (j->state == FS_JOBRT_FREE || (!capped && j->state != FS_JOBRT_QUEUED))
            continue;
        n++;
        /* keep the NAMED_JOBS earliest admitted, in order */
        size_t at = k < NAMED_JOBS ? k : NAMED_JOBS;
        while (at > 0 && m->slots[first[at - 1]].seq > j->seq)
            at--;
        if (at >= NAMED_JOBS)
            continue;
        if (k < NAMED_JOBS)
            k++;
        memmove(first + at + 1, first + at, (k - 1 - at) * sizeof *first);
        first[at] = (uint32_t)i;
    }
    char ids[NAMED_JOBS * 24 + 8], why[400];
    size_t len = 0;
    for (size_t i = 0; i < k; i++)
        len += (size_t)snprintf(ids + len, sizeof ids - len, "%s%llu", i ? ", " : "",
                                (unsigned long long)m->slots[first[i]].job.id);
    if ((uint64_t)k < n)
        snprintf(ids + len, sizeof ids - len, ", ...");
    char d[40];
    double lim = fs_time_to_s(m->cfg->drain_limit);
    if (capped) {
        snprintf(d, sizeof d, "%.6g d", lim / 86400.0);
        fs_error_set(&m->err, FS_ESTUCK, "until: drain: %llu job%s still queued or running %s "
                     "after the last arrival (drain_limit) at simulated time %.6g d: %s; raise "
                     "drain_limit, or use until: horizon", (unsigned long long)n,
                     n == 1 ? " is" : "s are", d, fs_time_to_s(m->sim.now) / 86400.0, ids);
    } else {
        stuck_reason(m, &m->slots[first[0]], first[0], why, sizeof why);
        fs_error_set(&m->err, FS_ESTUCK, "no queued job can ever start: %llu job%s (%s) wait%s "
                     "at simulated time %.6g d with nothing running and no event left that "
                     "could start them; %s", (unsigned long long)n, n == 1 ? "" : "s", ids,
                     n == 1 ? "s" : "", fs_time_to_s(m->sim.now) / 86400.0, why);
    }
    fs_sim_fail(&m->sim, FS_ESTUCK);
}

/* ---- events ------------------------------------------------------------------- */

/* The jobs' accounts up to now, summed over every job (not replicas), as
 * the jobs' rows would give them now (emitted jobs' totals, and each active
 * job's account with a running attempt advanced to now on a copy of its
 * record and a recovering job's hold counted to now): O(slots).  The
 * reference the aggregates of acct_now are tested against. */
void fs_model_job_accounts(const fs_model_t *m, double out[4])
{
    out[0] = m->job_held_gpu_s;
    out[1] = m->job_compute_gpu_s;
    out[2] = m->ckpt_gpu_s;
    out[3] = m->startup_gpu_s;
    fs_time_t now = m->sim.now;
    for (size_t i = 0; i < m->n_slots; i++) {
        const fs_jobrt_t *j = &m->slots[i];
        if (j->state == FS_JOBRT_FREE || !j->r || is_replica(j))
            continue;
        fs_jobrun_t c = *j->r;
        double share = gpu_share(j);
        if (j->state == FS_JOBRT_RUNNING) {
            fs_recov_advance(&c, now - c.settled_at, m->cfg->recovery.write_cost);
            c.held_gpu_s += share * fs_time_to_s(now - c.start);
        } else if (j->state == FS_JOBRT_RECOVERING && c.holding) {
            c.held_gpu_s += held_gpus(j) * fs_time_to_s(now - c.settled_at);
        }
        out[0] += c.held_gpu_s;
        out[1] += share * fs_time_to_s(c.w_compute);
        out[2] += share * fs_time_to_s(c.w_ckpt);
        out[3] += share * fs_time_to_s(c.w_startup);
    }
}

/* The same from the aggregates kept as the accounts accrue (acct_*): the
 * settled increments, the unsettled holds and plain compute in closed form,
 * and only the running jobs with phases advanced on a copy.  O(those). */
static void acct_now(const fs_model_t *m, double out[4])
{
    double t = tsec(m->sim.now);
    out[0] = m->ac_held + (t * m->ac_run_s - m->ac_run_t) + (t * m->ac_rec_s - m->ac_rec_t);
    out[1] = m->ac_comp + (t * m->ac_pure_s - m->ac_pure_t);
    out[2] = m->ac_ckpt;
    out[3] = m->ac_startup;
    for (size_t i = 0; i < m->n_cx; i++) {
        const fs_jobrun_t *r = m->slots[m->cx[i]].r;
        fs_jobrun_t c = *r;
        fs_recov_advance(&c, m->sim.now - c.settled_at, m->cfg->recovery.write_cost);
        out[1] += r->ac_share * tsec(c.w_compute - r->w_compute);
        out[2] += r->ac_share * tsec(c.w_ckpt - r->w_ckpt);
        out[3] += r->ac_share * tsec(c.w_startup - r->w_startup);
    }
}

static void sample(fs_model_t *m)
{
    fs_sample_row_t r;
    memset(&r, 0, sizeof r);    /* padding too: rows are compared and copied whole */
    r.time = fs_time_to_s(m->sim.now);
    r.gpus_total = (uint32_t)m->cluster.gpus_total;
    r.gpus_up = (uint32_t)m->cluster.gpus_up;
    r.gpus_busy = (uint32_t)m->cluster.gpus_busy;
    r.jobs_running = (uint32_t)(m->running - m->svc_running);
    r.jobs_queued = (uint32_t)(m->queued - m->svc_queued);
    r.gpus_queued = m->gpus_queued;
    r.nodes_down = m->nodes_out;
    r.repair_queue = 0;
    r.nodes_provisioning = 0;
    r.nodes_autoscaled = 0;
    r.gpus_serving = 0;
    r.replicas = 0;
    r.mig_instances = r.mig_busy = r.mig_serving = 0;
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {    /* MIG pools (docs/mig.md) */
        r.mig_instances += (uint32_t)m->cluster.pools[p].mig_total;
        r.mig_busy += (uint32_t)m->cluster.pools[p].mig_busy;
    }
    {
        /* the integrals up to now without settling (settling here would
         * split the other integrals' sums and change their last bits) */
        double dt = fs_time_to_s(m->sim.now - m->last_settle), total = 0;
        double busy = m->int_busy + dt * (double)m->cluster.gpus_busy;
        double down = m->int_down, waiting = m->int_waiting, idle = m->int_idle;
        double frag = m->int_frag;
        if (m->queued > 0)
            frag_refresh(m);
        capstates_add(m, dt, &total, &down, &waiting, &idle, &frag);
        r.gpu_s_busy = busy - m->smp_busy;
        r.gpu_s_down = down - m->smp_down;
        r.gpu_s_waiting = waiting - m->smp_waiting;
        r.gpu_s_idle = idle - m->smp_idle;
        r.gpu_s_frag = frag - m->smp_frag;
        held_back_split(m, r.gpu_s_waiting - r.gpu_s_frag, &r.gpu_s_quota, &r.gpu_s_reserved,
                        &r.gpu_s_blocked);
        m->smp_frag = frag;
        m->smp_busy = busy;
        m->smp_down = down;
        m->smp_waiting = waiting;
        m->smp_idle = idle;
        double alloc = m->int_alloc + dt * ((double)m->cluster.milli_busy / 1000.0);
        r.gpu_s_allocated = alloc - m->smp_alloc;
        r.gpu_s_share_idle = r.gpu_s_busy - r.gpu_s_allocated;
        m->smp_alloc = alloc;
        /* allocated = jobs' holds + serving; a hold = computing + ckpt +
         * startup + recovering (as /summary, per interval) */
        double acc[4];
        acct_now(m, acc);
        r.gpu_s_held = acc[0] - m->smp_held;
        r.gpu_s_computing = acc[1] - m->smp_compute;
        r.gpu_s_ckpt = acc[2] - m->smp_ckpt;
        r.gpu_s_startup = acc[3] - m->smp_startup;
        r.gpu_s_recovering = r.gpu_s_held - r.gpu_s_computing - r.gpu_s_ckpt - r.gpu_s_startup;
        r.gpu_s_serving = r.gpu_s_allocated - r.gpu_s_held;
        m->smp_held = acc[0];
        m->smp_compute = acc[1];
        m->smp_ckpt = acc[2];
        m->smp_startup = acc[3];
    }
    for (size_t i = 0; i < m->n_modules; i++)
        if (m->modules[i].ops->sample)
            m->modules[i].ops->sample(m->modules[i].ud, m, &r);
    int rc = m->sink.sample ? m->sink.sample(m->sink.ud, &r) : 0;
    if (rc) {
        fail_sink(m, rc, "writing a timeline sample");
        return;
    }
    m->last_sample = m->sim.now;
    if (m->sample_last)
        return;
    fs_time_t next = m->sim.now + m->cfg->output.timeline_interval;
    int more = m->cfg->until == FS_UNTIL_HORIZON ? next <= m->horizon
                                                 : (!m->src_done || m->queued + m->running + m->recovering > 0);
    if (more) {
        fs_event_t ev = {.time = next, .type = EV_SAMPLE, .priority = FS_PRIO_SAMPLE};
        if (!fs_sim_schedule(&m->sim, &ev, NULL))
            m->sample_pending = 1;
    }
}

static void on_event(fs_sim_t *sim, const fs_event_t *ev, void *vm)
{
    fs_model_t *m = vm;
    if (ev->type != EV_MODULE || ev->entity >= m->n_modules || !m->modules[ev->entity].ops->quiet)
        m->pass_wanted = 1;
    switch (ev->type) {
    case EV_JOB_END:
        job_end(m, ev->entity);
        break;
    case EV_SAMPLE:
        m->sample_pending = 0;
        sample(m);
        break;
    case EV_DRAIN_CAP:
        m->cap_pending = 0;
        if (m->queued + m->running + m->recovering > 0)
            cannot_go_on(m, 1);
        break;
    case EV_MODULE: {
        if (ev->entity >= m->n_modules)
            FS_BUG(sim, "event of unknown module %u", ev->entity);
        if (ev->priority == FS_PRIO_FAILURE)
            m->inert_pending--;
        const module_t *mod = &m->modules[ev->entity];
        int rc = mod->ops->on_event(mod->ud, m, ev->data);
        if (rc)
            fail(m, rc, mod->ops->name);
        break;
    }
    case EV_RECOVER:
        on_recover(m, ev->entity, ev->data);
        break;
    case EV_POLICY:
        if (m->pol->timer) {
            int rc = m->pol->timer(m->pol_state, m, ev->data);
            if (rc)
                fail(m, rc, "policy timer");
        }
        break;
    default:
        FS_BUG(sim, "unknown event type %u", ev->type);
    }
}

static void on_instant_end(fs_sim_t *sim, void *vm)
{
    fs_model_t *m = vm;
    int want = m->pass_wanted;
    m->pass_wanted = 0;
    if (m->queued > 0 && want) {
        int rc = m->pol->pass(m->pol_state, m);
        if (rc)
            fail(m, rc, "scheduling pass");
    }
    /* after a pass that left jobs queued; with after_pass_idle also after
     * an instant that leaves nothing queued */
    if (want && m->after_pass && !m->err.code && (m->queued > 0 || m->after_pass_idle)) {
        const module_t *mod = &m->modules[m->after_pass - 1];
        int rc = mod->ops->after_pass(mod->ud, m);
        if (rc)
            fail(m, rc, mod->ops->name);
    }
    if (m->src_done && !m->err.code) {
        if (m->cfg->until == FS_UNTIL_DRAIN) {
            /* drained: the run ends with its last job (failure processes,
             * repairs and purchases after it do not keep it going) */
            if (m->queued + m->running + m->recovering == 0) {
                fs_sim_stop(sim);
                return;
            }
            if (m->running == 0 && m->recovering == 0 &&
                fs_evq_size(&sim->evq) == m->sample_pending + m->cap_pending + m->inert_pending) {
                cannot_go_on(m, 0);
                return;
            }
        } else if (m->cfg->horizon_auto && sim->now >= m->horizon) {
            fs_sim_stop(sim);   /* until: horizon at the trace's last submission */
            return;
        }
    }
    uint64_t mark = (sim->events + sim->arrivals) >> 15;
    if (m->progress && mark != m->progress_mark) {
        m->progress_mark = mark;
        m->progress->fn(m->progress->ud, m);
    }
}

static const fs_model_ops_t model_ops = {
    .on_event = on_event,
    .on_instant_end = on_instant_end,
    .source_peek = src_peek,
    .source_take = src_take,
};

/* ---- lifecycle ---------------------------------------------------------------- */

int fs_model_create(const fs_config_t *cfg, fs_source_t *src, const fs_sink_t *sink,
                    fs_model_t **out, fs_error_t *err)
{
    *out = NULL;
    fs_model_t *m = fs_calloc(1, sizeof *m);
    if (!m)
        return fs_error_set(err, FS_ENOMEM, "model: out of memory");
    m->cfg = cfg;
    for (size_t p = 0; p < cfg->cluster.n_pools; p++)
        if (cfg->cluster.pools[p].power_cap_w > 0 || cfg->telemetry.throttle_c > 0)
            m->capped = 1;
    for (size_t p = 0; p < cfg->cluster.n_pools; p++)
        if (cfg->cluster.pools[p].time_slicing || cfg->cluster.pools[p].mps)
            m->shared = 1;
    m->src = src;
    for (size_t i = 0; i < cfg->cluster.n_pools; i++)
        if (cfg->cluster.pools[i].taints && cfg->cluster.pools[i].taints[0])
            m->tainted = 1;
    m->win_lo = cfg->warmup;
    m->win_hi = cfg->horizon;
    m->horizon = cfg->horizon;
    m->last_arrival = -1;
    if (sink)
        m->sink = *sink;
    fs_sim_init(&m->sim, &model_ops, m);
    int rc = fs_cluster_init(&m->cluster, &cfg->cluster, err);
    if (rc) {
        fs_sim_release(&m->sim);
        fs_free(m);
        return rc;
    }
    rc = fs_placer_create(&m->cluster, cfg->scheduler.placement, cfg->scheduler.candidates,
                          &cfg->cluster, cfg->seed, cfg->replication, &m->placer, err);
    if (!rc)
        fs_placer_set_scoring(m->placer, cfg->scheduler.node_score,
                              cfg->scheduler.w_gpu, cfg->scheduler.w_cpu, cfg->scheduler.w_mem);
    if (!rc)    /* pod start-up (docs/models.md); NULL when not modelled */
        rc = fs_startup_create(cfg, &m->cluster, &m->startup, err);
    if (!rc) {  /* the waiting split's counts (frag_refresh) */
        size_t cells = 0;
        m->qdem_off = fs_calloc(m->cluster.n_pools + 1, sizeof *m->qdem_off);
        m->qmig = fs_calloc(m->cluster.n_pools + 1, sizeof *m->qmig);
        for (uint32_t p = 0; m->qdem_off && p < m->cluster.n_pools; p++) {
            m->qdem_off[p] = (uint32_t)cells;
            cells += m->cluster.pools[p].gpn + 1;
        }
        m->qdem = fs_calloc(cells + 1, sizeof *m->qdem);
        if (!m->qdem_off || !m->qmig || !m->qdem)
            rc = fs_error_set(err, FS_ENOMEM, "model: out of memory");
        m->frag_stale = 1;
        m->wait_label = cfg->scheduler.queue == FS_QUEUE_KUEUE ||
                                cfg->scheduler.queue == FS_QUEUE_VOLCANO
                            ? FS_WAIT_QUOTA
                        : cfg->scheduler.backfill != FS_BACKFILL_NONE ? FS_WAIT_RESERVED
                                                                      : FS_WAIT_BLOCKED;
    }
    if (rc) {
        fs_model_destroy(m);
        return rc;
    }
    m->pol = fs_policy_select(&cfg->scheduler);
    if (!m->pol) {
        fs_model_destroy(m);
        return fs_error_set(err, FS_EINVAL, "scheduler.queue: no policy with index %d",
                            cfg->scheduler.queue);
    }
    rc = m->pol->create(m, &cfg->scheduler, &m->pol_state, err);
    if (rc) {
        fs_model_destroy(m);
        return rc;
    }
    m->batch = fs_malloc(BATCH * sizeof *m->batch);
    if (!m->batch) {
        fs_model_destroy(m);
        return fs_error_set(err, FS_ENOMEM, "model: out of memory");
    }
    /* cost: usage integrals, cloud burst, purchase timeline (docs/cost.md) */
    if (fs_usage_create(&m->cluster, &m->usage) ||
        (cfg->cost.n_carbon_hours &&   /* hourly grid intensity (docs/cost.md, "Carbon") */
         fs_usage_set_intensity(m->usage, cfg->cost.carbon_hourly, cfg->cost.n_carbon_hours))) {
        fs_model_destroy(m);
        return fs_error_set(err, FS_ENOMEM, "model: out of memory");
    }
    fs_usage_set_window(m->usage, m->win_lo, m->win_hi);  /* the window's cost */
    if (cfg->cost.energy == FS_ENERGY_POWER && energy_init(m)) {
        fs_model_destroy(m);
        return fs_error_set(err, FS_ENOMEM, "model: out of memory");
    }
    /* the modules (fs_modules.c): cloud burst, purchase timeline, autoscaling,
     * component failures, inference services; each registers when cfg asks */
    for (size_t i = 0; !rc && i < fs_model_n_modules; i++)
        rc = fs_model_modules[i].attach(m, err);
    if (rc) {
        fs_model_destroy(m);
        return rc;
    }
    m->last_sample = -1;
    m->acct_on = cfg->output.timeline_interval > 0;
    if (cfg->output.timeline_interval > 0) {
        fs_event_t ev = {.time = 0, .type = EV_SAMPLE, .priority = FS_PRIO_SAMPLE};
        if (fs_sim_schedule(&m->sim, &ev, NULL)) {
            fs_model_destroy(m);
            return fs_error_set(err, FS_ENOMEM, "model: out of memory");
        }
        m->sample_pending = 1;
    }
    *out = m;
    return 0;
}

void fs_model_destroy(fs_model_t *m)
{
    if (!m)
        return;
    for (size_t i = m->n_modules; i-- > 0;)
        if (m->modules[i].ops->destroy)
            m->modules[i].ops->destroy(m->modules[i].ud);
    fs_free(m->modules);
    fs_free(m->node_holds);
    fs_free(m->cordon);
    fs_free(m->node_speed);
    if (m->nidx)
        for (uint32_t i = 0; i < m->cluster.n_nodes; i++)
            fs_free(m->nidx[i].v);
    fs_free(m->nidx);
    fs_free(m->scr);
    fs_free(m->pods);
    fs_free(m->pool_mttf);
    fs_usage_destroy(m->usage);
    fs_free(m->epool);
    fs_free(m->eunit);
    fs_free(m->escr);
    fs_startup_destroy(m->startup);
    if (m->pol && m->pol_state)
        m->pol->destroy(m->pol_state);
    for (size_t i = 0; i < m->n_slots; i++)
        if (m->slots[i].state == FS_JOBRT_RUNNING ||
            (m->slots[i].state == FS_JOBRT_RECOVERING && m->slots[i].r->holding))
            fs_placement_release(&m->slots[i].r->place);
    fs_free(m->slots);
    fs_free(m->cx);
    fs_free(m->qdem);
    fs_free(m->qdem_off);
    fs_free(m->qmig);
    fs_free(m->free_slots);
    for (size_t i = 0; i < m->n_run_chunks; i++)
        fs_free(m->run_chunks[i]);
    fs_free(m->run_chunks);
    fs_free(m->run_free);
    fs_free(m->batch);
    fs_free(m->set_pool);
    fs_free(m->set_off);
    fs_free(m->type_set);
    fs_free(m->dsets);
    fs_placer_destroy(m->placer);
    fs_cluster_release(&m->cluster);
    fs_sim_release(&m->sim);
    fs_free(m);
}

int fs_model_run(fs_model_t *m, const volatile sig_atomic_t *interrupt,
                 const fs_model_progress_t *progress, fs_error_t *err)
{
    m->sim.interrupt = interrupt;
    m->progress = progress && progress->fn ? progress : NULL;
    fs_time_t until = m->cfg->until == FS_UNTIL_HORIZON ? m->cfg->horizon : FS_TIME_NEVER;
    int rc = fs_sim_run(&m->sim, until);
    if (rc == FS_EINTR)
        return fs_error_set(err, FS_EINTR, "interrupted at simulated time %.3f s",
                            fs_time_to_s(m->sim.now));
    if (rc) {
        if (err && m->err.code)
            *err = m->err;
        else
            fs_error_set(err, rc, "run failed: %s", fs_error_describe(rc));
        return rc;
    }
    return 0;
}

int fs_model_finish(fs_model_t *m, fs_run_totals_t *t, fs_error_t *err)
{
    fs_time_t end = m->cfg->until == FS_UNTIL_HORIZON ? m->horizon : m->last_change;
    if (end < m->last_settle)
        end = m->last_settle;
    settle(m, end);
    /* the closing /timeline row: the rows cover the run to its end (a
     * drained run ends between two samples), so that they add up to the
     * /summary integrals; before the modules finish and the active jobs'
     * rows are written (the row reads both) */
    if (m->cfg->output.timeline_interval > 0 && m->last_sample >= 0 && m->last_sample < end &&
        !m->err.code) {
        fs_time_t now = m->sim.now;
        m->sim.now = end;
        m->sample_last = 1;
        sample(m);
        m->sim.now = now;
    }
    memset(t, 0, sizeof *t);    /* before the modules add their totals */
    for (size_t i = 0; i < m->n_modules && !m->err.code; i++)
        if (m->modules[i].ops->finish) {
            int rc = m->modules[i].ops->finish(m->modules[i].ud, m, t);
            if (rc)
                fail(m, rc, m->modules[i].ops->name);
        }
    /* jobs still active: rows with what they did so far (a recovering job
     * is waiting to be requeued: QUEUED) */
    m->finishing = 1;
    m->end_at = end;
    for (size_t i = 0; i < m->n_slots; i++) {
        fs_jobrt_t *j = &m->slots[i];
        if (is_replica(j) && j->state != FS_JOBRT_FREE) {  /* their holds end at the end */
            if (j->state == FS_JOBRT_RUNNING || (j->state == FS_JOBRT_RECOVERING && j->r->holding))
                emit_intervals(m, j, end);
            if (m->err.code)
                break;
            continue;
        }
        if (j->state == FS_JOBRT_RUNNING) {
            fs_recov_advance(j->r, end - j->r->settled_at, m->cfg->recovery.write_cost);
            j->r->settled_at = end;
            double ran = fs_time_to_s(end - j->r->start);
            j->r->run_s += ran;
            j->r->held_gpu_s += gpu_share(j) * ran;
            fs_time_t kept = j->job.duration - j->r->remaining;
            m->useful_gpu_s += useful_gpu_s(j, kept);
            emit_intervals(m, j, end);
            if (m->err.code || emit(m, j, FS_STATE_RUNNING))
                break;
        } else if (j->state == FS_JOBRT_QUEUED) {
            if (emit(m, j, FS_STATE_QUEUED))
                break;
        } else if (j->state == FS_JOBRT_RECOVERING) {
            if (j->r->holding)
                emit_intervals(m, j, end);
            hold_account(m, j, end);
            j->r->w_recovery += end - j->r->start;
            if (emit(m, j, FS_STATE_QUEUED))
                break;
        }
    }
    if (m->err.code) {
        if (err)
            *err = m->err;
        return m->err.code;
    }
    if (m->pol->stats) {
        fs_policy_stats_t ps = {0};
        m->pol->stats(m->pol_state, &ps);
        t->backfilled = ps.backfilled;
        t->admissions = ps.admissions;
        t->admissions_borrowing = ps.admissions_borrowing;
        t->reclaims = ps.reclaims;
    }
    t->end_time = fs_time_to_s(end);
    t->makespan = fs_time_to_s(m->last_change);
    t->gpus_total = m->cluster.gpus_total;
    t->gpu_s_capacity = m->int_up;
    t->gpu_s_busy = m->int_busy;
    t->gpu_s_useful = m->useful_gpu_s;
    t->window_start = fs_time_to_s(m->win_lo);
    t->window_end = fs_time_to_s(end < m->win_hi ? end : m->win_hi);
    t->gpu_s_capacity_window = m->win_up;
    t->gpu_s_busy_window = m->win_busy;
    t->jobs_queued_integral = m->int_queued;
    t->jobs_system_integral = m->int_system;
    t->jobs_submitted = m->submitted;
    t->events = m->sim.events + m->sim.arrivals;
    t->passes = m->sim.passes;
    t->rows_skipped = fs_source_skipped(m->src);
    t->interruptions = m->interruptions;
    t->gpu_s_lost = m->lost_gpu_s;
    t->gpu_s_ckpt = m->ckpt_gpu_s;
    t->preemptions = m->preemptions;
    t->gpu_s_lost_preempt = m->lost_preempt_gpu_s;
    t->gpu_s_startup = m->startup_gpu_s;
    t->gpu_s_total = m->int_total;
    t->gpu_s_down = m->int_down;
    t->gpu_s_waiting = m->int_waiting;
    t->gpu_s_idle = m->int_idle;
    /* busy = allocated + share_idle; allocated = jobs' holds + serving;
     * a job's hold = computing + ckpt + startup + recovering (restore and
     * the holds while a failure is detected) */
    t->gpu_s_allocated = m->int_alloc;
    t->gpu_s_share_idle = m->int_busy - m->int_alloc;
    t->gpu_s_held = m->job_held_gpu_s;
    t->gpu_s_serving = m->int_alloc - m->job_held_gpu_s;
    t->gpu_s_computing = m->job_compute_gpu_s;
    t->gpu_s_redo = m->job_lost_gpu_s;
    t->gpu_s_recovering = m->job_held_gpu_s - m->job_compute_gpu_s - m->ckpt_gpu_s - m->startup_gpu_s;
    t->gpu_s_held_idle = m->job_idle_gpu_s;
    t->gpu_s_frag = m->int_frag;
    held_back_split(m, m->int_waiting - m->int_frag, &t->gpu_s_quota, &t->gpu_s_reserved,
                    &t->gpu_s_blocked);
    return 0;
}

int fs_model_truncated(const fs_model_t *m) { return m->truncated; }
fs_time_t fs_model_horizon(const fs_model_t *m) { return m->horizon; }
fs_usage_t *fs_model_usage(fs_model_t *m) { return m->usage; }
