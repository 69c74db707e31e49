/*
 * fs_failcfg: configuration of failures (scenario block `failures:`,
 * models/fs_failure.h) and of recovery (block `recovery:`, fs_model.c).
 * Part of fs_config_t; every field is a row of scenarios/fs_keys.c.
 */
#ifndef FS_FAILCFG_H
#define FS_FAILCFG_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_dist.h"
#include "../sim/fs_time.h"
#include "../traces/fs_synth.h"

/* failures: component failure processes, causes, repair (docs/failures.md). */

/* The unit that fails (a component kind): a GPU, a node (host), its
 * network link (NIC/cable), or a topology unit that takes down every node
 * below it.  `power` is the rack's power domain (PDU): the rack's nodes.
 * Index = HDF5 enum "component" of /failures (fs_result.h names them). */
enum fs_fail_kind {
    FS_FAIL_GPU = 0, FS_FAIL_NODE = 1, FS_FAIL_LINK = 2, FS_FAIL_DOMAIN = 3,
    FS_FAIL_RACK = 4, FS_FAIL_POWER = 5, FS_FAIL_LEAF = 6, FS_FAIL_SPINE = 7,
    FS_FAIL_KINDS = 8
};
/* Repair path of a cause (index = HDF5 enum "repair" of /failures, which
 * adds FS_REPAIR_REMOVED and FS_REPAIR_PLANNED for rows). */
enum fs_repair_path { FS_REPAIR_SOFT = 0, FS_REPAIR_HARD = 1, FS_REPAIR_NONE = 2,
                      FS_REPAIR_REMOVED = 3, FS_REPAIR_PLANNED = 4,
                      FS_REPAIR_XID = 5 /* configuration only: the path of the cause's Xid
                                           (models/fs_xid.h); never in a row */ };
enum fs_fail_preset { FS_FAIL_PRESET_NONE = 0, FS_FAIL_PRESET_LLAMA3 = 1,
                      FS_FAIL_PRESET_META_RSC = 2, FS_FAIL_PRESET_BLOOM = 3,
                      FS_FAIL_PRESET_OPT = 4 };
enum fs_lemon_action { FS_LEMON_REMOVE = 0, FS_LEMON_HARD = 1 };
enum fs_planned_how { FS_PLANNED_FAIL = 0, FS_PLANNED_DRAIN = 1 };

/* One failure process: every unit of `kind` (in `pool`, or all pools)
 * fails after a draw of tbf (time between failures of ONE unit, counted
 * from its return to service); the cause is drawn from the shares. */
typedef struct fs_fail_component_cfg {
    int kind;               /* enum fs_fail_kind */
    fs_dist_t tbf;          /* s, prepared; owned */
    fs_dist_cfg_t tbf_cfg;  /* how it was written; owned */
    char *pool;             /* only this pool (NULL: every pool); owned */
    size_t n_causes;        /* cause shares (0: the cause is the kind's name) */
    char **cause_names;     /* owned */
    double *cause_shares;   /* owned; sum to 1 */
} fs_fail_component_cfg_t;

/* A cause's repair path; `time` (kind NONE: not given) replaces the
 * path's repair-time distribution for this cause. */
typedef struct fs_fail_cause_cfg {
    char *name;             /* owned, at most 23 characters */
    int repair;             /* enum fs_repair_path: soft, hard, none, or xid (the
                               catalog action of `xid` decides) */
    uint32_t xid;           /* NVIDIA Xid code of the cause (models/fs_xid.h); 0: none */
    fs_dist_t time;         /* s; owned */
    fs_dist_cfg_t time_cfg;
} fs_fail_cause_cfg_t;

/* A planned outage (maintenance, or a what-if: "leaf 3 fails on day 2"). */
typedef struct fs_fail_planned_cfg {
    fs_time_t at;           /* us */
    int kind;               /* enum fs_fail_kind */
    uint32_t unit;          /* unit id at that level (GPU: node * gpus_per_node + GPU) */
    fs_time_t duration;     /* us out of service */
    int how;                /* enum fs_planned_how: fail (jobs die) or drain */
    char *cause;            /* owned ("planned") */
} fs_fail_planned_cfg_t;

typedef struct fs_failure_cfg {
    int given;              /* the block was given (0: no failures at all) */
    int preset;             /* enum fs_fail_preset: fills what is left at its default */
    fs_fail_component_cfg_t *components; /* owned */
    size_t n_components;
    fs_fail_cause_cfg_t *causes; /* owned */
    size_t n_causes;
    fs_fail_planned_cfg_t *planned; /* owned */
    size_t n_planned;
    fs_dist_t repair_soft;  /* s (kind NONE: the default, docs/failures.md); owned */
    fs_dist_cfg_t repair_soft_cfg;
    fs_dist_t repair_hard;  /* s; owned */
    fs_dist_cfg_t repair_hard_cfg;
    uint32_t crews;         /* repair crews (0: unlimited); FIFO queue otherwise */
    int repair_default;     /* enum fs_repair_path of causes not in `causes` */
    double infant_factor;   /* hazard multiplier of new hardware (1: off) */
    fs_time_t infant_period;/* us of "new" after the start and after each hard repair */
    uint32_t lemon_after;   /* K failures of one node within lemon_window (0: off) */
    fs_time_t lemon_window; /* us */
    int lemon_action;       /* enum fs_lemon_action */
    double straggler_fraction; /* share of nodes slow from the start */
    double straggler_factor;   /* their speed factor (0, 1] */
    int straggler_detect;   /* bool: health checks find them (drain, repair) */
    fs_time_t health_interval; /* us between health checks (0: none) */
    uint32_t rack_cordon;   /* a rack with more than this many nodes failed is drained whole (0: off) */
    uint32_t spare_nodes;   /* hot spares per pool, held out of service */
    double spare_fraction;  /* or this share of each pool's nodes (rounded) */
    fs_time_t spare_swap;   /* us to swap a spare in for a failed node */
} fs_failure_cfg_t;

/* recovery: checkpoint/restart, retries, detection (docs/recovery.md).
 * All zero (a config not read from a scenario) = no checkpoints, no
 * delays, requeue without limit. */
enum fs_ckpt_kind { FS_CKPT_NONE = 0, FS_CKPT_FIXED = 1, FS_CKPT_YOUNG = 2, FS_CKPT_DALY = 3 };
enum fs_retry_kind { FS_RETRY_REQUEUE = 0, FS_RETRY_BACKOFF = 1, FS_RETRY_NONE = 2 };
typedef struct fs_recovery_cfg {
    int given;              /* unused: recovery always applies, with its defaults */
    int checkpoint;         /* enum fs_ckpt_kind */
    fs_time_t interval;     /* fixed: compute time between checkpoints, us */
    fs_time_t write_cost;   /* delta: wall time of one checkpoint write, us */
    fs_time_t restore;      /* R: wall time to restore at a restart after a failure, us */
    fs_time_t detection;    /* failure -> noticed (the job still holds its healthy nodes), us */
    fs_time_t health_check; /* period of the DCGM health check, us (0: none): a failure with
                               an Xid is noticed at the next check if that is sooner */
    fs_time_t requeue;      /* noticed -> back in the queue (plus backoff), us */
    fs_time_t node_mttf;    /* young/daly: node MTTF, us (0: from the failures block) */
    int retry;              /* enum fs_retry_kind */
    uint32_t retry_limit;   /* failures retried (0: the policy's default: requeue none, backoff 6) */
    fs_time_t retry_base;   /* backoff: first delay, doubling, us */
    fs_time_t retry_max;    /* backoff: cap, us */
} fs_recovery_cfg_t;

#endif
