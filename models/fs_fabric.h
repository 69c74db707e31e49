/*
 * fs_fabric: the training network as a shared resource (cluster.fabric,
 * docs/models.md "Fabric").
 *
 * Two parts.  The engine (fs_fabric.c) knows links with capacities and
 * flows, one per communicating job: a flow puts coef[i] x its rate x on
 * link links[i], and a job's ring moves in lockstep, so one number x per
 * job.  Rates are max-min fair (progressive filling): every flow's x rises
 * at the same pace until a link it uses is full; recomputed when a flow
 * comes or goes or a link's capacity changes, over the flows connected to
 * the change through shared links only (max-min fairness decomposes over
 * the connected components of the flow-link graph, so this is exact).
 * The ring model turns a flow's x into its iteration time and the job's
 * speed factor (idle iteration time / iteration time now).
 *
 * The mapping (fs_fabric_net.c) turns a pool's two-tier Clos and a
 * job's placement into a flow: the NICs of each node and the uplink bundle
 * of each leaf group are links.
 */
#ifndef FS_FABRIC_H
#define FS_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_cluster.h"
#include "fs_config.h"

/* ---- the ring model -------------------------------------------------------- */

/* One job's all-reduce every iteration, as NCCL runs it on the network
 * (docs/models.md "Fabric"): the collective is pipelined, so its NVLink
 * work (nvl_s) overlaps its network work and the slower of the two sets
 * its time.  Over the network each of its d NVLink domains sends `edge`
 * bytes per iteration at the domain's ring bandwidth x, of which NCCL
 * reaches the share eff: NCCL's ring over all n GPUs, 2(n-1)/n x bytes,
 * or at d = 2 and 3 its double binary tree of domains when that sends less
 * (bytes and 1.5 x bytes).  Plus 2(d-1) x alpha of latency. */
typedef struct fs_fabric_ring {
    double bytes;           /* gradient bytes per iteration */
    uint32_t domains;       /* d: NVLink domains (nodes without one) the job spans */
    uint32_t tree;          /* 1: NCCL's tree over the domains, 0: its ring */
    double edge;            /* bytes a domain sends over the network per iteration */
    double nvl_s;           /* NVLink work per iteration, s, overlapped with the network */
    double eff;             /* share of x the collective reaches, (0, 1]; 0 is taken as 1 */
    double alpha_s;         /* latency per ring step, s */
    double compute_s;       /* compute per iteration, s */
    double overlap;         /* share of communication hidden behind compute */
} fs_fabric_ring_t;

/* Communication time of one iteration at ring bandwidth x (bytes/s). */
double fs_fabric_comm_s(const fs_fabric_ring_t *r, double x);
/* Iteration time at ring bandwidth x: max(compute, overlap x comm) +
 * (1 - overlap) x comm. */
double fs_fabric_iter_s(const fs_fabric_ring_t *r, double x);
/* Bytes one domain sends over the network per iteration (r->edge; 0
 * inside one domain). */
double fs_fabric_edge_bytes(const fs_fabric_ring_t *r);

/* ---- the engine -------------------------------------------------------------- */
typedef struct fs_fabric fs_fabric_t;

/* n_links links with capacities cap[] (bytes/s, > 0).  NULL out of memory. */
fs_fabric_t *fs_fabric_new(uint32_t n_links, const double *cap);
void fs_fabric_free(fs_fabric_t *f);

/* Flow `id` (a job slot) starts: coef[i] x its rate on links[i] (distinct
 * links, coef > 0), ring model r.  Its idle rate is min cap/coef over its
 * links.  Recomputes the flows connected to it.  0 or FS_ENOMEM, FS_EINVAL
 * (id already active). */
int fs_fabric_add(fs_fabric_t *f, uint32_t id, const uint32_t *links, const double *coef,
                  uint32_t n, const fs_fabric_ring_t *r);
/* Flow `id` ends (no-op if it is not active); recomputes the flows that
 * shared a link with it.  0 or FS_ENOMEM. */
int fs_fabric_remove(fs_fabric_t *f, uint32_t id);
/* A link's capacity changes (> 0); recomputes the flows on it and those
 * connected to them.  0 or FS_ENOMEM. */
int fs_fabric_set_cap(fs_fabric_t *f, uint32_t link, double cap);

/* Is flow id active? */
int fs_fabric_active(const fs_fabric_t *f, uint32_t id);
/* A flow's rate x now and alone on an idle fabric (bytes/s), and its speed
 * factor: idle iteration time / iteration time now (1 when not active). */
double fs_fabric_x(const fs_fabric_t *f, uint32_t id);
double fs_fabric_x_idle(const fs_fabric_t *f, uint32_t id);
double fs_fabric_factor(const fs_fabric_t *f, uint32_t id);
/* The flows whose factor the last add/remove/set_cap changed (the added
 * flow not included), in the order they were recomputed. */
const uint32_t *fs_fabric_changed(const fs_fabric_t *f, size_t *n);

/* A flow's links and coefficients (as added; kept after it ends, until
 * its id is added again), *n their number (0: never added). */
const uint32_t *fs_fabric_flow_links(const fs_fabric_t *f, uint32_t id, const double **coef,
                                     uint32_t *n);

/* A link's capacity and its load now: sum of coef x x of its flows. */
double fs_fabric_cap(const fs_fabric_t *f, uint32_t link);
double fs_fabric_load(const fs_fabric_t *f, uint32_t link);
uint32_t fs_fabric_n_links(const fs_fabric_t *f);

/* Counters: recomputations, flows recomputed (summed over them). */
typedef struct fs_fabric_stats {
    uint64_t recomputes;
    uint64_t flows_touched;
    uint64_t links_touched;
} fs_fabric_stats_t;
fs_fabric_stats_t fs_fabric_stats(const fs_fabric_t *f);

/* ---- a pool's Clos and a job's flow (fs_fabric_net.c) -------------------------- */

/* One pool's resolved fabric (the kind's defaults filled in). */
typedef struct fs_fabric_shape {
    uint32_t nodes_per_leaf; /* nodes of a leaf group */
    uint32_t nics;          /* NICs per node */
    uint32_t rails;         /* leaf switches per group: nics (rail-optimized) or 1 */
    uint32_t leaf_down;     /* downlink ports of a leaf switch */
    uint32_t up_ports;      /* uplink ports of a leaf switch: leaf_down / oversubscription */
    uint32_t spines;        /* spines; each leaf has up_ports / spines links to each */
    double port_Bps;        /* one port (a NIC), bytes/s */
    double nvl_Bps;         /* NVLink per GPU and direction, bytes/s */
    double alpha_s;         /* latency per ring step, s */
    double eff;             /* share of the NIC rate NCCL's collectives reach */
} fs_fabric_shape_t;

/* The fabric of a pool of GPUs per node gpn whose NVLink domains hold
 * dom_nodes nodes.  0, or FS_EINVAL with err's message starting with the
 * key to blame ("cluster.fabric.spines: ..."). */
int fs_fabric_shape(const fs_fabric_cfg_t *fc, uint32_t gpn, uint32_t dom_nodes,
                    fs_fabric_shape_t *out, fs_error_t *err);

/* The cluster.fabric rules: the shape fits every pool, traffic rows name
 * classes jobs have (a synthetic workload's jobs are class 0) once each,
 * give bytes or params, and cluster.span_speed is not set.  0, FS_EINVAL
 * with *key the key to blame, FS_ENOMEM. */
int fs_fabric_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err);

/* The fabric of a whole cluster: the shapes per pool and the link ids:
 * node v's NICs are link v, leaf group g's uplinks (all its rails and
 * spines, traffic split evenly over them) are link n_nodes + g. */
typedef struct fs_fabric_net {
    uint32_t n_nodes, n_groups;
    fs_fabric_shape_t *shape;   /* per pool */
    uint32_t *pool_group0;      /* per pool: its first group id */
    uint32_t *node_dom;         /* node -> NVLink domain (global id) */
    double *cap;                /* n_nodes + n_groups capacities, bytes/s */
    /* scratch for fs_fabric_net_flow */
    uint32_t *links;
    double *coef;
    fs_slice_t *sl;
    size_t cap_links, cap_coef, cap_sl;
} fs_fabric_net_t;

int fs_fabric_net_init(fs_fabric_net_t *net, const fs_fabric_cfg_t *fc, const fs_cluster_t *c,
                       fs_error_t *err);
void fs_fabric_net_release(fs_fabric_net_t *net);
/* The group (leaf) of a node. */
uint32_t fs_fabric_net_group(const fs_fabric_net_t *net, const fs_cluster_t *c, uint32_t node);
/* The traffic row of a class, NULL: the class does not communicate. */
const fs_fabric_traffic_cfg_t *fs_fabric_traffic(const fs_fabric_cfg_t *fc, uint32_t job_class);
/* A job's flow on placement pl with traffic t: its links and coefficients
 * (in net's scratch, valid until the next call) and ring.  Returns the
 * number of links, 0 when the job stays inside one NVLink domain (no
 * network traffic), -1 out of memory. */
int fs_fabric_net_flow(fs_fabric_net_t *net, const fs_cluster_t *c, const fs_placement_t *pl,
                       const fs_fabric_traffic_cfg_t *t, const uint32_t **links,
                       const double **coef, fs_fabric_ring_t *ring);

#endif
