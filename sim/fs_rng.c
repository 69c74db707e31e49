#include "fs_rng.h"
#include "fs_error.h"

static uint64_t splitmix64(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

uint64_t fs_rng_key(uint64_t seed, uint64_t replication, uint32_t purpose, uint64_t entity)
{
    uint64_t h = splitmix64(seed);
    h = splitmix64(h ^ replication);
    h = splitmix64(h ^ (uint64_t)purpose);
    h = splitmix64(h ^ entity);
    return h;
}

/*
 * xoshiro256** (Blackman and Vigna) registered as a gsl_rng_type.
 * Why not a built-in GSL generator: they all seed from 32 bits, so with
 * 10^5 per-entity streams some would collide (birthday bound).  This type
 * takes the full 64-bit key, expanded by SplitMix64, and every gsl_ran_*
 * distribution works on it unchanged.
 */
typedef struct { uint64_t s[4]; } xoshiro_state_t;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t xoshiro_next(xoshiro_state_t *st)
{
    uint64_t *s = st->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static void xoshiro_set(void *vstate, unsigned long seed)
{
    xoshiro_state_t *st = vstate;
    uint64_t x = (uint64_t)seed;
    for (int i = 0; i < 4; i++) {
        x += UINT64_C(0x9e3779b97f4a7c15);
        st->s[i] = splitmix64(x);
    }
}

static unsigned long xoshiro_get(void *vstate)
{
    return (unsigned long)(xoshiro_next(vstate) >> 32);
}

static double xoshiro_get_double(void *vstate)
{
    return (double)(xoshiro_next(vstate) >> 11) * 0x1.0p-53;
}

static const gsl_rng_type xoshiro_type = {
    "fs_xoshiro256starstar", 0xffffffffUL, 0, sizeof(xoshiro_state_t),
    xoshiro_set, xoshiro_get, xoshiro_get_double
};

const gsl_rng_type *fs_rng_type(void) { return &xoshiro_type; }

int fs_rng_init(fs_rng_t *r, uint64_t seed, uint64_t replication, uint32_t purpose,
                uint64_t entity)
{
    /* gsl_rng_alloc uses malloc directly; fs_rng_release frees it. */
    r->g = gsl_rng_alloc(&xoshiro_type);
    if (!r->g)
        return FS_ENOMEM;
    gsl_rng_set(r->g, (unsigned long)fs_rng_key(seed, replication, purpose, entity));
    return 0;
}

void fs_rng_release(fs_rng_t *r)
{
    if (r->g)
        gsl_rng_free(r->g);
    r->g = NULL;
}
