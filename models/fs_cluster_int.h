/*
 * fs_cluster_int.h: the cluster's private helpers, shared by its files in
 * models/ only (the public face is fs_cluster.h: the state and its costs).
 *
 *   fs_cluster.c        init and release, whole-GPU placement, node up and
 *                       down, candidates for scored placements  fs_cluster_
 *   fs_cluster_index.c  the free-capacity index: each pool's nodes filed by
 *                       free GPUs in hierarchical bitsets; taking and giving
 *                       back whole GPUs  fs_clidx_
 *   fs_cluster_share.c  fractional GPUs (shared slots and their level
 *                       tree), and pods with CPU and memory  fs_clshare_
 *   fs_cluster_mig.c    MIG pools: layouts, instances, re-cuts  fs_clmig_
 *   fs_cluster_topo.c   topology: units above nodes, topology-aware gangs,
 *                       spans  fs_cltopo_
 */
#ifndef FS_CLUSTER_INT_H
#define FS_CLUSTER_INT_H

#include "fs_cluster.h"
#include "../sim/fs_alloc.h"

#define FS_CL_NONE UINT32_MAX

/* qsort order of uint32_t. */
static inline int fs_cl_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* ---- the free-capacity index (fs_cluster_index.c) ---------------------------------- */

static inline int fs_clidx_mask_has(const uint64_t *m, uint32_t bit)
{
    return (m[bit / 64] >> (bit % 64)) & 1;
}

/* Lowest set bit >= g of a W-word mask, or -1. */
int fs_clidx_mask_lowest_ge(const uint64_t *m, uint32_t W, uint32_t g);
/* Leftmost member of non-empty level L; smallest member >= x (FS_CL_NONE). */
uint32_t fs_clidx_first(const fs_pool_t *p, uint32_t L);
uint32_t fs_clidx_next(const fs_pool_t *p, uint32_t L, uint32_t x);
/* Files node under its current level (every change of its free GPUs or
 * state; c->gen counts them). */
void fs_clidx_update(fs_cluster_t *c, uint32_t node);
/* Lays out pool p's level sets and files every node, up, at level gpn. */
int fs_clidx_init(fs_cluster_t *c, fs_pool_t *p);
/* Nodes for g whole GPUs (best fit, first fit), the one with the most free. */
uint32_t fs_clidx_best_fit(const fs_cluster_t *c, const fs_pool_t *p, uint32_t g);
uint32_t fs_clidx_first_fit(const fs_cluster_t *c, const fs_pool_t *p, uint32_t g);
uint32_t fs_clidx_largest(const fs_cluster_t *c, const fs_pool_t *p);
/* g whole GPUs of node taken, given back. */
void fs_clidx_take(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t g);
void fs_clidx_untake(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t g);

/* ---- fractional sharing (fs_cluster_share.c) ---------------------------------------- */

static inline uint64_t *fs_clshare_node(const fs_pool_t *p, uint32_t i) { return p->smask + (size_t)i * FS_CLUSTER_SWORDS; }

static inline uint16_t *fs_clshare_slots(const fs_pool_t *p, uint32_t node)
{
    return p->sused + (size_t)(node - p->first_node) * p->gpn;
}

/* Rebuilds node's leaf of the shared tree and the path to the root. */
void fs_clshare_update(fs_cluster_t *c, fs_pool_t *p, uint32_t node);
/* Largest free milli on an open shared slot of node (0 if none). */
uint32_t fs_clshare_smax(const fs_pool_t *p, uint32_t node);
/* m milli of shared slot `slot` of node given back. */
void fs_clshare_free(fs_cluster_t *c, fs_pool_t *p, uint32_t node, uint32_t slot, uint32_t m);

/* ---- MIG (fs_cluster_mig.c) ----------------------------------------------------------- */

/* The instances of profile pr on GPU gi (node index x gpn + GPU) of p. */
static inline uint8_t fs_clmig_mask(const fs_pool_t *p, size_t gi, unsigned pr)
{
    return p->mig_gpm ? p->mig_gpm[gi * FS_MIG_MAX_PROFILES + pr] : p->mig_pmask[pr];
}

/* A MIG pool: every GPU gets the layout `text`. */
int fs_clmig_init(fs_cluster_t *c, fs_pool_t *p, const char *text, int per_gpu, fs_error_t *err);
void fs_clmig_free(fs_cluster_t *c, fs_pool_t *p, const fs_placement_t *pl);

/* ---- topology (fs_cluster_topo.c) ----------------------------------------------------- */

/* Adds d fully free GPUs to the units above node (topology only). */
static inline void fs_cltopo_add(fs_cluster_t *c, uint32_t node, int64_t d)
{
    for (int l = 0; l < FS_TOPO_LEVELS; l++)
        c->topo->unit_free[l][c->topo->node_unit[l][node]] += (uint64_t)d;
}

int fs_cltopo_build(fs_cluster_t *c, const fs_topology_cfg_t *tc, fs_error_t *err);
void fs_cltopo_release(fs_topo_t *t);
/* A gang of g GPUs over more than one node, packed in the fewest units. */
int fs_cltopo_alloc(fs_cluster_t *c, fs_pool_t *p, uint32_t g, fs_placement_t *out);

#endif
