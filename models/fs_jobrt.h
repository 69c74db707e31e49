/*
 * fs_jobrt: the runtime state of an active job (queued, running or
 * recovering), as the model (fs_model.h) keeps it in its job slots and the
 * policies and the recovery arithmetic (fs_recovery.h) read it.  Plain
 * records: they know the job record, the placement and the event handle,
 * not the model.  Split in two (issue #13): what a waiting job needs, and
 * the run record a job takes when it first starts.
 */
#ifndef FS_JOBRT_H
#define FS_JOBRT_H

#include <stdint.h>

#include "../sim/fs_evq.h"
#include "../sim/fs_time.h"
#include "../traces/fs_job.h"
#include "fs_cluster.h"

/* RECOVERING: interrupted by a failure, not yet back in the queue (the
 * detection delay, while it may still hold its healthy nodes, then the
 * requeue and backoff delay, holding nothing; docs/recovery.md). */
enum fs_jobrt_state { FS_JOBRT_FREE = 0, FS_JOBRT_QUEUED = 1, FS_JOBRT_RUNNING = 2,
                      FS_JOBRT_RECOVERING = 3 };

/* What a job has once it has run: its attempts, recovery and accounting
 * (docs/performance.md "Memory per queued job").  A job that has never
 * started has none (fs_jobrt_t.r is NULL) and costs only its fs_jobrt_t:
 * the record is taken at the first start and given back with the slot
 * (a job is admitted at its submission, so that is when it was queued). */
typedef struct fs_jobrun {
    fs_time_t first_start;  /* -1 until started */
    fs_time_t start;        /* start of the current attempt */
    fs_time_t remaining;    /* work left at speed 1.0, us */
    double rate;            /* progress per us of wall time: the speed factor set at start */
    fs_time_t settled_at;   /* when remaining was last settled */
    fs_placement_t place;   /* valid while running */
    fs_event_handle_t end_ev;
    uint32_t restarts;
    double run_s;           /* wall seconds run, finished attempts */
    double lost_gpu_s;      /* GPU-s of compute whose work was lost */
    /* recovery (fs_model_attempt.c, docs/recovery.md): an attempt is restore R
     * (after a failure), then compute tau / write delta cycles; all as of
     * settled_at.  Wall times in us. */
    uint8_t phase;          /* enum fs_phase: 0 compute, 1 restore, 2 checkpoint write, 3 start-up */
    uint8_t holding;        /* RECOVERING: still holds (part of) its placement */
    uint8_t need_restore;   /* the next start pays recovery.restore */
    uint8_t retiring;       /* a recovering replica its service retired: ends at the requeue */
    uint32_t failures;      /* interruptions by failures (the retry count) */
    double rate_base;       /* rate without node speeds (pool x span factor) */
    fs_time_t rem0;         /* remaining work at the start of the attempt */
    fs_time_t ckpt_every;   /* checkpoint interval this attempt, work us (0: none) */
    fs_time_t since_ckpt;   /* work since the last completed checkpoint */
    fs_time_t since_wall;   /* wall compute time behind since_ckpt */
    fs_time_t phase_left;   /* wall left in a restore or write */
    fs_time_t w_compute, w_ckpt, w_lost, w_recovery; /* wall: computing, writing,
                               computing work later lost, detection+requeue+restore */
    fs_time_t w_startup;    /* wall in pod start-up (image pull, container, load), all attempts */
    fs_time_t restore_after;/* STARTING: the restore that follows the start-up, us */
    fs_time_t att_startup;  /* the current attempt's start-up, us (/gpu_intervals ready) */
    double held_gpu_s;      /* GPU-s held (attempts and detection) */
    /* queueing and preemption (fs_model_preempt) */
    fs_time_t queued_since; /* when it last entered the queue (valid while QUEUED) */
    fs_time_t queued_us;    /* time queued before the current state: first wait + requeues */
    uint32_t preemptions;   /* times preempted by the policy (failures not counted) */
    uint32_t milli_asked;   /* on a shared GPU (cluster.pools[].sharing): the job's gpu_milli
                               before its replica's share replaced it, given back when it is
                               queued again; 0: not replaced */
    double preempt_lost_gpu_s; /* the part of lost_gpu_s lost to preemptions */
    /* the /timeline held split (fs_model_accounts.c): what this job adds to
     * the model's aggregates while it runs or holds, to take it back exactly */
    double ac_share;        /* its GPU share in the running aggregates, 0: not in them */
    double ac_hold;         /* the GPUs it holds in the recovering aggregates */
    uint32_t cx_pos;        /* its index in the model's list of running jobs with
                               phases (checkpoints, start-up, restore); UINT32_MAX: none */
    uint8_t sh_var;         /* some attempt ran on a shared GPU at a replica's share: the
                               /summary split takes gs_* below, not the final share x w_* */
    uint8_t sh_open;        /* an attempt is open in gs_* (started, not yet stopped) */
    /* GPU-s of computing, checkpoint writes and start-up, each attempt at its own
     * share: share x w_* at its stop minus share x w_* at its start */
    double gs_comp, gs_ckpt, gs_start;
    /* /summary's useful GPU-s of such a job (sh_var): each attempt's kept
     * work at its own share.  u_p: the work (us of its duration) kept when
     * it last went back to the queue; u_gs: the GPU-s of that work */
    fs_time_t u_p;
    double u_gs;
} fs_jobrun_t;

/* The model's copy of an admitted job's record (issue #13): the fields of
 * fs_job_t (traces/fs_job.h) that the model and the policies read, packed
 * (64 bytes, not 88).  Left out: gpu_type (the pool set, type_pools, is
 * taken from it at admission), rec_start, rec_end and rec_state (the
 * trace's own record: results do not read them).  job_class is 16 bits and
 * gpu_milli 16 bits: the model refuses an admission beyond (FS_ELIMIT). */
typedef struct fs_jobq {
    uint64_t id;
    fs_time_t submit;
    fs_time_t duration;
    fs_time_t estimate;
    uint32_t gpus;
    int32_t tenant;
    int32_t priority;
    uint32_t cpu_milli;
    uint32_t mem_mib;
    int32_t mig;
    int16_t job_class;
    uint16_t gpu_milli;
    uint8_t flags;
    uint8_t rec_util;
    uint8_t rec_fb;
} fs_jobq_t;
_Static_assert(sizeof(fs_jobq_t) == 64, "the model's job record is 64 bytes (issue #13)");

/* 1 if job fits fs_jobq_t (job_class and gpu_milli in 16 bits), else 0. */
static inline int fs_jobq_fits(const fs_job_t *j)
{
    return j->job_class >= INT16_MIN && j->job_class <= INT16_MAX && j->gpu_milli <= UINT16_MAX;
}

/* The packed copy of job (fs_jobq_fits(job) holds). */
static inline fs_jobq_t fs_jobq_of(const fs_job_t *j)
{
    return (fs_jobq_t){.id = j->id, .submit = j->submit, .duration = j->duration,
                       .estimate = j->estimate, .gpus = j->gpus, .tenant = j->tenant,
                       .priority = j->priority, .cpu_milli = j->cpu_milli, .mem_mib = j->mem_mib,
                       .mig = j->mig, .job_class = (int16_t)j->job_class,
                       .gpu_milli = (uint16_t)j->gpu_milli, .flags = j->flags,
                       .rec_util = j->rec_util, .rec_fb = j->rec_fb};
}

/* fs_job_milli, fs_job_pod_res and fs_podreq_of for the packed copy. */
static inline uint64_t fs_jobq_milli(const fs_jobq_t *j)
{
    return (uint64_t)j->gpus * j->gpu_milli;
}
static inline uint64_t fs_jobq_pod_res(const fs_jobq_t *j)
{
    if (j->mig)
        return (uint64_t)1 << 63 | (uint64_t)(uint32_t)j->mig << 32 | j->mem_mib;
    return j->flags & FS_JOB_SINGLE_NODE ? ((uint64_t)j->cpu_milli << 32) | j->mem_mib : 0;
}
static inline fs_podreq_t fs_jobq_podreq(const fs_jobq_t *j)
{
    int pod = (j->flags & FS_JOB_SINGLE_NODE) != 0;
    return (fs_podreq_t){j->gpus, j->gpu_milli, pod ? j->cpu_milli : 0, pod ? j->mem_mib : 0};
}

/* Runtime state of an active job: what a waiting job needs (issue #13: a
 * queued job that has never run holds this record alone, 80 bytes; a
 * policy keeps its own per-job state in its own arrays). */
typedef struct fs_jobrt {
    fs_jobq_t job;
    fs_jobrun_t *r;         /* attempts and accounting: NULL until it first runs */
    uint32_t seq;           /* admission order, 0..: a run admits at most 2^32 jobs
                               (the model refuses more, FS_ELIMIT) */
    int16_t type_pools;     /* index into the model's pool sets, < INT16_MAX of them
                               (the model refuses more, FS_ELIMIT); -1 any pool */
    uint8_t state;          /* enum fs_jobrt_state */
} fs_jobrt_t;
_Static_assert(sizeof(fs_jobrt_t) == 80, "a waiting job's slot is 80 bytes (issue #13)");

/* Restarts so far (0 before the first start). */
static inline uint32_t fs_jobrt_restarts(const fs_jobrt_t *j)
{
    return j->r ? j->r->restarts : 0;
}

/* Work left at speed 1.0 as last settled (its duration before the first
 * start; fs_model_remaining for a running job's work left now). */
static inline fs_time_t fs_jobrt_remaining(const fs_jobrt_t *j)
{
    return j->r ? j->r->remaining : j->job.duration;
}

#endif
