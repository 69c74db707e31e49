/*
 * fs_kueue: Kueue's admission as a scheduling policy (fs_policy_kueue,
 * scheduler.queue: kueue; docs/policies.md "Kueue").
 *
 * ClusterQueues (CQs) hold nominal quotas per flavor (a flavor = a set of
 * pools) and resource (nvidia.com/gpu in milli-GPUs, cpu in milli-cores,
 * memory in bytes, pods in milli-pods; a resource group's requests fit in
 * one flavor); CQs of one cohort lend unused quota to each other
 * within borrowingLimit / lendingLimit.  A job goes to the CQ of its
 * tenant (LocalQueue), waits in that CQ ordered by (priority, admission
 * order), is admitted when its CQ has quota for it in a flavor (borrowing
 * what the cohort lends) -- preempting per the CQ's preemption policies
 * when it does not -- and is placed by the model's placer in that
 * flavor's pools.  Quota is reserved at admission and released when the
 * job ends, is preempted or loses its node.
 *
 * Quota arithmetic (Kueue's resource nodes, one level of cohorts): for a
 * CQ c and flavor f, guaranteed = nominal - lendingLimit (0 without one),
 * lendable = nominal - guaranteed; the cohort's quota is the sum of its
 * CQs' lendable quota and its usage the sum of max(0, usage - guaranteed);
 *   available(c) = max(0, guaranteed - usage)
 *                + min(cohort quota - cohort usage,
 *                      lendable - max(0, usage - guaranteed) + borrowingLimit)
 * (the min only with a borrowingLimit); a CQ without a cohort has
 * nominal - usage.  A job of r fits when r <= available(c).
 *
 * Speed: each CQ keeps its waiting jobs in classes of identical shape (GPU
 * count, share, pool set), each a heap by (priority desc, admission order);
 * all jobs of a class fit or not together, so only class heads are tested.
 * A pass looks only at CQs marked active: a CQ is marked when a job
 * arrives at the head of one of its classes, when quota is released in its
 * cohort, or (for CQs blocked by node capacity) when GPUs are released
 * anywhere.  Cost per admission: O(active CQs x classes + log n).
 */
#ifndef FS_KUEUE_H
#define FS_KUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "fs_config.h"

/* Marks in mask[p] (n_pools bytes, zeroed by the caller) the pools that a
 * flavor stands for: each comma-separated item of `match` (the flavor's
 * name when match is NULL) names a pool, or a GPU model (ignoring case),
 * or contains a pool's GPU model as a dash/underscore/space separated word
 * ("NVIDIA-H100-80GB-HBM3" stands for pools of H100).  Returns how many. */
size_t fs_kueue_match_pools(const char *name, const char *match, const fs_cluster_cfg_t *cl,
                            uint8_t *mask);

/* ---- admissibility (fleetsim validate) ---------------------------------------
 * A probe is the policy's state built from a configuration alone (the
 * ClusterQueues, cohorts, flavors and tenant mappings of cfg's Kueue block).
 * fs_kueue_probe tells whether job j, every resource it asks of its CQ as
 * the run counts them (its milli-GPUs; a pod's CPU and memory; its pods,
 * one per node of a gang: docs/policies.md "Resources and resource
 * groups"), of tenant `tenant` (its name; NULL: no tenant) could ever be admitted:
 * its tenant maps to a ClusterQueue (LocalQueue, the CQ of its name, or
 * default_queue) and that CQ could ever hold the request in one flavor
 * with no usage anywhere (nominal quota plus what the cohort may lend,
 * within borrowingLimit).  Returns 1, or 0 with *why (n bytes) saying why
 * not.  Create: 0 or FS_EINVAL / FS_ENOMEM (err set). */
int fs_kueue_probe_create(const fs_config_t *cfg, void **probe, fs_error_t *err);
struct fs_job;
int fs_kueue_probe(const void *probe, const char *tenant, const struct fs_job *j, char *why,
                   size_t n);
void fs_kueue_probe_destroy(void *probe);
/* The ClusterQueue (index in cfg's scheduler.kueue.cqs) the jobs of tenant
 * `tenant` (NULL: no tenant) go to, as the run sends them, or -1 (none). */
int32_t fs_kueue_cq_of(const void *probe, const char *tenant);

/* ---- instrumentation (tests): state = fs_model_policy_state(m) ------------ */
typedef struct fs_kueue_stats {
    uint64_t admitted;      /* admissions (a requeued job counts again) */
    uint64_t borrowed;      /* admissions that borrowed from the cohort */
    uint64_t preempted;     /* victims preempted by admissions */
    uint64_t reclaimed;     /* of which from another CQ of the cohort */
    uint64_t unmapped;      /* jobs whose tenant maps to no CQ (they stay pending) */
    uint64_t checks;        /* invariant checks run (fs_kueue_check_every) */
    uint64_t violations;    /* checks that failed */
    char last_violation[160];
} fs_kueue_stats_t;

/* on: check the quota invariants after every pass (and count failures). */
void fs_kueue_check_every(void *state, int on);
/* Checks now: usage of every CQ = the sum of its admitted jobs; usage <=
 * nominal + borrowingLimit; without a cohort usage <= nominal; the cohort's
 * borrowed usage <= the sum of what its CQs lend (so no CQ's guaranteed,
 * non-lendable quota is used by another).  Returns 0 or -1 with msg set. */
int fs_kueue_check(const void *state, char *msg, size_t n);
const fs_kueue_stats_t *fs_kueue_stats(const void *state);
/* Usage of CQ `cq` in flavor `flavor` (names), GPUs; NaN if unknown. */
double fs_kueue_usage(const void *state, const char *cq, const char *flavor);
/* Per-team quota accounting (/tenants borrowed_gpu_hours, lent_gpu_hours):
 * the GPU-hours CQ `cq` ran on quota borrowed from its cohort, and of its
 * quota lent to the cohort's other CQs, integrated up to now
 * (docs/policies.md "Kueue").  0 or FS_EINVAL (no such CQ). */
struct fs_model;
size_t fs_kueue_n_cq(const void *state);
int fs_kueue_quota_hours(void *state, struct fs_model *m, size_t cq, double *borrowed, double *lent);
/* 1 if the run counts resource `res` (enum fs_kueue_resource: nvidia.com/gpu
 * always, the others where some CQ quotas them), else 0. */
int fs_kueue_counts(const void *state, int res);
/* The same for resource `res` (enum fs_kueue_resource): GPU-hours, cpu
 * core-hours, memory GiB-hours or pod-hours; NaN for both when the run does
 * not count the resource (no CQ quotas it).  0 or FS_EINVAL. */
int fs_kueue_quota_hours_res(void *state, struct fs_model *m, size_t cq, int res, double *borrowed,
                             double *lent);
/* The CQ of source tenant index t (its LocalQueue, a CQ named like it, or
 * default_queue), or -1. */
int32_t fs_kueue_tenant_cq(void *state, struct fs_model *m, int32_t tenant);
/* Admission log (tests): on, the slot's job ids are logged in admission
 * order; victims likewise in preemption order. */
void fs_kueue_record(void *state, int on);
const uint64_t *fs_kueue_admissions(const void *state, size_t *n);
const uint64_t *fs_kueue_victims(const void *state, size_t *n);

#endif
