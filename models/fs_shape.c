#include "fs_shape.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_error.h"

#include <string.h>

static size_t hash_key(uint32_t gpus, uint32_t milli, uint64_t res, int32_t pools)
{
    uint64_t x = ((uint64_t)gpus << 32) ^ (uint32_t)pools ^ ((uint64_t)milli << 20) ^
                 (res * UINT64_C(0x9e3779b97f4a7c15));
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    return (size_t)x;
}

static int rehash(fs_shapemap_t *m, size_t cap)
{
    uint32_t *h = fs_calloc(cap, sizeof *h);
    if (!h)
        return FS_ENOMEM;
    for (size_t i = 0; i < m->n; i++) {
        const fs_shape_t *s = &m->shapes[i];
        size_t k = hash_key(s->gpus, s->milli, s->res, s->pools) & (cap - 1);
        while (h[k])
            k = (k + 1) & (cap - 1);
        h[k] = (uint32_t)i + 1;
    }
    fs_free(m->hash);
    m->hash = h;
    m->hash_cap = cap;
    return 0;
}

int fs_shapemap_init(fs_shapemap_t *m)
{
    memset(m, 0, sizeof *m);
    return rehash(m, 64);
}

void fs_shapemap_release(fs_shapemap_t *m)
{
    fs_free(m->shapes);
    fs_free(m->hash);
    memset(m, 0, sizeof *m);
}

long fs_shapemap_get(fs_shapemap_t *m, uint32_t gpus, uint32_t milli, uint64_t res, int32_t pools,
                     int *added)
{
    *added = 0;
    /* keep the table under half full before probing, so that a failed
     * growth leaves the map unchanged */
    if ((m->n + 1) * 2 > m->hash_cap && rehash(m, m->hash_cap * 2))
        return -1;
    size_t k = hash_key(gpus, milli, res, pools) & (m->hash_cap - 1);
    while (m->hash[k]) {
        const fs_shape_t *s = &m->shapes[m->hash[k] - 1];
        if (s->gpus == gpus && s->milli == milli && s->res == res && s->pools == pools)
            return (long)m->hash[k] - 1;
        k = (k + 1) & (m->hash_cap - 1);
    }
    if (m->n >= UINT32_MAX - 1 ||
        fs_grow((void **)&m->shapes, &m->cap, m->n + 1, sizeof *m->shapes))
        return -1;
    m->shapes[m->n] = (fs_shape_t){gpus, milli, pools, res};
    m->hash[k] = (uint32_t)++m->n;
    *added = 1;
    return (long)m->n - 1;
}
