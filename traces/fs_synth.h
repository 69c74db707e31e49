/*
 * fs_synth: the synthetic workload generator, an fs_source_t.
 *
 * Jobs arrive as a Poisson process of rate `rate` over [0, horizon) (or
 * until max_jobs), each with a GPU count drawn from a discrete mix, a run
 * time drawn from `duration` (seconds) and an optional tenant drawn from
 * tenant shares.  Each of these draws comes from its own random stream
 * (FS_RNG_ARRIVAL, FS_RNG_GPUS, FS_RNG_DURATION, FS_RNG_TENANT keyed by seed
 * and replication), so changing the duration model never changes arrival
 * times or sizes.  Discrete draws use gsl_ran_discrete (Walker's alias
 * method): O(1) per draw.
 */
#ifndef FS_SYNTH_H
#define FS_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_dist.h"
#include "fs_source.h"

typedef struct fs_synth_cfg {
    double rate;            /* arrivals per second (> 0) */
    fs_time_t horizon;      /* arrivals in [0, horizon), us */
    uint64_t max_jobs;      /* 0 = no limit */
    size_t n_sizes;         /* GPU-count mix: sizes[i] with probability size_probs[i] */
    uint32_t *sizes;        /* owned */
    double *size_probs;     /* owned; sum to 1 */
    fs_dist_t duration;     /* run time in seconds (owned) */
    size_t n_tenants;       /* 0 = no tenants */
    char **tenant_names;    /* owned */
    double *tenant_shares;  /* owned; sum to 1 */
    double estimate_factor; /* > 0: estimate = duration * factor; 0: none */
} fs_synth_cfg_t;

void fs_synth_cfg_init(fs_synth_cfg_t *c);
void fs_synth_cfg_release(fs_synth_cfg_t *c);
int fs_synth_cfg_copy(fs_synth_cfg_t *dst, const fs_synth_cfg_t *src);

/* Creates the generator (the config is copied).  The duration distribution
 * must be prepared (fs_dist_prepare).  Returns 0 or FS_EINVAL/FS_ENOMEM. */
int fs_synth_create(const fs_synth_cfg_t *cfg, uint64_t seed, uint64_t replication,
                    fs_source_t **out, fs_error_t *err);

#endif
