/*
 * fs_fabric_cfg: cluster.fabric, the training network as a shared resource
 * (models/fs_fabric.h, docs/models.md "Fabric").  Its own header so that
 * fs_config.h only includes it.
 */
#ifndef FS_FABRIC_CFG_H
#define FS_FABRIC_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_dist.h"
#include "../traces/fs_synth.h"

/* cluster.fabric.kind: off (no fabric, the default) or a fabric whose
 * defaults (NIC rate, leaf size, NVLink bandwidth, latency) it fixes. */
enum fs_fabric_kind {
    FS_FABRIC_OFF = 0,
    FS_FABRIC_IB_NDR = 1,   /* InfiniBand NDR 400 Gb/s, DGX SuperPOD H100/B200 */
    FS_FABRIC_IB_XDR = 2,   /* InfiniBand XDR 800 Gb/s, DGX SuperPOD B300 */
    FS_FABRIC_ROCE_400 = 3, /* 400GbE RoCE, 2 servers per ToR (Llama 3's cluster) */
    FS_FABRIC_ROCE_800 = 4, /* 800G RoCE, DGX SuperPOD B300 Spectrum-X (SN5600) */
    FS_FABRIC_NVL72 = 5,    /* GB200 NVL72 racks, NDR scale-out */
    FS_FABRIC_KINDS = 6
};

/* cluster.fabric.traffic[].dtype: bytes per gradient element. */
enum fs_fabric_dtype { FS_FAB_BF16 = 0, FS_FAB_FP16 = 1, FS_FAB_FP32 = 2, FS_FAB_FP8 = 3 };

/* cluster.fabric.rail_optimized: the kind's default, or as given. */
enum fs_fabric_rail { FS_FAB_RAIL_AUTO = 0, FS_FAB_RAIL_YES = 1, FS_FAB_RAIL_NO = 2 };

/* One job class's traffic: its gradient all-reduce every iteration. */
typedef struct fs_fabric_traffic_cfg {
    uint32_t job_class;
    double bytes;           /* gradient bytes per iteration (0: params x dtype) */
    double params;          /* model parameters (0: bytes given) */
    int dtype;              /* enum fs_fabric_dtype */
    double compute_s;       /* compute time per iteration, s (> 0) */
    double overlap;         /* share of the communication overlapped with compute, [0, 1] */
} fs_fabric_traffic_cfg_t;

/* cluster.fabric.failures[].unit: what fails (docs/failures.md "Fabric
 * links and switches"): one leaf-to-spine link (an uplink port of a rail's
 * leaf switch), or a spine switch (every leaf of its pool loses its links
 * to it). */
enum fs_fabric_unit { FS_FAB_UNIT_LEAF_UPLINK = 0, FS_FAB_UNIT_SPINE = 1, FS_FAB_UNITS = 2 };
/* cluster.fabric.failures[].effect: the unit carries nothing, or
 * `capacity` of its bandwidth. */
enum fs_fabric_effect { FS_FAB_DOWN = 0, FS_FAB_DEGRADE = 1 };

/* One failure process of the fabric: every unit fails after a draw of tbf
 * (from its return to service) and is repaired after a draw of repair. */
typedef struct fs_fabric_fail_cfg {
    int unit;               /* enum fs_fabric_unit */
    fs_dist_t tbf;          /* s, prepared; kind NONE: the unit's sourced default; owned */
    fs_dist_cfg_t tbf_cfg;
    fs_dist_t repair;       /* s; kind NONE: the default; owned */
    fs_dist_cfg_t repair_cfg;
    int effect;             /* enum fs_fabric_effect */
    double capacity;        /* degrade: the share of its bandwidth left, [0, 1) */
    char *pool;             /* only this pool's units (NULL: all); owned */
} fs_fabric_fail_cfg_t;

/* cluster.fabric: a two-tier Clos per pool.  0: the kind's default. */
typedef struct fs_fabric_cfg {
    int kind;                   /* enum fs_fabric_kind; FS_FABRIC_OFF: no fabric */
    uint32_t nodes_per_leaf;    /* nodes a leaf group holds (0: kind default) */
    uint32_t nics_per_node;     /* 0: the pool's GPUs per node */
    double nic_gbps;            /* one NIC's rate, Gb/s (0: kind default) */
    int rail_optimized;         /* enum fs_fabric_rail: NIC k of every node of a group on leaf k */
    double oversubscription;    /* leaf downlink / uplink capacity, >= 1 */
    uint32_t spines;            /* 0: one spine per uplink port of a leaf */
    double nvlink_gbs;          /* NVLink bandwidth per GPU and direction, GB/s (0: default) */
    double alpha_us;            /* latency per ring step, us */
    double efficiency;          /* share of the NIC rate NCCL's collectives reach, (0, 1] */
    fs_fabric_traffic_cfg_t *traffic; /* owned */
    size_t n_traffic;
    fs_fabric_fail_cfg_t *failures; /* owned */
    size_t n_failures;
} fs_fabric_cfg_t;

#endif
