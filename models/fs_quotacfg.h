/*
 * fs_quotacfg: configuration of the quota-based schedulers, Kueue
 * (scheduler.kueue, models/fs_kueue.c) and Volcano (scheduler.volcano,
 * models/fs_volcano.c).  Part of fs_sched_cfg_t; every field is a row of
 * scenarios/fs_keys.c.
 */
#ifndef FS_QUOTACFG_H
#define FS_QUOTACFG_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_time.h"

/* Kueue (scheduler.kueue, models/fs_kueue.c, docs/policies.md "Kueue").
 * Quotas are in GPUs (fractional requests count their share).  A limit
 * below 0 means none (Kueue's null). */
enum fs_kueue_strategy { FS_KUEUE_BEST_EFFORT_FIFO = 0, FS_KUEUE_STRICT_FIFO = 1 };
/* Preemption policies: withinClusterQueue takes NEVER, LOWER_PRIORITY,
 * LOWER_OR_NEWER_EQUAL; reclaimWithinCohort NEVER, LOWER_PRIORITY, ANY;
 * borrowWithinCohort NEVER, LOWER_PRIORITY. */
enum fs_kueue_preempt { FS_KUEUE_NEVER = 0, FS_KUEUE_LOWER_PRIORITY = 1,
                        FS_KUEUE_LOWER_OR_NEWER_EQUAL = 2, FS_KUEUE_ANY = 3 };

/* The resources a quota may name (Kueue's resource names nvidia.com/gpu,
 * cpu, memory, pods), and the unit of a quota of each: GPUs, cores, MiB,
 * pods.  The model counts milli-GPUs, milli-cores, bytes and milli-pods. */
enum fs_kueue_resource { FS_KRES_GPU = 0, FS_KRES_CPU = 1, FS_KRES_MEMORY = 2, FS_KRES_PODS = 3,
                         FS_KRES_N = 4 };

/* One quota of a ClusterQueue (or of a Cohort's own quota): one resource in
 * one flavor.  The quotas of a CQ form its resource groups: the resources
 * that share a flavor are one group, whose flavors must each quota all of
 * them (Kueue's coveredResources). */
typedef struct fs_kueue_quota_cfg {
    char *flavor;           /* a flavor name (scheduler.kueue.flavors, or a pool/GPU model) */
    double nominal;         /* nominalQuota in the resource's unit (>= 0) */
    double borrowing_limit; /* borrowingLimit; < 0: none */
    double lending_limit;   /* lendingLimit; < 0: none */
    int resource;           /* enum fs_kueue_resource (0: nvidia.com/gpu) */
} fs_kueue_quota_cfg_t;

/* One ClusterQueue (scheduler.kueue.cluster_queues item, or a manifest's). */
typedef struct fs_kueue_cq_cfg {
    char *name;             /* unique */
    char *cohort;           /* spec.cohort; NULL: none */
    int strategy;           /* enum fs_kueue_strategy: spec.queueingStrategy */
    fs_kueue_quota_cfg_t *quotas; /* owned; flavors in the order tried */
    size_t n_quotas;
    int within_cq;          /* enum fs_kueue_preempt: preemption.withinClusterQueue */
    int reclaim;            /* preemption.reclaimWithinCohort */
    int borrow_within;      /* preemption.borrowWithinCohort.policy */
    double borrow_max_priority; /* borrowWithinCohort.maxPriorityThreshold; NaN: none */
    double weight;          /* fairSharing.weight (>= 0) */
    char *tenants;          /* LocalQueues: comma-separated tenants sent here; NULL: none */
} fs_kueue_cq_cfg_t;

/* A ResourceFlavor: which pools it stands for. */
typedef struct fs_kueue_flavor_cfg {
    char *name;             /* unique */
    char *match;            /* comma-separated pool names or GPU models (nodeLabels
                               values); NULL: the flavor's name */
} fs_kueue_flavor_cfg_t;

typedef struct fs_kueue_cfg {
    int given;              /* unused (0) */
    fs_kueue_cq_cfg_t *cqs; /* owned: scheduler.kueue.cluster_queues */
    size_t n_cqs;
    fs_kueue_flavor_cfg_t *flavors; /* owned: scheduler.kueue.flavors */
    size_t n_flavors;
    char *default_queue;    /* CQ of jobs whose tenant maps to none; NULL: they stay pending */
    int fair_sharing;       /* fairSharing.enable (bool) */
    char *manifests;        /* Kueue YAML (ClusterQueue, Cohort, ResourceFlavor,
                               LocalQueue): the scenario loader adds its objects to
                               cqs and flavors (scenarios/fs_kueue_yaml.h); NULL: none */
    size_t n_manifest_cqs;  /* the last n_manifest_cqs of cqs came from manifests (not dumped) */
    size_t n_manifest_flavors; /* likewise for flavors */
    /* scheduler.kueue.flavor_pools {flavor: pools}: the pools (names or GPU models,
     * comma-separated) a flavor stands for, over its manifest nodeLabels or its `match` */
    size_t n_flavor_pools;
    char **flavor_pool_names;
    char **flavor_pool_targets;
} fs_kueue_cfg_t;

/* One Volcano Queue object (scheduler.volcano.queues item). */
typedef struct fs_volcano_queue_cfg {
    char *name;             /* unique; "default" receives unmapped jobs */
    uint32_t weight;        /* spec.weight (>= 1) */
    uint32_t capability;    /* spec.capability in GPUs: hard cap; 0 = none */
    uint32_t guarantee;     /* spec.guarantee in GPUs: reserved minimum; 0 = none */
    int reclaimable;        /* spec.reclaimable (bool): others may reclaim from it */
    char *tenants;          /* comma-separated tenants mapped here; NULL: the tenant
                               named like the queue */
} fs_volcano_queue_cfg_t;

/* scheduler.volcano (models/fs_volcano.c, docs/policies.md "Volcano"). */
typedef struct fs_volcano_cfg {
    int given;              /* unused (0) */
    fs_volcano_queue_cfg_t *queues; /* owned */
    size_t n_queues;
    int reclaim;            /* bool: run the reclaim action */
    int preempt;            /* bool: run the preempt action (within a queue, by priority) */
    int drf;                /* bool: drf job order (tenant = namespace dominant share) */
    fs_time_t period;       /* schedule-period, us (0: a session at every change) */
} fs_volcano_cfg_t;

#endif
