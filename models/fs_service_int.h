/*
 * fs_service_int.h: the services module's private state, shared by its
 * files in models/ only (the public face is fs_service.h).
 *
 *   fs_service.c         replica lifecycle, the module's events, attach  fs_svc_
 *   fs_service_arrive.c  request arrivals (synthetic or a trace) and the
 *                        fluid rate of each hour  fs_svarr_
 *   fs_service_engine.c  request mode: the service's queue, routing to replicas
 *                        and each replica's engine at iteration level (v1, v0)  fs_sveng_
 *   fs_service_slots.c   request mode, engine.scheduler: slots (issue 16's model)  fs_svslot_
 *   fs_service_fluid.c   fluid mode: the queue as a fluid (M/G/c)  fs_svfluid_
 *   fs_service_hpa.c     the HPA: replica calculator, stabilisation, scaling  fs_svhpa_
 *   fs_service_metrics.c buckets, percentiles and the run's service rows  fs_svmet_
 *   fs_service_cfg.c     the services block's checks and each service's set-up  fs_svcfg_
 *   fs_service_disagg.c  disaggregated serving's checks and transfer bandwidths  fs_svdis_
 *                        (its engine part, hand-off and transfers: fs_service_engine.c)
 *
 * The serving engine (fs_service_engine.c) is the one place where a
 * replica processes requests: it owns serve/done and the batch slots
 * (inflight_t); the rest sees a replica's busy and batch counts only.
 */
#ifndef FS_SERVICE_INT_H
#define FS_SERVICE_INT_H

#include "fs_service.h"
#include "fs_svprofile.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_rng.h"
#include "../traces/fs_reqtrace.h"
#include "../traces/fs_synth.h"

#include <gsl/gsl_histogram.h>

/* Random streams (sim/fs_rng.h: new purposes are appended, never renumbered). */
enum { RNG_REQUEST = 11, RNG_TOKENS = 12, RNG_PREFIX = 13 };

/* Module events: kind | service << 4 | replica << 20 | arg << 44. */
enum { EV_ARRIVAL = 0, EV_DONE = 1, EV_READY = 2, EV_SYNC = 3, EV_BUCKET = 4, EV_RETIRE = 5,
       EV_RATE = 6, EV_KICK = 7, EV_XFER = 8, EV_HANDOFF = 9, EV_REPREFILL = 10 };
#define EVD(kind, svc, rep, arg)                                                        \
    ((uint64_t)(kind) | (uint64_t)(svc) << 4 | (uint64_t)(rep) << 20 | (uint64_t)(arg) << 44)
#define MAX_SERVICES 4096u
#define MAX_REPLICAS (1u << 24)
#define MAX_BATCH (1u << 20)

enum { R_FREE = 0, R_PENDING, R_STARTING, R_READY };

typedef struct req {
    fs_time_t arrival;
    uint32_t in, out, retries;
    uint32_t pid, plen;     /* shared prefix: id (0: none) and tokens (<= in) */
} req_t;

/* engine.scheduler: slots (fs_service_slots.c): a request in a batch slot. */
typedef struct inflight {
    req_t r;
    fs_time_t start;        /* its prefill started */
    fs_time_t step;         /* decode step, us */
    fs_event_handle_t ev;
    int used;
} inflight_t;

/* A request on a replica's engine (fs_service_engine.c). */
typedef struct seq {
    req_t r;
    fs_time_t first;        /* its first output token (-1: none yet) */
    fs_time_t admitted;     /* first admitted to the running batch (-1: not yet) */
    uint32_t gen;           /* output tokens emitted */
    uint32_t computed;      /* tokens whose KV is computed */
    uint32_t target;        /* tokens to prefill since its last admission (in + gen then) */
    uint32_t blocks;        /* KV blocks held */
    uint32_t sched;         /* tokens scheduled in the current iteration */
    uint32_t preempt;       /* times preempted (recomputed) */
    uint32_t hit;           /* blocks shared from the replica's prefix cache (its entry
                               referenced) since its last admission */
    uint8_t decoding;       /* its prefill since the last admission is done */
    /* disaggregated serving: the prefill replica that holds its KV until the transfer
     * ends (index, gen then, blocks and prefix blocks shared there), its transfers' time */
    uint32_t src, src_gen, src_blocks, src_hit;
    fs_time_t xfer_us;
} seq_t;

/* A KV transfer into a decode replica (disaggregated serving). */
typedef struct xfer {
    seq_t q;
    fs_time_t end;          /* it ends */
    uint8_t done;           /* it ended: the prefill replica's blocks are freed */
} xfer_t;

/* One replica's serving engine: the running batch in admission order, its
 * own waiting queue, the KV cache, the iteration in progress. */
typedef struct eng {
    seq_t *run;             /* capacity: the service's largest max_batch */
    uint32_t n_run;
    seq_t *wq;              /* waiting: a ring */
    size_t wq_head, wq_n, wq_cap;
    uint32_t kv_blocks, kv_free;    /* KV cache, blocks of 16 tokens (0: unlimited) */
    uint64_t *kv_used;      /* the service's count of blocks in use */
    uint64_t used_rep;      /* this engine's part of *kv_used */
    /* prefix cache (requests.prefix): per id 1..n_pc-1 the cached full blocks of its
     * prefix, the sequences sharing them, and when they were last released (LRU) */
    struct pcent { uint32_t blocks, ref; uint64_t stamp; } *pc;
    uint32_t n_pc;
    uint64_t evictable;     /* blocks of entries no sequence uses (free on demand) */
    uint64_t stamp;         /* release counter */
    fs_time_t t0, dur;      /* the iteration (or macro step) started at t0, each dur us */
    uint32_t k;             /* iterations in it (> 1: a macro step of identical decodes) */
    fs_time_t at;           /* its end event */
    fs_event_handle_t ev;
    uint8_t armed;          /* an end event is set */
    uint8_t counted;        /* its kv_blocks are in the service's kv_total */
    /* a decode replica (disaggregated): prefilled sequences waiting for its KV blocks
     * (a ring, FCFS), and those whose KV cache is on its way (in the order started) */
    seq_t *kq;
    size_t kq_head, kq_n, kq_cap;
    xfer_t *xf;
    size_t n_xf, cap_xf;
    /* step time's context term (performance row us_per_kv_token): an iteration takes
     * round(kv_fs x C / 1e9) us more, C the context tokens of its decoding sequences */
    uint64_t kv_fs;         /* 1e-9 us per context token (0: no context term) */
    uint64_t ctx0;          /* C of the iteration (or the macro step's first) at t0 */
    fs_time_t base;         /* its length without the context term, us */
    uint32_t max_len;       /* max_model_len: the longest prompt it takes (0: any) */
    const fs_svprof_t *prof;    /* its row's measured profile (the service's), or NULL */
} eng_t;

typedef struct replica {
    uint32_t slot;          /* the model's job slot */
    uint8_t state;          /* R_* */
    uint8_t doomed;         /* retired: drains, then gives its GPUs back */
    uint32_t gen;           /* bumped at every start and stop (stale READY events) */
    uint32_t busy, batch;   /* requests on it (running + waiting), max_num_seqs */
    double prefill_tps, step1, stepb;   /* tokens/s; decode step at batch 1 and full, us */
    fs_time_t since;        /* STARTING: when it started */
    eng_t *e;               /* request mode, v1 / v0: its engine (kept across reuse) */
    inflight_t *fl;         /* request mode, slots: batch entries (likewise) */
    uint32_t next;          /* free list (R_FREE) */
    uint8_t role;           /* ROLE_*: disaggregated prefill or decode (0 colocated) */
    uint32_t pool;          /* its pool while it runs */
} replica_t;

enum { ROLE_PREFILL = 0, ROLE_DECODE = 1 };   /* a colocated replica has role 0 */

/* A fluid-mode component of a bucket's TTFT or TPOT distribution. */
typedef struct comp {
    double w;               /* requests */
    double a, b;            /* uniform on [a, b] (s); or, exponential tail: */
    double pw, theta;       /* P(wait > 0) and the tail's mean; theta < 0: uniform */
} comp_t;

typedef struct cohort { double t0, t1, rate; } cohort_t;   /* backlog: arrivals on [t0, t1] */

/* Fluid mode: a request's prefill is spread over PQ quantile slices of the
 * prompt tokens: 28 of 1/32 below the 0.875 quantile, then slices that
 * halve towards the tail (to 1 - 2^-14), so that a p99 sees the tail, with
 * edges also at the reported 0.95 and 0.99.  A slice's TTFT spreads
 * uniformly between those of its edge quantiles (the quantile function
 * interpolated linearly: the CDF exact at every edge), its mean from its
 * midpoint quantile (fs_service_fluid.c fluid_done). */
#define PQ 42

/* Fluid mode's TPOT (engines v1 and v0): a request's TPOT is the decode
 * step plus the prefill of the prompts that arrive at its replica while it
 * decodes, shared out over its tokens (fs_service_fluid.c), a spread that
 * is wider for short outputs.  OQ output-token slices (finer towards short
 * outputs, which make the tail), each a gamma law cut at GQ quantiles. */
#define OQ 8
#define GQ 6
/* fluid_at_load's TPOT state: mean, decode step, prompt arrivals per
 * iteration, mean and second moment of a prompt's prefill time */
enum { TP_T, TP_ST, TP_R, TP_EY, TP_EY2, TP_N };

typedef struct bucket {
    fs_time_t start;
    uint64_t arrivals, completed;
    double *ttft, *tpot;    /* request mode: the bucket's completions */
    size_t n_ttft, cap_ttft, n_tpot, cap_tpot;
    comp_t *cttft, *ctpot;  /* fluid mode */
    size_t n_cttft, cap_cttft, n_ctpot, cap_ctpot;
    double f_arrivals, f_completed, f_met;  /* fluid: expected counts */
    uint64_t met, preemptions;
    uint64_t prefix_hits, prefix_tokens;   /* completed requests that used a cached prefix */
    double live_s, ready_s, gpu_s, wait_s, tokens;
    double run_s, kv_used_s, kv_total_s, tokens_in;
    uint32_t cold;
    /* disaggregated serving, per group (ROLE_PREFILL, ROLE_DECODE): the same
     * integrals (fs_svdis_settle), and KV transfers in flight */
    double g_live_s[2], g_busy_s[2], g_run_s[2], g_wait_s[2], g_kv_used_s[2], g_kv_total_s[2];
    double xfer_s;
} bucket_t;

typedef struct svc {
    const fs_service_cfg_t *cfg;
    uint32_t idx;
    int32_t set;
    uint32_t *pool_row;     /* per pool: performance row + 1 (0: not usable) */
    uint32_t max_batch;
    int32_t mig;            /* its replicas' MIG profile code (fs_mig_code), 0 whole GPUs */
    double gpu_share;       /* GPUs of compute one replica holds: gpus, or with MIG
                               instances x the profile's share (as the model's milli-GPUs) */
    /* replicas */
    replica_t *rep;
    size_t n_rep, cap_rep;
    uint32_t free_rep;      /* UINT32_MAX: none */
    uint32_t live;          /* not doomed, not free: the HPA's current replicas */
    uint32_t n_ready, n_starting, holding, busy, slots_ready;
    /* the ready replicas that are not retired (the router's and the HPA's):
     * their count and, for the fluid queue, sums over their batch slots */
    uint32_t ready_live;
    uint32_t busy_doomed;   /* requests in flight on retired replicas that drain */
    uint32_t waiting_rep;   /* requests waiting in replicas' own queues */
    uint32_t running;       /* requests in replicas' running batches */
    uint64_t kv_used, kv_total;     /* KV blocks in use, and of the serving engines (limited) */
    uint32_t rr;            /* round_robin: the replica last sent a request */
    double ec_a, ec_p;      /* the last Erlang C asked (offered load, servers) and its value */
    unsigned ec_c;
    double agg_rate, agg_pre, agg_step;
    /* engine v1 / v0, slot-weighted sums over the ready replicas (fluid's
     * load-dependent prefill and TPOT): step at 1 and at max_batch (s),
     * max_batch, the saturated batch b, 1 / prefill (s per token) */
    double agg_s1, agg_sb, agg_bm, agg_bs, agg_ip;
    /* the queue: a ring of waiting requests */
    req_t *q;
    size_t q_head, q_n, q_cap;
    /* arrivals */
    fs_rng_t rng_arr, rng_tok, rng_pre;
    uint32_t *pre_len;      /* requests.prefix: tokens of id k (k = 1..ids) */
    double *pre_cdf;        /* P(id <= k) at k - 1 */
    uint64_t prefix_hits, prefix_tokens;
    double mult[FS_SYNTH_HOURS * FS_SYNTH_DAYS];    /* requests/s in each hour of the week */
    double week_rate;       /* their sum */
    fs_reqtrace_t *trace;
    fs_request_t next;
    int have_next;
    double mean_in, mean_out, cs2;
    double pq[PQ];          /* fluid: prompt-token quantiles (slice midpoints) / their mean */
    double pqe[PQ + 1];     /* ... at the slices' edges (the last: at 1, or 1 - 2^-16 when
                               the law is unbounded) / the mean */
    double pqw[PQ];         /* the slices' weights (sum 1) */
    double oq[OQ];          /* fluid: output-token quantiles (slice midpoints), tokens */
    double oqw[OQ];         /* their weights (sum 1) */
    double in2;             /* fluid: E[prompt tokens^2] */
    double tp_key[TP_N];    /* the TPOT state last spread (fs_service_fluid.c) ... */
    comp_t tp_comp[OQ * (GQ + 1)];  /* ... and its pieces (weights sum 1) */
    int n_tp_comp;
    /* HPA */
    struct rec { fs_time_t at; uint32_t n; } *recs;
    size_t n_recs, cap_recs;
    uint32_t desired;
    /* fluid */
    double lam;             /* current arrival rate, 1/s */
    fs_time_t f_at;         /* integrated up to */
    cohort_t *co;
    size_t co_head, co_n, co_cap;
    double backlog;
    /* accounting */
    fs_time_t acc_at;       /* integrals settled up to */
    bucket_t bk;
    uint64_t requests, completed, retried, cold_starts, preemptions;
    double f_requests, f_completed;
    double win_n, win_met;  /* completions in buckets from the warm-up on, meeting the SLO */
    fs_time_t warmup;
    uint64_t buckets_with, buckets_met;
    double live_s, ready_s, gpu_s, startup_gpu_s, tokens, ttft_sum;
    gsl_histogram *h_ttft, *h_tpot;
    /* disaggregated serving (fs_service_disagg.c) */
    uint8_t disagg;
    uint8_t ho_armed, rp_armed;     /* a hand-off / re-prefill pass is set for now */
    int32_t set_dec;        /* the decode group's pool set (set: the prefill group's) */
    double *pd_bw;          /* bytes/s per (prefill pool, decode pool): [p * n_bw + d] */
    size_t n_bw;
    double kv_bytes;        /* KV bytes per token */
    uint32_t rr_dec;        /* round_robin among decode replicas */
    seq_t *dq;              /* prefilled, waiting for a ready decode replica (a ring) */
    size_t dq_head, dq_n, dq_cap;
    seq_t *ho;              /* prefills done in this instant, to route to decode */
    size_t n_ho, cap_ho;
    seq_t *rp;              /* preempted on decode replicas in this instant: to prefill */
    size_t n_rp, cap_rp;
    fs_svprof_t **prof;     /* per performance row, its profile once a replica needs it */
} svc_t;

typedef struct services {
    uint32_t id;
    const fs_config_t *cfg;
    svc_t *s;
    size_t n;
    int want_requests;
} services_t;

/* ---- accounting, replicas (fs_service.c) ------------------------------------------ */

static inline replica_t *fs_svc_rep(svc_t *s, uint32_t i) { return &s->rep[i]; }

/* Disaggregated service s: its groups' integrals over the dt seconds just
 * passed (fs_service_disagg.c). */
void fs_svdis_settle(svc_t *s, double dt);

/* Settles the service's integrals (replicas, GPUs, waiting) up to now. */
static inline void fs_svc_settle(svc_t *s, fs_time_t now)
{
    double dt = fs_time_to_s(now - s->acc_at);
    if (dt > 0) {
        double live = s->live, ready = s->n_ready, gpus = s->holding * s->gpu_share;
        double wait = (double)s->q_n + s->waiting_rep;
        s->bk.live_s += live * dt;
        s->bk.ready_s += ready * dt;
        s->bk.gpu_s += gpus * dt;
        s->bk.wait_s += wait * dt;
        s->bk.run_s += (double)s->running * dt;
        s->bk.kv_used_s += (double)s->kv_used * dt;
        s->bk.kv_total_s += (double)s->kv_total * dt;
        s->live_s += live * dt;
        s->ready_s += ready * dt;
        s->gpu_s += gpus * dt;
        if (s->disagg)
            fs_svdis_settle(s, dt);
    }
    s->acc_at = now;
}

/* A ready replica joins (sign 1) or leaves (-1) the serving set. */
void fs_svc_serving_set(svc_t *s, const replica_t *r, int sign);
/* Submits a new replica (a job of the model).  0 or an error. */
int fs_svc_new_replica(svc_t *s, fs_model_t *m);
void fs_svc_free_replica(svc_t *s, uint32_t i);
/* Room for one more entry in a full ring buffer *buf of *cap entries of
 * elem bytes holding n from head (fs_grow; the entries that wrapped past the
 * old end are moved after it, so head and the order stay).  0 or FS_ENOMEM. */
int fs_svc_ring_grow(void **buf, size_t *cap, size_t head, size_t n, size_t elem);
/* Gives a running replica back to the fleet now (it holds no request). */
int fs_svc_retire_now(svc_t *s, fs_model_t *m, uint32_t i);

/* ---- arrivals (fs_service_arrive.c) -------------------------------------------------- */

/* Draws the next request after prev and sets its arrival event. */
int fs_svarr_schedule(services_t *a, svc_t *s, fs_model_t *m, fs_time_t prev, fs_error_t *err);
/* The arrival event: the request is queued and routed, the next one set. */
int fs_svarr_arrival(services_t *a, svc_t *s, fs_model_t *m);
/* The fluid rate of the hour of the week that starts now, and the next. */
int fs_svarr_rate_change(services_t *a, svc_t *s, fs_model_t *m);

/* ---- the serving engine, request mode (fs_service_engine.c) ---------------------------- */

/* Queues request r in the service's queue (at the back, or the front: a
 * retry).  0 or FS_ENOMEM. */
int fs_sveng_push(svc_t *s, const req_t *r, int front);
/* Routes the service's waiting requests to ready replicas (least loaded). */
int fs_sveng_dispatch(services_t *a, svc_t *s, fs_model_t *m);
/* The end of replica i's iteration (its event). */
int fs_sveng_done(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, uint32_t arg);
/* Replica r starts serving with performance row p: an empty engine (its
 * profile read on first use).  0, or the profile's error. */
int fs_sveng_start(svc_t *s, replica_t *r, const fs_svc_perf_cfg_t *p);
/* The service's profiles, freed (its destruction). */
void fs_sveng_free_profiles(svc_t *s);

/* Step time (fs_service_step.c).  The context term's unit: 1e-9 us per
 * token; a macro step with a context term or a profile runs at most
 * MACRO_CTX_MAX iterations (its closed-form sum far from overflow). */
#define KV_FS_PER_US 1000000000ull
#define MACRO_CTX_MAX (1u << 20)
/* The iteration starting at e->t0 with p prefill tokens and b decoding
 * sequences (those scheduled): e->ctx0, e->base and e->dur. */
void fs_svstep_times(const replica_t *r, eng_t *e, uint64_t p, uint32_t b);
/* The end of the first j iterations of the current macro step. */
fs_time_t fs_svstep_macro_end(const eng_t *e, uint64_t j);
/* Its iterations ending by now (up = 0) or started before now (up = 1). */
uint64_t fs_svstep_macro_iters(const eng_t *e, fs_time_t now, int up);
/* Replica r's engine stops for good: its KV cache leaves the service's total. */
void fs_sveng_stop(svc_t *s, replica_t *r);
/* A request completed with the figures of row: counts, SLO, histograms,
 * the bucket's percentiles, its /requests row.  0 or an error. */
int fs_sveng_record(services_t *a, svc_t *s, fs_model_t *m, const fs_request_row_t *row);
/* The service's queue: its head out (q_n > 0). */
req_t fs_sveng_pop(svc_t *s);

/* ---- disaggregated serving (fs_service_disagg.c; the engine's part above) --------------- */

int fs_svdis_check(const fs_service_cfg_t *c, size_t i, char *key, size_t keylen,
                   fs_error_t *err);
int fs_svdis_pools_check(const fs_service_cfg_t *c, const fs_cluster_t *cl, size_t i,
                         char *key, size_t keylen, fs_error_t *err);
int fs_svdis_build(svc_t *s, const fs_cluster_t *cl);
/* Transfers into decode replica i that end now: the prefill replicas'
 * blocks freed, the replica woken (EV_XFER). */
int fs_sveng_xfer_end(services_t *a, svc_t *s, fs_model_t *m, uint32_t i);
/* The instant's hand-offs to decode replicas (EV_HANDOFF) and preempted
 * decodes back to prefill replicas (EV_REPREFILL). */
int fs_sveng_handoff(services_t *a, svc_t *s, fs_model_t *m);
int fs_sveng_reprefill(services_t *a, svc_t *s, fs_model_t *m);

/* ---- engine.scheduler: slots (fs_service_slots.c) -------------------------------------------- */

int fs_svslot_dispatch(services_t *a, svc_t *s, fs_model_t *m);
int fs_svslot_done(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, uint32_t pos);
int fs_svslot_requeue(fs_model_t *m, svc_t *s, replica_t *r);
/* Every request on replica r goes back to the head of the service's queue. */
int fs_sveng_requeue(fs_model_t *m, svc_t *s, replica_t *r);

/* ---- fluid mode (fs_service_fluid.c) ------------------------------------------------------- */

/* Integrates the fluid queue up to `to` (request mode: nothing). */
int fs_svfluid_advance_to(svc_t *s, fs_time_t to);
/* The HPA's view in fluid mode: requests in the service and waiting. */
void fs_svfluid_load(svc_t *s, double *in_service, double *waiting);

/* ---- the HPA (fs_service_hpa.c) ------------------------------------------------------------- */

/* Scales to n replicas (ReplicaSet order of removal). */
int fs_svhpa_scale_to(services_t *a, svc_t *s, fs_model_t *m, uint32_t n);
/* A sync of the HPA: the replica count, stabilised, and the next sync. */
int fs_svhpa_sync(services_t *a, svc_t *s, fs_model_t *m);

/* ---- metrics (fs_service_metrics.c) ---------------------------------------------------------- */

int fs_svmet_push_d(double **v, size_t *n, size_t *cap, double x);
/* The run's log-spaced histogram for percentiles, and adding to it. */
gsl_histogram *fs_svmet_loghist(void);
void fs_svmet_hist_add(gsl_histogram *h, double x, double w);
/* A mixture of fluid components: its q-quantile (NAN without weight), and
 * its pieces into a run histogram, per (<= 64) samples a piece. */
double fs_svmet_comp_quantile(const comp_t *c, size_t n, double q);
void fs_svmet_comps_to_hist(gsl_histogram *h, const comp_t *c, size_t n, int per);
/* Ends the current bucket at `end`: its row, and a fresh bucket. */
int fs_svmet_bucket(services_t *a, svc_t *s, fs_model_t *m, fs_time_t end);
/* The module's finish: the last buckets and each service's row. */
int fs_svmet_finish(void *ud, fs_model_t *m, fs_run_totals_t *t);

/* ---- configuration (fs_service_cfg.c) ----------------------------------------------------------- */

/* The service's pools (GPU models of its table) and its week of rates. */
int fs_svcfg_build(services_t *a, fs_model_t *m, size_t k, fs_error_t *err);

#endif
