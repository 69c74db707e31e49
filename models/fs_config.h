/*
 * fs_config: the validated configuration of one run, as the scenario
 * language (scenarios/) builds it and the models consume it.
 *
 * Every field here is declared once, with its YAML path, type, unit, bounds,
 * default and doc, in the key table of scenarios/fs_keys.c; docs/scenario.md
 * is generated from that table.  Times are fs_time_t microseconds, rates per
 * second.  Strings and arrays are owned by the config (fs_config_release).
 */
#ifndef FS_CONFIG_H
#define FS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_time.h"
#include "../traces/fs_topts.h"
#include "../traces/fs_synth.h"
#include "fs_costcfg.h"
#include "fs_failcfg.h"
#include "fs_fabric_cfg.h"
#include "fs_queues.h"
#include "fs_quotacfg.h"
#include "fs_svccfg.h"

typedef struct fs_pool_cfg {
    char *name;             /* unique pool name */
    char *gpu;              /* GPU model (catalog name) */
    uint32_t nodes;         /* nodes in the pool (>= 1) */
    uint32_t gpus_per_node; /* GPUs per node (1..1024) */
    uint32_t cpu_milli;     /* allocatable CPU per node, milli-cores; 0 = not modelled (unlimited) */
    uint32_t memory_mib;    /* allocatable memory per node, MiB; 0 = not modelled (unlimited) */
    uint32_t *node_rank;    /* cluster.from: each node's position in the machine list (its
                               name order); NULL: node order.  Owned (fs_config_release) */
    char *mig;              /* static MIG layout of every GPU (models/fs_mig.h
                               fs_mig_layout_parse), NULL: none; owned */
    char *taints;           /* Kubernetes taints of its nodes (models/fs_taint.h), NULL: none; owned */
    double power_cap_w;     /* power limit of every GPU (nvidia-smi -pl), W; 0: none
                               (models/fs_power.h) */
    /* GPU sharing (cluster.pools[].sharing, models/fs_sharing.h): at most
     * one of the two is non-zero */
    int sharing;            /* bool: the sharing block was given */
    uint32_t time_slicing;  /* replicas per GPU, round-robin (2..32); 0: none */
    uint32_t mps;           /* MPS clients per GPU, SM share 1/mps each (2..32); 0: none */
    double ambient_c;       /* air temperature at the pool's GPUs, C (thermal model, throttling) */
    /* dynamic MIG re-partitioning (cluster.pools[].mig_repartition,
     * models/fs_migrecut.h): given and enabled; the phase's two parts and the
     * least time between two re-cut decisions of one node, us */
    int mig_recut_given;    /* the block was given */
    int mig_recut;          /* bool: enabled (the block given and enabled: true) */
    fs_time_t mig_reconfigure;
    fs_time_t mig_gpu_ready;
    fs_time_t mig_min_interval;
    int mig_drain;          /* enum fs_mig_drain: make an idle node when none is */
    fs_time_t mig_drain_timeout;    /* evict: pods still running this long after the cordon */
    int mig_layout;         /* enum fs_mig_layout_mode: the new layout of a re-cut node */
} fs_pool_cfg_t;

/* cluster.pools[].mig_repartition.drain (models/fs_migrecut.h) */
enum fs_mig_drain {
    FS_MIG_DRAIN_NONE = 0,  /* only idle nodes are re-cut */
    FS_MIG_DRAIN_WAIT = 1,  /* cordon a busy node; re-cut once its pods ended */
    FS_MIG_DRAIN_EVICT = 2  /* the same; pods left after drain_timeout are preempted */
};

/* cluster.pools[].mig_repartition.layout (models/fs_migrecut.h) */
enum fs_mig_layout_mode {
    FS_MIG_LAYOUT_ALL = 0,  /* every GPU of the node all-<p> (fs_mig_recut, keep 0) */
    FS_MIG_LAYOUT_MIXED = 1 /* GPU by GPU from the walk's demand (fs_migrecut_plan) */
};

/* cluster.topology: nodes -> NVLink domains -> racks -> leaf switches ->
 * spines, generated per pool (docs/models.md).  0 = not given. */
typedef struct fs_topology_cfg {
    char *nvlink_domain;        /* "node" or GPUs per domain (a multiple of gpus_per_node) */
    uint32_t nodes_per_rack;    /* 0: racks = NVLink domains */
    uint32_t racks_per_leaf;    /* 0: one leaf switch per pool */
    uint32_t leaves_per_spine;  /* 0: one spine per pool */
} fs_topology_cfg_t;

/* cluster.speed: one row = jobs of class `job_class` run at `factor` on GPU
 * model `gpu` (relative to the run times of the workload). */
typedef struct fs_speed_cfg {
    uint32_t job_class;
    char *gpu;              /* catalog name */
    double factor;          /* > 0 */
} fs_speed_cfg_t;

/* cluster.span_speed: one row = jobs of class `job_class` whose placement
 * spans more than one unit of a level run at that level's factor, the
 * smallest factor among the levels spanned deciding (docs/recovery.md,
 * Placement speed). */
typedef struct fs_span_speed_cfg {
    uint32_t job_class;
    double nodes, domains, racks, leaves, spines;   /* factors in (0, 1] */
} fs_span_speed_cfg_t;

/* cluster.from: pools built from a real machine list (traces/fs_fleet.h). */
typedef struct fs_fleet_cfg {
    int given;              /* bool: cluster.from was given */
    int format;             /* enum fs_fleet_format */
    char *path;             /* the machine list (resolved like trace paths) */
    char *gpu;              /* model for lists that record none (NULL: "unknown") */
} fs_fleet_cfg_t;

/* cluster.autoscale: the Kubernetes Cluster Autoscaler over node groups
 * (models/fs_autoscale.h, docs/models.md "Cluster autoscaling").  A node
 * group is a pool whose nodes above `min` come and go. */
typedef struct fs_nodegroup_cfg {
    char *pool;             /* the pool that is the group (unique) */
    uint32_t min;           /* nodes always provisioned (the group starts with them) */
    uint32_t max;           /* most nodes provisioned; 0: the pool's nodes */
    fs_time_t provision;    /* scale-up decided -> node Ready, us */
    fs_time_t gpu_ready;    /* node Ready -> GPUs allocatable (device plugin), us */
    double provision_failure; /* [0, 1]: a scale-up of the group fails (stock-out), its nodes
                               * never register (cluster-autoscaler) */
} fs_nodegroup_cfg_t;

/* cluster.autoscale.provisioner: who adds and removes the groups' nodes. */
enum fs_provisioner {
    FS_PROV_CLUSTER_AUTOSCALER = 0, /* scans node groups (scan_interval, scale_down_*) */
    FS_PROV_KARPENTER = 1           /* batches pending pods, launches the cheapest fitting type */
};
/* cluster.autoscale.consolidation_policy (Karpenter's disruption.consolidationPolicy). */
enum fs_consolidation {
    FS_CONSOL_WHEN_EMPTY_OR_UNDERUTILIZED = 0,  /* Karpenter v1's default */
    FS_CONSOL_WHEN_EMPTY = 1
};
/* cluster.autoscale.expander: which node group a Cluster Autoscaler scale-up grows
 * (kubernetes/autoscaler cluster-autoscaler/expander; least-waste is upstream's default
 * since 2025, random before). */
enum fs_expander {
    FS_EXPANDER_LEAST_WASTE = 0, FS_EXPANDER_RANDOM = 1, FS_EXPANDER_MOST_PODS = 2,
    FS_EXPANDER_PRIORITY = 3
};
/* Karpenter's node Ready time when a group gives no `provision` (DOMAIN.md
 * 5.1: Karpenter nodes Ready in roughly 30-40 s), us. */
#define FS_KARPENTER_PROVISION_US 35000000

typedef struct fs_autoscale_cfg {
    fs_nodegroup_cfg_t *groups; /* owned */
    size_t n_groups;
    int provisioner;        /* enum fs_provisioner */
    fs_time_t scan;         /* --scan-interval, us */
    fs_time_t unneeded;     /* --scale-down-unneeded-time, us */
    fs_time_t delay_after_add; /* --scale-down-delay-after-add, us */
    fs_time_t batch_idle;   /* Karpenter BATCH_IDLE_DURATION, us */
    fs_time_t batch_max;    /* Karpenter BATCH_MAX_DURATION, us */
    int consolidation;      /* enum fs_consolidation */
    fs_time_t consolidate_after; /* Karpenter disruption.consolidateAfter, us */
    int expander;           /* enum fs_expander (cluster-autoscaler) */
    size_t n_priorities;    /* expander priority: {group's pool: integer priority} */
    char **priority_pools;  /* owned */
    char **priority_values; /* owned, integer text */
    fs_time_t max_provision; /* --max-node-provision-time, us */
} fs_autoscale_cfg_t;

/* startup: pod start-up from bound to running (models/fs_startup.h,
 * docs/models.md "Pod start-up").  All zero: jobs compute the instant they
 * are placed (as before). */
typedef struct fs_startup_image_cfg {
    uint32_t job_class;     /* jobs of this class use this image */
    uint64_t size_mib;      /* image size, MiB */
    fs_time_t load;         /* model/weight load after the container starts, us */
} fs_startup_image_cfg_t;

typedef struct fs_startup_cfg {
    fs_time_t container;    /* container start (pod start-up, image excluded), us */
    uint64_t image_mib;     /* image of the classes not listed in images, MiB (0: none) */
    fs_time_t load;         /* their load time, us */
    fs_startup_image_cfg_t *images; /* owned */
    size_t n_images;
    double node_mibps;      /* one node's pull bandwidth, MiB/s (> 0) */
    double registry_mibps;  /* the registry's, shared by concurrent pulls (0: unlimited) */
    uint64_t disk_mib;      /* each node's image cache, LRU beyond it (0: unlimited) */
} fs_startup_cfg_t;

typedef struct fs_cluster_cfg {
    fs_pool_cfg_t *pools;   /* owned, n_pools >= 1: the pools written in the scenario,
                               then the n_from pools built from cluster.from */
    size_t n_pools;
    size_t n_from;          /* the last n_from pools come from cluster.from (not dumped) */
    fs_fleet_cfg_t from;
    fs_topology_cfg_t topology;
    fs_speed_cfg_t *speed;  /* owned */
    size_t n_speed;
    int speed_catalog;      /* bool: no speed row -> the catalog's relative speed (else 1.0) */
    fs_span_speed_cfg_t *span_speed; /* owned */
    size_t n_span_speed;
    fs_autoscale_cfg_t autoscale;
    char *outages;          /* cluster.outages: outage file (models/fs_capacity.h), or NULL */
    char *outages_origin;   /* cluster.outages_origin: the date at the run's time 0, for
                               reservation dates (traces/fs_resv.h), or NULL */
    fs_fabric_cfg_t fabric;     /* cluster.fabric (models/fs_fabric.h) */
} fs_cluster_cfg_t;

enum fs_workload_kind { FS_WORKLOAD_SYNTHETIC = 0, FS_WORKLOAD_TRACE = 1 };
enum fs_arrival_process { FS_ARRIVAL_POISSON = 0 };

/* fs_dist_cfg_t (how a distribution block was written) is declared in
 * traces/fs_synth.h, included above. */

typedef struct fs_trace_cfg {
    char *path;             /* trace file (relative paths resolved against the scenario file) */
    char *format;           /* "native" (more formats: traces/) */
    fs_trace_opts_t opts;   /* lenient, time_scale */
} fs_trace_cfg_t;

typedef struct fs_workload_cfg {
    int kind;               /* enum fs_workload_kind */
    fs_synth_cfg_t synth;   /* when kind == SYNTHETIC (its horizon is the run's) */
    int arrival_process;    /* enum fs_arrival_process (synthetic arrivals) */
    fs_dist_cfg_t duration_cfg; /* how synth.duration was written */
    fs_trace_cfg_t trace;   /* when kind == TRACE */
    char *mig_profile;      /* workload.synthetic.mig_profile (synth.mig is its code); owned */
    /* workload.tenant_scale {tenant: factor}: each named tenant's arrival rate times its
     * factor (traces/fs_tscale.h); owned */
    size_t n_tenant_scale;
    char **tenant_scale_names;
    double *tenant_scale;
} fs_workload_cfg_t;

/* Queue kinds: one row each in fs_queues.h (docs/policies.md). */
enum fs_queue_kind {
#define FS_QUEUE_ENUM(e, name, policy, order) FS_QUEUE_##e,
    FS_QUEUE_KINDS(FS_QUEUE_ENUM)
#undef FS_QUEUE_ENUM
    FS_QUEUE_COUNT
};
enum fs_backfill_kind { FS_BACKFILL_NONE = 0, FS_BACKFILL_EASY = 1, FS_BACKFILL_CONSERVATIVE = 2 };
enum fs_preempt_kind { FS_PREEMPT_AUTO = 0, FS_PREEMPT_NONE = 1, FS_PREEMPT_ORDER = 2 };
enum fs_runtime_kind { FS_RUNTIME_USER = 0, FS_RUNTIME_ORACLE = 1 };
enum fs_unknown_est { FS_UNKNOWN_EST_ORACLE = 0, FS_UNKNOWN_EST_LIMIT = 1 };
enum fs_bf_mode { FS_BF_EXACT = 0, FS_BF_SLURM = 1 };

/* Backfill parameters (Slurm SchedulerParameters bf_*; DOMAIN.md 3.4).
 * mode exact: every pass, no caps.  mode slurm: a backfill pass every
 * `interval` over at most `max_job_test` jobs, times rounded up to
 * `resolution`, reservations only within `window`. */
typedef struct fs_backfill_cfg {
    int mode;               /* enum fs_bf_mode */
    uint32_t max_job_test;  /* jobs tested per backfill pass (slurm mode) */
    fs_time_t resolution;   /* us */
    fs_time_t interval;     /* us */
    fs_time_t window;       /* us */
} fs_backfill_cfg_t;

/* Slurm priority/multifactor (DOMAIN.md 3.4).  Weights are explicit and
 * default to 0 as in current Slurm. */
typedef struct fs_slurm_cfg {
    fs_time_t max_age;      /* PriorityMaxAge, us */
    fs_time_t decay_half_life; /* PriorityDecayHalfLife, us (0: no decay) */
    fs_time_t calc_period;  /* PriorityCalcPeriod, us */
    uint32_t weight_age, weight_fairshare, weight_jobsize, weight_partition, weight_qos;
    int favor_small;        /* PriorityFavorSmall (bool) */
    char *conf;             /* scheduler.slurm.conf: a site's slurm.conf whose settings fill the
                               keys the scenario does not give (models/fs_slurmconf.h); owned */
} fs_slurm_cfg_t;

/* scheduler.wfp: Cobalt's WFP utility order (models/fs_order_wfp.c). */
typedef struct fs_wfp_cfg {
    double exponent;        /* utility = (queued / requested)^exponent x size */
    fs_time_t period;       /* utilities are recomputed this often, us */
} fs_wfp_cfg_t;

/* scheduler.limits: per-user limits (models/fs_limits.h); 0: none. */
typedef struct fs_limits_cfg {
    uint32_t max_jobs_per_user; /* Slurm MaxJobsPerUser / MaxJobsPU, Maui MAXJOB */
    uint64_t max_gpus_per_user; /* Slurm MaxTRESPerUser=gres/gpu / MaxTRESPU, Maui MAXPROC */
} fs_limits_cfg_t;

/* scheduler.preset: named settings that fill the keys a scenario does not
 * give (scenarios/fs_scenario.c applies them; docs/policies.md).
 * tiresias: queue las, thresholds 3250,7200 (three queues, the published
 * simulator's JOBS.queue_limit), checkpoint_interval 1us (a preempted job
 * keeps its work, as in the simulator), promote_knob 0 (its dlas-gpu). */
enum fs_sched_preset { FS_PRESET_NONE = 0, FS_PRESET_TIRESIAS = 1 };
#define FS_TIRESIAS_THRESHOLDS "3250,7200"
#define FS_TIRESIAS_PROMOTE_KNOB 0.0

/* Tiresias 2D-LAS (DOMAIN.md 3.6). */
typedef struct fs_tiresias_cfg {
    char *thresholds;       /* queue limits in GPU-seconds, "3600" or "3600,7200,18000" */
    double promote_knob;    /* PROMOTE_KNOB: promote when pending >= executed x knob; 0 = off */
} fs_tiresias_cfg_t;
enum fs_fifo_mode { FS_FIFO_BEST_EFFORT = 0, FS_FIFO_STRICT = 1 };
enum fs_placement_kind { FS_PLACE_PACK = 0, FS_PLACE_FIRST_FIT = 1, FS_PLACE_BEST_FIT = 2,
                         FS_PLACE_BINPACK = 3 /* = best_fit */, FS_PLACE_SPREAD = 4,
                         FS_PLACE_RANDOM = 5, FS_PLACE_TOPOLOGY = 6, FS_PLACE_FGD = 7,
                         FS_PLACE_ATC_BEST_FIT = 8, FS_PLACE_GPU_PACKING = 9,
                         FS_PLACE_FABRIC_AWARE = 10 /* cluster.fabric only */ };
enum fs_node_score { FS_SCORE_EXACT = 0, FS_SCORE_KUBE = 1, FS_SCORE_KUBE_NAME = 2 };

typedef struct fs_sched_cfg {
    int queue;              /* enum fs_queue_kind */
    char *plugin_path;      /* scheduler.plugin.path: a policy plugin (models/fs_plugin.c); NULL none */
    size_t n_plugin_opts;   /* scheduler.plugin.options: {key: value} */
    char **plugin_opt_keys, **plugin_opt_vals;
    /* a policy table (const fleetsim_policy *) given through the library
     * (fleetsim_scenario_set_policy), used as a plugin in place of
     * plugin_path; borrowed, never a scenario key; NULL none */
    const void *plugin_table;
    size_t n_tolerations;   /* scheduler.tolerations: {tenant: taints it tolerates} */
    char **toleration_tenants, **toleration_lists;
    int preset;             /* enum fs_sched_preset (applied at load) */
    int mode;               /* enum fs_fifo_mode */
    int placement;          /* enum fs_placement_kind */
    uint32_t candidates;    /* scored placements: nodes scored per free level (0: all) */
    int node_score;         /* enum fs_node_score */
    double w_gpu, w_cpu, w_mem; /* scheduler.resource_weights (best_fit, spread) */
    uint32_t pct_nodes_to_score; /* node_score kubernetes: percentageOfNodesToScore (0: adaptive) */
    double w_balanced;      /* NodeResourcesBalancedAllocation's weight (best_fit, spread; 0: off) */
    int backfill;           /* enum fs_backfill_kind */
    int preemption;         /* enum fs_preempt_kind */
    int runtime;            /* enum fs_runtime_kind: what SJF/SRTF/backfill plan with */
    int unknown_estimate;   /* enum fs_unknown_est: a job without a user estimate */
    fs_time_t default_limit; /* the time limit assumed then, us */
    fs_time_t restart_cost; /* extra work a preempted job redoes at restart, us */
    fs_time_t checkpoint_interval; /* preempted jobs keep work up to the last multiple; 0: lose the attempt */
    fs_backfill_cfg_t bf;
    fs_slurm_cfg_t slurm;
    fs_tiresias_cfg_t tiresias;
    fs_kueue_cfg_t kueue;       /* queue: kueue (models/fs_kueue.c) */
    fs_volcano_cfg_t volcano;   /* queue: volcano (models/fs_volcano.c) */
    fs_wfp_cfg_t wfp;           /* queue: wfp (models/fs_order_wfp.c) */
    fs_limits_cfg_t limits;     /* per-user limits (models/fs_limits.c) */
} fs_sched_cfg_t;

/* telemetry: what a running job does to its GPUs (docs/observability.md,
 * docs/shapes.md "GPU activity"): fractions in [0, 1] as DCGM reports them. */
typedef struct fs_activity_cfg {
    uint32_t job_class;
    double duty, sm, tensor, dram, fb;  /* GPU_UTIL/100, SM_ACTIVE, PIPE_TENSOR_ACTIVE,
                                           DRAM_ACTIVE, framebuffer used / memory */
    double mfu;             /* model FLOPs utilization while computing: program goodput */
} fs_activity_cfg_t;

typedef struct fs_telemetry_cfg {
    fs_activity_cfg_t dflt;         /* classes not listed (job_class unused) */
    fs_activity_cfg_t *activity;    /* owned: per class */
    size_t n_activity;
    double cap_exponent;            /* power caps: dynamic power ~ clock^e (models/fs_power.h) */
    double throttle_c;              /* GPU slowdown temperature, C; 0: no thermal throttling */
} fs_telemetry_cfg_t;

typedef struct fs_output_cfg {
    fs_time_t timeline_interval; /* sampling period of /timeline, us (0 = off) */
    int jobs;               /* write /jobs (bool) */
    int gpu_intervals;      /* write /gpu_intervals (bool; the source of fleetsim metrics) */
} fs_output_cfg_t;

enum fs_run_until { FS_UNTIL_DRAIN = 0, FS_UNTIL_HORIZON = 1 };

/* A value kept as written (key type "raw"): a scalar or a list of scalars,
 * with where each came from ("FILE:LINE:COL" or "--set KEY"), for code that
 * interprets it later and must report errors at the right place (sweeps).
 * Owned; all zero when not given. */
typedef struct fs_raw {
    int given;              /* 0: absent */
    int is_list;            /* written as a list [a, b] */
    size_t n;               /* items (1 for a scalar) */
    char **text;            /* n scalars as written */
    int *quoted;            /* n flags: written quoted (not a plain scalar) */
    char **where;           /* n positions of the items */
    char *at;               /* position of the value itself */
} fs_raw_t;

/* The sweep section (scenarios/fs_sweep.h expands it; a single run ignores
 * it).  Values stay as written: each point is the base scenario with
 * "KEY=VALUE" overrides, checked like any other value. */
enum fs_sweep_combine { FS_SWEEP_GRID = 0, FS_SWEEP_ZIP = 1 };
enum fs_sweep_scale { FS_SWEEP_LINEAR = 0, FS_SWEEP_LOG = 1 };

typedef struct fs_sweep_param_cfg {
    fs_raw_t key;           /* dotted path of the varied key (a scalar) */
    fs_raw_t values;        /* its values (a list), or a range: */
    int has_range;          /* a range was given (choice selector) */
    fs_raw_t from, to;      /* range ends, in the key's unit ("30/h") */
    uint32_t steps;         /* range points (>= 2; 0 = no range) */
    int scale;              /* enum fs_sweep_scale */
} fs_sweep_param_cfg_t;

typedef struct fs_sweep_cfg {
    int given;              /* a sweep section was given (choice selector) */
    int combine;            /* enum fs_sweep_combine */
    uint64_t replications;  /* runs per point (replication indices 0..n-1) */
    fs_raw_t warmup;        /* optional warm-up override for every point */
    fs_sweep_param_cfg_t *params; /* owned */
    size_t n_params;
} fs_sweep_cfg_t;

typedef struct fs_config {
    char *name;             /* scenario name */
    uint64_t seed;          /* master seed */
    uint64_t replication;   /* replication index (sweeps); 0 for a single run */
    fs_time_t horizon;      /* arrivals are generated in [0, horizon), us */
    int horizon_auto;       /* horizon not given with a trace: the trace's last
                               submission (horizon holds FS_TIME_MAX_INPUT until
                               the model has read the stream; fs_model_horizon) */
    int until;              /* enum fs_run_until: drain the queue, or stop at horizon */
    fs_time_t drain_limit;  /* until: drain: fail when jobs are still active this
                               long after the last arrival, us (0: no cap) */
    fs_time_t warmup;       /* jobs submitted before this are left out of statistics */
    fs_cluster_cfg_t cluster;
    fs_workload_cfg_t workload;
    fs_sched_cfg_t scheduler;
    fs_failure_cfg_t failures;  /* models/fs_failure.h */
    fs_recovery_cfg_t recovery; /* fs_model.c */
    fs_startup_cfg_t startup;   /* models/fs_startup.h */
    fs_telemetry_cfg_t telemetry; /* GPU activity of running jobs (/gpu_intervals) */
    fs_services_cfg_t services; /* inference services (models/fs_service.h) */
    fs_cost_cfg_t cost;         /* models/fs_cost.h */
    fs_plan_cfg_t plan;         /* analysis/fs_plan.h (fleetsim plan) */
    fs_output_cfg_t output;
    fs_sweep_cfg_t sweep;   /* sweeps only (fleetsim sweep); ignored by a single run */
    char *source_path;      /* file the scenario came from ("<builtin>" for the default) */
    char *source_text;      /* the YAML text as given */
} fs_config_t;

/* fs_config_init and fs_config_release fill and free a config from the
 * scenario key table: scenarios/fs_defaults.h. */

#endif
