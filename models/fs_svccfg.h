/*
 * fs_svccfg: configuration of inference services (services:), the part of
 * fs_config_t that models/fs_service.c reads.  Keys and defaults:
 * scenarios/fs_keys.c; semantics and sources: docs/services.md.
 */
#ifndef FS_SVCCFG_H
#define FS_SVCCFG_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_dist.h"
#include "../sim/fs_time.h"

enum fs_svc_mode { FS_SVC_REQUEST = 0, FS_SVC_FLUID = 1 };
enum fs_svc_sched { FS_SVC_V1 = 0, FS_SVC_V0 = 1, FS_SVC_SLOTS = 2 };    /* engine.scheduler */
enum fs_svc_router { FS_ROUTE_LEAST = 0, FS_ROUTE_CENTRAL = 1, FS_ROUTE_RR = 2,
                     FS_ROUTE_PREFIX = 3 };  /* router */
enum fs_svc_popularity { FS_POP_ZIPF = 0 };     /* requests.prefix.popularity */
enum fs_svc_process { FS_SVC_POISSON = 0, FS_SVC_GAMMA = 1, FS_SVC_TRACE = 2 };
enum fs_hpa_metric { FS_HPA_NONE = 0, FS_HPA_CONCURRENCY = 1, FS_HPA_QUEUE = 2,
                     FS_HPA_UTILIZATION = 3 };

/* One row of a service's performance table: a replica on GPU model gpu. */
typedef struct fs_svc_perf_cfg {
    char *gpu;              /* GPU model (catalog name), owned */
    double prefill_tps;     /* prompt tokens/s while a request's prefill runs */
    double decode_tps;      /* output tokens/s of the replica with a full batch */
    uint32_t max_batch;     /* requests served at once */
    double decode1_tps;     /* output tokens/s of one request alone (0: decode_tps / max_batch) */
    uint64_t kv_tokens;     /* KV cache of a replica, tokens (0: unlimited) */
    /* a preset (models/fs_llmperf.h) fills the numbers not written */
    char *model;            /* LLM of the preset catalog (owned; NULL: no preset) */
    uint32_t tp;            /* tensor-parallel degree (0: the service's gpus) */
    int dtype;              /* enum fs_llm_dtype: weights bf16 or fp8 */
    double mem_util;        /* gpu_memory_utilization, (0, 1] */
    unsigned given;         /* FS_SVP_* bits: what the scenario wrote (set by the loader) */
    /* step time's context term: us per context token of a decoding sequence per iteration
     * (0: none); with model, kv_context fills it from the roofline */
    double us_per_kv_token;
    int kv_context;         /* bool */
    uint32_t max_model_len; /* longest prompt a replica takes (0: with model its context, else
                               no limit); the loader makes it the resolved value */
    char *profile;          /* a measured step-time profile, CSV (owned; NULL: none):
                               models/fs_svprofile.h; it overrides the step model */
} fs_svc_perf_cfg_t;

/* fs_svc_perf_cfg_t.given: the keys of a row written in the scenario. */
enum fs_svp_given {
    FS_SVP_PREFILL = 1u << 0, FS_SVP_DECODE = 1u << 1, FS_SVP_MAX_BATCH = 1u << 2,
    FS_SVP_DECODE1 = 1u << 3, FS_SVP_KV = 1u << 4, FS_SVP_TP = 1u << 5,
    FS_SVP_DTYPE = 1u << 6, FS_SVP_UTIL = 1u << 7
};

typedef struct fs_service_cfg {
    char *name;             /* owned */
    int mode;               /* enum fs_svc_mode */
    uint32_t gpus;          /* GPUs of a replica (one pod on one node); with mig: instances */
    char *mig;              /* MIG profile a replica asks (owned; NULL: whole GPUs) */
    uint32_t job_class;     /* class of its replicas (startup.images, telemetry.activity) */
    int32_t priority;       /* its replicas' priority (training: 0) */
    uint32_t min_replicas, max_replicas;
    /* requests */
    int process;            /* enum fs_svc_process */
    double rate;            /* mean requests/s (poisson, gamma) */
    double shape;           /* gamma: inter-arrival shape (CV^2 = 1/shape) */
    size_t n_hourly;        /* profile.hourly {hour: share} as written */
    char **hourly_names;
    double *hourly;
    size_t n_weekly;        /* profile.weekly {day: share} */
    char **weekly_names;
    double *weekly;
    char *trace;            /* process trace: an Azure LLM inference CSV (owned) */
    int repeat;             /* trace: replay it again after its end (bool) */
    fs_dist_t input;        /* prompt tokens (poisson, gamma) */
    fs_dist_cfg_t input_cfg;
    fs_dist_t output;       /* output tokens */
    fs_dist_cfg_t output_cfg;
    /* shared prompt prefixes (poisson, gamma; docs/services.md "Prefix caching") */
    uint32_t prefix_ids;    /* distinct prefixes (0: requests carry none) */
    int prefix_pop;         /* enum fs_svc_popularity: how often each id is drawn */
    double prefix_s;        /* zipf: P(id k) proportional to k^-s */
    fs_dist_t prefix_tokens;    /* each id's length in tokens, drawn once per id */
    fs_dist_cfg_t prefix_tokens_cfg;
    fs_svc_perf_cfg_t *perf;    /* owned */
    size_t n_perf;
    /* the engine (request mode) */
    int engine_sched;       /* enum fs_svc_sched */
    int router;             /* enum fs_svc_router (engine v1 / v0) */
    uint64_t max_tokens;    /* max_num_batched_tokens: tokens per iteration */
    /* autoscaling (Kubernetes HPA) */
    int metric;             /* enum fs_hpa_metric; NONE: min_replicas, fixed */
    double target;          /* per replica: requests (concurrency, queue) or a fraction */
    double tolerance;       /* no change while |metric/target - 1| <= tolerance */
    fs_time_t sync;         /* HPA sync period */
    fs_time_t down_window;  /* scale-down stabilisation window */
    fs_time_t up_window;    /* scale-up stabilisation window */
    /* objectives */
    fs_time_t slo_ttft;     /* a request meets its SLO with TTFT <= this ... */
    fs_time_t slo_tpot;     /* ... and TPOT <= this (0: no bound) */
    /* disaggregated serving (docs/services.md "Disaggregated serving"): prefill and
     * decode replica groups; disaggregated when a count, the bandwidth or a link is given */
    uint32_t pd_prefill, pd_decode;     /* replicas of each group */
    char *pd_prefill_gpu, *pd_decode_gpu;   /* GPU model of each group (owned; NULL: any row's) */
    double pd_bw;           /* KV transfer bytes/s, prefill to decode replica (0: not given) */
    double pd_kv_bytes;     /* KV bytes per token (0: the preset's) */
    struct fs_svc_link_cfg *pd_links;   /* bandwidth per (prefill pool, decode pool) (owned) */
    size_t n_pd_links;
} fs_service_cfg_t;

/* disaggregated.kv_transfer.links[]: the bandwidth between two pools. */
typedef struct fs_svc_link_cfg {
    char *prefill_pool, *decode_pool;   /* pool names (owned) */
    double bandwidth;       /* bytes/s */
} fs_svc_link_cfg_t;

/* Is service c disaggregated (prefill and decode groups)? */
static inline int fs_svc_disagg(const fs_service_cfg_t *c)
{
    return c->pd_prefill > 0 || c->pd_decode > 0 || c->pd_bw > 0 || c->n_pd_links > 0;
}

typedef struct fs_services_cfg {
    fs_service_cfg_t *list; /* owned */
    size_t n;
    fs_time_t bucket;       /* /service_buckets period */
    int requests;           /* write /requests (bool) */
} fs_services_cfg_t;

#endif
