/*
 * fs_cluster: pools of identical nodes and the free-capacity index that lets
 * placement find nodes without scanning them.
 *
 * State is struct-of-arrays: node_free[] (free GPUs), node_pool[], node_up[].
 * Per pool, a segment tree over the pool's nodes stores at each tree node a
 * bitmask of the free-GPU levels (0..gpus_per_node) present among the up
 * nodes below it.  With it, in O(log N) words:
 *   - fits(pool, g): can a g-GPU gang be placed now?  O(1): a single-node
 *     job (g <= gpus_per_node) needs a node with >= g free (root mask), a
 *     multi-node job needs >= g free GPUs in the pool (a counter);
 *   - best fit: the lowest-index node among those with the fewest free GPUs
 *     that are still >= g;
 *   - first fit: the lowest-index node with >= g free;
 *   - largest: the lowest-index node with the most free GPUs.
 * Allocation of a gang (all GPUs at once or none):
 *   pack       single-node: best fit.  multi-node: while >= gpus_per_node
 *              remain, the node with the most free; then best fit for the
 *              rest (else the most free).  Fewest nodes, fullest nodes first.
 *   first_fit  single-node: first fit.  multi-node: nodes in index order,
 *              taking what each has free.
 * The index can be switched off (use_index = 0): every query then scans the
 * nodes in order with the same tie-breaks.  Tests prove both paths choose
 * the same nodes (SQLite-style fast path == slow path).
 *
 * Fractional requests (gpu_milli < 1000) take a whole GPU here; sharing is
 * a placement policy of its own (see docs/models.md).
 * Ownership: the cluster owns all arrays; allocations (fs_placement_t) are
 * owned by the caller and released with fs_placement_release.
 */
#ifndef FS_CLUSTER_H
#define FS_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_config.h"

typedef struct fs_pool {
    char *name;
    char *gpu;              /* GPU model name */
    int catalog;            /* catalog index, -1 if unknown */
    uint32_t first_node;    /* nodes [first_node, first_node + n_nodes) */
    uint32_t n_nodes;
    uint32_t gpn;           /* GPUs per node */
    uint64_t gpus_total;
    uint64_t gpus_free;     /* on up nodes */
    uint64_t gpus_up;
    /* index: segment tree of level masks, `words` uint64 per tree node,
     * leaves at [leaf0, leaf0 + n_nodes) */
    uint32_t words;
    uint32_t leaf0;
    uint64_t *mask;         /* (2 * leaf0) * words */
} fs_pool_t;

typedef struct fs_cluster {
    fs_pool_t *pools;
    uint32_t n_pools;
    uint32_t n_nodes;
    uint32_t *node_free;    /* free GPUs per node */
    uint32_t *node_pool;
    uint8_t *node_up;
    uint64_t gpus_total;
    uint64_t gpus_up;
    uint64_t gpus_busy;     /* allocated GPUs */
    int use_index;          /* 1 (default): indexed queries; 0: linear scans */
} fs_cluster_t;

/* One node's share of a gang. */
typedef struct fs_slice {
    uint32_t node;
    uint32_t gpus;
} fs_slice_t;

/* Where a job runs.  One slice inline (single-node jobs allocate nothing). */
typedef struct fs_placement {
    uint32_t pool;
    uint32_t n;             /* slices */
    fs_slice_t one;
    fs_slice_t *many;       /* n > 1: owned array */
} fs_placement_t;

static inline const fs_slice_t *fs_placement_slices(const fs_placement_t *p)
{
    return p->n > 1 ? p->many : &p->one;
}
void fs_placement_release(fs_placement_t *p);

int fs_cluster_init(fs_cluster_t *c, const fs_cluster_cfg_t *cfg, fs_error_t *err);
void fs_cluster_release(fs_cluster_t *c);

/* Can a gang of g GPUs start in pool now?  O(1). */
int fs_cluster_fits(const fs_cluster_t *c, uint32_t pool, uint32_t g);
/* Could it ever (an empty, fully up pool)? */
int fs_cluster_could_fit(const fs_cluster_t *c, uint32_t pool, uint32_t g);

/* Allocates a gang of g GPUs in pool with the given placement (enum
 * fs_placement_kind).  Returns 1 and fills *out, 0 if it does not fit now,
 * or FS_ENOMEM. */
int fs_cluster_alloc(fs_cluster_t *c, uint32_t pool, uint32_t g, int placement,
                     fs_placement_t *out);
/* Returns a placement's GPUs to the pool (does not release *p). */
void fs_cluster_free(fs_cluster_t *c, const fs_placement_t *p);

/* Marks a node down (its free GPUs leave the index) or up again. */
void fs_cluster_set_up(fs_cluster_t *c, uint32_t node, int up);

/* Pool index by name, or -1. */
int fs_cluster_find_pool(const fs_cluster_t *c, const char *name);

#endif
