/*
 * fs_rng: deterministic random streams keyed by (seed, replication, purpose,
 * entity).
 *
 * Each stream is a GSL generator of fleetsim's own gsl_rng_type
 * (xoshiro256**, 32 bytes of state, 64-bit seed) seeded by a SplitMix64 hash
 * of the four-part key.  Because every model draws from its own stream, adding a new
 * random model, or changing how many draws another model makes, never shifts
 * anyone else's draws: arrivals stay the same when the policy or the duration
 * model changes (common random numbers across compared policies).
 *
 * Purposes are a fixed enum; a new model appends a new purpose at the end and
 * never renumbers the others (that would change every stream).
 * Draw through GSL's distributions (gsl_ran_*) with fs_rng_gsl(stream).
 */
#ifndef FS_RNG_H
#define FS_RNG_H

#include <stdint.h>
#include <gsl/gsl_rng.h>

enum fs_rng_purpose {
    FS_RNG_ARRIVAL  = 1,   /* inter-arrival times */
    FS_RNG_GPUS     = 2,   /* job sizes */
    FS_RNG_DURATION = 3,   /* job run times */
    FS_RNG_TENANT   = 4,   /* tenant of each job */
    FS_RNG_ESTIMATE = 5,   /* user run-time estimates */
    FS_RNG_FAILURE  = 6,   /* time between failures (entity = component) */
    FS_RNG_REPAIR   = 7,   /* repair times (entity = component) */
    FS_RNG_CAUSE    = 8,   /* failure causes */
    FS_RNG_PLACE    = 9,   /* random placement / tie breaking */
    FS_RNG_TRACE    = 10,  /* sampling of trace rows */
    /* 11-13: services' requests, tokens, prefixes (models/fs_service_int.h RNG_*) */
    FS_RNG_TENANT_SCALE = 14, /* workload.tenant_scale: copies' shifts and thinning of a trace */
    /* 20: the autoscaler (models/fs_autoscale.c RNG_AUTOSCALE) */
    FS_RNG_PURPOSE_USER = 64  /* first value free for later models */
};

typedef struct fs_rng {
    gsl_rng *g;
} fs_rng_t;

/* 64-bit key hash (SplitMix64 finaliser chain); exposed for tests. */
uint64_t fs_rng_key(uint64_t seed, uint64_t replication, uint32_t purpose, uint64_t entity);

/* The gsl_rng_type used for every stream (xoshiro256**, 64-bit seed). */
const gsl_rng_type *fs_rng_type(void);

/* Initialises *r for the keyed stream.  Returns 0 or FS_ENOMEM. */
int fs_rng_init(fs_rng_t *r, uint64_t seed, uint64_t replication, uint32_t purpose,
                uint64_t entity);
void fs_rng_release(fs_rng_t *r);

static inline gsl_rng *fs_rng_gsl(fs_rng_t *r) { return r->g; }
/* Uniform on [0,1). */
static inline double fs_rng_uniform(fs_rng_t *r) { return gsl_rng_uniform(r->g); }
/* Uniform on (0,1). */
static inline double fs_rng_uniform_pos(fs_rng_t *r) { return gsl_rng_uniform_pos(r->g); }

#endif
