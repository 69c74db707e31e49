/*
 * fs_place_int: the placer's state, shared by fs_place.c (the placements
 * by node score, FGD, random, pods, pins) and fs_place_net.c (topology
 * and fabric_aware with the fabric's load).
 */
#ifndef FS_PLACE_INT_H
#define FS_PLACE_INT_H

#include "fs_place.h"
#include "../sim/fs_rng.h"

#include <stddef.h>
#include <stdint.h>

#define NONE UINT32_MAX
#define WHOLE FS_GPU_MILLI_WHOLE
#define PROBES 32

/* FGD per-pool task shapes and the tables derived from them.  Shapes are
 * filed by their CPU request: level k holds the shapes whose CPU is at most
 * lev[k] (lev ascending), and a node with c milli-cores free sees the
 * shapes of the highest level with lev[k] <= c (all of them when the pool
 * does not model CPU); the others cannot run on it for want of CPU, so
 * their fragment is the node's whole free GPU capacity (Weng et al.; the
 * ATC'23 simulator's "lack CPU" classes). */
typedef struct fgd_shape {
    uint32_t g, milli, cpu;
    int64_t w;
} fgd_shape_t;

typedef struct fgd_pool {
    fgd_shape_t *sh;        /* shapes allowed on the pool that fit one of its nodes' GPUs */
    size_t n_sh, cap_sh;
    uint32_t *lev;          /* n_lev distinct CPU requests, ascending */
    size_t n_lev, cap_lev;
    int64_t *aw;            /* n_lev x (gpn + 1): aw[a] = weight of whole shapes with g <= a */
    /* The weight of the fractional shapes with milli > f, for f in 0..1000,
     * is ct[mr[f]] at each level: mr[f] counts the n_m distinct fractional
     * milli requests <= f, ct (n_lev x (n_m + 1)) sums the weight by rank,
     * ranks r and above (n_m + 1 entries a level instead of 1001; issue #41) */
    int64_t *ct;
    uint16_t *mr;           /* 1001 entries */
    size_t n_m;
    int dirty;              /* a shape was added: the tables are rebuilt at the next use */
} fgd_pool_t;

/* One level's tables (fgd_level): aw NULL when no shape is feasible. */
typedef struct fgd_tab {
    const int64_t *aw, *ct;
    const uint16_t *mr;
} fgd_tab_t;

/* A node's GPU state: a fully free GPUs, ns open shared GPUs with sf[i]
 * milli free. */
typedef struct nstate {
    uint32_t a, ns;
    uint32_t sf[1024];
    int slot[1024];
} nstate_t;

struct fs_placer {
    int kind;
    const fs_place_pin_t *pin;  /* fs_placer_pin: the plugin's node list for one start (NULL: none) */
    uint32_t k;
    uint32_t n_pools;
    fs_rng_t rng;
    double *speed_default;  /* per pool */
    fs_speed_cfg_t *speed_rows;     /* copied from the config (gpu not kept) */
    uint8_t *speed_pool;    /* [row * n_pools + pool]: the row's GPU model is the pool's */
    size_t n_speed;
    struct nstate *st;      /* scratch node state */
    fgd_pool_t *fgd;        /* per pool (fgd only) */
    int64_t wtot;
    uint32_t *cand;         /* scratch */
    size_t cand_cap;
    uint32_t *podpools;     /* scratch: fs_placer_place_node's pools */
    size_t podpools_cap;
    int node_score;         /* enum fs_node_score: exact, or integer scores with random
                               ties (kubernetes) or the first node name (kubernetes_name) */
    int integer;            /* node_score != exact: scores truncated to integers */
    double wgpu, wcpu, wmem;    /* scheduler.resource_weights (best_fit, spread) */
    double spec_cpu, spec_gpu;  /* atc_best_fit: the largest node's CPU and GPU milli */
    uint32_t pct_score;     /* percentageOfNodesToScore (node_score kubernetes; 0: adaptive) */
    uint32_t next_start;    /* kube-scheduler's nextStartNodeIndex */
    double wbal;            /* NodeResourcesBalancedAllocation's weight (0: off) */
    uint8_t *allowed;       /* scratch: per pool, a pod's pools (sampled search) */
    const fs_place_net_t *net;  /* the fabric's state (topology, fabric_aware), NULL: none */
    struct net_unit *nu[3];     /* scratch: leaf groups, domains, nodes (place_net) */
    size_t nu_cap[3];
    struct net_unit *ord;       /* scratch: the groups ordered by load */
    size_t ord_cap;
    uint64_t *heap;             /* scratch: the largest free counts (place_net) */
    size_t heap_cap;
    fs_slice_t *sl;             /* scratch: a gang's slices */
    size_t sl_cap;
};

/* A multi-node gang in the fabric's leaf groups and NVLink domains, by
 * the uplinks' load (fs_place_net.c); single-node requests as topology. */
int fs_place_with_net(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t np,
                      uint32_t g, uint32_t milli, fs_placement_t *out);

#endif
