/*
 * fs_cluster: pools of identical nodes and the free-capacity index that lets
 * placement find nodes without scanning them.
 *
 * State is struct-of-arrays: node_free[] (free GPUs), node_pool[], node_up[].
 * Per pool and per free-GPU level L (0..gpus_per_node), the set of up nodes
 * with node_free == L is a 64-ary hierarchical bitset (a bit per node, a
 * summary bit per non-zero word above it, and so on up to one word: 2 layers
 * for <= 4,096 nodes, 3 for <= 262,144).  A root mask has bit L set iff level
 * L is non-empty, and max_level is its highest bit.  A node's change moves
 * it between two levels: O(layers) with early exit (usually one word each).
 * With it:
 *   - fits(pool, g): can a g-GPU gang be placed now?  O(1), inline: a
 *     single-node job (g <= gpus_per_node) needs max_level >= g, a
 *     multi-node job needs >= g free GPUs in the pool (a counter);
 *   - best fit: the lowest-index node among those with the fewest free GPUs
 *     that are still >= g (lowest root bit >= g, its leftmost node: a ctz per
 *     layer);
 *   - first fit: the lowest-index node with >= g free (leftmost node of the
 *     union of the levels >= g: O(levels x layers));
 *   - largest: the lowest-index node with the most free GPUs (max_level).
 * Allocation of a gang (all GPUs at once or none):
 *   pack       single-node: best fit.  multi-node: while >= gpus_per_node
 *              remain, the node with the most free; then best fit for the
 *              rest (else the most free).  Fewest nodes, fullest nodes first.
 *   first_fit  single-node: first fit.  multi-node: nodes in index order,
 *              taking what each has free.
 *   topology   single-node: as pack.  multi-node (with a topology): the
 *              lowest unit that holds the gang, best fit (see below).
 *   (other kinds: as pack; the scoring kinds live in fs_place.c)
 * The index can be switched off (use_index = 0): every query then scans the
 * nodes in order with the same tie-breaks.  Tests prove both paths choose
 * the same nodes (SQLite-style fast path == slow path).
 *
 * Fractional GPUs (gpu_milli < 1000, gpus == 1) share GPUs.  node_free[]
 * counts only FULLY free GPUs, so whole-GPU jobs and the level index above
 * are untouched by sharing.  A fractional job opens a "shared GPU" (takes
 * one fully free GPU: node_free - 1) or joins an open one; each node has
 * gpus_per_node shared slots holding the used milli of its open shared GPUs
 * (0 = slot not open).  When a shared GPU's last share leaves, the GPU is
 * fully free again.  Invariant: a shared GPU's used milli is in [1, 1000]
 * (never over-committed), and per node
 *     node_free + open shared slots + whole-allocated GPUs == gpus_per_node.
 * The shared slots and a second segment tree over them (bitmask of the
 * free-milli levels 0..999 of the open shared GPUs below each tree node,
 * 16 words) are allocated per pool on its first fractional job, so a
 * whole-GPU fleet never pays for them.  Queries on it, O(log N * 16 words):
 * "a shared GPU with >= m milli free exists", "the shared GPU with the
 * fewest milli free that are still >= m" (GPU packing), "the lowest node
 * with a shared GPU >= m" (first fit).
 *
 * Accounting: gpus_busy counts GPUs that hold at least one job (a shared
 * GPU counts 1); milli_busy counts allocated milli-GPUs (the FGD allocation
 * ratio is milli_busy / (1000 * gpus_total)).
 *
 * Topology (optional, cluster.topology): per pool, nodes are grouped into
 * NVLink domains, racks, leaf switches and spines, each a contiguous range
 * of node ids that nests in the next (units never cross pools).  Per unit,
 * the count of fully free GPUs on up nodes is kept; `topology` placement of
 * multi-node gangs uses them (Slurm topology/tree best fit, see
 * docs/models.md); fs_cluster_span() counts the units a placement spans
 * (the hook for placement-dependent slowdowns).
 * Ownership: the cluster owns all arrays; allocations (fs_placement_t) are
 * owned by the caller and released with fs_placement_release.
 */
#ifndef FS_CLUSTER_H
#define FS_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_config.h"
#include "fs_mig.h"
#include "../traces/fs_job.h"

#define FS_CLUSTER_NOLVL UINT32_MAX
#define FS_CLUSTER_HMAXD 6u     /* bitset layers: 64^5 >= the 2^30 nodes a cluster may have */

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
    uint64_t gpus_busy;     /* GPUs holding at least one job (a shared GPU counts 1) */
    /* index: per level L in 0..gpn, the up nodes with node_free == L as a
     * hierarchical bitset of `hwords` words at lset + L * hwords: layer d
     * (0 = the top word, hdepth - 1 = a bit per node) has hn[d] words at
     * offset hoff[d]; bit x of layer d < hdepth - 1 is set iff word x of
     * layer d + 1 is non-zero. */
    uint32_t *lvl_n;        /* per level L in 0..gpn: how many up nodes have node_free == L */
    uint32_t hdepth;
    uint32_t hwords;
    uint32_t hleaf;         /* hoff[hdepth - 1]: the bottom layer */
    uint32_t hoff[FS_CLUSTER_HMAXD];
    uint32_t hn[FS_CLUSTER_HMAXD];
    uint64_t *lset;         /* (gpn + 1) * hwords */
    uint64_t *lroot;        /* rwords words: bit L set iff level L has an up node */
    uint32_t rwords;        /* (gpn + 1 + 63) / 64 */
    int32_t max_level;      /* highest non-empty level, -1 if no node is up */
    uint32_t leaf0;         /* leaves of the shared tree: a power of 2 >= n_nodes */
    /* fractional sharing, allocated on the pool's first fractional job */
    uint16_t *sused;        /* n_nodes * gpn shared slots: used milli, 0 = not open */
    uint64_t *smask;        /* (2 * leaf0) * FS_CLUSTER_SWORDS: free-milli levels */
    uint64_t n_shared;      /* open shared GPUs */
    uint32_t cpu_milli;     /* allocatable CPU per node, milli-cores; 0 = not modelled */
    uint32_t mem_mib;       /* allocatable memory per node, MiB; 0 = not modelled */
    /* MIG (cluster.pools[].mig, docs/mig.md): NULL for a whole-GPU pool.
     * Every GPU of the pool has the static layout mig_layout; its nodes
     * keep node_free == 0, so whole-GPU and shared requests never fit.
     * mig_used: n_nodes * gpn bytes, bit i = instance i of the layout in
     * use.  mig_pmask[p]: the layout's instances of profile p. */
    const fs_mig_model_t *mig;
    fs_mig_layout_t mig_layout;
    uint8_t mig_pmask[FS_MIG_MAX_PROFILES];
    uint8_t *mig_used;
    uint64_t mig_total;     /* instances in the pool */
    uint64_t mig_busy;      /* instances in use */
    uint64_t mig_free[FS_MIG_MAX_PROFILES];  /* free instances per profile on up nodes */
    /* per-GPU layouts (cluster.pools[].mig_repartition, models/fs_migrecut.h):
     * NULL while every GPU keeps mig_layout (the static path).  mig_glay:
     * n_nodes * gpn layouts; mig_gpm: per GPU, FS_MIG_MAX_PROFILES masks
     * (bit i = instance i of that GPU's layout is of the profile); mig_cap:
     * instances of each profile one empty GPU holds (a re-cut's most). */
    fs_mig_layout_t *mig_glay;
    uint8_t *mig_gpm;
    uint8_t mig_cap[FS_MIG_MAX_PROFILES];
    /* GPU sharing (cluster.pools[].sharing, models/fs_sharing.h): share_n
     * replicas per GPU (0: none), each a share of share_milli on the
     * fractional machinery above.  A request of one GPU (whole or
     * gpu_milli) takes one replica; more than one GPU, or a GPU pod
     * (fs_podreq_t), never fits (failRequestsGreaterThanOne). */
    uint32_t share_n;
    uint32_t share_milli;   /* FS_SHARING_MILLI(share_n) */
    int share_kind;         /* enum fs_sharing_kind */
} fs_pool_t;

#define FS_CLUSTER_MIG_MAX_GPN 8u  /* MIG pools: GPUs per node (fs_placement_t.mig_bits) */
#define FS_CLUSTER_SWORDS 16u   /* 1024 bits: free-milli levels 0..999 */

/* Topology levels (units above a node). */
enum fs_topo_level { FS_TOPO_DOMAIN = 0, FS_TOPO_RACK = 1, FS_TOPO_LEAF = 2, FS_TOPO_SPINE = 3,
                     FS_TOPO_LEVELS = 4 };

typedef struct fs_topo {
    uint32_t n_units[FS_TOPO_LEVELS];
    uint32_t *node_unit[FS_TOPO_LEVELS];  /* node -> unit id (global, pools in order) */
    uint32_t *unit_first[FS_TOPO_LEVELS]; /* unit -> first node; [n_units] = n_nodes */
    uint64_t *unit_free[FS_TOPO_LEVELS];  /* fully free GPUs on up nodes */
} fs_topo_t;

typedef struct fs_cluster {
    fs_pool_t *pools;
    uint32_t n_pools;
    uint32_t n_nodes;
    uint32_t *node_free;    /* free GPUs per node */
    uint32_t *node_pool;
    uint8_t *node_up;
    uint32_t *node_lvl;     /* the level a node is filed under in the index, FS_CLUSTER_NOLVL if down */
    uint64_t gpus_total;
    uint64_t gpus_up;
    uint64_t gpus_busy;     /* GPUs holding at least one job (a shared GPU counts 1) */
    uint64_t gpus_busy_down; /* ... of them, on nodes out of service: a drained or cordoned
                               node's running pods (in service for the capacity states) */
    uint64_t milli_busy;    /* allocated milli-GPUs (whole GPUs count 1000) */
    fs_topo_t *topo;        /* NULL: no topology configured */
    int use_index;          /* 1 (default): indexed queries; 0: linear scans */
    int one_whole;          /* one pool of whole GPUs (no MIG, no sharing): the model's fast path */
    uint64_t gen;           /* +1 at every change of a node's free GPUs, shares or state:
                               what fits is the same while it is (fs_sched.c caches by it) */
    /* node CPU and memory (pods, docs/models.md): allocated when a pool
     * models them; free milli-cores and MiB per node (pools that do not
     * model one keep 0 there and never check it) */
    uint32_t *node_cpu;
    uint32_t *node_mem;
    uint32_t *node_rank;    /* name order (cluster.from's machine-list order), NULL: node id */
} fs_cluster_t;

/* What a Kubernetes pod asks of one node: g GPUs of `milli` each (g == 0:
 * a CPU-only pod), CPU in milli-cores and memory in MiB (0: none). */
typedef struct fs_podreq {
    uint32_t g, milli, cpu, mem;
} fs_podreq_t;

/* What job j asks of a node: CPU and memory count for pods
 * (FS_JOB_SINGLE_NODE) only; a gang spread over nodes reserves GPUs. */
static inline fs_podreq_t fs_podreq_of(const fs_job_t *j)
{
    int pod = (j->flags & FS_JOB_SINGLE_NODE) != 0;
    return (fs_podreq_t){j->gpus, j->gpu_milli, pod ? j->cpu_milli : 0, pod ? j->mem_mib : 0};
}

/* One node's share of a gang. */
typedef struct fs_slice {
    uint32_t node;
    uint32_t gpus;
} fs_slice_t;

/* Where a job runs.  One slice inline (single-node jobs allocate nothing).
 * A fractional job has n == 1, one.gpus == 1, milli < 1000 and runs on
 * shared slot `gpu` of node one.node. */
typedef struct fs_placement {
    uint32_t pool;
    uint32_t n;             /* slices */
    fs_slice_t one;
    fs_slice_t *many;       /* n > 1: owned array */
    uint32_t milli;         /* 1000: whole GPUs; < 1000: share of one GPU */
    uint32_t gpu;           /* fractional: the shared slot (0 .. gpus_per_node-1) */
    uint32_t cpu, mem;      /* a pod's CPU (milli-cores) and memory (MiB) held on one.node */
    int32_t mig;            /* MIG profile code (fs_mig_code) of the instances held, 0 none */
    uint64_t mig_bits;      /* MIG: bit 8 * g + i = instance i of GPU g of one.node */
} fs_placement_t;

static inline const fs_slice_t *fs_placement_slices(const fs_placement_t *p)
{
    return p->n > 1 ? p->many : &p->one;
}
void fs_placement_release(fs_placement_t *p);

int fs_cluster_init(fs_cluster_t *c, const fs_cluster_cfg_t *cfg, fs_error_t *err);
void fs_cluster_release(fs_cluster_t *c);

/* The linear paths of fs_cluster_fits (use_index == 0) and of
 * fs_cluster_fits_req for shares (milli < 1000); call those instead. */
int fs_cluster_fits_scan(const fs_cluster_t *c, uint32_t pool, uint32_t g);
int fs_cluster_fits_share(const fs_cluster_t *c, uint32_t pool, uint32_t g, uint32_t milli);

/* Can a gang of g GPUs start in pool now?  O(1), inline: the scheduler
 * asks this ~10 times per job. */
static inline int fs_cluster_fits(const fs_cluster_t *c, uint32_t pool, uint32_t g)
{
    const fs_pool_t *p = &c->pools[pool];
    if (g > p->gpn)
        return p->gpus_free >= g;
    if (!c->use_index)
        return fs_cluster_fits_scan(c, pool, g);
    return (int64_t)g <= p->max_level;
}
/* Could it ever (an empty, fully up pool)? */
int fs_cluster_could_fit(const fs_cluster_t *c, uint32_t pool, uint32_t g);

/* Allocates a gang of g GPUs in pool with the given placement (enum
 * fs_placement_kind).  Returns 1 and fills *out, 0 if it does not fit now,
 * or FS_ENOMEM. */
int fs_cluster_alloc(fs_cluster_t *c, uint32_t pool, uint32_t g, int placement,
                     fs_placement_t *out);
/* The same for a request of g GPUs of `milli` each: milli == 1000 is
 * fs_cluster_alloc; milli < 1000 (g must be 1) shares a GPU: pack (and the
 * kinds that are not first_fit) = GPU packing (the open shared GPU with the
 * fewest milli free still >= milli, lowest node and slot; else a fully free
 * GPU on the fullest node that has one); first_fit = the lowest node that
 * has either, its lowest open slot that fits, else a new one. */
int fs_cluster_alloc_req(fs_cluster_t *c, uint32_t pool, uint32_t g, uint32_t milli,
                         int placement, fs_placement_t *out);

/* Pods (NodeResourcesFit on GPUs, CPU and memory).  Does the pool model CPU
 * or memory that q asks for?  If not, the GPU-only calls above decide. */
static inline int fs_cluster_pod_res(const fs_cluster_t *c, uint32_t pool, const fs_podreq_t *q)
{
    const fs_pool_t *p = &c->pools[pool];
    return (q->cpu && p->cpu_milli) || (q->mem && p->mem_mib) || q->g == 0;
}
/* Does q fit on node now (up, GPUs, CPU, memory)? */
int fs_cluster_node_fits_pod(const fs_cluster_t *c, uint32_t node, const fs_podreq_t *q);
/* On some node of pool now?  O(1) when the pool models neither resource q
 * asks for, else a scan of its nodes. */
int fs_cluster_fits_pod(const fs_cluster_t *c, uint32_t pool, const fs_podreq_t *q);
/* On an empty, fully up node of pool? */
int fs_cluster_could_fit_pod(const fs_cluster_t *c, uint32_t pool, const fs_podreq_t *q);
/* Takes q on node (which must fit it): GPUs as fs_cluster_take (slot for a
 * share), then CPU and memory where the pool models them.  1 or FS_ENOMEM. */
int fs_cluster_take_pod(fs_cluster_t *c, uint32_t node, const fs_podreq_t *q, int slot,
                        fs_placement_t *out);
/* Returns a placement's GPUs to the pool (does not release *p). */
void fs_cluster_free(fs_cluster_t *c, const fs_placement_t *p);

/* ---- for placement policies (fs_place.c) ------------------------------ */

/* Can a request (g GPUs of milli each; milli < 1000 needs g == 1) start in
 * pool now?  O(1) for whole GPUs, O(16 words) for shares. */
static inline int fs_cluster_fits_req(const fs_cluster_t *c, uint32_t pool, uint32_t g,
                                      uint32_t milli)
{
    if (c->pools[pool].share_n) {   /* a replica (fs_sharing.h) */
        if (g != 1)
            return 0;
        milli = c->pools[pool].share_milli;
    }
    if (milli >= FS_GPU_MILLI_WHOLE)
        return fs_cluster_fits(c, pool, g);
    return fs_cluster_fits_share(c, pool, g, milli);
}
/* Could the request start on this one node now (up, single-node)? */
int fs_cluster_node_fits(const fs_cluster_t *c, uint32_t node, uint32_t g, uint32_t milli);
/* Used milli of shared slot k of node (0: slot not open). */
static inline uint32_t fs_cluster_slot_used(const fs_cluster_t *c, const fs_pool_t *p,
                                            uint32_t node, uint32_t k)
{
    return p->sused ? p->sused[(size_t)(node - p->first_node) * p->gpn + k] : 0;
}
/* Candidate nodes for a scored single-node placement, ascending and
 * distinct, into out (room for fs_cluster_candidates_cap entries): for every fully-free level L (L >= g; for a share
 * L >= 1), the first k up nodes in index order whose node_free == L; for a
 * share, also the first k up nodes that have an open shared GPU with
 * >= milli free.  k == 0: every feasible node.  Indexed: O(levels * k log N);
 * the linear path scans and returns the same set.  Returns the count. */
size_t fs_cluster_candidates(const fs_cluster_t *c, uint32_t pool, uint32_t g, uint32_t milli,
                             uint32_t k, uint32_t *out);
/* Room fs_cluster_candidates needs for this pool and k. */
size_t fs_cluster_candidates_cap(const fs_cluster_t *c, uint32_t pool, uint32_t k);
/* Places a single-node request on node: g whole GPUs, or a share of milli
 * on open shared slot `slot` (slot < 0: open a new shared GPU).  The caller
 * checked that it fits.  Returns 1, or FS_ENOMEM (no change). */
int fs_cluster_take(fs_cluster_t *c, uint32_t node, uint32_t g, uint32_t milli, int slot,
                    fs_placement_t *out);

/* Units a placement spans: distinct nodes, NVLink domains, racks, leaves,
 * spines (without a topology, every node is its own unit at each level).
 * The hook for placement-dependent slowdowns (issue 5). */
typedef struct fs_span {
    uint32_t nodes, domains, racks, leaves, spines;
} fs_span_t;
int fs_cluster_span(const fs_cluster_t *c, const fs_placement_t *p, fs_span_t *out);

/* ---- MIG pools (cluster.pools[].mig) ---------------------------------------
 * A pod asking profile `code` takes k free instances of it on one node (the
 * device plugin's mixed strategy: nvidia.com/mig-<profile>: k).  Pools
 * without MIG answer 0.  Fits is O(1) for k == 1 (a per-profile counter),
 * else O(nodes x gpn); take is O(nodes x gpn): the node with the fewest free
 * instances of the profile that are still >= k (ties: lowest node), then its
 * GPUs in order, each GPU's instances in ascending start. */
int fs_cluster_mig_fits(const fs_cluster_t *c, uint32_t pool, int32_t code, uint32_t k);
/* On an empty, fully up pool? */
int fs_cluster_mig_could_fit(const fs_cluster_t *c, uint32_t pool, int32_t code, uint32_t k);
/* Takes k instances (1, *out filled), 0 if they do not fit now. */
int fs_cluster_mig_take(fs_cluster_t *c, uint32_t pool, int32_t code, uint32_t k, fs_placement_t *out);
/* The layout of GPU g of node (a MIG pool's node). */
static inline const fs_mig_layout_t *fs_cluster_mig_layout(const fs_cluster_t *c, uint32_t node,
                                                           uint32_t g)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    return p->mig_glay ? &p->mig_glay[(size_t)(node - p->first_node) * p->gpn + g] : &p->mig_layout;
}
/* Does a pod hold an instance on node (a MIG pool's node)? */
int fs_cluster_mig_node_held(const fs_cluster_t *c, uint32_t node);
/* Re-partitioning (a pool with per-GPU layouts): re-cuts every GPU of node,
 * which must be out of service with no instance held, for profile pr
 * (fs_mig_recut with keep 0: mig-parted's all-<profile>).  Returns the
 * instances of pr the node then has, or FS_EINVAL (not such a node). */
int fs_cluster_mig_recut(fs_cluster_t *c, uint32_t node, unsigned pr);
/* Re-partitioning with planned layouts (mig_repartition.layout: mixed):
 * GPU g of node, out of service with no instance held, takes lay[g] (the
 * pool's GPUs per node of them, each valid by fs_mig_layout_check).  0, or
 * FS_EINVAL (not such a node, or an invalid layout; nothing changed). */
int fs_cluster_mig_set(fs_cluster_t *c, uint32_t node, const fs_mig_layout_t *lay);
/* GPUs of node that hold a pod (a whole-GPU pod, a share or a MIG
 * instance).  O(GPUs per node). */
uint32_t fs_cluster_node_busy(const fs_cluster_t *c, uint32_t node);

/* Marks a node down (its free GPUs leave the index) or up again. */
void fs_cluster_set_up(fs_cluster_t *c, uint32_t node, int up);

/* Pool index by name, or -1. */
int fs_cluster_find_pool(const fs_cluster_t *c, const char *name);

#endif
