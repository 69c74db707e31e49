/*
 * fs_failspec: the failures block of a config resolved into a spec
 * (presets filled in, cause names gathered into one table with their repair
 * paths, the distributions copied), and what is computed from it without a
 * model: the scenario's checks of failures.* and the node MTTF that
 * checkpoint intervals use.  The failure module (fs_failure.c) builds its
 * runtime on the same spec.  Knows the config, not the model.
 */
#ifndef FS_FAILSPEC_H
#define FS_FAILSPEC_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_dist.h"
#include "../sim/fs_error.h"
#include "fs_config.h"
#include "fs_result.h"

typedef struct fs_fail_cause {
    char name[FS_FAILURE_CAUSE_MAX];
    int repair;                 /* enum fs_repair_path */
    uint32_t xid;               /* NVIDIA Xid code (models/fs_xid.h); 0: none */
    const fs_dist_t *time;      /* borrowed from the config; NULL: the path's */
} fs_fail_cause_t;

typedef struct fs_fail_comp {
    int kind;                   /* enum fs_fail_kind */
    int32_t pool;               /* -1: every pool */
    fs_dist_t tbf;              /* owned copy, prepared */
    size_t n_causes;
    double *cum;                /* cumulative shares, owned */
    uint32_t *cause;            /* index into the spec's causes, owned */
    /* set by attach */
    uint32_t lo, hi;            /* units [lo, hi) */
    uint32_t *seq;              /* per unit: failures so far */
    fs_time_t *born;            /* per unit: new since (infant mortality), or NULL */
} fs_fail_comp_t;

typedef struct fs_fail_spec {
    fs_fail_comp_t *comps;
    size_t n_comps;
    fs_fail_cause_t *causes;
    size_t n_causes, cap_causes;
    fs_dist_t soft, hard;       /* owned, prepared */
    double spare_fraction;
} fs_fail_spec_t;

/* Builds the spec of cfg->failures.  On FS_EINVAL, key (room for keylen
 * bytes, may be NULL) names the key.  Release with fs_fail_spec_release
 * whatever it returns. */
int fs_fail_spec_resolve(const fs_config_t *cfg, fs_fail_spec_t *sp, char *key, size_t keylen,
                         fs_error_t *err);
void fs_fail_spec_release(fs_fail_spec_t *sp);

/* Does a failure of this kind (enum fs_fail_kind) hit one node (a GPU, a
 * node, a link) rather than a topology unit? */
static inline int fs_fail_node_scope(int kind)
{
    return kind == FS_FAIL_GPU || kind == FS_FAIL_NODE || kind == FS_FAIL_LINK;
}

/* The checks of failures.* that need more than one key (scenario
 * validation): pool names, cause names, spares, presets.  On error *key
 * (room for keylen bytes) gets the dotted path of the key to blame.
 * Returns 0, FS_EINVAL or FS_ENOMEM. */
int fs_failure_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err);

/* Mean time between failures of one node of pool `pool` (NULL: any) with
 * gpn GPUs, in seconds, from the failure processes that hit single nodes
 * (gpu: gpn of them, node, link), presets resolved; 0 when none does (or
 * the block is absent or invalid), -1 when out of memory (never read as
 * "nothing fails").  Checkpoint intervals (Young, Daly) use it. */
double fs_failure_node_mttf_s(const fs_config_t *cfg, const char *pool, uint32_t gpn);

#endif
