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
 *
 * Extensions (docs/traces.md, "Synthetic workloads"):
 *  - scale multiplies the arrival rate;
 *  - a rate profile by hour of day and day of week: hourly[h] (h = 0..23) and
 *    weekly[d] (d = 0..6) are the shares of arrivals in each hour of the day
 *    and each day of the week (each table sums to 1, or is absent = flat);
 *    the rate at time t is rate * scale * 24 hourly[hour(t)] * 7 weekly[day(t)]
 *    with hour(t) = floor(t / 1 h) mod 24, day(t) = floor(t / 1 d) mod 7, t
 *    measured from the origin of the run (day 0 is the origin's day);
 *  - growth: the rate is further multiplied by (1 + growth)^(t / growth_period)
 *    (compounding; growth = 0.05 with a 30-day period is +5% a month);
 *  - duration by size: classes[i] gives the run-time distribution of jobs
 *    whose GPU count is in [gpus_min, gpus_max] (classes do not overlap);
 *    sizes no class covers draw from `duration`.
 * With none of these (scale 1, no profile, no growth) the arrivals are the
 * homogeneous process drawn exactly as before (one exponential gap per job).
 * Otherwise the non-homogeneous process is drawn by inverting its integrated
 * rate: one Exp(1) per job from FS_RNG_ARRIVAL, spent across the
 * piecewise-constant hours (within an hour the growth factor e^{beta t} is
 * integrated in closed form), so the draws stay one per job and the stream
 * is exact, not thinned.
 */
#ifndef FS_SYNTH_H
#define FS_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_dist.h"
#include "fs_source.h"

/* How a distribution block was written in a scenario, so that the dump
 * writes back what was given (fs_dist_prepare derives the parameters that
 * were not): bit i of `given` = parameter row i of the distribution block
 * table (scenarios/fs_keys.c) was given; path = the empirical file
 * (resolved), column = its CSV column (NULL: one number per line).  Owned.
 * (Declared here, not in models/fs_config.h, because size classes of the
 * synthetic config carry one.) */
typedef struct fs_dist_cfg {
    unsigned given;
    char *path;
    char *column;
} fs_dist_cfg_t;

/* A run-time distribution for the jobs of one range of GPU counts. */
typedef struct fs_synth_class {
    uint32_t gpus_min;      /* GPU counts in [gpus_min, gpus_max] (1 <= min <= max) */
    uint32_t gpus_max;
    fs_dist_t duration;     /* seconds, prepared; owned */
    fs_dist_cfg_t duration_cfg; /* how it was written (scenario dump); owned */
} fs_synth_class_t;

/* Hours in a day and days in a week of the rate profile. */
#define FS_SYNTH_HOURS 24
#define FS_SYNTH_DAYS 7

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
    double scale;           /* multiplies the arrival rate (> 0; init: 1) */
    double growth;          /* rate grows by this factor - 1 per growth_period (> -1; 0 none) */
    fs_time_t growth_period;/* us (> 0; init: 30 days) */
    /* Rate profile as shares {name: share}: hourly names "0".."23", weekly
     * names "0".."6" (day 0 = the origin's day); absent hours/days have
     * share 0; n = 0: flat.  Owned. */
    size_t n_hourly;
    char **hourly_names;
    double *hourly;
    size_t n_weekly;
    char **weekly_names;
    double *weekly;
    size_t n_classes;       /* run time by GPU count (0: `duration` for all) */
    fs_synth_class_t *classes; /* owned */
    int32_t mig;            /* MIG profile code every job asks (models/fs_mig.h), 0 none:
                               a job's GPU count is then its instances of the profile */
    uint32_t mig_milli;     /* that profile's compute share, milli-GPUs */
} fs_synth_cfg_t;

void fs_synth_cfg_init(fs_synth_cfg_t *c);
void fs_synth_cfg_release(fs_synth_cfg_t *c);
int fs_synth_cfg_copy(fs_synth_cfg_t *dst, const fs_synth_cfg_t *src);

/* The checks fs_synth_create makes (FS_EINVAL with a message), for
 * validating a scenario before anything runs, naming the scenario key to
 * blame: *key (room for keylen) gets its dotted path
 * (workload.synthetic.gpus, horizon, ...) on FS_EINVAL. */
int fs_synth_cfg_check_key(const fs_synth_cfg_t *c, char *key, size_t keylen, fs_error_t *err);

/* Creates the generator (the config is copied).  The duration distribution
 * must be prepared (fs_dist_prepare).  Returns 0 or FS_EINVAL/FS_ENOMEM. */
int fs_synth_create(const fs_synth_cfg_t *cfg, uint64_t seed, uint64_t replication,
                    fs_source_t **out, fs_error_t *err);

/* A profile written as {slot: share} (cnt entries; slots 0..n-1): out[k] =
 * n x share of slot k (0 for slots not listed), or 1 everywhere when cnt is
 * 0, so that the mean multiplier is 1.  0 or FS_EINVAL (a slot that is not a
 * number in range, or listed twice, or shares that are not a distribution:
 * the message names `what`).  out may be NULL (check only). */
int fs_synth_profile(size_t cnt, char *const *names, const double *shares, int n,
                     const char *what, double *out, fs_error_t *err);

#endif
