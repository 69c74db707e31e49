#include "fs_service.h"
#include "fs_catalog.h"
#include "fs_mig.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_rng.h"
#include "../traces/fs_reqtrace.h"
#include "../traces/fs_synth.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_histogram.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Random streams (sim/fs_rng.h: new purposes are appended, never renumbered). */
enum { RNG_REQUEST = 11, RNG_TOKENS = 12 };

/* Module events: kind | service << 4 | replica << 20 | arg << 44. */
enum { EV_ARRIVAL = 0, EV_DONE = 1, EV_READY = 2, EV_SYNC = 3, EV_BUCKET = 4, EV_RETIRE = 5,
       EV_RATE = 6, EV_KICK = 7 };
#define EVD(kind, svc, rep, arg)                                                        \
    ((uint64_t)(kind) | (uint64_t)(svc) << 4 | (uint64_t)(rep) << 20 | (uint64_t)(arg) << 44)
#define MAX_SERVICES 4096u
#define MAX_REPLICAS (1u << 24)
#define MAX_BATCH (1u << 20)

enum { R_FREE = 0, R_PENDING, R_STARTING, R_READY };

typedef struct req {
    fs_time_t arrival;
    uint32_t in, out, retries;
} req_t;

typedef struct inflight {
    req_t r;
    fs_time_t start;        /* its prefill started */
    fs_time_t step;         /* decode step, us */
    fs_event_handle_t ev;
    int used;
} inflight_t;

typedef struct replica {
    uint32_t slot;          /* the model's job slot */
    uint8_t state;          /* R_* */
    uint8_t doomed;         /* retired: drains, then gives its GPUs back */
    uint32_t gen;           /* bumped at every start and stop (stale READY events) */
    uint32_t busy, batch;   /* requests in flight, slots */
    double prefill_tps, step1, stepb;   /* tokens/s; decode step at batch 1 and full, us */
    fs_time_t since;        /* STARTING: when it started */
    inflight_t *fl;         /* batch entries (capacity: the largest batch of the table) */
    uint32_t next;          /* free list (R_FREE) */
} replica_t;

/* A fluid-mode component of a bucket's TTFT or TPOT distribution. */
typedef struct comp {
    double w;               /* requests */
    double a, b;            /* uniform on [a, b] (s); or, exponential tail: */
    double pw, theta;       /* P(wait > 0) and the tail's mean; theta < 0: uniform */
} comp_t;

typedef struct cohort { double t0, t1, rate; } cohort_t;

/* Fluid mode: a request's prefill is spread over PQ quantile slices of the
 * prompt tokens: 28 of 1/32 below the 0.875 quantile, then slices that
 * halve towards the tail (to 1 - 2^-14), so that a p99 sees the tail. */
#define PQ 40   /* backlog: arrivals on [t0, t1] */

typedef struct bucket {
    fs_time_t start;
    uint64_t arrivals, completed;
    double *ttft, *tpot;    /* request mode: the bucket's completions */
    size_t n_ttft, cap_ttft, n_tpot, cap_tpot;
    comp_t *cttft, *ctpot;  /* fluid mode */
    size_t n_cttft, cap_cttft, n_ctpot, cap_ctpot;
    double f_arrivals, f_completed, f_met;  /* fluid: expected counts */
    uint64_t met;
    double live_s, ready_s, gpu_s, wait_s, tokens;
    uint32_t cold;
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
    double ec_a, ec_p;      /* the last Erlang C asked (offered load, servers) and its value */
    unsigned ec_c;
    double agg_rate, agg_pre, agg_step;
    /* the queue: a ring of waiting requests */
    req_t *q;
    size_t q_head, q_n, q_cap;
    /* arrivals */
    fs_rng_t rng_arr, rng_tok;
    double mult[FS_SYNTH_HOURS * FS_SYNTH_DAYS];    /* requests/s in each hour of the week */
    double week_rate;       /* their sum */
    fs_reqtrace_t *trace;
    fs_request_t next;
    int have_next;
    double mean_in, mean_out, cs2;
    double pq[PQ];          /* fluid: prompt-token quantiles (slice midpoints) / their mean */
    double pqw[PQ];         /* the slices' weights (sum 1) */
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
    uint64_t requests, completed, retried, cold_starts;
    double f_requests, f_completed;
    double win_n, win_met;  /* completions in buckets from the warm-up on, meeting the SLO */
    fs_time_t warmup;
    uint64_t buckets_with, buckets_met;
    double live_s, ready_s, gpu_s, startup_gpu_s, tokens, ttft_sum;
    gsl_histogram *h_ttft, *h_tpot;
} svc_t;

typedef struct services {
    uint32_t id;
    const fs_config_t *cfg;
    svc_t *s;
    size_t n;
    int want_requests;
} services_t;

/* ---- Erlang C ----------------------------------------------------------------- */

double fs_erlang_c(double a, unsigned c)
{
    if (c == 0 || a >= (double)c)
        return 1.0;
    if (a <= 0)
        return 0.0;
    /* Erlang B by its recursion (stable), then C = B / (1 - rho (1 - B)) */
    double b = 1.0;
    for (unsigned k = 1; k <= c; k++)
        b = a * b / ((double)k + a * b);
    double rho = a / (double)c;
    return b / (1.0 - rho * (1.0 - b));
}

/* ---- small helpers ------------------------------------------------------------ */

static int push_d(double **v, size_t *n, size_t *cap, double x)
{
    if (fs_grow((void **)v, cap, *n + 1, sizeof **v))
        return FS_ENOMEM;
    (*v)[(*n)++] = x;
    return 0;
}

/* Appends a component, or adds its weight to the last one when they are
 * the same distribution (the state did not change between two advances). */
static int push_comp(comp_t **v, size_t *n, size_t *cap, comp_t c)
{
    if (c.w <= 0)
        return 0;
    for (size_t i = *n, lo = *n > 2 * PQ ? *n - 2 * PQ : 0; i-- > lo;) {
        comp_t *l = &(*v)[i];
        if (l->a == c.a && l->b == c.b && l->pw == c.pw && l->theta == c.theta) {
            l->w += c.w;
            return 0;
        }
    }
    if (fs_grow((void **)v, cap, *n + 1, sizeof **v))
        return FS_ENOMEM;
    (*v)[(*n)++] = c;
    return 0;
}


/* Log-spaced histogram for the whole-run percentiles: 1e-4 s .. 1e5 s,
 * 2,000 bins a decade (0.12% wide). */
enum { HIST_DEC = 9, HIST_PER = 2000 };
#define HIST_LO (-4.0)  /* log10 of the first range */
static gsl_histogram *loghist(void)
{
    enum { DEC = HIST_DEC, PER = HIST_PER };
    gsl_histogram *h = gsl_histogram_alloc(DEC * PER);    /* bins not zeroed */
    if (!h)
        return NULL;
    gsl_histogram_reset(h);
    double *r = h->range;
    for (size_t i = 0; i <= DEC * PER; i++)
        r[i] = pow(10.0, HIST_LO + (double)i / PER);
    return h;
}

/* gsl_histogram_accumulate without its binary search: the bin of a
 * log-spaced histogram is computed, then checked against the ranges. */
static void hist_add(gsl_histogram *h, double x, double w)
{
    const double *r = h->range;
    size_t n = h->n, i;
    if (!(x > r[0]))
        i = 0;
    else if (!(x < r[n]))
        i = n - 1;
    else {
        double f = (log10(x) - HIST_LO) * HIST_PER;
        i = f <= 0 ? 0 : f >= (double)n ? n - 1 : (size_t)f;
        while (i > 0 && x < r[i])
            i--;
        while (i + 1 < n && x >= r[i + 1])
            i++;
    }
    h->bin[i] += w;
}

static double hist_quantile(const gsl_histogram *h, double q)
{
    double tot = gsl_histogram_sum(h);
    if (!(tot > 0))
        return NAN;
    double want = q * tot, cum = 0;
    for (size_t i = 0; i < h->n; i++) {
        double b = h->bin[i];
        if (cum + b >= want && b > 0) {
            double f = (want - cum) / b;
            return h->range[i] + f * (h->range[i + 1] - h->range[i]);
        }
        cum += b;
    }
    return h->range[h->n];
}

/* ---- accounting ---------------------------------------------------------------- */

static void settle(svc_t *s, fs_time_t now)
{
    double dt = fs_time_to_s(now - s->acc_at);
    if (dt > 0) {
        double live = s->live, ready = s->n_ready, gpus = s->holding * s->gpu_share;
        double wait = (double)s->q_n;
        s->bk.live_s += live * dt;
        s->bk.ready_s += ready * dt;
        s->bk.gpu_s += gpus * dt;
        s->bk.wait_s += wait * dt;
        s->live_s += live * dt;
        s->ready_s += ready * dt;
        s->gpu_s += gpus * dt;
    }
    s->acc_at = now;
}

/* ---- arrivals -------------------------------------------------------------------- */

/* The arrival time after `from` for a unit of operational time x: the
 * integral of the week's rate profile from `from` reaches x.  NEVER when
 * the profile is all zero. */
static fs_time_t advance_rate(const svc_t *s, fs_time_t from, double x)
{
    const fs_time_t hour = 3600 * FS_US_PER_S;
    double tot = s->week_rate;
    if (!(tot > 0))
        return FS_TIME_NEVER;
    fs_time_t t = from;
    /* whole weeks first */
    double week = tot * 3600.0;
    if (x > week) {
        double w = floor(x / week);
        t += (fs_time_t)w * 168 * hour;
        x -= w * week;
    }
    for (;;) {
        size_t k = (size_t)((t / hour) % (FS_SYNTH_HOURS * FS_SYNTH_DAYS));
        fs_time_t end = (t / hour + 1) * hour;
        double r = s->mult[k];
        double cap = r * fs_time_to_s(end - t);
        if (r > 0 && x <= cap) {
            fs_time_t d = (fs_time_t)llround(x / r * 1e6);
            return t + (d > 0 ? d : 0);
        }
        x -= cap;
        t = end;
    }
}

static uint32_t draw_tokens(const fs_dist_t *d, gsl_rng *g)
{
    double v = fs_dist_sample(d, g);
    if (!(v >= 1))
        return 1;
    return v > 4e9 ? 4000000000u : (uint32_t)llround(v);
}

/* The next request after the one at `prev` (synthetic) or from the trace;
 * 0, or 1 when there are no more, or an error. */
static int next_request(svc_t *s, fs_time_t prev, fs_request_t *r, fs_error_t *err)
{
    const fs_service_cfg_t *c = s->cfg;
    if (c->process == FS_SVC_TRACE) {
        int rc = fs_reqtrace_next(s->trace, r, err);
        return rc == 1 ? 0 : rc == 0 ? 1 : rc;
    }
    gsl_rng *g = fs_rng_gsl(&s->rng_arr);
    double x = c->process == FS_SVC_GAMMA ? gsl_ran_gamma(g, c->shape, 1.0 / c->shape)
                                          : gsl_ran_exponential(g, 1.0);
    fs_time_t at = advance_rate(s, prev, x);
    if (at == FS_TIME_NEVER)
        return 1;
    if (at == prev && prev > 0)
        at = prev + 1;      /* one per microsecond at most */
    r->at = at;
    r->input = draw_tokens(&c->input, fs_rng_gsl(&s->rng_tok));
    r->output = draw_tokens(&c->output, fs_rng_gsl(&s->rng_tok));
    return 0;
}

/* ---- replicas ------------------------------------------------------------------- */

static replica_t *rep_of(svc_t *s, uint32_t i) { return &s->rep[i]; }

/* A ready replica joins (sign 1) or leaves (-1) the serving set. */
static void serving_set(svc_t *s, const replica_t *r, int sign)
{
    double sv = s->mean_in / r->prefill_tps + (s->mean_out - 1) * r->stepb * 1e-6;
    if (sign > 0) {
        s->slots_ready += r->batch;
        s->ready_live++;
    } else {
        s->slots_ready -= r->batch;
        s->ready_live--;
    }
    s->agg_rate += sign * (double)r->batch / (sv > 0 ? sv : 1e-9);
    s->agg_pre += sign * (double)r->batch * (s->mean_in / r->prefill_tps);
    s->agg_step += sign * (double)r->batch * r->stepb * 1e-6;
    if (s->ready_live == 0)
        s->agg_rate = s->agg_pre = s->agg_step = 0;     /* no drift */
}

static int new_replica(svc_t *s, fs_model_t *m)
{
    uint32_t i;
    if (s->free_rep != UINT32_MAX) {
        i = s->free_rep;
        s->free_rep = s->rep[i].next;
    } else {
        if (s->n_rep >= MAX_REPLICAS)
            return FS_ENOMEM;
        if (fs_grow((void **)&s->rep, &s->cap_rep, s->n_rep + 1, sizeof *s->rep))
            return FS_ENOMEM;
        i = (uint32_t)s->n_rep++;
        memset(&s->rep[i], 0, sizeof s->rep[i]);
        if (s->cfg->mode == FS_SVC_REQUEST &&
            !(s->rep[i].fl = fs_calloc(s->max_batch, sizeof *s->rep[i].fl)))
            return FS_ENOMEM;
    }
    replica_t *r = &s->rep[i];
    inflight_t *fl = r->fl;
    uint32_t gen = r->gen;
    memset(r, 0, sizeof *r);
    r->fl = fl;
    r->gen = gen + 1;
    r->state = R_PENDING;
    fs_job_t job;
    fs_job_init(&job);
    job.id = (uint64_t)1 << 63 | (uint64_t)s->idx << 32 | i;
    job.gpus = s->cfg->gpus;
    job.gpu_milli = s->mig ? fs_mig_code_milli(s->mig) : FS_GPU_MILLI_WHOLE;
    job.mig = s->mig;
    job.priority = s->cfg->priority;
    job.job_class = (int32_t)s->cfg->job_class;
    job.flags = FS_JOB_SINGLE_NODE;
    settle(s, fs_model_now(m));
    int rc = fs_model_submit(m, &job, s->set, &r->slot);
    if (rc) {
        r->state = R_FREE;
        r->next = s->free_rep;
        s->free_rep = i;
        return rc;
    }
    s->live++;
    return 0;
}

static void free_replica(svc_t *s, uint32_t i)
{
    replica_t *r = &s->rep[i];
    r->state = R_FREE;
    r->gen++;
    r->next = s->free_rep;
    s->free_rep = i;
}

/* Marks the replica down (not starting, not ready) in the counts. */
static void unready(svc_t *s, replica_t *r)
{
    if (r->state == R_READY) {
        s->n_ready--;
        s->holding--;
        if (!r->doomed)
            serving_set(s, r, -1);
    } else if (r->state == R_STARTING) {
        s->n_starting--;
        s->holding--;
    }
}

static int fluid_advance_to(svc_t *s, fs_time_t to);
#define fluid_advance(a, s, m) fluid_advance_to(s, fs_model_now(m))
static int dispatch(services_t *a, svc_t *s, fs_model_t *m);

/* Gives a running replica back to the fleet now (it holds no request). */
static int retire_now(svc_t *s, fs_model_t *m, uint32_t i)
{
    replica_t *r = rep_of(s, i);
    settle(s, fs_model_now(m));
    if (r->state == R_STARTING)
        s->startup_gpu_s += s->gpu_share * fs_time_to_s(fs_model_now(m) - r->since);
    unready(s, r);
    int rc = fs_model_retire(m, r->slot);
    free_replica(s, i);
    return rc;
}

/* ---- requests (request mode) ---------------------------------------------------- */

static int q_push(svc_t *s, const req_t *r, int front)
{
    if (s->q_n == s->q_cap) {
        size_t nc = s->q_cap ? 2 * s->q_cap : 64;
        req_t *nq = fs_malloc(nc * sizeof *nq);
        if (!nq)
            return FS_ENOMEM;
        for (size_t k = 0; k < s->q_n; k++)
            nq[k] = s->q[(s->q_head + k) % s->q_cap];
        fs_free(s->q);
        s->q = nq;
        s->q_cap = nc;
        s->q_head = 0;
    }
    if (front) {
        s->q_head = (s->q_head + s->q_cap - 1) % s->q_cap;
        s->q[s->q_head] = *r;
    } else {
        s->q[(s->q_head + s->q_n) % s->q_cap] = *r;
    }
    s->q_n++;
    return 0;
}

static req_t q_pop(svc_t *s)
{
    req_t r = s->q[s->q_head];
    s->q_head = (s->q_head + 1) % s->q_cap;
    s->q_n--;
    return r;
}

static fs_time_t prefill_us(const replica_t *r, uint32_t in)
{
    fs_time_t d = (fs_time_t)llround((double)in / r->prefill_tps * 1e6);
    return d > 0 ? d : 0;
}

/* Starts request q on replica i (a free batch slot). */
static int serve(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, const req_t *q)
{
    replica_t *r = rep_of(s, i);
    uint32_t pos = 0;
    while (r->fl[pos].used)
        pos++;
    inflight_t *f = &r->fl[pos];
    fs_time_t now = fs_model_now(m);
    r->busy++;
    s->busy++;
    double stepd = r->batch > 1 ? r->step1 + (r->stepb - r->step1) * (double)(r->busy - 1) /
                                                 (double)(r->batch - 1)
                                : r->stepb;
    f->r = *q;
    f->start = now;
    f->step = (fs_time_t)llround(stepd);
    f->used = 1;
    fs_time_t end = now + prefill_us(r, q->in) + (fs_time_t)(q->out - 1) * f->step;
    return fs_model_module_event(m, a->id, end, FS_PRIO_COMPLETION, EVD(EV_DONE, s->idx, i, pos),
                                 &f->ev);
}

/* Sends waiting requests to ready replicas with free slots: the one with the
 * fewest in flight first (lowest index on ties). */
static int dispatch(services_t *a, svc_t *s, fs_model_t *m)
{
    if (s->cfg->mode != FS_SVC_REQUEST)
        return 0;
    while (s->q_n > 0 && s->busy - s->busy_doomed < s->slots_ready) {
        uint32_t best = UINT32_MAX, bb = UINT32_MAX;
        for (uint32_t i = 0; i < s->n_rep; i++) {
            const replica_t *r = &s->rep[i];
            if (r->state == R_READY && !r->doomed && r->busy < r->batch && r->busy < bb) {
                best = i;
                bb = r->busy;
            }
        }
        if (best == UINT32_MAX)
            break;
        settle(s, fs_model_now(m));
        req_t q = q_pop(s);
        int rc = serve(a, s, m, best, &q);
        if (rc)
            return rc;
    }
    return 0;
}

static int done(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, uint32_t pos)
{
    replica_t *r = rep_of(s, i);
    if (i >= s->n_rep || pos >= s->max_batch || !r->fl[pos].used)
        return FS_EINTERNAL;
    inflight_t *f = &r->fl[pos];
    fs_time_t now = fs_model_now(m);
    double pre = fs_time_to_s(prefill_us(r, f->r.in));
    double ttft = fs_time_to_s(f->start - f->r.arrival) + pre;
    double tpot = f->r.out > 1 ? fs_time_to_s(f->step) : NAN;
    const fs_service_cfg_t *c = s->cfg;
    int met = ttft <= fs_time_to_s(c->slo_ttft) + 1e-9 &&
              (c->slo_tpot == 0 || isnan(tpot) || tpot <= fs_time_to_s(c->slo_tpot) + 1e-9);
    int win = s->bk.start >= s->warmup;    /* the run's figures: after the warm-up */
    s->completed++;
    s->bk.completed++;
    s->bk.met += (uint64_t)met;
    s->tokens += f->r.out;
    s->bk.tokens += f->r.out;
    if (win) {
        s->win_n += 1;
        s->win_met += met;
        s->ttft_sum += ttft;
        hist_add(s->h_ttft, ttft, 1);
    }
    if (push_d(&s->bk.ttft, &s->bk.n_ttft, &s->bk.cap_ttft, ttft))
        return FS_ENOMEM;
    if (!isnan(tpot)) {
        if (win)
            hist_add(s->h_tpot, tpot, 1);
        if (push_d(&s->bk.tpot, &s->bk.n_tpot, &s->bk.cap_tpot, tpot))
            return FS_ENOMEM;
    }
    const fs_sink_t *sk = fs_model_sink(m);
    if (a->want_requests && sk->request) {
        fs_request_row_t row = {.service = s->idx, .input = f->r.in, .output = f->r.out,
                                .retries = f->r.retries, .arrival = fs_time_to_s(f->r.arrival),
                                .ttft = ttft, .tpot = tpot, .end = fs_time_to_s(now)};
        int rc = sk->request(sk->ud, &row);
        if (rc) {
            fs_model_error(m, sk->err);
            return rc;
        }
    }
    f->used = 0;
    f->ev = (fs_event_handle_t){0, 0};
    r->busy--;
    s->busy--;
    s->busy_doomed -= r->doomed;
    if (r->doomed && r->busy == 0)
        return retire_now(s, m, i);
    return dispatch(a, s, m);
}

/* Every request in flight on replica i goes back to the head of the queue
 * (in their arrival order). */
static int requeue_inflight(fs_model_t *m, svc_t *s, replica_t *r)
{
    settle(s, fs_model_now(m));
    for (;;) {      /* latest arrival first, each pushed at the front */
        int k = -1;
        for (uint32_t p = 0; p < s->max_batch && r->fl; p++)
            if (r->fl[p].used && (k < 0 || r->fl[p].r.arrival > r->fl[k].r.arrival))
                k = (int)p;
        if (k < 0)
            break;
        inflight_t *f = &r->fl[k];
        fs_model_cancel(m, f->ev);
        f->used = 0;
        f->r.retries++;
        s->retried++;
        r->busy--;
        s->busy--;
        s->busy_doomed -= r->doomed;
        int rc = q_push(s, &f->r, 1);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- fluid mode ------------------------------------------------------------------ */

/* The ready replicas' batch slots (*slots) and their mean service rate. */
static double fluid_mu(const svc_t *s, double *slots)
{
    *slots = s->slots_ready;
    return s->slots_ready > 0 ? s->agg_rate / s->slots_ready : 0;
}

static double fluid_prefill(const svc_t *s)
{
    return s->slots_ready > 0 ? s->agg_pre / s->slots_ready : 0;
}

static double fluid_step(const svc_t *s)
{
    return s->slots_ready > 0 ? s->agg_step / s->slots_ready : NAN;
}

/* fs_erlang_c, remembered: it is O(servers) and asked at every sync. */
static double erlang_c_memo(svc_t *s, double a, unsigned c)
{
    if (a != s->ec_a || c != s->ec_c) {
        s->ec_a = a;
        s->ec_c = c;
        s->ec_p = fs_erlang_c(a, c);
    }
    return s->ec_p;
}

/* n requests completed with waits distributed as `wait` (offsets from 0)
 * and a mean prefill of `pre` s: TTFT = wait + prefill, the prefill spread
 * as the prompt tokens are (PQ quantile slices, s->pq). */
static int fluid_done(svc_t *s, double n, comp_t wait, double tpot, double pre)
{
    if (!(n > 0))
        return 0;
    s->f_completed += n;
    s->bk.f_completed += n;
    s->tokens += n * s->mean_out;
    s->bk.tokens += n * s->mean_out;
    double slo = fs_time_to_s(s->cfg->slo_ttft);
    int tpot_bad = s->cfg->slo_tpot > 0 && !isnan(tpot) &&
                   tpot > fs_time_to_s(s->cfg->slo_tpot) + 1e-12;
    double ok = 0, mean = pre + (wait.theta >= 0 ? wait.a + wait.pw * wait.theta
                                                 : 0.5 * (wait.a + wait.b));
    for (int k = 0; k < PQ; k++) {
        comp_t c = wait;
        double d = pre * s->pq[k], f;
        c.a += d;
        c.b += d;
        c.w = n * s->pqw[k];
        /* SLO: the share of the slice with TTFT <= slo */
        if (c.theta >= 0) {
            double x = slo - c.a;
            f = x < 0 ? 0 : 1 - c.pw * (c.theta > 0 ? exp(-x / c.theta) : 0);
        } else {
            f = slo >= c.b ? 1 : slo <= c.a ? 0 : (slo - c.a) / (c.b - c.a);
        }
        ok += s->pqw[k] * f;
        if (push_comp(&s->bk.cttft, &s->bk.n_cttft, &s->bk.cap_cttft, c))
            return FS_ENOMEM;
    }
    ok = tpot_bad ? 0 : ok;
    s->bk.f_met += n * ok;
    if (s->bk.start >= s->warmup) {    /* the run's figures: after the warm-up */
        s->win_n += n;
        s->win_met += n * ok;
        s->ttft_sum += n * mean;
    }
    comp_t tp = {.w = n, .a = isnan(tpot) ? 0 : tpot, .b = isnan(tpot) ? 0 : tpot, .theta = -1};
    if (!isnan(tpot) && push_comp(&s->bk.ctpot, &s->bk.n_ctpot, &s->bk.cap_ctpot, tp))
        return FS_ENOMEM;
    return 0;
}

static int co_push(svc_t *s, double t0, double t1, double rate)
{
    if (!(t1 > t0) || !(rate > 0))
        return 0;
    if (s->co_n) {
        cohort_t *l = &s->co[(s->co_head + s->co_n - 1) % s->co_cap];
        if (l->t1 == t0 && l->rate == rate) {
            l->t1 = t1;
            return 0;
        }
    }
    if (s->co_n == s->co_cap) {
        size_t nc = s->co_cap ? 2 * s->co_cap : 16;
        cohort_t *n = fs_malloc(nc * sizeof *n);
        if (!n)
            return FS_ENOMEM;
        for (size_t k = 0; k < s->co_n; k++)
            n[k] = s->co[(s->co_head + k) % s->co_cap];
        fs_free(s->co);
        s->co = n;
        s->co_cap = nc;
        s->co_head = 0;
    }
    s->co[(s->co_head + s->co_n) % s->co_cap] = (cohort_t){t0, t1, rate};
    s->co_n++;
    return 0;
}

/* Drains `mass` requests from the backlog's head, departing at rate cap
 * from time d0: each cohort's requests leave with waits spread uniformly. */
static int co_drain(svc_t *s, double mass, double d0, double cap, double pre, double tpot)
{
    while (mass > 1e-12 && s->co_n) {
        cohort_t *h = &s->co[s->co_head];
        double m = h->rate * (h->t1 - h->t0);
        double take = m <= mass ? m : mass;
        double a1 = m <= mass ? h->t1 : h->t0 + take / h->rate;
        double d1 = d0 + take / cap;
        double w0 = d0 - h->t0, w1 = d1 - a1;
        if (w0 < 0)
            w0 = 0;
        if (w1 < 0)
            w1 = 0;
        comp_t c = {.a = w0 < w1 ? w0 : w1, .b = w0 < w1 ? w1 : w0, .theta = -1};
        int rc = fluid_done(s, take, c, tpot, pre);
        if (rc)
            return rc;
        s->backlog -= take;
        mass -= take;
        d0 = d1;
        if (m <= take + 1e-12) {
            s->co_head = (s->co_head + 1) % s->co_cap;
            s->co_n--;
        } else {
            h->t0 = a1;
        }
    }
    if (!s->co_n || s->backlog < 1e-9)
        s->backlog = s->co_n ? s->backlog : 0;
    return 0;
}

/* Integrates the fluid queue from s->f_at to `to` at the current rate and
 * ready replicas. */
static int fluid_advance_to(svc_t *s, fs_time_t to)
{
    if (s->cfg->mode != FS_SVC_FLUID || to <= s->f_at)
        return 0;
    double t = fs_time_to_s(s->f_at), t1 = fs_time_to_s(to);
    s->f_at = to;
    double slots, mu = fluid_mu(s, &slots), cap = slots * mu, lam = s->lam;
    double pre = fluid_prefill(s), tpot = fluid_step(s);
    if (s->mean_out <= 1)
        tpot = NAN;
    s->f_requests += lam * (t1 - t);
    s->bk.f_arrivals += lam * (t1 - t);
    while (t1 - t > 1e-12) {
        if (s->backlog <= 1e-9 && lam < cap) {     /* stationary M/G/c */
            double n = lam * (t1 - t);
            double pw = erlang_c_memo(s, lam / mu, (unsigned)llround(slots));
            double ca2 = s->cfg->process == FS_SVC_GAMMA ? 1.0 / s->cfg->shape : 1.0;
            double ew = pw / (cap - lam) * (ca2 + s->cs2) / 2.0;
            comp_t c = {.a = 0, .pw = pw, .theta = pw > 0 ? ew / pw : 0};
            int rc = fluid_done(s, n, c, tpot, pre);
            if (rc)
                return rc;
            s->bk.wait_s += lam * ew * (t1 - t);    /* Little: waiting = lambda W */
            t = t1;
            break;
        }
        double end = t1;
        if (cap > lam && s->backlog > 0) {
            double te = t + s->backlog / (cap - lam);
            if (te < end)
                end = te;
        }
        int rc = co_push(s, t, end, lam);
        if (rc)
            return rc;
        s->backlog += lam * (end - t);
        s->bk.wait_s += (s->backlog - 0.5 * (lam - cap) * (end - t)) * (end - t);
        if (cap > 0 && (rc = co_drain(s, cap * (end - t), t, cap, pre, tpot)))
            return rc;
        if (end < t1 && s->backlog < 1e-6) {
            s->backlog = 0;
            s->co_n = 0;
        }
        t = end;
    }
    return 0;
}

/* The HPA's view in fluid mode: requests in the service and waiting. */
static void fluid_load(svc_t *s, double *in_service, double *waiting)
{
    double slots, mu = fluid_mu(s, &slots), cap = slots * mu, lam = s->lam;
    if (slots <= 0 || lam >= cap || s->backlog > 0) {
        *in_service = slots;
        *waiting = s->backlog;
        return;
    }
    double pw = erlang_c_memo(s, lam / mu, (unsigned)llround(slots));
    double ca2 = s->cfg->process == FS_SVC_GAMMA ? 1.0 / s->cfg->shape : 1.0;
    double ew = pw / (cap - lam) * (ca2 + s->cs2) / 2.0;
    *in_service = lam / mu;
    *waiting = lam * ew;
}

/* ---- the HPA ----------------------------------------------------------------------- */

static uint32_t ceil_u(double x)
{
    if (!(x > 0))
        return 0;
    return x >= 4e9 ? 4000000000u : (uint32_t)ceil(x - 1e-9);
}

/* The replicas the HPA's replica calculator asks for now. */
static uint32_t hpa_calc(svc_t *s)
{
    const fs_service_cfg_t *c = s->cfg;
    uint32_t cur = s->live;
    uint32_t ready = s->ready_live;
    uint32_t unready = cur > ready ? cur - ready : 0;
    if (ready == 0)
        return cur;     /* no metrics: no change */
    double total;       /* the metric summed over the ready replicas */
    double inserv = s->busy - s->busy_doomed, waiting = (double)s->q_n;
    if (c->mode == FS_SVC_FLUID)
        fluid_load(s, &inserv, &waiting);
    switch (c->metric) {
    case FS_HPA_CONCURRENCY: total = inserv + waiting; break;
    case FS_HPA_QUEUE: total = waiting; break;
    default:
        total = s->slots_ready > 0 ? inserv / s->slots_ready * ready : 0;
    }
    double ratio = total / ready / c->target;
    if (unready == 0) {
        if (fabs(ratio - 1) <= c->tolerance)
            return cur;
        return ceil_u(ratio * ready);
    }
    /* unready pods: 0 when scaling up, the target when scaling down */
    double n = ready + unready;
    double t2 = ratio > 1 ? total : total + c->target * unready;
    double r2 = t2 / n / c->target;
    if (fabs(r2 - 1) <= c->tolerance || (ratio < 1 && r2 > 1) || (ratio > 1 && r2 < 1))
        return cur;
    uint32_t want = ceil_u(r2 * n);
    if ((r2 < 1 && want > cur) || (r2 > 1 && want < cur))
        return cur;
    return want;
}

static int hpa_record(svc_t *s, fs_time_t now, uint32_t n)
{
    const fs_service_cfg_t *c = s->cfg;
    fs_time_t keep = c->down_window > c->up_window ? c->down_window : c->up_window;
    size_t w = 0;
    for (size_t i = 0; i < s->n_recs; i++)
        if (now - s->recs[i].at <= keep)
            s->recs[w++] = s->recs[i];
    s->n_recs = w;
    if (fs_grow((void **)&s->recs, &s->cap_recs, s->n_recs + 1, sizeof *s->recs))
        return FS_ENOMEM;
    s->recs[s->n_recs++] = (struct rec){now, n};
    return 0;
}

/* Scales to n replicas: new ones are submitted; surplus ones are retired
 * in the ReplicaSet's order: pending ones first (deleted from the queue),
 * then starting ones, then ready ones with the fewest requests, newest
 * first. */
static int scale_to(services_t *a, svc_t *s, fs_model_t *m, uint32_t n)
{
    while (s->live < n) {
        int rc = new_replica(s, m);
        if (rc)
            return rc;
    }
    while (s->live > n) {
        int pick = -1, best_rank = 99;
        uint32_t best_busy = UINT32_MAX;
        for (uint32_t i = s->n_rep; i-- > 0;) {
            const replica_t *r = &s->rep[i];
            if (r->doomed || r->state == R_FREE)
                continue;
            int rank = r->state == R_PENDING ? 0 : r->state == R_STARTING ? 1 : 2;
            if (rank < best_rank || (rank == best_rank && r->busy < best_busy)) {
                pick = (int)i;
                best_rank = rank;
                best_busy = r->busy;
            }
        }
        if (pick < 0)
            break;
        replica_t *r = &s->rep[pick];
        int rc = fluid_advance(a, s, m);
        if (rc)
            return rc;
        settle(s, fs_model_now(m));
        if (r->state == R_READY)
            serving_set(s, r, -1);
        r->doomed = 1;
        s->busy_doomed += r->busy;
        s->live--;
        if (r->state == R_PENDING) {
            /* waiting in the policy's queue: taken out of it now (a policy
             * that cannot give it back starts it, and it is retired in
             * that instant: on_replica), or recovering after a failure
             * (it ends at its requeue) */
            rc = fs_model_retire(m, r->slot);
            if (rc == 0)
                free_replica(s, (uint32_t)pick);
            if (rc < 0)
                return rc;
            continue;
        }
        if (r->busy == 0 && (rc = retire_now(s, m, (uint32_t)pick)))
            return rc;
    }
    return 0;
}

static int hpa_sync(services_t *a, svc_t *s, fs_model_t *m)
{
    const fs_service_cfg_t *c = s->cfg;
    fs_time_t now = fs_model_now(m);
    int rc;
    uint32_t cur = s->live, want = hpa_calc(s);
    if ((rc = hpa_record(s, now, want)))
        return rc;
    /* stabilisation: up = the smallest in the up window, down = the largest
     * in the down window */
    uint32_t up = want, down = want;
    for (size_t i = 0; i < s->n_recs; i++) {
        if (now - s->recs[i].at <= c->up_window && s->recs[i].n < up)
            up = s->recs[i].n;
        if (now - s->recs[i].at <= c->down_window && s->recs[i].n > down)
            down = s->recs[i].n;
    }
    uint32_t n = cur;
    if (n < up)
        n = up;
    if (n > down)
        n = down;
    /* the default scale-up limit: max(+100%, +4) per period */
    uint32_t lim = cur * 2 > cur + 4 ? cur * 2 : cur + 4;
    if (n > lim)
        n = lim;
    uint32_t maxr = c->max_replicas ? c->max_replicas : c->min_replicas;
    if (n > maxr)
        n = maxr;
    if (n < c->min_replicas)
        n = c->min_replicas;
    s->desired = n;
    if ((rc = scale_to(a, s, m, n)))
        return rc;
    return fs_model_module_event(m, a->id, now + c->sync, FS_PRIO_TIMER,
                                 EVD(EV_SYNC, s->idx, 0, 0), NULL);
}

/* ---- buckets ------------------------------------------------------------------------ */

/* The q-quantile of a mixture of fluid components (bisection on the CDF). */
static double comp_quantile(const comp_t *c, size_t n, double q)
{
    double tot = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        tot += c[i].w;
        double top = c[i].theta >= 0 ? c[i].a + 50 * c[i].theta : c[i].b;
        if (top > hi)
            hi = top;
    }
    if (!(tot > 0))
        return NAN;
    double lo = 0;
    hi = hi * 1.01 + 1e-9;
    for (int it = 0; it < 100; it++) {
        double x = 0.5 * (lo + hi), f = 0;
        for (size_t i = 0; i < n; i++) {
            const comp_t *k = &c[i];
            double p;
            if (k->theta >= 0)
                p = x < k->a ? 0 : 1 - k->pw * (k->theta > 0 ? exp(-(x - k->a) / k->theta) : 0);
            else
                p = x >= k->b ? 1 : x < k->a ? 0 : (x - k->a) / (k->b - k->a);
            f += k->w * p;
        }
        if (f / tot >= q)
            hi = x;
        else
            lo = x;
    }
    return hi;
}

/* The q-quantile of v[0..n) as gsl_stats_quantile_from_sorted_data gives
 * it on the sorted data (interpolating between order statistics), from two
 * selections (gsl_stats_select: O(n), v is reordered) instead of a sort. */
static double select_quantile(double *v, size_t n, double q)
{
    double f = q * (double)(n - 1);
    size_t lhs = (size_t)f;
    double d = f - (double)lhs, lo = gsl_stats_select(v, 1, n, lhs);
    if (lhs + 1 >= n || d == 0)
        return lo;
    return (1 - d) * lo + d * gsl_stats_select(v, 1, n, lhs + 1);
}

static void sorted_q(double *v, size_t n, double *p50, double *p95, double *p99)
{
    if (n == 0) {
        *p50 = *p95 = *p99 = NAN;
        return;
    }
    *p99 = select_quantile(v, n, 0.99);
    *p95 = select_quantile(v, n, 0.95);
    *p50 = select_quantile(v, n, 0.50);
}

/* A bucket's fluid components into the run's histograms: each in 64
 * quantile slices. */
static void comps_to_hist(gsl_histogram *h, const comp_t *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const comp_t *k = &c[i];
        for (int j = 0; j < 64; j++) {
            double u = (j + 0.5) / 64.0, x;
            if (k->theta >= 0)
                x = u <= 1 - k->pw || !(k->theta > 0) ? k->a : k->a - k->theta * log((1 - u) / k->pw);
            else
                x = k->a + u * (k->b - k->a);
            hist_add(h, x, k->w / 64.0);
        }
    }
}

static int emit_bucket(services_t *a, svc_t *s, fs_model_t *m, fs_time_t end)
{
    int rc = fluid_advance_to(s, end);
    if (rc)
        return rc;
    if (s->bk.start >= s->warmup) {
        comps_to_hist(s->h_ttft, s->bk.cttft, s->bk.n_cttft);
        comps_to_hist(s->h_tpot, s->bk.ctpot, s->bk.n_ctpot);
    }
    settle(s, end);
    bucket_t *b = &s->bk;
    double len = fs_time_to_s(end - b->start);
    fs_svc_bucket_row_t r = {.service = s->idx, .start = fs_time_to_s(b->start),
                             .end = fs_time_to_s(end), .cold_starts = b->cold};
    if (s->cfg->mode == FS_SVC_FLUID) {
        r.requests = (uint64_t)llround(b->f_arrivals);
        r.completed = (uint64_t)llround(b->f_completed);
        r.ttft_p50 = comp_quantile(b->cttft, b->n_cttft, 0.50);
        r.ttft_p95 = comp_quantile(b->cttft, b->n_cttft, 0.95);
        r.ttft_p99 = comp_quantile(b->cttft, b->n_cttft, 0.99);
        r.tpot_p50 = comp_quantile(b->ctpot, b->n_ctpot, 0.50);
        r.tpot_p95 = comp_quantile(b->ctpot, b->n_ctpot, 0.95);
        r.tpot_p99 = comp_quantile(b->ctpot, b->n_ctpot, 0.99);
        r.slo_attainment = b->f_completed > 0 ? b->f_met / b->f_completed : NAN;
    } else {
        r.requests = b->arrivals;
        r.completed = b->completed;
        sorted_q(b->ttft, b->n_ttft, &r.ttft_p50, &r.ttft_p95, &r.ttft_p99);
        sorted_q(b->tpot, b->n_tpot, &r.tpot_p50, &r.tpot_p95, &r.tpot_p99);
        r.slo_attainment = b->completed ? (double)b->met / (double)b->completed : NAN;
    }
    if (len > 0) {
        r.replicas = b->live_s / len;
        r.ready = b->ready_s / len;
        r.gpus = b->gpu_s / len;
        r.tokens_per_s = b->tokens / len;
        r.waiting = b->wait_s / len;
    }
    if (b->start >= s->warmup &&
        (r.completed > 0 || (s->cfg->mode == FS_SVC_FLUID && b->f_completed > 0))) {
        s->buckets_with++;
        s->buckets_met += r.ttft_p99 <= fs_time_to_s(s->cfg->slo_ttft) + 1e-9;
    }
    const fs_sink_t *sk = fs_model_sink(m);
    if (sk->svc_bucket && len > 0 && (rc = sk->svc_bucket(sk->ud, &r))) {
        fs_model_error(m, sk->err);
        return rc;
    }
    /* the next bucket: keep the buffers */
    double *t1 = b->ttft, *t2 = b->tpot;
    comp_t *c1 = b->cttft, *c2 = b->ctpot;
    size_t k1 = b->cap_ttft, k2 = b->cap_tpot, k3 = b->cap_cttft, k4 = b->cap_ctpot;
    memset(b, 0, sizeof *b);
    b->ttft = t1;
    b->tpot = t2;
    b->cttft = c1;
    b->ctpot = c2;
    b->cap_ttft = k1;
    b->cap_tpot = k2;
    b->cap_cttft = k3;
    b->cap_ctpot = k4;
    b->start = end;
    return 0;
}

/* ---- events --------------------------------------------------------------------------- */

static int schedule_arrival(services_t *a, svc_t *s, fs_model_t *m, fs_time_t prev,
                            fs_error_t *err)
{
    int rc = next_request(s, prev, &s->next, err);
    if (rc == 1) {
        s->have_next = 0;
        return 0;
    }
    if (rc)
        return rc;
    s->have_next = 1;
    fs_time_t at = s->next.at < fs_model_now(m) ? fs_model_now(m) : s->next.at;
    if (at >= fs_model_horizon(m))
        return 0;
    return fs_model_module_event(m, a->id, at, FS_PRIO_ARRIVAL, EVD(EV_ARRIVAL, s->idx, 0, 0),
                                 NULL);
}

static int arrival(services_t *a, svc_t *s, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    settle(s, now);
    req_t q = {.arrival = now, .in = s->next.input, .out = s->next.output};
    s->requests++;
    s->bk.arrivals++;
    int rc = q_push(s, &q, 0);
    if (!rc && s->live == 0 && s->cfg->min_replicas == 0 &&
        (s->cfg->max_replicas > 0))      /* the activator: one replica from zero */
        rc = scale_to(a, s, m, 1);
    if (!rc)
        rc = dispatch(a, s, m);
    if (rc)
        return rc;
    fs_error_t err;
    fs_error_clear(&err);
    rc = schedule_arrival(a, s, m, now, &err);
    if (rc)
        fs_model_error(m, &err);
    return rc;
}

/* The fluid rate of the hour of the week that starts now, and the next. */
static int rate_change(services_t *a, svc_t *s, fs_model_t *m)
{
    int rc = fluid_advance(a, s, m);
    if (rc)
        return rc;
    const fs_time_t hour = 3600 * FS_US_PER_S;
    fs_time_t now = fs_model_now(m);
    s->lam = s->mult[(size_t)((now / hour) % (FS_SYNTH_HOURS * FS_SYNTH_DAYS))];
    if (s->live == 0 && s->cfg->min_replicas == 0 && s->cfg->max_replicas > 0 && s->lam > 0 &&
        (rc = scale_to(a, s, m, 1)))
        return rc;
    fs_time_t next = (now / hour + 1) * hour;
    if (next >= fs_model_horizon(m))
        return 0;
    return fs_model_module_event(m, a->id, next, FS_PRIO_TIMER, EVD(EV_RATE, s->idx, 0, 0), NULL);
}

static int ready(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, uint32_t gen)
{
    replica_t *r = rep_of(s, i);
    if (i >= s->n_rep || r->gen != gen || r->state != R_STARTING)
        return 0;   /* stopped or retired since */
    int rc = fluid_advance(a, s, m);
    if (rc)
        return rc;
    settle(s, fs_model_now(m));
    s->startup_gpu_s += s->gpu_share * fs_time_to_s(fs_model_now(m) - r->since);
    s->n_starting--;
    s->n_ready++;
    r->state = R_READY;
    if (!r->doomed)
        serving_set(s, r, 1);
    return dispatch(a, s, m);
}

static int svc_event(void *ud, fs_model_t *m, uint64_t data)
{
    services_t *a = ud;
    uint32_t kind = data & 15, si = (uint32_t)(data >> 4) & 0xffff;
    uint32_t ri = (uint32_t)(data >> 20) & 0xffffff, arg = (uint32_t)(data >> 44);
    if (si >= a->n)
        return FS_EINTERNAL;
    svc_t *s = &a->s[si];
    switch (kind) {
    case EV_ARRIVAL: return arrival(a, s, m);
    case EV_DONE: return done(a, s, m, ri, arg);
    case EV_READY: return ready(a, s, m, ri, arg);
    case EV_SYNC: return hpa_sync(a, s, m);
    case EV_RATE: return rate_change(a, s, m);
    case EV_KICK: return 0;     /* the first instant: the replicas submitted at attach start */
    case EV_BUCKET: {
        fs_time_t now = fs_model_now(m);
        int rc = emit_bucket(a, s, m, now);
        fs_time_t next = now + a->cfg->services.bucket;
        if (!rc && next < fs_model_horizon(m))
            rc = fs_model_module_event(m, a->id, next, FS_PRIO_SAMPLE,
                                       EVD(EV_BUCKET, s->idx, 0, 0), NULL);
        return rc;
    }
    case EV_RETIRE: {
        replica_t *r = rep_of(s, ri);
        if (ri >= s->n_rep || r->gen != arg || !r->doomed ||
            (r->state != R_STARTING && r->state != R_READY))
            return 0;
        if (r->busy == 0)
            return retire_now(s, m, ri);
        return 0;
    }
    default: return FS_EINTERNAL;
    }
}

/* The model's news of a replica. */
static int on_replica(void *ud, fs_model_t *m, uint32_t slot, int event, fs_time_t startup)
{
    services_t *a = ud;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    uint32_t si = (uint32_t)(j->job.id >> 32) & 0x7fffffff, ri = (uint32_t)j->job.id;
    if (si >= a->n || ri >= a->s[si].n_rep || a->s[si].rep[ri].slot != slot)
        return FS_EINTERNAL;
    svc_t *s = &a->s[si];
    replica_t *r = &s->rep[ri];
    int rc = fluid_advance(a, s, m);
    if (rc)
        return rc;
    settle(s, fs_model_now(m));
    if (event == FS_REPLICA_STARTED) {
        const fs_svc_perf_cfg_t *p = &s->cfg->perf[s->pool_row[j->r->place.pool] - 1];
        r->batch = p->max_batch;
        r->prefill_tps = p->prefill_tps;
        r->stepb = (double)p->max_batch / p->decode_tps * 1e6;
        r->step1 = p->decode1_tps > 0 ? 1e6 / p->decode1_tps : r->stepb;
        r->gen++;
        r->since = fs_model_now(m);
        s->holding++;
        /* surplus (it waited in the queue while the service scaled down):
         * retired in this instant, once the policy has it as running */
        if (!r->doomed && s->live > s->desired && s->cfg->metric != FS_HPA_NONE) {
            r->doomed = 1;
            s->live--;
        }
        if (!r->doomed) {
            s->cold_starts++;
            s->bk.cold++;
        }
        if (r->doomed) {
            r->state = R_STARTING;
            s->n_starting++;
            return fs_model_module_event(m, a->id, fs_model_now(m), FS_PRIO_COMPLETION,
                                         EVD(EV_RETIRE, si, ri, r->gen), NULL);
        }
        if (startup > 0) {
            r->state = R_STARTING;
            s->n_starting++;
            return fs_model_module_event(m, a->id, fs_model_now(m) + startup, FS_PRIO_REPAIR,
                                         EVD(EV_READY, si, ri, r->gen), NULL);
        }
        r->state = R_READY;
        s->n_ready++;
        serving_set(s, r, 1);
        return dispatch(a, s, m);
    }
    /* stopped: its requests are retried, it waits again */
    if (r->state == R_STARTING)
        s->startup_gpu_s += s->gpu_share * fs_time_to_s(fs_model_now(m) - r->since);
    unready(s, r);
    r->state = R_PENDING;
    r->gen++;
    if ((rc = requeue_inflight(m, s, r)))
        return rc;
    if (r->doomed && j->state == FS_JOBRT_RECOVERING) {
        rc = fs_model_retire(m, slot);  /* ends at its requeue */
        free_replica(s, ri);
        if (rc)
            return rc;
    }
    return dispatch(a, s, m);
}

/* ---- the end ----------------------------------------------------------------------------- */

static int svc_finish(void *ud, fs_model_t *m, fs_run_totals_t *t)
{
    services_t *a = ud;
    (void)t;
    const fs_sink_t *sk = fs_model_sink(m);
    fs_time_t end = fs_model_horizon(m);  /* services run until the horizon (the check) */
    for (size_t k = 0; k < a->n; k++) {
        svc_t *s = &a->s[k];
        int rc = 0;
        if (end > s->bk.start)
            rc = emit_bucket(a, s, m, end);
        if (rc)
            return rc;
        for (uint32_t i = 0; i < s->n_rep; i++)     /* start-ups still going at the end */
            if (s->rep[i].state == R_STARTING)
                s->startup_gpu_s += s->gpu_share * fs_time_to_s(end - s->rep[i].since);
        fs_service_row_t r;
        memset(&r, 0, sizeof r);
        snprintf(r.name, sizeof r.name, "%s", s->cfg->name);
        r.mode = (uint32_t)s->cfg->mode;
        int fl = s->cfg->mode == FS_SVC_FLUID;
        r.requests = fl ? (uint64_t)llround(s->f_requests) : s->requests;
        r.completed = fl ? (uint64_t)llround(s->f_completed) : s->completed;
        r.retried = s->retried;
        double done_n = s->win_n;
        r.ttft_p50 = hist_quantile(s->h_ttft, 0.50);
        r.ttft_p95 = hist_quantile(s->h_ttft, 0.95);
        r.ttft_p99 = hist_quantile(s->h_ttft, 0.99);
        r.ttft_mean = done_n > 0 ? s->ttft_sum / done_n : NAN;
        r.tpot_p50 = hist_quantile(s->h_tpot, 0.50);
        r.tpot_p95 = hist_quantile(s->h_tpot, 0.95);
        r.tpot_p99 = hist_quantile(s->h_tpot, 0.99);
        r.slo_attainment = done_n > 0 ? s->win_met / done_n : NAN;
        r.buckets_met = s->buckets_with ? (double)s->buckets_met / (double)s->buckets_with : NAN;
        r.replica_hours = s->live_s / 3600.0;
        r.ready_hours = s->ready_s / 3600.0;
        r.gpu_hours = s->gpu_s / 3600.0;
        r.cold_starts = s->cold_starts;
        r.startup_gpu_hours = s->startup_gpu_s / 3600.0;
        r.tokens_out = s->tokens;
        r.tokens_per_gpu_s = s->gpu_s > 0 ? s->tokens / s->gpu_s : NAN;
        if (sk->service && (rc = sk->service(sk->ud, &r))) {
            fs_model_error(m, sk->err);
            return rc;
        }
    }
    return 0;
}

static void svc_sample(void *ud, const fs_model_t *m, fs_sample_row_t *row)
{
    const services_t *a = ud;
    (void)m;
    uint32_t g = 0, n = 0, mig = 0;
    for (size_t k = 0; k < a->n; k++) {
        if (a->s[k].mig)
            mig += a->s[k].holding * a->s[k].cfg->gpus;
        else
            g += a->s[k].holding * a->s[k].cfg->gpus;
        for (uint32_t i = 0; i < a->s[k].n_rep; i++)
            n += a->s[k].rep[i].state != R_FREE;
    }
    row->gpus_serving = g;
    row->mig_serving = mig;
    row->replicas = n;
}

static void svc_destroy(void *ud)
{
    services_t *a = ud;
    if (!a)
        return;
    for (size_t k = 0; k < a->n; k++) {
        svc_t *s = &a->s[k];
        for (size_t i = 0; i < s->n_rep; i++)
            fs_free(s->rep[i].fl);
        fs_free(s->rep);
        fs_free(s->pool_row);
        fs_free(s->q);
        fs_free(s->recs);
        fs_free(s->co);
        fs_free(s->bk.ttft);
        fs_free(s->bk.tpot);
        fs_free(s->bk.cttft);
        fs_free(s->bk.ctpot);
        if (s->h_ttft)
            gsl_histogram_free(s->h_ttft);
        if (s->h_tpot)
            gsl_histogram_free(s->h_tpot);
        fs_rng_release(&s->rng_arr);
        fs_rng_release(&s->rng_tok);
        fs_reqtrace_close(s->trace);
    }
    fs_free(a->s);
    fs_free(a);
}

static const fs_module_ops_t svc_ops = {.name = "services", .on_event = svc_event,
                                        .finish = svc_finish, .destroy = svc_destroy,
                                        .sample = svc_sample, .quiet = 1};

/* ---- configuration ------------------------------------------------------------------------ */

static int blame(char *key, size_t keylen, size_t i, const char *rest)
{
    if (key && keylen)
        snprintf(key, keylen, "services.%zu%s%s", i, *rest ? "." : "", rest);
    return FS_EINVAL;
}

int fs_service_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    const fs_services_cfg_t *sc = &cfg->services;
    if (key && keylen)
        key[0] = '\0';
    if (sc->n == 0)
        return 0;
    if (sc->n > MAX_SERVICES)
        return fs_error_set(err, FS_EINVAL, "at most %u services", MAX_SERVICES),
               blame(key, keylen, MAX_SERVICES, "");
    if (cfg->until != FS_UNTIL_HORIZON) {
        if (key && keylen)
            snprintf(key, keylen, "services");
        return fs_error_set(err, FS_EINVAL, "services run until the horizon: set until: horizon "
                                            "(replicas never finish, so the queue never drains)");
    }
    for (size_t i = 0; i < sc->n; i++) {
        const fs_service_cfg_t *c = &sc->list[i];
        for (size_t k = 0; k < i; k++)
            if (strcmp(sc->list[k].name, c->name) == 0) {
                fs_error_set(err, FS_EINVAL, "service '%s' is already defined (item %zu)",
                             c->name, k);
                return blame(key, keylen, i, "name");
            }
        if (strlen(c->name) >= FS_SERVICE_NAME_MAX) {
            fs_error_set(err, FS_EINVAL, "a service name has at most %d bytes",
                         FS_SERVICE_NAME_MAX - 1);
            return blame(key, keylen, i, "name");
        }
        if (c->mig && !fs_mig_code_find(c->mig, strlen(c->mig))) {
            fs_error_set(err, FS_EINVAL, "unknown MIG profile '%s' (expected a profile of a "
                         "MIG GPU model such as 1g.10gb, 3g.40gb; docs/mig.md)", c->mig);
            return blame(key, keylen, i, "mig");
        }
        if (c->n_perf == 0) {
            fs_error_set(err, FS_EINVAL, "service '%s' needs a performance table (a row per GPU "
                         "model: gpu, prefill, decode, max_batch)", c->name);
            return blame(key, keylen, i, "performance");
        }
        for (size_t k = 0; k < c->n_perf; k++) {
            for (size_t q = 0; q < k; q++)
                if (strcasecmp(c->perf[q].gpu, c->perf[k].gpu) == 0) {
                    char sub[64];
                    snprintf(sub, sizeof sub, "performance.%zu.gpu", k);
                    fs_error_set(err, FS_EINVAL, "GPU model %s already has a row (item %zu)",
                                 c->perf[k].gpu, q);
                    return blame(key, keylen, i, sub);
                }
            if (c->perf[k].max_batch > MAX_BATCH) {
                char sub[64];
                snprintf(sub, sizeof sub, "performance.%zu.max_batch", k);
                fs_error_set(err, FS_EINVAL, "max_batch is at most %u", MAX_BATCH);
                return blame(key, keylen, i, sub);
            }
        }
        uint32_t maxr = c->max_replicas ? c->max_replicas : c->min_replicas;
        if (c->max_replicas && c->max_replicas < c->min_replicas) {
            fs_error_set(err, FS_EINVAL, "max_replicas %u is below min_replicas %u",
                         c->max_replicas, c->min_replicas);
            return blame(key, keylen, i, "max_replicas");
        }
        if (maxr == 0) {
            fs_error_set(err, FS_EINVAL, "service '%s' can have no replica (min_replicas and "
                         "max_replicas are 0)", c->name);
            return blame(key, keylen, i, "max_replicas");
        }
        if (c->metric != FS_HPA_NONE && !(c->target > 0)) {
            fs_error_set(err, FS_EINVAL, "autoscale.metric %s needs autoscale.target (per "
                         "replica)", c->metric == FS_HPA_CONCURRENCY ? "concurrency"
                         : c->metric == FS_HPA_QUEUE ? "queue" : "utilization");
            return blame(key, keylen, i, "autoscale.target");
        }
        if (c->metric == FS_HPA_UTILIZATION && c->target > 1) {
            fs_error_set(err, FS_EINVAL, "utilization is a fraction: target %g is above 1",
                         c->target);
            return blame(key, keylen, i, "autoscale.target");
        }
        if (c->metric == FS_HPA_NONE && c->min_replicas == 0) {
            fs_error_set(err, FS_EINVAL, "min_replicas 0 (scale to zero) needs an autoscale.metric");
            return blame(key, keylen, i, "min_replicas");
        }
        if (c->process == FS_SVC_TRACE) {
            if (!c->trace) {
                fs_error_set(err, FS_EINVAL, "requests.process trace needs requests.trace (a "
                             "CSV file)");
                return blame(key, keylen, i, "requests.trace");
            }
            if (c->mode == FS_SVC_FLUID) {
                fs_error_set(err, FS_EINVAL, "fluid mode needs a rate (requests.process poisson "
                             "or gamma), not a request trace");
                return blame(key, keylen, i, "mode");
            }
        } else {
            if (!(c->rate > 0)) {
                fs_error_set(err, FS_EINVAL, "requests.process %s needs requests.rate",
                             c->process == FS_SVC_GAMMA ? "gamma" : "poisson");
                return blame(key, keylen, i, "requests.rate");
            }
            if (c->input.kind == FS_DIST_NONE || c->output.kind == FS_DIST_NONE) {
                fs_error_set(err, FS_EINVAL, "requests.%s: the token count distribution is "
                             "needed with a rate", c->input.kind == FS_DIST_NONE ? "input"
                                                                                   : "output");
                return blame(key, keylen, i, c->input.kind == FS_DIST_NONE ? "requests.input"
                                                                            : "requests.output");
            }
            fs_error_t e;
            if (fs_synth_profile(c->n_hourly, c->hourly_names, c->hourly, FS_SYNTH_HOURS,
                                 "hourly", NULL, &e)) {
                fs_error_set(err, FS_EINVAL, "%s", e.msg);
                return blame(key, keylen, i, "requests.profile.hourly");
            }
            if (fs_synth_profile(c->n_weekly, c->weekly_names, c->weekly, FS_SYNTH_DAYS, "weekly",
                                 NULL, &e)) {
                fs_error_set(err, FS_EINVAL, "%s", e.msg);
                return blame(key, keylen, i, "requests.profile.weekly");
            }
        }
    }
    return 0;
}

/* The mean and variance of a prepared distribution (token counts; their
 * rounding to whole tokens is left out). */
static double dist_moments(const fs_dist_t *d, double *var)
{
    double m = fs_dist_mean(d), v = 0;
    if (d->kind == FS_DIST_EMPIRICAL && !isfinite(m))
        m = d->n_values ? gsl_stats_mean(d->values, 1, d->n_values) : 1;
    switch (d->kind) {
    case FS_DIST_EXPONENTIAL: v = m * m; break;
    case FS_DIST_LOGNORMAL: v = (exp(d->sigma * d->sigma) - 1) * m * m; break;
    case FS_DIST_GAMMA: v = d->shape * d->scale * d->scale; break;
    case FS_DIST_WEIBULL: {
        double g1 = gsl_sf_gamma(1 + 1 / d->shape), g2 = gsl_sf_gamma(1 + 2 / d->shape);
        v = d->scale * d->scale * (g2 - g1 * g1);
        break;
    }
    case FS_DIST_UNIFORM: v = (d->hi - d->lo) * (d->hi - d->lo) / 12; break;
    case FS_DIST_EMPIRICAL:
        v = d->n_values > 1 ? gsl_stats_variance_m(d->values, 1, d->n_values, m) : 0;
        break;
    default: v = 0;
    }
    *var = v;
    return m < 1 ? 1 : m;
}

/* The PQ slice midpoints of a prepared token distribution, over its mean
 * (tokens below 1 count as 1, as drawn).  0 or FS_ENOMEM. */
static int dist_slices(const fs_dist_t *d, double mean, double *out, double *w)
{
    double edge[PQ + 1];
    for (int k = 0; k <= 28; k++)
        edge[k] = k / 32.0;
    for (int k = 29; k < PQ; k++)
        edge[k] = 1 - ldexp(1.0, -(k - 25));    /* 1 - 2^-4 .. 1 - 2^-14 */
    edge[PQ] = 1;
    double *sorted = NULL;
    if (d->kind == FS_DIST_EMPIRICAL && d->n_values) {
        if (!(sorted = fs_malloc(d->n_values * sizeof *sorted)))
            return FS_ENOMEM;
        memcpy(sorted, d->values, d->n_values * sizeof *sorted);
        gsl_sort(sorted, 1, d->n_values);
    }
    for (int k = 0; k < PQ; k++) {
        double u = 0.5 * (edge[k] + edge[k + 1]), q;
        w[k] = edge[k + 1] - edge[k];
        switch (d->kind) {
        case FS_DIST_CONSTANT: q = d->value; break;
        case FS_DIST_EXPONENTIAL: q = gsl_cdf_exponential_Pinv(u, d->mean); break;
        case FS_DIST_LOGNORMAL: q = gsl_cdf_lognormal_Pinv(u, d->mu, d->sigma); break;
        case FS_DIST_GAMMA: q = gsl_cdf_gamma_Pinv(u, d->shape, d->scale); break;
        case FS_DIST_WEIBULL: q = gsl_cdf_weibull_Pinv(u, d->scale, d->shape); break;
        case FS_DIST_UNIFORM: q = d->lo + u * (d->hi - d->lo); break;
        case FS_DIST_EMPIRICAL:
            q = sorted ? gsl_stats_quantile_from_sorted_data(sorted, 1, d->n_values, u) : mean;
            break;
        default: q = mean;
        }
        out[k] = (q < 1 ? 1 : q) / (mean > 0 ? mean : 1);
    }
    fs_free(sorted);
    return 0;
}

/* The service's pools (GPU models of its table) and its week of rates. */
static int build(services_t *a, fs_model_t *m, size_t k, fs_error_t *err)
{
    svc_t *s = &a->s[k];
    const fs_service_cfg_t *c = &a->cfg->services.list[k];
    const fs_cluster_t *cl = fs_model_cluster(m);
    s->cfg = c;
    s->idx = (uint32_t)k;
    s->free_rep = UINT32_MAX;
    s->desired = c->min_replicas;
    s->warmup = a->cfg->warmup;
    s->ec_a = -1;
    if (!(s->pool_row = fs_calloc(cl->n_pools ? cl->n_pools : 1, sizeof *s->pool_row)) ||
        !(s->h_ttft = loghist()) || !(s->h_tpot = loghist()))
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    uint32_t *pools = fs_malloc((cl->n_pools ? cl->n_pools : 1) * sizeof *pools);
    if (!pools)
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    size_t np = 0;
    s->mig = c->mig ? fs_mig_code_find(c->mig, strlen(c->mig)) : 0;
    s->gpu_share = s->mig ? c->gpus * (fs_mig_code_milli(s->mig) / 1000.0) : c->gpus;
    for (uint32_t p = 0; p < cl->n_pools; p++) {
        /* a MIG replica fits only a MIG pool whose layout has its instances
         * on one node; a whole-GPU one only a pool without MIG */
        int holds = s->mig ? fs_cluster_mig_could_fit(cl, p, s->mig, c->gpus)
                           : !cl->pools[p].mig && cl->pools[p].gpn >= c->gpus;
        for (size_t r = 0; r < c->n_perf && holds; r++)
            if (strcasecmp(cl->pools[p].gpu, c->perf[r].gpu) == 0) {
                s->pool_row[p] = (uint32_t)r + 1;
                pools[np++] = p;
                break;
            }
    }
    for (size_t r = 0; r < c->n_perf; r++)
        if (c->perf[r].max_batch > s->max_batch)
            s->max_batch = c->perf[r].max_batch;
    if (np == 0) {
        fs_free(pools);
        if (s->mig)
            return fs_error_set(err, FS_EINVAL, "services.%zu.performance: service '%s' has no "
                                "pool to run on (no pool of its GPU models whose MIG layout has "
                                "%u instances of %s on one node)", k, c->name, c->gpus, c->mig);
        return fs_error_set(err, FS_EINVAL, "services.%zu.performance: service '%s' has no pool "
                            "to run on (no pool of its GPU models without MIG with nodes of %u "
                            "GPUs)", k, c->name, c->gpus);
    }
    int rc = fs_model_make_pool_set(m, pools, np, &s->set);
    fs_free(pools);
    if (rc)
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    double hourly[FS_SYNTH_HOURS], weekly[FS_SYNTH_DAYS];
    fs_synth_profile(c->n_hourly, c->hourly_names, c->hourly, FS_SYNTH_HOURS, "hourly", hourly,
                     NULL);
    fs_synth_profile(c->n_weekly, c->weekly_names, c->weekly, FS_SYNTH_DAYS, "weekly", weekly,
                     NULL);
    for (int d = 0; d < FS_SYNTH_DAYS; d++)
        for (int h = 0; h < FS_SYNTH_HOURS; h++)
            s->week_rate += s->mult[d * FS_SYNTH_HOURS + h] = c->rate * hourly[h] * weekly[d];
    const fs_config_t *cfg = a->cfg;
    if (fs_rng_init(&s->rng_arr, cfg->seed, cfg->replication, RNG_REQUEST, k) ||
        fs_rng_init(&s->rng_tok, cfg->seed, cfg->replication, RNG_TOKENS, k))
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    if (c->process == FS_SVC_TRACE) {
        if ((rc = fs_reqtrace_open(c->trace, c->repeat, &s->trace, err)))
            return rc;
    } else {    /* token moments for the fluid mode */
        double vi, vo;
        s->mean_in = dist_moments(&c->input, &vi);
        s->mean_out = dist_moments(&c->output, &vo);
        if ((rc = dist_slices(&c->input, s->mean_in, s->pq, s->pqw)))
            return fs_error_set(err, rc, "services: out of memory");
        /* service time of the first row's replica: prefill + (out - 1) steps */
        const fs_svc_perf_cfg_t *p = &c->perf[0];
        double step = p->max_batch / p->decode_tps;
        double mean = s->mean_in / p->prefill_tps + (s->mean_out - 1) * step;
        double var = vi / (p->prefill_tps * p->prefill_tps) + vo * step * step;
        s->cs2 = mean > 0 ? var / (mean * mean) : 0;
    }
    return 0;
}

int fs_service_attach(fs_model_t *m, fs_error_t *err)
{
    const fs_config_t *cfg = fs_model_config(m);
    if (cfg->services.n == 0)
        return 0;
    char key[160];
    int rc = fs_service_cfg_check(cfg, key, sizeof key, err);
    if (rc) {
        fs_error_prefix(err, "%s", key);
        return rc;
    }
    services_t *a = fs_calloc(1, sizeof *a);
    if (!a || !(a->s = fs_calloc(cfg->services.n, sizeof *a->s))) {
        fs_free(a);
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    }
    a->cfg = cfg;
    a->n = cfg->services.n;
    a->want_requests = cfg->services.requests;
    for (size_t k = 0; k < a->n; k++)
        if ((rc = build(a, m, k, err))) {
            svc_destroy(a);
            return rc;
        }
    if (fs_model_add_module(m, &svc_ops, a, &a->id)) {
        svc_destroy(a);
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    }
    fs_replica_hook_t hook = {.fn = on_replica, .ud = a};
    fs_model_set_replica_hook(m, &hook);
    /* min replicas now, the first arrivals, syncs, buckets */
    for (size_t k = 0; k < a->n && !rc; k++) {
        svc_t *s = &a->s[k];
        const fs_service_cfg_t *c = s->cfg;
        rc = scale_to(a, s, m, c->min_replicas);
        if (rc == FS_EINVAL)
            return fs_error_set(err, rc, "services.%zu: a replica of service '%s' (%u GPUs on "
                                "one node) can never fit its pools", k, c->name, c->gpus);
        if (!rc && c->mode == FS_SVC_REQUEST)
            rc = schedule_arrival(a, s, m, 0, err);
        if (!rc && c->mode == FS_SVC_FLUID)
            rc = rate_change(a, s, m);
        if (!rc && c->metric != FS_HPA_NONE)
            rc = fs_model_module_event(m, a->id, c->sync, FS_PRIO_TIMER, EVD(EV_SYNC, k, 0, 0),
                                       NULL);
        if (!rc)
            rc = fs_model_module_event(m, a->id, cfg->services.bucket, FS_PRIO_SAMPLE,
                                       EVD(EV_BUCKET, k, 0, 0), NULL);
    }
    if (!rc)    /* an instant at 0, so that a pass starts the first replicas then */
        rc = fs_model_module_event(m, a->id, 0, FS_PRIO_TIMER, EVD(EV_KICK, 0, 0, 0), NULL);
    if (rc && !err->code)
        fs_error_set(err, rc, "services: %s", fs_error_describe(rc));
    return rc;
}
