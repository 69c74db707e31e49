/*
 * fs_result: what a run reports, as plain rows.  The model emits them
 * through fs_sink_t; analysis/ turns them into statistics and the HDF5
 * results file (docs/results.md describes every column).  Times are float64
 * seconds since the start of the run, as in the results file.
 */
#ifndef FS_RESULT_H
#define FS_RESULT_H

#include <stdint.h>
#include <stddef.h>

/* Final state of a job in the simulation (HDF5 enum "job_state"). */
enum fs_job_state {
    FS_STATE_COMPLETED = 0,   /* ran to the end */
    FS_STATE_FAILED = 1,      /* gave up (retries exhausted) */
    FS_STATE_RUNNING = 2,     /* still running when the run stopped */
    FS_STATE_QUEUED = 3,      /* still waiting when the run stopped */
    FS_STATE_REJECTED = 4,    /* can never fit the cluster */
    FS_STATE_WITHDRAWN = 5    /* cancelled by its user at its recorded cancel time
                                 (workload.trace.cancelled: withdraw), before it started
                                 or (started earlier in the simulation) stopped then */
};
const char *fs_job_state_name(int s);

typedef struct fs_job_row {
    uint64_t id;
    int32_t tenant;         /* index into the run's tenant names; -1 none */
    int32_t pool;           /* pool index it ran in; -1 never started */
    uint32_t gpus;          /* GPUs requested */
    uint32_t gpu_milli;     /* share of one GPU (1000 = whole) */
    uint32_t nodes;         /* nodes it spanned at its last start (0 never started) */
    uint32_t restarts;      /* times restarted after failure or preemption */
    double submit;          /* s */
    double start;           /* first start, s; NaN if never started */
    double end;             /* s; NaN if not finished */
    double wait;            /* first start - submit, s; NaN if never started */
    double run;             /* wall time spent running, all attempts, s */
    double lost_gpu_s;      /* GPU-seconds of compute whose work was lost to failures/preemption */
    int32_t state;          /* enum fs_job_state */
    double ckpt_s;          /* wall s writing checkpoints (recovery.*) */
    double recovery_s;      /* wall s in failure detection, requeue/backoff and restore */
    double ettr;            /* useful compute wall s / (end - first start); NaN never started */
    double goodput;         /* useful GPU-s / GPU-s held (runtime goodput); NaN never held */
    double sched_goodput;   /* GPU-s held / (GPUs x (end - submit)): scheduling goodput; the
                               run's end if unfinished; NaN never held */
    double program_goodput; /* its class's MFU (telemetry.mfu); NaN never held */
    double queued_s;        /* all time spent queued: the first wait, then after each
                               preemption or failure requeue (to the end if still queued), s */
    uint32_t preemptions;   /* times preempted by the policy (failures are not preemptions) */
    double preempt_lost_gpu_s; /* the part of lost_gpu_s lost to preemptions, GPU-s */
    double startup_s;       /* wall s in pod start-up (image pull, container, load), all attempts */
    double rec_start;       /* the trace's recorded start (fs_job_t.rec_start), s; NaN none */
    /* in memory only (not /jobs columns): the job's part of the held split
     * of busy, summed per tenant in /tenants */
    double held_gpu_s;      /* GPU-s held: its attempts and the holds while a failure is detected */
    double compute_s;       /* wall s computing, work kept or later lost */
} fs_job_row_t;

typedef struct fs_sample_row {
    double time;            /* s */
    uint32_t gpus_total;
    uint32_t gpus_up;
    uint32_t gpus_busy;     /* allocated (fractional shares count whole) */
    uint32_t jobs_running;
    uint32_t jobs_queued;
    uint64_t gpus_queued;   /* GPUs requested by queued jobs */
    uint32_t nodes_down;    /* nodes out of service (any reason: failed, drained, spare) */
    uint32_t repair_queue;  /* failures waiting for a repair crew (models/fs_failure.c) */
    uint32_t nodes_provisioning; /* autoscaler: nodes asked for, not yet allocatable */
    uint32_t nodes_autoscaled;   /* autoscaler: node groups' nodes provisioned and ready */
    uint32_t gpus_serving;  /* held by service replicas (in gpus_busy; training = busy - serving) */
    uint32_t replicas;      /* service replicas alive (pending, starting, ready) */
    uint32_t mig_instances; /* MIG instances of the static layouts (cluster.pools[].mig), 0 none */
    uint32_t mig_busy;      /* of them, held by a pod */
    uint32_t mig_serving;   /* of them, held by service replicas (in mig_busy) */
    /* capacity states (#15) over (previous sample, this sample], GPU-s;
     * they sum to the integral of gpus_total over the interval */
    double gpu_s_busy;      /* held by jobs or replicas */
    double gpu_s_down;      /* out of service: gpus_total - gpus_up */
    double gpu_s_waiting;   /* free and up while jobs or replicas are queued */
    double gpu_s_idle;      /* free and up with nothing queued */
    /* the held split of busy over the interval (#15): allocated (held by
     * pods: whole GPUs, MIG instances' and shares' fractions) + share_idle
     * (the unallocated rest of shared GPUs) == gpu_s_busy, to rounding */
    double gpu_s_allocated;
    double gpu_s_share_idle;
    /* allocated = held (the jobs' holds) + serving (replicas); held =
     * computing + ckpt + startup + recovering: /summary's split per
     * interval (work later lost is known only at the end: /summary) */
    double gpu_s_held;
    double gpu_s_computing;
    double gpu_s_ckpt;
    double gpu_s_startup;
    double gpu_s_recovering;
    double gpu_s_serving;
    /* the waiting split over the interval (#15): frag (free GPUs no queued
     * pod fits on) + the rest held back by the policy, labelled by its
     * mechanism (one of quota, reserved, blocked is non-zero in a run) ==
     * gpu_s_waiting, to rounding */
    double gpu_s_frag;
    double gpu_s_quota;
    double gpu_s_reserved;
    double gpu_s_blocked;
} fs_sample_row_t;

/* One failure (or planned outage) of a component: the /failures table
 * (models/fs_failure.c emits it when the unit fails; repair_time is known
 * then).  component: enum fs_fail_kind (models/fs_failcfg.h); repair: enum
 * fs_repair_path. */
#define FS_FAILURE_CAUSE_MAX 24
typedef struct fs_failure_row {
    double time;            /* s */
    int32_t component;      /* enum fs_fail_kind: gpu, node, link, domain, rack, power, leaf, spine */
    uint32_t unit;          /* unit id at its level (GPU: node * gpus_per_node + index) */
    uint32_t nodes;         /* nodes it took out of service */
    char cause[FS_FAILURE_CAUSE_MAX]; /* NUL-padded */
    int32_t repair;         /* enum fs_repair_path: soft, hard, none, removed, planned */
    double repair_time;     /* s from the failure until back in service, queueing for a
                               crew included; NaN: removed for good */
    uint32_t jobs_hit;      /* running jobs interrupted */
    uint32_t xid;           /* NVIDIA Xid code of the cause (models/fs_xid.h); 0: none */
} fs_failure_row_t;
/* One job attempt's hold on one node: the /gpu_intervals table
 * (output.gpu_intervals; the source of `fleetsim metrics`).  Emitted when the
 * attempt ends (completion, failure, preemption, or the end of the run). */
typedef struct fs_interval_row {
    uint64_t job;           /* job id */
    int32_t tenant;         /* index into the run's tenant names; -1 none */
    uint32_t job_class;
    uint32_t node;          /* global node id (pools in order) */
    uint32_t gpus;          /* GPUs held on the node */
    uint32_t gpu_milli;     /* 1000: whole GPUs; < 1000: a share of GPU `gpu` */
    uint32_t gpu;           /* shared slot of a fractional job (0 otherwise) */
    double start;           /* s: the attempt started (placed, GPUs held) */
    double ready;           /* s: pod start-up done, computing from then */
    double end;             /* s: the GPUs were given back */
    double duty, sm, tensor, dram, fb;  /* its activity while computing (telemetry:) */
    int32_t gpu_instance;   /* a MIG pod: one row per instance held, its index in the GPU's
                               layout (ascending start); -1 otherwise */
} fs_interval_row_t;

/* Names of the HDF5 enums "component" and "repair" ("?" out of range). */
const char *fs_failure_component_name(int kind);
const char *fs_repair_path_name(int path);

/* Inference services (models/fs_service.h, docs/services.md).  Times in s;
 * service: the index of the service in services: (/services row order). */
#define FS_SERVICE_NAME_MAX 48
typedef struct fs_service_row {    /* /services: one row per service, at the end */
    char name[FS_SERVICE_NAME_MAX]; /* NUL-padded */
    uint32_t mode;          /* 0 request, 1 fluid */
    uint64_t requests;      /* arrived (fluid: expected, rounded) */
    uint64_t completed;     /* finished by the end */
    uint64_t retried;       /* requests restarted because their replica stopped */
    double ttft_p50, ttft_p95, ttft_p99, ttft_mean;
    double tpot_p50, tpot_p95, tpot_p99;
    double slo_attainment;  /* completed requests meeting slo.ttft and slo.tpot / completed */
    double buckets_met;     /* buckets whose TTFT p99 met slo.ttft / buckets with requests */
    double replica_hours;   /* replicas alive (pending, starting, ready) x time */
    double ready_hours;     /* replicas ready x time */
    double gpu_hours;       /* GPUs held by its replicas x time */
    uint64_t cold_starts;   /* replica starts (each pays its start-up) */
    double startup_gpu_hours; /* GPU-hours held while starting */
    double tokens_out;      /* output tokens of completed requests */
    double tokens_per_gpu_s;/* tokens_out / GPU-s held */
    uint64_t prefix_hits;   /* completed requests that used a cached prefix (requests.prefix) */
    uint64_t prefix_tokens; /* their prompt tokens read from the prefix cache */
    double cost_per_mtok;   /* USD per million output tokens: its GPU-hours at the run's cost per
                               delivered GPU-hour (NaN without cost:); filled by the runner */
} fs_service_row_t;

typedef struct fs_svc_bucket_row { /* /service_buckets: service x output.service_bucket */
    uint32_t service;
    double start, end;
    uint64_t requests;      /* arrived in the bucket */
    uint64_t completed;     /* finished in the bucket (its percentiles) */
    double ttft_p50, ttft_p95, ttft_p99;
    double tpot_p50, tpot_p95, tpot_p99;
    double slo_attainment;  /* of the completed; NaN none */
    double replicas;        /* time-average replicas alive */
    double ready;           /* time-average replicas ready */
    double gpus;            /* time-average GPUs held */
    uint32_t cold_starts;
    double tokens_per_s;    /* output tokens completed / bucket length */
    double waiting;         /* time-average requests waiting */
    double running;         /* time-average requests running (in a replica's batch) */
    double kv_usage;        /* time-average share of the KV cache in use (NaN: unlimited) */
    uint32_t preemptions;   /* sequences preempted (engine v1 / v0) */
    double tokens_in_per_s; /* prompt tokens of the completed requests / bucket length */
    double goodput;         /* completed requests meeting the SLOs / bucket length, 1/s */
    uint32_t prefix_hits;   /* completed requests that used a cached prefix (requests.prefix) */
    uint64_t prefix_tokens; /* their prompt tokens read from the prefix cache */
    /* disaggregated serving, per group (NaN for a colocated service): time averages of
     * replicas alive, replicas with a request, requests running, requests waiting
     * (prefill: the service's queue and the group's; decode: prefilled, not yet
     * moving), the share of the group's KV cache in use (NaN: unlimited); and KV
     * transfers in flight */
    double prefill_replicas, prefill_busy, prefill_running, prefill_waiting, prefill_kv_usage;
    double decode_replicas, decode_busy, decode_running, decode_waiting, decode_kv_usage;
    double kv_transfers;
} fs_svc_bucket_row_t;

typedef struct fs_request_row {    /* /requests (output.requests; request mode) */
    uint32_t service;
    uint32_t input, output; /* tokens */
    uint32_t retries;
    uint32_t replica;       /* the replica that served it (index within its service) */
    uint32_t preemptions;   /* times its sequence was preempted and recomputed */
    uint32_t prefix;        /* its shared prefix id (0: none; requests.prefix) */
    uint32_t prefix_len;    /* the prefix's tokens (<= input) */
    uint32_t prefix_hit;    /* prompt tokens it found in the replica's prefix cache (last
                               admission) */
    uint32_t decode_replica;    /* the replica that emitted its last token (disaggregated:
                               a decode replica, or its prefill one when out is 1; else
                               replica) */
    double arrival, admitted, ttft, tpot, end;  /* admitted: first into a running batch */
    double kv_transfer;     /* s its KV cache spent moving from prefill to decode replicas
                               (disaggregated; 0 colocated) */
} fs_request_row_t;
_Static_assert(sizeof(fs_request_row_t) == 10 * sizeof(uint32_t) + 6 * sizeof(double),
               "fs_request_row_t has no implicit padding");

/* Totals the model accumulates over the run (integrals are exact: the
 * model integrates piecewise-constant state between events). */
typedef struct fs_run_totals {
    double end_time;        /* when the run stopped, s */
    double makespan;        /* last completion (or end_time if later events), s */
    uint64_t gpus_total;    /* GPUs in the fleet */
    double gpu_s_capacity;  /* integral of GPUs up over [0, end_time], GPU-s */
    double gpu_s_busy;      /* integral of GPUs allocated, GPU-s */
    double gpu_s_useful;    /* GPU-s of work kept by jobs (excludes lost work) */
    double window_start;    /* measurement window: [warmup, min(horizon, end_time)], s */
    double window_end;
    double gpu_s_capacity_window; /* integral of GPUs up over the window, GPU-s */
    double gpu_s_busy_window;     /* integral of GPUs allocated over the window */
    double jobs_queued_integral;  /* integral of jobs waiting, job-s */
    double jobs_system_integral;  /* integral of jobs waiting or running, job-s */
    uint64_t jobs_submitted;
    uint64_t events;        /* engine events handled */
    uint64_t passes;        /* scheduling passes */
    uint64_t rows_skipped;  /* lenient trace rows skipped */
    uint64_t failures;      /* component failures (models/fs_failure.c; planned outages excluded) */
    uint64_t interruptions; /* running jobs those failures hit */
    double gpu_s_lost;      /* GPU-s of compute whose work was lost (failures, preemption) */
    double gpu_s_ckpt;      /* GPU-s spent writing checkpoints */
    uint64_t preemptions;   /* preemptions by the policy (not failures) */
    double gpu_s_lost_preempt; /* the part of gpu_s_lost lost to preemptions */
    double gpu_s_startup;   /* GPU-s held in pod start-up (models/fs_startup.h) */
    /* what the policy did (fs_policy_stats_t) */
    uint64_t backfilled, admissions, admissions_borrowing, reclaims;
    /* capacity states (#15): gpu_s_busy + gpu_s_down + gpu_s_waiting +
     * gpu_s_idle == gpu_s_total (each integrated between events) */
    double gpu_s_total;     /* integral of GPUs in the fleet (gpus_total), GPU-s */
    double gpu_s_down;      /* integral of gpus_total - gpus_up */
    double gpu_s_waiting;   /* integral of free up GPUs while jobs or replicas are queued */
    double gpu_s_idle;      /* integral of free up GPUs with nothing queued */
    /* the held split of gpu_s_busy (#15): busy = allocated + share_idle;
     * allocated = held (jobs) + serving (replicas); held = computing +
     * gpu_s_ckpt + gpu_s_startup + recovering; redo is the part of
     * computing whose work was lost (the jobs' gpu_s_lost) */
    double gpu_s_allocated; /* integral of allocated GPU shares (milli_busy / 1000) */
    double gpu_s_share_idle;/* busy GPUs' unallocated shares: busy - allocated */
    double gpu_s_held;      /* GPU-s held by jobs: their attempts and failure detection */
    double gpu_s_serving;   /* GPU-s held by service replicas: allocated - held */
    double gpu_s_computing; /* GPU-s jobs computed, work kept or later lost */
    double gpu_s_redo;      /* the part of computing whose work was lost (jobs only) */
    double gpu_s_recovering;/* held restoring or while a failure is detected */
    double gpu_s_held_idle; /* the part of computing held by jobs whose activity is zero */
    /* the waiting split: frag + quota + reserved + blocked == gpu_s_waiting */
    double gpu_s_frag, gpu_s_quota, gpu_s_reserved, gpu_s_blocked;
    /* MIG re-partitioning (models/fs_migrecut.h): nodes re-cut, and GPU-s
     * of their GPUs out of service for it (reconfigure + gpu_ready; part of
     * gpu_s_down) */
    uint64_t mig_recuts;
    double gpu_s_mig_reconfig;
    /* its drains (mig_repartition.drain): busy nodes cordoned for a re-cut,
     * and GPU-s of their GPUs that held no pod between the cordon and the
     * re-cut (or the cordon's end; part of gpu_s_down) */
    uint64_t mig_drains;
    double gpu_s_mig_drain;
    /* the fabric (cluster.fabric, models/fs_fabric.h): GPU-s lost to
     * network contention (GPUs x (1 - speed factor) over running time),
     * max-min recomputations and the jobs they recomputed */
    double gpu_s_network;
    uint64_t fabric_recomputes, fabric_jobs_touched;
    /* the fabric's link counters (/links summed, docs/results.md): bytes
     * over the NIC links and over the leaf uplink bundles, the busiest
     * bundle's mean utilisation, the bundles' seconds at capacity */
    double fabric_nic_bytes, fabric_uplink_bytes, fabric_uplink_util_max, fabric_uplink_saturated_s;
    /* the checkpoint interval the recovery rule chose (compute s), mean and
     * least over the job attempts that checkpoint; NaN when none does */
    double ckpt_interval_mean, ckpt_interval_min;
} fs_run_totals_t;

/* /nodegroups: one row per Cluster Autoscaler node group at every /timeline
 * sample and at the end of the run (docs/results.md); the counters and
 * node-seconds are cumulative from time 0, so the group's last row holds
 * its totals. */
typedef struct fs_nodegroup_row {
    double time;            /* s */
    uint32_t group;         /* index in cluster.autoscale.node_groups */
    uint32_t pool;          /* its pool (/pools) */
    uint32_t nodes_provisioning;    /* decided, GPUs not yet allocatable */
    uint32_t nodes_ready;   /* provisioned and allocatable (min included) */
    uint64_t nodes_added;   /* scale-up: nodes decided since time 0 */
    uint64_t nodes_removed; /* scale-down: nodes removed since time 0 */
    double node_s_provisioning;     /* node-seconds provisioning since time 0 */
    double node_s_ready;    /* node-seconds ready since time 0 */
} fs_nodegroup_row_t;

/* /mig_layouts: the layout of one GPU from a MIG re-cut decision on
 * (cluster.pools[].mig_repartition, docs/mig.md); before its first row a
 * GPU has its pool's /pools.mig. */
#define FS_MIG_LAYOUT_TEXT 128
typedef struct fs_mig_layout_row {
    double time;            /* the decision, s: the layout is this from then on */
    double ready;           /* its instances allocatable (the node back in service), s */
    uint32_t pool, node, gpu;
    char layout[FS_MIG_LAYOUT_TEXT];   /* as cluster.pools[].mig reads it (fs_mig_spec_format) */
    double cordoned;        /* the cordon of the drain before it (mig_repartition.drain), s;
                               NaN: the node was idle at the decision */
} fs_mig_layout_row_t;

/* /links: one row per link of the fabric (cluster.fabric, models/fs_fabric.h;
 * docs/results.md): a node's NICs, or a leaf group's uplink bundle (every
 * rail's leaf switch to every spine). */
enum fs_link_tier { FS_LINK_NIC = 0, FS_LINK_LEAF_UPLINK = 1 };
typedef struct fs_link_row {
    uint32_t link;          /* link id: nodes first (node v is link v), then leaf groups */
    int32_t tier;           /* enum fs_link_tier */
    uint32_t pool;
    int32_t node;           /* a NIC link: its node; an uplink bundle: -1 */
    uint32_t leaf;          /* its leaf group (global id) */
    uint32_t ports;         /* ports of the bundle (NICs, or rails x uplink ports) */
    double capacity;        /* as built, bytes/s */
    double bytes;           /* carried over the run, bytes */
    double busy_s;          /* s with a communicating job on it */
    double peak_util;       /* the highest load (the jobs' max-min rates) / capacity */
    double mean_util;       /* bytes / (capacity x the run's length) */
    double saturated_s;     /* s with its load at its capacity now (a bottleneck) */
    uint32_t failures;      /* port or spine failures that hit it */
    double port_down_s;     /* port-seconds down (summed over its ports) */
    double degraded_s;      /* s below its capacity as built */
    uint32_t rails;         /* leaf switches its ports are spread over: the group's rails
                             * (rail-optimized: NICs per node; else 1); an uplink bundle
                             * has ports / rails ports on each rail's leaf switch, NIC k
                             * of a node goes to rail k's leaf */
} fs_link_row_t;

/* /jobs_network: a communicating job's network figures (cluster.fabric),
 * one row per job whose ring crossed the network; joins /jobs on id. */
typedef struct fs_jobnet_row {
    uint64_t id;
    double network_slow_s;  /* wall s lost to contention: integral of 1 - speed factor */
    double comm_s;          /* wall s of exposed (not overlapped) communication */
    double comm_share;      /* comm_s / net_run_s */
    double net_run_s;       /* wall s running with its ring on the network */
    double iterations;      /* iterations done (at the fabric's rate) */
    double bytes_sent;      /* bytes its NICs sent: iterations x 2(d-1) x gradient bytes */
} fs_jobnet_row_t;

/* /link_bytes: a link's bytes carried from time 0 to a /timeline sample
 * (cluster.fabric; docs/results.md), written when they changed since the
 * link's previous row; a link's last row holds its /links bytes. */
typedef struct fs_link_bytes_row {
    double time;            /* the sample, s */
    uint32_t link;          /* /links.link */
    double bytes;           /* carried from time 0 to then, bytes */
} fs_link_bytes_row_t;

/* The receiver of a run's rows.  Callbacks return 0 or an FS_E* code (the
 * model then stops the run with that error). */
typedef struct fs_sink {
    int (*job)(void *ud, const fs_job_row_t *row);
    int (*sample)(void *ud, const fs_sample_row_t *row);
    void *ud;
    /* optional (NULL: not wanted): one row per job attempt and node */
    int (*interval)(void *ud, const fs_interval_row_t *row);
    int (*failure)(void *ud, const fs_failure_row_t *row); /* optional: /failures rows */
    /* optional: inference services (/services, /service_buckets, /requests) */
    int (*service)(void *ud, const fs_service_row_t *row);
    int (*svc_bucket)(void *ud, const fs_svc_bucket_row_t *row);
    int (*request)(void *ud, const fs_request_row_t *row);
    /* optional: Cluster Autoscaler node groups (/nodegroups) */
    int (*nodegroup)(void *ud, const fs_nodegroup_row_t *row);
    /* optional: MIG re-partitioning (/mig_layouts) */
    int (*mig_layout)(void *ud, const fs_mig_layout_row_t *row);
    /* optional: the fabric's /links and /jobs_network rows, once at the run's end */
    int (*fabric)(void *ud, const fs_link_row_t *links, size_t n_links,
                  const fs_jobnet_row_t *jobs, size_t n_jobs);
    /* optional: the fabric's /link_bytes rows in time order, in batches during the run
     * and the last (possibly none) at its end, after fabric */
    int (*link_bytes)(void *ud, const fs_link_bytes_row_t *rows, size_t n);
    struct fs_error *err;   /* optional: where the callbacks leave their message when they
                               fail (the writer's, naming the file and the errno); the
                               run's error is then that message, not a generic one */
} fs_sink_t;

#endif
