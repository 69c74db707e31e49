/*
 * fs_job: the job record that every workload source yields and every model
 * consumes.  A plain value type (copied, never shared), 96 bytes.
 *
 * Times are fs_time_t microseconds since the start of the run.  Durations
 * are the run time the job needs on a reference GPU at full speed (speed
 * factor 1.0).  Fields a source does not know are set by fs_job_init:
 * estimate = -1, tenant = -1 (none), gpu_type = -1 (any), recorded times -1,
 * rec_state = FS_JOB_REC_UNKNOWN.
 *
 * The recorded fields keep what a production trace says really happened
 * (start, end, final state) so that results can be compared with it.
 */
#ifndef FS_JOB_H
#define FS_JOB_H

#include <stdint.h>

#include "../sim/fs_time.h"

/* Whole GPUs are gpus >= 1 with gpu_milli == 1000.  A fractional request is
 * gpus == 1 and gpu_milli in [1, 999] (share of one GPU, openb-style).  A
 * CPU-only pod (workload.trace.cpu_only: place) is gpus == 0 with
 * gpu_milli == 1000: it holds CPU and memory on one node and no GPU. */
#define FS_GPU_MILLI_WHOLE 1000u

/* Final state as recorded by the trace. */
enum fs_job_rec_state {
    FS_JOB_REC_UNKNOWN = 0,
    FS_JOB_REC_COMPLETED = 1,
    FS_JOB_REC_FAILED = 2,
    FS_JOB_REC_KILLED = 3,      /* cancelled / killed by user */
    FS_JOB_REC_TIMEOUT = 4,
    FS_JOB_REC_NODE_FAIL = 5,
    FS_JOB_REC_RUNNING = 6      /* still running at the end of the trace */
};

/* flags: the job is one Kubernetes pod (openb, one-instance PAI jobs): it
 * runs on one node, never split over nodes (models/fs_model.c). */
#define FS_JOB_SINGLE_NODE 1u
/* flags: a replica of an inference service (models/fs_service.h): it runs
 * until its service retires it, is never a row of /jobs and is left out of
 * the job statistics. */
#define FS_JOB_SERVICE 2u
/* flags: the trace records the job as cancelled before it started
 * (workload.trace.cancelled: withdraw).  Its duration is the time it was
 * pending, submission to cancellation: it leaves the queue at submit +
 * duration without running (/jobs state `withdrawn`); started earlier in the
 * simulation, it is stopped then, as the real one was (models/fs_model_withdraw.c). */
#define FS_JOB_WITHDRAW 4u

typedef struct fs_job {
    uint64_t id;            /* unique within a workload; sources number 1.. if absent */
    fs_time_t submit;       /* submission time, us */
    fs_time_t duration;     /* run time at speed 1.0, us (> 0) */
    fs_time_t estimate;     /* user's run-time estimate (time limit), us; -1 unknown */
    uint32_t gpus;          /* GPUs requested (>= 1) */
    uint32_t gpu_milli;     /* share of one GPU when fractional, else 1000 */
    int32_t tenant;         /* index into the source's tenant names; -1 none */
    int32_t gpu_type;       /* index into the source's GPU type names; -1 any */
    int32_t priority;       /* larger = more important; 0 default */
    int32_t job_class;      /* model class (speed factors); 0 default */
    fs_time_t rec_start;    /* recorded start, us; -1 unknown */
    fs_time_t rec_end;      /* recorded end, us; -1 unknown */
    uint32_t cpu_milli;     /* a pod's CPU request, milli-cores; 0 = none stated */
    uint32_t mem_mib;       /* a pod's memory request, MiB; 0 = none stated */
    int32_t mig;            /* MIG profile asked (models/fs_mig.h fs_mig_code), 0 = none: the
                               job is one pod taking `gpus` instances of it on one node, and
                               gpu_milli is the profile's compute share (docs/mig.md) */
    uint8_t flags;          /* FS_JOB_* bits; 0 by default */
    uint8_t rec_state;      /* enum fs_job_rec_state */
    uint8_t rec_util;       /* recorded GPU utilization (the trace's, e.g. PAI's sensor table):
                               1 + percent of the time a kernel ran, 1..101; 0 = not recorded */
    uint8_t rec_fb;         /* recorded GPU memory use per GPU, GB, coded by fs_job_fb_code
                               (PAI's avg_gpu_wrk_mem); 0 = not recorded.
                               The last byte: no padding, so records compare with memcmp
                               (88 bytes: the model keeps one per waiting job, issue #13) */
} fs_job_t;

_Static_assert(sizeof(fs_job_t) == 88, "a job record is 88 bytes without padding (memcmp)");

/* A recorded utilization (0..1) as rec_util, and back (-1: not recorded). */
static inline uint8_t fs_job_util_code(double u)
{
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    return (uint8_t)(1 + (int)(100 * u + 0.5));
}
static inline double fs_job_util(uint8_t code) { return code ? (code - 1) / 100.0 : -1; }

/* A recorded GPU memory use (GB per GPU, or per whole-GPU equivalent of a
 * fractional job) as rec_fb, and back (-1: not recorded).  One byte, two
 * linear pieces: 0.25 GB steps up to 32 GB (codes 1..129), 1.5 GB steps
 * above, up to FS_JOB_FB_MAX_GB (code 255); a value is stored as the
 * nearest step, so a decoded value codes back to the same byte. */
#define FS_JOB_FB_MAX_GB 221.0
static inline uint8_t fs_job_fb_code(double gb)
{
    gb = gb < 0 ? 0 : gb > FS_JOB_FB_MAX_GB ? FS_JOB_FB_MAX_GB : gb;
    if (gb <= 32)
        return (uint8_t)(1 + (int)(4 * gb + 0.5));
    return (uint8_t)(129 + (int)((gb - 32) / 1.5 + 0.5));
}
static inline double fs_job_fb_gb(uint8_t code)
{
    return !code ? -1 : code <= 129 ? (code - 1) / 4.0 : 32 + (code - 129) * 1.5;
}

static inline void fs_job_init(fs_job_t *j)
{
    j->id = 0;
    j->submit = 0;
    j->duration = 0;
    j->estimate = -1;
    j->gpus = 1;
    j->gpu_milli = FS_GPU_MILLI_WHOLE;
    j->tenant = -1;
    j->gpu_type = -1;
    j->priority = 0;
    j->job_class = 0;
    j->rec_start = -1;
    j->rec_end = -1;
    j->rec_state = FS_JOB_REC_UNKNOWN;
    j->flags = 0;
    j->cpu_milli = 0;
    j->mem_mib = 0;
    j->mig = 0;
    j->rec_util = 0;
    j->rec_fb = 0;
}

/* Requested GPU capacity in milli-GPUs (gpus * gpu_milli). */
static inline uint64_t fs_job_milli(const fs_job_t *j)
{
    return (uint64_t)j->gpus * j->gpu_milli;
}

/* A pod's CPU and memory as one key (0 for jobs that are not pods, whose
 * CPU and memory the model does not place): queues that keep one class per
 * shape (models/fs_shape.h) tell pods of different requests apart by it. */
static inline uint64_t fs_job_pod_res(const fs_job_t *j)
{
    if (j->mig)     /* MIG pods: one class per profile (and CPU, memory) */
        return (uint64_t)1 << 63 | (uint64_t)(uint32_t)j->mig << 32 | j->mem_mib;
    return j->flags & FS_JOB_SINGLE_NODE ? ((uint64_t)j->cpu_milli << 32) | j->mem_mib : 0;
}

const char *fs_job_rec_state_name(int32_t s);

#endif
