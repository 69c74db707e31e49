/*
 * fs_place: placement policies -- which pool, node and (for a fractional
 * request) which shared GPU a job gets.  scheduler.placement selects one:
 *
 *   pack, first_fit  the cluster's indexed queries (fs_cluster.h), first
 *                    pool that fits; unchanged from the spine.
 *   topology         as pack for single-node jobs; multi-node gangs take the
 *                    lowest topology unit that holds them (fs_cluster.c).
 *                    With the fabric on (fs_placer_set_net): gangs go to
 *                    the fabric's leaf groups, the fewest that hold them,
 *                    and among those the ones whose uplinks carry the least
 *                    load now (ties by it; docs/policies.md).
 *   fabric_aware     contention-aware (cluster.fabric only): single-node
 *                    jobs as pack; a gang that fits one leaf group as
 *                    topology; else the leaf groups whose uplinks give its
 *                    ring the highest predicted rate under the current
 *                    flows (max-min), the fewest of them at that rate.
 *   best_fit/binpack Kubernetes NodeResourcesFit MostAllocated on GPUs:
 *                    highest allocation ratio of the node after placement.
 *   spread           LeastAllocated: lowest allocation ratio after placement.
 *   fgd              fragmentation-gradient descent (Weng et al., ATC'23):
 *                    the node and GPU whose fragmentation grows least.
 *   random           a uniformly random feasible node (keyed stream
 *                    FS_RNG_PLACE), a uniformly random feasible GPU on it.
 *
 * Scored kinds (best_fit, spread, fgd) score candidate nodes from every
 * allowed pool and take the best (ties: lowest node id).  In a pool where
 * no GPU is shared, every node of one free level is in the same state, so
 * one node per level (the lowest) is scored: exact, O(levels log N).  In a
 * pool with shared GPUs, the candidates are bounded: the first
 * `scheduler.candidates` nodes of every free level and of the nodes with a
 * fitting shared GPU (fs_cluster_candidates), as kube-scheduler's
 * percentageOfNodesToScore bounds the nodes it scores.  Jobs larger than a
 * node go to the first allowed pool with room as pack places them.
 *
 * FGD's task-shape distribution: weights per shape (GPUs, milli, allowed
 * pools) given through fs_placer_observe -- the model observes every
 * arrival (the distribution is learned online); an experiment can observe
 * a whole trace first (given).  Node fragmentation F_n (docs/models.md) is
 * computed from per-pool tables in O(shared GPUs of the node), exactly, in
 * integers (milli-GPU x weight).
 *
 * Speed factors: a job of class c on a pool of GPU model t runs at the
 * cluster.speed row (c, t), else at the catalog's relative speed when
 * cluster.speed_catalog is set, else 1.0.
 *
 * Ownership: the placer owns its tables, scratch and RNG stream; it borrows
 * nothing after creation (the cluster is passed to every call).
 */
#ifndef FS_PLACE_H
#define FS_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_cluster.h"
#include "fs_config.h"

typedef struct fs_placer fs_placer_t;

/* kind: enum fs_placement_kind; candidates: nodes per level (0: all). */
int fs_placer_create(const fs_cluster_t *c, int kind, uint32_t candidates,
                     const fs_cluster_cfg_t *cc, uint64_t seed, uint64_t replication,
                     fs_placer_t **out, fs_error_t *err);
void fs_placer_destroy(fs_placer_t *pl);

/* Does the placer use observed task shapes (fgd)? */
int fs_placer_learns(const fs_placer_t *pl);

/* Adds `weight` to the task shape (g GPUs of milli each, allowed pools;
 * pools == NULL: every pool).  0 or FS_ENOMEM. */
int fs_placer_observe(fs_placer_t *pl, const fs_cluster_t *c, uint32_t g, uint32_t milli,
                      const uint32_t *pools, size_t n_pools, uint64_t weight);

/* Places a request on one of the pools (NULL: every pool, in order).
 * Returns 1 (placed, *out filled), 0 (does not fit now) or FS_ENOMEM. */
int fs_placer_place(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t n_pools,
                    uint32_t g, uint32_t milli, fs_placement_t *out);

/* The same for a Kubernetes pod (FS_JOB_SINGLE_NODE): placed on one node
 * only, in the pools whose nodes have >= g GPUs; 0 when none does.  Never
 * split over nodes as a gang may be. */
int fs_placer_place_node(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t n_pools,
                         uint32_t g, uint32_t milli, fs_placement_t *out);

/* A pod with CPU and memory (NodeResourcesFit on every resource): on one
 * node of the pools whose nodes hold its GPUs.  Every feasible node is
 * scored when a pool models CPU or memory the pod asks for, when the kind
 * is atc_best_fit or gpu_packing, under node_score kubernetes, or for a
 * CPU-only pod (g == 0); else it is fs_placer_place_node.  1, 0 or
 * FS_ENOMEM. */
int fs_placer_place_pod(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t n_pools,
                        const fs_podreq_t *q, fs_placement_t *out);

/* FGD task shape with a CPU request (fs_placer_observe is this with cpu 0). */
int fs_placer_observe_pod(fs_placer_t *pl, const fs_cluster_t *c, const fs_podreq_t *q,
                          const uint32_t *pools, size_t n_pools, uint64_t weight);

/* scheduler.node_score (enum fs_node_score: exact; kubernetes: integer node
 * scores 0-100 and a uniformly random node among the best, as
 * kube-scheduler's selectHost; kubernetes_name: the first node name among
 * the best) and
 * scheduler.resource_weights for best_fit/spread (gpu 1, cpu 0, memory 0
 * until set). */
void fs_placer_set_scoring(fs_placer_t *pl, int node_score, double w_gpu, double w_cpu,
                           double w_mem);

/* kube-scheduler's options under node_score kubernetes (placements that go
 * through place_pod): percentageOfNodesToScore (0: adaptive) -- feasible
 * nodes are searched from a round-robin start index over every node of the
 * cluster (global ids) until fs_kube_nodes_to_find of them are found; the
 * next search starts after the last node checked -- and the weight of
 * NodeResourcesBalancedAllocation for best_fit/spread (0: off; any
 * node_score). */
void fs_placer_set_kube(fs_placer_t *pl, uint32_t percentage, double balanced_weight);

/* kube-scheduler's numFeasibleNodesToFind: every node below 100 nodes, else
 * n_all x percentage / 100 (percentage 0: 50 - n_all / 125, at least 5), at
 * least 100. */
uint32_t fs_kube_nodes_to_find(uint32_t n_all, uint32_t percentage);

/* A node pin (the plugin host's place, models/fs_plugin.c).  While one is
 * set on the placer, fs_placer_place, _place_node and
 * _place_pod put a request on the first of pin->nodes (global node ids, in
 * the order given) that is in one of the pools they are given and where
 * the request fits now on that one node, instead of where the placement
 * kind would; a request that fits on none (or needs more than one node)
 * does not fit (0).  Set around one fs_model_start call and restored: the
 * pointer names the caller's list for that call.  Returns the pin set
 * before (NULL: none). */
typedef struct fs_place_pin {
    const uint32_t *nodes;
    size_t n;
} fs_place_pin_t;
const fs_place_pin_t *fs_placer_pin(fs_placer_t *pl, const fs_place_pin_t *pin);

/* The network's state now, for the placements that weigh it (topology
 * and fabric_aware; models/fs_fabric_mod.c sets it when cluster.fabric is
 * on).  A pool's leaf groups are runs of leaf_nodes nodes from its first
 * node (the last may be shorter), its NVLink domains runs of domain_nodes
 * (which divides leaf_nodes).  A ring that leaves a group puts one edge on
 * the group's uplink bundle (coefficient 1, fs_fabric_net_flow). */
typedef struct fs_place_net {
    const void *ud;
    void (*shape)(const void *ud, uint32_t pool, uint32_t *leaf_nodes, uint32_t *domain_nodes);
    /* the uplink bundle of node's group now: capacity, load (bytes/s: sum
     * over its flows of coefficient x rate), flows crossing it */
    void (*uplinks)(const void *ud, uint32_t node, double *cap, double *load, uint32_t *flows);
    /* a node's NIC capacity, bytes/s */
    double (*nic_cap)(const void *ud, uint32_t node);
} fs_place_net_t;
/* Borrowed until the placer is destroyed or another is set (NULL: none,
 * topology as without a fabric). */
void fs_placer_set_net(fs_placer_t *pl, const fs_place_net_t *net);

/* Speed factor of a job of class cls on pool. */
double fs_placer_speed(const fs_placer_t *pl, uint32_t pool, int32_t cls);
/* The same factor from the cluster and its configuration alone, without a
 * placer (the plugin host's speed, models/fs_plugin.c); cc may be NULL. */
double fs_speed_factor(const fs_cluster_t *c, const fs_cluster_cfg_t *cc, uint32_t pool, int32_t cls);

/* FGD node fragmentation F_n under the shapes observed so far, in milli-GPU
 * x weight (divide by the total weight for expected milli-GPUs). */
int64_t fs_placer_fragmentation(fs_placer_t *pl, const fs_cluster_t *c, uint32_t node);

#endif
