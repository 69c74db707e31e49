#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#endif
#include "fs_keys.h"
#include "fs_subkeys.h"
#include "fs_units.h"
#include "../models/fs_catalog.h"
#include "../models/fs_config.h"
#include "../models/fs_llmperf.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_dist.h"
#include "../traces/fs_trace.h"
#include "../traces/fs_fleet.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Key tables of sub-blocks, defined at the end of the file, used by the rows above it. */
static const fs_keytab_t fs_keys_count_dist;   /* the distribution rows, plain numbers (tokens) */
static const fs_keytab_t fs_keys_sweep_param;  /* one item of sweep.params */

/* ---- allowed names that live in other tables ---------------------------- */

static const char *gpu_model_at(size_t i)
{
    return i < fs_catalog_count() ? fs_catalog_get(i)->name : NULL;
}

static const char *trace_format_at(size_t i)
{
    size_t n = 0;
    const fs_trace_format_t *f = fs_trace_formats(&n);
    return i < n ? f[i].name : NULL;
}

static const char *const llm_dtype_names[] = {[FS_LLM_BF16] = "bf16", [FS_LLM_FP8] = "fp8", NULL};

static const char *const energy_names[] = {[FS_ENERGY_FLAT] = "flat",
                                           [FS_ENERGY_POWER] = "power", NULL};
static const char *const until_names[] = {
    [FS_UNTIL_DRAIN] = "drain", [FS_UNTIL_HORIZON] = "horizon", NULL};
static const char *const mig_drain_names[] = {
    [FS_MIG_DRAIN_NONE] = "none", [FS_MIG_DRAIN_WAIT] = "wait", [FS_MIG_DRAIN_EVICT] = "evict", NULL};
static const char *const mig_layout_names[] = {
    [FS_MIG_LAYOUT_ALL] = "all", [FS_MIG_LAYOUT_MIXED] = "mixed", NULL};
static const char *const cpu_only_names[] = {"skip", "error", "place", NULL};
static const char *const cancelled_names[] = {"default", "skip", "withdraw", "run", NULL};
static const char *const process_names[] = {[FS_ARRIVAL_POISSON] = "poisson", NULL};
static const char *const queue_names[FS_QUEUE_COUNT + 1] = {
#define FS_QUEUE_NAME(e, name, policy, order) [FS_QUEUE_##e] = name,
    FS_QUEUE_KINDS(FS_QUEUE_NAME)
#undef FS_QUEUE_NAME
    NULL};
static const char *const preset_names[] = {
    [FS_PRESET_NONE] = "none", [FS_PRESET_TIRESIAS] = "tiresias", NULL};
static const char *const backfill_names[] = {
    [FS_BACKFILL_NONE] = "none", [FS_BACKFILL_EASY] = "easy",
    [FS_BACKFILL_CONSERVATIVE] = "conservative", NULL};
static const char *const preempt_names[] = {
    [FS_PREEMPT_AUTO] = "auto", [FS_PREEMPT_NONE] = "none", [FS_PREEMPT_ORDER] = "order", NULL};
static const char *const runtime_names[] = {
    [FS_RUNTIME_USER] = "user", [FS_RUNTIME_ORACLE] = "oracle", NULL};
static const char *const unknown_est_names[] = {
    [FS_UNKNOWN_EST_ORACLE] = "oracle", [FS_UNKNOWN_EST_LIMIT] = "limit", NULL};
static const char *const bf_mode_names[] = {[FS_BF_EXACT] = "exact", [FS_BF_SLURM] = "slurm", NULL};
static const char *const mode_names[] = {
    [FS_FIFO_BEST_EFFORT] = "best_effort", [FS_FIFO_STRICT] = "strict", NULL};
static const char *const combine_names[] = {
    [FS_SWEEP_GRID] = "grid", [FS_SWEEP_ZIP] = "zip", NULL};
static const char *const plan_search_names[] = {
    [FS_PLAN_BISECT] = "bisect", [FS_PLAN_SCAN] = "scan", NULL};
static const char *const scale_names[] = {
    [FS_SWEEP_LINEAR] = "linear", [FS_SWEEP_LOG] = "log", NULL};
static const char *const placement_names[] = {
    [FS_PLACE_PACK] = "pack", [FS_PLACE_FIRST_FIT] = "first_fit", [FS_PLACE_BEST_FIT] = "best_fit",
    [FS_PLACE_BINPACK] = "binpack", [FS_PLACE_SPREAD] = "spread", [FS_PLACE_RANDOM] = "random",
    [FS_PLACE_TOPOLOGY] = "topology", [FS_PLACE_FGD] = "fgd",
    [FS_PLACE_ATC_BEST_FIT] = "atc_best_fit", [FS_PLACE_GPU_PACKING] = "gpu_packing",
    [FS_PLACE_FABRIC_AWARE] = "fabric_aware", NULL};
static const char *const node_score_names[] = {[FS_SCORE_EXACT] = "exact",
                                               [FS_SCORE_KUBE] = "kubernetes",
                                               [FS_SCORE_KUBE_NAME] = "kubernetes_name", NULL};
/* Index = enum fs_dist_kind (a test checks them against fs_dist_kind_name). */
static const char *const dist_names[] = {
    [FS_DIST_NONE] = "",           [FS_DIST_CONSTANT] = "constant",
    [FS_DIST_EXPONENTIAL] = "exponential", [FS_DIST_LOGNORMAL] = "lognormal",
    [FS_DIST_WEIBULL] = "weibull", [FS_DIST_GAMMA] = "gamma",
    [FS_DIST_UNIFORM] = "uniform", [FS_DIST_EMPIRICAL] = "empirical", NULL};

/* ---- the tables ---------------------------------------------------------- */

#define CF(f) offsetof(fs_config_t, f)
#define SY(f) offsetof(fs_config_t, workload.synth.f)

/* One item of workload.synthetic.duration_by_size (defined below). */
static const fs_keytab_t size_class_keys;
/* One item of cluster.speed (defined below). */
static const fs_keytab_t speed_keys;
/* One item of cluster.span_speed (defined below). */
static const fs_keytab_t span_speed_keys;
/* One item of cluster.fabric.traffic (defined below). */
static const fs_keytab_t fabric_traffic_keys;
static const fs_keytab_t fabric_fail_keys;    /* items of cluster.fabric.failures */
static const char *const fabric_kind_names[] = {
    [FS_FABRIC_OFF] = "off", [FS_FABRIC_IB_NDR] = "ib_ndr", [FS_FABRIC_IB_XDR] = "ib_xdr",
    [FS_FABRIC_ROCE_400] = "roce_400g", [FS_FABRIC_ROCE_800] = "roce_800g",
    [FS_FABRIC_NVL72] = "nvl72", NULL};
static const char *const fabric_rail_names[] = {
    [FS_FAB_RAIL_AUTO] = "kind", [FS_FAB_RAIL_YES] = "true", [FS_FAB_RAIL_NO] = "false", NULL};
static const fs_keytab_t nodegroup_keys;
static const fs_keytab_t startup_image_keys;
static const fs_keytab_t activity_keys;
static const fs_keytab_t service_keys;
static const char *const svc_mode_names[] = {
    [FS_SVC_REQUEST] = "request", [FS_SVC_FLUID] = "fluid", NULL};
static const char *const svc_sched_names[] = {
    [FS_SVC_V1] = "v1", [FS_SVC_V0] = "v0", [FS_SVC_SLOTS] = "slots", NULL};
static const char *const svc_router_names[] = {
    [FS_ROUTE_LEAST] = "least_loaded", [FS_ROUTE_CENTRAL] = "central",
    [FS_ROUTE_RR] = "round_robin", [FS_ROUTE_PREFIX] = "prefix_affinity", NULL};
static const char *const svc_pop_names[] = {[FS_POP_ZIPF] = "zipf", NULL};
static const char *const svc_process_names[] = {
    [FS_SVC_POISSON] = "poisson", [FS_SVC_GAMMA] = "gamma", [FS_SVC_TRACE] = "trace", NULL};
static const char *const provisioner_names[] = {
    [FS_PROV_CLUSTER_AUTOSCALER] = "cluster-autoscaler", [FS_PROV_KARPENTER] = "karpenter", NULL};
static const char *const expander_names[] = {
    [FS_EXPANDER_LEAST_WASTE] = "least-waste", [FS_EXPANDER_RANDOM] = "random",
    [FS_EXPANDER_MOST_PODS] = "most-pods", [FS_EXPANDER_PRIORITY] = "priority", NULL};
static const char *const consolidation_names[] = {
    [FS_CONSOL_WHEN_EMPTY_OR_UNDERUTILIZED] = "when_empty_or_underutilized",
    [FS_CONSOL_WHEN_EMPTY] = "when_empty", NULL};
static const char *const hpa_metric_names[] = {
    [FS_HPA_NONE] = "none", [FS_HPA_CONCURRENCY] = "concurrency", [FS_HPA_QUEUE] = "queue",
    [FS_HPA_UTILIZATION] = "utilization", NULL};
static const char *const ckpt_names[] = {
    [FS_CKPT_NONE] = "none", [FS_CKPT_FIXED] = "fixed", [FS_CKPT_YOUNG] = "young",
    [FS_CKPT_DALY] = "daly", NULL};
static const char *const retry_names[] = {
    [FS_RETRY_REQUEUE] = "requeue", [FS_RETRY_BACKOFF] = "backoff", [FS_RETRY_NONE] = "none", NULL};
/* Items of plan.slo, plan.choices, plan.choices[].set (defined below). */
static const fs_keytab_t plan_slo_keys, plan_choice_keys, plan_set_keys;
/* One item of scheduler.volcano.queues (defined below). */
static const fs_keytab_t volcano_queue_keys;
/* Items of failures.components, failures.causes, failures.planned (defined below). */
static const fs_keytab_t fail_component_keys, fail_cause_keys, fail_planned_keys;
static const char *const fail_kind_names[] = {
    [FS_FAIL_GPU] = "gpu", [FS_FAIL_NODE] = "node", [FS_FAIL_LINK] = "link",
    [FS_FAIL_DOMAIN] = "domain", [FS_FAIL_RACK] = "rack", [FS_FAIL_POWER] = "power",
    [FS_FAIL_LEAF] = "leaf", [FS_FAIL_SPINE] = "spine", NULL};
static const char *const fail_preset_names[] = {
    [FS_FAIL_PRESET_NONE] = "none", [FS_FAIL_PRESET_LLAMA3] = "llama3-h100",
    [FS_FAIL_PRESET_META_RSC] = "meta-rsc", [FS_FAIL_PRESET_BLOOM] = "bloom",
    [FS_FAIL_PRESET_OPT] = "opt", NULL};
static const char *const repair_path_names[] = {
    [FS_REPAIR_SOFT] = "soft", [FS_REPAIR_HARD] = "hard", [FS_REPAIR_NONE] = "none", NULL};
static const char *const cause_repair_names[] = {
    [FS_REPAIR_SOFT] = "soft", [FS_REPAIR_HARD] = "hard", [FS_REPAIR_NONE] = "none",
    [FS_REPAIR_REMOVED] = "", [FS_REPAIR_PLANNED] = "", [FS_REPAIR_XID] = "xid", NULL};
static const char *const lemon_action_names[] = {
    [FS_LEMON_REMOVE] = "remove", [FS_LEMON_HARD] = "hard", NULL};
static const char *const planned_how_names[] = {
    [FS_PLANNED_FAIL] = "fail", [FS_PLANNED_DRAIN] = "drain", NULL};

static const fs_key_t config_rows[] = {
    {.path = "name", .type = FS_KT_STRING, .off = CF(name), .def = "unnamed",
     .doc = "Name of the scenario (written to the results)."},
    {.path = "seed", .type = FS_KT_UINT, .off = CF(seed), .size = sizeof(uint64_t), .def = "1",
     .doc = "Master seed: every random stream is keyed by (seed, replication, purpose, entity)."},
    {.path = "replication", .type = FS_KT_UINT, .off = CF(replication), .size = sizeof(uint64_t),
     .def = "0", .doc = "Replication index (sweeps set it; 0 for a single run)."},
    {.path = "horizon", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN, .off = CF(horizon),
     .min = 0, .def = "7d", .unit = "s",
     .doc = "Length of the arrival window: synthetic jobs arrive in [0, horizon); a trace is "
            "replayed up to it.  Not given with a trace: the trace's last submission (the whole "
            "trace is replayed)."},
    {.path = "until", .type = FS_KT_ENUM, .off = CF(until), .names = until_names, .def = "drain",
     .doc = "drain: run until every job has finished (the run ends with its last job); horizon: "
            "stop at the horizon."},
    {.path = "drain_limit", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = CF(drain_limit),
     .min = 0, .def = "365d", .unit = "s",
     .doc = "until: drain: the run fails (exit 1, naming the jobs; the results so far written with "
            "`complete = 0` and `unfinished_jobs`) when jobs are still queued or running this "
            "long after the last arrival (0s: no cap)."},
    {.path = "warmup", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = CF(warmup), .min = 0,
     .def = "0s", .unit = "s",
     .doc = "Jobs submitted before this time are left out of the statistics (must be < horizon)."},

    {.path = "cluster.pools", .type = FS_KT_LIST, .flags = FS_KF_MIN,
     .off = CF(cluster.pools), .off2 = CF(cluster.n_pools), .min = 1, .sub = &fs_keys_pool,
     .doc = "The GPU pools (at least one, here or from cluster.from); names unique; at most 2^31 "
            "GPUs in all."},
    {.path = "cluster.from", .type = FS_KT_CHOICE, .flags = FS_KF_OPTIONAL,
     .off = CF(cluster.from.given), .choice = 1,
     .doc = "Pools built from a real machine list, added after cluster.pools: nodes grouped by "
            "(GPU model, GPUs per node) into pools named MODELxGPUS (docs/traces.md, Fleets)."},
    {.path = "cluster.from.format", .type = FS_KT_ENUM, .flags = FS_KF_REQUIRED,
     .off = CF(cluster.from.format), .names = fs_fleet_format_names,
     .doc = "openb (node list), pai (machine spec), philly (machine list), tiresias (cluster spec)."},
    {.path = "cluster.from.path", .type = FS_KT_PATH, .flags = FS_KF_REQUIRED,
     .off = CF(cluster.from.path),
     .doc = "The machine list (plain or gzip); relative to the scenario file."},
    {.path = "cluster.from.gpu", .type = FS_KT_STRING, .off = CF(cluster.from.gpu),
     .doc = "GPU model of lists that name none (philly, tiresias); else 'unknown' (speed 1.0)."},
    {.path = "cluster.outages", .type = FS_KT_PATH, .off = CF(cluster.outages),
     .doc = "Capacity over time: a CSV of outages (start,end,nodes[,cause]; seconds of the run; "
            "nodes all, a pool or I-J) drained from start to end; relative to the scenario file "
            "(docs/traces.md, Outage files)."},
    {.path = "cluster.outages_origin", .type = FS_KT_STRING, .off = CF(cluster.outages_origin),
     .doc = "The date at the run's time 0 (YYYY-MM-DDTHH:MM:SS, UTC), when cluster.outages is "
            "Slurm's scontrol show reservation output (dates)."},
    {.path = "cluster.topology.nvlink_domain", .type = FS_KT_STRING,
     .off = CF(cluster.topology.nvlink_domain), .def = "node",
     .doc = "NVLink domain: node, or its size in GPUs (a multiple of gpus_per_node, e.g. 72 for "
            "NVL72 racks of 4-GPU trays)."},
    {.path = "cluster.topology.nodes_per_rack", .type = FS_KT_UINT,
     .off = CF(cluster.topology.nodes_per_rack), .size = sizeof(uint32_t), .def = "0",
     .doc = "Nodes per rack (whole NVLink domains); 0: a rack is one NVLink domain."},
    {.path = "cluster.topology.racks_per_leaf", .type = FS_KT_UINT,
     .off = CF(cluster.topology.racks_per_leaf), .size = sizeof(uint32_t), .def = "0",
     .doc = "Racks per leaf switch; 0: one leaf switch per pool."},
    {.path = "cluster.topology.leaves_per_spine", .type = FS_KT_UINT,
     .off = CF(cluster.topology.leaves_per_spine), .size = sizeof(uint32_t), .def = "0",
     .doc = "Leaf switches per spine; 0: one spine per pool.  Units are numbered per pool, "
            "in node order (docs/models.md)."},
    {.path = "cluster.speed", .type = FS_KT_LIST, .off = CF(cluster.speed),
     .off2 = CF(cluster.n_speed), .sub = &speed_keys,
     .doc = "Speed factors: jobs of a class run at `factor` on a GPU model (run time = trace "
            "run time / factor)."},
    {.path = "cluster.speed_catalog", .type = FS_KT_BOOL, .off = CF(cluster.speed_catalog),
     .def = "false",
     .doc = "Without a cluster.speed row: true = the catalog's relative speed (H100 = 1), "
            "false = 1.0."},
    {.path = "cluster.span_speed", .type = FS_KT_LIST, .off = CF(cluster.span_speed),
     .off2 = CF(cluster.n_span_speed), .sub = &span_speed_keys,
     .doc = "Placement-dependent speed: jobs of a class whose placement spans more than one "
            "node, NVLink domain, rack, leaf or spine run at the smallest factor of the levels "
            "spanned (multiplies cluster.speed and the slowest node's speed; docs/recovery.md)."},
    {.path = "cluster.fabric.kind", .type = FS_KT_ENUM, .off = CF(cluster.fabric.kind),
     .names = fabric_kind_names, .def = "off",
     .doc = "The training network as a shared resource (docs/models.md \"Fabric\"): off, or a "
            "two-tier Clos per pool whose defaults this kind fixes: ib_ndr (400 Gb/s, 32 nodes "
            "per rail-optimized leaf), ib_xdr (800 Gb/s, 72), roce_400g (400 Gb/s, 2 nodes per "
            "ToR, not rail-optimized), roce_800g (800 Gb/s, 64), nvl72 (400 Gb/s, 18 nodes)."},
    {.path = "cluster.fabric.nodes_per_leaf", .type = FS_KT_UINT,
     .off = CF(cluster.fabric.nodes_per_leaf), .size = sizeof(uint32_t), .def = "0",
     .doc = "Nodes of a leaf group (whole NVLink domains); 0: the kind's."},
    {.path = "cluster.fabric.nics_per_node", .type = FS_KT_UINT,
     .off = CF(cluster.fabric.nics_per_node), .size = sizeof(uint32_t), .def = "0",
     .doc = "NICs per node; 0: one per GPU."},
    {.path = "cluster.fabric.nic_gbps", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(cluster.fabric.nic_gbps), .min = 0, .def = "0",
     .doc = "One NIC's (and switch port's) rate, Gb/s; 0: the kind's."},
    {.path = "cluster.fabric.rail_optimized", .type = FS_KT_ENUM,
     .off = CF(cluster.fabric.rail_optimized), .names = fabric_rail_names, .def = "kind",
     .doc = "true: NIC k of every node of a group on the group's leaf k (a leaf per rail); "
            "false: all of a node's NICs on one leaf; kind: the kind's."},
    {.path = "cluster.fabric.oversubscription", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(cluster.fabric.oversubscription), .min = 1, .def = "1",
     .doc = "Leaf downlink / uplink capacity (>= 1); the uplink ports must come out whole."},
    {.path = "cluster.fabric.spines", .type = FS_KT_UINT, .off = CF(cluster.fabric.spines),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "Spines; every leaf has the same number of links to each (0: one link to each of "
            "as many spines as a leaf has uplink ports)."},
    {.path = "cluster.fabric.nvlink_gbs", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(cluster.fabric.nvlink_gbs), .min = 0, .def = "0",
     .doc = "NVLink bandwidth per GPU and direction, GB/s; 0: the kind's (450 Hopper, 900 "
            "Blackwell)."},
    {.path = "cluster.fabric.alpha_us", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(cluster.fabric.alpha_us), .min = 0, .def = "14",
     .doc = "Latency of one ring step over the network, us (NCCL's network ring latency, "
            "Simple protocol: src/graph/tuning.cc hwLat)."},
    {.path = "cluster.fabric.efficiency", .type = FS_KT_DOUBLE,
     .flags = FS_KF_MIN_OPEN | FS_KF_MAX, .off = CF(cluster.fabric.efficiency), .min = 0,
     .max = 1, .def = "0.83",
     .doc = "Share of the NIC rate NCCL's bandwidth-bound collectives reach (default: nccl-tests "
            "all_reduce_perf on 4 nodes of 8 H100 with 8 x 400G NDR, 330.9 GB/s busbw against "
            "the 400 GB/s bound; docs/validation.md)."},
    {.path = "cluster.fabric.traffic", .type = FS_KT_LIST, .off = CF(cluster.fabric.traffic),
     .off2 = CF(cluster.fabric.n_traffic), .sub = &fabric_traffic_keys,
     .doc = "Traffic per job class: a gradient all-reduce every iteration.  Classes without a "
            "row do not communicate."},
    {.path = "cluster.fabric.failures", .type = FS_KT_LIST, .off = CF(cluster.fabric.failures),
     .off2 = CF(cluster.fabric.n_failures), .sub = &fabric_fail_keys,
     .doc = "Failures of the fabric's links and switches, one process per item (docs/failures.md "
            "\"Fabric links and switches\"): the jobs whose rings cross them slow down."},
    {.path = "cluster.autoscale.node_groups", .type = FS_KT_LIST,
     .off = CF(cluster.autoscale.groups), .off2 = CF(cluster.autoscale.n_groups),
     .sub = &nodegroup_keys,
     .doc = "Cluster Autoscaler node groups: pools whose nodes above min are provisioned when "
            "pending jobs cannot fit and removed when empty (docs/models.md)."},
    {.path = "cluster.autoscale.provisioner", .type = FS_KT_ENUM,
     .off = CF(cluster.autoscale.provisioner), .names = provisioner_names,
     .def = "cluster-autoscaler",
     .doc = "Who adds and removes the node groups' nodes: the Cluster Autoscaler (scans, "
            "binpacking per group), or Karpenter (pending pods batched, the cheapest fitting "
            "group launched per node, empty nodes consolidated; docs/models.md)."},
    {.path = "cluster.autoscale.scan_interval", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(cluster.autoscale.scan), .min = 0, .def = "10s", .unit = "s",
     .doc = "How often the autoscaler looks at pending jobs and empty nodes (Cluster "
            "Autoscaler --scan-interval, 10 s)."},
    {.path = "cluster.autoscale.scale_down_unneeded", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(cluster.autoscale.unneeded), .min = 0, .def = "10m", .unit = "s",
     .doc = "An empty node above min is removed after this long (--scale-down-unneeded-time, "
            "10 min)."},
    {.path = "cluster.autoscale.scale_down_delay_after_add", .type = FS_KT_DURATION,
     .flags = FS_KF_MIN, .off = CF(cluster.autoscale.delay_after_add), .min = 0, .def = "10m",
     .unit = "s",
     .doc = "No node is removed this long after a scale-up (--scale-down-delay-after-add, "
            "10 min)."},
    {.path = "cluster.autoscale.batch_idle_duration", .type = FS_KT_DURATION,
     .flags = FS_KF_MIN_OPEN, .off = CF(cluster.autoscale.batch_idle), .min = 0, .def = "1s",
     .unit = "s",
     .doc = "Karpenter: a batch of pending pods closes this long after its last pod "
            "(BATCH_IDLE_DURATION, 1 s)."},
    {.path = "cluster.autoscale.batch_max_duration", .type = FS_KT_DURATION,
     .flags = FS_KF_MIN_OPEN, .off = CF(cluster.autoscale.batch_max), .min = 0, .def = "10s",
     .unit = "s",
     .doc = "Karpenter: ... and at most this long after its first (BATCH_MAX_DURATION, 10 s)."},
    {.path = "cluster.autoscale.consolidation_policy", .type = FS_KT_ENUM,
     .off = CF(cluster.autoscale.consolidation), .names = consolidation_names,
     .def = "when_empty_or_underutilized",
     .doc = "Karpenter: which nodes consolidation removes (disruption.consolidationPolicy, "
            "v1 default WhenEmptyOrUnderutilized). Jobs are never moved (training pods are "
            "do-not-disrupt), so both remove empty nodes only (docs/models.md)."},
    {.path = "cluster.autoscale.consolidate_after", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(cluster.autoscale.consolidate_after), .min = 0, .def = "0s", .unit = "s",
     .doc = "Karpenter: a node may be consolidated once it has been empty this long "
            "(disruption.consolidateAfter, v1 default 0s)."},
    {.path = "cluster.autoscale.expander", .type = FS_KT_ENUM, .off = CF(cluster.autoscale.expander),
     .names = expander_names, .def = "least-waste",
     .doc = "Cluster Autoscaler: the node group a scale-up grows when several would help "
            "(--expander): least-waste (fewest idle GPUs after it, upstream's default since "
            "2025), random (the default before), most-pods, priority "
            "(cluster.autoscale.priorities); ties at random (docs/models.md)."},
    {.path = "cluster.autoscale.priorities", .type = FS_KT_NAMES,
     .off = CF(cluster.autoscale.n_priorities), .off2 = CF(cluster.autoscale.priority_pools),
     .off3 = CF(cluster.autoscale.priority_values),
     .doc = "Expander priority: {node group's pool: integer}; the highest wins, groups not "
            "listed only when no listed group helps (the priority expander's ConfigMap, by "
            "group name)."},
    {.path = "cluster.autoscale.max_node_provision_time", .type = FS_KT_DURATION,
     .flags = FS_KF_MIN_OPEN, .off = CF(cluster.autoscale.max_provision), .min = 0, .def = "15m",
     .unit = "s",
     .doc = "Cluster Autoscaler: nodes of a scale-up not Ready this long after it are abandoned "
            "and their group backed off (5 min, doubling to 30 min), so that the expander tries "
            "another group (--max-node-provision-time, 15 min)."},

    {.path = "workload.synthetic", .type = FS_KT_CHOICE, .off = CF(workload.kind),
     .choice = FS_WORKLOAD_SYNTHETIC,
     .doc = "A synthetic workload (give exactly one of workload.synthetic and workload.trace)."},
    {.path = "workload.synthetic.arrivals.process", .type = FS_KT_ENUM,
     .off = CF(workload.arrival_process), .names = process_names, .def = "poisson",
     .doc = "Arrival process."},
    {.path = "workload.synthetic.arrivals.rate", .type = FS_KT_RATE,
     .flags = FS_KF_REQUIRED | FS_KF_MIN_OPEN | FS_KF_MAX, .off = SY(rate), .min = 0,
     .max = 1e6, .unit = "1/s",
     .doc = "Mean arrival rate (jobs per unit of time, e.g. 40/h); at most one per "
            "microsecond (1000000/s), the clock's resolution."},
    {.path = "workload.synthetic.arrivals.profile.hourly", .type = FS_KT_SHARES,
     .off = SY(n_hourly), .off2 = SY(hourly_names), .off3 = SY(hourly),
     .doc = "Share of arrivals in each hour of the day {0..23: share} (hour 0 starts at the run's "
            "origin; absent hours get none; empty: flat). The rate in hour h is rate x 24 x share."},
    {.path = "workload.synthetic.arrivals.profile.weekly", .type = FS_KT_SHARES,
     .off = SY(n_weekly), .off2 = SY(weekly_names), .off3 = SY(weekly),
     .doc = "Share of arrivals on each day of the week {0..6: share} (day 0 is the origin's day; "
            "empty: flat). Multiplies the hourly profile: rate x 24 x hourly x 7 x weekly."},
    {.path = "workload.synthetic.scale", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN,
     .off = SY(scale), .min = 0, .def = "1",
     .doc = "Multiplies the arrival rate (load scaling; sizes and run times unchanged)."},
    {.path = "workload.synthetic.growth.rate", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN,
     .off = SY(growth), .min = -1, .def = "0",
     .doc = "Demand growth per growth.period, compounding: the arrival rate at time t is multiplied "
            "by (1 + rate)^(t / period); 0.05 with period 30d is +5% a month."},
    {.path = "workload.synthetic.growth.period", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = SY(growth_period), .min = 0, .def = "30d", .unit = "s",
     .doc = "The period of growth.rate."},
    {.path = "workload.synthetic.max_jobs", .type = FS_KT_UINT, .off = SY(max_jobs),
     .size = sizeof(uint64_t), .def = "0",
     .doc = "Stop generating after this many jobs (0: no limit; the horizon still applies)."},
    {.path = "workload.synthetic.gpus", .type = FS_KT_MIX, .flags = FS_KF_REQUIRED | FS_KF_MIN | FS_KF_MAX,
     .off = SY(n_sizes), .off2 = SY(sizes), .off3 = SY(size_probs), .min = 1, .max = 2147483648.0,
     .doc = "GPU-count mix {GPUs: probability}; probabilities sum to 1; no size larger than the "
            "largest pool."},
    {.path = "workload.synthetic.duration", .type = FS_KT_DIST, .flags = FS_KF_REQUIRED,
     .off = SY(duration), .off2 = CF(workload.duration_cfg), .sub = &fs_keys_dist, .unit = "s",
     .doc = "Run-time distribution at speed 1.0 (a distribution block, see below)."},
    {.path = "workload.synthetic.duration_by_size", .type = FS_KT_LIST, .off = SY(classes),
     .off2 = SY(n_classes), .sub = &size_class_keys,
     .doc = "Run-time distributions by GPU count: jobs whose size is in [gpus_min, gpus_max] draw "
            "from that item's duration (ranges may not overlap; other sizes use duration)."},
    {.path = "workload.synthetic.tenants", .type = FS_KT_SHARES, .off = SY(n_tenants),
     .off2 = SY(tenant_names), .off3 = SY(tenant_shares),
     .doc = "Tenants {name: share}; shares sum to 1 (none: jobs have no tenant)."},
    {.path = "workload.synthetic.mig_profile", .type = FS_KT_STRING, .off = CF(workload.mig_profile),
     .doc = "MIG profile every job asks (`1g.10gb`; docs/mig.md): a job is then one pod taking "
            "its drawn GPU count of instances of the profile on one node, only in pools whose "
            "`mig` layout has it, and its gpu_milli is the profile's compute share."},
    {.path = "workload.synthetic.estimate_factor", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = SY(estimate_factor), .min = 0, .def = "0",
     .doc = "Run-time estimate = run time x factor (0: jobs carry no estimate)."},

    {.path = "workload.trace", .type = FS_KT_CHOICE, .off = CF(workload.kind),
     .choice = FS_WORKLOAD_TRACE,
     .doc = "Replay a trace (give exactly one of workload.synthetic and workload.trace)."},
    {.path = "workload.trace.path", .type = FS_KT_PATH, .flags = FS_KF_REQUIRED,
     .off = CF(workload.trace.path),
     .doc = "Trace file; a relative path is relative to the scenario file's directory."},
    {.path = "workload.trace.format", .type = FS_KT_NAME, .off = CF(workload.trace.format),
     .name_at = trace_format_at, .def = "native", .doc = "Trace format (traces/fs_trace.c)."},
    {.path = "workload.trace.lenient", .type = FS_KT_BOOL, .off = CF(workload.trace.opts.lenient),
     .def = "false", .doc = "Skip (and count) bad rows instead of failing."},
    {.path = "workload.trace.time_scale", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN,
     .off = CF(workload.trace.opts.time_scale), .min = 0, .def = "1",
     .doc = "Multiply the trace's run times by this."},
    {.path = "workload.trace.load_scale", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN,
     .off = CF(workload.trace.opts.load_scale), .min = 0, .def = "1",
     .doc = "Arrival compression: submit times are divided by this (2: the same jobs arrive "
            "twice as fast; run times unchanged)."},
    {.path = "workload.trace.teams", .type = FS_KT_PATH, .off = CF(workload.trace.opts.teams),
     .doc = "CSV with the columns user and team: each listed trace user (the tenant column as "
            "read) becomes its team's tenant; users not listed keep their name (docs/traces.md)."},
    {.path = "workload.trace.team_map", .type = FS_KT_NAMES,
     .off = CF(workload.trace.opts.n_team_map), .off2 = CF(workload.trace.opts.team_users),
     .off3 = CF(workload.trace.opts.team_of),
     .doc = "The team map inline, {user: team, ...}: as workload.trace.teams, and with it (a user "
            "both list must map to the same team)."},
    {.path = "workload.trace.sort_window", .type = FS_KT_UINT, .flags = FS_KF_MAX,
     .off = CF(workload.trace.opts.sort_window), .size = sizeof(uint32_t), .max = 16777216,
     .def = "65536",
     .doc = "Rows out of submission order are re-sorted within this many rows (with a note on "
            "stderr); a row earlier than that is an error (0: refuse every unsorted row). "
            "Not the native format, which never sorts."},
    {.path = "workload.trace.keep_origin", .type = FS_KT_BOOL,
     .off = CF(workload.trace.opts.keep_origin), .def = "false",
     .doc = "Keep the trace's own time origin (else times are shifted so that the first "
            "submission is at 0). Not the native format."},
    {.path = "workload.trace.procs_per_gpu", .type = FS_KT_UINT, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(workload.trace.opts.procs_per_gpu), .size = sizeof(uint32_t), .min = 1,
     .max = 1048576, .def = "1",
     .doc = "swf: processors per GPU (a job's GPUs = ceil(processors / this))."},
    {.path = "workload.trace.cpu_only", .type = FS_KT_ENUM, .off = CF(workload.trace.opts.cpu_only),
     .names = cpu_only_names, .def = "skip",
     .doc = "Rows without GPUs (openb CPU-only pods): skip (counted and reported), error, or "
            "place (openb: CPU-only pods that hold their CPU and memory on a node, as "
            "Kubernetes places them; docs/models.md, Pods)."},
    {.path = "workload.trace.cancelled", .type = FS_KT_ENUM,
     .off = CF(workload.trace.opts.cancelled), .names = cancelled_names, .def = "default",
     .doc = "Jobs the trace records as cancelled before they started (swf status 5 without a "
            "run time, sacct CANCELLED with Start Unknown, openb pods deleted while Pending): "
            "default (as each format always read them: openb runs them, swf and sacct skip "
            "them), skip (counted), withdraw (they wait until their recorded cancel time, then "
            "leave the queue without running: /jobs state withdrawn), or run (openb only)."},
    {.path = "workload.trace.default_duration", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(workload.trace.opts.default_duration), .min = 0, .def = "0s", .unit = "s",
     .doc = "Run time of rows that record none (openb multigpu pod lists have no times; all "
            "pods are then submitted at 0); 0: such a trace is an error."},
    {.path = "workload.tenant_scale", .type = FS_KT_SHARES, .flags = FS_KF_FACTORS,
     .off = CF(workload.n_tenant_scale), .off2 = CF(workload.tenant_scale_names),
     .off3 = CF(workload.tenant_scale),
     .doc = "Per-tenant load {tenant: factor}: each named tenant's arrival rate times its factor, "
            "the others unchanged (synthetic: its Poisson stream faster; trace: k-1 shifted "
            "copies of each of its jobs, a fraction by thinning; docs/traces.md)."},

    {.path = "scheduler.queue", .type = FS_KT_ENUM, .off = CF(scheduler.queue),
     .names = queue_names, .def = "fifo", .doc = "Queue discipline."},
    {.path = "scheduler.plugin.path", .type = FS_KT_PATH, .off = CF(scheduler.plugin_path),
     .doc = "A policy plugin: a shared object exporting fleetsim_policy_entry (docs/library.md); "
            "it replaces scheduler.queue's policy (placement stays scheduler.placement)."},
    {.path = "scheduler.plugin.options", .type = FS_KT_NAMES, .off = CF(scheduler.n_plugin_opts),
     .off2 = CF(scheduler.plugin_opt_keys), .off3 = CF(scheduler.plugin_opt_vals),
     .doc = "Options handed to the plugin's create, {key: value}."},
    {.path = "scheduler.tolerations", .type = FS_KT_NAMES, .off = CF(scheduler.n_tolerations),
     .off2 = CF(scheduler.toleration_tenants), .off3 = CF(scheduler.toleration_lists),
     .doc = "Kubernetes tolerations per tenant, {tenant: `key=value:NoSchedule, key:NoSchedule`}: "
            "a tenant's jobs may use a pool with taints only if it tolerates each of them "
            "(docs/pods.md).  Jobs of other tenants, of no tenant and service replicas tolerate "
            "nothing."},
    {.path = "scheduler.preset", .type = FS_KT_ENUM, .off = CF(scheduler.preset),
     .names = preset_names, .def = "none",
     .doc = "Named settings for the keys not given: tiresias = queue las, tiresias.thresholds "
            "3250,7200 (three queues), checkpoint_interval 1us (preempted jobs keep their work), "
            "tiresias.promote_knob 0, as the Tiresias simulator's dlas-gpu (docs/policies.md)."},
    {.path = "scheduler.mode", .type = FS_KT_ENUM, .off = CF(scheduler.mode), .names = mode_names,
     .def = "best_effort",
     .doc = "best_effort: a job that does not fit lets later jobs start; strict: it blocks the queue."},
    {.path = "scheduler.placement", .type = FS_KT_ENUM, .off = CF(scheduler.placement),
     .names = placement_names, .def = "pack",
     .doc = "pack: fullest nodes first (fractional: GPU packing); first_fit: lowest-numbered "
            "nodes first; best_fit (= binpack): Kubernetes MostAllocated; spread: "
            "LeastAllocated (both over scheduler.resource_weights); random; topology: fewest "
            "NVLink domains, racks, leaves; fgd: fragmentation gradient descent (CPU-aware "
            "where pools model CPU); atc_best_fit, gpu_packing: the ATC'23 simulator's BestFit "
            "(CPU and GPU) and GpuPacking scores (docs/models.md).  With cluster.fabric, "
            "topology places gangs by the fabric's leaf groups and their uplinks' load now; "
            "fabric_aware (cluster.fabric only): the leaf groups that give a gang's ring the "
            "highest predicted rate (docs/policies.md)."},
    {.path = "scheduler.node_score", .type = FS_KT_ENUM, .off = CF(scheduler.node_score),
     .names = node_score_names, .def = "exact",
     .doc = "exact: scores as exact numbers, the lowest-numbered node among equals; kubernetes: "
            "integer node scores 0-100 and a uniformly random node among the best, as "
            "kube-scheduler chooses (every feasible node is scored); kubernetes_name: the same "
            "scores, the first node by name among the best (the ATC'23 simulator's patched "
            "kube-scheduler; names in machine-list order for cluster.from)."},
    {.path = "scheduler.resource_weights.gpu", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(scheduler.w_gpu), .min = 0, .def = "1",
     .doc = "best_fit/spread (NodeResourcesFit MostAllocated/LeastAllocated): weight of the "
            "GPUs (milli-GPU) in the node score."},
    {.path = "scheduler.resource_weights.cpu", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(scheduler.w_cpu), .min = 0, .def = "0",
     .doc = "Weight of CPU in the best_fit/spread score (pools that model CPU; kube-scheduler's "
            "default profile weighs cpu and memory 1 each and has no GPU)."},
    {.path = "scheduler.resource_weights.memory", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(scheduler.w_mem), .min = 0, .def = "0",
     .doc = "Weight of memory in the best_fit/spread score (pools that model memory)."},
    {.path = "scheduler.percentage_of_nodes_to_score", .type = FS_KT_UINT,
     .flags = FS_KF_MAX, .off = CF(scheduler.pct_nodes_to_score), .size = sizeof(uint32_t),
     .max = 100, .def = "0",
     .doc = "node_score kubernetes: kube-scheduler's percentageOfNodesToScore. Nodes are "
            "filtered from a round-robin start until this share of the cluster's nodes (at "
            "least 100) is feasible, and only those are scored; 0: adaptive, 50 - nodes/125 "
            "percent, at least 5 (numFeasibleNodesToFind; docs/models.md)."},
    {.path = "scheduler.balanced_allocation", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(scheduler.w_balanced), .min = 0, .def = "0",
     .doc = "best_fit/spread: weight of kube-scheduler's NodeResourcesBalancedAllocation "
            "score ((1 - the standard deviation of the resources' requested shares) x 100, over "
            "the resources of scheduler.resource_weights) added to NodeResourcesFit's "
            "(weight 1); kube-scheduler's default profile uses 1; 0: off."},
    {.path = "scheduler.candidates", .type = FS_KT_UINT, .off = CF(scheduler.candidates),
     .size = sizeof(uint32_t), .def = "100",
     .doc = "best_fit, spread, fgd in pools with shared GPUs: nodes scored per free level "
            "(as percentageOfNodesToScore); 0: every feasible node."},
    {.path = "scheduler.backfill", .type = FS_KT_ENUM, .off = CF(scheduler.backfill),
     .names = backfill_names, .def = "none",
     .doc = "none; easy: a reservation for the queue head only; conservative: for every queued "
            "job (docs/policies.md)."},
    {.path = "scheduler.preemption", .type = FS_KT_ENUM, .off = CF(scheduler.preemption),
     .names = preempt_names, .def = "auto",
     .doc = "none; order: a waiting job preempts running jobs that rank below it; auto: order "
            "for las and srtf, none otherwise."},
    {.path = "scheduler.runtime", .type = FS_KT_ENUM, .off = CF(scheduler.runtime),
     .names = runtime_names, .def = "user",
     .doc = "Run time that SJF/SRTF and backfill plan with: user (the job's estimate) or oracle "
            "(its true run time)."},
    {.path = "scheduler.unknown_estimate", .type = FS_KT_ENUM, .off = CF(scheduler.unknown_estimate),
     .names = unknown_est_names, .def = "oracle",
     .doc = "A job without a user estimate: oracle (use its run time) or limit (default_limit)."},
    {.path = "scheduler.default_limit", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(scheduler.default_limit), .min = 0, .def = "1d", .unit = "s",
     .doc = "Time limit assumed for a job without an estimate (unknown_estimate: limit)."},
    {.path = "scheduler.restart_cost", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(scheduler.restart_cost), .min = 0, .def = "0s", .unit = "s",
     .doc = "Work a preempted job redoes when it restarts (added to its remaining work)."},
    {.path = "scheduler.checkpoint_interval", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(scheduler.checkpoint_interval), .min = 0, .def = "0s", .unit = "s",
     .doc = "A preempted job keeps its work up to the last multiple of this (0: it loses all "
            "the work of the attempt)."},
    {.path = "scheduler.bf.mode", .type = FS_KT_ENUM, .off = CF(scheduler.bf.mode),
     .names = bf_mode_names, .def = "exact",
     .doc = "exact: backfill at every pass over the whole queue; slurm: Slurm's bounded "
            "backfill (the four keys below)."},
    {.path = "scheduler.bf.max_job_test", .type = FS_KT_UINT, .flags = FS_KF_MIN,
     .off = CF(scheduler.bf.max_job_test), .size = sizeof(uint32_t), .min = 1, .def = "100",
     .doc = "bf_max_job_test: jobs tested per backfill pass (slurm mode)."},
    {.path = "scheduler.bf.resolution", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(scheduler.bf.resolution), .min = 0, .def = "60s", .unit = "s",
     .doc = "bf_resolution: planned times are rounded up to this (slurm mode)."},
    {.path = "scheduler.bf.interval", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(scheduler.bf.interval), .min = 0, .def = "30s", .unit = "s",
     .doc = "bf_interval: period of the backfill pass (slurm mode)."},
    {.path = "scheduler.bf.window", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(scheduler.bf.window), .min = 0, .def = "1440m", .unit = "s",
     .doc = "bf_window: how far ahead reservations are planned (slurm mode)."},
    {.path = "scheduler.wfp.exponent", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(scheduler.wfp.exponent), .min = 0, .def = "3",
     .doc = "queue: wfp (Cobalt's WFP utility, largest first): utility = (queued / requested "
            "time)^exponent x GPUs."},
    {.path = "scheduler.wfp.period", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(scheduler.wfp.period), .min = 0, .def = "5m", .unit = "s",
     .doc = "queue: wfp: utilities are recomputed this often (a job queued since the last "
            "time has utility 0)."},
    {.path = "scheduler.limits.max_jobs_per_user", .type = FS_KT_UINT,
     .off = CF(scheduler.limits.max_jobs_per_user), .size = sizeof(uint32_t), .def = "0",
     .doc = "Slurm MaxJobsPerUser (Maui MAXJOB): a user's jobs handed to the scheduler (queued "
            "there or running) at most; the others are held in submission order (0: no limit)."},
    {.path = "scheduler.limits.max_gpus_per_user", .type = FS_KT_UINT,
     .off = CF(scheduler.limits.max_gpus_per_user), .size = sizeof(uint64_t), .def = "0",
     .doc = "Slurm MaxTRESPerUser=gres/gpu (Maui MAXPROC): the GPUs of those jobs at most (0: "
            "no limit; a larger job runs when its user has nothing else)."},
    {.path = "scheduler.slurm.max_age", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(scheduler.slurm.max_age), .min = 0, .def = "7d", .unit = "s",
     .doc = "PriorityMaxAge: the age factor reaches 1.0 here."},
    {.path = "scheduler.slurm.decay_half_life", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(scheduler.slurm.decay_half_life), .min = 0, .def = "7d", .unit = "s",
     .doc = "PriorityDecayHalfLife of fair-share usage (0: no decay)."},
    {.path = "scheduler.slurm.calc_period", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(scheduler.slurm.calc_period), .min = 0, .def = "5m", .unit = "s",
     .doc = "PriorityCalcPeriod: priorities and usage are recomputed this often."},
    {.path = "scheduler.slurm.weight_age", .type = FS_KT_UINT, .off = CF(scheduler.slurm.weight_age),
     .size = sizeof(uint32_t), .def = "0", .doc = "PriorityWeightAge (Slurm's default: 0)."},
    {.path = "scheduler.slurm.weight_fairshare", .type = FS_KT_UINT,
     .off = CF(scheduler.slurm.weight_fairshare), .size = sizeof(uint32_t), .def = "0",
     .doc = "PriorityWeightFairshare (Slurm's default: 0)."},
    {.path = "scheduler.slurm.weight_jobsize", .type = FS_KT_UINT,
     .off = CF(scheduler.slurm.weight_jobsize), .size = sizeof(uint32_t), .def = "0",
     .doc = "PriorityWeightJobSize (Slurm's default: 0)."},
    {.path = "scheduler.slurm.weight_partition", .type = FS_KT_UINT,
     .off = CF(scheduler.slurm.weight_partition), .size = sizeof(uint32_t), .def = "0",
     .doc = "PriorityWeightPartition (Slurm's default: 0; one partition: factor 1)."},
    {.path = "scheduler.slurm.weight_qos", .type = FS_KT_UINT, .off = CF(scheduler.slurm.weight_qos),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "PriorityWeightQOS (Slurm's default: 0); the QOS factor is the job's priority over "
            "the largest seen."},
    {.path = "scheduler.slurm.favor_small", .type = FS_KT_BOOL,
     .off = CF(scheduler.slurm.favor_small), .def = "false",
     .doc = "PriorityFavorSmall: the job-size factor favours small jobs."},
    {.path = "scheduler.slurm.conf", .type = FS_KT_PATH, .off = CF(scheduler.slurm.conf),
     .doc = "A site's slurm.conf: its PriorityType, PriorityWeight*, PriorityDecayHalfLife, "
            "PriorityMaxAge, PriorityCalcPeriod, PriorityFavorSmall, SchedulerType and "
            "SchedulerParameters=bf_* set the scheduler.slurm.*, scheduler.bf.*, "
            "scheduler.queue and scheduler.backfill keys the scenario does not give "
            "(docs/policies.md)."},
    {.path = "scheduler.tiresias.thresholds", .type = FS_KT_STRING,
     .off = CF(scheduler.tiresias.thresholds), .def = "3600",
     .doc = "2D-LAS queue limits in GPU-seconds, comma-separated and increasing (K limits: "
            "K+1 queues)."},
    {.path = "scheduler.tiresias.promote_knob", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(scheduler.tiresias.promote_knob), .min = 0, .def = "0",
     .doc = "PROMOTE_KNOB: a job waiting >= its executed time x knob goes back to queue 0 "
            "(0: no promotion)."},
    /* @kueue rows (scheduler.kueue.*) */
    {.path = "scheduler.kueue.cluster_queues", .type = FS_KT_LIST,
     .off = CF(scheduler.kueue.cqs), .off2 = CF(scheduler.kueue.n_cqs), .sub = &fs_keys_kueue_cq,
     .doc = "queue kueue: the ClusterQueues {name, cohort, strategy, quotas, preemption keys, "
            "weight, tenants} (docs/policies.md, Kueue)."},
    {.path = "scheduler.kueue.flavors", .type = FS_KT_LIST, .off = CF(scheduler.kueue.flavors),
     .off2 = CF(scheduler.kueue.n_flavors), .sub = &fs_keys_kueue_flavor,
     .doc = "ResourceFlavors {name, match}: the pools a flavor stands for (a quota may also name "
            "a pool or GPU model directly)."},
    {.path = "scheduler.kueue.default_queue", .type = FS_KT_STRING,
     .off = CF(scheduler.kueue.default_queue),
     .doc = "ClusterQueue of jobs whose tenant has no LocalQueue (absent: such jobs stay "
            "pending, as in Kueue)."},
    {.path = "scheduler.kueue.fair_sharing", .type = FS_KT_BOOL,
     .off = CF(scheduler.kueue.fair_sharing), .def = "false",
     .doc = "fairSharing.enable: order admissions across a cohort by dominant resource share / "
            "weight."},
    {.path = "scheduler.kueue.flavor_pools", .type = FS_KT_NAMES,
     .off = CF(scheduler.kueue.n_flavor_pools), .off2 = CF(scheduler.kueue.flavor_pool_names),
     .off3 = CF(scheduler.kueue.flavor_pool_targets),
     .doc = "{flavor: pools}: the pools (names or GPU models, comma-separated) a flavor stands "
            "for, over a manifest ResourceFlavor's nodeLabels or a flavor's match "
            "(docs/policies.md, Kueue manifests)."},
    {.path = "scheduler.kueue.manifests", .type = FS_KT_PATH, .off = CF(scheduler.kueue.manifests),
     .doc = "Kueue YAML (ClusterQueue, Cohort, ResourceFlavor, LocalQueue objects) added to the "
            "above; relative to the scenario file."},
    /* @volcano rows (scheduler.volcano.*) */
    {.path = "scheduler.volcano.queues", .type = FS_KT_LIST, .off = CF(scheduler.volcano.queues),
     .off2 = CF(scheduler.volcano.n_queues), .sub = &volcano_queue_keys,
     .doc = "queue: volcano. Volcano Queue objects {name, weight, capability, guarantee, "
            "reclaimable, tenants}; a job goes to the queue listing its tenant, else the queue "
            "named like its tenant, else `default` (weight 1, added if not given)."},
    {.path = "scheduler.volcano.reclaim", .type = FS_KT_BOOL, .off = CF(scheduler.volcano.reclaim),
     .def = "false",
     .doc = "Run the reclaim action: a queue below its deserved share evicts jobs of overused "
            "reclaimable queues (Volcano's default actions have no reclaim)."},
    {.path = "scheduler.volcano.preempt", .type = FS_KT_BOOL, .off = CF(scheduler.volcano.preempt),
     .def = "false",
     .doc = "Run the preempt action: within a queue, a waiting job evicts running jobs of lower "
            "priority."},
    {.path = "scheduler.volcano.drf", .type = FS_KT_BOOL, .off = CF(scheduler.volcano.drf),
     .def = "true",
     .doc = "drf job order within a queue: the tenant (namespace) with the lowest dominant share "
            "first, after priority (false: priority, then submission)."},
    {.path = "scheduler.volcano.period", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(scheduler.volcano.period), .min = 0, .def = "1s", .unit = "s",
     .doc = "schedule-period: sessions run at multiples of it (0: at every change)."},

    /* @failures rows (failures.*) */
    {.path = "failures", .type = FS_KT_CHOICE, .flags = FS_KF_OPTIONAL, .off = CF(failures.given),
     .choice = 1,
     .doc = "Component failures and repair (docs/failures.md); absent: nothing ever fails."},
    {.path = "failures.preset", .type = FS_KT_ENUM, .off = CF(failures.preset),
     .names = fail_preset_names, .def = "none",
     .doc = "Sourced failure model (docs/failures.md): adds its components and causes after the "
            "scenario's (a cause listed in failures.causes keeps the scenario's repair path), and "
            "sets the hard repair time and spares where the scenario leaves them out."},
    {.path = "failures.components", .type = FS_KT_LIST, .off = CF(failures.components),
     .off2 = CF(failures.n_components), .sub = &fail_component_keys,
     .doc = "Failure processes, one per item: every unit of `kind` fails after a draw of `tbf` "
            "(per unit, counted from its return to service)."},
    {.path = "failures.causes", .type = FS_KT_LIST, .off = CF(failures.causes),
     .off2 = CF(failures.n_causes), .sub = &fail_cause_keys,
     .doc = "Repair path of each cause named in the components' cause shares (others take "
            "repair.default)."},
    {.path = "failures.repair.soft", .type = FS_KT_DIST, .off = CF(failures.repair_soft),
     .off2 = CF(failures.repair_soft_cfg), .sub = &fs_keys_dist, .unit = "s",
     .doc = "Soft repair time (reset, reboot); absent: lognormal, median 15m, sigma 0.5."},
    {.path = "failures.repair.hard", .type = FS_KT_DIST, .off = CF(failures.repair_hard),
     .off2 = CF(failures.repair_hard_cfg), .sub = &fs_keys_dist, .unit = "s",
     .doc = "Hard repair time (RMA, part or host replacement); absent: lognormal, median 3d, "
            "sigma 0.8."},
    {.path = "failures.repair.crews", .type = FS_KT_UINT, .off = CF(failures.crews),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "Repair crews working in parallel, first come first served (0: unlimited; every "
            "repair starts at once). Repairs with path none need no crew."},
    {.path = "failures.repair.default", .type = FS_KT_ENUM, .off = CF(failures.repair_default),
     .names = repair_path_names, .def = "soft",
     .doc = "Repair path of a cause not listed in failures.causes."},
    {.path = "failures.infant.factor", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(failures.infant_factor), .min = 1, .def = "1",
     .doc = "Hazard multiplier of new hardware (from the start, and after each hard repair) "
            "during infant.period (1: off)."},
    {.path = "failures.infant.period", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(failures.infant_period), .min = 0, .def = "30d", .unit = "s",
     .doc = "How long hardware counts as new."},
    {.path = "failures.lemon.after", .type = FS_KT_UINT, .off = CF(failures.lemon_after),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "A node that fails this many times within lemon.window is a lemon (0: off)."},
    {.path = "failures.lemon.window", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(failures.lemon_window), .min = 0, .def = "30d", .unit = "s",
     .doc = "Window of the lemon rule."},
    {.path = "failures.lemon.action", .type = FS_KT_ENUM, .off = CF(failures.lemon_action),
     .names = lemon_action_names, .def = "remove",
     .doc = "remove: the lemon leaves the fleet for good; hard: it goes to hard repair (new "
            "hardware) whatever the cause, and its count restarts."},
    {.path = "failures.stragglers.fraction", .type = FS_KT_PROB,
     .off = CF(failures.straggler_fraction), .def = "0",
     .doc = "Share of nodes that run slow from the start (drawn per node)."},
    {.path = "failures.stragglers.factor", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN | FS_KF_MAX,
     .off = CF(failures.straggler_factor), .min = 0, .max = 1, .def = "0.7",
     .doc = "Speed factor of a slow node (a synchronous job runs at its slowest node's pace)."},
    {.path = "failures.stragglers.detect", .type = FS_KT_BOOL, .off = CF(failures.straggler_detect),
     .def = "true",
     .doc = "Health checks find slow nodes: each is drained, then soft-repaired once idle, "
            "and returns at full speed (false: they stay slow)."},
    {.path = "failures.health_check.interval", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(failures.health_interval), .min = 0, .def = "5m", .unit = "s",
     .doc = "Period of the health checks that find slow nodes (0: none)."},
    {.path = "failures.rack_cordon.trays_down", .type = FS_KT_UINT, .off = CF(failures.rack_cordon),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "NVL72 rule: a rack with more than this many nodes (trays) failed or in a planned "
            "outage is cordoned and drained whole until it is back to this many (0: off; needs "
            "cluster.topology)."},
    {.path = "failures.spares.nodes", .type = FS_KT_UINT, .off = CF(failures.spare_nodes),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "Hot spare nodes per pool (its last nodes), held out of service and swapped in for "
            "a failed node."},
    {.path = "failures.spares.fraction", .type = FS_KT_PROB, .off = CF(failures.spare_fraction),
     .def = "0", .doc = "Or this share of each pool's nodes (rounded; not with spares.nodes)."},
    {.path = "failures.spares.swap_time", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(failures.spare_swap), .min = 0, .def = "5m", .unit = "s",
     .doc = "Time from a node's failure until a spare serves in its place."},
    {.path = "failures.planned", .type = FS_KT_LIST, .off = CF(failures.planned),
     .off2 = CF(failures.n_planned), .sub = &fail_planned_keys,
     .doc = "Planned outages of one unit each (maintenance, or what-if failures)."},

    /* @recovery rows (recovery.*) */
    {.path = "recovery.checkpoint", .type = FS_KT_ENUM, .off = CF(recovery.checkpoint),
     .names = ckpt_names, .def = "none",
     .doc = "Checkpoints of running jobs: none; fixed (every `interval` of compute); young "
            "(sqrt(2 delta M)); daly (Daly 2006's higher-order interval); M = node MTTF / the "
            "job's nodes (docs/recovery.md)."},
    {.path = "recovery.interval", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(recovery.interval), .min = 0, .def = "1h", .unit = "s",
     .doc = "checkpoint: fixed: compute time between checkpoints (at the job's speed when the "
            "attempt starts)."},
    {.path = "recovery.write_cost", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(recovery.write_cost), .min = 0, .def = "1m", .unit = "s",
     .doc = "delta: wall time of one checkpoint write (no progress meanwhile)."},
    {.path = "recovery.restore", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(recovery.restore), .min = 0, .def = "10m", .unit = "s",
     .doc = "R: wall time to restart after a failure (load the checkpoint, rejoin; no "
            "progress), paid at the start of the next attempt."},
    {.path = "recovery.detection", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(recovery.detection), .min = 0, .def = "5m", .unit = "s",
     .doc = "Heartbeat timeout: from a node failure until the job notices; meanwhile it holds "
            "its healthy nodes and makes no progress."},
    {.path = "recovery.health_check", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(recovery.health_check), .min = 0, .def = "0s", .unit = "s",
     .doc = "Period of a fleet-wide health check that reads the GPUs' DCGM fields (Meta RSC "
            "checks every 5 min): a failure whose cause has an Xid (failures.causes[].xid) "
            "is noticed at the next check (at multiples of the period from time 0) when that "
            "comes before recovery.detection.  0s: none (docs/recovery.md)."},
    {.path = "recovery.requeue", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(recovery.requeue), .min = 0, .def = "0s", .unit = "s",
     .doc = "From noticing the failure until the job is back in the queue (plus the backoff), "
            "holding nothing."},
    {.path = "recovery.node_mttf", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(recovery.node_mttf), .min = 0, .def = "0s", .unit = "s",
     .doc = "young, daly: a node's mean time to failure (0: from the failures block's gpu, "
            "node and link processes)."},
    {.path = "recovery.retry.policy", .type = FS_KT_ENUM, .off = CF(recovery.retry),
     .names = retry_names, .def = "requeue",
     .doc = "requeue (Slurm JobRequeue: immediately, no limit by default); backoff "
            "(Kubernetes Job: delay base, 2 base, 4 base ... capped at max; backoffLimit "
            "default 6); none: a failure ends the job (FAILED)."},
    {.path = "recovery.retry.limit", .type = FS_KT_UINT, .off = CF(recovery.retry_limit),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "Failures a job survives; one more and it FAILS (0: the policy's default: "
            "requeue no limit, backoff 6)."},
    {.path = "recovery.retry.base", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(recovery.retry_base), .min = 0, .def = "10s", .unit = "s",
     .doc = "backoff: the first delay, doubled at each further failure."},
    {.path = "recovery.retry.max", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(recovery.retry_max), .min = 0, .def = "6m", .unit = "s",
     .doc = "backoff: the delay's cap."},

    {.path = "startup.container", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(startup.container), .min = 0, .def = "0s", .unit = "s",
     .doc = "Pod start-up from bound to running, image pull excluded (the Kubernetes SLO is "
            "p99 <= 5 s; docs/models.md \"Pod start-up\"). 0 with no image: jobs compute once "
            "placed."},
    {.path = "startup.image_size", .type = FS_KT_UINT, .off = CF(startup.image_mib),
     .size = sizeof(uint64_t), .def = "0", .unit = "MiB",
     .doc = "Container image of the job classes not in startup.images, MiB (a 10 GB training "
            "image: 9537; 0: none to pull)."},
    {.path = "startup.load", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = CF(startup.load),
     .min = 0, .def = "0s", .unit = "s",
     .doc = "Model/weight load after the container starts, for those classes."},
    {.path = "startup.images", .type = FS_KT_LIST, .off = CF(startup.images),
     .off2 = CF(startup.n_images), .sub = &startup_image_keys,
     .doc = "Per job class: its image size and load time."},
    {.path = "startup.node_bandwidth", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN,
     .off = CF(startup.node_mibps), .min = 0, .def = "80", .unit = "MiB/s",
     .doc = "A node's image pull rate, MiB/s (80: a 10 GB image in about 2 min)."},
    {.path = "startup.registry_bandwidth", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(startup.registry_mibps), .min = 0, .def = "0", .unit = "MiB/s",
     .doc = "The registry's rate, shared by the pulls in progress, MiB/s (0: unlimited)."},
    {.path = "startup.node_disk", .type = FS_KT_UINT, .off = CF(startup.disk_mib),
     .size = sizeof(uint64_t), .def = "0", .unit = "MiB",
     .doc = "A node's image cache, MiB; least recently used images are evicted beyond it (0: "
            "unlimited)."},

    {.path = "telemetry.duty", .type = FS_KT_PROB, .off = CF(telemetry.dflt.duty), .def = "1",
     .doc = "Share of time a kernel runs on a training job's GPUs (DCGM_FI_DEV_GPU_UTIL / 100), "
            "for classes not in telemetry.activity."},
    {.path = "telemetry.sm", .type = FS_KT_PROB, .off = CF(telemetry.dflt.sm), .def = "0.76",
     .doc = "SM activity (DCGM_FI_PROF_SM_ACTIVE); also drives power (docs/observability.md)."},
    {.path = "telemetry.tensor", .type = FS_KT_PROB, .off = CF(telemetry.dflt.tensor),
     .def = "0.5", .doc = "Tensor pipe activity (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)."},
    {.path = "telemetry.dram", .type = FS_KT_PROB, .off = CF(telemetry.dflt.dram), .def = "0.4",
     .doc = "Memory bandwidth activity (DCGM_FI_PROF_DRAM_ACTIVE)."},
    {.path = "telemetry.fb", .type = FS_KT_PROB, .off = CF(telemetry.dflt.fb), .def = "0.9",
     .doc = "Framebuffer used as a share of the GPU's memory (DCGM_FI_DEV_FB_USED)."},
    {.path = "telemetry.mfu", .type = FS_KT_PROB, .off = CF(telemetry.dflt.mfu), .def = "0.375",
     .doc = "Model FLOPs utilization of a training job while it computes: its program goodput "
            "(/jobs.program_goodput, /summary.goodput_program; docs/recovery.md).  0.375: the "
            "median of 33 large training runs (Epoch AI); Llama 3 405B 38-43%, MegaScale 55%."},
    {.path = "telemetry.activity", .type = FS_KT_LIST, .off = CF(telemetry.activity),
     .off2 = CF(telemetry.n_activity), .sub = &activity_keys,
     .doc = "Per job class: its activity profile (class, duty, sm, tensor, dram, fb)."},
    {.path = "telemetry.cap_exponent", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(telemetry.cap_exponent), .min = 1, .max = 10, .def = "3",
     .doc = "Power caps (cluster.pools[].power_cap_w): the GPU's dynamic power goes as clock^e, "
            "so a job capped from draw P to C runs at ((C - floor) / (P - floor))^(1/e) of its "
            "speed, floor = idle + context draw.  3: dynamic power ~ f V^2 with V ~ f (an "
            "assumption, docs/observability.md)."},
    {.path = "telemetry.throttle_c", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(telemetry.throttle_c), .min = 0, .max = 200, .def = "0", .unit = "C",
     .doc = "Thermal throttling: the GPUs' slowdown temperature, C.  A GPU whose steady "
            "temperature at a job's draw (cluster.pools[].ambient_c + 0.07 C/W x power) would "
            "pass it clocks down to hold it: a power limit of (throttle_c - ambient_c) / 0.07 W, "
            "which slows the job as a power cap does (docs/observability.md \"Thermal "
            "throttling\").  Secondary sources put the HW slowdown of A100 and H100 at 83-90 C; "
            "read your boards' `nvidia-smi -q` \"GPU Slowdown Temp\".  0: no throttling."},

    /* @cost rows (cost.*) */
    {.path = "cost", .type = FS_KT_CHOICE, .flags = FS_KF_OPTIONAL, .off = CF(cost.given),
     .choice = 1,
     .doc = "Cost model (docs/cost.md): without it every pool is owned at the defaults, and "
            "cost is reported when every pool's GPU type has default prices."},
    {.path = "cost.pue", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = CF(cost.pue), .min = 1,
     .def = "1.3", .doc = "Power usage effectiveness (facility / IT energy)."},
    {.path = "cost.electricity", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(cost.electricity), .min = 0, .def = "0.08", .unit = "$/kWh",
     .doc = "Electricity price."},
    {.path = "cost.colocation", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(cost.colocation), .min = 0, .def = "184.06", .unit = "$/kW-month",
     .doc = "Colocation rent per kW of peak IT power per month (730 h)."},
    {.path = "cost.depreciation", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(cost.depreciation), .min = 0, .def = "5y", .unit = "s",
     .doc = "Straight-line depreciation period of owned hardware (1y = 365 d = 8,760 h)."},
    {.path = "cost.residual", .type = FS_KT_PROB, .off = CF(cost.residual), .def = "0",
     .doc = "Share of capex recovered at the end of the depreciation period."},
    {.path = "cost.ops_share", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = CF(cost.ops_share),
     .min = 0, .def = "0.1", .unit = "1/y",
     .doc = "Operations and support per year, as a share of capex."},
    {.path = "cost.server_multiplier", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(cost.server_multiplier), .min = 1, .def = "1.64",
     .doc = "Server cost per GPU / GPU price (CPU, memory, chassis, NICs)."},
    {.path = "cost.network_share", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(cost.network_share), .min = 0, .max = 0.9, .def = "0.19",
     .doc = "Interconnect share of total cluster hardware cost: capex per GPU = GPU price x "
            "server_multiplier / (1 - network_share)."},
    {.path = "cost.busy_fraction", .type = FS_KT_PROB, .off = CF(cost.busy_fraction),
     .def = "0.75", .doc = "Average draw of a busy GPU's server share, as a fraction of peak."},
    {.path = "cost.idle_fraction", .type = FS_KT_PROB, .off = CF(cost.idle_fraction),
     .def = "0.3",
     .doc = "Draw of an idle (or down) owned GPU's server share, as a fraction of peak."},
    {.path = "cost.energy", .type = FS_KT_ENUM, .off = CF(cost.energy), .names = energy_names,
     .def = "flat",
     .doc = "Energy of owned pools. flat: busy_fraction / idle_fraction of the peak per busy / "
            "idle GPU-s. power: the GPUs' draw from the power model (idle on every owned GPU, "
            "each job's computing draw above it, power caps and thermal limits; equal to the "
            "integral of fleetsim metrics' power), plus the host's part (peak - TDP) at "
            "busy_fraction / idle_fraction (docs/cost.md)."},
    {.path = "cost.reserved_1y_discount", .type = FS_KT_PROB,
     .off = CF(cost.reserved_1y_discount), .def = "0.41",
     .doc = "Discount of a 1-year cloud commitment off on-demand."},
    {.path = "cost.reserved_3y_discount", .type = FS_KT_PROB,
     .off = CF(cost.reserved_3y_discount), .def = "0.64",
     .doc = "Discount of a 3-year cloud commitment off on-demand."},
    {.path = "cost.spot_multiplier", .type = FS_KT_PROB, .off = CF(cost.spot_multiplier),
     .def = "0.35", .doc = "Spot price / on-demand price."},
    {.path = "cost.carbon_intensity", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CF(cost.carbon_intensity), .min = 0, .def = "0", .unit = "gCO2e/kWh",
     .doc = "Location-based grid carbon intensity, constant over the run: operational carbon = "
            "facility energy (PUE included) x this; 0: none (no sourced default; docs/cost.md)."},
    {.path = "cost.carbon_series", .type = FS_KT_PATH, .off = CF(cost.carbon_series),
     .doc = "Instead of carbon_intensity: a CSV of hourly intensities, header "
            "hour_start_s,gco2e_per_kwh, row k = hour k of the run (hour_start_s = 3600 k); "
            "shorter than the run, it repeats from its first row (docs/cost.md)."},
    {.path = "cost.pools", .type = FS_KT_LIST, .off = CF(cost.pools), .off2 = CF(cost.n_pools),
     .sub = &fs_keys_cost_pool,
     .doc = "Per pool: billing (owned or cloud), price overrides, burst rules, delivery and "
            "retirement dates."},
    {.path = "cost.purchases", .type = FS_KT_LIST, .off = CF(cost.purchases),
     .off2 = CF(cost.n_purchases), .sub = &fs_keys_purchase,
     .doc = "Purchase timeline: batches {pool, nodes, at, retire} of a pool's nodes delivered "
            "(and retired) at dates; nodes not yet delivered are out of service."},

    /* @plan rows (plan.*) */
    {.path = "plan", .type = FS_KT_CHOICE, .flags = FS_KF_OPTIONAL, .off = CF(plan.given),
     .choice = 1,
     .doc = "Capacity planning for `fleetsim plan` (docs/plan.md): SLOs, the choices whose node "
            "counts are searched, replications and confidence; a single run ignores it."},
    {.path = "plan.objective", .type = FS_KT_STRING, .off = CF(plan.objective),
     .def = "cost_total",
     .doc = "Summary metric minimised among the fleets that meet the SLOs (a /summary column)."},
    {.path = "plan.confidence", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN | FS_KF_MAX,
     .off = CF(plan.confidence), .min = 0, .max = 0.999999, .def = "0.95",
     .doc = "An SLO holds when the whole two-sided Student-t interval of the metric's mean over "
            "the replications (this level) is within the bound."},
    {.path = "plan.replications", .type = FS_KT_UINT, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(plan.replications), .size = sizeof(uint64_t), .min = 2, .max = 100000,
     .def = "10",
     .doc = "Runs per candidate fleet; replication r of every candidate uses index r (common "
            "random numbers)."},
    {.path = "plan.search", .type = FS_KT_ENUM, .off = CF(plan.search), .names = plan_search_names,
     .def = "bisect",
     .doc = "bisect: per choice, the smallest node count meeting the SLOs by bisection (SLOs "
            "monotone in nodes); scan: every node count (for checking)."},
    {.path = "plan.discount_rate", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(plan.discount_rate), .min = 0, .max = 1, .def = "0.08",
     .doc = "Yearly discount rate of the plan's cash-flow view (purchase now, operating cost per "
            "year, residual value at the end of depreciation) and its net present value."},
    {.path = "plan.years", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(plan.years), .min = 0, .max = 50, .def = "0", .unit = "year",
     .doc = "Analysis period of the quarterly cash flow, a whole number of quarters: every quarter's "
            "demand simulated, capex when bought, residual (book value) at the end, NPV, payback "
            "and cost per delivered GPU-hour with intervals; 0: the one-year view over "
            "cost.depreciation (docs/plan.md)."},
    {.path = "plan.demand_growth", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN,
     .off = CF(plan.demand_growth), .min = -1, .def = "0", .unit = "1/year",
     .doc = "Arrival-rate growth per year of the quarterly cash flow: quarter q (0-based) runs at "
            "workload.synthetic.scale x (1 + g)^(q / 4); above -1."},
    {.path = "plan.electricity_growth", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN,
     .off = CF(plan.electricity_growth), .min = -1, .def = "0", .unit = "1/year",
     .doc = "Electricity price change per year: quarter q pays cost.electricity x (1 + e)^(q / 4)."},
    {.path = "plan.gpu_price_decline", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(plan.gpu_price_decline), .min = 0, .max = 0.99, .def = "0", .unit = "1/year",
     .doc = "GPU price fall per year: a purchase in quarter q pays capex x (1 - d)^(q / 4)."},
    {.path = "plan.sensitivity", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(plan.sensitivity), .min = 0, .max = 0.99, .def = "0",
     .doc = "With plan.years: the chosen fleet's NPV with electricity price, GPU price, demand "
            "growth and arrival rate each x (1 -+ X) (0: no sensitivity block)."},
    {.path = "plan.baseline", .type = FS_KT_STRING, .off = CF(plan.baseline),
     .doc = "The choice payback is measured against (default: the choice with the least capex)."},
    {.path = "plan.keep_jobs", .type = FS_KT_BOOL, .off = CF(plan.keep_jobs), .def = "false",
     .doc = "Candidate runs keep /jobs and /timeline (false: only /summary and the small tables)."},
    {.path = "plan.slo", .type = FS_KT_LIST, .off = CF(plan.slo), .off2 = CF(plan.n_slo),
     .sub = &plan_slo_keys,
     .doc = "Service-level objectives, one block per metric: {metric: wait_p95, max: 1h} or "
            "{metric: finished_share, min: 0.99} (none: the cheapest fleet of the range)."},
    {.path = "plan.choices", .type = FS_KT_LIST, .flags = FS_KF_REQUIRED | FS_KF_MIN,
     .off = CF(plan.choices),
     .off2 = CF(plan.n_choices), .min = 1, .sub = &plan_choice_keys,
     .doc = "The alternatives: per choice a pool, optionally its GPU model and overrides, and "
            "the node counts {from, to, step} searched."},

    {.path = "output.timeline_interval", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = CF(output.timeline_interval), .min = 0, .def = "5m", .unit = "s",
     .doc = "Sampling period of /timeline (0: no timeline)."},
    {.path = "output.jobs", .type = FS_KT_BOOL, .off = CF(output.jobs), .def = "true",
     .doc = "Write one /jobs row per job."},
    {.path = "output.gpu_intervals", .type = FS_KT_BOOL, .off = CF(output.gpu_intervals),
     .def = "false",
     .doc = "Write /gpu_intervals: one row per job attempt and node it held, the input of "
            "`fleetsim metrics` (DCGM-named telemetry; docs/observability.md)."},

    {.path = "output.service_bucket", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN,
     .off = CF(services.bucket), .min = 0, .def = "1h", .unit = "s",
     .doc = "Period of /service_buckets (requests, TTFT and TPOT percentiles, replicas per "
            "service; docs/services.md)."},
    {.path = "output.requests", .type = FS_KT_BOOL, .off = CF(services.requests), .def = "false",
     .doc = "Write /requests: one row per request of a request-level service."},

    {.path = "services", .type = FS_KT_LIST, .off = CF(services.list), .off2 = CF(services.n),
     .sub = &service_keys,
     .doc = "Inference services sharing the fleet with the workload: replicas that hold GPUs "
            "at a priority above training, requests served in batches, Kubernetes HPA "
            "autoscaling (docs/services.md). Needs until: horizon."},

    {.path = "sweep", .type = FS_KT_CHOICE, .flags = FS_KF_OPTIONAL, .off = CF(sweep.given),
     .choice = 1,
     .doc = "A sweep for `fleetsim sweep` (docs/sweeps.md): keys varied over values or ranges, "
            "replications per point; a single run ignores it."},
    {.path = "sweep.combine", .type = FS_KT_ENUM, .off = CF(sweep.combine), .names = combine_names,
     .def = "grid",
     .doc = "grid: every combination of the parameters' values (the first parameter varies "
            "slowest); zip: the i-th values of every parameter together (equal lengths)."},
    {.path = "sweep.replications", .type = FS_KT_UINT, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = CF(sweep.replications), .size = sizeof(uint64_t), .min = 1, .max = 1000000, .def = "1",
     .doc = "Runs per point; replication r of every point uses replication index r (common "
            "random numbers)."},
    {.path = "sweep.warmup", .type = FS_KT_RAW, .off = CF(sweep.warmup), .unit = "s",
     .doc = "Warm-up of every point (replaces `warmup`; checked like it)."},
    {.path = "sweep.params", .type = FS_KT_LIST, .off = CF(sweep.params), .off2 = CF(sweep.n_params),
     .sub = &fs_keys_sweep_param,
     .doc = "The varied keys, one block per key: {key: K, values: [...]} or {key: K, range: {...}}."},
};

#define PF(f) offsetof(fs_pool_cfg_t, f)
static const fs_key_t pool_rows[] = {
    {.path = "name", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = PF(name),
     .doc = "Pool name (unique)."},
    {.path = "gpu", .type = FS_KT_NAME, .flags = FS_KF_REQUIRED, .off = PF(gpu),
     .name_at = gpu_model_at, .doc = "GPU model of the catalog (docs/catalog.md)."},
    {.path = "nodes", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED | FS_KF_MIN | FS_KF_MAX,
     .off = PF(nodes), .size = sizeof(uint32_t), .min = 1, .max = 10000000,
     .doc = "Nodes in the pool."},
    {.path = "gpus_per_node", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED | FS_KF_MIN | FS_KF_MAX,
     .off = PF(gpus_per_node), .size = sizeof(uint32_t), .min = 1, .max = 1024,
     .doc = "GPUs per node."},
    {.path = "cpu_milli", .type = FS_KT_UINT, .off = PF(cpu_milli), .size = sizeof(uint32_t),
     .def = "0",
     .doc = "Allocatable CPU per node, milli-cores (96000 = 96 cores); pods' CPU requests must "
            "fit (Kubernetes NodeResourcesFit).  0: CPU is not modelled in this pool."},
    {.path = "memory_mib", .type = FS_KT_UINT, .off = PF(memory_mib), .size = sizeof(uint32_t),
     .def = "0",
     .doc = "Allocatable memory per node, MiB; pods' memory requests must fit.  0: memory is "
            "not modelled in this pool."},
    {.path = "mig", .type = FS_KT_STRING, .off = PF(mig),
     .doc = "Static MIG layout of every GPU of the pool (docs/mig.md): a mig-parted config name "
            "(`all-1g.10gb`, `all-balanced`, `all-disabled`) or a list of profiles "
            "(`3g.40gb, 2g.20gb, 1g.10gb x2`).  The GPUs are then no whole `nvidia.com/gpu`: only "
            "pods asking one of the layout's profiles use them (at most 8 GPUs per node)."},
    {.path = "mig_repartition", .type = FS_KT_CHOICE, .flags = FS_KF_OPTIONAL,
     .off = PF(mig_recut_given), .choice = 1,
     .doc = "Dynamic MIG re-partitioning of the pool (docs/mig.md \"Re-partitioning\"; needs `mig`): "
            "when a MIG pod waits for a profile no GPU of the pool offers now, the lowest idle node "
            "(no pod) is cordoned, out of service for reconfigure + gpu_ready, and comes back with "
            "every GPU cut for that profile (mig-parted's all-<profile>).  Absent: static layouts."},
    {.path = "mig_repartition.enabled", .type = FS_KT_BOOL, .off = PF(mig_recut), .def = "true",
     .doc = "Re-partition (false: the block is kept but the layouts stay static)."},
    {.path = "mig_repartition.reconfigure", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = PF(mig_reconfigure), .min = 0, .def = "60s", .unit = "s",
     .doc = "GPU reset, instance creation and device-plugin restart (mig-manager's steps).  No "
            "public figure: the default is an assumption [U]."},
    {.path = "mig_repartition.gpu_ready", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = PF(mig_gpu_ready), .min = 0, .def = "1m", .unit = "s",
     .doc = "From the device plugin up to the new instances allocatable (about 1 min; "
            "DOMAIN.md 5.1)."},
    {.path = "mig_repartition.min_interval", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = PF(mig_min_interval), .min = 0, .def = "10m", .unit = "s",
     .doc = "Anti-thrashing: the least time between two re-cut decisions of one node [U]."},
    {.path = "mig_repartition.drain", .type = FS_KT_ENUM, .off = PF(mig_drain),
     .names = mig_drain_names, .def = "none",
     .doc = "When no idle node can be re-cut for a waiting MIG pod (docs/mig.md \"Draining a "
            "busy node\"): none: wait for one; wait: cordon the busy node of the pool whose last "
            "pod is planned to end first, re-cut it when its pods have ended; evict: the same, "
            "but the node's pods still running drain_timeout after the cordon are preempted "
            "(the node losing the least work is chosen)."},
    {.path = "mig_repartition.drain_timeout", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = PF(mig_drain_timeout), .min = 0, .def = "30s", .unit = "s",
     .doc = "drain: evict: how long a cordoned node's pods may go on before they are preempted "
            "(Kubernetes' default terminationGracePeriodSeconds, 30 s)."},
    {.path = "mig_repartition.layout", .type = FS_KT_ENUM, .off = PF(mig_layout),
     .names = mig_layout_names, .def = "all",
     .doc = "The new layout of a re-cut node (docs/mig.md \"Mixed layouts\"): all: every GPU "
            "of the node cut for the one profile the waiting pod asks (mig-parted's "
            "all-<profile>); mixed: only as many GPUs as the waiting pods of that profile need "
            "are re-cut, the slots it leaves free carry other profiles pods wait for, and the "
            "node's other GPUs keep their layout."},
    {.path = "taints", .type = FS_KT_STRING, .off = PF(taints),
     .doc = "Kubernetes taints of the pool's nodes, `key=value:NoSchedule` or `key:NoSchedule`, "
            "comma-separated (a reserved pool): only the jobs of tenants that tolerate them "
            "(scheduler.tolerations) are placed there (docs/pods.md).  Only NoSchedule is "
            "modelled."},
    {.path = "ambient_c", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX, .off = PF(ambient_c),
     .min = -50, .max = 100, .def = "30", .unit = "C",
     .doc = "Air temperature at the pool's GPUs (a hot aisle, a warm room), C: the thermal "
            "model's ambient (GPU temperature = ambient + 0.07 C/W x power, an assumption) for "
            "fleetsim metrics and for thermal throttling (telemetry.throttle_c)."},
    {.path = "power_cap_w", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = PF(power_cap_w),
     .min = 0, .def = "0", .unit = "W",
     .doc = "Power limit of every GPU of the pool (nvidia-smi -pl), W: a job whose activity "
            "would draw more runs slower (telemetry.cap_exponent; docs/observability.md \"Power "
            "caps\").  Must exceed the GPU's idle + context draw (10% of TDP + 38 W).  0: no cap."},
    {.path = "sharing", .type = FS_KT_CHOICE, .flags = FS_KF_OPTIONAL, .off = PF(sharing),
     .choice = 1,
     .doc = "GPU sharing as the NVIDIA device plugin offers it (docs/models.md \"GPU sharing\"): "
            "give exactly one of time_slicing and mps.  Each GPU is then N replicas of "
            "1000/N milli-GPUs (rounded down); a job asking one GPU takes one replica and runs at "
            "the sharing model's speed; jobs asking more than one GPU never use the pool "
            "(failRequestsGreaterThanOne).  Absent: whole GPUs."},
    {.path = "sharing.time_slicing", .type = FS_KT_UINT, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = PF(time_slicing), .size = sizeof(uint32_t), .min = 2, .max = 32,
     .doc = "Time-slicing replicas per GPU: the k jobs on a GPU share it round-robin, each at "
            "1/k of its speed (processor sharing)."},
    {.path = "sharing.mps", .type = FS_KT_UINT, .flags = FS_KF_MIN | FS_KF_MAX, .off = PF(mps),
     .size = sizeof(uint32_t), .min = 2, .max = 32,
     .doc = "MPS clients per GPU, each limited to 1/N of the SMs: a job runs at 1/N of its speed "
            "whatever its neighbours do (SM demand 1)."},
};

#define SC(f) offsetof(fs_synth_class_t, f)
static const fs_key_t size_class_rows[] = {
    {.path = "gpus_min", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED | FS_KF_MIN | FS_KF_MAX,
     .off = SC(gpus_min), .size = sizeof(uint32_t), .min = 1, .max = 2147483648.0,
     .doc = "Smallest GPU count of the class."},
    {.path = "gpus_max", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED | FS_KF_MIN | FS_KF_MAX,
     .off = SC(gpus_max), .size = sizeof(uint32_t), .min = 1, .max = 2147483648.0,
     .doc = "Largest GPU count of the class (>= gpus_min)."},
    {.path = "duration", .type = FS_KT_DIST, .flags = FS_KF_REQUIRED, .off = SC(duration),
     .off2 = SC(duration_cfg), .sub = &fs_keys_dist, .unit = "s",
     .doc = "Run-time distribution of the class (a distribution block)."},
};
static const fs_keytab_t size_class_keys = {"size class", size_class_rows,
                                            sizeof size_class_rows / sizeof size_class_rows[0],
                                            sizeof(fs_synth_class_t)};

#define SPD(f) offsetof(fs_speed_cfg_t, f)
static const fs_key_t speed_rows[] = {
    {.path = "class", .type = FS_KT_UINT, .off = SPD(job_class), .size = sizeof(uint32_t),
     .def = "0", .doc = "Job class (the trace's or workload's class; 0 default)."},
    {.path = "gpu", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = SPD(gpu),
     .doc = "GPU model (a pool's gpu, ignoring case)."},
    {.path = "factor", .type = FS_KT_DOUBLE, .flags = FS_KF_REQUIRED | FS_KF_MIN_OPEN,
     .off = SPD(factor), .min = 0, .doc = "Speed relative to the run times of the workload."},
};
#define SSP(f) offsetof(fs_span_speed_cfg_t, f)
static const fs_key_t span_speed_rows[] = {
    {.path = "class", .type = FS_KT_UINT, .off = SSP(job_class), .size = sizeof(uint32_t),
     .def = "0", .doc = "Job class (the trace's or workload's class; 0 default)."},
    {.path = "nodes", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN | FS_KF_MAX,
     .off = SSP(nodes), .min = 0, .max = 1, .def = "1",
     .doc = "Speed factor of a job on more than one node."},
    {.path = "domains", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN | FS_KF_MAX,
     .off = SSP(domains), .min = 0, .max = 1, .def = "1",
     .doc = "... on more than one NVLink domain."},
    {.path = "racks", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN | FS_KF_MAX,
     .off = SSP(racks), .min = 0, .max = 1, .def = "1", .doc = "... on more than one rack."},
    {.path = "leaves", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN | FS_KF_MAX,
     .off = SSP(leaves), .min = 0, .max = 1, .def = "1",
     .doc = "... under more than one leaf switch."},
    {.path = "spines", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN | FS_KF_MAX,
     .off = SSP(spines), .min = 0, .max = 1, .def = "1",
     .doc = "... under more than one spine."},
};
static const fs_keytab_t span_speed_keys = {"span speed", span_speed_rows,
                                            sizeof span_speed_rows / sizeof span_speed_rows[0],
                                            sizeof(fs_span_speed_cfg_t)};

#define FTR(f) offsetof(fs_fabric_traffic_cfg_t, f)
static const char *const fabric_dtype_names[] = {
    [FS_FAB_BF16] = "bf16", [FS_FAB_FP16] = "fp16", [FS_FAB_FP32] = "fp32", [FS_FAB_FP8] = "fp8",
    NULL};
static const fs_key_t fabric_traffic_rows[] = {
    {.path = "class", .type = FS_KT_UINT, .off = FTR(job_class), .size = sizeof(uint32_t),
     .def = "0", .doc = "Job class (the trace's or workload's class; 0 default)."},
    {.path = "bytes", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = FTR(bytes), .min = 0,
     .def = "0", .doc = "Gradient bytes all-reduced per iteration (or params and dtype; one of them)."},
    {.path = "params", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = FTR(params), .min = 0,
     .def = "0", .doc = "Model parameters: bytes = params x the dtype's size."},
    {.path = "dtype", .type = FS_KT_ENUM, .off = FTR(dtype), .names = fabric_dtype_names,
     .def = "bf16", .doc = "Gradient element type with params: bf16, fp16 (2 bytes), fp32, fp8."},
    {.path = "compute", .type = FS_KT_SECONDS, .flags = FS_KF_REQUIRED | FS_KF_MIN_OPEN,
     .off = FTR(compute_s), .min = 0, .unit = "s", .doc = "Compute time per iteration."},
    {.path = "overlap", .type = FS_KT_PROB, .off = FTR(overlap), .def = "0",
     .doc = "Share of the communication overlapped with compute."},
};
static const fs_keytab_t fabric_traffic_keys = {
    "fabric traffic", fabric_traffic_rows,
    sizeof fabric_traffic_rows / sizeof fabric_traffic_rows[0], sizeof(fs_fabric_traffic_cfg_t)};

#define FFL(f) offsetof(fs_fabric_fail_cfg_t, f)
static const char *const fabric_unit_names[] = {
    [FS_FAB_UNIT_LEAF_UPLINK] = "leaf_uplink", [FS_FAB_UNIT_SPINE] = "spine", NULL};
static const char *const fabric_effect_names[] = {
    [FS_FAB_DOWN] = "down", [FS_FAB_DEGRADE] = "degrade", NULL};
static const fs_key_t fabric_fail_rows[] = {
    {.path = "unit", .type = FS_KT_ENUM, .flags = FS_KF_REQUIRED, .off = FFL(unit),
     .names = fabric_unit_names,
     .doc = "leaf_uplink: one leaf-to-spine link (an uplink port of a rail's leaf); spine: a "
            "spine switch (every leaf of its pool loses its links to it)."},
    {.path = "tbf", .type = FS_KT_DIST, .off = FFL(tbf), .off2 = FFL(tbf_cfg),
     .sub = &fs_keys_dist, .unit = "s",
     .doc = "Time between failures of ONE unit; absent: exponential, 0.057% of links or 0.051% "
            "of switches a month (Alibaba HPN, SIGCOMM'24 section 2.3)."},
    {.path = "repair", .type = FS_KT_DIST, .off = FFL(repair), .off2 = FFL(repair_cfg),
     .sub = &fs_keys_dist, .unit = "s",
     .doc = "Repair time; absent: failures.repair.soft's default (lognormal, median 15m, sigma "
            "0.5)."},
    {.path = "effect", .type = FS_KT_ENUM, .off = FFL(effect), .names = fabric_effect_names,
     .def = "down", .doc = "down: the unit carries nothing; degrade: `capacity` of its bandwidth."},
    {.path = "capacity", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX, .off = FFL(capacity),
     .min = 0, .max = 1, .def = "0.5",
     .doc = "degrade: the share of the unit's bandwidth left while it is degraded."},
    {.path = "pool", .type = FS_KT_STRING, .off = FFL(pool),
     .doc = "Only the units of this pool (absent: every pool's)."},
};
static const fs_keytab_t fabric_fail_keys = {
    "fabric failure", fabric_fail_rows, sizeof fabric_fail_rows / sizeof fabric_fail_rows[0],
    sizeof(fs_fabric_fail_cfg_t)};

#define SIM(f) offsetof(fs_startup_image_cfg_t, f)
static const fs_key_t startup_image_rows[] = {
    {.path = "class", .type = FS_KT_UINT, .off = SIM(job_class), .size = sizeof(uint32_t),
     .def = "0", .doc = "Job class (the trace's or workload's class)."},
    {.path = "size", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED, .off = SIM(size_mib),
     .size = sizeof(uint64_t), .unit = "MiB", .doc = "Its image size, MiB (0: nothing to pull)."},
    {.path = "load", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = SIM(load), .min = 0,
     .def = "0s", .unit = "s", .doc = "Its model/weight load time."},
};
static const fs_keytab_t startup_image_keys = {"startup image", startup_image_rows,
                                               sizeof startup_image_rows / sizeof startup_image_rows[0],
                                               sizeof(fs_startup_image_cfg_t)};

#define ACT(f) offsetof(fs_activity_cfg_t, f)
static const fs_key_t activity_rows[] = {
    {.path = "class", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED, .off = ACT(job_class),
     .size = sizeof(uint32_t), .doc = "Job class."},
    {.path = "duty", .type = FS_KT_PROB, .off = ACT(duty), .def = "1", .doc = "As telemetry.duty."},
    {.path = "sm", .type = FS_KT_PROB, .off = ACT(sm), .def = "0.76", .doc = "As telemetry.sm."},
    {.path = "tensor", .type = FS_KT_PROB, .off = ACT(tensor), .def = "0.5",
     .doc = "As telemetry.tensor."},
    {.path = "dram", .type = FS_KT_PROB, .off = ACT(dram), .def = "0.4", .doc = "As telemetry.dram."},
    {.path = "fb", .type = FS_KT_PROB, .off = ACT(fb), .def = "0.9", .doc = "As telemetry.fb."},
    {.path = "mfu", .type = FS_KT_PROB, .off = ACT(mfu), .def = "0.375", .doc = "As telemetry.mfu."},
};
static const fs_keytab_t activity_keys = {"activity profile", activity_rows,
                                          sizeof activity_rows / sizeof activity_rows[0],
                                          sizeof(fs_activity_cfg_t)};

#define SVP(f) offsetof(fs_svc_perf_cfg_t, f)
static const fs_key_t svc_perf_rows[] = {
    {.path = "gpu", .type = FS_KT_NAME, .flags = FS_KF_REQUIRED, .off = SVP(gpu),
     .name_at = gpu_model_at, .doc = "GPU model of the row (catalog name)."},
    {.path = "model", .type = FS_KT_NAME, .off = SVP(model), .name_at = fs_llm_model_name_at,
     .doc = "An LLM of the preset catalog: prefill, decode, decode_single, max_batch and "
            "kv_tokens not written are computed from its architecture and the GPU's (a roofline, "
            "docs/services.md \"Presets\"); a model that does not fit the replica's GPUs is "
            "refused here."},
    {.path = "tp", .type = FS_KT_UINT, .flags = FS_KF_MAX, .off = SVP(tp), .size = sizeof(uint32_t),
     .max = 8, .def = "0",
     .doc = "With model: tensor-parallel degree of a replica, which must be the service's gpus "
            "(0: gpus)."},
    {.path = "dtype", .type = FS_KT_ENUM, .off = SVP(dtype), .names = llm_dtype_names,
     .def = "bf16",
     .doc = "With model: weights of the linear layers in bf16 or fp8 (fp8 needs FP8 tensor cores: "
            "not A100); the KV cache is bf16."},
    {.path = "gpu_memory_utilization", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN | FS_KF_MAX,
     .off = SVP(mem_util), .min = 0, .max = 1, .def = "0.9",
     .doc = "With model: the share of each GPU's memory for weights and KV cache (vLLM's "
            "gpu_memory_utilization)."},
    {.path = "prefill", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN,
     .off = SVP(prefill_tps), .min = 0, .unit = "tokens/s",
     .doc = "Prompt tokens per second of one replica while a request's prefill runs (required "
            "without model)."},
    {.path = "decode", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN,
     .off = SVP(decode_tps), .min = 0, .unit = "tokens/s",
     .doc = "Output tokens per second of one replica with a full batch (TPOT = max_batch / "
            "decode; required without model)."},
    {.path = "max_batch", .type = FS_KT_UINT, .flags = FS_KF_MIN, .off = SVP(max_batch),
     .size = sizeof(uint32_t), .min = 1, .def = "1",
     .doc = "Requests a replica serves at once (continuous batching slots; vLLM's max_num_seqs). "
            "With model: 256, or the sequences of 1,025 tokens its KV cache holds if fewer."},
    {.path = "decode_single", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = SVP(decode1_tps),
     .min = 0, .def = "0", .unit = "tokens/s",
     .doc = "Output tokens/s of one request decoding alone (request mode: a request's decode "
            "step is linear in the batch it joins, from 1/decode_single to max_batch/decode; "
            "0: always max_batch/decode)."},
    {.path = "kv_tokens", .type = FS_KT_UINT, .off = SVP(kv_tokens), .size = sizeof(uint64_t),
     .def = "0", .unit = "tokens",
     .doc = "KV cache of one replica in tokens (blocks of 16): admission needs free blocks, and "
            "a running sequence that cannot grow preempts the newest (recomputed later); "
            "0: unlimited."},
    {.path = "us_per_kv_token", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = SVP(us_per_kv_token),
     .min = 0, .def = "0", .unit = "us/token",
     .doc = "Step time's context term: an iteration takes this much longer per context token "
            "(KV) its decoding sequences attend to (docs/services.md \"Step time\"); 0: none."},
    {.path = "kv_context", .type = FS_KT_BOOL, .off = SVP(kv_context), .def = "false",
     .doc = "With model: the preset's step time grows with the context: us_per_kv_token from the "
            "roofline (KV bytes read per token per GPU over the HBM bandwidth) and decode, "
            "decode_single timed with no context (docs/services.md \"Step time\")."},
    {.path = "max_model_len", .type = FS_KT_UINT, .off = SVP(max_model_len),
     .size = sizeof(uint32_t), .def = "0", .unit = "tokens",
     .doc = "Longest sequence a replica takes (vLLM's max_model_len): a longer prompt is refused, "
            "and a KV cache (kv_tokens) must hold one; 0: with model, its context, else no limit."},
    {.path = "profile", .type = FS_KT_PATH, .off = SVP(profile),
     .doc = "A measured step-time profile (CSV: batch, prefill_tokens, context_tokens, step_us; "
            "docs/services.md \"A measured profile\"): the engine times iterations from it, "
            "overriding prefill, decode and the preset; prefill and decode not written are "
            "derived from it."},
};
static const fs_keytab_t svc_perf_keys = {"performance row", svc_perf_rows,
                                          sizeof svc_perf_rows / sizeof svc_perf_rows[0],
                                          sizeof(fs_svc_perf_cfg_t)};

#define SVL(f) offsetof(fs_svc_link_cfg_t, f)
static const fs_key_t svc_link_rows[] = {
    {.path = "prefill_pool", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED,
     .off = SVL(prefill_pool), .doc = "Pool of the prefill replica (cluster.pools[].name)."},
    {.path = "decode_pool", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED,
     .off = SVL(decode_pool), .doc = "Pool of the decode replica."},
    {.path = "bandwidth", .type = FS_KT_DOUBLE, .flags = FS_KF_REQUIRED | FS_KF_MIN_OPEN,
     .off = SVL(bandwidth), .min = 0, .unit = "bytes/s",
     .doc = "KV transfer bandwidth between a replica of the one and a replica of the other."},
};
static const fs_keytab_t svc_link_keys = {"KV transfer link", svc_link_rows,
                                          sizeof svc_link_rows / sizeof svc_link_rows[0],
                                          sizeof(fs_svc_link_cfg_t)};

#define SV(f) offsetof(fs_service_cfg_t, f)
static const fs_key_t service_rows[] = {
    {.path = "name", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = SV(name),
     .doc = "The service's name (/services, /service_buckets)."},
    {.path = "mode", .type = FS_KT_ENUM, .off = SV(mode), .names = svc_mode_names,
     .def = "request",
     .doc = "request: every request an event (exact); fluid: an M/G/c queue per service, "
            "updated at each rate or replica change (year-long runs)."},
    {.path = "gpus", .type = FS_KT_UINT, .flags = FS_KF_MIN, .off = SV(gpus),
     .size = sizeof(uint32_t), .min = 1, .def = "1",
     .doc = "GPUs of one replica (one pod, on one node); with mig, its MIG instances."},
    {.path = "mig", .type = FS_KT_STRING, .off = SV(mig),
     .doc = "MIG profile of a replica (`3g.40gb`; docs/mig.md): a replica is then one pod "
            "taking `gpus` instances of it on one node, only in pools whose `mig` layout has "
            "them; its performance rows are what one replica does on those instances."},
    {.path = "class", .type = FS_KT_UINT, .off = SV(job_class), .size = sizeof(uint32_t),
     .def = "0",
     .doc = "Job class of its replicas: its image and weight load (startup.images) and its "
            "activity (telemetry.activity)."},
    {.path = "priority", .type = FS_KT_UINT, .off = SV(priority), .size = sizeof(int32_t),
     .def = "1000",
     .doc = "Priority of its replicas (training jobs have 0 unless their trace says): a "
            "preempting policy preempts training for them."},
    {.path = "min_replicas", .type = FS_KT_UINT, .off = SV(min_replicas),
     .size = sizeof(uint32_t), .def = "1",
     .doc = "Fewest replicas (0: scale to zero; a request then brings one up)."},
    {.path = "max_replicas", .type = FS_KT_UINT, .off = SV(max_replicas),
     .size = sizeof(uint32_t), .def = "0", .doc = "Most replicas (0: min_replicas)."},
    {.path = "requests.process", .type = FS_KT_ENUM, .off = SV(process),
     .names = svc_process_names, .def = "poisson",
     .doc = "poisson; gamma (renewal with Gamma inter-arrivals, BurstGPT); trace (an Azure "
            "LLM inference CSV: TIMESTAMP, ContextTokens, GeneratedTokens; or a BurstGPT CSV)."},
    {.path = "requests.rate", .type = FS_KT_RATE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = SV(rate), .min = 0, .max = 1e6, .def = "0/s", .unit = "1/s",
     .doc = "Mean request rate (poisson, gamma: required, > 0), before the profile."},
    {.path = "requests.shape", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN_OPEN, .off = SV(shape),
     .min = 0, .def = "1",
     .doc = "gamma: shape of the inter-arrival times (1: Poisson; < 1: bursty, CV^2 = "
            "1/shape)."},
    {.path = "requests.profile.hourly", .type = FS_KT_SHARES, .off = SV(n_hourly),
     .off2 = SV(hourly_names), .off3 = SV(hourly),
     .doc = "Share of requests in each hour of the day {0..23: share}, as "
            "workload.synthetic.arrivals.profile.hourly."},
    {.path = "requests.profile.weekly", .type = FS_KT_SHARES, .off = SV(n_weekly),
     .off2 = SV(weekly_names), .off3 = SV(weekly),
     .doc = "Share on each day of the week {0..6: share}."},
    {.path = "requests.trace", .type = FS_KT_PATH, .off = SV(trace),
     .doc = "process trace: the request CSV (plain or gzip); times from its first row."},
    {.path = "requests.repeat", .type = FS_KT_BOOL, .off = SV(repeat), .def = "false",
     .doc = "process trace: replay it again from its start after its last row."},
    {.path = "requests.input", .type = FS_KT_DIST, .off = SV(input), .off2 = SV(input_cfg),
     .sub = &fs_keys_count_dist, .unit = "tokens",
     .doc = "Prompt tokens of a request (poisson, gamma)."},
    {.path = "requests.output", .type = FS_KT_DIST, .off = SV(output), .off2 = SV(output_cfg),
     .sub = &fs_keys_count_dist, .unit = "tokens",
     .doc = "Output tokens of a request (poisson, gamma)."},
    {.path = "requests.prefix.ids", .type = FS_KT_UINT, .off = SV(prefix_ids),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "Distinct shared prompt prefixes (0: none). poisson, gamma: each request carries "
            "one, drawn by requests.prefix.popularity; its length is the id's, capped at the "
            "request's prompt. trace: each request's id (1 to ids; 0 none) and length come "
            "from the trace's PrefixId, PrefixTokens columns (docs/services.md \"Prefix "
            "caching\")."},
    {.path = "requests.prefix.popularity", .type = FS_KT_ENUM, .off = SV(prefix_pop),
     .names = svc_pop_names, .def = "zipf",
     .doc = "How often each prefix id is drawn: zipf, P(id k) proportional to k^-s."},
    {.path = "requests.prefix.s", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = SV(prefix_s),
     .min = 0, .def = "1",
     .doc = "zipf: the exponent s (0: every id equally likely)."},
    {.path = "requests.prefix.tokens", .type = FS_KT_DIST, .off = SV(prefix_tokens),
     .off2 = SV(prefix_tokens_cfg), .sub = &fs_keys_count_dist, .unit = "tokens",
     .doc = "Length of each prefix id in tokens, drawn once per id at the start."},
    {.path = "performance", .type = FS_KT_LIST, .off = SV(perf), .off2 = SV(n_perf),
     .sub = &svc_perf_keys,
     .doc = "Per GPU model a replica may use: prefill and decode tokens/s and the batch "
            "limit, written or from a preset (model). Its replicas go only to pools of these GPU "
            "models."},
    {.path = "router", .type = FS_KT_ENUM, .off = SV(router), .names = svc_router_names,
     .def = "least_loaded",
     .doc = "engine v1 / v0: where a request goes. least_loaded: at arrival, to the ready "
            "replica with the fewest requests on it, into that replica's own queue (vLLM "
            "instances behind a least-loaded router); round_robin: at arrival, to the next ready "
            "replica in turn; prefix_affinity: a request with a prefix to the least loaded ready "
            "replica that has it cached, else as least_loaded; central: one queue for the service, a request sent to the least "
            "loaded replica with room in its batch (max_batch) when one has it (M/G/c)."},
    {.path = "engine.scheduler", .type = FS_KT_ENUM, .off = SV(engine_sched),
     .names = svc_sched_names, .def = "v1",
     .doc = "request mode: the replica's engine. v1: vLLM's current engine at iteration level "
            "(every iteration decodes the running sequences, then adds prefill chunks up to the "
            "token budget); v0: vLLM's older engine (an iteration either prefills newly admitted "
            "prompts, pausing decode, or decodes); slots: issue 16's model, max_batch independent "
            "slots each prefilling at the full rate, which overstates prefill capacity "
            "max_batch times (docs/validation.md)."},
    {.path = "engine.max_num_batched_tokens", .type = FS_KT_UINT, .flags = FS_KF_MIN,
     .off = SV(max_tokens), .size = sizeof(uint64_t), .min = 1, .def = "2048",
     .unit = "tokens",
     .doc = "Token budget of an iteration (vLLM's max_num_batched_tokens); at least every "
            "performance row's max_batch."},
    {.path = "autoscale.metric", .type = FS_KT_ENUM, .off = SV(metric), .names = hpa_metric_names,
     .def = "none",
     .doc = "HPA target metric per replica: concurrency (requests in the service per replica), "
            "queue (requests waiting per replica), utilization (busy batch slots / slots); "
            "none: min_replicas always."},
    {.path = "autoscale.target", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = SV(target), .min = 0, .def = "0",
     .doc = "The metric's target value per replica (> 0; required with a metric)."},
    {.path = "autoscale.tolerance", .type = FS_KT_PROB, .off = SV(tolerance), .def = "0.1",
     .doc = "No scaling while the metric is within this fraction of the target (HPA 0.1)."},
    {.path = "autoscale.sync", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN, .off = SV(sync),
     .min = 0, .def = "15s", .unit = "s",
     .doc = "HPA sync period (--horizontal-pod-autoscaler-sync-period, 15 s)."},
    {.path = "autoscale.scale_down_window", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = SV(down_window), .min = 0, .def = "5m", .unit = "s",
     .doc = "Scale-down stabilisation window: the largest recommendation in it wins (300 s)."},
    {.path = "autoscale.scale_up_window", .type = FS_KT_DURATION, .flags = FS_KF_MIN,
     .off = SV(up_window), .min = 0, .def = "0s", .unit = "s",
     .doc = "Scale-up stabilisation window: the smallest recommendation in it wins (0 s)."},
    {.path = "slo.ttft", .type = FS_KT_DURATION, .flags = FS_KF_MIN_OPEN, .off = SV(slo_ttft),
     .min = 0, .def = "2s", .unit = "s", .doc = "Time to first token a request must meet."},
    {.path = "slo.tpot", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = SV(slo_tpot),
     .min = 0, .def = "0s", .unit = "s", .doc = "Time per output token it must meet (0: none)."},
    {.path = "disaggregated.prefill.replicas", .type = FS_KT_UINT, .off = SV(pd_prefill),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "Disaggregated serving (DistServe, Splitwise; docs/services.md \"Disaggregated "
            "serving\"): replicas that only prefill. A request goes (router) to one; its first "
            "token comes at the end of its prefill, then its KV cache moves to a decode "
            "replica. The groups replace min_replicas and max_replicas (fixed counts)."},
    {.path = "disaggregated.prefill.gpu", .type = FS_KT_NAME, .off = SV(pd_prefill_gpu),
     .name_at = gpu_model_at,
     .doc = "GPU model of the prefill replicas (its performance row and pools); not given: any "
            "row's."},
    {.path = "disaggregated.decode.replicas", .type = FS_KT_UINT, .off = SV(pd_decode),
     .size = sizeof(uint32_t), .def = "0",
     .doc = "Replicas that only decode: a sequence whose KV cache arrived joins the batch; one "
            "preempted goes back to a prefill replica to be recomputed."},
    {.path = "disaggregated.decode.gpu", .type = FS_KT_NAME, .off = SV(pd_decode_gpu),
     .name_at = gpu_model_at, .doc = "GPU model of the decode replicas; not given: any row's."},
    {.path = "disaggregated.kv_transfer.bandwidth", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = SV(pd_bw), .min = 0, .def = "0", .unit = "bytes/s",
     .doc = "KV cache bytes/s from a prefill to a decode replica (required, > 0, when "
            "disaggregated): a transfer takes bytes_per_token x its context tokens / bandwidth; "
            "transfers do not contend."},
    {.path = "disaggregated.kv_transfer.bytes_per_token", .type = FS_KT_DOUBLE,
     .flags = FS_KF_MIN, .off = SV(pd_kv_bytes), .min = 0, .def = "0", .unit = "bytes",
     .doc = "KV cache bytes of one token (the whole model, all layers); 0: the preset's (a "
            "performance row with model)."},
    {.path = "disaggregated.kv_transfer.links", .type = FS_KT_LIST, .off = SV(pd_links),
     .off2 = SV(n_pd_links), .sub = &svc_link_keys,
     .doc = "Bandwidth per (prefill pool, decode pool) pair, overriding bandwidth for it."},
};
static const fs_keytab_t service_keys = {"service", service_rows,
                                         sizeof service_rows / sizeof service_rows[0],
                                         sizeof(fs_service_cfg_t)};

#define NG(f) offsetof(fs_nodegroup_cfg_t, f)
static const fs_key_t nodegroup_rows[] = {
    {.path = "pool", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = NG(pool),
     .doc = "The pool that is the node group (its nodes is the most the group can have)."},
    {.path = "min", .type = FS_KT_UINT, .off = NG(min), .size = sizeof(uint32_t), .def = "0",
     .doc = "Nodes always provisioned; the group starts with them."},
    {.path = "max", .type = FS_KT_UINT, .off = NG(max), .size = sizeof(uint32_t), .def = "0",
     .doc = "Most nodes provisioned (0: the pool's nodes)."},
    {.path = "provision", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = NG(provision),
     .min = 0, .def = "2m", .unit = "s",
     .doc = "From the scale-up decision to the node Ready (cloud providers take about 1-3 min; "
            "with provisioner karpenter, not given: 35s, Karpenter's ~30-40 s; docs/models.md)."},
    {.path = "gpu_ready", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = NG(gpu_ready),
     .min = 0, .def = "1m", .unit = "s",
     .doc = "From node Ready to its GPUs allocatable (driver and device plugin, about 1 min)."},
    {.path = "provision_failure", .type = FS_KT_PROB, .off = NG(provision_failure), .def = "0",
     .doc = "Probability that a scale-up of the group fails (a stock-out: its nodes never "
            "register and are abandoned after max_node_provision_time; cluster-autoscaler)."},
};
static const fs_keytab_t nodegroup_keys = {"node group", nodegroup_rows,
                                           sizeof nodegroup_rows / sizeof nodegroup_rows[0],
                                           sizeof(fs_nodegroup_cfg_t)};

static const fs_keytab_t speed_keys = {"speed", speed_rows,
                                       sizeof speed_rows / sizeof speed_rows[0],
                                       sizeof(fs_speed_cfg_t)};

#define FC(f) offsetof(fs_fail_component_cfg_t, f)
static const fs_key_t fail_component_rows[] = {
    {.path = "kind", .type = FS_KT_ENUM, .flags = FS_KF_REQUIRED, .off = FC(kind),
     .names = fail_kind_names,
     .doc = "The unit that fails: gpu, node (host), link (NIC/cable: its node), or domain, rack, "
            "power (= rack), leaf, spine: every node below goes down."},
    {.path = "tbf", .type = FS_KT_DIST, .flags = FS_KF_REQUIRED, .off = FC(tbf), .off2 = FC(tbf_cfg),
     .sub = &fs_keys_dist, .unit = "s",
     .doc = "Time between failures of ONE unit (exponential, weibull with shape < 1 for a "
            "decreasing hazard, lognormal, empirical, ...)."},
    {.path = "pool", .type = FS_KT_STRING, .off = FC(pool),
     .doc = "Only the units of this pool (e.g. spot interruptions of a cloud pool)."},
    {.path = "causes", .type = FS_KT_SHARES, .off = FC(n_causes), .off2 = FC(cause_names),
     .off3 = FC(cause_shares),
     .doc = "Cause shares {name: share} drawn at each failure (empty: the kind's name)."},
};
static const fs_keytab_t fail_component_keys = {"failure component", fail_component_rows,
                                                sizeof fail_component_rows /
                                                    sizeof fail_component_rows[0],
                                                sizeof(fs_fail_component_cfg_t)};

#define FCA(f) offsetof(fs_fail_cause_cfg_t, f)
static const fs_key_t fail_cause_rows[] = {
    {.path = "name", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = FCA(name),
     .doc = "Cause name (as in the components' shares; at most 23 characters)."},
    {.path = "repair", .type = FS_KT_ENUM, .off = FCA(repair), .names = cause_repair_names,
     .def = "xid",
     .doc = "soft (reset, reboot), hard (replacement) or none (the node is back at once; its "
            "jobs were still hit); xid: the path of the immediate action NVIDIA's Xid catalog "
            "gives the cause's xid (docs/failures.md), which must then be given."},
    {.path = "xid", .type = FS_KT_UINT, .off = FCA(xid), .size = sizeof(uint32_t), .def = "0",
     .doc = "NVIDIA Xid code of this cause (48 double-bit ECC, 79 fallen off the bus, ...; the "
            "codes of docs/failures.md \"Xid codes\"), recorded in /failures; 0: none."},
    {.path = "time", .type = FS_KT_DIST, .off = FCA(time), .off2 = FCA(time_cfg),
     .sub = &fs_keys_dist, .unit = "s",
     .doc = "Repair time of this cause (absent: the path's, failures.repair.soft or .hard)."},
};
static const fs_keytab_t fail_cause_keys = {"failure cause", fail_cause_rows,
                                            sizeof fail_cause_rows / sizeof fail_cause_rows[0],
                                            sizeof(fs_fail_cause_cfg_t)};

#define FPL(f) offsetof(fs_fail_planned_cfg_t, f)
static const fs_key_t fail_planned_rows[] = {
    {.path = "at", .type = FS_KT_DURATION, .flags = FS_KF_REQUIRED | FS_KF_MIN, .off = FPL(at),
     .min = 0, .unit = "s", .doc = "When the outage starts."},
    {.path = "kind", .type = FS_KT_ENUM, .flags = FS_KF_REQUIRED, .off = FPL(kind),
     .names = fail_kind_names, .doc = "Kind of the unit (as in components)."},
    {.path = "unit", .type = FS_KT_UINT, .off = FPL(unit), .size = sizeof(uint32_t), .def = "0",
     .doc = "Unit id at that level: nodes and topology units are numbered from 0 in pool "
            "order, GPUs node by node (one pool: node x gpus_per_node + its index)."},
    {.path = "duration", .type = FS_KT_DURATION, .flags = FS_KF_REQUIRED | FS_KF_MIN, .off = FPL(duration),
     .min = 0, .unit = "s", .doc = "How long the unit is out."},
    {.path = "how", .type = FS_KT_ENUM, .off = FPL(how), .names = planned_how_names, .def = "fail",
     .doc = "fail: running jobs below are interrupted; drain: they go on, nothing new starts."},
    {.path = "cause", .type = FS_KT_STRING, .off = FPL(cause), .def = "planned",
     .doc = "Cause written to /failures."},
};
static const fs_keytab_t fail_planned_keys = {"planned outage", fail_planned_rows,
                                              sizeof fail_planned_rows / sizeof fail_planned_rows[0],
                                              sizeof(fs_fail_planned_cfg_t)};

#define VQ(f) offsetof(fs_volcano_queue_cfg_t, f)
static const fs_key_t volcano_queue_rows[] = {
    {.path = "name", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = VQ(name),
     .doc = "Queue name (unique)."},
    {.path = "weight", .type = FS_KT_UINT, .flags = FS_KF_MIN | FS_KF_MAX, .off = VQ(weight),
     .size = sizeof(uint32_t), .min = 1, .max = 1000000, .def = "1",
     .doc = "spec.weight: share of the cluster in the proportion plugin's water-filling."},
    {.path = "capability", .type = FS_KT_UINT, .off = VQ(capability), .size = sizeof(uint32_t),
     .def = "0", .doc = "spec.capability in GPUs: the queue never holds more (0: no cap)."},
    {.path = "guarantee", .type = FS_KT_UINT, .off = VQ(guarantee), .size = sizeof(uint32_t),
     .def = "0", .doc = "spec.guarantee in GPUs: reserved for the queue (0: none)."},
    {.path = "reclaimable", .type = FS_KT_BOOL, .off = VQ(reclaimable), .def = "true",
     .doc = "spec.reclaimable: other queues may reclaim its GPUs beyond its deserved share."},
    {.path = "tenants", .type = FS_KT_STRING, .off = VQ(tenants),
     .doc = "Tenants whose jobs go to this queue, comma-separated (absent: the tenant with the "
            "queue's name)."},
};
static const fs_keytab_t volcano_queue_keys = {"volcano queue", volcano_queue_rows,
                                               sizeof volcano_queue_rows /
                                                   sizeof volcano_queue_rows[0],
                                               sizeof(fs_volcano_queue_cfg_t)};

#define PS(f) offsetof(fs_plan_slo_cfg_t, f)
static const fs_key_t plan_slo_rows[] = {
    {.path = "metric", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = PS(metric),
     .doc = "A /summary column (wait_p95, wait_prob, utilization, ettr_mean, ...) or "
            "finished_share (jobs completed / submitted)."},
    {.path = "max", .type = FS_KT_STRING, .off = PS(max),
     .doc = "Upper bound: a number, or a duration (1h) for metrics in seconds."},
    {.path = "min", .type = FS_KT_STRING, .off = PS(min),
     .doc = "Lower bound, written like max."},
};
static const fs_keytab_t plan_slo_keys = {"plan SLO", plan_slo_rows,
                                          sizeof plan_slo_rows / sizeof plan_slo_rows[0],
                                          sizeof(fs_plan_slo_cfg_t)};

#define PC(f) offsetof(fs_plan_choice_cfg_t, f)
static const fs_key_t plan_choice_rows[] = {
    {.path = "name", .type = FS_KT_STRING, .off = PC(name),
     .doc = "Label of the choice (default: the pool, and /GPU when gpu is given)."},
    {.path = "pool", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = PC(pool),
     .doc = "The cluster.pools name whose node count is searched."},
    {.path = "gpu", .type = FS_KT_NAME, .off = PC(gpu), .name_at = gpu_model_at,
     .doc = "GPU model given to that pool (absent: the pool's own)."},
    {.path = "gpus_per_node", .type = FS_KT_UINT, .flags = FS_KF_MAX, .off = PC(gpus_per_node),
     .size = sizeof(uint32_t), .max = 1024, .def = "0",
     .doc = "GPUs per node given to that pool (0: the pool's own)."},
    {.path = "nodes.from", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED | FS_KF_MIN | FS_KF_MAX,
     .off = PC(from), .size = sizeof(uint32_t), .min = 1, .max = 10000000,
     .doc = "Smallest node count."},
    {.path = "nodes.to", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED | FS_KF_MIN | FS_KF_MAX,
     .off = PC(to), .size = sizeof(uint32_t), .min = 1, .max = 10000000,
     .doc = "Largest node count (>= from)."},
    {.path = "nodes.step", .type = FS_KT_UINT, .flags = FS_KF_MIN | FS_KF_MAX, .off = PC(step),
     .size = sizeof(uint32_t), .min = 1, .max = 10000000, .def = "1",
     .doc = "Step between node counts."},
    {.path = "set", .type = FS_KT_LIST, .off = PC(sets), .off2 = PC(n_sets),
     .sub = &plan_set_keys,
     .doc = "Overrides of this choice, {key: K, value: V} each (e.g. cost.pools.0.billing: "
            "owned vs on_demand)."},
};
static const fs_keytab_t plan_choice_keys = {"plan choice", plan_choice_rows,
                                             sizeof plan_choice_rows / sizeof plan_choice_rows[0],
                                             sizeof(fs_plan_choice_cfg_t)};

#define PO(f) offsetof(fs_plan_set_cfg_t, f)
static const fs_key_t plan_set_rows[] = {
    {.path = "key", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = PO(key),
     .doc = "Dotted path of any scenario key."},
    {.path = "value", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = PO(value),
     .doc = "Its value, as written for that key."},
};
static const fs_keytab_t plan_set_keys = {"plan override", plan_set_rows,
                                          sizeof plan_set_rows / sizeof plan_set_rows[0],
                                          sizeof(fs_plan_set_cfg_t)};

#define SP(f) offsetof(fs_sweep_param_cfg_t, f)
static const fs_key_t sweep_param_rows[] = {
    {.path = "key", .type = FS_KT_RAW, .flags = FS_KF_REQUIRED, .off = SP(key),
     .doc = "Dotted path of the key to vary: any scenario key (scheduler.mode, "
            "cluster.pools.0.nodes, workload.synthetic.duration.median, ...)."},
    {.path = "values", .type = FS_KT_RAW, .off = SP(values),
     .doc = "Its values, a list ([strict, best_effort]) written as for the key itself."},
    {.path = "range", .type = FS_KT_CHOICE, .flags = FS_KF_OPTIONAL, .off = SP(has_range),
     .choice = 1, .doc = "Instead of values: evenly spaced values of a numeric key."},
    {.path = "range.from", .type = FS_KT_RAW, .flags = FS_KF_REQUIRED, .off = SP(from),
     .doc = "First value, in the key's unit (30/h, 1d, 64)."},
    {.path = "range.to", .type = FS_KT_RAW, .flags = FS_KF_REQUIRED, .off = SP(to),
     .doc = "Last value."},
    {.path = "range.steps", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED | FS_KF_MIN | FS_KF_MAX,
     .off = SP(steps), .size = sizeof(uint32_t), .min = 2, .max = 1000000,
     .doc = "Number of values, ends included."},
    {.path = "range.scale", .type = FS_KT_ENUM, .off = SP(scale), .names = scale_names,
     .def = "linear", .doc = "linear: equal differences; log: equal ratios (ends > 0)."},
};

/* Row order = bit order of fs_dist_cfg_t.given (fs_config.h). */
#define DF(f) offsetof(fs_dist_t, f)
#define DA(f) offsetof(fs_dist_cfg_t, f)
enum { D_DIST, D_VALUE, D_MEAN, D_MEDIAN, D_SCALE, D_LO, D_HI, D_SIGMA, D_SHAPE, D_PATH, D_COLUMN };
/* The rows of a distribution block; T and U: the type and unit of its
 * values (durations, or plain counts such as tokens). */
#define DIST_ROWS(T, U) \
    [D_DIST] = {.path = "dist", .type = FS_KT_ENUM, .flags = FS_KF_REQUIRED, .off = DF(kind), \
                .names = dist_names, .doc = "The distribution."}, \
    [D_VALUE] = {.path = "value", .type = T, .off = DF(value), .unit = U, \
                 .doc = "constant: the value."}, \
    [D_MEAN] = {.path = "mean", .type = T, .off = DF(mean), .unit = U, \
                .doc = "exponential: the mean; lognormal, weibull, gamma: the mean instead of " \
                       "median or scale."}, \
    [D_MEDIAN] = {.path = "median", .type = T, .off = DF(median), .unit = U, \
                  .doc = "lognormal: the median (or give mean)."}, \
    [D_SCALE] = {.path = "scale", .type = T, .off = DF(scale), .unit = U, \
                 .doc = "weibull, gamma: the scale (or give mean)."}, \
    [D_LO] = {.path = "lo", .type = T, .off = DF(lo), .unit = U, \
              .doc = "uniform: the lower end."}, \
    [D_HI] = {.path = "hi", .type = T, .off = DF(hi), .unit = U, \
              .doc = "uniform: the upper end."}, \
    [D_SIGMA] = {.path = "sigma", .type = FS_KT_DOUBLE, .off = DF(sigma), \
                 .doc = "lognormal: standard deviation of the logarithm (>= 0)."}, \
    [D_SHAPE] = {.path = "shape", .type = FS_KT_DOUBLE, .off = DF(shape), \
                 .doc = "weibull, gamma: the shape k (> 0)."}, \
    [D_PATH] = {.path = "path", .type = FS_KT_PATH, .flags = FS_KF_AUX, .off = DA(path), \
                .doc = "empirical: file of values in seconds, one per line (a one-word header line " \
                       "and '#' comments are skipped), or a CSV with a header (then give column); " \
                       "relative to the scenario file."}, \
    [D_COLUMN] = {.path = "column", .type = FS_KT_STRING, .flags = FS_KF_AUX, .off = DA(column), \
                  .doc = "empirical: the CSV column to read."},
static const fs_key_t dist_rows[] = {DIST_ROWS(FS_KT_SECONDS, "s")};

/* The same block for counts (tokens): plain numbers, no unit. */
static const fs_key_t count_dist_rows[] = {DIST_ROWS(FS_KT_DOUBLE, "")};

#define BIT(i) (1u << (i))
unsigned fs_keys_dist_params(int kind)
{
    switch (kind) {
    case FS_DIST_CONSTANT: return BIT(D_DIST) | BIT(D_VALUE);
    case FS_DIST_EXPONENTIAL: return BIT(D_DIST) | BIT(D_MEAN);
    case FS_DIST_LOGNORMAL: return BIT(D_DIST) | BIT(D_MEAN) | BIT(D_MEDIAN) | BIT(D_SIGMA);
    case FS_DIST_WEIBULL:
    case FS_DIST_GAMMA: return BIT(D_DIST) | BIT(D_MEAN) | BIT(D_SCALE) | BIT(D_SHAPE);
    case FS_DIST_UNIFORM: return BIT(D_DIST) | BIT(D_LO) | BIT(D_HI);
    case FS_DIST_EMPIRICAL: return BIT(D_DIST) | BIT(D_PATH) | BIT(D_COLUMN);
    default: return 0;
    }
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
const fs_keytab_t fs_keys_config = {"scenario", config_rows, COUNT(config_rows), sizeof(fs_config_t)};
const fs_keytab_t fs_keys_pool = {"pool", pool_rows, COUNT(pool_rows), sizeof(fs_pool_cfg_t)};
const fs_keytab_t fs_keys_dist = {"distribution", dist_rows, COUNT(dist_rows), sizeof(fs_dist_t)};
static const fs_keytab_t fs_keys_count_dist = {"count distribution", count_dist_rows,
                                               COUNT(count_dist_rows), sizeof(fs_dist_t)};
static const fs_keytab_t fs_keys_sweep_param = {"sweep parameter", sweep_param_rows,
                                                COUNT(sweep_param_rows), sizeof(fs_sweep_param_cfg_t)};

/* ---- row functions ------------------------------------------------------- */

#define FIELD(base, off, T) ((T *)(void *)((char *)(base) + (off)))

int fs_keys_is_scalar(const fs_key_t *k)
{
    switch (k->type) {
    case FS_KT_DIST:
    case FS_KT_MIX:
    case FS_KT_SHARES:
    case FS_KT_NAMES:
    case FS_KT_LIST:
    case FS_KT_CHOICE:
    case FS_KT_RAW:
        return 0;
    default:
        return 1;
    }
}

const char *fs_keys_name(const fs_key_t *k, size_t i)
{
    if (k->type == FS_KT_NAME)
        return k->name_at(i);
    if (k->type != FS_KT_ENUM)
        return NULL;
    for (size_t j = 0; j <= i; j++)
        if (!k->names[j])
            return NULL;
    return k->names[i];
}

/* "a, b, c" of the allowed names. */
static void names_list(const fs_key_t *k, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    const char *s;
    for (size_t i = 0; (s = fs_keys_name(k, i)) != NULL; i++) {
        if (!*s)
            continue;
        int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", s);
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
}

const char *fs_keys_type_name(const fs_key_t *k)
{
    switch (k->type) {
    case FS_KT_BOOL: return "bool";
    case FS_KT_UINT: return "integer";
    case FS_KT_DOUBLE: return "number";
    case FS_KT_PROB: return "probability";
    case FS_KT_STRING: return "string";
    case FS_KT_PATH: return "path";
    case FS_KT_ENUM: return "enum";
    case FS_KT_NAME: return "name";
    case FS_KT_DURATION:
    case FS_KT_SECONDS: return "duration";
    case FS_KT_RATE: return "rate";
    case FS_KT_DIST: return "distribution";
    case FS_KT_MIX: return "map int: probability";
    case FS_KT_SHARES: return "map name: share";
    case FS_KT_NAMES: return "map name: name";
    case FS_KT_LIST: return "list";
    case FS_KT_CHOICE: return "block";
    case FS_KT_RAW: return "value or list";
    default: return "?";
    }
}

/* The noun of range messages: "a duration > 0s". */
static const char *short_name(const fs_key_t *k)
{
    switch (k->type) {
    case FS_KT_UINT: return "a whole number";
    case FS_KT_DOUBLE: return "a number";
    case FS_KT_PROB: return "a probability";
    case FS_KT_DURATION:
    case FS_KT_SECONDS: return "a duration";
    case FS_KT_RATE: return "a rate";
    case FS_KT_LIST: return "a list with a number of items";
    case FS_KT_MIX: return "GPU counts";
    default: return "a value";
    }
}

static char *bound_text(const fs_key_t *k, double v, char *buf, size_t n)
{
    switch (k->type) {
    case FS_KT_DURATION:
        return fs_units_format_duration((fs_time_t)v, buf, n);
    case FS_KT_RATE:
        return fs_units_format_rate(v, buf, n);
    case FS_KT_DOUBLE:
    case FS_KT_PROB:
    case FS_KT_SECONDS:
        return fs_units_format_number(v, buf, n);
    default:
        snprintf(buf, n, "%.0f", v);
        return buf;
    }
}

const char *fs_keys_bounds(const fs_key_t *k, char *buf, size_t n)
{
    char a[FS_UNITS_BUF], b[FS_UNITS_BUF];
    unsigned f = k->flags;
    double lo = k->min, hi = k->max;
    if (k->type == FS_KT_PROB) {
        f |= FS_KF_MIN | FS_KF_MAX;
        lo = 0;
        hi = 1;
    }
    int has_lo = (f & (FS_KF_MIN | FS_KF_MIN_OPEN)) != 0, has_hi = (f & FS_KF_MAX) != 0;
    if (has_lo)
        bound_text(k, lo, a, sizeof a);
    if (has_hi)
        bound_text(k, hi, b, sizeof b);
    if (has_lo && has_hi && !(f & FS_KF_MIN_OPEN))
        snprintf(buf, n, "from %s to %s", a, b);
    else if (has_lo && has_hi)
        snprintf(buf, n, "> %s and <= %s", a, b);
    else if (has_lo)
        snprintf(buf, n, "%s %s", (f & FS_KF_MIN_OPEN) ? ">" : ">=", a);
    else if (has_hi)
        snprintf(buf, n, "<= %s", b);
    else
        buf[0] = '\0';
    return buf;
}

const char *fs_keys_expect(const fs_key_t *k, char *buf, size_t n)
{
    char bounds[160], names[512];
    fs_keys_bounds(k, bounds, sizeof bounds);
    switch (k->type) {
    case FS_KT_BOOL:
        snprintf(buf, n, "true or false");
        break;
    case FS_KT_UINT:
        snprintf(buf, n, "a whole number%s%s", *bounds ? " " : " >= ", *bounds ? bounds : "0");
        break;
    case FS_KT_DOUBLE:
        snprintf(buf, n, "a number%s%s", *bounds ? " " : "", bounds);
        break;
    case FS_KT_PROB:
        snprintf(buf, n, "a probability from 0 to 1");
        break;
    case FS_KT_STRING:
        snprintf(buf, n, "a non-empty string");
        break;
    case FS_KT_PATH:
        snprintf(buf, n, "a file path");
        break;
    case FS_KT_ENUM:
    case FS_KT_NAME:
        names_list(k, names, sizeof names);
        snprintf(buf, n, "one of: %s", names);
        break;
    case FS_KT_DURATION:
    case FS_KT_SECONDS:
        snprintf(buf, n, "a duration such as 90s, 15m, 2h or 30d%s%s", *bounds ? ", " : "", bounds);
        break;
    case FS_KT_RATE:
        snprintf(buf, n, "a rate such as 40/h, 3/min or 0.5/s%s%s", *bounds ? ", " : "", bounds);
        break;
    case FS_KT_DIST:
        snprintf(buf, n, "a distribution block such as {dist: lognormal, median: 45m, sigma: 1.5}");
        break;
    case FS_KT_MIX:
        snprintf(buf, n, "a map of GPU counts to probabilities such as {1: 0.5, 8: 0.5}");
        break;
    case FS_KT_SHARES:
        snprintf(buf, n, "a map of names to shares such as {research: 0.7, prod: 0.3}");
        break;
    case FS_KT_NAMES:
        snprintf(buf, n, "a map of names to names such as {alice: vision, bob: nlp}");
        break;
    case FS_KT_LIST:
        snprintf(buf, n, "a list of blocks (one '- {...}' per item)");
        break;
    case FS_KT_RAW:
        snprintf(buf, n, "a value or a list of values such as [a, b]");
        break;
    default:
        snprintf(buf, n, "a block of keys");
        break;
    }
    return buf;
}

/* Checks the bounds of v; message "TEXT is out of range (expected ...)". */
static int check_bounds(const fs_key_t *k, double v, const char *text, fs_error_t *err)
{
    unsigned f = k->flags;
    int bad = ((f & FS_KF_MIN) && v < k->min) || ((f & FS_KF_MIN_OPEN) && !(v > k->min)) ||
              ((f & FS_KF_MAX) && v > k->max) || (k->type == FS_KT_PROB && (v < 0 || v > 1));
    if (!bad)
        return 0;
    char bounds[160];
    return fs_error_set(err, FS_EINVAL, "%s is out of range (expected %s %s)", text, short_name(k),
                        fs_keys_bounds(k, bounds, sizeof bounds));
}

static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    for (size_t i = 0; i < 3; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

static int parse_uint(const char *s, uint64_t maxv, uint64_t *out)
{
    const char *p = s;
    if (*p == '+')
        p++;
    if (!*p)
        return -1;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return -1;
    errno = 0;
    unsigned long long v = strtoull(p, NULL, 10);
    if (errno == ERANGE || v > maxv)
        return -2;
    *out = v;
    return 0;
}

static int set_string(const fs_key_t *k, void *base, const char *s, fs_error_t *err)
{
    char *d = fs_strdup(s);
    if (!d)
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    char **slot = FIELD(base, k->off, char *);
    fs_free(*slot);
    *slot = d;
    return 0;
}

int fs_keys_parse(const fs_key_t *k, const char *text, void *base, fs_error_t *err)
{
    char exp[600];
    int rc;
    switch (k->type) {
    case FS_KT_BOOL: {
        int v;
        if (parse_bool(text, &v) != 0)
            return fs_error_set(err, FS_EINVAL, "'%s' is not true or false", text);
        *FIELD(base, k->off, int) = v;
        return 0;
    }
    case FS_KT_UINT: {
        uint64_t v, maxv = k->size == sizeof(uint32_t) ? UINT32_MAX : UINT64_MAX;
        rc = parse_uint(text, maxv, &v);
        if (rc == -1)
            return fs_error_set(err, FS_EINVAL, "'%s' is not a whole number (expected %s)", text,
                                fs_keys_expect(k, exp, sizeof exp));
        if (rc == -2)
            return fs_error_set(err, FS_EINVAL, "%s is out of range (expected %s)", text,
                                fs_keys_expect(k, exp, sizeof exp));
        if ((rc = check_bounds(k, (double)v, text, err)) != 0)
            return rc;
        if (k->size == sizeof(uint32_t))
            *FIELD(base, k->off, uint32_t) = (uint32_t)v;
        else
            *FIELD(base, k->off, uint64_t) = v;
        return 0;
    }
    case FS_KT_DOUBLE:
    case FS_KT_PROB: {
        double v;
        fs_error_t e;
        if ((rc = fs_units_parse_number(text, &v, &e)) != 0)
            return fs_error_set(err, rc, "%s (expected %s)", e.msg, fs_keys_expect(k, exp, sizeof exp));
        if ((rc = check_bounds(k, v, text, err)) != 0)
            return rc;
        *FIELD(base, k->off, double) = v;
        return 0;
    }
    case FS_KT_STRING:
    case FS_KT_PATH:
        if (!*text)
            return fs_error_set(err, FS_EINVAL, "expected %s", fs_keys_expect(k, exp, sizeof exp));
        return set_string(k, base, text, err);
    case FS_KT_ENUM:
        for (size_t i = 0; k->names[i]; i++)
            if (*k->names[i] && strcmp(k->names[i], text) == 0) {
                *FIELD(base, k->off, int) = (int)i;
                return 0;
            }
        return fs_error_set(err, FS_EINVAL, "'%s' is not %s", text, fs_keys_expect(k, exp, sizeof exp));
    case FS_KT_NAME: {
        const char *s;
        for (size_t i = 0; (s = k->name_at(i)) != NULL; i++)
            if (strcasecmp(s, text) == 0)
                return set_string(k, base, s, err);
        return fs_error_set(err, FS_EINVAL, "'%s' is not %s", text, fs_keys_expect(k, exp, sizeof exp));
    }
    case FS_KT_DURATION:
    case FS_KT_SECONDS: {
        fs_time_t t;
        if ((rc = fs_units_parse_duration(text, &t, err)) != 0)
            return rc;
        if ((rc = check_bounds(k, (double)t, text, err)) != 0)
            return rc;
        if (k->type == FS_KT_DURATION)
            *FIELD(base, k->off, fs_time_t) = t;
        else
            *FIELD(base, k->off, double) = (double)t / 1e6;
        return 0;
    }
    case FS_KT_RATE: {
        double v;
        if ((rc = fs_units_parse_rate(text, &v, err)) != 0)
            return rc;
        if ((rc = check_bounds(k, v, text, err)) != 0)
            return rc;
        *FIELD(base, k->off, double) = v;
        return 0;
    }
    default:
        return fs_error_set(err, FS_EINTERNAL, "key '%s' is not a scalar", k->path);
    }
}

char *fs_keys_format(const fs_key_t *k, const void *base, char *buf, size_t n)
{
    const char *b = base;
    buf[0] = '\0';
    switch (k->type) {
    case FS_KT_BOOL:
        snprintf(buf, n, "%s", *(const int *)(const void *)(b + k->off) ? "true" : "false");
        break;
    case FS_KT_UINT:
        if (k->size == sizeof(uint32_t))
            snprintf(buf, n, "%" PRIu32, *(const uint32_t *)(const void *)(b + k->off));
        else
            snprintf(buf, n, "%" PRIu64, *(const uint64_t *)(const void *)(b + k->off));
        break;
    case FS_KT_DOUBLE:
    case FS_KT_PROB:
    case FS_KT_RATE: {
        double v = *(const double *)(const void *)(b + k->off);
        if (k->type == FS_KT_RATE)
            fs_units_format_rate(v, buf, n);
        else
            fs_units_format_number(v, buf, n);
        break;
    }
    case FS_KT_ENUM: {
        int v = *(const int *)(const void *)(b + k->off);
        const char *s = v >= 0 ? fs_keys_name(k, (size_t)v) : NULL;
        snprintf(buf, n, "%s", s ? s : "?");
        break;
    }
    case FS_KT_DURATION:
        fs_units_format_duration(*(const fs_time_t *)(const void *)(b + k->off), buf, n);
        break;
    case FS_KT_SECONDS:
        fs_units_format_duration(fs_time_from_s(*(const double *)(const void *)(b + k->off)), buf, n);
        break;
    default:
        break;
    }
    return buf;
}

int fs_keys_defaults(const fs_keytab_t *t, void *base, fs_error_t *err)
{
    int first = 0;
    for (size_t i = 0; i < t->n; i++) {
        const fs_key_t *k = &t->rows[i];
        if (!k->def || !fs_keys_is_scalar(k))
            continue;
        fs_error_t e;
        int rc = fs_keys_parse(k, k->def, base, &e);
        if (rc == FS_EINVAL)
            rc = fs_error_set(&e, FS_EINTERNAL, "key table: the default '%s' of '%s' does not parse: %s",
                              k->def, k->path, e.msg);
        if (rc && !first) {
            first = rc;
            if (err)
                *err = e;
        }
    }
    return first;
}

void fs_keys_release(const fs_keytab_t *t, void *base)
{
    for (size_t i = 0; i < t->n; i++) {
        const fs_key_t *k = &t->rows[i];
        switch (k->type) {
        case FS_KT_STRING:
        case FS_KT_PATH:
        case FS_KT_NAME: {
            char **s = FIELD(base, k->off, char *);
            fs_free(*s);
            *s = NULL;
            break;
        }
        case FS_KT_MIX: {
            fs_free(*FIELD(base, k->off2, uint32_t *));
            fs_free(*FIELD(base, k->off3, double *));
            *FIELD(base, k->off2, uint32_t *) = NULL;
            *FIELD(base, k->off3, double *) = NULL;
            *FIELD(base, k->off, size_t) = 0;
            break;
        }
        case FS_KT_SHARES: {
            char **names = *FIELD(base, k->off2, char **);
            size_t n = *FIELD(base, k->off, size_t);
            for (size_t j = 0; names && j < n; j++)
                fs_free(names[j]);
            fs_free(names);
            fs_free(*FIELD(base, k->off3, double *));
            *FIELD(base, k->off2, char **) = NULL;
            *FIELD(base, k->off3, double *) = NULL;
            *FIELD(base, k->off, size_t) = 0;
            break;
        }
        case FS_KT_NAMES: {
            char **keys = *FIELD(base, k->off2, char **), **vals = *FIELD(base, k->off3, char **);
            size_t n = *FIELD(base, k->off, size_t);
            for (size_t j = 0; j < n; j++) {
                fs_free(keys ? keys[j] : NULL);
                fs_free(vals ? vals[j] : NULL);
            }
            fs_free(keys);
            fs_free(vals);
            *FIELD(base, k->off2, char **) = NULL;
            *FIELD(base, k->off3, char **) = NULL;
            *FIELD(base, k->off, size_t) = 0;
            break;
        }
        case FS_KT_DIST: {
            fs_dist_release(FIELD(base, k->off, fs_dist_t));
            fs_dist_cfg_t *dc = FIELD(base, k->off2, fs_dist_cfg_t);
            for (size_t j = 0; j < k->sub->n; j++) {
                const fs_key_t *p = &k->sub->rows[j];
                if ((p->flags & FS_KF_AUX) && (p->type == FS_KT_STRING || p->type == FS_KT_PATH)) {
                    char **s = FIELD(dc, p->off, char *);
                    fs_free(*s);
                    *s = NULL;
                }
            }
            dc->given = 0;
            break;
        }
        case FS_KT_RAW: {
            fs_raw_t *r = FIELD(base, k->off, fs_raw_t);
            for (size_t j = 0; j < r->n; j++) {
                fs_free(r->text[j]);
                fs_free(r->where[j]);
            }
            fs_free(r->text);
            fs_free(r->where);
            fs_free(r->quoted);
            fs_free(r->at);
            memset(r, 0, sizeof *r);
            break;
        }
        case FS_KT_LIST: {
            char *arr = *FIELD(base, k->off, char *);
            size_t n = *FIELD(base, k->off2, size_t);
            for (size_t j = 0; arr && j < n; j++)
                fs_keys_release(k->sub, arr + j * k->sub->size);
            fs_free(arr);
            *FIELD(base, k->off, char *) = NULL;
            *FIELD(base, k->off2, size_t) = 0;
            break;
        }
        default:
            break;
        }
    }
}
