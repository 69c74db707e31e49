/*
 * fs_shape: job shapes and their dense class indexes, for policies that keep
 * one queue per shape (FIFO, the composable scheduler).
 *
 * A shape is (GPU count, milli-GPU share, a pod's CPU and memory as
 * fs_job_pod_res, pool set): all jobs of one shape
 * fit or not together, so a pass tests only class heads.  The map gives each
 * shape a dense index 0, 1, 2, ... in order of first appearance (so class
 * iteration order is reproducible) through an open-addressing hash table.
 * Lookup and insertion are O(1) expected.  Ownership: the map owns its
 * arrays; callers keep their per-class payload in arrays of their own,
 * indexed by the class index.
 */
#ifndef FS_SHAPE_H
#define FS_SHAPE_H

#include <stddef.h>
#include <stdint.h>

typedef struct fs_shape {
    uint32_t gpus;      /* GPUs requested */
    uint32_t milli;     /* share of one GPU (1000 = whole) */
    int32_t pools;      /* pool set index; -1 any pool */
    uint64_t res;       /* fs_job_pod_res: CPU << 32 | memory of a pod, else 0 */
} fs_shape_t;

typedef struct fs_shapemap {
    fs_shape_t *shapes; /* shapes[i] is class i */
    size_t n, cap;
    uint32_t *hash;     /* class index + 1; 0 = empty slot */
    size_t hash_cap;    /* power of two, > 2 n */
} fs_shapemap_t;

/* Returns 0 or FS_ENOMEM. */
int fs_shapemap_init(fs_shapemap_t *m);
void fs_shapemap_release(fs_shapemap_t *m);

/* The class index of a shape, added as class m->n if new (*added = 1).
 * Returns -1 (map unchanged) when out of memory. */
long fs_shapemap_get(fs_shapemap_t *m, uint32_t gpus, uint32_t milli, uint64_t res, int32_t pools,
                     int *added);

#endif
